"""The loaders by name (one return type each) and `attach_payload`.

Oracles: the constraint residual of each constrained example's ``q0``; Pinocchio with the same
payload appended to the same URDF model (``appendBodyToJoint``) for rnea, the mass matrix and
gravity; the whole-system centre of mass for the payload's frame.
"""

from __future__ import annotations

import numpy as np
import pytest

import dqdyn
from dqdyn import models
from dqdyn.errors import ModelError, NonFiniteError, ShapeError, UnknownNameError

LOADERS = ("load_example", "load_constrained_example", "load_parallel_example")
KINDS = {"model": "load_example", "constrained": "load_constrained_example",
         "parallel": "load_parallel_example"}


# ------------------------------------------------------------------------------- loaders
def test_each_kind_has_one_loader_named_by_model_info():
    every = set(dqdyn.list_models())
    by_kind = {k: set(dqdyn.list_models(kind=k)) for k in KINDS}
    assert set().union(*by_kind.values()) == every
    assert by_kind["constrained"] == {"four_bar", "five_bar", "slider_crank", "mobile_manipulator"}
    assert by_kind["parallel"] == {"stewart_6_6", "stewart_3_3", "cable_robot_8"}
    for kind, names in by_kind.items():
        for n in names:
            assert dqdyn.model_info(n).loader == KINDS[kind], n
    for name in LOADERS:
        assert name in dqdyn.__all__ and callable(getattr(dqdyn, name))


@pytest.mark.parametrize("name, kind", [("jaco6", "model"), ("arm7", "model"),
                                        ("four_bar", "constrained"),
                                        ("mobile_manipulator", "constrained"),
                                        ("stewart_3_3", "parallel"), ("cable_robot_8", "parallel")])
def test_a_loader_refuses_the_other_kinds_and_names_the_right_one(name, kind):
    right = KINDS[kind]
    for loader in LOADERS:
        if loader == right:
            continue
        with pytest.raises(ModelError, match=rf"dqdyn\.{right}\('{name}'\)") as ei:
            getattr(dqdyn, loader)(name)
        assert str(ei.value).startswith(f"{loader}: ")
    if kind != "model":  # dqdyn.load loads models only, and points to the same loader
        with pytest.raises(ModelError, match=rf"dqdyn\.{right}\('{name}'\)"):
            dqdyn.load(name)


def test_load_example_returns_a_model():
    assert isinstance(dqdyn.load_example("two_link_arm"), dqdyn.Model)
    assert isinstance(dqdyn.load_example("tree38"), dqdyn.Model)


@pytest.mark.parametrize("name", ["four_bar", "five_bar", "slider_crank", "mobile_manipulator"])
def test_load_constrained_example(name):
    ex = dqdyn.load_constrained_example(name)
    assert isinstance(ex, dqdyn.ConstrainedExample)
    model, constraints, q0 = ex  # unpacks as the tuple it is
    assert model is ex.model and constraints is ex.constraints and q0 is ex.q0
    assert isinstance(model, dqdyn.Model) and isinstance(constraints, list) and constraints
    assert q0.shape == (model.nq,) and model.nv == dqdyn.model_info(name).nv
    err = dqdyn.constraint_errors(model, q0, np.zeros(model.nv), constraints)[0]
    assert np.abs(err).max() < 1e-9


def test_load_constrained_example_passes_options():
    a = dqdyn.load_constrained_example("four_bar", theta=0.6)
    b = dqdyn.load_constrained_example("four_bar", theta=0.9)
    assert abs(a.q0[0] - b.q0[0]) > 0.1


def test_load_parallel_example():
    from dqdyn.parallel import CableRobot, ParallelRobot, StewartPlatform

    st = dqdyn.load_parallel_example("stewart_6_6")
    assert isinstance(st, StewartPlatform)
    assert isinstance(dqdyn.load_parallel_example("cable_robot_8"), CableRobot)
    assert isinstance(dqdyn.load_parallel_example("stewart_3_3", home_height=0.8), ParallelRobot)


def test_unknown_names():
    for loader in LOADERS:
        with pytest.raises(UnknownNameError, match="no_such_robot"):
            getattr(dqdyn, loader)("no_such_robot")


