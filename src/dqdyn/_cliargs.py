"""The arguments every ``dqdyn`` sub-command uses to name a robot, and the checks of file and
folder arguments made before any work starts (shared by `dqdyn.cli`, ``dqdyn view`` and
``dqdyn sweep``).

A robot is named once, the same way everywhere: ``MODEL`` is anything `dqdyn.load`
takes (a URDF / MJCF file, a bundled or example-robot-data name, a MuJoCo Menagerie or
robot_descriptions name), with the options ``--root-joint``, ``--fixed-base``, ``--mimic``,
``--ignore``, ``--package-dir`` and ``--menagerie``, whose defaults are the loaders' own.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence

import numpy as np

from dqdyn.errors import DqdynError, UsageError  # (UsageError is re-exported: see __all__)


class HelpFormatter(argparse.HelpFormatter):
    """argparse's formatter, except that an epilog starting with ``examples:`` keeps its lines."""

    def _fill_text(self, text, width, indent):
        if text.startswith("examples:"):
            return "".join(indent + line for line in text.splitlines(keepends=True))
        return super()._fill_text(text, width, indent)


# ------------------------------------------------------------- naming a robot (every command)
#: the names a MODEL argument takes, for the help texts
MODEL_HELP = ("a URDF or MJCF file (.urdf, .xml, .mjcf), or a robot's name: bundled ({bundled}), "
              "example-robot-data (panda, ur5, solo12, talos, …), a MuJoCo Menagerie folder "
              "(--menagerie) or a robot_descriptions module; 'dqdyn models' lists the names")
_FILE_SUFFIXES = (".urdf", ".xml", ".mjcf", ".xacro")


def _bundled_names() -> str:
    from dqdyn.models import list_models

    return ", ".join(list_models("bundled", kind="model"))


def add_model_arguments(p, *, required: bool = True) -> None:
    """The arguments that name a robot, the same in every sub-command: ``MODEL`` (resolved by
    `dqdyn.load`), ``--root-joint``, ``--fixed-base``, ``--mimic``, ``--ignore``,
    ``--package-dir``, ``--menagerie`` (and ``--bundled NAME``, the older spelling of MODEL)."""
    p.add_argument("model", nargs="?", metavar="MODEL",
                   help=MODEL_HELP.format(bundled=_bundled_names()))
    p.add_argument("--bundled", metavar="NAME", help="same as MODEL (a name of dqdyn models)")
    p.add_argument("--root-joint", "--root", dest="root", choices=("fixed", "free", "planar"),
                   default=None,
                   help="root joint of a URDF model: fixed (welded to the world), free or planar "
                        "(default: fixed for a file, the robot's own for a name: free for "
                        "solo12, talos, …)")
    p.add_argument("--fixed-base", action="store_true", help="same as --root-joint fixed")
    p.add_argument("--mimic", choices=("follow", "independent", "error"), default=None,
                   help="<mimic> joints of a URDF: follow their master (default), independent "
                        "(own coordinate, with a warning) or error")
    p.add_argument("--ignore", action="append", choices=("armature", "tendon", "equality"),
                   default=None, help="MJCF features to leave out (repeatable)")
    p.add_argument("--package-dir", action="append", default=None, dest="package_dirs",
                   metavar="DIR",
                   help="where package:// URIs of a URDF resolve (repeatable; ROS_PACKAGE_PATH "
                        "is used too)")
    p.add_argument("--menagerie", metavar="DIR", default=None,
                   help="a MuJoCo Menagerie checkout to find names in (default: "
                        "$DQDYN_MENAGERIE, else robot_descriptions' copy)")
    p.set_defaults(model_required=required)


def model_options(args) -> dict:
    """The loader options the user gave (``dqdyn.load(source, **options)``); options left at
    their default are not passed, so each loader keeps its own default and an option that
    does not apply to the robot's format is an error only when it was given."""
    kw = {}
    root = "fixed" if getattr(args, "fixed_base", False) else getattr(args, "root", None)
    if getattr(args, "fixed_base", False) and getattr(args, "root", None) not in (None, "fixed"):
        raise UsageError(f"--fixed-base contradicts --root-joint {args.root}")
    if root is not None:
        kw["root_joint"] = None if root == "fixed" else root
    if getattr(args, "mimic", None) is not None:
        kw["mimic"] = args.mimic
    if getattr(args, "ignore", None):
        kw["ignore"] = tuple(args.ignore)
    if getattr(args, "package_dirs", None):
        kw["package_dirs"] = list(args.package_dirs)
    return kw


def model_source(args) -> str:
    """The MODEL argument (or ``--bundled``); a usage error when neither or both are given."""
    src, alias = getattr(args, "model", None), getattr(args, "bundled", None)
    if src is not None and alias is not None:
        raise UsageError(f"{args.command}: give MODEL or --bundled NAME, not both")
    src = src if src is not None else alias
    if src is None or not str(src).strip():
        raise UsageError(f"{args.command}: give MODEL: a URDF or MJCF file or a robot's name "
                         f"(dqdyn models lists them)")
    return src


def _looks_like_path(src: str) -> bool:
    return os.sep in src or "/" in src or src.lower().endswith(_FILE_SUFFIXES)


