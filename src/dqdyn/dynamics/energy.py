"""Kinetic and potential energy, and the centre of mass (used by energy-balance checks).

``T = ½ Σ_i ξ_iᵀ I_i ξ_i`` from the body twists (each body's twist paired with its momentum
wrench, the power pairing of [Silva2022, §3.2]), ``U = −Σ_i m_i ⟨g, p_{c_i}⟩``.
"""

from __future__ import annotations

import numpy as np

from dqdyn.kinematics.forward import body_twists, com_poses
from dqdyn.multibody.model import Model


def _momentum(model: Model, T: np.ndarray) -> np.ndarray:
    """Momentum wrench ``[f, τ]`` of every body at its origin for body twists ``T`` (..., nb+1, 6)."""
    m = np.asarray(model.mass)[:, None]
    c = np.asarray(model.com)
    w, v = T[..., :3], T[..., 3:]
    f = m * (v + np.cross(w, c))
    tau = np.einsum("bij,...bj->...bi", np.asarray(model.inertia), w) + np.cross(c, f)
    return np.concatenate([f, tau], axis=-1)


def kinetic_energy(model: Model, q, v) -> np.ndarray:
    """``½ vᵀ M(q) v`` (...,), computed body by body from the twists, plus the rotors'
    ``½ Σ armature_j v_j²`` (`armature`)."""
    T = body_twists(model, q, v, "body")
    h = _momentum(model, T)
    ke = 0.5 * (np.sum(T[..., :3] * h[..., 3:], axis=(-1, -2)) + np.sum(T[..., 3:] * h[..., :3], axis=(-1, -2)))
    arm = model.armature
    if arm.any():
        ke = ke + 0.5 * np.sum(arm * np.asarray(v, dtype=float) ** 2, axis=-1)
    return ke


def center_of_mass(model: Model, q) -> np.ndarray:
    """Position (..., 3) of the whole-system centre of mass in F_0."""
    from dqdyn.algebra.rotations import translation_of

    X = com_poses(model, q)
    p = translation_of(X)
    m = np.asarray(model.mass)
    return np.einsum("b,...bi->...i", m, p) / max(m.sum(), 1e-300)


def potential_energy(model: Model, q) -> np.ndarray:
    """Gravitational potential ``−Σ m_i ⟨g, p_{c_i}⟩`` (...,)."""
    return -model.total_mass * (center_of_mass(model, q) @ np.asarray(model.gravity))


def mechanical_energy(model: Model, q, v) -> np.ndarray:
    return kinetic_energy(model, q, v) + potential_energy(model, q)


__all__ = ["kinetic_energy", "potential_energy", "mechanical_energy", "center_of_mass"]
