"""Batched `aba` over blocks of states: the articulated-body algorithm on ``LANES`` states at once.

The recursion is the one of `dqdyn.dynamics.aba` ([Kim2012, Table 3], the sweep of
`dqdyn.dynamics.hybrid.hybrid_kernel` with no prescribed DoF and no external force), run on a
block of ``LANES`` states together in the structure-of-arrays layout of
`dqdyn.dynamics.lanes`: every per-body quantity of the articulated-body kernels (``x_i^λ``,
``V_i``, ``η_i``, ``Î_i``, ``B̂_i``, ``U_i``, ``D_i⁻¹``, ``u_i``, ``V̇_i``) is stored with the state
index innermost (``ws[i, c · LANES + l]``), and the arithmetic of a body is a loop over the
lanes without branches on one scratch array ``S`` at offsets known at compile time (the
body's row and its parent's copied in and out), which LLVM turns into vector instructions.

**Bits.**  Each lane evaluates the expressions of the single-state kernel, in the same
association order: the pose of `dqdyn.dynamics.lanes._pose` (that of `newton_euler`), the
twist and bias of `hybrid._velocity_pass`, ``U = Î S``, ``D``, ``Π = Î − U D⁻¹ Uᵀ`` and the moves
to the parent of `articulated._ia_apply`, `_pi_1dof`, `_inertia_to_parent`,
`_wrench_to_parent`, the accelerations of `hybrid._acceleration_pass`; a free joint's
``6 × 6`` block is factored and solved by the loops of `dqdyn._engine.linalg.chol_factor` and
`chol_solve`, lane by lane.  Constant motion axes enter as the same constants (a product by
``0.0`` included: without ``fastmath`` LLVM folds none of them, nor contracts ``a·b + c``
into an FMA).  The one division ``1 / D`` per 1-DoF joint, the divisions and square roots of the
Cholesky factor are correctly rounded IEEE operations in the vector unit as in the scalar
one, so a state's ``q̈`` from the lanes is bit-identical to the single-state `dqdyn.aba`
(``tests/dynamics/test_lanes_aba.py`` checks ``array_equal``).

Supported (`lanes_aba_support`): the models of `dqdyn.dynamics.lanes.lanes_support` (revolute,
prismatic, helical and free joints, armature) without mimic joints (`aba` of a model with
mimic joints solves the reduced system instead, whose ``h`` already runs in the lanes of
`rnea`); no external wrenches.  `dqdyn.aba` uses the lanes for batches of 16 states or more of
such models without ``fext`` and the per-state kernel otherwise.
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np

from dqdyn._engine.batching import BLOCKS
from dqdyn._engine.boundary import BAD_TAU_FINITE, OK, check_state
from dqdyn._engine.views import unmanaged
from dqdyn.algebra._core import jit
from dqdyn.dynamics.articulated import (
    K_COLS,
    K_I,
    SINGULAR,
    TINY_PIVOT,
    _axis6,
    _rigid_inertia,
    _sym_congruence,
    njit,
    pjit,
)
from dqdyn.dynamics.lanes import _EMPTY2, LANES, S_COLS, S_POSE, S_X, _pose, lanes_support
from dqdyn.multibody.joints import FREE
from dqdyn.multibody.model import (
    MF_ARMATURE,
    MF_COM,
    MF_GRAVITY,
    MF_INERTIA,
    MF_MASS,
    MI_IV,
    MI_JTYPE,
    MI_PARENT,
    Model,
)

L = LANES

# lane workspace columns per body (each holds LANES values): the quantities of the K_* columns
# of `dqdyn.dynamics.articulated`, a 1-DoF joint's U, 1/D and u, then a free joint's block
A_R = 0  # rotation of x_i^λ, row-major (9)
A_P = 9  # translation of x_i^λ (3)
A_V = 12  # V_i [ω; v] (6)
A_C = 18  # η_i (6)
A_I = 24  # Î_i, symmetric form (21)
A_PA = 45  # B̂_i [τ; f] (6)
A_A = 51  # V̇_i (6)
A_U = 57  # U = Î S of a 1-DoF joint (6)
A_D = 63  # 1 / D
A_UU = 64  # u = τ − Sᵀ B̂
A_COLS = 65  # (the row copied for every body)
A_FU = 65  # a free joint: U, column a at A_FU + 6a (36)
A_FL = 101  # the Cholesky factor of its D, 6×6 row-major (36)
A_FUU = 137  # its u (6)
A_TOT = 143

# block scratch S (LANES values per column): the body's row at 0 (below lanes' S_POSE, which
# `_pose` writes, with S_X and S_QF), then
BR = 0
X_PR = S_COLS  # the parent's row (A_COLS)
X_S = X_PR + A_COLS  # S q̇ of the joint (6)
X_PI = X_S + 6  # Π (21)
X_B = X_PI + 21  # β (6)
X_INC = X_B + 6  # what the body adds to its parent's Î (21) and B̂ (6)
X_FU = X_INC + 27  # a free joint's U (36), factor (36), u (6), solution (6)
X_FL = X_FU + 36
X_FUU = X_FL + 36
X_FX = X_FUU + 6
X_PM = X_FX + 6  # its U D⁻¹ Uᵀ, 6×6 row-major (36)
X_FY = X_PM + 36  # a solution of D y = b (6)
X_COLS = X_FY + 6
assert A_COLS <= S_POSE  # (the body's row must not reach the scratch of `_pose`)

PRL = X_PR * L


def lanes_aba_support(model: Model) -> bool:
    """Whether `aba_lanes_batch` runs ``model``: `lanes_support` and no mimic joints."""
    return not model._index["mimic"] and lanes_support(model)


# ------------------------------------------------------------------------ one block, per pass
@jit
def _velocity(mi, mf, qT, vT, ws, S, RI):
    """`hybrid._velocity_pass` on a block: poses, ``V_i``, ``η_i``, ``Î_i = I_i``, ``B̂_i = B_i``."""
    nb1 = mi.shape[0]
    for k in range(A_TOT * L):
        ws[0, k] = 0.0
    for k in range(3):
        gk = -mf[0, MF_GRAVITY + k]
        for l in range(L):
            ws[0, (A_A + 3 + k) * L + l] = gk
    for i in range(1, nb1):
        lam = mi[i, MI_PARENT]
        jt = mi[i, MI_JTYPE]
        iv = mi[i, MI_IV]
        for k in range(6 * L):
            S[PRL + A_V * L + k] = ws[lam, A_V * L + k]
        _pose(mi, mf, i, qT, S)
        # S q̇
        if jt == FREE:
            for k in range(6):
                for l in range(L):
                    S[(X_S + k) * L + l] = vT[iv + k, l]
        else:
            s0, s1, s2, s3, s4, s5 = _axis6(mf, i, jt)
            for l in range(L):
                S[S_X * L + l] = vT[iv, l]
            for l in range(L):
                qd = S[S_X * L + l]
                S[X_S * L + l] = s0 * qd
                S[(X_S + 1) * L + l] = s1 * qd
                S[(X_S + 2) * L + l] = s2 * qd
                S[(X_S + 3) * L + l] = s3 * qd
                S[(X_S + 4) * L + l] = s4 * qd
                S[(X_S + 5) * L + l] = s5 * qd
        m = mf[i, MF_MASS]
        cx, cy, cz = mf[i, MF_COM], mf[i, MF_COM + 1], mf[i, MF_COM + 2]
        o = MF_INERTIA
        J0, J1, J2 = mf[i, o], mf[i, o + 1], mf[i, o + 2]
        J3, J4, J5 = mf[i, o + 3], mf[i, o + 4], mf[i, o + 5]
        J6, J7, J8 = mf[i, o + 6], mf[i, o + 7], mf[i, o + 8]
        for l in range(L):
            op = S_POSE * L
            r0, r1, r2, r3 = S[op + l], S[op + L + l], S[op + 2 * L + l], S[op + 3 * L + l]
            p0, p1, p2 = S[op + 4 * L + l], S[op + 5 * L + l], S[op + 6 * L + l]
            # `poses.rotation_matrix`
            x2, y2, z2 = 2.0 * r1, 2.0 * r2, 2.0 * r3
            xx, yy, zz = r1 * x2, r2 * y2, r3 * z2
            xy, xz, yz = r1 * y2, r1 * z2, r2 * z2
            wx, wy, wz = r0 * x2, r0 * y2, r0 * z2
            R00 = 1.0 - (yy + zz)
            R01 = xy - wz
            R02 = xz + wy
            R10 = xy + wz
            R11 = 1.0 - (xx + zz)
            R12 = yz - wx
            R20 = xz - wy
            R21 = yz + wx
            R22 = 1.0 - (xx + yy)
            S[BR + (A_R + 0) * L + l] = R00
            S[BR + (A_R + 1) * L + l] = R01
            S[BR + (A_R + 2) * L + l] = R02
            S[BR + (A_R + 3) * L + l] = R10
            S[BR + (A_R + 4) * L + l] = R11
            S[BR + (A_R + 5) * L + l] = R12
            S[BR + (A_R + 6) * L + l] = R20
            S[BR + (A_R + 7) * L + l] = R21
            S[BR + (A_R + 8) * L + l] = R22
            S[BR + A_P * L + l] = p0
            S[BR + (A_P + 1) * L + l] = p1
            S[BR + (A_P + 2) * L + l] = p2
            # `articulated._twist_from_parent`, + S q̇
            e0, e1, e2 = S[PRL + A_V * L + l], S[PRL + (A_V + 1) * L + l], S[PRL + (A_V + 2) * L + l]
            f0 = S[PRL + (A_V + 3) * L + l] + (e1 * p2 - e2 * p1)
            f1 = S[PRL + (A_V + 4) * L + l] + (e2 * p0 - e0 * p2)
            f2 = S[PRL + (A_V + 5) * L + l] + (e0 * p1 - e1 * p0)
            w0 = R00 * e0 + R10 * e1 + R20 * e2
            w1 = R01 * e0 + R11 * e1 + R21 * e2
            w2 = R02 * e0 + R12 * e1 + R22 * e2
            u0 = R00 * f0 + R10 * f1 + R20 * f2
            u1 = R01 * f0 + R11 * f1 + R21 * f2
            u2 = R02 * f0 + R12 * f1 + R22 * f2
            s0, s1, s2 = S[X_S * L + l], S[(X_S + 1) * L + l], S[(X_S + 2) * L + l]
            s3, s4, s5 = S[(X_S + 3) * L + l], S[(X_S + 4) * L + l], S[(X_S + 5) * L + l]
            w0 += s0
            w1 += s1
            w2 += s2
            u0 += s3
            u1 += s4
            u2 += s5
            S[BR + A_V * L + l] = w0
            S[BR + (A_V + 1) * L + l] = w1
            S[BR + (A_V + 2) * L + l] = w2
            S[BR + (A_V + 3) * L + l] = u0
            S[BR + (A_V + 4) * L + l] = u1
            S[BR + (A_V + 5) * L + l] = u2
            # η = V × S q̇ + Ṡ q̇ (zero for these joints: the + 0.0 of the single-state kernel)
            S[BR + A_C * L + l] = w1 * s2 - w2 * s1
            S[BR + (A_C + 1) * L + l] = w2 * s0 - w0 * s2
            S[BR + (A_C + 2) * L + l] = w0 * s1 - w1 * s0
            S[BR + (A_C + 3) * L + l] = (w1 * s5 - w2 * s4) + (u1 * s2 - u2 * s1) + 0.0
            S[BR + (A_C + 4) * L + l] = (w2 * s3 - w0 * s5) + (u2 * s0 - u0 * s2) + 0.0
            S[BR + (A_C + 5) * L + l] = (w0 * s4 - w1 * s3) + (u0 * s1 - u1 * s0) + 0.0
            # B = V × (I V)
            g0 = m * (u0 + (w1 * cz - w2 * cy))
            g1 = m * (u1 + (w2 * cx - w0 * cz))
            g2 = m * (u2 + (w0 * cy - w1 * cx))
            n0 = J0 * w0 + J1 * w1 + J2 * w2 + (cy * g2 - cz * g1)
            n1 = J3 * w0 + J4 * w1 + J5 * w2 + (cz * g0 - cx * g2)
            n2 = J6 * w0 + J7 * w1 + J8 * w2 + (cx * g1 - cy * g0)
            S[BR + A_PA * L + l] = (w1 * n2 - w2 * n1) + (u1 * g2 - u2 * g1)
            S[BR + (A_PA + 1) * L + l] = (w2 * n0 - w0 * n2) + (u2 * g0 - u0 * g2)
            S[BR + (A_PA + 2) * L + l] = (w0 * n1 - w1 * n0) + (u0 * g1 - u1 * g0)
            S[BR + (A_PA + 3) * L + l] = w1 * g2 - w2 * g1
            S[BR + (A_PA + 4) * L + l] = w2 * g0 - w0 * g2
            S[BR + (A_PA + 5) * L + l] = w0 * g1 - w1 * g0
        for k in range(21):  # the rigid inertia (the same for every lane)
            x = RI[i, K_I + k]
            for l in range(L):
                S[BR + (A_I + k) * L + l] = x
        for k in range((A_PA + 6) * L):
            ws[i, k] = S[BR + k]


@jit
def _factor_free(mf, i, tT, iv, ws, S, bst):
    """A free joint's block, `articulated._free_factor` lane by lane (``S = 1``): ``U = Î``,
    ``u = τ − B̂``, ``D = Î`` + armature and its Cholesky factor (the loops of
    `dqdyn._engine.linalg.chol_factor`, in place)."""
    for l in range(L):
        o = BR + A_I * L + l
        for a, b, k in ((0, 0, 0), (1, 0, 1), (2, 0, 2), (1, 1, 3), (2, 1, 4), (2, 2, 5)):
            x = S[o + k * L]
            S[(X_FU + 6 * a + b) * L + l] = S[(X_FU + 6 * b + a) * L + l] = x
            S[(X_FL + 6 * a + b) * L + l] = x
            y = S[o + (15 + k) * L]
            S[(X_FU + 6 * (3 + a) + 3 + b) * L + l] = S[(X_FU + 6 * (3 + b) + 3 + a) * L + l] = y
            S[(X_FL + 6 * (3 + a) + 3 + b) * L + l] = y
        for a in range(3):
            for b in range(3):
                h = S[o + (6 + 3 * a + b) * L]
                S[(X_FU + 6 * (3 + b) + a) * L + l] = S[(X_FU + 6 * a + 3 + b) * L + l] = h
                S[(X_FL + 6 * (3 + b) + a) * L + l] = h
        for a in range(6):
            S[(X_FL + 7 * a) * L + l] += mf[i, MF_ARMATURE + a]
            S[(X_FUU + a) * L + l] = tT[iv + a, l] - S[BR + (A_PA + a) * L + l]
        for r in range(6):
            for c in range(r + 1):
                s = S[(X_FL + 6 * r + c) * L + l]
                for k in range(c):
                    s -= S[(X_FL + 6 * r + k) * L + l] * S[(X_FL + 6 * c + k) * L + l]
                if r == c:
                    if not s > 1e-300 and bst[l] == OK:
                        bst[l] = SINGULAR + i
                    S[(X_FL + 6 * r + r) * L + l] = math.sqrt(s)  # (NaN past a bad pivot)
                else:
                    S[(X_FL + 6 * r + c) * L + l] = s / S[(X_FL + 6 * c + c) * L + l]
    for k in range(78 * L):
        ws[i, A_FU * L + k] = S[X_FU * L + k]


@jit
def _chol_solve(S, l, b, x):
    """``S[x…] = D⁻¹ S[b…]`` in lane ``l`` with the factor at ``S[X_FL…]``: the loops of
    `dqdyn._engine.linalg.chol_solve` (``L⁻¹``, then ``L⁻ᵀ``; ``b`` and ``x`` may alias)."""
    for r in range(6):
        S[(x + r) * L + l] = S[(b + r) * L + l]
    for r in range(6):
        s = S[(x + r) * L + l]
        for k in range(r):
            s -= S[(X_FL + 6 * r + k) * L + l] * S[(x + k) * L + l]
        S[(x + r) * L + l] = s / S[(X_FL + 6 * r + r) * L + l]
    for r in range(5, -1, -1):
        s = S[(x + r) * L + l]
        for k in range(r + 1, 6):
            s -= S[(X_FL + 6 * k + r) * L + l] * S[(x + k) * L + l]
        S[(x + r) * L + l] = s / S[(X_FL + 6 * r + r) * L + l]


@jit
def _pi_free(S):
    """``Π = Î − U D⁻¹ Uᵀ`` (`articulated._pi_generic`) and ``β = B̂ + Π η + U D⁻¹ u`` (the
    generic branch of `hybrid._inertia_pass`) of a free joint that is not a root, lane by lane,
    into ``S[X_PI…]``, ``S[X_B…]``."""
    for l in range(L):
        for c in range(6):  # U D⁻¹ Uᵀ column by column
            for a in range(6):
                S[(X_FY + a) * L + l] = S[(X_FU + 6 * a + c) * L + l]
            _chol_solve(S, l, X_FY, X_FY)
            for r in range(6):
                acc = 0.0
                for a in range(6):
                    acc += S[(X_FU + 6 * a + r) * L + l] * S[(X_FY + a) * L + l]
                S[(X_PM + 6 * r + c) * L + l] = acc
        o = BR + A_I * L + l
        for k in range(6):
            S[(X_PI + k) * L + l] = S[o + k * L]
        S[X_PI * L + l] -= S[X_PM * L + l]
        S[(X_PI + 1) * L + l] -= S[(X_PM + 1) * L + l]
        S[(X_PI + 2) * L + l] -= S[(X_PM + 2) * L + l]
        S[(X_PI + 3) * L + l] -= S[(X_PM + 7) * L + l]
        S[(X_PI + 4) * L + l] -= S[(X_PM + 8) * L + l]
        S[(X_PI + 5) * L + l] -= S[(X_PM + 14) * L + l]
        for r in range(3):
            for c in range(3):
                S[(X_PI + 6 + 3 * r + c) * L + l] = (S[o + (6 + 3 * r + c) * L]
                                                     - S[(X_PM + 6 * r + 3 + c) * L + l])
        for k in range(6):
            S[(X_PI + 15 + k) * L + l] = S[o + (15 + k) * L]
        S[(X_PI + 15) * L + l] -= S[(X_PM + 21) * L + l]
        S[(X_PI + 16) * L + l] -= S[(X_PM + 22) * L + l]
        S[(X_PI + 17) * L + l] -= S[(X_PM + 23) * L + l]
        S[(X_PI + 18) * L + l] -= S[(X_PM + 28) * L + l]
        S[(X_PI + 19) * L + l] -= S[(X_PM + 29) * L + l]
        S[(X_PI + 20) * L + l] -= S[(X_PM + 35) * L + l]
        _chol_solve(S, l, X_FUU, X_FY)
        oi = X_PI * L + l
        p0, p1, p2 = S[oi], S[oi + L], S[oi + 2 * L]
        p3, p4, p5 = S[oi + 3 * L], S[oi + 4 * L], S[oi + 5 * L]
        p6, p7, p8 = S[oi + 6 * L], S[oi + 7 * L], S[oi + 8 * L]
        p9, p10, p11 = S[oi + 9 * L], S[oi + 10 * L], S[oi + 11 * L]
        p12, p13, p14 = S[oi + 12 * L], S[oi + 13 * L], S[oi + 14 * L]
        p15, p16, p17 = S[oi + 15 * L], S[oi + 16 * L], S[oi + 17 * L]
        p18, p19, p20 = S[oi + 18 * L], S[oi + 19 * L], S[oi + 20 * L]
        oc = BR + A_C * L + l
        c0, c1, c2 = S[oc], S[oc + L], S[oc + 2 * L]
        c3, c4, c5 = S[oc + 3 * L], S[oc + 4 * L], S[oc + 5 * L]
        op = BR + A_PA * L + l
        b0 = S[op] + (p0 * c0 + p1 * c1 + p2 * c2 + p6 * c3 + p7 * c4 + p8 * c5)
        b1 = S[op + L] + (p1 * c0 + p3 * c1 + p4 * c2 + p9 * c3 + p10 * c4 + p11 * c5)
        b2 = S[op + 2 * L] + (p2 * c0 + p4 * c1 + p5 * c2 + p12 * c3 + p13 * c4 + p14 * c5)
        b3 = S[op + 3 * L] + (p6 * c0 + p9 * c1 + p12 * c2 + p15 * c3 + p16 * c4 + p17 * c5)
        b4 = S[op + 4 * L] + (p7 * c0 + p10 * c1 + p13 * c2 + p16 * c3 + p18 * c4 + p19 * c5)
        b5 = S[op + 5 * L] + (p8 * c0 + p11 * c1 + p14 * c2 + p17 * c3 + p19 * c4 + p20 * c5)
        for a in range(6):
            x = S[(X_FY + a) * L + l]
            ou = (X_FU + 6 * a) * L + l
            b0 += S[ou] * x
            b1 += S[ou + L] * x
            b2 += S[ou + 2 * L] * x
            b3 += S[ou + 3 * L] * x
            b4 += S[ou + 4 * L] * x
            b5 += S[ou + 5 * L] * x
        S[X_B * L + l], S[(X_B + 1) * L + l], S[(X_B + 2) * L + l] = b0, b1, b2
        S[(X_B + 3) * L + l], S[(X_B + 4) * L + l], S[(X_B + 5) * L + l] = b3, b4, b5


@jit
def _factor_one(mf, i, jt, tT, iv, ws, S, bst):
    """A 1-DoF joint (`hybrid._inertia_pass`'s scalar path): ``U = Î S``, ``D`` + armature,
    ``1/D`` and ``u = τ − Sᵀ B̂``; a lane whose ``D`` is singular gets its status."""
    s0, s1, s2, s3, s4, s5 = _axis6(mf, i, jt)
    arm = mf[i, MF_ARMATURE]
    for l in range(L):
        S[S_X * L + l] = tT[iv, l]
    for l in range(L):
        o = BR + A_I * L + l
        I00, I01, I02 = S[o], S[o + L], S[o + 2 * L]
        I11, I12, I22 = S[o + 3 * L], S[o + 4 * L], S[o + 5 * L]
        H00, H01, H02 = S[o + 6 * L], S[o + 7 * L], S[o + 8 * L]
        H10, H11, H12 = S[o + 9 * L], S[o + 10 * L], S[o + 11 * L]
        H20, H21, H22 = S[o + 12 * L], S[o + 13 * L], S[o + 14 * L]
        M00, M01, M02 = S[o + 15 * L], S[o + 16 * L], S[o + 17 * L]
        M11, M12, M22 = S[o + 18 * L], S[o + 19 * L], S[o + 20 * L]
        U0 = I00 * s0 + I01 * s1 + I02 * s2 + H00 * s3 + H01 * s4 + H02 * s5
        U1 = I01 * s0 + I11 * s1 + I12 * s2 + H10 * s3 + H11 * s4 + H12 * s5
        U2 = I02 * s0 + I12 * s1 + I22 * s2 + H20 * s3 + H21 * s4 + H22 * s5
        U3 = H00 * s0 + H10 * s1 + H20 * s2 + M00 * s3 + M01 * s4 + M02 * s5
        U4 = H01 * s0 + H11 * s1 + H21 * s2 + M01 * s3 + M11 * s4 + M12 * s5
        U5 = H02 * s0 + H12 * s1 + H22 * s2 + M02 * s3 + M12 * s4 + M22 * s5
        D = s0 * U0 + s1 * U1 + s2 * U2 + s3 * U3 + s4 * U4 + s5 * U5 + arm
        op = BR + A_PA * L + l
        u = S[S_X * L + l] - (s0 * S[op] + s1 * S[op + L] + s2 * S[op + 2 * L]
                              + s3 * S[op + 3 * L] + s4 * S[op + 4 * L] + s5 * S[op + 5 * L])
        S[BR + A_U * L + l] = U0
        S[BR + (A_U + 1) * L + l] = U1
        S[BR + (A_U + 2) * L + l] = U2
        S[BR + (A_U + 3) * L + l] = U3
        S[BR + (A_U + 4) * L + l] = U4
        S[BR + (A_U + 5) * L + l] = U5
        S[BR + A_D * L + l] = D
        S[BR + A_UU * L + l] = u
    for l in range(L):  # (the single-state kernel stops at the first singular D)
        if not S[BR + A_D * L + l] > TINY_PIVOT and bst[l] == OK:
            bst[l] = SINGULAR + i
    for l in range(L):
        S[BR + A_D * L + l] = 1.0 / S[BR + A_D * L + l]
    for k in range(A_U * L, A_COLS * L):
        ws[i, k] = S[BR + k]


@jit
def _pi_one(S):
    """``Π = Î − U D⁻¹ Uᵀ`` (`articulated._pi_1dof`) and ``β = B̂ + Π η + U D⁻¹ u`` of a 1-DoF
    joint into ``S[X_PI…]``, ``S[X_B…]``."""
    for l in range(L):
        o = BR + A_I * L + l
        U0, U1, U2 = S[BR + A_U * L + l], S[BR + (A_U + 1) * L + l], S[BR + (A_U + 2) * L + l]
        U3, U4, U5 = (S[BR + (A_U + 3) * L + l], S[BR + (A_U + 4) * L + l],
                      S[BR + (A_U + 5) * L + l])
        dinv = S[BR + A_D * L + l]
        u = S[BR + A_UU * L + l]
        V0, V1, V2, V3, V4, V5 = U0 * dinv, U1 * dinv, U2 * dinv, U3 * dinv, U4 * dinv, U5 * dinv
        p0 = S[o] - V0 * U0
        p1 = S[o + L] - V0 * U1
        p2 = S[o + 2 * L] - V0 * U2
        p3 = S[o + 3 * L] - V1 * U1
        p4 = S[o + 4 * L] - V1 * U2
        p5 = S[o + 5 * L] - V2 * U2
        p6 = S[o + 6 * L] - V0 * U3
        p7 = S[o + 7 * L] - V0 * U4
        p8 = S[o + 8 * L] - V0 * U5
        p9 = S[o + 9 * L] - V1 * U3
        p10 = S[o + 10 * L] - V1 * U4
        p11 = S[o + 11 * L] - V1 * U5
        p12 = S[o + 12 * L] - V2 * U3
        p13 = S[o + 13 * L] - V2 * U4
        p14 = S[o + 14 * L] - V2 * U5
        p15 = S[o + 15 * L] - V3 * U3
        p16 = S[o + 16 * L] - V3 * U4
        p17 = S[o + 17 * L] - V3 * U5
        p18 = S[o + 18 * L] - V4 * U4
        p19 = S[o + 19 * L] - V4 * U5
        p20 = S[o + 20 * L] - V5 * U5
        S[X_PI * L + l], S[(X_PI + 1) * L + l], S[(X_PI + 2) * L + l] = p0, p1, p2
        S[(X_PI + 3) * L + l], S[(X_PI + 4) * L + l], S[(X_PI + 5) * L + l] = p3, p4, p5
        S[(X_PI + 6) * L + l], S[(X_PI + 7) * L + l], S[(X_PI + 8) * L + l] = p6, p7, p8
        S[(X_PI + 9) * L + l], S[(X_PI + 10) * L + l], S[(X_PI + 11) * L + l] = p9, p10, p11
        S[(X_PI + 12) * L + l], S[(X_PI + 13) * L + l] = p12, p13
        S[(X_PI + 14) * L + l], S[(X_PI + 15) * L + l] = p14, p15
        S[(X_PI + 16) * L + l], S[(X_PI + 17) * L + l] = p16, p17
        S[(X_PI + 18) * L + l], S[(X_PI + 19) * L + l], S[(X_PI + 20) * L + l] = p18, p19, p20
        oc = BR + A_C * L + l
        c0, c1, c2 = S[oc], S[oc + L], S[oc + 2 * L]
        c3, c4, c5 = S[oc + 3 * L], S[oc + 4 * L], S[oc + 5 * L]
        P0 = p0 * c0 + p1 * c1 + p2 * c2 + p6 * c3 + p7 * c4 + p8 * c5
        P1 = p1 * c0 + p3 * c1 + p4 * c2 + p9 * c3 + p10 * c4 + p11 * c5
        P2 = p2 * c0 + p4 * c1 + p5 * c2 + p12 * c3 + p13 * c4 + p14 * c5
        P3 = p6 * c0 + p9 * c1 + p12 * c2 + p15 * c3 + p16 * c4 + p17 * c5
        P4 = p7 * c0 + p10 * c1 + p13 * c2 + p16 * c3 + p18 * c4 + p19 * c5
        P5 = p8 * c0 + p11 * c1 + p14 * c2 + p17 * c3 + p19 * c4 + p20 * c5
        op = BR + A_PA * L + l
        S[X_B * L + l] = S[op] + P0 + V0 * u
        S[(X_B + 1) * L + l] = S[op + L] + P1 + V1 * u
        S[(X_B + 2) * L + l] = S[op + 2 * L] + P2 + V2 * u
        S[(X_B + 3) * L + l] = S[op + 3 * L] + P3 + V3 * u
        S[(X_B + 4) * L + l] = S[op + 4 * L] + P4 + V4 * u
        S[(X_B + 5) * L + l] = S[op + 5 * L] + P5 + V5 * u


@jit
def _inertia(mi, mf, tT, ws, S, bst):
    """`hybrid._inertia_pass` on a block (no prescribed DoF): ``U``, ``1/D``, ``u`` of each joint
    and ``Î_λ``, ``B̂_λ`` of its parent; a lane whose ``D`` is singular gets its status."""
    nb1 = mi.shape[0]
    for i in range(nb1 - 1, 0, -1):
        lam = mi[i, MI_PARENT]
        jt = mi[i, MI_JTYPE]
        iv = mi[i, MI_IV]
        for k in range(A_COLS * L):
            S[BR + k] = ws[i, k]
        if jt == FREE:
            _factor_free(mf, i, tT, iv, ws, S, bst)
        else:
            _factor_one(mf, i, jt, tT, iv, ws, S, bst)
        if lam == 0:
            continue
        if jt == FREE:
            _pi_free(S)
        else:
            _pi_one(S)
        # Î_λ += Ad(x) Π Ad(x*) (`_inertia_to_parent`), B̂_λ += Ad(x) β (`_wrench_to_parent`)
        for l in range(L):
            orr = BR + A_R * L + l
            R00, R01, R02 = S[orr], S[orr + L], S[orr + 2 * L]
            R10, R11, R12 = S[orr + 3 * L], S[orr + 4 * L], S[orr + 5 * L]
            R20, R21, R22 = S[orr + 6 * L], S[orr + 7 * L], S[orr + 8 * L]
            p0, p1, p2 = S[BR + A_P * L + l], S[BR + (A_P + 1) * L + l], S[BR + (A_P + 2) * L + l]
            o = X_PI * L + l
            a00, a01, a02 = S[o], S[o + L], S[o + 2 * L]
            a11, a12, a22 = S[o + 3 * L], S[o + 4 * L], S[o + 5 * L]
            i00, i01, i02, i11, i12, i22 = _sym_congruence(
                R00, R01, R02, R10, R11, R12, R20, R21, R22, a00, a01, a02, a11, a12, a22)
            a00, a01, a02 = S[o + 15 * L], S[o + 16 * L], S[o + 17 * L]
            a11, a12, a22 = S[o + 18 * L], S[o + 19 * L], S[o + 20 * L]
            m00, m01, m02, m11, m12, m22 = _sym_congruence(
                R00, R01, R02, R10, R11, R12, R20, R21, R22, a00, a01, a02, a11, a12, a22)
            a00, a01, a02 = S[o + 6 * L], S[o + 7 * L], S[o + 8 * L]
            a10, a11, a12 = S[o + 9 * L], S[o + 10 * L], S[o + 11 * L]
            a20, a21, a22 = S[o + 12 * L], S[o + 13 * L], S[o + 14 * L]
            T00 = R00 * a00 + R01 * a10 + R02 * a20
            T01 = R00 * a01 + R01 * a11 + R02 * a21
            T02 = R00 * a02 + R01 * a12 + R02 * a22
            T10 = R10 * a00 + R11 * a10 + R12 * a20
            T11 = R10 * a01 + R11 * a11 + R12 * a21
            T12 = R10 * a02 + R11 * a12 + R12 * a22
            T20 = R20 * a00 + R21 * a10 + R22 * a20
            T21 = R20 * a01 + R21 * a11 + R22 * a21
            T22 = R20 * a02 + R21 * a12 + R22 * a22
            h00 = T00 * R00 + T01 * R01 + T02 * R02
            h01 = T00 * R10 + T01 * R11 + T02 * R12
            h02 = T00 * R20 + T01 * R21 + T02 * R22
            h10 = T10 * R00 + T11 * R01 + T12 * R02
            h11 = T10 * R10 + T11 * R11 + T12 * R12
            h12 = T10 * R20 + T11 * R21 + T12 * R22
            h20 = T20 * R00 + T21 * R01 + T22 * R02
            h21 = T20 * R10 + T21 * R11 + T22 * R12
            h22 = T20 * R20 + T21 * R21 + T22 * R22
            k00 = p1 * m02 - p2 * m01
            k10 = p2 * m00 - p0 * m02
            k20 = p0 * m01 - p1 * m00
            k01 = p1 * m12 - p2 * m11
            k11 = p2 * m01 - p0 * m12
            k21 = p0 * m11 - p1 * m01
            k02 = p1 * m22 - p2 * m12
            k12 = p2 * m02 - p0 * m22
            k22 = p0 * m12 - p1 * m02
            g00, g01, g02 = h00 + 0.5 * k00, h01 + 0.5 * k01, h02 + 0.5 * k02
            g10, g11, g12 = h10 + 0.5 * k10, h11 + 0.5 * k11, h12 + 0.5 * k12
            g20, g21, g22 = h20 + 0.5 * k20, h21 + 0.5 * k21, h22 + 0.5 * k22
            y00, y01, y02 = g01 * p2 - g02 * p1, g02 * p0 - g00 * p2, g00 * p1 - g01 * p0
            y10, y11, y12 = g11 * p2 - g12 * p1, g12 * p0 - g10 * p2, g10 * p1 - g11 * p0
            y20, y21, y22 = g21 * p2 - g22 * p1, g22 * p0 - g20 * p2, g20 * p1 - g21 * p0
            d = X_INC * L + l
            S[d] = i00 - 2.0 * y00
            S[d + L] = i01 - (y01 + y10)
            S[d + 2 * L] = i02 - (y02 + y20)
            S[d + 3 * L] = i11 - 2.0 * y11
            S[d + 4 * L] = i12 - (y12 + y21)
            S[d + 5 * L] = i22 - 2.0 * y22
            S[d + 6 * L] = h00 + k00
            S[d + 7 * L] = h01 + k01
            S[d + 8 * L] = h02 + k02
            S[d + 9 * L] = h10 + k10
            S[d + 10 * L] = h11 + k11
            S[d + 11 * L] = h12 + k12
            S[d + 12 * L] = h20 + k20
            S[d + 13 * L] = h21 + k21
            S[d + 14 * L] = h22 + k22
            S[d + 15 * L] = m00
            S[d + 16 * L] = m01
            S[d + 17 * L] = m02
            S[d + 18 * L] = m11
            S[d + 19 * L] = m12
            S[d + 20 * L] = m22
            ob = X_B * L + l
            b0, b1, b2 = S[ob], S[ob + L], S[ob + 2 * L]
            b3, b4, b5 = S[ob + 3 * L], S[ob + 4 * L], S[ob + 5 * L]
            f0 = R00 * b3 + R01 * b4 + R02 * b5
            f1 = R10 * b3 + R11 * b4 + R12 * b5
            f2 = R20 * b3 + R21 * b4 + R22 * b5
            d = (X_INC + 21) * L + l
            S[d] = R00 * b0 + R01 * b1 + R02 * b2 + (p1 * f2 - p2 * f1)
            S[d + L] = R10 * b0 + R11 * b1 + R12 * b2 + (p2 * f0 - p0 * f2)
            S[d + 2 * L] = R20 * b0 + R21 * b1 + R22 * b2 + (p0 * f1 - p1 * f0)
            S[d + 3 * L] = f0
            S[d + 4 * L] = f1
            S[d + 5 * L] = f2
        for k in range(27 * L):  # (A_I and A_PA are adjacent, in the order of X_INC)
            ws[lam, A_I * L + k] += S[X_INC * L + k]


@jit
def _acceleration(mi, mf, ws, qddT, S):
    """`hybrid._acceleration_pass` on a block (no prescribed DoF): ``q̈_i`` and ``V̇_i``."""
    nb1 = mi.shape[0]
    for i in range(1, nb1):
        lam = mi[i, MI_PARENT]
        jt = mi[i, MI_JTYPE]
        iv = mi[i, MI_IV]
        for k in range(A_COLS * L):
            S[BR + k] = ws[i, k]
        for k in range(6 * L):
            S[PRL + A_A * L + k] = ws[lam, A_A * L + k]
        # a' = Ad(x_i^λ*) V̇_λ + η
        for l in range(L):
            orr = BR + A_R * L + l
            R00, R01, R02 = S[orr], S[orr + L], S[orr + 2 * L]
            R10, R11, R12 = S[orr + 3 * L], S[orr + 4 * L], S[orr + 5 * L]
            R20, R21, R22 = S[orr + 6 * L], S[orr + 7 * L], S[orr + 8 * L]
            p0, p1, p2 = S[BR + A_P * L + l], S[BR + (A_P + 1) * L + l], S[BR + (A_P + 2) * L + l]
            e0, e1, e2 = S[PRL + A_A * L + l], S[PRL + (A_A + 1) * L + l], S[PRL + (A_A + 2) * L + l]
            f0 = S[PRL + (A_A + 3) * L + l] + (e1 * p2 - e2 * p1)
            f1 = S[PRL + (A_A + 4) * L + l] + (e2 * p0 - e0 * p2)
            f2 = S[PRL + (A_A + 5) * L + l] + (e0 * p1 - e1 * p0)
            oc = BR + A_C * L + l
            S[BR + A_A * L + l] = (R00 * e0 + R10 * e1 + R20 * e2) + S[oc]
            S[BR + (A_A + 1) * L + l] = (R01 * e0 + R11 * e1 + R21 * e2) + S[oc + L]
            S[BR + (A_A + 2) * L + l] = (R02 * e0 + R12 * e1 + R22 * e2) + S[oc + 2 * L]
            S[BR + (A_A + 3) * L + l] = (R00 * f0 + R10 * f1 + R20 * f2) + S[oc + 3 * L]
            S[BR + (A_A + 4) * L + l] = (R01 * f0 + R11 * f1 + R21 * f2) + S[oc + 4 * L]
            S[BR + (A_A + 5) * L + l] = (R02 * f0 + R12 * f1 + R22 * f2) + S[oc + 5 * L]
        if jt == FREE:
            for k in range(78 * L):
                S[X_FU * L + k] = ws[i, A_FU * L + k]
            for l in range(L):
                oa = BR + A_A * L + l
                a0, a1, a2 = S[oa], S[oa + L], S[oa + 2 * L]
                a3, a4, a5 = S[oa + 3 * L], S[oa + 4 * L], S[oa + 5 * L]
                for a in range(6):
                    ou = (X_FU + 6 * a) * L + l
                    S[(X_FX + a) * L + l] = S[(X_FUU + a) * L + l] - (
                        S[ou] * a0 + S[ou + L] * a1 + S[ou + 2 * L] * a2 + S[ou + 3 * L] * a3
                        + S[ou + 4 * L] * a4 + S[ou + 5 * L] * a5)
                # `chol_solve`: L⁻¹, then L⁻ᵀ
                for r in range(6):
                    s = S[(X_FX + r) * L + l]
                    for k in range(r):
                        s -= S[(X_FL + 6 * r + k) * L + l] * S[(X_FX + k) * L + l]
                    S[(X_FX + r) * L + l] = s / S[(X_FL + 6 * r + r) * L + l]
                for r in range(5, -1, -1):
                    s = S[(X_FX + r) * L + l]
                    for k in range(r + 1, 6):
                        s -= S[(X_FL + 6 * k + r) * L + l] * S[(X_FX + k) * L + l]
                    S[(X_FX + r) * L + l] = s / S[(X_FL + 6 * r + r) * L + l]
                for a in range(6):
                    qddT[iv + a, l] = S[(X_FX + a) * L + l]
                a0 += S[X_FX * L + l]  # (S = 1: `hybrid._acceleration_pass`)
                a1 += S[(X_FX + 1) * L + l]
                a2 += S[(X_FX + 2) * L + l]
                a3 += S[(X_FX + 3) * L + l]
                a4 += S[(X_FX + 4) * L + l]
                a5 += S[(X_FX + 5) * L + l]
                S[oa], S[oa + L], S[oa + 2 * L] = a0, a1, a2
                S[oa + 3 * L], S[oa + 4 * L], S[oa + 5 * L] = a3, a4, a5
        else:
            s0, s1, s2, s3, s4, s5 = _axis6(mf, i, jt)
            for l in range(L):
                oa = BR + A_A * L + l
                a0, a1, a2 = S[oa], S[oa + L], S[oa + 2 * L]
                a3, a4, a5 = S[oa + 3 * L], S[oa + 4 * L], S[oa + 5 * L]
                ou = BR + A_U * L + l
                x = S[BR + A_D * L + l] * (S[BR + A_UU * L + l] - (
                    S[ou] * a0 + S[ou + L] * a1 + S[ou + 2 * L] * a2 + S[ou + 3 * L] * a3
                    + S[ou + 4 * L] * a4 + S[ou + 5 * L] * a5))
                S[S_X * L + l] = x
                S[oa] = a0 + s0 * x
                S[oa + L] = a1 + s1 * x
                S[oa + 2 * L] = a2 + s2 * x
                S[oa + 3 * L] = a3 + s3 * x
                S[oa + 4 * L] = a4 + s4 * x
                S[oa + 5 * L] = a5 + s5 * x
            for l in range(L):
                qddT[iv, l] = S[S_X * L + l]
        for k in range(6 * L):
            ws[i, A_A * L + k] = S[BR + A_A * L + k]


# ------------------------------------------------------------------------ batch drivers
@njit
def aba_lanes_rows(mi, mf, Q, V, TAU, QDD, status, s, e):
    """States ``s`` to ``e`` of `aba_lanes_batch`, ``LANES`` at a time on one workspace (the
    last block padded with copies of its last state, whose results are dropped)."""
    mi, mf, Q, V, TAU = unmanaged(mi), unmanaged(mf), unmanaged(Q), unmanaged(V), unmanaged(TAU)
    QDD, status = unmanaged(QDD), unmanaged(status)
    nb1 = mi.shape[0]
    nq, nv = Q.shape[1], QDD.shape[1]
    bv, bt = V.shape[0] > 1, TAU.shape[0] > 1
    ws = np.empty((nb1, A_TOT * L))
    S = np.empty(X_COLS * L)
    RI = np.empty((nb1, K_COLS))
    for i in range(1, nb1):
        _rigid_inertia(mf, i, RI)
    qT = np.empty((max(nq, 1), L))
    vT = np.empty((max(nv, 1), L))
    tT = np.empty((max(nv, 1), L))
    qddT = np.empty((max(nv, 1), L))
    bst = np.zeros(L, dtype=np.int64)
    z = np.int64(0)
    for b in range(s, e, L):
        for l in range(L):
            k = min(b + l, e - 1)
            kv = k if bv else z
            kt = k if bt else z
            for j in range(nq):
                qT[j, l] = Q[k, j]
            for j in range(nv):
                vT[j, l] = V[kv, j]
                tT[j, l] = TAU[kt, j]
            bst[l] = check_state(mi, Q[k], V[kv], TAU[kt], BAD_TAU_FINITE, _EMPTY2, False)
        _velocity(mi, mf, qT, vT, ws, S, RI)
        _inertia(mi, mf, tT, ws, S, bst)
        _acceleration(mi, mf, ws, qddT, S)
        for l in range(min(L, e - b)):
            k = b + l
            for j in range(nv):
                QDD[k, j] = qddT[j, l]
            status[k] = bst[l]


@pjit
def aba_lanes_batch(mi, mf, Q, V, TAU, QDD, status):
    """`aba` of states ``Q``, ``V``, ``TAU`` (rows; ``V`` / ``TAU`` may be one row shared by
    every state) into ``QDD``, blocks of ``LANES`` states spread over the threads.  The model
    must satisfy `lanes_aba_support`."""
    N = np.int64(Q.shape[0])
    nl = (N + L - 1) // L
    nblk = min(nl, BLOCKS)
    for b in nb.prange(nblk):
        aba_lanes_rows(mi, mf, Q, V, TAU, QDD, status, (b * nl // nblk) * L,
                       min(N, ((b + 1) * nl // nblk) * L))


__all__ = ["lanes_aba_support", "aba_lanes_batch"]
