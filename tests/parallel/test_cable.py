"""Cable robots: swivel-pulley lengths, Λ / L²ℓ, over-constrained forward kinematics, tensions.

Oracles: the pulley cable length as the shortest taut path (straight segment + arc over the
pulley, minimised over the departure angle with scipy), finite differences over independently
perturbed poses, statics of cable tensions summed in the world frame.
"""

import numpy as np
import pytest
from scipy.optimize import brentq
from scipy.spatial.transform import Rotation

from dqdyn import errors
from dqdyn.parallel import CableRobot, cable_robot_8, lie
from dqdyn.parallel.cable import pulley_cable_length

from parallel_oracles import body_fd, np_pose, pose_err

RNG = np.random.default_rng(99)


def taut_length(r, x, n, w, p):
    """The cable from the pulley's top point ``c + p n`` wraps over the pulley (turning from n
    toward the effector side) and leaves along a tangent toward r: find the departure angle φ
    where the straight segment is tangent to the pulley and continues the wrap direction, then
    ℓ = p φ + |r − q(φ)| -- the independent oracle of eqs. (78)-(84)."""
    d = (x - r) - ((x - r) @ n) * n
    m = d / np.linalg.norm(d)
    c = x - w * m  # pulley centre, w from the swivel axis toward r
    q = lambda phi: c + p * (np.cos(phi) * n - np.sin(phi) * m)
    dq = lambda phi: -np.sin(phi) * n - np.cos(phi) * m  # unit tangent, increasing φ
    tang = lambda phi: (r - q(phi)) @ (q(phi) - c)  # zero at tangency
    grid = np.linspace(-np.pi / 2, 3 * np.pi / 2, 721)
    vals = np.array([tang(g) for g in grid])
    for k in np.flatnonzero(np.sign(vals[:-1]) != np.sign(vals[1:])):
        phi = brentq(tang, grid[k], grid[k + 1], xtol=1e-15)
        if (r - q(phi)) @ dq(phi) > 0:
            return p * phi + np.linalg.norm(r - q(phi))
    raise AssertionError("no tangent")


def sample(rob, angle=20.0, trans=0.3):
    R = Rotation.from_rotvec(np.deg2rad(angle) * RNG.uniform(-1, 1, 3) / np.sqrt(3)).as_matrix()
    t = lie.pose_translation(rob.home) + RNG.uniform(-trans, trans, 3)
    return R, t, np_pose(R, t)


def cable_lengths_np(rob, R, t):
    g = rob.geometry
    out = []
    for k in range(rob.n):
        rw = R @ g[k, 1:4] + t
        if g[k, 0] == 1:
            out.append(taut_length(rw, g[k, 4:7], g[k, 7:10], g[k, 10], g[k, 11]))
        else:
            out.append(np.linalg.norm(rw - g[k, 4:7]))
    return np.array(out)


@pytest.fixture(scope="module")
def pulley_robot():
    return cable_robot_8()


@pytest.fixture(scope="module")
def point_robot():
    return cable_robot_8(pulleys=False)


def test_pulley_length_is_the_taut_cable(pulley_robot):
    rob = pulley_robot
    for _ in range(3):
        R, t, eta = sample(rob)
        np.testing.assert_allclose(rob.lengths(eta), cable_lengths_np(rob, R, t), atol=1e-9)
    # the numpy reference agrees with the kernel too, and p = w = 0 is a point cable
    r, x, n = RNG.normal(size=3), RNG.normal(size=3) + [0, 0, 3], np.array([0, 0, 1.0])
    assert pulley_cable_length(r, x, n, 0.0, 0.0)[0] == pytest.approx(np.linalg.norm(x - r))


def test_pulley_cable_direction_is_length_gradient(pulley_robot):
    """u in (78)-(79) is the gradient of ℓ with respect to the attachment point (claim 10)."""
    g = pulley_robot.geometry[0]
    r = np.array([0.3, -0.2, 1.1])
    ell, u = pulley_cable_length(r, g[4:7], g[7:10], g[10], g[11])
    h = 1e-6
    grad = [(pulley_cable_length(r + h * e, g[4:7], g[7:10], g[10], g[11])[0]
             - pulley_cable_length(r - h * e, g[4:7], g[7:10], g[10], g[11])[0]) / (2 * h) for e in np.eye(3)]
    np.testing.assert_allclose(grad, u, atol=1e-9)
    assert np.linalg.norm(u) == pytest.approx(1.0)


