"""Run-time settings: the threading layer, the number of threads batched calls use, and the chunk
size of batches.

Threads and processes
---------------------
Batched calls run numba ``prange`` kernels on one of numba's threading layers.  At import, unless
the user chose one with the ``NUMBA_THREADING_LAYER`` environment variable, dqdyn selects numba's
``"safe"`` layer (TBB, a dependency of dqdyn where wheels exist).  A TBB installed by pip into a
virtual environment is not on the dynamic loader's path, so dqdyn loads ``libtbb.so.12`` from the
``tbb`` distribution's files first.  Without TBB (no wheel for the platform) dqdyn uses numba's
``workqueue`` layer.  A user may select ``tbb``, ``omp`` or ``workqueue``; each is thread-safe
(any number of Python threads may call dqdyn at once) and fork-safe (``os.fork``,
``multiprocessing`` / ``ProcessPoolExecutor`` with the ``fork`` context, during or after batched
calls in the parent), because dqdyn starts the layer at import and routes every parallel region
through a gate (`parallel_regions` counts them):

* ``fork()`` waits until no parallel region is running (``os.register_at_fork``).  A child forked
  while a worker thread is inside the layer inherits a half-finished region: numba's
  ``workqueue`` child then waits forever for workers that do not exist, TBB's cannot shut its
  workers down before the fork ("Unable to join threads") and some children hang.  Held at
  the gate, the fork happens between regions, where every layer is consistent.
* ``workqueue``: numba's workqueue aborts the process when two threads launch parallel regions
  at once, so the gate admits one region at a time (`WORKQUEUE_GUARDED`); concurrent calls
  from Python threads are safe, one parallel region at a time.
* ``omp`` with GNU OpenMP (Linux): libgomp's thread pool does not survive ``fork()`` and numba
  terminates a forked child that enters it ("fork() called from a process already using GNU
  OpenMP").  In a child forked from such a process the gate runs each parallel region on the
  calling thread instead: the results are the same bits (every state is computed by the same
  serial kernel), on one thread per child process.  For parallel children use the ``spawn``
  or ``forkserver`` start method, or the ``tbb`` / ``workqueue`` layer.

The gate binds numba's ``numba_parallel_for`` symbol, which kernels resolve when they are linked:
kernels compiled or loaded before ``import dqdyn`` (none of dqdyn's) bypass it.
"""

from __future__ import annotations

import ctypes
import os
import sys
import threading

import numba

from dqdyn.errors import ShapeError

#: True when the layer is numba's ``workqueue`` and dqdyn's gate admits one parallel region at a
#: time (see the module docstring)
WORKQUEUE_GUARDED = False
_GUARD = {}  # keeps the ctypes callbacks and the layer's own parallel_for alive


def _load_tbb() -> bool:
    """Load ``libtbb.so.12`` (TBB >= 2021.6, what numba's ``tbb`` layer accepts) into the process,
    from the loader's path or else from the files of the pip ``tbb`` distribution (a virtual
    environment's ``lib/`` is not on the loader's path).  True when TBB is usable."""
    if sys.platform == "win32":
        names, where = ["tbb12.dll"], "Library/bin"
    elif sys.platform == "darwin":
        names, where = ["libtbb.12.dylib"], "lib"
    else:
        names, where = ["libtbb.so.12"], "lib"
    candidates = list(names)
    for prefix in dict.fromkeys((sys.prefix, sys.base_prefix)):
        candidates += [os.path.join(prefix, where, n) for n in names]
    for c in candidates:
        if os.sep in c and not os.path.exists(c):
            continue
        try:
            lib = ctypes.CDLL(c, mode=ctypes.RTLD_GLOBAL)
            break
        except OSError:
            continue
    else:
        try:  # pip --user, --prefix or --target installs: ask the distribution for its files
            from importlib.metadata import PackageNotFoundError, distribution

            files = distribution("tbb").files or []
        except (ImportError, PackageNotFoundError):
            return False
        lib = None
        for f in files:
            if f.name in names:
                try:
                    lib = ctypes.CDLL(str(f.locate()), mode=ctypes.RTLD_GLOBAL)
                    break
                except OSError:
                    continue
        if lib is None:
            return False
    try:
        ver = lib.TBB_runtime_interface_version
        ver.restype = ctypes.c_int
        return ver() >= 12060  # numba's requirement (TBB 2021 update 6)
    except AttributeError:
        return False


class _Gate:
    """Admits parallel regions (one at a time when ``exclusive``) and holds ``fork()`` until
    none is running; ``serial``: run each region on the calling thread (a GNU OpenMP child)."""

    def __init__(self, exclusive: bool):
        self.exclusive, self.serial = exclusive, False
        self.cond = threading.Condition(threading.Lock())
        self.active = self.forking = self.regions = 0

    def enter(self) -> None:
        with self.cond:
            while self.forking or (self.exclusive and self.active):
                self.cond.wait()
            self.active += 1
            self.regions += 1

    def leave(self) -> None:
        with self.cond:
            self.active -= 1
            self.cond.notify_all()

    def before_fork(self) -> None:
        self.cond.acquire()  # held across fork(): no region starts, none is running
        self.forking += 1
        while self.active:
            self.cond.wait()

    def after_fork_parent(self) -> None:
        self.forking -= 1
        self.cond.notify_all()
        self.cond.release()

    def after_fork_child(self, gnu_omp: bool) -> None:
        self.cond = threading.Condition(threading.Lock())  # the child has no other thread
        self.active = self.forking = 0
        self.serial = self.serial or gnu_omp


