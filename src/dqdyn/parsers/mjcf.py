"""Loading MuJoCo models (MJCF): `load_mjcf`, and `MujocoMap` between the two state
layouts.

The MJCF document is compiled by MuJoCo itself (``mujoco.MjModel`` — from a path, an XML string,
an ``MjSpec`` or an ``MjModel``), and the model is read from the *compiled* arrays, so every
default class, ``childclass``, ``<include>``, ``inertiafromgeom`` and ``fusestatic`` rule is
MuJoCo's own:

* **Bodies.**  ``body_pos`` / ``body_quat`` place each body in its parent; its mass, CoM and
  inertia are MuJoCo's compiled ``body_mass``, ``body_ipos`` and ``R(body_iquat)
  diag(body_inertia) R(body_iquat)ᵀ`` (the inertial frame MuJoCo derived, e.g. from the geoms),
  rotated into dqdyn's body axes.  A body without joints is welded to its parent and merged into
  it (masses, CoMs and inertias combined by the parallel-axis theorem); it stays a named frame.
* **Joints.**  ``hinge`` → revolute, ``slide`` → prismatic, ``ball`` → spherical (q: MuJoCo's
  unit quaternion ``[w, x, y, z]``, v: body angular velocity — both as MuJoCo), ``free`` → free
  (q: vec8 unit dual quaternion; v: body twist ``[ω^b, v^b]`` where MuJoCo's ``qvel`` is
  ``[v_world, ω^b]`` — see `MujocoMap`).  A joint rotates about its anchor ``jnt_pos``:
  dqdyn's body frame of a hinge / ball joint is at the anchor, and MuJoCo's body frame is the
  named frame ``T(−anchor)`` in it (the dqdyn body keeps the MuJoCo body's name when the anchor is
  the origin, the usual case, and is named ``"body:joint"`` otherwise).  A body with several
  joints becomes a chain of bodies (massless ones named ``"body:joint"``, the last one carries the
  mass), composed in MuJoCo's order.  A joint's reference position (``ref``, MuJoCo ``qpos0``)
  is folded into the joint placement, so dqdyn's q is MuJoCo's qpos and every body frame is
  MuJoCo's at the same configuration.  Hinge / slide ``range`` (when limited) gives
  ``q_lower`` / ``q_upper``.
* **Bodies welded to the world** (no joint, directly or through other welded bodies, e.g. a
  robot's base under ``<worldbody>``) are frames on the world, and their mass, CoM and inertia
  are combined into ``Model.welded_inertia`` — the one home of welded mass, as for a URDF fixed
  base (Pinocchio's universe inertia): no joint moves it, so it is outside ``total_mass``
  (``total_mass + welded_inertia[0]`` is MuJoCo's ``body_mass.sum()``), and it moves with the
  model when the model is mounted on a body (``ModelBuilder.add_model``, ``Assembly``,
  ``InterconnectionGraph``).
* **Armature.**  MuJoCo's ``dof_armature`` (joint ``armature``, from ``<default>`` classes and
  ``childclass`` as MuJoCo compiles them) plus ``gear² · armature`` of actuators driving one
  hinge / slide, passed to `ModelBuilder.add_body` (``Model.armature``).
* **Equality constraints.**  An active ``<equality><joint joint1= joint2= polycoef=>`` with only
  the constant and linear coefficients non-zero is exactly a mimic coupling
  ``q₁ = scale·q₂ + offset`` (``scale = c₁``, ``offset = c₀ + ref₁ − c₁ ref₂``).  Couplings are
  joined into groups and the joint earliest in the tree owns the entry of q / v (a coupling
  whose master comes later is inverted), so the order in the file does not matter.  Active
  ``connect`` and ``weld`` equalities (body or site form) become
  `LoopClosure` objects (``"3d"`` point, ``"6d"`` weld) declared in
  ``model.constraints`` — ``dqdyn.constraints.model_constraints(model)`` gives them for
  `constrained_forward_dynamics`.  Polynomial couplings of
  degree > 1, joint locks, ``tendon`` equalities and inactive equalities are kept as metadata
  (``return_info=True``) and named in the warning.
* **Options.**  ``<option gravity=>`` is the model's gravity; ``<flag gravity="disable"/>`` makes
  it zero.
* **Sites** live in their own MuJoCo namespace: a site becomes the frame of its name, or
  ``"site:<name>"`` when a body or another frame already has that name
  (``info.frames`` maps them).
* **Left out, with ONE** `UserWarning` **listing them**: contacts, tendons and actuators
  (kept as metadata: ``info.tendons``, ``info.actuators``), joint damping, springs, friction
  loss, gravity compensation, fluid forces, the equalities kept as metadata.  None of them is
  part of M(q), C(q, v) v or g(q); dqdyn's τ is the generalized force itself.
* **Absent asset files** (a checkout without its meshes): when MuJoCo cannot compile the file,
  mesh, height-field, skin and texture assets whose files are absent are left out through
  ``MjSpec`` and their geoms become massless 1 mm spheres — only geometry is lost when every
  body they are on has an ``<inertial>`` (or they are massless, or outside
  ``inertiagrouprange``); the warning names the files.  A body whose mass and inertia would
  come from an absent mesh is refused with an `MJCFError` naming the body and its meshes
  (``ignore=("meshes",)`` leaves that share out instead, and names the bodies).
* **Errors**: ONE `MJCFError` lists every feature of the file that dqdyn
  cannot represent: flexes, tendon armature, actuator armature through a transmission other
  than one joint, a free joint that is not the only joint of a body attached to the world; and
  a document MuJoCo cannot compile.

docs/mjcf-support.md has the full list and the load rates of gymnasium's and dm_control's files.

>>> import mujoco  # doctest: +SKIP
>>> model = load_mjcf("humanoid.xml")  # doctest: +SKIP
>>> m = MujocoMap(model, mujoco.MjModel.from_xml_path("humanoid.xml"))  # doctest: +SKIP
>>> tau = m.tau(q, data.qfrc_inverse)  # doctest: +SKIP
"""

