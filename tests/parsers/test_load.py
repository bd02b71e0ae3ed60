"""dqdyn.load: every way a robot is named (a file by extension or by content, an XML string, a
dqdyn / example-robot-data name, a MuJoCo Menagerie model, a robot_descriptions module) gives the
model of the direct load_urdf / load_mjcf / load_example call, and a name nothing knows gives one
error with the nearest names.  The Menagerie checkout and the robot_descriptions package are
written here in tmp_path (no network)."""

from __future__ import annotations

import importlib
import shutil
import sys

import numpy as np
import pytest
from numpy.testing import assert_allclose

mujoco = pytest.importorskip("mujoco")

import dqdyn  # noqa: E402
from dqdyn import loading  # noqa: E402
from dqdyn.errors import (  # noqa: E402
    DqdynError,
    MissingExtraError,
    MJCFError,
    UnknownNameError,
    URDFError,
)
from dqdyn.models import example_robot_data_dir, model_path  # noqa: E402

# load_mjcf names what it leaves out (contacts of the geoms) in one warning: expected here
pytestmark = pytest.mark.filterwarnings("ignore:MJCF .*left out of the model:UserWarning")

ARM = """<mujoco model="acme_arm">
  <compiler angle="radian" autolimits="true"/>
  <option gravity="0 0 -9.81"/>
  <worldbody>
    <body name="link1" pos="0 0 0.1">
      <joint name="j1" type="hinge" axis="0 0 1" range="-2 2"/>
      <inertial pos="0.1 0.01 0" mass="{m1}" diaginertia="0.02 0.03 0.025"/>
      <body name="link2" pos="0.3 0 0" euler="0.3 0 0">
        <joint name="j2" type="hinge" axis="0 1 0"/>
        <geom type="capsule" fromto="0 0 0 0.25 0 0" size="0.03" mass="{m2}"/>
        <body name="link3" pos="0.25 0 0">
          <joint name="j3" type="hinge" axis="1 0 0"/>
          <inertial pos="0.05 0 0" mass="0.4" diaginertia="0.004 0.003 0.002"/>
        </body>
      </body>
    </body>
  </worldbody>
</mujoco>
"""

DOG = """<mujoco model="beta_dog">
  <compiler angle="radian"/>
  <worldbody>
    <body name="trunk" pos="0 0 0.4">
      <freejoint name="root"/>
      <inertial pos="0 0 0" mass="6" diaginertia="0.1 0.2 0.25"/>
      <body name="thigh" pos="0.2 0.1 0">
        <joint name="hip" type="hinge" axis="0 1 0"/>
        <geom type="capsule" fromto="0 0 0 0 0 -0.2" size="0.02" mass="0.7"/>
        <body name="calf" pos="0 0 -0.2">
          <joint name="knee" type="hinge" axis="0 1 0"/>
          <geom type="capsule" fromto="0 0 0 0 0 -0.2" size="0.015" mass="0.3"/>
        </body>
      </body>
    </body>
  </worldbody>
</mujoco>
"""

SCENE = """<mujoco model="{model} scene">
  <include file="{robot}"/>
  <statistic center="0 0 0.3" extent="1"/>
  <visual><headlight diffuse="0.6 0.6 0.6"/></visual>
  <asset>
    <texture type="2d" name="groundplane" builtin="checker" rgb1="0.2 0.3 0.4"
             rgb2="0.1 0.2 0.3" width="300" height="300"/>
    <material name="groundplane" texture="groundplane" texrepeat="5 5"/>
  </asset>
  <worldbody>
    <light pos="0 0 1.5" dir="0 0 -1" directional="true"/>
    <geom name="floor" size="0 0 0.05" type="plane" material="groundplane"/>
  </worldbody>
</mujoco>
"""


