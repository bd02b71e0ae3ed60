"""What `dqdyn.load_mjcf` reads besides bodies and joints: equality constraints (mimic
couplings in either tree order, loop closures, metadata), tendons, actuators, armature, the
options that change the dynamics, and the one list of what is ignored (module doc of
`dqdyn.parsers.mjcf`)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import numpy as np

from dqdyn.constraints.loops import LoopClosure
from dqdyn.errors import MJCFError


def _mujoco():
    import mujoco

    return mujoco


def _name(mj, objtype, i: int, prefix: str) -> str:
    n = _mujoco().mj_id2name(mj, objtype, i)
    return n if n else f"{prefix}{i}"


def joint_name(mj, j: int) -> str:
    return _name(mj, _mujoco().mjtObj.mjOBJ_JOINT, j, "joint")


def body_name(mj, b: int) -> str:
    return "world" if b == 0 else _name(mj, _mujoco().mjtObj.mjOBJ_BODY, b, "body")


@dataclass
class MJCFInfo:
    """What an MJCF document holds beyond the rigid-body model (``load_mjcf(...,
    return_info=True)``).

    Attributes
    ----------
    gravity:
        The gravity the model got (zero when ``<flag gravity="disable"/>``).
    armature:
        MuJoCo's armature per MuJoCo dof (joint ``armature`` plus ``gear² · armature`` of
        joint-transmission actuators), in MuJoCo's dof order.
    armature_applied:
        Whether the model's mass matrix includes it.
    equalities:
        One dict per ``<equality>``: ``name``, ``type``, ``active``, the objects, ``data`` and
        ``as`` — ``"mimic"`` (became a mimic joint), ``"loop"`` (a loop constraint in
        ``constraints``) or ``"metadata"`` (only recorded here), with ``why``.
    constraints:
        The loop closures of the active ``connect`` / ``weld`` equalities (also in
        ``model.constraints``), `LoopClosure` objects for
        `constrained_forward_dynamics`.
    tendons, actuators:
        One dict per tendon (``name``, ``type``, ``joints`` with coefficients, ``path`` of
        sites / geoms, ``stiffness``, ``damping``, ``range``...) and per actuator (``name``,
        ``transmission``, ``target``, ``gear``, ``gainprm``, ``biasprm``, ``ctrlrange``,
        ``forcerange``...).
    frames:
        MuJoCo site name → dqdyn frame name.
    ignored:
        Feature → why it is not part of the rigid-body model (the one warning's content).
    """

    gravity: np.ndarray
    armature: np.ndarray
    armature_applied: bool
    equalities: list = field(default_factory=list)
    constraints: list = field(default_factory=list)
    tendons: list = field(default_factory=list)
    actuators: list = field(default_factory=list)
    frames: dict = field(default_factory=dict)
    ignored: dict = field(default_factory=dict)


class MJCFLoop(LoopClosure):
    """A `LoopClosure` made from an MJCF ``connect`` / ``weld``
    equality (deterministic ``repr``, so a model's token does not depend on the process)."""

    def __repr__(self) -> str:
        def spec(s):
            if isinstance(s, tuple):
                return f"({s[0]!r}, {np.asarray(s[1]).round(15).tolist()})"
            return repr(s)

        return f"MJCFLoop({self.name!r}, {spec(self.frame_a)}, {spec(self.frame_b)}, {self.kind!r})"


# ------------------------------------------------------------------------ absent asset files
def _asset_path(spec, el, file: str, kind: str) -> str:
    """Where MuJoCo's compiler looks for an asset file: absolute as written, else under the
    element's ``meshdir`` (meshes, skins, height fields) or ``texturedir`` (textures), itself
    relative to the model file's folder (the working folder for an XML string)."""
    if os.path.isabs(file):
        return file
    comp = getattr(el, "compiler", None) or spec.compiler
    sub = comp.texturedir if kind == "texture" else comp.meshdir
    return os.path.join(spec.modelfiledir or os.getcwd(), sub or "", file)


def _takes_inertia(spec, geom) -> bool:
    """Whether MuJoCo's compiler adds ``geom``'s mass and inertia to its body: ``inertiafromgeom``
    is ``true``, or ``auto`` and the body has no ``<inertial>``; the geom's group is in
    ``inertiagrouprange``; its ``mass`` (or ``density`` when no mass is given) is not zero."""
    mujoco = _mujoco()
    IFG = mujoco.mjtInertiaFromGeom
    body = geom.parent
    comp = getattr(geom, "compiler", None) or spec.compiler
    ifg = comp.inertiafromgeom
    if ifg == IFG.mjINERTIAFROMGEOM_FALSE or (ifg == IFG.mjINERTIAFROMGEOM_AUTO and body.explicitinertial):
        return False
    lo, hi = (int(x) for x in comp.inertiagrouprange)
    if not lo <= int(geom.group) <= hi:
        return False
    mass = float(geom.mass)
    return mass != 0 if not np.isnan(mass) else float(geom.density) != 0


def strip_absent_files(spec, label: str, *, massless_meshes: bool = False) -> dict:
    """Leave out of ``spec`` (in place) the mesh, height-field, skin and texture assets whose
    files are absent, when no mass depends on them.

    A geom of an absent mesh or height field that gives its body no mass (the body has an
    ``<inertial>``, or the geom is massless or outside ``inertiagrouprange``) is replaced by a
    massless sphere of radius 1 mm at the same place, so the compiled bodies, joints, masses, CoMs
    and inertias are MuJoCo's own: only collision and visual geometry is lost.  A geom whose mesh
    would give its body mass and inertia raises `MJCFError` naming the body and its meshes
    (``massless_meshes=True``: the geom becomes massless too, and ``"massless bodies"`` in the
    returned dict names the bodies).  Textures of absent files are dropped from their materials;
    skins of absent files are dropped.  Returns ``{kind: [absent file, ...]}`` (empty when every
    file is there)."""
    mujoco = _mujoco()
    GT = mujoco.mjtGeom
    absent: dict[str, list[str]] = {}
    gone: dict[str, set[str]] = {"mesh": set(), "hfield": set()}
    for kind, items in (("mesh", spec.meshes), ("hfield", spec.hfields), ("skin", spec.skins),
                        ("texture", spec.textures)):
        for el in list(items):
            f = el.file
            if not f or os.path.exists(_asset_path(spec, el, f, kind)):
                continue
            absent.setdefault(kind, []).append(f)
            if kind in gone:
                gone[kind].add(el.name or os.path.splitext(os.path.basename(f))[0])
            if kind == "texture":
                for mat in spec.materials:
                    mat.textures = ["" if t == el.name else t for t in mat.textures]
    if not absent:
        return absent
    heavy: dict[str, list[str]] = {}  # body -> the absent meshes its mass would come from
    swap = []
    for g in spec.geoms:
        src = (g.meshname if g.meshname in gone["mesh"] else
               g.hfieldname if g.type == GT.mjGEOM_HFIELD and g.hfieldname in gone["hfield"] else None)
        if src is None:
            continue
        if _takes_inertia(spec, g):
            heavy.setdefault(g.parent.name or "world", []).append(src)
        swap.append(g)
    if heavy and not massless_meshes:
        raise MJCFError(f"MJCF {label}: " + "; ".join(
            f"body {b!r} takes its mass and inertia from mesh(es) {', '.join(map(repr, dict.fromkeys(m)))}, "
            "whose "
            "files are absent" for b, m in heavy.items())
            + " (give each such body an <inertial> element, provide the mesh files, or load with "
              "ignore=('meshes',) to leave that mass out)")
    for g in swap:
        g.type, g.meshname, g.hfieldname = GT.mjGEOM_SPHERE, "", ""
        g.size = [1e-3, 0.0, 0.0]
        g.mass, g.density = 0.0, 0.0
    for kind, items in (("mesh", spec.meshes), ("hfield", spec.hfields), ("skin", spec.skins),
                        ("texture", spec.textures)):
        for el in list(items):
            if el.file in absent.get(kind, ()):
                spec.delete(el)
    if heavy:
        absent["massless bodies"] = list(heavy)
    return absent


# ------------------------------------------------------------------------ joint equalities
def joint_couplings(mj, records: list) -> dict[int, tuple[int, float, float]]:
    """``{joint: (master, scale, offset)}`` from the active joint equalities.

    MuJoCo's coupling of joint1 to joint2 is ``q₁ − ref₁ = c₀ + c₁ (q₂ − ref₂) + c₂ (q₂ − ref₂)²
    + …`` (``ref``: ``qpos0``).  The linear ones (``c₂ = c₃ = c₄ = 0``, ``c₁ ≠ 0``) are exact
    mimic couplings ``q₁ = c₁ q₂ + (c₀ + ref₁ − c₁ ref₂)``; they are joined into groups of
    joints, and in each group the joint earliest in the tree is the independent one (a coupling
    is inverted where needed: ``q₂ = (q₁ − o) / c₁``), so the tree order of the MJCF does not
    matter.  Other joint equalities (a lock without ``joint2``, a polynomial of degree > 1, a
    second coupling closing a cycle) are recorded as metadata and the joints stay independent.
    """
    mujoco = _mujoco()
    JT = mujoco.mjtJoint
    edges: dict[int, list[tuple[int, float, float]]] = {}
    for e in range(mj.neq):
        if int(mj.eq_type[e]) != mujoco.mjtEq.mjEQ_JOINT:
            continue
        ename = _name(mj, mujoco.mjtObj.mjOBJ_EQUALITY, e, "equality")
        j1, j2 = int(mj.eq_obj1id[e]), int(mj.eq_obj2id[e])
        c = np.array(mj.eq_data[e][:5], dtype=float)
        rec = dict(name=ename, type="joint", active=bool(mj.eq_active0[e]), joint1=joint_name(mj, j1),
                   joint2=None if j2 < 0 else joint_name(mj, j2), polycoef=c.tolist())
        records.append(rec)
        why = None
        if not mj.eq_active0[e]:
            why = "inactive (active=\"false\")"
        elif j2 < 0:
            why = f"locks joint {rec['joint1']!r} at a constant (no joint2): not a mimic coupling"
        elif np.any(c[2:] != 0):
            why = (f"polynomial coupling of degree > 1 (polycoef {c.tolist()}): dqdyn's mimic joints "
                   "are linear, so both joints keep their own DoF")
        elif c[1] == 0:
            why = f"joint {rec['joint1']!r} held at a constant (c1 = 0): not a mimic coupling"
        elif any(int(mj.jnt_type[j]) not in (JT.mjJNT_HINGE, JT.mjJNT_SLIDE) for j in (j1, j2)):
            why = "couples a joint that is not a hinge or slide"
        if why is not None:
            rec.update({"as": "metadata", "why": why})
            continue
        ref1 = float(mj.qpos0[mj.jnt_qposadr[j1]])
        ref2 = float(mj.qpos0[mj.jnt_qposadr[j2]])
        s, o = float(c[1]), float(c[0] + ref1 - c[1] * ref2)
        rec.update({"as": "mimic", "why": "linear coupling"})
        edges.setdefault(j1, []).append((j2, s, o, rec))  # q1 = s q2 + o
        edges.setdefault(j2, []).append((j1, 1.0 / s, -o / s, rec))  # q2 = (q1 - o) / s
    out: dict[int, tuple[int, float, float]] = {}
    seen: set[int] = set()
    for root in sorted(edges):
        if root in seen:
            continue
        # breadth-first from the earliest joint of the group: q_j = s q_root + o
        seen.add(root)
        frontier = [(root, 1.0, 0.0)]
        used = set()
        while frontier:
            j, s, o = frontier.pop(0)
            for k, sk, ok, rec in edges[j]:  # q_j = sk q_k + ok  ->  q_k = (q_j - ok) / sk
                if id(rec) in used:
                    continue
                used.add(id(rec))
                if k in seen:
                    rec.update({"as": "metadata", "why": "closes a cycle of joint couplings "
                                "(redundant with the others)"})
                    continue
                seen.add(k)
                s2, o2 = s / sk, (o - ok) / sk
                out[k] = (root, s2, o2)
                frontier.append((k, s2, o2))
    return out


# ------------------------------------------------------------------------ loops and tendons
def loop_equalities(mj, records: list, frame_of_site) -> list:
    """`MJCFLoop` objects of the active ``connect`` / ``weld`` equalities; tendon (and
    flex) equalities are recorded as metadata."""
    mujoco = _mujoco()
    EQ = mujoco.mjtEq
    out = []
    for e in range(mj.neq):
        et = int(mj.eq_type[e])
        if et == EQ.mjEQ_JOINT:
            continue
        ename = _name(mj, mujoco.mjtObj.mjOBJ_EQUALITY, e, "equality")
        kind = EQ(et).name[5:].lower()
        o1, o2 = int(mj.eq_obj1id[e]), int(mj.eq_obj2id[e])
        data = np.array(mj.eq_data[e], dtype=float)
        rec = dict(name=ename, type=kind, active=bool(mj.eq_active0[e]), data=data[:11].tolist())
        records.append(rec)
        if et in (EQ.mjEQ_CONNECT, EQ.mjEQ_WELD):
            site = int(mj.eq_objtype[e]) == mujoco.mjtObj.mjOBJ_SITE
            if site:
                a, b = frame_of_site[o1], frame_of_site[o2]
                rec.update(site1=a, site2=b)
            else:
                a, b = body_name(mj, o1), body_name(mj, o2)
                rec.update(body1=a, body2=b)
            if not mj.eq_active0[e]:
                rec.update({"as": "metadata", "why": "inactive (active=\"false\")"})
                continue
            if et == EQ.mjEQ_CONNECT:
                # the anchor on body1 coincides with its image on body2 (both computed by MuJoCo)
                fa, fb = (a, b) if site else ((a, tuple(data[0:3])), (b, tuple(data[3:6])))
                loop = MJCFLoop(fa, fb, "3d", name=ename)
            else:
                from dqdyn.algebra.rotations import pose_from_rt

                if site:
                    fa, fb = a, b
                else:
                    # body2's anchor point and axes coincide with relpose (data[3:10]) in body1
                    rel = pose_from_rt(data[6:10] / np.linalg.norm(data[6:10]), data[3:6])
                    fa, fb = (a, tuple(rel)), (b, tuple(data[0:3]))
                loop = MJCFLoop(fa, fb, "6d" if data[10] != 0 else "3d", name=ename)
            rec.update({"as": "loop", "why": f"{loop.kind} loop closure", "constraint": loop})
            out.append(loop)
        else:
            if et == EQ.mjEQ_TENDON:
                rec.update(tendon1=_name(mj, mujoco.mjtObj.mjOBJ_TENDON, o1, "tendon"),
                           tendon2=None if o2 < 0 else _name(mj, mujoco.mjtObj.mjOBJ_TENDON, o2, "tendon"),
                           polycoef=data[:5].tolist())
            rec.update({"as": "metadata", "why": f"a {kind} equality couples lengths dqdyn does "
                        "not model; recorded only"})
    return out


def tendons(mj) -> list:
    mujoco = _mujoco()
    W = mujoco.mjtWrap
    out = []
    for t in range(mj.ntendon):
        joints, path = [], []
        for w in range(int(mj.tendon_adr[t]), int(mj.tendon_adr[t] + mj.tendon_num[t])):
            wt, oid, prm = int(mj.wrap_type[w]), int(mj.wrap_objid[w]), float(mj.wrap_prm[w])
            if wt == W.mjWRAP_JOINT:
                joints.append((joint_name(mj, oid), prm))
            elif wt == W.mjWRAP_SITE:
                path.append(("site", _name(mj, mujoco.mjtObj.mjOBJ_SITE, oid, "site")))
            elif wt in (W.mjWRAP_SPHERE, W.mjWRAP_CYLINDER):
                path.append(("geom", _name(mj, mujoco.mjtObj.mjOBJ_GEOM, oid, "geom")))
            elif wt == W.mjWRAP_PULLEY:
                path.append(("pulley", prm))
        out.append(dict(name=_name(mj, mujoco.mjtObj.mjOBJ_TENDON, t, "tendon"),
                        type="fixed" if joints and not path else "spatial", joints=joints, path=path,
                        stiffness=float(mj.tendon_stiffness[t]), damping=float(mj.tendon_damping[t]),
                        frictionloss=float(mj.tendon_frictionloss[t]),
                        limited=bool(mj.tendon_limited[t]), range=mj.tendon_range[t].tolist(),
                        armature=float(getattr(mj, "tendon_armature", np.zeros(mj.ntendon))[t]),
                        length0=float(mj.tendon_length0[t])))
    return out


_TRN_OBJ = {"joint": "mjOBJ_JOINT", "jointinparent": "mjOBJ_JOINT", "tendon": "mjOBJ_TENDON",
            "site": "mjOBJ_SITE", "slidercrank": "mjOBJ_SITE", "body": "mjOBJ_BODY"}


def actuators(mj) -> list:
    mujoco = _mujoco()
    out = []
    arm = getattr(mj, "actuator_armature", np.zeros(mj.nu))
    for a in range(mj.nu):
        trn = mujoco.mjtTrn(int(mj.actuator_trntype[a])).name[6:].lower()
        tid = int(mj.actuator_trnid[a][0])
        obj = getattr(mujoco.mjtObj, _TRN_OBJ.get(trn, "mjOBJ_UNKNOWN"))
        out.append(dict(name=_name(mj, mujoco.mjtObj.mjOBJ_ACTUATOR, a, "actuator"), transmission=trn,
                        target=None if tid < 0 else _name(mj, obj, tid, trn),
                        gear=mj.actuator_gear[a].tolist(),
                        gaintype=mujoco.mjtGain(int(mj.actuator_gaintype[a])).name[7:].lower(),
                        gainprm=mj.actuator_gainprm[a][:3].tolist(),
                        biastype=mujoco.mjtBias(int(mj.actuator_biastype[a])).name[7:].lower(),
                        biasprm=mj.actuator_biasprm[a][:3].tolist(),
                        ctrllimited=bool(mj.actuator_ctrllimited[a]), ctrlrange=mj.actuator_ctrlrange[a].tolist(),
                        forcelimited=bool(mj.actuator_forcelimited[a]),
                        forcerange=mj.actuator_forcerange[a].tolist(), armature=float(arm[a])))
    return out


# ------------------------------------------------------------------------ armature, options
def armature(mj, problems: list) -> np.ndarray:
    """MuJoCo's armature per dof: the joints' own plus ``gear² · armature`` of actuators that
    drive one hinge / slide joint (what ``mj_fullM`` adds to the diagonal).  Actuator armature
    through another transmission, and tendon armature, add a non-diagonal ``Jᵀ a J`` that dqdyn
    cannot represent: ``problems`` gets them."""
    mujoco = _mujoco()
    arm = np.array(mj.dof_armature, dtype=float)
    JT = mujoco.mjtJoint
    for a, v in enumerate(getattr(mj, "actuator_armature", np.zeros(mj.nu))):
        if v == 0:
            continue
        trn = int(mj.actuator_trntype[a])
        j = int(mj.actuator_trnid[a][0])
        aname = _name(mj, mujoco.mjtObj.mjOBJ_ACTUATOR, a, "actuator")
        if trn == mujoco.mjtTrn.mjTRN_JOINT and int(mj.jnt_type[j]) in (JT.mjJNT_HINGE, JT.mjJNT_SLIDE):
            arm[int(mj.jnt_dofadr[j])] += float(mj.actuator_gear[a][0]) ** 2 * float(v)
        else:
            problems.append(f"actuator {aname!r} has armature {v:g} through a "
                            f"{mujoco.mjtTrn(trn).name[6:].lower()} transmission (a rotor inertia "
                            "Jᵀ a J that is not on one joint)")
    for t, v in enumerate(getattr(mj, "tendon_armature", np.zeros(mj.ntendon))):
        if v != 0:
            problems.append(f"tendon {_name(mj, mujoco.mjtObj.mjOBJ_TENDON, t, 'tendon')!r} has "
                            f"armature {v:g} (an inertia Jᵀ a J along the tendon)")
    return arm


def gravity(mj) -> np.ndarray:
    """``<option gravity=>``, or zero when ``<flag gravity="disable"/>``."""
    mujoco = _mujoco()
    if int(mj.opt.disableflags) & int(mujoco.mjtDisableBit.mjDSBL_GRAVITY):
        return np.zeros(3)
    return np.array(mj.opt.gravity, dtype=float)


def ignored_features(mj, *, tendon_list, actuator_list, equalities, armature_ignored,
                     absent_files=None) -> dict:
    """Feature → why it does not enter M(q), C(q, v) v and g(q) (only features present)."""
    mujoco = _mujoco()
    out = {}

    def first(arr, namer):
        return namer(int(np.flatnonzero(arr)[0]))

    dofj = lambda d: joint_name(mj, int(mj.dof_jntid[d]))  # noqa: E731
    contact_off = int(mj.opt.disableflags) & int(mujoco.mjtDisableBit.mjDSBL_CONTACT)
    if not contact_off and mj.ngeom and (np.any(mj.geom_contype != 0) or np.any(mj.geom_conaffinity != 0)
                                         or mj.npair):
        out["contacts"] = ("geom contacts are constraint forces of the simulator, not rigid-body "
                           "dynamics (geom masses are already in the body inertias)")
    if np.any(mj.dof_damping != 0):
        out["damping"] = f"joint damping (e.g. on {first(mj.dof_damping, dofj)!r}) is a passive force"
    if np.any(mj.jnt_stiffness != 0):
        out["stiffness"] = ("joint springs (e.g. on "
                            f"{first(mj.jnt_stiffness, lambda j: joint_name(mj, j))!r}) are passive forces")
    if np.any(mj.dof_frictionloss != 0):
        out["frictionloss"] = (f"joint friction loss (e.g. on {first(mj.dof_frictionloss, dofj)!r}) is a "
                               "constraint force of the simulator")
    if np.any(mj.body_gravcomp != 0):
        out["gravcomp"] = (f"gravity compensation (e.g. on body "
                           f"{first(mj.body_gravcomp, lambda b: body_name(mj, b))!r}) is an applied force")
    if mj.opt.density != 0 or mj.opt.viscosity != 0 or np.any(mj.opt.wind != 0):
        out["fluid"] = "fluid forces (option density / viscosity / wind) are passive forces"
    if tendon_list:
        names = ", ".join(repr(t["name"]) for t in tendon_list[:6]) + (", …" if len(tendon_list) > 6 else "")
        out["tendons"] = (f"{len(tendon_list)} tendon(s) ({names}) act only through their springs, "
                          "dampers, limits and actuators (kept in the info's tendons)")
    if actuator_list:
        out["actuators"] = (f"{len(actuator_list)} actuator(s): dqdyn's τ is the generalized force "
                            "itself (transmissions and gains kept in the info's actuators)")
    meta = [r for r in equalities if r.get("as") == "metadata" and r["active"]]
    if meta:
        out["equalities"] = ("equalities kept as metadata only: " + "; ".join(
            f"{r['name']!r} ({r['type']}: {r['why']})" for r in meta))
    if armature_ignored:
        out["armature"] = armature_ignored
    absent_files = dict(absent_files or {})
    light = absent_files.pop("massless bodies", None)
    if light:
        out["mesh mass"] = (f"ignore=('meshes',): the share of mass and inertia that absent meshes would give "
                            f"bodies {', '.join(map(repr, light))} is left out")
    for kind, files in absent_files.items():
        what = {"mesh": "mesh", "hfield": "height-field", "skin": "skin", "texture": "texture"}[kind]
        eg = ", ".join(repr(f) for f in files[:3]) + (", …" if len(files) > 3 else "")
        out[f"{kind} files"] = (f"{len(files)} {what} file(s) absent ({eg}): their geometry is left out"
                                + ("" if light else " (no mass depends on them)") if kind != "texture" else
                                f"{len(files)} texture file(s) absent ({eg}): appearance only")
    return out


__all__ = ["MJCFInfo", "MJCFLoop", "strip_absent_files", "joint_couplings", "loop_equalities", "tendons", "actuators",
           "armature", "gravity", "ignored_features"]
