"""Reference trajectories: the sinusoidal joint-velocity references the papers track.

[Silva2022, §5.1] and [Silva2022thesis, §4.2.1.5, §5.3, app. D] drive their robots with sinusoidal
generalized-velocity trajectories ``q̇_d(t)`` tracked by the simulator's low-level controllers;
amplitudes and frequencies are not given, so they are parameters here.
"""

from __future__ import annotations

import numpy as np

from ..algorithms.configuration import integrate
from ..errors import DqdynError, ShapeError


class SinusoidalReference:
    """``v_d(t) = A ⊙ sin(2π f ⊙ t + φ)`` in velocity coordinates, with
    ``q_d(t) = q0 ⊕ ∫₀ᵗ v_d`` (exact for vector-space joints — revolute, prismatic, planar — the
    joints of every reference the papers use) and ``a_d(t) = v̇_d(t)``.

    ``amplitude``, ``frequency`` (Hz) and ``phase`` broadcast to ``(nv,)``."""

    def __init__(self, model, q0, amplitude, frequency, phase=0.0):
        self.model = model
        self.q0 = np.array(q0, dtype=float)
        if self.q0.shape != (model.nq,):
            raise ShapeError(f"q0 must have shape ({model.nq},), got {self.q0.shape}")
        try:
            self.A = np.broadcast_to(np.asarray(amplitude, float), (model.nv,)).copy()
            self.f = np.broadcast_to(np.asarray(frequency, float), (model.nv,)).copy()
            self.phi = np.broadcast_to(np.asarray(phase, float), (model.nv,)).copy()
        except ValueError:
            raise ShapeError(f"amplitude, frequency and phase must broadcast to ({model.nv},)") from None
        if not (np.all(np.isfinite(self.A)) and np.all(np.isfinite(self.f)) and np.all(self.f > 0)):
            raise DqdynError("frequency must be finite and > 0 Hz and amplitude finite")
        self.w = 2 * np.pi * self.f

    def velocity(self, t):
        return self.A * np.sin(self.w * np.asarray(t)[..., None] + self.phi)

    def acceleration(self, t):
        return self.A * self.w * np.cos(self.w * np.asarray(t)[..., None] + self.phi)

    def displacement(self, t):
        """``∫₀ᵗ v_d`` (..., nv)."""
        wt = self.w * np.asarray(t)[..., None]
        return self.A / self.w * (np.cos(self.phi) - np.cos(wt + self.phi))

    def position(self, t):
        return integrate(self.model, self.q0, self.displacement(t))

    def __call__(self, t):
        """``(q_d, v_d, a_d)`` at time ``t``."""
        return self.position(t), self.velocity(t), self.acceleration(t)


__all__ = ["SinusoidalReference"]
