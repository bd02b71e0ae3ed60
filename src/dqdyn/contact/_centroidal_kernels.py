r"""The compiled centroidal quantities of a floating-base tree: one kernel call per state or per batch.

The floating-base route of `dqdyn.contact.centroidal` (its module docstring) in one compiled
pass per state.  `momentum_core` runs the composite-rigid-body algorithm's forward pass and
composite inertias (`dqdyn.dynamics.lagrange`'s ``world_pose``, ``world_inertia``,
``world_axes``, as `dqdyn.dynamics.lagrange.crba_core`) and keeps, per velocity coordinate,
its column wrench ``Î^C_i 𝒮_k`` ([Featherstone2008, ch. 6]): the system's momentum ``[f; τ]``
about F_0's origin in its axes, ``A_0``, whose projections on the base axes are the base rows
of ``M`` (less the armature: ``A_0`` holds none).  With the whole tree's mass ``m`` and CoM
``c`` from the same pass, by the shape of the result (the mode):

* `AG` (a result of 6 rows): ``A_g = [f; τ − c × f]`` (6, nv) [Orin2013];
* `JC` (3 rows): the CoM Jacobian ``f / m`` (3, nv);
* `HG` (a vector, no ``a``): ``h_g = A_0 v`` moved to the CoM the same way (6);
* `HGDOT` (a vector and ``a``): the base rows ``[τ_b; f_b]`` of ``rnea(q, v, a)``
  (`dqdyn.dynamics.newton_euler.ne_core`; base frame, base origin) less the base's armature
  times its acceleration ([Featherstone2008, ch. 5]), moved to the CoM with world axes,
  ``l̇ = R f_b``, ``k̇_g = R τ_b − (c − p_b) × l̇`` (``R``, ``p_b`` the base pose), plus
  gravity's ``[m g; 0]`` (6); the CoM from dqNE's own CoM poses, without the pass above.

A batch runs `centroidal_rows` per block of states (`centroidal_batch`, through
`dqdyn._engine.batching.run_chunked`), the code a single state runs, so a batch gives each
state's bits; a single state goes through the call gate (`AG_ENTRY`, `JC_ENTRY`, `HG_ENTRY`,
`HGDOT_ENTRY`).  The status is `dqdyn._engine.boundary`'s code of a bad input (a non-finite
entry, a non-unit quaternion, an overflow), which the Python front raises, or `NOT_FLOATING`:
a model outside this route (body 1 not a free joint on the world, another body on the world,
mimic joints), which `dqdyn.contact.centroidal` computes by its numpy route.
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np

from dqdyn._engine.batching import BLOCKS
from dqdyn._engine.boundary import BAD_OVERFLOW, BAD_SHAPE, BAD_V_FINITE, OK, check_finite, check_q
from dqdyn._engine.gate import NV, flat_workspace, gate_entry, gate_matrix, gate_tables, gate_vector
from dqdyn._engine.jit import kernel
from dqdyn._engine.views import unmanaged
from dqdyn.dynamics.articulated import _has_mimic
from dqdyn.dynamics.lagrange import (
    C_J,
    C_NCRBA,
    C_Y,
    add_rows,
    world_forward,
)
from dqdyn.dynamics.newton_euler import NSCRATCH, W_COLS, W_P, W_R, ne_core
from dqdyn.multibody.joints import FREE, joint_nv
from dqdyn.multibody.model import MF_ARMATURE, MF_COM, MF_GRAVITY, MF_MASS, MF_SCALE, MI_IQ, MI_IV, MI_JTYPE, MI_PARENT

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
def momentum_core(mi, mf, q, ws, A0):
    """``A0`` (6, nv): per velocity coordinate the system's momentum ``[f; τ]`` about F_0's origin
    in its axes, ``Î^C_i 𝒮_k`` for the axes ``k`` of each body ``i`` (the composite-rigid-body
    algorithm's column wrench, [Featherstone2008, ch. 6], as in
    `dqdyn.dynamics.lagrange.crba_core`, whose forward pass and composite inertias it shares;
    the projections on the ancestors' axes, the rest of ``M``, are not formed).  Afterwards
    ``ws[1, C_Y:C_Y+4]`` holds the whole tree's mass and first moment ``(m, m c)`` in F_0 and
    ``ws[1]`` the base pose.  Returns a status (`check_q`)."""
    st = check_q(mi, q)
    if st != OK:
        return st
    nb1 = mi.shape[0]
    world_forward(mi, mf, q, ws)
    for i in range(nb1 - 1, 0, -1):  # children first: Î^C_i is complete when i is reached
        si = mf[i, MF_SCALE]
        ivi = mi[i, MI_IV]
        m = ws[i, C_Y]
        hx, hy, hz = ws[i, C_Y + 1], ws[i, C_Y + 2], ws[i, C_Y + 3]
        Ixx, Ixy, Ixz = ws[i, C_Y + 4], ws[i, C_Y + 5], ws[i, C_Y + 6]
        Iyy, Iyz, Izz = ws[i, C_Y + 7], ws[i, C_Y + 8], ws[i, C_Y + 9]
        for k in range(joint_nv(mi[i, MI_JTYPE])):
            o = C_J + 6 * k
            w0, w1, w2 = ws[i, o], ws[i, o + 1], ws[i, o + 2]
            v0, v1, v2 = ws[i, o + 3], ws[i, o + 4], ws[i, o + 5]
            c = ivi + k  # F = Î^C_i 𝒮_k = (m v + ω × h) + ε (Ī_O ω + h × v)
            A0[0, c] = si * (m * v0 + (w1 * hz - w2 * hy))
            A0[1, c] = si * (m * v1 + (w2 * hx - w0 * hz))
            A0[2, c] = si * (m * v2 + (w0 * hy - w1 * hx))
            A0[3, c] = si * (Ixx * w0 + Ixy * w1 + Ixz * w2 + (hy * v2 - hz * v1))
            A0[4, c] = si * (Ixy * w0 + Iyy * w1 + Iyz * w2 + (hz * v0 - hx * v2))
            A0[5, c] = si * (Ixz * w0 + Iyz * w1 + Izz * w2 + (hx * v1 - hy * v0))
        lam = mi[i, MI_PARENT]
        if lam > 0:
            add_rows(ws, i, lam, C_Y, 10)
    return OK


@njit
def centroidal_state(mi, mf, q, v, a, out, h, wc, wn, tau, A0):
    """One state (module docstring): ``out`` (6 or 3, nv) for `AG` and `JC` (else (0, ·)), ``h``
    (6) for `HG` (``a`` of length 0) and `HGDOT`; ``wc``, ``wn`` the CRBA's and dqNE's
    workspaces, ``tau`` (nv), ``A0`` (6, max(nv, 6)) scratch.  Returns a status."""
    mi, mf, q, v, a = unmanaged(mi), unmanaged(mf), unmanaged(q), unmanaged(v), unmanaged(a)
    out, h, wc, wn = unmanaged(out), unmanaged(h), unmanaged(wc), unmanaged(wn)
    tau, A0 = unmanaged(tau), unmanaged(A0)
    if not floating(mi):
        return NOT_FLOATING
    rows = out.shape[0]
    n = mi[0, MI_IV]
    if rows == 0 and a.shape[0] > 0:  # HGDOT: dqNE alone (no composite-rigid-body pass)
        return _hgdot(mi, mf, q, v, a, h, wc, wn, tau)
    st = momentum_core(mi, mf, q, wc, A0)
    if st != OK:
        return st
    mt = max(wc[1, C_Y], 1e-300)
    cx, cy, cz = wc[1, C_Y + 1] / mt, wc[1, C_Y + 2] / mt, wc[1, C_Y + 3] / mt  # the CoM in F_0
    if rows == 6:  # AG: [f; τ − c × f]
        for j in range(n):
            f0, f1, f2 = A0[0, j], A0[1, j], A0[2, j]
            out[0, j], out[1, j], out[2, j] = f0, f1, f2
            out[3, j] = A0[3, j] - (cy * f2 - cz * f1)
            out[4, j] = A0[4, j] - (cz * f0 - cx * f2)
            out[5, j] = A0[5, j] - (cx * f1 - cy * f0)
        return OK
    if rows == 3:  # JC: f / m
        for r in range(3):
            for j in range(n):
                out[r, j] = A0[r, j] / mt
        return OK
    # HG: A_0 v moved to the CoM
    if check_finite(v, BAD_V_FINITE) != OK:
        return BAD_V_FINITE
    for r in range(6):
        s = 0.0
        for j in range(n):
            s += A0[r, j] * v[j]
        h[r] = s
    l0, l1, l2 = h[0], h[1], h[2]
    h[3] -= cy * l2 - cz * l1
    h[4] -= cz * l0 - cx * l2
    h[5] -= cx * l1 - cy * l0
    return _finite(h)


@njit
def _hgdot(mi, mf, q, v, a, h, wc, wn, tau):
    """`HGDOT`: the base rows ``[τ_b; f_b]`` of ``rnea(q, v, a)`` (`ne_core`; base frame, base
    origin) less the base's armature times its acceleration, moved to the CoM with world axes,
    ``l̇ = R f_b``, ``k̇_g = R τ_b − (c − p_b) × l̇``, plus gravity's ``[m g; 0]``.  The CoM
    comes from dqNE's own CoM poses (``x_{c_i}^{c_λ}``, rotation and position in ``wn``): the
    subtrees' masses and first moments about each CoM, summed children first,
    ``H_λ += m_i p_i + R_i H_i``, so that ``c − p_b = R (H_1 / m + c_1)`` (``c_1`` the base's
    CoM in its frame); ``wc``'s first four columns hold ``(m_i, H_i)``."""
    g = mf[0, MF_GRAVITY : MF_GRAVITY + 3]
    st = ne_core(mi, mf, g, q, v, a, _EMPTY2, wn, tau)
    if st != OK:
        return st
    nb1 = mi.shape[0]
    for i in range(1, nb1):
        wc[i, 0] = mf[i, MF_MASS]
        wc[i, 1] = wc[i, 2] = wc[i, 3] = 0.0
    for i in range(nb1 - 1, 1, -1):  # (body 1 is the root: floating)
        lam = mi[i, MI_PARENT]
        mi_, H0, H1, H2 = wc[i, 0], wc[i, 1], wc[i, 2], wc[i, 3]
        wc[lam, 0] += mi_
        for r in range(3):  # m_i p_i + R_i H_i (R row-major, F_{c_i} → F_{c_λ})
            o = W_R + 3 * r
            wc[lam, 1 + r] += mi_ * wn[i, W_P + r] + (wn[i, o] * H0 + wn[i, o + 1] * H1 + wn[i, o + 2] * H2)
    mt = max(wc[1, 0], 1e-300)
    e0 = wc[1, 1] / mt + mf[1, MF_COM]
    e1 = wc[1, 2] / mt + mf[1, MF_COM + 1]
    e2 = wc[1, 3] / mt + mf[1, MF_COM + 2]
    iv = mi[1, MI_IV]
    F = wc[nb1]
    for k in range(6):
        F[k] = tau[iv + k] - mf[1, MF_ARMATURE + k] * a[iv + k]
    for r in range(3):
        R0, R1, R2 = wn[1, W_R + 3 * r], wn[1, W_R + 3 * r + 1], wn[1, W_R + 3 * r + 2]
        h[r] = R0 * F[3] + R1 * F[4] + R2 * F[5]  # R f_b
        h[3 + r] = R0 * F[0] + R1 * F[1] + R2 * F[2]  # R τ_b
        wc[0, r] = R0 * e0 + R1 * e1 + R2 * e2  # c − p_b
    dx, dy, dz = wc[0, 0], wc[0, 1], wc[0, 2]
    l0, l1, l2 = h[0], h[1], h[2]
    h[3] -= dy * l2 - dz * l1
    h[4] -= dz * l0 - dx * l2
    h[5] -= dx * l1 - dy * l0
    for k in range(3):
        h[k] += mt * g[k]
    return _finite(h)


@njit
def _finite(h):
    """``OK``, or `BAD_OVERFLOW` where finite inputs overflowed."""
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
    tau = np.empty(n)
    A0 = np.empty((6, max(n, 6)))
    bv, ba = V.shape[0] > 1, A.shape[0] > 1
    z = np.int64(0)
    for k in range(s, e):
        status[k] = centroidal_state(mi, mf, Q[k], V[k if bv else z], A[k if ba else z], OUT[k], H[k],
                                     wc, wn, tau, A0)


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
    if bad or q.shape[0] != mi[0, MI_IQ] or ws.shape[0] < nc + nn + n + 6 * m6:
        return BAD_SHAPE
    o = nc + nn
    return centroidal_state(mi, mf, q, v, a, out.reshape((rows, n)), h,
                            flat_workspace(ws, nb1 + 1, C_NCRBA), ws[nc:o].reshape((nb1 + NSCRATCH, W_COLS)),
                            ws[o:o + n], ws[o + n:o + n + 6 * m6].reshape((6, m6)))


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
