"""Bad input to dqdyn.parallel: coincident attachment points, slack cables, singular poses.

Every case must raise a ``dqdyn.errors`` exception whose message names the offending argument
and says what was expected.  The oracles are physical facts checked independently here: a leg
of zero length has no direction; cables hanging from anchors that all lie above the platform
cannot push it down (every cable force has a positive vertical component); a Stewart platform
rotated about the vertical axis passes a pose where ``det Λ`` changes sign (found by bisection
on the determinant of the *independently* computed leg-length Jacobian).
"""

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from dqdyn import errors
from dqdyn.parallel import CableRobot, StewartPlatform, cable_robot_8, lie, stewart_6_6
from dqdyn.parallel import dynamics as dy
from dqdyn.parallel.stewart import FKSingularError


def pose_z(angle, height=1.2):
    return lie.pose(Rotation.from_rotvec([0, 0, angle]).as_quat(scalar_first=True), [0, 0, height])


def legs_jacobian_np(rob, eta, h=1e-6):
    """Independent body Jacobian of the leg lengths |R r + t − s| by central differences."""
    R, t = lie.pose_rotation(eta), lie.pose_translation(eta)
    legs = lambda R_, t_: np.linalg.norm(rob.platform_points @ R_.T + t_ - rob.base_points, axis=1)
    cols = []
    for i in range(6):
        e = np.eye(6)[i]
        f = lambda s: legs(R @ Rotation.from_rotvec(s * e[:3]).as_matrix(), t + R @ (s * e[3:]))
        cols.append((f(h) - f(-h)) / (2 * h))
    return np.stack(cols, 1)


@pytest.fixture(scope="module")
def singular_pose():
    """The 6-6 platform turned 90° about the vertical axis: det of the independently computed
    leg Jacobian changes sign there and its smallest singular value vanishes."""
    rob = stewart_6_6()
    det = lambda a: np.linalg.det(legs_jacobian_np(rob, pose_z(a)))
    assert det(np.deg2rad(89.0)) * det(np.deg2rad(91.0)) < 0
    eta = pose_z(np.pi / 2)
    sv = np.linalg.svd(legs_jacobian_np(rob, eta), compute_uv=False)
    assert sv[-1] < 1e-8 * sv[0]
    return rob, eta


# ----------------------------------------------------------------------- coincident attachment points
def test_duplicate_legs_are_rejected():
    rob = stewart_6_6()
    b, p = rob.base_points, rob.platform_points
    b[3], p[3] = b[0], p[0]  # leg 3 joins the same two points as leg 0
    with pytest.raises(errors.ModelError, match=r"platform_points, base_points: actuators 0 and 3 .*coincident.*expected distinct"):
        StewartPlatform(b, p, home_height=1.2)
    # sharing a single end point is legitimate (3-3 / 6-3 platforms)
    p2 = rob.platform_points
    p2[1] = p2[0]
    assert StewartPlatform(rob.base_points, p2, home_height=1.2).n == 6


def test_duplicate_cables_are_rejected():
    rob = cable_robot_8(pulleys=False)
    r, s = rob.platform_points, rob.base_points
    r[5], s[5] = r[2], s[2]
    with pytest.raises(errors.ModelError, match=r"platform_points, anchors: actuators 2 and 5"):
        CableRobot(r, s, home=rob.home)


def test_attachment_point_on_its_anchor():
    rob = stewart_6_6()
    eta = lie.pose(None, rob.base_points[2] - rob.platform_points[2])  # r_2 lands on s_2
    assert rob.lengths(eta)[2] == pytest.approx(0.0, abs=1e-15)  # the length itself exists ...
    with pytest.raises(errors.SingularError, match=r"^eta: .*actuator 2.*coincides with its anchor.*expected"):
        rob.lie_jacobian(eta)  # ... its direction does not
    with pytest.raises(errors.SingularError, match=r"^eta\[1\]: .*actuator 2"):
        rob.evaluate(np.stack([rob.home, eta]))
    # forward kinematics started there fails loudly (never a silent pose)
    with pytest.raises(errors.ConvergenceError, match="guess"):
        rob.forward_kinematics(rob.lengths(rob.home), eta)
    assert not rob.forward_kinematics(rob.lengths(rob.home), eta, check=False).converged
    # a robot whose home pose is degenerate is a model error naming `home`
    with pytest.raises(errors.ModelError, match=r"^home: .*actuator 0"):
        StewartPlatform(rob.base_points, rob.base_points, home_height=0.0)


def test_pulley_cable_degenerate_geometry():
    rob = cable_robot_8()
    g = rob.geometry
    axes = g[:, 7:10].copy()
    axes[4] = 0.0
    with pytest.raises(errors.ModelError, match=r"pulley_axes\[4\] is zero; expected"):
        CableRobot(g[:, 1:4], g[:, 4:7], pulley_axes=axes, pulley_radii=0.05, rod_lengths=0.05, home=rob.home)
    # attachment point on the swivel axis of pulley 0: the plane of the pulley is undefined
    eta = lie.pose(None, g[0, 4:7] - np.array([0, 0, 0.3]) - g[0, 1:4])
    with pytest.raises(errors.SingularError, match=r"^eta: .*actuator 0.*pulley"):
        rob.lie_jacobian(eta)


