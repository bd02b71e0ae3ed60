"""Batched throughput: dqdyn's one-call batches against Pinocchio's best batched route.

    python benchmarks/bench_batch.py [--quick]

Panda (9 DoF): ``rnea`` and ``aba`` on batches of 10³, 10⁵ and 10⁶ states (10⁶ skipped with
``--quick``), in states per second.  Pinocchio's routes: ``rneaInParallel`` / ``abaInParallel``
with 1 thread and with all cores (best kept), and a Python loop of single calls (on at most 2·10⁴
states).  dqdyn runs each batch as one compiled ``prange`` call over all cores.
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests"))

import dqdyn  # noqa: E402

from harness import best_time as _best  # noqa: E402
from harness import print_table, write_results


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args(argv)
    import pinocchio as pin

    from pinconv import ROBOTS, erd, q_to_pin

    warnings.simplefilter("ignore")
    rel, _ = ROBOTS["panda"]
    m = dqdyn.load_urdf(erd(rel), mimic="independent")
    pm = pin.buildModelFromUrdf(erd(rel))
    pd = pm.createData()
    ncpu = os.cpu_count() or 1
    pool = pin.ModelPool(pm, ncpu)
    rows = []
    sizes = (1_000, 100_000) if args.quick else (1_000, 100_000, 1_000_000)
    rng = np.random.default_rng(0)
    for N in sizes:
        Q = dqdyn.random_configuration(m, size=N, seed=1)
        V, A = rng.normal(size=(2, N, m.nv))
        QP = np.asfortranarray(np.array([q_to_pin(m, pm, x) for x in Q[: min(N, 20_000)]]).T)
        if N > QP.shape[1]:
            QP = np.asfortranarray(np.tile(QP, (1, N // QP.shape[1] + 1))[:, :N])
        VP, AP = np.asfortranarray(V.T), np.asfortranarray(A.T)
        out = np.zeros((m.nv, N), order="F")
        for fn, ours, par, single in (
            ("rnea", lambda: dqdyn.rnea(m, Q, V, A),
             lambda k: pin.rneaInParallel(k, pool, QP, VP, AP, out), pin.rnea),
            ("aba", lambda: dqdyn.aba(m, Q, V, A),
             lambda k: pin.abaInParallel(k, pool, QP, VP, AP, out), pin.aba),
        ):
            t_ours = _best(ours)
            best, how = np.inf, ""
            for k in sorted({1, ncpu}):
                t = _best(lambda: par(k))
                if t < best:
                    best, how = t, f"{fn}InParallel({k})"
            n_loop = min(N, 20_000)

            def loop():
                for j in range(n_loop):
                    single(pm, pd, QP[:, j], VP[:, j], AP[:, j])

            t = _best(loop, repeat=1) * N / n_loop
            if t < best:
                best, how = t, "Python loop"
            rows.append({"function": fn, "states": N, "dqdyn_states_per_s": N / t_ours,
                         "pin_states_per_s": N / best, "pin_route": how,
                         "speedup": best / t_ours})
    print_table(f"batched throughput, Panda, {ncpu} cores (speedup > 1: dqdyn faster)", rows)
    js, md = write_results("batch", rows, {"quick": args.quick, "threads": dqdyn.get_num_threads()})
    print(f"written {js} and {md}")
    return rows


if __name__ == "__main__":
    main()
