"""Constrained forward dynamics: `constrained_forward_dynamics` by the Udwadia–Kalaba
fundamental equation ([Silva2022, eqs. (62)–(63)], [Udwadia1992]; the kernels in
`dqdyn.constraints.udwadia_kalaba`), its one-call compiled path for the bundled constraint kinds
through the call gate (the kernels in `dqdyn.constraints._compiled`), the stacked rows
(`constraint_terms`) and the Lagrange-multiplier (KKT) reference (`kkt_solve`,
`kkt_forward_dynamics`).

The unconstrained model is ``M v̇ + h(q, v) = τ`` (``h = C v + g``, dqdyn's CRBA / RNEA by
default, or the Gauss-principle terms of `gauss` with ``dynamics="gauss"``).  The constrained
``v̇`` minimizes Gauss's function ``½ (v̇ − a)ᵀ M (v̇ − a)`` subject to ``A v̇ = b`` and equals the
KKT solution ``[M −Aᵀ; A 0] [v̇; λ] = [Q; b]``.
"""

from __future__ import annotations

from typing import NamedTuple

import numba as nb
import numpy as np

from dqdyn._engine.gate import GATE, SPLIT, fast_front, gate_address, gate_entry
from dqdyn.constraints._compiled import _c_cfd, _cfd_batch, _cfd_checked
from dqdyn.constraints.base import (
    Constraint,
    as_constraint_list,
    as_states,
    baumgarte_gains,
    stack_terms,
)
from dqdyn.constraints.udwadia_kalaba import (
    _NOT_PD,
    _infeasible_msg,
    _rcond_tol,
    _uk_batch,
    _uk_one,
)
from dqdyn.errors import InfeasibleError, NonFiniteError, ShapeError, SingularError
from dqdyn.multibody.model import Model


class ConstrainedDynamicsResult(NamedTuple):
    """Output of `constrained_forward_dynamics` (one state, or a batch along axis 0)."""

    qdd: np.ndarray  # (..., nv) constrained acceleration v̇
    constraint_forces: np.ndarray  # (..., nv) generalized constraint force Q_c = Aᵀ λ
    multipliers: np.ndarray  # (..., m) minimum-norm λ with Q_c = Aᵀ λ
    A: np.ndarray  # (..., m, nv) stacked constraint matrix
    b: np.ndarray  # (..., m) stacked right-hand side (Baumgarte terms included)


# ------------------------------------------------------------------------- the unconstrained terms
def _dynamics_terms(model: Model, q, v, dynamics: str):
    """``(M, h)`` at one state, or batched (leading axes of ``q``, ``v``)."""
    if dynamics == "gauss":
        from dqdyn.dynamics.gauss import gauss_model

        G = gauss_model(model, q, v)
        if np.ndim(v) == 1:
            return G.M, G.C @ v + G.g
        return G.M, np.matmul(G.C, v[..., None])[..., 0] + G.g  # (a batch: C v state by state)
    if dynamics != "crba":
        raise ShapeError(f"dynamics must be 'crba' or 'gauss', got {dynamics!r}")
    from dqdyn.dynamics.lagrange import mass_matrix, nonlinear_effects

    return mass_matrix(model, q), nonlinear_effects(model, q, v)


# ------------------------------------------ the one-call path: the gate entry, the rows' layout
_CFD_C = 0  # the gate address of `_c_cfd`, set on first use
_NO_DICT = {}
_PAR = {}  # [α, β, rcond, tol] arrays by value
_PAR_DEFAULT = np.array([0.0, 0.0, 1e-10, 1e-9])  # (no Baumgarte terms, the default rcond and tol)
_PAR_DEFAULT.flags.writeable = False  # (shared by every call, the compiled front's included)
# the one-call kernel as the public function's compiled front (gate.fast_front: the result's size
# comes with the constraint's cached layout, so the entry's own is a placeholder)
_CFD_ENTRY = gate_entry(globals(), "_CFD_C", _c_cfd, 5, 0, -1, scratch=True)


def _gate_layout(nv: int, spec: np.ndarray, m: int) -> tuple:
    """``(spec, result size, layout)`` of the gate call for ``m`` constraint rows: the result
    ``[q̈ (nv), Q_c (nv), λ (m), A (m·nv), b (m)]`` split into `ConstrainedDynamicsResult`'s
    parts by `SPLIT`."""
    return spec, 2 * nv + m * (nv + 2), ((nv,), (nv,), (m,), (m, nv), (m,))


