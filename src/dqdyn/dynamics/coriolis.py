"""``C(q, q̇)``, the Christoffel-consistent factorization of the Coriolis and centrifugal terms (the one Pinocchio computes):
with ``B(Î, ξ) u = ½ [ξ × (Î u) − Î (ξ × u) + u × (Î ξ)]`` (the dual quaternion cross product
acts on twists and on wrenches alike: ``ξ × ζ`` is the coadjoint action ``ξ ×* ζ``),
``C = Σ_b J_bᵀ (Î_b J̇_b + B(Î_b, ξ_b) J_b)``, evaluated over subtrees in ``F_0``; the columns'
derivatives are ``𝒮̇_k = ξ_i^0 × 𝒮_k + Ad(x_i^0) Ṡ_k`` [Silva2022, Lemma 2.1].  Then
``C q̇ = nonlinear_effects − gravity`` and ``Ṁ − 2C`` is skew-symmetric.

It runs on the world-frame helpers of `lagrange` (poses, inertias and motion axes of the
bodies in ``F_0``, the workspace columns ``C_*``).
"""

from __future__ import annotations

import numba as nb
import numpy as np

from dqdyn._engine.batching import BLOCKS, run_chunked
from dqdyn._engine.boundary import (
    BAD_SHAPE,
    BAD_V_FINITE,
    ND,
    OK,
    as_vector_batch,
    check_finite,
    check_q,
    lazy_batch,
    raise_status,
)
from dqdyn._engine.gate import (
    NV,
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
from dqdyn._engine.views import unmanaged
from dqdyn.algebra._core import jit
from dqdyn.dynamics.lagrange import (
    C_DJ,
    C_H,
    C_J,
    C_NCOR,
    C_S,
    C_V,
    C_Y,
    X_P,
    X_R,
    _out,
    _q_in,
    _raiser,
    add_rows,
    world_axes,
    world_inertia,
    world_pose,
    world_root,
)
from dqdyn.multibody.joints import (
    PLANAR,
    joint_column_dot,
    joint_nv,
)
from dqdyn.multibody.model import (
    MF_SCALE,
    MI_IQ,
    MI_IV,
    MI_JTYPE,
    MI_PARENT,
    Model,
)

njit = kernel()
pjit = kernel(parallel=True)
_empty = np.empty  # (a module global: one dictionary lookup less per fast-path call)


@jit  # (IR-inlined into its entry, gate and batch kernels: a call would cost 0.3-0.5 µs)
def coriolis_core(mi, mf, q, v, ws, C):
    """``C = C(q, v)`` (zeroed here), Christoffel-consistent, in F_0 (module docstring).

    ``B(Î, ξ) = ½ [ξ ×* Î − Î ξ× + (Î ξ)×̄]`` (``(Î ξ)×̄ u = u ×* (Î ξ)``) has, written out with
    ``Î ξ = f₀ + ε τ₀`` (the momentum), only two non-zero blocks:
    ``B u = −f₀ × u_ω + ε K u_ω``, ``K = ½ (S − [τ₀]×)``,
    ``S = 2 (v·h) 1 − h vᵀ − v hᵀ + [ω]× Ī_O + ([ω]× Ī_O)ᵀ`` (symmetric).  B is linear in the
    body, so its subtree sum needs only the sums of ``f₀``, ``τ₀`` and ``S``.  Then for an axis
    ``𝒮_k`` of body ``i``: ``F = Î^C 𝒮̇_k + B^C 𝒮_k`` gives the entries ``⟨𝒮_l, F⟩`` of the
    ancestors' rows, and ``⟨𝒮̇_l, Î^C 𝒮_k⟩ + ⟨𝒮_k, B^C 𝒮_l⟩`` (the latter is
    ``𝒮_{l,ω} · (Kᵀ 𝒮_{k,ω} + f₀ × 𝒮_{k,v})``) those of row ``k``.
    """
    st = check_q(mi, q)
    if st != OK:
        return st
    st = check_finite(v, BAD_V_FINITE)
    if st != OK:
        return st
    nb1 = mi.shape[0]
    sc = ws[nb1]
    ax = sc[0:3]
    xj = sc[3:11]
    xl = sc[11:19]
    col = sc[19:25]
    world_root(ws)
    for k in range(6):
        ws[0, C_V + k] = 0.0
    for i in range(1, nb1):
        jt = mi[i, MI_JTYPE]
        world_pose(mi, mf, q, ws, i, ax, xj, xl)
        world_inertia(mf, i, ws)
        n = world_axes(mi, mf, q, ws, i, ax, col)
        # ξ_{0,i}^0 = ξ_{0,λ}^0 + Σ_k 𝒮_k v_k   (mimic joints: scaled master velocity)
        lam = mi[i, MI_PARENT]
        iv = mi[i, MI_IV]
        for r in range(6):
            ws[i, C_V + r] = ws[lam, C_V + r]
        for k in range(n):
            vk = v[iv + k] * mf[i, MF_SCALE] if n == 1 else v[iv + k]
            for r in range(6):
                ws[i, C_V + r] += ws[i, C_J + 6 * k + r] * vk
        w0, w1, w2 = ws[i, C_V], ws[i, C_V + 1], ws[i, C_V + 2]
        u0, u1, u2 = ws[i, C_V + 3], ws[i, C_V + 4], ws[i, C_V + 5]
        # 𝒮̇_k = ξ^0 × 𝒮_k + Ad(x_i^0) Ṡ_k   (Lemma 2.1; Ṡ ≠ 0 only for the planar joint)
        for k in range(n):
            o = C_J + 6 * k
            s0, s1, s2 = ws[i, o], ws[i, o + 1], ws[i, o + 2]
            s3, s4, s5 = ws[i, o + 3], ws[i, o + 4], ws[i, o + 5]
            d = C_DJ + 6 * k
            ws[i, d] = w1 * s2 - w2 * s1
            ws[i, d + 1] = w2 * s0 - w0 * s2
            ws[i, d + 2] = w0 * s1 - w1 * s0
            ws[i, d + 3] = (w1 * s5 - w2 * s4) + (u1 * s2 - u2 * s1)
            ws[i, d + 4] = (w2 * s3 - w0 * s5) + (u2 * s0 - u0 * s2)
            ws[i, d + 5] = (w0 * s4 - w1 * s3) + (u0 * s1 - u1 * s0)
            if jt == PLANAR:
                joint_column_dot(jt, q, mi[i, MI_IQ], v, iv, mf[i, MF_SCALE], k, col)
                e0, e1, e2 = col[0], col[1], col[2]
                b0 = ws[i, X_R] * e0 + ws[i, X_R + 1] * e1 + ws[i, X_R + 2] * e2
                b1 = ws[i, X_R + 3] * e0 + ws[i, X_R + 4] * e1 + ws[i, X_R + 5] * e2
                b2 = ws[i, X_R + 6] * e0 + ws[i, X_R + 7] * e1 + ws[i, X_R + 8] * e2
                e3, e4, e5 = col[3], col[4], col[5]
                px, py, pz = ws[i, X_P], ws[i, X_P + 1], ws[i, X_P + 2]
                ws[i, d] += b0
                ws[i, d + 1] += b1
                ws[i, d + 2] += b2
                ws[i, d + 3] += (ws[i, X_R] * e3 + ws[i, X_R + 1] * e4 + ws[i, X_R + 2] * e5
                                 + (py * b2 - pz * b1))
                ws[i, d + 4] += (ws[i, X_R + 3] * e3 + ws[i, X_R + 4] * e4 + ws[i, X_R + 5] * e5
                                 + (pz * b0 - px * b2))
                ws[i, d + 5] += (ws[i, X_R + 6] * e3 + ws[i, X_R + 7] * e4 + ws[i, X_R + 8] * e5
                                 + (px * b1 - py * b0))
        # momentum Î ξ = f₀ + ε τ₀ and the symmetric part S of B's lower-left block
        m = ws[i, C_Y]
        hx, hy, hz = ws[i, C_Y + 1], ws[i, C_Y + 2], ws[i, C_Y + 3]
        Ixx, Ixy, Ixz = ws[i, C_Y + 4], ws[i, C_Y + 5], ws[i, C_Y + 6]
        Iyy, Iyz, Izz = ws[i, C_Y + 7], ws[i, C_Y + 8], ws[i, C_Y + 9]
        ws[i, C_H] = m * u0 + (w1 * hz - w2 * hy)
        ws[i, C_H + 1] = m * u1 + (w2 * hx - w0 * hz)
        ws[i, C_H + 2] = m * u2 + (w0 * hy - w1 * hx)
        ws[i, C_H + 3] = Ixx * w0 + Ixy * w1 + Ixz * w2 + (hy * u2 - hz * u1)
        ws[i, C_H + 4] = Ixy * w0 + Iyy * w1 + Iyz * w2 + (hz * u0 - hx * u2)
        ws[i, C_H + 5] = Ixz * w0 + Iyz * w1 + Izz * w2 + (hx * u1 - hy * u0)
        # P = [ω]× Ī_O (rows), S = 2 (v·h) 1 − h vᵀ − v hᵀ + P + Pᵀ
        P00 = w1 * Ixz - w2 * Ixy
        P01 = w1 * Iyz - w2 * Iyy
        P02 = w1 * Izz - w2 * Iyz
        P10 = w2 * Ixx - w0 * Ixz
        P11 = w2 * Ixy - w0 * Iyz
        P12 = w2 * Ixz - w0 * Izz
        P20 = w0 * Ixy - w1 * Ixx
        P21 = w0 * Iyy - w1 * Ixy
        P22 = w0 * Iyz - w1 * Ixz
        vh = 2.0 * (u0 * hx + u1 * hy + u2 * hz)
        ws[i, C_S] = vh - 2.0 * hx * u0 + 2.0 * P00
        ws[i, C_S + 1] = -(hx * u1 + u0 * hy) + P01 + P10
        ws[i, C_S + 2] = -(hx * u2 + u0 * hz) + P02 + P20
        ws[i, C_S + 3] = vh - 2.0 * hy * u1 + 2.0 * P11
        ws[i, C_S + 4] = -(hy * u2 + u1 * hz) + P12 + P21
        ws[i, C_S + 5] = vh - 2.0 * hz * u2 + 2.0 * P22
    for r in range(C.shape[0]):
        for c in range(C.shape[1]):
            C[r, c] = 0.0
    for i in range(nb1 - 1, 0, -1):
        ni = joint_nv(mi[i, MI_JTYPE])
        si = mf[i, MF_SCALE]
        ivi = mi[i, MI_IV]
        m = ws[i, C_Y]
        hx, hy, hz = ws[i, C_Y + 1], ws[i, C_Y + 2], ws[i, C_Y + 3]
        Ixx, Ixy, Ixz = ws[i, C_Y + 4], ws[i, C_Y + 5], ws[i, C_Y + 6]
        Iyy, Iyz, Izz = ws[i, C_Y + 7], ws[i, C_Y + 8], ws[i, C_Y + 9]
        fx, fy, fz = ws[i, C_H], ws[i, C_H + 1], ws[i, C_H + 2]
        tx, ty, tz = 0.5 * ws[i, C_H + 3], 0.5 * ws[i, C_H + 4], 0.5 * ws[i, C_H + 5]
        Sxx, Sxy, Sxz = 0.5 * ws[i, C_S], 0.5 * ws[i, C_S + 1], 0.5 * ws[i, C_S + 2]
        Syy, Syz, Szz = 0.5 * ws[i, C_S + 3], 0.5 * ws[i, C_S + 4], 0.5 * ws[i, C_S + 5]
        for k in range(ni):
            o = C_J + 6 * k
            w0, w1, w2 = ws[i, o], ws[i, o + 1], ws[i, o + 2]
            v0, v1, v2 = ws[i, o + 3], ws[i, o + 4], ws[i, o + 5]
            d = C_DJ + 6 * k
            e0, e1, e2 = ws[i, d], ws[i, d + 1], ws[i, d + 2]
            b0, b1, b2 = ws[i, d + 3], ws[i, d + 4], ws[i, d + 5]
            # Ag = Î^C 𝒮_k
            A0 = m * v0 + (w1 * hz - w2 * hy)
            A1 = m * v1 + (w2 * hx - w0 * hz)
            A2 = m * v2 + (w0 * hy - w1 * hx)
            A3 = Ixx * w0 + Ixy * w1 + Ixz * w2 + (hy * v2 - hz * v1)
            A4 = Ixy * w0 + Iyy * w1 + Iyz * w2 + (hz * v0 - hx * v2)
            A5 = Ixz * w0 + Iyz * w1 + Izz * w2 + (hx * v1 - hy * v0)
            # ½ S 𝒮_ω and ½ τ₀ × 𝒮_ω
            s0 = Sxx * w0 + Sxy * w1 + Sxz * w2
            s1 = Sxy * w0 + Syy * w1 + Syz * w2
            s2 = Sxz * w0 + Syz * w1 + Szz * w2
            c0 = ty * w2 - tz * w1
            c1 = tz * w0 - tx * w2
            c2 = tx * w1 - ty * w0
            # F = Î^C 𝒮̇_k + B^C 𝒮_k,  B 𝒮 = 𝒮_ω × f₀ + ε K 𝒮_ω
            F0 = m * b0 + (e1 * hz - e2 * hy) + (w1 * fz - w2 * fy)
            F1 = m * b1 + (e2 * hx - e0 * hz) + (w2 * fx - w0 * fz)
            F2 = m * b2 + (e0 * hy - e1 * hx) + (w0 * fy - w1 * fx)
            F3 = Ixx * e0 + Ixy * e1 + Ixz * e2 + (hy * b2 - hz * b1) + (s0 - c0)
            F4 = Ixy * e0 + Iyy * e1 + Iyz * e2 + (hz * b0 - hx * b2) + (s1 - c1)
            F5 = Ixz * e0 + Iyz * e1 + Izz * e2 + (hx * b1 - hy * b0) + (s2 - c2)
            # ρ = Kᵀ 𝒮_ω + f₀ × 𝒮_v
            R0 = s0 + c0 + (fy * v2 - fz * v1)
            R1 = s1 + c1 + (fz * v0 - fx * v2)
            R2 = s2 + c2 + (fx * v1 - fy * v0)
            c = ivi + k
            j = i
            while j > 0:
                sj = mf[j, MF_SCALE] * si
                ivj = mi[j, MI_IV]
                for l in range(joint_nv(mi[j, MI_JTYPE])):
                    p = C_J + 6 * l
                    z0, z1, z2 = ws[j, p], ws[j, p + 1], ws[j, p + 2]
                    # row l (ancestor or same joint), column k: ⟨𝒮_l, F⟩
                    C[ivj + l, c] += sj * (z0 * F3 + z1 * F4 + z2 * F5 + ws[j, p + 3] * F0
                                           + ws[j, p + 4] * F1 + ws[j, p + 5] * F2)
                    if j != i:
                        # row k (descendant), column l: ⟨𝒮̇_l, Ag⟩ + ⟨𝒮_k, B^C 𝒮_l⟩
                        p = C_DJ + 6 * l
                        C[c, ivj + l] += sj * (
                            ws[j, p] * A3 + ws[j, p + 1] * A4 + ws[j, p + 2] * A5
                            + ws[j, p + 3] * A0 + ws[j, p + 4] * A1 + ws[j, p + 5] * A2
                            + z0 * R0 + z1 * R1 + z2 * R2)
                j = mi[j, MI_PARENT]
        lam = mi[i, MI_PARENT]
        if lam > 0:
            add_rows(ws, i, lam, C_Y, 10)
            add_rows(ws, i, lam, C_H, 12)
    return OK


@jit
def coriolis_checked(mi, mf, q, v, C, ws):
    """Single-state `coriolis_matrix` on the flat scratch ``ws``, lengths checked."""
    nv = mi[0, MI_IV]
    nb1 = mi.shape[0]
    if (q.shape[0] != mi[0, MI_IQ] or v.shape[0] != nv or C.shape[0] != nv or C.shape[1] != nv
            or ws.shape[0] < (nb1 + 1) * C_NCOR):
        return BAD_SHAPE
    return coriolis_core(mi, mf, q, v, flat_workspace(ws, nb1 + 1, C_NCOR), C)


@njit
def coriolis_entry(mi, mf, q, v, C):
    return coriolis_checked(mi, mf, q, v, C, np.empty((mi.shape[0] + 1) * C_NCOR))


_CORIOLIS = None  # coriolis_entry, armed on first use (gate.armed_call)
CORIOLIS_SIG = (T_MI, T_MF, T_V, T_V, T_M)


# gate kernel (see gate.gate_address): raw buffers → coriolis_checked
def _c_coriolis(mip, mfp, nb1, bufs, lens):
    mi, mf = gate_tables(mip, mfp, nb1)
    return coriolis_checked(mi, mf, gate_vector(bufs, lens, 0), gate_vector(bufs, lens, 1),
                            gate_matrix(bufs, lens, 3, mi[0, MI_IV]), gate_vector(bufs, lens, 2))


_CORIOLIS_C = 0  # its address, set on first use
_CORIOLIS_ENTRY = gate_entry(globals(), "_CORIOLIS_C", _c_coriolis, 2, NV, NV, scratch=True)


@njit
def coriolis_rows(mi, mf, Q, V, C, status, s, e):
    """States ``s`` to ``e`` of `coriolis_batch` (see
    `dqdyn.dynamics.newton_euler.rnea_rows`)."""
    mi, mf, Q, V = unmanaged(mi), unmanaged(mf), unmanaged(Q), unmanaged(V)
    C, status = unmanaged(C), unmanaged(status)
    ws = np.empty((mi.shape[0] + 1, C_NCOR))
    for k in range(s, e):
        status[k] = coriolis_core(mi, mf, Q[k], V[k], ws, C[k])


@pjit
def coriolis_batch(mi, mf, Q, V, C, status):
    N = np.int64(Q.shape[0])
    nblk = min(N, BLOCKS)
    for b in nb.prange(nblk):
        coriolis_rows(mi, mf, Q, V, C, status, b * N // nblk, (b + 1) * N // nblk)


@fast_front(_CORIOLIS_ENTRY)
def coriolis_matrix(model: Model, q, v, *, out=None) -> np.ndarray:
    """Coriolis matrix ``C(q, v)`` (..., nv, nv): ``C v = nonlinear_effects − gravity`` and
    ``Ṁ − 2C`` skew-symmetric (the Christoffel-consistent factorization, as in Pinocchio's
    ``computeCoriolisMatrix``, in dqdyn's velocity layouts)."""
    nv = model.nv
    r = _CORIOLIS_ENTRY(model, q, v) if out is None else _CORIOLIS_ENTRY(model, q, v, out)
    if type(r) is ND:
        return r
    if r is not None and r != BAD_SHAPE:
        raise_status(model, r)
    if type(q) is ND and q.ndim == 1:
        C = _empty((nv, nv)) if out is None else out
        try:
            st = _CORIOLIS(model.mi, model.mf, q, v, C)
        except TypeError:
            st = armed_call(globals(), "_CORIOLIS", coriolis_entry, CORIOLIS_SIG, (model.mi, model.mf, q, v, C))
        if st == OK:
            return C
        if st is not None and st != BAD_SHAPE:
            raise_status(model, st)
    Q, bq = _q_in(model, q)
    V, bv = as_vector_batch(v, nv, "v", "a velocity, model.nv entries")
    (Q, V), batch, N = lazy_batch([Q, V], [bq, bv])
    C = _out(model, out, batch, (nv, nv))
    run_chunked(coriolis_batch, (model.mi, model.mf), [Q, V], [C], N, (), _raiser(model, batch))
    return C.reshape(batch + (nv, nv))


__all__ = ["coriolis_matrix"]