from __future__ import annotations

import os
import warnings

import numpy as np

from dqdyn.algebra.rotations import matrix_from_quat, pose_from_rt, quat_from_axis_angle, translation_of
from dqdyn.errors import MJCFError, ModelError, UnknownNameError
from dqdyn.multibody.builders import ModelBuilder
from dqdyn.multibody.model import Model
from dqdyn.parsers._mjcf_extras import MJCFInfo

_IGNORABLE = ("armature", "tendon", "equality", "meshes")
_ID4 = np.array([1.0, 0.0, 0.0, 0.0])


def _mujoco():
    try:
        import mujoco
    except ImportError as e:  # pragma: no cover - mujoco is a core dependency
        raise MJCFError("load_mjcf needs the 'mujoco' package (pip install mujoco)") from e
    return mujoco


def compile_mjcf(source):
    """``mujoco.MjModel`` of ``source``: a path, an XML string, an ``MjSpec`` or an ``MjModel``.

    Mesh, height-field, skin and texture files that are absent (a checkout without its assets)
    do not stop the compile when no mass depends on them: their geoms become massless 1 mm
    spheres and the bodies, joints and inertias are MuJoCo's own; a body whose mass and inertia
    would come from an absent mesh raises `MJCFError` naming the mesh and the body
    (`dqdyn.parsers._mjcf_extras.strip_absent_files`)."""
    return _compile(source)[0]


def _spec_of(mujoco, s: str, text: bool):
    if text:
        return mujoco.MjSpec.from_string(s)
    try:
        return mujoco.MjSpec.from_file(s)
    except Exception:  # noqa: BLE001 - MjSpec.from_file wants a known extension (".xml")
        with open(s) as f:
            spec = mujoco.MjSpec.from_string(f.read())
        spec.modelfiledir = os.path.dirname(os.path.abspath(s)) + os.sep
        return spec


