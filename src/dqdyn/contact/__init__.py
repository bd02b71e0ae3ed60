"""Legged robots: centroidal dynamics, frame velocities / accelerations, rigid contacts, contact
and impulse dynamics (docs: "Legged robots").

* :mod:`.centroidal` — :func:`centroidal_momentum_matrix`, :func:`centroidal_momentum`,
  :func:`centroidal_momentum_rate`, :func:`com_jacobian` [Orin2013];
* :mod:`.kinematics` — :func:`frame_velocity`, :func:`frame_acceleration` (spatial or classical);
* :mod:`.contacts` — :class:`PointContact` (3D), :class:`FrameContact` (6D), constraints in the
  contact frame (usable by :func:`dqdyn.constrained_forward_dynamics` too);
* :mod:`.dynamics` — :func:`contact_dynamics` (KKT with a proximal solve, [Carpentier2021]);
* :mod:`.impulse` — :func:`impulse_dynamics` (restitution, [Featherstone2008, §11.1]).
"""

from .centroidal import (
    centroidal_momentum,
    centroidal_momentum_matrix,
    centroidal_momentum_rate,
    com_jacobian,
)
from .contacts import FrameContact, PointContact
from .dynamics import ContactDynamicsResult, contact_dynamics
from .impulse import ImpulseDynamicsResult, impulse_dynamics
from .kinematics import frame_acceleration, frame_velocity

__all__ = [
    "centroidal_momentum_matrix",
    "centroidal_momentum",
    "centroidal_momentum_rate",
    "com_jacobian",
    "frame_velocity",
    "frame_acceleration",
    "PointContact",
    "FrameContact",
    "contact_dynamics",
    "ContactDynamicsResult",
    "impulse_dynamics",
    "ImpulseDynamicsResult",
]
