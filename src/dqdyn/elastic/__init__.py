"""Elastic-joint manipulators ([Mladenova, §7]): rotors, gears, joint springs.

* `elastic` / `ElasticModel` — declare per joint a rotor (mass, axial and transverse
  inertia, placement on the parent link), gear ratio N, stiffness K and damping D on any dqdyn
  model; `load_elastic_urdf` reads a YAML sidecar next to a URDF and the URDF's
  ``<transmission>`` mechanical reductions.  ``M``, ``C``, ``g``, forward dynamics, simulation of
  the ``n + m``-DoF system for Spong's reduced model (eqs. 281–283) and for the full model (rotors
  as bodies of the tree: the rotor–link gyroscopic coupling of §7.2–7.3); the rigid limit
  (reflected inertia ``N² J_a``); inverse dynamics by flatness and Spong's static feedback
  linearisation (reduced model).
* `rnea_taylor` — exact time derivatives of inverse dynamics.
* `single_link_arm` — §7.5's Lie brackets (needs sympy).
"""

from dqdyn.elastic.model import ElasticModel, Rotor, elastic, load_elastic_urdf, read_sidecar, read_transmissions
from dqdyn.elastic.taylor import rnea_taylor

__all__ = ["ElasticModel", "Rotor", "elastic", "load_elastic_urdf", "read_sidecar",
           "read_transmissions", "rnea_taylor"]
