r"""Loop closures between two frames, joint couplings, and user-defined constraints.

Loop closures ([Kim2012, §3, eqs. (54)–(55)]: cut the loop, keep the tree, add ``f(q) = 0``) are
written with the frames' **world-aligned** Jacobians (rows ``[ω⁰; ṗ]``: angular velocity in F_0
and the velocity of the frame origin), whose time derivatives are the true angular and linear
accelerations; so every row below is an exact time derivative and ``b = −Ȧ v`` is exact.
With ``Δ(·) = (·)_b − (·)_a`` for frames ``a`` and ``b``:

========  ====  ================================================  ==================================
kind      dim   velocity rows ``A v``                              position residual ``φ(q)``
========  ====  ================================================  ==================================
``6d``    6     ``Δω⁰`` and ``Δṗ`` (weld: the frames coincide)    ``[rotvec(R_b R_aᵀ); p_b − p_a]``
``3d``    3     ``Δṗ`` (a spherical pair: the points coincide)     ``p_b − p_a``
``5d``    5     ``Δṗ`` and ``e_kᵀ Δω⁰``, ``e_k = R_a u_k ⊥ R_a u``   ``p_b − p_a``, ``[−e₂·R_b u, e₁·R_b u]``
          \     (a revolute pair about the frames' common axis u)
``1d``    1     ``n̂ᵀ Δṗ``, ``n̂ = (p_b − p_a)/|p_b − p_a|``          ``|p_b − p_a| − d``
========  ====  ================================================  ==================================

A planar mechanism closed with a ``3d`` (or ``6d``) constraint has identically zero rows
(rank-deficient ``A``): the constrained dynamics handle redundant rows by pseudo-inverse.

Joint couplings (gears, URDF ``<mimic>``-type): ``q_j = r q_m + c`` between two independent
1-DoF joints, velocity row ``v_j − r v_m``.  User constraints: a callable giving ``(A, b)`` at
acceleration level, or constant ``A`` and ``b``.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from dqdyn._engine.checks import real_array
from dqdyn.constraints.base import COUPLING, LOOP_3D, LOOP_6D, Constraint, frame_kinematics, resolve_frame, spec_rows
from dqdyn.errors import DqdynError, ModelError, ShapeError, SingularError
from dqdyn.multibody.model import Model

_KINDS = {"6d": 6, "3d": 3, "5d": 5, "1d": 1}


def _rotvec(R: np.ndarray) -> np.ndarray:
    """Rotation vector (N, 3) of rotation matrices (N, 3, 3) (log map; accurate near identity)."""
    c = np.clip((np.trace(R, axis1=-2, axis2=-1) - 1.0) / 2.0, -1.0, 1.0)
    th = np.arccos(c)
    w = np.stack([R[:, 2, 1] - R[:, 1, 2], R[:, 0, 2] - R[:, 2, 0], R[:, 1, 0] - R[:, 0, 1]], -1)
    s = np.sin(th)
    small = s < 1e-8
    fac = np.where(small, 0.5 + th * th / 12.0, th / (2.0 * np.where(small, 1.0, s)))
    return fac[:, None] * w


def _perp_basis(u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Unit ``u1, u2`` with ``(u1, u2, u)`` right-handed orthonormal."""
    t = np.array([1.0, 0, 0]) if abs(u[0]) < 0.9 else np.array([0.0, 1, 0])
    u1 = t - (t @ u) * u
    u1 /= np.linalg.norm(u1)
    return u1, np.cross(u, u1)


