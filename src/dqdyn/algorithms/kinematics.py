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

import numba as nb
import numpy as np

from .._jit import kernel
from ..algebra._core import ad6, ad6_inv, cross6, dq_mul, jit, pose_translation
from ..errors import ShapeError, UnknownNameError
from ..multibody.joints import (
    joint_column,
    joint_column_dot,
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
    MI_PARENT,
    Model,
)
from .batching import for_batch
from .boundary import (
    BAD_SHAPE,
    BAD_V_FINITE,
    ND,
    OK,
    as_vector,
    broadcast_batch,
    check_finite,
    check_q,
    raise_status,
)
from .configuration import (  # noqa: F401  (re-exported: every kinematic function from here)
    _check,
    _q_in,
    _v_in,
    difference,
    integrate,
    neutral,
    normalize_configuration,
    random_configuration,
    tangent_bracket,
)
from .gate import (
    GATE,
    T_M,
    T_MF,
    T_MI,
    T_V,
    T_VRO,
    armed_call,
    flat_workspace,
    gate_address,
    gate_matrix,
    gate_tables,
    gate_vector,
)

njit = kernel()
pjit = kernel(parallel=True)

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
def path_poses(mi, mf, q, body, X, at_root):
    """``X[j] = x_j^0`` for the bodies ``j`` on the path world → ``body`` only (the rest of ``X``
    is left as it was), so a frame's kinematics costs its depth, not the tree's size.  With
    ``at_root`` the fixed frame is put at the root body's origin (world axes): what does not
    depend on the world origin (body and world-aligned Jacobians) then keeps full precision
    however far the robot is from it."""
    X[0, :] = 0.0
    X[0, 0] = 1.0
    path = np.empty(mi.shape[0], np.int64)
    depth = 0
    j = body
    while j > 0:
        path[depth] = j
        depth += 1
        j = mi[j, MI_PARENT]
    xj = np.empty(8)
    xl = np.empty(8)
    for d in range(depth - 1, -1, -1):  # root first
        i = path[d]
        joint_transform(mi[i, MI_JTYPE], mf[i, MF_AXIS : MF_AXIS + 3], mf[i, MF_PITCH], q,
                        mi[i, MI_IQ], mf[i, MF_SCALE], mf[i, MF_OFFSET], xj)
        dq_mul(mf[i, MF_PLACEMENT : MF_PLACEMENT + 8], xj, xl)  # x_i^λ (seed 003 eq. 3.19)
        dq_mul(X[mi[i, MI_PARENT]], xl, X[i])  # x_i^0 = x_λ^0 x_i^λ
        if at_root and d == depth - 1:
            X[i, 4] = X[i, 5] = X[i, 6] = X[i, 7] = 0.0


@njit
def jacobian_kernel(mi, mf, q, body, placement, frame, X, J):
    """Twist Jacobian (6 × nv) of the frame ``(body, placement)``; ``J`` must be zeroed.  Only
    the joints that support the frame are visited (:func:`path_poses`)."""
    st = check_q(mi, q)
    if st != OK:
        return st
    path_poses(mi, mf, q, body, X, frame != 1)  # (the spatial frame needs the world origin)
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


# single-state entries (one signature each, armed on first use: gate.armed_call) ------------
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


_FK = _FRAME_POSE = _JACOBIAN = _JOINT_JACOBIANS = None
FK_SIG = (T_MI, T_MF, T_V, T_M)
JOINT_JACOBIANS_SIG = FK_SIG


# gate kernels (see gate.gate_address): raw buffers → the entries above
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


# =============================================================================== public API
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
    for_batch(fk_batch, Q.shape[0], model.mi.shape[0])(model.mi, model.mf, Q, X, status)
    _check(model, status)
    return X.reshape(batch + X.shape[1:])


def frame_pose(model: Model, q, name) -> np.ndarray:
    """Pose ``x_f^0`` of a named frame (or body index) in the world frame F_0.

    Parameters
    ----------
    model : Model
    q : array_like, shape (..., nq)
        Configuration (rad, m; unit quaternion / dual quaternion blocks, see Conventions).
    name : str or int
        A frame name (``model.frame_names``: every URDF link is one) or a body index
        (0 is the world).

    Returns
    -------
    x : ndarray, shape (..., 8)
        Unit dual quaternion ``x = r + ε ½ p r`` as vec8 ``[P(x), D(x)]`` (scalar first): the
        frame's orientation ``r`` and position ``p`` (m) in F_0.
        :func:`dqdyn.algebra.rotations.matrix_from_pose` gives the 4 × 4 matrix.

    Raises
    ------
    UnknownNameError
        No frame or body called ``name``.
    ShapeError, NonFiniteError, NotUnitError
        Bad ``q`` (wrong shape, NaN / inf, a non-unit quaternion).
    """
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
        for_batch(twists_batch, Q.shape[0], model.mi.shape[0])(model.mi, model.mf, Q, V, X, T, status)
    _check(model, status)
    if code != 0:
        express_twists(X, T, code)
    return T.reshape(batch + (nb1, 6))


