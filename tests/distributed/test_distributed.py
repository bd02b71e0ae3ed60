"""dqdyn.scale.distributed and dqdyn.scale.sweep on a LocalCluster(n_workers=2, processes=True) started here.

Oracles: the in-process batched call (bit for bit), the graph itself (one model key), counts of
model unpickles inside the workers, an uninterrupted run of the same sweep (bit for bit), the
joint-torque regressor (linear in the inertial parameters) for perturbed models, eigenvalues of
the pseudo-inertia / triangle inequalities for physical consistency.
"""

from __future__ import annotations

import os
import signal

import numpy as np
import pytest

dask = pytest.importorskip("dask")
pytest.importorskip("distributed")
zarr = pytest.importorskip("zarr")

import dask.array as da  # noqa: E402

import dqdyn  # noqa: E402
from dqdyn import distributed as dd  # noqa: E402
from dqdyn import sweep as sw  # noqa: E402
from dqdyn.errors import ChunkError, SchedulerError, ShapeError, UnknownNameError  # noqa: E402

N = 1000


@pytest.fixture(scope="module")
def model():
    return dqdyn.load_bundled("jaco6")


@pytest.fixture(scope="module")
def states(model):
    rng = np.random.default_rng(7)
    q = dqdyn.random_configuration(model, size=N, seed=rng)
    return q, rng.normal(size=(N, model.nv)), rng.normal(size=(N, model.nv))


@pytest.fixture(scope="module")
def client(model, states):
    from distributed import Client, LocalCluster

    # workers are started by spawn (never forked from this process, which has run batches)
    assert dask.config.get("distributed.worker.multiprocessing-method") == "spawn"
    q, v, a = states
    for f in (lambda: dqdyn.rnea(model, q[:3], v[:3], a[:3]), lambda: dqdyn.aba(model, q[:3], v[:3], a[:3]),
              lambda: dqdyn.mass_matrix(model, q[:3]), lambda: dqdyn.rnea_derivatives(model, q[:3], v[:3], a[:3])):
        f()  # compiled here (numba's disk cache) before the workers load it
    cluster = LocalCluster(n_workers=2, processes=True, threads_per_worker=1, dashboard_address=None)
    c = Client(cluster)
    dd.configure(c)
    yield c
    c.close()
    cluster.close()


# ------------------------------------------------------------------------------ apply
def test_apply_bit_identical_to_in_process_batch(client, model, states):
    q, v, a = states
    Q = da.from_array(q, chunks=(300, -1))  # uneven chunks: 300, 300, 300, 100
    cases = [
        (dqdyn.rnea, (Q, v, a), dqdyn.rnea(model, q, v, a)),
        ("aba", (Q, v, a[0]), dqdyn.aba(model, q, v, a[0])),  # a shared row, as dqdyn broadcasts
        (dqdyn.mass_matrix, (Q,), dqdyn.mass_matrix(model, q)),
    ]
    for fn, args, ref in cases:
        r = dd.apply(fn, model, *args)
        assert isinstance(r, da.Array) and r.chunks[0] == (300, 300, 300, 100)
        out = r.compute()
        assert out.dtype == ref.dtype and np.array_equal(out, ref), fn
    got = dask.compute(*dd.apply(dqdyn.rnea_derivatives, model, Q, v, a))
    for g, ref in zip(got, dqdyn.rnea_derivatives(model, q, v, a)):
        assert np.array_equal(g, ref)


