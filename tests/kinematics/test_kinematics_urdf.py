"""Poses, Jacobians and Jacobian derivatives on real robots (example-robot-data) against
Pinocchio, fixed and free / planar roots, at random configurations, to 1e-10."""

import numpy as np
import pytest

import dqdyn
from dqdyn.algebra.rotations import matrix_from_pose

from pinconv import ROBOTS, erd, pin, pin_from_urdf, pin_jac_to_ours, q_to_pin, tdot_v, v_transform

load_urdf = pytest.importorskip("dqdyn.parsers.urdf").load_urdf

KIN_ROBOTS = ["panda", "ur5", "kinova", "tiago", "talos", "anymal", "baxter", "hyq", "solo12", "xarm7"]
PIN_FRAMES = {"body": pin.LOCAL, "spatial": pin.WORLD, "world_aligned": pin.LOCAL_WORLD_ALIGNED}


@pytest.fixture(scope="module", params=KIN_ROBOTS)
def robot(request):
    rel, root = ROBOTS[request.param]
    path = erd(rel)
    m = load_urdf(path, root_joint=root)
    pm = pin_from_urdf(path, root)
    return request.param, m, pm


def _link_frames(m, pm):
    names = [pm.frames[k].name for k in range(len(pm.frames))
             if pm.frames[k].type == pin.FrameType.BODY and pm.frames[k].name in m.frame_names]
    return names


def test_sizes(robot):
    name, m, pm = robot
    assert m.nv == pm.nv
    # pin keeps a fixed root link's mass on the universe (index 0); dqdyn counts moving bodies
    assert abs(m.total_mass - sum(I.mass for I in pm.inertias[1:])) < 1e-9


def test_link_poses_match_pinocchio(robot):
    name, m, pm = robot
    pd = pm.createData()
    frames = _link_frames(m, pm)
    assert len(frames) >= min(5, m.nbodies)
    rng = np.random.default_rng(0)
    for _ in range(4):
        q = dqdyn.random_configuration(m, seed=rng)
        qp = q_to_pin(m, pm, q)
        pin.framesForwardKinematics(pm, pd, qp)
        X = dqdyn.frame_poses(m, q)
        for f in frames:
            T = matrix_from_pose(X[m.frame_index(f)])
            np.testing.assert_allclose(T, pd.oMf[pm.getFrameId(f)].homogeneous, atol=1e-10,
                                       err_msg=f"{name}: frame {f}")


def test_joint_jacobians_match_pinocchio(robot):
    """``joint_jacobians`` = Pinocchio's ``data.J`` (spatial axes, rows reordered to [ω, v]),
    single state (the fast path) and batched."""
    name, m, pm = robot
    if getattr(pm, "nvExtended", pm.nv) != pm.nv:
        pytest.skip("mimic joints: Pinocchio's data.J keeps a column per mimic joint (nvExtended), "
                    "dqdyn adds it into its master's; the frame Jacobians below cover mimics")
    pd = pm.createData()
    rng = np.random.default_rng(2)
    Q = dqdyn.random_configuration(m, size=3, seed=rng)
    J = dqdyn.joint_jacobians(m, Q)
    for k, q in enumerate(Q):
        Jp = pin_jac_to_ours(pin.computeJointJacobians(pm, pd, q_to_pin(m, pm, q)))
        want = Jp @ v_transform(m, pm, q)
        np.testing.assert_allclose(dqdyn.joint_jacobians(m, q), want, atol=1e-10, err_msg=name)
        np.testing.assert_allclose(J[k], want, atol=1e-10, err_msg=name)


@pytest.mark.parametrize("frame", ["body", "spatial", "world_aligned"])
def test_frame_jacobians_match_pinocchio(robot, frame):
    name, m, pm = robot
    pd = pm.createData()
    frames = _link_frames(m, pm)
    pick = [frames[-1], frames[len(frames) // 2], frames[len(frames) // 3]]
    rng = np.random.default_rng(1)
    for _ in range(2):
        q = dqdyn.random_configuration(m, seed=rng)
        v = rng.normal(size=m.nv)
        qp = q_to_pin(m, pm, q)
        T = v_transform(m, pm, q)
        vp = T @ v
        pin.computeJointJacobians(pm, pd, qp)
        pin.computeJointJacobiansTimeVariation(pm, pd, qp, vp)
        pin.updateFramePlacements(pm, pd)
        for f in pick:
            fid = pm.getFrameId(f)
            Jp = pin_jac_to_ours(pin.getFrameJacobian(pm, pd, fid, PIN_FRAMES[frame]))
            J = dqdyn.twist_jacobian(m, q, f, frame)
            np.testing.assert_allclose(J, Jp @ T, atol=1e-10, err_msg=f"{name}: {f}")
            J2, Jd = dqdyn.jacobian_time_derivative(m, q, v, f, frame)
            Jdp = pin_jac_to_ours(pin.getFrameJacobianTimeVariation(pm, pd, fid, PIN_FRAMES[frame]))
            np.testing.assert_allclose(Jd @ v, Jdp @ vp + Jp @ tdot_v(m, pm, q, v), atol=1e-9,
                                       err_msg=f"{name}: {f}")
