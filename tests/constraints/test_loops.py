"""Closed kinematic loops ([Kim2012, §3]) and the other constraint kinds.

Oracles: Pinocchio's ``constraintDynamics`` (``RigidConstraintModel``, CONTACT_6D / CONTACT_3D,
pin 4.1) on a spatial 7R loop welded to the ground (6D) and on the four-bar (3D, planar, so one
row is identically zero; pin needs its proximal iterations there); a numpy least-squares KKT
solve on every other kind (5D revolute-type, 1D distance, couplings, user constraints); finite
differences for ``b = −Ȧ v`` and ``φ̇ = A v``.
"""

from __future__ import annotations

import numpy as np
import pytest

import dqdyn
from dqdyn.constraints import (
    JointCoupling,
    LoopClosure,
    UserConstraint,
    five_bar,
    four_bar,
    slider_crank,
)
from dqdyn.constraints.base import resolve_frame
from dqdyn.constraints.dynamics import (
    constrained_forward_dynamics,
    kkt_forward_dynamics,
    kkt_solve,
    project_state,
)
from dqdyn.errors import InfeasibleError

from loop_models import null_velocity as _null_velocity
from loop_models import pin_rigid_constraints, spatial_7r
from pinconv import pin, q_to_pin


def _rel(x, y):
    return float(np.abs(np.asarray(x) - np.asarray(y)).max() / max(1.0, np.abs(y).max()))


# ------------------------------------------------------------------------ loops vs Pinocchio
def _pin_constraint_dynamics(model, specs, q, v, tau, prox=None):
    pm, pd, R, D = pin_rigid_constraints(model, specs)
    args = (pm, pd, q_to_pin(model, pm, q), v, tau, R, D) + ((prox,) if prox else ())
    return pin.constraintDynamics(*args)


def test_6d_loop_equals_pinocchio_constraint_dynamics():
    m, q0 = spatial_7r()
    x = dqdyn.frame_pose(m, q0, "tip")
    con = LoopClosure((0, x), "tip", "6d")
    assert np.abs(con.position_error(m, q0)).max() < 1e-14
    rng = np.random.default_rng(0)
    for _ in range(3):
        v = _null_velocity(m, [con], q0, rng)
        tau = rng.normal(size=m.nv)
        r = constrained_forward_dynamics(m, q0, v, tau, [con])
        a_pin = _pin_constraint_dynamics(m, [(pin.ContactType.CONTACT_6D, resolve_frame(m, "tip"),
                                              (0, x))], q0, v, tau)
        assert np.abs(r.A @ r.qdd - r.b).max() < 1e-10
        assert _rel(r.qdd, a_pin) < 1e-10


def test_3d_loop_four_bar_equals_pinocchio_constraint_dynamics():
    m, cons, q0 = four_bar()
    rng = np.random.default_rng(1)
    prox = pin.ProximalSettings(1e-13, 1e-8, 200)
    for _ in range(3):
        v = _null_velocity(m, cons, q0, rng)
        tau = rng.normal(size=m.nv)
        r = constrained_forward_dynamics(m, q0, v, tau, cons)
        assert np.linalg.matrix_rank(r.A) == 2 and r.A.shape[0] == 3  # redundant (planar) row
        a_pin = _pin_constraint_dynamics(
            m, [(pin.ContactType.CONTACT_3D, resolve_frame(m, "coupler_tip"), resolve_frame(m, "rocker_tip"))],
            q0, v, tau, prox)
        assert _rel(r.qdd, a_pin) < 1e-10


# ----------------------------------------------------------------------- other kinds vs KKT
def _kinds():
    out = []
    m, cons, q0 = five_bar()
    out.append(("five_bar_3d", m, cons, q0))
    out.append(("five_bar_1d", m, [LoopClosure("left2_tip", "right1_tip", "1d").at(m, q0)], q0))
    m2, cons2, q2 = slider_crank()
    out.append(("slider_crank", m2, cons2, q2))
    m3, q3 = spatial_7r(seed=4)
    x = dqdyn.frame_pose(m3, q3, "tip")
    out.append(("spatial_5d", m3, [LoopClosure((0, x), "tip", "5d", axis=(0.3, -0.5, 0.8))], q3))
    out.append(("spatial_1d", m3, [LoopClosure((0, x), ("tip", (0.2, 0.0, 0.1)), "1d").at(m3, q3)], q3))
    out.append(("coupling", m3, [JointCoupling("j2", "j5", ratio=-2.5, offset=q3[2] + 2.5 * q3[5])], q3))
    Au = np.zeros((2, m3.nv))
    Au[0, [0, 3]] = 1.0, -1.0
    Au[1, 6] = 1.0
    out.append(("user_constant", m3, [UserConstraint(A=Au)], q3))
    out.append(("user_callable", m3, [UserConstraint(lambda mod, q, v: (Au * np.cos(q[1]), np.zeros(2)),
                                                     velocity=lambda mod, q, v: Au @ v * np.cos(q[1]))], q3))
    return out


KINDS = _kinds()


