"""Constrained simulation (stabilization), the unicycle in Hamel pseudo-coordinates ([Mladenova, §6,
eqs. (246)–(249)]), and bad input.

Oracles: the constraint residuals themselves (position φ(q) along a 10 s run), energy, and an
independent hand-written unicycle model (analytic H, h; [Mladenova]'s pseudo-velocity equations;
its own RK4) against the library's Udwadia–Kalaba + :func:`dqdyn.simulation.simulate`.
"""

from __future__ import annotations

import numpy as np
import pytest

import dqdyn
from dqdyn.constraints import (
    DifferentialDriveConstraint,
    JointCoupling,
    LoopClosure,
    UserConstraint,
    four_bar,
    mobile_manipulator,
)
from dqdyn.constraints.dynamics import (
    constrained_forward_dynamics,
    constraint_errors,
    project_state,
)
from dqdyn.errors import (
    ConvergenceError,
    ModelError,
    NonFiniteError,
    ShapeError,
    SingularError,
    UnknownNameError,
)
from dqdyn.multibody.builders import ModelBuilder
from dqdyn.simulation import simulate


def _max_position_error(m, traj, cons):
    return max(constraint_errors(m, q, v, cons)[0] for q, v in zip(traj.q, traj.v))


@pytest.fixture(scope="module")
def fourbar():
    return four_bar()


def test_10s_closed_loop_simulation_keeps_the_loop_closed(fourbar):
    """Four-bar under gravity, zero torque, 10 s at dt = 2 ms: with projection (and, separately,
    Baumgarte alone) the loop error stays below 1e-8; without stabilization it drifts above."""
    m, cons, q0 = fourbar
    v0 = np.zeros(m.nv)
    proj = simulate(m, q0, v0, None, 10.0, 2e-3, cons, project=True, record_every=5)
    assert _max_position_error(m, proj, cons) < 1e-8
    assert np.ptp(proj.q[:, 0]) > 1.0  # the crank really swings
    E = [dqdyn.mechanical_energy(m, q, v) for q, v in zip(proj.q, proj.v)]
    assert np.ptp(E) < 1e-5 * (1 + abs(E[0]))  # projection removes (almost) no energy
    baum = simulate(m, q0, v0, None, 10.0, 2e-3, cons, project=False, baumgarte=(10.0, 10.0),
                    record_every=5)
    assert _max_position_error(m, baum, cons) < 1e-8
    free = simulate(m, q0, v0, None, 10.0, 4e-3, cons, project=False, record_every=5)
    assert _max_position_error(m, free, cons) > 1e-8  # the drift the stabilization removes


# --------------------------------------------------------------------------------- unicycle
MASS, IZZ, C_OFF, D_AXLE = 2.0, 0.15, 0.12, -0.08


def _unicycle_model():
    b = ModelBuilder("unicycle")
    b.add_body("body", "world", "planar", joint_name="base", mass=MASS, com=(C_OFF, 0.0, 0.1),
               inertia=np.diag([0.1, 0.12, IZZ]))
    return b.build(), DifferentialDriveConstraint("base", axle_offset=(D_AXLE, 0.0))


def _hamel(q, pi, Q):
    """[Mladenova, eqs. (246)–(249)] for the knife-edge unicycle, everything written by hand:
    q = (x, y, φ), pseudo-velocities π̇ = (u, ω) = A₁ q̇ (forward speed of the body origin, yaw
    rate), constraint A₂ q̇ = 0 (no lateral velocity of the axle point at (d, 0))."""
    x, y, ph = q
    s, c = np.sin(ph), np.cos(ph)
    m, I, e, d = MASS, IZZ, C_OFF, D_AXLE
    H = np.array([[m, 0, -m * e * s], [0, m, m * e * c], [-m * e * s, m * e * c, I + m * e * e]])
    A1 = np.array([[c, s, 0.0], [0, 0, 1.0]])
    A2 = np.array([[-s, c, d]])
    B = np.linalg.inv(np.vstack([A1, A2]))
    B1, B2 = B[:, :2], B[:, 2:]
    qd = B1 @ pi  # eq. 245
    w = qd[2]
    h = np.array([-m * e * c * w * w, -m * e * s * w * w, 0.0])
    A1d = np.array([[-s * w, c * w, 0.0], [0, 0, 0]])
    A2d = np.array([[-c * w, -s * w, 0.0]])
    G = (B1 @ A1d + B2 @ A2d) @ B1 @ pi
    pidd = np.linalg.solve(B1.T @ H @ B1, B1.T @ (H @ G + Q - h))  # eq. 249
    qdd = B1 @ pidd - G  # eq. 246
    Lam = B2.T @ (H @ qdd + h - Q)  # eq. 248
    return qd, qdd, pidd, Lam


def test_unicycle_pseudo_coordinates_pointwise():
    m, con = _unicycle_model()
    rng = np.random.default_rng(0)
    for _ in range(5):
        q = rng.normal(size=3)
        pi = rng.normal(size=2)
        Q = rng.normal(size=3)
        qd, qdd, _, Lam = _hamel(q, pi, Q)
        r = constrained_forward_dynamics(m, q, qd, Q, [con])
        assert np.abs(r.qdd - qdd).max() < 1e-12 * (1 + np.abs(qdd).max())
        assert np.abs(r.multipliers - Lam).max() < 1e-12 * (1 + np.abs(Lam).max())


