"""Every robot dqdyn can give you by name: one listing, one loader.

>>> import dqdyn
>>> "jaco6" in dqdyn.list_models()
True
>>> dqdyn.load_example("two_link_arm").nv
2

Three sources, one namespace:

* ``"bundled"`` — the URDF files shipped in ``dqdyn/data`` (``two_link_arm``, ``jaco6``,
  ``youbot_jaco``, ``branched``, ``diff_drive_manipulator``) and the robots built in code for the
  papers' experiments and the tests (``arm7``, ``serial50``, ``tree38``, ``pioneer``; the
  closed-chain and nonholonomic models of `dqdyn.constraints.models`; the parallel robots of
  `dqdyn.parallel`).  Always available.
* ``"example-robot-data"`` — the robots of `example-robot-data
  <https://github.com/Gepetto/example-robot-data>`_ (``panda``, ``ur5``, ``talos``, ``tiago``,
  ``solo12``, …: the names of its Python loader), found when the package is installed
  (``pip install example-robot-data``).  They are read from its URDF files with
  `load_urdf`; legged robots, humanoids and drones get a free root joint as
  example-robot-data gives them (``root_joint=None`` fixes the base).

One loader per ``kind`` of entry (``model_info(name).kind``; ``model_info(name).loader`` names
the function), each with one return type:

* ``"model"`` — `load_example` returns a `Model`;
* ``"constrained"`` — `load_constrained_example` returns a `ConstrainedExample`
  ``(model, constraints, q0)`` with ``q0`` satisfying the constraints (pass ``constraints`` to
  `constrained_forward_dynamics` or `simulate`);
* ``"parallel"`` — `load_parallel_example` returns a `ParallelRobot` (Stewart platform, cable
  robot).

A loader given a name of another kind raises `ModelError` naming the loader to use.

The files and factories stay where they are (``dqdyn/data``, `dqdyn.reproduce.robots`,
`dqdyn.constraints.models`, `dqdyn.parallel`); this module is their index.
"""

from __future__ import annotations

import importlib
import os
import sys
import sysconfig
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from dqdyn.errors import DqdynError, MissingExtraError, ModelError, UnknownNameError

if TYPE_CHECKING:  # (annotations only: the loaders import their factories on first use)
    from dqdyn.multibody.model import Model
    from dqdyn.parallel import ParallelRobot

__all__ = ["ModelEntry", "ConstrainedExample", "list_models", "model_info", "load_example",
           "load_constrained_example", "load_parallel_example", "model_path",
           "example_robot_data_dir"]

#: the loader of each kind of entry, and what it returns
LOADERS = {"model": "load_example", "constrained": "load_constrained_example",
           "parallel": "load_parallel_example"}
_RETURNS = {"model": "a Model",
            "constrained": "ConstrainedExample(model, constraints, q0)",
            "parallel": "a ParallelRobot (dqdyn.parallel)"}
_WHAT = {"model": "a robot of kind 'model' (a tree)",
         "constrained": "a robot of kind 'constrained' (a tree with loop-closure or rolling "
                        "constraints)",
         "parallel": "a robot of kind 'parallel'"}


@dataclass(frozen=True)
class ModelEntry:
    """One named robot of `list_models`; `loader` names the function that loads it."""

    name: str
    source: str  # "bundled" or "example-robot-data"
    kind: str  # "model", "constrained" or "parallel"
    description: str
    target: str  # "file:<name>.urdf", "erd:<relative path>" or "py:<module>:<function>"
    root_joint: str | None = None  # default root joint of a URDF entry
    nv: int | None = None  # degrees of freedom of the default load (documentation only)

    @property
    def loader(self) -> str:
        """Name of the ``dqdyn`` function that loads this entry: ``"load_example"`` (kind
        ``"model"``, a `Model`), ``"load_constrained_example"`` (kind ``"constrained"``, a
        `ConstrainedExample`) or ``"load_parallel_example"`` (kind ``"parallel"``, a
        `ParallelRobot`)."""
        return LOADERS[self.kind]


