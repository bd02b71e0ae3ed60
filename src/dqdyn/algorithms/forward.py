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

from ..algebra._core import ad6, ad6_inv, cross6, dq_mul, power6
from ..errors import InfeasibleError, ModelError, NonFiniteError, ShapeError, SingularError
from ..multibody.joints import (
    joint_column,
    joint_nv,
    joint_transform,
    joint_velocity,
    joint_velocity_bias,
)
from ..multibody.model import (
    MF_AXIS,
    MF_COM,
    MF_INERTIA,
    MF_MASS,
    MF_OFFSET,
    MF_PITCH,
    MF_PLACEMENT,
    MF_SCALE,
    MF_GRAVITY,
    MI_IQ,
    MI_IV,
    MI_JTYPE,
    MI_PARENT,
    Model,
)
from ._common import (
    BAD_SHAPE,
    check_lengths,
    is_fast,
    BAD_FEXT_FINITE,
    BAD_TAU_FINITE,
    BAD_V_FINITE,
    OK,
    as_vector,
    as_vector_batch,
    broadcast_batch,
    check_finite,
    check_q,
    first_bad,
    raise_status,
)

njit = nb.njit(cache=True, error_model="numpy", fastmath={"contract"})
pjit = nb.njit(cache=True, parallel=True, error_model="numpy", fastmath={"contract"})

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
def chol_solve(L, n, b, x):
    """Solve ``L Lᵀ x = b`` (``b`` and ``x`` may alias)."""
    for i in range(n):
        s = b[i]
        for k in range(i):
            s -= L[i, k] * x[k]
        x[i] = s / L[i, i]
    for i in range(n - 1, -1, -1):
        s = x[i]
        for k in range(i + 1, n):
            s -= L[k, i] * x[k]
        x[i] = s / L[i, i]


# =============================================================================== the kernel
@njit
def workspace_size_nb(nb1, nv):
    """Length of the flat scratch array the kernels below carve their buffers from."""
    return nb1 * (4 * 6 + 3 * 36 + 8) + 50 + 72 + 36 + 4 * nv + nb1 * 6


def workspace_size(nb1: int, nv: int) -> int:
    return int(workspace_size_nb(nb1, nv))


