"""Lie derivatives of functions of a pose, in the dual quaternion algebra of [MontgomerySmith2023].

Montgomery-Smith & Shy, *Using Lie derivatives with dual quaternions for parallel robots*
(arXiv:2202.09268v9; [MontgomerySmith2023]).  Everything in `dqdyn.parallel` is written in the paper's coordinates; this module
also holds the conversions to the rest of dqdyn.

Conventions (read this once)
----------------------------
* **Poses** are unit dual quaternions ``η = Q + ε ½ t Q`` [MontgomerySmith2023, eq. (6)], stored as dqdyn's
  ``vec8 = [Q, B]`` -- the same object as dqdyn's ``x = r + ε ½ p r``.
* **β-coordinates** [MontgomerySmith2023, eqs. (17)–(21)].  A vector dual quaternion ``θ = a' + ε b'`` (both parts
  pure quaternions) is the 6-vector ``θ = (a'_x, a'_y, a'_z, b'_x, b'_y, b'_z)`` in the basis
  ``(i, j, k, εi, εj, εk)``.
* **Twists.**  The paper writes the body (moving-frame) twist as ``φ = ½ w + ½ ε v`` (eq. 13,
  ``η̇ = η φ``, eq. 14), so its β-coordinates are ``(½ ω, ½ v)`` where dqdyn's body twist is
  ``vec6 = [ω, v]``: ``φ_β = ½ ξ`` (`twist_to_beta`, `beta_to_twist`).
* **Wrenches.**  The paper writes ``τ = 2 q + 2 ε p`` (eq. 26; ``q`` torque, ``p`` force, both at the
  moving-frame origin in moving-frame axes), so ``τ_β = (2 q, 2 p)``; dqdyn's wrench is
  ``vec6 = [f, τ] = [p, q]`` (`wrench_to_beta`, `beta_to_wrench`).  The two power
  pairings agree: ``τ_β · φ_β = q·ω + p·v = ⟨ω, τ⟩ + ⟨v, f⟩`` (eq. 29).
* **Lie derivatives** (eq. 46) ``L_θ g = d/dr g(η (1 + r θ))|_{r=0}`` are *right* (body-frame)
  perturbations.  ``L_i = L_{β_i}`` (eq. 49) is **twice** the usual body-frame partial derivative
  (eq. 52-53): ``L g = 2 ∂g/∂(ω, v)`` where ``∂g/∂(ω, v)`` is the usual body Jacobian (rotation
  columns first).  Hence ``Λ = 2 J_body`` for actuator lengths, ``ℓ̇ = Λ φ_β = J_body ξ`` (eq. 67),
  and the wrench of actuator forces ``τ_β = Λᵀ f`` (eq. 69) is ``[f, τ]_dqdyn =
  beta_to_wrench(Λᵀ f)``.
* **Array layout of Lie derivatives.**  `lie_derivative` returns ``g.shape + (6,)``
  (a Jacobian: last axis = direction ``i``).  `second_lie_derivative` returns
  ``g.shape + (6, 6)`` with entry ``[..., j, i] = L_i L_j g`` -- the layout of the paper's
  ``L²ℓ_k`` (eq. 77, in its index reading): row ``j`` = component of ``L g``, column ``i``
  = direction of the outer derivative.  It is *not* symmetric (eq. 132).
* **Normalization** ``η̂ = η |η|⁻¹`` uses the dual-number norm ``|η| = |A| + ε (A·B)/|A|``
  (eqs. 30-33).  The expansion printed in eq. (33) is wrong unless ``|Q| = 1``; the correct one
  (the printed expansion is wrong) is ``Q/|Q| + ε (B/|Q| − (B·Q) Q/|Q|³)`` (`normalize`;
  `normalize_printed` keeps the printed form for the claims tests only).
* **Pose update / retraction** (eq. 86): ``η ← η · normalize(1 + θ)`` (`pose_update`).
"""

from __future__ import annotations

import math

import numpy as np

from dqdyn import errors
from dqdyn._engine.boundary import kernel_rows
from dqdyn._engine.jit import kernel
from dqdyn.algebra._core import dq_mul as k_dq_mul
from dqdyn.algebra._core import qrot_inv as k_dir_to_body  # Q* n_w Q [MontgomerySmith2023, eq. (121)]
from dqdyn.algebra.dualquat import conj as dq_conj
from dqdyn.algebra.dualquat import mul as dq_mul
from dqdyn.algebra.rotations import quat_conj as _qconj
from dqdyn.algebra.rotations import quat_multiply as _qmul