def _compile(source, massless_meshes: bool = False):
    """``(MjModel, {kind: [absent file, ...]})`` (`compile_mjcf`): MuJoCo's own compile, and
    only when it fails, the document through ``MjSpec`` without its absent asset files."""
    mujoco = _mujoco()
    if isinstance(source, mujoco.MjModel):
        return source, {}
    from dqdyn.parsers._mjcf_extras import strip_absent_files

    label = _label(source)
    try:
        if isinstance(source, mujoco.MjSpec):
            spec = source.copy()  # the caller's spec is left as it is
            absent = strip_absent_files(spec, label, massless_meshes=massless_meshes)
        elif isinstance(source, (str, os.PathLike)):
            s = os.fspath(source)
            text = s.lstrip().startswith("<")
            if not text and not os.path.exists(s):
                raise MJCFError(f"load_mjcf: file {s!r} does not exist")
            try:
                return (mujoco.MjModel.from_xml_string(s) if text else mujoco.MjModel.from_xml_path(s)), {}
            except Exception as first:  # noqa: BLE001 - absent asset files, or a real error
                try:
                    spec = _spec_of(mujoco, s, text)
                except Exception:  # noqa: BLE001 - MuJoCo's first message is the one to show
                    raise first from None
                absent = strip_absent_files(spec, label, massless_meshes=massless_meshes)
                if not absent:
                    raise first
        else:
            raise MJCFError(
                f"load_mjcf: source must be a path, an XML string, a mujoco.MjSpec or a mujoco.MjModel, "
                f"got {type(source).__name__}")
        return spec.compile(), absent
    except MJCFError:
        raise
    except Exception as e:  # mujoco raises ValueError / FatalError with the XML line
        raise MJCFError(f"MJCF {label}: MuJoCo cannot compile it: {e}") from e


def _label(source) -> str:
    if isinstance(source, (str, os.PathLike)):
        s = os.fspath(source)
        return "<string>" if s.lstrip().startswith("<") else repr(s)
    return f"<{type(source).__name__}>"


def _name(mj, objtype, i: int, prefix: str) -> str:
    mujoco = _mujoco()
    n = mujoco.mj_id2name(mj, objtype, i)
    return n if n else f"{prefix}{i}"


def body_name(mj, b: int) -> str:
    """dqdyn's name of MuJoCo body ``b`` (its MJCF name, or ``"body{b}"``; body 0 is ``world``)."""
    return "world" if b == 0 else _name(mj, _mujoco().mjtObj.mjOBJ_BODY, b, "body")


def joint_name(mj, j: int) -> str:
    """dqdyn's name of MuJoCo joint ``j`` (its MJCF name, or ``"joint{j}"``)."""
    return _name(mj, _mujoco().mjtObj.mjOBJ_JOINT, j, "joint")


def _translation(p) -> np.ndarray:
    return pose_from_rt(_ID4, np.asarray(p, dtype=float))


def _mul(a, b):
    from dqdyn.multibody.builders import _pose_mul

    return _pose_mul(a, b)


def _armature_keyword() -> bool:
    import inspect

    return "armature" in inspect.signature(ModelBuilder.add_body).parameters


