"""Joint-space profiles: quintic, trapezoidal (LSPB), multi-segment via-point trajectories with
velocity / acceleration limits, and the Robotics-Toolbox-style samplers ``jtraj``, ``mstraj``,
``ctraj``.

Every profile is a `PiecewisePolynomial` ``q(t)`` (breaks ``t_0 < … < t_K``, per segment a
polynomial in ``s = t − t_k``), vectorised over ``t`` and held constant outside its time span
(velocity and acceleration zero there).  ``traj(t)`` returns ``(q, q̇, q̈)``, so a profile is a
reference for `dqdyn.simulation.JointPD` / `ComputedTorque`
(``reference=traj``) on models whose configuration is a vector space (``nq == nv``).
"""

from __future__ import annotations

import numpy as np

from dqdyn import errors
from dqdyn.trajectory import _checks


def _vec(a, name, n=None):
    try:
        v = np.atleast_1d(np.asarray(a, dtype=float))
    except (TypeError, ValueError):
        raise errors.ShapeError(f"{name} must be a real vector") from None
    if v.ndim != 1 or (n is not None and v.size != n):
        raise errors.ShapeError(f"{name} must have shape ({n if n is not None else 'n'},); got {v.shape}")
    if not np.all(np.isfinite(v)):
        raise errors.NonFiniteError(f"{name} contains NaN or infinity")
    return v


def _limit(a, name, n):
    if a is None:
        return None
    v = np.broadcast_to(np.asarray(a, dtype=float), (n,)).copy() if np.ndim(a) == 0 else _vec(a, name, n)
    if not np.all(v > 0):
        raise errors.ShapeError(f"{name} must be > 0 for every joint; got {v}")
    return v


class PiecewisePolynomial:
    """``q(t)`` with ``breaks`` (K+1,) strictly increasing and ``coeffs`` (K, d+1, n): on segment k,
    ``q(t) = Σ_j coeffs[k, j] (t − breaks[k])^j``.  Outside ``[breaks[0], breaks[-1]]`` the end
    positions are held."""

    def __init__(self, breaks, coeffs):
        self.breaks = _checks.times(breaks, "breaks")
        c = np.asarray(coeffs, dtype=float)
        if c.ndim != 3 or c.shape[0] != self.breaks.size - 1:
            raise errors.ShapeError(f"coeffs must have shape ({self.breaks.size - 1}, degree + 1, n); got {c.shape}")
        self.coeffs = c
        self.ndof = c.shape[2]
        self.t0, self.t1 = float(self.breaks[0]), float(self.breaks[-1])

    @property
    def duration(self) -> float:
        return self.t1 - self.t0

    def evaluate(self, t, derivative: int = 0):
        """``d^k q/dt^k`` at ``t`` (any shape) → (..., n)."""
        tf, shape = _checks.eval_times(t)
        tc = np.clip(tf, self.t0, self.t1)
        k = np.clip(np.searchsorted(self.breaks, tc, side="right") - 1, 0, self.coeffs.shape[0] - 1)
        s = tc - self.breaks[k]
        d = self.coeffs.shape[1]
        out = np.zeros((tf.size, self.ndof))
        for j in range(d - 1, derivative - 1, -1):
            f = np.prod(np.arange(j - derivative + 1, j + 1)) if derivative else 1.0
            out = out * s[:, None] + f * self.coeffs[k, j]
        if derivative:
            out[(tf < self.t0) | (tf > self.t1)] = 0.0
        return out.reshape(shape + (self.ndof,))

    def position(self, t):
        return self.evaluate(t, 0)

    def velocity(self, t):
        return self.evaluate(t, 1)

    def acceleration(self, t):
        return self.evaluate(t, 2)

    def __call__(self, t):
        """``(q, q̇, q̈)`` at ``t`` — the reference protocol of `dqdyn.simulation.controllers`."""
        return self.evaluate(t, 0), self.evaluate(t, 1), self.evaluate(t, 2)


