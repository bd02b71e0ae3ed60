"""Analytic derivatives of inverse and forward dynamics [Kim2012, §4, Tables 5–6], in O(n·d).

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

**Configuration convention.** Derivatives with respect to ``q`` are taken along the tangent
directions of `dqdyn.integrate`: for a spherical or free joint the k-th column is
``d/dε τ(q ⊕ ε e_k)`` with the body-frame perturbation ``x ← x exp(½ ε e_k)`` — the same as
Pinocchio's ``computeRNEADerivatives`` (up to dqdyn's ``[ω, v]`` ordering of free-joint
velocities); for every other joint it is the ordinary partial derivative (planar: ``v = q̇``).
So every derivative matrix is nv × nv.

Forward-dynamics derivatives use ``∂q̈/∂x = −M⁻¹ ∂τ/∂x`` evaluated at ``q̈ = FD(q, v, τ)``
(the identity behind Table 6: differentiating ``τ = ID(q, v, FD(q, v, τ))``), and
``∂q̈/∂τ = M⁻¹``.  One compiled call, the structure of Pinocchio's ``computeABADerivatives``:
``M⁻¹`` by the recursive inverse of `minverse` (O(n·d), without forming ``M``) — or, up to
``CHOL_MINV_UPTO`` velocities, from the ``M`` of the sweep's own composite inertias
(`_mass_sweep`) by `linalg.spd_inverse` (n³/2 multiply-adds, cheaper there than a
second pass over the tree); the sweep above with ``q̈ = 0`` gives the bias ``τ(q, v, 0)`` and
``q̈ = M⁻¹ (τ − bias)``; the accelerations are then updated in place, the backward sweep fills
``∂τ/∂(q, v)``, and the two products by ``M⁻¹`` go to BLAS (large n).  (The first version factored ``M`` by Cholesky and built ``M⁻¹``
column by column from triangular solves: 2n³ scalar operations with strided reads, 12 ms of the
13 ms of a 200-link chain.)
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np

from dqdyn._engine.checks import not_a_model
from dqdyn._engine.jit import kernel
from dqdyn._engine.views import unmanaged, view
from dqdyn.algebra._core import ad6, ad6_inv, cross6, dq_mul, power6
from dqdyn.errors import ModelError, NonFiniteError, ShapeError, SingularError
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
    MF_COM,
    MF_GRAVITY,
    MF_INERTIA,
    MF_MASS,
    MF_OFFSET,
    MF_PITCH,
    MF_PLACEMENT,
    MF_SCALE,
    MI_IQ,
    MI_IV,
    MI_JTYPE,
    MI_NV,
    MI_PARENT,
    Model,
)
from dqdyn._engine.batching import for_batch
from dqdyn._engine.boundary import (
    BAD_A_FINITE,
    BAD_SHAPE,
    BAD_TAU_FINITE,
    OK,
    as_vector,
    as_vector_batch,
    broadcast_batch,
    check_lengths,
    check_state,
    first_bad,
    is_fast,
    raise_status,
)
from dqdyn.dynamics.articulated import MIMIC, SINGULAR, _has_mimic
from dqdyn._engine.gate import GATE, NV, NV3, SPLIT, fast_front, gate_address, gate_entry, gate_tables, gate_vector
from dqdyn._engine.linalg import spd_inverse
from dqdyn.dynamics.minverse import minv_kernel
from dqdyn.dynamics.newton_euler import armature_diag

# the O(n·d) kernels below: same numerics as the articulated-body kernels (aba.py, hybrid.py) (no NaN checks on division)
fjit = kernel(error_model="numpy", fastmath={"contract"})  # (FMA: single and batch may differ in the last bit)
fpjit = kernel(parallel=True, error_model="numpy", fastmath={"contract"})
ijit = kernel(inline="always", error_model="numpy")  # small helpers, inlined at the IR level

#: status of aba_derivatives when the mass matrix is not positive definite
SINGULAR_M = 3000


# =============================================================================== world inertias
# A world-frame rigid (or composite) inertia is stored as its 10 parameters
# ``P = [m, h (3), I_o (xx, yy, zz, xy, xz, yz)]``: mass, first moment ``h = m c`` and the
# rotational inertia about the world origin.  As a map twist ``[ω, v]`` → wrench ``[f, τ]``:
# ``f = m v + ω × h``, ``τ = I_o ω + h × v``, so composites are plain sums of parameters.
# Its rate ``ℐ̇ = 𝒱 × ℐ − ℐ 𝒱 ×`` along the body twist ``𝒱 = [ω, v]`` is the same map with
# parameters ``D = [ḣ (3), İ_o (6)]`` (ṁ = 0): ``ḣ = ω × h + m v``,
# ``İ_o = ω̂ I_o − I_o ω̂ + 2 (h·v) 1 − v hᵀ − h vᵀ``.


@ijit
def _world_inertia(mf, i, x, P):
    """Parameters ``P`` of ``Ad(x) I_i Ad(x*)``: body ``i``'s inertia seen in the world frame."""
    m = mf[i, MF_MASS]
    w, a, b, c = x[0], x[1], x[2], x[3]
    R00 = 1.0 - 2.0 * (b * b + c * c)
    R01 = 2.0 * (a * b - w * c)
    R02 = 2.0 * (a * c + w * b)
    R10 = 2.0 * (a * b + w * c)
    R11 = 1.0 - 2.0 * (a * a + c * c)
    R12 = 2.0 * (b * c - w * a)
    R20 = 2.0 * (a * c - w * b)
    R21 = 2.0 * (b * c + w * a)
    R22 = 1.0 - 2.0 * (a * a + b * b)
    d0, d1, d2, d3 = x[4], x[5], x[6], x[7]
    px = 2.0 * (-d0 * a + d1 * w - d2 * c + d3 * b)
    py = 2.0 * (-d0 * b + d1 * c + d2 * w - d3 * a)
    pz = 2.0 * (-d0 * c - d1 * b + d2 * a + d3 * w)
    cb0, cb1, cb2 = mf[i, MF_COM], mf[i, MF_COM + 1], mf[i, MF_COM + 2]
    cx = R00 * cb0 + R01 * cb1 + R02 * cb2 + px
    cy = R10 * cb0 + R11 * cb1 + R12 * cb2 + py
    cz = R20 * cb0 + R21 * cb1 + R22 * cb2 + pz
    o = MF_INERTIA
    J00, J01, J02 = mf[i, o], mf[i, o + 1], mf[i, o + 2]
    J11, J12, J22 = mf[i, o + 4], mf[i, o + 5], mf[i, o + 8]
    # T = J Rᵀ (J symmetric), then R T
    T00 = J00 * R00 + J01 * R01 + J02 * R02
    T01 = J00 * R10 + J01 * R11 + J02 * R12
    T02 = J00 * R20 + J01 * R21 + J02 * R22
    T10 = J01 * R00 + J11 * R01 + J12 * R02
    T11 = J01 * R10 + J11 * R11 + J12 * R12
    T12 = J01 * R20 + J11 * R21 + J12 * R22
    T20 = J02 * R00 + J12 * R01 + J22 * R02
    T21 = J02 * R10 + J12 * R11 + J22 * R12
    T22 = J02 * R20 + J12 * R21 + J22 * R22
    c2 = cx * cx + cy * cy + cz * cz
    P[0] = m
    P[1] = m * cx
    P[2] = m * cy
    P[3] = m * cz
    P[4] = R00 * T00 + R01 * T10 + R02 * T20 + m * (c2 - cx * cx)
    P[5] = R10 * T01 + R11 * T11 + R12 * T21 + m * (c2 - cy * cy)
    P[6] = R20 * T02 + R21 * T12 + R22 * T22 + m * (c2 - cz * cz)
    P[7] = R00 * T01 + R01 * T11 + R02 * T21 - m * cx * cy
    P[8] = R00 * T02 + R01 * T12 + R02 * T22 - m * cx * cz
    P[9] = R10 * T02 + R11 * T12 + R12 * T22 - m * cy * cz


