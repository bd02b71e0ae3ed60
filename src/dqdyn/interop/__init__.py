"""Bridges to other robotics libraries (optional dependencies, imported on first use):

* `dqdyn.interop.pinocchio` — models to / from Pinocchio, q / v / a / τ / M / Jacobian
  conversions (``pip install pin``);
* `dqdyn.interop.dqrobotics` — DQ Robotics ``DQ`` ↔ vec8, DH / MDH serial manipulators ↔
  models, pose-Jacobian derivative checks (``pip install dqrobotics``).

``pip install 'dqdyn[interop]'`` installs both.
"""

__all__ = ["pinocchio", "dqrobotics"]