class ConstrainedExample(NamedTuple):
    """A closed-chain or nonholonomic example of `load_constrained_example`.

    Unpacks as ``model, constraints, q0 = dqdyn.load_constrained_example("four_bar")``.
    """

    #: the tree the constraints act on
    model: Model
    #: `dqdyn.constraints.Constraint` objects (loop closures, rolling without slipping); pass
    #: them to `constrained_forward_dynamics` or `simulate`
    constraints: list
    #: a configuration (nq,) that satisfies the constraints
    q0: np.ndarray


# ----------------------------------------------------------------------------- bundled entries
_BUNDLED = [
    ModelEntry("two_link_arm", "bundled", "model", "planar 2-link arm (URDF)",
               "file:two_link_arm.urdf", nv=2),
    ModelEntry("jaco6", "bundled", "model", "JACO-like 6-DoF arm of Silva2022thesis Table 4.6 (URDF)",
               "file:jaco6.urdf", nv=6),
    ModelEntry("youbot_jaco", "bundled", "model",
               "holonomic mobile manipulator, JACO-like arm on a youBot-like planar base "
               "(URDF; Silva2022 Table 2)", "file:youbot_jaco.urdf", root_joint="planar", nv=9),
    ModelEntry("branched", "bundled", "model", "small branched tree with fixed links (URDF)",
               "file:branched.urdf", nv=6),
    ModelEntry("diff_drive_manipulator", "bundled", "model",
               "differential-drive base with an arm and two wheels (URDF; fixed base by "
               "default, root_joint='planar' moves it)", "file:diff_drive_manipulator.urdf", nv=8),
    ModelEntry("arm7", "bundled", "model", "generic 7-DoF spatial arm (code)",
               "py:dqdyn.reproduce.robots:arm7", nv=7),
    ModelEntry("serial50", "bundled", "model", "50-DoF serial arm of Silva2022 Table 2 (code)",
               "py:dqdyn.reproduce.robots:serial50", nv=50),
    ModelEntry("tree38", "bundled", "model",
               "38-DoF branched robot, 9 subsystems, Silva2022thesis §5.3 (code)",
               "py:dqdyn.reproduce.robots:tree38", nv=38),
    ModelEntry("pioneer", "bundled", "model",
               "Pioneer differential-drive base of Silva2022thesis app. A, planar joint (code)",
               "py:dqdyn.reproduce.robots:pioneer", nv=3),
    ModelEntry("mobile_manipulator", "bundled", "constrained",
               "8-DoF nonholonomic mobile manipulator of Silva2022 §5 (code)",
               "py:dqdyn.constraints.models:mobile_manipulator", nv=8),
    ModelEntry("four_bar", "bundled", "constrained", "planar four-bar linkage, one loop (code)",
               "py:dqdyn.constraints.models:four_bar", nv=3),
    ModelEntry("five_bar", "bundled", "constrained", "planar five-bar linkage, one loop (code)",
               "py:dqdyn.constraints.models:five_bar", nv=4),
    ModelEntry("slider_crank", "bundled", "constrained", "planar slider-crank, one loop (code)",
               "py:dqdyn.constraints.models:slider_crank", nv=3),
    ModelEntry("stewart_6_6", "bundled", "parallel", "6-6 Stewart–Gough platform (stand-in for MontgomerySmith2023 §10.3)",
               "py:dqdyn.parallel:stewart_6_6"),
    ModelEntry("stewart_3_3", "bundled", "parallel", "3-3 (octahedral) Stewart platform",
               "py:dqdyn.parallel:stewart_3_3"),
    ModelEntry("cable_robot_8", "bundled", "parallel",
               "8-cable robot with swivel pulleys of MontgomerySmith2023 Fig. 1",
               "py:dqdyn.parallel:cable_robot_8"),
]

