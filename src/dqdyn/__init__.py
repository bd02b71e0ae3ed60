"""dqdyn — dynamics of robotic systems in dual quaternion algebra.

The public API is re-exported here; see the README for conventions (vec8 / vec6 layouts, frames,
q / v layouts per joint type).  Kernels compile lazily on first use and are cached on disk.
"""

from . import algebra, errors
from .algorithms.kinematics import (
    body_twists,
    com_poses,
    difference,
    forward_kinematics,
    frame_pose,
    frame_poses,
    integrate,
    jacobian_dot_times_v,
    jacobian_time_derivative,
    joint_jacobians,
    neutral,
    normalize_configuration,
    pose_jacobian,
    random_configuration,
    tangent_bracket,
    twist_jacobian,
)
from .multibody import DifferentialDrive, Model, ModelBuilder, random_tree, serial_chain

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
]
