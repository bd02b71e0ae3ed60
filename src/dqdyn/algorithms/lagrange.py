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


import numba as nb
import numpy as np

from ..algebra._core import jit
from .._checks import not_a_model
from ..errors import NonFiniteError, ShapeError, SingularError
from ..multibody.joints import (
    HELICAL,
    PLANAR,
    PRISMATIC,
    REVOLUTE,
    joint_column,
    joint_column_dot,
    joint_nv,
)
from ..multibody.model import (
    MF_AXIS,
    MF_COM,
    MF_GRAVITY,
    MF_INERTIA,
    MF_MASS,
    MF_PITCH,
    MF_SCALE,
    MI_IQ,
    MI_IV,
    MI_JTYPE,
    MI_NV,
    MI_PARENT,
    Model,
)
from ._common import (
    GATE,
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
    flat_workspace,
    gate_address,
    gate_matrix,
    gate_tables,
    gate_vector,
    lazy_batch,
    out_batch,
    raise_status,
    run_chunked,
)
from .forward import chol_factor, chol_solve
from .newton_euler import (
    _EMPTY1,
    _EMPTY2,
    NSCRATCH,
    W_COLS,
    _rnea_general,
    RNEA_SIG,
    joint_pose,
    ne_core,
    rnea_checked,
    rnea_entry,
    rotation_matrix,
)

njit = nb.njit(cache=True)
_empty = np.empty  # (a module global: one dictionary lookup less per fast-path call)
pjit = nb.njit(cache=True, parallel=True)

SINGULAR_M = 3000  # + column of M whose pivot vanished

# workspace columns (one row per body, plus one scratch row) of the world-frame kernels
X_Q = 0  # rotation quaternion of x_i^0 (4)
X_R = 4  # its matrix, the map a ↦ r a r* (9, row-major: F_i axes → F_0 axes)
X_P = 13  # translation of x_i^0: origin of F_i in F_0 (3)
C_Y = 16  # spatial inertia (m, h, Ī_O) of body i in F_0, then of its subtree (10)
C_J = 26  # spatial motion axes 𝒮_k = Ad(x_i^0) S_k, k < 6 (36)
C_NCRBA = 62
C_V = 62  # spatial twist ξ_{0,i}^0 (6)
C_DJ = 68  # 𝒮̇_k (36)
C_H = 104  # momentum Î ξ = (f₀, τ₀) of body i, then of its subtree (6)
C_S = 110  # symmetric part of B's lower-left block (6: xx, xy, xz, yy, yz, zz), then summed
C_NCOR = 116
# columns of the (local-frame) gravity kernel
G_R = 0  # rotation of x_i^λ (9, row-major)
G_T = 9  # translation of x_i^λ (3)
G_G = 12  # g^i: gravity in F_i (3)
G_M = 15  # subtree mass (1)
G_H = 16  # subtree first moment h = Σ m_b c_b about the origin of F_i, in F_i (3)
G_NCOLS = 20


# =============================================================================== helpers
@jit
def world_pose(mi, mf, q, ws, i, ax, xj, xl):
    """``x_i^0 = x_λ^0 x_i^λ`` (seed 003 eq. 3.19 along the tree), kept as ``(r, R, p)`` in
    ``ws[i]``; ``x_i^λ`` from :func:`~dqdyn.algorithms.newton_euler.joint_pose`."""
    lam = mi[i, MI_PARENT]
    r0, r1, r2, r3, t0, t1, t2 = joint_pose(mi, mf, i, q, ax, xj, xl)
    a0, a1, a2, a3 = ws[lam, X_Q], ws[lam, X_Q + 1], ws[lam, X_Q + 2], ws[lam, X_Q + 3]
    Q0 = a0 * r0 - a1 * r1 - a2 * r2 - a3 * r3
    Q1 = a0 * r1 + a1 * r0 + a2 * r3 - a3 * r2
    Q2 = a0 * r2 - a1 * r3 + a2 * r0 + a3 * r1
    Q3 = a0 * r3 + a1 * r2 - a2 * r1 + a3 * r0
    ws[i, X_Q], ws[i, X_Q + 1], ws[i, X_Q + 2], ws[i, X_Q + 3] = Q0, Q1, Q2, Q3
    rotation_matrix(Q0, Q1, Q2, Q3, ws, i, X_R)
    # p_i = p_λ + R_λ t
    ws[i, X_P] = ws[lam, X_P] + ws[lam, X_R] * t0 + ws[lam, X_R + 1] * t1 + ws[lam, X_R + 2] * t2
    ws[i, X_P + 1] = (ws[lam, X_P + 1] + ws[lam, X_R + 3] * t0 + ws[lam, X_R + 4] * t1
                      + ws[lam, X_R + 5] * t2)
    ws[i, X_P + 2] = (ws[lam, X_P + 2] + ws[lam, X_R + 6] * t0 + ws[lam, X_R + 7] * t1
                      + ws[lam, X_R + 8] * t2)


@jit
def world_root(ws):
    """Row 0: the identity pose."""
    for k in range(16):
        ws[0, k] = 0.0
    ws[0, X_Q] = 1.0
    ws[0, X_R] = ws[0, X_R + 4] = ws[0, X_R + 8] = 1.0