# ------------------------------------------------------------------ example-robot-data entries
# name (as example-robot-data's Python loader names it) -> (URDF path under robots/, free base,
# description).  Only entries whose file exists in the installed version are listed.
_ERD = {
    "a1": ("a1_description/urdf/a1.urdf", True, "Unitree A1 quadruped"),
    "allegro_left_hand": ("allegro_hand_description/urdf/allegro_left_hand.urdf", False,
                          "Allegro left hand"),
    "allegro_right_hand": ("allegro_hand_description/urdf/allegro_right_hand.urdf", False,
                           "Allegro right hand"),
    "anymal": ("anymal_b_simple_description/robots/anymal.urdf", True, "ANYmal B quadruped"),
    "anymal_c": ("anymal_c_simple_description/urdf/anymal.urdf", True, "ANYmal C quadruped"),
    "anymal_kinova": ("anymal_b_simple_description/robots/anymal-kinova.urdf", True,
                      "ANYmal B with a Kinova arm"),
    "asr_twodof": ("asr_twodof_description/urdf/TwoDofs.urdf", False, "2-DoF arm"),
    "b1": ("b1_description/urdf/b1.urdf", True, "Unitree B1 quadruped"),
    "b1_z1": ("b1_description/urdf/b1-z1.urdf", True, "Unitree B1 with a Z1 arm"),
    "baxter": ("baxter_description/urdf/baxter.urdf", False, "Rethink Baxter"),
    "bolt": ("bolt_description/robots/bolt.urdf", True, "ODRI Bolt biped"),
    "double_pendulum": ("double_pendulum_description/urdf/double_pendulum.urdf", False,
                        "double pendulum"),
    "double_pendulum_continuous": (
        "double_pendulum_description/urdf/double_pendulum_continuous.urdf", False,
        "double pendulum, continuous joints"),
    "double_pendulum_simple": ("double_pendulum_description/urdf/double_pendulum_simple.urdf",
                               False, "double pendulum, simple geometry"),
    "finger_edu": ("finger_edu_description/robots/finger_edu.urdf", False, "ODRI finger"),
    "go1": ("go1_description/urdf/go1.urdf", True, "Unitree Go1 quadruped"),
    "go2": ("go2_description/urdf/go2.urdf", True, "Unitree Go2 quadruped"),
    "hector": ("hector_description/robots/quadrotor_base.urdf", True, "Hector quadrotor"),
    "hyq": ("hyq_description/robots/hyq_no_sensors.urdf", True, "IIT HyQ quadruped"),
    "icub": ("icub_description/robots/icub.urdf", True, "iCub humanoid"),
    "icub_reduced": ("icub_description/robots/icub_reduced.urdf", True, "iCub, reduced"),
    "iris": ("iris_description/robots/iris_simple.urdf", True, "3DR Iris quadrotor"),
    "kinova": ("kinova_description/robots/kinova.urdf", False, "Kinova arm"),
    "laikago": ("laikago_description/urdf/laikago.urdf", True, "Unitree Laikago quadruped"),
    "panda": ("panda_description/urdf/panda.urdf", False,
              "Franka Emika Panda, 7-DoF arm + gripper (one finger mimics the other)"),
    "romeo": ("romeo_description/urdf/romeo.urdf", True, "Aldebaran Romeo humanoid"),
    "simple_humanoid": ("simple_humanoid_description/urdf/simple_humanoid.urdf", True,
                        "simple humanoid"),
    "simple_humanoid_classical": (
        "simple_humanoid_description/urdf/simple_humanoid_classical.urdf", True,
        "simple humanoid, classical joints"),
    "so100": ("so_arm_description/urdf/so100.urdf", False, "SO-100 arm"),
    "so101": ("so_arm_description/urdf/so101.urdf", False, "SO-101 arm"),
    "solo8": ("solo_description/robots/solo.urdf", True, "ODRI Solo 8 quadruped"),
    "solo12": ("solo_description/robots/solo12.urdf", True, "ODRI Solo 12 quadruped"),
    "talos": ("talos_data/robots/talos_reduced.urdf", True, "PAL Talos humanoid (reduced)"),
    "talos_arm": ("talos_data/robots/talos_left_arm.urdf", False, "Talos left arm"),
    "talos_box": ("talos_data/robots/talos_reduced_box.urdf", True,
                  "Talos (reduced, box geometry)"),
    "talos_full": ("talos_data/robots/talos_full_v2.urdf", True, "PAL Talos humanoid (full)"),
    "talos_full_box": ("talos_data/robots/talos_full_v2_box.urdf", True,
                       "Talos (full, box geometry)"),
    "tiago": ("tiago_description/robots/tiago.urdf", False, "PAL TIAGo mobile manipulator"),
    "tiago_dual": ("tiago_description/robots/tiago_dual.urdf", False, "PAL TIAGo, two arms"),
    "tiago_no_hand": ("tiago_description/robots/tiago_no_hand.urdf", False, "TIAGo, no hand"),
    "tiago_pro": ("tiago_pro_description/robots/tiago_pro.urdf", False, "PAL TIAGo Pro"),
    "ur3": ("ur_description/urdf/ur3_robot.urdf", False, "Universal Robots UR3"),
    "ur3_gripper": ("ur_description/urdf/ur3_gripper.urdf", False, "UR3 with a gripper"),
    "ur3_limited": ("ur_description/urdf/ur3_joint_limited_robot.urdf", False,
                    "UR3, joint-limited"),
    "ur5": ("ur_description/urdf/ur5_robot.urdf", False, "Universal Robots UR5"),
    "ur5_gripper": ("ur_description/urdf/ur5_gripper.urdf", False, "UR5 with a gripper"),
    "ur5_limited": ("ur_description/urdf/ur5_joint_limited_robot.urdf", False,
                    "UR5, joint-limited"),
    "ur10": ("ur_description/urdf/ur10_robot.urdf", False, "Universal Robots UR10"),
    "ur10_limited": ("ur_description/urdf/ur10_joint_limited_robot.urdf", False,
                     "UR10, joint-limited"),
    "xarm7": ("xarm_description/urdf/xarm7.urdf", False, "UFACTORY xArm7"),
    "z1": ("z1_description/urdf/z1.urdf", False, "Unitree Z1 arm"),
}

