"""Batched dqdyn functions over Dask arrays: one laptop, a local process cluster, a remote cluster.

::

    import dask.array as da, dqdyn
    import dqdyn.distributed as dd

    client = dd.local_cluster(n_workers=2)        # or dd.connect("tcp://scheduler:8786"), or none
    Q = da.from_zarr("states.zarr/q")              # (N, nq), chunked along the state axis only
    tau = dd.apply(dqdyn.rnea, model, Q, V, A)     # a lazy (N, nv) dask array
    tau.to_zarr("tau.zarr")

`apply` evaluates a public batched function (`FUNCTIONS`) block by block: one task per
chunk of states, each a single in-process batched call of dqdyn on that chunk, so every state is
computed by the same serial kernel as in one big in-process call and the results are identical
to the bit.  The model enters the graph once, as one key that every block task depends on (the
scheduler moves it to each worker once; it is not pickled per task).  A block whose inputs are
read straight from storage (``da.from_npy_stack``, ``da.from_zarr``) reads its own chunks in its
task, so input chunks are not moved between workers.  Inside a worker, batched
calls are serialized by a process-wide lock (each one already uses the worker's numba threads),
and `NumbaThreads`, a worker plugin that `local_cluster`, `connect` and
`configure` install, gives each worker ``cores_on_its_host // workers_on_its_host``
numba threads so that workers × threads does not oversubscribe the cores.

Worker processes are started by ``spawn`` (Dask's default): a forked child of a process whose
numba thread pool is running is not safe with every threading layer.

Parameter sweeps (a family of models with perturbed inertial parameters) and the resumable Zarr
datasets of ``dqdyn sweep`` live in `dqdyn.scale.sweep`.
"""

from __future__ import annotations

import os
import threading
from collections import Counter
from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from dqdyn import config
from dqdyn.errors import ChunkError, SchedulerError, ShapeError, StoreError, UnknownNameError
from dqdyn.multibody.model import Model
from dqdyn.scale import _stores


# ------------------------------------------------------------------------------ the registry
class _Spec(NamedTuple):
    module: str  # where the public function lives (imported lazily on workers)
    inputs: tuple[str, ...]  # names of the per-state inputs, in order ("q" has nq entries)
    outputs: Callable | None  # model -> trailing shapes of the outputs; None: probe one state
    multi: bool  # the function returns a tuple
    names: tuple[str, ...] = ()  # its parts, as to_zarr names them (a named tuple's own fields)
    out: bool = False  # it accepts out= (to_zarr's tasks then reuse one result buffer per thread)


def _nv(m):
    return [(m.nv,)]


def _nvnv(m):
    return [(m.nv, m.nv)]


def _three(m):
    return [(m.nv, m.nv)] * 3


#: the batched functions `apply` accepts, by name
FUNCTIONS: dict[str, _Spec] = {
    "rnea": _Spec("dqdyn.dynamics.newton_euler", ("q", "v", "a"), _nv, False, out=True),
    "aba": _Spec("dqdyn.dynamics.forward", ("q", "v", "tau"), _nv, False, out=True),
    "gravity": _Spec("dqdyn.dynamics.lagrange", ("q",), _nv, False, out=True),
    "nonlinear_effects": _Spec("dqdyn.dynamics.lagrange", ("q", "v"), _nv, False, out=True),
    "mass_matrix": _Spec("dqdyn.dynamics.lagrange", ("q",), _nvnv, False, out=True),
    "coriolis_matrix": _Spec("dqdyn.dynamics.coriolis", ("q", "v"), _nvnv, False, out=True),
    "mass_matrix_inverse": _Spec("dqdyn.dynamics.forward", ("q",), _nvnv, False),
    "forward_kinematics": _Spec("dqdyn.kinematics.forward", ("q",),
                                lambda m: [(m.nbodies + 1, 8)], False, out=True),
    "rnea_derivatives": _Spec("dqdyn.dynamics.derivatives", ("q", "v", "a"), _three, True,
                              ("dtau_dq", "dtau_dv", "dtau_da")),
    "aba_derivatives": _Spec("dqdyn.dynamics.derivatives", ("q", "v", "tau"), _three, True,
                             ("dqdd_dq", "dqdd_dv", "dqdd_dtau")),
    "constrained_forward_dynamics": _Spec("dqdyn.constraints.dynamics", ("q", "v", "tau"),
                                          None, True),
}


def _function(name: str):
    import importlib

    return getattr(importlib.import_module(FUNCTIONS[name].module), name)


