"""URDF loading: every example-robot-data URDF against Pinocchio, malformed files, warnings,
mimic modes, inputs, bundled models."""

from __future__ import annotations

import glob
import io
import logging
import os
import sysconfig
import warnings
from contextlib import redirect_stderr
from pathlib import Path

import numpy as np
import pytest

import dqdyn
from dqdyn.algebra.rotations import matrix_from_pose, matrix_from_quat, quat_from_rpy
from dqdyn.errors import URDFError
from dqdyn.parsers import bundled, bundled_models, load_bundled, load_urdf

ERD = os.path.join(sysconfig.get_paths()["purelib"], "cmeel.prefix", "share", "example-robot-data",
                   "robots")
ERD_FILES = sorted(os.path.relpath(p, ERD) for p in glob.glob(ERD + "/**/*.urdf", recursive=True))

# example-robot-data files dqdyn refuses, and why (each a genuine defect of the file)
ERD_BAD = {
    "ur_description/urdf/ur3.urdf": "no <link>",  # an empty <robot/> (Pinocchio refuses it too)
    # <mimic joint="index_q1">: no such joint (Pinocchio refuses it with mimic=True too)
    "alex_description/urdf/alex_psyonic_hands.urdf": "'index_q1', which is not defined",
    # link LHipPitch_link: principal moments (-0.0027, 0.040, 0.054)
    "romeo_description/urdf/romeo_laas_small.urdf": "not positive semi-definite",
}
# (romeo_small.urdf's RShoulderYawLink, moments (0.00066, 0.00068, 0.0066), breaks the triangle
# inequality: loaded with a warning, as Pinocchio and PyBullet load it)

PIN_REFUSES_MIMIC = {
    "romeo_description/urdf/romeo.urdf",
    "talos_data/robots/talos_full_v2.urdf",
    "talos_data/robots/talos_full_v2_box.urdf",
}

CONTINUOUS_PIN = ("JointModelRUBX", "JointModelRUBY", "JointModelRUBZ",
                  "JointModelRevoluteUnboundedUnaligned")


