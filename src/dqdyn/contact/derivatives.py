r"""Analytic derivatives of the centroidal dynamics: ``∂h_g/∂q``, ``∂ḣ_g/∂q``, ``∂ḣ_g/∂v``,
``∂ḣ_g/∂a`` (Pinocchio's ``computeCentroidalDynamicsDerivatives``).

The route (no finite differences anywhere).  Mount the whole model on a massless free body ``b``
that sits at the world origin, at rest: the *augmented* model (built once per model and kept
while the model lives).  Its first six velocity coordinates are ``b``'s twist ``[ω; v]``; at
``q_b = identity``, ``v_b = a_b = 0`` every other body moves exactly as in the original model,
whatever its base (free, fixed, several roots).  The first six rows of inverse dynamics of the
augmented model are the wrench ``τ_b = [n; f]`` that ``b``'s joint must exert on the system,
about the world origin and in world axes: Newton and Euler for the whole system
[Featherstone2008, ch. 2] give ``f = l̇ − m g`` and ``n = k̇_0 − c × m g``, so with
``k̇_g = k̇_0 − c × l̇`` (the centroidal momentum's rate, [Orin2013])

    ``ḣ_g = [f + m g;  n − c × f]``.

Everything then comes from the base rows of `dqdyn.rnea_derivatives` (``∂τ_b/∂q``, ``∂τ_b/∂v``
and the mass-matrix rows ``M_b``; Carpentier & Mansard's O(n·d) world-frame sweeps) at the
augmented state, restricted to the original columns:

* ``∂ḣ_g/∂a = A_g = [M_f; M_n − [c]× M_f]`` (``M_b = [M_n; M_f]``; the CoM ``c`` and the mass
  ``m`` read off ``b``'s 6×6 block ``[[·, m[c]×], [·, m 1]]``, ``J_c = M_f / m``);
* ``∂ḣ_g/∂v = [∂f/∂v; ∂n/∂v − [c]× ∂f/∂v]``;
* ``∂ḣ_g/∂q = [∂f/∂q; ∂n/∂q − [c]× ∂f/∂q + [f]× J_c]`` (the last term: the CoM moves,
  ``−∂c × f``);
* ``∂h_g/∂q = ∂ḣ_g/∂v − Ȧ_g``: ``h_g = A_g(q) v`` and ``ḣ_g = A_g a + Ȧ_g v`` with
  ``Ȧ_g v = Σ_k (∂A_g/∂q_k) v v_k``, whose derivative in ``v_j`` is ``Ȧ_g e_j + ∂h_g/∂q_j``
  (Pinocchio uses the same relation).  ``Ȧ_g = [Ṁ_f; Ṁ_n − [c]× Ṁ_f − [ċ]× M_f]`` with the
  base rows of ``Ṁ = C + Cᵀ`` (`dqdyn.coriolis_matrix`, Christoffel-consistent) and
  ``ċ = J_c v``.

Derivatives with respect to ``q`` follow the tangent convention of `dqdyn.integrate` (that of
`dqdyn.rnea_derivatives`, docstring of `dqdyn.dynamics.derivatives`): for a free or spherical
joint, the body-frame perturbation ``x ← x exp(½ ε e_k)``, so a free base's columns are
Pinocchio's in dqdyn's ``[ω, v]`` order.  Joint armature is not momentum of the bodies and the
inertia welded to the world (a fixed-base root link) does not move: both are left out, as in
`dqdyn.centroidal_momentum_matrix` and Pinocchio.
"""

from __future__ import annotations

import weakref
from dataclasses import replace
from math import isfinite
from typing import NamedTuple

import numpy as np

from dqdyn.contact._common import qv_what, skew, states
from dqdyn.dynamics.coriolis import coriolis_matrix
from dqdyn.dynamics.derivatives import rnea_derivatives
from dqdyn.dynamics.newton_euler import rnea
from dqdyn.errors import ModelError, ShapeError
from dqdyn.multibody.builders import ModelBuilder
from dqdyn.multibody.model import Model


class CentroidalDynamicsDerivatives(NamedTuple):
    """Derivatives of the centroidal momentum ``h_g`` and of its rate ``ḣ_g`` (rows
    ``[linear; angular about the CoM]``, world axes), each (..., 6, nv); unpacks as Pinocchio's
    ``(dh_dq, dhdot_dq, dhdot_dv, dhdot_da)``."""

    #: ``∂h_g/∂q`` (tangent convention of `dqdyn.integrate`)
    dh_dq: np.ndarray
    #: ``∂ḣ_g/∂q`` at fixed ``v``, ``a``
    dhdot_dq: np.ndarray
    #: ``∂ḣ_g/∂v`` at fixed ``q``, ``a``
    dhdot_dv: np.ndarray
    #: ``∂ḣ_g/∂a = A_g``, the centroidal momentum matrix
    dhdot_da: np.ndarray


