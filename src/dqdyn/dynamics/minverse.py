"""``M(q)⁻¹`` without forming ``M``: the recursive inverse ([Kim2012, §2.2]; Carpentier's structure).

The articulated inertias are computed once, in the world frame; column ``c`` of ``M⁻¹`` is then
the ABA response to ``τ = e_c`` with gravity and velocity removed ([Kim2012, §3.2]'s simplified
passes), all columns swept together over subtrees.  Shared pieces in `articulated`.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from dqdyn._engine.batching import for_batch
from dqdyn._engine.boundary import (
    BAD_SHAPE,
    ND,
    OK,
    as_vector_batch,
    check_q,
    first_bad,
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
    gate_entry,
    gate_matrix,
    gate_tables,
    gate_vector,
)
from dqdyn._engine.linalg import chol_solve, spd_inverse
from dqdyn._engine.views import unmanaged
from dqdyn.dynamics.articulated import (  # (and the decorators of the articulated-body kernels)
    K_COLS,
    K_I,
    K_L,
    K_P,
    K_P0,
    K_R,
    K_R0,
    K_SW,
    K_U,
    K_UD,
    MIMIC,
    SC_AX,
    SC_DM,
    SC_IA,
    SC_P,
    SC_SOL,
    SC_UU,
    SC_XJ,
    SC_XL,
    SINGULAR,
    TINY_PIVOT,
    _axis6,
    _body_pose,
    _gate_status,
    _generic_factor,
    _has_mimic,
    _ia_apply,
    _one_dof,
    _pi_1dof,
    _pi_generic,
    _raise,
    _rigid_inertia_of,
    _sym_congruence,
    _twist_to_world,
    ijit,
    njit,
    pjit,
)
from dqdyn.multibody.joints import FREE
from dqdyn.multibody.model import (
    MF_ARMATURE,
    MF_COM,
    MF_INERTIA,
    MF_MASS,
    MI_IQ,
    MI_IV,
    MI_JTYPE,
    MI_NV,
    MI_PARENT,
    Model,
)


@ijit
def _world_pose(W, i, lam, free):
    """``W[i, K_R0…], W[i, K_P0…]``: ``x_i^0 = x_λ^0 x_i^λ`` from the local (R, p) of body i."""
    if lam == 0:  # a root body: the fixed frame of the sweeps is put at its origin; M⁻¹ is the
        # same in any fixed frame, and no precision is lost far from the origin.  A free root's
        # own frame (its pose then is not needed), where its motion axes S are the identity
        # (`_free_root_rows`); world axes for any other root.
        for k in range(9):
            W[i, K_R0 + k] = (1.0 if k % 4 == 0 else 0.0) if free else W[i, K_R + k]
        for k in range(3):
            W[i, K_P0 + k] = 0.0
        return
    for r in range(3):
        a0, a1, a2 = W[lam, K_R0 + 3 * r], W[lam, K_R0 + 3 * r + 1], W[lam, K_R0 + 3 * r + 2]
        for c in range(3):
            W[i, K_R0 + 3 * r + c] = (a0 * W[i, K_R + c] + a1 * W[i, K_R + 3 + c]
                                      + a2 * W[i, K_R + 6 + c])
        W[i, K_P0 + r] = (W[lam, K_P0 + r] + a0 * W[i, K_P] + a1 * W[i, K_P + 1]
                          + a2 * W[i, K_P + 2])


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
def _free_root_rows(mf, i, r, c1, W, sc, F, Mi):
    """Pass 2 of `minv_kernel` for a free root, in its own frame (`_world_pose`), where
    ``S = 1``: ``U = Î``, ``D = Î`` + armature, ``M⁻¹_rr = D⁻¹`` and, for the columns ``c`` below
    it, ``M⁻¹_rc = −D⁻¹ F_c`` (the general step's ``S D⁻¹`` is ``D⁻¹``, and a root has no parent
    to pass ``Π`` or ``U D⁻¹`` to).  The six columns of S and the 36 products of each of ``U``,
    ``D``, ``S D⁻¹`` and ``U D⁻¹`` of the general step are skipped."""
    D = sc[SC_P : SC_P + 36].reshape((6, 6))
    Dinv = sc[SC_DM : SC_DM + 36].reshape((6, 6))
    o = K_I  # Î packed as in `_ia_apply`: [I (6, upper), H (9, row-major), M (6, upper)]
    for a, b, k in ((0, 0, 0), (0, 1, 1), (0, 2, 2), (1, 1, 3), (1, 2, 4), (2, 2, 5)):
        D[a, b] = D[b, a] = W[i, o + k]
        D[3 + a, 3 + b] = D[3 + b, 3 + a] = W[i, o + 15 + k]
    for a in range(3):
        for b in range(3):
            D[a, 3 + b] = D[3 + b, a] = W[i, o + 6 + 3 * a + b]
    for a in range(6):
        D[a, a] += mf[i, MF_ARMATURE + a]  # + armature [Featherstone2008, §7.3]
    if not spd_inverse(D, int(6), W[i, K_L : K_L + 36].reshape((6, 6)), Dinv):
        return SINGULAR + i
    for a in range(6):
        ra = r + a
        for b in range(6):
            Mi[ra, r + b] = Dinv[a, b]
        e0, e1, e2 = Dinv[a, 0], Dinv[a, 1], Dinv[a, 2]
        e3, e4, e5 = Dinv[a, 3], Dinv[a, 4], Dinv[a, 5]
        for c in range(U64(r + 6), U64(c1)):
            Mi[ra, c] = -(e0 * F[0, c] + e1 * F[1, c] + e2 * F[2, c] + e3 * F[3, c]
                          + e4 * F[4, c] + e5 * F[5, c])
    return OK


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


@ijit
def _minv_backward(mi, mf, q, T, W, sc, buf, F, Mi, zeros, empty):
    """Pass 2 of `minv_kernel` (leaves → root): ``D_i``, ``Î_λ += Π_i`` (eq. 49), the diagonal
    blocks ``D_i⁻¹`` and the upper rows ``−D_i⁻¹ ⟨S_i, F_c⟩`` of the subtree's columns, ``F_c += U_i M⁻¹_ic``."""
    nb1 = mi.shape[0]
    for i in range(nb1 - 1, 0, -1):
        jt = mi[i, MI_JTYPE]
        lam = mi[i, MI_PARENT]
        r = T[T_DV, i]
        c1 = r + T[T_NSUB, i]
        if lam == 0 and jt == FREE:
            st = _free_root_rows(mf, i, r, c1, W, sc, F, Mi)
            if st != OK:
                return st
            continue
        if _one_dof(jt):
            s0, s1, s2, s3, s4, s5 = _axis6(mf, i, jt)
            s0, s1, s2, s3, s4, s5 = _twist_to_world(W, i, s0, s1, s2, s3, s4, s5)
            U0, U1, U2, U3, U4, U5 = _ia_apply(W, i, K_I, s0, s1, s2, s3, s4, s5)
            # D = Sᵀ Î S + armature [Featherstone2008, §7.3] (the rotor's inertia: Model.armature)
            D = s0 * U0 + s1 * U1 + s2 * U2 + s3 * U3 + s4 * U4 + s5 * U5 + mf[i, MF_ARMATURE]
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
    return OK


