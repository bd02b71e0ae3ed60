"""Loading robots from URDF files: `load_urdf`, and the URDFs bundled with dqdyn.

>>> from dqdyn.parsers.urdf import load_bundled
>>> model = load_bundled("two_link_arm")
>>> model.nq, model.joint_names
(2, ('shoulder', 'elbow'))

How a URDF maps onto a `Model`
--------------------------------------------------------------

* **Parsing.**  The document is read in one pass with ``lxml`` (`dqdyn.parsers._urdf_read`,
  the schema and defaults of ``urdf_parser_py`` / ``urdfdom``); only ``<link>`` (its
  ``<inertial>``) and ``<joint>`` are read: ``<visual>``, ``<collision>`` (meshes are never
  opened, ``package://`` URIs never resolved), ``<material>``, ``<transmission>``, ``<gazebo>``,
  ``<ros2_control>``, … are skipped unread, so the loader is at least as lenient as Pinocchio's
  C++ ``urdfdom`` about them.  Unknown tags inside links and joints (``<contact>``,
  ``<hardwareInterface>``, …) go to the ``logging`` logger ``"dqdyn.parsers.urdf"`` at DEBUG
  level; an element given twice (only the first one is used) is a `UserWarning`.  XML
  entities are not resolved and nothing is fetched from the network.  Loading time and memory
  are linear in the number of links (``benchmarks/bench_urdf_load.py``).

* **Prologue.**  ``<?xml version="0.0"?>`` (common in PyBullet's ``pybullet_data``) and blank
  lines before the XML declaration are accepted, as ``urdfdom`` (Pinocchio, ROS) and PyBullet do:
  the declaration is read as XML 1.0 (`dqdyn.parsers._urdf_xml`; line numbers in messages
  stay those of the file).

* **Errors.**  Anything malformed raises `URDFError` naming the file and
  the element: XML syntax errors (with the line), missing required attributes or elements,
  duplicate link/joint names, a joint naming an undefined link, a link with two parent joints,
  cycles, several root links, an unknown joint type, a zero joint axis, a negative mass, an
  inertia that is not positive semi-definite (with ``inertia_check="error"`` also one that
  violates the triangle inequality — reported by the builder), a ``<mimic>`` naming an undefined joint.  Malformed numbers name the element
  holding them (``link 'x' > inertial > mass: could not convert string to float: 'abc'``).

* **Order.**  Bodies are numbered depth-first from the root link, the children of a link taken
  in the *alphabetical order of their joint names*.  That is the order of ``urdfdom``'s tree, so
  the joint order (and hence the layout of ``q`` / ``v``) is the same as Pinocchio's
  ``buildModelFromUrdf`` and KDL's.  The one exception is a mimic joint whose master would come
  later: that joint's subtree is deferred until its master is placed (see *Mimic joints*).

* **Names.**  Bodies take their link names and joints their URDF joint names; every URDF link is
  also a named frame (a link attached by a ``fixed`` joint is merged into its parent body — its
  mass, CoM and inertia combined by the parallel-axis theorem — and survives as a frame).

* **Joint types.**  ``revolute`` → revolute, ``continuous`` → revolute with infinite position
  limits (nq = 1, the angle itself; Pinocchio uses nq = 2, ``(cos θ, sin θ)``), ``prismatic``
  → prismatic, ``fixed`` → merged, ``floating`` → free (nq = 8, a unit dual quaternion),
  ``planar`` → planar.  A URDF planar joint moves in the plane normal to its ``axis``; dqdyn's
  planar joint moves in the x–y plane of its joint frame, so only ``axis = (0, 0, 1)`` (or an
  absent axis) is accepted — any other axis raises `URDFError` (rotating the joint frame
  would silently change the child link frame).  The URDF default axis ``(1, 0, 0)`` applies to
  revolute / prismatic joints without ``<axis>``; axes are normalised.

* **Limits.**  ``<limit lower upper velocity effort>`` are recorded on the model
  (``q_lower``, ``q_upper``, ``velocity_limit``, ``effort_limit``); a missing ``<limit>`` or
  attribute gives an infinite bound, continuous joints always get infinite position bounds.
  ``lower > upper`` is read as *no position limit* (PyBullet's convention), with a
  `UserWarning`; Pinocchio keeps the two numbers as given.

* **Inertia.**  ``<inertial>`` gives the mass, the CoM (the ``xyz`` of its ``<origin>``) and the
  inertia about the CoM in the axes of that origin; it is rotated into the link axes,
  ``I_link = R I Rᵀ`` with ``R`` from the origin's ``rpy``.  The inertias of links attached by
  ``fixed`` joints are lumped here, into the body that carries them (the body frame is the child
  link frame of the body's joint, Pinocchio's joint frame), and the physical checks apply to the
  lumped *body*: a negative mass anywhere is an error; a non-positive-semi-definite tensor of a
  fixed part is accepted with a `UserWarning` when the lumped body is valid (real URDFs
  carry such round-off defects on tiny sensor links) and is an error otherwise, naming the link;
  a lumped body violating the triangle inequality is accepted with a `UserWarning` (by
  default, ``inertia_check="lenient"``; see `load_urdf`).  Links fixed to the world (a
  fixed-base root and what is fixed to it) are not checked (see *Root*).

* **Root.**  ``root_joint=None``: the root link is welded to the world (body 0); its inertia, and
  that of links fixed to it, cannot move: it is kept as ``Model.welded_inertia`` (Pinocchio's
  universe inertia ``model.inertias[0]``), outside ``total_mass`` (as Pinocchio's
  ``computeTotalMass``), and moves with the model when the model is mounted on a body
  (``ModelBuilder.add_model``, ``Assembly``, ``InterconnectionGraph``).  A welded inertia that is
  not positive semi-definite is kept with a `UserWarning`.  ``root_joint="free"``
  / ``"planar"``: the root link becomes body 1, moved by a free / planar joint named
  ``"root_joint"`` (planar: ``(x, y, φ)`` in the world x–y plane — a holonomic mobile base).  A
  root link literally named ``world`` is the world itself: with ``root_joint=None`` it is body 0;
  with a root joint, its single child attached by a ``fixed`` joint becomes the floating root
  body (the root joint's placement is that fixed joint's origin; Pinocchio instead floats the
  massless ``world`` link, which gives the same nq/nv and masses but a different body-1 frame).

* **Missing inertia.**  A link without ``<inertial>`` is massless.  That only matters when a
  joint that owns velocity entries moves a subtree that is entirely massless (its column of the
  joint-space inertia matrix is then zero: the matrix is singular); in that case one
  `UserWarning` is issued per such link without ``<inertial>``.  Massless links fixed to
  a massive body, massless intermediate bodies with massive descendants, and the fixed-base root
  link are silently accepted.

* **Mimic joints** (``<mimic joint= multiplier= offset=>``), by ``mimic=``:

  - ``"follow"`` (default): the joint follows ``multiplier·q_master + offset`` and owns no entry
    of ``q`` / ``v`` — as Pinocchio's ``buildModelFromUrdf(..., mimic=True)``.  A mimic of a
    mimic is resolved to the independent joint at the end of the chain (scales and offsets
    composed).  If the master comes later in the depth-first order, the mimic joint's subtree
    is placed right after the master (Pinocchio refuses such files).
  - ``"independent"``: the ``<mimic>`` tags are ignored (Pinocchio's default), with one
    `UserWarning` naming the joints.
  - ``"error"``: a `URDFError` naming the first mimic joint.

  A ``<mimic>`` on a fixed joint is ignored; on a floating / planar joint it is an error.

* ``package_dirs`` is accepted for API compatibility with other loaders and ignored: geometry
  is never read.
"""

