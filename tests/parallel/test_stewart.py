"""Stewart / Gough platforms: lengths, Λ, L²ℓ, statics T = Λᵀ, forward kinematics, singularities.

Oracles: leg lengths |R r + t − s| in numpy; finite differences over independently perturbed
poses (R → R Exp(h a), t → t + h R b); statics by summing leg forces in the world frame.
"""

import warnings

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from dqdyn import errors
from dqdyn.parallel import SingularityWarning, StewartPlatform, lie, stewart_3_3, stewart_6_6

from parallel_oracles import body_fd, np_pose, pose_err

RNG = np.random.default_rng(7)


def legs_np(rob, R, t):
    return np.linalg.norm((R @ rob.platform_points.T).T + t - rob.base_points, axis=1)


def sample(rob, angle=25.0, trans=0.15):
    R = Rotation.from_rotvec(np.deg2rad(angle) * RNG.uniform(-1, 1, 3) / np.sqrt(3)).as_matrix()
    t = lie.pose_translation(rob.home) + RNG.uniform(-trans, trans, 3)
    return R, t, np_pose(R, t)


def seven_legs():
    base = np.vstack([stewart_6_6().base_points, [[0.0, 1.1, 0.0]]])
    plat = np.vstack([stewart_6_6().platform_points, [[0.1, 0.3, 0.05]]])
    return StewartPlatform(base, plat, home_height=1.2, name="seven")


ROBOTS = [stewart_6_6(), stewart_3_3(), seven_legs()]


@pytest.mark.parametrize("rob", ROBOTS, ids=lambda r: r.name)
def test_lengths_and_lie_jacobian_match_fd(rob):
    for _ in range(3):
        R, t, eta = sample(rob)
        np.testing.assert_allclose(rob.lengths(eta), legs_np(rob, R, t), atol=1e-14)
        Lam = rob.lie_jacobian(eta)
        np.testing.assert_allclose(Lam, body_fd(lambda R_, t_: legs_np(rob, R_, t_), R, t), atol=1e-8)
        np.testing.assert_allclose(rob.body_jacobian(eta), Lam / 2)
        # rows 2[(r×u)ᵀ, uᵀ] with u = (r − s_body)/|r − s_body|
        sb = (R.T @ (rob.base_points - t).T).T
        u = rob.platform_points - sb
        u /= np.linalg.norm(u, axis=1, keepdims=True)
        np.testing.assert_allclose(Lam, 2 * np.hstack([np.cross(rob.platform_points, u), u]), atol=1e-14)


@pytest.mark.parametrize("rob", ROBOTS[:2], ids=lambda r: r.name)
def test_second_lie_derivative_matches_fd_and_formula(rob):
    R, t, eta = sample(rob)
    H = rob.second_lie_derivative(eta)
    # H[k, j, i] = L_i Λ_kj
    np.testing.assert_allclose(H, body_fd(lambda R_, t_: rob.lie_jacobian(np_pose(R_, t_)), R, t), atol=1e-8)
    # the fully numeric nested Lie derivative of the lengths
    Hn = lie.second_lie_derivative(rob.lengths, eta)
    np.testing.assert_allclose(H, Hn, atol=1e-7)
    # closed form (4/|r−s|) [S_r; I] P_u [−S_s I]  (eq. 77 corrected E5)
    S = lambda v: np.array([[0, -v[2], v[1]], [v[2], 0, -v[0]], [-v[1], v[0], 0]])
    for k in range(rob.n):
        r = rob.platform_points[k]
        s = R.T @ (rob.base_points[k] - t)
        L = np.linalg.norm(r - s)
        u = (r - s) / L
        P = np.eye(3) - np.outer(u, u)
        ref = 4 / L * np.vstack([S(r), np.eye(3)]) @ P @ np.hstack([-S(s), np.eye(3)])
        np.testing.assert_allclose(H[k], ref, atol=1e-13)