@ijit
def _inertia_apply(P, X, out):
    """``out = ℐ X``: ``[m v + ω × h, I_o ω + h × v]`` for the twist ``X = [ω, v]``."""
    m, hx, hy, hz = P[0], P[1], P[2], P[3]
    w0, w1, w2, u0, u1, u2 = X[0], X[1], X[2], X[3], X[4], X[5]
    out[0] = m * u0 + (w1 * hz - w2 * hy)
    out[1] = m * u1 + (w2 * hx - w0 * hz)
    out[2] = m * u2 + (w0 * hy - w1 * hx)
    out[3] = P[4] * w0 + P[7] * w1 + P[8] * w2 + (hy * u2 - hz * u1)
    out[4] = P[7] * w0 + P[5] * w1 + P[9] * w2 + (hz * u0 - hx * u2)
    out[5] = P[8] * w0 + P[9] * w1 + P[6] * w2 + (hx * u1 - hy * u0)


@ijit
def _inertia_rate(P, V, D):
    """Parameters ``D = [ḣ, İ_o]`` of ``ℐ̇ = V × ℐ − ℐ V ×`` (the body moving with twist ``V``)."""
    m, hx, hy, hz = P[0], P[1], P[2], P[3]
    w0, w1, w2, u0, u1, u2 = V[0], V[1], V[2], V[3], V[4], V[5]
    D[0] = (w1 * hz - w2 * hy) + m * u0
    D[1] = (w2 * hx - w0 * hz) + m * u1
    D[2] = (w0 * hy - w1 * hx) + m * u2
    Ixx, Iyy, Izz, Ixy, Ixz, Iyz = P[4], P[5], P[6], P[7], P[8], P[9]
    # K = ω̂ I_o (column b: ω × I_o[:, b]); ω̂ I_o − I_o ω̂ = K + Kᵀ
    K00 = w1 * Ixz - w2 * Ixy
    K10 = w2 * Ixx - w0 * Ixz
    K20 = w0 * Ixy - w1 * Ixx
    K01 = w1 * Iyz - w2 * Iyy
    K11 = w2 * Ixy - w0 * Iyz
    K21 = w0 * Iyy - w1 * Ixy
    K02 = w1 * Izz - w2 * Iyz
    K12 = w2 * Ixz - w0 * Izz
    K22 = w0 * Iyz - w1 * Ixz
    hv2 = 2.0 * (hx * u0 + hy * u1 + hz * u2)
    D[3] = 2.0 * K00 + hv2 - 2.0 * u0 * hx
    D[4] = 2.0 * K11 + hv2 - 2.0 * u1 * hy
    D[5] = 2.0 * K22 + hv2 - 2.0 * u2 * hz
    D[6] = K01 + K10 - (u0 * hy + hx * u1)
    D[7] = K02 + K20 - (u0 * hz + hx * u2)
    D[8] = K12 + K21 - (u1 * hz + hy * u2)


