"""Interconnection graph of subsystems and black-box subsystems ([Silva2022thesis, ch. 5,
eqs. (5.1)–(5.18), Proposition 5.1; §4.2.2 F/B functions]; validation claims 15, 16, 18).

A robot is a tree of *subsystems* (vertices); a non-root subsystem ``j`` hangs from a
*connection* (edge) ``p_j → j`` at a frame ``a_j`` of its predecessor (the thesis's
``b̄_{p_j, j}``), which carries the connection's twist one way (dashed edges) and the wrench the
successor transmits the other way (solid edges).

Two kinds of vertex:

* a **model subsystem** — a `Model` whose coordinates are part of the composite ``q`` / ``v``
  (concatenated in the order the subsystems were added).  Its map ``W_i`` (eq. 5.7) is one dqNE
  call on the model behind a massless *connector* body on a free joint that moves as the
  connection frame ``a_i`` (the inherited motion ``Ξ_{p_i,i} = Ad_n(X) ξ_{a_i}`` of eq. 5.10,
  carried to every CoM by the linearity of ``Ad``); the compiled single-state
  `InterconnectionGraph.rnea` starts the model's own recursion from that moving base instead
  (`_graph_kernel`).  The subsystem's ``world`` frame is the connection frame it hangs from;
* a **black box** — any `BlackBox`: the wrench it transmits at its connection as a function of
  the connection's motion [Silva2022thesis, §5.1]; no coordinates in ``q``, a leaf.  Shipped in
  `blackbox`: `ModelBlackBox` (a model with its own joint trajectory) and `RecordedWrench` (a
  wrench time series, e.g. a force/torque sensor log, interpolated in time).

The composite model (eqs. 5.8–5.11, 5.15–5.16)::

    Ξ_i   = Ξ_{p_i,i} + Ξ_{i,i}                                                   (5.8), (5.10)
    Γ̄_i   = W_i(Ξ_i) + Σ_{j∈S_i} Γ̊_{j,i}                                          (5.9)
    Γ̊_{j,i}[k] = Ad(x_{b}^{J_k}) ζ_{b},  b = a_j, for the joints k of i that support b; else 0 (5.11)
    A̲_ii = W_i(Ξ_i),  A̲_{p_j, j} = Γ̊_{j,p_j},  other blocks 0                     (5.15)
    Γ̲_t  = A̲ 1_s                                                                    (5.16)

`InterconnectionGraph.evaluate` runs the two sweeps (twists root → leaves, wrenches back) and
returns A̲ (`GraphResult`).  A vertex keeps its last ``W_i`` with its inputs (connection pose,
twist, twist derivative, its ``q, v, a``) and is not re-evaluated while they hold: adding,
replacing or removing a subsystem recomputes only the blocks it changes (claim 16; the counters
``InterconnectionGraph.evaluations`` show it).

Adding bodies without rebuilding ([Silva2022thesis, §4.2.2, Def. 4.3, eqs. (4.32)–(4.35)]):
`InterconnectionGraph.append_body` hangs a one-body subsystem at a frame; `GraphResult.F` gives
the CoM twists ``F_i`` (eq. 4.33), `GraphResult.B` the joint wrenches ``B_i`` (eq. 4.34): the
``F`` are unchanged, each ``B_i`` gains only ``Ad(x_{b}^{J_i}) B_{n+1}`` (claim 18).

Conventions as `newton_euler`: twists ``[ω, v]``, wrenches ``[f, τ]`` (frame origin and axes);
``ζ_a`` is what the predecessor transmits *to* the successor through the connection.  The
graph's gravity (constructor) is used for every model subsystem.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dqdyn._engine.boundary import raise_status
from dqdyn._engine.checks import kernel_rows
from dqdyn._engine.gate import GATE, gate_address
from dqdyn.algebra._core import ad6 as _ad6
from dqdyn.algebra._core import ad6_inv as _ad6_inv
from dqdyn.algebra._core import dq_mul as _dq_mul
from dqdyn.algebra.dualquat import Ad6, Ad6_inv, conj, mul
from dqdyn.composition import _graph_kernel as _gk
from dqdyn.composition._graph_kernel import pack_sizes
from dqdyn.composition.blackbox import BlackBox, ModelBlackBox, RecordedWrench, _extended
from dqdyn.dynamics.newton_euler import NSCRATCH, W_COLS, W_XI, W_XID, W_ZETA, newton_euler
from dqdyn.dynamics.newton_euler import newton_euler_kernel as _ne_kernel
from dqdyn.errors import (
    DqdynError,
    ModelError,
    NonFiniteError,
    NotUnitError,
    ShapeError,
    UnknownNameError,
)
from dqdyn.kinematics.forward import _resolve_frame, forward_kinematics
from dqdyn.kinematics.forward import fk_kernel as _fk
from dqdyn.kinematics.jacobians import twist_jacobian
from dqdyn.multibody.builders import ModelBuilder
from dqdyn.multibody.joints import FIXED, JOINT_TYPE_NAMES
from dqdyn.multibody.model import Model

_NOF = np.empty((0, 6))
_IDENT8 = np.array([1.0, 0, 0, 0, 0, 0, 0, 0])


def _unit_placement(placement, name: str) -> np.ndarray:
    """``placement`` of subsystem ``name`` as a unit dual quaternion (8,), or a named error."""
    P = np.asarray(placement, dtype=float)
    if P.shape != (8,):
        raise ShapeError(f"placement of subsystem {name!r} must be a unit dual quaternion (8,), "
                         f"got {P.shape}")
    if not np.all(np.isfinite(P)) or abs(P[:4] @ P[:4] - 1.0) > 1e-9 or abs(P[:4] @ P[4:]) > 1e-9:
        raise NotUnitError(f"placement of subsystem {name!r} must be a unit dual quaternion")
    return P.copy()


def _connection_frame(p, at):
    """(body, placement) of the connection frame ``at`` of the model subsystem ``p`` in its
    connector model ``p.ext``: a frame of ``p.model``'s body ``b`` is on ``p.ext``'s body
    ``b + 1`` — its world frame (``b = 0``) on the connector, i.e. the subsystem's own base
    (the connection frame it hangs from), not the inertial frame."""
    body, pl = _resolve_frame(p.model, at)
    return body + 1, pl


def _com_offset(ext: Model) -> np.ndarray:
    """The pure translation to the connector's CoM (non-zero when the subsystem has a welded
    inertia, `welded_inertia`, merged into its connector)."""
    return np.r_[1.0, 0.0, 0.0, 0.0, 0.0, 0.5 * np.asarray(ext.com[1])]


def _connector_wrench(ext: Model, ws) -> np.ndarray:
    """ζ_a (at the connection frame, the connector's origin) from a dqNE workspace, where the
    connector's wrench is at its CoM."""
    z = ws[1, W_ZETA:W_ZETA + 6].copy()
    if not np.any(ext.com[1]):
        return z
    out = np.empty(6)
    _ad6(_com_offset(ext), z, out)
    return out


def _raise_in(name, model, status):
    """`raise_status` of a subsystem's kernel status, the subsystem named in the message
    (its indices are those of its own coordinates)."""
    try:
        raise_status(model, status)
    except DqdynError as e:
        raise type(e)(f"subsystem {name!r} (its own coordinates): {e}") from None


# ------------------------------------------------------------------------------ the graph
@dataclass
class _Node:
    name: str
    model: Model | None  # None for a black box
    box: Any = None
    ext: Model | None = None
    parent: str | None = None
    at: str = "world"
    placement: np.ndarray = field(default_factory=lambda: _IDENT8.copy())
    version: int = 0
    key: tuple | None = None  # inputs of the cached W_i
    res: Any = None  # cached dqNE result on ``ext``
    X: Any = None  # cached world poses of ``ext`` (computed on demand)

    @property
    def nq(self):
        return 0 if self.model is None else self.model.nq

    @property
    def nv(self):
        return 0 if self.model is None else self.model.nv

    @property
    def nbodies(self):
        return 0 if self.model is None else self.model.nbodies


@dataclass
class GraphResult:
    """Output of `InterconnectionGraph.evaluate` (batch axes first).

    * ``names``: the subsystems, in the composite order (columns of A̲);
    * ``tau`` (..., nv): generalized forces of the model subsystems, composite layout;
    * ``A`` (..., n, s, 6): the interconnection matrix A̲ of eq. (5.15) — rows: the joints of the
      model subsystems (``rows[name]``), columns: subsystems; ``A[..., rows[i], i, :] = W_i(Ξ_i)``
      and ``A[..., rows[p_j], j, :] = Γ̊_{j, p_j}``; a black box has a column but no rows;
    * ``Gamma`` (..., n, 6) = ``A̲ 1_s`` (Proposition 5.1, eq. 5.16): joint wrenches ``Γ_i =
      ζ_{0,i}^{J_i}`` (as `newton_euler`'s ``wrenches`` rows 1…);
    * ``tau_blocks`` (..., nv, s): the projection of A̲ on the joint axes (eq. 4.27),
      ``tau = tau_blocks.sum(-1)``;
    * ``twists`` / ``twist_derivatives``: per model subsystem, (..., n_i, 6) CoM twists
      ``Ξ_i`` (= ``F_i`` of eq. 4.33) and their derivatives;
    * ``connection_poses`` / ``connection_twists`` / ``connection_twist_derivatives`` /
      ``connection_wrenches``: per subsystem, ``x_a^0``, ``ξ_{0,a}^a``, ``ξ̇``, ``ζ_a``.
    """

    names: list
    rows: dict
    vslices: dict
    tau: np.ndarray
    A: np.ndarray
    tau_blocks: np.ndarray
    twists: dict
    twist_derivatives: dict
    connection_poses: dict
    connection_twists: dict
    connection_twist_derivatives: dict
    connection_wrenches: dict

    @property
    def Gamma(self) -> np.ndarray:
        return self.A.sum(axis=-2)

    def block(self, i: str, j: str) -> np.ndarray:
        """``A̲_ij`` (..., n_i, 6): the wrenches subsystem ``j`` puts on the joints of ``i``."""
        return self.A[..., self.rows[i], self.names.index(j), :]

    def W(self, name: str) -> np.ndarray:
        """``W_i(Ξ_i)`` (eq. 5.7), the diagonal block of subsystem ``name``."""
        return self.block(name, name)

    def F(self, name: str) -> np.ndarray:
        """``F_k(Ξ̄_{1,k})`` ([Silva2022thesis, eq. 4.33]): the CoM twists of the bodies of ``name``."""
        return self.twists[name]

    def B(self, name: str) -> np.ndarray:
        """``B_k(Ξ_{k,n})`` ([Silva2022thesis, eq. 4.34]): the joint wrenches ``Γ̄`` of the bodies of ``name``."""
        return self.Gamma[..., self.rows[name], :]


class InterconnectionGraph:
    """Subsystems (vertices) and connections (edges) of a tree-structured robot (thesis ch. 5).

    >>> g = InterconnectionGraph()
    >>> g.add("torso", torso)                                   # a model subsystem
    >>> g.add("arm", arm); g.connect("torso", "arm", at="shoulder")
    >>> g.add("payload", RecordedWrench(t_log, wrench_log))     # a black box
    >>> g.connect("arm", "payload", at="tool")
    >>> r = g.evaluate(q, v, a, t=0.3)                           # r.A, r.Gamma, r.tau
    >>> g.replace("payload", other); g.remove("payload")        # the other blocks are kept

    ``evaluations[name]`` counts the evaluations of ``W_name`` (dqNE calls) and of black boxes.
    """

    def __init__(self, name: str = "graph", gravity=(0.0, 0.0, -9.81)):
        self.name = name
        self.gravity = np.array(gravity, dtype=float).reshape(3)  # (a writable copy: one kernel type)
        self._nodes: dict[str, _Node] = {}
        self.evaluations: dict[str, int] = {}
        self._rev = 0  # bumped by every change of the graph
        self._fused_rev = -1

    # ------------------------------------------------------------------------- structure
    @property
    def names(self) -> list[str]:
        return list(self._nodes)

    @property
    def nq(self) -> int:
        return sum(n.nq for n in self._nodes.values())

    @property
    def nv(self) -> int:
        return sum(n.nv for n in self._nodes.values())

    def _node(self, name: str) -> _Node:
        if name not in self._nodes:
            raise UnknownNameError(f"subsystem {name!r} does not exist (subsystems: {self.names})")
        return self._nodes[name]

    def _make(self, name, sub) -> _Node:
        if isinstance(sub, Model):
            return _Node(name, sub, ext=_extended(sub, self.gravity, name))
        if isinstance(sub, BlackBox):
            return _Node(name, None, box=sub)
        raise ShapeError(f"subsystem {name!r} must be a dqdyn Model or a black box (an object "
                         f"with wrench(pose, twist, twist_derivative, t)), got {type(sub).__name__}")

    def add(self, name: str, subsystem, parent: str | None = None, at: str = "world",
            placement=None) -> None:
        """Add vertex ``name`` (a `Model` or a `BlackBox`); with ``parent``,
        also the connection ``parent → name`` (`connect`).  Without ``parent``,
        ``placement`` places this subsystem's world frame in the inertial frame (a root
        mounted on a tilted or raised base; default identity)."""
        self._rev += 1  # (invalidates the compiled plan)
        if not isinstance(name, str) or not name or "/" in name:
            raise ModelError(f"subsystem name must be a non-empty string without '/', got {name!r}")
        if name in self._nodes:
            raise ModelError(f"a subsystem named {name!r} already exists")
        node = self._make(name, subsystem)
        if parent is None and placement is not None:  # a root placed in the inertial frame
            node.placement = _unit_placement(placement, name)
        self._nodes[name] = node
        self.evaluations[name] = 0
        if parent is not None:
            try:
                self.connect(parent, name, at, placement)
            except DqdynError:
                del self._nodes[name], self.evaluations[name]
                raise

    def connect(self, parent: str, child: str, at: str = "world", placement=None) -> None:
        """Edge ``parent → child``: ``child``'s world frame (its connection frame ``a``) is placed
        at ``placement`` (unit dual quaternion, default identity) in frame ``at`` of ``parent``."""
        self._rev += 1  # (invalidates the compiled plan)
        p, c = self._node(parent), self._node(child)
        if c.parent is not None:
            raise ModelError(f"subsystem {child!r} is already connected to {c.parent!r} (a "
                             f"subsystem has one predecessor)")
        k = parent
        while k is not None:  # is ``parent`` in the subtree of ``child``?
            if k == child:
                raise ModelError(f"connecting {parent!r} → {child!r} would close a cycle "
                                 f"(the graph must be a tree)")
            k = self._nodes[k].parent
        if p.model is None:
            raise UnknownNameError(f"connection {parent!r} → {child!r}: subsystem {parent!r} is a "
                                   f"black box and has no frame {at!r} (black boxes are leaves)")
        self._check_frame(p, at, child)
        P = _IDENT8.copy() if placement is None else _unit_placement(placement, child)
        c.parent, c.at, c.placement = parent, at, P
        c.version += 1

    def _check_frame(self, p: _Node, at: str, child: str) -> None:
        try:
            p.model.frame_index(at)
        except (UnknownNameError, KeyError):
            raise UnknownNameError(f"connection {p.name!r} → {child!r}: frame {at!r} does not "
                                   f"exist in subsystem {p.name!r}") from None

    def children(self, name: str) -> list[str]:
        return [k for k, n in self._nodes.items() if n.parent == name]

    def replace(self, name: str, subsystem) -> None:
        """Replace the subsystem ``name`` (its connections kept; its successors' frames must
        exist in the new one).  Only the blocks that depend on it are recomputed."""
        self._rev += 1  # (invalidates the compiled plan)
        old = self._node(name)
        new = self._make(name, subsystem)
        for c in self.children(name):
            if new.model is None:
                raise ModelError(f"subsystem {name!r} has successors {self.children(name)}; a "
                                 f"black box cannot replace it")
            self._check_frame(new, self._nodes[c].at, c)
        new.parent, new.at, new.placement = old.parent, old.at, old.placement
        new.version = old.version + 1
        self._nodes[name] = new

    def remove(self, name: str, subtree: bool = False) -> list[str]:
        """Remove subsystem ``name`` (and, with ``subtree=True``, its successors); returns the
        removed names.  The composite ``q`` / ``v`` loses their entries."""
        self._rev += 1  # (invalidates the compiled plan)
        self._node(name)
        kids = self.children(name)
        if kids and not subtree:
            raise ModelError(f"subsystem {name!r} has successors {kids}; remove them first or "
                             f"pass subtree=True")
        out = []
        for c in kids:
            out += self.remove(c, subtree=True)
        del self._nodes[name]
        del self.evaluations[name]
        return out + [name]

    def append_body(self, name: str, parent: str, at: str, joint: str = "revolute", *,
                    placement=None, **body) -> None:
        """Thesis §4.2.2 (Def. 4.3, Examples 4.3–4.4): add one body, moved by ``joint``
        (``ModelBuilder.add_body`` arguments: ``axis``, ``xyz``, ``rpy``, ``mass``, ``com``,
        ``inertia`` …) at frame ``at`` of subsystem ``parent``, without rebuilding anything: it
        becomes a one-body subsystem, so ``F_{n+1}`` follows from the cached ``F_n`` (eq. 4.33)
        and every existing ``B_i`` only gains the added term (eq. 4.34)."""
        b = ModelBuilder(name, self.gravity)
        b.add_body(name, "world", joint, joint_name=name, **body)
        self.add(name, b.build(), parent, at, placement)

    def root(self) -> str:
        """The one subsystem without predecessor (raises on an empty graph or several roots)."""
        roots = [k for k, n in self._nodes.items() if n.parent is None]
        if not roots:
            raise ModelError(f"graph {self.name!r} has no subsystems")
        if len(roots) > 1:
            raise ModelError(f"graph {self.name!r} has several roots {roots}: connect all but one "
                             f"to a predecessor")
        r = self._nodes[roots[0]]
        if r.model is None:
            raise ModelError(f"the root subsystem {r.name!r} is a black box; the root must be a model")
        return roots[0]

    def order(self) -> list[str]:
        """Subsystems root first, every predecessor before its successors."""
        root = self.root()
        out, stack = [], [root]
        while stack:
            k = stack.pop()
            out.append(k)
            stack += self.children(k)[::-1]
        return out

    def slices(self, name: str) -> tuple[slice, slice]:
        """(q slice, v slice) of subsystem ``name`` in the composite ``q`` / ``v``."""
        oq = ov = 0
        for k, n in self._nodes.items():
            if k == name:
                return slice(oq, oq + n.nq), slice(ov, ov + n.nv)
            oq += n.nq
            ov += n.nv
        raise UnknownNameError(f"subsystem {name!r} does not exist")

    def edges(self) -> list[tuple[str, str, str]]:
        """Connections ``(predecessor, successor, frame of the predecessor)``."""
        return [(n.parent, k, n.at) for k, n in self._nodes.items() if n.parent is not None]

    # ------------------------------------------------------------------------- monolithic
    def build(self) -> Model:
        """The composite robot as one monolithic `Model` (body names
        ``subsystem/body``; same q / v layout).  A black box enters as a rigid body fixed at its
        connection from its ``mass_properties`` (a ModelError if it has none)."""
        self.root()
        order, seen = list(self._nodes), set()
        for k in order:  # the composite layout is the insertion order: parents must come first
            if self._nodes[k].parent is not None and self._nodes[k].parent not in seen:
                raise ModelError(f"build(): subsystem {k!r} was added before its predecessor "
                                 f"{self._nodes[k].parent!r}; the monolithic model needs the "
                                 f"predecessors first")
            seen.add(k)
        b = ModelBuilder(self.name, self.gravity, inertia_check="off")
        placed = {k for k in order if self._nodes[k].parent is None
                  and not np.array_equal(self._nodes[k].placement, _IDENT8)}  # roots placed in F_0
        for k in order:
            n = self._nodes[k]
            parent = "world" if n.parent is None else f"{n.parent}/{n.at}"
            if (n.parent is not None and n.at == "world" and self._nodes[n.parent].parent is None
                    and n.parent not in placed):
                parent = "world"  # (the unplaced root's world frame is the composite's)
            if n.model is not None:
                b.add_model(n.model, parent, n.placement if (n.parent is not None or k in placed) else None,
                            prefix=k + "/")
                continue
            mp = getattr(n.box, "mass_properties", None)
            if mp is None:
                raise ModelError(f"black box {k!r} has no mass_properties: it cannot be part of "
                                 f"a monolithic model")
            m, c, I = mp
            b.add_body(f"{k}/body", parent, "fixed", joint_name=f"{k}/fixed",
                       placement=n.placement, mass=float(m), com=np.asarray(c, float),
                       inertia=np.asarray(I, float))
        return b.build()

    # ------------------------------------------------------------------------- evaluation
    def _w(self, n: _Node, xa, ta, da, q, v, a, batch):
        """``W_i`` on the extended model, cached on its inputs."""
        def bq(x, k):
            return np.broadcast_to(x, batch + (k,))

        qe = np.concatenate([bq(xa, 8), bq(q, n.nq)], -1)
        ve = np.concatenate([bq(ta, 6), bq(v, n.nv)], -1)
        ae = np.concatenate([bq(da, 6), bq(a, n.nv)], -1)
        key = (n.version, qe.shape, qe.tobytes(), ve.tobytes(), ae.tobytes())
        if n.key != key:
            n.res = newton_euler(n.ext, qe, ve, ae)
            n.X = None
            n.qe = qe
            n.key = key
            self.evaluations[n.name] += 1
        return n.res

    def _poses(self, n: _Node):
        if n.X is None:
            n.X = forward_kinematics(n.ext, n.qe)
        return n.X

    def evaluate(self, q, v, a, t=None) -> GraphResult:
        """Γ̲_t = A̲ 1_s (eqs. 5.8–5.16) at ``q`` (..., nq), ``v``, ``a`` (..., nv) in the composite
        layout (model subsystems' coordinates in the order they were added); ``t`` is passed to
        the black boxes."""
        order = self.order()
        q = np.asarray(q, dtype=float)
        v = np.asarray(v, dtype=float)
        a = np.asarray(a, dtype=float)
        for x, k, nm in ((q, self.nq, "q"), (v, self.nv, "v"), (a, self.nv, "a")):
            if x.ndim == 0 or x.shape[-1] != k:
                raise ShapeError(f"{nm} must have shape (..., {k}) (the composite layout of "
                                 f"{self.names}), got {x.shape}")
        batch = np.broadcast_shapes(q.shape[:-1], v.shape[:-1], a.shape[:-1])
        XA, TA, DA, Z = {}, {}, {}, {}
        sl = {k: self.slices(k) for k in self._nodes}
        # ---- sweep 1, root → leaves: connection motion, W_i(Ξ_i) of the model subsystems
        for k in order:
            n = self._nodes[k]
            if n.parent is None:
                XA[k] = np.broadcast_to(n.placement, batch + (8,))
                TA[k] = np.zeros(batch + (6,))
                DA[k] = np.zeros(batch + (6,))
            else:
                p = self._nodes[n.parent]
                body, pl = _connection_frame(p, n.at)
                off = np.r_[1.0, 0, 0, 0, 0, 0.5 * np.asarray(p.ext.com[body])]
                to_a = mul(pl, n.placement)
                TA[k] = Ad6_inv(to_a, Ad6(off, p.res.twists[..., body, :]))
                DA[k] = Ad6_inv(to_a, Ad6(off, p.res.twist_derivatives[..., body, :]))
                XA[k] = mul(self._poses(p)[..., body, :], to_a)
            if n.model is not None:
                sq, sv = sl[k]
                self._w(n, XA[k], TA[k], DA[k], q[..., sq], v[..., sv], a[..., sv], batch)
        # ---- sweep 2, leaves → root: ζ_a, Γ̊_{j,i}, A̲
        names = list(self._nodes)
        rows, o = {}, 0
        for k in names:
            rows[k] = slice(o, o + self._nodes[k].nbodies)
            o += self._nodes[k].nbodies
        A = np.zeros(batch + (o, len(names), 6))
        TB = np.zeros(batch + (self.nv, len(names)))
        TW, TD = {}, {}
        for k in reversed(order):
            n = self._nodes[k]
            col = names.index(k)
            if n.model is None:
                Z[k] = self._box_wrench(k, n, XA[k], TA[k], DA[k], t, batch)
                continue
            r = n.res
            rs, (_, sv) = rows[k], sl[k]
            A[..., rs, col, :] = r.wrenches[..., 2:, :]
            TB[..., sv, col] = r.tau[..., 6:]
            TW[k], TD[k] = r.twists[..., 2:, :], r.twist_derivatives[..., 2:, :]
            # ζ_{a_k}: the connector's wrench, from its CoM (the subsystem's welded inertia's,
            # Model.welded_inertia; its origin without one) to its origin
            zk = Ad6(_com_offset(n.ext), r.com_wrenches[..., 1, :])
            kids = self.children(k)
            if kids:
                X = self._poses(n)
                m = n.ext
            for j in kids:
                c = self._nodes[j]
                cj = names.index(j)
                body, pl = _connection_frame(n, c.at)
                to_b = mul(pl, c.placement)
                xb = mul(X[..., body, :], to_b)  # x_b^0, b = a_j
                zb = Z[j]
                for i in m.support(body):  # (5.11): the joints of k that support b
                    if i <= 1:
                        continue
                    xJ = mul(X[..., int(m.parent[i]), :], m.joint_placement[i])
                    A[..., rs.start + i - 2, cj, :] = Ad6(mul(conj(xJ), xb), zb)
                # projection of Γ̊_{j,k} on k's joint axes: J_bᵀ ζ_b (power pairing, eq. 4.27)
                J = twist_jacobian(m, n.qe, body, "body")
                zbody = Ad6(to_b, zb)
                TB[..., sv, cj] = np.einsum("...ki,...k->...i", J[..., :, 6:],
                                            np.concatenate([zbody[..., 3:], zbody[..., :3]], -1))
                zk += Ad6(mul(conj(X[..., 1, :]), xb), zb)  # ζ_{a_k} += Ad(x_b^{a_k}) ζ_b
            Z[k] = zk
        return GraphResult(names=names, rows=rows, vslices={k: sl[k][1] for k in names},
                           tau=TB.sum(-1), A=A, tau_blocks=TB, twists=TW, twist_derivatives=TD,
                           connection_poses=XA, connection_twists=TA,
                           connection_twist_derivatives=DA, connection_wrenches=Z)

    def rnea(self, q, v, a, t=None, *, compiled: bool = True) -> np.ndarray:
        """Generalized forces of the model subsystems (composite layout), modular dqNE.

        One state (1-D ``q``): a lean path — per subsystem one compiled dqNE call for the twists
        and, for a subsystem with successors, one more with their connection wrenches as
        external wrenches (so ``τ_i`` is the projection of ``Γ̄_i = W_i + Σ Γ̊_{j,i}``), no A̲ and
        no caching.  Graphs of model subsystems run the sweeps in one compiled call through the C
        gate (`_graph_kernel`: one dqNE forward and one backward recursion per subsystem,
        precompiled at install by ``dqdyn precompile``); graphs with black boxes, or
        ``compiled=False``, orchestrate them from Python.  A batch: `evaluate`."""
        if compiled and GATE is not None and t is None:  # the fast path: one C call
            d = self._fused_data if self._fused_rev == self._rev else self._fused()
            if d is not None:
                st = GATE(_gk.GRAPH_C or gate_address(vars(_gk), "GRAPH_C", _gk._c_graph_rnea),
                          d["MI"], d["MF"], d["nv"], -1, q, v, a, d["NP"], d["W"])
                if type(st) is np.ndarray:
                    return st
        q = np.asarray(q, dtype=float)
        if q.ndim == 1 and np.ndim(v) == 1 and np.ndim(a) == 1 and np.ndim(t) == 0:
            if compiled and self._fused() is not None:
                return self._rnea_fused(q, np.asarray(v, dtype=float), np.asarray(a, dtype=float))
            return self._rnea_one(q, np.asarray(v, dtype=float), np.asarray(a, dtype=float), t)
        return self.evaluate(q, v, a, t).tau

    def _plan(self):
        """Static per-vertex data of the lean path, rebuilt when the graph changes."""
        sig = tuple((k, n.version, n.parent, id(n.model), id(n.box)) for k, n in self._nodes.items())
        if getattr(self, "_plan_sig", None) == sig:
            return self._plan_data
        order = self.order()
        sl = {k: self.slices(k) for k in self._nodes}
        plan = []
        for k in order:
            n = self._nodes[k]
            kids = []
            if n.model is not None:
                for j in self.children(k):
                    c = self._nodes[j]
                    body, pl = _connection_frame(n, c.at)
                    kids.append((j, body, np.ascontiguousarray(mul(pl, c.placement)),
                                 np.r_[1.0, 0, 0, 0, 0, 0.5 * np.asarray(n.ext.com[body])]))
            m = n.ext
            bufs = None
            if m is not None:
                nb1 = m.nbodies + 1
                bufs = dict(qe=np.empty(m.nq), ve=np.empty(m.nv), ae=np.empty(m.nv),
                            ws=np.empty((nb1 + NSCRATCH, W_COLS)), tau=np.empty(m.nv),
                            X=np.empty((nb1, 8)), fext=np.zeros((nb1, 6)), G=np.empty((nb1, 6)))
            plan.append((k, n, sl[k], kids, bufs))
        self._plan_sig, self._plan_data = sig, plan
        return plan

    def _fused(self):
        """Packed tables of `graph_rnea_kernel`, rebuilt when the graph changes (None
        for graphs with black boxes)."""
        if self._fused_rev == self._rev:
            return self._fused_data
        self._fused_rev, self._fused_data = self._rev, None
        if not all(n.model is not None for n in self._nodes.values()):
            return None  # (black boxes are Python objects: the Python sweeps)
        plan = self._plan()
        names = [k for k, *_ in plan]
        N = np.zeros((len(plan), _gk.NCOLS), dtype=np.int64)
        MI, MF, TOA, OFF = [], [], np.zeros((len(plan), 8)), np.zeros((len(plan), 8))
        r = w = 0
        for k, (_name, n, (sq, sv), kids, _b) in enumerate(plan):
            m = n.model  # (the kernel starts from the world row: no connector body)
            nb1 = m.nbodies + 1
            if np.any(np.asarray(m.com[0]) != 0.0):
                return None
            if n.parent is not None and np.any(m.welded != 0.0):
                return None  # (a welded inertia rides on the connection: the Python sweeps)
            p = -1 if n.parent is None else names.index(n.parent)
            body = 0
            if p >= 0:
                pe = self._nodes[n.parent].ext
                body, pl = _connection_frame(self._nodes[n.parent], n.at)
                TOA[k] = mul(pl, n.placement)
                OFF[k] = np.r_[1.0, 0, 0, 0, 0, 0.5 * np.asarray(pe.com[body])]
                body -= 1  # (connector model body b = model body b − 1; the connector → 0)
            else:
                TOA[k] = n.placement
                OFF[k] = _IDENT8
            N[k] = [p, body, r, nb1, sq.start, m.nq, sv.start, m.nv, w, len(kids)]
            MI.append(np.asarray(m.mi))
            MF.append(np.asarray(m.mf))
            r += nb1
            w += nb1 + NSCRATCH
        ns = len(plan)
        off = pack_sizes(ns, r, w)
        W = np.zeros(off[-1])
        NP = np.concatenate([np.array([ns, r, w], dtype=np.int64), N.ravel()]).view(np.float64)
        def part(k, shape):  # views of W
            return W[off[k]:off[k + 1]].reshape(shape)

        d = dict(MI=np.ascontiguousarray(np.concatenate(MI)), MF=np.ascontiguousarray(np.concatenate(MF)),
                 N=N, TOA=part(1, (ns, 8)), OFF=part(2, (ns, 8)), WS=part(3, (w, W_COLS)),
                 F=part(4, (r, 6)), G=part(0, 3), W=W, NP=NP, names=names, nv=self.nv,
                 models=[n.model for _, n, *_ in plan])
        d["TOA"][:], d["OFF"][:], d["G"][:] = TOA, OFF, self.gravity
        self._fused_data = d
        return d

    def _rnea_fused(self, q, v, a):
        if q.shape != (self.nq,) or v.shape != (self.nv,) or a.shape != (self.nv,):
            raise ShapeError(f"q, v, a must have {self.nq}, {self.nv}, {self.nv} entries (the "
                             f"composite layout of {self.names}), got {q.shape}, {v.shape}, {a.shape}")
        d = self._fused()
        q, v, a = (np.require(x, np.float64, ["C", "W"]) for x in (q, v, a))
        if GATE is not None:
            st = GATE(_gk.GRAPH_C or gate_address(vars(_gk), "GRAPH_C", _gk._c_graph_rnea),
                      d["MI"], d["MF"], self.nv, -1, q, v, a, d["NP"], d["W"])
            if type(st) is np.ndarray:
                return st
        if GATE is None or st is None:
            tau = np.empty(self.nv)
            st = _gk.graph_rnea_kernel(d["MI"], d["MF"], d["G"], d["N"], d["TOA"], d["OFF"], q, v,
                                       a, d["WS"], d["F"], tau)
            if not st:
                return tau
        k = st % 1000 - 1
        _raise_in(d["names"][k], d["models"][k], st // 1000)

    def _rnea_one(self, q, v, a, t):
        if q.shape != (self.nq,) or v.shape != (self.nv,) or a.shape != (self.nv,):
            raise ShapeError(f"q, v, a must have {self.nq}, {self.nv}, {self.nv} entries (the "
                             f"composite layout of {self.names}), got {q.shape}, {v.shape}, {a.shape}")
        plan = self._plan()
        conn = {}  # name -> (x_a, ξ_a, ξ̇_a)
        root = plan[0][1]
        conn[plan[0][0]] = (root.placement, np.zeros(6), np.zeros(6))
        tau = np.empty(self.nv)
        Z = {}
        for k, n, (sq, sv), kids, b in plan:  # root → leaves
            xa, ta, da = conn[k]
            if n.model is None:
                continue
            m = n.ext
            b["qe"][:8] = xa
            b["qe"][8:] = q[sq]
            b["ve"][:6] = ta
            b["ve"][6:] = v[sv]
            b["ae"][:6] = da
            b["ae"][6:] = a[sv]
            # (dqNE with the joint wrenches, unused here: newton_euler()'s kernel, compiled for
            # it with these types — ne_core called from Python was a kernel of its own)
            st = _ne_kernel(m.mi, m.mf, m.gravity, b["qe"], b["ve"], b["ae"], _NOF, b["ws"], b["tau"],
                            b["G"])
            if st:
                _raise_in(k, m, st)
            self.evaluations[k] += 1
            if kids:
                _fk(m.mi, m.mf, b["qe"], b["X"])
                ws = b["ws"]
                for j, body, to_a, off in kids:
                    tb, db = np.empty(6), np.empty(6)
                    _ad6(off, ws[body, W_XI:W_XI + 6].copy(), tb)  # (contiguous: numba's
                    _ad6(off, ws[body, W_XID:W_XID + 6].copy(), db)  # fast dispatch)
                    _ad6_inv(to_a, tb, tb)
                    _ad6_inv(to_a, db, db)
                    xc = np.empty(8)
                    _dq_mul(b["X"][body].copy(), to_a, xc)
                    conn[j] = (xc, tb, db)
            else:
                Z[k] = _connector_wrench(m, b["ws"])
                tau[sv] = b["tau"][6:]
        for k, n, (_sq, sv), kids, b in reversed(plan):  # leaves → root
            if n.model is None:
                Z[k] = self._box_wrench(k, n, *conn[k], t, ())
                continue
            if not kids:
                continue
            m = n.ext
            f = b["fext"]
            f[:] = 0.0
            w = np.empty(6)
            for j, body, to_a, _off in kids:
                _ad6(to_a, kernel_rows(Z[j]), w)  # ζ_b at the body origin, body axes (a black box's
                # wrench is a read-only broadcast: a writable view, the kernel's type)
                f[body] -= w  # the successor pushes back on its predecessor
            st = _ne_kernel(m.mi, m.mf, m.gravity, b["qe"], b["ve"], b["ae"], f, b["ws"], b["tau"], b["G"])
            if st:
                _raise_in(k, m, st)
            Z[k] = _connector_wrench(m, b["ws"])
            tau[sv] = b["tau"][6:]
        return tau

    def _box_wrench(self, k, n, xa, ta, da, t, batch):
        self.evaluations[k] += 1
        try:
            z = np.asarray(n.box.wrench(xa, ta, da, t), dtype=float)
        except DqdynError:
            raise
        except Exception as e:  # a foreign failure inside user code
            raise ModelError(f"black box {k!r} failed: {type(e).__name__}: {e}") from e
        try:
            z = np.broadcast_to(z, batch + (6,))
        except ValueError:
            raise ShapeError(f"black box {k!r} returned a wrench of shape {z.shape}; "
                             f"expected {batch + (6,)} ([f, τ] at its connection)") from None
        if not np.all(np.isfinite(z)):
            raise NonFiniteError(f"black box {k!r} returned a non-finite wrench")
        return z

    # ------------------------------------------------------------------------- from a model
    @classmethod
    def from_model(cls, model: Model, starts: dict[str, str], root: str = "root",
                   name: str | None = None) -> tuple[InterconnectionGraph, np.ndarray, np.ndarray]:
        """Split a monolithic tree ``model`` into subsystems: ``starts`` maps a subsystem name
        to its first body; the bodies not below any start form subsystem ``root``.  Each
        subsystem is connected at its first body's parent body.  Returns ``(graph, iq, iv)``
        with ``graph`` coordinates = ``q[iq]``, ``v[iv]`` of the model."""
        owner = {}
        first = {}
        for s, bname in starts.items():
            first[model.body_index(bname)] = s
        for i in range(1, model.nbodies + 1):
            p = int(model.parent[i])
            owner[i] = first.get(i, owner.get(p, root) if p > 0 else root)
        g = cls(name or model.name, model.gravity)
        subs = [root] + [s for s in starts if s != root]
        iq, iv = [], []
        for s in subs:
            bodies = [i for i in range(1, model.nbodies + 1) if owner[i] == s]
            if not bodies:
                raise ModelError(f"subsystem {s!r} of from_model has no bodies")
            b = ModelBuilder(s, model.gravity, inertia_check="off")
            for i in bodies:
                jt = int(model.joint_type[i])
                if model.joint_nv[i] == 0 and jt != FIXED:
                    raise ModelError("from_model: mimic joints are not supported")
                p = int(model.parent[i])
                b.add_body(model.body_names[i], model.body_names[p] if owner.get(p) == s else "world",
                           JOINT_TYPE_NAMES[jt], joint_name=model.joint_names_all[i],
                           axis=model.joint_axis[i], pitch=float(model.joint_pitch[i]),
                           placement=np.array(model.joint_placement[i]), mass=float(model.mass[i]),
                           com=np.array(model.com[i]), inertia=np.array(model.inertia[i]))
                iq += list(range(int(model.idx_q[i]), int(model.idx_q[i]) + int(model.joint_nq[i])))
                iv += list(range(int(model.idx_v[i]), int(model.idx_v[i]) + int(model.joint_nv[i])))
            for f, fb, pl in zip(model.frame_names, model.frame_body, model.frame_placement):
                if int(fb) in bodies and f not in model.body_names:
                    b.add_frame(f, model.body_names[int(fb)], np.array(pl))
            sub = b.build()
            if s == root:
                g.add(s, sub)
            else:
                pb = int(model.parent[bodies[0]])
                g.add(s, sub, owner[pb] if pb > 0 else root,
                      at=model.body_names[pb] if pb > 0 else "world")
        return g, np.array(iq, dtype=int), np.array(iv, dtype=int)


def recorded_connection_wrench(graph: InterconnectionGraph, name: str, times, Q, V, A,
                               kind: str = "cubic") -> RecordedWrench:
    """Record the connection wrench ``ζ_a`` of subsystem ``name`` along a trajectory of the
    graph (``Q``, ``V``, ``A`` (N, ·) in its composite layout) as a `RecordedWrench` — e.g.
    to replace that subsystem by its recording."""
    r = graph.evaluate(Q, V, A)
    return RecordedWrench(times, r.connection_wrenches[name], kind=kind, name=f"{name} (recorded)")


__all__ = ["BlackBox", "GraphResult", "InterconnectionGraph", "ModelBlackBox", "RecordedWrench",
           "recorded_connection_wrench"]
