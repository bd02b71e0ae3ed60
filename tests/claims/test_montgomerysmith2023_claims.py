"""[MontgomerySmith2023] (Montgomery-Smith & Shy, arXiv:2202.09268v9): one test per checkable
result (claims 1–22), named after the claim, plus claim 37, which compares its Theorem 2 with
[Kim2012, eq. (31)].

Every oracle is independent of dqdyn.parallel's kernels: numpy dual-quaternion arithmetic and
scipy rotations written here, finite differences, statics by summing forces, Newton-Euler of one
rigid body, energy bookkeeping.
"""

import warnings

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from dqdyn.algebra import _core
from dqdyn.parallel import cable_robot_8, lie, stewart_6_6
from dqdyn.parallel import dynamics as dy
from dqdyn.reproduce.parallel_robots import _tracking_stats

RNG = np.random.default_rng(2202_09268)


# ============================================================================ independent helpers
def qmul(a, b):
    w1, x1, y1, z1 = a
    w2, x2, y2, z2 = b
    return np.array([w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2, w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2,
                     w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2, w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2])


def dmul(a, b):
    return np.concatenate([qmul(a[:4], b[:4]), qmul(a[:4], b[4:]) + qmul(a[4:], b[:4])])


def dconj(a):
    return a * np.array([1, -1, -1, -1, 1, -1, -1, -1.0])


def vec(x):  # 3-vector -> pure quaternion
    return np.r_[0.0, x]


def dq(a, b):  # a + ε b from two 3-vectors
    return np.r_[0.0, a, 0.0, b]


def np_pose(R, t):
    q = Rotation.from_matrix(R).as_quat(scalar_first=True)
    return np.concatenate([q, 0.5 * qmul(vec(t), q)])


def rot(axis, ang):
    return Rotation.from_rotvec(np.asarray(axis, dtype=float) * ang).as_matrix()


def skew(r):
    return np.array([[0, -r[2], r[1]], [r[2], 0, -r[0]], [-r[1], r[0], 0]])


def body_fd(g, R, t, h=1e-4):
    """Lie derivative by independent 4th-order differences: 2 × body-frame partials."""
    cols = []
    for i in range(6):
        e = np.eye(6)[i]
        gi = lambda s: np.asarray(g(R @ rot(e[:3], s), t + R @ (s * e[3:])))
        cols.append(2.0 * (-gi(2 * h) + 8 * gi(h) - 8 * gi(-h) + gi(-2 * h)) / (12 * h))
    return np.stack(cols, axis=-1)


def legs(rob, R, t):
    return np.linalg.norm((R @ rob.platform_points.T).T + t - rob.base_points, axis=1)


def random_rt(angle=25.0, center=(0, 0, 1.2), trans=0.15):
    R = rot(RNG.normal(size=3) / np.sqrt(3), np.deg2rad(angle) * RNG.uniform(-1, 1))
    return R, np.asarray(center) + RNG.uniform(-trans, trans, 3)


def pose_err(P, T):
    return np.minimum(np.abs(P - T).max(-1), np.abs(P + T).max(-1))


STEWART = stewart_6_6()
CABLES = cable_robot_8()


# ============================================================================ claims 1-8: algebra
def test_claim01_pose_action_and_unit():
    R, t = random_rt(120, (0, 0, 0), 2)
    eta = lie.pose(Rotation.from_matrix(R).as_quat(scalar_first=True), t)
    Q, B = eta[:4], eta[4:]
    r = RNG.normal(size=3)
    # (8): s = (Q r + 2B) Q*
    s8 = qmul(qmul(Q, vec(r)) + 2 * B, Q * [1, -1, -1, -1])[1:]
    np.testing.assert_allclose(s8, R @ r + t, atol=1e-14)
    # (7): 1 + ε s = η (1 + ε r) η̄*, with η̄ = A − εB
    bar_star = dconj(np.r_[Q, -B])
    s7 = dmul(dmul(eta, np.r_[1.0, 0, 0, 0, 0, r]), bar_star)
    np.testing.assert_allclose(s7, np.r_[1.0, 0, 0, 0, 0, R @ r + t], atol=1e-14)
    np.testing.assert_allclose(dmul(eta, dconj(eta)), np.eye(8)[0], atol=1e-15)
    np.testing.assert_allclose(dmul(dconj(eta), eta), np.eye(8)[0], atol=1e-15)