def test_every_registered_function_is_the_public_one_and_runs_on_the_workers(client, model, states):
    """Each name of the registry resolves to the public function of that name (a moved function
    once left ``coriolis_matrix`` pointing at a module without it: an AttributeError, and
    ``dqdyn sweep --quantities C`` failing), and its blocks on the workers equal the in-process
    batched call bit for bit (chunks of 50 and the whole 130 states both run state by state in
    the call gate; a block that arrived unaligned once ran the batch kernel instead, whose FMA
    contraction in ``aba_derivatives`` differs in the last bit — now it is copied first)."""
    from dqdyn.constraints import JointCoupling

    q, v, a = (x[:130] for x in states)
    kw = {"constrained_forward_dynamics": {"constraints": [JointCoupling(model.joint_names[2],
                                                                        model.joint_names[1], 0.5)]}}
    for name, spec in dd.FUNCTIONS.items():
        fn = getattr(dqdyn, name)
        assert dd.resolve(fn) == name and dd.resolve(name) == name
        args = {"q": q, "v": v, "a": a, "tau": a}
        xs = [args[k] for k in spec.inputs]
        ref = fn(model, *xs, **kw.get(name, {}))
        got = dd.apply(fn, model, da.from_array(xs[0], chunks=(50, -1)), *xs[1:], **kw.get(name, {}))
        got = dask.compute(*got) if spec.multi else (got.compute(),)
        refs = tuple(ref) if spec.multi else (ref,)
        assert len(got) == len(refs), name
        for g, r in zip(got, refs):
            assert g.dtype == r.dtype and np.array_equal(g, r), name


def _transferred_keys(client) -> set:
    """Keys every worker has received from another worker so far (distributed's transfer log)."""
    logs = client.run(lambda dask_worker: [k for x in dask_worker.transfer_incoming_log for k in x["keys"]])
    return {k for ks in logs.values() for k in ks}


def test_each_worker_reads_the_input_chunks_it_computes(client, model, states, tmp_path):
    # inputs straight from storage (memory-mapped .npy chunks, Zarr): each block's task reads
    # its own chunks, so no input chunk moves between the two workers (with separate read tasks
    # about a third of them did)
    q, v, a = states
    Q = da.from_array(q, chunks=(100, -1))
    da.to_npy_stack(str(tmp_path / "q"), Q, axis=0)
    da.to_npy_stack(str(tmp_path / "v"), da.from_array(v, chunks=(100, -1)), axis=0)
    zarr.open_array(str(tmp_path / "a.zarr"), mode="w", shape=a.shape, chunks=(100, a.shape[1]),
                    dtype="f8")[:] = a
    ins = (da.from_npy_stack(str(tmp_path / "q"), mmap_mode="r"),
           da.from_npy_stack(str(tmp_path / "v"), mmap_mode="r"), da.from_zarr(str(tmp_path / "a.zarr")))
    names = {x.name for x in ins}
    before = _transferred_keys(client)
    for fn, args, ref in ((dqdyn.rnea, ins, dqdyn.rnea(model, q, v, a)),
                          (dqdyn.aba, ins, dqdyn.aba(model, q, v, a))):
        out = dd.apply(fn, model, *args).compute()
        assert np.array_equal(out, ref)
    moved = {k for k in _transferred_keys(client) - before if isinstance(k, tuple) and k[0] in names}
    assert not moved, sorted(moved)[:5]


def test_without_dask_task_spec_blocks_depend_on_their_chunks(model, states, monkeypatch):
    # an older dask, without dask._task_spec: plain delayed block tasks, same results
    import sys

    q, v, a = states
    Q = da.from_array(q, chunks=(300, -1))
    with monkeypatch.context() as mp:  # (only while the graph is built: dask itself imports it)
        mp.setitem(sys.modules, "dask._task_spec", None)
        r = dd.apply(dqdyn.rnea, model, Q, v, a[0])
    g = dict(r.__dask_graph__())
    blocks = [k for k in g if isinstance(k, str) and k.startswith("dqdyn-rnea-")]
    from dask.core import get_dependencies

    assert len(blocks) == 4
    for k in blocks:  # each block task depends on its chunk of q (not fused with its read)
        assert any(isinstance(d, tuple) and d[0] == Q.name for d in get_dependencies(g, k))
    assert np.array_equal(r.compute(scheduler="sync"), dqdyn.rnea(model, q, v, a[0]))


