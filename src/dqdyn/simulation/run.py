"""``run_simulation``: what ``dqdyn simulate`` does, callable from Python.

>>> import dqdyn
>>> from dqdyn.simulation.run import run_simulation
>>> res = run_simulation(dqdyn.load_example("two_link_arm"), duration=0.01)
>>> res.trajectory.q.shape
(11, 2)
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from dqdyn.errors import DqdynError
from dqdyn.kinematics.forward import difference
from dqdyn.simulation.controllers import ComputedTorque, JointPD
from dqdyn.simulation.defaults import (
    JointLimits,
    WithLimits,
    coordinate_kinds,
    effective_inertia,
    start_configuration,
    tracking_reference,
)
from dqdyn.simulation.simulate import simulate
from dqdyn.simulation.trajectory import Trajectory


@dataclass
class SimulationRun:
    """The result of `run_simulation`."""

    model: object
    trajectory: Trajectory
    controller: str
    #: reference configurations (len(t), nq) at the recorded times, ``None`` without controller
    q_ref: np.ndarray | None
    #: tracking error ``q_ref ⊖ q`` (len(t), nv), ``None`` without controller
    error: np.ndarray | None
    #: per velocity coordinate: True rotational (rad, N·m), False translational (m, N)
    rotational: np.ndarray = field(default=None)
    labels: list = field(default_factory=list)
    notes: list = field(default_factory=list)

    @property
    def max_error(self) -> float:
        return float(np.abs(self.error).max()) if self.error is not None else float("nan")

    @property
    def rms_error(self) -> float:
        return float(np.sqrt(np.mean(self.error**2))) if self.error is not None else float("nan")


def run_simulation(model, *, duration: float = 1.0, dt: float = 1e-3,
                   controller: str = "computed-torque",
                   kp=None, kd=None, bandwidth: float = 5.0, amplitude: float = 0.5,
                   frequency: float = 0.5, integrator: str = "rk4", limits: bool = True,
                   q0=None) -> SimulationRun:
    """Simulate ``model`` from `start_configuration` (or
    ``q0``) at rest, tracking `tracking_reference`.

    ``controller``: ``"computed-torque"`` (`ComputedTorque`, the default: the closed loop
    is ``ë + K_d ė + K_p e = 0`` whatever the robot), ``"pd"`` (`JointPD`, PD + gravity
    compensation) or ``"none"`` (zero torque: a free fall under gravity).
    ``kp``, ``kd``: ``None`` scales the gains to the robot with ``ω = 2π·bandwidth`` (Hz):
    for ``pd`` ``kp_i = m_i ω²``, ``kd_i = 2 m_i ω`` with ``m_i`` the joint's effective inertia
    (`effective_inertia`); for ``computed-torque`` (whose gains
    act on accelerations) ``ω²`` and ``2ω``.  ``limits``: add
    `JointLimits`.  A free or planar root joint is driven by
    the controller too (the base is held where it starts; with ``"none"`` it falls).

    Raises
    ------
    DqdynError
        A bad ``controller``, ``duration``, ``dt`` or ``bandwidth``.
    DivergenceError
        The integration blew up ("diverged at t = …; reduce dt or the gains").
    SingularError
        ``M(q0)`` is singular (a joint that moves no mass).
    """
    if controller not in ("pd", "computed-torque", "none"):
        raise DqdynError(f"controller must be 'pd', 'computed-torque' or 'none', got {controller!r}")
    if not (np.isfinite(duration) and duration > 0 and np.isfinite(dt) and dt > 0):
        raise DqdynError(f"duration and dt must be positive, got {duration!r}, {dt!r}")
    if not (np.isfinite(bandwidth) and bandwidth > 0):
        raise DqdynError(f"bandwidth must be > 0 Hz, got {bandwidth!r}")
    q0 = start_configuration(model) if q0 is None else np.array(q0, dtype=float)
    v0 = np.zeros(model.nv)
    rot, labels = coordinate_kinds(model)
    notes = []
    roots = [n for n in model.joint_names if model.joint_type_name(n) in ("free", "planar")]
    if roots and controller != "none":
        notes.append(f"note: the {model.joint_type_name(roots[0])} root joint {roots[0]!r} is "
                     f"driven by the controller (held where it starts); --fixed-base welds it")
    w = 2 * np.pi * bandwidth
    ref = law = None
    if controller != "none":
        ref = tracking_reference(model, q0, amplitude, frequency)
        if controller == "pd":
            m = effective_inertia(model, q0) if kp is None or kd is None else None
            law = JointPD(model, ref, kp=m * w**2 if kp is None else kp,
                          kd=2 * m * w if kd is None else kd)
        else:
            law = ComputedTorque(model, ref, kp=w**2 if kp is None else kp,
                                 kd=2 * w if kd is None else kd)
    if limits:
        law = WithLimits(law, JointLimits(model, q0))
    traj = simulate(model, q0, v0, law, duration, dt, integrator=integrator, progress=None)
    q_ref = err = None
    if ref is not None:
        q_ref = np.array([ref.position(t) for t in traj.t])
        err = np.array([difference(model, q, qr) for q, qr in zip(traj.q, q_ref)])
    return SimulationRun(model, traj, controller, q_ref, err, rot, labels, notes)


__all__ = ["run_simulation", "SimulationRun"]
