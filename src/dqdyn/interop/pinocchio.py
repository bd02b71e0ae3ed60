"""Bridge to Pinocchio: models both ways, and q / v / a / τ / M / Jacobian conversions.

``pinocchio`` (PyPI ``pin``) is imported on first use; ``import dqdyn.interop`` never needs it.

Layout differences (README "Conventions"):

* continuous joints: Pinocchio nq = 2 (cos θ, sin θ), dqdyn nq = 1 (θ);
* free joint: Pinocchio q = [p, quat xyzw], v = [v^b, ω^b]; dqdyn q = unit DQ (vec8), v = [ω^b, v^b];
* spherical: Pinocchio q = quat xyzw; dqdyn q = quat wxyz (same v: body angular velocity);
* planar: Pinocchio q = [x, y, cos φ, sin φ], v = [R(φ)ᵀ(ẋ, ẏ), φ̇]; dqdyn q = (x, y, φ), v = q̇;
* cylindrical: a Pinocchio composite joint (revolute then prismatic on the same axis);
* twists / Jacobian rows: Pinocchio [v; ω], dqdyn [ω; v]; wrenches: both [f; τ].

The velocity map ``v_pin = T(q) v`` is orthogonal (a permutation for the free joint, a rotation for
the planar one), so ``v = Tᵀ v_pin``, ``J = J_pin T`` (rows reordered), ``τ = Tᵀ τ_pin``,
``a_pin = T a + Ṫ v`` and ``M = Tᵀ M_pin T``.

>>> pm = to_pinocchio(model)                       # doctest: +SKIP
>>> back = from_pinocchio(pm)                      # doctest: +SKIP
>>> qp = q_to_pin(model, pm, q); vp = v_to_pin(model, pm, q, v)   # doctest: +SKIP
>>> qp = q_to_pin(model, q=q)                      # doctest: +SKIP
>>> s = to_pinocchio(model, q=q, v=v)              # doctest: +SKIP

Argument order of the conversions: the dqdyn ``model`` first, the ``pinocchio.Model`` ``pm``
second, then the state in the order ``q, v, a`` (as ``pinocchio.rnea(model, data, q, v, a)``),
the quantity converted last (``tau_to_pin(model, pm, q, tau)``).  Every argument accepts its
keyword, and ``pm`` may be left out (``q_to_pin(model, q=q)``): the conversion is then for the
Pinocchio model that `to_pinocchio` ``(model)`` builds (same joint order).  A misplaced argument
(``q_to_pin(model, q)``: ``q`` where ``pm`` goes) raises `ShapeError` giving the order.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from dqdyn.algebra.rotations import matrix_from_pose, pose_from_rt, translation_of
from dqdyn.errors import ModelError, ShapeError
from dqdyn.multibody.builders import ModelBuilder
from dqdyn.multibody.joints import CYLINDRICAL, FREE, HELICAL, PLANAR, PRISMATIC, REVOLUTE, SPHERICAL
from dqdyn.multibody.model import Model

_IDENT8 = np.array([1.0, 0, 0, 0, 0, 0, 0, 0])


def _pin():
    try:
        import pinocchio
    except ImportError as e:
        raise ImportError("dqdyn.interop.pinocchio needs Pinocchio: pip install pin "
                          "(or the 'interop' extra: pip install 'dqdyn[interop]')") from e
    return pinocchio


def _se3(x8):
    pin = _pin()
    T = matrix_from_pose(x8)
    return pin.SE3(T[:3, :3].copy(), T[:3, 3].copy())


def _pose(M) -> np.ndarray:
    """vec8 of a ``pin.SE3`` (scalar part ≥ 0, as the matrix → quaternion map gives)."""
    from dqdyn.algebra.rotations import pose_from_matrix

    return pose_from_matrix(np.asarray(M.homogeneous, dtype=float))


def _depth_first(model: Model) -> list[int]:
    children = {i: [] for i in range(model.nbodies + 1)}
    for i in range(1, model.nbodies + 1):
        children[int(model.parent[i])].append(i)
    order, stack = [], list(reversed(children[0]))
    while stack:
        i = stack.pop()
        order.append(i)
        stack.extend(reversed(children[i]))
    return order


class PinocchioState(NamedTuple):
    """`to_pinocchio` ``(model, q=…, v=…, a=…, tau=…)``: the Pinocchio model, a ``Data`` for it
    and the state in Pinocchio's coordinates, ready for ``pinocchio.rnea(s.model, s.data, s.q,
    s.v, s.a)``."""

    #: the ``pinocchio.Model`` (as `to_pinocchio` returns it)
    model: Any
    #: ``model.createData()``
    data: Any
    #: Pinocchio's configuration of dqdyn's ``q`` (`q_to_pin`)
    q: np.ndarray
    #: Pinocchio's velocity (`v_to_pin`), or ``None`` when ``v`` was not given
    v: np.ndarray | None
    #: Pinocchio's acceleration (`a_to_pin`: ``T a + Ṫ v``), or ``None``
    a: np.ndarray | None
    #: Pinocchio's generalized force (`tau_to_pin`), or ``None``
    tau: np.ndarray | None
    #: ``{dqdyn body index: pin joint id}``
    ids: dict


def to_pinocchio(model: Model, *, q=None, v=None, a=None, tau=None, frames: bool = True,
                 return_ids: bool = False):
    """A ``pinocchio.Model`` of ``model``: the same tree, placements, inertias, gravity, limits.

    ``to_pinocchio(model)`` returns the ``pinocchio.Model``; every other argument is a keyword.
    Joints are added depth-first (Pinocchio needs each subtree contiguous in v; dqdyn only parents
    before children) and keep their names.  With ``frames`` every dqdyn frame becomes a Pinocchio
    frame (bodies as ``BODY`` frames, the others as ``OP_FRAME``).  ``return_ids=True`` returns
    ``(pin_model, {dqdyn body index: pin joint id})``.  Mimic joints raise `ModelError`
    (load with ``mimic="independent"``).  The joint armature (`Model.armature`) becomes
    ``pin_model.armature`` (a free joint's six values reordered to Pinocchio's ``[v, ω]``).

    With a state — ``q`` and optionally ``v``, ``a`` (which needs ``v``) and ``tau``, dqdyn's —
    it returns a `PinocchioState` ``(model, data, q, v, a, tau, ids)`` with the state converted
    (`q_to_pin`, `v_to_pin`, `a_to_pin`, `tau_to_pin`):

    >>> s = to_pinocchio(model, q=q, v=v, a=a)                       # doctest: +SKIP
    >>> tau_pin = pinocchio.rnea(s.model, s.data, s.q, s.v, s.a)     # doctest: +SKIP
    """
    if q is None and any(x is not None for x in (v, a, tau)):
        raise ShapeError("to_pinocchio: v, a and tau are converted at a configuration: give q too "
                         "(to_pinocchio(model, q=q, v=v, ...))")
    if a is not None and v is None:
        raise ShapeError("to_pinocchio: a is converted with v (a_pin = T a + Ṫ v): give v too")
    if q is not None:
        pm, ids = to_pinocchio(model, frames=frames, return_ids=True)
        return PinocchioState(
            pm, pm.createData(), q_to_pin(model, pm, q),
            None if v is None else v_to_pin(model, pm, q, v),
            None if a is None else a_to_pin(model, pm, q, v, a),
            None if tau is None else tau_to_pin(model, pm, q, tau), ids)
    pin = _pin()
    pm = pin.Model()
    pm.name = model.name
    pm.gravity = pin.Motion(np.r_[model.gravity, 0, 0, 0])
    ids = {0: 0}
    for i in _depth_first(model):
        jt = int(model.joint_type[i])
        ax = np.array(model.joint_axis[i])
        if model.joint_nv[i] == 0:
            raise ModelError(f"to_pinocchio: joint {model.joint_names_all[i]!r} is a mimic joint; "
                             "mimic joints are not mirrored (load with mimic='independent')")
        if jt == REVOLUTE:
            j = pin.JointModelRevoluteUnaligned(ax)
        elif jt == PRISMATIC:
            j = pin.JointModelPrismaticUnaligned(ax)
        elif jt == HELICAL:
            j = pin.JointModelHelicalUnaligned(ax, float(model.joint_pitch[i]))
        elif jt == CYLINDRICAL:
            j = pin.JointModelComposite(2)
            j.addJoint(pin.JointModelRevoluteUnaligned(ax))
            j.addJoint(pin.JointModelPrismaticUnaligned(ax))
        elif jt == PLANAR:
            j = pin.JointModelPlanar()
        elif jt == SPHERICAL:
            j = pin.JointModelSpherical()
        elif jt == FREE:
            j = pin.JointModelFreeFlyer()
        else:  # pragma: no cover - fixed joints are merged by the builder
            raise ModelError(f"to_pinocchio: joint type {jt} has no Pinocchio counterpart")
        kw = {}
        if frames and model.joint_nq[i] == 1:
            iq, iv = int(model.idx_q[i]), int(model.idx_v[i])
            kw = dict(max_effort=np.array([model.effort_limit[iv]]),
                      max_velocity=np.array([model.velocity_limit[iv]]),
                      min_config=np.array([model.q_lower[iq]]),
                      max_config=np.array([model.q_upper[iq]]))
        if kw:
            jid = pm.addJoint(ids[int(model.parent[i])], j, _se3(model.joint_placement[i]),
                              model.joint_names_all[i], kw["max_effort"], kw["max_velocity"],
                              kw["min_config"], kw["max_config"])
        else:
            jid = pm.addJoint(ids[int(model.parent[i])], j, _se3(model.joint_placement[i]),
                              model.joint_names_all[i])
        pm.appendBodyToJoint(jid, pin.Inertia(float(model.mass[i]), np.array(model.com[i]),
                                              np.array(model.inertia[i])), pin.SE3.Identity())
        ids[i] = jid
    arm = np.zeros(pm.nv)
    for i in range(1, model.nbodies + 1):
        a = _armature_to_pin(model, i)
        if a is not None:
            pv = pm.joints[ids[i]].idx_v
            arm[pv:pv + len(a)] = a
    pm.armature = arm
    if frames:
        for name, b, pl in zip(model.frame_names, model.frame_body, model.frame_placement):
            b = int(b)
            if name == "world" and b == 0:
                continue
            is_body = b > 0 and model.body_names[b] == name and np.array_equal(pl, _IDENT8)
            ftype = pin.FrameType.BODY if is_body else pin.FrameType.OP_FRAME
            pm.addFrame(pin.Frame(name, ids[b], _se3(pl), ftype))
    return (pm, ids) if return_ids else pm


def _armature_to_pin(model: Model, i: int):
    """Body ``i``'s joint armature in Pinocchio's velocity order, ``None`` without DoFs.
    Pinocchio's planar velocity is in the body axes, dqdyn's ``ẋ, ẏ`` in the parent's: the same
    diagonal only when the two translational values are equal (else `ModelError`)."""
    n = int(model.joint_nv[i])
    if n == 0:
        return None
    iv = int(model.idx_v[i])
    a = np.array(model.armature[iv:iv + n])
    jt = int(model.joint_type[i])
    if jt == FREE:
        return np.r_[a[3:6], a[0:3]]
    if jt == PLANAR and a[0] != a[1]:
        raise ModelError(f"joint {model.joint_names_all[i]!r}: a planar joint's armature must be "
                         f"equal on x and y to be mirrored in Pinocchio (its planar velocity is "
                         f"in the body axes), got {a.tolist()}")
    return a


def pin_from_model(model: Model):
    """``(pin_model, ids)``: `to_pinocchio` without frames (the tests' historical form)."""
    return to_pinocchio(model, frames=False, return_ids=True)


def pin_from_urdf(path: str, root: str | None = None):
    """Pinocchio's own URDF parser with dqdyn's ``root_joint`` choices (None, "free", "planar")."""
    pin = _pin()
    if root == "free":
        return pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer(), mimic=True)
    if root == "planar":
        return pin.buildModelFromUrdf(path, pin.JointModelPlanar(), mimic=True)
    return pin.buildModelFromUrdf(path, mimic=True)


