"""End-effector dynamics of a parallel robot with actuator inertia -- [MontgomerySmith2023, §11].

Model [MontgomerySmith2023, eqs. (91)–(94)].  A rigid end effector of mass ``m``, inertia ``M_e`` about its centre
of mass ``r₀`` (both in the moving frame), plus actuators with "effective no-load mass" ``M₀``
(``n × n``, eq. 92; e.g. reflected motor inertia, a multiple of the identity).  Kinetic energy
(93) ``e = ½ m |v + w × r₀|² + ½ w·M_e w + ½ ℓ̇·M₀ ℓ̇ = ½ φ·M φ`` with (94)

    M = 4 [[M_e − m S_{r₀}², m S_{r₀}], [−m S_{r₀}, m I]] + Λᵀ M₀ Λ         (β-coordinates)

and gravity potential ``v = −m g·(t + R r₀)`` whose Lie derivative is (Lemma 3, eqs. 170-172,
``m₀ = m``) ``L v = −2 m (r₀ × g + ε g)`` with ``g`` in the moving frame.

Equations of motion (Theorem 2, eqs. 157-160), all in β-coordinates:

    τ = μ₁ + μ₂ + M α,   μ₁ = (L_φ M) φ − ½ L(φ·M φ) + L v,   μ₂ = 2 (M φ) ⋉ φ,

with ``α = φ̇ = ½ ẇ + ½ ε v̇`` the component-wise derivative of the body twist and ``⋉`` the
adjoint product (154) ``(a + εb) ⋉ (c + εd) = c × a + d × b + ε c × b``.  For the model (94)
this evaluates in closed form (validation claim 19) to

    τ = 2 (M_r φ) ⋉ φ + M_r α + L v + Λᵀ M₀ ((L_φ Λ) φ + Λ α),   ((L_φΛ)φ)_k = φᵀ (L²ℓ_k) φ,

where the last bracket is ``ℓ̈`` and ``M₀ ℓ̈`` are the no-load forces (eqs. 98-99).  ``τ`` is the
wrench the actuators exert, ``τ = Λᵀ f`` (eq. 69), so ``f = M₀ ℓ̈ + f_p`` with ``Λᵀ f_p`` the
rigid-body wrench.  `theorem1_wrench` is the expanded form (95)-(97) with the two
sign correction below (``printed=True`` reproduces the printed, wrong-for-``r₀ ≠ 0`` form).

Public functions take and return dqdyn quantities: body twist ``[ω, v]``, its component-wise
derivative ``[ω̇, v̇]``, body wrench ``[f, τ]``; ``*_beta`` functions use the coordinates of [MontgomerySmith2023]
(``φ = ½[ω, v]``, ``τ_β = 2[q, p]``; see `lie`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from dqdyn import errors
from dqdyn.parallel import lie

__all__ = [
    "Platform",
    "adjoint_product",
    "rigid_mass_matrix",
    "mass_matrix",
    "kinetic_energy",
    "potential_energy",
    "lie_potential",
    "bias_beta",
    "theorem2_wrench",
    "theorem1_wrench",
    "end_effector_wrench",
    "InverseDynamicsResult",
    "inverse_dynamics",
    "forward_dynamics",
    "SimulationResult",
    "simulate",
]


def _skew(r):
    return np.array([[0.0, -r[2], r[1]], [r[2], 0.0, -r[0]], [-r[1], r[0], 0.0]])


@dataclass
class Platform:
    """Inertial parameters of the end effector and the actuators [MontgomerySmith2023, eqs. (92)–(94)].

    ``mass`` m; ``com`` r₀ in the end-effector frame; ``inertia`` M_e (3×3) about the centre of
    mass in end-effector axes; ``actuator_inertia`` M₀: scalar (× identity), (n,) diagonal or
    (n, n); ``gravity`` g in the world frame.
    """

    mass: float
    com: np.ndarray = field(default_factory=lambda: np.zeros(3))
    inertia: np.ndarray = field(default_factory=lambda: np.eye(3))
    actuator_inertia: object = 0.0
    gravity: np.ndarray = field(default_factory=lambda: np.array([0.0, 0.0, -9.81]))

    def __post_init__(self):
        self.mass = float(self.mass)
        self.com = np.asarray(self.com, dtype=float).reshape(3)
        self.inertia = np.asarray(self.inertia, dtype=float).reshape(3, 3)
        self.gravity = np.asarray(self.gravity, dtype=float).reshape(3)
        if not self.mass > 0:
            raise errors.ModelError("Platform.mass must be positive")
        if np.any(np.linalg.eigvalsh(0.5 * (self.inertia + self.inertia.T)) <= 0):
            raise errors.ModelError("Platform.inertia must be symmetric positive definite")

    def M0(self, n):
        """``M₀`` as an (n, n) matrix."""
        a = np.asarray(self.actuator_inertia, dtype=float)
        if a.ndim == 0:
            return float(a) * np.eye(n)
        if a.shape == (n,):
            return np.diag(a)
        if a.shape == (n, n):
            return a
        raise errors.ShapeError(f"actuator_inertia must be a scalar, ({n},) or ({n}, {n}); got {a.shape}")


# --------------------------------------------------------------------------- building blocks


def adjoint_product(a, b):
    """``α ⋉ β`` [MontgomerySmith2023, eq. (154)] in β-coordinates: ``(a, b) ⋉ (c, d) = (c×a + d×b, c×b)``."""
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    return np.concatenate([np.cross(b[..., :3], a[..., :3]) + np.cross(b[..., 3:], a[..., 3:]),
                           np.cross(b[..., :3], a[..., 3:])], axis=-1)


def rigid_mass_matrix(platform):
    """Rigid part of ``M`` [MontgomerySmith2023, eq. (94)]: ``4 [[M_e − m S², m S], [−m S, m I]]``, ``S = S_{r₀}``.

    Equals ``4 𝓘`` with 𝓘 the usual 6×6 spatial inertia at the frame origin."""
    m = platform.mass
    S = _skew(platform.com)
    return 4.0 * np.block([[platform.inertia - m * S @ S, m * S], [-m * S, m * np.eye(3)]])


def mass_matrix(robot, platform, eta, Lam=None):
    """``M(η) = M_rigid + Λᵀ M₀ Λ`` [MontgomerySmith2023, eq. (94)], β-coordinates (6×6)."""
    if Lam is None:
        Lam = robot.lie_jacobian(eta)
    return rigid_mass_matrix(platform) + Lam.T @ platform.M0(robot.n) @ Lam


def potential_energy(platform, eta):
    """``v = −m g·(t + R r₀)`` (gravity, world frame)."""
    R = lie.pose_rotation(eta)
    c = lie.pose_translation(eta) + R @ platform.com
    return -platform.mass * float(platform.gravity @ c)


def lie_potential(platform, eta):
    """``L v = −2 m (r₀ × g + ε g)``, ``g`` in the moving frame (Lemma 3, eq. 172; ``m₀ = m``)."""
    g = lie.direction_in_body(eta, platform.gravity)
    m = platform.mass
    return -2.0 * m * np.concatenate([np.cross(platform.com, g), g])


def kinetic_energy(robot, platform, eta, twist):
    """``½ φ·M φ`` with ``φ = ½[ω, v]`` ([MontgomerySmith2023, eqs. (91)], 94)."""
    phi = lie.twist_to_beta(twist)
    return 0.5 * float(phi @ mass_matrix(robot, platform, eta) @ phi)


def bias_beta(robot, platform, eta, phi, evaluated=None):
    """``μ = μ₁ + μ₂`` of Theorem 2 for the model (94) in closed form (β-coordinates):
    ``2 (M_r φ) ⋉ φ + L v + Λᵀ M₀ (L_φ Λ) φ``.  Returns ``(μ, Λ, (L_φΛ)φ)``."""
    if evaluated is None:
        _, Lam, H = robot.evaluate(eta, 2)
    else:
        Lam, H = evaluated
    Mr = rigid_mass_matrix(platform)
    quad = np.einsum("j,kji,i->k", phi, H, phi)  # ((L_φΛ)φ)_k = φᵀ L²ℓ_k φ
    mu = 2.0 * adjoint_product(Mr @ phi, phi) + lie_potential(platform, eta) + Lam.T @ (platform.M0(robot.n) @ quad)
    return mu, Lam, quad


def theorem2_wrench(eta, phi, alpha, M_fn, v_fn=None, *, h=1e-3):
    """Theorem 2 [MontgomerySmith2023, eqs. (157)–(160)] for any mass matrix ``M(η)`` and potential ``v(η)``,
    with numeric Lie derivatives (`lie.lie_derivative`); everything in β-coordinates:
    ``τ = (L_φM) φ − ½ L(φ·Mφ) + L v + 2 (Mφ) ⋉ φ + M α``."""
    phi = np.asarray(phi, dtype=float)
    alpha = np.asarray(alpha, dtype=float)
    M = np.asarray(M_fn(eta), dtype=float)
    dM = lie.lie_derivative(M_fn, eta, h=h)  # (6, 6, 6): [a, b, i] = L_i M_ab
    LphiM_phi = np.einsum("abi,i,b->a", dM, phi, phi)
    Lquad = lie.lie_derivative(lambda e: phi @ np.asarray(M_fn(e)) @ phi, eta, h=h)
    mu1 = LphiM_phi - 0.5 * Lquad
    if v_fn is not None:
        mu1 = mu1 + lie.lie_derivative(v_fn, eta, h=h)
    mu2 = 2.0 * adjoint_product(M @ phi, phi)
    return mu1 + mu2 + M @ alpha


def theorem1_wrench(platform, eta, twist, twist_dot, Lam=None, quad=None, M0=None, *, printed=False):
    """Theorem 1, the expanded equations (95)-(97), in β-coordinates ``τ = μ + M α``.

    ``printed=False`` applies the correction: the term ``(w·r₀)(w×r₀)`` enters with a minus sign and
    (97) gains ``−2 m r₀ × (r₀ × ẇ)``; ``printed=True`` is the formula as printed (correct only
    for ``r₀ = 0``).  The actuator terms ``Λᵀ M₀ ((L_φΛ)φ + Λα)`` are added when ``Lam``, ``quad``
    (``(L_φΛ)φ``) and ``M0`` are given.
    """
    tw = np.asarray(twist, dtype=float)
    td = np.asarray(twist_dot, dtype=float)
    w, v, wd, vd = tw[:3], tw[3:], td[:3], td[3:]
    m, r0, Me = platform.mass, platform.com, platform.inertia
    g = lie.direction_in_body(eta, platform.gravity)
    sgn = 1.0 if printed else -1.0
    prim = (2 * np.cross(w, Me @ w)
            + 2 * m * (sgn * (w @ r0) * np.cross(w, r0) + np.cross(r0, np.cross(w, v)))
            - 2 * m * np.cross(r0, g)
            + 2 * Me @ wd + 2 * m * np.cross(r0, vd))
    if not printed:
        prim = prim - 2 * m * np.cross(r0, np.cross(r0, wd))
    dual = (2 * m * np.cross(w, v) + 2 * m * np.cross(w, np.cross(w, r0)) - 2 * m * g
            + 2 * m * vd + 2 * m * np.cross(wd, r0))
    tau = np.concatenate([prim, dual])
    if Lam is not None:
        alpha = 0.5 * td
        tau = tau + Lam.T @ (M0 @ (quad + Lam @ alpha))
    return tau


def end_effector_wrench(robot, platform, eta, twist, twist_dot):
    """The actuator wrench ``τ_β = Λᵀ f`` required by Theorem 2 with ``M`` from (94) (closed form);
    β-coordinates.  ``twist`` = body ``[ω, v]``, ``twist_dot`` = its component-wise derivative."""
    phi = lie.twist_to_beta(twist)
    alpha = lie.twist_to_beta(twist_dot)
    mu, Lam, _ = bias_beta(robot, platform, eta, phi)
    return mu + mass_matrix(robot, platform, eta, Lam) @ alpha


@dataclass
class InverseDynamicsResult:
    """Inverse dynamics at one or many samples (leading axes)."""

    forces: np.ndarray  #: actuator forces f (..., n) (cables: tension = −f)
    wrench_beta: np.ndarray  #: τ_β = Λᵀ f (..., 6), coordinates (2q, 2p) of [MontgomerySmith2023]
    ell_ddot: np.ndarray  #: ℓ̈ = Λα + (L_φΛ)φ (..., n)
    noload_forces: np.ndarray  #: f₀ = M₀ ℓ̈ (eq. 99)

    @property
    def wrench(self):
        """The same wrench as dqdyn body ``[f, τ]``."""
        return lie.beta_to_wrench(self.wrench_beta)


def _inverse_one(robot, platform, eta, twist, twist_dot, distribution, t_min, name="eta"):
    phi = lie.twist_to_beta(twist)
    alpha = lie.twist_to_beta(twist_dot)
    _, Lam, H = robot.evaluate(eta, 2)
    Mr = rigid_mass_matrix(platform)
    tau_r = 2.0 * adjoint_product(Mr @ phi, phi) + Mr @ alpha + lie_potential(platform, eta)
    quad = np.einsum("j,kji,i->k", phi, H, phi)
    ldd = Lam @ alpha + quad
    f0 = platform.M0(robot.n) @ ldd
    robot._require_regular(Lam, name)
    if distribution == "tension":  # cables pull only: t = −f_p > t_min (also for n = 6 cables)
        try:
            fp = -robot.tensions(eta, lie.beta_to_wrench(tau_r), t_min=t_min)
        except errors.InfeasibleError as e:
            raise errors.InfeasibleError(f"{name}: {e}") from None
    elif robot.n == 6:
        fp = np.linalg.solve(Lam.T, tau_r)
    else:
        fp = np.linalg.pinv(Lam.T) @ tau_r
    f = fp + f0
    return f, Lam.T @ f, ldd, f0


def inverse_dynamics(robot, platform, eta, twist, twist_dot, *, distribution=None, t_min=0.0):
    """Actuator forces for a pose trajectory ([MontgomerySmith2023, Theorem 2] with (94); eqs. 98-99).

    ``eta`` (..., 8), ``twist`` (..., 6) body ``[ω, v]``, ``twist_dot`` (..., 6) its component-wise
    derivative.  ``f = M₀ ℓ̈ + f_p`` with ``Λᵀ f_p`` the rigid-body wrench.  ``distribution``:
    ``"min_norm"`` (default for legs) -- ``f_p`` solves ``Λᵀ f_p = τ`` (unique for ``n = 6``,
    minimum norm for ``n > 6``); ``"tension"`` (default for a `CableRobot`) -- the
    cables pull, ``−f_p`` is the tension distribution of
    `CableRobot.tension_distribution` with every tension above ``t_min`` (raises
    `InfeasibleError` naming the slack cables when no positive tensions
    exist).  A sample at a singular pose (``Λ`` rank deficient) raises
    `SingularError` naming it.
    """
    eta = lie._arr(eta, "eta", 8)
    twist = lie._arr(twist, "twist", 6)
    twist_dot = lie._arr(twist_dot, "twist_dot", 6)
    shape = np.broadcast_shapes(eta.shape[:-1], twist.shape[:-1], twist_dot.shape[:-1])
    E = np.broadcast_to(eta, shape + (8,)).reshape(-1, 8)
    T = np.broadcast_to(twist, shape + (6,)).reshape(-1, 6)
    D = np.broadcast_to(twist_dot, shape + (6,)).reshape(-1, 6)
    if distribution is None:
        distribution = "tension" if hasattr(robot, "tensions") else "min_norm"
    if distribution not in ("min_norm", "tension"):
        raise ValueError(f"distribution must be 'min_norm' or 'tension'; got {distribution!r}")
    if distribution == "tension" and not hasattr(robot, "tensions"):
        raise errors.ModelError(f"distribution='tension' needs a CableRobot; got {type(robot).__name__}")
    outs = [_inverse_one(robot, platform, E[k], T[k], D[k], distribution, t_min,
                         "eta" if not shape else f"eta[{', '.join(map(str, np.unravel_index(k, shape)))}]")
            for k in range(E.shape[0])]
    n = robot.n
    f = np.array([o[0] for o in outs]).reshape(shape + (n,))
    tb = np.array([o[1] for o in outs]).reshape(shape + (6,))
    ldd = np.array([o[2] for o in outs]).reshape(shape + (n,))
    f0 = np.array([o[3] for o in outs]).reshape(shape + (n,))
    return InverseDynamicsResult(f, tb, ldd, f0)


def forward_dynamics(robot, platform, eta, twist, forces):
    """Body acceleration ``[ω̇, v̇]`` (component-wise derivative of the body twist) produced by the
    actuator forces ``f``: ``α = M⁻¹ (Λᵀ f − μ)`` (Theorem 2), ``[ω̇, v̇] = 2α``."""
    eta = lie.normalize(lie._arr(eta, "eta", 8))
    phi = lie.twist_to_beta(lie._arr(twist, "twist", 6))
    f = np.asarray(forces, dtype=float)
    mu, Lam, _ = bias_beta(robot, platform, eta, phi)
    M = mass_matrix(robot, platform, eta, Lam)
    alpha = np.linalg.solve(M, Lam.T @ f - mu)
    return lie.beta_to_twist(alpha)


@dataclass
class SimulationResult:
    """A simulated motion and its work balance computed three ways [MontgomerySmith2023, §11.1]:

    ``work_wrench`` = ∫ τ·φ dt (twist · wrench on the end effector), ``work_actuators`` =
    ∫ Σ f ℓ̇ dt, and ``energy − energy[0]`` with ``energy`` = kinetic (93) + potential."""

    t: np.ndarray
    poses: np.ndarray
    twists: np.ndarray
    forces: np.ndarray
    lengths: np.ndarray
    work_wrench: np.ndarray
    work_actuators: np.ndarray
    kinetic: np.ndarray
    potential: np.ndarray

    @property
    def energy(self):
        return self.kinetic + self.potential

    @property
    def work_balance_error(self):
        """max over samples of the disagreement of the three work computations."""
        dE = self.energy - self.energy[0]
        return float(max(np.max(np.abs(self.work_wrench - self.work_actuators)),
                         np.max(np.abs(self.work_wrench - dE)),
                         np.max(np.abs(self.work_actuators - dE))))


def _constant_forces(f):
    """The actuator forces ``(t, eta, twist) -> f`` of a constant (n,) array ``f``."""

    def forces(t, eta, twist):
        return f

    return forces


def simulate(robot, platform, eta0, twist0, forces, t_span, *, t_eval=None, rtol=1e-12, atol=1e-13, method="DOP853"):
    """Simulate the end effector under actuator forces ``forces(t, eta, twist) -> (n,)`` (or a
    constant (n,) array) from pose ``eta0`` and body twist ``twist0`` (dqdyn ``[ω, v]``).

    The state ``(η, [ω, v], W₁, W₂)`` is integrated with ``scipy.integrate.solve_ivp``
    (``η̇ = η φ``, eq. 14; forward dynamics of Theorem 2); ``W₁ = ∫ τ·φ`` and ``W₂ = ∫ f·ℓ̇``
    ride along.  Returns a `SimulationResult` whose ``work_balance_error`` is the
    paper's check (§11.1).
    """
    from scipy.integrate import solve_ivp

    fn = forces if callable(forces) else _constant_forces(np.asarray(forces, dtype=float))
    y0 = np.concatenate([lie.normalize(lie._arr(eta0, "eta0", 8)), lie._arr(twist0, "twist0", 6), [0.0, 0.0]])

    def rhs(t, y):
        eta = lie.normalize(y[:8])
        xi = y[8:14]
        phi = 0.5 * xi
        f = np.asarray(fn(t, eta, xi), dtype=float)
        mu, Lam, _ = bias_beta(robot, platform, eta, phi)
        M = mass_matrix(robot, platform, eta, Lam)
        tau = Lam.T @ f
        alpha = np.linalg.solve(M, tau - mu)
        deta = lie.dq_mul(y[:8], lie.beta_to_dq(phi))
        return np.concatenate([deta, 2.0 * alpha, [tau @ phi, f @ (Lam @ phi)]])

    sol = solve_ivp(rhs, t_span, y0, method=method, rtol=rtol, atol=atol, t_eval=t_eval, dense_output=False)
    if not sol.success:
        raise errors.ConvergenceError(f"simulation failed: {sol.message}")
    Y = sol.y.T
    poses = lie.normalize(Y[:, :8])
    twists = Y[:, 8:14]
    fs = np.array([np.asarray(fn(t, e, x), dtype=float) for t, e, x in zip(sol.t, poses, twists)])
    lengths = robot.lengths(poses)
    ke = np.array([kinetic_energy(robot, platform, e, x) for e, x in zip(poses, twists)])
    pe = np.array([potential_energy(platform, e) for e in poses])
    return SimulationResult(sol.t, poses, twists, fs, lengths, Y[:, 14], Y[:, 15], ke, pe)