def load_mjcf(source, *, ignore=(), name: str | None = None, return_info: bool = False):
    """A `Model` of an MJCF document, compiled by MuJoCo (see the module doc).

    Parameters
    ----------
    source:
        Path of an MJCF file, an MJCF XML string, a ``mujoco.MjSpec`` or a compiled
        ``mujoco.MjModel``.
    ignore:
        Features to leave out silently: ``"armature"`` (rotor inertia on dofs), ``"tendon"``
        (tendons, and the armature along them), ``"equality"`` (equalities that are not exact
        linear joint couplings: no loop constraints are declared), ``"meshes"`` (a body whose
        mass and inertia would come from a mesh whose file is absent loses that geom's share
        instead of refusing the file; the warning names the bodies).
    name:
        Model name (default: the MJCF ``<mujoco model=>``).
    return_info:
        Also return an `MJCFInfo` (tendons, actuators,
        equalities, loop constraints, site frames, what was ignored).

    Returns
    -------
    Model, or ``(Model, MJCFInfo)`` with ``return_info=True``.
    """
    from dqdyn.parsers import _mjcf_extras as X_

    mujoco = _mujoco()
    ignore = tuple(ignore)
    for k in ignore:
        if k not in _IGNORABLE:
            raise MJCFError(f"load_mjcf: ignore entries must be among {_IGNORABLE}, got {k!r}")
    label = _label(source)
    mj, absent = _compile(source, massless_meshes="meshes" in ignore)
    JT = mujoco.mjtJoint
    problems: list[str] = []  # what dqdyn cannot represent: one error lists them all
    if getattr(mj, "nflex", 0):
        problems.append(f"{mj.nflex} flex (deformable) element(s)")
    for j in range(mj.njnt):
        bi = int(mj.jnt_bodyid[j])
        if int(mj.jnt_type[j]) == JT.mjJNT_FREE and (int(mj.body_jntnum[bi]) != 1 or
                                                      int(mj.body_parentid[bi]) != 0):
            problems.append(f"free joint {joint_name(mj, j)!r} of body {body_name(mj, bi)!r} is not "
                            "the only joint of a body attached to the world")
    tproblems: list[str] = []
    arm = X_.armature(mj, tproblems)
    problems += [p for p in tproblems if not ("tendon" in ignore and p.startswith("tendon"))]
    if problems:
        raise MJCFError(f"MJCF {label}: {len(problems)} feature(s) have no dqdyn counterpart: "
                        + "; ".join(problems))
    equalities: list[dict] = []
    mimics = X_.joint_couplings(mj, equalities)
    apply_arm = "armature" not in ignore and np.any(arm != 0) and _armature_keyword()
    arm_note = None
    if "armature" not in ignore and np.any(arm != 0) and not apply_arm:
        d = int(np.flatnonzero(arm)[0])
        arm_note = (f"armature (rotor inertia, e.g. {arm[d]:g} on joint "
                    f"{joint_name(mj, int(mj.dof_jntid[d]))!r}) is not yet applied to M: this "
                    "dqdyn has no armature slot")
    grav = X_.gravity(mj)
    model_name = name or (mj.names.split(b"\0", 1)[0].decode() or "mjcf")
    b = ModelBuilder(model_name, gravity=grav, inertia_check="warn")
    taken = {"world"}

    def fresh(n: str) -> str:
        if n in taken:
            raise MJCFError(f"MJCF {label}: name {n!r} is used twice (bodies, joint bodies)")
        taken.add(n)
        return n

    try:
        for bi in range(1, mj.nbody):
            bname = body_name(mj, bi)
            parent = body_name(mj, int(mj.body_parentid[bi]))
            B = pose_from_rt(np.array(mj.body_quat[bi], dtype=float), np.array(mj.body_pos[bi], dtype=float))
            mass = float(mj.body_mass[bi])
            Rr = matrix_from_quat(np.array(mj.body_iquat[bi], dtype=float))
            inertia = Rr @ np.diag(np.array(mj.body_inertia[bi], dtype=float)) @ Rr.T
            ipos = np.array(mj.body_ipos[bi], dtype=float)
            j0, nj = int(mj.body_jntadr[bi]), int(mj.body_jntnum[bi])
            if nj == 0:
                # welded to its parent: a frame of its name, its inertia merged into the moving
                # body that carries the parent, or, welded to the world, into the model's
                # welded inertia (ModelBuilder._attach)
                b.add_body(fresh(bname), parent, "fixed", joint_name=f"{bname}__weld",
                           placement=B, mass=mass, com=ipos, inertia=inertia)
                continue
            cur_parent, cur = parent, B
            for k, j in enumerate(range(j0, j0 + nj)):
                jt = int(mj.jnt_type[j])
                jname = joint_name(mj, j)
                last = k == nj - 1
                anchor = np.array(mj.jnt_pos[j], dtype=float)
                axis = np.array(mj.jnt_axis[j], dtype=float)
                adr = int(mj.jnt_qposadr[j])
                kw = {}
                if jt == JT.mjJNT_FREE:
                    jtype, X, residual = "free", pose_from_rt(_ID4, np.zeros(3)), None
                elif jt == JT.mjJNT_BALL:
                    jtype, X, residual = "spherical", _mul(cur, _translation(anchor)), anchor
                elif jt == JT.mjJNT_HINGE:
                    ref = float(mj.qpos0[adr])
                    X = _mul(cur, _translation(anchor))
                    if ref != 0.0:
                        X = _mul(X, pose_from_rt(quat_from_axis_angle(axis, -ref), np.zeros(3)))
                    jtype, residual = "revolute", anchor
                elif jt == JT.mjJNT_SLIDE:
                    ref = float(mj.qpos0[adr])
                    X = _mul(cur, _translation(-ref * axis / np.linalg.norm(axis)))
                    jtype, residual = "prismatic", None
                else:  # pragma: no cover - MuJoCo has four joint types
                    raise MJCFError(f"MJCF {label}: joint {jname!r} of unknown type {jt}")
                if jt in (JT.mjJNT_HINGE, JT.mjJNT_SLIDE):
                    if mj.jnt_limited[j]:
                        kw.update(lower=float(mj.jnt_range[j][0]), upper=float(mj.jnt_range[j][1]))
                    if j in mimics:
                        m2, s, o = mimics[j]
                        kw["mimic"] = (joint_name(mj, m2), s, o)
                if apply_arm:
                    da = int(mj.jnt_dofadr[j])
                    nd = {JT.mjJNT_FREE: 6, JT.mjJNT_BALL: 3}.get(jt, 1)
                    a = arm[da : da + nd]
                    if jt == JT.mjJNT_FREE:  # MuJoCo's [v_world, ω^b] → dqdyn's [ω^b, v^b]
                        a = np.concatenate([a[3:], a[:3]])
                    kw["armature"] = float(a[0]) if np.all(a == a[0]) else a
                has_residual = residual is not None and np.any(residual != 0)
                dname = bname if (last and not has_residual) else f"{bname}:{jname}"
                b.add_body(fresh(dname), cur_parent, jtype, joint_name=jname, axis=axis,
                           placement=X, **kw,
                           **(dict(mass=mass, com=ipos + (-residual if has_residual else 0.0),
                                   inertia=inertia) if last else {}))
                cur_parent = dname
                cur = _translation(-residual) if has_residual else pose_from_rt(_ID4, np.zeros(3))
            if cur_parent != bname:
                b.add_frame(fresh(bname), cur_parent, cur)
        # sites live in their own MuJoCo namespace: a site named like a body (or like another
        # frame) becomes the frame "site:<name>"
        frames = {}
        for s in range(mj.nsite):
            sname = _name(mj, mujoco.mjtObj.mjOBJ_SITE, s, "site")
            fname = sname if sname not in taken else f"site:{sname}"
            if fname in taken:
                raise MJCFError(f"MJCF {label}: site {sname!r}: frames {sname!r} and {fname!r} "
                                "both exist already")
            frames[sname] = fresh(fname)
            b.add_frame(fname, body_name(mj, int(mj.site_bodyid[s])),
                        pose_from_rt(np.array(mj.site_quat[s], dtype=float),
                                     np.array(mj.site_pos[s], dtype=float)))
        frame_of_site = [frames[_name(mj, mujoco.mjtObj.mjOBJ_SITE, s, "site")] for s in range(mj.nsite)]
        loops = X_.loop_equalities(mj, equalities, frame_of_site)
        if "equality" not in ignore:
            for c in loops:
                b.add_constraint(c)
        else:
            loops = []
        model = b.build()
    except (ModelError, UnknownNameError) as e:
        raise MJCFError(f"MJCF {label}: {e}") from e
    ten = X_.tendons(mj)
    act = X_.actuators(mj)
    eqs = [r for r in equalities if not ("equality" in ignore and r.get("as") != "mimic")]
    ignored = X_.ignored_features(mj, tendon_list=[] if "tendon" in ignore else ten,
                                  actuator_list=act, equalities=eqs, armature_ignored=arm_note,
                                  absent_files=absent)
    if "tendon" in ignore:
        ten = []
    if ignored:
        warnings.warn(
            f"MJCF {label}: loaded; left out of the model: " + "; ".join(f"{k}: {v}" for k, v in ignored.items()),
            UserWarning, stacklevel=2)
    if not return_info:
        return model
    info = X_.MJCFInfo(gravity=grav, armature=arm, armature_applied=bool(apply_arm),
                       equalities=eqs, constraints=list(loops), tendons=ten, actuators=act,
                       frames=frames, ignored=ignored)
    return model, info