@pytest.fixture
def menagerie(tmp_path):
    """A Menagerie-like checkout: <model_dir>/<robot>.xml with scene.xml including it."""
    root = tmp_path / "mujoco_menagerie"
    arm = root / "acme_arm"
    arm.mkdir(parents=True)
    (arm / "arm.xml").write_text(ARM.format(m1=1.3, m2=0.8))
    (arm / "arm_heavy.xml").write_text(ARM.format(m1=5.0, m2=3.0))  # a variant, not the robot
    (arm / "scene.xml").write_text(SCENE.format(model="acme_arm", robot="arm.xml"))
    dog = root / "beta_dog"
    dog.mkdir()
    (dog / "dog.xml").write_text(DOG)
    (dog / "scene.xml").write_text(SCENE.format(model="beta_dog", robot="dog.xml"))
    # a folder whose robot file is not named after it: found through scene.xml's <include>
    gamma = root / "gamma_bot"
    gamma.mkdir()
    (gamma / "model.xml").write_text(ARM.format(m1=2.0, m2=1.0))
    (gamma / "extra.xml").write_text(ARM.format(m1=9.0, m2=9.0))
    (gamma / "scene.xml").write_text(SCENE.format(model="gamma_bot", robot="model.xml"))
    # two robots, two scenes: nothing picks one
    hand = root / "delta_hand"
    hand.mkdir()
    for side in ("left", "right"):
        (hand / f"{side}_hand.xml").write_text(ARM.format(m1=1.0, m2=1.0))
        (hand / f"scene_{side}.xml").write_text(
            SCENE.format(model=f"{side} hand", robot=f"{side}_hand.xml"))
    return root


@pytest.fixture(autouse=True)
def _no_ambient_sources(monkeypatch, tmp_path):
    """No Menagerie checkout but the ones a test gives."""
    monkeypatch.delenv(loading.MENAGERIE_ENV, raising=False)
    monkeypatch.setenv("ROBOT_DESCRIPTIONS_CACHE", str(tmp_path / "no_cache"))


def assert_same_dynamics(m1, m2, rng=None):
    """rnea and M of two models agree on a random state."""
    rng = np.random.default_rng(7) if rng is None else rng
    assert (m1.nq, m1.nv) == (m2.nq, m2.nv)
    q = dqdyn.random_configuration(m1, None, rng)
    v = rng.standard_normal(m1.nv)
    a = rng.standard_normal(m1.nv)
    assert_allclose(dqdyn.rnea(m1, q, v, a), dqdyn.rnea(m2, q, v, a), rtol=1e-12, atol=1e-12)
    assert_allclose(dqdyn.mass_matrix(m1, q), dqdyn.mass_matrix(m2, q), rtol=1e-12, atol=1e-12)


def assert_different_dynamics(m1, m2):
    rng = np.random.default_rng(7)
    q = dqdyn.random_configuration(m1, None, rng)
    assert not np.allclose(dqdyn.mass_matrix(m1, q), dqdyn.mass_matrix(m2, q))


# ------------------------------------------------------------------------------ Menagerie
def test_menagerie_name_by_argument_loads_the_robot_file(menagerie):
    # the robot file is preferred to the scene (same dynamics, no floor) and to a variant
    assert loading.menagerie_robot_file(menagerie / "acme_arm").name == "arm.xml"
    assert loading.menagerie_robot_file(menagerie / "beta_dog").name == "dog.xml"
    m = dqdyn.load("acme_arm", menagerie=menagerie)
    assert_same_dynamics(m, dqdyn.load_mjcf(menagerie / "acme_arm" / "arm.xml"))
    # the variant file in the same folder is a different robot: the check can tell them apart
    assert_different_dynamics(m, dqdyn.load_mjcf(menagerie / "acme_arm" / "arm_heavy.xml"))


def test_menagerie_name_by_environment_variable(menagerie, monkeypatch):
    monkeypatch.setenv(loading.MENAGERIE_ENV, str(menagerie))
    m = dqdyn.load("beta_dog")
    direct = dqdyn.load_mjcf(menagerie / "beta_dog" / "dog.xml")
    assert m.nv == 8 and m.nq == 10
    assert_same_dynamics(m, direct)


def test_the_argument_wins_over_the_environment_variable(menagerie, tmp_path, monkeypatch):
    other = tmp_path / "other"
    other.mkdir()
    monkeypatch.setenv(loading.MENAGERIE_ENV, str(other))
    assert dqdyn.load("acme_arm", menagerie=menagerie).nv == 3
    with pytest.raises(UnknownNameError):
        dqdyn.load("acme_arm")


