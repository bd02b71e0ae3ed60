"""Visual geometry of a model, per body: URDF ``<visual>`` elements (meshes through trimesh,
``package://`` resolved through ``package_dirs`` / ``ROS_PACKAGE_PATH``, and read only inside
those folders and the URDF's own), MJCF geoms, and the inertia-equivalent boxes as the fallback.

Every shape is a `Visual`: the dqdyn body it rides on, its pose in that body's frame
(vec8), a ``kind`` (``"mesh"``, ``"box"``, ``"cylinder"``, ``"sphere"``, ``"capsule"``), its
parameters and an RGBA colour.  A mesh file that cannot be found or read gives a
`UserWarning` and a primitive instead (the inertia-equivalent box of the link, or a small
sphere for a massless one) — never an exception.
"""

from __future__ import annotations

import os
import warnings
from dataclasses import dataclass, field

import numpy as np

from dqdyn.algebra.rotations import pose_from_rt, quat_from_matrix, quat_from_rpy
from dqdyn.multibody.builders import _pose_mul

_GREY = (0.7, 0.7, 0.75, 1.0)
_IDENT8 = np.array([1.0, 0, 0, 0, 0, 0, 0, 0])


@dataclass
class Visual:
    body: int
    pose: np.ndarray  # vec8 in the body frame
    kind: str
    params: dict = field(default_factory=dict)  # size (box), radius/length, mesh (trimesh.Trimesh)
    color: tuple = _GREY
    link: str = ""


def inertia_box(mass: float, inertia: np.ndarray):
    """``(dims, R)``: full edge lengths and axes of the uniform box with this mass and CoM
    inertia (``I_xx = m (b² + c²) / 12``, …), or None for a massless body."""
    if mass <= 0:
        return None
    ev, R = np.linalg.eigh(np.asarray(inertia, dtype=float))
    if np.linalg.det(R) < 0:
        R[:, 0] = -R[:, 0]
    s = ev.sum()
    dims = np.sqrt(np.maximum(6.0 * (s - 2.0 * ev) / mass, 0.0))  # a² = 6 (I_yy + I_zz − I_xx) / m
    dims = np.maximum(dims, 1e-3)
    return dims, R


def inertia_boxes(model) -> list[Visual]:
    """One inertia-equivalent box per massive body, at its CoM along its principal axes."""
    out = []
    for i in range(1, model.nbodies + 1):
        box = inertia_box(float(model.mass[i]), np.array(model.inertia[i]))
        if box is None:
            continue
        dims, R = box
        out.append(Visual(i, pose_from_rt(quat_from_matrix(R), np.array(model.com[i])), "box",
                          {"size": dims}, (0.55, 0.65, 0.85, 1.0), model.body_names[i]))
    return out


def _fallback(model, body: int, link: str) -> Visual:
    box = inertia_box(float(model.mass[body]), np.array(model.inertia[body])) if body > 0 else None
    if box is None:
        return Visual(body, _IDENT8.copy(), "sphere", {"radius": 0.02}, (0.9, 0.5, 0.2, 1.0), link)
    dims, R = box
    return Visual(body, pose_from_rt(quat_from_matrix(R), np.array(model.com[body])), "box",
                  {"size": dims}, (0.9, 0.5, 0.2, 1.0), link)


def _erd_share():
    """The ``share`` folder holding ``example-robot-data/`` of an installed example-robot-data
    (what ``package://example-robot-data/...`` means), or None."""
    try:
        from dqdyn.models import example_robot_data_dir

        d = example_robot_data_dir()
    except Exception:  # noqa: BLE001 - a broken install is "not installed"
        return None
    return None if d is None else os.path.dirname(os.path.dirname(str(d)))


def _inside(path: str, roots) -> bool:
    for r in roots:
        try:
            if os.path.commonpath([path, r]) == r:
                return True
        except ValueError:  # different drives (Windows)
            continue
    return False


def _real(d) -> str:
    return os.path.realpath(os.path.expanduser(os.fspath(d)))