def test_model_path_is_the_file_load_example_reads():
    p = models.model_path("jaco6")
    assert p.is_file() and p.suffix == ".urdf"
    a, b = dqdyn.load_example("jaco6"), dqdyn.load_urdf(p)
    np.testing.assert_array_equal(a.mf, b.mf)
    with pytest.raises(UnknownNameError, match="built in code"):
        models.model_path("four_bar")


# ------------------------------------------------------------------------------- payload
def _panda():
    pin = pytest.importorskip("pinocchio")
    if models.example_robot_data_dir() is None:
        pytest.skip("example-robot-data is not installed")
    from dqdyn.interop.pinocchio import pin_from_urdf

    return pin, dqdyn.load_example("panda"), pin_from_urdf(str(models.model_path("panda")))


def _rel(x, y):
    return np.abs(np.asarray(x) - np.asarray(y)).max() / max(1.0, np.abs(y).max())


def _pin_append(pin, pm, link, mass, com, inertia):
    """Oracle: Pinocchio's own merge of a rigid body into the joint carrying ``link``."""
    f = pm.frames[pm.getFrameId(link)]
    pm.appendBodyToJoint(f.parentJoint, pin.Inertia(mass, np.asarray(com, dtype=float),
                                                    np.asarray(inertia, dtype=float)), f.placement)


def _random_inertia(rng):
    from dqdyn.algebra.rotations import matrix_from_quat, quat_from_axis_angle

    R = matrix_from_quat(quat_from_axis_angle(rng.normal(size=3), 1.1))
    return R @ np.diag([0.02, 0.03, 0.04]) @ R.T


def test_payload_matches_pinocchio_on_panda():
    pin, m, pm = _panda()
    from dqdyn.interop.pinocchio import q_to_pin, tdot_v, v_transform

    rng = np.random.default_rng(7)
    I1 = _random_inertia(rng)
    # a merged fixed link (the hand), a body given by index, and a finger (the mimic joint's)
    held = dqdyn.attach_payload(m, "panda_hand", 1.3, com=(0.01, -0.02, 0.08), inertia=I1)
    held = dqdyn.attach_payload(held, m.body_index("panda_link5"), 0.4, com=(0.0, 0.05, -0.1))
    held = dqdyn.attach_payload(held, "panda_rightfinger", 0.05, (0.0, 0.01, 0.02),
                                np.diag([1e-5, 2e-5, 2e-5]))
    _pin_append(pin, pm, "panda_hand", 1.3, (0.01, -0.02, 0.08), I1)
    _pin_append(pin, pm, "panda_link5", 0.4, (0.0, 0.05, -0.1), np.zeros((3, 3)))
    _pin_append(pin, pm, "panda_rightfinger", 0.05, (0.0, 0.01, 0.02), np.diag([1e-5, 2e-5, 2e-5]))
    pd = pm.createData()
    assert held.total_mass == pytest.approx(m.total_mass + 1.75, abs=1e-12)
    for _ in range(3):
        q = dqdyn.random_configuration(held, seed=rng)
        v, a = rng.normal(size=held.nv), rng.normal(size=held.nv)
        T = v_transform(held, pm, q)
        qp, vp, ap = q_to_pin(held, pm, q), T @ v, T @ a + tdot_v(held, pm, q, v)
        Mp = pin.crba(pm, pd, qp)
        Mp = np.triu(Mp) + np.triu(Mp, 1).T
        assert _rel(dqdyn.rnea(held, q, v, a), T.T @ pin.rnea(pm, pd, qp, vp, ap)) < 1e-12
        assert _rel(dqdyn.mass_matrix(held, q), T.T @ Mp @ T) < 1e-12
        assert _rel(dqdyn.gravity(held, q), T.T @ pin.computeGeneralizedGravity(pm, pd, qp)) < 1e-12
        # and the payload changes the dynamics (the comparison can fail)
        assert _rel(dqdyn.gravity(m, q), dqdyn.gravity(held, q)) > 1e-3


