"""Rodrigues/Gibbs vector-parameters and dual vector-parameters [Mladenova].

A rotation by the angle ``α`` about the unit axis ``e`` (active) has the vector-parameter
``c = tan(α/2) e`` ∈ ℝ³ [Mladenova, §2.4].  Conventions, with the corrections to the printed
formulas noted where they apply:

* Cayley map (65): ``O(c) = ((1 − c²) I + 2 c cᵀ + 2 c^×) / (1 + c²)``;
* inverse map (66): ``c^× = (O − Oᵀ)/(1 + tr O)``, singular at half-turns (``tr O = −1``);
* composition (67): ``⟨c1, c2⟩ = (c1 + c2 + c1 × c2)/(1 − c1·c2)`` with
  ``O(⟨c1, c2⟩) = O(c1) O(c2)``; identity 0, inverse ``−c``; singular when ``c1·c2 = 1``;
* quaternion link: ``c = q_vec / q0`` for the Hamilton quaternion ``q = (cos α/2, sin α/2 e)``
  (**not** the printed (72), ``(−q3, −q2, q1)/q0``: erratum);
* angular velocity (79), KDE (81), angular acceleration (80), spatial and body forms;
* second chart: ``d = c / sqrt(1 + c²)``, ``|d| = sin(α/2)`` (the printed (68) ``c/(1 + c²)``
  gives ``½ sin α``: erratum), with ``O'(d)`` (69) and the composition (70);
* dual vector-parameter of the displacement ``r ↦ O(c) r + p`` (unit dual quaternion
  ``q̂ = q + ε ½ p q``): ``ĉ = c + μ ½ (p + p × c + (c·p) c) = vec(q̂)/scal(q̂)`` (derived
  here; [Mladenova] uses it only through eqs. (151)–(156)), dual orthogonal matrix ``Ô = O(ĉ) = O + μ p^× O``
  (151), and dual composition, which composes SE(3) like the pose product.

Dual numbers ``a + μ b`` (``μ² = 0``) are carried as pairs of arrays ``(a, b)``.
"""

from __future__ import annotations

import numpy as np

from dqdyn import errors
from dqdyn.algebra.dualquat import _arr, _cross3, _dot, _qconj, _qmul
from dqdyn.algebra.inertia import _mat3, skew


def _outer(a, b):
    return a[..., :, None] * b[..., None, :]


# --------------------------------------------------------------------------- conversions


def vp_from_quat(q, *, tol: float = 1e-12):
    """Vector-parameter ``c = q_vec / q0`` (..., 3) of a rotation quaternion (..., 4).

    [Mladenova, §2.5], with the corrected form of eq. (72): the correct link is ``c = (q1, q2, q3)/q0``.  Invariant
    under ``q -> −q`` and under scaling of ``q``.  Raises SingularError at a half-turn
    (``|q0| <= tol |q|``).
    """
    q = _arr(q, "q", 4)
    nq = np.linalg.norm(q, axis=-1)
    if np.any(np.abs(q[..., 0]) <= tol * nq) or np.any(nq == 0):
        raise errors.SingularError("q is a half-turn (q0 = 0): its vector-parameter is infinite")
    return q[..., 1:] / q[..., :1]


def quat_from_vp(c):
    """Unit quaternion ``(1, c)/sqrt(1 + c²)`` (..., 4), ``q0 > 0`` (inverse of `vp_from_quat`)."""
    c = _arr(c, "c", 3)
    s = 1.0 / np.sqrt(1.0 + _dot(c, c))[..., None]
    return np.concatenate([s, s * c], axis=-1)


def matrix_from_vp(c):
    """Cayley map, [Mladenova, eq. (65)]: ``O(c) = ((1 − c²) I + 2 c cᵀ + 2 c^×)/(1 + c²)`` (..., 3, 3)."""
    c = _arr(c, "c", 3)
    c2 = _dot(c, c)[..., None, None]
    return ((1.0 - c2) * np.eye(3) + 2.0 * _outer(c, c) + 2.0 * skew(c)) / (1.0 + c2)


