"""Parallel robots ([MontgomerySmith2023]): forward kinematics and Λ, per call and batched.

    python benchmarks/bench_parallel.py [--quick]

No reference library offers this (the paper's C++ code was never released; it reports "a little
under 100 µs" per Stewart forward-kinematics solve on a laptop), so the table gives dqdyn's own
times:

* Stewart 6-6 forward kinematics (Newton--Raphson on the pose, [MontgomerySmith2023, eq. (87)]) from a random
  guess within 30°: median of single ``forward_kinematics`` calls (Python wrapper included), the
  compiled kernel alone, and ``forward_kinematics_batch`` (all poses in one compiled call,
  numba ``prange``) divided by the number of poses;
* 8-cable swivel-pulley robot forward kinematics (over-constrained Newton, eqs. 88-90), guess 1%
  off, per call and batched;
* ``Λ`` (``lie_jacobian``, eqs. 74-75) and ``(ℓ, Λ, L²ℓ)`` (``evaluate``) per call and batched.

Per-call numbers are the median over rounds of the mean of many calls (``harness.per_call``);
batched numbers are the best of a few whole-batch calls.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))

from dqdyn.parallel import cable_robot_8, stewart_6_6  # noqa: E402
from dqdyn.parallel.stewart import fk_square  # noqa: E402

from harness import per_call, print_table, write_results  # noqa: E402


def _median_per_call(calls, rounds):
    """Median over ``rounds`` of the mean time (µs) of one pass over ``calls`` (a list of
    zero-argument callables, one per pose)."""
    it = iter(())

    def one():
        nonlocal it
        try:
            next(it)()
        except StopIteration:
            it = iter(calls)
            next(it)()

    one()
    return statistics.median(per_call(one, len(calls)) for _ in range(rounds)) * 1e6


def _batched(fn, n, repeat):
    fn()
    best = np.inf
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best / n * 1e6


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args(argv)
    rounds = 5 if args.quick else 15
    N = 2_000 if args.quick else 20_000
    n_single = 500 if args.quick else 2_000
    rng = np.random.default_rng(0)
    rows = []

    rob = stewart_6_6()
    T = rob.sample_poses(N, 30, 0.2, rng)
    G = rob.sample_poses(N, 30, 0.2, rng)
    ell = rob.lengths(T)
    res = rob.forward_kinematics_batch(ell, G)
    it = float(res.iterations.mean())
    out = np.empty(8)
    geom, prm = rob.geometry, rob._prm
    rows.append({"robot": "Stewart 6-6", "function": "forward_kinematics (per call)",
                 "us_per_solve": _median_per_call([lambda e=e, g=g: rob.forward_kinematics(e, g, check=False)
                                                   for e, g in zip(ell[:n_single], G[:n_single])], rounds),
                 "mean_iterations": it})
    rows.append({"robot": "Stewart 6-6", "function": "fk kernel alone (per call)",
                 "us_per_solve": _median_per_call([lambda e=e, g=g: fk_square(g, e, geom, prm, out)
                                                   for e, g in zip(ell[:n_single], G[:n_single])], rounds),
                 "mean_iterations": it})
    rows.append({"robot": "Stewart 6-6", "function": f"forward_kinematics_batch ({N} poses, one call)",
                 "us_per_solve": _batched(lambda: rob.forward_kinematics_batch(ell, G), N, 5), "mean_iterations": it})
    rows.append({"robot": "Stewart 6-6", "function": "lie_jacobian Λ (per call)",
                 "us_per_solve": _median_per_call([lambda e=e: rob.lie_jacobian(e) for e in T[:n_single]], rounds),
                 "mean_iterations": float("nan")})
    rows.append({"robot": "Stewart 6-6", "function": f"lie_jacobian Λ ({N} poses, one call)",
                 "us_per_solve": _batched(lambda: rob.lie_jacobian(T), N, 5), "mean_iterations": float("nan")})
    rows.append({"robot": "Stewart 6-6", "function": f"evaluate ℓ, Λ, L²ℓ ({N} poses, one call)",
                 "us_per_solve": _batched(lambda: rob.evaluate(T), N, 5), "mean_iterations": float("nan")})

    cab = cable_robot_8()
    Nc = N // 4
    Tc = cab.sample_poses(Nc, 20, 0.3, rng)
    Gc = cab.perturb_poses(Tc, 0.01, rng)
    ellc = cab.lengths(Tc)
    rc = cab.forward_kinematics_batch(ellc, Gc)
    itc = float(rc.iterations.mean())
    rows.append({"robot": "8-cable pulleys", "function": "forward_kinematics, guess 1% off (per call)",
                 "us_per_solve": _median_per_call([lambda e=e, g=g: cab.forward_kinematics(e, g, check=False)
                                                   for e, g in zip(ellc[:n_single], Gc[:n_single])], rounds),
                 "mean_iterations": itc})
    rows.append({"robot": "8-cable pulleys", "function": f"forward_kinematics_batch ({Nc} poses, one call)",
                 "us_per_solve": _batched(lambda: cab.forward_kinematics_batch(ellc, Gc), Nc, 5), "mean_iterations": itc})
    rows.append({"robot": "8-cable pulleys", "function": "lie_jacobian Λ (per call)",
                 "us_per_solve": _median_per_call([lambda e=e: cab.lie_jacobian(e) for e in Tc[:n_single]], rounds),
                 "mean_iterations": float("nan")})
    rows.append({"robot": "8-cable pulleys", "function": f"lie_jacobian Λ ({Nc} poses, one call)",
                 "us_per_solve": _batched(lambda: cab.lie_jacobian(Tc), Nc, 5), "mean_iterations": float("nan")})

    import numba

    title = (f"parallel robots (MontgomerySmith2023): µs per solve / evaluation (paper: <100 µs per Stewart solve, "
             f"C++); numba threads {numba.get_num_threads()}")
    print_table(title, rows)
    js, md = write_results("parallel", rows, {"quick": args.quick, "N": N, "numba_threads": numba.get_num_threads()})
    print(f"written {js} and {md}")
    return rows


if __name__ == "__main__":
    main()