def test_to_zarr_writes_the_in_process_batch_one_task_per_chunk(client, model, states, tmp_path):
    q, v, a = states
    Q = da.from_array(q, chunks=(300, -1))  # 300, 300, 300, 100: Zarr chunks of 300
    z = dd.to_zarr(dqdyn.rnea, model, Q, v, a, url=str(tmp_path / "t.zarr"), component="tau")
    assert z.shape == (N, model.nv) and z.chunks == (300, model.nv)
    assert np.array_equal(z[:], dqdyn.rnea(model, q, v, a))
    # irregular chunks are made regular (no two tasks write one Zarr chunk); no compression
    Qi = da.from_array(q, chunks=((100, 400, 300, 200), (model.nq,)))
    z = dd.to_zarr("aba", model, Qi, v, a[0], url=str(tmp_path / "b.zarr"), compressors=None)
    assert z.chunks == (400, model.nv) and z.compressors == ()
    assert np.array_equal(z[:], dqdyn.aba(model, q, v, a[0]))
    # a function returning a tuple: a group of one array per part
    g = dd.to_zarr(dqdyn.rnea_derivatives, model, Q, v, a, url=str(tmp_path / "d.zarr"), component="d")
    for part, ref in zip(("dtau_dq", "dtau_dv", "dtau_da"), dqdyn.rnea_derivatives(model, q, v, a)):
        assert np.array_equal(g[part][:], ref)
    # results of more than one axis per state, computed into each worker thread's reused buffer
    # (chunks of 300, 300, 300, 100: the last one another size)
    for fn, ref in ((dqdyn.mass_matrix, dqdyn.mass_matrix(model, q)),
                    (dqdyn.forward_kinematics, dqdyn.forward_kinematics(model, q))):
        z = dd.to_zarr(fn, model, Q, url=str(tmp_path / f"{fn.__name__}.zarr"))
        assert z.shape == ref.shape and np.array_equal(z[:], ref)
    # inputs in Zarr: one task per chunk (read, compute, write), no read or store tasks
    ins = []
    for k, x in (("q", q), ("v", v), ("a", a)):
        zarr.open_array(str(tmp_path / f"{k}.zarr"), mode="w", shape=x.shape, chunks=(300, x.shape[1]),
                        dtype="f8")[:] = x
        ins.append(da.from_zarr(str(tmp_path / f"{k}.zarr")))
    w = dd.to_zarr(dqdyn.rnea, model, *ins, url=str(tmp_path / "t.zarr"), component="tau",
                   overwrite=True, compute=False)
    opt = dict(w.__dask_optimize__(w.__dask_graph__(), [w.key]))
    assert len([k for k in opt if isinstance(k, str) and k.startswith("dqdyn-rnea-zarr-")]) == 4
    assert not [k for k in opt if isinstance(k, tuple)]  # no chunk of an input is a task of its own
    assert w.compute() == N
    assert np.array_equal(zarr.open_array(str(tmp_path / "t.zarr"), path="tau")[:], dqdyn.rnea(model, q, v, a))
    with pytest.raises(ShapeError, match="overwrite=True"):
        dd.to_zarr(dqdyn.rnea, model, Q, v, a, url=str(tmp_path / "t.zarr"), component="tau")


def test_local_cluster_workers_keep_glibc_malloc_thresholds(monkeypatch):
    """dd.local_cluster's workers do not get Dask's MALLOC_TRIM_THRESHOLD_ (which fixes glibc's
    mmap threshold, so every chunk-sized array is mapped and zeroed anew); NumbaThreads is
    installed; the workers' profiler is off and Dask's monitors tick less often
    (dd.WORKER_CONFIG), except a setting the user made, which is kept."""
    monkeypatch.delenv("MALLOC_TRIM_THRESHOLD_", raising=False)
    before = dict(dask.config.get("distributed.nanny.pre-spawn-environ"))  # (Dask's: 65536)
    # (configuration text compared as text: no clock is read, nothing is timed)
    mine, user_value = "distributed.admin.system-monitor.interval", "700ms"
    with dask.config.set({mine: user_value}):
        c = dd.local_cluster(1, threads=1)
    try:
        env = c.run(lambda: os.environ.get("MALLOC_TRIM_THRESHOLD_"))
        assert list(env.values()) == [None]
        assert list(c.run(dd._worker_threads).values()) == [1]
        got = list(c.run(lambda: {k: dask.config.get(k) for k in dd.WORKER_CONFIG}).values())[0]
        assert got == {k: (user_value if k == mine else v[1]) for k, v in dd.WORKER_CONFIG.items()}
    finally:
        cluster = c.cluster
        c.close()
        cluster.close()
    assert dict(dask.config.get("distributed.nanny.pre-spawn-environ")) == before  # (untouched outside)


