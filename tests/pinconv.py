"""Test-only bridge to Pinocchio: build the same model in pin, convert q / v / a / τ / Jacobians.

Layout differences (documented in the README):

* continuous joints: pin nq = 2 (cos θ, sin θ), dqdyn nq = 1 (θ);
* free joint: pin q = [p, quat xyzw], v = [v^b, ω^b]; dqdyn q = unit DQ (vec8), v = [ω^b, v^b];
* spherical: pin q = quat xyzw; dqdyn q = quat wxyz (same v: body angular velocity);
* planar: pin q = [x, y, cos φ, sin φ], v = [R(φ)ᵀ(ẋ, ẏ), φ̇]; dqdyn q = (x, y, φ), v = q̇;
* twists / Jacobian rows: pin [v; ω], dqdyn [ω; v]; wrenches: pin [f; τ], dqdyn [f; τ].

``v_pin = T(q) v``, so ``J = J_pin T``, ``τ = Tᵀ τ_pin``, ``a_pin = T a + Ṫ v``.
"""

from __future__ import annotations

import os
import sysconfig

import numpy as np
import pytest

pin = pytest.importorskip("pinocchio")

from dqdyn.algebra.rotations import matrix_from_pose, matrix_from_quat, quat_from_matrix, translation_of  # noqa: E402
from dqdyn.multibody.joints import (  # noqa: E402
    CYLINDRICAL,
    FREE,
    HELICAL,
    PLANAR,
    PRISMATIC,
    REVOLUTE,
    SPHERICAL,
)

ERD = os.path.join(sysconfig.get_paths()["purelib"], "cmeel.prefix", "share", "example-robot-data", "robots")


def erd(rel: str) -> str:
    p = os.path.join(ERD, rel)
    if not os.path.exists(p):
        pytest.skip(f"example-robot-data file {rel} not installed")
    return p


# the robots used across the Pinocchio comparisons (path, root joint)
ROBOTS = {
    "panda": ("panda_description/urdf/panda.urdf", None),
    "ur5": ("ur_description/urdf/ur5_robot.urdf", None),
    "kinova": ("kinova_description/robots/kinova.urdf", None),
    "tiago": ("tiago_description/robots/tiago.urdf", "planar"),
    "talos": ("talos_data/robots/talos_reduced.urdf", "free"),
    "anymal": ("anymal_b_simple_description/robots/anymal.urdf", "free"),
    "baxter": ("baxter_description/urdf/baxter.urdf", None),
    "hyq": ("hyq_description/robots/hyq_no_sensors.urdf", "free"),
    "solo12": ("solo_description/robots/solo12.urdf", "free"),
    "double_pendulum": ("double_pendulum_description/urdf/double_pendulum_continuous.urdf", None),
    "xarm7": ("xarm_description/urdf/xarm7.urdf", None),
    "z1": ("z1_description/urdf/z1.urdf", None),
}


def pin_from_urdf(path: str, root: str | None):
    if root == "free":
        return pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer(), mimic=True)
    if root == "planar":
        return pin.buildModelFromUrdf(path, pin.JointModelPlanar(), mimic=True)
    return pin.buildModelFromUrdf(path, mimic=True)


def _se3(x8):
    T = matrix_from_pose(x8)
    return pin.SE3(T[:3, :3].copy(), T[:3, 3].copy())


def pin_from_model(model):
    """Build the same kinematic tree in Pinocchio (joint-by-joint), for random-tree tests."""
    pm = pin.Model()
    pm.gravity = pin.Motion(np.r_[model.gravity, 0, 0, 0])
    ids = {0: 0}
    # Pinocchio's algorithms assume depth-first order (each subtree contiguous in v); dqdyn only
    # needs parents before children, so add the joints to pin in depth-first order.
    children = {i: [] for i in range(model.nbodies + 1)}
    for i in range(1, model.nbodies + 1):
        children[int(model.parent[i])].append(i)
    order, stack = [], list(reversed(children[0]))
    while stack:
        i = stack.pop()
        order.append(i)
        stack.extend(reversed(children[i]))
    for i in order:
        jt = int(model.joint_type[i])
        ax = np.array(model.joint_axis[i])
        if jt == REVOLUTE:
            j = pin.JointModelRevoluteUnaligned(ax)
        elif jt == PRISMATIC:
            j = pin.JointModelPrismaticUnaligned(ax)
        elif jt == HELICAL:
            j = pin.JointModelHelicalUnaligned(ax, float(model.joint_pitch[i]))
        elif jt == CYLINDRICAL:
            j = pin.JointModelComposite(2)
            j.addJoint(pin.JointModelRevoluteUnaligned(ax))
            j.addJoint(pin.JointModelPrismaticUnaligned(ax))
        elif jt == PLANAR:
            j = pin.JointModelPlanar()
        elif jt == SPHERICAL:
            j = pin.JointModelSpherical()
        elif jt == FREE:
            j = pin.JointModelFreeFlyer()
        else:
            raise NotImplementedError(jt)
        if model.joint_nv[i] == 0:
            raise NotImplementedError("mimic joints are not mirrored")
        jid = pm.addJoint(ids[int(model.parent[i])], j, _se3(model.joint_placement[i]),
                          model.joint_names_all[i])
        pm.appendBodyToJoint(jid, pin.Inertia(float(model.mass[i]), np.array(model.com[i]),
                                              np.array(model.inertia[i])), pin.SE3.Identity())
        ids[i] = jid
    return pm, ids


