"""Batched `aba` on blocks of states (`dqdyn.dynamics.lanes_aba`): the same bits as the
single-state kernel, state by state (``array_equal``: the lanes evaluate its expressions in its
order), on a 7-DoF arm (the Panda), random trees of revolute, prismatic and helical joints,
prismatic and helical chains, floating bases (ANYmal, Solo-12, free joints anywhere in a tree),
armature, and the batch route of a model with mimic joints; and Pinocchio's ``aba``
[Kim2012, Table 3] within 1e-12 relative."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from lanemodels import LANE_TYPES, MODELS
from lanemodels import model as _model
from lanemodels import robot as _robot

import dqdyn
from dqdyn._engine.batching import SERIAL_WORK, run_chunked
from dqdyn.dynamics import aba as aba_module
from dqdyn.dynamics.articulated import _raise
from dqdyn.dynamics.lanes import LANES
from dqdyn.dynamics.lanes_aba import aba_lanes_batch, lanes_aba_support
from dqdyn.errors import NonFiniteError, NotUnitError, SingularError
from dqdyn.multibody.builders import ModelBuilder

from pinconv import ROBOTS, erd, pin, q_to_pin, tdot_v, v_transform

SIZES = [1, LANES - 1, LANES, LANES + 1, 1000]


def _rel(x, y):
    return np.abs(np.asarray(x) - np.asarray(y)).max() / max(1.0, np.abs(y).max())


def _batch(m, n, seed):
    rng = np.random.default_rng(seed)
    Q = dqdyn.random_configuration(m, size=n, seed=seed)
    return np.ascontiguousarray(Q), rng.normal(size=(n, m.nv)), 3.0 * rng.normal(size=(n, m.nv))


def _lanes(m, Q, V, T):
    """The lane kernel itself through `run_chunked` (its serial twin for a small batch, the
    parallel kernel for a large one), for every batch size (``dqdyn.aba`` takes it from
    ``LANES`` states on)."""
    out = np.empty((len(Q), m.nv))
    run_chunked(aba_lanes_batch, (m.mi, m.mf), [Q, V, T], [out], len(Q), (1, 2),
                lambda st, row: _raise(m, st, row))
    return out


def _per_state(m, Q, V, T):
    """The per-state batch kernel (`aba.aba_batch`, the route before the lanes)."""
    out = np.empty((len(Q), m.nv))
    run_chunked(aba_module.aba_batch, (m.mi, m.mf), [Q, V, T], [out], len(Q), (),
                lambda st, row: _raise(m, st, row))
    return out


def _singles(m, Q, V, T):
    """One `dqdyn.aba` call per state (the single-state kernel)."""
    return np.stack([dqdyn.aba(m, Q[k], V[k if len(V) > 1 else 0], T[k if len(T) > 1 else 0])
                     for k in range(len(Q))])


@pytest.fixture(scope="module", params=MODELS)
def model(request):
    return (request.param, *_model(request.param))


def test_support():
    assert lanes_aba_support(dqdyn.serial_chain(4))
    assert lanes_aba_support(dqdyn.random_tree(12, LANE_TYPES + ("free",), seed=0))
    assert not lanes_aba_support(dqdyn.random_tree(6, ("revolute", "spherical"), seed=0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        panda = dqdyn.load_urdf(erd(ROBOTS["panda"][0]))
    assert panda.mimic_joints and not lanes_aba_support(panda)  # (the reduced system instead)


@pytest.mark.parametrize("n", SIZES)
def test_bits_equal_single_states(model, n):
    name, m, _ = model
    assert lanes_aba_support(m)
    Q, V, T = _batch(m, n, seed=n)
    ref = _singles(m, Q, V, T)
    np.testing.assert_array_equal(_lanes(m, Q, V, T), ref)
    np.testing.assert_array_equal(dqdyn.aba(m, Q, V, T), ref)  # (the public batch route)
    if n == 1000:
        assert n * (m.nbodies + 1) > SERIAL_WORK  # (the parallel kernel, not its serial twin)
        np.testing.assert_array_equal(_per_state(m, Q, V, T), ref)


def test_shared_rows(model):
    """``V`` / ``τ`` of one row are shared by every state (the kernel broadcasts them)."""
    name, m, _ = model
    Q, V, T = _batch(m, 2 * LANES + 3, seed=5)
    ref = _singles(m, Q, V[:1], T[:1])
    np.testing.assert_array_equal(_lanes(m, Q, V[:1].copy(), T[:1].copy()), ref)
    np.testing.assert_array_equal(dqdyn.aba(m, Q, V[0], T[0]), ref)


def test_matches_pinocchio(model):
    """Within 1e-12 of the largest entry (at most 1.6e-15 measured on these states); the random
    trees with free joints inside the tree, whose ``M`` reaches a condition number of 2e4, within
    ``cond(M) · ε`` (up to 2e-12 measured), the accuracy of a backward-stable solve."""
    name, m, pm = model
    pd = pm.createData()
    Q, V, T = _batch(m, LANES + 3, seed=7)
    out = dqdyn.aba(m, Q, V, T)
    for k in range(len(Q)):
        Tk = v_transform(m, pm, Q[k])
        ap = pin.aba(pm, pd, q_to_pin(m, pm, Q[k]), Tk @ V[k], np.linalg.solve(Tk.T, T[k]))
        tol = 1e-12
        if name.startswith("free"):
            tol = max(tol, np.linalg.cond(dqdyn.mass_matrix(m, Q[k])) * np.finfo(float).eps)
        assert _rel(Tk @ out[k] + tdot_v(m, pm, Q[k], V[k]), ap) < tol, (name, k)


def test_armature_adds_to_each_pivot():
    """With armature ``r``, ``q̈`` solves ``(M + diag r) q̈ = τ − h`` (`rnea` with armature)."""
    t = dqdyn.random_tree(12, LANE_TYPES, seed=2)
    m = t.with_armature(np.random.default_rng(6).uniform(0.05, 3.0, t.nv))
    Q, V, T = _batch(m, LANES + 7, seed=6)
    qdd = dqdyn.aba(m, Q, V, T)
    np.testing.assert_allclose(dqdyn.rnea(m, Q, V, qdd), T, rtol=1e-10, atol=1e-10)
    assert not np.allclose(qdd, dqdyn.aba(t, Q, V, T))


@pytest.mark.parametrize("n", [LANES, 1000])
def test_mimic_batches_equal_single_states(n):
    """A model with a mimic joint (the Panda's finger) takes the reduced system, whose ``h``
    runs in `rnea`'s lanes: batch and single states give the same bits."""
    m, _ = _robot("panda")
    assert m.mimic_joints
    Q, V, T = _batch(m, n, seed=8)
    np.testing.assert_array_equal(dqdyn.aba(m, Q, V, T), _singles(m, Q, V, T))


# ----------------------------------------------------------------------------- bad input
@pytest.mark.parametrize("which, name", [(0, "q"), (1, "v"), (2, "tau")])
def test_non_finite_input_names_the_batch_element(which, name):
    m = dqdyn.serial_chain(5)
    arrays = list(_batch(m, 2 * LANES + 1, seed=10))
    arrays[which][LANES + 2, 1] = np.nan
    with pytest.raises(NonFiniteError, match=rf"{name}.*batch element {LANES + 2}\b") as lanes:
        dqdyn.aba(m, *arrays)
    with pytest.raises(NonFiniteError) as per_state:
        _per_state(m, *arrays)
    assert str(lanes.value) == str(per_state.value)


def test_bad_base_pose_raises_as_the_per_state_path():
    m, _ = _model("free0")
    Q, V, T = _batch(m, 2 * LANES + 1, seed=11)
    k = LANES + 2
    Q[k, m.q_slice(m.joint_names_all[3])] *= 1.5  # (body 3's free joint, off the unit sphere)
    with pytest.raises(NotUnitError, match=rf"batch element {k}\b") as lanes:
        dqdyn.aba(m, Q, V, T)
    with pytest.raises(NotUnitError) as per_state:
        _per_state(m, Q, V, T)
    assert str(lanes.value) == str(per_state.value)


@pytest.mark.parametrize("joint", ["revolute", "free"])
def test_singular_joint_names_it_and_the_batch_element(joint):
    """A joint that moves no mass: the per-state kernel's error (the first singular joint from
    the leaves), naming the joint and the batch element."""
    b = ModelBuilder("massless")
    b.add_body("a", "world", "revolute", axis=[0, 0, 1], mass=1.0, inertia=0.1 * np.eye(3),
               com=[0.2, 0, 0])
    b.add_body("b", "a", joint, axis=[0, 1, 0], mass=0.0, inertia=np.zeros((3, 3)),
               joint_name="massless")
    m = b.build()
    Q, V, T = _batch(m, 2 * LANES + 1, seed=12)
    with pytest.raises(SingularError, match=r"'massless'.*batch element 0\b") as lanes:
        dqdyn.aba(m, Q, V, T)
    with pytest.raises(SingularError) as per_state:
        _per_state(m, Q, V, T)
    assert str(lanes.value) == str(per_state.value)
