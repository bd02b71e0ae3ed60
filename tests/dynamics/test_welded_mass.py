"""Mass welded to a model's world is never lost: a fixed-base robot's base link (UR5: a 4 kg
``base_link`` welded to the world) moves with the robot when the robot is mounted on another
body.  The oracle is ``pinocchio.appendModel`` of Pinocchio's own URDF parse (the base link is
in the universe inertia of the UR5 model and joins the cart's joint when appended)."""

from __future__ import annotations

import os
import sysconfig
import warnings

import numpy as np
import pytest

pin = pytest.importorskip("pinocchio")

import dqdyn  # noqa: E402
from dqdyn.algebra.rotations import pose_from_rt, quat_from_rpy  # noqa: E402
from dqdyn.composition.interconnection import InterconnectionGraph  # noqa: E402
from dqdyn.composition.modular import Assembly  # noqa: E402

ERD = os.path.join(sysconfig.get_paths()["purelib"], "cmeel.prefix", "share", "example-robot-data",
                   "robots")
UR5 = os.path.join(ERD, "ur_description", "urdf", "ur5_robot.urdf")
pytestmark = pytest.mark.skipif(not os.path.exists(UR5), reason="example-robot-data is not installed")

CART_MASS, CART_COM, CART_I = 10.0, np.array([0.1, -0.05, 0.2]), np.diag([0.5, 0.7, 0.9])
TOP_XYZ, TOP_RPY = np.array([0.2, 0.1, 0.3]), np.array([0.1, 0.2, 0.3])


@pytest.fixture(params=["ur5", "ur5, base CoM off its origin"], scope="module")
def urdf(request, tmp_path_factory):
    """The UR5 file, and the same with its base link's CoM moved off the link origin and its
    inertia axes turned (the welded part's CoM is then off the mounting frame)."""
    if request.param == "ur5":
        return UR5
    from lxml import etree

    doc = etree.parse(UR5)
    base = doc.getroot().find("link[@name='base_link']")
    base.find("inertial/origin").attrib.update({"xyz": "0.05 -0.02 0.03", "rpy": "0.1 -0.3 0.2"})
    path = tmp_path_factory.mktemp("welded") / "ur5_offset_base.urdf"
    doc.write(str(path))
    return str(path)


