r"""The compiled contact and impulse dynamics: one kernel call per state or per batch.

For one state `_kkt_state` computes, in one compiled pass:

* ``M`` by the CRBA (`dqdyn.dynamics.lagrange.crba_core`) and, for contact dynamics,
  ``h = C v + g`` by dqNE at ``v̇ = 0`` (`dqdyn.dynamics.newton_euler.ne_core`, as
  ``nonlinear_effects``);
* the rows ``A`` and drifts of the contacts from the frame Jacobian and ``J̇ v`` in the contact
  frame (`dqdyn.kinematics.jacobians.jacobian_drift_kernel`, the kernel `PointContact.rows` /
  `FrameContact.rows` call): a point contact's three linear rows with the classical drift
  ``(J̇_b v)_v + ω_b × v_b``, a frame contact's six rows as ``[v; ω]``, then the Baumgarte terms
  ``b = −drift − kd A v − kp e`` ([Baumgarte1972]; ``e`` as in `dqdyn.contact.contacts`);
* the KKT solve of `dqdyn.contact._kkt`: ``M = Lᵀ L`` on the tree's sparsity pattern
  (`dqdyn._engine.linalg.tree_factor_r`, [Featherstone2008, §6.5]), ``W = L⁻ᵀ Aᵀ`` (each
  contact row stays on the DoFs of its path to the root), the Delassus matrix ``G = Wᵀ W``,
  and the direct or proximal solve ([Carpentier2021]) with the same stopping rule.

Impulse dynamics ([Featherstone2008, ch. 11]) is the same solve with ``r₀ = M v⁻`` and
``b = −e A v⁻``.  A batch runs `kkt_rows` per block of states (`kkt_batch`, through
`dqdyn._engine.batching.run_chunked`), the code a single state runs, so a batch gives each
state's bits.

The contact set is a float array ``spec`` (one row of `SPEC` entries per contact, built once
per contact and model by ``_Contact._kernel_spec`` and stacked by `dqdyn.contact._kkt.contact_table`): ``[body, dim, placement (8), kp, kd, has_target,
target (12)]`` — a point contact's target is the world point (3), a frame contact's the rotation
``R*`` (9, row-major) then the position ``p*`` (3) of its pose.  ``par = [ε, μ (−1: no proximal
term), max_iter, tol, restitution, mode]`` (mode 0: contact dynamics, 1: impulse dynamics).

Status: `dqdyn._engine.boundary`'s codes for bad inputs (a non-finite entry, a non-unit
quaternion), or one of `FALLBACK_CODES` — a mass matrix that is not positive definite, a
singular or suspect Delassus matrix, proximal iterations that do not converge, an overflow, a
model with mimic joints — on which the Python front runs the numpy path of `_kkt`, which names
the problem (or, for a suspect Delassus matrix, clears it by its eigenvalues).

A redundant contact set (a pivot of the Cholesky factor of ``G`` at or below ``10⁻⁸ max_i G_ii``,
`_kkt`'s test; e.g. three welded feet of a quadruped, or a contact given twice) runs the numpy
path too (status `REDUNDANT`): with ``G`` singular the share of the multipliers along its null
space is set by the rounding of the solves, amplified by ``1/μ`` (about 10⁻⁸ of the forces for
``μ = 10⁻⁸``), and the numpy path's LAPACK solves are the ones the minimum-norm split is pinned on.
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np

from dqdyn._engine.batching import BLOCKS
from dqdyn._engine.boundary import BAD_SHAPE, BAD_TAU_FINITE, BAD_V_FINITE, OK, check_finite
from dqdyn._engine.gate import gate_address, gate_tables, gate_vector
from dqdyn._engine.jit import kernel
from dqdyn._engine.linalg import (
    chol_factor_r,
    dot4,
    lower_solve_r,
    lower_t_solve_r,
    tree_factor_r,
    tree_l_mul,
    tree_l_solve_r,
    tree_lt_solve_r,
)
from dqdyn._engine.views import unmanaged, view
from dqdyn.algebra._core import pose_translation
from dqdyn.constraints.base import frame_rotation
from dqdyn.dynamics.articulated import _has_mimic
from dqdyn.dynamics.lagrange import C_J, C_NCRBA, X_P, X_R, crba_core
from dqdyn.dynamics.newton_euler import NSCRATCH, W_COLS, W_XI, W_XID, ne_core
from dqdyn.kinematics.jacobians import jacobian_drift_kernel
from dqdyn.multibody.model import MF_COM, MF_GRAVITY, MF_SCALE, MI_IQ, MI_IV, MI_NV, MI_PARENT, dof_parents

njit = kernel(error_model="numpy")
pjit = kernel(parallel=True, error_model="numpy")

#: entries of one contact's row of ``spec`` (module docstring)
SPEC = 25
S_BODY, S_DIM, S_PL, S_KP, S_KD, S_HAS_T, S_T = 0, 1, 2, 10, 11, 12, 13

#: the kernel's own status codes (between boundary's input codes and BAD_UNIT): each sends
#: the call down the numpy path, which raises the exception that names the problem
SINGULAR_MASS = 901  # Cholesky of M failed
SINGULAR_DELASSUS = 902  # direct solve with ε = 0: a small pivot of G's factor (eigenvalue test in numpy)
NOT_CONVERGED = 903  # proximal iterations ran out
NON_FINITE = 904  # NaN / inf in the result
UNSUPPORTED = 905  # mimic joints (their rows and M are folded in numpy)
REDUNDANT = 906  # G singular or nearly (a redundant contact set): see the module docstring
FALLBACK_CODES = frozenset((SINGULAR_MASS, SINGULAR_DELASSUS, NOT_CONVERGED, NON_FINITE, UNSUPPORTED,
                            REDUNDANT))

_EMPTY1 = np.empty(0)
_EMPTY2 = np.empty((0, 6))


@njit
def _log6(Rr, t, e):
    """``e = [v; ω]`` of ``log`` on SE(3) of ``(Rr, t)`` (`dqdyn.contact.contacts._log6` and
    `dqdyn.constraints.loops._rotvec`, the same formulas)."""
    c = min(max((Rr[0, 0] + Rr[1, 1] + Rr[2, 2] - 1.0) / 2.0, -1.0), 1.0)
    th = math.acos(c)
    s = math.sin(th)
    fac = 0.5 + th * th / 12.0 if s < 1e-8 else th / (2.0 * s)
    w0 = fac * (Rr[2, 1] - Rr[1, 2])
    w1 = fac * (Rr[0, 2] - Rr[2, 0])
    w2 = fac * (Rr[1, 0] - Rr[0, 1])
    th2 = w0 * w0 + w1 * w1 + w2 * w2
    th = math.sqrt(th2)
    if th < 1e-4:
        cc = 1.0 / 12.0 + th2 / 720.0
    else:
        cc = (1.0 - th * math.sin(th) / (2.0 * (1.0 - math.cos(th)))) / (th * th)
    t0, t1, t2 = t[0], t[1], t[2]
    a0 = w1 * t2 - w2 * t1  # ω × t
    a1 = w2 * t0 - w0 * t2
    a2 = w0 * t1 - w1 * t0
    e[0] = t0 - 0.5 * a0 + cc * (w1 * a2 - w2 * a1)
    e[1] = t1 - 0.5 * a1 + cc * (w2 * a0 - w0 * a2)
    e[2] = t2 - 0.5 * a2 + cc * (w0 * a1 - w1 * a0)
    e[3], e[4], e[5] = w0, w1, w2


@njit
def frame_error(sp, R, p, Rr, t, e):
    """A frame contact's error ``e = log(x*⁻¹ x)`` (6, ``[v; ω]``) from its pose ``(R, p)`` in the
    world and the target ``(R*, p*)`` of its row ``sp`` of the contact table: `_log6` of
    ``(R*ᵀ R, R*ᵀ (p − p*))``; ``Rr`` (3, 3) and ``t`` (3) scratch."""
    Rt = sp[S_T : S_T + 9]
    d0, d1, d2 = p[0] - sp[S_T + 9], p[1] - sp[S_T + 10], p[2] - sp[S_T + 11]
    for i in range(3):
        for j in range(3):
            Rr[i, j] = Rt[i] * R[0, j] + Rt[3 + i] * R[1, j] + Rt[6 + i] * R[2, j]
    for i in range(3):
        t[i] = Rt[i] * d0 + Rt[3 + i] * d1 + Rt[6 + i] * d2
    _log6(Rr, t, e)


@njit
def _rows_from_sweeps(mi, mf, wc, wn, body, pl, impulse, J, jdv, sm):
    """A contact frame's body Jacobian ``J`` (6 × nv, rows ``[ω; v]`` in the frame's axes; zeroed
    by the caller) and, unless ``impulse``, ``jdv = J̇ v`` (its spatial acceleration at ``v̇ = 0``
    in the same axes) and its twist ``J v`` in ``sm[0:6]``, from what the CRBA and dqNE already
    hold: the world axes ``𝒮_k = [l; u]``
    of `crba_core`'s workspace ``wc`` (``u`` the velocity of F_0's origin; the frame's point
    ``P`` moves at ``u + l × P``) and the CoM twist and its derivative of `ne_core`'s ``wn`` moved
    to the frame's point (twists and their derivatives move alike: ``v + ω × r``, ``a + α × r``).
    The same rows as `jacobian_drift_kernel`'s pass from the frame to the root, without it
    (tests: against it and Pinocchio)."""
    R = view(sm, 6, (3, 3))  # the placement's rotation (body axes ← frame axes)
    frame_rotation(pl, R)
    t = sm[15:18]
    pose_translation(pl, t)
    Rf = view(sm, 18, (3, 3))  # the frame's axes in F_0
    for i in range(3):
        for k in range(3):
            Rf[i, k] = (wc[body, X_R + 3 * i] * R[0, k] + wc[body, X_R + 3 * i + 1] * R[1, k]
                        + wc[body, X_R + 3 * i + 2] * R[2, k])
    P0, P1, P2 = wc[body, X_P], wc[body, X_P + 1], wc[body, X_P + 2]
    for i in range(3):
        ti = wc[body, X_R + 3 * i] * t[0] + wc[body, X_R + 3 * i + 1] * t[1] + wc[body, X_R + 3 * i + 2] * t[2]
        if i == 0:
            P0 += ti
        elif i == 1:
            P1 += ti
        else:
            P2 += ti
    j = body
    while j > 0:
        scale = mf[j, MF_SCALE]
        iv = mi[j, MI_IV]
        for k in range(mi[j, MI_NV]):
            o = C_J + 6 * k
            l0, l1, l2 = wc[j, o], wc[j, o + 1], wc[j, o + 2]
            u0 = wc[j, o + 3] + (l1 * P2 - l2 * P1)
            u1 = wc[j, o + 4] + (l2 * P0 - l0 * P2)
            u2 = wc[j, o + 5] + (l0 * P1 - l1 * P0)
            for r in range(3):
                J[r, iv + k] = scale * (Rf[0, r] * l0 + Rf[1, r] * l1 + Rf[2, r] * l2)
                J[3 + r, iv + k] = scale * (Rf[0, r] * u0 + Rf[1, r] * u1 + Rf[2, r] * u2)
        j = mi[j, MI_PARENT]
    if impulse:
        return
    r0, r1, r2 = t[0] - mf[body, MF_COM], t[1] - mf[body, MF_COM + 1], t[2] - mf[body, MF_COM + 2]
    a0, a1, a2 = wn[body, W_XID], wn[body, W_XID + 1], wn[body, W_XID + 2]
    b0 = wn[body, W_XID + 3] + (a1 * r2 - a2 * r1)
    b1 = wn[body, W_XID + 4] + (a2 * r0 - a0 * r2)
    b2 = wn[body, W_XID + 5] + (a0 * r1 - a1 * r0)
    w0, w1, w2 = wn[body, W_XI], wn[body, W_XI + 1], wn[body, W_XI + 2]
    c0 = wn[body, W_XI + 3] + (w1 * r2 - w2 * r1)
    c1 = wn[body, W_XI + 4] + (w2 * r0 - w0 * r2)
    c2 = wn[body, W_XI + 5] + (w0 * r1 - w1 * r0)
    for r in range(3):
        jdv[r] = R[0, r] * a0 + R[1, r] * a1 + R[2, r] * a2
        jdv[3 + r] = R[0, r] * b0 + R[1, r] * b1 + R[2, r] * b2
        sm[r] = R[0, r] * w0 + R[1, r] * w1 + R[2, r] * w2
        sm[3 + r] = R[0, r] * c0 + R[1, r] * c1 + R[2, r] * c2


@njit
def _contact_rows(mi, mf, q, v, spec, impulse, A, b, J, jdv, xf, X, R, p, sm, wc, wn):
    """The rows ``A`` (m × nv) and right-hand sides ``b`` (m) of the contacts ``spec``
    (module docstring; ``impulse``: ``b = −drift`` left out, the caller sets ``b``), with
    ``wc`` and (unless ``impulse``) ``wn`` the CRBA's and dqNE's workspaces filled for this
    state: `_rows_from_sweeps`, or `jacobian_drift_kernel` where a contact needs its world pose
    (a target with a ``kp`` gain) or sits on the world.  ``sm``: 33 scratch floats.  Returns a
    status."""
    nv = v.shape[0]
    r0 = 0
    for c in range(spec.shape[0]):
        sp = spec[c]
        body = int(sp[S_BODY])
        dim = int(sp[S_DIM])
        for r in range(6):
            for j in range(nv):
                J[r, j] = 0.0
        fast = body > 0 and (impulse or sp[S_KP] == 0.0 or sp[S_HAS_T] == 0.0)
        if fast:
            _rows_from_sweeps(mi, mf, wc, wn, body, sp[S_PL : S_PL + 8], impulse, J, jdv, sm)
        else:
            st = jacobian_drift_kernel(mi, mf, q, v, body, sp[S_PL : S_PL + 8], int(0), X, J, jdv, xf)
            if st != OK:
                return st
        first = 3 if dim == 3 else 0
        for k in range(dim):  # a point: the linear rows; a frame: [v; ω] (rows 3-5, then 0-2)
            row = first + k if dim == 3 else (k + 3) % 6
            for j in range(nv):
                A[r0 + k, j] = J[row, j]
        if not impulse:
            xi = sm[0:6]
            if not fast:  # (`_rows_from_sweeps` left it there)
                for r in range(6):
                    s = 0.0
                    for j in range(nv):
                        s += J[r, j] * v[j]
                    xi[r] = s
            if dim == 3:
                b[r0] = -(jdv[3] + (xi[1] * xi[5] - xi[2] * xi[4]))
                b[r0 + 1] = -(jdv[4] + (xi[2] * xi[3] - xi[0] * xi[5]))
                b[r0 + 2] = -(jdv[5] + (xi[0] * xi[4] - xi[1] * xi[3]))
            else:
                for k in range(6):
                    b[r0 + k] = -jdv[(k + 3) % 6]
            kp, kd = sp[S_KP], sp[S_KD]
            if kd != 0.0:
                for k in range(dim):
                    b[r0 + k] -= kd * xi[first + k if dim == 3 else (k + 3) % 6]
            if kp != 0.0 and sp[S_HAS_T] != 0.0:
                frame_rotation(xf, R)
                pose_translation(xf, p)
                e = sm[6:12]
                if dim == 3:  # Rᵀ (p − p*)
                    d0, d1, d2 = p[0] - sp[S_T], p[1] - sp[S_T + 1], p[2] - sp[S_T + 2]
                    for i in range(3):
                        e[i] = R[0, i] * d0 + R[1, i] * d1 + R[2, i] * d2
                else:
                    frame_error(sp, R, p, view(sm, 12, (3, 3)), sm[21:24], e)
                for k in range(dim):
                    b[r0 + k] -= kp * e[k]
        r0 += dim
    return OK


@njit
def _norm(x, m):
    s = 0.0
    for i in range(m):
        s += x[i] * x[i]
    return math.sqrt(s)


@njit
def _chol_solve_into(Lk, d, m, y, out):
    """``out = (Lk Lkᵀ)⁻¹ y`` (``d``: the reciprocals of ``Lk``'s diagonal, `chol_factor_r`)."""
    for i in range(m):
        out[i] = y[i]
    lower_solve_r(Lk, d, m, out)
    lower_t_solve_r(Lk, d, m, out)


@njit
def kkt_size(nv, m):
    """Floats of `_kkt_state`'s scratch block for ``nv`` velocities and ``m`` contact rows."""
    return 2 * nv * nv + 9 * nv + 2 * m * nv + 2 * m * m + 6 * m + 99


@njit
def _kkt_state(mi, mf, q, v, tau, spec, par, a, lam, wc, wn, w, ip):
    """One state (module docstring): ``a`` (nv) the acceleration (impulse dynamics: the velocity
    after the impact), ``lam`` (m) the multipliers; ``wc``, ``wn`` the CRBA's and dqNE's
    workspaces, ``w`` a `kkt_size` scratch block, ``ip`` (nv + m) ints: the DoF tree
    (`dof_parents`, filled by the caller) then each contact row's last DoF.  Returns
    ``(status, iterations)``.
    Every array is taken without its reference count (`unmanaged`: the caller holds them; each
    view of the scratch would otherwise cost a count increment and decrement)."""
    mi, mf, q, v, tau, spec, par, a, lam = (unmanaged(mi), unmanaged(mf), unmanaged(q), unmanaged(v),
                                            unmanaged(tau), unmanaged(spec), unmanaged(par),
                                            unmanaged(a), unmanaged(lam))
    wc, wn, w, ip = unmanaged(wc), unmanaged(wn), unmanaged(w), unmanaged(ip)
    n = v.shape[0]
    tree = ip[:n]
    hi = ip[n:]
    m = lam.shape[0]
    eps, mu, max_iter, tol = par[0], par[1], int(par[2]), par[3]
    impulse = par[5] != 0.0
    if _has_mimic(mi):
        return UNSUPPORTED, 0
    o = 0
    M = view(w, o, (n, n))
    o += n * n
    L = view(w, o, (n, n))
    o += n * n
    y0 = w[o : o + n]
    a0 = w[o + n : o + 2 * n]
    dM = w[o + 2 * n : o + 3 * n]  # 1 / diag(L)
    o += 3 * n
    A = view(w, o, (m, n)) if m > 0 else view(w, o, (1, n))
    o += m * n
    b = w[o : o + m]
    o += m
    Wt = view(w, o, (m, n)) if m > 0 else view(w, o, (1, n))
    o += m * n
    G = view(w, o, (m, m)) if m > 0 else view(w, o, (1, 1))
    o += m * m
    Lk = view(w, o, (m, m)) if m > 0 else view(w, o, (1, 1))
    o += m * m
    r = w[o : o + m]
    new = w[o + m : o + 2 * m]
    t = w[o + 2 * m : o + 3 * m]
    dK = w[o + 3 * m : o + 4 * m]  # 1 / diag(Lk)
    o += 5 * m
    J = view(w, o, (6, n))
    o += 6 * n
    jdv = w[o : o + 6]
    xf = w[o + 6 : o + 14]
    X = view(w, o + 14, (5, 8))
    R = view(w, o + 54, (3, 3))
    p = w[o + 63 : o + 66]
    sm = w[o + 66 : o + 99]
    st = crba_core(mi, mf, q, wc, M)
    if st != OK:
        return st, 0
    if check_finite(v, BAD_V_FINITE) != OK:
        return BAD_V_FINITE, 0
    if not impulse:  # h = C v + g by dqNE (its twists' derivatives give the contacts' drifts)
        st = ne_core(mi, mf, mf[0, MF_GRAVITY : MF_GRAVITY + 3], q, v, _EMPTY1, _EMPTY2, wn, y0)
        if st != OK:
            return st, 0
    st = _contact_rows(mi, mf, q, v, spec, impulse, A, b, J, jdv, xf, X, R, p, sm, wc, wn)
    if st != OK:
        return st, 0
    if impulse:  # r₀ = M v⁻, b = −e A v⁻
        e = par[4]
        for i in range(m):
            b[i] = -e * dot4(A[i], v, n)
    else:  # r₀ = τ − h
        if check_finite(tau, BAD_TAU_FINITE) != OK:
            return BAD_TAU_FINITE, 0
        for i in range(n):
            y0[i] = tau[i] - y0[i]
    if not tree_factor_r(M, n, tree, L, dM):  # M = Lᵀ L on the tree's pattern
        return SINGULAR_MASS, 0
    if impulse:  # y₀ = L⁻ᵀ M v⁻ = L v⁻ and a₀ = M⁻¹ r₀ = v⁻
        tree_l_mul(L, tree, n, v, y0)
        for i in range(n):
            a0[i] = v[i]
    else:
        tree_lt_solve_r(L, dM, tree, n, y0)  # y₀ = L⁻ᵀ r₀
        for i in range(n):
            a0[i] = y0[i]
        tree_l_solve_r(L, dM, tree, n, a0)
    if m == 0:
        for i in range(n):
            a[i] = a0[i]
        return _finite(a, lam), 0
    for k in range(m):  # Wᵀ rows: L⁻ᵀ A_kᵀ, on the DoFs of the contact's path (up to hi[k])
        h = -1
        for j in range(n):
            x = A[k, j]
            Wt[k, j] = x
            if x != 0.0:
                h = j
        hi[k] = h
        tree_lt_solve_r(L, dM, tree, h + 1, Wt[k])
    for i in range(m):
        for k in range(i + 1):
            s = dot4(Wt[i], Wt[k], min(hi[i], hi[k]) + 1)
            G[i, k] = s
            G[k, i] = s
    dsum, dmax = 0.0, 0.0
    for i in range(m):  # r = b − A a₀ (not Wᵀ y₀: it keeps redundant rows consistent, see _kkt)
        r[i] = b[i] - dot4(A[i], a0, n)
        dsum += G[i, i]
        dmax = max(dmax, G[i, i])
    scale = max(dsum / m, 1e-300)
    if mu >= 0.0 or eps != 0.0:  # a redundant contact set (G singular or nearly): the numpy path
        for i in range(m):
            for k in range(m):
                Lk[i, k] = G[i, k]
        if not _clear_pivots(Lk, dK, m, dmax):
            return REDUNDANT, 0
    if mu < 0.0:  # direct: (G + ε I) λ = r
        for i in range(m):
            for k in range(m):
                Lk[i, k] = G[i, k]
            Lk[i, i] += eps
        if eps == 0.0:
            if not _clear_pivots(Lk, dK, m, dmax):
                return SINGULAR_DELASSUS, 0
        elif not chol_factor_r(Lk, m, Lk, dK):
            return SINGULAR_DELASSUS, 0
        _chol_solve_into(Lk, dK, m, r, lam)
        its = 1
    else:  # proximal: (G + (ε + μ) I) λ_{k+1} = r + μ λ_k from λ₀ = 0
        mua = mu * scale
        for i in range(m):
            for k in range(m):
                Lk[i, k] = G[i, k]
            Lk[i, i] += eps + mua
        if not chol_factor_r(Lk, m, Lk, dK):
            return SINGULAR_DELASSUS, 0
        for i in range(m):
            lam[i] = 0.0
        nr = _norm(r, m)
        prev = np.inf
        its = 0
        for k in range(1, max_iter + 1):
            for i in range(m):
                t[i] = r[i] + mua * lam[i]
            _chol_solve_into(Lk, dK, m, t, new)
            s = 0.0
            for i in range(m):
                d = new[i] - lam[i]
                s += d * d
                lam[i] = new[i]
            step = math.sqrt(s)
            nl = _norm(new, m)
            moved = step <= tol * (1.0 + nl)
            s = 0.0
            for i in range(m):
                d = dot4(G[i], new, m) + eps * new[i] - r[i]
                s += d * d
            res = math.sqrt(s)
            stalled = (not moved) and step > 0.5 * prev and res <= tol * (1.0 + nr + scale * nl)
            if moved or stalled:
                its = k
                break
            prev = step
        if its == 0:
            return NOT_CONVERGED, 0
    for j in range(n):  # x = L⁻ᵀ (y₀ + W λ)
        a[j] = y0[j]
    for k in range(m):
        lk = lam[k]
        for j in range(n):
            a[j] += Wt[k, j] * lk
    tree_l_solve_r(L, dM, tree, n, a)
    return _finite(a, lam), its


@njit
def _clear_pivots(Lk, d, m, dmax):
    """Factor ``Lk`` (m × m) in place (``d``: its diagonal's reciprocals); True when every pivot ``L_ii²`` is above ``10⁻⁸ max_i
    G_ii`` (`dqdyn.contact._kkt`'s test that clears a Delassus matrix as regular)."""
    if not chol_factor_r(Lk, m, Lk, d):
        return False
    pmin = np.inf
    for i in range(m):
        pmin = min(pmin, Lk[i, i] * Lk[i, i])
    return pmin > 1e-8 * dmax


@njit
def _finite(a, lam):
    for i in range(a.shape[0]):
        if not math.isfinite(a[i]):
            return NON_FINITE
    for i in range(lam.shape[0]):
        if not math.isfinite(lam[i]):
            return NON_FINITE
    return OK


@njit
def kkt_rows(mi, mf, spec, par, Q, V, T, OUT, LAM, ITS, status, s, e):
    """States ``s`` to ``e`` of `kkt_batch` on one set of workspaces (a single state is
    ``s, e = 0, 1``: the same compiled code as a batch's).  ``V``, ``T``: one row per state
    or one row shared by all."""
    n = mi[0, MI_IV]
    wc = np.empty((mi.shape[0] + 1, C_NCRBA))
    wn = np.empty((mi.shape[0] + NSCRATCH, W_COLS))
    w = np.empty(kkt_size(n, LAM.shape[1]))
    ip = np.empty(n + LAM.shape[1], np.int64)
    if not dof_parents(mi, ip):
        for k in range(s, e):
            status[k] = UNSUPPORTED
            ITS[k] = 0
        return
    bv, bt = V.shape[0] > 1, T.shape[0] > 1
    z = np.int64(0)
    for k in range(s, e):
        st, its = _kkt_state(mi, mf, Q[k], V[k if bv else z], T[k if bt else z], spec, par, OUT[k],
                             LAM[k], wc, wn, w, ip)
        status[k] = st
        ITS[k] = its


@pjit
def kkt_batch(mi, mf, spec, par, Q, V, T, OUT, LAM, ITS, status):
    """`kkt_rows` over a batch, in `BLOCKS` blocks of states (``prange``)."""
    N = np.int64(Q.shape[0])
    nblk = min(N, BLOCKS)
    for b in nb.prange(nblk):
        kkt_rows(mi, mf, spec, par, Q, V, T, OUT, LAM, ITS, status, b * N // nblk, (b + 1) * N // nblk)


# ------------------------------------------------------------------------ the call gate
def _c_kkt(mip, mfp, nb1, bufs, lens):
    """One state through the C call gate (`dqdyn._engine.gate`): inputs ``q``, ``v``, ``tau``
    (impulse dynamics: any vector of nv), the contact table ``spec`` flattened, ``par``; the
    result ``[x (nv), λ (m), λ (m), iterations]`` (``λ`` twice: the multipliers and the
    per-contact forces, parts that share no memory; the iterations an int64 in the last
    float's bytes), m from its length.  Lengths checked (`BAD_SHAPE`)."""
    mi, mf = gate_tables(mip, mfp, nb1)
    n = mi[0, MI_IV]
    res = gate_vector(bufs, lens, 5)
    m = (res.shape[0] - n - 1) // 2
    if (lens[0] != mi[0, MI_IQ] or lens[1] != n or lens[2] != n or lens[3] % SPEC != 0
            or res.shape[0] != n + 2 * m + 1 or lens[4] != 6 or lens[3] == 0):
        return BAD_SHAPE
    spec = nb.carray(bufs[3], (lens[3] // SPEC, SPEC))
    wc = np.empty((nb1 + 1, C_NCRBA))
    wn = np.empty((nb1 + NSCRATCH, W_COLS))
    w = np.empty(kkt_size(n, m))
    ip = np.empty(n + m, np.int64)
    if not dof_parents(mi, ip):
        return UNSUPPORTED
    st, its = _kkt_state(mi, mf, gate_vector(bufs, lens, 0), gate_vector(bufs, lens, 1),
                         gate_vector(bufs, lens, 2), spec, gate_vector(bufs, lens, 4), res[:n],
                         res[n : n + m], wc, wn, w, ip)
    for k in range(m):
        res[n + m + k] = res[n + k]
    res[n + 2 * m :].view(np.int64)[0] = its
    return st


_KKT_C = 0  # its address, set on first use


def kkt_gate() -> int:
    """The address of `_c_kkt` for ``GATE`` (compiled or loaded on the first call)."""
    return _KKT_C or gate_address(globals(), "_KKT_C", _c_kkt)


__all__ = ["SPEC", "FALLBACK_CODES", "kkt_rows", "kkt_batch", "kkt_size", "kkt_gate"]
