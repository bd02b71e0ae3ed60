"""Dataset stores that say whether they are complete, runs that resume, errors that name the chunk.

Oracles: an uninterrupted run of the same computation (bit for bit), the in-process batched call,
the store's own files (which chunks exist, which marker is set), the exit status and stderr of the
command line.  Interruptions are real where a test can make them so (a process killed with
SIGKILL, workers killed with SIGKILL, a store without workers); a full disk and a kill during the
creation of a store are injected at the write (monkeypatch), as a disk or a kill would produce
them.
"""

from __future__ import annotations

import errno
import os
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

dask = pytest.importorskip("dask")
pytest.importorskip("distributed")
zarr = pytest.importorskip("zarr")

import dask.array as da  # noqa: E402

import dqdyn  # noqa: E402
from dqdyn import distributed as dd  # noqa: E402
from dqdyn import sweep as sw  # noqa: E402
from dqdyn.errors import IncompleteStoreError, NonFiniteError, ShapeError, StoreError  # noqa: E402

SRC = os.path.join(os.path.dirname(__file__), "..", "..", "src")


@pytest.fixture(scope="module")
def model():
    return dqdyn.load_bundled("jaco6")


def _inputs(model, n):
    """The same states in every process (a fixed random stream)."""
    rng = np.random.default_rng(3)
    q = dqdyn.random_configuration(model, size=n, seed=rng)
    return q, rng.normal(size=(n, model.nv)), rng.normal(size=(n, model.nv))


def _chunk_files(url: str, sub: str = "c") -> set:
    """Chunk files of the array at ``url`` (its stored chunks; ``.partial`` files left out)."""
    out = set()
    root = os.path.join(url, sub)
    for d, _, files in os.walk(root):
        out |= {os.path.relpath(os.path.join(d, f), url) for f in files if not f.endswith(".partial")}
    return out


def _partials(url: str) -> list:
    return [os.path.join(d, f) for d, _, fs in os.walk(url) for f in fs if f.endswith(".partial")]


@pytest.fixture
def sync():
    with dask.config.set(scheduler="sync"):  # in this process: monkeypatches and spies apply
        yield


# ------------------------------------------------------------------------------ to_zarr
CHILD = """
import sys, time
import numpy as np
import dask
import dqdyn
from dqdyn import distributed as dd

url, n, c = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
model = dqdyn.load_bundled("jaco6")
rng = np.random.default_rng(3)
q = dqdyn.random_configuration(model, size=n, seed=rng)
v, a = rng.normal(size=(n, model.nv)), rng.normal(size=(n, model.nv))
real = dd.call_block

def slow(*args, **kwargs):  # (so that the parent can kill this process in the middle)
    time.sleep(0.05)
    return real(*args, **kwargs)

dd.call_block = slow
print("start", flush=True)
with dask.config.set(scheduler="sync"):
    dd.to_zarr(dqdyn.rnea, model, q, v, a, url=url, chunks=c)
print("finished", flush=True)
"""


