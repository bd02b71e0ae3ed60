"""Park–Kang Cayley cubics on SO(3) [Mladenova, §9, eqs. (389)–(397)], with
the corrections to the printed formulas noted below.

A segment is ``O(τ) = O₀ O(c(τ))`` with the Cayley map ``O(c)`` of [Mladenova, eq. (65)] and the
cubic ``c(τ) = x τ³ + y τ² + z τ`` (390), ``τ = (t − t₀)/Δt ∈ [0, 1]``.  The printed (389)
``O₀ (I − c^×)(I + c^×)⁻¹`` is ``O₀ O(−c)`` and contradicts (392)–(394) (erratum); the corrected
curve ``O₀ (I + c^×)(I − c^×)⁻¹`` is used.  Because ``c`` stays finite on ``[0, 1]`` the rotation
``O₀ᵀ O(t)`` never reaches a half-turn: no segment winds more than π (no "multiple winding").

* `CayleyCubic` — two-point interpolation with boundary *body* angular velocities,
  ``c(1)`` from (392), ``ċ(0) = ω₀/2`` (393), ``ċ(1)`` from (394) written with the body KDE
  ``ċ = ½ (I + c^× + c cᵀ) ω_b`` (the body form of the KDE (81); equal to (394)), coefficients (395)–(397).
* `CayleySpline` — multi-point C² interpolation.  ``method="park_kang"``: the paper's
  recursion (§9.2.3) corrected — the recursion runs for ``i = 2..n`` with
  ``w = f_{i−1}``, and ``y₁ = ω̇₀/4``; on non-uniform knots the carried derivatives are rescaled
  by ``r = Δt_i/Δt_{i−1}`` (``r``, ``r²``) so that the curve is C² in ``t``, not only in τ (fix 3;
  ``r = 1`` is the printed recursion).  The recursion is an initial-value propagation and, like
  every clamped-at-one-end cubic recursion, amplifies round-off by ≈ 2 + √3 per knot: use it
  for a few knots.  ``method="global"`` (default): every segment is a `CayleyCubic`
  (Hermite in the body angular velocities ``ω_i`` at the knots) and the interior ``ω_i`` solve
  the 3(n−1) equations "body ``ω̇`` continuous at each interior knot" (Newton, block-tridiagonal
  Jacobian by finite differences), with ``ω`` prescribed at both ends — stable for any number
  of knots.

Angular velocities: body ``ω_b = Oᵀ Ȯ`` (vee) and spatial ``ω = Ȯ Oᵀ = O ω_b``; accelerations
``ω̇_b`` from (80) in body form and ``ω̇ = O ω̇_b``.  All evaluations are vectorised over ``t``.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from dqdyn import errors
from dqdyn.algebra.rotations import matrix_from_quat, quat_from_matrix
from dqdyn.algebra.vector_parameter import vp_angular_acceleration, vp_kde
from dqdyn.trajectory import _checks
from dqdyn.trajectory._checks import is_body_frame as _frame


class SO3Sample(NamedTuple):
    """Samples of an SO(3) curve: rotation matrices (..., 3, 3), body/spatial angular velocity
    (..., 3) and their derivatives (..., 3)."""

    R: np.ndarray
    omega_body: np.ndarray
    omega_spatial: np.ndarray
    omega_dot_body: np.ndarray
    omega_dot_spatial: np.ndarray


def relative_vp(O0, O1, name: str = "rotations", index: int | None = None, *, tol: float = 1e-9):
    """[Mladenova, eq. (392)]: ``c^× = (O₀ᵀO₁ − O₁ᵀO₀)/(1 + tr(O₀ᵀO₁))`` (..., 3).

    Raises SingularError naming the pair when ``1 + tr(O₀ᵀ O₁) <= tol`` (the two rotations are
    half a turn apart, ``tr = −1``): the Cayley cubic is undefined there."""
    M = np.swapaxes(O0, -1, -2) @ O1
    den = 1.0 + np.trace(M, axis1=-2, axis2=-1)
    if np.any(den <= tol):
        k = int(np.argmax(np.atleast_1d(den) <= tol))
        k = k if index is None else index
        raise errors.SingularError(
            f"{name}[{k}] and {name}[{k + 1}] are half a turn apart (1 + tr(O₀ᵀ O₁) = "
            f"{float(np.min(den)):.3g} <= {tol:g}): the Cayley cubic ([Mladenova, eq. (392)]) is undefined; "
            "insert an intermediate rotation")
    A = M - np.swapaxes(M, -1, -2)
    return np.stack([A[..., 2, 1], A[..., 0, 2], A[..., 1, 0]], axis=-1) / den[..., None]


def _coefficients(c1, w0, w1):
    """(395)–(397): ``z = ω₀/2``, ``x + y = c(1) − z``, ``3x + 2y = ċ(1) − z`` (per unit τ)."""
    z = 0.5 * w0
    cd1 = vp_kde(c1, w1, frame="body")  # (394): ċ(1) = (1 + c²)/2 (I − c^×)⁻¹ ω₁
    x = cd1 + z - 2.0 * c1
    y = c1 - z - x
    return x, y, z


def _sample(O0, f, y, z, tau, dt):
    """Evaluate segments (per-sample rows: base rotation, end value ``f = c(1)``, ``y``, ``z``) at
    local τ; derivatives in real time.  ``c = f τ³ + y τ²(1 − τ) + z τ(1 − τ²)`` is the cubic
    ``x τ³ + y τ² + z τ`` with ``x = f − y − z`` written so that ``c(1) = f`` holds exactly (the
    knots are interpolated to round-off even when ``x``, ``y``, ``z`` are large)."""
    t = tau[:, None]
    t2 = t * t
    c = f * (t2 * t) + y * (t2 * (1.0 - t)) + z * (t * (1.0 - t2))
    cd = (3.0 * f * t2 + y * (2.0 * t - 3.0 * t2) + z * (1.0 - 3.0 * t2)) / dt[:, None]
    cdd = (6.0 * f * t + y * (2.0 - 6.0 * t) - 6.0 * z * t) / (dt * dt)[:, None]
    # inlined (65), body (79) and body (80) — same formulas as dqdyn.algebra.vector_parameter's
    # matrix_from_vp / vp_angular_velocity / vp_angular_acceleration, without their per-call checks
    c0, c1_, c2_ = c[:, 0], c[:, 1], c[:, 2]
    cc = c0 * c0 + c1_ * c1_ + c2_ * c2_
    k = 1.0 / (1.0 + cc)
    a = (1.0 - cc) * k
    Oc = np.empty((c.shape[0], 3, 3))
    Oc[:, 0, 0] = a + 2 * k * c0 * c0
    Oc[:, 1, 1] = a + 2 * k * c1_ * c1_
    Oc[:, 2, 2] = a + 2 * k * c2_ * c2_
    Oc[:, 0, 1] = 2 * k * (c0 * c1_ - c2_)
    Oc[:, 1, 0] = 2 * k * (c0 * c1_ + c2_)
    Oc[:, 0, 2] = 2 * k * (c0 * c2_ + c1_)
    Oc[:, 2, 0] = 2 * k * (c0 * c2_ - c1_)
    Oc[:, 1, 2] = 2 * k * (c1_ * c2_ - c0)
    Oc[:, 2, 1] = 2 * k * (c1_ * c2_ + c0)
    R = np.matmul(O0, Oc)
    k2 = (2.0 * k)[:, None]
    wb = k2 * (cd - _cross(c, cd))
    wdb = k2 * (cdd - _cross(c, cdd) - wb * np.sum(c * cd, axis=1)[:, None])
    ws = np.matmul(R, wb[:, :, None])[:, :, 0]
    wds = np.matmul(R, wdb[:, :, None])[:, :, 0]
    return SO3Sample(R, wb, ws, wdb, wds)


def _cross(a, b):
    out = np.empty_like(a)
    out[:, 0] = a[:, 1] * b[:, 2] - a[:, 2] * b[:, 1]
    out[:, 1] = a[:, 2] * b[:, 0] - a[:, 0] * b[:, 2]
    out[:, 2] = a[:, 0] * b[:, 1] - a[:, 1] * b[:, 0]
    return out


_CHUNK = 1 << 16  # samples per vectorised block (bounds the temporaries' memory)


class _Curve:
    """Shared evaluation front-end: ``self._eval(t_flat)`` returns an `SO3Sample`."""

    t0: float
    t1: float

    def sample(self, t) -> SO3Sample:
        """All quantities at the times ``t`` (any shape; results get that shape + (3,) / (3, 3)).

        Times outside ``[t0, t1]`` evaluate the end segments' cubics (extrapolation)."""
        tf, shape = _checks.eval_times(t)
        parts = [self._eval(tf[i:i + _CHUNK]) for i in range(0, tf.size, _CHUNK)] or [self._eval(tf)]
        return SO3Sample(*(np.concatenate(a, axis=0).reshape(shape + a[0].shape[1:]) for a in zip(*parts)))

    def rotation(self, t):
        """Rotation matrices ``O(t)`` (..., 3, 3)."""
        return self.sample(t).R

    def quaternion(self, t):
        """Unit quaternions ``[w, x, y, z]`` (..., 4), ``w >= 0``, of ``O(t)``."""
        return quat_from_matrix(self.rotation(t))

    def omega(self, t, frame: str = "body"):
        """Angular velocity (..., 3): ``"body"`` ``Oᵀ Ȯ`` or ``"spatial"`` ``Ȯ Oᵀ``."""
        s = self.sample(t)
        return s.omega_body if _frame(frame) else s.omega_spatial

    def omega_dot(self, t, frame: str = "body"):
        """Angular acceleration (..., 3) in the body or spatial frame."""
        s = self.sample(t)
        return s.omega_dot_body if _frame(frame) else s.omega_dot_spatial

    def __call__(self, t):
        """``(O, ω_body, ω̇_body)`` at ``t``."""
        s = self.sample(t)
        return s.R, s.omega_body, s.omega_dot_body




