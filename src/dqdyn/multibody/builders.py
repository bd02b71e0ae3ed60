"""Building models in code: `ModelBuilder`, an n-link chain and random trees.

>>> b = ModelBuilder("arm")
>>> b.add_body("link1", joint="revolute", axis=(0, 0, 1), mass=1.0, com=(0.1, 0, 0),
...            inertia=np.diag([0.01, 0.02, 0.02]))
'link1'
>>> b.add_body("link2", parent="link1", joint="prismatic", axis=(1, 0, 0), xyz=(0.2, 0, 0),
...            mass=0.5, inertia=np.eye(3) * 1e-3)
'link2'
>>> model = b.build()
>>> model.nq, model.nv
(2, 2)

A body added with ``joint="fixed"`` is merged into its parent (masses, CoMs and inertias combine
by the parallel-axis theorem) and stays available as a named frame.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence

import numpy as np

from dqdyn.algebra.rotations import (
    matrix_from_quat,
    pose_from_matrix,
    pose_from_rt,
    quat_from_axis_angle,
    translation_of,
)
from dqdyn.errors import ModelError, UnknownNameError
from dqdyn.multibody.joints import FIXED, FREE, JOINT_DIMS, JOINT_TYPE_NAMES, JOINT_TYPES, PLANAR, SPHERICAL
from dqdyn.multibody.model import DifferentialDrive, Model, armature_values, pack_model

_IDENT8 = np.array([1.0, 0, 0, 0, 0, 0, 0, 0])
_ORIGIN = _IDENT8.copy()  # (shared, read-only: the pose of a body's own link in the body)
_ORIGIN.setflags(write=False)


def _qm(a0, a1, a2, a3, b0, b1, b2, b3):
    """Hamilton product of two quaternions given by their components (plain floats: the
    builder places one joint at a time, where numpy's per-call cost dominates)."""
    return (a0 * b0 - a1 * b1 - a2 * b2 - a3 * b3, a0 * b1 + a1 * b0 + a2 * b3 - a3 * b2,
            a0 * b2 - a1 * b3 + a2 * b0 + a3 * b1, a0 * b3 + a1 * b2 - a2 * b1 + a3 * b0)


def _pose_mul(a, b):
    a0, a1, a2, a3, a4, a5, a6, a7 = a.tolist()
    b0, b1, b2, b3, b4, b5, b6, b7 = b.tolist()
    d = _qm(a0, a1, a2, a3, b4, b5, b6, b7)
    e = _qm(a4, a5, a6, a7, b0, b1, b2, b3)
    return np.array(_qm(a0, a1, a2, a3, b0, b1, b2, b3)
                    + (d[0] + e[0], d[1] + e[1], d[2] + e[2], d[3] + e[3]))


def _pose_xyz_rpy(xyz, rpy) -> np.ndarray:
    """``pose_from_rt(quat_from_rpy(rpy), xyz)`` in plain floats (URDF's ``R = R_z R_y R_x``)."""
    hr, hp, hy = 0.5 * rpy[0], 0.5 * rpy[1], 0.5 * rpy[2]
    cr, sr, cp, sp, cy, sy = (math.cos(hr), math.sin(hr), math.cos(hp), math.sin(hp),
                              math.cos(hy), math.sin(hy))
    r = _qm(cy, 0.0, 0.0, sy, *_qm(cp, 0.0, sp, 0.0, cr, sr, 0.0, 0.0))
    d = _qm(0.0, 0.5 * xyz[0], 0.5 * xyz[1], 0.5 * xyz[2], *r)
    return np.array(r + d)


def _as_placement(placement, xyz, rpy, what: str) -> np.ndarray:
    if placement is not None:
        p = np.asarray(placement, dtype=float)
        if p.shape == (4, 4):
            if not np.all(np.isfinite(p)):
                raise ModelError(f"{what}: placement contains NaN/inf")
            R = p[:3, :3]
            if not np.allclose(R @ R.T, np.eye(3), atol=1e-6) or np.linalg.det(R) < 0:
                raise ModelError(f"{what}: placement's 3×3 block is not a rotation matrix")
            return pose_from_matrix(p)
        if p.shape != (8,):
            raise ModelError(
                f"{what}: placement must be a unit dual quaternion (8,) or a 4×4 homogeneous "
                f"matrix, got shape {p.shape}"
            )
        if not np.all(np.isfinite(p)):
            raise ModelError(f"{what}: placement contains NaN/inf")
        if abs(np.linalg.norm(p[:4]) - 1.0) > 1e-6 or abs(p[:4] @ p[4:]) > 1e-6:
            raise ModelError(f"{what}: placement {p} is not a unit dual quaternion")
        return p / np.linalg.norm(p[:4])
    xyz = [0.0, 0.0, 0.0] if xyz is None else np.asarray(xyz, dtype=float).reshape(3).tolist()
    rpy = [0.0, 0.0, 0.0] if rpy is None else np.asarray(rpy, dtype=float).reshape(3).tolist()
    if not all(map(math.isfinite, xyz + rpy)):
        raise ModelError(f"{what}: xyz/rpy contain NaN/inf")
    return _pose_xyz_rpy(xyz, rpy)


#: ``inertia_check`` of a caller that has checked the inertias itself (the URDF loader, in one
#: batched call): ``add_body`` then does not check them again
CHECKED = "checked by the caller"


def _check_inertia(name, mass, com, inertia, mode="error"):
    if mode is CHECKED:
        return
    if not math.isfinite(mass) or mass < 0:
        raise ModelError(f"body {name!r}: mass must be a finite number >= 0, got {mass}")
    if com.shape != (3,) or not np.isfinite(com).all():
        raise ModelError(f"body {name!r}: com must be a finite 3-vector, got {com}")
    if inertia.shape != (3, 3) or not np.isfinite(inertia).all():
        raise ModelError(f"body {name!r}: inertia must be a finite 3×3 matrix, got shape {inertia.shape}")
    absI = np.abs(inertia)
    # (np.allclose(inertia, inertia.T, atol=…), without its per-call cost)
    if not (np.abs(inertia - inertia.T) <= 1e-10 * max(1.0, absI.max()) + 1e-5 * absI.T).all():
        raise ModelError(f"body {name!r}: inertia must be symmetric")
    if mode == "off":
        return
    ev = np.linalg.eigvalsh(inertia)  # (ascending)
    a, b, c = ev.tolist()
    tol = 1e-9 * max(1.0, c)
    problem, triangle = None, False
    if a < -tol:
        problem = f"body {name!r}: inertia must be positive semi-definite (eigenvalues {ev})"
    else:
        if a + b < c - 1e-6 * max(1.0, c):
            triangle = True
            problem = (
                f"body {name!r}: inertia violates the triangle inequality (principal moments "
                f"{ev}); no rigid body has it"
            )
    if problem is not None:
        if mode == "warn" or (mode == "lenient" and triangle):
            warnings.warn(f"{problem} (accepted: inertia_check={mode!r})", UserWarning,
                          stacklevel=4)
        else:
            raise ModelError(problem + "; pass inertia_check='warn' to accept it")


def combine_inertia(m1, c1, I1, m2, c2, I2):
    """Mass, CoM and CoM inertia of two bodies expressed in the same frame (parallel axis)."""
    m = m1 + m2
    if m <= 0:  # massless parts: rotational inertias still add (about the same point)
        return 0.0, np.asarray(c1, dtype=float), np.asarray(I1) + np.asarray(I2)
    c = (m1 * c1 + m2 * c2) / m
    out = np.zeros((3, 3))
    for mk, ck, Ik in ((m1, c1, I1), (m2, c2, I2)):
        d = ck - c
        out += Ik + mk * (d @ d * np.eye(3) - np.outer(d, d))
    return m, c, 0.5 * (out + out.T)


class ModelBuilder:
    """Accumulates bodies, joints and frames, then `build` s an immutable `Model`."""

    def __init__(
        self,
        name: str = "robot",
        gravity: Sequence[float] = (0.0, 0.0, -9.81),
        *,
        inertia_check: str = "error",
    ):
        """``inertia_check``: ``"error"`` (default) rejects an inertia that is not positive
        semi-definite or breaks the triangle inequality; ``"warn"`` accepts it with a warning;
        ``"off"`` skips the physical-validity checks (shapes and finiteness are always checked);
        ``"lenient"`` rejects an inertia that is not positive semi-definite and accepts one that
        only breaks the triangle inequality with a warning (`dqdyn.load_urdf`'s default)."""
        if inertia_check not in ("error", "warn", "off", "lenient"):
            raise ModelError(f"inertia_check must be 'error', 'warn', 'lenient' or 'off', got "
                             f"{inertia_check!r}")
        self.inertia_check = inertia_check
        self.name = name
        from dqdyn._engine.checks import real_array

        self.gravity = real_array(gravity, "gravity", (3,), "a 3-vector in the world frame, m/s²")
        self._bodies: list[dict] = [dict(name="world", joint_name="universe")]
        # link/frame name -> (body index, pose of the link frame in the body frame)
        self._links: dict[str, tuple[int, np.ndarray]] = {"world": (0, _IDENT8.copy())}
        self._frames: list[tuple[str, int, np.ndarray]] = []
        self._constraints: list = []
        self._joint_names: set[str] = set()
        self._body_of_joint: dict[str, int] = {}  # moving joint name -> body index
        # inertia welded to the world (mass, CoM in world, CoM inertia in world axes)
        self._welded = (0.0, np.zeros(3), np.zeros((3, 3)))

    # -------------------------------------------------------------------------------- bodies
    def add_body(
        self,
        name: str,
        parent: str = "world",
        joint: str = "revolute",
        *,
        joint_name: str | None = None,
        axis: Sequence[float] = (0.0, 0.0, 1.0),
        pitch: float = 0.0,
        placement=None,
        xyz=None,
        rpy=None,
        mass: float = 0.0,
        com: Sequence[float] = (0.0, 0.0, 0.0),
        inertia=None,
        lower: float = -np.inf,
        upper: float = np.inf,
        velocity: float = np.inf,
        effort: float = np.inf,
        mimic: tuple[str, float, float] | None = None,
        armature=0.0,
    ) -> str:
        """Add body ``name`` moved relative to link ``parent`` by a joint.

        ``placement`` (unit dual quaternion or 4×4 matrix) — or ``xyz``/``rpy`` — places the joint
        frame in the parent link frame.  ``axis`` is in the joint frame.  ``com`` and ``inertia``
        (about the CoM, body axes) are in the new body's frame.  ``mimic=(master, scale, offset)``
        makes a 1-DoF joint follow ``scale·q_master + offset``.  ``armature`` (rotor inertia,
        kg·m² or kg; see `Model.armature`): a scalar for every DoF of the joint, as MuJoCo's
        joint ``armature``, or one value per DoF; finite and non-negative.  A mimic joint's is
        folded into its master's, times ``scale²``.
        """
        if name in self._links:
            raise ModelError(f"a body or link named {name!r} already exists")
        if parent not in self._links:
            raise UnknownNameError(f"parent {parent!r} of body {name!r} does not exist")
        jt_name = joint.lower()
        if jt_name not in JOINT_TYPES:
            raise ModelError(
                f"body {name!r}: unknown joint type {joint!r}; expected one of "
                f"{sorted(set(JOINT_TYPES))}"
            )
        jt = JOINT_TYPES[jt_name]
        jname = joint_name or f"{name}_joint"
        if jname in self._joint_names:
            raise ModelError(f"a joint named {jname!r} already exists")
        X = _as_placement(placement, xyz, rpy, f"joint {jname!r}")
        ax = np.asarray(axis, dtype=float).reshape(3)
        nrm = math.hypot(*ax.tolist())
        if jt not in (PLANAR, SPHERICAL, FREE, FIXED) and (not math.isfinite(nrm) or nrm < 1e-12):
            raise ModelError(f"joint {jname!r}: axis must be a non-zero finite 3-vector, got {axis}")
        ax = ax / nrm if nrm > 0 else np.array([0.0, 0.0, 1.0])
        com = np.asarray(com, dtype=float).reshape(3)
        inertia = np.zeros((3, 3)) if inertia is None else np.asarray(inertia, dtype=float)
        if inertia.shape == (3,):
            inertia = np.diag(inertia)
        if inertia.shape == (6,):  # ixx, ixy, ixz, iyy, iyz, izz
            ixx, ixy, ixz, iyy, iyz, izz = inertia
            inertia = np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])
        mass = float(mass)
        _check_inertia(name, mass, com, inertia, self.inertia_check)
        if not math.isfinite(pitch):
            raise ModelError(f"joint {jname!r}: pitch must be finite")
        arm = (np.zeros(max(JOINT_DIMS[jt][1], 1)) if type(armature) is float and armature == 0.0
               else armature_values(jname, armature, max(JOINT_DIMS[jt][1], 1)))
        if jt == FIXED and np.any(arm != 0):
            raise ModelError(f"joint {jname!r}: a fixed joint has no DoF to carry armature "
                             f"{arm.tolist()}")
        pbody, ppose = self._links[parent]
        if ppose is not _ORIGIN:
            X = _pose_mul(ppose, X)  # joint frame in the parent *body* frame
        self._joint_names.add(jname)
        if jt == FIXED:
            self._attach(pbody, X, mass, com, inertia)
            self._links[name] = (pbody, X)
            self._frames.append((name, pbody, X))
            return name
        mm = (-1, 1.0, 0.0)
        if mimic is not None:
            master, scale, offset = mimic
            if jt not in (JOINT_TYPES["revolute"], JOINT_TYPES["prismatic"], JOINT_TYPES["helical"]):
                raise ModelError(f"joint {jname!r}: only 1-DoF joints can mimic another joint")
            idx = self._body_of_joint.get(master)
            if idx is None:
                raise UnknownNameError(
                    f"joint {jname!r} mimics {master!r}, which is not an earlier joint of the model"
                )
            if self._bodies[idx]["jtype"] not in (1, 2, 3) or self._bodies[idx]["mimic"][0] >= 0:
                raise ModelError(
                    f"joint {jname!r} mimics {master!r}, which must be an independent 1-DoF joint"
                )
            mm = (idx, float(scale), float(offset))
        self._bodies.append(
            dict(
                name=name,
                joint_name=jname,
                parent=pbody,
                jtype=jt,
                placement=X,
                axis=ax,
                pitch=float(pitch),
                mass=mass,
                com=com,
                inertia=inertia,
                limits=(float(lower), float(upper), float(velocity), float(effort)),
                mimic=mm,
                armature=arm,
            )
        )
        idx = len(self._bodies) - 1
        self._body_of_joint[jname] = idx
        self._links[name] = (idx, _ORIGIN)
        self._frames.append((name, idx, _ORIGIN))
        return name

    def _attach(self, body: int, X, mass, com, inertia) -> None:
        """Merge a rigid part (``com`` / ``inertia`` in the frame ``X`` of body ``body``) into
        that body; on the world (body 0) into the welded inertia (``Model.welded_inertia``)."""
        if mass == 0.0 and not np.any(inertia):
            return
        R = matrix_from_quat(X[:4])
        c2 = translation_of(X) + R @ com
        I2 = R @ inertia @ R.T
        if body > 0:
            b = self._bodies[body]
            b["mass"], b["com"], b["inertia"] = combine_inertia(
                b["mass"], b["com"], b["inertia"], mass, c2, I2)
        else:
            self._welded = combine_inertia(*self._welded, mass, c2, I2)

    def add_inertia(self, parent: str, mass: float, com: Sequence[float] = (0.0, 0.0, 0.0),
                    inertia=None) -> None:
        """Rigidly attach a part of ``mass``, CoM ``com`` and inertia ``inertia`` (about the
        CoM; both in the frame of link/frame ``parent``) to ``parent``: merged into the body that
        carries ``parent`` (parallel-axis theorem), or, on the world, kept as the model's
        `welded_inertia` (it moves with the model when the
        model is mounted on a body by `add_model`)."""
        if parent not in self._links:
            raise UnknownNameError(f"parent {parent!r} of the attached inertia does not exist")
        com = np.asarray(com, dtype=float).reshape(3)
        inertia = np.zeros((3, 3)) if inertia is None else np.asarray(inertia, dtype=float)
        if inertia.shape == (3,):
            inertia = np.diag(inertia)
        _check_inertia(f"inertia attached to {parent}", float(mass), com, inertia,
                       self.inertia_check)
        self._attach(*self._links[parent], float(mass), com, inertia)

    def add_model(self, model: Model, parent: str = "world", placement=None, *, prefix: str = "",
                  xyz=None, rpy=None) -> dict[str, str]:
        """Attach a whole ``model`` (a subsystem) to link/frame ``parent`` of this builder.

        The subsystem's world frame is placed at ``placement`` (or ``xyz``/``rpy``) in
        ``parent``; its bodies, joints (with limits and mimic couplings) and frames are copied
        with names prefixed by ``prefix``.  Its q / v entries follow this builder's earlier ones
        in the subsystem's own order, so the assembled ``q`` is the concatenation of the
        subsystems' ``q`` (thesis ch. 5: the monolithic counterpart of a modular assembly).
        The subsystem's `welded_inertia` (e.g. its fixed-base
        root link) is rigidly attached at its world frame: merged into the body carrying
        ``parent``, or welded to this builder's world when ``parent`` is on the world — as
        Pinocchio's ``appendModel`` does with the universe inertia.
        Returns the map from the subsystem's link/frame names to the new names.
        """
        if parent not in self._links:
            raise UnknownNameError(f"parent {parent!r} of the attached model does not exist")
        names = {"world": parent}
        if placement is not None or xyz is not None or rpy is not None:
            base = prefix + "world"
            if base in self._links:
                raise ModelError(f"a frame named {base!r} already exists (use another prefix)")
            names["world"] = self.add_frame(base, parent, placement, xyz=xyz, rpy=rpy)
        for i in range(1, model.nbodies + 1):
            jt = int(model.joint_type[i])
            iq, nq = int(model.idx_q[i]), int(model.joint_nq[i])
            lim = {}
            if nq == 1:
                lim = dict(lower=model.q_lower[iq], upper=model.q_upper[iq])
            if model.joint_nv[i] == 1:
                iv = int(model.idx_v[i])
                lim.update(velocity=model.velocity_limit[iv], effort=model.effort_limit[iv])
            mimic = None
            if model.joint_nv[i] == 0 and jt != FIXED:
                master = next(k for k in range(1, i) if model.joint_nv[k] == 1
                              and model.idx_v[k] == model.idx_v[i])
                mimic = (prefix + model.joint_names_all[master], float(model.mimic_scale[i]),
                         float(model.mimic_offset[i]))
            names[model.body_names[i]] = self.add_body(
                prefix + model.body_names[i], names[model.body_names[int(model.parent[i])]],
                JOINT_TYPE_NAMES[jt], joint_name=prefix + model.joint_names_all[i],
                axis=model.joint_axis[i], pitch=float(model.joint_pitch[i]),
                placement=np.array(model.joint_placement[i]), mass=float(model.mass[i]),
                com=np.array(model.com[i]), inertia=np.array(model.inertia[i]), mimic=mimic,
                armature=model.armature[int(model.idx_v[i]):int(model.idx_v[i] + model.joint_nv[i])]
                if model.joint_nv[i] else 0.0, **lim)
        for f, b, pl in zip(model.frame_names, model.frame_body, model.frame_placement):
            if f in names:
                continue
            names[f] = self.add_frame(prefix + f, names[model.body_names[int(b)]], np.array(pl))
        wm, wc, wI = model.welded_inertia
        self._attach(*self._links[names["world"]], wm, np.array(wc), np.array(wI))
        return names

    def add_frame(self, name: str, parent: str, placement=None, *, xyz=None, rpy=None) -> str:
        """Add a named frame rigidly attached to link/frame ``parent``."""
        if name in self._links:
            raise ModelError(f"a frame named {name!r} already exists")
        if parent not in self._links:
            raise UnknownNameError(f"parent {parent!r} of frame {name!r} does not exist")
        X = _as_placement(placement, xyz, rpy, f"frame {name!r}")
        b, p = self._links[parent]
        X = _pose_mul(p, X)
        self._links[name] = (b, X)
        self._frames.append((name, b, X))
        return name

    def add_constraint(self, constraint) -> None:
        """Declare a constraint on the model (e.g. `DifferentialDrive`)."""
        if isinstance(constraint, DifferentialDrive):
            k = next(
                (i for i, b in enumerate(self._bodies) if b["joint_name"] == constraint.joint), None
            )
            if k is None or self._bodies[k]["jtype"] != PLANAR:
                raise ModelError(
                    f"differential-drive constraint: joint {constraint.joint!r} must be a planar joint"
                )
        self._constraints.append(constraint)

    def build(self) -> Model:
        bodies = self._bodies
        frames = list(self._frames)
        if not any(f[0] == "world" for f in frames):
            frames.insert(0, ("world", 0, _IDENT8.copy()))
        get = lambda key, default: [b.get(key, default) for b in bodies]  # noqa: E731
        return pack_model(
            name=self.name,
            body_names=[b["name"] for b in bodies],
            joint_names=[b["joint_name"] for b in bodies],
            parent=[-1] + [b["parent"] for b in bodies[1:]],
            jtype=[0] + [b["jtype"] for b in bodies[1:]],
            placement=[_IDENT8] + [b["placement"] for b in bodies[1:]],
            axis=get("axis", np.zeros(3)),
            pitch=get("pitch", 0.0),
            mass=get("mass", 0.0),
            com=get("com", np.zeros(3)),
            inertia=get("inertia", np.zeros((3, 3))),
            mimic_master=[-1] + [b["mimic"][0] for b in bodies[1:]],
            mimic_scale=[1.0] + [b["mimic"][1] for b in bodies[1:]],
            mimic_offset=[0.0] + [b["mimic"][2] for b in bodies[1:]],
            frame_names=[f[0] for f in frames],
            frame_body=[f[1] for f in frames],
            frame_placement=np.array([f[2] for f in frames]).reshape(-1, 8),
            gravity=self.gravity,
            limits=[None] + [b["limits"] for b in bodies[1:]],
            constraints=self._constraints,
            armature=[None] + [b.get("armature") for b in bodies[1:]],
            welded=np.concatenate([[self._welded[0]], self._welded[1], np.ravel(self._welded[2])]),
        )


