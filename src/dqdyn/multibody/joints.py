"""Joint models: types, configuration / velocity layouts, and their compiled kernels.

Every joint connects a parent body to a child body.  Its constant placement ``x_J^λ`` (pose of
the joint frame in the parent body frame) is stored on the model; the joint's own motion
``x_J(q)`` maps the joint frame to the child body frame, so the child body pose is
``x_i^0 = x_λ^0 · x_J^λ · x_J(q_i)``.  The motion axes ``S(q)`` (columns of pure dual
quaternions in vec6 ``[ω, v]`` form) are expressed in the **child body frame**, so the body
twist contributed by the joint is ``ξ_J = S(q) v_J`` ([Silva2022, Table 1]; [Silva2022thesis, Table 4.1]).

Configuration / velocity layouts (``q`` / ``v`` slices of a joint):

============  ====  ====  ==========================================  =============================
type          nq    nv    q                                           v
============  ====  ====  ==========================================  =============================
revolute      1     1     angle θ about ``axis`` (continuous too)     θ̇
prismatic     1     1     displacement d along ``axis``               ḋ
helical       1     1     angle θ; translation ``pitch·θ`` along axis θ̇
cylindrical   2     2     (θ, d) about / along ``axis``               (θ̇, ḋ)
planar        3     3     (x, y, φ): translation in the joint x-y     (ẋ, ẏ, φ̇) = q̇ (parent-joint
                          plane, then rotation φ about its z axis     frame axes: the papers' base)
spherical     4     3     unit quaternion ``[w, x, y, z]``            body angular velocity ω^b
free          8     6     unit dual quaternion (vec8) of the pose     body twist ``[ω^b, v^b]``
============  ====  ====  ==========================================  =============================

A 1-DoF joint may *mimic* another 1-DoF joint (URDF ``<mimic>``): it owns no entry of q or v
and reads ``q = scale·q_master + offset``, ``v = scale·v_master`` from its master's slot.
"""

from __future__ import annotations

import math

from dqdyn.algebra._core import dq_exp_pure, dq_log_unit, dq_mul, jit

FIXED = 0
REVOLUTE = 1
PRISMATIC = 2
HELICAL = 3
CYLINDRICAL = 4
PLANAR = 5
SPHERICAL = 6
FREE = 7

JOINT_TYPE_NAMES = {
    REVOLUTE: "revolute",
    PRISMATIC: "prismatic",
    HELICAL: "helical",
    CYLINDRICAL: "cylindrical",
    PLANAR: "planar",
    SPHERICAL: "spherical",
    FREE: "free",
    FIXED: "fixed",
}
JOINT_TYPES = {v: k for k, v in JOINT_TYPE_NAMES.items()}
JOINT_TYPES["continuous"] = REVOLUTE
JOINT_TYPES["floating"] = FREE
JOINT_TYPES["screw"] = HELICAL

#: (nq, nv) of each joint type
JOINT_DIMS = {
    FIXED: (0, 0),
    REVOLUTE: (1, 1),
    PRISMATIC: (1, 1),
    HELICAL: (1, 1),
    CYLINDRICAL: (2, 2),
    PLANAR: (3, 3),
    SPHERICAL: (4, 3),
    FREE: (8, 6),
}


@jit
def joint_nv(jt):
    if jt == REVOLUTE or jt == PRISMATIC or jt == HELICAL:
        return 1
    if jt == CYLINDRICAL:
        return 2
    if jt == PLANAR or jt == SPHERICAL:
        return 3
    if jt == FREE:
        return 6
    return 0


@jit
def joint_nq(jt):
    if jt == SPHERICAL:
        return 4
    if jt == FREE:
        return 8
    return joint_nv(jt)


@jit
def _dual_along_axis(a0, a1, a2, d, r0, r1, r2, r3):
    """``D = ½ p r`` (4 scalars) of ``r + ε ½ p r`` for the translation ``p = 2d·axis`` along the
    unit axis ``(a0, a1, a2)`` (helical and cylindrical joints; [Silva2022thesis, eq. (3.10)])."""
    px, py, pz = d * a0, d * a1, d * a2
    return (-px * r1 - py * r2 - pz * r3, px * r0 + py * r3 - pz * r2,
            -px * r3 + py * r0 + pz * r1, px * r2 - py * r1 + pz * r0)


