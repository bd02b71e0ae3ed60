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
from ..errors import ModelError, ShapeError, SingularError
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
    MI_IQ,
    MI_IV,
    MI_JTYPE,
    MI_PARENT,
    Model,
)
from ._common import (
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

njit = nb.njit(cache=True)
pjit = nb.njit(cache=True, parallel=True)

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
def transform_inertia_to_parent(x, P, out, tmp, col, col2):
    """``out += Ad(x) P Ad(x*)``: move an inertia (twist → wrench map) from child to parent.

    Columns of ``P Ad(x*)`` are ``P`` applied to ``Ad(x*) e_k``; then ``Ad(x)`` maps each column.
    Written as ``Ad(x) P Ad(x*) e_k`` for the six unit twists ``e_k`` of the parent frame.
    """
    for k in range(6):
        for r in range(6):
            col[r] = 0.0
        col[k] = 1.0
        ad6_inv(x, col, col2)  # Ad(x*) e_k  (a twist in the child frame)
        matvec6(P, col2, col)  # P Ad(x*) e_k (a wrench in the child frame)
        ad6(x, col, col2)  # back in the parent frame
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
def hybrid_kernel(mi, mf, g, q, v, tau, fext, use_fext, presc, qdd_in, qdd, tau_out, ws6, wsm):
    """Hybrid dynamics (seed 002 Table 4); with no prescribed DoF it is the ABA (Table 3).

    ``presc[k]`` marks DoF ``k`` as acceleration-prescribed (``qdd_in[k]`` given, ``tau_out[k]``
    computed); the others take ``tau[k]`` and get ``qdd[k]``.  ``ws6`` (nb+1, 4, 6) and ``wsm``
    (nb+1, 3, 6, 6) are scratch.  Returns a status code.
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
    V = ws6[:, 0]
    eta = ws6[:, 1]
    Bh = ws6[:, 2]
    A = ws6[:, 3]  # V̇
    Ih = wsm[:, 0]  # articulated inertia Î_i (twist → wrench)
    U = wsm[:, 1]  # columns Î S_k (wrenches), stored as U[i, :, k]
    Lc = wsm[:, 2]  # Cholesky factor of D = ⟨S_k, Î S_l⟩ (so Ψ = D⁻¹ is never formed)
    xl = np.empty((nb1, 8))
    xj = np.empty(8)
    s = np.empty(6)
    t6 = np.empty(6)
    t6b = np.empty(6)
    col = np.empty(6)
    col2 = np.empty(6)
    uu = np.empty(6)
    sol = np.empty(6)
    Dm = np.empty((6, 6))
    Isc = np.empty((6, 6))
    free = np.empty(6, dtype=np.int64)
    for k in range(6):
        V[0, k] = 0.0
        A[0, k] = 0.0
    # base acceleration: V̇_0 = −g  (Kim, footnote 6)
    A[0, 3], A[0, 4], A[0, 5] = -g[0], -g[1], -g[2]

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
            if presc[iv + k]:
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
            for c in range(6):
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
            transform_inertia_to_parent(xl[i], Isc, Ih[p], col, col2, t6b)
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
            if not presc[iv + k]:
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
                if presc[iv + k]:
                    joint_column(jt, ax, mf[i, MF_PITCH], q, mi[i, MI_IQ], k, s)
                    tau_out[iv + k] = power6(s, t6)
                    qdd[iv + k] = qdd_in[iv + k]
    return OK


@pjit
def hybrid_batch(mi, mf, g, Q, V, TAU, FEXT, use_fext, presc, QDD_IN, QDD, TAU_OUT, status):
    nb1 = mi.shape[0]
    for n in nb.prange(Q.shape[0]):
        ws6 = np.empty((nb1, 4, 6))
        wsm = np.empty((nb1, 3, 6, 6))
        fe = FEXT[n] if use_fext else FEXT[0]
        status[n] = hybrid_kernel(mi, mf, g, Q[n], V[n], TAU[n], fe, use_fext, presc, QDD_IN[n],
                                  QDD[n], TAU_OUT[n], ws6, wsm)


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
    g = np.ascontiguousarray(model.gravity)
    presc = np.ascontiguousarray(presc, dtype=np.bool_)
    hybrid_batch(model.mi, model.mf, g, Q, Vv, T, F, use_fext, presc, A, QDD, TAU, status)
    st, row = first_bad(status)
    if st:
        _raise(model, st, row if N > 1 else None)
    return QDD.reshape(batch + (model.nv,)), TAU.reshape(batch + (model.nv,))


def aba(model: Model, q, v, tau, fext=None) -> np.ndarray:
    """Forward dynamics by the articulated-body algorithm (seed 002 Table 3): ``q̈`` (..., nv).

    Solves ``M(q) q̈ + C(q, v) v + g(q) = τ + Σ J_iᵀ F_i^ext`` in O(n).  ``fext`` (..., nbodies+1,
    6): one wrench ``[f, τ]`` per body, in the body frame at the body origin (row 0 ignored).
    """
    _reject_mimic(model, "aba")
    if fext is None and np.ndim(q) == 1 and np.ndim(v) == 1 and np.ndim(tau) == 1:
        # single-state fast path
        qq = as_vector(q, model.nq, "q", "the configuration, model.nq entries")
        vv = as_vector(v, model.nv, "v", "the velocity, model.nv entries")
        tt = as_vector(tau, model.nv, "tau", "generalized forces, model.nv entries")
        nb1 = model.nbodies + 1
        qdd = np.empty(model.nv)
        tout = np.empty(model.nv)
        st = hybrid_kernel(model.mi, model.mf, model.gravity, qq, vv, tt, _NO_FEXT, False,
                           _no_presc(model), _zeros_nv(model), qdd, tout,
                           np.empty((nb1, 4, 6)), np.empty((nb1, 3, 6, 6)))
        if st:
            _raise(model, st)
        return qdd
    presc = np.zeros(model.nv, dtype=np.bool_)
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


_cache: dict = {}


def _no_presc(model):
    k = ("np", id(model))
    a = _cache.get(k)
    if a is None or a.shape[0] != model.nv:
        a = np.zeros(model.nv, dtype=np.bool_)
        _cache[k] = a
    return a


def _zeros_nv(model):
    k = ("z", id(model))
    a = _cache.get(k)
    if a is None or a.shape[0] != model.nv:
        a = np.zeros(model.nv)
        _cache[k] = a
    return a


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
    return _run_hybrid(model, q, v, tau, presc, a, fext)


def mass_matrix_inverse(model: Model, q) -> np.ndarray:
    """``M(q)⁻¹`` (..., nv, nv) from ``nv`` articulated-body solves, without forming ``M``.

    Column ``k`` is ``q̈`` for ``τ = e_k`` with gravity, velocity and external forces removed
    (seed 002 §3.2, "simplified ABA calls").
    """
    _reject_mimic(model, "mass_matrix_inverse")
    Q, batch = as_vector_batch(q, model.nq, "q", "the configuration, model.nq entries")
    nv = model.nv
    N = Q.shape[0]
    out = np.empty((N, nv, nv))
    status = np.zeros(N * nv, dtype=np.int64)
    Qr = np.ascontiguousarray(np.repeat(Q, nv, axis=0))
    V0 = np.zeros((N * nv, nv))
    T = np.ascontiguousarray(np.tile(np.eye(nv), (N, 1)))
    QDD = np.empty((N * nv, nv))
    TAU = np.empty((N * nv, nv))
    hybrid_batch(model.mi, model.mf, np.zeros(3), Qr, V0, T, _NO_FEXT.reshape(1, 1, 6), False,
                 np.zeros(nv, dtype=np.bool_), V0, QDD, TAU, status)
    st, row = first_bad(status)
    if st:
        _raise(model, st, (row // nv) if N > 1 else None)
    out[:] = np.swapaxes(QDD.reshape(N, nv, nv), -1, -2)
    return out.reshape(batch + (nv, nv))


__all__ = ["aba", "hybrid_dynamics", "mass_matrix_inverse"]