class CayleyCubic(_Curve):
    """Two-point Park–Kang Cayley cubic ``O(t) = O₀ O(c(τ))`` ([Mladenova, eqs. (389) corrected,
    (390)–(397)]) on ``[t0, t1]`` with body angular velocities ``omega0`` at ``t0`` and ``omega1`` at
    ``t1`` (rad/s, real time; the paper's unit interval is ``t0 = 0, t1 = 1``).

    Meets ``O(t0) = O0``, ``O(t1) = O1``, ``ω_b(t0) = omega0``, ``ω_b(t1) = omega1`` exactly (up to
    round-off).  ``O0``, ``O1``: rotation matrices, unit quaternions ``[w, x, y, z]`` or unit
    dual quaternions (NotUnitError otherwise), not half a turn apart (SingularError)."""

    def __init__(self, O0, O1, omega0=None, omega1=None, t0: float = 0.0, t1: float = 1.0):
        self.O0 = _checks.rotations_any(O0, "O0")
        self.O1 = _checks.rotations_any(O1, "O1")
        if self.O0.shape != (3, 3) or self.O1.shape != (3, 3):
            raise errors.ShapeError("O0 and O1 must be single rotations: 3×3 matrices, unit "
                                    "quaternions (4,) or unit dual quaternions (8,)")
        _checks.times([t0, t1], "(t0, t1)")
        self.t0, self.t1 = float(t0), float(t1)
        self.dt = self.t1 - self.t0
        self.omega0 = _checks.vec3(omega0, "omega0")
        self.omega1 = _checks.vec3(omega1, "omega1")
        M = self.O0.T @ self.O1
        if 1.0 + np.trace(M) <= 1e-9:
            raise errors.SingularError(
                f"O0 and O1 are half a turn apart (tr(O0ᵀ O1) = {np.trace(M):.12g} = −1): the Cayley "
                "cubic ([Mladenova, eq. (392)]) is undefined; insert an intermediate rotation")
        self.c1 = relative_vp(self.O0, self.O1, "(O0, O1)")
        self.x, self.y, self.z = _coefficients(self.c1, self.omega0 * self.dt, self.omega1 * self.dt)

    def vp(self, tau):
        """``c(τ)`` (..., 3) at the local parameter τ."""
        tau = np.asarray(tau, dtype=float)[..., None]
        return ((self.x * tau + self.y) * tau + self.z) * tau

    def _eval(self, t):
        n = t.shape[0]
        tau = (t - self.t0) / self.dt
        rep = lambda a: np.broadcast_to(a, (n,) + a.shape)  # noqa: E731
        return _sample(rep(self.O0), rep(self.c1), rep(self.y), rep(self.z), tau,
                       np.full(n, self.dt))


