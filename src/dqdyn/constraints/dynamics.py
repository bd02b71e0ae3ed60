"""Constrained dynamics: Udwadia–Kalaba forward dynamics, a KKT reference, constrained inverse
dynamics of closed chains, and constraint stabilization (time integration lives in
`dqdyn.simulation.simulate`, which calls `constrained_forward_dynamics` and
`project_state`).

Constraints are `dqdyn.constraints.Constraint` objects giving ``A(q, v) v̇ = b(q, v)``;
several are stacked row-wise.  The unconstrained model is ``M v̇ + h(q, v) = τ`` (``h = C v + g``,
dqdyn's CRBA / RNEA by default, or the Gauss-principle terms of `gauss` with
``dynamics="gauss"``).

**Forward dynamics** ([Silva2022, eqs. (62)–(63)], [Udwadia1992]).  With ``Q = τ − h``, the
unconstrained acceleration ``a = M⁻¹ Q`` and a factor ``M = L Lᵀ`` (Cholesky; any square root
works in the fundamental equation, the symmetric ``M^{1/2}`` of the paper included):

    D = A L⁻ᵀ,   Q_c = L D⁺ (b − A a),   v̇ = a + M⁻¹ Q_c

``D⁺`` is the Moore–Penrose pseudo-inverse (an SVD with relative cut-off ``rcond``), so redundant
(rank-deficient) constraints are handled; ``Q_c = Aᵀ λ`` with the minimum-norm multipliers
``λ = (A M⁻¹ Aᵀ)⁺ (b − A a)``.  This ``v̇`` minimizes Gauss's function ``½ (v̇ − a)ᵀ M (v̇ − a)``
subject to ``A v̇ = b`` and equals the Lagrange-multiplier (KKT) solution
``[M −Aᵀ; A 0] [v̇; λ] = [Q; b]`` (`kkt_forward_dynamics`).  If ``A v̇ = b`` has no
solution (inconsistent constraints) the residual ``(I − D D⁺)(b − A a)`` is non-zero and
`InfeasibleError` names it.

**Inverse dynamics of closed chains** ([Kim2012, §3.1, eqs. (56)–(66)]): with the open-chain inverse
dynamics ``τ_r = M v̇ + h`` and ``τ_r = τ + Aᵀ λ``, the passive rows give ``A_pᵀ λ = τ_pr − τ_p``
and the active ones ``τ_a = τ_ar − A_aᵀ λ``.  Unique when ``A_aᵀ`` vanishes on the null space of
``A_pᵀ`` (``m = n_p``, eq. 58); otherwise (redundant actuation) the minimum-norm active torque
(eqs. 62–64) or the minimum-norm multipliers (``objective="min_constraint_force"``); an
`InfeasibleError` when the passive rows have no solution (under-actuated
for the requested motion, ``m < n_p``) or when the motion violates ``A v̇ = b``.

**Stabilization.**  ``baumgarte=(α, β)`` replaces ``b`` by ``b − 2α A v − β² φ(q)``;
`project_state` projects ``q`` onto ``φ(q) = 0`` (Gauss–Newton with the constraint
Jacobian) and ``v`` onto ``A v = 0`` (in the kinetic-energy metric);
`dqdyn.simulation.simulate` projects after each step (``project=True``).
"""

from __future__ import annotations

from typing import NamedTuple

import math

import numba as nb
import numpy as np

from dqdyn._engine.jit import kernel
from dqdyn._engine.views import unmanaged, view

from dqdyn.constraints.base import (
    COUPLING,
    DIFF_DRIVE,
    Constraint,
    LOOP_6D,
    SPEC_F,
    SPEC_I,
    as_constraint_list,
    as_states,
    baumgarte_gains,
    frame_rotation,
    stack_terms,
)
from dqdyn.errors import ConvergenceError, InfeasibleError, NonFiniteError, ShapeError, SingularError
from dqdyn.multibody.joints import REVOLUTE, SPHERICAL
from dqdyn.multibody.model import MF_PLACEMENT, MI_IQ, MI_IV, MI_JTYPE, MI_NV, MI_PARENT, Model
from dqdyn._engine.gate import GATE, SPLIT, fast_front, gate_address, gate_entry, gate_tables, gate_vector
from dqdyn._engine.linalg import chol_factor_r, lower_solve_r, lower_t_solve_r, spd_inverse
from dqdyn.kinematics.configuration import integrate
from dqdyn.dynamics.articulated import _has_mimic
from dqdyn._engine.boundary import check_q
from dqdyn.dynamics.derivatives._sweeps import dynamics_sweep, dynamics_sweep_size, sweep_views
from dqdyn.kinematics.forward import local_pose
from dqdyn.algebra._core import dq_mul, pose_translation

njit = kernel()
ijit = kernel(inline="always")  # small helpers, inlined at the IR level

class ConstrainedDynamicsResult(NamedTuple):
    """Output of `constrained_forward_dynamics` (one state, or a batch along axis 0)."""

    qdd: np.ndarray  # (..., nv) constrained acceleration v̇
    constraint_forces: np.ndarray  # (..., nv) generalized constraint force Q_c = Aᵀ λ
    multipliers: np.ndarray  # (..., m) minimum-norm λ with Q_c = Aᵀ λ
    A: np.ndarray  # (..., m, nv) stacked constraint matrix
    b: np.ndarray  # (..., m) stacked right-hand side (Baumgarte terms included)


class ConstrainedInverseResult(NamedTuple):
    """Output of `constrained_inverse_dynamics`."""

    tau: np.ndarray  # (nv,) generalized forces: actuated entries computed, passive ones = τ_p
    multipliers: np.ndarray  # (m,) λ with M v̇ + h = τ + Aᵀ λ
    constraint_forces: np.ndarray  # (nv,) Aᵀ λ
    unique: bool  # True when the actuated torques are uniquely determined


# ------------------------------------------------------------------------- the unconstrained terms
def _dynamics_terms(model: Model, q, v, dynamics: str):
    """``(M, h)`` at one state, or batched (leading axes of ``q``, ``v``)."""
    if dynamics == "gauss":
        from dqdyn.dynamics.gauss import gauss_model

        G = gauss_model(model, q, v)
        if np.ndim(v) == 1:
            return G.M, G.C @ v + G.g
        return G.M, np.matmul(G.C, v[..., None])[..., 0] + G.g  # (a batch: C v state by state)
    if dynamics != "crba":
        raise ShapeError(f"dynamics must be 'crba' or 'gauss', got {dynamics!r}")
    from dqdyn.dynamics.lagrange import mass_matrix, nonlinear_effects

    return mass_matrix(model, q), nonlinear_effects(model, q, v)


_NOT_PD = ("the mass matrix of model {!r} is not positive definite at this configuration (a DoF "
           "moves no inertia); constrained forward dynamics is undefined")


# ----------------------------------------------------------------- small dense kernels (compiled)
@ijit
def _chol(M, L, d):
    """Lower Cholesky factor of SPD ``M`` into ``L`` and ``d = 1 / diag(L)``; False if not
    positive definite."""
    return chol_factor_r(M, M.shape[0], L, d)


@ijit
def _lsolve(L, d, x):
    """In place ``x ← L⁻¹ x`` (lower triangular, ``d = 1 / diag(L)``)."""
    lower_solve_r(L, d, L.shape[0], x)


@ijit
def _ltsolve(L, d, x):
    """In place ``x ← L⁻ᵀ x``."""
    lower_t_solve_r(L, d, L.shape[0], x)


