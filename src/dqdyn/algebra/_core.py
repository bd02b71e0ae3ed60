"""Compiled scalar kernels of the dual quaternion algebra.

These are the building blocks every compiled algorithm of dqdyn is written with.  They work on
one element at a time, on 1-D float64 views (length 4 for quaternions, 8 for dual quaternions,
6 for pure dual quaternions in ``vec6`` form) and write into an ``out`` view, so that the
recursions that call them allocate nothing.

Layouts (see the README, "Conventions"):

* quaternion ``[w, x, y, z]`` (scalar first);
* dual quaternion ``vec8 = [P(h), D(h)]`` ([Silva2022, footnote 9], DQ Robotics' ``vec8``);
* pure dual quaternion ``vec6``: twist ``ω + ε v -> [ω, v]``, wrench ``f + ε τ -> [f, τ]``
  (``vec6 = Ī vec8`` of [Silva2022, §4.1]);
* pose ``x = r + ε ½ p r`` [Silva2022thesis, eq. (3.10)].

The array-level public functions in `dqdyn.algebra.dualquat` broadcast over batch axes and
call these kernels; nothing here checks its input.
"""

from __future__ import annotations

import math

import numpy as np

from dqdyn._engine.jit import kernel

# Small helpers, inlined into their callers by numba at the IR level (cheap to inline, and an
# ordinary call would reference-count every array view passed to it, in the innermost loops).
# The algorithms' cores (ne_core, crba_core, hybrid_kernel, …) are ordinary kernels instead,
# compiled once and called: see dqdyn._engine.jit.
jit = kernel(inline="always", error_model="numpy")


# --------------------------------------------------------------------------- quaternions
@jit
def qmul(a, b, out):
    """Hamilton product ``out = a b`` of quaternions (scalar first).  ``out`` may not alias."""
    a0, a1, a2, a3 = a[0], a[1], a[2], a[3]
    b0, b1, b2, b3 = b[0], b[1], b[2], b[3]
    out[0] = a0 * b0 - a1 * b1 - a2 * b2 - a3 * b3
    out[1] = a0 * b1 + a1 * b0 + a2 * b3 - a3 * b2
    out[2] = a0 * b2 - a1 * b3 + a2 * b0 + a3 * b1
    out[3] = a0 * b3 + a1 * b2 - a2 * b1 + a3 * b0


@jit
def qrot(r, v, out):
    """``out = Ad(r) v = r v r*`` for a unit quaternion ``r`` and a 3-vector ``v``.

    Computed as ``v + 2 w (u × v) + 2 u × (u × v)`` with ``r = w + u`` (18 mult., 12 add.).
    """
    w, ux, uy, uz = r[0], r[1], r[2], r[3]
    vx, vy, vz = v[0], v[1], v[2]
    tx = 2.0 * (uy * vz - uz * vy)
    ty = 2.0 * (uz * vx - ux * vz)
    tz = 2.0 * (ux * vy - uy * vx)
    out[0] = vx + w * tx + (uy * tz - uz * ty)
    out[1] = vy + w * ty + (uz * tx - ux * tz)
    out[2] = vz + w * tz + (ux * ty - uy * tx)


@jit
def qrot_inv(r, v, out):
    """``out = Ad(r*) v = r* v r`` (the inverse rotation)."""
    w, ux, uy, uz = r[0], -r[1], -r[2], -r[3]
    vx, vy, vz = v[0], v[1], v[2]
    tx = 2.0 * (uy * vz - uz * vy)
    ty = 2.0 * (uz * vx - ux * vz)
    tz = 2.0 * (ux * vy - uy * vx)
    out[0] = vx + w * tx + (uy * tz - uz * ty)
    out[1] = vy + w * ty + (uz * tx - ux * tz)
    out[2] = vz + w * tz + (ux * ty - uy * tx)


@jit
def cross3(a, b, out):
    """``out = a × b`` (the cross product of pure quaternions, [Silva2022, eq. (7)])."""
    x = a[1] * b[2] - a[2] * b[1]
    y = a[2] * b[0] - a[0] * b[2]
    z = a[0] * b[1] - a[1] * b[0]
    out[0] = x
    out[1] = y
    out[2] = z


