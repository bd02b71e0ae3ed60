"""Black-box subsystems of an interconnection graph ([Silva2022thesis, §5.1], the second
scenario after eq. (5.11); validation claim 15): a subsystem known only through its connection — the wrench it transmits as a
function of the connection's motion.  The protocol `BlackBox` and the two shipped kinds:
`ModelBlackBox` (a dqdyn model with its own joint trajectory) and `RecordedWrench`
(a wrench time series, e.g. a force/torque sensor log, interpolated in time).  The graph that
uses them: `interconnection`.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np

from dqdyn.dynamics.newton_euler import newton_euler
from dqdyn.errors import InfeasibleError, NonFiniteError, ShapeError
from dqdyn.kinematics.forward import forward_kinematics
from dqdyn.multibody.builders import ModelBuilder
from dqdyn.multibody.model import Model


# ------------------------------------------------------------------------ black-box protocol
@runtime_checkable
class BlackBox(Protocol):
    """A subsystem known only through its connection [Silva2022thesis, §5.1].

    ``wrench(pose, twist, twist_derivative, t)`` → (..., 6)

    * ``pose`` (..., 8): unit dual quaternion of the connection frame ``a`` in the world
      (``x_a^0``; lets a black box express gravity; a sensor log may ignore it);
    * ``twist`` (..., 6): body twist ``ξ_{0,a}^a = [ω, v]`` of the connection frame (its axes);
    * ``twist_derivative`` (..., 6): its time derivative ``ξ̇_{0,a}^a`` (dqdyn's convention: the
      dual part is ``p̈ + ṗ × ω`` in the frame's axes; gravity not included);
    * ``t``: time (scalar, or an array of the batch shape; ``None`` if the caller gave none);
    * returns ``ζ_a = [f, τ]``: the wrench the predecessor transmits to the black box at the
      origin of ``a``, in ``a``'s axes (the batch shape of the inputs + (6,), or (6,)).

    Optional attribute ``mass_properties``: ``(mass, com (3,), inertia (3, 3) about the CoM)`` in
    the connection frame, or ``None`` — used only by `InterconnectionGraph.build` to lump
    the black box into a monolithic model as a rigid body.
    """

    def wrench(self, pose, twist, twist_derivative, t): ...


def _extended(model: Model, gravity, name: str) -> Model:
    """``model`` below a massless connector body on a free joint (pose / twist of ``a``)."""
    b = ModelBuilder(f"{name}+connector", gravity, inertia_check="off")
    b.add_body("connector", "world", "free", joint_name="connector")
    b.add_model(model, "connector")
    return b.build()


class ModelBlackBox:
    """A dqdyn model used as a black box: its joint motion is its own business (``state(t) →
    (q, v, a)``, or a constant ``(q, v, a)`` tuple), only its connection wrench leaves it.

    ``ζ_a`` is the joint wrench of the connector of ``[connector + model]`` (dqNE, Alg. 4.1) —
    what the predecessor must transmit to carry the model with the connection's motion.
    ``mass_properties`` (for `InterconnectionGraph.build`): the model's composite rigid
    body at ``q = state(0)[0]`` — exact only while the model is not moving relative to ``a``.
    """

    def __init__(self, model: Model, state, gravity=(0.0, 0.0, -9.81), name: str = "black box"):
        if not isinstance(model, Model):
            raise ShapeError(f"model of {name!r} must be a dqdyn Model, got {type(model).__name__}")
        self.model = model
        self.name = name
        self.gravity = np.asarray(gravity, dtype=float).reshape(3)
        self._ext = _extended(model, self.gravity, name)
        if callable(state):
            self._state = state
        else:
            try:
                q, v, a = (np.asarray(x, dtype=float) for x in state)
            except (TypeError, ValueError):
                raise ShapeError(f"state of {name!r} must be a callable t -> (q, v, a) or a "
                                 f"(q, v, a) tuple") from None
            if q.shape[-1:] != (model.nq,) or v.shape[-1:] != (model.nv,) or a.shape[-1:] != (model.nv,):
                raise ShapeError(f"state of {name!r}: q must have {model.nq} entries and v, a "
                                 f"{model.nv}, got {q.shape}, {v.shape}, {a.shape}")
            self._state = lambda t, _s=(q, v, a): _s
        self.calls = 0

    @property
    def mass_properties(self):
        q = np.asarray(self._state(0.0)[0], dtype=float)
        X = forward_kinematics(self.model, q)
        wm, wc, wI = self.model.welded_inertia  # (welded to the connection frame)
        m = float(np.sum(self.model.mass)) + wm
        if m <= 0:
            return None
        from dqdyn.algebra.dualquat import matrix_from_pose

        cs, Is = np.zeros(3), np.zeros((3, 3))
        parts = []
        for i in range(1, self.model.nbodies + 1):
            T = matrix_from_pose(X[i])
            c = T[:3, :3] @ self.model.com[i] + T[:3, 3]
            parts.append((self.model.mass[i], c, T[:3, :3] @ self.model.inertia[i] @ T[:3, :3].T))
            cs += self.model.mass[i] * c
        parts.append((wm, np.array(wc), np.array(wI)))
        cs += wm * np.asarray(wc)
        cs /= m
        for mi, c, Ii in parts:
            d = c - cs
            Is += Ii + mi * (d @ d * np.eye(3) - np.outer(d, d))
        return m, cs, Is

    def wrench(self, pose, twist, twist_derivative, t):
        self.calls += 1
        q, v, a = (np.asarray(x, dtype=float) for x in self._state(0.0 if t is None else t))
        batch = np.broadcast_shapes(np.shape(pose)[:-1], np.shape(twist)[:-1],
                                    np.shape(twist_derivative)[:-1], q.shape[:-1], v.shape[:-1],
                                    a.shape[:-1])
        def bc(x, n):
            return np.broadcast_to(x, batch + (n,))

        qe = np.concatenate([bc(pose, 8), bc(q, self.model.nq)], -1)
        ve = np.concatenate([bc(twist, 6), bc(v, self.model.nv)], -1)
        ae = np.concatenate([bc(twist_derivative, 6), bc(a, self.model.nv)], -1)
        zc = newton_euler(self._ext, qe, ve, ae).com_wrenches[..., 1, :]
        # ζ_a at the connector's origin (its CoM is the welded inertia's, if the model has one)
        from dqdyn.algebra.dualquat import Ad6

        return Ad6(np.r_[1.0, 0.0, 0.0, 0.0, 0.0, 0.5 * np.asarray(self._ext.com[1])], zc)


class RecordedWrench:
    """A recorded connection wrench ``ζ_a(t)`` (e.g. a force/torque sensor log, or a wrench
    recorded from a simulator), interpolated in time; the connection's motion is ignored.

    ``times`` (N,) strictly increasing; ``wrenches`` (N, 6) ``[f, τ]`` at ``a`` in its axes;
    ``kind``: ``"cubic"`` (not-a-knot cubic spline, error O(h⁴ ζ⁗)) or ``"linear"`` (O(h² ζ̈)).
    Asking outside ``[times[0], times[-1]]`` raises `InfeasibleError`.
    ``mass_properties`` may be given (for `InterconnectionGraph.build`).
    """

    def __init__(self, times, wrenches, kind: str = "cubic", mass_properties=None,
                 name: str = "recorded wrench"):
        t = np.asarray(times, dtype=float)
        w = np.asarray(wrenches, dtype=float)
        if t.ndim != 1 or t.size < 2:
            raise ShapeError(f"times of {name!r} must be a 1-D array of at least 2 samples, got {t.shape}")
        if w.shape != (t.size, 6):
            raise ShapeError(f"wrenches of {name!r} must have shape ({t.size}, 6), got {w.shape}")
        if not (np.all(np.isfinite(t)) and np.all(np.isfinite(w))):
            raise NonFiniteError(f"times / wrenches of {name!r} contain NaN or infinity")
        if np.any(np.diff(t) <= 0):
            raise ShapeError(f"times of {name!r} must be strictly increasing")
        if kind not in ("cubic", "linear"):
            raise ShapeError(f"kind of {name!r} must be 'cubic' or 'linear', got {kind!r}")
        self.times, self.wrenches, self.kind, self.name = t, w, kind, name
        self.mass_properties = mass_properties
        if kind == "cubic":
            from scipy.interpolate import CubicSpline

            self._f = CubicSpline(t, w, axis=0)
        else:
            self._f = lambda s: np.stack([np.interp(s, t, w[:, k]) for k in range(6)], -1)
        self.calls = 0

    def __call__(self, t):
        s = np.asarray(t, dtype=float)
        if np.any(s < self.times[0] - 1e-12) or np.any(s > self.times[-1] + 1e-12):
            raise InfeasibleError(f"{self.name!r}: t must lie in the recorded range "
                                  f"[{self.times[0]:g}, {self.times[-1]:g}]")
        return np.asarray(self._f(np.clip(s, self.times[0], self.times[-1])))

    def wrench(self, pose, twist, twist_derivative, t):
        self.calls += 1
        if t is None:
            raise InfeasibleError(f"{self.name!r} is a recorded time series: evaluate the graph "
                                  f"with t=")
        return self(t)


__all__ = ["BlackBox", "ModelBlackBox", "RecordedWrench"]