def resolve(fn) -> str:
    """The registry name of ``fn`` (a public batched dqdyn function or its name);
    `UnknownNameError` otherwise."""
    name = fn if isinstance(fn, str) else getattr(fn, "__name__", None)
    if name in FUNCTIONS and (isinstance(fn, str) or _function(name) is fn):
        return name
    raise UnknownNameError(
        f"fn: {fn!r} is not a batched dqdyn function that dqdyn.scale.distributed runs; "
        f"use one of {sorted(FUNCTIONS)} (the function or its name)"
    )


# ------------------------------------------------------------------------------ worker side
_LOCK = threading.Lock()  # one batched call at a time per process (each uses all its threads)
_THREADS: int | None = None  # numba threads per batched call in this worker (NumbaThreads)


def set_worker_threads(n: int | None) -> None:
    """Numba threads that batched calls made through this module use in this process
    (``None``: numba's default).  numba's thread count is per calling thread, so it is applied
    by each task, in the thread that runs it."""
    global _THREADS
    if n is not None:
        import numba

        n = max(1, min(int(n), numba.config.NUMBA_NUM_THREADS))
    _THREADS = n


def _apply_threads() -> None:
    if _THREADS is not None:
        import numba

        if numba.get_num_threads() != _THREADS:
            config.set_num_threads(_THREADS)


def call_block(name: str, model: Model, kwargs: dict, *blocks, out=None):
    """Run the batched function ``name`` on one chunk of states (the body of every task);
    ``out``: the result array, for a function that accepts one (`FUNCTIONS`)."""
    fn = _function(name)
    if out is not None:
        kwargs = {**kwargs, "out": out}
    # (a block Dask sliced out of a message at an odd address is copied: the call gate takes
    # aligned arrays only, and a declined chunk would run another kernel than the same chunk in
    # process — the derivatives' FMA contraction then differs in the last bit)
    blocks = tuple(b.copy() if type(b) is np.ndarray and not b.flags.aligned else b for b in blocks)
    with _LOCK:
        _apply_threads()
        res = fn(model, *blocks, **kwargs)
    return tuple(res) if FUNCTIONS[name].multi else res


_RESULTS = threading.local()  # per task thread: write_block's result buffer of each function


def _result_buffer(name: str, shape: tuple) -> np.ndarray:
    """A result array of ``shape`` kept for this thread's next chunk of ``name``: a fresh
    chunk-sized array would be fresh memory from the kernel each time (Dask's workers set
    ``MALLOC_TRIM_THRESHOLD_``, so glibc maps and unmaps every large array), zeroed page by page."""
    got = _RESULTS.__dict__.get(name)
    if got is None or got.shape != shape:
        got = _RESULTS.__dict__[name] = np.empty(shape)
    return got


def write_block(url: str, paths: tuple, start: int, name: str, model: Model, kwargs: dict,
                *blocks, markers: tuple | None = None, index: int | None = None) -> int:
    """Run ``name`` on one chunk of states and write its rows ``start:`` of the Zarr arrays
    ``paths`` under ``url`` (the body of `to_zarr`'s tasks); the number of states.
    ``markers = (url, path)``: then set entry ``index`` of that marker array, after the data
    (`dqdyn.scale._stores`).

    The result is computed into a buffer this thread reuses (for the functions that take
    ``out=``), and written with ``write_empty_chunks``: Zarr would otherwise compare every
    chunk with its fill value first (a pass over the chunk, to skip storing an empty one).
    A failed write (a full disk) is a `StoreError` naming the store."""
    import zarr

    from dqdyn.scale import _stores

    spec = FUNCTIONS[name]
    out = None
    rows = [np.shape(b)[0] for b in blocks if np.ndim(b) == 2]  # (a 1-D block: a shared row)
    if spec.out and spec.outputs is not None and rows:
        out = _result_buffer(name, (max(rows),) + tuple(spec.outputs(model)[0]))
    res = call_block(name, model, kwargs, *blocks, out=out)
    outs = res if spec.multi else (res,)
    n = 0
    path = paths[0]
    try:
        for path, x in zip(paths, outs):
            n = np.shape(x)[0]
            zarr.open_array(url, path=path, mode="r+", config={"write_empty_chunks": True})[start : start + n] = x
        if markers is not None:
            _stores.mark_done(zarr.open_array(markers[0], path=markers[1], mode="r+"), index)
    except StoreError:
        raise
    except OSError as e:
        raise _stores.write_error(
            e, f"rows {start}:{start + n} of {path or '(root)'!r}", url,
            "call dqdyn.scale.distributed.to_zarr again with the same arguments") from None
    return n