@jit
def joint_pose(jt, a0, a1, a2, pitch, q, iq, scale, offset):
    """``x_J(q)``, the pose of the child body frame in the joint frame (a unit DQ), as 8 scalars
    (kept in registers: a kernel calling it needs no scratch array).  ``(a0, a1, a2)``: the unit
    axis.  ``q[iq:]`` is the joint's configuration; 1-DoF joints read ``scale·q[iq] + offset``
    (mimic).  A rotation by θ about the axis is ``cos(θ/2) + sin(θ/2) axis``."""
    if jt == REVOLUTE:
        h = 0.5 * (scale * q[iq] + offset)
        s = math.sin(h)
        return (math.cos(h), s * a0, s * a1, s * a2, 0.0, 0.0, 0.0, 0.0)
    if jt == PRISMATIC:
        d = 0.5 * (scale * q[iq] + offset)
        return (1.0, 0.0, 0.0, 0.0, 0.0, d * a0, d * a1, d * a2)
    if jt == HELICAL or jt == CYLINDRICAL:
        if jt == HELICAL:
            th = scale * q[iq] + offset
            d = 0.5 * pitch * th  # p = pitch·θ·axis, parallel to the rotation axis
        else:
            th = q[iq]
            d = 0.5 * q[iq + 1]
        h = 0.5 * th
        s = math.sin(h)
        r0, r1, r2, r3 = math.cos(h), s * a0, s * a1, s * a2
        d0, d1, d2, d3 = _dual_along_axis(a0, a1, a2, d, r0, r1, r2, r3)
        return (r0, r1, r2, r3, d0, d1, d2, d3)
    if jt == PLANAR:
        h = 0.5 * q[iq + 2]
        c, s = math.cos(h), math.sin(h)
        px, py = 0.5 * q[iq], 0.5 * q[iq + 1]
        # ½ p r with p = (x, y, 0), r = c + s k
        return (c, 0.0, 0.0, s, 0.0, px * c + py * s, -px * s + py * c, 0.0)
    if jt == SPHERICAL:
        return (q[iq], q[iq + 1], q[iq + 2], q[iq + 3], 0.0, 0.0, 0.0, 0.0)
    if jt == FREE:
        return (q[iq], q[iq + 1], q[iq + 2], q[iq + 3], q[iq + 4], q[iq + 5], q[iq + 6], q[iq + 7])
    return (1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)


@jit
def joint_transform(jt, axis, pitch, q, iq, scale, offset, out):
    """``out = x_J(q)`` (8 entries): `joint_pose` stored into an array."""
    (out[0], out[1], out[2], out[3], out[4], out[5], out[6], out[7]) = joint_pose(
        jt, axis[0], axis[1], axis[2], pitch, q, iq, scale, offset)


@jit
def joint_column(jt, axis, pitch, q, iq, k, out):
    """``out = S_k(q)``: the k-th motion axis of the joint, in the child body frame (vec6)."""
    for m in range(6):
        out[m] = 0.0
    if jt == REVOLUTE:
        out[0], out[1], out[2] = axis[0], axis[1], axis[2]
    elif jt == PRISMATIC:
        out[3], out[4], out[5] = axis[0], axis[1], axis[2]
    elif jt == HELICAL:
        out[0], out[1], out[2] = axis[0], axis[1], axis[2]
        out[3], out[4], out[5] = pitch * axis[0], pitch * axis[1], pitch * axis[2]
    elif jt == CYLINDRICAL:
        if k == 0:
            out[0], out[1], out[2] = axis[0], axis[1], axis[2]
        else:
            out[3], out[4], out[5] = axis[0], axis[1], axis[2]
    elif jt == PLANAR:
        # body frame = joint frame rotated by φ about z: v^b = R_z(φ)ᵀ (ẋ, ẏ, 0)
        phi = q[iq + 2]
        c, s = math.cos(phi), math.sin(phi)
        if k == 0:
            out[3], out[4] = c, -s
        elif k == 1:
            out[3], out[4] = s, c
        else:
            out[2] = 1.0
    elif jt == SPHERICAL:
        out[k] = 1.0
    elif jt == FREE:
        out[k] = 1.0


@jit
def joint_column_dot(jt, q, iq, v, iv, scale, k, out):
    """``out = dS_k/dt`` in the child body frame.  Non-zero only for the planar joint."""
    for m in range(6):
        out[m] = 0.0
    if jt == PLANAR:
        phi = q[iq + 2]
        w = v[iv + 2]
        c, s = math.cos(phi), math.sin(phi)
        if k == 0:
            out[3], out[4] = -s * w, -c * w
        elif k == 1:
            out[3], out[4] = c * w, -s * w


@jit
def joint_velocity(jt, axis, pitch, q, iq, v, iv, scale, out):
    """``out = ξ_J = S(q) v_J``: the joint twist in the child body frame (vec6)."""
    for m in range(6):
        out[m] = 0.0
    if jt == REVOLUTE:
        w = scale * v[iv]
        out[0], out[1], out[2] = w * axis[0], w * axis[1], w * axis[2]
    elif jt == PRISMATIC:
        w = scale * v[iv]
        out[3], out[4], out[5] = w * axis[0], w * axis[1], w * axis[2]
    elif jt == HELICAL:
        w = scale * v[iv]
        out[0], out[1], out[2] = w * axis[0], w * axis[1], w * axis[2]
        w *= pitch
        out[3], out[4], out[5] = w * axis[0], w * axis[1], w * axis[2]
    elif jt == CYLINDRICAL:
        w = v[iv]
        out[0], out[1], out[2] = w * axis[0], w * axis[1], w * axis[2]
        w = v[iv + 1]
        out[3], out[4], out[5] = w * axis[0], w * axis[1], w * axis[2]
    elif jt == PLANAR:
        phi = q[iq + 2]
        c, s = math.cos(phi), math.sin(phi)
        out[3] = c * v[iv] + s * v[iv + 1]
        out[4] = -s * v[iv] + c * v[iv + 1]
        out[2] = v[iv + 2]
    elif jt == SPHERICAL:
        out[0], out[1], out[2] = v[iv], v[iv + 1], v[iv + 2]
    elif jt == FREE:
        for m in range(6):
            out[m] = v[iv + m]


