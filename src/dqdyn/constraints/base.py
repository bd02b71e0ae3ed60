"""The constraint protocol and the frame-kinematics helper every constraint is built on.

A constraint is an object that gives, at a state ``(q, v)``, the **acceleration-level** form

    A(q, v) v̇ = b(q, v)                       ([Silva2022, eq. (62)]; [Kim2012, eqs. (54)–(55)])

(``v̇`` is the time derivative of dqdyn's velocity ``v``; it is ``q̈`` for every joint but the
spherical and free joints).  Every bundled constraint is *scleronomic* (time-invariant) and is the
time derivative of a velocity-level constraint ``A(q) v = 0``: then ``b = −Ȧ v`` exactly (the
paper's ``b = −Ȧ q̇`` after eq. 64), and

* `Constraint.velocity_error` is ``A(q) v`` (0 on the constraint manifold);
* `Constraint.position_error` is a residual ``φ(q)`` with ``φ̇ = A v`` on the manifold
  (holonomic constraints only; ``None`` for nonholonomic ones such as rolling without slipping).

Both are used by the stabilization of `dqdyn.constraints.dynamics` (Baumgarte terms,
projection) and by the tests.

Frames are given as a model frame name (every body is also a frame), a body index, or a pair
``(frame, offset)`` where ``offset`` is a translation ``(x, y, z)`` in that frame, a unit dual
quaternion (vec8) or a 4×4 homogeneous matrix: the constrained point / frame is rigidly attached
to the named frame at that offset.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dqdyn._engine.jit import kernel
from dqdyn.algebra import dualquat
from dqdyn.algebra._core import jit, pose_translation
from dqdyn.algebra.rotations import pose_from_matrix, pose_from_rt
from dqdyn.errors import ModelError, ShapeError
from dqdyn.kinematics.jacobians import jacobian_drift_kernel
from dqdyn.multibody.model import Model

_IDENT8 = np.array([1.0, 0, 0, 0, 0, 0, 0, 0])

# The compiled constraint kinds (constraints/_compiled.py ``_terms_kernel``): one row of
# ``ispec`` (int64, SPEC_I columns) and ``fspec`` (float64, SPEC_F columns) per constraint.
#   COUPLING:    ispec [kind, q_j, v_j, q_m, v_m, 1],  fspec [ratio, offset, ...]
#   DIFF_DRIVE:  ispec [kind, body, 0, 0, 0, 1],       fspec [placement (8), ...] (body frame)
#   LOOP_6D/3D:  ispec [kind, body_a, body_b, 0, 0, 6 or 3], fspec [placement_a (8), placement_b (8)]
SPEC_I, SPEC_F = 6, 16
COUPLING, DIFF_DRIVE, LOOP_6D, LOOP_3D = 1, 2, 3, 4


def spec_rows(kind: int, ints, floats=()):
    """One constraint's ``(ispec, fspec)`` rows (see `SPEC_I`)."""
    i = np.zeros((1, SPEC_I), dtype=np.int64)
    f = np.zeros((1, SPEC_F))
    i[0, 0] = kind
    i[0, 1 : 1 + len(ints)] = ints
    f[0, : len(floats)] = floats
    return i, f


def _offset_pose(offset) -> np.ndarray:
    o = np.asarray(offset, dtype=float)
    if o.shape == (3,):
        return pose_from_rt(np.array([1.0, 0, 0, 0]), o)
    if o.shape == (8,):
        return o / np.linalg.norm(o[:4])
    if o.shape == (4, 4):
        return pose_from_matrix(o)
    raise ShapeError(
        f"a frame offset must be a translation (3,), a unit dual quaternion (8,) or a 4×4 "
        f"homogeneous matrix, got shape {o.shape}"
    )


def resolve_frame(model: Model, spec) -> tuple[int, np.ndarray]:
    """``(body, placement)`` of a frame spec: name, body index, or ``(name_or_index, offset)``."""
    if isinstance(spec, tuple) and len(spec) == 2 and not isinstance(spec[0], (float, np.floating)):
        base, offset = spec
        body, pl = resolve_frame(model, base)
        return body, dualquat.mul(pl, _offset_pose(offset))
    if isinstance(spec, (int, np.integer)):
        b = int(spec)
        if not 0 <= b <= model.nbodies:
            raise ShapeError(f"body index {b} out of range 0..{model.nbodies}")
        return b, _IDENT8.copy()
    k = model.frame_index(spec)
    return int(model.frame_body[k]), np.array(model.frame_placement[k], dtype=float)