class LoopClosure(Constraint):
    """Closure of a kinematic loop between frame ``a`` and frame ``b`` (module table).

    ``frame_a`` / ``frame_b``: a model frame name, body index or ``(frame, offset)``.
    ``kind``: ``"6d"`` weld, ``"3d"`` point, ``"5d"`` revolute-type about ``axis`` (in frame
    a, default z; the frames' axes must coincide), ``"1d"`` distance ``distance`` between the
    origins (``None``: taken from `at`).
    """

    def __init__(self, frame_a, frame_b, kind: str = "6d", *, axis=(0.0, 0.0, 1.0),
                 distance: float | None = None, name: str | None = None):
        kind = str(kind).lower()
        if kind not in _KINDS:
            raise ModelError(f"LoopClosure: kind must be one of {list(_KINDS)}, got {kind!r}")
        self.frame_a, self.frame_b, self.kind = frame_a, frame_b, kind
        self.dim = _KINDS[kind]
        self.holonomic = True
        u = np.asarray(axis, dtype=float).reshape(3)
        if not np.linalg.norm(u) > 0:
            raise ModelError("LoopClosure: axis must be a non-zero 3-vector")
        self.axis = u / np.linalg.norm(u)
        self.distance = None if distance is None else float(distance)
        self.name = name or f"{kind} loop {frame_a!r}–{frame_b!r}"
        self._cache = None

    def _frames(self, model: Model):
        if self._cache is None or self._cache[0] is not model:
            self._cache = (model, resolve_frame(model, self.frame_a), resolve_frame(model, self.frame_b))
        return self._cache[1], self._cache[2]

    def at(self, model: Model, q) -> LoopClosure:
        """For ``1d``: a copy whose distance is the current one at ``q``; other kinds: ``self``."""
        if self.kind != "1d":
            return self
        (ba, pa), (bb, pb) = self._frames(model)
        Q = np.asarray(q, dtype=float).reshape(1, model.nq)
        V = np.zeros((1, model.nv))
        d = np.linalg.norm(frame_kinematics(model, Q, V, bb, pb).p - frame_kinematics(model, Q, V, ba, pa).p)
        return LoopClosure(self.frame_a, self.frame_b, "1d", distance=d, name=self.name)

    def _compiled(self, model: Model):
        if self.kind not in ("6d", "3d"):
            return None
        (ba, pa), (bb, pb) = self._frames(model)
        kind, dim = (LOOP_6D, 6) if self.kind == "6d" else (LOOP_3D, 3)
        return spec_rows(kind, [ba, bb, 0, 0, dim], np.concatenate([pa, pb]))

    def _terms(self, model: Model, Q, V):
        (ba, pa), (bb, pb) = self._frames(model)
        fa = frame_kinematics(model, Q, V, ba, pa)
        fb = frame_kinematics(model, Q, V, bb, pb)
        dJ = fb.J - fa.J
        dJd_v = fb.Jdv - fa.Jdv
        dp = fb.p - fa.p
        if self.kind == "6d":
            A = dJ
            b = -dJd_v
            pe = np.concatenate([_rotvec(fb.R @ np.swapaxes(fa.R, -1, -2)), dp], axis=1)
        elif self.kind == "3d":
            A = dJ[:, 3:]
            b = -dJd_v[:, 3:]
            pe = dp
        elif self.kind == "5d":
            u1, u2 = _perp_basis(self.axis)
            e1 = fa.R @ u1  # (N, 3)
            e2 = fa.R @ u2
            zb = fb.R @ self.axis
            E = np.stack([e1, e2], axis=1)  # (N, 2, 3)
            wa = np.einsum("nij,nj->ni", fa.J[:, :3], V)
            dw = np.einsum("nij,nj->ni", dJ[:, :3], V)
            # d/dt (e_kᵀ Δω) = e_kᵀ Δω̇ + (ω_a × e_k)ᵀ Δω
            Edot = np.cross(wa[:, None, :], E)
            A = np.concatenate([dJ[:, 3:], np.einsum("nkj,nji->nki", E, dJ[:, :3])], axis=1)
            b = np.concatenate([-dJd_v[:, 3:],
                                -np.einsum("nkj,nj->nk", E, dJd_v[:, :3])
                                - np.einsum("nkj,nj->nk", Edot, dw)], axis=1)
            pe = np.concatenate([dp, np.stack([-np.einsum("ni,ni->n", e2, zb),
                                               np.einsum("ni,ni->n", e1, zb)], -1)], axis=1)
        else:  # 1d
            if self.distance is None:
                raise ModelError(
                    f"{self.name}: a 1d (distance) loop closure needs distance=…, or build it with "
                    ".at(model, q) to keep the distance at a configuration"
                )
            r = np.linalg.norm(dp, axis=1)
            if np.any(r < 1e-12):
                raise SingularError(
                    f"{self.name}: the two points coincide, so the distance constraint's direction "
                    "is undefined (use a 3d point constraint for zero distance)"
                )
            n = dp / r[:, None]
            dv = np.einsum("nij,nj->ni", dJ[:, 3:], V)
            perp = dv - np.einsum("ni,ni->n", n, dv)[:, None] * n
            A = np.einsum("ni,nij->nj", n, dJ[:, 3:])[:, None, :]
            b = (-np.einsum("ni,ni->n", n, dJd_v[:, 3:]) - np.einsum("ni,ni->n", perp, perp) / r)[:, None]
            pe = (r - self.distance)[:, None]
        ve = np.einsum("nij,nj->ni", A, V)
        return A, b, ve, pe


class JointCoupling(Constraint):
    """``q_joint = ratio · q_master + offset`` between two independent 1-DoF joints (a gear pair,
    a belt, a URDF ``<mimic>`` enforced as a constraint rather than by substitution)."""

    def __init__(self, joint: str, master: str, ratio: float = 1.0, offset: float = 0.0,
                 name: str | None = None):
        self.joint, self.master = joint, master
        self.ratio, self.offset = float(ratio), float(offset)
        self.dim = 1
        self.holonomic = True
        self.name = name or f"coupling {joint} = {ratio:g}·{master} + {offset:g}"

    def _slots(self, model: Model):
        out = []
        for j in (self.joint, self.master):
            sq, sv = model.q_slice(j), model.v_slice(j)
            if sq.stop - sq.start != 1 or sv.stop - sv.start != 1:
                raise ModelError(
                    f"{self.name}: joint {j!r} must be an independent 1-DoF joint (it has "
                    f"nq={sq.stop - sq.start}, nv={sv.stop - sv.start})"
                )
            out.append((sq.start, sv.start))
        return out

    def _compiled(self, model: Model):
        (qj, vj), (qm, vm) = self._slots(model)
        return spec_rows(COUPLING, [qj, vj, qm, vm, 1], [self.ratio, self.offset])

    def _terms(self, model: Model, Q, V):
        (qj, vj), (qm, vm) = self._slots(model)
        N = Q.shape[0]
        A = np.zeros((N, 1, model.nv))
        A[:, 0, vj] += 1.0
        A[:, 0, vm] -= self.ratio
        b = np.zeros((N, 1))
        ve = (V[:, vj] - self.ratio * V[:, vm])[:, None]
        pe = (Q[:, qj] - self.ratio * Q[:, qm] - self.offset)[:, None]
        return A, b, ve, pe