ERD_INSTALL = "pip install example-robot-data"


def example_robot_data_dir() -> Path | None:
    """The ``robots`` folder of an installed example-robot-data, or ``None``.

    Looked up in this order: the environment variable ``EXAMPLE_ROBOT_DATA_MODEL_DIR``; the
    package's own Python module (versions that ship one); the ``share/example-robot-data/robots``
    folder of the installed wheel (``cmeel.prefix`` in site-packages, the layout of the PyPI
    wheel) or of a ROS / conda prefix (``$AMENT_PREFIX_PATH``, ``$CONDA_PREFIX``, ``sys.prefix``).
    """
    env = os.environ.get("EXAMPLE_ROBOT_DATA_MODEL_DIR")
    cands: list[Path] = [Path(env)] if env else []
    try:  # older wheels ship a Python module with the path
        from example_robot_data.path import EXAMPLE_ROBOT_DATA_MODEL_DIR as _d  # type: ignore

        cands.append(Path(_d))
    except Exception:  # noqa: BLE001 - any failure: fall through to the file system
        pass
    share = Path("share") / "example-robot-data" / "robots"
    sites = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    sites.update(p for p in sys.path if p.endswith("site-packages"))
    for site in sorted(sites):
        cands.append(Path(site) / "cmeel.prefix" / share)
    for var in ("AMENT_PREFIX_PATH", "CMAKE_PREFIX_PATH"):
        for pre in os.environ.get(var, "").split(os.pathsep):
            if pre:
                cands.append(Path(pre) / share)
    for pre in (os.environ.get("CONDA_PREFIX"), sys.prefix):
        if pre:
            cands.append(Path(pre) / share)
    for c in cands:
        if (c / "ur_description").is_dir() or (c / "panda_description").is_dir():
            return c
    return None


def _erd_entries(root: Path | None) -> list[ModelEntry]:
    out = []
    for name, (rel, free, desc) in _ERD.items():
        if root is not None and not (root / rel).is_file():
            continue
        out.append(ModelEntry(name, "example-robot-data", "model", desc, f"erd:{rel}",
                              root_joint="free" if free else None))
    return out


def _registry(installed_only: bool = True) -> dict[str, ModelEntry]:
    reg = {e.name: e for e in _BUNDLED}
    root = example_robot_data_dir()
    if root is not None or not installed_only:
        for e in _erd_entries(root):
            reg.setdefault(e.name, e)
    return reg


