"""dqdyn — dynamics of robotic systems in dual quaternion algebra.

The public API is re-exported here; see the README for conventions (vec8 / vec6 layouts, frames,
q / v layouts per joint type).  Kernels compile lazily on first use and are cached on disk.
"""

from dqdyn import algebra, constraints, errors
from dqdyn.composition.modular import Assembly, ModularResult
from dqdyn.config import get_batch_chunk, get_num_threads, set_batch_chunk, set_num_threads
from dqdyn.constraints.dynamics import (
    constrained_forward_dynamics,
    constrained_inverse_dynamics,
    constraint_errors,
    project_state,
    udwadia_kalaba,
)
from dqdyn.contact import (
    CentroidalDynamicsDerivatives,
    ContactDynamicsDerivatives,
    ContactDynamicsResult,
    FrameContact,
    ImpulseDynamicsResult,
    PointContact,
    centroidal_dynamics_derivatives,
    centroidal_momentum,
    centroidal_momentum_matrix,
    centroidal_momentum_rate,
    com_jacobian,
    contact_dynamics,
    contact_dynamics_derivatives,
    frame_acceleration,
    frame_velocity,
    impulse_dynamics,
)
from dqdyn.dynamics.coriolis import coriolis_matrix
from dqdyn.dynamics.derivatives import (
    aba_derivatives,
    hybrid_dynamics_derivatives,
    inertial_parameters,
    joint_torque_regressor,
    rnea_derivatives,
)
from dqdyn.dynamics.dqel import DQEL, dq_euler_lagrange, frame_wrench_fext, wrench_input
from dqdyn.dynamics.energy import center_of_mass, kinetic_energy, mechanical_energy, potential_energy
from dqdyn.dynamics.forward import (
    aba,
    constrained_aba,
    constrained_hybrid_dynamics,
    hybrid_dynamics,
    mass_matrix_inverse,
)
from dqdyn.dynamics.gauss import gauss_model
from dqdyn.dynamics.lagrange import (
    gravity,
    mass_matrix,
    nonlinear_effects,
    solve_mass_matrix,
)
from dqdyn.dynamics.mobile import fierro_lewis
from dqdyn.dynamics.newton_euler import NewtonEulerResult, newton_euler, rnea
from dqdyn.dynamics.parameter_derivatives import aba_parameter_derivatives
from dqdyn.kinematics.forward import (
    body_twists,
    com_poses,
    difference,
    forward_kinematics,
    frame_pose,
    frame_poses,
    integrate,
    neutral,
    normalize_configuration,
    random_configuration,
    tangent_bracket,
)
from dqdyn.kinematics.jacobians import (
    jacobian_dot_times_v,
    jacobian_time_derivative,
    joint_jacobians,
    pose_jacobian,
    pose_jacobian_derivative,
    twist_jacobian,
)
from dqdyn.loading import load
from dqdyn.models import (
    ConstrainedExample,
    list_models,
    load_constrained_example,
    load_example,
    load_parallel_example,
    model_info,
)
from dqdyn.multibody import DifferentialDrive, Model, ModelBuilder, random_tree, serial_chain
from dqdyn.multibody.payload import attach_payload
from dqdyn.parsers import bundled, bundled_models, load_bundled, load_urdf, serial_from_dh
from dqdyn.parsers.mjcf import load_mjcf

__version__ = "0.1.0"

__all__ = [
    "algebra",
    "errors",
    "Model",
    "ModelBuilder",
    "DifferentialDrive",
    "random_tree",
    "serial_chain",
    "forward_kinematics",
    "frame_pose",
    "frame_poses",
    "com_poses",
    "body_twists",
    "twist_jacobian",
    "joint_jacobians",
    "jacobian_time_derivative",
    "jacobian_dot_times_v",
    "pose_jacobian",
    "integrate",
    "difference",
    "neutral",
    "normalize_configuration",
    "random_configuration",
    "tangent_bracket",
    "set_num_threads",
    "get_num_threads",
    "load_urdf",
    "load_mjcf",
    "pose_jacobian_derivative",
    "load_bundled",
    "bundled",
    "bundled_models",
    "serial_from_dh",
    "rnea",
    "newton_euler",
    "NewtonEulerResult",
    "gravity",
    "nonlinear_effects",
    "mass_matrix",
    "coriolis_matrix",
    "solve_mass_matrix",
    "mass_matrix_inverse",
    "aba",
    "hybrid_dynamics",
    "constrained_aba",
    "constrained_hybrid_dynamics",
    "rnea_derivatives",
    "aba_derivatives",
    "hybrid_dynamics_derivatives",
    "aba_parameter_derivatives",
    "joint_torque_regressor",
    "inertial_parameters",
    "dq_euler_lagrange",
    "DQEL",
    "wrench_input",
    "frame_wrench_fext",
    "fierro_lewis",
    "Assembly",
    "ModularResult",
    "constraints",
    "constrained_forward_dynamics",
    "constrained_inverse_dynamics",
    "constraint_errors",
    "project_state",
    "udwadia_kalaba",
    "gauss_model",
    "kinetic_energy",
    "potential_energy",
    "mechanical_energy",
    "center_of_mass",
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
    "load",
    "load_example",
    "load_constrained_example",
    "load_parallel_example",
    "ConstrainedExample",
    "attach_payload",
    "list_models",
    "model_info",
    "set_batch_chunk",
    "get_batch_chunk",
]
