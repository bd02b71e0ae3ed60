"""Small batches: one batched call of N states against a loop of N single calls (dqdyn), and
against a loop of Pinocchio calls, for N = 1 … 100 (Panda from example-robot-data, fingers
independent).  Each pair is interleaved (harness.interleaved); median and [min–max] over
``--repeat`` runs of the ratio batch / loop.

    python benchmarks/bench_small_batch.py [--repeat 3] [--robot panda]
    python benchmarks/bench_small_batch.py --idle 0.5 [--robot anymal] [--rounds 15]

``--idle S``: the wake-up cost instead.  A batch of 10 states, ten single calls and Pinocchio's
ten calls, each timed once (wall clock, one call) right after ``S`` seconds of sleep, the three in
turn, ``--rounds`` times; then the same calls back to back (the median of 200).  Medians and
[min–max] of the rounds, µs.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "tests"))

import numpy as np  # noqa: E402
import pinocchio as pin  # noqa: E402

import dqdyn  # noqa: E402

from harness import interleaved, print_table  # noqa: E402
from pinconv import ROBOTS, erd, pin_from_urdf  # noqa: E402


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--robot", default="panda")
    p.add_argument("--sizes", default="1,2,5,10,30,100")
    p.add_argument("--idle", type=float, default=None, help="seconds of sleep before each timed call")
    p.add_argument("--rounds", type=int, default=15)
    a = p.parse_args(argv)
    rel, root = ROBOTS[a.robot]
    path = erd(rel)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = dqdyn.load_urdf(path, root_joint=root, mimic="independent")
    pm = pin_from_urdf(path, root) if root else pin.buildModelFromUrdf(path)
    pd = pm.createData()
    if a.idle is not None:
        return _after_idle(m, pm, pd, a)
    rows = []
    for N in (int(s) for s in a.sizes.split(",")):
        rng = np.random.default_rng(N)
        Q = dqdyn.random_configuration(m, size=N, seed=rng)
        V, A = rng.normal(size=(2, N, m.nv))
        Qp = np.stack([pin.randomConfiguration(pm) for _ in range(N)])
        Vp, Ap = rng.normal(size=(2, N, pm.nv))
        cases = {
            "rnea": (lambda: dqdyn.rnea(m, Q, V, A),
                     lambda: [dqdyn.rnea(m, Q[i], V[i], A[i]) for i in range(N)],
                     lambda: [pin.rnea(pm, pd, Qp[i], Vp[i], Ap[i]) for i in range(N)]),
            "aba": (lambda: dqdyn.aba(m, Q, V, A),
                    lambda: [dqdyn.aba(m, Q[i], V[i], A[i]) for i in range(N)],
                    lambda: [pin.aba(pm, pd, Qp[i], Vp[i], Ap[i]) for i in range(N)]),
            "mass_matrix": (lambda: dqdyn.mass_matrix(m, Q),
                            lambda: [dqdyn.mass_matrix(m, Q[i]) for i in range(N)],
                            lambda: [pin.crba(pm, pd, Qp[i]) for i in range(N)]),
        }
        for name, (batch, loop, ploop) in cases.items():
            r_loop, r_pin, t_batch = [], [], []
            for _ in range(a.repeat):
                tb, tl = interleaved(batch, loop, rounds=9)
                tb2, tp = interleaved(batch, ploop, rounds=9)
                r_loop.append(tb / tl)
                r_pin.append(tb2 / tp)
                t_batch.append(tb)
            rows.append({
                "N": N, "call": name, "batch µs": f"{statistics.median(t_batch):.2f}",
                "batch / dqdyn loop": f"{statistics.median(r_loop):.2f} [{min(r_loop):.2f}–{max(r_loop):.2f}]",
                "batch / Pinocchio loop": f"{statistics.median(r_pin):.2f} [{min(r_pin):.2f}–{max(r_pin):.2f}]",
            })
    print_table(f"Small batches on {a.robot} (median [min–max] of {a.repeat} interleaved runs)", rows)


def _after_idle(m, pm, pd, a) -> None:
    rng = np.random.default_rng(0)
    N = 10
    Q = dqdyn.random_configuration(m, size=N, seed=rng)
    V, A = rng.normal(size=(2, N, m.nv))
    Qp = np.stack([pin.randomConfiguration(pm) for _ in range(N)])
    Vp, Ap = rng.normal(size=(2, N, pm.nv))
    calls = {
        "dqdyn rnea, a batch of 10": lambda: dqdyn.rnea(m, Q, V, A),
        "dqdyn rnea, 10 single calls": lambda: [dqdyn.rnea(m, Q[i], V[i], A[i]) for i in range(N)],
        "Pinocchio rnea, 10 calls": lambda: [pin.rnea(pm, pd, Qp[i], Vp[i], Ap[i]) for i in range(N)],
        "dqdyn aba, a batch of 10": lambda: dqdyn.aba(m, Q, V, A),
        "dqdyn aba, 10 single calls": lambda: [dqdyn.aba(m, Q[i], V[i], A[i]) for i in range(N)],
        "Pinocchio aba, 10 calls": lambda: [pin.aba(pm, pd, Qp[i], Vp[i], Ap[i]) for i in range(N)],
    }
    after = {k: [] for k in calls}
    for f in calls.values():
        f()
    for _ in range(a.rounds):
        for k, f in calls.items():
            time.sleep(a.idle)
            t0 = time.perf_counter()
            f()
            after[k].append((time.perf_counter() - t0) * 1e6)
    rows = []
    for k, f in calls.items():
        back = []
        for _ in range(200):
            t0 = time.perf_counter()
            f()
            back.append((time.perf_counter() - t0) * 1e6)
        t = after[k]
        rows.append({"call": k, f"after {a.idle} s idle µs": f"{statistics.median(t):.1f} "
                     f"[{min(t):.1f}–{max(t):.1f}]", "back to back µs": f"{statistics.median(back):.1f}"})
    print_table(f"After idle on {a.robot} (median, min–max of {a.rounds} rounds)", rows)


if __name__ == "__main__":
    main()
