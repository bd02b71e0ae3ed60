"""Nonholonomic systems in pseudo-coordinates: Hamel / Boltzmann–Hamel equations ([Mladenova, §6,
eqs. (214)–(255)]), with the corrected forms of eq. (231) (the sum runs over s, l, not i, j) and
eq. (253) (``Ȧ₂ q̇`` where the printed form has ``A₂ q̈``).

Generalized coordinates ``q ∈ ℝⁿ`` with ``q̇ = v`` (vector-space joints: revolute, prismatic,
planar — the mobile manipulators' base), ``n − m`` linear velocity constraints ``A₂(q) q̇ = 0``
(dqdyn `Constraint` objects; ``Ȧ₂ q̇ = −b``) and a user choice of ``m``
independent quasi-velocities ``π̇ = A₁(q) q̇`` (218).  With ``A = [A₁; A₂]`` invertible and
``B = A⁻¹ = [B₁ B₂]`` (239)–(245):

* ``q̇ = B₁ π̇`` (245),  ``q̈ = B₁ π̈ − (B₁ Ȧ₁ + B₂ Ȧ₂) B₁ π̇`` (246);
* reduced equations (247)/(249): ``(B₁ᵀ H B₁) π̈ = B₁ᵀ [H (B₁ Ȧ₁ + B₂ Ȧ₂) B₁ π̇ + Q − h]``;
* multipliers (248) ``Λ = B₂ᵀ (H q̈ + h − Q)``, constraint force ``D = A₂ᵀ Λ`` (242) and the
  reactions in the quasi-coordinates (230)/(250) ``R = Bᵀ D`` (``R_k = 0`` for ``k <= m``);
* Theorem 5 (251)–(254) with the corrected ``g = A₂ H⁻¹ (Q − h) + Ȧ₂ q̇`` (erratum (253)): a force
  ``U`` keeps the motion on the constraints iff ``A₂ H⁻¹ U + g = 0``;
* Hamel's coefficients (231), summed over ``s, l`` (erratum): ``γ_kij = Σ_{s,l} b_sk b_lj
  (∂a_is/∂q_l − ∂a_il/∂q_s)``, and the Boltzmann–Hamel equations (233) ``B_k − P_k − R_k = 0`` with
  ``B_k = d/dt ∂T*/∂π̇_k − ∂T*/∂π_k + Σ_{i,j} γ_kij ∂T*/∂π̇_i π̇_j``, ``∂T*/∂π_k = Σ_s b_sk ∂T*/∂q_s``
  (`PseudoCoordinates.hamel_residual`).

Here ``H`` = dqdyn's mass matrix, ``h = C q̇ + g`` its nonlinear effects and ``Q = τ`` the applied
generalized force (so the paper's ``Q − h`` is dqdyn's ``τ − h``); the sign of ``D`` is dqdyn's
``M v̇ + h = τ + Aᵀ λ``, so ``Λ`` equals the multipliers of
`constrained_forward_dynamics` (Udwadia–Kalaba).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from dqdyn.constraints.base import as_constraint_list
from dqdyn.constraints.dynamics import constraint_terms
from dqdyn.errors import ModelError, ShapeError, SingularError
from dqdyn.multibody.joints import PLANAR
from dqdyn.multibody.model import Model


class HamelResult(NamedTuple):
    """Output of `PseudoCoordinates.forward_dynamics`."""

    pi_ddot: np.ndarray  #: (m,) pseudo-accelerations (249)
    qdd: np.ndarray  #: (n,) generalized accelerations (246)
    multipliers: np.ndarray  #: (n − m,) Λ (248)
    constraint_force: np.ndarray  #: (n,) D = A₂ᵀ Λ (242)
    reactions: np.ndarray  #: (n,) R = Bᵀ D (230)/(250): zero in the first m entries
    pi_dot: np.ndarray  #: (m,) the quasi-velocities used


_LAG = None


def _load_lagrange():
    global _LAG
    from dqdyn.dynamics.lagrange import mass_matrix, nonlinear_effects

    _LAG = (mass_matrix, nonlinear_effects)


def _fd4(f, x, d, h):
    """Fourth-order central difference of ``f`` at ``x`` along ``d``."""
    return (-f(x + 2 * h * d) + 8 * f(x + h * d) - 8 * f(x - h * d) + f(x - 2 * h * d)) / (12 * h)


class PseudoCoordinates:
    """Hamel / Boltzmann–Hamel dynamics of ``model`` under the velocity ``constraints`` with the
    quasi-velocities ``π̇ = A1(q) q̇`` (module docstring).

    ``A1``: an (m, n) array (constant choice) or a callable ``q -> (m, n)``; ``m = n − (number of
    constraint rows)``.  ``A1_dot``: optional callable ``(q, q̇) -> Ȧ₁`` (m, n); by default ``Ȧ₁ q̇``
    is a 4th-order central difference of ``A1`` along ``q̇`` (zero for a constant ``A1``).
    ``[A₁; A₂]`` must be invertible: a choice that is not raises SingularError naming ``A1``."""

    def __init__(self, model: Model, constraints, A1, *, A1_dot: Callable | None = None,
                 fd_step: float = 1e-3, cond_max: float = 1e10):
        if model.nq != model.nv or model.has_quaternion_joints:
            raise ModelError(f"model {model.name!r}: pseudo-coordinates need q̇ = v (vector-space joints); "
                             f"nq = {model.nq}, nv = {model.nv}")
        self.model = model
        self.constraints = as_constraint_list(constraints)
        self.n = model.nv
        self.k = sum(c.dim for c in self.constraints)
        self.m = self.n - self.k
        if callable(A1):
            self._A1 = A1
            self._const = False
        else:
            A1 = np.array(A1, dtype=float)
            self._A1 = lambda q, _A=A1: _A
            self._const = True
        self._A1_dot = A1_dot
        self.fd_step = float(fd_step)
        self.cond_max = float(cond_max)

    # ------------------------------------------------------------------ matrices
    def A1(self, q):
        A1 = np.asarray(self._A1(np.asarray(q, dtype=float)), dtype=float)
        if A1.shape != (self.m, self.n):
            raise ShapeError(f"A1 must be ({self.m}, {self.n}) (n − {self.k} constraint rows quasi-velocities); "
                             f"got {A1.shape}")
        return A1

    def A2(self, q, qd=None):
        """``(A₂, b)`` with ``A₂ q̈ = b = −Ȧ₂ q̇`` (the stacked constraints)."""
        q = np.asarray(q, dtype=float)
        qd = np.zeros(self.n) if qd is None else np.asarray(qd, dtype=float)
        return constraint_terms(self.model, q, qd, self.constraints)

    def A(self, q):
        """``A = [A₁; A₂]`` (n, n)."""
        return np.vstack([self.A1(q), self.A2(q)[0]])

    def B(self, q, A2=None):
        """``B = A⁻¹`` (n, n) and its blocks ``B₁`` (n, m), ``B₂`` (n, n − m) (239)–(245).

        SingularError naming ``A1`` when ``[A₁; A₂]`` is not invertible (condition number above
        ``cond_max``): the quasi-velocities are not independent of the constraints."""
        A = self.A(q) if A2 is None else np.vstack([self.A1(q), A2])
        cond = np.linalg.cond(A)
        if not np.isfinite(cond) or cond > self.cond_max:
            raise SingularError(f"A1 (the quasi-velocity choice) is not admissible: [A1; A2] is singular "
                                f"(condition number {cond:.3g}) — the rows of A1 must be independent of "
                                "each other and of the constraint rows A2")
        B = np.linalg.inv(A)
        return B, B[:, : self.m], B[:, self.m:]

    def A1dot_qd(self, q, qd):
        """``Ȧ₁ q̇`` (m,)."""
        if self._A1_dot is not None:
            return np.asarray(self._A1_dot(q, qd), dtype=float) @ qd
        if self._const:
            return np.zeros(self.m)
        nqd = np.linalg.norm(qd)
        if nqd == 0.0:
            return np.zeros(self.m)
        h = self.fd_step / nqd
        return _fd4(lambda x: self.A1(x) @ qd, q, qd, h)

    def dA_dq(self, q):
        """``∂a_is/∂q_l`` (n, n, n) (4th-order central differences)."""
        n = self.n
        out = np.empty((n, n, n))
        for l in range(n):
            e = np.zeros(n)
            e[l] = 1.0
            out[:, :, l] = _fd4(self.A, q, e, self.fd_step)
        return out

    def gamma(self, q):
        """Hamel's coefficients (231) ``γ_kij = Σ_{s,l} b_sk b_lj (∂a_is/∂q_l − ∂a_il/∂q_s)`` (n, n, n)."""
        B = self.B(q)[0]
        dA = self.dA_dq(q)
        return np.einsum("sk,lj,isl->kij", B, B, dA - dA.transpose(0, 2, 1))

    # ------------------------------------------------------------------ velocities
    def quasi_velocities(self, q, qd):
        """``π̇ = A₁ q̇`` (m,)."""
        return self.A1(q) @ np.asarray(qd, dtype=float)

    def velocities(self, q, pi_dot):
        """``q̇ = B₁ π̇`` (245) (n,) — satisfies the constraints by construction."""
        return self.B(q)[1] @ np.asarray(pi_dot, dtype=float)

    # ------------------------------------------------------------------ dynamics
    def _terms(self, q, qd):
        if _LAG is None:
            _load_lagrange()
        return _LAG[0](self.model, q), _LAG[1](self.model, q, qd)

    def reduced_equations(self, q, pi_dot, tau):
        """``(M*, r)`` with ``M* π̈ = r``: ``M* = B₁ᵀ H B₁`` and ``r = B₁ᵀ [H (B₁ Ȧ₁ + B₂ Ȧ₂) B₁ π̇ + Q − h]``
        (247)/(249); also returns the velocity-product term ``w = (B₁ Ȧ₁ + B₂ Ȧ₂) B₁ π̇`` of (246)."""
        q = np.asarray(q, dtype=float)
        pi_dot = np.asarray(pi_dot, dtype=float)
        if pi_dot.shape != (self.m,):
            raise ShapeError(f"pi_dot must have shape ({self.m},); got {pi_dot.shape}")
        A2q = self.A2(q)[0]  # the bundled constraints' A depends on q only
        _, B1, B2 = self.B(q, A2q)
        qd = B1 @ pi_dot
        H, h = self._terms(q, qd)
        A2, b = self.A2(q, qd)  # Ȧ₂ q̇ = −b
        w = B1 @ self.A1dot_qd(q, qd) - B2 @ b
        Ms = B1.T @ H @ B1
        r = B1.T @ (H @ w + np.asarray(tau, dtype=float) - h)
        return Ms, r, w, (H, h, B1, B2, qd, A2)

    def forward_dynamics(self, q, pi_dot, tau) -> HamelResult:
        """Pseudo-accelerations (249), ``q̈`` (246), multipliers (248), ``D`` (242) and reactions
        ``R`` (250) at ``(q, π̇)`` under the applied generalized force ``τ``."""
        tau = np.asarray(tau, dtype=float)
        if tau.shape != (self.n,):
            raise ShapeError(f"tau must have shape ({self.n},); got {tau.shape}")
        Ms, r, w, (H, h, B1, B2, _, A2) = self.reduced_equations(q, pi_dot, tau)
        try:
            L = np.linalg.cholesky(Ms)
        except np.linalg.LinAlgError:
            raise SingularError("B1ᵀ H B1 is not positive definite (a quasi-velocity moves no inertia)") from None
        pdd = np.linalg.solve(L.T, np.linalg.solve(L, r))
        qdd = B1 @ pdd - w
        lam = B2.T @ (H @ qdd + h - tau)
        D = A2.T @ lam
        return HamelResult(pdd, qdd, lam, D, np.concatenate([B1.T @ D, B2.T @ D]), np.asarray(pi_dot, dtype=float))

    def forward_dynamics_q(self, q, qd, tau) -> HamelResult:
        """`forward_dynamics` from a constraint-consistent ``(q, q̇)`` (``π̇ = A₁ q̇``)."""
        return self.forward_dynamics(q, self.quasi_velocities(q, qd), tau)

    def compatibility(self, q, qd, tau, U):
        """Theorem 5 (254), corrected (253): the residual ``A₂ H⁻¹ U + A₂ H⁻¹ (Q − h) + Ȧ₂ q̇`` (n − m,);
        zero iff the force ``U`` keeps ``H q̈ + h = Q + U`` on the constraints."""
        q = np.asarray(q, dtype=float)
        qd = np.asarray(qd, dtype=float)
        H, h = self._terms(q, qd)
        A2, b = self.A2(q, qd)
        return A2 @ np.linalg.solve(H, np.asarray(U, dtype=float)) + A2 @ np.linalg.solve(H, np.asarray(tau) - h) - b

    def hamel_residual(self, q, qd, qdd, tau):
        """Boltzmann–Hamel equations (233) with the γ-terms (231): ``B_k − P_k − R_k`` (n,) for a
        motion ``(q, q̇, q̈)``, with ``P = Bᵀ (τ − g)`` (applied + gravity forces), ``R = Bᵀ D`` and the
        constraint force ``D = H q̈ + h − τ``.  ``T*`` derivatives by 4th-order differences; zero (to
        the differences' accuracy) for any ``(q, q̇, q̈)`` — an identity that checks (231)."""
        from dqdyn.dynamics.lagrange import gravity, mass_matrix

        q, qd, qdd = (np.asarray(a, dtype=float) for a in (q, qd, qdd))
        tau = np.asarray(tau, dtype=float)
        hstep = self.fd_step
        Bfull = self.B(q)[0]
        A = self.A(q)
        pi = A @ qd  # full quasi-velocity vector (constraint components zero on the motion)

        def p_star(x, pdot):  # ∂T*/∂π̇ = Bᵀ H B π̇ at (x, π̇)
            Bx = np.linalg.inv(self.A(x))
            return Bx.T @ mass_matrix(self.model, x) @ Bx @ pdot

        def T_star(x, pdot):
            Bx = np.linalg.inv(self.A(x))
            v = Bx @ pdot
            return 0.5 * v @ mass_matrix(self.model, x) @ v

        # π̈ = d/dt (A q̇) = Ȧ q̇ + A q̈
        Adot_qd = _fd4(lambda x: self.A(x) @ qd, q, qd, hstep / max(np.linalg.norm(qd), 1e-300)) \
            if np.linalg.norm(qd) > 0 else np.zeros(self.n)
        pidd = Adot_qd + A @ qdd
        Bstar = Bfull.T @ mass_matrix(self.model, q) @ Bfull
        if np.linalg.norm(qd) > 0:
            dpdt = _fd4(lambda x: p_star(x, pi), q, qd, hstep / np.linalg.norm(qd)) + Bstar @ pidd
        else:
            dpdt = Bstar @ pidd
        dTdq = np.array([_fd4(lambda x: np.atleast_1d(T_star(x, pi)), q, e, hstep)[0] for e in np.eye(self.n)])
        dTdpi = Bfull.T @ dTdq
        gam = self.gamma(q)
        Bk = dpdt - dTdpi + np.einsum("kij,i,j->k", gam, p_star(q, pi), pi)
        H = mass_matrix(self.model, q)
        from dqdyn.dynamics.lagrange import nonlinear_effects

        D = H @ qdd + nonlinear_effects(self.model, q, qd) - tau
        P = Bfull.T @ (tau - gravity(self.model, q))
        R = Bfull.T @ D
        return Bk - P - R


