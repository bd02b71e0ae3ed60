"""Small batches: one batched call of N states against a loop of N single calls (dqdyn), and
against a loop of Pinocchio calls, for N = 1 … 100 (Panda from example-robot-data, fingers
independent).  Each pair is interleaved (harness.interleaved); median and [min–max] over
``--repeat`` runs of the ratio batch / loop.

    python benchmarks/bench_small_batch.py [--repeat 3] [--robot panda]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
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
    a = p.parse_args(argv)
    rel, root = ROBOTS[a.robot]
    path = erd(rel)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = dqdyn.load_urdf(path, root_joint=root, mimic="independent")
    pm = pin_from_urdf(path, root) if root else pin.buildModelFromUrdf(path)
    pd = pm.createData()
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


if __name__ == "__main__":
    main()
