"""MuJoCo Menagerie robot files as they come, and MJCF files whose mesh files are absent.

``DQDYN_MENAGERIE`` pointing to a checkout of the MuJoCo Menagerie (or a folder laid out like
one: ``<robot>/<file>.xml``): every robot XML (every ``*.xml`` one level down that is not a
``scene*.xml`` and that has a ``<worldbody>`` with a body) is loaded by ``load_mjcf`` as it comes
— the ORIGINAL file, whatever asset files are absent — and compared with MuJoCo itself (rnea, M,
gravity term, aba, body poses, body Jacobians; ``test_mjcf_corpus.compare_with_mujoco``) to
1e-9 relative.  Without the variable the checkout test is skipped (it says so).

MuJoCo cannot compile a file whose mesh files are absent, so its oracle is a stripped copy
(`stripped_copy`, written into a temporary folder, never next to the file): dqdyn does its own
stripping in the loader (``_mjcf_extras.strip_absent_files``, through ``MjSpec``), the oracle's
is an independent pass over the XML text.

The hand-written documents below (not Menagerie text) are the regression tests of the loader's
rules for absent asset files; they always run."""

from __future__ import annotations

import glob
import os
import tempfile
import warnings
import xml.etree.ElementTree as ET

import numpy as np
import pytest

mujoco = pytest.importorskip("mujoco")

from test_mjcf_corpus import TOL, compare_with_mujoco  # noqa: E402

import dqdyn  # noqa: E402
from dqdyn.errors import MJCFError  # noqa: E402
from dqdyn.parsers.mjcf import compile_mjcf, load_mjcf  # noqa: E402

ENV = "DQDYN_MENAGERIE"
_FILE_TAGS = ("mesh", "texture", "hfield", "skin")
_TEXTURE_FILES = ("file", "fileright", "fileleft", "fileup", "filedown", "filefront", "fileback")


# ------------------------------------------------------------------------ the oracle's stripping
def _inline_includes(root: ET.Element, folder: str) -> None:
    """Replace every ``<include file=>`` by the children of the included ``<mujoco>``."""
    for parent in list(root.iter()):
        for i, child in reversed(list(enumerate(list(parent)))):
            if child.tag != "include":
                continue
            sub = ET.parse(os.path.join(folder, child.get("file"))).getroot()
            _inline_includes(sub, folder)
            parent.remove(child)
            for k, el in enumerate(list(sub)):
                parent.insert(i + k, el)


def stripped_xml(path: str) -> str:
    """The XML text of ``path`` with every asset that needs a file removed, for MuJoCo as the
    oracle when those files are absent.  Exactly:

    1. ``<include>`` elements are replaced by the included file's content;
    2. ``<mesh>``, ``<hfield>`` and ``<skin>`` assets with a ``file`` attribute, and
       ``<texture>`` assets with any ``file*`` attribute, are removed; a ``<material>`` loses its
       ``texture`` attribute when that texture was removed;
    3. every ``<geom>`` of the body tree with a ``mesh`` or ``hfield`` attribute, or
       ``type="mesh"`` / ``type="hfield"``, loses those attributes and becomes
       ``type="sphere" size="0.001" mass="0"`` — a small massless primitive at the same place;
       in ``<default>`` classes the same, without ``mass="0"`` (the class's other geoms keep
       their mass);
    4. when every ``<body>`` has an ``<inertial>`` element, ``<compiler inertiafromgeom="false">``;
       otherwise the compiler is left as it is (a body whose mass came from a mesh then gets a
       different mass: dqdyn refuses such a body, see ``test_body_whose_mass_is_an_absent_mesh``).

    Every ``<inertial>``, body, joint, site, actuator, tendon and equality is kept as written."""
    tree = ET.parse(path)
    root = tree.getroot()
    _inline_includes(root, os.path.dirname(os.path.abspath(path)))
    gone_textures = set()
    for asset in root.iter("asset"):
        for el in list(asset):
            if el.tag in ("mesh", "hfield", "skin") and el.get("file"):
                asset.remove(el)
            elif el.tag == "texture" and any(el.get(a) for a in _TEXTURE_FILES):
                gone_textures.add(el.get("name") or os.path.splitext(os.path.basename(el.get("file", "")))[0])
                asset.remove(el)
    for mat in root.iter("material"):
        if mat.get("texture") in gone_textures:
            del mat.attrib["texture"]
    in_defaults = {id(g) for d in root.iter("default") for g in d.findall("geom")}
    for g in root.iter("geom"):
        if g.get("mesh") or g.get("hfield") or g.get("type") in ("mesh", "hfield"):
            for a in ("mesh", "hfield", "fitscale"):
                g.attrib.pop(a, None)
            g.set("type", "sphere")
            g.set("size", "0.001")
            if id(g) not in in_defaults:  # a class's other geoms keep their own mass
                g.set("mass", "0")
    bodies = list(root.iter("body"))
    if bodies and all(b.find("inertial") is not None for b in bodies):
        comps = root.findall("compiler")
        if not comps:
            comps = [ET.SubElement(root, "compiler")]
            root.remove(comps[0])
            root.insert(0, comps[0])
        for c in comps:
            c.set("inertiafromgeom", "false")
    return ET.tostring(root, encoding="unicode")


