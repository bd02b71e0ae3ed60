"""load_mjcf against MuJoCo itself: mj_inverse (rnea), mj_fullM (M) and body poses (xpos / xquat)
on MJCF models written here that cover hinge, slide, ball and free joints, joint anchors and
references, several joints in one body, welded (fixed) bodies, geom-derived inertias, sites and
linear joint equalities (mimic)."""

from __future__ import annotations

import numpy as np
import pytest

mujoco = pytest.importorskip("mujoco")

import dqdyn  # noqa: E402
from dqdyn.algebra.rotations import matrix_from_quat, translation_of  # noqa: E402
from dqdyn.errors import MJCFError  # noqa: E402
from dqdyn.parsers.mjcf import MujocoMap, load_mjcf  # noqa: E402

HEAD = """<mujoco model="{name}">
  <compiler angle="radian" autolimits="true" {compiler}/>
  <option gravity="0.3 -0.2 -9.81"><flag contact="disable"/></option>
  <worldbody>
"""
TAIL = "  </worldbody>\n{extra}</mujoco>\n"


def mjcf(name, body, compiler="", extra=""):
    return HEAD.format(name=name, compiler=compiler) + body + TAIL.format(extra=extra)


MODELS = {
    # hinge chain: anchors off the body origin, refs, full inertias, an off-origin inertial frame
    "hinge_chain": mjcf("hinge_chain", """
    <body name="l1" pos="0 0 0.1" quat="0.9 0.1 0.2 0.3">
      <joint name="j1" type="hinge" axis="0 0 1" pos="0.05 0 0" ref="0.3" range="-2 2"/>
      <inertial pos="0.1 0.02 -0.03" mass="1.3" fullinertia="0.03 0.025 0.02 0.002 -0.001 0.003"/>
      <body name="l2" pos="0.3 0 0" euler="0.4 -0.2 0.1">
        <joint name="j2" type="hinge" axis="0.2 1 0.1" pos="0 0.02 0.01"/>
        <inertial pos="0.15 0 0.01" quat="0.7 0.1 -0.7 0.1" mass="0.8" diaginertia="0.02 0.015 0.008"/>
        <body name="l3" pos="0.3 0.05 0">
          <joint name="j3" type="hinge" axis="1 0 0" ref="-0.7"/>
          <geom type="capsule" fromto="0 0 0 0.2 0 0.05" size="0.03" density="900"/>
          <site name="tip" pos="0.2 0 0.05"/>
        </body>
      </body>
    </body>
"""),
    # slides and several joints in one body (a planar-like base), welded children with mass
    "slide_multi": mjcf("slide_multi", """
    <body name="base" pos="0.1 0.2 0.3">
      <joint name="bx" type="slide" axis="1 0 0" ref="0.2"/>
      <joint name="by" type="slide" axis="0 1 0"/>
      <joint name="bphi" type="hinge" axis="0 0 1" pos="0.05 -0.02 0"/>
      <inertial pos="0 0 0.05" mass="5" diaginertia="0.2 0.3 0.4"/>
      <body name="plate" pos="0.2 0 0.1" euler="0.3 0 0">
        <inertial pos="0.01 0.02 0" mass="0.7" diaginertia="0.01 0.02 0.025"/>
        <body name="arm" pos="0 0 0.1">
          <joint name="lift" type="slide" axis="0.3 0.1 1" ref="-0.1" range="-0.2 0.5"/>
          <joint name="yaw" type="hinge" axis="0 0 1"/>
          <geom type="box" size="0.05 0.04 0.2" pos="0 0 0.2" mass="1.1"/>
        </body>
      </body>
    </body>
"""),
    # ball joints (with an anchor) mixed with hinges
    "ball_tree": mjcf("ball_tree", """
    <body name="torso" pos="0 0 1">
      <joint name="shoulder" type="ball" pos="0 0 0.05"/>
      <geom type="ellipsoid" size="0.1 0.15 0.2" mass="2"/>
      <body name="upper" pos="0.2 0 0" quat="0.8 0 0.6 0">
        <joint name="elbow" type="hinge" axis="0 1 0"/>
        <inertial pos="0.1 0 0" mass="0.9" diaginertia="0.01 0.03 0.03"/>
        <body name="hand" pos="0.25 0 0">
          <joint name="wrist" type="ball"/>
          <inertial pos="0.03 0.01 0" quat="0.5 0.5 0.5 0.5" mass="0.4" diaginertia="0.002 0.003 0.0045"/>
        </body>
      </body>
      <body name="other" pos="-0.2 0 0">
        <joint name="side" type="ball" pos="0.01 0.02 0.03"/>
        <inertial pos="-0.1 0 0" mass="0.6" diaginertia="0.006 0.01 0.01"/>
      </body>
    </body>
"""),
    # floating base (free joint) with legs: hinges, a ball, a slide, a welded foot; geom inertias
    "floating": mjcf("floating", """
    <body name="static" pos="0 0 0.5"><geom type="sphere" size="0.1"/></body>
    <body name="trunk" pos="0.1 -0.2 0.8" quat="0.9 0.3 0.1 0.2">
      <freejoint name="root"/>
      <geom type="box" size="0.3 0.15 0.1" density="500"/>
      <geom type="sphere" size="0.05" pos="0.3 0 0.1" density="2000"/>
      <body name="thigh" pos="0.25 0.15 -0.1">
        <joint name="hip" type="ball" pos="0 0 0.02"/>
        <geom type="capsule" fromto="0 0 0 0 0 -0.3" size="0.04" density="800"/>
        <body name="shin" pos="0 0 -0.3">
          <joint name="knee" type="hinge" axis="0 1 0" ref="0.4"/>
          <geom type="capsule" fromto="0 0 0 0.05 0 -0.3" size="0.03" density="800"/>
          <body name="foot" pos="0.05 0 -0.3" euler="0 0.3 0">
            <geom type="box" size="0.08 0.04 0.02" density="1000"/>
          </body>
        </body>
      </body>
      <body name="tail" pos="-0.3 0 0">
        <joint name="tail_slide" type="slide" axis="-1 0 0.2"/>
        <inertial pos="-0.05 0 0" mass="0.3" diaginertia="0.001 0.002 0.002"/>
      </body>
    </body>
"""),
    # a second free body beside a fixed-base arm, plus a welded-to-world body carrying an arm
    "two_roots": mjcf("two_roots", """
    <body name="ball" pos="1 0 1">
      <freejoint/>
      <inertial pos="0.02 -0.01 0.03" quat="0.9 0.1 0.3 0.2" mass="0.5" diaginertia="0.003 0.004 0.005"/>
    </body>
    <body name="pedestal" pos="0 0 0.2" euler="0 0 0.5">
      <inertial pos="0 0 0" mass="10" diaginertia="1 1 1"/>
      <body name="a1" pos="0 0 0.2">
        <joint type="hinge" axis="0 0 1"/>
        <inertial pos="0 0.1 0" mass="1" diaginertia="0.01 0.01 0.01"/>
        <body name="a2" pos="0 0.2 0">
          <joint type="slide" axis="0 1 0"/>
          <joint type="hinge" axis="1 0 0" pos="0 0.03 0"/>
          <inertial pos="0 0.1 0.02" mass="0.7" diaginertia="0.004 0.005 0.006"/>
        </body>
      </body>
    </body>
"""),
}

