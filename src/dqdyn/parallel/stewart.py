"""Rigid-leg parallel robots (Stewart / Gough platforms) and their common base class -- [MontgomerySmith2023, §9–§10].

A parallel robot here is a rigid end effector (pose ``η``, a unit dual quaternion) driven by
``n`` actuators whose values ``ℓ = L(η)`` depend on the pose only [MontgomerySmith2023, eq. (62)].
`ParallelRobot` is the front end every such robot shares (this module's
`StewartPlatform` and `cable.CableRobot`): lengths (inverse kinematics), ``Λ``,
``L²ℓ``, statics ``τ_β = Λᵀ f``, singularity analysis, pose sampling and forward kinematics.
Where the equations are:

* one actuator's ``ℓ_k``, ``Λ_k = 2 [(r_k × u_k)ᵀ, u_kᵀ]`` (eqs. 73-75) and ``L²ℓ_k`` (eqs. 76-77,
  corrected), and the geometry table they read: `actuators`;
* forward kinematics, Newton--Raphson on the pose (eq. 87 square, eqs. 88-90 corrected
  over-constrained, update eq. 86): `newton`;
* the swivel-pulley cable (eqs. 78-84) and cable tensions: `cable`.

Conventions: see `dqdyn.parallel.lie`.  ``Λ`` is in β-coordinates, i.e. ``Λ = 2 J`` with
``J`` the usual body-frame Jacobian of ``ℓ`` (rows ``∂ℓ_k/∂[ω, v]``); the wrench of actuator
forces ``f`` is ``τ_β = Λᵀ f`` (eq. 69), i.e. dqdyn's body wrench ``[f, τ] =
beta_to_wrench(Λᵀ f)``.  A positive force ``f_k`` pushes the end effector along ``u_k`` (away from
the base); a cable's tension is ``−f_k`` (see `cable`).
"""

from __future__ import annotations

import math
import time
import warnings
from dataclasses import dataclass

import numba as nb
import numpy as np

from dqdyn import errors
from dqdyn._engine.boundary import kernel_rows
from dqdyn.parallel import lie
from dqdyn.parallel.actuators import (  # noqa: F401  (re-exported: their home is .actuators)
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
    eval_legs,
    eval_legs_batch,
    k_eval,
    k_lam_row,
    k_leg,
    k_leg_G,
    k_second,
)
from dqdyn.parallel.newton import (  # noqa: F401  (re-exported: their home is .newton)
    LOCALMIN,
    MAXITER,
    NONFINITE,
    OK,
    SINGULAR,
    STATUS,
    FKBatchResult,
    FKResult,
    FKSingularError,
    LSFKBatchResult,
    LSFKResult,
    _raise_fk,
    _raise_fk_batch,
    batch_outputs,
    fk_batch,
    fk_global,
    fk_solve,
    fk_square,
    fk_track,
    k_solve,
    raise_fk,
    raise_fk_batch,
)

__all__ = [
    "SingularityWarning",
    "FKSingularError",
    "FKResult",
    "FKBatchResult",
    "SingularityReport",
    "ParallelRobot",
    "StewartPlatform",
    "stewart_6_6",
    "stewart_3_3",
    "STATUS",
]


class SingularityWarning(UserWarning):
    """The end effector is at (or near) a singular pose: ``Λ`` is (nearly) rank deficient."""


#: relative threshold ``σ_min/σ_max`` of the scaled ``Λ`` below which a pose is treated as singular
SINGULAR_RCOND = 1e-10


# =========================================================================== results


@dataclass
class SingularityReport:
    """``det Λ`` (square case) and singular values of the scaled ``Λ`` along a path.

    ``sigma_min`` / ``cond`` are those of ``Λ diag(1/l, 1/l, 1/l, 1, 1, 1)`` (dimensionless; ``l``
    the robot's characteristic length).  ``near`` flags samples with ``sigma_min < threshold``.
    """

    det: np.ndarray
    sigma_min: np.ndarray
    cond: np.ndarray
    near: np.ndarray
    threshold: float

    @property
    def any_near(self) -> bool:
        return bool(np.any(self.near))


# =========================================================================== robot classes


def _as_points(x, name, n=None):
    a = np.asarray(x, dtype=float)
    if a.ndim != 2 or a.shape[1] != 3 or (n is not None and a.shape[0] != n):
        want = f"({n}, 3)" if n is not None else "(n, 3)"
        raise errors.ShapeError(f"{name} must have shape {want}; got {a.shape}")
    if not np.all(np.isfinite(a)):
        raise errors.NonFiniteError(f"{name} contains NaN or infinity")
    return a