def test_claim02_normalization_unit_fixed_multiplicative_printed_not():
    a, b = RNG.normal(size=8) * 1.5, RNG.normal(size=8) * 1.5
    na, nb_ = lie.normalize(a), lie.normalize(b)
    np.testing.assert_allclose(dmul(na, dconj(na)), np.eye(8)[0], atol=1e-15)
    np.testing.assert_allclose(lie.normalize(na), na, atol=1e-16)
    assert np.abs(lie.normalize(dmul(a, b)) - dmul(na, nb_)).max() < 1e-15
    printed = np.abs(lie.normalize_printed(dmul(a, b)) - dmul(lie.normalize_printed(a), lie.normalize_printed(b))).max()
    assert printed > 1e-2  # the literal expansion of (33) is not multiplicative (E4)


def test_claim03_normalize_one_plus_theta_second_order():
    theta = RNG.normal(size=6)
    theta /= np.linalg.norm(theta)
    errs, errs_exp = [], []
    for s in (1e-1, 1e-2, 1e-3):
        th = lie.beta_to_dq(s * theta)
        approx = np.eye(8)[0] + th + 0.5 * dmul(th, th)
        n = lie.pose_update(np.eye(8)[0], s * theta)
        errs.append(np.abs(n - approx).max())
        e = np.empty(8)
        _core.dq_exp_pure(s * theta, e)
        errs_exp.append(np.abs(e - n).max())
    for E in (errs, errs_exp):
        assert 0.5e-3 < E[1] / E[0] < 2e-3 and 0.5e-3 < E[2] / E[1] < 2e-3  # cubic


def test_claim04_frame_changes_and_jerk_commutator():
    R0 = rot([0.2, 0.5, 0.1], 0.7)
    a, b = np.array([0.6, 0.0, 0.8]), np.array([0.0, 1.0, 0.0])

    def eta(t):
        R = R0 @ rot(a, 0.5 * np.sin(1.3 * t)) @ rot(b, 0.4 * np.sin(2.1 * t))
        return np_pose(R, np.array([np.sin(t), 0.3 * t * t, np.cos(2 * t)]))

    def d(f, t, h=1e-3):
        return (-f(t + 2 * h) + 8 * f(t + h) - 8 * f(t - h) + f(t - 2 * h)) / (12 * h)

    def d2(f, t, h=1e-3):
        return (-f(t + 2 * h) + 16 * f(t + h) - 30 * f(t) + 16 * f(t - h) - f(t - 2 * h)) / (12 * h * h)

    phi_m = lambda t: dmul(dconj(eta(t)), d(eta, t))  # (14)
    phi_f = lambda t: dmul(d(eta, t), dconj(eta(t)))  # (15)
    t0 = 0.4
    e = eta(t0)
    Ad = lambda x: dmul(dmul(e, x), dconj(e))
    np.testing.assert_allclose(phi_f(t0), Ad(phi_m(t0)), atol=1e-10)  # (22)
    # smooth moving-frame twist for the derivative checks
    pf = lambda t: dmul(dmul(eta(t), phi_m(t)), dconj(eta(t)))
    np.testing.assert_allclose(d(pf, t0), Ad(d(phi_m, t0)), atol=1e-6)  # (24)
    pm, pmd = phi_m(t0), d(phi_m, t0)
    jerk = d2(pf, t0, 1e-2)
    with_comm = Ad(d2(phi_m, t0, 1e-2) + dmul(pm, pmd) - dmul(pmd, pm))  # (25)
    without = Ad(d2(phi_m, t0, 1e-2))
    assert np.abs(jerk - with_comm).max() < 1e-4
    assert np.abs(jerk - without).max() > 1e-2