_AXES = {"X": (1.0, 0.0, 0.0), "Y": (0.0, 1.0, 0.0), "Z": (0.0, 0.0, 1.0)}


def _joint_kind(jm):
    """(dqdyn type name, axis, pitch) of a Pinocchio joint model, or None."""
    short = jm.shortname()
    jx = jm.extract() if hasattr(jm, "extract") else jm
    name = short[len("JointModel"):]
    ax = getattr(jx, "axis", None)
    for prefix, kind in (("RUB", "revolute"), ("R", "revolute"), ("P", "prismatic"), ("H", "helical")):
        if name.startswith(prefix) and name[len(prefix):] in _AXES:
            return kind, np.array(_AXES[name[len(prefix):]]), float(getattr(jx, "pitch", 0.0))
    if name in ("RevoluteUnaligned", "RevoluteUnboundedUnaligned"):
        return "revolute", np.array(ax, dtype=float), 0.0
    if name == "PrismaticUnaligned":
        return "prismatic", np.array(ax, dtype=float), 0.0
    if name == "HelicalUnaligned":
        return "helical", np.array(ax, dtype=float), float(jx.pitch)
    if name == "Spherical":
        return "spherical", np.zeros(3), 0.0
    if name == "FreeFlyer":
        return "free", np.zeros(3), 0.0
    if name == "Planar":
        return "planar", np.zeros(3), 0.0
    if name == "Composite" and len(jx.joints) == 2:
        a, b = _joint_kind(jx.joints[0]), _joint_kind(jx.joints[1])
        if (a and b and a[0] == "revolute" and b[0] == "prismatic" and np.allclose(a[1], b[1])
                and all(jx.jointPlacements[k].isIdentity() for k in range(2))):
            return "cylindrical", a[1], 0.0
    return None