def _angle_samples(rng, n, max_angle):
    """Rotation angles in [0, max_angle] with the Haar density ∝ (1 − cos φ) (inverse CDF)."""
    grid = np.linspace(0.0, max_angle, 2049)
    cdf = grid - np.sin(grid)
    cdf /= cdf[-1]
    return np.interp(rng.random(n), cdf, grid)


def random_rotations(n, max_angle, rng):
    """``n`` unit quaternions, Haar-uniform among rotations of angle ≤ ``max_angle`` (rad)."""
    axis = rng.normal(size=(n, 3))
    axis /= np.linalg.norm(axis, axis=1, keepdims=True)
    ang = _angle_samples(rng, n, max_angle)
    return np.concatenate([np.cos(ang / 2)[:, None], np.sin(ang / 2)[:, None] * axis], axis=1)


class ParallelRobot:
    """A rigid end effector driven by ``n`` length actuators [MontgomerySmith2023, §9].

    Parameters
    ----------
    geometry : (n, 16) float array, one row per actuator:
        ``[kind, r(3), s|x(3), n(3), w, p, offset, 0, 0, 0]`` -- kind 0 = leg / point cable
        anchored at the fixed point ``s`` (world); kind 1 = swivel-pulley cable (swivel axis
        through ``x`` along ``n``, rod length ``w``, pulley radius ``p``; [MontgomerySmith2023, eqs. (78)–(84)]).
        ``r`` is the attachment point in the end-effector frame; ``offset`` is added to the
        length ([MontgomerySmith2023, eq. (62)]: lengths are defined up to a constant).
    home : (8,) unit pose, the reference pose (default guess, centre of `sample_poses`).
    length_scale : characteristic length ``l`` of ``size_l`` [MontgomerySmith2023, eq. (9)]; default
        ``max |s|``.
    """

    kind = "parallel robot"
    #: argument names used in error messages: (end-effector points, fixed points)
    _arg_names = ("geometry[:, 1:4]", "geometry[:, 4:7]")

    @property
    def home(self) -> np.ndarray:
        """(8,) unit pose, the reference pose (a read-only view)."""
        return self._home_view

    @home.setter
    def home(self, value) -> None:
        # (the kernels get ``_home``, writable, of the same numba type as a user's guess: a
        # read-only array is typed apart and compiled each solver twice; dqdyn._engine.jit, "Literals")
        self._home = lie.normalize(np.array(value, dtype=float))
        self._home_view = self._home.view()
        self._home_view.setflags(write=False)

    def __init__(self, geometry, home=None, length_scale=None, name=None):
        g = np.ascontiguousarray(np.asarray(geometry, dtype=float))
        if g.ndim != 2 or g.shape[1] != NCOL or g.shape[0] < 1:
            raise errors.ShapeError(f"geometry must have shape (n, {NCOL}); got {g.shape}")
        if not np.all(np.isfinite(g)):
            raise errors.NonFiniteError("geometry contains NaN or infinity")
        _check_distinct_actuators(g, self._arg_names)
        self._geom = g
        self._geom.setflags(write=False)
        self.n = g.shape[0]
        self._is_square = self.n == 6 and bool(np.all(g[:, C_KIND] == KIND_LEG))
        self.home = lie.pose() if home is None else home
        if length_scale is None:
            length_scale = float(np.max(np.linalg.norm(g[:, C_S : C_S + 3], axis=1)))
        self.length_scale = float(length_scale)
        self.name = name or self.kind
        self._prm = self._make_prm()
        try:
            self._eval(self.home, 1)
        except errors.SingularError as e:
            raise errors.ModelError(f"home: {str(e).removeprefix('eta: ')}") from None

    # ------------------------------------------------------------------ geometry accessors
    @property
    def geometry(self) -> np.ndarray:
        return self._geom

    @property
    def platform_points(self) -> np.ndarray:
        """``r_k``: attachment points in the end-effector frame (n, 3)."""
        return self._geom[:, C_R : C_R + 3].copy()

    @property
    def base_points(self) -> np.ndarray:
        """``s_k`` (legs, point cables) or swivel points ``x_k`` (pulleys), world frame (n, 3)."""
        return self._geom[:, C_S : C_S + 3].copy()

    @property
    def is_square(self) -> bool:
        """True when the square Newton solver (eq. 87) applies: six legs / point cables."""
        return self._is_square

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r}: {self.n} actuators, l = {self.length_scale:g}>"

    # ------------------------------------------------------------------ evaluation
    _evaluator = staticmethod(eval_any)
    _evaluator_batch = staticmethod(eval_any_batch)

    def _eval(self, eta, order):
        """``(ℓ, Λ, L²ℓ)`` at the normalized pose(s) ``eta`` (..., 8) in one compiled call."""
        eta = lie._arr(eta, "eta", 8)
        n = self.n
        if eta.ndim == 1:
            L = np.empty(n)
            Lam = np.empty((n, 6))
            H = np.empty((n, 6, 6) if order >= 2 else (1, 1, 1))
            self._evaluator(kernel_rows(eta), self._geom, order, L, Lam, H)
            if not math.isfinite(L.sum() + (Lam.sum() if order >= 1 else 0.0)):
                self._raise_degenerate(eta, L, Lam if order >= 1 else None, None)
            return L, Lam, (H if order >= 2 else None)
        shape = eta.shape[:-1]
        e = kernel_rows(eta.reshape(-1, 8))
        B = e.shape[0]
        L = np.empty((B, n))
        Lam = np.empty((B, n, 6))
        H = np.empty((B, n, 6, 6)) if order >= 2 else np.empty((B, 1, 1, 1))
        self._evaluator_batch(e, self._geom, order, L, Lam, H)
        if not math.isfinite(L.sum() + (Lam.sum() if order >= 1 else 0.0)):
            bad = ~np.isfinite(L).all(-1)
            if order >= 1:
                bad |= ~np.isfinite(Lam).all((-1, -2))
            b = int(np.flatnonzero(bad)[0])
            self._raise_degenerate(e[b], L[b], Lam[b] if order >= 1 else None, np.unravel_index(b, shape) if shape else None)
        return (
            L.reshape(shape + (n,)),
            Lam.reshape(shape + (n, 6)),
            H.reshape(shape + (n, 6, 6)) if order >= 2 else None,
        )

    def _raise_degenerate(self, eta, L, Lam, index):
        """An actuator's length or ``Λ`` row is not finite at ``eta``: its attachment point
        coincides with its anchor (a leg of zero length) or, for a swivel-pulley cable, lies on
        the swivel axis or inside the pulley circle (eqs. 81-84 undefined)."""
        where = f"eta{'' if index is None else '[' + ', '.join(map(str, index)) + ']'}"
        if not np.dot(eta[:4], eta[:4]) > 0.0:
            raise errors.SingularError(f"{where}: primary part is zero, normalization undefined; expected a unit (or invertible) dual quaternion")
        bad = ~np.isfinite(L)
        if Lam is not None:
            bad |= ~np.isfinite(Lam).all(-1)
        k = int(np.flatnonzero(bad)[0])
        raise errors.SingularError(
            f"{where}: at this pose the attachment point of actuator {k} coincides with its anchor "
            f"(or, for a pulley cable, lies on the swivel axis or inside the pulley), so its length "
            f"ℓ_{k} and its row of Λ are undefined; expected a pose where every end-effector "
            f"attachment point is away from its fixed point"
        )

    def _require_regular(self, Lam, name="eta"):
        """Raise `SingularError` when ``Λ`` (one pose) has rank < 6 in the
        sense ``σ_min/σ_max < SINGULAR_RCOND`` of the scaled matrix ([MontgomerySmith2023, §9]: singular iff
        ``det Λ = 0`` for a Stewart platform)."""
        scale = np.array([1 / self.length_scale] * 3 + [1.0] * 3)
        sv = np.linalg.svd(Lam * scale, compute_uv=False)
        smin = sv[5] if sv.size >= 6 else 0.0
        if not smin > SINGULAR_RCOND * sv[0]:
            raise errors.SingularError(
                f"{name}: Λ is singular at this pose (σ_min/σ_max = {smin / sv[0]:.2e} < "
                f"{SINGULAR_RCOND:g}, det Λ = {np.linalg.det(Lam) if self.n == 6 else float('nan'):.2e}); "
                f"the actuators cannot produce an arbitrary wrench here -- expected a pose away from "
                f"singularities (see {type(self).__name__}.singularity)"
            )

    def lengths(self, eta):
        """Actuator values ``ℓ = L(η)`` (..., n) -- inverse kinematics [MontgomerySmith2023, eq. (62)]."""
        return self._eval(eta, 0)[0]

    def lie_jacobian(self, eta):
        """``Λ`` (..., n, 6), ``Λ[k, i] = L_i ℓ_k`` ([MontgomerySmith2023, eqs. (65)–(66)], 74-75), β-coordinates.

        ``Λ = 2 J`` with ``J`` = `body_jacobian`; ``ℓ̇ = Λ φ_β`` (eq. 67).
        """
        return self._eval(eta, 1)[1]

    def body_jacobian(self, eta):
        """The usual body Jacobian ``J = Λ/2`` (..., n, 6): ``ℓ̇ = J [ω, v]`` (dqdyn body twist)."""
        return 0.5 * self._eval(eta, 1)[1]

    def second_lie_derivative(self, eta):
        """``L²ℓ_k`` (..., n, 6, 6), entry ``[k, j, i] = L_i L_j ℓ_k`` ([MontgomerySmith2023, eq. (77)], corrected)."""
        return self._eval(eta, 2)[2]

    def evaluate(self, eta, order=2):
        """``(ℓ, Λ, L²ℓ)`` in one kernel call (``L²ℓ`` is None for ``order < 2``)."""
        L, Lam, H = self._eval(eta, order)
        return L, (Lam if order >= 1 else None), (H if order >= 2 else None)

    # ------------------------------------------------------------------ statics
    def wrench_beta(self, eta, forces):
        """``τ_β = T f = Λᵀ f`` [MontgomerySmith2023, eqs. (68)–(69)]: the wrench ``2q + 2εp`` in β-coordinates."""
        Lam = self.lie_jacobian(eta)
        f = np.asarray(forces, dtype=float)
        return np.einsum("...ki,...k->...i", Lam, f)

    def wrench(self, eta, forces):
        """Wrench of the actuator forces on the end effector, dqdyn body ``[f, τ]`` at the
        end-effector frame origin: ``beta_to_wrench(Λᵀ f)``.  ``f_k > 0`` pushes along ``u_k``."""
        return lie.beta_to_wrench(self.wrench_beta(eta, forces))

    def actuator_forces(self, eta, wrench):
        """Actuator forces producing the body wrench ``[f, τ]`` (square: ``Λᵀ f = τ_β`` solved;
        ``n > 6``: the minimum-norm solution; cables: see `CableRobot.tension_distribution`).
        Raises `SingularError` at a singular pose (square case)."""
        Lam = self.lie_jacobian(eta)
        tb = lie.wrench_to_beta(lie._arr(wrench, "wrench", 6))
        flat = Lam.reshape(-1, self.n, 6)
        for b in range(flat.shape[0]):
            self._require_regular(flat[b], "eta" if flat.shape[0] == 1 and Lam.ndim == 2 else f"eta[{b}]")
        if self.n == 6:
            return np.linalg.solve(np.swapaxes(Lam, -1, -2), tb[..., None])[..., 0]
        return np.einsum("...ij,...j->...i", np.linalg.pinv(np.swapaxes(Lam, -1, -2)), tb)

    # ------------------------------------------------------------------ singularity analysis
    def singularity(self, eta, threshold=1e-2, warn=True):
        """``det Λ`` and the smallest singular value of the scaled ``Λ`` at a pose or along a path.

        A Stewart platform is singular iff ``det Λ = 0`` ([MontgomerySmith2023, §9.1]; Gosselin and
        Angeles).  ``sigma_min`` is that of ``Λ diag(1/l, 1/l, 1/l, 1, 1, 1)`` (dimensionless);
        samples with ``sigma_min < threshold`` are flagged and a `SingularityWarning` is
        emitted (``warn=True``).  ``det`` is NaN for ``n ≠ 6``.
        """
        Lam = self.lie_jacobian(eta)
        scale = np.array([1 / self.length_scale] * 3 + [1.0] * 3)
        Ls = Lam * scale
        sv = np.linalg.svd(Ls, compute_uv=False)
        smin = sv[..., 5] if self.n >= 6 else np.zeros(sv.shape[:-1])
        cond = np.where(smin > 0, sv[..., 0] / np.where(smin > 0, smin, 1.0), np.inf)
        det = np.linalg.det(Lam) if self.n == 6 else np.full(Lam.shape[:-2], np.nan)
        near = smin < threshold
        if warn and np.any(near):
            idx = np.flatnonzero(np.atleast_1d(near))
            warnings.warn(
                f"{self.name}: near a singularity at {idx.size} pose(s) (first index {idx[0]}, "
                f"sigma_min = {float(np.min(smin)):.3g} < {threshold:g})",
                SingularityWarning,
                stacklevel=2,
            )
        return SingularityReport(det=det, sigma_min=smin, cond=cond, near=near, threshold=threshold)

    # ------------------------------------------------------------------ sampling
    def sample_poses(self, n, max_angle_deg=30.0, max_translation=0.2, rng=None):
        """``n`` random poses: orientation Haar-uniform within ``max_angle_deg`` of the identity
        [MontgomerySmith2023, §10.3], translation = home translation + uniform in the cube ±``max_translation``."""
        rng = np.random.default_rng(rng)
        q = random_rotations(n, np.deg2rad(max_angle_deg), rng)
        t = lie.pose_translation(self.home) + rng.uniform(-max_translation, max_translation, size=(n, 3))
        return lie.pose(q, t)

    def perturb_poses(self, etas, fraction, rng=None, width=None):
        """Poses "``fraction`` different" from ``etas`` ([MontgomerySmith2023, §10.3] tests 2-3; the paper does
        not define the metric).  Here: right-multiplied by a rotation of angle
        Haar-distributed in ``[0, fraction·π]`` and translated by a vector uniform in the ball of
        radius ``fraction·width`` (``width`` defaults to `length_scale`; the bundled cable
        robot's is its 4 m frame width)."""
        rng = np.random.default_rng(rng)
        etas = np.atleast_2d(np.asarray(etas, dtype=float))
        m = etas.shape[0]
        width = self.length_scale if width is None else width
        q = random_rotations(m, fraction * np.pi, rng)
        d = rng.normal(size=(m, 3))
        d *= (fraction * width * rng.random(m) ** (1 / 3) / np.linalg.norm(d, axis=1))[:, None]
        rot = lie.dq_mul(etas, lie.pose(q))
        return lie.dq_mul(lie.pose(None, d), rot)

    # ------------------------------------------------------------------ forward kinematics
    def _make_prm(self, tol=1e-12, ftol=1e-12, maxit=50, loss_tol=1e-16, method="newton", printed_step=False):
        """Kernel parameters ``[tol, ftol·l, 1/l², maxit, loss_tol·l², gauss_newton, step_sign]``."""
        if method not in ("newton", "gauss-newton"):
            raise ValueError(f"method must be 'newton' or 'gauss-newton'; got {method!r}")
        l = self.length_scale
        return np.array(
            [tol, ftol * l, 1.0 / (l * l), float(maxit), loss_tol * l * l,
             1.0 if method == "gauss-newton" else 0.0, 1.0 if printed_step else -1.0],
            dtype=float,
        )

    def _prm_for(self, tol, ftol, maxit, loss_tol, method="newton", printed_step=False):
        if tol is None and ftol is None and maxit is None and loss_tol is None and method == "newton" and not printed_step:
            return self._prm
        p = self._prm
        l = self.length_scale
        return self._make_prm(
            p[0] if tol is None else tol,
            p[1] / l if ftol is None else ftol,
            int(p[3]) if maxit is None else maxit,
            p[4] / (l * l) if loss_tol is None else loss_tol,
            method,
            printed_step,
        )

    def _check_ell(self, ell, batch=False):
        a = np.asarray(ell, dtype=float)
        ok = (a.ndim == 2 if batch else a.ndim == 1) and a.shape[-1] == self.n
        if not ok:
            want = f"(N, {self.n})" if batch else f"({self.n},)"
            raise errors.ShapeError(f"ell must have shape {want}; got {a.shape}")
        return a

    def forward_kinematics(self, ell, guess=None, *, tol=None, ftol=None, maxit=None, loss_tol=None, check=True):
        """Pose with actuator values ``ell`` by Newton--Raphson on the pose [MontgomerySmith2023, eq. (87)].

        ``guess`` is the initial pose (default `home`).  Stops when
        ``size_l(η_{k+1} − η_k) < tol`` ([MontgomerySmith2023, §10]; default 1e-12: in double
        precision the step plateaus at ~1e-16, so the paper's 1e-16 may never be reached) or ``max|L − ℓ| < ftol·l`` (default 1e-12), or after
        ``maxit`` (50) iterations; success also requires ``½|L − ℓ|² ≤ loss_tol·l²`` (1e-16).
        Returns an `FKResult`; with ``check=True`` (default) a failure raises
        `ConvergenceError` (the result is its ``.result``) -- never a silent
        non-converged pose.  For ``n > 6`` actuators this is `forward_kinematics_ls`.
        """
        if not self.is_square:
            return self.forward_kinematics_ls(ell, guess, tol=tol, ftol=ftol, maxit=maxit, loss_tol=loss_tol, check=check)
        # hot path ([MontgomerySmith2023, §10.3] timing): minimal checks; non-finite input gives status NONFINITE
        ell = np.asarray(ell, dtype=float)
        if ell.shape != (6,):
            raise errors.ShapeError(f"ell must have shape (6,); got {ell.shape}")
        if guess is None:
            g = self._home
        else:
            g = np.asarray(guess, dtype=float)
            if g.shape != (8,):
                raise errors.ShapeError(f"guess must have shape (8,); got {g.shape}")
            if not g.flags.writeable:  # (see lie._arr)
                g = g.copy()
        if tol is None and ftol is None and maxit is None and loss_tol is None:
            prm = self._prm
        else:
            prm = self._prm_for(tol, ftol, maxit, loss_tol)
        out = np.empty(8)
        s, it, r = fk_square(g, ell, self._geom, prm, out)
        res = FKResult(out, s, it, r)
        if check and s != OK:
            raise_fk(res)
        return res

    def forward_kinematics_ls(self, ell, guess=None, *, tol=None, ftol=None, maxit=None, loss_tol=None,
                              method="newton", printed_step=False, check=True):
        """Over-constrained forward kinematics ([MontgomerySmith2023, eqs. (88)–(90)] corrected; any number of
        actuators), stopping rules as `forward_kinematics`; returns ``LSFKResult`` (with the
        final ``loss``).  ``printed_step=True`` uses the sign printed in eq. (90) (``+H⁻¹δ``;
        wrong) and exists only to demonstrate the erratum."""
        ell = self._check_ell(ell)
        g = self._home if guess is None else lie._arr(guess, "guess", 8)
        out = np.empty(8)
        s, it, r, lo = fk_solve(g, ell, self._geom, self._prm_for(tol, ftol, maxit, loss_tol, method, printed_step), False, out)
        res = LSFKResult(out, int(s), int(it), float(r), 1, float(lo))
        if check and s != OK:
            raise_fk(res)
        return res

    def forward_kinematics_batch(self, ell, guess=None, *, tol=None, ftol=None, maxit=None, loss_tol=None, check=False):
        """Independent solves for each row of ``ell`` (N, n) from ``guess`` (8,) or (N, 8),
        parallel over samples (numba ``prange``).  Returns `FKBatchResult`."""
        if not self.is_square:
            return self.forward_kinematics_ls_batch(ell, guess, tol=tol, ftol=ftol, maxit=maxit, loss_tol=loss_tol, check=check)
        return self._solve_batch(ell, guess, self._prm_for(tol, ftol, maxit, loss_tol), True, check)

    def forward_kinematics_ls_batch(self, ell, guess=None, *, tol=None, ftol=None, maxit=None, loss_tol=None,
                                    method="newton", printed_step=False, check=False):
        """`forward_kinematics_ls` for each row of ``ell`` (N, n), in parallel."""
        return self._solve_batch(ell, guess, self._prm_for(tol, ftol, maxit, loss_tol, method, printed_step), False, check)

    def _solve_batch(self, ell, guess, prm, square, check):
        ell = np.ascontiguousarray(self._check_ell(ell, batch=True))
        N = ell.shape[0]
        g = self._home if guess is None else lie._arr(guess, "guess", 8)
        g = kernel_rows(np.broadcast_to(g, (N, 8)))
        out, st, it, rs, lo = batch_outputs(N)
        fk_batch(g, ell, self._geom, prm, square, out, st, it, rs, lo, 4 * nb.get_num_threads())
        res = FKBatchResult(out, st, it, rs) if square else LSFKBatchResult(out, st, it, rs, None, lo)
        if check and not res.all_converged:
            raise_fk_batch(res)
        return res

    def track(self, ells, eta0=None, *, tol=None, ftol=None, maxit=None, loss_tol=None, check=True):
        """Tracking mode: solve a sequence ``ells`` (T, n), each from the previous solution
        ([MontgomerySmith2023, §10.3]), starting from ``eta0`` (default `home`)."""
        if not self.is_square:
            return self.track_ls(ells, eta0, tol=tol, ftol=ftol, maxit=maxit, loss_tol=loss_tol, check=check)
        return self._solve_track(ells, eta0, self._prm_for(tol, ftol, maxit, loss_tol), True, check)

    def track_ls(self, ells, eta0=None, *, tol=None, ftol=None, maxit=None, loss_tol=None, method="newton", check=True):
        """`track` with the over-constrained solver."""
        return self._solve_track(ells, eta0, self._prm_for(tol, ftol, maxit, loss_tol, method), False, check)

    def _solve_track(self, ells, eta0, prm, square, check):
        ells = np.ascontiguousarray(self._check_ell(ells, batch=True))
        g = self._home if eta0 is None else lie._arr(eta0, "eta0", 8)
        out, st, it, rs, lo = batch_outputs(ells.shape[0])
        fk_track(np.ascontiguousarray(g, dtype=float), ells, self._geom, prm, square, out, st, it, rs, lo)
        res = FKBatchResult(out, st, it, rs) if square else LSFKBatchResult(out, st, it, rs, None, lo)
        if check and not res.all_converged:
            raise_fk_batch(res)
        return res

    def forward_kinematics_global(
        self, ell, n_guesses=100, *, guesses=None, rng=None, max_angle_deg=45.0, max_translation=None,
        stop_at_first=True, tol=None, ftol=None, maxit=None, loss_tol=None, check=True,
    ):
        """Global mode: Newton from many initial guesses (default: `sample_poses` with
        ``max_angle_deg`` / ``max_translation``), keeping the best (smallest residual); with
        ``stop_at_first`` it stops at the first success ([MontgomerySmith2023, §10.3] test 1: "applied again").
        ``FKResult.runs`` is the number of Newton runs."""
        if not self.is_square:
            return self.forward_kinematics_ls_global(
                ell, n_guesses, guesses=guesses, rng=rng, max_angle_deg=max_angle_deg,
                max_translation=max_translation, stop_at_first=stop_at_first, tol=tol, ftol=ftol,
                maxit=maxit, loss_tol=loss_tol, check=check,
            )
        ell = self._check_ell(ell)
        G = self._guesses(guesses, n_guesses, rng, max_angle_deg, max_translation)
        return self._solve_global(ell, G, stop_at_first, self._prm_for(tol, ftol, maxit, loss_tol), True, check)

    def forward_kinematics_ls_global(self, ell, n_guesses=1000, *, guesses=None, rng=None, max_angle_deg=45.0,
                                     max_translation=None, stop_at_first=True, tol=None, ftol=None, maxit=None,
                                     loss_tol=None, method="newton", check=True):
        """`forward_kinematics_global` with the over-constrained solver (smallest loss kept)."""
        ell = self._check_ell(ell)
        G = self._guesses(guesses, n_guesses, rng, max_angle_deg, max_translation)
        return self._solve_global(ell, G, stop_at_first, self._prm_for(tol, ftol, maxit, loss_tol, method), False, check)

    def _solve_global(self, ell, G, stop_at_first, prm, square, check):
        out = np.empty(8)
        s, it, r, lo, runs = fk_global(G, 0, ell, self._geom, prm, square, bool(stop_at_first), out)
        if square:
            res = FKResult(out, int(s), int(it), float(r), int(runs))
        else:
            res = LSFKResult(out, int(s), int(it), float(r), int(runs), float(lo))
        if check and s != OK:
            raise_fk(res)
        return res

    def _guesses(self, guesses, n_guesses, rng, max_angle_deg, max_translation):
        if guesses is not None:
            G = np.ascontiguousarray(lie._arr(guesses, "guesses", 8).reshape(-1, 8))
        else:
            mt = 0.25 * self.length_scale if max_translation is None else max_translation
            G = self.sample_poses(n_guesses, max_angle_deg, mt, rng)
        return np.ascontiguousarray(G)

    def time_solve(self, ell, guess, repeat=1000):
        """Median wall time (µs) of one `forward_kinematics` call (Python overhead included)."""
        ts = np.empty(repeat)
        for k in range(repeat):
            t0 = time.perf_counter()
            self.forward_kinematics(ell, guess, check=False)
            ts[k] = time.perf_counter() - t0
        return float(np.median(ts) * 1e6)