def test_numpy_inputs_are_chunked_like_config(client, model, states):
    q, v, a = states
    r = dd.apply(dqdyn.rnea, model, q, v, a, chunks=400)
    assert r.chunks[0] == (400, 400, 200)
    assert np.array_equal(r.compute(), dqdyn.rnea(model, q, v, a))


def test_model_is_one_key_of_the_graph(model, states):
    q, v, a = states
    r = dd.apply(dqdyn.rnea, model, da.from_array(q, chunks=(100, -1)), v, a)
    g = dict(r.__dask_graph__())
    mkey = dd.model_delayed(model).key
    assert mkey in g
    # the model object is held by exactly one key; the 10 block tasks refer to that key
    blocks = [k for k in g if isinstance(k, str) and k.startswith("dqdyn-rnea-")]
    assert len(blocks) == 10
    from dask.core import get_dependencies

    for k in blocks:
        assert mkey in get_dependencies(g, k)
    import pickle

    sizes = [len(pickle.dumps(g[k])) for k in blocks]
    assert max(sizes) < len(pickle.dumps(model)) // 2  # no block task carries the model


def _odd_offset(b) -> memoryview:
    """A writable copy of the buffer ``b`` at an odd address (as Dask slices buffers out of one
    message at any byte offset)."""
    raw = bytearray(b.raw().nbytes + 1)
    mv = memoryview(raw)[1:]
    mv[:] = b.raw()
    return mv


def test_a_model_unpickles_from_read_only_or_unaligned_out_of_band_buffers(model, states):
    """Pickle protocol 5 with the arrays out of band, handed back read-only (``bytes``, as
    object stores and shared memory give them; once a ValueError 'assignment destination is
    read-only') or at odd addresses (as Dask's frames do; the call gate then declined every call
    on that model, and ``constrained_forward_dynamics`` took the general path): a model with
    aligned tables whose results equal the original's bit for bit."""
    import pickle

    from dqdyn.constraints import JointCoupling
    from dqdyn.constraints import forward as D

    q, v, a = states
    cons = [JointCoupling(model.joint_names[2], model.joint_names[1], 0.5)]
    ref = dqdyn.constrained_forward_dynamics(model, q[:5], v[:5], a[:5], cons)
    for hand_back in (lambda b: bytes(b.raw()), _odd_offset):
        bufs = []
        data = pickle.dumps(model, protocol=5, buffer_callback=bufs.append)
        assert bufs  # (the arrays did go out of band)
        m2 = pickle.loads(data, buffers=[hand_back(b) for b in bufs])
        assert m2.mi.flags.aligned and m2.mf.flags.aligned
        assert m2.mf.flags.writeable == model.mf.flags.writeable and m2.joint_names == model.joint_names
        assert np.array_equal(dqdyn.rnea(m2, q, v, a), dqdyn.rnea(model, q, v, a))
        sp = D._compiled_spec(m2, cons)  # the gate takes its tables (None: it declines them)
        assert type(D.GATE(D.gate_address(vars(D), "_CFD_C", D._c_cfd), m2.mi, m2.mf, sp[1], -1,
                           q[0], v[0], a[0], sp[0], D._PAR_DEFAULT, m2._scratch)) is np.ndarray
        got = dqdyn.constrained_forward_dynamics(m2, q[:5], v[:5], a[:5], cons)
        for x, y in zip(got, ref):
            assert np.array_equal(x, y)


def _install_counter():
    import dqdyn.multibody.model as mm

    orig = getattr(mm, "_rebuild_model_orig", mm._rebuild_model)
    mm._rebuild_model_orig = orig
    mm._unpickled = 0

    def counting(cls, kw):
        mm._unpickled += 1
        return orig(cls, kw)

    mm._rebuild_model = counting
    return True


def _read_counter():
    import dqdyn.multibody.model as mm

    return mm._unpickled