def _compiled_spec(model: Model, constraints):
    """`_gate_layout` of the stacked compiled rows of ``constraints`` (a
    `Constraint`, a list or tuple of them, or None; float64, SPEC_I + SPEC_F per
    constraint), or None when one of them has no compiled form (or is not a constraint: the
    general path names it).  Kept on each constraint per model (constraints are not changed
    once used)."""
    if type(constraints) is list or type(constraints) is tuple:
        if len(constraints) == 1:  # (the common case, without the loop below)
            got = getattr(constraints[0], "__dict__", _NO_DICT).get("_cspec")
            if got is not None and got[0] is model:
                return got[1]
        cons = constraints
    elif constraints is None:
        cons = ()
    elif isinstance(constraints, Constraint):
        cons = (constraints,)
    else:
        return None
    if not cons:
        return _gate_layout(model.nv, np.zeros(0), 0)
    rows = []
    for c in cons:
        if not isinstance(c, Constraint):
            return None  # (the general path names it)
        got = c.__dict__.get("_cspec")
        if got is None or got[0] is not model:
            sp = c._compiled(model)
            if sp is not None:
                sp = _gate_layout(model.nv, np.concatenate([sp[0].astype(np.float64), sp[1]], axis=1).ravel(),
                                  int(sp[0][:, 5].sum()))
            got = (model, sp)
            c.__dict__["_cspec"] = got
        if got[1] is None:
            return None
        rows.append(got[1])
    if len(rows) == 1:
        return rows[0]
    return _gate_layout(model.nv, np.concatenate([r[0] for r in rows]), sum(r[2][2][0] for r in rows))


def _gate_parameters(baumgarte, rcond, tol) -> np.ndarray:
    """``[α, β, rcond, tol]`` of the gate call (checked; kept by value)."""
    try:
        key = (baumgarte, rcond, tol)
        par = _PAR.get(key)
    except TypeError:  # (unhashable gains, e.g. a list)
        key, par = None, None
    if par is None:
        rcond, tol = _rcond_tol(rcond, tol)
        alpha, beta = baumgarte_gains(baumgarte)
        par = np.array([alpha, beta, rcond, tol])
        par.flags.writeable = False  # (kept and shared by value)
        if key is not None and len(_PAR) < 64:
            _PAR[key] = par
    return par


def constraint_terms(model: Model, q, v, constraints, *, baumgarte=None):
    """Stacked ``(A, b)`` of ``constraints`` at ``(q, v)``: A (..., m, nv), b (..., m)."""
    cons = as_constraint_list(constraints)
    Q, V, batch = as_states(model, q, v)
    A, b = stack_terms(model, Q, V, cons, baumgarte)
    return A.reshape(batch + A.shape[1:]), b.reshape(batch + b.shape[1:])


@fast_front(_CFD_ENTRY, out=False, par=_PAR_DEFAULT, cls=ConstrainedDynamicsResult)
def constrained_forward_dynamics(model: Model, q, v, tau, constraints, *, baumgarte=None,
                                 dynamics: str = "crba", rcond: float = 1e-10,
                                 tol: float = 1e-9) -> ConstrainedDynamicsResult:
    """Constrained forward dynamics by the Udwadia–Kalaba fundamental equation (module doc).

    ``constraints``: a `Constraint` or a list of them (e.g.
    ``dqdyn.constraints.model_constraints(model)`` for the model's declared constraints).
    ``baumgarte=(α, β)``: stabilization terms.  ``dynamics``: ``"crba"`` (compiled CRBA and RNEA)
    or ``"gauss"`` (the dqGP terms ``M_GP``, ``C_GP v + g_GP``: eq. 63 literally).
    Returns `ConstrainedDynamicsResult` (``qdd``, ``constraint_forces``, ...); accepts a
    batch of states (leading axes), solved state by state."""
    if _ONE_CALL and dynamics == "crba":
        # the one-call path (bundled constraint kinds, through the C call gate: a single state,
        # or a small batch of C-contiguous float64 rows run state by state there); the general
        # path below runs where it declines, and names bad input
        sp = None
        if type(constraints) is list and len(constraints) == 1:  # (the common case, kept on the
            got = getattr(constraints[0], "__dict__", _NO_DICT).get("_cspec")  # constraint per model)
            if got is not None and got[0] is model:
                sp = got[1]
        if sp is None:
            try:
                model.mi  # noqa: B018
            except AttributeError:  # (not a model: the general path names it)
                pass
            else:
                sp = _compiled_spec(model, constraints)
        if sp is not None:
            if baumgarte is None and rcond is _RCOND and tol is _TOL:  # (the defaults, untouched)
                par = _PAR_DEFAULT
            else:
                par = _gate_parameters(baumgarte, rcond, tol)
            if GATE is None:  # NUMBA_DISABLE_JIT: the one-call kernel as Python (the compiled path's numbers)
                return _one_call_as_python(model.mi, model.mf, q, v, tau, sp, par) or _general_path(
                    model, q, v, tau, constraints, baumgarte, dynamics, rcond, tol)
            r = GATE(_CFD_C or gate_address(globals(), "_CFD_C", _c_cfd), model.mi, model.mf, sp[1], -1,
                     q, v, tau, sp[0], par, model._scratch)
            if type(r) is np.ndarray:
                return SPLIT(r, sp[2], 1, ConstrainedDynamicsResult)
            if r is None:  # a larger batch, or rows the gate does not take (lists, strides, ...)
                r = _one_call_batch(model, q, v, tau, sp, par)
                if r is not None:
                    return r
    return _general_path(model, q, v, tau, constraints, baumgarte, dynamics, rcond, tol)


