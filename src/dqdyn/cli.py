"""The ``dqdyn`` command line.

::

    dqdyn --version
    dqdyn info MODEL [--root-joint fixed|free|planar] [--mimic follow|independent|error] [--frames]
    dqdyn simulate MODEL --duration 2 --dt 1e-3 --controller pd --plot out.png
    dqdyn view MODEL [--traj FILE.npz]
    dqdyn sweep MODEL --out STORE --states N
    dqdyn reproduce [CASE ...] [--out DIR] [--quick]      (``dqdyn demo``: every case, quick)
    dqdyn bench [--dir benchmarks]

``MODEL`` is anything `dqdyn.load` takes — a URDF or MJCF file, a bundled or
example-robot-data name (``panda``), a MuJoCo Menagerie or robot_descriptions name — with the
same options and defaults in every sub-command (`dqdyn._cliargs`); a near miss gets a "did you
mean".  Every argument is checked (files exist, output folders can be written) before any work
starts.

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
import os
import sys
import warnings
from collections.abc import Callable, Sequence

import numpy as np

from dqdyn import __version__
from dqdyn._cliargs import (
    HelpFormatter,
    _positive,
    add_model_arguments,
    check_output_dir,
    check_output_file,
    load_model,
    model_file,
)
from dqdyn.doctor import add_doctor
from dqdyn.errors import DqdynError, UsageError

EXIT_OK = 0
EXIT_USAGE = 2  # bad command line or bad input file


# ---------------------------------------------------------------------------------- helpers
def _console(file=None):
    """A console that never cuts a table at the terminal width (rich when installed, extra
    ``cli``; plain text otherwise)."""
    from dqdyn._table import console

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


# ------------------------------------------------------------------------------------- info
def _info_tables(model):
    """The (bodies, joints) rich tables of `cmd_info`."""
    from dqdyn._table import Table, escape

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
    from dqdyn._table import Table, escape
    from dqdyn.algebra.rotations import translation_of

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
    model = load_model(args)
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


def _parser(sub, name: str, help: str, description: str, examples: str):
    """A sub-command parser whose ``--help`` ends with its own examples."""
    return sub.add_parser(name, help=help, description=description,
                          epilog="examples:\n" + examples,
                          formatter_class=HelpFormatter)


def _add_info(sub) -> None:
    p = _parser(sub, "info", "print the bodies, joints and sizes of a robot",
                "Print the bodies (mass, CoM), the joints (type, axis, q / v slices, limits, "
                "mimic coupling) and the sizes of a robot.",
                "  dqdyn info panda\n"
                "  dqdyn info robot.urdf --root-joint free --frames\n"
                "  dqdyn info scene.xml --ignore tendon")
    add_model_arguments(p)
    p.add_argument("--frames", action="store_true",
                   help="also list the named frames (every URDF link is one)")
    p.set_defaults(func=cmd_info)


# -------------------------------------------------------------------------------- reproduce
def cmd_reproduce(args) -> int:
    """``dqdyn reproduce``: the papers' experiments against MuJoCo (tables, CSV, figures)."""
    from dqdyn._optional import require
    from dqdyn.reproduce.runner import available_cases

    bad = [c for c in args.cases if c not in available_cases()]
    if bad:
        raise UsageError(f"CASE: unknown case(s) {', '.join(map(repr, bad))}; expected some of "
                         f"{', '.join(available_cases())}")
    if getattr(args, "list", False):
        from dqdyn.reproduce.runner import print_catalog

        print_catalog(_console())
        return EXIT_OK
    check_output_dir("--out", args.out)
    for extra, mod in (("sim", "mujoco"), ("plot", "matplotlib"), ("cli", "rich")):
        try:
            require(extra, mod)
        except DqdynError:
            raise DqdynError(f"{args.command} needs mujoco, matplotlib and rich ({mod!r} is "
                             f"missing); install them with: pip install \"dqdyn[demo]\"") from None
    from dqdyn.reproduce import reproduce

    print(f"writing results.md, results.csv and figures to {os.path.abspath(args.out)}"
          f"{os.sep}", flush=True)
    res = reproduce(args.cases or None, out_dir=args.out, quick=args.quick, console=_console())
    failed = [r.name for r in res if hasattr(r, "passed") and not r.passed]
    if failed:
        print(f"dqdyn: cases below the paper's figures: {', '.join(failed)}", file=sys.stderr)
        return 1
    return EXIT_OK


