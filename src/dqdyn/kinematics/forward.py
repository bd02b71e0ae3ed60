"""Forward and differential kinematics, compiled (numba) over the Model's flat tables.

Poses are unit dual quaternions ``x_i^0`` (pose of body ``i`` in the world frame F_0); the
recursion is the product of [Silva2022thesis, eq. (3.19)] along the tree,

    x_i^0 = x_λ(i)^0 · x_{J_i}^{λ(i)} · x_J(q_i).

Twists follow [Silva2022, eqs. (16)–(19)]: the body twist of body ``i`` in its own frame is the
parent's twist moved by the adjoint plus the joint twist,

    ξ_{0,i}^i = Ad(x_λ^i) ξ_{0,λ}^λ + S_i(q) v_i,

and the spatial twist (world frame, origin point) is ``ξ_{0,i}^0 = Ad(x_i^0) ξ_{0,i}^i``.

Frame Jacobians and their derivatives: `jacobians`.

Every public function accepts leading batch axes on ``q`` (and ``v``) and runs a batch inside
one compiled call (``prange`` over the batch).
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
from dqdyn._engine.checks import not_a_model
from dqdyn._engine.gate import (
    NB1,
    T_M,
    T_MF,
    T_MI,
    T_V,
    armed_call,
    fast_front,
    gate_entry,
    gate_matrix,
    gate_tables,
    gate_vector,
)
from dqdyn._engine.jit import kernel
from dqdyn.algebra._core import ad6, ad6_inv, dq_mul, dq_mul_tuple, jit, pose_translation
from dqdyn.algebra.dualquat import mul
from dqdyn.errors import ShapeError, UnknownNameError
from dqdyn.kinematics.configuration import (  # noqa: F401  (re-exported: every kinematic function from here)
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
from dqdyn.kinematics.lanes_fk import LANES, fk_lanes_batch, lanes_fk_support
from dqdyn.multibody.joints import (
    PRISMATIC,
    REVOLUTE,
    joint_pose,
    joint_transform,
    joint_velocity,
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

FRAMES = {"body": 0, "spatial": 1, "world_aligned": 2}


# =============================================================================== kernels
@jit
def _times_rot_x(p0, p1, p2, p3, b0, b1):
    """The quaternion product ``p (b0 + b1 i)``: the general product's terms without the zero ones."""
    return p0 * b0 - p1 * b1, p0 * b1 + p1 * b0, p2 * b0 + p3 * b1, -(p2 * b1) + p3 * b0


@jit
def _times_rot_y(p0, p1, p2, p3, b0, b2):
    """The quaternion product ``p (b0 + b2 j)`` (see `_times_rot_x`)."""
    return p0 * b0 - p2 * b2, p1 * b0 - p3 * b2, p0 * b2 + p2 * b0, p1 * b2 + p3 * b0


@jit
def _times_rot_z(p0, p1, p2, p3, b0, b3):
    """The quaternion product ``p (b0 + b3 k)`` (see `_times_rot_x`)."""
    return p0 * b0 - p3 * b3, p1 * b0 + p2 * b3, -(p1 * b3) + p2 * b0, p0 * b3 + p3 * b0


