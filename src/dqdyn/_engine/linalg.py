"""Small dense linear algebra inside the kernels: a Cholesky factor, its triangular solves, and
the inverse of a small SPD matrix.

Used wherever a kernel solves a small SPD system in place (the multi-DoF joint blocks of the
articulated-body algorithms, M q̈ = τ − h in `lagrange`, the Udwadia–Kalaba kernel of
`dqdyn.constraints.dynamics`) or needs ``M⁻¹`` of a small model (`derivatives`), so
there is one Cholesky in the library.
"""

from __future__ import annotations

import math

from dqdyn._engine.jit import kernel

njit = kernel(error_model="numpy")


@njit
def chol_factor(A, n, L):
    """Cholesky factor ``L`` of the leading ``n × n`` block of SPD ``A``; False if not PD (or a
    pivot is NaN)."""
    for i in range(n):
        for j in range(i + 1):
            s = A[i, j]
            for k in range(j):
                s -= L[i, k] * L[j, k]
            if i == j:
                if not s > 1e-300:  # (a NaN pivot too: `s <= 1e-300` let it through)
                    return False
                L[i, i] = math.sqrt(s)
            else:
                L[i, j] = s / L[j, j]
    return True


@njit
def chol_factor_r(A, n, L, d):
    """`chol_factor` keeping the reciprocals ``d = 1 / diag(L)`` and dividing by nothing
    else: n divisions instead of n(n + 1)/2, and none in `lower_solve_r` /
    `lower_t_solve_r`.  On the small systems of the constraint solve (n ≤ ~10) the
    divisions are most of the time: each sits on the recursion's dependency chain and takes
    3–5 multiplications' latency.  (``s · (1/r)`` may differ from ``s / r`` in the last bit.)"""
    for i in range(n):
        for j in range(i + 1):
            s = A[i, j]
            for k in range(j):
                s -= L[i, k] * L[j, k]
            if i == j:
                if not s > 1e-300:  # (a NaN pivot too)
                    return False
                r = math.sqrt(s)
                L[i, i] = r
                d[i] = 1.0 / r
            else:
                L[i, j] = s * d[j]
    return True


@njit
def lower_solve_r(L, d, n, x):
    """In place ``x ← L⁻¹ x`` with ``d = 1 / diag(L)`` (`chol_factor_r`)."""
    for i in range(n):
        s = x[i]
        for k in range(i):
            s -= L[i, k] * x[k]
        x[i] = s * d[i]


@njit
def lower_t_solve_r(L, d, n, x):
    """In place ``x ← L⁻ᵀ x`` with ``d = 1 / diag(L)``."""
    for i in range(n - 1, -1, -1):
        s = x[i]
        for k in range(i + 1, n):
            s -= L[k, i] * x[k]
        x[i] = s * d[i]


@njit
def lower_solve(L, n, x):
    """In place ``x ← L⁻¹ x`` (``L`` lower triangular, leading ``n × n`` block)."""
    for i in range(n):
        s = x[i]
        for k in range(i):
            s -= L[i, k] * x[k]
        x[i] = s / L[i, i]


@njit
def lower_t_solve(L, n, x):
    """In place ``x ← L⁻ᵀ x``."""
    for i in range(n - 1, -1, -1):
        s = x[i]
        for k in range(i + 1, n):
            s -= L[k, i] * x[k]
        x[i] = s / L[i, i]


@njit
def chol_solve(L, n, b, x):
    """Solve ``L Lᵀ x = b`` (``b`` and ``x`` may alias)."""
    for i in range(n):
        x[i] = b[i]
    lower_solve(L, n, x)
    lower_t_solve(L, n, x)