def _mimic_kind(pm, jid, master):
    """(kind, (master name, scale, offset)) of a Pinocchio mimic joint: its motion is probed from
    ``liMi`` at a configuration where the mimic's own value is 1 (its axis is not exposed)."""
    pin = _pin()
    jx = pm.joints[jid].extract()
    s, o = float(jx.scaling), float(jx.offset)
    mj = pm.joints[master]
    kind_m = _joint_kind(mj)
    if s == 0 or kind_m is None or kind_m[0] not in ("revolute", "prismatic") or mj.nq != 1:
        return None, None
    qp = pin.neutral(pm)
    qp[mj.idx_q] = (1.0 - o) / s
    pd = pm.createData()
    pin.forwardKinematics(pm, pd, qp)
    M = pm.jointPlacements[jid].inverse() * pd.liMi[jid]
    w = pin.log3(M.rotation)
    if np.linalg.norm(w) > 1e-9 and np.linalg.norm(M.translation) < 1e-12:
        return ("revolute", w / np.linalg.norm(w), 0.0), (pm.names[master], s, o)
    if np.linalg.norm(w) < 1e-12 and np.linalg.norm(M.translation) > 1e-9:
        t = np.asarray(M.translation, dtype=float)
        return ("prismatic", t / np.linalg.norm(t), 0.0), (pm.names[master], s, o)
    return None, None


