"""DQ Robotics bridge: fkm, pose Jacobian and its time derivative against DQ Robotics itself (to
1e-14, same sign — also with base and tool poses of negative scalar part), round trips
DQ Robotics → dqdyn → DQ Robotics, the pose-Jacobian derivative against central differences of
the pose Jacobian, and named errors."""

from __future__ import annotations

import numpy as np
import pytest

import dqdyn
from dqdyn.algebra.rotations import pose_from_rt, quat_from_axis_angle
from dqdyn.errors import ModelError, ShapeError

dqr = pytest.importorskip("dqrobotics")
from dqrobotics.robot_modeling import (  # noqa: E402
    DQ_SerialManipulatorDenso,
    DQ_SerialManipulatorDH,
    DQ_SerialManipulatorMDH,
)

from dqdyn.interop.dqrobotics import from_dq, from_dqrobotics, to_dq, to_dqrobotics  # noqa: E402

# a 7-DoF table (θ, d, a, α, type) with a prismatic joint and offsets
TABLE = np.array([
    [0.1, -0.4, 1.2, 0.3, 0.0, -2.5, 0.7],
    [0.333, 0.0, 0.316, 0.0, 0.384, 0.0, 0.107],
    [0.0, 0.05, 0.0, 0.0825, -0.0825, 0.0, 0.088],
    [-np.pi / 2, np.pi / 2, np.pi / 2, -np.pi / 2, np.pi / 2, np.pi / 2, 0.0],
    [0, 0, 1, 0, 0, 0, 0],
])


def _pose(axis, angle, p):
    return pose_from_rt(quat_from_axis_angle(np.asarray(axis, float), angle), np.asarray(p, float))


# base and tool with negative scalar parts (angles > π), and a plain pair
NEG_BASE = _pose([0.2, -0.3, 1.0], 5.5, [0.1, -0.2, 0.3])
NEG_TOOL = _pose([1.0, 0.4, -0.2], 4.0, [0.0, 0.05, 0.12])
POS_BASE = _pose([0, 0, 1], 0.4, [0.5, 0.0, 0.1])
POS_TOOL = _pose([0, 1, 0], -0.3, [0.0, 0.0, 0.1])


def _robot(cls, base, tool):
    r = cls(TABLE)
    r.set_reference_frame(to_dq(base))
    r.set_base_frame(to_dq(base))
    r.set_effector(to_dq(tool))
    return r


CASES = [(cls, b, t) for cls in (DQ_SerialManipulatorDH, DQ_SerialManipulatorMDH)
         for b, t in ((NEG_BASE, NEG_TOOL), (NEG_BASE, POS_TOOL), (POS_BASE, NEG_TOOL), (POS_BASE, POS_TOOL))]
IDS = [f"{c.__name__[-3:]}-base_{'neg' if b is NEG_BASE else 'pos'}-tool_{'neg' if t is NEG_TOOL else 'pos'}"
       for c, b, t in CASES]


def test_negative_scalar_poses_are_really_negative():
    assert NEG_BASE[0] < 0 and NEG_TOOL[0] < 0


def test_dq_vec8_round_trip():
    x = np.arange(1.0, 9.0)
    assert np.array_equal(from_dq(to_dq(x)), x)
    assert np.array_equal(to_dq(x).vec8(), x)
    with pytest.raises(ShapeError, match="vec8"):
        to_dq(np.zeros(7))
    with pytest.raises(ShapeError, match="dqrobotics.DQ"):
        from_dq(np.zeros(8))


@pytest.mark.parametrize("cls, base, tool", CASES, ids=IDS)
def test_fkm_pose_jacobian_and_derivative_match_dqrobotics(cls, base, tool):
    robot = _robot(cls, base, tool)
    model = from_dqrobotics(robot)
    rng = np.random.default_rng(0)
    for _ in range(10):
        q, qd = rng.uniform(-np.pi, np.pi, 7), rng.normal(size=7)
        x = dqdyn.frame_pose(model, q, "tool")
        assert np.abs(x - robot.fkm(q).vec8()).max() < 1e-14  # same sign, not −x
        J = dqdyn.pose_jacobian(model, q, "tool")
        assert np.abs(J - robot.pose_jacobian(q)).max() < 1e-14
        Jd = dqdyn.pose_jacobian_derivative(model, q, qd, "tool")
        assert np.abs(Jd - robot.pose_jacobian_derivative(q, qd)).max() < 1e-14 * max(1, np.abs(qd).max()) * 10
    # the base and tool come back with their own sign
    assert np.abs(dqdyn.frame_pose(model, dqdyn.neutral(model), "link0") - base).max() < 1e-15