from __future__ import annotations

import heapq
import logging
import math
import warnings
from collections.abc import Sequence
from importlib import resources
from pathlib import Path

import numpy as np

from dqdyn.errors import DqdynError, URDFError
from dqdyn.multibody.builders import CHECKED, ModelBuilder
from dqdyn.multibody.model import Model
from dqdyn.parsers._urdf_checks import warn_massless as _warn_massless
from dqdyn.parsers._urdf_read import parse as _parse_doc
from dqdyn.parsers._urdf_read import read_source as _read_source

log = logging.getLogger("dqdyn.parsers.urdf")

_ROOT_JOINT_NAME = "root_joint"
_MOVING = ("revolute", "continuous", "prismatic", "floating", "planar")
_ONE_DOF = ("revolute", "continuous", "prismatic")
_MIMIC_MODES = ("follow", "independent", "error")
_EYE4 = np.eye(4)  # (shared, read-only: a moving link's pose in its own body)
_EYE4.setflags(write=False)



# ------------------------------------------------------------------------------ validation
def _topology(robot, label: str):
    """Check names and the tree structure; return ``(root link, children map)``.

    ``children[link]`` lists the joints whose parent is ``link``, sorted by joint name.
    """
    links: dict[str, object] = {}
    for link in robot.links:
        if link.name in links:
            raise URDFError(f"URDF {label}: link {link.name!r} is defined twice")
        links[link.name] = link
    if not links:
        raise URDFError(f"URDF {label}: the robot has no <link>")
    joints: dict[str, object] = {}
    parent_of: dict[str, str] = {}
    children: dict[str, list] = {name: [] for name in links}
    for j in robot.joints:
        if j.name in joints:
            raise URDFError(f"URDF {label}: joint {j.name!r} is defined twice")
        joints[j.name] = j
        for role, ln in (("parent", j.parent), ("child", j.child)):
            if ln not in links:
                raise URDFError(f"URDF {label}: joint {j.name!r}: {role} link {ln!r} is not defined")
        if j.parent == j.child:
            raise URDFError(f"URDF {label}: joint {j.name!r}: link {j.child!r} is its own parent")
        if j.child in parent_of:
            raise URDFError(
                f"URDF {label}: link {j.child!r} has two parent joints, {parent_of[j.child]!r} "
                f"and {j.name!r} (a URDF must be a tree; close loops with constraints)"
            )
        parent_of[j.child] = j.name
        children[j.parent].append(j)
    for lst in children.values():
        lst.sort(key=lambda j: j.name)
    roots = [n for n in links if n not in parent_of]
    if not roots:
        raise URDFError(f"URDF {label}: no root link: the joints form a cycle")
    if len(roots) > 1:
        raise URDFError(
            f"URDF {label}: several root links {roots}: a URDF must be a single connected tree"
        )
    # reachability (a cycle detached from the root leaves links unreached)
    seen, stack = {roots[0]}, [roots[0]]
    while stack:
        for j in children[stack.pop()]:
            if j.child not in seen:
                seen.add(j.child)
                stack.append(j.child)
    lost = [n for n in links if n not in seen]
    if lost:
        raise URDFError(
            f"URDF {label}: links {lost} are not reachable from the root link {roots[0]!r}: "
            "their joints form a cycle"
        )
    for name in links:
        if name == "world" and name != roots[0]:
            raise URDFError(
                f"URDF {label}: link 'world' is not the root link; the name is reserved for "
                "the fixed world"
            )
    return roots[0], children, links, joints


