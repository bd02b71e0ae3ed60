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

`compiled` runs this solve, with ``M``, ``h`` and the contact rows, in one call of the contact
kernels per state or chunk of a batch (`dqdyn.contact._kernels`); `solve` is the numpy path over
stacked states, the kernels' reference in the tests and their fallback where they decline.
"""

from __future__ import annotations

import numpy as np

from dqdyn._engine.batching import run_chunked
from dqdyn._engine.boundary import BAD_Q_FINITE, BAD_SHAPE, BAD_TAU_FINITE, BAD_V_FINITE, raise_status
from dqdyn._engine.gate import GATE, SPLIT
from dqdyn.contact._kernels import FALLBACK_CODES, SPEC, kkt_batch, kkt_gate, kkt_rows
from dqdyn.contact.contacts import EDITS, _Contact
from dqdyn.errors import InfeasibleError, ShapeError, SingularError
from dqdyn.multibody.model import Model

_SETTINGS: dict = {}  # checked settings, keyed on the arguments and their types


def check_settings(regularization, proximal, max_iter, tol):
    """``(ε, μ or None, max_iter, tol)`` checked (`ShapeError` naming a bad one); the checks of
    a combination seen before are not repeated."""
    try:
        key = (regularization.__class__, regularization, proximal.__class__, proximal,
               max_iter.__class__, max_iter, tol.__class__, tol)
        hit = _SETTINGS.get(key)
    except TypeError:  # (an unhashable argument: checked, and refused, below)
        key = hit = None
    if hit is not None:
        return hit
    out = _check_settings(regularization, proximal, max_iter, tol)
    if key is not None and len(_SETTINGS) < 256:
        _SETTINGS[key] = out
    return out


def _check_settings(regularization, proximal, max_iter, tol):
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


class _Fallback(Exception):
    """A kernel status that the numpy path names (`dqdyn.contact._kernels.FALLBACK_CODES`)."""


_NO_SPEC = np.zeros((0, SPEC))
_TABLES: dict = {}  # stacked contact tables, keyed on the ids of their cached rows (held here)
_INPUT_CODES = frozenset((BAD_Q_FINITE, BAD_V_FINITE, BAD_TAU_FINITE))


def contact_table(model, contacts):
    """``(table, m)``: the compiled kernels' contact table (n_c, 25) of ``contacts``
    (`dqdyn.contact._kernels`) and its number of rows, stacked once per set of contact rows
    (each row cached on its contact)."""
    rows = [c._kernel_spec(model) for c in contacts]
    key = tuple(map(id, rows))
    hit = _TABLES.get(key)
    if hit is not None:
        return hit[1], hit[2]
    if len(_TABLES) > 256:
        _TABLES.clear()
    spec = np.stack(rows) if rows else _NO_SPEC
    _TABLES[key] = (rows, spec, int(spec[:, 1].sum()))  # (the rows held: their ids stay theirs)
    return spec, _TABLES[key][2]


_PARS: dict = {}


def _par(eps, proximal, max_iter, tol, restitution, impulse) -> np.ndarray:
    """The kernels' ``par`` array of checked settings (cached: the kernels do not write it)."""
    key = (eps, proximal, max_iter, tol, restitution, impulse)
    par = _PARS.get(key)
    if par is None:
        if len(_PARS) > 256:
            _PARS.clear()
        par = _PARS[key] = np.array([eps, -1.0 if proximal is None else proximal, float(max_iter),
                                     tol, restitution, 1.0 if impulse else 0.0])
    return par


