"""Constraints for constrained dynamics: ``A(q, v) v̇ = b(q, v)`` objects.

* `DifferentialDriveConstraint` — rolling without slipping of a differential-drive base
  (nonholonomic; axle point anywhere on the base); `model_constraints` turns a model's
  declared `DifferentialDrive` into one.
* `LoopClosure` — closure of a kinematic loop between two frames: ``"6d"`` weld, ``"3d"``
  point, ``"5d"`` revolute-type, ``"1d"`` distance.
* `JointCoupling` — ``q_j = r q_m + c`` (gears, mimic-type couplings).
* `UserConstraint` — a callable ``(model, q, v) -> (A, b)`` or constant ``A``, ``b``.
* `pseudo_coordinates` — Hamel / Boltzmann–Hamel equations in quasi-velocities
  (`PseudoCoordinates`, [Mladenova, §6]).
* `models` — bundled models with their constraints: the 8-DoF differential-drive mobile
  manipulator, a four-bar, a five-bar, a slider-crank.

The dynamics live in `dqdyn.constraints.dynamics` (``constrained_forward_dynamics``,
``constrained_inverse_dynamics``, ``project_state``); simulate with
`dqdyn.simulation.simulate` (``constraints=...``).
"""

from dqdyn.constraints.base import Constraint, as_constraint_list, frame_kinematics, resolve_frame
from dqdyn.constraints.loops import JointCoupling, LoopClosure, UserConstraint
from dqdyn.constraints.models import five_bar, four_bar, mobile_manipulator, slider_crank
from dqdyn.constraints.nonholonomic import DifferentialDriveConstraint, model_constraints
from dqdyn.constraints.pseudo_coordinates import HamelResult, PseudoCoordinates, diff_drive_quasi_velocities

__all__ = [
    "Constraint",
    "DifferentialDriveConstraint",
    "LoopClosure",
    "JointCoupling",
    "UserConstraint",
    "model_constraints",
    "mobile_manipulator",
    "four_bar",
    "five_bar",
    "slider_crank",
    "frame_kinematics",
    "resolve_frame",
    "as_constraint_list",
    "PseudoCoordinates",
    "HamelResult",
    "diff_drive_quasi_velocities",
]
