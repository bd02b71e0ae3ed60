r"""Rigid contacts as constraints: `PointContact` (3D) and `FrameContact` (6D).

A contact is a `dqdyn.constraints.Constraint` ``A(q) v̇ = b(q, v)`` between a frame of the
robot and the (fixed) world, written **in the contact frame** (Pinocchio's ``LOCAL`` rigid
constraint models), so that its multipliers are the contact force (3D) or wrench ``[f; τ]`` (6D)
that the world applies to the robot, in the contact frame's axes at its origin:

==================  ===  ==========================================  ==============================
contact             dim  rows ``A v``                                 drift (``b = −drift``)
==================  ===  ==========================================  ==============================
``PointContact``    3    ``v_b = Rᵀ ṗ`` (linear rows of ``J_b``)       ``(J̇_b v)_v + ω_b × v_b``
``FrameContact``    6    ``[v_b; ω_b]`` (``J_b`` rows reordered)       ``J̇_b v`` (same order)
==================  ===  ==========================================  ==============================

so a point contact holds the *classical* acceleration ``Rᵀ p̈`` of the point at zero and a frame
contact the spatial acceleration of the frame (`dqdyn.frame_acceleration`).  Both are
ordinary constraints: they may be passed to `dqdyn.constrained_forward_dynamics`
(Udwadia–Kalaba) and to `dqdyn.simulation.simulate` as well as to
`dqdyn.contact_dynamics` / `dqdyn.impulse_dynamics`.

Baumgarte stabilisation ([Baumgarte1972]) per contact: ``a_c + kd v_c + kp e = 0`` with ``v_c = A v``
and the position error ``e`` with respect to ``target`` (a world point (3,) for a point contact,
expressed in the contact frame, ``Rᵀ (p − p*)``; a pose ``x*`` for a frame contact,
``log(x*⁻¹ x)`` on SE(3) as ``[v; ω]``), as Pinocchio's Baumgarte corrector.  The gains are
zero by default; ``kp > 0`` needs a ``target``.
"""

from __future__ import annotations

import numpy as np

from dqdyn.algebra.rotations import matrix_from_pose, pose_from_matrix, translation_of
from dqdyn.constraints.base import Constraint, frame_kinematics, resolve_frame
from dqdyn.constraints.loops import _rotvec
from dqdyn.contact._common import cross
from dqdyn.errors import ModelError, ShapeError
from dqdyn.multibody.model import Model

_SWAP = np.array([3, 4, 5, 0, 1, 2])
#: a count of the changes to any contact's frame, gains or target after its construction
EDITS = [0]


def _gain(value, name: str) -> float:
    try:
        g = float(value)
    except (TypeError, ValueError):
        raise ShapeError(f"{name} must be a non-negative number, got {value!r}") from None
    if not (np.isfinite(g) and g >= 0):
        raise ShapeError(f"{name} must be finite and non-negative, got {value!r}")
    return g


