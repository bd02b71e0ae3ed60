r"""Centroidal dynamics: the centroidal momentum matrix, the momentum and its rate, the CoM Jacobian.

The centroidal momentum ``h_g = [l; k_g]`` of a multibody system is its total linear momentum
``l`` and its angular momentum ``k_g`` about the centre of mass ``c``, both in the world axes
([Orin2013]).  It is linear in the velocity, ``h_g = A_g(q) v`` (the *centroidal
momentum matrix*, (6, nv), rows ``[linear; angular]`` as Pinocchio's ``ccrba``; columns in
dqdyn's ``v`` order), and its rate is ``ḣ_g = A_g a + Ȧ_g v`` (``a = v̇``).  Newton and Euler for
the whole system give the physics check the tests use: ``ḣ_g = Σ`` external wrenches about the CoM
(gravity and contact forces) [Orin2013].

Computation (numpy over compiled kinematics): every body's spatial inertia ``Φ_i`` in F_0 at F_0's
origin (mapping the spatial twist ``[ω; v]`` to the momentum wrench ``[f; τ]``), its spatial
Jacobian ``J_i`` and drift ``J̇_i v``; then ``A_0 = Σ Φ_i J_i`` (the momentum about F_0's origin)
and the rate ``ḣ_0 = Σ Φ_i ξ̇_i + ξ_i ×* Φ_i ξ_i`` ([Featherstone2008, ch. 2]), both
shifted to the CoM: ``k_g = k_0 − c × l`` and, since ``ċ × l = 0``, ``k̇_g = k̇_0 − c × l̇``.
A batch (leading axes of ``q``, ``v``, ``a``) goes through the kinematics in one compiled call per
body.  The joint armature is not momentum of the bodies and is left out (as in Pinocchio).
"""

from __future__ import annotations

import numpy as np

from dqdyn.algebra.rotations import pose_from_rt
from dqdyn.constraints.base import frame_kinematics
from dqdyn.multibody.model import Model
from dqdyn.contact._common import qv_what, skew, states


def _com_placements(model: Model) -> np.ndarray:
    return pose_from_rt(np.broadcast_to([1.0, 0, 0, 0], (model.nbodies + 1, 4)), np.asarray(model.com))


def _bodies(model: Model):
    m = np.asarray(model.mass)
    inertia = np.asarray(model.inertia)
    return [i for i in range(1, model.nbodies + 1) if m[i] > 0 or np.any(inertia[i] != 0)]


def _spatial_inertia(m, c, Ic):
    """``Φ`` (N, 6, 6) in F_0 at its origin: ``[ω; v] ↦ [f; τ]`` for a body of mass ``m`` with
    its CoM at ``c`` (N, 3) and rotational inertia ``Ic`` (N, 3, 3) about the CoM in F_0's axes."""
    N = c.shape[0]
    C = skew(c)
    P = np.empty((N, 6, 6))
    P[:, :3, :3] = -m * C
    P[:, :3, 3:] = m * np.eye(3)
    P[:, 3:, :3] = Ic - m * (C @ C)
    P[:, 3:, 3:] = m * C
    return P


def _terms(model: Model, Q: np.ndarray, V: np.ndarray, rate: bool):
    """``(A_0 (N, 6, nv), c (N, 3), body data)`` with body data the list of
    ``(Φ_i, ξ_i, ξ̇_i − J_i a)`` for the rate (``None`` entries without ``rate``)."""
    N = Q.shape[0]
    pls = _com_placements(model)
    mass = np.asarray(model.mass)
    inertia = np.asarray(model.inertia)
    A0 = np.zeros((N, 6, model.nv))
    csum = np.zeros((N, 3))
    per = []
    for i in _bodies(model):
        fk = frame_kinematics(model, Q, V, i, pls[i], "spatial")
        Ic = fk.R @ inertia[i] @ np.swapaxes(fk.R, -1, -2)
        P = _spatial_inertia(float(mass[i]), fk.p, Ic)
        A0 += P @ fk.J
        csum += mass[i] * fk.p
        if rate:
            xi = np.einsum("nij,nj->ni", fk.J, V)
            per.append((P, fk.J, xi, fk.Jdv))
    mt = float(mass.sum())
    c = csum / max(mt, 1e-300)
    return A0, c, per


