"""The ``dqdyn`` command line.

::

    dqdyn --version
    dqdyn info MODEL.urdf [--root free|planar] [--mimic follow|independent|error] [--frames]
    dqdyn info --bundled two_link_arm

``info`` prints a table of the bodies (name, parent, mass, CoM in the body frame), a table of
the joints (type, axis, q / v slices, limits, mimic coupling), and the totals (mass, nq, nv,
frame count); ``--frames`` adds the named frames.  Any error in the input (a missing or malformed file, …) is reported as a single
line ``dqdyn: error: …`` on stderr with exit status 2, without a traceback.

Adding a sub-command
--------------------
Write ``def _add_NAME(sub)`` that creates its parser with ``sub.add_parser(...)`` and sets
``func=`` (a function ``args -> int`` exit code) through ``set_defaults``, then append it to
:data:`COMMANDS`.  Library errors (:class:`~dqdyn.errors.DqdynError`) and ``OSError`` raised by
``func`` are turned into the one-line error automatically.  Planned: ``simulate``, ``bench``,
``reproduce``.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from collections.abc import Callable, Sequence

import numpy as np

from . import __version__
from .errors import DqdynError

EXIT_OK = 0
EXIT_USAGE = 2  # bad command line or bad input file


# ---------------------------------------------------------------------------------- helpers
def _console(file=None):
    """A rich console; wide when stdout is not a terminal, so tables are never truncated."""
    from rich.console import Console

    f = file if file is not None else sys.stdout
    is_tty = hasattr(f, "isatty") and f.isatty()
    return Console(file=f, width=None if is_tty else 200, highlight=False, soft_wrap=False)


def _num(x: float, fmt: str = "{:.4g}") -> str:
    if np.isposinf(x):
        return "inf"
    if np.isneginf(x):
        return "-inf"
    return fmt.format(x)


def _vec(v) -> str:
    return "(" + ", ".join(f"{float(c):.4g}" for c in v) + ")"


def _slice(s: slice) -> str:
    if s.stop <= s.start:
        return "-"
    return f"{s.start}" if s.stop == s.start + 1 else f"{s.start}:{s.stop}"


def _load(args):
    from .parsers.urdf import bundled, load_urdf

    src = bundled(args.bundled) if args.bundled else args.model
    if src is None:
        raise DqdynError("info: give a URDF file or --bundled NAME")
    return load_urdf(src, root_joint=args.root, mimic=args.mimic)


# ------------------------------------------------------------------------------------- info
def _info_tables(model):
    """The (bodies, joints) rich tables of :func:`cmd_info`."""
    from rich.markup import escape
    from rich.table import Table

    bodies = Table(title=f"Bodies of {model.name}", title_justify="left")
    bodies.add_column("#", justify="right")
    bodies.add_column("body", overflow="fold")
    bodies.add_column("parent", overflow="fold")
    bodies.add_column("mass (kg)", justify="right")
    bodies.add_column("CoM in body frame (m)")
    for i in range(1, model.nbodies + 1):
        bodies.add_row(*map(escape, (
            str(i),
            model.body_names[i],
            model.body_names[int(model.parent[i])],
            _num(float(model.mass[i])),
            _vec(model.com[i]),
        )))

    joints = Table(title=f"Joints of {model.name}", title_justify="left")
    for col, kw in (
        ("joint", dict(overflow="fold")),
        ("type", {}),
        ("axis", {}),
        ("q", dict(justify="right")),
        ("v", dict(justify="right")),
        ("lower", dict(justify="right")),
        ("upper", dict(justify="right")),
        ("velocity", dict(justify="right")),
        ("effort", dict(justify="right")),
        ("mimic", dict(overflow="fold")),
    ):
        joints.add_column(col, **kw)
    for i in range(1, model.nbodies + 1):
        name = model.joint_names_all[i]
        jt = model.joint_type_name(i)
        qs, vs = model.q_slice(name), model.v_slice(name)
        mimic = "-"
        lo = hi = vel = eff = "-"
        if model.joint_nv[i] == 0:
            # a mimic joint reads its master's slot
            iq = int(model.idx_q[i])
            master = next(
                (model.joint_names_all[k] for k in range(1, model.nbodies + 1)
                 if model.joint_nv[k] > 0 and int(model.idx_q[k]) == iq),
                "?",
            )
            mimic = (f"{_num(float(model.mimic_scale[i]))}·q[{master}] "
                     f"+ {_num(float(model.mimic_offset[i]))}")
            qtxt = vtxt = "-"
        else:
            qtxt, vtxt = _slice(qs), _slice(vs)
            if jt in ("revolute", "prismatic", "helical"):
                lo = _num(float(model.q_lower[qs.start]))
                hi = _num(float(model.q_upper[qs.start]))
            vel = _num(float(model.velocity_limit[vs.start]))
            eff = _num(float(model.effort_limit[vs.start]))
        axis = _vec(model.joint_axis[i]) if jt in (
            "revolute", "prismatic", "helical", "cylindrical") else "-"
        joints.add_row(*map(escape, (name, jt, axis, qtxt, vtxt, lo, hi, vel, eff, mimic)))
    return bodies, joints


def _frames_table(model):
    """Named frames: the body carrying each one and its position in that body's frame."""
    from rich.markup import escape
    from rich.table import Table

    from .algebra.rotations import translation_of

    t = Table(title=f"Frames of {model.name}", title_justify="left")
    t.add_column("frame", overflow="fold")
    t.add_column("body", overflow="fold")
    t.add_column("position in body frame (m)")
    for k, f in enumerate(model.frame_names):
        t.add_row(*map(escape, (f, model.body_names[int(model.frame_body[k])],
                                _vec(translation_of(model.frame_placement[k])))))
    return t


