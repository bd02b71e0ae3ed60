"""Cable-driven parallel robots: point cables, swivel-pulley cables, over-constrained forward
kinematics and tension feasibility -- seed 001 §9-§10.

Cable model
-----------
* **Point cable** (kind 0): a straight cable from a fixed anchor ``s`` (world) to the
  end-effector point ``r``: exactly a Stewart leg (:mod:`.stewart`).
* **Swivel-pulley cable** (kind 1; seed 001 §9, Fig. 2, eqs. 78-84; the NASA JSC robot).  An
  assembly rotates about the axis through the fixed point ``x`` along the fixed unit ``n``; a rod
  of length ``w`` perpendicular to ``n`` carries the centre of a pulley of radius ``p`` that turns
  in the plane of the axis and ``r``.  In the ``(m, n)`` coordinates with origin ``r``:

  ``d = P_n(x − r)`` (81), ``m = d/|d|`` (82), ``h₂ = n·(x − r)`` (83), ``h₁ = |d| − w`` (84),
  ``(u₁, u₂) = −1/(h₁² + h₂²) [[h₁, −h₂], [h₂, h₁]] (√(h₁² + h₂² − p²), p)`` (79),
  ``u = u₁ m + u₂ n`` (78), ``ℓ = √(h₁² + h₂² − p²) + p atan2(−u₂, −u₁)`` (80, with the atan2
  branch of A:L403, plus the actuator's constant offset).

  ``L ℓ = 2 [S_r; I] u`` (eq. 74) holds for this model too (claim 10), and the second Lie
  derivative needs only ``L u`` (A:L412): ``L²ℓ = 2 [S_r; I] L u``, ``L u = 2 [S_u − G S_r, G]``
  with ``G = ∂u/∂r`` computed here in closed form (first-order differentiation of (78)-(84)):
  with ``c = (h₁, h₂)``, ``q = |c|²``, ``s = √(q − p²)``, ``J`` the 90° rotation,
  ``D = (c cᵀ/s + s I + p J)/q − 2 (s c + p J c) cᵀ/q²`` and ``k = n × m``:
  ``G = [m n] D [m n]ᵀ − (u₁/|d|) k kᵀ``.

Sign of forces: ``τ_β = Λᵀ f`` with ``f_k > 0`` pushing along ``u_k`` (out of the pulley); a
cable can only pull, so its **tension is** ``t_k = −f_k ≥ 0``.

Over-constrained forward kinematics (``n > 6``; seed 001 eqs. 88-90, corrected E6/E7): full
Newton on ``b(η) = ½|L(η) − ℓ|²`` (eq. 147) with gradient ``δ = Λᵀ(L − ℓ)`` (88) and Hessian
``H = ΛᵀΛ + ½ Σ_m (L²ℓ_m + L²ℓ_mᵀ)(L_m − ℓ_m)`` (89 with the missing ``−ℓ_m`` restored, E6 /
eq. 152); the step is ``θ = −H⁻¹δ`` (E7; the printed ``+H⁻¹δ`` ascends -- kept behind
``printed_step=True`` for the claims tests).  ``method="gauss-newton"`` drops the
second-derivative term.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numba as nb
import numpy as np

from .._jit import kernel

from .. import errors
from . import lie
from .lie import inline, k_dir_to_body, k_normalize, k_pose_update, k_rot_trans, k_size_l_diff, k_world_to_body
from .stewart import (
    C_KIND,
    C_N,
    C_OFF,
    C_P,
    C_R,
    C_S,
    C_W,
    KIND_LEG,
    KIND_PULLEY,
    LOCALMIN,
    MAXITER,
    NCOL,
    NONFINITE,
    OK,
    SINGULAR,
    FKBatchResult,
    FKResult,
    ParallelRobot,
    _as_points,
    _raise_fk,
    _raise_fk_batch,
    k_lam_row,
    k_leg,
    k_leg_G,
    k_second,
    k_solve,
)

__all__ = ["CableRobot", "TensionResult", "cable_robot_8", "pulley_cable_length"]

njit = kernel(error_model="numpy")
pnjit = kernel(parallel=True, error_model="numpy")


# =========================================================================== compiled kernels


@inline
def k_pulley(rq, t, row, xb, nv, u, G, need_G):
    """Swivel-pulley cable (seed 001 eqs. 78-84); returns the length (without offset).

    ``x`` (row[4:7]) and ``n`` (row[7:10]) are world quantities, moved to the body frame first
    (eqs. 120-121), so ``u`` and ``G = ∂u/∂r`` come out in the moving frame.
    """
    k_world_to_body(rq, t, row[C_S : C_S + 3], xb)
    k_dir_to_body(rq, row[C_N : C_N + 3], nv)
    n0, n1, n2 = nv[0], nv[1], nv[2]
    e0 = xb[0] - row[1]
    e1 = xb[1] - row[2]
    e2 = xb[2] - row[3]
    h2 = n0 * e0 + n1 * e1 + n2 * e2  # (83)
    d0 = e0 - h2 * n0  # (81)
    d1 = e1 - h2 * n1
    d2 = e2 - h2 * n2
    dl = math.sqrt(d0 * d0 + d1 * d1 + d2 * d2)
    # r on the swivel axis (to round-off): m is undefined -- NaN, reported by the front ends
    if not dl > 1e-13 * (abs(xb[0]) + abs(xb[1]) + abs(xb[2]) + abs(row[1]) + abs(row[2]) + abs(row[3])):
        dl = np.nan
    m0, m1, m2 = d0 / dl, d1 / dl, d2 / dl  # (82)
    w = row[C_W]
    p = row[C_P]
    h1 = dl - w  # (84)
    q = h1 * h1 + h2 * h2
    s = math.sqrt(q - p * p)
    u1 = -(h1 * s - h2 * p) / q  # (79)
    u2 = -(h2 * s + h1 * p) / q
    u[0] = u1 * m0 + u2 * n0  # (78)
    u[1] = u1 * m1 + u2 * n1
    u[2] = u1 * m2 + u2 * n2
    if need_G:
        # D = (c c^T/s + s I + p J)/q - 2 (s c + p J c) c^T / q^2,  J = [[0,-1],[1,0]]
        jc0, jc1 = -h2, h1
        v0 = s * h1 + p * jc0
        v1 = s * h2 + p * jc1
        q2 = q * q
        D00 = (h1 * h1 / s + s) / q - 2.0 * v0 * h1 / q2
        D01 = (h1 * h2 / s - p) / q - 2.0 * v0 * h2 / q2
        D10 = (h2 * h1 / s + p) / q - 2.0 * v1 * h1 / q2
        D11 = (h2 * h2 / s + s) / q - 2.0 * v1 * h2 / q2
        k0 = n1 * m2 - n2 * m1
        k1 = n2 * m0 - n0 * m2
        k2 = n0 * m1 - n1 * m0
        c = u1 / dl
        mm = (m0, m1, m2)
        nn = (n0, n1, n2)
        kk = (k0, k1, k2)
        for a in range(3):
            for b in range(3):
                G[a, b] = (
                    D00 * mm[a] * mm[b] + D01 * mm[a] * nn[b] + D10 * nn[a] * mm[b] + D11 * nn[a] * nn[b]
                    - c * kk[a] * kk[b]
                )
    return s + p * math.atan2(-u2, -u1)  # (80)


@inline
def k_eval_any(eta, geom, order, L, Lam, H, rq, t, sb, nv, u, G, A):
    """Lengths / Λ / L²ℓ of any mix of legs, point cables and swivel-pulley cables."""
    k_rot_trans(eta, rq, t)
    for k in range(geom.shape[0]):
        row = geom[k]
        if row[C_KIND] == KIND_PULLEY:
            Lk = k_pulley(rq, t, row, sb, nv, u, G, order >= 2)
        else:
            Lk = k_leg(rq, t, row, sb, u)
            if order >= 2:
                k_leg_G(u, Lk, G)
        L[k] = Lk + row[C_OFF]
        if order >= 1:
            k_lam_row(row, u, Lam[k])
        if order >= 2:
            k_second(row, u, G, A, H[k])


@njit
def eval_any(eta, geom, order, L, Lam, H):  # pragma: no cover - compiled
    """``(ℓ, Λ, L²ℓ)`` of any actuator mix at the normalized pose ``η |η|⁻¹`` (eq. 33)."""
    e = np.empty(8)
    k_normalize(eta, e)
    rq = np.empty(4)
    t = np.empty(3)
    sb = np.empty(3)
    nv = np.empty(3)
    u = np.empty(3)
    G = np.empty((3, 3))
    A = np.empty((3, 6))
    k_eval_any(e, geom, order, L, Lam, H, rq, t, sb, nv, u, G, A)


@njit
def eval_any_batch(eta, geom, order, L, Lam, H):  # pragma: no cover - compiled
    for b in range(eta.shape[0]):
        eval_any(eta[b], geom, order, L[b], Lam[b], H[b])


@njit
def fk_ls(eta0, ell, geom, prm, out):  # pragma: no cover - compiled
    """Over-constrained Newton on ``b = ½|L − ℓ|²`` (seed 001 eqs. 88-90, corrected E6/E7).

    ``prm = [tol, ftol_abs, inv_l2, maxit, loss_tol_abs, gauss_newton, step_sign]``.  Returns
    ``(status, iterations, max|L − ℓ|, loss)``.
    """
    tol = prm[0]
    ftol = prm[1]
    inv_l2 = prm[2]
    maxit = int(prm[3])
    loss_tol = prm[4]
    gn = prm[5] != 0.0
    sign = prm[6]
    n = geom.shape[0]
    order = 1 if gn else 2
    eta = np.empty(8)
    new = np.empty(8)
    tmp = np.empty(8)
    rq = np.empty(4)
    t = np.empty(3)
    sb = np.empty(3)
    nv = np.empty(3)
    u = np.empty(3)
    G = np.empty((3, 3))
    A3 = np.empty((3, 6))
    L = np.empty(n)
    Lam = np.empty((n, 6))
    H2 = np.empty((n, 6, 6))
    F = np.empty(n)
    Hm = np.empty((6, 6))
    dl = np.empty(6)
    th = np.empty(6)
    for k in range(8):
        eta[k] = eta0[k]
    k_normalize(eta, eta)
    it = 0
    status = MAXITER
    small = False
    res = 0.0
    loss = 0.0
    while True:
        k_eval_any(eta, geom, order, L, Lam, H2, rq, t, sb, nv, u, G, A3)
        res = 0.0
        loss = 0.0
        for k in range(n):
            f = L[k] - ell[k]
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
        # gradient (88) and Hessian (89)/(152), corrected E6
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
        # step (90) corrected E7: theta = -H^{-1} delta  (sign = -1)
        if not k_solve(Hm, dl, th, 6):
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


@pnjit
def fk_ls_batch(eta0, ell, geom, prm, out, status, iters, res, loss):  # pragma: no cover - compiled
    for b in nb.prange(ell.shape[0]):
        s, i, r, lo = fk_ls(eta0[b], ell[b], geom, prm, out[b])
        status[b] = s
        iters[b] = i
        res[b] = r
        loss[b] = lo


@njit
def fk_ls_track(eta0, ells, geom, prm, out, status, iters, res, loss):  # pragma: no cover - compiled
    guess = eta0.copy()
    for b in range(ells.shape[0]):
        s, i, r, lo = fk_ls(guess, ells[b], geom, prm, out[b])
        status[b] = s
        iters[b] = i
        res[b] = r
        loss[b] = lo
        if s == OK:
            for k in range(8):
                guess[k] = out[b, k]
    return 0


@njit
def fk_ls_global(guesses, start, ell, geom, prm, stop_first, out):  # pragma: no cover - compiled
    """Global mode: Newton from ``guesses[(start + j) % G]``, j = 0..G-1; keep the smallest loss
    (stop at the first success when ``stop_first``).  Returns
    ``(status, iterations, residual, loss, runs)`` of the kept run."""
    cand = np.empty(8)
    best_loss = np.inf
    best_s = MAXITER
    best_i = 0
    best_r = np.inf
    runs = 0
    ng = guesses.shape[0]
    for j in range(ng):
        g = (start + j) % ng
        s, i, r, lo = fk_ls(guesses[g], ell, geom, prm, cand)
        runs += 1
        better = (s == OK and best_s != OK) or ((s == OK) == (best_s == OK) and lo < best_loss)
        if better:
            best_loss = lo
            best_s = s
            best_i = i
            best_r = r
            for k in range(8):
                out[k] = cand[k]
        if stop_first and best_s == OK:
            break
    return best_s, best_i, best_r, best_loss, runs


@pnjit
def fk_ls_global_batch(guesses, starts, ells, geom, prm, stop_first, out, status, iters, res, loss, runs):  # pragma: no cover
    """Global mode for many targets; all share one pool of guesses, target ``b`` starting at
    ``starts[b]``."""
    for b in nb.prange(ells.shape[0]):
        s, i, r, lo, nr = fk_ls_global(guesses, starts[b], ells[b], geom, prm, stop_first, out[b])
        status[b] = s
        iters[b] = i
        res[b] = r
        loss[b] = lo
        runs[b] = nr


# =========================================================================== LS solver front ends


@dataclass
class LSFKResult(FKResult):
    """Over-constrained forward kinematics: :class:`FKResult` plus the final loss ``½|L − ℓ|²``."""

    loss: float = 0.0


@dataclass
class LSFKBatchResult(FKBatchResult):
    loss: np.ndarray | None = None


def _ls_forward_kinematics(robot, ell, guess=None, *, tol=None, ftol=None, maxit=None, loss_tol=None,
                           method="newton", printed_step=False, check=True):
    ell = robot._check_ell(ell)
    g = robot.home if guess is None else lie._arr(guess, "guess", 8)
    out = np.empty(8)
    s, it, r, lo = fk_ls(g, ell, robot._geom, robot._prm_for(tol, ftol, maxit, loss_tol, method, printed_step), out)
    res = LSFKResult(out, int(s), int(it), float(r), 1, float(lo))
    if check and s != OK:
        _raise_fk(res)
    return res


def _ls_forward_kinematics_batch(robot, ell, guess=None, *, tol=None, ftol=None, maxit=None, loss_tol=None,
                                 method="newton", printed_step=False, check=False):
    ell = np.ascontiguousarray(robot._check_ell(ell, batch=True))
    N = ell.shape[0]
    g = robot.home if guess is None else lie._arr(guess, "guess", 8)
    g = np.ascontiguousarray(np.broadcast_to(g, (N, 8)))
    out = np.empty((N, 8))
    st = np.empty(N, np.int64)
    it = np.empty(N, np.int64)
    rs = np.empty(N)
    lo = np.empty(N)
    fk_ls_batch(g, ell, robot._geom, robot._prm_for(tol, ftol, maxit, loss_tol, method, printed_step), out, st, it, rs, lo)
    res = LSFKBatchResult(out, st, it, rs, None, lo)
    if check and not res.all_converged:
        _raise_fk_batch(res)
    return res


def _ls_track(robot, ells, eta0=None, *, tol=None, ftol=None, maxit=None, loss_tol=None, method="newton", check=True):
    ells = np.ascontiguousarray(robot._check_ell(ells, batch=True))
    T = ells.shape[0]
    g = robot.home if eta0 is None else lie._arr(eta0, "eta0", 8)
    out = np.empty((T, 8))
    st = np.empty(T, np.int64)
    it = np.empty(T, np.int64)
    rs = np.empty(T)
    lo = np.empty(T)
    fk_ls_track(np.ascontiguousarray(g, dtype=float), ells, robot._geom, robot._prm_for(tol, ftol, maxit, loss_tol, method), out, st, it, rs, lo)
    res = LSFKBatchResult(out, st, it, rs, None, lo)
    if check and not res.all_converged:
        _raise_fk_batch(res)
    return res


def _ls_forward_kinematics_global(robot, ell, n_guesses=1000, *, guesses=None, rng=None, max_angle_deg=45.0,
                                  max_translation=None, stop_at_first=True, tol=None, ftol=None, maxit=None,
                                  loss_tol=None, method="newton", check=True):
    ell = robot._check_ell(ell)
    G = robot._guesses(guesses, n_guesses, rng, max_angle_deg, max_translation)
    out = np.empty(8)
    s, it, r, lo, runs = fk_ls_global(G, 0, ell, robot._geom, robot._prm_for(tol, ftol, maxit, loss_tol, method), bool(stop_at_first), out)
    res = LSFKResult(out, int(s), int(it), float(r), int(runs), float(lo))
    if check and s != OK:
        _raise_fk(res)
    return res


# =========================================================================== tension feasibility


@dataclass
class TensionResult:
    """Cable tension distribution for a wrench.

    ``feasible``: some tensions ``t > t_min`` (all cable forces pulling) produce the wrench;
    ``margin``: the largest achievable smallest tension, capped at ``cap = t_min + |τ_β| / |Λ|₂``
    (the load's tension scale; 1 without load) -- reaching the cap means the tensions can be raised
    at will (e.g. a wrench-closed pose); ``tensions``: the minimum-sum distribution whose smallest
    tension is at least halfway between ``t_min`` and ``margin`` (None when infeasible).
    """

    feasible: bool
    margin: float
    tensions: np.ndarray | None
    cap: float
    #: when infeasible: the cables whose tension cannot be raised above ``t_min`` (they would go
    #: slack) in the max-min distribution; empty when feasible or when no distribution exists
    slack: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=int))


def _tension_lp(Lam, wrench_beta, t_min, t_max):
    from scipy.optimize import linprog

    n = Lam.shape[0]
    A = -Lam.T  # τ_β = Λᵀ f, f = −t
    b = np.asarray(wrench_beta, dtype=float)
    # cap of the max-min tension: the load's tension scale |b| / |A|₂ (1 when there is no load)
    scale = np.linalg.norm(b) / max(np.linalg.norm(A, 2), 1e-300)
    cap = t_min + (scale if scale > 0 else 1.0)
    if np.isfinite(t_max):
        cap = min(cap, t_max)
    # stage 1: maximise s subject to A t = b, t_k >= s, t_k <= t_max, s <= cap
    c = np.zeros(n + 1)
    c[-1] = -1.0
    A_eq = np.hstack([A, np.zeros((6, 1))])
    A_ub = np.hstack([-np.eye(n), np.ones((n, 1))])
    bounds = [(None, None if not np.isfinite(t_max) else t_max)] * n + [(None, cap)]
    r1 = linprog(c, A_ub=A_ub, b_ub=np.zeros(n), A_eq=A_eq, b_eq=b, bounds=bounds, method="highs")
    if r1.status != 0:
        return TensionResult(False, -np.inf, None, cap)
    margin = float(-r1.fun)
    if not margin > t_min:
        t1 = r1.x[:n]
        slack = np.flatnonzero(t1 <= margin + 1e-9 * max(1.0, float(np.max(np.abs(t1)))))
        return TensionResult(False, margin, None, cap, slack)
    lo = t_min + 0.5 * (margin - t_min)
    r2 = linprog(np.ones(n), A_eq=A, b_eq=b, bounds=[(lo, None if not np.isfinite(t_max) else t_max)] * n, method="highs")
    t = r2.x if r2.status == 0 else r1.x[:n]
    return TensionResult(True, margin, np.asarray(t), cap)


# =========================================================================== robot


class CableRobot(ParallelRobot):
    """Cable-driven parallel robot with point cables and/or swivel-pulley cables (seed 001 §9).

    Parameters
    ----------
    platform_points : (n, 3) attachment points ``r_k`` in the end-effector frame.
    anchors : (n, 3) world points: the anchor ``s_k`` of a point cable, or the swivel point
        ``x_k`` of a pulley.
    pulley_axes : (n, 3) world swivel axes ``n_k`` (unit), or None for point cables only.
    pulley_radii, rod_lengths : (n,) or scalars ``p_k``, ``w_k`` (pulley cables only).
    offsets : (n,) additive length constants.
    """

    kind = "cable robot"
    _arg_names = ("platform_points", "anchors")
    _evaluator = staticmethod(eval_any)
    _evaluator_batch = staticmethod(eval_any_batch)

    def __init__(self, platform_points, anchors, pulley_axes=None, pulley_radii=None, rod_lengths=None,
                 offsets=None, home=None, length_scale=None, name=None):
        s = _as_points(anchors, "anchors")
        n = s.shape[0]
        r = _as_points(platform_points, "platform_points", n)
        g = np.zeros((n, NCOL))
        g[:, C_R : C_R + 3] = r
        g[:, C_S : C_S + 3] = s
        if pulley_axes is not None:
            ax = _as_points(pulley_axes, "pulley_axes", n)
            nrm = np.linalg.norm(ax, axis=1, keepdims=True)
            if np.any(nrm[:, 0] == 0.0):
                k = int(np.flatnonzero(nrm[:, 0] == 0.0)[0])
                raise errors.ModelError(f"pulley_axes[{k}] is zero; expected a non-zero swivel-axis direction")
            ax = ax / nrm
            g[:, C_KIND] = KIND_PULLEY
            g[:, C_N : C_N + 3] = ax
            g[:, C_P] = np.broadcast_to(np.asarray(0.0 if pulley_radii is None else pulley_radii, float), (n,))
            g[:, C_W] = np.broadcast_to(np.asarray(0.0 if rod_lengths is None else rod_lengths, float), (n,))
            if np.any(g[:, C_P] < 0) or np.any(g[:, C_W] < 0):
                raise errors.ModelError("pulley_radii and rod_lengths must be non-negative")
        else:
            g[:, C_KIND] = KIND_LEG
        if offsets is not None:
            g[:, C_OFF] = np.broadcast_to(np.asarray(offsets, dtype=float), (n,))
        super().__init__(g, home=home, length_scale=length_scale, name=name)

    @property
    def has_pulleys(self) -> bool:
        return bool(np.any(self._geom[:, C_KIND] == KIND_PULLEY))

    def forward_kinematics(self, ell, guess=None, *, tol=None, ftol=None, maxit=None, loss_tol=None,
                           method="newton", printed_step=False, check=True):
        """Over-constrained forward kinematics (seed 001 eqs. 88-90 corrected E6/E7), see
        :meth:`ParallelRobot.forward_kinematics` for the stopping rules; returns ``LSFKResult``
        (with the final ``loss``).  ``printed_step=True`` uses the sign printed in eq. (90)
        (``+H⁻¹δ``; wrong, E7) and exists only to demonstrate the erratum."""
        return _ls_forward_kinematics(self, ell, guess, tol=tol, ftol=ftol, maxit=maxit, loss_tol=loss_tol,
                                      method=method, printed_step=printed_step, check=check)

    def forward_kinematics_batch(self, ell, guess=None, *, tol=None, ftol=None, maxit=None, loss_tol=None,
                                 method="newton", printed_step=False, check=False):
        return _ls_forward_kinematics_batch(self, ell, guess, tol=tol, ftol=ftol, maxit=maxit, loss_tol=loss_tol,
                                            method=method, printed_step=printed_step, check=check)

    def forward_kinematics_global_batch(self, ell, n_guesses=1000, *, rng=None, max_angle_deg=45.0,
                                        max_translation=None, stop_at_first=True, method="newton"):
        """Global mode for many targets (parallel).  One pool of ``n_guesses`` random poses is
        drawn (:meth:`sample_poses`) and each target walks through it from a random start;
        ``runs`` = Newton applications per target (seed 001 §10.3 test 1)."""
        ell = np.ascontiguousarray(self._check_ell(ell, batch=True))
        N = ell.shape[0]
        rng = np.random.default_rng(rng)
        G = self._guesses(None, n_guesses, rng, max_angle_deg, max_translation)
        starts = rng.integers(0, G.shape[0], size=N).astype(np.int64)
        out = np.empty((N, 8))
        st = np.empty(N, np.int64)
        it = np.empty(N, np.int64)
        rs = np.empty(N)
        lo = np.empty(N)
        runs = np.empty(N, np.int64)
        fk_ls_global_batch(G, starts, ell, self._geom, self._prm_for(None, None, None, None, method),
                           bool(stop_at_first), out, st, it, rs, lo, runs)
        return LSFKBatchResult(out, st, it, rs, runs, lo)

    def tension_distribution(self, eta, wrench, t_min=0.0, t_max=np.inf):
        """Cable tensions ``t`` (all pulling: ``t > t_min``) whose wrench on the end effector is
        the dqdyn body wrench ``[f, τ]`` (``−Λᵀ t = τ_β``), by linear programming
        (``scipy.optimize.linprog``).  Returns a :class:`TensionResult`; ``feasible`` is the
        "all cable forces positive" check.  Point cables and pulley cables alike."""
        Lam = self.lie_jacobian(eta)
        return _tension_lp(Lam, lie.wrench_to_beta(wrench), float(t_min), float(t_max))

    def tensions(self, eta, wrench, t_min=0.0, t_max=np.inf):
        """Cable tensions (n,) producing the body wrench ``[f, τ]`` at ``eta`` with every cable
        taut (``t > t_min``), as :meth:`tension_distribution`; raises
        :class:`~dqdyn.errors.InfeasibleError` naming the cables that would go slack when no
        such tensions exist (a pose / wrench outside the wrench-feasible set)."""
        eta = lie._arr(eta, "eta", 8)
        wrench = lie._arr(wrench, "wrench", 6)
        if eta.ndim != 1 or wrench.ndim != 1:
            raise errors.ShapeError(f"eta and wrench must be single (8,) and (6,) arrays; got {eta.shape}, {wrench.shape}")
        res = self.tension_distribution(eta, wrench, t_min, t_max)
        if not res.feasible:
            if res.slack.size:
                which = (f"cable(s) {res.slack.tolist()} would go slack (the best distribution "
                         f"keeps the smallest tension at {res.margin:.3g} ≤ t_min = {t_min:g})")
            else:
                which = f"no tensions in [t_min, t_max] = [{t_min:g}, {t_max:g}] produce it"
            raise errors.InfeasibleError(
                f"wrench: the cables cannot produce the body wrench [f, τ] = {np.round(wrench, 6).tolist()} "
                f"at pose eta: {which}; expected a pose and wrench with all cable tensions positive "
                f"(inside the wrench-feasible workspace)"
            )
        return res.tensions

    def tension_feasible(self, eta, wrench, t_min=0.0, t_max=np.inf) -> bool:
        """True when tensions ``t > t_min`` produce the body wrench ``[f, τ]`` at pose ``eta``."""
        return self.tension_distribution(eta, wrench, t_min, t_max).feasible

    def forces_from_tensions(self, tensions):
        """Actuator forces ``f = −t`` (the sign convention of ``τ_β = Λᵀ f``)."""
        return -np.asarray(tensions, dtype=float)


def pulley_cable_length(r, x, n, w, p):
    """Length (78)-(84) of one swivel-pulley cable and its direction ``u``, all in one frame
    (numpy reference, for inspection; the compiled kernel is what the robot uses)."""
    r, x, n = (np.asarray(a, dtype=float) for a in (r, x, n))
    n = n / np.linalg.norm(n)
    e = x - r
    h2 = n @ e
    d = e - h2 * n
    m = d / np.linalg.norm(d)
    h1 = np.linalg.norm(d) - w
    q = h1 * h1 + h2 * h2
    s = math.sqrt(q - p * p)
    u1, u2 = -(h1 * s - h2 * p) / q, -(h2 * s + h1 * p) / q
    return s + p * math.atan2(-u2, -u1), u1 * m + u2 * n


def cable_robot_8(pulleys=True, frame_half_width=2.0, frame_height=2.0, box=(0.2, 0.1, 0.2),
                  pulley_radius=0.05, rod_length=0.05):
    """The bundled 8-cable robot (seed 001 Fig. 1 has eight cables over pulleys; no geometry is
    published, digest §2.1).

    Frame corners ``(±2, ±2, 2)`` (top) and ``(±2, ±2, 0)`` (bottom); the end effector is a box of
    half-sizes ``box = (0.2, 0.1, 0.2)`` and home is the centre ``(0, 0, 1)``.  Cables are crossed
    (as in IPAnema-type designs): each top-corner cable goes to a *bottom* vertex of the box and
    each bottom-corner cable to a *top* vertex, with the diagonal pairing below.  The design is
    wrench-closed (positive tensions exist for any wrench) and well conditioned over the test
    workspace (orientation ≤ 20°, translation ±0.3); a 4-fold symmetric "twisted" layout is
    either not wrench-closed or singular at home -- cf. the digest's caveat in §6.  With
    ``pulleys=True`` every corner has a swivel pulley (seed 001 §9; axis vertical, pointing away
    from the effector: ``+z`` at the top, ``−z`` at the bottom; radius 0.05, rod 0.05); otherwise
    point cables anchored at the corners.
    """
    a, hgt = frame_half_width, frame_height
    anchors = np.array([[a, a, hgt], [-a, a, hgt], [-a, -a, hgt], [a, -a, hgt],
                        [a, a, 0.0], [-a, a, 0.0], [-a, -a, 0.0], [a, -a, 0.0]])
    bx, by, bz = box
    verts = np.array([[sx * bx, sy * by, sz * bz] for sz in (1, -1) for (sx, sy) in ((1, 1), (-1, 1), (-1, -1), (1, -1))])
    plat = verts[[7, 5, 6, 4, 0, 2, 1, 3]]
    axes = np.array([[0.0, 0.0, 1.0]] * 4 + [[0.0, 0.0, -1.0]] * 4)
    home = lie.pose(None, [0.0, 0.0, 0.5 * hgt])
    if pulleys:
        return CableRobot(plat, anchors, pulley_axes=axes, pulley_radii=pulley_radius, rod_lengths=rod_length,
                          home=home, length_scale=2.0 * a, name="cable_robot_8")
    return CableRobot(plat, anchors, home=home, length_scale=2.0 * a, name="cable_robot_8_points")