def vp_from_matrix(O, *, tol: float = 1e-10):
    """Inverse map, [Mladenova, eq. (66)]: ``c^× = (O − Oᵀ)/(1 + tr O)`` → ``c`` (..., 3).

    Raises SingularError when ``1 + tr O <= tol`` (a half-turn, ``α = π``; ``1 + tr O =
    4/(1 + c²)``).
    """
    O = _mat3(O, "O")
    den = 1.0 + np.trace(O, axis1=-2, axis2=-1)
    if np.any(den <= tol):
        raise errors.SingularError("O is (numerically) a half-turn: 1 + tr O = 0, vector-parameter undefined")
    A = O - np.swapaxes(O, -1, -2)
    v = np.stack([A[..., 2, 1], A[..., 0, 2], A[..., 1, 0]], axis=-1)
    return v / den[..., None]


def vp_compose(c1, c2, *, tol: float = 1e-12):
    """Composition, [Mladenova, eq. (67)]: ``⟨c1, c2⟩ = (c1 + c2 + c1 × c2)/(1 − c1·c2)``.

    ``O(⟨c1, c2⟩) = O(c1) O(c2)`` (``c2`` is applied first to a vector).  Raises SingularError
    when ``|1 − c1·c2| <= tol (1 + |c1·c2|)`` (the composite is a half-turn; use the second
    chart `vp_second_chart` / `second_chart_compose` or quaternions there).
    """
    c1 = _arr(c1, "c1", 3)
    c2 = _arr(c2, "c2", 3)
    d = _dot(c1, c2)
    den = 1.0 - d
    if np.any(np.abs(den) <= tol * (1.0 + np.abs(d))):
        raise errors.SingularError("c1·c2 = 1: the composition is a half-turn ([Mladenova, eq. (67)] is singular)")
    return (c1 + c2 + _cross3(c1, c2)) / den[..., None]


def vp_inverse(c):
    """Inverse vector-parameter ``−c`` (``O(−c) = O(c)ᵀ``; [Mladenova, §2.4])."""
    return -_arr(c, "c", 3)


# --------------------------------------------------------------------------- kinematics


def vp_angular_velocity(c, c_dot, *, frame: str = "spatial"):
    """Angular velocity from ``(c, ċ)``, [Mladenova, eq. (79)].

    ``frame="spatial"``: ``ω = 2/(1 + c²) (ċ + c × ċ)`` (79), ``Ω = Ȯ Oᵀ``;
    ``frame="body"``:    ``ω_b = Oᵀ ω = 2/(1 + c²) (ċ − c × ċ)`` (not printed; used in (394)).
    """
    c = _arr(c, "c", 3)
    cd = _arr(c_dot, "c_dot", 3)
    sgn = _frame_sign(frame)
    return 2.0 / (1.0 + _dot(c, c))[..., None] * (cd + sgn * _cross3(c, cd))


def vp_kde(c, omega, *, frame: str = "spatial"):
    """Kinematic differential equation, [Mladenova, eq. (81)]: ``ċ`` (..., 3) from ``ω``.

    ``frame="spatial"``: ``ċ = ½ (I − c^× + c cᵀ) ω = [O(−c) + I] ω / (1 + tr O)`` (81);
    ``frame="body"``:    ``ċ = ½ (I + c^× + c cᵀ) ω_b``.
    """
    c = _arr(c, "c", 3)
    w = _arr(omega, "omega", 3)
    sgn = _frame_sign(frame)
    return 0.5 * (w - sgn * _cross3(c, w) + c * _dot(c, w)[..., None])


