"""Forward kinematics and Jacobians: dqdyn against Pinocchio, in one run.

    python benchmarks/bench_kinematics.py [--quick]

Per call (interleaved A/B, median µs): ``forward_kinematics`` vs ``pin.forwardKinematics``;
``joint_jacobians`` (all spatial motion axes) vs ``pin.computeJointJacobians``; the end-effector
``twist_jacobian`` vs ``pin.computeFrameJacobian``.  Batched (10⁵ configurations): dqdyn's
one-call batch vs a Python loop of Pinocchio calls.
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests"))

import dqdyn  # noqa: E402

from harness import interleaved, print_table, throughput, write_results  # noqa: E402


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true", help="fewer rounds, batch of 10⁴")
    args = ap.parse_args(argv)
    import pinocchio as pin

    from dqdyn.parsers.urdf import load_urdf

    from pinconv import ROBOTS, erd, pin_from_urdf, q_to_pin

    rows = []
    rounds = 5 if args.quick else 15
    for name, ee in (("panda", "panda_hand"), ("ur5", "tool0")):
        rel, root = ROBOTS[name]
        path = erd(rel)
        m = load_urdf(path, root_joint=root)
        pm = pin_from_urdf(path, root)
        pd = pm.createData()
        q = dqdyn.random_configuration(m, seed=0)
        qp = q_to_pin(m, pm, q)
        fid = pm.getFrameId(ee)
        cases = [
            ("forward_kinematics", lambda: dqdyn.forward_kinematics(m, q),
             lambda: pin.forwardKinematics(pm, pd, qp)),
            ("joint_jacobians", lambda: dqdyn.joint_jacobians(m, q),
             lambda: pin.computeJointJacobians(pm, pd, qp)),
            ("twist_jacobian(ee)", lambda: dqdyn.twist_jacobian(m, q, ee, "body"),
             lambda: pin.computeFrameJacobian(pm, pd, qp, fid, pin.LOCAL)),
        ]
        for label, a, b in cases:
            ta, tb = interleaved(a, b, rounds=rounds)
            rows.append({"robot": name, "function": label, "dqdyn_us": ta, "pin_us": tb,
                         "ratio": ta / tb})
        N = 10_000 if args.quick else 100_000
        Q = dqdyn.random_configuration(m, size=N, seed=1)
        Qp = np.array([q_to_pin(m, pm, x) for x in Q[:2000]])

        def pin_loop():
            for x in Qp:
                pin.forwardKinematics(pm, pd, x)

        def pin_jloop():
            for x in Qp:
                pin.computeJointJacobians(pm, pd, x)

        for label, ours, theirs in (("forward_kinematics", lambda: dqdyn.forward_kinematics(m, Q), pin_loop),
                                    ("joint_jacobians", lambda: dqdyn.joint_jacobians(m, Q), pin_jloop)):
            a = throughput(ours, N)
            b = throughput(theirs, len(Qp))
            rows.append({"robot": name, "function": f"{label} batch {N}", "dqdyn_us": 1e6 / a,
                         "pin_us": 1e6 / b, "ratio": b / a})
    print_table("kinematics: dqdyn vs Pinocchio (µs per state; ratio < 1: dqdyn faster)", rows)
    js, md = write_results("kinematics", rows, {"quick": args.quick})
    print(f"written {js} and {md}")
    return rows


if __name__ == "__main__":
    main()