class _Declined(Exception):
    """A state of `_one_call_batch` the one-call kernel declines (the general path names it)."""


def _declined(status, row):
    raise _Declined


def _one_call_batch(model: Model, q, v, tau, sp, par):
    """`constrained_forward_dynamics` of the bundled constraint kinds where the call gate
    declines (more states than it runs serially, or inputs that are not C-contiguous float64
    rows): the one-call kernel state by state — the gate's small batch on the rows made C
    float64 and aligned, or for a larger batch `_cfd_batch`, chunked as every batch
    (`run_chunked`) — so a state's numbers do not depend on
    the batch it comes in (the general path's M and h come from CRBA and RNEA, last bits apart).
    None where the general path must run: input it must convert or name, a state the kernel
    declines (a singular M, inconsistent constraints, an overflow)."""
    from dqdyn._engine.batching import SERIAL_WORK, run_chunked
    from dqdyn._engine.boundary import as_vector_batch, broadcast_batch, kernel_rows
    from dqdyn.errors import DqdynError

    try:
        Q, V, batch = as_states(model, q, v)
        T, bt = as_vector_batch(tau, model.nv, "tau", "generalized forces, model.nv entries")
        (Q, V, T), batch = broadcast_batch([Q, V, T], [batch, batch, bt])
    except DqdynError:
        return None
    N = Q.shape[0]
    if N == 0:
        return None
    if N * model.mi.shape[0] <= SERIAL_WORK:  # the gate's own small batch, on rows it takes (so
        # no serial twin of _cfd_batch to compile: it would cost as much as the kernel)
        rows = [np.require(X if X.shape[0] == N else X[0], np.float64, "CA") for X in (Q, V, T)]
        OUT = GATE(_CFD_C or gate_address(globals(), "_CFD_C", _c_cfd), model.mi, model.mf, sp[1], -1,
                   *rows, sp[0], par, model._scratch)
        if type(OUT) is not np.ndarray:
            return None
        OUT = OUT.reshape(N, sp[1])
    else:
        OUT = np.empty((N, sp[1]))
        try:  # (N · nb1 > SERIAL_WORK: run_chunked runs the parallel kernel, never its twin)
            run_chunked(_cfd_batch, (model.mi, model.mf, sp[0], kernel_rows(par)), [Q, V, T], [OUT], N, (),
                        _declined)
        except _Declined:
            return None
    if batch == ():  # one state (given as a list, a strided view, ...)
        return SPLIT(OUT[0], sp[2], 1, ConstrainedDynamicsResult)
    parts = SPLIT(OUT, sp[2], 1, ConstrainedDynamicsResult)
    if len(batch) == 1:
        return parts
    return ConstrainedDynamicsResult(*(x.reshape(batch + x.shape[1:]) for x in parts))


_ONE_CALL = GATE is not None or nb.config.DISABLE_JIT  # (the one-call kernel runs: gated, or as Python)
_KW = getattr(constrained_forward_dynamics, "__wrapped__", constrained_forward_dynamics).__kwdefaults__
_RCOND, _TOL = _KW["rcond"], _KW["tol"]


def _one_call_as_python(mi, mf, q, v, tau, sp, par):
    """Under ``NUMBA_DISABLE_JIT`` (no call gate): `_cfd_checked` run as a plain Python
    function on one state of float64 vectors, so that the debugging mode gives what the compiled
    one-call path gives; None where the general path must run."""
    for x in (q, v, tau):
        if type(x) is not np.ndarray or x.ndim != 1 or x.dtype != np.float64:
            return None
    out = np.empty(sp[1])
    if _cfd_checked(mi, mf, q, v, tau, sp[0], par, out, np.empty(0)) != 0:
        return None
    parts, o = [], 0
    for shape in sp[2]:
        n = int(np.prod(shape))
        parts.append(out[o : o + n].reshape(shape))
        o += n
    return ConstrainedDynamicsResult(*parts)


