"""Hamel / Boltzmann–Hamel pseudo-coordinate dynamics (dqdyn.constraints.pseudo_coordinates;
[Mladenova, §6]).  Oracle: dqdyn's Udwadia–Kalaba constrained_forward_dynamics and the KKT system."""

import numpy as np
import pytest

from dqdyn import errors
from dqdyn.constraints import DifferentialDriveConstraint, mobile_manipulator
from dqdyn.constraints.dynamics import constrained_forward_dynamics, kkt_forward_dynamics
from dqdyn.constraints.pseudo_coordinates import PseudoCoordinates, diff_drive_quasi_velocities
from dqdyn.multibody.builders import ModelBuilder

RNG = np.random.default_rng(246)


def knife_edge(com=(0.1, 0.05, 0.0), axle=(-0.2, 0.0)):
    b = ModelBuilder("knife_edge")
    b.add_body("base", "world", "planar", joint_name="base_joint", mass=2.0, com=com,
               inertia=np.diag([0.1, 0.2, 0.3]))
    m = b.build()
    return m, [DifferentialDriveConstraint("base_joint", axle)]


@pytest.mark.parametrize("exact_a1dot", [True, False])
def test_knife_edge_matches_udwadia_kalaba_and_kkt(exact_a1dot):
    m, cons = knife_edge()
    A1, A1d = diff_drive_quasi_velocities(m)
    pc = PseudoCoordinates(m, cons, A1, A1_dot=A1d if exact_a1dot else None)
    for _ in range(5):
        q = RNG.uniform(-1, 1, 3)
        pid, tau = RNG.normal(size=2), RNG.normal(size=3)
        r = pc.forward_dynamics(q, pid, tau)
        qd = pc.velocities(q, pid)
        assert abs(pc.A2(q)[0] @ qd).max() < 1e-14  # (245) satisfies the constraint
        uk = constrained_forward_dynamics(m, q, qd, tau, cons)
        np.testing.assert_allclose(r.qdd, uk.qdd, atol=1e-10)
        np.testing.assert_allclose(r.multipliers, uk.multipliers, atol=1e-10)
        np.testing.assert_allclose(r.constraint_force, uk.constraint_forces, atol=1e-10)
        qdd_kkt, lam_kkt = kkt_forward_dynamics(m, q, qd, tau, cons)
        np.testing.assert_allclose(r.qdd, qdd_kkt, atol=1e-10)
        np.testing.assert_allclose(r.multipliers, lam_kkt, atol=1e-10)
        np.testing.assert_allclose(r.reactions[:2], 0, atol=1e-12)  # R_k = 0 for k <= m
        np.testing.assert_allclose(pc.quasi_velocities(q, qd), pid, atol=1e-14)


def test_mobile_manipulator_matches_udwadia_kalaba():
    mm, cons, q0 = mobile_manipulator()
    A1, A1d = diff_drive_quasi_velocities(mm)
    pc = PseudoCoordinates(mm, cons, A1, A1_dot=A1d)
    assert pc.m == 7
    for _ in range(3):
        q = q0 + RNG.normal(size=8) * 0.3
        pid, tau = RNG.normal(size=7), RNG.normal(size=8) * 5
        r = pc.forward_dynamics(q, pid, tau)
        uk = constrained_forward_dynamics(mm, q, pc.velocities(q, pid), tau, cons)
        np.testing.assert_allclose(r.qdd, uk.qdd, atol=1e-10 * max(1, np.abs(uk.qdd).max()))
        np.testing.assert_allclose(r.multipliers, uk.multipliers, atol=1e-10 * max(1, np.abs(uk.multipliers).max()))


def test_non_invertible_choice_and_bad_shapes():
    m, cons = knife_edge()
    bad = lambda q: np.array([[-np.sin(q[2]), np.cos(q[2]), -0.2], [0, 0, 1.0]])  # noqa: E731 (= the constraint row)
    pc = PseudoCoordinates(m, cons, bad)
    with pytest.raises(errors.SingularError, match="A1"):
        pc.forward_dynamics(np.zeros(3), np.zeros(2), np.zeros(3))
    with pytest.raises(errors.ShapeError, match="A1 must be"):
        PseudoCoordinates(m, cons, np.eye(3)).B(np.zeros(3))
    A1, _ = diff_drive_quasi_velocities(m)
    with pytest.raises(errors.ShapeError, match="pi_dot"):
        PseudoCoordinates(m, cons, A1).forward_dynamics(np.zeros(3), np.zeros(3), np.zeros(3))
    with pytest.raises(errors.ModelError, match="planar"):
        b = ModelBuilder("arm")
        b.add_body("l1", "world", "revolute", joint_name="j1", axis=(0, 0, 1), mass=1.0, inertia=np.diag([0.1, 0.1, 0.1]))
        diff_drive_quasi_velocities(b.build(), "j1")