def _check_distinct_actuators(g, names):
    """Two actuators joining the same end-effector point to the same fixed point (same model)
    make ``Λ`` rank deficient at every pose: reject them.  Shared single end points (3-3 and 6-3
    platforms) are fine."""
    key = g[:, :C_OFF]
    scale = max(1.0, float(np.max(np.abs(key))))
    for i in range(g.shape[0]):
        d = np.max(np.abs(key[i + 1 :] - key[i]), axis=1) if i + 1 < g.shape[0] else np.empty(0)
        hit = np.flatnonzero(d <= 1e-12 * scale)
        if hit.size:
            j = i + 1 + int(hit[0])
            raise errors.ModelError(
                f"{names[0]}, {names[1]}: actuators {i} and {j} have coincident attachment points "
                f"(both join {names[0]}[{i}] = {g[i, C_R:C_R + 3].tolist()} to {names[1]}[{i}] = "
                f"{g[i, C_S:C_S + 3].tolist()}); expected distinct actuators -- duplicates make Λ "
                f"singular at every pose"
            )


def leg_geometry(base_points, platform_points, offsets=None):
    """Geometry table (n, 16) of rigid legs from base points ``s_k`` (world) to platform points
    ``r_k`` (end-effector frame)."""
    s = _as_points(base_points, "base_points")
    r = _as_points(platform_points, "platform_points", s.shape[0])
    g = np.zeros((s.shape[0], NCOL))
    g[:, C_KIND] = KIND_LEG
    g[:, C_R : C_R + 3] = r
    g[:, C_S : C_S + 3] = s
    if offsets is not None:
        g[:, C_OFF] = np.broadcast_to(np.asarray(offsets, dtype=float), (s.shape[0],))
    return g


