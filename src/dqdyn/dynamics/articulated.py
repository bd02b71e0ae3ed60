"""The articulated-body machinery shared by ABA, hybrid dynamics and M⁻¹ [Kim2012, §2.2–§2.3].

What `aba`, `hybrid`, `minverse` and `constrained_aba` have in common:
the rigid inertia of a body as a 6×6 map twist → wrench (`body_inertia6`), an inertia moved
to the parent frame (``Ad(x) Î Ad(x*)``, `transform_inertia_to_parent` and the 21-number
form `_inertia_to_parent`), wrenches and twists moved between frames, the per-body
workspace layout of the kernels (``K_*`` columns), the factorisation of ``D = Sᵀ Î S`` for any
joint (`_generic_factor`) and the projected inertia ``Π = Î − U D⁻¹ Uᵀ``
(`_pi_1dof`, `_pi_generic`), and the status codes and errors of these algorithms.

Conventions of the kernels (see `aba` for the recursion): twists ``ξ = ω + ε v`` and wrenches
``ζ = f + ε τ`` are pure dual quaternions that change frame with the same ``Ad(x) ζ = x ζ x*``
[Silva2022, eq. (3)], so Kim's coadjoint ``Ad*_{T⁻¹}`` is ``Ad(x_i^λ)``; Kim's ``ad_V`` and ``−ad*_V``
are both the dual quaternion cross product ``V × ·`` [Silva2022, eq. (8)]; ``Sᵀ F`` is the power
pairing ``⟨S, F⟩``.
"""

from __future__ import annotations

import numpy as np

from dqdyn._engine.boundary import (
    BAD_SHAPE,
    OK,
    raise_status,
)
from dqdyn._engine.jit import kernel
from dqdyn._engine.linalg import chol_factor, chol_solve
from dqdyn.algebra._core import ad6, ad6_inv
from dqdyn.dynamics.newton_euler import joint_pose, rotation_matrix
from dqdyn.errors import ModelError, ShapeError, SingularError
from dqdyn.multibody.joints import (
    HELICAL,
    PRISMATIC,
    REVOLUTE,
    joint_column,
    joint_nv,
)
from dqdyn.multibody.model import (
    MF_ARMATURE,
    MF_AXIS,
    MF_COM,
    MF_INERTIA,
    MF_MASS,
    MF_PITCH,
    MI_IQ,
    MI_JTYPE,
    MI_NV,
    Model,
)

# the decorators of the articulated-body kernels (aba, hybrid, minverse import them from here)
njit = kernel(error_model="numpy")
pjit = kernel(parallel=True, error_model="numpy")
ijit = kernel(inline="always", error_model="numpy")  # small helpers, inlined at the IR level

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
    """Reference (dense) form of `transform_inertia_to_parent`: ``Ad(x) P Ad(x*) e_k``."""
    for k in range(6):
        for r in range(6):
            col[r] = 0.0
        col[k] = 1.0
        ad6_inv(x, col, col2)
        matvec6(P, col2, col)
        ad6(x, col, col2)
        for r in range(6):
            out[r, k] += col2[r]


