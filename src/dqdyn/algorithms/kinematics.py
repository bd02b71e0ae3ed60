"""Forward and differential kinematics, compiled (numba) over the Model's flat tables.

Poses are unit dual quaternions ``x_i^0`` (pose of body ``i`` in the world frame F_0); the
recursion is the product of seed 003 eq. (3.19) along the tree,

    x_i^0 = x_λ(i)^0 · x_{J_i}^{λ(i)} · x_J(q_i).

Twists follow seed 000 eqs. (16)–(19): the body twist of body ``i`` in its own frame is the
parent's twist moved by the adjoint plus the joint twist,

    ξ_{0,i}^i = Ad(x_λ^i) ξ_{0,λ}^λ + S_i(q) v_i,

and the spatial twist (world frame, origin point) is ``ξ_{0,i}^0 = Ad(x_i^0) ξ_{0,i}^i``.

Jacobians have an explicit ``frame`` argument:

* ``"body"`` — the twist of the frame, expressed in the frame (Pinocchio's LOCAL);
* ``"spatial"`` — expressed in F_0 at F_0's origin (Pinocchio's WORLD);
* ``"world_aligned"`` — at the frame's origin, with F_0's axes (Pinocchio's LOCAL_WORLD_ALIGNED).

Rows are ``[ω, v]`` (vec6 of the twist); columns follow ``v``.  The pose Jacobian (8 × nv, DQ
Robotics' convention) satisfies ``vec8(ẋ) = J_x v``.

Every public function accepts leading batch axes on ``q`` (and ``v``) and runs a batch inside
one compiled call (``prange`` over the batch).
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np

from ..algebra._core import ad6, ad6_inv, cross6, dq_mul, jit, pose_translation
from .._checks import real_scalar
from ..errors import InfeasibleError, NonFiniteError, ShapeError, UnknownNameError
from ..multibody.joints import (
    FREE,
    SPHERICAL,
    joint_column,
    joint_column_dot,
    joint_difference,
    joint_integrate,
    joint_nv,
    joint_transform,
    joint_velocity,
)
from ..multibody.model import (
    MF_AXIS,
    MF_OFFSET,
    MF_PITCH,
    MF_PLACEMENT,
    MF_SCALE,
    MI_IQ,
    MI_IV,
    MI_JTYPE,
    MI_NQ,
    MI_PARENT,
    Model,
)
from ._common import (
    GATE,
    BAD_SHAPE,
    BAD_V_FINITE,
    ND,
    OK,
    T_M,
    T_MF,
    T_MI,
    T_V,
    T_VRO,
    armed_call,
    as_vector,
    as_vector_batch,
    broadcast_batch,
    check_finite,
    check_q,
    first_bad,
    flat_workspace,
    gate_address,
    gate_matrix,
    gate_tables,
    gate_vector,
    raise_status,
)

njit = nb.njit(cache=True)
pjit = nb.njit(cache=True, parallel=True)

FRAMES = {"body": 0, "spatial": 1, "world_aligned": 2}


# =============================================================================== kernels
@njit
def fk_kernel(mi, mf, q, X):
    """``X[i] = x_i^0`` for every body (``X[0]`` = identity).  Returns a status code."""
    st = check_q(mi, q)
    if st != OK:
        return st
    xj = np.empty(8)
    xl = np.empty(8)
    for k in range(8):
        X[0, k] = 0.0
    X[0, 0] = 1.0
    for i in range(1, mi.shape[0]):
        # x_J(q_i): the joint's own motion
        joint_transform(mi[i, MI_JTYPE], mf[i, MF_AXIS : MF_AXIS + 3], mf[i, MF_PITCH], q,
                        mi[i, MI_IQ], mf[i, MF_SCALE], mf[i, MF_OFFSET], xj)
        # x_i^λ = x_J^λ x_J(q)   ;   x_i^0 = x_λ^0 x_i^λ     (seed 003 eq. 3.19)
        dq_mul(mf[i, MF_PLACEMENT : MF_PLACEMENT + 8], xj, xl)
        dq_mul(X[mi[i, MI_PARENT]], xl, X[i])
    return OK


@njit
def twists_kernel(mi, mf, q, v, X, T):
    """Poses ``X`` and body twists ``T[i] = ξ_{0,i}^i`` (vec6) of every body (seed 000 eq. 19)."""
    st = fk_kernel(mi, mf, q, X)
    if st != OK:
        return st
    st = check_finite(v, BAD_V_FINITE)
    if st != OK:
        return st
    xj = np.empty(8)
    xl = np.empty(8)
    sv = np.empty(6)
    for k in range(6):
        T[0, k] = 0.0
    for i in range(1, mi.shape[0]):
        jt = mi[i, MI_JTYPE]
        joint_transform(jt, mf[i, MF_AXIS : MF_AXIS + 3], mf[i, MF_PITCH], q, mi[i, MI_IQ],
                        mf[i, MF_SCALE], mf[i, MF_OFFSET], xj)
        dq_mul(mf[i, MF_PLACEMENT : MF_PLACEMENT + 8], xj, xl)
        # ξ_{0,i}^i = Ad(x_i^λ*) ξ_{0,λ}^λ + S_i v_i
        ad6_inv(xl, T[mi[i, MI_PARENT]], T[i])
        joint_velocity(jt, mf[i, MF_AXIS : MF_AXIS + 3], mf[i, MF_PITCH], q, mi[i, MI_IQ], v,
                       mi[i, MI_IV], mf[i, MF_SCALE], sv)
        for k in range(6):
            T[i, k] += sv[k]
    return OK


@njit
def _frame_point(X, body, placement, xf, pf):
    """Frame pose ``x_f^0 = x_b^0 · placement`` and its origin ``p_f``."""
    dq_mul(X[body], placement, xf)
    pose_translation(xf, pf)


@njit
def _express(col, frame, xf, pf, out):
    """Express a spatial twist ``col`` (F_0, origin) in the requested Jacobian frame."""
    if frame == 1:  # spatial
        for k in range(6):
            out[k] = col[k]
    elif frame == 0:  # body: Ad(x_f^0*) col
        ad6_inv(xf, col, out)
    else:  # world aligned: v + ω × p_f
        out[0], out[1], out[2] = col[0], col[1], col[2]
        out[3] = col[3] + (col[1] * pf[2] - col[2] * pf[1])
        out[4] = col[4] + (col[2] * pf[0] - col[0] * pf[2])
        out[5] = col[5] + (col[0] * pf[1] - col[1] * pf[0])


@njit
def jacobian_kernel(mi, mf, q, body, placement, frame, X, J):
    """Twist Jacobian (6 × nv) of the frame ``(body, placement)``; ``J`` must be zeroed."""
    st = fk_kernel(mi, mf, q, X)
    if st != OK:
        return st
    xf = np.empty(8)
    pf = np.empty(3)
    _frame_point(X, body, placement, xf, pf)
    s = np.empty(6)
    c = np.empty(6)
    e = np.empty(6)
    j = body
    while j > 0:
        jt = mi[j, MI_JTYPE]
        scale = mf[j, MF_SCALE]
        for k in range(joint_nv(jt)):
            joint_column(jt, mf[j, MF_AXIS : MF_AXIS + 3], mf[j, MF_PITCH], q, mi[j, MI_IQ], k, s)
            ad6(X[j], s, c)  # spatial column Ad(x_j^0) S_k
            _express(c, frame, xf, pf, e)
            col = mi[j, MI_IV] + k
            for r in range(6):
                J[r, col] += scale * e[r]
        j = mi[j, MI_PARENT]
    return OK


@njit
def joint_jacobians_kernel(mi, mf, q, X, J):
    """Spatial columns ``Ad(x_j^0) S_j`` of every joint (Pinocchio's ``data.J``); J zeroed."""
    st = fk_kernel(mi, mf, q, X)
    if st != OK:
        return st
    s = np.empty(6)
    c = np.empty(6)
    for j in range(1, mi.shape[0]):
        jt = mi[j, MI_JTYPE]
        scale = mf[j, MF_SCALE]
        for k in range(joint_nv(jt)):
            joint_column(jt, mf[j, MF_AXIS : MF_AXIS + 3], mf[j, MF_PITCH], q, mi[j, MI_IQ], k, s)
            ad6(X[j], s, c)
            col = mi[j, MI_IV] + k
            for r in range(6):
                J[r, col] += scale * c[r]
    return OK


@njit
def jacobian_dot_kernel(mi, mf, q, v, body, placement, frame, X, T, J, Jd):
    """Jacobian ``J`` and its time derivative ``Jd`` of a frame (both zeroed on entry).

    Spatial column derivative by Lemma 2.1 of seed 000 (eq. 10):
    ``d/dt Ad(x_j^0) S = ξ_{0,j}^0 × Ad(x_j^0) S + Ad(x_j^0) Ṡ``.
    """
    st = twists_kernel(mi, mf, q, v, X, T)
    if st != OK:
        return st
    xf = np.empty(8)
    pf = np.empty(3)
    _frame_point(X, body, placement, xf, pf)
    # spatial twist of the frame's body, and the frame origin velocity
    wf = np.empty(6)
    ad6(X[body], T[body], wf)
    vpf = np.empty(3)  # ṗ_f = v_O + ω × p_f
    vpf[0] = wf[3] + (wf[1] * pf[2] - wf[2] * pf[1])
    vpf[1] = wf[4] + (wf[2] * pf[0] - wf[0] * pf[2])
    vpf[2] = wf[5] + (wf[0] * pf[1] - wf[1] * pf[0])
    s = np.empty(6)
    sd = np.empty(6)
    c = np.empty(6)
    cd = np.empty(6)
    tj = np.empty(6)
    tmp = np.empty(6)
    e = np.empty(6)
    ed = np.empty(6)
    j = body
    while j > 0:
        jt = mi[j, MI_JTYPE]
        scale = mf[j, MF_SCALE]
        ad6(X[j], T[j], tj)  # spatial twist of body j
        for k in range(joint_nv(jt)):
            joint_column(jt, mf[j, MF_AXIS : MF_AXIS + 3], mf[j, MF_PITCH], q, mi[j, MI_IQ], k, s)
            joint_column_dot(jt, q, mi[j, MI_IQ], v, mi[j, MI_IV], scale, k, sd)
            ad6(X[j], s, c)
            ad6(X[j], sd, cd)
            cross6(tj, c, tmp)
            for r in range(6):
                cd[r] += tmp[r]
            if frame == 1:
                for r in range(6):
                    e[r] = c[r]
                    ed[r] = cd[r]
            elif frame == 0:
                # J_b = Ad(x_f*) J_s  ->  J̇_b = Ad(x_f*) (J̇_s − ξ_f^0 × J_s)
                ad6_inv(xf, c, e)
                cross6(wf, c, tmp)
                for r in range(6):
                    tmp[r] = cd[r] - tmp[r]
                ad6_inv(xf, tmp, ed)
            else:
                _express(c, 2, xf, pf, e)
                _express(cd, 2, xf, pf, ed)
                # + ω_col × ṗ_f
                ed[3] += c[1] * vpf[2] - c[2] * vpf[1]
                ed[4] += c[2] * vpf[0] - c[0] * vpf[2]
                ed[5] += c[0] * vpf[1] - c[1] * vpf[0]
            col = mi[j, MI_IV] + k
            for r in range(6):
                J[r, col] += scale * e[r]
                Jd[r, col] += scale * ed[r]
        j = mi[j, MI_PARENT]
    return OK


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
            # seed 001 eq. (33), corrected form E4: Q/|Q| + ε(B/|Q| − (B·Q) Q/|Q|³)
            bq = q[s] * q[s + 4] + q[s + 1] * q[s + 5] + q[s + 2] * q[s + 6] + q[s + 3] * q[s + 7]
            for k in range(4):
                q[s + 4 + k] = q[s + 4 + k] / n - bq * q[s + k] / (n * n * n)
        for k in range(4):
            q[s + k] /= n


@njit
def express_twists(X, T, frame):
    """In place: body twists ``T`` (N, nb, 6) -> spatial (frame 1) or world-aligned (frame 2)."""
    c = np.empty(6)
    p = np.empty(3)
    for n in range(T.shape[0]):
        for i in range(T.shape[1]):
            ad6(X[n, i], T[n, i], c)
            if frame == 2:
                pose_translation(X[n, i], p)
                c[3] += c[1] * p[2] - c[2] * p[1]
                c[4] += c[2] * p[0] - c[0] * p[2]
                c[5] += c[0] * p[1] - c[1] * p[0]
            for k in range(6):
                T[n, i, k] = c[k]


# single-state entries (one signature each, armed on first use: _common.armed_call) ------------
@njit
def fk_entry(mi, mf, q, X):
    if q.shape[0] != mi[0, MI_IQ] or X.shape[0] != mi.shape[0] or X.shape[1] != 8:
        return BAD_SHAPE
    return fk_kernel(mi, mf, q, X)


@njit
def joint_jacobians_entry(mi, mf, q, J):
    if q.shape[0] != mi[0, MI_IQ] or J.shape[0] != 6 or J.shape[1] != mi[0, MI_IV]:
        return BAD_SHAPE
    for r in range(6):
        for c in range(J.shape[1]):
            J[r, c] = 0.0
    return joint_jacobians_kernel(mi, mf, q, np.empty((mi.shape[0], 8)), J)


@jit
def frame_pose_checked(mi, mf, q, body, placement, out, ws):
    """``out = x_b^0 · placement``: poses along the path root → ``body`` only; ``ws`` (≥ 16)."""
    if (q.shape[0] != mi[0, MI_IQ] or out.shape[0] != 8 or placement.shape[0] != 8
            or not 0 <= body < mi.shape[0] or ws.shape[0] < 24):
        return BAD_SHAPE
    st = check_q(mi, q)
    if st != OK:
        return st
    xj = ws[0:8]
    xl = ws[8:16]
    tmp = ws[16:24]
    for k in range(8):
        out[k] = placement[k]
    # x_b^0 · placement = x_{j1}^{λ} ⋯ x_b^{λ(b)} · placement, multiplied from the body down
    j = body
    while j > 0:
        joint_transform(mi[j, MI_JTYPE], mf[j, MF_AXIS : MF_AXIS + 3], mf[j, MF_PITCH], q,
                        mi[j, MI_IQ], mf[j, MF_SCALE], mf[j, MF_OFFSET], xj)
        dq_mul(mf[j, MF_PLACEMENT : MF_PLACEMENT + 8], xj, xl)
        dq_mul(xl, out, tmp)
        for k in range(8):
            out[k] = tmp[k]
        j = mi[j, MI_PARENT]
    return OK


@njit
def frame_pose_entry(mi, mf, q, body, placement, out):
    return frame_pose_checked(mi, mf, q, body, placement, out, np.empty(24))


@jit
def jacobian_checked(mi, mf, q, body, placement, frame, J, ws):
    """Twist Jacobian of a frame (see :func:`jacobian_kernel`) on the flat scratch ``ws``."""
    nv = mi[0, MI_IV]
    nb1 = mi.shape[0]
    if (q.shape[0] != mi[0, MI_IQ] or J.shape[0] != 6 or J.shape[1] != nv
            or placement.shape[0] != 8 or not 0 <= body < nb1 or not 0 <= frame <= 2
            or ws.shape[0] < nb1 * 8):
        return BAD_SHAPE
    for r in range(6):
        for c in range(nv):
            J[r, c] = 0.0
    return jacobian_kernel(mi, mf, q, body, placement, frame, flat_workspace(ws, nb1, 8), J)


@njit
def jacobian_entry(mi, mf, q, body, placement, frame, J):
    return jacobian_checked(mi, mf, q, body, placement, frame, J, np.empty(mi.shape[0] * 8))


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


_FK = _FRAME_POSE = _JACOBIAN = _INTEGRATE = _DIFFERENCE = _JOINT_JACOBIANS = None
FK_SIG = (T_MI, T_MF, T_V, T_M)
JOINT_JACOBIANS_SIG = FK_SIG


# gate kernels (see _common.gate_address): raw buffers → the entries above
def _c_fk(mip, mfp, nb1, bufs, lens):
    mi, mf = gate_tables(mip, mfp, nb1)
    return fk_entry(mi, mf, gate_vector(bufs, lens, 0), gate_matrix(bufs, lens, 1, nb1))


def _c_joint_jacobians(mip, mfp, nb1, bufs, lens):
    mi, mf = gate_tables(mip, mfp, nb1)
    return joint_jacobians_entry(mi, mf, gate_vector(bufs, lens, 0), gate_matrix(bufs, lens, 1, 6))


def _c_frame_pose(mip, mfp, nb1, bufs, lens):
    mi, mf = gate_tables(mip, mfp, nb1)
    return frame_pose_checked(mi, mf, gate_vector(bufs, lens, 0), lens[2],
                              nb.carray(bufs[1], (min(lens[1], 8),)), gate_vector(bufs, lens, 4),
                              gate_vector(bufs, lens, 3))


def _c_jacobian(mip, mfp, nb1, bufs, lens):
    mi, mf = gate_tables(mip, mfp, nb1)
    return jacobian_checked(mi, mf, gate_vector(bufs, lens, 0), lens[2],
                            nb.carray(bufs[1], (min(lens[1], 8),)), lens[3],
                            gate_matrix(bufs, lens, 5, 6), gate_vector(bufs, lens, 4))


_FK_C = _JOINT_JACOBIANS_C = _FRAME_POSE_C = _JACOBIAN_C = 0  # their addresses, set on first use
FRAME_POSE_SIG = (T_MI, T_MF, T_V, nb.types.int64, T_VRO, T_V)
JACOBIAN_SIG = (T_MI, T_MF, T_V, nb.types.int64, T_VRO, nb.types.int64, T_M)
INTEGRATE_SIG = (T_MI, T_V, T_V, nb.types.float64, T_V)
DIFFERENCE_SIG = (T_MI, T_V, T_V, T_V)
_IDENTITY8 = np.array([1.0, 0, 0, 0, 0, 0, 0, 0])
_IDENTITY8.flags.writeable = False


# batched drivers ---------------------------------------------------------------------------
@pjit
def fk_batch(mi, mf, Q, X, status):
    for n in nb.prange(Q.shape[0]):
        status[n] = fk_kernel(mi, mf, Q[n], X[n])


@pjit
def twists_batch(mi, mf, Q, V, X, T, status):
    for n in nb.prange(Q.shape[0]):
        status[n] = twists_kernel(mi, mf, Q[n], V[n], X[n], T[n])


@pjit
def jacobian_batch(mi, mf, Q, body, placement, frame, X, J, status):
    for n in nb.prange(Q.shape[0]):
        status[n] = jacobian_kernel(mi, mf, Q[n], body, placement, frame, X[n], J[n])


@pjit
def joint_jacobians_batch(mi, mf, Q, X, J, status):
    for n in nb.prange(Q.shape[0]):
        status[n] = joint_jacobians_kernel(mi, mf, Q[n], X[n], J[n])


@pjit
def jacobian_dot_batch(mi, mf, Q, V, body, placement, frame, X, T, J, Jd, status):
    for n in nb.prange(Q.shape[0]):
        status[n] = jacobian_dot_kernel(mi, mf, Q[n], V[n], body, placement, frame, X[n], T[n],
                                        J[n], Jd[n])


@pjit
def integrate_batch(mi, Q, V, dt, out, status):
    for n in nb.prange(Q.shape[0]):
        status[n] = integrate_kernel(mi, Q[n], V[n], dt, out[n])


@pjit
def difference_batch(mi, Q0, Q1, out, status):
    for n in nb.prange(Q0.shape[0]):
        status[n] = difference_kernel(mi, Q0[n], Q1[n], out[n])


# =============================================================================== public API
def _q_in(model: Model, q):
    return as_vector_batch(q, model.nq, "q", "the configuration, model.nq entries")


def _v_in(model: Model, v, name="v"):
    return as_vector_batch(v, model.nv, name, "a velocity, model.nv entries")


def _check(model, status):
    st, row = first_bad(status)
    if st:
        raise_status(model, st, row if status.shape[0] > 1 else None)


def _resolve_frame(model: Model, name) -> tuple[int, np.ndarray]:
    """(body, placement) of a frame given by name, or a body index; the placement is a
    read-only contiguous (8,) array (cached per model and name)."""
    cache = model._index.get("frame_cache")
    if cache is None:
        cache = model._index["frame_cache"] = {}
    else:
        try:
            hit = cache.get(name)
        except TypeError:  # unhashable (a list, an array): not a frame name
            raise UnknownNameError(
                f"frame must be a frame name (str) or a body index (int), got "
                f"{type(name).__name__} {name!r:.60}") from None
        if hit is not None and type(name) is str:
            return hit
    if isinstance(name, (int, np.integer)):
        b = int(name)
        if not 0 <= b <= model.nbodies:
            raise ShapeError(f"body index {b} out of range 0..{model.nbodies}")
        return b, _IDENTITY8
    k = model.frame_index(name)
    pl = np.array(model.frame_placement[k], dtype=np.float64)
    pl.flags.writeable = False
    cache[name] = hit = (int(model.frame_body[k]), pl)
    return hit


def _frame_code(frame: str) -> int:
    try:
        return FRAMES[frame]
    except KeyError:
        raise ShapeError(
            f"frame must be one of {list(FRAMES)} (body = LOCAL, spatial = WORLD, "
            f"world_aligned = LOCAL_WORLD_ALIGNED in Pinocchio's terms), got {frame!r}"
        ) from None


def forward_kinematics(model: Model, q) -> np.ndarray:
    """Poses ``x_i^0`` of every body as unit dual quaternions, shape (..., nbodies+1, 8).

    Index 0 is the world (identity).  ``q`` has shape (..., nq).
    """
    if GATE is not None:
        r = GATE(_FK_C or gate_address(globals(), "_FK_C", _c_fk), model.mi, model.mf,
                 model.mi.shape[0], 8, q)
        if type(r) is ND:
            return r
        if r is not None and r != BAD_SHAPE:
            raise_status(model, r)
    if type(q) is ND and q.ndim == 1:
        X = np.empty((model.mi.shape[0], 8))
        try:
            st = _FK(model.mi, model.mf, q, X)
        except TypeError:
            st = armed_call(globals(), "_FK", fk_entry, FK_SIG, (model.mi, model.mf, q, X))
        if st == OK:
            return X
        if st is not None and st != BAD_SHAPE:
            raise_status(model, st)
    if np.ndim(q) == 1:
        qq = as_vector(q, model.nq, "q", "the configuration, model.nq entries")
        X = np.empty((model.nbodies + 1, 8))
        st = fk_kernel(model.mi, model.mf, qq, X)
        if st:
            raise_status(model, st)
        return X
    Q, batch = _q_in(model, q)
    X = np.empty((Q.shape[0], model.nbodies + 1, 8))
    status = np.zeros(Q.shape[0], dtype=np.int64)
    fk_batch(model.mi, model.mf, Q, X, status)
    _check(model, status)
    return X.reshape(batch + X.shape[1:])


def frame_pose(model: Model, q, name) -> np.ndarray:
    """Pose ``x_f^0`` (..., 8) of a named frame (or body index) at configuration ``q``."""
    body, pl = _resolve_frame(model, name)
    if GATE is not None:
        r = GATE(_FRAME_POSE_C or gate_address(globals(), "_FRAME_POSE_C", _c_frame_pose),
                 model.mi, model.mf, 8, -1, q, pl, body, model._scratch)
        if type(r) is ND:
            return r
        if r is not None and r != BAD_SHAPE:
            raise_status(model, r)
    if type(q) is ND and q.ndim == 1:
        out = np.empty(8)
        try:
            st = _FRAME_POSE(model.mi, model.mf, q, body, pl, out)
        except TypeError:
            st = armed_call(globals(), "_FRAME_POSE", frame_pose_entry, FRAME_POSE_SIG,
                            (model.mi, model.mf, q, body, pl, out))
        if st == OK:
            return out
        if st is not None and st != BAD_SHAPE:
            raise_status(model, st)
    X = forward_kinematics(model, q)
    from ..algebra.rotations import quat_multiply

    xb = X[..., body, :]
    r = quat_multiply(xb[..., :4], pl[:4])
    d = quat_multiply(xb[..., :4], pl[4:]) + quat_multiply(xb[..., 4:], pl[:4])
    return np.concatenate([r, d], axis=-1)


def frame_poses(model: Model, q) -> np.ndarray:
    """Poses of every named frame, shape (..., nframes, 8) in ``model.frame_names`` order."""
    X = forward_kinematics(model, q)
    from ..algebra.rotations import quat_multiply

    xb = X[..., model.frame_body, :]
    pl = model.frame_placement
    r = quat_multiply(xb[..., :4], pl[:, :4])
    d = quat_multiply(xb[..., :4], pl[:, 4:]) + quat_multiply(xb[..., 4:], pl[:, :4])
    return np.concatenate([r, d], axis=-1)


def com_poses(model: Model, q) -> np.ndarray:
    """Poses ``x_{c_i}^0`` of the CoM frames (body axes, origin at the CoM), (..., nbodies+1, 8)."""
    from ..algebra.rotations import pose_from_rt, quat_multiply

    X = forward_kinematics(model, q)
    c = pose_from_rt(np.broadcast_to([1.0, 0, 0, 0], (model.nbodies + 1, 4)), model.com)
    r = quat_multiply(X[..., :4], c[:, :4])
    d = quat_multiply(X[..., :4], c[:, 4:]) + quat_multiply(X[..., 4:], c[:, :4])
    return np.concatenate([r, d], axis=-1)


def body_twists(model: Model, q, v, frame: str = "body") -> np.ndarray:
    """Twists ``ξ_{0,i}`` of every body, vec6 ``[ω, v]``, shape (..., nbodies+1, 6).

    ``frame="body"``: ``ξ_{0,i}^i`` (in the body frame, at its origin); ``"spatial"``:
    ``ξ_{0,i}^0`` (F_0, origin point); ``"world_aligned"``: at the body origin, F_0 axes.
    """
    code = _frame_code(frame)
    Q, bq = _q_in(model, q)
    V, bv = _v_in(model, v)
    (Q, V), batch = broadcast_batch([Q, V], [bq, bv])
    N, nb1 = Q.shape[0], model.nbodies + 1
    X = np.empty((N, nb1, 8))
    T = np.empty((N, nb1, 6))
    status = np.zeros(N, dtype=np.int64)
    if N == 1:
        status[0] = twists_kernel(model.mi, model.mf, Q[0], V[0], X[0], T[0])
    else:
        twists_batch(model.mi, model.mf, Q, V, X, T, status)
    _check(model, status)
    if code != 0:
        express_twists(X, T, code)
    return T.reshape(batch + (nb1, 6))


def twist_jacobian(model: Model, q, name, frame: str = "body") -> np.ndarray:
    """Twist Jacobian (..., 6, nv) of a frame (name or body index): ``ξ_f = J v``.

    Rows ``[ω, v]``.  ``frame``: ``"body"``, ``"spatial"`` or ``"world_aligned"`` (module doc).
    """
    code = FRAMES.get(frame) if type(frame) is str else None
    if code is None:
        code = _frame_code(frame)
    body, pl = _resolve_frame(model, name)
    if GATE is not None:
        r = GATE(_JACOBIAN_C or gate_address(globals(), "_JACOBIAN_C", _c_jacobian), model.mi,
                 model.mf, 6, model.nv, q, pl, body, code, model._scratch)
        if type(r) is ND:
            return r
        if r is not None and r != BAD_SHAPE:
            raise_status(model, r)
    if type(q) is ND and q.ndim == 1:
        J = np.empty((6, model.nv))
        try:
            st = _JACOBIAN(model.mi, model.mf, q, body, pl, code, J)
        except TypeError:
            st = armed_call(globals(), "_JACOBIAN", jacobian_entry, JACOBIAN_SIG,
                            (model.mi, model.mf, q, body, pl, code, J))
        if st == OK:
            return J
        if st is not None and st != BAD_SHAPE:
            raise_status(model, st)
    if np.ndim(q) == 1:
        qq = as_vector(q, model.nq, "q", "the configuration, model.nq entries")
        X = np.empty((model.nbodies + 1, 8))
        J = np.zeros((6, model.nv))
        st = jacobian_kernel(model.mi, model.mf, qq, body, pl, code, X, J)
        if st:
            raise_status(model, st)
        return J
    Q, batch = _q_in(model, q)
    N = Q.shape[0]
    X = np.empty((N, model.nbodies + 1, 8))
    J = np.zeros((N, 6, model.nv))
    status = np.zeros(N, dtype=np.int64)
    jacobian_batch(model.mi, model.mf, Q, body, pl, code, X, J, status)
    _check(model, status)
    return J.reshape(batch + (6, model.nv))


def joint_jacobians(model: Model, q) -> np.ndarray:
    """Spatial motion axes of every DoF, ``Ad(x_j^0) S_j`` (..., 6, nv) — Pinocchio's ``data.J``."""
    if GATE is not None:
        r = GATE(_JOINT_JACOBIANS_C or gate_address(globals(), "_JOINT_JACOBIANS_C", _c_joint_jacobians),
                 model.mi, model.mf, 6, model.nv, q)
        if type(r) is ND:
            return r
        if r is not None and r != BAD_SHAPE:
            raise_status(model, r)
    if type(q) is ND and q.ndim == 1:
        J = np.empty((6, model.nv))
        try:
            st = _JOINT_JACOBIANS(model.mi, model.mf, q, J)
        except TypeError:
            st = armed_call(globals(), "_JOINT_JACOBIANS", joint_jacobians_entry,
                            JOINT_JACOBIANS_SIG, (model.mi, model.mf, q, J))
        if st == OK:
            return J
        if st is not None and st != BAD_SHAPE:
            raise_status(model, st)
    Q, batch = _q_in(model, q)
    N = Q.shape[0]
    X = np.empty((N, model.nbodies + 1, 8))
    J = np.zeros((N, 6, model.nv))
    status = np.zeros(N, dtype=np.int64)
    if N == 1:
        st = joint_jacobians_kernel(model.mi, model.mf, Q[0], X[0], J[0])
        status[0] = st
    else:
        joint_jacobians_batch(model.mi, model.mf, Q, X, J, status)
    _check(model, status)
    return J.reshape(batch + (6, model.nv))


def jacobian_time_derivative(model: Model, q, v, name, frame: str = "body"):
    """``(J, J̇)`` of a frame, each (..., 6, nv), in the requested ``frame`` convention."""
    code = _frame_code(frame)
    body, pl = _resolve_frame(model, name)
    Q, bq = _q_in(model, q)
    V, bv = _v_in(model, v)
    (Q, V), batch = broadcast_batch([Q, V], [bq, bv])
    N, nb1 = Q.shape[0], model.nbodies + 1
    X = np.empty((N, nb1, 8))
    T = np.empty((N, nb1, 6))
    J = np.zeros((N, 6, model.nv))
    Jd = np.zeros((N, 6, model.nv))
    status = np.zeros(N, dtype=np.int64)
    if N == 1:
        status[0] = jacobian_dot_kernel(model.mi, model.mf, Q[0], V[0], body, pl, code, X[0], T[0],
                                        J[0], Jd[0])
    else:
        jacobian_dot_batch(model.mi, model.mf, Q, V, body, pl, code, X, T, J, Jd, status)
    _check(model, status)
    return J.reshape(batch + (6, model.nv)), Jd.reshape(batch + (6, model.nv))


def jacobian_dot_times_v(model: Model, q, v, name, frame: str = "body") -> np.ndarray:
    """``J̇ v`` (..., 6) of a frame (the velocity-product part of its acceleration)."""
    J, Jd = jacobian_time_derivative(model, q, v, name, frame)
    return np.einsum("...ij,...j->...i", Jd, np.asarray(v, dtype=float))


def pose_jacobian(model: Model, q, name) -> np.ndarray:
    """Pose Jacobian (..., 8, nv) of a frame: ``vec8(ẋ_f^0) = J_x v`` (DQ Robotics' convention).

    From ``ẋ = ½ ξ^0 x`` (seed 000 eq. 4): column k is ``½ vec8(J_s[:, k] x_f^0)`` with the
    spatial twist column as a pure dual quaternion.
    """
    from ..algebra.rotations import quat_multiply

    Js = twist_jacobian(model, q, name, frame="spatial")
    x = frame_pose(model, q, name)[..., None, :]
    cols = np.swapaxes(Js, -1, -2)  # (..., nv, 6)
    z = np.zeros(cols.shape[:-1] + (1,))
    a = np.concatenate([z, cols[..., :3]], axis=-1)
    b = np.concatenate([z, cols[..., 3:]], axis=-1)
    P = quat_multiply(a, x[..., :4])
    D = quat_multiply(a, x[..., 4:]) + quat_multiply(b, x[..., :4])
    return 0.5 * np.swapaxes(np.concatenate([P, D], axis=-1), -1, -2)


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
        integrate_batch(model.mi, Q, V, dt, out, status)
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
        difference_batch(model.mi, Q0, Q1, out, status)
    _check(model, status)
    return out.reshape(batch + (model.nv,))


def tangent_bracket(model: Model, a, b) -> np.ndarray:
    """Lie bracket ``[a, b]`` of two velocity-space (tangent) vectors, joint by joint (..., nv).

    Zero on vector-space joints; ``ω_a × ω_b`` on spherical joints; the twist cross product
    ``ξ_a × ξ_b`` (seed 000 eq. 8) on free joints.  Needed by Lie-group integrators (RKMK) to
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
    from ..algebra.rotations import pose_from_rt

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


__all__ = [
    "forward_kinematics",
    "frame_pose",
    "frame_poses",
    "com_poses",
    "body_twists",
    "twist_jacobian",
    "joint_jacobians",
    "jacobian_time_derivative",
    "jacobian_dot_times_v",
    "pose_jacobian",
    "integrate",
    "difference",
    "neutral",
    "tangent_bracket",
    "normalize_configuration",
    "random_configuration",
    "FRAMES",
]
