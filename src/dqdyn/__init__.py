"""dqdyn — dynamics of robotic systems in dual quaternion algebra."""

from . import errors
from .multibody import DifferentialDrive, Model, ModelBuilder, random_tree, serial_chain

__version__ = "0.1.0"
