"""The Pinocchio conversions by keyword: ``q_to_pin(model, q=q)`` (the Pinocchio model of
`to_pinocchio` by default), ``to_pinocchio(model, q=…, v=…, a=…)``, and the errors of a
misplaced argument.  Oracle: Pinocchio's rnea on the converted state against dqdyn's."""

from __future__ import annotations

import numpy as np
import pytest

pin = pytest.importorskip("pinocchio")

import dqdyn  # noqa: E402
from dqdyn.errors import ModelError, ShapeError  # noqa: E402
from dqdyn.interop import pinocchio as bridge  # noqa: E402


@pytest.fixture(scope="module")
def case():
    # planar and free joints: the joints whose coordinates differ between the two libraries
    m = dqdyn.random_tree(8, ["revolute", "planar", "free", "spherical", "cylindrical"], seed=5)
    rng = np.random.default_rng(0)
    q = dqdyn.random_configuration(m, seed=rng)
    v, a, tau = (rng.normal(size=m.nv) for _ in range(3))
    return m, bridge.to_pinocchio(m), q, v, a, tau


def test_keywords_give_what_the_positional_calls_give(case):
    m, pm, q, v, a, tau = case
    qp, vp, ap = bridge.q_to_pin(m, pm, q), bridge.v_to_pin(m, pm, q, v), bridge.a_to_pin(m, pm, q, v, a)
    assert np.abs(vp - v).max() > 1e-3  # the planar joint turns v: the maps are not identities
    for pm_kw in ({"pm": pm}, {}):  # pm by keyword, or left out (to_pinocchio(model)'s)
        np.testing.assert_array_equal(bridge.q_to_pin(m, q=q, **pm_kw), qp)
        np.testing.assert_array_equal(bridge.v_to_pin(model=m, q=q, v=v, **pm_kw), vp)
        np.testing.assert_array_equal(bridge.a_to_pin(m, a=a, v=v, q=q, **pm_kw), ap)
        back = bridge.q_from_pin(m, q_pin=qp, **pm_kw)  # (a quaternion's sign may flip)
        np.testing.assert_allclose(bridge.q_to_pin(m, pm, back), qp, atol=1e-14)
        np.testing.assert_allclose(bridge.v_from_pin(m, q=q, v_pin=vp, **pm_kw), v, atol=1e-14)
        np.testing.assert_allclose(bridge.a_from_pin(m, q=q, v=v, a_pin=ap, **pm_kw), a, atol=1e-13)
        tp = bridge.tau_to_pin(m, q=q, tau=tau, **pm_kw)
        np.testing.assert_allclose(bridge.tau_from_pin(m, q=q, tau_pin=tp, **pm_kw), tau, atol=1e-14)
        np.testing.assert_array_equal(bridge.v_transform(m, q=q, **pm_kw), bridge.v_transform(m, pm, q))
        np.testing.assert_array_equal(bridge.tdot_v(m, q=q, v=v, **pm_kw), bridge.tdot_v(m, pm, q, v))
        J = dqdyn.twist_jacobian(m, q, m.body_names[-1])
        Jp = bridge.jacobian_to_pin(m, q=q, J=J, **pm_kw)
        np.testing.assert_allclose(bridge.jacobian_from_pin(m, q=q, J_pin=Jp, **pm_kw), J, atol=1e-14)
        assert bridge.joint_map(m, **pm_kw) == bridge.joint_map(m, pm)


def test_to_pinocchio_with_a_state_runs_pinocchio_rnea(case):
    m, _, q, v, a, tau = case
    s = bridge.to_pinocchio(m, q=q, v=v, a=a, tau=tau)
    assert isinstance(s, bridge.PinocchioState) and isinstance(s.model, pin.Model)
    tau_pin = pin.rnea(s.model, s.data, s.q, s.v, s.a)
    np.testing.assert_allclose(bridge.tau_from_pin(m, q=q, tau_pin=tau_pin), dqdyn.rnea(m, q, v, a),
                               rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(bridge.tau_from_pin(m, s.model, q, s.tau), tau, atol=1e-14)
    only_q = bridge.to_pinocchio(m, q=q)
    assert only_q.v is None and only_q.a is None and only_q.tau is None
    assert set(only_q.ids) == set(range(m.nbodies + 1))
    # the positional forms are unchanged
    assert isinstance(bridge.to_pinocchio(m), pin.Model)
    pm, ids = bridge.to_pinocchio(m, return_ids=True)
    assert isinstance(pm, pin.Model) and ids == only_q.ids


def test_a_misplaced_argument_says_the_order(case):
    m, pm, q, v, *_ = case
    with pytest.raises(ShapeError, match=r"q_to_pin\(model, pm, q\).*q_to_pin\(model, q=…\)"):
        bridge.q_to_pin(m, q)  # q where pm goes
    with pytest.raises(ShapeError, match=r"v_to_pin\(model, pm, q, v\)"):
        bridge.v_to_pin(m, q, v)
    with pytest.raises(ShapeError, match=r"q is missing.*q_to_pin\(model, pm, q\)"):
        bridge.q_to_pin(m, pm)
    with pytest.raises(ShapeError, match="v is missing"):
        bridge.v_to_pin(m, q=q)
    with pytest.raises(ModelError, match=r"model must be a dqdyn.Model"):
        bridge.q_to_pin(pm, m, q)  # the two models swapped
    with pytest.raises(ShapeError, match=r"q must have shape"):
        bridge.q_to_pin(m, q=q[:-1])
    with pytest.raises(ShapeError, match="give q too"):
        bridge.to_pinocchio(m, v=v)
    with pytest.raises(ShapeError, match="give v too"):
        bridge.to_pinocchio(m, q=q, a=v)
    with pytest.raises(ShapeError, match="fext must have shape"):
        bridge.pin_fext(m, fext=np.zeros((2, 6)))
