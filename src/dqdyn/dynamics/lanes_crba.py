"""Batched `mass_matrix` over blocks of states: the composite-rigid-body algorithm on ``LANES``
states at once.

The recursion is the one of `dqdyn.dynamics.lagrange.crba_core` (the CRBA in ``F_0``: the axes
``𝒮_k = Ad(x_i^0) S_k`` [Silva2022, eq. (3)], the world-frame spatial inertias summed over
subtrees, ``M_{jk} = ⟨𝒮_j, Î^C_d 𝒮_k⟩``), run on a block of ``LANES`` states together in the
structure-of-arrays layout of `dqdyn.dynamics.lanes`: every per-body quantity (``x_i^0`` as
``(r, R, p)``, ``(m, h, Ī_O)``, the axes ``𝒮_k``) is stored with the state index innermost
(``ws[i, c · LANES + l]``) and the arithmetic of a body is a loop over the lanes without
branches on one scratch array ``S`` (the body's row and its parent's copied in and out), which
LLVM turns into vector instructions.  ``M`` itself is kept as ``MT[r · nv + c, l]``.

**Bits.**  Each lane evaluates the expressions of the single-state kernel in the same
association order: the pose of `dqdyn.dynamics.lanes._pose` (that of `joint_pose`), then those of
`lagrange.world_pose` (the root's translation set to zero, the product with the identity of
row 0 kept), `world_inertia`, `world_axes` (a free joint's unit columns enter as the constants
``1.0`` / ``0.0`` of `joint_column`, products by ``0.0`` included), the pairings
``val = s_j s_i ⟨𝒮_l, F⟩`` accumulated into ``M`` in the order of `crba_core` (children first,
then the ancestors from the body up, the lower triangle before its mirror), the subtree sums
of `add_rows` and the armature of `armature_diag`.  No ``fastmath``: LLVM folds none of the
constant products and contracts no ``a·b + c`` into an FMA, so a state's ``M`` from the lanes
is bit-identical to the single-state `dqdyn.mass_matrix` (``tests/dynamics/test_lanes_crba.py``
checks ``array_equal``).

Supported: the models of `dqdyn.dynamics.lanes_aba.lanes_aba_support` (revolute, prismatic,
helical and free joints, armature, no mimic joints).  `dqdyn.mass_matrix` (``method="crba"``)
uses the lanes for batches of ``LANES`` states or more of such models and the per-state kernel
otherwise.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from dqdyn._engine.batching import BLOCKS
from dqdyn._engine.boundary import check_q
from dqdyn._engine.views import unmanaged
from dqdyn.algebra._core import jit
from dqdyn.dynamics.lanes import LANES, S_COLS, S_POSE, _pose, njit, pjit
from dqdyn.dynamics.lanes_aba import lanes_aba_support
from dqdyn.multibody.joints import FREE, HELICAL, PRISMATIC, joint_nv
from dqdyn.multibody.model import (
    MF_ARMATURE,
    MF_AXIS,
    MF_COM,
    MF_INERTIA,
    MF_MASS,
    MF_PITCH,
    MF_SCALE,
    MI_IV,
    MI_JTYPE,
    MI_NV,
    MI_PARENT,
    Model,
)

L = LANES

# lane workspace columns per body (each holds LANES values): the X_* / C_* columns of
# `dqdyn.dynamics.lagrange`
W_Q = 0  # rotation quaternion of x_i^0 (4)
W_R = 4  # its matrix, row-major (9)
W_P = 13  # translation of x_i^0 (3)
W_Y = 16  # (m, h, Ī_O) of body i in F_0, then of its subtree (10)
W_J = 26  # the axes 𝒮_k, k < 6 (36)
W_TOT = 62

# block scratch S (LANES values per column): the body's row at 0 (below lanes' S_POSE, which
# `_pose` writes), then
BR = 0
X_PR = S_COLS  # the parent's pose (16)
X_F = X_PR + 16  # F = Î^C_i 𝒮_k (6)
X_AX = X_F + 6  # an ancestor's axes (36)
X_VAL = X_AX + 36  # its pairings with F (6)
X_COLS = X_VAL + 6
assert W_TOT <= S_POSE  # (the body's row must not reach the scratch of `_pose`)

PRL = X_PR * L


def lanes_crba_support(model: Model) -> bool:
    """Whether `crba_lanes_batch` runs ``model``: `lanes_aba_support` (no mimic joints)."""
    return lanes_aba_support(model)


# ------------------------------------------------------------------------ one block, per pass
@jit
def _forward(mi, mf, qT, ws, S):
    """`lagrange.world_pose`, `world_inertia` and `world_axes` of every body on a block."""
    nb1 = mi.shape[0]
    for k in range(16 * L):  # `world_root`
        ws[0, k] = 0.0
    for l in range(L):
        ws[0, W_Q * L + l] = 1.0
        ws[0, W_R * L + l] = 1.0
        ws[0, (W_R + 4) * L + l] = 1.0
        ws[0, (W_R + 8) * L + l] = 1.0
    for i in range(1, nb1):
        lam = mi[i, MI_PARENT]
        jt = mi[i, MI_JTYPE]
        for k in range(16 * L):
            S[PRL + k] = ws[lam, k]
        _pose(mi, mf, i, qT, S)
        if lam == 0:  # a root body: the fixed frame at its origin
            for k in range(3 * L):
                S[(S_POSE + 4) * L + k] = 0.0
        m = mf[i, MF_MASS]
        k0, k1, k2 = mf[i, MF_COM], mf[i, MF_COM + 1], mf[i, MF_COM + 2]
        o = MF_INERTIA
        I0, I1, I2 = mf[i, o], mf[i, o + 1], mf[i, o + 2]
        I3, I4, I5 = mf[i, o + 3], mf[i, o + 4], mf[i, o + 5]
        I6, I7, I8 = mf[i, o + 6], mf[i, o + 7], mf[i, o + 8]
        for l in range(L):
            op = S_POSE * L + l
            r0, r1, r2, r3 = S[op], S[op + L], S[op + 2 * L], S[op + 3 * L]
            t0, t1, t2 = S[op + 4 * L], S[op + 5 * L], S[op + 6 * L]
            oq = PRL + W_Q * L + l
            a0, a1, a2, a3 = S[oq], S[oq + L], S[oq + 2 * L], S[oq + 3 * L]
            Q0 = a0 * r0 - a1 * r1 - a2 * r2 - a3 * r3
            Q1 = a0 * r1 + a1 * r0 + a2 * r3 - a3 * r2
            Q2 = a0 * r2 - a1 * r3 + a2 * r0 + a3 * r1
            Q3 = a0 * r3 + a1 * r2 - a2 * r1 + a3 * r0
            S[BR + W_Q * L + l] = Q0
            S[BR + (W_Q + 1) * L + l] = Q1
            S[BR + (W_Q + 2) * L + l] = Q2
            S[BR + (W_Q + 3) * L + l] = Q3
            # `poses.rotation_matrix`
            x2, y2, z2 = 2.0 * Q1, 2.0 * Q2, 2.0 * Q3
            xx, yy, zz = Q1 * x2, Q2 * y2, Q3 * z2
            xy, xz, yz = Q1 * y2, Q1 * z2, Q2 * z2
            wx, wy, wz = Q0 * x2, Q0 * y2, Q0 * z2
            r00 = 1.0 - (yy + zz)
            r01 = xy - wz
            r02 = xz + wy
            r10 = xy + wz
            r11 = 1.0 - (xx + zz)
            r12 = yz - wx
            r20 = xz - wy
            r21 = yz + wx
            r22 = 1.0 - (xx + yy)
            S[BR + W_R * L + l] = r00
            S[BR + (W_R + 1) * L + l] = r01
            S[BR + (W_R + 2) * L + l] = r02
            S[BR + (W_R + 3) * L + l] = r10
            S[BR + (W_R + 4) * L + l] = r11
            S[BR + (W_R + 5) * L + l] = r12
            S[BR + (W_R + 6) * L + l] = r20
            S[BR + (W_R + 7) * L + l] = r21
            S[BR + (W_R + 8) * L + l] = r22
            # p_i = p_λ + R_λ t
            orr = PRL + W_R * L + l
            opp = PRL + W_P * L + l
            px = S[opp] + S[orr] * t0 + S[orr + L] * t1 + S[orr + 2 * L] * t2
            py = (S[opp + L] + S[orr + 3 * L] * t0 + S[orr + 4 * L] * t1
                  + S[orr + 5 * L] * t2)
            pz = (S[opp + 2 * L] + S[orr + 6 * L] * t0 + S[orr + 7 * L] * t1
                  + S[orr + 8 * L] * t2)
            S[BR + W_P * L + l] = px
            S[BR + (W_P + 1) * L + l] = py
            S[BR + (W_P + 2) * L + l] = pz
            # `world_inertia`
            cx = px + r00 * k0 + r01 * k1 + r02 * k2
            cy = py + r10 * k0 + r11 * k1 + r12 * k2
            cz = pz + r20 * k0 + r21 * k1 + r22 * k2
            a00 = r00 * I0 + r01 * I3 + r02 * I6
            a01 = r00 * I1 + r01 * I4 + r02 * I7
            a02 = r00 * I2 + r01 * I5 + r02 * I8
            a10 = r10 * I0 + r11 * I3 + r12 * I6
            a11 = r10 * I1 + r11 * I4 + r12 * I7
            a12 = r10 * I2 + r11 * I5 + r12 * I8
            a20 = r20 * I0 + r21 * I3 + r22 * I6
            a21 = r20 * I1 + r21 * I4 + r22 * I7
            a22 = r20 * I2 + r21 * I5 + r22 * I8
            c2 = cx * cx + cy * cy + cz * cz
            oy = BR + W_Y * L + l
            S[oy] = m
            S[oy + L] = m * cx
            S[oy + 2 * L] = m * cy
            S[oy + 3 * L] = m * cz
            S[oy + 4 * L] = a00 * r00 + a01 * r01 + a02 * r02 + m * (c2 - cx * cx)
            S[oy + 5 * L] = a00 * r10 + a01 * r11 + a02 * r12 - m * cx * cy
            S[oy + 6 * L] = a00 * r20 + a01 * r21 + a02 * r22 - m * cx * cz
            S[oy + 7 * L] = a10 * r10 + a11 * r11 + a12 * r12 + m * (c2 - cy * cy)
            S[oy + 8 * L] = a10 * r20 + a11 * r21 + a12 * r22 - m * cy * cz
            S[oy + 9 * L] = a20 * r20 + a21 * r21 + a22 * r22 + m * (c2 - cz * cz)
        # `world_axes`
        if jt == FREE:
            for k in range(6):
                s0 = 1.0 if k == 0 else 0.0
                s1 = 1.0 if k == 1 else 0.0
                s2 = 1.0 if k == 2 else 0.0
                s3 = 1.0 if k == 3 else 0.0
                s4 = 1.0 if k == 4 else 0.0
                s5 = 1.0 if k == 5 else 0.0
                oj = BR + (W_J + 6 * k) * L
                for l in range(L):
                    orr = BR + W_R * L + l
                    r00, r01, r02 = S[orr], S[orr + L], S[orr + 2 * L]
                    r10, r11, r12 = S[orr + 3 * L], S[orr + 4 * L], S[orr + 5 * L]
                    r20, r21, r22 = S[orr + 6 * L], S[orr + 7 * L], S[orr + 8 * L]
                    opp = BR + W_P * L + l
                    px, py, pz = S[opp], S[opp + L], S[opp + 2 * L]
                    l0 = r00 * s0 + r01 * s1 + r02 * s2
                    l1 = r10 * s0 + r11 * s1 + r12 * s2
                    l2 = r20 * s0 + r21 * s1 + r22 * s2
                    S[oj + l], S[oj + L + l], S[oj + 2 * L + l] = l0, l1, l2
                    S[oj + 3 * L + l] = r00 * s3 + r01 * s4 + r02 * s5 + (py * l2 - pz * l1)
                    S[oj + 4 * L + l] = r10 * s3 + r11 * s4 + r12 * s5 + (pz * l0 - px * l2)
                    S[oj + 5 * L + l] = r20 * s3 + r21 * s4 + r22 * s5 + (px * l1 - py * l0)
            nc = W_TOT
        else:
            a0, a1, a2 = mf[i, MF_AXIS], mf[i, MF_AXIS + 1], mf[i, MF_AXIS + 2]
            h = mf[i, MF_PITCH] if jt == HELICAL else 0.0
            oj = BR + W_J * L
            if jt == PRISMATIC:
                for l in range(L):
                    orr = BR + W_R * L + l
                    r00, r01, r02 = S[orr], S[orr + L], S[orr + 2 * L]
                    r10, r11, r12 = S[orr + 3 * L], S[orr + 4 * L], S[orr + 5 * L]
                    r20, r21, r22 = S[orr + 6 * L], S[orr + 7 * L], S[orr + 8 * L]
                    S[oj + l] = S[oj + L + l] = S[oj + 2 * L + l] = 0.0
                    S[oj + 3 * L + l] = r00 * a0 + r01 * a1 + r02 * a2
                    S[oj + 4 * L + l] = r10 * a0 + r11 * a1 + r12 * a2
                    S[oj + 5 * L + l] = r20 * a0 + r21 * a1 + r22 * a2
            else:
                for l in range(L):
                    orr = BR + W_R * L + l
                    r00, r01, r02 = S[orr], S[orr + L], S[orr + 2 * L]
                    r10, r11, r12 = S[orr + 3 * L], S[orr + 4 * L], S[orr + 5 * L]
                    r20, r21, r22 = S[orr + 6 * L], S[orr + 7 * L], S[orr + 8 * L]
                    opp = BR + W_P * L + l
                    px, py, pz = S[opp], S[opp + L], S[opp + 2 * L]
                    l0 = r00 * a0 + r01 * a1 + r02 * a2
                    l1 = r10 * a0 + r11 * a1 + r12 * a2
                    l2 = r20 * a0 + r21 * a1 + r22 * a2
                    S[oj + l], S[oj + L + l], S[oj + 2 * L + l] = l0, l1, l2
                    S[oj + 3 * L + l] = py * l2 - pz * l1 + h * l0
                    S[oj + 4 * L + l] = pz * l0 - px * l2 + h * l1
                    S[oj + 5 * L + l] = px * l1 - py * l0 + h * l2
            nc = W_J + 6
        for k in range(nc * L):
            ws[i, k] = S[BR + k]


@jit
def _backward(mi, mf, ws, MT, S):
    """The backward pass of `crba_core` on a block: ``MT[r · nv + c, l] = M_{rc}`` of lane ``l``
    (zeroed here), then the armature of `armature_diag`."""
    nb1 = mi.shape[0]
    nv = mi[0, MI_IV]
    for r in range(nv * nv):
        for l in range(L):
            MT[r, l] = 0.0
    for i in range(nb1 - 1, 0, -1):
        ni = joint_nv(mi[i, MI_JTYPE])
        si = mf[i, MF_SCALE]
        ivi = mi[i, MI_IV]
        for k in range((W_J + 6 * ni - W_Y) * L):
            S[BR + W_Y * L + k] = ws[i, W_Y * L + k]
        for k in range(ni):
            oj = BR + (W_J + 6 * k) * L
            for l in range(L):
                oy = BR + W_Y * L + l
                m = S[oy]
                hx, hy, hz = S[oy + L], S[oy + 2 * L], S[oy + 3 * L]
                Ixx, Ixy, Ixz = S[oy + 4 * L], S[oy + 5 * L], S[oy + 6 * L]
                Iyy, Iyz, Izz = S[oy + 7 * L], S[oy + 8 * L], S[oy + 9 * L]
                w0, w1, w2 = S[oj + l], S[oj + L + l], S[oj + 2 * L + l]
                v0, v1, v2 = S[oj + 3 * L + l], S[oj + 4 * L + l], S[oj + 5 * L + l]
                S[X_F * L + l] = m * v0 + (w1 * hz - w2 * hy)
                S[(X_F + 1) * L + l] = m * v1 + (w2 * hx - w0 * hz)
                S[(X_F + 2) * L + l] = m * v2 + (w0 * hy - w1 * hx)
                S[(X_F + 3) * L + l] = Ixx * w0 + Ixy * w1 + Ixz * w2 + (hy * v2 - hz * v1)
                S[(X_F + 4) * L + l] = Ixy * w0 + Iyy * w1 + Iyz * w2 + (hz * v0 - hx * v2)
                S[(X_F + 5) * L + l] = Ixz * w0 + Iyz * w1 + Izz * w2 + (hx * v1 - hy * v0)
            c = ivi + k
            j = i
            while j > 0:
                sj = mf[j, MF_SCALE] * si
                ivj = mi[j, MI_IV]
                nj = joint_nv(mi[j, MI_JTYPE])
                for kk in range(6 * nj * L):
                    S[X_AX * L + kk] = ws[j, W_J * L + kk]
                for a in range(nj):
                    p = (X_AX + 6 * a) * L
                    for l in range(L):
                        F0, F1, F2 = S[X_F * L + l], S[(X_F + 1) * L + l], S[(X_F + 2) * L + l]
                        F3, F4 = S[(X_F + 3) * L + l], S[(X_F + 4) * L + l]
                        F5 = S[(X_F + 5) * L + l]
                        S[(X_VAL + a) * L + l] = sj * (
                            S[p + l] * F3 + S[p + L + l] * F4 + S[p + 2 * L + l] * F5
                            + S[p + 3 * L + l] * F0 + S[p + 4 * L + l] * F1
                            + S[p + 5 * L + l] * F2)
                for a in range(nj):
                    ro = (ivj + a) * nv + c
                    for l in range(L):
                        MT[ro, l] += S[(X_VAL + a) * L + l]
                    if j != i:
                        ro = c * nv + ivj + a
                        for l in range(L):
                            MT[ro, l] += S[(X_VAL + a) * L + l]
                j = mi[j, MI_PARENT]
        lam = mi[i, MI_PARENT]
        if lam > 0:  # `add_rows`
            for k in range(10 * L):
                ws[lam, W_Y * L + k] += ws[i, W_Y * L + k]
    for i in range(1, nb1):
        iv = mi[i, MI_IV]
        for k in range(mi[i, MI_NV]):
            r = mf[i, MF_ARMATURE + k]
            if r != 0.0:
                ro = (iv + k) * nv + iv + k
                for l in range(L):
                    MT[ro, l] += r


# ------------------------------------------------------------------------ batch drivers
@njit
def crba_lanes_rows(mi, mf, Q, M, status, s, e):
    """States ``s`` to ``e`` of `crba_lanes_batch`, ``LANES`` at a time on one workspace (the
    last block padded with copies of its last state, whose results are dropped)."""
    mi, mf, Q = unmanaged(mi), unmanaged(mf), unmanaged(Q)
    M, status = unmanaged(M), unmanaged(status)
    nb1 = mi.shape[0]
    nq, nv = Q.shape[1], M.shape[1]
    ws = np.empty((nb1, W_TOT * L))
    S = np.empty(X_COLS * L)
    qT = np.empty((max(nq, 1), L))
    MT = np.empty((max(nv * nv, 1), L))
    for b in range(s, e, L):
        for l in range(L):
            k = min(b + l, e - 1)
            for j in range(nq):
                qT[j, l] = Q[k, j]
            if b + l < e:
                status[b + l] = check_q(mi, Q[k])
        _forward(mi, mf, qT, ws, S)
        _backward(mi, mf, ws, MT, S)
        for l in range(min(L, e - b)):
            k = b + l
            for r in range(nv):
                for c in range(nv):
                    M[k, r, c] = MT[r * nv + c, l]


@pjit
def crba_lanes_batch(mi, mf, Q, M, status):
    """`mass_matrix` (CRBA) of the states ``Q`` (rows) into ``M`` (N, nv, nv), blocks of
    ``LANES`` states spread over the threads.  The model must satisfy `lanes_crba_support`."""
    N = np.int64(Q.shape[0])
    nl = (N + L - 1) // L
    nblk = min(nl, BLOCKS)
    for b in nb.prange(nblk):
        crba_lanes_rows(mi, mf, Q, M, status, (b * nl // nblk) * L,
                        min(N, ((b + 1) * nl // nblk) * L))


__all__ = ["lanes_crba_support", "crba_lanes_batch"]
