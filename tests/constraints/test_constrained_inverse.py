"""Constrained inverse dynamics of closed chains ([Kim2012, §3.1, eqs. (56)–(66)]): unique when the
actuation matches, minimum-norm when redundantly actuated, an error when under-actuated.

Oracle: feeding the computed torques back to the constrained *forward* dynamics (Udwadia–Kalaba,
itself checked against Pinocchio and KKT) reproduces the requested acceleration.
"""

from __future__ import annotations

import numpy as np
import pytest

from dqdyn.constraints import five_bar, slider_crank
from dqdyn.constraints.dynamics import constrained_forward_dynamics, constrained_inverse_dynamics
from dqdyn.errors import InfeasibleError, ShapeError, UnknownNameError


def _consistent_motion(m, cons, q, rng):
    """(v, v̇) with A v = 0 and A v̇ = b."""
    A = np.concatenate([c.A(m, q) for c in cons])
    U, s, Vt = np.linalg.svd(A)
    r = int(np.sum(s > 1e-10 * s[0]))
    N = Vt[r:].T
    v = N @ rng.normal(size=N.shape[1])
    b = np.concatenate([c.b(m, q, v) for c in cons])
    qdd = np.linalg.pinv(A) @ b + N @ rng.normal(size=N.shape[1])
    return v, qdd


@pytest.fixture(scope="module")
def fb():
    return five_bar()


def test_unique_when_actuation_matches(fb):
    """Five-bar, proximal joints actuated (2 actuators, 2 DoF, 2 passive joints): eq. 58."""
    m, cons, q0 = fb
    rng = np.random.default_rng(0)
    act = ["left1_joint", "right1_joint"]
    for _ in range(3):
        v, qdd = _consistent_motion(m, cons, q0, rng)
        r = constrained_inverse_dynamics(m, q0, v, qdd, cons, act)
        assert r.unique
        passive = [m.v_slice("left2_joint").start, m.v_slice("right2_joint").start]
        assert np.all(r.tau[passive] == 0.0)
        fwd = constrained_forward_dynamics(m, q0, v, r.tau, cons)
        assert np.abs(fwd.qdd - qdd).max() < 1e-9 * (1 + np.abs(qdd).max())


def test_passive_forces_are_honoured(fb):
    m, cons, q0 = fb
    rng = np.random.default_rng(1)
    v, qdd = _consistent_motion(m, cons, q0, rng)
    tp = np.array([0.3, -0.2])  # e.g. spring torques in the passive joints
    r = constrained_inverse_dynamics(m, q0, v, qdd, cons, [0, 2], tau_passive=tp)
    assert np.allclose(r.tau[[1, 3]], tp)
    fwd = constrained_forward_dynamics(m, q0, v, r.tau, cons)
    assert np.abs(fwd.qdd - qdd).max() < 1e-9 * (1 + np.abs(qdd).max())


def test_redundant_actuation_gives_minimum_norm(fb):
    """Three actuators on a 2-DoF five-bar: a family of torques; "min_torque" (eqs. 62–64) is the
    least-norm one, "min_constraint_force" the least-multiplier one; both reproduce the motion."""
    m, cons, q0 = fb
    rng = np.random.default_rng(2)
    act = np.array([True, True, True, False])
    v, qdd = _consistent_motion(m, cons, q0, rng)
    r = constrained_inverse_dynamics(m, q0, v, qdd, cons, act)
    r2 = constrained_inverse_dynamics(m, q0, v, qdd, cons, act, objective="min_constraint_force")
    assert not r.unique
    for rr in (r, r2):
        fwd = constrained_forward_dynamics(m, q0, v, rr.tau, cons)
        assert np.abs(fwd.qdd - qdd).max() < 1e-9 * (1 + np.abs(qdd).max())
    # the family: τ_a + A_aᵀ n for n in null(A_pᵀ) — none has a smaller norm than the minimum
    A = np.concatenate([c.A(m, q0) for c in cons])
    Ap, Aa = A[:, ~act], A[:, act]
    U, s, Vt = np.linalg.svd(Ap.T)
    N = Vt[int(np.sum(s > 1e-10 * s[0])):].T
    dirs = Aa.T @ N
    assert np.linalg.norm(dirs) > 1e-6  # really redundant
    for z in rng.normal(size=(20, N.shape[1])):
        other = r.tau[act] - dirs @ z
        assert np.linalg.norm(other) >= np.linalg.norm(r.tau[act]) - 1e-12
        fwd = constrained_forward_dynamics(m, q0, v, np.r_[other, 0.0], cons)
        assert np.abs(fwd.qdd - qdd).max() < 1e-8 * (1 + np.abs(qdd).max())
    assert np.linalg.norm(r2.multipliers) <= np.linalg.norm(r.multipliers) + 1e-12


def test_under_actuated_is_refused(fb):
    m, cons, q0 = fb
    rng = np.random.default_rng(3)
    v, qdd = _consistent_motion(m, cons, q0, rng)
    with pytest.raises(InfeasibleError, match="under-actuated"):
        constrained_inverse_dynamics(m, q0, v, qdd, cons, ["left1_joint"])
    # ... but a motion that the single actuator *can* produce is accepted
    tau = np.zeros(m.nv)
    tau[0] = 1.7
    qdd_ok = constrained_forward_dynamics(m, q0, v, tau, cons).qdd
    r = constrained_inverse_dynamics(m, q0, v, qdd_ok, cons, ["left1_joint"])
    assert abs(r.tau[0] - 1.7) < 1e-9


def test_slider_crank_inverse_dynamics_round_trip():
    m, cons, q0 = slider_crank()
    rng = np.random.default_rng(4)
    v, qdd = _consistent_motion(m, cons, q0, rng)
    r = constrained_inverse_dynamics(m, q0, v, qdd, cons, ["slider_joint"])  # piston drives crank
    fwd = constrained_forward_dynamics(m, q0, v, r.tau, cons)
    assert np.abs(fwd.qdd - qdd).max() < 1e-9 * (1 + np.abs(qdd).max())


def test_inverse_bad_input(fb):
    m, cons, q0 = fb
    rng = np.random.default_rng(5)
    v, qdd = _consistent_motion(m, cons, q0, rng)
    with pytest.raises(InfeasibleError, match="qdd"):
        constrained_inverse_dynamics(m, q0, v, qdd + 1.0, cons, [0, 2])
    with pytest.raises(ShapeError, match="qdd"):
        constrained_inverse_dynamics(m, q0, v, qdd[:2], cons, [0, 2])
    with pytest.raises(ShapeError, match="actuated"):
        constrained_inverse_dynamics(m, q0, v, qdd, cons, [0, 9])
    with pytest.raises(ShapeError, match="actuated"):
        constrained_inverse_dynamics(m, q0, v, qdd, cons, np.array([True, False]))
    with pytest.raises(UnknownNameError):
        constrained_inverse_dynamics(m, q0, v, qdd, cons, ["no_such_joint"])
    with pytest.raises(ShapeError, match="tau_passive"):
        constrained_inverse_dynamics(m, q0, v, qdd, cons, [0, 2], tau_passive=np.zeros(3))
    with pytest.raises(ShapeError, match="objective"):
        constrained_inverse_dynamics(m, q0, v, qdd, cons, [0, 2], objective="fastest")
