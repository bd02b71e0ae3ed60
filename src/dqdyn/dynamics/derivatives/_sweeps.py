"""The world-frame sweeps shared by the derivative kernels
(`dqdyn.dynamics.derivatives.kernels`) and the constrained dynamics (`dynamics_sweep`).

The directional derivatives of [Kim2012, Table 5] (Kim's method, [Kim2012, §4.2]) are organised as
Carpentier & Mansard (2018, "Analytical derivatives of rigid body dynamics algorithms", RSS)
organise them: every quantity is carried in the **world frame** ``0``, where a joint's
perturbation moves its whole subtree rigidly, so all the columns come out of one forward and
one backward sweep (cost O(n·d), d the depth of the tree) instead of one sweep per column.

Notation (dual quaternion form, [Silva2022, §2]): twists ``ω + ε v`` (vec6 ``[ω, v]``), wrenches
``f + ε τ`` (``[f, τ]``), ``×`` the cross product of pure dual quaternions ([Silva2022, eq. (8)]; on a
twist it is Kim's ``ad``, on a wrench ``−ad*``), ``⟨S, F⟩`` the power pairing, ``Ad(x) ξ = x ξ x*``
[Silva2022, eq. (3)] for twists and wrenches alike.  Per body ``i`` with parent ``λ``:

forward (world frame, ``x_i = x_λ x_i^λ``):
  ``𝒮_i = Ad(x_i) S_i``                               (motion axes, one column per DoF)
  ``𝒱_i = 𝒱_λ + Ad(x_i) S_i q̇_i``                     (Table 5 line 2 mapped by ``Ad(x_i)``)
  ``𝒜_i = 𝒜_λ + 𝒱_i × Ad(x_i) S_i q̇_i + Ad(x_i)(S_i q̈_i + Ṡ_i q̇_i)``,  ``𝒜_0 = −g``
  per column ``k``:  ``∂𝒱/∂q_k:  Δv_k = 𝒱_λ × 𝒮_k``,
                     ``∂𝒜/∂q_k:  Δa_k = 𝒜_λ × 𝒮_k + 𝒱_λ × Δv_k``,
                     ``∂𝒜/∂q̇_k: Δw_k = (𝒱_λ + 𝒱_i) × 𝒮_k``
  body inertia ``ℐ_i = Ad(x_i) I_i Ad(x_i*)``, its rate ``ℐ̇_i = 𝒱_i × ℐ_i − ℐ_i 𝒱_i ×``,
  momentum ``h_i = ℐ_i 𝒱_i``, force ``f_i = ℐ_i 𝒜_i + 𝒱_i × h_i − Ad(x_i) F_i^ext``
backward (composites over the subtree, plain sums in the world frame):
  ``ℐ^c_i = Σ ℐ_k``, ``ℬ^c_i X = Σ (ℐ̇_k X + X × h_k)``, ``F_i = Σ f_k``
  ``∂F_i/∂q̈_k = ℐ^c_i 𝒮_k``,  ``∂F_i/∂q̇_k = ℐ^c_i Δw_k + ℬ^c_i 𝒮_k``,
  ``∂F_i/∂q_k = ℐ^c_i Δa_k + ℬ^c_i Δv_k (+ 𝒮_k × F_i on the ancestors' rows)``
  ``∂τ_j/∂p = ⟨𝒮_j, ∂F_i/∂p⟩`` for ``j`` on the support of ``i`` and, by the symmetry of
  ``ℐ^c`` and ``ℬ^c`` under the pairing, ``∂τ_i/∂q_j = ⟨Δa_j, ℐ^c_i 𝒮_i⟩ + ⟨Δv_j, ℬ^{cᵀ}_i 𝒮_i⟩``
  (``ℬ^{cᵀ} Y = Σ (ℐ̇_k Y − Y × h_k)``).

These are Table 5's lines summed over the subtree: a perturbation ``∂h_j = S_j^k`` of joint ``j``
(Corollary 2) moves every world quantity of ``j``'s subtree by ``𝒮_k ×`` (Lemma 3 / eq. 87, the
corrected eq. 88 of errata F9 for wrenches), which cancels against ``∂𝒮`` in ``∂τ = ⟨∂𝒮, F⟩ +
⟨𝒮, ∂F⟩``, except for what the rigid motion does not explain: the change ``Δv, Δa`` of the
velocity and acceleration the subtree receives from its parent.  The planar joint, whose body
axes ``S(φ)`` depend on its own angle, adds ``Ad(x_i) ∂(S q̇)/∂φ`` (and the acceleration
analogues) to ``Δv, Δa, Δw`` and ``⟨∂S/∂φ, F⟩`` to its own rows (Table 5's ``∂S_i``, ``∂Ṡ_i``).

"""

from __future__ import annotations

