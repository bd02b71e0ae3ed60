"""The planar five-link biped of [Mladenova, §10.2] (validation claim 24 of
``tests/claims/test_mladenova_claims.py``).

Sagittal plane XZ, generalized coordinates ``q = (x, z, θ, α₁, β₁, α₂, β₂)``: the hip ``O`` at
``(x, z)``, the trunk angle θ and the absolute thigh / shank angles α_i, β_i, all measured from the
vertical (rotations about +Y: the trunk's CoM is at ``(x + ρ sin θ, z + ρ cos θ)``, thigh i's at
``(x − a sin α_i, z − a cos α_i)``, the knee at ``2a``, the shank's CoM ``b`` further along β_i).
Five inertial elements plus the pelvis point mass ``m_o``; constants [Mladenova, §10.2]
``M = m_o + 2m_a + 2m_b + M₁``, ``I_a = I_a^o + 4 m_b a²``, ``k_a = a (m_a + 2 m_b)``, ``k_b = b m_b``,
``I_ab = 2 m_b a b``, ``k_ρ = M₁ ρ``.

`biped_lagrange` evaluates the five Lagrange equations (seven rows) in the form
``M_p(q) q̈ + h_p(q, q̇) = Q`` with the **z-equation sign fix** (the corrected form of the z-equation of
[Mladenova, §10.2]: ``− k_ρ(θ̈ sθ + θ̇² cθ)``; the print has ``+``).  The sines and cosines are formed from the vector-parameters ``c = tan(angle/2)``
by the substitutions (398) ``sin = 2c/(1 + c²)``, ``cos = (1 − c²)/(1 + c²)``.
`biped_generalized_forces` is (399) (ground reactions ``R_i`` at the feet, hip torques
``q_i`` between trunk and thigh, knee torques ``u_i``, ankle moments ``p_i``).  `biped_model`
builds the same robot with `ModelBuilder` (x and z sliders, trunk and thighs on the
pelvis, shanks on the thighs) and the constant map ``S`` from the paper's coordinates to the
model's (``q_model = S q``, the knees being relative angles ``β_i − α_i``), so that
``M_p = Sᵀ M S`` and ``h_p = Sᵀ h`` with dqdyn's mass matrix and nonlinear effects (tested).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dqdyn.errors import ShapeError


@dataclass(frozen=True)
class BipedParams:
    """Physical parameters (the paper gives none; these defaults are human-like test values)."""

    M1: float = 30.0  #: trunk mass
    rho: float = 0.3  #: hip → trunk CoM
    I: float = 3.5  #: trunk inertia about the hip axis
    m_o: float = 5.0  #: pelvis point mass at the hip
    m_a: float = 7.0  #: thigh mass
    a: float = 0.22  #: half thigh length (thigh CoM at a, knee at 2a)
    I_a_o: float = 0.45  #: thigh inertia about the hip axis
    m_b: float = 3.5  #: shank mass
    b: float = 0.22  #: half shank length
    I_b: float = 0.2  #: shank inertia about the knee axis
    g: float = 9.81

    @property
    def consts(self):
        M = self.m_o + 2 * self.m_a + 2 * self.m_b + self.M1
        return dict(M=M, I_a=self.I_a_o + 4 * self.m_b * self.a**2, k_a=self.a * (self.m_a + 2 * self.m_b),
                    k_b=self.b * self.m_b, I_ab=2 * self.m_b * self.a * self.b, k_rho=self.M1 * self.rho)


def _sc(angle):
    """``(sin, cos)`` by the vector-parameter substitution (398), ``c = tan(angle/2)``."""
    c = np.tan(0.5 * angle)
    d = 1.0 + c * c
    return 2.0 * c / d, (1.0 - c * c) / d


def _q(q, name):
    q = np.asarray(q, dtype=float)
    if q.shape != (7,):
        raise ShapeError(f"{name} must have shape (7,) = (x, z, θ, α₁, β₁, α₂, β₂); got {q.shape}")
    return q


def biped_lagrange(params: BipedParams, q, qd):
    """``(M_p (7, 7), h_p (7,))`` of the biped's Lagrange equations ``M_p q̈ + h_p = Q`` (§10, z-fix)."""
    q, qd = _q(q, "q"), _q(qd, "qd")
    k = params.consts
    g = params.g
    M, Ia, ka, kb, Iab, kr = k["M"], k["I_a"], k["k_a"], k["k_b"], k["I_ab"], k["k_rho"]
    st, ct = _sc(q[2])
    Mp = np.zeros((7, 7))
    hp = np.zeros(7)
    # x: M ẍ + kρ(θ̈ cθ − θ̇² sθ) − Σ[ka(α̈ cα − α̇² sα) + kb(β̈ cβ − β̇² sβ)] = Q_x
    # z: M z̈ − kρ(θ̈ sθ + θ̇² cθ) + Σ[ka(α̈ sα + α̇² cα) + kb(β̈ sβ + β̇² cβ)] = Q_z − M g
    # θ: I θ̈ + kρ(ẍ cθ − z̈ sθ) − g kρ sθ = Q_θ
    Mp[0, 0] = Mp[1, 1] = M
    Mp[0, 2], Mp[1, 2] = kr * ct, -kr * st
    hp[0] = -kr * qd[2] ** 2 * st
    hp[1] = -kr * qd[2] ** 2 * ct + M * g
    Mp[2, 2] = params.I
    Mp[2, 0], Mp[2, 1] = kr * ct, -kr * st
    hp[2] = -g * kr * st
    for i in range(2):
        ia, ib = 3 + 2 * i, 4 + 2 * i
        sa, ca = _sc(q[ia])
        sb, cb = _sc(q[ib])
        cab = ca * cb + sa * sb  # cos(α − β) ([Mladenova, §10.2], after (399))
        sab = sa * cb - ca * sb  # sin(α − β)
        Mp[0, ia] += -ka * ca
        Mp[0, ib] += -kb * cb
        hp[0] += ka * qd[ia] ** 2 * sa + kb * qd[ib] ** 2 * sb
        Mp[1, ia] += ka * sa
        Mp[1, ib] += kb * sb
        hp[1] += ka * qd[ia] ** 2 * ca + kb * qd[ib] ** 2 * cb
        # α_i: I_a α̈ + I_ab β̈ c(α−β) − ka(ẍ cα − z̈ sα) + I_ab β̇² s(α−β) + g ka sα = Q_α
        Mp[ia, ia] = Ia
        Mp[ia, ib] = Iab * cab
        Mp[ia, 0], Mp[ia, 1] = -ka * ca, ka * sa
        hp[ia] = Iab * qd[ib] ** 2 * sab + g * ka * sa
        # β_i: I_b β̈ + I_ab α̈ c(α−β) − kb(ẍ cβ − z̈ sβ) − I_ab α̇² s(α−β) + g kb sβ = Q_β
        Mp[ib, ib] = params.I_b
        Mp[ib, ia] = Iab * cab
        Mp[ib, 0], Mp[ib, 1] = -kb * cb, kb * sb
        hp[ib] = -Iab * qd[ia] ** 2 * sab + g * kb * sb
    return Mp, hp