@ijit
def _b_apply(D, H, X, sign, out):
    """``out = ℬ X = ℐ̇ X + X × H`` (sign = 1) or ``ℬᵀ X = ℐ̇ X − X × H`` (sign = −1).

    ``ℐ̇ X = [ω × ḣ, İ_o ω + ḣ × v]`` and ``X × H = [ω × H_f, ω × H_τ + v × H_f]``.
    """
    w0, w1, w2, u0, u1, u2 = X[0], X[1], X[2], X[3], X[4], X[5]
    # a = ḣ + sign H_f multiplies ω (force part); b = ḣ − sign H_f multiplies v (moment part)
    a0, a1, a2 = D[0] + sign * H[0], D[1] + sign * H[1], D[2] + sign * H[2]
    b0, b1, b2 = D[0] - sign * H[0], D[1] - sign * H[1], D[2] - sign * H[2]
    t0, t1, t2 = sign * H[3], sign * H[4], sign * H[5]
    out[0] = w1 * a2 - w2 * a1
    out[1] = w2 * a0 - w0 * a2
    out[2] = w0 * a1 - w1 * a0
    out[3] = D[3] * w0 + D[6] * w1 + D[7] * w2 + (b1 * u2 - b2 * u1) + (w1 * t2 - w2 * t1)
    out[4] = D[6] * w0 + D[4] * w1 + D[8] * w2 + (b2 * u0 - b0 * u2) + (w2 * t0 - w0 * t2)
    out[5] = D[7] * w0 + D[8] * w1 + D[5] * w2 + (b0 * u1 - b1 * u0) + (w0 * t1 - w1 * t0)


