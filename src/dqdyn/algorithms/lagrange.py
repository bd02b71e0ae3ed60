"""The Euler–Lagrange terms ``M(q) q̈ + C(q, q̇) q̇ + g(q) = τ``, compiled.

Two constructions of ``M``:

* ``method="crba"`` (default) — the composite-rigid-body algorithm in dual quaternion form, in
  ``F_0``: each joint's motion axes are carried to the world by the adjoint,
  ``𝒮_k = Ad(x_i^0) S_k`` (seed 000 eq. 3), the spatial inertias of the bodies are summed over
  subtrees (no change of frame needed in ``F_0``), and ``M_{jk} = ⟨𝒮_j, Î^C_{d} 𝒮_k⟩`` (power
  pairing, ``d`` the deeper of the two joints).  O(n) adjoints + O(n·depth) pairings.
* ``method="newton_euler"`` — the papers' construction from n + 2 dqNE calls (thesis eq. 3.2,
  appendix C eq. C.2): ``g = 𝒩(q, 0, 0)``, ``col_k M = 𝒩(q, 0, e_k) − g``.

The spatial inertia of a body (or a subtree) in ``F_0`` is kept as 10 numbers ``(m, h, Ī_O)``:
mass, first moment ``h = m p_c`` and rotational inertia about the world origin; it maps a
twist ``ω + ε v`` (at the origin) to the momentum ``(m v + ω × h) + ε (Ī_O ω + h × v)``.  Its
rotation ``R Ī_c Rᵀ`` is the matrix form of the quaternionic frame change
``Ad(r) L3(𝕀) Ad(r*)`` (seed 000 eq. 14, thesis eq. 4.9).

``gravity`` is ``𝒩(q, 0, 0)`` (thesis eq. B.2): with ``ξ = ξ̇ = 0`` every CoM wrench reduces to
``−m_i g`` (eq. 24); moved to ``F_0`` by ``Ad(x_{c_i}^0)`` (eq. 29) and summed over each subtree
it is ``−(M g + ε h × g)``, paired with ``𝒮_k``.

``coriolis_matrix`` is the Christoffel-consistent factorization (the one Pinocchio computes):
with ``B(Î, ξ) u = ½ [ξ × (Î u) − Î (ξ × u) + u × (Î ξ)]`` (the dual quaternion cross product
acts on twists and on wrenches alike: ``ξ × ζ`` is the coadjoint action ``ξ ×* ζ``),
``C = Σ_b J_bᵀ (Î_b J̇_b + B(Î_b, ξ_b) J_b)``, evaluated over subtrees in ``F_0``; the columns'
derivatives are ``𝒮̇_k = ξ_i^0 × 𝒮_k + Ad(x_i^0) Ṡ_k`` (seed 000 Lemma 2.1).  Then
``C q̇ = nonlinear_effects − gravity`` and ``Ṁ − 2C`` is skew-symmetric.
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np

from ..algebra._core import ad6, cross6, dq_mul, jit, pose_translation, power6, qrot
from ..errors import NonFiniteError, ShapeError, SingularError
from ..multibody.joints import (
    joint_column,
    joint_column_dot,
    joint_nv,
    joint_transform,
    joint_velocity,
)
from ..multibody.model import (
    MF_AXIS,
    MF_COM,
    MF_GRAVITY,
    MF_INERTIA,
    MF_MASS,
    MF_OFFSET,
    MF_PITCH,
    MF_PLACEMENT,
    MF_SCALE,
    MI_IQ,
    MI_IV,
    MI_JTYPE,
    MI_NV,
    MI_PARENT,
    Model,
)
from ._common import (
    BAD_SHAPE,
    BAD_V_FINITE,
    ND,
    OK,
    T_M,
    T_MF,
    T_MI,
    T_V,
    armed_call,
    as_vector_batch,
    check_finite,
    check_q,
    first_bad,
    raise_status,
)
from .newton_euler import (
    _EMPTY1,
    _EMPTY2,
    NSCRATCH,
    W_COLS,
    _fast,
    _rnea_general,
    RNEA_SIG,
    ne_core,
    rnea_entry,
    rnea_kernel,
)

njit = nb.njit(cache=True)
pjit = nb.njit(cache=True, parallel=True)

SINGULAR_M = 3000  # + column of M whose pivot vanished

# workspace columns (one row per body) of the world-frame kernels
C_X = 0  # x_i^0 (8)
C_Y = 8  # spatial inertia (m, h, Ī_O) of body i, then of its subtree (10)
C_J = 18  # spatial motion axes 𝒮_k = Ad(x_i^0) S_k, k < 6 (36)
C_NCRBA = 54
C_V = 54  # spatial twist ξ_{0,i}^0 (6)
C_DJ = 60  # 𝒮̇_k (36)
C_B = 96  # B(Î, ξ) (6×6, column-major: B e_c at C_B + 6c) of body i, then of its subtree (36)
C_NCOR = 132


# =============================================================================== helpers
@jit
def fk_world(mi, mf, q, ws, tmp):
    """``ws[i, C_X:C_X+8] = x_i^0`` (seed 003 eq. 3.19 along the tree); ``tmp`` ≥ 16 entries."""
    xj = tmp[0:8]
    xl = tmp[8:16]
    for k in range(8):
        ws[0, C_X + k] = 0.0
    ws[0, C_X] = 1.0
    for i in range(1, mi.shape[0]):
        joint_transform(mi[i, MI_JTYPE], mf[i, MF_AXIS : MF_AXIS + 3], mf[i, MF_PITCH], q,
                        mi[i, MI_IQ], mf[i, MF_SCALE], mf[i, MF_OFFSET], xj)
        dq_mul(mf[i, MF_PLACEMENT : MF_PLACEMENT + 8], xj, xl)
        dq_mul(ws[mi[i, MI_PARENT], C_X : C_X + 8], xl, ws[i, C_X : C_X + 8])


@jit
def world_inertia(mf, i, x, Y, tmp):
    """``Y = (m, h, Ī_O)`` of body ``i`` in F_0 from its pose ``x = x_i^0``; ``tmp`` ≥ 6."""
    m = mf[i, MF_MASS]
    p = tmp[0:3]
    c = tmp[3:6]
    pose_translation(x, p)
    qrot(x, mf[i, MF_COM : MF_COM + 3], c)
    cx, cy, cz = p[0] + c[0], p[1] + c[1], p[2] + c[2]  # CoM in F_0
    # R = matrix of Ad(r), r = P(x)
    w, a, b, d = x[0], x[1], x[2], x[3]
    r00 = 1.0 - 2.0 * (b * b + d * d)
    r01 = 2.0 * (a * b - w * d)
    r02 = 2.0 * (a * d + w * b)
    r10 = 2.0 * (a * b + w * d)
    r11 = 1.0 - 2.0 * (a * a + d * d)
    r12 = 2.0 * (b * d - w * a)
    r20 = 2.0 * (a * d - w * b)
    r21 = 2.0 * (b * d + w * a)
    r22 = 1.0 - 2.0 * (a * a + b * b)
    I = mf[i, MF_INERTIA : MF_INERTIA + 9]
    # A = R Ī
    a00 = r00 * I[0] + r01 * I[3] + r02 * I[6]
    a01 = r00 * I[1] + r01 * I[4] + r02 * I[7]
    a02 = r00 * I[2] + r01 * I[5] + r02 * I[8]
    a10 = r10 * I[0] + r11 * I[3] + r12 * I[6]
    a11 = r10 * I[1] + r11 * I[4] + r12 * I[7]
    a12 = r10 * I[2] + r11 * I[5] + r12 * I[8]
    a20 = r20 * I[0] + r21 * I[3] + r22 * I[6]
    a21 = r20 * I[1] + r21 * I[4] + r22 * I[7]
    a22 = r20 * I[2] + r21 * I[5] + r22 * I[8]
    c2 = cx * cx + cy * cy + cz * cz
    Y[0] = m
    Y[1] = m * cx
    Y[2] = m * cy
    Y[3] = m * cz
    # Ī_O = R Ī Rᵀ + m (|c|² 1 − c cᵀ)   (parallel axes)
    Y[4] = a00 * r00 + a01 * r01 + a02 * r02 + m * (c2 - cx * cx)
    Y[5] = a00 * r10 + a01 * r11 + a02 * r12 - m * cx * cy
    Y[6] = a00 * r20 + a01 * r21 + a02 * r22 - m * cx * cz
    Y[7] = a10 * r10 + a11 * r11 + a12 * r12 + m * (c2 - cy * cy)
    Y[8] = a10 * r20 + a11 * r21 + a12 * r22 - m * cy * cz
    Y[9] = a20 * r20 + a21 * r21 + a22 * r22 + m * (c2 - cz * cz)


@jit
def inertia_apply(Y, s, out):
    """``out = Î s``: momentum ``(m v + ω × h) + ε (Ī_O ω + h × v)`` of the twist ``s = ω + ε v``."""
    m = Y[0]
    hx, hy, hz = Y[1], Y[2], Y[3]
    w0, w1, w2, v0, v1, v2 = s[0], s[1], s[2], s[3], s[4], s[5]
    out[0] = m * v0 + (w1 * hz - w2 * hy)
    out[1] = m * v1 + (w2 * hx - w0 * hz)
    out[2] = m * v2 + (w0 * hy - w1 * hx)
    out[3] = Y[4] * w0 + Y[5] * w1 + Y[6] * w2 + (hy * v2 - hz * v1)
    out[4] = Y[5] * w0 + Y[7] * w1 + Y[8] * w2 + (hz * v0 - hx * v2)
    out[5] = Y[6] * w0 + Y[8] * w1 + Y[9] * w2 + (hx * v1 - hy * v0)


@jit
def spatial_axes(mi, mf, q, ws):
    """``ws[i, C_J + 6k : …] = 𝒮_k = Ad(x_i^0) S_k`` for every joint (x_i^0 already in ws)."""
    for i in range(1, mi.shape[0]):
        jt = mi[i, MI_JTYPE]
        for k in range(joint_nv(jt)):
            col = ws[i, C_J + 6 * k : C_J + 6 * k + 6]
            joint_column(jt, mf[i, MF_AXIS : MF_AXIS + 3], mf[i, MF_PITCH], q, mi[i, MI_IQ], k,
                         col)
            ad6(ws[i, C_X : C_X + 8], col, col)


# =============================================================================== kernels
@jit
def gravity_core(mi, mf, g, q, ws, tau):
    """``τ = g(q)``; ``ws`` (nb1 + 1, ≥ 12) holds x_i^0 and the subtree (M, h)."""
    st = check_q(mi, q)
    if st != OK:
        return st
    nb1 = mi.shape[0]
    tmp = ws[nb1]
    fk_world(mi, mf, q, ws, tmp)
    p = tmp[0:3]
    c = tmp[3:6]
    for i in range(nb1):
        ws[i, 8] = ws[i, 9] = ws[i, 10] = ws[i, 11] = 0.0
    for i in range(nb1 - 1, 0, -1):
        m = mf[i, MF_MASS]
        x = ws[i, C_X : C_X + 8]
        pose_translation(x, p)
        qrot(x, mf[i, MF_COM : MF_COM + 3], c)
        ws[i, 8] += m
        ws[i, 9] += m * (p[0] + c[0])
        ws[i, 10] += m * (p[1] + c[1])
        ws[i, 11] += m * (p[2] + c[2])
        lam = mi[i, MI_PARENT]
        for k in range(4):
            ws[lam, 8 + k] += ws[i, 8 + k]
    for k in range(tau.shape[0]):
        tau[k] = 0.0
    F = tmp[6:12]
    col = tmp[12:18]
    for i in range(1, nb1):
        M = ws[i, 8]
        hx, hy, hz = ws[i, 9], ws[i, 10], ws[i, 11]
        # subtree gravity load in F_0: Σ Ad(x_{c_b}^0)(−m_b g) = −(M g + ε h × g)
        F[0] = -M * g[0]
        F[1] = -M * g[1]
        F[2] = -M * g[2]
        F[3] = -(hy * g[2] - hz * g[1])
        F[4] = -(hz * g[0] - hx * g[2])
        F[5] = -(hx * g[1] - hy * g[0])
        jt = mi[i, MI_JTYPE]
        scale = mf[i, MF_SCALE]
        iv = mi[i, MI_IV]
        for k in range(joint_nv(jt)):
            joint_column(jt, mf[i, MF_AXIS : MF_AXIS + 3], mf[i, MF_PITCH], q, mi[i, MI_IQ], k,
                         col)
            ad6(ws[i, C_X : C_X + 8], col, col)
            tau[iv + k] += scale * power6(col, F)
    return OK


@jit
def composite_inertias(mi, mf, ws, tmp):
    """``ws[i, C_Y:C_Y+10]``: spatial inertia of each body in F_0, then summed over subtrees."""
    nb1 = mi.shape[0]
    for k in range(10):
        ws[0, C_Y + k] = 0.0
    for i in range(1, nb1):
        world_inertia(mf, i, ws[i, C_X : C_X + 8], ws[i, C_Y : C_Y + 10], tmp)
    for i in range(nb1 - 1, 0, -1):
        lam = mi[i, MI_PARENT]
        for k in range(10):
            ws[lam, C_Y + k] += ws[i, C_Y + k]


@jit
def crba_core(mi, mf, q, ws, M):
    """``M = M(q)`` (zeroed here) by the composite-rigid-body algorithm in F_0."""
    st = check_q(mi, q)
    if st != OK:
        return st
    nb1 = mi.shape[0]
    tmp = ws[nb1]
    fk_world(mi, mf, q, ws, tmp)
    composite_inertias(mi, mf, ws, tmp)
    spatial_axes(mi, mf, q, ws)
    for r in range(M.shape[0]):
        for c in range(M.shape[1]):
            M[r, c] = 0.0
    F = tmp[0:6]
    for i in range(1, nb1):
        ni = joint_nv(mi[i, MI_JTYPE])
        si = mf[i, MF_SCALE]
        ivi = mi[i, MI_IV]
        Yc = ws[i, C_Y : C_Y + 10]
        for k in range(ni):
            inertia_apply(Yc, ws[i, C_J + 6 * k : C_J + 6 * k + 6], F)  # Î^C_i 𝒮_k
            j = i
            while j > 0:
                sj = mf[j, MF_SCALE] * si
                ivj = mi[j, MI_IV]
                for l in range(joint_nv(mi[j, MI_JTYPE])):
                    val = sj * power6(ws[j, C_J + 6 * l : C_J + 6 * l + 6], F)
                    M[ivj + l, ivi + k] += val
                    if j != i:
                        M[ivi + k, ivj + l] += val
                j = mi[j, MI_PARENT]
    return OK


@jit
def coriolis_core(mi, mf, q, v, ws, C):
    """``C = C(q, v)`` (zeroed here), Christoffel-consistent, in F_0 (module docstring)."""
    st = check_q(mi, q)
    if st != OK:
        return st
    st = check_finite(v, BAD_V_FINITE)
    if st != OK:
        return st
    nb1 = mi.shape[0]
    tmp = ws[nb1]
    fk_world(mi, mf, q, ws, tmp)
    composite_inertias(mi, mf, ws, tmp)  # Î^C: subtree sums (per-body Î recomputed for B)
    Yb = tmp[20:30]
    e = tmp[30:36]
    y1 = tmp[36:42]
    y2 = tmp[42:48]
    y3 = tmp[48:54]
    sv = tmp[54:60]
    for k in range(6):
        ws[0, C_V + k] = 0.0
    for k in range(36):
        ws[0, C_B + k] = 0.0
    for i in range(1, nb1):
        jt = mi[i, MI_JTYPE]
        x = ws[i, C_X : C_X + 8]
        axis = mf[i, MF_AXIS : MF_AXIS + 3]
        # ξ_{0,i}^0 = ξ_{0,λ}^0 + Ad(x_i^0) S v
        joint_velocity(jt, axis, mf[i, MF_PITCH], q, mi[i, MI_IQ], v, mi[i, MI_IV],
                       mf[i, MF_SCALE], sv)
        ad6(x, sv, sv)
        ov = ws[i, C_V : C_V + 6]
        lam = mi[i, MI_PARENT]
        for k in range(6):
            ov[k] = ws[lam, C_V + k] + sv[k]
        # axes and their derivatives 𝒮̇ = ξ^0 × 𝒮 + Ad(x_i^0) Ṡ   (Lemma 2.1)
        for k in range(joint_nv(jt)):
            col = ws[i, C_J + 6 * k : C_J + 6 * k + 6]
            dcol = ws[i, C_DJ + 6 * k : C_DJ + 6 * k + 6]
            joint_column(jt, axis, mf[i, MF_PITCH], q, mi[i, MI_IQ], k, col)
            ad6(x, col, col)
            joint_column_dot(jt, q, mi[i, MI_IQ], v, mi[i, MI_IV], mf[i, MF_SCALE], k, y1)
            ad6(x, y1, dcol)
            cross6(ov, col, y1)
            for r in range(6):
                dcol[r] += y1[r]
        # B(Î_i, ξ_i) column by column: ½ [ξ × (Î e) − Î (ξ × e) + e × (Î ξ)]
        world_inertia(mf, i, x, Yb, y1)
        inertia_apply(Yb, ov, y3)  # Î ξ (momentum)
        for c in range(6):
            for r in range(6):
                e[r] = 0.0
            e[c] = 1.0
            inertia_apply(Yb, e, y1)
            cross6(ov, y1, y2)
            Bc = ws[i, C_B + 6 * c : C_B + 6 * c + 6]
            for r in range(6):
                Bc[r] = 0.5 * y2[r]
            cross6(ov, e, y1)
            inertia_apply(Yb, y1, y2)
            for r in range(6):
                Bc[r] -= 0.5 * y2[r]
            cross6(e, y3, y2)
            for r in range(6):
                Bc[r] += 0.5 * y2[r]
    for i in range(nb1 - 1, 0, -1):
        lam = mi[i, MI_PARENT]
        for k in range(36):
            ws[lam, C_B + k] += ws[i, C_B + k]
    for r in range(C.shape[0]):
        for c in range(C.shape[1]):
            C[r, c] = 0.0
    F = tmp[0:6]
    Ag = tmp[6:12]
    rowB = tmp[12:18]
    for i in range(1, nb1):
        ni = joint_nv(mi[i, MI_JTYPE])
        si = mf[i, MF_SCALE]
        ivi = mi[i, MI_IV]
        Yc = ws[i, C_Y : C_Y + 10]
        for k in range(ni):
            Jk = ws[i, C_J + 6 * k : C_J + 6 * k + 6]
            # F = Î^C_i 𝒮̇_k + B^C_i 𝒮_k ;  Ag = Î^C_i 𝒮_k ;  rowB_c = ⟨𝒮_k, B^C_i e_c⟩
            inertia_apply(Yc, ws[i, C_DJ + 6 * k : C_DJ + 6 * k + 6], F)
            inertia_apply(Yc, Jk, Ag)
            for c in range(6):
                Bc = ws[i, C_B + 6 * c : C_B + 6 * c + 6]
                F[0] += Bc[0] * Jk[c]
                F[1] += Bc[1] * Jk[c]
                F[2] += Bc[2] * Jk[c]
                F[3] += Bc[3] * Jk[c]
                F[4] += Bc[4] * Jk[c]
                F[5] += Bc[5] * Jk[c]
                rowB[c] = power6(Jk, Bc)
            j = i
            while j > 0:
                sj = mf[j, MF_SCALE] * si
                ivj = mi[j, MI_IV]
                for l in range(joint_nv(mi[j, MI_JTYPE])):
                    Jl = ws[j, C_J + 6 * l : C_J + 6 * l + 6]
                    # row j (ancestor or same joint), column k: ⟨𝒮_l, F⟩
                    C[ivj + l, ivi + k] += sj * power6(Jl, F)
                    if j != i:
                        # row k (descendant), column l: ⟨𝒮̇_l, Ag⟩ + ⟨𝒮_k, B^C_i 𝒮_l⟩
                        val = power6(ws[j, C_DJ + 6 * l : C_DJ + 6 * l + 6], Ag)
                        for c in range(6):
                            val += rowB[c] * Jl[c]
                        C[ivi + k, ivj + l] += sj * val
                j = mi[j, MI_PARENT]
    return OK


@jit
def mass_matrix_ne_core(mi, mf, g, q, ws, M, a, t0, t1):
    """Thesis eq. (3.2) / (C.2): ``g = 𝒩(q,0,0)``, ``col_k M = 𝒩(q, 0, e_k) − g``."""
    st = ne_core(mi, mf, g, q, _EMPTY1, _EMPTY1, _EMPTY2, ws, t0)
    if st != OK:
        return st
    n = a.shape[0]
    for k in range(n):
        a[k] = 0.0
    for k in range(n):
        a[k] = 1.0
        ne_core(mi, mf, g, q, _EMPTY1, a, _EMPTY2, ws, t1)
        a[k] = 0.0
        for r in range(n):
            M[r, k] = t1[r] - t0[r]
    return OK


@jit
def cholesky_inplace(A, tol):
    """Lower Cholesky factor of the SPD matrix ``A`` in place; returns −1 or the failing pivot."""
    n = A.shape[0]
    for j in range(n):
        d = A[j, j]
        for k in range(j):
            d -= A[j, k] * A[j, k]
        if not (d > tol):
            return j
        d = math.sqrt(d)
        A[j, j] = d
        for i in range(j + 1, n):
            s = A[i, j]
            for k in range(j):
                s -= A[i, k] * A[j, k]
            A[i, j] = s / d
    for j in range(n):
        for i in range(j):
            A[i, j] = 0.0
    return -1


@jit
def cholesky_solve(L, B):
    """In place ``B ← (L Lᵀ)⁻¹ B`` for a lower-triangular ``L`` (B: n × m)."""
    n = L.shape[0]
    for c in range(B.shape[1]):
        for i in range(n):
            s = B[i, c]
            for k in range(i):
                s -= L[i, k] * B[k, c]
            B[i, c] = s / L[i, i]
        for i in range(n - 1, -1, -1):
            s = B[i, c]
            for k in range(i + 1, n):
                s -= L[k, i] * B[k, c]
            B[i, c] = s / L[i, i]


@jit
def solve_core(mi, mf, q, ws, M, B):
    """``B ← M(q)⁻¹ B``; ``M`` receives the Cholesky factor.  Status SINGULAR_M + column."""
    st = crba_core(mi, mf, q, ws, M)
    if st != OK:
        return st
    scale = 0.0
    for k in range(M.shape[0]):
        scale = max(scale, abs(M[k, k]))
    bad = cholesky_inplace(M, 1e-12 * max(scale, 1e-300))
    if bad >= 0:
        return SINGULAR_M + bad
    cholesky_solve(M, B)
    return OK


# ------------------------------------------------------------------------ single-state kernels
@njit
def gravity_kernel(mi, mf, g, q, tau):
    ws = np.empty((mi.shape[0] + 1, 20))
    return gravity_core(mi, mf, g, q, ws, tau)


@njit
def crba_kernel(mi, mf, q, M):
    ws = np.empty((mi.shape[0] + 1, C_NCRBA))
    return crba_core(mi, mf, q, ws, M)


@njit
def coriolis_kernel(mi, mf, q, v, C):
    ws = np.empty((mi.shape[0] + 1, C_NCOR))
    return coriolis_core(mi, mf, q, v, ws, C)


@njit
def mass_matrix_ne_kernel(mi, mf, g, q, M):
    n = M.shape[0]
    ws = np.empty((mi.shape[0] + NSCRATCH, W_COLS))
    buf = np.empty((3, n))
    return mass_matrix_ne_core(mi, mf, g, q, ws, M, buf[0], buf[1], buf[2])


@njit
def solve_kernel(mi, mf, q, M, B):
    ws = np.empty((mi.shape[0] + 1, C_NCRBA))
    return solve_core(mi, mf, q, ws, M, B)


# ------------------------------------------------------------------------ fast-path entries
# (one signature each, armed on first use: see _common.armed_call; lengths checked here)
@njit
def gravity_entry(mi, mf, q, tau):
    if q.shape[0] != mi[0, MI_IQ] or tau.shape[0] != mi[0, MI_IV]:
        return BAD_SHAPE
    ws = np.empty((mi.shape[0] + 1, 20))
    return gravity_core(mi, mf, mf[0, MF_GRAVITY : MF_GRAVITY + 3], q, ws, tau)


@njit
def crba_entry(mi, mf, q, M):
    nv = mi[0, MI_IV]
    if q.shape[0] != mi[0, MI_IQ] or M.shape[0] != nv or M.shape[1] != nv:
        return BAD_SHAPE
    ws = np.empty((mi.shape[0] + 1, C_NCRBA))
    return crba_core(mi, mf, q, ws, M)


@njit
def coriolis_entry(mi, mf, q, v, C):
    nv = mi[0, MI_IV]
    if q.shape[0] != mi[0, MI_IQ] or v.shape[0] != nv or C.shape[0] != nv or C.shape[1] != nv:
        return BAD_SHAPE
    ws = np.empty((mi.shape[0] + 1, C_NCOR))
    return coriolis_core(mi, mf, q, v, ws, C)


_GRAVITY = _CRBA = _CORIOLIS = _NLE = None
GRAVITY_SIG = (T_MI, T_MF, T_V, T_V)
CRBA_SIG = (T_MI, T_MF, T_V, T_M)
CORIOLIS_SIG = (T_MI, T_MF, T_V, T_V, T_M)


# ------------------------------------------------------------------------ batch drivers
@pjit
def gravity_batch(mi, mf, g, Q, TAU, status):
    for n in nb.prange(Q.shape[0]):
        ws = np.empty((mi.shape[0] + 1, 20))
        status[n] = gravity_core(mi, mf, g, Q[n], ws, TAU[n])


@pjit
def crba_batch(mi, mf, Q, M, status):
    for n in nb.prange(Q.shape[0]):
        ws = np.empty((mi.shape[0] + 1, C_NCRBA))
        status[n] = crba_core(mi, mf, Q[n], ws, M[n])


@pjit
def coriolis_batch(mi, mf, Q, V, C, status):
    for n in nb.prange(Q.shape[0]):
        ws = np.empty((mi.shape[0] + 1, C_NCOR))
        status[n] = coriolis_core(mi, mf, Q[n], V[n], ws, C[n])


@pjit
def mass_matrix_ne_batch(mi, mf, g, Q, M, status):
    for n in nb.prange(Q.shape[0]):
        status[n] = mass_matrix_ne_kernel(mi, mf, g, Q[n], M[n])


@pjit
def solve_batch(mi, mf, Q, M, B, status):
    for n in nb.prange(Q.shape[0]):
        status[n] = solve_kernel(mi, mf, Q[n], M[n], B[n])


# =============================================================================== public API
def _q_in(model: Model, q):
    return as_vector_batch(q, model.nq, "q", "the configuration, model.nq entries")


def _check(model: Model, status: np.ndarray) -> None:
    st, row = first_bad(status)
    if not st:
        return
    if st >= SINGULAR_M and st < SINGULAR_M + 1000:
        col = st - SINGULAR_M
        where = "" if status.shape[0] == 1 else f" (batch element {row})"
        body = _body_of_column(model, col)
        raise SingularError(
            f"the mass matrix is singular{where}: no inertia moves with velocity v[{col}] of "
            f"joint {model.joint_names_all[body]!r} (body {model.body_names[body]!r}); a massless "
            "body (or subtree) with zero rotational inertia at the end of a chain makes M(q) "
            "singular — give it a mass/inertia or merge it with a fixed joint"
        )
    raise_status(model, st, row if status.shape[0] > 1 else None)


def _body_of_column(model: Model, col: int) -> int:
    for i in range(1, model.nbodies + 1):
        iv, nv = model.mi[i, MI_IV], model.mi[i, MI_NV]
        if nv and iv <= col < iv + nv:
            return i
    return 0


def gravity(model: Model, q, *, out=None) -> np.ndarray:
    """Generalized gravity ``g(q) = 𝒩(q, 0, 0)`` projected on the joints (thesis eq. B.2), (..., nv)."""
    if type(q) is ND and q.ndim == 1:
        tau = np.empty(model.nv) if out is None else out
        try:
            st = _GRAVITY(model.mi, model.mf, q, tau)
        except TypeError:
            st = armed_call(globals(), "_GRAVITY", gravity_entry, GRAVITY_SIG, (model.mi, model.mf, q, tau))
        if st == OK:
            return tau
        if st is not None and st != BAD_SHAPE:
            raise_status(model, st)
    Q, batch = _q_in(model, q)
    N = Q.shape[0]
    TAU = np.empty((N, model.nv))
    status = np.zeros(N, dtype=np.int64)
    if N == 1 and not batch:
        status[0] = gravity_kernel(model.mi, model.mf, model.gravity, Q[0], TAU[0])
    else:
        gravity_batch(model.mi, model.mf, model.gravity, Q, TAU, status)
    _check(model, status)
    return TAU.reshape(batch + (model.nv,))


def nonlinear_effects(model: Model, q, v, *, out=None) -> np.ndarray:
    """``C(q, v) v + g(q)`` = ``rnea(q, v, 0)`` (Pinocchio's ``nonLinearEffects``), (..., nv)."""
    if type(q) is ND and q.ndim == 1:
        tau = np.empty(model.nv) if out is None else out
        try:
            st = _NLE(model.mi, model.mf, q, v, _EMPTY1, tau)
        except TypeError:
            st = armed_call(globals(), "_NLE", rnea_entry, RNEA_SIG, (model.mi, model.mf, q, v, _EMPTY1, tau))
        if st == OK:
            return tau
        if st is not None and st != BAD_SHAPE:
            raise_status(model, st)
    return _rnea_general(model, q, v, None, None, False, True, out)


def mass_matrix(model: Model, q, method: str = "crba", *, out=None) -> np.ndarray:
    """Joint-space inertia matrix ``M(q)`` (..., nv, nv), symmetric positive (semi)definite.

    ``method="crba"``: composite-rigid-body algorithm in dual quaternion form (O(n·depth));
    ``method="newton_euler"``: the papers' n + 2 dqNE calls (thesis eq. 3.2 / C.2).
    """
    nv = model.nv
    if method == "crba":
        if type(q) is ND and q.ndim == 1:
            M = np.empty((nv, nv)) if out is None else out
            try:
                st = _CRBA(model.mi, model.mf, q, M)
            except TypeError:
                st = armed_call(globals(), "_CRBA", crba_entry, CRBA_SIG, (model.mi, model.mf, q, M))
            if st == OK:
                return M
            if st is not None and st != BAD_SHAPE:
                raise_status(model, st)
        Q, batch = _q_in(model, q)
        N = Q.shape[0]
        M = np.empty((N, nv, nv))
        status = np.zeros(N, dtype=np.int64)
        crba_batch(model.mi, model.mf, Q, M, status)
    elif method == "newton_euler":
        Q, batch = _q_in(model, q)
        N = Q.shape[0]
        M = np.empty((N, nv, nv))
        status = np.zeros(N, dtype=np.int64)
        if N == 1:
            status[0] = mass_matrix_ne_kernel(model.mi, model.mf, model.gravity, Q[0], M[0])
        else:
            mass_matrix_ne_batch(model.mi, model.mf, model.gravity, Q, M, status)
    else:
        raise ShapeError(f"method must be 'crba' or 'newton_euler', got {method!r}")
    _check(model, status)
    return M.reshape(batch + (nv, nv))


def coriolis_matrix(model: Model, q, v, *, out=None) -> np.ndarray:
    """Coriolis matrix ``C(q, v)`` (..., nv, nv): ``C v = nonlinear_effects − gravity`` and
    ``Ṁ − 2C`` skew-symmetric (the Christoffel-consistent factorization, as in Pinocchio's
    ``computeCoriolisMatrix``, in dqdyn's velocity layouts)."""
    nv = model.nv
    if type(q) is ND and q.ndim == 1:
        C = np.empty((nv, nv)) if out is None else out
        try:
            st = _CORIOLIS(model.mi, model.mf, q, v, C)
        except TypeError:
            st = armed_call(globals(), "_CORIOLIS", coriolis_entry, CORIOLIS_SIG, (model.mi, model.mf, q, v, C))
        if st == OK:
            return C
        if st is not None and st != BAD_SHAPE:
            raise_status(model, st)
    from ._common import broadcast_batch

    Q, bq = _q_in(model, q)
    V, bv = as_vector_batch(v, nv, "v", "a velocity, model.nv entries")
    (Q, V), batch = broadcast_batch([Q, V], [bq, bv])
    N = Q.shape[0]
    C = np.empty((N, nv, nv))
    status = np.zeros(N, dtype=np.int64)
    coriolis_batch(model.mi, model.mf, Q, V, C, status)
    _check(model, status)
    return C.reshape(batch + (nv, nv))


def _solve(model: Model, q, B, bB) -> np.ndarray:
    """``M(q)⁻¹ B`` for right-hand sides ``B`` (bB..., nv, k); returns (batch..., nv, k)."""
    nv = model.nv
    Q, bq = _q_in(model, q)
    try:
        batch = np.broadcast_shapes(bq, bB)
    except ValueError:
        raise ShapeError(f"batch shapes of q {bq} and b {bB} do not broadcast together") from None
    N = int(np.prod(batch)) if batch else 1
    if bq != batch:
        Q = np.ascontiguousarray(
            np.broadcast_to(Q.reshape(bq + (model.nq,)), batch + (model.nq,)).reshape(N, model.nq))
    X = np.array(np.broadcast_to(B, batch + B.shape[-2:]).reshape((N,) + B.shape[-2:]),
                 dtype=np.float64, order="C")
    M = np.empty((N, nv, nv))
    status = np.zeros(N, dtype=np.int64)
    if N == 1:
        status[0] = solve_kernel(model.mi, model.mf, Q[0], M[0], X[0])
    else:
        solve_batch(model.mi, model.mf, Q, M, X, status)
    _check(model, status)
    return X.reshape(batch + B.shape[-2:])


def solve_mass_matrix(model: Model, q, b) -> np.ndarray:
    """``M(q)⁻¹ b`` (..., nv) by Cholesky of the CRBA matrix.

    Raises :class:`~dqdyn.errors.SingularError` naming the joint whose velocity moves no
    inertia (e.g. a massless leaf body), :class:`~dqdyn.errors.NonFiniteError` for NaN input.
    """
    bb = np.asarray(b, dtype=np.float64)
    if bb.ndim == 0 or bb.shape[-1] != model.nv:
        raise ShapeError(f"b must have shape (..., {model.nv}) (generalized forces), got {bb.shape}")
    if not np.all(np.isfinite(bb)):
        raise NonFiniteError("b contains NaN or infinity")
    return _solve(model, q, bb[..., None], bb.shape[:-1])[..., 0]


def mass_matrix_inverse(model: Model, q) -> np.ndarray:
    """``M(q)⁻¹`` (..., nv, nv) by Cholesky (SingularError for a massless leaf)."""
    return _solve(model, q, np.eye(model.nv), ())


__all__ = [
    "gravity",
    "nonlinear_effects",
    "mass_matrix",
    "coriolis_matrix",
    "solve_mass_matrix",
    "mass_matrix_inverse",
]
