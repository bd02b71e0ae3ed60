"""Models of multibody systems: joints, the immutable Model, builders."""

from dqdyn.multibody.builders import ALL_JOINT_TYPES, ModelBuilder, random_tree, serial_chain
from dqdyn.multibody.joints import JOINT_DIMS, JOINT_TYPE_NAMES, JOINT_TYPES
from dqdyn.multibody.model import DifferentialDrive, Model

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
