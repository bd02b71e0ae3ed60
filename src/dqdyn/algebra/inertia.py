"""Quaternionic inertia tensor, the ``L3`` operator, and the 6×6 spatial inertia in vec6 layout.

[Silva2022, §2] / [Silva2022thesis, §4.1]:

* the quaternionic inertia tensor ``𝕀 = (i_x, i_y, i_z) ∈ ℍ_p³`` (eq. 11) is the ordered triple
  of pure quaternions whose ``vec3`` are the **rows** of the 3×3 tensor ``Ī``;
* ``L3(A) b = î ⟨a_x, b⟩ + ĵ ⟨a_y, b⟩ + k̂ ⟨a_z, b⟩`` (eq. 12), so ``vec3(L3(𝕀) ω) = Ī vec3(ω)``
  (Prop. 4.1 / eq. 13: the angular momentum ``ℓ = L3(𝕀) ω``);
* frame changes (eq. 14): ``ℓ' = Ad(r) L3(𝕀) Ad(r*) ω'`` (the analogue of ``R Ī Rᵀ ω'``).

Array layout: ``𝕀`` is a float array (..., 3, 3) whose row ``k`` is ``vec3`` of the ``k``-th
pure quaternion; pure quaternions (ω, ℓ) are given either as 3-vectors (..., 3) or as pure
quaternions (..., 4) (real part ignored); results keep the form of the input.

Spatial inertia (a derived 6×6 form for matrix algorithms, layout of
`dqdyn.algebra.dualquat`): it maps a body twist ``ξ = ω + ε v`` in vec6 ``[ω, v]``
(``v`` the velocity of the body-frame origin, in body axes) to the momentum wrench
``h + ε ℓ_O`` in vec6 ``[f, τ]``-layout ``[h, ℓ_O]``: ``h = m (v + ω × c)`` the linear
momentum and ``ℓ_O = Ī_c ω + c × h`` the angular momentum about the frame origin, ``c`` the
CoM position.  Kinetic energy is ``½ power(ξ, M ξ)``.
"""

from __future__ import annotations

import numpy as np

from dqdyn import errors
from dqdyn.algebra.dualquat import _arr, _cross3, _qrot
from dqdyn.algebra.rotations import matrix_from_quat, quat_conj


def _mat3(I, name):
    I = np.asarray(I, dtype=float)
    if I.ndim < 2 or I.shape[-2:] != (3, 3):
        raise errors.ShapeError(f"{name} must have shape (..., 3, 3); got {I.shape}")
    if not np.all(np.isfinite(I)):
        raise errors.NonFiniteError(f"{name} contains NaN or infinity")
    return I


def _vec3_of(b, name):
    """3-vector view of a pure quaternion given as (..., 3) or (..., 4); and whether it was 4."""
    b = _arr(b, name, (3, 4))
    if b.shape[-1] == 4:
        return b[..., 1:], True
    return b, False


def _as_form(v, as4):
    if as4:
        return np.concatenate([np.zeros(v.shape[:-1] + (1,)), v], axis=-1)
    return v


def skew(v):
    """``S(v)`` (..., 3, 3) with ``S(v) b = v × b`` [Silva2022, §4.3]."""
    v = _arr(v, "v", 3)
    z = np.zeros(v.shape[:-1])
    x, y, w = v[..., 0], v[..., 1], v[..., 2]
    return np.stack(
        [np.stack([z, -w, y], -1), np.stack([w, z, -x], -1), np.stack([-y, x, z], -1)], axis=-2
    )


def quaternionic_inertia(I):
    """Quaternionic inertia tensor ``𝕀 = (i_x, i_y, i_z)`` of the 3×3 tensor ``Ī`` [Silva2022, eq. (11)].

    ``i_x = I_xx î + I_xy ĵ + I_xz k̂`` etc.: the components are the **rows** of ``Ī``.  Returned
    as the (..., 3, 3) array of those rows (row ``k`` = ``vec3(i_k)``), a checked copy; use
    `inertia_quaternions` for the (..., 3, 4) pure-quaternion form.
    """
    return np.array(_mat3(I, "I"), copy=True)


def inertia_quaternions(inertia):
    """The triple ``(i_x, i_y, i_z)`` as pure quaternions, array (..., 3, 4) [Silva2022, eq. (11)]."""
    A = _mat3(inertia, "inertia")
    return np.concatenate([np.zeros(A.shape[:-1] + (1,)), A], axis=-1)


def L3(A, b):
    """``L3(A) b = î ⟨a_x, b⟩ + ĵ ⟨a_y, b⟩ + k̂ ⟨a_z, b⟩`` ([Silva2022, eq. (12)]; [Silva2022thesis, eq. (4.4)]).

    ``A`` (..., 3, 3): the triple of pure quaternions (rows).  ``b``: pure quaternion as
    (..., 3) or (..., 4); the result has the same form.  ``⟨a, b⟩ = −(ab + ba)/2`` is the ℝ³ dot
    product of pure quaternions (9 mult., 6 add.).
    """
    A = _mat3(A, "A")
    b3, as4 = _vec3_of(b, "b")
    return _as_form(np.einsum("...ij,...j->...i", A, b3), as4)


def angular_momentum(inertia, omega):
    """Angular momentum ``ℓ = L3(𝕀) ω`` ([Silva2022, eq. (13)]; ``vec3 ℓ = Ī vec3 ω``)."""
    return L3(inertia, omega)


