"""Time derivatives of inverse dynamics along a trajectory: the recursive Newton–Euler algorithm
in truncated Taylor arithmetic (numpy; no numba kernel).

``rnea_taylor(model, Q)`` takes the Taylor coefficients of a joint trajectory,
``Q = [q, q̇, q̈/2, q⁽³⁾/6, q⁽⁴⁾/24]`` (5 × nq), and returns the Taylor coefficients
``[τ, τ̇, τ̈/2]`` (3 × nv) of ``τ(t) = M(q) q̈ + C(q, q̇) q̇ + g(q)``: every quantity of the
recursion (rotations, velocities, accelerations, forces) is a polynomial in ``t`` truncated after
``t²``, so the derivatives are exact (no finite differences).  They are what the flatness of the
reduced elastic-joint model needs ([Mladenova, §7.4]: the motor position is ``θ = q + K⁻¹τ``, the
motor torque ``u = J θ̈ + τ``, so ``τ̈`` is needed; Spong's static feedback needs the same).

The recursion (body frames, classical accelerations, gravity as a base acceleration ``−g``):
``ω_i = Rᵀω_λ + s_ω q̇_i``, ``v_i = Rᵀ(v_λ + ω_λ × p) + s_v q̇_i``,
``ω̇_i = Rᵀω̇_λ + (Rᵀω_λ) × s_ω q̇_i + s_ω q̈_i``,
``a_i = Rᵀ(a_λ + ω̇_λ × p + ω_λ × (ω_λ × p)) + 2 (Rᵀω_λ) × s_v q̇_i + s_v q̈_i``, then
``f_i = m a_c``, ``n_i = Ī ω̇ + ω × Ī ω + c × f_i`` summed to the root; ``τ_i = s_ωᵀ n_i + s_vᵀ f_i``.
Joints: revolute, prismatic, helical, fixed and mimic.
"""

from __future__ import annotations

import numpy as np

from dqdyn.algebra.rotations import matrix_from_pose
from dqdyn.errors import ModelError, ShapeError
from dqdyn.multibody.joints import FIXED, HELICAL, JOINT_TYPE_NAMES, PRISMATIC, REVOLUTE

K = 3  # orders kept: t⁰, t¹, t²


# pairs (i, j) with i + j = k, for k = 0, 1, 2, and the row groups of each order
_I = np.array([0, 0, 1, 0, 1, 2])
_J = np.array([0, 1, 0, 2, 1, 0])


_F = np.array([[1.0, 0, 0, 0, 0, 0], [0, 1, 1, 0, 0, 0], [0, 0, 0, 1, 1, 1]])


def _fold(r):
    """Sum the six pair products into the three orders."""
    return (_F @ r.reshape(6, -1)).reshape((3,) + r.shape[1:])


def _matvec(R, v):
    return _fold(np.einsum("kab,kb->ka", R[_I], v[_J]))


def _matTvec(R, v):
    return _fold(np.einsum("kba,kb->ka", R[_I], v[_J]))


def _matmul(A, B):
    return _fold(np.einsum("kab,kbc->kac", A[_I], B[_J]))


def _cross(a, b):
    x, y = a[_I], b[_J]
    r = np.empty((6, 3))
    r[:, 0] = x[:, 1] * y[:, 2] - x[:, 2] * y[:, 1]
    r[:, 1] = x[:, 2] * y[:, 0] - x[:, 0] * y[:, 2]
    r[:, 2] = x[:, 0] * y[:, 1] - x[:, 1] * y[:, 0]
    return _fold(r)


def _const(x):
    out = np.zeros((K,) + np.shape(x))
    out[0] = x
    return out


def _sincos(th):
    """Jets of sin θ and cos θ for a scalar jet θ = (θ0, θ1, θ2)."""
    s0, c0 = np.sin(th[0]), np.cos(th[0])
    s = np.array([s0, c0 * th[1], c0 * th[2] - 0.5 * s0 * th[1] ** 2])
    c = np.array([c0, -s0 * th[1], -s0 * th[2] - 0.5 * c0 * th[1] ** 2])
    return s, c


class _Tables:
    """Constant per-body data of a model, read once."""

    def __init__(self, model):
        self.model = model
        nb = model.nbodies
        self.nb = nb
        self.parent = [int(x) for x in model.parent]
        self.jtype = [int(x) for x in model.joint_type]
        for i in range(1, nb + 1):
            if self.jtype[i] not in (REVOLUTE, PRISMATIC, HELICAL, FIXED):
                raise ModelError(
                    f"rnea_taylor: joint {model.joint_names_all[i]!r} is "
                    f"{JOINT_TYPE_NAMES[self.jtype[i]]}; expected 1-DoF or fixed joints")
        T = matrix_from_pose(np.asarray(model.joint_placement))
        self.Rp, self.pp = T[:, :3, :3], T[:, :3, 3]
        self.axis = np.asarray(model.joint_axis, dtype=float)
        self.pitch = np.asarray(model.joint_pitch, dtype=float)
        self.iq = [int(x) for x in model.idx_q]
        self.iv = [int(x) for x in model.idx_v]
        self.scale = np.asarray(model.mimic_scale, dtype=float)
        self.offset = np.asarray(model.mimic_offset, dtype=float)
        self.mass = np.asarray(model.mass, dtype=float)
        self.com = np.asarray(model.com, dtype=float)
        self.inertia = np.asarray(model.inertia, dtype=float)
        self.gravity = np.asarray(model.gravity, dtype=float)


