"""Batched `rnea` over blocks of states: the dqNE recursion on ``LANES`` states at once.

The recursion is the one of `dqdyn.dynamics.newton_euler` ([Silva2022, eqs. (16)–(30)];
trees: [Silva2022thesis, eqs. (4.38)–(4.39)]), run on a block of ``LANES`` states together: every
per-body quantity is stored structure-of-arrays, the state index innermost (``ws[i, c ·
LANES + l]`` for column ``c`` of body ``i`` and lane ``l``), and every step of a
body is a loop over the lanes without branches, which LLVM turns into vector instructions (four
lanes per AVX2 register of the pinned ``x86-64-v3`` target, so the same code and the same
bits on AVX2 and AVX-512 machines).  The joint type only selects which lane loops run for a
body; it is never tested inside one.

**Bits.**  Each lane evaluates the same expressions, in the same association order, as the
single-state kernel `dqdyn.dynamics.newton_euler.ne_core`; neither kernel allows ``fastmath``,
so LLVM contracts no ``a·b + c`` into an FMA and reorders no sum, and a vector ``mulpd`` /
``addpd`` rounds each lane as the scalar instruction does.  The sines and cosines of the joint
angles are the same libm calls, one lane at a time.  So a state's ``τ`` from the lanes is
bit-identical to the single-state kernel's (``tests/dynamics/test_lanes.py`` checks
``array_equal``), and batched and single results stay bit-identical as `dqdyn._engine.batching`
promises.

Supported: chains and trees of revolute, prismatic and helical joints, mimic joints among
those, free joints (a floating base: ``q`` its unit dual quaternion, ``v`` its body twist
``[ω, v]``, as in `dqdyn.multibody.joints`; the lanes compose the placement with it by the
dual quaternion product of `dqdyn.algebra._core.dq_mul` and project onto its six unit columns
as `newton_euler.ne_backward` does, expression for expression), joint armature; no external
wrenches.  `lanes_support` tells; `dqdyn.rnea` uses the lanes for batches of such models
without ``fext`` and the per-state kernel otherwise.
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np

from dqdyn._engine.batching import BLOCKS, LANES, run_chunked
from dqdyn._engine.boundary import BAD_A_FINITE, BAD_OVERFLOW, OK, check_state, raise_status
from dqdyn._engine.jit import kernel
from dqdyn._engine.views import unmanaged
from dqdyn.algebra._core import jit
from dqdyn.multibody.joints import FREE, HELICAL, PRISMATIC, REVOLUTE
from dqdyn.multibody.model import (
    MF_ARMATURE,
    MF_AXIS,
    MF_COM,
    MF_INERTIA,
    MF_MASS,
    MF_OFFSET,
    MF_PITCH,
    MF_SCALE,
    MI_IQ,
    MI_IV,
    MI_JTYPE,
    MI_NV,
    MI_PARENT,
    Model,
)

njit = kernel(error_model="numpy")
pjit = kernel(parallel=True, error_model="numpy")

L = LANES

# lane workspace columns per body (each holds LANES values)
W_R = 0  # Ad(r) of x_{c_i}^{c_λ}, row-major (9)
W_P = 9  # translation of x_{c_i}^{c_λ} (3)
W_XI = 12  # ξ_{0,c_i}^{c_i} (6)
W_XID = 18  # ξ̇_{0,c_i}^{c_i} (6)
W_ZETA = 24  # ζ_i (6)
W_G = 30  # g^{c_i} (3)
W_COLS = 33
# block scratch ``S`` (LANES values per column): the arithmetic loops read and write only
# ``S`` (one array, at offsets known at compile time), so LLVM vectorises them without the
# run-time overlap checks it refuses in loops of so few iterations; flat copies move the rows
# of a body and of its parent between ``ws`` and ``S``
S_ROW = 0  # the body's row, as in ws (W_COLS)
S_PAR = W_COLS  # its parent's row (W_COLS)
S_POSE = 2 * W_COLS  # r0..r3, t0..t2 of x_i^λ (7)
S_J = S_POSE + 7  # a joint twist at the CoM (6)
S_Z = S_J + 6  # ζ_i of the body being projected (6)
S_X = S_Z + 6  # one joint coordinate (1)
S_T = S_X + 1  # what the body adds into τ (1) and into its parent's ζ (6)
S_QF = S_T + 7  # a free joint's coordinates: its unit dual quaternion (8)
S_COLS = S_QF + 8
RL = S_ROW * L
PL = S_PAR * L

_EMPTY2 = np.empty((0, 6))  # (no external wrenches: the checks of newton_euler.ne_check)

#: the joint types the lanes run
SUPPORTED = (REVOLUTE, PRISMATIC, HELICAL, FREE)


def lanes_support(model: Model) -> bool:
    """Whether `rnea_lanes` runs ``model``: every joint revolute, prismatic, helical (mimic
    joints included) or free (a floating base; a model has no fixed joints, the builder merges
    welded bodies)."""
    jt = model.mi[1:, MI_JTYPE]  # (REVOLUTE, PRISMATIC, HELICAL = 1, 2, 3: a range test, 2 µs)
    return bool((((jt >= REVOLUTE) & (jt <= HELICAL)) | (jt == FREE)).all())


# ------------------------------------------------------------------------ one block, per stage
@jit
def _pose(mi, mf, i, qT, S):
    """``S[S_POSE…]``: ``x_i^λ = x_{J_i}^λ · x_J(q_i)`` as (r, t) per lane, the expressions of
    `dqdyn.dynamics.newton_euler.joint_pose`."""
    jt = mi[i, MI_JTYPE]
    P0, P1, P2, P3 = mf[i, 0], mf[i, 1], mf[i, 2], mf[i, 3]
    D0, D1, D2, D3 = mf[i, 4], mf[i, 5], mf[i, 6], mf[i, 7]
    o = S_POSE * L
    t0 = 2.0 * (-D0 * P1 + D1 * P0 - D2 * P3 + D3 * P2)
    t1 = 2.0 * (-D0 * P2 + D1 * P3 + D2 * P0 - D3 * P1)
    t2 = 2.0 * (-D0 * P3 - D1 * P2 + D2 * P1 + D3 * P0)
    scale, offset, pitch = mf[i, MF_SCALE], mf[i, MF_OFFSET], mf[i, MF_PITCH]
    a0, a1, a2 = mf[i, MF_AXIS], mf[i, MF_AXIS + 1], mf[i, MF_AXIS + 2]
    iq = mi[i, MI_IQ]
    if jt == FREE:
        # x_J(q) = q, the joint's unit dual quaternion: x_i^λ = x_J^λ q (`dqdyn.algebra._core.
        # dq_mul`), then t = 2 D r*, the expressions of the generic branch of `joint_pose`
        for k in range(8):
            for l in range(L):
                S[(S_QF + k) * L + l] = qT[iq + k, l]
        for l in range(L):
            b0, b1, b2, b3 = (S[S_QF * L + l], S[(S_QF + 1) * L + l], S[(S_QF + 2) * L + l],
                              S[(S_QF + 3) * L + l])
            b4, b5, b6, b7 = (S[(S_QF + 4) * L + l], S[(S_QF + 5) * L + l], S[(S_QF + 6) * L + l],
                              S[(S_QF + 7) * L + l])
            r0 = P0 * b0 - P1 * b1 - P2 * b2 - P3 * b3
            r1 = P0 * b1 + P1 * b0 + P2 * b3 - P3 * b2
            r2 = P0 * b2 - P1 * b3 + P2 * b0 + P3 * b1
            r3 = P0 * b3 + P1 * b2 - P2 * b1 + P3 * b0
            d0 = (P0 * b4 - P1 * b5 - P2 * b6 - P3 * b7) + (D0 * b0 - D1 * b1 - D2 * b2 - D3 * b3)
            d1 = (P0 * b5 + P1 * b4 + P2 * b7 - P3 * b6) + (D0 * b1 + D1 * b0 + D2 * b3 - D3 * b2)
            d2 = (P0 * b6 - P1 * b7 + P2 * b4 + P3 * b5) + (D0 * b2 - D1 * b3 + D2 * b0 + D3 * b1)
            d3 = (P0 * b7 + P1 * b6 - P2 * b5 + P3 * b4) + (D0 * b3 + D1 * b2 - D2 * b1 + D3 * b0)
            S[o + l], S[o + L + l], S[o + 2 * L + l], S[o + 3 * L + l] = r0, r1, r2, r3
            S[o + 4 * L + l] = 2.0 * (-d0 * r1 + d1 * r0 - d2 * r3 + d3 * r2)
            S[o + 5 * L + l] = 2.0 * (-d0 * r2 + d1 * r3 + d2 * r0 - d3 * r1)
            S[o + 6 * L + l] = 2.0 * (-d0 * r3 - d1 * r2 + d2 * r1 + d3 * r0)
        return
    for l in range(L):
        S[S_X * L + l] = qT[iq, l]
    if jt == PRISMATIC:
        for l in range(L):
            d = scale * S[S_X * L + l] + offset
            vx, vy, vz = d * a0, d * a1, d * a2
            tx = 2.0 * (P2 * vz - P3 * vy)
            ty = 2.0 * (P3 * vx - P1 * vz)
            tz = 2.0 * (P1 * vy - P2 * vx)
            S[o + l], S[o + L + l], S[o + 2 * L + l], S[o + 3 * L + l] = P0, P1, P2, P3
            S[o + 4 * L + l] = t0 + (vx + P0 * tx + (P2 * tz - P3 * ty))
            S[o + 5 * L + l] = t1 + (vy + P0 * ty + (P3 * tx - P1 * tz))
            S[o + 6 * L + l] = t2 + (vz + P0 * tz + (P1 * ty - P2 * tx))
        return
    # revolute / helical: the half-angle sines and cosines, one libm call per lane
    for l in range(L):
        h = 0.5 * (scale * S[S_X * L + l] + offset)
        S[o + 4 * L + l] = math.sin(h)
        S[o + 5 * L + l] = math.cos(h)
    for l in range(L):
        sn, b0 = S[o + 4 * L + l], S[o + 5 * L + l]
        b1, b2, b3 = sn * a0, sn * a1, sn * a2
        S[o + l] = P0 * b0 - P1 * b1 - P2 * b2 - P3 * b3
        S[o + L + l] = P0 * b1 + P1 * b0 + P2 * b3 - P3 * b2
        S[o + 2 * L + l] = P0 * b2 - P1 * b3 + P2 * b0 + P3 * b1
        S[o + 3 * L + l] = P0 * b3 + P1 * b2 - P2 * b1 + P3 * b0
        S[o + 4 * L + l], S[o + 5 * L + l], S[o + 6 * L + l] = t0, t1, t2
    if jt == HELICAL:
        for l in range(L):
            d = pitch * (scale * S[S_X * L + l] + offset)
            vx, vy, vz = d * a0, d * a1, d * a2
            tx = 2.0 * (P2 * vz - P3 * vy)
            ty = 2.0 * (P3 * vx - P1 * vz)
            tz = 2.0 * (P1 * vy - P2 * vx)
            S[o + 4 * L + l] = t0 + (vx + P0 * tx + (P2 * tz - P3 * ty))
            S[o + 5 * L + l] = t1 + (vy + P0 * ty + (P3 * tx - P1 * tz))
            S[o + 6 * L + l] = t2 + (vz + P0 * tz + (P1 * ty - P2 * tx))


@jit
def _joint_twist(mi, mf, i, xT, S):
    """``S[S_J…] = Ad(x_i^{c_i}) (S_i x_i)`` per lane (`newton_euler.joint_twist`)."""
    jt = mi[i, MI_JTYPE]
    o = S_J * L
    cx, cy, cz = mf[i, MF_COM], mf[i, MF_COM + 1], mf[i, MF_COM + 2]
    scale = mf[i, MF_SCALE]
    ax0, ax1, ax2 = mf[i, MF_AXIS], mf[i, MF_AXIS + 1], mf[i, MF_AXIS + 2]
    iv = mi[i, MI_IV]
    if jt == FREE:
        # S x = x, the body twist [ω, v] (`joint_velocity`: no scale), then v += ω × c
        for k in range(6):
            for l in range(L):
                S[o + k * L + l] = xT[iv + k, l]
        for l in range(L):
            a0, a1, a2 = S[o + l], S[o + L + l], S[o + 2 * L + l]
            S[o + 3 * L + l] += a1 * cz - a2 * cy
            S[o + 4 * L + l] += a2 * cx - a0 * cz
            S[o + 5 * L + l] += a0 * cy - a1 * cx
        return
    for l in range(L):
        S[S_X * L + l] = xT[iv, l]
    if jt == PRISMATIC:
        for l in range(L):
            w = scale * S[S_X * L + l]
            S[o + l] = S[o + L + l] = S[o + 2 * L + l] = 0.0
            S[o + 3 * L + l] = w * ax0 + (0.0 * cz - 0.0 * cy)
            S[o + 4 * L + l] = w * ax1 + (0.0 * cx - 0.0 * cz)
            S[o + 5 * L + l] = w * ax2 + (0.0 * cy - 0.0 * cx)
        return
    h = mf[i, MF_PITCH] if jt == HELICAL else 0.0
    for l in range(L):
        w = scale * S[S_X * L + l]
        a0, a1, a2 = w * ax0, w * ax1, w * ax2
        S[o + l], S[o + L + l], S[o + 2 * L + l] = a0, a1, a2
        S[o + 3 * L + l] = h * a0 + (a1 * cz - a2 * cy)
        S[o + 4 * L + l] = h * a1 + (a2 * cx - a0 * cz)
        S[o + 5 * L + l] = h * a2 + (a0 * cy - a1 * cx)


@jit
def _forward(mi, mf, g, qT, vT, aT, has_v, has_a, ws, S):
    """`newton_euler.ne_forward` on a block: lane columns of every body in ``ws``."""
    nb1 = mi.shape[0]
    for k in range(W_COLS * L):
        ws[0, k] = 0.0
    for l in range(L):
        ws[0, W_G * L + l] = g[0]
        ws[0, (W_G + 1) * L + l] = g[1]
        ws[0, (W_G + 2) * L + l] = g[2]
    for i in range(1, nb1):
        lam = mi[i, MI_PARENT]
        for k in range(W_XI * L, W_COLS * L):  # (the parent's ξ, ξ̇, ζ, g)
            S[PL + k] = ws[lam, k]
        _pose(mi, mf, i, qT, S)
        cx, cy, cz = mf[i, MF_COM], mf[i, MF_COM + 1], mf[i, MF_COM + 2]
        lx, ly, lz = mf[lam, MF_COM], mf[lam, MF_COM + 1], mf[lam, MF_COM + 2]
        for l in range(L):
            o = S_POSE * L
            r0, r1, r2, r3 = S[o + l], S[o + L + l], S[o + 2 * L + l], S[o + 3 * L + l]
            t0, t1, t2 = S[o + 4 * L + l], S[o + 5 * L + l], S[o + 6 * L + l]
            x2, y2, z2 = 2.0 * r1, 2.0 * r2, 2.0 * r3
            xx, yy, zz = r1 * x2, r2 * y2, r3 * z2
            xy, xz, yz = r1 * y2, r1 * z2, r2 * z2
            wx, wy, wz = r0 * x2, r0 * y2, r0 * z2
            R0 = 1.0 - (yy + zz)
            R1 = xy - wz
            R2 = xz + wy
            R3 = xy + wz
            R4 = 1.0 - (xx + zz)
            R5 = yz - wx
            R6 = xz - wy
            R7 = yz + wx
            R8 = 1.0 - (xx + yy)
            S[RL + (W_R + 0) * L + l] = R0
            S[RL + (W_R + 1) * L + l] = R1
            S[RL + (W_R + 2) * L + l] = R2
            S[RL + (W_R + 3) * L + l] = R3
            S[RL + (W_R + 4) * L + l] = R4
            S[RL + (W_R + 5) * L + l] = R5
            S[RL + (W_R + 6) * L + l] = R6
            S[RL + (W_R + 7) * L + l] = R7
            S[RL + (W_R + 8) * L + l] = R8
            p0 = t0 + R0 * cx + R1 * cy + R2 * cz - lx
            p1 = t1 + R3 * cx + R4 * cy + R5 * cz - ly
            p2 = t2 + R6 * cx + R7 * cy + R8 * cz - lz
            S[RL + W_P * L + l] = p0
            S[RL + (W_P + 1) * L + l] = p1
            S[RL + (W_P + 2) * L + l] = p2
            g0, g1, g2 = S[PL + W_G * L + l], S[PL + (W_G + 1) * L + l], S[PL + (W_G + 2) * L + l]
            S[RL + W_G * L + l] = R0 * g0 + R3 * g1 + R6 * g2
            S[RL + (W_G + 1) * L + l] = R1 * g0 + R4 * g1 + R7 * g2
            S[RL + (W_G + 2) * L + l] = R2 * g0 + R5 * g1 + R8 * g2
            e0, e1, e2 = S[PL + W_XID * L + l], S[PL + (W_XID + 1) * L + l], S[PL + (W_XID + 2) * L + l]
            f0 = S[PL + (W_XID + 3) * L + l] - (p1 * e2 - p2 * e1)
            f1 = S[PL + (W_XID + 4) * L + l] - (p2 * e0 - p0 * e2)
            f2 = S[PL + (W_XID + 5) * L + l] - (p0 * e1 - p1 * e0)
            S[RL + W_XID * L + l] = R0 * e0 + R3 * e1 + R6 * e2
            S[RL + (W_XID + 1) * L + l] = R1 * e0 + R4 * e1 + R7 * e2
            S[RL + (W_XID + 2) * L + l] = R2 * e0 + R5 * e1 + R8 * e2
            S[RL + (W_XID + 3) * L + l] = R0 * f0 + R3 * f1 + R6 * f2
            S[RL + (W_XID + 4) * L + l] = R1 * f0 + R4 * f1 + R7 * f2
            S[RL + (W_XID + 5) * L + l] = R2 * f0 + R5 * f1 + R8 * f2
        if has_a:
            _joint_twist(mi, mf, i, aT, S)
            for k in range(6):
                for l in range(L):
                    S[RL + (W_XID + k) * L + l] += S[(S_J + k) * L + l]
        if has_v:
            _joint_twist(mi, mf, i, vT, S)
            for l in range(L):
                R0, R1, R2 = S[RL + W_R * L + l], S[RL + (W_R + 1) * L + l], S[RL + (W_R + 2) * L + l]
                R3, R4, R5 = S[RL + (W_R + 3) * L + l], S[RL + (W_R + 4) * L + l], S[RL + (W_R + 5) * L + l]
                R6, R7, R8 = S[RL + (W_R + 6) * L + l], S[RL + (W_R + 7) * L + l], S[RL + (W_R + 8) * L + l]
                p0, p1, p2 = S[RL + W_P * L + l], S[RL + (W_P + 1) * L + l], S[RL + (W_P + 2) * L + l]
                e0, e1, e2 = S[PL + W_XI * L + l], S[PL + (W_XI + 1) * L + l], S[PL + (W_XI + 2) * L + l]
                f0 = S[PL + (W_XI + 3) * L + l] - (p1 * e2 - p2 * e1)
                f1 = S[PL + (W_XI + 4) * L + l] - (p2 * e0 - p0 * e2)
                f2 = S[PL + (W_XI + 5) * L + l] - (p0 * e1 - p1 * e0)
                A0 = R0 * e0 + R3 * e1 + R6 * e2
                A1 = R1 * e0 + R4 * e1 + R7 * e2
                A2 = R2 * e0 + R5 * e1 + R8 * e2
                A3 = R0 * f0 + R3 * f1 + R6 * f2
                A4 = R1 * f0 + R4 * f1 + R7 * f2
                A5 = R2 * f0 + R5 * f1 + R8 * f2
                s0, s1, s2 = S[S_J * L + l], S[(S_J + 1) * L + l], S[(S_J + 2) * L + l]
                s3, s4, s5 = S[(S_J + 3) * L + l], S[(S_J + 4) * L + l], S[(S_J + 5) * L + l]
                S[RL + W_XI * L + l] = A0 + s0
                S[RL + (W_XI + 1) * L + l] = A1 + s1
                S[RL + (W_XI + 2) * L + l] = A2 + s2
                S[RL + (W_XI + 3) * L + l] = A3 + s3
                S[RL + (W_XI + 4) * L + l] = A4 + s4
                S[RL + (W_XI + 5) * L + l] = A5 + s5
                S[RL + W_XID * L + l] += A1 * s2 - A2 * s1
                S[RL + (W_XID + 1) * L + l] += A2 * s0 - A0 * s2
                S[RL + (W_XID + 2) * L + l] += A0 * s1 - A1 * s0
                S[RL + (W_XID + 3) * L + l] += (A1 * s5 - A2 * s4) + (A4 * s2 - A5 * s1)
                S[RL + (W_XID + 4) * L + l] += (A2 * s3 - A0 * s5) + (A5 * s0 - A3 * s2)
                S[RL + (W_XID + 5) * L + l] += (A0 * s4 - A1 * s3) + (A3 * s1 - A4 * s0)
        else:
            for k in range(6 * L):
                S[RL + W_XI * L + k] = 0.0
        for k in range(6 * L):
            S[RL + W_ZETA * L + k] = 0.0
        for k in range(W_COLS * L):
            ws[i, k] = S[RL + k]


@jit
def _backward(mi, mf, ws, tauT, S):
    """`newton_euler.ne_backward` on a block (no external wrenches) into ``tauT`` (zeroed)."""
    nb1 = mi.shape[0]
    for i in range(nb1 - 1, 0, -1):
        lam = mi[i, MI_PARENT]
        for k in range(W_COLS * L):
            S[RL + k] = ws[i, k]
        m = mf[i, MF_MASS]
        cx, cy, cz = mf[i, MF_COM], mf[i, MF_COM + 1], mf[i, MF_COM + 2]
        I0, I1, I2 = mf[i, MF_INERTIA], mf[i, MF_INERTIA + 1], mf[i, MF_INERTIA + 2]
        I3, I4, I5 = mf[i, MF_INERTIA + 3], mf[i, MF_INERTIA + 4], mf[i, MF_INERTIA + 5]
        I6, I7, I8 = mf[i, MF_INERTIA + 6], mf[i, MF_INERTIA + 7], mf[i, MF_INERTIA + 8]
        for l in range(L):
            w0, w1, w2 = S[RL + W_XI * L + l], S[RL + (W_XI + 1) * L + l], S[RL + (W_XI + 2) * L + l]
            u0, u1, u2 = S[RL + (W_XI + 3) * L + l], S[RL + (W_XI + 4) * L + l], S[RL + (W_XI + 5) * L + l]
            e0, e1, e2 = S[RL + W_XID * L + l], S[RL + (W_XID + 1) * L + l], S[RL + (W_XID + 2) * L + l]
            z0 = S[RL + W_ZETA * L + l] + m * (S[RL + (W_XID + 3) * L + l] + (w1 * u2 - w2 * u1)
                                               - S[RL + W_G * L + l])
            z1 = S[RL + (W_ZETA + 1) * L + l] + m * (S[RL + (W_XID + 4) * L + l] + (w2 * u0 - w0 * u2)
                                                     - S[RL + (W_G + 1) * L + l])
            z2 = S[RL + (W_ZETA + 2) * L + l] + m * (S[RL + (W_XID + 5) * L + l] + (w0 * u1 - w1 * u0)
                                                     - S[RL + (W_G + 2) * L + l])
            l0 = I0 * w0 + I1 * w1 + I2 * w2
            l1 = I3 * w0 + I4 * w1 + I5 * w2
            l2 = I6 * w0 + I7 * w1 + I8 * w2
            z3 = S[RL + (W_ZETA + 3) * L + l] + I0 * e0 + I1 * e1 + I2 * e2 + (w1 * l2 - w2 * l1)
            z4 = S[RL + (W_ZETA + 4) * L + l] + I3 * e0 + I4 * e1 + I5 * e2 + (w2 * l0 - w0 * l2)
            z5 = S[RL + (W_ZETA + 5) * L + l] + I6 * e0 + I7 * e1 + I8 * e2 + (w0 * l1 - w1 * l0)
            S[S_Z * L + l], S[(S_Z + 1) * L + l], S[(S_Z + 2) * L + l] = z0, z1, z2
            S[(S_Z + 3) * L + l], S[(S_Z + 4) * L + l], S[(S_Z + 5) * L + l] = z3, z4, z5
        # eq. (30): Q = ⟨Ad(x_i^{c_i}) S_i, ζ_i⟩
        jt = mi[i, MI_JTYPE]
        iv = mi[i, MI_IV]
        scale = mf[i, MF_SCALE]
        a0, a1, a2 = mf[i, MF_AXIS], mf[i, MF_AXIS + 1], mf[i, MF_AXIS + 2]
        if jt == FREE:
            # column k of S is the unit twist e_k, moved to the CoM as `ne_backward`'s generic
            # branch does (`joint_column`, then col[3:6] += col[0:3] × c): the same scalars
            for k in range(6):
                c0 = 1.0 if k == 0 else 0.0
                c1 = 1.0 if k == 1 else 0.0
                c2 = 1.0 if k == 2 else 0.0
                c3 = (1.0 if k == 3 else 0.0) + (c1 * cz - c2 * cy)
                c4 = (1.0 if k == 4 else 0.0) + (c2 * cx - c0 * cz)
                c5 = (1.0 if k == 5 else 0.0) + (c0 * cy - c1 * cx)
                for l in range(L):
                    S[S_T * L + l] = scale * (c0 * S[(S_Z + 3) * L + l] + c1 * S[(S_Z + 4) * L + l]
                                             + c2 * S[(S_Z + 5) * L + l] + c3 * S[S_Z * L + l]
                                             + c4 * S[(S_Z + 1) * L + l] + c5 * S[(S_Z + 2) * L + l])
                for l in range(L):
                    tauT[iv + k, l] += S[S_T * L + l]
        elif jt == PRISMATIC:
            for l in range(L):
                S[S_T * L + l] = scale * (a0 * S[S_Z * L + l] + a1 * S[(S_Z + 1) * L + l]
                                         + a2 * S[(S_Z + 2) * L + l])
        else:
            b0 = a1 * cz - a2 * cy
            b1 = a2 * cx - a0 * cz
            b2 = a0 * cy - a1 * cx
            if jt == HELICAL:
                h = mf[i, MF_PITCH]
                b0 += h * a0
                b1 += h * a1
                b2 += h * a2
            for l in range(L):
                S[S_T * L + l] = scale * (a0 * S[(S_Z + 3) * L + l] + a1 * S[(S_Z + 4) * L + l]
                                         + a2 * S[(S_Z + 5) * L + l] + b0 * S[S_Z * L + l]
                                         + b1 * S[(S_Z + 1) * L + l] + b2 * S[(S_Z + 2) * L + l])
        if jt != FREE:
            for l in range(L):
                tauT[iv, l] += S[S_T * L + l]
        # eq. (29) / (4.39): ζ_λ += Ad(x_{c_i}^{c_λ}) ζ_i
        for l in range(L):
            z0, z1, z2 = S[S_Z * L + l], S[(S_Z + 1) * L + l], S[(S_Z + 2) * L + l]
            z3, z4, z5 = S[(S_Z + 3) * L + l], S[(S_Z + 4) * L + l], S[(S_Z + 5) * L + l]
            R0, R1, R2 = S[RL + W_R * L + l], S[RL + (W_R + 1) * L + l], S[RL + (W_R + 2) * L + l]
            R3, R4, R5 = S[RL + (W_R + 3) * L + l], S[RL + (W_R + 4) * L + l], S[RL + (W_R + 5) * L + l]
            R6, R7, R8 = S[RL + (W_R + 6) * L + l], S[RL + (W_R + 7) * L + l], S[RL + (W_R + 8) * L + l]
            p0, p1, p2 = S[RL + W_P * L + l], S[RL + (W_P + 1) * L + l], S[RL + (W_P + 2) * L + l]
            f0 = R0 * z0 + R1 * z1 + R2 * z2
            f1 = R3 * z0 + R4 * z1 + R5 * z2
            f2 = R6 * z0 + R7 * z1 + R8 * z2
            o = (S_T + 1) * L
            S[o + l] = f0
            S[o + L + l] = f1
            S[o + 2 * L + l] = f2
            S[o + 3 * L + l] = R0 * z3 + R1 * z4 + R2 * z5 + (p1 * f2 - p2 * f1)
            S[o + 4 * L + l] = R3 * z3 + R4 * z4 + R5 * z5 + (p2 * f0 - p0 * f2)
            S[o + 5 * L + l] = R6 * z3 + R7 * z4 + R8 * z5 + (p0 * f1 - p1 * f0)
        for k in range(6 * L):
            ws[lam, W_ZETA * L + k] += S[(S_T + 1) * L + k]


# ------------------------------------------------------------------------ batch drivers
@njit
def rnea_lanes_rows(mi, mf, g, Q, V, A, TAU, status, s, e):
    """States ``s`` to ``e`` of `rnea_lanes_batch`, ``LANES`` at a time on one workspace (the
    last block padded with copies of its last state, whose results are dropped)."""
    mi, mf, g, Q, V, A = (unmanaged(mi), unmanaged(mf), unmanaged(g), unmanaged(Q), unmanaged(V),
                          unmanaged(A))
    TAU, status = unmanaged(TAU), unmanaged(status)
    nb1 = mi.shape[0]
    nq, nv = Q.shape[1], TAU.shape[1]
    has_v, has_a = V.shape[1] > 0, A.shape[1] > 0
    bv, ba = V.shape[0] > 1, A.shape[0] > 1
    ws = np.empty((nb1, W_COLS * L))
    S = np.empty(S_COLS * L)
    qT = np.empty((max(nq, 1), L))
    vT = np.empty((max(nv, 1), L))
    aT = np.empty((max(nv, 1), L))
    tauT = np.empty((max(nv, 1), L))
    z = np.int64(0)
    for b in range(s, e, L):
        for l in range(L):
            k = min(b + l, e - 1)
            kv = k if bv else z
            ka = k if ba else z
            for j in range(nq):
                qT[j, l] = Q[k, j]
            if has_v:
                for j in range(nv):
                    vT[j, l] = V[kv, j]
            if has_a:
                for j in range(nv):
                    aT[j, l] = A[ka, j]
            if b + l < e:
                status[b + l] = check_state(mi, Q[k], V[kv], A[ka], BAD_A_FINITE, _EMPTY2, False)
        _forward(mi, mf, g, qT, vT, aT, has_v, has_a, ws, S)
        for j in range(nv):
            for l in range(L):
                tauT[j, l] = 0.0
        _backward(mi, mf, ws, tauT, S)
        if has_a:
            for i in range(1, nb1):
                ov = mi[i, MI_IV]
                for c in range(mi[i, MI_NV]):
                    r = mf[i, MF_ARMATURE + c]
                    if r != 0.0:
                        for l in range(L):
                            tauT[ov + c, l] += r * aT[ov + c, l]
        for l in range(min(L, e - b)):
            k = b + l
            for j in range(nv):
                TAU[k, j] = tauT[j, l]
            if status[k] == OK:
                for j in range(nv):
                    if not math.isfinite(tauT[j, l]):
                        status[k] = BAD_OVERFLOW
                        break


@pjit
def rnea_lanes_batch(mi, mf, g, Q, V, A, TAU, status):
    """`rnea` of states ``Q``, ``V``, ``A`` (rows, or one row shared: ``V`` / ``A`` with no
    columns mean zero) into ``TAU``, blocks of ``LANES`` states spread over the threads."""
    N = np.int64(Q.shape[0])
    nl = (N + L - 1) // L
    nblk = min(nl, BLOCKS)
    for b in nb.prange(nblk):
        rnea_lanes_rows(mi, mf, g, Q, V, A, TAU, status, (b * nl // nblk) * L,
                        min(N, ((b + 1) * nl // nblk) * L))


# =============================================================================== public
def rnea_lanes(model: Model, Q, V, A, out) -> np.ndarray:
    """``out = rnea(model, Q, V, A)`` for a batch, ``LANES`` states at a time.

    ``Q`` (N, nq), ``V`` / ``A`` (N, nv) or (1, nv) (shared by every state), ``out`` (N, nv):
    float64, C-contiguous, shapes checked by the caller; the model must satisfy
    `lanes_support`.  Bit-identical to the single-state `dqdyn.rnea` (module docstring);
    raises as it does for a state that is not finite (naming the batch element).
    """
    N = Q.shape[0]
    run_chunked(rnea_lanes_batch, (model.mi, model.mf, model.gravity), [Q, V, A], [out], N,
                (1, 2), lambda st, row: raise_status(model, st, row))
    return out


__all__ = ["LANES", "lanes_support", "rnea_lanes"]
