"""Simulation and control: manifold integrators, `simulate`, controllers, references.

>>> import dqdyn, numpy as np
>>> from dqdyn.simulation import simulate, JointPD
>>> m = dqdyn.load_bundled("two_link_arm")
>>> traj = simulate(m, np.zeros(m.nq), np.zeros(m.nv), JointPD(m, np.array([0.3, -0.2])),
...                 duration=0.01, dt=1e-3)
>>> traj.q.shape
(11, 2)
"""

from dqdyn.simulation.controllers import ComputedTorque, JointPD, WrenchControl
from dqdyn.simulation.integrators import INTEGRATORS, rkmk4, semi_implicit_euler
from dqdyn.simulation.references import SinusoidalReference
from dqdyn.simulation.simulate import simulate
from dqdyn.simulation.trajectory import Trajectory

__all__ = ["simulate", "Trajectory", "rkmk4", "semi_implicit_euler", "INTEGRATORS", "JointPD",
           "ComputedTorque", "WrenchControl", "SinusoidalReference"]