@njit
def hybrid_kernel(mi, mf, q, v, tau, fext, use_fext, presc, qdd_in, qdd, tau_out, ws):
    """Hybrid dynamics (seed 002 Table 4); with no prescribed DoF it is the ABA (Table 3).

    ``presc[k] != 0`` marks DoF ``k`` as acceleration-prescribed (``qdd_in[k]`` given,
    ``tau_out[k]`` computed); the others take ``tau[k]`` and get ``qdd[k]``.  Gravity is read
    from the world row of ``mf``.  ``ws`` is flat scratch of :func:`workspace_size` floats.
    Returns a status code.
    """
    st = check_q(mi, q)
    if st != OK:
        return st
    st = check_finite(v, BAD_V_FINITE)
    if st != OK:
        return st
    st = check_finite(tau, BAD_TAU_FINITE)
    if st != OK:
        return st
    if use_fext:
        for i in range(fext.shape[0]):
            st = check_finite(fext[i], BAD_FEXT_FINITE)
            if st != OK:
                return st
    nb1 = mi.shape[0]
    o = 0
    ws6 = ws[o : o + nb1 * 24].reshape((nb1, 4, 6))
    o += nb1 * 24
    wsm = ws[o : o + nb1 * 108].reshape((nb1, 3, 6, 6))
    o += nb1 * 108
    xl = ws[o : o + nb1 * 8].reshape((nb1, 8))
    o += nb1 * 8
    xj = ws[o : o + 8]
    s = ws[o + 8 : o + 14]
    t6 = ws[o + 14 : o + 20]
    t6b = ws[o + 20 : o + 26]
    col = ws[o + 26 : o + 32]
    col2 = ws[o + 32 : o + 38]
    uu = ws[o + 38 : o + 44]
    sol = ws[o + 44 : o + 50]
    o += 50
    Dm = ws[o : o + 36].reshape((6, 6))
    Isc = ws[o + 36 : o + 72].reshape((6, 6))
    o += 72
    scr = ws[o : o + 36].reshape((4, 3, 3))
    free = np.empty(6, dtype=np.int64)
    V = ws6[:, 0]
    eta = ws6[:, 1]
    Bh = ws6[:, 2]
    A = ws6[:, 3]  # V̇
    Ih = wsm[:, 0]  # articulated inertia Î_i (twist → wrench)
    U = wsm[:, 1]  # columns Î S_k (wrenches), stored as U[i, :, k]
    Lc = wsm[:, 2]  # Cholesky factor of D = ⟨S_k, Î S_l⟩ (so Ψ = D⁻¹ is never formed)
    for k in range(6):
        V[0, k] = 0.0
        A[0, k] = 0.0
    # base acceleration: V̇_0 = −g  (Kim, footnote 6); g sits in the world row of mf
    A[0, 3] = -mf[0, MF_GRAVITY]
    A[0, 4] = -mf[0, MF_GRAVITY + 1]
    A[0, 5] = -mf[0, MF_GRAVITY + 2]

    # ---------------------------------------------------------------- forward: V_i, η_i
    for i in range(1, nb1):
        jt = mi[i, MI_JTYPE]
        ax = mf[i, MF_AXIS : MF_AXIS + 3]
        joint_transform(jt, ax, mf[i, MF_PITCH], q, mi[i, MI_IQ], mf[i, MF_SCALE], mf[i, MF_OFFSET], xj)
        dq_mul(mf[i, MF_PLACEMENT : MF_PLACEMENT + 8], xj, xl[i])
        ad6_inv(xl[i], V[mi[i, MI_PARENT]], V[i])
        joint_velocity(jt, ax, mf[i, MF_PITCH], q, mi[i, MI_IQ], v, mi[i, MI_IV], mf[i, MF_SCALE], s)
        for k in range(6):
            V[i, k] += s[k]
        # η_i = V_i × S q̇ + Ṡ q̇
        cross6(V[i], s, eta[i])
        joint_velocity_bias(jt, q, mi[i, MI_IQ], v, mi[i, MI_IV], t6)
        for k in range(6):
            eta[i, k] += t6[k]
        # rigid inertia and bias wrench  B_i = V × (I V) − F^ext
        body_inertia6(mf, i, Ih[i])
        matvec6(Ih[i], V[i], t6)
        cross6(V[i], t6, Bh[i])
        if use_fext:
            for k in range(6):
                Bh[i, k] -= fext[i, k]

    # ---------------------------------------------------------------- backward: Î, B̂, Π, β
    for i in range(nb1 - 1, 0, -1):
        jt = mi[i, MI_JTYPE]
        nvj = joint_nv(jt)
        iv = mi[i, MI_IV]
        ax = mf[i, MF_AXIS : MF_AXIS + 3]
        # known acceleration part: η' = η + Σ_prescribed S_k q̈_k
        nf = 0
        for k in range(nvj):
            joint_column(jt, ax, mf[i, MF_PITCH], q, mi[i, MI_IQ], k, s)
            if presc[iv + k] != 0.0:
                w = qdd_in[iv + k]
                for r in range(6):
                    eta[i, r] += s[r] * w
            else:
                free[nf] = k
                nf += 1
        # U = Î S_free, D = ⟨S_free, U⟩, u = τ_free − ⟨S_free, Î η' + B̂⟩
        matvec6(Ih[i], eta[i], t6)
        for r in range(6):
            t6[r] += Bh[i, r]
        for a in range(nf):
            joint_column(jt, ax, mf[i, MF_PITCH], q, mi[i, MI_IQ], free[a], s)
            matvec6(Ih[i], s, col)
            for r in range(6):
                U[i, r, a] = col[r]
            uu[a] = tau[iv + free[a]] - power6(s, t6)
        for a in range(nf):
            joint_column(jt, ax, mf[i, MF_PITCH], q, mi[i, MI_IQ], free[a], s)
            for b in range(nf):
                Dm[a, b] = power6(s, U[i, :, b])
        # β = B̂ + Î η' + U Ψ u
        beta = t6  # already Î η' + B̂
        if nf > 0:
            if not chol_factor(Dm, nf, Lc[i]):
                return SINGULAR + i
            chol_solve(Lc[i], nf, uu, sol)
            for r in range(6):
                acc = 0.0
                for a in range(nf):
                    acc += U[i, r, a] * sol[a]
                beta[r] += acc
        p = mi[i, MI_PARENT]
        if p > 0:
            # Π = Î − U Ψ Uᵀ P  (P swaps the wrench halves: ⟨S, Î ξ⟩ = (P U)ᵀ ξ)
            for r in range(6):
                for c in range(6):
                    Isc[r, c] = Ih[i, r, c]
            if nf == 1:
                # Π = Î − u (P u)ᵀ / D for a single free axis (u = Î S)
                dinv = 1.0 / (Lc[i, 0, 0] * Lc[i, 0, 0])
                for r in range(6):
                    ur = U[i, r, 0] * dinv
                    for c in range(6):
                        cc = c + 3 if c < 3 else c - 3
                        Isc[r, c] -= ur * U[i, cc, 0]
            for c in range(6 if nf > 1 else 0):
                # row c of (P U)ᵀ, i.e. column c of the projection ⟨S_a, Î e_c⟩ = (P U[:, a])[c]
                cc = c + 3 if c < 3 else c - 3
                for a in range(nf):
                    uu[a] = U[i, cc, a]
                if nf > 0:
                    chol_solve(Lc[i], nf, uu, sol)
                for r in range(6):
                    acc = 0.0
                    for a in range(nf):
                        acc += U[i, r, a] * sol[a]
                    Isc[r, c] -= acc
            transform_inertia_to_parent(xl[i], Isc, Ih[p], scr)
            ad6(xl[i], beta, col)
            for r in range(6):
                Bh[p, r] += col[r]

    # ---------------------------------------------------------------- forward: q̈, V̇
    for i in range(1, nb1):
        jt = mi[i, MI_JTYPE]
        nvj = joint_nv(jt)
        iv = mi[i, MI_IV]
        ax = mf[i, MF_AXIS : MF_AXIS + 3]
        p = mi[i, MI_PARENT]
        # a' = Ad(x_i^λ*) V̇_λ + η'
        ad6_inv(xl[i], A[p], A[i])
        for r in range(6):
            A[i, r] += eta[i, r]
        # F0 = Î a' + B̂  ;  q̈_free = Ψ (τ_free − ⟨S_free, F0⟩)
        matvec6(Ih[i], A[i], t6)
        for r in range(6):
            t6[r] += Bh[i, r]
        nf = 0
        for k in range(nvj):
            if presc[iv + k] == 0.0:
                free[nf] = k
                nf += 1
        for a in range(nf):
            joint_column(jt, ax, mf[i, MF_PITCH], q, mi[i, MI_IQ], free[a], s)
            uu[a] = tau[iv + free[a]] - power6(s, t6)
        if nf > 0:
            chol_solve(Lc[i], nf, uu, sol)
        for a in range(nf):
            k = free[a]
            qdd[iv + k] = sol[a]
            tau_out[iv + k] = tau[iv + k]
            joint_column(jt, ax, mf[i, MF_PITCH], q, mi[i, MI_IQ], k, s)
            for r in range(6):
                A[i, r] += s[r] * sol[a]
        # prescribed DoFs: τ = ⟨S_k, F_i⟩ with F_i = Î V̇_i + B̂_i
        if nf < nvj:
            matvec6(Ih[i], A[i], t6)
            for r in range(6):
                t6[r] += Bh[i, r]
            for k in range(nvj):
                if presc[iv + k] != 0.0:
                    joint_column(jt, ax, mf[i, MF_PITCH], q, mi[i, MI_IQ], k, s)
                    tau_out[iv + k] = power6(s, t6)
                    qdd[iv + k] = qdd_in[iv + k]
    return OK


