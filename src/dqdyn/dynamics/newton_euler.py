"""Inverse dynamics: the dual quaternion Newton–Euler algorithm (dqNE), compiled.

The recursion is the one of [Silva2022, §3, eqs. (16)–(30)]
and of [Silva2022thesis, §4.2, Algorithms 4.1–4.4], extended to trees by
[Silva2022thesis, §4.3, eqs. (4.38)–(4.39)] and to every joint type by the power pairing of the joint wrench with the
joint's motion axes (generalizing [Silva2022, §3.2.1, eq. (30)] beyond prismatic and revolute
joints).  Each body ``i`` carries a CoM frame
``F_{c_i}`` (body axes, origin at the CoM); ``λ = λ(i)`` is its parent, ``F_{J_i}`` the frame
of joint ``i`` (fixed in the parent: the papers' ``F_{j_{i−1}}``, in which the joint axis is
constant).

Forward recursion, ``i = 1 … n`` (``ξ_{0,c_0} = ξ̇_{0,c_0} = 0``, ``g^{c_0} = g``)::

    x_{c_i}^{c_λ} = x_{c_λ}^{λ*} · x_{J_i}^{λ} · x_J(q_i) · x_{c_i}^{i}     [Silva2022, §3.1.1]
    ξ_J          = Ad(x_i^{c_i}) (S_i v_i)                 joint twist at the CoM (Table 1)
    ξ_i          = Ad(x_{c_λ}^{c_i}) ξ_λ + ξ_J                                          (19)
    ξ̇_i          = Ad(x_{c_λ}^{c_i}) ξ̇_λ + Ad(x_i^{c_i}) (S_i a_i + Ṡ_i v_i)
                   + ξ_{c_i,c_λ}^{c_i} × Ad(x_{c_λ}^{c_i}) ξ_λ,                       (20)
                   with ξ_{c_i,c_λ}^{c_i} = −ξ_J                                        (21)
    g^{c_i}      = Ad(r_{c_λ}^{c_i}) g^{c_λ}                gravity in F_{c_i}

Backward recursion, ``i = n … 1`` (``ζ_i`` starts at zero; children add into their parent)::

    f_i  = m_i (D(ξ̇_i) + P(ξ_i) × D(ξ_i))                                             (25)
    τ_i  = L3(𝕀_i) P(ξ̇_i) + P(ξ_i) × L3(𝕀_i) P(ξ_i)                                   (26)
    ζ_i += f_i + ε τ_i − m_i g^{c_i} − Ad(x_i^{c_i}) ζ_i^ext                            (24)
    Q_k  = ⟨Ad(x_i^{c_i}) S_{i,k}, ζ_i⟩   (power pairing ⟨ω,τ⟩ + ⟨v,f⟩)                 (30)
    ζ_λ += Ad(x_{c_i}^{c_λ}) ζ_i                                              (29), (4.39)

``ζ_i`` is the wrench that joint ``i`` transmits to body ``i`` (the subtree's total), at the CoM
of body ``i`` in its axes; the papers' joint wrench is ``Γ_i = ζ_{0,i}^{i−1} = Ad(x_{c_i}^{J_i})
ζ_i`` (eq. 29 written from joint frame to joint frame), which `newton_euler` returns.
The projection (30) is the same in either frame because the power pairing is invariant under
``Ad``.  ``Ṡ v`` is non-zero only for the planar joint (whose body-frame axes turn with φ).

Conventions (README "Conventions"): twists vec6 ``[ω, v]``, wrenches vec6 ``[f, τ]``; ``v`` and
``a`` follow the joint layouts of `dqdyn.multibody.joints` (free joint: body twist and its
time derivative; planar: ``(ẋ, ẏ, φ̇)``).  External wrenches ``fext`` (..., nbodies+1, 6) are
applied **to** body ``i`` by the environment, as ``[f, τ]`` expressed in the body frame ``F_i``
at its origin (Pinocchio's ``fext`` convention; row 0, the world, is ignored); they enter
``τ = … − Jᵀ fext``.

Mimic joints (``nv = 0``) read their master's velocity and acceleration scaled, and their
projections are added (scaled) into the master's entry of ``τ``.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numba as nb
import numpy as np

from dqdyn._engine.batching import BLOCKS, run_chunked
from dqdyn._engine.boundary import (
    BAD_A_FINITE,
    BAD_OVERFLOW,
    BAD_SHAPE,
    ND,
    OK,
    as_vector_batch,
    check_state,
    kernel_rows,
    lazy_batch,
    out_batch,
    raise_status,
)
from dqdyn._engine.checks import not_a_model
from dqdyn._engine.gate import (
    NV,
    T_MF,
    T_MI,
    T_V,
    armed_call,
    fast_front,
    flat_workspace,
    gate_entry,
    gate_tables,
    gate_vector,
)
from dqdyn._engine.jit import kernel
from dqdyn._engine.views import unmanaged
from dqdyn.algebra._core import ad6, jit
from dqdyn.dynamics.lanes import LANES, lanes_support, rnea_lanes_batch
from dqdyn.dynamics.poses import com_pose, joint_pose, joint_twist, rotation_matrix
from dqdyn.errors import ShapeError
from dqdyn.multibody.joints import (
    HELICAL,
    PLANAR,
    PRISMATIC,
    REVOLUTE,
    joint_column,
    joint_nv,
    joint_transform,
    joint_velocity_bias,
)
from dqdyn.multibody.model import (
    MF_ARMATURE,
    MF_AXIS,
    MF_COM,
    MF_GRAVITY,
    MF_INERTIA,
    MF_MASS,
    MF_OFFSET,
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

# workspace columns, one row per body (plus NSCRATCH scratch rows at the end)
W_R = 0  # matrix of Ad(r), r the rotation of x_{c_i}^{c_λ} (9, row-major: F_{c_i} → F_{c_λ})
W_P = 9  # position of c_i in F_{c_λ}: the translation of x_{c_i}^{c_λ} (3)
W_XI = 12  # ξ_{0,c_i}^{c_i}: CoM twist (6)
W_XID = 18  # ξ̇_{0,c_i}^{c_i}: its time derivative (6)
W_ZETA = 24  # ζ_i: wrench transmitted by joint i, at the CoM of body i, in F_{c_i} (6)
W_G = 30  # g^{c_i}: gravity in F_{c_i} (3)
W_COLS = 33
NSCRATCH = 1

_EMPTY1 = np.empty(0)
_EMPTY2 = np.empty((0, 6))

# The kernels below index the model tables and the workspace directly (``ws[i, W_XI + k]``)
# instead of slicing rows: in numba every slice is a new array object with reference counting,
# which costs more than the arithmetic of a body.  The generic joint helpers of
# `dqdyn.multibody.joints` are used, on scratch arrays, for the joint types that have no
# inline case here (cylindrical, planar, spherical, free).


@jit
def ne_forward(mi, mf, g, q, v, a, ws, sc):
    """Forward recursion (eqs. 19–21): CoM poses, twists, twist derivatives, gravity per body.

    ``v`` / ``a`` of length 0 mean zero velocity / acceleration; ``sc``: scratch (≥ 31).
    Zeroes the wrench column.
    """
    for k in range(W_COLS):
        ws[0, k] = 0.0
    ws[0, W_G] = g[0]
    ws[0, W_G + 1] = g[1]
    ws[0, W_G + 2] = g[2]
    ne_forward_bodies(mi, mf, q, v, a, ws, sc)


@jit
def ne_forward_bodies(mi, mf, q, v, a, ws, sc):
    """The body loop of `ne_forward` from a given world row ``ws[0]``: its twist
    ``W_XI``, twist derivative ``W_XID`` and gravity ``W_G``, in the frame of the model's world
    (a moving base: the interconnection graph's connection frame, [Silva2022thesis, eq. 5.10]; ``v`` of
    length 0 means zero twists, the base's included).  Zeroes the wrench
    column, row 0 included (`ne_backward` accumulates there the wrench the base
    transmits)."""
    nb1 = mi.shape[0]
    has_v = v.shape[0] > 0
    has_a = a.shape[0] > 0
    xj = sc[0:8]
    xl = sc[8:16]
    sj = sc[16:22]  # ξ_J
    sd = sc[22:28]
    ax = sc[28:31]
    for i in range(1, nb1):
        lam = mi[i, MI_PARENT]
        # x_{c_i}^{c_λ} = x_{c_λ}^{λ*} x_J^λ x_J(q) x_{c_i}^i     [Silva2022, §3.1.1], as (R, p)
        r0, r1, r2, r3, t0, t1, t2 = joint_pose(mi, mf, i, q, ax, xj, xl)
        rotation_matrix(r0, r1, r2, r3, ws, i, W_R)
        R0, R1, R2 = ws[i, W_R], ws[i, W_R + 1], ws[i, W_R + 2]
        R3, R4, R5 = ws[i, W_R + 3], ws[i, W_R + 4], ws[i, W_R + 5]
        R6, R7, R8 = ws[i, W_R + 6], ws[i, W_R + 7], ws[i, W_R + 8]
        cx, cy, cz = mf[i, MF_COM], mf[i, MF_COM + 1], mf[i, MF_COM + 2]
        p0 = t0 + R0 * cx + R1 * cy + R2 * cz - mf[lam, MF_COM]
        p1 = t1 + R3 * cx + R4 * cy + R5 * cz - mf[lam, MF_COM + 1]
        p2 = t2 + R6 * cx + R7 * cy + R8 * cz - mf[lam, MF_COM + 2]
        ws[i, W_P], ws[i, W_P + 1], ws[i, W_P + 2] = p0, p1, p2
        # g^{c_i} = Ad(r_{c_λ}^{c_i}) g^{c_λ} = Rᵀ g^{c_λ}
        g0, g1, g2 = ws[lam, W_G], ws[lam, W_G + 1], ws[lam, W_G + 2]
        ws[i, W_G] = R0 * g0 + R3 * g1 + R6 * g2
        ws[i, W_G + 1] = R1 * g0 + R4 * g1 + R7 * g2
        ws[i, W_G + 2] = R2 * g0 + R5 * g1 + R8 * g2
        # eq. (20), first term: Ad(x_{c_λ}^{c_i}) ξ̇_λ = Rᵀ a + ε Rᵀ (b − p × a)   (eq. 3)
        e0, e1, e2 = ws[lam, W_XID], ws[lam, W_XID + 1], ws[lam, W_XID + 2]
        f0 = ws[lam, W_XID + 3] - (p1 * e2 - p2 * e1)
        f1 = ws[lam, W_XID + 4] - (p2 * e0 - p0 * e2)
        f2 = ws[lam, W_XID + 5] - (p0 * e1 - p1 * e0)
        d0 = R0 * e0 + R3 * e1 + R6 * e2
        d1 = R1 * e0 + R4 * e1 + R7 * e2
        d2 = R2 * e0 + R5 * e1 + R8 * e2
        d3 = R0 * f0 + R3 * f1 + R6 * f2
        d4 = R1 * f0 + R4 * f1 + R7 * f2
        d5 = R2 * f0 + R5 * f1 + R8 * f2
        if has_a:
            # + Ad(x_i^{c_i}) (S a): the joint's twist derivative (Table 1)
            joint_twist(mi, mf, i, q, a, ax, sd)
            d0 += sd[0]
            d1 += sd[1]
            d2 += sd[2]
            d3 += sd[3]
            d4 += sd[4]
            d5 += sd[5]
        if has_v:
            # eq. (19): ξ_i = Ad(x_{c_λ}^{c_i}) ξ_λ + ξ_J,  ξ_J = Ad(x_i^{c_i}) S v
            e0, e1, e2 = ws[lam, W_XI], ws[lam, W_XI + 1], ws[lam, W_XI + 2]
            f0 = ws[lam, W_XI + 3] - (p1 * e2 - p2 * e1)
            f1 = ws[lam, W_XI + 4] - (p2 * e0 - p0 * e2)
            f2 = ws[lam, W_XI + 5] - (p0 * e1 - p1 * e0)
            A0 = R0 * e0 + R3 * e1 + R6 * e2
            A1 = R1 * e0 + R4 * e1 + R7 * e2
            A2 = R2 * e0 + R5 * e1 + R8 * e2
            A3 = R0 * f0 + R3 * f1 + R6 * f2
            A4 = R1 * f0 + R4 * f1 + R7 * f2
            A5 = R2 * f0 + R5 * f1 + R8 * f2
            joint_twist(mi, mf, i, q, v, ax, sj)
            s0, s1, s2, s3, s4, s5 = sj[0], sj[1], sj[2], sj[3], sj[4], sj[5]
            ws[i, W_XI] = A0 + s0
            ws[i, W_XI + 1] = A1 + s1
            ws[i, W_XI + 2] = A2 + s2
            ws[i, W_XI + 3] = A3 + s3
            ws[i, W_XI + 4] = A4 + s4
            ws[i, W_XI + 5] = A5 + s5
            # eqs. (20)–(21): + ξ_{c_i,c_λ}^{c_i} × (Ad ξ_λ) = −ξ_J × A = A × ξ_J  (eq. 8)
            d0 += A1 * s2 - A2 * s1
            d1 += A2 * s0 - A0 * s2
            d2 += A0 * s1 - A1 * s0
            d3 += (A1 * s5 - A2 * s4) + (A4 * s2 - A5 * s1)
            d4 += (A2 * s3 - A0 * s5) + (A5 * s0 - A3 * s2)
            d5 += (A0 * s4 - A1 * s3) + (A3 * s1 - A4 * s0)
            jt = mi[i, MI_JTYPE]
            if jt == PLANAR:
                # + Ad(x_i^{c_i}) (Ṡ v): the planar joint's body-frame axes turn with φ
                joint_velocity_bias(jt, q, mi[i, MI_IQ], v, mi[i, MI_IV], sd)
                d3 += sd[3] + (sd[1] * cz - sd[2] * cy)
                d4 += sd[4] + (sd[2] * cx - sd[0] * cz)
                d5 += sd[5] + (sd[0] * cy - sd[1] * cx)
        else:
            for k in range(6):
                ws[i, W_XI + k] = 0.0
        ws[i, W_XID] = d0
        ws[i, W_XID + 1] = d1
        ws[i, W_XID + 2] = d2
        ws[i, W_XID + 3] = d3
        ws[i, W_XID + 4] = d4
        ws[i, W_XID + 5] = d5
    for i in range(nb1):
        for k in range(6):
            ws[i, W_ZETA + k] = 0.0


@jit
def ne_backward(mi, mf, q, fext, ws, tau, sc):
    """Backward recursion (eqs. 24–30, 4.39) and projection onto the joint axes into ``tau``
    (which must be zeroed).  ``fext`` with 0 rows means no external wrenches."""
    nb1 = mi.shape[0]
    has_f = fext.shape[0] > 0
    col = sc[0:6]
    ax = sc[28:31]
    for i in range(nb1 - 1, 0, -1):
        m = mf[i, MF_MASS]
        cx, cy, cz = mf[i, MF_COM], mf[i, MF_COM + 1], mf[i, MF_COM + 2]
        w0, w1, w2 = ws[i, W_XI], ws[i, W_XI + 1], ws[i, W_XI + 2]  # P(ξ) = ω
        u0, u1, u2 = ws[i, W_XI + 3], ws[i, W_XI + 4], ws[i, W_XI + 5]  # D(ξ): CoM velocity
        e0, e1, e2 = ws[i, W_XID], ws[i, W_XID + 1], ws[i, W_XID + 2]  # P(ξ̇)
        # eq. (25) and the gravity term of eq. (24): f = m (D(ξ̇) + P(ξ) × D(ξ)) − m g^{c_i}
        z0 = ws[i, W_ZETA] + m * (ws[i, W_XID + 3] + (w1 * u2 - w2 * u1) - ws[i, W_G])
        z1 = ws[i, W_ZETA + 1] + m * (ws[i, W_XID + 4] + (w2 * u0 - w0 * u2) - ws[i, W_G + 1])
        z2 = ws[i, W_ZETA + 2] + m * (ws[i, W_XID + 5] + (w0 * u1 - w1 * u0) - ws[i, W_G + 2])
        # eq. (26): τ = L3(𝕀) P(ξ̇) + P(ξ) × L3(𝕀) P(ξ)    (rows of Ī, [Silva2022, eq. (12)])
        I0, I1, I2 = mf[i, MF_INERTIA], mf[i, MF_INERTIA + 1], mf[i, MF_INERTIA + 2]
        I3, I4, I5 = mf[i, MF_INERTIA + 3], mf[i, MF_INERTIA + 4], mf[i, MF_INERTIA + 5]
        I6, I7, I8 = mf[i, MF_INERTIA + 6], mf[i, MF_INERTIA + 7], mf[i, MF_INERTIA + 8]
        l0 = I0 * w0 + I1 * w1 + I2 * w2
        l1 = I3 * w0 + I4 * w1 + I5 * w2
        l2 = I6 * w0 + I7 * w1 + I8 * w2
        z3 = ws[i, W_ZETA + 3] + I0 * e0 + I1 * e1 + I2 * e2 + (w1 * l2 - w2 * l1)
        z4 = ws[i, W_ZETA + 4] + I3 * e0 + I4 * e1 + I5 * e2 + (w2 * l0 - w0 * l2)
        z5 = ws[i, W_ZETA + 5] + I6 * e0 + I7 * e1 + I8 * e2 + (w0 * l1 - w1 * l0)
        if has_f:
            # − Ad(x_i^{c_i}) ζ^ext = −(f + ε (τ − c × f))
            f0, f1, f2 = fext[i, 0], fext[i, 1], fext[i, 2]
            z0 -= f0
            z1 -= f1
            z2 -= f2
            z3 -= fext[i, 3] - (cy * f2 - cz * f1)
            z4 -= fext[i, 4] - (cz * f0 - cx * f2)
            z5 -= fext[i, 5] - (cx * f1 - cy * f0)
        ws[i, W_ZETA], ws[i, W_ZETA + 1], ws[i, W_ZETA + 2] = z0, z1, z2
        ws[i, W_ZETA + 3], ws[i, W_ZETA + 4], ws[i, W_ZETA + 5] = z3, z4, z5
        # eq. (30), every joint type: Q_k = ⟨Ad(x_i^{c_i}) S_k, ζ_i⟩ (power pairing)
        jt = mi[i, MI_JTYPE]
        iv = mi[i, MI_IV]
        scale = mf[i, MF_SCALE]
        if jt == REVOLUTE or jt == PRISMATIC or jt == HELICAL:
            a0, a1, a2 = mf[i, MF_AXIS], mf[i, MF_AXIS + 1], mf[i, MF_AXIS + 2]
            if jt == PRISMATIC:
                tau[iv] += scale * (a0 * z0 + a1 * z1 + a2 * z2)
            else:
                # ⟨l, τ⟩ + ⟨l × c + h l, f⟩
                b0 = a1 * cz - a2 * cy
                b1 = a2 * cx - a0 * cz
                b2 = a0 * cy - a1 * cx
                if jt == HELICAL:
                    h = mf[i, MF_PITCH]
                    b0 += h * a0
                    b1 += h * a1
                    b2 += h * a2
                tau[iv] += scale * (a0 * z3 + a1 * z4 + a2 * z5 + b0 * z0 + b1 * z1 + b2 * z2)
        else:
            ax[0], ax[1], ax[2] = mf[i, MF_AXIS], mf[i, MF_AXIS + 1], mf[i, MF_AXIS + 2]
            for k in range(joint_nv(jt)):
                joint_column(jt, ax, mf[i, MF_PITCH], q, mi[i, MI_IQ], k, col)
                c0, c1, c2 = col[0], col[1], col[2]
                col[3] += c1 * cz - c2 * cy
                col[4] += c2 * cx - c0 * cz
                col[5] += c0 * cy - c1 * cx
                tau[iv + k] += scale * (c0 * z3 + c1 * z4 + c2 * z5 + col[3] * z0
                                        + col[4] * z1 + col[5] * z2)
        # eq. (29) / (4.39): ζ_λ += Ad(x_{c_i}^{c_λ}) ζ_i = R f + ε (R τ + p × R f)
        lam = mi[i, MI_PARENT]
        R0, R1, R2 = ws[i, W_R], ws[i, W_R + 1], ws[i, W_R + 2]
        R3, R4, R5 = ws[i, W_R + 3], ws[i, W_R + 4], ws[i, W_R + 5]
        R6, R7, R8 = ws[i, W_R + 6], ws[i, W_R + 7], ws[i, W_R + 8]
        p0, p1, p2 = ws[i, W_P], ws[i, W_P + 1], ws[i, W_P + 2]
        f0 = R0 * z0 + R1 * z1 + R2 * z2
        f1 = R3 * z0 + R4 * z1 + R5 * z2
        f2 = R6 * z0 + R7 * z1 + R8 * z2
        ws[lam, W_ZETA] += f0
        ws[lam, W_ZETA + 1] += f1
        ws[lam, W_ZETA + 2] += f2
        ws[lam, W_ZETA + 3] += R0 * z3 + R1 * z4 + R2 * z5 + (p1 * f2 - p2 * f1)
        ws[lam, W_ZETA + 4] += R3 * z3 + R4 * z4 + R5 * z5 + (p2 * f0 - p0 * f2)
        ws[lam, W_ZETA + 5] += R6 * z3 + R7 * z4 + R8 * z5 + (p0 * f1 - p1 * f0)


@jit
def armature_tau(mi, mf, a, tau):
    """``τ += armature ⊙ a`` (the rotors' inertia: `Model.armature`); a zero armature adds
    nothing, bit for bit."""
    for i in range(1, mi.shape[0]):
        iv = mi[i, MI_IV]
        for k in range(mi[i, MI_NV]):
            r = mf[i, MF_ARMATURE + k]
            if r != 0.0:
                tau[iv + k] += r * a[iv + k]


@jit
def armature_diag(mi, mf, M):
    """``M += diag(armature)`` (`Model.armature`); a zero armature adds nothing."""
    for i in range(1, mi.shape[0]):
        iv = mi[i, MI_IV]
        for k in range(mi[i, MI_NV]):
            r = mf[i, MF_ARMATURE + k]
            if r != 0.0:
                M[iv + k, iv + k] += r


@jit
def ne_check(mi, q, v, a, fext):
    return check_state(mi, q, v, a, BAD_A_FINITE, fext, fext.shape[0] > 0)


@jit  # (IR-inlined into its entry, gate and batch kernels: a call would cost 0.3-0.5 µs)
def ne_core(mi, mf, g, q, v, a, fext, ws, tau):
    """dqNE (Alg. 4.1) for one state: ``tau`` (zeroed here) and the workspace ``ws``."""
    st = ne_check(mi, q, v, a, fext)
    if st != OK:
        return st
    sc = ws[mi.shape[0]]
    ne_forward(mi, mf, g, q, v, a, ws, sc)
    for k in range(tau.shape[0]):
        tau[k] = 0.0
    ne_backward(mi, mf, q, fext, ws, tau, sc)
    if a.shape[0] > 0:
        armature_tau(mi, mf, a, tau)
    for k in range(tau.shape[0]):  # finite inputs can still overflow (|v|² > 1.8e308)
        if not math.isfinite(tau[k]):
            return BAD_OVERFLOW
    return OK


@jit
def joint_frame_wrenches(mi, mf, q, ws, G):
    """``G[i] = Γ_i = ζ_{0,i}^{J_i} = Ad(x_{c_i}^{J_i}) ζ_i`` (the papers' joint wrenches, eq. 29),
    ``x_{c_i}^{J_i} = x_J(q_i) T(c_i)``; ``G[0]`` = the wrench the world transmits to the roots,
    at the world origin in F_0."""
    nb1 = mi.shape[0]
    s = ws[nb1]
    xj = s[0:8]
    xc = s[8:16]
    zero = s[16:19]
    zero[0] = zero[1] = zero[2] = 0.0
    for k in range(6):
        G[0, k] = ws[0, W_ZETA + k]
    for i in range(1, nb1):
        joint_transform(mi[i, MI_JTYPE], mf[i, MF_AXIS : MF_AXIS + 3], mf[i, MF_PITCH], q,
                        mi[i, MI_IQ], mf[i, MF_SCALE], mf[i, MF_OFFSET], xj)
        com_pose(xj, zero, mf[i, MF_COM : MF_COM + 3], xc)
        ad6(xc, ws[i, W_ZETA : W_ZETA + 6], G[i])


# ------------------------------------------------------------------------ single-state kernels
@jit
def rnea_checked(mi, mf, q, v, a, tau, ws):
    """Single-state `rnea` (and ``nonlinear_effects`` with ``a`` of length 0) on the flat
    scratch ``ws``: input lengths checked here, gravity read from the world row of ``mf``."""
    nv = mi[0, MI_IV]
    nb2 = mi.shape[0] + NSCRATCH
    if (q.shape[0] != mi[0, MI_IQ] or v.shape[0] != nv or tau.shape[0] != nv
            or (a.shape[0] != nv and a.shape[0] != 0) or ws.shape[0] < nb2 * W_COLS):
        return BAD_SHAPE
    return ne_core(mi, mf, mf[0, MF_GRAVITY : MF_GRAVITY + 3], q, v, a, _EMPTY2,
                   flat_workspace(ws, nb2, W_COLS), tau)


@njit
def rnea_entry(mi, mf, q, v, a, tau):
    """`rnea_checked` with its own scratch (the dispatcher's fast path)."""
    return rnea_checked(mi, mf, q, v, a, tau, np.empty((mi.shape[0] + NSCRATCH) * W_COLS))


RNEA_SIG = (T_MI, T_MF, T_V, T_V, T_V, T_V)
_RNEA = None  # rnea_entry, armed on first use (see gate.armed_call)


def _c_rnea(mip, mfp, nb1, bufs, lens):
    """Gate kernel of `rnea` (q, v, a, scratch → τ; see gate.gate_address)."""
    mi, mf = gate_tables(mip, mfp, nb1)
    if lens[2] != lens[1]:  # (rnea_checked reads an empty ``a`` as zero: not for rnea)
        return BAD_SHAPE
    return rnea_checked(mi, mf, gate_vector(bufs, lens, 0), gate_vector(bufs, lens, 1),
                        gate_vector(bufs, lens, 2), gate_vector(bufs, lens, 4),
                        gate_vector(bufs, lens, 3))


_RNEA_C = 0  # address of the compiled _c_rnea, set on first use
_RNEA_ENTRY = gate_entry(globals(), "_RNEA_C", _c_rnea, 3, NV, -1, scratch=True)


def _c_rnea_fext(mip, mfp, nb1, bufs, lens):
    """Gate kernel of `rnea` with external wrenches (q, v, a, fext flattened to
    ``(nbodies + 1) · 6`` entries, scratch → τ): `ne_core` with them, as each state of
    `rnea_rows` — the same bits as a batch."""
    mi, mf = gate_tables(mip, mfp, nb1)
    nv = mi[0, MI_IV]
    nb2 = nb1 + NSCRATCH
    if (lens[0] != mi[0, MI_IQ] or lens[1] != nv or lens[2] != nv or lens[3] != nb1 * 6
            or lens[4] < nb2 * W_COLS):
        return BAD_SHAPE
    return ne_core(mi, mf, mf[0, MF_GRAVITY : MF_GRAVITY + 3], gate_vector(bufs, lens, 0),
                   gate_vector(bufs, lens, 1), gate_vector(bufs, lens, 2),
                   nb.carray(bufs[3], (nb1, 6)), flat_workspace(gate_vector(bufs, lens, 4), nb2, W_COLS),
                   gate_vector(bufs, lens, 5))


_RNEA_FEXT_C = 0  # its address, set on first use
_RNEA_FEXT_ENTRY = gate_entry(globals(), "_RNEA_FEXT_C", _c_rnea_fext, 4, NV, -1, scratch=True)


@njit
def newton_euler_kernel(mi, mf, g, q, v, a, fext, ws, tau, G):
    st = ne_core(mi, mf, g, q, v, a, fext, ws, tau)
    if st != OK:
        return st
    joint_frame_wrenches(mi, mf, q, ws, G)
    return OK


# ------------------------------------------------------------------------ batch drivers
@njit
def rnea_rows(mi, mf, g, Q, V, A, F, TAU, status, s, e):
    """States ``s`` to ``e`` of `rnea_batch` on one workspace: the recursion inlined here
    once, for the batch kernel and its serial twin (each calls this per block of states)."""
    mi, mf, g, Q, V, A, F = (unmanaged(mi), unmanaged(mf), unmanaged(g), unmanaged(Q), unmanaged(V),
                             unmanaged(A), unmanaged(F))
    TAU, status = unmanaged(TAU), unmanaged(status)
    bv, ba, bf = V.shape[0] > 1, A.shape[0] > 1, F.shape[0] > 1
    ws = np.empty((mi.shape[0] + NSCRATCH, W_COLS))
    z = np.int64(0)
    for k in range(s, e):
        status[k] = ne_core(mi, mf, g, Q[k], V[k if bv else z], A[k if ba else z],
                            F[k if bf else z], ws, TAU[k])


@pjit
def rnea_batch(mi, mf, g, Q, V, A, F, TAU, status):
    N = np.int64(Q.shape[0])
    nblk = min(N, BLOCKS)
    for b in nb.prange(nblk):
        rnea_rows(mi, mf, g, Q, V, A, F, TAU, status, b * N // nblk, (b + 1) * N // nblk)


@pjit
def newton_euler_batch(mi, mf, g, Q, V, A, F, WS, TAU, G, status):
    bv, ba, bf = V.shape[0] > 1, A.shape[0] > 1, F.shape[0] > 1
    for n in nb.prange(Q.shape[0]):
        vn = V[n] if bv else V[0]
        an = A[n] if ba else A[0]
        fn = F[n] if bf else F[0]
        status[n] = newton_euler_kernel(mi, mf, g, Q[n], vn, an, fn, WS[n], TAU[n], G[n])


# =============================================================================== public API
def _vec_in(model: Model, x, n: int, name: str, what: str, allow_none: bool):
    """(2-D array, batch shape); ``None`` → a (1, 0) array meaning zero."""
    if x is None:
        if not allow_none:
            raise ShapeError(f"{name} is required ({what})")
        return np.empty((1, 0)), ()
    return as_vector_batch(x, n, name, what)


def fext_in(model: Model, fext):
    """``fext`` as a contiguous (N, nbodies+1, 6) array and its batch shape (N=1, () for None)."""
    nb1 = model.nbodies + 1
    if fext is None:
        return np.empty((1, 0, 6)), ()
    f = np.asarray(fext, dtype=np.float64)
    if f.ndim < 2 or f.shape[-2:] != (nb1, 6):
        raise ShapeError(
            f"fext must have shape (..., {nb1}, 6) (one wrench [f, τ] per body, world first, "
            f"in the body frame at its origin), got {np.shape(fext)}"
        )
    batch = f.shape[:-2]
    return kernel_rows(f.reshape(-1, nb1, 6)), batch  # (writable: see kernel_rows)


def _inputs(model: Model, q, v, a, fext, v_none=False, a_none=False):
    Q, bq = as_vector_batch(q, model.nq, "q", "the configuration, model.nq entries")
    V, bv = _vec_in(model, v, model.nv, "v", "a velocity, model.nv entries", v_none)
    A, ba = _vec_in(model, a, model.nv, "a", "an acceleration, model.nv entries", a_none)
    F, bf = fext_in(model, fext)
    # rows shared by the whole batch stay single (run_chunked shares or expands them per chunk)
    (Q, V, A, F2), batch, N = lazy_batch([Q, V, A, F.reshape(F.shape[0], -1)], [bq, bv, ba, bf])
    return (Q, V, A, F2.reshape(F2.shape[0], -1, 6)), batch, N


@fast_front(_RNEA_ENTRY, fext=_RNEA_FEXT_ENTRY)
def rnea(model: Model, q, v, a, fext=None, *, out=None) -> np.ndarray:
    """Generalized forces ``τ = M(q) a + C(q, v) v + g(q) − Σ Jᵢᵀ fextᵢ`` by the dual quaternion
    Newton–Euler recursion (dqNE, [Silva2022, eqs. (16)–(30)]; trees: [Silva2022thesis, eqs. (4.38)–(4.39)]).

    Every joint type; mimic joints add into their master's entry; ``M`` includes the joint
    armature (`armature`: ``τ += armature ⊙ a``).  Batches (leading axes)
    broadcast against each other and run in chunks of `dqdyn.config.set_batch_chunk`
    states over all cores.

    Parameters
    ----------
    model : Model
    q : array_like, shape (..., nq)
        Configuration: rad (revolute, helical), m (prismatic); a unit quaternion ``[w, x, y, z]``
        for a spherical joint, a unit dual quaternion (vec8) for a free joint (Conventions).
    v : array_like, shape (..., nv)
        Generalized velocity: rad/s, m/s; a free joint's body twist ``[ω, v]`` in its own frame.
    a : array_like, shape (..., nv)
        Generalized acceleration: rad/s², m/s².
    fext : array_like, shape (..., nbodies + 1, 6), optional
        External wrenches ``[f, τ]`` (N, N·m) applied *to* each body, expressed in the body's
        frame at its origin (Pinocchio's ``fext``); row 0 (the world) is ignored.
    out : ndarray, shape (..., nv), optional
        Written in place and returned (an ``np.memmap`` streams a batch larger than memory).

    Returns
    -------
    tau : ndarray, shape (..., nv)
        In the v layout: N·m on rotational coordinates, N on translational ones (prismatic
        joints, a planar joint's x / y).  A free joint's six entries pair with its body twist
        ``[ω, v]``: the moment (N·m) then the force (N), in the body frame.

    Raises
    ------
    ShapeError
        ``q``, ``v``, ``a``, ``fext`` or ``out`` has the wrong shape (the message names it).
    NonFiniteError
        An input contains NaN or infinity.
    NotUnitError
        A spherical or free joint's (dual) quaternion is off the unit sphere
        (`normalize_configuration` fixes it).
    """
    if type(fext) is ND and out is None and fext.ndim == 2:
        # one state with external wrenches (the compiled front makes this call itself for a
        # C-contiguous float64 fext; here the calls it passed on): through the call gate, fext
        # as one flat vector (a view); what it declines (lists, other dtypes, batches of q,
        # wrong lengths) goes on to the general path, which names what is wrong
        r = _RNEA_FEXT_ENTRY(model, q, v, a, fext.reshape(-1))
        if type(r) is ND:
            return r
        if r is not None and r != BAD_SHAPE:
            raise_status(model, r)
    elif fext is None:
        r = _RNEA_ENTRY(model, q, v, a) if out is None else _RNEA_ENTRY(model, q, v, a, out)
        if type(r) is ND:
            return r
        if r is not None and r != BAD_SHAPE:
            raise_status(model, r)
    try:
        model.mi  # noqa: B018  (AttributeError: not a Model)
    except AttributeError:
        raise not_a_model(model) from None
    if fext is None and type(q) is ND and q.ndim == 1:
        tau = _empty(model.nv) if out is None else out
        try:
            st = _RNEA(model.mi, model.mf, q, v, a, tau)
        except TypeError:
            st = armed_call(globals(), "_RNEA", rnea_entry, RNEA_SIG, (model.mi, model.mf, q, v, a, tau))
        if st == OK and len(a):  # (the entry kernel reads an empty ``a`` as zero: not here)
            return tau
        if st is not None and st != BAD_SHAPE and st != OK:
            raise_status(model, st)
    return _rnea_general(model, q, v, a, fext, False, False, out)


def _rnea_general(model, q, v, a, fext, v_none, a_none, out=None):
    """Every call the compiled front declines: batches, and single states given as lists, with
    ``fext`` or ``out=``: the inputs converted once (`_inputs`), then `_rnea_checked`."""
    (Q, V, A, F), batch, N = _inputs(model, q, v, a, fext, v_none, a_none)
    return _rnea_checked(model, Q, V, A, F, batch, N, out)


def _rnea_checked(model, Q, V, A, F, batch, N, out=None):
    """``τ`` (batch..., nv) of inputs already converted by `_inputs` (its rows, batch shape and
    number of states): the core that `rnea`, ``nonlinear_effects`` and the library's own callers
    (``aba`` of a model with mimic joints) share, so that an input is converted once per public
    call.  The kernels still check the values (finite, unit quaternions) and report them.

    One state is a batch of one in `rnea_rows`, called with the argument types the batch
    kernel's serial twin gives it (C-contiguous writable rows, as ``run_chunked`` passes them:
    `_inputs` makes them so), so its compiled code is the batches' — ``ne_core`` called from
    here was a kernel of its own, 19 s more to compile at install."""
    if not batch:
        tau = out_batch(out, (model.nv,))
        tau = np.empty(model.nv) if tau is None else tau
        st = np.zeros(1, dtype=np.int64)
        rnea_rows(model.mi, model.mf, model.gravity, Q, V, A, F, tau.reshape(1, model.nv), st, 0, 1)
        if st[0]:
            raise_status(model, int(st[0]))
        return tau
    TAU = out_batch(out, batch + (model.nv,))
    TAU = np.empty((N, model.nv)) if TAU is None else TAU.reshape(N, model.nv)
    if F.shape[1] == 0 and N >= LANES and lanes_support(model):  # 16 states at once, same bits
        run_chunked(rnea_lanes_batch, (model.mi, model.mf, model.gravity), [Q, V, A], [TAU], N,
                    (1, 2), lambda st, row: raise_status(model, st, row))
        return TAU.reshape(batch + (model.nv,))
    run_chunked(rnea_batch, (model.mi, model.mf, model.gravity), [Q, V, A, F], [TAU], N, (1, 2, 3),
                lambda st, row: raise_status(model, st, row))
    return TAU.reshape(batch + (model.nv,))


class NewtonEulerResult(NamedTuple):
    """Output of `newton_euler` (all arrays carry the input's batch axes first).

    * ``tau`` (..., nv): generalized forces (the projections of eq. 30);
    * ``wrenches`` (..., nbodies+1, 6): the papers' joint wrenches ``Γ_i = ζ_{0,i}^{J_i}``
      (vec6 ``[f, τ]``): the wrench joint ``i`` transmits from the parent to body ``i`` (the
      whole subtree's inertial, gravity and external load), at the origin of the joint frame
      ``F_{J_i}`` in its axes (the frame fixed in the parent in which the joint axis is
      constant — the ``F_{j_{i−1}}`` of [Silva2022, §3]).  Row 0 is the total wrench the world transmits to
      the root bodies, at the world origin in ``F_0`` (a fixed base's reaction);
    * ``com_wrenches`` (..., nbodies+1, 6): the same wrenches at the CoM of body ``i``, in its
      axes (``ζ_i``, before the change of frame);
    * ``twists`` (..., nbodies+1, 6): CoM twists ``ξ_{0,c_i}^{c_i}`` ``[ω, v]`` (eq. 19): body
      angular velocity and CoM velocity, in body axes;
    * ``twist_derivatives`` (..., nbodies+1, 6): ``ξ̇_{0,c_i}^{c_i}`` (eq. 20; the dual part is
      ``p̈ + ṗ × ω`` in body axes, eq. 22 — gravity not included).
    """

    tau: np.ndarray
    wrenches: np.ndarray
    com_wrenches: np.ndarray
    twists: np.ndarray
    twist_derivatives: np.ndarray


def newton_euler(model: Model, q, v, a, fext=None) -> NewtonEulerResult:
    """The dual quaternion Newton–Euler model ``Γ̲ = 𝒩(q, q̇, q̈)`` ([Silva2022, eq. (15)], thesis
    Alg. 4.1) on any tree: joint wrenches, CoM twists and their derivatives, and ``τ``.

    ``v`` / ``a`` may be ``None`` (zero).  See `NewtonEulerResult` for the frames and
    `rnea` for the arguments.
    """
    (Q, V, A, F), batch, N = _inputs(model, q, v, a, fext, True, True)
    nb1 = model.nbodies + 1
    WS = np.empty((N, nb1 + NSCRATCH, W_COLS))
    TAU = np.empty((N, model.nv))
    G = np.empty((N, nb1, 6))
    run_chunked(newton_euler_batch, (model.mi, model.mf, model.gravity), [Q, V, A, F],
                [WS, TAU, G], N, (1, 2, 3),
                lambda st, row: raise_status(model, st, row if batch else None))
    WS = WS[:, :nb1]
    return NewtonEulerResult(
        tau=TAU.reshape(batch + (model.nv,)),
        wrenches=G.reshape(batch + (nb1, 6)),
        com_wrenches=np.ascontiguousarray(WS[..., W_ZETA : W_ZETA + 6]).reshape(batch + (nb1, 6)),
        twists=np.ascontiguousarray(WS[..., W_XI : W_XI + 6]).reshape(batch + (nb1, 6)),
        twist_derivatives=np.ascontiguousarray(WS[..., W_XID : W_XID + 6]).reshape(
            batch + (nb1, 6)),
    )


__all__ = ["rnea", "newton_euler", "NewtonEulerResult", "fext_in"]