def biped_generalized_forces(params: BipedParams, q, R=((0, 0), (0, 0)), hip=(0, 0), knee=(0, 0), ankle=(0, 0)):
    """[Mladenova, eq. (399)]: ``Q_x = Σ R_ix``, ``Q_z = Σ R_iz``, ``Q_θ = −Σ q_i``,
    ``Q_αi = −u_i + q_i − 2a (R_ix cα_i − R_iz sα_i)``, ``Q_βi = u_i − 2b (R_ix cβ_i − R_iz sβ_i) − p_i``.

    ``R`` (2, 2): ground reaction (X, Z) at foot i; ``hip`` q_i (torque on thigh i from the trunk),
    ``knee`` u_i (on shank i from thigh i), ``ankle`` p_i.  Returns Q (7,)."""
    q = _q(q, "q")
    R = np.asarray(R, dtype=float)
    hip, knee, ankle = (np.asarray(v, dtype=float) for v in (hip, knee, ankle))
    Q = np.zeros(7)
    Q[0], Q[1] = R[:, 0].sum(), R[:, 1].sum()
    Q[2] = -hip.sum()
    for i in range(2):
        sa, ca = _sc(q[3 + 2 * i])
        sb, cb = _sc(q[4 + 2 * i])
        Q[3 + 2 * i] = -knee[i] + hip[i] - 2 * params.a * (R[i, 0] * ca - R[i, 1] * sa)
        Q[4 + 2 * i] = knee[i] - 2 * params.b * (R[i, 0] * cb - R[i, 1] * sb) - ankle[i]
    return Q


def biped_model(params: BipedParams = BipedParams()):
    """The same biped as a dqdyn `Model` and the map ``S`` (7, 7) with
    ``q_model = S q_paper``.  Model joints: ``x`` (prismatic X), ``z`` (prismatic Z, carries the
    pelvis mass), ``trunk`` (revolute Y), ``hip1``/``hip2`` (revolute Y, absolute α_i),
    ``knee1``/``knee2`` (revolute Y, relative β_i − α_i); frames ``foot1``, ``foot2``."""
    from dqdyn.multibody.builders import ModelBuilder

    p = params

    def inert(I_com, m):  # isotropic tensor with the given moment about Y (valid rigid body)
        return np.eye(3) * I_com if I_com > 0 else np.eye(3) * 1e-9 * m

    b = ModelBuilder("planar_biped_5link", gravity=(0.0, 0.0, -p.g))
    b.add_body("slider_x", "world", "prismatic", joint_name="x", axis=(1, 0, 0), mass=0.0)
    b.add_body("pelvis", "slider_x", "prismatic", joint_name="z", axis=(0, 0, 1), mass=p.m_o,
               inertia=np.eye(3) * 1e-12)
    b.add_body("trunk", "pelvis", "revolute", joint_name="trunk", axis=(0, 1, 0), mass=p.M1,
               com=(0, 0, p.rho), inertia=inert(p.I - p.M1 * p.rho**2, p.M1))
    for i in (1, 2):
        b.add_body(f"thigh{i}", "pelvis", "revolute", joint_name=f"hip{i}", axis=(0, 1, 0), mass=p.m_a,
                   com=(0, 0, -p.a), inertia=inert(p.I_a_o - p.m_a * p.a**2, p.m_a))
        b.add_body(f"shank{i}", f"thigh{i}", "revolute", joint_name=f"knee{i}", axis=(0, 1, 0),
                   xyz=(0, 0, -2 * p.a), mass=p.m_b, com=(0, 0, -p.b),
                   inertia=inert(p.I_b - p.m_b * p.b**2, p.m_b))
        b.add_frame(f"foot{i}", f"shank{i}", xyz=(0, 0, -2 * p.b))
    model = b.build()
    S = np.eye(7)
    S[4, 3] = -1.0  # knee1 = β₁ − α₁
    S[6, 5] = -1.0  # knee2 = β₂ − α₂
    return model, S


__all__ = ["BipedParams", "biped_lagrange", "biped_generalized_forces", "biped_model"]