@dataclass
class FrameKinematics:
    """Pose, Jacobian and Jacobian drift ``J̇ v`` of one frame at a batch of states."""

    x: np.ndarray  # (N, 8) pose x_f^0
    R: np.ndarray  # (N, 3, 3) rotation matrix of x_f^0
    p: np.ndarray  # (N, 3) origin of the frame in F_0
    J: np.ndarray  # (N, 6, nv) Jacobian in the requested convention, rows [ω; v]
    Jdv: np.ndarray  # (N, 6) its time derivative along v, times v


@jit  # (inlined at the IR level)
def frame_rotation(x, R):
    """Rotation matrix ``R`` (3, 3) of the unit dual quaternion ``x``."""
    w, a, b, c = x[0], x[1], x[2], x[3]
    R[0, 0] = 1 - 2 * (b * b + c * c)
    R[0, 1] = 2 * (a * b - w * c)
    R[0, 2] = 2 * (a * c + w * b)
    R[1, 0] = 2 * (a * b + w * c)
    R[1, 1] = 1 - 2 * (a * a + c * c)
    R[1, 2] = 2 * (b * c - w * a)
    R[2, 0] = 2 * (a * c - w * b)
    R[2, 1] = 2 * (b * c + w * a)
    R[2, 2] = 1 - 2 * (a * a + b * b)


@kernel()
def _frame_kin_kernel(mi, mf, Q, V, body, pl, code, X, J, Jdv, x, R, p, status):
    """Per state: J, J̇ v and x_f (``jacobian_drift_kernel``: the compiled constraint rows'
    own, so both paths give the same bits), then its rotation matrix and origin."""
    for n in range(Q.shape[0]):
        st = jacobian_drift_kernel(mi, mf, Q[n], V[n], body, pl, code, X, J[n], Jdv[n], x[n])
        if st != 0:
            status[0] = st
            status[1] = n
            return
        pose_translation(x[n], p[n])
        frame_rotation(x[n], R[n])


def frame_kinematics(model: Model, Q: np.ndarray, V: np.ndarray, body: int, placement: np.ndarray,
                     frame: str = "world_aligned") -> FrameKinematics:
    """Compiled pose / Jacobian / J̇ v of the frame ``(body, placement)`` for states ``Q`` (N, nq),
    ``V`` (N, nv) (C-contiguous float64).  ``frame``: ``"body"``, ``"spatial"`` or
    ``"world_aligned"``."""
    from dqdyn._engine.boundary import raise_status
    from dqdyn.kinematics.forward import FRAMES

    code = FRAMES[frame]
    N, nv = Q.shape[0], model.nv
    pl = np.ascontiguousarray(placement, dtype=np.float64)
    X = np.empty((5, 8))
    J = np.zeros((N, 6, nv))
    Jdv = np.empty((N, 6))
    x = np.empty((N, 8))
    R = np.empty((N, 3, 3))
    p = np.empty((N, 3))
    status = np.zeros(2, dtype=np.int64)
    _frame_kin_kernel(model.mi, model.mf, Q, V, int(body), pl, code, X, J, Jdv, x, R, p, status)
    if status[0]:
        raise_status(model, int(status[0]), int(status[1]) if N > 1 else None)
    return FrameKinematics(x, R, p, J, Jdv)


def as_states(model: Model, q, v=None):
    """``(Q (N, nq), V (N, nv), batch_shape)`` from one state or a batch (``v=None``: zeros)."""
    from dqdyn._engine.boundary import as_vector_batch, broadcast_batch

    Q, bq = as_vector_batch(q, model.nq, "q", "the configuration, model.nq entries")
    if v is None:
        return Q, np.zeros((Q.shape[0], model.nv)), bq
    V, bv = as_vector_batch(v, model.nv, "v", "the velocity, model.nv entries")
    (Q, V), batch = broadcast_batch([Q, V], [bq, bv])
    return Q, V, batch


