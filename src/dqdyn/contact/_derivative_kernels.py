r"""The compiled steps of the contact- and centroidal-dynamics derivatives: one call per state.

**Contact dynamics.**
`dqdyn.contact.derivatives` differentiates the KKT system of `dqdyn.contact_dynamics`,
``[[M, −Aᵀ], [A, ε 1]] [∂a/∂x; ∂λ/∂x] = −[∂ID/∂x; ∂G/∂x]`` (``x = q, v``) and
``[∂a/∂τ; ∂λ/∂τ] = K⁻¹ [1; 0]``, by eliminating ``a``: with ``Y_x = M⁻¹ ∂ID/∂x``,
``Y_A = M⁻¹ Aᵀ`` and the Schur complement (the Delassus matrix) ``S = A Y_A + ε 1``,

    ``∂λ/∂x = S⁻¹ (A Y_x − ∂G/∂x)``,  ``∂a/∂x = Y_A ∂λ/∂x − Y_x``,
    ``∂λ/∂τ = −S⁻¹ Y_Aᵀ``,  ``∂a/∂τ = M⁻¹ + Y_A ∂λ/∂τ``.

`kkt_derivatives` does those products (about ``2 nv³ + 4 m nv² + 3 m² nv`` multiply-adds for
``m`` contact rows) in one call, where the numpy route took a dozen matrix products, each with
its call's cost; ``S⁻¹`` is `dqdyn._engine.linalg.spd_inverse` (exactly symmetric).

**The whole route in one call.**  `contact_derivatives_rows` runs every step at each state:
the contact dynamics (`dqdyn.contact._kernels`), the sweeps of `dqdyn.rnea_derivatives` with the
contact forces as external wrenches, the contact rows' derivatives from its forward sweep (`contact_rows`, in
place of the hung model of `dqdyn.contact.derivatives`), and `kkt_derivatives`; a batch runs it
per block of states on the thread pool (`contact_derivatives_batch`).

**Centroidal dynamics.**  `centroidal_derivatives_rows` computes the base rows of the augmented
model's ``∂τ/∂q``, ``∂τ/∂v``, ``M`` and ``Ṁ`` (docstring of `dqdyn.contact.derivatives`) by the
forward sweep of `dqdyn.rnea_derivatives` and `dqdyn.dynamics.derivatives._sweeps.base_rows_sweep`
(those rows alone, O(n): no ancestor visited), and turns them into ``∂h_g/∂q``, ``∂ḣ_g/∂q``,
``∂ḣ_g/∂v`` and ``A_g``: each moved to the CoM, ``[f; n] ↦ [f; n − c × f]``, plus the CoM-motion
terms ``[f]× J_c`` and ``−[ċ]× M_f``; a batch per block of states on the thread pool
(`centroidal_derivatives_batch`), one state through the call gate.
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np

from dqdyn._engine.batching import BLOCKS
from dqdyn._engine.boundary import BAD_A_FINITE, BAD_SHAPE, OK, check_state
from dqdyn._engine.gate import gate_address, gate_tables
from dqdyn._engine.jit import kernel
from dqdyn._engine.linalg import spd_inverse, tree_spd_inverse
from dqdyn._engine.views import unmanaged, view
from dqdyn.algebra._core import cross6, dq_mul, pose_translation
from dqdyn.constraints.base import frame_rotation
from dqdyn.contact._kernels import (
    S_BODY,
    S_DIM,
    S_HAS_T,
    S_KD,
    S_KP,
    S_PL,
    S_T,
    SPEC,
    _kkt_state,
    frame_error,
    kkt_size,
)
from dqdyn.dynamics.derivatives._sweeps import _carve, _forward_sweep, _ws_size, base_rows_sweep
from dqdyn.dynamics.derivatives.kernels import BLAS_FROM, _rnea_derivatives_on
from dqdyn.dynamics.lagrange import C_NCRBA
from dqdyn.dynamics.newton_euler import NSCRATCH, W_COLS
from dqdyn.multibody.joints import joint_transform
from dqdyn.multibody.model import (
    MF_AXIS,
    MF_GRAVITY,
    MF_OFFSET,
    MF_PITCH,
    MF_PLACEMENT,
    MF_SCALE,
    MI_IQ,
    MI_IV,
    MI_JTYPE,
    MI_NV,
    MI_PARENT,
    dof_parents,
)

njit = kernel(error_model="numpy")
pjit = kernel(parallel=True, error_model="numpy")
ijit = kernel(inline="always", error_model="numpy")  # small helpers, inlined at the IR level

#: `kkt_derivatives`' status: done, ``S`` not positive definite to working precision, ``M`` not
#: positive definite
KKT_OK, KKT_SINGULAR, KKT_M_NOT_PD = 0, 1, 2
#: the largest condition of ``S`` (the ratio of its largest diagonal entry to its smallest
#: Cholesky pivot squared) that `kkt_derivatives` accepts: past it a redundant contact set
#: without regularisation, whose forces are not unique
KKT_MAX_CONDITION = 1e13


@njit
def _prod(A, B, C, blas):
    """``C = A B``: BLAS (``blas``: a model of `BLAS_FROM` velocity coordinates or more, whose
    products the loops of `_mul` run at a fraction of its rate), else `_mul`."""
    if blas:
        np.dot(A, B, C)
    else:
        _mul(A, B, C)


@njit
def _mul(A, B, C):
    """``C = A B`` (2-D, rows of ``B`` contiguous: the inner loop runs along them).  A zero of
    ``A`` is skipped (a contact row is zero off its body's support): the sums are those of the
    full product, in the same order, but for the sign of an exact zero."""
    n, k = A.shape
    m = B.shape[1]
    for i in range(n):
        for j in range(m):
            C[i, j] = 0.0
        for p in range(k):
            a = A[i, p]
            if a != 0.0:
                for j in range(m):
                    C[i, j] += a * B[p, j]


@njit
def elimination_size(nv, m):
    """The floats of `kkt_derivatives`' workspace."""
    return 9 * nv * nv + 2 * nv + 10 * m * nv + 3 * m * m + m


@njit
def kkt_derivatives(R, A, Gq, Gv, eps, par, Z, X, wk, iw):
    """The block elimination of the module docstring at one state: the derivatives of ``a`` and ``λ``.

    ``R`` (3, nv, nv) ``∂ID/∂q``, ``∂ID/∂v``, ``M``; ``A`` (m, nv) the contact rows; ``Gq``, ``Gv``
    (m, nv) ``∂G/∂q``, ``∂G/∂v``; ``eps`` the regularisation ``ε``; ``par`` (nv) the DoF tree
    (`dqdyn.multibody.model.dof_parents`: ``M⁻¹`` on its sparsity pattern,
    `dqdyn._engine.linalg.tree_spd_inverse`), or empty (a dense inverse); ``wk`` (`elimination_size`
    floats) and ``iw`` (nv ints) its workspace.  Writes ``Z`` (3, nv, nv)
    ``∂a/∂q, ∂a/∂v, ∂a/∂τ`` and ``X`` (3, m, nv) ``∂λ/∂q, ∂λ/∂v, ∂λ/∂τ``.  Returns `KKT_OK`,
    `KKT_SINGULAR` or `KKT_M_NOT_PD` (``M`` not positive definite: the caller's numpy route names
    the error)."""
    nv = R.shape[1]
    m = A.shape[0]
    n2 = 2 * nv
    blas = nv >= BLAS_FROM
    o = 0
    Mi = view(wk, o, (nv, nv))
    Lw = view(wk, o + nv * nv, (nv, nv))
    o += 2 * nv * nv
    if par.shape[0] == nv:
        ok = tree_spd_inverse(R[2], nv, par, Lw, view(wk, o, (nv,)), view(wk, o + nv, (nv,)), iw, Mi)
    else:
        ok = spd_inverse(R[2], nv, Lw, Mi)
    if not ok:
        return KKT_M_NOT_PD
    # the right-hand sides side by side, so that every product's inner loop runs along 2 nv or
    # 3 nv contiguous entries (LLVM's vector loops on 18 entries run at half the rate of 36)
    o += 2 * nv
    RR = view(wk, o, (nv, n2))
    o += nv * n2
    for i in range(nv):
        for j in range(nv):
            RR[i, j] = R[0, i, j]
            RR[i, nv + j] = R[1, i, j]
    Y = view(wk, o, (nv, n2))  # [Y_q | Y_v] = M⁻¹ [∂ID/∂q | ∂ID/∂v]
    _prod(Mi, RR, Y, blas)
    o += nv * n2
    YAt = view(wk, o, (m, nv))  # Y_Aᵀ = A M⁻¹ (M⁻¹ symmetric)
    _prod(A, Mi, YAt, blas)
    o += m * nv
    At = view(wk, o, (nv, m))
    o += nv * m
    for i in range(m):
        for k in range(nv):
            At[k, i] = A[i, k]
    S = view(wk, o, (m, m))  # A M⁻¹ Aᵀ + ε 1, its lower triangle mirrored (exactly symmetric)
    _prod(YAt, At, S, blas)
    for i in range(m):
        for j in range(i):
            S[j, i] = S[i, j]
        S[i, i] += eps
    top = 0.0
    for i in range(m):
        top = max(top, S[i, i])
    L = view(wk, o + m * m, (m, m))
    Si = view(wk, o + 2 * m * m, (max(m, 1), m))
    o += 3 * m * m + m
    if not spd_inverse(S, m, L, Si):
        return KKT_SINGULAR
    for i in range(m):  # (spd_inverse leaves 1 / pivot on L's diagonal)
        if L[i, i] * L[i, i] * top > KKT_MAX_CONDITION:
            return KKT_SINGULAR
    B = view(wk, o, (m, 3 * nv))  # [A Y_q − ∂G/∂q | A Y_v − ∂G/∂v | −Y_Aᵀ]
    AY = view(wk, o + 3 * m * nv, (m, n2))
    o += 5 * m * nv
    _prod(A, Y, AY, blas)
    for i in range(m):
        for j in range(nv):
            B[i, j] = AY[i, j] - Gq[i, j]
            B[i, nv + j] = AY[i, nv + j] - Gv[i, j]
            B[i, n2 + j] = -YAt[i, j]
    W = view(wk, o, (m, 3 * nv))  # [∂λ/∂q | ∂λ/∂v | ∂λ/∂τ] = S⁻¹ B
    _prod(Si, B, W, blas)
    o += 3 * m * nv
    V = view(wk, o, (nv, 3 * nv))  # Y_A W (Y_A = YAtᵀ)
    if blas:
        np.dot(YAt.T, W, V)
    else:
        for i in range(nv):
            for j in range(3 * nv):
                V[i, j] = 0.0
        for p in range(m):
            for i in range(nv):
                y = YAt[p, i]
                for j in range(3 * nv):
                    V[i, j] += y * W[p, j]
    for c in range(3):
        o = c * nv
        for i in range(m):
            for j in range(nv):
                X[c, i, j] = W[i, o + j]
    for i in range(nv):
        for j in range(nv):
            Z[0, i, j] = V[i, j] - Y[i, j]
            Z[1, i, j] = V[i, nv + j] - Y[i, nv + j]
            Z[2, i, j] = V[i, n2 + j] + Mi[i, j]
    return KKT_OK


#: `centroidal_derivatives_rows`' status of a state whose moving bodies have no mass
NO_MASS = 1


@njit
def centroidal_derivatives_rows(mi, mf, Q, V, A, OUT, status, s, e):
    """``OUT[k]`` (4, 6, nv): ``∂h_g/∂q, ∂ḣ_g/∂q, ∂ḣ_g/∂v, A_g`` at the states ``s ≤ k < e``, for
    a tree of one root whose joints' body-frame axes are constant and without mimic joints (the
    caller's to check); ``status[k]``: `dqdyn._engine.boundary`'s code of a bad input, `NO_MASS`
    or ``OK``.  The forward sweep of `dqdyn.rnea_derivatives` and `base_rows_sweep`
    give the base rows ``[f; n]`` of the augmented model's ``∂τ/∂q``, ``∂τ/∂v``, ``M`` and ``Ṁ``
    (docstring of `dqdyn.contact.derivatives`; the free body ``b`` sits at the sweep's origin, the
    root's), each moved to the CoM, ``[f; n] ↦ [f; n − c × f]``, plus the CoM-motion terms
    ``[f]× J_c`` and ``−[ċ]× M_f``."""
    nb1 = mi.shape[0]
    nv = V.shape[1]
    ws = np.empty(_ws_size(nb1, nv))
    fext = np.zeros((1, 6))
    X, Vw, Aw, Pb, Pc, Dc, Hc, Fb, Fc, cols, tmp = _carve(ws, nb1, nv)
    S, dVq, dAq, dAv, W = cols[0], cols[1], cols[2], cols[3], cols[4:8]
    cd = np.empty(3)
    for k in range(s, e):
        q, v, a = Q[k], V[k], A[k]
        st = check_state(mi, q, v, a, BAD_A_FINITE, fext, bool(False))  # (a bool, not a literal)
        if st != OK:
            status[k] = st
            continue
        _forward_sweep(mi, mf, q, v, a, fext, bool(False), X, Vw, Aw, Pb, Pc, Dc, Hc, Fb, Fc,
                       S, dVq, dAq, dAv, tmp)
        base_rows_sweep(mi, Pc, Dc, Hc, Fc, Vw, S, dVq, dAq, dAv, W, tmp)
        m = Pc[1, 0]
        if not m > 0.0:
            status[k] = NO_MASS
            continue
        c0, c1, c2 = Pc[1, 1] / m, Pc[1, 2] / m, Pc[1, 3] / m  # the CoM (sweep frame)
        fm0, fm1, fm2 = Fc[1, 0] / m, Fc[1, 1] / m, Fc[1, 2] / m  # the base force over m
        for r in range(3):  # ċ = J_c v = M_f v / m
            x = 0.0
            for j in range(nv):
                x += W[2, j, r] * v[j]
            cd[r] = x / m
        R = OUT[k]
        for j in range(nv):
            mx, my, mz = W[2, j, 0], W[2, j, 1], W[2, j, 2]  # M_f's column
            for w in range(4):  # ∂τ/∂q, ∂τ/∂v, M, Ṁ
                f0, f1, f2 = W[w, j, 0], W[w, j, 1], W[w, j, 2]
                g0 = W[w, j, 3] - (c1 * f2 - c2 * f1)
                g1 = W[w, j, 4] - (c2 * f0 - c0 * f2)
                g2 = W[w, j, 5] - (c0 * f1 - c1 * f0)
                if w == 0:  # ∂ḣ_g/∂q: + [f]× J_c (the CoM moves: −∂c × f)
                    g0 += fm1 * mz - fm2 * my
                    g1 += fm2 * mx - fm0 * mz
                    g2 += fm0 * my - fm1 * mx
                elif w == 3:  # Ȧ_g: − [ċ]× M_f
                    g0 -= cd[1] * mz - cd[2] * my
                    g1 -= cd[2] * mx - cd[0] * mz
                    g2 -= cd[0] * my - cd[1] * mx
                o = (1, 2, 3, 0)[w]  # (Ȧ_g into slot 0, where ∂h_g/∂q = ∂ḣ_g/∂v − Ȧ_g is formed)
                R[o, 0, j], R[o, 1, j], R[o, 2, j] = f0, f1, f2
                R[o, 3, j], R[o, 4, j], R[o, 5, j] = g0, g1, g2
            for r in range(6):
                R[0, r, j] = R[2, r, j] - R[0, r, j]
        status[k] = OK


@pjit
def centroidal_derivatives_batch(mi, mf, Q, V, A, OUT, status):
    """`centroidal_derivatives_rows` over a batch, in `BLOCKS` blocks of states (``prange``)."""
    N = np.int64(Q.shape[0])
    nblk = min(N, BLOCKS)
    for b in nb.prange(nblk):
        centroidal_derivatives_rows(mi, mf, Q, V, A, OUT, status, b * N // nblk, (b + 1) * N // nblk)


#: `contact_derivatives_rows`' status of a state the compiled route leaves to the Python one:
#: the contact dynamics' status (`dqdyn.contact._kernels`) is not `OK`, or `kkt_derivatives`'
#: is not `KKT_OK`
DERIV_FALLBACK = 1


@njit
def _mul3(A, B, C):
    """``C = A B`` (3 × 3)."""
    for i in range(3):
        for j in range(3):
            C[i, j] = A[i, 0] * B[0, j] + A[i, 1] * B[1, j] + A[i, 2] * B[2, j]


@njit
def _skew(x0, x1, x2, X):
    X[0, 0] = X[1, 1] = X[2, 2] = 0.0
    X[0, 1], X[0, 2], X[1, 2] = -x2, x1, -x0
    X[1, 0], X[2, 0], X[2, 1] = x2, -x1, x0


@njit
def jr_inv_se3(e, out):
    """``out = J_r⁻¹(e)`` (6, 6) of SE(3) for ``e = [ρ; φ]``: ``log(exp(e) exp(δ)) ≈ e + J_r⁻¹(e)
    δ``.  ``J_r(e) = J_l(−e)`` and ``J_l⁻¹ = [[J⁻¹, −J⁻¹ Q J⁻¹], [0, J⁻¹]]`` with ``J`` the left
    Jacobian of SO(3) and ``Q(ρ, φ)`` the closed form of its translation coupling (the series of
    the SE(3) left Jacobian summed)."""
    W = np.empty((12, 3, 3))
    P, Rx, PR, RP, PRP, T, U, Q, Ji = W[0], W[1], W[2], W[3], W[4], W[5], W[6], W[7], W[8]
    _skew(-e[3], -e[4], -e[5], P)
    _skew(-e[0], -e[1], -e[2], Rx)
    t2 = e[3] * e[3] + e[4] * e[4] + e[5] * e[5]
    t = math.sqrt(t2)
    if t < 1e-4:  # (series of the coefficients below)
        c1, c2, c3 = 1.0 / 6.0 - t2 / 120.0, 1.0 / 24.0 - t2 / 720.0, 1.0 / 120.0 - t2 / 2520.0
        cj = 1.0 / 12.0 + t2 / 720.0
    else:
        sn, cs = math.sin(t), math.cos(t)
        c1 = (t - sn) / (t * t2)
        c2 = (t2 + 2.0 * cs - 2.0) / (2.0 * t2 * t2)
        c3 = (2.0 * t - 3.0 * sn + t * cs) / (2.0 * t2 * t2 * t)
        cj = 1.0 / t2 - (1.0 + cs) / (2.0 * t * sn)
    _mul3(P, Rx, PR)
    _mul3(Rx, P, RP)
    _mul3(PR, P, PRP)
    _mul3(P, PR, T)  # P P Rx
    _mul3(RP, P, U)  # Rx P P
    A, B, PP = W[9], W[10], W[11]
    _mul3(PRP, P, A)  # P Rx P P
    _mul3(P, PRP, B)  # P P Rx P
    _mul3(P, P, PP)
    for i in range(3):
        for j in range(3):
            Q[i, j] = (0.5 * Rx[i, j] + c1 * (PR[i, j] + RP[i, j] + PRP[i, j])
                       + c2 * (T[i, j] + U[i, j] - 3.0 * PRP[i, j]) + c3 * (A[i, j] + B[i, j]))
            Ji[i, j] = (1.0 if i == j else 0.0) - 0.5 * P[i, j] + cj * PP[i, j]  # J_l⁻¹(φ) of SO(3)
    _mul3(Ji, Q, T)
    _mul3(T, Ji, U)
    for i in range(3):
        for j in range(3):
            out[i, j] = out[3 + i, 3 + j] = Ji[i, j]
            out[i, 3 + j] = -U[i, j]
            out[3 + i, j] = 0.0


@ijit
def _lin(R, p, w, vp, dV, dA, out):
    """``out = Rᵀ (δa_o + δω̇ × p + δω × v_p + ω × (δv_o + δω × p))``: the change of the classical
    acceleration of the point ``p`` (rotation ``R`` of its frame, velocity ``v_p``, angular
    velocity ``ω = w``) for the changes ``δ𝒱 = [δω; δv_o]``, ``δ𝒜 = [δω̇; δa_o]`` of its body's
    twist and acceleration, the frame held still (module docstring)."""
    x0, x1, x2 = dV[1] * p[2] - dV[2] * p[1], dV[2] * p[0] - dV[0] * p[2], dV[0] * p[1] - dV[1] * p[0]
    y0, y1, y2 = dV[3] + x0, dV[4] + x1, dV[5] + x2  # δv_o + δω × p
    u0 = dA[3] + (dA[1] * p[2] - dA[2] * p[1]) + (dV[1] * vp[2] - dV[2] * vp[1]) + (w[1] * y2 - w[2] * y1)
    u1 = dA[4] + (dA[2] * p[0] - dA[0] * p[2]) + (dV[2] * vp[0] - dV[0] * vp[2]) + (w[2] * y0 - w[0] * y2)
    u2 = dA[5] + (dA[0] * p[1] - dA[1] * p[0]) + (dV[0] * vp[1] - dV[1] * vp[0]) + (w[0] * y1 - w[1] * y0)
    for r in range(3):
        out[r] = R[0, r] * u0 + R[1, r] * u1 + R[2, r] * u2


@ijit
def _put(R, p, w, vp, dV, dA, six, M, o, col, zero, out):
    """Column ``col`` of a contact's rows in ``M`` from ``o``: a point contact's ``_lin(δ𝒱, δ𝒜)``;
    a frame contact's spatial acceleration in its frame, ``Ad(x_c⁻¹) δ𝒜`` (linear rows
    ``_lin(0, δ𝒜)``, then angular ``Rᵀ δω̇``), on which ``δ𝒱`` has no effect."""
    _lin(R, p, w, vp, zero if six else dV, dA, out)
    for r in range(3):
        M[o + r, col] = out[r]
    if six:
        for r in range(3):
            M[o + 3 + r, col] = R[0, r] * dA[0] + R[1, r] * dA[1] + R[2, r] * dA[2]


@njit
def contact_rows(mi, mf, q, ws, spec, A, Gq, Gv):
    """The rows ``A``, ``∂G/∂q``, ``∂G/∂v`` (m, nv) of the contacts ``spec`` (the contact table of
    `dqdyn.contact._kernels`: body, dimension, placement, Baumgarte gains, target) from the
    world-frame forward sweep of `dqdyn.rnea_derivatives` at ``q`` left in its workspace ``ws``
    (`_sweeps._carve`: poses ``x_i`` (a root's position left out), twists ``𝒱_i``,
    accelerations ``𝒜_i`` (with the base acceleration ``−g``), axes ``𝒮_k``,
    ``Δv_k = 𝒱_λ × 𝒮_k``, ``Δw_k = (𝒱_λ + 𝒱_i) × 𝒮_k``), for a model of revolute, prismatic,
    helical, cylindrical, spherical and free joints (body-fixed joint axes).

    A point contact holds the classical acceleration of its point in its frame, ``g = Rᵀ a_p``;
    a frame contact the spatial acceleration of its frame, ``Ad(x_c⁻¹) 𝒜`` (rows ``[linear;
    angular]``).  Neither changes when the whole subtree of a joint moves rigidly, and a change
    of ``q_k`` moves the subtree of ``k``'s body rigidly along ``𝒮_k`` except for what it
    receives from ``k``'s parent (``𝒱_λ``, ``𝒜_λ``: [Featherstone2008, ch. 2]).  So with the
    contact body's twist ``𝒱_i = [ω; v_o]`` and true acceleration, for ``k`` on its support the
    changes ``(δ𝒱, δ𝒜)`` of `_put` are ``(0, 𝒮_k)`` for ``∂/∂q̈_k`` (the rows ``A``),
    ``(𝒮_k, Δw_k − 𝒱_i × 𝒮_k)`` for ``∂/∂q̇_k`` and ``(Δv_k, 𝒜_λ × 𝒮_k + Δv_k × (𝒱_i − 𝒱_λ))``
    for ``∂/∂q_k``; the other columns are zero.  The Baumgarte terms ``kd ν + kp e`` of the rows
    (``ν = A v`` the frame's velocity, the same invariance: ``∂ν/∂q_k = Ad(x_c⁻¹) Δv_k``; a point
    contact's ``e = Rᵀ (p − p*)``: ``∂e/∂q = A + [e]× J_ω``, ``J_ω`` the frame's angular rows; a
    frame contact's ``e = log(x*⁻¹ x)``: ``∂e/∂q = J_r⁻¹(e) A``, `jr_inv_se3`) are added."""
    mi, mf, q, ws, spec = unmanaged(mi), unmanaged(mf), unmanaged(q), unmanaged(ws), unmanaged(spec)
    A, Gq, Gv = unmanaged(A), unmanaged(Gq), unmanaged(Gv)  # (views without reference counts)
    nb1, nv = mi.shape[0], mi[0, MI_IV]
    X, Vw, Aw, Pb, Pc, Dc, Hc, Fb, Fc, cols, tmp = _carve(ws, nb1, nv)
    S, dVq, dAv = cols[0], cols[1], cols[3]
    g = (mf[0, MF_GRAVITY], mf[0, MF_GRAVITY + 1], mf[0, MF_GRAVITY + 2])
    o = _ws_size(nb1, nv) - 64  # (the sweep's 64 floats of scratch, free once it is done)
    xc, p, vp, R = view(ws, o, (8,)), view(ws, o + 8, (3,)), view(ws, o + 11, (3,)), view(ws, o + 14, (3, 3))
    dV, dA, d, out = view(ws, o + 23, (6,)), view(ws, o + 29, (6,)), view(ws, o + 35, (6,)), view(ws, o + 41, (3,))
    zero, e, xr = view(ws, o + 44, (6,)), view(ws, o + 50, (3,)), view(ws, o + 53, (8,))
    for r in range(6):
        zero[r] = 0.0
    b6 = np.empty(60)  # a frame contact's error e6, J_r⁻¹(e6), a column of A, scratch
    e6, J6, a6, Rr, t3 = view(b6, 0, (6,)), view(b6, 6, (6, 6)), view(b6, 42, (6,)), view(b6, 48, (3, 3)), view(b6, 57, (3,))
    o = 0
    for c in range(spec.shape[0]):
        i, dim = np.int64(spec[c, S_BODY]), np.int64(spec[c, S_DIM])
        kp, kd = spec[c, S_KP], spec[c, S_KD]
        six = dim == 6
        dq_mul(X[i], spec[c, S_PL : S_PL + 8], xc)
        pose_translation(xc, p)
        frame_rotation(xc, R)
        w, vo = Vw[i, 0:3], Vw[i, 3:6]
        vp[0] = vo[0] + (w[1] * p[2] - w[2] * p[1])
        vp[1] = vo[1] + (w[2] * p[0] - w[0] * p[2])
        vp[2] = vo[2] + (w[0] * p[1] - w[1] * p[0])
        kp = kp if spec[c, S_HAS_T] != 0.0 else 0.0
        if kp != 0.0:  # the error e, p in the world: the sweep's p plus its root's position
            r = i
            while mi[r, MI_PARENT] > 0:
                r = mi[r, MI_PARENT]
            joint_transform(mi[r, MI_JTYPE], mf[r, MF_AXIS : MF_AXIS + 3], mf[r, MF_PITCH], q, mi[r, MI_IQ],
                            mf[r, MF_SCALE], mf[r, MF_OFFSET], xr)
            dq_mul(mf[r, MF_PLACEMENT : MF_PLACEMENT + 8], xr, xr)  # (dq_mul reads both before it writes)
            pose_translation(xr, dV)
            if six:  # log(x*⁻¹ x)
                for k in range(3):
                    dV[k] += p[k]
                frame_error(spec[c], R, dV, Rr, t3, e6)
            else:  # Rᵀ (p − p*)
                for k in range(3):
                    dA[k] = p[k] + dV[k] - spec[c, S_T + k]
                for k in range(3):
                    e[k] = R[0, k] * dA[0] + R[1, k] * dA[1] + R[2, k] * dA[2]
        for r in range(dim):
            for k in range(nv):
                A[o + r, k] = 0.0
                Gq[o + r, k] = 0.0
                Gv[o + r, k] = 0.0
        j = i
        while j > 0:
            lam = mi[j, MI_PARENT]
            for r in range(6):
                d[r] = Vw[i, r] - Vw[lam, r]  # 𝒱_i − 𝒱_λ
            for col in range(mi[j, MI_IV], mi[j, MI_IV] + mi[j, MI_NV]):
                sc = S[col]
                _put(R, p, w, vp, zero, sc, six, A, o, col, zero, out)
                cross6(Vw[i], sc, dA)
                for r in range(6):
                    dA[r] = dAv[col, r] - dA[r]
                _put(R, p, w, vp, sc, dA, six, Gv, o, col, zero, out)
                cross6(Aw[lam], sc, dA)  # 𝒜_λ × 𝒮_k with the true 𝒜_λ = Aw[λ] + [0; g]
                dA[3] += g[1] * sc[2] - g[2] * sc[1]
                dA[4] += g[2] * sc[0] - g[0] * sc[2]
                dA[5] += g[0] * sc[1] - g[1] * sc[0]
                cross6(dVq[col], d, dV)
                for r in range(6):
                    dA[r] += dV[r]
                _put(R, p, w, vp, dVq[col], dA, six, Gq, o, col, zero, out)
                if kd != 0.0:  # kd ν: ∂/∂v = kd A, ∂/∂q = kd Ad(x_c⁻¹) Δv_k
                    for r in range(dim):
                        Gv[o + r, col] += kd * A[o + r, col]
                    _lin(R, p, w, vp, zero, dVq[col], out)
                    for r in range(3):
                        Gq[o + r, col] += kd * out[r]
                    if six:
                        for r in range(3):
                            Gq[o + 3 + r, col] += kd * (R[0, r] * dVq[col, 0] + R[1, r] * dVq[col, 1]
                                                        + R[2, r] * dVq[col, 2])
                if kp != 0.0 and not six:  # kp e: ∂e/∂q = A + e × J_ω
                    for r in range(3):
                        out[r] = R[0, r] * sc[0] + R[1, r] * sc[1] + R[2, r] * sc[2]
                    Gq[o, col] += kp * (A[o, col] + (e[1] * out[2] - e[2] * out[1]))
                    Gq[o + 1, col] += kp * (A[o + 1, col] + (e[2] * out[0] - e[0] * out[2]))
                    Gq[o + 2, col] += kp * (A[o + 2, col] + (e[0] * out[1] - e[1] * out[0]))
            j = lam
        if kp != 0.0 and six:  # kp e: ∂e/∂q = J_r⁻¹(e) A (A's rows: the frame's body twist)
            jr_inv_se3(e6, J6)
            for col in range(nv):
                for r in range(6):
                    a6[r] = A[o + r, col]
                for r in range(6):
                    x = 0.0
                    for k in range(6):
                        x += J6[r, k] * a6[k]
                    Gq[o + r, col] += kp * x
        o += dim


@njit
def contact_derivatives_rows(mi, mf, spec, par, fmap, Q, V, T, Z, X, status, s, e):
    """States ``s`` to ``e``: ``Z[k]``, ``X[k]`` of `kkt_derivatives` from the state ``Q[k]``,
    ``V[k]``, ``T[k]`` (``V``, ``T``: one row per state or one shared) — the contact dynamics
    (``spec``, ``par`` of `dqdyn.contact._kernels`, a direct solve), the sweeps of
    `dqdyn.rnea_derivatives` with the external wrenches ``fmap λ`` (``fmap`` ((nbodies+1)·6,
    m)), the contacts' rows `contact_rows` from its forward sweep, then the
    elimination.  ``status[k]``: `OK` or `DERIV_FALLBACK`."""
    nb1, nv = mi.shape[0], mi[0, MI_IV]
    m = fmap.shape[1]
    nc, nn, nw, ns, ne = (nb1 + 1) * C_NCRBA, (nb1 + NSCRATCH) * W_COLS, kkt_size(nv, m), \
        _ws_size(nb1, nv), elimination_size(nv, m)
    buf = np.empty(nc + nn + nw + ns + ne + nv + m + 3 * nv * nv + 6 * nb1 + 3 * m * nv)  # (one block)
    wc = view(buf, 0, (nb1 + 1, C_NCRBA))
    wn = view(buf, nc, (nb1 + NSCRATCH, W_COLS))
    o = nc + nn
    w, ws, wk = view(buf, o, (nw,)), view(buf, o + nw, (ns,)), view(buf, o + nw + ns, (ne,))
    o += nw + ns + ne
    a, lam, R = view(buf, o, (nv,)), view(buf, o + nv, (m,)), view(buf, o + nv + m, (3, nv, nv))
    o += nv + m + 3 * nv * nv
    fext, A = view(buf, o, (nb1, 6)), view(buf, o + 6 * nb1, (m, nv))
    Gq, Gv = view(buf, o + 6 * nb1 + m * nv, (m, nv)), view(buf, o + 6 * nb1 + 2 * m * nv, (m, nv))
    ints = np.empty(2 * nv + m, np.int64)
    ip, iw = ints[: nv + m], ints[nv + m :]
    if not dof_parents(mi, ip):
        for k in range(s, e):
            status[k] = DERIV_FALLBACK
        return
    dofs = ip[:nv]  # (the DoF tree: M⁻¹ on its pattern)
    ff = fext.reshape(nb1 * 6)
    bv, bt = V.shape[0] > 1, T.shape[0] > 1
    z = np.int64(0)
    for k in range(s, e):
        v, t = V[k if bv else z], T[k if bt else z]
        st, its = _kkt_state(mi, mf, Q[k], v, t, spec, par, a, lam, wc, wn, w, ip)
        if st != OK:
            status[k] = DERIV_FALLBACK
            continue
        for i in range(nb1 * 6):
            f = 0.0
            for j in range(m):
                f += fmap[i, j] * lam[j]
            ff[i] = f
        _rnea_derivatives_on(mi, mf, Q[k], v, a, fext, bool(True), R, ws)  # (a bool, not a literal)
        contact_rows(mi, mf, Q[k], ws, spec, A, Gq, Gv)
        st = kkt_derivatives(R, A, Gq, Gv, par[0], dofs, Z[k], X[k], wk, iw)
        status[k] = OK if st == KKT_OK else DERIV_FALLBACK


@pjit
def contact_derivatives_batch(mi, mf, spec, par, fmap, Q, V, T, Z, X, status):
    """`contact_derivatives_rows` over a batch, in `BLOCKS` blocks of states (``prange``)."""
    N = np.int64(Q.shape[0])
    nblk = min(N, BLOCKS)
    for b in nb.prange(nblk):
        contact_derivatives_rows(mi, mf, spec, par, fmap, Q, V, T, Z, X, status,
                                 b * N // nblk, (b + 1) * N // nblk)

# ------------------------------------------------------------------------ the call gate
def _c_contact_derivatives(mip, mfp, nb1, bufs, lens):
    """One state through the C call gate (`dqdyn._engine.gate`): inputs ``q``, ``v``, ``tau``,
    the contact table ``spec`` flattened, ``par``, ``fmap`` flattened; the result
    ``[Z (3, nv, nv), X (3, m, nv)]`` of `contact_derivatives_rows`, ``m`` from its length.
    Lengths checked (`BAD_SHAPE`); the state's status returned."""
    mi, mf = gate_tables(mip, mfp, nb1)
    nq, nv = mi[0, MI_IQ], mi[0, MI_IV]
    size = lens[6]
    m = (size - 3 * nv * nv) // (3 * nv)
    if (lens[0] != nq or lens[1] != nv or lens[2] != nv or lens[3] % SPEC != 0 or lens[3] == 0
            or lens[4] != 6 or m <= 0 or size != 3 * nv * nv + 3 * m * nv or lens[5] != 6 * nb1 * m):
        return BAD_SHAPE
    res = nb.carray(bufs[6], (size,))
    status = np.empty(1, np.int64)
    contact_derivatives_rows(mi, mf, nb.carray(bufs[3], (lens[3] // SPEC, SPEC)), nb.carray(bufs[4], (6,)),
                             nb.carray(bufs[5], (6 * nb1, m)), nb.carray(bufs[0], (1, nq)),
                             nb.carray(bufs[1], (1, nv)), nb.carray(bufs[2], (1, nv)),
                             view(res, 0, (1, 3, nv, nv)), view(res, 3 * nv * nv, (1, 3, m, nv)), status,
                             np.int64(0), np.int64(1))  # (not literals: the batch's signature)
    return status[0]


def _c_centroidal_derivatives(mip, mfp, nb1, bufs, lens):
    """One state through the C call gate: inputs ``q``, ``v``, ``a``; the result (4, 6, nv) of
    `centroidal_derivatives_rows`, flat.  Lengths checked (`BAD_SHAPE`); the state's status
    returned."""
    mi, mf = gate_tables(mip, mfp, nb1)
    nq, nv = mi[0, MI_IQ], mi[0, MI_IV]
    if lens[0] != nq or lens[1] != nv or lens[2] != nv or lens[3] != 24 * nv:
        return BAD_SHAPE
    status = np.empty(1, np.int64)
    centroidal_derivatives_rows(mi, mf, nb.carray(bufs[0], (1, nq)), nb.carray(bufs[1], (1, nv)),
                                nb.carray(bufs[2], (1, nv)), nb.carray(bufs[3], (1, 4, 6, nv)),
                                status, np.int64(0), np.int64(1))  # (not literals: the batch's signature)
    return status[0]


_CD_C = _CDD_C = 0  # their addresses, set on first use


def contact_derivatives_gate() -> int:
    """The address of `_c_contact_derivatives` for ``GATE`` (compiled or loaded on the first
    call)."""
    return _CD_C or gate_address(globals(), "_CD_C", _c_contact_derivatives)


def centroidal_derivatives_gate() -> int:
    """The address of `_c_centroidal_derivatives` for ``GATE``."""
    return _CDD_C or gate_address(globals(), "_CDD_C", _c_centroidal_derivatives)


__all__ = ["centroidal_derivatives_rows", "centroidal_derivatives_batch", "centroidal_derivatives_gate", "NO_MASS", "contact_derivatives_gate", "kkt_derivatives", "elimination_size", "contact_derivatives_rows",
           "contact_derivatives_batch", "KKT_OK", "KKT_SINGULAR", "KKT_M_NOT_PD", "KKT_MAX_CONDITION",
           "DERIV_FALLBACK"]