from dqdyn._engine.jit import kernel
from dqdyn._engine.views import view
from dqdyn.algebra._core import ad6, ad6_inv, cross6, dq_mul, power6
from dqdyn.dynamics.derivatives._inertia import (
    _b_apply,
    _inertia_apply,
    _inertia_rate,
    _planar_dS,
    _planar_terms,
    _world_inertia,
)
from dqdyn.dynamics.newton_euler import armature_diag
from dqdyn.multibody.joints import (
    PLANAR,
    joint_column,
    joint_nv,
    joint_transform,
    joint_velocity,
    joint_velocity_bias,
)
from dqdyn.multibody.model import (
    MF_AXIS,
    MF_GRAVITY,
    MF_OFFSET,
    MF_PITCH,
    MF_PLACEMENT,
    MF_SCALE,
    MI_IQ,
    MI_IV,
    MI_JTYPE,
    MI_NV,
    MI_PARENT,
)

# the O(n·d) kernels below: same numerics as the articulated-body kernels (aba.py, hybrid.py) (no NaN checks on division)
fjit = kernel(error_model="numpy", fastmath={"contract"})  # (FMA: single and batch may differ in the last bit)
ijit = kernel(inline="always", error_model="numpy")  # small helpers, inlined at the IR level


# =============================================================================== the sweeps
@fjit
def _ws_size(nb1, nv):
    return nb1 * (8 + 6 + 6 + 10 + 10 + 9 + 6 + 6 + 6) + nv * 8 * 6 + 64


@ijit
def _base_motion(mf, Vw, Aw):
    """``𝒱_0 = 0`` and, gravity as the base acceleration, ``𝒜_0 = −g`` (Kim's footnote 6)."""
    for r in range(6):
        Vw[0, r] = 0.0
        Aw[0, r] = 0.0
    Aw[0, 3] = -mf[0, MF_GRAVITY]
    Aw[0, 4] = -mf[0, MF_GRAVITY + 1]
    Aw[0, 5] = -mf[0, MF_GRAVITY + 2]


@ijit
def _body_pose(mi, mf, q, i, X, ax, xj, xl):
    """Body ``i``'s pose ``X[i] = X[λ] x_i^λ`` (module docstring, "forward"); a root body's
    pose is put at the origin of the world axes.  ``ax``: the joint's axis (``mf``'s row);
    ``xj``, ``xl``: 8 scratch floats each."""
    p = mi[i, MI_PARENT]
    joint_transform(mi[i, MI_JTYPE], ax, mf[i, MF_PITCH], q, mi[i, MI_IQ],
                    mf[i, MF_SCALE], mf[i, MF_OFFSET], xj)
    if p > 0:
        dq_mul(mf[i, MF_PLACEMENT : MF_PLACEMENT + 8], xj, xl)
        dq_mul(X[p], xl, X[i])
    else:  # a root body: the sweep's fixed frame is put at its origin (world axes), so
        # nothing depends on how far the robot is from the world origin (the derivatives
        # do not: they are the same in any fixed frame), and no precision is lost with it
        dq_mul(mf[i, MF_PLACEMENT : MF_PLACEMENT + 8], xj, X[i])
        X[i, 4] = X[i, 5] = X[i, 6] = X[i, 7] = 0.0


@ijit
def _body_motion(mi, mf, q, v, a, i, X, Vw, Aw, Sv, ax, sa, t, t2):
    """Body ``i``'s world twist ``𝒱_i = 𝒱_λ + Sv`` and acceleration ``𝒜_i = 𝒜_λ + 𝒱_i × Sv +
    Ad(x_i)(S q̈ + Ṡ q̇)`` (module docstring, "forward"), ``Sv = Ad(x_i) S q̇`` given.  An empty
    ``a``: ``q̈ = 0``.  ``ax``: the joint's axis (``mf``'s row).  ``sa``, ``t``, ``t2``: 6 scratch
    floats each, views made once by the caller (a view made here, per body, costs a
    reference-count pair).  Used by `dynamics_sweep`; `_forward_sweep` keeps these
    lines written out (through these helpers the derivative kernels measured 5–10 % slower)."""
    jt = mi[i, MI_JTYPE]
    p = mi[i, MI_PARENT]
    for r in range(6):
        Vw[i, r] = Vw[p, r] + Sv[r]
    if a.shape[0] == 0 and jt != PLANAR:  # q̈ = 0 and Ṡ q̇ = 0 (S moves with q for the planar joint only)
        cross6(Vw[i], Sv, t)
        for r in range(6):
            Aw[i, r] = Aw[p, r] + t[r]
        return
    iq = mi[i, MI_IQ]
    iv = mi[i, MI_IV]
    if a.shape[0] == 0:
        for r in range(6):
            sa[r] = 0.0
    else:
        joint_velocity(jt, ax, mf[i, MF_PITCH], q, iq, a, iv, mf[i, MF_SCALE], sa)
    joint_velocity_bias(jt, q, iq, v, iv, t)
    for r in range(6):
        sa[r] += t[r]
    ad6(X[i], sa, t2)
    cross6(Vw[i], Sv, t)
    for r in range(6):
        Aw[i, r] = Aw[p, r] + t[r] + t2[r]


