"""The browser viewer: `Viewer` (viser) and `view`.

Scene graph: one node ``/robot/<body>`` per dqdyn body (the world is ``/robot/world``), posed by
`forward_kinematics`; its shapes are children (``/robot/<body>/visual_k``), so a
configuration update sends one pose per body.  Optional layers: body frames (axes), CoMs
(spheres), body twists (arrows: angular velocity in red, linear velocity of the body origin in
blue, world axes) and wrenches (force in green, torque in purple, at the body origins, world
axes).  A trajectory gets a time slider and a play checkbox in the GUI panel.  Parallel robots
(Stewart / Gough platforms, cable robots) are drawn by `Viewer.show_parallel`: platform,
base points, and legs / cables as line segments.
"""

from __future__ import annotations

import threading
import time

import numpy as np

from dqdyn.algebra.rotations import matrix_from_quat, translation_of
from dqdyn.viz.geometry import Visual, inertia_boxes, mjcf_visuals, skeleton, urdf_visuals, visual_points


def _viser():
    try:
        import viser
    except ImportError as e:
        raise ImportError("dqdyn.viz needs viser and trimesh: pip install 'dqdyn[viz]'") from e
    return viser


def _rgb(color):
    return tuple(int(round(255 * float(c))) for c in color[:3])


FILL = 0.7  # the share of the field of view the robot's bounding box spans in the initial view
AZIMUTH, ELEVATION = np.radians(35.0), np.radians(25.0)  # the initial 3/4 view from above


def frame_box(lo, hi, *, fov: float = np.radians(75.0), aspect: float = 1.0, fill: float = FILL,
              azimuth: float = AZIMUTH, elevation: float = ELEVATION):
    """``(position, look_at, near, far)`` of a perspective camera (vertical field of view ``fov``
    in radians, width / height ``aspect``) that looks at the centre of the box ``[lo, hi]`` from
    the direction ``(azimuth, elevation)`` (z up), at the smallest distance where every corner of
    the box projects inside ``fill`` of the half-height and half-width of the image: for a
    corner ``p`` (from the centre) at depth ``d - p·u`` along the view direction ``u``,
    ``|p·up| <= fill tan(fov/2) (d - p·u)`` and the same across with ``aspect tan(fov/2)``.
    The clipping planes follow the size (a 1 cm gripper is not cut by the near plane)."""
    lo, hi = np.asarray(lo, dtype=float), np.asarray(hi, dtype=float)
    c = 0.5 * (lo + hi)
    h = 0.5 * (hi - lo)
    if not np.all(np.isfinite(h)) or np.linalg.norm(h) < 1e-9:  # a point: a 10 cm box around it
        c = np.where(np.isfinite(c), c, 0.0)
        h = np.full(3, 0.05)
    u = np.array([np.cos(elevation) * np.cos(azimuth), np.cos(elevation) * np.sin(azimuth), np.sin(elevation)])
    right = np.cross(-u, [0.0, 0.0, 1.0])
    right /= np.linalg.norm(right)
    up = np.cross(right, -u)
    corners = h * np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], dtype=float)
    tv = fill * np.tan(0.5 * fov)
    depth = corners @ u
    d = float(np.max(depth + np.maximum(np.abs(corners @ up) / tv, np.abs(corners @ right) / (aspect * tv))))
    r = float(np.linalg.norm(h))
    near = float(min(0.01, max(1e-6, 0.1 * (d - r))))
    far = float(max(1000.0, 20.0 * (d + r)))
    return c + d * u, c, near, far