def from_pinocchio(pm, *, name: str | None = None) -> Model:
    """A dqdyn `Model` of a ``pinocchio.Model``.

    Each Pinocchio joint becomes a body named after the ``BODY`` frame attached to it at the
    identity (its URDF link), or ``"<joint>_body"``; the joint keeps its name.  Revolute (also
    unbounded — nq 1 here), prismatic, helical, spherical, free, planar joints and a composite
    revolute + prismatic joint on one axis (cylindrical) are supported; any other (spherical ZYX,
    translation, mimic, …) raises `ModelError` naming it.  Position limits (finite ones),
    velocity and effort limits and the joint armature (``pm.armature``) are copied; frames become named frames (``universe`` is
    ``world``).
    """
    pin = _pin()
    b = ModelBuilder(name or pm.name or "pinocchio", gravity=np.array(pm.gravity.linear, dtype=float),
                     inertia_check="warn")
    body_of = {0: "world"}
    names = {}
    for f in pm.frames:
        if f.type == pin.FrameType.BODY and f.parentJoint > 0 and f.placement.isIdentity():
            names.setdefault(int(f.parentJoint), f.name)
    mimic_of = dict(zip(map(int, getattr(pm, "mimicking_joints", [])),
                        map(int, getattr(pm, "mimicked_joints", []))))
    for jid in range(1, pm.njoints):
        jm = pm.joints[jid]
        jname = pm.names[jid]
        mimic = None
        if jm.shortname() == "JointModelMimic" and jid in mimic_of:
            kind, mimic = _mimic_kind(pm, jid, mimic_of[jid])
        else:
            kind = _joint_kind(jm)
        if kind is None:
            raise ModelError(f"from_pinocchio: joint {jname!r} of kind {jm.shortname()!r} has no "
                             "dqdyn counterpart")
        jt, ax, pitch = kind
        In = pm.inertias[jid]
        kw = {}
        if jt in ("revolute", "prismatic", "helical"):
            iq, iv = jm.idx_q, jm.idx_v
            unbounded = jm.nq == 2
            lo = -np.inf if unbounded else float(pm.lowerPositionLimit[iq])
            hi = np.inf if unbounded else float(pm.upperPositionLimit[iq])
            kw = dict(lower=lo, upper=hi, velocity=float(pm.velocityLimit[iv]),
                      effort=float(pm.effortLimit[iv]))
        if mimic is not None:
            kw = dict(mimic=mimic)
        elif jm.nv > 0 and hasattr(pm, "armature"):
            arm = np.array(pm.armature[jm.idx_v:jm.idx_v + jm.nv], dtype=float)
            if jt == "free":
                arm = np.r_[arm[3:6], arm[0:3]]
            elif jt == "planar" and arm[0] != arm[1]:
                raise ModelError(f"from_pinocchio: joint {jname!r}: a planar joint's armature "
                                 f"must be equal on x and y (dqdyn's planar velocity is in the "
                                 f"parent's axes), got {arm.tolist()}")
            kw["armature"] = arm
        bname = names.get(jid, f"{jname}_body")
        b.add_body(bname, body_of[int(pm.parents[jid])], jt, joint_name=jname,
                   axis=ax if np.linalg.norm(ax) > 0 else (0, 0, 1), pitch=pitch,
                   placement=_pose(pm.jointPlacements[jid]), mass=float(In.mass),
                   com=np.array(In.lever, dtype=float), inertia=np.array(In.inertia, dtype=float), **kw)
        body_of[jid] = bname
    taken = set(body_of.values())
    for f in pm.frames:
        if f.name in taken or f.name == "universe":
            continue
        taken.add(f.name)
        b.add_frame(f.name, body_of[int(f.parentJoint)], _pose(f.placement))
    return b.build()


def _default_pin(model: Model):
    """The Pinocchio model `to_pinocchio` builds of ``model`` (no frames: only its joint layout
    is read), built once per model."""
    pm = model._index.get("pinocchio")
    if pm is None:
        pm = model._index["pinocchio"] = to_pinocchio(model, frames=False)
    return pm