@ijit
def _planar_terms(q, iq, v, iv, a, d, out3):
    """Body-frame partials of the planar joint's ``S q̇``, ``S q̈ + Ṡ q̇`` (with respect to φ)
    and of ``Ṡ q̇`` (with respect to ẋ, ẏ, φ̇); only the (v_x, v_y) entries are non-zero.

    ``d = 0``: ``out3 = [∂(Sq̇)/∂φ (2), ∂(Sq̈ + Ṡq̇)/∂φ (2)]``; ``d = 1 + k``: ``∂(Ṡ q̇)/∂q̇_k``.
    """
    phi = q[iq + 2]
    c, s = math.cos(phi), math.sin(phi)
    dx, dy, w = v[iv], v[iv + 1], v[iv + 2]
    if d == 0:
        ax_, ay_ = a[iv], a[iv + 1]
        out3[0], out3[1] = -s * dx + c * dy, -c * dx - s * dy
        # ∂(S q̈)/∂φ + ∂(Ṡ q̇)/∂φ with ∂(Ṡ q̇)/∂φ = −φ̇ R(φ)ᵀ (ẋ, ẏ)
        out3[2] = -s * ax_ + c * ay_ - w * (c * dx + s * dy)
        out3[3] = -c * ax_ - s * ay_ - w * (-s * dx + c * dy)
    elif d == 1:
        out3[0], out3[1] = -s * w, -c * w
    elif d == 2:
        out3[0], out3[1] = c * w, -s * w
    else:
        out3[0], out3[1] = -s * dx + c * dy, -c * dx - s * dy


@ijit
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
        p = mi[i, MI_PARENT]
        if p > 0:
            if composite_inertia:
                for r in range(10):
                    Pc[p, r] += P[r]
            for r in range(9):
                Dc[p, r] += D[r]
            for r in range(6):
                Hc[p, r] += H[r]
                Fc[p, r] += Fc[i, r]


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


#: up to this many velocities ``aba_derivatives`` takes ``M⁻¹`` from a Cholesky factor of the
#: sweep's own ``M`` (about n³ operations, no second pass over the tree); above it, from the
#: recursive inverse (O(n·d), `minverse`)
CHOL_MINV_UPTO = 16

#: from this size on, ``M⁻¹ ∂τ/∂x`` goes to BLAS (below it a call costs more than the loops)
BLAS_FROM = 24


#: from this velocity index on, a 1-DoF body whose parent is the next body swept and 1-DoF too
#: has its column swept over the ancestors together with its parent's (`_derivative_sweep`):
#: on long chains 12-17 % less time (the ancestors' column entries are written two adjacent
#: numbers at a time), on 6-9-DoF arms nothing to gain (their paths are short)
PAIR_FROM = 12

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
    # 1. M⁻¹ by the recursive inverse (minverse.py, O(n·d); Pinocchio's computeMinverse) — or,
    # on small models, from the sweep's M by Cholesky (step 2)
    if not small:
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
    if small:
        _mass_sweep(mi, Pc, S, Fa, M)
        armature_diag(mi, mf, M)
        if not spd_inverse(M, nv, L, Mi):
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
                      dq, dv, M, not small, tmp)
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


_NO_FEXT = np.zeros((1, 1, 6))
_NO_FEXT1 = _NO_FEXT[0]


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


