"""One-step integrators on the configuration manifold.

Both advance ``(q, v)`` by ``dt`` given ``accel(t, q, v) -> (a, tau)``; configurations move with
:func:`~dqdyn.integrate` (the exponential map of each joint), so unit quaternions and unit dual
quaternions stay unit to round-off.

* :func:`semi_implicit_euler` — ``v⁺ = v + dt a(q, v)``, ``q⁺ = q ⊕ dt v⁺`` (1st order,
  symplectic for conservative systems; MuJoCo's ``Euler``).
* :func:`rkmk4` — Runge–Kutta–Munthe-Kaas of order 4.  On a non-commutative group plain RK4 with
  ``q ⊕ Σ bᵢkᵢ`` is only 2nd order; the Lie-bracket corrections (Munthe-Kaas 1999; Hairer,
  Lubich & Wanner, *Geometric Numerical Integration* IV.8) restore order 4: the third stage is
  taken at ``q ⊕ (k₂/2 + [k₁, k₂]/8)`` and the update is ``q ⊕ (k₁+2k₂+2k₃+k₄)/6 + [k₁, k₄]/12``,
  with ``kᵢ = dt vᵢ`` and ``[·,·]`` = :func:`~dqdyn.tangent_bracket` (zero on vector-space joints,
  the twist cross product, seed 000 eq. 8, on free joints).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..algorithms.configuration import integrate, tangent_bracket

Accel = Callable[[float, np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]


def semi_implicit_euler(model, accel: Accel, t: float, q, v, dt: float):
    """One semi-implicit (symplectic) Euler step.  Returns ``(q⁺, v⁺, a, tau)`` where ``a``,
    ``tau`` are the acceleration and force evaluated at ``(t, q, v)``."""
    a, tau = accel(t, q, v)
    v1 = v + dt * a
    return integrate(model, q, v1, dt), v1, a, tau


def rkmk4(model, accel: Accel, t: float, q, v, dt: float):
    """One Runge–Kutta–Munthe-Kaas (order 4) step (module doc).  Returns ``(q⁺, v⁺, a, tau)``
    with ``a``, ``tau`` from the first stage (at ``(t, q, v)``)."""
    quat = model.has_quaternion_joints

    def br(x, y):
        return tangent_bracket(model, x, y) if quat else 0.0

    a1, tau = accel(t, q, v)
    k1, K1 = dt * v, dt * a1
    v2 = v + K1 / 2
    k2, K2 = dt * v2, dt * accel(t + dt / 2, integrate(model, q, k1 / 2), v2)[0]
    v3 = v + K2 / 2
    k3, K3 = dt * v3, dt * accel(t + dt / 2, integrate(model, q, k2 / 2 + br(k1, k2) / 8), v3)[0]
    v4 = v + K3
    k4, K4 = dt * v4, dt * accel(t + dt, integrate(model, q, k3), v4)[0]
    q1 = integrate(model, q, (k1 + 2 * k2 + 2 * k3 + k4) / 6 + br(k1, k4) / 12)
    v1 = v + (K1 + 2 * K2 + 2 * K3 + K4) / 6
    return q1, v1, a1, tau


INTEGRATORS = {"euler": semi_implicit_euler, "semi_implicit_euler": semi_implicit_euler,
               "rk4": rkmk4, "rkmk4": rkmk4}

__all__ = ["semi_implicit_euler", "rkmk4", "INTEGRATORS"]