def _shift(A0: np.ndarray, c: np.ndarray) -> np.ndarray:
    """Rows ``[l; k_0]`` about F_0's origin → ``[l; k_g]`` about the CoM ``c`` (..., 6, k)."""
    Ag = A0.copy()
    Ag[:, 3:] -= skew(c) @ A0[:, :3]
    return Ag


def centroidal_momentum_matrix(model: Model, q) -> np.ndarray:
    """The centroidal momentum matrix ``A_g(q)`` [Orin2013]: ``h_g = A_g v``.

    Parameters
    ----------
    model : Model
    q : array_like, shape (..., nq)

    Returns
    -------
    Ag : ndarray, shape (..., 6, nv)
        Rows ``[linear; angular]``: the total linear momentum (kg·m/s) and the angular momentum
        about the centre of mass (kg·m²/s), world axes, per unit of each velocity coordinate
        (Pinocchio's ``ccrba`` ``Ag``; columns in dqdyn's ``v`` order, Conventions).

    Raises
    ------
    ShapeError, NonFiniteError
        ``q`` has the wrong shape or is not finite (the message names ``q``).
    """
    (Q,), batch = states(model, [("q", q, model.nq, qv_what(model)[0])])
    A0, c, _ = _terms(model, Q, np.zeros((Q.shape[0], model.nv)), False)
    return _shift(A0, c).reshape(batch + (6, model.nv))


def centroidal_momentum(model: Model, q, v) -> np.ndarray:
    """``h_g = A_g(q) v`` (..., 6): ``[linear momentum; angular momentum about the CoM]``, world axes
    (Pinocchio's ``computeCentroidalMomentum`` ``hg`` as ``[linear; angular]``)."""
    w = qv_what(model)
    (Q, V), batch = states(model, [("q", q, model.nq, w[0]), ("v", v, model.nv, w[1])])
    A0, c, _ = _terms(model, Q, V, False)
    return np.einsum("nij,nj->ni", _shift(A0, c), V).reshape(batch + (6,))


def centroidal_momentum_rate(model: Model, q, v, a) -> np.ndarray:
    """``ḣ_g = A_g a + Ȧ_g v`` (..., 6), rows ``[linear; angular]`` about the CoM, world axes.

    It equals the sum of the external wrenches on the system about its CoM, gravity included
    [Orin2013]; with ``a = 0`` it is the drift ``Ȧ_g v``.  Pinocchio:
    ``computeCentroidalMomentumTimeVariation(model, data, q, v, a)`` → ``data.dhg``.
    """
    w = qv_what(model)
    (Q, V, Aa), batch = states(model, [("q", q, model.nq, w[0]), ("v", v, model.nv, w[1]),
                                       ("a", a, model.nv, w[2])])
    _, c, per = _terms(model, Q, V, True)
    hd = np.zeros((Q.shape[0], 6))
    for P, J, xi, jdv in per:
        xid = np.einsum("nij,nj->ni", J, Aa) + jdv
        hb = np.einsum("nij,nj->ni", P, xi)
        hd += np.einsum("nij,nj->ni", P, xid)
        w_, v_ = xi[:, :3], xi[:, 3:]
        hd[:, :3] += np.cross(w_, hb[:, :3])
        hd[:, 3:] += np.cross(w_, hb[:, 3:]) + np.cross(v_, hb[:, :3])
    hd[:, 3:] -= np.cross(c, hd[:, :3])
    return hd.reshape(batch + (6,))


def com_jacobian(model: Model, q) -> np.ndarray:
    """Jacobian (..., 3, nv) of the whole-system centre of mass in F_0: ``ċ = J_c v``
    (Pinocchio's ``jacobianCenterOfMass``; it is ``A_g``'s linear rows over the total mass)."""
    (Q,), batch = states(model, [("q", q, model.nq, qv_what(model)[0])])
    A0, _, _ = _terms(model, Q, np.zeros((Q.shape[0], model.nv)), False)
    return (A0[:, :3] / float(np.sum(model.mass))).reshape(batch + (3, model.nv))


__all__ = ["centroidal_momentum_matrix", "centroidal_momentum", "centroidal_momentum_rate",
           "com_jacobian"]