def _c_rnea_derivatives(mip, mfp, nb1, bufs, lens):
    mi, mf = gate_tables(mip, mfp, nb1)
    nv = mi[0, MI_IV]
    return _rnea_derivatives_entry(mi, mf, gate_vector(bufs, lens, 0), gate_vector(bufs, lens, 1),
                                   gate_vector(bufs, lens, 2), nb.carray(bufs[3], (3, nv, nv)))


def _c_aba_derivatives(mip, mfp, nb1, bufs, lens):
    mi, mf = gate_tables(mip, mfp, nb1)
    nv = mi[0, MI_IV]
    return _aba_derivatives_entry(mi, mf, gate_vector(bufs, lens, 0), gate_vector(bufs, lens, 1),
                                  gate_vector(bufs, lens, 2), nb.carray(bufs[3], (3, nv, nv)))


_RNEA_D_C = 0  # their addresses, set on first use
_ABA_D_C = 0
# the public functions' compiled fronts (gate.fast_front): one state or a small batch of a model
# without mimic joints, the three matrices split in C; anything else calls the Python function
_RNEA_D_ENTRY = gate_entry(globals(), "_RNEA_D_C", _c_rnea_derivatives, 3, NV3, NV)
_ABA_D_ENTRY = gate_entry(globals(), "_ABA_D_C", _c_aba_derivatives, 3, NV3, NV)


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


def _c_mimic_rnea_derivatives(mip, mfp, nb1, bufs, lens):
    mi, mf = gate_tables(mip, mfp, nb1)
    mm = gate_vector(bufs, lens, 3)
    nv = mi[0, MI_IV] - mm.shape[0] // 4
    if lens[4] != 3 * nv * nv:
        return BAD_SHAPE
    return _mimic_rnea_derivatives_entry(mi, mf, gate_vector(bufs, lens, 0), gate_vector(bufs, lens, 1),
                                         gate_vector(bufs, lens, 2), mm, nb.carray(bufs[4], (3, nv, nv)))


def _c_mimic_aba_derivatives(mip, mfp, nb1, bufs, lens):
    mi, mf = gate_tables(mip, mfp, nb1)
    mm = gate_vector(bufs, lens, 3)
    nv = mi[0, MI_IV] - mm.shape[0] // 4
    if lens[4] != 3 * nv * nv:
        return BAD_SHAPE
    return _mimic_aba_derivatives_entry(mi, mf, gate_vector(bufs, lens, 0), gate_vector(bufs, lens, 1),
                                        gate_vector(bufs, lens, 2), mm, nb.carray(bufs[4], (3, nv, nv)))


_MIMIC_RNEA_D_C = 0
_MIMIC_ABA_D_C = 0


def _mimic_gated(model: Model, addr, body, name, q, v, a):
    """The compiled chain rule through the call gate (a single state or a small batch), or None
    (bad input, a singular M, a large batch: the numpy chain rule then runs and names it)."""
    g = model._index.get("mimic_gate")
    if g is None:  # (the gate's tables, map and sizes, kept on the model: a Model never changes)
        mx, G, src, scale, offset = model.independent_mimic()
        nv = model.nv
        mm = np.column_stack([src, np.argmax(G[nv:] != 0, axis=1), scale, offset]).astype(np.float64).ravel()
        g = model._index["mimic_gate"] = (mx.mi, mx.mf, mm, nv, 3 * nv)
    mi, mf, mm, nv, rows = g
    r = GATE(addr or gate_address(globals(), name, body), mi, mf, rows, nv, q, v, a, mm)
    if type(r) is not np.ndarray:
        return None
    return SPLIT(r, _LAYOUTS.get(nv) or _layout(nv), 2)


_LAYOUTS = {}


def _layout(nv: int) -> tuple:
    """The gate result's three (nv, nv) parts, for `SPLIT` (one state or a batch)."""
    got = _LAYOUTS.get(nv)
    if got is None:
        got = _LAYOUTS[nv] = ((nv, nv),) * 3
    return got