class _Contact(Constraint):
    """Common part of the two contact kinds."""

    kind = ""

    def __init__(self, frame, *, kp: float = 0.0, kd: float = 0.0, target=None,
                 name: str | None = None):
        if isinstance(frame, (list, np.ndarray)) or frame is None:
            raise ShapeError(f"frame must be a frame name, a body index or (frame, offset), got "
                             f"{type(frame).__name__} {frame!r:.60}")
        self._where = frame
        self._kp = _gain(kp, "kp")
        self._kd = _gain(kd, "kd")
        self._goal = None if target is None else self._target(target)
        if self._kp > 0 and self._goal is None:
            raise ModelError(f"{type(self).__name__}: kp > 0 needs a target (the position the "
                             "contact is held at)")
        self.holonomic = True
        self.name = name or f"{self.kind} contact {frame!r}"
        self._cache = self._spec_cache = None

    # -- the frame, gains and target: changing one is seen by the contact fronts' cached plans
    # (`dqdyn.contact._kkt.plan_hit`) through the count `EDITS`
    @property
    def frame(self):
        """The contact frame: a frame name, a body index or ``(frame, offset)``."""
        return self._where

    @frame.setter
    def frame(self, value):
        self._where = value
        self._cache = self._spec_cache = None
        self._edited()

    @property
    def kp(self) -> float:
        """The Baumgarte position gain (1/s²)."""
        return self._kp

    @kp.setter
    def kp(self, value):
        self._kp = _gain(value, "kp")
        self._edited()

    @property
    def kd(self) -> float:
        """The Baumgarte velocity gain (1/s)."""
        return self._kd

    @kd.setter
    def kd(self, value):
        self._kd = _gain(value, "kd")
        self._edited()

    @property
    def target(self):
        """The position (point contact, (3,)) or pose (frame contact, ``(R, p)``) held, or None."""
        return self._goal

    @target.setter
    def target(self, value):
        self._goal = None if value is None else self._target(value)
        self._edited()

    def _edited(self):
        # (the compiled rows kept on the contact by `dqdyn.constraints.forward` are made again)
        self.__dict__.pop("_cspec", None)
        EDITS[0] += 1

    # -- frame resolution, cached per model
    def _frame(self, model: Model):
        if self._cache is None or self._cache[0] is not model:
            self._cache = (model, resolve_frame(model, self.frame))
        return self._cache[1]

    def check(self, model: Model) -> None:
        """Resolve the frame now (`UnknownNameError` for an unknown one)."""
        self._frame(model)

    def _kernel_spec(self, model: Model) -> np.ndarray:
        """This contact's row of the compiled kernels' contact table (`dqdyn.contact._kernels`:
        ``[body, dim, placement (8), kp, kd, has_target, target (12)]``), cached per model,
        gains and target."""
        key = (self._kp, self._kd, id(self._goal))
        cached = self._spec_cache
        if cached is not None and cached[0] is model and cached[1] == key:
            return cached[2]
        body, pl = self._frame(model)
        row = np.zeros(25)
        row[0], row[1], row[2:10], row[10], row[11] = body, self.dim, pl, self.kp, self.kd
        if self.target is not None:
            row[12] = 1.0
            if self.dim == 3:
                row[13:16] = self.target
            else:
                row[13:22] = self.target[0].ravel()
                row[22:25] = self.target[1]
        self._spec_cache = (model, key, row)
        return row

    def kinematics(self, model: Model, Q: np.ndarray, V: np.ndarray):
        body, pl = self._frame(model)
        return frame_kinematics(model, Q, V, body, pl, "body")

    def rows(self, model: Model, Q: np.ndarray, V: np.ndarray):
        """``(A (N, dim, nv), drift (N, dim), e (N, dim) or None)`` in the contact frame."""
        raise NotImplementedError

    def _terms(self, model: Model, Q, V):
        A, drift, e = self.rows(model, Q, V)
        return A, -drift, np.einsum("nij,nj->ni", A, V), e

    def stabilized_rhs(self, model: Model, Q, V):
        """``(A, b)`` with ``b = −drift − kd A v − kp e`` (Baumgarte terms of this contact)."""
        A, drift, e = self.rows(model, Q, V)
        b = -drift
        if self.kd:
            b = b - self.kd * np.einsum("nij,nj->ni", A, V)
        if self.kp:
            b = b - self.kp * e
        return A, b

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.frame!r}, kp={self.kp}, kd={self.kd})"


