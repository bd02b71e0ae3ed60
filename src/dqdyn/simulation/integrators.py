"""One-step integrators on the configuration manifold.

Both advance ``(q, v)`` by ``dt`` given ``accel(t, q, v) -> (a, tau)``; configurations move with
`integrate` (the exponential map of each joint), so unit quaternions and unit dual
quaternions stay unit to round-off.

* `semi_implicit_euler` — ``v⁺ = v + dt a(q, v)``, ``q⁺ = q ⊕ dt v⁺`` (1st order,
  symplectic for conservative systems; MuJoCo's ``Euler``).
* `rkmk4` — Runge–Kutta–Munthe-Kaas of order 4.  On a non-commutative group plain RK4 with
  ``q ⊕ Σ bᵢkᵢ`` is only 2nd order; the Lie-bracket corrections (Munthe-Kaas 1999; Hairer,
  Lubich & Wanner, *Geometric Numerical Integration* IV.8) restore order 4: the third stage is
  taken at ``q ⊕ (k₂/2 + [k₁, k₂]/8)`` and the update is ``q ⊕ (k₁+2k₂+2k₃+k₄)/6 + [k₁, k₄]/12``,
  with ``kᵢ = dt vᵢ`` and ``[·,·]`` = `tangent_bracket` (zero on vector-space joints,
  the twist cross product, [Silva2022, eq. (8)], on free joints).
* `implicit_midpoint` — the implicit midpoint rule in ``(q, p)``, ``p = M(q) v``: a
  symmetric, 2nd-order step that is symplectic on vector-space joints (Hairer, Lubich & Wanner,
  *Geometric Numerical Integration* VI.3, the midpoint rule as a variational integrator); its
  energy error stays bounded instead of drifting, the integrator for long runs.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from dqdyn.kinematics.configuration import integrate, tangent_bracket

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


def implicit_midpoint(model, accel: Accel, t: float, q, v, dt: float, *, tol: float = 1e-13,
                      max_iter: int = 50):
    """One implicit-midpoint step in ``(q, p)``, ``p = M(q) v`` (module doc).

    Solves, by fixed-point iteration on the midpoint velocity ``v_m``,

    ``q_m = q ⊕ (dt/2) v_m``,  ``q⁺ = q ⊕ dt v_m``,  ``p⁺ = p + dt ṗ(q_m, v_m)``,
    ``v_m = M(q_m)⁻¹ (p + p⁺)/2``,

    with ``ṗ = M a + Ṁ v = M a + (C + Cᵀ) v`` — the Euler–Lagrange identity
    ``d/dt(M v) = τ + ∂L/∂q`` evaluated at the midpoint with ``a = accel(q_m, v_m)`` and
    ``Ṁ = C + Cᵀ`` (``Ṁ − 2C`` skew, `coriolis_matrix`).  On vector-space joints
    ``q_m = (q + q⁺)/2`` and this is the canonical midpoint rule for ``H(q, p)``, symplectic and
    symmetric; spherical / free joints move along the exponential map (``⊕``).  Any constraint
    forces are part of ``a``.  Raises `ConvergenceError` when the iteration
    does not converge (``dt`` too large for the velocities).  Returns ``(q⁺, v⁺, a, tau)`` with
    ``a``, ``tau`` at ``(t, q, v)``."""
    from dqdyn.dynamics.coriolis import coriolis_matrix
    from dqdyn.dynamics.lagrange import mass_matrix
    from dqdyn.errors import ConvergenceError

    a0, tau = accel(t, q, v)
    p0 = mass_matrix(model, q) @ v
    vm = v + 0.5 * dt * a0  # explicit predictor of the midpoint velocity
    th = t + 0.5 * dt
    prev = np.inf
    for _ in range(max_iter):
        qm = integrate(model, q, vm, 0.5 * dt)
        am = accel(th, qm, vm)[0]
        Mm = mass_matrix(model, qm)
        Cm = coriolis_matrix(model, qm, vm)
        p1 = p0 + dt * (Mm @ am + (Cm + Cm.T) @ vm)
        vm_new = np.linalg.solve(Mm, 0.5 * (p0 + p1))
        err = np.max(np.abs(vm_new - vm), initial=0.0)
        if not np.isfinite(err):
            raise ConvergenceError(
                f"implicit_midpoint: the fixed-point iteration diverged at t = {t:.6g} s; "
                f"dt = {dt:g} is too large for the fastest motion of the system (reduce dt)")
        vm = vm_new
        scale = 1.0 + np.max(np.abs(vm), initial=0.0)
        if err <= tol * scale or (err <= 1e-9 * scale and err >= 0.5 * prev):
            break  # converged, or at the round-off floor (the change stopped shrinking)
        prev = err
    else:
        raise ConvergenceError(
            f"implicit_midpoint: the midpoint velocity did not converge in {max_iter} iterations "
            f"at t = {t:.6g} s (last change {err:.3g}); reduce dt (now {dt:g})")
    q1 = integrate(model, q, vm, dt)
    v1 = np.linalg.solve(mass_matrix(model, q1), p1)
    return q1, v1, a0, tau


INTEGRATORS = {"euler": semi_implicit_euler, "semi_implicit_euler": semi_implicit_euler,
               "rk4": rkmk4, "rkmk4": rkmk4,
               "midpoint": implicit_midpoint, "implicit_midpoint": implicit_midpoint}

__all__ = ["semi_implicit_euler", "rkmk4", "implicit_midpoint", "INTEGRATORS"]