class StewartPlatform(ParallelRobot):
    """Gough--Stewart platform: ``n`` rigid legs (6-6, 3-3, or any ``n ≥ 6``) between fixed base
    points ``s_k`` (world frame) and platform points ``r_k`` (end-effector frame).

    Leg length ``ℓ_k = |R r_k + t − s_k|``; ``Λ`` rows ``2[(r×u)ᵀ, uᵀ]`` [MontgomerySmith2023, eq. (75)];
    ``L²ℓ_k = (4/ℓ_k) [S_r; I] P_u [−S_s  I]`` (eq. 77 with the corrected factor 4).
    A 6-leg platform uses the square Newton solver (eq. 87); more legs use the over-constrained one.
    """

    kind = "Stewart platform"
    _arg_names = ("platform_points", "base_points")

    def __init__(self, base_points, platform_points, home_height=None, home=None, length_scale=None, name=None):
        g = leg_geometry(base_points, platform_points)
        if home is None and home_height is not None:
            home = lie.pose(None, [0.0, 0.0, float(home_height)])
        super().__init__(g, home=home, length_scale=length_scale, name=name)


def _circle(radius, angles_deg, z=0.0):
    a = np.deg2rad(np.asarray(angles_deg, dtype=float))
    return np.stack([radius * np.cos(a), radius * np.sin(a), np.full(a.shape, z)], axis=1)