@jit
def dot3(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


@jit
def qexp_pure(a, out):
    """Quaternion exponential of the pure quaternion ``a`` (3-vector): ``cos|a| + sinc|a| a``."""
    th2 = a[0] * a[0] + a[1] * a[1] + a[2] * a[2]
    th = math.sqrt(th2)
    if th < 1e-4:
        s = 1.0 - th2 / 6.0 + th2 * th2 / 120.0
        c = 1.0 - th2 / 2.0 + th2 * th2 / 24.0
    else:
        s = math.sin(th) / th
        c = math.cos(th)
    out[0] = c
    out[1] = s * a[0]
    out[2] = s * a[1]
    out[3] = s * a[2]


@jit
def qlog_unit(r, out):
    """Logarithm of a unit quaternion with ``r0 >= 0``: the pure ``a`` with ``exp(a) = r``.

    ``|a|`` is half the rotation angle, in ``[0, π/2]``.  The caller flips the sign of ``r``
    first when ``r0 < 0`` (``r`` and ``-r`` are the same rotation).
    """
    n = math.sqrt(r[1] * r[1] + r[2] * r[2] + r[3] * r[3])
    th = math.atan2(n, r[0])
    if n < 1e-8:
        # th/sin(th) with sin(th) = n and cos(th) = r0 ~ 1:  th/n = 1/r0 (1 + O(n^2))
        k = (1.0 + n * n / 6.0) / r[0]
    else:
        k = th / n
    out[0] = k * r[1]
    out[1] = k * r[2]
    out[2] = k * r[3]


# --------------------------------------------------------------------------- dual quaternions
@jit
def dq_mul(a, b, out):
    """Dual quaternion product ``out = a b`` ([Silva2022, §2]: ``P = a_P b_P``, ``D = a_P b_D + a_D b_P``)."""
    a0, a1, a2, a3, a4, a5, a6, a7 = a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7]
    b0, b1, b2, b3, b4, b5, b6, b7 = b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]
    out[0] = a0 * b0 - a1 * b1 - a2 * b2 - a3 * b3
    out[1] = a0 * b1 + a1 * b0 + a2 * b3 - a3 * b2
    out[2] = a0 * b2 - a1 * b3 + a2 * b0 + a3 * b1
    out[3] = a0 * b3 + a1 * b2 - a2 * b1 + a3 * b0
    out[4] = (a0 * b4 - a1 * b5 - a2 * b6 - a3 * b7) + (a4 * b0 - a5 * b1 - a6 * b2 - a7 * b3)
    out[5] = (a0 * b5 + a1 * b4 + a2 * b7 - a3 * b6) + (a4 * b1 + a5 * b0 + a6 * b3 - a7 * b2)
    out[6] = (a0 * b6 - a1 * b7 + a2 * b4 + a3 * b5) + (a4 * b2 - a5 * b3 + a6 * b0 + a7 * b1)
    out[7] = (a0 * b7 + a1 * b6 - a2 * b5 + a3 * b4) + (a4 * b3 + a5 * b2 - a6 * b1 + a7 * b0)


@jit
def dq_mul_tuple(a, b):
    """The dual quaternion product ``a b`` of two 8-tuples, as an 8-tuple (the operations of
    `dq_mul`, kept in registers)."""
    a0, a1, a2, a3, a4, a5, a6, a7 = a
    b0, b1, b2, b3, b4, b5, b6, b7 = b
    return (a0 * b0 - a1 * b1 - a2 * b2 - a3 * b3,
            a0 * b1 + a1 * b0 + a2 * b3 - a3 * b2,
            a0 * b2 - a1 * b3 + a2 * b0 + a3 * b1,
            a0 * b3 + a1 * b2 - a2 * b1 + a3 * b0,
            (a0 * b4 - a1 * b5 - a2 * b6 - a3 * b7) + (a4 * b0 - a5 * b1 - a6 * b2 - a7 * b3),
            (a0 * b5 + a1 * b4 + a2 * b7 - a3 * b6) + (a4 * b1 + a5 * b0 + a6 * b3 - a7 * b2),
            (a0 * b6 - a1 * b7 + a2 * b4 + a3 * b5) + (a4 * b2 - a5 * b3 + a6 * b0 + a7 * b1),
            (a0 * b7 + a1 * b6 - a2 * b5 + a3 * b4) + (a4 * b3 + a5 * b2 - a6 * b1 + a7 * b0))