_AUGMENTED: weakref.WeakKeyDictionary[Model, Model] = weakref.WeakKeyDictionary()
_IDENTITY = np.array([1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0])  # b's q: the unit dual quaternion
_ZERO6 = np.zeros(6)
_T6 = np.zeros((6, 6))  # [n; f] ↦ [f; n − c × f], its −[c]× block set per call
_T6[:3, 3:] = _T6[3:, :3] = np.eye(3)


def _augmented(model: Model) -> Model:
    """``model`` mounted on a massless free body at the world origin (q, v entries: ``b``'s 8
    and 6 first, then the model's in its own order); its welded inertia left out."""
    am = _AUGMENTED.get(model)
    if am is None:
        name = "centroidal_base"
        while name in model.body_names or name in model.frame_names:
            name = "_" + name
        b = ModelBuilder(model.name + "+" + name, gravity=np.asarray(model.gravity))
        b.add_body(name, "world", "free", mass=0.0, inertia=np.zeros((3, 3)))
        b.add_model(replace(model, welded=np.zeros(13), mi=model.mi.copy(), mf=model.mf.copy(),
                            _index={}), name)
        am = b.build()
        if am.nq != model.nq + 8 or am.nv != model.nv + 6:  # (a guard: the columns must map 1:1)
            raise ModelError(f"model {model.name!r}: cannot be mounted on a free base for the "
                             "centroidal derivatives")
        _AUGMENTED[model] = am
    return am


def centroidal_dynamics_derivatives(model: Model, q, v, a) -> CentroidalDynamicsDerivatives:
    """Analytic derivatives of the centroidal dynamics [Orin2013] at ``(q, v, a)``.

    ``h_g = A_g(q) v`` is the centroidal momentum (`dqdyn.centroidal_momentum`) and
    ``ḣ_g = A_g a + Ȧ_g v`` its rate (`dqdyn.centroidal_momentum_rate`), rows ``[linear momentum;
    angular momentum about the CoM]`` in world axes.  For any model: floating base, fixed base
    (the momentum of the moving bodies about their CoM) or several roots.  The derivation is in
    the docstring of `dqdyn.contact.derivatives`; no finite differences.

    Parameters
    ----------
    model : Model
    q : array_like, shape (..., nq)
    v, a : array_like, shape (..., nv)
        Velocity and acceleration (``a = v̇``) in dqdyn's layouts.  Leading batch axes broadcast.

    Returns
    -------
    CentroidalDynamicsDerivatives
        ``(dh_dq, dhdot_dq, dhdot_dv, dhdot_da)``, each (..., 6, nv).  ``q``-derivatives are taken
        along the tangent directions of `dqdyn.integrate`, as those of `dqdyn.rnea_derivatives`
        (a free joint's columns ``[ω, v]``: Pinocchio's ``computeCentroidalDynamicsDerivatives``
        with its columns in dqdyn's ``v`` order).  ``dhdot_da`` is the centroidal momentum matrix
        `dqdyn.centroidal_momentum_matrix`.

    Raises
    ------
    ShapeError, NonFiniteError
        ``q``, ``v`` or ``a`` has the wrong shape, their batch shapes do not broadcast, or one is
        not finite (the message names it).
    ModelError
        The model's moving bodies have no mass (no centre of mass).
    """
    if not isinstance(model, Model):
        raise ShapeError(f"model must be a dqdyn.Model, got {type(model).__name__}")
    nq, nv = model.nq, model.nv
    if (type(q) is np.ndarray and type(v) is np.ndarray and type(a) is np.ndarray
            and q.shape == (nq,) and v.shape == (nv,) and a.shape == (nv,)
            and q.dtype == v.dtype == a.dtype == np.float64
            and isfinite(q @ q + v @ v + a @ a)):
        return _single(model, q, v, a)  # (one state, checked: the short path)
    w = qv_what(model)
    (Q, V, A), batch = states(model, [("q", q, nq, w[0]), ("v", v, nv, w[1]), ("a", a, nv, w[2])])
    N = Q.shape[0]
    if N == 1 and not batch:
        return _single(model, Q[0], V[0], A[0])
    am = _augmented(model)
    Qa = np.concatenate([np.broadcast_to(_IDENTITY, (N, 8)), Q], axis=1)
    Z = np.zeros((N, 6))
    Va, Aa = np.concatenate([Z, V], axis=1), np.concatenate([Z, A], axis=1)
    Dq, Dv, M = rnea_derivatives(am, Qa, Va, Aa)
    f = rnea(am, Qa, Va, Aa)[:, 3:6]
    Cor = coriolis_matrix(am, Qa, Va)
    W = np.empty((N, 4, 6, nv))
    W[:, 0], W[:, 1], W[:, 2] = M[:, :6, 6:], Dv[:, :6, 6:], Dq[:, :6, 6:]
    np.add(Cor[:, :6, 6:], np.swapaxes(Cor[:, 6:, :6], 1, 2), out=W[:, 3])
    m = _mass(model, M[0])
    T6 = np.repeat(_T6[None], N, axis=0)
    T6[:, 3:, 3:] = M[:, :3, 3:6] / -m  # −[c]× (b's block m[c]×)
    R = _finish(W, T6, f, V, m)
    shape = batch + (6, nv)
    return CentroidalDynamicsDerivatives(*(x.reshape(shape) for x in R))