def _install_gate() -> None:
    """Start numba's threading layer and rebind ``numba_parallel_for`` (the symbol numba's
    parallel kernels call, bound when the layer starts) to dqdyn's gate (module docstring)."""
    global WORKQUEUE_GUARDED
    if _GUARD:
        return
    import llvmlite.binding as ll
    from numba.np.ufunc import parallel as npar

    npar._launch_threads()
    layer = npar._threading_layer
    gnu_omp = False
    if layer == "omp":
        from numba.np.ufunc import omppool

        gnu_omp = getattr(omppool, "openmp_vendor", "") == "GNU"
    proto = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p,
                             ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_size_t,
                             ctypes.c_int)
    body = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p,
                            ctypes.c_void_p)
    real = proto(ll.address_of_symbol("numba_parallel_for"))
    gate = _Gate(exclusive=layer == "workqueue")

    def region(fn, args, dims, steps, data, inner_ndim, array_count, num_threads):
        if gate.serial:  # the gufunc over all of dims[0], as a one-thread layer runs it
            with gate.cond:
                gate.regions += 1
            body(fn)(args, dims, steps, data)
            return
        gate.enter()
        try:
            real(fn, args, dims, steps, data, inner_ndim, array_count, num_threads)
        finally:
            gate.leave()

    cb = proto(region)
    _GUARD.update(real=real, cb=cb, gate=gate, layer=layer)
    ll.add_symbol("numba_parallel_for", ctypes.cast(cb, ctypes.c_void_p).value)
    if hasattr(os, "register_at_fork"):
        os.register_at_fork(before=gate.before_fork, after_in_parent=gate.after_fork_parent,
                            after_in_child=lambda: gate.after_fork_child(gnu_omp))
    WORKQUEUE_GUARDED = layer == "workqueue"


def _select_threading_layer() -> None:
    """Pick numba's threading layer at import and install the gate (module docstring)."""
    from numba.np.ufunc import parallel as npar

    user = os.environ.get("NUMBA_THREADING_LAYER", "").strip().lower()
    if not npar._is_initialized and user in ("", "default", "safe", "threadsafe", "forksafe",
                                             "tbb"):
        have_tbb = _load_tbb()
        if not user:
            numba.config.THREADING_LAYER = "safe" if have_tbb else "workqueue"
    if numba.config.DISABLE_JIT:
        return
    try:
        _install_gate()
    except (ValueError, OSError, ImportError):  # a layer this machine lacks: numba says so on
        pass                                    # the first batched call, as without dqdyn


_select_threading_layer()


def parallel_regions() -> int:
    """How many parallel regions (``prange`` kernel launches on the threading layer) this
    process has run through dqdyn's gate; batches small enough to run serially
    (`dqdyn._engine.batching.SERIAL_WORK`) start none."""
    gate = _GUARD.get("gate")
    return gate.regions if gate is not None else 0


def threading_layer() -> str:
    """The name of numba's threading layer that batched calls run on (``"tbb"``, ``"omp"`` or
    ``"workqueue"``; starts the layer if no parallel call has run yet)."""
    from numba.np.ufunc import parallel as npar

    npar._launch_threads()
    return npar._threading_layer


def set_num_threads(n: int) -> None:
    """Use ``n`` threads in batched calls (1 … ``numba.config.NUMBA_NUM_THREADS``, which the
    ``NUMBA_NUM_THREADS`` environment variable sets before import).  Results do not depend on
    it: every state is computed by the same serial kernel."""
    top = numba.config.NUMBA_NUM_THREADS
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= top:
        raise ShapeError(f"n must be an integer in 1..{top} (threads), got {n!r}")
    numba.set_num_threads(n)


def get_num_threads() -> int:
    """The number of threads batched calls use."""
    return numba.get_num_threads()


#: states per compiled call of a batched function (see `set_batch_chunk`)
BATCH_CHUNK = 1 << 16


def set_batch_chunk(n: int) -> None:
    """Process batches in chunks of ``n`` states (default 65536).

    A batched call runs one compiled ``prange`` call per chunk, so what dqdyn allocates besides
    the output (status codes, the rows of an input shared by the whole batch) is bounded by the
    chunk, not by the batch: with ``np.memmap`` inputs and ``out=`` a memmap, a batch larger
    than memory streams through.  Results do not depend on ``n``."""
    global BATCH_CHUNK
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ShapeError(f"n must be a positive integer (states per chunk), got {n!r}")
    BATCH_CHUNK = n


def get_batch_chunk() -> int:
    """The number of states per compiled call of a batched function."""
    return BATCH_CHUNK


__all__ = ["threading_layer", "parallel_regions", "set_num_threads", "get_num_threads", "set_batch_chunk", "get_batch_chunk"]