def stripped_copy(path: str, folder: str) -> str:
    """`stripped_xml` of ``path`` written as ``folder/<name>``; returns that path."""
    out = os.path.join(folder, os.path.basename(path))
    with open(out, "w") as f:
        f.write(stripped_xml(path))
    return out


# ------------------------------------------------------------------------ the checkout
def is_robot_xml(path: str) -> str | None:
    """``None`` when ``path`` is a robot XML of a Menagerie folder, else why not."""
    if os.path.basename(path).startswith("scene"):
        return "a scene file (it includes the robot XML)"
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError as e:
        return f"not XML ({e})"
    wb = root.find("worldbody")
    if root.tag != "mujoco" or wb is None or wb.find("body") is None:
        return "a fragment without <worldbody> bodies (meant to be included)"
    return None


def menagerie_xmls(folder: str) -> list[str]:
    return sorted(p for p in glob.glob(os.path.join(folder, "*", "*.xml")) if is_robot_xml(p) is None)


def _mujoco_compiles(path: str) -> bool:
    try:
        mujoco.MjModel.from_xml_path(path)
    except ValueError:
        return False
    return True


def compare_robot(path: str, n_states: int = 4):
    """``compare_with_mujoco`` of the original ``path`` against MuJoCo: ``(model, errors, how)``.

    MuJoCo's oracle is the file itself when MuJoCo compiles it (a real checkout, mesh files
    present), else its `stripped_copy`.  ``how`` is ``"as it comes"``; or, for a file that
    ``load_mjcf`` refuses because the mass of a body without a joint (welded to its parent or to
    the world) would come from an absent mesh, ``"ignore=('meshes',)"`` (the stripped copy's
    massless spheres give that body the same zero share); or ``"refused"`` when a moving body's
    whole mass would come from absent meshes (then ``model`` is None and ``errors`` is the
    refusal's message)."""
    how, ignore = "as it comes", ()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            load_mjcf(path)
    except MJCFError as e:
        if "takes its mass and inertia from mesh" not in str(e):
            raise
        how, ignore, refusal = "ignore=('meshes',)", ("meshes",), str(e)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)
                load_mjcf(path, ignore=ignore)
        except MJCFError as e2:
            if "mass and inertia of moving bodies" not in str(e2):
                raise
            return None, refusal, "refused"
    if _mujoco_compiles(path):
        return (*compare_with_mujoco(path, n_states=n_states, ignore=ignore), how)
    with tempfile.TemporaryDirectory() as tmp:
        model, err = compare_with_mujoco(path, n_states=n_states, oracle=stripped_copy(path, tmp), ignore=ignore)
    return model, err, how


def _checkout_cases():
    folder = os.environ.get(ENV)
    if not folder or not os.path.isdir(folder):
        return [pytest.param(None, marks=pytest.mark.skip(
            reason=f"{ENV} does not point to a MuJoCo Menagerie checkout (set {ENV}=/path/to/"
                   "mujoco_menagerie to load every robot XML as it comes and compare it with MuJoCo)"))]
    files = menagerie_xmls(folder)
    if not files:
        return [pytest.param(None, marks=pytest.mark.skip(reason=f"{ENV}={folder!r} holds no robot XML"))]
    return [pytest.param(f, id=os.path.relpath(f, folder)) for f in files]


@pytest.mark.parametrize("path", _checkout_cases())
def test_menagerie_robot_loads_as_it_comes_and_matches_mujoco(path):
    model, err, how = compare_robot(path)
    if how == "refused":
        # the masses of moving bodies come from mesh files this checkout lacks: the file cannot
        # be loaded (nor compiled by MuJoCo) without them; the refusal names bodies and meshes
        pytest.skip(f"{os.path.basename(path)}: mesh files absent and moving bodies' masses come "
                    f"from them: {err[:160]}")
    bad = {k: v for k, v in err.items() if v > TOL}
    assert not bad, (path, how, err)


