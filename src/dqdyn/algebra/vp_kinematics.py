"""Vector-parameter kinematics of rotations and serial chains ([Mladenova, §2.5–2.6, §3,
§4.1–4.2, §5.5.2]; validation claims 4, 6–8, 10–12, 14, 18 of ``tests/claims/test_mladenova_claims.py``).

Conversions [Mladenova, §2.5]:

* Euler ZXZ ``O = R_z(ψ) R_x(ϑ) R_z(φ)``: ``c = (t cos d / cos s, t sin d / cos s, tan s)`` with
  ``t = tan(ϑ/2)``, ``d = (ψ − φ)/2``, ``s = (ψ + φ)/2`` (the printed (71) is ``R_z(φ) R_x(−ϑ)
  R_z(ψ)`` and its printed inverse does not invert it: erratum; `vp_from_euler_printed`
  reproduces (71) literally);
* Bryant ``O = R_z(φ₃) R_y(φ₂) R_x(φ₁)``: ``c = ⟨c₃, ⟨c₂, c₁⟩⟩ = (a − bg, b + ag, g − ab)/(1 + abg)``
  (73)–(74), ``a, b, g = tan(φ₁,₂,₃/2)``;
* DH link rotation: modified ``R_x(α) R_z(ϑ)`` ↔ ``c = (tan α/2, −tan α/2 tan ϑ/2, tan ϑ/2) =
  ⟨c_α, c_ϑ⟩`` (312); standard ``R_z(ϑ) R_x(α)`` ↔ ``⟨c_ϑ, c_α⟩ = (tan α/2, tan α/2 tan ϑ/2, tan ϑ/2)``.

Kinematics: Theorem 1 (TSO(3) product), the chain angular-velocity Jacobian (114)–(117) with the
corrected ``N(c) = 2/(1 + c²)(I + c^×)`` (erratum (117)) and ``N_CV`` (122)–(125), the screw axis
and pitch of a displacement (141)–(143) with the corrected denominator, the dual Jacobian of
joint Plücker lines (157)–(163), and ``Exp(tA) = O diag(e^{μt}) Oᵀ`` (204).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from dqdyn import errors
from dqdyn.algebra.dualquat import _arr, _cross3, _dot
from dqdyn.algebra.inertia import skew
from dqdyn.algebra.vector_parameter import matrix_from_vp, vp_compose


# --------------------------------------------------------------------------- conversions
def vp_from_euler(psi, theta, phi):
    """``c`` (..., 3) of ``R_z(ψ) R_x(ϑ) R_z(φ)`` (the corrected form of [Mladenova, eq. (71)])."""
    psi, theta, phi = np.broadcast_arrays(*(np.asarray(a, dtype=float) for a in (psi, theta, phi)))
    t = np.tan(0.5 * theta)
    d = 0.5 * (psi - phi)
    s = 0.5 * (psi + phi)
    cs = np.cos(s)
    if np.any(np.abs(cs) < 1e-300):
        raise errors.SingularError("psi + phi = π: the rotation is a half-turn (no finite vector-parameter)")
    return np.stack([t * np.cos(d) / cs, t * np.sin(d) / cs, np.tan(s)], axis=-1)


def euler_from_vp(c):
    """Inverse of `vp_from_euler`: ``(ψ, ϑ, φ)`` with ``ϑ ∈ [0, π)`` (``s = atan c₃``,
    ``t = cos s |(c₁, c₂)|``, ``d = atan2(c₂, c₁)``, ``ψ = s + d``, ``φ = s − d``)."""
    c = _arr(c, "c", 3)
    s = np.arctan(c[..., 2])
    t = np.cos(s) * np.hypot(c[..., 0], c[..., 1])
    d = np.arctan2(c[..., 1], c[..., 0])
    return s + d, 2.0 * np.arctan(t), s - d


def vp_from_euler_printed(psi, theta, phi):
    """[Mladenova, eq. (71)] as printed: equals ``R_z(φ) R_x(−ϑ) R_z(ψ)``, not the ZXZ rotation (⚠️)."""
    psi, theta, phi = np.broadcast_arrays(*(np.asarray(a, dtype=float) for a in (psi, theta, phi)))
    t = np.tan(0.5 * theta)
    cs = np.cos(0.5 * (psi + phi))
    return np.stack([-t * np.cos(0.5 * (psi - phi)) / cs, t * np.sin(0.5 * (psi - phi)) / cs,
                     np.tan(0.5 * (phi + psi))], axis=-1)


def vp_from_bryant(phi1, phi2, phi3):
    """[Mladenova, eqs. (73)–(74)]: ``c`` of ``R_z(φ₃) R_y(φ₂) R_x(φ₁)``,
    ``(a − bg, b + ag, g − ab)/(1 + abg)``."""
    a, b, g = (np.tan(0.5 * np.asarray(p, dtype=float)) for p in (phi1, phi2, phi3))
    a, b, g = np.broadcast_arrays(a, b, g)
    den = 1.0 + a * b * g
    if np.any(np.abs(den) < 1e-300):
        raise errors.SingularError("1 + abg = 0: the Bryant rotation is a half-turn")
    return np.stack([a - b * g, b + a * g, g - a * b], axis=-1) / den[..., None]


def bryant_from_vp(c):
    """Inverse of `vp_from_bryant`: ``(φ₁, φ₂, φ₃)`` (roll, pitch, yaw; ``φ₂ ∈ [−π/2, π/2]``)."""
    O = matrix_from_vp(c)
    phi2 = np.arcsin(np.clip(-O[..., 2, 0], -1.0, 1.0))
    phi1 = np.arctan2(O[..., 2, 1], O[..., 2, 2])
    phi3 = np.arctan2(O[..., 1, 0], O[..., 0, 0])
    return phi1, phi2, phi3


def vp_from_dh(alpha, theta, convention: str = "modified"):
    """Rotation part of a DH link as a vector-parameter [Mladenova, eq. (312)].

    ``"modified"``: ``R_x(α) R_z(ϑ)`` → ``(tan α/2, −tan α/2 tan ϑ/2, tan ϑ/2)`` (312);
    ``"standard"``: ``R_z(ϑ) R_x(α)`` → ``(tan α/2, tan α/2 tan ϑ/2, tan ϑ/2)``."""
    ta = np.tan(0.5 * np.asarray(alpha, dtype=float))
    tt = np.tan(0.5 * np.asarray(theta, dtype=float))
    ta, tt = np.broadcast_arrays(ta, tt)
    if convention == "modified":
        return np.stack([ta, -ta * tt, tt], axis=-1)
    if convention == "standard":
        return np.stack([ta, ta * tt, tt], axis=-1)
    raise errors.DqdynError(f"convention must be 'modified' or 'standard'; got {convention!r}")


def dh_from_vp(c, convention: str = "modified", *, tol: float = 1e-9):
    """``(α, ϑ)`` of a DH link rotation from its vector-parameter (inverse of `vp_from_dh`).

    Raises ShapeError naming ``c`` when ``c`` is not of the DH form (``c₂ = ∓c₁ c₃``)."""
    c = _arr(c, "c", 3)
    sgn = -1.0 if convention == "modified" else 1.0
    if convention not in ("modified", "standard"):
        raise errors.DqdynError(f"convention must be 'modified' or 'standard'; got {convention!r}")
    if np.any(np.abs(c[..., 1] - sgn * c[..., 0] * c[..., 2]) > tol * (1.0 + np.abs(c[..., 1]))):
        raise errors.ShapeError(f"c is not the vector-parameter of a {convention} DH rotation "
                                f"(needs c₂ = {'−' if sgn < 0 else ''}c₁ c₃)")
    return 2.0 * np.arctan(c[..., 0]), 2.0 * np.arctan(c[..., 2])


def vp_rotate(c, v):
    """``O(c) v`` (naturality: ``O(c) O(c') O(c)ᵀ = O(O(c) c')``, [Mladenova, §2.4])."""
    return np.einsum("...ij,...j->...i", matrix_from_vp(c), _arr(v, "v", 3))


# --------------------------------------------------------------------------- Theorem 1
def tso3_compose(c1, omega1, c2, omega2):
    """[Mladenova, §2.6, Theorem 1]: ``(c₁, ω₁)(c₂, ω₂) = (⟨c₁, c₂⟩, ω₁ + O(c₁) ω₂)`` — spatial angular
    velocity of ``O₁ O₂`` (``Ω₃ = Ω₁ + O₁ Ω₂ O₁ᵀ``)."""
    return vp_compose(c1, c2), _arr(omega1, "omega1", 3) + vp_rotate(c1, omega2)


# --------------------------------------------------------------------------- chain Jacobian
def N_matrix(c):
    """``N(c) = 2/(1 + c²) (I + c^×)`` (..., 3, 3): ``ω = N(c) ċ`` (the corrected form of
    [Mladenova, eq. (117)]: the printed factor 1/(1 + c²) is wrong)."""
    c = _arr(c, "c", 3)
    return 2.0 / (1.0 + _dot(c, c))[..., None, None] * (np.eye(3) + skew(c))


def _chain(cs):
    cs = _arr(cs, "cs", 3)
    if cs.ndim != 2:
        raise errors.ShapeError(f"cs must have shape (n, 3) (one vector-parameter per joint); got {cs.shape}")
    g = [np.zeros(3)]
    for k in range(cs.shape[0]):
        g.append(vp_compose(g[-1], cs[k]))
    return cs, np.array(g)


def chain_angular_jacobian(cs):
    """``N_V`` (3, 3n) of [Mladenova, eqs. (114)–(117)]: ``ω_EE = Σ_k O(g_{k−1}) N(c_k) ċ_k`` with
    ``g_{k−1} = ⟨c₁, …, c_{k−1}⟩`` (spatial angular velocity of ``O(c₁)…O(c_n)``)."""
    cs, g = _chain(cs)
    return np.concatenate([matrix_from_vp(g[k]) @ N_matrix(cs[k]) for k in range(cs.shape[0])], axis=1)


def chain_vp_jacobian(cs):
    """``N_CV`` (3, 3n) of [Mladenova, eqs. (122)–(125)]: ``ċ' = Σ_k N_CV^k ċ_k`` for ``c' = ⟨c₁, …, c_n⟩``,
    ``N_CV^k = [O(⟨−c_n, …, −c_k⟩) N(c_k) + N_V^k]/(1 + tr O(c'))`` (with the corrected ``N``)."""
    cs, g = _chain(cs)
    n = cs.shape[0]
    cp = g[-1]
    den = 1.0 + np.trace(matrix_from_vp(cp))
    blocks = []
    for k in range(n):
        tail = np.zeros(3)  # ⟨−c_n, …, −c_k⟩
        for j in range(n - 1, k - 1, -1):
            tail = vp_compose(tail, -cs[j])
        Nk = N_matrix(cs[k])
        blocks.append((matrix_from_vp(tail) @ Nk + matrix_from_vp(g[k]) @ Nk) / den)
    return np.concatenate(blocks, axis=1)


def joint_vp_rate(q, axes, qd):
    """``ċ_k = ½ (1 + c_k²) e_k q̇_k`` for ``c_k = tan(q_k/2) e_k`` [Mladenova, eq. (113)] → (n, 3)."""
    q = np.asarray(q, dtype=float)
    e = _arr(axes, "axes", 3)
    t = np.tan(0.5 * q)
    return (0.5 * (1.0 + t * t) * np.asarray(qd, dtype=float))[:, None] * e


# --------------------------------------------------------------------------- screws
class VPScrew(NamedTuple):
    direction: np.ndarray  #: c/|c| (the screw axis direction; L = 2c)
    translation: np.ndarray  #: ν = c·p/c² (times c: the slide along the axis is ν c)
    moment: np.ndarray  #: L' = c × p − p + ν c  (= 2 c × r₀, r₀ a point of the axis)
    point: np.ndarray  #: r₀, the point of the axis closest to the origin


def vp_screw(c, p):
    """Screw axis of the displacement ``r ↦ O(c) r + p`` ([Mladenova, eq. (141)], moment sign ``L × r``).

    ``ν c`` is the slide along the axis; ``L' = c × p − p + ν c = 2 c × r₀``, so the axis point
    closest to the origin is ``r₀ = (L' × c)/(2 c²)``.
    SingularError for ``c = 0`` (a pure translation has no axis)."""
    c = _arr(c, "c", 3)
    p = _arr(p, "p", 3)
    c2 = _dot(c, c)
    if np.any(c2 <= 1e-300):
        raise errors.SingularError("c = 0: a pure translation has no screw axis")
    nu = _dot(c, p) / c2
    L1 = _cross3(c, p) - p + nu[..., None] * c
    r0 = _cross3(L1, c) / (2.0 * c2)[..., None]
    return VPScrew(c / np.sqrt(c2)[..., None], nu, L1, r0)


def vp_velocity_pitch(c, c_dot, p_dot):
    """Pitch of the velocity screw, the corrected form of [Mladenova, eq. (143)]: ``σ = ω·ṗ/ω² =
    (1 + c²)/2 · ((c × ċ + ċ)·ṗ) / (c² ċ² − (c·ċ)² + ċ²)`` (the print has ``p`` and lacks ``+ ċ²``)."""
    c = _arr(c, "c", 3)
    cd = _arr(c_dot, "c_dot", 3)
    pd = _arr(p_dot, "p_dot", 3)
    w = _cross3(c, cd) + cd
    den = _dot(c, c) * _dot(cd, cd) - _dot(c, cd) ** 2 + _dot(cd, cd)
    if np.any(den <= 1e-300):
        raise errors.SingularError("ċ = 0: no rotation, the pitch is infinite")
    return 0.5 * (1.0 + _dot(c, c)) * _dot(w, pd) / den


# --------------------------------------------------------------------------- dual Jacobian
def dh_dual_jacobian(dh, q, joint_types=None, convention: str = "standard"):
    """Dual Jacobian of a DH chain [Mladenova, eqs. (157)–(163)]: the joint axes as Plücker lines
    ``K̂_i = K_i + μ K*_i`` (unit direction ``K_i``, moment ``K*_i = p_i × K_i`` about the base origin)
    and the real 6 × 2n map of (163), ``[ω; ω*] = [[K, 0], [K*, K]] [ϑ̇; ḋ]`` (``ω*`` the velocity
    of the body point at the base origin — the spatial twist in Plücker coordinates).

    ``dh`` (n, 4) rows ``(θ, d, a, α)`` (offsets; dqdyn's `serial_from_dh`
    layout), ``q`` (n,), ``joint_types`` a string of ``"R"``/``"P"`` (default all revolute).  The
    link transforms are composed as dual vector-parameters ``⟨ĉ_ϑ, ĉ_α⟩`` of dual angles
    ``ϑ̂ = ϑ + μ d``, ``α̂ = α + μ a`` (153)–(156) — for the standard convention.
    Returns ``(lines (n, 6) = [K_i, K*_i], J (6, 2n))``."""
    from dqdyn.algebra.dualquat import Ad6
    from dqdyn.algebra.vector_parameter import dual_vp_compose, pose_from_dual_vp

    dh = np.asarray(dh, dtype=float)
    q = np.asarray(q, dtype=float)
    n = dh.shape[0]
    if dh.shape != (n, 4) or q.shape != (n,):
        raise errors.ShapeError(f"dh must be (n, 4) and q (n,); got {dh.shape}, {q.shape}")
    jt = "R" * n if joint_types is None else joint_types
    if convention != "standard":
        raise errors.DqdynError("dh_dual_jacobian implements the standard DH convention ([Mladenova, §4.2])")
    c, cd = np.zeros(3), np.zeros(3)
    lines = np.zeros((n, 6))
    for i in range(n):
        x = pose_from_dual_vp(c, cd)  # DH frame i−1
        lines[i] = Ad6(x, np.array([0, 0, 1.0, 0, 0, 0]))  # its z axis through its origin
        th = dh[i, 0] + (q[i] if jt[i] == "R" else 0.0)
        d = dh[i, 1] + (q[i] if jt[i] == "P" else 0.0)
        a, al = dh[i, 2], dh[i, 3]
        # ĉ_ϑ = (0, 0, tan(ϑ̂/2)), ĉ_α = (tan(α̂/2), 0, 0), tan((θ + μ d)/2) = tan(θ/2) + μ d/2 sec²(θ/2)
        ct = (np.array([0, 0, np.tan(th / 2)]), np.array([0, 0, 0.5 * d / np.cos(th / 2) ** 2]))
        ca = (np.array([np.tan(al / 2), 0, 0]), np.array([0.5 * a / np.cos(al / 2) ** 2, 0, 0]))
        link = dual_vp_compose(ct[0], ct[1], ca[0], ca[1])
        c, cd = dual_vp_compose(c, cd, link[0], link[1])
    K, Ks = lines[:, :3].T, lines[:, 3:].T
    J = np.block([[K, np.zeros((3, n))], [Ks, K]])
    return lines, J


# --------------------------------------------------------------------------- Exp(tA)
def expm_symmetric(A, t=1.0, method: str = "closed_form"):
    """``Exp(tA) = O diag(e^{μ_i t}) Oᵀ`` for symmetric 3×3 ``A`` [Mladenova, eq. (204)], ``O``, ``μ`` from
    `principal_axes`.  ``t`` scalar or (...) → (..., 3, 3)."""
    from dqdyn.algebra.diagonalize import principal_axes

    pa = principal_axes(A, method=method)
    t = np.asarray(t, dtype=float)
    E = np.exp(t[..., None] * pa.values)
    return np.einsum("ij,...j,kj->...ik", pa.R, E, pa.R)


__all__ = [
    "vp_from_euler", "euler_from_vp", "vp_from_euler_printed", "vp_from_bryant", "bryant_from_vp",
    "vp_from_dh", "dh_from_vp", "vp_rotate", "tso3_compose", "N_matrix", "chain_angular_jacobian",
    "chain_vp_jacobian", "joint_vp_rate", "VPScrew", "vp_screw", "vp_velocity_pitch",
    "dh_dual_jacobian", "expm_symmetric",
]