@jit
def world_inertia(mf, i, ws):
    """``ws[i, C_Y:C_Y+10] = (m, h, Ī_O)`` of body ``i`` in F_0 from its pose ``(R, p)`` in ``ws[i]``:
    ``Ī_O = R Ī_c Rᵀ + m (|c|² 1 − c cᵀ)`` (the matrix form of ``Ad(r) L3(𝕀) Ad(r*)``, seed 000
    eq. 14, plus the parallel axes)."""
    m = mf[i, MF_MASS]
    r00, r01, r02 = ws[i, X_R], ws[i, X_R + 1], ws[i, X_R + 2]
    r10, r11, r12 = ws[i, X_R + 3], ws[i, X_R + 4], ws[i, X_R + 5]
    r20, r21, r22 = ws[i, X_R + 6], ws[i, X_R + 7], ws[i, X_R + 8]
    k0, k1, k2 = mf[i, MF_COM], mf[i, MF_COM + 1], mf[i, MF_COM + 2]
    cx = ws[i, X_P] + r00 * k0 + r01 * k1 + r02 * k2  # CoM in F_0
    cy = ws[i, X_P + 1] + r10 * k0 + r11 * k1 + r12 * k2
    cz = ws[i, X_P + 2] + r20 * k0 + r21 * k1 + r22 * k2
    o = MF_INERTIA
    I0, I1, I2 = mf[i, o], mf[i, o + 1], mf[i, o + 2]
    I3, I4, I5 = mf[i, o + 3], mf[i, o + 4], mf[i, o + 5]
    I6, I7, I8 = mf[i, o + 6], mf[i, o + 7], mf[i, o + 8]
    # A = R Ī
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
    ws[i, C_Y] = m
    ws[i, C_Y + 1] = m * cx
    ws[i, C_Y + 2] = m * cy
    ws[i, C_Y + 3] = m * cz
    ws[i, C_Y + 4] = a00 * r00 + a01 * r01 + a02 * r02 + m * (c2 - cx * cx)
    ws[i, C_Y + 5] = a00 * r10 + a01 * r11 + a02 * r12 - m * cx * cy
    ws[i, C_Y + 6] = a00 * r20 + a01 * r21 + a02 * r22 - m * cx * cz
    ws[i, C_Y + 7] = a10 * r10 + a11 * r11 + a12 * r12 + m * (c2 - cy * cy)
    ws[i, C_Y + 8] = a10 * r20 + a11 * r21 + a12 * r22 - m * cy * cz
    ws[i, C_Y + 9] = a20 * r20 + a21 * r21 + a22 * r22 + m * (c2 - cz * cz)


@jit
def world_axes(mi, mf, q, ws, i, ax, col):
    """``ws[i, C_J + 6k : …] = 𝒮_k = Ad(x_i^0) S_k`` (seed 000 eq. 3) for the joint of body ``i``.

    Revolute, prismatic and helical joints have one axis ``l = R a`` through ``p``:
    ``𝒮 = l + ε (p × l + h l)`` (``h`` the pitch; prismatic: ``ε l``).  The others go through
    :func:`~dqdyn.multibody.joints.joint_column` and ``Ad(x) s = R s_ω + ε (R s_v + p × R s_ω)``.
    Returns the number of axes.
    """
    jt = mi[i, MI_JTYPE]
    r00, r01, r02 = ws[i, X_R], ws[i, X_R + 1], ws[i, X_R + 2]
    r10, r11, r12 = ws[i, X_R + 3], ws[i, X_R + 4], ws[i, X_R + 5]
    r20, r21, r22 = ws[i, X_R + 6], ws[i, X_R + 7], ws[i, X_R + 8]
    px, py, pz = ws[i, X_P], ws[i, X_P + 1], ws[i, X_P + 2]
    if jt == REVOLUTE or jt == PRISMATIC or jt == HELICAL:
        a0, a1, a2 = mf[i, MF_AXIS], mf[i, MF_AXIS + 1], mf[i, MF_AXIS + 2]
        l0 = r00 * a0 + r01 * a1 + r02 * a2
        l1 = r10 * a0 + r11 * a1 + r12 * a2
        l2 = r20 * a0 + r21 * a1 + r22 * a2
        if jt == PRISMATIC:
            ws[i, C_J] = ws[i, C_J + 1] = ws[i, C_J + 2] = 0.0
            ws[i, C_J + 3], ws[i, C_J + 4], ws[i, C_J + 5] = l0, l1, l2
        else:
            h = mf[i, MF_PITCH] if jt == HELICAL else 0.0
            ws[i, C_J], ws[i, C_J + 1], ws[i, C_J + 2] = l0, l1, l2
            ws[i, C_J + 3] = py * l2 - pz * l1 + h * l0
            ws[i, C_J + 4] = pz * l0 - px * l2 + h * l1
            ws[i, C_J + 5] = px * l1 - py * l0 + h * l2
        return 1
    ax[0], ax[1], ax[2] = mf[i, MF_AXIS], mf[i, MF_AXIS + 1], mf[i, MF_AXIS + 2]
    n = joint_nv(jt)
    for k in range(n):
        joint_column(jt, ax, mf[i, MF_PITCH], q, mi[i, MI_IQ], k, col)
        o = C_J + 6 * k
        s0, s1, s2, s3, s4, s5 = col[0], col[1], col[2], col[3], col[4], col[5]
        l0 = r00 * s0 + r01 * s1 + r02 * s2
        l1 = r10 * s0 + r11 * s1 + r12 * s2
        l2 = r20 * s0 + r21 * s1 + r22 * s2
        ws[i, o], ws[i, o + 1], ws[i, o + 2] = l0, l1, l2
        ws[i, o + 3] = r00 * s3 + r01 * s4 + r02 * s5 + (py * l2 - pz * l1)
        ws[i, o + 4] = r10 * s3 + r11 * s4 + r12 * s5 + (pz * l0 - px * l2)
        ws[i, o + 5] = r20 * s3 + r21 * s4 + r22 * s5 + (px * l1 - py * l0)
    return n


@jit
def add_rows(ws, src, dst, o, n):
    """``ws[dst, o:o+n] += ws[src, o:o+n]`` (a child's subtree quantities into its parent)."""
    for k in range(o, o + n):
        ws[dst, k] += ws[src, k]