__all__ = [
    "beta_to_dq",
    "dq_to_beta",
    "twist_to_beta",
    "beta_to_twist",
    "wrench_to_beta",
    "beta_to_wrench",
    "dq_mul",
    "dq_conj",
    "normalize",
    "normalize_printed",
    "pose_update",
    "size_l",
    "commutator",
    "pose",
    "pose_rotation",
    "pose_translation",
    "point_in_body",
    "direction_in_body",
    "lie_point",
    "lie_direction",
    "lie_derivative",
    "lie_derivative_along",
    "second_lie_derivative",
]

# error_model="numpy": a division by zero (e.g. a leg of zero length, an attachment point that
# coincides with its anchor) gives inf / NaN instead of raising ZeroDivisionError inside a
# kernel; the Python front ends turn non-finite results into dqdyn.errors with the argument named.
njit = kernel(error_model="numpy")
# Small helpers called from the kernels.  They are ordinary njit functions: LLVM inlines them
# into the callers anyway (same run time), while numba's IR-level ``inline="always"`` made a cold
# compile of dqdyn.parallel about 3x slower (≈38 s instead of ≈13 s on a 2-core machine).
inline = kernel(error_model="numpy")

# =========================================================================== compiled kernels


@inline
def k_normalize_one_plus(theta, out):
    """``out = normalize(1 + θ)`` for β-coordinates ``θ`` (6,) -- [MontgomerySmith2023, eq. (33)], corrected.

    ``A = 1 + a'``, ``B = b'``: ``Â = A/|A|``, ``B̂ = B/|A| − (A·B) A/|A|³`` with ``A·B = a'·b'``.
    """
    a1, a2, a3 = theta[0], theta[1], theta[2]
    b1, b2, b3 = theta[3], theta[4], theta[5]
    n2 = 1.0 + a1 * a1 + a2 * a2 + a3 * a3
    inv = 1.0 / math.sqrt(n2)
    ab = (a1 * b1 + a2 * b2 + a3 * b3) * inv * inv
    out[0] = inv
    out[1] = a1 * inv
    out[2] = a2 * inv
    out[3] = a3 * inv
    out[4] = -ab * inv
    out[5] = (b1 - ab * a1) * inv
    out[6] = (b2 - ab * a2) * inv
    out[7] = (b3 - ab * a3) * inv


@inline
def k_normalize(eta, out):
    """``out = η |η|⁻¹`` (dual-number norm; [MontgomerySmith2023, eq. (33)] corrected).  May alias."""
    q0, q1, q2, q3 = eta[0], eta[1], eta[2], eta[3]
    b0, b1, b2, b3 = eta[4], eta[5], eta[6], eta[7]
    n2 = q0 * q0 + q1 * q1 + q2 * q2 + q3 * q3
    inv = 1.0 / math.sqrt(n2)
    bq = (q0 * b0 + q1 * b1 + q2 * b2 + q3 * b3) / n2
    out[0] = q0 * inv
    out[1] = q1 * inv
    out[2] = q2 * inv
    out[3] = q3 * inv
    out[4] = (b0 - bq * q0) * inv
    out[5] = (b1 - bq * q1) * inv
    out[6] = (b2 - bq * q2) * inv
    out[7] = (b3 - bq * q3) * inv


@inline
def k_pose_update(eta, theta, tmp, out):
    """``out = η normalize(1 + θ)`` [MontgomerySmith2023, eq. (86)].  ``tmp`` is an (8,) scratch."""
    k_normalize_one_plus(theta, tmp)
    k_dq_mul(eta, tmp, out)


@inline
def k_size_l_diff(a, b, inv_l2):
    """``size_l(a − b)`` ([MontgomerySmith2023, eq. (9)], printed typo fixed) with ``inv_l2 = 1/l²``."""
    p = 0.0
    d = 0.0
    for k in range(4):
        x = a[k] - b[k]
        p += x * x
        y = a[4 + k] - b[4 + k]
        d += y * y
    return math.sqrt(p + inv_l2 * d)


@inline
def k_rot_trans(eta, rq, t):
    """Split a unit pose ``η = Q + ε B`` into ``Q`` (copied into ``rq``) and ``t = 2 B Q*``."""
    q0, q1, q2, q3 = eta[0], eta[1], eta[2], eta[3]
    d0, d1, d2, d3 = eta[4], eta[5], eta[6], eta[7]
    rq[0] = q0
    rq[1] = q1
    rq[2] = q2
    rq[3] = q3
    t[0] = 2.0 * (-d0 * q1 + d1 * q0 - d2 * q3 + d3 * q2)
    t[1] = 2.0 * (-d0 * q2 + d1 * q3 + d2 * q0 - d3 * q1)
    t[2] = 2.0 * (-d0 * q3 - d1 * q2 + d2 * q1 + d3 * q0)