def list_models(source: str | None = None, *, kind: str | None = None) -> list[str]:
    """Names of every robot dqdyn can load here by name, sorted.

    ``source``: ``None`` (all), ``"bundled"`` (shipped with dqdyn, always available) or
    ``"example-robot-data"`` (listed when that package is installed).  ``kind``: ``None``,
    ``"model"`` (loaded by `load_example`), ``"constrained"`` (by `load_constrained_example`)
    or ``"parallel"`` (by `load_parallel_example`).  `model_info` describes one entry, and its
    ``loader`` names the function.

    >>> import dqdyn
    >>> dqdyn.list_models(kind="constrained")
    ['five_bar', 'four_bar', 'mobile_manipulator', 'slider_crank']

    Raises
    ------
    DqdynError
        ``source`` or ``kind`` is not one of the values above.
    """
    if source not in (None, "bundled", "example-robot-data"):
        raise DqdynError(f"list_models: source must be None, 'bundled' or 'example-robot-data', "
                         f"got {source!r}")
    if kind not in (None, "model", "constrained", "parallel"):
        raise DqdynError(f"list_models: kind must be None, 'model', 'constrained' or 'parallel', "
                         f"got {kind!r}")
    return sorted(e.name for e in _registry().values()
                  if (source is None or e.source == source) and (kind is None or e.kind == kind))


def model_info(name: str) -> ModelEntry:
    """The `ModelEntry` of ``name`` (source, kind, description, and ``loader``: the function
    that loads it).

    >>> import dqdyn
    >>> dqdyn.model_info("four_bar").loader
    'load_constrained_example'

    Raises
    ------
    UnknownNameError
        No such model (the message lists the available ones, and says how to install
        example-robot-data when ``name`` is one of its robots).
    """
    if not isinstance(name, str):
        raise UnknownNameError(f"model name must be a string, got {type(name).__name__}")
    key = name[:-5] if name.endswith(".urdf") else name
    reg = _registry()
    if key in reg:
        return reg[key]
    if key in _ERD:
        raise MissingExtraError(
            f"{key!r} is a robot of example-robot-data, which is not installed (or not found); "
            f"install it with: {ERD_INSTALL}  (or set EXAMPLE_ROBOT_DATA_MODEL_DIR to its "
            f"'robots' folder)"
        )
    hint = "" if example_robot_data_dir() is not None else (
        f"; more robots (panda, ur5, talos, …) with: {ERD_INSTALL}")
    raise UnknownNameError(f"no model named {name!r}; available: {', '.join(sorted(reg))}{hint}")


def model_path(name: str) -> Path:
    """The URDF file behind a name of `list_models` (a bundled file or one of example-robot-data).

    The file `load_example` reads for ``name``, so that another library can load the same robot
    — the comparisons with Pinocchio do:

    >>> import dqdyn
    >>> path = dqdyn.models.model_path("jaco6")
    >>> path.name
    'jaco6.urdf'
    >>> # pm = pinocchio.buildModelFromUrdf(str(path))   (the same robot in Pinocchio)

    A name whose entry has a free root joint (``model_info(name).root_joint == "free"``:
    example-robot-data's legged robots, humanoids and drones) is loaded by `load_example` with
    that root joint; give Pinocchio ``pinocchio.JointModelFreeFlyer()`` too
    (`dqdyn.interop.pinocchio.pin_from_urdf` does).

    Returns
    -------
    pathlib.Path
        The absolute path of the URDF file (it exists).

    Raises
    ------
    UnknownNameError, MissingExtraError
        As `model_info`; ``UnknownNameError`` also when ``name`` is built in code (``arm7``,
        ``tree38``, the constrained and parallel examples: they have no file).
    """
    e = model_info(name)
    if e.target.startswith("file:"):
        from dqdyn.parsers.urdf import bundled

        return bundled(e.target[5:])
    if e.target.startswith("erd:"):
        root = example_robot_data_dir()
        assert root is not None  # model_info listed it
        return root / e.target[4:]
    raise UnknownNameError(f"model {name!r} is built in code ({e.target[3:]}), it has no URDF file")


_UNSET = object()


def _entry_of_kind(name: str, kind: str) -> ModelEntry:
    """`model_info`, refusing (`ModelError`) an entry of another kind: the message names the
    loader to use instead."""
    e = model_info(name)
    if e.kind != kind:
        raise ModelError(
            f"{LOADERS[kind]}: {e.name!r} is {_WHAT[e.kind]}, not {_RETURNS[kind]}; load it "
            f"with dqdyn.{e.loader}({e.name!r}), which returns {_RETURNS[e.kind]}")
    return e


def _call_factory(e: ModelEntry, kwargs: dict):
    mod, fn = e.target[3:].split(":")
    return getattr(importlib.import_module(mod), fn)(**kwargs)


