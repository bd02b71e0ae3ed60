"""dqdyn.parallel.lie: normalization, pose update, numeric / analytic Lie derivatives, conventions.

Oracles: numpy quaternion arithmetic and scipy rotations written here, finite differences of
independently perturbed poses (R → R Exp(h a), t → t + h R b), the existing compiled
exponential of dqdyn.algebra._core.
"""

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from dqdyn import errors
from dqdyn.algebra import _core
from dqdyn.parallel import lie

from parallel_oracles import body_fd, np_pose

RNG = np.random.default_rng(20240801)


# ----------------------------------------------------------------------------- independent helpers
def qmul(a, b):
    w1, x1, y1, z1 = a
    w2, x2, y2, z2 = b
    return np.array([
        w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2,
        w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2,
        w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2,
        w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2,
    ])


def dmul(a, b):
    return np.concatenate([qmul(a[:4], b[:4]), qmul(a[:4], b[4:]) + qmul(a[4:], b[:4])])


def dconj(a):
    return a * np.array([1, -1, -1, -1, 1, -1, -1, -1.0])


def random_pose(rng=RNG, scale=1.0):
    R = Rotation.random(random_state=rng.integers(1 << 30)).as_matrix()
    t = rng.normal(size=3) * scale
    return R, t, np_pose(R, t)


def exp_dq(theta):
    out = np.empty(8)
    _core.dq_exp_pure(np.asarray(theta, dtype=float), out)
    return out


# ----------------------------------------------------------------------------- normalization / update
def test_normalize_unit_idempotent_multiplicative():
    for _ in range(20):
        a = RNG.normal(size=8)
        b = RNG.normal(size=8)
        na, nb_ = lie.normalize(a), lie.normalize(b)
        np.testing.assert_allclose(dmul(na, dconj(na)), np.eye(8)[0], atol=1e-15)
        np.testing.assert_allclose(lie.normalize(na), na, atol=1e-15)
        np.testing.assert_allclose(lie.normalize(dmul(a, b)), dmul(na, nb_), atol=1e-14)


def test_normalize_printed_expansion_is_wrong():
    a, b = RNG.normal(size=8) * 2, RNG.normal(size=8) * 2
    bad = np.abs(lie.normalize_printed(dmul(a, b)) - dmul(lie.normalize_printed(a), lie.normalize_printed(b))).max()
    assert bad > 1e-2
    # on |Q| = 1 the two agree
    a[:4] /= np.linalg.norm(a[:4])
    np.testing.assert_allclose(lie.normalize_printed(a), lie.normalize(a), atol=1e-15)


def test_normalize_zero_primary_raises():
    with pytest.raises(errors.SingularError):
        lie.normalize(np.r_[np.zeros(4), 1.0, 0, 0, 0])


def test_pose_update_matches_exp_to_third_order():
    theta = RNG.normal(size=6)
    _, _, eta = random_pose()
    errs = []
    for s in (1e-1, 1e-2, 1e-3):
        errs.append(np.abs(lie.pose_update(eta, s * theta) - dmul(eta, exp_dq(s * theta))).max())
    assert errs[1] / errs[0] < 2e-3 and errs[2] / errs[1] < 2e-3  # cubic: ratio 1e-3


def test_pose_update_derivative_is_identity():
    theta = RNG.normal(size=6)
    h = 1e-6
    d = (lie.pose_update(np.eye(8)[0], h * theta) - lie.pose_update(np.eye(8)[0], -h * theta)) / (2 * h)
    np.testing.assert_allclose(d, lie.beta_to_dq(theta), atol=1e-9)


def test_pose_update_batch_broadcasts():
    etas = np.stack([random_pose()[2] for _ in range(4)])
    th = RNG.normal(size=(4, 6)) * 0.1
    out = lie.pose_update(etas, th)
    for k in range(4):
        np.testing.assert_allclose(out[k], lie.pose_update(etas[k], th[k]), atol=1e-15)
    assert lie.pose_update(etas[0], th).shape == (4, 8)


def test_pose_construction_and_point_action():
    R, t, eta = random_pose()
    np.testing.assert_allclose(lie.pose(Rotation.from_matrix(R).as_quat(scalar_first=True), t), eta, atol=1e-15)
    np.testing.assert_allclose(lie.pose_rotation(eta), R, atol=1e-14)
    np.testing.assert_allclose(lie.pose_translation(eta), t, atol=1e-14)
    s = RNG.normal(size=3)
    np.testing.assert_allclose(lie.point_in_body(eta, R @ s + t), s, atol=1e-14)
    np.testing.assert_allclose(lie.direction_in_body(eta, R @ s), s, atol=1e-14)


def test_size_l():
    h = RNG.normal(size=8)
    l = 2.5
    assert lie.size_l(h, l) == pytest.approx(np.sqrt(h[:4] @ h[:4] + h[4:] @ h[4:] / l**2))


# ----------------------------------------------------------------------------- conventions
def test_twist_wrench_conversions_preserve_power():
    xi = RNG.normal(size=6)  # [ω, v]
    wr = RNG.normal(size=6)  # [f, τ]
    power = xi[:3] @ wr[3:] + xi[3:] @ wr[:3]
    assert lie.twist_to_beta(xi) @ lie.wrench_to_beta(wr) == pytest.approx(power)
    np.testing.assert_allclose(lie.beta_to_twist(lie.twist_to_beta(xi)), xi)
    np.testing.assert_allclose(lie.beta_to_wrench(lie.wrench_to_beta(wr)), wr)
    np.testing.assert_allclose(lie.wrench_to_beta(wr), 2 * np.r_[wr[3:], wr[:3]])