#: largest rotation between consecutive knots of a ``CayleySpline(method="global")`` (rad);
#: a longer step is cut into equal geodesic pieces (see `subdivide`)
MAX_STEP = 1.0


def step_angles(R) -> np.ndarray:
    """Rotation angles (n,) of ``R[i]ᵀ R[i+1]`` for rotation matrices ``R`` (n+1, 3, 3), in
    ``[0, π]``."""
    q = quat_from_matrix(np.swapaxes(R[:-1], -1, -2) @ R[1:])
    return 2.0 * np.arctan2(np.linalg.norm(q[..., 1:], axis=-1), np.abs(q[..., 0]))


def subdivide(times, R, max_step: float = MAX_STEP):
    """``(times, R)`` with every step of more than ``max_step`` rad cut into
    ``ceil(angle / max_step)`` equal pieces along the geodesic ``R_i exp(s log(R_iᵀ R_{i+1}))``
    (the shorter way), the inserted knots at the matching fractions of the interval.  The given
    knots are kept exactly; steps of at most ``max_step`` are left alone."""
    q = quat_from_matrix(np.swapaxes(R[:-1], -1, -2) @ R[1:])  # w >= 0: the shorter way
    ang = step_angles(R)
    m = np.maximum(1, np.ceil(ang / max_step - 1e-12)).astype(int)
    if np.all(m == 1):
        return times, R
    T, out = [times[:1]], [R[:1]]
    for i in range(R.shape[0] - 1):
        if m[i] > 1:
            v = q[i, 1:]
            axis = v / np.linalg.norm(v)
            s = np.arange(1, m[i]) / m[i]
            half = 0.5 * s * ang[i]
            qs = np.concatenate([np.cos(half)[:, None], np.sin(half)[:, None] * axis], axis=1)
            out.append(R[i] @ matrix_from_quat(qs))
            T.append(times[i] + s * (times[i + 1] - times[i]))
        out.append(R[i + 1:i + 2])
        T.append(times[i + 1:i + 2])
    return np.concatenate(T), np.concatenate(out, axis=0)