@njit
def _jacobi_columns(W, V):
    """One-sided Jacobi (Hestenes) SVD: rotate the columns of ``W`` (n × m) until they are
    mutually orthogonal, accumulating the rotations in ``V`` (m × m, set to I here), so that
    ``W_in = W_out Vᵀ`` with ``|W_out[:, k]| = σ_k``.  Accurate to relative precision; used for
    the Moore–Penrose pseudo-inverse of the (small) constraint matrices."""
    n, m = W.shape
    for i in range(m):
        for j in range(m):
            V[i, j] = 1.0 if i == j else 0.0
    for sweep in range(60):
        rotated = False
        for i in range(m - 1):
            for j in range(i + 1, m):
                al = 0.0
                be = 0.0
                ga = 0.0
                for r in range(n):
                    al += W[r, i] * W[r, i]
                    be += W[r, j] * W[r, j]
                    ga += W[r, i] * W[r, j]
                if abs(ga) <= 1e-15 * math.sqrt(al * be) or ga == 0.0:
                    continue
                rotated = True
                zeta = (be - al) / (2.0 * ga)
                t = (1.0 if zeta >= 0 else -1.0) / (abs(zeta) + math.sqrt(1.0 + zeta * zeta))
                c = 1.0 / math.sqrt(1.0 + t * t)
                sn = c * t
                for r in range(n):
                    wi = W[r, i]
                    wj = W[r, j]
                    W[r, i] = c * wi - sn * wj
                    W[r, j] = sn * wi + c * wj
                for r in range(m):
                    vi = V[r, i]
                    vj = V[r, j]
                    V[r, i] = c * vi - sn * vj
                    V[r, j] = sn * vi + c * vj
        if not rotated:
            break


@njit
def _pinv_apply(W, V, r, rcond, z, proj, lam):
    """With ``D = V Wᵀ`` (after `_jacobi_columns` on ``Dᵀ``): ``z = D⁺ r`` (n),
    ``proj`` = projection of ``r`` on range(D) (m), ``lam = (D Dᵀ)⁺ r`` (m).  Returns the rank."""
    n, m = W.shape
    smax2 = 0.0
    for k in range(m):
        s2 = 0.0
        for i in range(n):
            s2 += W[i, k] * W[i, k]
        if s2 > smax2:
            smax2 = s2
    for i in range(n):
        z[i] = 0.0
    for i in range(m):
        proj[i] = 0.0
        lam[i] = 0.0
    rank = 0
    for k in range(m):
        s2 = 0.0
        for i in range(n):
            s2 += W[i, k] * W[i, k]
        if s2 <= rcond * rcond * smax2 or s2 == 0.0:
            continue
        rank += 1
        c = 0.0
        for i in range(m):
            c += V[i, k] * r[i]
        for i in range(m):
            proj[i] += V[i, k] * c
            lam[i] += V[i, k] * (c / s2)
        for i in range(n):
            z[i] += W[i, k] * (c / s2)
    return rank


@njit
def _scaled_constraint_svd(L, d, A):
    """``W = L⁻¹ Aᵀ`` (n, m; ``Wᵀ = D = A L⁻ᵀ`` with ``M = L Lᵀ``, ``d = 1 / diag(L)``) made
    column-orthogonal in place by one-sided Jacobi, ``V`` (m, m) the rotations applied
    (`_jacobi_columns`)."""
    n = L.shape[0]
    m = A.shape[0]
    W = np.empty((n, m))
    V = np.empty((m, m))
    _scaled_w(L, d, A, W, np.empty(n))
    _jacobi_columns(W, V)
    return W, V


#: the largest 1-norm condition number of ``G = D Dᵀ`` solved by Cholesky in
#: `_full_rank_solve`; above it, the Jacobi SVD (accurate to relative precision)
_CHOL_COND = 1e5


@njit
def _full_rank_solve(W, r, G, LG, Gi, z, proj, lam):
    """The Udwadia–Kalaba step ([Silva2022, eq. (63)]) where ``D = A M^{-½}`` (``Wᵀ``) has full row
    rank and is well conditioned: there ``D⁺ = Dᵀ (D Dᵀ)⁻¹``, so ``λ = G⁻¹ r`` with
    ``G = D Dᵀ = Wᵀ W`` (m × m) by Cholesky, ``z = W λ``, ``proj = r`` (D maps onto R^m).  Used only when the
    Cholesky succeeds and ``‖G‖₁ ‖G⁻¹‖₁ < _CHOL_COND`` (for a symmetric G, a bound on its
    2-norm condition ``(σ_max / σ_min)²`` of D: D's singular values are then within a factor
    316 of each other, far above any ``rcond``, so the pseudo-inverse is the inverse, and the
    normal equations lose at most 5 of the 16 digits); otherwise False, with ``z``, ``proj``
    and ``lam`` untouched (the caller takes the Jacobi SVD, which also handles redundant
    rows).  Scratch ``G``, ``LG``, ``Gi``: (m, m); ``G⁻¹`` by `linalg.spd_inverse` (m
    divisions; solving for its m columns cost m² and half the kernel's time on a 6D weld).  For
    the 6D weld of a 7R loop (m = 6, cond₂ G ≈ 500) this replaces the Jacobi sweeps (~60
    rotations) by a 6 × 6 Cholesky."""
    n, m = W.shape
    if m == 0:
        for i in range(n):
            z[i] = 0.0
        return True
    for i in range(m):
        for j in range(i + 1):
            s = 0.0
            for k in range(n):
                s += W[k, i] * W[k, j]
            G[i, j] = s
            G[j, i] = s
    if not spd_inverse(G, m, LG, Gi):
        return False
    g1 = 0.0
    gi1 = 0.0
    for j in range(m):  # the 1-norms
        c1 = 0.0
        c2 = 0.0
        for i in range(m):
            c1 += abs(G[i, j])
            c2 += abs(Gi[i, j])
        g1 = max(g1, c1)
        gi1 = max(gi1, c2)
    if not (g1 * gi1 < _CHOL_COND):
        return False
    for i in range(m):
        s = 0.0
        for j in range(m):
            s += Gi[i, j] * r[j]
        lam[i] = s
    for i in range(m):
        proj[i] = r[i]  # (range(D) is all of R^m)
    for k in range(n):
        s = 0.0
        for i in range(m):
            s += W[k, i] * lam[i]
        z[k] = s
    return True


@ijit
def _scaled_w(L, d, A, W, col):
    """``W = L⁻¹ Aᵀ`` (n, m): ``Wᵀ = D = A L⁻ᵀ`` with ``M = L Lᵀ``; ``col`` (n) scratch."""
    n = L.shape[0]
    m = A.shape[0]
    for k in range(m):
        for j in range(n):
            col[j] = A[k, j]
        _lsolve(L, d, col)
        for j in range(n):
            W[j, k] = col[j]


@njit
def _uk_kernel(M, Qf, A, b, rcond, L, qdd, Qc, lam, info):
    """Udwadia–Kalaba (module doc) for one state.  ``info = [status, |residual|, rank, scale]``;
    status 1: M not positive definite."""
    n = M.shape[0]
    m = A.shape[0]
    # one scratch block for the arrays below
    _uk_on(M, Qf, A, b, rcond, L, qdd, Qc, lam, info, np.empty(4 * n + 2 * m + n * m + 3 * m * m))


