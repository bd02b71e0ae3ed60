"""Simulation: manifold integrators (order, unit norms, energy), trajectories, controllers.

Oracles: convergence order against a fine-step solution, energy conservation (zero torque,
no damping), analytic closed-loop behaviour (computed torque), the goal of the wrench law."""

from __future__ import annotations

import numpy as np
import pytest

import dqdyn
from dqdyn.errors import DqdynError, ShapeError, UnknownNameError
from dqdyn.simulation import (
    ComputedTorque,
    JointPD,
    SinusoidalReference,
    Trajectory,
    WrenchControl,
    rkmk4,
    semi_implicit_euler,
    simulate,
)


def _free_model():
    return dqdyn.load_bundled("two_link_arm", root_joint="free")


def _state(m, seed=0):
    rng = np.random.default_rng(seed)
    return dqdyn.random_configuration(m, seed=rng), rng.normal(size=m.nv)


@pytest.mark.parametrize("integrator, order", [("rk4", 4), ("euler", 1)])
def test_convergence_order_on_free_joint(integrator, order):
    m = _free_model()
    q0, v0 = _state(m)
    T = 0.16
    # fixed steps (substeps=1), and no energy monitor: coarse steps are the point here
    ref = simulate(m, q0, v0, None, T, T / 256, integrator="rk4", substeps=1, monitor="off")
    errs = []
    for n in (8, 16) if order == 4 else (64, 128):
        tr = simulate(m, q0, v0, None, T, T / n, integrator=integrator, substeps=1,
                      monitor="off")
        errs.append(np.linalg.norm(dqdyn.difference(m, ref.q[-1], tr.q[-1])) +
                    np.linalg.norm(ref.v[-1] - tr.v[-1]))
    rate = np.log2(errs[0] / errs[1])
    assert rate == pytest.approx(order, abs=0.5)


def test_unit_dual_quaternion_and_energy_conserved():
    m = _free_model()
    q0, v0 = _state(m, 1)
    m = dqdyn.load_bundled("two_link_arm", root_joint="free", gravity=(0, 0, 0))
    tr = simulate(m, q0, v0, None, 0.5, 2e-3)
    x = tr.q[:, :8]
    assert np.abs(np.sum(x[:, :4] ** 2, axis=1) - 1).max() < 1e-12
    assert np.abs(np.sum(x[:, :4] * x[:, 4:], axis=1)).max() < 1e-12  # dual part ⟂ real part
    E = [dqdyn.kinetic_energy(m, q, v) for q, v in zip(tr.q, tr.v)]
    assert np.ptp(E) / E[0] < 1e-8


def test_energy_fixed_base_arm_and_euler_step_consistency():
    m = dqdyn.load_bundled("jaco6")
    q0 = np.full(6, 0.3)
    tr = simulate(m, q0, np.zeros(6), None, 0.3, 1e-3)
    E = [dqdyn.mechanical_energy(m, q, v) for q, v in zip(tr.q, tr.v)]
    assert np.ptp(E) < 1e-8 * (1 + abs(E[0]))
    # semi-implicit Euler: v⁺ = v + dt·aba(q, v, τ) exactly
    acc = lambda t, q, v: (dqdyn.aba(m, q, v, np.zeros(6)), np.zeros(6))  # noqa: E731
    q1, v1, a, _ = semi_implicit_euler(m, acc, 0.0, q0, np.zeros(6), 1e-3)
    np.testing.assert_allclose(v1, 1e-3 * dqdyn.aba(m, q0, np.zeros(6), np.zeros(6)), atol=1e-15)
    np.testing.assert_allclose(q1, q0 + 1e-3 * v1, atol=1e-15)
    q2, v2, _, _ = rkmk4(m, acc, 0.0, q0, np.zeros(6), 1e-3)
    np.testing.assert_allclose(q2, tr.q[1], atol=1e-15)


def test_trajectory_save_load(tmp_path):
    m = dqdyn.load_bundled("two_link_arm")
    tr = simulate(m, np.zeros(2), np.zeros(2), np.array([0.1, -0.2]), 0.01, 1e-3)
    assert len(tr) == 11 and tr.tau.shape == (11, 2)
    p = tr.save(tmp_path / "traj.npz")
    tr2 = Trajectory.load(p)
    for k in ("t", "q", "v", "a", "tau"):
        np.testing.assert_array_equal(getattr(tr, k), getattr(tr2, k))
    assert tr2.meta["integrator"] == "rk4" and tr2.meta["dt"] == 1e-3
    np.save(tmp_path / "x.npy", np.zeros(3))
    np.savez(tmp_path / "bad.npz", x=np.zeros(3))
    with pytest.raises(DqdynError, match="path"):
        Trajectory.load(tmp_path / "bad.npz")


def test_reference_is_consistent():
    m = dqdyn.serial_chain(3)
    ref = SinusoidalReference(m, np.zeros(3), [0.5, -0.3, 0.2], [0.3, 0.5, 0.7], 0.4)
    t, h = 0.7, 1e-5
    np.testing.assert_allclose((ref.position(t + h) - ref.position(t - h)) / (2 * h),
                               ref.velocity(t), atol=1e-8)
    np.testing.assert_allclose((ref.velocity(t + h) - ref.velocity(t - h)) / (2 * h),
                               ref.acceleration(t), atol=1e-8)
    with pytest.raises(DqdynError, match="frequency"):
        SinusoidalReference(m, np.zeros(3), 1.0, 0.0)


