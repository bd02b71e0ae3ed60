"""Solo-12 standing on four point contacts: the contact forces carry its weight.

The joint torques of a static stance come from the base's balance ``g_base = J_baseᵀ λ``
(minimum-norm foot forces) and ``τ_joints = g_joints − J_jointsᵀ λ``; then
``dqdyn.contact_dynamics`` returns the accelerations (zero: the robot stands still) and the
foot forces, which sum to the weight.  The centroidal momentum rate is zero as well.

    python examples/quadruped_standing.py
"""

from __future__ import annotations

import numpy as np

import dqdyn
from dqdyn.algebra.rotations import matrix_from_pose

FEET = ["FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT"]


def stance(model):
    """A crouched stance: hips ±0.8 rad, knees ∓1.6 rad."""
    q = dqdyn.neutral(model)
    for leg, s in (("FL", 1), ("FR", 1), ("HL", -1), ("HR", -1)):
        q[model.q_slice(f"{leg}_HFE")] = 0.8 * s
        q[model.q_slice(f"{leg}_KFE")] = -1.6 * s
    return q


def main() -> None:
    model = dqdyn.load_example("solo12")
    q = stance(model)
    v = np.zeros(model.nv)
    contacts = [dqdyn.PointContact(f) for f in FEET]
    J = np.concatenate([dqdyn.twist_jacobian(model, q, f, "body")[3:] for f in FEET])  # (12, nv)
    g = dqdyn.gravity(model, q)
    lam = np.linalg.lstsq(J[:, :6].T, g[:6], rcond=None)[0]
    tau = g - J.T @ lam
    tau[:6] = 0.0  # (the floating base is not actuated)
    r = dqdyn.contact_dynamics(model, q, v, tau, contacts)
    weight = -model.total_mass * np.asarray(model.gravity)
    total = np.zeros(3)
    print(f"Solo-12: {model.total_mass:.4f} kg, weight {weight[2]:.4f} N")
    for f, F in zip(FEET, r.forces):
        Fw = matrix_from_pose(dqdyn.frame_pose(model, q, f))[:3, :3] @ F  # contact frame → world
        total += Fw
        print(f"  {f}: force in the world [{Fw[0]: .4f} {Fw[1]: .4f} {Fw[2]: .4f}] N")
    print(f"  sum of the foot forces  [{total[0]: .4f} {total[1]: .4f} {total[2]: .4f}] N")
    print(f"  max |v̇| = {np.abs(r.a).max():.2e}, "
          f"max |ḣ_g| = {np.abs(dqdyn.centroidal_momentum_rate(model, q, v, r.a)).max():.2e}")
    assert np.allclose(total, weight, atol=1e-8)


if __name__ == "__main__":
    main()
