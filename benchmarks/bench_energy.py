"""Energy drift of the integrators over a long free motion: RK4 (Runge–Kutta–Munthe-Kaas) against
the implicit midpoint rule (``integrator="midpoint"``).

    python benchmarks/bench_energy.py [--robot xarm7] [--duration 100] [--dt 1e-3] [--seed 0]

No torque, no damping: the mechanical energy ``T + V`` (dqdyn.mechanical_energy) is conserved
by the exact motion.  Initial state: ``q₀`` = the neutral configuration, ``v₀ ~ N(0, 1)``
(rad/s, seeded).  Prints, per integrator, the maximum |E(t) − E(0)| over the run and over each
tenth of it (a drift grows from tenth to tenth; a bounded error does not), the final error, and
the wall time.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests"))

import dqdyn  # noqa: E402
from dqdyn.simulation.integrators import implicit_midpoint, rkmk4  # noqa: E402


def run(model, step, q, v, dt, n):
    zero = np.zeros(model.nv)

    def acc(t, q, v):
        return dqdyn.aba(model, q, v, zero), zero

    E0 = dqdyn.mechanical_energy(model, q, v)
    dE = np.empty(n + 1)
    dE[0] = 0.0
    t0 = time.perf_counter()
    for k in range(n):
        q, v = step(model, acc, k * dt, q, v, dt)[:2]
        dE[k + 1] = dqdyn.mechanical_energy(model, q, v) - E0
    return E0, dE, time.perf_counter() - t0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--robot", default="xarm7")
    ap.add_argument("--duration", type=float, default=100.0)
    ap.add_argument("--dt", type=float, default=1e-3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--integrators", default="rk4,midpoint")
    args = ap.parse_args(argv)
    from pinconv import ROBOTS, erd

    warnings.simplefilter("ignore")
    rel, root = ROBOTS[args.robot]
    m = dqdyn.load_urdf(erd(rel), root, mimic="independent")
    q0 = dqdyn.neutral(m)
    v0 = np.random.default_rng(args.seed).standard_normal(m.nv)
    n = int(round(args.duration / args.dt))
    print(f"{args.robot} (nv = {m.nv}), v0 ~ N(0, 1) seed {args.seed}, dt = {args.dt:g} s, "
          f"{args.duration:g} s = {n} steps, no torque\n")
    print("| integrator | E(0) [J] | max abs(E - E0) [J] | final E - E0 [J] | max per tenth of the run [J] | wall [s] |")
    print("|---|---|---|---|---|---|")
    steps = {"rk4": rkmk4, "midpoint": implicit_midpoint}
    for name in args.integrators.split(","):
        step = steps[name]
        E0, dE, wall = run(m, step, q0.copy(), v0.copy(), args.dt, n)
        tenths = [np.abs(c).max() for c in np.array_split(dE, 10)]
        print(f"| {name} | {E0:.4g} | {np.abs(dE).max():.2e} | {dE[-1]:+.2e} | "
              + " ".join(f"{x:.1e}" for x in tenths) + f" | {wall:.0f} |", flush=True)


if __name__ == "__main__":
    main()