@pytest.mark.parametrize("name,m,cons,q0", KINDS, ids=[k[0] for k in KINDS])
def test_constrained_forward_dynamics_equals_kkt(name, m, cons, q0):
    rng = np.random.default_rng(2)
    for pe in (c.position_error(m, q0) for c in cons):
        assert pe is None or np.abs(pe).max() < 1e-12, name
    for _ in range(2):
        v = _null_velocity(m, cons, q0, rng)
        tau = rng.normal(size=m.nv)
        r = constrained_forward_dynamics(m, q0, v, tau, cons)
        M, h = dqdyn.mass_matrix(m, q0), dqdyn.nonlinear_effects(m, q0, v)
        qdd, lam, res = kkt_solve(M, tau - h, r.A, r.b)
        assert res < 1e-10
        assert np.abs(r.A @ r.qdd - r.b).max() < 1e-10
        assert _rel(r.qdd, qdd) < 1e-10
        assert _rel(M @ r.qdd + h, tau + r.constraint_forces) < 1e-10


@pytest.mark.parametrize("name,m,cons,q0", [k for k in KINDS if not k[0].startswith("user_c")],
                         ids=[k[0] for k in KINDS if not k[0].startswith("user_c")])
def test_b_is_minus_adot_v_and_phidot_is_a_v(name, m, cons, q0):
    """b = −Ȧ v (the rows are exact time derivatives) and d/dt φ(q) = A v, by central FD."""
    rng = np.random.default_rng(3)
    v = rng.normal(size=m.nv)  # any velocity: the identities hold off the manifold's tangent too
    h = 1e-6
    qp, qm = dqdyn.integrate(m, q0, v, h), dqdyn.integrate(m, q0, v, -h)
    for c in cons:
        A, b = c.terms(m, q0, v)
        Adot_v = (c.A(m, qp, v) - c.A(m, qm, v)) @ v / (2 * h)
        assert np.abs(b + Adot_v).max() < 1e-6 * (1 + np.abs(b).max()), name
        if c.holonomic and c.dim == len(c.position_error(m, q0)):
            phid = (c.position_error(m, qp) - c.position_error(m, qm)) / (2 * h)
            assert np.abs(phid - A @ v).max() < 1e-6 * (1 + np.abs(A @ v).max()), name


# -------------------------------------------------------------------- redundant / inconsistent
def test_redundant_constraints_are_handled():
    m, cons, q0 = four_bar()
    rng = np.random.default_rng(4)
    v = _null_velocity(m, cons, q0, rng)
    tau = rng.normal(size=m.nv)
    r1 = constrained_forward_dynamics(m, q0, v, tau, cons)
    r2 = constrained_forward_dynamics(m, q0, v, tau, cons + cons)  # every row twice
    assert _rel(r2.qdd, r1.qdd) < 1e-12
    assert _rel(r2.constraint_forces, r1.constraint_forces) < 1e-10
    # the minimum-norm multipliers split the force evenly between the copies
    assert _rel(r2.multipliers[:3], r2.multipliers[3:]) < 1e-10
    # a consistent extra user row that repeats a loop row is accepted too
    A, b = cons[0].terms(m, q0, v)
    r3 = constrained_forward_dynamics(m, q0, v, tau, cons + [UserConstraint(A=A[:1], b=b[:1])])
    assert _rel(r3.qdd, r1.qdd) < 1e-12


def test_inconsistent_constraints_are_refused():
    m, cons, q0 = four_bar()
    rng = np.random.default_rng(5)
    v = _null_velocity(m, cons, q0, rng)
    A, b = cons[0].terms(m, q0, v)
    bad = UserConstraint(A=A[:1], b=b[:1] + 1.0)  # same row, another right-hand side
    with pytest.raises(InfeasibleError, match="constraints"):
        constrained_forward_dynamics(m, q0, v, np.zeros(m.nv), cons + [bad])
    with pytest.raises(InfeasibleError, match="inconsistent"):
        kkt_forward_dynamics(m, q0, v, np.zeros(m.nv), cons + [bad])
    # more independent rows than DoFs with a non-zero b: no solution either
    m3, q3 = spatial_7r()
    Arand = rng.normal(size=(9, m3.nv))
    with pytest.raises(InfeasibleError, match="constraints"):
        constrained_forward_dynamics(m3, q3, np.zeros(7), np.zeros(7),
                                     [UserConstraint(A=Arand, b=rng.normal(size=9))])
    # batch: the failing element is named
    Q = np.stack([q0, q0])
    with pytest.raises(InfeasibleError, match="batch element 0"):
        constrained_forward_dynamics(m, Q, np.stack([v, v]), np.zeros((2, m.nv)), cons + [bad])


def test_project_state_closes_a_perturbed_loop():
    for name, m, cons, q0 in KINDS[:5]:
        rng = np.random.default_rng(6)
        q = q0 + 0.02 * rng.normal(size=m.nq)
        q1, v1 = project_state(m, q, rng.normal(size=m.nv), cons)
        for c in cons:
            assert np.abs(c.position_error(m, q1)).max() < 1e-12, name
            assert np.abs(c.velocity_error(m, q1, v1)).max() < 1e-10, name
        assert np.abs(q1 - q0).max() < 0.2, name  # the nearby branch