def test_claim05_work_rate_pairing_and_com_shift():
    """τ·φ = q·w + p·v = τ₀·φ₀, eqs. (27)–(29).  Oracle: the power of the wrench as point forces
    on a moving body, Σ f_k · ṙ_k, with each point's velocity by central differences of its
    world position along the motion (body angular velocity w, body velocity v of the origin)."""
    for _ in range(3):
        w, v, q, p, r0 = (RNG.normal(size=3) for _ in range(5))
        R0, t0 = random_rt(90, (0, 0, 0), 1)
        R = lambda s: R0 @ rot(w / np.linalg.norm(w), s * np.linalg.norm(w))
        pos = lambda s, r: t0 + s * (R0 @ v) + R(s) @ r  # a body point's world position
        # the wrench (torque q about the origin, force p, body frame) as point forces:
        # p at the origin, and a couple ±f at ±a with 2 a × f = q
        a = np.cross(q, RNG.normal(size=3))
        f = np.cross(q, a) / (2 * a @ a)
        forces = [(np.zeros(3), p), (a, f), (-a, -f)]
        np.testing.assert_allclose(sum(np.cross(r, fk) for r, fk in forces), q, atol=1e-12)
        h = 1e-5
        power = sum((R0 @ fk) @ (pos(h, r) - pos(-h, r)) / (2 * h) for r, fk in forces)
        phi, tau = np.r_[0.5 * w, 0.5 * v], np.r_[2 * q, 2 * p]
        assert phi @ tau == pytest.approx(power, rel=1e-7, abs=1e-9)
        # about the point r0: the twist of (27) and the wrench of (28) give the same power (29)
        phi0 = np.r_[0.5 * w, 0.5 * v + 0.5 * np.cross(w, r0)]  # (27)
        tau0 = np.r_[2 * q + 2 * np.cross(p, r0), 2 * p]  # (28)
        assert tau0 @ phi0 == pytest.approx(power, rel=1e-7, abs=1e-9)  # (29)
        # (27) is the velocity of the body point r0 (its finite difference), (28) the torque
        # about it of the same point forces
        np.testing.assert_allclose(R0 @ (2 * phi0[3:]), (pos(h, r0) - pos(-h, r0)) / (2 * h),
                                   rtol=1e-7, atol=1e-9)
        np.testing.assert_allclose(tau0[:3] / 2, sum(np.cross(r - r0, fk) for r, fk in forces),
                                   atol=1e-12)
        xi, wr = np.r_[w, v], np.r_[p, q]  # dqdyn conventions
        assert lie.twist_to_beta(xi) @ lie.wrench_to_beta(wr) == pytest.approx(power, rel=1e-7,
                                                                                abs=1e-9)


def test_claim06_lie_derivative_independent_of_extension_and_eq48():
    R, t = random_rt()
    eta = np_pose(R, t)
    theta = RNG.normal(size=6)
    base = lambda e: np.sum(legs(STEWART, lie.pose_rotation(lie.normalize(e)), lie.pose_translation(lie.normalize(e))) ** 2)
    ext_a = base
    ext_b = lambda e: base(e) + 5 * (e[:4] @ e[:4] - 1) + 3 * (e[:4] @ e[4:]) + 7 * (e[:4] @ e[:4] - 1) * e[5]
    curve = lambda r: dmul(eta, np.eye(8)[0] + r * lie.beta_to_dq(theta))  # unnormalized η(1 + rθ)
    h = 1e-4
    der = lambda g: (-g(curve(2 * h)) + 8 * g(curve(h)) - 8 * g(curve(-h)) + g(curve(-2 * h))) / (12 * h)
    La, Lb = der(ext_a), der(ext_b)
    assert La == pytest.approx(Lb, abs=1e-8)
    # (48): L_θ g = ∂g/∂η · (ηθ)  (gradient in R^8 of the extension b)
    grad = np.array([(ext_b(eta + h * e) - ext_b(eta - h * e)) / (2 * h) for e in np.eye(8)])
    assert La == pytest.approx(grad @ dmul(eta, lie.beta_to_dq(theta)), abs=1e-6)
    assert La == pytest.approx(lie.lie_derivative_along(base, eta, theta), abs=1e-8)


def test_claim07_fixed_point_and_direction_lie_derivatives():
    R, t = random_rt(90, (0, 0, 0), 1)
    eta = np_pose(R, t)
    s_w, n_w = RNG.normal(size=3), RNG.normal(size=3)
    _, Ls = lie.lie_point(eta, s_w)
    _, Ln = lie.lie_direction(eta, n_w)
    np.testing.assert_allclose(Ls, body_fd(lambda R_, t_: R_.T @ (s_w - t_), R, t), atol=1e-10)
    np.testing.assert_allclose(Ln, body_fd(lambda R_, t_: R_.T @ n_w, R, t), atol=1e-10)