# =============================================================================== kernels
@jit
def gravity_core(mi, mf, g, q, ws, tau):
    """``τ = g(q) = 𝒩(q, 0, 0)`` (thesis eq. B.2) in composite-CoM form; ``ws`` (nb1 + 1, ≥ 19).

    With ``ξ = ξ̇ = 0`` the wrench of eq. (24) on body ``b`` is ``−m_b g`` at its CoM; moved by
    eq. (29) to the origin of ``F_i`` and summed over the subtree of ``i`` it is
    ``−(M_i g^i + ε h_i × g^i)``, ``M_i`` the subtree's mass, ``h_i = Σ m_b c_b`` its first
    moment about that origin and ``g^i = Ad(r_i^{λ*}) g^λ`` gravity in ``F_i`` (the forward
    recursion's gravity, no twists needed).  Eq. (30): ``τ_k = ⟨S_k, −(M g + ε h × g)⟩``; for a
    revolute joint ``a · (g × h)``.  Subtrees pass to the parent as
    ``M_λ += M_i``, ``h_λ += M_i t_i + R_i h_i``.
    """
    st = check_q(mi, q)
    if st != OK:
        return st
    nb1 = mi.shape[0]
    sc = ws[nb1]
    ax = sc[0:3]
    xj = sc[3:11]
    xl = sc[11:19]
    ws[0, G_G], ws[0, G_G + 1], ws[0, G_G + 2] = g[0], g[1], g[2]
    for i in range(1, nb1):
        lam = mi[i, MI_PARENT]
        r0, r1, r2, r3, t0, t1, t2 = joint_pose(mi, mf, i, q, ax, xj, xl)
        rotation_matrix(r0, r1, r2, r3, ws, i, G_R)
        ws[i, G_T], ws[i, G_T + 1], ws[i, G_T + 2] = t0, t1, t2
        g0, g1, g2 = ws[lam, G_G], ws[lam, G_G + 1], ws[lam, G_G + 2]
        ws[i, G_G] = ws[i, G_R] * g0 + ws[i, G_R + 3] * g1 + ws[i, G_R + 6] * g2
        ws[i, G_G + 1] = ws[i, G_R + 1] * g0 + ws[i, G_R + 4] * g1 + ws[i, G_R + 7] * g2
        ws[i, G_G + 2] = ws[i, G_R + 2] * g0 + ws[i, G_R + 5] * g1 + ws[i, G_R + 8] * g2
        m = mf[i, MF_MASS]
        ws[i, G_M] = m
        ws[i, G_H] = m * mf[i, MF_COM]
        ws[i, G_H + 1] = m * mf[i, MF_COM + 1]
        ws[i, G_H + 2] = m * mf[i, MF_COM + 2]
    for k in range(tau.shape[0]):
        tau[k] = 0.0
    col = sc[19:25]
    for i in range(nb1 - 1, 0, -1):
        M = ws[i, G_M]
        hx, hy, hz = ws[i, G_H], ws[i, G_H + 1], ws[i, G_H + 2]
        g0, g1, g2 = ws[i, G_G], ws[i, G_G + 1], ws[i, G_G + 2]
        # subtree gravity wrench at the origin of F_i: f = −M g, τ = −h × g = g × h
        f0, f1, f2 = -M * g0, -M * g1, -M * g2
        n0 = g1 * hz - g2 * hy
        n1 = g2 * hx - g0 * hz
        n2 = g0 * hy - g1 * hx
        jt = mi[i, MI_JTYPE]
        iv = mi[i, MI_IV]
        scale = mf[i, MF_SCALE]
        if jt == REVOLUTE or jt == PRISMATIC or jt == HELICAL:
            a0, a1, a2 = mf[i, MF_AXIS], mf[i, MF_AXIS + 1], mf[i, MF_AXIS + 2]
            if jt == PRISMATIC:
                tau[iv] += scale * (a0 * f0 + a1 * f1 + a2 * f2)
            elif jt == REVOLUTE:
                tau[iv] += scale * (a0 * n0 + a1 * n1 + a2 * n2)
            else:
                h = mf[i, MF_PITCH]
                tau[iv] += scale * (a0 * (n0 + h * f0) + a1 * (n1 + h * f1) + a2 * (n2 + h * f2))
        else:
            ax[0], ax[1], ax[2] = mf[i, MF_AXIS], mf[i, MF_AXIS + 1], mf[i, MF_AXIS + 2]
            for k in range(joint_nv(jt)):
                joint_column(jt, ax, mf[i, MF_PITCH], q, mi[i, MI_IQ], k, col)
                tau[iv + k] += scale * (col[0] * n0 + col[1] * n1 + col[2] * n2
                                        + col[3] * f0 + col[4] * f1 + col[5] * f2)
        lam = mi[i, MI_PARENT]
        if lam > 0:
            # eq. (29): the subtree's mass and first moment in F_λ
            t0, t1, t2 = ws[i, G_T], ws[i, G_T + 1], ws[i, G_T + 2]
            ws[lam, G_M] += M
            ws[lam, G_H] += M * t0 + ws[i, G_R] * hx + ws[i, G_R + 1] * hy + ws[i, G_R + 2] * hz
            ws[lam, G_H + 1] += (M * t1 + ws[i, G_R + 3] * hx + ws[i, G_R + 4] * hy
                                 + ws[i, G_R + 5] * hz)
            ws[lam, G_H + 2] += (M * t2 + ws[i, G_R + 6] * hx + ws[i, G_R + 7] * hy
                                 + ws[i, G_R + 8] * hz)
    return OK