@fjit
def _forward_sweep(mi, mf, q, v, a, fext, use_fext, X, Vw, Aw, Pb, Pc, Dc, Hc, Fb, Fc,
                   S, dVq, dAq, dAv, tmp):
    """World-frame forward sweep (module docstring, "forward")."""
    nb1 = mi.shape[0]
    xj = tmp[0:8]
    xl = tmp[8:16]
    sv = tmp[16:22]
    sa = tmp[22:28]
    t = tmp[28:34]
    t2 = tmp[34:40]
    Sv = tmp[40:46]
    p4 = tmp[46:50]
    for r in range(6):
        Vw[0, r] = 0.0
        Aw[0, r] = 0.0
    # gravity as the base acceleration 𝒜_0 = −g (Kim's footnote 6)
    Aw[0, 3] = -mf[0, MF_GRAVITY]
    Aw[0, 4] = -mf[0, MF_GRAVITY + 1]
    Aw[0, 5] = -mf[0, MF_GRAVITY + 2]
    for i in range(1, nb1):
        jt = mi[i, MI_JTYPE]
        p = mi[i, MI_PARENT]
        iq = mi[i, MI_IQ]
        iv = mi[i, MI_IV]
        ax = mf[i, MF_AXIS : MF_AXIS + 3]
        pitch = mf[i, MF_PITCH]
        scale = mf[i, MF_SCALE]
        joint_transform(jt, ax, pitch, q, iq, scale, mf[i, MF_OFFSET], xj)
        if p > 0:
            dq_mul(mf[i, MF_PLACEMENT : MF_PLACEMENT + 8], xj, xl)
            dq_mul(X[p], xl, X[i])
        else:  # a root body: the sweep's fixed frame is put at its origin (world axes), so
            # nothing depends on how far the robot is from the world origin (the derivatives
            # do not: they are the same in any fixed frame), and no precision is lost with it
            dq_mul(mf[i, MF_PLACEMENT : MF_PLACEMENT + 8], xj, X[i])
            X[i, 4] = X[i, 5] = X[i, 6] = X[i, 7] = 0.0
        x = X[i]
        # 𝒱_i = 𝒱_λ + Ad(x_i) S q̇ ;  𝒜_i = 𝒜_λ + 𝒱_i × Ad(x_i) S q̇ + Ad(x_i)(S q̈ + Ṡ q̇)
        joint_velocity(jt, ax, pitch, q, iq, v, iv, scale, sv)
        ad6(x, sv, Sv)
        joint_velocity(jt, ax, pitch, q, iq, a, iv, scale, sa)
        joint_velocity_bias(jt, q, iq, v, iv, t)
        for r in range(6):
            sa[r] += t[r]
        ad6(x, sa, t2)
        for r in range(6):
            Vw[i, r] = Vw[p, r] + Sv[r]
        cross6(Vw[i], Sv, t)
        for r in range(6):
            Aw[i, r] = Aw[p, r] + t[r] + t2[r]
        # motion axes 𝒮 and the column terms Δv, Δa, Δw
        Vp = Vw[p]
        Ap = Aw[p]
        for r in range(6):
            t2[r] = Vp[r] + Vw[i, r]
        for k in range(joint_nv(jt)):
            c = iv + k
            joint_column(jt, ax, pitch, q, iq, k, sv)
            ad6(x, sv, S[c])
            cross6(Vp, S[c], dVq[c])
            cross6(Ap, S[c], dAq[c])
            cross6(Vp, dVq[c], t)
            for r in range(6):
                dAq[c, r] += t[r]
            cross6(t2, S[c], dAv[c])
        if jt == PLANAR:
            # φ column: Δv += Ad(x) ∂(S q̇)/∂φ,  Δa += (𝒱_λ + 𝒱_i) × that + Ad(x) ∂(S q̈ + Ṡ q̇)/∂φ
            _planar_terms(q, iq, v, iv, a, 0, p4)
            for r in range(6):
                sv[r] = 0.0
                sa[r] = 0.0
            sv[3], sv[4] = p4[0], p4[1]
            sa[3], sa[4] = p4[2], p4[3]
            ad6(x, sv, Sv)
            ad6(x, sa, t)
            c = iv + 2
            for r in range(6):
                dVq[c, r] += Sv[r]
                dAq[c, r] += t[r]
            cross6(t2, Sv, t)
            for r in range(6):
                dAq[c, r] += t[r]
            # velocity columns: Δw += Ad(x) ∂(Ṡ q̇)/∂q̇_k
            for k in range(3):
                _planar_terms(q, iq, v, iv, a, 1 + k, p4)
                sv[3], sv[4] = p4[0], p4[1]
                ad6(x, sv, t)
                for r in range(6):
                    dAv[iv + k, r] += t[r]
        # inertia, its rate, momentum and force (world frame)
        _world_inertia(mf, i, x, Pb[i])
        for r in range(10):
            Pc[i, r] = Pb[i, r]
        _inertia_apply(Pb[i], Vw[i], Hc[i])
        _inertia_rate(Pb[i], Vw[i], Dc[i])
        _inertia_apply(Pb[i], Aw[i], Fb[i])
        cross6(Vw[i], Hc[i], t)
        for r in range(6):
            Fb[i, r] += t[r]
        if use_fext:
            ad6(x, fext[i], t)
            for r in range(6):
                Fb[i, r] -= t[r]
        for r in range(6):
            Fc[i, r] = Fb[i, r]


