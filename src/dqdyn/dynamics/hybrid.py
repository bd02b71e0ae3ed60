"""Hybrid dynamics in O(n) [Kim2012, Table 4]: the articulated-body sweep with a per-DoF split.

The columns of ``S_i`` are split into prescribed ones (known ``q̈``; their τ is computed from
``F_i = Î_i V̇_i + B̂_i``) and free ones (known τ; their ``q̈`` is computed); the split may be per
degree of freedom, not only per joint.  With no DoF prescribed this is the ABA of `aba`
(which calls `hybrid_kernel`); with all prescribed it is inverse dynamics.  The recursion
and its notation are in `aba`'s docstring; the shared pieces in `articulated`.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from dqdyn._engine.batching import for_batch
from dqdyn._engine.boundary import (
    BAD_SHAPE,
    BAD_TAU_FINITE,
    ND,
    OK,
    as_vector_batch,
    broadcast_batch,
    check_state,
    first_bad,
)
from dqdyn._engine.checks import not_a_model
from dqdyn._engine.gate import T_MF, T_MI, T_V, armed_call
from dqdyn._engine.linalg import chol_solve
from dqdyn.dynamics.articulated import (  # (and the decorators of the articulated-body kernels)
    K_A,
    K_C,
    K_COLS,
    K_I,
    K_L,
    K_PA,
    K_S,
    K_U,
    K_UU,
    K_V,
    SC_AX,
    SC_FREE,
    SC_IA,
    SC_S,
    SC_SOL,
    SC_T,
    SC_UU,
    SC_XJ,
    SC_XL,
    SINGULAR,
    TINY_PIVOT,
    _axis6,
    _body_pose,
    _fext_in,
    _free_factor,
    _generic_factor,
    _ia_apply,
    _inertia_to_parent,
    _one_dof,
    _pi_1dof,
    _pi_generic,
    _raise,
    _reject_mimic,
    _rigid_inertia,
    _twist_from_parent,
    _wrench_to_parent,
    ijit,
    njit,
    pjit,
    workspace_size,
    workspace_size_nb,
)
from dqdyn.errors import ShapeError
from dqdyn.multibody.joints import (
    FREE,
    joint_nv,
    joint_velocity,
    joint_velocity_bias,
)
from dqdyn.multibody.model import (
    MF_ARMATURE,
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
    MI_PARENT,
    Model,
)


@ijit
def _velocity_pass(mi, mf, q, v, tau, fext, use_fext, presc, has_presc, qdd_in, qdd, tau_out, W, sc):
    """Table 4, forward pass: body poses, twists ``V_i = Ad(x_i^λ*) V_λ + S_i q̇_i``, ``η_i`` and the
    rigid inertias and bias wrenches ``B_i = V_i × (I_i V_i) − F_i^ext``."""
    nb1 = mi.shape[0]
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


@ijit
def _inertia_pass(mi, mf, q, v, tau, fext, use_fext, presc, has_presc, qdd_in, qdd, tau_out, W, sc):
    """Table 4, backward pass: articulated inertias ``Î_i``, bias wrenches ``B̂_i``, ``Π_i`` and ``β_i``
    passed to the parent; returns a status code (``SINGULAR + i`` when ``D_i`` is singular)."""
    nb1 = mi.shape[0]
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
            # D = Sᵀ Î S + armature [Featherstone2008, §7.3] (the rotor's inertia: Model.armature)
            D = s0 * U0 + s1 * U1 + s2 * U2 + s3 * U3 + s4 * U4 + s5 * U5 + mf[i, MF_ARMATURE]
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
            if jt == FREE and not has_presc:  # S = 1 in the body's frame
                st = _free_factor(mf, i, tau, iv, W)
                nf = int(6)
            else:
                st, nf = _generic_factor(mi, mf, i, q, W, sc, has_presc, presc, qdd_in, tau, iv,
                                         jt, False)
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
    return OK


@ijit
def _acceleration_pass(mi, mf, q, v, tau, fext, use_fext, presc, has_presc, qdd_in, qdd, tau_out, W, sc):
    """Table 4, second forward pass: ``q̈_i`` of the free DoFs, ``τ_i`` of the prescribed ones, ``V̇_i``."""
    nb1 = mi.shape[0]
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
        elif jt == FREE and not has_presc:  # (`_free_factor`) V̇ = a' + q̈, S = 1
            uu = sc[SC_UU : SC_UU + 6]
            sol = sc[SC_SOL : SC_SOL + 6]
            for a in range(6):
                uu[a] = W[i, K_UU + a] - (W[i, K_U + 6 * a] * a0 + W[i, K_U + 6 * a + 1] * a1
                                          + W[i, K_U + 6 * a + 2] * a2 + W[i, K_U + 6 * a + 3] * a3
                                          + W[i, K_U + 6 * a + 4] * a4 + W[i, K_U + 6 * a + 5] * a5)
            chol_solve(W[i, K_L : K_L + 36].reshape((6, 6)), int(6), uu, sol)
            for a in range(6):
                qdd[iv + a] = sol[a]
                tau_out[iv + a] = tau[iv + a]
            a0 += sol[0]
            a1 += sol[1]
            a2 += sol[2]
            a3 += sol[3]
            a4 += sol[4]
            a5 += sol[5]
        else:
            nvj = joint_nv(jt)
            nf = int(0)  # (int64 from the start: see dqdyn._engine.jit, "Literals")
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
                                           + W[i, so + 5] * F5
                                           + mf[i, MF_ARMATURE + k] * qdd_in[iv + k])
                        qdd[iv + k] = qdd_in[iv + k]
        W[i, K_A], W[i, K_A + 1], W[i, K_A + 2] = a0, a1, a2
        W[i, K_A + 3], W[i, K_A + 4], W[i, K_A + 5] = a3, a4, a5
    return OK


@njit
def hybrid_kernel(mi, mf, q, v, tau, fext, use_fext, presc, qdd_in, qdd, tau_out, ws):
    """Hybrid dynamics [Kim2012, Table 4]; with no prescribed DoF it is the ABA (Table 3).

    ``presc[k] != 0`` marks DoF ``k`` as acceleration-prescribed (``qdd_in[k]`` given,
    ``tau_out[k]`` computed); the others take ``tau[k]`` and get ``qdd[k]``.  ``presc`` (and
    ``qdd_in``) of length 0 mean "nothing prescribed".  Gravity is read from the world row of
    ``mf``.  ``ws`` is flat scratch of `workspace_size` floats.  Returns a status code.

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

    _velocity_pass(mi, mf, q, v, tau, fext, use_fext, presc, has_presc, qdd_in, qdd, tau_out, W, sc)
    st = _inertia_pass(mi, mf, q, v, tau, fext, use_fext, presc, has_presc, qdd_in, qdd, tau_out, W, sc)
    if st != OK:
        return st
    return _acceleration_pass(mi, mf, q, v, tau, fext, use_fext, presc, has_presc, qdd_in, qdd, tau_out,
                              W, sc)


