"""Mass welded to the world in MJCF models: a massive base body with no joint under
``<worldbody>`` (and a plate welded to it) becomes ``Model.welded_inertia``, as a URDF fixed
base; bodies welded inside the tree are merged into their moving parent; every MuJoCo body name
stays a frame.  Oracles: MuJoCo's compiled body inertias (``xipos``, ``ximat``,
``body_inertia``), ``mj_inverse`` / ``qfrc_bias`` / ``mj_fullM`` of the fixed-base model, and of
the same bodies placed under a free-joint body for the model mounted on a moving base
(``ModelBuilder.add_model``, ``Assembly``, ``InterconnectionGraph``)."""

from __future__ import annotations

import numpy as np
import pytest

mujoco = pytest.importorskip("mujoco")

import dqdyn  # noqa: E402
from dqdyn.algebra.rotations import matrix_from_quat, pose_from_rt, translation_of  # noqa: E402
from dqdyn.composition.interconnection import InterconnectionGraph  # noqa: E402
from dqdyn.composition.modular import Assembly  # noqa: E402
from dqdyn.parsers.mjcf import MujocoMap, load_mjcf  # noqa: E402

GRAVITY = (0.3, -0.2, -9.81)
#: a 4 kg base with its CoM off the body origin and turned principal axes, a plate welded to it,
#: a hinge–slide–hinge arm and a tool welded to the last link
ARM = """
    <body name="base" pos="0.1 -0.05 0.1" quat="0.9 0 0.1 0.3">
      <inertial pos="0.02 0.01 0.05" quat="0.8 0.2 0.1 0.3" mass="4" diaginertia="0.0044 0.0054 0.0072"/>
      <body name="plate" pos="0 0 0.1" euler="0.1 0 0.2">
        <geom type="box" size="0.06 0.04 0.01" pos="0.01 0 0" mass="0.5"/>
        <body name="link1" pos="0 0 0.02">
          <joint name="shoulder" axis="0 0 1"/>
          <inertial pos="0 0.02 0.1" mass="3.7" diaginertia="0.01 0.012 0.0067"/>
          <body name="link2" pos="0 0.1 0.15">
            <joint name="elbow" axis="0 1 0" pos="0 0.02 0"/>
            <inertial pos="0.2 0 0" mass="2.3" diaginertia="0.004 0.03 0.03"/>
            <body name="slider" pos="0.3 0 0">
              <joint name="extend" type="slide" axis="1 0 0.2"/>
              <inertial pos="0.05 0 0" mass="0.6" diaginertia="0.001 0.002 0.002"/>
              <body name="tool" pos="0.1 0 0" euler="0.3 0.2 0.1">
                <geom type="box" size="0.03 0.02 0.05" pos="0 0.01 0.02" mass="0.3"/>
              </body>
            </body>
          </body>
        </body>
      </body>
    </body>"""
CART_MASS, CART_COM, CART_I = 10.0, (0.1, -0.05, 0.2), (0.5, 0.7, 0.9)
TOP_XYZ, TOP_QUAT = (0.2, 0.1, 0.3), (0.8, 0.1, -0.3, 0.4)


def _doc(body):
    return (f'<mujoco model="welded"><option gravity="{" ".join(map(str, GRAVITY))}">'
            f'<flag contact="disable"/></option><worldbody>{body}</worldbody></mujoco>')


def _on_cart(mount="cart"):
    """The arm under a free-joint cart (``mount="top"``: under a massless frame on the cart)."""
    inner = ARM if mount == "cart" else (f'<body name="top" pos="{" ".join(map(str, TOP_XYZ))}" '
                                         f'quat="{" ".join(map(str, TOP_QUAT))}">{ARM}</body>')
    return _doc(f'<body name="cart"><freejoint name="cart"/><inertial pos="{" ".join(map(str, CART_COM))}" '
                f'mass="{CART_MASS}" diaginertia="{" ".join(map(str, CART_I))}"/>{inner}</body>')


def _rel(a, b):
    return np.abs(np.asarray(a) - b).max() / max(1.0, np.abs(b).max())