def stewart_6_6(base_radius=1.0, platform_radius=0.5, half_angle_deg=10.0, home_height=1.2):
    """The bundled 6-6 Stewart platform.  [MontgomerySmith2023] publishes no geometry; this is
    a test geometry -- base points on radius 1 at ``120°k ± 10°``, platform points
    on radius 0.5 at ``120°k + 60° ± 10°``, paired by one index roll (the usual zig-zag) -- with
    the home height 1.2 instead of 1.0.  The forward-kinematics failure rate at 45° depends
    strongly on the geometry (with height 1.0: ~7 wrong-assembly-mode solutions in 10,000 from
    random guesses; with 1.2: none); see `dqdyn.reproduce.parallel_robots.reproduce_parallel`."""
    h = half_angle_deg
    base = _circle(base_radius, [a + d for a in (0, 120, 240) for d in (-h, h)])
    plat = _circle(platform_radius, [a + 60 + d for a in (0, 120, 240) for d in (-h, h)])
    plat = np.roll(plat, 1, axis=0)
    return StewartPlatform(base, plat, home_height=home_height, name="stewart_6_6")


def stewart_3_3(base_radius=1.0, platform_radius=0.5, home_height=1.0):
    """A 3-3 (octahedral) Stewart platform: 3 base and 3 platform points, each joined to two of
    the other set (legs ``b_i → p_i`` and ``b_i → p_{i−1}``; coincident leg ends)."""
    b = _circle(base_radius, [0, 120, 240])
    p = _circle(platform_radius, [60, 180, 300])
    base = np.repeat(b, 2, axis=0)
    plat = np.stack([p[0], p[2], p[1], p[0], p[2], p[1]])
    return StewartPlatform(base, plat, home_height=home_height, name="stewart_3_3")