@jit
def crba_core(mi, mf, q, ws, M):
    """``M = M(q)`` (zeroed here) by the composite-rigid-body algorithm in F_0.

    Forward: ``x_i^0``, ``Î_i`` and ``𝒮_k`` in F_0.  Backward (children first): the composite
    inertia ``Î^C_i`` is complete when body ``i`` is reached; ``F = Î^C_i 𝒮_k`` and
    ``M_{lk} = ⟨𝒮_l, F⟩`` for the axes ``l`` of ``i`` and of its ancestors (power pairing); then
    ``Î^C_λ += Î^C_i`` (no change of frame in F_0).
    """
    st = check_q(mi, q)
    if st != OK:
        return st
    nb1 = mi.shape[0]
    sc = ws[nb1]
    ax = sc[0:3]
    xj = sc[3:11]
    xl = sc[11:19]
    col = sc[19:25]
    world_root(ws)
    for i in range(1, nb1):
        world_pose(mi, mf, q, ws, i, ax, xj, xl)
        world_inertia(mf, i, ws)
        world_axes(mi, mf, q, ws, i, ax, col)
    for r in range(M.shape[0]):
        for c in range(M.shape[1]):
            M[r, c] = 0.0
    for i in range(nb1 - 1, 0, -1):
        ni = joint_nv(mi[i, MI_JTYPE])
        si = mf[i, MF_SCALE]
        ivi = mi[i, MI_IV]
        m = ws[i, C_Y]
        hx, hy, hz = ws[i, C_Y + 1], ws[i, C_Y + 2], ws[i, C_Y + 3]
        Ixx, Ixy, Ixz = ws[i, C_Y + 4], ws[i, C_Y + 5], ws[i, C_Y + 6]
        Iyy, Iyz, Izz = ws[i, C_Y + 7], ws[i, C_Y + 8], ws[i, C_Y + 9]
        for k in range(ni):
            o = C_J + 6 * k
            w0, w1, w2 = ws[i, o], ws[i, o + 1], ws[i, o + 2]
            v0, v1, v2 = ws[i, o + 3], ws[i, o + 4], ws[i, o + 5]
            # F = Î^C_i 𝒮_k = (m v + ω × h) + ε (Ī_O ω + h × v)
            F0 = m * v0 + (w1 * hz - w2 * hy)
            F1 = m * v1 + (w2 * hx - w0 * hz)
            F2 = m * v2 + (w0 * hy - w1 * hx)
            F3 = Ixx * w0 + Ixy * w1 + Ixz * w2 + (hy * v2 - hz * v1)
            F4 = Ixy * w0 + Iyy * w1 + Iyz * w2 + (hz * v0 - hx * v2)
            F5 = Ixz * w0 + Iyz * w1 + Izz * w2 + (hx * v1 - hy * v0)
            c = ivi + k
            j = i
            while j > 0:
                sj = mf[j, MF_SCALE] * si
                ivj = mi[j, MI_IV]
                for l in range(joint_nv(mi[j, MI_JTYPE])):
                    p = C_J + 6 * l
                    val = sj * (ws[j, p] * F3 + ws[j, p + 1] * F4 + ws[j, p + 2] * F5
                                + ws[j, p + 3] * F0 + ws[j, p + 4] * F1 + ws[j, p + 5] * F2)
                    M[ivj + l, c] += val
                    if j != i:
                        M[c, ivj + l] += val
                j = mi[j, MI_PARENT]
        lam = mi[i, MI_PARENT]
        if lam > 0:
            add_rows(ws, i, lam, C_Y, 10)
    return OK