def compiled(model, Q, V, T, contacts, eps, proximal, max_iter, tol, restitution=0.0,
             impulse=False, checked=True):
    """``(x (N, n), λ (N, m), iterations (N,))`` of contact dynamics (``impulse``: impulse
    dynamics, ``T`` unused) from the compiled kernel (`dqdyn.contact._kernels`: one call per
    state or per chunk of a batch), or ``None`` where the kernel leaves the state to the numpy
    path of `solve` (a singular or suspect mass or Delassus matrix, proximal iterations that
    do not converge, an overflow, mimic joints), which names the problem.  Bad inputs (a
    non-unit quaternion) raise here, as the numpy path would; with ``checked=False`` (inputs
    not yet checked for finiteness) a non-finite entry returns ``None`` too,
    for the caller's checks to name."""
    N, nv = Q.shape[0], model.nv
    spec, m = contact_table(model, contacts)
    par = _par(eps, proximal, max_iter, tol, restitution, impulse)
    out = np.empty((N, nv))
    lam = np.empty((N, m))
    its = np.empty(N, dtype=np.int64)
    if impulse:
        T = V[:1]  # (unused)

    def raise_row(code, row):
        if code in FALLBACK_CODES or (not checked and code in _INPUT_CODES):
            raise _Fallback
        raise_status(model, int(code), row if N > 1 else None)

    try:
        if N == 1:
            status = np.zeros(1, dtype=np.int64)
            kkt_rows(model.mi, model.mf, spec, par, Q, V, T, out, lam, its, status, 0, 1)
            if status[0]:
                raise_row(int(status[0]), 0)
        else:
            run_chunked(kkt_batch, (model.mi, model.mf, spec, par), [Q, V, T], [out, lam, its], N,
                        (1, 2), raise_row)
    except _Fallback:
        return None
    return out, lam, its


class Plan:
    """What a contact front keeps between calls on one model, contact list and settings: the
    checked contacts and settings, the kernels' contact table and ``par``, the slices of the
    multipliers per contact and the result shapes (`plan_hit`, `make_plan`)."""

    __slots__ = ("model", "contacts", "items", "edits", "raw", "cons", "checked", "spec", "par",
                 "slices", "qshape", "vshape", "oshape", "lshape", "fast", "e", "flat", "size",
                 "layout", "addr", "cls")

    def one(self, q, v, t=None):
        """The result (``cls``: ``(x (nv,), forces, λ (m,), iterations ())``) of one state given as plain vectors
        (C-contiguous float64 of the model's lengths; ``t`` ``None``: impulse dynamics) in one
        kernel call, fresh arrays each call; ``None`` where the state is not such vectors,
        holds a non-finite entry or the kernel leaves it to the numpy path (as `compiled` with
        ``checked=False``).  Bad values the kernel names (a non-unit quaternion) raise.

        Through the C call gate (`dqdyn.contact._kernels.kkt_gate`; up to five contacts: the
        parts `SPLIT` makes) the arrays are views of one result block and a small batch of 2-D
        inputs is answered too (the gate's serial batch, the same kernel state by state)."""
        layout = self.layout
        if layout is not None:
            model = self.model
            r = GATE(self.addr, model.mi, model.mf, self.size, -1, q, v, v if t is None else t,
                     self.flat, self.par)
            if type(r) is _ND:
                p = SPLIT(r, layout, 1)
                return _tuple_new(self.cls, (p[0], p[2:-1], p[1], p[-1].view(_I64)))
            if r is None:
                return None
            if r in FALLBACK_CODES or r in _INPUT_CODES or r == BAD_SHAPE:
                return None
            raise_status(model, r, None)
        vs = self.vshape
        if not (self.fast and type(q) is _ND and type(v) is _ND and q.dtype is _F64
                and v.dtype is _F64 and q.shape == self.qshape and v.shape == vs):
            return None
        fq, fv = q.flags, v.flags
        if not (fq.c_contiguous and fq.writeable and fv.c_contiguous and fv.writeable):
            return None
        V = v[None]
        if t is None:
            T = V
        else:
            if not (type(t) is _ND and t.dtype is _F64 and t.shape == vs):
                return None
            ft = t.flags
            if not (ft.c_contiguous and ft.writeable):
                return None
            T = t[None]
        model = self.model
        out = np.empty(self.oshape)
        lam = np.empty(self.lshape)
        its = np.empty(1, _I64)
        status = np.empty(1, _I64)
        kkt_rows(model.mi, model.mf, self.spec, self.par, q[None], V, T, out, lam, its, status, 0, 1)
        code = status[0]
        if code:
            code = int(code)
            if code in FALLBACK_CODES or code in _INPUT_CODES:
                return None
            raise_status(model, code, None)
        lam0 = lam[0]
        return _tuple_new(self.cls, (out[0], tuple([lam0[k] for k in self.slices]), lam0, its.reshape(())))