def test_dh_base_tool_keep_their_sign():
    """serial_from_dh with vec8 base / tool of negative scalar part: x, not −x (a 4×4 matrix
    would give the w ≥ 0 representative)."""
    tab = TABLE[:4].T
    types = "".join("RP"[int(t)] for t in TABLE[4])
    m1 = dqdyn.serial_from_dh(tab, joint_types=types, base=NEG_BASE, tool=NEG_TOOL)
    m2 = dqdyn.serial_from_dh(tab, joint_types=types, base=-NEG_BASE, tool=NEG_TOOL)
    q = np.linspace(-1, 1, 7)
    x1, x2 = dqdyn.frame_pose(m1, q, "tool"), dqdyn.frame_pose(m2, q, "tool")
    assert np.abs(x1 + x2).max() < 1e-14  # the sign follows the given base
    assert np.abs(dqdyn.frame_pose(m1, q, "link0") - NEG_BASE).max() < 1e-15
    J1, J2 = dqdyn.pose_jacobian(m1, q, "tool"), dqdyn.pose_jacobian(m2, q, "tool")
    assert np.abs(J1 + J2).max() < 1e-14


@pytest.mark.parametrize("cls, base, tool", CASES, ids=IDS)
def test_round_trip_dqrobotics_dqdyn_dqrobotics(cls, base, tool):
    robot = _robot(cls, base, tool)
    conv = "modified" if cls is DQ_SerialManipulatorMDH else "standard"
    back = to_dqrobotics(from_dqrobotics(robot), conv)
    assert type(back) is cls
    for get in ("get_thetas", "get_ds", "get_as", "get_alphas", "get_types"):
        assert np.abs(np.ravel(getattr(back, get)()) - np.ravel(getattr(robot, get)())).max() < 1e-14, get
    assert np.abs(back.get_reference_frame().vec8() - robot.get_reference_frame().vec8()).max() < 1e-14
    assert np.abs(back.get_effector().vec8() - robot.get_effector().vec8()).max() < 1e-14
    q = np.linspace(-2, 2, 7)
    assert np.abs(back.fkm(q).vec8() - robot.fkm(q).vec8()).max() < 1e-14
    assert np.abs(back.pose_jacobian(q) - robot.pose_jacobian(q)).max() < 1e-14


def test_pose_jacobian_derivative_finite_differences():
    """J̇_x against central differences of J_x along q(t) = q + t v, on a tree with every joint
    type (v is the joint velocity; for spherical / free joints q(t) = integrate(q, t v))."""
    model = dqdyn.random_tree(9, seed=5)
    rng = np.random.default_rng(1)
    name = model.frame_names[-1]
    for _ in range(3):
        q = dqdyn.random_configuration(model, seed=rng)
        v = rng.normal(size=model.nv)
        h = 1e-6
        Jp = dqdyn.pose_jacobian(model, dqdyn.integrate(model, q, v, h), name)
        Jm = dqdyn.pose_jacobian(model, dqdyn.integrate(model, q, v, -h), name)
        fd = (Jp - Jm) / (2 * h)
        Jd = dqdyn.pose_jacobian_derivative(model, q, v, name)
        assert np.abs(Jd - fd).max() < 1e-7 * max(1, np.abs(fd).max())
        # and vec8(ẍ) = J ẍ... : second derivative of x along the same curve with a = 0
        xp, x0, xm = (dqdyn.frame_pose(model, dqdyn.integrate(model, q, v, t), name) for t in (h * 100, 0, -h * 100))
        # ẍ = J̇ v for a curve with v̇ = 0 (body-frame v for spherical / free joints is constant)
        assert np.abs((xp - 2 * x0 + xm) / (h * 100) ** 2 - Jd @ v).max() < 1e-5 * max(1, np.abs(Jd @ v).max())


def test_named_errors():
    denso = DQ_SerialManipulatorDenso(np.zeros((6, 2)))
    with pytest.raises(ModelError, match="DQ_SerialManipulatorDenso has no dqdyn counterpart"):
        from_dqrobotics(denso)

    class Spherical(DQ_SerialManipulatorDH):  # a joint type dqdyn's DH models lack
        def get_types(self):
            return np.array([0.0, 2.0])

    r = Spherical(TABLE[:, :2])
    with pytest.raises(ModelError, match="joint 2 has DQ Robotics joint type 2"):
        from_dqrobotics(r)
    with pytest.raises(ModelError, match="lacks the DH frames"):
        to_dqrobotics(dqdyn.serial_chain(3))
    model = from_dqrobotics(_robot(DQ_SerialManipulatorDH, POS_BASE, POS_TOOL))
    with pytest.raises(ModelError, match="not a modified DH link"):
        to_dqrobotics(model, "modified")
