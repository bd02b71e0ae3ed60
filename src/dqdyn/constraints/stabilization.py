"""Constraint stabilization: the constraint errors of a state, and its projection onto the
constraint manifold (`project_state`; `dqdyn.simulation.simulate` projects after each step,
``project=True``).

`project_state` projects ``q`` onto ``φ(q) = 0`` (Gauss–Newton with the constraint Jacobian,
minimum-norm steps by the Jacobi SVD of `dqdyn.constraints.udwadia_kalaba`) and ``v`` onto
``A v = 0`` in the kinetic-energy metric.  (The Baumgarte terms ``b − 2α A v − β² φ(q)`` of
``baumgarte=(α, β)`` are the constraints' own, `dqdyn.constraints.base.stack_terms`.)
"""

from __future__ import annotations

import numpy as np

from dqdyn._engine.jit import kernel
from dqdyn.constraints.base import as_constraint_list, as_states
from dqdyn.constraints.udwadia_kalaba import (
    _NOT_PD,
    _chol,
    _jacobi_columns,
    _ltsolve,
    _pinv_apply,
    _scaled_constraint_svd,
)
from dqdyn.errors import ConvergenceError, ShapeError, SingularError
from dqdyn.kinematics.configuration import integrate
from dqdyn.multibody.model import Model

njit = kernel()


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


__all__ = ["constraint_errors", "project_state"]