def test_menagerie_scene_file_has_the_robots_dynamics(menagerie):
    """scene.xml includes the robot file (resolved by MuJoCo relative to scene.xml) and adds a
    floor and a light: the same dynamics, and MuJoCo's own M of the scene."""
    scene = dqdyn.load("acme_arm/scene.xml", menagerie=menagerie)
    assert_same_dynamics(scene, dqdyn.load("acme_arm", menagerie=menagerie))
    mj = mujoco.MjModel.from_xml_path(str(menagerie / "acme_arm" / "scene.xml"))
    d = mujoco.MjData(mj)
    q = np.array([0.4, -0.7, 1.1])
    d.qpos[:] = q
    mujoco.mj_forward(mj, d)
    M = np.zeros((mj.nv, mj.nv))
    mujoco.mj_fullM(mj, d, M)
    assert_allclose(dqdyn.mass_matrix(scene, q), M, rtol=1e-9, atol=1e-12)


def test_menagerie_file_without_extension_and_folder_path(menagerie):
    direct = dqdyn.load_mjcf(menagerie / "acme_arm" / "arm_heavy.xml")
    assert_same_dynamics(dqdyn.load("acme_arm/arm_heavy", menagerie=menagerie), direct)
    # a model folder given as a path
    assert_same_dynamics(dqdyn.load(menagerie / "beta_dog"),
                         dqdyn.load_mjcf(menagerie / "beta_dog" / "dog.xml"))


def test_menagerie_robot_file_found_through_the_scene_include(menagerie):
    assert loading.menagerie_robot_file(menagerie / "gamma_bot").name == "model.xml"
    assert_same_dynamics(dqdyn.load("gamma_bot", menagerie=menagerie),
                         dqdyn.load_mjcf(menagerie / "gamma_bot" / "model.xml"))


def test_menagerie_folder_with_several_robots_asks_for_one(menagerie):
    with pytest.raises(UnknownNameError, match="delta_hand/left_hand.xml.*delta_hand/right_hand"):
        dqdyn.load("delta_hand", menagerie=menagerie)
    assert dqdyn.load("delta_hand/right_hand.xml", menagerie=menagerie).nv == 3


def test_menagerie_typo_suggests_the_folder(menagerie):
    with pytest.raises(UnknownNameError, match=r"Did you mean 'acme_arm'"):
        dqdyn.load("acme_ram", menagerie=menagerie)
    with pytest.raises(UnknownNameError, match=r"Did you mean 'beta_dog'"):
        dqdyn.load("beta_dgo/scene.xml", menagerie=menagerie)


def test_menagerie_path_must_be_a_folder(tmp_path, monkeypatch):
    with pytest.raises(DqdynError, match="menagerie="):
        dqdyn.load("acme_arm", menagerie=tmp_path / "missing")
    monkeypatch.setenv(loading.MENAGERIE_ENV, str(tmp_path / "missing"))
    with pytest.raises(DqdynError, match=loading.MENAGERIE_ENV):
        dqdyn.load("acme_arm")


def test_robot_descriptions_cache_is_searched(menagerie, tmp_path, monkeypatch):
    cache = tmp_path / "rd_cache"
    cache.mkdir()
    shutil.copytree(menagerie, cache / "mujoco_menagerie")
    monkeypatch.setenv("ROBOT_DESCRIPTIONS_CACHE", str(cache))
    assert_same_dynamics(dqdyn.load("acme_arm"),
                         dqdyn.load_mjcf(menagerie / "acme_arm" / "arm.xml"))