@jit
def coriolis_core(mi, mf, q, v, ws, C):
    """``C = C(q, v)`` (zeroed here), Christoffel-consistent, in F_0 (module docstring).

    ``B(Î, ξ) = ½ [ξ ×* Î − Î ξ× + (Î ξ)×̄]`` (``(Î ξ)×̄ u = u ×* (Î ξ)``) has, written out with
    ``Î ξ = f₀ + ε τ₀`` (the momentum), only two non-zero blocks:
    ``B u = −f₀ × u_ω + ε K u_ω``, ``K = ½ (S − [τ₀]×)``,
    ``S = 2 (v·h) 1 − h vᵀ − v hᵀ + [ω]× Ī_O + ([ω]× Ī_O)ᵀ`` (symmetric).  B is linear in the
    body, so its subtree sum needs only the sums of ``f₀``, ``τ₀`` and ``S``.  Then for an axis
    ``𝒮_k`` of body ``i``: ``F = Î^C 𝒮̇_k + B^C 𝒮_k`` gives the entries ``⟨𝒮_l, F⟩`` of the
    ancestors' rows, and ``⟨𝒮̇_l, Î^C 𝒮_k⟩ + ⟨𝒮_k, B^C 𝒮_l⟩`` (the latter is
    ``𝒮_{l,ω} · (Kᵀ 𝒮_{k,ω} + f₀ × 𝒮_{k,v})``) those of row ``k``.
    """
    st = check_q(mi, q)
    if st != OK:
        return st
    st = check_finite(v, BAD_V_FINITE)
    if st != OK:
        return st
    nb1 = mi.shape[0]
    sc = ws[nb1]
    ax = sc[0:3]
    xj = sc[3:11]
    xl = sc[11:19]
    col = sc[19:25]
    world_root(ws)
    for k in range(6):
        ws[0, C_V + k] = 0.0
    for i in range(1, nb1):
        jt = mi[i, MI_JTYPE]
        world_pose(mi, mf, q, ws, i, ax, xj, xl)
        world_inertia(mf, i, ws)
        n = world_axes(mi, mf, q, ws, i, ax, col)
        # ξ_{0,i}^0 = ξ_{0,λ}^0 + Σ_k 𝒮_k v_k   (mimic joints: scaled master velocity)
        lam = mi[i, MI_PARENT]
        iv = mi[i, MI_IV]
        for r in range(6):
            ws[i, C_V + r] = ws[lam, C_V + r]
        for k in range(n):
            vk = v[iv + k] * mf[i, MF_SCALE] if n == 1 else v[iv + k]
            for r in range(6):
                ws[i, C_V + r] += ws[i, C_J + 6 * k + r] * vk
        w0, w1, w2 = ws[i, C_V], ws[i, C_V + 1], ws[i, C_V + 2]
        u0, u1, u2 = ws[i, C_V + 3], ws[i, C_V + 4], ws[i, C_V + 5]
        # 𝒮̇_k = ξ^0 × 𝒮_k + Ad(x_i^0) Ṡ_k   (Lemma 2.1; Ṡ ≠ 0 only for the planar joint)
        for k in range(n):
            o = C_J + 6 * k
            s0, s1, s2 = ws[i, o], ws[i, o + 1], ws[i, o + 2]
            s3, s4, s5 = ws[i, o + 3], ws[i, o + 4], ws[i, o + 5]
            d = C_DJ + 6 * k
            ws[i, d] = w1 * s2 - w2 * s1
            ws[i, d + 1] = w2 * s0 - w0 * s2
            ws[i, d + 2] = w0 * s1 - w1 * s0
            ws[i, d + 3] = (w1 * s5 - w2 * s4) + (u1 * s2 - u2 * s1)
            ws[i, d + 4] = (w2 * s3 - w0 * s5) + (u2 * s0 - u0 * s2)
            ws[i, d + 5] = (w0 * s4 - w1 * s3) + (u0 * s1 - u1 * s0)
            if jt == PLANAR:
                joint_column_dot(jt, q, mi[i, MI_IQ], v, iv, mf[i, MF_SCALE], k, col)
                e0, e1, e2 = col[0], col[1], col[2]
                b0 = ws[i, X_R] * e0 + ws[i, X_R + 1] * e1 + ws[i, X_R + 2] * e2
                b1 = ws[i, X_R + 3] * e0 + ws[i, X_R + 4] * e1 + ws[i, X_R + 5] * e2
                b2 = ws[i, X_R + 6] * e0 + ws[i, X_R + 7] * e1 + ws[i, X_R + 8] * e2
                e3, e4, e5 = col[3], col[4], col[5]
                px, py, pz = ws[i, X_P], ws[i, X_P + 1], ws[i, X_P + 2]
                ws[i, d] += b0
                ws[i, d + 1] += b1
                ws[i, d + 2] += b2
                ws[i, d + 3] += (ws[i, X_R] * e3 + ws[i, X_R + 1] * e4 + ws[i, X_R + 2] * e5
                                 + (py * b2 - pz * b1))
                ws[i, d + 4] += (ws[i, X_R + 3] * e3 + ws[i, X_R + 4] * e4 + ws[i, X_R + 5] * e5
                                 + (pz * b0 - px * b2))
                ws[i, d + 5] += (ws[i, X_R + 6] * e3 + ws[i, X_R + 7] * e4 + ws[i, X_R + 8] * e5
                                 + (px * b1 - py * b0))
        # momentum Î ξ = f₀ + ε τ₀ and the symmetric part S of B's lower-left block
        m = ws[i, C_Y]
        hx, hy, hz = ws[i, C_Y + 1], ws[i, C_Y + 2], ws[i, C_Y + 3]
        Ixx, Ixy, Ixz = ws[i, C_Y + 4], ws[i, C_Y + 5], ws[i, C_Y + 6]
        Iyy, Iyz, Izz = ws[i, C_Y + 7], ws[i, C_Y + 8], ws[i, C_Y + 9]
        ws[i, C_H] = m * u0 + (w1 * hz - w2 * hy)
        ws[i, C_H + 1] = m * u1 + (w2 * hx - w0 * hz)
        ws[i, C_H + 2] = m * u2 + (w0 * hy - w1 * hx)
        ws[i, C_H + 3] = Ixx * w0 + Ixy * w1 + Ixz * w2 + (hy * u2 - hz * u1)
        ws[i, C_H + 4] = Ixy * w0 + Iyy * w1 + Iyz * w2 + (hz * u0 - hx * u2)
        ws[i, C_H + 5] = Ixz * w0 + Iyz * w1 + Izz * w2 + (hx * u1 - hy * u0)
        # P = [ω]× Ī_O (rows), S = 2 (v·h) 1 − h vᵀ − v hᵀ + P + Pᵀ
        P00 = w1 * Ixz - w2 * Ixy
        P01 = w1 * Iyz - w2 * Iyy
        P02 = w1 * Izz - w2 * Iyz
        P10 = w2 * Ixx - w0 * Ixz
        P11 = w2 * Ixy - w0 * Iyz
        P12 = w2 * Ixz - w0 * Izz
        P20 = w0 * Ixy - w1 * Ixx
        P21 = w0 * Iyy - w1 * Ixy
        P22 = w0 * Iyz - w1 * Ixz
        vh = 2.0 * (u0 * hx + u1 * hy + u2 * hz)
        ws[i, C_S] = vh - 2.0 * hx * u0 + 2.0 * P00
        ws[i, C_S + 1] = -(hx * u1 + u0 * hy) + P01 + P10
        ws[i, C_S + 2] = -(hx * u2 + u0 * hz) + P02 + P20
        ws[i, C_S + 3] = vh - 2.0 * hy * u1 + 2.0 * P11
        ws[i, C_S + 4] = -(hy * u2 + u1 * hz) + P12 + P21
        ws[i, C_S + 5] = vh - 2.0 * hz * u2 + 2.0 * P22
    for r in range(C.shape[0]):
        for c in range(C.shape[1]):
            C[r, c] = 0.0
    for i in range(nb1 - 1, 0, -1):
        ni = joint_nv(mi[i, MI_JTYPE])
        si = mf[i, MF_SCALE]
        ivi = mi[i, MI_IV]
        m = ws[i, C_Y]
        hx, hy, hz = ws[i, C_Y + 1], ws[i, C_Y + 2], ws[i, C_Y + 3]
        Ixx, Ixy, Ixz = ws[i, C_Y + 4], ws[i, C_Y + 5], ws[i, C_Y + 6]
        Iyy, Iyz, Izz = ws[i, C_Y + 7], ws[i, C_Y + 8], ws[i, C_Y + 9]
        fx, fy, fz = ws[i, C_H], ws[i, C_H + 1], ws[i, C_H + 2]
        tx, ty, tz = 0.5 * ws[i, C_H + 3], 0.5 * ws[i, C_H + 4], 0.5 * ws[i, C_H + 5]
        Sxx, Sxy, Sxz = 0.5 * ws[i, C_S], 0.5 * ws[i, C_S + 1], 0.5 * ws[i, C_S + 2]
        Syy, Syz, Szz = 0.5 * ws[i, C_S + 3], 0.5 * ws[i, C_S + 4], 0.5 * ws[i, C_S + 5]
        for k in range(ni):
            o = C_J + 6 * k
            w0, w1, w2 = ws[i, o], ws[i, o + 1], ws[i, o + 2]
            v0, v1, v2 = ws[i, o + 3], ws[i, o + 4], ws[i, o + 5]
            d = C_DJ + 6 * k
            e0, e1, e2 = ws[i, d], ws[i, d + 1], ws[i, d + 2]
            b0, b1, b2 = ws[i, d + 3], ws[i, d + 4], ws[i, d + 5]
            # Ag = Î^C 𝒮_k
            A0 = m * v0 + (w1 * hz - w2 * hy)
            A1 = m * v1 + (w2 * hx - w0 * hz)
            A2 = m * v2 + (w0 * hy - w1 * hx)
            A3 = Ixx * w0 + Ixy * w1 + Ixz * w2 + (hy * v2 - hz * v1)
            A4 = Ixy * w0 + Iyy * w1 + Iyz * w2 + (hz * v0 - hx * v2)
            A5 = Ixz * w0 + Iyz * w1 + Izz * w2 + (hx * v1 - hy * v0)
            # ½ S 𝒮_ω and ½ τ₀ × 𝒮_ω
            s0 = Sxx * w0 + Sxy * w1 + Sxz * w2
            s1 = Sxy * w0 + Syy * w1 + Syz * w2
            s2 = Sxz * w0 + Syz * w1 + Szz * w2
            c0 = ty * w2 - tz * w1
            c1 = tz * w0 - tx * w2
            c2 = tx * w1 - ty * w0
            # F = Î^C 𝒮̇_k + B^C 𝒮_k,  B 𝒮 = 𝒮_ω × f₀ + ε K 𝒮_ω
            F0 = m * b0 + (e1 * hz - e2 * hy) + (w1 * fz - w2 * fy)
            F1 = m * b1 + (e2 * hx - e0 * hz) + (w2 * fx - w0 * fz)
            F2 = m * b2 + (e0 * hy - e1 * hx) + (w0 * fy - w1 * fx)
            F3 = Ixx * e0 + Ixy * e1 + Ixz * e2 + (hy * b2 - hz * b1) + (s0 - c0)
            F4 = Ixy * e0 + Iyy * e1 + Iyz * e2 + (hz * b0 - hx * b2) + (s1 - c1)
            F5 = Ixz * e0 + Iyz * e1 + Izz * e2 + (hx * b1 - hy * b0) + (s2 - c2)
            # ρ = Kᵀ 𝒮_ω + f₀ × 𝒮_v
            R0 = s0 + c0 + (fy * v2 - fz * v1)
            R1 = s1 + c1 + (fz * v0 - fx * v2)
            R2 = s2 + c2 + (fx * v1 - fy * v0)
            c = ivi + k
            j = i
            while j > 0:
                sj = mf[j, MF_SCALE] * si
                ivj = mi[j, MI_IV]
                for l in range(joint_nv(mi[j, MI_JTYPE])):
                    p = C_J + 6 * l
                    z0, z1, z2 = ws[j, p], ws[j, p + 1], ws[j, p + 2]
                    # row l (ancestor or same joint), column k: ⟨𝒮_l, F⟩
                    C[ivj + l, c] += sj * (z0 * F3 + z1 * F4 + z2 * F5 + ws[j, p + 3] * F0
                                           + ws[j, p + 4] * F1 + ws[j, p + 5] * F2)
                    if j != i:
                        # row k (descendant), column l: ⟨𝒮̇_l, Ag⟩ + ⟨𝒮_k, B^C 𝒮_l⟩
                        p = C_DJ + 6 * l
                        C[c, ivj + l] += sj * (
                            ws[j, p] * A3 + ws[j, p + 1] * A4 + ws[j, p + 2] * A5
                            + ws[j, p + 3] * A0 + ws[j, p + 4] * A1 + ws[j, p + 5] * A2
                            + z0 * R0 + z1 * R1 + z2 * R2)
                j = mi[j, MI_PARENT]
        lam = mi[i, MI_PARENT]
        if lam > 0:
            add_rows(ws, i, lam, C_Y, 10)
            add_rows(ws, i, lam, C_H, 12)
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
def solve_core(mi, mf, q, ws, M, L, B):
    """``B ← M(q)⁻¹ B`` by Cholesky (forward.py's ``chol_factor`` / ``chol_solve``) of the CRBA
    matrix ``M``; ``L`` (zeros on entry) receives the factor.  Status SINGULAR_M + the first
    column whose pivot is not above ``1e-12 max_k M_kk``."""
    st = crba_core(mi, mf, q, ws, M)
    if st != OK:
        return st
    n = M.shape[0]
    scale = 0.0
    for k in range(n):
        scale = max(scale, abs(M[k, k]))
    tol = 1e-12 * max(scale, 1e-300)
    chol_factor(M, n, L)  # a failing pivot leaves its L_jj at zero
    for j in range(n):
        if not (L[j, j] * L[j, j] > tol):
            return SINGULAR_M + j
    for c in range(B.shape[1]):
        chol_solve(L, n, B[:, c], B[:, c])
    return OK

