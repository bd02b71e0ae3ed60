"""End-effector dynamics with actuator inertia ([MontgomerySmith2023, §11]).

Oracles: Newton-Euler of one rigid body written here in the world frame (numpy) along an
analytic trajectory; finite differences of leg lengths for ℓ̇, ℓ̈; kinetic + potential energy
computed here from (93); work integrals by Simpson's rule on the simulated samples.
"""

import numpy as np
import pytest
from scipy.integrate import simpson
from scipy.spatial.transform import Rotation

from dqdyn import errors
from dqdyn.parallel import cable_robot_8, lie, stewart_6_6
from dqdyn.parallel import dynamics as dy

from parallel_oracles import np_pose

RNG = np.random.default_rng(314)
G_W = np.array([0.0, 0.0, -9.81])


def rot(axis, ang):
    return Rotation.from_rotvec(np.asarray(axis) * ang).as_matrix()


class Trajectory:
    """R(t) = R0 Rot_a(θ1) Rot_b(θ2), p(t) = p0 + A sin(ω t + φ): body twist and its
    component-wise derivative in closed form."""

    def __init__(self, rng, home_t):
        self.R0 = Rotation.from_rotvec(rng.normal(size=3) * 0.2).as_matrix()
        a, b = rng.normal(size=3), rng.normal(size=3)
        self.a, self.b = a / np.linalg.norm(a), b / np.linalg.norm(b)
        self.p0 = home_t
        self.A, self.w, self.ph = rng.uniform(0.05, 0.15, 3), rng.uniform(1, 3, 3), rng.uniform(0, 6, 3)

    def state(self, t):
        t1, t1d, t1dd = 0.3 * np.sin(1.3 * t), 0.39 * np.cos(1.3 * t), -0.507 * np.sin(1.3 * t)
        t2, t2d, t2dd = 0.2 * np.sin(2.1 * t + 1), 0.42 * np.cos(2.1 * t + 1), -0.882 * np.sin(2.1 * t + 1)
        Rb = rot(self.b, t2)
        R = self.R0 @ rot(self.a, t1) @ Rb
        p = self.p0 + self.A * np.sin(self.w * t + self.ph)
        pd = self.A * self.w * np.cos(self.w * t + self.ph)
        pdd = -self.A * self.w**2 * np.sin(self.w * t + self.ph)
        aB = Rb.T @ self.a
        w = aB * t1d + self.b * t2d
        wd = aB * t1dd - t2d * np.cross(self.b, aB) * t1d + self.b * t2dd
        v = R.T @ pd
        vd = -np.cross(w, v) + R.T @ pdd
        return R, p, np.r_[w, v], np.r_[wd, vd], pdd


def newton_euler_body_wrench(pl, R, p, twist, twist_dot, pdd):
    """Wrench [f, τ] (body frame, at the frame origin) the actuators must apply."""
    w_w, wd_w = R @ twist[:3], R @ twist_dot[:3]
    rc = R @ pl.com
    cdd = pdd + np.cross(wd_w, rc) + np.cross(w_w, np.cross(w_w, rc))
    F = pl.mass * (cdd - pl.gravity)
    Iw = R @ pl.inertia @ R.T
    Nc = Iw @ wd_w + np.cross(w_w, Iw @ w_w)
    Mo = Nc + np.cross(rc, F)
    return np.r_[R.T @ F, R.T @ Mo]


def platform(M0=0.0):
    A = RNG.normal(size=(3, 3))
    return dy.Platform(mass=15.0, com=[0.04, -0.06, 0.12], inertia=A @ A.T + 0.5 * np.eye(3), actuator_inertia=M0)


def legs_np(rob, R, t):
    return np.linalg.norm((R @ rob.platform_points.T).T + t - rob.base_points, axis=1)


def test_theorem2_equals_newton_euler():
    rob = stewart_6_6()
    pl = platform(0.0)
    traj = Trajectory(RNG, np.array([0, 0, 1.2]))
    for t in (0.0, 0.37, 1.1):
        R, p, xi, xid, pdd = traj.state(t)
        eta = np_pose(R, p)
        ne = newton_euler_body_wrench(pl, R, p, xi, xid, pdd)
        tb = dy.end_effector_wrench(rob, pl, eta, xi, xid)
        np.testing.assert_allclose(lie.beta_to_wrench(tb), ne, atol=1e-12 * max(1, np.abs(ne).max()))
        idr = dy.inverse_dynamics(rob, pl, eta, xi, xid)
        np.testing.assert_allclose(idr.wrench, ne, atol=1e-11)
        np.testing.assert_allclose(rob.wrench(eta, idr.forces), ne, atol=1e-11)


