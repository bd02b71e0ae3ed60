"""Trajectory generation (uses `dqdyn.algebra` only; plain numpy, vectorised over ``t``).

* `so3` — Park–Kang Cayley cubics on SO(3) [Mladenova, §9]: `CayleyCubic` (two-point
  with boundary angular velocities) and `CayleySpline` (multi-point C²; any step below half
  a turn: long steps are cut into geodesic pieces).  Rotations are matrices, unit
  quaternions ``[w, x, y, z]`` or unit dual quaternions.
* `se3` — unit-dual-quaternion curves: `ScrewInterpolation` (ScLERP) and
  `SE3Spline` (C² cumulative B-spline through poses, any rotation step below half a turn),
  with twists and twist derivatives.  Poses are unit dual quaternions or homogeneous matrices.
* `joint` — joint-space `quintic`, `trapezoidal`, `via_points` (velocity /
  acceleration limits) as `PiecewisePolynomial` references (``traj(t) -> (q, q̇, q̈)``, the
  protocol of `dqdyn.simulation.controllers`), and RTB-style `jtraj`, `mstraj`,
  `ctraj`.
"""

from dqdyn.trajectory.joint import PiecewisePolynomial, ctraj, jtraj, mstraj, quintic, trapezoidal, via_points
from dqdyn.trajectory.se3 import ScrewInterpolation, SE3Sample, SE3Spline, time_scaling
from dqdyn.trajectory.so3 import CayleyCubic, CayleySpline, SO3Sample, relative_vp

__all__ = ["CayleyCubic", "CayleySpline", "SO3Sample", "relative_vp", "SE3Sample", "SE3Spline",
           "ScrewInterpolation", "time_scaling", "PiecewisePolynomial", "quintic", "trapezoidal",
           "via_points", "jtraj", "mstraj", "ctraj"]
