"""Bundled constraint-carrying models.  Each function returns ``(model, constraints, q0)`` with a
configuration ``q0`` that satisfies the constraints (to ~1e-15; any ``v`` with ``A v = 0``, e.g.
zero, completes a consistent state).

* `mobile_manipulator` — the paper's case ([Silva2022, §4.5, §5]): a differential-drive base
  ``(x, y, φ)`` (planar joint) carrying a 5-DoF arm, 8 DoF, one nonholonomic constraint; the axle
  midpoint is behind the base origin and the base CoM ahead of it (so neither coincides with the
  axle; [Silva2022, eq. (64)] holds for a point on the axle, and the paper tacitly puts the CoM there).
* `four_bar`, `five_bar`, `slider_crank` — planar closed chains in the x–z plane
  (joint axes along y, gravity −z), each loop cut at one joint and closed with a ``3d`` point
  constraint: two effective rows and one identically zero row (a redundant constraint).
"""

from __future__ import annotations

import numpy as np

from dqdyn.constraints.loops import LoopClosure
from dqdyn.constraints.nonholonomic import DifferentialDriveConstraint
from dqdyn.errors import ModelError
from dqdyn.multibody.builders import ModelBuilder
from dqdyn.multibody.model import DifferentialDrive


def _rod_inertia(m: float, length: float, radius: float = 0.02) -> np.ndarray:
    """Inertia about the CoM of a uniform rod along body x (a slender cylinder)."""
    ia = 0.5 * m * radius**2
    it = m * (3 * radius**2 + length**2) / 12.0
    return np.diag([ia, it, it])


def _box_inertia(m: float, a: float, b: float, c: float) -> np.ndarray:
    return m / 12.0 * np.diag([b * b + c * c, a * a + c * c, a * a + b * b])


def mobile_manipulator(*, arm_dof: int = 5, axle_offset=(-0.12, 0.0), gravity=(0.0, 0.0, -9.81)):
    """The paper's 8-DoF differential-drive mobile manipulator ([Silva2022, §5]: base ``(x, y, φ)``
    on a planar joint + a 5-DoF arm, one nonholonomic constraint, eq. 64).

    ``arm_dof=6`` gives the 9-DoF variant (the paper's holonomic mobile manipulator's size, here
    still with the rolling constraint).  Returns ``(model, [DifferentialDriveConstraint], q0)``.
    The model declares its `DifferentialDrive` (``model.constraints``); frames:
    ``"base"``, ``"axle"`` (the axle midpoint), ``"link1"`` … ``"link<arm_dof>"``, ``"tool"``.
    """
    if arm_dof not in (5, 6):
        raise ModelError(f"arm_dof must be 5 (the paper's 8-DoF robot) or 6, got {arm_dof!r}")
    b = ModelBuilder(f"diff_drive_mobile_manipulator_{3 + arm_dof}dof", gravity=gravity)
    b.add_body("base", "world", "planar", joint_name="base_joint", mass=25.0, com=(0.06, 0.01, 0.18),
               inertia=_box_inertia(25.0, 0.6, 0.45, 0.3) + np.array(
                   [[0, 0.02, 0.01], [0.02, 0, 0.0], [0.01, 0.0, 0]]))
    b.add_frame("axle", "base", xyz=(axle_offset[0], axle_offset[1], 0.0))
    # a 6R arm with offsets in every direction (not a DH-degenerate chain)
    arm = [
        # name, axis, xyz (joint in parent), mass, com, inertia
        ("link1", (0, 0, 1), (0.15, 0.0, 0.35), 3.0, (0.0, 0.01, 0.06), _box_inertia(3.0, 0.1, 0.1, 0.15)),
        ("link2", (0, 1, 0), (0.0, 0.07, 0.09), 5.0, (0.2, 0.0, 0.02), _rod_inertia(5.0, 0.42, 0.04)),
        ("link3", (0, 1, 0), (0.42, -0.03, 0.0), 3.0, (0.18, 0.0, 0.0), _rod_inertia(3.0, 0.39, 0.03)),
        ("link4", (1, 0, 0), (0.39, 0.0, 0.02), 1.0, (0.05, 0.0, 0.0), _box_inertia(1.0, 0.1, 0.06, 0.06)),
        ("link5", (0, 1, 0), (0.09, 0.0, 0.0), 0.8, (0.0, 0.0, 0.03), _box_inertia(0.8, 0.06, 0.06, 0.08)),
        ("link6", (1, 0, 0), (0.06, 0.0, 0.05), 0.4, (0.03, 0.0, 0.0), _box_inertia(0.4, 0.05, 0.05, 0.05)),
    ]
    if arm_dof == 5:  # wrist: pitch then roll (link4 about y, link5 about x)
        arm = arm[:3] + [
            ("link4", (0, 1, 0), (0.39, 0.0, 0.02), 1.0, (0.05, 0.0, 0.01), _box_inertia(1.0, 0.1, 0.06, 0.06)),
            ("link5", (1, 0, 0), (0.09, 0.0, 0.0), 0.6, (0.04, 0.0, 0.0), _box_inertia(0.6, 0.08, 0.05, 0.05)),
        ]
    parent = "base"
    for k, (name, axis, xyz, m, com, inertia) in enumerate(arm):
        b.add_body(name, parent, "revolute", joint_name=f"joint{k + 1}", axis=axis, xyz=xyz,
                   rpy=(0.0, 0.0, 0.0), mass=m, com=com, inertia=inertia, lower=-np.pi, upper=np.pi)
        parent = name
    b.add_frame("tool", parent, xyz=(0.08, 0.0, 0.0))
    b.add_constraint(DifferentialDrive("base_joint", tuple(axle_offset), wheel_radius=0.1,
                                       track_width=0.45))
    model = b.build()
    q0 = np.array([0.3, -0.2, 0.4, 0.1, -0.6, 1.1, 0.3, 0.7, -0.4])[: 3 + arm_dof]  # x, y, φ, arm
    return model, [DifferentialDriveConstraint.from_declaration(model.constraints[0])], q0