def test_batch_evaluation_matches_single():
    rob = stewart_6_6()
    E = rob.sample_poses(5, 20, 0.1, 1)
    L, Lam, H = rob.evaluate(E)
    for k in range(5):
        l1, lam1, h1 = rob.evaluate(E[k])
        np.testing.assert_allclose(L[k], l1)
        np.testing.assert_allclose(Lam[k], lam1)
        np.testing.assert_allclose(H[k], h1)
    assert rob.lengths(E.reshape(5, 1, 8)).shape == (5, 1, 6)


@pytest.mark.parametrize("rob", ROBOTS, ids=lambda r: r.name)
def test_statics_T_equals_lambda_transpose(rob):
    """Leg forces f_k along u_k (pushing the platform away from the base) at the attachment
    points, summed in the world frame, equal Λᵀ f (eq. 69)."""
    R, t, eta = sample(rob)
    f = RNG.normal(size=rob.n) * 10
    rw = (R @ rob.platform_points.T).T + t
    uw = rw - rob.base_points
    uw /= np.linalg.norm(uw, axis=1, keepdims=True)
    F = (f[:, None] * uw).sum(0)
    M = np.cross(rw - t, f[:, None] * uw).sum(0)  # moment about the platform-frame origin
    wrench_body = np.r_[R.T @ F, R.T @ M]  # dqdyn [f, τ]
    np.testing.assert_allclose(rob.wrench(eta, f), wrench_body, atol=1e-12)
    np.testing.assert_allclose(rob.wrench_beta(eta, f), 2 * np.r_[R.T @ M, R.T @ F], atol=1e-12)
    # virtual work: f·ℓ̇ = τ_β·φ_β
    xi = RNG.normal(size=6)
    ldot = rob.lie_jacobian(eta) @ lie.twist_to_beta(xi)
    assert f @ ldot == pytest.approx(wrench_body[:3] @ xi[3:] + wrench_body[3:] @ xi[:3])
    fr = rob.actuator_forces(eta, wrench_body)
    if rob.n == 6:
        np.testing.assert_allclose(fr, f, atol=1e-9)
    else:
        np.testing.assert_allclose(rob.wrench(eta, fr), wrench_body, atol=1e-9)


# ----------------------------------------------------------------------------- forward kinematics
def test_fk_statistics_30deg_1000_poses():
    """[MontgomerySmith2023, §10.3] at n = 1000: random poses ≤ 30°, random initial guesses: 100% correct,
    mean iterations ≤ 5 (the paper: 4.8)."""
    rob = stewart_6_6()
    rng = np.random.default_rng(11)
    T = rob.sample_poses(1000, 30, 0.2, rng)
    G = rob.sample_poses(1000, 30, 0.2, rng)
    res = rob.forward_kinematics_batch(rob.lengths(T), G)
    assert res.all_converged
    assert np.all(pose_err(res.poses, T) < 1e-9)
    assert res.iterations.mean() <= 5.0
    assert np.all(np.abs(rob.lengths(res.poses) - rob.lengths(T)) < 1e-11)


def test_fk_45deg_few_failures():
    rob = stewart_6_6()
    rng = np.random.default_rng(12)
    T = rob.sample_poses(1000, 45, 0.2, rng)
    G = rob.sample_poses(1000, 45, 0.2, rng)
    res = rob.forward_kinematics_batch(rob.lengths(T), G)
    assert np.sum(~(res.converged & (pose_err(res.poses, T) < 1e-8))) <= 1


def test_fk_single_matches_batch_and_is_unit():
    rob = stewart_6_6()
    T = rob.sample_poses(20, 30, 0.2, 3)
    G = rob.sample_poses(20, 30, 0.2, 4)
    ell = rob.lengths(T)
    b = rob.forward_kinematics_batch(ell, G)
    for k in range(20):
        r = rob.forward_kinematics(ell[k], G[k])
        assert r.converged and r.iterations == b.iterations[k]
        np.testing.assert_allclose(r.pose, b.poses[k], atol=1e-15)
        np.testing.assert_allclose(lie.normalize(r.pose), r.pose, atol=1e-15)
        assert r.pose[0] >= 0