def _mujoco(mj, mm, q, v, a):
    """MuJoCo's τ (mj_inverse), C v + g (qfrc_bias) and M (mj_fullM) in dqdyn's coordinates.
    dqdyn's bias is τ at a = 0, where MuJoCo's qacc is Ġ v (a free joint's ``v̇_world`` holds
    ``R (ω × v^b)``): ``Gᵀ (qfrc_bias + M_mj Ġ v)``."""
    d = mujoco.MjData(mj)
    d.qpos[:], d.qvel[:], d.qacc[:] = mm.qpos(q), mm.qvel(q, v), mm.qacc(q, v, a)
    mujoco.mj_inverse(mj, d)
    M = np.zeros((mj.nv, mj.nv))
    mujoco.mj_fullM(mj, d, M)
    bias = mm.tau(q, d.qfrc_bias + M @ mm.qacc(q, v, np.zeros_like(v)))
    return mm.tau(q, d.qfrc_inverse), bias, mm.mass_matrix(q, M), d


def _states(model, n=4, seed=0):
    rng = np.random.default_rng(seed)
    for _ in range(n):
        yield dqdyn.random_configuration(model, seed=rng), rng.normal(size=model.nv), rng.normal(size=model.nv)


@pytest.fixture(scope="module")
def arm():
    return load_mjcf(_doc(ARM))


@pytest.fixture(scope="module")
def mj_arm():
    return mujoco.MjModel.from_xml_string(_doc(ARM))


def _bid(mj, name):
    return mujoco.mj_name2id(mj, mujoco.mjtObj.mjOBJ_BODY, name)


def test_welded_base_is_the_welded_inertia(arm, mj_arm):
    mj = mj_arm
    assert arm.nbodies == arm.nv == 3 and arm.body_names == ("world", "link1", "link2:elbow", "slider")
    assert not any(n.endswith("__weld") for n in arm.joint_names_all)
    d = mujoco.MjData(mj)
    mujoco.mj_kinematics(mj, d)
    ids = [_bid(mj, "base"), _bid(mj, "plate")]
    m = mj.body_mass[ids].sum()
    c = (mj.body_mass[ids, None] * d.xipos[ids]).sum(0) / m
    inertia = np.zeros((3, 3))
    for b in ids:
        R, r = d.ximat[b].reshape(3, 3), d.xipos[b] - c
        inertia += R @ np.diag(mj.body_inertia[b]) @ R.T + mj.body_mass[b] * (r @ r * np.eye(3) - np.outer(r, r))
    wm, wc, wI = arm.welded_inertia
    assert wm == pytest.approx(m, rel=1e-15)
    np.testing.assert_allclose(wc, c, rtol=0, atol=1e-15)
    np.testing.assert_allclose(wI, inertia, rtol=0, atol=1e-15)
    # the moving mass: links and the tool merged into the slider; all of it is MuJoCo's
    assert arm.total_mass == pytest.approx(mj.body_mass.sum() - m, rel=1e-15)
    assert arm.mass[arm.body_index("slider")] == pytest.approx(0.9, rel=1e-15)


def test_fixed_base_dynamics_and_frames_match_mujoco(arm, mj_arm):
    mm = MujocoMap(arm, mj_arm)
    for q, v, a in _states(arm):
        tau_mj, bias_mj, M_mj, d = _mujoco(mj_arm, mm, q, v, a)
        assert _rel(dqdyn.rnea(arm, q, v, a), tau_mj) < 1e-12
        assert _rel(dqdyn.nonlinear_effects(arm, q, v), bias_mj) < 1e-12
        assert _rel(dqdyn.mass_matrix(arm, q), M_mj) < 1e-12
        for b in range(1, mj_arm.nbody):  # welded bodies' names resolve, at MuJoCo's poses
            x = dqdyn.frame_pose(arm, q, mujoco.mj_id2name(mj_arm, mujoco.mjtObj.mjOBJ_BODY, b))
            assert np.abs(translation_of(x) - d.xpos[b]).max() < 1e-14
            assert np.abs(matrix_from_quat(x[:4]) - d.xmat[b].reshape(3, 3)).max() < 1e-14


