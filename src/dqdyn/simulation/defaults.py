"""Defaults that make a simulation of a real robot work without tuning.

A robot's joints see inertias that differ by orders of magnitude (a Panda's shoulder: ~1 kg m²;
its 15 g fingers: ~0.03 kg), so one pair of gains (``kp = 100``, ``kd = 20``) gives the fingers
a closed loop that is stiff beyond what an explicit integrator with ``dt = 1e-3`` can follow.
Here every gain is scaled by the *effective inertia* of its joint at the start,

    m_i = 1 / (M(q₀)⁻¹)_ii   (kg m² for a rotation, kg for a translation),

the inertia the joint feels when the others move freely (the articulated-body inertia a joint
torque accelerates; ``m_i ≤ M_ii``).  With ``kp_i = m_i ω²`` and ``kd_i = 2 ζ m_i ω`` each joint
alone is a second-order loop of natural frequency ω and damping ζ, and the coupled loop
``M ë + K_d ė + K_p e = 0`` has its frequencies below ``√nv · ω``, so ``ω = 2π · 2 Hz`` stays far
inside the stability region of RK4 at ``dt = 1e-3`` for any robot.

* `effective_inertia`, `scaled_gains` — the scaling above.
* `start_configuration` — ``neutral(model)`` with each 1-DoF joint whose neutral value
  lies outside its limits moved to the middle of its range (Panda's ``panda_joint4``:
  ``[-3.07, -0.07]`` rad).
* `JointLimits` — one-sided spring–dampers at the joint limits, scaled the same way
  (``ω = 2π · 10 Hz``, critically damped): a free fall (no controller) keeps the fingers of a
  gripper on their 4 cm stroke instead of letting them slide away.
* `tracking_reference` — a `SinusoidalReference` whose per-joint amplitude keeps
  the reference inside the joint's range, and holds free / planar root joints still.
"""

from __future__ import annotations

import numpy as np

from dqdyn.dynamics.lagrange import mass_matrix
from dqdyn.errors import DqdynError, SingularError
from dqdyn.kinematics.forward import neutral
from dqdyn.simulation.references import SinusoidalReference, staggered_lags

#: joint types with one scalar coordinate whose limits `JointLimits` enforces
_SCALAR = ("revolute", "prismatic", "helical")


def effective_inertia(model, q) -> np.ndarray:
    """``1 / diag(M(q)⁻¹)`` (nv,): kg m² for rotational, kg for translational coordinates.

    Raises
    ------
    SingularError
        ``M(q)`` is singular (a joint moves no mass); the message names the joint.
    """
    M = mass_matrix(model, q)
    try:
        L = np.linalg.cholesky(M)
    except np.linalg.LinAlgError:
        bad = int(np.argmin(np.diag(M)))
        raise SingularError(
            f"the joint-space inertia matrix of {model.name!r} is singular at the start (the "
            f"coordinate v[{bad}] moves almost no mass, M_ii = {M[bad, bad]:.3g})") from None
    Linv = np.linalg.solve(L, np.eye(model.nv))
    return 1.0 / np.einsum("ij,ij->j", Linv, Linv)  # diag(M⁻¹) = column norms² of L⁻¹


def scaled_gains(model, q, omega: float = 2 * np.pi * 2.0, zeta: float = 1.0):
    """``(kp, kd)`` (nv,) with ``kp_i = m_i ω²``, ``kd_i = 2 ζ m_i ω`` (module doc).

    ``omega`` in rad/s, ``zeta`` dimensionless.  Units of the gains: N·m/rad and N·m·s/rad on
    rotational coordinates, N/m and N·s/m on translational ones.
    """
    if not (np.isfinite(omega) and omega > 0 and np.isfinite(zeta) and zeta >= 0):
        raise DqdynError(f"omega must be > 0 and zeta >= 0, got {omega!r}, {zeta!r}")
    m = effective_inertia(model, q)
    return m * omega**2, 2.0 * zeta * m * omega


def _scalar_joints(model):
    """``[(name, iq, iv, lower, upper, rotational)]`` of the 1-coordinate joints that own v."""
    out = []
    for name in model.joint_names:
        jt = model.joint_type_name(name)
        if jt not in _SCALAR:
            continue
        iq, iv = model.q_slice(name).start, model.v_slice(name).start
        out.append((name, iq, iv, float(model.q_lower[iq]), float(model.q_upper[iq]),
                    jt != "prismatic"))
    return out