def test_claim08_lie_derivatives_do_not_commute():
    R, t = random_rt()
    eta = np_pose(R, t)
    _, Lam, H = STEWART.evaluate(eta)
    th, ps = RNG.normal(size=6), RNG.normal(size=6)
    for k in range(6):  # analytic: L_θ L_ψ ℓ − L_ψ L_θ ℓ = L_{θψ−ψθ} ℓ
        lhs = ps @ H[k] @ th - th @ H[k] @ ps
        com = dmul(lie.beta_to_dq(th), lie.beta_to_dq(ps)) - dmul(lie.beta_to_dq(ps), lie.beta_to_dq(th))
        assert lhs == pytest.approx(Lam[k] @ lie.dq_to_beta(com), abs=1e-12)
        assert abs(lhs) > 1e-3
    # numerically, for a generic function of the pose
    g = lambda e: np.sin(2 * e[1] + e[6]) + lie.pose_translation(e) @ [1, 2, 3]
    Hn = lie.second_lie_derivative(g, eta)
    assert ps @ Hn @ th - th @ Hn @ ps == pytest.approx(lie.lie_derivative(g, eta) @ lie.commutator(th, ps), abs=1e-7)


# ============================================================================ claims 9-13: robots
def test_claim09_lambda_rows_match_fd_lie_derivative():
    for _ in range(3):
        R, t = random_rt()
        eta = np_pose(R, t)
        Lam = STEWART.lie_jacobian(eta)
        np.testing.assert_allclose(Lam, body_fd(lambda R_, t_: legs(STEWART, R_, t_), R, t), atol=1e-9)
        u = (R.T @ ((R @ STEWART.platform_points.T).T + t - STEWART.base_points).T).T
        u /= np.linalg.norm(u, axis=1, keepdims=True)
        np.testing.assert_allclose(Lam, 2 * np.hstack([np.cross(STEWART.platform_points, u), u]), atol=1e-14)


def test_claim10_lambda_formula_holds_for_swivel_pulleys():
    for _ in range(5):
        R, t = random_rt(20, (0, 0, 1.0), 0.3)
        eta = np_pose(R, t)
        num = body_fd(lambda R_, t_: CABLES.lengths(np_pose(R_, t_)), R, t)
        np.testing.assert_allclose(CABLES.lie_jacobian(eta), num, atol=1e-9)


def test_claim11_T_equals_lambda_transpose_by_statics():
    R, t = random_rt()
    eta = np_pose(R, t)
    f = RNG.normal(size=6) * 100
    rw = (R @ STEWART.platform_points.T).T + t
    uw = (rw - STEWART.base_points) / legs(STEWART, R, t)[:, None]
    F = (f[:, None] * uw).sum(0)
    M = np.cross(rw - t, f[:, None] * uw).sum(0)
    tau_beta = np.r_[2 * R.T @ M, 2 * R.T @ F]  # τ = 2q + 2εp in the moving frame
    np.testing.assert_allclose(STEWART.lie_jacobian(eta).T @ f, tau_beta, atol=1e-12)


def test_claim12_second_lie_derivative_prefactor_is_4():
    R, t = random_rt()
    eta = np_pose(R, t)
    num = body_fd(lambda R_, t_: STEWART.lie_jacobian(np_pose(R_, t_)), R, t)  # [k, j, i] = L_i Λ_kj
    for k in range(6):
        r = STEWART.platform_points[k]
        s = R.T @ (STEWART.base_points[k] - t)
        L = np.linalg.norm(r - s)
        u = (r - s) / L
        core = np.vstack([skew(r), np.eye(3)]) @ (np.eye(3) - np.outer(u, u)) @ np.hstack([-skew(s), np.eye(3)])
        np.testing.assert_allclose(num[k], 4 / L * core, atol=1e-8)  # corrected (E5)
        assert np.abs(num[k] - 2 / L * core).max() > 0.1  # as printed
    np.testing.assert_allclose(STEWART.second_lie_derivative(eta), num, atol=1e-8)