def _mass(model: Model, M: np.ndarray) -> float:
    m = float(M[3, 3])  # b's block [[·, m[c]×], [·, m 1]] (at q_b = identity)
    if not m > 0.0:
        raise ModelError(f"model {model.name!r}: its moving bodies have no mass, so no centre "
                         "of mass for the centroidal dynamics")
    return m


def _finish(W: np.ndarray, T6: np.ndarray, f: np.ndarray, V: np.ndarray, m: float):
    """``W`` (N, 4, 6, nv): base rows ``[n; f]`` of ``M``, ``∂τ/∂v``, ``∂τ/∂q``, ``Ṁ``;
    ``T6`` (N, 6, 6): ``[n; f] ↦ [f; n − c × f]``; ``f`` (N, 3) the base force; ``V`` (N, nv).
    Returns ``dh_dq, dhdot_dq, dhdot_dv, dhdot_da`` (N, 6, nv) each."""
    R = T6[:, None] @ W  # (A_g, ∂ḣ_g/∂v, ∂ḣ_g/∂q and Ȧ_g but their CoM-motion terms)
    Mf = W[:, 0, 3:]
    Jc = Mf / m  # (N, 3, nv)
    R[:, 2, 3:] += skew(f) @ Jc  # −∂c × f
    R[:, 3, 3:] -= skew((Jc @ V[:, :, None])[:, :, 0]) @ Mf  # −[ċ]× M_f
    return R[:, 1] - R[:, 3], R[:, 2], R[:, 1], R[:, 0]  # ∂h_g/∂q = ∂ḣ_g/∂v − Ȧ_g


def _cross3(x, y, z) -> np.ndarray:
    return np.array(((0.0, -z, y), (z, 0.0, -x), (-y, x, 0.0)))


def _single(model: Model, q: np.ndarray, v: np.ndarray, a: np.ndarray) -> CentroidalDynamicsDerivatives:
    """One checked state (1-D arrays): `_finish`'s steps on 2-D arrays (fewer numpy calls)."""
    am = _augmented(model)
    qa, va, aa = np.concatenate((_IDENTITY, q)), np.concatenate((_ZERO6, v)), np.concatenate((_ZERO6, a))
    Dq, Dv, M = rnea_derivatives(am, qa, va, aa)
    f = rnea(am, qa, va, aa)[3:6].tolist()
    Cor = coriolis_matrix(am, qa, va)
    m = _mass(model, M)
    T6 = _T6.copy()
    T6[3:, 3:] = M[:3, 3:6] / -m  # −[c]× (b's block m[c]×)
    Mf = M[3:6, 6:]
    Jc = Mf / m
    Ag = T6 @ M[:6, 6:]
    dv = T6 @ Dv[:6, 6:]
    dq = T6 @ Dq[:6, 6:]
    dq[3:] += _cross3(*f) @ Jc  # −∂c × f
    Agdot = T6 @ (Cor[:6, 6:] + Cor[6:, :6].T)
    Agdot[3:] -= _cross3(*(Jc @ v).tolist()) @ Mf  # −[ċ]× M_f
    return CentroidalDynamicsDerivatives(dv - Agdot, dq, dv, Ag)

__all__ = ["centroidal_dynamics_derivatives", "CentroidalDynamicsDerivatives"]
