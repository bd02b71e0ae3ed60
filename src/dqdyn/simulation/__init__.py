"""Simulation and control: manifold integrators, `simulate`, controllers, references.

>>> import dqdyn, numpy as np
>>> from dqdyn.simulation import simulate, JointPD
>>> m = dqdyn.load_bundled("two_link_arm")
>>> traj = simulate(m, np.zeros(m.nq), np.zeros(m.nv), JointPD(m, np.array([0.3, -0.2])),
...                 duration=0.01, dt=1e-3)
>>> traj.q.shape
(11, 2)
"""

from .controllers import ComputedTorque, JointPD, WrenchControl
from .integrators import INTEGRATORS, rkmk4, semi_implicit_euler
from .references import SinusoidalReference
from .simulate import simulate
from .trajectory import Trajectory

__all__ = ["simulate", "Trajectory", "rkmk4", "semi_implicit_euler", "INTEGRATORS", "JointPD",
           "ComputedTorque", "WrenchControl", "SinusoidalReference"]