def test_claim13_hessian_of_loss_is_symmetrized_second_lie_derivative():
    R, t = random_rt(15, (0, 0, 1.0), 0.2)
    eta = np_pose(R, t)
    ell = CABLES.lengths(eta) + RNG.normal(size=8) * 0.05  # non-zero residual
    b = lambda th: 0.5 * np.sum((CABLES.lengths(lie.pose_update(eta, th)) - ell) ** 2)
    h = 1e-4
    E = np.eye(6)
    grad = np.array([(b(h * E[i]) - b(-h * E[i])) / (2 * h) for i in range(6)])
    Hfd = np.empty((6, 6))
    for i in range(6):
        for j in range(6):
            Hfd[i, j] = (b(h * (E[i] + E[j])) - b(h * (E[i] - E[j])) - b(h * (E[j] - E[i])) + b(-h * (E[i] + E[j]))) / (4 * h * h)
    L, Lam, H2 = CABLES.evaluate(eta)
    F = L - ell
    np.testing.assert_allclose(grad, Lam.T @ F, atol=1e-8)  # (88)
    Hm = Lam.T @ Lam + 0.5 * np.einsum("kij,k->ij", H2 + np.swapaxes(H2, 1, 2), F)  # (89) with E6
    np.testing.assert_allclose(Hfd, Hm, atol=2e-6)
    Hprinted = Lam.T @ Lam + 0.5 * np.einsum("kij,k->ij", H2 + np.swapaxes(H2, 1, 2), L)  # without −ℓ_m
    assert np.abs(Hfd - Hprinted).max() > 1.0


# ============================================================================ claims 14-16: FK
def test_claim14_stewart_fk_random_guess_statistics():
    rng = np.random.default_rng(14)
    T = STEWART.sample_poses(1000, 30, 0.2, rng)
    res = STEWART.forward_kinematics_batch(STEWART.lengths(T), STEWART.sample_poses(1000, 30, 0.2, rng))
    ok = res.converged & (pose_err(res.poses, T) < 1e-9)
    assert ok.all() and res.iterations.mean() <= 5.0
    T = STEWART.sample_poses(1000, 45, 0.2, rng)
    res = STEWART.forward_kinematics_batch(STEWART.lengths(T), STEWART.sample_poses(1000, 45, 0.2, rng))
    assert np.sum(~(res.converged & (pose_err(res.poses, T) < 1e-8))) <= 1


def test_claim15_overconstrained_fk_step_sign_and_initial_error():
    rng = np.random.default_rng(15)
    T = CABLES.sample_poses(300, 20, 0.3, rng)
    ell = CABLES.lengths(T)
    G1 = CABLES.perturb_poses(T, 0.01, rng)
    r1 = CABLES.forward_kinematics_batch(ell, G1)
    assert np.all(r1.converged & (pose_err(r1.poses, T) < 1e-9)) and r1.iterations.mean() < 5
    bad = CABLES.forward_kinematics_batch(ell, G1, printed_step=True)  # +H⁻¹δ (E7)
    assert bad.converged.mean() < 0.05
    r5 = CABLES.forward_kinematics_batch(ell, CABLES.perturb_poses(T, 0.05, rng))
    assert 0.8 < r5.converged.mean() <= 1.0
    g = CABLES.forward_kinematics_global_batch(ell[:30], 300, rng=rng, max_angle_deg=20, max_translation=0.3)
    assert g.all_converged and np.all(pose_err(g.poses, T[:30]) < 1e-9) and g.runs.mean() < 10


def test_claim16_stewart_singularity_iff_det_lambda_zero():
    ang = np.deg2rad(np.linspace(0, 120, 121))
    pose_z = lambda a: lie.pose(Rotation.from_rotvec([0, 0, a]).as_quat(scalar_first=True), [0, 0, 1.2])
    det = np.array([np.linalg.det(STEWART.lie_jacobian(pose_z(a))) for a in ang])
    k = np.flatnonzero(np.sign(det[:-1]) != np.sign(det[1:]))[0]
    a0, a1 = ang[k], ang[k + 1]
    for _ in range(60):
        am = 0.5 * (a0 + a1)
        if np.sign(np.linalg.det(STEWART.lie_jacobian(pose_z(am)))) == np.sign(det[k]):
            a0 = am
        else:
            a1 = am
    eta = pose_z(a0)
    R, t = lie.pose_rotation(eta), lie.pose_translation(eta)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert STEWART.singularity(eta).sigma_min < 1e-8
    # an infinitesimal motion needing no leg-length change (independent lengths, FD) ...
    J = body_fd(lambda R_, t_: legs(STEWART, R_, t_), R, t) / 2
    _, sv, Vt = np.linalg.svd(J)
    assert sv[-1] < 1e-7 * sv[0]
    # ... and a unit wrench the legs cannot produce with bounded forces: the forces needed grow
    # like 1/σ_min, and with |f| kept moderate (rcond 1e-6) the statics residual is O(1)
    wrench_beta = np.linalg.svd(J.T)[0][:, -1]
    f, *_ = np.linalg.lstsq(2 * J.T, wrench_beta, rcond=1e-6)
    assert np.linalg.norm(2 * J.T @ f - wrench_beta) > 0.5
    # away from it, Λ is invertible and every wrench is produced
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert abs(np.linalg.det(STEWART.lie_jacobian(STEWART.home))) > 1e-2