# ------------------------------------------------------------------------ absent asset files
GRAV = '<option gravity="0.3 -0.2 -9.81"><flag contact="disable"/></option>'
ARM = """
<mujoco model="meshy">
  <compiler meshdir="no_such_folder"/>
  {option}
  <asset>
    <mesh name="base_vis" file="base.obj"/>
    <mesh file="link1.stl"/>
    <mesh file="link2.obj"/>
    <texture name="skin" type="2d" file="carbon.png"/>
    <material name="carbon" texture="skin"/>
  </asset>
  <default><default class="visual"><geom type="mesh" contype="0" conaffinity="0" group="2"/></default></default>
  <worldbody>
    <body name="base" pos="0.1 0 0.2" quat="0.9 0 0.1 0.3">
      <inertial pos="0.02 0.01 0.05" quat="0.8 0.2 0.1 0.3" mass="4" diaginertia="0.0044 0.0054 0.0072"/>
      <geom class="visual" mesh="base_vis" material="carbon"/>
      <body name="link1" pos="0 0 0.1">
        <joint name="j1" axis="0 0 1" armature="0.1"/>
        <inertial pos="0 0.02 0.1" mass="3.7" fullinertia="0.01 0.012 0.0067 0.001 -0.0005 0.0002"/>
        <geom class="visual" mesh="link1"/>
        <geom type="mesh" mesh="link1" group="3"/>
        <body name="link2" pos="0 0.1 0.15">
          <joint name="j2" axis="0 1 0" pos="0 0.02 0"/>
          {link2_inertia}
          <geom class="visual" mesh="link2"/>
          <site name="tip" pos="0.3 0 0"/>
        </body>
      </body>
    </body>
  </worldbody>
</mujoco>"""
EXPLICIT = '<inertial pos="0.2 0 0" mass="2.3" diaginertia="0.004 0.03 0.03"/>'
#: link2's mass from a capsule; its mesh geom is visual only (outside inertiagrouprange)
FROM_PRIMITIVE = '<geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.03"/>'


def _write(tmp, text, name="robot.xml"):
    p = os.path.join(tmp, name)
    with open(p, "w") as f:
        f.write(text)
    return p


def _doc(link2=EXPLICIT, option=GRAV):
    return ARM.format(option=option, link2_inertia=link2)


@pytest.mark.parametrize("link2", [EXPLICIT, FROM_PRIMITIVE], ids=["explicit-inertial", "primitive-geom"])
def test_absent_mesh_files_do_not_stop_a_load_when_inertials_are_explicit(tmp_path, link2):
    path = _write(tmp_path, _doc(link2, option=GRAV + '<compiler inertiagrouprange="0 1"/>'))
    with pytest.raises(ValueError):  # MuJoCo itself needs the mesh files
        mujoco.MjModel.from_xml_path(path)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        model, info = load_mjcf(path, return_info=True)
    msg = " ".join(str(x.message) for x in w)
    assert "3 mesh file(s) absent" in msg and "'base.obj'" in msg and "texture" in msg
    assert set(info.ignored) >= {"mesh files", "texture files"}
    model2, err, how = compare_robot(path)
    assert how == "as it comes" and max(err.values()) < TOL, err
    oracle = mujoco.MjModel.from_xml_string(stripped_xml(path))
    assert model.welded_inertia[0] == pytest.approx(4.0)
    assert model.total_mass + model.welded_inertia[0] == pytest.approx(oracle.body_mass.sum(), rel=1e-14)


def test_compile_mjcf_of_a_file_with_absent_meshes_has_the_oracles_inertias(tmp_path):
    path = _write(tmp_path, _doc())
    mj = compile_mjcf(path)
    ref = mujoco.MjModel.from_xml_string(stripped_xml(path))
    for a in ("body_mass", "body_ipos", "body_iquat", "body_inertia", "body_pos", "body_quat",
              "jnt_pos", "jnt_axis", "dof_armature", "site_pos"):
        np.testing.assert_allclose(getattr(mj, a), getattr(ref, a), rtol=0, atol=1e-15, err_msg=a)
    assert mj.nmesh == 0 and mj.ntex == 0