# ------------------------------------------------------------------------ single-state kernels
@njit
def mass_matrix_ne_kernel(mi, mf, g, q, M):
    n = M.shape[0]
    ws = np.empty((mi.shape[0] + NSCRATCH, W_COLS))
    buf = np.empty((3, n))
    return mass_matrix_ne_core(mi, mf, g, q, ws, M, buf[0], buf[1], buf[2])


@njit
def solve_kernel(mi, mf, q, M, B):
    ws = np.empty((mi.shape[0] + 1, C_NCRBA))
    L = np.zeros(M.shape)
    return solve_core(mi, mf, q, ws, M, L, B)


# ------------------------------------------------------------------------ fast-path entries
# (one signature each, armed on first use: see _common.armed_call; lengths checked here)
@jit
def gravity_checked(mi, mf, q, tau, ws):
    """Single-state :func:`gravity` on the flat scratch ``ws``, input lengths checked."""
    nb1 = mi.shape[0]
    if q.shape[0] != mi[0, MI_IQ] or tau.shape[0] != mi[0, MI_IV] or ws.shape[0] < (nb1 + 1) * G_NCOLS:
        return BAD_SHAPE
    return gravity_core(mi, mf, mf[0, MF_GRAVITY : MF_GRAVITY + 3], q,
                        flat_workspace(ws, nb1 + 1, G_NCOLS), tau)