def host_cores() -> int:
    """Cores this process may run on (its CPU affinity, else ``os.cpu_count()``)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def _host(address: str) -> str:
    a = address.split("://", 1)[-1]
    return a.rsplit(":", 1)[0]


try:
    from distributed.diagnostics.plugin import WorkerPlugin as _WorkerPlugin
except ImportError:  # pragma: no cover - distributed not installed
    _WorkerPlugin = object


class NumbaThreads(_WorkerPlugin):
    """Worker plugin: numba threads per worker so that workers × threads ≤ cores of the host.

    ``threads``: a fixed count for every worker; otherwise ``workers_per_host`` (host → number
    of workers, from the scheduler when the plugin is registered) and the worker's own core
    count give ``max(1, cores // workers_on_its_host)`` (a worker on a host the table does not
    know counts as alone there)."""

    name = "dqdyn-numba-threads"

    def __init__(self, threads: int | None = None, workers_per_host: dict | None = None):
        self.threads = threads
        self.workers_per_host = dict(workers_per_host or {})

    def threads_for(self, address: str, cores: int) -> int:
        if self.threads is not None:
            return max(1, int(self.threads))
        return max(1, cores // max(1, self.workers_per_host.get(_host(address), 1)))

    def setup(self, worker):
        set_worker_threads(self.threads_for(worker.address, host_cores()))


def _worker_threads() -> int | None:
    return _THREADS


def task_threads() -> int:
    """The numba thread count a batched call made by a task of this module uses here."""
    import numba

    _apply_threads()
    return numba.get_num_threads()


def configure(client, threads: int | None = None) -> dict:
    """Install `NumbaThreads` on the workers of ``client`` (again after workers were
    added: the count per host is read now).  Returns each worker's numba thread count."""
    info = client.scheduler_info(n_workers=-1) if _accepts_n_workers(client) else client.scheduler_info()
    per_host = Counter(_host(a) for a in info["workers"])
    client.register_plugin(NumbaThreads(threads, per_host), name=NumbaThreads.name)
    _CONFIGURED.add(client.id)
    return client.run(_worker_threads)


def _accepts_n_workers(client) -> bool:
    import inspect

    return "n_workers" in inspect.signature(client.scheduler_info).parameters


#: what `local_cluster` changes in Dask's environment of new worker processes
#: (``distributed.nanny.pre-spawn-environ``; None: not set)
WORKER_ENVIRON = {"MALLOC_TRIM_THRESHOLD_": None}

#: Dask settings `local_cluster` changes, each only where it still has ``distributed``'s
#: default (the key: (that default, dqdyn's value)).  Its workers run one long task after
#: another with no dashboard: the statistical profiler (a sample of every thread's stack each
#: 10 ms), the system monitor (500 ms), the memory monitor (100 ms) and the event-loop health
#: check (20 ms) kept 7 % of a core busy while a 2-worker cluster sat idle, 1.4 % with these.
#: The memory monitor still pauses or restarts a worker past its thresholds, within 1 s.
WORKER_CONFIG = {
    "distributed.worker.profile.enabled": (True, False),
    "distributed.admin.system-monitor.interval": ("500ms", "2s"),
    "distributed.worker.memory.monitor-interval": ("100ms", "1s"),
    "distributed.admin.tick.interval": ("20ms", "1s"),
}


def local_cluster(n_workers: int | None = None, *, threads: int | None = None, **kwargs):
    """A ``distributed.Client`` on a new ``LocalCluster`` of ``n_workers`` single-threaded
    worker processes (default: one per core, at most 4), started by ``spawn``, with
    `NumbaThreads` installed.  ``kwargs`` go to ``LocalCluster`` (``dashboard_address=None``
    by default).  Close it with ``client.close(); client.cluster.close()``.

    The workers keep glibc's own malloc thresholds (`WORKER_ENVIRON`): Dask sets
    ``MALLOC_TRIM_THRESHOLD_=65536`` for its workers, which also fixes glibc's mmap threshold at
    128 KiB, so every chunk-sized array (inputs read, results, Zarr's buffers) is mapped, zeroed
    page by page and unmapped again — ~10 % more CPU on ``rnea`` chunks (module notes in the
    README).  A process that set the variable itself passes it on unchanged.  Without a
    dashboard (the default), the workers' profiler is off and Dask's monitors tick less often
    (`WORKER_CONFIG`; a value set in Dask's configuration beforehand is kept)."""
    import dask
    from distributed import Client, LocalCluster

    n = n_workers or max(1, min(4, host_cores()))
    kwargs.setdefault("dashboard_address", None)
    kwargs.setdefault("threads_per_worker", 1)
    env = {f"distributed.nanny.pre-spawn-environ.{k}": v for k, v in WORKER_ENVIRON.items()}
    if kwargs["dashboard_address"] is None:
        env.update({k: ours for k, (default, ours) in WORKER_CONFIG.items()
                    if dask.config.get(k, default) == default})
    with dask.config.set(env):  # (read when each nanny is made, kept for its restarts)
        cluster = LocalCluster(n_workers=n, processes=True, **kwargs)
    client = Client(cluster)
    client.wait_for_workers(n)  # the per-host count of configure() needs them all
    configure(client, threads)
    return client


