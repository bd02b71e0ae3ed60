"""A model file names mesh files; dqdyn reads them only inside the model's folder and the package
folders the user named.  Every way out (``..``, absolute paths, ``file://``, ``/proc``, a
``package://`` URI climbing out, a symbolic link pointing out) is refused with a warning that names
the path, and the file is never opened; ``allow_outside=True`` reads it."""

from __future__ import annotations

import os
import warnings

import pytest

trimesh = pytest.importorskip("trimesh")
pytest.importorskip("viser")

import dqdyn  # noqa: E402
from dqdyn.viz import resolve_uri, urdf_visuals  # noqa: E402
from dqdyn.viz.geometry import locate_uri  # noqa: E402


@pytest.fixture()
def tree(tmp_path):
    """tmp/secret.stl (outside), tmp/robot/{arm.urdf, meshes/ok.stl, meshes/link.stl -> secret},
    tmp/ws/pkg/meshes/p.stl (a package folder)."""
    secret = tmp_path / "secret.stl"
    trimesh.creation.box(extents=(9, 9, 9)).export(secret)
    robot = tmp_path / "robot"
    (robot / "meshes").mkdir(parents=True)
    trimesh.creation.box(extents=(0.1, 0.1, 0.1)).export(robot / "meshes" / "ok.stl")
    os.symlink(secret, robot / "meshes" / "link.stl")
    pkg = tmp_path / "ws" / "pkg" / "meshes"
    pkg.mkdir(parents=True)
    trimesh.creation.box(extents=(0.2, 0.2, 0.2)).export(pkg / "p.stl")
    return tmp_path


def _escapes(t):
    out = {
        "dotdot": "../secret.stl",
        "absolute": str(t / "secret.stl"),
        "file_uri": "file://" + str(t / "secret.stl"),
        "proc": "/proc/self/environ",
        "package_climb": "package://pkg/../../secret.stl",
        "symlink_out": "meshes/link.stl",
        "http": "http://attacker.example/x.stl",
    }
    if os.path.isfile("/etc/hostname"):
        out["package_etc"] = "package://pkg/" + "../" * 12 + "etc/hostname"
    return out


@pytest.mark.parametrize("form", ["dotdot", "absolute", "file_uri", "proc", "package_climb",
                                  "symlink_out", "http", "package_etc"])
def test_every_escape_is_refused_with_a_warning(tree, form):
    esc = _escapes(tree)
    if form not in esc:
        pytest.skip("no /etc/hostname here")
    uri = esc[form]
    if form == "proc" and not os.path.isfile(uri):
        pytest.skip("no /proc")
    base, pkgs = str(tree / "robot"), [str(tree / "ws")]
    with pytest.warns(UserWarning, match="refused") as rec:
        assert resolve_uri(uri, base, pkgs) is None
    msg = str(rec[0].message)
    assert uri in msg
    if form != "http":
        assert "outside" in msg and "allow_outside" in msg


def test_allow_outside_reads_it(tree):
    base, pkgs = str(tree / "robot"), [str(tree / "ws")]
    secret = os.path.realpath(tree / "secret.stl")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert resolve_uri("../secret.stl", base, pkgs, allow_outside=True) == secret
        assert resolve_uri("meshes/link.stl", base, pkgs, allow_outside=True) == secret


def test_legitimate_meshes_are_accepted_without_warning(tree):
    base, pkgs = str(tree / "robot"), [str(tree / "ws")]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert resolve_uri("meshes/ok.stl", base, pkgs) == os.path.realpath(tree / "robot/meshes/ok.stl")
        assert resolve_uri("meshes/../meshes/ok.stl", base, pkgs) is not None  # stays inside
        assert resolve_uri("package://pkg/meshes/p.stl", base, pkgs) == os.path.realpath(
            tree / "ws/pkg/meshes/p.stl")
        assert resolve_uri(str(tree / "robot/meshes/ok.stl"), base, pkgs) is not None  # absolute, inside
        assert resolve_uri("file://" + str(tree / "ws/pkg/meshes/p.stl"), base, pkgs) is not None
        assert locate_uri("meshes/none.stl", base, pkgs) == (None, None)  # missing: not a refusal


URDF = """<robot name="esc">
  <link name="base"><visual><geometry><mesh filename="{ok}"/></geometry></visual></link>
  <joint name="j" type="revolute"><parent link="base"/><child link="l1"/><axis xyz="0 0 1"/>
    <limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
  <link name="l1"><inertial><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial>
    <visual><geometry><mesh filename="{bad}"/></geometry></visual></link>
</robot>"""


def test_urdf_visuals_draw_a_primitive_for_a_refused_mesh_and_never_read_it(tree, monkeypatch):
    path = tree / "robot" / "arm.urdf"
    path.write_text(URDF.format(ok="package://pkg/meshes/p.stl", bad="../secret.stl"))
    model = dqdyn.load_urdf(str(path))
    opened = []
    real_load = trimesh.load
    monkeypatch.setattr(trimesh, "load", lambda p, **kw: (opened.append(os.path.realpath(p)), real_load(p, **kw))[1])
    with pytest.warns(UserWarning, match=r"'\.\./secret\.stl' refused"):
        vis = urdf_visuals(model, str(path), package_dirs=[str(tree / "ws")])
    kinds = {v.link: v.kind for v in vis}
    assert kinds == {"base": "mesh", "l1": "box"}
    assert opened == [os.path.realpath(tree / "ws/pkg/meshes/p.stl")]
    # the accepted mesh is the 0.2 m box of the package, not the 9 m secret
    assert vis[0].params["mesh"].extents.max() == pytest.approx(0.2)


def test_example_robot_data_package_resolves_by_itself():
    from dqdyn.models import example_robot_data_dir

    if example_robot_data_dir() is None:
        pytest.skip("example-robot-data not installed")
    uri = "package://example-robot-data/robots/ur_description/meshes/ur5/visual/base.dae"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        p = resolve_uri(uri, None, [])
    assert p is not None and p.endswith(os.path.join("ur5", "visual", "base.dae"))
    assert os.path.realpath(p).startswith(os.path.realpath(example_robot_data_dir()))
    if os.path.isfile("/etc/hostname"):  # and still no way out through it
        with pytest.warns(UserWarning, match="refused"):
            assert resolve_uri("package://example-robot-data/" + "../" * 12 + "etc/hostname", None, []) is None
