r"""Centroidal dynamics: the centroidal momentum matrix, the momentum and its rate, the CoM Jacobian.

The centroidal momentum ``h_g = [l; k_g]`` of a multibody system is its total linear momentum
``l`` and its angular momentum ``k_g`` about the centre of mass ``c``, both in the world axes
([Orin2013]).  It is linear in the velocity, ``h_g = A_g(q) v`` (the *centroidal
momentum matrix*, (6, nv), rows ``[linear; angular]`` as Pinocchio's ``ccrba``; columns in
dqdyn's ``v`` order), and its rate is ``ḣ_g = A_g a + Ȧ_g v`` (``a = v̇``).  Newton and Euler for
the whole system give the physics check the tests use: ``ḣ_g = Σ`` external wrenches about the CoM
(gravity and contact forces) [Orin2013].

Computation, floating base (one compiled call per state, or per chunk of a batch:
`dqdyn.contact._centroidal_kernels`; the numpy route below, one ``mass_matrix`` call and one
``forward_kinematics`` call for the base pose, the rate one ``rnea`` call more, is kept as the
tests' reference).  When body 1 is moved by a free joint from
the world and every other body descends from it, the free joint's velocity is the base's body
twist ``[ω_b; v_b]`` and its rows of the joint-space inertia matrix are the composite rigid-body
inertia of the whole tree times the joint columns (the composite-rigid-body algorithm,
[Featherstone2008, ch. 6]): ``M[base, :] v = [k_b; l_b]``, the system's angular momentum about
the base origin and its
linear momentum, both in the base axes (the armature of the base's own DoFs, if any, is removed
from the diagonal).  The base-base block ``[[I_b, m [c_b]×], [m [c_b]×ᵀ, m 1]]`` holds the CoM
``c_b`` of the system in the base frame, and moving the wrench rows to the CoM with world axes,
``l = R l_b``, ``k_g = R (k_b − c_b × l_b)`` (force transforms, [Featherstone2008, ch. 2];
``R`` the base orientation), gives ``A_g = blkdiag(R, R) [M_f; M_τ − [c_b]× M_f]`` with ``M_τ``, ``M_f`` the
moment and force rows (the centroidal momentum matrix from the composite inertia of the
whole tree, [Orin2013]).  Likewise the base rows of ``rnea(q, v, a)`` are the rate of the
system's momentum minus gravity's wrench, both about the base origin in the base axes (the free joint transmits
the sum of the bodies' ``I a + v ×* I v`` less their weights, [Featherstone2008, ch. 5]); moved
to the CoM the same way, and with gravity's wrench ``[m g; 0]`` about the CoM added back:
``ḣ_g = blkdiag(R, R) [F_f; F_τ − c_b × F_f] + [m g; 0]``, where ``d/dt`` of ``k_g`` about the
moving CoM equals the moment rate moved there because ``ċ × l = 0``.

Computation, other trees (numpy over compiled kinematics): every body's spatial inertia ``Φ_i``
in F_0 at F_0's origin (mapping the spatial twist ``[ω; v]`` to the momentum wrench ``[f; τ]``), its spatial
Jacobian ``J_i`` and drift ``J̇_i v``; then ``A_0 = Σ Φ_i J_i`` (the momentum about F_0's origin)
and the rate ``ḣ_0 = Σ Φ_i ξ̇_i + ξ_i ×* Φ_i ξ_i`` ([Featherstone2008, ch. 2]), both
shifted to the CoM: ``k_g = k_0 − c × l`` and, since ``ċ × l = 0``, ``k̇_g = k̇_0 − c × l̇``.
A batch (leading axes of ``q``, ``v``, ``a``) goes through the compiled kernel at once (the
floating-base route) or through the kinematics in one compiled call per body (other trees).
The joint armature is not momentum of the bodies and is left out (as in Pinocchio).
"""

from __future__ import annotations

import weakref

import numpy as np

from dqdyn._engine.batching import run_chunked
from dqdyn._engine.boundary import kernel_rows, raise_status
from dqdyn._engine.gate import fast_front
from dqdyn.algebra.rotations import pose_from_rt
from dqdyn.constraints.base import frame_kinematics
from dqdyn.contact._centroidal_kernels import (
    AG,
    AG_ENTRY,
    HG,
    HG_ENTRY,
    HGDOT,
    HGDOT_ENTRY,
    JC,
    JC_ENTRY,
    NOT_FLOATING,
    centroidal_batch,
    centroidal_rows,
)
from dqdyn.contact._common import cross, each_state, qv_what, rotations, skew, states
from dqdyn.dynamics.lagrange import mass_matrix
from dqdyn.dynamics.newton_euler import rnea
from dqdyn.errors import ShapeError
from dqdyn.kinematics.forward import forward_kinematics
from dqdyn.multibody.joints import FREE
from dqdyn.multibody.model import MI_IV, MI_JTYPE, MI_PARENT, Model