def _resolve(fn, model, pm, **required):
    """The Pinocchio model of a conversion ``fn`` (``pm``, or `to_pinocchio`'s of ``model`` when
    ``None``), after checking the arguments: errors name the argument and ``fn``'s order."""
    pin = _pin()
    if not isinstance(model, Model):
        raise ModelError(f"{fn.__name__}: model must be a dqdyn.Model (the first argument; "
                         f"{_order(fn)}), got {type(model).__name__} {model!r:.60}")
    if pm is None:
        pm = _default_pin(model)
    elif not isinstance(pm, pin.Model):
        kw = ", ".join(f"{k}=…" for k in required)
        raise ShapeError(f"{fn.__name__}: pm (the second argument) must be a pinocchio.Model, got "
                         f"{type(pm).__name__}; the order is {_order(fn)} — pass the state by "
                         f"keyword to convert for to_pinocchio(model)'s model: "
                         f"{fn.__name__}(model, {kw})")
    for k, x in required.items():
        if x is None:
            raise ShapeError(f"{fn.__name__}: {k} is missing; the order is {_order(fn)}")
    return pm


def _order(fn) -> str:
    import inspect

    return f"{fn.__name__}({', '.join(inspect.signature(fn).parameters)})"


def joint_map(model: Model, pm=None):
    """For each dqdyn joint owning velocity entries: (type, iq, iv, pin idx_q, pin idx_v, pin nq).

    Arguments, in order (all accept keywords): ``model`` (dqdyn), ``pm`` (the
    ``pinocchio.Model``; default: `to_pinocchio` ``(model)``'s).  Joints are matched by name (a
    dqdyn ``root_joint`` missing from ``pm`` is Pinocchio's joint 1, the root joint given to
    ``buildModelFromUrdf``)."""
    pm = _resolve(joint_map, model, pm)
    out = []
    for i in range(1, model.nbodies + 1):
        if model.joint_nv[i] == 0:
            continue
        name = model.joint_names_all[i]
        if name == "root_joint" and not pm.existJointName(name):
            jid = 1
        else:
            jid = pm.getJointId(name)
            if jid >= pm.njoints:
                raise ModelError(f"joint_map: Pinocchio model has no joint named {name!r}")
        out.append((int(model.joint_type[i]), int(model.idx_q[i]), int(model.idx_v[i]),
                    pm.joints[jid].idx_q, pm.joints[jid].idx_v, pm.joints[jid].nq))
    return out


def _vec(x, n, what):
    x = np.asarray(x, dtype=float)
    if x.shape != (n,):
        raise ShapeError(f"{what} must have shape ({n},), got {x.shape}")
    return x


# The conversions all take (model, pm, <state>...): the dqdyn model first, the Pinocchio model
# second (optional: None, or left out by passing the state by keyword, means to_pinocchio(model)'s
# model), then the state in the order q, v, a (as pinocchio.rnea(model, data, q, v, a)).


def q_to_pin(model: Model, pm=None, q=None) -> np.ndarray:
    """Pinocchio's configuration of dqdyn's ``q``.

    Arguments, in order (all accept keywords): ``model`` (the dqdyn `Model`), ``pm`` (the
    ``pinocchio.Model``; default ``None``: the one `to_pinocchio` ``(model)`` builds, the same joint
    order), then ``q`` (dqdyn's configuration, (nq,)).  ``q_to_pin(model, q=q)`` converts for
    `to_pinocchio`'s model.
    """
    pin = _pin()
    pm = _resolve(q_to_pin, model, pm, q=q)
    q = _vec(q, model.nq, "q")
    qp = pin.neutral(pm)
    for jt, iq, _iv, pq, _pv, pnq in joint_map(model, pm):
        if jt in (REVOLUTE, PRISMATIC, HELICAL):
            if pnq == 2:
                qp[pq : pq + 2] = np.cos(q[iq]), np.sin(q[iq])
            else:
                qp[pq] = q[iq]
        elif jt == CYLINDRICAL:
            qp[pq : pq + 2] = q[iq : iq + 2]
        elif jt == PLANAR:
            qp[pq : pq + 4] = q[iq], q[iq + 1], np.cos(q[iq + 2]), np.sin(q[iq + 2])
        elif jt == SPHERICAL:
            w, x, y, z = q[iq : iq + 4]
            qp[pq : pq + 4] = x, y, z, w
        elif jt == FREE:
            x8 = q[iq : iq + 8]
            qp[pq : pq + 3] = translation_of(x8)
            w, x, y, z = x8[:4]
            qp[pq + 3 : pq + 7] = x, y, z, w
    return qp


