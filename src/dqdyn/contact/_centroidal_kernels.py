r"""The compiled centroidal quantities of a floating-base tree: one kernel call per state or per batch.

The route of `dqdyn.contact.centroidal` (its module docstring) in one compiled pass per state:
``M`` by the CRBA (`dqdyn.dynamics.lagrange.crba_core`), whose base rows ``[M_τ; M_f]`` less the
base's armature are the system's momentum about the base origin in the base axes
([Featherstone2008, ch. 6]); the base orientation ``R`` from the same pass (the CRBA's world
pose of body 1); the transport of wrench rows to the CoM with world axes
``T = [[0, R], [R, −R [c_b]×]]`` with ``m [c_b]×`` the base-base block's upper-right block
([Featherstone2008, ch. 2]); then, by the shape of the result (the mode):

* `AG` (a result of 6 rows): ``A_g = T [M_τ; M_f]`` (6, nv) [Orin2013];
* `JC` (3 rows): the CoM Jacobian ``R M_f / m`` (3, nv);
* `HG` (a vector, no ``a``): ``h_g = A_g v`` (6);
* `HGDOT` (a vector and ``a``): ``ḣ_g = T F + [m g; 0]`` (6), with ``F`` the base rows of
  ``rnea(q, v, a)`` (`dqdyn.dynamics.newton_euler.ne_core`) less the base's armature times its
  acceleration ([Featherstone2008, ch. 5]);

with ``m`` the mass of the moving bodies (`Model.total_mass`).  A batch runs `centroidal_rows`
per block of states (`centroidal_batch`, through `dqdyn._engine.batching.run_chunked`), the
code a single state runs, so a batch gives each state's bits; a single state goes through the
call gate (`AG_ENTRY`, `JC_ENTRY`, `HG_ENTRY`, `HGDOT_ENTRY`).  The status is
`dqdyn._engine.boundary`'s code of a bad input (a non-finite entry, a non-unit quaternion, an
overflow), which the Python front raises, or `NOT_FLOATING`: a model outside this route (body 1
not a free joint on the world, another body on the world, mimic joints), which
`dqdyn.contact.centroidal` computes by its numpy route.
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
from dqdyn.dynamics.articulated import _has_mimic
from dqdyn.dynamics.lagrange import C_NCRBA, X_R, crba_core
from dqdyn.dynamics.newton_euler import NSCRATCH, W_COLS, ne_core
from dqdyn.multibody.joints import FREE
from dqdyn.multibody.model import MF_ARMATURE, MF_GRAVITY, MF_MASS, MI_IQ, MI_IV, MI_JTYPE, MI_PARENT

njit = kernel(error_model="numpy")
pjit = kernel(parallel=True, error_model="numpy")

#: modes (module docstring)
AG, HG, HGDOT, JC = 0, 1, 2, 3
#: status: the model is not a floating-base tree of this route (the numpy route computes it)
NOT_FLOATING = 908

_EMPTY2 = np.empty((0, 6))


@njit
def floating(mi):
    """Whether body 1 is moved by a free joint from the world, every other body descends from it
    and no joint is a mimic joint (`dqdyn.contact.centroidal._base`'s test)."""
    nb1 = mi.shape[0]
    if nb1 < 2 or mi[1, MI_JTYPE] != FREE or mi[1, MI_PARENT] != 0:
        return False
    for i in range(2, nb1):
        if mi[i, MI_PARENT] == 0:
            return False
    return not _has_mimic(mi)


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
def _rows_times(T, M, iv, r0, r1, k0, out, div):
    """``out[r − r0, j] = (Σ_k T[r, k] M[iv + k, j]) / div``, ``k0 ≤ k < 6``, rows ``r0 ≤ r < r1``."""
    n = M.shape[1]
    for r in range(r0, r1):
        for j in range(n):
            s = 0.0
            for k in range(k0, 6):
                s += T[r, k] * M[iv + k, j]
            out[r - r0, j] = s / div


@njit
def centroidal_state(mi, mf, q, v, a, out, h, wc, wn, M, tau, T, AGs):
    """One state (module docstring): ``out`` (6 or 3, nv) for `AG` and `JC` (else (0, ·)), ``h``
    (6) for `HG` (``a`` of length 0) and `HGDOT`; ``wc``, ``wn`` the CRBA's and dqNE's
    workspaces, ``M`` (nv, nv), ``tau`` (nv), ``T`` (6, 6), ``AGs`` (6, max(nv, 6)) scratch.
    Returns a status."""
    mi, mf, q, v, a = unmanaged(mi), unmanaged(mf), unmanaged(q), unmanaged(v), unmanaged(a)
    out, h, wc, wn = unmanaged(out), unmanaged(h), unmanaged(wc), unmanaged(wn)
    M, tau, T, AGs = unmanaged(M), unmanaged(tau), unmanaged(T), unmanaged(AGs)
    if not floating(mi):
        return NOT_FLOATING
    rows = out.shape[0]
    mt = 0.0
    for i in range(1, mi.shape[0]):
        mt += mf[i, MF_MASS]
    iv = mi[1, MI_IV]
    st = crba_core(mi, mf, q, wc, M)
    if st != OK:
        return st
    for k in range(6):  # the base's armature is not momentum of the bodies
        M[iv + k, iv + k] -= mf[1, MF_ARMATURE + k]
    _transport(wc, M, iv, mt, T)
    if rows == 6:  # AG
        _rows_times(T, M, iv, 0, 6, 0, out, 1.0)
        return OK
    if rows == 3:  # JC
        _rows_times(T, M, iv, 0, 3, 3, out, mt)
        return OK
    if a.shape[0] == 0:  # HG
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
    for r in range(6):
        if not math.isfinite(h[r]):
            return BAD_OVERFLOW
    return OK


@njit
def centroidal_rows(mi, mf, Q, V, A, OUT, H, status, s, e):
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
        status[k] = centroidal_state(mi, mf, Q[k], V[k if bv else z], A[k if ba else z], OUT[k], H[k],
                                     wc, wn, M, tau, T, AGs)


@njit
def centroidal_checked(mi, mf, q, v, a, out, h, ws):
    """One state through the call gate (`dqdyn._engine.gate`): the lengths checked, the
    workspaces carved from the model's scratch ``ws`` (`BAD_SHAPE` where it is too small: the
    caller's general path allocates its own)."""
    n = mi[0, MI_IV]
    nb1 = mi.shape[0]
    rows = out.shape[0]
    if rows:
        bad = rows * out.shape[1] != rows * n or h.shape[0] != 0 or v.shape[0] != 0 or a.shape[0] != 0
    else:
        bad = h.shape[0] != 6 or v.shape[0] != n or (a.shape[0] != 0 and a.shape[0] != n)
    nc, nn = (nb1 + 1) * C_NCRBA, (nb1 + NSCRATCH) * W_COLS
    m6 = max(n, 6)
    if bad or q.shape[0] != mi[0, MI_IQ] or ws.shape[0] < nc + nn + n * n + n + 36 + 6 * m6:
        return BAD_SHAPE
    o = nc + nn
    o1 = o + n * n
    o2 = o1 + n
    return centroidal_state(mi, mf, q, v, a, out.reshape((rows, n)), h,
                            flat_workspace(ws, nb1 + 1, C_NCRBA), ws[nc:o].reshape((nb1 + NSCRATCH, W_COLS)),
                            ws[o:o1].reshape((n, n)), ws[o1:o2], ws[o2:o2 + 36].reshape((6, 6)),
                            ws[o2 + 36:o2 + 36 + 6 * m6].reshape((6, m6)))


# gate kernels (see gate.gate_address): raw buffers (inputs, the model's scratch, the result)
def _c_matrix(mip, mfp, nb1, bufs, lens):  # (q) → A_g (6, nv) or J_c (3, nv)
    mi, mf = gate_tables(mip, mfp, nb1)
    ws = gate_vector(bufs, lens, 1)
    z = ws[:0]  # (v, a, h: unused)
    return centroidal_checked(mi, mf, gate_vector(bufs, lens, 0), z, z,
                              gate_matrix(bufs, lens, 2, lens[2] // max(mi[0, MI_IV], 1)), z, ws)


def _c_hg(mip, mfp, nb1, bufs, lens):  # (q, v) → h_g (6)
    mi, mf = gate_tables(mip, mfp, nb1)
    ws = gate_vector(bufs, lens, 2)
    return centroidal_checked(mi, mf, gate_vector(bufs, lens, 0), gate_vector(bufs, lens, 1), ws[:0],
                              gate_matrix(bufs, lens, 3, 0), gate_vector(bufs, lens, 3), ws)


def _c_hgdot(mip, mfp, nb1, bufs, lens):  # (q, v, a) → ḣ_g (6)
    mi, mf = gate_tables(mip, mfp, nb1)
    return centroidal_checked(mi, mf, gate_vector(bufs, lens, 0), gate_vector(bufs, lens, 1),
                              gate_vector(bufs, lens, 2), gate_matrix(bufs, lens, 4, 0),
                              gate_vector(bufs, lens, 4), gate_vector(bufs, lens, 3))


_AG_C = _JC_C = _HG_C = _HGDOT_C = 0  # their addresses, set on first use
#: the single-state fast paths ``entry(model, q[, v[, a]])`` (`dqdyn._engine.gate.gate_entry`):
#: an ndarray, a status code or None
AG_ENTRY = gate_entry(globals(), "_AG_C", _c_matrix, 1, 6, NV, scratch=True)
JC_ENTRY = gate_entry(globals(), "_JC_C", _c_matrix, 1, 3, NV, scratch=True)
HG_ENTRY = gate_entry(globals(), "_HG_C", _c_hg, 2, 6, -1, scratch=True)
HGDOT_ENTRY = gate_entry(globals(), "_HGDOT_C", _c_hgdot, 3, 6, -1, scratch=True)


@pjit
def centroidal_batch(mi, mf, Q, V, A, OUT, H, status):
    """`centroidal_rows` over a batch, in `BLOCKS` blocks of states (``prange``)."""
    N = np.int64(Q.shape[0])
    nblk = min(N, BLOCKS)
    for b in nb.prange(nblk):
        centroidal_rows(mi, mf, Q, V, A, OUT, H, status, b * N // nblk, (b + 1) * N // nblk)


__all__ = ["AG", "HG", "HGDOT", "JC", "NOT_FLOATING", "floating", "centroidal_rows", "centroidal_batch",
           "AG_ENTRY", "JC_ENTRY", "HG_ENTRY", "HGDOT_ENTRY"]
