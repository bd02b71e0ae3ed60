"""Forward and hybrid dynamics in O(n): the articulated-body algorithm in dual quaternion form.

Seed 002 Table 3 (forward dynamics) and Table 4 (hybrid dynamics), digest
``parallel-robots-and-lie-group-dynamics.md`` §1B.7–§1B.8, written with the dual quaternion
operations of seed 000:

* twists ``ξ = ω + ε v`` and wrenches ``ζ = f + ε τ`` are pure dual quaternions (vec6
  ``[ω, v]`` and ``[f, τ]``) and both change frame with the **same** ``Ad(x) ζ = x ζ x*``
  (seed 000 eq. 3), so Kim's coadjoint ``Ad*_{T⁻¹}`` is simply ``Ad(x_i^λ)`` here;
* Kim's ``ad_V`` (on twists) and ``−ad*_V`` (on wrenches) are both the dual quaternion cross
  product ``V × ·`` (seed 000 eq. 8);
* ``Sᵀ F`` is the power pairing ``⟨S, F⟩`` of the motion axes with a wrench;
* an inertia (rigid or articulated) is a linear map ``twist → wrench`` (a 6×6 array in the vec6
  layouts); it moves to the parent frame as ``Ad(x) Î Ad(x*)``.

Per body, with ``x_i^λ = x_J^λ x_J(q_i)``:

forward:   ``V_i = Ad(x_i^λ*) V_λ + S_i q̇_i``,  ``η_i = V_i × S_i q̇_i + Ṡ_i q̇_i``
backward:  ``Î_i = I_i + Σ_k Ad(x_k^i) Π_k Ad(x_k^i*)``,
           ``B̂_i = V_i × (I_i V_i) − F_i^ext + Σ_k Ad(x_k^i) β_k``,
           ``Ψ_i = ⟨S_i, Î_i S_i⟩⁻¹``,  ``Π_i = Î_i − Î_i S_i Ψ_i ⟨S_i, Î_i ·⟩``,
           ``β_i = B̂_i + Î_i (η_i + S_i Ψ_i (τ_i − ⟨S_i, Î_i η_i + B̂_i⟩))``
forward:   ``q̈_i = Ψ_i (τ_i − ⟨S_i, Î_i (Ad(x_i^λ*) V̇_λ + η_i) + B̂_i⟩)``,
           ``V̇_i = Ad(x_i^λ*) V̇_λ + S_i q̈_i + η_i``

Gravity enters as the base acceleration ``V̇_0 = −g`` (Kim's footnote 6).  Hybrid dynamics
(Table 4) is the same sweep with the columns of ``S_i`` split into prescribed (known ``q̈``, their
τ is computed from ``F_i = Î_i V̇_i + B̂_i``) and free ones (known τ); here the split may be per
degree of freedom, not only per joint.
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np

from ..algebra._core import ad6, ad6_inv
from ..errors import InfeasibleError, ModelError, NonFiniteError, ShapeError, SingularError
from ..multibody.joints import (
    HELICAL,
    PRISMATIC,
    REVOLUTE,
    joint_column,
    joint_nv,
    joint_velocity,
    joint_velocity_bias,
)
from ..multibody.model import (
    MF_AXIS,
    MF_COM,
    MF_INERTIA,
    MF_MASS,
    MF_PITCH,
    MF_SCALE,
    MF_GRAVITY,
    MI_IQ,
    MI_IV,
    MI_JTYPE,
    MI_NV,
    MI_PARENT,
    Model,
)
from .newton_euler import joint_pose, rotation_matrix
from ._common import (
    BLOCKS,
    BAD_SHAPE,
    BAD_TAU_FINITE,
    ND,
    OK,
    T_M,
    T_MF,
    T_MI,
    T_V,
    GATE,
    armed_call,
    as_vector,
    as_vector_batch,
    broadcast_batch,
    lazy_batch,
    out_batch,
    run_chunked,
    check_q,
    check_state,
    first_bad,
    gate_address,
    gate_matrix,
    gate_tables,
    gate_vector,
    raise_status,
)

njit = nb.njit(cache=True, error_model="numpy", fastmath={"contract"})
pjit = nb.njit(cache=True, parallel=True, error_model="numpy", fastmath={"contract"})
ijit = nb.njit(cache=True, inline="always", error_model="numpy", fastmath={"contract"})

SINGULAR = 2000  # + body index: the articulated inertia seen by a joint is singular


# =============================================================================== helpers
@njit
def body_inertia6(mf, i, out):
    """Rigid-body inertia of body ``i`` at its origin as a map twist ``[ω, v]`` → wrench ``[f, τ]``.

    ``f = m (v + ω × c)``, ``τ = Ī_c ω + c × f`` (momentum of a body whose CoM sits at ``c``).
    """
    m = mf[i, MF_MASS]
    cx, cy, cz = mf[i, MF_COM], mf[i, MF_COM + 1], mf[i, MF_COM + 2]
    for r in range(6):
        for s in range(6):
            out[r, s] = 0.0
    # f row: [-m [c]x , m I]
    out[0, 1], out[0, 2] = m * cz, -m * cy
    out[1, 0], out[1, 2] = -m * cz, m * cx
    out[2, 0], out[2, 1] = m * cy, -m * cx
    out[0, 3] = out[1, 4] = out[2, 5] = m
    # τ row: [Ī_c − m [c]x[c]x , m [c]x]
    for r in range(3):
        for s in range(3):
            out[3 + r, s] = mf[i, MF_INERTIA + 3 * r + s]
    c2 = cx * cx + cy * cy + cz * cz
    cc = (cx, cy, cz)
    for r in range(3):
        for s in range(3):
            out[3 + r, s] += m * ((c2 if r == s else 0.0) - cc[r] * cc[s])
    out[3, 4], out[3, 5] = -m * cz, m * cy
    out[4, 3], out[4, 5] = m * cz, -m * cx
    out[5, 3], out[5, 4] = -m * cy, m * cx


@njit
def matvec6(A, x, out):
    for r in range(6):
        s = 0.0
        for c in range(6):
            s += A[r, c] * x[c]
        out[r] = s


@njit
def transform_inertia_to_parent(x, P, out, scratch):
    """``out += Ad(x) P Ad(x*)``: move an inertia (twist → wrench map) from child to parent.

    An inertia in the vec6 layouts has the block form ``[[A, B], [C, Aᵀ]]`` (``B``, ``C``
    symmetric: ``f = A ω + B v``, ``τ = C ω + Aᵀ v``).  With ``x = r + ε ½ p r`` (rotation ``R``,
    translation ``p``), rotating gives ``A' = R A Rᵀ`` (same for ``B``, ``C``), and moving the
    reference point by ``p`` gives ``A'' = A' − B' p̂``, ``B'' = B'``,
    ``C'' = C' + p̂ A' − A'ᵀ p̂ − p̂ B' p̂`` — the blocks of ``Ad(x) P Ad(x*)`` (verified against the
    dense product in the tests).
    """
    w, a, b, c = x[0], x[1], x[2], x[3]
    # rotation matrix of r
    R00 = 1 - 2 * (b * b + c * c)
    R01 = 2 * (a * b - w * c)
    R02 = 2 * (a * c + w * b)
    R10 = 2 * (a * b + w * c)
    R11 = 1 - 2 * (a * a + c * c)
    R12 = 2 * (b * c - w * a)
    R20 = 2 * (a * c - w * b)
    R21 = 2 * (b * c + w * a)
    R22 = 1 - 2 * (a * a + b * b)
    R = ((R00, R01, R02), (R10, R11, R12), (R20, R21, R22))
    # translation p = 2 D r*
    d0, d1, d2, d3 = x[4], x[5], x[6], x[7]
    px = 2.0 * (-d0 * a + d1 * w - d2 * c + d3 * b)
    py = 2.0 * (-d0 * b + d1 * c + d2 * w - d3 * a)
    pz = 2.0 * (-d0 * c - d1 * b + d2 * a + d3 * w)
    Ar = scratch[0]
    Br = scratch[1]
    Cr = scratch[2]
    T = scratch[3]
    for blk in range(3):
        # X = block of P: A = P[0:3, 0:3], B = P[0:3, 3:6], C = P[3:6, 0:3]
        r0 = 0 if blk != 2 else 3
        c0 = 0 if blk != 1 else 3
        # T = X Rᵀ
        for i in range(3):
            for j in range(3):
                T[i, j] = P[r0 + i, c0] * R[j][0] + P[r0 + i, c0 + 1] * R[j][1] + P[r0 + i, c0 + 2] * R[j][2]
        dst = Ar if blk == 0 else (Br if blk == 1 else Cr)
        for i in range(3):
            for j in range(3):
                dst[i, j] = R[i][0] * T[0, j] + R[i][1] * T[1, j] + R[i][2] * T[2, j]
    # Bp = B' p̂  (column form: (B' p̂)[:, j] = B' (p × e_j))  ; pA = p̂ A' ; pB = p̂ B'
    # p̂ = [[0, −pz, py], [pz, 0, −px], [−py, px, 0]]
    for i in range(3):
        b0, b1, b2 = Br[i, 0], Br[i, 1], Br[i, 2]
        # row i of B' p̂
        T[i, 0] = b1 * pz - b2 * py
        T[i, 1] = -b0 * pz + b2 * px
        T[i, 2] = b0 * py - b1 * px
    # A'' = A' − B' p̂ ; B'' = B'
    for i in range(3):
        for j in range(3):
            out[i, j] += Ar[i, j] - T[i, j]
            out[i, 3 + j] += Br[i, j]
    # C'' = C' + p̂ A' − A'ᵀ p̂ − p̂ B' p̂   (p̂ B' p̂ = p̂ T)
    for j in range(3):
        # p̂ applied to column j of A' and of T
        a0, a1, a2 = Ar[0, j], Ar[1, j], Ar[2, j]
        t0, t1, t2 = T[0, j], T[1, j], T[2, j]
        pa0, pa1, pa2 = py * a2 - pz * a1, pz * a0 - px * a2, px * a1 - py * a0
        pt0, pt1, pt2 = py * t2 - pz * t1, pz * t0 - px * t2, px * t1 - py * t0
        pa = (pa0, pa1, pa2)
        pt = (pt0, pt1, pt2)
        for i in range(3):
            # (A'ᵀ p̂)[i, j] = Σ_k A'[k, i] p̂[k, j]
            if j == 0:
                atp = Ar[1, i] * pz - Ar[2, i] * py
            elif j == 1:
                atp = -Ar[0, i] * pz + Ar[2, i] * px
            else:
                atp = Ar[0, i] * py - Ar[1, i] * px
            cij = Cr[i, j] + pa[i] - atp - pt[i]
            out[3 + i, j] += cij
    # lower-right block is (A'')ᵀ
    for i in range(3):
        for j in range(3):
            out[3 + i, 3 + j] += Ar[j, i] - T[j, i]


@njit
def transform_inertia_to_parent_dense(x, P, out, col, col2):
    """Reference (dense) form of :func:`transform_inertia_to_parent`: ``Ad(x) P Ad(x*) e_k``."""
    for k in range(6):
        for r in range(6):
            col[r] = 0.0
        col[k] = 1.0
        ad6_inv(x, col, col2)
        matvec6(P, col2, col)
        ad6(x, col, col2)
        for r in range(6):
            out[r, k] += col2[r]


@njit
def chol_factor(A, n, L):
    """Cholesky factor ``L`` of the leading ``n × n`` block of SPD ``A``; False if not PD."""
    for i in range(n):
        for j in range(i + 1):
            s = A[i, j]
            for k in range(j):
                s -= L[i, k] * L[j, k]
            if i == j:
                if s <= 1e-300:
                    return False
                L[i, i] = math.sqrt(s)
            else:
                L[i, j] = s / L[j, j]
    return True


@njit
def lower_solve(L, n, x):
    """In place ``x ← L⁻¹ x`` (``L`` lower triangular, leading ``n × n`` block)."""
    for i in range(n):
        s = x[i]
        for k in range(i):
            s -= L[i, k] * x[k]
        x[i] = s / L[i, i]


@njit
def lower_t_solve(L, n, x):
    """In place ``x ← L⁻ᵀ x``."""
    for i in range(n - 1, -1, -1):
        s = x[i]
        for k in range(i + 1, n):
            s -= L[k, i] * x[k]
        x[i] = s / L[i, i]


@njit
def chol_solve(L, n, b, x):
    """Solve ``L Lᵀ x = b`` (``b`` and ``x`` may alias)."""
    for i in range(n):
        x[i] = b[i]
    lower_solve(L, n, x)
    lower_t_solve(L, n, x)


# =============================================================================== the kernel
# Per-body workspace columns (rows of a 2-D view of the flat scratch; one extra row at the end
# is scratch).  Inside the kernels a twist is ``[ω; v]`` and a wrench ``[τ; f]`` (torque first):
# with that order an inertia ``Î: twist ↦ wrench`` is a *symmetric* 6×6 matrix and the power
# pairing ⟨S, F⟩ is ``Sᵀ F``.  It is kept as 21 numbers, ``τ = Ī ω + H v``, ``f = Hᵀ ω + M v``:
# ``Ī`` (upper triangle, 6), ``H`` (row-major, 9), ``M`` (upper triangle, 6).  For a rigid body
# at its origin ``Ī = Ī_c + m(|c|² 1 − c cᵀ)``, ``H = m [c]×``, ``M = m 1`` (the same map as
# :func:`body_inertia6` with the wrench halves swapped).  The public wrench layout ``[f, τ]``
# appears only at the boundary (``fext``).
K_R = 0  # rotation of x_i^λ (9, row-major: F_i axes → F_λ axes)
K_P = 9  # translation of x_i^λ: origin of F_i in F_λ (3)
K_V = 12  # V_i, body twist [ω; v] (6)
K_C = 18  # η_i = V_i × S q̇ + Ṡ q̇ (+ S q̈ of the prescribed DoFs) (6)
K_I = 24  # articulated inertia Î_i (21)
K_PA = 45  # bias wrench B̂_i [τ; f] (6)
K_A = 51  # V̇_i (6)
K_U = 57  # U = Î S of the free DoFs, column a at K_U + 6a (36)
K_S = 93  # S_k, column k at K_S + 6k (multi-DoF joints only) (36)
K_L = 129  # Cholesky factor of D = Sᵀ Î S (6×6 row-major); 1-DoF joints: 1/D at K_L
K_UU = 165  # u = τ − Sᵀ B̂ of the free DoFs (6)
K_COLS = 171
# scratch row (index nb1)
SC_IA = 0  # Π_i = Î − U D⁻¹ Uᵀ (21)
SC_XJ = 24
SC_XL = 32
SC_AX = 40
SC_S = 44
SC_T = 50
SC_UU = 56
SC_SOL = 62
SC_DM = 68  # 6×6
SC_P = 104  # 6×6 (U D⁻¹ Uᵀ)
SC_FREE = 140  # indices of the free DoFs of a joint (6)
TINY_PIVOT = 1e-300


@njit
def workspace_size_nb(nb1, nv):
    """Length of the flat scratch array the kernels below carve their buffers from."""
    return (nb1 + 1) * K_COLS + 2 * nv


def workspace_size(nb1: int, nv: int) -> int:
    return int(workspace_size_nb(nb1, nv))


@ijit
def _one_dof(jt):
    return jt == REVOLUTE or jt == PRISMATIC or jt == HELICAL


@ijit
def _axis6(mf, i, jt):
    """``S`` of a revolute / prismatic / helical joint: ``(α a, β a)`` with ``(α, β)`` = (1, 0),
    (0, 1), (1, h)."""
    a0, a1, a2 = mf[i, MF_AXIS], mf[i, MF_AXIS + 1], mf[i, MF_AXIS + 2]
    if jt == REVOLUTE:
        return a0, a1, a2, 0.0, 0.0, 0.0
    if jt == PRISMATIC:
        return 0.0, 0.0, 0.0, a0, a1, a2
    h = mf[i, MF_PITCH]
    return a0, a1, a2, h * a0, h * a1, h * a2


@ijit
def _body_pose(mi, mf, i, q, W, ax, xj, xl):
    """``W[i, K_R…], W[i, K_P…]``: rotation and translation of ``x_i^λ = x_J^λ x_J(q_i)``
    (``ax``, ``xj``, ``xl``: joint_pose's scratch, views made once per sweep)."""
    r0, r1, r2, r3, t0, t1, t2 = joint_pose(mi, mf, i, q, ax, xj, xl)
    rotation_matrix(r0, r1, r2, r3, W, i, K_R)
    W[i, K_P] = t0
    W[i, K_P + 1] = t1
    W[i, K_P + 2] = t2


@ijit
def _sym_congruence(R00, R01, R02, R10, R11, R12, R20, R21, R22,
                    a00, a01, a02, a11, a12, a22):
    """``R S Rᵀ`` of a symmetric 3×3 ``S`` (upper triangle in, upper triangle out): the frame
    change ``Ad(r) L3(𝕀) Ad(r*)`` of a rotational inertia (seed 000 eq. 14)."""
    T00 = R00 * a00 + R01 * a01 + R02 * a02
    T01 = R00 * a01 + R01 * a11 + R02 * a12
    T02 = R00 * a02 + R01 * a12 + R02 * a22
    T10 = R10 * a00 + R11 * a01 + R12 * a02
    T11 = R10 * a01 + R11 * a11 + R12 * a12
    T12 = R10 * a02 + R11 * a12 + R12 * a22
    T20 = R20 * a00 + R21 * a01 + R22 * a02
    T21 = R20 * a01 + R21 * a11 + R22 * a12
    T22 = R20 * a02 + R21 * a12 + R22 * a22
    return (T00 * R00 + T01 * R01 + T02 * R02, T00 * R10 + T01 * R11 + T02 * R12,
            T00 * R20 + T01 * R21 + T02 * R22, T10 * R10 + T11 * R11 + T12 * R12,
            T10 * R20 + T11 * R21 + T12 * R22, T20 * R20 + T21 * R21 + T22 * R22)


@ijit
def _rigid_inertia_of(W, i, m, cx, cy, cz, J00, J01, J02, J11, J12, J22):
    """``W[i, K_I…]``: the inertia (symmetric form) about the frame origin of a rigid body of
    mass ``m``, CoM ``c`` and rotational inertia ``J`` about the CoM (upper triangle), all in
    that frame: ``Ī = J + m(|c|² 1 − c cᵀ)``, ``H = m [c]×``, ``M = m 1``."""
    mx, my, mz = m * cx, m * cy, m * cz
    o = K_I
    W[i, o] = J00 + my * cy + mz * cz
    W[i, o + 1] = J01 - mx * cy
    W[i, o + 2] = J02 - mx * cz
    W[i, o + 3] = J11 + mx * cx + mz * cz
    W[i, o + 4] = J12 - my * cz
    W[i, o + 5] = J22 + mx * cx + my * cy
    # H = m [c]×
    W[i, o + 6] = 0.0
    W[i, o + 7] = -mz
    W[i, o + 8] = my
    W[i, o + 9] = mz
    W[i, o + 10] = 0.0
    W[i, o + 11] = -mx
    W[i, o + 12] = -my
    W[i, o + 13] = mx
    W[i, o + 14] = 0.0
    W[i, o + 15] = m
    W[i, o + 16] = 0.0
    W[i, o + 17] = 0.0
    W[i, o + 18] = m
    W[i, o + 19] = 0.0
    W[i, o + 20] = m


@ijit
def _rigid_inertia(mf, i, W):
    """``W[i, K_I…]``: the rigid inertia of body ``i`` at its origin (symmetric form)."""
    o = MF_INERTIA
    _rigid_inertia_of(W, i, mf[i, MF_MASS], mf[i, MF_COM], mf[i, MF_COM + 1], mf[i, MF_COM + 2],
                      mf[i, o], mf[i, o + 1], mf[i, o + 2], mf[i, o + 4], mf[i, o + 5], mf[i, o + 8])


@ijit
def _ia_apply(A, r, o, w0, w1, w2, v0, v1, v2):
    """``Î x`` for the symmetric inertia stored at ``A[r, o:o+21]``: returns ``(τ, f)``."""
    I00, I01, I02 = A[r, o], A[r, o + 1], A[r, o + 2]
    I11, I12, I22 = A[r, o + 3], A[r, o + 4], A[r, o + 5]
    H00, H01, H02 = A[r, o + 6], A[r, o + 7], A[r, o + 8]
    H10, H11, H12 = A[r, o + 9], A[r, o + 10], A[r, o + 11]
    H20, H21, H22 = A[r, o + 12], A[r, o + 13], A[r, o + 14]
    M00, M01, M02 = A[r, o + 15], A[r, o + 16], A[r, o + 17]
    M11, M12, M22 = A[r, o + 18], A[r, o + 19], A[r, o + 20]
    return (I00 * w0 + I01 * w1 + I02 * w2 + H00 * v0 + H01 * v1 + H02 * v2,
            I01 * w0 + I11 * w1 + I12 * w2 + H10 * v0 + H11 * v1 + H12 * v2,
            I02 * w0 + I12 * w1 + I22 * w2 + H20 * v0 + H21 * v1 + H22 * v2,
            H00 * w0 + H10 * w1 + H20 * w2 + M00 * v0 + M01 * v1 + M02 * v2,
            H01 * w0 + H11 * w1 + H21 * w2 + M01 * v0 + M11 * v1 + M12 * v2,
            H02 * w0 + H12 * w1 + H22 * w2 + M02 * v0 + M12 * v1 + M22 * v2)


@ijit
def _inertia_to_parent(W, i, lam, A, ra):
    """``Î_λ += X_iᵀ Π X_i`` (Table 3's ``Ad(x) Π Ad(x*)``), ``Π`` at ``A[ra, SC_IA…]`` in F_i.

    ``X_i`` (twists from F_λ to F_i) is a rotation ``R`` of both halves after a shift by ``p``:
    with ``Ī_r = R Ī Rᵀ`` (and ``H_r``, ``M_r`` likewise), ``K = [p]× M_r``:
    ``M' = M_r``, ``H' = H_r + K``, ``Ī' = Ī_r − (Y + Yᵀ)`` with ``Y = (H_r + ½K)[p]×``
    (the blocks of the dense product; see :func:`transform_inertia_to_parent` for the
    ``[f, τ]`` form).
    """
    R00, R01, R02 = W[i, K_R], W[i, K_R + 1], W[i, K_R + 2]
    R10, R11, R12 = W[i, K_R + 3], W[i, K_R + 4], W[i, K_R + 5]
    R20, R21, R22 = W[i, K_R + 6], W[i, K_R + 7], W[i, K_R + 8]
    p0, p1, p2 = W[i, K_P], W[i, K_P + 1], W[i, K_P + 2]
    o = SC_IA
    # ---- Ī_r = R Ī Rᵀ (symmetric)
    a00, a01, a02 = A[ra, o], A[ra, o + 1], A[ra, o + 2]
    a11, a12, a22 = A[ra, o + 3], A[ra, o + 4], A[ra, o + 5]
    i00, i01, i02, i11, i12, i22 = _sym_congruence(
        R00, R01, R02, R10, R11, R12, R20, R21, R22, a00, a01, a02, a11, a12, a22)
    # ---- M_r = R M Rᵀ (symmetric)
    a00, a01, a02 = A[ra, o + 15], A[ra, o + 16], A[ra, o + 17]
    a11, a12, a22 = A[ra, o + 18], A[ra, o + 19], A[ra, o + 20]
    m00, m01, m02, m11, m12, m22 = _sym_congruence(
        R00, R01, R02, R10, R11, R12, R20, R21, R22, a00, a01, a02, a11, a12, a22)
    # ---- H_r = R H Rᵀ
    a00, a01, a02 = A[ra, o + 6], A[ra, o + 7], A[ra, o + 8]
    a10, a11, a12 = A[ra, o + 9], A[ra, o + 10], A[ra, o + 11]
    a20, a21, a22 = A[ra, o + 12], A[ra, o + 13], A[ra, o + 14]
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
    # ---- K = [p]× M_r (column j: p × M_r e_j)
    k00 = p1 * m02 - p2 * m01
    k10 = p2 * m00 - p0 * m02
    k20 = p0 * m01 - p1 * m00
    k01 = p1 * m12 - p2 * m11
    k11 = p2 * m01 - p0 * m12
    k21 = p0 * m11 - p1 * m01
    k02 = p1 * m22 - p2 * m12
    k12 = p2 * m02 - p0 * m22
    k22 = p0 * m12 - p1 * m02
    # ---- Y = (H_r + ½K)[p]×  (row r: g_r × p)
    g00, g01, g02 = h00 + 0.5 * k00, h01 + 0.5 * k01, h02 + 0.5 * k02
    g10, g11, g12 = h10 + 0.5 * k10, h11 + 0.5 * k11, h12 + 0.5 * k12
    g20, g21, g22 = h20 + 0.5 * k20, h21 + 0.5 * k21, h22 + 0.5 * k22
    y00, y01, y02 = g01 * p2 - g02 * p1, g02 * p0 - g00 * p2, g00 * p1 - g01 * p0
    y10, y11, y12 = g11 * p2 - g12 * p1, g12 * p0 - g10 * p2, g10 * p1 - g11 * p0
    y20, y21, y22 = g21 * p2 - g22 * p1, g22 * p0 - g20 * p2, g20 * p1 - g21 * p0
    d = K_I
    W[lam, d] += i00 - 2.0 * y00
    W[lam, d + 1] += i01 - (y01 + y10)
    W[lam, d + 2] += i02 - (y02 + y20)
    W[lam, d + 3] += i11 - 2.0 * y11
    W[lam, d + 4] += i12 - (y12 + y21)
    W[lam, d + 5] += i22 - 2.0 * y22
    W[lam, d + 6] += h00 + k00
    W[lam, d + 7] += h01 + k01
    W[lam, d + 8] += h02 + k02
    W[lam, d + 9] += h10 + k10
    W[lam, d + 10] += h11 + k11
    W[lam, d + 11] += h12 + k12
    W[lam, d + 12] += h20 + k20
    W[lam, d + 13] += h21 + k21
    W[lam, d + 14] += h22 + k22
    W[lam, d + 15] += m00
    W[lam, d + 16] += m01
    W[lam, d + 17] += m02
    W[lam, d + 18] += m11
    W[lam, d + 19] += m12
    W[lam, d + 20] += m22


@ijit
def _wrench_to_parent(W, i, lam, off, b0, b1, b2, b3, b4, b5):
    """``W[lam, off…] += Ad(x_i^λ) β`` for a wrench ``β = [τ; f]`` in F_i:
    ``f' = R f``, ``τ' = R τ + p × f'``."""
    R00, R01, R02 = W[i, K_R], W[i, K_R + 1], W[i, K_R + 2]
    R10, R11, R12 = W[i, K_R + 3], W[i, K_R + 4], W[i, K_R + 5]
    R20, R21, R22 = W[i, K_R + 6], W[i, K_R + 7], W[i, K_R + 8]
    p0, p1, p2 = W[i, K_P], W[i, K_P + 1], W[i, K_P + 2]
    f0 = R00 * b3 + R01 * b4 + R02 * b5
    f1 = R10 * b3 + R11 * b4 + R12 * b5
    f2 = R20 * b3 + R21 * b4 + R22 * b5
    W[lam, off] += R00 * b0 + R01 * b1 + R02 * b2 + (p1 * f2 - p2 * f1)
    W[lam, off + 1] += R10 * b0 + R11 * b1 + R12 * b2 + (p2 * f0 - p0 * f2)
    W[lam, off + 2] += R20 * b0 + R21 * b1 + R22 * b2 + (p0 * f1 - p1 * f0)
    W[lam, off + 3] += f0
    W[lam, off + 4] += f1
    W[lam, off + 5] += f2


@ijit
def _twist_from_parent(W, i, lam, off):
    """``Ad(x_i^λ*) X_λ`` for the twist at ``W[lam, off…]``: ``ω' = Rᵀ ω``, ``v' = Rᵀ (v + ω × p)``."""
    R00, R01, R02 = W[i, K_R], W[i, K_R + 1], W[i, K_R + 2]
    R10, R11, R12 = W[i, K_R + 3], W[i, K_R + 4], W[i, K_R + 5]
    R20, R21, R22 = W[i, K_R + 6], W[i, K_R + 7], W[i, K_R + 8]
    p0, p1, p2 = W[i, K_P], W[i, K_P + 1], W[i, K_P + 2]
    e0, e1, e2 = W[lam, off], W[lam, off + 1], W[lam, off + 2]
    f0 = W[lam, off + 3] + (e1 * p2 - e2 * p1)
    f1 = W[lam, off + 4] + (e2 * p0 - e0 * p2)
    f2 = W[lam, off + 5] + (e0 * p1 - e1 * p0)
    return (R00 * e0 + R10 * e1 + R20 * e2, R01 * e0 + R11 * e1 + R21 * e2,
            R02 * e0 + R12 * e1 + R22 * e2, R00 * f0 + R10 * f1 + R20 * f2,
            R01 * f0 + R11 * f1 + R21 * f2, R02 * f0 + R12 * f1 + R22 * f2)


# ------------------------------------------------------------------ M⁻¹ (Carpentier's recursion)
# Per-body columns of the M⁻¹ kernel (same W rows as the ABA kernel; K_R, K_P hold x_i^λ, K_I
# the articulated inertia — here in the world frame —, K_U = Î S, K_S = S, K_L the factor of D):
K_R0 = K_V  # rotation of x_i^0 (9, row-major: F_i axes → world axes), in the K_V / K_C slots
K_P0 = K_V + 9  # origin of F_i in the world (3)
K_SW = K_S  # S_i in the world frame, column a at K_SW + 6a
K_UD = K_L  # U_i D_i⁻¹ in the world frame, column a at K_UD + 6a (overwrites the factor of D)


@ijit
def _world_pose(W, i, lam):
    """``W[i, K_R0…], W[i, K_P0…]``: ``x_i^0 = x_λ^0 x_i^λ`` from the local (R, p) of body i."""
    if lam == 0:
        for k in range(9):
            W[i, K_R0 + k] = W[i, K_R + k]
        for k in range(3):
            W[i, K_P0 + k] = W[i, K_P + k]
        return
    for r in range(3):
        a0, a1, a2 = W[lam, K_R0 + 3 * r], W[lam, K_R0 + 3 * r + 1], W[lam, K_R0 + 3 * r + 2]
        for c in range(3):
            W[i, K_R0 + 3 * r + c] = (a0 * W[i, K_R + c] + a1 * W[i, K_R + 3 + c]
                                      + a2 * W[i, K_R + 6 + c])
        W[i, K_P0 + r] = (W[lam, K_P0 + r] + a0 * W[i, K_P] + a1 * W[i, K_P + 1]
                          + a2 * W[i, K_P + 2])


@ijit
def _twist_to_world(W, i, w0, w1, w2, u0, u1, u2):
    """``Ad(x_i^0) [ω; v]``: ``ω' = R ω``, ``v' = R v + p × ω'``."""
    R00, R01, R02 = W[i, K_R0], W[i, K_R0 + 1], W[i, K_R0 + 2]
    R10, R11, R12 = W[i, K_R0 + 3], W[i, K_R0 + 4], W[i, K_R0 + 5]
    R20, R21, R22 = W[i, K_R0 + 6], W[i, K_R0 + 7], W[i, K_R0 + 8]
    p0, p1, p2 = W[i, K_P0], W[i, K_P0 + 1], W[i, K_P0 + 2]
    e0 = R00 * w0 + R01 * w1 + R02 * w2
    e1 = R10 * w0 + R11 * w1 + R12 * w2
    e2 = R20 * w0 + R21 * w1 + R22 * w2
    return (e0, e1, e2,
            R00 * u0 + R01 * u1 + R02 * u2 + (p1 * e2 - p2 * e1),
            R10 * u0 + R11 * u1 + R12 * u2 + (p2 * e0 - p0 * e2),
            R20 * u0 + R21 * u1 + R22 * u2 + (p0 * e1 - p1 * e0))


@ijit
def _rigid_inertia_world(mf, i, W):
    """``W[i, K_I…]``: the rigid inertia of body ``i`` about the world origin, in world axes
    (``c' = p + R c``, ``J' = R J Rᵀ`` with ``x_i^0`` at ``K_R0``, ``K_P0``)."""
    R00, R01, R02 = W[i, K_R0], W[i, K_R0 + 1], W[i, K_R0 + 2]
    R10, R11, R12 = W[i, K_R0 + 3], W[i, K_R0 + 4], W[i, K_R0 + 5]
    R20, R21, R22 = W[i, K_R0 + 6], W[i, K_R0 + 7], W[i, K_R0 + 8]
    cx, cy, cz = mf[i, MF_COM], mf[i, MF_COM + 1], mf[i, MF_COM + 2]
    o = MF_INERTIA
    a00, a01, a02 = mf[i, o], mf[i, o + 1], mf[i, o + 2]
    a11, a12, a22 = mf[i, o + 4], mf[i, o + 5], mf[i, o + 8]
    j00, j01, j02, j11, j12, j22 = _sym_congruence(
        R00, R01, R02, R10, R11, R12, R20, R21, R22, a00, a01, a02, a11, a12, a22)
    _rigid_inertia_of(W, i, mf[i, MF_MASS],
                      W[i, K_P0] + R00 * cx + R01 * cy + R02 * cz,
                      W[i, K_P0 + 1] + R10 * cx + R11 * cy + R12 * cz,
                      W[i, K_P0 + 2] + R20 * cx + R21 * cy + R22 * cz,
                      j00, j01, j02, j11, j12, j22)


@ijit
def _add_inertia(W, lam, sc):
    """``Î_λ += Π`` for ``Π`` at ``sc[SC_IA…]`` when both are in the same frame (the world)."""
    for k in range(21):
        W[lam, K_I + k] += sc[SC_IA + k]


@ijit
def _generic_factor(mi, mf, i, q, W, sc, has_presc, presc, qdd_in, tau, iv, jt, world):
    """Multi-DoF (or partly prescribed) joint, pass 2: ``S`` columns, ``η += S_p q̈_p``, ``U``,
    ``u``, the Cholesky factor of ``D``; returns (status, number of free DoFs).  ``world``:
    ``S`` is moved to the world frame (``x_i^0`` at ``K_R0``, ``K_P0``), where ``Î`` then is."""
    nvj = joint_nv(jt)
    ax = sc[SC_AX : SC_AX + 3]
    ax[0], ax[1], ax[2] = mf[i, MF_AXIS], mf[i, MF_AXIS + 1], mf[i, MF_AXIS + 2]
    nf = 0
    for k in range(nvj):
        s = W[i, K_S + 6 * k : K_S + 6 * k + 6]
        joint_column(jt, ax, mf[i, MF_PITCH], q, mi[i, MI_IQ], k, s)
        if world:
            s[0], s[1], s[2], s[3], s[4], s[5] = _twist_to_world(W, i, s[0], s[1], s[2], s[3],
                                                                 s[4], s[5])
        if has_presc and presc[iv + k] != 0.0:
            w = qdd_in[iv + k]
            for r in range(6):
                W[i, K_C + r] += s[r] * w
        else:
            sc[SC_FREE + nf] = k
            nf += 1
    for a in range(nf):
        so = K_S + 6 * int(sc[SC_FREE + a])
        u = _ia_apply(W, i, K_I, W[i, so], W[i, so + 1], W[i, so + 2], W[i, so + 3],
                      W[i, so + 4], W[i, so + 5])
        acc = 0.0
        for r in range(6):
            W[i, K_U + 6 * a + r] = u[r]
            acc += W[i, so + r] * W[i, K_PA + r]
        W[i, K_UU + a] = tau[iv + int(sc[SC_FREE + a])] - acc
    Dm = sc[SC_DM : SC_DM + 36].reshape((6, 6))
    for a in range(nf):
        so = K_S + 6 * int(sc[SC_FREE + a])
        for b in range(nf):
            acc = 0.0
            for r in range(6):
                acc += W[i, so + r] * W[i, K_U + 6 * b + r]
            Dm[a, b] = acc
    if nf > 0 and not chol_factor(Dm, nf, W[i, K_L : K_L + 36].reshape((6, 6))):
        return SINGULAR + i, nf
    return OK, nf


@ijit
def _pi_1dof(W, i, d, od, add, U0, U1, U2, U3, U4, U5, dinv):
    """``Π = Î − U D⁻¹ Uᵀ`` for a single free axis, written to ``W[d, od…]`` (``add``: added
    there — the parent's ``Î`` when both are in the same frame); returns ``U D⁻¹``."""
    o = K_I
    V0, V1, V2, V3, V4, V5 = U0 * dinv, U1 * dinv, U2 * dinv, U3 * dinv, U4 * dinv, U5 * dinv
    p0 = W[i, o] - V0 * U0
    p1 = W[i, o + 1] - V0 * U1
    p2 = W[i, o + 2] - V0 * U2
    p3 = W[i, o + 3] - V1 * U1
    p4 = W[i, o + 4] - V1 * U2
    p5 = W[i, o + 5] - V2 * U2
    p6 = W[i, o + 6] - V0 * U3
    p7 = W[i, o + 7] - V0 * U4
    p8 = W[i, o + 8] - V0 * U5
    p9 = W[i, o + 9] - V1 * U3
    p10 = W[i, o + 10] - V1 * U4
    p11 = W[i, o + 11] - V1 * U5
    p12 = W[i, o + 12] - V2 * U3
    p13 = W[i, o + 13] - V2 * U4
    p14 = W[i, o + 14] - V2 * U5
    p15 = W[i, o + 15] - V3 * U3
    p16 = W[i, o + 16] - V3 * U4
    p17 = W[i, o + 17] - V3 * U5
    p18 = W[i, o + 18] - V4 * U4
    p19 = W[i, o + 19] - V4 * U5
    p20 = W[i, o + 20] - V5 * U5
    if add:
        W[d, od] += p0
        W[d, od + 1] += p1
        W[d, od + 2] += p2
        W[d, od + 3] += p3
        W[d, od + 4] += p4
        W[d, od + 5] += p5
        W[d, od + 6] += p6
        W[d, od + 7] += p7
        W[d, od + 8] += p8
        W[d, od + 9] += p9
        W[d, od + 10] += p10
        W[d, od + 11] += p11
        W[d, od + 12] += p12
        W[d, od + 13] += p13
        W[d, od + 14] += p14
        W[d, od + 15] += p15
        W[d, od + 16] += p16
        W[d, od + 17] += p17
        W[d, od + 18] += p18
        W[d, od + 19] += p19
        W[d, od + 20] += p20
    else:
        W[d, od] = p0
        W[d, od + 1] = p1
        W[d, od + 2] = p2
        W[d, od + 3] = p3
        W[d, od + 4] = p4
        W[d, od + 5] = p5
        W[d, od + 6] = p6
        W[d, od + 7] = p7
        W[d, od + 8] = p8
        W[d, od + 9] = p9
        W[d, od + 10] = p10
        W[d, od + 11] = p11
        W[d, od + 12] = p12
        W[d, od + 13] = p13
        W[d, od + 14] = p14
        W[d, od + 15] = p15
        W[d, od + 16] = p16
        W[d, od + 17] = p17
        W[d, od + 18] = p18
        W[d, od + 19] = p19
        W[d, od + 20] = p20
    return V0, V1, V2, V3, V4, V5


@ijit
def _pi_generic(W, i, sc, nf):
    """``sc[SC_IA…] = Π = Î − U D⁻¹ Uᵀ`` for ``nf`` free axes (Cholesky factor of D at K_L)."""
    Lc = W[i, K_L : K_L + 36].reshape((6, 6))
    uu = sc[SC_UU : SC_UU + 6]
    sol = sc[SC_SOL : SC_SOL + 6]
    Pm = sc[SC_P : SC_P + 36].reshape((6, 6))
    # P = U D⁻¹ Uᵀ column by column (sol = D⁻¹ (row c of U))
    for c in range(6):
        for a in range(nf):
            uu[a] = W[i, K_U + 6 * a + c]
        if nf > 0:
            chol_solve(Lc, nf, uu, sol)
        for r in range(6):
            acc = 0.0
            for a in range(nf):
                acc += W[i, K_U + 6 * a + r] * sol[a]
            Pm[r, c] = acc
    o = K_I
    for k in range(6):
        sc[SC_IA + k] = W[i, o + k]
    sc[0] -= Pm[0, 0]
    sc[1] -= Pm[0, 1]
    sc[2] -= Pm[0, 2]
    sc[3] -= Pm[1, 1]
    sc[4] -= Pm[1, 2]
    sc[5] -= Pm[2, 2]
    for r in range(3):
        for c in range(3):
            sc[6 + 3 * r + c] = W[i, o + 6 + 3 * r + c] - Pm[r, 3 + c]
    for k in range(6):
        sc[15 + k] = W[i, o + 15 + k]
    sc[15] -= Pm[3, 3]
    sc[16] -= Pm[3, 4]
    sc[17] -= Pm[3, 5]
    sc[18] -= Pm[4, 4]
    sc[19] -= Pm[4, 5]
    sc[20] -= Pm[5, 5]


@njit
def hybrid_kernel(mi, mf, q, v, tau, fext, use_fext, presc, qdd_in, qdd, tau_out, ws):
    """Hybrid dynamics (seed 002 Table 4); with no prescribed DoF it is the ABA (Table 3).

    ``presc[k] != 0`` marks DoF ``k`` as acceleration-prescribed (``qdd_in[k]`` given,
    ``tau_out[k]`` computed); the others take ``tau[k]`` and get ``qdd[k]``.  ``presc`` (and
    ``qdd_in``) of length 0 mean "nothing prescribed".  Gravity is read from the world row of
    ``mf``.  ``ws`` is flat scratch of :func:`workspace_size` floats.  Returns a status code.

    Revolute, prismatic and helical joints whose DoF is free take a scalar path (``S`` a
    constant axis, ``D`` a number); other joints go through the generic motion-axis helpers.
    """
    st = check_state(mi, q, v, tau, BAD_TAU_FINITE, fext, use_fext)
    if st != OK:
        return st
    nb1 = mi.shape[0]
    has_presc = presc.shape[0] > 0
    W = ws[: (nb1 + 1) * K_COLS].reshape((nb1 + 1, K_COLS))
    sc = W[nb1]
    for k in range(6):
        W[0, K_V + k] = 0.0
        W[0, K_A + k] = 0.0
    # base acceleration: V̇_0 = −g  (Kim, footnote 6); g sits in the world row of mf
    W[0, K_A + 3] = -mf[0, MF_GRAVITY]
    W[0, K_A + 4] = -mf[0, MF_GRAVITY + 1]
    W[0, K_A + 5] = -mf[0, MF_GRAVITY + 2]

    # ---------------------------------------------------------------- forward: V_i, η_i, B_i
    ax3, xj8, xl8 = sc[SC_AX : SC_AX + 3], sc[SC_XJ : SC_XJ + 8], sc[SC_XL : SC_XL + 8]
    for i in range(1, nb1):
        jt = mi[i, MI_JTYPE]
        lam = mi[i, MI_PARENT]
        iv = mi[i, MI_IV]
        _body_pose(mi, mf, i, q, W, ax3, xj8, xl8)
        # V_i = Ad(x_i^λ*) V_λ + S q̇
        w0, w1, w2, u0, u1, u2 = _twist_from_parent(W, i, lam, K_V)
        if _one_dof(jt):
            s0, s1, s2, s3, s4, s5 = _axis6(mf, i, jt)
            qd = v[iv]
            s0, s1, s2, s3, s4, s5 = s0 * qd, s1 * qd, s2 * qd, s3 * qd, s4 * qd, s5 * qd
            b3 = b4 = b5 = 0.0
        else:
            s = sc[SC_S : SC_S + 6]
            t6 = sc[SC_T : SC_T + 6]
            ax = sc[SC_AX : SC_AX + 3]
            ax[0], ax[1], ax[2] = mf[i, MF_AXIS], mf[i, MF_AXIS + 1], mf[i, MF_AXIS + 2]
            joint_velocity(jt, ax, mf[i, MF_PITCH], q, mi[i, MI_IQ], v, iv, mf[i, MF_SCALE], s)
            joint_velocity_bias(jt, q, mi[i, MI_IQ], v, iv, t6)  # Ṡ q̇ (linear part only)
            s0, s1, s2, s3, s4, s5 = s[0], s[1], s[2], s[3], s[4], s[5]
            b3, b4, b5 = t6[3], t6[4], t6[5]
        w0 += s0
        w1 += s1
        w2 += s2
        u0 += s3
        u1 += s4
        u2 += s5
        W[i, K_V], W[i, K_V + 1], W[i, K_V + 2] = w0, w1, w2
        W[i, K_V + 3], W[i, K_V + 4], W[i, K_V + 5] = u0, u1, u2
        # η_i = V_i × S q̇ + Ṡ q̇
        W[i, K_C] = w1 * s2 - w2 * s1
        W[i, K_C + 1] = w2 * s0 - w0 * s2
        W[i, K_C + 2] = w0 * s1 - w1 * s0
        W[i, K_C + 3] = (w1 * s5 - w2 * s4) + (u1 * s2 - u2 * s1) + b3
        W[i, K_C + 4] = (w2 * s3 - w0 * s5) + (u2 * s0 - u0 * s2) + b4
        W[i, K_C + 5] = (w0 * s4 - w1 * s3) + (u0 * s1 - u1 * s0) + b5
        # rigid inertia, and bias wrench B_i = V × (I V) − F^ext  (momentum: f = m (v + ω × c),
        # τ = Ī_c ω + c × f)
        _rigid_inertia(mf, i, W)
        m = mf[i, MF_MASS]
        cx, cy, cz = mf[i, MF_COM], mf[i, MF_COM + 1], mf[i, MF_COM + 2]
        f0 = m * (u0 + (w1 * cz - w2 * cy))
        f1 = m * (u1 + (w2 * cx - w0 * cz))
        f2 = m * (u2 + (w0 * cy - w1 * cx))
        o = MF_INERTIA
        n0 = mf[i, o] * w0 + mf[i, o + 1] * w1 + mf[i, o + 2] * w2 + (cy * f2 - cz * f1)
        n1 = mf[i, o + 3] * w0 + mf[i, o + 4] * w1 + mf[i, o + 5] * w2 + (cz * f0 - cx * f2)
        n2 = mf[i, o + 6] * w0 + mf[i, o + 7] * w1 + mf[i, o + 8] * w2 + (cx * f1 - cy * f0)
        # V ×* [n; f] = [ω × n + v × f; ω × f]
        B0 = (w1 * n2 - w2 * n1) + (u1 * f2 - u2 * f1)
        B1 = (w2 * n0 - w0 * n2) + (u2 * f0 - u0 * f2)
        B2 = (w0 * n1 - w1 * n0) + (u0 * f1 - u1 * f0)
        B3 = w1 * f2 - w2 * f1
        B4 = w2 * f0 - w0 * f2
        B5 = w0 * f1 - w1 * f0
        if use_fext:
            B0 -= fext[i, 3]
            B1 -= fext[i, 4]
            B2 -= fext[i, 5]
            B3 -= fext[i, 0]
            B4 -= fext[i, 1]
            B5 -= fext[i, 2]
        W[i, K_PA], W[i, K_PA + 1], W[i, K_PA + 2] = B0, B1, B2
        W[i, K_PA + 3], W[i, K_PA + 4], W[i, K_PA + 5] = B3, B4, B5

    # ---------------------------------------------------------------- backward: Î, B̂, Π, β
    for i in range(nb1 - 1, 0, -1):
        jt = mi[i, MI_JTYPE]
        iv = mi[i, MI_IV]
        lam = mi[i, MI_PARENT]
        c0, c1, c2 = W[i, K_C], W[i, K_C + 1], W[i, K_C + 2]
        c3, c4, c5 = W[i, K_C + 3], W[i, K_C + 4], W[i, K_C + 5]
        if _one_dof(jt) and not (has_presc and presc[iv] != 0.0):
            # U = Î S,  D = Sᵀ U,  u = τ − Sᵀ B̂
            s0, s1, s2, s3, s4, s5 = _axis6(mf, i, jt)
            U0, U1, U2, U3, U4, U5 = _ia_apply(W, i, K_I, s0, s1, s2, s3, s4, s5)
            D = s0 * U0 + s1 * U1 + s2 * U2 + s3 * U3 + s4 * U4 + s5 * U5
            if not D > TINY_PIVOT:
                return SINGULAR + i
            dinv = 1.0 / D
            u = tau[iv] - (s0 * W[i, K_PA] + s1 * W[i, K_PA + 1] + s2 * W[i, K_PA + 2]
                           + s3 * W[i, K_PA + 3] + s4 * W[i, K_PA + 4] + s5 * W[i, K_PA + 5])
            W[i, K_U], W[i, K_U + 1], W[i, K_U + 2] = U0, U1, U2
            W[i, K_U + 3], W[i, K_U + 4], W[i, K_U + 5] = U3, U4, U5
            W[i, K_L] = dinv
            W[i, K_UU] = u
            if lam == 0:
                continue
            V0, V1, V2, V3, V4, V5 = _pi_1dof(W, i, nb1, SC_IA, False, U0, U1, U2, U3, U4, U5,
                                              dinv)
            # β = B̂ + Π η + U D⁻¹ u
            P0, P1, P2, P3, P4, P5 = _ia_apply(W, nb1, SC_IA, c0, c1, c2, c3, c4, c5)
            b0 = W[i, K_PA] + P0 + V0 * u
            b1 = W[i, K_PA + 1] + P1 + V1 * u
            b2 = W[i, K_PA + 2] + P2 + V2 * u
            b3 = W[i, K_PA + 3] + P3 + V3 * u
            b4 = W[i, K_PA + 4] + P4 + V4 * u
            b5 = W[i, K_PA + 5] + P5 + V5 * u
        else:
            st, nf = _generic_factor(mi, mf, i, q, W, sc, has_presc, presc, qdd_in, tau, iv, jt,
                                     False)
            if st != OK:
                return st
            if lam == 0:
                continue
            c0, c1, c2 = W[i, K_C], W[i, K_C + 1], W[i, K_C + 2]  # (prescribed S q̈ added)
            c3, c4, c5 = W[i, K_C + 3], W[i, K_C + 4], W[i, K_C + 5]
            Lc = W[i, K_L : K_L + 36].reshape((6, 6))
            uu = sc[SC_UU : SC_UU + 6]
            sol = sc[SC_SOL : SC_SOL + 6]
            _pi_generic(W, i, sc, nf)
            # β = B̂ + Π η' + U D⁻¹ u
            for a in range(nf):
                uu[a] = W[i, K_UU + a]
            if nf > 0:
                chol_solve(Lc, nf, uu, sol)
            P0, P1, P2, P3, P4, P5 = _ia_apply(W, nb1, SC_IA, c0, c1, c2, c3, c4, c5)
            b0 = W[i, K_PA] + P0
            b1 = W[i, K_PA + 1] + P1
            b2 = W[i, K_PA + 2] + P2
            b3 = W[i, K_PA + 3] + P3
            b4 = W[i, K_PA + 4] + P4
            b5 = W[i, K_PA + 5] + P5
            for a in range(nf):
                x = sol[a]
                b0 += W[i, K_U + 6 * a] * x
                b1 += W[i, K_U + 6 * a + 1] * x
                b2 += W[i, K_U + 6 * a + 2] * x
                b3 += W[i, K_U + 6 * a + 3] * x
                b4 += W[i, K_U + 6 * a + 4] * x
                b5 += W[i, K_U + 6 * a + 5] * x
        # Î_λ += Ad(x) Π Ad(x*),  B̂_λ += Ad(x) β
        _inertia_to_parent(W, i, lam, W, nb1)
        _wrench_to_parent(W, i, lam, K_PA, b0, b1, b2, b3, b4, b5)

    # ---------------------------------------------------------------- forward: q̈, V̇
    for i in range(1, nb1):
        jt = mi[i, MI_JTYPE]
        iv = mi[i, MI_IV]
        lam = mi[i, MI_PARENT]
        # a' = Ad(x_i^λ*) V̇_λ + η'
        a0, a1, a2, a3, a4, a5 = _twist_from_parent(W, i, lam, K_A)
        a0 += W[i, K_C]
        a1 += W[i, K_C + 1]
        a2 += W[i, K_C + 2]
        a3 += W[i, K_C + 3]
        a4 += W[i, K_C + 4]
        a5 += W[i, K_C + 5]
        if _one_dof(jt) and not (has_presc and presc[iv] != 0.0):
            # q̈ = D⁻¹ (u − Uᵀ a'),  V̇ = a' + S q̈
            x = W[i, K_L] * (W[i, K_UU] - (W[i, K_U] * a0 + W[i, K_U + 1] * a1
                                           + W[i, K_U + 2] * a2 + W[i, K_U + 3] * a3
                                           + W[i, K_U + 4] * a4 + W[i, K_U + 5] * a5))
            qdd[iv] = x
            tau_out[iv] = tau[iv]
            s0, s1, s2, s3, s4, s5 = _axis6(mf, i, jt)
            a0 += s0 * x
            a1 += s1 * x
            a2 += s2 * x
            a3 += s3 * x
            a4 += s4 * x
            a5 += s5 * x
        else:
            nvj = joint_nv(jt)
            nf = 0
            for k in range(nvj):
                if not (has_presc and presc[iv + k] != 0.0):
                    sc[SC_FREE + nf] = k
                    nf += 1
            uu = sc[SC_UU : SC_UU + 6]
            sol = sc[SC_SOL : SC_SOL + 6]
            for a in range(nf):
                uu[a] = W[i, K_UU + a] - (W[i, K_U + 6 * a] * a0 + W[i, K_U + 6 * a + 1] * a1
                                          + W[i, K_U + 6 * a + 2] * a2 + W[i, K_U + 6 * a + 3] * a3
                                          + W[i, K_U + 6 * a + 4] * a4 + W[i, K_U + 6 * a + 5] * a5)
            if nf > 0:
                chol_solve(W[i, K_L : K_L + 36].reshape((6, 6)), nf, uu, sol)
            for a in range(nf):
                k = int(sc[SC_FREE + a])
                x = sol[a]
                qdd[iv + k] = x
                tau_out[iv + k] = tau[iv + k]
                so = K_S + 6 * k
                a0 += W[i, so] * x
                a1 += W[i, so + 1] * x
                a2 += W[i, so + 2] * x
                a3 += W[i, so + 3] * x
                a4 += W[i, so + 4] * x
                a5 += W[i, so + 5] * x
            if nf < nvj:
                # prescribed DoFs: τ = Sᵀ F_i with F_i = Î V̇_i + B̂_i
                F0, F1, F2, F3, F4, F5 = _ia_apply(W, i, K_I, a0, a1, a2, a3, a4, a5)
                F0 += W[i, K_PA]
                F1 += W[i, K_PA + 1]
                F2 += W[i, K_PA + 2]
                F3 += W[i, K_PA + 3]
                F4 += W[i, K_PA + 4]
                F5 += W[i, K_PA + 5]
                for k in range(nvj):
                    if has_presc and presc[iv + k] != 0.0:
                        so = K_S + 6 * k
                        tau_out[iv + k] = (W[i, so] * F0 + W[i, so + 1] * F1 + W[i, so + 2] * F2
                                           + W[i, so + 3] * F3 + W[i, so + 4] * F4
                                           + W[i, so + 5] * F5)
                        qdd[iv + k] = qdd_in[iv + k]
        W[i, K_A], W[i, K_A + 1], W[i, K_A + 2] = a0, a1, a2
        W[i, K_A + 3], W[i, K_A + 4], W[i, K_A + 5] = a3, a4, a5
    return OK


# hybrid_kernel compiled to inline into aba_kernel, where the compiler drops its prescribed-DoF
# and external-force branches (7% per state); the same function, not a copy
_hybrid_inline = ijit(hybrid_kernel.py_func)


@njit
def aba_kernel(mi, mf, q, v, tau, qdd, ws):
    """The articulated-body algorithm (seed 002 Table 3): :func:`hybrid_kernel` with no
    prescribed DoF and no external force.  ``ws`` as for :func:`hybrid_kernel`."""
    nb1 = mi.shape[0]
    nv = v.shape[0]
    o = (nb1 + 1) * K_COLS
    tau_out = ws[o : o + nv]
    empty = ws[o:o]
    return _hybrid_inline(mi, mf, q, v, tau, ws[o:o].reshape((0, 6)), False, empty, empty, qdd,
                          tau_out, ws)


@njit
def _has_mimic(mi):
    for i in range(1, mi.shape[0]):
        if mi[i, MI_NV] == 0 and mi[i, MI_JTYPE] != 0:
            return True
    return False


@njit
def aba_entry(mi, mf, q, v, tau, qdd):
    """Single-state fast path of :func:`aba` (:func:`aba_checked` with its own scratch)."""
    return aba_checked(mi, mf, q, v, tau, qdd, np.empty(workspace_size_nb(mi.shape[0], mi[0, MI_IV])))


@ijit
def aba_checked(mi, mf, q, v, tau, qdd, ws):
    """Single-state :func:`aba` on the flat scratch ``ws``: lengths and mimic joints checked."""
    nv = mi[0, MI_IV]
    if (q.shape[0] != mi[0, MI_IQ] or v.shape[0] != nv or tau.shape[0] != nv or qdd.shape[0] != nv
            or ws.shape[0] < workspace_size_nb(mi.shape[0], nv)):
        return BAD_SHAPE
    if _has_mimic(mi):
        return MIMIC
    return aba_kernel(mi, mf, q, v, tau, qdd, ws)


@njit
def hybrid_entry(mi, mf, q, v, a, tau, presc, qdd, tau_out):
    """Single-state fast path of :func:`hybrid_dynamics` (no fext)."""
    nv = mi[0, MI_IV]
    if (q.shape[0] != mi[0, MI_IQ] or v.shape[0] != nv or a.shape[0] != nv or tau.shape[0] != nv
            or presc.shape[0] != nv):
        return BAD_SHAPE
    ws = np.empty(workspace_size_nb(mi.shape[0], nv))
    return hybrid_kernel(mi, mf, q, v, tau, ws[0:0].reshape((0, 6)), False, presc, a, qdd,
                         tau_out, ws)


@njit
def minv_entry(mi, mf, q, Minv):
    nv = mi[0, MI_IV]
    if q.shape[0] != mi[0, MI_IQ] or Minv.shape[0] != nv or Minv.shape[1] != nv:
        return BAD_SHAPE
    if _has_mimic(mi):
        return MIMIC
    return minv_kernel(mi, mf, q, Minv)


MIMIC = 4000  # the model has mimic joints (entry kernels only)
_ABA = _HYBRID = _MINV = None  # entry kernels, armed on first use (_common.armed_call)
ABA_SIG = (T_MI, T_MF, T_V, T_V, T_V, T_V)
HYBRID_SIG = (T_MI, T_MF, T_V, T_V, T_V, T_V, T_V, T_V, T_V)
MINV_SIG = (T_MI, T_MF, T_V, T_M)


# gate kernels (see _common.gate_address): raw buffers → the entries above
def _c_aba(mip, mfp, nb1, bufs, lens):
    mi, mf = gate_tables(mip, mfp, nb1)
    return aba_checked(mi, mf, gate_vector(bufs, lens, 0), gate_vector(bufs, lens, 1),
                       gate_vector(bufs, lens, 2), gate_vector(bufs, lens, 4),
                       gate_vector(bufs, lens, 3))


def _c_minv(mip, mfp, nb1, bufs, lens):
    mi, mf = gate_tables(mip, mfp, nb1)
    return minv_entry(mi, mf, gate_vector(bufs, lens, 0), gate_matrix(bufs, lens, 1, mi[0, MI_IV]))


_ABA_C = _MINV_C = 0  # their addresses, set on first use


@pjit
def hybrid_batch(mi, mf, Q, V, TAU, FEXT, use_fext, presc, QDD_IN, QDD, TAU_OUT, status):
    nb1 = mi.shape[0]
    nv = V.shape[1]
    for n in nb.prange(Q.shape[0]):
        ws = np.empty(workspace_size_nb(nb1, nv))
        fe = FEXT[n] if use_fext else FEXT[0]
        status[n] = hybrid_kernel(mi, mf, Q[n], V[n], TAU[n], fe, use_fext, presc, QDD_IN[n],
                                  QDD[n], TAU_OUT[n], ws)


@pjit
def aba_batch(mi, mf, Q, V, TAU, QDD, status):
    nb1 = mi.shape[0]
    nv = V.shape[1]
    N = Q.shape[0]
    nblk = min(N, BLOCKS)
    for b in nb.prange(nblk):  # blocks of states sharing one workspace (15 kB for a 7-DoF arm)
        ws = np.empty(workspace_size_nb(nb1, nv))
        for n in range(b * N // nblk, (b + 1) * N // nblk):
            status[n] = aba_kernel(mi, mf, Q[n], V[n], TAU[n], QDD[n], ws)


# =============================================================================== public API
_NO_FEXT = np.zeros((1, 6))


def _reject_mimic(model: Model, what: str):
    if model.mimic_joints:
        raise ModelError(
            f"{what}: model {model.name!r} has mimic joints {list(model.mimic_joints)}, which couple "
            "DoFs across bodies; the recursive algorithm does not apply — use "
            "dqdyn.forward_dynamics(model, q, v, tau, method='dense')"
        )


def _fext_in(model: Model, fext, batch_n: int | None):
    if fext is None:
        return _NO_FEXT.reshape(1, 1, 6), False, ()
    F = np.asarray(fext, dtype=np.float64)
    nb1 = model.nbodies + 1
    if F.shape[-2:] != (nb1, 6):
        raise ShapeError(
            f"fext must have shape (..., {nb1}, 6): one wrench [f, τ] per body (index 0, the world, "
            f"ignored), in the body frame at the body origin; got {F.shape}"
        )
    batch = F.shape[:-2]
    return np.ascontiguousarray(F.reshape(-1, nb1, 6)), True, batch


def _run_hybrid(model, q, v, tau, presc, qdd_in, fext):
    Q, bq = as_vector_batch(q, model.nq, "q", "the configuration, model.nq entries")
    Vv, bv = as_vector_batch(v, model.nv, "v", "the velocity, model.nv entries")
    T, bt = as_vector_batch(tau, model.nv, "tau", "generalized forces, model.nv entries")
    A, ba = as_vector_batch(qdd_in, model.nv, "a", "prescribed accelerations, model.nv entries")
    F, use_fext, bf = _fext_in(model, fext, None)
    if use_fext:
        nb1 = model.nbodies + 1
        (Q, Vv, T, A, F2), batch = broadcast_batch(
            [Q, Vv, T, A, F.reshape(F.shape[0], nb1 * 6)], [bq, bv, bt, ba, bf])
        F = np.ascontiguousarray(F2.reshape(-1, nb1, 6))
    else:
        (Q, Vv, T, A), batch = broadcast_batch([Q, Vv, T, A], [bq, bv, bt, ba])
    N = Q.shape[0]
    QDD = np.empty((N, model.nv))
    TAU = np.empty((N, model.nv))
    status = np.zeros(N, dtype=np.int64)
    presc = np.ascontiguousarray(presc, dtype=np.float64)
    if N == 1:  # (a prange loop would start the thread pool for one state)
        status[0] = hybrid_kernel(model.mi, model.mf, Q[0], Vv[0], T[0], F[0], use_fext, presc, A[0],
                                  QDD[0], TAU[0], np.empty(workspace_size(model.nbodies + 1, model.nv)))
    else:
        hybrid_batch(model.mi, model.mf, Q, Vv, T, F, use_fext, presc, A, QDD, TAU, status)
    st, row = first_bad(status)
    if st:
        _raise(model, st, row if N > 1 else None)
    return QDD.reshape(batch + (model.nv,)), TAU.reshape(batch + (model.nv,))


def aba(model: Model, q, v, tau, fext=None, *, out=None) -> np.ndarray:
    """Forward dynamics by the articulated-body algorithm (seed 002 Table 3): ``q̈`` (..., nv).

    Solves ``M(q) q̈ + C(q, v) v + g(q) = τ + Σ J_iᵀ F_i^ext`` in O(n).  ``fext`` (..., nbodies+1,
    6): one wrench ``[f, τ]`` per body, in the body frame at the body origin (row 0 ignored).
    ``out``: an array of the result's shape to write into (e.g. an ``np.memmap`` for a batch
    larger than memory; batches run in chunks of :func:`dqdyn.config.set_batch_chunk` states).
    """
    if fext is None and out is None and GATE is not None:
        r = GATE(_ABA_C or gate_address(globals(), "_ABA_C", _c_aba, {"contract"}), model.mi,
                 model.mf, model.nv, -1, q, v, tau, model._scratch)
        if type(r) is ND:
            return r
        _gate_status(model, r, "aba")
    if fext is None and type(q) is ND and q.ndim == 1:
        qdd = np.empty(model.nv) if out is None else out
        try:
            st = _ABA(model.mi, model.mf, q, v, tau, qdd)
        except TypeError:
            st = armed_call(globals(), "_ABA", aba_entry, ABA_SIG, (model.mi, model.mf, q, v, tau, qdd))
        if st == OK:
            return qdd
        if st is not None and st != BAD_SHAPE:
            if st == MIMIC:
                _reject_mimic(model, "aba")
            _raise(model, st)
    if model._index["mimic"]:
        _reject_mimic(model, "aba")
    if fext is None:
        Q, bq = as_vector_batch(q, model.nq, "q", "the configuration, model.nq entries")
        V, bv = as_vector_batch(v, model.nv, "v", "the velocity, model.nv entries")
        T, bt = as_vector_batch(tau, model.nv, "tau", "generalized forces, model.nv entries")
        (Q, V, T), batch, N = lazy_batch([Q, V, T], [bq, bv, bt])
        QDD = out_batch(out, batch + (model.nv,))
        QDD = np.empty((N, model.nv)) if QDD is None else QDD.reshape(N, model.nv)
        run_chunked(aba_batch, (model.mi, model.mf), [Q, V, T], [QDD], N, (),
                    lambda st, row: _raise(model, st, row if batch else None))
        return QDD.reshape(batch + (model.nv,))
    qdd = _run_hybrid(model, q, v, tau, np.zeros(model.nv), np.zeros(model.nv), fext)[0]
    if out is None:
        return qdd
    o = out_batch(out, qdd.shape)
    o[...] = qdd
    return out


def _gate_status(model, r, what: str) -> None:
    """Raise for a gate call's status ``r`` unless it sends the call down the general path
    (``None``: inputs not plain vectors; ``BAD_SHAPE``: the general path names the argument)."""
    if r is not None and r != BAD_SHAPE:
        if r == MIMIC:
            _reject_mimic(model, what)
        _raise(model, r)


def _raise(model, st, row=None):
    if st >= SINGULAR:
        b = st - SINGULAR
        raise SingularError(
            f"the articulated inertia seen by joint {model.joint_names_all[b]!r} is singular "
            f"(body {model.body_names[b]!r} and its subtree carry no inertia along the joint's "
            "motion axes); forward dynamics is undefined for this model"
            + ("" if row is None else f" (batch element {row})")
        )
    raise_status(model, st, row)


def hybrid_dynamics(model: Model, q, v, a, tau, prescribed, fext=None):
    """Hybrid dynamics (seed 002 Table 4): returns ``(q̈, τ)``, each (..., nv).

    ``prescribed`` (nv booleans) marks the DoFs whose acceleration is given (taken from ``a``;
    their τ is computed); the other DoFs take their force from ``tau`` and get their acceleration.
    All prescribed gives ``rnea``; none gives ``aba``.  The split may be per DoF (a multi-DoF joint
    may mix prescribed and free coordinates).
    """
    _reject_mimic(model, "hybrid_dynamics")
    presc = np.asarray(prescribed, dtype=bool)
    if presc.shape != (model.nv,):
        raise ShapeError(f"prescribed must be {model.nv} booleans (one per DoF), got shape {presc.shape}")
    pf = presc.astype(np.float64)
    if fext is None and type(q) is ND and q.ndim == 1:
        qdd = np.empty(model.nv)
        tau_out = np.empty(model.nv)
        st = armed_call(globals(), "_HYBRID", hybrid_entry, HYBRID_SIG,
                        (model.mi, model.mf, q, v, a, tau, pf, qdd, tau_out))
        if st == OK:
            return qdd, tau_out
        if st is not None and st != BAD_SHAPE:
            _raise(model, st)
    return _run_hybrid(model, q, v, tau, pf, a, fext)


def _minv_times(model: Model, q1: np.ndarray, X: np.ndarray) -> np.ndarray:
    """``M(q)⁻¹ X`` for one configuration and X (nv, m): m simplified ABA passes (no gravity,
    no velocity; seed 002 §3.2)."""
    nv, mcols = model.nv, X.shape[1]
    if mcols == 0:
        return np.zeros((nv, 0))
    mf0 = model.mf.copy()
    mf0[0, MF_GRAVITY : MF_GRAVITY + 3] = 0.0
    Q = np.ascontiguousarray(np.broadcast_to(q1, (mcols, model.nq)))
    V0 = np.zeros((mcols, nv))
    T = np.ascontiguousarray(X.T)
    out = np.empty((mcols, nv))
    status = np.zeros(mcols, dtype=np.int64)
    aba_batch(model.mi, mf0, Q, V0, T, out, status)
    st, _ = first_bad(status)
    if st:
        _raise(model, st)
    return out.T


# rows of the integer table of minv_kernel
T_NSUB, T_DV, T_NEXT, T_SLOT, T_LAST, T_CEND, T_ORDER, T_BSUB, T_NEXTB = 0, 1, 2, 3, 4, 5, 6, 7, 8


@ijit
def _minv_topology(mi, T):
    """Depth-first numbering of the tree (O(n), per call); returns the number of acceleration
    slots.  ``T[T_DV, i]``: first DoF of body i in depth-first order, so that a subtree's DoFs
    are the contiguous range ``[dv, dv + nsub)``; ``T[T_CEND, i]``: end of the range of the world
    child that carries i (M⁻¹ is zero beyond it); ``T[T_ORDER]``: the bodies in preorder;
    ``T[T_LAST, i]``: the last child of i (0 for a leaf); ``T[T_SLOT, i]``: where pass 3 keeps
    the column accelerations of i — a last child overwrites its parent's slot (which no one
    reads afterwards), the other children take the next one (a chain needs a single slot)."""
    nb1 = mi.shape[0]
    for i in range(nb1):
        T[T_NSUB, i] = mi[i, MI_NV] if i > 0 else 0
        T[T_BSUB, i] = 1
        T[T_LAST, i] = 0
    for i in range(nb1 - 1, 0, -1):
        lam = mi[i, MI_PARENT]
        T[T_NSUB, lam] += T[T_NSUB, i]
        T[T_BSUB, lam] += T[T_BSUB, i]
        if T[T_LAST, lam] == 0:
            T[T_LAST, lam] = i
    T[T_NEXT, 0] = 0
    T[T_NEXTB, 0] = 0
    T[T_SLOT, 0] = 0
    nslots = 1
    for i in range(1, nb1):
        lam = mi[i, MI_PARENT]
        d = T[T_NEXT, lam]
        T[T_DV, i] = d
        T[T_NEXT, lam] = d + T[T_NSUB, i]
        T[T_NEXT, i] = d + mi[i, MI_NV]
        pb = T[T_NEXTB, lam]
        T[T_ORDER, pb] = i
        T[T_NEXTB, lam] = pb + T[T_BSUB, i]
        T[T_NEXTB, i] = pb + 1
        T[T_CEND, i] = T[T_CEND, lam] if lam > 0 else d + T[T_NSUB, i]
        s = T[T_SLOT, lam] + (0 if T[T_LAST, lam] == i else 1)
        T[T_SLOT, i] = s
        if s + 1 > nslots:
            nslots = s + 1
    return nslots


# The column loops of the M⁻¹ kernel index 2-D arrays directly (no views: numba reference-counts
# every view, which costs more than the arithmetic on small robots) with unsigned column indices
# (no negative-index wrap-around test in the loop, so LLVM can vectorize it).
U64 = np.uint64


@njit
def minv_kernel(mi, mf, q, Minv):
    """``M(q)⁻¹`` without forming ``M``: Carpentier's recursive inverse (the structure of
    Pinocchio's ``computeMinverse``), i.e. the articulated-body algorithm of seed 002 Table 3
    (digest §1B.7, eqs. 41, 45, 49, 50) run for the unit forces ``τ = e_c`` of all columns at
    once, with ``q̇ = 0`` and no gravity (so ``η = 0`` and ``B̂`` is the sum of the children's
    ``β``).  Inertias, motion axes, wrenches and accelerations are expressed in the world frame,
    where every ``Ad(x_k^i)`` of eqs. 49–50 is the identity:

    * pass 1 (root → leaves): ``x_i^λ`` (R, p) from the joint pose, ``x_i^0 = x_λ^0 x_i^λ``,
      the rigid inertia of body i in the world frame;
    * pass 2 (leaves → root), per joint i: ``S_i``, ``U_i = Î_i S_i``, ``D_i = ⟨S_i, U_i⟩``
      (scalar for 1-DoF joints, Cholesky otherwise) and ``Î_λ += Î_i − U_i D_i⁻¹ U_iᵀ``
      (eq. 49).  ``F`` (6 × nv) holds per column c the ``β`` (eq. 50) of the topmost body
      processed so far above DoF c; then for the columns of i's subtree:
      ``M⁻¹_ii = D_i⁻¹``, ``M⁻¹_ic = −D_i⁻¹ ⟨S_i, F_c⟩`` for c below i (eq. 45's ``D⁻¹ u_i``
      with ``u_i = e_c,i − Sᵀ B̂_i``), and ``F_c += U_i M⁻¹_ic`` (``β_i = B̂_i + U_i D⁻¹ u_i``);
    * pass 3 (root → leaves, depth-first): ``A_i`` (6 × nv, the accelerations of body i for
      every column), ``M⁻¹_ic −= D_i⁻¹ ⟨U_i, A_λ,c⟩`` (eq. 45's ``−D⁻¹ Uᵀ a'``; ``u_i = 0`` for c
      outside the subtree) and ``A_i,c = A_λ,c + S_i M⁻¹_ic`` (eq. 41).

    Only the upper triangle (in depth-first DoF order, where every subtree is a contiguous range)
    is computed, over the columns of the world child that carries the body (beyond it M⁻¹ is
    zero); it is then mirrored (and permuted back when the model's DoF order is not depth-first).
    Cost O(n · depth) plus the O(nv²) output."""
    st = check_q(mi, q)
    if st != OK:
        return st
    nb1 = mi.shape[0]
    nv = Minv.shape[0]
    W = np.empty((nb1 + 1, K_COLS))
    sc = W[nb1]
    T = np.empty((9, nb1), dtype=np.int64)
    nslots = _minv_topology(mi, T)
    ident = True
    for i in range(1, nb1):
        if T[T_DV, i] != mi[i, MI_IV]:
            ident = False
    Mi = Minv if ident else np.empty((nv, nv))
    buf = np.empty((6 * (nslots + 1) + 1, nv))
    F = buf[0:6]
    zeros = buf[6 * (nslots + 1)]  # τ for _generic_factor (the u it derives is not used here)
    zeros[:] = 0.0
    empty = zeros[0:0]
    # ---------------------------------------------------------------- pass 1: poses, inertias
    ax3, xj8, xl8 = sc[SC_AX : SC_AX + 3], sc[SC_XJ : SC_XJ + 8], sc[SC_XL : SC_XL + 8]
    for i in range(1, nb1):
        _body_pose(mi, mf, i, q, W, ax3, xj8, xl8)
        _world_pose(W, i, mi[i, MI_PARENT])
        _rigid_inertia_world(mf, i, W)
    # ---------------------------------------------------------------- pass 2: leaves → root
    for i in range(nb1 - 1, 0, -1):
        jt = mi[i, MI_JTYPE]
        lam = mi[i, MI_PARENT]
        r = T[T_DV, i]
        c1 = r + T[T_NSUB, i]
        if _one_dof(jt):
            s0, s1, s2, s3, s4, s5 = _axis6(mf, i, jt)
            s0, s1, s2, s3, s4, s5 = _twist_to_world(W, i, s0, s1, s2, s3, s4, s5)
            U0, U1, U2, U3, U4, U5 = _ia_apply(W, i, K_I, s0, s1, s2, s3, s4, s5)
            D = s0 * U0 + s1 * U1 + s2 * U2 + s3 * U3 + s4 * U4 + s5 * U5
            if not D > TINY_PIVOT:
                return SINGULAR + i
            dinv = 1.0 / D
            if lam > 0:
                _pi_1dof(W, i, lam, K_I, True, U0, U1, U2, U3, U4, U5, dinv)
            W[i, K_SW], W[i, K_SW + 1], W[i, K_SW + 2] = s0, s1, s2
            W[i, K_SW + 3], W[i, K_SW + 4], W[i, K_SW + 5] = s3, s4, s5
            W[i, K_UD], W[i, K_UD + 1], W[i, K_UD + 2] = U0 * dinv, U1 * dinv, U2 * dinv
            W[i, K_UD + 3], W[i, K_UD + 4], W[i, K_UD + 5] = U3 * dinv, U4 * dinv, U5 * dinv
            Mi[r, r] = dinv
            d0, d1, d2 = s0 * dinv, s1 * dinv, s2 * dinv
            d3, d4, d5 = s3 * dinv, s4 * dinv, s5 * dinv
            if lam > 0:
                F[0, r], F[1, r], F[2, r] = U0 * dinv, U1 * dinv, U2 * dinv
                F[3, r], F[4, r], F[5, r] = U3 * dinv, U4 * dinv, U5 * dinv
                for c in range(U64(r + 1), U64(c1)):
                    x = -(d0 * F[0, c] + d1 * F[1, c] + d2 * F[2, c] + d3 * F[3, c]
                          + d4 * F[4, c] + d5 * F[5, c])
                    Mi[r, c] = x
                    F[0, c] += U0 * x
                    F[1, c] += U1 * x
                    F[2, c] += U2 * x
                    F[3, c] += U3 * x
                    F[4, c] += U4 * x
                    F[5, c] += U5 * x
            else:
                for c in range(U64(r + 1), U64(c1)):
                    Mi[r, c] = -(d0 * F[0, c] + d1 * F[1, c] + d2 * F[2, c] + d3 * F[3, c]
                                 + d4 * F[4, c] + d5 * F[5, c])
        else:
            st, nf = _generic_factor(mi, mf, i, q, W, sc, False, empty, empty, zeros,
                                     mi[i, MI_IV], jt, True)
            if st != OK:
                return st
            if lam > 0:
                _pi_generic(W, i, sc, nf)
                _add_inertia(W, lam, sc)
            if nf == 0:
                continue
            # D⁻¹ (from its Cholesky factor), S D⁻¹, U D⁻¹ (S and U are in the world frame)
            Lc = W[i, K_L : K_L + 36].reshape((6, 6))
            Dinv = sc[SC_DM : SC_DM + 36].reshape((6, 6))
            uu = sc[SC_UU : SC_UU + 6]
            sol = sc[SC_SOL : SC_SOL + 6]
            for b in range(nf):
                for a in range(nf):
                    uu[a] = 1.0 if a == b else 0.0
                chol_solve(Lc, nf, uu, sol)
                for a in range(nf):
                    Dinv[a, b] = sol[a]
            SD = sc[SC_P : SC_P + 36].reshape((6, 6))  # column a: S D⁻¹ e_a
            for a in range(nf):
                for k in range(6):
                    acc = 0.0
                    acc2 = 0.0
                    for b in range(nf):
                        acc += W[i, K_SW + 6 * b + k] * Dinv[b, a]
                        acc2 += W[i, K_U + 6 * b + k] * Dinv[b, a]
                    SD[a, k] = acc
                    W[i, K_UD + 6 * a + k] = acc2
            for a in range(nf):
                ra = r + a
                for b in range(nf):
                    Mi[ra, r + b] = Dinv[a, b]
                e0, e1, e2 = SD[a, 0], SD[a, 1], SD[a, 2]
                e3, e4, e5 = SD[a, 3], SD[a, 4], SD[a, 5]
                for c in range(U64(r + nf), U64(c1)):
                    Mi[ra, c] = -(e0 * F[0, c] + e1 * F[1, c] + e2 * F[2, c] + e3 * F[3, c]
                                  + e4 * F[4, c] + e5 * F[5, c])
            if lam > 0:
                for c in range(r, r + nf):
                    F[0, c] = F[1, c] = F[2, c] = F[3, c] = F[4, c] = F[5, c] = 0.0
                for a in range(nf):
                    ra = r + a
                    uo = K_U + 6 * a
                    U0, U1, U2 = W[i, uo], W[i, uo + 1], W[i, uo + 2]
                    U3, U4, U5 = W[i, uo + 3], W[i, uo + 4], W[i, uo + 5]
                    for c in range(U64(r), U64(c1)):
                        x = Mi[ra, c]
                        F[0, c] += U0 * x
                        F[1, c] += U1 * x
                        F[2, c] += U2 * x
                        F[3, c] += U3 * x
                        F[4, c] += U4 * x
                        F[5, c] += U5 * x
    # ---------------------------------------------------------------- pass 3: root → leaves
    for p in range(nb1 - 1):
        i = T[T_ORDER, p]
        lam = mi[i, MI_PARENT]
        nvi = mi[i, MI_NV]
        r = T[T_DV, i]
        cr, ce = U64(r), U64(T[T_CEND, i])
        pa = 6 * (T[T_SLOT, lam] + 1)  # rows of A_λ in buf
        ai = 6 * (T[T_SLOT, i] + 1)  # rows of A_i
        kids = T[T_LAST, i] != 0
        # columns beyond the subtree (u_i = 0 there) start from 0; those past ce stay 0
        for a in range(nvi):
            for c in range(U64(r + T[T_NSUB, i]), U64(nv)):
                Mi[r + a, c] = 0.0
        if nvi == 1:
            s0, s1, s2 = W[i, K_SW], W[i, K_SW + 1], W[i, K_SW + 2]
            s3, s4, s5 = W[i, K_SW + 3], W[i, K_SW + 4], W[i, K_SW + 5]
            if lam > 0:
                u0, u1, u2 = W[i, K_UD], W[i, K_UD + 1], W[i, K_UD + 2]
                u3, u4, u5 = W[i, K_UD + 3], W[i, K_UD + 4], W[i, K_UD + 5]
                if kids and ai == pa:  # a last child: A_i overwrites A_λ (a chain)
                    for c in range(cr, ce):
                        x = Mi[r, c] - (u0 * buf[pa, c] + u1 * buf[pa + 1, c] + u2 * buf[pa + 2, c]
                                        + u3 * buf[pa + 3, c] + u4 * buf[pa + 4, c]
                                        + u5 * buf[pa + 5, c])
                        Mi[r, c] = x
                        buf[pa, c] += s0 * x
                        buf[pa + 1, c] += s1 * x
                        buf[pa + 2, c] += s2 * x
                        buf[pa + 3, c] += s3 * x
                        buf[pa + 4, c] += s4 * x
                        buf[pa + 5, c] += s5 * x
                elif kids:
                    for c in range(cr, ce):
                        b0, b1, b2 = buf[pa, c], buf[pa + 1, c], buf[pa + 2, c]
                        b3, b4, b5 = buf[pa + 3, c], buf[pa + 4, c], buf[pa + 5, c]
                        x = Mi[r, c] - (u0 * b0 + u1 * b1 + u2 * b2 + u3 * b3 + u4 * b4 + u5 * b5)
                        Mi[r, c] = x
                        buf[ai, c] = b0 + s0 * x
                        buf[ai + 1, c] = b1 + s1 * x
                        buf[ai + 2, c] = b2 + s2 * x
                        buf[ai + 3, c] = b3 + s3 * x
                        buf[ai + 4, c] = b4 + s4 * x
                        buf[ai + 5, c] = b5 + s5 * x
                else:
                    for c in range(cr, ce):
                        Mi[r, c] -= (u0 * buf[pa, c] + u1 * buf[pa + 1, c] + u2 * buf[pa + 2, c]
                                     + u3 * buf[pa + 3, c] + u4 * buf[pa + 4, c]
                                     + u5 * buf[pa + 5, c])
            elif kids:
                for c in range(cr, ce):
                    x = Mi[r, c]
                    buf[ai, c] = s0 * x
                    buf[ai + 1, c] = s1 * x
                    buf[ai + 2, c] = s2 * x
                    buf[ai + 3, c] = s3 * x
                    buf[ai + 4, c] = s4 * x
                    buf[ai + 5, c] = s5 * x
            continue
        if lam > 0:
            for a in range(nvi):
                uo = K_UD + 6 * a
                u0, u1, u2 = W[i, uo], W[i, uo + 1], W[i, uo + 2]
                u3, u4, u5 = W[i, uo + 3], W[i, uo + 4], W[i, uo + 5]
                for c in range(cr, ce):
                    Mi[r + a, c] -= (u0 * buf[pa, c] + u1 * buf[pa + 1, c] + u2 * buf[pa + 2, c]
                                     + u3 * buf[pa + 3, c] + u4 * buf[pa + 4, c]
                                     + u5 * buf[pa + 5, c])
        if not kids:
            continue
        if lam == 0:
            for k in range(6):
                for c in range(cr, ce):
                    buf[ai + k, c] = 0.0
        elif ai != pa:
            for k in range(6):
                for c in range(cr, ce):
                    buf[ai + k, c] = buf[pa + k, c]
        for a in range(nvi):
            so = K_SW + 6 * a
            s0, s1, s2 = W[i, so], W[i, so + 1], W[i, so + 2]
            s3, s4, s5 = W[i, so + 3], W[i, so + 4], W[i, so + 5]
            for c in range(cr, ce):
                x = Mi[r + a, c]
                buf[ai, c] += s0 * x
                buf[ai + 1, c] += s1 * x
                buf[ai + 2, c] += s2 * x
                buf[ai + 3, c] += s3 * x
                buf[ai + 4, c] += s4 * x
                buf[ai + 5, c] += s5 * x
    # ---------------------------------------------------------------- mirror (and reorder)
    if ident:
        for c in range(1, nv):  # row c of the lower triangle from column c of the upper one
            for r in range(U64(0), U64(c)):
                Minv[c, r] = Minv[r, c]
        return OK
    pv = np.empty(nv, dtype=np.int64)
    for i in range(1, nb1):
        for a in range(mi[i, MI_NV]):
            pv[T[T_DV, i] + a] = mi[i, MI_IV] + a
    for r in range(nv):
        pr = pv[r]
        for c in range(r, nv):
            x = Mi[r, c]
            Minv[pr, pv[c]] = x
            Minv[pv[c], pr] = x
    return OK


@pjit
def minv_batch(mi, mf, Q, MINV, status):
    for n in nb.prange(Q.shape[0]):
        status[n] = minv_kernel(mi, mf, Q[n], MINV[n])


def mass_matrix_inverse(model: Model, q) -> np.ndarray:
    """``M(q)⁻¹`` (..., nv, nv) by articulated-body sweeps, without forming or inverting ``M``.

    The articulated inertias are computed once; column ``c`` is then the ABA response to
    ``τ = e_c`` with gravity and velocity removed (seed 002 §3.2's simplified passes).
    """
    nv = model.nv
    if GATE is not None:
        r = GATE(_MINV_C or gate_address(globals(), "_MINV_C", _c_minv, {"contract"}), model.mi,
                 model.mf, nv, nv, q)
        if type(r) is ND:
            return r
        _gate_status(model, r, "mass_matrix_inverse")
    if type(q) is ND and q.ndim == 1:
        out = np.empty((nv, nv))
        try:
            st = _MINV(model.mi, model.mf, q, out)
        except TypeError:
            st = armed_call(globals(), "_MINV", minv_entry, MINV_SIG, (model.mi, model.mf, q, out))
        if st == OK:
            return out
        if st is not None and st != BAD_SHAPE:
            if st == MIMIC:
                _reject_mimic(model, "mass_matrix_inverse")
            _raise(model, st)
    _reject_mimic(model, "mass_matrix_inverse")
    Q, batch = as_vector_batch(q, model.nq, "q", "the configuration, model.nq entries")
    N = Q.shape[0]
    out = np.empty((N, nv, nv))
    status = np.zeros(N, dtype=np.int64)
    minv_batch(model.mi, model.mf, Q, out, status)
    st, row = first_bad(status)
    if st:
        _raise(model, st, row if N > 1 else None)
    return out.reshape(batch + (nv, nv))


def constrained_aba(model: Model, q, v, tau, A, b, fext=None, *, rcond: float = 1e-10):
    """Recursive constrained forward dynamics (seed 002 §3.2, eqs. 67–69): ``(q̈, λ)``.

    Constraints at acceleration level ``A q̈ = b`` (``A`` (m, nv), ``b`` (m,); for a loop
    closure ``f(q) = 0`` with ``A = ∂f/∂q``, ``b = −Ȧ q̇``).  One full ABA gives ``q̈_r``; m
    simplified ABA passes give ``M⁻¹ Aᵀ``; then ``λ = (A M⁻¹ Aᵀ)⁻¹ (b − A q̈_r)`` and
    ``q̈ = q̈_r + M⁻¹ Aᵀ λ`` (the generalized constraint force is ``Aᵀ λ``).  Redundant rows are
    handled by a pseudo-inverse; a system with no solution raises ``InfeasibleError``.
    """
    _reject_mimic(model, "constrained_aba")
    qq = as_vector(q, model.nq, "q", "the configuration, model.nq entries")
    A = np.atleast_2d(np.asarray(A, dtype=float))
    b = np.atleast_1d(np.asarray(b, dtype=float))
    if A.shape[1] != model.nv or b.shape != (A.shape[0],):
        raise ShapeError(f"A must be (m, {model.nv}) and b (m,), got {A.shape} and {b.shape}")
    if not (np.all(np.isfinite(A)) and np.all(np.isfinite(b))):
        raise NonFiniteError("A or b contains NaN or infinity")
    qdd_r = aba(model, qq, v, tau, fext=fext)
    MiAt = _minv_times(model, qq, A.T)
    G = A @ MiAt
    r = b - A @ qdd_r
    lam = np.linalg.lstsq(G, r, rcond=rcond)[0]
    res = G @ lam - r
    if np.linalg.norm(res) > 1e-8 * (1.0 + np.linalg.norm(r)):
        raise InfeasibleError(
            f"constraints A q̈ = b are inconsistent: no acceleration satisfies them (residual "
            f"{np.linalg.norm(res):.3g})"
        )
    return qdd_r + MiAt @ lam, lam


def constrained_hybrid_dynamics(model: Model, q, v, a, tau, prescribed, A, b, *, rcond: float = 1e-10):
    """Recursive constrained hybrid dynamics (seed 002 §3.3, eqs. 70–80): ``(q̈, τ, λ)``.

    Prescribed DoFs take their acceleration from ``a`` (their force is computed), free DoFs their
    force from ``tau``; the constraint ``A q̈ = b`` holds with multipliers ``λ`` (``m ≤ n_free``).
    Two open-chain hybrid problems: ``(q̈_u, τ_v)`` → ``(τ_ur, q̈_vr)``, and, per constraint row,
    ``(0, A_vᵀ e_i)`` without gravity and velocity → ``M_vv⁻¹ A_vᵀ`` (eq. 77).
    """
    _reject_mimic(model, "constrained_hybrid_dynamics")
    P = np.asarray(prescribed, dtype=bool)
    Fr = ~P
    A = np.atleast_2d(np.asarray(A, dtype=float))
    b = np.atleast_1d(np.asarray(b, dtype=float))
    qq = as_vector(q, model.nq, "q", "the configuration, model.nq entries")
    qdd_r, tau_r = hybrid_dynamics(model, qq, v, a, tau, P)
    m = A.shape[0]
    # columns: hybrid response to τ_v = A_vᵀ e_i, q̈_u = 0, no gravity / velocity
    mf0 = model.mf.copy()
    mf0[0, MF_GRAVITY : MF_GRAVITY + 3] = 0.0
    Q = np.ascontiguousarray(np.broadcast_to(qq, (m, model.nq)))
    Z = np.zeros((m, model.nv))
    T = np.ascontiguousarray(np.where(Fr, A, 0.0))
    QDD = np.empty((m, model.nv))
    TAU = np.empty((m, model.nv))
    status = np.zeros(m, dtype=np.int64)
    hybrid_batch(model.mi, mf0, Q, Z, T, _NO_FEXT.reshape(1, 1, 6), False,
                 np.ascontiguousarray(P, dtype=np.float64), Z, QDD, TAU, status)
    st, _ = first_bad(status)
    if st:
        _raise(model, st)
    G = A @ QDD.T  # A_v M_vv⁻¹ A_vᵀ (the prescribed entries of QDD are 0)
    r = b - A @ qdd_r
    lam = np.linalg.lstsq(G, r, rcond=rcond)[0]
    if np.linalg.norm(G @ lam - r) > 1e-8 * (1.0 + np.linalg.norm(r)):
        raise InfeasibleError(
            "constraints A q̈ = b cannot be met with the prescribed accelerations (too few free DoFs "
            "or inconsistent rows)"
        )
    qdd = qdd_r + QDD.T @ lam
    # τ_u = τ_ur + τ_uc − A_uᵀ λ  (eqs. 79–80)
    tau_out = tau_r + TAU.T @ lam - A.T @ lam
    tau_out[Fr] = np.asarray(tau, dtype=float)[Fr]
    return qdd, tau_out, lam


__all__ = ["aba", "hybrid_dynamics", "mass_matrix_inverse", "constrained_aba", "constrained_hybrid_dynamics"]