def q_from_pin(model: Model, pm=None, q_pin=None) -> np.ndarray:
    """dqdyn's ``q`` of Pinocchio's configuration (the quaternions' signs are kept).

    Arguments, in order (all accept keywords): ``model`` (the dqdyn `Model`), ``pm`` (the
    ``pinocchio.Model``; default ``None``: the one `to_pinocchio` ``(model)`` builds, the same joint
    order), then ``q_pin`` (Pinocchio's configuration, (pm.nq,)).  ``q_from_pin(model,
    q_pin=q_pin)`` converts for `to_pinocchio`'s model.
    """
    pm = _resolve(q_from_pin, model, pm, q_pin=q_pin)
    qp = _vec(q_pin, pm.nq, "q_pin")
    q = np.zeros(model.nq)
    for jt, iq, _iv, pq, _pv, pnq in joint_map(model, pm):
        if jt in (REVOLUTE, PRISMATIC, HELICAL):
            q[iq] = np.arctan2(qp[pq + 1], qp[pq]) if pnq == 2 else qp[pq]
        elif jt == CYLINDRICAL:
            q[iq : iq + 2] = qp[pq : pq + 2]
        elif jt == PLANAR:
            q[iq : iq + 3] = qp[pq], qp[pq + 1], np.arctan2(qp[pq + 3], qp[pq + 2])
        elif jt == SPHERICAL:
            x, y, z, w = qp[pq : pq + 4]
            q[iq : iq + 4] = w, x, y, z
        elif jt == FREE:
            x, y, z, w = qp[pq + 3 : pq + 7]
            q[iq : iq + 8] = pose_from_rt(np.array([w, x, y, z]), qp[pq : pq + 3])
    return q


def v_transform(model: Model, pm=None, q=None) -> np.ndarray:
    """``T(q)`` (pin nv × nv) with ``v_pin = T v``; T is orthogonal.

    Arguments, in order (all accept keywords): ``model`` (the dqdyn `Model`), ``pm`` (the
    ``pinocchio.Model``; default ``None``: the one `to_pinocchio` ``(model)`` builds, the same joint
    order), then ``q`` (dqdyn's, (nq,)).  ``v_transform(model, q=q)`` converts for `to_pinocchio`'s
    model.
    """
    pm = _resolve(v_transform, model, pm, q=q)
    q = _vec(q, model.nq, "q")
    T = np.zeros((pm.nv, model.nv))
    for jt, iq, iv, _pq, pv, _pnq in joint_map(model, pm):
        if jt == PLANAR:
            c, s = np.cos(q[iq + 2]), np.sin(q[iq + 2])
            T[pv : pv + 2, iv : iv + 2] = [[c, s], [-s, c]]
            T[pv + 2, iv + 2] = 1.0
        elif jt == FREE:
            T[pv : pv + 3, iv + 3 : iv + 6] = np.eye(3)
            T[pv + 3 : pv + 6, iv : iv + 3] = np.eye(3)
        else:
            n = {REVOLUTE: 1, PRISMATIC: 1, HELICAL: 1, CYLINDRICAL: 2, SPHERICAL: 3}[jt]
            T[pv : pv + n, iv : iv + n] = np.eye(n)
    return T


def tdot_matrix(model: Model, pm=None, q=None, v=None) -> np.ndarray:
    """``Ṫ(q, v)`` (only planar joints contribute: their block turns with φ).

    Arguments, in order (all accept keywords): ``model`` (the dqdyn `Model`), ``pm`` (the
    ``pinocchio.Model``; default ``None``: the one `to_pinocchio` ``(model)`` builds, the same joint
    order), then ``q``, ``v`` (dqdyn's).  ``tdot_matrix(model, q=q, v=v)`` converts for
    `to_pinocchio`'s model.
    """
    pm = _resolve(tdot_matrix, model, pm, q=q, v=v)
    q, v = _vec(q, model.nq, "q"), _vec(v, model.nv, "v")
    Td = np.zeros((pm.nv, model.nv))
    for jt, iq, iv, _pq, pv, _pnq in joint_map(model, pm):
        if jt == PLANAR:
            c, s = np.cos(q[iq + 2]), np.sin(q[iq + 2])
            Td[pv : pv + 2, iv : iv + 2] = v[iv + 2] * np.array([[-s, c], [-c, -s]])
    return Td


def tdot_v(model: Model, pm=None, q=None, v=None) -> np.ndarray:
    """``Ṫ v``.

    Arguments, in order (all accept keywords): ``model`` (the dqdyn `Model`), ``pm`` (the
    ``pinocchio.Model``; default ``None``: the one `to_pinocchio` ``(model)`` builds, the same joint
    order), then ``q``, ``v`` (dqdyn's).  ``tdot_v(model, q=q, v=v)`` converts for `to_pinocchio`'s
    model.
    """
    pm = _resolve(tdot_v, model, pm, q=q, v=v)
    return tdot_matrix(model, pm, q, v) @ _vec(v, model.nv, "v")