def _pose(origin):
    if origin is None:
        return np.zeros(3), np.zeros(3)
    xyz = np.zeros(3) if origin.xyz is None else np.asarray(origin.xyz, dtype=float)
    rpy = np.zeros(3) if origin.rpy is None else np.asarray(origin.rpy, dtype=float)
    return xyz, rpy


def _rpy_matrix(rpy) -> np.ndarray:
    """``matrix_from_quat(quat_from_rpy(rpy))`` in plain floats (one link at a time, where
    numpy's per-call cost dominates); the same numbers."""
    r, p, y = (float(a) for a in rpy)
    if r == 0.0 and p == 0.0 and y == 0.0:
        return np.eye(3)
    from dqdyn.multibody.builders import _qm

    hr, hp, hy = 0.5 * r, 0.5 * p, 0.5 * y
    w, x, y, z = _qm(math.cos(hy), 0.0, 0.0, math.sin(hy),
                     *_qm(math.cos(hp), 0.0, math.sin(hp), 0.0, math.cos(hr), math.sin(hr), 0.0, 0.0))
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                     [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                     [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


def _link_inertia(link, label: str):
    """``(mass, com, inertia about the CoM in link axes, has <inertial>, inertia is PSD)``."""
    inl = link.inertial
    if inl is None:
        return 0.0, np.zeros(3), np.zeros((3, 3)), False, True
    m = float(inl.mass if inl.mass is not None else 0.0)
    if not np.isfinite(m) or m < 0:
        raise URDFError(f"URDF {label}: link {link.name!r}: mass must be finite and >= 0, got {m}")
    xyz, rpy = _pose(inl.origin)
    if not all(map(math.isfinite, xyz.tolist() + rpy.tolist())):
        raise URDFError(f"URDF {label}: link {link.name!r}: inertial origin contains NaN/inf")
    I = np.zeros((3, 3)) if inl.inertia is None else np.array(inl.inertia.to_matrix(), dtype=float)
    if not np.isfinite(I).all():
        raise URDFError(f"URDF {label}: link {link.name!r}: inertia contains NaN/inf")
    R = _rpy_matrix(rpy)
    Ir = R @ I @ R.T
    return m, xyz, 0.5 * (Ir + Ir.T), True, I  # (the PSD check: batched, in _psd_flags)


def _psd_flags(inert: dict) -> dict:
    """Replace the raw tensor (last entry) of each ``_link_inertia`` tuple by its PSD flag,
    all links' eigenvalues in one call."""
    names = [ln for ln, t in inert.items() if t[3]]
    if names:
        ev = np.linalg.eigvalsh(np.array([inert[ln][4] for ln in names]))
        ok = ev[:, 0] >= -1e-9 * np.maximum(1.0, np.abs(ev).max(axis=1))
        for ln, f in zip(names, ok.tolist()):
            inert[ln] = inert[ln][:4] + (f,)
    return inert


def _valid_bodies(body_inertia: dict) -> set:
    """Bodies whose inertia passes the builder's physical checks (positive semi-definite, the
    triangle inequality), all in one eigenvalue call: the builder re-checks only the others
    (and so gives their messages)."""
    names = list(body_inertia)
    if not names:
        return set()
    ev = np.linalg.eigvalsh(np.array([body_inertia[b]["inertia"] for b in names]))
    a, b, c = ev[:, 0], ev[:, 1], ev[:, 2]
    ok = (a >= -1e-9 * np.maximum(1.0, c)) & (a + b >= c - 1e-6 * np.maximum(1.0, c))
    return {n for n, f in zip(names, ok.tolist()) if f}


def _matrix(xyz, rpy) -> np.ndarray:
    T = np.eye(4)
    T[:3, :3] = _rpy_matrix(rpy)
    T[:3, 3] = xyz
    return T


def _combine(m1, c1, I1, m2, c2, I2):
    """Lumped (mass, CoM, CoM inertia) of two parts given in the same frame (parallel axis).

    Unlike a plain mass-weighted merge, massless parts keep their rotational inertia.
    """
    m = m1 + m2
    c = (m1 * c1 + m2 * c2) / m if m > 0 else np.zeros(3)
    out = np.zeros((3, 3))
    for mk, ck, Ik in ((m1, c1, I1), (m2, c2, I2)):
        d = ck - c
        out += Ik + mk * (d @ d * np.eye(3) - np.outer(d, d))
    return m, c, 0.5 * (out + out.T)


def _limits_of(j, label: str):
    try:
        lim = _limits(j)
    except URDFError as e:
        raise URDFError(f"URDF {label}: {e}") from None
    if lim["lower"] > lim["upper"]:
        # PyBullet reads lower > upper as "no limit"; Pinocchio keeps the numbers as given
        warnings.warn(
            f"URDF {label}: joint {j.name!r} > limit: lower={lim['lower']!r} > "
            f"upper={lim['upper']!r}; read as no position limit (PyBullet's convention)",
            UserWarning,
            stacklevel=3,
        )
        lim["lower"], lim["upper"] = -np.inf, np.inf
    return lim


def _limits(j):
    lim = j.limit
    lo, hi, vel, eff = -np.inf, np.inf, np.inf, np.inf
    if lim is not None:
        if j.type in ("revolute", "prismatic"):
            lo = -np.inf if lim.lower is None else float(lim.lower)
            hi = np.inf if lim.upper is None else float(lim.upper)
        vel = np.inf if lim.velocity is None else float(lim.velocity)
        eff = np.inf if lim.effort is None else float(lim.effort)
        if np.isnan(lo) or np.isnan(hi):
            raise URDFError(
                f"joint {j.name!r} > limit: lower and upper must be numbers, got "
                f"lower={lo!r}, upper={hi!r}"
            )
    return dict(lower=lo, upper=hi, velocity=vel, effort=eff)


def _resolve_mimics(joints: dict, mode: str, label: str) -> dict[str, tuple[str, float, float]]:
    """``{joint: (independent master, scale, offset)}`` for the moving mimic joints."""
    raw = {}
    if mode == "independent":
        tagged = sorted(n for n, j in joints.items() if j.mimic is not None and j.type != "fixed")
        if tagged:
            warnings.warn(
                f"URDF {label}: mimic joints {tagged} are treated as independent joints "
                "(mimic='independent'); use mimic='follow' to couple them to their masters",
                UserWarning,
                stacklevel=3,
            )
        return {}
    for name, j in joints.items():
        if j.mimic is None or j.type == "fixed":
            continue
        if j.type not in _ONE_DOF:
            raise URDFError(
                f"URDF {label}: joint {name!r}: a {j.type} joint cannot mimic another joint"
            )
        master = j.mimic.joint
        if master not in joints:
            raise URDFError(
                f"URDF {label}: joint {name!r} mimics joint {master!r}, which is not defined"
            )
        if joints[master].type not in _ONE_DOF:
            raise URDFError(
                f"URDF {label}: joint {name!r} mimics joint {master!r}, a {joints[master].type} "
                "joint; only revolute, continuous and prismatic joints can be mimicked"
            )
        scale = 1.0 if j.mimic.multiplier is None else float(j.mimic.multiplier)
        offset = 0.0 if j.mimic.offset is None else float(j.mimic.offset)
        if not (np.isfinite(scale) and np.isfinite(offset)):
            raise URDFError(
                f"URDF {label}: joint {name!r} > mimic: multiplier and offset must be finite "
                f"numbers, got multiplier={scale!r}, offset={offset!r}"
            )
        raw[name] = (master, scale, offset)
    if not raw:
        return {}
    if mode == "error":
        first = next(iter(raw))
        raise URDFError(
            f"URDF {label}: joint {first!r} mimics joint {raw[first][0]!r} and mimic='error' "
            "was requested (use mimic='follow' or 'independent')"
        )
    out = {}
    for name in raw:
        master, scale, offset = raw[name]
        chain = [name]
        while master in raw:  # mimic of a mimic: q = s1 (s2 q + o2) + o1
            if master in chain:
                raise URDFError(f"URDF {label}: mimic joints {chain} mimic each other in a loop")
            chain.append(master)
            m2, s2, o2 = raw[master]
            master, scale, offset = m2, scale * s2, scale * o2 + offset
        out[name] = (master, scale, offset)
    return out


def _order(root: str, children: dict, mimics: dict, label: str) -> list:
    """Joints in depth-first order (children by joint name), mimic joints after their masters."""
    rank: dict[str, int] = {}
    stack = [root]
    pre = []
    while stack:
        link = stack.pop()
        for j in reversed(children[link]):
            stack.append(j.child)
        pre.append(link)
    # preorder rank of each joint = rank of its child link
    link_rank = {ln: k for k, ln in enumerate(pre)}
    for lst in children.values():
        for j in lst:
            rank[j.name] = link_rank[j.child]
    placed_joints: set[str] = set()
    heap = [(rank[j.name], j.name, j) for j in children[root] if j.name not in mimics]
    waiting: dict[str, list] = {}  # master -> joints whose parent is placed, master not yet
    for j in children[root]:
        if j.name in mimics:
            waiting.setdefault(mimics[j.name][0], []).append(j)
    heapq.heapify(heap)
    order = []
    while heap:
        _, _, j = heapq.heappop(heap)
        order.append(j)
        placed_joints.add(j.name)
        ready = list(children[j.child]) + waiting.pop(j.name, [])
        for c in ready:
            if c.name in mimics and mimics[c.name][0] not in placed_joints:
                waiting.setdefault(mimics[c.name][0], []).append(c)
            else:
                heapq.heappush(heap, (rank[c.name], c.name, c))
    if waiting:
        stuck = sorted(c.name for lst in waiting.values() for c in lst)
        raise URDFError(
            f"URDF {label}: mimic joints {stuck} cannot be ordered after their masters "
            "(a master lies in the subtree of its own mimic joint)"
        )
    return order


# ----------------------------------------------------------------------------------- loading
def load_urdf(
    path_or_xml,
    root_joint: str | None = None,
    *,
    mimic: str = "follow",
    gravity: Sequence[float] = (0.0, 0.0, -9.81),
    package_dirs=None,
    name: str | None = None,
    inertia_check: str = "lenient",
) -> Model:
    """Build a `Model` from a URDF file path or XML string.

    ``inertia_check``: ``"lenient"`` (default) accepts, with a `UserWarning`, a body
    inertia that only breaks the triangle inequality (as Pinocchio and PyBullet do; the
    joint-space inertia matrix stays positive definite) and rejects one that is not positive
    semi-definite; ``"warn"`` accepts both with a warning, as Pinocchio does; ``"error"``
    rejects both; ``"off"`` checks neither.

    Parameters
    ----------
    path_or_xml:
        A file path (``str`` / `os.PathLike`) or the URDF document itself (a string or
        bytes starting with ``<``).
    root_joint:
        ``None`` (fixed base: the root link is welded to the world), ``"free"`` (a free joint
        ``"root_joint"`` moves the root link; nq += 8, nv += 6) or ``"planar"`` (a planar joint
        ``"root_joint"`` in the world x–y plane; nq = nv += 3).  ``"floating"`` / ``"fixed"``
        are accepted as aliases of ``"free"`` / ``None``.
    mimic:
        ``"follow"`` (mimic joints follow their master and own no q/v), ``"independent"`` (they
        are ordinary joints, with a warning) or ``"error"``.
    gravity:
        Gravity vector of the model, world frame.
    package_dirs:
        Ignored (geometry is never read); accepted for compatibility with other loaders.
    name:
        Model name; defaults to the ``<robot name>``.

    Raises
    ------
    URDFError
        On any malformed input; the message names the file and the offending element.

    See the module documentation for the conventions (order, fixed-link merging, continuous
    joints, inertial frames, root handling, missing inertias, mimic joints).
    """
    del package_dirs
    if root_joint not in (None, "free", "planar", "floating", "fixed"):
        raise URDFError(
            f"load_urdf: root_joint must be None, 'free' or 'planar', got {root_joint!r}"
        )
    root_joint = {"floating": "free", "fixed": None}.get(root_joint, root_joint)
    if mimic not in _MIMIC_MODES:
        raise URDFError(f"load_urdf: mimic must be one of {_MIMIC_MODES}, got {mimic!r}")
    data, label, default_name = _read_source(path_or_xml)
    robot = _parse_doc(data, label, default_name)
    root, children, links, joints = _topology(robot, label)
    for j in joints.values():
        if j.type not in _MOVING + ("fixed",):
            raise URDFError(f"URDF {label}: joint {j.name!r}: unsupported joint type {j.type!r}")
    mimics = _resolve_mimics(joints, mimic, label)
    order = _order(root, children, mimics, label)

    # -- root: which link is body 1 (or none), and which joint (if any) is absorbed into it
    skip_joint, base, base_xyz, base_rpy = None, None, None, None
    if root_joint is not None:
        jt = "free" if root_joint == "free" else "planar"
        if _ROOT_JOINT_NAME in joints:
            raise URDFError(
                f"URDF {label}: a joint is already named {_ROOT_JOINT_NAME!r}; cannot add the "
                f"{jt} root joint"
            )
        base = root
        if root == "world":
            kids = children["world"]
            if len(kids) != 1 or kids[0].type != "fixed":
                raise URDFError(
                    f"URDF {label}: the root link is 'world' (the fixed world); a {jt} root joint "
                    "needs it to have exactly one child attached by a fixed joint"
                )
            skip_joint = kids[0].name
            base = kids[0].child
            base_xyz, base_rpy = _pose(kids[0].origin)

    # -- lump the inertias of fixed links into the body that carries them (body frame = the
    #    child link frame of the body's joint); the physical checks apply to the lumped body
    inert = _psd_flags({ln: _link_inertia(links[ln], label) for ln in links})
    owner: dict[str, str | None] = {}  # link -> link name of its body (None: the world)
    in_body: dict[str, np.ndarray] = {}  # link -> 4x4 pose in its body frame
    lump: dict[str, list[str]] = {}  # body link -> links merged into it (itself first)
    if base is None:
        owner[root] = None
        in_body[root] = np.eye(4)
    else:
        owner[base] = base
        in_body[base] = np.eye(4)
        lump[base] = [base]
        if base != root:
            owner[root] = None
    for j in order:
        if j.name == skip_joint:
            continue
        if j.type == "fixed":
            o = owner[j.parent]
            owner[j.child] = o
            in_body[j.child] = in_body[j.parent] @ _matrix(*_pose(j.origin))
            if o is not None:
                lump[o].append(j.child)
        else:
            owner[j.child] = j.child
            in_body[j.child] = _EYE4
            lump[j.child] = [j.child]
    body_inertia = {}
    for body, members in lump.items():
        if len(members) == 1:  # (the body link alone, in its own frame)
            mk, ck, Ik, _, lumped_ok = inert[body]
            body_inertia[body] = dict(mass=mk, com=ck if mk > 0 else np.zeros(3), inertia=Ik)
            if lumped_ok or inertia_check in ("warn", "off"):
                continue
        m, c, I = 0.0, np.zeros(3), np.zeros((3, 3))
        for ln in members:
            mk, ck, Ik = inert[ln][:3]
            T = in_body[ln]
            R = T[:3, :3]
            m, c, I = _combine(m, c, I, mk, T[:3, 3] + R @ ck, R @ Ik @ R.T)
        ev = np.linalg.eigvalsh(I)
        lumped_ok = ev.min() >= -1e-9 * max(1.0, abs(ev).max())
        if not lumped_ok and inertia_check in ("warn", "off"):
            pass  # accepted: the builder warns (inertia_check="warn") or skips the check ("off")
        elif not lumped_ok:
            bad = [ln for ln in members if not inert[ln][4]]
            raise URDFError(
                f"URDF {label}: link {bad[0] if bad else body!r}: inertia is not positive "
                f"semi-definite (principal moments of body {body!r}: {ev}); pass "
                "inertia_check='warn' to accept it"
            )
        for ln in members:
            if not inert[ln][4] and lumped_ok and inertia_check != "off":
                warnings.warn(
                    f"URDF {label}: link {ln!r}: inertia is not positive semi-definite; accepted "
                    f"because the body it is fixed to, {body!r}, has a valid total inertia",
                    UserWarning,
                    stacklevel=2,
                )
        body_inertia[body] = dict(mass=m, com=c, inertia=I)

    # -- the links welded to the world (a fixed base): their lumped inertia is kept as the
    #    model's welded inertia (Pinocchio's universe inertia), which moves with the model when
    #    it is mounted on a body (ModelBuilder.add_model)
    welded = None
    if base is None:
        m, c, I = 0.0, np.zeros(3), np.zeros((3, 3))
        for ln, o in owner.items():
            if o is None and ln in in_body:
                mk, ck, Ik = inert[ln][:3]
                T = in_body[ln]
                R = T[:3, :3]
                m, c, I = _combine(m, c, I, mk, T[:3, 3] + R @ ck, R @ Ik @ R.T)
        if m > 0 or np.any(I):
            welded = (m, c, I)
            ev = np.linalg.eigvalsh(I)
            if ev.min() < -1e-9 * max(1.0, abs(ev).max()) and inertia_check != "off":
                warnings.warn(
                    f"URDF {label}: the links welded to the world ({root!r} and the links fixed "
                    f"to it) have an inertia that is not positive semi-definite (principal "
                    f"moments {ev}); kept as the model's welded inertia",
                    UserWarning,
                    stacklevel=2,
                )

    # -- build
    b = ModelBuilder(name or robot.name or default_name, gravity=gravity, inertia_check=inertia_check)
    if base is None:
        if root != "world":
            b.add_body(root, "world", "fixed", joint_name=_unique(_ROOT_JOINT_NAME, joints))
        if welded is not None:
            b._attach(0, np.array([1.0, 0, 0, 0, 0, 0, 0, 0]), *welded)
    else:
        try:
            b.add_body(base, "world", jt, joint_name=_ROOT_JOINT_NAME, xyz=base_xyz,
                       rpy=base_rpy, **body_inertia[base])
        except DqdynError as e:
            raise URDFError(f"URDF {label}: root link {base!r}: {e}") from None

    # bodies that pass the physical checks (one batched eigenvalue call) are not re-checked
    # one by one in the builder; the others are, so its messages are the usual ones
    valid = _valid_bodies(body_inertia) if inertia_check != "off" else set()
    for j in order:
        if j.name == skip_joint:
            continue
        xyz, rpy = (None, None) if j.origin is None else (j.origin.xyz, j.origin.rpy)
        if j.type == "fixed":
            kw = dict(joint="fixed")
        else:
            axis = (1.0, 0.0, 0.0) if j.axis is None else tuple(float(a) for a in j.axis)
            finite = all(map(math.isfinite, axis))
            if j.type in _ONE_DOF and (not finite or math.hypot(*axis) < 1e-12):
                what = "is not finite" if not finite else "is zero"
                raise URDFError(f"URDF {label}: joint {j.name!r}: axis {list(axis)} {what}")
            axis = np.array(axis)
            if j.type == "planar" and j.axis is not None:
                n = np.linalg.norm(axis)
                if n < 1e-12 or not np.allclose(axis / n, [0.0, 0.0, 1.0], atol=1e-9):
                    raise URDFError(
                        f"URDF {label}: joint {j.name!r}: planar joints must have axis (0 0 1) "
                        f"(the plane normal), got {list(axis)}; rotate the joint <origin> instead"
                    )
            kw = dict(
                joint={"continuous": "revolute", "floating": "free"}.get(j.type, j.type),
                axis=axis,
                **_limits_of(j, label),
                **body_inertia[j.child],
            )
            if j.name in mimics:
                kw["mimic"] = mimics[j.name]
        b.inertia_check = CHECKED if j.child in valid else inertia_check
        try:
            b.add_body(j.child, j.parent, joint_name=j.name, xyz=xyz, rpy=rpy, **kw)
        except DqdynError as e:
            raise URDFError(f"URDF {label}: joint {j.name!r} (link {j.child!r}): {e}") from None
    b.inertia_check = inertia_check

    model = b.build()
    has_inertial = {ln: inert[ln][3] for ln in links}
    _warn_massless(model, lump, has_inertial, label)
    return model


def _unique(base: str, taken) -> str:
    name, k = base, 1
    while name in taken:
        name, k = f"{base}_{k}", k + 1
    return name


# ---------------------------------------------------------------------------- bundled models
def bundled_models() -> list[str]:
    """Names (without ``.urdf``) of the URDF models shipped in ``dqdyn/data``."""
    d = resources.files("dqdyn") / "data"
    return sorted(p.name[:-5] for p in d.iterdir() if p.name.endswith(".urdf"))


def bundled(name: str) -> Path:
    """Path of a URDF shipped with dqdyn (``"two_link_arm"``, ``"diff_drive_manipulator"``,
    ``"branched"``; the ``.urdf`` suffix is optional).

    The package data lives on the file system for regular and editable installs; the returned
    `Path` can be opened directly.
    """
    fname = name if name.endswith(".urdf") else f"{name}.urdf"
    res = resources.files("dqdyn") / "data" / fname
    if not res.is_file():
        raise URDFError(f"no bundled model {name!r}; available: {bundled_models()}")
    return Path(str(res))


def load_bundled(name: str, **kwargs) -> Model:
    """`load_urdf` of a bundled model; ``kwargs`` are passed on (``root_joint``, …).

    >>> load_bundled("diff_drive_manipulator", root_joint="planar").nv
    11
    """
    return load_urdf(bundled(name), **kwargs)


__all__ = ["load_urdf", "bundled", "load_bundled", "bundled_models"]