def _ur5(path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return dqdyn.load_urdf(path)


def _cart():
    b = dqdyn.ModelBuilder("cart")
    b.add_body("cart", "world", "free", joint_name="cart", mass=CART_MASS, com=CART_COM,
               inertia=CART_I)
    b.add_frame("top", "cart", xyz=TOP_XYZ, rpy=TOP_RPY)
    return b.build()


def _pin_composite(path):
    ur = pin.buildModelFromUrdf(path)
    cart = pin.Model()
    j = cart.addJoint(0, pin.JointModelFreeFlyer(), pin.SE3.Identity(), "cart")
    cart.appendBodyToJoint(j, pin.Inertia(CART_MASS, CART_COM, CART_I), pin.SE3.Identity())
    top = pin.SE3(pin.rpy.rpyToMatrix(*TOP_RPY), TOP_XYZ)
    f = cart.addFrame(pin.Frame("top", j, 0, top, pin.FrameType.OP_FRAME))
    return pin.appendModel(cart, ur, f, pin.SE3.Identity())


def _states(n=4):
    """dqdyn (q, v, a) of the composite (cart free joint first, then the six UR5 joints) and
    Pinocchio's (q, v, a) of the same state."""
    rng = np.random.default_rng(7)
    for _ in range(n):
        rpy, p = rng.uniform(-1, 1, 3), rng.uniform(-1, 1, 3)
        r = quat_from_rpy(rpy)
        th = rng.uniform(-2, 2, 6)
        v, a = rng.normal(size=(2, 12))
        q = np.concatenate([pose_from_rt(r, p), th])
        w, x, y, z = r
        qp = np.concatenate([p, [x, y, z, w], th])
        yield q, v, a, qp, _to_pin(v), _to_pin(a)


def _to_pin(v):
    """dqdyn's free-joint velocity [ω, v] (body) → Pinocchio's [v, ω] (local); the rest as is."""
    return np.concatenate([v[3:6], v[0:3], v[6:]])


P = np.zeros((12, 12))  # v_pin = P v
P[0:3, 3:6] = P[3:6, 0:3] = np.eye(3)
P[6:, 6:] = np.eye(6)


def _check(path, label, rnea, model=None):
    """τ of ``rnea(q, v, a)`` and, for a monolithic ``model``, M(q) and the total mass, against
    Pinocchio's appendModel."""
    pm = _pin_composite(path)
    pd = pm.createData()
    for q, v, a, qp, vp, ap in _states():
        tau_ref = P.T @ pin.rnea(pm, pd, qp, vp, ap)
        tau = rnea(q, v, a)
        scale = max(1.0, np.abs(tau_ref).max())
        assert np.abs(tau - tau_ref).max() <= 1e-12 * scale, (label, tau - tau_ref)
        if model is not None:
            M_ref = P.T @ pin.crba(pm, pd, qp) @ P
            M_ref = np.triu(M_ref) + np.triu(M_ref, 1).T
            M = dqdyn.mass_matrix(model, q)
            assert np.abs(M - M_ref).max() <= 1e-12 * np.abs(M_ref).max(), (label, M - M_ref)
    if model is not None:
        assert model.total_mass == pytest.approx(pin.computeTotalMass(pm), rel=1e-12), label


def test_the_fixed_base_keeps_its_welded_inertia(urdf):
    ur5 = _ur5(urdf)
    ref = pin.buildModelFromUrdf(urdf).inertias[0]
    m, c, I = ur5.welded_inertia
    assert m == pytest.approx(ref.mass, rel=1e-15)
    np.testing.assert_allclose(c, ref.lever, atol=1e-15)
    np.testing.assert_allclose(I, ref.inertia, atol=1e-15)
    # the welded part does not move: a fixed-base model's dynamics and total mass are unchanged
    assert ur5.total_mass == pytest.approx(pin.computeTotalMass(pin.buildModelFromUrdf(urdf)))


def test_model_builder_add_model(urdf):
    b = dqdyn.ModelBuilder("cart+ur5")
    b.add_model(_cart())
    b.add_model(_ur5(urdf), "top", prefix="ur5/")
    model = b.build()
    _check(urdf, "add_model", lambda q, v, a: dqdyn.rnea(model, q, v, a), model)


def test_model_builder_add_model_with_a_placement(urdf):
    # the UR5's world placed by add_model's own placement at the cart body (no frame between)
    b = dqdyn.ModelBuilder("cart+ur5")
    b.add_model(_cart())
    b.add_model(_ur5(urdf), "cart", xyz=TOP_XYZ, rpy=TOP_RPY, prefix="ur5/")
    model = b.build()
    _check(urdf, "add_model placement", lambda q, v, a: dqdyn.rnea(model, q, v, a), model)


def test_assembly(urdf):
    asm = Assembly("cart+ur5")
    asm.add("cart", _cart())
    asm.add("ur5", _ur5(urdf), parent="cart", at="top")
    _check(urdf, "Assembly.newton_euler", asm.rnea)
    model = asm.build()
    _check(urdf, "Assembly.build", lambda q, v, a: dqdyn.rnea(model, q, v, a), model)


@pytest.mark.parametrize("compiled", [True, False])
def test_interconnection_graph(urdf, compiled):
    g = InterconnectionGraph("cart+ur5")
    g.add("cart", _cart())
    g.add("ur5", _ur5(urdf), parent="cart", at="top")
    _check(urdf, f"InterconnectionGraph.rnea compiled={compiled}",
           lambda q, v, a: g.rnea(q, v, a, compiled=compiled))
    _check(urdf, "InterconnectionGraph.evaluate", lambda q, v, a: g.evaluate(q, v, a).tau)
    model = g.build()
    _check(urdf, "InterconnectionGraph.build", lambda q, v, a: dqdyn.rnea(model, q, v, a), model)


def test_welded_mass_on_a_robot_mounted_on_the_world_is_kept_welded(urdf):
    # mounted on the world, the welded part stays welded: the composite's moving mass and
    # dynamics are the UR5's own, and the welded inertia is carried over
    ur5 = _ur5(urdf)
    b = dqdyn.ModelBuilder("ur5 on the floor")
    b.add_model(ur5, "world", xyz=(1.0, 0.0, 0.0), prefix="ur5/")
    model = b.build()
    assert model.total_mass == pytest.approx(ur5.total_mass)
    m, c, _ = model.welded_inertia
    assert m == pytest.approx(ur5.welded_inertia[0])
    np.testing.assert_allclose(c, ur5.welded_inertia[1] + [1.0, 0.0, 0.0], atol=1e-15)


def test_model_black_box(urdf):
    # the UR5 as a black box with its own (constant) joint state: the cart's generalized
    # forces are Pinocchio's, the welded base included; its mass properties include the base
    from dqdyn.composition.interconnection import ModelBlackBox

    pm = _pin_composite(urdf)
    pd = pm.createData()
    for q, v, a, qp, vp, ap in _states(2):
        g = InterconnectionGraph("cart+ur5 box")
        g.add("cart", _cart())
        g.add("ur5", ModelBlackBox(_ur5(urdf), (q[8:], v[6:], a[6:])), parent="cart", at="top")
        tau_ref = (P.T @ pin.rnea(pm, pd, qp, vp, ap))[:6]
        tau = g.rnea(q[:8], v[:6], a[:6], t=0.0)
        assert np.abs(tau - tau_ref).max() <= 1e-12 * max(1.0, np.abs(tau_ref).max())
    box = ModelBlackBox(_ur5(urdf), (np.zeros(6), np.zeros(6), np.zeros(6)))
    assert box.mass_properties[0] == pytest.approx(pin.computeTotalMass(pm) - CART_MASS)


# ---------------------------------------------------------------- one home for both loaders
#: the same fixed-base robot as URDF and as MJCF: a base link with an off-origin, turned inertia,
#: a plate fixed to it (welded to the world with it), two revolute joints and a welded tool
WELDED_URDF = """<robot name="welded">
  <link name="base_link"><inertial><origin xyz="0.02 0.01 0.05" rpy="0.1 -0.3 0.2"/><mass value="4"/>
    <inertia ixx="0.0044" ixy="0.0003" ixz="0" iyy="0.0054" iyz="-0.0002" izz="0.0072"/></inertial></link>
  <link name="plate"><inertial><origin xyz="0.01 0 0"/><mass value="0.5"/>
    <inertia ixx="0.001" ixy="0" ixz="0" iyy="0.002" iyz="0" izz="0.0025"/></inertial></link>
  <joint name="plate_fix" type="fixed"><parent link="base_link"/><child link="plate"/>
    <origin xyz="0 0 0.1" rpy="0.1 0 0.2"/></joint>
  <link name="link1"><inertial><origin xyz="0 0.02 0.1"/><mass value="3.7"/>
    <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.012" iyz="0" izz="0.0067"/></inertial></link>
  <joint name="shoulder" type="revolute"><parent link="plate"/><child link="link1"/>
    <origin xyz="0 0 0.02"/><axis xyz="0 0 1"/>
    <limit lower="-3.2" upper="3.2" effort="10" velocity="5"/></joint>
  <link name="link2"><inertial><origin xyz="0.2 0 0"/><mass value="2.3"/>
    <inertia ixx="0.004" ixy="0" ixz="0" iyy="0.03" iyz="0" izz="0.03"/></inertial></link>
  <joint name="elbow" type="revolute"><parent link="link1"/><child link="link2"/>
    <origin xyz="0 0.1 0.15"/><axis xyz="0 1 0"/>
    <limit lower="-3.2" upper="3.2" effort="10" velocity="5"/></joint>
  <link name="tool"><inertial><origin xyz="0 0.01 0.02"/><mass value="0.3"/>
    <inertia ixx="0.0003" ixy="0" ixz="0" iyy="0.0003" iyz="0" izz="0.0001"/></inertial></link>
  <joint name="tool_fix" type="fixed"><parent link="link2"/><child link="tool"/>
    <origin xyz="0.4 0 0" rpy="0.3 0.2 0.1"/></joint>
</robot>"""
WELDED_MJCF = """<mujoco model="welded"><compiler angle="radian" eulerseq="XYZ"/><worldbody>
  <body name="base_link">
    <inertial pos="0.02 0.01 0.05" mass="4" fullinertia="{base_inertia}"/>
    <body name="plate" pos="0 0 0.1" euler="0.1 0 0.2">
      <inertial pos="0.01 0 0" mass="0.5" diaginertia="0.001 0.002 0.0025"/>
      <body name="link1" pos="0 0 0.02"><joint name="shoulder" axis="0 0 1"/>
        <inertial pos="0 0.02 0.1" mass="3.7" diaginertia="0.01 0.012 0.0067"/>
        <body name="link2" pos="0 0.1 0.15"><joint name="elbow" axis="0 1 0"/>
          <inertial pos="0.2 0 0" mass="2.3" diaginertia="0.004 0.03 0.03"/>
          <body name="tool" pos="0.4 0 0" euler="0.3 0.2 0.1">
            <inertial pos="0 0.01 0.02" mass="0.3" diaginertia="0.0003 0.0003 0.0001"/></body>
        </body>
      </body>
    </body>
  </body>
</worldbody></mujoco>"""


def test_urdf_and_mjcf_keep_the_welded_base_in_the_same_place():
    """Both loaders put the mass welded to the world into ``Model.welded_inertia`` (no body, no
    joint; the link names stay frames), so the same robot mounted on the cart has the same
    dynamics from either file, and Pinocchio's appendModel of the URDF."""
    pytest.importorskip("mujoco")
    from dqdyn.algebra.rotations import matrix_from_quat

    R = matrix_from_quat(quat_from_rpy([0.1, -0.3, 0.2]))  # the URDF base inertia's rpy
    Ib = R @ np.array([[0.0044, 0.0003, 0], [0.0003, 0.0054, -0.0002], [0, -0.0002, 0.0072]]) @ R.T
    full = " ".join(repr(float(Ib[i, j])) for i, j in ((0, 0), (1, 1), (2, 2), (0, 1), (0, 2), (1, 2)))
    u = dqdyn.load_urdf(WELDED_URDF)
    m = dqdyn.load_mjcf(WELDED_MJCF.format(base_inertia=full))
    assert u.body_names == m.body_names == ("world", "link1", "link2")
    for a, b in zip(u.welded_inertia, m.welded_inertia):
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-15)
    assert u.welded_inertia[0] == pytest.approx(4.5) and u.total_mass == pytest.approx(m.total_mass)
    q = np.array([0.3, -0.8])
    for f in ("base_link", "plate", "tool"):
        np.testing.assert_allclose(dqdyn.frame_pose(u, q, f), dqdyn.frame_pose(m, q, f), atol=1e-15)
    mounted = []
    for model in (u, m):
        b = dqdyn.ModelBuilder("cart+arm")
        b.add_model(_cart())
        b.add_model(model, "top", prefix="ur5/")
        mounted.append(b.build())
    pm = _pin_composite_of(WELDED_URDF)
    pd = pm.createData()
    rng = np.random.default_rng(3)
    for _ in range(3):
        rpy, p = rng.uniform(-1, 1, (2, 3))
        r = quat_from_rpy(rpy)
        th = rng.uniform(-2, 2, 2)
        v, a = rng.normal(size=(2, 8))
        qc = np.concatenate([pose_from_rt(r, p), th])
        w, x, y, z = r
        qp = np.concatenate([p, [x, y, z, w], th])
        Pv = P[:8, :8]
        tau_ref = Pv.T @ pin.rnea(pm, pd, qp, Pv @ v, Pv @ a)
        for model in mounted:
            tau = dqdyn.rnea(model, qc, v, a)
            assert np.abs(tau - tau_ref).max() <= 1e-12 * max(1.0, np.abs(tau_ref).max())


def _pin_composite_of(urdf_xml):
    ur = pin.buildModelFromXML(urdf_xml)
    cart = pin.Model()
    j = cart.addJoint(0, pin.JointModelFreeFlyer(), pin.SE3.Identity(), "cart")
    cart.appendBodyToJoint(j, pin.Inertia(CART_MASS, CART_COM, CART_I), pin.SE3.Identity())
    top = pin.SE3(pin.rpy.rpyToMatrix(*TOP_RPY), TOP_XYZ)
    f = cart.addFrame(pin.Frame("top", j, 0, top, pin.FrameType.OP_FRAME))
    return pin.appendModel(cart, ur, f, pin.SE3.Identity())
