"""Batched `forward_kinematics` on blocks of states (`dqdyn.kinematics.lanes_fk`): the same bits as
the single-state kernel, state by state (``array_equal``: the lanes evaluate the expressions of
`forward.local_pose` and `forward.dq_mul_tuple` in their order), on the lane test models
(`lanemodels`: a 7-DoF arm, random trees of revolute, prismatic and helical joints, prismatic and
helical chains, floating bases, free joints anywhere in a tree) and the Panda with its mimic
finger; the per-state route of a model with a spherical joint; the errors of a bad row as the
per-state route raises them; and Pinocchio's ``forwardKinematics`` within 1e-12."""

from __future__ import annotations

import numpy as np
import pytest
from lanemodels import MODELS
from lanemodels import model as _model
from lanemodels import robot as _robot

import dqdyn
from dqdyn.algebra.rotations import matrix_from_pose
from dqdyn.dynamics import lanes
from dqdyn.errors import NonFiniteError, NotUnitError
from dqdyn.kinematics import forward as K
from dqdyn.kinematics.lanes_fk import LANES, fk_lanes_batch, lanes_fk_support

from pinconv import pin, q_to_pin

SIZES = [1, LANES - 1, LANES, LANES + 1, 100]


def _configs(m, n, seed):
    return np.ascontiguousarray(dqdyn.random_configuration(m, size=n, seed=seed))


def _run(kernel, m, Q):
    X = np.full((len(Q), m.nbodies + 1, 8), np.nan)
    status = np.zeros(len(Q), dtype=np.int64)
    kernel(m.mi, m.mf, Q, X, status)
    assert not status.any()
    return X


def _singles(m, Q):
    """One `dqdyn.forward_kinematics` call per state (the single-state kernel)."""
    return np.stack([dqdyn.forward_kinematics(m, Q[k]) for k in range(len(Q))])


@pytest.fixture(scope="module", params=MODELS + ["panda_mimic"])
def model(request):
    if request.param == "panda_mimic":
        m, pm = _robot("panda")
        assert m.mimic_joints
        return request.param, m, pm
    return (request.param, *_model(request.param))


def test_support():
    for name in MODELS:  # (the joints of the dynamics' lanes)
        m = _model(name)[0]
        assert lanes_fk_support(m) == lanes.lanes_support(m)
    assert lanes_fk_support(dqdyn.serial_chain(4))
    assert lanes_fk_support(dqdyn.random_tree(12, ("revolute", "prismatic", "helical", "free"), seed=0))
    assert lanes_fk_support(_robot("panda")[0])  # (a mimic joint: scale and offset, as one state)
    assert not lanes_fk_support(dqdyn.random_tree(6, ("revolute", "spherical"), seed=0))
    assert not lanes_fk_support(dqdyn.random_tree(6, ("revolute", "planar"), seed=1))


@pytest.mark.parametrize("n", SIZES)
def test_bits_equal_single_states(model, n):
    """The lane kernel (parallel and its serial twin) and the public batch route give the bits of
    one single-state call per row."""
    name, m, _ = model
    assert lanes_fk_support(m)
    Q = _configs(m, n, seed=n)
    ref = _singles(m, Q)
    np.testing.assert_array_equal(_run(fk_lanes_batch, m, Q), ref)
    np.testing.assert_array_equal(_run(fk_lanes_batch.serial, m, Q), ref)
    if n > 1:
        np.testing.assert_array_equal(dqdyn.forward_kinematics(m, Q), ref)
    if n == 100:
        np.testing.assert_array_equal(_run(K.fk_batch, m, Q), ref)  # (the route before the lanes)


def test_signs_of_zero_equal_single_states():
    """``array_equal`` does not tell ``-0.0`` from ``0.0``: the sign bits too, on a chain at the
    zero configuration (where most products are zeros)."""
    for m in (dqdyn.serial_chain(6), _model("tree0")[0], _model("free1")[0]):
        Q = np.ascontiguousarray(np.broadcast_to(dqdyn.neutral(m), (LANES + 1, m.nq)))
        ref = _singles(m, Q)
        np.testing.assert_array_equal(np.signbit(dqdyn.forward_kinematics(m, Q)), np.signbit(ref))