@ijit
def _minv_forward(mi, mf, q, T, W, sc, buf, F, Mi, zeros, empty):
    """Pass 3 of `minv_kernel` (root → leaves, depth-first): ``M⁻¹_ic −= D_i⁻¹ ⟨U_i, A_λ,c⟩``
    (eq. 45) and ``A_i,c = A_λ,c + S_i M⁻¹_ic`` (eq. 41)."""
    nb1 = mi.shape[0]
    nv = Mi.shape[0]
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
        if lam == 0 and mi[i, MI_JTYPE] == FREE:  # S = 1 (`_free_root_rows`): A_i,c = M⁻¹_ic
            if kids:
                for k in range(6):
                    for c in range(cr, ce):
                        buf[ai + k, c] = Mi[r + k, c]
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


@njit
def minv_kernel(mi, mf, q, Minv):
    """``M(q)⁻¹`` without forming ``M``: Carpentier's recursive inverse (the structure of
    Pinocchio's ``computeMinverse``), i.e. the articulated-body algorithm of [Kim2012, Table 3]
    ([Kim2012, §2.2, eqs. (41), (45), (49), (50)]) run for the unit forces ``τ = e_c`` of all columns at
    once, with ``q̇ = 0`` and no gravity (so ``η = 0`` and ``B̂`` is the sum of the children's
    ``β``).  Inertias, motion axes, wrenches and accelerations are expressed in one fixed frame
    (world axes at the root's origin; a free root's own frame, where its ``S`` is the identity
    and its step is `_free_root_rows`), where every ``Ad(x_k^i)`` of eqs. 49–50 is the identity:

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
    mi, mf, q, Minv = unmanaged(mi), unmanaged(mf), unmanaged(q), unmanaged(Minv)  # (_views)
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
        lam = mi[i, MI_PARENT]
        free = lam == 0 and mi[i, MI_JTYPE] == FREE
        if not free:
            _body_pose(mi, mf, i, q, W, ax3, xj8, xl8)
        _world_pose(W, i, lam, free)
        _rigid_inertia_world(mf, i, W)
    st = _minv_backward(mi, mf, q, T, W, sc, buf, F, Mi, zeros, empty)
    if st != OK:
        return st
    _minv_forward(mi, mf, q, T, W, sc, buf, F, Mi, zeros, empty)
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


@njit
def minv_entry(mi, mf, q, Minv):
    nv = mi[0, MI_IV]
    if q.shape[0] != mi[0, MI_IQ] or Minv.shape[0] != nv or Minv.shape[1] != nv:
        return BAD_SHAPE
    if _has_mimic(mi):
        return MIMIC
    return minv_kernel(mi, mf, q, Minv)


_MINV = None  # minv_entry, armed on first use (gate.armed_call)
MINV_SIG = (T_MI, T_MF, T_V, T_M)


def _c_minv(mip, mfp, nb1, bufs, lens):
    mi, mf = gate_tables(mip, mfp, nb1)
    return minv_entry(mi, mf, gate_vector(bufs, lens, 0), gate_matrix(bufs, lens, 1, mi[0, MI_IV]))


_MINV_C = 0  # its address, set on first use
_MINV_ENTRY = gate_entry(globals(), "_MINV_C", _c_minv, 1, NV, NV)


@pjit
def minv_batch(mi, mf, Q, MINV, status):
    for n in nb.prange(Q.shape[0]):
        status[n] = minv_kernel(mi, mf, Q[n], MINV[n])


@fast_front(_MINV_ENTRY, out=False, skip=MIMIC)
def mass_matrix_inverse(model: Model, q) -> np.ndarray:
    """``M(q)⁻¹`` (..., nv, nv) by articulated-body sweeps, without forming or inverting ``M``.

    The articulated inertias are computed once; column ``c`` is then the ABA response to
    ``τ = e_c`` with gravity and velocity removed ([Kim2012, §3.2]'s simplified passes).  On a
    model with mimic joints it is the inverse of the reduced ``M = Gᵀ M_full G`` (by Cholesky).

    ``q`` (..., nq) as for `dqdyn.aba`.  Returns ``Minv`` (..., nv, nv), symmetric positive
    definite, in the inverse units of ``M`` (1/(kg·m²), 1/kg, 1/(kg·m) across).  Raises
    ``ShapeError``, ``NonFiniteError``, ``NotUnitError``, and ``SingularError`` naming a joint
    that moves no mass.
    """
    r = _MINV_ENTRY(model, q)
    if type(r) is ND:
        return r
    if r == MIMIC:
        return _minv_reduced(model, q)
    _gate_status(model, r, "mass_matrix_inverse")
    try:
        model.mi  # noqa: B018  (AttributeError: not a Model)
    except AttributeError:
        raise not_a_model(model) from None
    nv = model.nv
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
                return _minv_reduced(model, q)
            _raise(model, st)
    if model._index["mimic"]:
        return _minv_reduced(model, q)
    Q, batch = as_vector_batch(q, model.nq, "q", "the configuration, model.nq entries")
    N = Q.shape[0]
    out = np.empty((N, nv, nv))
    status = np.zeros(N, dtype=np.int64)
    for_batch(minv_batch, N, model.mi.shape[0])(model.mi, model.mf, Q, out, status)
    st, row = first_bad(status)
    if st:
        _raise(model, st, row if N > 1 else None)
    return out.reshape(batch + (nv, nv))


def _minv_reduced(model: Model, q) -> np.ndarray:
    """``M(q)⁻¹`` of a model with mimic joints: the reduced CRBA matrix ``Gᵀ M_full G``
    (`dqdyn.mass_matrix`) inverted by its Cholesky factor (see
    `dqdyn.dynamics.aba._aba_reduced`)."""
    from dqdyn.dynamics.lagrange import _solve  # (q converted there, once)

    return _solve(model, q, np.eye(model.nv), ())
