"""What one actuator of a leg-length robot contributes: its length ``ℓ_k``, its row ``Λ_k`` of the
Lie-derivative matrix and its second Lie derivative ``L²ℓ_k`` -- [MontgomerySmith2023, §9] (eqs. 73-84).

A leg-length robot (`stewart`, `cable`) is a rigid end effector (pose ``η``) driven by
``n`` actuators whose values ``ℓ = L(η)`` depend on the pose only [MontgomerySmith2023, eq. (62)].  Its actuators
are rows of a geometry table (layout below); the compiled kernels here evaluate any mix of them and
are shared by the evaluation front ends (`stewart.ParallelRobot`) and the Newton--Raphson
solvers (`newton`).

* **Leg / point cable** (kind 0) anchored at the fixed point ``s`` (world):
  ``u = (r − s_b)/|r − s_b|`` (eq. 73), ``ℓ = |r − s_b|``.
* **Swivel-pulley cable** (kind 1; eqs. 78-84, the model is described in `cable`).
* ``Λ_k = L ℓ_k = 2 [(r_k × u_k)ᵀ, u_kᵀ]`` (eqs. 74-75), ``r_k`` the end-effector attachment point
  and ``u_k`` the unit direction in which the leg or cable comes into the end effector, both in the
  moving frame.
* ``L²ℓ_k = 2 [S_r; I] L u_k`` (6×6, entry ``[j, i] = L_i L_j ℓ_k``) with ``L u = 2 [S_u − G S_r,  G]``
  and ``G = ∂u/∂r`` the body-frame Hessian of the length as a function of the attachment point's
  world position (true for legs, point cables and swivel-pulley cables, eq. 74 and [MontgomerySmith2023, §9]).
  For a leg ``G = P_u / |r − s|``, so ``L u = (2/|r − s|) P_u [−S_s  I]`` -- eq. (76) **corrected**
  (printed prefactor ``1/|r−s|``) and ``L²ℓ = (4/|r−s|) [S_r; I] P_u [−S_s  I]`` (eq. 77
  corrected, printed prefactor 2).  For the pulley ``G`` is in closed form (`k_pulley`).

Conventions: see `dqdyn.parallel.lie` (``Λ`` in β-coordinates, ``Λ = 2 J``).
"""

from __future__ import annotations

import math

import numpy as np

from dqdyn._engine.jit import kernel
from dqdyn.parallel.lie import inline, k_dir_to_body, k_normalize, k_rot_trans, k_world_to_body

__all__ = [
    "NCOL",
    "C_KIND", "C_R", "C_S", "C_N", "C_W", "C_P", "C_OFF",
    "KIND_LEG", "KIND_PULLEY",
    "eval_any",
    "eval_any_batch",
]

njit = kernel(error_model="numpy")

#: geometry table: one row per actuator,
#: ``[kind, r(3), s|x(3), n(3), w, p, offset, 0, 0, 0]`` (see `stewart.ParallelRobot`)
NCOL = 16
C_KIND, C_R, C_S, C_N, C_W, C_P, C_OFF = 0, 1, 4, 7, 10, 11, 12
KIND_LEG, KIND_PULLEY = 0, 1


# =========================================================================== one actuator

@inline
def k_leg(rq, t, row, sb, u):
    """Leg / point cable anchored at the fixed point ``s`` (row[4:7]); returns the length.

    ``s_b = Q*(s − t)Q`` (eq. 120), ``u = (r − s_b)/|r − s_b|`` (eq. 73), ``ℓ = |r − s_b| + offset``.
    """
    k_world_to_body(rq, t, row[C_S : C_S + 3], sb)
    e0 = row[1] - sb[0]
    e1 = row[2] - sb[1]
    e2 = row[3] - sb[2]
    L = math.sqrt(e0 * e0 + e1 * e1 + e2 * e2)
    # r on s (to round-off): u is undefined -- NaN, which the front ends report (never garbage)
    inv = 1.0 / L if L > 1e-13 * (abs(row[1]) + abs(row[2]) + abs(row[3]) + abs(sb[0]) + abs(sb[1]) + abs(sb[2])) else np.nan
    u[0] = e0 * inv
    u[1] = e1 * inv
    u[2] = e2 * inv
    return L


