"""Legged robots: centroidal dynamics, frame velocities / accelerations, rigid contacts, contact
and impulse dynamics (docs: "Legged robots").

* `centroidal` — `centroidal_momentum_matrix`, `centroidal_momentum`,
  `centroidal_momentum_rate`, `com_jacobian` [Orin2013];
* `derivatives` — `centroidal_dynamics_derivatives` (∂h_g/∂q, ∂ḣ_g/∂q, ∂ḣ_g/∂v, ∂ḣ_g/∂a),
  `contact_dynamics_derivatives` (∂a, ∂λ with respect to q, v, τ);
* `kinematics` — `frame_velocity`, `frame_acceleration` (spatial or classical);
* `contacts` — `PointContact` (3D), `FrameContact` (6D), constraints in the
  contact frame (usable by `dqdyn.constrained_forward_dynamics` too);
* `dynamics` — `contact_dynamics` (KKT with a proximal solve, [Carpentier2021]);
* `impulse` — `impulse_dynamics` (restitution, [Featherstone2008, ch. 11]).
"""

from dqdyn.contact.centroidal import (
    centroidal_momentum,
    centroidal_momentum_matrix,
    centroidal_momentum_rate,
    com_jacobian,
)
from dqdyn.contact.contacts import FrameContact, PointContact
from dqdyn.contact.derivatives import (
    CentroidalDynamicsDerivatives,
    ContactDynamicsDerivatives,
    centroidal_dynamics_derivatives,
    contact_dynamics_derivatives,
)
from dqdyn.contact.dynamics import ContactDynamicsResult, contact_dynamics
from dqdyn.contact.impulse import ImpulseDynamicsResult, impulse_dynamics
from dqdyn.contact.kinematics import frame_acceleration, frame_velocity

__all__ = [
    "centroidal_momentum_matrix",
    "centroidal_momentum",
    "centroidal_momentum_rate",
    "com_jacobian",
    "centroidal_dynamics_derivatives",
    "CentroidalDynamicsDerivatives",
    "frame_velocity",
    "frame_acceleration",
    "PointContact",
    "FrameContact",
    "contact_dynamics",
    "ContactDynamicsResult",
    "contact_dynamics_derivatives",
    "ContactDynamicsDerivatives",
    "impulse_dynamics",
    "ImpulseDynamicsResult",
]