MIMIC = mjcf("mimic", """
    <body name="l1">
      <joint name="m1" type="hinge" axis="0 0 1" ref="0.2"/>
      <inertial pos="0.1 0 0" mass="1" diaginertia="0.01 0.02 0.02"/>
      <body name="l2" pos="0.3 0 0">
        <joint name="m2" type="hinge" axis="0 1 0" ref="-0.3"/>
        <inertial pos="0.1 0 0" mass="0.8" diaginertia="0.01 0.02 0.02"/>
        <body name="finger" pos="0.2 0 0">
          <joint name="m3" type="slide" axis="1 0 0" ref="0.05"/>
          <inertial pos="0.02 0 0" mass="0.3" diaginertia="0.001 0.002 0.002"/>
        </body>
      </body>
    </body>
""", extra="""  <equality>
    <joint joint1="m2" joint2="m1" polycoef="0.1 -1.5 0 0 0"/>
    <joint joint1="m3" joint2="m2" polycoef="0.01 0.2 0 0 0"/>
  </equality>
""")


def _mj(xml):
    mj = mujoco.MjModel.from_xml_string(xml)
    mj.opt.disableflags |= int(mujoco.mjtDisableBit.mjDSBL_EQUALITY)
    return mj


def _states(model, n, seed):
    rng = np.random.default_rng(seed)
    for _ in range(n):
        yield (dqdyn.random_configuration(model, seed=int(rng.integers(1 << 30))),
               rng.normal(size=model.nv), rng.normal(size=model.nv))