def quintic(q0, q1, duration: float, *, v0=None, v1=None, a0=None, a1=None, t0: float = 0.0):
    """Quintic from ``(q0, v0, a0)`` at ``t0`` to ``(q1, v1, a1)`` at ``t0 + duration`` (defaults:
    rest to rest), RTB's ``jtraj`` polynomial.  Returns a one-segment `PiecewisePolynomial`."""
    q0 = _vec(q0, "q0")
    n = q0.size
    q1 = _vec(q1, "q1", n)
    T = float(duration)
    if not (np.isfinite(T) and T > 0):
        raise errors.ShapeError(f"duration must be > 0; got {duration!r}")
    v0, v1, a0, a1 = (np.zeros(n) if a is None else _vec(a, nm, n)
                      for a, nm in ((v0, "v0"), (v1, "v1"), (a0, "a0"), (a1, "a1")))
    h = q1 - q0
    c = np.zeros((6, n))
    c[0], c[1], c[2] = q0, v0, 0.5 * a0
    c[3] = (20 * h - (8 * v1 + 12 * v0) * T - (3 * a0 - a1) * T**2) / (2 * T**3)
    c[4] = (-30 * h + (14 * v1 + 16 * v0) * T + (3 * a0 - 2 * a1) * T**2) / (2 * T**4)
    c[5] = (12 * h - 6 * (v1 + v0) * T + (a1 - a0) * T**2) / (2 * T**5)
    return PiecewisePolynomial([t0, t0 + T], c[None])


def _lspb_time(D, vmax, amax):
    """Minimum time of a rest-to-rest move of length D >= 0 under |v| <= vmax, |a| <= amax."""
    tri = D <= vmax * vmax / amax
    return np.where(tri, 2.0 * np.sqrt(D / amax), D / vmax + vmax / amax)


def trapezoidal(q0, q1, *, duration: float | None = None, vmax=None, amax=None, t0: float = 0.0):
    """Synchronised trapezoidal-velocity (LSPB) move from ``q0`` to ``q1``, rest to rest.

    With ``vmax`` and ``amax`` (scalars or per joint) and no ``duration``: the minimum-time move of
    the slowest joint, every joint sharing its blend time (so every joint respects its limits).
    With ``duration`` only: blend time ``duration/3`` (RTB's ``lspb`` default, cruise speed 1.5×
    the mean).  With both: the longest blend compatible with ``vmax``, checked against ``amax``
    (InfeasibleError naming the limit when ``duration`` is too short)."""
    q0 = _vec(q0, "q0")
    n = q0.size
    q1 = _vec(q1, "q1", n)
    vmax = _limit(vmax, "vmax", n)
    amax = _limit(amax, "amax", n)
    D = np.abs(q1 - q0)
    if duration is None:
        if vmax is None or amax is None:
            raise errors.DqdynError("trapezoidal needs duration, or both vmax and amax")
        Tj = _lspb_time(D, vmax, amax)
        j = int(np.argmax(Tj))
        T = float(Tj[j])
        if T == 0.0:
            T = 1e-9
        tb = T / 2 if D[j] <= vmax[j] ** 2 / amax[j] else vmax[j] / amax[j]
    else:
        T = float(duration)
        if not (np.isfinite(T) and T > 0):
            raise errors.ShapeError(f"duration must be > 0; got {duration!r}")
        tb = T / 3
        if vmax is not None:
            need = np.max(D / vmax)  # cruise v = D/(T − tb) <= vmax  →  tb <= T − D/vmax
            if need > T:
                raise errors.InfeasibleError(f"duration {T:g} s is too short for vmax (needs > {need:g} s)")
            tb = min(T / 2, T - need) if vmax is not None else tb
        if amax is not None:
            a_need = np.max(D / (tb * (T - tb)) / amax) if tb > 0 else np.inf
            if a_need > 1 + 1e-12:
                raise errors.InfeasibleError(f"duration {T:g} s with these vmax is too short for amax "
                                             f"(acceleration {a_need:.3g}× the limit)")
    v = (q1 - q0) / (T - tb)
    a = v / tb
    qb = q0 + 0.5 * a * tb * tb
    c = np.zeros((3, 3, n))
    c[0, 0], c[0, 2] = q0, 0.5 * a
    c[1, 0], c[1, 1] = qb, v
    c[2, 0], c[2, 1], c[2, 2] = q1 - 0.5 * a * tb * tb, v, -0.5 * a
    br = [t0, t0 + tb, t0 + T - tb, t0 + T]
    if T - 2 * tb <= 1e-12 * T:  # triangular: drop the empty cruise segment
        c = c[[0, 2]]
        br = [t0, t0 + tb, t0 + T]
    return PiecewisePolynomial(br, c)