@pytest.mark.parametrize("which", ["pulley", "point"])
def test_lie_jacobian_and_second_derivative_match_fd(which, pulley_robot, point_robot):
    rob = pulley_robot if which == "pulley" else point_robot
    for _ in range(2):
        R, t, eta = sample(rob)
        L, Lam, H = rob.evaluate(eta)
        np.testing.assert_allclose(Lam, body_fd(lambda R_, t_: rob.lengths(np_pose(R_, t_)), R, t), atol=1e-8)
        np.testing.assert_allclose(H, body_fd(lambda R_, t_: rob.lie_jacobian(np_pose(R_, t_)), R, t), atol=1e-8)
    if which == "pulley":  # also against the taut-cable oracle (coarser: scipy tolerance)
        np.testing.assert_allclose(Lam, body_fd(lambda R_, t_: cable_lengths_np(rob, R_, t_), R, t, h=1e-3), atol=1e-6)


def test_tension_statics_and_feasibility(pulley_robot):
    rob = pulley_robot
    R, t, eta = sample(rob, 10, 0.1)
    m = 10.0
    hold = np.r_[R.T @ [0, 0, m * 9.81], 0, 0, 0]  # cables must push the effector up by m g
    res = rob.tension_distribution(eta, hold)
    assert res.feasible and res.margin > 0 and np.all(res.tensions > 0)
    # statics: each cable pulls its attachment point toward the pulley, i.e. along −u
    u = rob.lie_jacobian(eta)[:, 3:] / 2  # body-frame u_k
    r = rob.platform_points
    F = -(res.tensions[:, None] * u).sum(0)
    M = -np.cross(r, res.tensions[:, None] * u).sum(0)
    np.testing.assert_allclose(np.r_[F, M], hold, atol=1e-8)
    np.testing.assert_allclose(rob.wrench(eta, rob.forces_from_tensions(res.tensions)), hold, atol=1e-8)
    assert rob.tension_feasible(eta, -hold)  # wrench-closed: pulling down works as well
    # with a tension ceiling below what the load needs, infeasible
    assert not rob.tension_feasible(eta, hold, t_max=1.0)


def test_suspended_robot_cannot_push_down():
    a = 2.0
    anchors = np.array([[a * np.cos(t), a * np.sin(t), 3.0] for t in np.deg2rad([0, 60, 120, 180, 240, 300])])
    plat = np.array([[0.2 * np.cos(t), 0.2 * np.sin(t), 0.0] for t in np.deg2rad([30, 30, 150, 150, 270, 270])])
    rob = CableRobot(plat, anchors, home=lie.pose(None, [0, 0, 1.0]))
    assert rob.tension_feasible(rob.home, [0, 0, 50.0, 0, 0, 0])
    r = rob.tension_distribution(rob.home, [0, 0, -50.0, 0, 0, 0])
    assert not r.feasible and r.tensions is None


def test_overconstrained_fk_one_percent(pulley_robot):
    rob = pulley_robot
    rng = np.random.default_rng(5)
    T = rob.sample_poses(200, 20, 0.3, rng)
    ell = rob.lengths(T)
    res = rob.forward_kinematics_batch(ell, rob.perturb_poses(T, 0.01, rng))
    assert res.all_converged and np.all(pose_err(res.poses, T) < 1e-9)
    assert np.all(res.loss < 1e-20)
    assert res.iterations.mean() < 5
    one = rob.forward_kinematics(ell[0], rob.perturb_poses(T[0], 0.01, rng)[0])
    assert one.converged and one.loss < 1e-20