def load_example(name: str, **kwargs) -> Model:
    """Load a robot by name: a bundled model or one of example-robot-data's, as a `Model`.

    >>> import dqdyn
    >>> m = dqdyn.load_example("jaco6")
    >>> m.nq, m.nv
    (6, 6)

    ``name``: a name of ``list_models(kind="model")`` (e.g. ``"panda"``, ``"ur5"``,
    ``"talos"``, ``"jaco6"``, ``"tree38"``).  ``kwargs`` go to `load_urdf` for URDF-backed
    entries (``root_joint=``, ``mimic=``, ``gravity=``, …) and to the factory for the others.
    The default ``root_joint`` is the entry's (``"free"`` for example-robot-data's legged
    robots, humanoids and drones, as its own loader; ``"planar"`` for ``youbot_jaco``); pass
    ``root_joint=None`` for a fixed base.  The URDF file itself is `model_path` ``(name)``.

    The closed-chain and nonholonomic examples (``"four_bar"``, ``"mobile_manipulator"``, …)
    load with `load_constrained_example`, the parallel robots (``"stewart_6_6"``,
    ``"cable_robot_8"``) with `load_parallel_example`; ``model_info(name).loader`` says which.

    Raises
    ------
    UnknownNameError
        No such model; the message lists the available names.
    MissingExtraError
        ``name`` is a robot of example-robot-data and that package is not installed; the message
        says ``pip install example-robot-data``.
    ModelError
        ``name`` is a constrained or parallel example; the message names the loader to use.
    URDFError
        The file cannot be represented (see `load_urdf`).
    """
    e = _entry_of_kind(name, "model")
    if e.target.startswith(("file:", "erd:")):
        from dqdyn.parsers.urdf import load_urdf

        root = kwargs.pop("root_joint", _UNSET)
        if root is _UNSET:
            root = e.root_joint
        return load_urdf(model_path(e.name), root_joint=root, **kwargs)
    return _call_factory(e, kwargs)


def load_constrained_example(name: str, **kwargs) -> ConstrainedExample:
    """Load a closed-chain or nonholonomic example by name: its tree, constraints and a
    consistent configuration.

    >>> import dqdyn
    >>> model, constraints, q0 = dqdyn.load_constrained_example("four_bar")
    >>> model.nq, len(constraints), q0.shape
    (3, 1, (3,))

    ``name``: a name of ``list_models(kind="constrained")`` — ``"four_bar"``, ``"five_bar"``,
    ``"slider_crank"`` (one kinematic loop each) or ``"mobile_manipulator"`` (rolling without
    slipping, [Silva2022, §5]).  ``kwargs`` go to the factory in `dqdyn.constraints.models`
    (link lengths, ``theta=``, ``gravity=``, …).

    Returns
    -------
    ConstrainedExample
        ``(model, constraints, q0)``: pass ``constraints`` to `constrained_forward_dynamics` or
        `simulate`; ``q0`` satisfies them.

    Raises
    ------
    UnknownNameError
        No such model; the message lists the available names.
    ModelError
        ``name`` is a plain model or a parallel robot; the message names the loader to use.
    """
    model, constraints, q0 = _call_factory(_entry_of_kind(name, "constrained"), kwargs)
    return ConstrainedExample(model, list(constraints), np.asarray(q0, dtype=float))


def load_parallel_example(name: str, **kwargs) -> ParallelRobot:
    """Load a parallel robot by name (Stewart–Gough platforms, a cable robot).

    >>> import dqdyn
    >>> robot = dqdyn.load_parallel_example("stewart_6_6")
    >>> type(robot).__name__
    'StewartPlatform'

    ``name``: a name of ``list_models(kind="parallel")`` — ``"stewart_6_6"``, ``"stewart_3_3"``
    or ``"cable_robot_8"`` ([MontgomerySmith2023, Fig. 1]).  ``kwargs`` go to the factory in
    `dqdyn.parallel` (radii, ``home_height=``, ``pulleys=``, …).

    Returns
    -------
    ParallelRobot
        A `dqdyn.parallel.StewartPlatform` or `dqdyn.parallel.CableRobot`.

    Raises
    ------
    UnknownNameError
        No such model; the message lists the available names.
    ModelError
        ``name`` is a plain model or a constrained example; the message names the loader to use.
    """
    return _call_factory(_entry_of_kind(name, "parallel"), kwargs)