def locate_uri(uri: str, base_dir: str | None, package_dirs=(), *, allow_outside: bool = False):
    """``(path, refusal)`` of a mesh URI: ``path`` the file (or None), ``refusal`` why a file
    outside the allowed folders was not taken (or None).  See `resolve_uri`."""
    uri = str(uri)
    if "\x00" in uri:
        return None, "the URI holds a NUL character"
    pkg_dirs = [os.path.expanduser(os.fspath(d)) for d in (package_dirs or ())]
    pkg_dirs += [d for d in os.environ.get("ROS_PACKAGE_PATH", "").split(os.pathsep) if d]
    cands = []
    if uri.startswith("package://"):
        pkg, _, rel = uri[len("package://"):].partition("/")
        dirs = list(pkg_dirs)
        if pkg == "example-robot-data" and (share := _erd_share()) is not None:
            dirs.append(share)
        for d in dirs:
            cands.append(os.path.join(d, pkg, rel))
            if os.path.basename(os.path.normpath(d)) == pkg:
                cands.append(os.path.join(d, rel))
    else:
        path = uri
        if path.startswith("file://"):
            path = path[len("file://"):]
            if path.startswith("localhost/"):
                path = path[len("localhost"):]
        elif "://" in path:
            return None, f"scheme {path.split('://')[0]!r} is not read (only package://, file:// and paths)"
        cands.append(path if os.path.isabs(path) or base_dir is None else os.path.join(base_dir, path))
    roots = [_real(d) for d in pkg_dirs]
    if base_dir is not None:
        roots.append(_real(base_dir))
    if uri.startswith("package://example-robot-data/") and (share := _erd_share()) is not None:
        roots.append(_real(share))
    refusal = None
    for cand in cands:
        real = os.path.realpath(cand)
        if not os.path.isfile(real):
            continue
        if allow_outside or _inside(real, roots):
            return real, None
        refusal = (f"{real!r} is outside the model's directory and the package directories "
                   f"({', '.join(roots) or 'none'}); pass allow_outside=True to read it")
    return None, refusal


def resolve_uri(uri: str, base_dir: str | None, package_dirs=(), *, allow_outside: bool = False) -> str | None:
    """Path of a URDF mesh URI (``package://pkg/rel``, ``file://``, relative or absolute), or
    None when no file is found or the file is refused.

    ``package://`` looks in each of ``package_dirs`` then ``ROS_PACKAGE_PATH`` for ``DIR/pkg/rel``
    (and ``DIR/rel`` when ``DIR`` is the package); ``package://example-robot-data/...`` also in an
    installed example-robot-data.  A model file is data: a path it names is read only when, after
    ``os.path.realpath`` (symbolic links and ``..`` resolved), it lies inside ``base_dir`` (the
    model file's folder) or one of those package folders.  Anything else (``../../secret``, an
    absolute path, ``file:///etc/...``, ``/proc/...``, ``package://pkg/../../..``, other URL
    schemes) is refused with a `UserWarning` naming the path and why, unless
    ``allow_outside=True``."""
    path, why = locate_uri(uri, base_dir, package_dirs, allow_outside=allow_outside)
    if why is not None:
        warnings.warn(f"mesh {uri!r} refused: {why}", UserWarning, stacklevel=2)
    return path


def _load_mesh(path: str, scale):
    import trimesh

    mesh = trimesh.load(path, force="mesh")
    if scale is not None:
        mesh = mesh.copy()
        mesh.apply_scale(np.asarray(scale, dtype=float))
    return mesh


def _floats(s, n, default):
    if s is None:
        return np.array(default, dtype=float)
    v = np.array([float(x) for x in s.split()], dtype=float)
    return v if v.size == n else np.array(default, dtype=float)