# ============================================================================ claims 17-22: dynamics
def _ne_wrench(pl, R, p, w, v, wd, vd):
    """Newton-Euler (world frame) of the end effector, returned as τ_β = 2(q, p) (body)."""
    ww, wdw = R @ w, R @ wd
    pdd = R @ (vd + np.cross(w, v))
    rc = R @ pl.com
    F = pl.mass * (pdd + np.cross(wdw, rc) + np.cross(ww, np.cross(ww, rc)) - pl.gravity)
    Iw = R @ pl.inertia @ R.T
    Mo = Iw @ wdw + np.cross(ww, Iw @ ww) + np.cross(rc, F)
    return np.r_[2 * R.T @ Mo, 2 * R.T @ F]


def _platform(M0=0.0, com=(0.05, -0.04, 0.1)):
    A = RNG.normal(size=(3, 3))
    return dy.Platform(mass=12.0, com=com, inertia=A @ A.T + 0.3 * np.eye(3), actuator_inertia=M0)


def test_claim17_theorem2_matches_newton_euler():
    pl = _platform()
    R, t = random_rt()
    eta = np_pose(R, t)
    xi, xid = RNG.normal(size=6), RNG.normal(size=6)
    ne = _ne_wrench(pl, R, t, xi[:3], xi[3:], xid[:3], xid[3:])
    closed = dy.end_effector_wrench(STEWART, pl, eta, xi, xid)
    np.testing.assert_allclose(closed, ne, atol=1e-12 * np.abs(ne).max())
    Mr = dy.rigid_mass_matrix(pl)
    gen = dy.theorem2_wrench(eta, xi / 2, xid / 2, lambda e: Mr, lambda e: dy.potential_energy(pl, e))
    np.testing.assert_allclose(gen, ne, atol=1e-9 * np.abs(ne).max())
    np.testing.assert_allclose(dy.lie_potential(pl, eta),
                               -2 * pl.mass * np.r_[np.cross(pl.com, R.T @ pl.gravity), R.T @ pl.gravity], atol=1e-13)


def test_claim18_theorem1_printed_only_for_com_at_origin():
    pl = _platform()
    R, t = random_rt()
    eta = np_pose(R, t)
    xi, xid = RNG.normal(size=6), RNG.normal(size=6)
    ne = _ne_wrench(pl, R, t, xi[:3], xi[3:], xid[:3], xid[3:])
    np.testing.assert_allclose(dy.theorem1_wrench(pl, eta, xi, xid), ne, atol=1e-12 * np.abs(ne).max())
    printed = dy.theorem1_wrench(pl, eta, xi, xid, printed=True)
    assert np.abs(printed[:3] - ne[:3]).max() > 1e-2  # torque part wrong (E8)
    np.testing.assert_allclose(printed[3:], ne[3:], atol=1e-12 * np.abs(ne).max())  # force part fine
    pl0 = _platform(com=(0, 0, 0))
    ne0 = _ne_wrench(pl0, R, t, xi[:3], xi[3:], xid[:3], xid[3:])
    np.testing.assert_allclose(dy.theorem1_wrench(pl0, eta, xi, xid, printed=True), ne0, atol=1e-12 * np.abs(ne0).max())


def test_claim19_actuator_inertia_term():
    M0 = np.diag(RNG.uniform(0.5, 2, 6))
    R, t = random_rt()
    eta = np_pose(R, t)
    phi = RNG.normal(size=6)
    Ma = lambda e: STEWART.lie_jacobian(e).T @ M0 @ STEWART.lie_jacobian(e)
    mu = dy.theorem2_wrench(eta, phi, np.zeros(6), Ma)  # μ₁ + μ₂ (α = 0, no potential)
    _, Lam, H = STEWART.evaluate(eta)
    LphiLam_phi = body_fd(lambda R_, t_: STEWART.lie_jacobian(np_pose(R_, t_)) @ phi, R, t) @ phi  # (L_φΛ)φ
    np.testing.assert_allclose(mu, Lam.T @ M0 @ LphiLam_phi, atol=1e-8 * np.abs(mu).max())
    # f₀ = M₀ ℓ̈ along the motion with constant body twist 2φ (so α = 0)
    w, v = 2 * phi[:3], 2 * phi[3:]
    ell = lambda s: legs(STEWART, R @ rot(w / np.linalg.norm(w), np.linalg.norm(w) * s),
                         t + R @ (_screw_translation(w, v, s)))
    h = 1e-3
    ldd = (-ell(2 * h) + 16 * ell(h) - 30 * ell(0) + 16 * ell(-h) - ell(-2 * h)) / (12 * h * h)
    np.testing.assert_allclose(LphiLam_phi, ldd, atol=1e-6)


