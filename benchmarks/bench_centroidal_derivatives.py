"""Derivatives of the centroidal dynamics against Pinocchio, per call and for a batch.

    python benchmarks/bench_centroidal_derivatives.py [--repeat 3] [--rounds 7] [--batch 256]

``dqdyn.centroidal_dynamics_derivatives`` against ``pinocchio.computeCentroidalDynamicsDerivatives``
interleaved A/B in one process (benchmarks/harness.interleaved; medians) on Solo-12, ANYmal and
Talos (free base) and UR5 (fixed base).  Each ratio dqdyn / Pinocchio is measured ``--repeat``
times: the median and [min–max] are printed.  Also timed: a batch of ``--batch`` states in one
dqdyn call (the thread pool) against a Python loop of Pinocchio calls.  ``--contacts``
adds ``dqdyn.contact_dynamics_derivatives`` against ``constraintDynamics`` followed by
``computeConstraintDynamicsDerivatives`` (both solve the contact dynamics first) on Solo-12 and
ANYmal (four point feet) and Talos (two welded soles), per call and for a batch of ``--batch``
states (one dqdyn call on the thread pool against a Python loop of Pinocchio's pair of calls).
``--robots`` with no name times the contacts only.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import warnings

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "tests"))

import dqdyn  # noqa: E402

from harness import interleaved, write_results  # noqa: E402


def _measure(f, g, repeat, rounds):
    ta, tb, r = [], [], []
    for _ in range(repeat):
        a, b = interleaved(f, g, rounds=rounds)
        ta.append(a)
        tb.append(b)
        r.append(a / b)
    return statistics.median(ta), statistics.median(tb), statistics.median(r), min(r), max(r)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--robots", nargs="*", default=["solo12", "anymal", "talos", "ur5"])
    ap.add_argument("--contacts", action="store_true")
    args = ap.parse_args(argv)
    import pinocchio as pin

    from pinconv import ROBOTS, erd, pin_from_urdf, q_to_pin, v_transform

    warnings.simplefilter("ignore")
    rows = []
    rng = np.random.default_rng(0)
    for name in args.robots:
        path, root = ROBOTS[name]
        m = dqdyn.load_urdf(erd(path), root_joint=root)
        pm = pin_from_urdf(erd(path), root)
        pd = pm.createData()
        q = dqdyn.random_configuration(m, seed=rng)
        v, a = rng.normal(size=(2, m.nv))
        T = v_transform(m, pm, q)
        qp, vp, app = q_to_pin(m, pm, q), T @ v, T @ a
        label = f"{name} ({m.nv} dof)"

        def ours():
            return dqdyn.centroidal_dynamics_derivatives(m, q, v, a)

        def theirs():
            return pin.computeCentroidalDynamicsDerivatives(pm, pd, qp, vp, app)

        # (the answers agree before anything is timed)
        for x, y in zip(ours(), theirs()):
            assert np.abs(x - np.asarray(y) @ T).max() <= 1e-9 * (1 + np.abs(y).max())
        ta, tb, r, lo, hi = _measure(ours, theirs, args.repeat, args.rounds)
        N = args.batch
        Q = dqdyn.random_configuration(m, size=N, seed=rng)
        V, A = rng.normal(size=(2, N, m.nv))
        QP = [q_to_pin(m, pm, x) for x in Q]
        VP, AP = V @ T.T, A @ T.T
        dqdyn.centroidal_dynamics_derivatives(m, Q, V, A)
        tb_ours = min(_timed(lambda: dqdyn.centroidal_dynamics_derivatives(m, Q, V, A)) for _ in range(3))
        tb_pin = min(_timed(lambda: [pin.computeCentroidalDynamicsDerivatives(pm, pd, QP[k], VP[k], AP[k])
                                     for k in range(N)]) for _ in range(3))
        rows.append({"robot": label, "dqdyn_us": ta, "pin_us": tb, "ratio": r, "ratio_min": lo,
                     "ratio_max": hi,
                     f"batch{N}_dqdyn_us_per_state": tb_ours / N * 1e6,
                     f"batch{N}_pin_loop_us_per_state": tb_pin / N * 1e6})
        print(f"{label:18s} {ta:8.2f} µs {tb:8.2f} µs  ratio {r:.2f} [{lo:.2f}–{hi:.2f}];  batch of {N}: "
              f"{tb_ours / N * 1e6:.2f} vs {tb_pin / N * 1e6:.2f} µs per state", flush=True)
    meta = {"repeat": args.repeat, "rounds": args.rounds, "batch": args.batch}
    js, md = write_results("centroidal_derivatives", rows, meta)
    print(f"written {js}, {md}")
    if args.contacts:
        js, md = write_results("contact_derivatives", _contact_rows(args, rng), meta)
        print(f"written {js}, {md}")
    return rows


def _contact_rows(args, rng):
    import pinocchio as pin

    from pinconv import ROBOTS, erd, pin_from_urdf, q_to_pin, v_transform

    rows = []
    cases = [("solo12", "3d", ["FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT"]),
             ("anymal", "3d", ["LF_FOOT", "RF_FOOT", "LH_FOOT", "RH_FOOT"]),
             ("talos", "6d", ["left_sole_link", "right_sole_link"])]
    for name, kind, frames in cases:
        path, root = ROBOTS[name]
        m = dqdyn.load_urdf(erd(path), root_joint=root)
        pm = pin_from_urdf(erd(path), root)
        pd = pm.createData()
        q = dqdyn.random_configuration(m, seed=rng)
        v, tau = rng.normal(size=(2, m.nv))
        T = v_transform(m, pm, q)
        qp, vp, tp = q_to_pin(m, pm, q), T @ v, T @ tau
        C = dqdyn.PointContact if kind == "3d" else dqdyn.FrameContact
        ours_c = [C(f) for f in frames]
        ctype = pin.ContactType.CONTACT_3D if kind == "3d" else pin.ContactType.CONTACT_6D
        cms, cds = pin.StdVec_RigidConstraintModel(), pin.StdVec_RigidConstraintData()
        for f in frames:
            fr = pm.frames[pm.getFrameId(f)]
            cm = pin.RigidConstraintModel(ctype, pm, fr.parentJoint, fr.placement, pin.LOCAL)
            cms.append(cm)
            cds.append(cm.createData())
        pin.initConstraintDynamics(pm, pd, cms, cds)
        settings = pin.ProximalSettings(1e-14, 0.0, 1)

        def ours():
            return dqdyn.contact_dynamics_derivatives(m, q, v, tau, ours_c)

        def theirs():
            pin.constraintDynamics(pm, pd, qp, vp, tp, cms, cds, settings)
            return pin.computeConstraintDynamicsDerivatives(pm, pd, cms, cds, settings)

        got, ref = ours(), theirs()
        assert np.abs(got.da_dq - T.T @ ref[0] @ T).max() <= 1e-8 * (1 + np.abs(ref[0]).max())
        ta, tb, r, lo, hi = _measure(ours, theirs, args.repeat, args.rounds)
        label = f"{name} ({m.nv} dof), {len(frames)} {kind} contacts"
        N = args.batch
        Q = dqdyn.random_configuration(m, size=N, seed=rng)
        V, TAU = 0.3 * rng.normal(size=(2, N, m.nv))
        QP = [q_to_pin(m, pm, x) for x in Q]
        VP, TP = V @ T.T, TAU @ T.T

        def pin_loop():
            for k in range(N):
                pin.constraintDynamics(pm, pd, QP[k], VP[k], TP[k], cms, cds, settings)
                pin.computeConstraintDynamicsDerivatives(pm, pd, cms, cds, settings)

        dqdyn.contact_dynamics_derivatives(m, Q, V, TAU, ours_c)
        tb_ours = min(_timed(lambda: dqdyn.contact_dynamics_derivatives(m, Q, V, TAU, ours_c))
                      for _ in range(3))
        tb_pin = min(_timed(pin_loop) for _ in range(3))
        rows.append({"robot": label, "dqdyn_us": ta, "pin_us": tb, "ratio": r, "ratio_min": lo,
                     "ratio_max": hi, f"batch{N}_dqdyn_us_per_state": tb_ours / N * 1e6,
                     f"batch{N}_pin_loop_us_per_state": tb_pin / N * 1e6})
        print(f"contact_dynamics_derivatives {label}: {ta:8.2f} µs {tb:8.2f} µs  ratio {r:.2f} "
              f"[{lo:.2f}–{hi:.2f}]; batch of {N}: {tb_ours / N * 1e6:.2f} vs {tb_pin / N * 1e6:.2f} "
              "µs per state", flush=True)
    return rows


def _timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


if __name__ == "__main__":
    main()