# ------------------------------------------------------------------------------------ generators
def _random_inertia(rng, scale=1.0):
    """A random physically valid (triangle inequality) CoM inertia tensor."""
    d = rng.uniform(0.2, 1.0, 3) * scale  # half-extents of a box-like body
    m = 1.0
    moments = m / 3.0 * np.array([d[1] ** 2 + d[2] ** 2, d[0] ** 2 + d[2] ** 2, d[0] ** 2 + d[1] ** 2])
    r = quat_from_axis_angle(rng.normal(size=3), rng.uniform(0, np.pi))
    R = matrix_from_quat(r)
    return R @ np.diag(moments) @ R.T


def serial_chain(
    n: int,
    joint: str = "revolute",
    *,
    link_length: float = 0.3,
    link_mass: float = 1.0,
    seed: int | None = 0,
    gravity=(0.0, 0.0, -9.81),
) -> Model:
    """An ``n``-link serial chain; joint axes alternate z, y, x (a generic spatial chain).

    With ``seed`` set, link offsets and inertias are randomly perturbed (reproducibly).
    """
    if n < 1:
        raise ModelError(f"serial_chain: n must be >= 1, got {n}")
    rng = np.random.default_rng(seed)
    b = ModelBuilder(f"chain{n}", gravity=gravity)
    parent = "world"
    axes = [(0, 0, 1), (0, 1, 0), (1, 0, 0)]
    for i in range(n):
        name = f"link{i + 1}"
        jitter = rng.uniform(-0.05, 0.05, 3) if seed is not None else np.zeros(3)
        b.add_body(
            name,
            parent,
            joint,
            joint_name=f"joint{i + 1}",
            axis=axes[i % 3],
            xyz=(np.array([0.0, 0.0, link_length]) if i else np.zeros(3)) + (jitter if i else 0),
            mass=link_mass,
            com=np.array([0.0, 0.0, link_length / 2]) + 0.3 * jitter,
            inertia=_random_inertia(rng, 0.1) * link_mass if seed is not None else
            np.diag([1e-2, 1e-2, 1e-3]) * link_mass,
            lower=-np.pi,
            upper=np.pi,
        )
        parent = name
    b.add_frame("tool", parent, xyz=(0, 0, link_length))
    return b.build()