@jit
def local_pose(mi, mf, i, q):
    """``x_i^λ = x_{J_i}^λ · x_J(q_i)`` [Silva2022thesis, eq. (3.19)], the pose of body ``i`` in its parent's
    frame, as 8 scalars (no array: a kernel calling it allocates nothing).  Revolute and
    prismatic joints skip forming ``x_J(q)``: the same operations as
    `joint_pose` then ``dq_mul`` with its zero entries left out
    (the same result: every product left out is a zero; only the sign of a zero result may
    differ)."""
    jt = mi[i, MI_JTYPE]
    p0, p1, p2, p3 = mf[i, MF_PLACEMENT], mf[i, MF_PLACEMENT + 1], mf[i, MF_PLACEMENT + 2], mf[i, MF_PLACEMENT + 3]
    d0, d1, d2, d3 = mf[i, MF_PLACEMENT + 4], mf[i, MF_PLACEMENT + 5], mf[i, MF_PLACEMENT + 6], mf[i, MF_PLACEMENT + 7]
    if jt == REVOLUTE:  # x_J = cos(θ/2) + sin(θ/2) axis
        h = 0.5 * (mf[i, MF_SCALE] * q[mi[i, MI_IQ]] + mf[i, MF_OFFSET])
        s = math.sin(h)
        b0 = math.cos(h)
        a0, a1, a2 = mf[i, MF_AXIS], mf[i, MF_AXIS + 1], mf[i, MF_AXIS + 2]
        # an axis along ±x, ±y or ±z (most URDF joints): the products with its two zero
        # components left out, the others summed in the general formula's order below
        if a0 == 0.0 and a1 == 0.0:
            b3 = s * a2
            return _times_rot_z(p0, p1, p2, p3, b0, b3) + _times_rot_z(d0, d1, d2, d3, b0, b3)
        if a1 == 0.0 and a2 == 0.0:
            b1 = s * a0
            return _times_rot_x(p0, p1, p2, p3, b0, b1) + _times_rot_x(d0, d1, d2, d3, b0, b1)
        if a0 == 0.0 and a2 == 0.0:
            b2 = s * a1
            return _times_rot_y(p0, p1, p2, p3, b0, b2) + _times_rot_y(d0, d1, d2, d3, b0, b2)
        b1, b2, b3 = s * a0, s * a1, s * a2
        return (p0 * b0 - p1 * b1 - p2 * b2 - p3 * b3, p0 * b1 + p1 * b0 + p2 * b3 - p3 * b2,
                p0 * b2 - p1 * b3 + p2 * b0 + p3 * b1, p0 * b3 + p1 * b2 - p2 * b1 + p3 * b0,
                d0 * b0 - d1 * b1 - d2 * b2 - d3 * b3, d0 * b1 + d1 * b0 + d2 * b3 - d3 * b2,
                d0 * b2 - d1 * b3 + d2 * b0 + d3 * b1, d0 * b3 + d1 * b2 - d2 * b1 + d3 * b0)
    if jt == PRISMATIC:  # x_J = 1 + ε ½ d axis
        h = 0.5 * (mf[i, MF_SCALE] * q[mi[i, MI_IQ]] + mf[i, MF_OFFSET])
        b5, b6, b7 = h * mf[i, MF_AXIS], h * mf[i, MF_AXIS + 1], h * mf[i, MF_AXIS + 2]
        return (p0, p1, p2, p3,
                (-(p1 * b5) - p2 * b6 - p3 * b7) + d0, (p0 * b5 + p2 * b7 - p3 * b6) + d1,
                (p0 * b6 - p1 * b7 + p3 * b5) + d2, (p0 * b7 + p1 * b6 - p2 * b5) + d3)
    b0, b1, b2, b3, b4, b5, b6, b7 = joint_pose(
        jt, mf[i, MF_AXIS], mf[i, MF_AXIS + 1], mf[i, MF_AXIS + 2], mf[i, MF_PITCH], q,
        mi[i, MI_IQ], mf[i, MF_SCALE], mf[i, MF_OFFSET])
    return (p0 * b0 - p1 * b1 - p2 * b2 - p3 * b3, p0 * b1 + p1 * b0 + p2 * b3 - p3 * b2,
            p0 * b2 - p1 * b3 + p2 * b0 + p3 * b1, p0 * b3 + p1 * b2 - p2 * b1 + p3 * b0,
            (p0 * b4 - p1 * b5 - p2 * b6 - p3 * b7) + (d0 * b0 - d1 * b1 - d2 * b2 - d3 * b3),
            (p0 * b5 + p1 * b4 + p2 * b7 - p3 * b6) + (d0 * b1 + d1 * b0 + d2 * b3 - d3 * b2),
            (p0 * b6 - p1 * b7 + p2 * b4 + p3 * b5) + (d0 * b2 - d1 * b3 + d2 * b0 + d3 * b1),
            (p0 * b7 + p1 * b6 - p2 * b5 + p3 * b4) + (d0 * b3 + d1 * b2 - d2 * b1 + d3 * b0))