def _add_reproduce(sub) -> None:
    from dqdyn.reproduce.runner import available_cases

    cases = ", ".join(available_cases())
    p = _parser(sub, "reproduce",
                "reproduce the papers' experiments against MuJoCo (CMC tables, figures)",
                "Simulate each case in MuJoCo, process the logs as the papers did and compare "
                "dqdyn's torques / accelerations by the CMC; write results.md, results.csv and "
                "PNG figures.  Cases: " + cases,
                "  dqdyn reproduce                    every case, full length\n"
                "  dqdyn reproduce jaco --quick --out results/\n"
                "  dqdyn reproduce --list             which case makes which table or figure")
    p.add_argument("cases", nargs="*", metavar="CASE", help="cases to run (default: all)")
    p.add_argument("--out", default="reproduce-out",
                   help="output folder (default: ./reproduce-out, in the current directory)")
    p.add_argument("--quick", action="store_true",
                   help="short runs (what 'dqdyn demo' does; about 1 minute once the kernels "
                        "are compiled, several minutes the first time)")
    p.add_argument("--list", action="store_true",
                   help="list every table and figure of the papers and the case that "
                        "regenerates it (or why none can), then exit")
    p.set_defaults(func=cmd_reproduce)
    d = _parser(sub, "demo", "a one-minute tour: 'dqdyn reproduce --quick' on every case",
                "Run every case of 'dqdyn reproduce' with short simulations (about a minute "
                "once the kernels are compiled) and write results.md, results.csv and the "
                "figures to --out: the quickest way to see dqdyn against MuJoCo.  Cases: "
                + cases,
                "  dqdyn demo\n"
                "  dqdyn demo jaco --out /tmp/dqdyn-demo")
    d.add_argument("cases", nargs="*", metavar="CASE", help="cases to run (default: all)")
    d.add_argument("--out", default="reproduce-out",
                   help="output folder (default: ./reproduce-out, in the current directory)")
    d.set_defaults(func=cmd_reproduce, quick=True, list=False)


# --------------------------------------------------------------------------------- simulate
#: figure formats of ``simulate --plot``
PLOT_SUFFIXES = (".png", ".pdf", ".svg")


def _check_simulate(args) -> None:
    """Every argument of ``simulate`` that can be checked without the model."""
    _positive("--duration", args.duration)
    _positive("--dt", args.dt)
    _positive("--bandwidth", args.bandwidth)
    _positive("--frequency", args.frequency)
    if not np.isfinite(args.amplitude) or args.amplitude < 0:
        raise UsageError(f"--amplitude must be a finite number >= 0, got {args.amplitude!r}")
    if args.dt > args.duration:
        raise UsageError(f"--dt ({args.dt:g} s) is longer than --duration ({args.duration:g} s)")
    for k in ("kp", "kd"):
        x = getattr(args, k)
        if x is not None and not (np.isfinite(x) and x >= 0):
            raise UsageError(f"--{k} must be a finite number >= 0, got {x!r}")
    if args.plot:
        from dqdyn._optional import require

        require("plot", "matplotlib")  # before simulating: fail fast, naming the extra
        check_output_file("--plot", args.plot, PLOT_SUFFIXES)
    if args.save:
        check_output_file("--save", args.save, (".npz",))
    if args.view is not None:
        from dqdyn._optional import require

        require("viz", "viser")
        if not 0 < args.view < 65536:
            raise UsageError(f"--view: port must be 1 … 65535, got {args.view}")