@ijit  # (inlined at the IR level: the batch and single-state kernels then contract the same FMAs)
def _mass_sweep(mi, Pc, S, Fa, M):
    """``M = ∂τ/∂q̈`` from the sweep's world-frame inertias (the CRBA in the frame of the
    derivative sweep; the ``∂F/∂q̈ = ℐ^c 𝒮`` of [Kim2012, §4.2]): ``Pc`` is accumulated over each
    subtree into the composite ``ℐ^c_i``, ``Fa_c = ℐ^c_i 𝒮_c`` and ``M_kc = ⟨𝒮_k, Fa_c⟩`` for
    ``k`` on the support of ``i`` (the derivative sweep then runs with ``composite_inertia``
    False and writes the same ``M`` again).  ``M`` must be zero outside the support pairs."""
    nb1 = mi.shape[0]
    for i in range(nb1 - 1, 0, -1):
        iv = mi[i, MI_IV]
        nvi = mi[i, MI_NV]
        P = Pc[i]
        for m in range(nvi):
            c = iv + m
            _inertia_apply(P, S[c], Fa[c])
            for k in range(nvi):
                M[iv + k, c] = power6(S[iv + k], Fa[c])
            p = mi[i, MI_PARENT]
            while p > 0:
                ivp = mi[p, MI_IV]
                for k in range(mi[p, MI_NV]):
                    val = power6(S[ivp + k], Fa[c])
                    M[ivp + k, c] = val
                    M[c, ivp + k] = val
                p = mi[p, MI_PARENT]
        p = mi[i, MI_PARENT]
        if p > 0:
            for r in range(10):
                Pc[p, r] += P[r]


@ijit  # (inlined: the derivative kernels contract its FMAs, dynamics_sweep's callers do not)
def _bias_sweep(mi, Fc, S, tau0):
    """Composite forces only: ``τ₀ = ⟨𝒮, F⟩`` (RNEA's backward pass; ``Fc`` is accumulated)."""
    nb1 = mi.shape[0]
    for i in range(nb1 - 1, 0, -1):
        iv = mi[i, MI_IV]
        for m in range(mi[i, MI_NV]):
            tau0[iv + m] = power6(S[iv + m], Fc[i])
        p = mi[i, MI_PARENT]
        if p > 0:
            for r in range(6):
                Fc[p, r] += Fc[i, r]


@ijit
def dynamics_sweep_size(nb1, nv):
    """Floats of `dynamics_sweep`'s scratch for ``nb1`` bodies (world included), ``nv``
    velocities."""
    return nb1 * (8 + 6 + 6 + 10 + 6) + nv * 12 + 46


@ijit
def dynamics_sweep(mi, mf, q, v, ws, M, h):
    """``M(q)`` and ``h(q, v) = τ(q, v, 0)`` (gravity included) in one world-frame sweep: the
    forward sweep of the module docstring at ``q̈ = 0`` without the derivative columns (pose,
    twist, bias acceleration, world inertia and force of each body), then the composite
    inertias' ``M_kc = ⟨𝒮_k, ℐ^c_i 𝒮_c⟩`` (`_mass_sweep`, [Kim2012, §4.2]) and the
    composite forces' ``h = ⟨𝒮, F⟩`` (`_bias_sweep`, RNEA's backward pass).  One forward
    kinematics for both (CRBA and RNEA each make their own).  It also leaves in ``ws``
    (`sweep_views`) what constraint rows read: poses ``X`` (each root body at the origin
    of the world axes), world motion axes ``S`` (one column per velocity), twists ``Vw`` and
    bias accelerations ``Aw`` (``Aw[0] = −g``: gravity is in every ``Aw[i]``).  Models without
    mimic joints (every body's ``S`` its own velocities); ``q`` and ``v`` are not checked here."""
    nb1 = mi.shape[0]
    nv = v.shape[0]
    X, S, Vw, Aw, Pc, Fc, Fa, tmp = sweep_views(ws, nb1, nv)
    a = tmp[46:46]  # (empty: q̈ = 0)
    xj, xl, sv, sa, t, t2, Sv = tmp[0:8], tmp[8:16], tmp[16:22], tmp[22:28], tmp[28:34], tmp[34:40], tmp[40:46]
    H = sa
    _base_motion(mf, Vw, Aw)
    for i in range(1, nb1):
        ax = mf[i, MF_AXIS : MF_AXIS + 3]
        _body_pose(mi, mf, q, i, X, ax, xj, xl)
        x = X[i]
        jt = mi[i, MI_JTYPE]
        iv = mi[i, MI_IV]
        for r in range(6):
            Sv[r] = 0.0
        for k in range(joint_nv(jt)):  # the axes 𝒮_c = Ad(x_i) S_c, and Ad(x_i) S q̇ = Σ 𝒮_c q̇_c
            c = iv + k
            joint_column(jt, ax, mf[i, MF_PITCH], q, mi[i, MI_IQ], k, sv)
            ad6(x, sv, S[c])
            w = v[c]
            for r in range(6):
                Sv[r] += S[c, r] * w
        _body_motion(mi, mf, q, v, a, i, X, Vw, Aw, Sv, ax, sa, t, t2)
        _world_inertia(mf, i, x, Pc[i])
        _inertia_apply(Pc[i], Vw[i], H)
        _inertia_apply(Pc[i], Aw[i], Fc[i])
        cross6(Vw[i], H, t)
        for r in range(6):
            Fc[i, r] += t[r]
    for r in range(nv):
        for c in range(nv):
            M[r, c] = 0.0
    _mass_sweep(mi, Pc, S, Fa, M)
    armature_diag(mi, mf, M)  # M += diag(armature) (Model.armature)
    _bias_sweep(mi, Fc, S, h)