@njit
def spd_inverse(A, n, L, out):
    """``out = A⁻¹`` (leading ``n × n`` block, exactly symmetric) of SPD ``A``; False if ``A`` is
    not positive definite.  ``A = L Lᵀ`` by `chol_factor`; ``L`` is then inverted in place
    (its diagonal replaced by the reciprocals, then column by column, top down: row ``i`` of
    column ``j`` needs the original ``L_ik`` for ``k ≥ j`` and the inverse's ``(L⁻¹)_kj`` for
    ``k < i``), and ``A⁻¹ = L⁻ᵀ L⁻¹``.  About n³/2 multiply-adds and n divisions past the
    factor (solving for the n columns with `chol_solve` costs n² divisions): for small n.
    The factor is `chol_factor_r`'s (its reciprocals kept in ``out``'s first row until the
    product overwrites it: ``out`` must not alias ``A``)."""
    d = out[0]
    if not chol_factor_r(A, n, L, d):
        return False
    for j in range(n):
        L[j, j] = d[j]
    for j in range(n):
        for i in range(j + 1, n):
            s = L[i, j] * L[j, j]
            for k in range(j + 1, i):
                s += L[i, k] * L[k, j]
            L[i, j] = -s * L[i, i]
    for c in range(n):
        for r in range(c, n):
            s = 0.0
            for k in range(r, n):
                s += L[k, r] * L[k, c]
            out[r, c] = s
            out[c, r] = s
    return True


# ---------------------------------------------------------------- tree-sparse factor and solves
# A joint-space inertia matrix of a kinematic tree has M_ij ≠ 0 only where DoF i is an ancestor of
# DoF j or the other way round; with the DoFs numbered parents first (``par[k] < k``, −1 for
# none), ``M = Lᵀ L`` has a lower-triangular ``L`` with the same pattern, and the factor and its
# solves walk each DoF's ancestors only ([Featherstone2008, §6.5, Tables 6.3-6.4]): on a
# quadruped 18 × 18 about a quarter of the dense Cholesky's work, on a humanoid less.


@njit
def tree_factor_r(A, n, par, L, d):
    """``A = Lᵀ L`` (the leading ``n × n`` block of SPD ``A``, read in its lower triangle on the
    tree pattern ``par``), ``L`` lower triangular on that pattern (no other entry is written or
    read) and ``d = 1 / diag(L)``; False if not PD (or a pivot is NaN).  ``L`` may be ``A``."""
    for i in range(n):
        L[i, i] = A[i, i]
        j = par[i]
        while j >= 0:
            L[i, j] = A[i, j]
            j = par[j]
    for k in range(n - 1, -1, -1):
        s = L[k, k]
        if not s > 1e-300:  # (a NaN pivot too)
            return False
        r = math.sqrt(s)
        L[k, k] = r
        dk = 1.0 / r
        d[k] = dk
        i = par[k]
        while i >= 0:
            L[k, i] *= dk
            i = par[i]
        i = par[k]
        while i >= 0:
            lki = L[k, i]
            j = i
            while j >= 0:
                L[i, j] -= lki * L[k, j]
                j = par[j]
            i = par[i]
    return True


@njit
def tree_lt_solve_r(L, d, par, n, x):
    """In place ``x ← L⁻ᵀ x`` (`tree_factor_r`'s ``L``; tips to root, each entry pushed to its
    ancestors: a vector on one path, a contact row, stays on that path)."""
    for i in range(n - 1, -1, -1):
        xi = x[i] * d[i]
        x[i] = xi
        if xi != 0.0:
            j = par[i]
            while j >= 0:
                x[j] -= L[i, j] * xi
                j = par[j]


@njit
def tree_l_solve_r(L, d, par, n, x):
    """In place ``x ← L⁻¹ x`` (root to tips, each entry from its ancestors)."""
    for i in range(n):
        s = x[i]
        j = par[i]
        while j >= 0:
            s -= L[i, j] * x[j]
            j = par[j]
        x[i] = s * d[i]