ALL_JOINT_TYPES = ("revolute", "prismatic", "helical", "cylindrical", "planar", "spherical", "free")


def random_tree(
    n: int,
    joint_types: Sequence[str] = ALL_JOINT_TYPES,
    *,
    seed: int = 0,
    branching: float = 0.5,
    gravity=(0.0, 0.0, -9.81),
    fixed_every: int = 0,
) -> Model:
    """A random kinematic tree of ``n`` bodies with joint types drawn from ``joint_types``.

    Every listed type appears at least once when ``n >= len(joint_types)``.  ``branching`` is the
    probability that a body attaches to a random earlier body rather than to the previous one.
    ``fixed_every=k`` adds a fixed (merged) link after every k-th body, to exercise merging.
    """
    rng = np.random.default_rng(seed)
    b = ModelBuilder(f"random_tree{n}_s{seed}", gravity=gravity)
    types = list(joint_types)
    order = types + [types[k] for k in rng.integers(0, len(types), max(0, n - len(types)))]
    order = order[:n]
    rng.shuffle(order)
    names = ["world"]
    for i, jt in enumerate(order):
        parent = names[-1] if rng.random() > branching else names[rng.integers(0, len(names))]
        name = f"b{i + 1}"
        r = quat_from_axis_angle(rng.normal(size=3), rng.uniform(-np.pi, np.pi))
        X = pose_from_rt(r, rng.uniform(-0.3, 0.3, 3))
        b.add_body(
            name,
            parent,
            jt,
            joint_name=f"j{i + 1}",
            axis=rng.normal(size=3),
            pitch=rng.uniform(-0.2, 0.2),
            placement=X,
            mass=rng.uniform(0.5, 2.0),
            com=rng.uniform(-0.2, 0.2, 3),
            inertia=_random_inertia(rng, 0.3),
            lower=-2.0,
            upper=2.0,
        )
        names.append(name)
        if fixed_every and (i + 1) % fixed_every == 0:
            fx = f"{name}_fixed"
            b.add_body(
                fx,
                name,
                "fixed",
                joint_name=f"{fx}_joint",
                placement=pose_from_rt(
                    quat_from_axis_angle(rng.normal(size=3), rng.uniform(0, 1)),
                    rng.uniform(-0.2, 0.2, 3),
                ),
                mass=rng.uniform(0.1, 1.0),
                com=rng.uniform(-0.1, 0.1, 3),
                inertia=_random_inertia(rng, 0.2),
            )
    return b.build()


__all__ = ["ModelBuilder", "serial_chain", "random_tree", "combine_inertia", "ALL_JOINT_TYPES"]
