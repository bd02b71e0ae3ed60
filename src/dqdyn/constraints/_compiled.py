"""The compiled rows of the bundled constraint kinds and the one-call constrained forward
dynamics kernel: ``M``, ``h``, the frames' Jacobians and drifts from one world-frame sweep, the
rows ``A v̇ = b`` (`_terms_kernel`) and the Udwadia–Kalaba solve ([Silva2022, eqs. (62)–(63)],
`dqdyn.constraints.udwadia_kalaba`) in one compiled call (`_cfd_checked`), its call-gate body
(`_c_cfd`) and its batch (`_cfd_batch`).  `dqdyn.constraints.forward` holds the gate entry and
the public function that runs them.
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np

from dqdyn._engine.boundary import check_q
from dqdyn._engine.gate import gate_tables, gate_vector
from dqdyn._engine.jit import kernel
from dqdyn._engine.views import unmanaged, view
from dqdyn.algebra._core import dq_mul, pose_translation
from dqdyn.constraints.base import (
    COUPLING,
    DIFF_DRIVE,
    LOOP_6D,
    SPEC_F,
    SPEC_I,
    frame_rotation,
)
from dqdyn.constraints.udwadia_kalaba import _uk_on
from dqdyn.dynamics.articulated import _has_mimic
from dqdyn.dynamics.derivatives._sweeps import dynamics_sweep, dynamics_sweep_size, sweep_views
from dqdyn.kinematics.forward import local_pose
from dqdyn.multibody.joints import REVOLUTE, SPHERICAL
from dqdyn.multibody.model import MF_PLACEMENT, MI_IQ, MI_IV, MI_JTYPE, MI_NV, MI_PARENT

njit = kernel()
ijit = kernel(inline="always")  # small helpers, inlined at the IR level


# ------------------------------------------------- the compiled path of the bundled constraints
@njit
def _frame(mi, mf, q, body, pl, code, sw, J, jdv, R, p, t):
    """Row material of the frame ``(body, pl)`` from the world-frame sweep ``sw`` of
    `dynamics_sweep` (its poses, world motion axes ``𝒮``,
    twists and bias accelerations): its Jacobian ``J`` (6 × nv; ``code`` 2: world-aligned at the
    frame's origin ``o``, 0: in the frame's axes), ``jdv = J̇ v``, rotation ``R`` and world
    origin ``p``.  A world-aligned column is the joint's axis ``𝒮_c = [ω_c; v_c]`` (a twist at
    the sweep's origin) moved to ``o``: ``[ω_c; v_c + ω_c × o]``; the drift is the acceleration
    of the frame at ``q̈ = 0``: with the body's twist ``[ω; v]`` and bias acceleration ``[α; a]``
    (gravity taken out), ``ȯ = v + ω × o`` and ``J̇ v = [α; a + α × o + ω × ȯ]``; in the frame's
    axes ``J_b = Rᵀ J`` and ``J̇_b v = Rᵀ [α; a + α × o]`` (the derivative of ``Rᵀ J v`` minus
    ``J_b v̇``).  The same ``J``, ``J̇ v`` as `jacobian_drift_kernel`
    ([Silva2022, eq. (10), Lemma 2.1], in the frame's axes), which the general path uses (tests: the
    two paths, Pinocchio, finite differences).  ``t``: 16 scratch floats."""
    nb1 = mi.shape[0]
    nv = J.shape[1]
    for r in range(6):
        jdv[r] = 0.0
        for c in range(nv):
            J[r, c] = 0.0
    if body == 0:  # the ground: J = 0, J̇ v = 0
        frame_rotation(pl, R)
        pose_translation(pl, p)
        return
    X, S, Vw, Aw = sweep_views(sw, nb1, nv)[:4]
    xs = t[0:8]
    dq_mul(X[body], pl, xs)  # the frame's pose in the sweep's axes (its root at the origin)
    frame_rotation(xs, R)
    pose_translation(xs, p)
    o0, o1, o2 = p[0], p[1], p[2]
    j = body
    root = body
    while j > 0:
        root = j
        iv = mi[j, MI_IV]
        for k in range(mi[j, MI_NV]):
            c = iv + k
            w0, w1, w2 = S[c, 0], S[c, 1], S[c, 2]
            J[0, c] = w0
            J[1, c] = w1
            J[2, c] = w2
            J[3, c] = S[c, 3] + (w1 * o2 - w2 * o1)
            J[4, c] = S[c, 4] + (w2 * o0 - w0 * o2)
            J[5, c] = S[c, 5] + (w0 * o1 - w1 * o0)
        j = mi[j, MI_PARENT]
    w0, w1, w2 = Vw[body, 0], Vw[body, 1], Vw[body, 2]
    al0, al1, al2 = Aw[body, 0], Aw[body, 1], Aw[body, 2]
    d0 = Vw[body, 3] + (w1 * o2 - w2 * o1)  # ȯ
    d1 = Vw[body, 4] + (w2 * o0 - w0 * o2)
    d2 = Vw[body, 5] + (w0 * o1 - w1 * o0)
    jdv[0], jdv[1], jdv[2] = al0, al1, al2
    jdv[3] = (Aw[body, 3] - Aw[0, 3]) + (al1 * o2 - al2 * o1)
    jdv[4] = (Aw[body, 4] - Aw[0, 4]) + (al2 * o0 - al0 * o2)
    jdv[5] = (Aw[body, 5] - Aw[0, 5]) + (al0 * o1 - al1 * o0)
    if code == 0:  # in the frame's axes: Rᵀ
        for c in range(nv):
            for h in range(2):
                u0, u1, u2 = J[3 * h, c], J[3 * h + 1, c], J[3 * h + 2, c]
                J[3 * h, c] = R[0, 0] * u0 + R[1, 0] * u1 + R[2, 0] * u2
                J[3 * h + 1, c] = R[0, 1] * u0 + R[1, 1] * u1 + R[2, 1] * u2
                J[3 * h + 2, c] = R[0, 2] * u0 + R[1, 2] * u1 + R[2, 2] * u2
        for h in range(2):
            u0, u1, u2 = jdv[3 * h], jdv[3 * h + 1], jdv[3 * h + 2]
            jdv[3 * h] = R[0, 0] * u0 + R[1, 0] * u1 + R[2, 0] * u2
            jdv[3 * h + 1] = R[0, 1] * u0 + R[1, 1] * u1 + R[2, 1] * u2
            jdv[3 * h + 2] = R[0, 2] * u0 + R[1, 2] * u1 + R[2, 2] * u2
    else:
        jdv[3] += w1 * d2 - w2 * d1
        jdv[4] += w2 * d0 - w0 * d2
        jdv[5] += w0 * d1 - w1 * d0
    # the world origin: the sweep put the root body at the origin; add back its world position
    # (a revolute or spherical joint does not move its body's origin off the joint frame's)
    jt = mi[root, MI_JTYPE]
    if jt == REVOLUTE or jt == SPHERICAL:
        pose_translation(mf[root, MF_PLACEMENT : MF_PLACEMENT + 8], t[0:3])
    else:
        xr = t[8:16]
        xt = local_pose(mi, mf, root, q)
        for k in range(8):
            xr[k] = xt[k]
        pose_translation(xr, t[0:3])
    p[0] = o0 + t[0]
    p[1] = o1 + t[1]
    p[2] = o2 + t[2]


@ijit
def _terms_size(nv):
    return 12 * nv + 67


@njit
def _terms_kernel(mi, mf, q, v, spec, alpha, beta, sw, tw, A, b):
    """``A v̇ = b`` of the bundled constraint kinds (constraints/base.py ``SPEC_I``; ``spec``
    holds per constraint its ``SPEC_I`` integers then its ``SPEC_F`` floats), with the
    Baumgarte terms ``b ← b − 2α A v − β² φ``: the rows `Constraint._terms` and
    `stack_terms` compute in numpy (loops.py, nonholonomic.py: the same formulas; here
    the frames' ``J`` and ``J̇ v`` come from the world-frame sweep ``sw`` that gave ``M`` and
    ``h``, `_frame`).  ``tw``: `_terms_size` scratch floats."""
    nv = v.shape[0]
    w = tw  # one scratch block for the arrays below
    X = w[0:16]
    Ja = view(w, 16, (6, nv))
    Jb = view(w, 16 + 6 * nv, (6, nv))
    o = 12 * nv
    pa, pb = w[o + 16 : o + 19], w[o + 19 : o + 22]
    Ra, Rb = view(w, o + 22, (3, 3)), view(w, o + 31, (3, 3))
    pe = w[o + 40 : o + 46]
    R = view(w, o + 46, (3, 3))
    ga, gb = w[o + 55 : o + 61], w[o + 61 : o + 67]  # J̇ v of frames a and b
    r0 = 0
    w = SPEC_I + SPEC_F
    for c in range(spec.shape[0] // w):
        si = spec[c * w : c * w + SPEC_I]
        sf = spec[c * w + SPEC_I : (c + 1) * w]
        kind = int(si[0])
        dim = int(si[5])
        for r in range(r0, r0 + dim):
            for j in range(nv):
                A[r, j] = 0.0
            b[r] = 0.0
        has_pe = True
        if kind == COUPLING:
            qj, vj, qm, vm = int(si[1]), int(si[2]), int(si[3]), int(si[4])
            A[r0, vj] += 1.0
            A[r0, vm] -= sf[0]
            pe[0] = q[qj] - sf[0] * q[qm] - sf[1]
        elif kind == DIFF_DRIVE:
            _frame(mi, mf, q, int(si[1]), sf[0:8], int(0), sw, Ja, ga, Ra, pa, X)
            for j in range(nv):
                A[r0, j] = Ja[4, j]
            b[r0] = -ga[4]
            has_pe = False
        else:  # LOOP_6D, LOOP_3D (base.py): world-aligned Jacobians of frames a and b
            _frame(mi, mf, q, int(si[1]), sf[0:8], int(2), sw, Ja, ga, Ra, pa, X)
            _frame(mi, mf, q, int(si[2]), sf[8:16], int(2), sw, Jb, gb, Rb, pb, X)
            first = 0 if kind == LOOP_6D else 3
            for k in range(dim):
                row = first + k
                for j in range(nv):
                    A[r0 + k, j] = Jb[row, j] - Ja[row, j]
                b[r0 + k] = -(gb[row] - ga[row])
            if kind == LOOP_6D:  # rotvec(R_b R_aᵀ) (loops.py _rotvec)
                for i in range(3):
                    for j in range(3):
                        R[i, j] = Rb[i, 0] * Ra[j, 0] + Rb[i, 1] * Ra[j, 1] + Rb[i, 2] * Ra[j, 2]
                cth = min(max((R[0, 0] + R[1, 1] + R[2, 2] - 1.0) / 2.0, -1.0), 1.0)
                th = math.acos(cth)
                sth = math.sin(th)
                fac = 0.5 + th * th / 12.0 if sth < 1e-8 else th / (2.0 * sth)
                pe[0] = fac * (R[2, 1] - R[1, 2])
                pe[1] = fac * (R[0, 2] - R[2, 0])
                pe[2] = fac * (R[1, 0] - R[0, 1])
            for k in range(3):
                pe[dim - 3 + k] = pb[k] - pa[k]
        if alpha != 0.0 or beta != 0.0:
            for k in range(dim):
                ve = 0.0
                for j in range(nv):
                    ve += A[r0 + k, j] * v[j]
                if alpha != 0.0:
                    b[r0 + k] -= 2.0 * alpha * ve
                if has_pe and beta != 0.0:
                    b[r0 + k] -= beta * beta * pe[k]
        r0 += dim
    return 0


@njit
def _cfd_checked(mi, mf, q, v, tau, spec, par, out, ws):
    """One state of `constrained_forward_dynamics` in one compiled call: ``M`` and
    ``h = C v + g`` from one world-frame sweep (`dynamics_sweep`:
    one forward kinematics for the two, and the frames' Jacobians and drifts from it), the
    constraint rows (`_terms_kernel`) and the Udwadia–Kalaba solve (`_uk_kernel`).
    ``par = [α, β, rcond, tol]``; ``out = [q̈ (nv), Q_c (nv), λ (m), A (m·nv), b (m)]``.
    Status 0, or 1 to send the call down the general path, which names what is wrong (bad
    input, a singular M, inconsistent constraints, an overflow).  ``ws``: a scratch block used
    when it is large enough (the call gate passes the model's workspace), else one is allocated."""
    nv = mi[0, MI_IV]
    if q.shape[0] != mi[0, MI_IQ] or v.shape[0] != nv or tau.shape[0] != nv or par.shape[0] != 4:
        return 1
    m = (out.shape[0] - 2 * nv) // (nv + 2)
    if out.shape[0] != 2 * nv + m * (nv + 2):
        return 1
    if check_q(mi, q) != 0 or _has_mimic(mi):  # (mimic joints: the general path)
        return 1
    for k in range(nv):
        if not (math.isfinite(v[k]) and math.isfinite(tau[k])):
            return 1
    # one scratch block: M, L, h, info, the rows', the sweep's, the Udwadia–Kalaba step's
    size = (2 * nv * nv + nv + 4 + _terms_size(nv) + dynamics_sweep_size(mi.shape[0], nv)
            + 4 * nv + 2 * m + nv * m + 3 * m * m)
    if ws.shape[0] >= size:  # (the gate's: the model's workspace, no allocation)
        return _cfd_on(mi, mf, q, v, tau, spec, par, out, ws)
    return _cfd_on(mi, mf, q, v, tau, spec, par, out, np.empty(size))


@njit
def _cfd_on(mi, mf, q, v, tau, spec, par, out, w):
    """The work of `_cfd_checked` (arguments checked) on the scratch block ``w``, every
    array without its reference count (`unmanaged`; the caller holds them):
    the sweep and the rows take views of ``w`` per body, each an increment and a decrement of
    a shared count otherwise."""
    mi, mf, q, v, tau, spec, par, out, w = (
        unmanaged(mi), unmanaged(mf), unmanaged(q), unmanaged(v), unmanaged(tau), unmanaged(spec),
        unmanaged(par), unmanaged(out), unmanaged(w))
    nv = mi[0, MI_IV]
    m = (out.shape[0] - 2 * nv) // (nv + 2)
    qdd = out[0:nv]
    Qc = out[nv : 2 * nv]
    lam = out[2 * nv : 2 * nv + m]
    A = view(out, 2 * nv + m, (m, nv))
    b = out[2 * nv + m + m * nv :]
    o = 2 * nv * nv + nv + 4
    o2 = o + _terms_size(nv)
    M = view(w, 0, (nv, nv))
    L = view(w, nv * nv, (nv, nv))
    h = w[2 * nv * nv : 2 * nv * nv + nv]
    info = w[2 * nv * nv + nv : o]
    o3 = o2 + dynamics_sweep_size(mi.shape[0], nv)
    sw = w[o2:o3]
    dynamics_sweep(mi, mf, q, v, sw, M, h)
    if _terms_kernel(mi, mf, q, v, spec, par[0], par[1], sw, w[o:o2], A, b) != 0:
        return 1
    for k in range(nv):
        h[k] = tau[k] - h[k]
    for k in range(4):
        info[k] = 0.0
    _uk_on(M, h, A, b, par[2], L, qdd, Qc, lam, info, w[o3 : o3 + 4 * nv + 2 * m + nv * m + 3 * m * m])
    if info[0] == 1.0 or info[1] > par[3] * info[3]:
        return 1
    for k in range(2 * nv + m):
        if not math.isfinite(out[k]):
            return 1
    return 0


def _c_cfd(mip, mfp, nb1, bufs, lens):
    mi, mf = gate_tables(mip, mfp, nb1)
    return _cfd_checked(mi, mf, gate_vector(bufs, lens, 0), gate_vector(bufs, lens, 1),
                        gate_vector(bufs, lens, 2), gate_vector(bufs, lens, 3),
                        gate_vector(bufs, lens, 4), gate_vector(bufs, lens, 6),
                        gate_vector(bufs, lens, 5))


@kernel(parallel=True)
def _cfd_batch(mi, mf, spec, par, Q, V, T, OUT, status):
    """`_cfd_checked` over a batch of states (``prange``; row ``k`` of ``OUT`` as the
    gate's batch result): each state gets the one-call path's numbers, whatever the batch."""
    none = np.empty(0)  # (no workspace: each state allocates its own)
    for k in nb.prange(Q.shape[0]):
        status[k] = _cfd_checked(mi, mf, Q[k], V[k], T[k], spec, par, OUT[k], none)