def connect(address: str, *, timeout: float = 10.0, threads: int | None = None):
    """A ``distributed.Client`` on the scheduler at ``address`` (``tcp://host:8786``), with
    `NumbaThreads` installed; `SchedulerError` within ``timeout``
    seconds when it cannot be reached."""
    from distributed import Client

    if not isinstance(address, str) or not address:
        raise SchedulerError(f"address must be a scheduler address such as 'tcp://host:8786', "
                             f"got {address!r}")
    try:
        client = Client(address, timeout=f"{float(timeout)}s", set_as_default=True)
    except (OSError, TimeoutError, ValueError) as e:
        raise SchedulerError(
            f"scheduler {address!r} could not be reached within {timeout:g} s ({type(e).__name__}: "
            f"{' '.join(str(e).split())[:200]})"
        ) from None
    configure(client, threads)
    return client


_CONFIGURED: set = set()


def _configure_default_client() -> None:
    """Install `NumbaThreads` on the default ``distributed`` client, once per client
    (a client made without `local_cluster` / `connect`)."""
    try:
        from distributed import default_client

        c = default_client()
    except (ImportError, ValueError):
        return
    if c.id not in _CONFIGURED:
        _CONFIGURED.add(c.id)
        configure(c)


# ------------------------------------------------------------------------------ the graph
def model_token(model: Model) -> str:
    """A deterministic token of everything the kernels read from ``model``."""
    from dask.base import tokenize

    return tokenize(model.name, model.mi, model.mf, model.gravity, model.frame_names,
                    model.frame_body, model.frame_placement, model.q_lower, model.q_upper,
                    model.nq, model.nv, repr(model.constraints))


def model_delayed(model: Model):
    """``model`` as one Dask key (``dqdyn-model-<token>``) that tasks depend on."""
    import dask

    if not isinstance(model, Model):
        raise ShapeError(f"model must be a dqdyn.Model, got {type(model).__name__}")
    return dask.delayed(model, name="dqdyn-model-" + model_token(model), pure=True)


def _out_shapes(name: str, model: Model, kwargs: dict, inputs, dims) -> list[tuple]:
    spec = FUNCTIONS[name]
    if spec.outputs is not None:
        return spec.outputs(model)
    # probe one state (the shapes may depend on kwargs, e.g. the constraints' row count)
    out = call_block(name, model, kwargs, *_probe_row(inputs, dims))
    return [np.shape(o)[1:] for o in out]


def _probe_row(inputs, dims) -> list:
    """The first state of the inputs, each (1, n)."""
    return [np.asarray(x, dtype=float)[None] if x.ndim == 1 else np.asarray(x[:1], dtype=float).reshape(1, d)
            for x, d in zip(inputs, dims)]


def _out_names(name: str, model: Model, kwargs: dict, inputs, dims) -> tuple[str, ...]:
    out = call_block(name, model, kwargs, *_probe_row(inputs, dims))
    return tuple(getattr(out, "_fields", None) or (f"out{k}" for k in range(len(out))))