def test_model_unpickled_once_per_worker(client, model, states):
    q, v, a = states
    m2 = sw.perturb_model(model, sw.Perturbation(mass=0.1), seed=3)  # a model new to the workers
    client.run(_install_counter)
    r = dd.apply(dqdyn.rnea, m2, da.from_array(q, chunks=(50, -1)), v, a)  # 20 tasks
    assert np.array_equal(r.compute(), dqdyn.rnea(m2, q, v, a))
    counts = client.run(_read_counter)
    assert sum(counts.values()) >= 1 and max(counts.values()) <= 1, counts


def test_numba_threads_per_worker(client):
    cores = dd.host_cores()
    per = client.run(dd._worker_threads)
    assert len(per) == 2 and set(per.values()) == {max(1, cores // 2)}
    # applied inside tasks (numba's count is per thread)
    got = client.gather([client.submit(dd.task_threads, pure=False, workers=[w]) for w in per])
    assert got == [max(1, cores // 2)] * 2
    p = dd.NumbaThreads(None, {"10.0.0.1": 4})
    assert p.threads_for("tcp://10.0.0.1:4242", 16) == 4
    assert p.threads_for("tcp://10.0.0.2:4242", 16) == 16
    assert dd.NumbaThreads(3).threads_for("tcp://x:1", 16) == 3


def test_bad_inputs_fail_fast(model, states):
    q, v, a = states
    Q = da.from_array(q, chunks=(300, -1))
    with pytest.raises(UnknownNameError, match="fn"):
        dd.apply(np.sin, model, Q)
    with pytest.raises(UnknownNameError, match="fn"):
        dd.apply("no_such_function", model, Q)
    with pytest.raises(ChunkError, match="q is chunked along its last axis"):
        dd.apply(dqdyn.mass_matrix, model, da.from_array(q, chunks=(300, 3)))
    with pytest.raises(ShapeError, match=r"v must have shape \(N, 6\)"):
        dd.apply(dqdyn.rnea, model, Q, v[:, :3], a)
    with pytest.raises(ShapeError, match="states"):
        dd.apply(dqdyn.rnea, model, Q, v[:10], a)
    with pytest.raises(ShapeError, match="takes 3"):
        dd.apply(dqdyn.rnea, model, Q, v)
    with pytest.raises(UnknownNameError, match="bogus"):
        sw.make_spec(model, states=10, quantities="tau,bogus")


def test_unreachable_scheduler_is_a_named_error_not_a_hang(monkeypatch):
    """No hang: the caller's timeout is what Dask's ``Client`` is given (a spy around the real
    one records it), and the named error reports it."""
    import distributed

    real, seen = distributed.Client, []

    def spy(*args, **kwargs):
        seen.append(kwargs.get("timeout"))
        return real(*args, **kwargs)

    monkeypatch.setattr(distributed, "Client", spy)
    with pytest.raises(SchedulerError, match=r"could not be reached within 1 s"):
        dd.connect("tcp://127.0.0.1:9", timeout=1.0)
    assert seen == ["1.0s"]


def test_cli_unreachable_scheduler_and_unknown_quantity(tmp_path, capsys):
    from dqdyn.cli import main

    rc = main(["sweep", "--bundled", "two_link_arm", "--out", str(tmp_path / "x.zarr"), "--states",
               "10", "--scheduler", "tcp://127.0.0.1:9", "--timeout", "1", "--no-progress"])
    assert rc == 2 and "could not be reached" in capsys.readouterr().err
    rc = main(["sweep", "--bundled", "two_link_arm", "--out", str(tmp_path / "y.zarr"), "--states",
               "10", "--quantities", "tau,bogus", "--workers", "0"])
    assert rc == 2 and "quantity 'bogus' is unknown" in capsys.readouterr().err


# ------------------------------------------------------------------------------ model families
def test_perturbed_models_are_physical_and_match_the_regressor(model, states):
    q, v, a = states
    p = sw.Perturbation(mass=0.2, com=0.02, inertia=0.3, axes=0.2, payload=1.5)
    fam = sw.model_family(model, 3, p, seed=5)
    assert sw.perturb_model(model, p, 5, 1).mf.tobytes() == fam[1].mf.tobytes()  # (seed, k) only
    Y = dqdyn.joint_torque_regressor(model, q[:20], v[:20], a[:20])
    base = dqdyn.inertial_parameters(model)
    for m in fam:
        sw.check_physical(m)
        pi = dqdyn.inertial_parameters(m)
        assert not np.allclose(pi, base)
        for i in range(m.nbodies):  # pseudo-inertia J ⪰ 0 (Wensing et al. 2017)
            mass, h, Io = pi[i, 0], pi[i, 1:4], pi[i, 4:]
            I = np.array([[Io[0], Io[1], Io[3]], [Io[1], Io[2], Io[4]], [Io[3], Io[4], Io[5]]])
            J = np.zeros((4, 4))
            J[:3, :3] = 0.5 * np.trace(I) * np.eye(3) - I
            J[:3, 3] = J[3, :3] = h
            J[3, 3] = mass
            assert np.linalg.eigvalsh(J).min() >= -1e-12 * np.abs(J).max()
        # the model is built from its parameters: rnea = Y(q, v, a) π (a separate kernel)
        np.testing.assert_allclose(dqdyn.rnea(m, q[:20], v[:20], a[:20]), Y @ pi.ravel(),
                                   rtol=1e-9, atol=1e-9)
    assert sw.model_family(model, 2, sw.Perturbation())[1] is model


def test_evaluate_family_across_workers(client, model, states):
    q, v, a = states
    fam = sw.model_family(model, 3, sw.Perturbation(mass=0.1, payload=1.0), seed=1)
    Q = da.from_array(q, chunks=(250, -1))
    outs = dask.compute(*sw.evaluate_family(dqdyn.rnea, fam, Q, v, a))
    for m, o in zip(fam, outs):
        assert np.array_equal(o, dqdyn.rnea(m, q, v, a))


# ------------------------------------------------------------------------------ sweeps
def _spec(model, **kw):
    kw = {"states": 1100, "chunk": 250, "seed": 11, "quantities": "tau,M", "models": 2,
          "perturbation": sw.Perturbation(mass=0.1, inertia=0.1, payload=0.5), **kw}
    return sw.make_spec(model, **kw)


def _arrays(path):
    g = zarr.open_group(path, mode="r")
    return {k: g[k][:] for k in ("q", "v", "a", "tau", "M", "params", "_done")}


@pytest.fixture(scope="module")
def reference(model, tmp_path_factory):
    """An uninterrupted sweep run in this process (no cluster)."""
    path = str(tmp_path_factory.mktemp("ref") / "ref.zarr")
    r = sw.run_sweep(path, model, _spec(model))
    assert r["done"] == r["total"] == 10
    return _arrays(path)


def _same(a, b):
    assert a.keys() == b.keys()
    for k in a:
        assert a[k].dtype == b[k].dtype and np.array_equal(a[k], b[k]), k


def test_sweep_dataset_is_the_in_process_batch(reference, model):
    d = reference
    assert d["_done"].all()
    fam = sw.model_family(model, 2, sw.Perturbation(mass=0.1, inertia=0.1, payload=0.5), seed=11)
    for k, m in enumerate(fam):
        assert np.array_equal(d["tau"][k], dqdyn.rnea(m, d["q"], d["v"], d["a"]))
        assert np.array_equal(d["M"][k], dqdyn.mass_matrix(m, d["q"]))
        assert np.array_equal(d["params"][k], dqdyn.inertial_parameters(m))
    lo, hi = model.q_lower, model.q_upper
    assert np.all((d["q"] >= np.where(np.isfinite(lo), lo, -np.pi))
                  & (d["q"] <= np.where(np.isfinite(hi), hi, np.pi)))


@pytest.mark.parametrize("compressor", ["lz4", "none"])
def test_sweep_compressor_changes_the_store_not_the_data(reference, model, tmp_path, compressor):
    """``compressor``: the data arrays are written with it, the numbers are those of the default
    (Zstandard) store; an unknown name is a named error; the default stays out of the recorded
    specification, so stores made before the option resume."""
    path = str(tmp_path / "c.zarr")
    r = sw.run_sweep(path, model, _spec(model, compressor=compressor))
    assert r["done"] == r["total"]
    _same(_arrays(path), reference)
    codecs = zarr.open_group(path, mode="r")["tau"].compressors
    assert codecs == () if compressor == "none" else "lz4" in repr(codecs)
    assert "compressor" not in _spec(model).to_json()
    with pytest.raises(UnknownNameError, match="compressor"):
        _spec(model, compressor="gzip")


def test_sweep_on_cluster_equals_in_process(client, reference, model, tmp_path):
    path = str(tmp_path / "c.zarr")
    r = sw.run_sweep(path, model, _spec(model), client=client)
    assert r["ran"] == 10
    _same(_arrays(path), reference)


def test_sweep_stopped_after_k_chunks_resumes_to_the_same_dataset(client, reference, model, tmp_path):
    path = str(tmp_path / "s.zarr")
    r = sw.run_sweep(path, model, _spec(model), client=client, max_chunks=3)
    assert (r["ran"], r["done"]) == (3, 3)
    r = sw.run_sweep(path, model, _spec(model), client=client)
    assert (r["ran"], r["done"]) == (7, 10)  # nothing done twice
    _same(_arrays(path), reference)
    # a chunk written without its marker (killed between the data and the marker) is redone
    g = zarr.open_group(path, mode="r+")
    g["tau"][1, 250:500] = np.nan
    g["_done"][1, 1] = 0
    r = sw.run_sweep(path, model, _spec(model), client=client)
    assert r["ran"] == 1
    _same(_arrays(path), reference)
    with pytest.raises(sw.SweepMismatchError, match="seed"):
        sw.run_sweep(path, model, _spec(model, seed=12), client=client)


def test_cli_sweep_in_process_and_remote(client, tmp_path, capsys):
    from dqdyn.cli import main

    a, b = str(tmp_path / "a.zarr"), str(tmp_path / "b.zarr")
    base = ["sweep", "--bundled", "two_link_arm", "--states", "500", "--chunk", "100",
            "--quantities", "tau,g", "--models", "2", "--mass", "0.1", "--no-progress"]
    assert main(base + ["--out", a, "--workers", "0", "--max-chunks", "4"]) == 3  # unfinished
    assert main(base + ["--out", a, "--workers", "0"]) == 0
    assert main(base + ["--out", b, "--scheduler", client.scheduler.address]) == 0
    ga, gb = zarr.open_group(a, mode="r"), zarr.open_group(b, mode="r")
    for k in ("q", "v", "a", "tau", "g", "params"):
        assert np.array_equal(ga[k][:], gb[k][:]), k
    assert "10/10 chunks done" in capsys.readouterr().out


def test_grid_sampling(model):
    m = dqdyn.load_bundled("two_link_arm")
    spec = sw.make_spec(m, sampling="grid", grid=5, chunk=10, quantities="g")
    assert spec.states == 25
    qs = np.concatenate([sw.chunk_states(m, spec, j)["q"] for j in range(spec.nchunks)])
    lo = np.where(np.isfinite(m.q_lower), m.q_lower, -np.pi)
    hi = np.where(np.isfinite(m.q_upper), m.q_upper, np.pi)
    assert len({tuple(r) for r in qs}) == 25
    for i in range(m.nq):
        np.testing.assert_allclose(np.unique(qs[:, i]), np.linspace(lo[i], hi[i], 5), rtol=0, atol=1e-15)
    with pytest.raises(ShapeError, match="grid"):
        sw.make_spec(m, sampling="grid", grid=1)


@pytest.mark.slow  # waits for the nanny to restart the worker (spawn + imports)
def test_sweep_survives_a_killed_worker(client, reference, model, tmp_path):
    path = str(tmp_path / "k.zarr")
    pids = client.run(os.getpid)
    killed = []

    def kill_one(k, j):
        if not killed:
            victim = sorted(pids)[0]
            os.kill(pids[victim], signal.SIGKILL)  # a worker process this test's cluster started
            killed.append(victim)

    r = sw.run_sweep(path, model, _spec(model), client=client, on_done=kill_one)
    assert killed and r["done"] == r["total"] == 10
    _same(_arrays(path), reference)