class Constraint:
    """Base class of constraints ``A(q, v) v̇ = b(q, v)`` (module docstring).

    Subclasses implement `_terms` on 2-D batches, returning ``(A (N, dim, nv), b (N, dim),
    velocity error (N, dim) or None, position error (N, k) or None)``; `_position` may be
    overridden when the position residual is cheaper than the full terms.
    """

    #: number of rows of A
    dim: int = 0
    #: True if the constraint restricts positions (position_error available)
    holonomic: bool = True
    name: str = "constraint"

    # -- to implement
    def _compiled(self, model: Model):
        """``(ispec (k, SPEC_I), fspec (k, SPEC_F))``: this constraint's rows for the compiled
        path of `constrained_forward_dynamics` (the row
        layout is `SPEC_I` / `SPEC_F`'s), or ``None`` (evaluated by `_terms`
        in Python — the default, e.g. for user constraints)."""
        return None

    def _terms(self, model: Model, Q: np.ndarray, V: np.ndarray):  # pragma: no cover - abstract
        raise NotImplementedError

    def _position(self, model: Model, Q: np.ndarray):
        return self._terms(model, Q, np.zeros((Q.shape[0], model.nv)))[3]

    # -- public API
    def terms(self, model: Model, q, v):
        """``(A, b)``: A (..., dim, nv) and b (..., dim) at the state(s) ``(q, v)``."""
        Q, V, batch = as_states(model, q, v)
        A, b, _, _ = self._terms(model, Q, V)
        return A.reshape(batch + A.shape[1:]), b.reshape(batch + b.shape[1:])

    def A(self, model: Model, q, v=None):
        """The constraint matrix A (..., dim, nv) (for the bundled constraints it depends on q only)."""
        return self.terms(model, q, v)[0]

    def b(self, model: Model, q, v):
        """The right-hand side b (..., dim) = −Ȧ v for the bundled constraints."""
        return self.terms(model, q, v)[1]

    def velocity_error(self, model: Model, q, v):
        """``A(q) v`` (..., dim) — zero when the velocity satisfies the constraint; ``None`` when
        the constraint has no velocity-level form (a user acceleration-level constraint)."""
        Q, V, batch = as_states(model, q, v)
        e = self._terms(model, Q, V)[2]
        return None if e is None else e.reshape(batch + e.shape[1:])

    def position_error(self, model: Model, q):
        """Position residual ``φ(q)`` (..., k), or ``None`` for a nonholonomic constraint."""
        if not self.holonomic:
            return None
        Q, _, batch = as_states(model, q)
        e = self._position(model, Q)
        return None if e is None else e.reshape(batch + e.shape[1:])

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r}, dim={self.dim})"


def baumgarte_gains(baumgarte) -> tuple[float, float]:
    """``(α, β)`` of ``baumgarte=(α, β)`` (``(0, 0)`` for None), checked."""
    if baumgarte is None:
        return 0.0, 0.0
    try:
        alpha, beta = (float(x) for x in baumgarte)
    except (TypeError, ValueError):
        raise ShapeError(f"baumgarte must be a pair (alpha, beta) of gains, got {baumgarte!r}") from None
    if not (np.isfinite(alpha) and np.isfinite(beta) and alpha >= 0 and beta >= 0):
        raise ShapeError(f"baumgarte gains must be finite and non-negative, got {baumgarte!r}")
    return alpha, beta


def stack_terms(model: Model, Q: np.ndarray, V: np.ndarray, constraints, baumgarte=None):
    """Stack the constraints' terms for 2-D state batches: ``(A (N, m, nv), b (N, m))``.

    ``baumgarte=(α, β)`` adds the stabilization ``b ← b − 2α A v − β² φ`` (Baumgarte 1972) for
    every row that has a velocity error and, for holonomic constraints, a position error of the
    same length (so that ``ë + 2α ė + β² e = 0`` on the rows)."""
    if baumgarte is not None:
        baumgarte = baumgarte_gains(baumgarte)
    As, bs = [], []
    for c in constraints:
        A, b, ve, pe = c._terms(model, Q, V)
        if baumgarte is not None:
            alpha, beta = baumgarte
            b = b.copy()
            if ve is not None and alpha:
                b -= 2.0 * alpha * ve
            if pe is not None and beta and pe.shape[-1] == b.shape[-1]:
                b -= beta * beta * pe
        As.append(A)
        bs.append(b)
    N = Q.shape[0]
    if not As:
        return np.zeros((N, 0, model.nv)), np.zeros((N, 0))
    return np.concatenate(As, axis=1), np.concatenate(bs, axis=1)


def as_constraint_list(constraints) -> list:
    if constraints is None:
        return []
    if isinstance(constraints, Constraint):
        return [constraints]
    try:
        if isinstance(constraints, (str, bytes)):
            raise TypeError
        out = list(constraints)
    except TypeError:
        raise ModelError(
            "constraints must be a dqdyn.constraints.Constraint or a list of them, got "
            f"{type(constraints).__name__} {constraints!r:.60}"
        ) from None
    for c in out:
        if not isinstance(c, Constraint):
            raise ModelError(
                f"constraints must be dqdyn.constraints.Constraint objects, got {type(c).__name__}; "
                "wrap a callable or a constant (A, b) in dqdyn.constraints.UserConstraint"
            )
    return out


__all__ = [
    "Constraint",
    "FrameKinematics",
    "frame_kinematics",
    "resolve_frame",
    "as_states",
    "stack_terms",
    "as_constraint_list",
]