def _tables(model) -> _Tables:
    t = model._index.get(("elastic", "taylor"))
    if t is None:
        t = _Tables(model)
        model._index[("elastic", "taylor")] = t
    return t


def rnea_taylor(model, Q) -> np.ndarray:
    """Taylor coefficients ``[τ, τ̇, τ̈/2]`` (3, nv) of inverse dynamics along the trajectory with
    Taylor coefficients ``Q = [q, q̇, q̈/2, q⁽³⁾/6, q⁽⁴⁾/24]`` (5, nq).  See the module docstring."""
    tb = _tables(model)
    Q = np.asarray(Q, dtype=float)
    if Q.shape != (5, model.nq):
        raise ShapeError(f"Q: expected the Taylor coefficients [q, q̇, q̈/2, q⁽³⁾/6, q⁽⁴⁾/24] with "
                         f"shape (5, {model.nq}), got {Q.shape}")
    if not np.all(np.isfinite(Q)):
        from dqdyn.errors import NonFiniteError

        raise NonFiniteError("Q: contains NaN or infinity")
    nb = tb.nb
    # jets of q, q̇, q̈ (orders 0..2) from the trajectory's polynomial
    qj = Q[:3]
    vj = np.array([Q[1], 2 * Q[2], 3 * Q[3]])
    aj = np.array([2 * Q[2], 6 * Q[3], 12 * Q[4]])
    om = [np.zeros((K, 3)) for _ in range(nb + 1)]
    vel = [np.zeros((K, 3)) for _ in range(nb + 1)]
    dom = [np.zeros((K, 3)) for _ in range(nb + 1)]
    acc = [np.zeros((K, 3)) for _ in range(nb + 1)]
    acc[0][0] = -tb.gravity
    Rs = [None] * (nb + 1)
    ps = [None] * (nb + 1)
    sw = [None] * (nb + 1)
    sv = [None] * (nb + 1)
    for i in range(1, nb + 1):
        lam = tb.parent[i]
        jt = tb.jtype[i]
        a = tb.axis[i]
        R = _const(tb.Rp[i])
        p = _const(tb.pp[i])
        w = wd = np.zeros(K)
        s_w = s_v = np.zeros(3)
        if jt != FIXED:
            sc = tb.scale[i]
            th = sc * qj[:, tb.iq[i]]
            th = th + np.array([tb.offset[i], 0.0, 0.0])
            w = sc * vj[:, tb.iv[i]]
            wd = sc * aj[:, tb.iv[i]]
            if jt in (REVOLUTE, HELICAL):
                s, c = _sincos(th)
                ax = np.array([[0, -a[2], a[1]], [a[2], 0, -a[0]], [-a[1], a[0], 0]])
                aat = np.outer(a, a)
                Rj = (c[:, None, None] * np.eye(3) + s[:, None, None] * ax
                      + (_const(1.0) - c)[:, None, None] * aat)
                R = _matmul(R, Rj)
                s_w = a
            if jt == PRISMATIC:
                p = p + _matvec(_const(tb.Rp[i]), th[:, None] * a)
                s_v = a
            if jt == HELICAL:
                p = p + _matvec(_const(tb.Rp[i]), (tb.pitch[i] * th)[:, None] * a)
                s_v = tb.pitch[i] * a
        Rs[i], ps[i], sw[i], sv[i] = R, p, s_w, s_v
        wl = _matTvec(R, om[lam])
        om[i] = wl + w[:, None] * s_w
        vel[i] = _matTvec(R, vel[lam] + _cross(om[lam], p)) + w[:, None] * s_v
        dom[i] = _matTvec(R, dom[lam]) + _cross(wl, w[:, None] * s_w) + wd[:, None] * s_w
        acc[i] = (_matTvec(R, acc[lam] + _cross(dom[lam], p) + _cross(om[lam], _cross(om[lam], p)))
                  + 2 * _cross(wl, w[:, None] * s_v) + wd[:, None] * s_v)
    f = [np.zeros((K, 3)) for _ in range(nb + 1)]
    n = [np.zeros((K, 3)) for _ in range(nb + 1)]
    for i in range(1, nb + 1):
        c = _const(tb.com[i])
        ac = acc[i] + _cross(dom[i], c) + _cross(om[i], _cross(om[i], c))
        f[i] = f[i] + tb.mass[i] * ac
        Iw = np.einsum("ab,kb->ka", tb.inertia[i], om[i])
        Idw = np.einsum("ab,kb->ka", tb.inertia[i], dom[i])
        n[i] = n[i] + Idw + _cross(om[i], Iw) + _cross(c, tb.mass[i] * ac)
    tau = np.zeros((K, model.nv))
    for i in range(nb, 0, -1):
        if tb.jtype[i] != FIXED:
            tau[:, tb.iv[i]] += tb.scale[i] * (n[i] @ sw[i] + f[i] @ sv[i])
        lam = tb.parent[i]
        if lam > 0:
            Rf = _matvec(Rs[i], f[i])
            f[lam] += Rf
            n[lam] += _matvec(Rs[i], n[i]) + _cross(ps[i], Rf)
    return tau


__all__ = ["rnea_taylor"]