# ------------------------------------------------------------------------------ planar linkages
def _dir(theta: float) -> np.ndarray:
    """Unit x axis rotated by θ about +y: (cos θ, −sin θ) in (x, z)."""
    return np.array([np.cos(theta), -np.sin(theta)])


def _angle(d: np.ndarray) -> float:
    """Absolute angle θ (about +y) of an (x, z) direction."""
    return float(np.arctan2(-d[1], d[0]))


def _circles(c1, r1, c2, r2, up: bool = True) -> np.ndarray:
    """An intersection (x, z) of two circles; ``up`` picks the one with the larger z."""
    c1, c2 = np.asarray(c1, float), np.asarray(c2, float)
    d = np.linalg.norm(c2 - c1)
    if d > r1 + r2 or d < abs(r1 - r2) or d == 0:
        raise ModelError("the linkage cannot be assembled at this input angle")
    a = (r1 * r1 - r2 * r2 + d * d) / (2 * d)
    h = np.sqrt(max(r1 * r1 - a * a, 0.0))
    e = (c2 - c1) / d
    p = c1 + a * e
    n = np.array([-e[1], e[0]])
    s1, s2 = p + h * n, p - h * n
    return s1 if (s1[1] >= s2[1]) == up else s2


def _link(b: ModelBuilder, name, parent, xyz, length, mass, *, joint="revolute", axis=(0, 1, 0)):
    b.add_body(name, parent, joint, joint_name=f"{name}_joint", axis=axis, xyz=xyz, mass=mass,
               com=(length / 2, 0.0, 0.0), inertia=_rod_inertia(mass, length))
    b.add_frame(f"{name}_tip", name, xyz=(length, 0.0, 0.0))