class Viewer:
    """A robot in the browser.

    Parameters
    ----------
    model:
        A `Model`, or None for a scene holding only parallel robots
        (`show_parallel`).
    urdf, package_dirs:
        The URDF file the model came from: its ``<visual>`` meshes / primitives are drawn
        (``package://`` through ``package_dirs`` then ``ROS_PACKAGE_PATH``).
    mjcf:
        A ``mujoco.MjModel`` (or MJCF path / string) the model came from: its geoms are drawn.
    visuals:
        ``"auto"`` (URDF / MJCF shapes when given, else inertia-equivalent boxes and a skeleton),
        ``"inertia"`` (boxes only) or a list of `Visual`.
    host, port:
        Where the viser server listens (default loopback: ``127.0.0.1``).
    allowed_origins:
        The server answers only its own page: a request whose ``Host`` is not ``localhost`` /
        a loopback or the server's own address with its port, or whose ``Origin`` (sent by
        browsers) is another web page, gets ``403`` and no scene data.  Extra origins to accept
        (``["http://myhost:8080"]``; their hosts are then accepted as ``Host`` too), or ``"*"``
        for any: only for a trusted network.  Off by default.
    allow_outside:
        Read URDF meshes outside the URDF's directory and ``package_dirs`` too (off by default:
        such a path is refused with a warning, see `resolve_uri`).
    """

    def __init__(self, model, *, urdf=None, package_dirs=(), mjcf=None, visuals="auto",
                 host: str = "127.0.0.1", port: int = 8080, show_frames: bool = True,
                 show_coms: bool = False, verbose: bool = False, allowed_origins=(),
                 allow_outside: bool = False):
        viser = _viser()
        from dqdyn.viz._guard import RequestGuard, install

        self.model = model
        self.guard = RequestGuard(host, allowed_origins)
        self.server = install(lambda: viser.ViserServer(host=host, port=port, verbose=verbose), self.guard)
        self.server.gui.configure_theme(show_logo=False, show_share_button=False)
        if model is None:  # a scene for parallel robots only (show_parallel)
            visuals = []
        if isinstance(visuals, str):
            vis: list[Visual] = []
            if visuals == "auto" and urdf is not None:
                vis = urdf_visuals(model, urdf, package_dirs, allow_outside=allow_outside)
            elif visuals == "auto" and mjcf is not None:
                from dqdyn.parsers.mjcf import compile_mjcf

                vis = mjcf_visuals(model, compile_mjcf(mjcf))
            if not vis:
                vis = inertia_boxes(model) + skeleton(model)
        else:
            vis = list(visuals)
        self.visuals = vis
        self.server.scene.add_grid("/grid", width=4, height=4, cell_size=0.25)
        self.link_nodes = {}
        for i in range(0, model.nbodies + 1 if model is not None else 0):
            name = f"/robot/{model.body_names[i]}"
            self.link_nodes[model.body_names[i]] = self.server.scene.add_frame(
                name, show_axes=show_frames, axes_length=0.08, axes_radius=0.004)
        self.visual_nodes = [self._add_visual(f"/robot/{model.body_names[v.body]}/visual_{k}", v)
                             for k, v in enumerate(vis)]
        if show_coms and model is not None:
            for i in range(1, model.nbodies + 1):
                if model.mass[i] > 0:
                    self.server.scene.add_icosphere(f"/robot/{model.body_names[i]}/com", radius=0.02,
                                                    color=(20, 20, 20), position=tuple(model.com[i]))
        self._lock = threading.Lock()
        self._traj = None
        self._playing = None
        self._thread = None
        from dqdyn.kinematics.forward import neutral

        self.q = neutral(model) if model is not None else np.zeros(0)
        if model is not None:
            self.update(self.q)
            self._aim_camera()

    def _aim_camera(self) -> None:
        """Point the initial camera (and "Reset View") at the robot at the neutral q: the centre
        of the bounding box of its shapes (mesh vertices, primitives' boxes; the body origins
        when there are none), from a 3/4 view above, at the distance where the box fills
        ``FILL`` of the default field of view (see `frame_box`)."""
        lo, hi = self.bounds()
        cam = self.server.initial_camera
        pos, target, near, far = frame_box(lo, hi, fov=float(cam.fov))
        cam.near, cam.far = near, far
        cam.look_at = tuple(target)
        cam.position = tuple(pos)
        self.camera = (pos, target)

    def bounds(self, q=None) -> tuple[np.ndarray, np.ndarray]:
        """``(lo, hi)``: the world-axis bounding box of the robot's shapes at ``q`` (default
        neutral), from `visual_points`."""
        P = visual_points(self.model, self.visuals, self.q if q is None else q)
        return P.min(axis=0), P.max(axis=0)

    # ---------------------------------------------------------------------------- geometry
    def _add_visual(self, name, v: Visual):
        sc = self.server.scene
        r, p = tuple(v.pose[:4]), tuple(translation_of(v.pose))
        col = _rgb(v.color)
        if v.kind == "mesh":
            mesh = v.params["mesh"].copy()
            try:
                mesh.visual.face_colors = np.array(col + (255,), dtype=np.uint8)
            except Exception:  # pragma: no cover - textured meshes keep their look
                pass
            return sc.add_mesh_trimesh(name, mesh, wxyz=r, position=p)
        if v.kind == "box":
            return sc.add_box(name, color=col, dimensions=tuple(v.params["size"]), wxyz=r, position=p)
        if v.kind == "sphere":
            return sc.add_icosphere(name, radius=float(v.params["radius"]), color=col, wxyz=r, position=p)
        if v.kind in ("cylinder", "capsule"):
            return sc.add_cylinder(name, radius=float(v.params["radius"]), height=float(v.params["length"]),
                            color=col, wxyz=r, position=p)
        if v.kind == "ellipsoid":
            return sc.add_icosphere(name, radius=1.0, color=col, wxyz=r, position=p,
                                    scale=tuple(float(x) for x in v.params["radii"]))
        return None

    # ------------------------------------------------------------------------------- state
    def update(self, q) -> None:
        """Show the robot at configuration ``q``."""
        from dqdyn.kinematics.forward import forward_kinematics

        q = np.asarray(q, dtype=float)
        X = forward_kinematics(self.model, q)
        with self.server.atomic():
            for i, name in enumerate(self.model.body_names):
                h = self.link_nodes[name]
                h.wxyz = tuple(X[i, :4])
                h.position = tuple(translation_of(X[i]))
        self.q = q

    def _arrows(self, name, origins, vectors, color, scale):
        pts = np.stack([origins, origins + scale * vectors], axis=1)
        keep = np.linalg.norm(vectors, axis=1) > 1e-12
        if not np.any(keep):
            return None
        return self.server.scene.add_arrows(name, pts[keep], color, shaft_radius=0.006,
                                            head_radius=0.015, head_length=0.03)

    def show_twists(self, v, scale: float = 0.2) -> None:
        """Body twists at ``(self.q, v)`` as arrows at the body origins (world axes): ω red,
        the origin's linear velocity blue, both times ``scale``."""
        from dqdyn.kinematics.forward import body_twists, forward_kinematics

        X = forward_kinematics(self.model, self.q)[1:]
        T = body_twists(self.model, self.q, np.asarray(v, dtype=float), frame="world_aligned")[1:]
        o = translation_of(X)
        self._arrows("/twists/omega", o, T[:, :3], (220, 40, 40), scale)
        self._arrows("/twists/velocity", o, T[:, 3:], (40, 80, 220), scale)

    def show_wrenches(self, wrenches, scale: float = 0.02) -> None:
        """Wrenches ``[f, τ]`` (nbodies+1, 6) in body frames at the body origins (e.g.
        ``newton_euler(...).wrenches`` or ``fext``): force green, torque purple, ``scale`` m per
        N / N m."""
        from dqdyn.kinematics.forward import forward_kinematics

        W = np.asarray(wrenches, dtype=float)[1:]
        X = forward_kinematics(self.model, self.q)[1:]
        R = matrix_from_quat(X[:, :4])
        f = np.einsum("nij,nj->ni", R, W[:, :3])
        t = np.einsum("nij,nj->ni", R, W[:, 3:])
        o = translation_of(X)
        self._arrows("/wrenches/force", o, f, (40, 170, 60), scale)
        self._arrows("/wrenches/torque", o, t, (150, 60, 190), scale)

    # ------------------------------------------------------------------- parallel robots
    def show_parallel(self, robot, eta=None, *, name: str = "parallel") -> None:
        """A parallel robot (`ParallelRobot`: Stewart / Gough platform or
        cable robot) at end-effector pose ``eta`` (vec8; default ``robot.home``): the platform
        (the convex hull of its attachment points, or spheres when they are collinear), the base
        points, and the legs / cables as line segments from the base points to the attachment
        points (for pulley cable robots, from the swivel points)."""
        eta = np.asarray(robot.home if eta is None else eta, dtype=float)
        r, s = robot.platform_points, robot.base_points
        R, t = matrix_from_quat(eta[:4]), translation_of(eta)
        sc = self.server.scene
        self._parallel = getattr(self, "_parallel", {})
        node = sc.add_frame(f"/{name}/platform", show_axes=True, axes_length=0.1, axes_radius=0.005,
                            wxyz=tuple(eta[:4]), position=tuple(t))
        try:
            import trimesh

            hull = trimesh.convex.convex_hull(np.vstack([r, r + [0, 0, -0.02]]))
            sc.add_mesh_trimesh(f"/{name}/platform/plate", hull)
        except Exception:  # collinear or coplanar-degenerate points: spheres only
            pass
        for k, p in enumerate(r):
            sc.add_icosphere(f"/{name}/platform/r{k}", radius=0.02, color=(200, 60, 60), position=tuple(p))
        for k, p in enumerate(s):
            sc.add_icosphere(f"/{name}/base/s{k}", radius=0.025, color=(60, 60, 60), position=tuple(p))
        ends = t + r @ R.T
        segs = np.stack([s, ends], axis=1)
        legs = sc.add_line_segments(f"/{name}/legs", segs, colors=(230, 140, 20), thickness=0.01)
        self._parallel[name] = (robot, node, legs)

    def update_parallel(self, eta, *, name: str = "parallel") -> None:
        """Move the platform of `show_parallel` to ``eta``."""
        robot, node, legs = self._parallel[name]
        eta = np.asarray(eta, dtype=float)
        R, t = matrix_from_quat(eta[:4]), translation_of(eta)
        node.wxyz, node.position = tuple(eta[:4]), tuple(t)
        legs.points = np.stack([robot.base_points, t + robot.platform_points @ R.T], axis=1).astype(np.float32)

    # ------------------------------------------------------------------------- trajectory
    def play(self, t, Q, *, loop: bool = True, autoplay: bool = False, fps: float = 60.0) -> None:
        """A time slider (and a play checkbox) over the configurations ``Q`` (K, nq) at times
        ``t`` (K,); samples closer than ``1 / fps`` are thinned out (playback in real time)."""
        t, Q = np.asarray(t, dtype=float), np.asarray(Q, dtype=float)
        if Q.ndim != 2 or Q.shape[1] != self.model.nq or len(t) != len(Q) or len(t) < 1:
            from dqdyn.errors import ShapeError

            raise ShapeError(f"play: Q must be (K, nq={self.model.nq}) with K = len(t), got {Q.shape}, "
                             f"{t.shape}")
        if len(t) > 1 and fps > 0 and (t[1] - t[0]) < 1.0 / fps:
            stride = int(np.ceil((1.0 / fps) / (t[1] - t[0])))
            keep = np.r_[np.arange(0, len(t), stride), len(t) - 1] if (len(t) - 1) % stride else \
                np.arange(0, len(t), stride)
            t, Q = t[keep], Q[keep]
        self._traj = (t, Q)
        gui = self.server.gui
        self.slider = gui.add_slider("time step", min=0, max=len(t) - 1, step=1, initial_value=0)
        self.time_label = gui.add_number("t [s]", initial_value=float(t[0]), disabled=True)
        self._playing = gui.add_checkbox("play", initial_value=autoplay)

        @self.slider.on_update
        def _(_event):
            k = int(self.slider.value)
            self.time_label.value = float(t[k])
            self.update(Q[k])

        def run():
            while self._thread is not None:
                if self._playing.value:
                    k = int(self.slider.value) + 1
                    if k >= len(t):
                        k = 0 if loop else len(t) - 1
                    self.slider.value = k
                    dt = float(t[1] - t[0]) if len(t) > 1 else 0.05
                    time.sleep(max(dt, 1 / 60))
                else:
                    time.sleep(0.05)

        self._thread = threading.Thread(target=run, daemon=True)
        self._thread.start()
        self.update(Q[0])

    @property
    def url(self) -> str:
        return f"http://{self.server.get_host()}:{self.server.get_port()}/"

    def close(self) -> None:
        self._thread = None
        self.server.stop()


def view(model, q=None, **kw) -> Viewer:
    """Open a `Viewer` of ``model`` at ``q`` (default neutral) and return it."""
    v = Viewer(model, **kw)
    if q is not None:
        v.update(q)
    return v


__all__ = ["Viewer", "view", "frame_box"]
