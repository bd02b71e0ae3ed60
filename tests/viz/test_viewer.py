"""dqdyn.viz: URDF visuals (primitives, package:// meshes through package_dirs and
ROS_PACKAGE_PATH, a missing mesh → warning + primitive), inertia-equivalent boxes against trimesh's
box inertia, the scene graph (one node per link, posed by forward kinematics), trajectory slider,
and a real browser: headless Chromium renders the page and the robot is in the pixels."""

from __future__ import annotations

import os
import warnings

import numpy as np
import pytest

viser = pytest.importorskip("viser")
trimesh = pytest.importorskip("trimesh")

import dqdyn  # noqa: E402
from dqdyn.algebra.rotations import translation_of  # noqa: E402
from dqdyn.viz import Viewer, inertia_box, inertia_boxes, resolve_uri, urdf_visuals  # noqa: E402

from _browser import Page, chromium  # noqa: E402
from _browser import free_port as _port

URDF = """<?xml version="1.0"?>
<robot name="viz_arm">
  <material name="orange"><color rgba="1 0.5 0 1"/></material>
  <link name="base"><visual><geometry><box size="0.3 0.3 0.1"/></geometry></visual></link>
  <joint name="j1" type="revolute"><parent link="base"/><child link="l1"/>
    <origin xyz="0 0 0.05"/><axis xyz="0 0 1"/><limit lower="-3" upper="3" effort="1" velocity="1"/></joint>
  <link name="l1">
    <inertial><mass value="2"/><origin xyz="0 0 0.2"/><inertia ixx="0.03" iyy="0.03" izz="0.005" ixy="0" ixz="0" iyz="0"/></inertial>
    <visual><origin xyz="0 0 0.2"/><geometry><cylinder radius="0.05" length="0.4"/></geometry><material name="orange"/></visual>
  </link>
  <joint name="j2" type="revolute"><parent link="l1"/><child link="l2"/>
    <origin xyz="0 0 0.4"/><axis xyz="0 1 0"/><limit lower="-3" upper="3" effort="1" velocity="1"/></joint>
  <link name="l2">
    <inertial><mass value="1.5"/><origin xyz="0.15 0 0"/><inertia ixx="0.002" iyy="0.02" izz="0.02" ixy="0" ixz="0" iyz="0"/></inertial>
    <visual><origin xyz="0.15 0 0" rpy="0 1.5708 0"/><geometry><mesh filename="package://vizpkg/meshes/l2.stl" scale="1 1 1"/></geometry>
      <material name="blue"><color rgba="0.1 0.3 0.9 1"/></material></visual>
  </link>
  <joint name="j3" type="revolute"><parent link="l2"/><child link="l3"/>
    <origin xyz="0.3 0 0"/><axis xyz="0 1 0"/><limit lower="-3" upper="3" effort="1" velocity="1"/></joint>
  <link name="l3">
    <inertial><mass value="0.5"/><origin xyz="0.1 0 0"/><inertia ixx="0.001" iyy="0.004" izz="0.004" ixy="0" ixz="0" iyz="0"/></inertial>
    <visual><geometry><mesh filename="package://vizpkg/meshes/missing.stl"/></geometry></visual>
  </link>
  <joint name="tool_joint" type="fixed"><parent link="l3"/><child link="tool"/><origin xyz="0.2 0 0"/></joint>
  <link name="tool"><visual><geometry><sphere radius="0.04"/></geometry><material name="orange"/></visual></link>
</robot>
"""


@pytest.fixture()
def arm(tmp_path):
    pkg = tmp_path / "ws" / "vizpkg" / "meshes"
    pkg.mkdir(parents=True)
    trimesh.creation.cylinder(radius=0.04, height=0.3).export(pkg / "l2.stl")
    p = tmp_path / "arm.urdf"
    p.write_text(URDF)
    return str(p), str(tmp_path / "ws")




