"""Analytic derivatives of inverse and forward dynamics [Kim2012, §4, Tables 5–6], in O(n·d).

The directional derivatives of [Kim2012, Table 5] (Kim's method, [Kim2012, §4.2]) are organised as
Carpentier & Mansard (2018, "Analytical derivatives of rigid body dynamics algorithms", RSS)
organise them: every quantity is carried in the **world frame** ``0``, where a joint's
perturbation moves its whole subtree rigidly, so all the columns come out of one forward and
one backward sweep (cost O(n·d), d the depth of the tree) instead of one sweep per column.

**Configuration convention.** Derivatives with respect to ``q`` are taken along the tangent
directions of `dqdyn.integrate`: for a spherical or free joint the k-th column is
``d/dε τ(q ⊕ ε e_k)`` with the body-frame perturbation ``x ← x exp(½ ε e_k)`` — the same as
Pinocchio's ``computeRNEADerivatives`` (up to dqdyn's ``[ω, v]`` ordering of free-joint
velocities); for every other joint it is the ordinary partial derivative (planar: ``v = q̇``).
So every derivative matrix is nv × nv.

The package, by what its modules are:

- `_inertia` — world-frame inertias as 10 parameters, their rate, the planar joint's terms;
- `_sweeps` — the compiled world-frame sweeps (forward, mass, bias, derivative) and
  `dynamics_sweep`, which the constrained dynamics share; notation and formulas in its docstring;
- `kernels` — ``rnea_derivatives_kernel``, ``aba_derivatives_kernel`` (the forward-dynamics
  derivatives and how ``M⁻¹`` is taken), their batches, call-gate entries and the compiled chain
  rule of models with mimic joints;
- `fronts` — the public functions and their Python paths.
"""

from __future__ import annotations

from dqdyn.dynamics.derivatives.fronts import (
    aba_derivatives,
    hybrid_dynamics_derivatives,
    rnea_derivatives,
)

# the regressor form lives in dqdyn.dynamics.regressor; imported here for callers that take it from this package
from dqdyn.dynamics.regressor import (  # noqa: F401
    INERTIAL_PARAMETERS,
    inertial_parameters,
    joint_torque_regressor,
)

__all__ = ["aba_derivatives", "hybrid_dynamics_derivatives", "rnea_derivatives"]
