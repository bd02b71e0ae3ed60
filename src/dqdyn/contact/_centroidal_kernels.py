r"""The compiled centroidal quantities of a floating-base tree: one kernel call per state or per batch.

The route of `dqdyn.contact.centroidal` (its module docstring) in one compiled pass per state:
``M`` by the CRBA (`dqdyn.dynamics.lagrange.crba_core`), whose base rows ``[M_τ; M_f]`` less the
base's armature are the system's momentum about the base origin in the base axes
([Featherstone2008, ch. 6]); the base orientation ``R`` from the same pass (the CRBA's world
pose of body 1); the transport of wrench rows to the CoM with world axes
``T = [[0, R], [R, −R [c_b]×]]`` with ``m [c_b]×`` the base-base block's upper-right block
([Featherstone2008, ch. 2]); then, by ``par[0]`` (the mode):

* `AG`: ``A_g = T [M_τ; M_f]`` (6, nv) [Orin2013];
* `HG`: ``h_g = A_g v`` (6);
* `HGDOT`: ``ḣ_g = T F + [m g; 0]`` (6), with ``F`` the base rows of ``rnea(q, v, a)``
  (`dqdyn.dynamics.newton_euler.ne_core`) less the base's armature times its acceleration
  ([Featherstone2008, ch. 5]);
* `JC`: the CoM Jacobian ``R M_f / m`` (3, nv).

``par = [mode, m (the moving bodies' mass, `Model.total_mass`), Σ model.mass]``.  A batch runs
`centroidal_rows` per block of states (`centroidal_batch`, through
`dqdyn._engine.batching.run_chunked`), the code a single state runs, so a batch gives each
state's bits.  The status is `dqdyn._engine.boundary`'s code of a bad input (a non-finite
entry, a non-unit quaternion, an overflow), which the Python front raises.
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np

from dqdyn._engine.batching import BLOCKS
from dqdyn._engine.boundary import BAD_OVERFLOW, BAD_SHAPE, BAD_V_FINITE, OK, check_finite
from dqdyn._engine.gate import NV, flat_workspace, gate_entry, gate_matrix, gate_tables, gate_vector
from dqdyn._engine.jit import kernel
from dqdyn._engine.views import unmanaged
from dqdyn.dynamics.lagrange import C_NCRBA, X_R, crba_core
from dqdyn.dynamics.newton_euler import NSCRATCH, W_COLS, ne_core
from dqdyn.multibody.model import MF_ARMATURE, MF_GRAVITY, MI_IQ, MI_IV

njit = kernel(error_model="numpy")
pjit = kernel(parallel=True, error_model="numpy")

#: modes (``par[0]``, module docstring)
AG, HG, HGDOT, JC = 0, 1, 2, 3

_EMPTY2 = np.empty((0, 6))


@njit
def _transport(wc, M, iv, mt, T):
    """``T`` (6, 6) of the module docstring from the CRBA's workspace ``wc`` and ``M``."""
    for r in range(3):
        for c in range(3):
            Rrc = wc[1, X_R + 3 * r + c]
            T[r, c] = 0.0
            T[r, 3 + c] = Rrc
            T[3 + r, c] = Rrc
    f = -1.0 / max(mt, 1e-300)
    for r in range(3):
        for c in range(3):
            s = 0.0
            for k in range(3):
                s += wc[1, X_R + 3 * r + k] * M[iv + k, iv + 3 + c]
            T[3 + r, 3 + c] = s * f


@njit
def _rows_times(T, M, iv, r0, r1, k0, out, scale):
    """``out[r − r0, j] = (Σ_k T[r, k0 + k] M[iv + k0 + k, j]) · scale`` for rows ``r0 ≤ r < r1``."""
    n = M.shape[1]
    for r in range(r0, r1):
        for j in range(n):
            s = 0.0
            for k in range(k0, 6):
                s += T[r, k] * M[iv + k, j]
            out[r - r0, j] = s * scale