def _mj_rnea_M(mj, m, q, v, a):
    d = mujoco.MjData(mj)
    d.qpos[:], d.qvel[:], d.qacc[:] = m.qpos(q), m.qvel(q, v), m.qacc(q, v, a)
    mujoco.mj_inverse(mj, d)
    M = np.zeros((mj.nv, mj.nv))
    mujoco.mj_fullM(mj, d, M)
    return m.tau(q, d.qfrc_inverse), m.mass_matrix(q, M), d


@pytest.mark.parametrize("key", sorted(MODELS) + ["mimic"])
def test_load_mjcf_matches_mujoco(key):
    xml = MIMIC if key == "mimic" else MODELS[key]
    model = load_mjcf(xml)
    mj = _mj(xml)
    m = MujocoMap(model, mj)
    assert model.nv == mj.nv - (2 if key == "mimic" else 0)
    for q, v, a in _states(model, 5, hash(key) % 1000):
        tau_mj, M_mj, d = _mj_rnea_M(mj, m, q, v, a)
        tau = dqdyn.rnea(model, q, v, a)
        M = dqdyn.mass_matrix(model, q)
        scale = max(1.0, np.abs(tau_mj).max())
        assert np.abs(tau - tau_mj).max() < 1e-10 * scale, (key, tau, tau_mj)
        assert np.abs(M - M_mj).max() < 1e-10 * max(1.0, np.abs(M_mj).max())
        # every MuJoCo body frame is a dqdyn frame with the same pose
        for b in range(1, mj.nbody):
            x = dqdyn.frame_pose(model, q, mujoco.mj_id2name(mj, mujoco.mjtObj.mjOBJ_BODY, b) or f"body{b}")
            assert np.abs(translation_of(x) - d.xpos[b]).max() < 1e-12
            assert np.abs(matrix_from_quat(x[:4]) - d.xmat[b].reshape(3, 3)).max() < 1e-12
        # the state maps invert each other
        assert np.abs(m.q(m.qpos(q)) - q).max() < 1e-14
        assert np.abs(m.v(m.qpos(q), m.qvel(q, v)) - v).max() < 1e-13


def test_load_mjcf_structure():
    model = load_mjcf(MODELS["floating"])
    assert model.joint_type_name("root") == "free"
    assert model.joint_type_name("hip") == "spherical"
    # the welded foot is merged into the shin; the body welded to the world is a frame and its
    # mass is the model's welded inertia (no body, no joint)
    assert "foot" in model.frame_names and "foot" not in model.body_names
    assert "static" in model.frame_names and "static" not in model.body_names
    assert not any(n.endswith("__weld") for n in model.joint_names_all)
    mj = mujoco.MjModel.from_xml_string(MODELS["floating"])
    static = mujoco.mj_name2id(mj, mujoco.mjtObj.mjOBJ_BODY, "static")
    assert model.welded_inertia[0] == pytest.approx(mj.body_mass[static], rel=1e-14)
    assert model.total_mass + model.welded_inertia[0] == pytest.approx(mj.body_mass.sum(), rel=1e-14)
    # a hinge with an anchor: the dqdyn body sits at the anchor, the MuJoCo body frame is a frame
    ch = load_mjcf(MODELS["hinge_chain"])
    assert "l1:j1" in ch.body_names and "l1" in ch.frame_names and "tip" in ch.frame_names
    lim = ch.q_slice("j1")
    assert ch.q_lower[lim.start] == -2 and ch.q_upper[lim.start] == 2
    # several joints in one body: a chain of bodies, massless but the last
    sm = load_mjcf(MODELS["slide_multi"])
    assert sm.joint_names[:3] == ("bx", "by", "bphi")
    assert sm.mass[sm.body_index("base:bx")] == 0.0


