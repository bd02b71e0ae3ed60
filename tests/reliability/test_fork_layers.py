"""fork() under every threading layer dqdyn offers (``tbb``, ``workqueue``, ``omp`` and dqdyn's
default), with batches large enough to start the parallel layer (``N · nb1`` above
:data:`dqdyn._engine.batching.SERIAL_WORK`; :func:`dqdyn.config.parallel_regions` counts the
regions that ran).  Children are forked after a batch and while another thread of the parent is
inside one; each child runs a batch itself.

Each scenario runs in its own interpreter (a hard timeout: a deadlock fails the test instead of
hanging it); the scenario's parent gives each child a deadline, kills the ones that miss it and
reports them.  Oracle: the parent's own result of the same batch, bit for bit.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

import dqdyn

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this platform")

SRC = os.path.dirname(os.path.dirname(os.path.abspath(dqdyn.__file__)))

PRELUDE = """
import os, sys, threading, time
import numpy as np, numba, dqdyn
from dqdyn._engine.batching import SERIAL_WORK
m = dqdyn.serial_chain(7)
N = 2 * SERIAL_WORK // (m.nbodies + 1) + 64   # twice the work the serial path takes
assert N * (m.nbodies + 1) > SERIAL_WORK
rng = np.random.default_rng(0)
Q = rng.standard_normal((N, m.nq)); V = rng.standard_normal((N, m.nv))
r0 = dqdyn.config.parallel_regions()
ref = dqdyn.rnea(m, Q, V, V)
assert dqdyn.config.parallel_regions() > r0, "the batch did not start the parallel layer"
LAYER = numba.threading_layer()

def child():
    try:
        r1 = dqdyn.config.parallel_regions()
        out = dqdyn.rnea(m, Q, V, V)
        code = 0 if out.tobytes() == ref.tobytes() else 3
        if dqdyn.config.parallel_regions() == r1:
            code = 5  # the child's batch did not go through the parallel path
    except BaseException:
        import traceback; traceback.print_exc(); code = 4
    os._exit(code)

def fork_children(n, between=None):
    pids = []
    for _ in range(n):
        if between is not None:
            between()
        pid = os.fork()
        if pid == 0:
            child()
        pids.append(pid)
    return pids

def reap(pids, deadline_s=120.0):
    t0, codes = time.monotonic(), {}
    while len(codes) < len(pids) and time.monotonic() - t0 < deadline_s:
        for p in pids:
            if p not in codes:
                w, st = os.waitpid(p, os.WNOHANG)
                if w:
                    codes[p] = os.waitstatus_to_exitcode(st)
        time.sleep(0.02)
    hung = [p for p in pids if p not in codes]
    for p in hung:
        os.kill(p, 9); os.waitpid(p, 0)
    return [codes[p] for p in pids if p in codes], len(hung)
"""

AFTER = PRELUDE + """
codes, hung = reap(fork_children(12))
assert hung == 0 and codes == [0] * 12, (LAYER, codes, hung)
# the parent still runs parallel batches after its children
assert dqdyn.rnea(m, Q, V, V).tobytes() == ref.tobytes()
print("OK", LAYER)
"""

DURING = PRELUDE + """
stop = threading.Event()
def batches():
    while not stop.is_set():
        dqdyn.rnea(m, Q, V, V)
worker = threading.Thread(target=batches); worker.start()
r1 = dqdyn.config.parallel_regions()
try:
    pids = fork_children(12, between=lambda: time.sleep(0.005))
finally:
    stop.set(); worker.join()
assert dqdyn.config.parallel_regions() > r1  # the worker was running batches meanwhile
codes, hung = reap(pids)
assert hung == 0 and codes == [0] * 12, (LAYER, codes, hung)
print("OK", LAYER)
"""

POOL = PRELUDE + """
import concurrent.futures as cf, multiprocessing as mp
def work(i):
    return dqdyn.rnea(m, Q, V, V), dqdyn.config.parallel_regions()
if __name__ == "__main__":
    with cf.ProcessPoolExecutor(3, mp_context=mp.get_context("fork")) as ex:
        futs = [ex.submit(work, i) for i in range(6)]
        got = [f.result(timeout=120) for f in futs]
    for out, regions in got:
        assert out.tobytes() == ref.tobytes()
        assert regions > 0
    print("OK", LAYER)
"""


def _tbb() -> bool:
    from importlib.metadata import PackageNotFoundError, distribution

    try:
        distribution("tbb")
        return True
    except PackageNotFoundError:
        return False


def _layer_available(layer: str) -> bool:
    """Can numba start ``layer`` here (a fresh interpreter: a layer starts once per process)?"""
    script = "import numba, dqdyn; print('OK', numba.threading_layer())"
    r = subprocess.run([sys.executable, "-c", script], env=_env(layer), capture_output=True,
                       text=True, timeout=300)
    return r.returncode == 0 and r.stdout.split()[-1:] == [layer]


def _env(layer):
    env = dict(os.environ)
    env["PYTHONPATH"] = SRC + os.pathsep + env.get("PYTHONPATH", "")
    env.pop("NUMBA_THREADING_LAYER", None)
    env["NUMBA_NUM_THREADS"] = env.get("NUMBA_NUM_THREADS", "") or str(max(2, os.cpu_count() or 2))
    if layer is not None:
        env["NUMBA_THREADING_LAYER"] = layer
    return env


LAYERS = [None, "tbb", "workqueue", "omp"]
IDS = ["dqdyn-default", "tbb", "workqueue", "omp"]


def _run(script: str, layer):
    if layer == "tbb" and not _tbb():
        pytest.skip("the tbb wheel is not installed")
    if layer == "omp" and not _layer_available("omp"):
        pytest.skip("numba has no OpenMP layer here")
    try:
        r = subprocess.run([sys.executable, "-c", textwrap.dedent(script)], env=_env(layer),
                           capture_output=True, text=True, timeout=900)
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"layer {layer!r}: the scenario hung (killed after {e.timeout} s)\n"
                    f"{(e.stderr or b'')[-3000:]!r}")
    assert r.returncode == 0 and "OK" in r.stdout, (
        f"layer {layer!r}: exit {r.returncode}\n{r.stdout[-2000:]}\n{r.stderr[-3000:]}")
    used = r.stdout.split()[-1]
    if layer is not None:
        assert used == layer
    return used


@pytest.mark.parametrize("layer", LAYERS, ids=IDS)
def test_fork_children_after_a_parallel_batch(layer):
    _run(AFTER, layer)


@pytest.mark.parametrize("layer", LAYERS, ids=IDS)
def test_fork_children_while_a_thread_runs_parallel_batches(layer):
    _run(DURING, layer)


@pytest.mark.parametrize("layer", LAYERS, ids=IDS)
def test_fork_pool_after_a_parallel_batch(layer):
    _run(POOL, layer)