def test_pd_and_computed_torque_track_on_7dof_arm():
    m = dqdyn.serial_chain(7, seed=3)
    q0 = np.full(7, 0.3)
    ref = SinusoidalReference(m, q0, 0.4, 0.5)
    Md = np.diag(dqdyn.mass_matrix(m, q0))
    for ctl, tol in ((ComputedTorque(m, ref, kp=100.0, kd=20.0), 1e-4),
                     (JointPD(m, ref, kp=225.0 * Md, kd=30.0 * Md), 5e-2)):
        tr = simulate(m, q0 + 0.05, np.zeros(7), ctl, 1.5, 1e-3, integrator="rk4")
        e = np.array([np.linalg.norm(ref.position(t) - q) for t, q in zip(tr.t, tr.q)])
        assert e[0] == pytest.approx(0.05 * np.sqrt(7))
        assert e[tr.t >= 1.0].max() < tol, type(ctl).__name__
    # computed torque: the closed loop is ë + kd ė + kp e = 0 (analytic, critically damped)
    ctl = ComputedTorque(m, ref, kp=100.0, kd=20.0)
    tr = simulate(m, q0 + 0.05, np.zeros(7), ctl, 0.3, 1e-3)
    e = tr.q - np.array([ref.position(s) for s in tr.t])
    ana = 0.05 * (1 + 10 * tr.t) * np.exp(-10 * tr.t)
    np.testing.assert_allclose(e, np.repeat(ana[:, None], 7, 1), atol=1e-8)


def test_wrench_control_converges_and_routes_agree():
    """Thesis app. B: Γ_u = 𝒩̄(q, 0, 0, ζ_d) + Γ_diss (eq. B.3) drives the end effector to p_d."""
    m = dqdyn.load_bundled("jaco6")
    goal = np.array([-0.4619, -0.0675, 0.6277])  # the thesis's goal [Silva2022thesis, app. B]
    w1 = WrenchControl(m, "end_effector", goal)
    w2 = WrenchControl(m, "end_effector", goal, route="jacobian")
    rng = np.random.default_rng(0)
    for _ in range(3):
        q, v = rng.uniform(-2, 2, 6), rng.normal(size=6)
        np.testing.assert_allclose(w1(0, q, v), w2(0, q, v), atol=1e-12)
    # with zero gains it is exact gravity compensation: the arm stays at rest
    w0 = WrenchControl(m, "end_effector", goal, kp=0, kv=0, kdiss=0)
    q = rng.uniform(-2, 2, 6)
    np.testing.assert_allclose(dqdyn.aba(m, q, np.zeros(6), w0(0, q, np.zeros(6))), 0, atol=1e-10)
    q0 = np.array([0.0, 0.6, 2.2, 0.0, 0.9, 0.0])
    tr = simulate(m, q0, np.zeros(6), w1, 8.0, 2e-3, integrator="euler")
    e0 = np.linalg.norm(w1.position(q0) - goal)
    e1 = np.linalg.norm(w1.position(tr.q[-1]) - goal)
    assert e1 < 1e-2 * e0
    with pytest.raises(UnknownNameError):
        WrenchControl(m, "nope", goal)
    with pytest.raises(ShapeError, match="p_goal"):
        WrenchControl(m, "end_effector", [1, 2])


def test_constrained_simulation_stays_on_manifold():
    from dqdyn.constraints import four_bar

    m, cons, q0 = four_bar()
    tr = simulate(m, q0, np.zeros(m.nv), None, 0.1, 2e-3, constraints=cons)
    from dqdyn.constraints.dynamics import constraint_errors

    pe, ve = constraint_errors(m, tr.q[-1], tr.v[-1], cons)
    assert pe < 1e-9 and ve < 1e-9
    assert np.ptp(tr.q[:, 0]) > 1e-4  # it moved under gravity


def test_bad_inputs_name_the_argument():
    m = dqdyn.load_bundled("two_link_arm")
    z = np.zeros(2)
    with pytest.raises(ShapeError, match="q0"):
        simulate(m, np.zeros(3), z)
    with pytest.raises(ShapeError, match="v0"):
        simulate(m, z, np.zeros(1))
    with pytest.raises(DqdynError, match="dt"):
        simulate(m, z, z, None, 1.0, -1.0)
    with pytest.raises(DqdynError, match="integrator"):
        simulate(m, z, z, None, 0.01, 1e-3, integrator="magic")
    with pytest.raises(ShapeError, match="dt"):  # a string is refused, not parsed
        simulate(m, z, z, None, 0.01, "0.1")
    with pytest.raises(ShapeError, match="duration"):
        simulate(m, z, z, None, None, 1e-3)
    with pytest.raises(DqdynError, match="integrator"):
        simulate(m, z, z, None, 0.01, 1e-3, integrator=["rk4"])
    with pytest.raises(DqdynError, match="record_every"):
        simulate(m, z, z, None, 0.01, 1e-3, record_every=0.5)
    with pytest.raises(ShapeError, match="tau_or_controller"):
        simulate(m, z, z, np.zeros(5), 0.01, 1e-3)
    with pytest.raises(ShapeError, match="kp"):
        JointPD(m, z, kp=np.ones(3))
    with pytest.raises(ShapeError, match="reference"):
        ComputedTorque(m, np.zeros(4))