@njit
def _uk_on(M, Qf, A, b, rcond, L, qdd, Qc, lam, info, w):
    """`_uk_kernel` on the scratch block ``w``, every array without its reference count
    (`unmanaged`; the caller holds them)."""
    M, Qf, A, b, L, qdd, Qc, lam, info, w = (
        unmanaged(M), unmanaged(Qf), unmanaged(A), unmanaged(b), unmanaged(L), unmanaged(qdd),
        unmanaged(Qc), unmanaged(lam), unmanaged(info), unmanaged(w))
    n = M.shape[0]
    m = A.shape[0]
    d = w[3 * n + 2 * m + n * m + 3 * m * m :]
    if not _chol(M, L, d):
        info[0] = 1.0
        return
    a = w[0:n]
    z = w[n : 2 * n]
    col = w[2 * n : 3 * n]
    r = w[3 * n : 3 * n + m]
    proj = w[3 * n + m : 3 * n + 2 * m]
    # (views: numba's reshape would cost ~0.1 µs each here.  With G⁻¹ from spd_inverse the
    # compiled q̈ equals the plain-Python run with views to the last bit —
    # tests/test_kernel_cache.py holds the two equal)
    W = view(w, 3 * n + 2 * m, (n, m))
    o = 3 * n + 2 * m + n * m
    V = view(w, o, (m, m))
    LG = view(w, o + m * m, (m, m))
    Gi = view(w, o + 2 * m * m, (m, m))
    for i in range(n):
        a[i] = Qf[i]
    _lsolve(L, d, a)
    _ltsolve(L, d, a)  # a = M⁻¹ Q
    for i in range(m):
        r[i] = b[i]
    for i in range(m):
        s = 0.0
        for j in range(n):
            s += A[i, j] * a[j]
        r[i] -= s
    _scaled_w(L, d, A, W, col)  # Wᵀ = D = A L⁻ᵀ
    if _full_rank_solve(W, r, V, LG, Gi, z, proj, lam):
        rank = m
    else:
        _jacobi_columns(W, V)
        rank = _pinv_apply(W, V, r, rcond, z, proj, lam)
    res = 0.0
    for i in range(m):
        res += (r[i] - proj[i]) ** 2
    # Q_c = L z ; v̇ = a + L⁻ᵀ z
    for i in range(n):
        s = 0.0
        for k in range(i + 1):
            s += L[i, k] * z[k]
        Qc[i] = s
    _ltsolve(L, d, z)
    for i in range(n):
        qdd[i] = a[i] + z[i]
    info[0] = 0.0
    info[1] = math.sqrt(res)
    info[2] = rank
    info[3] = 1.0
    if res > 0.0:  # the scale of the residual test (no residual: nothing to compare)
        na = 0.0
        for i in range(n):
            na += a[i] * a[i]
        nA = 0.0
        for i in range(m):
            for j in range(n):
                nA += A[i, j] * A[i, j]
        nb_ = 0.0
        for i in range(m):
            nb_ += b[i] * b[i]
        info[3] = 1.0 + math.sqrt(nb_) + math.sqrt(nA) * math.sqrt(na)


@njit
def _min_norm_step(A, r, rcond, z):
    """``z = A⁺ r`` (minimum-norm least squares) by one-sided Jacobi on ``Aᵀ``."""
    m, n = A.shape
    W = np.empty((n, m))
    for i in range(m):
        for j in range(n):
            W[j, i] = A[i, j]
    V = np.empty((m, m))
    _jacobi_columns(W, V)
    proj = np.empty(m)
    lam = np.empty(m)
    return _pinv_apply(W, V, r, rcond, z, proj, lam)


@njit
def _mass_projection(M, A, v, rcond, out):
    """``out = v − M⁻¹Aᵀ (A M⁻¹ Aᵀ)⁺ A v`` (the kinetic-energy-metric projection onto A v = 0).
    Returns False when M is not positive definite."""
    n = M.shape[0]
    m = A.shape[0]
    L = np.empty((n, n))
    d = np.empty(n)
    if not _chol(M, L, d):
        return False
    W, V = _scaled_constraint_svd(L, d, A)
    w = np.empty(n)  # w = Lᵀ v
    for i in range(n):
        s = 0.0
        for k in range(i, n):
            s += L[k, i] * v[k]
        w[i] = s
    smax2 = 0.0
    for k in range(m):
        s2 = 0.0
        for i in range(n):
            s2 += W[i, k] * W[i, k]
        smax2 = max(smax2, s2)
    for k in range(m):
        s2 = 0.0
        c = 0.0
        for i in range(n):
            s2 += W[i, k] * W[i, k]
            c += W[i, k] * w[i]
        if s2 <= rcond * rcond * smax2 or s2 == 0.0:
            continue
        for i in range(n):
            w[i] -= W[i, k] * (c / s2)
    _ltsolve(L, d, w)
    for i in range(n):
        out[i] = w[i]
    return True


def _rcond_tol(rcond, tol) -> tuple[float, float]:
    """``rcond`` in [0, 1) (the relative singular-value cut-off) and ``tol`` >= 0, as floats."""
    from dqdyn._engine.checks import real_scalar

    rcond = real_scalar(rcond, "rcond", "a number in [0, 1) (relative singular-value cut-off)")
    tol = real_scalar(tol, "tol", "a number >= 0 (relative residual tolerance)")
    if not 0.0 <= rcond < 1.0:
        raise ShapeError(f"rcond must be in [0, 1) (relative singular-value cut-off), got {rcond!r}")
    if tol < 0.0:
        raise ShapeError(f"tol must be >= 0 (relative residual tolerance), got {tol!r}")
    return rcond, tol


def udwadia_kalaba(M: np.ndarray, Q: np.ndarray, A: np.ndarray, b: np.ndarray, *,
                   rcond: float = 1e-10, tol: float = 1e-9):
    """The fundamental equation ([Silva2022, eqs. (62)–(63)]) on plain arrays, one state.

    Returns ``(v̇, Q_c, λ)`` for ``M v̇ = Q + Q_c`` subject to ``A v̇ = b`` (compiled: Cholesky,
    triangular solves and a one-sided Jacobi SVD of ``D = A L⁻ᵀ``).  Raises
    `InfeasibleError` when ``A v̇ = b`` has no solution (residual above ``tol`` relative to
    ``1 + |b| + |A||a|``) and `SingularError` when ``M`` is not positive definite."""
    rcond, tol = _rcond_tol(rcond, tol)
    M = np.ascontiguousarray(M, dtype=np.float64)
    n = M.shape[0]
    A = np.ascontiguousarray(np.asarray(A, dtype=np.float64).reshape(-1, n))
    b = np.ascontiguousarray(b, dtype=np.float64).reshape(-1)
    Qf = np.ascontiguousarray(Q, dtype=np.float64).reshape(n)
    m = A.shape[0]
    L = np.empty((n, n))
    qdd = np.empty(n)
    Qc = np.empty(n)
    lam = np.empty(m)
    info = np.zeros(4)
    _uk_kernel(M, Qf, A, b, float(rcond), L, qdd, Qc, lam, info)
    if info[0] == 1.0:
        raise SingularError("M: the mass matrix is not positive definite")
    if info[1] > tol * info[3]:
        raise InfeasibleError(_infeasible_msg(info, m))
    return qdd, Qc, lam


def _infeasible_msg(info, m: int) -> str:
    return (f"constraints: A v̇ = b is inconsistent, no acceleration satisfies it (least-squares "
            f"residual |A v̇ − b| = {info[1]:.3e} over {m} rows of rank {int(info[2])}); expected "
            "compatible constraints (b in the range of A): check for contradictory constraints")


@njit
def _uk_one(M, Qf, A, b, rcond, qdd, Qc, lam, info):
    """`_uk_kernel` for a batch of one (no thread-pool start-up)."""
    L = np.empty((Qf.shape[1], Qf.shape[1]))
    _uk_kernel(M[0], Qf[0], A[0], b[0], rcond, L, qdd[0], Qc[0], lam[0], info[0])


@kernel(parallel=True)
def _uk_batch(M, Qf, A, b, rcond, qdd, Qc, lam, info):
    """`_uk_kernel` over a batch of states (``prange``)."""
    N, n = Qf.shape
    for k in nb.prange(N):
        L = np.empty((n, n))
        _uk_kernel(M[k], Qf[k], A[k], b[k], rcond, L, qdd[k], Qc[k], lam[k], info[k])


