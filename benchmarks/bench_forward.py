"""Forward dynamics and derivatives: dqdyn against Pinocchio, in one run.

    python benchmarks/bench_forward.py [--quick]

Per call (interleaved A/B, median µs) on Panda (9 DoF, finger joints independent as in
Pinocchio's default) and UR5: ``aba``, ``mass_matrix_inverse`` (vs ``computeMinverse``),
``rnea_derivatives`` (vs ``computeRNEADerivatives``), ``aba_derivatives`` (vs
``computeABADerivatives``).  Batched: ``aba`` on 10⁵ states (one call) against
``pin.abaInParallel`` (all cores) and a Python loop of ``pin.aba``.  Scaling: ``aba`` on n-link
chains (n = 7 … 100).  Panda with its mimic finger (the default load): ``aba`` against
Pinocchio's route for mimic joints, ``crba`` + ``nonLinearEffects`` + a dense solve (its ``aba``
refuses them).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests"))

import dqdyn  # noqa: E402
from dqdyn.dynamics.derivatives import aba_derivatives, rnea_derivatives  # noqa: E402
from dqdyn.dynamics.forward import aba, mass_matrix_inverse  # noqa: E402

from harness import best_time, interleaved, print_table, write_results  # noqa: E402


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args(argv)
    import pinocchio as pin

    from dqdyn.parsers.urdf import load_urdf

    from pinconv import ROBOTS, erd, pin_from_model, q_to_pin, v_transform

    warnings.simplefilter("ignore")
    rounds = 5 if args.quick else 15
    rows = []
    for name in ("panda", "ur5"):
        rel, root = ROBOTS[name]
        path = erd(rel)
        m = load_urdf(path, root_joint=root, mimic="independent")
        pm = pin.buildModelFromUrdf(path)
        pd = pm.createData()
        rng = np.random.default_rng(0)
        q = dqdyn.random_configuration(m, seed=rng)
        v, tau = rng.normal(size=(2, m.nv))
        qp, T = q_to_pin(m, pm, q), v_transform(m, pm, q)
        vp, taup = T @ v, np.linalg.solve(T.T, tau)
        cases = [
            ("aba", lambda: aba(m, q, v, tau), lambda: pin.aba(pm, pd, qp, vp, taup)),
            ("mass_matrix_inverse", lambda: mass_matrix_inverse(m, q), lambda: pin.computeMinverse(pm, pd, qp)),
            ("rnea_derivatives", lambda: rnea_derivatives(m, q, v, tau),
             lambda: pin.computeRNEADerivatives(pm, pd, qp, vp, taup)),
            ("aba_derivatives", lambda: aba_derivatives(m, q, v, tau),
             lambda: pin.computeABADerivatives(pm, pd, qp, vp, taup)),
        ]
        for label, a, b in cases:
            ta, tb = interleaved(a, b, rounds=rounds)
            rows.append({"robot": f"{name} ({m.nv} dof)", "function": label, "dqdyn_us": ta, "pin_us": tb,
                         "ratio": ta / tb})
        # batched
        N = 10_000 if args.quick else 100_000
        Q = dqdyn.random_configuration(m, size=N, seed=1)
        V, TAU = rng.normal(size=(2, N, m.nv))
        QP = np.array([q_to_pin(m, pm, x) for x in Q]).T.copy()
        VP, TP = V.T.copy(), TAU.T.copy()  # T is the identity for these fixed-base arms
        aba(m, Q[:10], V[:10], TAU[:10])
        t_ours = best_time(lambda: aba(m, Q, V, TAU)) / N
        best_pin, how = np.inf, ""
        if hasattr(pin, "abaInParallel") and hasattr(pin, "ModelPool"):
            pool = pin.ModelPool(pm, os.cpu_count() or 1)
            out = np.zeros((m.nv, N), order="F")
            for nthreads in (1, os.cpu_count() or 1):
                t = best_time(lambda: pin.abaInParallel(nthreads, pool, QP, VP, TP, out)) / N
                if t < best_pin:
                    best_pin, how = t, f"abaInParallel({nthreads})"
        n_loop = min(N, 20_000)
        t0 = time.perf_counter()
        for k in range(n_loop):
            pin.aba(pm, pd, QP[:, k], VP[:, k], TP[:, k])
        t = (time.perf_counter() - t0) / n_loop
        if t < best_pin:
            best_pin, how = t, "python loop of pin.aba"
        rows.append({"robot": f"{name} ({m.nv} dof)", "function": f"aba batch {N} (pin: {how})",
                     "dqdyn_us": t_ours * 1e6, "pin_us": best_pin * 1e6, "ratio": t_ours / best_pin})
    # Panda as it loads by default: finger 2 mimics finger 1.  Pinocchio's aba (and its
    # Cholesky) refuse mimic joints; its route is crba + nonLinearEffects + a dense solve.
    rel, root = ROBOTS["panda"]
    path = erd(rel)
    m = load_urdf(path, root_joint=root)
    pm = pin.buildModelFromUrdf(path, mimic=True)
    pd = pm.createData()
    rng = np.random.default_rng(3)
    q = dqdyn.random_configuration(m, seed=rng)
    v, tau = rng.normal(size=(2, m.nv))
    qp = q_to_pin(m, pm, q)

    def pin_mimic_fd():
        M = pin.crba(pm, pd, qp)
        M = np.triu(M) + np.triu(M, 1).T
        return np.linalg.solve(M, tau - pin.nonLinearEffects(pm, pd, qp, v))

    assert np.allclose(aba(m, q, v, tau), pin_mimic_fd(), atol=1e-8)  # (the same q̈)
    ta, tb = interleaved(lambda: aba(m, q, v, tau), pin_mimic_fd, rounds=rounds)
    rows.append({"robot": f"panda mimic ({m.nv} dof)", "function": "aba (pin: crba + nle + solve)",
                 "dqdyn_us": ta, "pin_us": tb, "ratio": ta / tb})
    # scaling in n
    for n in (7, 25, 50, 100):
        m = dqdyn.serial_chain(n)
        pm, _ = pin_from_model(m)
        pd = pm.createData()
        q = dqdyn.random_configuration(m, seed=0)
        v = np.ones(n)
        qp = q_to_pin(m, pm, q)
        ta, tb = interleaved(lambda: aba(m, q, v, v), lambda: pin.aba(pm, pd, qp, v, v), rounds=rounds)
        rows.append({"robot": f"chain {n}", "function": "aba", "dqdyn_us": ta, "pin_us": tb, "ratio": ta / tb})
    print_table("forward dynamics: dqdyn vs Pinocchio (µs; ratio < 1: dqdyn faster)", rows)
    js, md = write_results("forward", rows, {"quick": args.quick})
    print(f"written {js} and {md}")
    return rows


if __name__ == "__main__":
    main()