@njit
def centroidal_state(mi, mf, par, q, v, a, out, h, wc, wn, M, tau, T, AGs):
    """One state (module docstring): ``out`` (6 or 3, nv) for `AG` and `JC`, ``h`` (6) for `HG`
    and `HGDOT`; ``wc``, ``wn`` the CRBA's and dqNE's workspaces, ``M`` (nv, nv), ``tau`` (nv),
    ``T`` (6, 6), ``AGs`` (6, nv) scratch.  Returns a status."""
    mi, mf, par, q, v, a = unmanaged(mi), unmanaged(mf), unmanaged(par), unmanaged(q), unmanaged(v), \
        unmanaged(a)
    out, h, wc, wn = unmanaged(out), unmanaged(h), unmanaged(wc), unmanaged(wn)
    M, tau, T, AGs = unmanaged(M), unmanaged(tau), unmanaged(T), unmanaged(AGs)
    mode = int(par[0])
    mt = par[1]
    iv = mi[1, MI_IV]
    st = crba_core(mi, mf, q, wc, M)
    if st != OK:
        return st
    for k in range(6):  # the base's armature is not momentum of the bodies
        M[iv + k, iv + k] -= mf[1, MF_ARMATURE + k]
    _transport(wc, M, iv, mt, T)
    if mode == AG:
        _rows_times(T, M, iv, 0, 6, 0, out, 1.0)
    elif mode == JC:
        _rows_times(T, M, iv, 0, 3, 3, out, 1.0 / par[2])
    elif mode == HG:
        if check_finite(v, BAD_V_FINITE) != OK:
            return BAD_V_FINITE
        _rows_times(T, M, iv, 0, 6, 0, AGs, 1.0)
        n = v.shape[0]
        for r in range(6):
            s = 0.0
            for j in range(n):
                s += AGs[r, j] * v[j]
            h[r] = s
    else:  # HGDOT
        g = mf[0, MF_GRAVITY : MF_GRAVITY + 3]
        st = ne_core(mi, mf, g, q, v, a, _EMPTY2, wn, tau)
        if st != OK:
            return st
        F = AGs[0]
        for k in range(6):
            F[k] = tau[iv + k] - mf[1, MF_ARMATURE + k] * a[iv + k]
        for r in range(6):
            s = 0.0
            for k in range(6):
                s += T[r, k] * F[k]
            h[r] = s
        for k in range(3):
            h[k] += mt * g[k]
    for r in range(h.shape[0]):
        if not math.isfinite(h[r]):
            return BAD_OVERFLOW
    return OK


@njit
def centroidal_rows(mi, mf, par, Q, V, A, OUT, H, status, s, e):
    """States ``s`` to ``e`` of `centroidal_batch` on one set of workspaces (a single state is
    ``s, e = 0, 1``: the same compiled code as a batch's).  ``V``, ``A``: one row per state or
    one row shared by all (a (1, 0) row where the mode does not use them); ``OUT`` (N, 6 or 3,
    nv) or (N, 0, 0), ``H`` (N, 6) or (N, 0), by the mode."""
    n = mi[0, MI_IV]
    wc = np.empty((mi.shape[0] + 1, C_NCRBA))
    wn = np.empty((mi.shape[0] + NSCRATCH, W_COLS))
    M = np.empty((n, n))
    tau = np.empty(n)
    T = np.empty((6, 6))
    AGs = np.empty((6, max(n, 6)))
    bv, ba = V.shape[0] > 1, A.shape[0] > 1
    z = np.int64(0)
    for k in range(s, e):
        status[k] = centroidal_state(mi, mf, par, Q[k], V[k if bv else z], A[k if ba else z], OUT[k],
                                     H[k], wc, wn, M, tau, T, AGs)