def v_to_pin(model: Model, pm=None, q=None, v=None) -> np.ndarray:
    """Pinocchio's velocity of dqdyn's ``v`` at ``q``: ``v_pin = T(q) v``.

    Arguments, in order (all accept keywords): ``model`` (the dqdyn `Model`), ``pm`` (the
    ``pinocchio.Model``; default ``None``: the one `to_pinocchio` ``(model)`` builds, the same joint
    order), then ``q``, ``v`` (dqdyn's).  ``v_to_pin(model, q=q, v=v)`` converts for
    `to_pinocchio`'s model.
    """
    pm = _resolve(v_to_pin, model, pm, q=q, v=v)
    return v_transform(model, pm, q) @ _vec(v, model.nv, "v")


def v_from_pin(model: Model, pm=None, q=None, v_pin=None) -> np.ndarray:
    """dqdyn's velocity of Pinocchio's: ``v = Tᵀ v_pin``.

    Arguments, in order (all accept keywords): ``model`` (the dqdyn `Model`), ``pm`` (the
    ``pinocchio.Model``; default ``None``: the one `to_pinocchio` ``(model)`` builds, the same joint
    order), then ``q`` (dqdyn's), ``v_pin`` (Pinocchio's velocity).  ``v_from_pin(model, q=q,
    v_pin=v_pin)`` converts for `to_pinocchio`'s model.
    """
    pm = _resolve(v_from_pin, model, pm, q=q, v_pin=v_pin)
    return v_transform(model, pm, q).T @ _vec(v_pin, pm.nv, "v_pin")


def a_to_pin(model: Model, pm=None, q=None, v=None, a=None) -> np.ndarray:
    """``a_pin = T a + Ṫ v``.

    Arguments, in order (all accept keywords): ``model`` (the dqdyn `Model`), ``pm`` (the
    ``pinocchio.Model``; default ``None``: the one `to_pinocchio` ``(model)`` builds, the same joint
    order), then ``q``, ``v``, ``a`` (dqdyn's).  ``a_to_pin(model, q=q, v=v, a=a)`` converts for
    `to_pinocchio`'s model.
    """
    pm = _resolve(a_to_pin, model, pm, q=q, v=v, a=a)
    return v_transform(model, pm, q) @ _vec(a, model.nv, "a") + tdot_v(model, pm, q, v)


def a_from_pin(model: Model, pm=None, q=None, v=None, a_pin=None) -> np.ndarray:
    """``a = Tᵀ (a_pin − Ṫ v)``.

    Arguments, in order (all accept keywords): ``model`` (the dqdyn `Model`), ``pm`` (the
    ``pinocchio.Model``; default ``None``: the one `to_pinocchio` ``(model)`` builds, the same joint
    order), then ``q``, ``v`` (dqdyn's), ``a_pin`` (Pinocchio's acceleration).  ``a_from_pin(model,
    q=q, v=v, a_pin=a_pin)`` converts for `to_pinocchio`'s model.
    """
    pm = _resolve(a_from_pin, model, pm, q=q, v=v, a_pin=a_pin)
    return v_transform(model, pm, q).T @ (_vec(a_pin, pm.nv, "a_pin") - tdot_v(model, pm, q, v))


def tau_to_pin(model: Model, pm=None, q=None, tau=None) -> np.ndarray:
    """Pinocchio's generalized force of dqdyn's τ (``τ_pin = T τ``, same power).

    Arguments, in order (all accept keywords): ``model`` (the dqdyn `Model`), ``pm`` (the
    ``pinocchio.Model``; default ``None``: the one `to_pinocchio` ``(model)`` builds, the same joint
    order), then ``q`` (dqdyn's), ``tau`` (dqdyn's generalized force, (nv,)).  ``tau_to_pin(model,
    q=q, tau=tau)`` converts for `to_pinocchio`'s model.
    """
    pm = _resolve(tau_to_pin, model, pm, q=q, tau=tau)
    return v_transform(model, pm, q) @ _vec(tau, model.nv, "tau")


def tau_from_pin(model: Model, pm=None, q=None, tau_pin=None) -> np.ndarray:
    """``τ = Tᵀ τ_pin``.

    Arguments, in order (all accept keywords): ``model`` (the dqdyn `Model`), ``pm`` (the
    ``pinocchio.Model``; default ``None``: the one `to_pinocchio` ``(model)`` builds, the same joint
    order), then ``q`` (dqdyn's), ``tau_pin`` (Pinocchio's generalized force).
    ``tau_from_pin(model, q=q, tau_pin=tau_pin)`` converts for `to_pinocchio`'s model.
    """
    pm = _resolve(tau_from_pin, model, pm, q=q, tau_pin=tau_pin)
    return v_transform(model, pm, q).T @ _vec(tau_pin, pm.nv, "tau_pin")


