"""Energies against Pinocchio, and the energy balance of zero-torque simulations with RK4 on
``aba`` (issue: 10 s drift below 1e-6 relative)."""

import numpy as np
import pytest

import dqdyn
from dqdyn.algorithms.energy import center_of_mass, kinetic_energy, potential_energy
from dqdyn.algorithms.forward import aba

from pinconv import pin, pin_from_model, q_to_pin, v_transform


@pytest.mark.parametrize("seed", [0, 1])
def test_energies_match_pinocchio(seed):
    m = dqdyn.random_tree(10, seed=seed)
    pm, _ = pin_from_model(m)
    pd = pm.createData()
    rng = np.random.default_rng(seed)
    q = dqdyn.random_configuration(m, seed=rng)
    v = rng.normal(size=m.nv)
    qp, vp = q_to_pin(m, pm, q), v_transform(m, pm, q) @ v
    assert kinetic_energy(m, q, v) == pytest.approx(pin.computeKineticEnergy(pm, pd, qp, vp), rel=1e-12)
    assert potential_energy(m, q) == pytest.approx(pin.computePotentialEnergy(pm, pd, qp), rel=1e-12, abs=1e-12)
    np.testing.assert_allclose(center_of_mass(m, q), pin.centerOfMass(pm, pd, qp), atol=1e-13)


def rk4(m, q, v, dt, steps):
    """Classical RK4 on the configuration manifold (q advanced with dqdyn.integrate)."""
    tau = np.zeros(m.nv)
    E = []
    for _ in range(steps):
        k1v = aba(m, q, v, tau)
        k1q = v
        q2 = dqdyn.integrate(m, q, k1q, dt / 2)
        v2 = v + dt / 2 * k1v
        k2v = aba(m, q2, v2, tau)
        q3 = dqdyn.integrate(m, q, v2, dt / 2)
        v3 = v + dt / 2 * k2v
        k3v = aba(m, q3, v3, tau)
        q4 = dqdyn.integrate(m, q, v3, dt)
        v4 = v + dt * k3v
        k4v = aba(m, q4, v4, tau)
        q = dqdyn.integrate(m, q, (v + 2 * v2 + 2 * v3 + v4) / 6, dt)
        v = v + dt / 6 * (k1v + 2 * k2v + 2 * k3v + k4v)
    return q, v


def test_zero_torque_energy_drift_7dof_arm():
    m = dqdyn.serial_chain(7, seed=3)
    rng = np.random.default_rng(0)
    q = dqdyn.random_configuration(m, seed=rng)
    v = rng.normal(size=m.nv) * 0.5
    E0 = kinetic_energy(m, q, v) + potential_energy(m, q)
    q1, v1 = rk4(m, q, v, 5e-4, 20_000)  # 10 s
    E1 = kinetic_energy(m, q1, v1) + potential_energy(m, q1)
    scale = abs(E0) + kinetic_energy(m, q, v)
    assert abs(E1 - E0) / scale < 1e-6
