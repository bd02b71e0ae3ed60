"""Compiled kernel of :meth:`dqdyn.algorithms.interconnection.InterconnectionGraph.rnea` (graphs
of model subsystems; the default ``compiled=True``), and its C-gate entry."""

from __future__ import annotations

import math

import numpy as np

from .._jit import kernel
from ..algebra._core import ad6, ad6_inv, dq_mul
from .kinematics import fk_kernel
from .boundary import BAD_OVERFLOW, BAD_SHAPE, OK
from .gate import gate_tables, gate_vector
from .newton_euler import NSCRATCH, W_COLS, W_XI, W_XID, W_ZETA, ne_backward, ne_check, ne_forward

_NOF = np.empty((0, 6))

# dqNE's two recursions as ordinary calls here (IR-inlined into these two wrappers once; inlined
# once per vertex slot, the graph kernel took minutes to compile)
@kernel(error_model="numpy")
def _vertex_forward(MI, MF, g, N, k, QE, VE, AE, WS):
    """Checks and forward recursion of vertex ``k`` (its twists and twist derivatives)."""
    r0, nb1, qe0, nqe, ve0, nve, w0 = N[k, 2], N[k, 3], N[k, 4], N[k, 5], N[k, 6], N[k, 7], N[k, 10]
    mi, mf, q = MI[r0:r0 + nb1], MF[r0:r0 + nb1], QE[qe0:qe0 + nqe]
    v, a = VE[ve0:ve0 + nve], AE[ve0:ve0 + nve]
    st = ne_check(mi, q, v, a, _NOF)
    if st != OK:
        return st
    ws = WS[w0:w0 + nb1 + NSCRATCH]
    ne_forward(mi, mf, g, q, v, a, ws, ws[nb1])
    return OK


@kernel(error_model="numpy")
def _vertex_backward(MI, MF, N, k, QE, F, use_f, WS, TAUE):
    """Backward recursion of vertex ``k``, its successors' connection wrenches in ``F``."""
    r0, nb1, qe0, nqe, ve0, nve, w0 = N[k, 2], N[k, 3], N[k, 4], N[k, 5], N[k, 6], N[k, 7], N[k, 10]
    f = F[r0:r0 + nb1] if use_f else F[0:0]
    for i in range(f.shape[0]):
        for c in range(6):
            if not math.isfinite(f[i, c]):
                return BAD_OVERFLOW
    tau = TAUE[ve0:ve0 + nve]
    for i in range(nve):
        tau[i] = 0.0
    ws = WS[w0:w0 + nb1 + NSCRATCH]
    ne_backward(MI[r0:r0 + nb1], MF[r0:r0 + nb1], QE[qe0:qe0 + nqe], f, ws, tau, ws[nb1])
    for i in range(nve):  # finite inputs can still overflow (|v|² > 1.8e308)
        if not math.isfinite(tau[i]):
            return BAD_OVERFLOW
    return OK


@kernel()
def graph_rnea_kernel(MI, MF, g, N, TOA, OFF, q, v, a, QE, VE, AE, WS, X, F, TAUE, ZB, tau):
    """The lean modular dqNE of :meth:`InterconnectionGraph.rnea` for graphs of model
    subsystems, in one compiled call (thesis eqs. 5.8–5.11).  Vertices in depth-first order
    (a predecessor before its successors); per vertex ``k`` the int row ``N[k]`` =
    ``[parent, body in parent, mi/mf/X/F row, nb1, qe, nqe, ve/ae/τₑ, nve, q, v, ws row, nkids]``;
    ``TOA[k]`` = pose of its connection frame in that body, ``OFF[k]`` = that body's CoM offset
    pose.  Each vertex runs dqNE's forward recursion once on the way out (its successors'
    connection twists come from it) and its backward recursion once on the way back, with its
    successors' connection wrenches as external wrenches: one dqNE per vertex in all.
    Returns 0 or (status, vertex) packed as ``status * 1000 + k + 1``."""
    ns = N.shape[0]
    tb = np.empty(6)
    for k in range(ns):  # root → leaves
        p, body, r0, nb1 = N[k, 0], N[k, 1], N[k, 2], N[k, 3]
        qe0, nqe, ve0, nve, q0, v0 = N[k, 4], N[k, 5], N[k, 6], N[k, 7], N[k, 8], N[k, 9]
        if p < 0:
            for i in range(8):
                QE[qe0 + i] = TOA[k, i]
            for i in range(6):
                VE[ve0 + i] = 0.0
                AE[ve0 + i] = 0.0
        else:
            pw, px = N[p, 10], N[p, 2]
            ad6(OFF[k], WS[pw + body, W_XI:W_XI + 6], tb)
            ad6_inv(TOA[k], tb, VE[ve0:ve0 + 6])
            ad6(OFF[k], WS[pw + body, W_XID:W_XID + 6], tb)
            ad6_inv(TOA[k], tb, AE[ve0:ve0 + 6])
            dq_mul(X[px + body], TOA[k], QE[qe0:qe0 + 8])
        for i in range(nqe - 8):
            QE[qe0 + 8 + i] = q[q0 + i]
        for i in range(nve - 6):
            VE[ve0 + 6 + i] = v[v0 + i]
            AE[ve0 + 6 + i] = a[v0 + i]
        st = _vertex_forward(MI, MF, g, N, k, QE, VE, AE, WS)
        if st != 0:
            return st * 1000 + k + 1
        if N[k, 11] > 0:
            fk_kernel(MI[r0:r0 + nb1], MF[r0:r0 + nb1], QE[qe0:qe0 + nqe], X[r0:r0 + nb1])
    for k in range(ns - 1, -1, -1):  # leaves → root
        r0, nb1, ve0, nve, w0 = N[k, 2], N[k, 3], N[k, 6], N[k, 7], N[k, 10]
        kids = N[k, 11] > 0
        if kids:
            for i in range(r0, r0 + nb1):
                for c in range(6):
                    F[i, c] = 0.0
            for j in range(k + 1, ns):
                if N[j, 0] == k:
                    ad6(TOA[j], ZB[j], tb)  # ζ_b at the body origin, body axes
                    for c in range(6):
                        F[r0 + N[j, 1], c] -= tb[c]  # the successor pushes back
        st = _vertex_backward(MI, MF, N, k, QE, F, kids, WS, TAUE)
        if st != 0:
            return st * 1000 + k + 1
        for c in range(6):
            ZB[k, c] = WS[w0 + 1, W_ZETA + c]
        for i in range(nve - 6):
            tau[N[k, 9] + i] = TAUE[ve0 + 6 + i]
    return 0