def matrix_from_pin(model: Model, pm=None, q=None, M_pin=None) -> np.ndarray:
    """dqdyn's joint-space matrix (M, C) of Pinocchio's: ``Tᵀ M_pin T``.

    Arguments, in order (all accept keywords): ``model`` (the dqdyn `Model`), ``pm`` (the
    ``pinocchio.Model``; default ``None``: the one `to_pinocchio` ``(model)`` builds, the same joint
    order), then ``q`` (dqdyn's), ``M_pin`` (Pinocchio's (pm.nv, pm.nv) matrix: ``crba``,
    ``computeCoriolisMatrix``).  ``matrix_from_pin(model, q=q, M_pin=M_pin)`` converts for
    `to_pinocchio`'s model.
    """
    pm = _resolve(matrix_from_pin, model, pm, q=q, M_pin=M_pin)
    T = v_transform(model, pm, q)
    return T.T @ np.asarray(M_pin, dtype=float) @ T


def pin_jac_to_ours(Jp) -> np.ndarray:
    """Reorder Pinocchio's [v; ω] rows into dqdyn's [ω; v] (also for a twist (6,))."""
    Jp = np.asarray(Jp, dtype=float)
    return np.concatenate([Jp[3:6], Jp[:3]], axis=0)


def jacobian_from_pin(model: Model, pm=None, q=None, J_pin=None) -> np.ndarray:
    """dqdyn's twist Jacobian (6 × nv, rows [ω; v]) of Pinocchio's (6 × nv_pin, rows [v; ω]),
    same reference frame (LOCAL = "body", WORLD = "spatial", LOCAL_WORLD_ALIGNED =
    "world_aligned").

    Arguments, in order (all accept keywords): ``model`` (the dqdyn `Model`), ``pm`` (the
    ``pinocchio.Model``; default ``None``: the one `to_pinocchio` ``(model)`` builds, the same joint
    order), then ``q`` (dqdyn's), ``J_pin`` (Pinocchio's Jacobian, 6 × pm.nv).
    ``jacobian_from_pin(model, q=q, J_pin=J_pin)`` converts for `to_pinocchio`'s model.
    """
    pm = _resolve(jacobian_from_pin, model, pm, q=q, J_pin=J_pin)
    return pin_jac_to_ours(J_pin) @ v_transform(model, pm, q)


def jacobian_to_pin(model: Model, pm=None, q=None, J=None) -> np.ndarray:
    """Pinocchio's Jacobian (rows [v; ω], pin's v) of dqdyn's.

    Arguments, in order (all accept keywords): ``model`` (the dqdyn `Model`), ``pm`` (the
    ``pinocchio.Model``; default ``None``: the one `to_pinocchio` ``(model)`` builds, the same joint
    order), then ``q`` (dqdyn's), ``J`` (dqdyn's twist Jacobian, 6 × nv).  ``jacobian_to_pin(model,
    q=q, J=J)`` converts for `to_pinocchio`'s model.
    """
    pm = _resolve(jacobian_to_pin, model, pm, q=q, J=J)
    J = np.asarray(J, dtype=float)
    return np.concatenate([J[3:6], J[:3]], axis=0) @ v_transform(model, pm, q).T


def pin_fext(model: Model, pm=None, fext=None):
    """dqdyn fext (nbodies+1, 6) [f, τ] in body frames → Pinocchio's list of joint-frame Forces
    (the ``fext`` of ``pinocchio.rnea`` / ``aba``).

    Arguments, in order (all accept keywords): ``model`` (the dqdyn `Model`), ``pm`` (the
    ``pinocchio.Model``; default ``None``: the one `to_pinocchio` ``(model)`` builds, the same joint
    order), then ``fext`` (dqdyn's external wrenches (nbodies+1, 6), ``[f, τ]`` in the body frames).
    ``pin_fext(model, fext=fext)`` converts for `to_pinocchio`'s model.
    """
    pin = _pin()
    pm = _resolve(pin_fext, model, pm, fext=fext)
    fext = np.asarray(fext, dtype=float)
    if fext.shape != (model.nbodies + 1, 6):
        raise ShapeError(f"fext must have shape ({model.nbodies + 1}, 6), got {fext.shape}")
    fp = [pin.Force.Zero() for _ in range(pm.njoints)]
    for i in range(1, model.nbodies + 1):
        name = model.joint_names_all[i]
        jid = pm.getJointId(name) if pm.existJointName(name) else 1
        fp[jid] = pin.Force(fext[i, :3], fext[i, 3:])
    return fp


__all__ = [
    "to_pinocchio", "PinocchioState", "from_pinocchio", "pin_from_model", "pin_from_urdf",
    "joint_map", "q_to_pin", "q_from_pin", "v_transform", "tdot_matrix", "tdot_v", "v_to_pin",
    "v_from_pin", "a_to_pin", "a_from_pin", "tau_to_pin", "tau_from_pin", "matrix_from_pin",
    "pin_jac_to_ours", "jacobian_from_pin", "jacobian_to_pin", "pin_fext",
]
