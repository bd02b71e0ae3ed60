"""Modular composition of subsystems [Silva2022thesis, ch. 5].

A robot is assembled from subsystems (kinematic chains or trees, each its own
`Model`), every non-root subsystem attached at a frame of its predecessor.
`Assembly` evaluates the dual quaternion Newton–Euler model of the whole tree
subsystem by subsystem, using of each subsystem only

* its own dqNE map ``W_i`` (eq. 5.7), run on its own model, and
* the twist (and twist derivative) of its connection point ``a_i`` coming from the
  predecessor, and the wrenches ``ζ_{b_{i,j}}`` its successors transmit at their connection
  points ``b_{i,j}`` — the black-box scenario of [Silva2022thesis, §5.1].

Composition (eqs. 5.8–5.11)::

    Ξ_i  = Ξ_{p_i,i} + Ξ_{i,i}                    inherited + own motion          (5.8), (5.10)
    Γ̄_i  = W_i(Ξ_i) + Σ_{j∈S_i} Γ̊_{j,i}                                            (5.9)
    Γ̊_{j,i}[k] = Ad(x_{b_{i,j}}^{J_k}) ζ_{b_{i,j}}  for the joints k of i that support b,
                 0 for the others                                                   (5.11)
    Γ̲_t  = A̲ 1_s                                                                    (5.16)

The inherited motion ``Ξ_{p_i,i} = Ad_n(X) ξ_{a_i}`` (5.10) enters ``W_i`` as the motion of the
subsystem's world frame: each subsystem is evaluated with a massless *connector* body on a
free joint whose pose, body twist and twist derivative are those of ``a_i``; the connector's
joint wrench is then ``ζ_{a_i}`` itself (the wrench the predecessor transmits to the whole
subsystem, at ``a_i`` in its axes).  Twists go root → leaves, wrenches leaves → root, so the
evaluation is two sweeps over subsystems (each a compiled dqNE call — no per-body Python loop).
`Assembly.build` returns the same robot as one monolithic `Model` (same q /
v layout: the subsystems' q concatenated in the order they were added); the two must agree to
round-off (validation claims 15–16; ``tests/claims``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from dqdyn.algebra.dualquat import Ad6, Ad6_inv, conj, mul
from dqdyn.dynamics.newton_euler import newton_euler
from dqdyn.errors import ModelError, ShapeError, UnknownNameError
from dqdyn.kinematics.forward import _resolve_frame, forward_kinematics
from dqdyn.kinematics.jacobians import twist_jacobian
from dqdyn.multibody.builders import ModelBuilder
from dqdyn.multibody.model import Model

_IDENT8 = np.array([1.0, 0, 0, 0, 0, 0, 0, 0])


@dataclass
class Subsystem:
    name: str
    model: Model
    parent: int  # index of the predecessor subsystem, −1 for a root
    at: str  # frame of the predecessor's model where it is attached ("world" for a root)
    placement: np.ndarray  # pose of the subsystem's world frame in ``at``
    extended: Model  # connector (free joint, massless) + the subsystem
    children: list


class ModularResult(NamedTuple):
    """Output of `Assembly.newton_euler` (batch axes first).

    * ``tau`` (..., nv): generalized forces of the assembled robot (subsystems' v concatenated);
    * ``wrenches``: per subsystem, ``Γ̄_i`` (..., nbodies_i, 6) — its joint wrenches at the joint
      frames (as `newton_euler`'s ``wrenches`` without the world row);
    * ``own_wrenches``: per subsystem, ``W_i(Ξ_i)`` (the diagonal blocks of A̲, eq. 5.15);
    * ``connection_twists`` / ``connection_twist_derivatives``: per subsystem, the body twist
      ``ξ_{0,a_i}^{a_i}`` of its connection frame and its derivative (vec6 ``[ω, v]``);
    * ``connection_wrenches``: per subsystem, ``ζ_{a_i}`` (vec6 ``[f, τ]`` at ``a_i``, its axes):
      what the predecessor transmits to the subsystem and everything attached to it.
    """

    tau: np.ndarray
    wrenches: list
    own_wrenches: list
    connection_twists: list
    connection_twist_derivatives: list
    connection_wrenches: list


class Assembly:
    """A robot assembled from subsystems (thesis ch. 5).

    >>> asm = Assembly("robot")
    >>> asm.add("torso", torso)                                   # attached to the world
    >>> asm.add("arm_l", arm, parent="torso", at="shoulder_l")    # at a frame of the torso
    >>> res = asm.newton_euler(q, v, a)                           # modular, eqs. 5.8–5.11
    >>> model = asm.build()                                       # the same robot, one Model
    """

    def __init__(self, name: str = "assembly", gravity=(0.0, 0.0, -9.81)):
        self.name = name
        self.gravity = np.asarray(gravity, dtype=float).reshape(3)
        self.subsystems: list[Subsystem] = []
        self._index: dict[str, int] = {}

    # ------------------------------------------------------------------------------ build
    def add(self, name: str, model: Model, parent: str | None = None, at: str = "world",
            placement=None) -> None:
        """Attach subsystem ``model`` under the name ``name``: its world frame is placed at
        ``placement`` (unit dual quaternion, default identity) in frame ``at`` of subsystem
        ``parent`` (``None``: the world)."""
        if name in self._index:
            raise ModelError(f"a subsystem named {name!r} already exists")
        if "/" in name:
            raise ModelError(f"subsystem name {name!r} must not contain '/'")
        if not isinstance(model, Model):
            raise ShapeError(f"model must be a dqdyn Model, got {type(model).__name__}")
        P = _IDENT8.copy() if placement is None else np.asarray(placement, dtype=float).reshape(8)
        if abs(np.dot(P[:4], P[:4]) - 1.0) > 1e-9 or abs(np.dot(P[:4], P[4:])) > 1e-9:
            from dqdyn.errors import NotUnitError

            raise NotUnitError(f"placement of subsystem {name!r} must be a unit dual quaternion")
        if parent is None:
            ip = -1
        else:
            if parent not in self._index:
                raise UnknownNameError(f"parent subsystem {parent!r} of {name!r} does not exist")
            ip = self._index[parent]
            self.subsystems[ip].model.frame_index(at)  # raises UnknownNameError
        b = ModelBuilder(f"{name}+connector", self.gravity, inertia_check="off")
        b.add_body("connector", "world", "free", joint_name="connector")
        b.add_model(model, "connector")
        self._index[name] = len(self.subsystems)
        self.subsystems.append(Subsystem(name, model, ip, at, P, b.build(), []))
        if ip >= 0:
            self.subsystems[ip].children.append(len(self.subsystems) - 1)

    @property
    def nq(self) -> int:
        return sum(s.model.nq for s in self.subsystems)

    @property
    def nv(self) -> int:
        return sum(s.model.nv for s in self.subsystems)

    def slices(self, name: str) -> tuple[slice, slice]:
        """(q slice, v slice) of subsystem ``name`` in the assembled q / v."""
        k = self._index[name]
        oq = sum(s.model.nq for s in self.subsystems[:k])
        ov = sum(s.model.nv for s in self.subsystems[:k])
        m = self.subsystems[k].model
        return slice(oq, oq + m.nq), slice(ov, ov + m.nv)

    def build(self) -> Model:
        """The assembled robot as one monolithic `Model` (names ``sub/link``)."""
        b = ModelBuilder(self.name, self.gravity, inertia_check="off")
        for s in self.subsystems:
            if s.parent < 0:
                parent = "world"
            else:
                p = self.subsystems[s.parent]
                parent = p.name + "/" + s.at if s.at != "world" else p.name + "/world"
            b.add_model(s.model, parent, s.placement, prefix=s.name + "/")
        return b.build()

    # ------------------------------------------------------------------------------ dqNE
    def newton_euler(self, q, v, a) -> ModularResult:
        """Joint wrenches and generalized forces of the assembly, subsystem by subsystem
        (eqs. 5.8–5.11); ``q`` (..., nq), ``v`` / ``a`` (..., nv) in the assembled layout."""
        if not self.subsystems:
            raise ModelError("the assembly has no subsystems")
        q = np.asarray(q, dtype=float)
        v = np.asarray(v, dtype=float)
        a = np.asarray(a, dtype=float)
        for x, n, nm in ((q, self.nq, "q"), (v, self.nv, "v"), (a, self.nv, "a")):
            if x.ndim == 0 or x.shape[-1] != n:
                raise ShapeError(f"{nm} must have shape (..., {n}) (the assembled layout), "
                                 f"got {x.shape}")
        batch = np.broadcast_shapes(q.shape[:-1], v.shape[:-1], a.shape[:-1])
        ns = len(self.subsystems)
        XA = [None] * ns  # connection pose x_{a_i}^0
        TW = [None] * ns  # connection body twist and derivative
        TD = [None] * ns
        RES = [None] * ns
        QE = [None] * ns
        # ---- sweep 1, root → leaves: connection twists, own dqNE maps W_i(Ξ_i)
        for k, s in enumerate(self.subsystems):
            sq, sv = self.slices(s.name)
            if s.parent < 0:
                xa = np.broadcast_to(s.placement, batch + (8,))
                ta = np.zeros(batch + (6,))
                da = np.zeros(batch + (6,))
            else:
                p = self.subsystems[s.parent]
                body, pl = _resolve_frame(p.extended, s.at)
                rp = RES[s.parent]
                # body-origin twist of ``body`` from its CoM twist: Ad(x_c^i) ξ_c (c = CoM offset)
                off = _pose_t(p.extended.com[body])
                ti = Ad6(off, rp.twists[..., body, :])
                di = Ad6(off, rp.twist_derivatives[..., body, :])
                # to the attachment frame and the subsystem's world frame (constant offsets)
                to_a = mul(pl, s.placement)
                ta = Ad6_inv(to_a, ti)
                da = Ad6_inv(to_a, di)
                X = forward_kinematics(p.extended, QE[s.parent])
                xa = mul(mul(X[..., body, :], pl), s.placement)
            XA[k], TW[k], TD[k] = xa, ta, da
            qe = np.concatenate([np.broadcast_to(xa, batch + (8,)),
                                 np.broadcast_to(q[..., sq], batch + (s.model.nq,))], axis=-1)
            ve = np.concatenate([ta, np.broadcast_to(v[..., sv], batch + (s.model.nv,))], axis=-1)
            ae = np.concatenate([da, np.broadcast_to(a[..., sv], batch + (s.model.nv,))], axis=-1)
            QE[k] = qe
            RES[k] = newton_euler(s.extended, qe, ve, ae)
        # ---- sweep 2, leaves → root: Γ̄_i = W_i(Ξ_i) + Σ_j Γ̊_{j,i}, connection wrenches
        tau = np.empty(batch + (self.nv,))
        G = [None] * ns
        Z = [None] * ns
        for k in range(ns - 1, -1, -1):
            s = self.subsystems[k]
            r = RES[k]
            m = s.extended
            Gk = np.array(r.wrenches[..., 1:, :])  # row 0 of the extended model: connector
            tk = np.array(r.tau[..., 6:])
            # ζ_{a_k}: the connector's wrench, moved from its CoM (that of the subsystem's welded
            # inertia, Model.welded_inertia; the origin without one) to its origin
            zk = Ad6(_pose_t(m.com[1]), r.com_wrenches[..., 1, :])
            X = forward_kinematics(m, QE[k])
            for j in s.children:
                c = self.subsystems[j]
                body, pl = _resolve_frame(m, c.at)
                xb = mul(mul(X[..., body, :], pl), c.placement)  # x_b^0 (b = a_j)
                zb = Z[j]
                # (5.11): to every joint of subsystem k that supports b
                for i in m.support(body):
                    if i <= 1:
                        continue
                    xJ = mul(X[..., int(m.parent[i]), :], m.joint_placement[i])
                    Gk[..., i - 1, :] += Ad6(mul(conj(xJ), xb), zb)
                # its projection on the joints: J_bᵀ ζ_b (power pairing, eq. 30)
                J = twist_jacobian(m, QE[k], body, "body")  # at the body origin
                zbody = Ad6(mul(pl, c.placement), zb)
                tk += np.einsum("...ki,...k->...i", J[..., :, 6:],
                                np.concatenate([zbody[..., 3:], zbody[..., :3]], axis=-1))
                # and to the connector: ζ_{a_k} += Ad(x_b^{a_k}) ζ_b
                zk += Ad6(mul(conj(X[..., 1, :]), xb), zb)
            G[k], Z[k] = Gk[..., 1:, :], zk
            tau[..., self.slices(s.name)[1]] = tk
        return ModularResult(
            tau=tau,
            wrenches=G,
            own_wrenches=[np.array(r.wrenches[..., 2:, :]) for r in RES],
            connection_twists=TW,
            connection_twist_derivatives=TD,
            connection_wrenches=Z,
        )

    def rnea(self, q, v, a) -> np.ndarray:
        """Generalized forces of the assembly by the modular dqNE (`newton_euler`)."""
        return self.newton_euler(q, v, a).tau


def _pose_t(c) -> np.ndarray:
    """The pure translation ``1 + ε ½ c``."""
    return np.r_[1.0, 0.0, 0.0, 0.0, 0.0, 0.5 * np.asarray(c, dtype=float)]


__all__ = ["Assembly", "ModularResult"]