_ND, _F64, _I64 = np.ndarray, np.dtype(np.float64), np.dtype(np.int64)
_tuple_new = tuple.__new__  # (a result from its four fields, without the NamedTuple's Python __new__)
_PLANS: dict = {}  # plans keyed on the ids of the model and the contacts (both held by the plan)
_VALUES = (float, int, type(None), np.float64, np.int64)  # settings held by identity: immutable


def plan_hit(model, contacts, regularization, proximal, max_iter, tol, restitution=0.0,
             impulse=False):
    """The `Plan` made by `make_plan` for these very objects (the same model, contact list with
    the same contacts, none of them changed since (`dqdyn.contact.contacts.EDITS`), the same
    setting objects), else ``None``: the caller then checks its arguments and makes one."""
    p = _PLANS.get((id(model), id(contacts), impulse))
    if p is None or p.edits != EDITS[0]:
        return None
    raw = p.raw
    if not (raw[0] is regularization and raw[1] is proximal and raw[2] is max_iter
            and raw[3] is tol and raw[4] is restitution):
        return None
    items = p.items
    if items is not None and items != tuple(contacts):
        return None
    return p


def make_plan(model, contacts, cons, raw, checked, cls, restitution=0.0, impulse=False) -> Plan:
    """The `Plan` of ``cons`` (``contacts`` checked by `dqdyn.contact.contacts.as_contact_list`)
    and the settings ``raw`` ``(regularization, proximal, max_iter, tol, restitution)`` as given
    and ``checked`` ``(ε, μ, max_iter, tol)`` by `check_settings`, for results of the NamedTuple
    ``cls``; kept for `plan_hit` when the contacts are a list, a tuple or one contact and the
    settings are immutable numbers."""
    p = Plan()
    p.cls = cls
    p.model, p.contacts, p.edits, p.raw, p.cons, p.checked = model, contacts, EDITS[0], raw, cons, checked
    p.fast, p.e = isinstance(model, Model), restitution
    if p.fast:  # (else the caller's checks name the model)
        p.spec, m = contact_table(model, cons)
        eps, mu, max_iter, tol = checked
        p.par = _par(eps, mu, max_iter, tol, restitution, impulse)
        slices, o = [], 0
        for c in cons:
            slices.append(slice(o, o + c.dim))
            o += c.dim
        p.slices = tuple(slices)
        p.qshape, p.vshape, p.oshape, p.lshape = (model.nq,), (model.nv,), (1, model.nv), (1, m)
        p.flat, p.size = np.ascontiguousarray(p.spec).reshape(-1), model.nv + 2 * m + 1
        p.layout = None
        if GATE is not None and 0 < len(cons) <= 5:  # (SPLIT: at most eight parts)
            p.layout = ((model.nv,), (m,)) + tuple((c.dim,) for c in cons) + ((),)
            p.addr = kkt_gate()
    else:
        p.layout = None
    single = isinstance(contacts, _Contact)
    p.items = None if single else tuple(cons)
    if p.fast and (single or type(contacts) in (list, tuple)) and all(type(x) in _VALUES for x in raw):
        if len(_PLANS) >= 256:
            _PLANS.clear()
        _PLANS[(id(model), id(contacts), impulse)] = p
    return p


def _where(N: int, k: int) -> str:
    return f" (batch element {k})" if N > 1 else ""