class CayleySpline(_Curve):
    """C² interpolation of rotations ``rotations[i]`` at knots ``times`` (n+1,) by
    Cayley cubics ([Mladenova, §9.2.3], corrected; module docstring).

    ``rotations``: rotation matrices (n+1, 3, 3), unit quaternions ``[w, x, y, z]`` (n+1, 4) or
    unit dual quaternions (n+1, 8) (their rotation part).  Each step between consecutive
    knots may be any rotation below half a turn: with ``method="global"`` a step longer than
    ``max_step`` (rad, default `MAX_STEP`) is cut by `subdivide` into equal geodesic pieces,
    new knots that the curve passes through as well (``times`` / ``R`` list every knot,
    ``knot_times`` / ``knots`` the given ones); so the ω̇-continuity equations stay in the range
    where Newton converges, and the curve still passes through every given rotation at its time.

    ``method="global"`` (default): body angular velocities ``omega0`` at ``times[0]`` and
    ``omega_end`` at ``times[-1]`` (default zero).  ``method="park_kang"``: ``omega0`` and the
    body angular acceleration ``omega_dot0`` at ``times[0]``; the end values follow.

    Per segment ``i`` (1-based, ``[t_{i−1}, t_i]``): ``c_i(τ) = x_i τ³ + y_i τ² + z_i τ`` with
    ``c_i(1) = f_i`` (the relative vector-parameter of ``O_{i−1}ᵀ O_i``), ``O(t) = O_{i−1} O(c_i)``.
    Bad input: non-increasing ``times`` (ShapeError), a non-rotation (NotUnitError naming
    ``rotations[k]``), consecutive rotations half a turn apart (SingularError naming the pair).
    """

    def __init__(self, times, rotations, omega0=None, omega_dot0=None, omega_end=None, *,
                 method: str = "global", tol: float = 1e-12, max_iter: int = 50,
                 max_step: float = MAX_STEP):
        self.times = _checks.times(times, "times")
        R = _checks.rotations_any(rotations, "rotations")
        if R.ndim != 3 or R.shape[0] != self.times.size:
            raise errors.ShapeError(f"rotations must have {self.times.size} entries (shape "
                                    f"({self.times.size}, 3, 3), ({self.times.size}, 4) or "
                                    f"({self.times.size}, 8)) to match times; got {R.shape}")
        if not (np.isfinite(max_step) and 0 < max_step < np.pi):
            raise errors.DqdynError(f"max_step must be in (0, π) rad, got {max_step!r}")
        relative_vp(R[:-1], R[1:], "rotations")  # a half-turn step is named by its own pair
        #: the knots as given (``times`` / ``R`` also hold the ones inserted by subdivision)
        self.knot_times, self.knots = self.times, R
        if method == "global":
            self.times, R = subdivide(self.times, R, max_step)
        self.R = R
        self.t0, self.t1 = float(self.times[0]), float(self.times[-1])
        self.dt = np.diff(self.times)
        n = self.dt.size
        self.f = relative_vp(R[:-1], R[1:], "rotations")  # preprocessing f_i, i = 1..n
        w0 = _checks.vec3(omega0, "omega0")
        if method == "park_kang":
            if omega_end is not None:
                raise errors.DqdynError("method='park_kang' takes omega0 and omega_dot0; omega_end is "
                                        "determined by the recursion")
            self.x, self.y, self.z = self._park_kang(w0, _checks.vec3(omega_dot0, "omega_dot0"))
        elif method == "global":
            if omega_dot0 is not None:
                raise errors.DqdynError("method='global' prescribes omega0 and omega_end; omega_dot0 "
                                        "is not a free input (use method='park_kang')")
            self.knot_omega = self._global(w0, _checks.vec3(omega_end, "omega_end"), tol, max_iter)
            # per-unit-τ end velocities: segment i uses ω_{i-1} Δt_i and ω_i Δt_i
            self.x, self.y, self.z = _coefficients(self.f, self.knot_omega[:-1] * self.dt[:, None],
                                                   self.knot_omega[1:] * self.dt[:, None])
        else:
            raise errors.DqdynError(f"method must be 'global' or 'park_kang'; got {method!r}")
        self.method = method
        self.n_segments = n

    # ------------------------------------------------------------------ construction
    def _park_kang(self, w0, wd0):
        """[Mladenova, §9.2.3], corrected (``w = f_{i−1}``, ``i = 2..n``, ``y₁ = ω̇₀/4``)
        and the non-uniform-knot rescaling ``r = Δt_i/Δt_{i−1}``."""
        f, dt = self.f, self.dt
        n = dt.size
        x = np.empty((n, 3))
        y = np.empty((n, 3))
        z = np.empty((n, 3))
        z[0] = 0.5 * w0 * dt[0]
        y[0] = 0.25 * wd0 * dt[0] ** 2
        x[0] = f[0] - z[0] - y[0]
        for i in range(1, n):
            r = dt[i] / dt[i - 1]
            w = f[i - 1]
            v = 3.0 * x[i - 1] + 2.0 * y[i - 1] + z[i - 1]
            u = 6.0 * x[i - 1] + 2.0 * y[i - 1]
            ww = 1.0 + w @ w
            zi = (v - np.cross(w, v)) / ww  # per unit τ of segment i−1
            z[i] = r * zi
            y[i] = r * r * (u - np.cross(w, u) - 2.0 * (w @ v) * zi) / (2.0 * ww)
            x[i] = f[i] - z[i] - y[i]
        return x, y, z

    def _jump(self, W):
        """Body ω̇ jump (n−1, 3) at interior knots for knot body angular velocities ``W`` (n+1, 3)."""
        dt = self.dt
        x, y, z = _coefficients(self.f, W[:-1] * dt[:, None], W[1:] * dt[:, None])
        # end of segment i (τ = 1): c = f, ċ = 3x + 2y + z, c̈ = 6x + 2y (per τ)
        c = self.f[:-1]
        cd = (3 * x + 2 * y + z)[:-1] / dt[:-1, None]
        cdd = (6 * x + 2 * y)[:-1] / dt[:-1, None] ** 2
        end = vp_angular_acceleration(c, cd, cdd, frame="body")
        start = 4.0 * y[1:] / dt[1:, None] ** 2  # at c = 0: ω̇_b = 2 c̈ = 4 y / Δt²
        return end - start

    def _global(self, w0, wn, tol, max_iter):
        n = self.dt.size
        W = np.zeros((n + 1, 3))
        W[0], W[-1] = w0, wn
        if n == 1:
            return W
        # initial guess: chord angular velocities (central differences of the f_i)
        chord = 2.0 * self.f / self.dt[:, None]
        W[1:-1] = 0.5 * (chord[:-1] + chord[1:])
        m = n - 1
        scale = 1.0 + np.max(np.abs(chord))
        for _it in range(max_iter):
            F = self._jump(W)
            err = np.max(np.abs(F)) / (scale / self.dt.min())
            if err < tol:
                break
            # block-tridiagonal Jacobian by central differences: knot k affects jumps k-1, k, k+1
            h = 1e-6 * scale
            J = np.zeros((m, 3, m, 3))
            for col in range(3):
                for start in range(3):  # colour the unknowns three apart
                    ks = np.arange(start, m, 3)
                    if ks.size == 0:
                        continue
                    Wp = W.copy()
                    Wm = W.copy()
                    Wp[ks + 1, col] += h
                    Wm[ks + 1, col] -= h
                    D = (self._jump(Wp) - self._jump(Wm)) / (2 * h)
                    for k in ks:
                        for r in (k - 1, k, k + 1):
                            if 0 <= r < m:
                                J[r, :, k, col] = D[r]
            step = np.linalg.solve(J.reshape(3 * m, 3 * m), F.reshape(-1)).reshape(m, 3)
            nF = np.linalg.norm(F)
            lam = 1.0
            while lam > 1e-4:  # backtracking keeps Newton from overshooting on large rotations
                Wt = W.copy()
                Wt[1:-1] -= lam * step
                if np.linalg.norm(self._jump(Wt)) < (1.0 - 1e-4 * lam) * nF:
                    break
                lam *= 0.5
            W = Wt
        else:
            raise errors.ConvergenceError(
                f"CayleySpline(method='global'): the ω̇-continuity equations did not converge in "
                f"{max_iter} Newton steps (residual {err:.3g}); the rotations are too far apart for "
                "the knot spacing")
        return W

    # ------------------------------------------------------------------ evaluation
    def segment_index(self, t):
        """0-based segment of each time (clipped to the first / last segment)."""
        return np.clip(np.searchsorted(self.times, t, side="right") - 1, 0, self.dt.size - 1)

    def _eval(self, t):
        k = self.segment_index(t)
        tau = (t - self.times[k]) / self.dt[k]
        return _sample(self.R[k], self.f[k], self.y[k], self.z[k], tau, self.dt[k])

    def knot_jumps(self):
        """One-sided differences (end of segment i − start of segment i+1) at the interior knots:
        ``(ΔO, Δω_b, Δω̇_b)`` max-abs each — zero for a C² curve."""
        ti = self.times[1:-1]
        n = ti.size
        if n == 0:
            return 0.0, 0.0, 0.0
        k = np.arange(n)
        L = _sample(self.R[k], self.f[k], self.y[k], self.z[k], np.ones(n), self.dt[k])
        Rr = _sample(self.R[k + 1], self.f[k + 1], self.y[k + 1], self.z[k + 1], np.zeros(n), self.dt[k + 1])
        return (float(np.max(np.abs(L.R - Rr.R))), float(np.max(np.abs(L.omega_body - Rr.omega_body))),
                float(np.max(np.abs(L.omega_dot_body - Rr.omega_dot_body))))

    def segment_angles(self, samples: int = 64):
        """Largest rotation angle of ``O_{i−1}ᵀ O(t)`` over each segment (n,), sampled: each is < π
        (no multiple winding)."""
        tau = np.linspace(0.0, 1.0, samples)[:, None, None]
        c = ((self.x * tau + self.y) * tau + self.z) * tau
        ang = 2.0 * np.arctan(np.linalg.norm(c, axis=-1))
        return ang.max(axis=0)


__all__ = ["CayleyCubic", "CayleySpline", "SO3Sample", "relative_vp", "subdivide", "step_angles",
           "MAX_STEP"]