# --------------------------------------------------------------------- robot_descriptions
@pytest.fixture
def fake_robot_descriptions(tmp_path, monkeypatch, menagerie):
    """A robot_descriptions package with three description modules pointing to local files,
    and one whose import fails (as a failed download does)."""
    pkg = tmp_path / "site" / "robot_descriptions"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text('"""Fake robot_descriptions for the tests."""\n')
    (pkg / "acme_arm_mj_description.py").write_text(
        f"MJCF_PATH = {str(menagerie / 'acme_arm' / 'arm.xml')!r}\n")
    (pkg / "two_link_description.py").write_text(
        f"URDF_PATH = {str(dqdyn.bundled('two_link_arm'))!r}\n")
    (pkg / "broken_mj_description.py").write_text("raise OSError('clone failed: no network')\n")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    for k in [k for k in sys.modules if k.split(".")[0] == "robot_descriptions"]:
        monkeypatch.delitem(sys.modules, k)
    importlib.invalidate_caches()
    yield pkg
    for k in [k for k in sys.modules if k.split(".")[0] == "robot_descriptions"]:
        del sys.modules[k]
    importlib.invalidate_caches()


def test_robot_descriptions_long_and_short_names(fake_robot_descriptions, menagerie):
    direct = dqdyn.load_mjcf(menagerie / "acme_arm" / "arm.xml")
    assert_same_dynamics(dqdyn.load("acme_arm_mj_description"), direct)
    assert_same_dynamics(dqdyn.load("acme_arm_mj"), direct)
    urdf = dqdyn.load_urdf(dqdyn.bundled("two_link_arm"))
    assert_same_dynamics(dqdyn.load("two_link_description"), urdf)
    # options go to the loader of the file
    assert dqdyn.load("two_link", root_joint="free").nv == urdf.nv + 6


def test_robot_descriptions_typo_and_failed_download(fake_robot_descriptions):
    with pytest.raises(UnknownNameError, match="Did you mean 'acme_arm_mj_description'"):
        dqdyn.load("acme_arm_mj_descripton")
    with pytest.raises(DqdynError, match="clone failed"):
        dqdyn.load("broken_mj")


def test_robot_descriptions_not_installed(monkeypatch):
    monkeypatch.setattr(loading, "_rd_installed", lambda: False)
    with pytest.raises(MissingExtraError, match="pip install robot_descriptions"):
        dqdyn.load("panda_mj_description")


# ------------------------------------------------------------------------------ files
def test_urdf_and_mjcf_by_path_and_by_content(tmp_path, menagerie):
    src = dqdyn.bundled("jaco6")
    direct = dqdyn.load_urdf(src)
    assert_same_dynamics(dqdyn.load(src), direct)
    assert_same_dynamics(dqdyn.load(str(src)), direct)
    for name in ("jaco_model", "jaco.xml", "jaco.txt"):  # no extension, .xml, other
        shutil.copy(src, tmp_path / name)
        assert_same_dynamics(dqdyn.load(tmp_path / name), direct)
    mj = menagerie / "beta_dog" / "dog.xml"
    mdirect = dqdyn.load_mjcf(mj)
    for name in ("dog", "dog.mjcf", "dog.model"):
        shutil.copy(mj, tmp_path / name)
        assert_same_dynamics(dqdyn.load(tmp_path / name), mdirect)
    # XML strings
    assert_same_dynamics(dqdyn.load(src.read_text()), direct)
    assert_same_dynamics(dqdyn.load(mj.read_text()), mdirect)


def test_root_tag_past_declaration_comments_and_doctype():
    doc = (b'\xef\xbb\xbf<?xml version="0.0"?>\n<!-- a <robot> comment -->\n'
           b'<!DOCTYPE mujoco [<!ENTITY a "b">]>\n<mujoco model="x"/>')
    assert loading._root_tag(doc) == "mujoco"
    assert loading._root_tag(b"not xml") is None


def test_file_options_are_passed_and_checked(tmp_path, menagerie):
    src = dqdyn.bundled("two_link_arm")
    m = dqdyn.load(src, root_joint="free", gravity=(0.0, 0.0, -3.0))
    direct = dqdyn.load_urdf(src, "free", gravity=(0.0, 0.0, -3.0))
    assert_same_dynamics(m, direct)
    with pytest.raises(MJCFError, match="'root_joint'.*load_mjcf"):
        dqdyn.load(menagerie / "acme_arm" / "arm.xml", root_joint="free")
    with pytest.raises(URDFError, match="'ignore'.*load_urdf"):
        dqdyn.load(src, ignore=("armature",))
    model, info = dqdyn.load(menagerie / "acme_arm" / "arm.xml", return_info=True)
    assert model.nv == 3 and info is not None