@njit
def centroidal_checked(mi, mf, par, q, v, a, out, h, ws):
    """One state through the call gate (`dqdyn._engine.gate`): the lengths checked (``v``, ``a``
    of length 0 where the mode does not use them), the workspaces carved from the model's
    scratch ``ws`` (`BAD_SHAPE` where it is too small: the caller's general path allocates)."""
    n = mi[0, MI_IV]
    nb1 = mi.shape[0]
    mode = int(par[0]) if par.shape[0] == 3 else -1
    rows = 6 if mode == AG else 3 if mode == JC else 0
    if (mode < 0 or mode > 3 or q.shape[0] != mi[0, MI_IQ] or out.shape[0] * out.shape[1] != rows * n
            or h.shape[0] != (0 if rows else 6) or v.shape[0] != (n if mode == HG or mode == HGDOT else 0)
            or a.shape[0] != (n if mode == HGDOT else 0)):
        return BAD_SHAPE
    nc, nn = (nb1 + 1) * C_NCRBA, (nb1 + NSCRATCH) * W_COLS
    m6 = max(n, 6)
    if ws.shape[0] < nc + nn + n * n + n + 36 + 6 * m6:
        return BAD_SHAPE
    o = nc + nn
    return centroidal_state(mi, mf, par, q, v, a, out.reshape((rows, n)), h,
                            flat_workspace(ws, nb1 + 1, C_NCRBA), ws[nc:o].reshape((nb1 + NSCRATCH, W_COLS)),
                            ws[o:o + n * n].reshape((n, n)), ws[o + n * n:o + n * n + n],
                            ws[o + n * n + n:o + n * n + n + 36].reshape((6, 6)),
                            ws[o + n * n + n + 36:o + n * n + n + 36 + 6 * m6].reshape((6, m6)))



# gate kernels (see gate.gate_address): raw buffers (inputs, the model's scratch, the result)
def _c_matrix(mip, mfp, nb1, bufs, lens):  # (q, par) → A_g (6, nv) or J_c (3, nv)
    mi, mf = gate_tables(mip, mfp, nb1)
    n = max(mi[0, MI_IV], 1)
    ws = gate_vector(bufs, lens, 2)
    z = ws[:0]  # (v, a, h: unused)
    return centroidal_checked(mi, mf, gate_vector(bufs, lens, 1), gate_vector(bufs, lens, 0), z, z,
                              gate_matrix(bufs, lens, 3, lens[3] // n), z, ws)


def _c_vector(mip, mfp, nb1, bufs, lens):  # (q, v, a, par) → h_g or ḣ_g (6)
    mi, mf = gate_tables(mip, mfp, nb1)
    return centroidal_checked(mi, mf, gate_vector(bufs, lens, 3), gate_vector(bufs, lens, 0),
                              gate_vector(bufs, lens, 1), gate_vector(bufs, lens, 2),
                              gate_matrix(bufs, lens, 5, 0), gate_vector(bufs, lens, 5),
                              gate_vector(bufs, lens, 4))


_AG_C = _JC_C = _VEC_C = 0  # their addresses, set on first use
#: the single-state fast paths: ``entry(model, q, par)`` → A_g / J_c, ``entry(model, q, v, a,
#: par)`` → h_g / ḣ_g (``a`` of length 0 for h_g); an ndarray, a status code or None
#: (`dqdyn._engine.gate.gate_entry`)
AG_ENTRY = gate_entry(globals(), "_AG_C", _c_matrix, 2, 6, NV, scratch=True)
JC_ENTRY = gate_entry(globals(), "_JC_C", _c_matrix, 2, 3, NV, scratch=True)
VEC_ENTRY = gate_entry(globals(), "_VEC_C", _c_vector, 4, 6, -1, scratch=True)


@pjit
def centroidal_batch(mi, mf, par, Q, V, A, OUT, H, status):
    """`centroidal_rows` over a batch, in `BLOCKS` blocks of states (``prange``)."""
    N = np.int64(Q.shape[0])
    nblk = min(N, BLOCKS)
    for b in nb.prange(nblk):
        centroidal_rows(mi, mf, par, Q, V, A, OUT, H, status, b * N // nblk, (b + 1) * N // nblk)


__all__ = ["AG", "HG", "HGDOT", "JC", "centroidal_rows", "centroidal_batch", "AG_ENTRY", "JC_ENTRY",
           "VEC_ENTRY"]
