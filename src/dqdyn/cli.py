"""The ``dqdyn`` command line.

::

    dqdyn --version
    dqdyn info MODEL.urdf [--root free|planar] [--mimic follow|independent|error] [--frames]
    dqdyn info --bundled two_link_arm
    dqdyn simulate MODEL.urdf --duration 2 --dt 1e-3 --controller pd --plot out.png
    dqdyn reproduce [CASE ...] [--out DIR] [--quick]      (``dqdyn demo`` = ``reproduce --quick``)
    dqdyn bench [--dir benchmarks]

``info`` prints a table of the bodies (name, parent, mass, CoM in the body frame), a table of
the joints (type, axis, q / v slices, limits, mimic coupling), and the totals (mass, nq, nv,
frame count); ``--frames`` adds the named frames.  Any error in the input (a missing or malformed file, …) is reported as a single
line ``dqdyn: error: …`` on stderr with exit status 2, without a traceback.

Adding a sub-command
--------------------
Write ``def _add_NAME(sub)`` that creates its parser with ``sub.add_parser(...)`` and sets
``func=`` (a function ``args -> int`` exit code) through ``set_defaults``, then append it to
`COMMANDS`.  Library errors (`DqdynError`) and ``OSError`` raised by
``func`` are turned into the one-line error automatically.
"""

from __future__ import annotations

import argparse
import json
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
    """A console that never cuts a table at the terminal width (rich when installed, extra
    ``cli``; plain text otherwise)."""
    from ._table import console

    return console(file)


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
    """The model of ``MODEL`` (a URDF path, or a name of `dqdyn.list_models`) or
    ``--bundled NAME``."""
    import os

    from .models import list_models, load_example, model_info
    from .parsers.urdf import load_urdf

    src = args.bundled or args.model
    if src is None:
        raise DqdynError(f"{args.command}: give a URDF file or a model name (dqdyn models lists "
                         f"them)")
    kw = dict(mimic=args.mimic)
    if args.root is not None:
        kw["root_joint"] = args.root
    if getattr(args, "fixed_base", False):
        kw["root_joint"] = None
    if args.bundled and args.bundled not in list_models("bundled"):
        from .parsers.urdf import bundled

        bundled(args.bundled)  # raises "no bundled model …; available: …"
    if args.bundled or not (os.path.exists(src) or src.lstrip().startswith("<")):
        entry = model_info(src)  # raises UnknownNameError listing the names
        if entry.kind != "model":
            raise DqdynError(f"{args.command}: {entry.name!r} is a {entry.kind} model; this "
                             f"command takes tree models (see dqdyn models)")
        if entry.target.startswith("py:"):  # built in code: no URDF options
            if args.root is not None or getattr(args, "fixed_base", False):
                raise DqdynError(f"{args.command}: --root / --fixed-base apply to URDF models; "
                                 f"{entry.name!r} is built in code")
            return load_example(src)
        return load_example(src, **kw)
    return load_urdf(src, **kw)


def _bundled_names() -> str:
    from .models import list_models

    return ", ".join(list_models("bundled", kind="model"))


# ------------------------------------------------------------------------------------- info
def _info_tables(model):
    """The (bodies, joints) rich tables of `cmd_info`."""
    from ._table import Table, escape

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
    from ._table import Table, escape
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
    p.add_argument("model", nargs="?",
                   help="path of a URDF file, or a model name (dqdyn models lists them: "
                        "panda, ur5, talos, … with example-robot-data)")
    p.add_argument("--bundled", metavar="NAME",
                   help="a model shipped with dqdyn: " + _bundled_names())
    p.add_argument("--root", choices=("free", "planar"), default=None,
                   help="add a free or planar root joint (default: fixed base for a file, the "
                        "model's own for a name)")
    p.add_argument("--mimic", choices=("follow", "independent", "error"), default="follow",
                   help="how to treat <mimic> joints (default: follow)")
    p.add_argument("--frames", action="store_true",
                   help="also list the named frames (every URDF link is one)")
    p.set_defaults(func=cmd_info)