def cmd_info(args) -> int:
    """``dqdyn info``: print the structure of a model."""
    model = _load(args)
    con = _console()
    bodies, joints = _info_tables(model)
    con.print(bodies)  # names are escaped: '[...]' is rich markup
    con.print(joints)
    if args.frames:
        con.print(_frames_table(model))
    con.print(
        f"total mass: {model.total_mass:.6g} kg   nq = {model.nq}   nv = {model.nv}   "
        f"bodies = {model.nbodies}   frames = {len(model.frame_names)}   "
        f"mimic joints = {len(model.mimic_joints)}"
    )
    return EXIT_OK


def _add_info(sub) -> None:
    p = sub.add_parser("info", help="print the bodies, joints and sizes of a URDF model",
                       description="Print the bodies, joints and sizes of a URDF model.")
    p.add_argument("model", nargs="?", help="path of the URDF file")
    p.add_argument("--bundled", metavar="NAME",
                   help="use a URDF shipped with dqdyn (two_link_arm, diff_drive_manipulator, "
                        "branched) instead of a file")
    p.add_argument("--root", choices=("free", "planar"), default=None,
                   help="add a free or planar root joint (default: fixed base)")
    p.add_argument("--mimic", choices=("follow", "independent", "error"), default="follow",
                   help="how to treat <mimic> joints (default: follow)")
    p.add_argument("--frames", action="store_true",
                   help="also list the named frames (every URDF link is one)")
    p.set_defaults(func=cmd_info)


#: sub-command registrars, in help order; add ``simulate``, ``bench``, ``reproduce`` here
COMMANDS: list[Callable] = [_add_info]


# ------------------------------------------------------------------------------------- main
def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="dqdyn",
        description="Dynamics of robotic systems in dual quaternion algebra.",
    )
    parser.add_argument("--version", action="version", version=f"dqdyn {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for add in COMMANDS:
        add(sub)
    return parser


def _show_warning(message, category, filename, lineno, file=None, line=None):
    print(f"dqdyn: warning: {' '.join(str(message).split())}", file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    """Console entry point (``dqdyn``); returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if getattr(args, "func", None) is None:
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    try:
        with warnings.catch_warnings():
            warnings.showwarning = _show_warning
            return int(args.func(args) or 0)
    except (DqdynError, OSError) as e:
        msg = " ".join(str(e).split())  # one line
        print(f"dqdyn: error: {msg}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:  # pragma: no cover
        return 130


if __name__ == "__main__":
    sys.exit(main())