def test_body_twist_is_eta_inverse_eta_dot():
    """η̇ = η φ with φ_β = ½[ω, v] ([MontgomerySmith2023, eq. (14)]), φ from an independent trajectory."""
    R0, t0, _ = random_pose()
    w, v = RNG.normal(size=3), RNG.normal(size=3)

    def eta(s):  # constant body angular velocity w, body-frame velocity profile chosen so v(0) = v
        R = R0 @ Rotation.from_rotvec(w * s).as_matrix()
        return np_pose(R, t0 + R0 @ v * s)

    h = 1e-6
    eta_dot = (eta(h) - eta(-h)) / (2 * h)
    phi = dmul(dconj(eta(0)), eta_dot)
    np.testing.assert_allclose(lie.dq_to_beta(phi), lie.twist_to_beta(np.r_[w, v]), atol=1e-9)
    assert abs(phi[0]) < 1e-9 and abs(phi[4]) < 1e-9


# ----------------------------------------------------------------------------- Lie derivatives
def test_numeric_lie_derivative_is_twice_body_jacobian():
    R, t, eta = random_pose()
    p = RNG.normal(size=3)
    a = RNG.normal(size=3)

    def g_eta(e):  # a nonlinear function of the pose: |world point − a|² and its world coords
        x = lie.pose_rotation(e) @ p + lie.pose_translation(e)
        return np.r_[x, (x - a) @ (x - a)]

    def g_rt(R_, t_):
        x = R_ @ p + t_
        return np.r_[x, (x - a) @ (x - a)]

    np.testing.assert_allclose(lie.lie_derivative(g_eta, eta), body_fd(g_rt, R, t), atol=1e-9)
    # analytic: ∂x/∂ω = −R S_p, ∂x/∂v = R
    S = np.array([[0, -p[2], p[1]], [p[2], 0, -p[0]], [-p[1], p[0], 0]])
    J = np.hstack([-R @ S, R])
    np.testing.assert_allclose(lie.lie_derivative(g_eta, eta)[:3], 2 * J, atol=1e-10)


def test_lie_derivative_of_linear_function_is_g_of_eta_theta():
    """Rule (55): L_θ g = g(ηθ) for g linear in η."""
    A = RNG.normal(size=(3, 8))
    _, _, eta = random_pose()
    theta = RNG.normal(size=6)
    num = lie.lie_derivative_along(lambda e: A @ e, eta, theta)
    np.testing.assert_allclose(num, A @ dmul(eta, lie.beta_to_dq(theta)), atol=1e-10)


def test_lie_derivative_order2_stencil():
    _, _, eta = random_pose()
    g = lambda e: np.sin(e[0] + 2 * e[5]) * e[3]
    np.testing.assert_allclose(lie.lie_derivative(g, eta, order=2, h=1e-6), lie.lie_derivative(g, eta), atol=1e-8)


def test_lie_point_and_direction_match_fd():
    R, t, eta = random_pose()
    s_w, n_w = RNG.normal(size=3), RNG.normal(size=3)
    s, Ls = lie.lie_point(eta, s_w)
    n, Ln = lie.lie_direction(eta, n_w)
    np.testing.assert_allclose(Ls, body_fd(lambda R_, t_: R_.T @ (s_w - t_), R, t), atol=1e-10)
    np.testing.assert_allclose(Ln, body_fd(lambda R_, t_: R_.T @ n_w, R, t), atol=1e-10)
    theta = RNG.normal(size=6)
    a, b = 2 * theta[:3], 2 * theta[3:]
    np.testing.assert_allclose(Ls @ theta, -np.cross(a, s) - b, atol=1e-14)  # (125)
    np.testing.assert_allclose(Ln @ theta, -np.cross(a, n), atol=1e-14)  # (126)


def test_second_lie_derivative_layout_and_commutator():
    """[..., j, i] = L_i L_j g; antisymmetric part = L_{θψ−ψθ} (eq. 132)."""
    _, _, eta = random_pose()
    c = RNG.normal(size=8)
    g = lambda e: np.exp(0.3 * (c @ e)) + (lie.pose_translation(e) ** 2).sum()
    H = lie.second_lie_derivative(g, eta)
    Lg = lie.lie_derivative(g, eta)
    th, ps = RNG.normal(size=6), RNG.normal(size=6)
    # L_θ L_ψ g = Σ θ_i ψ_j H[j, i]
    lhs = ps @ H @ th - th @ H @ ps
    rhs = Lg @ lie.commutator(th, ps)
    assert lhs == pytest.approx(rhs, abs=1e-7)
    # explicit nested definition for one entry: L_1 L_4 g
    inner = lambda e: lie.lie_derivative_along(g, e, np.eye(6)[4])
    assert H[4, 1] == pytest.approx(lie.lie_derivative_along(inner, eta, np.eye(6)[1]), abs=1e-9)


def test_commutator_is_dual_quaternion_commutator():
    th, ps = RNG.normal(size=6), RNG.normal(size=6)
    a, b = lie.beta_to_dq(th), lie.beta_to_dq(ps)
    np.testing.assert_allclose(lie.beta_to_dq(lie.commutator(th, ps)), dmul(a, b) - dmul(b, a), atol=1e-14)


def test_shape_errors():
    with pytest.raises(errors.ShapeError):
        lie.pose_update(np.zeros(7), np.zeros(6))
    with pytest.raises(errors.ShapeError):
        lie.pose_update(np.eye(8)[0], np.zeros(5))
    with pytest.raises(errors.NonFiniteError):
        lie.normalize(np.r_[np.nan, np.zeros(7)])
