"""Frame Jacobians, compiled (numba) over the Model's flat tables: the twist Jacobian of a frame,
the spatial axes of every joint, their time derivatives and the pose Jacobian.

The column of joint ``j`` is its motion axis moved to the frame, ``Ad(x_j^f) S_j``
([Silva2022, eqs. (16)–(19)]), over the joints that support the frame only (one pass from the frame down to the
root, `jacobian_kernel`), so a frame's Jacobian costs its depth, not the tree's size.  Its derivative is
[Silva2022, Lemma 2.1, eq. (10)]: ``d/dt Ad(x_j^0) S = ξ_{0,j}^0 × Ad(x_j^0) S + Ad(x_j^0) Ṡ``, from the poses and twists of
the frame's supporting bodies only (`_path_twists`).

Every Jacobian has an explicit ``frame`` argument:

* ``"body"`` — the twist of the frame, expressed in the frame (Pinocchio's LOCAL);
* ``"spatial"`` — expressed in F_0 at F_0's origin (Pinocchio's WORLD);
* ``"world_aligned"`` — at the frame's origin, with F_0's axes (Pinocchio's LOCAL_WORLD_ALIGNED).

Rows are ``[ω, v]`` (vec6 of the twist); columns follow ``v``.  The pose Jacobian (8 × nv, DQ
Robotics' convention) satisfies ``vec8(ẋ) = J_x v`` [Silva2022, eq. (4)].  Forward kinematics,
poses and twists: `kinematics`.
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
    as_vector,
    broadcast_batch,
    check_finite,
    check_q,
    into_out,
    raise_status,
)
from dqdyn._engine.gate import (
    NV,
    SPLIT,
    T_M,
    T_MF,
    T_MI,
    T_V,
    armed_call,
    fast_front,
    flat_workspace,
    gate_entry,
    gate_matrix,
    gate_tables,
    gate_vector,
)
from dqdyn._engine.jit import kernel
from dqdyn._engine.views import unmanaged, view
from dqdyn.algebra._core import ad6, ad6_inv, ad6_inv_values, ad6_values, cross6, dq_mul_tuple, jit
from dqdyn.algebra.dualquat import from_vec6, mul
from dqdyn.kinematics.configuration import _check, _q_in, _v_in
from dqdyn.kinematics.forward import (
    FK_SIG,
    FRAMES,
    _frame_code,
    _frame_point,
    _resolve_frame,
    fk_kernel,
    frame_pose,
    local_pose,
    mul_local,
)
from dqdyn.multibody.joints import (
    PLANAR,
    REVOLUTE,
    joint_column,
    joint_column_dot,
    joint_nv,
    joint_velocity,
    joint_velocity_bias,
)
from dqdyn.multibody.model import (
    MF_AXIS,
    MF_PITCH,
    MF_SCALE,
    MI_IQ,
    MI_IV,
    MI_JTYPE,
    MI_PARENT,
    Model,
)

njit = kernel()
pjit = kernel(parallel=True)


# =============================================================================== kernels
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




@jit  # (IR-inlined)
def _turn_columns(T, J, sc):
    """``J ← Ad(T) J`` column by column (the body columns turned by ``x_f^0``, or by its
    rotation alone for world-aligned ones); ``sc`` (6) scratch."""
    for col in range(J.shape[1]):
        for r in range(6):
            sc[r] = J[r, col]
        ad6(T, sc, sc)
        for r in range(6):
            J[r, col] = sc[r]


@njit
def jacobian_kernel(mi, mf, q, body, placement, frame, X, J):
    """Twist Jacobian (6 × nv) of the frame ``(body, placement)``; ``J`` must be zeroed; ``X``
    (nb1 rows of 8): scratch.  A pass from the frame down to the root over the joints that
    support it, nothing else visited, no world poses: with ``T = x_f^j`` (the frame's pose in
    body ``j``, ``placement`` at the start) joint ``j``'s column in the frame's axes is
    ``Ad(T*) S_j`` [Silva2022, eqs. (16)–(19)], then ``T ← x_j^λ T`` [Silva2022thesis, eq. (3.19)].  At the root
    ``T = x_f^0``, which turns the body columns into world-aligned ``[R ω, R v]`` or spatial
    ``Ad(x_f^0)`` ones.  The body and world-aligned Jacobians never form a world position, so
    they keep full precision however far the robot is from the world origin.  The supporting
    bodies' ``x_j^λ`` are computed first, each into its row of ``X`` (their sines and cosines
    then do not wait on the chain of products, as in
    `fk_kernel`)."""
    st = check_q(mi, q)
    if st != OK:
        return st
    if body == 0:
        return OK
    j = body
    while j > 0:
        r0, r1, r2, r3, r4, r5, r6, r7 = local_pose(mi, mf, j, q)
        X[j, 0], X[j, 1], X[j, 2], X[j, 3], X[j, 4], X[j, 5], X[j, 6], X[j, 7] = r0, r1, r2, r3, r4, r5, r6, r7
        j = mi[j, MI_PARENT]
    sc = X[0]  # a column of a joint that is not revolute (row 0: the world, never on the path)
    t = (placement[0], placement[1], placement[2], placement[3],
         placement[4], placement[5], placement[6], placement[7])
    j = body
    while j > 0:
        jt = mi[j, MI_JTYPE]
        scale = mf[j, MF_SCALE]
        if jt == REVOLUTE:  # S = [axis; 0], in registers
            c = ad6_inv_values(t, (mf[j, MF_AXIS], mf[j, MF_AXIS + 1], mf[j, MF_AXIS + 2], 0.0, 0.0, 0.0))
            col = mi[j, MI_IV]
            for r in range(6):
                J[r, col] += scale * c[r]
        else:
            for k in range(joint_nv(jt)):
                joint_column(jt, mf[j, MF_AXIS : MF_AXIS + 3], mf[j, MF_PITCH], q, mi[j, MI_IQ], k, sc)
                ad6_inv(t, sc, sc)  # Ad(x_j^f) S_k: the column in the frame's axes
                col = mi[j, MI_IV] + k
                for r in range(6):
                    J[r, col] += scale * sc[r]
        t = dq_mul_tuple((X[j, 0], X[j, 1], X[j, 2], X[j, 3], X[j, 4], X[j, 5], X[j, 6], X[j, 7]), t)
        j = mi[j, MI_PARENT]
    if frame == 0:
        return OK
    T = X[1]
    for k in range(8):
        T[k] = t[k]
    if frame == 2:  # world-aligned: rotate only
        T[4] = T[5] = T[6] = T[7] = 0.0
    _turn_columns(T, J, sc)
    return OK


@njit
def jacobian_drift_kernel(mi, mf, q, v, body, placement, frame, X, J, jdv, xf):
    """The frame Jacobian ``J`` (6 × nv, zeroed by the caller; `jacobian_kernel`'s pass),
    its drift ``jdv = J̇ v`` (6) and the frame's world pose ``xf`` (8), without ``J̇`` or any
    world pose of the bodies between: what a constraint row ``J v̇ = −J̇ v`` needs.

    In the frame's axes the columns are ``e_j = Ad(x_j^f) S_j``; their rates are
    ``ė_j = −η_j × e_j + Ad(x_j^f) Ṡ_j`` with ``η_j`` the twist of the frame relative to body
    ``j`` (the joints between them, ``Σ_{i tip-side of j} e_i q̇_i``), which is [Silva2022, eq. (10)]
    (Lemma 2.1) moved to the frame's axes, so ``J̇_b v = Σ_j (e_j q̇_j) × η_j + Ad(x_j^f) Ṡ_j q̇_j``:
    one cross product per joint of the path, with ``η`` summed in the same tip-to-root pass.
    Then ``η`` at the root is the frame's body twist ``(ω, v)`` and, with ``R`` the rotation of
    ``x_f^0``: spatial ``J̇_s v = Ad(x_f^0) J̇_b v``, world-aligned
    ``J̇_wa v = R (J̇_b v + [0; ω × v])`` (the derivative of ``J_wa = diag(R, R) J_b``).
    The same ``J̇ v`` as `jacobian_dot_kernel`'s ``J̇`` times ``v`` (tests: against it and
    finite differences).  ``X`` (≥ 5 rows of 8): scratch."""
    st = check_q(mi, q)
    if st == OK:
        st = check_finite(v, BAD_V_FINITE)
    if st != OK:
        return st
    for r in range(6):
        jdv[r] = 0.0
    if body == 0:
        for k in range(8):
            xf[k] = placement[k]
        return OK
    sc = X[0]
    T = X[1]
    eta = X[2]
    u = X[3]
    tmp = X[4]
    for r in range(6):
        eta[r] = 0.0
    t = (placement[0], placement[1], placement[2], placement[3],
         placement[4], placement[5], placement[6], placement[7])
    j = body
    while j > 0:
        jt = mi[j, MI_JTYPE]
        scale = mf[j, MF_SCALE]
        iv = mi[j, MI_IV]
        if jt == REVOLUTE:  # S = [axis; 0], in registers
            c = ad6_inv_values(t, (mf[j, MF_AXIS], mf[j, MF_AXIS + 1], mf[j, MF_AXIS + 2], 0.0, 0.0, 0.0))
            w = scale * v[iv]
            for r in range(6):
                J[r, iv] += scale * c[r]
                u[r] = w * c[r]
        else:
            for k in range(8):
                T[k] = t[k]
            for r in range(6):
                u[r] = 0.0
            for k in range(joint_nv(jt)):
                joint_column(jt, mf[j, MF_AXIS : MF_AXIS + 3], mf[j, MF_PITCH], q, mi[j, MI_IQ], k, sc)
                ad6_inv(T, sc, sc)  # Ad(x_j^f) S_k: the column in the frame's axes
                w = scale * v[iv + k]
                for r in range(6):
                    J[r, iv + k] += scale * sc[r]
                    u[r] += w * sc[r]
            if jt == PLANAR:  # Ad(x_j^f) Ṡ q̇ (the only joint whose S moves)
                joint_velocity_bias(jt, q, mi[j, MI_IQ], v, iv, sc)
                ad6_inv(T, sc, tmp)
                for r in range(6):
                    jdv[r] += scale * tmp[r]
        cross6(u, eta, tmp)
        for r in range(6):
            jdv[r] += tmp[r]
            eta[r] += u[r]
        t = dq_mul_tuple(local_pose(mi, mf, j, q), t)
        j = mi[j, MI_PARENT]
    for k in range(8):
        xf[k] = t[k]
    if frame == 0:
        return OK
    for k in range(8):
        T[k] = t[k]
    if frame == 2:  # world-aligned: J̇_b v + [0; ω × v], rotated
        T[4] = T[5] = T[6] = T[7] = 0.0
        jdv[3] += eta[1] * eta[5] - eta[2] * eta[4]
        jdv[4] += eta[2] * eta[3] - eta[0] * eta[5]
        jdv[5] += eta[0] * eta[4] - eta[1] * eta[3]
    ad6(T, jdv, sc)
    for r in range(6):
        jdv[r] = sc[r]
    _turn_columns(T, J, sc)
    return OK


@njit
def joint_jacobians_kernel(mi, mf, q, X, J):
    """Spatial columns ``Ad(x_j^0) S_j`` of every joint (Pinocchio's ``data.J``); J zeroed.
    ``X`` (nb1 × 8): the poses, then row 0 (the world's) scratch for a column that is not a
    revolute joint's (a revolute column is computed in registers)."""
    st = fk_kernel(mi, mf, q, X)
    if st != OK:
        return st
    s = X[0, 0:6]
    for j in range(1, mi.shape[0]):
        jt = mi[j, MI_JTYPE]
        scale = mf[j, MF_SCALE]
        if jt == REVOLUTE:  # S = [axis; 0]
            c = ad6_values((X[j, 0], X[j, 1], X[j, 2], X[j, 3], X[j, 4], X[j, 5], X[j, 6], X[j, 7]),
                           (mf[j, MF_AXIS], mf[j, MF_AXIS + 1], mf[j, MF_AXIS + 2], 0.0, 0.0, 0.0))
            col = mi[j, MI_IV]
            for r in range(6):
                J[r, col] += scale * c[r]
            continue
        for k in range(joint_nv(jt)):
            joint_column(jt, mf[j, MF_AXIS : MF_AXIS + 3], mf[j, MF_PITCH], q, mi[j, MI_IQ], k, s)
            ad6(X[j], s, s)
            col = mi[j, MI_IV] + k
            for r in range(6):
                J[r, col] += scale * s[r]
    return OK


@njit
def _path_twists(mi, mf, q, v, body, X, T, scratch):
    """Poses ``X[i] = x_i^0`` and body twists ``T[i] = ξ_{0,i}^i`` [Silva2022, eq. (19)] of ``body``
    and its ancestors only — the rows `jacobian_dot_kernel` reads — so a frame's J̇ costs
    the frame's depth, not the tree (the rows of other bodies are left as they were).  The
    operations of `twists_kernel` on those bodies, bit for
    bit; the same checks of all of ``q`` and ``v``.  ``scratch``: 14 floats."""
    st = check_q(mi, q)
    if st != OK:
        return st
    for k in range(v.shape[0]):
        if not math.isfinite(v[k]):
            return BAD_V_FINITE
    for k in range(8):
        X[0, k] = 0.0
    X[0, 0] = 1.0
    for k in range(6):
        T[0, k] = 0.0
    depth = 0
    j = body
    while j > 0:
        depth += 1
        j = mi[j, MI_PARENT]
    path = np.empty(depth, np.int64)
    j = body
    for d in range(depth - 1, -1, -1):
        path[d] = j
        j = mi[j, MI_PARENT]
    xl = scratch[0:8]
    sv = scratch[8:14]
    for d in range(depth):
        i = path[d]
        p = mi[i, MI_PARENT]
        r0, r1, r2, r3, r4, r5, r6, r7 = local_pose(mi, mf, i, q)
        xl[0], xl[1], xl[2], xl[3], xl[4], xl[5], xl[6], xl[7] = r0, r1, r2, r3, r4, r5, r6, r7
        mul_local(X, p, (r0, r1, r2, r3, r4, r5, r6, r7), i)
        # ξ_{0,i}^i = Ad(x_i^λ*) ξ_{0,λ}^λ + S_i v_i
        ad6_inv(xl, T[p], T[i])
        jt = mi[i, MI_JTYPE]
        joint_velocity(jt, mf[i, MF_AXIS : MF_AXIS + 3], mf[i, MF_PITCH], q, mi[i, MI_IQ], v,
                       mi[i, MI_IV], mf[i, MF_SCALE], sv)
        for k in range(6):
            T[i, k] += sv[k]
    return OK


@njit
def jacobian_dot_kernel(mi, mf, q, v, body, placement, frame, X, T, J, Jd):
    """Jacobian ``J`` and its time derivative ``Jd`` of a frame (both zeroed on entry).

    Spatial column derivative by [Silva2022, Lemma 2.1, eq. (10)]:
    ``d/dt Ad(x_j^0) S = ξ_{0,j}^0 × Ad(x_j^0) S + Ad(x_j^0) Ṡ``.
    Poses and twists of the frame's body and its ancestors only (`_path_twists`).
    """
    return _jacobian_dot_on(mi, mf, q, v, body, placement, frame, X, T, J, Jd, np.empty(82))


@njit
def _jacobian_dot_on(mi, mf, q, v, body, placement, frame, X, T, J, Jd, w):
    """`jacobian_dot_kernel` on the scratch ``w`` (82 floats: one block instead of twelve
    small arrays), every array without its reference count (`unmanaged`;
    the caller holds them: the pass takes views of ``X``, ``T`` and ``w`` per body)."""
    mi, mf, q, v, placement, X, T, J, Jd, w = (
        unmanaged(mi), unmanaged(mf), unmanaged(q), unmanaged(v), unmanaged(placement),
        unmanaged(X), unmanaged(T), unmanaged(J), unmanaged(Jd), unmanaged(w))
    st = _path_twists(mi, mf, q, v, body, X, T, w[68:82])
    if st != OK:
        return st
    xf = w[0:8]
    pf = w[8:11]
    _frame_point(X, body, placement, xf, pf)
    # spatial twist of the frame's body, and the frame origin velocity
    wf = w[11:17]
    ad6(X[body], T[body], wf)
    vpf = w[17:20]  # ṗ_f = v_O + ω × p_f
    vpf[0] = wf[3] + (wf[1] * pf[2] - wf[2] * pf[1])
    vpf[1] = wf[4] + (wf[2] * pf[0] - wf[0] * pf[2])
    vpf[2] = wf[5] + (wf[0] * pf[1] - wf[1] * pf[0])
    s = w[20:26]
    sd = w[26:32]
    c = w[32:38]
    cd = w[38:44]
    tj = w[44:50]
    tmp = w[50:56]
    e = w[56:62]
    ed = w[62:68]
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




@jit
def joint_jacobians_checked(mi, mf, q, J, ws):
    """Every joint's spatial columns (`joint_jacobians_kernel`) on the flat scratch ``ws``."""
    nb1 = mi.shape[0]
    if (q.shape[0] != mi[0, MI_IQ] or J.shape[0] != 6 or J.shape[1] != mi[0, MI_IV]
            or ws.shape[0] < nb1 * 8):
        return BAD_SHAPE
    for r in range(6):
        for c in range(J.shape[1]):
            J[r, c] = 0.0
    return joint_jacobians_kernel(mi, mf, q, flat_workspace(ws, nb1, 8), J)


@njit
def joint_jacobians_entry(mi, mf, q, J):
    return joint_jacobians_checked(mi, mf, q, J, np.empty(mi.shape[0] * 8))




@jit
def jacobian_checked(mi, mf, q, body, placement, frame, J, ws):
    """Twist Jacobian of a frame (see `jacobian_kernel`) on the flat scratch ``ws``."""
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


@jit
def jacobian_dot_checked(mi, mf, q, v, body, placement, frame, out, ws):
    """``J`` then ``J̇`` of a frame (`jacobian_dot_kernel`) into ``out`` (12·nv entries: two
    6 × nv blocks), on the flat scratch ``ws`` (the call gate's: the model's workspace)."""
    nv = mi[0, MI_IV]
    nb1 = mi.shape[0]
    if (q.shape[0] != mi[0, MI_IQ] or v.shape[0] != nv or out.shape[0] != 12 * nv
            or placement.shape[0] != 8 or not 0 <= body < nb1 or not 0 <= frame <= 2
            or ws.shape[0] < nb1 * 14 + 82):
        return BAD_SHAPE
    for k in range(12 * nv):
        out[k] = 0.0
    return _jacobian_dot_on(mi, mf, q, v, body, placement, frame, view(ws, 0, (nb1, 8)),
                            view(ws, nb1 * 8, (nb1, 6)), view(out, 0, (6, nv)),
                            view(out, 6 * nv, (6, nv)), view(ws, nb1 * 14, (82,)))


@jit
def jacobian_drift_checked(mi, mf, q, v, body, placement, frame, jdv, ws):
    """``J̇ v`` of a frame (`jacobian_drift_kernel`) into ``jdv`` (6), on the flat scratch
    ``ws`` (the call gate's: the model's workspace; its J and pose there too)."""
    nv = mi[0, MI_IV]
    if (q.shape[0] != mi[0, MI_IQ] or v.shape[0] != nv or jdv.shape[0] != 6
            or placement.shape[0] != 8 or not 0 <= body < mi.shape[0] or not 0 <= frame <= 2
            or ws.shape[0] < 48 + 6 * nv):
        return BAD_SHAPE
    J = view(ws, 40, (6, nv))
    for r in range(6):
        for c in range(nv):
            J[r, c] = 0.0
    return jacobian_drift_kernel(mi, mf, q, v, body, placement, frame, view(ws, 0, (5, 8)), J, jdv,
                                 view(ws, 40 + 6 * nv, (8,)))


@njit
def jacobian_entry(mi, mf, q, body, placement, frame, J):
    return jacobian_checked(mi, mf, q, body, placement, frame, J, np.empty(mi.shape[0] * 8))




_JACOBIAN = _JOINT_JACOBIANS = None
JOINT_JACOBIANS_SIG = FK_SIG
JACOBIAN_SIG = (T_MI, T_MF, T_V, nb.types.int64, T_V, nb.types.int64, T_M)
_JOINT_JACOBIANS_C = _JACOBIAN_C = 0  # their addresses, set on first use


# gate kernels (see gate.gate_address): raw buffers → the entries above
def _c_joint_jacobians(mip, mfp, nb1, bufs, lens):
    mi, mf = gate_tables(mip, mfp, nb1)
    return joint_jacobians_checked(mi, mf, gate_vector(bufs, lens, 0), gate_matrix(bufs, lens, 2, 6),
                                   gate_vector(bufs, lens, 1))




def _c_jacobian(mip, mfp, nb1, bufs, lens):
    mi, mf = gate_tables(mip, mfp, nb1)
    return jacobian_checked(mi, mf, gate_vector(bufs, lens, 0), lens[2],
                            nb.carray(bufs[1], (min(lens[1], 8),)), lens[3],
                            gate_matrix(bufs, lens, 5, 6), gate_vector(bufs, lens, 4))


_JOINT_JACOBIANS_ENTRY = gate_entry(globals(), "_JOINT_JACOBIANS_C", _c_joint_jacobians, 1, 6, NV,
                                    scratch=True)
_JACOBIAN_ENTRY = gate_entry(globals(), "_JACOBIAN_C", _c_jacobian, 4, 6, NV, scratch=True,
                             ints=(2, 3))  # (q, placement, body, frame code)


def _c_jacobian_dot(mip, mfp, nb1, bufs, lens):
    mi, mf = gate_tables(mip, mfp, nb1)
    return jacobian_dot_checked(mi, mf, gate_vector(bufs, lens, 0), gate_vector(bufs, lens, 1),
                                lens[3], nb.carray(bufs[2], (min(lens[2], 8),)), lens[4],
                                gate_vector(bufs, lens, 6), gate_vector(bufs, lens, 5))


_JACOBIAN_DOT_C = 0  # its address, set on first use
# (q, v, placement, body, frame code) -> J over J̇, (12, nv)
_JACOBIAN_DOT_ENTRY = gate_entry(globals(), "_JACOBIAN_DOT_C", _c_jacobian_dot, 5, 12, NV,
                                 scratch=True, ints=(3, 4))
_JD_LAYOUTS = {}  # the two (6, nv) parts of the gate's result, for SPLIT, by nv


def _c_jacobian_drift(mip, mfp, nb1, bufs, lens):
    mi, mf = gate_tables(mip, mfp, nb1)
    return jacobian_drift_checked(mi, mf, gate_vector(bufs, lens, 0), gate_vector(bufs, lens, 1),
                                  lens[3], nb.carray(bufs[2], (min(lens[2], 8),)), lens[4],
                                  gate_vector(bufs, lens, 6), gate_vector(bufs, lens, 5))


_JACOBIAN_DRIFT_C = 0  # its address, set on first use
# (q, v, placement, body, frame code) -> J̇ v (6)
_JACOBIAN_DRIFT_ENTRY = gate_entry(globals(), "_JACOBIAN_DRIFT_C", _c_jacobian_drift, 5, 6, -1,
                                   scratch=True, ints=(3, 4))


# batched drivers ---------------------------------------------------------------------------
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
def jacobian_drift_batch(mi, mf, Q, V, body, placement, frame, X, J, JDV, XF, status):
    for n in nb.prange(Q.shape[0]):
        status[n] = jacobian_drift_kernel(mi, mf, Q[n], V[n], body, placement, frame, X[n], J[n],
                                          JDV[n], XF[n])




# =============================================================================== public API
@fast_front(_JACOBIAN_ENTRY, named=True, frames=FRAMES, default="body")
def twist_jacobian(model: Model, q, name, frame: str = "body", *, out=None) -> np.ndarray:
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
    out : ndarray, shape (..., 6, nv), optional
        Receives ``J`` and is returned (float64, C-contiguous, writable), as Pinocchio writes
        into its ``Data``: a single state then allocates nothing.

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
    try:  # a frame name seen before (_resolve_frame's cache, read without the call)
        body, pl = model._index["frame_cache"][name]
    except (AttributeError, KeyError, TypeError):
        body, pl = _resolve_frame(model, name)
    r = _JACOBIAN_ENTRY(model, q, pl, body, code) if out is None else \
        _JACOBIAN_ENTRY(model, q, pl, body, code, out)
    if type(r) is ND:
        return r
    if r is not None and r != BAD_SHAPE:
        raise_status(model, r)
    if out is not None:  # (the gate declined it: a batch, an overlap with q, or a bad out)
        return into_out(out, twist_jacobian(model, q, name, frame))
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


@fast_front(_JOINT_JACOBIANS_ENTRY, out=False)
def joint_jacobians(model: Model, q) -> np.ndarray:
    """Spatial motion axes of every DoF, ``Ad(x_j^0) S_j`` (..., 6, nv) — Pinocchio's ``data.J``."""
    r = _JOINT_JACOBIANS_ENTRY(model, q)
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
    # one state or a small batch of float64 rows: one call through the gate, the two parts split
    # in C; anything else (and a failing state, which the path below names) the batched kernel
    r = _JACOBIAN_DOT_ENTRY(model, q, v, pl, body, code)
    if type(r) is ND:
        if r.ndim == 3:  # a small batch (N, 12, nv): two C-contiguous (N, 6, nv), as the kernel's
            return np.ascontiguousarray(r[:, :6]), np.ascontiguousarray(r[:, 6:])
        nv = model.nv
        lay = _JD_LAYOUTS.get(nv)
        if lay is None:
            lay = _JD_LAYOUTS[nv] = ((6, nv), (6, nv))
        return SPLIT(r, lay, 2)
    if r is not None and r != BAD_SHAPE:
        raise_status(model, r)
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
    """``J̇ v`` (..., 6) of a frame (the velocity-product part of its acceleration), without
    forming ``J̇`` (`jacobian_drift_kernel`: one cross product per joint of the frame's path)."""
    code = _frame_code(frame)
    body, pl = _resolve_frame(model, name)
    r = _JACOBIAN_DRIFT_ENTRY(model, q, v, pl, body, code)  # (one state or a small batch)
    if type(r) is ND:
        return r
    if r is not None and r != BAD_SHAPE:
        raise_status(model, r)
    Q, bq = _q_in(model, q)
    V, bv = _v_in(model, v)
    (Q, V), batch = broadcast_batch([Q, V], [bq, bv])
    N = Q.shape[0]
    X = np.empty((N, 5, 8))
    J = np.zeros((N, 6, model.nv))
    JDV = np.empty((N, 6))
    XF = np.empty((N, 8))
    status = np.zeros(N, dtype=np.int64)
    if N == 1:
        status[0] = jacobian_drift_kernel(model.mi, model.mf, Q[0], V[0], body, pl, code, X[0], J[0],
                                          JDV[0], XF[0])
    else:
        for_batch(jacobian_drift_batch, N, model.mi.shape[0])(model.mi, model.mf, Q, V, body, pl, code, X,
                                                              J, JDV, XF, status)
    _check(model, status)
    return JDV.reshape(batch + (6,))


def pose_jacobian(model: Model, q, name) -> np.ndarray:
    """Pose Jacobian (..., 8, nv) of a frame: ``vec8(ẋ_f^0) = J_x v`` (DQ Robotics' convention).

    From ``ẋ = ½ ξ^0 x`` [Silva2022, eq. (4)]: column k is ``½ vec8(J_s[:, k] x_f^0)`` with the
    spatial twist column as a pure dual quaternion.
    """
    Js = twist_jacobian(model, q, name, frame="spatial")
    x = frame_pose(model, q, name)[..., None, :]
    return 0.5 * np.swapaxes(mul(from_vec6(np.swapaxes(Js, -1, -2)), x), -1, -2)


def pose_jacobian_derivative(model: Model, q, v, name) -> np.ndarray:
    """Time derivative of the pose Jacobian (..., 8, nv) along ``v``: ``vec8(ẍ) = J_x v̇ + J̇_x v``
    (DQ Robotics' ``pose_jacobian_derivative(q, q_dot)`` where v = q̇).

    Differentiating the columns ``½ vec8(S_k x)`` of `pose_jacobian` (``S_k`` the spatial
    twist column as a pure dual quaternion, [Silva2022, eq. (4)]): ``½ vec8(Ṡ_k x + S_k ẋ)`` with
    ``ẋ = ½ ξ^0 x``, ``ξ^0 = J_s v`` and ``Ṡ`` from `jacobian_time_derivative`
    (``"spatial"``).
    """
    Js, Jsd = jacobian_time_derivative(model, q, v, name, frame="spatial")
    x = frame_pose(model, q, name)
    xd = 0.5 * mul(from_vec6(np.einsum("...ij,...j->...i", Js, np.asarray(v, dtype=float))), x)
    cols, colsd = np.swapaxes(Js, -1, -2), np.swapaxes(Jsd, -1, -2)  # (..., nv, 6)
    out = 0.5 * (mul(from_vec6(colsd), x[..., None, :]) + mul(from_vec6(cols), xd[..., None, :]))
    return np.swapaxes(out, -1, -2)


__all__ = [
    "twist_jacobian",
    "joint_jacobians",
    "jacobian_time_derivative",
    "jacobian_dot_times_v",
    "pose_jacobian",
    "pose_jacobian_derivative",
]
