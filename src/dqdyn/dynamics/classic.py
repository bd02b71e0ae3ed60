"""Classic 3-vector recursive Newton–Euler (Luh, Walker & Paul 1980 — the papers' "rtNE", the
Robotics Toolbox's ``rne``; [Silva2022thesis, §3.1]), written with rotation matrices and
3-vectors, independently of dqdyn's dual quaternion kernels (it reads only the model's
placements, axes and inertias).  A baseline route for ``dqdyn reproduce`` and a test oracle;
numpy, vectorized over a batch of states, revolute and prismatic joints (chains and trees),
fixed base — as the papers' rtNE (N/A for mobile bases, [Silva2022, §5.2, Table 2]).

World-frame form: for every body ``i`` with parent ``λ``, joint axis ``z_i`` (world), origin
``p_i``::

    ω_i = ω_λ + z_i q̇_i                      (revolute)
    ω̇_i = ω̇_λ + z_i q̈_i + ω_λ × z_i q̇_i
    a_i = a_λ + ω̇_λ × r + ω_λ × (ω_λ × r)    (r = p_i − p_λ; a_0 = −g)
          [+ z q̈ + 2 ω_λ × z q̇ + ω̇_λ × s + ω_λ × (ω_λ × s), s = z q  for prismatic]
    F_i = m_i a_{c_i},  N_i = I_i ω̇_i + ω_i × I_i ω_i
    f_i = F_i + Σ f_children,  n_i = N_i + c_i × F_i + Σ (n_j + (p_j − p_i) × f_j)
    τ_i = z_i · n_i (revolute),  z_i · f_i (prismatic)
"""

from __future__ import annotations

import numpy as np

from dqdyn.algebra.dualquat import matrix_from_pose
from dqdyn.errors import ModelError, ShapeError
from dqdyn.multibody.joints import FIXED, PRISMATIC, REVOLUTE
from dqdyn.multibody.model import Model


def _rot(axis, angle):
    """Rodrigues: rotation matrices (N, 3, 3) about the unit ``axis`` (3,) by ``angle`` (N,)."""
    k = np.asarray(axis, float)
    K = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
    s, c = np.sin(angle)[:, None, None], np.cos(angle)[:, None, None]
    return np.eye(3) + s * K + (1 - c) * (K @ K)