def vp_angular_acceleration(c, c_dot, c_ddot, *, frame: str = "spatial"):
    """Angular acceleration, [Mladenova, eq. (80)]:

    spatial ``ω̇ = 2/(1 + c²) (c̈ + c × c̈ − ω (c·ċ))``; body
    ``ω̇_b = 2/(1 + c²) ((I − c^×) c̈ − ω_b (c·ċ))``.
    """
    c = _arr(c, "c", 3)
    cd = _arr(c_dot, "c_dot", 3)
    cdd = _arr(c_ddot, "c_ddot", 3)
    sgn = _frame_sign(frame)
    w = vp_angular_velocity(c, cd, frame=frame)
    k = 2.0 / (1.0 + _dot(c, c))[..., None]
    return k * (cdd + sgn * _cross3(c, cdd) - w * _dot(c, cd)[..., None])


def _frame_sign(frame):
    if frame == "spatial":
        return 1.0
    if frame == "body":
        return -1.0
    raise ValueError(f"frame must be 'spatial' or 'body'; got {frame!r}")


# --------------------------------------------------------------------------- second chart


def vp_second_chart(c):
    """Second chart ``d = c / sqrt(1 + c²)`` (..., 3), ``|d| = sin(α/2)`` (d = the quaternion's vector part).

    The corrected form of [Mladenova, eq. (68)] (the printed ``c/(1 + c²)`` has norm ``½ sin α``).
    """
    c = _arr(c, "c", 3)
    return c / np.sqrt(1.0 + _dot(c, c))[..., None]


def vp_from_second_chart(d, *, tol: float = 1e-12):
    """Inverse of `vp_second_chart`: ``c = d / sqrt(1 − d²)`` (SingularError at ``|d| = 1``)."""
    d = _arr(d, "d", 3)
    s = 1.0 - _dot(d, d)
    if np.any(s <= tol):
        raise errors.SingularError("|d| = 1 is a half-turn: no finite vector-parameter")
    return d / np.sqrt(s)[..., None]


def matrix_from_second_chart(d):
    """[Mladenova, eq. (69)]: ``O'(d) = I + 2 (sqrt(1 − d²) I + d^×) d^×`` (..., 3, 3), ``|d| <= 1``."""
    d = _arr(d, "d", 3)
    S = skew(d)
    s = np.sqrt(np.clip(1.0 - _dot(d, d), 0.0, None))[..., None, None]
    return np.eye(3) + 2.0 * (s * S + S @ S)


def second_chart_compose(d1, d2):
    """[Mladenova, eq. (70)]: ``⟨d1, d2⟩ = d1 sqrt(1 − d2²) + d2 sqrt(1 − d1²) + d1 × d2``.

    The vector part of the product of the quaternions ``(sqrt(1 − d²), d)`` with non-negative
    scalar parts; it represents ``O'(d1) O'(d2)`` when the product's scalar part is >= 0.
    """
    d1 = _arr(d1, "d1", 3)
    d2 = _arr(d2, "d2", 3)
    s1 = np.sqrt(np.clip(1.0 - _dot(d1, d1), 0.0, None))[..., None]
    s2 = np.sqrt(np.clip(1.0 - _dot(d2, d2), 0.0, None))[..., None]
    return d1 * s2 + d2 * s1 + _cross3(d1, d2)


# --------------------------------------------------------------------------- dual vector-parameters


def dual_vp_from_pose(x, *, tol: float = 1e-12):
    """Dual vector-parameter ``ĉ = c + μ c'`` of the pose ``x = q + ε ½ p q`` → ``(c, c')``.

    ``c = q_vec/q0`` and ``c' = ½ (p + p × c + (c·p) c)`` (derived here, not printed;
    equals ``c + μ A p`` with ``A`` of [Mladenova, eq. (102)]).  Equivalently ``ĉ = vec(q̂)/scal(q̂)``
    computed in dual arithmetic.  SingularError at a half-turn.
    """
    x = _arr(x, "x", 8)
    c = vp_from_quat(x[..., :4], tol=tol)
    p = 2.0 * _qmul(x[..., 4:], _qconj(x[..., :4]))[..., 1:]
    return c, 0.5 * (p + _cross3(p, c) + c * _dot(c, p)[..., None])