def test_load_mjcf_mimic_joints():
    model = load_mjcf(MIMIC)
    assert set(model.mimic_joints) == {"m2", "m3"}
    assert model.nq == 1
    # m3 follows m2 follows m1: composed onto m1
    i3 = model.joint_names_all.index("m3")
    assert model.mimic_scale[i3] == pytest.approx(0.2 * -1.5)


def test_load_mjcf_from_path_and_spec(tmp_path):
    p = tmp_path / "arm.xml"
    p.write_text(MODELS["ball_tree"])
    a, b = load_mjcf(p), load_mjcf(mujoco.MjSpec.from_string(MODELS["ball_tree"]))
    c = load_mjcf(mujoco.MjModel.from_xml_path(str(p)))
    q = dqdyn.random_configuration(a, seed=3)
    assert np.array_equal(dqdyn.mass_matrix(a, q), dqdyn.mass_matrix(b, q))
    assert np.array_equal(dqdyn.mass_matrix(a, q), dqdyn.mass_matrix(c, q))


ARM = """
    <body name="l1">
      <joint name="j1" type="hinge" axis="0 0 1" {jattr}/>
      <inertial pos="0.1 0 0" mass="1" diaginertia="0.01 0.02 0.02"/>
      <site name="{site}"/>
      <body name="l2" pos="0.3 0 0">
        <joint name="j2" type="hinge" axis="0 1 0"/>
        <inertial pos="0.1 0 0" mass="1" diaginertia="0.01 0.02 0.02"/>
        <site name="s2"/>
      </body>
    </body>
"""


def test_load_mjcf_unrepresentable_features_are_one_named_error():
    xml = mjcf("bad", ARM.format(jattr="", site="s1"), extra=(
        '<tendon><fixed name="t" armature="0.2"><joint joint="j1" coef="1"/></fixed></tendon>\n'
        '<actuator><motor name="m" tendon="t" armature="0.1"/></actuator>\n'))
    with pytest.raises(MJCFError, match="2 feature.*actuator 'm'.*tendon 't'"):
        load_mjcf(xml)
    # the tendon's own armature is dropped with ignore=("tendon",); the actuator's stays refused
    with pytest.raises(MJCFError, match="1 feature.*actuator 'm'"):
        load_mjcf(xml, ignore=("tendon",))


def test_load_mjcf_ignore_and_the_one_warning():
    xml = mjcf("ok", ARM.format(jattr='armature="0.1" damping="0.3"', site="s1"),
               extra='<tendon><fixed name="t"><joint joint="j1" coef="1"/></fixed></tendon>\n')
    with pytest.warns(UserWarning) as rec:
        model = load_mjcf(xml, ignore=("armature", "tendon"))
    assert len(rec) == 1 and "damping (e.g. on 'j1')" in str(rec[0].message)
    assert "tendon" not in str(rec[0].message) and "armature" not in str(rec[0].message)
    assert model.nv == 2 and not model.armature.any()
    with pytest.raises(MJCFError, match="ignore entries"):
        load_mjcf(xml, ignore=("geoms",))


def test_load_mjcf_bad_input(tmp_path):
    with pytest.raises(MJCFError, match="does not exist"):
        load_mjcf(tmp_path / "nope.xml")
    with pytest.raises(MJCFError, match="cannot compile"):
        load_mjcf("<mujoco><worldbody><body><joint type='twist'/></body></worldbody></mujoco>")
    with pytest.raises(MJCFError, match="source must be"):
        load_mjcf(3.0)