@njit
def aba_kernel(mi, mf, q, v, tau, qdd, ws):
    """The articulated-body algorithm (seed 002 Table 3): :func:`hybrid_kernel` with no
    prescribed DoF and no external force.  ``ws`` as for :func:`hybrid_kernel`."""
    nv = v.shape[0]
    nb1 = mi.shape[0]
    o = ws.shape[0] - 4 * nv - nb1 * 6
    zeros = ws[o : o + nv]
    for k in range(nv):
        zeros[k] = 0.0
    tau_out = ws[o + nv : o + 2 * nv]
    fext = ws[o + 4 * nv : o + 4 * nv + nb1 * 6].reshape((nb1, 6))
    return hybrid_kernel(mi, mf, q, v, tau, fext, False, zeros, zeros, qdd, tau_out, ws)


@njit
def aba_kernel_alloc(mi, mf, q, v, tau, qdd):
    """:func:`aba_kernel` with its own scratch and input-length checks (single-call fast path)."""
    if not (check_lengths(mi, q, v, tau.shape[0]) and qdd.shape[0] == tau.shape[0]):
        return BAD_SHAPE
    return aba_kernel(mi, mf, q, v, tau, qdd, np.empty(workspace_size_nb(mi.shape[0], v.shape[0])))


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
    for n in nb.prange(Q.shape[0]):
        ws = np.empty(workspace_size_nb(nb1, nv))
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
    hybrid_batch(model.mi, model.mf, Q, Vv, T, F, use_fext, presc, A, QDD, TAU, status)
    st, row = first_bad(status)
    if st:
        _raise(model, st, row if N > 1 else None)
    return QDD.reshape(batch + (model.nv,)), TAU.reshape(batch + (model.nv,))


