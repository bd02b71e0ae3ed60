"""Compiled kernel of :meth:`dqdyn.algorithms.interconnection.InterconnectionGraph.rnea` with
``compiled=True``."""

from __future__ import annotations

import numpy as np

from .._jit import kernel

from ..algebra._core import ad6, ad6_inv, dq_mul
from .kinematics import fk_kernel
from .newton_euler import NSCRATCH, W_XI, W_XID, W_ZETA
from .newton_euler import ne_core as _ne_core_inlinable

# dqNE as an ordinary call here (``ne_core`` itself is IR-inlined into rnea's kernels): inlined
# once per vertex slot, the graph kernel took minutes to compile
ne_core = kernel(error_model="numpy")(_ne_core_inlinable.py_func)


@kernel()
def _graph_ne(MI, MF, g, N, k, QE, VE, AE, F, use_f, WS, TAUE):
    """One dqNE call of vertex ``k`` (the single call site of the inlined ``ne_core``)."""
    r0, nb1, qe0, nqe, ve0, nve, w0 = N[k, 2], N[k, 3], N[k, 4], N[k, 5], N[k, 6], N[k, 7], N[k, 10]
    f = F[r0:r0 + nb1] if use_f else F[0:0]
    return ne_core(MI[r0:r0 + nb1], MF[r0:r0 + nb1], g, QE[qe0:qe0 + nqe], VE[ve0:ve0 + nve],
                   AE[ve0:ve0 + nve], f, WS[w0:w0 + nb1 + NSCRATCH], TAUE[ve0:ve0 + nve])


@kernel()
def graph_rnea_kernel(MI, MF, g, N, TOA, OFF, q, v, a, QE, VE, AE, WS, X, F, TAUE, ZB, tau):
    """The lean modular dqNE of :meth:`InterconnectionGraph.rnea` for graphs of model
    subsystems, in one compiled call (thesis eqs. 5.8–5.11).  Vertices in depth-first order
    (a predecessor before its successors); per vertex ``k`` the int row ``N[k]`` =
    ``[parent, body in parent, mi/mf/X/F row, nb1, qe, nqe, ve/ae/τₑ, nve, q, v, ws row, nkids]``;
    ``TOA[k]`` = pose of its connection frame in that body, ``OFF[k]`` = that body's CoM offset
    pose.  Returns 0 or (status, vertex) packed as ``status * 1000 + k + 1``."""
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
        st = _graph_ne(MI, MF, g, N, k, QE, VE, AE, F, False, WS, TAUE)
        if st != 0:
            return st * 1000 + k + 1
        if N[k, 11] > 0:
            fk_kernel(MI[r0:r0 + nb1], MF[r0:r0 + nb1], QE[qe0:qe0 + nqe], X[r0:r0 + nb1])
    for k in range(ns - 1, -1, -1):  # leaves → root
        r0, nb1, ve0, nve, w0 = N[k, 2], N[k, 3], N[k, 6], N[k, 7], N[k, 10]
        if N[k, 11] > 0:
            for i in range(r0, r0 + nb1):
                for c in range(6):
                    F[i, c] = 0.0
            for j in range(k + 1, ns):
                if N[j, 0] == k:
                    ad6(TOA[j], ZB[j], tb)  # ζ_b at the body origin, body axes
                    for c in range(6):
                        F[r0 + N[j, 1], c] -= tb[c]  # the successor pushes back
            st = _graph_ne(MI, MF, g, N, k, QE, VE, AE, F, True, WS, TAUE)
            if st != 0:
                return st * 1000 + k + 1
        for c in range(6):
            ZB[k, c] = WS[w0 + 1, W_ZETA + c]
        for i in range(nve - 6):
            tau[N[k, 9] + i] = TAUE[ve0 + 6 + i]
    return 0


__all__ = ["graph_rnea_kernel"]