def _block_tasks(name: str, mdl, kwargs: dict, xs: list, arrs: list, nblocks: int,
                 write: tuple | None = None, only=None) -> list:
    """One Delayed per chunk of states: ``call_block(name, model, kwargs, *blocks)``, or with
    ``write = (url, paths, starts, markers)`` ``write_block(url, paths, starts[i], name, model,
    kwargs, *blocks, markers=markers, index=i)`` (`to_zarr`); ``only``: the chunks to
    make (default: all).

    A chunk of an input read straight from storage (its task has no dependency but whole-array
    keys: ``from_npy_stack``'s loads, ``from_zarr`` / ``from_array``'s getters) is read inside the
    block's own task (the two fused with Dask's ``Task.fuse``), so each worker reads the chunks it
    computes instead of receiving them from the worker that happened to read them: with separate
    read tasks, 2 workers moved about a third of the input chunks between them.  Any other input
    chunk (a computed one) stays a dependency, as is Dask's way.  With an older Dask, without
    its task spec (``dask._task_spec``), every input chunk is a dependency."""
    import dask
    from dask.delayed import Delayed
    from dask.highlevelgraph import HighLevelGraph

    try:
        from dask._task_spec import Task, TaskRef, convert_legacy_task
    except ImportError:  # pragma: no cover - an older dask: plain delayed calls
        Task = None
    if Task is None:
        delayed = [None if x is None else x.to_delayed(optimize_graph=False).ravel() for x in arrs]
    graphs = [None if x is None else dict(x.__dask_graph__()) for x in arrs]
    keys = [None if x is None else [k[0] for k in x.__dask_keys__()] for x in arrs]
    deps = [mdl] + [x for x in arrs if x is not None]  # (for the keys the fused tasks still need)
    tasks = []
    for i in (range(nblocks) if only is None else only):
        args = [x if k is None else k[i] for x, k in zip(xs, keys)]
        head = () if write is None else (write[0], write[1], write[2][i])
        kw = {} if write is None else {"markers": write[3], "index": i}
        func = call_block if write is None else write_block
        key = f"dqdyn-{name}{'-zarr' if head else ''}-{dask.base.tokenize(name, mdl.key, kwargs, *head, kw, *args)}"
        if Task is None:
            blocks = [x if b is None else b[i] for x, b in zip(xs, delayed)]
            tasks.append(dask.delayed(func, pure=True)(*head, name, mdl, kwargs, *blocks, **kw, dask_key_name=key))
            continue
        reads, refs = [], []
        for x, g, k in zip(xs, graphs, keys):
            if k is None:
                refs.append(x)
                continue
            node = g[k[i]]
            if isinstance(node, tuple):  # a legacy task (e.g. from_npy_stack's np.load)
                node = convert_legacy_task(k[i], node, g)
            if isinstance(node, Task) and not any(isinstance(d, tuple) for d in node.dependencies):
                reads.append(node)  # read in the block's task
            refs.append(TaskRef(k[i]))
        task = Task(key, func, *head, name, TaskRef(mdl.key), kwargs, *refs, **kw)
        if reads:
            task = Task.fuse(*reads, task, key=key)
        tasks.append(Delayed(key, HighLevelGraph.from_collections(key, {key: task}, dependencies=deps)))
    return tasks


def _prepare(fn, model: Model, arrays: tuple, chunks):
    """The checks and the chunking `apply` and `to_zarr` share: ``(name, inputs
    (NumPy rows or arrays as given), Dask arrays chunked along ``lead`` (None for a shared row),
    lead)``."""
    import dask.array as da

    name = resolve(fn)
    spec = FUNCTIONS[name]
    _configure_default_client()
    if not isinstance(model, Model):
        raise ShapeError(f"model must be a dqdyn.Model, got {type(model).__name__}")
    if len(arrays) != len(spec.inputs):
        raise ShapeError(f"{name} takes {len(spec.inputs)} per-state arrays {spec.inputs}, "
                         f"got {len(arrays)}")
    dims = [model.nq if k == "q" else model.nv for k in spec.inputs]
    N = None
    lead = None  # chunks along the state axis
    xs = []
    for x, k, d in zip(arrays, spec.inputs, dims):
        if isinstance(x, da.Array):
            if x.ndim != 2 or x.shape[1] != d:
                raise ShapeError(f"{k} must be a dask array of shape (N, {d}), got {x.shape} "
                                 "(a row shared by every state is given as a NumPy array)")
            if len(x.chunks[1]) != 1:
                raise ChunkError(
                    f"{k} is chunked along its last axis (chunks {x.chunks[1]}); only the state "
                    f"axis (axis 0) may be chunked: use {k}.rechunk({{1: -1}})")
            if lead is None:
                lead = x.chunks[0]
            x = _stores.guard_reads(x)  # an absent or damaged Zarr chunk: a named error
        else:
            x = np.asarray(x, dtype=np.float64)
            if x.ndim not in (1, 2) or x.shape[-1] != d:
                raise ShapeError(f"{k} must have shape (N, {d}) or ({d},), got {x.shape}")
        if x.ndim == 2:
            if N is None:
                N = x.shape[0]
            elif x.shape[0] != N:
                raise ShapeError(f"{k} has {x.shape[0]} states, the other inputs {N}")
        xs.append(x)
    if N is None:
        raise ShapeError(f"{name}: no input has a state axis; call dqdyn.{name} directly for "
                         "one state")
    if lead is None:
        c = int(chunks or config.get_batch_chunk())
        lead = tuple(min(c, N - s) for s in range(0, N, c)) or (0,)
    arrs = []
    for x, d in zip(xs, dims):
        if x.ndim == 1:
            arrs.append(None)
            continue
        if not isinstance(x, da.Array):
            x = da.from_array(x, chunks=(lead, d))
        elif x.chunks[0] != lead:
            x = x.rechunk({0: lead})
        arrs.append(x)
    return name, xs, arrs, lead


