"""Parallel robots with dual-quaternion Lie derivatives ([MontgomerySmith2023]: Montgomery-Smith & Shy,
*Using Lie derivatives with dual quaternions for parallel robots*, arXiv:2202.09268v9).

* `lie` -- Lie derivatives of functions of a pose (numeric, any function; analytic for
  fixed points / directions), the pose update ``η ← η normalize(1 + θ)``, and the conversions
  between the paper's β-coordinates (``φ = ½[ω, v]``, ``τ = 2[q, p]``) and dqdyn's
  ``[ω, v]`` / ``[f, τ]`` conventions.
* `actuators` -- one actuator's length ``ℓ_k``, row ``Λ_k`` and ``L²ℓ_k`` (legs, point
  cables, swivel-pulley cables; eqs. 73-84) in compiled kernels, and the geometry table they read.
* `newton` -- Newton--Raphson forward kinematics of any leg-length robot: square (eq. 87)
  and over-constrained (eqs. 88-90), one solve, batch, tracking, global; results and errors.
* `stewart` -- `ParallelRobot` (the front end all share: ``L(η)``, ``Λ``, ``L²ℓ``,
  ``T = Λᵀ``, forward kinematics, singularity analysis, pose sampling) and the rigid-leg robots
  (6-6, 3-3, n-leg).
* `cable` -- cable robots (point and swivel-pulley cables), tension feasibility, the
  bundled 8-cable robot.
* `dynamics` -- end-effector dynamics with actuator inertia (Theorem 2 / corrected
  Theorem 1), inverse and forward dynamics, simulation with the three-way work balance.
The paper's statistics as a table (``dqdyn reproduce parallel``) are reproduced in
`dqdyn.reproduce.parallel_robots` with every other paper's experiments.

Bad input raises `dqdyn.errors` exceptions naming the argument: coincident attachment points
(`ModelError` at construction, `SingularError` for a
pose that puts an attachment point on its anchor), a wrench that needs a slack cable
(`InfeasibleError` from `CableRobot.tensions` / ``inverse_dynamics``),
a singular pose (`SingularError`; `FKSingularError` from forward
kinematics), and forward kinematics that does not converge (`ConvergenceError`).
"""

from dqdyn.parallel import lie
from dqdyn.parallel.cable import CableRobot, TensionResult, cable_robot_8
from dqdyn.parallel.dynamics import (
    Platform,
    SimulationResult,
    forward_dynamics,
    inverse_dynamics,
    mass_matrix,
    simulate,
    theorem1_wrench,
    theorem2_wrench,
)
from dqdyn.parallel.lie import (
    beta_to_twist,
    beta_to_wrench,
    lie_derivative,
    normalize,
    pose,
    pose_update,
    second_lie_derivative,
    size_l,
    twist_to_beta,
    wrench_to_beta,
)
from dqdyn.parallel.stewart import (
    FKBatchResult,
    FKResult,
    FKSingularError,
    ParallelRobot,
    SingularityReport,
    SingularityWarning,
    StewartPlatform,
    stewart_3_3,
    stewart_6_6,
)

__all__ = [
    "lie",
    "ParallelRobot",
    "StewartPlatform",
    "CableRobot",
    "stewart_6_6",
    "stewart_3_3",
    "cable_robot_8",
    "FKResult",
    "FKBatchResult",
    "FKSingularError",
    "SingularityReport",
    "SingularityWarning",
    "TensionResult",
    "Platform",
    "SimulationResult",
    "mass_matrix",
    "inverse_dynamics",
    "forward_dynamics",
    "simulate",
    "theorem1_wrench",
    "theorem2_wrench",
    "lie_derivative",
    "second_lie_derivative",
    "pose_update",
    "normalize",
    "size_l",
    "pose",
    "twist_to_beta",
    "beta_to_twist",
    "wrench_to_beta",
    "beta_to_wrench",
]