@jit
def joint_velocity_bias(jt, q, iq, v, iv, out):
    """``out = Ṡ(q) v_J`` in the child body frame (zero except for the planar joint)."""
    for m in range(6):
        out[m] = 0.0
    if jt == PLANAR:
        # d/dt (R_z(φ)ᵀ (ẋ, ẏ, 0)) = −φ̇ ẑ × (R_z(φ)ᵀ (ẋ, ẏ, 0))
        phi = q[iq + 2]
        c, s = math.cos(phi), math.sin(phi)
        vx = c * v[iv] + s * v[iv + 1]
        vy = -s * v[iv] + c * v[iv + 1]
        w = v[iv + 2]
        out[3] = w * vy
        out[4] = -w * vx


@jit
def joint_integrate(jt, q, iq, v, iv, dt, out, tmp8, tmp6):
    """``out[iq:iq+nq] = q ⊕ v dt`` on the joint's configuration manifold.

    Vector-space joints add; the spherical joint right-multiplies ``exp(½ ω dt)``; the free joint
    right-multiplies ``exp(½ ξ dt)`` (the exact screw motion of a constant body twist).
    """
    if jt == SPHERICAL:
        for m in range(6):
            tmp6[m] = 0.0
        for m in range(3):
            tmp6[m] = 0.5 * dt * v[iv + m]
        dq_exp_pure(tmp6, tmp8)
        # quaternion part only
        a0, a1, a2, a3 = q[iq], q[iq + 1], q[iq + 2], q[iq + 3]
        b0, b1, b2, b3 = tmp8[0], tmp8[1], tmp8[2], tmp8[3]
        out[iq] = a0 * b0 - a1 * b1 - a2 * b2 - a3 * b3
        out[iq + 1] = a0 * b1 + a1 * b0 + a2 * b3 - a3 * b2
        out[iq + 2] = a0 * b2 - a1 * b3 + a2 * b0 + a3 * b1
        out[iq + 3] = a0 * b3 + a1 * b2 - a2 * b1 + a3 * b0
    elif jt == FREE:
        for m in range(6):
            tmp6[m] = 0.5 * dt * v[iv + m]
        dq_exp_pure(tmp6, tmp8)
        dq_mul(q[iq : iq + 8], tmp8, out[iq : iq + 8])
    else:
        n = joint_nv(jt)
        for m in range(n):
            out[iq + m] = q[iq + m] + dt * v[iv + m]


@jit
def joint_difference(jt, q0, q1, iq, iv, out, tmp8a, tmp8b):
    """``out[iv:iv+nv] = q1 ⊖ q0``: the velocity that integrates ``q0`` to ``q1`` in unit time."""
    if jt == SPHERICAL:
        for m in range(8):
            tmp8a[m] = 0.0
        # r0* r1
        a0, a1, a2, a3 = q0[iq], -q0[iq + 1], -q0[iq + 2], -q0[iq + 3]
        b0, b1, b2, b3 = q1[iq], q1[iq + 1], q1[iq + 2], q1[iq + 3]
        tmp8a[0] = a0 * b0 - a1 * b1 - a2 * b2 - a3 * b3
        tmp8a[1] = a0 * b1 + a1 * b0 + a2 * b3 - a3 * b2
        tmp8a[2] = a0 * b2 - a1 * b3 + a2 * b0 + a3 * b1
        tmp8a[3] = a0 * b3 + a1 * b2 - a2 * b1 + a3 * b0
        dq_log_unit(tmp8a, tmp8b[0:6])
        for m in range(3):
            out[iv + m] = 2.0 * tmp8b[m]
    elif jt == FREE:
        for m in range(8):
            tmp8b[m] = q0[iq + m]
        for m in range(1, 4):
            tmp8b[m] = -tmp8b[m]
        for m in range(5, 8):
            tmp8b[m] = -tmp8b[m]
        dq_mul(tmp8b, q1[iq : iq + 8], tmp8a)
        dq_log_unit(tmp8a, tmp8b[0:6])
        for m in range(6):
            out[iv + m] = 2.0 * tmp8b[m]
    else:
        n = joint_nv(jt)
        for m in range(n):
            out[iv + m] = q1[iq + m] - q0[iq + m]


__all__ = [
    "FIXED",
    "REVOLUTE",
    "PRISMATIC",
    "HELICAL",
    "CYLINDRICAL",
    "PLANAR",
    "SPHERICAL",
    "FREE",
    "JOINT_TYPE_NAMES",
    "JOINT_TYPES",
    "JOINT_DIMS",
]