def apply(fn, model: Model, *arrays, chunks: int | None = None, **kwargs):
    """Evaluate the batched dqdyn function ``fn`` on Dask arrays, one task per chunk of states.

    ``fn``: a function of `FUNCTIONS` (``dqdyn.rnea``, …) or its name.  ``arrays``: its
    per-state inputs in order (``q`` (N, nq), ``v`` / ``a`` / ``tau`` (N, nv)): Dask arrays
    chunked along the state axis only, NumPy (N, n) arrays (chunked like the Dask inputs, else in
    ``chunks`` states, default `dqdyn.config.get_batch_chunk`), or one NumPy row (n,) shared
    by every state, as dqdyn broadcasts.  ``kwargs`` go to every call (keep them small: they are
    part of each task).  Returns a Dask array (N, …), or a tuple (the function's named tuple when
    it returns one) of them; nothing is computed until you ``compute()`` or store it.

    Errors: `UnknownNameError` for an unknown ``fn``,
    `ChunkError` for an input chunked along its last axis,
    `ShapeError` for wrong lengths or state counts.
    """
    import dask.array as da

    name, xs, arrs, lead = _prepare(fn, model, arrays, chunks)
    spec = FUNCTIONS[name]
    dims = [model.nq if k == "q" else model.nv for k in spec.inputs]
    shapes = _out_shapes(name, model, kwargs, xs, dims)
    mdl = model_delayed(model)
    outs = [[] for _ in shapes]
    for i, r in enumerate(_block_tasks(name, mdl, kwargs, xs, arrs, len(lead))):
        n = lead[i]
        if not spec.multi:
            outs[0].append(da.from_delayed(r, (n,) + tuple(shapes[0]), dtype=np.float64))
        else:
            for k, s in enumerate(shapes):
                outs[k].append(da.from_delayed(r[k], (n,) + tuple(s), dtype=np.float64))
    res = [da.concatenate(o, axis=0) for o in outs]
    if not spec.multi:
        return res[0]
    if name == "constrained_forward_dynamics":
        from dqdyn.constraints.dynamics import ConstrainedDynamicsResult

        return ConstrainedDynamicsResult(*res)
    return tuple(res)


