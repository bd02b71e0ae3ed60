"""The immutable kinematic-tree `Model` (struct of arrays).

Bodies are numbered ``0 … nbodies`` in topological order (``parent[i] < i``); body 0 is the
fixed world (ground).  Body ``i ≥ 1`` is moved by joint ``i`` relative to its parent.  Per body the
model stores:

* the joint: type, axis (unit, in the joint frame), pitch (helical), placement ``x_J^λ`` (unit DQ:
  pose of the joint frame in the parent body frame), and the slices of ``q`` and ``v`` it owns;
* the inertia: mass ``m``, CoM position ``c`` in the body frame, and the rotational inertia
  ``Ī_c`` about the CoM in body axes (the quaternionic inertia tensor of [Silva2022, eq. (11)] has the
  rows of ``Ī_c`` as its three pure quaternions).

Named frames (tool, wheel axle, every URDF link, …) are ``(body, placement)`` pairs.

The compiled kernels read the model through two packed tables, ``model.mi`` (integers) and
``model.mf`` (floats), one row per body, whose columns are the constants below; they exist so
that a kernel call passes two arrays instead of twenty (numba's dispatch cost grows with the
argument count).  The named attributes are read-only views of the same data.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace

import numpy as np

from dqdyn.algebra._core import jit
from dqdyn.errors import ModelError, ShapeError, UnknownNameError
from dqdyn.multibody.joints import FREE, JOINT_DIMS, JOINT_TYPE_NAMES, PLANAR, SPHERICAL

# integer table columns
MI_PARENT, MI_JTYPE, MI_IQ, MI_NQ, MI_IV, MI_NV = 0, 1, 2, 3, 4, 5
MI_COLS = 6
# float table columns
MF_PLACEMENT = 0  # 8 entries
MF_AXIS = 8  # 3
MF_PITCH = 11
MF_MASS = 12
MF_COM = 13  # 3
MF_INERTIA = 16  # 9 (row-major Ī_c)
MF_SCALE = 25  # mimic multiplier (1 for ordinary joints)
MF_OFFSET = 26  # mimic offset (0)
MF_ARMATURE = 27  # 6: armature (rotor inertia) of the joint's DoFs, in the order of v (0)
MF_COLS = 33
#: columns per body of `Model._scratch`, the workspace of the single-state kernels
SCRATCH_COLS = 192
#: row 0 (the world) has no joint: its axis slot holds the gravity vector, so that kernels get
#: gravity without one more argument (numba's dispatch cost grows with the argument count)
MF_GRAVITY = MF_AXIS
# row 0 of mi: its (empty) q and v slices start at nq and nv, so kernels can check input lengths
# without extra arguments: mi[0, MI_IQ] == nq, mi[0, MI_IV] == nv


@dataclass(frozen=True)
class DifferentialDrive:
    """Rolling without slipping of a differential-drive base (declared on a planar joint).

    The base moves by a planar joint ``(x, y, φ)``; the wheels' axle midpoint sits at
    ``axle_offset`` (x, y in the base body frame).  The velocity of that point along the axle
    direction is zero ([Silva2022, §4.5] / [Silva2022thesis, App. A]).  Its dynamics come with the
    constrained-dynamics functions; the model only declares it.
    """

    joint: str
    axle_offset: tuple[float, float] = (0.0, 0.0)
    wheel_radius: float = 0.0
    track_width: float = 0.0


@dataclass(frozen=True, eq=False)
class Model:
    """A kinematic tree with inertias, joints and named frames.  Build with
    `ModelBuilder`, `dqdyn.load_urdf` or
    `dqdyn.parsers.dh.serial_from_dh`; never mutated afterwards."""

    name: str
    body_names: tuple[str, ...]
    joint_names_all: tuple[str, ...]  # per body (index 0: "universe")
    mi: np.ndarray
    mf: np.ndarray
    frame_names: tuple[str, ...]
    frame_body: np.ndarray
    frame_placement: np.ndarray
    gravity: np.ndarray
    q_lower: np.ndarray
    q_upper: np.ndarray
    velocity_limit: np.ndarray
    effort_limit: np.ndarray
    nq: int
    nv: int
    constraints: tuple = ()
    #: inertia rigidly attached to the world (a fixed-base root link and what is fixed to it:
    #: Pinocchio's universe inertia): ``[m, c (3), Ī_c (9, row-major)]`` in world axes, the CoM
    #: ``c`` in the world frame.  No joint moves it, so no algorithm on this model sees it; it
    #: moves with the model when the model is mounted on a body (``ModelBuilder.add_model``).
    welded: np.ndarray = field(default_factory=lambda: np.zeros(13), repr=False)
    _index: dict = field(default_factory=dict, repr=False)
    #: workspace the single-state kernels behind the C call gate write their intermediate
    #: results into (like Pinocchio's ``Data``): (nbodies + 3) · SCRATCH_COLS + 2 nv floats.
    #: Calls hold the GIL, so one per model suffices; batches use their own.
    _scratch: np.ndarray = field(init=False, repr=False)

    # ------------------------------------------------------------------ construction helpers
    def __post_init__(self):
        # mi / mf stay writable *only* because numba's dispatch of read-only arrays is slower;
        # treat them as private: the named views below are read-only.
        for a in (
            self.frame_body,
            self.frame_placement,
            self.gravity,
            self.q_lower,
            self.q_upper,
            self.velocity_limit,
            self.effort_limit,
            self.welded,
        ):
            a.setflags(write=False)
        idx = self._index
        idx["body"] = {n: i for i, n in enumerate(self.body_names)}
        idx["joint"] = {n: i for i, n in enumerate(self.joint_names_all) if i > 0}
        idx["frame"] = {n: i for i, n in enumerate(self.frame_names)}
        self.mf[0, MF_GRAVITY : MF_GRAVITY + 3] = self.gravity
        nb1 = self.mi.shape[0]
        idx["mimic"] = tuple(
            self.joint_names_all[i]
            for i in range(1, nb1)
            if self.mi[i, MI_NV] == 0 and self.mi[i, MI_JTYPE] != 0
        )
        idx["joint_names"] = tuple(
            self.joint_names_all[i] for i in range(1, nb1) if self.mi[i, MI_NV] > 0
        )
        object.__setattr__(self, "_scratch", np.empty((nb1 + 2) * SCRATCH_COLS + 2 * self.nv))

    def __reduce__(self):
        # pickled as its constructor arguments: the per-process caches (``_index`` lookups,
        # workspaces, ``_scratch``) are rebuilt on load and the read-only flags restored
        return (_rebuild_model, (type(self), {f.name: getattr(self, f.name) for f in fields(self)
                                              if f.init and f.name != "_index"}))

    # ------------------------------------------------------------------ sizes and views
    @property
    def nbodies(self) -> int:
        """Number of moving bodies (body 0, the world, excluded)."""
        return self.mi.shape[0] - 1

    def _ro(self, a: np.ndarray) -> np.ndarray:
        a = a.view()
        a.flags.writeable = False
        return a

    @property
    def parent(self) -> np.ndarray:
        return self._ro(self.mi[:, MI_PARENT])

    @property
    def joint_type(self) -> np.ndarray:
        return self._ro(self.mi[:, MI_JTYPE])

    @property
    def idx_q(self) -> np.ndarray:
        return self._ro(self.mi[:, MI_IQ])

    @property
    def idx_v(self) -> np.ndarray:
        return self._ro(self.mi[:, MI_IV])

    @property
    def joint_nq(self) -> np.ndarray:
        return self._ro(self.mi[:, MI_NQ])

    @property
    def joint_nv(self) -> np.ndarray:
        return self._ro(self.mi[:, MI_NV])

    @property
    def joint_placement(self) -> np.ndarray:
        return self._ro(self.mf[:, MF_PLACEMENT : MF_PLACEMENT + 8])

    @property
    def joint_axis(self) -> np.ndarray:
        return self._ro(self.mf[:, MF_AXIS : MF_AXIS + 3])

    @property
    def joint_pitch(self) -> np.ndarray:
        return self._ro(self.mf[:, MF_PITCH])

    @property
    def mass(self) -> np.ndarray:
        return self._ro(self.mf[:, MF_MASS])

    @property
    def com(self) -> np.ndarray:
        return self._ro(self.mf[:, MF_COM : MF_COM + 3])

    @property
    def inertia(self) -> np.ndarray:
        """Rotational inertia about the CoM in body axes, shape (nbodies+1, 3, 3)."""
        return self._ro(self.mf[:, MF_INERTIA : MF_INERTIA + 9].reshape(-1, 3, 3))

    @property
    def mimic_scale(self) -> np.ndarray:
        return self._ro(self.mf[:, MF_SCALE])

    @property
    def mimic_offset(self) -> np.ndarray:
        return self._ro(self.mf[:, MF_OFFSET])

    @property
    def armature(self) -> np.ndarray:
        """Joint armature (rotor inertia), shape (nv,), in the order of ``v``: the kinetic energy
        ``½ Σ_j armature_j v_j²`` of rotors geared to the DoFs, added to the joint-space inertia
        matrix as ``M(q) + diag(armature)`` — Pinocchio's ``model.armature``, MuJoCo's joint
        ``armature``.  It enters every algorithm through the acceleration term only: ``rnea``
        adds ``armature ⊙ q̈``, ``mass_matrix`` its diagonal, ``aba`` the articulated-body
        ``D_i = S_iᵀ I_iᴬ S_i + diag(armature_i)`` [Featherstone2008, §7.3]; the bias terms
        (``nonlinear_effects``, ``gravity``, Coriolis) are unchanged, and so are the joint-frame
        wrenches of ``newton_euler`` (the rotor's reaction is not transmitted through the links).

        For a motor of rotor inertia ``J_m`` behind a gear of ratio ``N`` the value is
        ``N² J_m``: Spong's elastic-joint model with infinite joint stiffness reduces to the
        rigid model with this armature [Spong1987].  A mimic joint owns no DoF: the armature
        given to it is folded into its master's, scaled by ``scale²`` (its rotor turns at
        ``scale · q̇_master``).  Set from code with `with_armature`.
        """
        nb1 = self.mi.shape[0]
        out = np.zeros(self.nv)
        for i in range(1, nb1):
            n = int(self.mi[i, MI_NV])
            if n:
                iv = int(self.mi[i, MI_IV])
                out[iv:iv + n] = self.mf[i, MF_ARMATURE:MF_ARMATURE + n]
        out.setflags(write=False)
        return out

    def with_armature(self, values) -> Model:
        """This model with joint armature ``values`` (see `armature`), as a new model.

        ``values``: an array of shape (nv,) (the whole armature, in the order of ``v``), or a
        dict ``{joint name: value}`` whose value is a scalar (every DoF of the joint) or one value
        per DoF; joints the dict does not name keep their armature.  Values must be finite and
        non-negative (`ModelError` names the joint otherwise).
        """
        mf = self.mf.copy()
        nb1 = self.mi.shape[0]
        if isinstance(values, dict):
            for name, val in values.items():
                i = self.joint_index(name)
                n = int(self.mi[i, MI_NV])
                if n == 0:
                    kind = "a mimic joint" if self.mi[i, MI_JTYPE] != 0 else "a fixed joint"
                    raise ModelError(f"joint {name!r} is {kind} and owns no DoF: give its "
                                     "armature to the joint that owns the DoF")
                mf[i, MF_ARMATURE:MF_ARMATURE + n] = armature_values(name, val, n)
        else:
            try:
                a = np.asarray(values, dtype=float)
            except (TypeError, ValueError):
                a = None
            if a is None or a.shape != (self.nv,):
                raise ShapeError(f"armature must be an array of shape ({self.nv},) (one value per "
                                 f"DoF) or a {{joint name: value}} dict, got {values!r:.60}")
            for i in range(1, nb1):
                n = int(self.mi[i, MI_NV])
                if n:
                    iv = int(self.mi[i, MI_IV])
                    mf[i, MF_ARMATURE:MF_ARMATURE + n] = armature_values(
                        self.joint_names_all[i], a[iv:iv + n], n)
        return replace(self, mf=mf, _index={})

    @property
    def total_mass(self) -> float:
        """Mass of the moving bodies (the welded inertia, `welded_inertia`, excluded; as
        Pinocchio's ``computeTotalMass``)."""
        return float(self.mass[1:].sum())

    @property
    def welded_inertia(self) -> tuple[float, np.ndarray, np.ndarray]:
        """``(mass, com, inertia)`` rigidly attached to the world (a fixed-base root link and
        the links fixed to it): CoM in the world frame, inertia about the CoM in world axes."""
        w = self.welded
        return float(w[0]), self._ro(w[1:4]), self._ro(w[4:13].reshape(3, 3))

    @property
    def joint_names(self) -> tuple[str, ...]:
        """Names of the joints that own entries of q (in the order of q)."""
        return self._index["joint_names"]

    @property
    def mimic_joints(self) -> tuple[str, ...]:
        """Joints that follow another joint (URDF ``<mimic>``) and own no entry of q."""
        return self._index["mimic"]

    def independent_mimic(self):
        """This model with every mimic joint made an ordinary joint, and the map between the two.

        Returns ``(model_x, G, src, scale, offset)``: ``model_x`` has the same bodies, frames and
        inertias, with each mimic joint owning one entry of q and v, appended after this model's
        own in body order; ``q_x = [q, scale · q[src] + offset]``, ``v_x = G v`` (``G``
        (nv_x, nv): the identity on top, ``scale`` in the master's column below).  Whatever is
        defined on the independent joints carries over by the chain rule, e.g.
        ``τ = Gᵀ τ_x(q_x, G v, G q̈)`` and ``∂τ/∂q = Gᵀ (∂τ_x/∂q_x) G`` (1-DoF joints only
        mimic 1-DoF joints, whose tangent is the coordinate itself).  Cached on the model.
        """
        got = self._index.get("independent_mimic")
        if got is not None:
            return got
        mi, mf = self.mi.copy(), self.mf.copy()
        nq, nv = self.nq, self.nv
        mimic = [i for i in range(1, mi.shape[0]) if mi[i, MI_NV] == 0 and mi[i, MI_JTYPE] != 0]
        k = len(mimic)
        G = np.zeros((nv + k, nv))
        G[:nv] = np.eye(nv)
        src = np.array([mi[i, MI_IQ] for i in mimic], dtype=np.int64)
        scale = np.array([mf[i, MF_SCALE] for i in mimic])
        offset = np.array([mf[i, MF_OFFSET] for i in mimic])
        for j, i in enumerate(mimic):
            G[nv + j, mi[i, MI_IV]] = mf[i, MF_SCALE]
            mi[i, MI_IQ], mi[i, MI_IV], mi[i, MI_NQ], mi[i, MI_NV] = nq + j, nv + j, 1, 1
            mf[i, MF_SCALE], mf[i, MF_OFFSET] = 1.0, 0.0
        mi[0, MI_IQ], mi[0, MI_IV] = nq + k, nv + k
        inf = np.full(k, np.inf)
        mx = replace(
            self, name=self.name, mi=mi, mf=mf, _index={},
            q_lower=np.concatenate([self.q_lower, -inf]), q_upper=np.concatenate([self.q_upper, inf]),
            velocity_limit=np.concatenate([self.velocity_limit, inf]),
            effort_limit=np.concatenate([self.effort_limit, inf]), nq=nq + k, nv=nv + k)
        for a in (G, src, scale, offset):
            a.setflags(write=False)
        got = self._index["independent_mimic"] = (mx, G, src, scale, offset)
        return got

    def workspace(self, key: str, shape, dtype=np.float64) -> np.ndarray:
        """A per-model cached constant array (zeros) used by the fast single-call paths."""
        k = ("ws", key)
        a = self._index.get(k)
        if a is None:
            a = np.zeros(shape, dtype=dtype)
            a.flags.writeable = True
            self._index[k] = a
        return a

    def joint_type_name(self, joint: str | int) -> str:
        i = self.joint_index(joint) if isinstance(joint, str) else int(joint)
        return JOINT_TYPE_NAMES[int(self.mi[i, MI_JTYPE])]

    @property
    def has_quaternion_joints(self) -> bool:
        t = self.mi[1:, MI_JTYPE]
        return bool(np.any((t == SPHERICAL) | (t == FREE)))

    # ------------------------------------------------------------------ names
    def body_index(self, name: str) -> int:
        try:
            return self._index["body"][name]
        except KeyError:
            raise UnknownNameError(
                f"body {name!r} is not in model {self.name!r}; bodies are {list(self.body_names)}"
            ) from None

    def joint_index(self, name: str) -> int:
        """Index of the body moved by joint ``name``."""
        try:
            return self._index["joint"][name]
        except KeyError:
            raise UnknownNameError(
                f"joint {name!r} is not in model {self.name!r}; joints are "
                f"{list(self.joint_names_all[1:])}"
            ) from None

    def frame_index(self, name: str) -> int:
        try:
            return self._index["frame"][name]
        except TypeError:  # unhashable (a list, an array): not a frame name
            raise UnknownNameError(
                f"frame must be a frame name (str) or a body index (int), got "
                f"{type(name).__name__} {name!r:.60}"
            ) from None
        except KeyError:
            raise UnknownNameError(
                f"frame {name!r} is not in model {self.name!r}; frames are {list(self.frame_names)}"
            ) from None

    def q_slice(self, joint: str) -> slice:
        """Python slice of ``q`` owned by ``joint`` (empty for a mimic joint)."""
        i = self.joint_index(joint)
        return slice(int(self.mi[i, MI_IQ]), int(self.mi[i, MI_IQ] + self.mi[i, MI_NQ]))

    def v_slice(self, joint: str) -> slice:
        """Python slice of ``v`` (and of τ, of Jacobian columns) owned by ``joint``."""
        i = self.joint_index(joint)
        return slice(int(self.mi[i, MI_IV]), int(self.mi[i, MI_IV] + self.mi[i, MI_NV]))

    def support(self, body: int) -> list[int]:
        """Bodies from ``body`` up to (excluding) the world."""
        out = []
        while body > 0:
            out.append(body)
            body = int(self.mi[body, MI_PARENT])
        return out

    def __repr__(self) -> str:
        return (
            f"Model({self.name!r}, nbodies={self.nbodies}, nq={self.nq}, nv={self.nv}, "
            f"frames={len(self.frame_names)}, mass={self.total_mass:.4g} kg)"
        )


@jit
def dof_parents(mi, par):
    """``par[k]``: the DoF before DoF ``k`` on the path to the root (the previous DoF of its joint,
    else the last DoF of the nearest ancestor body that has one; −1 at a root), the tree pattern
    of the joint-space inertia matrix (`dqdyn._engine.linalg.tree_factor_r`).  False if a DoF's
    parent is not numbered before it."""
    for i in range(1, mi.shape[0]):
        nvi = mi[i, MI_NV]
        if nvi == 0:
            continue
        iv = mi[i, MI_IV]
        p = -1
        j = mi[i, MI_PARENT]
        while j > 0:
            if mi[j, MI_NV] > 0:
                p = mi[j, MI_IV] + mi[j, MI_NV] - 1
                break
            j = mi[j, MI_PARENT]
        for k in range(nvi):
            pk = p if k == 0 else iv + k - 1
            if pk >= iv + k:
                return False
            par[iv + k] = pk
    return True


def armature_values(joint: str, value, n: int) -> np.ndarray:
    """``value`` (a scalar: every DoF of the joint; or one value per DoF) as ``n`` armature
    values of joint ``joint``, checked finite and non-negative."""
    try:
        a = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ModelError(f"joint {joint!r}: armature must be a number or one number per DoF "
                         f"({n}), got {value!r:.60}") from None
    if a.ndim == 0:
        a = np.full(n, float(a))
    if a.shape != (n,):
        raise ModelError(f"joint {joint!r}: armature must be a scalar or {n} value(s), one per "
                         f"DoF, got shape {a.shape}")
    if not np.all(np.isfinite(a)) or np.any(a < 0):
        raise ModelError(f"joint {joint!r}: armature must be finite and non-negative, got "
                         f"{a.tolist()}")
    return a


def _rebuild_model(cls, kwargs):
    """Unpickle a `Model` (see ``Model.__reduce__``).  Arrays that arrive read-only
    or unaligned are copied (pickle protocol 5's out-of-band buffers: handed back as ``bytes``
    or shared memory by object stores, read-only — the constructor writes gravity into ``mf``;
    sliced out of one message at any byte offset by Dask — the C call gate takes aligned model
    tables only, so on a worker whose model came unaligned every single call and small batch
    took the slower Python route, and ``constrained_forward_dynamics`` the general path's last
    bits)."""
    return cls(**{k: x.copy() if type(x) is np.ndarray and not (x.flags.writeable and x.flags.aligned)
                  else x for k, x in kwargs.items()})


def pack_model(
    *,
    name,
    body_names,
    joint_names,
    parent,
    jtype,
    placement,
    axis,
    pitch,
    mass,
    com,
    inertia,
    mimic_master,
    mimic_scale,
    mimic_offset,
    frame_names,
    frame_body,
    frame_placement,
    gravity,
    limits,
    constraints=(),
    armature=None,
    welded=None,
) -> Model:
    """Assemble the packed tables of a `Model` from per-body lists (used by builders).
    ``armature``: per body, ``None`` or the joint's checked armature values (one per DoF; a
    mimic joint's single value is folded into its master's, times ``scale²``)."""
    nb1 = len(body_names)
    mi = np.zeros((nb1, MI_COLS), dtype=np.int64)
    mf = np.zeros((nb1, MF_COLS))
    mi[0, MI_PARENT] = -1
    mf[0, MF_PLACEMENT] = 1.0
    mf[:, MF_SCALE] = 1.0
    iq = iv = 0
    q_lower, q_upper, vlim, elim = [], [], [], []
    for i in range(1, nb1):
        t = int(jtype[i])
        if not 0 <= parent[i] < i:
            raise ModelError(f"body {body_names[i]!r}: parent index {parent[i]} is not an earlier body")
        nqj, nvj = JOINT_DIMS[t]
        mi[i, MI_PARENT] = parent[i]
        mi[i, MI_JTYPE] = t
        mf[i, MF_PLACEMENT : MF_PLACEMENT + 8] = placement[i]
        mf[i, MF_AXIS : MF_AXIS + 3] = axis[i]
        mf[i, MF_PITCH] = pitch[i]
        mf[i, MF_MASS] = mass[i]
        mf[i, MF_COM : MF_COM + 3] = com[i]
        mf[i, MF_INERTIA : MF_INERTIA + 9] = np.asarray(inertia[i]).reshape(9)
        if mimic_master[i] >= 0:
            m = mimic_master[i]
            if m >= i:
                raise ModelError(
                    f"joint {joint_names[i]!r} mimics {joint_names[m]!r}, which is not an earlier joint"
                )
            mi[i, MI_IQ] = mi[m, MI_IQ]
            mi[i, MI_IV] = mi[m, MI_IV]
            mi[i, MI_NQ] = 0
            mi[i, MI_NV] = 0
            mf[i, MF_SCALE] = mimic_scale[i]
            mf[i, MF_OFFSET] = mimic_offset[i]
            if armature is not None and armature[i] is not None:
                mf[m, MF_ARMATURE] += mimic_scale[i] ** 2 * float(armature[i][0])
            continue
        mi[i, MI_IQ] = iq
        mi[i, MI_IV] = iv
        mi[i, MI_NQ] = nqj
        mi[i, MI_NV] = nvj
        if armature is not None and armature[i] is not None:
            mf[i, MF_ARMATURE:MF_ARMATURE + nvj] += armature[i]
        lo, hi, vl, el = limits[i]
        if t in (SPHERICAL, FREE):
            q_lower += [-np.inf] * nqj
            q_upper += [np.inf] * nqj
        else:
            q_lower += [lo] * nqj if type(lo) is float else list(np.broadcast_to(lo, (nqj,)))
            q_upper += [hi] * nqj if type(hi) is float else list(np.broadcast_to(hi, (nqj,)))
        vlim += [vl] * nvj if type(vl) is float else list(np.broadcast_to(vl, (nvj,)))
        elim += [el] * nvj if type(el) is float else list(np.broadcast_to(el, (nvj,)))
        iq += nqj
        iv += nvj
    mi[0, MI_IQ] = iq
    mi[0, MI_IV] = iv
    return Model(
        name=name,
        body_names=tuple(body_names),
        joint_names_all=tuple(joint_names),
        mi=mi,
        mf=mf,
        frame_names=tuple(frame_names),
        frame_body=np.asarray(frame_body, dtype=np.int64).reshape(-1),
        frame_placement=np.asarray(frame_placement, dtype=float).reshape(-1, 8),
        gravity=np.asarray(gravity, dtype=float).reshape(3).copy(),
        q_lower=np.asarray(q_lower, dtype=float),
        q_upper=np.asarray(q_upper, dtype=float),
        velocity_limit=np.asarray(vlim, dtype=float),
        effort_limit=np.asarray(elim, dtype=float),
        nq=iq,
        nv=iv,
        constraints=tuple(constraints),
        welded=np.zeros(13) if welded is None else np.array(welded, dtype=float).reshape(13),
    )


__all__ = ["Model", "DifferentialDrive", "pack_model", "PLANAR"]