def test_public_route_takes_the_lanes(model, monkeypatch):
    """`dqdyn.forward_kinematics` of ``LANES`` states or more runs `fk_lanes_batch`, fewer do not;
    ``out=`` and a batch shape of two axes are kept."""
    name, m, _ = model
    seen = []
    real = K.for_batch

    def spy(kernel, *args):
        seen.append(kernel)
        return real(kernel, *args)

    monkeypatch.setattr(K, "for_batch", spy)
    Q = _configs(m, 2 * LANES, seed=3)
    out = np.empty((2, LANES, m.nbodies + 1, 8))
    r = dqdyn.forward_kinematics(m, Q.reshape(2, LANES, m.nq), out=out)
    assert np.shares_memory(r, out) and r.shape == out.shape and seen == [fk_lanes_batch]
    np.testing.assert_array_equal(out.reshape(-1, m.nbodies + 1, 8), _singles(m, Q))
    dqdyn.forward_kinematics(m, Q[: LANES - 1])  # (the gate's loop, or the per-state batch kernel)
    assert fk_lanes_batch not in seen[1:]


@pytest.mark.parametrize("n", [LANES, 100])
def test_unsupported_model_keeps_the_per_state_kernel(n, monkeypatch):
    m = dqdyn.random_tree(10, ("revolute", "spherical", "planar"), seed=2)
    seen = []
    real = K.for_batch
    monkeypatch.setattr(K, "for_batch", lambda kernel, *a: seen.append(kernel) or real(kernel, *a))
    Q = _configs(m, n, seed=4)
    np.testing.assert_array_equal(dqdyn.forward_kinematics(m, Q), _singles(m, Q))
    assert fk_lanes_batch not in seen


def test_matches_pinocchio():
    """Pinocchio's ``oMi`` (joints matched by name, the free root as Pinocchio's joint 1) on ANYmal
    and the Panda, within 1e-12."""
    for name in ("anymal", "panda"):
        m, pm = _model(name)
        pd = pm.createData()
        Q = _configs(m, LANES + 3, seed=7)
        X = dqdyn.forward_kinematics(m, Q)
        ids = [1 if (n == "root_joint" and not pm.existJointName(n)) else pm.getJointId(n)
               for n in m.joint_names_all[1:]]
        for k in range(len(Q)):
            pin.forwardKinematics(pm, pd, q_to_pin(m, pm, Q[k]))
            for i, jid in enumerate(ids, start=1):
                np.testing.assert_allclose(matrix_from_pose(X[k, i]), pd.oMi[jid].homogeneous,
                                           atol=1e-12, rtol=0, err_msg=f"{name} state {k} body {i}")


# ----------------------------------------------------------------------------- bad input
def _per_state_error(m, Q, exc, monkeypatch):
    """The error of the route before the lanes (`forward.fk_batch` per state) on the same batch."""
    with monkeypatch.context() as mp:
        mp.setattr(K, "lanes_fk_support", lambda model: False)
        with pytest.raises(exc) as per_state:
            dqdyn.forward_kinematics(m, Q)
    return str(per_state.value)


def test_non_finite_q_names_the_batch_element(monkeypatch):
    m = dqdyn.serial_chain(5)
    Q = _configs(m, 2 * LANES + 1, seed=10)
    Q[LANES + 2, 1] = np.nan
    with pytest.raises(NonFiniteError, match=rf"q.*batch element {LANES + 2}\b") as lanes:
        dqdyn.forward_kinematics(m, Q)
    assert str(lanes.value) == _per_state_error(m, Q, NonFiniteError, monkeypatch)


@pytest.mark.parametrize("k", [0, LANES + 2, 2 * LANES])
def test_non_unit_base_names_the_batch_element(k, monkeypatch):
    """A non-unit free-joint pose in row ``k`` (the first, one inside, the last of a padded block)
    raises the error of the per-state route, naming the row; two bad rows name the first."""
    m, _ = _model("free0")
    Q = _configs(m, 2 * LANES + 1, seed=11)
    Q[k, m.q_slice(m.joint_names_all[3])] *= 1.5  # (body 3's free joint, off the unit sphere)
    with pytest.raises(NotUnitError, match=rf"batch element {k}\b") as lanes:
        dqdyn.forward_kinematics(m, Q)
    assert str(lanes.value) == _per_state_error(m, Q, NotUnitError, monkeypatch)
    Q[-1, m.q_slice(m.joint_names_all[3])] *= 2.0
    with pytest.raises(NotUnitError, match=rf"batch element {k}\b"):
        dqdyn.forward_kinematics(m, Q)
