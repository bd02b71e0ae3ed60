"""Gauss's principle of least constraint in dual quaternion form (dqGP), [Silva2022, §4].

This is the papers' route to the Euler–Lagrange matrices [Silva2022, §4, eqs. (31)–(61)]: every body contributes
through the body-frame twist Jacobian of its centre-of-mass frame ``F_{c_i}`` (body axes, origin at the CoM),

    ν_{c_i} = vec6 ξ_{0,c_i}^{c_i} = J_i v,                                       (33)
    a_{c_i} = vec6 ξ̇_{0,c_i}^{c_i} = J_i v̇ + J̇_i v,                                (34)

with rows ``[ω; v]`` (``J_i = [J_P; J_D]``), and the constant weight
``Ψ_i = blkdiag(Ī_i, m_i I₃)`` (eq. 38ff).  The model is

    M_GP = Σ J_iᵀ Ψ_i J_i                                                         (46)
    C_GP = Σ J_iᵀ (S̄(ω_i, Ψ_i) J_i + Ψ_i J̇_i),  S̄ = blkdiag(−S(Ī ω), m S(ω))      (47), (44)
    g_GP = −Σ J_{D,i}ᵀ vec3(Ad(r_0^{c_i}) m_i g)                                  (50), (51)

so that ``M_GP v̇ + C_GP v + g_GP = τ``.  ``S(u)`` is the cross-product matrix (``S(u) w = u ×
w``).  The paper's ``q̇, q̈`` are dqdyn's ``v, v̇`` (they coincide for every joint but the
spherical and free joints, whose ``v`` is a body (angular) velocity: a quasi-velocity, for which
every formula here holds unchanged — the Gibbs–Appell form with ``u = v``, eqs. 53–56).

``J_i`` is computed with dqdyn's compiled body-frame Jacobian of body ``i`` shifted to the CoM
(``J_D ← J_D − S(c_i) J_P``: the CoM velocity ``v + ω × c``), which equals the paper's
``2 Ī H⁺₈(x_0^{c_i}) J_{x_{c_i}^0}`` (eq. 33; checked in the tests); ``J̇_i`` is the exact time
derivative from `jacobian_time_derivative` (the paper leaves J̇ unspecified,
[Silva2022, §4.1]).  Everything is batched over leading axes of ``q`` / ``v`` with ``einsum``.

Skew-symmetry (Remark 4.1, eq. 52).  ``Ṁ_GP − 2 C_GP`` is skew-symmetric, but the paper's closed
form ``½Ṁ − C = −Σ Jᵀ S̄ J`` omits a term; the correct identity (the corrected form of
[Silva2022, §4.3, Remark 4.1]) is

    ½ Ṁ_GP − C_GP = −Σ Jᵀ S̄ J + ½ Σ (J̇ᵀ Ψ J − Jᵀ Ψ J̇),

both sums skew.  `remark41_paper` and `remark41_corrected` return the two right-hand
sides; `mass_matrix_derivative` returns ``Ṁ_GP = Σ (J̇ᵀΨJ + JᵀΨJ̇)``.

Which Coriolis matrix.  ``C`` is not unique: any ``C + K`` with ``K(q, v) v = 0`` has the same
``C v``.  The paper's ``C_GP`` (eq. 47) is one valid factorization (``Ṁ − 2C_GP`` skew), but it
is **not** the Christoffel-symbol matrix (``c_kj = Σ_i Γ_kji v_i``, the one
`coriolis_matrix` and Pinocchio return): it differs by ``Σ Jᵀ K_i J`` with
``K_i ν_i = 0`` (relative difference ~1e-3 on the bundled mobile manipulator).  Replacing S̄ by
the Levi-Civita term of the rigid body's left-invariant metric,

    S̄_LC(ν, Ψ) = ½ (Ψ ad_ν − ad_νᵀ Ψ − X(Ψ ν)),   X(μ) ν' ≜ ad_{ν'}ᵀ μ,
    ad_ν = [S(ω) 0; S(v) S(ω)],  X([n; f]) = [S(n) S(f); S(f) 0],

(skew, and ``S̄_LC ν = S̄ ν = −ad_νᵀ Ψ ν``, the gyroscopic wrench ``[ω × Īω; m ω × v]``) gives
``C_LC = Σ Jᵀ (S̄_LC J + Ψ J̇)``, which *is* the Christoffel matrix (to round-off; tested).
`coriolis_matrix_gp` returns either (``form="paper"`` | ``"christoffel"``).

Gibbs–Appell and Kane (eqs. 53–61): `gauss_function` is 𝒢 (eq. 38, with the joint torques
as a linear term), `appell_function` is the acceleration energy S (eq. 54),
`kane_forces` returns (φ, φ̄) (eq. 60).  Their gradients / differences coincide
(eq. 61): ``∂𝒢/∂v̇ = ∂S/∂v̇ − τ̄_GA = φ − φ̄ = M v̇ + C v + g − τ``.

Wrenches here follow the paper's ``ς̄ = [τ; f]`` ordering (eq. 49: the moment first, so that
``Jᵀ ς̄`` pairs with twist rows ``[ω; v]``); dqdyn's wrench vec6 elsewhere is ``[f, τ]``.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from dqdyn._engine.boundary import as_vector_batch, broadcast_batch
from dqdyn.algebra.rotations import matrix_from_quat
from dqdyn.errors import ShapeError
from dqdyn.kinematics.forward import com_poses
from dqdyn.kinematics.jacobians import jacobian_time_derivative, twist_jacobian
from dqdyn.multibody.model import Model


def skew(u: np.ndarray) -> np.ndarray:
    """``S(u)`` (..., 3, 3) with ``S(u) w = u × w``."""
    u = np.asarray(u, dtype=float)
    z = np.zeros(u.shape[:-1])
    return np.stack(
        [
            np.stack([z, -u[..., 2], u[..., 1]], -1),
            np.stack([u[..., 2], z, -u[..., 0]], -1),
            np.stack([-u[..., 1], u[..., 0], z], -1),
        ],
        -2,
    )


def psi(model: Model) -> np.ndarray:
    """``Ψ_i = blkdiag(Ī_i, m_i I₃)`` (nbodies, 6, 6) for bodies 1…n [Silva2022, eq. (38) ff.]."""
    nb = model.nbodies
    P = np.zeros((nb, 6, 6))
    P[:, :3, :3] = np.asarray(model.inertia)[1:]
    P[:, 3:, 3:] = np.asarray(model.mass)[1:, None, None] * np.eye(3)
    return P


def s_bar(omega: np.ndarray, Psi: np.ndarray) -> np.ndarray:
    """``S̄(ω, Ψ) = blkdiag(−S(s), m S(ω))``, ``s = Ī ω`` [Silva2022, eq. (44)]; skew by construction.

    ``omega`` (..., 3), ``Psi`` (..., 6, 6) broadcast together.
    """
    omega = np.asarray(omega, dtype=float)
    s = np.einsum("...ij,...j->...i", Psi[..., :3, :3], omega)
    m = Psi[..., 3, 3]
    out = np.zeros(np.broadcast_shapes(s.shape[:-1], m.shape) + (6, 6))
    out[..., :3, :3] = -skew(s)
    out[..., 3:, 3:] = m[..., None, None] * skew(omega)
    return out


def ad_matrix(nu: np.ndarray) -> np.ndarray:
    """``ad_ν`` (..., 6, 6) for twists ``ν = [ω; v]``: ``ad_ν ν' = [ω × ω'; ω × v' + v × ω']``."""
    nu = np.asarray(nu, dtype=float)
    Sw, Sv = skew(nu[..., :3]), skew(nu[..., 3:])
    out = np.zeros(nu.shape[:-1] + (6, 6))
    out[..., :3, :3] = Sw
    out[..., 3:, :3] = Sv
    out[..., 3:, 3:] = Sw
    return out


def s_bar_christoffel(nu: np.ndarray, Psi: np.ndarray) -> np.ndarray:
    """``S̄_LC(ν, Ψ) = ½ (Ψ ad_ν − ad_νᵀ Ψ − X(Ψ ν))`` (module doc; replaces eq. 44's S̄ to get
    the Christoffel-symbol Coriolis matrix).  ``nu`` (..., 6), ``Psi`` (..., 6, 6); skew, and
    ``S̄_LC ν = S̄(ω, Ψ) ν``."""
    nu = np.asarray(nu, dtype=float)
    ad = ad_matrix(nu)
    PA = np.einsum("...ij,...jk->...ik", Psi, ad)
    mu = np.einsum("...ij,...j->...i", Psi, nu)
    X = np.zeros(np.broadcast_shapes(PA.shape, mu.shape[:-1] + (6, 6)))
    Sn, Sf = skew(mu[..., :3]), skew(mu[..., 3:])
    X[..., :3, :3] = Sn
    X[..., :3, 3:] = Sf
    X[..., 3:, :3] = Sf
    return 0.5 * (PA - np.swapaxes(PA, -1, -2) - X)


def _states(model: Model, q, v):
    Q, bq = as_vector_batch(q, model.nq, "q", "the configuration, model.nq entries")
    if v is None:
        return Q, None, bq
    V, bv = as_vector_batch(v, model.nv, "v", "the velocity, model.nv entries")
    (Q, V), batch = broadcast_batch([Q, V], [bq, bv])
    return Q, V, batch


def _shift_to_com(model: Model, J: np.ndarray) -> np.ndarray:
    """Body-origin body-frame Jacobians (N, nb, 6, nv) → CoM-frame ones: ``J_D − S(c) J_P``."""
    c = np.asarray(model.com)[1:]  # (nb, 3)
    out = J.copy()
    out[..., 3:, :] -= np.einsum("bij,nbjk->nbik", skew(c), J[..., :3, :])
    return out


def com_twist_jacobians(model: Model, q) -> np.ndarray:
    """``J_i = J_{ξ_{0,c_i}^{c_i}}`` (..., nbodies, 6, nv): body-frame CoM twist Jacobians of
    bodies 1…n, rows ``[ω; v]`` ([Silva2022, eq. (33)]; body ``i`` is row ``i − 1``)."""
    Q, _, batch = _states(model, q, None)
    nb = model.nbodies
    J = np.empty((Q.shape[0], nb, 6, model.nv))
    for i in range(1, nb + 1):
        J[:, i - 1] = twist_jacobian(model, Q, i, frame="body")
    return _shift_to_com(model, J).reshape(batch + (nb, 6, model.nv))


def com_twist_jacobians_dot(model: Model, q, v) -> tuple[np.ndarray, np.ndarray]:
    """``(J_i, J̇_i)``, each (..., nbodies, 6, nv): the CoM twist Jacobians and their exact time
    derivatives along ``v`` (needed by eq. 34; the CoM offset is constant in body axes, so the
    shift commutes with d/dt)."""
    Q, V, batch = _states(model, q, v)
    nb = model.nbodies
    J = np.empty((Q.shape[0], nb, 6, model.nv))
    Jd = np.empty_like(J)
    for i in range(1, nb + 1):
        J[:, i - 1], Jd[:, i - 1] = jacobian_time_derivative(model, Q, V, i, frame="body")
    shape = batch + (nb, 6, model.nv)
    return _shift_to_com(model, J).reshape(shape), _shift_to_com(model, Jd).reshape(shape)


def com_twist_jacobians_paper(model: Model, q, *, h: float = 1e-6) -> np.ndarray:
    """[Silva2022, eq. (33)] literally: ``J̄ = 2 Ī H⁺₈(x_0^{c_i}) J_{x_{c_i}^0}`` with the CoM pose
    Jacobian ``J_x`` taken by central differences of `com_poses` along each
    velocity direction (a cross-check of `com_twist_jacobians`; one state, O(h²))."""
    from dqdyn.kinematics.configuration import integrate

    q = np.asarray(q, dtype=float)
    if q.shape != (model.nq,):
        raise ShapeError(f"q must have shape ({model.nq},), got {q.shape}")
    nb, nv = model.nbodies, model.nv
    x = com_poses(model, q)[1:]  # (nb, 8)
    Jx = np.empty((nb, 8, nv))
    for k in range(nv):
        e = np.zeros(nv)
        e[k] = h
        xp = com_poses(model, integrate(model, q, e))[1:]
        xm = com_poses(model, integrate(model, q, -e))[1:]
        Jx[:, :, k] = (xp - xm) / (2 * h)
    out = np.empty((nb, 6, nv))
    for i in range(nb):
        xc = x[i].copy()  # x_0^{c_i} = (x_{c_i}^0)*
        xc[1:4] *= -1
        xc[5:8] *= -1
        Hp = _hamilton_plus8(xc)
        full = 2.0 * Hp @ Jx[i]  # vec8 of the body twist (entries 0 and 4 vanish)
        out[i, :3] = full[1:4]
        out[i, 3:] = full[5:8]
    return out


def _hamilton_plus4(a):
    w, x, y, z = a
    return np.array([[w, -x, -y, -z], [x, w, -z, y], [y, z, w, -x], [z, -y, x, w]])


def _hamilton_plus8(h):
    """``H⁺₈(h)``: ``vec8(h g) = H⁺₈(h) vec8 g`` [Silva2022, §2]."""
    P, D = _hamilton_plus4(h[:4]), _hamilton_plus4(h[4:])
    out = np.zeros((8, 8))
    out[:4, :4] = P
    out[4:, :4] = D
    out[4:, 4:] = P
    return out


class GaussModel(NamedTuple):
    """dqGP terms at one state or a batch: ``M v̇ + C v + g = τ`` [Silva2022, eq. (51)]."""

    M: np.ndarray  # (..., nv, nv)  eq. 46
    C: np.ndarray  # (..., nv, nv)  eq. 47
    g: np.ndarray  # (..., nv)      eq. 50–51
    J: np.ndarray  # (..., nb, 6, nv) CoM twist Jacobians, eq. 33
    Jd: np.ndarray  # (..., nb, 6, nv) their time derivatives
    Sbar: np.ndarray  # (..., nb, 6, 6) S̄(ω_i, Ψ_i), eq. 44
    Psi: np.ndarray  # (nb, 6, 6)


def gravity_wrenches(model: Model, q) -> np.ndarray:
    """``ς̄_{g,i} = [0; Ad(r_0^{c_i}) m_i g]`` (..., nbodies, 6): gravity at each CoM, in F_{c_i},
    ordered ``[τ; f]`` [Silva2022, eq. (50)]."""
    Q, _, batch = _states(model, q, None)
    X = com_poses(model, Q)[:, 1:]  # (N, nb, 8)
    R = matrix_from_quat(X[..., :4])  # (N, nb, 3, 3): R_{c_i}^0
    fg = np.asarray(model.mass)[1:, None] * np.asarray(model.gravity)  # (nb, 3) in F_0
    out = np.zeros(X.shape[:-1] + (6,))
    out[..., 3:] = np.einsum("nbji,bj->nbi", R, fg)  # Rᵀ f_g
    return out.reshape(batch + (model.nbodies, 6))


def gauss_model(model: Model, q, v) -> GaussModel:
    """``M_GP, C_GP, g_GP`` [Silva2022, eqs. (46), (47), (50)–(51)] with the pieces they are built from."""
    Q, V, batch = _states(model, q, v)
    J, Jd = com_twist_jacobians_dot(model, Q, V)  # (N, nb, 6, nv)
    P = psi(model)
    nu = np.einsum("nbij,nj->nbi", J, V)
    Sb = s_bar(nu[..., :3], P[None])
    PJ = np.einsum("bij,nbjk->nbik", P, J)
    M = np.einsum("nbji,nbjk->nik", J, PJ)
    C = np.einsum("nbji,nbjk->nik", J, np.einsum("nbij,nbjk->nbik", Sb, J)
                  + np.einsum("bij,nbjk->nbik", P, Jd))
    tau_g = np.einsum("nbji,nbj->ni", J, gravity_wrenches(model, Q))
    nv, nb = model.nv, model.nbodies
    M = 0.5 * (M + np.swapaxes(M, -1, -2)) + np.diag(model.armature)  # (the rotors' inertia)
    return GaussModel(
        M.reshape(batch + (nv, nv)),
        C.reshape(batch + (nv, nv)),
        (-tau_g).reshape(batch + (nv,)),
        J.reshape(batch + (nb, 6, nv)),
        Jd.reshape(batch + (nb, 6, nv)),
        Sb.reshape(batch + (nb, 6, 6)),
        P,
    )


def mass_matrix_gp(model: Model, q) -> np.ndarray:
    """``M_GP = Σ J_iᵀ Ψ_i J_i`` (..., nv, nv) [Silva2022, eq. (46)]."""
    J = com_twist_jacobians(model, q)
    M = np.einsum("...bji,bjk,...bkl->...il", J, psi(model), J)
    return 0.5 * (M + np.swapaxes(M, -1, -2)) + np.diag(model.armature)  # (the rotors' inertia)


def coriolis_matrix_gp(model: Model, q, v, *, form: str = "paper") -> np.ndarray:
    """``C = Σ J_iᵀ (S̄ J_i + Ψ_i J̇_i)`` (..., nv, nv).

    ``form="paper"``: S̄ of [Silva2022, eq. (44)], i.e. ``C_GP`` of eq. 47 (a valid factorization, not
    the Christoffel one); ``form="christoffel"``: S̄_LC of the module doc, which equals the
    Christoffel-symbol matrix `coriolis_matrix`.  Both give the same ``C v``."""
    if form == "paper":
        return gauss_model(model, q, v).C
    if form != "christoffel":
        raise ShapeError(f"form must be 'paper' or 'christoffel', got {form!r}")
    Q, V, batch = _states(model, q, v)
    J, Jd = com_twist_jacobians_dot(model, Q, V)
    P = psi(model)
    nu = np.einsum("nbij,nj->nbi", J, V)
    S = s_bar_christoffel(nu, P[None])
    C = np.einsum("nbji,nbjk->nik", J, np.einsum("nbij,nbjk->nbik", S, J)
                  + np.einsum("bij,nbjk->nbik", P, Jd))
    return C.reshape(batch + (model.nv, model.nv))


def gravity_gp(model: Model, q) -> np.ndarray:
    """``g_GP = −Σ J_{D,i}ᵀ vec3(Ad(r_0^{c_i}) m_i g)`` (..., nv) [Silva2022, eqs. (50)–(51)]."""
    J = com_twist_jacobians(model, q)
    return -np.einsum("...bji,...bj->...i", J, gravity_wrenches(model, q))


def mass_matrix_derivative(model: Model, q, v) -> np.ndarray:
    """``Ṁ_GP = Σ (J̇ᵀ Ψ J + Jᵀ Ψ J̇)`` (..., nv, nv) along the velocity ``v`` (Ψ is constant)."""
    J, Jd = com_twist_jacobians_dot(model, q, v)
    A = np.einsum("...bji,bjk,...bkl->...il", Jd, psi(model), J)
    return A + np.swapaxes(A, -1, -2)


def remark41_paper(model: Model, q, v) -> np.ndarray:
    """The paper's printed closed form of ``½Ṁ_GP − C_GP``: ``−Σ Jᵀ S̄ J`` (eq. 52).

    Skew-symmetric, but **not** equal to ``½Ṁ_GP − C_GP`` in general (erratum: it omits
    ``½ Σ (J̇ᵀΨJ − JᵀΨJ̇)``); see `remark41_corrected`."""
    G = gauss_model(model, q, v)
    return -np.einsum("...bji,...bjk,...bkl->...il", G.J, G.Sbar, G.J)


def remark41_corrected(model: Model, q, v) -> np.ndarray:
    """``½Ṁ_GP − C_GP = −Σ Jᵀ S̄ J + ½ Σ (J̇ᵀ Ψ J − Jᵀ Ψ J̇)`` (the corrected form of [Silva2022, Remark 4.1]): both sums skew."""
    G = gauss_model(model, q, v)
    A = np.einsum("...bji,bjk,...bkl->...il", G.Jd, G.Psi, G.J)
    return -np.einsum("...bji,...bjk,...bkl->...il", G.J, G.Sbar, G.J) + 0.5 * (
        A - np.swapaxes(A, -1, -2)
    )


# ----------------------------------------------------------------------------- Gauss / Appell / Kane
def _one_state(model, q, v, a, tau):
    q = np.asarray(q, dtype=float)
    v = np.asarray(v, dtype=float)
    a = np.asarray(a, dtype=float)
    for name, x, n in (("q", q, model.nq), ("v", v, model.nv), ("a", a, model.nv)):
        if x.shape != (n,):
            raise ShapeError(f"{name} must have shape ({n},), got {x.shape}")
    tau = np.zeros(model.nv) if tau is None else np.asarray(tau, dtype=float)
    if tau.shape != (model.nv,):
        raise ShapeError(f"tau must have shape ({model.nv},), got {tau.shape}")
    return q, v, a, tau


def _kinematics(model, q, v, a):
    J, Jd = com_twist_jacobians_dot(model, q, v)
    P = psi(model)
    nu = J @ v  # (nb, 6)
    acc = J @ a + Jd @ v  # eq. 34
    Sb = s_bar(nu[:, :3], P)
    return J, P, nu, acc, Sb


def unconstrained_accelerations(model: Model, q, v) -> np.ndarray:
    """``ā_{c_i}`` (nbodies, 6) [Silva2022, eq. (37)]: each body's acceleration if it were free,
    under gravity alone: ``Ψ ā = ς̄_g − S̄ ν`` (Euler eq. 42 and Newton), ``ā = Ψ⁺ (ς̄_g − S̄ ν)``
    (the pseudo-inverse only matters for massless bodies, whose terms vanish)."""
    J, P, nu, _, Sb = _kinematics(model, q, v, np.zeros(model.nv))
    rhs = gravity_wrenches(model, q) - np.einsum("bij,bj->bi", Sb, nu)
    return np.einsum("bij,bj->bi", np.linalg.pinv(P, hermitian=True), rhs)


def gauss_function(model: Model, q, v, a, tau=None) -> float:
    """Gauss's function [Silva2022, eqs. (31), (38)]: ``𝒢 = Σ ½ (a_i − ā_i)ᵀ Ψ_i (a_i − ā_i) − τᵀ v̇``.

    ``a_i = J_i v̇ + J̇_i v`` (eq. 34), ``ā_i`` from `unconstrained_accelerations`; the
    generalized joint forces ``τ`` (which the paper adds as τ_GP after eq. 48) enter linearly.
    Its minimizer over ``v̇`` is the forward dynamics; with constraints ``A v̇ = b`` the
    constrained minimizer is the Udwadia–Kalaba solution."""
    q, v, a, tau = _one_state(model, q, v, a, tau)
    _, P, _, acc, _ = _kinematics(model, q, v, a)
    d = acc - unconstrained_accelerations(model, q, v)
    rotors = 0.5 * float(a @ (model.armature * a))  # (a rotor's own acceleration energy)
    return float(0.5 * np.einsum("bi,bij,bj->", d, P, d) - tau @ a) + rotors


def appell_function(model: Model, q, v, a) -> float:
    """The Gibbs–Appell acceleration energy [Silva2022, eq. (54)]: ``S = Σ (½ aᵀΨa + aᵀ S̄ ν)``."""
    q, v, a, _ = _one_state(model, q, v, a, None)
    _, P, nu, acc, Sb = _kinematics(model, q, v, a)
    return float(0.5 * np.einsum("bi,bij,bj->", acc, P, acc) + np.einsum("bi,bij,bj->", acc, Sb, nu)
                 + 0.5 * a @ (model.armature * a))  # (+ the rotors')


def appell_forces(model: Model, q, tau=None) -> np.ndarray:
    """``τ̄_GA = Σ (∂ν_i/∂u)ᵀ ς̄_i + τ = Σ J_iᵀ ς̄_{g,i} + τ`` with ``u = v`` [Silva2022, eqs. (53), (56)]."""
    tau = np.zeros(model.nv) if tau is None else np.asarray(tau, dtype=float)
    J = com_twist_jacobians(model, q)
    return np.einsum("bji,bj->i", J, gravity_wrenches(model, q)) + tau


def kane_forces(model: Model, q, v, a, tau=None) -> tuple[np.ndarray, np.ndarray]:
    """Kane's generalized inertia and active forces [Silva2022, eqs. (57)–(60)]:
    ``φ = Σ J_iᵀ κ_i`` with ``κ_i = Ψ_i a_i + S̄_i ν_i`` (eq. 59), ``φ̄ = Σ J_iᵀ ς̄_i + τ``."""
    q, v, a, tau = _one_state(model, q, v, a, tau)
    J, P, nu, acc, Sb = _kinematics(model, q, v, a)
    kappa = np.einsum("bij,bj->bi", P, acc) + np.einsum("bij,bj->bi", Sb, nu)
    phi = np.einsum("bji,bj->i", J, kappa) + model.armature * a  # (+ the rotors')
    phibar = np.einsum("bji,bj->i", J, gravity_wrenches(model, q)) + tau
    return phi, phibar


def quadratic_gradient(f, a: np.ndarray, h: float = 1.0) -> np.ndarray:
    """Gradient of a function that is quadratic in ``a`` by central differences (exact up to
    round-off for a quadratic: used to take ∂𝒢/∂v̇ and ∂S/∂v̇ without hand derivation)."""
    a = np.asarray(a, dtype=float)
    g = np.empty_like(a)
    for k in range(a.size):
        e = np.zeros_like(a)
        e[k] = h
        g[k] = (f(a + e) - f(a - e)) / (2 * h)
    return g


def gauss_forward_dynamics(model: Model, q, v, tau) -> np.ndarray:
    """``v̇`` minimizing Gauss's function: ``M_GP v̇ = τ − C_GP v − g_GP`` [Silva2022, eq. (45)]."""
    G = gauss_model(model, q, v)
    rhs = np.asarray(tau, dtype=float) - np.einsum("...ij,...j->...i", G.C, np.asarray(v, float)) - G.g
    return np.linalg.solve(G.M, rhs[..., None])[..., 0]


__all__ = [
    "GaussModel",
    "gauss_model",
    "com_twist_jacobians",
    "com_twist_jacobians_dot",
    "com_twist_jacobians_paper",
    "psi",
    "s_bar",
    "s_bar_christoffel",
    "ad_matrix",
    "skew",
    "gravity_wrenches",
    "mass_matrix_gp",
    "coriolis_matrix_gp",
    "gravity_gp",
    "mass_matrix_derivative",
    "remark41_paper",
    "remark41_corrected",
    "unconstrained_accelerations",
    "gauss_function",
    "appell_function",
    "appell_forces",
    "kane_forces",
    "quadratic_gradient",
    "gauss_forward_dynamics",
]
