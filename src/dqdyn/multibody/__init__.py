"""Models of multibody systems: joints, the immutable Model, builders."""

from .builders import ALL_JOINT_TYPES, ModelBuilder, random_tree, serial_chain
from .joints import JOINT_DIMS, JOINT_TYPE_NAMES, JOINT_TYPES
from .model import DifferentialDrive, Model

__all__ = [
    "Model",
    "ModelBuilder",
    "DifferentialDrive",
    "serial_chain",
    "random_tree",
    "ALL_JOINT_TYPES",
    "JOINT_TYPES",
    "JOINT_TYPE_NAMES",
    "JOINT_DIMS",
]