@jit
def dq_conj(a, out):
    """Conjugate ``a* = Re(a) − Im(a)`` [Silva2022, §2]."""
    out[0] = a[0]
    out[1] = -a[1]
    out[2] = -a[2]
    out[3] = -a[3]
    out[4] = a[4]
    out[5] = -a[5]
    out[6] = -a[6]
    out[7] = -a[7]


@jit
def pose_translation(x, out):
    """Translation ``p = 2 D(x) P(x)*`` of the unit dual quaternion ``x = r + ε ½ p r``."""
    r0, r1, r2, r3 = x[0], -x[1], -x[2], -x[3]
    d0, d1, d2, d3 = x[4], x[5], x[6], x[7]
    out[0] = 2.0 * (d0 * r1 + d1 * r0 + d2 * r3 - d3 * r2)
    out[1] = 2.0 * (d0 * r2 - d1 * r3 + d2 * r0 + d3 * r1)
    out[2] = 2.0 * (d0 * r3 + d1 * r2 - d2 * r1 + d3 * r0)


@jit
def pose_from_rt(r, p, out):
    """``out = r + ε ½ p r`` [Silva2022thesis, eq. (3.10)]."""
    out[0] = r[0]
    out[1] = r[1]
    out[2] = r[2]
    out[3] = r[3]
    px, py, pz = 0.5 * p[0], 0.5 * p[1], 0.5 * p[2]
    out[4] = -px * r[1] - py * r[2] - pz * r[3]
    out[5] = px * r[0] + py * r[3] - pz * r[2]
    out[6] = -px * r[3] + py * r[0] + pz * r[1]
    out[7] = px * r[2] - py * r[1] + pz * r[0]


@jit
def ad6_values(x, xi):
    """``Ad(x) ξ = x ξ x*`` as a 6-tuple, for a unit ``x`` and a pure ``ξ`` in vec6 form; ``x``
    (8 entries) and ``ξ`` (6) arrays or tuples, so a caller can keep both in registers.

    Expanded form of [Silva2022, eq. (3)]: with ``x = r + ε ½ p r`` and ``ξ = a + ε b``,
    ``Ad(x) ξ = a' + ε (b' + p × a')`` where ``a' = r a r*``, ``b' = r b r*``.  Twists
    ``ω + ε v`` and wrenches ``f + ε τ`` transform with the same map.
    """
    r0, r1, r2, r3 = x[0], x[1], x[2], x[3]
    # translation p = 2 D r*
    d0, d1, d2, d3 = x[4], x[5], x[6], x[7]
    px = 2.0 * (-d0 * r1 + d1 * r0 - d2 * r3 + d3 * r2)
    py = 2.0 * (-d0 * r2 + d1 * r3 + d2 * r0 - d3 * r1)
    pz = 2.0 * (-d0 * r3 - d1 * r2 + d2 * r1 + d3 * r0)
    # a' = r a r*
    vx, vy, vz = xi[0], xi[1], xi[2]
    tx = 2.0 * (r2 * vz - r3 * vy)
    ty = 2.0 * (r3 * vx - r1 * vz)
    tz = 2.0 * (r1 * vy - r2 * vx)
    ax = vx + r0 * tx + (r2 * tz - r3 * ty)
    ay = vy + r0 * ty + (r3 * tx - r1 * tz)
    az = vz + r0 * tz + (r1 * ty - r2 * tx)
    # b' = r b r*
    vx, vy, vz = xi[3], xi[4], xi[5]
    tx = 2.0 * (r2 * vz - r3 * vy)
    ty = 2.0 * (r3 * vx - r1 * vz)
    tz = 2.0 * (r1 * vy - r2 * vx)
    bx = vx + r0 * tx + (r2 * tz - r3 * ty)
    by = vy + r0 * ty + (r3 * tx - r1 * tz)
    bz = vz + r0 * tz + (r1 * ty - r2 * tx)
    return (ax, ay, az, bx + (py * az - pz * ay), by + (pz * ax - px * az),
            bz + (px * ay - py * ax))