@jit
def mul_local(X, p, a, i):
    """``X[i] = X[p] · a``: rows of the pose table, ``a`` as 8 scalars (`local_pose`).
    Rows by index, not as views: a view of ``X`` per body costs a reference count update
    (two calls into numba's runtime) that the kernels' branches keep LLVM from removing."""
    r0, r1, r2, r3, r4, r5, r6, r7 = dq_mul_tuple(
        (X[p, 0], X[p, 1], X[p, 2], X[p, 3], X[p, 4], X[p, 5], X[p, 6], X[p, 7]), a)
    X[i, 0], X[i, 1], X[i, 2], X[i, 3], X[i, 4], X[i, 5], X[i, 6], X[i, 7] = r0, r1, r2, r3, r4, r5, r6, r7


@njit
def fk_kernel(mi, mf, q, X):
    """``X[i] = x_i^0`` for every body (``X[0]`` = identity).  Returns a status code."""
    st = check_q(mi, q)
    if st != OK:
        return st
    # two passes: first every body's x_i^λ = x_J^λ x_J(q) into its own row, then from the root
    # x_i^0 = x_λ^0 x_i^λ in place [Silva2022thesis, eq. (3.19)].  The same operations as one pass, in
    # another order: the joints' sines and cosines no longer wait on the chain of products
    # (UR5: the kernel 185 -> 125 ns in a loop inside numba).
    for i in range(1, mi.shape[0]):
        r0, r1, r2, r3, r4, r5, r6, r7 = local_pose(mi, mf, i, q)
        X[i, 0], X[i, 1], X[i, 2], X[i, 3], X[i, 4], X[i, 5], X[i, 6], X[i, 7] = r0, r1, r2, r3, r4, r5, r6, r7
    for k in range(8):
        X[0, k] = 0.0
    X[0, 0] = 1.0
    for i in range(1, mi.shape[0]):
        mul_local(X, mi[i, MI_PARENT], (X[i, 0], X[i, 1], X[i, 2], X[i, 3], X[i, 4], X[i, 5], X[i, 6], X[i, 7]), i)
    return OK


@njit
def twists_kernel(mi, mf, q, v, X, T):
    """Poses ``X`` and body twists ``T[i] = ξ_{0,i}^i`` (vec6) of every body [Silva2022, eq. (19)]."""
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


_FK = _FRAME_POSE = None
FK_SIG = (T_MI, T_MF, T_V, T_M)


# gate kernels (see gate.gate_address): raw buffers → the entries above
def _c_fk(mip, mfp, nb1, bufs, lens):
    mi, mf = gate_tables(mip, mfp, nb1)
    return fk_entry(mi, mf, gate_vector(bufs, lens, 0), gate_matrix(bufs, lens, 1, nb1))


def _c_frame_pose(mip, mfp, nb1, bufs, lens):
    mi, mf = gate_tables(mip, mfp, nb1)
    return frame_pose_checked(mi, mf, gate_vector(bufs, lens, 0), lens[2],
                              nb.carray(bufs[1], (min(lens[1], 8),)), gate_vector(bufs, lens, 4),
                              gate_vector(bufs, lens, 3))


_FK_C = _FRAME_POSE_C = 0  # their addresses, set on first use
_FK_ENTRY = gate_entry(globals(), "_FK_C", _c_fk, 1, NB1, 8)
_FRAME_POSE_ENTRY = gate_entry(globals(), "_FRAME_POSE_C", _c_frame_pose, 3, 8, -1, scratch=True,
                               ints=(2,))  # (q, placement, body)
FRAME_POSE_SIG = (T_MI, T_MF, T_V, nb.types.int64, T_V, T_V)
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


