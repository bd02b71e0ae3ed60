"""The joint-torque regressor: inverse dynamics linear in the inertial parameters.

``τ = Y(q, v, a) π`` with ``π`` the 10 inertial parameters of every body (mass, first moment
``h = m c``, inertia about the body origin; Pinocchio's ``toDynamicParameters`` order): column
``(i, p)`` of ``Y`` is the Newton–Euler wrench of body ``i`` with unit parameter ``p`` and all
others zero, mapped to the joints of its support ([Silva2022, eqs. (16)–(30)]; [Silva2022thesis, eqs. 4.38–4.39]).
"""

from __future__ import annotations

import numba as nb
import numpy as np

from dqdyn._engine.batching import for_batch
from dqdyn._engine.boundary import (
    BAD_A_FINITE,
    OK,
    as_vector_batch,
    broadcast_batch,
    check_state,
    first_bad,
    raise_status,
)
from dqdyn._engine.jit import kernel
from dqdyn.algebra._core import ad6, ad6_inv, cross6, dq_mul, power6
from dqdyn.multibody.joints import (
    joint_column,
    joint_nv,
    joint_transform,
    joint_velocity,
    joint_velocity_bias,
)
from dqdyn.multibody.model import (
    MF_AXIS,
    MF_OFFSET,
    MF_PITCH,
    MF_PLACEMENT,
    MF_SCALE,
    MI_IQ,
    MI_IV,
    MI_JTYPE,
    MI_PARENT,
    Model,
)

njit = kernel()
pjit = kernel(parallel=True)

#: order of the 10 inertial parameters of a body (Pinocchio's ``toDynamicParameters`` order):
#: mass, first moment ``h = m c`` (3), and the inertia about the body origin, body axes (6)
INERTIAL_PARAMETERS = ("m", "hx", "hy", "hz", "Ixx", "Ixy", "Iyy", "Ixz", "Iyz", "Izz")


@njit
def _unit_param_wrench(e, V, Vd, out, t, t2):
    """Wrench ``I(π_e) V̇ + V × I(π_e) V`` of a body whose only inertial parameter is π_e = 1.

    ``I(π)`` maps a twist ``[ω, v]`` to the momentum ``[f, τ] = [m v + ω × h, I_o ω + h × v]``.
    """
    for pass_ in range(2):
        src = Vd if pass_ == 0 else V
        w0, w1, w2, v0, v1, v2 = src[0], src[1], src[2], src[3], src[4], src[5]
        for r in range(6):
            t[r] = 0.0
        if e == 0:
            t[0], t[1], t[2] = v0, v1, v2
        elif e <= 3:
            hx = 1.0 if e == 1 else 0.0
            hy = 1.0 if e == 2 else 0.0
            hz = 1.0 if e == 3 else 0.0
            t[0], t[1], t[2] = w1 * hz - w2 * hy, w2 * hx - w0 * hz, w0 * hy - w1 * hx
            t[3], t[4], t[5] = hy * v2 - hz * v1, hz * v0 - hx * v2, hx * v1 - hy * v0
        else:
            k = e - 4  # Ixx, Ixy, Iyy, Ixz, Iyz, Izz
            if k == 0:
                t[3] = w0
            elif k == 1:
                t[3], t[4] = w1, w0
            elif k == 2:
                t[4] = w1
            elif k == 3:
                t[3], t[5] = w2, w0
            elif k == 4:
                t[4], t[5] = w2, w1
            else:
                t[5] = w2
        if pass_ == 0:
            for r in range(6):
                out[r] = t[r]
        else:
            cross6(V, t, t2)
            for r in range(6):
                out[r] += t2[r]