def test_fk_tracking_and_global():
    rob = stewart_6_6()
    s = np.linspace(0, 1, 400)
    q = Rotation.from_rotvec(np.outer(np.sin(2 * np.pi * s), [0.3, 0.2, 0.1])).as_quat(scalar_first=True)
    t = np.stack([0.1 * np.sin(4 * np.pi * s), 0.1 * np.cos(2 * np.pi * s), 1.2 + 0.05 * s], 1)
    T = lie.pose(q, t)
    res = rob.track(rob.lengths(T), T[0])
    assert res.all_converged and np.all(pose_err(res.poses, T) < 1e-9)
    assert res.iterations.mean() < 4
    tgt = rob.sample_poses(1, 30, 0.2, 9)[0]
    g = rob.forward_kinematics_global(rob.lengths(tgt), 20, rng=1, max_angle_deg=30, max_translation=0.2)
    assert g.converged and g.runs >= 1 and pose_err(g.pose, tgt) < 1e-9
    g2 = rob.forward_kinematics_global(rob.lengths(tgt), 5, rng=1, stop_at_first=False)
    assert g2.runs == 5 and g2.converged


def test_fk_failure_is_never_silent():
    rob = stewart_6_6()
    ell = np.array([0.1, 0.1, 0.1, 3.0, 3.0, 3.0])  # unreachable: legs 0, 1 cannot both be 0.1
    with pytest.raises(errors.ConvergenceError) as ei:
        rob.forward_kinematics(ell)
    assert not ei.value.result.converged
    r = rob.forward_kinematics(ell, check=False)
    assert r.status != 0 and not r.converged and r.message
    bad = np.full(6, np.nan)
    assert rob.forward_kinematics(bad, check=False).status == 3
    with pytest.raises(errors.ConvergenceError):
        rob.forward_kinematics_batch(np.stack([rob.lengths(rob.home), ell]), check=True)
    with pytest.raises(errors.ShapeError):
        rob.forward_kinematics(np.zeros(5))
    with pytest.raises(errors.ShapeError):
        rob.forward_kinematics(np.zeros(6), np.zeros(7))


def test_three_three_and_seven_leg_fk():
    for rob in (stewart_3_3(), seven_legs()):
        T = rob.sample_poses(50, 20, 0.1, 21)
        G = rob.perturb_poses(T, 0.03, 22)
        res = rob.forward_kinematics_batch(rob.lengths(T), G)
        assert res.all_converged and np.all(pose_err(res.poses, T) < 1e-8), rob.name


# ----------------------------------------------------------------------------- singularities
def test_singularity_along_path_det_and_warning():
    """Rotating the platform about the vertical axis crosses a singularity: det Λ changes sign,
    σ_min → 0 there, the analysis warns, and a wrench in the lost direction cannot be produced."""
    rob = stewart_6_6()
    ang = np.deg2rad(np.linspace(0, 120, 241))
    path = lie.pose(Rotation.from_rotvec(np.outer(ang, [0, 0, 1])).as_quat(scalar_first=True), [0, 0, 1.2])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rep = rob.singularity(path)
    sign_change = np.flatnonzero(np.sign(rep.det[:-1]) != np.sign(rep.det[1:]))
    assert sign_change.size >= 1
    k = sign_change[0]
    a0, a1 = ang[k], ang[k + 1]
    f = lambda a: np.linalg.det(rob.lie_jacobian(lie.pose(Rotation.from_rotvec([0, 0, a]).as_quat(scalar_first=True), [0, 0, 1.2])))
    for _ in range(60):
        am = 0.5 * (a0 + a1)
        if np.sign(f(am)) == np.sign(f(a0)):
            a0 = am
        else:
            a1 = am
    sing = lie.pose(Rotation.from_rotvec([0, 0, a0]).as_quat(scalar_first=True), [0, 0, 1.2])
    with pytest.warns(SingularityWarning):
        rs = rob.singularity(sing)
    assert rs.sigma_min < 1e-8 and rs.any_near
    Lam = rob.lie_jacobian(sing)
    # a twist that changes no leg length (the bifurcation direction) ...
    _, sv, Vt = np.linalg.svd(Lam)
    assert np.linalg.norm(Lam @ Vt[-1]) < 1e-8
    # ... and home is far from singular, without a warning
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert rob.singularity(rob.home).sigma_min > 0.05