def pose_from_dual_vp(c, c_dual):
    """Unit dual quaternion ``x = q + ε ½ p q`` (..., 8), ``q0 > 0``, of ``ĉ = c + μ c'``.

    Inverts `dual_vp_from_pose`: ``q = (1, c)/sqrt(1 + c²)`` and, with
    ``c' = A p``, ``A = ½ (I − c^× + c cᵀ)`` [Mladenova, eq. (102)],
    ``p = A⁻¹ c' = 2/(1 + c²) (c' + c × c')``.
    """
    c = _arr(c, "c", 3)
    cd = _arr(c_dual, "c_dual", 3)
    q = quat_from_vp(c)
    p = 2.0 / (1.0 + _dot(c, c))[..., None] * (cd + _cross3(c, cd))
    p4 = np.concatenate([np.zeros(p.shape[:-1] + (1,)), p], axis=-1)
    q, p4 = np.broadcast_arrays(q, p4)
    return np.concatenate([q, 0.5 * _qmul(p4, q)], axis=-1)


def dual_vp_compose(c1, c1_dual, c2, c2_dual, *, tol: float = 1e-12):
    """Dual composition ``⟨ĉ1, ĉ2⟩ = (ĉ1 + ĉ2 + ĉ1 × ĉ2)/(1 − ĉ1·ĉ2)`` in dual arithmetic.

    [Mladenova, eq. (67)] over dual numbers ([Mladenova, §4.2, eqs. (153)–(156)]): the result is the dual
    vector-parameter of the pose product ``x1 x2``.  Returns ``(c, c')``.  SingularError as in
    `vp_compose`.
    """
    a = _arr(c1, "c1", 3)
    ad = _arr(c1_dual, "c1_dual", 3)
    b = _arr(c2, "c2", 3)
    bd = _arr(c2_dual, "c2_dual", 3)
    n0 = a + b + _cross3(a, b)
    n1 = ad + bd + _cross3(a, bd) + _cross3(ad, b)
    d = _dot(a, b)
    d0 = 1.0 - d
    if np.any(np.abs(d0) <= tol * (1.0 + np.abs(d))):
        raise errors.SingularError("c1·c2 = 1: the composition is a half-turn ([Mladenova, eq. (67)] is singular)")
    d1 = -(_dot(a, bd) + _dot(ad, b))
    d0 = d0[..., None]
    d1 = d1[..., None]
    return n0 / d0, n1 / d0 - n0 * d1 / d0**2


def dual_orthogonal_matrix(c, c_dual):
    """Dual orthogonal matrix ``Ô = O(ĉ) = O + μ O'`` → ``(O, O')`` (..., 3, 3) each.

    Evaluates the Cayley map (65) in dual arithmetic at ``ĉ = c + μ c'``; [Mladenova, eq. (151)]
    (corrected reading): ``O' = p^× O``, ``p`` the translation, so ``Ô`` maps
    Plücker lines ``[e; x × e]`` like the 6×6 matrix ``[[O, 0], [p^× O, O]]`` (eqs. 148–150).
    """
    c = _arr(c, "c", 3)
    cd = _arr(c_dual, "c_dual", 3)
    I = np.eye(3)
    c2 = _dot(c, c)[..., None, None]
    c2d = 2.0 * _dot(c, cd)[..., None, None]
    N0 = (1.0 - c2) * I + 2.0 * _outer(c, c) + 2.0 * skew(c)
    N1 = -c2d * I + 2.0 * (_outer(cd, c) + _outer(c, cd)) + 2.0 * skew(cd)
    den0 = 1.0 + c2
    return N0 / den0, N1 / den0 - N0 * c2d / den0**2


__all__ = [
    "vp_from_quat",
    "quat_from_vp",
    "matrix_from_vp",
    "vp_from_matrix",
    "vp_compose",
    "vp_inverse",
    "vp_angular_velocity",
    "vp_kde",
    "vp_angular_acceleration",
    "vp_second_chart",
    "vp_from_second_chart",
    "matrix_from_second_chart",
    "second_chart_compose",
    "dual_vp_from_pose",
    "pose_from_dual_vp",
    "dual_vp_compose",
    "dual_orthogonal_matrix",
]