def test_to_zarr_killed_mid_write_is_flagged_and_resumes_bit_equal(model, tmp_path, sync):
    """A process killed (SIGKILL) after 25 of 62 chunks: the store is flagged incomplete (a
    reader refuses it, naming the missing chunks); the same call again computes only the chunks
    not marked done, and the store then equals an uninterrupted run's bit for bit."""
    n, c, nchunks = 62 * 40, 40, 62
    url = str(tmp_path / "tau.zarr")
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([SRC, os.environ.get("PYTHONPATH", "")])}
    p = subprocess.Popen([sys.executable, str(script), url, str(n), str(c)], env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 240  # (imports and, on a cold cache, compilation)
        while len(_chunk_files(url)) < 25 and p.poll() is None and time.monotonic() < deadline:
            time.sleep(0.005)
        p.send_signal(signal.SIGKILL)
        out, err = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
    assert p.returncode == -signal.SIGKILL, (out, err)
    assert "finished" not in out
    written = len(_chunk_files(url))
    assert 25 <= written < nchunks
    # a reader refuses it and says what is missing and how to resume
    with pytest.raises(IncompleteStoreError, match=r"chunks? .*missing.*to_zarr") as e:
        dd.open_zarr(url)
    marked = len(_chunk_files(url, os.path.join("_done", "c")))  # (the markers' own chunk files)
    assert 24 <= marked <= written and f"{nchunks - marked} of {nchunks} chunks" in str(e.value)
    calls = []
    real = dd.call_block
    q, v, a = _inputs(model, n)

    def spy(name, mdl, kwargs, *blocks, **kw):
        calls.append(len(blocks[0]))
        return real(name, mdl, kwargs, *blocks, **kw)

    dd.call_block = spy
    try:
        z = dd.to_zarr(dqdyn.rnea, model, q, v, a, url=url, chunks=c)  # resumes: no overwrite
    finally:
        dd.call_block = real
    assert len(calls) == nchunks - marked  # only the chunks not marked done
    ref = dd.to_zarr(dqdyn.rnea, model, q, v, a, url=str(tmp_path / "ref.zarr"), chunks=c)
    assert np.array_equal(z[:], ref[:]) and np.array_equal(z[:], dqdyn.rnea(model, q, v, a))
    assert np.array_equal(dd.open_zarr(url)[:], ref[:])
    assert not _partials(url)
    # a complete store: the same call again computes nothing and returns it
    calls.clear()
    dd.call_block = spy
    try:
        dd.to_zarr(dqdyn.rnea, model, q, v, a, url=url, chunks=c)
    finally:
        dd.call_block = real
    assert calls == []
    # other inputs into it: refused (no silent mix of two computations)
    with pytest.raises(ShapeError, match="overwrite=True"):
        dd.to_zarr(dqdyn.rnea, model, q, v, 2 * a, url=url, chunks=c)


def test_an_error_on_a_nan_row_leaves_a_store_flagged_incomplete(model, tmp_path, sync):
    q, v, a = _inputs(model, 400)
    q = q.copy()
    q[250, 0] = np.nan  # in chunk 2 (chunks of 100)
    url = str(tmp_path / "nan.zarr")
    with pytest.raises(NonFiniteError, match="q"):
        dd.to_zarr(dqdyn.rnea, model, q, v, a, url=url, component="tau", chunks=100)
    with pytest.raises(IncompleteStoreError, match=r"of 4 chunks .*missing") as e:
        dd.open_zarr(url, component="tau")  # (chunk 2 raised; others may not have run)
    assert dd.open_zarr(url, component="tau", allow_incomplete=True).shape == (400, model.nv)
    assert "tau" in str(e.value)
    # the part written is kept: fixed inputs are another computation, replaced on request
    q[250, 0] = 0.0
    with pytest.raises(ShapeError, match="overwrite=True"):
        dd.to_zarr(dqdyn.rnea, model, q, v, a, url=url, component="tau", chunks=100)
    z = dd.to_zarr(dqdyn.rnea, model, q, v, a, url=url, component="tau", chunks=100, overwrite=True)
    assert np.array_equal(z[:], dqdyn.rnea(model, q, v, a))
    # the group of a function with several outputs is flagged and checked the same way
    g = dd.to_zarr(dqdyn.rnea_derivatives, model, q, v, a, url=url, component="d", chunks=100)
    assert set(dd.open_zarr(url, component="d").array_keys()) >= {"dtau_dq", "dtau_dv", "dtau_da"}
    for part, ref in zip(("dtau_dq", "dtau_dv", "dtau_da"), dqdyn.rnea_derivatives(model, q, v, a)):
        assert np.array_equal(g[part][:], ref)
    xs = dd.from_zarr(url, component="d")
    assert np.array_equal(xs["dtau_dv"].compute(), g["dtau_dv"][:])


def _input_store(tmp_path, x, name, chunk=100):
    path = str(tmp_path / f"{name}.zarr")
    zarr.create_array(path, shape=x.shape, chunks=(chunk, x.shape[1]), dtype="f8")[:] = x
    return path


def test_a_deleted_input_chunk_is_an_error_naming_it(model, tmp_path, sync):
    """Zarr reads an absent chunk as its fill value (0.0): a deleted chunk of an input must stop
    the computation and be named, not be computed on zeros."""
    q, v, a = _inputs(model, 500)
    qp = _input_store(tmp_path, q, "q")
    os.remove(os.path.join(qp, "c", "3", "0"))
    Q = da.from_zarr(qp)
    for run in (lambda: dd.apply(dqdyn.rnea, model, Q, v, a).compute(),
                lambda: dd.to_zarr(dqdyn.rnea, model, Q, v, a, url=str(tmp_path / "o.zarr"))):
        with pytest.raises(StoreError, match=r"chunk \(3, 0\).*q\.zarr.*missing") as e:
            run()
        assert "rows 300:400" in str(e.value)
    with pytest.raises(IncompleteStoreError):  # (and its output is not taken for complete)
        dd.open_zarr(str(tmp_path / "o.zarr"))


def test_a_truncated_input_chunk_is_an_error_naming_it(model, tmp_path, sync):
    q, v, a = _inputs(model, 500)
    vp = _input_store(tmp_path, v, "v")
    f = os.path.join(vp, "c", "2", "0")
    data = open(f, "rb").read()
    with open(f, "wb") as fh:
        fh.write(data[: len(data) // 2])
    with pytest.raises(StoreError, match=r"chunk \(2, 0\).*v\.zarr.*could not be read"):
        dd.apply(dqdyn.rnea, model, q, da.from_zarr(vp), a).compute()


def test_a_full_disk_in_to_zarr_names_the_store_and_resumes(model, tmp_path, sync, monkeypatch):
    """The write of a chunk fails with ENOSPC (as a full disk makes it): a dqdyn error naming
    the store and saying it can be resumed; after space is freed, the same call resumes to the
    uninterrupted result."""
    from zarr.storage import LocalStore

    q, v, a = _inputs(model, 600)
    url = str(tmp_path / "full.zarr")
    real, writes = LocalStore.set, []

    async def full_disk(self, key, value):
        if "/c/" in f"/{key}" and not str(self.root).rstrip("/").endswith("_done"):
            writes.append(key)
            if len(writes) > 3:
                raise OSError(errno.ENOSPC, "No space left on device", key)
        return await real(self, key, value)

    monkeypatch.setattr(LocalStore, "set", full_disk)
    with pytest.raises(StoreError, match=r"full\.zarr.*No space left.*resume") as e:
        dd.to_zarr(dqdyn.rnea, model, q, v, a, url=url, chunks=100)
    assert isinstance(e.value, OSError)
    monkeypatch.setattr(LocalStore, "set", real)
    with pytest.raises(IncompleteStoreError):
        dd.open_zarr(url)
    z = dd.to_zarr(dqdyn.rnea, model, q, v, a, url=url, chunks=100)
    assert np.array_equal(z[:], dqdyn.rnea(model, q, v, a))


# ------------------------------------------------------------------------------ sweeps
def _spec(model, **kw):
    kw = {"states": 600, "chunk": 200, "quantities": "tau", "models": 2,
          "perturbation": sw.Perturbation(mass=0.1), **kw}
    return sw.make_spec(model, **kw)


def _arrays(path):
    g = zarr.open_group(path, mode="r")
    return {k: g[k][:] for k in ("q", "v", "a", "tau", "params", "_done")}


class _Killed(BaseException):
    """Stands for SIGKILL inside this process (nothing after it runs)."""


def test_a_sweep_killed_while_creating_its_store_resumes_without_overwrite(model, tmp_path, monkeypatch):
    path = str(tmp_path / "s.zarr")
    made = []
    real = zarr.Group.create_array

    def dies(self, *args, **kwargs):
        made.append(args[0] if args else kwargs.get("name"))
        if len(made) == 3:
            # a kill in the middle of writing a chunk leaves Zarr's temporary file behind
            open(os.path.join(path, "q", "zarr.json.0123abcd.partial"), "wb").close()
            raise _Killed
        return real(self, *args, **kwargs)

    monkeypatch.setattr(zarr.Group, "create_array", dies)
    with pytest.raises(_Killed):
        sw.run_sweep(path, model, _spec(model))
    monkeypatch.setattr(zarr.Group, "create_array", real)
    assert _partials(path)
    with pytest.raises(IncompleteStoreError, match="run_sweep|dqdyn sweep"):
        sw.open_dataset(path)
    r = sw.run_sweep(path, model, _spec(model))  # no overwrite: an unfinished creation is redone
    assert r["done"] == r["total"] == 6
    ref = str(tmp_path / "ref.zarr")
    sw.run_sweep(ref, model, _spec(model))
    a, b = _arrays(path), _arrays(ref)
    for k in a:
        assert np.array_equal(a[k], b[k]), k
    assert not _partials(path)
    # a store that is not a sweep at all is still refused
    other = str(tmp_path / "other.zarr")
    zarr.open_group(other, mode="w").create_array("x", shape=(3,), dtype="f8")
    with pytest.raises(sw.SweepMismatchError, match="not a dqdyn sweep"):
        sw.run_sweep(other, model, _spec(model))


def test_an_unfinished_sweep_is_refused_by_its_reader(model, tmp_path):
    path = str(tmp_path / "u.zarr")
    r = sw.run_sweep(path, model, _spec(model), max_chunks=2)
    assert r["done"] == 2
    with pytest.raises(IncompleteStoreError, match=r"4 of 6 .*\(model 1, chunk 0\)"):
        sw.open_dataset(path)
    g, spec = sw.open_dataset(path, allow_incomplete=True)
    assert spec.states == 600 and not g.attrs["dqdyn_complete"]
    sw.run_sweep(path, model, _spec(model))
    g, spec = sw.open_dataset(path)
    assert g.attrs["dqdyn_complete"] is True


def test_the_sweep_store_describes_its_model(tmp_path):
    """The store carries the model's name, the sha256 of its file, its joint names and the
    layout and units of q and v (read back against the model and the file itself)."""
    import hashlib

    from dqdyn.cli import main
    from dqdyn.parsers.urdf import bundled

    path = str(tmp_path / "d.zarr")
    assert main(["sweep", "--bundled", "two_link_arm", "--states", "50", "--chunk", "25",
                 "--workers", "0", "--no-progress", "--out", path]) == 0
    g, spec = sw.open_dataset(path)
    d = g.attrs["dqdyn_model"]
    m = dqdyn.load_bundled("two_link_arm")
    src = bundled("two_link_arm")
    assert d["name"] == m.name and d["joint_names"] == list(m.joint_names)
    assert d["sha256"] == hashlib.sha256(open(src, "rb").read()).hexdigest()
    assert len(d["q_layout"]) == m.nq and len(d["v_layout"]) == m.nv
    assert d["units"]["q"] and d["units"]["tau"]


# ------------------------------------------------------------------------------ the command line
def _cli(args, timeout=55):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([SRC, os.environ.get("PYTHONPATH", "")])}
    return subprocess.run([sys.executable, "-m", "dqdyn.cli", *args], env=env, capture_output=True,
                          text=True, timeout=timeout)


def _one_error_line(err: str) -> str:
    lines = [ln for ln in err.strip().splitlines() if ln.strip() and "warning" not in ln.lower()]
    assert len(lines) == 1 and lines[0].startswith("dqdyn: error: "), err
    return lines[0]


def test_cli_sweep_without_workers_stops_with_one_line(tmp_path):
    """A scheduler without any worker: the sweep stops after --no-workers-timeout seconds with
    one line saying so and the command that resumes it (instead of waiting for ever)."""
    from distributed import LocalCluster

    out = str(tmp_path / "n.zarr")
    with LocalCluster(n_workers=0, processes=False, protocol="tcp://", dashboard_address=None) as cluster:
        try:
            r = _cli(["sweep", "--bundled", "two_link_arm", "--states", "100", "--chunk", "50",
                      "--no-progress", "--out", out, "--scheduler", cluster.scheduler_address,
                      "--no-workers-timeout", "3"])
        except subprocess.TimeoutExpired:
            pytest.fail("dqdyn sweep waited for workers that never came")
    assert r.returncode != 0
    line = _one_error_line(r.stderr)
    assert "no workers" in line and "3 s" in line
    assert "dqdyn sweep" in line and "--out " + out in line and "--states 100" in line


def test_cli_sweep_whose_workers_keep_dying_stops_with_one_line(tmp_path):
    """Workers killed (SIGKILL) while they run the sweep's tasks, with Dask's retries used up:
    one line naming what happened and the command that resumes it, a nonzero exit status, and
    the chunks finished before are kept."""
    from distributed import Client, LocalCluster

    out = str(tmp_path / "k.zarr")
    with dask.config.set({"distributed.scheduler.allowed-failures": 0}):
        cluster = LocalCluster(n_workers=1, processes=True, threads_per_worker=1,
                               dashboard_address=None)
    client = Client(cluster, set_as_default=False)
    stop = threading.Event()

    def killer():  # kill the worker again and again once the sweep's store is made
        while not stop.is_set():
            if os.path.exists(os.path.join(out, "_done", "zarr.json")):
                try:
                    for pid in client.run(os.getpid, wait=True).values():
                        os.kill(pid, signal.SIGKILL)
                except Exception:  # noqa: BLE001 - a worker in the middle of its restart
                    pass
            stop.wait(0.2)

    t = threading.Thread(target=killer, daemon=True)
    t.start()
    try:
        r = _cli(["sweep", "--bundled", "jaco6", "--states", "20000", "--chunk", "500",
                  "--quantities", "tau,M,dtau_dq", "--no-progress", "--out", out,
                  "--scheduler", cluster.scheduler_address])
    except subprocess.TimeoutExpired:
        pytest.fail("dqdyn sweep did not stop")
    finally:
        stop.set()
        t.join()
        client.close()
        cluster.close()
    assert r.returncode != 0
    line = _one_error_line(r.stderr)
    assert "died" in line and "dqdyn sweep" in line and "--out " + out in line
    g = zarr.open_group(out, mode="r")
    assert g["_done"][:].sum() < g["_done"].size and "dqdyn_sweep" in g.attrs  # kept to resume


def test_cli_sweep_into_an_unwritable_place_names_it_before_any_cluster(tmp_path, capsys, monkeypatch):
    from dqdyn.cli import main

    blocker = tmp_path / "a_file"
    blocker.write_text("")
    out = str(blocker / "d.zarr")  # (a directory cannot be made inside a file, even as root)

    def no_cluster(*a, **k):
        raise AssertionError("the cluster was started before the output was checked")

    monkeypatch.setattr(dd, "local_cluster", no_cluster)
    rc = main(["sweep", "--bundled", "two_link_arm", "--states", "10", "--no-progress",
               "--out", out, "--workers", "1"])
    err = capsys.readouterr().err
    assert rc != 0 and "--out" in err and out in err