def cmd_simulate(args) -> int:
    """``dqdyn simulate``: simulate a model under a controller; optional plot / npz.

    The logic lives in `dqdyn.simulation.run.run_simulation` (gains scaled to the robot,
    joint limits, divergence detection); this checks the arguments, prints and writes the
    files."""
    _check_simulate(args)
    model = load_model(args)
    from dqdyn.simulation import run as _run

    res = _run.run_simulation(model, duration=args.duration, dt=args.dt,
                              controller=args.controller, kp=args.kp, kd=args.kd,
                              bandwidth=args.bandwidth, amplitude=args.amplitude,
                              frequency=args.frequency, integrator=args.integrator,
                              limits=not args.no_limits)
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
        from dqdyn.simulation.plots import plot_simulation

        con.print(f"wrote {plot_simulation(res, args.plot)}")
    if getattr(args, "view", None) is not None:  # dqdyn[viz]: the motion in the browser
        from dqdyn.viz.cli import show_trajectory

        f = model_file(args)
        kw = {} if f is None else {f[0]: f[1]}
        show_trajectory(model, traj.t, traj.q, port=args.view, seconds=args.view_seconds,
                        package_dirs=args.package_dirs or (), **kw)
    return EXIT_OK


def _add_simulate(sub) -> None:
    p = _parser(
        sub, "simulate", "simulate a robot under a controller",
        "Simulate a robot from its neutral configuration (1-DoF joints whose neutral value "
        "is outside their limits start mid-range).  By default a computed-torque controller "
        "tracks sinusoidal joint motions inside the joint limits, each joint a quarter of a "
        "period after the previous one (closed loop ë + 2ω ė + ω² e = 0, ω = 2π·bandwidth), "
        "with spring-dampers at the joint limits; --controller pd uses gains scaled to each "
        "joint's effective inertia.  A free-floating base is held by the controller where it "
        "starts (--fixed-base welds it instead); --controller none lets it fall.",
        "  dqdyn simulate panda --duration 2 --plot panda.png\n"
        "  dqdyn simulate solo12 --fixed-base --controller pd --save solo.npz\n"
        "  dqdyn simulate robot.urdf --controller none --view")
    add_model_arguments(p)
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
    p.add_argument("--plot", metavar="FILE",
                   help="write positions (with references), velocities and torques / forces to "
                        "this figure (.png, .pdf, .svg; needs the plot extra: pip install "
                        "\"dqdyn[plot]\")")
    p.add_argument("--save", metavar="NPZ", help="write the trajectory to this .npz")
    p.add_argument("--view", metavar="PORT", type=int, nargs="?", const=8080, default=None,
                   help="then play the motion in the browser (dqdyn[viz]) on 127.0.0.1:PORT")
    p.add_argument("--view-seconds", type=float, default=None, help=argparse.SUPPRESS)
    p.set_defaults(func=cmd_simulate)


# ------------------------------------------------------------------------------------ bench
def benchmark_dirs() -> list:
    """Where ``dqdyn bench`` looks for ``bench_*.py`` without ``--dir``: ``./benchmarks``, then
    the ``benchmarks/`` folder of the source checkout this dqdyn was installed from (editable
    installs); a wheel ships no benchmark scripts."""
    from pathlib import Path

    here = Path(__file__).resolve().parent  # …/src/dqdyn in a checkout
    out = [Path.cwd() / "benchmarks"]
    for up in (here.parent.parent, here.parent):
        cand = up / "benchmarks"
        if cand not in out:
            out.append(cand)
    return out


