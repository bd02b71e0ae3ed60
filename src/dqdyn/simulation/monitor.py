"""The energy and constraint monitor of `simulate`.

A passive or conservative run keeps its energy ``E = T + U + V`` (kinetic
`kinetic_energy`, gravitational `potential_energy`, and ``V`` the
potential of a conservative input: ``−τᵀ(q − q₀)`` for a constant ``τ`` on vector-space joints,
``controller.potential(q)`` for a controller that has one).  The monitor samples the state
every ``every`` steps, evaluates the energies of the samples in blocks (one batched call per
block) and compares the relative error

    ``ε(t) = |E(t) − E(0)| / max(max_{s ≤ t} T(s), U_g)``,   ``U_g = |g| Σᵢ mᵢ ‖cᵢ(q₀) − o‖``

with ``tolerance``: the drift as a fraction of the energy in motion — the largest kinetic energy
reached so far, or ``U_g``, the order of the gravitational energy a swing of the bodies about
the root body's origin ``o`` exchanges, whichever is larger (a potential's zero is arbitrary, so
``|E(0)|`` is no scale; ``U_g`` keeps a run that starts at rest from being judged on the
vanishing kinetic energy of its first steps).  Beyond it the
integration does not resolve the motion: `EnergyDriftWarning` (or
`EnergyDriftError`) names the integrator, the step, the time and what to
use instead.  For a constrained run it also checks the position error of the constraints
(`constraint_errors`).
"""

from __future__ import annotations

import warnings

import numpy as np

from dqdyn.dynamics.energy import kinetic_energy, potential_energy
from dqdyn.errors import DqdynError, EnergyDriftError, EnergyDriftWarning

#: samples per batched energy evaluation
BLOCK = 64

_ADVICE = {
    "euler": "reduce dt, or use integrator='rk4' (4th order) or 'midpoint' (symplectic: bounded "
             "energy error)",
    "rk4": "reduce dt, or use integrator='midpoint' (symplectic: bounded energy error)",
    "midpoint": "reduce dt, or use integrator='rk4' (4th order)",
}
_CANON = {"semi_implicit_euler": "euler", "rkmk4": "rk4", "implicit_midpoint": "midpoint"}


def external_potential(model, q0, tau_or_controller):
    """The potential ``V(q)`` of the run's input, or ``None`` when the input is not known to be
    conservative (module doc).  ``lambda Q: V`` takes a stack of configurations (K, nq)."""
    if tau_or_controller is None:
        return lambda Q: np.zeros(len(Q))
    if callable(tau_or_controller):
        pot = getattr(tau_or_controller, "potential", None)
        if callable(pot):
            return lambda Q: np.array([float(pot(q)) for q in Q])
        return None
    tau = np.asarray(tau_or_controller, dtype=float)
    if not np.any(tau):
        return lambda Q: np.zeros(len(Q))
    if model.has_quaternion_joints:
        return None  # a constant torque on a rotation group is not the gradient of a potential
    q0 = np.array(q0, dtype=float)
    return lambda Q: -(np.asarray(Q) - q0) @ tau


def gravity_scale(model, q) -> float:
    """``U_g = |g| Σᵢ mᵢ ‖cᵢ(q) − o‖`` (J), ``o`` the origin of the root body (module doc)."""
    from dqdyn.algebra.rotations import translation_of
    from dqdyn.kinematics.forward import com_poses, forward_kinematics

    g = float(np.linalg.norm(np.asarray(model.gravity)))
    if g == 0.0 or model.nbodies < 1:
        return 0.0
    c = translation_of(com_poses(model, q))
    o = translation_of(forward_kinematics(model, q)[1])
    m = np.asarray(model.mass, dtype=float)
    return g * float(np.sum(m * np.linalg.norm(c - o, axis=-1)))