# ----------------------------------------------------------------------------- standard choices
def diff_drive_quasi_velocities(model: Model, joint: str = "base_joint"):
    """The usual quasi-velocities of a differential-drive base on a planar joint: forward speed
    ``ẋ cos φ + ẏ sin φ`` and yaw rate ``φ̇`` of the base, plus every other joint rate.  Returns
    ``(A1, A1_dot)`` callables for `PseudoCoordinates` (one constraint row: m = n − 1)."""
    i = model.joint_index(joint)
    if int(model.joint_type[i]) != PLANAR:
        raise ModelError(f"joint {joint!r} must be a planar joint")
    sv = model.v_slice(joint)
    n = model.nv
    iq = model.q_slice(joint).start
    others = [j for j in range(n) if not (sv.start <= j < sv.stop)]

    def A1(q):
        phi = q[iq + 2]
        M = np.zeros((n - 1, n))
        M[0, sv.start], M[0, sv.start + 1] = np.cos(phi), np.sin(phi)
        M[1, sv.start + 2] = 1.0
        for r, j in enumerate(others):
            M[2 + r, j] = 1.0
        return M

    def A1_dot(q, qd):
        phi, phid = q[iq + 2], qd[sv.start + 2]
        M = np.zeros((n - 1, n))
        M[0, sv.start], M[0, sv.start + 1] = -np.sin(phi) * phid, np.cos(phi) * phid
        return M

    return A1, A1_dot


__all__ = ["PseudoCoordinates", "HamelResult", "diff_drive_quasi_velocities"]