def test_files_that_are_neither_format(tmp_path):
    (tmp_path / "notes.txt").write_text("hello")
    with pytest.raises(DqdynError, match="expected <robot> .URDF. or <mujoco>"):
        dqdyn.load(tmp_path / "notes.txt")
    (tmp_path / "arm.urdf.xacro").write_text("<robot/>")
    with pytest.raises(URDFError, match="Xacro"):
        dqdyn.load(tmp_path / "arm.urdf.xacro")
    with pytest.raises(DqdynError, match="<svg>"):
        dqdyn.load("<svg></svg>")
    with pytest.raises(DqdynError, match="source must be"):
        dqdyn.load(42)


def test_missing_file_gives_one_error(tmp_path, menagerie):
    for source in (tmp_path / "nothere.urdf", str(tmp_path / "nothere.urdf"), "nothere/arm.xml"):
        with pytest.raises(UnknownNameError, match="no such file"):
            dqdyn.load(source)
    with pytest.raises(UnknownNameError, match="no such file"):
        dqdyn.load("nothere/arm.xml", menagerie=menagerie)


# --------------------------------------------------------------------------------- names
def test_bundled_names():
    for name in ("jaco6", "two_link_arm", "youbot_jaco", "arm7"):
        assert_same_dynamics(dqdyn.load(name), dqdyn.load_example(name))
    assert_same_dynamics(dqdyn.load("jaco6"), dqdyn.load_urdf(model_path("jaco6")))
    assert_same_dynamics(dqdyn.load("youbot_jaco", root_joint=None),
                         dqdyn.load_urdf(model_path("youbot_jaco")))


def test_names_of_other_kinds_point_to_their_loader():
    for name, loader in (("four_bar", "load_constrained_example"),
                         ("stewart_6_6", "load_parallel_example")):
        with pytest.raises(DqdynError, match=rf"{loader}\('{name}'\)"):
            dqdyn.load(name)
    with pytest.raises(DqdynError, match="'root_joint'"):
        dqdyn.load("arm7", root_joint="free")


@pytest.mark.skipif(example_robot_data_dir() is None, reason="example-robot-data not installed")
def test_example_robot_data_names():
    for name in ("ur5", "solo12"):
        assert_same_dynamics(dqdyn.load(name), dqdyn.load_example(name))
    assert_same_dynamics(dqdyn.load("ur5"), dqdyn.load_urdf(model_path("ur5")))
    solo = dqdyn.load("solo12")
    assert solo.nv == 18  # free base, as example-robot-data gives it


def test_example_robot_data_name_without_the_package(monkeypatch):
    monkeypatch.setattr("dqdyn.models.example_robot_data_dir", lambda: None)
    monkeypatch.setattr("dqdyn.loading._rd_installed", lambda: False)
    with pytest.raises(MissingExtraError, match="pip install example-robot-data"):
        dqdyn.load("talos")


def test_example_robot_data_name_when_robot_descriptions_cannot_download(monkeypatch):
    # robot_descriptions installed but offline: the error still says what works without a network
    def offline(name):
        raise DqdynError(f"load: robot_descriptions could not provide {name + '_description'!r}: "
                         "GitCommandError: Could not resolve host: github.com")

    monkeypatch.setattr("dqdyn.models.example_robot_data_dir", lambda: None)
    monkeypatch.setattr(loading, "_rd_installed", lambda: True)
    monkeypatch.setattr(loading, "_rd_module", offline)
    with pytest.raises(MissingExtraError, match="pip install example-robot-data") as e:
        dqdyn.load("talos")
    assert "Could not resolve host" in str(e.value)


def test_typo_suggests_known_names():
    with pytest.raises(UnknownNameError, match=r"Did you mean 'jaco6'"):
        dqdyn.load("jaco")
    with pytest.raises(UnknownNameError, match=r"Did you mean 'two_link_arm'"):
        dqdyn.load("Two_Link_Arm")
    with pytest.raises(UnknownNameError) as e:
        dqdyn.load("qwertyuiop")
    assert "Did you mean" not in str(e.value) and "DQDYN_MENAGERIE" in str(e.value)