@jit
def ad6(x, xi, out):
    """``out = Ad(x) ξ = x ξ x*`` (the adjoint, `ad6_values`).  ``out`` may alias ``xi``."""
    out[0], out[1], out[2], out[3], out[4], out[5] = ad6_values(x, xi)


@jit
def ad6_inv_values(x, xi):
    """``Ad(x*) ξ = x* ξ x`` as a 6-tuple (the inverse adjoint); ``x`` (8 entries) and ``ξ`` (6)
    arrays or tuples, so a caller can keep both in registers.

    With ``x = r + ε ½ p r``: ``a' = r* a r``, ``b' = r* (b − p × a) r``.
    """
    r0, r1, r2, r3 = x[0], x[1], x[2], x[3]
    d0, d1, d2, d3 = x[4], x[5], x[6], x[7]
    px = 2.0 * (-d0 * r1 + d1 * r0 - d2 * r3 + d3 * r2)
    py = 2.0 * (-d0 * r2 + d1 * r3 + d2 * r0 - d3 * r1)
    pz = 2.0 * (-d0 * r3 - d1 * r2 + d2 * r1 + d3 * r0)
    ax0, ay0, az0 = xi[0], xi[1], xi[2]
    bx0 = xi[3] - (py * az0 - pz * ay0)
    by0 = xi[4] - (pz * ax0 - px * az0)
    bz0 = xi[5] - (px * ay0 - py * ax0)
    # rotate both by r* (negate the vector part)
    u1, u2, u3 = -r1, -r2, -r3
    tx = 2.0 * (u2 * az0 - u3 * ay0)
    ty = 2.0 * (u3 * ax0 - u1 * az0)
    tz = 2.0 * (u1 * ay0 - u2 * ax0)
    o0 = ax0 + r0 * tx + (u2 * tz - u3 * ty)
    o1 = ay0 + r0 * ty + (u3 * tx - u1 * tz)
    o2 = az0 + r0 * tz + (u1 * ty - u2 * tx)
    tx = 2.0 * (u2 * bz0 - u3 * by0)
    ty = 2.0 * (u3 * bx0 - u1 * bz0)
    tz = 2.0 * (u1 * by0 - u2 * bx0)
    return (o0, o1, o2, bx0 + r0 * tx + (u2 * tz - u3 * ty), by0 + r0 * ty + (u3 * tx - u1 * tz),
            bz0 + r0 * tz + (u1 * ty - u2 * tx))


@jit
def ad6_inv(x, xi, out):
    """``out = Ad(x*) ξ = x* ξ x`` (the inverse adjoint, `ad6_inv_values`).  ``out`` may
    alias ``xi``."""
    out[0], out[1], out[2], out[3], out[4], out[5] = ad6_inv_values(x, xi)


@jit
def cross6(a, b, out):
    """Cross product of pure dual quaternions [Silva2022, eq. (8)]:

    ``(l + ε l') × (s + ε s') = l × s + ε (l × s' + l' × s)`` — the Lie bracket of twists
    (motion cross product).  ``out`` may alias neither input.
    """
    l0, l1, l2, m0, m1, m2 = a[0], a[1], a[2], a[3], a[4], a[5]
    s0, s1, s2, t0, t1, t2 = b[0], b[1], b[2], b[3], b[4], b[5]
    out[0] = l1 * s2 - l2 * s1
    out[1] = l2 * s0 - l0 * s2
    out[2] = l0 * s1 - l1 * s0
    out[3] = (l1 * t2 - l2 * t1) + (m1 * s2 - m2 * s1)
    out[4] = (l2 * t0 - l0 * t2) + (m2 * s0 - m0 * s2)
    out[5] = (l0 * t1 - l1 * t0) + (m0 * s1 - m1 * s0)


