"""SE(3) curves on unit dual quaternions: ScLERP and a C² interpolating cumulative B-spline.

Poses are unit dual quaternions ``x = r + ε ½ p r`` (..., 8) (README "Conventions").  Twists are
vec6 ``[ω, v]``: the *body* twist ``ξ_b = 2 x* ẋ`` (``ω_b = Rᵀ ω``, ``v_b = Rᵀ ṗ``; ``x(t) = x₀
exp(½ ξ_b t)`` for a constant one) and the *spatial* twist ``ξ_s = 2 ẋ x* = Ad(x) ξ_b``
(``ω``, ``ṗ + p × ω``: the velocity of the body point at the world origin).  The derivative of
the spatial twist is ``ξ̇_s = Ad(x) ξ̇_b`` (``[ξ_b, ξ_b] = 0``).

* `ScrewInterpolation` — ScLERP ``x(t) = x₀ exp(s(t) log(x₀* x₁))`` along the constant
  screw (dqdyn's true logarithm, `dqdyn.algebra.log`), with a time scaling ``s(t)``:
  ``"linear"``, ``"quintic"`` (rest to rest, zero acceleration at the ends) or
  ``"trapezoidal"``; ``ξ_b = 2 ṡ g``, ``ξ̇_b = 2 s̈ g``, ``g = log(x₀* x₁)``.
* `SE3Spline` — the cumulative cubic B-spline on the Lie group (Kim, Kim & Shin 1995;
  Sommer et al. 2020): ``x(u) = P_{k−1} Π_{j=1..3} exp(B̃_j(u) g_j)``, ``g_j = log(P*_{k+j−2}
  P_{k+j−1})``, uniform knots, C² in ``t``; body twist and its derivative by the exact
  recursion ``ξ_j = Ad(A_j⁻¹) ξ_{j−1} + 2 Ḃ̃_j g_j``, ``ξ̇_j = Ad(A_j⁻¹) ξ̇_{j−1} + [Ad(A_j⁻¹)
  ξ_{j−1}, 2 Ḃ̃_j g_j] + 2 B̈̃_j g_j`` (``[·,·]`` the se(3) bracket).  `SE3Spline.interpolate`
  solves for the control poses so that the curve passes *through* given poses (Newton-like
  iteration in the tangent space with the B-spline collocation matrix ``tridiag(1, 4, 1)/6``,
  natural end conditions by reflection of the end control poses).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from dqdyn import errors
from dqdyn.algebra import dualquat as dq
from dqdyn.algebra.dualquat import _cross3
from dqdyn.algebra.rotations import matrix_from_quat, quat_conj, quat_multiply
from dqdyn.trajectory import _checks
from dqdyn.trajectory._checks import is_body_frame as _frame


class SE3Sample(NamedTuple):
    """Samples of an SE(3) curve: poses (..., 8), body/spatial twists and their derivatives (..., 6)."""

    x: np.ndarray
    twist_body: np.ndarray
    twist_spatial: np.ndarray
    twist_dot_body: np.ndarray
    twist_dot_spatial: np.ndarray


def bracket(a, b):
    """se(3) Lie bracket of vec6 twists ``[ω, v]``: ``(ω₁ × ω₂, ω₁ × v₂ − ω₂ × v₁)``
    (the matrix commutator of the 4×4 twist matrices)."""
    return np.concatenate([_cross3(a[..., :3], b[..., :3]),
                           _cross3(a[..., :3], b[..., 3:]) - _cross3(b[..., :3], a[..., 3:])], axis=-1)


def _g6(g):
    return g[..., [1, 2, 3, 5, 6, 7]]


def _finish(x, xb, xbd, shape):
    R, p = _rot_trans(x)
    xs = _ad(R, p, xb)
    xsd = _ad(R, p, xbd)
    return SE3Sample(*(a.reshape(shape + a.shape[1:]) for a in (x, xb, xs, xbd, xsd)))


_CHUNK = 1 << 16  # samples per vectorised block (bounds the temporaries' memory)


class _Curve:
    def sample(self, t) -> SE3Sample:
        """Pose, body/spatial twist and their derivatives at the times ``t`` (any shape)."""
        tf, shape = _checks.eval_times(t)
        parts = [self._eval(tf[i:i + _CHUNK]) for i in range(0, tf.size, _CHUNK)] or [self._eval(tf)]
        x, xb, xbd = (np.concatenate(a, axis=0) for a in zip(*parts))
        return _finish(x, xb, xbd, shape)

    def pose(self, t):
        """Unit dual quaternions (..., 8)."""
        tf, shape = _checks.eval_times(t)
        x = np.concatenate([self._eval(tf[i:i + _CHUNK], pose_only=True) for i in range(0, tf.size, _CHUNK)]
                           or [np.zeros((0, 8))], axis=0)
        return x.reshape(shape + (8,))

    def matrix(self, t):
        """Homogeneous matrices (..., 4, 4)."""
        return dq.matrix_from_pose(self.pose(t))

    def twist(self, t, frame: str = "body"):
        s = self.sample(t)
        return s.twist_body if _frame(frame) else s.twist_spatial

    def twist_dot(self, t, frame: str = "body"):
        s = self.sample(t)
        return s.twist_dot_body if _frame(frame) else s.twist_dot_spatial

    def __call__(self, t):
        """``(x, ξ_b, ξ̇_b)`` at ``t``."""
        s = self.sample(t)
        return s.x, s.twist_body, s.twist_dot_body




# ----------------------------------------------------------------------------- time scalings
def time_scaling(kind: str, tau):
    """``(s, ds/dτ, d²s/dτ²)`` of a rest-to-rest time scaling on ``τ ∈ [0, 1]`` (clipped).

    ``"linear"``: ``s = τ``; ``"quintic"``: ``10τ³ − 15τ⁴ + 6τ⁵`` (zero velocity and acceleration
    at both ends); ``"trapezoidal"``: constant acceleration on ``[0, ⅓]`` and ``[⅔, 1]``, cruise at
    ``ṡ = 1.5`` between (RTB's ``lspb`` default)."""
    tau = np.clip(np.asarray(tau, dtype=float), 0.0, 1.0)
    if kind == "linear":
        return tau, np.ones_like(tau), np.zeros_like(tau)
    if kind == "quintic":
        t2 = tau * tau
        return (t2 * tau * (10 - 15 * tau + 6 * t2), 30 * t2 * (1 - 2 * tau + t2),
                60 * tau * (1 - 3 * tau + 2 * t2))
    if kind == "trapezoidal":
        a = 4.5  # tb = 1/3, V = 1.5
        s = np.where(tau < 1 / 3, 0.5 * a * tau**2,
                     np.where(tau <= 2 / 3, 1.5 * tau - 0.25, 1.0 - 0.5 * a * (1 - tau) ** 2))
        sd = np.where(tau < 1 / 3, a * tau, np.where(tau <= 2 / 3, 1.5, a * (1 - tau)))
        sdd = np.where(tau < 1 / 3, a, np.where(tau <= 2 / 3, 0.0, -a))
        return s, sd, sdd
    raise errors.DqdynError(f"time scaling must be 'linear', 'quintic' or 'trapezoidal'; got {kind!r}")


class ScrewInterpolation(_Curve):
    """ScLERP from ``x0`` to ``x1`` (unit dual quaternions, or homogeneous matrices) on ``[t0, t1]`` with the time scaling
    ``scaling`` (module docstring).  Takes the shorter way (``log`` with ``P₀ >= 0``)."""

    def __init__(self, x0, x1, t0: float = 0.0, t1: float = 1.0, scaling: str = "quintic"):
        self.x0 = _checks.poses_any(x0, "x0")
        self.x1 = _checks.poses_any(x1, "x1")
        if self.x0.shape != (8,) or self.x1.shape != (8,):
            raise errors.ShapeError("x0 and x1 must be single poses: unit dual quaternions (8,) "
                                    "or homogeneous matrices (4, 4)")
        _checks.times([t0, t1], "(t0, t1)")
        time_scaling(scaling, 0.0)
        self.t0, self.t1, self.scaling = float(t0), float(t1), scaling
        self.g = dq.log(dq.mul(dq.conj(self.x0), self.x1))  # pure, vec8
        self.g6 = _g6(self.g)

    def _eval(self, t, pose_only=False):
        T = self.t1 - self.t0
        s, sd, sdd = time_scaling(self.scaling, (t - self.t0) / T)
        x = dq.mul(self.x0, dq.exp(s[:, None] * self.g6))
        if pose_only:
            return x
        return x, 2.0 * (sd / T)[:, None] * self.g6, 2.0 * (sdd / T**2)[:, None] * self.g6


# ----------------------------------------------------------------------------- B-spline
def _cum_basis(u):
    """Cumulative cubic B-spline basis B̃₁..B̃₃ (N, 3) and their first/second u-derivatives."""
    u2 = u * u
    u3 = u2 * u
    B = np.stack([(5 + 3 * u - 3 * u2 + u3) / 6, (1 + 3 * u + 3 * u2 - 2 * u3) / 6, u3 / 6], -1)
    dB = np.stack([(3 - 6 * u + 3 * u2) / 6, (3 + 6 * u - 6 * u2) / 6, 0.5 * u2], -1)
    ddB = np.stack([u - 1.0, 1.0 - 2.0 * u, u], -1)
    return B, dB, ddB


#: largest rotation between consecutive poses of `SE3Spline.interpolate` before it subdivides
MAX_STEP = 1.0


class SE3Spline(_Curve):
    """Uniform cumulative cubic B-spline on SE(3) (module docstring).

    ``control`` (m, 8), m >= 4, unit dual quaternions; segment k ∈ [0, m−3) covers
    ``[t0 + k h, t0 + (k+1) h]`` and uses ``control[k..k+3]``.  Build an interpolating spline
    with `interpolate`.  Consecutive control poses are joined along ``log(P*_k P_{k+1})``,
    i.e. the shorter way."""

    def __init__(self, control, t0: float = 0.0, h: float = 1.0):
        P = _checks.poses_any(control, "control")
        if P.ndim != 2 or P.shape[0] < 4:
            raise errors.ShapeError(f"control must have shape (m >= 4, 8); got {P.shape}")
        if not (np.isfinite(h) and h > 0):
            raise errors.ShapeError(f"h (the knot spacing) must be > 0; got {h!r}")
        self.P = P
        self.t0, self.h = float(t0), float(h)
        self.n_segments = P.shape[0] - 3
        self.t1 = self.t0 + self.n_segments * self.h
        self.times = self.t0 + self.h * np.arange(self.n_segments + 1)
        self.knot_times = self.times
        self.g = _g6(dq.log(dq.mul(dq.conj(P[:-1]), P[1:])))  # (m−1, 6)

    @classmethod
    def interpolate(cls, times, poses, *, tol: float = 1e-13, max_iter: int = 100,
                    max_step: float = MAX_STEP) -> SE3Spline:
        """The C² spline through ``poses[k]`` at uniform ``times`` (n+1,), n >= 1.

        ``poses``: unit dual quaternions (n+1, 8) or homogeneous matrices (n+1, 4, 4).  Any
        rotation below half a turn between consecutive poses is allowed: when the largest
        exceeds ``max_step`` (rad, default `MAX_STEP`) every interval is cut into the same
        number ``s`` of pieces (ScLERP between the given poses; the knots stay uniform, spacing
        ``h/s``) and the spline passes through those poses too; ``knot_times`` of the result
        are the given ``times``.  Non-uniform spacing raises ShapeError (resample, or use
        `ScrewInterpolation` piecewise); non-unit poses raise NotUnitError naming ``poses``;
        consecutive rotations half a turn apart raise SingularError (the shorter way is not
        unique)."""
        t = _checks.times(times, "times")
        X = _checks.poses_any(poses, "poses")
        if X.ndim != 2 or X.shape[0] != t.size:
            raise errors.ShapeError(f"poses must have {t.size} entries (shape ({t.size}, 8) or "
                                    f"({t.size}, 4, 4)) to match times; got {X.shape}")
        h = float(t[1] - t[0])
        if np.max(np.abs(np.diff(t) - h)) > 1e-9 * max(1.0, abs(h)):
            raise errors.ShapeError("times must be uniformly spaced for the cumulative B-spline")
        if not (np.isfinite(max_step) and 0 < max_step < np.pi):
            raise errors.DqdynError(f"max_step must be in (0, π) rad, got {max_step!r}")
        rel = dq.mul(dq.conj(X[:-1]), X[1:])
        w = np.abs(rel[:, 0])
        ang = 2.0 * np.arctan2(np.linalg.norm(rel[:, 1:4], axis=1), w)
        if np.any(w <= 1e-9):
            k = int(np.argmax(w <= 1e-9))
            raise errors.SingularError(f"poses[{k}] and poses[{k + 1}] are half a turn apart: "
                                       "the shorter screw motion between them is not unique; "
                                       "insert an intermediate pose")
        parts = max(1, int(np.ceil(float(ang.max()) / max_step - 1e-12)))
        given = t
        if parts > 1:
            g = _g6(dq.log(rel))  # the shorter way: log with a non-negative real part
            s = np.arange(parts) / parts
            mid = dq.mul(np.repeat(X[:-1], parts, axis=0),
                         dq.exp(np.tile(s, X.shape[0] - 1)[:, None] * np.repeat(g, parts, axis=0)))
            X = np.concatenate([mid, X[-1:]], axis=0)
            h = h / parts
            t = t[0] + h * np.arange(X.shape[0])
        spl = cls._interpolate(t, X, h, tol, max_iter)
        spl.knot_times = given
        return spl

    @classmethod
    def _interpolate(cls, t, X, h, tol, max_iter):
        n = X.shape[0] - 1
        inner = X.copy()
        # collocation matrix rows for knot k: (P_{k-1} + 4 P_k + P_{k+1})/6, ends by reflection
        M = np.zeros((n + 1, n + 1))
        for k in range(n + 1):
            M[k, k] = 4 / 6
            if k > 0:
                M[k, k - 1] = 1 / 6
            if k < n:
                M[k, k + 1] = 1 / 6
        M[0] = 0.0
        M[0, 0] = 1.0
        M[n] = 0.0
        M[n, n] = 1.0
        Minv = np.linalg.inv(M)
        for _it in range(max_iter):
            spl = cls(_with_ends(inner), t[0], h)
            S = spl.pose(t)
            d = 2.0 * _g6(dq.log(dq.mul(dq.conj(S), X)))  # body-frame error twists (n+1, 6)
            err = np.max(np.abs(d))
            if err < tol * (1.0 + np.max(np.abs(_g6(dq.log(dq.mul(dq.conj(X[:-1]), X[1:])))))):
                return spl
            D = Minv @ d
            inner = dq.mul(inner, dq.exp(0.5 * D))
        raise errors.ConvergenceError(f"SE3Spline.interpolate: no convergence in {max_iter} iterations "
                                      f"(pose error {err:.3g}); the poses are too far apart")

    def _eval(self, t, pose_only=False):
        u = (t - self.t0) / self.h
        k = np.clip(np.floor(u).astype(int), 0, self.n_segments - 1)
        return self._eval_segment(k, u - k, pose_only)

    def knot_jumps(self):
        """Max-abs one-sided jumps of ``(x, ξ_b, ξ̇_b)`` at the interior knots (zero: C²)."""
        if self.n_segments < 2:
            return 0.0, 0.0, 0.0
        m = self.n_segments - 1
        out = []
        L = self._eval_segment(np.arange(m), np.ones(m))  # left segment at u = 1
        R = self._eval_segment(np.arange(1, m + 1), np.zeros(m))  # right segment at u = 0
        for a, b in zip(L, R):
            if a.shape[-1] == 8:
                a = a * np.sign(np.sum(a * b, -1))[:, None]
            out.append(float(np.max(np.abs(a - b))))
        return tuple(out)

    def _eval_segment(self, k, u, pose_only=False):
        """Segment ``k`` (N,) at local ``u`` (N,) (extrapolates outside [0, 1])."""
        B, dB, ddB = _cum_basis(u)
        x = self.P[k]
        A = []
        for j in range(3):
            Aj = dq.exp(B[:, j:j + 1] * self.g[k + j])
            A.append(Aj)
            x = dq.mul(x, Aj)
        if pose_only:
            return x
        # body twist and its derivative by the recursion of the module docstring; j = 0 starts from
        # zero, Ad(A_j⁻¹) is applied with the rotation matrix and translation of A_j
        g0 = self.g[k]
        V = 2.0 * dB[:, :1] / self.h * g0
        Vd = 2.0 * ddB[:, :1] / self.h**2 * g0
        for j in (1, 2):
            gj = self.g[k + j]
            w = 2.0 * dB[:, j:j + 1] / self.h * gj
            R, p = _rot_trans(A[j])
            AV = _ad_inv(R, p, V)
            Vd = _ad_inv(R, p, Vd) + bracket(AV, w) + 2.0 * ddB[:, j:j + 1] / self.h**2 * gj
            V = AV + w
        return x, V, Vd


def _rot_trans(x):
    """Rotation matrices (N, 3, 3) and translations (N, 3) of poses (N, 8)."""
    R = matrix_from_quat(x[:, :4])
    p = 2.0 * quat_multiply(x[:, 4:], quat_conj(x[:, :4]))[:, 1:]
    return R, p


def _ad_inv(R, p, V):
    """``Ad(x⁻¹) ξ = (Rᵀ ω, Rᵀ (v − p × ω))`` for vec6 twists (N, 6) (= dualquat.Ad6_inv)."""
    w = V[:, :3]
    out = np.empty_like(V)
    out[:, :3] = np.einsum("nji,nj->ni", R, w)
    out[:, 3:] = np.einsum("nji,nj->ni", R, V[:, 3:] - _cross3(p, w))
    return out


def _ad(R, p, V):
    """``Ad(x) ξ = (R ω, R v + p × R ω)`` (= dualquat.Ad6)."""
    out = np.empty_like(V)
    Rw = np.einsum("nij,nj->ni", R, V[:, :3])
    out[:, :3] = Rw
    out[:, 3:] = np.einsum("nij,nj->ni", R, V[:, 3:]) + _cross3(p, Rw)
    return out


def _with_ends(inner):
    """Control poses ``[P₋₁, P₀ … P_n, P_{n+1}]`` with reflected ends ``P₋₁ = P₀ (P₀* P₁)*``."""
    first = dq.mul(inner[0], dq.conj(dq.mul(dq.conj(inner[0]), inner[1])))
    last = dq.mul(inner[-1], dq.conj(dq.mul(dq.conj(inner[-1]), inner[-2])))
    return np.concatenate([first[None], inner, last[None]], axis=0)


__all__ = ["SE3Sample", "ScrewInterpolation", "SE3Spline", "time_scaling", "bracket", "MAX_STEP"]
