"""Analytic derivatives of inverse and forward dynamics (seed 002 §1B.10, Tables 5–6).

Every line of the recursive Newton–Euler algorithm is differentiated with respect to one scalar
``p`` (Kim's method, digest §1B.10), written with the dual quaternion operations used everywhere
in dqdyn (``Ad`` for twists and wrenches alike, the DQ cross product ``×`` for Kim's ``ad`` and
``−ad*``, the power pairing ``⟨S, F⟩`` for ``Sᵀ F``).  With ``A_i = Ad(x_i^λ*)``:

forward:   ``∂V_i = A_i ∂V_λ − ∂h_i × A_i V_λ + ∂(S_i q̇_i)``
           ``∂V̇_i = A_i ∂V̇_λ − ∂h_i × A_i V̇_λ + ∂(S_i q̈_i) + ∂V_i × S_i q̇_i + V_i × ∂(S_i q̇_i)
                    + ∂(Ṡ_i q̇_i)``
backward:  ``∂F_i = I_i ∂V̇_i + ∂V_i × I_i V_i + V_i × I_i ∂V_i + Σ_k Ad(x_k^i)(∂F_k + ∂h_k × F_k)``
           ``∂τ_i = ⟨∂S_i, F_i⟩ + ⟨S_i, ∂F_i⟩``

(Table 5; ``∂h_i = S_i^m`` when ``p`` is the m-th coordinate of joint i, else 0, Kim's
Corollary 2; the sign of (88) is the corrected one, F9.)  One sweep gives one column; the sweep
for a coordinate of joint ``j`` touches only ``j``'s subtree and its ancestors.  ``p = q̈^m``
columns give ``M``.

**Configuration convention.** Derivatives with respect to ``q`` are taken along the tangent
directions of :func:`dqdyn.integrate`: for a spherical or free joint the k-th column is
``d/dε τ(q ⊕ ε e_k)`` with the body-frame perturbation ``x ← x exp(½ ε e_k)`` — the same as
Pinocchio's ``computeRNEADerivatives`` (up to dqdyn's ``[ω, v]`` ordering of free-joint
velocities); for every other joint it is the ordinary partial derivative.  So every
derivative matrix is nv × nv.

Forward-dynamics derivatives use ``∂q̈/∂x = −M⁻¹ ∂τ/∂x`` evaluated at ``q̈ = aba(q, v, τ)``
(the identity behind Table 6: differentiating ``τ = ID(q, v, FD(q, v, τ))``), and
``∂q̈/∂τ = M⁻¹``.
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np

from ..algebra._core import ad6, ad6_inv, cross6, dq_mul, power6
from ..errors import ModelError, ShapeError, SingularError
from ..multibody.joints import (
    PLANAR,
    joint_column,
    joint_nv,
    joint_transform,
    joint_velocity,
    joint_velocity_bias,
)
from ..multibody.model import (
    MF_AXIS,
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
    BAD_A_FINITE,
    BAD_V_FINITE,
    OK,
    as_vector_batch,
    broadcast_batch,
    check_finite,
    check_q,
    first_bad,
    raise_status,
)
from .forward import aba, body_inertia6, matvec6

njit = nb.njit(cache=True)
pjit = nb.njit(cache=True, parallel=True)

DIR_Q, DIR_V, DIR_A = 0, 1, 2


@njit
def _planar_dS(q, iq, k, out):
    """``∂S_k/∂φ`` of the planar joint (only φ moves the body-frame axes)."""
    for r in range(6):
        out[r] = 0.0
    phi = q[iq + 2]
    c, s = math.cos(phi), math.sin(phi)
    if k == 0:
        out[3], out[4] = -s, -c
    elif k == 1:
        out[3], out[4] = c, -s


@njit
def _joint_partials(jt, ax, pitch, q, iq, v, iv, a, scale, m, d, dh, dSv, dSa, dSdv):
    """Derivatives, with respect to coordinate / velocity / acceleration ``m`` of this joint
    (``d`` = DIR_Q, DIR_V or DIR_A), of ``h`` (``∂h``), ``S q̇``, ``S q̈`` and ``Ṡ q̇``."""
    for r in range(6):
        dh[r] = 0.0
        dSv[r] = 0.0
        dSa[r] = 0.0
        dSdv[r] = 0.0
    if d == DIR_Q:
        joint_column(jt, ax, pitch, q, iq, m, dh)
        if jt == PLANAR and m == 2:
            phi = q[iq + 2]
            c, s = math.cos(phi), math.sin(phi)
            dx, dy, w = v[iv], v[iv + 1], v[iv + 2]
            ax_, ay_ = a[iv], a[iv + 1]
            # ∂(S q̇)/∂φ, ∂(S q̈)/∂φ
            dSv[3], dSv[4] = -s * dx + c * dy, -c * dx - s * dy
            dSa[3], dSa[4] = -s * ax_ + c * ay_, -c * ax_ - s * ay_
            # ∂(Ṡ q̇)/∂φ = −φ̇ R(φ)ᵀ (ẋ, ẏ)
            dSdv[3], dSdv[4] = -w * (c * dx + s * dy), -w * (-s * dx + c * dy)
        if scale != 1.0:
            for r in range(6):
                dh[r] *= scale
    elif d == DIR_V:
        joint_column(jt, ax, pitch, q, iq, m, dSv)
        for r in range(6):
            dSv[r] *= scale
        if jt == PLANAR:
            phi = q[iq + 2]
            c, s = math.cos(phi), math.sin(phi)
            dx, dy, w = v[iv], v[iv + 1], v[iv + 2]
            if m == 0:
                dSdv[3], dSdv[4] = -s * w, -c * w
            elif m == 1:
                dSdv[3], dSdv[4] = c * w, -s * w
            else:
                dSdv[3], dSdv[4] = -s * dx + c * dy, -c * dx - s * dy
    else:
        joint_column(jt, ax, pitch, q, iq, m, dSa)
        for r in range(6):
            dSa[r] *= scale


@njit
def rnea_derivatives_kernel(mi, mf, g, q, v, a, fext, use_fext, dq, dv, da, want_dqdv):
    """Fill ``dq = ∂τ/∂q``, ``dv = ∂τ/∂v`` (if ``want_dqdv``) and ``da = M``; status code."""
    st = check_q(mi, q)
    if st != OK:
        return st
    st = check_finite(v, BAD_V_FINITE)
    if st != OK:
        return st
    st = check_finite(a, BAD_A_FINITE)
    if st != OK:
        return st
    nb1 = mi.shape[0]
    nv = v.shape[0]
    xl = np.empty((nb1, 8))
    V = np.empty((nb1, 6))
    Vd = np.empty((nb1, 6))
    F = np.empty((nb1, 6))
    Sv = np.empty((nb1, 6))
    I6 = np.empty((nb1, 6, 6))
    AVl = np.empty((nb1, 6))  # A_i V_λ
    AVdl = np.empty((nb1, 6))  # A_i V̇_λ
    dV = np.zeros((nb1, 6))
    dVd = np.zeros((nb1, 6))
    dF = np.zeros((nb1, 6))
    insub = np.zeros(nb1, dtype=np.bool_)
    xj = np.empty(8)
    t = np.empty(6)
    t2 = np.empty(6)
    t3 = np.empty(6)
    s = np.empty(6)
    dh = np.empty(6)
    dSv = np.empty(6)
    dSa = np.empty(6)
    dSdv = np.empty(6)
    # ------------------------------------------------------------------ nominal RNEA (Table 2)
    for k in range(6):
        V[0, k] = 0.0
        Vd[0, k] = 0.0
    Vd[0, 3], Vd[0, 4], Vd[0, 5] = -g[0], -g[1], -g[2]
    for i in range(1, nb1):
        jt = mi[i, MI_JTYPE]
        ax = mf[i, MF_AXIS : MF_AXIS + 3]
        p = mi[i, MI_PARENT]
        joint_transform(jt, ax, mf[i, MF_PITCH], q, mi[i, MI_IQ], mf[i, MF_SCALE], mf[i, MF_OFFSET], xj)
        dq_mul(mf[i, MF_PLACEMENT : MF_PLACEMENT + 8], xj, xl[i])
        ad6_inv(xl[i], V[p], AVl[i])
        ad6_inv(xl[i], Vd[p], AVdl[i])
        joint_velocity(jt, ax, mf[i, MF_PITCH], q, mi[i, MI_IQ], v, mi[i, MI_IV], mf[i, MF_SCALE], Sv[i])
        joint_velocity(jt, ax, mf[i, MF_PITCH], q, mi[i, MI_IQ], a, mi[i, MI_IV], mf[i, MF_SCALE], s)
        for r in range(6):
            V[i, r] = AVl[i, r] + Sv[i, r]
        cross6(V[i], Sv[i], t)
        joint_velocity_bias(jt, q, mi[i, MI_IQ], v, mi[i, MI_IV], t2)
        for r in range(6):
            Vd[i, r] = AVdl[i, r] + s[r] + t[r] + t2[r]
        body_inertia6(mf, i, I6[i])
        matvec6(I6[i], Vd[i], F[i])
        matvec6(I6[i], V[i], t)
        cross6(V[i], t, t2)
        for r in range(6):
            F[i, r] += t2[r]
            if use_fext:
                F[i, r] -= fext[i, r]
    for i in range(nb1 - 1, 0, -1):
        p = mi[i, MI_PARENT]
        if p > 0:
            ad6(xl[i], F[i], t)
            for r in range(6):
                F[p, r] += t[r]

    # ------------------------------------------------------------------ one sweep per column
    for j in range(1, nb1):
        jt = mi[j, MI_JTYPE]
        ax = mf[j, MF_AXIS : MF_AXIS + 3]
        scale = mf[j, MF_SCALE]
        col0 = mi[j, MI_IV]
        # subtree of j (bodies are topologically ordered)
        for i in range(nb1):
            insub[i] = False
        insub[j] = True
        for i in range(j + 1, nb1):
            insub[i] = insub[mi[i, MI_PARENT]]
        for m in range(joint_nv(jt)):
            col = col0 + m
            for d in range(3):
                if d != DIR_A and not want_dqdv:
                    continue
                _joint_partials(jt, ax, mf[j, MF_PITCH], q, mi[j, MI_IQ], v, mi[j, MI_IV], a,
                                scale, m, d, dh, dSv, dSa, dSdv)
                # forward over the subtree
                for i in range(j, nb1):
                    if not insub[i]:
                        continue
                    p = mi[i, MI_PARENT]
                    if i == j:
                        for r in range(6):
                            dV[i, r] = 0.0
                            dVd[i, r] = 0.0
                        # − ∂h × A V_λ  and  − ∂h × A V̇_λ
                        cross6(dh, AVl[i], t)
                        cross6(dh, AVdl[i], t2)
                        for r in range(6):
                            dV[i, r] = -t[r] + dSv[r]
                            dVd[i, r] = -t2[r] + dSa[r] + dSdv[r]
                        # + V × ∂(S q̇)
                        cross6(V[i], dSv, t)
                        for r in range(6):
                            dVd[i, r] += t[r]
                    else:
                        ad6_inv(xl[i], dV[p], dV[i])
                        ad6_inv(xl[i], dVd[p], dVd[i])
                    # + ∂V × S q̇
                    cross6(dV[i], Sv[i], t)
                    for r in range(6):
                        dVd[i, r] += t[r]
                    # ∂F = I ∂V̇ + ∂V × I V + V × I ∂V
                    matvec6(I6[i], dVd[i], dF[i])
                    matvec6(I6[i], V[i], t)
                    cross6(dV[i], t, t2)
                    matvec6(I6[i], dV[i], t)
                    cross6(V[i], t, t3)
                    for r in range(6):
                        dF[i, r] += t2[r] + t3[r]
                # backward over the subtree
                for i in range(nb1 - 1, j, -1):
                    if insub[i]:
                        ad6(xl[i], dF[i], t)
                        p = mi[i, MI_PARENT]
                        for r in range(6):
                            dF[p, r] += t[r]
                # projections on the subtree
                out = dq if d == DIR_Q else (dv if d == DIR_V else da)
                for i in range(j, nb1):
                    if not insub[i]:
                        continue
                    ti = mi[i, MI_JTYPE]
                    axi = mf[i, MF_AXIS : MF_AXIS + 3]
                    for k in range(joint_nv(ti)):
                        joint_column(ti, axi, mf[i, MF_PITCH], q, mi[i, MI_IQ], k, s)
                        out[mi[i, MI_IV] + k, col] += mf[i, MF_SCALE] * power6(s, dF[i])
                # ⟨∂S, F⟩ (planar φ only)
                if d == DIR_Q and jt == PLANAR and m == 2:
                    for k in range(2):
                        _planar_dS(q, mi[j, MI_IQ], k, s)
                        out[col0 + k, col] += power6(s, F[j])
                # up the ancestors: ∂F_λ = Ad(x_j^λ)(∂F_j + ∂h_j × F_j), then pure transport
                cross6(dh, F[j], t)
                for r in range(6):
                    t2[r] = dF[j, r] + t[r]
                i = j
                p = mi[i, MI_PARENT]
                while p > 0:
                    ad6(xl[i], t2, t3)
                    for r in range(6):
                        t2[r] = t3[r]
                    tp = mi[p, MI_JTYPE]
                    axp = mf[p, MF_AXIS : MF_AXIS + 3]
                    for k in range(joint_nv(tp)):
                        joint_column(tp, axp, mf[p, MF_PITCH], q, mi[p, MI_IQ], k, s)
                        out[mi[p, MI_IV] + k, col] += mf[p, MF_SCALE] * power6(s, t2)
                    i = p
                    p = mi[i, MI_PARENT]
    _ = nv
    return OK


@pjit
def rnea_derivatives_batch(mi, mf, g, Q, V, A, FEXT, use_fext, DQ, DV, DA, want, status):
    for n in nb.prange(Q.shape[0]):
        fe = FEXT[n] if use_fext else FEXT[0]
        status[n] = rnea_derivatives_kernel(mi, mf, g, Q[n], V[n], A[n], fe, use_fext, DQ[n], DV[n],
                                            DA[n], want)


_NO_FEXT = np.zeros((1, 1, 6))


def _no_mimic(model: Model, what: str):
    if model.mimic_joints:
        raise ModelError(
            f"{what}: model {model.name!r} has mimic joints {list(model.mimic_joints)}; analytic "
            "derivatives are not available for coupled joints (load the URDF with "
            "mimic='independent' to treat them as free joints)"
        )


def rnea_derivatives(model: Model, q, v, a, fext=None):
    """``(∂τ/∂q, ∂τ/∂v, ∂τ/∂a)`` of inverse dynamics, each (..., nv, nv).

    ``∂τ/∂a`` is the mass matrix.  Configuration derivatives follow the tangent convention of
    :func:`dqdyn.integrate` (module docstring).  ``fext`` (..., nbodies+1, 6) is held constant in
    the body frames.
    """
    _no_mimic(model, "rnea_derivatives")
    Q, bq = as_vector_batch(q, model.nq, "q", "the configuration, model.nq entries")
    V, bv = as_vector_batch(v, model.nv, "v", "the velocity, model.nv entries")
    A, ba = as_vector_batch(a, model.nv, "a", "the acceleration, model.nv entries")
    nb1 = model.nbodies + 1
    if fext is not None:
        F = np.asarray(fext, dtype=np.float64)
        if F.shape[-2:] != (nb1, 6):
            raise ShapeError(f"fext must have shape (..., {nb1}, 6), got {F.shape}")
        bf = F.shape[:-2]
        (Q, V, A, F2), batch = broadcast_batch([Q, V, A, F.reshape(-1, nb1 * 6)], [bq, bv, ba, bf])
        F = np.ascontiguousarray(F2.reshape(-1, nb1, 6))
        use = True
    else:
        (Q, V, A), batch = broadcast_batch([Q, V, A], [bq, bv, ba])
        F, use = _NO_FEXT, False
    N, nv = Q.shape[0], model.nv
    DQ = np.zeros((N, nv, nv))
    DV = np.zeros((N, nv, nv))
    DA = np.zeros((N, nv, nv))
    status = np.zeros(N, dtype=np.int64)
    g = np.ascontiguousarray(model.gravity)
    if N == 1:
        status[0] = rnea_derivatives_kernel(model.mi, model.mf, g, Q[0], V[0], A[0], F[0], use,
                                            DQ[0], DV[0], DA[0], True)
    else:
        rnea_derivatives_batch(model.mi, model.mf, g, Q, V, A, F, use, DQ, DV, DA, True, status)
    st, row = first_bad(status)
    if st:
        raise_status(model, st, row if N > 1 else None)
    sh = batch + (nv, nv)
    return DQ.reshape(sh), DV.reshape(sh), DA.reshape(sh)


def aba_derivatives(model: Model, q, v, tau, fext=None):
    """``(∂q̈/∂q, ∂q̈/∂v, ∂q̈/∂τ)`` of forward dynamics, each (..., nv, nv).

    ``∂q̈/∂x = −M⁻¹ ∂τ/∂x`` at ``q̈ = aba(q, v, τ)``, ``∂q̈/∂τ = M⁻¹`` (``M = ∂τ/∂q̈`` comes
    out of the same derivative sweep; its Cholesky factor gives ``M⁻¹``).
    """
    _no_mimic(model, "aba_derivatives")
    qdd = aba(model, q, v, tau, fext=fext)
    dq, dv, M = rnea_derivatives(model, q, v, qdd, fext=fext)
    try:
        L = np.linalg.cholesky(M)
    except np.linalg.LinAlgError:
        raise SingularError("aba_derivatives: the mass matrix is singular at this configuration") from None
    eye = np.broadcast_to(np.eye(model.nv), M.shape)
    Linv = np.linalg.solve(L, eye)
    Minv = np.swapaxes(Linv, -1, -2) @ Linv
    return -Minv @ dq, -Minv @ dv, Minv


__all__ = ["rnea_derivatives", "aba_derivatives"]


# =============================================================================== regressor
#: order of the 10 inertial parameters of a body (Pinocchio's ``toDynamicParameters`` order):
#: mass, first moment ``h = m c`` (3), and the inertia about the body origin, body axes (6)
INERTIAL_PARAMETERS = ("m", "hx", "hy", "hz", "Ixx", "Ixy", "Iyy", "Ixz", "Iyz", "Izz")


@njit
def _unit_param_wrench(e, V, Vd, out, t, t2):
    """Wrench ``I(π_e) V̇ + V × I(π_e) V`` of a body whose only inertial parameter is π_e = 1.

    ``I(π)`` maps a twist ``[ω, v]`` to the momentum ``[f, τ] = [m v + ω × h, I_o ω + h × v]``.
    """
    for pass_ in range(2):
        src = Vd if pass_ == 0 else V
        w0, w1, w2, v0, v1, v2 = src[0], src[1], src[2], src[3], src[4], src[5]
        for r in range(6):
            t[r] = 0.0
        if e == 0:
            t[0], t[1], t[2] = v0, v1, v2
        elif e <= 3:
            hx = 1.0 if e == 1 else 0.0
            hy = 1.0 if e == 2 else 0.0
            hz = 1.0 if e == 3 else 0.0
            t[0], t[1], t[2] = w1 * hz - w2 * hy, w2 * hx - w0 * hz, w0 * hy - w1 * hx
            t[3], t[4], t[5] = hy * v2 - hz * v1, hz * v0 - hx * v2, hx * v1 - hy * v0
        else:
            k = e - 4  # Ixx, Ixy, Iyy, Ixz, Iyz, Izz
            if k == 0:
                t[3] = w0
            elif k == 1:
                t[3], t[4] = w1, w0
            elif k == 2:
                t[4] = w1
            elif k == 3:
                t[3], t[5] = w2, w0
            elif k == 4:
                t[4], t[5] = w2, w1
            else:
                t[5] = w2
        if pass_ == 0:
            for r in range(6):
                out[r] = t[r]
        else:
            cross6(V, t, t2)
            for r in range(6):
                out[r] += t2[r]


@njit
def regressor_kernel(mi, mf, g, q, v, a, Y):
    """``Y`` (nv, 10·nbodies) with ``τ = Y π`` (zeroed on entry); status code."""
    st = check_q(mi, q)
    if st != OK:
        return st
    st = check_finite(v, BAD_V_FINITE)
    if st != OK:
        return st
    st = check_finite(a, BAD_A_FINITE)
    if st != OK:
        return st
    nb1 = mi.shape[0]
    xl = np.empty((nb1, 8))
    V = np.empty((nb1, 6))
    Vd = np.empty((nb1, 6))
    xj = np.empty(8)
    s = np.empty(6)
    t = np.empty(6)
    t2 = np.empty(6)
    w = np.empty(6)
    w2 = np.empty(6)
    for k in range(6):
        V[0, k] = 0.0
        Vd[0, k] = 0.0
    Vd[0, 3], Vd[0, 4], Vd[0, 5] = -g[0], -g[1], -g[2]
    for i in range(1, nb1):
        jt = mi[i, MI_JTYPE]
        ax = mf[i, MF_AXIS : MF_AXIS + 3]
        p = mi[i, MI_PARENT]
        joint_transform(jt, ax, mf[i, MF_PITCH], q, mi[i, MI_IQ], mf[i, MF_SCALE], mf[i, MF_OFFSET], xj)
        dq_mul(mf[i, MF_PLACEMENT : MF_PLACEMENT + 8], xj, xl[i])
        ad6_inv(xl[i], V[p], V[i])
        joint_velocity(jt, ax, mf[i, MF_PITCH], q, mi[i, MI_IQ], v, mi[i, MI_IV], mf[i, MF_SCALE], s)
        for r in range(6):
            V[i, r] += s[r]
        cross6(V[i], s, t)
        joint_velocity_bias(jt, q, mi[i, MI_IQ], v, mi[i, MI_IV], t2)
        ad6_inv(xl[i], Vd[p], Vd[i])
        joint_velocity(jt, ax, mf[i, MF_PITCH], q, mi[i, MI_IQ], a, mi[i, MI_IV], mf[i, MF_SCALE], s)
        for r in range(6):
            Vd[i, r] += s[r] + t[r] + t2[r]
    for i in range(1, nb1):
        for e in range(10):
            col = 10 * (i - 1) + e
            _unit_param_wrench(e, V[i], Vd[i], w, t, t2)
            b = i
            while b > 0:
                tb = mi[b, MI_JTYPE]
                axb = mf[b, MF_AXIS : MF_AXIS + 3]
                for k in range(joint_nv(tb)):
                    joint_column(tb, axb, mf[b, MF_PITCH], q, mi[b, MI_IQ], k, s)
                    Y[mi[b, MI_IV] + k, col] += mf[b, MF_SCALE] * power6(s, w)
                pb = mi[b, MI_PARENT]
                if pb > 0:
                    ad6(xl[b], w, w2)
                    for r in range(6):
                        w[r] = w2[r]
                b = pb
    return OK


@pjit
def regressor_batch(mi, mf, g, Q, V, A, Y, status):
    for n in nb.prange(Q.shape[0]):
        status[n] = regressor_kernel(mi, mf, g, Q[n], V[n], A[n], Y[n])


def inertial_parameters(model: Model) -> np.ndarray:
    """The (nbodies, 10) inertial parameters ``π`` (order :data:`INERTIAL_PARAMETERS`), inertia
    about the body origin, so that ``rnea = joint_torque_regressor(...) @ π.ravel()``."""
    m = np.asarray(model.mass[1:])
    c = np.asarray(model.com[1:])
    Ic = np.asarray(model.inertia[1:])
    h = m[:, None] * c
    Io = Ic + m[:, None, None] * ((c * c).sum(1)[:, None, None] * np.eye(3) - c[:, :, None] * c[:, None, :])
    return np.column_stack([m, h, Io[:, 0, 0], Io[:, 0, 1], Io[:, 1, 1], Io[:, 0, 2], Io[:, 1, 2], Io[:, 2, 2]])


def joint_torque_regressor(model: Model, q, v, a) -> np.ndarray:
    """``Y(q, v, a)`` (..., nv, 10·nbodies): ``τ = Y π`` with ``π = inertial_parameters(model).ravel()``.

    Column ``10 (i−1) + e`` is ``∂τ/∂π_{i,e}``: the derivative of inverse dynamics with respect to
    the inertial parameters of body ``i`` (the dynamics are linear in them).
    """
    Q, bq = as_vector_batch(q, model.nq, "q", "the configuration, model.nq entries")
    V, bv = as_vector_batch(v, model.nv, "v", "the velocity, model.nv entries")
    A, ba = as_vector_batch(a, model.nv, "a", "the acceleration, model.nv entries")
    (Q, V, A), batch = broadcast_batch([Q, V, A], [bq, bv, ba])
    N = Q.shape[0]
    Y = np.zeros((N, model.nv, 10 * model.nbodies))
    status = np.zeros(N, dtype=np.int64)
    regressor_batch(model.mi, model.mf, np.ascontiguousarray(model.gravity), Q, V, A, Y, status)
    st, row = first_bad(status)
    if st:
        raise_status(model, st, row if N > 1 else None)
    return Y.reshape(batch + Y.shape[1:])


__all__ += ["joint_torque_regressor", "inertial_parameters", "INERTIAL_PARAMETERS"]


def hybrid_dynamics_derivatives(model: Model, q, v, a, tau, prescribed, fext=None):
    """Derivatives of hybrid dynamics (seed 002 Table 7, rebuilt per the digest's errata §5.2).

    Hybrid dynamics maps the inputs ``u`` (``u[k] = a[k]`` for prescribed DoFs, ``tau[k]`` for
    the others) to the outputs ``y`` (``y[k] = τ[k]`` for prescribed DoFs, ``q̈[k]`` for the
    others).  Returns ``(∂y/∂q, ∂y/∂v, ∂y/∂u)``, each (..., nv, nv), from the inverse-dynamics
    derivatives at the hybrid solution: with ``P`` prescribed and ``F`` free DoFs,
    ``∂q̈_F/∂x = −M_FF⁻¹ ∂τ_F/∂x``, ``∂τ_P/∂x = ∂τ_P/∂x|_{q̈} + M_PF ∂q̈_F/∂x`` (x = q, v),
    ``∂q̈_F/∂a_P = −M_FF⁻¹ M_FP``, ``∂q̈_F/∂τ_F = M_FF⁻¹``, ``∂τ_P/∂a_P = M_PP + M_PF ∂q̈_F/∂a_P``,
    ``∂τ_P/∂τ_F = M_PF M_FF⁻¹``.
    """
    from .forward import hybrid_dynamics

    _no_mimic(model, "hybrid_dynamics_derivatives")
    P = np.asarray(prescribed, dtype=bool)
    qdd, _ = hybrid_dynamics(model, q, v, a, tau, P, fext=fext)
    dq, dv, M = rnea_derivatives(model, q, v, qdd, fext=fext)
    Fr = ~P
    nv = model.nv
    MFF = M[..., Fr, :][..., :, Fr]
    MPF = M[..., P, :][..., :, Fr]
    MFP = M[..., Fr, :][..., :, P]
    MPP = M[..., P, :][..., :, P]
    try:
        L = np.linalg.cholesky(MFF)
    except np.linalg.LinAlgError:
        raise SingularError("hybrid_dynamics_derivatives: the free-DoF block of M is singular") from None

    def solve(B):
        y = np.linalg.solve(L, B)
        return np.linalg.solve(np.swapaxes(L, -1, -2), y)

    out = []
    for D in (dq, dv):
        Y = np.zeros(D.shape)
        dF = -solve(D[..., Fr, :])
        Y[..., Fr, :] = dF
        Y[..., P, :] = D[..., P, :] + MPF @ dF
        out.append(Y)
    Yu = np.zeros(M.shape)
    eye = np.eye(int(Fr.sum()))
    MFFinv = solve(np.broadcast_to(eye, MFF.shape))
    dF_daP = -MFFinv @ MFP
    idxF, idxP = np.flatnonzero(Fr), np.flatnonzero(P)
    Yu[..., idxF[:, None], idxP[None, :]] = dF_daP
    Yu[..., idxF[:, None], idxF[None, :]] = MFFinv
    Yu[..., idxP[:, None], idxP[None, :]] = MPP + MPF @ dF_daP
    Yu[..., idxP[:, None], idxF[None, :]] = MPF @ MFFinv
    _ = nv
    return out[0], out[1], Yu


__all__ += ["hybrid_dynamics_derivatives"]