def joint_map(model, pm):
    """For each dqdyn body with a joint: (type, our iq, our iv, pin idx_q, pin idx_v, pin nq)."""
    out = []
    for i in range(1, model.nbodies + 1):
        if model.joint_nv[i] == 0:
            continue
        name = model.joint_names_all[i]
        if name == "root_joint" and not pm.existJointName(name):
            jid = 1
        else:
            jid = pm.getJointId(name)
        out.append((int(model.joint_type[i]), int(model.idx_q[i]), int(model.idx_v[i]),
                    pm.joints[jid].idx_q, pm.joints[jid].idx_v, pm.joints[jid].nq))
    return out


def q_to_pin(model, pm, q):
    qp = pin.neutral(pm)
    for jt, iq, iv, pq, pv, pnq in joint_map(model, pm):
        if jt in (REVOLUTE, PRISMATIC, HELICAL):
            if pnq == 2:
                qp[pq : pq + 2] = np.cos(q[iq]), np.sin(q[iq])
            else:
                qp[pq] = q[iq]
        elif jt == CYLINDRICAL:
            qp[pq : pq + 2] = q[iq : iq + 2]
        elif jt == PLANAR:
            qp[pq : pq + 4] = q[iq], q[iq + 1], np.cos(q[iq + 2]), np.sin(q[iq + 2])
        elif jt == SPHERICAL:
            w, x, y, z = q[iq : iq + 4]
            qp[pq : pq + 4] = x, y, z, w
        elif jt == FREE:
            x8 = q[iq : iq + 8]
            qp[pq : pq + 3] = translation_of(x8)
            w, x, y, z = x8[:4]
            qp[pq + 3 : pq + 7] = x, y, z, w
    return qp


def v_transform(model, pm, q):
    """T(q) with v_pin = T v, and the function (q, v) -> Ṫ v."""
    T = np.zeros((pm.nv, model.nv))
    for jt, iq, iv, pq, pv, pnq in joint_map(model, pm):
        if jt == PLANAR:
            c, s = np.cos(q[iq + 2]), np.sin(q[iq + 2])
            T[pv : pv + 2, iv : iv + 2] = [[c, s], [-s, c]]
            T[pv + 2, iv + 2] = 1.0
        elif jt == FREE:
            T[pv : pv + 3, iv + 3 : iv + 6] = np.eye(3)
            T[pv + 3 : pv + 6, iv : iv + 3] = np.eye(3)
        else:
            n = {REVOLUTE: 1, PRISMATIC: 1, HELICAL: 1, CYLINDRICAL: 2, SPHERICAL: 3}[jt]
            T[pv : pv + n, iv : iv + n] = np.eye(n)
    return T


def tdot_v(model, pm, q, v):
    out = np.zeros(pm.nv)
    for jt, iq, iv, pq, pv, pnq in joint_map(model, pm):
        if jt == PLANAR:
            c, s = np.cos(q[iq + 2]), np.sin(q[iq + 2])
            w = v[iv + 2]
            dx, dy = v[iv], v[iv + 1]
            out[pv] = w * (-s * dx + c * dy)
            out[pv + 1] = w * (-c * dx - s * dy)
    return out


def pin_jac_to_ours(Jp):
    """Reorder pin's [v; ω] rows into dqdyn's [ω; v]."""
    return np.vstack([Jp[3:], Jp[:3]])


def pose_to_matrix(x8):
    return matrix_from_pose(x8)


def pin_frame_id(pm, name):
    return pm.getFrameId(name)


__all__ = [
    "pin",
    "erd",
    "ERD",
    "ROBOTS",
    "pin_from_urdf",
    "pin_from_model",
    "joint_map",
    "q_to_pin",
    "v_transform",
    "tdot_v",
    "pin_jac_to_ours",
    "matrix_from_quat",
    "quat_from_matrix",
]


def tdot_matrix(model, pm, q, v):
    """Ṫ(q, v) as a matrix (only planar joints contribute: T's block turns with φ)."""
    Td = np.zeros((pm.nv, model.nv))
    for jt, iq, iv, pq, pv, pnq in joint_map(model, pm):
        if jt == PLANAR:
            c, s = np.cos(q[iq + 2]), np.sin(q[iq + 2])
            Td[pv : pv + 2, iv : iv + 2] = v[iv + 2] * np.array([[-s, c], [-c, -s]])
    return Td


def pin_fext(model, pm, fext):
    """dqdyn fext (nbodies+1, 6) [f, τ] in body frames → pin's list of joint-frame Forces."""
    fp = [pin.Force.Zero() for _ in range(pm.njoints)]
    for i in range(1, model.nbodies + 1):
        name = model.joint_names_all[i]
        jid = pm.getJointId(name) if pm.existJointName(name) else 1
        fp[jid] = pin.Force(fext[i, :3], fext[i, 3:])
    return fp