def test_printed_step_sign_fails_and_gauss_newton_works(pulley_robot):
    rob = pulley_robot
    rng = np.random.default_rng(6)
    T = rob.sample_poses(100, 20, 0.3, rng)
    G = rob.perturb_poses(T, 0.01, rng)
    ell = rob.lengths(T)
    bad = rob.forward_kinematics_batch(ell, G, printed_step=True)
    assert bad.converged.mean() < 0.05
    gn = rob.forward_kinematics_batch(ell, G, method="gauss-newton")
    assert gn.all_converged and np.all(pose_err(gn.poses, T) < 1e-9)


def test_fk_with_noisy_lengths_converges_to_least_squares(point_robot):
    rob = point_robot
    tgt = rob.sample_poses(1, 10, 0.2, 3)[0]
    ell = rob.lengths(tgt) + np.random.default_rng(4).normal(size=8) * 1e-4
    r = rob.forward_kinematics(ell, tgt, loss_tol=np.inf)
    assert r.converged and r.loss > 0
    # stationarity: the gradient Λᵀ(L − ℓ) vanishes
    np.testing.assert_allclose(rob.lie_jacobian(r.pose).T @ (rob.lengths(r.pose) - ell), 0, atol=1e-12)
    with pytest.raises(errors.ConvergenceError):  # default loss_tol: not a solution of L(η) = ℓ
        rob.forward_kinematics(ell, tgt)


def test_global_and_tracking_modes(pulley_robot):
    rob = pulley_robot
    rng = np.random.default_rng(8)
    T = rob.sample_poses(20, 20, 0.3, rng)
    g = rob.forward_kinematics_global_batch(rob.lengths(T), 200, rng=rng, max_angle_deg=20, max_translation=0.3)
    assert g.all_converged and np.all(pose_err(g.poses, T) < 1e-9) and g.runs.min() >= 1
    one = rob.forward_kinematics_global(rob.lengths(T[0]), 200, rng=1, max_angle_deg=20, max_translation=0.3)
    assert one.converged and pose_err(one.pose, T[0]) < 1e-9
    s = np.linspace(0, 1, 300)
    q = Rotation.from_rotvec(np.outer(np.sin(2 * np.pi * s), [0.1, 0.2, 0.15])).as_quat(scalar_first=True)
    tr = np.stack([0.2 * np.sin(2 * np.pi * s), 0.2 * np.sin(4 * np.pi * s), 1.0 + 0.1 * s], 1)
    P = lie.pose(q, tr)
    res = rob.track(rob.lengths(P), P[0])
    assert res.all_converged and np.all(pose_err(res.poses, P) < 1e-9)


def test_bundled_robot_is_well_conditioned(pulley_robot):
    rep = pulley_robot.singularity(pulley_robot.sample_poses(100, 20, 0.3, 0), warn=False)
    assert not rep.any_near and np.isnan(rep.det).all()
    assert pulley_robot.has_pulleys and pulley_robot.n == 8


def test_bad_inputs():
    with pytest.raises(errors.ShapeError):
        CableRobot(np.zeros((8, 3)), np.zeros((7, 3)))
    with pytest.raises(errors.ModelError):
        CableRobot(np.zeros((6, 3)), np.ones((6, 3)), pulley_axes=np.tile([0, 0, 1.0], (6, 1)), pulley_radii=-1)
    with pytest.raises(errors.ShapeError):
        cable_robot_8().forward_kinematics(np.zeros(6))


def test_six_pulley_cables_use_the_least_squares_solver():
    full = cable_robot_8()
    g = full.geometry[:6]
    rob = CableRobot(g[:, 1:4], g[:, 4:7], pulley_axes=g[:, 7:10], pulley_radii=g[:, 11], rod_lengths=g[:, 10],
                     home=full.home, length_scale=4.0)
    assert rob.n == 6 and not rob.is_square
    tgt = rob.perturb_poses(rob.home, 0.01, 1)[0]
    r = rob.forward_kinematics(rob.lengths(tgt))
    assert r.converged and pose_err(r.pose, tgt) < 1e-9 and hasattr(r, "loss")
    np.testing.assert_allclose(rob.lengths(rob.home), full.lengths(full.home)[:6], atol=1e-14)