@ijit
def sweep_views(ws, nb1, nv):
    """``X, S, Vw, Aw, Pc, Fc, Fa, tmp`` of `dynamics_sweep`'s scratch ``ws``."""
    X = view(ws, 0, (nb1, 8))
    o = 8 * nb1
    Vw = view(ws, o, (nb1, 6))
    Aw = view(ws, o + 6 * nb1, (nb1, 6))
    Fc = view(ws, o + 12 * nb1, (nb1, 6))
    Pc = view(ws, o + 18 * nb1, (nb1, 10))
    o += 28 * nb1
    S = view(ws, o, (nv, 6))
    Fa = view(ws, o + 6 * nv, (nv, 6))
    o += 12 * nv
    return X, S, Vw, Aw, Pc, Fc, Fa, ws[o:]



#: from this velocity index on, a 1-DoF body whose parent is the next body swept and 1-DoF too
#: has its column swept over the ancestors together with its parent's (`_derivative_sweep`):
#: on long chains 12-17 % less time (the ancestors' column entries are written two adjacent
#: numbers at a time), on 6-9-DoF arms nothing to gain (their paths are short)
PAIR_FROM = 12


@ijit
def _to_parent(mi, Pc, Dc, Hc, Fc, i, composite_inertia):
    """Body ``i``'s composites into its parent's (plain sums in the world frame); ``ℐ^c`` only
    when ``composite_inertia``."""
    p = mi[i, MI_PARENT]
    if p > 0:
        if composite_inertia:
            for r in range(10):
                Pc[p, r] += Pc[i, r]
        for r in range(9):
            Dc[p, r] += Dc[i, r]
        for r in range(6):
            Hc[p, r] += Hc[i, r]
            Fc[p, r] += Fc[i, r]