def classic_newton_euler(model: Model, q, v, a, gravity=None) -> np.ndarray:
    """Generalized forces ``τ`` (..., nv) by the 3-vector recursive Newton–Euler (module doc).
    ``q`` (..., nq), ``v`` / ``a`` (..., nv); ``gravity`` defaults to the model's."""
    for i in range(1, model.nbodies + 1):
        jt = int(model.joint_type[i])
        if jt not in (REVOLUTE, PRISMATIC, FIXED) or (jt != FIXED and model.joint_nv[i] != 1):
            raise ModelError(f"classic_newton_euler: joint {model.joint_names_all[i]!r} is "
                             f"{model.joint_type_name(i)!r}; the 3-vector Newton–Euler handles "
                             f"revolute and prismatic joints on a fixed base only")
        if model.mimic_scale[i] != 1.0 or model.mimic_offset[i] != 0.0:
            raise ModelError(f"classic_newton_euler: mimic joint {model.joint_names_all[i]!r}")
    q, v, a = (np.asarray(x, dtype=float) for x in (q, v, a))
    for x, n, nm in ((q, model.nq, "q"), (v, model.nv, "v"), (a, model.nv, "a")):
        if x.ndim == 0 or x.shape[-1] != n:
            raise ShapeError(f"{nm} must have shape (..., {n}), got {x.shape}")
    batch = np.broadcast_shapes(q.shape[:-1], v.shape[:-1], a.shape[:-1])
    N = int(np.prod(batch)) if batch else 1
    Q = np.broadcast_to(q, batch + (model.nq,)).reshape(N, -1)
    V = np.broadcast_to(v, batch + (model.nv,)).reshape(N, -1)
    A = np.broadcast_to(a, batch + (model.nv,)).reshape(N, -1)
    g = np.asarray(model.gravity if gravity is None else gravity, float).reshape(3)
    nb = model.nbodies
    R = [np.broadcast_to(np.eye(3), (N, 3, 3))] + [None] * nb
    p = [np.zeros((N, 3))] + [None] * nb
    w = [np.zeros((N, 3))] + [None] * nb
    wd = [np.zeros((N, 3))] + [None] * nb
    acc = [np.broadcast_to(-g, (N, 3))] + [None] * nb
    z = [None] * (nb + 1)
    T = [matrix_from_pose(np.array(model.joint_placement[i])) for i in range(nb + 1)]
    for i in range(1, nb + 1):
        lam = int(model.parent[i])
        jt = int(model.joint_type[i])
        ax = np.array(model.joint_axis[i])
        RJ = R[lam] @ T[i][:3, :3]
        pJ = p[lam] + R[lam] @ T[i][:3, 3]
        r = pJ - p[lam]
        base = acc[lam] + np.cross(wd[lam], r) + np.cross(w[lam], np.cross(w[lam], r))
        z[i] = RJ @ ax
        if jt == FIXED:
            R[i], p[i], w[i], wd[i], acc[i] = RJ, pJ, w[lam], wd[lam], base
            continue
        iq, iv = int(model.idx_q[i]), int(model.idx_v[i])
        qi, di, ddi = Q[:, iq], V[:, iv, None], A[:, iv, None]
        if jt == REVOLUTE:
            R[i] = RJ @ _rot(ax, qi)
            p[i] = pJ
            w[i] = w[lam] + z[i] * di
            wd[i] = wd[lam] + z[i] * ddi + np.cross(w[lam], z[i] * di)
            acc[i] = base
        else:
            R[i] = RJ
            s = z[i] * qi[:, None]
            p[i] = pJ + s
            w[i], wd[i] = w[lam], wd[lam]
            acc[i] = (base + np.cross(wd[lam], s) + np.cross(w[lam], np.cross(w[lam], s))
                      + z[i] * ddi + 2 * np.cross(w[lam], z[i] * di))
    f = [np.zeros((N, 3)) for _ in range(nb + 1)]
    nm = [np.zeros((N, 3)) for _ in range(nb + 1)]  # moment about the body origin p_i
    tau = np.zeros((N, model.nv))
    for i in range(nb, 0, -1):
        rc = R[i] @ np.array(model.com[i])
        ac = acc[i] + np.cross(wd[i], rc) + np.cross(w[i], np.cross(w[i], rc))
        Iw = R[i] @ np.array(model.inertia[i]) @ np.swapaxes(R[i], -1, -2)
        F = model.mass[i] * ac
        f[i] += F
        nm[i] += (np.einsum("nij,nj->ni", Iw, wd[i])
                  + np.cross(w[i], np.einsum("nij,nj->ni", Iw, w[i])) + np.cross(rc, F))
        jt = int(model.joint_type[i])
        if jt == REVOLUTE:
            tau[:, int(model.idx_v[i])] = np.einsum("ni,ni->n", z[i], nm[i])
        elif jt == PRISMATIC:
            tau[:, int(model.idx_v[i])] = np.einsum("ni,ni->n", z[i], f[i])
        lam = int(model.parent[i])
        f[lam] += f[i]
        nm[lam] += nm[i] + np.cross(p[i] - p[lam], f[i])
    return tau.reshape(batch + (model.nv,))


def classic_forward_dynamics(model: Model, q, v, tau, gravity=None) -> np.ndarray:
    """``q̈ = M⁻¹ (τ − C q̇ − g)`` with ``M``, ``C q̇ + g`` from n + 1 classic Newton–Euler
    calls ([Silva2022thesis, §3.2.1, eq. (3.2)] — the papers' rtNE route to q̈), batched."""
    q, v, tau = (np.asarray(x, dtype=float) for x in (q, v, tau))
    batch = np.broadcast_shapes(q.shape[:-1], v.shape[:-1], tau.shape[:-1])
    n = model.nv
    Q = np.broadcast_to(q, batch + (model.nq,)).reshape(-1, model.nq)
    V = np.broadcast_to(v, batch + (n,)).reshape(-1, n)
    TAU = np.broadcast_to(tau, batch + (n,)).reshape(-1, n)
    N = Q.shape[0]
    h = classic_newton_euler(model, Q, V, np.zeros((N, n)), gravity)  # C q̇ + g
    E = np.eye(n)
    # M columns: NE(q, 0, e_k) − g, without gravity
    Mc = classic_newton_euler(model, np.repeat(Q, n, 0), np.zeros((N * n, n)), np.tile(E, (N, 1)),
                              np.zeros(3))
    M = Mc.reshape(N, n, n).swapaxes(1, 2)
    return np.linalg.solve(M, (TAU - h)[..., None])[..., 0].reshape(batch + (n,))


__all__ = ["classic_forward_dynamics", "classic_newton_euler"]