def cmd_bench(args) -> int:
    """``dqdyn bench``: run the scripts in ``benchmarks/`` (a source checkout) one by one."""
    import subprocess
    from pathlib import Path

    roots = [Path(args.dir)] if args.dir else benchmark_dirs()
    root = next((r for r in roots if r.is_dir() and any(r.glob("bench_*.py"))), None)
    if root is None:
        if args.dir:
            raise UsageError(f"--dir: no bench_*.py scripts in {args.dir!r}")
        raise UsageError(
            "bench: the benchmark scripts (benchmarks/bench_*.py) ship with dqdyn's source "
            "checkout, not with the installed package; looked in "
            + ", ".join(repr(str(r)) for r in roots)
            + ". Clone the repository and run 'dqdyn bench' from its root, or pass --dir DIR")
    scripts = sorted(root.glob("bench_*.py"))
    if args.only:
        names = {s.stem for s in scripts}
        bad = [o for o in args.only if o not in names and f"bench_{o}" not in names]
        if bad:
            raise UsageError(f"--only: no script {', '.join(map(repr, bad))} in {str(root)!r}; "
                             f"there are: {', '.join(sorted(names))}")
        scripts = [s for s in scripts if s.stem in args.only or s.stem[6:] in args.only]
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
    p = _parser(sub, "bench", "run the benchmark scripts (ratios against Pinocchio)",
                "Run the benchmarks/bench_*.py scripts of dqdyn's source checkout one by one "
                "and print their tables (times, and ratios against Pinocchio when it is "
                "installed).  Without --dir: ./benchmarks, else the checkout dqdyn was "
                "installed from (pip install -e).",
                "  dqdyn bench\n"
                "  dqdyn bench --only bench_rnea --dir ~/dqdyn/benchmarks")
    p.add_argument("--dir", help="benchmarks folder (default: ./benchmarks, else the checkout's)")
    p.add_argument("--only", action="append", default=None, metavar="SCRIPT",
                   help="run only this script (bench_NAME or NAME; repeatable)")
    p.add_argument("extra", nargs="*", help="arguments passed to every script")
    p.set_defaults(func=cmd_bench)


# ----------------------------------------------------------------------------------- models
def cmd_models(args) -> int:
    """``dqdyn models``: every robot dqdyn can load by name, with its source and kind (kind
    ``model``: ``dqdyn.load_example``; ``constrained``: ``dqdyn.load_constrained_example``;
    ``parallel``: ``dqdyn.load_parallel_example``)."""
    from dqdyn._table import Table
    from dqdyn.models import ERD_INSTALL, example_robot_data_dir, list_models, model_info

    t = Table(title="Models (kind model: dqdyn.load_example(NAME); constrained: "
                    "dqdyn.load_constrained_example(NAME); parallel: "
                    "dqdyn.load_parallel_example(NAME))", title_justify="left")
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
    p = _parser(sub, "models", "list the robots you can load by name",
                "List the bundled robots and those of example-robot-data (when installed): "
                "the names every MODEL argument takes (dqdyn.load(NAME), dqdyn info NAME).",
                "  dqdyn models\n"
                "  dqdyn models --source example-robot-data")
    p.add_argument("--source", choices=("bundled", "example-robot-data"), default=None)
    p.set_defaults(func=cmd_models)


# ------------------------------------------------------------------------------------- view
def cmd_view(args) -> int:
    from dqdyn.viz.cli import run

    return run(args)


def _add_view(sub) -> None:
    from dqdyn.viz.cli import add_parser

    add_parser(sub, cmd_view)


# ------------------------------------------------------------------------------------ sweep
def _add_sweep(sub) -> None:
    from dqdyn.scale._sweep_cli import add_sweep_parser  # logic in dqdyn.scale.sweep (Dask, Zarr imported lazily)

    add_sweep_parser(sub)


# ------------------------------------------------------------------------------- precompile
def cmd_precompile(args) -> int:
    """``dqdyn precompile``: compile every kernel into the kernel cache (``pip install`` does it),
    after unpacking the shipped portable kernels where they fit; ``--portable`` makes those."""
    from dqdyn._engine.precompile import make_portable, precompile, unpack_portable

    if args.portable:
        print(f"dqdyn precompile: wrote {make_portable(args.jobs)}")
        return EXIT_OK
    unpack_portable()
    precompile(args.group, args.jobs)
    return EXIT_OK


def _add_precompile(sub) -> None:
    from dqdyn._engine.precompile import GROUPS

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
    p.epilog = "examples:\n  dqdyn precompile\n  dqdyn precompile --jobs 2"
    p.formatter_class = HelpFormatter
    p.set_defaults(func=cmd_precompile)


#: sub-command registrars, in help order
COMMANDS: list[Callable] = [_add_info, _add_models, _add_simulate, _add_reproduce, _add_bench,
                            _add_view, _add_sweep, _add_precompile, add_doctor]


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