def no_such_file(arg: str, path) -> UsageError:
    """The one error of a file argument that names nothing on disk."""
    path = os.fspath(path)
    where = "" if os.path.isabs(path) else f" (relative to {os.getcwd()})"
    return UsageError(f"{arg}: no such file {path!r}{where}")


def load_model(args):
    """The robot of ``args`` (`add_model_arguments`) through `dqdyn.load`.

    Errors are re-raised with the sub-command and argument in front; a missing file (an
    argument that looks like a path: a separator or a .urdf / .xml / .mjcf suffix) gives
    `no_such_file`'s text in every command."""
    from dqdyn.loading import load

    src = model_source(args)
    kw = model_options(args)
    try:
        return load(src, menagerie=getattr(args, "menagerie", None), **kw)
    except DqdynError as e:
        from dqdyn.errors import UnknownNameError

        if isinstance(e, UnknownNameError) and _looks_like_path(src) and \
                not os.path.exists(os.path.expanduser(src)):
            raise no_such_file("MODEL", src) from None
        msg = str(e)
        msg = msg[len("load: "):] if msg.startswith("load: ") else msg
        raise _same_kind(e, f"MODEL: {msg}") from None


def _same_kind(e: Exception, msg: str) -> Exception:
    try:
        return type(e)(msg)
    except Exception:  # noqa: BLE001 - an exception class with another signature
        return DqdynError(msg)


def model_file(args):
    """``(format, path)`` of the file MODEL was read from (``"urdf"`` / ``"mjcf"``), for the
    viewer's meshes; ``None`` for a robot built in code or one found only through
    robot_descriptions."""
    from pathlib import Path

    from dqdyn import loading, models

    src = model_source(args)
    p = Path(src).expanduser()
    try:
        if p.exists():
            p = loading.menagerie_robot_file(p) if p.is_dir() else p
        else:
            try:
                p = models.model_path(src)
            except DqdynError:
                root = loading.menagerie_dir(getattr(args, "menagerie", None))
                p = None if root is None else loading._menagerie_file(root, src)
        if p is None:
            return None
        return loading._format_of(Path(p)), Path(p)
    except DqdynError:
        return None


# ---------------------------------------------------------------------- argument checks
def check_input_file(arg: str, path) -> None:
    """``path`` must be an existing, readable file."""
    if path is None:
        return
    p = os.path.expanduser(os.fspath(path))
    if not os.path.exists(p):
        raise no_such_file(arg, path)
    if os.path.isdir(p):
        raise UsageError(f"{arg}: {os.fspath(path)!r} is a folder, expected a file")
    if not os.access(p, os.R_OK):
        raise UsageError(f"{arg}: file {os.fspath(path)!r} cannot be read (permissions)")


def _nearest_existing(d: str) -> str:
    d = os.path.abspath(d)
    while not os.path.exists(d):
        d = os.path.dirname(d)
    return d


def check_output_file(arg: str, path, suffixes: Sequence[str] | None = None) -> None:
    """``path`` can be written: its folder exists and is writable, it is not a folder, and its
    suffix is one of ``suffixes`` (when given)."""
    if path is None:
        return
    p = os.path.abspath(os.path.expanduser(os.fspath(path)))
    if os.path.isdir(p):
        raise UsageError(f"{arg}: {os.fspath(path)!r} is a folder, expected a file name")
    if suffixes is not None and os.path.splitext(p)[1].lower() not in suffixes:
        raise UsageError(f"{arg}: {os.fspath(path)!r} must end in "
                         f"{' or '.join(suffixes)}")
    d = os.path.dirname(p)
    if not os.path.isdir(d):
        raise UsageError(f"{arg}: the folder {d!r} of {os.fspath(path)!r} does not exist")
    if not os.access(d, os.W_OK) or (os.path.exists(p) and not os.access(p, os.W_OK)):
        raise UsageError(f"{arg}: {os.fspath(path)!r} cannot be written (permissions)")


def check_output_dir(arg: str, path) -> None:
    """``path`` is a writable folder, or one that can be made (its nearest existing parent is a
    writable folder); nothing is created."""
    p = os.path.abspath(os.path.expanduser(os.fspath(path)))
    if os.path.exists(p) and not os.path.isdir(p):
        raise UsageError(f"{arg}: {os.fspath(path)!r} is a file, expected a folder")
    base = _nearest_existing(p)
    if not os.path.isdir(base):
        raise UsageError(f"{arg}: {os.fspath(path)!r} cannot be made: {base!r} is a file")
    if not os.access(base, os.W_OK | os.X_OK):
        raise UsageError(f"{arg}: {os.fspath(path)!r} cannot be written ({base!r} is not "
                         f"writable)")


def _positive(arg: str, x, *, allow_none: bool = False) -> None:
    if x is None and allow_none:
        return
    if x is None or not np.isfinite(x) or x <= 0:
        raise UsageError(f"{arg} must be a finite number > 0, got {x!r}")


__all__ = ["MODEL_HELP", "HelpFormatter", "UsageError", "add_model_arguments", "check_input_file",
           "check_output_dir", "check_output_file", "load_model", "model_file",
           "model_options", "model_source", "no_such_file"]