def four_bar(*, ground=0.4, crank=0.12, coupler=0.42, rocker=0.3, theta=0.6,
             gravity=(0.0, 0.0, -9.81)):
    """A crank-rocker four-bar in the x–z plane: crank at the origin, rocker pivot at
    ``(ground, 0, 0)``, coupler from the crank tip; the loop is closed at the coupler–rocker joint
    by a ``3d`` point constraint (``coupler_tip ≡ rocker_tip``).  3 joints, 1 DoF.
    Returns ``(model, [LoopClosure], q0)`` with the crank at ``theta``."""
    b = ModelBuilder("four_bar", gravity=gravity)
    _link(b, "crank", "world", (0, 0, 0), crank, 0.5)
    _link(b, "coupler", "crank", (crank, 0, 0), coupler, 1.2)
    _link(b, "rocker", "world", (ground, 0, 0), rocker, 0.9)
    model = b.build()
    B = crank * _dir(theta)
    P = _circles(B, coupler, (ground, 0.0), rocker)
    a2 = _angle(P - B)
    a3 = _angle(P - np.array([ground, 0.0]))
    q0 = np.array([theta, a2 - theta, a3])
    con = LoopClosure("coupler_tip", "rocker_tip", "3d", name="four-bar closure")
    return model, [con], q0


def five_bar(*, ground=0.3, proximal=(0.25, 0.25), distal=(0.35, 0.35), theta=(1.9, 1.2),
             gravity=(0.0, 0.0, -9.81)):
    """A planar five-bar (two 2R chains from pivots ``(0,0,0)`` and ``(ground,0,0)`` meeting at a
    common point): 4 joints, 2 DoF, closed by a ``3d`` point constraint between the distal tips.
    Returns ``(model, [LoopClosure], q0)`` with the proximal joints at ``theta``."""
    b = ModelBuilder("five_bar", gravity=gravity)
    _link(b, "left1", "world", (0, 0, 0), proximal[0], 0.6)
    _link(b, "left2", "left1", (proximal[0], 0, 0), distal[0], 0.8)
    _link(b, "right1", "world", (ground, 0, 0), proximal[1], 0.6)
    _link(b, "right2", "right1", (proximal[1], 0, 0), distal[1], 0.8)
    model = b.build()
    B1 = proximal[0] * _dir(theta[0])
    B2 = np.array([ground, 0.0]) + proximal[1] * _dir(theta[1])
    P = _circles(B1, distal[0], B2, distal[1])
    q0 = np.array([theta[0], _angle(P - B1) - theta[0], theta[1], _angle(P - B2) - theta[1]])
    con = LoopClosure("left2_tip", "right2_tip", "3d", name="five-bar closure")
    return model, [con], q0


def slider_crank(*, crank=0.1, rod=0.35, theta=0.8, slider_mass=1.5, gravity=(0.0, 0.0, -9.81)):
    """A planar slider-crank: crank about y at the origin, connecting rod, and a slider on a
    prismatic joint along x; the rod's tip is pinned to the slider by a ``3d`` point constraint.
    3 joints, 1 DoF.  Returns ``(model, [LoopClosure], q0)`` with the crank at ``theta``."""
    b = ModelBuilder("slider_crank", gravity=gravity)
    _link(b, "crank", "world", (0, 0, 0), crank, 0.4)
    _link(b, "rod", "crank", (crank, 0, 0), rod, 0.7)
    b.add_body("slider", "world", "prismatic", joint_name="slider_joint", axis=(1, 0, 0),
               mass=slider_mass, inertia=_box_inertia(slider_mass, 0.08, 0.05, 0.05))
    model = b.build()
    B = crank * _dir(theta)
    s = B[0] + np.sqrt(rod * rod - B[1] * B[1])
    q0 = np.array([theta, _angle(np.array([s, 0.0]) - B) - theta, s])
    con = LoopClosure("rod_tip", "slider", "3d", name="slider-crank closure")
    return model, [con], q0


__all__ = ["mobile_manipulator", "four_bar", "five_bar", "slider_crank"]