@inline
def k_world_to_body(rq, t, xw, out):
    """``out = Q* (x_w − t) Q``: body coordinates of the fixed point ``x_w`` [MontgomerySmith2023, eq. (120)]."""
    out[0], out[1], out[2] = xw[0] - t[0], xw[1] - t[1], xw[2] - t[2]
    k_dir_to_body(rq, out, out)  # (reads its input before writing)


@njit
def _pose_update_batch(eta, theta, out):  # pragma: no cover - compiled
    tmp = np.empty(8)
    for k in range(eta.shape[0]):
        k_pose_update(eta[k], theta[k], tmp, out[k])


@njit
def _normalize_batch(eta, out):  # pragma: no cover - compiled
    for k in range(eta.shape[0]):
        k_normalize(eta[k], out[k])


# =========================================================================== numpy helpers


def _arr(x, name, last):
    try:
        a = np.asarray(x, dtype=float)
    except (TypeError, ValueError):
        raise errors.ShapeError(f"{name} must be a real array of shape (..., {last})") from None
    if a.ndim == 0 or a.shape[-1] != last:
        raise errors.ShapeError(f"{name} must have shape (..., {last}); got {a.shape}")
    if not np.all(np.isfinite(a)):
        raise errors.NonFiniteError(f"{name} contains NaN or infinity")
    if not a.flags.writeable:  # (numba compiles every kernel again for a read-only array)
        a = a.copy()
    return a


def beta_to_dq(theta):
    """Vector dual quaternion (vec8) with β-coordinates ``θ`` (..., 6) [MontgomerySmith2023, eq. (21)]."""
    theta = np.asarray(theta, dtype=float)
    out = np.zeros(theta.shape[:-1] + (8,))
    out[..., 1:4] = theta[..., :3]
    out[..., 5:8] = theta[..., 3:]
    return out


def dq_to_beta(h):
    """β-coordinates (..., 6) of the vector part of a dual quaternion (vec8)."""
    h = np.asarray(h, dtype=float)
    return np.concatenate([h[..., 1:4], h[..., 5:8]], axis=-1)


def twist_to_beta(xi):
    """dqdyn body twist ``[ω, v]`` → ``φ_β = (½ω, ½v)`` of [MontgomerySmith2023, eq. (13)]."""
    return 0.5 * np.asarray(xi, dtype=float)


def beta_to_twist(phi):
    """``φ_β = (½ω, ½v)`` of [MontgomerySmith2023] → dqdyn body twist ``[ω, v]``."""
    return 2.0 * np.asarray(phi, dtype=float)


def wrench_to_beta(wrench):
    """dqdyn body wrench ``[f, τ]`` → ``τ_β = (2q, 2p) = (2τ, 2f)`` of [MontgomerySmith2023, eq. (26)]."""
    w = np.asarray(wrench, dtype=float)
    return 2.0 * np.concatenate([w[..., 3:], w[..., :3]], axis=-1)


def beta_to_wrench(tau):
    """``τ_β = (2q, 2p)`` of [MontgomerySmith2023] → dqdyn body wrench ``[f, τ] = [p, q]`` (force first)."""
    t = np.asarray(tau, dtype=float)
    return 0.5 * np.concatenate([t[..., 3:], t[..., :3]], axis=-1)


def normalize(eta):
    """``η̂ = η |η|⁻¹`` with the dual-number norm ([MontgomerySmith2023, eq. (33)], corrected expansion).

    ``Q/|Q| + ε (B/|Q| − (B·Q) Q/|Q|³)``: a unit dual quaternion, the identity on unit inputs,
    and multiplicative, ``(η₁η₂)^ = η̂₁ η̂₂`` (eq. 34).
    """
    eta = _arr(eta, "eta", 8)
    Q, B = eta[..., :4], eta[..., 4:]
    n2 = np.sum(Q * Q, axis=-1, keepdims=True)
    if np.any(n2 == 0.0):
        raise errors.SingularError("eta: primary part is zero, normalization undefined")
    nq = np.sqrt(n2)
    bq = np.sum(B * Q, axis=-1, keepdims=True)
    return np.concatenate([Q / nq, B / nq - bq * Q / (nq * n2)], axis=-1)


