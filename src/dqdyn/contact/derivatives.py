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

**Contact dynamics** (`contact_dynamics_derivatives`, Pinocchio's
``computeConstraintDynamicsDerivatives``).  `dqdyn.contact_dynamics` solves
``M a − Aᵀ λ = τ − h`` and ``A a + ε λ = b`` (its docstring); with the inverse dynamics
``ID(q, v, a, λ) = M a + h − Aᵀ λ`` (`dqdyn.rnea` with the contact forces as external wrenches,
held in the bodies' frames) and the contact rows ``G(q, v, a) = A a − b`` (the contact
accelerations plus the Baumgarte terms), implicit differentiation at the solution gives, for
``x = q, v``,

    ``[[M, −Aᵀ], [A, ε I]] [∂a/∂x; ∂λ/∂x] = −[∂ID/∂x; ∂G/∂x]``  and  ``[∂a/∂τ; ∂λ/∂τ] = K⁻¹ [1; 0]``

(``K`` that matrix).  ``∂ID/∂x`` are `dqdyn.rnea_derivatives` with ``fext``.  The contact
accelerations' derivatives come from inverse dynamics too: on a copy of the model without gravity,
a body of unit mass and unit rotational inertia (CoM at its origin) hangs on a free joint at every
contact frame, at rest relative to it.  That joint's rows of inverse dynamics are the wrench
``I α + ν ×* I ν = [ω̇; v̇ + ω × v]`` (body axes, [Featherstone2008, ch. 2]): the frame's angular
acceleration and the *classical* acceleration of its origin, in the contact frame — a point
contact's row ``A a + drift``.  Their derivatives are those rows of `rnea_derivatives` on the
copy.  A frame contact holds the spatial acceleration ``v̇ = v̇ + ω × v − ω × v``; with
``∂α_s/∂v = J̇ + ∂ν/∂q`` (the chain rule, as for ``h_g`` above), ``∂ν/∂q`` is read off the same
rows and ``J̇`` (`dqdyn.jacobian_time_derivative` of the hanging body), and the term ``ω × v`` is
differentiated by the product rule.  Baumgarte terms: ``kd ν_c`` (``∂ν/∂q`` again) and ``kp e``:
``∂e/∂q = J_v + [e]× J_ω`` for ``e = Rᵀ (p − p*)``, ``J_r⁻¹(e) J`` for ``e = log(x*⁻¹ x)``
(the inverse right Jacobian of SE(3)).
"""

from __future__ import annotations

import weakref
from dataclasses import replace
from math import isfinite
from typing import NamedTuple

import numpy as np

from dqdyn.algebra.rotations import matrix_from_pose, translation_of
from dqdyn.constraints.base import resolve_frame
from dqdyn.contact._common import qv_what, skew, states
from dqdyn.contact.contacts import as_contact_list
from dqdyn.contact.dynamics import contact_dynamics
from dqdyn.dynamics.coriolis import coriolis_matrix
from dqdyn.dynamics.derivatives import rnea_derivatives
from dqdyn.dynamics.newton_euler import rnea
from dqdyn.errors import ModelError, ShapeError, SingularError
from dqdyn.kinematics.jacobians import jacobian_time_derivative
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
            and isfinite(q.sum() + v.sum() + a.sum())):
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


def _skew1(x, y, z) -> np.ndarray:
    """`skew` of one vector given by its three entries (the single-state form: one small array
    instead of `skew`'s zeros and six slice assignments)."""
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
    dq[3:] += _skew1(*f) @ Jc  # −∂c × f
    Agdot = T6 @ (Cor[:6, 6:] + Cor[6:, :6].T)
    Agdot[3:] -= _skew1(*(Jc @ v).tolist()) @ Mf  # −[ċ]× M_f
    return CentroidalDynamicsDerivatives(dv - Agdot, dq, dv, Ag)


class ContactDynamicsDerivatives(NamedTuple):
    """Derivatives of `dqdyn.contact_dynamics`' acceleration ``a`` (..., nv, nv each) and stacked
    contact forces ``λ`` (..., m, nv each); unpacks as Pinocchio's
    ``computeConstraintDynamicsDerivatives`` ``(ddq_dq, ddq_dv, ddq_dtau, dlambda_dq, dlambda_dv,
    dlambda_dtau)``."""

    #: ``∂a/∂q`` (tangent convention of `dqdyn.integrate`)
    da_dq: np.ndarray
    #: ``∂a/∂v``
    da_dv: np.ndarray
    #: ``∂a/∂τ``
    da_dtau: np.ndarray
    #: ``∂λ/∂q`` (rows: the contacts' forces / wrenches ``[f; τ]`` stacked, contact frames)
    dlambda_dq: np.ndarray
    #: ``∂λ/∂v``
    dlambda_dv: np.ndarray
    #: ``∂λ/∂τ``
    dlambda_dtau: np.ndarray


_HUNG: weakref.WeakKeyDictionary[Model, dict] = weakref.WeakKeyDictionary()
_SWAP = np.array([3, 4, 5, 0, 1, 2])  # [ω; v] ↔ [v; ω]


def _hung(model: Model, frames) -> tuple[Model, list[str]]:
    """The model without gravity, a unit body on a free joint at each frame ``(body, placement)``
    (their q, v entries after the model's), and the names of those bodies (cached)."""
    per = _HUNG.setdefault(model, {})
    key = tuple((b, pl.tobytes()) for b, pl in frames)
    hit = per.get(key)
    if hit is None:
        b = ModelBuilder(model.name + "+contacts", gravity=np.zeros(3))
        b.add_model(replace(model, welded=np.zeros(13), mi=model.mi.copy(), mf=model.mf.copy(),
                            _index={}))
        names, used = [], set(model.body_names) | set(model.frame_names)
        for k, (body, pl) in enumerate(frames):
            n = f"contact_{k}"
            while n in used:
                n = "_" + n
            used.add(n)
            b.add_body(n, model.body_names[body], "free", mass=1.0, inertia=np.eye(3), placement=pl)
            names.append(n)
        hm = b.build()
        if hm.nv != model.nv + 6 * len(frames):  # (a guard: the columns must map 1:1)
            raise ModelError(f"model {model.name!r}: cannot hang bodies on its contact frames")
        hit = per[key] = (hm, names)
    return hit


def _jr_inv_se3(e: np.ndarray) -> np.ndarray:
    """``J_r⁻¹(e)`` (6, 6) of SE(3) for ``e = [ρ; φ]``: ``log(exp(e) exp(δ)) ≈ e + J_r⁻¹(e) δ``.

    ``J_r(e) = J_l(−e)`` and ``J_l⁻¹ = [[J⁻¹, −J⁻¹ Q J⁻¹], [0, J⁻¹]]`` with ``J`` the left
    Jacobian of SO(3) and ``Q(ρ, φ)`` the closed form of its translation coupling (the series
    of the SE(3) left Jacobian summed)."""
    rho, phi = -e[:3], -e[3:]
    P, Rx = skew(phi), skew(rho)
    t2 = float(phi @ phi)
    t = np.sqrt(t2)
    if t < 1e-4:  # (series of the coefficients below)
        c1, c2, c3 = 1 / 6 - t2 / 120, 1 / 24 - t2 / 720, 1 / 120 - t2 / 2520
        cj = 1 / 12 + t2 / 720
    else:
        s, c = np.sin(t), np.cos(t)
        c1 = (t - s) / t ** 3
        c2 = (t2 + 2 * c - 2) / (2 * t2 * t2)
        c3 = (2 * t - 3 * s + t * c) / (2 * t2 * t2 * t)
        cj = 1 / t2 - (1 + c) / (2 * t * s)
    PR, RP, PRP = P @ Rx, Rx @ P, P @ Rx @ P
    Q = (0.5 * Rx + c1 * (PR + RP + PRP) + c2 * (P @ PR + RP @ P - 3 * PRP)
         + c3 * (PRP @ P + P @ PRP))
    Ji = np.eye(3) - 0.5 * P + cj * (P @ P)  # J_l⁻¹(φ) of SO(3)
    out = np.zeros((6, 6))
    out[:3, :3] = out[3:, 3:] = Ji
    out[:3, 3:] = -Ji @ Q @ Ji
    return out


def contact_dynamics_derivatives(model: Model, q, v, tau, contacts, *,
                                 regularization: float = 0.0) -> ContactDynamicsDerivatives:
    """Analytic derivatives of `dqdyn.contact_dynamics` with respect to ``q``, ``v`` and ``τ``.

    The acceleration ``a`` and the contact forces ``λ`` of the KKT system (docstring of
    `dqdyn.contact_dynamics`) are differentiated implicitly, from `dqdyn.rnea_derivatives` and the
    derivatives of the contact accelerations (docstring of `dqdyn.contact.derivatives`); no finite
    differences.  Baumgarte gains are taken into account.

    Parameters
    ----------
    model : Model
    q, v, tau : array_like, shapes (..., nq), (..., nv), (..., nv)
    contacts : PointContact, FrameContact or a list of them
    regularization : float, default 0
        ``ε`` of the KKT system, as in `dqdyn.contact_dynamics`.

    Returns
    -------
    ContactDynamicsDerivatives
        ``(da_dq, da_dv, da_dtau, dlambda_dq, dlambda_dv, dlambda_dtau)``: (..., nv, nv) for ``a``,
        (..., m, nv) for the stacked forces (``m`` = 3 per point contact, 6 per frame contact);
        ``q``-derivatives along the tangent directions of `dqdyn.integrate`.  Pinocchio's
        ``computeConstraintDynamicsDerivatives`` with its ``LOCAL`` contact models, in dqdyn's
        ``v`` order.

    Raises
    ------
    ShapeError, NonFiniteError, UnknownNameError
        Bad ``q``, ``v``, ``tau``, ``regularization`` or contact frame (named).
    ModelError
        ``contacts`` is not a contact or a list of them.
    SingularError
        ``contacts``: a redundant contact set with ``regularization=0``, whose forces and their
        derivatives are not unique.

    Notes
    -----
    A batch runs as a Python loop over its states.
    """
    cons = as_contact_list(contacts, model)
    w = qv_what(model)
    (Q, V, T), batch = states(model, [("q", q, model.nq, w[0]), ("v", v, model.nv, w[1]),
                                      ("tau", tau, model.nv, w[3])])
    r = contact_dynamics(model, Q, V, T, cons, regularization=regularization, proximal=None)
    eps = float(regularization)
    frames = [resolve_frame(model, c.frame) for c in cons]
    hm, names = _hung(model, frames)
    # each contact frame in its body: [f; τ] (contact frame) ↦ fext [f; τ] (body frame, origin)
    maps = []
    for c, (_, pl) in zip(cons, frames):
        Rb = matrix_from_pose(pl)[:3, :3]
        X = np.zeros((6, c.dim))
        X[:3, :3], X[3:, :3] = Rb, skew(translation_of(pl)) @ Rb
        if c.dim == 6:
            X[3:, 3:] = Rb
        maps.append(X)
    N, nv = Q.shape[0], model.nv
    m = r.multipliers.shape[1]
    out = [np.empty((N, nv, nv)) for _ in range(3)] + [np.empty((N, m, nv)) for _ in range(3)]
    for n in range(N):
        X = _contact_one(model, hm, names, cons, frames, maps, Q[n], V[n], r.a[n], r.multipliers[n],
                         eps)
        for k in range(6):
            out[k][n] = X[k]
    return ContactDynamicsDerivatives(*(x.reshape(batch + x.shape[1:]) for x in out))


def _contact_one(model, hm, names, cons, frames, maps, q, v, a, lam, eps):
    nv, K = model.nv, len(cons)
    qa = np.concatenate([q, np.tile(_IDENTITY, K)])
    va, aa = np.concatenate([v, np.zeros(6 * K)]), np.concatenate([a, np.zeros(6 * K)])
    Dq, Dv, Mh = rnea_derivatives(hm, qa, va, aa)
    fext = np.zeros((model.nbodies + 1, 6))
    rows, Gq, Gv = [], [], []
    o = 0
    for k, (c, (body, _)) in enumerate(zip(cons, frames)):
        fext[body] += maps[k] @ lam[o:o + c.dim]
        o += c.dim
        i = nv + 6 * k
        J = Mh[i:i + 6, :nv]  # the contact frame's body Jacobian [ω; v] (unit inertia)
        gq, gv = Dq[i:i + 6, :nv].copy(), Dv[i:i + 6, :nv].copy()  # of [ω̇; v̇ + ω × v]
        nu = J @ v
        if c.dim == 6 or c.kd:
            Jd = jacobian_time_derivative(hm, qa, va, names[k], "body")[1][:, :nv]
            Kv = skew(nu[:3]) @ J[3:] - skew(nu[3:]) @ J[:3]  # ∂(ω × v)/∂v
            dnu = gv - Jd  # ∂ν/∂q = ∂α_s/∂v − J̇, α_s = α_c − [0; ω × v]
            dnu[3:] -= Kv
        if c.dim == 6:  # the spatial acceleration: α_c − [0; ω × v]
            gq[3:] -= skew(nu[:3]) @ dnu[3:] - skew(nu[3:]) @ dnu[:3]
            gv[3:] -= Kv
            sel = _SWAP
        else:
            sel = slice(3, 6)
        A, gq, gv = J[sel], gq[sel], gv[sel]
        if c.kd:
            gq += c.kd * dnu[sel]
            gv += c.kd * A
        if c.kp:
            e = c.rows(model, q[None], v[None])[2][0]
            if c.dim == 3:
                gq += c.kp * (J[3:] + skew(e) @ J[:3])
            else:
                gq += c.kp * (_jr_inv_se3(e) @ A)
        rows.append(A)
        Gq.append(gq)
        Gv.append(gv)
    Rq, Rv, M = rnea_derivatives(model, q, v, a, fext=fext)
    m = lam.shape[0]
    A = np.concatenate(rows) if rows else np.zeros((0, nv))
    KKT = np.block([[M, -A.T], [A, eps * np.eye(m)]])
    rhs = np.zeros((nv + m, 3 * nv))
    rhs[:nv, :nv], rhs[:nv, nv:2 * nv], rhs[:nv, 2 * nv:] = -Rq, -Rv, np.eye(nv)
    if m:
        rhs[nv:, :nv], rhs[nv:, nv:2 * nv] = -np.concatenate(Gq), -np.concatenate(Gv)
    try:
        X = np.linalg.solve(KKT, rhs)
    except np.linalg.LinAlgError:
        raise SingularError("contacts: the KKT matrix of the contact set is singular (a redundant "
                            "set needs regularization > 0 for unique derivatives)") from None
    return (X[:nv, :nv], X[:nv, nv:2 * nv], X[:nv, 2 * nv:], X[nv:, :nv], X[nv:, nv:2 * nv],
            X[nv:, 2 * nv:])

__all__ = ["centroidal_dynamics_derivatives", "CentroidalDynamicsDerivatives",
           "contact_dynamics_derivatives", "ContactDynamicsDerivatives"]
