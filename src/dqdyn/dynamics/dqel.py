"""The dual quaternion Euler–Lagrange form (dqEL) and the end-effector wrench input.

dqEL [Silva2022thesis, App. C, eqs. (C.1)–(C.2)]::

    M̲(q) q̈ + C̲(q, q̇) + G̲(q) = Γ̲,      M̲ ∈ ℋ_p^{n×nv},  C̲, G̲ ∈ ℋ_p^n

built from dqNE calls ``𝒩`` (eq. B.1, `newton_euler`'s joint wrenches):
``G̲ = 𝒩(q, 0, 0)``, ``C̲ = 𝒩(q, q̇, 0) − G̲`` (a vector: already multiplied by q̇),
``col_k M̲ = 𝒩(q, 0, e_k) − G̲``.  The ``nv + 2`` states run as one batched compiled call.
(The printed C.2 mixes ``𝒩`` and ``𝒩_0``, erratum 12; both mean the dqNE map.)  ``M̲`` has no
inverse in the dual quaternion sense (C.3); the real ``M`` is its projection on the joint axes,
`mass_matrix`.

End-effector wrench input [Silva2022thesis, App. B, eq. (B.3)]: ``𝒩̄(q, q̇, q̈, ζ_d)`` is dqNE with the
wrench ``ζ_d`` exerted *by* the robot at a frame (Alg. 4.4 line 2, ``ζ_{0,n+1}^n := ζ_d``), and
``Γ̲_u = 𝒩̄(q, 0, 0, ζ_d) = Γ̲_g + Γ̲_{ζ_d}``: gravity compensation plus the desired wrench carried
to every joint; projected, ``τ_u = g(q) + J_fᵀ ζ_d``.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from dqdyn._engine.boundary import as_vector_batch
from dqdyn.algebra.dualquat import Ad6, Ad6_inv, mul
from dqdyn.dynamics.newton_euler import NewtonEulerResult, newton_euler
from dqdyn.errors import NonFiniteError, ShapeError
from dqdyn.kinematics.forward import _resolve_frame, forward_kinematics
from dqdyn.multibody.model import Model


class DQEL(NamedTuple):
    """``M̲`` (..., nbodies, nv, 6), ``C̲`` and ``G̲`` (..., nbodies, 6): joint wrenches (vec6
    ``[f, τ]``) of bodies 1…n at their joint frames (`NewtonEulerResult`)."""

    M: np.ndarray
    C: np.ndarray
    G: np.ndarray

    def wrenches(self, qdd) -> np.ndarray:
        """``M̲ q̈ + C̲ + G̲`` (..., nbodies, 6): the joint wrenches Γ̲ of eq. C.1."""
        return np.einsum("...ikc,...k->...ic", self.M, np.asarray(qdd, dtype=float)) + self.C + self.G


def dq_euler_lagrange(model: Model, q, v) -> DQEL:
    """The dqEL matrices ``M̲, C̲, G̲`` of [Silva2022thesis, eq. C.2] at ``(q, v)`` (leading batch axes)."""
    Q, bq = as_vector_batch(q, model.nq, "q", "the configuration, model.nq entries")
    V, bv = as_vector_batch(v, model.nv, "v", "a velocity, model.nv entries")
    batch = np.broadcast_shapes(bq, bv)
    N = int(np.prod(batch)) if batch else 1
    nv = model.nv
    Q = np.broadcast_to(Q.reshape(bq + (model.nq,)), batch + (model.nq,)).reshape(N, model.nq)
    V = np.broadcast_to(V.reshape(bv + (nv,)), batch + (nv,)).reshape(N, nv)
    # per state: (0, 0), (v, 0), (0, e_1) … (0, e_nv)
    QQ = np.repeat(Q, nv + 2, axis=0)
    VV = np.zeros((N, nv + 2, nv))
    VV[:, 1] = V
    AA = np.zeros((N, nv + 2, nv))
    AA[:, 2:] = np.eye(nv)
    W = newton_euler(model, QQ, VV.reshape(-1, nv), AA.reshape(-1, nv)).wrenches
    W = W.reshape(N, nv + 2, model.nbodies + 1, 6)[:, :, 1:]
    G = W[:, 0]
    C = W[:, 1] - G
    M = np.moveaxis(W[:, 2:] - G[:, None], 1, 2)
    return DQEL(M.reshape(batch + M.shape[1:]), C.reshape(batch + C.shape[1:]),
                G.reshape(batch + G.shape[1:]))


def frame_wrench_fext(model: Model, q, frame, wrench, reference: str = "local") -> np.ndarray:
    """External-wrench array (..., nbodies+1, 6) for `rnea` equivalent to the robot
    exerting ``wrench`` (vec6 ``[f, τ]``) at ``frame`` on its environment.

    ``reference="local"``: ``wrench`` at the frame's origin in its axes; ``"world_aligned"``: at
    its origin in world axes.  (The environment then applies ``−wrench`` to the robot.)
    """
    if reference not in ("local", "world_aligned"):
        raise ShapeError(f"reference must be 'local' or 'world_aligned', got {reference!r}")
    w = np.asarray(wrench, dtype=float)
    if w.ndim == 0 or w.shape[-1] != 6:
        raise ShapeError(f"wrench must have shape (..., 6) ([f, τ]), got {w.shape}")
    if not np.all(np.isfinite(w)):
        raise NonFiniteError("wrench contains NaN or infinity")
    body, pl = _resolve_frame(model, frame)
    if reference == "world_aligned":
        X = forward_kinematics(model, q)
        r = mul(X[..., body, :], pl)[..., :4]
        rot = np.concatenate([r, np.zeros(r.shape)], axis=-1)  # rotation only
        w = Ad6_inv(rot, w)  # world axes → frame axes (same point)
    wb = Ad6(pl, w)  # at the body origin, body axes: Ad(x_f^b) ζ [Silva2022, eq. (3)]
    batch = wb.shape[:-1]
    fext = np.zeros(batch + (model.nbodies + 1, 6))
    fext[..., body, :] = -wb
    return fext


def wrench_input(model: Model, q, frame, wrench, reference: str = "local") -> NewtonEulerResult:
    """``𝒩̄(q, 0, 0, ζ_d)`` of [Silva2022thesis, eq. B.3]: the joint wrenches (and ``tau``) that compensate
    gravity and make the robot exert ``wrench`` at ``frame`` (see `frame_wrench_fext`)."""
    fext = frame_wrench_fext(model, q, frame, wrench, reference)
    return newton_euler(model, q, None, None, fext)


__all__ = ["DQEL", "dq_euler_lagrange", "frame_wrench_fext", "wrench_input"]