def to_zarr(fn, model: Model, *arrays, url: str, component: str | None = None,
            overwrite: bool = False, compressors="auto", compute: bool = True,
            chunks: int | None = None, **kwargs):
    """`apply` written straight into Zarr: each chunk of states is read, computed and
    written to its rows by one task (``apply(...).to_zarr(url)`` makes a second, store task per
    chunk and holds each result in the worker's memory between the two).  An interrupted run
    resumes: the same call again computes only the chunks not yet written.

    ``url``: a Zarr store (a path, or an fsspec URL the workers can reach); the result is the
    array ``component`` in it (the store's root array when None), and for a function returning a
    tuple a group ``component`` of one array per part (``dtau_dq``, ``dtau_dv``, ``dtau_da`` for
    ``rnea_derivatives``; the field names of ``constrained_forward_dynamics``' result).
    Zarr's chunks are the chunks of states (irregular chunks are made regular first, so no two
    tasks write one Zarr chunk).  ``compressors``: Zarr's (``"auto"``: its default, Zstandard;
    ``None`` writes fastest, random states hardly compress).

    Completion: each task sets the chunk's completion marker after its data (a ``uint8`` array
    ``_done``: beside the parts in a group, in the array's own directory for one array), and the
    array (group) gets the attribute ``dqdyn_complete = True`` once every chunk is written; its
    attribute ``dqdyn_to_zarr`` records what was computed (function, model, inputs, kwargs,
    states, chunk).  Rerunning the same computation into an incomplete store computes the
    missing chunks only (Zarr's leftover ``*.partial`` files are removed first); into a complete
    one, nothing.  Another computation into an existing array is refused
    (`ShapeError`: pass ``overwrite=True`` to replace it).  Read the result
    with `open_zarr` or `from_zarr`, which refuse an incomplete store.

    Errors, besides `apply`'s: an input chunk absent from its Zarr store (Zarr would read
    zeros) or that cannot be decoded, and a failed write (a full disk), are
    `StoreError` naming the store, the array and the chunk; the chunks
    written before are kept.  Returns the Zarr array (or group) once written; with
    ``compute=False`` a ``dask.delayed`` object that writes the missing chunks, marks the store
    complete and returns the number of states it wrote.  The stored values equal ``apply``'s
    (and the in-process batched call's) bit for bit.
    """
    import dask
    import zarr
    from dask.base import tokenize

    name, xs, arrs, lead = _prepare(fn, model, arrays, chunks)
    spec = FUNCTIONS[name]
    if isinstance(url, os.PathLike):
        url = os.fspath(url)
    if not isinstance(url, str) or not url:
        raise ShapeError(f"url must be the path or URL of a Zarr store, got {url!r}")
    dims = [model.nq if k == "q" else model.nv for k in spec.inputs]
    c, N = max(lead), sum(lead)
    if any(n != c for n in lead[:-1]):  # irregular: one Zarr chunk per task needs regular chunks
        lead = tuple(min(c, N - s) for s in range(0, N, c))
        arrs = [None if x is None else x.rechunk({0: lead}) for x in arrs]
    shapes = _out_shapes(name, model, kwargs, xs, dims)
    node = component or ""
    if not spec.multi:
        parts, paths = ("",), (node,)
        markers = (_stores.join(url, node, _stores.MARKERS), "")
    else:
        parts = tuple(spec.names or _out_names(name, model, kwargs, xs, dims))
        paths = tuple(f"{component}/{p}" if component else p for p in parts)
        markers = (url, f"{component}/{_stores.MARKERS}" if component else _stores.MARKERS)
    want = {"function": name, "model": model.name, "model_token": model_token(model),
            "inputs": tokenize(*[x.name if x is not None else tokenize(r) for x, r in zip(arrs, xs)]),
            "kwargs": tokenize(kwargs), "states": int(N), "chunk": int(c),
            "parts": list(parts), "shapes": [list(map(int, s)) for s in shapes]}
    where = _stores.join(url, node) if node else url
    nchunks = len(lead)
    have = _node(url, node)
    if have is not None and not overwrite:
        rec = have.attrs.get(RECORD)
        if rec != want or isinstance(have, zarr.Group) != spec.multi:
            what = "an array" if isinstance(have, zarr.Array) else "a group"
            diff = sorted(k for k in want if (rec or {}).get(k) != want[k]) if isinstance(rec, dict) else None
            raise ShapeError(
                f"url: {url!r} already holds {what} {node or '(root)'!r}"
                + (f" of another computation (it differs in {diff})" if diff else "")
                + "; pass overwrite=True to replace it (the same arguments resume an unfinished one)")
        _stores.clean_partials(where)
        m = _stores.open_markers(*markers, mode="r+")
        if m is None or m.shape != (nchunks,):  # (stopped before its markers were made)
            m = _stores.create_markers(*markers, (nchunks,))
        todo = [i for (i,) in _stores.missing(m)]
    else:
        attrs = {RECORD: want, _stores.COMPLETE: False}
        if not spec.multi:  # the record is written with the array (one metadata write)
            zarr.create_array(url, name=node or None, shape=(N,) + tuple(shapes[0]),
                              chunks=(c,) + tuple(shapes[0]), dtype="f8", compressors=compressors,
                              overwrite=True, attributes=attrs)
        else:
            g = zarr.open_group(url, path=node, mode="a")
            g.attrs.update({RECORD: None, _stores.COMPLETE: False})  # (until made: not resumable)
            for path, shp in zip(paths, shapes):
                try:
                    zarr.create_array(url, name=path, shape=(N,) + tuple(shp), chunks=(c,) + tuple(shp),
                                      dtype="f8", compressors=compressors, overwrite=overwrite)
                except zarr.errors.ContainsArrayError:
                    raise ShapeError(f"url: {url!r} already holds an array {path!r}; pass "
                                     "overwrite=True to replace it") from None
        _stores.create_markers(*markers, (nchunks,))
        if spec.multi:
            g.attrs.update(attrs)  # last: a group with its record has all its parts
        todo = list(range(nchunks))
    starts = tuple(int(s) for s in np.cumsum((0,) + lead[:-1]))
    tasks = _block_tasks(name, model_delayed(model), kwargs, xs, arrs, nchunks,
                         (url, paths, starts, markers), only=todo)
    done = dask.delayed(_finish, pure=False)(url, node, markers, tasks)
    if not compute:
        return done
    if todo or have is None or overwrite or have.attrs.get(_stores.COMPLETE) is not True:
        done.compute()
    return open_zarr(url, component, mode="r+")


