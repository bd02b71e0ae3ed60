"""load_mjcf's handling of each MJCF feature of the corpus files (tests/parsers/mjcf_corpus), with
MuJoCo as the oracle: gravity options, sites named like bodies, joint equalities in either tree
order, connect / weld loop constraints (MuJoCo's own equality residual is zero where dqdyn's
loop constraints hold), tendons / actuators as metadata, armature from default classes, mass
welded to the world, and the one error that lists every feature dqdyn cannot represent."""

from __future__ import annotations

import os
import warnings

import numpy as np
import pytest

mujoco = pytest.importorskip("mujoco")

import dqdyn  # noqa: E402
from dqdyn.algebra.rotations import matrix_from_quat, translation_of  # noqa: E402
from dqdyn.constraints import model_constraints  # noqa: E402
from dqdyn.constraints.dynamics import constraint_errors, project_state  # noqa: E402
from dqdyn.errors import MJCFError  # noqa: E402
from dqdyn.parsers.mjcf import MujocoMap, load_mjcf  # noqa: E402

CORPUS = os.path.join(os.path.dirname(__file__), "mjcf_corpus")


def corpus(name):
    return os.path.join(CORPUS, name)


def load(name, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return load_mjcf(corpus(name), return_info=True, **kw)


def mj_of(name):
    return mujoco.MjModel.from_xml_path(corpus(name))


def test_gravity_flag_disable_gives_zero_gravity_and_a_vector_is_kept():
    model, info = load("gravity_flag.xml")
    assert np.array_equal(model.gravity, np.zeros(3)) and np.array_equal(info.gravity, np.zeros(3))
    mj = mj_of("gravity_flag.xml")
    assert mj.opt.gravity[2] == -3  # the vector is there, MuJoCo's flag switches it off
    q = dqdyn.random_configuration(model, seed=1)
    assert not np.any(dqdyn.gravity(model, q))
    model, _ = load("gravity_vector.xml")
    assert np.array_equal(model.gravity, mj_of("gravity_vector.xml").opt.gravity)


def test_dm_control_finger_has_no_gravity():
    import importlib.util

    spec = importlib.util.find_spec("dm_control")
    if spec is None:
        pytest.skip("dm_control is not installed")
    path = os.path.join(os.path.dirname(spec.origin), "suite", "finger.xml")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        model = load_mjcf(path)
    assert mujoco.MjModel.from_xml_path(path).opt.disableflags & mujoco.mjtDisableBit.mjDSBL_GRAVITY
    assert not np.any(model.gravity)


def test_sites_have_their_own_namespace():
    model, info = load("site_named_like_body.xml")
    assert info.frames == {"arm": "site:arm", "hand": "site:hand", "tip": "tip"}
    mj = mj_of("site_named_like_body.xml")
    d = mujoco.MjData(mj)
    m = MujocoMap(model, mj)
    q = dqdyn.random_configuration(model, seed=2)
    d.qpos[:] = m.qpos(q)
    mujoco.mj_kinematics(mj, d)
    for s in range(mj.nsite):
        x = dqdyn.frame_pose(model, q, info.frames[mujoco.mj_id2name(mj, mujoco.mjtObj.mjOBJ_SITE, s)])
        assert np.abs(translation_of(x) - d.site_xpos[s]).max() < 1e-13
        assert np.abs(matrix_from_quat(x[:4]) - d.site_xmat[s].reshape(3, 3)).max() < 1e-13
    # the body keeps its own name
    b = mujoco.mj_name2id(mj, mujoco.mjtObj.mjOBJ_BODY, "hand")
    assert np.abs(translation_of(dqdyn.frame_pose(model, q, "hand")) - d.xpos[b]).max() < 1e-13


def _mj_equality_residual(mj, qpos):
    """MuJoCo's own position residual of its equality constraints at qpos."""
    mj = mujoco.MjModel.from_xml_path(mj) if isinstance(mj, str) else mj
    d = mujoco.MjData(mj)
    d.qpos[:] = qpos
    mujoco.mj_forward(mj, d)
    rows = d.efc_type[: d.nefc] == mujoco.mjtConstraint.mjCNSTR_EQUALITY
    assert rows.any()
    return np.abs(d.efc_pos[: d.nefc][rows]).max()


def test_joint_equalities_with_the_master_later_in_the_tree():
    model, info = load("reverse_joint_equality.xml")
    # left_slide follows right_slide (later): inverted, the earlier joint stays independent
    assert set(model.mimic_joints) == {"right_slide", "finger_hinge"}
    assert model.joint_names == ("a", "left_slide")
    assert {r["name"]: r["as"] for r in info.equalities} == {"mirror": "mimic", "curl": "mimic"}
    mj = mj_of("reverse_joint_equality.xml")
    m = MujocoMap(model, mj)
    for k in range(3):
        q = dqdyn.random_configuration(model, seed=k)
        assert _mj_equality_residual(mj, m.qpos(q)) < 1e-14


def test_polynomial_couplings_and_locks_are_metadata():
    with pytest.warns(UserWarning, match="'quad'.*degree > 1.*'lock'.*locks joint 'j3'"):
        model, info = load_mjcf(corpus("polynomial_equality.xml"), return_info=True)
    assert model.nv == 3 and not model.mimic_joints
    rec = {r["name"]: r for r in info.equalities}
    assert rec["quad"]["polycoef"] == [0, 0.5, 0.2, 0, 0] and rec["quad"]["as"] == "metadata"


@pytest.mark.parametrize("name, kinds", [("connect_loop.xml", ["3d"]), ("weld_loop.xml", ["6d", "6d"])])
def test_connect_and_weld_are_loop_constraints_that_match_mujoco(name, kinds):
    model, info = load(name)
    cons = model_constraints(model)
    assert [c.kind for c in cons] == kinds and cons == info.constraints
    mj = mj_of(name)
    m = MujocoMap(model, mj)
    q0 = m.q(mj.qpos0)
    if name == "connect_loop.xml":  # body2's anchor is taken by MuJoCo's compiler at qpos0
        assert constraint_errors(model, q0, np.zeros(model.nv), cons)[0] < 1e-12
    # on dqdyn's constraint manifold, MuJoCo's own equality residual vanishes too
    rng = np.random.default_rng(4)
    for _ in range(3):
        q = dqdyn.integrate(model, q0, 0.05 * rng.normal(size=model.nv))
        qp, _ = project_state(model, q, np.zeros(model.nv), cons)
        assert _mj_equality_residual(mj, m.qpos(qp)) < 1e-9
        assert _mj_equality_residual(mj, m.qpos(q)) > 1e-4  # (the oracle sees a violation)


def test_tendons_and_actuators_are_metadata_with_one_warning():
    with pytest.warns(UserWarning) as rec:
        model, info = load_mjcf(corpus("tendon.xml"), return_info=True)
    assert len(rec) == 1
    msg = str(rec[0].message)
    for word in ("3 tendon(s)", "'coupling'", "3 actuator(s)", "'te' (tendon", "contacts"):
        assert word in msg, word
    t = {x["name"]: x for x in info.tendons}
    assert t["coupling"]["joints"] == [("j1", 1.0), ("j2", -0.5)] and t["coupling"]["stiffness"] == 2
    assert t["string"]["type"] == "spatial" and t["string"]["path"] == [("site", "s1"), ("site", "s2")]
    a = {x["name"]: x for x in info.actuators}
    assert a["m1"]["transmission"] == "joint" and a["m1"]["target"] == "j1" and a["m1"]["gear"][0] == 50
    assert a["mt"]["target"] == "coupling" and a["p2"]["ctrlrange"] == [-1, 1]
    assert model.nv == 3


def test_armature_from_default_classes():
    model, info = load("armature_default_class.xml")
    mj = mj_of("armature_default_class.xml")
    assert np.array_equal(info.armature, mj.dof_armature)
    assert list(mj.dof_armature) == [0.5, 0.5, 0.02]  # class big, big_wrist inherits, main + own
    if info.armature_applied:
        assert np.array_equal(model.armature, mj.dof_armature)
    else:  # pragma: no cover - a dqdyn without armature
        assert "armature" in info.ignored


def test_mass_welded_to_the_world_is_kept():
    model, _ = load("welded_base.xml")
    mj = mj_of("welded_base.xml")
    # base + plate (welded to the world) are the welded inertia; the tool is merged into link2
    assert model.welded_inertia[0] == pytest.approx(4.5)
    assert model.total_mass + model.welded_inertia[0] == pytest.approx(mj.body_mass.sum(), rel=1e-14)
    assert {"base", "plate", "tool"} <= set(model.frame_names) and model.nbodies == model.nv == 2


def test_one_error_lists_every_unrepresentable_feature():
    with pytest.raises(MJCFError) as e:
        load_mjcf(corpus(os.path.join("refused", "unrepresentable.xml")))
    msg = str(e.value)
    assert "3 feature(s)" in msg and "flex" in msg and "tendon 'heavy'" in msg and "actuator 'geared'" in msg
