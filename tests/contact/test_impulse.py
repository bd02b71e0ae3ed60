"""Impulse dynamics against Pinocchio's impulseDynamics, and the physics of impacts: restitution 0
leaves zero contact velocity and loses kinetic energy, restitution 1 keeps it."""

from __future__ import annotations

import numpy as np
import pytest

import dqdyn
from dqdyn.errors import ShapeError, SingularError

from _oracle import FEET, HANDS, pin, pin_contacts, pin_state, rel, robot, state

CASES = [("solo12", "3d", FEET["solo12"]), ("anymal", "3d", FEET["anymal"][:3]),
         ("talos", "6d", FEET["talos"]), ("talos", "3d", FEET["talos"] + HANDS["talos"])]


def _ours(kind, frames):
    C = dqdyn.PointContact if kind == "3d" else dqdyn.FrameContact
    return [C(f) for f in frames]


@pytest.mark.parametrize("name,kind,frames", CASES)
@pytest.mark.parametrize("e", [0.0, 0.4, 1.0])
def test_impulse_dynamics_matches_pinocchio(name, kind, frames, e):
    model, pm = robot(name)
    pd = pm.createData()
    q, v, _, _ = state(model, 2)
    qp, vp, T = pin_state(model, pm, q, v)
    cms, cds = pin_contacts(pm, frames, kind)
    pin.initConstraintDynamics(pm, pd, cms, cds)
    vq = pin.impulseDynamics(pm, pd, qp, vp, cms, cds, e, pin.ProximalSettings(1e-14, 0.0, 1))
    r = dqdyn.impulse_dynamics(model, q, v, _ours(kind, frames), e)
    assert rel(r.v, T.T @ vq) < 1e-10
    assert rel(r.multipliers, pd.impulse_c) < 1e-10


@pytest.mark.parametrize("name,kind,frames", CASES)
def test_restitution_physics(name, kind, frames):
    model, _ = robot(name)
    q, v, _, _ = state(model, 3)
    cons = _ours(kind, frames)
    A = np.concatenate([c.A(model, q) for c in cons])
    ke = lambda w: float(dqdyn.kinetic_energy(model, q, w))  # noqa: E731
    plastic = dqdyn.impulse_dynamics(model, q, v, cons, 0.0)
    assert np.abs(A @ plastic.v).max() < 1e-10 * (1 + np.abs(v).max())
    assert ke(plastic.v) < ke(v)
    elastic = dqdyn.impulse_dynamics(model, q, v, cons, 1.0)
    assert np.allclose(A @ elastic.v, -(A @ v), atol=1e-9 * (1 + np.abs(v).max()))
    assert abs(ke(elastic.v) - ke(v)) < 1e-10 * ke(v)
    half = dqdyn.impulse_dynamics(model, q, v, cons, 0.5)
    assert np.allclose(A @ half.v, -0.5 * (A @ v), atol=1e-9 * (1 + np.abs(v).max()))
    # the impulses act on the robot in the contact frames: v⁺ − v⁻ = M⁻¹ Aᵀ Λ
    M = dqdyn.mass_matrix(model, q)
    assert np.allclose(M @ (half.v - v), A.T @ half.multipliers, atol=1e-9 * (1 + np.abs(v).max()))


def test_redundant_impact_and_batches():
    """A doubled point contact: same v⁺ as one contact, half the impulse each; a batch equals its
    states one by one; the direct solve refuses the doubled set."""
    model, _ = robot("solo12")
    S = [state(model, k) for k in range(3)]
    qs, vs = np.stack([s[0] for s in S]), np.stack([s[1] for s in S])
    one = dqdyn.impulse_dynamics(model, qs, vs, _ours("3d", FEET["solo12"]))
    two = dqdyn.impulse_dynamics(model, qs, vs, _ours("3d", FEET["solo12"] + FEET["solo12"][:1]))
    assert one.v.shape == (3, model.nv) and one.impulses[0].shape == (3, 3)
    assert rel(two.v, one.v) < 1e-9 and rel(two.impulses[4], one.impulses[0] / 2) < 1e-8
    for k in range(3):
        r = dqdyn.impulse_dynamics(model, qs[k], vs[k], _ours("3d", FEET["solo12"]))
        assert np.allclose(r.v, one.v[k], rtol=0, atol=1e-12)
    with pytest.raises(SingularError, match="contacts"):
        dqdyn.impulse_dynamics(model, qs[0], vs[0], _ours("3d", FEET["solo12"] * 2), proximal=None)


def test_bad_input_is_named():
    model, _ = robot("solo12")
    q, v, _, _ = state(model, 0)
    cons = _ours("3d", FEET["solo12"])
    for bad in (-0.1, 1.5, np.nan, "x"):
        with pytest.raises(ShapeError, match="restitution"):
            dqdyn.impulse_dynamics(model, q, v, cons, bad)
    with pytest.raises(ShapeError, match="v"):
        dqdyn.impulse_dynamics(model, q, v[:-1], cons)
    with pytest.raises(dqdyn.errors.UnknownNameError, match="nowhere"):
        dqdyn.impulse_dynamics(model, q, v, [dqdyn.FrameContact("nowhere")])
