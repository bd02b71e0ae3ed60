"""Trajectory generation (uses :mod:`dqdyn.algebra` only; plain numpy, vectorised over ``t``).

* :mod:`.so3` — Park–Kang Cayley cubics on SO(3) [Mladenova, §9]: :class:`CayleyCubic` (two-point
  with boundary angular velocities) and :class:`CayleySpline` (multi-point C²).
* :mod:`.se3` — unit-dual-quaternion curves: :class:`ScrewInterpolation` (ScLERP) and
  :class:`SE3Spline` (C² cumulative B-spline through poses), with twists and twist derivatives.
* :mod:`.joint` — joint-space :func:`quintic`, :func:`trapezoidal`, :func:`via_points` (velocity /
  acceleration limits) as :class:`PiecewisePolynomial` references (``traj(t) -> (q, q̇, q̈)``, the
  protocol of :mod:`dqdyn.simulation.controllers`), and RTB-style :func:`jtraj`, :func:`mstraj`,
  :func:`ctraj`.
"""

from .joint import PiecewisePolynomial, ctraj, jtraj, mstraj, quintic, trapezoidal, via_points
from .se3 import SE3Sample, SE3Spline, ScrewInterpolation, time_scaling
from .so3 import CayleyCubic, CayleySpline, SO3Sample, relative_vp

__all__ = ["CayleyCubic", "CayleySpline", "SO3Sample", "relative_vp", "SE3Sample", "SE3Spline",
           "ScrewInterpolation", "time_scaling", "PiecewisePolynomial", "quintic", "trapezoidal",
           "via_points", "jtraj", "mstraj", "ctraj"]