def _general_path(model, q, v, tau, constraints, baumgarte, dynamics, rcond, tol):
    """`constrained_forward_dynamics` with each constraint's rows in numpy (any
    constraint, any batch), M and h from the compiled CRBA / RNEA (or the dqGP terms)."""
    cons = as_constraint_list(constraints)
    rcond, tol = _rcond_tol(rcond, tol)
    Q, V, batch = as_states(model, q, v)
    from dqdyn._engine.boundary import as_vector_batch, broadcast_batch

    T, bt = as_vector_batch(tau, model.nv, "tau", "generalized forces, model.nv entries")
    (Q, V, T), batch = broadcast_batch([Q, V, T], [batch, batch, bt])
    for name, X in (("q", Q), ("v", V), ("tau", T)):
        if not np.all(np.isfinite(X)):
            raise NonFiniteError(f"{name} must be finite (no NaN / inf)")
    A, b = stack_terms(model, Q, V, cons, baumgarte)
    N = Q.shape[0]
    if N == 1:
        M, h = _dynamics_terms(model, Q[0], V[0], dynamics)
        M, h = M[None], h[None]
    else:  # one batched (compiled) call each for M and h
        M, h = _dynamics_terms(model, Q, V, dynamics)
    qdd = np.empty((N, model.nv))
    Qc = np.empty((N, model.nv))
    lam = np.empty((N, A.shape[1]))
    info = np.zeros((N, 4))
    (_uk_one if N == 1 else _uk_batch)(np.ascontiguousarray(M), np.ascontiguousarray(T - h), np.ascontiguousarray(A),
              np.ascontiguousarray(b), float(rcond), qdd, Qc, lam, info)
    for n in range(N):
        if info[n, 0] == 1.0:
            raise SingularError(_NOT_PD.format(model.name) + (f" (batch element {n})" if N > 1 else ""))
        if info[n, 1] > tol * info[n, 3]:
            raise InfeasibleError(_infeasible_msg(info[n], A.shape[1]) + (f" (batch element {n})" if N > 1 else ""))
    if not (np.all(np.isfinite(qdd)) and np.all(np.isfinite(Qc)) and np.all(np.isfinite(lam))):
        raise NonFiniteError(
            "constrained forward dynamics overflowed to NaN or infinity (constraint terms A, b "
            f"or the state too large for float64: max |A| = {np.abs(A).max(initial=0.0):.3g}, "
            f"max |b| = {np.abs(b).max(initial=0.0):.3g})")
    shp = lambda x: x.reshape(batch + x.shape[1:])  # noqa: E731
    return ConstrainedDynamicsResult(shp(qdd), shp(Qc), shp(lam), shp(A), shp(b))


def kkt_solve(M: np.ndarray, Q: np.ndarray, A: np.ndarray, b: np.ndarray):
    """The Lagrange-multiplier reference: ``[M −Aᵀ; A 0] [v̇; λ] = [Q; b]`` by least squares
    (minimum norm, so a rank-deficient A is accepted).  Returns ``(v̇, λ, residual)``; the residual
    norm is non-zero when the constraints are inconsistent."""
    n, m = M.shape[0], A.shape[0]
    K = np.zeros((n + m, n + m))
    K[:n, :n] = M
    K[:n, n:] = -A.T
    K[n:, :n] = A
    rhs = np.concatenate([Q, b])
    sol = np.linalg.lstsq(K, rhs, rcond=None)[0]
    return sol[:n], sol[n:], float(np.linalg.norm(K @ sol - rhs))


def kkt_forward_dynamics(model: Model, q, v, tau, constraints, *, baumgarte=None):
    """Constrained forward dynamics by the KKT system (`kkt_solve`) with dqdyn's M and h;
    returns ``(v̇, λ)``; `InfeasibleError` for inconsistent constraints."""
    cons = as_constraint_list(constraints)
    q = np.asarray(q, dtype=float)
    v = np.asarray(v, dtype=float)
    A, b = constraint_terms(model, q, v, cons, baumgarte=baumgarte)
    M, h = _dynamics_terms(model, q, v, "crba")
    qdd, lam, res = kkt_solve(M, np.asarray(tau, dtype=float) - h, A, b)
    if res > 1e-9 * (1.0 + np.linalg.norm(b) + np.linalg.norm(tau)):
        raise InfeasibleError(f"KKT system inconsistent (residual {res:.3e})")
    return qdd, lam


__all__ = [
    "ConstrainedDynamicsResult",
    "constrained_forward_dynamics",
    "constraint_terms",
    "kkt_forward_dynamics",
    "kkt_solve",
]
