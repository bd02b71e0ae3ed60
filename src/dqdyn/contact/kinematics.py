r"""Frame velocities and accelerations in the three reference conventions (Pinocchio's
``getFrameVelocity``, ``getFrameAcceleration`` and ``getFrameClassicalAcceleration``).

From the frame's body twist ``ξ_b = J_b v`` and its derivative ``α_b = J_b a + J̇_b v`` (both
``[ω; v]`` in the frame, at its origin):

* ``"body"`` (``LOCAL``): ``ξ_b``, ``α_b``;
* ``"world_aligned"`` (``LOCAL_WORLD_ALIGNED``): both rotated into F_0's axes, ``[R ω; R v]``;
* ``"spatial"`` (``WORLD``): both moved to F_0's origin, ``[R ω; R v + p × R ω]`` (``Ad(x)``).

The *classical* acceleration adds ``ω × v`` to the linear part of the (spatial) acceleration in
the same reference ([Featherstone2008, ch. 2]): in ``"body"`` and ``"world_aligned"`` it is the
acceleration ``p̈`` of the frame's origin (in the frame's / F_0's axes), the quantity a point
contact holds at zero.
"""

from __future__ import annotations

import numpy as np

from dqdyn.constraints.base import frame_kinematics, resolve_frame
from dqdyn.contact._common import cross, qv_what, states
from dqdyn.errors import ShapeError
from dqdyn.multibody.model import Model

REFERENCES = ("body", "spatial", "world_aligned")


def _reference(reference) -> str:
    if not isinstance(reference, str) or reference not in REFERENCES:
        raise ShapeError(f"reference must be one of {list(REFERENCES)} (body = LOCAL, spatial = "
                         f"WORLD, world_aligned = LOCAL_WORLD_ALIGNED in Pinocchio's terms), got "
                         f"{reference!r}")
    return reference


def _express(fk, X: np.ndarray, reference: str) -> np.ndarray:
    """Body-frame motion vectors ``X`` (N, 6) ``[ω; v]`` in ``reference``."""
    if reference == "body":
        return X
    w = np.einsum("nij,nj->ni", fk.R, X[:, :3])
    u = np.einsum("nij,nj->ni", fk.R, X[:, 3:])
    if reference == "spatial":
        u = u + cross(fk.p, w)
    return np.concatenate([w, u], axis=1)


def frame_velocity(model: Model, q, v, frame, reference: str = "body") -> np.ndarray:
    """Twist ``[ω; v]`` (..., 6) of a frame, expressed in ``reference``.

    Parameters
    ----------
    model : Model
    q, v : array_like, shapes (..., nq), (..., nv)
    frame : str, int or (frame, offset)
        A frame name, a body index, or a pair ``(frame, offset)`` (a translation, a unit dual
        quaternion or a 4 × 4 matrix in that frame), as in `dqdyn.constraints`.
    reference : {"body", "spatial", "world_aligned"}
        Pinocchio's ``LOCAL``, ``WORLD``, ``LOCAL_WORLD_ALIGNED``.

    Raises
    ------
    UnknownNameError
        No such frame.
    ShapeError, NonFiniteError
        Bad ``reference``, ``q`` or ``v`` (named).
    """
    reference = _reference(reference)
    w = qv_what(model)
    (Q, V), batch = states(model, [("q", q, model.nq, w[0]), ("v", v, model.nv, w[1])])
    body, pl = resolve_frame(model, frame)
    fk = frame_kinematics(model, Q, V, body, pl, "body")
    xi = np.einsum("nij,nj->ni", fk.J, V)
    return _express(fk, xi, reference).reshape(batch + (6,))


def frame_acceleration(model: Model, q, v, a, frame, reference: str = "body", *,
                       classical: bool = False) -> np.ndarray:
    """Acceleration ``[ω̇; v̇]`` (..., 6) of a frame in ``reference`` (module docstring).

    ``classical=False``: the spatial acceleration (Pinocchio's ``getFrameAcceleration``);
    ``classical=True``: its linear part plus ``ω × v`` (``getFrameClassicalAcceleration``),
    the acceleration of the frame's origin in ``"body"`` and ``"world_aligned"``.  Arguments
    and errors as `frame_velocity`, with ``a`` the acceleration ``v̇`` (..., nv).
    """
    reference = _reference(reference)
    if not isinstance(classical, (bool, np.bool_)):
        raise ShapeError(f"classical must be True or False, got {classical!r}")
    w = qv_what(model)
    (Q, V, Aa), batch = states(model, [("q", q, model.nq, w[0]), ("v", v, model.nv, w[1]),
                                       ("a", a, model.nv, w[2])])
    body, pl = resolve_frame(model, frame)
    fk = frame_kinematics(model, Q, V, body, pl, "body")
    alpha = _express(fk, np.einsum("nij,nj->ni", fk.J, Aa) + fk.Jdv, reference)
    if classical:
        xi = _express(fk, np.einsum("nij,nj->ni", fk.J, V), reference)
        alpha[:, 3:] += cross(xi[:, :3], xi[:, 3:])
    return alpha.reshape(batch + (6,))


__all__ = ["frame_velocity", "frame_acceleration"]
