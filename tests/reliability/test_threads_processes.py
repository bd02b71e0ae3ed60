"""Threads and processes: batched calls from several Python threads, and a fork-based
process pool after a batched call in the parent, under numba's workqueue layer and under the
layer dqdyn selects (forks under every layer, with batches that start the parallel layer:
test_fork_layers.py).  Each scenario runs in a subprocess, so a crash of the interpreter (numba's
workqueue aborts on concurrent access; GNU OpenMP children die after fork) fails the test
instead of killing pytest.  Oracle: the results of the same calls made serially in the parent
process of the scenario (bit-identical)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

import dqdyn

SRC = os.path.dirname(os.path.dirname(os.path.abspath(dqdyn.__file__)))

PRELUDE = """
import numpy as np, dqdyn
m = dqdyn.serial_chain(7)
rng = np.random.default_rng(0)
Q = rng.standard_normal((64, m.nq)); V = rng.standard_normal((64, m.nv))
ref = dqdyn.rnea(m, Q, V, V)
"""

THREADS = PRELUDE + """
import threading
errors = []
def work():
    try:
        for _ in range(30):
            assert np.array_equal(dqdyn.rnea(m, Q, V, V), ref)
            dqdyn.aba(m, list(Q[0]), list(V[0]), list(V[0]))  # one state given as lists
    except BaseException as e:  # reported, not swallowed
        errors.append(repr(e))
threads = [threading.Thread(target=work) for _ in range(4)]
for t in threads: t.start()
for t in threads: t.join()
assert not errors, errors
print("OK", dqdyn.config.threading_layer())
"""

FORK = PRELUDE + """
import concurrent.futures as cf, multiprocessing as mp
def work(i):
    return dqdyn.rnea(m, Q[i::8], V[i::8], V[i::8])
if __name__ == "__main__":
    ctx = mp.get_context("fork")
    with cf.ProcessPoolExecutor(2, mp_context=ctx) as ex:
        parts = list(ex.map(work, range(8)))
    for i, p in enumerate(parts):
        assert np.array_equal(p, ref[i::8]), i
    print("OK", dqdyn.config.threading_layer())
"""


def run(script: str, layer: str | None) -> str:
    env = dict(os.environ)
    env["PYTHONPATH"] = SRC + os.pathsep + env.get("PYTHONPATH", "")
    env.pop("NUMBA_THREADING_LAYER", None)
    if layer is not None:
        env["NUMBA_THREADING_LAYER"] = layer
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(script)], env=env,
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0 and "OK" in r.stdout, (
        f"layer {layer!r}: exit {r.returncode}\n{r.stdout[-2000:]}\n{r.stderr[-3000:]}")
    return r.stdout.split()[-1]


@pytest.mark.parametrize("layer", [None, "workqueue"], ids=["dqdyn-default", "workqueue"])
def test_four_threads_batched_rnea(layer):
    used = run(THREADS, layer)
    if layer == "workqueue":
        assert used == "workqueue"
    else:  # dqdyn's choice: TBB ("safe") when the tbb wheel is there, else the guarded workqueue
        assert used in ("tbb", "workqueue")


@pytest.mark.skipif(sys.platform == "win32", reason="no fork on Windows")
@pytest.mark.parametrize("layer", [None, "workqueue"], ids=["dqdyn-default", "workqueue"])
def test_fork_pool_after_batched_call(layer):
    run(FORK, layer)


def test_user_choice_respected():
    script = "import dqdyn; print('OK', dqdyn.config.threading_layer())"
    assert run(script, "workqueue") == "workqueue"


def test_default_is_tbb_when_installed():
    """dqdyn depends on the tbb wheel (pyproject.toml) where one exists: the default layer is
    then TBB, found even when pip put libtbb in a virtual environment's lib/."""
    pytest.importorskip("importlib.metadata")
    from importlib.metadata import PackageNotFoundError, distribution
    try:
        distribution("tbb")
    except PackageNotFoundError:
        pytest.skip("the tbb wheel is not installed")
    script = "import dqdyn; print('OK', dqdyn.config.threading_layer())"
    assert run(script, None) == "tbb"
