"""The compiled derivative kernels: ``rnea_derivatives_kernel``, ``aba_derivatives_kernel``, their
batches, the call-gate entries and the compiled chain rule of models with mimic joints, on the
world-frame sweeps of `dqdyn.dynamics.derivatives._sweeps`.

Forward-dynamics derivatives use ``∂q̈/∂x = −M⁻¹ ∂τ/∂x`` evaluated at ``q̈ = FD(q, v, τ)``
(the identity behind Table 6: differentiating ``τ = ID(q, v, FD(q, v, τ))``), and
``∂q̈/∂τ = M⁻¹``.  One compiled call, the structure of Pinocchio's ``computeABADerivatives``:
``M⁻¹`` by the recursive inverse of `minverse` (O(n·d), without forming ``M``) — or, up to
``CHOL_MINV_UPTO`` velocities, from the ``M`` of the sweep's own composite inertias
(`_mass_sweep`) by `linalg.spd_inverse` (n³/2 multiply-adds, cheaper there than a
second pass over the tree); the forward sweep of `_sweeps` with ``q̈ = 0`` gives the bias ``τ(q, v, 0)`` and
``q̈ = M⁻¹ (τ − bias)``; the accelerations are then updated in place, the backward sweep fills
``∂τ/∂(q, v)``, and the two products by ``M⁻¹`` go to BLAS (large n).  (The first version factored ``M`` by Cholesky and built ``M⁻¹``
column by column from triangular solves: 2n³ scalar operations with strided reads, 12 ms of the
13 ms of a 200-link chain.)
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np

from dqdyn._engine.boundary import (
    BAD_A_FINITE,
    BAD_SHAPE,
    BAD_TAU_FINITE,
    OK,
    check_lengths,
    check_state,
)
from dqdyn._engine.jit import kernel
from dqdyn._engine.linalg import spd_inverse, tree_nnz, tree_spd_inverse
from dqdyn._engine.views import unmanaged, view
from dqdyn.algebra._core import ad6, cross6
from dqdyn.dynamics.articulated import MIMIC, SINGULAR, _has_mimic
from dqdyn.dynamics.derivatives._inertia import _inertia_apply
from dqdyn.dynamics.derivatives._sweeps import (
    _bias_sweep,
    _carve,
    _derivative_sweep,
    _forward_sweep,
    _mass_sweep,
    _ws_size,
    _zero,
)
from dqdyn.dynamics.minverse import minv_kernel
from dqdyn.dynamics.newton_euler import armature_diag
from dqdyn.multibody.joints import PLANAR, joint_nv
from dqdyn.multibody.model import MI_IQ, MI_IV, MI_JTYPE, MI_PARENT, dof_parents

# the O(n·d) kernels below: same numerics as the articulated-body kernels (aba.py, hybrid.py) (no NaN checks on division)
fjit = kernel(error_model="numpy", fastmath={"contract"})  # (FMA: single and batch may differ in the last bit)
fpjit = kernel(parallel=True, error_model="numpy", fastmath={"contract"})
ijit = kernel(inline="always", error_model="numpy")  # small helpers, inlined at the IR level

#: status of aba_derivatives when the mass matrix is not positive definite
SINGULAR_M = 3000


#: up to this many velocities ``aba_derivatives`` takes ``M⁻¹`` from a Cholesky factor of the
#: sweep's own ``M`` (about n³ operations, no second pass over the tree); above it, from the
#: recursive inverse (O(n·d), `minverse`)
CHOL_MINV_UPTO = 16

#: above it, the same ``M`` inverted on the tree's sparsity pattern (`linalg.tree_spd_inverse`)
#: where ``n · nnz(L)`` is at most this (a quadruped: 18 · 117; its time there is half the
#: recursive inverse's), else the recursive inverse
TREE_MINV_WORK = 4000

#: from this size on, ``M⁻¹ ∂τ/∂x`` goes to BLAS (below it a call costs more than the loops)
BLAS_FROM = 24


#: up to this size ``_neg_product`` keeps each entry's sum in a register (i-j-k): on a 6-DoF arm
#: half the time of the row-by-row i-k-j loops, which read and write the output row for each k
DOT_UPTO = 12


@fjit
def _neg_product(A, B, out):
    """``out = −A B`` (n × n): BLAS from ``BLAS_FROM`` on (a naive triple loop made large trees
    cost n^2.7), contiguous i-k-j loops below it, one register sum per entry up to ``DOT_UPTO``
    (the same operations in the same order as the i-k-j loops: the same bits)."""
    n = A.shape[0]
    if n >= BLAS_FROM:
        np.dot(A, B, out)
        for r in range(n):
            for c in range(n):
                out[r, c] = -out[r, c]
        return
    if n <= DOT_UPTO:
        for r in range(n):
            for c in range(n):
                acc = 0.0
                for k in range(n):
                    acc -= A[r, k] * B[k, c]
                out[r, c] = acc
        return
    for r in range(n):
        for c in range(n):
            out[r, c] = 0.0
        for k in range(n):
            a = -A[r, k]
            for c in range(n):
                out[r, c] += a * B[k, c]


@fjit
def rnea_derivatives_kernel(mi, mf, q, v, a, fext, use_fext, out):
    """``out[0] = ∂τ/∂q``, ``out[1] = ∂τ/∂v``, ``out[2] = M = ∂τ/∂a`` (nv × nv each); status."""
    nv = v.shape[0]
    if not (check_lengths(mi, q, v, a.shape[0]) and out.shape[1] == nv):
        return BAD_SHAPE
    st = check_state(mi, q, v, a, BAD_A_FINITE, fext, use_fext)
    if st != OK:
        return st
    return _rnea_derivatives_on(mi, mf, q, v, a, fext, use_fext, out,
                                np.empty(_ws_size(mi.shape[0], nv)))


@fjit
def _rnea_derivatives_on(mi, mf, q, v, a, fext, use_fext, out, ws):
    """The sweeps of `rnea_derivatives_kernel` (arguments checked) on the workspace ``ws``.
    Every array is taken without its reference count (`unmanaged`; the
    caller holds them): the sweeps take ~25 views per body of the workspace, each an increment
    and a decrement of a shared count otherwise (UR5: 2.5 -> 1.9 µs in a loop inside numba)."""
    mi, mf, q, v, a, fext, out, ws = (unmanaged(mi), unmanaged(mf), unmanaged(q), unmanaged(v),
                                      unmanaged(a), unmanaged(fext), unmanaged(out), unmanaged(ws))
    nb1 = mi.shape[0]
    nv = v.shape[0]
    X, Vw, Aw, Pb, Pc, Dc, Hc, Fb, Fc, cols, tmp = _carve(ws, nb1, nv)
    S, dVq, dAq, dAv, Fa, Fv, Fq, BT = cols[0], cols[1], cols[2], cols[3], cols[4], cols[5], cols[6], cols[7]
    dq, dv, M = out[0], out[1], out[2]
    _zero(dq)
    _zero(dv)
    _zero(M)
    _forward_sweep(mi, mf, q, v, a, fext, use_fext, X, Vw, Aw, Pb, Pc, Dc, Hc, Fb, Fc,
                   S, dVq, dAq, dAv, tmp)
    _derivative_sweep(mi, q, X, Pc, Dc, Hc, Fc, S, dVq, dAq, dAv, Fa, Fv, Fq, BT,
                      dq, dv, M, bool(True), tmp)  # (a bool, not a literal: see dqdyn._engine.jit, "Literals")
    armature_diag(mi, mf, M)  # ∂τ/∂q̈ = M + diag(armature); ∂τ/∂q, ∂τ/∂v do not see it
    return OK


@ijit  # (inlined at the IR level: the batch and single-state kernels then contract the same FMAs)
def _accelerations_at(mi, q, X, Aw, Pb, Fb, Fc, S, dAq, qdd, tmp):
    """The forward sweep made at ``q̈ = 0`` moved to ``q̈`` in O(n): ``𝒜_i += δ𝒜_i = δ𝒜_λ +
    𝒮_i q̈_i``, ``f_i += ℐ_i δ𝒜_i`` (``Fc`` restarts from these forces), ``Δa += δ𝒜_λ × 𝒮``.
    ``Aw`` is overwritten with ``δ𝒜`` (the derivative sweep no longer reads ``𝒜``)."""
    nb1 = mi.shape[0]
    dA = Aw
    t = tmp[50:56]
    s = tmp[56:62]
    for r in range(6):
        dA[0, r] = 0.0
    for i in range(1, nb1):
        jt = mi[i, MI_JTYPE]
        p = mi[i, MI_PARENT]
        iv = mi[i, MI_IV]
        for r in range(6):
            t[r] = dA[p, r]
        for k in range(joint_nv(jt)):
            c = iv + k
            cross6(dA[p], S[c], s)
            for r in range(6):
                dAq[c, r] += s[r]
                t[r] += S[c, r] * qdd[c]
        if jt == PLANAR:
            # Δa_φ += Ad(x) ∂(S q̈)/∂φ
            phi = q[mi[i, MI_IQ] + 2]
            cph, sph = math.cos(phi), math.sin(phi)
            for r in range(6):
                s[r] = 0.0
            s[3] = -sph * qdd[iv] + cph * qdd[iv + 1]
            s[4] = -cph * qdd[iv] - sph * qdd[iv + 1]
            ad6(X[i], s, s)
            for r in range(6):
                dAq[iv + 2, r] += s[r]
        for r in range(6):
            dA[i, r] = t[r]
        _inertia_apply(Pb[i], t, s)
        for r in range(6):
            Fc[i, r] = Fb[i, r] + s[r]


@fjit
def aba_derivatives_kernel(mi, mf, q, v, tau, fext, use_fext, out):
    """``out[0] = ∂q̈/∂q``, ``out[1] = ∂q̈/∂v``, ``out[2] = M⁻¹`` at ``q̈ = FD(q, v, τ)``; status."""
    nv = v.shape[0]
    if not (check_lengths(mi, q, v, tau.shape[0]) and out.shape[1] == nv):
        return BAD_SHAPE
    st = check_state(mi, q, v, tau, BAD_TAU_FINITE, fext, use_fext)
    if st != OK:
        return st
    return _aba_derivatives_on(mi, mf, q, v, tau, fext, use_fext, out,
                               np.empty(_ws_size(mi.shape[0], nv) + 4 * nv * nv + 2 * nv))


@fjit
def _aba_derivatives_on(mi, mf, q, v, tau, fext, use_fext, out, ws):
    """The steps of `aba_derivatives_kernel` (arguments checked) on the workspace ``ws``,
    every array without its reference count (as `_rnea_derivatives_on`)."""
    mi, mf, q, v, tau, fext, out, ws = (unmanaged(mi), unmanaged(mf), unmanaged(q), unmanaged(v),
                                        unmanaged(tau), unmanaged(fext), unmanaged(out), unmanaged(ws))
    nb1 = mi.shape[0]
    nv = v.shape[0]
    Mi = out[2]
    small = nv <= CHOL_MINV_UPTO
    par = np.empty(max(nv, 1), dtype=np.int64)
    ends = np.empty(max(nv, 1), dtype=np.int64)
    tree = (not small) and dof_parents(mi, par) and nv * tree_nnz(par, nv) <= TREE_MINV_WORK
    # 1. M⁻¹ by the recursive inverse (minverse.py, O(n·d); Pinocchio's computeMinverse) — or,
    # on small models and small trees, from the sweep's M (step 2)
    if not (small or tree):
        st = minv_kernel(mi, mf, q, Mi)
        if st != OK:
            return SINGULAR_M if st >= SINGULAR else st
    X, Vw, Aw, Pb, Pc, Dc, Hc, Fb, Fc, cols, tmp = _carve(ws, nb1, nv)
    S, dVq, dAq, dAv, Fa, Fv, Fq, BT = cols[0], cols[1], cols[2], cols[3], cols[4], cols[5], cols[6], cols[7]
    o = _ws_size(nb1, nv)
    mats = view(ws, o, (4, nv, nv))
    dq, dv, M, L = mats[0], mats[1], mats[2], mats[3]
    qdd = ws[o + 4 * nv * nv : o + 4 * nv * nv + nv]
    col = ws[o + 4 * nv * nv + nv : o + 4 * nv * nv + 2 * nv]
    for k in range(nv):
        qdd[k] = 0.0
    _zero(dq)
    _zero(dv)
    _zero(M)
    # 2. sweep at q̈ = 0: the bias τ(q, v, 0); q̈ = M⁻¹ (τ − bias)
    _forward_sweep(mi, mf, q, v, qdd, fext, use_fext, X, Vw, Aw, Pb, Pc, Dc, Hc, Fb, Fc,
                   S, dVq, dAq, dAv, tmp)
    if small or tree:
        _mass_sweep(mi, Pc, S, Fa, M)
        armature_diag(mi, mf, M)
        if tree:
            ok = tree_spd_inverse(M, nv, unmanaged(par), L, qdd, col, unmanaged(ends), Mi)  # (qdd,
            # col: scratch here, overwritten below)
        else:
            ok = spd_inverse(M, nv, L, Mi)
        if not ok:
            return SINGULAR_M
    _bias_sweep(mi, Fc, S, col)
    for k in range(nv):
        col[k] = tau[k] - col[k]
    for r in range(nv):
        acc = 0.0
        for k in range(nv):
            acc += Mi[r, k] * col[k]
        qdd[r] = acc
    # 3. accelerations at q̈
    _accelerations_at(mi, q, X, Aw, Pb, Fb, Fc, S, dAq, qdd, tmp)
    # 4. the derivative sweep at q̈ (the composite inertias are summed here unless step 2 did)
    _derivative_sweep(mi, q, X, Pc, Dc, Hc, Fc, S, dVq, dAq, dAv, Fa, Fv, Fq, BT,
                      dq, dv, M, not (small or tree), tmp)
    # 5. ∂q̈/∂x = −M⁻¹ ∂τ/∂x, ∂q̈/∂τ = M⁻¹
    dqo, dvo = out[0], out[1]
    _neg_product(Mi, dq, dqo)
    _neg_product(Mi, dv, dvo)
    return OK


@fpjit
def rnea_derivatives_batch(mi, mf, Q, V, A, FEXT, use_fext, OUT, status):
    for n in nb.prange(Q.shape[0]):
        fe = FEXT[n] if use_fext else FEXT[0]
        status[n] = rnea_derivatives_kernel(mi, mf, Q[n], V[n], A[n], fe, use_fext, OUT[n])


@fpjit
def aba_derivatives_batch(mi, mf, Q, V, T, FEXT, use_fext, OUT, status):
    for n in nb.prange(Q.shape[0]):
        fe = FEXT[n] if use_fext else FEXT[0]
        status[n] = aba_derivatives_kernel(mi, mf, Q[n], V[n], T[n], fe, use_fext, OUT[n])



# single states (and small batches) through the C call gate (gate.gate_address): the result is
# one (3 nv, nv) block, ∂/∂q over ∂/∂v over the third matrix
@fjit
def _rnea_derivatives_entry(mi, mf, q, v, a, out):
    if _has_mimic(mi):
        return MIMIC
    return rnea_derivatives_kernel(mi, mf, q, v, a, out[0, :1], bool(False), out)


@fjit
def _aba_derivatives_entry(mi, mf, q, v, tau, out):
    if _has_mimic(mi):
        return MIMIC
    return aba_derivatives_kernel(mi, mf, q, v, tau, out[0, :1], bool(False), out)



# ------------------------------------------------ models with mimic joints, compiled chain rule
# The gate tables are those of Model.independent_mimic()'s model (every mimic joint its own DoF,
# appended after the model's own: q_x = [q, scale·q[src] + offset], v_x = G v); ``mm`` holds per
# mimic joint ``[src (q index), master's v index, scale, offset]``, which is all G is.


@fjit
def _mimic_expand(mm, q, v, a, qx, vx, ax):
    """``q_x = [q, scale · q[src] + offset]``, ``v_x = G v``, ``a_x = G a``."""
    nq, nv = q.shape[0], v.shape[0]
    for i in range(nq):
        qx[i] = q[i]
    for i in range(nv):
        vx[i] = v[i]
        ax[i] = a[i]
    for j in range(mm.shape[0] // 4):
        iq, iv, s = int(mm[4 * j]), int(mm[4 * j + 1]), mm[4 * j + 2]
        qx[nq + j] = s * q[iq] + mm[4 * j + 3]
        vx[nv + j] = s * v[iv]
        ax[nv + j] = s * a[iv]


@fjit
def _mimic_reduce(mm, Dx, out):
    """``out = Gᵀ D_x G`` (nv × nv from nv_x × nv_x): row and column ``nv + j`` of ``D_x`` land,
    times the scale, in the master's."""
    nv = out.shape[0]
    for r in range(nv):
        for c in range(nv):
            out[r, c] = Dx[r, c]
    for j in range(mm.shape[0] // 4):
        iv, s = int(mm[4 * j + 1]), mm[4 * j + 2]
        for c in range(nv):
            out[iv, c] += s * Dx[nv + j, c]
            out[c, iv] += s * Dx[c, nv + j]
        for k in range(mm.shape[0] // 4):
            out[iv, int(mm[4 * k + 1])] += s * mm[4 * k + 2] * Dx[nv + j, nv + k]


@fjit
def _mimic_rnea_derivatives_entry(mi, mf, q, v, a, mm, out):
    """``rnea_derivatives`` of a model with mimic joints: ``Gᵀ (∂τ_x/∂x_x) G`` on the
    independent model (module comment above); status (not OK: the caller's numpy path names it)."""
    nvx, nqx = mi[0, MI_IV], mi[0, MI_IQ]
    k = mm.shape[0] // 4
    nv = nvx - k
    if q.shape[0] != nqx - k or v.shape[0] != nv or a.shape[0] != nv:
        return BAD_SHAPE
    ws = np.empty(nqx + 2 * nvx + 3 * nvx * nvx)
    qx, vx, ax = ws[0:nqx], ws[nqx : nqx + nvx], ws[nqx + nvx : nqx + 2 * nvx]
    Dx = view(ws, nqx + 2 * nvx, (3, nvx, nvx))
    _mimic_expand(mm, q, v, a, qx, vx, ax)
    st = rnea_derivatives_kernel(mi, mf, qx, vx, ax, Dx[0, :1], bool(False), Dx)
    if st != OK:
        return st
    for t in range(3):
        _mimic_reduce(mm, Dx[t], out[t])
    return OK


@fjit
def _mimic_aba_derivatives_entry(mi, mf, q, v, tau, mm, out):
    """``aba_derivatives`` of a model with mimic joints: ``M = Gᵀ M_x G``, ``h = Gᵀ h_x``,
    ``q̈ = M⁻¹ (τ − h)`` (the reduced system ``aba`` solves), then at ``a_x = G q̈``
    ``∂q̈/∂x = −M⁻¹ Gᵀ (∂τ_x/∂x_x) G`` and ``∂q̈/∂τ = M⁻¹`` — `_mimic_aba_derivatives`'
    chain rule, compiled; status (not OK: the caller's numpy path names it).

    As in `aba_derivatives_kernel`, one forward sweep serves all: made at ``a_x = 0`` it
    gives ``M_x`` (`_mass_sweep`) and ``h_x`` (`_bias_sweep`), and
    `_accelerations_at` moves it to ``a_x = G q̈`` for the derivative sweep (no separate
    CRBA or RNEA, no second forward sweep)."""
    nvx, nqx = mi[0, MI_IV], mi[0, MI_IQ]
    k = mm.shape[0] // 4
    nv = nvx - k
    if q.shape[0] != nqx - k or v.shape[0] != nv or tau.shape[0] != nv:
        return BAD_SHAPE
    for i in range(nv):
        if not math.isfinite(tau[i]):
            return BAD_TAU_FINITE
    nb1 = mi.shape[0]
    o = _ws_size(nb1, nvx)
    ws = np.empty(o + nqx + 3 * nvx + 3 * nvx * nvx + 3 * nv * nv + 2 * nv)
    X, Vw, Aw, Pb, Pc, Dc, Hc, Fb, Fc, cols, tmp = _carve(ws, nb1, nvx)
    S, dVq, dAq, dAv, Fa, Fv, Fq, BT = cols[0], cols[1], cols[2], cols[3], cols[4], cols[5], cols[6], cols[7]
    qx, vx, ax = ws[o : o + nqx], ws[o + nqx : o + nqx + nvx], ws[o + nqx + nvx : o + nqx + 2 * nvx]
    hx = ws[o + nqx + 2 * nvx : o + nqx + 3 * nvx]
    o += nqx + 3 * nvx
    Dx = view(ws, o, (3, nvx, nvx))
    o += 3 * nvx * nvx
    R = view(ws, o, (3, nv, nv))  # M = G^T M_x G, the inverse of its factor, G^T D_x G
    o += 3 * nv * nv
    qdd, col = ws[o : o + nv], ws[o + nv : o + 2 * nv]
    for i in range(nv):
        qdd[i] = 0.0
    _mimic_expand(mm, q, v, qdd, qx, vx, ax)  # (a_x = 0 for now)
    st = check_state(mi, qx, vx, ax, BAD_A_FINITE, Dx[0, :1], False)
    if st != OK:
        return st
    _forward_sweep(mi, mf, qx, vx, ax, Dx[0, :1], bool(False), X, Vw, Aw, Pb, Pc, Dc, Hc, Fb, Fc,
                   S, dVq, dAq, dAv, tmp)
    _zero(Dx[2])
    _mass_sweep(mi, Pc, S, Fa, Dx[2])  # M_x
    _bias_sweep(mi, Fc, S, hx)  # h_x = τ_x(q, v, 0)
    M, L = R[0], R[1]
    _mimic_reduce(mm, Dx[2], M)
    for i in range(nv):  # τ − Gᵀ h_x
        qdd[i] = tau[i] - hx[i]
    for j in range(k):
        qdd[int(mm[4 * j + 1])] -= mm[4 * j + 2] * hx[nv + j]
    Mi = out[2]
    if not spd_inverse(M, nv, L, Mi):
        return SINGULAR_M
    for r in range(nv):  # q̈ = M⁻¹ (τ − h)
        acc = 0.0
        for i in range(nv):
            acc += Mi[r, i] * qdd[i]
        col[r] = acc
    _mimic_expand(mm, q, v, col, qx, vx, ax)  # a_x = G q̈
    _accelerations_at(mi, qx, X, Aw, Pb, Fb, Fc, S, dAq, ax, tmp)
    _zero(Dx[0])
    _zero(Dx[1])
    _zero(Dx[2])
    _derivative_sweep(mi, qx, X, Pc, Dc, Hc, Fc, S, dVq, dAq, dAv, Fa, Fv, Fq, BT,
                      Dx[0], Dx[1], Dx[2], bool(False), tmp)
    for t in range(2):
        _mimic_reduce(mm, Dx[t], R[2])
        _neg_product(Mi, R[2], out[t])
    return OK