@jit
def crba_checked(mi, mf, q, M, ws):
    """Single-state :func:`mass_matrix` (CRBA) on the flat scratch ``ws``, lengths checked."""
    nv = mi[0, MI_IV]
    nb1 = mi.shape[0]
    if (q.shape[0] != mi[0, MI_IQ] or M.shape[0] != nv or M.shape[1] != nv
            or ws.shape[0] < (nb1 + 1) * C_NCRBA):
        return BAD_SHAPE
    return crba_core(mi, mf, q, flat_workspace(ws, nb1 + 1, C_NCRBA), M)


@jit
def coriolis_checked(mi, mf, q, v, C, ws):
    """Single-state :func:`coriolis_matrix` on the flat scratch ``ws``, lengths checked."""
    nv = mi[0, MI_IV]
    nb1 = mi.shape[0]
    if (q.shape[0] != mi[0, MI_IQ] or v.shape[0] != nv or C.shape[0] != nv or C.shape[1] != nv
            or ws.shape[0] < (nb1 + 1) * C_NCOR):
        return BAD_SHAPE
    return coriolis_core(mi, mf, q, v, flat_workspace(ws, nb1 + 1, C_NCOR), C)


# the dispatcher's fast paths: the checked kernels with their own scratch
@njit
def gravity_entry(mi, mf, q, tau):
    return gravity_checked(mi, mf, q, tau, np.empty((mi.shape[0] + 1) * G_NCOLS))


@njit
def crba_entry(mi, mf, q, M):
    return crba_checked(mi, mf, q, M, np.empty((mi.shape[0] + 1) * C_NCRBA))


@njit
def coriolis_entry(mi, mf, q, v, C):
    return coriolis_checked(mi, mf, q, v, C, np.empty((mi.shape[0] + 1) * C_NCOR))


_GRAVITY = _CRBA = _CORIOLIS = _NLE = None
GRAVITY_SIG = (T_MI, T_MF, T_V, T_V)
CRBA_SIG = (T_MI, T_MF, T_V, T_M)
CORIOLIS_SIG = (T_MI, T_MF, T_V, T_V, T_M)


# gate kernels (see _common.gate_address): raw buffers (inputs, the model's scratch, the
# result) → the checked kernels above
def _c_gravity(mip, mfp, nb1, bufs, lens):
    mi, mf = gate_tables(mip, mfp, nb1)
    return gravity_checked(mi, mf, gate_vector(bufs, lens, 0), gate_vector(bufs, lens, 2),
                           gate_vector(bufs, lens, 1))


def _c_crba(mip, mfp, nb1, bufs, lens):
    mi, mf = gate_tables(mip, mfp, nb1)
    return crba_checked(mi, mf, gate_vector(bufs, lens, 0),
                        gate_matrix(bufs, lens, 2, mi[0, MI_IV]), gate_vector(bufs, lens, 1))


def _c_coriolis(mip, mfp, nb1, bufs, lens):
    mi, mf = gate_tables(mip, mfp, nb1)
    return coriolis_checked(mi, mf, gate_vector(bufs, lens, 0), gate_vector(bufs, lens, 1),
                            gate_matrix(bufs, lens, 3, mi[0, MI_IV]), gate_vector(bufs, lens, 2))


def _c_nle(mip, mfp, nb1, bufs, lens):
    mi, mf = gate_tables(mip, mfp, nb1)
    return rnea_checked(mi, mf, gate_vector(bufs, lens, 0), gate_vector(bufs, lens, 1),
                        nb.carray(bufs[1], (0,)), gate_vector(bufs, lens, 3),
                        gate_vector(bufs, lens, 2))


_GRAVITY_C = _CRBA_C = _CORIOLIS_C = _NLE_C = 0  # their addresses, set on first use


# ------------------------------------------------------------------------ batch drivers
@pjit
def gravity_batch(mi, mf, g, Q, TAU, status):
    for n in nb.prange(Q.shape[0]):
        ws = np.empty((mi.shape[0] + 1, G_NCOLS))
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
    if st:
        _raise_row(model, st, row if status.shape[0] > 1 else None)