def urdf_visuals(model, urdf_path, package_dirs=(), *, allow_outside: bool = False) -> list[Visual]:
    """The ``<visual>`` elements of a URDF file, placed on the dqdyn bodies of ``model`` (which
    was loaded from the same file: every URDF link is a frame of the model).  Mesh files are
    read only inside the URDF's folder and ``package_dirs`` (see `resolve_uri`); a refused
    or missing mesh gives a `UserWarning` and a primitive."""
    from dqdyn.parsers._urdf_xml import etree_root  # (URDFError naming the file and line)

    root = etree_root(urdf_path)
    base_dir = os.path.dirname(os.path.abspath(urdf_path))
    materials = {}
    for m in root.findall("material"):
        c = m.find("color")
        if m.get("name") and c is not None:
            materials[m.get("name")] = tuple(_floats(c.get("rgba"), 4, _GREY))
    frames = {n: (int(b), np.array(p)) for n, b, p in
              zip(model.frame_names, model.frame_body, model.frame_placement)}
    out = []
    for link in root.findall("link"):
        name = link.get("name")
        if name not in frames:
            continue
        body, lp = frames[name]
        for vis in link.findall("visual"):
            o = vis.find("origin")
            xyz = _floats(o.get("xyz") if o is not None else None, 3, (0, 0, 0))
            rpy = _floats(o.get("rpy") if o is not None else None, 3, (0, 0, 0))
            pose = _pose_mul(lp, pose_from_rt(quat_from_rpy(rpy), xyz))
            color = _GREY
            mat = vis.find("material")
            if mat is not None:
                c = mat.find("color")
                color = tuple(_floats(c.get("rgba"), 4, _GREY)) if c is not None else \
                    materials.get(mat.get("name"), _GREY)
            g = vis.find("geometry")
            if g is None or len(g) == 0:
                continue
            shape = g[0]
            tag = shape.tag
            if tag == "box":
                out.append(Visual(body, pose, "box", {"size": _floats(shape.get("size"), 3, (0.1,) * 3)}, color, name))
            elif tag == "cylinder":
                out.append(Visual(body, pose, "cylinder", {"radius": float(shape.get("radius", 0.05)),
                                                           "length": float(shape.get("length", 0.1))}, color, name))
            elif tag == "sphere":
                out.append(Visual(body, pose, "sphere", {"radius": float(shape.get("radius", 0.05))}, color, name))
            elif tag == "mesh":
                uri = shape.get("filename", "")
                scale = _floats(shape.get("scale"), 3, (1, 1, 1)) if shape.get("scale") else None
                path, why = locate_uri(uri, base_dir, package_dirs, allow_outside=allow_outside)
                mesh = None
                if why is not None:
                    warnings.warn(f"URDF {urdf_path}: link {name!r}: mesh {uri!r} refused: {why}; "
                                  "drawing a primitive", UserWarning, stacklevel=3)
                elif path is None:
                    warnings.warn(f"URDF {urdf_path}: link {name!r}: mesh {uri!r} not found (package_dirs "
                                  f"{list(package_dirs or ())}, ROS_PACKAGE_PATH); drawing a primitive",
                                  UserWarning, stacklevel=3)
                else:
                    try:
                        mesh = _load_mesh(path, scale)
                    except Exception as e:  # trimesh raises many kinds on unreadable files
                        warnings.warn(f"URDF {urdf_path}: link {name!r}: mesh {path!r} unreadable ({e}); "
                                      "drawing a primitive", UserWarning, stacklevel=3)
                if mesh is None:
                    out.append(_fallback(model, body, name))
                else:
                    out.append(Visual(body, pose, "mesh", {"mesh": mesh, "path": path}, color, name))
    return out


def mjcf_visuals(model, mj) -> list[Visual]:
    """MuJoCo geoms (compiled ``MjModel``) placed on the dqdyn bodies of a model made by
    `load_mjcf` (MuJoCo bodies are frames of the model)."""
    import mujoco

    from dqdyn.parsers.mjcf import body_name

    frames = {n: (int(b), np.array(p)) for n, b, p in
              zip(model.frame_names, model.frame_body, model.frame_placement)}
    G = mujoco.mjtGeom
    out = []
    for g in range(mj.ngeom):
        bname = body_name(mj, int(mj.geom_bodyid[g]))
        if bname not in frames:
            continue
        body, lp = frames[bname]
        pose = _pose_mul(lp, pose_from_rt(np.array(mj.geom_quat[g]), np.array(mj.geom_pos[g])))
        t, s = int(mj.geom_type[g]), np.array(mj.geom_size[g])
        color = tuple(float(c) for c in mj.geom_rgba[g])
        if t == G.mjGEOM_BOX:
            out.append(Visual(body, pose, "box", {"size": 2 * s}, color, bname))
        elif t == G.mjGEOM_SPHERE:
            out.append(Visual(body, pose, "sphere", {"radius": s[0]}, color, bname))
        elif t == G.mjGEOM_CYLINDER:
            out.append(Visual(body, pose, "cylinder", {"radius": s[0], "length": 2 * s[1]}, color, bname))
        elif t == G.mjGEOM_CAPSULE:
            out.append(Visual(body, pose, "capsule", {"radius": s[0], "length": 2 * s[1]}, color, bname))
        elif t == G.mjGEOM_ELLIPSOID:
            out.append(Visual(body, pose, "ellipsoid", {"radii": s}, color, bname))
        elif t == G.mjGEOM_MESH:
            import trimesh

            m = int(mj.geom_dataid[g])
            v0, nv = int(mj.mesh_vertadr[m]), int(mj.mesh_vertnum[m])
            f0, nf = int(mj.mesh_faceadr[m]), int(mj.mesh_facenum[m])
            mesh = trimesh.Trimesh(np.array(mj.mesh_vert[v0:v0 + nv]), np.array(mj.mesh_face[f0:f0 + nf]),
                                   process=False)
            out.append(Visual(body, pose, "mesh", {"mesh": mesh}, color, bname))
    return out


