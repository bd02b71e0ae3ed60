"""Constrained inverse dynamics of closed chains ([Kim2012, §3.1, eqs. (56)–(66)]).

With the open-chain inverse dynamics ``τ_r = M v̇ + h`` and ``τ_r = τ + Aᵀ λ``, the passive rows
give ``A_pᵀ λ = τ_pr − τ_p`` and the active ones ``τ_a = τ_ar − A_aᵀ λ``.  Unique when ``A_aᵀ``
vanishes on the null space of ``A_pᵀ`` (``m = n_p``, eq. 58); otherwise (redundant actuation) the
minimum-norm active torque (eqs. 62–64) or the minimum-norm multipliers
(``objective="min_constraint_force"``); an `InfeasibleError` when the passive rows have no
solution (under-actuated for the requested motion, ``m < n_p``) or when the motion violates
``A v̇ = b``.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from dqdyn.constraints.base import as_constraint_list
from dqdyn.constraints.forward import _dynamics_terms, constraint_terms
from dqdyn.errors import InfeasibleError, NonFiniteError, ShapeError
from dqdyn.multibody.model import Model


class ConstrainedInverseResult(NamedTuple):
    """Output of `constrained_inverse_dynamics`."""

    tau: np.ndarray  # (nv,) generalized forces: actuated entries computed, passive ones = τ_p
    multipliers: np.ndarray  # (m,) λ with M v̇ + h = τ + Aᵀ λ
    constraint_forces: np.ndarray  # (nv,) Aᵀ λ
    unique: bool  # True when the actuated torques are uniquely determined


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


__all__ = ["ConstrainedInverseResult", "constrained_inverse_dynamics"]
