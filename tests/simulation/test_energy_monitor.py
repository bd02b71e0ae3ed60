"""The energy / constraint monitor of ``simulate`` and its defaults.

Oracles: the energy balance of a passive or conservative motion (``E = T + U + V`` constant),
computed here from the returned trajectory — with dqdyn's energy functions, and for the
Panda with Pinocchio's (``computeKineticEnergy`` / ``computePotentialEnergy``) — independently
of the monitor; a fine fixed-step reference for the automatic substeps; the constraint residual.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import dqdyn
from dqdyn import models
from dqdyn.errors import DqdynError, EnergyDriftError, EnergyDriftWarning
from dqdyn.simulation import simulate
from dqdyn.simulation.defaults import start_configuration

ERD = models.example_robot_data_dir() is not None
need_erd = pytest.mark.skipif(not ERD, reason="example-robot-data is not installed")

BUNDLED = dqdyn.list_models("bundled", kind="model")


def drift(m, tr, V=None):
    """``max |E − E(0)| / max T`` over the recorded states (E = T + U (+ V))."""
    T = np.array([dqdyn.kinetic_energy(m, q, v) for q, v in zip(tr.q, tr.v)])
    E = T + np.array([dqdyn.potential_energy(m, q) for q in tr.q])
    if V is not None:
        E = E + np.array([V(q) for q in tr.q])
    return float(np.abs(E - E[0]).max() / T.max())


def _arm(name):
    m = dqdyn.load_example(name)
    return m, start_configuration(m)


@pytest.mark.parametrize("name", ["arm7", pytest.param("xarm7", marks=need_erd),
                                  pytest.param("panda", marks=need_erd)])
def test_euler_at_a_quarter_millisecond_warns(name):
    m, q0 = _arm(name)
    with pytest.warns(EnergyDriftWarning) as rec:
        tr = simulate(m, q0, np.zeros(m.nv), None, 1.0, 2.5e-4, integrator="euler",
                      record_every=20)
    msg = next(str(w.message) for w in rec if issubclass(w.category, EnergyDriftWarning))
    assert "integrator='euler'" in msg and "dt=0.00025" in msg and "at t = " in msg
    assert "reduce dt" in msg and "'rk4'" in msg and "'midpoint'" in msg
    # the warning tells the truth: the energy balance of the returned motion is broken
    assert drift(m, tr) > 1e-3
    assert tr.meta["energy_error"] > 1e-3


def test_raise_mode_stops_the_run():
    m, q0 = _arm("arm7")
    with pytest.raises(EnergyDriftError, match="integrator='euler'"):
        simulate(m, q0, np.zeros(m.nv), None, 1.0, 2.5e-4, integrator="euler", monitor="raise")


@pytest.mark.parametrize("name", BUNDLED + [pytest.param("panda", marks=need_erd),
                                            pytest.param("xarm7", marks=need_erd)])
def test_default_run_keeps_energy_over_ten_seconds(name):
    m, q0 = _arm(name)
    with warnings.catch_warnings():
        warnings.simplefilter("error", EnergyDriftWarning)
        tr = simulate(m, q0, np.zeros(m.nv), None, 10.0, record_every=10)  # default rk4, 1 ms
    assert tr.meta["integrator"] == "rk4" and tr.meta["dt"] == 1e-3
    if np.ptp(tr.q, axis=0).max() < 1e-9:  # nothing moves (a base on the ground plane)
        return
    assert drift(m, tr) < 1e-3


@need_erd
def test_default_panda_energy_against_pinocchio():
    pin = pytest.importorskip("pinocchio")
    import os

    m, q0 = _arm("panda")
    tr = simulate(m, q0, np.zeros(m.nv), None, 10.0, record_every=100)
    root = models.example_robot_data_dir()
    urdf = [os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs if f == "panda.urdf"]
    pm = pin.buildModelFromUrdf(urdf[0])
    # the same joints in the same order; Pinocchio has the mimic finger as a joint of its own
    assert m.mimic_joints == ("panda_finger_joint2",) and pm.nq == m.nq + 1
    pd = pm.createData()
    Q = np.c_[tr.q, tr.q[:, -1]]  # panda_finger_joint2 mimics panda_finger_joint1 (x 1, + 0)
    V = np.c_[tr.v, tr.v[:, -1]]
    T = np.array([pin.computeKineticEnergy(pm, pd, q, v) for q, v in zip(Q, V)])
    E = T + np.array([pin.computePotentialEnergy(pm, pd, q) for q in Q])
    assert T.max() > 1.0  # it fell
    assert np.abs(E - E[0]).max() / T.max() < 1e-3


def test_constant_torque_is_conservative_on_vector_space_joints():
    m, q0 = _arm("arm7")
    tau = np.linspace(-2.0, 2.0, m.nv)
    with warnings.catch_warnings():
        warnings.simplefilter("error", EnergyDriftWarning)
        tr = simulate(m, q0, np.zeros(m.nv), tau, 2.0, record_every=10)
    assert drift(m, tr, lambda q: -tau @ (q - q0)) < 1e-4
    assert tr.meta["energy_error"] < 1e-4
    with pytest.warns(EnergyDriftWarning):  # the same input, too coarse a step
        simulate(m, q0, np.zeros(m.nv), tau, 1.0, 2.5e-4, integrator="euler")


class Spring:
    """Joint springs ``τ = −K (q − q_s)``: conservative, ``V = ½ (q − q_s)ᵀ K (q − q_s)``."""

    def __init__(self, k, qs):
        self.k, self.qs = k, qs

    def __call__(self, t, q, v):
        return -self.k * (q - self.qs)

    def potential(self, q):
        return 0.5 * self.k * np.sum((q - self.qs) ** 2)


def test_controller_with_a_potential_is_monitored():
    m, q0 = _arm("two_link_arm")
    sp = Spring(50.0, q0 + 0.5)
    tr = simulate(m, q0, np.zeros(m.nv), sp, 2.0, record_every=5)
    assert "energy_error" in tr.meta and tr.meta["energy_error"] < 1e-6
    assert drift(m, tr, sp.potential) < 1e-6
    with pytest.warns(EnergyDriftWarning, match="'euler'"):
        simulate(m, q0, np.zeros(m.nv), sp, 2.0, 2e-2, integrator="euler", substeps=1)


def test_monitor_off_for_unknown_controllers_and_refused_when_asked():
    m, q0 = _arm("two_link_arm")
    pd = dqdyn.simulation.JointPD(m, q0 + 0.1)
    tr = simulate(m, q0, np.zeros(m.nv), pd, 0.05)
    assert "energy_error" not in tr.meta  # a damped controller: no energy balance to check
    with pytest.raises(DqdynError, match="monitor"):
        simulate(m, q0, np.zeros(m.nv), pd, 0.05, monitor="warn")
    z = np.zeros(m.nv)
    with pytest.raises(DqdynError, match="monitor"):
        simulate(m, q0, z, None, 0.01, monitor="loud")
    with pytest.raises(DqdynError, match="energy_tolerance"):
        simulate(m, q0, z, None, 0.01, energy_tolerance=-1.0)
    with pytest.raises(DqdynError, match="monitor_every"):
        simulate(m, q0, z, None, 0.01, monitor_every=0)
    with pytest.raises(DqdynError, match="substeps"):
        simulate(m, q0, z, None, 0.01, substeps=0)
    tr = simulate(m, q0, z, None, 0.01, monitor="off")
    assert "energy_error" not in tr.meta


def test_constraint_drift_is_reported():
    from dqdyn.constraints import four_bar
    from dqdyn.constraints.dynamics import constraint_errors

    m, cons, q0 = four_bar()
    with pytest.warns(EnergyDriftWarning) as rec:
        tr = simulate(m, q0, np.zeros(m.nv), None, 1.0, 1e-2, constraints=cons, project=False,
                      integrator="euler", substeps=1)
    msgs = [str(w.message) for w in rec if issubclass(w.category, EnergyDriftWarning)]
    assert any("constraints of 'four_bar'" in s and "project=True" in s for s in msgs), msgs
    assert max(constraint_errors(m, q, v, cons)[0] for q, v in zip(tr.q, tr.v)) > 1e-6
    with warnings.catch_warnings():  # projected (the default): on the constraint manifold
        warnings.simplefilter("error", EnergyDriftWarning)
        tr = simulate(m, q0, np.zeros(m.nv), None, 0.3, 2e-3, constraints=cons)
    assert tr.meta["constraint_error"] < 1e-6


def test_automatic_substeps_resolve_a_fast_spin():
    """A two-link arm thrown at 300 rad/s: with substeps="auto" each step turns the joints by at
    most 0.05 rad; the result matches a fine fixed-step reference (oracle) where one step per
    dt does not."""
    m = dqdyn.load_example("two_link_arm", gravity=(0, 0, 0))
    q0, v0 = np.array([0.1, 0.2]), np.array([300.0, -280.0])
    ref = simulate(m, q0, v0, None, 0.05, 1e-5, substeps=1, record_every=100)
    auto = simulate(m, q0, v0, None, 0.05, 1e-3)
    one = simulate(m, q0, v0, None, 0.05, 1e-3, substeps=1, monitor="off")
    assert auto.meta["steps"] > 5 * 50
    err = lambda tr: np.abs(dqdyn.difference(m, ref.q[-1], tr.q[-1])).max()  # noqa: E731
    assert err(auto) < 1e-2 * err(one)