@njit
def hybrid_entry(mi, mf, q, v, a, tau, presc, qdd, tau_out):
    """Single-state fast path of `hybrid_dynamics` (no fext)."""
    nv = mi[0, MI_IV]
    if (q.shape[0] != mi[0, MI_IQ] or v.shape[0] != nv or a.shape[0] != nv or tau.shape[0] != nv
            or presc.shape[0] != nv):
        return BAD_SHAPE
    ws = np.empty(workspace_size_nb(mi.shape[0], nv))
    return hybrid_kernel(mi, mf, q, v, tau, ws[0:0].reshape((0, 6)), bool(False), presc, a, qdd,
                         tau_out, ws)


_HYBRID = None  # hybrid_entry, armed on first use (gate.armed_call)
HYBRID_SIG = (T_MI, T_MF, T_V, T_V, T_V, T_V, T_V, T_V, T_V)


@pjit
def hybrid_batch(mi, mf, Q, V, TAU, FEXT, use_fext, presc, QDD_IN, QDD, TAU_OUT, status):
    nb1 = mi.shape[0]
    nv = V.shape[1]
    for n in nb.prange(Q.shape[0]):
        ws = np.empty(workspace_size_nb(nb1, nv))
        fe = FEXT[n] if use_fext else FEXT[0]
        status[n] = hybrid_kernel(mi, mf, Q[n], V[n], TAU[n], fe, use_fext, presc, QDD_IN[n],
                                  QDD[n], TAU_OUT[n], ws)


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
        for_batch(hybrid_batch, N, model.mi.shape[0])(model.mi, model.mf, Q, Vv, T, F, use_fext, presc, A, QDD, TAU, status)
    st, row = first_bad(status)
    if st:
        _raise(model, st, row if N > 1 else None)
    return QDD.reshape(batch + (model.nv,)), TAU.reshape(batch + (model.nv,))


def hybrid_dynamics(model: Model, q, v, a, tau, prescribed, fext=None):
    """Hybrid dynamics [Kim2012, Table 4]: returns ``(q̈, τ)``, each (..., nv).

    ``prescribed`` (nv booleans) marks the DoFs whose acceleration is given (taken from ``a``;
    their τ is computed); the other DoFs take their force from ``tau`` and get their acceleration.
    All prescribed gives ``rnea``; none gives ``aba``.  The split may be per DoF (a multi-DoF joint
    may mix prescribed and free coordinates).
    """
    try:
        model.mi  # noqa: B018  (AttributeError: not a Model)
    except AttributeError:
        raise not_a_model(model) from None
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