@fjit
def _derivative_sweep(mi, q, X, Pc, Dc, Hc, Fc, S, dVq, dAq, dAv, Fa, Fv, Fq, BT,
                      dq, dv, M, composite_inertia, tmp):
    """World-frame backward sweep (module docstring, "backward"): fills ``dq``, ``dv``, ``M``.

    ``composite_inertia``: accumulate ``ℐ^c`` here (False when `_mass_sweep` did).
    From ``PAIR_FROM`` on, a 1-DoF body whose parent comes next and is 1-DoF (each link of a
    chain) is ``held``: its column meets the ancestors in its parent's pass, with the parent's
    column (the same numbers, the same order of operations: the same bits)."""
    nb1 = mi.shape[0]
    t = tmp[0:6]
    t2 = tmp[6:12]
    s = tmp[12:18]
    held = -1
    for i in range(nb1 - 1, 0, -1):
        jt = mi[i, MI_JTYPE]
        iv = mi[i, MI_IV]
        nvi = joint_nv(jt)
        P = Pc[i]
        D = Dc[i]
        H = Hc[i]
        for m in range(nvi):
            c = iv + m
            # ∂F/∂q̈ = ℐ 𝒮,  ∂F/∂q̇ = ℐ Δw + ℬ 𝒮,  ∂F/∂q = ℐ Δa + ℬ Δv,  ℬᵀ 𝒮
            _inertia_apply(P, S[c], Fa[c])
            _inertia_apply(P, dAv[c], t)
            _b_apply(D, H, S[c], 1.0, t2)
            for r in range(6):
                Fv[c, r] = t[r] + t2[r]
            _inertia_apply(P, dAq[c], t)
            _b_apply(D, H, dVq[c], 1.0, t2)
            for r in range(6):
                Fq[c, r] = t[r] + t2[r]
            _b_apply(D, H, S[c], -1.0, BT[c])
        # the joint's own block (∂𝒮_k/∂q_m = 𝒮_m × 𝒮_k cancels 𝒮_m × F_i)
        for k in range(nvi):
            Sk = S[iv + k]
            for m in range(nvi):
                c = iv + m
                M[iv + k, c] = power6(Sk, Fa[c])
                dv[iv + k, c] = power6(Sk, Fv[c])
                dq[iv + k, c] = power6(Sk, Fq[c])
        if jt == PLANAR:
            # ⟨∂S_k/∂φ, F_i⟩ (body frame)
            ad6_inv(X[i], Fc[i], t)
            for k in range(2):
                _planar_dS(q, mi[i, MI_IQ], k, s)
                dq[iv + k, iv + 2] += power6(s, t)
        for m in range(nvi):
            c = iv + m
            cross6(S[c], Fc[i], t)
            for r in range(6):
                Fq[c, r] += t[r]
        # the support of i: rows of the ancestors (their 𝒮 on ∂F_i) and columns of the ancestors
        # (∂τ_i/∂q_a = ⟨Δa_a, ℐ 𝒮_i⟩ + ⟨Δv_a, ℬᵀ 𝒮_i⟩, ∂τ_i/∂q̇_a = ⟨Δw_a, ℐ 𝒮_i⟩ + ⟨𝒮_a, ℬᵀ 𝒮_i⟩)
        # (column by column: the 24 numbers of column c stay in registers over the ancestors)
        if held >= 0:  # (i is the parent of body `held`, whose column waits for this one's)
            c = iv
            c1 = mi[held, MI_IV]
            fa0, fa1, fa2, fa3, fa4, fa5 = Fa[c, 0], Fa[c, 1], Fa[c, 2], Fa[c, 3], Fa[c, 4], Fa[c, 5]
            fv0, fv1, fv2, fv3, fv4, fv5 = Fv[c, 0], Fv[c, 1], Fv[c, 2], Fv[c, 3], Fv[c, 4], Fv[c, 5]
            fq0, fq1, fq2, fq3, fq4, fq5 = Fq[c, 0], Fq[c, 1], Fq[c, 2], Fq[c, 3], Fq[c, 4], Fq[c, 5]
            b0, b1, b2, b3, b4, b5 = BT[c, 0], BT[c, 1], BT[c, 2], BT[c, 3], BT[c, 4], BT[c, 5]
            ga0, ga1, ga2, ga3, ga4, ga5 = Fa[c1, 0], Fa[c1, 1], Fa[c1, 2], Fa[c1, 3], Fa[c1, 4], Fa[c1, 5]
            gv0, gv1, gv2, gv3, gv4, gv5 = Fv[c1, 0], Fv[c1, 1], Fv[c1, 2], Fv[c1, 3], Fv[c1, 4], Fv[c1, 5]
            gq0, gq1, gq2, gq3, gq4, gq5 = Fq[c1, 0], Fq[c1, 1], Fq[c1, 2], Fq[c1, 3], Fq[c1, 4], Fq[c1, 5]
            e0, e1, e2, e3, e4, e5 = BT[c1, 0], BT[c1, 1], BT[c1, 2], BT[c1, 3], BT[c1, 4], BT[c1, 5]
            # the held column against this body's own column (written out like the loops below:
            # the same entries through a helper on array rows, or this entry as a branch in the
            # loop below, measured 30-45 % slower on 50-200-link chains)
            ca = c
            s0, s1, s2, s3, s4, s5 = S[ca, 0], S[ca, 1], S[ca, 2], S[ca, 3], S[ca, 4], S[ca, 5]
            val = s0 * ga3 + s1 * ga4 + s2 * ga5 + s3 * ga0 + s4 * ga1 + s5 * ga2
            M[ca, c1] = val
            M[c1, ca] = val
            dv[ca, c1] = s0 * gv3 + s1 * gv4 + s2 * gv5 + s3 * gv0 + s4 * gv1 + s5 * gv2
            dq[ca, c1] = s0 * gq3 + s1 * gq4 + s2 * gq5 + s3 * gq0 + s4 * gq1 + s5 * gq2
            w = dAv[ca]
            dv[c1, ca] = ((w[0] * ga3 + w[1] * ga4 + w[2] * ga5 + w[3] * ga0 + w[4] * ga1 + w[5] * ga2)
                          + (s0 * e3 + s1 * e4 + s2 * e5 + s3 * e0 + s4 * e1 + s5 * e2))
            w = dAq[ca]
            u = dVq[ca]
            dq[c1, ca] = ((w[0] * ga3 + w[1] * ga4 + w[2] * ga5 + w[3] * ga0 + w[4] * ga1 + w[5] * ga2)
                          + (u[0] * e3 + u[1] * e4 + u[2] * e5 + u[3] * e0 + u[4] * e1 + u[5] * e2))
            # both columns against the ancestors: adjacent column entries, one cache line
            p = mi[i, MI_PARENT]
            while p > 0:
                ivp = mi[p, MI_IV]
                for k in range(mi[p, MI_NV]):
                    ca = ivp + k
                    s0, s1, s2, s3, s4, s5 = S[ca, 0], S[ca, 1], S[ca, 2], S[ca, 3], S[ca, 4], S[ca, 5]
                    val = s0 * fa3 + s1 * fa4 + s2 * fa5 + s3 * fa0 + s4 * fa1 + s5 * fa2
                    M[ca, c] = val
                    M[c, ca] = val
                    val = s0 * ga3 + s1 * ga4 + s2 * ga5 + s3 * ga0 + s4 * ga1 + s5 * ga2
                    M[ca, c1] = val
                    M[c1, ca] = val
                    dv[ca, c] = s0 * fv3 + s1 * fv4 + s2 * fv5 + s3 * fv0 + s4 * fv1 + s5 * fv2
                    dv[ca, c1] = s0 * gv3 + s1 * gv4 + s2 * gv5 + s3 * gv0 + s4 * gv1 + s5 * gv2
                    dq[ca, c] = s0 * fq3 + s1 * fq4 + s2 * fq5 + s3 * fq0 + s4 * fq1 + s5 * fq2
                    dq[ca, c1] = s0 * gq3 + s1 * gq4 + s2 * gq5 + s3 * gq0 + s4 * gq1 + s5 * gq2
                    w = dAv[ca]
                    dv[c, ca] = ((w[0] * fa3 + w[1] * fa4 + w[2] * fa5 + w[3] * fa0 + w[4] * fa1 + w[5] * fa2)
                                 + (s0 * b3 + s1 * b4 + s2 * b5 + s3 * b0 + s4 * b1 + s5 * b2))
                    dv[c1, ca] = ((w[0] * ga3 + w[1] * ga4 + w[2] * ga5 + w[3] * ga0 + w[4] * ga1 + w[5] * ga2)
                                  + (s0 * e3 + s1 * e4 + s2 * e5 + s3 * e0 + s4 * e1 + s5 * e2))
                    w = dAq[ca]
                    u = dVq[ca]
                    dq[c, ca] = ((w[0] * fa3 + w[1] * fa4 + w[2] * fa5 + w[3] * fa0 + w[4] * fa1 + w[5] * fa2)
                                 + (u[0] * b3 + u[1] * b4 + u[2] * b5 + u[3] * b0 + u[4] * b1 + u[5] * b2))
                    dq[c1, ca] = ((w[0] * ga3 + w[1] * ga4 + w[2] * ga5 + w[3] * ga0 + w[4] * ga1 + w[5] * ga2)
                                  + (u[0] * e3 + u[1] * e4 + u[2] * e5 + u[3] * e0 + u[4] * e1 + u[5] * e2))
                p = mi[p, MI_PARENT]
            held = -1
            own = 0  # (this body's column is done)
        elif nvi == 1 and iv >= PAIR_FROM and mi[i, MI_PARENT] == i - 1 and mi[i - 1, MI_NV] == 1:
            held = i  # its column waits for its parent's, the next body swept
            own = 0
        else:
            own = nvi
        for m in range(own):
            c = iv + m
            fa0, fa1, fa2, fa3, fa4, fa5 = Fa[c, 0], Fa[c, 1], Fa[c, 2], Fa[c, 3], Fa[c, 4], Fa[c, 5]
            fv0, fv1, fv2, fv3, fv4, fv5 = Fv[c, 0], Fv[c, 1], Fv[c, 2], Fv[c, 3], Fv[c, 4], Fv[c, 5]
            fq0, fq1, fq2, fq3, fq4, fq5 = Fq[c, 0], Fq[c, 1], Fq[c, 2], Fq[c, 3], Fq[c, 4], Fq[c, 5]
            b0, b1, b2, b3, b4, b5 = BT[c, 0], BT[c, 1], BT[c, 2], BT[c, 3], BT[c, 4], BT[c, 5]
            p = mi[i, MI_PARENT]
            while p > 0:
                ivp = mi[p, MI_IV]
                for k in range(mi[p, MI_NV]):
                    ca = ivp + k
                    s0, s1, s2, s3, s4, s5 = S[ca, 0], S[ca, 1], S[ca, 2], S[ca, 3], S[ca, 4], S[ca, 5]
                    val = s0 * fa3 + s1 * fa4 + s2 * fa5 + s3 * fa0 + s4 * fa1 + s5 * fa2
                    M[ca, c] = val
                    M[c, ca] = val
                    dv[ca, c] = s0 * fv3 + s1 * fv4 + s2 * fv5 + s3 * fv0 + s4 * fv1 + s5 * fv2
                    dq[ca, c] = s0 * fq3 + s1 * fq4 + s2 * fq5 + s3 * fq0 + s4 * fq1 + s5 * fq2
                    w = dAv[ca]
                    dv[c, ca] = ((w[0] * fa3 + w[1] * fa4 + w[2] * fa5 + w[3] * fa0 + w[4] * fa1 + w[5] * fa2)
                                 + (s0 * b3 + s1 * b4 + s2 * b5 + s3 * b0 + s4 * b1 + s5 * b2))
                    w = dAq[ca]
                    u = dVq[ca]
                    dq[c, ca] = ((w[0] * fa3 + w[1] * fa4 + w[2] * fa5 + w[3] * fa0 + w[4] * fa1 + w[5] * fa2)
                                 + (u[0] * b3 + u[1] * b4 + u[2] * b5 + u[3] * b0 + u[4] * b1 + u[5] * b2))
                p = mi[p, MI_PARENT]
        _to_parent(mi, Pc, Dc, Hc, Fc, i, composite_inertia)


