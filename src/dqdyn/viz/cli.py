"""``dqdyn view MODEL [--traj FILE.npz]``: the robot in the browser (logic of the sub-command)."""

from __future__ import annotations

import os
import time


def load_any(src: str, root=None):
    """``(model, viewer keyword arguments)`` for a URDF / MJCF file or a bundled model name."""
    from ..errors import DqdynError
    from ..parsers.urdf import bundled, bundled_models, load_urdf

    if src in bundled_models():
        path = bundled(src)
        return load_urdf(path, root_joint=root), {"urdf": path}
    if not os.path.exists(src):
        raise DqdynError(f"view: MODEL {src!r} is neither a file nor a bundled model "
                         f"({', '.join(bundled_models())})")
    if src.lower().endswith((".xml", ".mjcf")):
        from ..parsers.mjcf import compile_mjcf, load_mjcf

        mj = compile_mjcf(src)
        return load_mjcf(mj), {"mjcf": mj}
    return load_urdf(src, root_joint=root), {"urdf": src}


def add_parser(sub, run) -> None:
    p = sub.add_parser("view", help="show a robot (and a trajectory) in the browser (viser)")
    p.add_argument("model", help="URDF or MJCF (.xml) file, or a bundled model name")
    p.add_argument("--traj", help="trajectory .npz written by `dqdyn simulate --save`")
    p.add_argument("--root", choices=["free", "planar"], default=None, help="URDF root joint")
    p.add_argument("--package-dir", action="append", default=[], dest="package_dirs",
                   help="where package:// URIs resolve (repeatable; ROS_PACKAGE_PATH is used too)")
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


def show_trajectory(model, t, Q, *, urdf=None, host="127.0.0.1", port=8080, seconds=None) -> None:
    """Serve a trajectory (``simulate --view``)."""
    from .viewer import Viewer

    viewer = Viewer(model, urdf=urdf, host=host, port=port)
    viewer.play(t, Q, autoplay=True)
    serve(viewer, seconds)


def run(args) -> int:
    from ..simulation.trajectory import Trajectory
    from .viewer import Viewer

    model, kw = load_any(args.model, args.root)
    if "urdf" in kw:
        kw["package_dirs"] = args.package_dirs
    viewer = Viewer(model, host=args.host, port=args.port, show_coms=args.coms,
                    allowed_origins=getattr(args, "allowed_origins", ()),
                    allow_outside=getattr(args, "allow_outside", False), **kw)
    if args.traj:
        tr = Trajectory.load(args.traj)
        viewer.play(tr.t, tr.q, autoplay=True)
    serve(viewer, args.seconds)
    return 0