# =============================================================================== the kernel
# Per-body workspace columns (rows of a 2-D view of the flat scratch; one extra row at the end
# is scratch).  Inside the kernels a twist is ``[ω; v]`` and a wrench ``[τ; f]`` (torque first):
# with that order an inertia ``Î: twist ↦ wrench`` is a *symmetric* 6×6 matrix and the power
# pairing ⟨S, F⟩ is ``Sᵀ F``.  It is kept as 21 numbers, ``τ = Ī ω + H v``, ``f = Hᵀ ω + M v``:
# ``Ī`` (upper triangle, 6), ``H`` (row-major, 9), ``M`` (upper triangle, 6).  For a rigid body
# at its origin ``Ī = Ī_c + m(|c|² 1 − c cᵀ)``, ``H = m [c]×``, ``M = m 1`` (the same map as
# `body_inertia6` with the wrench halves swapped).  The public wrench layout ``[f, τ]``
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
    change ``Ad(r) L3(𝕀) Ad(r*)`` of a rotational inertia [Silva2022, eq. (14)]."""
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
    (the blocks of the dense product; see `transform_inertia_to_parent` for the
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
def _generic_factor(mi, mf, i, q, W, sc, has_presc, presc, qdd_in, tau, iv, jt, world):
    """Multi-DoF (or partly prescribed) joint, pass 2: ``S`` columns, ``η += S_p q̈_p``, ``U``,
    ``u``, the Cholesky factor of ``D``; returns (status, number of free DoFs).  ``world``:
    ``S`` is moved to the world frame (``x_i^0`` at ``K_R0``, ``K_P0``), where ``Î`` then is."""
    nvj = joint_nv(jt)
    ax = sc[SC_AX : SC_AX + 3]
    ax[0], ax[1], ax[2] = mf[i, MF_AXIS], mf[i, MF_AXIS + 1], mf[i, MF_AXIS + 2]
    nf = int(0)  # (int64 from the start: see dqdyn._engine.jit, "Literals")
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
        Dm[a, a] += mf[i, MF_ARMATURE + int(sc[SC_FREE + a])]  # + armature [Featherstone2008, §7.3]
    if nf > 0 and not chol_factor(Dm, nf, W[i, K_L : K_L + 36].reshape((6, 6))):
        return SINGULAR + i, nf
    return OK, nf


@ijit
def _free_factor(mf, i, tau, iv, W):
    """`_generic_factor` for a free joint with no prescribed DoF, in the body's frame, where its
    motion axes are ``S = 1`` (`dqdyn.multibody.joints.joint_column`): ``U = Î``, ``u = τ − B̂``
    and ``D = Î`` + armature, factored in place at ``K_L`` by `chol_factor` — the general
    step's numbers without its products by the unit axes.  (``K_S`` is not written: the
    acceleration pass adds ``q̈`` itself.)  Returns a status."""
    o = K_I  # Î packed as in `_ia_apply`: [I (6, upper), H (9, row-major), M (6, upper)]
    Lc = W[i, K_L : K_L + 36].reshape((6, 6))
    for a, b, k in ((0, 0, 0), (1, 0, 1), (2, 0, 2), (1, 1, 3), (2, 1, 4), (2, 2, 5)):
        x = W[i, o + k]
        W[i, K_U + 6 * a + b] = W[i, K_U + 6 * b + a] = x
        Lc[a, b] = x
        y = W[i, o + 15 + k]
        W[i, K_U + 6 * (3 + a) + 3 + b] = W[i, K_U + 6 * (3 + b) + 3 + a] = y
        Lc[3 + a, 3 + b] = y
    for a in range(3):
        for b in range(3):
            h = W[i, o + 6 + 3 * a + b]  # Î[a, 3 + b] = Î[3 + b, a]
            W[i, K_U + 6 * (3 + b) + a] = W[i, K_U + 6 * a + 3 + b] = h
            Lc[3 + b, a] = h
    for a in range(6):
        Lc[a, a] += mf[i, MF_ARMATURE + a]  # + armature [Featherstone2008, §7.3]
        W[i, K_UU + a] = tau[iv + a] - W[i, K_PA + a]
    if not chol_factor(Lc, int(6), Lc):
        return SINGULAR + i
    return OK


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


MIMIC = 4000  # the model has mimic joints (entry kernels only)


@njit
def _has_mimic(mi):
    for i in range(1, mi.shape[0]):
        if mi[i, MI_NV] == 0 and mi[i, MI_JTYPE] != 0:
            return True
    return False


_NO_FEXT = np.zeros((1, 6))


def _reject_mimic(model: Model, what: str):
    if model.mimic_joints:
        raise ModelError(
            f"{what}: model {model.name!r} has mimic joints {list(model.mimic_joints)}, which couple "
            "DoFs across bodies, and this algorithm does not handle them yet; dqdyn.aba and "
            "dqdyn.mass_matrix_inverse do (through the reduced mass matrix), or load the model "
            "with mimic='independent'"
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


def _gate_status(model, r, what: str) -> None:
    """Raise for a gate call's status ``r`` unless it sends the call down the general path
    (``None``: inputs not plain vectors; ``BAD_SHAPE``: the general path names the argument)."""
    if r is not None and r != BAD_SHAPE:
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