@fjit
def base_rows_sweep(mi, Pc, Dc, Hc, Fc, Vw, S, dVq, dAq, dAv, W, tmp):
    """The rows of a single root's six coordinates in `_derivative_sweep`, as wrenches and
    without visiting any ancestor (cost O(n)): for each velocity coordinate ``c`` of body ``i``,

    * ``W[0, c] = ∂F/∂q_c = ℐ^c_i Δa_c + ℬ^c_i Δv_c + 𝒮_c × F_i``,
    * ``W[1, c] = ∂F/∂q̇_c = ℐ^c_i Δw_c + ℬ^c_i 𝒮_c``,
    * ``W[2, c] = ℐ^c_i 𝒮_c`` (a column of those rows of ``M``),
    * ``W[3, c] = d(ℐ^c_i 𝒮_c)/dt = ℐ̇^c_i 𝒮_c + ℐ^c_i (𝒱_i × 𝒮_c)`` (of ``Ṁ``; ``𝒮̇ = 𝒱_i × 𝒮``),

    each ``[f, τ]`` in the sweep's world frame, with the composites summed to the root (whose
    ``Pc``, ``Dc``, ``Hc``, ``Fc`` hold the whole tree's after the sweep).  The force ``F`` of a
    free body mounted under the root, at rest at the sweep's origin, is the wrench its joint
    exerts: these are its rows of ``∂τ/∂q``, ``∂τ/∂v``, ``M`` and ``Ṁ``.  Joints whose body-frame
    axes are constant (every joint but the planar one).  ``tmp``: 24 scratch floats."""
    nb1 = mi.shape[0]
    t = tmp[0:6]
    t2 = tmp[6:12]
    s = tmp[12:18]
    z = tmp[18:24]
    for r in range(6):
        z[r] = 0.0
    for i in range(nb1 - 1, 0, -1):
        iv = mi[i, MI_IV]
        P = Pc[i]
        D = Dc[i]
        H = Hc[i]
        for m in range(mi[i, MI_NV]):
            c = iv + m
            Sc = S[c]
            _inertia_apply(P, dAq[c], t)
            _b_apply(D, H, dVq[c], 1.0, t2)
            cross6(Sc, Fc[i], s)
            for r in range(6):
                W[0, c, r] = t[r] + t2[r] + s[r]
            _inertia_apply(P, dAv[c], t)
            _b_apply(D, H, Sc, 1.0, t2)
            for r in range(6):
                W[1, c, r] = t[r] + t2[r]
            _inertia_apply(P, Sc, W[2, c])
            _b_apply(D, z, Sc, 1.0, t)
            cross6(Vw[i], Sc, t2)
            _inertia_apply(P, t2, s)
            for r in range(6):
                W[3, c, r] = t[r] + s[r]
        _to_parent(mi, Pc, Dc, Hc, Fc, i, bool(True))


@fjit
def _zero(A):
    for r in range(A.shape[0]):
        for c in range(A.shape[1]):
            A[r, c] = 0.0


@fjit
def _carve(ws, nb1, nv):
    o = 0
    X = view(ws, o, (nb1, 8))
    o += nb1 * 8
    Vw = view(ws, o, (nb1, 6))
    o += nb1 * 6
    Aw = view(ws, o, (nb1, 6))
    o += nb1 * 6
    Pb = view(ws, o, (nb1, 10))
    o += nb1 * 10
    Pc = view(ws, o, (nb1, 10))
    o += nb1 * 10
    Dc = view(ws, o, (nb1, 9))
    o += nb1 * 9
    Hc = view(ws, o, (nb1, 6))
    o += nb1 * 6
    Fb = view(ws, o, (nb1, 6))
    o += nb1 * 6
    Fc = view(ws, o, (nb1, 6))
    o += nb1 * 6
    cols = view(ws, o, (8, nv, 6))
    o += nv * 48
    tmp = ws[o : o + 64]
    return X, Vw, Aw, Pb, Pc, Dc, Hc, Fb, Fc, cols, tmp
