"""Centroidal momentum matrix, momentum, its rate and the CoM Jacobian against Pinocchio (ccrba,
computeCentroidalMomentumTimeVariation, jacobianCenterOfMass) on floating-base robots and a
fixed-base arm, and the rate against Newton–Euler for the whole system (external wrenches)."""

from __future__ import annotations

import numpy as np
import pytest

import dqdyn
from dqdyn.algebra.rotations import matrix_from_pose, translation_of

from _oracle import FEET, pin, pin_state, rel, robot, state

ROBOTS = ["solo12", "anymal", "talos"]


@pytest.mark.parametrize("name", ROBOTS)
@pytest.mark.parametrize("k", range(3))
def test_centroidal_terms_match_pinocchio(name, k):
    model, pm = robot(name)
    pd = pm.createData()
    q, v, a, _ = state(model, k)
    qp, vp, T, ap = pin_state(model, pm, q, v, a)
    Ag = pin.ccrba(pm, pd, qp, vp)
    assert rel(dqdyn.centroidal_momentum_matrix(model, q), Ag @ T) < 1e-10
    assert rel(dqdyn.centroidal_momentum(model, q, v), pd.hg.vector) < 1e-10
    pin.computeCentroidalMomentumTimeVariation(pm, pd, qp, vp, ap)
    assert rel(dqdyn.centroidal_momentum_rate(model, q, v, a), pd.dhg.vector) < 1e-10
    Jc = pin.jacobianCenterOfMass(pm, pd, qp)
    assert rel(dqdyn.com_jacobian(model, q), Jc @ T) < 1e-10


def test_fixed_base_arm_matches_pinocchio():
    from dqdyn.interop.pinocchio import a_to_pin

    from pinconv import ROBOTS as ALL
    from pinconv import erd, pin_from_urdf, q_to_pin, v_transform

    path, root = ALL["panda"]
    model = dqdyn.load_urdf(erd(path))
    pm = pin_from_urdf(erd(path), root)
    pd = pm.createData()
    q, v, a, _ = state(model, 7)
    qp, T = q_to_pin(model, pm, q), v_transform(model, pm, q)
    Ag = pin.ccrba(pm, pd, qp, T @ v)
    assert rel(dqdyn.centroidal_momentum_matrix(model, q), Ag @ T) < 1e-10
    pin.computeCentroidalMomentumTimeVariation(pm, pd, qp, T @ v, a_to_pin(model, pm, q, v, a))
    assert rel(dqdyn.centroidal_momentum_rate(model, q, v, a), pd.dhg.vector) < 1e-10


def test_com_jacobian_is_the_derivative_of_the_com():
    """Independent of Pinocchio: ċ = J_c v by central differences along integrate."""
    model, _ = robot("anymal")
    q, v, _, _ = state(model, 4)
    h = 1e-6
    cp = dqdyn.center_of_mass(model, dqdyn.integrate(model, q, v, h))
    cm = dqdyn.center_of_mass(model, dqdyn.integrate(model, q, v, -h))
    assert np.allclose(dqdyn.com_jacobian(model, q) @ v, (cp - cm) / (2 * h), atol=1e-7)


def test_momentum_rate_equals_the_external_wrenches_without_contacts():
    """Free-floating (no contact, no base wrench): ḣ_g = [m g; 0] whatever the joint torques."""
    model, _ = robot("solo12")
    q, v, _, tau = state(model, 5)
    tau[:6] = 0.0
    a = dqdyn.aba(model, q, v, tau)
    hd = dqdyn.centroidal_momentum_rate(model, q, v, a)
    assert np.allclose(hd[:3], model.total_mass * np.asarray(model.gravity), atol=1e-9)
    assert np.allclose(hd[3:], 0.0, atol=1e-9)


@pytest.mark.parametrize("kind", ["point", "frame"])
def test_momentum_rate_equals_gravity_plus_contact_wrenches(kind):
    """With contacts: ḣ_g = m g + Σ (contact wrenches moved to the CoM, world axes)."""
    model, _ = robot("solo12")
    q, v, _, tau = state(model, 6)
    tau[:6] = 0.0
    feet = FEET["solo12"] if kind == "point" else FEET["solo12"][:2]
    C = dqdyn.PointContact if kind == "point" else dqdyn.FrameContact
    r = dqdyn.contact_dynamics(model, q, v, tau, [C(f) for f in feet])
    c = dqdyn.center_of_mass(model, q)
    expect = np.r_[model.total_mass * np.asarray(model.gravity), 0, 0, 0]
    for f, F in zip(feet, r.forces):
        x = dqdyn.frame_pose(model, q, f)
        R, p = matrix_from_pose(x)[:3, :3], translation_of(x)
        fw = R @ F[:3]
        tw = R @ F[3:] if F.shape[0] == 6 else np.zeros(3)
        expect += np.r_[fw, tw + np.cross(p - c, fw)]
    got = dqdyn.centroidal_momentum_rate(model, q, v, r.a)
    assert np.abs(got - expect).max() < 1e-9 * (1 + np.abs(expect).max())


def test_batches_are_the_states_one_by_one():
    model, _ = robot("solo12")
    qs = np.stack([state(model, k)[0] for k in range(3)])
    vs = np.stack([state(model, k)[1] for k in range(3)])
    As = np.stack([state(model, k)[2] for k in range(3)])
    for fn, args in ((dqdyn.centroidal_momentum_matrix, (qs,)), (dqdyn.com_jacobian, (qs,)),
                     (dqdyn.centroidal_momentum, (qs, vs)),
                     (dqdyn.centroidal_momentum_rate, (qs, vs, As))):
        out = fn(model, *args)
        one = np.stack([fn(model, *(x[k] for x in args)) for k in range(3)])
        assert out.shape == one.shape and np.allclose(out, one, rtol=0, atol=1e-13)
    assert dqdyn.centroidal_momentum_matrix(model, qs.reshape(3, 1, -1)).shape == (3, 1, 6, model.nv)


def test_bad_input_is_named():
    model, _ = robot("solo12")
    q, v, a, _ = state(model, 0)
    with pytest.raises(dqdyn.errors.ShapeError, match="q"):
        dqdyn.centroidal_momentum_matrix(model, q[:-1])
    with pytest.raises(dqdyn.errors.ShapeError, match="v"):
        dqdyn.centroidal_momentum(model, q, v[:-1])
    with pytest.raises(dqdyn.errors.ShapeError, match="a"):
        dqdyn.centroidal_momentum_rate(model, q, v, a[:3])
    with pytest.raises(dqdyn.errors.NonFiniteError, match="v"):
        dqdyn.centroidal_momentum(model, q, np.full(model.nv, np.nan))
    with pytest.raises(dqdyn.errors.ShapeError, match="batch"):
        dqdyn.centroidal_momentum(model, np.stack([q, q]), np.stack([v, v, v]))
