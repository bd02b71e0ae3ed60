"""The public Pinocchio bridge (dqdyn.interop.pinocchio): round trips dqdyn → Pinocchio → dqdyn
(models, q, v, a, τ, Jacobians) to 1e-14, and Pinocchio's own algorithms (rnea, crba, frame
Jacobians) on the converted models as the oracle."""

from __future__ import annotations

import os
import sysconfig

import numpy as np
import pytest

pin = pytest.importorskip("pinocchio")

import dqdyn  # noqa: E402
from dqdyn.errors import ModelError, ShapeError  # noqa: E402
from dqdyn.interop import pinocchio as bridge  # noqa: E402

ERD = os.path.join(sysconfig.get_paths()["purelib"], "cmeel.prefix", "share", "example-robot-data", "robots")


def _same_pose(a, b):
    """x and −x are the same pose: the smaller of the two distances."""
    return min(np.abs(a - b).max(), np.abs(a + b).max())


def _tree():
    b = dqdyn.ModelBuilder("mixed")
    model = dqdyn.random_tree(9, seed=4, fixed_every=3)
    b.add_model(model)
    b.add_frame("tcp", "b9", xyz=(0.1, 0.2, 0.3), rpy=(0.3, -0.2, 1.0))
    return b.build()


def _models():
    yield "tree", _tree()
    b = dqdyn.ModelBuilder("base")
    b.add_body("base", joint="planar", mass=3.0, inertia=np.diag([0.1, 0.2, 0.3]))
    b.add_body("arm", "base", "revolute", axis=(0, 1, 0), xyz=(0.1, 0, 0.2), mass=1.0,
               com=(0, 0, 0.1), inertia=np.diag([0.01, 0.01, 0.002]), lower=-1.5, upper=2.0,
               velocity=3.0, effort=40.0)
    b.add_body("slider", "arm", "cylindrical", axis=(0.3, 0.4, 0.5), xyz=(0, 0, 0.3), mass=0.5,
               inertia=np.eye(3) * 1e-3)
    yield "planar_base", b.build()


def _check_same_model(a, b):
    """Same bodies, joints, inertias, limits and frames, matched by name (Pinocchio orders the
    bodies depth-first, so the round trip may renumber them)."""
    assert a.nbodies == b.nbodies and a.nq == b.nq and a.nv == b.nv
    assert set(a.body_names) == set(b.body_names)
    assert np.array_equal(a.gravity, b.gravity)
    for i in range(1, a.nbodies + 1):
        k = b.body_index(a.body_names[i])
        assert a.body_names[int(a.parent[i])] == b.body_names[int(b.parent[k])]
        assert a.joint_names_all[i] == b.joint_names_all[k] and a.joint_type[i] == b.joint_type[k]
        assert _same_pose(a.joint_placement[i], b.joint_placement[k]) < 1e-14
        names = ("joint_axis", "mass", "com", "inertia") + (("joint_pitch",) if a.joint_type_name(i) == "helical" else ())
        if a.joint_type_name(i) in ("planar", "spherical", "free"):
            names = names[1:]  # no axis
        for name in names:
            assert np.abs(getattr(a, name)[i] - getattr(b, name)[k]).max() < 1e-14, name
        j = a.joint_names_all[i]
        for name, sl in (("q_lower", "q_slice"), ("q_upper", "q_slice"),
                         ("velocity_limit", "v_slice"), ("effort_limit", "v_slice")):
            if a.joint_nq[i] == 1:
                x, y = getattr(a, name)[getattr(a, sl)(j)], getattr(b, name)[getattr(b, sl)(j)]
                assert np.array_equal(x, y), (name, j)
    assert set(a.frame_names) == set(b.frame_names)
    qa = dqdyn.random_configuration(a, seed=7)
    qb = bridge.q_from_pin(b, bridge.to_pinocchio(b), bridge.q_to_pin(a, bridge.to_pinocchio(a), qa))
    for f in a.frame_names:
        assert _same_pose(dqdyn.frame_pose(a, qa, f), dqdyn.frame_pose(b, qb, f)) < 1e-14


@pytest.mark.parametrize("key, model", list(_models()), ids=lambda x: x if isinstance(x, str) else "")
def test_round_trip_dqdyn_pinocchio_dqdyn(key, model):
    pm = bridge.to_pinocchio(model)
    back = bridge.from_pinocchio(pm)
    _check_same_model(model, back)
    rng = np.random.default_rng(0)
    for _ in range(5):
        q = dqdyn.random_configuration(model, seed=rng)
        v, a, tau = rng.normal(size=(3, model.nv))
        qp = bridge.q_to_pin(model, pm, q)
        assert np.abs(bridge.q_from_pin(model, pm, qp) - q).max() < 1e-14
        assert np.abs(bridge.v_from_pin(model, pm, q, bridge.v_to_pin(model, pm, q, v)) - v).max() < 1e-14
        assert np.abs(bridge.a_from_pin(model, pm, q, v, bridge.a_to_pin(model, pm, q, v, a)) - a).max() < 1e-14
        assert np.abs(bridge.tau_from_pin(model, pm, q, bridge.tau_to_pin(model, pm, q, tau)) - tau).max() < 1e-14
        J = dqdyn.twist_jacobian(model, q, model.frame_names[-1], "body")
        assert np.abs(bridge.jacobian_from_pin(model, pm, q, bridge.jacobian_to_pin(model, pm, q, J)) - J).max() < 1e-14
        # the same state in the round-tripped model (renumbered depth-first)
        qb = bridge.q_from_pin(back, pm, qp)
        vb = bridge.v_from_pin(back, pm, qb, bridge.v_to_pin(model, pm, q, v))
        ab = bridge.a_from_pin(back, pm, qb, vb, bridge.a_to_pin(model, pm, q, v, a))
        tb = bridge.tau_to_pin(back, pm, qb, dqdyn.rnea(back, qb, vb, ab))
        assert np.abs(tb - bridge.tau_to_pin(model, pm, q, dqdyn.rnea(model, q, v, a))).max() < 1e-12


