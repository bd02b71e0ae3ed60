"""Batched `mass_matrix` on blocks of states (`dqdyn.dynamics.lanes_crba`): the same bits as the
single-state CRBA kernel, state by state (``array_equal``: the lanes evaluate its expressions in
its order and accumulate ``M`` in its order), on a 7-DoF arm (the Panda), random trees of
revolute, prismatic and helical joints, prismatic and helical chains, floating bases (ANYmal,
Solo-12, free joints anywhere in a tree), armature, and the per-state route of a model with
mimic joints; and Pinocchio's ``crba`` (symmetrised) within 1e-12 relative."""

from __future__ import annotations

import numpy as np
import pytest
from lanemodels import LANE_TYPES, MODELS
from lanemodels import model as _model
from lanemodels import robot as _robot

import dqdyn
from dqdyn._engine.batching import SERIAL_WORK, run_chunked
from dqdyn.dynamics import lagrange
from dqdyn.dynamics.lanes import LANES
from dqdyn.dynamics.lanes_crba import crba_lanes_batch, lanes_crba_support
from dqdyn.errors import NonFiniteError, NotUnitError

from pinconv import pin, q_to_pin, v_transform

SIZES = [1, LANES - 1, LANES, LANES + 1, 1000]


def _rel(x, y):
    return np.abs(np.asarray(x) - np.asarray(y)).max() / max(1.0, np.abs(y).max())


def _configs(m, n, seed):
    return np.ascontiguousarray(dqdyn.random_configuration(m, size=n, seed=seed))


def _run(kernel, m, Q):
    out = np.empty((len(Q), m.nv, m.nv))
    run_chunked(kernel, (m.mi, m.mf), [Q], [out], len(Q), (), lagrange._raiser(m, (len(Q),)))
    return out


def _lanes(m, Q):
    """The lane kernel itself through `run_chunked` (its serial twin for a small batch, the
    parallel kernel for a large one), for every batch size (``dqdyn.mass_matrix`` takes it from
    ``LANES`` states on)."""
    return _run(crba_lanes_batch, m, Q)


def _per_state(m, Q):
    """The per-state batch kernel (`lagrange.crba_batch`, the route before the lanes)."""
    return _run(lagrange.crba_batch, m, Q)


def _singles(m, Q):
    """One `dqdyn.mass_matrix` call per state (the single-state kernel)."""
    return np.stack([dqdyn.mass_matrix(m, Q[k]) for k in range(len(Q))])


@pytest.fixture(scope="module", params=MODELS)
def model(request):
    return (request.param, *_model(request.param))


def test_support():
    assert lanes_crba_support(dqdyn.serial_chain(4))
    assert lanes_crba_support(dqdyn.random_tree(12, LANE_TYPES + ("free",), seed=0))
    assert not lanes_crba_support(dqdyn.random_tree(6, ("revolute", "spherical"), seed=0))
    m, _ = _robot("panda")
    assert m.mimic_joints and not lanes_crba_support(m)


@pytest.mark.parametrize("n", SIZES)
def test_bits_equal_single_states(model, n):
    name, m, _ = model
    assert lanes_crba_support(m)
    Q = _configs(m, n, seed=n)
    ref = _singles(m, Q)
    np.testing.assert_array_equal(_lanes(m, Q), ref)
    np.testing.assert_array_equal(dqdyn.mass_matrix(m, Q), ref)  # (the public batch route)
    if n == 1000:
        assert n * (m.nbodies + 1) > SERIAL_WORK  # (the parallel kernel, not its serial twin)
        np.testing.assert_array_equal(_per_state(m, Q), ref)


def test_public_route_takes_the_lanes(model, monkeypatch):
    """``dqdyn.mass_matrix`` of ``LANES`` states or more runs `crba_lanes_batch`, fewer do not; ``out=`` and a batch shape of two axes are kept."""
    name, m, _ = model
    seen = []
    real = lagrange.run_chunked

    def spy(kernel, *args):
        seen.append(kernel)
        return real(kernel, *args)

    monkeypatch.setattr(lagrange, "run_chunked", spy)
    Q = _configs(m, 2 * LANES, seed=3)
    out = np.empty((2, LANES, m.nv, m.nv))
    r = dqdyn.mass_matrix(m, Q.reshape(2, LANES, m.nq), out=out)
    assert np.shares_memory(r, out) and r.shape == out.shape and seen == [crba_lanes_batch]
    np.testing.assert_array_equal(out.reshape(-1, m.nv, m.nv), _singles(m, Q))
    dqdyn.mass_matrix(m, Q[: LANES - 1])  # (the gate's loop, or the per-state batch kernel)
    assert crba_lanes_batch not in seen[1:]


def test_matches_pinocchio(model):
    """``Tᵀ M_pin T`` (``T`` maps dqdyn's velocity layout to Pinocchio's) within 1e-12 of the
    largest entry."""
    name, m, pm = model
    pd = pm.createData()
    Q = _configs(m, LANES + 3, seed=7)
    out = dqdyn.mass_matrix(m, Q)
    for k in range(len(Q)):
        Mp = pin.crba(pm, pd, q_to_pin(m, pm, Q[k]))
        Mp = np.triu(Mp) + np.triu(Mp, 1).T
        T = v_transform(m, pm, Q[k])
        assert _rel(out[k], T.T @ Mp @ T) < 1e-12, (name, k)


def test_armature_on_the_diagonal():
    t = dqdyn.random_tree(12, LANE_TYPES, seed=2)
    r = np.random.default_rng(6).uniform(0.05, 3.0, t.nv)
    m = t.with_armature(r)
    Q = _configs(m, LANES + 7, seed=6)
    d = dqdyn.mass_matrix(m, Q) - dqdyn.mass_matrix(t, Q)
    np.testing.assert_allclose(d, np.broadcast_to(np.diag(r), d.shape), atol=1e-12)


@pytest.mark.parametrize("n", [LANES, 1000])
def test_mimic_batches_equal_single_states(n):
    """A model with a mimic joint (the Panda's finger) keeps the per-state kernel: batch and
    single states give the same bits."""
    m, _ = _robot("panda")
    Q = _configs(m, n, seed=8)
    np.testing.assert_array_equal(dqdyn.mass_matrix(m, Q), _singles(m, Q))


# ----------------------------------------------------------------------------- bad input
def test_non_finite_q_names_the_batch_element():
    m = dqdyn.serial_chain(5)
    Q = _configs(m, 2 * LANES + 1, seed=10)
    Q[LANES + 2, 1] = np.nan
    with pytest.raises(NonFiniteError, match=rf"q.*batch element {LANES + 2}\b") as lanes:
        dqdyn.mass_matrix(m, Q)
    with pytest.raises(NonFiniteError) as per_state:
        _per_state(m, Q)
    assert str(lanes.value) == str(per_state.value)


def test_bad_base_pose_raises_as_the_per_state_path():
    m, _ = _model("free0")
    Q = _configs(m, 2 * LANES + 1, seed=11)
    k = LANES + 2
    Q[k, m.q_slice(m.joint_names_all[3])] *= 1.5  # (body 3's free joint, off the unit sphere)
    with pytest.raises(NotUnitError, match=rf"batch element {k}\b") as lanes:
        dqdyn.mass_matrix(m, Q)
    with pytest.raises(NotUnitError) as per_state:
        _per_state(m, Q)
    assert str(lanes.value) == str(per_state.value)
