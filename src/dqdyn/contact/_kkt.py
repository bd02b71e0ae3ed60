r"""The regularised / proximal solve of the contact KKT system shared by contact and impulse dynamics.

For one state, with ``M`` (n × n, SPD), the free solution ``a₀ = M⁻¹ r₀`` and constraint rows
``A`` (m × n), the system

    [[M, Aᵀ], [A, −ε I]] [x; −λ] = [r₀; b]

gives ``x = a₀ + M⁻¹ Aᵀ λ`` and ``(G + ε I) λ = b − A a₀`` with the Delassus matrix
``G = A M⁻¹ Aᵀ``.  For ``ε = 0`` and a redundant contact set (``A`` rank deficient, e.g. four
feet and two hands on a humanoid) ``G`` is singular; the proximal method of multipliers
([Carpentier2021], Pinocchio's ``ProximalSettings``) iterates

    (G + (ε + μ) I) λ_{k+1} = b − A a₀ + μ λ_k,     λ₀ = 0,

each step a well-conditioned Cholesky solve, to the solution of ``(G + εI) λ = b − A a₀``
closest to ``λ₀`` (for ``ε = 0``: the minimum-norm multipliers; ``x`` is unique whenever the
constraints are consistent).  Without the proximal term (``proximal=None``) and with ``ε = 0``
a singular ``G`` raises `SingularError` naming ``contacts``.
"""

from __future__ import annotations

import numpy as np

from dqdyn.errors import InfeasibleError, ShapeError, SingularError


def check_settings(regularization, proximal, max_iter, tol):
    try:
        eps = float(regularization)
    except (TypeError, ValueError):
        raise ShapeError(f"regularization must be a non-negative number, got {regularization!r}") from None
    if not (np.isfinite(eps) and eps >= 0):
        raise ShapeError(f"regularization must be finite and non-negative, got {regularization!r}")
    if proximal is not None:
        try:
            mu = float(proximal)
        except (TypeError, ValueError):
            raise ShapeError(f"proximal must be a positive number or None, got {proximal!r}") from None
        if not (np.isfinite(mu) and mu > 0):
            raise ShapeError(f"proximal must be finite and positive (or None), got {proximal!r}")
        proximal = mu
    if not isinstance(max_iter, (int, np.integer)) or max_iter < 1:
        raise ShapeError(f"max_iter must be a positive integer, got {max_iter!r}")
    try:
        tol = float(tol)
    except (TypeError, ValueError):
        raise ShapeError(f"tol must be a positive number, got {tol!r}") from None
    if not (np.isfinite(tol) and tol > 0):
        raise ShapeError(f"tol must be finite and positive, got {tol!r}")
    return eps, proximal, int(max_iter), tol


def solve(M, r0, A, b, eps, proximal, max_iter, tol, where=""):
    """``(x, λ, iterations)`` of the KKT system above for one state (module docstring).

    ``proximal`` is μ relative to the mean diagonal of ``G`` (scale free); ``None``: a direct
    Cholesky solve of ``G + εI``."""
    try:
        L = np.linalg.cholesky(M)
    except np.linalg.LinAlgError:
        raise SingularError("the mass matrix is not positive definite at this configuration (a DoF "
                            "moves no inertia); contact dynamics is undefined" + where) from None
    a0 = _chol_solve(L, r0)
    m = A.shape[0]
    if m == 0:
        return a0, np.zeros(0), 0
    W = np.linalg.solve(L, A.T)  # L⁻¹ Aᵀ
    G = W.T @ W
    r = b - A @ a0
    scale = max(float(np.trace(G)) / m, 1e-300)
    if proximal is None:
        K = G + eps * np.eye(m)
        w = np.linalg.eigvalsh(K)
        if eps == 0.0 and not w[0] > 1e-12 * max(w[-1], 1e-300):
            raise SingularError(
                f"contacts: the contact set is singular (its {m} rows have rank "
                f"{int(np.sum(w > 1e-12 * w[-1]))}: redundant contacts) and neither "
                f"regularization nor proximal is set; pass proximal=1e-8 (the proximal scheme) or "
                f"regularization > 0" + where)
        lam = _chol_solve(np.linalg.cholesky(K), r)
        return a0 + _chol_solve(L, A.T @ lam), lam, 1
    mu = proximal * scale
    Lk = np.linalg.cholesky(G + (eps + mu) * np.eye(m))
    lam = np.zeros(m)
    nr = float(np.linalg.norm(r))
    # stop once the step no longer moves λ; or once the primal residual of (G + εI) λ = r is at
    # rounding level while the steps stall (a rounding-level inconsistency of redundant rows
    # moves λ at a constant rate along the null space of Aᵀ, which leaves x unchanged)
    prev = np.inf
    for k in range(1, max_iter + 1):
        new = _chol_solve(Lk, r + mu * lam)
        step = float(np.linalg.norm(new - lam))
        lam = new
        nl = float(np.linalg.norm(lam))
        if step <= tol * (1.0 + nl):
            break
        res = float(np.linalg.norm(G @ lam + eps * lam - r))
        if step > 0.5 * prev and res <= tol * (1.0 + nr + scale * nl):
            break
        prev = step
    else:
        raise InfeasibleError(
            f"contacts: the contact constraints are inconsistent (the proximal iterations did not "
            f"converge in {max_iter} steps; residual {res:.3e} of |b − A a₀| = {nr:.3e}): "
            f"redundant contacts whose accelerations / velocities cannot all be met" + where)
    return a0 + _chol_solve(L, A.T @ lam), lam, k


def _chol_solve(L, y):
    return np.linalg.solve(L.T, np.linalg.solve(L, y))