# -------------------------------------------------------------------------------- reproduce
def cmd_reproduce(args) -> int:
    """``dqdyn reproduce``: the papers' experiments against MuJoCo (tables, CSV, figures)."""
    import os

    from ._optional import require

    for extra, mod in (("sim", "mujoco"), ("plot", "matplotlib"), ("cli", "rich")):
        try:
            require(extra, mod)
        except DqdynError:
            raise DqdynError(f"{args.command} needs mujoco, matplotlib and rich ({mod!r} is "
                             f"missing); install them with: pip install \"dqdyn[demo]\"") from None
    from .reproduce import reproduce

    print(f"writing results.md, results.csv and figures to {os.path.abspath(args.out)}"
          f"{os.sep}", flush=True)
    if getattr(args, "list", False):
        from .reproduce.runner import print_catalog

        print_catalog(_console())
        return EXIT_OK
    res = reproduce(args.cases or None, out_dir=args.out, quick=args.quick, console=_console())
    failed = [r.name for r in res if hasattr(r, "passed") and not r.passed]
    if failed:
        print(f"dqdyn: cases below the paper's figures: {', '.join(failed)}", file=sys.stderr)
        return 1
    return EXIT_OK


def _add_reproduce(sub) -> None:
    from .reproduce.runner import available_cases

    for name, quick in (("reproduce", False), ("demo", True)):
        p = sub.add_parser(
            name,
            help=("reproduce the papers' experiments against MuJoCo (CMC tables, figures)"
                  if name == "reproduce" else "alias of 'reproduce --quick'"),
            description="Simulate each case in MuJoCo, process the logs as the papers did and "
                        "compare dqdyn's torques / accelerations by the CMC; write results.md, "
                        "results.csv and PNG figures.  Cases: " + ", ".join(available_cases()))
        p.add_argument("cases", nargs="*", metavar="CASE", help="cases to run (default: all)")
        p.add_argument("--out", default="reproduce-out",
                       help="output folder (default: ./reproduce-out, in the current directory)")
        if name == "reproduce":
            p.add_argument("--quick", action="store_true",
                           help="short runs (what 'dqdyn demo' does; about 1 minute once the "
                                "kernels are compiled, several minutes the first time)")
            p.add_argument("--list", action="store_true",
                           help="list every table and figure of the seeds and the case that "
                                "regenerates it (or why none can), then exit")
        p.set_defaults(func=cmd_reproduce, quick=quick)


# --------------------------------------------------------------------------------- simulate
def cmd_simulate(args) -> int:
    """``dqdyn simulate``: simulate a model under a controller; optional plot / npz.

    The logic lives in `dqdyn.simulation.run.run_simulation` (gains scaled to the robot,
    joint limits, divergence detection); this prints and writes the files."""
    from .simulation.run import run_simulation

    if args.plot:
        from ._optional import require

        require("plot", "matplotlib")  # before simulating: fail fast, naming the extra
    model = _load(args)
    res = run_simulation(model, duration=args.duration, dt=args.dt, controller=args.controller,
                         kp=args.kp, kd=args.kd, bandwidth=args.bandwidth,
                         amplitude=args.amplitude, frequency=args.frequency,
                         integrator=args.integrator, limits=not args.no_limits)
    traj = res.trajectory
    con = _console()
    for note in res.notes:
        con.print(note)
    con.print(f"{model.name}: {len(traj)} samples, t = 0 … {traj.t[-1]:.4g} s, "
              f"controller {args.controller}, integrator {args.integrator}")
    if res.q_ref is not None:
        con.print(f"tracking error: max {res.max_error:.3g}, RMS {res.rms_error:.3g} "
                  f"(rad for rotations, m for translations)")
    con.print("final q: " + _vec(traj.q[-1]))
    if args.save:
        con.print(f"wrote {traj.save(args.save)}")
    if args.plot:
        from .simulation.plots import plot_simulation

        con.print(f"wrote {plot_simulation(res, args.plot)}")
    if getattr(args, "view", None) is not None:  # dqdyn[viz]: the motion in the browser
        from .viz.cli import show_trajectory

        src = getattr(args, "model", None)
        urdf = src if isinstance(src, str) and src.endswith(".urdf") else None
        if urdf is None and getattr(args, "bundled", None):
            from .parsers.urdf import bundled

            urdf = bundled(args.bundled)
        show_trajectory(model, traj.t, traj.q, urdf=urdf, port=args.view, seconds=args.view_seconds)
    return EXIT_OK


