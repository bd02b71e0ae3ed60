r"""Contact dynamics: the forward dynamics of a robot held by rigid contacts.

With the joint-space dynamics ``M v̇ + h = τ + Aᵀ λ`` (``h = C v + g``, dqdyn's CRBA and RNEA)
and the stacked contact rows ``A v̇ = b`` of `contacts` (``b = −J̇ v`` and the Baumgarte
terms), the accelerations and contact forces solve the KKT system

    [[M, Aᵀ], [A, −ε I]] [v̇; −λ] = [τ − h; b]

([Featherstone2008, ch. 8]; ``ε`` a compliance, Pinocchio's ``inv_damping``), solved by the
proximal method of multipliers of `_kkt` ([Carpentier2021]), which stays well defined for
redundant contact sets.  The same accelerations come from the Udwadia–Kalaba equation
([Udwadia1992]; `dqdyn.constrained_forward_dynamics`, which takes the same contact objects).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from dqdyn.contact import _kkt
from dqdyn.contact._common import each_state, qv_what, states
from dqdyn.contact.contacts import as_contact_list
from dqdyn.dynamics.lagrange import mass_matrix, nonlinear_effects
from dqdyn.errors import NonFiniteError
from dqdyn.multibody.model import Model


class ContactDynamicsResult(NamedTuple):
    """Output of `contact_dynamics` (leading batch axes as the state's)."""

    a: np.ndarray  # (..., nv) the acceleration v̇
    forces: tuple  # one (..., 3) force or (..., 6) wrench [f; τ] per contact, in its frame
    multipliers: np.ndarray  # (..., m) the forces stacked
    iterations: np.ndarray  # (...,) proximal iterations (1 for a direct solve)




def split_forces(lam: np.ndarray, contacts, batch) -> tuple:
    out, o = [], 0
    for c in contacts:
        out.append(lam[:, o:o + c.dim].reshape(batch + (c.dim,)))
        o += c.dim
    return tuple(out)


def stacked_rows(model: Model, Q, V, contacts):
    """``(A (N, m, nv), b (N, m))`` of the contacts, Baumgarte terms included."""
    N = Q.shape[0]
    if not contacts:
        return np.zeros((N, 0, model.nv)), np.zeros((N, 0))
    rows = [c.stabilized_rhs(model, Q, V) for c in contacts]
    return np.concatenate([r[0] for r in rows], axis=1), np.concatenate([r[1] for r in rows], axis=1)


def _contact_dynamics_numpy(model: Model, Q, V, T, cons, eps, mu, max_iter, tol):
    """``(v̇, λ, iterations)`` of 2-D batches by the numpy path: one compiled call each for
    ``M``, ``h`` and each contact's kinematics, then the stacked solves of `_kkt` (the reference
    the compiled kernel is tested against, and its fallback)."""
    A, b = stacked_rows(model, Q, V, cons)
    Ms = each_state(mass_matrix, model, Q)
    hs = each_state(nonlinear_effects, model, Q, V)
    acc, lam, its = _kkt.solve(Ms, T - hs, A, b, eps, mu, max_iter, tol)
    if not (np.all(np.isfinite(acc)) and np.all(np.isfinite(lam))):
        raise NonFiniteError("contact dynamics overflowed to NaN or infinity (the state or the "
                             "contact terms are too large for float64)")
    return acc, lam, its


def contact_dynamics(model: Model, q, v, tau, contacts, *, regularization: float = 0.0,
                     proximal: float | None = 1e-8, max_iter: int = 50,
                     tol: float = 1e-12) -> ContactDynamicsResult:
    """Forward dynamics with rigid contacts: ``v̇`` and the contact forces (module docstring).

    Parameters
    ----------
    model : Model
    q, v, tau : array_like, shapes (..., nq), (..., nv), (..., nv)
        The state and the joint forces (a free base's entries are its external wrench; usually 0).
    contacts : PointContact, FrameContact or a list of them
        The contacts (their Baumgarte gains are their own, zero by default).
    regularization : float, default 0
        ``ε ≥ 0`` of the KKT system (a contact compliance; 0: rigid contacts).
    proximal : float or None, default 1e-8
        The proximal parameter μ relative to the mean diagonal of the Delassus matrix
        ``A M⁻¹ Aᵀ``; keeps redundant contact sets well defined (minimum-norm forces).  ``None``:
        a direct solve, which refuses a singular contact set when ``regularization`` is 0.
    max_iter, tol
        Proximal iterations and their stopping tolerance on the relative residual of the contact rows.

    Returns
    -------
    ContactDynamicsResult
        ``a`` (..., nv), ``forces`` (one (..., 3) or (..., 6) array per contact: the force or
        wrench ``[f; τ]`` the world applies to the robot, in the contact frame), ``multipliers``
        (the same stacked), ``iterations``.

    Raises
    ------
    UnknownNameError
        A contact names a frame the model lacks.
    ShapeError, NonFiniteError
        Bad ``q``, ``v``, ``tau`` or settings (named).
    SingularError
        ``contacts``: a singular contact set with ``proximal=None`` and ``regularization=0``, or a
        singular mass matrix.
    InfeasibleError
        ``contacts``: redundant contacts whose accelerations cannot all be met.

    Notes
    -----
    One state is one compiled call (`dqdyn.contact._kernels`: ``M``, ``h``, the contact rows
    and the KKT solve), a batch one call per chunk of states, in parallel.  The numpy path
    (one compiled call each for ``M``, ``h`` and each contact's kinematics, then the stacked
    solves of `_kkt`) runs only where the kernel declines: a model with mimic joints, and states
    whose mass or Delassus matrix is singular (or near it, without a proximal term), whose
    proximal iterations do not converge or whose result overflows — it then raises the error
    that names the problem (or clears a nearly singular Delassus matrix by its eigenvalues).
    """
    p = _kkt.plan_hit(model, contacts, regularization, proximal, max_iter, tol, None)
    if p is None:  # (contacts and settings not seen before with these very objects: checked)
        cons = as_contact_list(contacts, model)
        checked = _kkt.check_settings(regularization, proximal, max_iter, tol)
        p = _kkt.make_plan(model, contacts, cons, (regularization, proximal, max_iter, tol, None),
                           checked, ContactDynamicsResult)
    r = p.one(q, v, tau)
    if r is not None:  # one state of plain vectors: one kernel call, which checks the values
        return r
    cons, (eps, mu, max_iter, tol) = p.cons, p.checked
    w = qv_what(model)
    (Q, V, T), batch = states(model, [("q", q, model.nq, w[0]), ("v", v, model.nv, w[1]),
                                      ("tau", tau, model.nv, w[3])])
    r = _kkt.compiled(model, Q, V, T, cons, eps, mu, max_iter, tol)
    acc, lam, its = _contact_dynamics_numpy(model, Q, V, T, cons, eps, mu, max_iter, tol) if r is None else r
    return ContactDynamicsResult(acc.reshape(batch + (model.nv,)), split_forces(lam, cons, batch),
                                 lam.reshape(batch + (lam.shape[1],)), its.reshape(batch))


__all__ = ["ContactDynamicsResult", "contact_dynamics"]
