"""The Udwadia–Kalaba fundamental equation on dense arrays ([Silva2022, eqs. (62)–(63)],
[Udwadia1992]): the compiled kernels behind `dqdyn.constraints.forward` and
`dqdyn.constraints.stabilization`, and `udwadia_kalaba` on plain arrays.

With ``Q = τ − h``, the unconstrained acceleration ``a = M⁻¹ Q`` and a factor ``M = L Lᵀ``
(Cholesky; any square root works in the fundamental equation, the symmetric ``M^{1/2}`` of the
paper included):

    D = A L⁻ᵀ,   Q_c = L D⁺ (b − A a),   v̇ = a + M⁻¹ Q_c

``D⁺`` is the Moore–Penrose pseudo-inverse (a one-sided Jacobi SVD with relative cut-off
``rcond``, `_jacobi_columns`; ``D Dᵀ`` by Cholesky where ``D`` has full row rank and is well
conditioned, `_full_rank_solve`), so redundant (rank-deficient) constraints are handled;
``Q_c = Aᵀ λ`` with the minimum-norm multipliers ``λ = (A M⁻¹ Aᵀ)⁺ (b − A a)``.  If
``A v̇ = b`` has no solution (inconsistent constraints) the residual ``(I − D D⁺)(b − A a)`` is
non-zero and `InfeasibleError` names it.
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np

from dqdyn._engine.jit import kernel
from dqdyn._engine.linalg import (
    chol_factor_r,
    lower_solve_r,
    lower_t_solve_r,
    spd_inverse,
)
from dqdyn._engine.views import unmanaged, view
from dqdyn.errors import InfeasibleError, ShapeError, SingularError

njit = kernel()
ijit = kernel(inline="always")  # small helpers, inlined at the IR level


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
    for sweep in range(60):  # noqa: B007
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
    # tests/engine/test_kernel_cache.py holds the two equal)
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
