"""The classic 3-vector Newton–Euler (rtNE route) against dqdyn's dqNE and ABA, and Pinocchio."""

import numpy as np
import pytest

import dqdyn
from dqdyn.dynamics.classic import classic_forward_dynamics, classic_newton_euler
from dqdyn.errors import ModelError

from pinconv import pin, pin_from_model, q_to_pin, v_transform


def test_classic_ne_equals_rnea_and_pinocchio_on_a_tree_batch():
    m = dqdyn.random_tree(15, seed=5, joint_types=("revolute", "prismatic"))
    rng = np.random.default_rng(0)
    Q = np.stack([dqdyn.random_configuration(m, seed=rng) for _ in range(4)])
    V, A = rng.normal(size=(2, 4, m.nv))
    tau = classic_newton_euler(m, Q, V, A)
    np.testing.assert_allclose(tau, dqdyn.rnea(m, Q, V, A), atol=1e-10 * np.abs(tau).max())
    pm = pin_from_model(m)[0]
    T = v_transform(m, pm, Q[1])
    ref = T.T @ pin.rnea(pm, pm.createData(), q_to_pin(m, pm, Q[1]), T @ V[1], T @ A[1])
    np.testing.assert_allclose(tau[1], ref, atol=1e-10 * np.abs(ref).max())


def test_classic_forward_dynamics_equals_aba():
    m = dqdyn.random_tree(8, seed=6, branching=0.0, joint_types=("revolute", "prismatic"))
    rng = np.random.default_rng(1)
    q, v, t = rng.normal(size=(3, 3, m.nv))
    np.testing.assert_allclose(classic_forward_dynamics(m, q, v, t), dqdyn.aba(m, q, v, t),
                               atol=1e-9)


def test_classic_rejects_other_joints():
    with pytest.raises(ModelError, match="spherical"):
        m = dqdyn.random_tree(3, ("spherical",), seed=1)
        classic_newton_euler(m, dqdyn.random_configuration(m), np.zeros(m.nv), np.zeros(m.nv))