def normalize_printed(eta):
    """The expansion *as printed* in [MontgomerySmith2023, eq. (33)]: ``Q/|Q| + ε (B − (B·Q) Q/|Q|²)``.

    Wrong unless ``|Q| = 1`` (the printed expansion is wrong): it is not multiplicative.  Kept only so the claims
    tests can show the difference; use `normalize`.
    """
    eta = np.asarray(eta, dtype=float)
    Q, B = eta[..., :4], eta[..., 4:]
    n2 = np.sum(Q * Q, axis=-1, keepdims=True)
    bq = np.sum(B * Q, axis=-1, keepdims=True)
    return np.concatenate([Q / np.sqrt(n2), B - bq * Q / n2], axis=-1)


def pose_update(eta, theta):
    """The pose update / retraction ``η ← η · normalize(1 + θ)`` [MontgomerySmith2023, eq. (86)].

    ``θ`` are β-coordinates (..., 6).  Agrees with ``η exp(θ)`` to ``O(θ³)`` (Lemma 1, eqs.
    100-102), and its derivative in ``θ`` at 0 is the identity (eq. 112).
    """
    eta = _arr(eta, "eta", 8)
    theta = _arr(theta, "theta", 6)
    shape = np.broadcast_shapes(eta.shape[:-1], theta.shape[:-1])
    e = kernel_rows(np.broadcast_to(eta, shape + (8,)).reshape(-1, 8))
    t = kernel_rows(np.broadcast_to(theta, shape + (6,)).reshape(-1, 6))
    out = np.empty_like(e)
    _pose_update_batch(e, t, out)
    return out.reshape(shape + (8,))


def size_l(h, l=1.0):
    """``size_l(h) = (|P(h)|² + l⁻² |D(h)|²)^½`` ([MontgomerySmith2023, eq. (9)], printed typo fixed)."""
    h = np.asarray(h, dtype=float)
    return np.sqrt(np.sum(h[..., :4] ** 2, -1) + np.sum(h[..., 4:] ** 2, -1) / (l * l))


def commutator(theta, psi):
    """β-coordinates of ``θψ − ψθ`` for vector dual quaternions (used in eq. 132).

    With ``θ = a + εb``, ``ψ = c + εd``: ``θψ − ψθ = 2 (a×c) + 2ε (a×d + b×c)``.
    """
    theta = np.asarray(theta, dtype=float)
    psi = np.asarray(psi, dtype=float)
    a, b = theta[..., :3], theta[..., 3:]
    c, d = psi[..., :3], psi[..., 3:]
    return 2.0 * np.concatenate([np.cross(a, c), np.cross(a, d) + np.cross(b, c)], axis=-1)


def pose(rotation=None, translation=None):
    """Unit pose ``η = Q + ε ½ t Q`` [MontgomerySmith2023, eq. (6)] from a quaternion ``[w,x,y,z]`` and ``t``."""
    Q = np.array([1.0, 0, 0, 0]) if rotation is None else np.asarray(rotation, dtype=float)
    t = np.zeros(3) if translation is None else np.asarray(translation, dtype=float)
    shape = np.broadcast_shapes(Q.shape[:-1], t.shape[:-1])
    Q = np.broadcast_to(Q, shape + (4,))
    Q = Q / np.linalg.norm(Q, axis=-1, keepdims=True)
    tq = np.concatenate([np.zeros(shape + (1,)), np.broadcast_to(t, shape + (3,))], axis=-1)
    return np.concatenate([Q, 0.5 * _qmul(tq, Q)], axis=-1)


def pose_rotation(eta):
    """Rotation matrix (..., 3, 3) of the pose ``η``."""
    eta = np.asarray(eta, dtype=float)
    w, x, y, z = np.moveaxis(eta[..., :4], -1, 0)
    return np.stack(
        [
            np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)], -1),
            np.stack([2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)], -1),
            np.stack([2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)], -1),
        ],
        axis=-2,
    )


def pose_translation(eta):
    """Translation ``t = 2 B Q*`` [MontgomerySmith2023, eq. (8)] of the pose ``η``."""
    eta = np.asarray(eta, dtype=float)
    return 2.0 * _qmul(eta[..., 4:], _qconj(eta[..., :4]))[..., 1:]


def point_in_body(eta, s_world):
    """Moving-frame coordinates ``s = Q*(s̃ Q − 2B) = Rᵀ(s̃ − t)`` of a fixed point (eq. 120)."""
    R = pose_rotation(eta)
    t = pose_translation(eta)
    return np.einsum("...ji,...j->...i", R, np.asarray(s_world, dtype=float) - t)


def direction_in_body(eta, n_world):
    """Moving-frame coordinates ``n = Q* ñ Q`` of a fixed direction (eq. 121)."""
    R = pose_rotation(eta)
    return np.einsum("...ji,...j->...i", R, np.asarray(n_world, dtype=float))