class Monitor:
    """Collects samples ``(k, t, q, v)`` and checks them block by block (module doc)."""

    def __init__(self, model, potential, *, tolerance, every, mode, integrator, dt,
                 constraints=(), constraint_tolerance=1e-6):
        self.model, self.potential = model, potential
        self.tol, self.every, self.mode = float(tolerance), int(every), mode
        self.integrator = _CANON.get(integrator, integrator)
        self.dt = float(dt)
        self.cons, self.ctol = list(constraints), float(constraint_tolerance)
        self.pending = []
        self.E0 = None
        self.Tpeak = self.Ug = 0.0
        self.max_error = 0.0
        self.max_constraint_error = 0.0
        self.cfirst = None
        self.first = None
        self.t_last = 0.0

    def sample(self, k, t, q, v):
        if k % self.every == 0:
            self.pending.append((t, q, v))
            if len(self.pending) >= BLOCK:
                self.flush()

    def _energy_check(self, ts, Q, V):
        if self.potential is None:
            return
        T = np.atleast_1d(kinetic_energy(self.model, Q, V))
        E = T + np.atleast_1d(potential_energy(self.model, Q)) + self.potential(Q)
        if self.E0 is None:
            self.E0 = float(E[0])
            self.Ug = gravity_scale(self.model, Q[0])
        peak = np.maximum.accumulate(np.maximum(T, self.Tpeak))
        self.Tpeak = float(peak[-1])
        scale = np.maximum(peak, self.Ug)
        floor = 1e-12 * (1.0 + abs(self.E0))  # below it nothing moved: no scale to judge by
        err = np.where(scale > floor, np.abs(E - self.E0) / np.maximum(scale, floor), 0.0)
        self.max_error = max(self.max_error, float(err.max(initial=0.0)))
        bad = np.flatnonzero(err > self.tol)
        if bad.size and self.first is None:
            self.first = float(ts[int(bad[0])])
            if self.mode == "raise":
                self._report(self._energy_message())

    def _energy_message(self):
        return (f"simulate: the energy of {self.model.name!r} drifted beyond energy_tolerance = "
                f"{self.tol:g} at t = {self.first:.6g} s, to a relative error of "
                f"{self.max_error:.3g} (of the energy in motion) by t = {self.t_last:.6g} s, with "
                f"integrator={self.integrator!r}, dt={self.dt:g} s: the step does not resolve "
                f"this motion; " + _ADVICE.get(self.integrator, "reduce dt"))

    def _constraint_check(self, ts, Q, V):
        if not self.cons:
            return
        from dqdyn.constraints.dynamics import constraint_errors

        for t, q, v in zip(ts, Q, V):
            pe = float(constraint_errors(self.model, q, v, self.cons)[0])
            self.max_constraint_error = max(self.max_constraint_error, pe)
            if pe > self.ctol and self.cfirst is None:
                self.cfirst = (float(t), pe)
                if self.mode == "raise":
                    self._report(self._constraint_message())

    def _constraint_message(self):
        t, pe = self.cfirst
        return (f"simulate: the constraints of {self.model.name!r} drifted beyond "
                f"constraint_tolerance = {self.ctol:g} at t = {t:.6g} s (position error {pe:.3g}), "
                f"to {self.max_constraint_error:.3g} by t = {self.t_last:.6g} s, with "
                f"integrator={self.integrator!r}, dt={self.dt:g} s; use project=True, "
                f"baumgarte=(alpha, beta) or a smaller dt")

    def _report(self, msg):
        if self.mode == "raise":
            raise EnergyDriftError(msg)
        warnings.warn(msg, EnergyDriftWarning, stacklevel=4)

    def flush(self):
        if not self.pending:
            return
        ts = np.array([p[0] for p in self.pending])
        Q = np.array([p[1] for p in self.pending])
        V = np.array([p[2] for p in self.pending])
        self.pending = []
        self.t_last = float(ts[-1])
        self._energy_check(ts, Q, V)
        self._constraint_check(ts, Q, V)

    def finish(self) -> dict:
        """Flush, warn (``mode="warn"``) if the energy drifted, and return the largest errors."""
        self.flush()
        if self.mode == "warn":
            if self.first is not None:
                self._report(self._energy_message())
            if self.cfirst is not None:
                self._report(self._constraint_message())
        out = {}
        if self.potential is not None:
            out["energy_error"] = self.max_error
        if self.cons:
            out["constraint_error"] = self.max_constraint_error
        return out


def make_monitor(model, q0, tau_or_controller, monitor, *, tolerance, every, integrator, dt,
                 constraints, baumgarte, constraint_tolerance):
    """The `Monitor` ``simulate`` runs, or ``None`` (see `simulate`'s ``monitor``)."""
    if monitor is None:
        mode = "warn"
    elif monitor is False or monitor == "off":
        return None
    elif monitor is True:
        mode = "warn"
    elif monitor in ("warn", "raise"):
        mode = monitor
    else:
        raise DqdynError(f"monitor must be None (automatic), 'warn', 'raise', 'off', True or "
                         f"False, got {monitor!r}")
    if not (isinstance(tolerance, (int, float, np.floating)) and np.isfinite(tolerance)
            and tolerance > 0):
        raise DqdynError(f"energy_tolerance must be a positive relative error, got {tolerance!r}")
    if isinstance(every, (bool, np.bool_)) or not isinstance(every, (int, np.integer)) or every < 1:
        raise DqdynError(f"monitor_every must be an integer >= 1 (steps), got {every!r}")
    pot = external_potential(model, q0, tau_or_controller)
    if constraints and baumgarte is not None:
        pot = None  # Baumgarte's stabilising forces do work
    if pot is None and monitor is not None and not constraints:
        raise DqdynError(
            "monitor: the energy balance needs a passive or conservative run (no torque, a "
            "constant torque on a model without quaternion joints, or a controller with a "
            "potential(q) method), got a controller without potential(q); pass monitor=None "
            "or 'off'")
    if pot is None and not constraints:
        return None
    return Monitor(model, pot, tolerance=tolerance, every=every, mode=mode,
                   integrator=integrator, dt=dt, constraints=constraints,
                   constraint_tolerance=constraint_tolerance)


__all__ = ["Monitor", "make_monitor", "external_potential"]
