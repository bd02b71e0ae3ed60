"""Array-level dual quaternion algebra: every function broadcasts over leading batch axes.

Representation (project-wide, see the README "Conventions"):

* a dual quaternion ``h = P(h) + ε D(h)`` is a float array ``(..., 8)``, scalar first,
  ``vec8 h = [h1..h4, h5..h8] = [P(h), D(h)]`` ([Silva2022, footnote 9], DQ Robotics' ``vec8``);
* a quaternion is ``(..., 4)`` ``[w, x, y, z]``;
* a pure dual quaternion (``Re = 0``) may be given in ``vec6`` form ``(..., 6)`` ([Silva2022, §4.1],
  ``vec6 = Ī vec8``): a twist ``ω + ε v -> [ω, v]``, a wrench ``f + ε τ -> [f, τ]``;
* a dual number ``a + ε b`` (the values of `norm` and `inner`) is ``(..., 2)``;
* a pose is the unit dual quaternion ``x = r + ε ½ p r`` [Silva2022thesis, eq. (3.10)], ``p`` the
  translation in the reference frame; ``Ad(x) ξ = x ξ x*`` [Silva2022, eq. (3)].

Exponential and logarithm.  `exp` is the *true* exponential ``Σ g^k / k!`` of the algebra
[MontgomerySmith2023, eq. (101)].  For a constant body twist ``ξ``, ``exp(½ ξ t)`` is the screw motion it
generates in time ``t``; rotation and translation are coupled (a screw).  `log` is its
inverse on unit dual quaternions.  **DQ Robotics' ``log`` is different**: it returns
``½ φ n + ε ½ p`` (rotation and translation decoupled) and its ``exp`` is the matching
``exp(a) + ε b exp(a)``; those are provided here as `log_decoupled` /
`exp_decoupled`.  The two agree only for pure rotations and pure translations.

Inputs are checked once, at this public boundary: wrong last-axis size raises
`ShapeError` naming the argument, NaN/inf raises
`NonFiniteError`, a pose that must be unit and is not raises
`NotUnitError`, an element that must be invertible and is not raises
`SingularError`.  The compiled scalar kernels of `_core` (used here by
`exp` and `log`) check nothing.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from dqdyn import errors
from dqdyn._engine.checks import kernel_rows
from dqdyn._engine.jit import kernel
from dqdyn.algebra import _core
from dqdyn.algebra import rotations as _rot

# --------------------------------------------------------------------------- validation


def _arr(x, name: str, sizes, *, finite: bool = True) -> np.ndarray:
    """``x`` as a float64 array whose last axis has one of ``sizes``; checked."""
    if isinstance(sizes, int):
        sizes = (sizes,)
    try:
        a = np.asarray(x, dtype=float)
    except (TypeError, ValueError) as exc:
        raise errors.ShapeError(f"{name} must be a real array of shape (..., {sizes[0]}): {exc}") from None
    if a.ndim == 0 or a.shape[-1] not in sizes:
        want = " or ".join(f"(..., {s})" for s in sizes)
        raise errors.ShapeError(f"{name} must have shape {want}; got {a.shape}")
    if finite and not np.all(np.isfinite(a)):
        raise errors.NonFiniteError(f"{name} contains NaN or infinity")
    return a


def _check_unit(x: np.ndarray, name: str, atol: float) -> None:
    """Raise NotUnitError unless ``|P(x)| = 1`` and ``P(x)·D(x) = 0`` within ``atol``."""
    if not np.all(is_unit(x, atol=atol)):
        n = norm(x)
        bad = np.max(np.abs(n[..., 0] - 1.0) + np.abs(n[..., 1])) if n.size else 0.0
        raise errors.NotUnitError(
            f"{name} must be a unit dual quaternion (|P| = 1, P·D = 0 within {atol:g}); "
            f"worst deviation {bad:.3g}"
        )


def _cross3(a, b):
    return np.stack(
        [
            a[..., 1] * b[..., 2] - a[..., 2] * b[..., 1],
            a[..., 2] * b[..., 0] - a[..., 0] * b[..., 2],
            a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0],
        ],
        axis=-1,
    )


def _dot(a, b):
    return np.sum(a * b, axis=-1)


def _qmul(a, b):
    return _rot.quat_multiply(a, b)


def _qconj(a):
    return _rot.quat_conj(a)


def _qrot(r, v):
    """``r v r*`` for a unit quaternion ``r`` (..., 4) and a 3-vector ``v`` (..., 3)."""
    w = r[..., :1]
    u = r[..., 1:]
    t = 2.0 * _cross3(u, v)
    return v + w * t + _cross3(u, t)


def _pure(x, name):
    """Split a pure dual quaternion given as vec8 or vec6 into (a, b, was_vec8)."""
    a = _arr(x, name, (8, 6))
    if a.shape[-1] == 8:
        return a[..., 1:4], a[..., 5:8], True
    return a[..., 0:3], a[..., 3:6], False


def _join_pure(a, b, as_vec8: bool):
    a, b = np.broadcast_arrays(a, b)
    if as_vec8:
        z = np.zeros(a.shape[:-1] + (1,))
        return np.concatenate([z, a, z, b], axis=-1)
    return np.concatenate([a, b], axis=-1)


# --------------------------------------------------------------------------- parts, products


def mul(a, b):
    """Dual quaternion product ``a b`` [Silva2022, §2].

    ``(a_P + ε a_D)(b_P + ε b_D) = a_P b_P + ε (a_P b_D + a_D b_P)``.  Broadcasts (..., 8).
    """
    a = _arr(a, "a", 8)
    b = _arr(b, "b", 8)
    pa, da = a[..., :4], a[..., 4:]
    pb, db = b[..., :4], b[..., 4:]
    return np.concatenate([_qmul(pa, pb), _qmul(pa, db) + _qmul(da, pb)], axis=-1)


def conj(h):
    """Conjugate ``h* = Re(h) − Im(h)`` ([Silva2022, §2]; reverses products, [MontgomerySmith2023, eq. (2)])."""
    h = np.array(_arr(h, "h", 8), copy=True)
    h[..., [1, 2, 3, 5, 6, 7]] *= -1.0
    return h


def P(h):
    """Primary part ``P(h) = h1 + î h2 + ĵ h3 + k̂ h4`` as a quaternion (..., 4) [Silva2022, §2]."""
    return np.array(_arr(h, "h", 8)[..., :4])


def D(h):
    """Dual part ``D(h) = h5 + î h6 + ĵ h7 + k̂ h8`` as a quaternion (..., 4) [Silva2022, §2]."""
    return np.array(_arr(h, "h", 8)[..., 4:])


def Re(h):
    """Real part ``Re(h) = h1 + ε h5`` as a dual quaternion (..., 8) [Silva2022, §2]."""
    h = _arr(h, "h", 8)
    out = np.zeros_like(h)
    out[..., 0] = h[..., 0]
    out[..., 4] = h[..., 4]
    return out


def Im(h):
    """Imaginary part ``Im(h) = h − Re(h)`` as a dual quaternion (..., 8) [Silva2022, §2]."""
    h = np.array(_arr(h, "h", 8), copy=True)
    h[..., 0] = 0.0
    h[..., 4] = 0.0
    return h


def norm(h):
    """Dual-number norm ``|h| = |A| + ε (A·B)/|A|`` of ``h = A + ε B``, as (..., 2).

    [MontgomerySmith2023, eqs. (30)–(31)]: ``|h|² = h* h = |A|² + 2ε (A·B)``.  Multiplicative (eq. 32).
    For ``A = 0`` the norm is ``0`` (then ``|h|² = 0`` exactly) and the dual entry is set to 0.
    """
    h = _arr(h, "h", 8)
    A, B = h[..., :4], h[..., 4:]
    nA = np.linalg.norm(A, axis=-1)
    AB = _dot(A, B)
    dual = np.divide(AB, nA, out=np.zeros_like(AB), where=nA > 0)
    return np.stack([nA, dual], axis=-1)


def size_l(h, l):
    """Size with characteristic length ``l``: ``(|P(h)|² + l⁻² |D(h)|²)^½``
    (the corrected form of [MontgomerySmith2023, eq. (9)]).

    (The printed form has "D(B)"; it means ``D(h)``.)  Returns (...).
    """
    h = _arr(h, "h", 8)
    l = np.asarray(l, dtype=float)
    return np.sqrt(np.sum(h[..., :4] ** 2, -1) + np.sum(h[..., 4:] ** 2, -1) / l**2)


def normalize(h, *, tol: float = 0.0):
    """Normalization ``ĥ = |h|⁻¹ h`` of an invertible dual quaternion [MontgomerySmith2023, eq. (33)].

    Uses the **corrected** expansion of [MontgomerySmith2023, eq. (33)]::

        ĥ = Q/|Q| + ε ( B/|Q| − (B·Q) Q / |Q|³ ),     h = Q + ε B.

    The printed form ``Q/|Q| + ε (B − (B·Q)Q/|Q|²)`` agrees only when ``|Q| = 1``; it also gives
    a unit element but breaks ``normalize(a b) = normalize(a) normalize(b)`` (eq. 34), which the
    corrected form satisfies.  Raises SingularError if ``|Q| <= tol`` somewhere.
    """
    h = _arr(h, "h", 8)
    Q, B = h[..., :4], h[..., 4:]
    nQ = np.linalg.norm(Q, axis=-1, keepdims=True)
    if np.any(nQ <= tol):
        raise errors.SingularError("h has a (numerically) zero primary part; it cannot be normalized")
    u = Q / nQ
    # B/|Q| − (B·Q) Q/|Q|³  written as  (B − (B·u) u)/|Q|  (no |Q|³ overflow)
    return np.concatenate([u, (B - np.sum(B * u, axis=-1, keepdims=True) * u) / nQ], axis=-1)


def inv(h, *, tol: float = 1e-12):
    """Inverse ``h⁻¹ = A⁻¹ − ε A⁻¹ B A⁻¹`` of ``h = A + ε B`` [MontgomerySmith2023, eq. (3)].

    Valid for every invertible dual quaternion (``A ≠ 0``); for a unit element it equals
    ``conj(h)`` [MontgomerySmith2023, eq. (4)].  Raises SingularError if ``|A| <= tol``.
    """
    h = _arr(h, "h", 8)
    A, B = h[..., :4], h[..., 4:]
    nA2 = np.sum(A * A, axis=-1, keepdims=True)
    if np.any(nA2 <= tol * tol):
        raise errors.SingularError(f"h is not invertible: |P(h)| <= {tol:g} (the inverse h⁻¹ = A⁻¹ − ε A⁻¹ B A⁻¹ needs P(h) != 0)")
    Ainv = _qconj(A) / nA2
    return np.concatenate([Ainv, -_qmul(_qmul(Ainv, B), Ainv)], axis=-1)


def is_unit(h, *, atol: float = 1e-9):
    """Boolean (...): ``h* h = 1``, i.e. ``|P(h)| = 1`` and ``P(h)·D(h) = 0`` [MontgomerySmith2023, §2]."""
    h = _arr(h, "h", 8, finite=False)
    A, B = h[..., :4], h[..., 4:]
    return (np.abs(np.sum(A * A, axis=-1) - 1.0) <= atol) & (np.abs(_dot(A, B)) <= atol)


# --------------------------------------------------------------------------- vectorization


def vec8(h):
    """``vec8 h = [h1..h8]`` [Silva2022, footnote 9]: a checked float copy (..., 8)."""
    return np.array(_arr(h, "h", 8), copy=True)


def vec6(h):
    """``vec6 h = Ī vec8 h`` [Silva2022, §4.1]: drops the real entries h1, h5 → (..., 6).

    Twist ``ω + ε v -> [ω, v]``; wrench ``f + ε τ -> [f, τ]``.  Meant for pure ``h``; the real
    parts are discarded without a check.
    """
    return np.array(_arr(h, "h", 8)[..., [1, 2, 3, 5, 6, 7]])


def from_vec6(v):
    """The pure dual quaternion (..., 8) with ``vec6`` (..., 6) ``v`` (inverse of `vec6`)."""
    v = _arr(v, "v", 6)
    return _join_pure(v[..., :3], v[..., 3:], True)


def hamiplus4(q):
    """Left Hamilton operator ``H⁺₄(q)`` (..., 4, 4): ``vec4(q p) = H⁺₄(q) vec4 p`` [Silva2022, §2]."""
    q = _arr(q, "q", 4)
    a, b, c, d = np.moveaxis(q, -1, 0)
    return np.stack(
        [
            np.stack([a, -b, -c, -d], -1),
            np.stack([b, a, -d, c], -1),
            np.stack([c, d, a, -b], -1),
            np.stack([d, -c, b, a], -1),
        ],
        axis=-2,
    )


def haminus4(q):
    """Right Hamilton operator ``H⁻₄(q)`` (..., 4, 4): ``vec4(p q) = H⁻₄(q) vec4 p`` [Silva2022, §2]."""
    q = _arr(q, "q", 4)
    a, b, c, d = np.moveaxis(q, -1, 0)
    return np.stack(
        [
            np.stack([a, -b, -c, -d], -1),
            np.stack([b, a, d, -c], -1),
            np.stack([c, -d, a, b], -1),
            np.stack([d, c, -b, a], -1),
        ],
        axis=-2,
    )


def _block8(Pm, Dm):
    out = np.zeros(Pm.shape[:-2] + (8, 8))
    out[..., :4, :4] = Pm
    out[..., 4:, :4] = Dm
    out[..., 4:, 4:] = Pm
    return out


def hamiplus8(h):
    """``H⁺₈(h) = [[H⁺₄(P), 0], [H⁺₄(D), H⁺₄(P)]]`` (..., 8, 8): ``vec8(h g) = H⁺₈(h) vec8 g``.

    [Silva2022, §4.1] and [Silva2022thesis, §3.3.3.1] use it; the matrix is the block form of
    the quaternion operators [Silva2022, §2].
    """
    h = _arr(h, "h", 8)
    return _block8(hamiplus4(h[..., :4]), hamiplus4(h[..., 4:]))


def haminus8(h):
    """``H⁻₈(h) = [[H⁻₄(P), 0], [H⁻₄(D), H⁻₄(P)]]`` (..., 8, 8): ``vec8(g h) = H⁻₈(h) vec8 g``."""
    h = _arr(h, "h", 8)
    return _block8(haminus4(h[..., :4]), haminus4(h[..., 4:]))


# --------------------------------------------------------------------------- adjoint, brackets


def Ad(x, h):
    """Adjoint ``Ad(x) h = x h x*`` [Silva2022, eq. (3)], product form, (..., 8) inputs.

    For a unit ``x`` and a pure ``h`` the result is pure (twists and wrenches use the same map).
    ``x`` is not checked to be unit; for a non-unit ``x`` this is still ``x h x*``, not
    ``x h x⁻¹``.  See `Ad6` for the cheaper expanded form on vec6.
    """
    x = _arr(x, "x", 8)
    h = _arr(h, "h", 8)
    return mul(mul(x, h), conj(x))


def Ad6(x, xi):
    """``Ad(x) ξ`` for a unit pose ``x`` (..., 8) and a twist or wrench ``ξ`` in vec6 (..., 6).

    Expanded form of [Silva2022, eq. (3)]: with ``x = r + ε ½ p r`` and ``ξ = a + ε b``,
    ``Ad(x) ξ = a' + ε (b' + p × a')`` where ``a' = r a r*``, ``b' = r b r*``.  Equals the
    product form ``x ξ x*`` for unit ``x`` (not checked).
    """
    x = _arr(x, "x", 8)
    xi = _arr(xi, "xi", 6)
    r = x[..., :4]
    p = 2.0 * _qmul(x[..., 4:], _qconj(r))[..., 1:]
    a = _qrot(r, xi[..., :3])
    b = _qrot(r, xi[..., 3:]) + _cross3(p, a)
    return _join_pure(a, b, False)


def Ad6_inv(x, xi):
    """``Ad(x*) ξ = x* ξ x`` in vec6: ``a' = r* a r``, ``b' = r* (b − p × a) r`` (inverse of `Ad6`)."""
    x = _arr(x, "x", 8)
    xi = _arr(xi, "xi", 6)
    r = x[..., :4]
    p = 2.0 * _qmul(x[..., 4:], _qconj(r))[..., 1:]
    rc = _qconj(r)
    a0 = xi[..., :3]
    a = _qrot(rc, a0)
    b = _qrot(rc, xi[..., 3:] - _cross3(p, a0))
    return _join_pure(a, b, False)


def cross(a, b):
    """Cross product ``L × Σ = (L Σ − Σ L)/2`` of pure dual quaternions [Silva2022, eq. (8)].

    ``(l + ε l') × (s + ε s') = l × s + ε (l × s' + l' × s)``: the Lie bracket (ad) of twists,
    the motion cross product.  Inputs in vec8 (..., 8) or vec6 (..., 6); the output has the form
    of ``a``.  (Real parts of vec8 inputs commute and do not contribute.)
    """
    la, ma, as8 = _pure(a, "a")
    lb, mb, _ = _pure(b, "b")
    return _join_pure(_cross3(la, lb), _cross3(la, mb) + _cross3(ma, lb), as8)


def inner(a, b):
    """Inner product ``⟨L, Σ⟩ = −(L Σ + Σ L)/2`` of pure dual quaternions, a dual number (..., 2).

    ``⟨l + ε l', s + ε s'⟩ = ⟨l, s⟩ + ε (⟨l, s'⟩ + ⟨l', s⟩)`` [Silva2022, eq. (8), footnote 4].  Inputs vec8 or vec6; real parts of vec8 inputs are ignored (pure inputs).
    """
    la, ma, _ = _pure(a, "a")
    lb, mb, _ = _pure(b, "b")
    return np.stack([_dot(la, lb), _dot(la, mb) + _dot(ma, lb)], axis=-1)


def power(twist, wrench):
    """Power pairing of a twist ``ω + ε v`` and a wrench ``f + ε τ`` (vec6): ``⟨ω, τ⟩ + ⟨v, f⟩``.

    Invariant under a common change of frame: ``power(Ad6(x, ξ), Ad6(x, ζ)) = power(ξ, ζ)``.
    Equals the dual part of `inner` ([MontgomerySmith2023, eq. (29)] up to its factor conventions).
    """
    t = _arr(twist, "twist", 6)
    w = _arr(wrench, "wrench", 6)
    return _dot(t[..., :3], w[..., 3:]) + _dot(t[..., 3:], w[..., :3])


# --------------------------------------------------------------------------- exp / log


@kernel()
def _exp_batch(g, out):  # pragma: no cover - compiled
    for k in range(g.shape[0]):
        _core.dq_exp_pure(g[k], out[k])


@kernel()
def _log_batch(x, out):  # pragma: no cover - compiled
    for k in range(x.shape[0]):
        _core.dq_log_unit(x[k], out[k])


def exp(g):
    """True exponential ``exp(g) = Σ g^k / k!`` [MontgomerySmith2023, eq. (101)], (..., 8) result.

    ``g`` is a pure dual quaternion in vec6 (..., 6) or any dual quaternion in vec8 (..., 8);
    for vec8 the real (dual-number) part ``s + ε t`` factors out, ``exp(g) = e^s (1 + ε t)
    exp(Im g)``.  For pure ``g = a + ε b``: ``P = cos θ + sinc θ a``, ``D`` the directional
    derivative of the quaternion exponential along ``b`` (``θ = |a|``; exact, series near 0;
    kernel `dqdyn.algebra._core.dq_exp_pure`).  ``exp(½ ξ t)`` is the screw motion of the
    constant body twist ``ξ``.  Not DQ Robotics' ``exp`` (see `exp_decoupled`).
    """
    g = _arr(g, "g", (8, 6))
    if g.shape[-1] == 8:
        g6 = g[..., [1, 2, 3, 5, 6, 7]]
    else:
        g6 = g
    batch = g6.shape[:-1]
    flat = kernel_rows(g6.reshape(-1, 6))  # (a read-only input would compile a twin)
    out = np.empty((flat.shape[0], 8))
    if flat.shape[0]:
        _exp_batch(flat, out)
    out = out.reshape(batch + (8,))
    if g.shape[-1] == 8:
        es = np.exp(g[..., :1])
        t = g[..., 4:5]
        out = np.concatenate([es * out[..., :4], es * (out[..., 4:] + t * out[..., :4])], axis=-1)
    return out


def log(x, *, atol: float = 1e-6):
    """Logarithm of a unit dual quaternion: the pure ``g`` (..., 8) with ``exp(g) = ±x``.

    The sign is chosen so that ``P0 >= 0`` (``x`` and ``−x`` are the same pose), hence the
    rotation part has ``|P(g)| = φ/2 ∈ [0, π/2]``; correct for rotation angles ``φ ∈ [0, π]``
    and for pure translations (kernel `dqdyn.algebra._core.dq_log_unit`).
    ``log(exp(g)) = g`` when ``|P(g)| < π/2``.  Raises NotUnitError if ``x`` is not unit within
    ``atol``.  Not DQ Robotics' ``log`` (``½φn + ε½p``): see `log_decoupled`.
    """
    x = _arr(x, "x", 8)
    _check_unit(x, "x", atol)
    batch = x.shape[:-1]
    flat = kernel_rows(x.reshape(-1, 8))  # (a read-only input would compile a twin)
    out = np.empty((flat.shape[0], 6))
    if flat.shape[0]:
        _log_batch(flat, out)
    return from_vec6(out.reshape(batch + (6,)))


def _qexp_pure(a):
    th = np.linalg.norm(a, axis=-1, keepdims=True)
    small = th < 1e-4
    th2 = th * th
    ths = np.where(small, 1.0, th)
    s = np.where(small, 1.0 - th2 / 6.0 + th2 * th2 / 120.0, np.sin(ths) / ths)
    return np.concatenate([np.cos(th), s * a], axis=-1)


def _qlog_unit(r):
    """Pure quaternion (3-vector) ``a`` with ``exp(a) = r`` for unit ``r`` with ``r0 >= 0``."""
    n = np.linalg.norm(r[..., 1:], axis=-1, keepdims=True)
    th = np.arctan2(n, r[..., :1])
    small = n < 1e-8
    k = np.where(small, (1.0 + n * n / 6.0) / np.where(small, r[..., :1], 1.0), th / np.where(small, 1.0, n))
    return k * r[..., 1:]


def log_decoupled(x, *, atol: float = 1e-6):
    """DQ Robotics' logarithm ``½ φ n + ε ½ p`` (..., 8) of a unit pose ``x = r + ε ½ p r``.

    Rotation and translation are *decoupled*: the dual part is half the translation, not the
    screw's dual part (compare `log`).  The sign of ``x`` is chosen with ``P0 >= 0``, so
    ``φ ∈ [0, π]`` (DQ Robotics uses ``φ = 2 acos P0 ∈ [0, 2π]``; same pose).  Inverse:
    `exp_decoupled`.
    """
    x = _arr(x, "x", 8)
    _check_unit(x, "x", atol)
    sg = np.where(x[..., :1] < 0.0, -1.0, 1.0)
    r = sg * x[..., :4]
    half_p = _qmul(x[..., 4:], _qconj(x[..., :4]))[..., 1:]  # ½p = D P*, sign-free
    return _join_pure(_qlog_unit(r), half_p, True)


def exp_decoupled(g):
    """DQ Robotics' exponential ``r + ε D(g) r`` with ``r = exp(P(g))`` (inverse of `log_decoupled`).

    ``g`` is pure, vec8 (..., 8; real parts ignored) or vec6 (..., 6).  Returns (..., 8).
    """
    a, b, _ = _pure(g, "g")
    r = _qexp_pure(a)
    b4 = np.concatenate([np.zeros(b.shape[:-1] + (1,)), b], axis=-1)
    r, b4 = np.broadcast_arrays(r, b4)
    return np.concatenate([r, _qmul(b4, r)], axis=-1)


# --------------------------------------------------------------------------- poses


def pose(r, p, *, atol: float = 1e-6):
    """Unit dual quaternion ``x = r + ε ½ p r`` ([Silva2022thesis, eq. (3.10)]; [MontgomerySmith2023, eq. (6)]).

    ``r`` (..., 4) is a unit rotation quaternion (checked within ``atol``: NotUnitError),
    ``p`` (..., 3) the translation in the reference frame.  Broadcasts.
    """
    r = _arr(r, "r", 4)
    p = _arr(p, "p", 3)
    if np.any(np.abs(np.sum(r * r, axis=-1) - 1.0) > atol):
        raise errors.NotUnitError(f"r must be a unit quaternion (|r| = 1 within {atol:g})")
    return _rot.pose_from_rt(r, p)


def rotation(x):
    """Rotation quaternion ``r = P(x)`` (..., 4) of a pose ``x = r + ε ½ p r``."""
    return P(x)


def translation(x):
    """Translation ``p = 2 D(x) P(x)*`` (..., 3) of a pose ([MontgomerySmith2023, eq. (8)]: ``t = 2 B Q*``)."""
    x = _arr(x, "x", 8)
    return 2.0 * _qmul(x[..., 4:], _qconj(x[..., :4]))[..., 1:]


def rotation_matrix(x):
    """Rotation matrix (..., 3, 3) of the pose (or rotation quaternion) ``x``.

    ``x`` may be a pose (..., 8) or a unit quaternion (..., 4).
    """
    x = _arr(x, "x", (8, 4))
    return _rot.matrix_from_quat(x[..., :4])


# pose_from_matrix / matrix_from_pose: one definition each, in .rotations (re-exported here)
pose_from_matrix = _rot.pose_from_matrix
matrix_from_pose = _rot.matrix_from_pose


# --------------------------------------------------------------------------- screws


def screw_axis(direction, point, pitch=0.0, *, as_vec8: bool = False):
    """Unit screw (twist of unit angular speed) about a line, vec6 (..., 6) or vec8 (..., 8).

    Convention (Plücker, moment ``m = p × l``, DQ Robotics' ``l + ε m``)::

        S = l + ε (p × l + h l),   l = direction/|direction|,  p any point on the line,

    where ``h`` is the pitch (translation per radian).  As a twist ``ω + ε v`` it is unit
    angular velocity about the line plus ``h`` along it, ``v`` being the velocity of the point
    at the reference origin (the spatial twist ``ω + ε(ṗ + p × ω)`` of [Silva2022, §2]).  ``h = 0`` gives the
    Plücker line of a revolute joint; ``pitch = ±inf`` gives the pure translation ``0 + ε l``
    (prismatic joint).  ``exp(½ S θ)`` is the displacement by the angle ``θ`` about the screw.
    """
    d = _arr(direction, "direction", 3)
    pt = _arr(point, "point", 3)
    h = np.asarray(pitch, dtype=float)
    if np.any(np.isnan(h)):
        raise errors.NonFiniteError("pitch contains NaN")
    n = np.linalg.norm(d, axis=-1, keepdims=True)
    if np.any(n == 0.0):
        raise errors.SingularError("direction must be a non-zero vector")
    l = d / n
    h = h[..., None]
    inf = np.isinf(h)
    hf = np.where(inf, 0.0, h)
    ang = np.where(inf, 0.0, l)
    lin = np.where(inf, l, _cross3(pt, l) + hf * l)
    return _join_pure(ang, lin, as_vec8)


class Screw(NamedTuple):
    """A twist decomposed as ``magnitude × (l + ε (m + pitch l))`` (see `plucker_from_twist`)."""

    line: np.ndarray  #: Plücker line [l, m] (..., 6), |l| = 1, l·m = 0, m = p × l
    pitch: np.ndarray  #: (...), inf for pure translation
    magnitude: np.ndarray  #: (...), |ω| (or |v| for a pure translation)
    point: np.ndarray  #: (..., 3) the point of the axis closest to the origin


def plucker_from_twist(xi, *, tol: float = 1e-12):
    """Screw decomposition of a twist ``ξ = ω + ε v`` (vec6 (..., 6) or pure vec8): a `Screw`.

    For ``ω ≠ 0``: ``magnitude = |ω|``, ``l = ω/|ω|``, ``pitch = ω·v/|ω|²``, axis point
    ``p = ω × v / |ω|²`` and moment ``m = p × l``, so that
    ``ξ = magnitude · screw_axis(l, p, pitch)``.  For ``|ω| <= tol`` (pure translation):
    ``pitch = inf``, ``magnitude = |v|``, ``line = [v/|v|, 0]`` (direction through the origin),
    ``point = 0``.  The zero twist gives zeros and pitch 0.
    """
    w, v, _ = _pure(xi, "xi")
    nw = np.linalg.norm(w, axis=-1)
    nv = np.linalg.norm(v, axis=-1)
    rot = nw > tol
    nw_s = np.where(rot, nw, 1.0)[..., None]
    l = w / nw_s
    pitch = np.where(rot, _dot(w, v) / nw_s[..., 0] ** 2, np.where(nv > 0, np.inf, 0.0))
    point = np.where(rot[..., None], _cross3(w, v) / nw_s**2, 0.0)
    m = _cross3(point, l)
    trans_l = v / np.where(nv > 0, nv, 1.0)[..., None]
    l = np.where(rot[..., None], l, trans_l)
    m = np.where(rot[..., None], m, 0.0)
    mag = np.where(rot, nw, nv)
    return Screw(np.concatenate([l, m], axis=-1), pitch, mag, point)


__all__ = [
    "mul",
    "conj",
    "P",
    "D",
    "Re",
    "Im",
    "norm",
    "size_l",
    "normalize",
    "inv",
    "is_unit",
    "vec8",
    "vec6",
    "from_vec6",
    "hamiplus4",
    "haminus4",
    "hamiplus8",
    "haminus8",
    "Ad",
    "Ad6",
    "Ad6_inv",
    "cross",
    "inner",
    "power",
    "exp",
    "log",
    "exp_decoupled",
    "log_decoupled",
    "pose",
    "rotation",
    "translation",
    "rotation_matrix",
    "pose_from_matrix",
    "matrix_from_pose",
    "screw_axis",
    "Screw",
    "plucker_from_twist",
]