@inline
def k_leg_G(u, L, G):
    """``G = ∂u/∂r = P_u / |r − s|`` for a leg."""
    for a in range(3):
        for b in range(3):
            G[a, b] = -u[a] * u[b] / L
        G[a, a] += 1.0 / L


@inline
def k_lam_row(row, u, lam):
    """``Λ_k = 2 [(r × u)ᵀ, uᵀ]`` [MontgomerySmith2023, eqs. (74)–(75)]."""
    r0, r1, r2 = row[1], row[2], row[3]
    lam[0] = 2.0 * (r1 * u[2] - r2 * u[1])
    lam[1] = 2.0 * (r2 * u[0] - r0 * u[2])
    lam[2] = 2.0 * (r0 * u[1] - r1 * u[0])
    lam[3] = 2.0 * u[0]
    lam[4] = 2.0 * u[1]
    lam[5] = 2.0 * u[2]


@inline
def k_second(row, u, G, A, H):
    """``L²ℓ = 2 [S_r; I] L u`` with ``L u = 2 [S_u − G S_r,  G]`` (eq. 77, corrected).

    ``H[j, i] = L_i L_j ℓ``.  ``A`` is a (3, 6) scratch.
    """
    r0, r1, r2 = row[1], row[2], row[3]
    # A = [S_u - G S_r | G]
    for a in range(3):
        g0, g1, g2 = G[a, 0], G[a, 1], G[a, 2]
        # (G S_r)[a, b] = sum_c G[a, c] S_r[c, b];  S_r = [[0,-r2,r1],[r2,0,-r0],[-r1,r0,0]]
        gs0 = g1 * r2 - g2 * r1
        gs1 = -g0 * r2 + g2 * r0
        gs2 = g0 * r1 - g1 * r0
        A[a, 0] = -gs0
        A[a, 1] = -gs1
        A[a, 2] = -gs2
        A[a, 3] = g0
        A[a, 4] = g1
        A[a, 5] = g2
    # + S_u
    A[0, 1] += -u[2]
    A[0, 2] += u[1]
    A[1, 0] += u[2]
    A[1, 2] += -u[0]
    A[2, 0] += -u[1]
    A[2, 1] += u[0]
    for i in range(6):
        x0, x1, x2 = A[0, i], A[1, i], A[2, i]
        H[0, i] = 4.0 * (r1 * x2 - r2 * x1)
        H[1, i] = 4.0 * (r2 * x0 - r0 * x2)
        H[2, i] = 4.0 * (r0 * x1 - r1 * x0)
        H[3, i] = 4.0 * x0
        H[4, i] = 4.0 * x1
        H[5, i] = 4.0 * x2


@inline
def k_pulley(rq, t, row, xb, nv, u, G, need_G):
    """Swivel-pulley cable [MontgomerySmith2023, eqs. (78)–(84)]; returns the length (without offset).

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


# =========================================================================== all actuators


@inline
def k_actuator_scratch():
    """Scratch of `k_eval`: ``(rq, t, sb, nv, u, G, A)``."""
    return np.empty(4), np.empty(3), np.empty(3), np.empty(3), np.empty(3), np.empty((3, 3)), np.empty((3, 6))


@inline
def k_eval(eta, geom, order, L, Lam, H, rq, t, sb, nv, u, G, A):
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
    """``(ℓ, Λ, L²ℓ)`` of any actuator mix at the normalized pose ``η |η|⁻¹`` (eq. 33): lengths
    (order ≥ 0), ``Λ`` (order ≥ 1) and second Lie derivatives (order 2)."""
    e = np.empty(8)
    k_normalize(eta, e)
    rq, t, sb, nv, u, G, A = k_actuator_scratch()
    k_eval(e, geom, order, L, Lam, H, rq, t, sb, nv, u, G, A)


@njit
def eval_any_batch(eta, geom, order, L, Lam, H):  # pragma: no cover - compiled
    for b in range(eta.shape[0]):
        eval_any(eta[b], geom, order, L[b], Lam[b], H[b])


#: former names (legs only / any mix): one kernel serves both
k_eval_any = k_eval
eval_legs = eval_any
eval_legs_batch = eval_any_batch