# ------------------------------------------------- the compiled path of the bundled constraints
@njit
def _frame(mi, mf, q, body, pl, code, sw, J, jdv, R, p, t):
    """Row material of the frame ``(body, pl)`` from the world-frame sweep ``sw`` of
    `dynamics_sweep` (its poses, world motion axes ``𝒮``,
    twists and bias accelerations): its Jacobian ``J`` (6 × nv; ``code`` 2: world-aligned at the
    frame's origin ``o``, 0: in the frame's axes), ``jdv = J̇ v``, rotation ``R`` and world
    origin ``p``.  A world-aligned column is the joint's axis ``𝒮_c = [ω_c; v_c]`` (a twist at
    the sweep's origin) moved to ``o``: ``[ω_c; v_c + ω_c × o]``; the drift is the acceleration
    of the frame at ``q̈ = 0``: with the body's twist ``[ω; v]`` and bias acceleration ``[α; a]``
    (gravity taken out), ``ȯ = v + ω × o`` and ``J̇ v = [α; a + α × o + ω × ȯ]``; in the frame's
    axes ``J_b = Rᵀ J`` and ``J̇_b v = Rᵀ [α; a + α × o]`` (the derivative of ``Rᵀ J v`` minus
    ``J_b v̇``).  The same ``J``, ``J̇ v`` as `jacobian_drift_kernel`
    ([Silva2022, eq. (10), Lemma 2.1], in the frame's axes), which the general path uses (tests: the
    two paths, Pinocchio, finite differences).  ``t``: 16 scratch floats."""
    nb1 = mi.shape[0]
    nv = J.shape[1]
    for r in range(6):
        jdv[r] = 0.0
        for c in range(nv):
            J[r, c] = 0.0
    if body == 0:  # the ground: J = 0, J̇ v = 0
        frame_rotation(pl, R)
        pose_translation(pl, p)
        return
    X, S, Vw, Aw = sweep_views(sw, nb1, nv)[:4]
    xs = t[0:8]
    dq_mul(X[body], pl, xs)  # the frame's pose in the sweep's axes (its root at the origin)
    frame_rotation(xs, R)
    pose_translation(xs, p)
    o0, o1, o2 = p[0], p[1], p[2]
    j = body
    root = body
    while j > 0:
        root = j
        iv = mi[j, MI_IV]
        for k in range(mi[j, MI_NV]):
            c = iv + k
            w0, w1, w2 = S[c, 0], S[c, 1], S[c, 2]
            J[0, c] = w0
            J[1, c] = w1
            J[2, c] = w2
            J[3, c] = S[c, 3] + (w1 * o2 - w2 * o1)
            J[4, c] = S[c, 4] + (w2 * o0 - w0 * o2)
            J[5, c] = S[c, 5] + (w0 * o1 - w1 * o0)
        j = mi[j, MI_PARENT]
    w0, w1, w2 = Vw[body, 0], Vw[body, 1], Vw[body, 2]
    al0, al1, al2 = Aw[body, 0], Aw[body, 1], Aw[body, 2]
    d0 = Vw[body, 3] + (w1 * o2 - w2 * o1)  # ȯ
    d1 = Vw[body, 4] + (w2 * o0 - w0 * o2)
    d2 = Vw[body, 5] + (w0 * o1 - w1 * o0)
    jdv[0], jdv[1], jdv[2] = al0, al1, al2
    jdv[3] = (Aw[body, 3] - Aw[0, 3]) + (al1 * o2 - al2 * o1)
    jdv[4] = (Aw[body, 4] - Aw[0, 4]) + (al2 * o0 - al0 * o2)
    jdv[5] = (Aw[body, 5] - Aw[0, 5]) + (al0 * o1 - al1 * o0)
    if code == 0:  # in the frame's axes: Rᵀ
        for c in range(nv):
            for h in range(2):
                u0, u1, u2 = J[3 * h, c], J[3 * h + 1, c], J[3 * h + 2, c]
                J[3 * h, c] = R[0, 0] * u0 + R[1, 0] * u1 + R[2, 0] * u2
                J[3 * h + 1, c] = R[0, 1] * u0 + R[1, 1] * u1 + R[2, 1] * u2
                J[3 * h + 2, c] = R[0, 2] * u0 + R[1, 2] * u1 + R[2, 2] * u2
        for h in range(2):
            u0, u1, u2 = jdv[3 * h], jdv[3 * h + 1], jdv[3 * h + 2]
            jdv[3 * h] = R[0, 0] * u0 + R[1, 0] * u1 + R[2, 0] * u2
            jdv[3 * h + 1] = R[0, 1] * u0 + R[1, 1] * u1 + R[2, 1] * u2
            jdv[3 * h + 2] = R[0, 2] * u0 + R[1, 2] * u1 + R[2, 2] * u2
    else:
        jdv[3] += w1 * d2 - w2 * d1
        jdv[4] += w2 * d0 - w0 * d2
        jdv[5] += w0 * d1 - w1 * d0
    # the world origin: the sweep put the root body at the origin; add back its world position
    # (a revolute or spherical joint does not move its body's origin off the joint frame's)
    jt = mi[root, MI_JTYPE]
    if jt == REVOLUTE or jt == SPHERICAL:
        pose_translation(mf[root, MF_PLACEMENT : MF_PLACEMENT + 8], t[0:3])
    else:
        xr = t[8:16]
        xt = local_pose(mi, mf, root, q)
        for k in range(8):
            xr[k] = xt[k]
        pose_translation(xr, t[0:3])
    p[0] = o0 + t[0]
    p[1] = o1 + t[1]
    p[2] = o2 + t[2]


@ijit
def _terms_size(nv):
    return 12 * nv + 67