def aba(model: Model, q, v, tau, fext=None) -> np.ndarray:
    """Forward dynamics by the articulated-body algorithm (seed 002 Table 3): ``q̈`` (..., nv).

    Solves ``M(q) q̈ + C(q, v) v + g(q) = τ + Σ J_iᵀ F_i^ext`` in O(n).  ``fext`` (..., nbodies+1,
    6): one wrench ``[f, τ]`` per body, in the body frame at the body origin (row 0 ignored).
    """
    if model._index["mimic"]:
        _reject_mimic(model, "aba")
    if fext is None:
        if is_fast(q, v, tau):  # one state, float64 arrays: lengths are checked in the kernel
            qdd = np.empty(model.nv)
            st = aba_kernel_alloc(model.mi, model.mf, q, v, tau, qdd)
            if st:
                if st == BAD_SHAPE:
                    as_vector(q, model.nq, "q", "the configuration, model.nq entries")
                    as_vector(v, model.nv, "v", "the velocity, model.nv entries")
                    as_vector(tau, model.nv, "tau", "generalized forces, model.nv entries")
                _raise(model, st)
            return qdd
        Q, bq = as_vector_batch(q, model.nq, "q", "the configuration, model.nq entries")
        V, bv = as_vector_batch(v, model.nv, "v", "the velocity, model.nv entries")
        T, bt = as_vector_batch(tau, model.nv, "tau", "generalized forces, model.nv entries")
        (Q, V, T), batch = broadcast_batch([Q, V, T], [bq, bv, bt])
        N = Q.shape[0]
        QDD = np.empty((N, model.nv))
        status = np.zeros(N, dtype=np.int64)
        aba_batch(model.mi, model.mf, Q, V, T, QDD, status)
        st, row = first_bad(status)
        if st:
            _raise(model, st, row)
        return QDD.reshape(batch + (model.nv,))
    presc = np.zeros(model.nv)
    return _run_hybrid(model, q, v, tau, presc, np.zeros(model.nv), fext)[0]


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
    return _run_hybrid(model, q, v, tau, presc.astype(np.float64), a, fext)


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