def _gated(model: Model, addr, body, name, q, v, a, what):
    """The gate call of both public functions: the three matrices, or None for the general path."""
    try:
        nv = model.nv
    except AttributeError:
        raise not_a_model(model) from None
    r = GATE(addr or gate_address(globals(), name, body), model.mi, model.mf, 3 * nv, nv, q, v, a)
    if type(r) is np.ndarray:
        return SPLIT(r, _LAYOUTS.get(nv) or _layout(nv), 2)
    if r is not None and r != BAD_SHAPE and r != MIMIC:
        _raise(model, r, None, what)
    return None


def _no_mimic(model: Model, what: str):
    if model._index["mimic"]:
        raise ModelError(
            f"{what}: model {model.name!r} has mimic joints {list(model.mimic_joints)}; analytic "
            "derivatives of hybrid dynamics are not available for coupled joints (load the URDF "
            "with mimic='independent' to treat them as free joints)"
        )


def _raise(model: Model, st: int, row=None, what: str = ""):
    if st == SINGULAR_M:
        raise SingularError(f"{what}: the mass matrix is singular at this configuration"
                            + ("" if row is None else f" (batch element {row})"))
    raise_status(model, st, row)


def _run(model: Model, kernel, batch_kernel, q, v, a, fext, aname, awhat, what):
    """Shape checks, broadcasting and the one compiled call shared by both public functions."""
    nv = model.nv
    if fext is None and is_fast(q, v, a):
        out = np.empty((3, nv, nv))
        st = kernel(model.mi, model.mf, q, v, a, _NO_FEXT1, False, out)
        if st:
            if st == BAD_SHAPE:
                as_vector(q, model.nq, "q", "the configuration, model.nq entries")
                as_vector(v, nv, "v", "the velocity, model.nv entries")
                as_vector(a, nv, aname, awhat)
            _raise(model, st, None, what)
        return out[0], out[1], out[2]
    Q, bq = as_vector_batch(q, model.nq, "q", "the configuration, model.nq entries")
    V, bv = as_vector_batch(v, nv, "v", "the velocity, model.nv entries")
    A, ba = as_vector_batch(a, nv, aname, awhat)
    nb1 = model.nbodies + 1
    if fext is not None:
        F = np.asarray(fext, dtype=np.float64)
        if F.shape[-2:] != (nb1, 6):
            raise ShapeError(f"fext must have shape (..., {nb1}, 6), got {F.shape}")
        if not np.all(np.isfinite(F)):  # (rnea_derivatives' kernel does not check fext)
            raise NonFiniteError("fext contains NaN or infinity")
        bf = F.shape[:-2]
        (Q, V, A, F2), batch = broadcast_batch([Q, V, A, F.reshape(-1, nb1 * 6)], [bq, bv, ba, bf])
        F = np.ascontiguousarray(F2.reshape(-1, nb1, 6))
        use = True
    else:
        (Q, V, A), batch = broadcast_batch([Q, V, A], [bq, bv, ba])
        F, use = _NO_FEXT, False
    N = Q.shape[0]
    OUT = np.empty((N, 3, nv, nv))
    status = np.zeros(N, dtype=np.int64)
    if N == 1:
        status[0] = kernel(model.mi, model.mf, Q[0], V[0], A[0], F[0], use, OUT[0])
    else:
        for_batch(batch_kernel, Q.shape[0], model.mi.shape[0])(model.mi, model.mf, Q, V, A, F, use, OUT, status)
    st, row = first_bad(status)
    if st:
        _raise(model, st, row if N > 1 else None, what)
    sh = batch + (nv, nv)
    return OUT[:, 0].reshape(sh), OUT[:, 1].reshape(sh), OUT[:, 2].reshape(sh)


