"""Trajectory generation (uses :mod:`dqdyn.algebra` only; plain numpy, vectorised over ``t``).

* :mod:`.so3` — Park–Kang Cayley cubics on SO(3) (seed 004 §9): :class:`CayleyCubic` (two-point
  with boundary angular velocities) and :class:`CayleySpline` (multi-point C²).
"""

from .so3 import CayleyCubic, CayleySpline, SO3Sample, relative_vp

__all__ = ["CayleyCubic", "CayleySpline", "SO3Sample", "relative_vp"]