@pytest.mark.parametrize("key, model", list(_models()), ids=lambda x: x if isinstance(x, str) else "")
def test_pinocchio_algorithms_on_converted_model(key, model):
    pm = bridge.to_pinocchio(model)
    pd = pm.createData()
    rng = np.random.default_rng(1)
    for _ in range(5):
        q = dqdyn.random_configuration(model, seed=rng)
        v, a = rng.normal(size=(2, model.nv))
        qp, vp, ap = (bridge.q_to_pin(model, pm, q), bridge.v_to_pin(model, pm, q, v),
                      bridge.a_to_pin(model, pm, q, v, a))
        tau = bridge.tau_from_pin(model, pm, q, pin.rnea(pm, pd, qp, vp, ap))
        assert np.abs(dqdyn.rnea(model, q, v, a) - tau).max() < 1e-10
        M = bridge.matrix_from_pin(model, pm, q, pin.crba(pm, pd, qp, pin.Convention.WORLD))
        assert np.abs(dqdyn.mass_matrix(model, q) - M).max() < 1e-10
        pin.computeJointJacobians(pm, pd, qp)
        pin.updateFramePlacements(pm, pd)
        f = model.frame_names[-1]
        for ours, ref in (("body", pin.LOCAL), ("spatial", pin.WORLD), ("world_aligned", pin.LOCAL_WORLD_ALIGNED)):
            Jp = pin.getFrameJacobian(pm, pd, pm.getFrameId(f), ref)
            assert np.abs(dqdyn.twist_jacobian(model, q, f, ours) - bridge.jacobian_from_pin(model, pm, q, Jp)).max() < 1e-10


@pytest.mark.parametrize("rel, root", [
    ("panda_description/urdf/panda.urdf", None),
    ("double_pendulum_description/urdf/double_pendulum_continuous.urdf", None),
    ("tiago_description/robots/tiago.urdf", "planar"),
    ("solo_description/robots/solo12.urdf", "free"),
])
def test_from_pinocchio_urdf_models(rel, root):
    """Pinocchio's own URDF parser → from_pinocchio → dqdyn algorithms = Pinocchio's algorithms."""
    path = os.path.join(ERD, rel)
    if not os.path.exists(path):
        pytest.skip(f"example-robot-data file {rel} not installed")
    pm = bridge.pin_from_urdf(path, root)
    model = bridge.from_pinocchio(pm)
    pd = pm.createData()
    rng = np.random.default_rng(2)
    for _ in range(3):
        q = dqdyn.random_configuration(model, seed=rng)
        v, a = rng.normal(size=(2, model.nv))
        qp = bridge.q_to_pin(model, pm, q)
        tau = bridge.tau_from_pin(model, pm, q, pin.rnea(pm, pd, qp, bridge.v_to_pin(model, pm, q, v),
                                                        bridge.a_to_pin(model, pm, q, v, a)))
        assert np.abs(dqdyn.rnea(model, q, v, a) - tau).max() < 1e-9 * max(1, np.abs(tau).max())
        pin.framesForwardKinematics(pm, pd, qp)
        fr = pm.frames[pm.nframes - 1]
        x = dqdyn.frame_pose(model, q, fr.name)
        T = dqdyn.algebra.rotations.matrix_from_pose(x)
        assert np.abs(T - pd.oMf[pm.nframes - 1].homogeneous).max() < 1e-12


def test_bridge_errors():
    pm = pin.Model()
    pm.addJoint(0, pin.JointModelSphericalZYX(), pin.SE3.Identity(), "zyx")
    with pytest.raises(ModelError, match="'zyx'.*JointModelSphericalZYX"):
        bridge.from_pinocchio(pm)
    b = dqdyn.ModelBuilder()
    b.add_body("a", joint="revolute", mass=1, inertia=np.eye(3))
    b.add_body("b", "a", joint="revolute", mass=1, inertia=np.eye(3), mimic=("a_joint", 2.0, 0.0))
    with pytest.raises(ModelError, match="mimic"):
        bridge.to_pinocchio(b.build())
    model = _tree()
    with pytest.raises(ShapeError, match="q must have shape"):
        bridge.q_to_pin(model, bridge.to_pinocchio(model), np.zeros(3))