def _add_simulate(sub) -> None:
    p = sub.add_parser(
        "simulate", help="simulate a robot under a controller",
        description="Simulate a robot (a URDF file or a model name: dqdyn models) from its "
                    "neutral configuration (1-DoF joints whose neutral value is outside their "
                    "limits start mid-range).  By default a computed-torque controller "
                    "tracks sinusoidal joint motions inside the joint limits (closed loop "
                    "ë + 2ω ė + ω² e = 0, ω = 2π·bandwidth), with spring-dampers at the joint "
                    "limits; --controller pd uses gains scaled to each joint's effective "
                    "inertia.  A free-floating base is held by the controller where it starts "
                    "(--fixed-base welds it instead); --controller none lets it fall.")
    p.add_argument("model", nargs="?", help="URDF file or model name (panda, ur5, jaco6, …)")
    p.add_argument("--bundled", metavar="NAME", help="a model shipped with dqdyn: "
                   + _bundled_names())
    p.add_argument("--root", choices=("free", "planar"), default=None,
                   help="add a free or planar root joint")
    p.add_argument("--fixed-base", action="store_true",
                   help="weld the root to the world (for floating-base robots: talos, solo12, …)")
    p.add_argument("--mimic", choices=("follow", "independent", "error"), default="follow")
    p.add_argument("--duration", type=float, default=1.0, help="seconds (default 1)")
    p.add_argument("--dt", type=float, default=1e-3, help="time step, s (default 1e-3)")
    p.add_argument("--controller", choices=("computed-torque", "pd", "none"),
                   default="computed-torque",
                   help="computed-torque (the default: exact tracking on the model), pd (PD + "
                        "gravity compensation) or none (free motion under gravity; the joint "
                        "limits still act)")
    p.add_argument("--kp", type=float, default=None,
                   help="proportional gain, one for all joints (default: (2π·bandwidth)² for "
                        "computed-torque; m_i (2π·bandwidth)² per joint for pd, m_i = "
                        "1/(M⁻¹)_ii its effective inertia)")
    p.add_argument("--kd", type=float, default=None,
                   help="derivative gain (default: 2 (2π·bandwidth), times m_i for pd)")
    p.add_argument("--bandwidth", type=float, default=5.0,
                   help="closed-loop natural frequency of the default gains, Hz (default 5)")
    p.add_argument("--amplitude", type=float, default=0.5,
                   help="reference velocity amplitude, rad/s or m/s (capped per joint to stay "
                        "inside its limits; default 0.5)")
    p.add_argument("--frequency", type=float, default=0.5, help="reference frequency, Hz")
    p.add_argument("--integrator", choices=("rk4", "euler"), default="rk4")
    p.add_argument("--no-limits", action="store_true",
                   help="no spring-dampers at the joint limits")
    p.add_argument("--plot", metavar="PNG",
                   help="write positions (with references), velocities and torques / forces to "
                        "this PNG (needs the plot extra: pip install \"dqdyn[plot]\")")
    p.add_argument("--save", metavar="NPZ", help="write the trajectory to this .npz")
    p.add_argument("--view", metavar="PORT", type=int, nargs="?", const=8080, default=None,
                   help="then play the motion in the browser (dqdyn[viz]) on 127.0.0.1:PORT")
    p.add_argument("--view-seconds", type=float, default=None, help=argparse.SUPPRESS)
    p.set_defaults(func=cmd_simulate)


# ------------------------------------------------------------------------------------ bench
def cmd_bench(args) -> int:
    """``dqdyn bench``: run the scripts in ``benchmarks/`` (a source checkout) one by one."""
    import subprocess
    from pathlib import Path

    root = Path(args.dir) if args.dir else Path.cwd() / "benchmarks"
    scripts = sorted(p for p in root.glob("bench_*.py")) if root.is_dir() else []
    if not scripts:
        raise DqdynError(f"--dir: no benchmarks/bench_*.py scripts under {str(root)!r} "
                         f"(run from a source checkout or pass --dir)")
    try:
        import pinocchio  # noqa: F401

        print("Pinocchio found: the scripts print ratios against it.")
    except ImportError:
        print("Pinocchio not installed: dqdyn timings only.")
    rc = 0
    for s in scripts:
        print(f"== {s.name}", flush=True)
        rc |= subprocess.call([sys.executable, str(s), *args.extra], cwd=str(root.parent))
    return EXIT_OK if rc == 0 else 1


def _add_bench(sub) -> None:
    p = sub.add_parser("bench", help="run the benchmark scripts (ratios against Pinocchio)",
                       description="Run benchmarks/bench_*.py and print their tables.")
    p.add_argument("--dir", help="benchmarks folder (default: ./benchmarks)")
    p.add_argument("extra", nargs="*", help="arguments passed to every script")
    p.set_defaults(func=cmd_bench)


