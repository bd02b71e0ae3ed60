"""``dqdyn view MODEL [--traj FILE.npz]``: the robot in the browser (logic of the sub-command)."""

from __future__ import annotations

import time


def load_any(src: str, root=None, **options):
    """``(model, viewer keyword arguments)`` of a robot named any way `dqdyn.load` takes
    (``root``: ``"fixed"``, ``"free"``, ``"planar"`` or ``None`` for the robot's own)."""
    import argparse

    from dqdyn._cliargs import load_model

    ns = argparse.Namespace(command="view", model=src, bundled=None, root=root,
                            fixed_base=False, mimic=options.get("mimic"),
                            ignore=options.get("ignore"), package_dirs=options.get("package_dirs"),
                            menagerie=options.get("menagerie"))
    return load_model(ns), _viewer_kw(ns)


def _viewer_kw(args) -> dict:
    from dqdyn._cliargs import model_file

    f = model_file(args)
    if f is None:
        return {}
    fmt, path = f
    if fmt == "urdf":
        return {"urdf": path, "package_dirs": list(getattr(args, "package_dirs", None) or ())}
    return {"mjcf": path}


def add_parser(sub, run) -> None:

    from dqdyn._cliargs import HelpFormatter, add_model_arguments

    p = sub.add_parser(
        "view", help="show a robot (and a trajectory) in the browser (viser)",
        description="Serve a 3-D view of a robot (its meshes when the file names them, else "
                    "boxes of its inertias) on a local web page, optionally playing a "
                    "trajectory written by 'dqdyn simulate --save'.  Needs the viz extra "
                    "(pip install \"dqdyn[viz]\").",
        epilog="examples:\n"
               "  dqdyn view panda\n"
               "  dqdyn view robot.urdf --package-dir ~/ws/src --traj run.npz\n"
               "  dqdyn view scene.xml --port 8081",
        formatter_class=HelpFormatter)
    add_model_arguments(p)
    p.add_argument("--traj", help="trajectory .npz written by `dqdyn simulate --save`")
    p.add_argument("--host", default="127.0.0.1", help="listen address (default: loopback)")
    p.add_argument("--port", type=int, default=8080)
    p.add_argument("--allow-origin", action="append", default=[], dest="allowed_origins",
                   metavar="ORIGIN",
                   help="also answer this web origin, e.g. http://myhost:8080 (repeatable; '*' for "
                        "any, trusted networks only); by default only the viewer's own page")
    p.add_argument("--allow-outside", action="store_true",
                   help="read meshes outside the model's directory and --package-dir folders")
    p.add_argument("--coms", action="store_true", help="draw the centres of mass")
    p.add_argument("--seconds", type=float, default=None,
                   help="serve this long then exit (default: until Ctrl-C)")
    p.set_defaults(func=run)


def serve(viewer, seconds=None) -> None:
    """Keep ``viewer`` up for ``seconds`` (None: until Ctrl-C), then close it."""
    print(f"dqdyn view: {viewer.model.name} at {viewer.url} (Ctrl-C to stop)", flush=True)
    t0 = time.time()
    try:
        while seconds is None or time.time() - t0 < seconds:
            time.sleep(0.2)
    except KeyboardInterrupt:
        pass
    finally:
        viewer.close()


def show_trajectory(model, t, Q, *, urdf=None, mjcf=None, package_dirs=(), host="127.0.0.1",
                    port=8080, seconds=None) -> None:
    """Serve a trajectory (``simulate --view``)."""
    from dqdyn.viz.viewer import Viewer

    viewer = Viewer(model, urdf=urdf, mjcf=mjcf, package_dirs=package_dirs, host=host, port=port)
    viewer.play(t, Q, autoplay=True)
    serve(viewer, seconds)


def check(args) -> None:
    """Every argument of ``view`` that can be checked before the robot is loaded."""
    from dqdyn._cliargs import check_input_file
    from dqdyn._optional import require
    from dqdyn.errors import UsageError

    check_input_file("--traj", args.traj)
    if not 0 < args.port < 65536:
        raise UsageError(f"--port must be 1 … 65535, got {args.port}")
    if args.seconds is not None and not args.seconds > 0:
        raise UsageError(f"--seconds must be > 0, got {args.seconds!r}")
    require("viz", "viser")


def run(args) -> int:
    from dqdyn._cliargs import load_model
    from dqdyn.simulation.trajectory import Trajectory

    check(args)
    model = load_model(args)
    tr = None
    if args.traj:
        tr = Trajectory.load(args.traj)
        if tr.q.shape[1] != model.nq:
            from dqdyn.errors import UsageError

            raise UsageError(f"--traj: {args.traj!r} has configurations of {tr.q.shape[1]} "
                             f"entries; {model.name!r} has nq = {model.nq}")
    from dqdyn.viz.viewer import Viewer

    viewer = Viewer(model, host=args.host, port=args.port, show_coms=args.coms,
                    allowed_origins=getattr(args, "allowed_origins", ()),
                    allow_outside=getattr(args, "allow_outside", False), **_viewer_kw(args))
    if tr is not None:
        viewer.play(tr.t, tr.q, autoplay=True)
    serve(viewer, args.seconds)
    return 0