def test_urdf_visuals_meshes_primitives_and_missing_mesh(arm):
    path, ws = arm
    model = dqdyn.load_urdf(path)
    with pytest.warns(UserWarning, match="missing.stl' not found"):
        vis = urdf_visuals(model, path, package_dirs=[ws])
    kinds = {v.link: v.kind for v in vis}
    assert kinds == {"base": "box", "l1": "cylinder", "l2": "mesh", "l3": "box", "tool": "sphere"}  # l3: fallback
    # the world-fixed base link is drawn on the world node
    assert len(vis) == 5 and [v.kind for v in vis if v.body == 0] == ["box"]
    l2 = next(v for v in vis if v.link == "l2")
    assert l2.params["mesh"].bounds[1][2] == pytest.approx(0.15)  # the STL that was written
    assert l2.color[:3] == pytest.approx((0.1, 0.3, 0.9))
    # the merged tool link: its sphere sits on l3's body at the fixed joint's offset
    tool = next(v for v in vis if v.link == "tool")
    assert model.body_names[tool.body] == "l3"
    assert translation_of(tool.pose) == pytest.approx([0.2, 0, 0])


def test_package_uri_resolution(arm, monkeypatch):
    path, ws = arm
    assert resolve_uri("package://vizpkg/meshes/l2.stl", None, [ws]).endswith("l2.stl")
    assert resolve_uri("package://vizpkg/meshes/l2.stl", None, []) is None
    monkeypatch.setenv("ROS_PACKAGE_PATH", os.pathsep.join(["/nonexistent", ws]))
    assert resolve_uri("package://vizpkg/meshes/l2.stl", None, []).endswith("l2.stl")
    # a package directory itself on the path
    assert resolve_uri("package://vizpkg/meshes/l2.stl", None, [os.path.join(ws, "vizpkg")])


def test_inertia_boxes_have_the_body_inertia():
    """The box's inertia (trimesh's own, for a uniform solid of that mass) equals the body's."""
    model = dqdyn.random_tree(6, seed=2)
    boxes = inertia_boxes(model)
    assert len(boxes) == model.nbodies
    for b in boxes:
        dims, R = inertia_box(float(model.mass[b.body]), np.array(model.inertia[b.body]))
        box = trimesh.creation.box(extents=dims)
        I_box = box.moment_inertia * model.mass[b.body] / box.volume
        assert np.abs(R @ I_box @ R.T - model.inertia[b.body]).max() < 1e-10
        assert translation_of(b.pose) == pytest.approx(model.com[b.body])