# =============================================================================== public API
def _resolve_frame(model: Model, name) -> tuple[int, np.ndarray]:
    """(body, placement) of a frame given by name, or a body index; the placement is a
    contiguous (8,) array (cached per model and name), which no kernel writes.  It is left
    writable: numba types a read-only array apart, and one passed here beside the writable ones
    of the entry kernels compiled every Jacobian kernel twice (see dqdyn._engine.jit, "Literals")."""
    try:
        index = model._index
    except AttributeError:  # (twist_jacobian(None, ...) raised AttributeError)
        raise not_a_model(model) from None
    cache = index.get("frame_cache")
    if cache is None:
        cache = index["frame_cache"] = {}
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
        return b, _IDENTITY8.copy()
    k = model.frame_index(name)
    pl = np.array(model.frame_placement[k], dtype=np.float64)
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


@fast_front(_FK_ENTRY)
def forward_kinematics(model: Model, q, *, out=None) -> np.ndarray:
    """Poses ``x_i^0`` of every body as unit dual quaternions, shape (..., nbodies+1, 8).

    Index 0 is the world (identity).  ``q`` has shape (..., nq).  ``out``: an array of the
    result's shape (float64, C-contiguous, writable) that receives the poses and is returned,
    as Pinocchio writes into its ``Data``: a single state then allocates nothing.
    """
    r = _FK_ENTRY(model, q) if out is None else _FK_ENTRY(model, q, out)
    if type(r) is ND:
        return r
    if r is not None and r != BAD_SHAPE:
        raise_status(model, r)
    if out is not None:  # (the gate declined it: a batch, an overlap with q, or a bad out)
        return into_out(out, forward_kinematics(model, q))
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
    kern = fk_batch
    if Q.shape[0] >= LANES and lanes_fk_support(model):
        kern = fk_lanes_batch  # 16 states at once, the same bits (`lanes_fk`)
    for_batch(kern, Q.shape[0], model.mi.shape[0])(model.mi, model.mf, Q, X, status)
    _check(model, status)
    return X.reshape(batch + X.shape[1:])


@fast_front(_FRAME_POSE_ENTRY, out=False, named=True)
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
        `dqdyn.algebra.rotations.matrix_from_pose` gives the 4 × 4 matrix.

    Raises
    ------
    UnknownNameError
        No frame or body called ``name``.
    ShapeError, NonFiniteError, NotUnitError
        Bad ``q`` (wrong shape, NaN / inf, a non-unit quaternion).
    """
    try:  # a frame name seen before (_resolve_frame's cache, read without the call)
        body, pl = model._index["frame_cache"][name]
    except (AttributeError, KeyError, TypeError):
        body, pl = _resolve_frame(model, name)
    r = _FRAME_POSE_ENTRY(model, q, pl, body)
    if type(r) is ND:
        return r
    if r is not None and r != BAD_SHAPE:
        raise_status(model, r)
    Q, bq = _q_in(model, q)  # (a list, a view, another dtype: the route of a plain q)
    q = Q[0] if bq == () else Q.reshape(bq + (model.nq,))
    r = _FRAME_POSE_ENTRY(model, q, pl, body)
    if type(r) is ND:
        return r
    if bq == ():
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
    return mul(forward_kinematics(model, q)[..., body, :], pl)


def frame_poses(model: Model, q) -> np.ndarray:
    """Poses of every named frame, shape (..., nframes, 8) in ``model.frame_names`` order."""
    return mul(forward_kinematics(model, q)[..., model.frame_body, :], model.frame_placement)


def com_poses(model: Model, q) -> np.ndarray:
    """Poses ``x_{c_i}^0`` of the CoM frames (body axes, origin at the CoM), (..., nbodies+1, 8)."""
    from dqdyn.algebra.rotations import pose_from_rt

    c = pose_from_rt(np.broadcast_to([1.0, 0, 0, 0], (model.nbodies + 1, 4)), model.com)
    return mul(forward_kinematics(model, q), c)


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


__all__ = [
    "forward_kinematics",
    "frame_pose",
    "frame_poses",
    "com_poses",
    "body_twists",
    "FRAMES",
]
