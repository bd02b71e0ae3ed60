"""The Euler–Lagrange terms ``M(q) q̈ + C(q, q̇) q̇ + g(q) = τ``, compiled.

Two constructions of ``M``:

* ``method="crba"`` (default) — the composite-rigid-body algorithm in dual quaternion form, in
  ``F_0``: each joint's motion axes are carried to the world by the adjoint,
  ``𝒮_k = Ad(x_i^0) S_k`` [Silva2022, eq. (3)], the spatial inertias of the bodies are summed over
  subtrees (no change of frame needed in ``F_0``), and ``M_{jk} = ⟨𝒮_j, Î^C_{d} 𝒮_k⟩`` (power
  pairing, ``d`` the deeper of the two joints).  O(n) adjoints + O(n·depth) pairings.
* ``method="newton_euler"`` — the papers' construction from n + 2 dqNE calls ([Silva2022thesis, eq. 3.2],
  appendix C eq. C.2): ``g = 𝒩(q, 0, 0)``, ``col_k M = 𝒩(q, 0, e_k) − g``.

The spatial inertia of a body (or a subtree) in ``F_0`` is kept as 10 numbers ``(m, h, Ī_O)``:
mass, first moment ``h = m p_c`` and rotational inertia about the world origin; it maps a
twist ``ω + ε v`` (at the origin) to the momentum ``(m v + ω × h) + ε (Ī_O ω + h × v)``.  Its
rotation ``R Ī_c Rᵀ`` is the matrix form of the quaternionic frame change
``Ad(r) L3(𝕀) Ad(r*)`` ([Silva2022, eq. (14)]; [Silva2022thesis, eq. (4.9)]).

``gravity`` is ``𝒩(q, 0, 0)`` ([Silva2022thesis, eq. B.2]): with ``ξ = ξ̇ = 0`` every CoM wrench reduces to
``−m_i g`` (eq. 24); moved to ``F_0`` by ``Ad(x_{c_i}^0)`` (eq. 29) and summed over each subtree
it is ``−(M g + ε h × g)``, paired with ``𝒮_k``.

``coriolis_matrix`` (the Christoffel-consistent ``C``) is in `coriolis`, on the same
world-frame helpers.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from dqdyn._engine.batching import BLOCKS, for_batch, run_chunked
from dqdyn._engine.boundary import (
    BAD_SHAPE,
    ND,
    OK,
    as_vector_batch,
    check_q,
    first_bad,
    out_batch,
    raise_status,
)
from dqdyn._engine.checks import not_a_model
from dqdyn._engine.gate import (
    NV,
    T_M,
    T_MF,
    T_MI,
    T_V,
    armed_call,
    fast_front,
    flat_workspace,
    gate_entry,
    gate_matrix,
    gate_tables,
    gate_vector,
)
from dqdyn._engine.jit import kernel
from dqdyn._engine.linalg import chol_factor, chol_solve
from dqdyn._engine.views import unmanaged
from dqdyn.algebra._core import jit
from dqdyn.dynamics.lanes_crba import LANES, crba_lanes_batch, lanes_crba_support
from dqdyn.dynamics.newton_euler import (
    _EMPTY1,
    _EMPTY2,
    NSCRATCH,
    RNEA_SIG,
    W_COLS,
    _rnea_general,
    armature_diag,
    ne_core,
    rnea_checked,
    rnea_entry,
)
from dqdyn.dynamics.poses import joint_pose, rotation_matrix
from dqdyn.errors import NonFiniteError, ShapeError, SingularError
from dqdyn.multibody.joints import (
    HELICAL,
    PRISMATIC,
    REVOLUTE,
    joint_column,
    joint_nv,
)
from dqdyn.multibody.model import (
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

njit = kernel()
_empty = np.empty  # (a module global: one dictionary lookup less per fast-path call)
pjit = kernel(parallel=True)

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
    """``x_i^0 = x_λ^0 x_i^λ`` ([Silva2022thesis, eq. (3.19)] along the tree), kept as ``(r, R, p)`` in
    ``ws[i]``; ``x_i^λ`` from `joint_pose`.  ``F_0`` here is
    the world's axes at the origin of the root body (see below), not the world origin."""
    lam = mi[i, MI_PARENT]
    r0, r1, r2, r3, t0, t1, t2 = joint_pose(mi, mf, i, q, ax, xj, xl)
    if lam == 0:  # a root body: the fixed frame is put at its origin (world axes).  M, C and the
        # solves are the same in any fixed frame, and positions stay the robot's size however
        # far it is from the world origin (1e-15 relative at 10⁷ m instead of 1e-2)
        t0 = t1 = t2 = 0.0
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
    ``Ī_O = R Ī_c Rᵀ + m (|c|² 1 − c cᵀ)`` (the matrix form of ``Ad(r) L3(𝕀) Ad(r*)``,
    [Silva2022, eq. (14)], plus the parallel axes)."""
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
    """``ws[i, C_J + 6k : …] = 𝒮_k = Ad(x_i^0) S_k`` [Silva2022, eq. (3)] for the joint of body ``i``.

    Revolute, prismatic and helical joints have one axis ``l = R a`` through ``p``:
    ``𝒮 = l + ε (p × l + h l)`` (``h`` the pitch; prismatic: ``ε l``).  The others go through
    `joint_column` and ``Ad(x) s = R s_ω + ε (R s_v + p × R s_ω)``.
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
@jit  # (IR-inlined into its entry, gate and batch kernels: a call would cost 0.3-0.5 µs)
def gravity_core(mi, mf, g, q, ws, tau):
    """``τ = g(q) = 𝒩(q, 0, 0)`` ([Silva2022thesis, eq. B.2]) in composite-CoM form; ``ws`` (nb1 + 1, ≥ 19).

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
def world_forward(mi, mf, q, ws):
    """The forward pass in F_0: per body ``i`` its pose ``x_i^0``, inertia and joint axes ``𝒮_k``
    (`world_pose`, `world_inertia`, `world_axes`) into ``ws[i]``; row ``nb1`` is scratch."""
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


@jit  # (IR-inlined into its entry, gate and batch kernels: a call would cost 0.3-0.5 µs)
def crba_core(mi, mf, q, ws, M):
    """``M = M(q)`` (zeroed here) by the composite-rigid-body algorithm in F_0.

    Forward: ``x_i^0``, ``Î_i`` and ``𝒮_k`` in F_0.  Backward (children first): the composite
    inertia ``Î^C_i`` is complete when body ``i`` is reached; ``F = Î^C_i 𝒮_k`` and
    ``M_{lk} = ⟨𝒮_l, F⟩`` for the axes ``l`` of ``i`` and of its ancestors (power pairing); then
    ``Î^C_λ += Î^C_i`` (no change of frame in F_0).  Then ``M += diag(armature)``.
    """
    st = check_q(mi, q)
    if st != OK:
        return st
    nb1 = mi.shape[0]
    world_forward(mi, mf, q, ws)
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
    armature_diag(mi, mf, M)
    return OK


# ne_core as an ordinary call here: IR-inlined twice into each kernel below it cost 160 s of
# compiling, for the papers' n + 1 recursions route ([Silva2022thesis, eq. 3.2]), not the fast one (CRBA)
# (under NUMBA_DISABLE_JIT, ne_core is a plain function and has no py_func)
_ne_call = kernel(error_model="numpy", variant="-call")(getattr(ne_core, "py_func", ne_core))


@jit  # (IR-inlined into its entry, gate and batch kernels)
def mass_matrix_ne_core(mi, mf, g, q, ws, M, a, t0, t1):
    """Thesis eq. (3.2) / (C.2): ``g = 𝒩(q,0,0)``, ``col_k M = 𝒩(q, 0, e_k) − g``."""
    n = a.shape[0]
    for k in range(n):
        a[k] = 0.0
    st = _ne_call(mi, mf, g, q, _EMPTY1, a, _EMPTY2, ws, t0)  # (a = 0: one signature)
    if st != OK:
        return st
    for k in range(n):
        a[k] = 1.0
        _ne_call(mi, mf, g, q, _EMPTY1, a, _EMPTY2, ws, t1)
        a[k] = 0.0
        for r in range(n):
            M[r, k] = t1[r] - t0[r]
    return OK


@jit  # (IR-inlined into its entry, gate and batch kernels: a call would cost 0.3-0.5 µs)
def solve_core(mi, mf, q, ws, M, L, B):
    """``B ← M(q)⁻¹ B`` by Cholesky (linalg.py's ``chol_factor`` / ``chol_solve``) of the CRBA
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
# (one signature each, armed on first use: see gate.armed_call; lengths checked here)
@jit
def gravity_checked(mi, mf, q, tau, ws):
    """Single-state `gravity` on the flat scratch ``ws``, input lengths checked."""
    nb1 = mi.shape[0]
    if q.shape[0] != mi[0, MI_IQ] or tau.shape[0] != mi[0, MI_IV] or ws.shape[0] < (nb1 + 1) * G_NCOLS:
        return BAD_SHAPE
    return gravity_core(mi, mf, mf[0, MF_GRAVITY : MF_GRAVITY + 3], q,
                        flat_workspace(ws, nb1 + 1, G_NCOLS), tau)


@jit
def crba_checked(mi, mf, q, M, ws):
    """Single-state `mass_matrix` (CRBA) on the flat scratch ``ws``, lengths checked."""
    nv = mi[0, MI_IV]
    nb1 = mi.shape[0]
    if (q.shape[0] != mi[0, MI_IQ] or M.shape[0] != nv or M.shape[1] != nv
            or ws.shape[0] < (nb1 + 1) * C_NCRBA):
        return BAD_SHAPE
    return crba_core(mi, mf, q, flat_workspace(ws, nb1 + 1, C_NCRBA), M)


# the dispatcher's fast paths: the checked kernels with their own scratch
@njit
def gravity_entry(mi, mf, q, tau):
    return gravity_checked(mi, mf, q, tau, np.empty((mi.shape[0] + 1) * G_NCOLS))


@njit
def crba_entry(mi, mf, q, M):
    return crba_checked(mi, mf, q, M, np.empty((mi.shape[0] + 1) * C_NCRBA))


_GRAVITY = _CRBA = _NLE = None
GRAVITY_SIG = (T_MI, T_MF, T_V, T_V)
CRBA_SIG = (T_MI, T_MF, T_V, T_M)


# gate kernels (see gate.gate_address): raw buffers (inputs, the model's scratch, the
# result) → the checked kernels above
def _c_gravity(mip, mfp, nb1, bufs, lens):
    mi, mf = gate_tables(mip, mfp, nb1)
    return gravity_checked(mi, mf, gate_vector(bufs, lens, 0), gate_vector(bufs, lens, 2),
                           gate_vector(bufs, lens, 1))


def _c_crba(mip, mfp, nb1, bufs, lens):
    mi, mf = gate_tables(mip, mfp, nb1)
    return crba_checked(mi, mf, gate_vector(bufs, lens, 0),
                        gate_matrix(bufs, lens, 2, mi[0, MI_IV]), gate_vector(bufs, lens, 1))


def _c_nle(mip, mfp, nb1, bufs, lens):
    mi, mf = gate_tables(mip, mfp, nb1)
    return rnea_checked(mi, mf, gate_vector(bufs, lens, 0), gate_vector(bufs, lens, 1),
                        nb.carray(bufs[1], (0,)), gate_vector(bufs, lens, 3),
                        gate_vector(bufs, lens, 2))


_GRAVITY_C = _CRBA_C = _NLE_C = 0  # their addresses, set on first use
_GRAVITY_ENTRY = gate_entry(globals(), "_GRAVITY_C", _c_gravity, 1, NV, -1, scratch=True)
_CRBA_ENTRY = gate_entry(globals(), "_CRBA_C", _c_crba, 1, NV, NV, scratch=True)
_NLE_ENTRY = gate_entry(globals(), "_NLE_C", _c_nle, 2, NV, -1, scratch=True)


# ------------------------------------------------------------------------ batch drivers
@njit
def gravity_rows(mi, mf, g, Q, TAU, status, s, e):
    """States ``s`` to ``e`` of `gravity_batch` (see
    `dqdyn.dynamics.newton_euler.rnea_rows`)."""
    mi, mf, g, Q = unmanaged(mi), unmanaged(mf), unmanaged(g), unmanaged(Q)
    TAU, status = unmanaged(TAU), unmanaged(status)
    ws = np.empty((mi.shape[0] + 1, G_NCOLS))
    for k in range(s, e):
        status[k] = gravity_core(mi, mf, g, Q[k], ws, TAU[k])


@pjit
def gravity_batch(mi, mf, g, Q, TAU, status):
    N = np.int64(Q.shape[0])
    nblk = min(N, BLOCKS)
    for b in nb.prange(nblk):
        gravity_rows(mi, mf, g, Q, TAU, status, b * N // nblk, (b + 1) * N // nblk)


@njit
def crba_rows(mi, mf, Q, M, status, s, e):
    """States ``s`` to ``e`` of `crba_batch` (see
    `dqdyn.dynamics.newton_euler.rnea_rows`)."""
    mi, mf, Q = unmanaged(mi), unmanaged(mf), unmanaged(Q)
    M, status = unmanaged(M), unmanaged(status)
    ws = np.empty((mi.shape[0] + 1, C_NCRBA))
    for k in range(s, e):
        status[k] = crba_core(mi, mf, Q[k], ws, M[k])


@pjit
def crba_batch(mi, mf, Q, M, status):
    N = np.int64(Q.shape[0])
    nblk = min(N, BLOCKS)
    for b in nb.prange(nblk):
        crba_rows(mi, mf, Q, M, status, b * N // nblk, (b + 1) * N // nblk)


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


@fast_front(_GRAVITY_ENTRY)
def gravity(model: Model, q, *, out=None) -> np.ndarray:
    """Generalized gravity ``g(q) = 𝒩(q, 0, 0)`` projected on the joints ([Silva2022thesis, eq. B.2]), (..., nv)."""
    r = _GRAVITY_ENTRY(model, q) if out is None else _GRAVITY_ENTRY(model, q, out)  # (gate.py: out=)
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


@fast_front(_NLE_ENTRY)
def nonlinear_effects(model: Model, q, v, *, out=None) -> np.ndarray:
    """``C(q, v) v + g(q)`` = ``rnea(q, v, 0)`` (Pinocchio's ``nonLinearEffects``), (..., nv)."""
    r = _NLE_ENTRY(model, q, v) if out is None else _NLE_ENTRY(model, q, v, out)
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


@fast_front(_CRBA_ENTRY)
def mass_matrix(model: Model, q, method: str = "crba", *, out=None) -> np.ndarray:
    """Joint-space inertia matrix ``M(q)``, symmetric positive (semi)definite.

    Parameters
    ----------
    model : Model
    q : array_like, shape (..., nq)
        Configuration (rad, m; unit quaternion / dual quaternion blocks, see Conventions).
    method : {"crba", "newton_euler"}
        ``"crba"``: composite-rigid-body algorithm in dual quaternion form (O(n·depth));
        ``"newton_euler"``: the papers' n + 2 dqNE calls ([Silva2022thesis, eq. 3.2] / C.2).
    out : ndarray, shape (..., nv, nv), optional
        Written in place and returned.

    Returns
    -------
    M : ndarray, shape (..., nv, nv)
        In the v layout (Conventions): kg·m² between rotational coordinates, kg between
        translational ones, kg·m across.  Mimic joints add into their master's row and column.
        Positive definite unless a joint moves no mass (a massless leaf).

    Raises
    ------
    ShapeError
        ``q`` or ``out`` has the wrong shape, or ``method`` is not one of the two above.
    NonFiniteError
        ``q`` contains NaN or infinity.
    NotUnitError
        A spherical or free joint's (dual) quaternion is off the unit sphere.
    """
    if method == "crba":
        r = _CRBA_ENTRY(model, q) if out is None else _CRBA_ENTRY(model, q, out)
        if type(r) is ND:
            return r
        if r is not None and r != BAD_SHAPE:
            raise_status(model, r)
    try:
        nv = model.nv
    except AttributeError:
        raise not_a_model(model) from None
    if method == "crba":
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
    if kernel is crba_batch and Q.shape[0] >= LANES and lanes_crba_support(model):
        kernel = crba_lanes_batch  # 16 states at once, the same bits (`lanes_crba`)
    M = _out(model, out, batch, (nv, nv))
    run_chunked(kernel, head, [Q], [M], Q.shape[0], (), _raiser(model, batch))
    return M.reshape(batch + (nv, nv))


def _solve(model: Model, q, B, bB) -> np.ndarray:
    """``M(q)⁻¹ B`` for right-hand sides ``B`` (bB..., nv, k); returns (batch..., nv, k)."""
    Q, bq = _q_in(model, q)
    return _solve_checked(model, Q, bq, B, bB)


def _solve_checked(model: Model, Q, bq, B, bB) -> np.ndarray:
    """`_solve` on configurations already converted (``Q`` (N, nq) rows of batch shape ``bq``,
    as `_q_in` returns them): the core that the library's own callers share (``aba`` and
    ``mass_matrix_inverse`` of a model with mimic joints), so that ``q`` is converted once per
    public call; the kernel still checks its values."""
    nv = model.nv
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
        for_batch(solve_batch, N, model.mi.shape[0])(model.mi, model.mf, Q, M, X, status)
    _check(model, status)
    return X.reshape(batch + B.shape[-2:])


def solve_mass_matrix(model: Model, q, b) -> np.ndarray:
    """``M(q)⁻¹ b`` (..., nv) by Cholesky of the CRBA matrix.

    Raises `SingularError` naming the joint whose velocity moves no
    inertia (e.g. a massless leaf body), `NonFiniteError` for NaN input.
    """
    bb = np.asarray(b, dtype=np.float64)
    if bb.ndim == 0 or bb.shape[-1] != model.nv:
        raise ShapeError(f"b must have shape (..., {model.nv}) (generalized forces), got {bb.shape}")
    if not np.all(np.isfinite(bb)):
        raise NonFiniteError("b contains NaN or infinity")
    return _solve(model, q, bb[..., None], bb.shape[:-1])[..., 0]


def solve_mass_matrix_columns(model: Model, q, B) -> np.ndarray:
    """``M(q)⁻¹ B`` for a matrix ``B`` (nv, k) by Cholesky of the CRBA matrix: (..., nv, k).
    (``M(q)⁻¹`` itself is `dqdyn.mass_matrix_inverse`, which needs no ``M``.)"""
    return _solve(model, q, np.asarray(B, dtype=np.float64), ())


__all__ = [
    "gravity",
    "nonlinear_effects",
    "mass_matrix",
    "solve_mass_matrix",
    "solve_mass_matrix_columns",
]