def _skew(r):
    r = np.asarray(r, dtype=float)
    z = np.zeros(r.shape[:-1])
    return np.stack(
        [
            np.stack([z, -r[..., 2], r[..., 1]], -1),
            np.stack([r[..., 2], z, -r[..., 0]], -1),
            np.stack([-r[..., 1], r[..., 0], z], -1),
        ],
        -2,
    )


def lie_point(eta, s_world):
    """Analytic Lie derivative of a fixed point seen from the moving frame [MontgomerySmith2023, eq. (59)].

    Returns ``(s, Ls)``: ``s`` (..., 3) the body coordinates (eq. 120) and ``Ls`` (..., 3, 6) with
    ``L_θ s = Ls θ = 2 [S_s  −I] θ`` (eq. 59/125: ``−a×s − b`` for ``θ = ½a + ½εb``).
    """
    s = point_in_body(eta, s_world)
    eye = np.broadcast_to(np.eye(3), s.shape[:-1] + (3, 3))
    return s, 2.0 * np.concatenate([_skew(s), -eye], axis=-1)


def lie_direction(eta, n_world):
    """Analytic Lie derivative of a fixed direction seen from the moving frame (eq. 61/126).

    Returns ``(n, Ln)`` with ``L_θ n = Ln θ = 2 [S_n  0] θ``.
    """
    n = direction_in_body(eta, n_world)
    z = np.zeros(n.shape[:-1] + (3, 3))
    return n, 2.0 * np.concatenate([_skew(n), z], axis=-1)


# =========================================================================== numeric Lie derivatives

_BETA = np.eye(6)
# 4th-order central difference stencil for f'(0): (f(-2h) - 8 f(-h) + 8 f(h) - f(2h)) / 12h
_ST4 = ((-2.0, 1.0 / 12.0), (-1.0, -8.0 / 12.0), (1.0, 8.0 / 12.0), (2.0, -1.0 / 12.0))
_ST2 = ((-1.0, -0.5), (1.0, 0.5))


def _perturb(eta, theta, r):
    """``η · normalize(1 + r θ)`` for a single pose (numpy, no checks)."""
    t = r * theta
    a, b = t[:3], t[3:]
    n2 = 1.0 + a @ a
    inv = 1.0 / math.sqrt(n2)
    ab = (a @ b) / n2
    n = np.array([inv, *(a * inv), -ab * inv, *((b - ab * a) * inv)])
    return dq_mul(eta, n)


def lie_derivative_along(g, eta, theta, *, h=1e-3, order=4):
    """Numeric ``L_θ g(η) = d/dr g(η · normalize(1 + rθ))|₀`` [MontgomerySmith2023, eq. (46)].

    Central differences of order ``order`` (2 or 4) with step ``h`` on the curve
    ``r ↦ η normalize(1 + rθ)`` (the normalized extension; by Lemma 2 the result does not depend
    on the extension).  ``g`` maps a unit pose (8,) to a float or an array.
    """
    eta = _arr(eta, "eta", 8)
    theta = np.asarray(theta, dtype=float)
    st = _ST4 if order == 4 else _ST2
    acc = None
    for k, c in st:
        v = c * np.asarray(g(_perturb(eta, theta, k * h)), dtype=float)
        acc = v if acc is None else acc + v
    return acc / h


def lie_derivative(g, eta, *, h=1e-3, order=4):
    """Numeric full Lie derivative ``L g`` [MontgomerySmith2023, eq. (50)] of any function of a pose.

    Returns ``g.shape + (6,)``: ``[..., i] = L_i g`` (eq. 49), i.e. twice the usual body-frame
    Jacobian (rotation columns first).  For actuator lengths this is ``Λ`` (eq. 66).
    """
    cols = [lie_derivative_along(g, eta, _BETA[i], h=h, order=order) for i in range(6)]
    return np.stack(cols, axis=-1)


def second_lie_derivative(g, eta, *, h=1e-3, order=4):
    """Numeric second Lie derivative: ``g.shape + (6, 6)`` with ``[..., j, i] = L_i L_j g``.

    Computed as the Lie derivative of `lie_derivative` (nested central differences), so the
    layout matches the paper's ``L²ℓ`` (eq. 77, in its index reading).  Not symmetric (eq. 132); the
    Hessian of ``g(η normalize(1+θ))`` at 0 is its symmetric part (eq. 72).
    """
    return lie_derivative(lambda e: lie_derivative(g, e, h=h, order=order), eta, h=h, order=order)