def _expanded(model: Model, q, v, a, aname, awhat):
    """Inputs of a model with mimic joints mapped to `Model.independent_mimic`'s model."""
    mx, G, src, scale, offset = model.independent_mimic()
    Q, bq = as_vector_batch(q, model.nq, "q", "the configuration, model.nq entries")
    V, bv = as_vector_batch(v, model.nv, "v", "the velocity, model.nv entries")
    A, ba = as_vector_batch(a, model.nv, aname, awhat)
    (Q, V, A), batch = broadcast_batch([Q, V, A], [bq, bv, ba])
    Qx = np.concatenate([Q, Q[:, src] * scale + offset], axis=1)
    sh = batch + (mx.nv,)
    return mx, G, Qx.reshape(batch + (mx.nq,)), (V @ G.T).reshape(sh), (A @ G.T).reshape(sh)


def _plain(model: Model, q, v, x, xname: str):
    """``q``, ``v``, ``x`` as C-contiguous writable float64 arrays of their own shapes."""
    Q, bq = as_vector_batch(q, model.nq, "q", "the configuration, model.nq entries")
    V, bv = as_vector_batch(v, model.nv, "v", "the velocity, model.nv entries")
    X, bx = as_vector_batch(x, model.nv, xname, "model.nv entries")
    return Q.reshape(bq + (model.nq,)), V.reshape(bv + (model.nv,)), X.reshape(bx + (model.nv,))


def _mimic_rnea_derivatives(model: Model, q, v, a, fext):
    """``Gᵀ (∂τ_x/∂x_x) G`` on the independent model (`Model.independent_mimic`)."""
    mx, G, qx, vx, ax = _expanded(model, q, v, a, "a", "the acceleration, model.nv entries")
    return tuple(G.T @ D @ G for D in rnea_derivatives(mx, qx, vx, ax, fext))


@fast_front(_RNEA_D_ENTRY, out=False, parts=3, skip=MIMIC)
def rnea_derivatives(model: Model, q, v, a, fext=None):
    """``(∂τ/∂q, ∂τ/∂v, ∂τ/∂a)`` of inverse dynamics, each (..., nv, nv).

    ``∂τ/∂a`` is the mass matrix.  Configuration derivatives follow the tangent convention of
    `dqdyn.integrate` (module docstring).  ``fext`` (..., nbodies+1, 6) is held constant in
    the body frames.  One compiled O(n·d) call (Carpentier & Mansard's world-frame sweeps).
    On a model with mimic joints: the chain rule ``Gᵀ (∂τ_x/∂x_x) G`` through the model with
    the mimic joints made independent (`Model.independent_mimic`).
    """
    if fext is None and GATE is not None:
        # (a model with mimic joints straight to its own gate entry: through the other one first,
        # which declines it, its call cost ~0.8 µs more)
        try:
            mimic = model._index["mimic"]
        except AttributeError:
            mimic = False  # (not a Model: _gated names it)
        if mimic:
            r = _mimic_gated(model, _MIMIC_RNEA_D_C, _c_mimic_rnea_derivatives, "_MIMIC_RNEA_D_C", q, v, a)
            if r is None:  # (a list, a view, another dtype: the route of plain arrays)
                r = _mimic_gated(model, _MIMIC_RNEA_D_C, _c_mimic_rnea_derivatives, "_MIMIC_RNEA_D_C", *_plain(model, q, v, a, "a"))
        else:
            r = _gated(model, _RNEA_D_C, _c_rnea_derivatives, "_RNEA_D_C", q, v, a, "rnea_derivatives")
        if r is not None:
            return r
    if model._index["mimic"]:
        return _mimic_rnea_derivatives(model, q, v, a, fext)
    return _run(model, rnea_derivatives_kernel, rnea_derivatives_batch, q, v, a, fext,
                "a", "the acceleration, model.nv entries", "rnea_derivatives")


