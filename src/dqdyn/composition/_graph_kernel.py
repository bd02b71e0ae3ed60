"""Compiled kernel of `dqdyn.composition.interconnection.InterconnectionGraph.rnea` (graphs
of model subsystems; the default ``compiled=True``), and its C-gate entry."""

from __future__ import annotations

import math

import numpy as np

from dqdyn._engine.boundary import BAD_OVERFLOW, BAD_SHAPE, OK
from dqdyn._engine.gate import gate_tables, gate_vector
from dqdyn._engine.jit import kernel
from dqdyn.algebra._core import ad6, ad6_inv
from dqdyn.dynamics.newton_euler import (
    NSCRATCH,
    W_COLS,
    W_G,
    W_XI,
    W_XID,
    W_ZETA,
    armature_tau,
    ne_backward,
    ne_check,
    ne_forward_bodies,
)

_NOF = np.empty((0, 6))
NCOLS = 10  # columns of the per-vertex int table N (see graph_rnea_kernel)


# dqNE's two recursions as ordinary calls here (IR-inlined into these two wrappers once; inlined
# once per vertex slot, the graph kernel took minutes to compile)
@kernel(error_model="numpy")
def _vertex_forward(MI, MF, N, k, q, v, a, WS):
    """Checks and forward recursion of vertex ``k`` from its connection row ``WS[w0]``."""
    r0, nb1, q0, nq, v0, nv, w0 = N[k, 2], N[k, 3], N[k, 4], N[k, 5], N[k, 6], N[k, 7], N[k, 8]
    mi, qk, vk, ak = MI[r0:r0 + nb1], q[q0:q0 + nq], v[v0:v0 + nv], a[v0:v0 + nv]
    st = ne_check(mi, qk, vk, ak, _NOF)
    if st != OK:
        return st
    ws = WS[w0:w0 + nb1 + NSCRATCH]
    ne_forward_bodies(mi, MF[r0:r0 + nb1], qk, vk, ak, ws, ws[nb1])
    return OK


@kernel(error_model="numpy")
def _vertex_backward(MI, MF, N, k, q, a, F, use_f, WS, tau):
    """Backward recursion of vertex ``k``, its successors' connection wrenches in ``F``; its
    joints' rotor inertia (`Model.armature`) adds ``armature ⊙ a``."""
    r0, nb1, q0, nq, v0, nv, w0 = N[k, 2], N[k, 3], N[k, 4], N[k, 5], N[k, 6], N[k, 7], N[k, 8]
    f = F[r0:r0 + nb1] if use_f else F[0:0]
    for i in range(f.shape[0]):
        for c in range(6):
            if not math.isfinite(f[i, c]):
                return BAD_OVERFLOW
    tk = tau[v0:v0 + nv]
    for i in range(nv):
        tk[i] = 0.0
    ws = WS[w0:w0 + nb1 + NSCRATCH]
    ne_backward(MI[r0:r0 + nb1], MF[r0:r0 + nb1], q[q0:q0 + nq], f, ws, tk, ws[nb1])
    armature_tau(MI[r0:r0 + nb1], MF[r0:r0 + nb1], a[v0:v0 + nv], tk)
    for i in range(nv):  # finite inputs can still overflow (|v|² > 1.8e308)
        if not math.isfinite(tk[i]):
            return BAD_OVERFLOW
    return OK