# ------------------------------------------------------------------------ the C call gate
# (see gate.gate_address) GATE(address, MI, MF, nv, -1, q, v, a, NP, W) → τ: ``MI`` / ``MF`` the
# vertices' model tables stacked, ``NP`` = [ns, rows, nqe, nve, nws, N (ns × 12)] as int64 viewed
# as float64, ``W`` = [g (3), TOA, OFF (ns × 8 each), QE (nqe), VE, AE (nve each), WS (nws × W_COLS),
# X (rows × 8), F (rows × 6), TAUE (nve), ZB (ns × 6)], the layout of :func:`pack_sizes`.
def pack_sizes(ns, rows, nqe, nve, nws):
    """Offsets of the pieces of ``W`` (and its total length, last)."""
    sizes = (3, ns * 8, ns * 8, nqe, nve, nve, nws * W_COLS, rows * 8, rows * 6, nve, ns * 6)
    off = [0]
    for n in sizes:
        off.append(off[-1] + n)
    return off


def _c_graph_rnea(mip, mfp, nb1, bufs, lens):
    MI, MF = gate_tables(mip, mfp, nb1)
    ip = gate_vector(bufs, lens, 3).view(np.int64)
    if lens[3] < 5:
        return BAD_SHAPE
    ns, rows, nqe, nve, nws = ip[0], ip[1], ip[2], ip[3], ip[4]
    W = gate_vector(bufs, lens, 4)
    o0 = 3
    o1 = o0 + ns * 8
    o2 = o1 + ns * 8
    o3 = o2 + nqe
    o4 = o3 + nve
    o5 = o4 + nve
    o6 = o5 + nws * W_COLS
    o7 = o6 + rows * 8
    o8 = o7 + rows * 6
    o9 = o8 + nve
    if (rows != nb1 or lens[3] != 5 + ns * 12 or lens[4] != o9 + ns * 6 or lens[1] != lens[5]
            or lens[2] != lens[5]):
        return BAD_SHAPE
    N = ip[5:5 + ns * 12].reshape((ns, 12))
    for k in range(ns):  # (q, v, a are read at each vertex's offsets)
        if N[k, 8] + N[k, 5] - 8 > lens[0] or N[k, 9] + N[k, 7] - 6 > lens[5]:
            return BAD_SHAPE
    return graph_rnea_kernel(
        MI, MF, W[0:3], N, W[o0:o1].reshape((ns, 8)),
        W[o1:o2].reshape((ns, 8)), gate_vector(bufs, lens, 0), gate_vector(bufs, lens, 1),
        gate_vector(bufs, lens, 2), W[o2:o3], W[o3:o4], W[o4:o5],
        W[o5:o6].reshape((nws, W_COLS)), W[o6:o7].reshape((rows, 8)),
        W[o7:o8].reshape((rows, 6)), W[o8:o9], W[o9:o9 + ns * 6].reshape((ns, 6)),
        gate_vector(bufs, lens, 5))


GRAPH_C = 0  # address of the compiled _c_graph_rnea, set on first use


__all__ = ["graph_rnea_kernel", "pack_sizes"]