class UserConstraint(Constraint):
    """A user-defined constraint ``A(q, v) v̇ = b(q, v)``.

    Either ``fn(model, q, v) -> (A, b)`` (one state: A (dim, nv), b (dim,)), or constant
    ``A`` (dim, nv) and ``b`` (dim,) (default zeros).  Optional ``position(model, q) -> φ`` and
    ``velocity(model, q, v) -> A v`` enable stabilization; for constant ``A`` with ``b = 0`` the
    velocity error defaults to ``A v``.
    """

    def __init__(self, fn: Callable | None = None, *, A=None, b=None, position: Callable | None = None,
                 velocity: Callable | None = None, dim: int | None = None, name: str = "user"):
        if (fn is None) == (A is None):
            raise ModelError("UserConstraint: give either fn(model, q, v) -> (A, b) or a constant A")
        self.fn, self.position, self.velocity, self.name = fn, position, velocity, name
        if A is not None:
            A = np.atleast_2d(real_array(A, f"UserConstraint {name!r}: A"))
            b = np.zeros(A.shape[0]) if b is None else real_array(
                b, f"UserConstraint {name!r}: b").reshape(-1)
            if b.shape != (A.shape[0],):
                raise ShapeError(f"UserConstraint: b must have {A.shape[0]} entries, got {b.shape}")
            self._A, self._b = A, b
            dim = A.shape[0]
            if velocity is None and not np.any(b):
                self.velocity = lambda model, q, v: self._A @ v
        else:
            self._A = self._b = None
        self.dim = dim  # None until first evaluation for a callable
        self.holonomic = position is not None

    def _terms(self, model: Model, Q, V):
        N = Q.shape[0]
        As, bs, ves, pes = [], [], [], []
        for n in range(N):
            if self.fn is not None:
                A, b = self._user("fn(model, q, v) -> (A, b)", self._call_fn, model, Q[n], V[n])
                A = np.atleast_2d(real_array(A, f"{self.name}: A returned by fn"))
                b = real_array(b, f"{self.name}: b returned by fn").reshape(-1)
            else:
                A, b = self._A, self._b
            if A.ndim != 2 or A.shape[1] != model.nv or b.shape != (A.shape[0],):
                raise ShapeError(
                    f"{self.name}: A must be (dim, {model.nv}) and b (dim,), got {A.shape} and {b.shape}"
                )
            self.dim = A.shape[0]
            As.append(A)
            bs.append(b)
            if self.velocity is not None:
                ves.append(self._vec("velocity(model, q, v)", self.velocity, model, Q[n], V[n],
                                     rows=True))
            if self.position is not None:
                pes.append(self._vec("position(model, q)", self.position, model, Q[n]))
        ve = np.array(ves) if ves else None
        pe = np.array(pes) if pes else None
        return np.array(As), np.array(bs), ve, pe

    def _call_fn(self, model, q, v):
        r = self.fn(model, q, v)
        if not (isinstance(r, (tuple, list)) and len(r) == 2):
            raise ShapeError(f"expected a pair (A, b), got {type(r).__name__}")
        return r

    def _user(self, what: str, f, *args):
        """Call a user function; its exceptions come back as a ModelError naming the constraint."""
        try:
            return f(*args)
        except DqdynError as e:
            raise type(e)(f"UserConstraint {self.name!r}: {what}: {e}") from e
        except Exception as e:
            raise ModelError(
                f"UserConstraint {self.name!r}: {what} raised {type(e).__name__}: {e}") from e

    def _vec(self, what: str, f, *args, rows: bool = False):
        x = real_array(self._user(what, f, *args), f"{self.name}: {what}").reshape(-1)
        if rows and self.dim is not None and x.shape != (self.dim,):
            raise ShapeError(f"UserConstraint {self.name!r}: {what} must return {self.dim} "
                             f"entries (the constraint's rows), got {x.shape[0]}")
        return x

    def _position(self, model: Model, Q):
        if self.position is None:
            return None
        return np.array([self._vec("position(model, q)", self.position, model, q) for q in Q])


__all__ = ["LoopClosure", "JointCoupling", "UserConstraint"]
