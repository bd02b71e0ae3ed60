"""Principal axes of a real symmetric 3×3 matrix [Mladenova, §5, eqs. (168)–(189)].

Closed form (Mladenova's two-level vector-parameter route): find ``c'' = ⟨c, c̃⟩`` with
``O(c'')ᵀ A O(c'')`` diagonal (Theorem 4).

* Level 1, ``c = (x, 0, z)``: ``x`` is a real root of the cubic ``P(x) = det[n, A n, A² n]``,
  ``n = (0, x, −1)`` (the clean form of the OCR-garbled (179); ``det U = 256 (1 + x²)³ P² Q``
  (178)).  For that ``x`` the entries ``b₁₂``, ``b₁₃`` of ``B = O(c)ᵀ A O(c)`` (169), multiplied by
  ``(1 + x² + z²)²``, are the quartics ``Σ C_k z^k`` and ``Σ D_k z^k`` with the coefficients
  (172)–(173); ``z`` is a common real root (two per root of ``P``, [Mladenova, §5.3] — the
  printed "one z for each x" is wrong).  Then the first column of ``O(c)`` is an eigenvector.
* Level 2, ``c̃ = (u, 0, 0)``: ``u`` a root of ``u⁴ − 2a u³ − 6u² + 2a u + 1 = 0`` (184),
  ``a = (C₃₃ − C₂₂)/C₂₃``, all four real (185)–(188).
* Degenerate cases: ``A`` already diagonal (``c'' = 0``); ``a₁₂ = a₁₃ = 0`` (level 2 only);
  ``C₂₃ = 0`` after level 1 (no level 2); ``P ≡ 0`` (a repeated eigenvalue — e.g. the point-mass
  inertia (191)) where ``x`` is free and ``x = 0`` is taken; candidates whose level-1 residual is
  not at round-off are discarded and the next root of ``P`` is tried.

``method="eigh"``: `numpy.linalg.eigh` (the robust default for production use).
Both return eigenvalues in ascending order with a proper rotation ``R`` (``det R = +1``) whose
columns are the principal axes: ``Rᵀ A R = diag(values)``.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from dqdyn import errors
from dqdyn.algebra.vector_parameter import matrix_from_vp, vp_compose


class PrincipalAxes(NamedTuple):
    values: np.ndarray  #: (3,) eigenvalues, ascending
    R: np.ndarray  #: (3, 3) proper rotation, columns = principal axes: Rᵀ A R = diag(values)
    vp: np.ndarray | None  #: closed form only: the paper's c'' (O(c'')ᵀ A O(c'') diagonal, unsorted)


def _sym(A, name):
    A = np.asarray(A, dtype=float)
    if A.shape != (3, 3):
        raise errors.ShapeError(f"{name} must be a 3×3 matrix; got shape {A.shape}")
    if not np.all(np.isfinite(A)):
        raise errors.NonFiniteError(f"{name} contains NaN or infinity")
    if np.max(np.abs(A - A.T)) > 1e-12 * max(1.0, np.max(np.abs(A))):
        raise errors.ShapeError(f"{name} must be symmetric (|A − Aᵀ| = {np.max(np.abs(A - A.T)):.3g})")
    return 0.5 * (A + A.T)


def P_coefficients(A):
    """Coefficients ``[p₃, p₂, p₁, p₀]`` of ``P(x) = det[n, A n, A² n]``, ``n = (0, x, −1)``
    (the corrected form of [Mladenova, eq. (179)], garbled in print)."""
    a11, a12, a13, a22, a23, a33 = A[0, 0], A[0, 1], A[0, 2], A[1, 1], A[1, 2], A[2, 2]
    return np.array([
        a11 * a12 * a23 - a12**2 * a13 + a13 * a23**2 - a12 * a23 * a33,
        a11 * a12 * a22 - a11 * a12 * a33 - a11 * a13 * a23 - a12**3 + 2 * a12 * a13**2 - a12 * a22 * a33
        - a12 * a23**2 + a12 * a33**2 + 2 * a13 * a22 * a23 - a13 * a23 * a33,
        -a11 * a12 * a23 - a11 * a13 * a22 + a11 * a13 * a33 + 2 * a12**2 * a13 - a12 * a22 * a23
        + 2 * a12 * a23 * a33 - a13**3 + a13 * a22**2 - a13 * a22 * a33 - a13 * a23**2,
        a11 * a13 * a23 - a12 * a13**2 + a12 * a23**2 - a13 * a22 * a23,
    ])


def Q_coefficients(A):
    """Coefficients (highest first) of the quartic ``Q(x)`` of [Mladenova, eq. (180)]."""
    a11, a12, a13, a22, a23, a33 = A[0, 0], A[0, 1], A[0, 2], A[1, 1], A[1, 2], A[2, 2]
    return np.array([
        a11**2 + 4 * a13**2 - 2 * a11 * a33 + a33**2,
        8 * a12 * a13 - 4 * a11 * a23 + 4 * a23 * a33,
        2 * a11**2 + 4 * a12**2 + 4 * a13**2 - 2 * a11 * a22 + 4 * a23**2 - 2 * a11 * a33 + 2 * a22 * a33,
        8 * a12 * a13 - 4 * a11 * a23 + 4 * a22 * a23,
        a11**2 + 4 * a12**2 - 2 * a11 * a22 + a22**2,
    ])


def CD_coefficients(A, x):
    """``(C, D)``, each ``[k = 0..4]``: ``(1 + x² + z²)² b₁₂ = Σ C_k z^k``,
    ``(1 + x² + z²)² b₁₃ = Σ D_k z^k`` for ``c = (x, 0, z)`` [Mladenova, eqs. (170)–(174)]."""
    a11, a12, a13, a22, a23, a33 = A[0, 0], A[0, 1], A[0, 2], A[1, 1], A[1, 2], A[2, 2]
    C = np.array([
        -a12 * x**4 + 2 * a13 * x**3 + 2 * a13 * x + a12,
        -2 * a23 * x**3 + (4 * a33 - 2 * a11 - 2 * a22) * x**2 + 6 * a23 * x + 2 * a22 - 2 * a11,
        -6 * a13 * x - 6 * a12,
        -2 * a23 * x + 2 * a11 - 2 * a22,
        a12,
    ])
    D = np.array([
        -a13 * x**4 - 2 * a12 * x**3 - 2 * a12 * x + a13,
        (2 * a11 - 2 * a33) * x**3 - 6 * a23 * x**2 + (2 * a11 - 4 * a22 + 2 * a33) * x + 2 * a23,
        6 * a13 * x**2 + 6 * a12 * x,
        (2 * a33 - 2 * a11) * x + 2 * a23,
        -a13,
    ])
    return C, D


def level2_roots(a):
    """The four real roots (185)–(188) of ``u⁴ − 2a u³ − 6u² + 2a u + 1 = 0`` (184),
    ``M = sqrt(a² + 4)``: ``u₁,₄ = ½(a + M ∓ sqrt(2(M² + aM)))``, ``u₂,₃ = ½(a − M ± sqrt(2(M² − aM)))``."""
    M = np.sqrt(a * a + 4.0)
    s1 = np.sqrt(2.0 * (M * M + a * M))
    s2 = np.sqrt(2.0 * (M * M - a * M))
    return np.array([0.5 * (a + M - s1), 0.5 * (a - M + s2), 0.5 * (a - M - s2), 0.5 * (a + M + s1)])


def _real_roots(coeffs_high_first, scale):
    c = np.asarray(coeffs_high_first, dtype=float)
    tol = 1e-13 * max(scale, np.max(np.abs(c), initial=0.0))
    nz = np.nonzero(np.abs(c) > tol)[0]
    if nz.size == 0:
        return None  # identically zero
    c = c[nz[0]:]
    if c.size == 1:
        return np.zeros(0)
    r = np.roots(c)
    return np.real(r[np.abs(r.imag) <= 1e-7 * (1.0 + np.abs(r.real))])


def _offdiag1(A, c):
    O = matrix_from_vp(c)
    B = O.T @ A @ O
    return B, max(abs(B[0, 1]), abs(B[0, 2]))


def _level1(A, scale):
    """Candidates ``c = (x, 0, z)`` with ``b₁₂ = b₁₃ = 0``, best first."""
    if max(abs(A[0, 1]), abs(A[0, 2])) <= 1e-15 * scale:
        return np.zeros(3)
    xs = _real_roots(P_coefficients(A), scale**3)
    xs = np.array([0.0]) if xs is None or xs.size == 0 else np.r_[xs, 0.0]
    best, best_res = None, np.inf
    for x in xs:
        C, D = CD_coefficients(A, x)
        zc = []
        for poly in (C, D):
            r = _real_roots(poly[::-1], scale)
            if r is not None:
                zc.extend(r)
        if not zc and _real_roots(C[::-1], scale) is None and _real_roots(D[::-1], scale) is None:
            zc = [0.0]
        for z in zc:
            c = np.array([x, 0.0, z])
            _, res = _offdiag1(A, c)
            if res < best_res:
                best, best_res = c, res
        if best_res <= 1e-12 * scale:
            break
    if best is None:
        raise errors.ConvergenceError("principal_axes(method='closed_form'): no real level-1 solution "
                                      "(P and the quartics (170)–(174) have no common real root)")
    return best


def principal_axes(A, method: str = "closed_form", *, polish: bool = True) -> PrincipalAxes:
    """Principal axes and values of a symmetric 3×3 matrix ``A`` (an inertia tensor, a mass
    matrix block...): ``Rᵀ A R = diag(values)``, ``values`` ascending, ``det R = +1``.

    ``method="closed_form"``: [Mladenova, §5] (module docstring), returning also the paper's ``c''``;
    ``polish=True`` then applies one Jacobi sweep (``eigh`` of the nearly diagonal
    ``O(c'')ᵀ A O(c'')``) so that the result is at round-off even where the quartic roots are
    ill-conditioned.  ``method="eigh"``: `numpy.linalg.eigh`."""
    A = _sym(A, "A")
    if method == "eigh":
        w, V = np.linalg.eigh(A)
        if np.linalg.det(V) < 0:
            V[:, 0] = -V[:, 0]
        return PrincipalAxes(w, V, None)
    if method != "closed_form":
        raise errors.DqdynError(f"method must be 'closed_form' or 'eigh'; got {method!r}")
    scale = max(np.max(np.abs(A)), 1e-300)
    c = _level1(A, scale)
    B = matrix_from_vp(c).T @ A @ matrix_from_vp(c)
    if abs(B[1, 2]) > 1e-15 * scale:
        a = (B[2, 2] - B[1, 1]) / B[1, 2]
        u = level2_roots(a)[0]
        c2 = vp_compose(c, np.array([u, 0.0, 0.0]))
    else:
        c2 = c
    R = matrix_from_vp(c2)
    Dm = R.T @ A @ R
    if polish:
        w, V = np.linalg.eigh(Dm)
        R = R @ V
    else:
        order = np.argsort(np.diag(Dm))
        w = np.diag(Dm)[order]
        R = R[:, order]
    if np.linalg.det(R) < 0:
        R[:, 0] = -R[:, 0]
    return PrincipalAxes(w, R, c2)


__all__ = ["principal_axes", "PrincipalAxes", "P_coefficients", "Q_coefficients", "CD_coefficients",
           "level2_roots"]