def test_body_whose_mass_is_an_absent_mesh_is_refused_naming_mesh_and_body(tmp_path):
    # link2 has no <inertial>: MuJoCo would take its mass and inertia from the link2 mesh
    path = _write(tmp_path, _doc(link2=""))
    with pytest.raises(MJCFError, match=r"body 'link2' takes its mass and inertia from mesh\(es\) 'link2', "
                                         r"whose files are absent"):
        load_mjcf(path)
    # ignore=("meshes",) leaves that share out; a moving body left with no mass is MuJoCo's error
    with pytest.raises(MJCFError, match=r"mass and inertia of moving bodies.*\n.*'link2'"):
        load_mjcf(path, ignore=("meshes",))
    # a base welded to the world whose mass is its (absent) mesh's: refused as it comes; with
    # ignore=("meshes",) it loads with that mass left out, named, as the stripped copy has it
    path = _write(tmp_path, _doc().replace(
        '<inertial pos="0.02 0.01 0.05" quat="0.8 0.2 0.1 0.3" mass="4" diaginertia="0.0044 0.0054 0.0072"/>', ""),
        "welded.xml")
    with pytest.raises(MJCFError, match=r"body 'base' takes its mass and inertia from mesh\(es\) 'base_vis'"):
        load_mjcf(path)
    with pytest.warns(UserWarning, match=r"mesh mass: .* bodies 'base' is left out"):
        model = load_mjcf(path, ignore=("meshes",))
    assert model.welded_inertia[0] == 0.0
    model, err, how = compare_robot(path)
    assert how == "ignore=('meshes',)" and max(err.values()) < TOL, err
    # a massless mesh geom, or one outside inertiagrouprange, gives no mass: no refusal
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        load_mjcf(_write(tmp_path, _doc(link2=FROM_PRIMITIVE, option=GRAV + '<compiler inertiagrouprange="0 1"/>'),
                         "ok.xml"))
    doc = _doc(link2=FROM_PRIMITIVE).replace('<geom class="visual" mesh="link2"/>',
                                              '<geom class="visual" mesh="link2" density="0"/>')
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        m = load_mjcf(_write(tmp_path, doc, "massless.xml"))
    ref = mujoco.MjModel.from_xml_string(stripped_xml(os.path.join(tmp_path, "massless.xml")))
    assert m.total_mass == pytest.approx(ref.body_mass[2:].sum(), rel=1e-14)


def test_inertiafromgeom_true_makes_every_mesh_count(tmp_path):
    doc = _doc().replace('<compiler meshdir="no_such_folder"/>',
                         '<compiler meshdir="no_such_folder" inertiafromgeom="true"/>')
    with pytest.raises(MJCFError, match=r"body 'base' takes its mass and inertia from mesh\(es\) 'base_vis'"):
        load_mjcf(_write(tmp_path, doc))


def test_an_mjspec_source_is_not_changed_and_strings_resolve_in_the_working_folder(tmp_path, monkeypatch):
    path = _write(tmp_path, _doc())
    spec = mujoco.MjSpec.from_file(path)
    n = len(spec.meshes)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        a = load_mjcf(spec)
        monkeypatch.chdir(tmp_path)
        b = load_mjcf(_doc())
    assert len(spec.meshes) == n and len(spec.geoms) == 4
    q = dqdyn.random_configuration(a, seed=1)
    np.testing.assert_allclose(dqdyn.mass_matrix(a, q), dqdyn.mass_matrix(b, q), rtol=0, atol=1e-15)


def test_present_mesh_files_are_kept(tmp_path):
    # a present mesh (a tetrahedron) still gives its body the mass MuJoCo computes from it
    os.makedirs(tmp_path / "m")
    with open(tmp_path / "m" / "tet.obj", "w") as f:
        f.write("v 0 0 0\nv 0.1 0 0\nv 0 0.1 0\nv 0 0 0.1\nf 1 3 2\nf 1 2 4\nf 1 4 3\nf 2 3 4\n")
    doc = """<mujoco><compiler meshdir="m"/><asset><mesh file="tet.obj"/><mesh file="gone.obj"/></asset>
      <worldbody><body name="b"><joint axis="0 0 1"/><geom type="mesh" mesh="tet"/>
      <geom type="mesh" mesh="gone" mass="0"/></body></worldbody></mujoco>"""
    path = _write(tmp_path, doc)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        model = load_mjcf(path)
    mj = compile_mjcf(path)
    assert mj.nmesh == 1 and mj.body_mass[1] == pytest.approx(1000 * 0.1 ** 3 / 6, rel=1e-6)  # float32 vertices
    assert model.total_mass == pytest.approx(mj.body_mass[1], rel=1e-14)
