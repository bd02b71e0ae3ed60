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

**Centroidal dynamics.**  `centroidal_rows_derivatives` turns the base rows ``[n; f]`` of the
augmented model's ``∂τ/∂q``, ``∂τ/∂v``, ``M`` and ``Ṁ = C + Cᵀ`` (docstring of
`dqdyn.contact.derivatives`) into ``∂h_g/∂q``, ``∂ḣ_g/∂q``, ``∂ḣ_g/∂v`` and ``A_g``: each moved to
the CoM, ``[n; f] ↦ [f; n − c × f]``, plus the CoM-motion terms ``[f]× J_c`` and ``−[ċ]× M_f``.
"""

from __future__ import annotations

import numpy as np

from dqdyn._engine.jit import kernel
from dqdyn._engine.linalg import spd_inverse

njit = kernel(error_model="numpy")

#: `kkt_derivatives`' status: done, ``S`` not positive definite to working precision, ``M`` not
#: positive definite
KKT_OK, KKT_SINGULAR, KKT_M_NOT_PD = 0, 1, 2
#: the largest condition of ``S`` (the ratio of its largest diagonal entry to its smallest
#: Cholesky pivot squared) that `kkt_derivatives` accepts: past it a redundant contact set
#: without regularisation, whose forces are not unique
KKT_MAX_CONDITION = 1e13


@njit
def _mul(A, B, C):
    """``C = A B`` (2-D, rows of ``B`` contiguous: the inner loop runs along them)."""
    n, k = A.shape
    m = B.shape[1]
    for i in range(n):
        for j in range(m):
            C[i, j] = 0.0
        for p in range(k):
            a = A[i, p]
            for j in range(m):
                C[i, j] += a * B[p, j]


@njit
def kkt_derivatives(R, A, Gq, Gv, eps, Z, X):
    """The derivatives of module docstring's elimination at one state.

    ``R`` (3, nv, nv) ``∂ID/∂q``, ``∂ID/∂v``, ``M``; ``A`` (m, nv) the contact rows; ``Gq``, ``Gv``
    (m, nv) ``∂G/∂q``, ``∂G/∂v``; ``eps`` the regularisation ``ε``.  Writes ``Z`` (3, nv, nv)
    ``∂a/∂q, ∂a/∂v, ∂a/∂τ`` and ``X`` (3, m, nv) ``∂λ/∂q, ∂λ/∂v, ∂λ/∂τ``.  Returns `KKT_OK`,
    `KKT_SINGULAR` or `KKT_M_NOT_PD` (``M`` not positive definite: the caller's numpy route names
    the error)."""
    nv = R.shape[1]
    m = A.shape[0]
    Mi = np.empty((nv, nv))
    if not spd_inverse(R[2], nv, np.empty((nv, nv)), Mi):
        return KKT_M_NOT_PD
    Y = np.empty((2, nv, nv))
    _mul(Mi, R[0], Y[0])
    _mul(Mi, R[1], Y[1])
    YAt = np.empty((m, nv))  # Y_Aᵀ = A M⁻¹ (M⁻¹ symmetric)
    _mul(A, Mi, YAt)
    S = np.empty((m, m))
    for i in range(m):
        for j in range(i + 1):
            s = 0.0
            for k in range(nv):
                s += YAt[i, k] * A[j, k]
            S[i, j] = s
            S[j, i] = s
        S[i, i] += eps
    top = 0.0
    for i in range(m):
        top = max(top, S[i, i])
    L = np.empty((m, m))
    Si = np.empty((max(m, 1), m))
    if not spd_inverse(S, m, L, Si):
        return KKT_SINGULAR
    for i in range(m):  # (spd_inverse leaves 1 / pivot on L's diagonal)
        if L[i, i] * L[i, i] * top > KKT_MAX_CONDITION:
            return KKT_SINGULAR
    B = np.empty((3, m, nv))
    _mul(A, Y[0], B[0])
    _mul(A, Y[1], B[1])
    for i in range(m):
        for j in range(nv):
            B[0, i, j] -= Gq[i, j]
            B[1, i, j] -= Gv[i, j]
            B[2, i, j] = -YAt[i, j]
    for c in range(3):
        _mul(Si, B[c], X[c])
    for c in range(3):  # Z_c = Y_A X_c (Y_A = YAtᵀ)
        for i in range(nv):
            for j in range(nv):
                Z[c, i, j] = 0.0
        for p in range(m):
            for i in range(nv):
                y = YAt[p, i]
                for j in range(nv):
                    Z[c, i, j] += y * X[c, p, j]
    for i in range(nv):
        for j in range(nv):
            Z[0, i, j] -= Y[0, i, j]
            Z[1, i, j] -= Y[1, i, j]
            Z[2, i, j] += Mi[i, j]
    return KKT_OK


@njit
def centroidal_rows_derivatives(D, C, f, v, out):
    """``out`` (4, 6, nv): ``∂h_g/∂q, ∂ḣ_g/∂q, ∂ḣ_g/∂v, A_g`` from ``D`` (≥3, 6 + nv, 6 + nv) the
    augmented model's ``∂τ/∂q``, ``∂τ/∂v``, ``M`` (its first six rows and columns: the free body
    ``b``'s), ``C`` (6 + nv, 6 + nv) its Coriolis matrix, ``f`` (3) the base force of its inverse
    dynamics and ``v`` (nv) the model's velocity (module docstring).  The mass ``m = M[3, 3] > 0``
    is the caller's to check."""
    nv = v.shape[0]
    M = D[2]
    m = M[3, 3]
    # −[c]× = −M[:3, 3:6] / m (b's block m[c]×): row r of n − c × f is n_r + Σ_k X[r, k] f_k
    X = np.empty((3, 3))
    for r in range(3):
        for k in range(3):
            X[r, k] = -M[r, 3 + k] / m
    cd = np.zeros(3)  # ċ = J_c v = M_f v / m
    for r in range(3):
        s = 0.0
        for j in range(nv):
            s += M[3 + r, 6 + j] * v[j]
        cd[r] = s / m
    fm = np.empty(3)
    for r in range(3):
        fm[r] = f[r] / m
    for j in range(nv):
        c = 6 + j
        # the four column blocks [n; f]: ∂τ/∂q, ∂τ/∂v, M and Ṁ = C + Cᵀ
        for w in range(4):
            if w < 3:
                n0, n1, n2 = D[w, 0, c], D[w, 1, c], D[w, 2, c]
                f0, f1, f2 = D[w, 3, c], D[w, 4, c], D[w, 5, c]
            else:
                n0, n1, n2 = C[0, c] + C[c, 0], C[1, c] + C[c, 1], C[2, c] + C[c, 2]
                f0, f1, f2 = C[3, c] + C[c, 3], C[4, c] + C[c, 4], C[5, c] + C[c, 5]
            g0 = n0 + X[0, 0] * f0 + X[0, 1] * f1 + X[0, 2] * f2
            g1 = n1 + X[1, 0] * f0 + X[1, 1] * f1 + X[1, 2] * f2
            g2 = n2 + X[2, 0] * f0 + X[2, 1] * f1 + X[2, 2] * f2
            mx, my, mz = M[3, c], M[4, c], M[5, c]  # M_f's column
            if w == 0:  # ∂ḣ_g/∂q: + [f]× J_c (the CoM moves: −∂c × f)
                g0 += fm[1] * mz - fm[2] * my
                g1 += fm[2] * mx - fm[0] * mz
                g2 += fm[0] * my - fm[1] * mx
            elif w == 3:  # Ȧ_g: − [ċ]× M_f
                g0 -= cd[1] * mz - cd[2] * my
                g1 -= cd[2] * mx - cd[0] * mz
                g2 -= cd[0] * my - cd[1] * mx
            o = (1, 2, 3, 0)[w]  # (Ȧ_g into slot 0, where ∂h_g/∂q = ∂ḣ_g/∂v − Ȧ_g is formed)
            out[o, 0, j], out[o, 1, j], out[o, 2, j] = f0, f1, f2
            out[o, 3, j], out[o, 4, j], out[o, 5, j] = g0, g1, g2
        for r in range(6):
            out[0, r, j] = out[2, r, j] - out[0, r, j]


__all__ = ["centroidal_rows_derivatives", "kkt_derivatives", "KKT_OK", "KKT_SINGULAR", "KKT_M_NOT_PD", "KKT_MAX_CONDITION"]
