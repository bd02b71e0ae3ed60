"""Batched `rnea` on blocks of states (`dqdyn.dynamics.lanes`): the same bits as the
single-state kernel, state by state (``array_equal``: the lanes evaluate its expressions in its
order), and Pinocchio's ``rnea`` on random trees and on the Panda (mimic finger) within 1e-10,
as the single-state tests of ``test_inverse_dynamics.py``."""

from __future__ import annotations

import numpy as np
import pytest

import dqdyn
from dqdyn._engine.batching import SERIAL_WORK
from dqdyn.dynamics import newton_euler as ne
from dqdyn.dynamics.lanes import LANES, lanes_support, rnea_lanes
from dqdyn.errors import NonFiniteError

from pinconv import erd, pin, pin_from_model, pin_from_urdf, q_to_pin, tdot_v, v_transform

LANE_TYPES = ("revolute", "prismatic", "helical")


def _rel(x, y):
    return np.abs(np.asarray(x) - np.asarray(y)).max() / max(1.0, np.abs(y).max())


def _batch(m, n, seed):
    rng = np.random.default_rng(seed)
    Q = dqdyn.random_configuration(m, size=n, seed=seed)
    return np.ascontiguousarray(Q), rng.normal(size=(n, m.nv)), rng.normal(size=(n, m.nv))


def _ne_core(m, Q, V, A):
    """The single-state kernel ``ne_core`` state by state (the serial loop of the per-state
    batch kernel), which reads ``V`` / ``A`` of one row as shared and of no columns as zero."""
    out, st = np.empty((len(Q), m.nv)), np.zeros(len(Q), dtype=np.int64)
    ne.rnea_batch.serial(m.mi, m.mf, m.gravity, Q, V, A, np.empty((1, 0, 6)), out, st)
    assert not st.any()
    return out


def _singles(m, Q, V, A):
    """One `dqdyn.rnea` call per state (the single-state kernel, through the call gate)."""
    return np.stack([dqdyn.rnea(m, Q[k], V[k if len(V) > 1 else 0], A[k if len(A) > 1 else 0])
                     for k in range(len(Q))])


@pytest.fixture(scope="module", params=[0, 1, 2])
def tree(request):
    return dqdyn.random_tree(12, LANE_TYPES, seed=request.param)


def _panda():
    import warnings

    path = erd("panda_description/urdf/panda.urdf")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return dqdyn.load_urdf(path), pin_from_urdf(path, None)


def test_support_is_the_fixed_base_joint_kinds():
    assert lanes_support(dqdyn.serial_chain(4))
    assert lanes_support(dqdyn.serial_chain(4, "prismatic"))
    assert lanes_support(dqdyn.random_tree(12, LANE_TYPES, seed=0))
    assert not lanes_support(dqdyn.random_tree(12, seed=0))  # every joint type
    assert not lanes_support(dqdyn.random_tree(6, ("revolute", "free"), seed=0))


@pytest.mark.parametrize("n", [1, 5, LANES, LANES + 1, 3 * LANES - 1])
def test_bits_equal_single_states(tree, n):
    m = tree
    Q, V, A = _batch(m, n, seed=n)
    out = rnea_lanes(m, Q, V, A, np.empty((n, m.nv)))
    np.testing.assert_array_equal(out, _singles(m, Q, V, A))


def test_bits_equal_single_states_in_parallel_with_mimic():
    """A batch large enough for the thread pool, on a model with a mimic joint (the Panda's
    finger), against the single-state kernel."""
    m, _ = _panda()
    assert m.mimic_joints and lanes_support(m)
    n = SERIAL_WORK // (m.nbodies + 1) + 3 * LANES + 5
    Q, V, A = _batch(m, n, seed=3)
    out = rnea_lanes(m, Q, V, A, np.empty((n, m.nv)))
    np.testing.assert_array_equal(out, _singles(m, Q, V, A))


def test_shared_rows_zero_velocity_and_acceleration(tree):
    """``V`` / ``A`` of one row are shared by every state; with no columns they are zero
    (the ``nonlinear_effects`` / ``gravity`` forms of the recursion)."""
    m = tree
    Q, V, A = _batch(m, 2 * LANES + 3, seed=5)
    n = len(Q)
    out = rnea_lanes(m, Q, V[:1].copy(), A[:1].copy(), np.empty((n, m.nv)))
    np.testing.assert_array_equal(out, _singles(m, Q, V[:1], A[:1]))
    nle = rnea_lanes(m, Q, V, np.empty((1, 0)), np.empty((n, m.nv)))
    np.testing.assert_array_equal(nle, _ne_core(m, Q, V, np.empty((1, 0))))
    np.testing.assert_allclose(nle, np.stack([dqdyn.nonlinear_effects(m, q, v)
                                              for q, v in zip(Q, V)]), rtol=1e-13, atol=1e-12)
    g = rnea_lanes(m, Q, np.empty((1, 0)), np.empty((1, 0)), np.empty((n, m.nv)))
    np.testing.assert_array_equal(g, _ne_core(m, Q, np.empty((1, 0)), np.empty((1, 0))))
    np.testing.assert_allclose(g, np.stack([dqdyn.gravity(m, q) for q in Q]), rtol=1e-13,
                               atol=1e-12)


def test_armature(tree):
    m = tree.with_armature(np.random.default_rng(4).uniform(0.05, 3.0, tree.nv))
    Q, V, A = _batch(m, LANES + 7, seed=6)
    out = rnea_lanes(m, Q, V, A, np.empty((len(Q), m.nv)))
    np.testing.assert_array_equal(out, _singles(m, Q, V, A))
    plain = rnea_lanes(tree, Q, V, A, np.empty((len(Q), m.nv)))
    np.testing.assert_allclose(out - plain, A * m.armature, rtol=1e-12, atol=1e-12)


def test_trees_match_pinocchio():
    m = dqdyn.random_tree(12, ("revolute", "prismatic"), seed=7)
    pm = pin_from_model(m)[0]
    pd = pm.createData()
    Q, V, A = _batch(m, LANES + 3, seed=8)
    out = rnea_lanes(m, Q, V, A, np.empty((len(Q), m.nv)))
    for k in range(len(Q)):
        T = v_transform(m, pm, Q[k])
        ref = T.T @ pin.rnea(pm, pd, q_to_pin(m, pm, Q[k]), T @ V[k],
                             T @ A[k] + tdot_v(m, pm, Q[k], V[k]))
        assert _rel(out[k], ref) < 1e-10


def test_panda_matches_pinocchio():
    m, pm = _panda()
    pd = pm.createData()
    Q, V, A = _batch(m, LANES + 3, seed=9)
    out = rnea_lanes(m, Q, V, A, np.empty((len(Q), m.nv)))
    for k in range(len(Q)):
        T = v_transform(m, pm, Q[k])
        ref = T.T @ pin.rnea(pm, pd, q_to_pin(m, pm, Q[k]), T @ V[k],
                             T @ A[k] + tdot_v(m, pm, Q[k], V[k]))
        assert _rel(out[k], ref) < 1e-10


@pytest.mark.parametrize("which, name", [(0, "q"), (1, "v"), (2, "a")])
def test_non_finite_input_names_the_batch_element(which, name):
    m = dqdyn.serial_chain(5)
    arrays = list(_batch(m, 2 * LANES + 1, seed=10))
    arrays[which][LANES + 2, 1] = np.nan
    with pytest.raises(NonFiniteError, match=rf"{name}.*batch element {LANES + 2}\b"):
        rnea_lanes(m, *arrays, np.empty((2 * LANES + 1, m.nv)))
