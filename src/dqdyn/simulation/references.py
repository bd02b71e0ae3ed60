"""Reference trajectories: the sinusoidal joint-velocity references the papers track.

[Silva2022, §5.1] and [Silva2022thesis, §4.2.1.5, §5.3, app. D] drive their robots with sinusoidal
generalized-velocity trajectories ``q̇_d(t)`` tracked by the simulator's low-level controllers;
amplitudes and frequencies are not given, so they are parameters here.

`staggered_lags` delays each moving coordinate's sinusoid by a fraction of a quarter
period, so that joints with equal amplitudes (most of a Panda's) trace distinguishable curves
while every coordinate still starts at rest.
"""

from __future__ import annotations

import numpy as np

from dqdyn.errors import DqdynError, ShapeError
from dqdyn.kinematics.configuration import integrate


class SinusoidalReference:
    """``v_d(t) = A ⊙ sin(2π f ⊙ t + φ)`` in velocity coordinates, with
    ``q_d(t) = q0 ⊕ ∫₀ᵗ v_d`` (exact for vector-space joints — revolute, prismatic, planar — the
    joints of every reference the papers use) and ``a_d(t) = v̇_d(t)``.

    ``amplitude``, ``frequency`` (Hz) and ``phase`` broadcast to ``(nv,)``.  ``lag`` (s,
    ``>= 0``, broadcast to ``(nv,)``) delays coordinate ``i``: it rests at ``q0`` until
    ``lag_i``, then follows the sinusoid with ``t − lag_i`` in place of ``t`` (with
    ``phase = 0`` the velocity is continuous at ``lag_i``)."""

    def __init__(self, model, q0, amplitude, frequency, phase=0.0, lag=0.0):
        self.model = model
        self.q0 = np.array(q0, dtype=float)
        if self.q0.shape != (model.nq,):
            raise ShapeError(f"q0 must have shape ({model.nq},), got {self.q0.shape}")
        try:
            self.A = np.broadcast_to(np.asarray(amplitude, float), (model.nv,)).copy()
            self.f = np.broadcast_to(np.asarray(frequency, float), (model.nv,)).copy()
            self.phi = np.broadcast_to(np.asarray(phase, float), (model.nv,)).copy()
            self.lag = np.broadcast_to(np.asarray(lag, float), (model.nv,)).copy()
        except ValueError:
            raise ShapeError(f"amplitude, frequency, phase and lag must broadcast to "
                             f"({model.nv},)") from None
        if not (np.all(np.isfinite(self.lag)) and np.all(self.lag >= 0)):
            raise DqdynError(f"lag must be finite and >= 0 s, got {lag!r}")
        if not (np.all(np.isfinite(self.A)) and np.all(np.isfinite(self.f)) and np.all(self.f > 0)):
            raise DqdynError("frequency must be finite and > 0 Hz and amplitude finite")
        self.w = 2 * np.pi * self.f

    def _local(self, t):
        """``(w (t − lag), t >= lag)`` (..., nv)."""
        s = np.asarray(t, dtype=float)[..., None] - self.lag
        return self.w * np.maximum(s, 0.0), s >= 0.0

    def velocity(self, t):
        wt, on = self._local(t)
        return np.where(on, self.A * np.sin(wt + self.phi), 0.0)

    def acceleration(self, t):
        wt, on = self._local(t)
        return np.where(on, self.A * self.w * np.cos(wt + self.phi), 0.0)

    def displacement(self, t):
        """``∫₀ᵗ v_d`` (..., nv)."""
        wt, on = self._local(t)
        return np.where(on, self.A / self.w * (np.cos(self.phi) - np.cos(wt + self.phi)), 0.0)

    def position(self, t):
        return integrate(self.model, self.q0, self.displacement(t))

    def __call__(self, t):
        """``(q_d, v_d, a_d)`` at time ``t``."""
        return self.position(t), self.velocity(t), self.acceleration(t)


def staggered_lags(amplitude, frequency, spread: float = 0.25) -> np.ndarray:
    """Lags (s) for `SinusoidalReference`: the ``k``-th of the ``n`` coordinates with a
    non-zero ``amplitude`` starts ``k/n · spread`` of a period (``1/frequency``) after the first;
    the others get 0.  ``amplitude`` (nv,), ``frequency`` (Hz, scalar or (nv,))."""
    A = np.asarray(amplitude, dtype=float)
    f = np.broadcast_to(np.asarray(frequency, dtype=float), A.shape)
    if not (np.all(np.isfinite(f)) and np.all(f > 0)):
        raise DqdynError(f"frequency must be finite and > 0 Hz, got {frequency!r}")
    if not (np.isfinite(spread) and 0 <= spread < 1):
        raise DqdynError(f"spread must be in [0, 1) (a fraction of a period), got {spread!r}")
    lag = np.zeros(A.shape)
    moving = np.flatnonzero(A != 0)
    if moving.size:
        lag[moving] = np.arange(moving.size) / moving.size * spread / f[moving]
    return lag


__all__ = ["SinusoidalReference", "staggered_lags"]