@kernel()
def graph_rnea_kernel(MI, MF, g, N, TOA, OFF, q, v, a, WS, F, tau):
    """The lean modular dqNE of `InterconnectionGraph.rnea` for graphs of model
    subsystems, in one compiled call ([Silva2022thesis, eqs. 5.8–5.11]).  Vertices in depth-first order
    (a predecessor before its successors); per vertex ``k`` the int row ``N[k]`` =
    ``[parent, body in parent, mi/mf/F row, nb1, q, nq, v, nv, ws row, nkids]`` (``q`` / ``v``:
    the subsystem's offsets in the composite coordinates); ``TOA[k]`` = pose of its connection
    frame in that body, ``OFF[k]`` = that body's CoM offset pose.

    Each vertex runs dqNE's forward recursion on its own model from a moving base, the world row
    of its workspace set to the connection frame's body twist, twist derivative and gravity
    (the inherited motion Ξ_{p,i} of eq. 5.10, by ``Ad`` of its predecessor's CoM twist); on the
    way back its backward recursion, with its successors' connection wrenches (eq. 5.11) as
    external wrenches, leaves in that row the wrench ζ_a the vertex takes through its
    connection.  One dqNE per vertex in all, no connector bodies, no poses.
    Returns 0 or (status, vertex) packed as ``status * 1000 + k + 1``."""
    ns = N.shape[0]
    tb = np.empty(6)
    for k in range(ns):  # root → leaves
        p, body, w0 = N[k, 0], N[k, 1], N[k, 8]
        pb = N[p, 8] + body if p >= 0 else -1  # the predecessor's workspace row of the body
        tb[0] = tb[1] = tb[2] = 0.0  # gravity g^{c_b} (the root: g) in the connection's axes
        for c in range(3):
            tb[3 + c] = WS[pb, W_G + c] if p >= 0 else g[c]
        ad6_inv(TOA[k], tb, WS[w0, W_ZETA:W_ZETA + 6])  # (scratch: zeroed by the sweep)
        for c in range(3):
            WS[w0, W_G + c] = WS[w0, W_ZETA + 3 + c]
        if p < 0:  # the root: at rest
            for c in range(6):
                WS[w0, W_XI + c] = 0.0
                WS[w0, W_XID + c] = 0.0
        else:  # Ξ_{p,k}: the predecessor's CoM twist, at the connection frame (eq. 5.10)
            ad6(OFF[k], WS[pb, W_XI:W_XI + 6], tb)
            ad6_inv(TOA[k], tb, WS[w0, W_XI:W_XI + 6])
            ad6(OFF[k], WS[pb, W_XID:W_XID + 6], tb)
            ad6_inv(TOA[k], tb, WS[w0, W_XID:W_XID + 6])
        st = _vertex_forward(MI, MF, N, k, q, v, a, WS)
        if st != 0:
            return st * 1000 + k + 1
    for k in range(ns - 1, -1, -1):  # leaves → root
        r0, nb1, w0 = N[k, 2], N[k, 3], N[k, 8]
        kids = N[k, 9] > 0
        if kids:
            for i in range(r0, r0 + nb1):
                for c in range(6):
                    F[i, c] = 0.0
            for j in range(k + 1, ns):
                if N[j, 0] == k:
                    ad6(TOA[j], WS[N[j, 8], W_ZETA:W_ZETA + 6], tb)  # ζ_a at the body origin
                    for c in range(6):
                        F[r0 + N[j, 1], c] -= tb[c]  # the successor pushes back
        st = _vertex_backward(MI, MF, N, k, q, a, F, kids, WS, tau)
        if st != 0:
            return st * 1000 + k + 1
        if kids:  # successors at the base (body 0) of k: straight into its connection wrench
            for c in range(6):
                WS[w0, W_ZETA + c] -= F[r0, c]
    return 0


# ------------------------------------------------------------------------ the C call gate
# (see gate.gate_address) GATE(address, MI, MF, nv, -1, q, v, a, NP, W) → τ: ``MI`` / ``MF`` the
# vertices' model tables stacked, ``NP`` = [ns, rows, nws, N (ns × NCOLS)] as int64 viewed as
# float64, ``W`` = [g (3), TOA, OFF (ns × 8 each), WS (nws × W_COLS), F (rows × 6)], the layout
# of `pack_sizes`.
def pack_sizes(ns, rows, nws):
    """Offsets of the pieces of ``W`` (and its total length, last)."""
    sizes = (3, ns * 8, ns * 8, nws * W_COLS, rows * 6)
    off = [0]
    for n in sizes:
        off.append(off[-1] + n)
    return off


def _c_graph_rnea(mip, mfp, nb1, bufs, lens):
    MI, MF = gate_tables(mip, mfp, nb1)
    ip = gate_vector(bufs, lens, 3).view(np.int64)
    if lens[3] < 3:
        return BAD_SHAPE
    ns, rows, nws = ip[0], ip[1], ip[2]
    W = gate_vector(bufs, lens, 4)
    o0 = 3
    o1 = o0 + ns * 8
    o2 = o1 + ns * 8
    o3 = o2 + nws * W_COLS
    if (rows != nb1 or lens[3] != 3 + ns * NCOLS or lens[4] != o3 + rows * 6
            or lens[1] != lens[5] or lens[2] != lens[5]):
        return BAD_SHAPE
    N = ip[3:3 + ns * NCOLS].reshape((ns, NCOLS))
    for k in range(ns):  # (q, v, a are read at each vertex's offsets)
        if N[k, 4] + N[k, 5] > lens[0] or N[k, 6] + N[k, 7] > lens[5]:
            return BAD_SHAPE
    return graph_rnea_kernel(
        MI, MF, W[0:3], N, W[o0:o1].reshape((ns, 8)), W[o1:o2].reshape((ns, 8)),
        gate_vector(bufs, lens, 0), gate_vector(bufs, lens, 1), gate_vector(bufs, lens, 2),
        W[o2:o3].reshape((nws, W_COLS)), W[o3:o3 + rows * 6].reshape((rows, 6)),
        gate_vector(bufs, lens, 5))


GRAPH_C = 0  # address of the compiled _c_graph_rnea, set on first use


__all__ = ["graph_rnea_kernel", "pack_sizes"]