@njit
def regressor_kernel(mi, mf, g, q, v, a, Y):
    """``Y`` (nv, 10·nbodies) with ``τ = Y π`` (zeroed on entry); status code."""
    st = check_state(mi, q, v, a, BAD_A_FINITE, v[0:0].reshape((0, 6)), False)
    if st != OK:
        return st
    nb1 = mi.shape[0]
    xl = np.empty((nb1, 8))
    V = np.empty((nb1, 6))
    Vd = np.empty((nb1, 6))
    xj = np.empty(8)
    s = np.empty(6)
    t = np.empty(6)
    t2 = np.empty(6)
    w = np.empty(6)
    w2 = np.empty(6)
    for k in range(6):
        V[0, k] = 0.0
        Vd[0, k] = 0.0
    Vd[0, 3], Vd[0, 4], Vd[0, 5] = -g[0], -g[1], -g[2]
    for i in range(1, nb1):
        jt = mi[i, MI_JTYPE]
        ax = mf[i, MF_AXIS : MF_AXIS + 3]
        p = mi[i, MI_PARENT]
        joint_transform(jt, ax, mf[i, MF_PITCH], q, mi[i, MI_IQ], mf[i, MF_SCALE], mf[i, MF_OFFSET], xj)
        dq_mul(mf[i, MF_PLACEMENT : MF_PLACEMENT + 8], xj, xl[i])
        ad6_inv(xl[i], V[p], V[i])
        joint_velocity(jt, ax, mf[i, MF_PITCH], q, mi[i, MI_IQ], v, mi[i, MI_IV], mf[i, MF_SCALE], s)
        for r in range(6):
            V[i, r] += s[r]
        cross6(V[i], s, t)
        joint_velocity_bias(jt, q, mi[i, MI_IQ], v, mi[i, MI_IV], t2)
        ad6_inv(xl[i], Vd[p], Vd[i])
        joint_velocity(jt, ax, mf[i, MF_PITCH], q, mi[i, MI_IQ], a, mi[i, MI_IV], mf[i, MF_SCALE], s)
        for r in range(6):
            Vd[i, r] += s[r] + t[r] + t2[r]
    for i in range(1, nb1):
        for e in range(10):
            col = 10 * (i - 1) + e
            _unit_param_wrench(e, V[i], Vd[i], w, t, t2)
            b = i
            while b > 0:
                tb = mi[b, MI_JTYPE]
                axb = mf[b, MF_AXIS : MF_AXIS + 3]
                for k in range(joint_nv(tb)):
                    joint_column(tb, axb, mf[b, MF_PITCH], q, mi[b, MI_IQ], k, s)
                    Y[mi[b, MI_IV] + k, col] += mf[b, MF_SCALE] * power6(s, w)
                pb = mi[b, MI_PARENT]
                if pb > 0:
                    ad6(xl[b], w, w2)
                    for r in range(6):
                        w[r] = w2[r]
                b = pb
    return OK


@pjit
def regressor_batch(mi, mf, g, Q, V, A, Y, status):
    for n in nb.prange(Q.shape[0]):
        status[n] = regressor_kernel(mi, mf, g, Q[n], V[n], A[n], Y[n])


def inertial_parameters(model: Model) -> np.ndarray:
    """The (nbodies, 10) inertial parameters ``π`` (order `INERTIAL_PARAMETERS`), inertia
    about the body origin, so that ``rnea = joint_torque_regressor(...) @ π.ravel()``."""
    m = np.asarray(model.mass[1:])
    c = np.asarray(model.com[1:])
    Ic = np.asarray(model.inertia[1:])
    h = m[:, None] * c
    Io = Ic + m[:, None, None] * ((c * c).sum(1)[:, None, None] * np.eye(3) - c[:, :, None] * c[:, None, :])
    return np.column_stack([m, h, Io[:, 0, 0], Io[:, 0, 1], Io[:, 1, 1], Io[:, 0, 2], Io[:, 1, 2], Io[:, 2, 2]])


def joint_torque_regressor(model: Model, q, v, a) -> np.ndarray:
    """``Y(q, v, a)`` (..., nv, 10·nbodies): ``τ = Y π`` with ``π = inertial_parameters(model).ravel()``.

    Column ``10 (i−1) + e`` is ``∂τ/∂π_{i,e}``: the derivative of inverse dynamics with respect to
    the inertial parameters of body ``i`` (the dynamics are linear in them).  The rotors' inertia
    (`Model.armature`) is not a body parameter: on a model with armature,
    ``rnea(model, q, v, a) = Y π + armature ⊙ a`` (as Pinocchio's regressor).
    """
    Q, bq = as_vector_batch(q, model.nq, "q", "the configuration, model.nq entries")
    V, bv = as_vector_batch(v, model.nv, "v", "the velocity, model.nv entries")
    A, ba = as_vector_batch(a, model.nv, "a", "the acceleration, model.nv entries")
    (Q, V, A), batch = broadcast_batch([Q, V, A], [bq, bv, ba])
    N = Q.shape[0]
    Y = np.zeros((N, model.nv, 10 * model.nbodies))
    status = np.zeros(N, dtype=np.int64)
    for_batch(regressor_batch, Q.shape[0], model.mi.shape[0])(model.mi, model.mf, np.ascontiguousarray(model.gravity), Q, V, A, Y, status)
    st, row = first_bad(status)
    if st:
        raise_status(model, st, row if N > 1 else None)
    return Y.reshape(batch + Y.shape[1:])




__all__ = ["joint_torque_regressor", "inertial_parameters", "INERTIAL_PARAMETERS"]