def angular_momentum_frame_change(inertia, r, omega_prime):
    """``ℓ' = Ad(r) L3(𝕀) Ad(r*) ω'`` ([Silva2022, eq. (14)]; [Silva2022thesis, eqs. (4.8)–(4.10)]).

    ``𝕀`` is expressed in F, ``ω'`` in F', ``r`` (..., 4) the unit rotation quaternion taking F
    to F' (``a' = r a r*``); the result is the angular momentum in F', the algebraic analogue of
    ``R Ī Rᵀ ω'``.  For the other case of eq. 14 (``𝕀'`` in F', ``ω`` in F, ``r`` from F' to F:
    ``ℓ = Ad(r*) L3(𝕀') Ad(r) ω``) pass ``conj(r)``.
    """
    r = _arr(r, "r", 4)
    w3, as4 = _vec3_of(omega_prime, "omega_prime")
    w = _qrot(quat_conj(r), w3)  # Ad(r*) ω'
    l = L3(inertia, w)
    return _as_form(_qrot(r, l), as4)  # Ad(r) ...


def rotate_inertia(inertia, r):
    """Rows of ``R Ī Rᵀ`` (..., 3, 3): the quaternionic inertia re-expressed by rotation ``r``.

    ``L3(rotate_inertia(𝕀, r)) ω' = Ad(r) L3(𝕀) Ad(r*) ω'`` [Silva2022, eq. (14)].
    """
    A = _mat3(inertia, "inertia")
    R = matrix_from_quat(_arr(r, "r", 4))
    return np.einsum("...ij,...jk,...lk->...il", R, A, R)


def parallel_axis(mass, com, I_com):
    """Inertia about the frame origin of a body with CoM at ``com`` (Steiner):

    ``Ī_O = Ī_c + m (|c|² I₃ − c cᵀ) = Ī_c − m S(c) S(c)``.  Broadcasts; (..., 3, 3).
    """
    m = np.asarray(mass, dtype=float)
    c = _arr(com, "com", 3)
    Ic = _mat3(I_com, "I_com")
    if np.any(m < 0) or not np.all(np.isfinite(m)):
        raise errors.ModelError("mass must be finite and non-negative")
    cc = np.sum(c * c, axis=-1)[..., None, None]
    return Ic + m[..., None, None] * (cc * np.eye(3) - c[..., :, None] * c[..., None, :])


def spatial_inertia_matrix(mass, com, I_com):
    """6×6 spatial inertia (..., 6, 6) in the vec6 layout (twist → momentum wrench).

    ``M [ω; v] = [h; ℓ_O]`` with ``h = m (v + ω × c) = m v − m S(c) ω`` and
    ``ℓ_O = Ī_O ω + m S(c) v``, i.e. ::

        M = [[ −m S(c),              m I₃   ],
             [ Ī_c − m S(c) S(c),    m S(c) ]]

    ``mass`` (...), ``com`` (..., 3) the CoM in the body frame, ``I_com`` (..., 3, 3) the inertia
    about the CoM in body axes.  The wrench layout is ``[f, τ]`` (force-like part first), so the
    power-pairing matrix ``Π M`` with ``Π = [[0, I₃], [I₃, 0]]`` is symmetric positive
    semidefinite and ``½ power(ξ, M ξ)`` is the kinetic energy.  Momenta transform by
    `Ad6` like wrenches: ``M' = Ad(x) M Ad(x*)``.
    """
    m = np.asarray(mass, dtype=float)
    c = _arr(com, "com", 3)
    IO = parallel_axis(m, c, I_com)
    S = skew(c)
    mm = m[..., None, None]
    batch = np.broadcast_shapes(m.shape, c.shape[:-1], IO.shape[:-2])
    out = np.zeros(batch + (6, 6))
    out[..., :3, :3] = -mm * S
    out[..., :3, 3:] = mm * np.eye(3)
    out[..., 3:, :3] = IO
    out[..., 3:, 3:] = mm * S
    return out


def momentum(mass, com, I_com, twist):
    """Momentum wrench ``[h, ℓ_O]`` (..., 6) of a body moving with the body twist ``[ω, v]``.

    ``h = m (v + ω × c)``, ``ℓ_O = L3(𝕀_c) ω + c × h`` (the quantities of [Silva2022, eq. (13)] and
    the Newton equation, taken about the frame origin).  Equals ``spatial_inertia_matrix @ ξ``.
    """
    m = np.asarray(mass, dtype=float)[..., None]
    c = _arr(com, "com", 3)
    t = _arr(twist, "twist", 6)
    w, v = t[..., :3], t[..., 3:]
    h = m * (v + _cross3(w, c))
    lO = L3(I_com, w) + _cross3(c, h)
    h, lO = np.broadcast_arrays(h, lO)
    return np.concatenate([h, lO], axis=-1)


def kinetic_energy(mass, com, I_com, twist):
    """``T = ½ power(ξ, momentum(ξ)) = ½ (⟨ω, ℓ_O⟩ + ⟨v, h⟩)`` (...)."""
    t = _arr(twist, "twist", 6)
    mom = momentum(mass, com, I_com, t)
    return 0.5 * (np.sum(t[..., :3] * mom[..., 3:], -1) + np.sum(t[..., 3:] * mom[..., :3], -1))


__all__ = [
    "skew",
    "quaternionic_inertia",
    "inertia_quaternions",
    "L3",
    "angular_momentum",
    "angular_momentum_frame_change",
    "rotate_inertia",
    "parallel_axis",
    "spatial_inertia_matrix",
    "momentum",
    "kinetic_energy",
]