# ----------------------------------------------------------------------- slack cables
def suspended():
    a = 2.0
    anchors = np.array([[a * np.cos(t), a * np.sin(t), 3.0] for t in np.deg2rad([0, 60, 120, 180, 240, 300])])
    plat = np.array([[0.2 * np.cos(t), 0.2 * np.sin(t), 0.0] for t in np.deg2rad([30, 30, 150, 150, 270, 270])])
    return CableRobot(plat, anchors, home=lie.pose(None, [0, 0, 1.0]))


def test_wrench_that_needs_a_slack_cable():
    rob = suspended()
    # oracle: all anchors are above the platform, so every cable pulls upward (u_z < 0 in the
    # paper's orientation, force −t u has a positive z component): no taut cables push down
    rw = rob.platform_points + [0, 0, 1.0]
    assert np.all(rob.base_points[:, 2] > rw[:, 2])
    up = rob.tensions(rob.home, [0, 0, 50.0, 0, 0, 0])
    assert np.all(up > 0)
    with pytest.raises(errors.InfeasibleError, match=r"^wrench: .*cable\(s\) \[.*\] would go slack.*expected"):
        rob.tensions(rob.home, [0, 0, -50.0, 0, 0, 0])
    res = rob.tension_distribution(rob.home, [0, 0, -50.0, 0, 0, 0])
    assert not res.feasible and res.slack.size >= 1 and res.tensions is None


def test_inverse_dynamics_slack_cable_names_the_sample():
    rob = suspended()
    pl = dy.Platform(mass=5.0, inertia=0.1 * np.eye(3))
    # accelerating downward faster than gravity would need a push: the cables go slack
    xid = np.array([[0, 0, 0, 0, 0, -5.0], [0, 0, 0, 0, 0, -15.0]])
    with pytest.raises(errors.InfeasibleError, match=r"^eta\[1\]: wrench: .*slack"):
        dy.inverse_dynamics(rob, pl, rob.home, np.zeros(6), xid, distribution="tension")
    with pytest.raises(errors.InfeasibleError):  # the default for cable robots
        dy.inverse_dynamics(rob, pl, rob.home, np.zeros(6), xid)
    ok = dy.inverse_dynamics(rob, pl, rob.home, np.zeros(6), xid[0])
    assert np.all(-ok.forces > 0)  # all six cables taut when accelerating down at 5 < g


def test_measured_lengths_with_a_slack_cable():
    """A cable paid out 5 cm beyond the taut length at the true pose (slack): no pose has those
    lengths; the over-constrained solver reports it (never a silent pose)."""
    rob = cable_robot_8()
    tgt = rob.sample_poses(1, 10, 0.1, 3)[0]
    ell = rob.lengths(tgt)
    ell[5] += 0.05
    with pytest.raises(errors.ConvergenceError, match="expected lengths ell consistent"):
        rob.forward_kinematics(ell, tgt)
    r = rob.forward_kinematics(ell, tgt, check=False)
    assert not r.converged and r.loss > 1e-6


# ----------------------------------------------------------------------- singular poses
def test_singular_pose_statics_and_dynamics(singular_pose):
    rob, eta = singular_pose
    with pytest.raises(errors.SingularError, match=r"^eta: Λ is singular.*expected a pose away from singularities"):
        rob.actuator_forces(eta, [0, 0, 10.0, 0, 0, 0])
    with pytest.raises(errors.SingularError, match=r"^eta\[1\]: Λ is singular"):
        rob.actuator_forces(np.stack([rob.home, eta]), [0, 0, 10.0, 0, 0, 0])
    pl = dy.Platform(mass=3.0)
    with pytest.raises(errors.SingularError, match=r"^eta: Λ is singular"):
        dy.inverse_dynamics(rob, pl, eta, np.zeros(6), np.zeros(6))
    # away from it all of this works
    assert np.all(np.isfinite(rob.actuator_forces(rob.home, [0, 0, 10.0, 0, 0, 0])))


def test_forward_kinematics_from_a_singular_guess(singular_pose):
    rob, eta = singular_pose
    with pytest.raises(FKSingularError, match=r"guess: .*singular at the initial guess") as ei:
        rob.forward_kinematics(rob.lengths(rob.home), eta)
    assert isinstance(ei.value, errors.SingularError) and isinstance(ei.value, errors.ConvergenceError)
    assert ei.value.result.status == 2 and not ei.value.result.converged


def test_other_bad_arguments():
    rob = stewart_6_6()
    with pytest.raises(errors.ShapeError, match="wrench"):
        rob.actuator_forces(rob.home, np.zeros(5))
    with pytest.raises(errors.NonFiniteError, match="eta"):
        rob.lie_jacobian(np.full(8, np.nan))
    with pytest.raises(errors.ShapeError, match="base_points"):
        StewartPlatform(np.zeros((6, 2)), np.zeros((6, 3)))
    with pytest.raises(errors.ModelError, match="CableRobot"):
        dy.inverse_dynamics(rob, dy.Platform(mass=1.0), rob.home, np.zeros(6), np.zeros(6), distribution="tension")