def _chol_solve(L, y):
    """``(L Lᵀ)⁻¹ y`` for stacked factors ``L`` (N, n, n) and right-hand sides ``y`` (N, n)."""
    return _tri_solve(L, _tri_solve(L, y), True)


def _tri_solve(L, y, trans=False):
    """``L⁻¹ y`` (``Lᵀ⁻¹ y`` with ``trans``) (N, n) for stacked lower-triangular ``L`` (N, n, n).

    `np.linalg.solve` broadcasts over the stack (its LU of a triangular matrix is as accurate as a
    triangular solve; scipy's ``solve_triangular`` loops over a stack in Python)."""
    return np.linalg.solve(np.swapaxes(L, -1, -2) if trans else L, y[..., None])[..., 0]


def _factor(M):
    """Stacked lower Cholesky factors (`np.linalg.cholesky` for one state and a stack alike, so
    a batch gives its states' bits); `LinAlgError` when one is not positive definite."""
    return np.linalg.cholesky(M)


def _cholesky(M, message):
    """Stacked Cholesky factors of ``M`` (N, n, n); `SingularError` (``message`` and the first
    batch element that is not positive definite) when one is not."""
    try:
        return _factor(M)
    except np.linalg.LinAlgError:
        N = M.shape[0]
        for k in range(N):
            try:
                np.linalg.cholesky(M[k])
            except np.linalg.LinAlgError:
                raise SingularError(message + _where(N, k)) from None
        raise