def test_unicycle_pseudo_coordinates_same_motion():
    """Integrate the reduced (q, π̇) equations with a hand RK4 and compare with the library's
    constrained simulation in (q, v) over 2 s."""
    m, con = _unicycle_model()

    def tau(t, q=None, v=None):
        return np.array([0.5 * np.cos(t), 0.2, 0.3 * np.sin(2 * t)])

    def f(t, z):
        qd, _, pidd, _ = _hamel(z[:3], z[3:], tau(t))
        return np.r_[qd, pidd]

    dt, T = 2e-3, 2.0
    z = np.array([0.1, -0.3, 0.4, 0.8, -0.5])
    t = 0.0
    for _ in range(int(round(T / dt))):
        k1 = f(t, z)
        k2 = f(t + dt / 2, z + dt / 2 * k1)
        k3 = f(t + dt / 2, z + dt / 2 * k2)
        k4 = f(t + dt, z + dt * k3)
        z = z + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        t += dt
    q0 = np.array([0.1, -0.3, 0.4])
    v0 = _hamel(q0, np.array([0.8, -0.5]), np.zeros(3))[0]
    traj = simulate(m, q0, v0, tau, T, dt, [con], project=False)
    assert abs(traj.t[-1] - T) < 1e-12
    assert np.abs(traj.q[-1] - z[:3]).max() < 1e-8
    assert np.linalg.norm(z[:2] - q0[:2]) > 0.3  # it went somewhere
    # pseudo-velocities recovered from the library's v: π̇ = A₁ v
    s, c = np.sin(traj.q[-1, 2]), np.cos(traj.q[-1, 2])
    pi_lib = np.array([[c, s, 0.0], [0, 0, 1.0]]) @ traj.v[-1]
    assert np.abs(pi_lib - z[3:]).max() < 1e-8


# ------------------------------------------------------------------------------- bad input
def test_bad_input_errors(fourbar):
    m, cons, q0 = fourbar
    v = np.zeros(m.nv)
    tau = np.zeros(m.nv)
    cfd = constrained_forward_dynamics
    with pytest.raises(ShapeError, match="q"):
        cfd(m, q0[:2], v, tau, cons)
    with pytest.raises(ShapeError, match="v"):
        cfd(m, q0, np.zeros(5), tau, cons)
    with pytest.raises(ShapeError, match="tau"):
        cfd(m, q0, v, np.zeros(2), cons)
    with pytest.raises(NonFiniteError, match="tau"):
        cfd(m, q0, v, np.full(m.nv, np.nan), cons)
    with pytest.raises(ModelError, match="constraints"):
        cfd(m, q0, v, tau, [np.eye(3)])
    with pytest.raises(ShapeError, match="baumgarte"):
        cfd(m, q0, v, tau, cons, baumgarte=(1.0,))
    with pytest.raises(ShapeError, match="baumgarte"):
        cfd(m, q0, v, tau, cons, baumgarte=(-1.0, 2.0))
    with pytest.raises(ShapeError, match="dynamics"):
        cfd(m, q0, v, tau, cons, dynamics="magic")
    with pytest.raises(ModelError, match="kind"):
        LoopClosure("coupler_tip", "rocker_tip", "4d")
    with pytest.raises(ModelError, match="distance"):
        cfd(m, q0, v, tau, [LoopClosure("coupler_tip", "rocker_tip", "1d")])
    with pytest.raises(SingularError, match="coincide"):
        cfd(m, q0, v, tau, [LoopClosure("coupler_tip", "rocker_tip", "1d", distance=0.1)])
    with pytest.raises(UnknownNameError):
        cfd(m, q0, v, tau, [LoopClosure("no_such_frame", "rocker_tip", "3d")])
    with pytest.raises(ShapeError, match="offset"):
        cfd(m, q0, v, tau, [LoopClosure(("crank", (1.0, 2.0)), "rocker_tip", "3d")])
    with pytest.raises(ShapeError, match="A must be"):
        cfd(m, q0, v, tau, [UserConstraint(lambda mod, q, v: (np.ones((1, 2)), np.zeros(1)))])
    with pytest.raises(ShapeError, match="b must have"):
        UserConstraint(A=np.ones((2, 3)), b=np.zeros(3))
    with pytest.raises(ModelError, match="either"):
        UserConstraint()
    with pytest.raises(ModelError, match="planar"):
        cfd(m, q0, v, tau, [DifferentialDriveConstraint("crank_joint")])
    with pytest.raises(ModelError, match="axle_offset"):
        DifferentialDriveConstraint("base", axle_offset=(1.0, 2.0, 3.0, 4.0))
    mm, mcons, mq0 = mobile_manipulator()
    with pytest.raises(ModelError, match="1-DoF"):
        cfd(mm, mq0, np.zeros(mm.nv), np.zeros(mm.nv), [JointCoupling("base_joint", "joint1")])
    with pytest.raises(ModelError, match="arm_dof"):
        mobile_manipulator(arm_dof=4)
    # a loop that cannot close: projection refuses
    far = LoopClosure("coupler_tip", ("world", (5.0, 0.0, 0.0)), "3d")
    with pytest.raises(ConvergenceError, match="converge"):
        project_state(m, q0, v, [far], max_iter=10)
