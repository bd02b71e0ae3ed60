"""Energies against Pinocchio, and the energy balance of zero-torque simulations with RK4 on
``aba`` (issue: 10 s drift below 1e-6 relative)."""

import numpy as np
import pytest

import dqdyn
from dqdyn.dynamics.energy import center_of_mass, kinetic_energy, potential_energy
from dqdyn.dynamics.forward import aba

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
    """Runge–Kutta–Munthe-Kaas of order 4 on the configuration manifold (q advanced with
    dqdyn.integrate; the bracket corrections keep free and spherical joints 4th order — without
    them the scheme is only 2nd order on a non-commutative group)."""
    tau = np.zeros(m.nv)

    def br(x, y):
        return dqdyn.tangent_bracket(m, x, y)

    for _ in range(steps):
        k1, K1 = dt * v, dt * aba(m, q, v, tau)
        v2 = v + K1 / 2
        k2, K2 = dt * v2, dt * aba(m, dqdyn.integrate(m, q, k1 / 2), v2, tau)
        v3 = v + K2 / 2
        k3, K3 = dt * v3, dt * aba(m, dqdyn.integrate(m, q, k2 / 2 + br(k1, k2) / 8), v3, tau)
        v4 = v + K3
        k4, K4 = dt * v4, dt * aba(m, dqdyn.integrate(m, q, k3), v4, tau)
        q = dqdyn.integrate(m, q, (k1 + 2 * k2 + 2 * k3 + k4) / 6 + br(k1, k4) / 12)
        v = v + (K1 + 2 * K2 + 2 * K3 + K4) / 6
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


def test_zero_torque_energy_drift_talos_free_root():
    from pinconv import ROBOTS, erd

    load_urdf = pytest.importorskip("dqdyn.parsers.urdf").load_urdf
    rel, root = ROBOTS["talos"]
    m = load_urdf(erd(rel), root_joint="free", mimic="independent")
    rng = np.random.default_rng(1)
    q = dqdyn.random_configuration(m, seed=rng)
    v = rng.normal(size=m.nv) * 0.3
    E0 = kinetic_energy(m, q, v) + potential_energy(m, q)
    q1, v1 = rk4(m, q, v, 1e-3, 10_000)  # 10 s
    E1 = kinetic_energy(m, q1, v1) + potential_energy(m, q1)
    scale = abs(E0) + kinetic_energy(m, q, v)
    assert abs(E1 - E0) / scale < 1e-6
    # the free joint's dual quaternion stayed unit
    s = m.q_slice("root_joint")
    x = q1[s]
    assert abs(np.linalg.norm(x[:4]) - 1) < 1e-12 and abs(x[:4] @ x[4:]) < 1e-12