@jit
def power6(twist, wrench):
    """Power pairing of a twist ``ω + ε v`` and a wrench ``f + ε τ``: ``⟨ω, τ⟩ + ⟨v, f⟩``."""
    return (
        twist[0] * wrench[3]
        + twist[1] * wrench[4]
        + twist[2] * wrench[5]
        + twist[3] * wrench[0]
        + twist[4] * wrench[1]
        + twist[5] * wrench[2]
    )


@jit
def dq_exp_pure(g, out):
    """Exponential ``exp(g) = Σ g^k / k!`` of the pure dual quaternion ``g = a + ε b`` (vec6).

    ``P = cos θ + sinc θ a`` and ``D`` is the directional derivative of the quaternion
    exponential at ``a`` along ``b`` (``ε² = 0``):
    ``D = −sinc θ ⟨a, b⟩ + sinc θ b + (cos θ − sinc θ)/θ² ⟨a, b⟩ a``, ``θ = |a|``.
    Exact for every ``θ`` (series near 0).  ``exp(½ ξ t)`` is the screw motion generated by the
    constant body twist ``ξ`` over time ``t``.
    """
    a0, a1, a2 = g[0], g[1], g[2]
    b0, b1, b2 = g[3], g[4], g[5]
    th2 = a0 * a0 + a1 * a1 + a2 * a2
    ab = a0 * b0 + a1 * b1 + a2 * b2
    if th2 < 1e-8:
        s = 1.0 - th2 / 6.0 + th2 * th2 / 120.0
        c = 1.0 - th2 / 2.0 + th2 * th2 / 24.0
        k = -1.0 / 3.0 + th2 / 30.0 - th2 * th2 / 840.0
    else:
        th = math.sqrt(th2)
        s = math.sin(th) / th
        c = math.cos(th)
        k = (c - s) / th2
    out[0] = c
    out[1] = s * a0
    out[2] = s * a1
    out[3] = s * a2
    out[4] = -s * ab
    out[5] = s * b0 + k * ab * a0
    out[6] = s * b1 + k * ab * a1
    out[7] = s * b2 + k * ab * a2


@jit
def dq_log_unit(x, out):
    """Logarithm of a unit dual quaternion: the pure ``g`` (vec6) with ``exp(g) = ±x``.

    The sign of ``x`` is chosen so that ``P0 >= 0`` (``x`` and ``−x`` are the same pose), so the
    rotation part has ``|a| = φ/2 ∈ [0, π/2]`` and the inversion of the directional derivative
    of `dq_exp_pure` is well conditioned for every rotation angle ``φ ∈ [0, π]``.
    """
    sg = 1.0
    if x[0] < 0.0:
        sg = -1.0
    r0, r1, r2, r3 = sg * x[0], sg * x[1], sg * x[2], sg * x[3]
    d0, d1, d2, d3 = sg * x[4], sg * x[5], sg * x[6], sg * x[7]
    n = math.sqrt(r1 * r1 + r2 * r2 + r3 * r3)
    th = math.atan2(n, r0)
    th2 = th * th
    if n < 1e-8:
        kk = (1.0 + n * n / 6.0) / r0
    else:
        kk = th / n
    a0, a1, a2 = kk * r1, kk * r2, kk * r3
    if th2 < 1e-8:
        s = 1.0 - th2 / 6.0 + th2 * th2 / 120.0
        k = -1.0 / 3.0 + th2 / 30.0 - th2 * th2 / 840.0
    else:
        s = math.sin(th) / th
        k = (math.cos(th) - s) / th2
    ab = -d0 / s
    out[0] = a0
    out[1] = a1
    out[2] = a2
    out[3] = (d1 - k * ab * a0) / s
    out[4] = (d2 - k * ab * a1) / s
    out[5] = (d3 - k * ab * a2) / s


@jit
def copy_into(src, out):
    for k in range(src.shape[0]):
        out[k] = src[k]


IDENTITY8 = np.array([1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0])