@njit
def _terms_kernel(mi, mf, q, v, spec, alpha, beta, sw, tw, A, b):
    """``A v̇ = b`` of the bundled constraint kinds (constraints/base.py ``SPEC_I``; ``spec``
    holds per constraint its ``SPEC_I`` integers then its ``SPEC_F`` floats), with the
    Baumgarte terms ``b ← b − 2α A v − β² φ``: the rows `Constraint._terms` and
    `stack_terms` compute in numpy (loops.py, nonholonomic.py: the same formulas; here
    the frames' ``J`` and ``J̇ v`` come from the world-frame sweep ``sw`` that gave ``M`` and
    ``h``, `_frame`).  ``tw``: `_terms_size` scratch floats."""
    nv = v.shape[0]
    w = tw  # one scratch block for the arrays below
    X = w[0:16]
    Ja = view(w, 16, (6, nv))
    Jb = view(w, 16 + 6 * nv, (6, nv))
    o = 12 * nv
    pa, pb = w[o + 16 : o + 19], w[o + 19 : o + 22]
    Ra, Rb = view(w, o + 22, (3, 3)), view(w, o + 31, (3, 3))
    pe = w[o + 40 : o + 46]
    R = view(w, o + 46, (3, 3))
    ga, gb = w[o + 55 : o + 61], w[o + 61 : o + 67]  # J̇ v of frames a and b
    r0 = 0
    w = SPEC_I + SPEC_F
    for c in range(spec.shape[0] // w):
        si = spec[c * w : c * w + SPEC_I]
        sf = spec[c * w + SPEC_I : (c + 1) * w]
        kind = int(si[0])
        dim = int(si[5])
        for r in range(r0, r0 + dim):
            for j in range(nv):
                A[r, j] = 0.0
            b[r] = 0.0
        has_pe = True
        if kind == COUPLING:
            qj, vj, qm, vm = int(si[1]), int(si[2]), int(si[3]), int(si[4])
            A[r0, vj] += 1.0
            A[r0, vm] -= sf[0]
            pe[0] = q[qj] - sf[0] * q[qm] - sf[1]
        elif kind == DIFF_DRIVE:
            _frame(mi, mf, q, int(si[1]), sf[0:8], int(0), sw, Ja, ga, Ra, pa, X)
            for j in range(nv):
                A[r0, j] = Ja[4, j]
            b[r0] = -ga[4]
            has_pe = False
        else:  # LOOP_6D, LOOP_3D (base.py): world-aligned Jacobians of frames a and b
            _frame(mi, mf, q, int(si[1]), sf[0:8], int(2), sw, Ja, ga, Ra, pa, X)
            _frame(mi, mf, q, int(si[2]), sf[8:16], int(2), sw, Jb, gb, Rb, pb, X)
            first = 0 if kind == LOOP_6D else 3
            for k in range(dim):
                row = first + k
                for j in range(nv):
                    A[r0 + k, j] = Jb[row, j] - Ja[row, j]
                b[r0 + k] = -(gb[row] - ga[row])
            if kind == LOOP_6D:  # rotvec(R_b R_aᵀ) (loops.py _rotvec)
                for i in range(3):
                    for j in range(3):
                        R[i, j] = Rb[i, 0] * Ra[j, 0] + Rb[i, 1] * Ra[j, 1] + Rb[i, 2] * Ra[j, 2]
                cth = min(max((R[0, 0] + R[1, 1] + R[2, 2] - 1.0) / 2.0, -1.0), 1.0)
                th = math.acos(cth)
                sth = math.sin(th)
                fac = 0.5 + th * th / 12.0 if sth < 1e-8 else th / (2.0 * sth)
                pe[0] = fac * (R[2, 1] - R[1, 2])
                pe[1] = fac * (R[0, 2] - R[2, 0])
                pe[2] = fac * (R[1, 0] - R[0, 1])
            for k in range(3):
                pe[dim - 3 + k] = pb[k] - pa[k]
        if alpha != 0.0 or beta != 0.0:
            for k in range(dim):
                ve = 0.0
                for j in range(nv):
                    ve += A[r0 + k, j] * v[j]
                if alpha != 0.0:
                    b[r0 + k] -= 2.0 * alpha * ve
                if has_pe and beta != 0.0:
                    b[r0 + k] -= beta * beta * pe[k]
        r0 += dim
    return 0


@njit
def _cfd_checked(mi, mf, q, v, tau, spec, par, out, ws):
    """One state of `constrained_forward_dynamics` in one compiled call: ``M`` and
    ``h = C v + g`` from one world-frame sweep (`dynamics_sweep`:
    one forward kinematics for the two, and the frames' Jacobians and drifts from it), the
    constraint rows (`_terms_kernel`) and the Udwadia–Kalaba solve (`_uk_kernel`).
    ``par = [α, β, rcond, tol]``; ``out = [q̈ (nv), Q_c (nv), λ (m), A (m·nv), b (m)]``.
    Status 0, or 1 to send the call down the general path, which names what is wrong (bad
    input, a singular M, inconsistent constraints, an overflow).  ``ws``: a scratch block used
    when it is large enough (the call gate passes the model's workspace), else one is allocated."""
    nv = mi[0, MI_IV]
    if q.shape[0] != mi[0, MI_IQ] or v.shape[0] != nv or tau.shape[0] != nv or par.shape[0] != 4:
        return 1
    m = (out.shape[0] - 2 * nv) // (nv + 2)
    if out.shape[0] != 2 * nv + m * (nv + 2):
        return 1
    if check_q(mi, q) != 0 or _has_mimic(mi):  # (mimic joints: the general path)
        return 1
    for k in range(nv):
        if not (math.isfinite(v[k]) and math.isfinite(tau[k])):
            return 1
    # one scratch block: M, L, h, info, the rows', the sweep's, the Udwadia–Kalaba step's
    size = (2 * nv * nv + nv + 4 + _terms_size(nv) + dynamics_sweep_size(mi.shape[0], nv)
            + 4 * nv + 2 * m + nv * m + 3 * m * m)
    if ws.shape[0] >= size:  # (the gate's: the model's workspace, no allocation)
        return _cfd_on(mi, mf, q, v, tau, spec, par, out, ws)
    return _cfd_on(mi, mf, q, v, tau, spec, par, out, np.empty(size))


@njit
def _cfd_on(mi, mf, q, v, tau, spec, par, out, w):
    """The work of `_cfd_checked` (arguments checked) on the scratch block ``w``, every
    array without its reference count (`unmanaged`; the caller holds them):
    the sweep and the rows take views of ``w`` per body, each an increment and a decrement of
    a shared count otherwise."""
    mi, mf, q, v, tau, spec, par, out, w = (
        unmanaged(mi), unmanaged(mf), unmanaged(q), unmanaged(v), unmanaged(tau), unmanaged(spec),
        unmanaged(par), unmanaged(out), unmanaged(w))
    nv = mi[0, MI_IV]
    m = (out.shape[0] - 2 * nv) // (nv + 2)
    qdd = out[0:nv]
    Qc = out[nv : 2 * nv]
    lam = out[2 * nv : 2 * nv + m]
    A = view(out, 2 * nv + m, (m, nv))
    b = out[2 * nv + m + m * nv :]
    o = 2 * nv * nv + nv + 4
    o2 = o + _terms_size(nv)
    M = view(w, 0, (nv, nv))
    L = view(w, nv * nv, (nv, nv))
    h = w[2 * nv * nv : 2 * nv * nv + nv]
    info = w[2 * nv * nv + nv : o]
    o3 = o2 + dynamics_sweep_size(mi.shape[0], nv)
    sw = w[o2:o3]
    dynamics_sweep(mi, mf, q, v, sw, M, h)
    if _terms_kernel(mi, mf, q, v, spec, par[0], par[1], sw, w[o:o2], A, b) != 0:
        return 1
    for k in range(nv):
        h[k] = tau[k] - h[k]
    for k in range(4):
        info[k] = 0.0
    _uk_on(M, h, A, b, par[2], L, qdd, Qc, lam, info, w[o3 : o3 + 4 * nv + 2 * m + nv * m + 3 * m * m])
    if info[0] == 1.0 or info[1] > par[3] * info[3]:
        return 1
    for k in range(2 * nv + m):
        if not math.isfinite(out[k]):
            return 1
    return 0


def _c_cfd(mip, mfp, nb1, bufs, lens):
    mi, mf = gate_tables(mip, mfp, nb1)
    return _cfd_checked(mi, mf, gate_vector(bufs, lens, 0), gate_vector(bufs, lens, 1),
                        gate_vector(bufs, lens, 2), gate_vector(bufs, lens, 3),
                        gate_vector(bufs, lens, 4), gate_vector(bufs, lens, 6),
                        gate_vector(bufs, lens, 5))


_CFD_C = 0  # its address, set on first use
_NO_DICT = {}
_PAR = {}  # [α, β, rcond, tol] arrays by value
_PAR_DEFAULT = np.array([0.0, 0.0, 1e-10, 1e-9])  # (no Baumgarte terms, the default rcond and tol)
_PAR_DEFAULT.flags.writeable = False  # (shared by every call, the compiled front's included)
# the one-call kernel as the public function's compiled front (gate.fast_front: the result's size
# comes with the constraint's cached layout, so the entry's own is a placeholder)
_CFD_ENTRY = gate_entry(globals(), "_CFD_C", _c_cfd, 5, 0, -1, scratch=True)


def _gate_layout(nv: int, spec: np.ndarray, m: int) -> tuple:
    """``(spec, result size, layout)`` of the gate call for ``m`` constraint rows: the result
    ``[q̈ (nv), Q_c (nv), λ (m), A (m·nv), b (m)]`` split into `ConstrainedDynamicsResult`'s
    parts by `SPLIT`."""
    return spec, 2 * nv + m * (nv + 2), ((nv,), (nv,), (m,), (m, nv), (m,))


def _compiled_spec(model: Model, constraints):
    """`_gate_layout` of the stacked compiled rows of ``constraints`` (a
    `Constraint`, a list or tuple of them, or None; float64, SPEC_I + SPEC_F per
    constraint), or None when one of them has no compiled form (or is not a constraint: the
    general path names it).  Kept on each constraint per model (constraints are not changed
    once used)."""
    if type(constraints) is list or type(constraints) is tuple:
        if len(constraints) == 1:  # (the common case, without the loop below)
            got = getattr(constraints[0], "__dict__", _NO_DICT).get("_cspec")
            if got is not None and got[0] is model:
                return got[1]
        cons = constraints
    elif constraints is None:
        cons = ()
    elif isinstance(constraints, Constraint):
        cons = (constraints,)
    else:
        return None
    if not cons:
        return _gate_layout(model.nv, np.zeros(0), 0)
    rows = []
    for c in cons:
        if not isinstance(c, Constraint):
            return None  # (the general path names it)
        got = c.__dict__.get("_cspec")
        if got is None or got[0] is not model:
            sp = c._compiled(model)
            if sp is not None:
                sp = _gate_layout(model.nv, np.concatenate([sp[0].astype(np.float64), sp[1]], axis=1).ravel(),
                                  int(sp[0][:, 5].sum()))
            got = (model, sp)
            c.__dict__["_cspec"] = got
        if got[1] is None:
            return None
        rows.append(got[1])
    if len(rows) == 1:
        return rows[0]
    return _gate_layout(model.nv, np.concatenate([r[0] for r in rows]), sum(r[2][2][0] for r in rows))


def _gate_parameters(baumgarte, rcond, tol) -> np.ndarray:
    """``[α, β, rcond, tol]`` of the gate call (checked; kept by value)."""
    try:
        key = (baumgarte, rcond, tol)
        par = _PAR.get(key)
    except TypeError:  # (unhashable gains, e.g. a list)
        key, par = None, None
    if par is None:
        rcond, tol = _rcond_tol(rcond, tol)
        alpha, beta = baumgarte_gains(baumgarte)
        par = np.array([alpha, beta, rcond, tol])
        par.flags.writeable = False  # (kept and shared by value)
        if key is not None and len(_PAR) < 64:
            _PAR[key] = par
    return par


def constraint_terms(model: Model, q, v, constraints, *, baumgarte=None):
    """Stacked ``(A, b)`` of ``constraints`` at ``(q, v)``: A (..., m, nv), b (..., m)."""
    cons = as_constraint_list(constraints)
    Q, V, batch = as_states(model, q, v)
    A, b = stack_terms(model, Q, V, cons, baumgarte)
    return A.reshape(batch + A.shape[1:]), b.reshape(batch + b.shape[1:])


@fast_front(_CFD_ENTRY, out=False, par=_PAR_DEFAULT, cls=ConstrainedDynamicsResult)
def constrained_forward_dynamics(model: Model, q, v, tau, constraints, *, baumgarte=None,
                                 dynamics: str = "crba", rcond: float = 1e-10,
                                 tol: float = 1e-9) -> ConstrainedDynamicsResult:
    """Constrained forward dynamics by the Udwadia–Kalaba fundamental equation (module doc).

    ``constraints``: a `Constraint` or a list of them (e.g.
    ``dqdyn.constraints.model_constraints(model)`` for the model's declared constraints).
    ``baumgarte=(α, β)``: stabilization terms.  ``dynamics``: ``"crba"`` (compiled CRBA and RNEA)
    or ``"gauss"`` (the dqGP terms ``M_GP``, ``C_GP v + g_GP``: eq. 63 literally).
    Returns `ConstrainedDynamicsResult` (``qdd``, ``constraint_forces``, ...); accepts a
    batch of states (leading axes), solved state by state."""
    if _ONE_CALL and dynamics == "crba":
        # the one-call path (bundled constraint kinds, through the C call gate: a single state,
        # or a small batch of C-contiguous float64 rows run state by state there); the general
        # path below runs where it declines, and names bad input
        sp = None
        if type(constraints) is list and len(constraints) == 1:  # (the common case, kept on the
            got = getattr(constraints[0], "__dict__", _NO_DICT).get("_cspec")  # constraint per model)
            if got is not None and got[0] is model:
                sp = got[1]
        if sp is None:
            try:
                model.mi
            except AttributeError:  # (not a model: the general path names it)
                pass
            else:
                sp = _compiled_spec(model, constraints)
        if sp is not None:
            if baumgarte is None and rcond is _RCOND and tol is _TOL:  # (the defaults, untouched)
                par = _PAR_DEFAULT
            else:
                par = _gate_parameters(baumgarte, rcond, tol)
            if GATE is None:  # NUMBA_DISABLE_JIT: the one-call kernel as Python (the compiled path's numbers)
                return _one_call_as_python(model.mi, model.mf, q, v, tau, sp, par) or _general_path(
                    model, q, v, tau, constraints, baumgarte, dynamics, rcond, tol)
            r = GATE(_CFD_C or gate_address(globals(), "_CFD_C", _c_cfd), model.mi, model.mf, sp[1], -1,
                     q, v, tau, sp[0], par, model._scratch)
            if type(r) is np.ndarray:
                return SPLIT(r, sp[2], 1, ConstrainedDynamicsResult)
            if r is None:  # a larger batch, or rows the gate does not take (lists, strides, ...)
                r = _one_call_batch(model, q, v, tau, sp, par)
                if r is not None:
                    return r
    return _general_path(model, q, v, tau, constraints, baumgarte, dynamics, rcond, tol)


class _Declined(Exception):
    """A state of `_one_call_batch` the one-call kernel declines (the general path names it)."""


def _declined(status, row):
    raise _Declined


@kernel(parallel=True)
def _cfd_batch(mi, mf, spec, par, Q, V, T, OUT, status):
    """`_cfd_checked` over a batch of states (``prange``; row ``k`` of ``OUT`` as the
    gate's batch result): each state gets the one-call path's numbers, whatever the batch."""
    none = np.empty(0)  # (no workspace: each state allocates its own)
    for k in nb.prange(Q.shape[0]):
        status[k] = _cfd_checked(mi, mf, Q[k], V[k], T[k], spec, par, OUT[k], none)


def _one_call_batch(model: Model, q, v, tau, sp, par):
    """`constrained_forward_dynamics` of the bundled constraint kinds where the call gate
    declines (more states than it runs serially, or inputs that are not C-contiguous float64
    rows): the one-call kernel state by state — the gate's small batch on the rows made C
    float64 and aligned, or for a larger batch `_cfd_batch`, chunked as every batch
    (`run_chunked`) — so a state's numbers do not depend on
    the batch it comes in (the general path's M and h come from CRBA and RNEA, last bits apart).
    None where the general path must run: input it must convert or name, a state the kernel
    declines (a singular M, inconsistent constraints, an overflow)."""
    from dqdyn._engine.batching import SERIAL_WORK, run_chunked
    from dqdyn._engine.boundary import as_vector_batch, broadcast_batch, kernel_rows
    from dqdyn.errors import DqdynError

    try:
        Q, V, batch = as_states(model, q, v)
        T, bt = as_vector_batch(tau, model.nv, "tau", "generalized forces, model.nv entries")
        (Q, V, T), batch = broadcast_batch([Q, V, T], [batch, batch, bt])
    except DqdynError:
        return None
    N = Q.shape[0]
    if N == 0:
        return None
    if N * model.mi.shape[0] <= SERIAL_WORK:  # the gate's own small batch, on rows it takes (so
        # no serial twin of _cfd_batch to compile: it would cost as much as the kernel)
        rows = [np.require(X if X.shape[0] == N else X[0], np.float64, "CA") for X in (Q, V, T)]
        OUT = GATE(_CFD_C or gate_address(globals(), "_CFD_C", _c_cfd), model.mi, model.mf, sp[1], -1,
                   *rows, sp[0], par, model._scratch)
        if type(OUT) is not np.ndarray:
            return None
        OUT = OUT.reshape(N, sp[1])
    else:
        OUT = np.empty((N, sp[1]))
        try:  # (N · nb1 > SERIAL_WORK: run_chunked runs the parallel kernel, never its twin)
            run_chunked(_cfd_batch, (model.mi, model.mf, sp[0], kernel_rows(par)), [Q, V, T], [OUT], N, (),
                        _declined)
        except _Declined:
            return None
    if batch == ():  # one state (given as a list, a strided view, ...)
        return SPLIT(OUT[0], sp[2], 1, ConstrainedDynamicsResult)
    parts = SPLIT(OUT, sp[2], 1, ConstrainedDynamicsResult)
    if len(batch) == 1:
        return parts
    return ConstrainedDynamicsResult(*(x.reshape(batch + x.shape[1:]) for x in parts))


_ONE_CALL = GATE is not None or nb.config.DISABLE_JIT  # (the one-call kernel runs: gated, or as Python)
_KW = getattr(constrained_forward_dynamics, "__wrapped__", constrained_forward_dynamics).__kwdefaults__
_RCOND, _TOL = _KW["rcond"], _KW["tol"]


def _one_call_as_python(mi, mf, q, v, tau, sp, par):
    """Under ``NUMBA_DISABLE_JIT`` (no call gate): `_cfd_checked` run as a plain Python
    function on one state of float64 vectors, so that the debugging mode gives what the compiled
    one-call path gives; None where the general path must run."""
    for x in (q, v, tau):
        if type(x) is not np.ndarray or x.ndim != 1 or x.dtype != np.float64:
            return None
    out = np.empty(sp[1])
    if _cfd_checked(mi, mf, q, v, tau, sp[0], par, out, np.empty(0)) != 0:
        return None
    parts, o = [], 0
    for shape in sp[2]:
        n = int(np.prod(shape))
        parts.append(out[o : o + n].reshape(shape))
        o += n
    return ConstrainedDynamicsResult(*parts)


def _general_path(model, q, v, tau, constraints, baumgarte, dynamics, rcond, tol):
    """`constrained_forward_dynamics` with each constraint's rows in numpy (any
    constraint, any batch), M and h from the compiled CRBA / RNEA (or the dqGP terms)."""
    cons = as_constraint_list(constraints)
    rcond, tol = _rcond_tol(rcond, tol)
    Q, V, batch = as_states(model, q, v)
    from dqdyn._engine.boundary import as_vector_batch, broadcast_batch

    T, bt = as_vector_batch(tau, model.nv, "tau", "generalized forces, model.nv entries")
    (Q, V, T), batch = broadcast_batch([Q, V, T], [batch, batch, bt])
    for name, X in (("q", Q), ("v", V), ("tau", T)):
        if not np.all(np.isfinite(X)):
            raise NonFiniteError(f"{name} must be finite (no NaN / inf)")
    A, b = stack_terms(model, Q, V, cons, baumgarte)
    N = Q.shape[0]
    if N == 1:
        M, h = _dynamics_terms(model, Q[0], V[0], dynamics)
        M, h = M[None], h[None]
    else:  # one batched (compiled) call each for M and h
        M, h = _dynamics_terms(model, Q, V, dynamics)
    qdd = np.empty((N, model.nv))
    Qc = np.empty((N, model.nv))
    lam = np.empty((N, A.shape[1]))
    info = np.zeros((N, 4))
    (_uk_one if N == 1 else _uk_batch)(np.ascontiguousarray(M), np.ascontiguousarray(T - h), np.ascontiguousarray(A),
              np.ascontiguousarray(b), float(rcond), qdd, Qc, lam, info)
    for n in range(N):
        if info[n, 0] == 1.0:
            raise SingularError(_NOT_PD.format(model.name) + (f" (batch element {n})" if N > 1 else ""))
        if info[n, 1] > tol * info[n, 3]:
            raise InfeasibleError(_infeasible_msg(info[n], A.shape[1]) + (f" (batch element {n})" if N > 1 else ""))
    if not (np.all(np.isfinite(qdd)) and np.all(np.isfinite(Qc)) and np.all(np.isfinite(lam))):
        raise NonFiniteError(
            "constrained forward dynamics overflowed to NaN or infinity (constraint terms A, b "
            f"or the state too large for float64: max |A| = {np.abs(A).max(initial=0.0):.3g}, "
            f"max |b| = {np.abs(b).max(initial=0.0):.3g})")
    shp = lambda x: x.reshape(batch + x.shape[1:])  # noqa: E731
    return ConstrainedDynamicsResult(shp(qdd), shp(Qc), shp(lam), shp(A), shp(b))


def kkt_solve(M: np.ndarray, Q: np.ndarray, A: np.ndarray, b: np.ndarray):
    """The Lagrange-multiplier reference: ``[M −Aᵀ; A 0] [v̇; λ] = [Q; b]`` by least squares
    (minimum norm, so a rank-deficient A is accepted).  Returns ``(v̇, λ, residual)``; the residual
    norm is non-zero when the constraints are inconsistent."""
    n, m = M.shape[0], A.shape[0]
    K = np.zeros((n + m, n + m))
    K[:n, :n] = M
    K[:n, n:] = -A.T
    K[n:, :n] = A
    rhs = np.concatenate([Q, b])
    sol = np.linalg.lstsq(K, rhs, rcond=None)[0]
    return sol[:n], sol[n:], float(np.linalg.norm(K @ sol - rhs))


def kkt_forward_dynamics(model: Model, q, v, tau, constraints, *, baumgarte=None):
    """Constrained forward dynamics by the KKT system (`kkt_solve`) with dqdyn's M and h;
    returns ``(v̇, λ)``; `InfeasibleError` for inconsistent constraints."""
    cons = as_constraint_list(constraints)
    q = np.asarray(q, dtype=float)
    v = np.asarray(v, dtype=float)
    A, b = constraint_terms(model, q, v, cons, baumgarte=baumgarte)
    M, h = _dynamics_terms(model, q, v, "crba")
    qdd, lam, res = kkt_solve(M, np.asarray(tau, dtype=float) - h, A, b)
    if res > 1e-9 * (1.0 + np.linalg.norm(b) + np.linalg.norm(tau)):
        raise InfeasibleError(f"KKT system inconsistent (residual {res:.3e})")
    return qdd, lam


# ------------------------------------------------------------------------------ inverse dynamics
def constrained_inverse_dynamics(model: Model, q, v, qdd, constraints, actuated, *,
                                 tau_passive=None, objective: str = "min_torque",
                                 rcond: float = 1e-10, tol: float = 1e-8) -> ConstrainedInverseResult:
    """Joint forces that produce the (constraint-consistent) motion ``(q, v, v̇)`` of a closed
    chain ([Kim2012, §3.1]).

    ``actuated``: nv booleans (or a list of actuated joint names / DoF indices).  ``tau_passive``:
    the forces of the passive DoFs (default 0: free joints).  ``objective`` for redundant
    actuation: ``"min_torque"`` (minimum-norm active forces, eqs. 62–64) or
    ``"min_constraint_force"`` (minimum-norm multipliers, the constraint-force minimization).
    Raises `InfeasibleError` if ``A v̇ ≠ b`` or if the passive DoFs cannot follow the motion
    (under-actuated: ``A_pᵀ λ = τ_pr − τ_p`` has no solution)."""
    cons = as_constraint_list(constraints)
    if objective not in ("min_torque", "min_constraint_force"):
        raise ShapeError(f"objective must be 'min_torque' or 'min_constraint_force', got {objective!r}")
    for name, x, n in (("q", q, model.nq), ("v", v, model.nv), ("qdd", qdd, model.nv)):
        x = np.asarray(x, dtype=float)
        if x.shape != (n,):
            raise ShapeError(f"{name} must have shape ({n},) (one state), got {x.shape}")
        if not np.all(np.isfinite(x)):
            raise NonFiniteError(f"{name} must be finite, got {x}")
    q = np.asarray(q, dtype=float)
    v = np.asarray(v, dtype=float)
    qdd = np.asarray(qdd, dtype=float)
    act = _actuated_mask(model, actuated)
    A, b = constraint_terms(model, q, v, cons)
    viol = float(np.linalg.norm(A @ qdd - b))
    if viol > tol * (1.0 + np.linalg.norm(b) + np.linalg.norm(A) * np.linalg.norm(qdd)):
        raise InfeasibleError(
            f"qdd: the requested acceleration violates the constraints (|A v̇ − b| = {viol:.3e}); "
            "expected A qdd = b: "
            "a closed chain can only follow motions with A v̇ = b (see Kim2012 eq. (55))"
        )
    M, h = _dynamics_terms(model, q, v, "crba")
    tau_r = M @ qdd + h
    tp = np.zeros(int((~act).sum())) if tau_passive is None else np.asarray(tau_passive, float).reshape(-1)
    if tp.shape != (int((~act).sum()),):
        raise ShapeError(f"tau_passive must have {int((~act).sum())} entries (one per passive DoF)")
    Ap, Aa = A[:, ~act], A[:, act]
    rp = tau_r[~act] - tp
    # λ0: minimum-norm solution of A_pᵀ λ = τ_pr − τ_p (eq. 57/59)
    if Ap.shape[1]:
        U, s, Vt = np.linalg.svd(Ap.T, full_matrices=True)
        rank = int(np.sum(s > rcond * (s[0] if s.size else 0.0)))
    else:
        U, s, Vt, rank = np.zeros((0, 0)), np.zeros(0), np.eye(A.shape[0]), 0
    Ur, sr, Vr = U[:, :rank], s[:rank], Vt[:rank]
    lam0 = Vr.T @ ((Ur.T @ rp) / sr) if rank else np.zeros(A.shape[0])
    resid = float(np.linalg.norm(Ap.T @ lam0 - rp))
    if resid > tol * (1.0 + np.linalg.norm(tau_r)):
        raise InfeasibleError(
            f"actuated: under-actuated for the requested motion: the passive DoFs "
            f"{np.flatnonzero(~act).tolist()} cannot follow it with the given passive forces "
            f"(residual of A_pᵀ λ = τ_pr − τ_p is {resid:.3e}; {A.shape[0]} constraint rows, "
            f"{int((~act).sum())} passive DoFs); use constrained forward / hybrid dynamics instead "
            "(Kim2012 §3.1, case m < n_p)"
        )
    N = Vt[rank:].T  # null space of A_pᵀ (m × k)
    tau_a0 = tau_r[act] - Aa.T @ lam0
    K = Aa.T @ N  # how the free multipliers move the active forces
    knorm = np.linalg.norm(K) if K.size else 0.0
    unique = not (knorm > rcond * (1.0 + np.linalg.norm(A)))
    lam = lam0
    if not unique and objective == "min_torque":
        sstar = np.linalg.lstsq(K, tau_a0, rcond=None)[0]  # eq. 64
        lam = lam0 + N @ sstar  # eq. 63
    tau = np.empty(model.nv)
    tau[~act] = tp
    tau[act] = tau_r[act] - Aa.T @ lam
    return ConstrainedInverseResult(tau, lam, A.T @ lam, unique)


def _actuated_mask(model: Model, actuated) -> np.ndarray:
    a = np.asarray(actuated)
    if a.dtype == bool:
        if a.shape != (model.nv,):
            raise ShapeError(f"actuated must be {model.nv} booleans, got shape {a.shape}")
        return a.copy()
    mask = np.zeros(model.nv, dtype=bool)
    for item in list(actuated):
        if isinstance(item, str):
            s = model.v_slice(item)
            mask[s] = True
        else:
            k = int(item)
            if not 0 <= k < model.nv:
                raise ShapeError(f"actuated: DoF index {k} out of range 0..{model.nv - 1}")
            mask[k] = True
    return mask


# ----------------------------------------------------------------------------- stabilization
def constraint_errors(model: Model, q, v, constraints):
    """``(position error norm, velocity error norm)`` of the stacked constraints at one state
    (position: holonomic constraints only; 0 when there are none)."""
    cons = as_constraint_list(constraints)
    pe = [c.position_error(model, q) for c in cons if c.holonomic]
    ve = [c.velocity_error(model, q, v) for c in cons]
    pn = float(np.linalg.norm(np.concatenate([np.ravel(e) for e in pe if e is not None]))) if pe else 0.0
    vv = [np.ravel(e) for e in ve if e is not None]
    vn = float(np.linalg.norm(np.concatenate(vv))) if vv else 0.0
    return pn, vn


def project_state(model: Model, q, v, constraints, *, tol: float = 1e-12, max_iter: int = 30,
                  project_velocity: bool = True, rcond: float = 1e-10):
    """Project a state onto the constraint manifold: returns ``(q, v)`` with ``max|φ(q)| ≤ tol``
    and ``A(q) v = 0``.

    Positions: Gauss–Newton ``q ← q ⊕ (−A_h⁺ φ)`` with the holonomic rows' Jacobian (minimum-norm
    step in ``v``-coordinates, on the manifold via `integrate`).  Velocities: the
    kinetic-energy-metric projection ``v ← v − M⁻¹Aᵀ (A M⁻¹ Aᵀ)⁺ A v`` over every constraint
    with a velocity form (nonholonomic ones included), which removes the least kinetic energy.
    `ConvergenceError` if the positions do not converge (a loop that cannot close)."""
    cons = as_constraint_list(constraints)
    q = np.array(q, dtype=float)
    v = np.array(v, dtype=float)
    hol = [c for c in cons if c.holonomic]
    if hol:
        zero = np.zeros((1, model.nv))
        err = np.inf
        for _ in range(max_iter + 1):
            Q = q.reshape(1, -1)
            rows, res = [], []
            for c in hol:
                A_, _, _, pe = c._terms(model, Q, zero)
                if pe is None:
                    continue
                if pe.shape[-1] != A_.shape[1]:
                    raise ShapeError(f"{c.name}: position error and A have different row counts")
                rows.append(A_[0])
                res.append(pe[0])
            if not rows:
                break
            ph = np.concatenate(res)
            err = float(np.max(np.abs(ph)))
            if err <= tol:
                break
            dq = np.empty(model.nv)
            _min_norm_step(np.ascontiguousarray(np.concatenate(rows)), ph, rcond, dq)
            q = integrate(model, q, -dq)
        else:
            raise ConvergenceError(
                f"project_state: positions did not converge in {max_iter} Gauss–Newton steps "
                f"(|φ| = {err:.3e}); the loop may not close at this configuration"
            )
    if project_velocity:
        Qv, Vv, _ = as_states(model, q, v)
        rows = []
        for c in cons:
            A_, _, ve, _ = c._terms(model, Qv, Vv)
            if ve is not None:
                rows.append(A_[0])
        if rows:
            from dqdyn.dynamics.lagrange import mass_matrix

            out = np.empty(model.nv)
            if not _mass_projection(mass_matrix(model, q), np.ascontiguousarray(np.concatenate(rows)),
                                    v, rcond, out):
                raise SingularError(_NOT_PD.format(model.name))
            v = out
    return q, v


__all__ = [
    "ConstrainedDynamicsResult",
    "ConstrainedInverseResult",
    "udwadia_kalaba",
    "constraint_terms",
    "constrained_forward_dynamics",
    "kkt_solve",
    "kkt_forward_dynamics",
    "constrained_inverse_dynamics",
    "constraint_errors",
    "project_state",
]
