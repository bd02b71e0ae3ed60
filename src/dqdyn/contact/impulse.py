r"""Impulse dynamics: the velocity jump of a robot at an impact with rigid contacts.

Integrating ``M v̇ + h = τ + Aᵀ λ`` over an impact of vanishing duration leaves only the impulsive
terms ([Featherstone2008, ch. 11]): with the contact impulses ``Λ`` (the integral of ``λ``),

    [[M, Aᵀ], [A, 0]] [v⁺; −Λ] = [M v⁻; −e A v⁻]

(Newton's restitution law ``A v⁺ = −e A v⁻``, ``0 ≤ e ≤ 1``).  ``e = 0`` is a perfectly plastic
impact (the contact velocities vanish and kinetic energy is lost); ``e = 1`` is elastic: the
kinetic energy is kept, since ``ΔT = Λᵀ A v⁻ + ½ Λᵀ G Λ`` and ``G Λ = −2 A v⁻``.  Solved like
`dqdyn.contact_dynamics` (the proximal scheme of [Carpentier2021] for redundant contacts).
Pinocchio: ``impulseDynamics`` (``dq_after``, ``impulse_c``).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from dqdyn.contact import _kkt
from dqdyn.contact._common import each_state, qv_what, states
from dqdyn.contact.contacts import as_contact_list
from dqdyn.contact.dynamics import split_forces
from dqdyn.dynamics.lagrange import mass_matrix
from dqdyn.errors import NonFiniteError, ShapeError
from dqdyn.multibody.model import Model


class ImpulseDynamicsResult(NamedTuple):
    """Output of `impulse_dynamics` (leading batch axes as the state's)."""

    v: np.ndarray  # (..., nv) the velocity after the impact
    impulses: tuple  # one (..., 3) or (..., 6) impulse per contact, in its frame (N·s, N·m·s)
    multipliers: np.ndarray  # (..., m) the impulses stacked
    iterations: np.ndarray  # (...,)


def _impulse_dynamics_numpy(model: Model, Q, V, cons, e, eps, mu, max_iter, tol):
    """``(v⁺, Λ, iterations)`` of 2-D batches by the numpy path (as
    `dqdyn.contact.dynamics._contact_dynamics_numpy`: the compiled kernel's reference and
    fallback)."""
    N = Q.shape[0]
    if cons:
        A = np.concatenate([c.rows(model, Q, V)[0] for c in cons], axis=1)
    else:
        A = np.zeros((N, 0, model.nv))
    Ms = each_state(mass_matrix, model, Q)
    Vc = V[:, :, None]
    vout, lam, its = _kkt.solve(Ms, (Ms @ Vc)[:, :, 0], A, -e * (A @ Vc)[:, :, 0], eps, mu, max_iter, tol)
    if not (np.all(np.isfinite(vout)) and np.all(np.isfinite(lam))):
        raise NonFiniteError("impulse dynamics overflowed to NaN or infinity")
    return vout, lam, its


def impulse_dynamics(model: Model, q, v, contacts, restitution: float = 0.0, *,
                     regularization: float = 0.0, proximal: float | None = 1e-8,
                     max_iter: int = 50, tol: float = 1e-12) -> ImpulseDynamicsResult:
    """The velocity after an impact on the ``contacts`` (module docstring).

    Parameters
    ----------
    model : Model
    q, v : array_like, shapes (..., nq), (..., nv)
        The configuration and the velocity before the impact.
    contacts : PointContact, FrameContact or a list of them
    restitution : float, default 0
        Newton's coefficient ``e`` in [0, 1]: ``A v⁺ = −e A v⁻``.
    regularization, proximal, max_iter, tol
        As in `dqdyn.contact_dynamics`.

    Returns
    -------
    ImpulseDynamicsResult
        ``v`` (..., nv), ``impulses`` (one per contact, in its frame), ``multipliers``,
        ``iterations``.

    Raises
    ------
    ShapeError
        ``restitution`` outside [0, 1] (named), bad ``q`` / ``v`` or settings.
    SingularError, InfeasibleError
        As `dqdyn.contact_dynamics` (named ``contacts``).

    Notes
    -----
    One compiled call per state or chunk of a batch, with the numpy path where the kernel
    declines, as `dqdyn.contact_dynamics`.
    """
    p = _kkt.plan_hit(model, contacts, regularization, proximal, max_iter, tol, restitution, True)
    if p is None:  # (contacts and settings not seen before with these very objects: checked)
        try:
            e = float(restitution)
        except (TypeError, ValueError):
            raise ShapeError(f"restitution must be a number in [0, 1], got {restitution!r}") from None
        if not (np.isfinite(e) and 0.0 <= e <= 1.0):
            raise ShapeError(f"restitution must be in [0, 1] (Newton's coefficient), got {restitution!r}")
        cons = as_contact_list(contacts, model)
        checked = _kkt.check_settings(regularization, proximal, max_iter, tol)
        p = _kkt.make_plan(model, contacts, cons, (regularization, proximal, max_iter, tol, restitution),
                           checked, ImpulseDynamicsResult, e, True)
    r = p.one(q, v)
    if r is not None:  # one state of plain vectors: one kernel call, which checks the values
        return r
    cons, (eps, mu, max_iter, tol) = p.cons, p.checked
    e = p.e
    w = qv_what(model)
    (Q, V), batch = states(model, [("q", q, model.nq, w[0]), ("v", v, model.nv, w[1])])
    r = _kkt.compiled(model, Q, V, None, cons, eps, mu, max_iter, tol, e, impulse=True)
    vout, lam, its = _impulse_dynamics_numpy(model, Q, V, cons, e, eps, mu, max_iter, tol) if r is None else r
    return ImpulseDynamicsResult(vout.reshape(batch + (model.nv,)), split_forces(lam, cons, batch),
                                 lam.reshape(batch + (lam.shape[1],)), its.reshape(batch))


__all__ = ["ImpulseDynamicsResult", "impulse_dynamics"]
