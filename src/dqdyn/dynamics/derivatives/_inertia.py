"""World-frame rigid and composite inertias as 10 parameters, their rate and the planar joint's
terms: the small inlined helpers of the derivative sweeps (`dqdyn.dynamics.derivatives._sweeps`)."""

from __future__ import annotations

import math

from dqdyn._engine.jit import kernel
from dqdyn.multibody.model import MF_COM, MF_INERTIA, MF_MASS

ijit = kernel(inline="always", error_model="numpy")  # small helpers, inlined at the IR level


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