def test_payload_on_the_fixed_base_is_welded_as_pinocchio_s_universe_inertia():
    pin, m, pm = _panda()
    I1 = _random_inertia(np.random.default_rng(2))
    held = dqdyn.attach_payload(m, "panda_link0", 2.0, com=(0.1, 0.0, 0.02), inertia=I1)
    held = dqdyn.attach_payload(held, 0, 0.5, com=(0.0, 0.2, 0.0))
    _pin_append(pin, pm, "panda_link0", 2.0, (0.1, 0.0, 0.02), I1)
    _pin_append(pin, pm, "universe", 0.5, (0.0, 0.2, 0.0), np.zeros((3, 3)))
    wm, wc, wI = held.welded_inertia
    Y = pm.inertias[0]
    assert wm == pytest.approx(Y.mass, abs=1e-12)
    np.testing.assert_allclose(wc, Y.lever, atol=1e-12)
    np.testing.assert_allclose(wI, Y.inertia, atol=1e-12)
    q = dqdyn.random_configuration(m, seed=3)
    np.testing.assert_array_equal(dqdyn.gravity(held, q), dqdyn.gravity(m, q))  # no joint moves it


def test_payload_frame_sits_at_the_payload_com():
    m = dqdyn.load_example("jaco6")
    link = m.body_names[-1]
    held = dqdyn.attach_payload(m, link, 0.8, com=(0.02, 0.0, 0.06), name="payload")
    assert held.frame_names[:-1] == m.frame_names and held.frame_names[-1] == "payload"
    q = dqdyn.random_configuration(m, seed=4)
    p = dqdyn.frame_pose(held, q, "payload")
    from dqdyn.algebra.rotations import translation_of

    # oracle: the whole-system CoM moves to the mass-weighted mean with the payload's position
    c0, c1 = dqdyn.center_of_mass(m, q), dqdyn.center_of_mass(held, q)
    np.testing.assert_allclose(held.total_mass * c1 - m.total_mass * c0, 0.8 * translation_of(p),
                               atol=1e-12)


def test_payload_leaves_the_model_alone():
    m = dqdyn.load_example("jaco6")
    mf = m.mf.copy()
    held = dqdyn.attach_payload(m, 2, 1.0, name="tool_mass")
    np.testing.assert_array_equal(m.mf, mf)
    assert "tool_mass" not in m.frame_names and held is not m
    assert (held.nq, held.nv, held.joint_names) == (m.nq, m.nv, m.joint_names)
    np.testing.assert_array_equal(held.q_lower, m.q_lower)
    zero = dqdyn.attach_payload(m, 3, 0.0)
    np.testing.assert_array_equal(zero.mf, m.mf)


@pytest.mark.parametrize("kwargs, err, match", [
    (dict(mass=-1.0), ModelError, r"mass must be >= 0"),
    (dict(mass=float("nan")), NonFiniteError, "mass"),
    (dict(mass="1"), ShapeError, "mass"),
    (dict(mass=[1.0, 2.0]), ShapeError, "mass"),
    (dict(com=(0.0, 0.0)), ShapeError, "com"),
    (dict(com=(0.0, np.inf, 0.0)), NonFiniteError, "com"),
    (dict(inertia=np.eye(2)), ShapeError, "inertia"),
    (dict(inertia=np.diag([0.1, -0.01, 0.1])), ModelError, "inertia must be positive semi-definite"),
    (dict(inertia=[[0.1, 0.02, 0], [0, 0.1, 0], [0, 0, 0.1]]), ModelError, "inertia must be symmetric"),
    (dict(inertia=np.diag([0.01, 0.01, 0.1])), ModelError, "inertia violates the triangle"),
    (dict(body="no_such_link"), UnknownNameError, r"body 'no_such_link'"),
    (dict(body=99), UnknownNameError, r"body index 99"),
    (dict(body=-1), UnknownNameError, r"body index -1"),
    (dict(body=1.5), UnknownNameError, r"body must be a link name"),
    (dict(body=True), UnknownNameError, r"body must be a link name"),
    (dict(name="end_effector"), ModelError, r"name 'end_effector' is already a frame"),
    (dict(name=3), ModelError, r"name must be a non-empty string"),
])
def test_payload_bad_input_names_the_argument(kwargs, err, match):
    m = dqdyn.load_example("jaco6")
    args = dict(body=m.body_names[-1], mass=1.0)
    args.update(kwargs)
    body, mass = args.pop("body"), args.pop("mass")
    with pytest.raises(err, match=match):
        dqdyn.attach_payload(m, body, mass, **args)


def test_payload_refuses_what_is_not_a_model():
    with pytest.raises(ModelError, match="model must be a dqdyn.Model"):
        dqdyn.attach_payload("jaco6", "world", 1.0)
