"""The viewer frames the robot: `frame_box` puts every corner of the robot's bounding box inside
the chosen share of the view (a pinhole projection written out here, not the function's own
formula), for a 1 cm gripper and a 2 m humanoid alike; `visual_points` bounds the real meshes of
example-robot-data's Panda, UR5 and Solo-12 (against trimesh's own bounds of each mesh placed by
Pinocchio's frame placements); and a real browser (headless Chromium) draws Panda's meshes,
centred and large, far richer in shades than the inertia-box fallback."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

viser = pytest.importorskip("viser")
trimesh = pytest.importorskip("trimesh")

import dqdyn  # noqa: E402
from dqdyn.viz import Viewer  # noqa: E402
from dqdyn.viz.geometry import urdf_visuals, visual_points  # noqa: E402
from dqdyn.viz.viewer import FILL, frame_box  # noqa: E402

from _browser import Page, chromium  # noqa: E402
from _browser import free_port as _port


def _project(points, position, target, fov, aspect):
    """Normalised image coordinates (x, y in [-1, 1] inside the view) of a z-up look-at camera."""
    f = np.asarray(target, float) - np.asarray(position, float)
    f /= np.linalg.norm(f)
    r = np.cross(f, [0.0, 0.0, 1.0])
    r /= np.linalg.norm(r)
    u = np.cross(r, f)
    p = np.asarray(points, float) - position
    z = p @ f
    assert np.all(z > 0), "a point behind the camera"
    t = np.tan(0.5 * fov)
    return np.stack([(p @ r) / z / (aspect * t), (p @ u) / z / t], axis=1)


def _corners(lo, hi):
    return np.array([[x, y, z] for x in (lo[0], hi[0]) for y in (lo[1], hi[1]) for z in (lo[2], hi[2])])


@pytest.mark.parametrize("lo, hi", [
    ((-0.005, -0.004, 0.0), (0.005, 0.004, 0.01)),   # a 1 cm gripper
    ((-0.25, -0.2, 0.0), (0.25, 0.2, 1.8)),          # a 2 m humanoid, standing
    ((0.3, -1.0, 0.2), (1.5, 1.0, 0.6)),             # a flat, wide, off-origin robot
])
@pytest.mark.parametrize("aspect", [1.0, 16 / 9])
def test_frame_box_fits_the_box_in_the_view(lo, hi, aspect):
    fov = np.radians(75.0)
    pos, target, near, far = frame_box(lo, hi, fov=fov, aspect=aspect)
    assert np.allclose(target, 0.5 * (np.array(lo) + np.array(hi)))
    xy = _project(_corners(lo, hi), pos, target, fov, aspect)
    # inside the share, and tight: some corner reaches it (not framed tiny)
    assert np.abs(xy).max() <= FILL + 1e-9
    assert np.abs(xy).max() == pytest.approx(FILL, rel=1e-6)
    # seen from above, from a 3/4 direction (neither along an axis nor from straight above)
    d = pos - target
    assert d[2] > 0 and abs(d[0]) > 0.2 * np.linalg.norm(d) and abs(d[1]) > 0.2 * np.linalg.norm(d)
    # the clipping planes keep the whole box
    depth = (_corners(lo, hi) - pos) @ (-d / np.linalg.norm(d))
    assert near < depth.min() and far > depth.max()


def test_frame_box_of_a_point_still_gives_a_view():
    pos, target, near, far = frame_box(np.ones(3), np.ones(3))
    assert np.all(np.isfinite(pos)) and np.linalg.norm(pos - target) > 0.05


def _erd_or_skip(name):
    try:
        return dqdyn.load_example(name), str(dqdyn.models.model_path(name))
    except Exception as e:  # noqa: BLE001
        pytest.skip(f"example-robot-data's {name} is not available ({e})")


@pytest.mark.parametrize("name", ["panda", "ur5", "solo12"])
def test_visual_points_bound_the_real_meshes(name):
    """The box of `visual_points` equals the box of the meshes placed by Pinocchio's own forward
    kinematics of the same URDF (its geometry model's placements)."""
    pin = pytest.importorskip("pinocchio")
    model, path = _erd_or_skip(name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        vis = urdf_visuals(model, path)
    assert vis and all(v.kind == "mesh" for v in vis)
    P = visual_points(model, vis)
    lo, hi = P.min(axis=0), P.max(axis=0)
    floating = name == "solo12"
    pm = pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer()) if floating else pin.buildModelFromUrdf(path)
    from dqdyn.viz.geometry import _erd_share

    gm = pin.buildGeomFromUrdf(pm, path, pin.GeometryType.VISUAL, package_dirs=[_erd_share()])
    data, gdata = pm.createData(), gm.createData()
    pin.updateGeometryPlacements(pm, data, gm, gdata, pin.neutral(pm))
    Q = []
    for k, go in enumerate(gm.geometryObjects):
        mesh = trimesh.load(go.meshPath, force="mesh")
        mesh.apply_scale(np.asarray(go.meshScale))
        M = gdata.oMg[k]
        Q.append(np.asarray(mesh.vertices) @ M.rotation.T + M.translation)
    Q = np.concatenate(Q)
    assert np.allclose(lo, Q.min(axis=0), atol=1e-6) and np.allclose(hi, Q.max(axis=0), atol=1e-6)


def _shots(model, path, visuals, tmp_path, label):
    """(robot, empty) screenshots of the viewer without grid and frames: the robot alone."""
    from PIL import Image

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        v = Viewer(model, urdf=path, visuals=visuals, port=_port(), show_frames=False)
    try:
        v.server.scene.get_handle_by_name("/grid").visible = False
        with Page(v.url) as page:
            page.capture(str(tmp_path / f"{label}.png"))
            for node in v.visual_nodes:
                node.visible = False
            page.capture(str(tmp_path / f"{label}_empty.png"))
    finally:
        v.close()
    return tuple(np.asarray(Image.open(tmp_path / f"{p}.png").convert("RGB"), dtype=int)
                 for p in (label, f"{label}_empty"))


@pytest.mark.slow
def test_panda_meshes_in_headless_chromium_are_drawn_and_framed(tmp_path):
    """Panda with its real meshes: the robot's pixels (those that change once its shapes are
    hidden) hold far more distinct shades than the inertia-box fallback of the same robot, and
    their bounding box is centred in the image, large, and clear of the borders."""
    if chromium() is None:
        pytest.skip("Debian's chromium is not installed (.ci/run installs it with apt-get where it can)")
    pytest.importorskip("collada")
    model, path = _erd_or_skip("panda")
    a, a0 = _shots(model, path, "auto", tmp_path, "meshes")
    b, b0 = _shots(model, path, "inertia", tmp_path, "boxes")
    H, W = a.shape[:2]

    def robot(x, x0):
        return np.abs(x - x0).sum(axis=2) > 12

    def shades(x, m):
        return len(np.unique(x[m] @ np.array([65536, 256, 1])))

    ma, mb = robot(a, a0), robot(b, b0)
    assert ma.mean() > 0.02, f"only {ma.mean():.2%} of the image shows the robot"
    # (1) real meshes: many more shades than boxes, whose faces are flat
    assert shades(a, ma) > 1.5 * shades(b, mb), (shades(a, ma), shades(b, mb))
    # (2) framed: centred, sizeable, not cut by the borders
    ys, xs = np.nonzero(ma)
    cx, cy = 0.5 * (xs.min() + xs.max()) / W, 0.5 * (ys.min() + ys.max()) / H
    assert abs(cx - 0.5) < 0.15 and abs(cy - 0.5) < 0.15, (cx, cy)
    assert (xs.max() - xs.min()) / W > 0.25 or (ys.max() - ys.min()) / H > 0.25
    assert xs.min() > 0 and ys.min() > 0 and xs.max() < W - 1 and ys.max() < H - 1