@njit
def dot4(x, y, n):
    """``Σ_{j<n} x[j] y[j]`` in four interleaved partial sums (a fixed order, so the same bits on
    every call): four independent addition chains instead of the one that strict IEEE
    arithmetic leaves latency-bound (the contact kernels' Delassus matrix and residuals)."""
    s0 = s1 = s2 = s3 = 0.0
    j = 0
    while j + 4 <= n:
        s0 += x[j] * y[j]
        s1 += x[j + 1] * y[j + 1]
        s2 += x[j + 2] * y[j + 2]
        s3 += x[j + 3] * y[j + 3]
        j += 4
    while j < n:
        s0 += x[j] * y[j]
        j += 1
    return (s0 + s1) + (s2 + s3)


@njit
def tree_l_mul(L, par, n, x, out):
    """``out = L x`` for `tree_factor_r`'s ``L`` (each entry from its DoF's ancestors)."""
    for i in range(n):
        s = L[i, i] * x[i]
        j = par[i]
        while j >= 0:
            s += L[i, j] * x[j]
            j = par[j]
        out[i] = s


@njit
def tree_nnz(par, n):
    """The number of entries of `tree_factor_r`'s ``L`` (each DoF's ancestors, and itself)."""
    nnz = 0
    for k in range(n):
        j = k
        while j >= 0:
            nnz += 1
            j = par[j]
    return nnz


@njit
def tree_spd_inverse(A, n, par, L, d, t, ends, out):
    """``out = A⁻¹`` (exactly symmetric) of SPD ``A`` on the tree pattern ``par``; False if not
    PD.  ``A = Lᵀ L`` by `tree_factor_r`, ``U = L⁻¹`` (a tree's inverse factor keeps the
    pattern: ``U_ij = −d_i Σ_k L_ik U_kj`` over the ancestors ``k`` of ``i`` at or below ``j``),
    kept transposed in ``L``'s upper triangle, and ``A⁻¹ = U Uᵀ`` as the sum over ``k`` of the
    outer products of column ``k`` of ``U``, which lives on the subtree of DoF ``k``: a
    contiguous range where the DoFs are numbered depth first (rows of contiguous, vectorisable
    updates), else entry by entry over common ancestors.  About ``Σ_k depth_k² + Σ_k
    |subtree_k|²/2`` multiply-adds: on a quadruped a third of the dense inverse's.  ``t``:
    ``n`` floats, ``ends``: ``n`` ints of scratch."""
    if not tree_factor_r(A, n, par, L, d):
        return False
    for j in range(n):
        t[j] = 0.0
    for i in range(n):  # row i of U from the rows of its ancestors; stored as L[j, i] = U_ij
        k = par[i]
        while k >= 0:
            lik = L[i, k]
            j = k
            while j >= 0:
                t[j] += lik * L[j, k]
                j = par[j]
            k = par[k]
        di = d[i]
        L[i, i] = di
        j = par[i]
        while j >= 0:
            L[j, i] = -di * t[j]
            t[j] = 0.0
            j = par[j]
    depth_first = True
    for k in range(n):
        ends[k] = k + 1
        t[k] = 1.0  # (subtree sizes, as floats)
    for a in range(n - 1, -1, -1):
        p = par[a]
        if p >= 0:
            t[p] += t[a]
            ends[p] = max(ends[p], ends[a])
    for k in range(n):
        if ends[k] - k != int(t[k]):
            depth_first = False
    for a in range(n):
        for b in range(a + 1):
            out[a, b] = 0.0
    if depth_first:
        for k in range(n):
            for a in range(k, ends[k]):
                u = L[k, a]
                if u != 0.0:
                    for b in range(k, a + 1):
                        out[a, b] += u * L[k, b]
    else:
        for j in range(n):
            t[j] = 0.0
        for a in range(n):  # (U Uᵀ)_ab, b ≤ a: row a of U scattered into t, dotted with row b
            j = a
            while j >= 0:
                t[j] = L[j, a]
                j = par[j]
            for b in range(a + 1):
                s = 0.0
                j = b
                while j >= 0:
                    s += L[j, b] * t[j]
                    j = par[j]
                out[a, b] = s
            j = a
            while j >= 0:
                t[j] = 0.0
                j = par[j]
    for a in range(n):
        for b in range(a):
            out[b, a] = out[a, b]
    return True
