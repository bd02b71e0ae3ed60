"""Precision far from the world origin: a floating-base robot moved by d = 0 … 10⁷ m (a mobile
robot on a large map, a vehicle, a spacecraft) must give the same dynamics.  Every quantity
below is invariant under that translation, so the oracle is the same call at d = 0; the
world-frame algorithms (CRBA, Coriolis, M⁻¹, the analytic derivatives) run their sweeps at the
root body's origin, so they keep 1e-12 relative instead of losing accuracy with d²."""

import numpy as np
import pytest

import dqdyn
from dqdyn.algebra.dualquat import translation
from dqdyn.algebra.rotations import pose_from_rt

DISTANCES = [0.0, 1e3, 1e6, 1e7]


@pytest.fixture(scope="module")
def floating():
    m = dqdyn.load_bundled("jaco6", root_joint="free")
    rng = np.random.default_rng(7)
    q = dqdyn.random_configuration(m, seed=rng)
    return m, q, rng.normal(size=m.nv), rng.normal(size=m.nv)


def _moved(m, q, d):
    """``q`` with the free root joint's position moved by ``d`` metres."""
    s = m.q_slice(m.joint_names_all[1])
    x = q[s]
    q2 = q.copy()
    q2[s] = pose_from_rt(x[:4], translation(x) + d * np.array([1.0, -2.0, 0.5]) / np.sqrt(5.25))
    return q2


CALLS = {
    "rnea": lambda m, q, v, a: dqdyn.rnea(m, q, v, a),
    "aba": lambda m, q, v, a: dqdyn.aba(m, q, v, a),
    "mass_matrix": lambda m, q, v, a: dqdyn.mass_matrix(m, q),
    "mass_matrix (batch)": lambda m, q, v, a: dqdyn.mass_matrix(m, np.stack([q, q]))[1],
    "coriolis_matrix": lambda m, q, v, a: dqdyn.coriolis_matrix(m, q, v),
    "gravity": lambda m, q, v, a: dqdyn.gravity(m, q),
    "nonlinear_effects": lambda m, q, v, a: dqdyn.nonlinear_effects(m, q, v),
    "mass_matrix_inverse": lambda m, q, v, a: dqdyn.mass_matrix_inverse(m, q),
    "solve_mass_matrix": lambda m, q, v, a: dqdyn.solve_mass_matrix(m, q, a),
    "rnea_derivatives": lambda m, q, v, a: np.concatenate(dqdyn.rnea_derivatives(m, q, v, a)),
    "aba_derivatives": lambda m, q, v, a: np.concatenate(dqdyn.aba_derivatives(m, q, v, a)),
    "joint_torque_regressor": lambda m, q, v, a: dqdyn.joint_torque_regressor(m, q, v, a),
    "twist_jacobian (body)": lambda m, q, v, a: dqdyn.twist_jacobian(m, q, m.frame_names[-1], "body"),
    "kinetic_energy": lambda m, q, v, a: np.atleast_1d(dqdyn.kinetic_energy(m, q, v)),
    "hybrid_dynamics": lambda m, q, v, a: np.concatenate(
        dqdyn.hybrid_dynamics(m, q, v, a, a, np.arange(m.nv) % 2 == 0)),
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_translation_invariant_quantities_keep_1e12_far_from_the_origin(floating, name):
    m, q, v, a = floating
    ref = CALLS[name](m, q, v, a)
    scale = np.abs(ref).max()
    for d in DISTANCES[1:]:
        got = CALLS[name](m, _moved(m, q, d), v, a)
        err = np.abs(got - ref).max() / scale
        assert err < 1e-12, f"{name} at {d:g} m: relative error {err:.2e}"
