"""The pose and twist of one body in the recursions: dqNE (`dqdyn.dynamics.newton_euler`), the
CRBA and gravity (`dqdyn.dynamics.lagrange`) and the articulated-body algorithms
(`dqdyn.dynamics.articulated`).

* `joint_pose`: ``x_i^λ = x_{J_i}^λ · x_J(q_i)`` [Silva2022thesis, eq. (3.19)], as a rotation
  quaternion and a translation;
* `com_pose`: ``x_{c_i}^{c_λ}``, the same pose between the CoM frames [Silva2022, §3.1.1];
* `rotation_matrix`: the matrix of ``Ad(r)`` on vectors;
* `joint_twist`: the joint twist ``Ad(x_i^{c_i}) (S_i v_i)`` at the CoM [Silva2022, Table 1].

Revolute, prismatic and helical joints are written out; the other joint types go through the
generic helpers of `dqdyn.multibody.joints` on scratch arrays.
"""

from __future__ import annotations

import math

from dqdyn.algebra._core import dq_mul, jit
from dqdyn.multibody.joints import (
    HELICAL,
    PRISMATIC,
    REVOLUTE,
    joint_transform,
    joint_velocity,
)
from dqdyn.multibody.model import (
    MF_AXIS,
    MF_COM,
    MF_OFFSET,
    MF_PITCH,
    MF_SCALE,
    MI_IQ,
    MI_IV,
    MI_JTYPE,
)


@jit
def com_pose(xl, ca, cb, out):
    """``out = T(−ca) · xl · T(cb)``, ``T(c) = 1 + ε ½ c`` (a pure translation).

    With ``xl = x_i^λ``, ``ca = c_λ`` and ``cb = c_i`` this is ``x_{c_i}^{c_λ}`` [Silva2022, §3.1.1]:
    only the dual part changes, ``D' = D − ½ ca r + ½ r cb``.
    """
    r0, r1, r2, r3 = xl[0], xl[1], xl[2], xl[3]
    ax, ay, az = 0.5 * ca[0], 0.5 * ca[1], 0.5 * ca[2]
    bx, by, bz = 0.5 * cb[0], 0.5 * cb[1], 0.5 * cb[2]
    out[0], out[1], out[2], out[3] = r0, r1, r2, r3
    # −(0, a) r  +  r (0, b)
    out[4] = xl[4] + (ax * r1 + ay * r2 + az * r3) - (r1 * bx + r2 * by + r3 * bz)
    out[5] = xl[5] - (r0 * ax + (ay * r3 - az * r2)) + (r0 * bx + (r2 * bz - r3 * by))
    out[6] = xl[6] - (r0 * ay + (az * r1 - ax * r3)) + (r0 * by + (r3 * bx - r1 * bz))
    out[7] = xl[7] - (r0 * az + (ax * r2 - ay * r1)) + (r0 * bz + (r1 * by - r2 * bx))


@jit
def rotation_matrix(r0, r1, r2, r3, R, i, o):
    """``R[i, o:o+9]`` (row-major): the matrix of the map ``a ↦ r a r*`` (``Ad(r)``, unit ``r``)."""
    x2, y2, z2 = 2.0 * r1, 2.0 * r2, 2.0 * r3
    xx, yy, zz = r1 * x2, r2 * y2, r3 * z2
    xy, xz, yz = r1 * y2, r1 * z2, r2 * z2
    wx, wy, wz = r0 * x2, r0 * y2, r0 * z2
    R[i, o] = 1.0 - (yy + zz)
    R[i, o + 1] = xy - wz
    R[i, o + 2] = xz + wy
    R[i, o + 3] = xy + wz
    R[i, o + 4] = 1.0 - (xx + zz)
    R[i, o + 5] = yz - wx
    R[i, o + 6] = xz - wy
    R[i, o + 7] = yz + wx
    R[i, o + 8] = 1.0 - (xx + yy)