def test_viewer_scene_graph_poses_and_trajectory(arm):
    path, ws = arm
    model = dqdyn.load_urdf(path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        v = Viewer(model, urdf=path, package_dirs=[ws], port=_port(), show_coms=True)
    try:
        assert set(v.link_nodes) == set(model.body_names)  # one node per link (world included)
        for name in model.body_names:
            assert v.server.scene.get_handle_by_name(f"/robot/{name}") is not None
        q = np.array([0.3, -0.7, 1.1])
        v.update(q)
        X = dqdyn.forward_kinematics(model, q)
        for i, name in enumerate(model.body_names):
            assert np.allclose(v.link_nodes[name].position, translation_of(X[i]), atol=1e-6)
            assert np.allclose(v.link_nodes[name].wxyz, X[i, :4], atol=1e-6)
        v.show_twists(np.array([1.0, 0.5, -0.2]))
        res = dqdyn.newton_euler(model, q, np.ones(3), np.zeros(3))
        v.show_wrenches(res.wrenches)
        assert v.server.scene.get_handle_by_name("/twists/omega") is not None
        assert v.server.scene.get_handle_by_name("/wrenches/force") is not None
        t = np.linspace(0, 1, 11)
        Q = np.outer(t, [1.0, -1.0, 0.5])
        v.play(t, Q)
        v.slider.value = 7
        X7 = dqdyn.forward_kinematics(model, Q[7])
        assert np.allclose(v.link_nodes["l3"].position, translation_of(X7[3]), atol=1e-6)
    finally:
        v.close()


@pytest.mark.slow
def test_viewer_in_headless_chromium(arm, tmp_path):
    """The page, rendered by a real browser, shows the robot: the screenshot differs from the same
    page once the robot's shapes are hidden (an empty scene), and the robot's colours appear in
    it.  (Software WebGL: tens of seconds, minutes on a loaded 2-core machine, hence slow.)"""
    if chromium() is None:
        pytest.skip("Debian's chromium is not installed (.ci/run installs it with apt-get where it can)")
    from PIL import Image

    path, ws = arm
    model = dqdyn.load_urdf(path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        v = Viewer(model, urdf=path, package_dirs=[ws], port=_port(), show_frames=False)
    shots = {}
    try:
        v.update(np.array([0.4, -0.6, 0.9]))
        with Page(v.url) as page:
            page.capture(str(tmp_path / "robot.png"))
            for node in v.visual_nodes:  # the same page with the robot's shapes hidden
                node.visible = False
            page.capture(str(tmp_path / "empty.png"))
    finally:
        v.close()
    for label in ("robot", "empty"):
        shots[label] = np.asarray(Image.open(tmp_path / f"{label}.png").convert("RGB"), dtype=int)
    a, b = shots["empty"], shots["robot"]
    assert a.shape == b.shape
    differ = np.abs(a - b).sum(axis=2) > 30
    assert differ.mean() > 0.01, f"only {differ.mean():.4%} of the pixels changed"

    def coloured(x):  # saturated pixels: the robot's materials (the empty scene is grey / white
        return int(((x.max(axis=2) - x.min(axis=2)) > 60).sum())  # but for the GUI's buttons)

    def orange(x):  # the lit orange links: (233, 170, 116) and the like
        return int(((x[..., 0] > 180) & (x[..., 0] - x[..., 2] > 60) & (x[..., 1] > 100)).sum())

    assert coloured(b) - coloured(a) > 3000, (coloured(a), coloured(b))
    assert orange(b) - orange(a) > 1000, (orange(a), orange(b))


def test_mjcf_geoms_and_view_command(tmp_path, capsys):
    """MJCF geoms ride on the right bodies; `dqdyn view` serves a bundled model and a MJCF file."""
    import sys

    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "parsers"))
    import mujoco
    from test_mjcf import MODELS

    from dqdyn.cli import main
    from dqdyn.viz import mjcf_visuals

    xml = MODELS["floating"]
    mj = mujoco.MjModel.from_xml_string(xml)
    model = dqdyn.load_mjcf(mj)
    vis = mjcf_visuals(model, mj)
    assert len(vis) == mj.ngeom
    foot = next(v for v in vis if v.link == "foot")
    assert model.body_names[foot.body] == "shin" and foot.kind == "box"
    q = dqdyn.random_configuration(model, seed=1)
    d = mujoco.MjData(mj)
    from dqdyn.parsers.mjcf import MujocoMap

    d.qpos[:] = MujocoMap(model, mj).qpos(q)
    mujoco.mj_kinematics(mj, d)
    # the geom's world pose: body pose ∘ visual pose = MuJoCo's geom_xpos
    from dqdyn.multibody.builders import _pose_mul

    for g, v in enumerate(vis):
        x = _pose_mul(dqdyn.forward_kinematics(model, q)[v.body], v.pose)
        assert np.allclose(translation_of(x), d.geom_xpos[g], atol=1e-12)
    p = tmp_path / "floating.xml"
    p.write_text(xml)
    for src in ("two_link_arm", str(p)):
        assert main(["view", src, "--port", str(_port()), "--seconds", "0.2"]) == 0
        assert "dqdyn view:" in capsys.readouterr().out
    assert main(["view", "no_such_model"]) == 2


def test_simulate_view_serves_the_motion(capsys):
    from dqdyn.cli import main

    port = _port()
    assert main(["simulate", "--bundled", "two_link_arm", "--duration", "0.05", "--view", str(port),
                 "--view-seconds", "0.2"]) == 0
    assert f"127.0.0.1:{port}" in capsys.readouterr().out


def test_parallel_robot_layer():
    """A Stewart platform: the legs run from the base points to the attachment points at the pose."""
    from dqdyn.algebra.rotations import matrix_from_quat, pose_from_rt, quat_from_axis_angle
    from dqdyn.parallel import stewart_6_6

    robot = stewart_6_6()
    v = Viewer(None, port=_port())
    try:
        v.show_parallel(robot)
        eta = pose_from_rt(quat_from_axis_angle(np.array([0.3, 0.2, 1.0]), 0.3), translation_of(robot.home) + [0.05, 0, 0.1])
        v.update_parallel(eta)
        legs = v.server.scene.get_handle_by_name("/parallel/legs")
        P = np.asarray(legs.points, dtype=float)
        ends = translation_of(eta) + robot.platform_points @ matrix_from_quat(eta[:4]).T
        assert np.allclose(P[:, 0], robot.base_points, atol=1e-6) and np.allclose(P[:, 1], ends, atol=1e-6)
        # the drawn leg lengths are the robot's own actuator values
        assert np.allclose(np.linalg.norm(P[:, 1] - P[:, 0], axis=1), robot.lengths(eta), atol=1e-5)
    finally:
        v.close()