@fast_front(_ABA_D_ENTRY, out=False, parts=3, skip=MIMIC)
def aba_derivatives(model: Model, q, v, tau, fext=None):
    """``(∂q̈/∂q, ∂q̈/∂v, ∂q̈/∂τ)`` of forward dynamics, each (..., nv, nv).

    ``∂q̈/∂x = −M⁻¹ ∂τ/∂x`` at ``q̈ = FD(q, v, τ)``, ``∂q̈/∂τ = M⁻¹`` (``M⁻¹`` by the
    recursive inverse of `mass_matrix_inverse`, module docstring).  One compiled call.
    On a model with mimic joints: ``q̈ = aba(...)`` of the reduced model, then
    ``∂q̈/∂x = −M⁻¹ Gᵀ (∂τ_x/∂x_x) G`` with ``M = Gᵀ M_x G`` (`Model.independent_mimic`).
    """
    if fext is None and GATE is not None:
        # (a model with mimic joints straight to its own gate entry: through the other one first,
        # which declines it, its call cost ~0.8 µs more)
        try:
            mimic = model._index["mimic"]
        except AttributeError:
            mimic = False  # (not a Model: _gated names it)
        if mimic:
            r = _mimic_gated(model, _MIMIC_ABA_D_C, _c_mimic_aba_derivatives, "_MIMIC_ABA_D_C", q, v, tau)
            if r is None:  # (a list, a view, another dtype: the route of plain arrays)
                r = _mimic_gated(model, _MIMIC_ABA_D_C, _c_mimic_aba_derivatives, "_MIMIC_ABA_D_C", *_plain(model, q, v, tau, "tau"))
        else:
            r = _gated(model, _ABA_D_C, _c_aba_derivatives, "_ABA_D_C", q, v, tau, "aba_derivatives")
        if r is not None:
            return r
    if model._index["mimic"]:
        return _mimic_aba_derivatives(model, q, v, tau, fext)
    return _run(model, aba_derivatives_kernel, aba_derivatives_batch, q, v, tau, fext,
                "tau", "generalized forces, model.nv entries", "aba_derivatives")


def _mimic_aba_derivatives(model: Model, q, v, tau, fext):
    from dqdyn.dynamics.aba import aba

    qdd = aba(model, q, v, tau, fext)  # (checks the inputs and broadcasts them with fext)
    mx, G, qx, vx, ax = _expanded(model, q, v, qdd, "tau", "generalized forces, model.nv entries")
    dq, dv, M = (G.T @ D @ G for D in rnea_derivatives(mx, qx, vx, ax, fext))
    Minv = np.linalg.inv(M)
    return -(Minv @ dq), -(Minv @ dv), Minv


__all__ = ["rnea_derivatives", "aba_derivatives"]


def hybrid_dynamics_derivatives(model: Model, q, v, a, tau, prescribed, fext=None):
    """Derivatives of hybrid dynamics (the corrected form of [Kim2012, Table 7], whose inputs and final ``∂F_i`` lines are garbled in
    print).

    Hybrid dynamics maps the inputs ``u`` (``u[k] = a[k]`` for prescribed DoFs, ``tau[k]`` for
    the others) to the outputs ``y`` (``y[k] = τ[k]`` for prescribed DoFs, ``q̈[k]`` for the
    others).  Returns ``(∂y/∂q, ∂y/∂v, ∂y/∂u)``, each (..., nv, nv), from the inverse-dynamics
    derivatives at the hybrid solution: with ``P`` prescribed and ``F`` free DoFs,
    ``∂q̈_F/∂x = −M_FF⁻¹ ∂τ_F/∂x``, ``∂τ_P/∂x = ∂τ_P/∂x|_{q̈} + M_PF ∂q̈_F/∂x`` (x = q, v),
    ``∂q̈_F/∂a_P = −M_FF⁻¹ M_FP``, ``∂q̈_F/∂τ_F = M_FF⁻¹``, ``∂τ_P/∂a_P = M_PP + M_PF ∂q̈_F/∂a_P``,
    ``∂τ_P/∂τ_F = M_PF M_FF⁻¹``.
    """
    from dqdyn.dynamics.hybrid import hybrid_dynamics

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


# the regressor form lives in .regressor; imported here for callers that take it from this module
from dqdyn.dynamics.regressor import INERTIAL_PARAMETERS, inertial_parameters, joint_torque_regressor  # noqa: E402,F401
