"""Cable-driven parallel robots: point cables, swivel-pulley cables, over-constrained forward
kinematics and tension feasibility -- [MontgomerySmith2023, §9–§10].

Cable model
-----------
* **Point cable** (kind 0): a straight cable from a fixed anchor ``s`` (world) to the
  end-effector point ``r``: exactly a Stewart leg (`stewart`).
* **Swivel-pulley cable** (kind 1; [MontgomerySmith2023, §9], Fig. 2, eqs. 78-84; the NASA JSC robot).  An
  assembly rotates about the axis through the fixed point ``x`` along the fixed unit ``n``; a rod
  of length ``w`` perpendicular to ``n`` carries the centre of a pulley of radius ``p`` that turns
  in the plane of the axis and ``r``.  In the ``(m, n)`` coordinates with origin ``r``:

  ``d = P_n(x − r)`` (81), ``m = d/|d|`` (82), ``h₂ = n·(x − r)`` (83), ``h₁ = |d| − w`` (84),
  ``(u₁, u₂) = −1/(h₁² + h₂²) [[h₁, −h₂], [h₂, h₁]] (√(h₁² + h₂² − p²), p)`` (79),
  ``u = u₁ m + u₂ n`` (78), ``ℓ = √(h₁² + h₂² − p²) + p atan2(−u₂, −u₁)`` (80, with the atan2
  branch ``atan2(−u₂, −u₁)`` recommended in [MontgomerySmith2023, §9], plus the actuator's constant offset).

  ``L ℓ = 2 [S_r; I] u`` (eq. 74) holds for this model too (claim 10), and the second Lie
  derivative needs only ``L u`` [MontgomerySmith2023, §9]: ``L²ℓ = 2 [S_r; I] L u``, ``L u = 2 [S_u − G S_r, G]``
  with ``G = ∂u/∂r`` computed here in closed form (first-order differentiation of (78)-(84)):
  with ``c = (h₁, h₂)``, ``q = |c|²``, ``s = √(q − p²)``, ``J`` the 90° rotation,
  ``D = (c cᵀ/s + s I + p J)/q − 2 (s c + p J c) cᵀ/q²`` and ``k = n × m``:
  ``G = [m n] D [m n]ᵀ − (u₁/|d|) k kᵀ``.

Sign of forces: ``τ_β = Λᵀ f`` with ``f_k > 0`` pushing along ``u_k`` (out of the pulley); a
cable can only pull, so its **tension is** ``t_k = −f_k ≥ 0``.

The cable kernels (`k_pulley` for eqs. 78-84, the closed-form ``G``) live in
`actuators` beside the leg's; the over-constrained forward kinematics every cable robot
uses (``n > 6``; [MontgomerySmith2023, eqs. (88)–(90)] corrected) lives in `newton`.  This module holds
the robot class, tension feasibility (linear programming) and the bundled 8-cable robot.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from dqdyn import errors
from dqdyn.parallel import lie
from dqdyn.parallel.actuators import (  # noqa: F401  # noqa: F401  (re-exported)
    C_KIND,
    C_N,
    C_OFF,
    C_P,
    C_R,
    C_S,
    C_W,
    KIND_LEG,
    KIND_PULLEY,
    NCOL,
    eval_any,
    eval_any_batch,
    k_eval_any,
    k_pulley,
)
from dqdyn.parallel.newton import LSFKBatchResult, LSFKResult, batch_outputs, fk_global_batch, fk_ls  # noqa: F401
from dqdyn.parallel.stewart import ParallelRobot, _as_points

__all__ = ["CableRobot", "TensionResult", "cable_robot_8", "pulley_cable_length"]


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
    """Cable-driven parallel robot with point cables and/or swivel-pulley cables [MontgomerySmith2023, §9].

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
        """Over-constrained forward kinematics ([MontgomerySmith2023, eqs. (88)–(90)] corrected), see
        `ParallelRobot.forward_kinematics` for the stopping rules; returns ``LSFKResult``
        (with the final ``loss``).  ``printed_step=True`` uses the sign printed in eq. (90)
        (``+H⁻¹δ``; wrong) and exists only to demonstrate the erratum."""
        return self.forward_kinematics_ls(ell, guess, tol=tol, ftol=ftol, maxit=maxit, loss_tol=loss_tol,
                                          method=method, printed_step=printed_step, check=check)

    def forward_kinematics_batch(self, ell, guess=None, *, tol=None, ftol=None, maxit=None, loss_tol=None,
                                 method="newton", printed_step=False, check=False):
        return self.forward_kinematics_ls_batch(ell, guess, tol=tol, ftol=ftol, maxit=maxit, loss_tol=loss_tol,
                                                method=method, printed_step=printed_step, check=check)

    def forward_kinematics_global_batch(self, ell, n_guesses=1000, *, rng=None, max_angle_deg=45.0,
                                        max_translation=None, stop_at_first=True, method="newton"):
        """Global mode for many targets (parallel).  One pool of ``n_guesses`` random poses is
        drawn (`sample_poses`) and each target walks through it from a random start;
        ``runs`` = Newton applications per target ([MontgomerySmith2023, §10.3] test 1)."""
        ell = np.ascontiguousarray(self._check_ell(ell, batch=True))
        N = ell.shape[0]
        rng = np.random.default_rng(rng)
        G = self._guesses(None, n_guesses, rng, max_angle_deg, max_translation)
        starts = rng.integers(0, G.shape[0], size=N).astype(np.int64)
        out, st, it, rs, lo = batch_outputs(N)
        runs = np.empty(N, np.int64)
        fk_global_batch(G, starts, ell, self._geom, self._prm_for(None, None, None, None, method), False,
                        bool(stop_at_first), out, st, it, rs, lo, runs)
        return LSFKBatchResult(out, st, it, rs, runs, lo)

    def tension_distribution(self, eta, wrench, t_min=0.0, t_max=np.inf):
        """Cable tensions ``t`` (all pulling: ``t > t_min``) whose wrench on the end effector is
        the dqdyn body wrench ``[f, τ]`` (``−Λᵀ t = τ_β``), by linear programming
        (``scipy.optimize.linprog``).  Returns a `TensionResult`; ``feasible`` is the
        "all cable forces positive" check.  Point cables and pulley cables alike."""
        Lam = self.lie_jacobian(eta)
        return _tension_lp(Lam, lie.wrench_to_beta(wrench), float(t_min), float(t_max))

    def tensions(self, eta, wrench, t_min=0.0, t_max=np.inf):
        """Cable tensions (n,) producing the body wrench ``[f, τ]`` at ``eta`` with every cable
        taut (``t > t_min``), as `tension_distribution`; raises
        `InfeasibleError` naming the cables that would go slack when no
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
    """The bundled 8-cable robot ([MontgomerySmith2023, Fig. 1] has eight cables over pulleys; no geometry is
    published).

    Frame corners ``(±2, ±2, 2)`` (top) and ``(±2, ±2, 0)`` (bottom); the end effector is a box of
    half-sizes ``box = (0.2, 0.1, 0.2)`` and home is the centre ``(0, 0, 1)``.  Cables are crossed
    (as in IPAnema-type designs): each top-corner cable goes to a *bottom* vertex of the box and
    each bottom-corner cable to a *top* vertex, with the diagonal pairing below.  The design is
    wrench-closed (positive tensions exist for any wrench) and well conditioned over the test
    workspace (orientation ≤ 20°, translation ±0.3); a 4-fold symmetric "twisted" layout is
    either not wrench-closed or singular at home.  With
    ``pulleys=True`` every corner has a swivel pulley ([MontgomerySmith2023, §9]; axis vertical, pointing away
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