class PointContact(_Contact):
    """A point of the robot held fixed in the world (3 rows; the force has no moment at the point).

    Parameters
    ----------
    frame : str, int or (frame, offset)
        The contact point: the origin of a frame (name or body index), or of ``(frame, offset)``
        (see `dqdyn.constraints`).
    kp, kd : float, default 0
        Baumgarte gains (1/s², 1/s): ``a_c + kd v_c + kp e = 0``.
    target : array_like (3,), optional
        The world position the point is held at (needed for ``kp > 0``).
    """

    dim = 3
    kind = "point"

    def _target(self, target):
        t = np.asarray(target, dtype=float)
        if t.shape != (3,) or not np.all(np.isfinite(t)):
            raise ShapeError(f"target must be a finite world point of shape (3,), got shape {t.shape}")
        return t

    def rows(self, model, Q, V):
        fk = self.kinematics(model, Q, V)
        A = fk.J[:, 3:]
        xi = np.einsum("nij,nj->ni", fk.J, V)
        drift = fk.Jdv[:, 3:] + cross(xi[:, :3], xi[:, 3:])
        e = None
        if self.target is not None:
            e = np.einsum("nji,nj->ni", fk.R, fk.p - self.target)
        return A, drift, e


class FrameContact(_Contact):
    """A frame of the robot welded to the world (6 rows; the multipliers are the wrench
    ``[f; τ]`` at the frame's origin, frame axes — dqdyn's wrench order).

    Parameters
    ----------
    frame : str, int or (frame, offset)
        The contact frame (see `PointContact`).
    kp, kd : float, default 0
        Baumgarte gains.
    target : array_like, optional
        The world pose the frame is held at: a unit dual quaternion (8,) or a 4 × 4 matrix
        (needed for ``kp > 0``).
    """

    dim = 6
    kind = "frame"

    def _target(self, target):
        t = np.asarray(target, dtype=float)
        if t.shape == (4, 4):
            t = pose_from_matrix(t)
        if t.shape != (8,) or not np.all(np.isfinite(t)):
            raise ShapeError(f"target must be a pose: a unit dual quaternion (8,) or a 4×4 matrix, "
                             f"got shape {np.shape(target)}")
        T = matrix_from_pose(t)
        return T[:3, :3], translation_of(t)

    def rows(self, model, Q, V):
        fk = self.kinematics(model, Q, V)
        A = fk.J[:, _SWAP]
        drift = fk.Jdv[:, _SWAP]
        e = None
        if self.target is not None:
            Rt, pt = self.target
            e = _log6(Rt.T[None] @ fk.R, np.einsum("ji,nj->ni", Rt, fk.p - pt))
        return A, drift, e


def _log6(R: np.ndarray, t: np.ndarray) -> np.ndarray:
    """``[v; ω]`` (N, 6) of ``log`` on SE(3) of the poses ``(R, t)`` (N, 3, 3), (N, 3):
    ``ω`` the rotation vector of ``R`` and ``v = V(ω)⁻¹ t`` (the inverse of ``t = V(ω) v``)."""
    w = _rotvec(R)
    th2 = np.einsum("ni,ni->n", w, w)
    th = np.sqrt(th2)
    small = th < 1e-4
    ths = np.where(small, 1.0, th)
    # 1/θ² (1 − θ sin θ / (2 (1 − cos θ))), its series 1/12 + θ²/720 near 0
    c = np.where(small, 1.0 / 12.0 + th2 / 720.0,
                 (1.0 - ths * np.sin(ths) / (2.0 * (1.0 - np.cos(ths)))) / (ths * ths))
    wxt = cross(w, t)
    v = t - 0.5 * wxt + c[:, None] * cross(w, wxt)
    return np.concatenate([v, w], axis=1)


def as_contact_list(contacts, model: Model) -> list:
    """``contacts`` (one contact or a sequence of them) as a list, each frame resolved."""
    if isinstance(contacts, _Contact):
        contacts = [contacts]
    try:
        if isinstance(contacts, (str, bytes, dict)):
            raise TypeError
        out = list(contacts)
    except TypeError:
        raise ModelError(f"contacts must be a PointContact / FrameContact or a list of them, got "
                         f"{type(contacts).__name__} {contacts!r:.60}") from None
    for c in out:
        if not isinstance(c, _Contact):
            raise ModelError(f"contacts must hold dqdyn.PointContact / dqdyn.FrameContact objects, "
                             f"got {type(c).__name__} {c!r:.60}")
        c.check(model)
    return out


__all__ = ["PointContact", "FrameContact", "as_contact_list"]