def _raise_row(model: Model, st: int, row: int | None) -> None:
    """Raise the exception of status ``st`` (``row``: the batch element, None for one state)."""
    if st >= SINGULAR_M and st < SINGULAR_M + 1000:
        col = st - SINGULAR_M
        where = "" if row is None else f" (batch element {row})"
        body = _body_of_column(model, col)
        raise SingularError(
            f"the mass matrix is singular{where}: no inertia moves with velocity v[{col}] of "
            f"joint {model.joint_names_all[body]!r} (body {model.body_names[body]!r}); a massless "
            "body (or subtree) with zero rotational inertia at the end of a chain makes M(q) "
            "singular — give it a mass/inertia or merge it with a fixed joint"
        )
    raise_status(model, st, row)


def _body_of_column(model: Model, col: int) -> int:
    for i in range(1, model.nbodies + 1):
        iv, nv = model.mi[i, MI_IV], model.mi[i, MI_NV]
        if nv and iv <= col < iv + nv:
            return i
    return 0


def _out(model: Model, out, batch: tuple, trail: tuple) -> np.ndarray:
    """The (N, *trail) output of a batched call: ``out`` (shape batch + trail) or a new array."""
    N = int(np.prod(batch)) if batch else 1
    o = out_batch(out, batch + trail)
    return np.empty((N,) + trail) if o is None else o.reshape((N,) + trail)


def _raiser(model: Model, batch: tuple):
    return lambda st, row: _raise_row(model, st, row if batch else None)


def gravity(model: Model, q, *, out=None) -> np.ndarray:
    """Generalized gravity ``g(q) = 𝒩(q, 0, 0)`` projected on the joints (thesis eq. B.2), (..., nv)."""
    if out is None and GATE is not None:
        r = GATE(_GRAVITY_C or gate_address(globals(), "_GRAVITY_C", _c_gravity), model.mi,
                 model.mf, model.nv, -1, q, model._scratch)
        if type(r) is ND:
            return r
        if r is not None and r != BAD_SHAPE:
            raise_status(model, r)
    if type(q) is ND and q.ndim == 1:
        tau = _empty(model.nv) if out is None else out
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
    TAU = _out(model, out, batch, (model.nv,))
    run_chunked(gravity_batch, (model.mi, model.mf, model.gravity), [Q], [TAU], N, (),
                _raiser(model, batch))
    return TAU.reshape(batch + (model.nv,))


def nonlinear_effects(model: Model, q, v, *, out=None) -> np.ndarray:
    """``C(q, v) v + g(q)`` = ``rnea(q, v, 0)`` (Pinocchio's ``nonLinearEffects``), (..., nv)."""
    if out is None and GATE is not None:
        r = GATE(_NLE_C or gate_address(globals(), "_NLE_C", _c_nle), model.mi, model.mf,
                 model.nv, -1, q, v, model._scratch)
        if type(r) is ND:
            return r
        if r is not None and r != BAD_SHAPE:
            raise_status(model, r)
    if type(q) is ND and q.ndim == 1:
        tau = _empty(model.nv) if out is None else out
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
    try:
        nv = model.nv
    except AttributeError:
        raise not_a_model(model) from None
    if method == "crba":
        if out is None and GATE is not None:
            r = GATE(_CRBA_C or gate_address(globals(), "_CRBA_C", _c_crba), model.mi, model.mf,
                     nv, nv, q, model._scratch)
            if type(r) is ND:
                return r
            if r is not None and r != BAD_SHAPE:
                raise_status(model, r)
        if type(q) is ND and q.ndim == 1:
            M = _empty((nv, nv)) if out is None else out
            try:
                st = _CRBA(model.mi, model.mf, q, M)
            except TypeError:
                st = armed_call(globals(), "_CRBA", crba_entry, CRBA_SIG, (model.mi, model.mf, q, M))
            if st == OK:
                return M
            if st is not None and st != BAD_SHAPE:
                raise_status(model, st)
        kernel, head = crba_batch, (model.mi, model.mf)
    elif method == "newton_euler":
        kernel, head = mass_matrix_ne_batch, (model.mi, model.mf, model.gravity)
    else:
        raise ShapeError(f"method must be 'crba' or 'newton_euler', got {method!r}")
    Q, batch = _q_in(model, q)
    M = _out(model, out, batch, (nv, nv))
    run_chunked(kernel, head, [Q], [M], Q.shape[0], (), _raiser(model, batch))
    return M.reshape(batch + (nv, nv))


def coriolis_matrix(model: Model, q, v, *, out=None) -> np.ndarray:
    """Coriolis matrix ``C(q, v)`` (..., nv, nv): ``C v = nonlinear_effects − gravity`` and
    ``Ṁ − 2C`` skew-symmetric (the Christoffel-consistent factorization, as in Pinocchio's
    ``computeCoriolisMatrix``, in dqdyn's velocity layouts)."""
    nv = model.nv
    if out is None and GATE is not None:
        r = GATE(_CORIOLIS_C or gate_address(globals(), "_CORIOLIS_C", _c_coriolis), model.mi,
                 model.mf, nv, nv, q, v, model._scratch)
        if type(r) is ND:
            return r
        if r is not None and r != BAD_SHAPE:
            raise_status(model, r)
    if type(q) is ND and q.ndim == 1:
        C = _empty((nv, nv)) if out is None else out
        try:
            st = _CORIOLIS(model.mi, model.mf, q, v, C)
        except TypeError:
            st = armed_call(globals(), "_CORIOLIS", coriolis_entry, CORIOLIS_SIG, (model.mi, model.mf, q, v, C))
        if st == OK:
            return C
        if st is not None and st != BAD_SHAPE:
            raise_status(model, st)
    Q, bq = _q_in(model, q)
    V, bv = as_vector_batch(v, nv, "v", "a velocity, model.nv entries")
    (Q, V), batch, N = lazy_batch([Q, V], [bq, bv])
    C = _out(model, out, batch, (nv, nv))
    run_chunked(coriolis_batch, (model.mi, model.mf), [Q, V], [C], N, (), _raiser(model, batch))
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