class MujocoMap:
    """Map between MuJoCo's state (``qpos``, ``qvel``, ``qacc``, ``qfrc_*``, ``M``) and dqdyn's
    (``q``, ``v``, ``a``, τ, M) for a model made by `load_mjcf` from the same ``MjModel``.

    Joints are matched by name.  ``qvel = G(q) v`` with ``G`` the identity on hinge, slide and
    ball dofs, ``scale`` on a mimic joint's dof (the master's column), and for a free joint
    ``[v_world; ω^b] = [[0, R], [I, 0]] [ω^b; v^b]``; hence ``qacc = G a + Ġ v`` (for a free joint
    ``v̇_world = R (v̇^b + ω^b × v^b)``), ``τ = Gᵀ qfrc`` (the power ``qfrcᵀ qvel = τᵀ v``) and
    ``M = Gᵀ M_mj G``.
    """

    def __init__(self, model: Model, mj):
        mujoco = _mujoco()
        self.model, self.mj = model, mj
        self._joints = []  # (mj type, qposadr, dofadr, dqdyn body index)
        names = set(model.joint_names_all)
        for j in range(mj.njnt):
            n = joint_name(mj, j)
            if n not in names:
                raise UnknownNameError(f"MujocoMap: MuJoCo joint {n!r} is not a joint of {model.name!r}")
            self._joints.append((int(mj.jnt_type[j]), int(mj.jnt_qposadr[j]), int(mj.jnt_dofadr[j]),
                                 model.joint_names_all.index(n)))
        self._JT = mujoco.mjtJoint
        nmj = sum(1 for jt, *_ in self._joints)
        if nmj != sum(1 for i in range(1, model.nbodies + 1) if model.joint_type[i] != 0):
            raise ModelError(f"MujocoMap: {model.name!r} and the MuJoCo model have different joints")

    def _master(self, i):
        """(iv, scale, offset, iq) of dqdyn body i's joint (mimics read their master's slot)."""
        m = self.model
        return int(m.idx_v[i]), float(m.mimic_scale[i]), float(m.mimic_offset[i]), int(m.idx_q[i])

    def qpos(self, q) -> np.ndarray:
        q = np.asarray(q, dtype=float)
        out = np.array(self.mj.qpos0, dtype=float)
        for jt, qa, _, i in self._joints:
            iv, s, o, iq = self._master(i)
            if jt == self._JT.mjJNT_FREE:
                out[qa : qa + 3] = translation_of(q[iq : iq + 8])
                out[qa + 3 : qa + 7] = q[iq : iq + 4]
            elif jt == self._JT.mjJNT_BALL:
                out[qa : qa + 4] = q[iq : iq + 4]
            else:
                out[qa] = s * q[iq] + o
        return out

    def q(self, qpos) -> np.ndarray:
        qpos = np.asarray(qpos, dtype=float)
        out = np.zeros(self.model.nq)
        for jt, qa, _, i in self._joints:
            if self.model.joint_nv[i] == 0:
                continue
            iq = int(self.model.idx_q[i])
            if jt == self._JT.mjJNT_FREE:
                out[iq : iq + 8] = pose_from_rt(qpos[qa + 3 : qa + 7], qpos[qa : qa + 3])
            elif jt == self._JT.mjJNT_BALL:
                out[iq : iq + 4] = qpos[qa : qa + 4]
            else:
                out[iq] = qpos[qa]
        return out

    def velocity_map(self, q) -> np.ndarray:
        """``G(q)`` (mj.nv × model.nv): ``qvel = G v``."""
        q = np.asarray(q, dtype=float)
        G = np.zeros((self.mj.nv, self.model.nv))
        for jt, _, da, i in self._joints:
            iv, s, o, iq = self._master(i)
            if jt == self._JT.mjJNT_FREE:
                G[da : da + 3, iv + 3 : iv + 6] = matrix_from_quat(q[iq : iq + 4])
                G[da + 3 : da + 6, iv : iv + 3] = np.eye(3)
            elif jt == self._JT.mjJNT_BALL:
                G[da : da + 3, iv : iv + 3] = np.eye(3)
            else:
                G[da, iv] = s
        return G

    def qvel(self, q, v) -> np.ndarray:
        return self.velocity_map(q) @ np.asarray(v, dtype=float)

    def v(self, qpos, qvel) -> np.ndarray:
        """dqdyn's v from MuJoCo's (a mimic joint's qvel is not read)."""
        q = self.q(qpos)
        qvel = np.asarray(qvel, dtype=float)
        out = np.zeros(self.model.nv)
        for jt, _, da, i in self._joints:
            if self.model.joint_nv[i] == 0:
                continue
            iv, iq = int(self.model.idx_v[i]), int(self.model.idx_q[i])
            if jt == self._JT.mjJNT_FREE:
                out[iv : iv + 3] = qvel[da + 3 : da + 6]
                out[iv + 3 : iv + 6] = matrix_from_quat(q[iq : iq + 4]).T @ qvel[da : da + 3]
            elif jt == self._JT.mjJNT_BALL:
                out[iv : iv + 3] = qvel[da : da + 3]
            else:
                out[iv] = qvel[da]
        return out

    def qacc(self, q, v, a) -> np.ndarray:
        """``qacc = G a + Ġ v``."""
        q, v = np.asarray(q, dtype=float), np.asarray(v, dtype=float)
        out = self.velocity_map(q) @ np.asarray(a, dtype=float)
        for jt, _, da, i in self._joints:
            if jt == self._JT.mjJNT_FREE:
                iv, _, _, iq = self._master(i)
                w, vb = v[iv : iv + 3], v[iv + 3 : iv + 6]
                out[da : da + 3] += matrix_from_quat(q[iq : iq + 4]) @ np.cross(w, vb)
        return out

    def tau(self, q, qfrc) -> np.ndarray:
        """dqdyn's generalized force of MuJoCo's ``qfrc`` (``Gᵀ qfrc``)."""
        return self.velocity_map(q).T @ np.asarray(qfrc, dtype=float)

    def mass_matrix(self, q, M_mj) -> np.ndarray:
        """dqdyn's M of MuJoCo's dense M (``mj_fullM``): ``Gᵀ M_mj G``."""
        G = self.velocity_map(q)
        return G.T @ np.asarray(M_mj, dtype=float) @ G


__all__ = ["load_mjcf", "compile_mjcf", "MujocoMap", "MJCFInfo", "body_name", "joint_name"]