def _cart():
    b = dqdyn.ModelBuilder("cart", gravity=GRAVITY)
    b.add_body("cart", "world", "free", joint_name="cart", mass=CART_MASS, com=CART_COM,
               inertia=list(CART_I))
    b.add_frame("top", "cart", pose_from_rt(np.array(TOP_QUAT) / np.linalg.norm(TOP_QUAT), TOP_XYZ))
    return b.build()


def _composites(arm, at):
    """``(label, rnea, model or None)`` of the arm mounted at frame ``at`` of the cart."""
    b = dqdyn.ModelBuilder("cart+arm", gravity=GRAVITY)
    b.add_model(_cart())
    b.add_model(arm, at, prefix="arm/")
    mono = b.build()
    yield "add_model", lambda q, v, a: dqdyn.rnea(mono, q, v, a), mono
    asm = Assembly("cart+arm", gravity=GRAVITY)
    asm.add("cart", _cart())
    asm.add("arm", arm, parent="cart", at=at)
    yield "Assembly.newton_euler", asm.rnea, None
    yield "Assembly.build", (lambda m: lambda q, v, a: dqdyn.rnea(m, q, v, a))(asm.build()), asm.build()
    g = InterconnectionGraph("cart+arm", gravity=GRAVITY)
    g.add("cart", _cart())
    g.add("arm", arm, parent="cart", at=at)
    yield "InterconnectionGraph compiled", lambda q, v, a: g.rnea(q, v, a, compiled=True), None
    yield "InterconnectionGraph Python", lambda q, v, a: g.rnea(q, v, a, compiled=False), None
    yield "InterconnectionGraph.build", (lambda m: lambda q, v, a: dqdyn.rnea(m, q, v, a))(g.build()), g.build()


@pytest.mark.parametrize("at", ["cart", "top"])
def test_mounted_on_a_free_base_matches_mujoco(arm, at):
    """The arm's welded base rides on the cart: MuJoCo's model with the same bodies under a
    free-joint body (its state maps from the loaded composite, whose q / v layout is the cart's
    free joint, then the arm's joints)."""
    xml = _on_cart(at)
    mj = mujoco.MjModel.from_xml_string(xml)
    mm = MujocoMap(load_mjcf(xml), mj)
    for label, rnea, model in _composites(arm, at):
        if model is not None:
            assert model.total_mass == pytest.approx(mj.body_mass.sum(), rel=1e-14), label
            assert model.welded_inertia[0] == 0.0, label
        for q, v, a in _states(mm.model, 3, seed=1):
            tau_mj, bias_mj, M_mj, _ = _mujoco(mj, mm, q, v, a)
            assert _rel(rnea(q, v, a), tau_mj) < 1e-12, label
            if model is not None:
                assert _rel(dqdyn.nonlinear_effects(model, q, v), bias_mj) < 1e-12, label
                assert _rel(dqdyn.mass_matrix(model, q), M_mj) < 1e-12, label
                for n in ("base", "plate", "tool"):
                    x = dqdyn.frame_pose(model, q, "arm/" + n)
                    np.testing.assert_allclose(x, dqdyn.frame_pose(mm.model, q, n), rtol=0, atol=1e-13)


def test_mounted_on_the_world_stays_welded(arm):
    b = dqdyn.ModelBuilder("arm on the floor", gravity=GRAVITY)
    b.add_model(arm, "world", xyz=(1.0, 0.0, 0.0), prefix="arm/")
    model = b.build()
    assert model.total_mass == pytest.approx(arm.total_mass)
    m, c, inertia = model.welded_inertia
    assert m == pytest.approx(arm.welded_inertia[0])
    np.testing.assert_allclose(c, arm.welded_inertia[1] + [1.0, 0.0, 0.0], atol=1e-15)
    np.testing.assert_allclose(inertia, arm.welded_inertia[2], atol=1e-15)
    for q, v, a in _states(arm, 2):  # a translated fixed base: the same dynamics
        assert _rel(dqdyn.rnea(model, q, v, a), dqdyn.rnea(arm, q, v, a)) < 1e-13
