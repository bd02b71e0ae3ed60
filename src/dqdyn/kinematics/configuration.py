"""The configuration manifold: ``integrate`` (q ⊕ v dt), ``difference`` (q1 ⊖ q0), the neutral and
random configurations, normalisation and the tangent-space bracket.

Vector joints add; spherical and free joints move by the exact exponential of the body (angular)
velocity (``joint_integrate`` / ``joint_difference`` of `dqdyn.multibody.joints`; the
unit dual quaternion exponential of [Silva2022thesis, §3.3.2]), so unit (dual) quaternions stay unit.  The q / v layouts per
joint are in the README's Conventions.
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np

from dqdyn._engine.batching import for_batch
from dqdyn._engine.boundary import (
    BAD_SHAPE,
    BAD_V_FINITE,
    ND,
    OK,
    as_vector_batch,
    broadcast_batch,
    check_finite,
    check_q,
    first_bad,
    raise_status,
)
from dqdyn._engine.checks import real_scalar
from dqdyn._engine.gate import T_MI, T_V, armed_call
from dqdyn._engine.jit import kernel
from dqdyn.errors import InfeasibleError, NonFiniteError
from dqdyn.multibody.joints import FREE, SPHERICAL, joint_difference, joint_integrate
from dqdyn.multibody.model import MI_IQ, MI_IV, MI_JTYPE, MI_NQ, Model

njit = kernel()
pjit = kernel(parallel=True)


def _q_in(model: Model, q):
    return as_vector_batch(q, model.nq, "q", "the configuration, model.nq entries")


def _v_in(model: Model, v, name="v"):
    return as_vector_batch(v, model.nv, name, "a velocity, model.nv entries")


def _check(model, status):
    st, row = first_bad(status)
    if st:
        raise_status(model, st, row if status.shape[0] > 1 else None)


@njit
def integrate_kernel(mi, q, v, dt, out):
    st = check_q(mi, q)
    if st != OK:
        return st
    st = check_finite(v, BAD_V_FINITE)
    if st != OK:
        return st
    tmp8 = np.empty(8)
    tmp6 = np.empty(6)
    for i in range(1, mi.shape[0]):
        if mi[i, MI_NQ] > 0:
            joint_integrate(mi[i, MI_JTYPE], q, mi[i, MI_IQ], v, mi[i, MI_IV], dt, out, tmp8, tmp6)
    return OK


@njit
def difference_kernel(mi, q0, q1, out):
    st = check_q(mi, q0)
    if st != OK:
        return st
    st = check_q(mi, q1)
    if st != OK:
        return st
    a = np.empty(8)
    b = np.empty(8)
    for i in range(1, mi.shape[0]):
        if mi[i, MI_NQ] > 0:
            joint_difference(mi[i, MI_JTYPE], q0, q1, mi[i, MI_IQ], mi[i, MI_IV], out, a, b)
    return OK


@njit
def normalize_kernel(mi, q):
    for i in range(1, mi.shape[0]):
        jt = mi[i, MI_JTYPE]
        if mi[i, MI_NQ] == 0 or not (jt == SPHERICAL or jt == FREE):
            continue
        s = mi[i, MI_IQ]
        n = math.sqrt(q[s] ** 2 + q[s + 1] ** 2 + q[s + 2] ** 2 + q[s + 3] ** 2)
        if jt == FREE:
            # the corrected form of [MontgomerySmith2023, eq. (33)]: Q/|Q| + ε(B/|Q| − (B·Q) Q/|Q|³)
            bq = q[s] * q[s + 4] + q[s + 1] * q[s + 5] + q[s + 2] * q[s + 6] + q[s + 3] * q[s + 7]
            for k in range(4):
                q[s + 4 + k] = q[s + 4 + k] / n - bq * q[s + k] / (n * n * n)
        for k in range(4):
            q[s + k] /= n


@njit
def integrate_entry(mi, q, v, dt, out):
    if q.shape[0] != mi[0, MI_IQ] or v.shape[0] != mi[0, MI_IV] or out.shape[0] != q.shape[0]:
        return BAD_SHAPE
    for k in range(q.shape[0]):
        out[k] = q[k]
    return integrate_kernel(mi, q, v, dt, out)


@njit
def difference_entry(mi, q0, q1, out):
    if q0.shape[0] != mi[0, MI_IQ] or q1.shape[0] != mi[0, MI_IQ] or out.shape[0] != mi[0, MI_IV]:
        return BAD_SHAPE
    for k in range(out.shape[0]):
        out[k] = 0.0
    return difference_kernel(mi, q0, q1, out)


_INTEGRATE = _DIFFERENCE = None  # entry kernels, armed on first use (gate.armed_call)
INTEGRATE_SIG = (T_MI, T_V, T_V, nb.types.float64, T_V)
DIFFERENCE_SIG = (T_MI, T_V, T_V, T_V)


@pjit
def integrate_batch(mi, Q, V, dt, out, status):
    for n in nb.prange(Q.shape[0]):
        status[n] = integrate_kernel(mi, Q[n], V[n], dt, out[n])


@pjit
def difference_batch(mi, Q0, Q1, out, status):
    for n in nb.prange(Q0.shape[0]):
        status[n] = difference_kernel(mi, Q0[n], Q1[n], out[n])


def integrate(model: Model, q, v, dt: float = 1.0) -> np.ndarray:
    """``q ⊕ v dt``: integrate a constant velocity for ``dt`` on the configuration manifold.

    Vector joints add; spherical and free joints right-multiply the exact exponential of the
    body (angular) velocity, so unit (dual) quaternions stay unit.  ``dt`` must be a finite
    real number; a step whose increment ``|v dt|`` exceeds 1e15 (no significant digit left in
    an angle) or overflows is refused.
    """
    if type(dt) is not float or not -1.0 <= dt <= 1.0:
        dt = real_scalar(dt, "dt", "a finite real number (the time step, s)")
        big = abs(dt) > 1.0
    else:
        big = False
    if type(q) is ND and q.ndim == 1:
        out = np.empty(model.nq)
        try:
            st = _INTEGRATE(model.mi, q, v, dt, out)
        except TypeError:
            st = armed_call(globals(), "_INTEGRATE", integrate_entry, INTEGRATE_SIG,
                            (model.mi, q, v, dt, out))
        if st == OK:
            return _big_step(model, v, dt, out) if big else out
        if st is not None and st != BAD_SHAPE:
            raise_status(model, st)
    Q, bq = _q_in(model, q)
    V, bv = _v_in(model, v)
    (Q, V), batch = broadcast_batch([Q, V], [bq, bv])
    if big:
        _big_step(model, V, dt, None)
    out = Q.copy()
    status = np.zeros(Q.shape[0], dtype=np.int64)
    if Q.shape[0] == 1:
        status[0] = integrate_kernel(model.mi, Q[0], V[0], dt, out[0])
    else:
        for_batch(integrate_batch, Q.shape[0], model.mi.shape[0])(model.mi, Q, V, dt, out, status)
    _check(model, status)
    if big:
        _big_step(model, V, dt, out)
    return out.reshape(batch + (model.nq,))


def _big_step(model: Model, v, dt: float, out):
    """The checks of a step with ``|dt| > 1`` (off the common path): ``|v dt| <= 1e15`` and a
    finite result (``out``, when given); returns ``out``."""
    inc = float(np.max(np.abs(v), initial=0.0)) * abs(dt)
    if not inc <= 1e15:
        raise InfeasibleError(
            f"dt = {dt!r}: the increment |v·dt| = {inc:.3g} exceeds 1e15 (an angle or a "
            "position would keep no significant digit); integrate over smaller steps"
        )
    if out is not None and not np.all(np.isfinite(out)):
        raise NonFiniteError(f"dt = {dt!r}: integrate(q, v, dt) overflowed to NaN or infinity")
    return out


def difference(model: Model, q0, q1) -> np.ndarray:
    """``q1 ⊖ q0``: the velocity ``v`` (..., nv) with ``integrate(q0, v, 1) = q1``."""
    if type(q0) is ND and q0.ndim == 1:
        out = np.empty(model.nv)
        try:
            st = _DIFFERENCE(model.mi, q0, q1, out)
        except TypeError:
            st = armed_call(globals(), "_DIFFERENCE", difference_entry, DIFFERENCE_SIG,
                            (model.mi, q0, q1, out))
        if st == OK:
            return out
        if st is not None and st != BAD_SHAPE:
            raise_status(model, st)
    Q0, b0 = _q_in(model, q0)
    Q1, b1 = _q_in(model, q1)
    (Q0, Q1), batch = broadcast_batch([Q0, Q1], [b0, b1])
    out = np.zeros((Q0.shape[0], model.nv))
    status = np.zeros(Q0.shape[0], dtype=np.int64)
    if Q0.shape[0] == 1:  # (a prange loop would start the thread pool for one state)
        status[0] = difference_kernel(model.mi, Q0[0], Q1[0], out[0])
    else:
        for_batch(difference_batch, Q0.shape[0], model.mi.shape[0])(model.mi, Q0, Q1, out, status)
    _check(model, status)
    return out.reshape(batch + (model.nv,))


def tangent_bracket(model: Model, a, b) -> np.ndarray:
    """Lie bracket ``[a, b]`` of two velocity-space (tangent) vectors, joint by joint (..., nv).

    Zero on vector-space joints; ``ω_a × ω_b`` on spherical joints; the twist cross product
    ``ξ_a × ξ_b`` [Silva2022, eq. (8)] on free joints.  Needed by Lie-group integrators (RKMK) to
    stay 4th-order accurate on the configuration manifold.
    """
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    out = np.zeros(np.broadcast_shapes(a.shape, b.shape))
    for i in range(1, model.nbodies + 1):
        jt = model.mi[i, MI_JTYPE]
        if model.mi[i, MI_NQ] == 0 or jt not in (SPHERICAL, FREE):
            continue
        s = model.mi[i, MI_IV]
        wa, wb = a[..., s : s + 3], b[..., s : s + 3]
        out[..., s : s + 3] = np.cross(wa, wb)
        if jt == FREE:
            va, vb = a[..., s + 3 : s + 6], b[..., s + 3 : s + 6]
            out[..., s + 3 : s + 6] = np.cross(wa, vb) + np.cross(va, wb)
    return out


def neutral(model: Model) -> np.ndarray:
    """The neutral configuration: zeros, identity quaternions and identity poses."""
    q = np.zeros(model.nq)
    for i in range(1, model.nbodies + 1):
        if model.mi[i, MI_NQ] and model.mi[i, MI_JTYPE] in (SPHERICAL, FREE):
            q[model.mi[i, MI_IQ]] = 1.0
    return q


def normalize_configuration(model: Model, q) -> np.ndarray:
    """Project the quaternion / dual quaternion blocks of ``q`` back onto unit elements."""
    Q, batch = _q_in(model, q)
    Q = Q.copy()
    for n in range(Q.shape[0]):
        normalize_kernel(model.mi, Q[n])
    return Q.reshape(batch + (model.nq,))


def random_configuration(model: Model, size=None, seed=None, *, translation_range: float = 1.0):
    """Random configurations (size + (nq,)): uniform within finite joint limits (±π otherwise),
    uniformly random unit quaternions, and free-joint translations within ``±translation_range``."""
    from dqdyn.algebra.rotations import pose_from_rt

    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    shape = () if size is None else ((size,) if np.isscalar(size) else tuple(size))
    lo = np.where(np.isfinite(model.q_lower), model.q_lower, -np.pi)
    hi = np.where(np.isfinite(model.q_upper), model.q_upper, np.pi)
    q = rng.uniform(lo, hi, shape + (model.nq,))
    for i in range(1, model.nbodies + 1):
        jt, s = model.mi[i, MI_JTYPE], model.mi[i, MI_IQ]
        if model.mi[i, MI_NQ] == 0:
            continue
        if jt in (SPHERICAL, FREE):
            r = rng.normal(size=shape + (4,))
            r /= np.linalg.norm(r, axis=-1, keepdims=True)
            if jt == SPHERICAL:
                q[..., s : s + 4] = r
            else:
                p = rng.uniform(-translation_range, translation_range, shape + (3,))
                q[..., s : s + 8] = pose_from_rt(r, p)
    return q


__all__ = ["integrate", "difference", "neutral", "tangent_bracket", "normalize_configuration",
           "random_configuration"]