def _screw_translation(w, v, s):
    """Body-frame translation after time s of the constant body twist (w, v)."""
    th = np.linalg.norm(w)
    k = w / th
    K = skew(k)
    V = np.eye(3) * s + (1 - np.cos(th * s)) / th * K + (s - np.sin(th * s) / th) * K @ K
    return V @ v


def test_claim20_kinetic_energy_93_equals_94():
    M0 = np.diag(RNG.uniform(0.5, 2, 6))
    pl = _platform(M0)
    R, t = random_rt()
    xi = RNG.normal(size=6)
    w, v = xi[:3], xi[3:]
    h = 1e-5
    ldot = (legs(STEWART, R @ rot(w, h), t + R @ v * h) - legs(STEWART, R @ rot(w, -h), t - R @ v * h)) / (2 * h)
    e93 = 0.5 * pl.mass * np.sum((v + np.cross(w, pl.com)) ** 2) + 0.5 * w @ pl.inertia @ w + 0.5 * ldot @ M0 @ ldot
    phi = xi / 2
    assert 0.5 * phi @ dy.mass_matrix(STEWART, pl, np_pose(R, t)) @ phi == pytest.approx(e93, rel=1e-9)


def test_claim21_work_energy_three_ways():
    pl = _platform(0.4)
    hold = dy.inverse_dynamics(STEWART, pl, STEWART.home, np.zeros(6), np.zeros(6)).forces
    f = lambda t, e, x: hold * (1 + 0.15 * np.sin(5 * t)) + 3 * np.sin(2 * t + np.arange(6))
    sim = dy.simulate(STEWART, pl, STEWART.home, np.zeros(6), f, (0, 0.6), t_eval=np.linspace(0, 0.6, 61))
    scale = np.abs(sim.work_wrench).max()
    assert scale > 1.0
    assert np.abs(sim.work_wrench - sim.work_actuators).max() < 1e-11 * scale
    assert np.abs(sim.work_wrench - (sim.energy - sim.energy[0])).max() < 1e-9 * scale


def test_claim22_tracking_never_fails():
    for rob, ang, tr in ((CABLES, 20, 0.3), (STEWART, 30, 0.2)):
        st = _tracking_stats(rob, 1000, 0.003, rob.length_scale, np.deg2rad(ang), tr)
        assert st["failures"] == 0 and st["max_error"] < 1e-9
        assert 0.2 < st["mean_step_rotation_pct"] < 0.4


# ============================================================================ claim 37 (cross-document)
def test_claim37_theorem2_is_twice_lie_group_equation_of_motion():
    """For a free body, [MontgomerySmith2023]'s Theorem 2 = 2 × [Kim2012]'s F = 𝓘 V̇ − ad*_V 𝓘 V (B eq. 31)."""
    pl = dy.Platform(mass=3.0, com=[0.1, 0.2, -0.1], inertia=np.diag([0.2, 0.3, 0.4]), gravity=np.zeros(3))
    m, S = pl.mass, skew(pl.com)
    I6 = np.block([[pl.inertia - m * S @ S, m * S], [-m * S, m * np.eye(3)]])  # B eq. (22), R = I
    V, Vd = RNG.normal(size=6), RNG.normal(size=6)
    adV = np.block([[skew(V[:3]), np.zeros((3, 3))], [skew(V[3:]), skew(V[:3])]])
    F = I6 @ Vd - adV.T @ I6 @ V  # (moment, force)
    Mr = dy.rigid_mass_matrix(pl)
    np.testing.assert_allclose(Mr, 4 * I6, atol=1e-14)
    tau = dy.theorem2_wrench(np.eye(8)[0], V / 2, Vd / 2, lambda e: Mr)
    np.testing.assert_allclose(tau, 2 * F, atol=1e-12)
