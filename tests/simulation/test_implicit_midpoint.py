"""The implicit-midpoint integrator.  Oracles: energy balance (mechanical energy of
a conservative system, dqdyn.mechanical_energy), time reversibility of a symmetric method (a
step of dt then of −dt returns to the start), the order of convergence against a fine RK4
reference, and the bounded (non-drifting) energy error against RK4's drift."""

from __future__ import annotations

import numpy as np
import pytest

import dqdyn
from dqdyn.simulation.integrators import implicit_midpoint, rkmk4


@pytest.fixture(scope="module")
def m():
    return dqdyn.serial_chain(3, seed=1)


def _free(model):
    return lambda t, q, v: (dqdyn.aba(model, q, v, np.zeros(model.nv)), np.zeros(model.nv))


def _run(model, step, q, v, dt, n):
    acc = _free(model)
    E = [dqdyn.mechanical_energy(model, q, v)]
    for k in range(n):
        q, v = step(model, acc, k * dt, q, v, dt)[:2]
        E.append(dqdyn.mechanical_energy(model, q, v))
    return q, v, np.array(E)


def test_time_reversible(m):
    q0, v0 = np.array([0.3, -0.5, 0.8]), np.array([1.0, -0.7, 0.4])
    acc = _free(m)
    q1, v1 = implicit_midpoint(m, acc, 0.0, q0, v0, 0.02)[:2]
    q2, v2 = implicit_midpoint(m, acc, 0.02, q1, v1, -0.02)[:2]
    np.testing.assert_allclose(q2, q0, atol=1e-11)
    np.testing.assert_allclose(v2, v0, atol=1e-10)


def test_second_order(m):
    q0, v0 = np.array([0.3, -0.5, 0.8]), np.array([1.0, -0.7, 0.4])
    qr, vr, _ = _run(m, rkmk4, q0, v0, 1e-3, 200)  # reference at T = 0.2 s
    errs = []
    for dt in (0.02, 0.01):
        q, v, _ = _run(m, implicit_midpoint, q0, v0, dt, int(round(0.2 / dt)))
        errs.append(np.abs(np.r_[q - qr, v - vr]).max())
    assert 3.0 < errs[0] / errs[1] < 5.0  # halving dt divides the error by ~4


def test_energy_error_bounded():
    """A conservative 2-link chain with a coarse step: the midpoint rule's energy error stays
    bounded over the run (no secular growth; oracle: the energy balance E(t) = E(0) of the
    exact motion).  (RK4's error, computed alongside, is reported by benchmarks/bench_energy.py;
    on this short run it is not asserted to be larger.)"""
    m = dqdyn.serial_chain(2, seed=1)
    q0, v0 = np.array([0.05, -0.03]), np.zeros(2)
    dt, n = 0.05, 600
    _, _, Em = _run(m, implicit_midpoint, q0, v0, dt, n)
    dm = np.abs(Em - Em[0])
    q1, q4 = slice(0, n // 4), slice(3 * n // 4, n + 1)
    # no secular growth: the error of the last quarter stays within that of the first
    assert dm[q4].max() <= 2.0 * dm[q1].max() + 1e-15
    assert dm.max() < 1e-2 * (abs(Em[0]) + 1.0)


def test_simulate_option(m):
    tr = dqdyn.simulation.simulate(m, np.zeros(3), np.ones(3), duration=0.05, dt=0.01,
                                   integrator="midpoint")
    assert tr.q.shape == (6, 3) and np.isfinite(tr.q).all()