@jit
def joint_pose(mi, mf, i, q, ax, xj, xl):
    """``x_i^λ = x_{J_i}^λ · x_J(q_i)`` [Silva2022thesis, eq. (3.19)] as ``(r0, r1, r2, r3, t0, t1, t2)``:
    its rotation quaternion and translation (in F_λ).  ``ax`` (3), ``xj``, ``xl`` (8): scratch.

    Revolute, prismatic and helical joints are written out (``x_J`` is a rotation about and/or
    a translation along an axis through the joint origin); the others use the generic
    `joint_transform` and a dual quaternion product.
    """
    jt = mi[i, MI_JTYPE]
    P0, P1, P2, P3 = mf[i, 0], mf[i, 1], mf[i, 2], mf[i, 3]
    D0, D1, D2, D3 = mf[i, 4], mf[i, 5], mf[i, 6], mf[i, 7]
    # translation of the placement: t = 2 D P*
    t0 = 2.0 * (-D0 * P1 + D1 * P0 - D2 * P3 + D3 * P2)
    t1 = 2.0 * (-D0 * P2 + D1 * P3 + D2 * P0 - D3 * P1)
    t2 = 2.0 * (-D0 * P3 - D1 * P2 + D2 * P1 + D3 * P0)
    if jt == REVOLUTE or jt == PRISMATIC or jt == HELICAL:
        th = mf[i, MF_SCALE] * q[mi[i, MI_IQ]] + mf[i, MF_OFFSET]
        a0, a1, a2 = mf[i, MF_AXIS], mf[i, MF_AXIS + 1], mf[i, MF_AXIS + 2]
        if jt == PRISMATIC:
            d = th
            r0, r1, r2, r3 = P0, P1, P2, P3
        else:
            d = mf[i, MF_PITCH] * th
            h = 0.5 * th
            sn = math.sin(h)
            b0 = math.cos(h)
            b1, b2, b3 = sn * a0, sn * a1, sn * a2
            r0 = P0 * b0 - P1 * b1 - P2 * b2 - P3 * b3
            r1 = P0 * b1 + P1 * b0 + P2 * b3 - P3 * b2
            r2 = P0 * b2 - P1 * b3 + P2 * b0 + P3 * b1
            r3 = P0 * b3 + P1 * b2 - P2 * b1 + P3 * b0
        if jt != REVOLUTE:
            # + Ad(P) (d axis): the joint's translation along its axis, in F_λ
            vx, vy, vz = d * a0, d * a1, d * a2
            tx = 2.0 * (P2 * vz - P3 * vy)
            ty = 2.0 * (P3 * vx - P1 * vz)
            tz = 2.0 * (P1 * vy - P2 * vx)
            t0 += vx + P0 * tx + (P2 * tz - P3 * ty)
            t1 += vy + P0 * ty + (P3 * tx - P1 * tz)
            t2 += vz + P0 * tz + (P1 * ty - P2 * tx)
        return r0, r1, r2, r3, t0, t1, t2
    ax[0], ax[1], ax[2] = mf[i, MF_AXIS], mf[i, MF_AXIS + 1], mf[i, MF_AXIS + 2]
    joint_transform(jt, ax, mf[i, MF_PITCH], q, mi[i, MI_IQ], mf[i, MF_SCALE],
                    mf[i, MF_OFFSET], xj)
    for k in range(8):
        xl[k] = mf[i, k]
    dq_mul(xl, xj, xj)  # (dq_mul reads both inputs before writing)
    r0, r1, r2, r3 = xj[0], xj[1], xj[2], xj[3]
    D0, D1, D2, D3 = xj[4], xj[5], xj[6], xj[7]
    t0 = 2.0 * (-D0 * r1 + D1 * r0 - D2 * r3 + D3 * r2)
    t1 = 2.0 * (-D0 * r2 + D1 * r3 + D2 * r0 - D3 * r1)
    t2 = 2.0 * (-D0 * r3 - D1 * r2 + D2 * r1 + D3 * r0)
    return r0, r1, r2, r3, t0, t1, t2


@jit
def joint_twist(mi, mf, i, q, x, ax, out):
    """``out = Ad(x_i^{c_i}) (S_i(q) x_i)``: the joint twist (``x = v``) or its ``S a`` part
    (``x = a``) moved to the CoM of body ``i`` [Silva2022, Table 1]; mimic joints scale."""
    jt = mi[i, MI_JTYPE]
    if jt == REVOLUTE or jt == PRISMATIC or jt == HELICAL:
        w = mf[i, MF_SCALE] * x[mi[i, MI_IV]]
        a0, a1, a2 = w * mf[i, MF_AXIS], w * mf[i, MF_AXIS + 1], w * mf[i, MF_AXIS + 2]
        if jt == PRISMATIC:
            out[0] = out[1] = out[2] = 0.0
            out[3], out[4], out[5] = a0, a1, a2
            return
        h = mf[i, MF_PITCH] if jt == HELICAL else 0.0
        out[0], out[1], out[2] = a0, a1, a2
        out[3], out[4], out[5] = h * a0, h * a1, h * a2
    else:
        ax[0], ax[1], ax[2] = mf[i, MF_AXIS], mf[i, MF_AXIS + 1], mf[i, MF_AXIS + 2]
        joint_velocity(jt, ax, mf[i, MF_PITCH], q, mi[i, MI_IQ], x, mi[i, MI_IV],
                       mf[i, MF_SCALE], out)
    # to the CoM: b += a × c
    cx, cy, cz = mf[i, MF_COM], mf[i, MF_COM + 1], mf[i, MF_COM + 2]
    a0, a1, a2 = out[0], out[1], out[2]
    out[3] += a1 * cz - a2 * cy
    out[4] += a2 * cx - a0 * cz
    out[5] += a0 * cy - a1 * cx
