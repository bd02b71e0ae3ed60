"""Batched `forward_kinematics` over blocks of states: the pose recursion on ``LANES`` states at
once.

The recursion is the one of `dqdyn.kinematics.forward.fk_kernel`, the product of
[Silva2022thesis, eq. (3.19)] along the tree,

    x_i^0 = x_λ(i)^0 · (x_{J_i}^{λ(i)} · x_J(q_i)),

run on a block of ``LANES`` states together in the structure-of-arrays layout of
`dqdyn.dynamics.lanes`: the pose of body ``i`` is kept as ``ws[i, c · LANES + l]`` (component
``c`` of the vec8, lane ``l``), and the arithmetic of a body is a loop over the lanes without
branches on one scratch array ``S`` (the parent's pose copied in, the body's copied out), which
LLVM turns into vector instructions.  The joint type and the direction of a revolute axis only
select which lane loops run for a body; neither is tested inside one.

**Bits.**  Each lane evaluates the expressions of the single-state kernel in the same association
order: those of `forward.local_pose` for ``x_i^λ`` (a revolute axis along ±x, ±y or ±z with the
products of its two zero components left out, as `forward._times_rot_x` … ``_z`` do, the test
order of the axis kept; a prismatic joint's rotation part kept as the placement's; a helical
joint through `dqdyn.multibody.joints.joint_pose` and ``_dual_along_axis``; a free joint's
``x_J(q) = q``), then `dqdyn.algebra._core.dq_mul_tuple` for ``x_λ^0 x_i^λ`` (the product with the identity
of row 0 kept).  The sines and cosines of the half angles are the same libm calls, one lane at a
time.  No ``fastmath``: LLVM contracts no ``a·b + c`` into an FMA and reorders no sum, so a
state's poses from the lanes are bit-identical to the single-state `dqdyn.forward_kinematics`
(``tests/kinematics/test_lanes_fk.py`` checks ``array_equal``).

Supported: the joints of `dqdyn.dynamics.lanes.lanes_support` (revolute, prismatic, helical
joints, mimic joints among those, free joints): `lanes_fk_support` tells.  `dqdyn.forward_kinematics` uses the lanes for
batches of ``LANES`` states or more of such models and the per-state kernel otherwise.
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np

from dqdyn._engine.batching import BLOCKS, LANES
from dqdyn._engine.boundary import check_q
from dqdyn._engine.jit import kernel
from dqdyn._engine.views import unmanaged
from dqdyn.algebra._core import dq_mul_tuple, jit
from dqdyn.multibody.joints import FREE, HELICAL, PRISMATIC, REVOLUTE
from dqdyn.multibody.model import (
    MF_AXIS,
    MF_OFFSET,
    MF_PITCH,
    MF_PLACEMENT,
    MF_SCALE,
    MI_IQ,
    MI_JTYPE,
    MI_PARENT,
    Model,
)

njit = kernel(error_model="numpy")
pjit = kernel(parallel=True, error_model="numpy")

L = LANES

# block scratch S (LANES values per column)
F_PAR = 0  # the parent's pose x_λ^0 (8)
F_LOC = 8  # the body's pose in its parent's frame, x_i^λ (8)
F_OUT = 16  # x_i^0 (8)
F_X = 24  # one joint coordinate (1)
F_SN = 25  # sin of the half angle (1)
F_CS = 26  # its cos (1)
F_QF = 27  # a free joint's coordinates: its unit dual quaternion (8)
F_COLS = 35


def lanes_fk_support(model: Model) -> bool:
    """Whether `fk_lanes_batch` runs ``model``: every joint revolute, prismatic, helical (mimic
    joints included) or free, the joints of `dqdyn.dynamics.lanes.lanes_support`."""
    jt = model.mi[1:, MI_JTYPE]  # (REVOLUTE, PRISMATIC, HELICAL = 1, 2, 3: a range test)
    return bool((((jt >= REVOLUTE) & (jt <= HELICAL)) | (jt == FREE)).all())


@jit
def _dq(a0, a1, a2, a3, a4, a5, a6, a7, b0, b1, b2, b3, b4, b5, b6, b7):
    """The dual quaternion product ``a b`` of 16 scalars (`dqdyn.algebra._core.dq_mul_tuple`)."""
    return dq_mul_tuple((a0, a1, a2, a3, a4, a5, a6, a7), (b0, b1, b2, b3, b4, b5, b6, b7))


@jit
def _put(S, c, l, r):
    """``S[(c + k) · L + l] = r[k]`` for the 8 entries of ``r``."""
    o = c * L + l
    S[o], S[o + L], S[o + 2 * L], S[o + 3 * L] = r[0], r[1], r[2], r[3]
    S[o + 4 * L], S[o + 5 * L], S[o + 6 * L], S[o + 7 * L] = r[4], r[5], r[6], r[7]


@jit
def _local(mi, mf, i, qT, S):
    """``S[F_LOC…] = x_i^λ = x_{J_i}^λ · x_J(q_i)`` per lane: the expressions of `forward.local_pose`."""
    jt = mi[i, MI_JTYPE]
    P0, P1, P2, P3 = mf[i, MF_PLACEMENT], mf[i, MF_PLACEMENT + 1], mf[i, MF_PLACEMENT + 2], mf[i, MF_PLACEMENT + 3]
    D0, D1, D2, D3 = mf[i, MF_PLACEMENT + 4], mf[i, MF_PLACEMENT + 5], mf[i, MF_PLACEMENT + 6], mf[i, MF_PLACEMENT + 7]
    scale, offset, pitch = mf[i, MF_SCALE], mf[i, MF_OFFSET], mf[i, MF_PITCH]
    a0, a1, a2 = mf[i, MF_AXIS], mf[i, MF_AXIS + 1], mf[i, MF_AXIS + 2]
    iq = mi[i, MI_IQ]
    if jt == FREE:  # x_J(q) = q (`joint_pose`), then the general product
        for k in range(8):
            for l in range(L):
                S[(F_QF + k) * L + l] = qT[iq + k, l]
        for l in range(L):
            o = F_QF * L + l
            _put(S, F_LOC, l, _dq(P0, P1, P2, P3, D0, D1, D2, D3,
                                  S[o], S[o + L], S[o + 2 * L], S[o + 3 * L],
                                  S[o + 4 * L], S[o + 5 * L], S[o + 6 * L], S[o + 7 * L]))
        return
    for l in range(L):
        S[F_X * L + l] = qT[iq, l]
    if jt == PRISMATIC:  # x_J = 1 + ε ½ d axis
        for l in range(L):
            h = 0.5 * (scale * S[F_X * L + l] + offset)
            b5, b6, b7 = h * a0, h * a1, h * a2
            _put(S, F_LOC, l, (P0, P1, P2, P3,
                               (-(P1 * b5) - P2 * b6 - P3 * b7) + D0, (P0 * b5 + P2 * b7 - P3 * b6) + D1,
                               (P0 * b6 - P1 * b7 + P3 * b5) + D2, (P0 * b7 + P1 * b6 - P2 * b5) + D3))
        return
    # revolute / helical: the half-angle sines and cosines, one libm call per lane
    for l in range(L):
        h = 0.5 * (scale * S[F_X * L + l] + offset)
        S[F_SN * L + l] = math.sin(h)
        S[F_CS * L + l] = math.cos(h)
    if jt == HELICAL:  # `joint_pose` (``_dual_along_axis``), then the general product
        for l in range(L):
            th = scale * S[F_X * L + l] + offset
            d = 0.5 * pitch * th
            s = S[F_SN * L + l]
            r0, r1, r2, r3 = S[F_CS * L + l], s * a0, s * a1, s * a2
            px, py, pz = d * a0, d * a1, d * a2
            _put(S, F_LOC, l, _dq(P0, P1, P2, P3, D0, D1, D2, D3, r0, r1, r2, r3,
                                  -px * r1 - py * r2 - pz * r3, px * r0 + py * r3 - pz * r2,
                                  -px * r3 + py * r0 + pz * r1, px * r2 - py * r1 + pz * r0))
        return
    # revolute: x_J = cos(θ/2) + sin(θ/2) axis; an axis along ±x, ±y or ±z as `local_pose`
    if a0 == 0.0 and a1 == 0.0:  # (`_times_rot_z`)
        for l in range(L):
            b0, b3 = S[F_CS * L + l], S[F_SN * L + l] * a2
            _put(S, F_LOC, l, (P0 * b0 - P3 * b3, P1 * b0 + P2 * b3, -(P1 * b3) + P2 * b0, P0 * b3 + P3 * b0,
                               D0 * b0 - D3 * b3, D1 * b0 + D2 * b3, -(D1 * b3) + D2 * b0, D0 * b3 + D3 * b0))
        return
    if a1 == 0.0 and a2 == 0.0:  # (`_times_rot_x`)
        for l in range(L):
            b0, b1 = S[F_CS * L + l], S[F_SN * L + l] * a0
            _put(S, F_LOC, l, (P0 * b0 - P1 * b1, P0 * b1 + P1 * b0, P2 * b0 + P3 * b1, -(P2 * b1) + P3 * b0,
                               D0 * b0 - D1 * b1, D0 * b1 + D1 * b0, D2 * b0 + D3 * b1, -(D2 * b1) + D3 * b0))
        return
    if a0 == 0.0 and a2 == 0.0:  # (`_times_rot_y`)
        for l in range(L):
            b0, b2 = S[F_CS * L + l], S[F_SN * L + l] * a1
            _put(S, F_LOC, l, (P0 * b0 - P2 * b2, P1 * b0 - P3 * b2, P0 * b2 + P2 * b0, P1 * b2 + P3 * b0,
                               D0 * b0 - D2 * b2, D1 * b0 - D3 * b2, D0 * b2 + D2 * b0, D1 * b2 + D3 * b0))
        return
    for l in range(L):
        b0 = S[F_CS * L + l]
        s = S[F_SN * L + l]
        b1, b2, b3 = s * a0, s * a1, s * a2
        _put(S, F_LOC, l, (P0 * b0 - P1 * b1 - P2 * b2 - P3 * b3, P0 * b1 + P1 * b0 + P2 * b3 - P3 * b2,
                           P0 * b2 - P1 * b3 + P2 * b0 + P3 * b1, P0 * b3 + P1 * b2 - P2 * b1 + P3 * b0,
                           D0 * b0 - D1 * b1 - D2 * b2 - D3 * b3, D0 * b1 + D1 * b0 + D2 * b3 - D3 * b2,
                           D0 * b2 - D1 * b3 + D2 * b0 + D3 * b1, D0 * b3 + D1 * b2 - D2 * b1 + D3 * b0))


@jit
def _forward(mi, mf, qT, ws, S):
    """``ws[i] = x_i^0`` of every body on a block (row 0 the identity), as `forward.fk_kernel`."""
    for k in range(8 * L):
        ws[0, k] = 0.0
    for l in range(L):
        ws[0, l] = 1.0
    for i in range(1, mi.shape[0]):
        p = mi[i, MI_PARENT]
        for k in range(8 * L):
            S[F_PAR * L + k] = ws[p, k]
        _local(mi, mf, i, qT, S)
        for l in range(L):  # x_i^0 = x_λ^0 x_i^λ (`forward.mul_local`)
            a = F_PAR * L + l
            b = F_LOC * L + l
            _put(S, F_OUT, l, _dq(S[a], S[a + L], S[a + 2 * L], S[a + 3 * L],
                                  S[a + 4 * L], S[a + 5 * L], S[a + 6 * L], S[a + 7 * L],
                                  S[b], S[b + L], S[b + 2 * L], S[b + 3 * L],
                                  S[b + 4 * L], S[b + 5 * L], S[b + 6 * L], S[b + 7 * L]))
        for k in range(8 * L):
            ws[i, k] = S[F_OUT * L + k]


# ------------------------------------------------------------------------ batch drivers
@njit
def fk_lanes_rows(mi, mf, Q, X, status, s, e):
    """States ``s`` to ``e`` of `fk_lanes_batch`, ``LANES`` at a time on one workspace (the last
    block padded with copies of its last state, whose results are dropped)."""
    mi, mf, Q = unmanaged(mi), unmanaged(mf), unmanaged(Q)
    X, status = unmanaged(X), unmanaged(status)
    nb1 = mi.shape[0]
    nq = Q.shape[1]
    ws = np.empty((nb1, 8 * L))
    S = np.empty(F_COLS * L)
    qT = np.empty((max(nq, 1), L))
    for b in range(s, e, L):
        for l in range(L):
            k = min(b + l, e - 1)
            for j in range(nq):
                qT[j, l] = Q[k, j]
            if b + l < e:
                status[b + l] = check_q(mi, Q[k])
        _forward(mi, mf, qT, ws, S)
        for l in range(min(L, e - b)):
            k = b + l
            for i in range(nb1):
                for c in range(8):
                    X[k, i, c] = ws[i, c * L + l]


@pjit
def fk_lanes_batch(mi, mf, Q, X, status):
    """`forward_kinematics` of the states ``Q`` (rows) into ``X`` (N, nbodies + 1, 8), blocks of
    ``LANES`` states spread over the threads.  The model must satisfy `lanes_fk_support`."""
    N = np.int64(Q.shape[0])
    nl = (N + L - 1) // L
    nblk = min(nl, BLOCKS)
    for b in nb.prange(nblk):
        fk_lanes_rows(mi, mf, Q, X, status, (b * nl // nblk) * L, min(N, ((b + 1) * nl // nblk) * L))


__all__ = ["LANES", "lanes_fk_support", "fk_lanes_batch"]