def test_actuator_inertia_forces_are_M0_times_ell_ddot():
    """f = M₀ ℓ̈ + f_p with Λᵀ f_p = Newton-Euler wrench (eqs. 98-99); ℓ̈ by finite differences."""
    rob = stewart_6_6()
    M0 = np.diag(RNG.uniform(0.5, 2.0, 6))
    pl = platform(M0)
    traj = Trajectory(RNG, np.array([0, 0, 1.2]))
    t, h = 0.6, 1e-3
    ell = lambda s: legs_np(rob, *traj.state(s)[:2])
    ldd = (-ell(t + 2 * h) + 16 * ell(t + h) - 30 * ell(t) + 16 * ell(t - h) - ell(t - 2 * h)) / (12 * h * h)
    R, p, xi, xid, pdd = traj.state(t)
    eta = np_pose(R, p)
    idr = dy.inverse_dynamics(rob, pl, eta, xi, xid)
    np.testing.assert_allclose(idr.ell_ddot, ldd, atol=1e-7)
    np.testing.assert_allclose(idr.noload_forces, M0 @ idr.ell_ddot, atol=1e-13)
    ne = newton_euler_body_wrench(pl, R, p, xi, xid, pdd)
    np.testing.assert_allclose(rob.wrench(eta, idr.forces - M0 @ ldd), ne, atol=1e-6)


def test_forward_inverse_roundtrip_and_batch():
    rob = stewart_6_6()
    pl = platform(0.8)
    E = rob.sample_poses(4, 20, 0.1, 2)
    X = RNG.normal(size=(4, 6))
    XD = RNG.normal(size=(4, 6))
    idr = dy.inverse_dynamics(rob, pl, E, X, XD)
    assert idr.forces.shape == (4, 6) and idr.wrench.shape == (4, 6)
    for k in range(4):
        np.testing.assert_allclose(dy.forward_dynamics(rob, pl, E[k], X[k], idr.forces[k]), XD[k], atol=1e-10)


def test_kinetic_energy_93_equals_quadratic_form_94():
    rob = stewart_6_6()
    M0 = np.diag(RNG.uniform(0.5, 2.0, 6))
    pl = platform(M0)
    R, p = rot([0.3, 0.5, 0.1], 0.4), np.array([0.05, -0.02, 1.15])
    eta = np_pose(R, p)
    xi = RNG.normal(size=6)
    w, v = xi[:3], xi[3:]
    h = 1e-5
    ldot = (legs_np(rob, R @ rot(w, h), p + R @ v * h) - legs_np(rob, R @ rot(w, -h), p - R @ v * h)) / (2 * h)
    e93 = 0.5 * pl.mass * np.sum((v + np.cross(w, pl.com)) ** 2) + 0.5 * w @ pl.inertia @ w + 0.5 * ldot @ M0 @ ldot
    assert dy.kinetic_energy(rob, pl, eta, xi) == pytest.approx(e93, rel=1e-9)
    M = dy.mass_matrix(rob, pl, eta)
    np.testing.assert_allclose(M, M.T, atol=1e-12)
    assert np.linalg.eigvalsh(M).min() > 0


def test_closed_form_bias_equals_generic_theorem2():
    rob = stewart_6_6()
    pl = platform(np.diag([0.5, 1, 1.5, 0.7, 0.9, 1.1]))
    eta = rob.sample_poses(1, 20, 0.1, 8)[0]
    phi, alpha = RNG.normal(size=6), RNG.normal(size=6)
    gen = dy.theorem2_wrench(eta, phi, alpha, lambda e: dy.mass_matrix(rob, pl, e), lambda e: dy.potential_energy(pl, e))
    closed = dy.end_effector_wrench(rob, pl, eta, 2 * phi, 2 * alpha)
    np.testing.assert_allclose(gen, closed, atol=1e-8 * np.abs(closed).max())