_BASE: dict = {}  # id(model) -> (weak reference, floating-base constants)


def _base(model: Model):
    """``(iv, base armature or None, total mass)`` of the floating-base route, ``None`` where it does not apply (body 1 not a free joint on the world, another body on the world, mimic
    joints); cached per model (models are immutable)."""
    hit = _BASE.get(id(model))
    if hit is not None and hit[0]() is model:
        return hit[1]
    mi = model.mi
    out = None
    if not (mi.shape[0] < 2 or mi[1, MI_JTYPE] != FREE or mi[1, MI_PARENT] != 0
            or np.any(mi[2:, MI_PARENT] == 0) or model.mimic_joints):
        iv = int(mi[1, MI_IV])
        arm = np.array(model.armature[iv:iv + 6])
        out = (iv, arm if np.any(arm) else None, float(model.total_mass))
    if len(_BASE) > 64:
        _BASE.clear()
    _BASE[id(model)] = (weakref.ref(model), out)
    return out


def _base_rows(model: Model, Q: np.ndarray, base):
    """``(T (N, 6, 6), [M_τ; M_f] (N, 6, nv))``: the transport ``T = [[0, R], [R, −R [c_b]×]]``
    of base-frame wrench rows ``[τ_b; f_b]`` to ``[R f_b; R (τ_b − c_b × f_b)]`` (module
    docstring) and the base rows of ``M`` less the base's armature."""
    iv, arm, mt = base
    B = each_state(mass_matrix, model, Q)[:, iv:iv + 6]
    if arm is not None:
        B = B.copy()
        B[:, np.arange(6), iv + np.arange(6)] -= arm
    S = B[:, 0:3, iv + 3:iv + 6]  # m [c_b]×, so that −R [c_b]× = −R S / m
    R = rotations(each_state(forward_kinematics, model, Q)[:, 1, :4])
    T = np.zeros((Q.shape[0], 6, 6))
    T[:, :3, 3:] = R
    T[:, 3:, :3] = R
    T[:, 3:, 3:] = R @ S * (-1.0 / max(mt, 1e-300))
    return T, B


def _ag_floating(model: Model, Q: np.ndarray, base) -> np.ndarray:
    T, B = _base_rows(model, Q, base)
    return T @ B


_NO_X = np.empty((1, 0))  # (V, A where a mode does not use them)
_NO_OUT = np.empty((1, 0, 0))


def _compiled(model: Model, mode: int, Q, V=_NO_X, A=_NO_X) -> np.ndarray:
    """The floating-base route in the compiled kernel (`dqdyn.contact._centroidal_kernels`: one
    call per state or per chunk of a batch) on checked 2-D batches: ``A_g`` (N, 6, nv), ``J_c``
    (N, 3, nv) or, with ``V`` (and ``A``), ``h_g`` (``ḣ_g``) (N, 6).  A bad input (a non-unit
    quaternion) raises as the numpy route's calls would."""
    N, nv = Q.shape[0], model.nv
    rows = 6 if mode == AG else 3 if mode == JC else 0
    out = np.empty((N, rows, nv)) if rows else (_NO_OUT if N == 1 else np.empty((N, 0, 0)))
    h = np.empty((N, 0 if rows else 6))
    if N == 1:
        status = np.zeros(1, dtype=np.int64)
        centroidal_rows(model.mi, model.mf, kernel_rows(Q), kernel_rows(V), kernel_rows(A), out, h, status,
                        0, 1)  # (kernel_rows: a read-only broadcast row would be another numba type)
        if status[0]:
            raise_status(model, int(status[0]))
    else:
        run_chunked(centroidal_batch, (model.mi, model.mf), [Q, V, A], [out, h], N, (1, 2),
                    lambda code, row: raise_status(model, int(code), row))
    return out if rows else h


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


@fast_front(AG_ENTRY, out=False, skip=NOT_FLOATING)
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
    return _cmm(model, q, True)


def _is_model(model) -> None:
    if not isinstance(model, Model):
        raise ShapeError(f"model must be a dqdyn.Model, got {type(model).__name__}")


def _cmm(model: Model, q, compiled: bool) -> np.ndarray:
    """`centroidal_momentum_matrix` (``compiled=False``: the numpy route, the tests' reference)."""
    _is_model(model)
    (Q,), batch = states(model, [("q", q, model.nq, qv_what(model)[0])])
    base = _base(model)
    if base is not None:
        Ag = _compiled(model, AG, Q) if compiled else _ag_floating(model, Q, base)
        return Ag.reshape(batch + (6, model.nv))
    A0, c, _ = _terms(model, Q, np.zeros((Q.shape[0], model.nv)), False)
    return _shift(A0, c).reshape(batch + (6, model.nv))