# ----------------------------------------------------------------------------------- models
def cmd_models(args) -> int:
    """``dqdyn models``: every robot dqdyn.load_example can load, with its source and size."""
    from ._table import Table
    from .models import ERD_INSTALL, example_robot_data_dir, list_models, model_info

    t = Table(title="Models (dqdyn.load_example(NAME); dqdyn info NAME)", title_justify="left")
    for col in ("name", "source", "kind", "root", "description"):
        t.add_column(col)
    for n in list_models(args.source):
        e = model_info(n)
        root = (e.root_joint or "fixed") if e.target[:4] in ("file", "erd:") else "-"
        t.add_row(n, e.source, e.kind, root, e.description)
    con = _console()
    con.print(t)
    if example_robot_data_dir() is None:
        con.print(f"more robots (panda, ur5, talos, tiago, …): {ERD_INSTALL}")
    return EXIT_OK


def _add_models(sub) -> None:
    p = sub.add_parser("models", help="list the robots you can load by name",
                       description="List the bundled robots and those of example-robot-data "
                                   "(when installed): dqdyn.load_example(NAME), dqdyn info NAME.")
    p.add_argument("--source", choices=("bundled", "example-robot-data"), default=None)
    p.set_defaults(func=cmd_models)


# ------------------------------------------------------------------------------------- view
def cmd_view(args) -> int:
    from .viz.cli import run

    return run(args)


def _add_view(sub) -> None:
    from .viz.cli import add_parser

    add_parser(sub, cmd_view)


# ------------------------------------------------------------------------------------ sweep
def _add_sweep(sub) -> None:
    from .sweep import add_sweep_parser  # logic in dqdyn.sweep (Dask, Zarr imported lazily)

    add_sweep_parser(sub)


# ------------------------------------------------------------------------------- precompile
def cmd_precompile(args) -> int:
    """``dqdyn precompile``: compile every kernel into the kernel cache (``pip install`` does it),
    after unpacking the shipped portable kernels where they fit; ``--portable`` makes those."""
    from .precompile import make_portable, precompile, unpack_portable

    if args.portable:
        print(f"dqdyn precompile: wrote {make_portable(args.jobs)}")
        return EXIT_OK
    unpack_portable()
    precompile(args.group, args.jobs)
    return EXIT_OK


def _add_precompile(sub) -> None:
    from .precompile import GROUPS

    p = sub.add_parser("precompile", help="compile every kernel now (pip install already does)",
                       description="Compile every numba kernel of dqdyn into its kernel cache, in "
                       "parallel worker processes, so later processes load them at once. "
                       "pip install runs this; run it again after installing a wheel built on "
                       "another CPU or in a container image.")
    p.add_argument("--jobs", type=int, default=None, help="worker processes (default: CPUs)")
    p.add_argument("--group", action="append", choices=sorted(GROUPS), help="only these groups")
    p.add_argument("--portable", action="store_true",
                   help="compile every kernel for any x86-64-v3 CPU (AVX2, FMA) into the archive "
                        "the source ships, dqdyn/_kernels_portable-<python>.tar.xz (maintainers, after "
                        "editing kernels)")
    p.set_defaults(func=cmd_precompile)


def cmd_doctor(args: argparse.Namespace) -> int:
    from .doctor import format_report, report

    r = report(measure=args.measure)
    print(json.dumps(r, indent=1) if args.json else format_report(r))
    return 0 if r["verdict"].startswith("ready") else 1


def _add_doctor(sub) -> None:
    p = sub.add_parser(
        "doctor", help="say whether dqdyn is ready on this machine, and how to fix it if not",
        description="Python, numba and NumPy versions, the CPU and the level it runs, whether "
        "the shipped kernels were found and are used, the kernel caches, the C call gate and "
        "the threading layer; then a one-line verdict with the fix. Exit code 1 when not ready.",
        epilog="example: dqdyn doctor --measure")
    p.add_argument("--measure", action="store_true",
                   help="also time a single call with and without the C call gate (seconds)")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(func=cmd_doctor)


#: sub-command registrars, in help order
COMMANDS: list[Callable] = [_add_info, _add_models, _add_simulate, _add_reproduce, _add_bench,
                            _add_view, _add_sweep, _add_precompile, _add_doctor]


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