def test_theorem1_printed_vs_corrected():
    rob = stewart_6_6()
    pl = platform(0.0)
    eta = rob.sample_poses(1, 20, 0.1, 9)[0]
    xi, xid = RNG.normal(size=6), RNG.normal(size=6)
    ref = dy.end_effector_wrench(rob, pl, eta, xi, xid)
    np.testing.assert_allclose(dy.theorem1_wrench(pl, eta, xi, xid), ref, atol=1e-12)
    assert np.abs(dy.theorem1_wrench(pl, eta, xi, xid, printed=True) - ref).max() > 1e-3
    pl0 = dy.Platform(mass=pl.mass, com=np.zeros(3), inertia=pl.inertia)
    ref0 = dy.end_effector_wrench(rob, pl0, eta, xi, xid)
    np.testing.assert_allclose(dy.theorem1_wrench(pl0, eta, xi, xid, printed=True), ref0, atol=1e-12)
    # with actuator inertia terms
    pl1 = platform(0.9)
    _, Lam, H = rob.evaluate(eta)
    quad = np.einsum("j,kji,i->k", xi / 2, H, xi / 2)
    t1 = dy.theorem1_wrench(pl1, eta, xi, xid, Lam, quad, pl1.M0(6))
    np.testing.assert_allclose(t1, dy.end_effector_wrench(rob, pl1, eta, xi, xid), atol=1e-11)


def test_simulation_work_balance_three_ways():
    rob = stewart_6_6()
    M0 = 0.6
    pl = platform(M0)
    hold = dy.inverse_dynamics(rob, pl, rob.home, np.zeros(6), np.zeros(6)).forces
    forces = lambda t, e, x: hold * (1 + 0.1 * np.sin(6 * t)) + 4 * np.cos(3 * t + np.arange(6))
    te = np.linspace(0, 0.5, 1001)
    sim = dy.simulate(rob, pl, rob.home, np.zeros(6), forces, (0, 0.5), t_eval=te)
    scale = np.abs(sim.work_wrench).max()
    assert scale > 1.0  # the platform really moves
    assert sim.work_balance_error < 1e-9 * scale
    # independent energy: (93) + m g h, with ℓ̇ by finite differences of leg lengths
    E = []
    ldots = []
    for eta, xi in zip(sim.poses, sim.twists):
        R, p = lie.pose_rotation(eta), lie.pose_translation(eta)
        w, v = xi[:3], xi[3:]
        h = 1e-6
        ld = (legs_np(rob, R @ rot(w, h), p + R @ v * h) - legs_np(rob, R @ rot(w, -h), p - R @ v * h)) / (2 * h)
        ldots.append(ld)
        ke = 0.5 * pl.mass * np.sum((v + np.cross(w, pl.com)) ** 2) + 0.5 * w @ pl.inertia @ w + 0.5 * M0 * ld @ ld
        E.append(ke - pl.mass * G_W @ (p + R @ pl.com))
    E = np.array(E)
    np.testing.assert_allclose(E, sim.energy, atol=1e-7 * scale)
    # independent actuator work: Simpson on f · ℓ̇
    W = simpson(np.einsum("tk,tk->t", sim.forces, np.array(ldots)), x=sim.t)
    assert W == pytest.approx(sim.work_actuators[-1], abs=1e-7 * scale)
    assert E[-1] - E[0] == pytest.approx(sim.work_wrench[-1], abs=1e-7 * scale)


def test_cable_inverse_dynamics_with_tensions():
    rob = cable_robot_8()
    pl = dy.Platform(mass=10.0, com=[0, 0, 0.05], inertia=np.diag([0.3, 0.3, 0.2]), actuator_inertia=0.2)
    eta = rob.sample_poses(1, 10, 0.1, 4)[0]
    xi, xid = 0.2 * RNG.normal(size=6), 0.5 * RNG.normal(size=6)
    idr = dy.inverse_dynamics(rob, pl, eta, xi, xid, distribution="tension")
    tb = dy.end_effector_wrench(rob, pl, eta, xi, xid)
    np.testing.assert_allclose(rob.wrench_beta(eta, idr.forces), tb, atol=1e-8)
    assert np.all(-(idr.forces - idr.noload_forces) > 0)  # cable part pulls
    mn = dy.inverse_dynamics(rob, pl, eta, xi, xid)
    np.testing.assert_allclose(rob.wrench_beta(eta, mn.forces), tb, atol=1e-9)
    np.testing.assert_allclose(dy.forward_dynamics(rob, pl, eta, xi, idr.forces), xid, atol=1e-9)


def test_platform_validation():
    with pytest.raises(errors.ModelError):
        dy.Platform(mass=-1.0)
    with pytest.raises(errors.ModelError):
        dy.Platform(mass=1.0, inertia=-np.eye(3))
    with pytest.raises(errors.ShapeError):
        dy.Platform(mass=1.0, actuator_inertia=np.ones(3)).M0(6)