@fast_front(HG_ENTRY, out=False, skip=NOT_FLOATING)
def centroidal_momentum(model: Model, q, v) -> np.ndarray:
    """``h_g = A_g(q) v`` (..., 6): ``[linear momentum; angular momentum about the CoM]``, world axes
    (Pinocchio's ``computeCentroidalMomentum`` ``hg`` as ``[linear; angular]``)."""
    return _hg(model, q, v, True)


def _hg(model: Model, q, v, compiled: bool) -> np.ndarray:
    _is_model(model)
    w = qv_what(model)
    (Q, V), batch = states(model, [("q", q, model.nq, w[0]), ("v", v, model.nv, w[1])])
    base = _base(model)
    if base is not None and compiled:
        return _compiled(model, HG, Q, V).reshape(batch + (6,))
    if base is not None:
        Ag = _ag_floating(model, Q, base)
    else:
        A0, c, _ = _terms(model, Q, V, False)
        Ag = _shift(A0, c)
    return (Ag @ V[:, :, None])[:, :, 0].reshape(batch + (6,))


@fast_front(HGDOT_ENTRY, out=False, skip=NOT_FLOATING)
def centroidal_momentum_rate(model: Model, q, v, a) -> np.ndarray:
    """``ḣ_g = A_g a + Ȧ_g v`` (..., 6), rows ``[linear; angular]`` about the CoM, world axes.

    It equals the sum of the external wrenches on the system about its CoM, gravity included
    [Orin2013]; with ``a = 0`` it is the drift ``Ȧ_g v``.  Pinocchio:
    ``computeCentroidalMomentumTimeVariation(model, data, q, v, a)`` → ``data.dhg``.
    """
    return _hgdot(model, q, v, a, True)


def _hgdot(model: Model, q, v, a, compiled: bool) -> np.ndarray:
    _is_model(model)
    w = qv_what(model)
    (Q, V, Aa), batch = states(model, [("q", q, model.nq, w[0]), ("v", v, model.nv, w[1]),
                                       ("a", a, model.nv, w[2])])
    base = _base(model)
    if base is not None and compiled:
        return _compiled(model, HGDOT, Q, V, Aa).reshape(batch + (6,))
    if base is not None:
        iv, arm, mt = base
        T, _ = _base_rows(model, Q, base)
        F = each_state(rnea, model, Q, V, Aa)[:, iv:iv + 6]
        if arm is not None:
            F = F - arm * Aa[:, iv:iv + 6]
        hd = (T @ F[:, :, None])[:, :, 0]
        hd[:, :3] += mt * np.asarray(model.gravity)
        return hd.reshape(batch + (6,))
    _, c, per = _terms(model, Q, V, True)
    hd = np.zeros((Q.shape[0], 6))
    for P, J, xi, jdv in per:
        xid = np.einsum("nij,nj->ni", J, Aa) + jdv
        hb = np.einsum("nij,nj->ni", P, xi)
        hd += np.einsum("nij,nj->ni", P, xid)
        w_, v_ = xi[:, :3], xi[:, 3:]
        hd[:, :3] += cross(w_, hb[:, :3])
        hd[:, 3:] += cross(w_, hb[:, 3:]) + cross(v_, hb[:, :3])
    hd[:, 3:] -= cross(c, hd[:, :3])
    return hd.reshape(batch + (6,))


@fast_front(JC_ENTRY, out=False, skip=NOT_FLOATING)
def com_jacobian(model: Model, q) -> np.ndarray:
    """Jacobian (..., 3, nv) of the whole-system centre of mass in F_0: ``ċ = J_c v``
    (Pinocchio's ``jacobianCenterOfMass``; it is ``A_g``'s linear rows over the total mass)."""
    return _jc(model, q, True)


def _jc(model: Model, q, compiled: bool) -> np.ndarray:
    _is_model(model)
    (Q,), batch = states(model, [("q", q, model.nq, qv_what(model)[0])])
    base = _base(model)
    if base is not None and compiled:
        return _compiled(model, JC, Q).reshape(batch + (3, model.nv))
    if base is not None:
        T, B = _base_rows(model, Q, base)
        return (T[:, :3, 3:] @ B[:, 3:] / float(np.sum(model.mass))).reshape(batch + (3, model.nv))
    A0, _, _ = _terms(model, Q, np.zeros((Q.shape[0], model.nv)), False)
    return (A0[:, :3] / float(np.sum(model.mass))).reshape(batch + (3, model.nv))


__all__ = ["centroidal_momentum_matrix", "centroidal_momentum", "centroidal_momentum_rate",
           "com_jacobian"]