def solve(M, r0, A, b, eps, proximal, max_iter, tol):
    """``(x (N, n), λ (N, m), iterations (N,))`` of the KKT system above for a stack of states:
    ``M`` (N, n, n), ``r0`` (N, n), ``A`` (N, m, n), ``b`` (N, m) (module docstring).

    With ``M = L Lᵀ``, ``W = L⁻¹ Aᵀ`` and ``y₀ = L⁻¹ r0``: ``G = Wᵀ W``, ``a₀ = L⁻ᵀ y₀`` and
    ``x = L⁻ᵀ (y₀ + W λ)``.
    Every step is a stacked numpy operation (Cholesky factors, triangular solves, products);
    the proximal iterations run on all states at once, each state stopping on its own test.
    ``proximal`` is μ relative to the mean diagonal of ``G`` (scale free); ``None``: a direct
    Cholesky solve of ``G + εI``.  A singular ``G`` (``ε = 0``, no proximal term) is found from
    the pivots ``d_i = L_ii²`` of that Cholesky factor: the smallest eigenvalue is at most the
    smallest pivot, so a pivot above ``10⁻⁸ max_i G_ii`` (an eigenvalue bound ``λ_max ≤ m
    max_i G_ii``) clears the state at no cost; a state not cleared (or whose factorisation fails)
    gets the eigenvalues of ``G`` and the test ``λ_min > 10⁻¹² λ_max``."""
    N, n = r0.shape
    m = A.shape[1]
    L = _cholesky(M, "the mass matrix is not positive definite at this configuration (a DoF "
                     "moves no inertia); contact dynamics is undefined")
    if m == 0:
        return np.linalg.solve(M, r0[:, :, None])[:, :, 0], np.zeros((N, 0)), np.zeros(N, dtype=np.int64)
    # L⁻¹ [r0, Aᵀ] in one stacked solve (not BLAS trsm / trsv: the multipliers of a redundant
    # contact set amplify the rounding of W; `np.linalg.solve` keeps them as the tests require)
    Y = np.linalg.solve(L, np.concatenate([r0[:, :, None], np.swapaxes(A, -1, -2)], axis=2))
    y0, W = Y[:, :, 0], Y[:, :, 1:]
    Lt = np.swapaxes(L, -1, -2)
    a0 = np.linalg.solve(Lt, y0[:, :, None])[:, :, 0]
    G = np.swapaxes(W, -1, -2) @ W
    r = b - (A @ a0[:, :, None])[:, :, 0]  # (not Wᵀ y₀: b − A a₀ keeps the consistency of redundant rows)
    diag = np.einsum("nii->ni", G)
    scale = np.maximum(diag.sum(axis=1) / m, 1e-300)
    eye = np.eye(m)
    if proximal is None:
        K = G + eps * eye
        if eps == 0.0:
            Lk = _direct_factor(K, diag)
        else:
            Lk = _factor(K)
        lam = _chol_solve(Lk, r)
        return np.linalg.solve(Lt, (y0 + (W @ lam[:, :, None])[:, :, 0])[:, :, None])[:, :, 0], lam, np.ones(N, dtype=np.int64)
    mu = proximal * scale
    Lk = _factor(G + (eps + mu)[:, None, None] * eye)
    lam = np.zeros((N, m))
    nr = np.linalg.norm(r, axis=1)
    # per state: stop once the step no longer moves λ; or once the primal residual of
    # (G + εI) λ = r is at rounding level while the steps stall (a rounding-level inconsistency of
    # redundant rows moves λ at a constant rate along the null space of Aᵀ, which leaves x unchanged)
    prev = np.full(N, np.inf)
    res = np.zeros(N)
    its = np.zeros(N, dtype=np.int64)
    active = np.arange(N)
    for k in range(1, max_iter + 1):
        full = active.shape[0] == N
        sel = slice(None) if full else active
        lam_a, r_a, mu_a = lam[sel], r[sel], mu[sel]
        new = _chol_solve(Lk[sel], r_a + mu_a[:, None] * lam_a)
        step = np.linalg.norm(new - lam_a, axis=1)
        lam[sel] = new
        nl = np.linalg.norm(new, axis=1)
        moved = step <= tol * (1.0 + nl)
        res_a = np.linalg.norm((G[sel] @ new[:, :, None])[:, :, 0] + eps * new - r_a, axis=1)
        res[sel] = res_a
        stalled = ~moved & (step > 0.5 * prev[sel]) & (res_a <= tol * (1.0 + nr[sel] + scale[sel] * nl))
        done = moved | stalled
        prev[sel] = step
        idx = np.arange(N) if full else active
        its[idx[done]] = k
        active = idx[~done]
        if active.shape[0] == 0:
            break
    else:
        j = int(active[0])
        raise InfeasibleError(
            f"contacts: the contact constraints are inconsistent (the proximal iterations did not "
            f"converge in {max_iter} steps; residual {res[j]:.3e} of |b − A a₀| = {nr[j]:.3e}): "
            f"redundant contacts whose accelerations / velocities cannot all be met" + _where(N, j))
    return np.linalg.solve(Lt, (y0 + (W @ lam[:, :, None])[:, :, 0])[:, :, None])[:, :, 0], lam, its


def _direct_factor(K, diag):
    """Cholesky factors of the Delassus matrices ``K`` (N, m, m) (``ε = 0``), refusing a
    singular one (`solve`'s pivot test, then the eigenvalues of the states it does not clear)."""
    N, m = K.shape[:2]
    try:
        Lk = _factor(K)
        piv = np.einsum("nii->ni", Lk) ** 2
        suspect = np.nonzero(~(piv.min(axis=1) > 1e-8 * diag.max(axis=1)))[0]
    except np.linalg.LinAlgError:
        Lk, suspect = None, range(N)
    for k in suspect:
        w = np.linalg.eigvalsh(K[k])
        if not w[0] > 1e-12 * max(w[-1], 1e-300):
            raise SingularError(
                f"contacts: the contact set is singular (its {m} rows have rank "
                f"{int(np.sum(w > 1e-12 * w[-1]))}: redundant contacts) and neither "
                f"regularization nor proximal is set; pass proximal=1e-8 (the proximal scheme) or "
                f"regularization > 0" + _where(N, k))
    return _factor(K) if Lk is None else Lk
