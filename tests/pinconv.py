"""Test helpers for the Pinocchio comparisons: a thin re-export of the public bridge
:mod:`dqdyn.interop.pinocchio` (model conversion, q / v / a / τ / Jacobian maps), plus the
example-robot-data robots the tests use.  Skips the importing test module without Pinocchio.
"""

from __future__ import annotations

import os
import sysconfig

import pytest

pin = pytest.importorskip("pinocchio")

from dqdyn.algebra.rotations import matrix_from_pose, matrix_from_quat, quat_from_matrix  # noqa: E402
from dqdyn.interop.pinocchio import (  # noqa: E402,F401
    _se3,
    a_from_pin,
    a_to_pin,
    from_pinocchio,
    jacobian_from_pin,
    jacobian_to_pin,
    joint_map,
    matrix_from_pin,
    pin_fext,
    pin_from_model,
    pin_from_urdf,
    pin_jac_to_ours,
    q_from_pin,
    q_to_pin,
    tau_from_pin,
    tau_to_pin,
    tdot_matrix,
    tdot_v,
    to_pinocchio,
    v_from_pin,
    v_to_pin,
    v_transform,
)

ERD = os.path.join(sysconfig.get_paths()["purelib"], "cmeel.prefix", "share", "example-robot-data", "robots")


def erd(rel: str) -> str:
    p = os.path.join(ERD, rel)
    if not os.path.exists(p):
        pytest.skip(f"example-robot-data file {rel} not installed")
    return p


# the robots used across the Pinocchio comparisons (path, root joint)
ROBOTS = {
    "panda": ("panda_description/urdf/panda.urdf", None),
    "ur5": ("ur_description/urdf/ur5_robot.urdf", None),
    "kinova": ("kinova_description/robots/kinova.urdf", None),
    "tiago": ("tiago_description/robots/tiago.urdf", "planar"),
    "talos": ("talos_data/robots/talos_reduced.urdf", "free"),
    "anymal": ("anymal_b_simple_description/robots/anymal.urdf", "free"),
    "baxter": ("baxter_description/urdf/baxter.urdf", None),
    "hyq": ("hyq_description/robots/hyq_no_sensors.urdf", "free"),
    "solo12": ("solo_description/robots/solo12.urdf", "free"),
    "double_pendulum": ("double_pendulum_description/urdf/double_pendulum_continuous.urdf", None),
    "xarm7": ("xarm_description/urdf/xarm7.urdf", None),
    "z1": ("z1_description/urdf/z1.urdf", None),
}


def pose_to_matrix(x8):
    return matrix_from_pose(x8)


def pin_frame_id(pm, name):
    return pm.getFrameId(name)


__all__ = [
    "pin",
    "erd",
    "ERD",
    "ROBOTS",
    "pin_from_urdf",
    "pin_from_model",
    "joint_map",
    "q_to_pin",
    "v_transform",
    "tdot_v",
    "pin_jac_to_ours",
    "matrix_from_quat",
    "quat_from_matrix",
]