def twist_jacobian(model: Model, q, name, frame: str = "body") -> np.ndarray:
    """Twist Jacobian of a frame: ``ξ_f = J(q) v``.

    Parameters
    ----------
    model : Model
    q : array_like, shape (..., nq)
        Configuration (rad, m; unit quaternion / dual quaternion blocks, see Conventions).
    name : str or int
        A frame name (``model.frame_names``) or a body index.
    frame : {"body", "spatial", "world_aligned"}
        Where the twist is expressed: ``"body"`` — in the frame itself (Pinocchio ``LOCAL``);
        ``"spatial"`` — in F_0 at F_0's origin (``WORLD``); ``"world_aligned"`` — at the frame's
        origin with F_0's axes (``LOCAL_WORLD_ALIGNED``).

    Returns
    -------
    J : ndarray, shape (..., 6, nv)
        Rows ``[ω, v]``: angular velocity (rad/s) over linear velocity (m/s) per unit of each
        velocity coordinate (rad/s or m/s).  Mimic joints add into their master's column.

    Raises
    ------
    UnknownNameError
        No frame or body called ``name``.
    ShapeError
        ``frame`` is not one of the three above, or ``q`` has the wrong shape.
    NonFiniteError, NotUnitError
        ``q`` contains NaN / inf, or a non-unit (dual) quaternion.
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
    for_batch(jacobian_batch, Q.shape[0], model.mi.shape[0])(model.mi, model.mf, Q, body, pl, code, X, J, status)
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
        for_batch(joint_jacobians_batch, Q.shape[0], model.mi.shape[0])(model.mi, model.mf, Q, X, J, status)
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
        for_batch(jacobian_dot_batch, Q.shape[0], model.mi.shape[0])(model.mi, model.mf, Q, V, body, pl, code, X, T, J, Jd, status)
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


def pose_jacobian_derivative(model: Model, q, v, name) -> np.ndarray:
    """Time derivative of the pose Jacobian (..., 8, nv) along ``v``: ``vec8(ẍ) = J_x v̇ + J̇_x v``
    (DQ Robotics' ``pose_jacobian_derivative(q, q_dot)`` where v = q̇).

    Differentiating the columns ``½ vec8(S_k x)`` of :func:`pose_jacobian` (``S_k`` the spatial
    twist column as a pure dual quaternion, seed 000 eq. 4): ``½ vec8(Ṡ_k x + S_k ẋ)`` with
    ``ẋ = ½ ξ^0 x``, ``ξ^0 = J_s v`` and ``Ṡ`` from :func:`jacobian_time_derivative`
    (``"spatial"``).
    """
    from ..algebra.rotations import quat_multiply

    Js, Jsd = jacobian_time_derivative(model, q, v, name, frame="spatial")
    x = frame_pose(model, q, name)
    xi = np.einsum("...ij,...j->...i", Js, np.asarray(v, dtype=float))

    def pure_times(c, y):  # c (..., 6) pure DQ [ω, v], y (..., 8) → vec8(c y)
        z = np.zeros(c.shape[:-1] + (1,))
        a = np.concatenate([z, c[..., :3]], axis=-1)
        b = np.concatenate([z, c[..., 3:]], axis=-1)
        return np.concatenate([quat_multiply(a, y[..., :4]),
                               quat_multiply(a, y[..., 4:]) + quat_multiply(b, y[..., :4])], axis=-1)

    xd = 0.5 * pure_times(xi, x)
    cols, colsd = np.swapaxes(Js, -1, -2), np.swapaxes(Jsd, -1, -2)  # (..., nv, 6)
    out = 0.5 * (pure_times(colsd, x[..., None, :]) + pure_times(cols, xd[..., None, :]))
    return np.swapaxes(out, -1, -2)


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
    "FRAMES",
]