#: the attribute of a `to_zarr` result that records what it holds
RECORD = "dqdyn_to_zarr"


def _node(url: str, path: str):
    """The Zarr array or group at ``path`` of ``url``; None when there is none."""
    import zarr

    try:
        return zarr.open(store=url, path=path or None, mode="r")
    except (FileNotFoundError, KeyError):
        return None


def _finish(url: str, node: str, markers: tuple, counts: list) -> int:
    """After `to_zarr`'s tasks: mark the store complete once every chunk is."""
    import zarr

    todo = _stores.missing(zarr.open_array(markers[0], path=markers[1], mode="r"))
    where = _stores.join(url, node) if node else url
    if todo:  # pragma: no cover - every task succeeded: only a concurrent writer gets here
        raise _stores.incomplete(where, todo, len(zarr.open_array(markers[0], path=markers[1])),
                                 "chunks", "call dqdyn.scale.distributed.to_zarr again")
    zarr.open(store=url, path=node or None, mode="r+").attrs.update({_stores.COMPLETE: True})
    return int(sum(counts))


def open_zarr(url: str, component: str | None = None, *, allow_incomplete: bool = False,
              mode: str = "r"):
    """The Zarr array (or group, for a function returning a tuple) that `to_zarr` wrote
    at ``component`` of ``url``, after checking that it is complete: else
    `IncompleteStoreError` names the missing chunks (``allow_incomplete``:
    return it anyway; its unwritten rows read as 0.0).  A node that `to_zarr` did not
    write is a `StoreError` (open it with ``zarr.open``)."""
    import zarr

    node = component or ""
    where = _stores.join(url, node) if node else str(url)
    z = _node(url, node)
    if z is None:
        raise StoreError(f"url: {where!r} holds no Zarr array or group")
    _stores.check_numeric(z, f"url: {where!r}")
    rec = z.attrs.get(RECORD)
    if not isinstance(rec, dict):
        raise StoreError(f"url: {where!r} was not written by dqdyn.scale.distributed.to_zarr (it has no "
                         f"{RECORD!r} attribute, or its creation was stopped); open it with zarr.open")
    if not z.attrs.get(_stores.COMPLETE) and not allow_incomplete:
        markers = ((url, f"{node}/{_stores.MARKERS}" if node else _stores.MARKERS)
                   if isinstance(z, zarr.Group) else (_stores.join(url, node, _stores.MARKERS), ""))
        m = _stores.open_markers(*markers)
        todo = [(i,) for i in range(-(-rec["states"] // rec["chunk"]))] if m is None else _stores.missing(m)
        if todo:
            raise _stores.incomplete(
                where, todo, -(-rec["states"] // rec["chunk"]),
                f"chunks (of {rec['chunk']} states; {rec['function']})",
                "call dqdyn.scale.distributed.to_zarr again with the same arguments")
    return zarr.open(store=url, path=node or None, mode=mode) if mode != "r" else z


def from_zarr(url: str, component: str | None = None, *, allow_incomplete: bool = False):
    """`open_zarr`'s result as a Dask array chunked like the store, or for a group a dict
    of them by part name; the same checks."""
    import dask.array as da
    import zarr

    z = open_zarr(url, component, allow_incomplete=allow_incomplete)
    if isinstance(z, zarr.Group):
        return {k: da.from_zarr(z[k]) for k in z.attrs[RECORD]["parts"]}
    return da.from_zarr(z)


__all__ = [
    "FUNCTIONS",
    "NumbaThreads",
    "WORKER_CONFIG",
    "WORKER_ENVIRON",
    "apply",
    "call_block",
    "configure",
    "connect",
    "from_zarr",
    "local_cluster",
    "model_delayed",
    "model_token",
    "open_zarr",
    "resolve",
    "set_worker_threads",
    "to_zarr",
    "write_block",
]
