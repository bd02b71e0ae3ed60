"""Model loaders: URDF files (`load_urdf`, bundled models) and DH tables
(`serial_from_dh`)."""

from dqdyn.parsers.dh import dh_matrix, serial_from_dh
from dqdyn.parsers.mjcf import MujocoMap, load_mjcf
from dqdyn.parsers.urdf import bundled, bundled_models, load_bundled, load_urdf

__all__ = ["load_urdf", "serial_from_dh", "dh_matrix", "bundled", "bundled_models", "load_bundled",
           "load_mjcf", "MujocoMap"]
