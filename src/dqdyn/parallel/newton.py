"""Newton--Raphson forward kinematics of leg-length robots -- [MontgomerySmith2023, §10] (eqs. 86-90).

One compiled solver serves every `stewart.ParallelRobot` (Stewart platforms and cable
robots alike); what changes between the two cases is only the linear system of the step:

* **square** (six legs / point cables, eq. 87): ``Λ θ = −(L(η) − ℓ)``;
* **over-constrained** (``n > 6``, or any cable robot; eqs. 88-90 corrected): full Newton on
  ``b(η) = ½|L(η) − ℓ|²`` (eq. 147) with gradient ``δ = Λᵀ(L − ℓ)`` (88) and Hessian
  ``H = ΛᵀΛ + ½ Σ_m (L²ℓ_m + L²ℓ_mᵀ)(L_m − ℓ_m)`` (89 with the missing ``−ℓ_m`` restored, cf.
  eq. 152); the step is ``θ = −H⁻¹δ`` (the printed ``+H⁻¹δ`` ascends -- kept behind
  ``printed_step=True`` for the claims tests).  ``method="gauss-newton"`` drops the
  second-derivative term.

Both then update the pose ``η ← η normalize(1 + θ)`` (eq. 86) and stop when
``size_l(η_{k+1} − η_k) < tol`` [MontgomerySmith2023, §10] or ``max|L − ℓ| < ftol``; success also needs
``½|L − ℓ|² ≤ loss_tol`` (else status ``LOCALMIN``).  The drivers run one solve, independent
solves in parallel (``prange`` over chunks), a tracked sequence, or many initial guesses (global
mode).  The Python front ends are the methods of `stewart.ParallelRobot`; the results and
the errors they raise are here.

Solver parameters ``prm = [tol, ftol_abs, inv_l2, maxit, loss_tol_abs, gauss_newton, step_sign]``
(built by ``ParallelRobot._make_prm``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numba as nb
import numpy as np

from dqdyn import errors
from dqdyn._engine.jit import kernel
from dqdyn.parallel.actuators import C_OFF, k_eval, k_lam_row, k_leg
from dqdyn.parallel.lie import inline, k_normalize, k_pose_update, k_rot_trans, k_size_l_diff

__all__ = [
    "OK", "MAXITER", "SINGULAR", "NONFINITE", "LOCALMIN", "STATUS",
    "FKSingularError",
    "FKResult",
    "FKBatchResult",
    "LSFKResult",
    "LSFKBatchResult",
    "fk_solve",
    "fk_square",
    "fk_ls",
    "fk_batch",
    "fk_track",
    "fk_global",
    "fk_global_batch",
    "batch_outputs",
    "raise_fk",
    "raise_fk_batch",
]

njit = kernel(error_model="numpy")
pnjit = kernel(parallel=True, error_model="numpy")

#: kernel status codes
OK, MAXITER, SINGULAR, NONFINITE, LOCALMIN = 0, 1, 2, 3, 4
STATUS = {
    OK: "converged",
    MAXITER: "maximum number of iterations reached",
    SINGULAR: "singular Lie-derivative matrix / Hessian",
    NONFINITE: "non-finite iterate",
    LOCALMIN: "stationary point with loss above loss_tol (local minimum or inconsistent lengths)",
}


class FKSingularError(errors.SingularError, errors.ConvergenceError):
    """Forward kinematics stopped because ``Λ`` (square case) or the Hessian (over-constrained
    case) became singular at an iterate.  Both a `SingularError` and a
    `ConvergenceError`; ``.result`` holds the `FKResult`."""


# =========================================================================== compiled kernels


@inline
def k_solve(A, b, x, n):
    """Solve ``A x = b`` (n×n) by Gaussian elimination with partial pivoting; destroys A, b.

    Returns False when a pivot is below ``1e-13 × max|A|`` (numerically singular).
    """
    amax = 0.0
    for i in range(n):
        for j in range(n):
            v = abs(A[i, j])
            if v > amax:
                amax = v
    if not (amax > 0.0):
        return False
    thr = 1e-13 * amax
    for c in range(n):
        p = c
        pv = abs(A[c, c])
        for i in range(c + 1, n):
            v = abs(A[i, c])
            if v > pv:
                pv = v
                p = i
        if not (pv > thr):
            return False
        if p != c:
            for j in range(c, n):
                tmp = A[c, j]
                A[c, j] = A[p, j]
                A[p, j] = tmp
            tmp = b[c]
            b[c] = b[p]
            b[p] = tmp
        inv = 1.0 / A[c, c]
        for i in range(c + 1, n):
            f = A[i, c] * inv
            if f != 0.0:
                for j in range(c + 1, n):
                    A[i, j] -= f * A[c, j]
                b[i] -= f * b[c]
    for i in range(n - 1, -1, -1):
        s = b[i]
        for j in range(i + 1, n):
            s -= A[i, j] * x[j]
        x[i] = s / A[i, i]
    return True


@inline
def k_square_workspace(n):
    """Scratch a square solve uses: ``(eta, new, tmp, rq, t, sb, u, Lam, F, th)``."""
    return (np.empty(8), np.empty(8), np.empty(8), np.empty(4), np.empty(3), np.empty(3), np.empty(3),
            np.empty((n, 6)), np.empty(n), np.empty(6))


@inline
def k_workspace(n, square):
    """Scratch of one solve for ``n`` actuators, the arguments of `k_newton` after ``out``:
    ``(eta, new, tmp, rq, t, sb, nv, u, G, A3, Lam, H2, F, Hm, dl, th)``.  The square case never
    touches ``nv, G, A3, H2, Hm, dl`` (legs only, first derivatives only): they alias other arrays
    instead of being allocated."""
    eta, new, tmp, rq, t, sb, u, Lam, F, th = k_square_workspace(n)
    if square:
        nv, G, A3, H2, Hm, dl = sb, Lam, Lam, Lam.reshape((n, 6, 1)), Lam, th
    else:
        nv, G, A3, H2, Hm, dl = np.empty(3), np.empty((3, 3)), np.empty((3, 6)), np.empty((n, 6, 6)), np.empty((6, 6)), np.empty(6)
    return eta, new, tmp, rq, t, sb, nv, u, G, A3, Lam, H2, F, Hm, dl, th


@inline
def k_gradient_hessian(Lam, H2, F, sign, gn, dl, Hm):
    """``dl = sign·δ``, ``δ = Λᵀ(L − ℓ)`` [MontgomerySmith2023, eq. (88)] and ``Hm = ΛᵀΛ + ½ Σ_m (L²ℓ_m +
    L²ℓ_mᵀ)(L_m − ℓ_m)`` (eq. 89 corrected, cf. eq. 152; Gauss--Newton ``gn`` drops the sum)."""
    n = F.shape[0]
    for i in range(6):
        acc = 0.0
        for k in range(n):
            acc += Lam[k, i] * F[k]
        dl[i] = sign * acc
        for j in range(i, 6):
            acc = 0.0
            for k in range(n):
                acc += Lam[k, i] * Lam[k, j]
                if not gn:
                    acc += 0.5 * (H2[k, i, j] + H2[k, j, i]) * F[k]
            Hm[i, j] = acc
            Hm[j, i] = acc


@inline
def k_newton(eta0, ell, geom, prm, square, out, eta, new, tmp, rq, t, sb, nv, u, G, A3, Lam, H2, F, Hm, dl, th):
    """Newton--Raphson on the pose from ``eta0`` to the actuator values ``ell`` [MontgomerySmith2023, §10].

    ``square``: the step solves ``Λ θ = −(L − ℓ)`` (eq. 87); otherwise ``H θ = −δ`` (eqs. 88-90
    corrected, ``step_sign = prm[6]`` is −1; +1 is the printed, ascending sign).  ``w`` is
    `k_workspace`.  Returns ``(status, iterations, max|L − ℓ|, ½|L − ℓ|²)``; ``out`` holds
    the last iterate (sign: ``Q_0 ≥ 0``).
    """
    tol = prm[0]
    ftol = prm[1]
    inv_l2 = prm[2]
    maxit = int(prm[3])
    loss_tol = prm[4]
    gn = square or prm[5] != 0.0
    n = geom.shape[0]
    order = 1 if gn else 2
    for k in range(8):
        eta[k] = eta0[k]
    k_normalize(eta, eta)
    it = 0
    status = MAXITER
    small = False
    res = 0.0
    loss = 0.0
    while True:
        if square:  # legs only, first order: the leg kernels directly (k_eval's generality costs
            # ~1 µs of a ~3.5 µs Stewart solve, [MontgomerySmith2023, §10.3]'s timing)
            k_rot_trans(eta, rq, t)
            for k in range(n):
                row = geom[k]
                F[k] = k_leg(rq, t, row, sb, u) + row[C_OFF]
                k_lam_row(row, u, Lam[k])
        else:
            k_eval(eta, geom, order, F, Lam, H2, rq, t, sb, nv, u, G, A3)  # F = L(η)
        res = 0.0
        loss = 0.0
        for k in range(n):
            f = F[k] - ell[k]
            F[k] = f
            loss += 0.5 * f * f
            if not (abs(f) <= res):  # also catches NaN
                res = abs(f) if abs(f) < np.inf else np.inf
        if not (res < 1e300):
            status = NONFINITE
            break
        if res < ftol or small:
            status = OK if loss <= loss_tol else LOCALMIN
            break
        if it >= maxit:
            status = MAXITER
            break
        if square:  # (87): Λ θ = −(L − ℓ)
            for k in range(n):
                F[k] = -F[k]
            regular = k_solve(Lam, F, th, n)
        else:  # (90) corrected: θ = −H⁻¹δ
            k_gradient_hessian(Lam, H2, F, prm[6], gn, dl, Hm)
            regular = k_solve(Hm, dl, th, int(6))
        if not regular:
            status = SINGULAR
            break
        k_pose_update(eta, th, tmp, new)
        step = k_size_l_diff(new, eta, inv_l2)
        for k in range(8):
            eta[k] = new[k]
        it += 1
        if step < tol:
            small = True
    sg = 1.0 if eta[0] >= 0.0 else -1.0
    for k in range(8):
        out[k] = sg * eta[k]
    return status, it, res, loss


@njit
def fk_solve(eta0, ell, geom, prm, square, out):  # pragma: no cover - compiled
    """One solve (`k_newton`); returns ``(status, iterations, residual, loss)``."""
    return k_newton(eta0, ell, geom, prm, square, out, *k_workspace(geom.shape[0], square))


@njit
def fk_square(eta0, ell, geom, prm, out):  # pragma: no cover - compiled
    """One square solve (eq. 87); returns ``(status, iterations, residual)``.  The hot path of
    [MontgomerySmith2023, §10.3]: it allocates only what the square case uses and calls `k_newton` directly."""
    n = geom.shape[0]
    eta, new, tmp, rq, t, sb, u, Lam, F, th = k_square_workspace(n)
    s, i, r, lo = k_newton(eta0, ell, geom, prm, bool(True), out, eta, new, tmp, rq, t, sb, sb, u, Lam, Lam, Lam,
                           Lam.reshape((n, 6, 1)), F, Lam, th, th)
    return s, i, r


@njit
def fk_ls(eta0, ell, geom, prm, out):  # pragma: no cover - compiled
    """One over-constrained solve (eqs. 88-90); returns ``(status, iterations, residual, loss)``."""
    return fk_solve(eta0, ell, geom, prm, bool(False), out)


@pnjit
def fk_batch(eta0, ell, geom, prm, square, out, status, iters, res, loss, nchunk):  # pragma: no cover - compiled
    """Independent solves, parallel over ``nchunk`` contiguous chunks (one workspace each)."""
    N = ell.shape[0]
    n = geom.shape[0]
    nchunk = max(1, min(N, nchunk))
    for c in nb.prange(nchunk):
        w = k_workspace(n, square)
        for b in range(c * N // nchunk, (c + 1) * N // nchunk):
            s, i, r, lo = k_newton(eta0[b], ell[b], geom, prm, square, out[b], *w)
            status[b] = s
            iters[b] = i
            res[b] = r
            loss[b] = lo


@njit
def fk_track(eta0, ells, geom, prm, square, out, status, iters, res, loss):  # pragma: no cover - compiled
    """Tracking mode: the solution at sample ``k`` is the initial guess of sample ``k + 1``."""
    w = k_workspace(geom.shape[0], square)
    guess = eta0.copy()
    for b in range(ells.shape[0]):
        s, i, r, lo = k_newton(guess, ells[b], geom, prm, square, out[b], *w)
        status[b] = s
        iters[b] = i
        res[b] = r
        loss[b] = lo
        if s == OK:
            for k in range(8):
                guess[k] = out[b, k]
    return 0


@njit
def fk_global(guesses, start, ell, geom, prm, square, stop_first, out):  # pragma: no cover - compiled
    """Global mode: Newton from ``guesses[(start + j) % G]``, j = 0..G-1; keep the best run (a
    success before a failure, then the smallest residual (square) or loss); stop at the first
    success when ``stop_first``.  Returns ``(status, iterations, residual, loss, runs)`` of the
    kept run."""
    w = k_workspace(geom.shape[0], square)
    cand = np.empty(8)
    best = np.inf
    best_s = MAXITER
    best_i = 0
    best_r = np.inf
    best_lo = np.inf
    runs = 0
    ng = guesses.shape[0]
    for j in range(ng):
        s, i, r, lo = k_newton(guesses[(start + j) % ng], ell, geom, prm, square, cand, *w)
        runs += 1
        crit = r if square else lo
        if (s == OK and best_s != OK) or ((s == OK) == (best_s == OK) and crit < best):
            best = crit
            best_s = s
            best_i = i
            best_r = r
            best_lo = lo
            for k in range(8):
                out[k] = cand[k]
        if stop_first and best_s == OK:
            break
    return best_s, best_i, best_r, best_lo, runs


@pnjit
def fk_global_batch(guesses, starts, ells, geom, prm, square, stop_first, out, status, iters, res, loss, runs):  # pragma: no cover
    """Global mode for many targets; all share one pool of guesses, target ``b`` starting at
    ``starts[b]``."""
    for b in nb.prange(ells.shape[0]):
        s, i, r, lo, nr = fk_global(guesses, starts[b], ells[b], geom, prm, square, stop_first, out[b])
        status[b] = s
        iters[b] = i
        res[b] = r
        loss[b] = lo
        runs[b] = nr


# =========================================================================== results


def batch_outputs(N):
    """Output arrays of the batch drivers: poses (N, 8), status, iterations, residual, loss (N,)."""
    return np.empty((N, 8)), np.empty(N, np.int64), np.empty(N, np.int64), np.empty(N), np.empty(N)


@dataclass
class FKResult:
    """One forward-kinematics solve.  ``converged`` is True only for status 0 (never silent)."""

    pose: np.ndarray
    status: int
    iterations: int
    residual: float  #: max_k |L_k(pose) − ℓ_k|
    runs: int = 1  #: Newton runs (global mode: initial guesses tried)

    @property
    def converged(self) -> bool:
        return self.status == OK

    @property
    def message(self) -> str:
        return STATUS.get(self.status, "unknown")


@dataclass
class FKBatchResult:
    """Batch / tracking forward kinematics: one entry per sample."""

    poses: np.ndarray
    status: np.ndarray
    iterations: np.ndarray
    residual: np.ndarray
    runs: np.ndarray | None = None

    @property
    def converged(self) -> np.ndarray:
        return self.status == OK

    @property
    def all_converged(self) -> bool:
        return bool(np.all(self.status == OK))



@dataclass
class LSFKResult(FKResult):
    """Over-constrained forward kinematics: `FKResult` plus the final loss ``½|L − ℓ|²``."""

    loss: float = 0.0


@dataclass
class LSFKBatchResult(FKBatchResult):
    loss: np.ndarray | None = None


def raise_fk(res):
    hint = {
        MAXITER: "expected lengths ell reachable from the initial guess (try the global mode)",
        SINGULAR: ("guess: Λ / the Hessian is singular at "
                   + ("the initial guess" if res.iterations == 0 else f"iterate {res.iterations}")
                   + "; expected a guess away from singular poses"),
        NONFINITE: "expected finite lengths ell and a guess whose attachment points are away from their anchors",
        LOCALMIN: "expected lengths ell consistent with some pose (check ell, or pass loss_tol)",
    }.get(res.status, "")
    cls = FKSingularError if res.status == SINGULAR else errors.ConvergenceError
    e = cls(
        f"forward kinematics did not converge: {res.message} (status {res.status}, "
        f"{res.iterations} iterations, residual {res.residual:.3g}); {hint}"
    )
    e.result = res
    raise e


def raise_fk_batch(res):
    bad = np.flatnonzero(res.status != OK)
    e = errors.ConvergenceError(
        f"forward kinematics failed for {bad.size} of {res.status.size} samples (first: index {bad[0]}, "
        f"{STATUS.get(int(res.status[bad[0]]), '?')})"
    )
    e.result = res
    raise e



_raise_fk = raise_fk
_raise_fk_batch = raise_fk_batch