def via_points(vias, *, vmax, amax, t0: float = 0.0, min_segment: float = 0.0):
    """Multi-segment trajectory through ``vias`` (m, n) with linear segments and parabolic blends
    (RTB's ``mstraj`` / Craig's LSPB through via points), starting and ending at rest.

    Segment durations are the slowest joint's ``|Δq|/vmax`` (at least ``min_segment``); at each via
    the velocity change is made by a constant acceleration ``amax`` of the joint that needs the
    longest blend, centred on the via time; segments are stretched until neighbouring blends do not
    overlap.  The profile starts exactly at ``vias[0]`` and ends at ``vias[-1]``; interior vias
    are passed *near* (the blend cuts the corner), as in ``mstraj``.  |q̇| <= vmax and
    |q̈| <= amax hold for every joint."""
    V = np.asarray(vias, dtype=float)
    if V.ndim != 2 or V.shape[0] < 2:
        raise errors.ShapeError(f"vias must have shape (m >= 2, n); got {V.shape}")
    if not np.all(np.isfinite(V)):
        raise errors.NonFiniteError("vias contains NaN or infinity")
    m, n = V.shape
    vmax = _limit(vmax, "vmax", n)
    amax = _limit(amax, "amax", n)
    dq = np.diff(V, axis=0)
    T = np.maximum(np.max(np.abs(dq) / vmax, axis=1), max(min_segment, 1e-9))
    for _ in range(200):
        vel = dq / T[:, None]
        vpad = np.vstack([np.zeros(n), vel, np.zeros(n)])
        dv = np.abs(np.diff(vpad, axis=0))  # velocity change at each via (m, n)
        tb = np.max(dv / amax, axis=1)  # full blend duration at each via
        half = 0.5 * tb
        # a segment needs room for the second half of its start blend and the first half of its end blend
        room = half[:-1] + half[1:]
        if np.all(room <= T * (1 + 1e-12)):
            break
        T = np.where(room > T, np.maximum(T * 1.05, room), T)
    else:  # pragma: no cover - the stretch always terminates
        raise errors.ConvergenceError("via_points: could not separate the blends")
    # via times with the first blend starting at t0
    tv = t0 + half[0] + np.r_[0.0, np.cumsum(T)]
    breaks, coeffs = [], []
    # piecewise: [blend 0][linear 0][blend 1][linear 1] ... [blend m-1]
    pos_lin = lambda k, t: V[k] + vel[k] * (t - tv[k])  # noqa: E731  (linear segment k)
    for k in range(m):
        vin = vpad[k]
        vout = vpad[k + 1]
        ts, te = tv[k] - half[k], tv[k] + half[k]
        if k == 0:
            qs = V[0]
        else:
            qs = pos_lin(k - 1, ts)
        if tb[k] > 0:
            a = (vout - vin) / tb[k]
            breaks.append(ts)
            coeffs.append(np.stack([qs, vin, 0.5 * a]))
        if k < m - 1:
            ls, le = te, tv[k + 1] - half[k + 1]
            if le > ls + 1e-15:
                breaks.append(ls)
                coeffs.append(np.stack([pos_lin(k, ls), vel[k], np.zeros(n)]))
    breaks.append(tv[-1] + half[-1])
    return PiecewisePolynomial(np.array(breaks), np.array(coeffs))


# ----------------------------------------------------------------------------- RTB-style samplers
def jtraj(q0, q1, t, *, qd0=None, qd1=None):
    """Robotics Toolbox ``jtraj``: quintic from ``q0`` to ``q1`` over the time vector ``t`` (or
    ``t`` steps on [0, 1] if an integer); returns ``(q, q̇, q̈)`` each (len(t), n)."""
    if np.ndim(t) == 0:
        t = np.linspace(0.0, 1.0, int(t))
    t = _checks.times(t, "t")
    tr = quintic(q0, q1, t[-1] - t[0], v0=qd0, v1=qd1, t0=t[0])
    return tr(t)


def mstraj(vias, dt: float, *, vmax, amax, q0=None):
    """Robotics Toolbox ``mstraj``-like sampling of `via_points` at step ``dt``
    (``q0`` prepended to ``vias`` when given).  Returns ``(t, q)``."""
    V = np.asarray(vias, dtype=float)
    if q0 is not None:
        V = np.vstack([np.asarray(q0, dtype=float)[None], V])
    tr = via_points(V, vmax=vmax, amax=amax)
    t = np.arange(tr.t0, tr.t1 + 0.5 * dt, dt)
    return t, tr.position(t)


def ctraj(x0, x1, t, *, scaling: str = "trapezoidal"):
    """Robotics Toolbox ``ctraj``: Cartesian (screw) interpolation between the poses ``x0`` and
    ``x1`` (unit dual quaternions) over the times ``t`` (or ``t`` steps on [0, 1]), trapezoidal
    time scaling by default.  Returns the poses (len(t), 8)."""
    from dqdyn.trajectory.se3 import ScrewInterpolation

    if np.ndim(t) == 0:
        t = np.linspace(0.0, 1.0, int(t))
    t = _checks.times(t, "t")
    return ScrewInterpolation(x0, x1, t[0], t[-1], scaling=scaling).pose(t)


__all__ = ["PiecewisePolynomial", "quintic", "trapezoidal", "via_points", "jtraj", "mstraj", "ctraj"]
