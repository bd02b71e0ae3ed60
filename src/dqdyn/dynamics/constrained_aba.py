"""Recursive constrained forward and hybrid dynamics ([Kim2012, §3.2–3.3], eqs. 67–80).

One full articulated-body sweep gives the unconstrained ``q̈_r``; one simplified sweep per
constraint row (no gravity, no velocity) gives ``M⁻¹ Aᵀ``; the multipliers come from
``(A M⁻¹ Aᵀ) λ = b − A q̈_r``.
"""

from __future__ import annotations

import numpy as np

from dqdyn._engine.batching import for_batch
from dqdyn._engine.boundary import (
    as_vector,
    first_bad,
    kernel_rows,
)
from dqdyn.dynamics.aba import aba, aba_batch
from dqdyn.dynamics.articulated import _NO_FEXT, _raise, _reject_mimic
from dqdyn.dynamics.hybrid import hybrid_batch, hybrid_dynamics
from dqdyn.errors import InfeasibleError, NonFiniteError, ShapeError
from dqdyn.multibody.model import (
    MF_GRAVITY,
    Model,
)


def _minv_times(model: Model, q1: np.ndarray, X: np.ndarray) -> np.ndarray:
    """``M(q)⁻¹ X`` for one configuration and X (nv, m): m simplified ABA passes (no gravity,
    no velocity; [Kim2012, §3.2])."""
    nv, mcols = model.nv, X.shape[1]
    if mcols == 0:
        return np.zeros((nv, 0))
    mf0 = model.mf.copy()
    mf0[0, MF_GRAVITY : MF_GRAVITY + 3] = 0.0
    Q = kernel_rows(np.broadcast_to(q1, (mcols, model.nq)))
    V0 = np.zeros((mcols, nv))
    T = np.ascontiguousarray(X.T)
    out = np.empty((mcols, nv))
    status = np.zeros(mcols, dtype=np.int64)
    for_batch(aba_batch, mcols, model.mi.shape[0])(model.mi, mf0, Q, V0, T, out, status)
    st, _ = first_bad(status)
    if st:
        _raise(model, st)
    return out.T


def constrained_aba(model: Model, q, v, tau, A, b, fext=None, *, rcond: float = 1e-10):
    """Recursive constrained forward dynamics ([Kim2012, §3.2], eqs. 67–69): ``(q̈, λ)``.

    Constraints at acceleration level ``A q̈ = b`` (``A`` (m, nv), ``b`` (m,); for a loop
    closure ``f(q) = 0`` with ``A = ∂f/∂q``, ``b = −Ȧ q̇``).  One full ABA gives ``q̈_r``; m
    simplified ABA passes give ``M⁻¹ Aᵀ``; then ``λ = (A M⁻¹ Aᵀ)⁻¹ (b − A q̈_r)`` and
    ``q̈ = q̈_r + M⁻¹ Aᵀ λ`` (the generalized constraint force is ``Aᵀ λ``).  Redundant rows are
    handled by a pseudo-inverse; a system with no solution raises ``InfeasibleError``.
    """
    _reject_mimic(model, "constrained_aba")
    qq = as_vector(q, model.nq, "q", "the configuration, model.nq entries")
    A = np.atleast_2d(np.asarray(A, dtype=float))
    b = np.atleast_1d(np.asarray(b, dtype=float))
    if A.shape[1] != model.nv or b.shape != (A.shape[0],):
        raise ShapeError(f"A must be (m, {model.nv}) and b (m,), got {A.shape} and {b.shape}")
    if not (np.all(np.isfinite(A)) and np.all(np.isfinite(b))):
        raise NonFiniteError("A or b contains NaN or infinity")
    qdd_r = aba(model, qq, v, tau, fext=fext)
    MiAt = _minv_times(model, qq, A.T)
    G = A @ MiAt
    r = b - A @ qdd_r
    lam = np.linalg.lstsq(G, r, rcond=rcond)[0]
    res = G @ lam - r
    if np.linalg.norm(res) > 1e-8 * (1.0 + np.linalg.norm(r)):
        raise InfeasibleError(
            f"constraints A q̈ = b are inconsistent: no acceleration satisfies them (residual "
            f"{np.linalg.norm(res):.3g})"
        )
    return qdd_r + MiAt @ lam, lam


def constrained_hybrid_dynamics(model: Model, q, v, a, tau, prescribed, A, b, *, rcond: float = 1e-10):
    """Recursive constrained hybrid dynamics ([Kim2012, §3.3], eqs. 70–80): ``(q̈, τ, λ)``.

    Prescribed DoFs take their acceleration from ``a`` (their force is computed), free DoFs their
    force from ``tau``; the constraint ``A q̈ = b`` holds with multipliers ``λ`` (``m ≤ n_free``).
    Two open-chain hybrid problems: ``(q̈_u, τ_v)`` → ``(τ_ur, q̈_vr)``, and, per constraint row,
    ``(0, A_vᵀ e_i)`` without gravity and velocity → ``M_vv⁻¹ A_vᵀ`` (eq. 77).
    """
    _reject_mimic(model, "constrained_hybrid_dynamics")
    P = np.asarray(prescribed, dtype=bool)
    Fr = ~P
    A = np.atleast_2d(np.asarray(A, dtype=float))
    b = np.atleast_1d(np.asarray(b, dtype=float))
    qq = as_vector(q, model.nq, "q", "the configuration, model.nq entries")
    qdd_r, tau_r = hybrid_dynamics(model, qq, v, a, tau, P)
    m = A.shape[0]
    # columns: hybrid response to τ_v = A_vᵀ e_i, q̈_u = 0, no gravity / velocity
    mf0 = model.mf.copy()
    mf0[0, MF_GRAVITY : MF_GRAVITY + 3] = 0.0
    Q = kernel_rows(np.broadcast_to(qq, (m, model.nq)))
    Z = np.zeros((m, model.nv))
    T = np.ascontiguousarray(np.where(Fr, A, 0.0))
    QDD = np.empty((m, model.nv))
    TAU = np.empty((m, model.nv))
    status = np.zeros(m, dtype=np.int64)
    for_batch(hybrid_batch, m, model.mi.shape[0])(model.mi, mf0, Q, Z, T, _NO_FEXT.reshape(1, 1, 6), False,
                 np.ascontiguousarray(P, dtype=np.float64), Z, QDD, TAU, status)
    st, _ = first_bad(status)
    if st:
        _raise(model, st)
    G = A @ QDD.T  # A_v M_vv⁻¹ A_vᵀ (the prescribed entries of QDD are 0)
    r = b - A @ qdd_r
    lam = np.linalg.lstsq(G, r, rcond=rcond)[0]
    if np.linalg.norm(G @ lam - r) > 1e-8 * (1.0 + np.linalg.norm(r)):
        raise InfeasibleError(
            "constraints A q̈ = b cannot be met with the prescribed accelerations (too few free DoFs "
            "or inconsistent rows)"
        )
    qdd = qdd_r + QDD.T @ lam
    # τ_u = τ_ur + τ_uc − A_uᵀ λ  (eqs. 79–80)
    tau_out = tau_r + TAU.T @ lam - A.T @ lam
    tau_out[Fr] = np.asarray(tau, dtype=float)[Fr]
    return qdd, tau_out, lam