def coordinate_kinds(model) -> tuple[np.ndarray, list[str]]:
    """For each velocity coordinate: ``True`` if rotational (rad/s, torque N·m), ``False`` if
    translational (m/s, force N); and a label per coordinate (joint name, with ``[k]`` for
    multi-coordinate joints: free ``[ωx ωy ωz vx vy vz]``, planar ``[x y φ]``, …)."""
    rot = np.ones(model.nv, dtype=bool)
    labels = [""] * model.nv
    for name in model.joint_names:
        jt = model.joint_type_name(name)
        vs = model.v_slice(name)
        if jt == "prismatic":
            rot[vs] = False
            labels[vs.start] = name
        elif jt == "free":
            rot[vs.start + 3: vs.stop] = False
            for k, s in enumerate(("ωx", "ωy", "ωz", "vx", "vy", "vz")):
                labels[vs.start + k] = f"{name} {s}"
        elif jt == "planar":
            rot[vs.start: vs.start + 2] = False
            for k, s in enumerate(("x", "y", "φ")):
                labels[vs.start + k] = f"{name} {s}"
        elif jt == "cylindrical":
            rot[vs.start + 1] = False
            labels[vs.start], labels[vs.start + 1] = f"{name} θ", f"{name} d"
        elif jt == "spherical":
            for k, s in enumerate(("ωx", "ωy", "ωz")):
                labels[vs.start + k] = f"{name} {s}"
        else:
            labels[vs.start] = name
    return rot, labels


def start_configuration(model) -> np.ndarray:
    """``neutral(model)`` with every 1-DoF joint whose neutral value is outside its finite
    limits moved to the middle of its range."""
    q = np.array(neutral(model), dtype=float)
    for _, iq, _, lo, hi, _ in _scalar_joints(model):
        if np.isfinite(lo) and np.isfinite(hi) and not (lo <= q[iq] <= hi):
            q[iq] = 0.5 * (lo + hi)
    return q


class JointLimits:
    """One-sided spring–dampers at the limits of the revolute / prismatic / helical joints:
    beyond a limit, ``τ_i = −k_i (q_i − q_lim) − d_i v_i`` (the damper only while moving
    outward), with ``k_i = m_i ω²``, ``d_i = 2 m_i ω`` (`effective_inertia` at ``q0``).
    Inside the limits the torque is zero.  ``tau = limits(q, v)`` (nv,)."""

    def __init__(self, model, q0, omega: float = 2 * np.pi * 10.0):
        self.model = model
        js = [j for j in _scalar_joints(model) if np.isfinite(j[3]) or np.isfinite(j[4])]
        self.iq = np.array([j[1] for j in js], dtype=int)
        self.iv = np.array([j[2] for j in js], dtype=int)
        self.lo = np.array([j[3] for j in js], dtype=float)
        self.hi = np.array([j[4] for j in js], dtype=float)
        m = effective_inertia(model, q0)[self.iv] if js else np.zeros(0)
        self.k, self.d = m * omega**2, 2.0 * m * omega

    def __call__(self, q, v) -> np.ndarray:
        tau = np.zeros(self.model.nv)
        if self.iq.size == 0:
            return tau
        x, xd = q[self.iq], v[self.iv]
        below, above = x < self.lo, x > self.hi
        f = np.where(below, self.k * (self.lo - x) - self.d * np.minimum(xd, 0.0), 0.0)
        f = np.where(above, -self.k * (x - self.hi) - self.d * np.maximum(xd, 0.0), f)
        tau[self.iv] = f
        return tau


class WithLimits:
    """A controller ``tau(t, q, v)`` (or none) plus `JointLimits` torques."""

    def __init__(self, controller, limits: JointLimits):
        self.controller, self.limits = controller, limits

    def __call__(self, t, q, v):
        tau = self.limits(q, v)
        if self.controller is not None:
            tau = tau + np.asarray(self.controller(t, q, v), dtype=float)
        return tau


def tracking_reference(model, q0, amplitude: float = 0.5, frequency: float = 0.5,
                       fill: float = 0.4) -> SinusoidalReference:
    """Sinusoidal joint-velocity reference ``v_d = A_i sin(2π f (t − lag_i))`` from ``q0``,
    the moving coordinates lagged by `dqdyn.simulation.references.staggered_lags`
    (a quarter period spread over them: distinguishable curves, each starting at rest).

    ``amplitude`` (rad/s, or m/s for translations) is capped per joint so that the reference
    position ``q0 + A_i/(2πf) (1 − cos 2πf t)`` covers at most ``fill`` of the room between
    ``q0`` and the farther limit, and goes toward that limit; coordinates of free, planar and
    spherical joints (a floating base) get amplitude 0 (held where they start).
    """
    w = 2 * np.pi * frequency
    A = np.zeros(model.nv)
    for _, iq, iv, lo, hi, _ in _scalar_joints(model):
        up, down = hi - q0[iq], q0[iq] - lo
        room = max(up, down)
        a = amplitude if not np.isfinite(room) else min(amplitude, fill * room * w / 2.0)
        A[iv] = a if up >= down else -a
    for name in model.joint_names:
        if model.joint_type_name(name) == "cylindrical":
            A[model.v_slice(name)] = amplitude
    return SinusoidalReference(model, q0, A, frequency, lag=staggered_lags(A, frequency))


__all__ = ["effective_inertia", "scaled_gains", "start_configuration", "JointLimits",
           "WithLimits", "tracking_reference", "coordinate_kinds"]