def _load_quiet(path, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return load_urdf(path, **kw)


def _pin_build(pin, path, root, mimic=True):
    kw = dict(mimic=mimic)
    with redirect_stderr(io.StringIO()):
        if root == "free":
            return pin.buildModelFromUrdf(str(path), pin.JointModelFreeFlyer(), **kw)
        if root == "planar":
            return pin.buildModelFromUrdf(str(path), pin.JointModelPlanar(), **kw)
        return pin.buildModelFromUrdf(str(path), **kw)


def _compare_with_pin(m, pm, label, *, order=True):
    """Sizes, names, masses and per-body inertias of a dqdyn model vs a Pinocchio model."""
    n_cont = sum(1 for j in list(pm.joints)[1:] if j.shortname() in CONTINUOUS_PIN)
    root = "root_joint" in m.joint_names_all and m.joint_type_name("root_joint")
    extra = {"free": 1, "planar": 1}.get(root, 0)  # free: 8 vs 7; planar: 3 vs 4 (cos, sin)
    if root == "planar":
        extra = -1
    assert m.nv == pm.nv, label
    assert m.nq == pm.nq - n_cont + extra, label
    if order:
        assert list(m.joint_names_all[1:]) == list(pm.names[1:]), label
    assert m.total_mass == pytest.approx(sum(I.mass for I in list(pm.inertias)[1:]), abs=1e-9), label
    for i in range(1, m.nbodies + 1):
        name = m.joint_names_all[i]
        I = pm.inertias[pm.getJointId(name)]
        np.testing.assert_allclose(m.mass[i], I.mass, atol=1e-10, err_msg=f"{label}: {name}")
        np.testing.assert_allclose(m.com[i], I.lever, atol=1e-10, err_msg=f"{label}: {name}")
        np.testing.assert_allclose(m.inertia[i], I.inertia, atol=1e-10, err_msg=f"{label}: {name}")


# ------------------------------------------------------------------------------ example-robot-data
@pytest.mark.skipif(not ERD_FILES, reason="example-robot-data is not installed")
@pytest.mark.parametrize("rel", ERD_FILES)
def test_example_robot_data_matches_pinocchio(rel):
    pin = pytest.importorskip("pinocchio")
    path = os.path.join(ERD, rel)
    if rel in ERD_BAD:
        with pytest.raises(URDFError, match=ERD_BAD[rel].replace("(", r"\(")) as ei:
            _load_quiet(path)
        assert path in str(ei.value)
        return
    for root in (None, "free"):
        m = _load_quiet(path, root_joint=root)
        links = [ln for ln in _urdf_links(path) if ln != "world"]
        assert set(links) <= set(m.frame_names), rel  # every link is a named frame
        if rel in PIN_REFUSES_MIMIC:
            # Pinocchio refuses these with mimic=True (a master comes after its mimic joint in
            # its traversal; dqdyn reorders): compare with its mimic=False model instead
            with pytest.raises(Exception, match="mimic"):
                _pin_build(pin, path, root)
            pm = _pin_build(pin, path, root, mimic=False)
            assert m.mimic_joints
            assert m.nv == pm.nv - len(m.mimic_joints)
            assert set(m.joint_names_all[1:]) == set(pm.names[1:])
            assert m.total_mass == pytest.approx(sum(I.mass for I in list(pm.inertias)[1:]))
            continue
        pm = _pin_build(pin, path, root)
        _compare_with_pin(m, pm, f"{rel} root={root}")


def _urdf_links(path):
    from lxml import etree

    return [e.get("name") for e in etree.parse(path).getroot().findall("link")]


def test_free_and_planar_roots_add_the_right_sizes():
    path = _erd("tiago_description/robots/tiago.urdf")
    m0 = _load_quiet(path)
    mf = _load_quiet(path, root_joint="free")
    mp = _load_quiet(path, root_joint="planar")
    assert (mf.nq, mf.nv) == (m0.nq + 8, m0.nv + 6)
    assert (mp.nq, mp.nv) == (m0.nq + 3, m0.nv + 3)
    assert mf.joint_type_name("root_joint") == "free"
    assert mp.joint_type_name("root_joint") == "planar"
    assert mf.body_names[1] == "base_footprint"
    assert mf.total_mass > m0.total_mass  # the base now moves: its mass counts
    pin = pytest.importorskip("pinocchio")
    _compare_with_pin(mp, _pin_build(pin, path, "planar"), "tiago planar")


def test_root_link_named_world_with_a_floating_base():
    path = _erd("ur_description/urdf/ur5_robot.urdf")
    m = _load_quiet(path, root_joint="free")
    assert m.body_names[1] == "base_link"  # the 'world' link is the world itself
    assert m.joint_names_all[1] == "root_joint"
    assert "world_joint" not in m.joint_names_all
    m0 = _load_quiet(path)
    assert m0.nv + 6 == m.nv


def _erd(rel):
    p = os.path.join(ERD, rel)
    if not os.path.exists(p):
        pytest.skip(f"example-robot-data file {rel} is not installed")
    return p


# ------------------------------------------------------------------------------ bundled models
@pytest.mark.parametrize("name", ["two_link_arm", "diff_drive_manipulator", "branched"])
@pytest.mark.parametrize("root", [None, "free", "planar"])
def test_bundled_models_match_pinocchio(name, root):
    pin = pytest.importorskip("pinocchio")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the bundled models are clean
        m = load_bundled(name, root_joint=root)
    pm = _pin_build(pin, bundled(name), root)
    _compare_with_pin(m, pm, f"{name} root={root}")


@pytest.mark.parametrize("name,root", [("branched", "free"), ("diff_drive_manipulator", "planar"),
                                       ("two_link_arm", None)])
def test_bundled_frame_poses_match_pinocchio(name, root):
    pinconv = pytest.importorskip("pinconv")
    pin = pinconv.pin
    m = load_bundled(name, root_joint=root)
    pm = _pin_build(pin, bundled(name), root)
    pd = pm.createData()
    rng = np.random.default_rng(3)
    for _ in range(3):
        q = dqdyn.random_configuration(m, seed=rng)
        pin.framesForwardKinematics(pm, pd, pinconv.q_to_pin(m, pm, q))
        X = dqdyn.frame_poses(m, q)
        for k, f in enumerate(m.frame_names):
            if f == "world":  # dqdyn's world frame (pin calls it "universe")
                np.testing.assert_allclose(matrix_from_pose(X[k]), np.eye(4), atol=1e-15)
                continue
            np.testing.assert_allclose(matrix_from_pose(X[k]), pd.oMf[pm.getFrameId(f)].homogeneous,
                                       atol=1e-10, err_msg=f"{name}: {f}")


def test_bundled_api():
    assert set(bundled_models()) >= {"two_link_arm", "diff_drive_manipulator", "branched"}
    p = bundled("two_link_arm")
    assert isinstance(p, Path) and p.is_file() and bundled("two_link_arm.urdf") == p
    with pytest.raises(URDFError, match="no bundled model 'nope'"):
        bundled("nope")
    m = load_bundled("two_link_arm")
    assert m.joint_names == ("shoulder", "elbow")
    assert m.total_mass == pytest.approx(1.8)
    assert "tool" in m.frame_names
    dd = load_bundled("diff_drive_manipulator", root_joint="planar")
    assert (dd.nq, dd.nv) == (11, 11)
    assert dd.joint_type_name("left_wheel_joint") == "revolute"
    assert dd.q_upper[dd.q_slice("left_wheel_joint")][0] == np.inf
    br = load_bundled("branched")
    assert "imu" in br.frame_names and "left_hand" in br.frame_names
    assert br.joint_type_name("antenna_joint") == "prismatic"


# ------------------------------------------------------------------------------ small documents
def urdf(body: str, name: str = "t") -> str:
    return f'<?xml version="1.0"?>\n<robot name="{name}">\n{body}\n</robot>'


def link(name, mass=1.0, xyz="0 0 0", rpy="0 0 0", I="0.01 0 0 0.01 0 0.01"):
    if mass is None:
        return f'<link name="{name}"/>'
    ixx, ixy, ixz, iyy, iyz, izz = I.split()
    return (f'<link name="{name}"><inertial><origin xyz="{xyz}" rpy="{rpy}"/><mass value="{mass}"/>'
            f'<inertia ixx="{ixx}" ixy="{ixy}" ixz="{ixz}" iyy="{iyy}" iyz="{iyz}" izz="{izz}"/>'
            f'</inertial></link>')


def joint(name, parent, child, type="revolute", axis="0 0 1", xyz="0 0 0", rpy="0 0 0",
          extra='<limit lower="-1" upper="1" velocity="2" effort="3"/>'):
    ax = f'<axis xyz="{axis}"/>' if axis is not None else ""
    return (f'<joint name="{name}" type="{type}"><parent link="{parent}"/><child link="{child}"/>'
            f'<origin xyz="{xyz}" rpy="{rpy}"/>{ax}{extra}</joint>')


ARM = urdf(link("base") + link("l1") + link("l2") + joint("j1", "base", "l1")
           + joint("j2", "l1", "l2", xyz="0 0 0.3"))


def test_xml_string_bytes_and_path_inputs(tmp_path):
    m = load_urdf(ARM)
    assert m.joint_names == ("j1", "j2") and m.body_names == ("world", "l1", "l2")
    assert load_urdf(ARM.encode()).nq == 2
    assert load_urdf("  \n" + ARM).nq == 2
    f = tmp_path / "arm.urdf"
    f.write_text(ARM)
    assert load_urdf(f).nq == 2 and load_urdf(str(f)).nq == 2
    # name of the model: <robot name>, or the file stem when the attribute is missing
    assert load_urdf(ARM).name == "t"
    f2 = tmp_path / "noname.urdf"
    f2.write_text(ARM.replace(' name="t"', ""))
    assert load_urdf(f2).name == "noname"
    assert load_urdf(ARM, name="custom").name == "custom"


def test_limits_types_and_frames():
    doc = urdf(link("base") + link("a") + link("b") + link("c", mass=None) + link("d")
               + joint("ja", "base", "a", type="continuous", extra='<limit velocity="7" effort="8"/>')
               + joint("jb", "a", "b", type="prismatic", axis="0 2 0",
                       extra='<limit lower="-0.1" upper="0.2" velocity="0.5" effort="100"/>')
               + joint("jc", "b", "c", type="fixed") + joint("jd", "c", "d", type="floating"))
    m = load_urdf(doc)
    assert [m.joint_type_name(j) for j in ("ja", "jb", "jd")] == ["revolute", "prismatic", "free"]
    assert m.nq == 1 + 1 + 8 and m.nv == 1 + 1 + 6
    sa, sb = m.q_slice("ja"), m.q_slice("jb")
    assert m.q_lower[sa][0] == -np.inf and m.q_upper[sa][0] == np.inf
    assert m.velocity_limit[m.v_slice("ja")][0] == 7 and m.effort_limit[m.v_slice("ja")][0] == 8
    assert (m.q_lower[sb][0], m.q_upper[sb][0]) == (-0.1, 0.2)
    np.testing.assert_allclose(m.joint_axis[m.joint_index("jb")], [0, 1, 0])  # normalised
    assert set(m.frame_names) == {"world", "base", "a", "b", "c", "d"}
    assert "jc" not in m.joint_names_all  # merged
    # default axis of a revolute joint without <axis> is x
    m2 = load_urdf(urdf(link("base") + link("a") + joint("j", "base", "a", axis=None)))
    np.testing.assert_allclose(m2.joint_axis[1], [1, 0, 0])
    # a joint without <limit> has infinite limits
    m3 = load_urdf(urdf(link("base") + link("a") + joint("j", "base", "a", extra="")))
    assert m3.q_lower[0] == -np.inf and m3.velocity_limit[0] == np.inf


def test_children_are_ordered_by_joint_name():
    doc = urdf(link("base") + link("x") + link("y") + link("z")
               + joint("c_joint", "base", "x") + joint("a_joint", "base", "y")
               + joint("b_joint", "y", "z"))
    m = load_urdf(doc)
    assert m.joint_names == ("a_joint", "b_joint", "c_joint")


def test_inertial_origin_is_rotated_into_the_link_frame():
    rpy = np.array([0.3, -0.5, 1.1])
    doc = urdf(link("base") + link("a", mass=2.0, xyz="0.1 0.2 0.3", rpy=" ".join(map(str, rpy)),
                                    I="0.01 0.001 0 0.02 0 0.025")
               + joint("j", "base", "a"))
    m = load_urdf(doc)
    R = matrix_from_quat(quat_from_rpy(rpy))
    I = np.array([[0.01, 0.001, 0], [0.001, 0.02, 0], [0, 0, 0.025]])
    np.testing.assert_allclose(m.com[1], [0.1, 0.2, 0.3])
    np.testing.assert_allclose(m.inertia[1], R @ I @ R.T, atol=1e-15)
    assert m.mass[1] == 2.0


def test_fixed_links_are_merged_and_the_fixed_base_root_is_dropped():
    doc = urdf(link("base", mass=5.0) + link("a", mass=1.0, xyz="0 0 0.1") + link("t", mass=1.0)
               + joint("j", "base", "a") + joint("jt", "a", "t", type="fixed", xyz="0 0 0.3"))
    m = load_urdf(doc)
    assert m.nbodies == 1 and m.total_mass == pytest.approx(2.0)
    np.testing.assert_allclose(m.com[1], [0, 0, 0.2])
    mf = load_urdf(doc, root_joint="free")
    assert mf.total_mass == pytest.approx(7.0)


def test_geometry_is_never_opened_and_unknown_tags_are_quiet(capfd, caplog):
    doc = urdf(
        '<link name="base"><visual><geometry><mesh filename="package://nowhere/x.stl"/></geometry>'
        '</visual><collision><geometry><mesh filename="/does/not/exist.dae"/></geometry></collision>'
        '<contact><lateral_friction value="1"/></contact></link>'
        + link("a") + joint("j", "base", "a").replace("</joint>", "<hardwareInterface/></joint>")
        + '<gazebo reference="a"><plugin/></gazebo><transmission name="t"><joint name="j"/></transmission>'
        '<material name="m"><texture/></material><ros2_control name="x"/>'
    )
    with caplog.at_level(logging.DEBUG, logger="dqdyn.parsers.urdf"):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            m = load_urdf(doc, package_dirs=["/nowhere"])
    assert m.nq == 1
    out, err = capfd.readouterr()
    assert out == "" and err == ""
    assert any("contact" in r.getMessage() for r in caplog.records)
    import urdf_parser_py.xml_reflection.core as core

    assert core.on_error is core.on_error_stderr  # the hook is restored


def test_duplicated_scalar_element_warns():
    doc = urdf(link("base") + link("a") + joint("j", "base", "a").replace(
        "</joint>", '<axis xyz="1 0 0"/></joint>'))
    with pytest.warns(UserWarning, match="multiple times"):
        m = load_urdf(doc)
    np.testing.assert_allclose(m.joint_axis[1], [0, 0, 1])  # the first one is used


# ------------------------------------------------------------------------------ malformed files
@pytest.mark.parametrize(
    "doc,match",
    [
        ("<robot name='x'><link name='a'></robot>", "XML syntax error"),
        ("<notrobot/>", "root element must be <robot>"),
        (urdf(""), "no <link>"),
        (urdf(link("base") + link("a") + '<joint name="elbow"><parent link="base"/>'
              '<child link="a"/></joint>'), r"joint 'elbow'.*type"),
        (urdf(link("base") + link("a") + '<joint name="elbow" type="revolute"><parent link="base"/>'
              '</joint>'), r"joint 'elbow'.*child"),
        (urdf(link("base") + joint("elbow", "base", "foo")),
         "joint 'elbow': child link 'foo' is not defined"),
        (urdf(link("a") + joint("elbow", "ghost", "a")),
         "joint 'elbow': parent link 'ghost' is not defined"),
        (urdf(link("base") + link("a") + link("b") + joint("j1", "base", "a") + joint("j2", "b", "a")
              + joint("j3", "base", "b")),
         "link 'a' has two parent joints, 'j1' and 'j2'"),
        (urdf(link("base") + link("a") + link("b") + joint("j1", "a", "b") + joint("j2", "b", "a")
              + joint("j0", "base", "c")), "child link 'c' is not defined"),
        (urdf(link("base") + link("a") + link("b") + joint("j1", "a", "b") + joint("j2", "b", "a")),
         r"links \['a', 'b'\] are not reachable.*cycle"),
        (urdf(link("a") + link("b") + joint("j1", "a", "b") + joint("j2", "b", "a")), "cycle"),
        (urdf(link("a") + link("b")), "several root links"),
        (urdf(link("a") + link("a")), "link 'a' is defined twice"),
        (urdf(link("b") + link("x") + link("y") + joint("j", "b", "x") + joint("j", "b", "y")),
         "joint 'j' is defined twice"),
        (urdf(link("b") + link("x") + joint("j", "b", "x", type="hinge")),
         r"joint 'j'.*Invalid joint type: hinge"),
        (urdf(link("b") + link("x") + joint("j", "b", "x", axis="0 0 0")), "joint 'j': axis .* is zero"),
        (urdf(link("b") + link("x") + joint("j", "b", "x", type="planar", axis="1 0 0")),
         "joint 'j': planar joints must have axis"),
        (urdf(link("b") + link("x", mass=-1) + joint("j", "b", "x")), "link 'x': mass must be"),
        (urdf(link("b") + link("x", I="1 0 0 -1 0 1") + joint("j", "b", "x")),
         "link 'x': inertia is not positive semi-definite"),
        (urdf(link("b") + link("x", mass="abc") + joint("j", "b", "x")), r"link 'x' > inertial > mass"),
        (urdf(link("b") + '<link name="x"><inertial><mass value="1"/><inertia ixx="1"/></inertial></link>'
              + joint("j", "b", "x")), r"link 'x' > inertial > inertia.*ixy"),
        (urdf(link("b") + link("x") + joint("j", "b", "x", xyz="0 nan 0")), "joint 'j'.*NaN"),
        (urdf(link("b") + link("world") + joint("j", "b", "world")), "link 'world' is not the root"),
        (urdf(link("b") + link("x") + joint("j", "b", "x").replace(
            "</joint>", '<mimic joint="ghost"/></joint>')), "joint 'j' mimics joint 'ghost', which is not"),
    ],
)
def test_malformed_documents(doc, match):
    with pytest.raises(URDFError, match=match):
        load_urdf(doc)


def test_triangle_inequality_warns_by_default_and_is_refused_on_request():
    doc = urdf(link("b") + link("x", I="0.01 0 0 0.01 0 0.05") + joint("j", "b", "x"))
    with pytest.warns(UserWarning, match="body 'x'.*triangle inequality"):
        m = load_urdf(doc)
    np.testing.assert_allclose(m.inertia[1], np.diag([0.01, 0.01, 0.05]))
    with pytest.raises(URDFError, match="joint 'j' .*triangle inequality"):
        load_urdf(doc, inertia_check="error")


def test_bad_paths_and_arguments(tmp_path):
    with pytest.raises(URDFError, match="does not exist") as ei:
        load_urdf(tmp_path / "missing.urdf")
    assert "missing.urdf" in str(ei.value)
    with pytest.raises(URDFError, match="is a directory"):
        load_urdf(tmp_path)
    with pytest.raises(URDFError, match="root_joint"):
        load_urdf(ARM, root_joint="spherical")
    with pytest.raises(URDFError, match="mimic must be"):
        load_urdf(ARM, mimic="maybe")
    with pytest.raises(URDFError, match="expected a file path"):
        load_urdf(42)
    bad = urdf(link("b") + link("x") + joint("root_joint", "b", "x"))
    assert load_urdf(bad).nq == 1
    with pytest.raises(URDFError, match="already named 'root_joint'"):
        load_urdf(bad, root_joint="free")
    f = tmp_path / "broken.urdf"
    f.write_text("<robot name='x'><link name='a'>")
    with pytest.raises(URDFError) as ei:
        load_urdf(f)
    assert str(f) in str(ei.value) and "line" in str(ei.value)


def test_fixed_part_with_bad_inertia_is_accepted_when_the_body_is_valid():
    doc = urdf(link("b") + link("x", mass=1.0, I="0.01 0 0 0.01 0 0.01")
               + link("s", mass=0.0, I="1e-7 0 0 -5e-8 0 1e-7")
               + joint("j", "b", "x") + joint("js", "x", "s", type="fixed"))
    with pytest.warns(UserWarning, match="link 's': inertia is not positive semi-definite"):
        m = load_urdf(doc)
    assert m.nbodies == 1


# ------------------------------------------------------------------------------ missing inertia
def test_missing_inertial_warns_only_when_it_matters():
    # massless leaf moved by a joint: singular inertia matrix -> warn, naming the link
    doc = urdf(link("base") + link("a") + link("tip", mass=None)
               + joint("j1", "base", "a") + joint("j2", "a", "tip"))
    with pytest.warns(UserWarning, match=r"link 'tip' has no <inertial>.*joint 'j2'") as rec:
        load_urdf(doc)
    assert len([w for w in rec if "no <inertial>" in str(w.message)]) == 1
    # massless root (fixed base), massless link fixed to a massive one, massless intermediate
    # body with a massive child turning about another axis (M non-singular): no warning
    doc = urdf(link("base", mass=None) + link("mid", mass=None) + link("a") + link("f", mass=None)
               + joint("j1", "base", "mid") + joint("j2", "mid", "a", axis="1 0 0")
               + joint("jf", "a", "f", type="fixed"))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        m = load_urdf(doc)
    assert m.mass[1] == 0.0 and m.mass[2] == 1.0
    # the same with both joints about z: the child's inertia about z is all j2's, M is singular
    # (aba raises SingularError) -> warned at load time
    doc_z = doc.replace('<axis xyz="1 0 0"/>', '<axis xyz="0 0 1"/>')
    with pytest.warns(UserWarning, match=r"link 'mid' has no <inertial>.*singular"):
        load_urdf(doc_z)
    # a massless body whose fixed child has an inertial is fine too
    doc = urdf(link("base") + link("a", mass=None) + link("f") + joint("j1", "base", "a")
               + joint("jf", "a", "f", type="fixed", xyz="0.1 0 0"))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        m = load_urdf(doc)
    assert m.mass[1] == 1.0
    np.testing.assert_allclose(m.com[1], [0.1, 0, 0])


# ------------------------------------------------------------------------------ mimic joints
def _mimic(mult="2.0", offset="0.5", master="j1"):
    return f'<mimic joint="{master}" multiplier="{mult}" offset="{offset}"/>'


MIMIC = urdf(link("base") + link("a") + link("b") + link("c")
             + joint("j1", "base", "a") + joint("j2", "a", "b", xyz="0 0 0.2")
             + joint("j3", "b", "c", axis="0 1 0", xyz="0.1 0 0").replace("</joint>", _mimic() + "</joint>"))


def test_mimic_follow():
    m = load_urdf(MIMIC)
    assert m.nq == m.nv == 2 and m.mimic_joints == ("j3",)
    i = m.joint_index("j3")
    assert m.mimic_scale[i] == 2.0 and m.mimic_offset[i] == 0.5
    s = m.q_slice("j3")
    assert s.stop == s.start  # owns no q
    # the mimic joint moves as 2·q1 + 0.5: compare with the independent model
    mi = _load_quiet(MIMIC, mimic="independent")
    q = np.array([0.3, -0.7])
    qi = np.array([0.3, -0.7, 2 * 0.3 + 0.5])
    np.testing.assert_allclose(dqdyn.frame_pose(m, q, "c"), dqdyn.frame_pose(mi, qi, "c"), atol=1e-12)


def test_mimic_independent_and_error():
    with pytest.warns(UserWarning, match=r"mimic joints \['j3'\] are treated as independent"):
        m = load_urdf(MIMIC, mimic="independent")
    assert m.nq == 3 and m.mimic_joints == ()
    with pytest.raises(URDFError, match="joint 'j3' mimics joint 'j1' and mimic='error'"):
        load_urdf(MIMIC, mimic="error")
    # independent mode does not even look at the master (Pinocchio's default behaviour)
    doc = MIMIC.replace('joint="j1"', 'joint="ghost"')
    with pytest.warns(UserWarning):
        assert load_urdf(doc, mimic="independent").nq == 3


def test_mimic_of_a_later_joint_is_reordered():
    # depth-first by joint name visits 'a_mimic' (child of base) before its master 'z_master'
    doc = urdf(link("base") + link("m") + link("s")
               + joint("a_mimic", "base", "m").replace("</joint>", _mimic(master="z_master") + "</joint>")
               + joint("z_master", "base", "s"))
    m = load_urdf(doc)
    assert m.joint_names_all[1:] == ("z_master", "a_mimic")
    assert m.mimic_joints == ("a_mimic",) and m.nq == 1
    # ... its subtree comes along with it
    doc2 = doc.replace("</robot>", link("m2") + joint("b_child", "m", "m2") + "</robot>")
    m2 = load_urdf(doc2)
    assert m2.joint_names_all[1:] == ("z_master", "a_mimic", "b_child")


def test_mimic_chains_and_bad_mimics():
    doc = urdf(link("base") + link("a") + link("b") + link("c")
               + joint("j1", "base", "a")
               + joint("j2", "a", "b").replace("</joint>", _mimic("2", "0.5", "j1") + "</joint>")
               + joint("j3", "b", "c").replace("</joint>", _mimic("3", "1", "j2") + "</joint>"))
    m = load_urdf(doc)
    i = m.joint_index("j3")  # q3 = 3 (2 q1 + 0.5) + 1 = 6 q1 + 2.5
    assert (m.mimic_scale[i], m.mimic_offset[i]) == (6.0, 2.5)
    loop = urdf(link("base") + link("a") + link("b")
                + joint("j1", "base", "a").replace("</joint>", _mimic(master="j2") + "</joint>")
                + joint("j2", "base", "b").replace("</joint>", _mimic(master="j1") + "</joint>"))
    with pytest.raises(URDFError, match="loop"):
        load_urdf(loop)
    inside = urdf(link("base") + link("a") + link("b")
                  + joint("j1", "base", "a").replace("</joint>", _mimic(master="j2") + "</joint>")
                  + joint("j2", "a", "b"))
    with pytest.raises(URDFError, match=r"mimic joints \['j1'\] cannot be ordered"):
        load_urdf(inside)
    fixed_master = urdf(link("base") + link("a") + link("b") + joint("j1", "base", "a", type="fixed")
                        + joint("j2", "a", "b").replace("</joint>", _mimic(master="j1") + "</joint>"))
    with pytest.raises(URDFError, match="joint 'j2' mimics joint 'j1', a fixed joint"):
        load_urdf(fixed_master)
    # a <mimic> on a fixed joint is ignored
    on_fixed = urdf(link("base") + link("a") + link("b") + joint("j1", "base", "a")
                    + joint("j2", "a", "b", type="fixed").replace("</joint>", _mimic() + "</joint>"))
    assert load_urdf(on_fixed).nq == 1


def test_planar_and_floating_joints_inside_the_tree():
    doc = urdf(link("base") + link("a") + link("b")
               + joint("p", "base", "a", type="planar", axis="0 0 1", extra="")
               + joint("f", "a", "b", type="floating", axis=None, extra=""))
    m = load_urdf(doc)
    assert m.joint_type_name("p") == "planar" and m.joint_type_name("f") == "free"
    assert (m.nq, m.nv) == (3 + 8, 3 + 6)
