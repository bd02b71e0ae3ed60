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

Only those six rows are needed, and each column of them is one wrench of the backward sweep
(``∂F/∂q_k``, ``∂F/∂q̇_k``, ``ℐ^c 𝒮_k`` and its rate), with no ancestor visited: for a tree of
one root (free or not) without planar or mimic joints, the compiled route
(`dqdyn.contact._derivative_kernels.centroidal_derivatives_rows`) runs the forward sweep of
`dqdyn.rnea_derivatives` on the model itself, with its root at the sweep's origin where ``b``
sits, and those rows alone (`dqdyn.dynamics.derivatives._sweeps.base_rows_sweep`, O(n)
instead of the O(n·d) of the whole matrices); one state through the call gate, a batch per
block of states on the thread pool.  Other models take the augmented model.

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

The compiled route needs no hung model: the contact rows' derivatives come from the forward
sweep of `dqdyn.rnea_derivatives` itself (`dqdyn.contact._derivative_kernels.contact_rows`, which
the hung model's route is tested against), and the whole route is one compiled call; models
with mimic or planar joints keep the hung model's route.
"""

from __future__ import annotations

import weakref
from dataclasses import replace
from math import isfinite
from typing import NamedTuple

import numpy as np

from dqdyn._engine.batching import for_batch
from dqdyn._engine.checks import kernel_rows
from dqdyn._engine.gate import GATE, SPLIT
from dqdyn.algebra.rotations import matrix_from_pose, translation_of
from dqdyn.contact._common import qv_what, skew, states
from dqdyn.contact._derivative_kernels import (
    KKT_M_NOT_PD,
    KKT_MAX_CONDITION,
    KKT_OK,
    centroidal_derivatives_batch,
    centroidal_derivatives_gate,
    contact_derivatives_batch,
    contact_derivatives_gate,
    contact_derivatives_rows,
    elimination_size,
    jr_inv_se3,
    kkt_derivatives,
)
from dqdyn.contact._kkt import _par, check_settings, contact_table
from dqdyn.contact.contacts import EDITS, _Contact, as_contact_list
from dqdyn.contact.dynamics import contact_dynamics
from dqdyn.dynamics.coriolis import coriolis_matrix
from dqdyn.dynamics.derivatives import rnea_derivatives
from dqdyn.dynamics.derivatives.kernels import rnea_derivatives_kernel
from dqdyn.dynamics.minverse import mass_matrix_inverse
from dqdyn.dynamics.newton_euler import rnea
from dqdyn.errors import ModelError, ShapeError, SingularError
from dqdyn.kinematics.jacobians import jacobian_time_derivative
from dqdyn.multibody.builders import ModelBuilder
from dqdyn.multibody.joints import PLANAR
from dqdyn.multibody.model import MI_JTYPE, MI_PARENT, Model


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
_T6 = np.zeros((6, 6))  # [n; f] ↦ [f; n − c × f], its −[c]× block set per call
_T6[:3, 3:] = _T6[3:, :3] = np.eye(3)


def _route(model: Model) -> tuple:
    """``(layout, address)`` of the compiled route of `centroidal_dynamics_derivatives`
    (`dqdyn.contact._derivative_kernels.centroidal_derivatives_rows`: the result's four parts
    and the gate kernel's address), or ``(None, 0)`` for a model it does not take: several
    roots, a planar joint (its body-frame axes move with its angle) or mimic joints, which the
    augmented model's route computes.  Kept in the model's index."""
    mi = model.mi
    ok = (model.nbodies > 0 and not model._index["mimic"] and not (mi[1:, MI_JTYPE] == PLANAR).any()
          and int((mi[1:, MI_PARENT] == 0).sum()) == 1)
    r = (((6, model.nv),) * 4, centroidal_derivatives_gate() if GATE is not None else 0) if ok else (None, 0)
    model._index["centroidal_derivatives"] = r
    return r


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
    route = model._index.get("centroidal_derivatives") or _route(model)
    if route[0] is not None and GATE is not None:  # (one state through the C call gate; else
        # None, or a status that the routes below name)
        r = GATE(route[1], model.mi, model.mf, 24 * nv, -1, q, v, a)
        if type(r) is np.ndarray:
            return SPLIT(r, route[0], 1, CentroidalDynamicsDerivatives)
    w = qv_what(model)
    (Q, V, A), batch = states(model, [("q", q, nq, w[0]), ("v", v, nv, w[1]), ("a", a, nv, w[2])])
    N = Q.shape[0]
    shape = batch + (6, nv)
    if route[0] is not None:
        OUT = np.empty((N, 4, 6, nv))
        status = np.zeros(N, np.int64)
        for_batch(centroidal_derivatives_batch, N, model.nbodies + 1)(model.mi, model.mf, Q, V, A, OUT, status)
        if not status.any():  # (else the route below, which names what is wrong)
            return CentroidalDynamicsDerivatives(*(OUT[:, k].reshape(shape) for k in range(4)))
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
    return CentroidalDynamicsDerivatives(*(x.reshape(shape) for x in R))


def _one_state(model: Model, q, v, x) -> bool:
    """Whether ``q, v, x`` are one finite state as 1-D float64 arrays of sizes nq, nv, nv (the
    short path of both functions, without `states`' checks and broadcasting; a sum of squares
    that overflows sends finite inputs the long way, which accepts them)."""
    return (type(q) is np.ndarray and type(v) is np.ndarray and type(x) is np.ndarray
            and q.shape == (model.nq,) and v.shape == (model.nv,) and x.shape == (model.nv,)
            and q.dtype == v.dtype == x.dtype == np.float64
            and isfinite(q.dot(q) + v.dot(v) + x.dot(x)))


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


_NO_FEXT = np.zeros((1, 6))  # (rnea_derivatives' kernel without external wrenches)


def _rnea_derivatives_fext(model: Model, q, v, a, fext, parts: int = 3):
    """`dqdyn.rnea_derivatives` stacked in the first three of ``parts`` (nv, nv) matrices of one
    array (the others left to the caller), with ``fext`` (nbodies+1, 6) or None, at one state of
    finite C-contiguous writable 1-D float64 arrays: its compiled kernel called directly (the
    public function's route with ``fext`` costs more than the kernel, and it returns three
    arrays); a model with mimic joints or a bad status takes the public function, which names
    the error."""
    out = np.empty((parts, model.nv, model.nv))
    if not model._index["mimic"]:
        use = fext is not None
        if not rnea_derivatives_kernel(model.mi, model.mf, q, v, a, fext if use else _NO_FEXT, use, out[:3]):
            return out
    out[:3] = rnea_derivatives(model, q, v, a, fext=fext)
    return out


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


class _Hung(NamedTuple):
    """The hung model of a model and its contact frames, and what each call reuses."""

    model: Model
    #: its contact bodies' names
    names: list[str]
    #: the contacts' rows of the hung model's inverse dynamics, stacked as the forces ``λ``
    #: (a point contact ``v̇ + ω × v``, a frame contact ``[v̇ + ω × v; ω̇]``), restricted to the
    #: model's columns: (m, nv) flat indices into the hung model's (nv + 6K)² matrices
    rows: np.ndarray
    #: ``λ ↦ fext`` (nbodies+1)·6 × m: each contact's ``[f; τ]`` (contact frame) as the wrench
    #: on its body (body frame, body origin)
    fmap: np.ndarray
    #: the hung model's ``q`` with the unit dual quaternion on each free joint, a zero ``v``
    qa: np.ndarray
    va: np.ndarray
    #: per contact, its frame's rows ``[ω; v]`` (6, nv) as flat indices as ``rows``
    frames: np.ndarray
    #: per contact, the offset of its forces in ``λ``
    off: list[int]
    #: the frame contacts' indices, their ``frames`` and their linear rows in ``λ``
    six: list[int]
    frames6: np.ndarray
    lin6: np.ndarray


def _hung(model: Model, frames, dims) -> _Hung:
    """The model without gravity, a unit body on a free joint at each frame ``(body, placement)``
    (their q, v entries after the model's), for contacts of dimensions ``dims``.  Cached per
    model and frames."""
    per = _HUNG.setdefault(model, {})
    key = tuple((b, pl.tobytes(), d) for (b, pl), d in zip(frames, dims))
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
        nv, K = model.nv, len(frames)
        fmap = np.zeros(((model.nbodies + 1) * 6, sum(dims)))
        rows, o = [], 0
        for k, ((body, pl), dim) in enumerate(zip(frames, dims)):
            Rb = matrix_from_pose(pl)[:3, :3]
            X = fmap[6 * body:6 * body + 6, o:o + dim]
            X[:3, :3], X[3:, :3] = Rb, skew(translation_of(pl)) @ Rb
            if dim == 6:
                X[3:, 3:] = Rb
            rows.append(nv + 6 * k + (_SWAP if dim == 6 else _SWAP[:3]))
            o += dim
        qa = np.concatenate([np.zeros(model.nq), np.tile(_IDENTITY, K)])
        rows = np.concatenate(rows) if rows else np.zeros(0, dtype=np.intp)
        cols, off = np.arange(nv), np.cumsum((0,) + tuple(dims))[:-1].tolist()
        frows = nv + 6 * np.arange(K)[:, None] + np.arange(6)
        six = [k for k, d in enumerate(dims) if d == 6]
        hit = per[key] = _Hung(hm, names, rows[:, None] * hm.nv + cols, fmap, qa, np.zeros(hm.nv),
                               frows[:, :, None] * hm.nv + cols, off, six,
                               frows[six, :, None] * hm.nv + cols, np.array([off[k] + j for k in six for j in range(3)], dtype=np.intp))
    return hit


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
        derivatives are not unique (the Delassus matrix ``A M⁻¹ Aᵀ + ε 1`` singular to working
        precision: its largest diagonal entry over its smallest Cholesky pivot squared past
        ``1e13``).

    Notes
    -----
    On a model without mimic or planar joints, one compiled call per state
    (`dqdyn.contact._derivative_kernels`; a batch on the thread pool); a model with them takes
    the hung model of the module docstring, and a batch a Python loop over its states.
    """
    p = _PLANS.get((id(model), id(contacts)))
    if p is None or p.edits != EDITS[0] or p.raw is not regularization or (
            p.items is not None and p.items != tuple(contacts)):
        p = _plan(model, contacts, regularization)
    if p.layout is not None:  # (one state through the C call gate; else None, or a status
        # that the routes below name)
        r = GATE(p.addr, model.mi, model.mf, p.size, -1, q, v, tau, p.flat, p.args[3], p.flat_fmap)
        if type(r) is np.ndarray:
            return SPLIT(r, p.layout, 1, ContactDynamicsDerivatives)
    cons, hp = p.cons, p.hp
    nv = model.nv
    if (p.args is not None and type(q) is np.ndarray and type(v) is np.ndarray
            and type(tau) is np.ndarray and q.shape == p.qshape and v.shape == tau.shape == (nv,)
            and q.dtype == v.dtype == tau.dtype == np.float64 and q.flags.carray and v.flags.carray
            and tau.flags.carray):  # one state of plain vectors: one compiled call (a non-finite
        # entry or a non-unit quaternion sets its status: the route below names it)
        Z, X = np.empty((1, 3, nv, nv)), np.empty((1, 3, p.m, nv))
        status = np.empty(1, dtype=np.int64)
        contact_derivatives_rows(*p.args, q[None], v[None], tau[None], Z, X, status, 0, 1)
        if not status[0]:
            (za, zb, zc), (xa, xb, xc) = Z[0], X[0]
            return ContactDynamicsDerivatives(za, zb, zc, xa, xb, xc)
    one = _one_state(model, q, v, tau)  # (one checked state: 1-D arrays all along, the shorter route)
    if one:
        Q, V, T, batch = q[None], v[None], tau[None], ()
    else:
        w = qv_what(model)
        (Q, V, T), batch = states(model, [("q", q, model.nq, w[0]), ("v", v, model.nv, w[1]),
                                          ("tau", tau, model.nv, w[3])])
        one = Q.shape[0] == 1 and not batch
    N = Q.shape[0]
    if p.args is not None and not one:  # (a batch: on the thread pool)
        Z, X = np.empty((N, 3, nv, nv)), np.empty((N, 3, p.m, nv))
        status = np.empty(N, dtype=np.int64)
        Q, V, T = kernel_rows(Q), kernel_rows(V), kernel_rows(T)
        for_batch(contact_derivatives_batch, N, model.nbodies + 1)(*p.args, Q, V, T, Z, X, status)
        if not status.any():
            return ContactDynamicsDerivatives(*(Z[:, k].reshape(batch + (nv, nv)) for k in range(3)),
                                              *(X[:, k].reshape(batch + (p.m, nv)) for k in range(3)))
        # (else the route below, which names what the compiled one declined)
    # (the caller's contacts object: the contact fronts' plan for it is reused from call to call)
    r = contact_dynamics(model, Q[0] if one else Q, V[0] if one else V, T[0] if one else T,
                         contacts, regularization=regularization, proximal=None)
    eps = float(regularization)
    Ar, L = r.a.reshape(N, nv), r.multipliers.reshape(N, -1)
    if one:
        return ContactDynamicsDerivatives(*_contact_one(model, hp, cons, Q[0], V[0], Ar[0], L[0], eps))
    m = L.shape[1]
    out = [np.empty((N, nv, nv)) for _ in range(3)] + [np.empty((N, m, nv)) for _ in range(3)]
    for n in range(N):
        X = _contact_one(model, hp, cons, Q[n], V[n], Ar[n], L[n], eps)
        for k in range(6):
            out[k][n] = X[k]
    return ContactDynamicsDerivatives(*(x.reshape(batch + x.shape[1:]) for x in out))


#: the direct solve's settings of `dqdyn.contact_dynamics` (its defaults; no proximal iterations)
_MAX_ITER, _TOL = contact_dynamics.__kwdefaults__["max_iter"], contact_dynamics.__kwdefaults__["tol"]


class _Plan:
    """What `contact_dynamics_derivatives` keeps between calls on one model, contact list and
    ``regularization`` object (as `dqdyn.contact._kkt.plan_hit` does for the contact fronts):
    the checked contacts, their hung model, and the compiled route's leading arguments
    (``None`` where it does not apply)."""

    __slots__ = ("model", "contacts", "edits", "raw", "items", "cons", "hp", "m", "args", "qshape",
                 "layout", "addr", "size", "flat", "flat_fmap")


_PLANS: dict[tuple[int, int], _Plan] = {}


def _plan(model, contacts, regularization) -> _Plan:
    """The `_Plan` of these arguments, checked (errors named); kept for the next call where the
    contacts are one contact, a list or a tuple."""
    if not isinstance(model, Model):
        raise ShapeError(f"model must be a dqdyn.Model, got {type(model).__name__}")
    p = _Plan()
    p.cons = cons = as_contact_list(contacts, model)
    eps = check_settings(regularization, None, _MAX_ITER, _TOL)[0]
    p.model, p.contacts, p.edits, p.raw, p.qshape = model, contacts, EDITS[0], regularization, (model.nq,)
    p.items = None if isinstance(contacts, _Contact) else tuple(cons)
    p.hp = _hung(model, [c._frame(model) for c in cons], tuple(c.dim for c in cons))
    p.args = None
    spec, p.m = contact_table(model, cons)
    # the compiled route (`contact_rows`): no mimic joint, no planar joint (its axes turn with
    # its own angle)
    if cons and not model._index["mimic"] and not (model.mi[1:, MI_JTYPE] == PLANAR).any():
        p.args = (model.mi, model.mf, spec, _par(eps, None, _MAX_ITER, _TOL, 0.0, False), p.hp.fmap)
    p.layout = None
    if p.args is not None and GATE is not None:  # (the gate's flat inputs and result parts)
        nv, m = model.nv, p.m
        p.flat, p.flat_fmap = np.ascontiguousarray(spec).reshape(-1), np.ascontiguousarray(p.hp.fmap).reshape(-1)
        p.size, p.addr = 3 * nv * nv + 3 * m * nv, contact_derivatives_gate()
        p.layout = ((nv, nv),) * 3 + ((m, nv),) * 3
    if isinstance(contacts, (_Contact, list, tuple)) and type(regularization) in (int, float):
        if len(_PLANS) >= 256:
            _PLANS.clear()
        _PLANS[(id(model), id(contacts))] = p
    return p


def _cross_rows() -> np.ndarray:
    """``E`` (18, 6): ``(E ν).reshape(3, 6) = [−[v]×, [ω]×]`` for ``ν = [ω; v]``, so that
    ``(E ν).reshape(3, 6) [X_ω; X_v] = ω × X_v − v × X_ω`` (column-wise)."""
    E = np.zeros((18, 6))
    for j in range(6):
        e = np.zeros(6)
        e[j] = 1.0
        E[:, j] = np.hstack((-skew(e[3:]), skew(e[:3]))).ravel()
    return E


_CROSS = _cross_rows()


def _contact_one(model, hp: _Hung, cons, q, v, a, lam, eps):
    """The six derivatives at one state (1-D ``q, v, a, λ``), by the block elimination of the
    KKT system: with ``Y_x = M⁻¹ ∂ID/∂x``, ``Y_A = M⁻¹ Aᵀ`` and the Schur complement
    ``S = A Y_A + ε 1``, ``∂λ/∂x = S⁻¹ (A Y_x − ∂G/∂x)``, ``∂a/∂x = Y_A ∂λ/∂x − Y_x``
    (x = q, v), ``∂λ/∂τ = −S⁻¹ Y_Aᵀ``, ``∂a/∂τ = M⁻¹ + Y_A ∂λ/∂τ``."""
    nv, hm = model.nv, hp.model
    qa, va, aa = hp.qa.copy(), hp.va.copy(), hp.va.copy()
    qa[:model.nq], va[:nv], aa[:nv] = q, v, a
    q, v, a = qa[:model.nq], va[:nv], aa[:nv]  # (C-contiguous, writable: the kernel's types)
    Dq, Dv, Mh = rnea_derivatives(hm, qa, va, aa)
    idx = hp.rows  # (flat indices of the rows' first nv columns: one `take` each)
    A, Gq, Gv = Mh.take(idx), Dq.take(idx), Dv.take(idx)  # (of [ω̇; v̇ + ω × v])
    six = hp.six
    ks = [k for k, c in enumerate(cons) if c.dim == 6 or c.kd] if any(c.kd for c in cons) else six
    if ks:  # (the contacts that need ∂ν/∂q: the frame contacts and those with a kd)
        Jx = hp.frames6 if ks is six else hp.frames[ks]
        J = Mh.take(Jx)  # the contact frames' body Jacobians [ω; v] (unit inertia)
        P = ((J @ v) @ _CROSS.T).reshape(-1, 3, 6)
        Kv = P @ J  # ∂(ω × v)/∂v
        dnu = Dv.take(Jx)  # ∂ν/∂q = ∂α_s/∂v − J̇, α_s = α_c − [0; ω × v]
        for j, k in enumerate(ks):
            dnu[j] -= jacobian_time_derivative(hm, qa, va, hp.names[k], "body")[1][:, :nv]
        dnu[:, 3:] -= Kv
        if six:  # the spatial acceleration of a frame contact: α_c − [0; ω × v]
            j6 = slice(None) if ks is six else [j for j, k in enumerate(ks) if cons[k].dim == 6]
            if len(six) == len(cons):  # (frame contacts only: their linear rows as a view)
                Gq.reshape(-1, 6, nv)[:, :3] -= P[j6] @ dnu[j6]
                Gv.reshape(-1, 6, nv)[:, :3] -= Kv[j6]
            else:
                Gq[hp.lin6] -= (P[j6] @ dnu[j6]).reshape(-1, nv)
                Gv[hp.lin6] -= Kv[j6].reshape(-1, nv)
        for j, k in enumerate(ks):
            kd = cons[k].kd
            if kd:
                o, d = hp.off[k], cons[k].dim
                Gq[o:o + d] += kd * dnu[j][_SWAP if d == 6 else slice(3, 6)]
                Gv[o:o + d] += kd * A[o:o + d]
    for k, c in enumerate(cons):
        kp = c.kp
        if kp:
            o, i = hp.off[k], nv + 6 * k
            e = c.rows(model, q[None], v[None])[2][0]
            if c.dim == 3:
                Gq[o:o + 3] += kp * (Mh[i + 3:i + 6, :nv] + skew(e) @ Mh[i:i + 3, :nv])
            else:
                J6 = np.empty((6, 6))
                jr_inv_se3(np.ascontiguousarray(e, dtype=float), J6)
                Gq[o:o + 6] += kp * (J6 @ A[o:o + 6])
    o = A.shape[0]
    fext = (hp.fmap @ lam).reshape(model.nbodies + 1, 6)
    R = _rnea_derivatives_fext(model, q, v, a, fext)  # (3, nv, nv): ∂ID/∂q, ∂ID/∂v, M
    st = KKT_M_NOT_PD
    if o:
        Z, X = np.empty((3, nv, nv)), np.empty((3, o, nv))
        st = kkt_derivatives(R, A, Gq, Gv, float(eps), _DENSE, Z, X, np.empty(elimination_size(nv, o)),
                             _DENSE)
        ok = st == KKT_OK
    if st == KKT_M_NOT_PD:
        Mi = mass_matrix_inverse(model, q)
        if not o:
            z = np.zeros((0, nv))
            return -(Mi @ R[0]), -(Mi @ R[1]), Mi, z, z, z
        ok, Z, X = _kkt_numpy(Mi, R, A, Gq, Gv, eps)
    if not ok:
        raise SingularError("contacts: the KKT matrix of the contact set is singular (a redundant "
                            "set needs regularization > 0 for unique derivatives)")
    return Z[0], Z[1], Z[2], X[0], X[1], X[2]


_DENSE = np.empty(0, dtype=np.int64)  # (`kkt_derivatives` without the DoF tree: a dense M⁻¹)


def _kkt_numpy(Mi, R, A, Gq, Gv, eps):
    """`dqdyn.contact._derivative_kernels.kkt_derivatives` in numpy matrix products, from ``M⁻¹``
    given (`dqdyn.mass_matrix_inverse`: where the sweep's ``M`` is not positive definite to
    working precision, which the kernel declines): ``(ok, Z, X)`` with ``S⁻¹`` from a Cholesky
    factor (not positive definite to working precision, the kernel's test: ``ok`` False)."""
    from scipy.linalg.lapack import dpotrf, dtrtri  # (at first use: not imported with dqdyn)

    Y = Mi @ R[:2]
    YA = Mi @ A.T
    S = A @ YA
    o = S.shape[0]
    if eps:
        S.flat[::o + 1] += eps
    U, info = dpotrf(S, lower=0, clean=1)
    if info or U.diagonal().min() ** 2 * KKT_MAX_CONDITION < S.diagonal().max():
        return False, None, None
    Ui, info = dtrtri(U, lower=0)
    if info:
        return False, None, None
    B = np.empty((3, o, Mi.shape[0]))
    np.matmul(A, Y, out=B[:2])
    B[0] -= Gq
    B[1] -= Gv
    np.negative(YA.T, out=B[2])
    X = (Ui @ Ui.T) @ B  # ∂λ/∂q, ∂λ/∂v, ∂λ/∂τ
    Z = YA @ X
    Z[:2] -= Y
    Z[2] += Mi
    return True, Z, X


__all__ = ["centroidal_dynamics_derivatives", "CentroidalDynamicsDerivatives",
           "contact_dynamics_derivatives", "ContactDynamicsDerivatives"]