@njit
def minv_kernel(mi, mf, q, Minv):
    """``M(q)⁻¹`` without forming ``M``: one articulated-inertia sweep (q only), then per column
    ``e_c`` a backward sweep along the path of DoF ``c`` and a forward sweep (seed 002 §3.2's
    "simplified ABA" with the articulated quantities shared by all columns)."""
    st = check_q(mi, q)
    if st != OK:
        return st
    nb1 = mi.shape[0]
    nv = Minv.shape[0]
    xl = np.empty((nb1, 8))
    Ih = np.zeros((nb1, 6, 6))
    U = np.zeros((nb1, 6, 6))
    Lc = np.zeros((nb1, 6, 6))
    Bh = np.zeros((nb1, 6))
    A = np.zeros((nb1, 6))
    uu = np.zeros((nb1, 6))
    xj = np.empty(8)
    s = np.empty(6)
    t = np.empty(6)
    col = np.empty(6)
    sol = np.empty(6)
    Dm = np.empty((6, 6))
    Isc = np.empty((6, 6))
    scr = np.empty((4, 3, 3))
    # ---------------------------------------------------------------- articulated inertias
    for i in range(1, nb1):
        jt = mi[i, MI_JTYPE]
        joint_transform(jt, mf[i, MF_AXIS : MF_AXIS + 3], mf[i, MF_PITCH], q, mi[i, MI_IQ],
                        mf[i, MF_SCALE], mf[i, MF_OFFSET], xj)
        dq_mul(mf[i, MF_PLACEMENT : MF_PLACEMENT + 8], xj, xl[i])
        body_inertia6(mf, i, Ih[i])
    for i in range(nb1 - 1, 0, -1):
        jt = mi[i, MI_JTYPE]
        nvj = joint_nv(jt)
        ax = mf[i, MF_AXIS : MF_AXIS + 3]
        for a in range(nvj):
            joint_column(jt, ax, mf[i, MF_PITCH], q, mi[i, MI_IQ], a, s)
            matvec6(Ih[i], s, col)
            for r in range(6):
                U[i, r, a] = col[r]
        for a in range(nvj):
            joint_column(jt, ax, mf[i, MF_PITCH], q, mi[i, MI_IQ], a, s)
            for b in range(nvj):
                Dm[a, b] = power6(s, U[i, :, b])
        if not chol_factor(Dm, nvj, Lc[i]):
            return SINGULAR + i
        p = mi[i, MI_PARENT]
        if p > 0:
            for r in range(6):
                for c in range(6):
                    Isc[r, c] = Ih[i, r, c]
            for c in range(6):
                cc = c + 3 if c < 3 else c - 3
                for a in range(nvj):
                    t[a] = U[i, cc, a]
                chol_solve(Lc[i], nvj, t, sol)
                for r in range(6):
                    acc = 0.0
                    for a in range(nvj):
                        acc += U[i, r, a] * sol[a]
                    Isc[r, c] -= acc
            transform_inertia_to_parent(xl[i], Isc, Ih[p], scr)
    # ---------------------------------------------------------------- one column per DoF
    for j in range(1, nb1):
        jt = mi[j, MI_JTYPE]
        for k in range(joint_nv(jt)):
            c = mi[j, MI_IV] + k
            # backward along the path j → root: u = τ − ⟨S, B̂⟩, β = B̂ + U Ψ u
            for i in range(nb1):
                for r in range(6):
                    Bh[i, r] = 0.0
                    uu[i, r] = 0.0
            i = j
            while i > 0:
                ti = mi[i, MI_JTYPE]
                nvi = joint_nv(ti)
                axi = mf[i, MF_AXIS : MF_AXIS + 3]
                for a in range(nvi):
                    joint_column(ti, axi, mf[i, MF_PITCH], q, mi[i, MI_IQ], a, s)
                    uu[i, a] = (1.0 if (i == j and a == k) else 0.0) - power6(s, Bh[i])
                chol_solve(Lc[i], nvi, uu[i], sol)
                for r in range(6):
                    acc = Bh[i, r]
                    for a in range(nvi):
                        acc += U[i, r, a] * sol[a]
                    t[r] = acc
                p = mi[i, MI_PARENT]
                if p > 0:
                    ad6(xl[i], t, col)
                    for r in range(6):
                        Bh[p, r] += col[r]
                i = p
            # forward over every body: q̈ = Ψ (u − ⟨S, Î a'⟩),  a = a' + S q̈
            for i in range(1, nb1):
                ti = mi[i, MI_JTYPE]
                nvi = joint_nv(ti)
                axi = mf[i, MF_AXIS : MF_AXIS + 3]
                ad6_inv(xl[i], A[mi[i, MI_PARENT]], A[i])
                for a in range(nvi):
                    # ⟨S_a, Î a'⟩ = (P U_a)ᵀ a'  (U = Î S)
                    pu = (U[i, 3, a] * A[i, 0] + U[i, 4, a] * A[i, 1] + U[i, 5, a] * A[i, 2]
                          + U[i, 0, a] * A[i, 3] + U[i, 1, a] * A[i, 4] + U[i, 2, a] * A[i, 5])
                    t[a] = uu[i, a] - pu
                chol_solve(Lc[i], nvi, t, sol)
                for a in range(nvi):
                    joint_column(ti, axi, mf[i, MF_PITCH], q, mi[i, MI_IQ], a, s)
                    for r in range(6):
                        A[i, r] += s[r] * sol[a]
                    Minv[mi[i, MI_IV] + a, c] = sol[a]
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
    _reject_mimic(model, "mass_matrix_inverse")
    nv = model.nv
    if is_fast(q):
        if q.shape[0] != model.nq:
            as_vector(q, model.nq, "q", "the configuration, model.nq entries")
        out = np.empty((nv, nv))
        st = minv_kernel(model.mi, model.mf, q, out)
        if st:
            _raise(model, st)
        return out
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
