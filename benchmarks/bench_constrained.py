"""Constrained forward dynamics: dqdyn (Udwadia–Kalaba, [Silva2022, eqs. (62)–(63)]) against Pinocchio.

    python benchmarks/bench_constrained.py [--quick]

Per call (interleaved A/B, median µs):

* the 8-DoF differential-drive mobile manipulator (one nonholonomic row):
  ``constrained_forward_dynamics`` vs ``pin.forwardDynamics(q, v, τ, J, γ)`` — Pinocchio's KKT
  solve with an explicit constraint Jacobian, the comparable call (``constraintDynamics`` has no
  nonholonomic constraint), fed the same constraint converted to Pinocchio's velocity layout;
* a spatial 7R loop welded to the ground (6D) and the planar four-bar (3D, one redundant row):
  ``constrained_forward_dynamics`` vs ``pin.constraintDynamics`` (``RigidConstraintModel``; on
  the four-bar with its proximal iterations, which the rank-deficient row needs).

Batched: the mobile manipulator on N states in one dqdyn call against a Python loop of
``pin.forwardDynamics`` (Pinocchio has no batched constrained call).  Each row also records the
largest difference in q̈ between the two (a sanity check, not a test).
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
from dqdyn.constraints import LoopClosure, four_bar, mobile_manipulator  # noqa: E402
from dqdyn.constraints.base import resolve_frame  # noqa: E402
from dqdyn.constraints.dynamics import constrained_forward_dynamics  # noqa: E402

from harness import interleaved, print_table, write_results  # noqa: E402
from loop_models import null_velocity, spatial_7r  # noqa: E402


def _pin_kkt_inputs(m, pm, cons, q, v, tau):
    """Pinocchio-layout (q, v, τ, J, γ) for the same constrained problem (v_pin = T v)."""
    from pinconv import q_to_pin, tdot_v, v_transform

    T = v_transform(m, pm, q)
    Ti = np.linalg.inv(T)
    A = np.concatenate([c.A(m, q, v) for c in cons])
    b = np.concatenate([c.b(m, q, v) for c in cons])
    J = A @ Ti
    gamma = -(b + J @ tdot_v(m, pm, q, v))
    return q_to_pin(m, pm, q), T @ v, Ti.T @ tau, J, gamma, T, tdot_v(m, pm, q, v)


def _pin_loop(m, specs, q, prox=None):
    import pinocchio as pin

    from loop_models import pin_rigid_constraints
    from pinconv import q_to_pin

    pm, pd, R, D = pin_rigid_constraints(m, specs)
    qp = q_to_pin(m, pm, q)
    if prox is None:
        return lambda v, tau: pin.constraintDynamics(pm, pd, qp, v, tau, R, D)
    return lambda v, tau: pin.constraintDynamics(pm, pd, qp, v, tau, R, D, prox)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args(argv)
    import pinocchio as pin

    from pinconv import pin_from_model

    warnings.simplefilter("ignore")
    rounds = 5 if args.quick else 15
    rows = []
    rng = np.random.default_rng(0)

    # --- 8-DoF nonholonomic mobile manipulator vs pin.forwardDynamics (KKT, explicit J)
    m, cons, q0 = mobile_manipulator()
    pm, _ = pin_from_model(m)
    pd = pm.createData()
    q = q0
    v = null_velocity(m, cons, q, rng)
    tau = rng.normal(size=m.nv)
    qp, vp, tp, J, gamma, T, Tdv = _pin_kkt_inputs(m, pm, cons, q, v, tau)
    ours = constrained_forward_dynamics(m, q, v, tau, cons).qdd
    ap_ = pin.forwardDynamics(pm, pd, qp, vp, tp, J, gamma)
    diff = float(np.abs(np.linalg.solve(T, ap_ - Tdv) - ours).max())
    ta, tb = interleaved(lambda: constrained_forward_dynamics(m, q, v, tau, cons),
                         lambda: pin.forwardDynamics(pm, pd, qp, vp, tp, J, gamma), rounds=rounds)
    rows.append({"case": f"mobile manipulator ({m.nv} dof, 1 nonholonomic row)",
                 "pinocchio call": "forwardDynamics (KKT)", "dqdyn_us": ta, "pin_us": tb,
                 "ratio": ta / tb, "max |Δq̈|": diff})

    # batched
    N = 2_000 if args.quick else 20_000
    Q = q0 + 0.5 * rng.normal(size=(N, m.nq))
    V = rng.normal(size=(N, m.nv))
    for k in range(N):
        A = cons[0].A(m, Q[k])
        V[k] -= np.linalg.pinv(A) @ (A @ V[k])
    TAU = rng.normal(size=(N, m.nv))
    rb = constrained_forward_dynamics(m, Q, V, TAU, cons)  # (warm: the parallel kernel and its threads)
    t_ours = []
    for _ in range(3):
        t0 = time.perf_counter()
        rb = constrained_forward_dynamics(m, Q, V, TAU, cons)
        t_ours.append((time.perf_counter() - t0) / N)
    t_ours = min(t_ours)
    inputs = [_pin_kkt_inputs(m, pm, cons, Q[k], V[k], TAU[k]) for k in range(N)]
    t0 = time.perf_counter()
    out = [pin.forwardDynamics(pm, pd, x[0], x[1], x[2], x[3], x[4]) for x in inputs]
    t_pin = (time.perf_counter() - t0) / N
    diff = max(float(np.abs(np.linalg.solve(x[5], o - x[6]) - rb.qdd[k]).max())
               for k, (x, o) in enumerate(zip(inputs[:200], out[:200])))
    rows.append({"case": f"mobile manipulator, batch of {N}",
                 "pinocchio call": "python loop of forwardDynamics (inputs prepared)",
                 "dqdyn_us": t_ours * 1e6, "pin_us": t_pin * 1e6, "ratio": t_ours / t_pin,
                 "max |Δq̈|": diff})

    # --- 6D loop: spatial 7R welded to the ground
    m7, q7 = spatial_7r()
    x = dqdyn.frame_pose(m7, q7, "tip")
    c6 = [LoopClosure((0, x), "tip", "6d")]
    v7 = null_velocity(m7, c6, q7, rng)
    t7 = rng.normal(size=m7.nv)
    f7 = _pin_loop(m7, [(pin.ContactType.CONTACT_6D, resolve_frame(m7, "tip"), (0, x))], q7)
    diff = float(np.abs(f7(v7, t7) - constrained_forward_dynamics(m7, q7, v7, t7, c6).qdd).max())
    ta, tb = interleaved(lambda: constrained_forward_dynamics(m7, q7, v7, t7, c6), lambda: f7(v7, t7),
                         rounds=rounds)
    rows.append({"case": "spatial 7R loop, 6D weld (7 dof)", "pinocchio call": "constraintDynamics",
                 "dqdyn_us": ta, "pin_us": tb, "ratio": ta / tb, "max |Δq̈|": diff})

    # --- 3D loop: planar four-bar (redundant row; pin needs proximal iterations)
    m4, c4, q4 = four_bar()
    v4 = null_velocity(m4, c4, q4, rng)
    t4 = rng.normal(size=m4.nv)
    prox = pin.ProximalSettings(1e-13, 1e-8, 200)
    f4 = _pin_loop(m4, [(pin.ContactType.CONTACT_3D, resolve_frame(m4, "coupler_tip"),
                         resolve_frame(m4, "rocker_tip"))], q4, prox)
    diff = float(np.abs(f4(v4, t4) - constrained_forward_dynamics(m4, q4, v4, t4, c4).qdd).max())
    ta, tb = interleaved(lambda: constrained_forward_dynamics(m4, q4, v4, t4, c4), lambda: f4(v4, t4),
                         rounds=rounds)
    rows.append({"case": "four-bar, 3D point loop (3 dof, rank 2)",
                 "pinocchio call": "constraintDynamics + proximal", "dqdyn_us": ta, "pin_us": tb,
                 "ratio": ta / tb, "max |Δq̈|": diff})

    print_table("constrained forward dynamics: dqdyn vs Pinocchio (µs; ratio < 1: dqdyn faster)", rows)
    js, md = write_results("constrained", rows, {"quick": args.quick})
    print(f"written {js} and {md}")
    return rows


if __name__ == "__main__":
    main()