def skeleton(model) -> list[Visual]:
    """Sticks from each body's origin to its children's joint origins (primitives for models
    with no visual description), plus a small sphere per joint."""
    out = []
    for i in range(1, model.nbodies + 1):
        out.append(Visual(i, _IDENT8.copy(), "sphere", {"radius": 0.025}, (0.3, 0.3, 0.35, 1.0),
                          model.body_names[i]))
        p = int(model.parent[i])
        X = np.array(model.joint_placement[i])
        from dqdyn.algebra.rotations import translation_of

        t = translation_of(X)
        L = float(np.linalg.norm(t))
        if p == 0 or L < 1e-9:
            continue
        z = np.array([0.0, 0.0, 1.0])
        d = t / L
        ax = np.cross(z, d)
        ang = np.arctan2(np.linalg.norm(ax), z @ d)
        from dqdyn.algebra.rotations import quat_from_axis_angle

        r = quat_from_axis_angle(ax if np.linalg.norm(ax) > 1e-12 else np.array([1.0, 0, 0]), ang)
        out.append(Visual(p, pose_from_rt(r, t / 2), "cylinder", {"radius": 0.012, "length": L},
                          (0.35, 0.35, 0.4, 1.0), model.body_names[p]))
    return out


def _local_points(v: Visual) -> np.ndarray:
    """Points of a shape in its own frame that bound it (a mesh's vertices, a primitive's box)."""
    if v.kind == "mesh":
        return np.asarray(v.params["mesh"].vertices, dtype=float).reshape(-1, 3)
    if v.kind == "box":
        h = 0.5 * np.asarray(v.params["size"], dtype=float)
    elif v.kind == "sphere":
        h = np.full(3, float(v.params["radius"]))
    elif v.kind in ("cylinder", "capsule"):
        r, L = float(v.params["radius"]), float(v.params["length"])
        h = np.array([r, r, 0.5 * L + (r if v.kind == "capsule" else 0.0)])
    elif v.kind == "ellipsoid":
        h = np.asarray(v.params["radii"], dtype=float)
    else:
        return np.zeros((0, 3))
    return h * np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], dtype=float)


def visual_points(model, visuals, q=None) -> np.ndarray:
    """World points (n, 3) bounding the shapes ``visuals`` of ``model`` at configuration ``q``
    (default neutral): every mesh vertex, and the corners of each primitive's box.  With no
    shapes (or only empty ones), the body origins."""
    from dqdyn.algebra.rotations import matrix_from_quat, translation_of
    from dqdyn.kinematics.forward import forward_kinematics, neutral

    X = forward_kinematics(model, neutral(model) if q is None else np.asarray(q, dtype=float))
    pts = []
    for v in visuals:
        p = _local_points(v)
        if len(p) == 0:
            continue
        x = _pose_mul(np.asarray(X[v.body], dtype=float), np.asarray(v.pose, dtype=float))
        pts.append(p @ matrix_from_quat(x[:4]).T + translation_of(x))
    pts = np.concatenate(pts) if pts else np.zeros((0, 3))
    pts = pts[np.all(np.isfinite(pts), axis=1)]
    return pts if len(pts) else np.asarray(translation_of(X), dtype=float).reshape(-1, 3)


__all__ = ["Visual", "inertia_box", "inertia_boxes", "resolve_uri", "locate_uri", "urdf_visuals", "mjcf_visuals",
           "skeleton", "visual_points"]
