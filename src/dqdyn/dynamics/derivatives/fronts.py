"""The public functions ``rnea_derivatives``, ``aba_derivatives`` and ``hybrid_dynamics_derivatives``
(conventions in the docstring of `dqdyn.dynamics.derivatives`): their call-gate fronts and the
Python paths for batches, external wrenches and models with mimic joints, on the kernels of
`dqdyn.dynamics.derivatives.kernels`."""

from __future__ import annotations

import numba as nb
import numpy as np

from dqdyn._engine.batching import for_batch
from dqdyn._engine.boundary import (
    BAD_SHAPE,
    as_vector,
    as_vector_batch,
    broadcast_batch,
    first_bad,
    is_fast,
    raise_status,
)
from dqdyn._engine.checks import not_a_model
from dqdyn._engine.gate import (
    GATE,
    NV,
    NV3,
    SPLIT,
    fast_front,
    gate_address,
    gate_entry,
    gate_tables,
    gate_vector,
)
from dqdyn.dynamics.articulated import MIMIC
from dqdyn.dynamics.derivatives.kernels import (
    SINGULAR_M,
    _aba_derivatives_entry,
    _mimic_aba_derivatives_entry,
    _mimic_rnea_derivatives_entry,
    _rnea_derivatives_entry,
    aba_derivatives_batch,
    aba_derivatives_kernel,
    rnea_derivatives_batch,
    rnea_derivatives_kernel,
)
from dqdyn.errors import ModelError, NonFiniteError, ShapeError, SingularError
from dqdyn.multibody.model import MI_IV, Model

_NO_FEXT = np.zeros((1, 1, 6))
_NO_FEXT1 = _NO_FEXT[0]


def _c_rnea_derivatives(mip, mfp, nb1, bufs, lens):
    mi, mf = gate_tables(mip, mfp, nb1)
    nv = mi[0, MI_IV]
    return _rnea_derivatives_entry(mi, mf, gate_vector(bufs, lens, 0), gate_vector(bufs, lens, 1),
                                   gate_vector(bufs, lens, 2), nb.carray(bufs[3], (3, nv, nv)))


def _c_aba_derivatives(mip, mfp, nb1, bufs, lens):
    mi, mf = gate_tables(mip, mfp, nb1)
    nv = mi[0, MI_IV]
    return _aba_derivatives_entry(mi, mf, gate_vector(bufs, lens, 0), gate_vector(bufs, lens, 1),
                                  gate_vector(bufs, lens, 2), nb.carray(bufs[3], (3, nv, nv)))


_RNEA_D_C = 0  # their addresses, set on first use
_ABA_D_C = 0
# the public functions' compiled fronts (gate.fast_front): one state or a small batch of a model
# without mimic joints, the three matrices split in C; anything else calls the Python function
_RNEA_D_ENTRY = gate_entry(globals(), "_RNEA_D_C", _c_rnea_derivatives, 3, NV3, NV)
_ABA_D_ENTRY = gate_entry(globals(), "_ABA_D_C", _c_aba_derivatives, 3, NV3, NV)


def _c_mimic_rnea_derivatives(mip, mfp, nb1, bufs, lens):
    mi, mf = gate_tables(mip, mfp, nb1)
    mm = gate_vector(bufs, lens, 3)
    nv = mi[0, MI_IV] - mm.shape[0] // 4
    if lens[4] != 3 * nv * nv:
        return BAD_SHAPE
    return _mimic_rnea_derivatives_entry(mi, mf, gate_vector(bufs, lens, 0), gate_vector(bufs, lens, 1),
                                         gate_vector(bufs, lens, 2), mm, nb.carray(bufs[4], (3, nv, nv)))


def _c_mimic_aba_derivatives(mip, mfp, nb1, bufs, lens):
    mi, mf = gate_tables(mip, mfp, nb1)
    mm = gate_vector(bufs, lens, 3)
    nv = mi[0, MI_IV] - mm.shape[0] // 4
    if lens[4] != 3 * nv * nv:
        return BAD_SHAPE
    return _mimic_aba_derivatives_entry(mi, mf, gate_vector(bufs, lens, 0), gate_vector(bufs, lens, 1),
                                        gate_vector(bufs, lens, 2), mm, nb.carray(bufs[4], (3, nv, nv)))


_MIMIC_RNEA_D_C = 0
_MIMIC_ABA_D_C = 0


def _mimic_gated(model: Model, addr, body, name, q, v, a):
    """The compiled chain rule through the call gate (a single state or a small batch), or None
    (bad input, a singular M, a large batch: the numpy chain rule then runs and names it)."""
    g = model._index.get("mimic_gate")
    if g is None:  # (the gate's tables, map and sizes, kept on the model: a Model never changes)
        mx, G, src, scale, offset = model.independent_mimic()
        nv = model.nv
        mm = np.column_stack([src, np.argmax(G[nv:] != 0, axis=1), scale, offset]).astype(np.float64).ravel()
        g = model._index["mimic_gate"] = (mx.mi, mx.mf, mm, nv, 3 * nv)
    mi, mf, mm, nv, rows = g
    r = GATE(addr or gate_address(globals(), name, body), mi, mf, rows, nv, q, v, a, mm)
    if type(r) is not np.ndarray:
        return None
    return SPLIT(r, _LAYOUTS.get(nv) or _layout(nv), 2)


_LAYOUTS = {}


def _layout(nv: int) -> tuple:
    """The gate result's three (nv, nv) parts, for `SPLIT` (one state or a batch)."""
    got = _LAYOUTS.get(nv)
    if got is None:
        got = _LAYOUTS[nv] = ((nv, nv),) * 3
    return got




def _gated(model: Model, addr, body, name, q, v, a, what):
    """The gate call of both public functions: the three matrices, or None for the general path."""
    try:
        nv = model.nv
    except AttributeError:
        raise not_a_model(model) from None
    r = GATE(addr or gate_address(globals(), name, body), model.mi, model.mf, 3 * nv, nv, q, v, a)
    if type(r) is np.ndarray:
        return SPLIT(r, _LAYOUTS.get(nv) or _layout(nv), 2)
    if r is not None and r != BAD_SHAPE and r != MIMIC:
        _raise(model, r, None, what)
    return None


def _no_mimic(model: Model, what: str):
    if model._index["mimic"]:
        raise ModelError(
            f"{what}: model {model.name!r} has mimic joints {list(model.mimic_joints)}; analytic "
            "derivatives of hybrid dynamics are not available for coupled joints (load the URDF "
            "with mimic='independent' to treat them as free joints)"
        )


def _raise(model: Model, st: int, row=None, what: str = ""):
    if st == SINGULAR_M:
        raise SingularError(f"{what}: the mass matrix is singular at this configuration"
                            + ("" if row is None else f" (batch element {row})"))
    raise_status(model, st, row)


def _run(model: Model, kernel, batch_kernel, q, v, a, fext, aname, awhat, what):
    """Shape checks, broadcasting and the one compiled call shared by both public functions."""
    nv = model.nv
    if fext is None and is_fast(q, v, a):
        out = np.empty((3, nv, nv))
        st = kernel(model.mi, model.mf, q, v, a, _NO_FEXT1, False, out)
        if st:
            if st == BAD_SHAPE:
                as_vector(q, model.nq, "q", "the configuration, model.nq entries")
                as_vector(v, nv, "v", "the velocity, model.nv entries")
                as_vector(a, nv, aname, awhat)
            _raise(model, st, None, what)
        return out[0], out[1], out[2]
    Q, bq = as_vector_batch(q, model.nq, "q", "the configuration, model.nq entries")
    V, bv = as_vector_batch(v, nv, "v", "the velocity, model.nv entries")
    A, ba = as_vector_batch(a, nv, aname, awhat)
    nb1 = model.nbodies + 1
    if fext is not None:
        F = np.asarray(fext, dtype=np.float64)
        if F.shape[-2:] != (nb1, 6):
            raise ShapeError(f"fext must have shape (..., {nb1}, 6), got {F.shape}")
        if not np.all(np.isfinite(F)):  # (rnea_derivatives' kernel does not check fext)
            raise NonFiniteError("fext contains NaN or infinity")
        bf = F.shape[:-2]
        (Q, V, A, F2), batch = broadcast_batch([Q, V, A, F.reshape(-1, nb1 * 6)], [bq, bv, ba, bf])
        F = np.ascontiguousarray(F2.reshape(-1, nb1, 6))
        use = True
    else:
        (Q, V, A), batch = broadcast_batch([Q, V, A], [bq, bv, ba])
        F, use = _NO_FEXT, False
    N = Q.shape[0]
    OUT = np.empty((N, 3, nv, nv))
    status = np.zeros(N, dtype=np.int64)
    if N == 1:
        status[0] = kernel(model.mi, model.mf, Q[0], V[0], A[0], F[0], use, OUT[0])
    else:
        for_batch(batch_kernel, Q.shape[0], model.mi.shape[0])(model.mi, model.mf, Q, V, A, F, use, OUT, status)
    st, row = first_bad(status)
    if st:
        _raise(model, st, row if N > 1 else None, what)
    sh = batch + (nv, nv)
    return OUT[:, 0].reshape(sh), OUT[:, 1].reshape(sh), OUT[:, 2].reshape(sh)


def _expanded(model: Model, q, v, a, aname, awhat):
    """Inputs of a model with mimic joints mapped to `Model.independent_mimic`'s model."""
    mx, G, src, scale, offset = model.independent_mimic()
    Q, bq = as_vector_batch(q, model.nq, "q", "the configuration, model.nq entries")
    V, bv = as_vector_batch(v, model.nv, "v", "the velocity, model.nv entries")
    A, ba = as_vector_batch(a, model.nv, aname, awhat)
    (Q, V, A), batch = broadcast_batch([Q, V, A], [bq, bv, ba])
    Qx = np.concatenate([Q, Q[:, src] * scale + offset], axis=1)
    sh = batch + (mx.nv,)
    return mx, G, Qx.reshape(batch + (mx.nq,)), (V @ G.T).reshape(sh), (A @ G.T).reshape(sh)


def _plain(model: Model, q, v, x, xname: str):
    """``q``, ``v``, ``x`` as C-contiguous writable float64 arrays of their own shapes."""
    Q, bq = as_vector_batch(q, model.nq, "q", "the configuration, model.nq entries")
    V, bv = as_vector_batch(v, model.nv, "v", "the velocity, model.nv entries")
    X, bx = as_vector_batch(x, model.nv, xname, "model.nv entries")
    return Q.reshape(bq + (model.nq,)), V.reshape(bv + (model.nv,)), X.reshape(bx + (model.nv,))


def _mimic_rnea_derivatives(model: Model, q, v, a, fext):
    """``Gᵀ (∂τ_x/∂x_x) G`` on the independent model (`Model.independent_mimic`)."""
    mx, G, qx, vx, ax = _expanded(model, q, v, a, "a", "the acceleration, model.nv entries")
    return tuple(G.T @ D @ G for D in rnea_derivatives(mx, qx, vx, ax, fext))


@fast_front(_RNEA_D_ENTRY, out=False, parts=3, skip=MIMIC)
def rnea_derivatives(model: Model, q, v, a, fext=None):
    """``(∂τ/∂q, ∂τ/∂v, ∂τ/∂a)`` of inverse dynamics, each (..., nv, nv).

    ``∂τ/∂a`` is the mass matrix.  Configuration derivatives follow the tangent convention of
    `dqdyn.integrate` (docstring of `dqdyn.dynamics.derivatives`).  ``fext`` (..., nbodies+1, 6) is held constant in
    the body frames.  One compiled O(n·d) call (Carpentier & Mansard's world-frame sweeps).
    On a model with mimic joints: the chain rule ``Gᵀ (∂τ_x/∂x_x) G`` through the model with
    the mimic joints made independent (`Model.independent_mimic`).
    """
    if fext is None and GATE is not None:
        # (a model with mimic joints straight to its own gate entry: through the other one first,
        # which declines it, its call cost ~0.8 µs more)
        try:
            mimic = model._index["mimic"]
        except AttributeError:
            mimic = False  # (not a Model: _gated names it)
        if mimic:
            r = _mimic_gated(model, _MIMIC_RNEA_D_C, _c_mimic_rnea_derivatives, "_MIMIC_RNEA_D_C", q, v, a)
            if r is None:  # (a list, a view, another dtype: the route of plain arrays)
                r = _mimic_gated(model, _MIMIC_RNEA_D_C, _c_mimic_rnea_derivatives, "_MIMIC_RNEA_D_C", *_plain(model, q, v, a, "a"))
        else:
            r = _gated(model, _RNEA_D_C, _c_rnea_derivatives, "_RNEA_D_C", q, v, a, "rnea_derivatives")
        if r is not None:
            return r
    if model._index["mimic"]:
        return _mimic_rnea_derivatives(model, q, v, a, fext)
    return _run(model, rnea_derivatives_kernel, rnea_derivatives_batch, q, v, a, fext,
                "a", "the acceleration, model.nv entries", "rnea_derivatives")


@fast_front(_ABA_D_ENTRY, out=False, parts=3, skip=MIMIC)
def aba_derivatives(model: Model, q, v, tau, fext=None):
    """``(∂q̈/∂q, ∂q̈/∂v, ∂q̈/∂τ)`` of forward dynamics, each (..., nv, nv).

    ``∂q̈/∂x = −M⁻¹ ∂τ/∂x`` at ``q̈ = FD(q, v, τ)``, ``∂q̈/∂τ = M⁻¹`` (``M⁻¹`` by the
    recursive inverse of `mass_matrix_inverse`, docstring of `kernels`).  One compiled call.
    On a model with mimic joints: ``q̈ = aba(...)`` of the reduced model, then
    ``∂q̈/∂x = −M⁻¹ Gᵀ (∂τ_x/∂x_x) G`` with ``M = Gᵀ M_x G`` (`Model.independent_mimic`).
    """
    if fext is None and GATE is not None:
        # (a model with mimic joints straight to its own gate entry: through the other one first,
        # which declines it, its call cost ~0.8 µs more)
        try:
            mimic = model._index["mimic"]
        except AttributeError:
            mimic = False  # (not a Model: _gated names it)
        if mimic:
            r = _mimic_gated(model, _MIMIC_ABA_D_C, _c_mimic_aba_derivatives, "_MIMIC_ABA_D_C", q, v, tau)
            if r is None:  # (a list, a view, another dtype: the route of plain arrays)
                r = _mimic_gated(model, _MIMIC_ABA_D_C, _c_mimic_aba_derivatives, "_MIMIC_ABA_D_C", *_plain(model, q, v, tau, "tau"))
        else:
            r = _gated(model, _ABA_D_C, _c_aba_derivatives, "_ABA_D_C", q, v, tau, "aba_derivatives")
        if r is not None:
            return r
    if model._index["mimic"]:
        return _mimic_aba_derivatives(model, q, v, tau, fext)
    return _run(model, aba_derivatives_kernel, aba_derivatives_batch, q, v, tau, fext,
                "tau", "generalized forces, model.nv entries", "aba_derivatives")


def _mimic_aba_derivatives(model: Model, q, v, tau, fext):
    from dqdyn.dynamics.aba import aba

    qdd = aba(model, q, v, tau, fext)  # (checks the inputs and broadcasts them with fext)
    mx, G, qx, vx, ax = _expanded(model, q, v, qdd, "tau", "generalized forces, model.nv entries")
    dq, dv, M = (G.T @ D @ G for D in rnea_derivatives(mx, qx, vx, ax, fext))
    Minv = np.linalg.inv(M)
    return -(Minv @ dq), -(Minv @ dv), Minv


__all__ = ["aba_derivatives", "rnea_derivatives"]


def hybrid_dynamics_derivatives(model: Model, q, v, a, tau, prescribed, fext=None):
    """Derivatives of hybrid dynamics (the corrected form of [Kim2012, Table 7], whose inputs and final ``∂F_i`` lines are garbled in
    print).

    Hybrid dynamics maps the inputs ``u`` (``u[k] = a[k]`` for prescribed DoFs, ``tau[k]`` for
    the others) to the outputs ``y`` (``y[k] = τ[k]`` for prescribed DoFs, ``q̈[k]`` for the
    others).  Returns ``(∂y/∂q, ∂y/∂v, ∂y/∂u)``, each (..., nv, nv), from the inverse-dynamics
    derivatives at the hybrid solution: with ``P`` prescribed and ``F`` free DoFs,
    ``∂q̈_F/∂x = −M_FF⁻¹ ∂τ_F/∂x``, ``∂τ_P/∂x = ∂τ_P/∂x|_{q̈} + M_PF ∂q̈_F/∂x`` (x = q, v),
    ``∂q̈_F/∂a_P = −M_FF⁻¹ M_FP``, ``∂q̈_F/∂τ_F = M_FF⁻¹``, ``∂τ_P/∂a_P = M_PP + M_PF ∂q̈_F/∂a_P``,
    ``∂τ_P/∂τ_F = M_PF M_FF⁻¹``.
    """
    from dqdyn.dynamics.hybrid import hybrid_dynamics

    _no_mimic(model, "hybrid_dynamics_derivatives")
    P = np.asarray(prescribed, dtype=bool)
    qdd, _ = hybrid_dynamics(model, q, v, a, tau, P, fext=fext)
    dq, dv, M = rnea_derivatives(model, q, v, qdd, fext=fext)
    Fr = ~P
    nv = model.nv
    MFF = M[..., Fr, :][..., :, Fr]
    MPF = M[..., P, :][..., :, Fr]
    MFP = M[..., Fr, :][..., :, P]
    MPP = M[..., P, :][..., :, P]
    try:
        L = np.linalg.cholesky(MFF)
    except np.linalg.LinAlgError:
        raise SingularError("hybrid_dynamics_derivatives: the free-DoF block of M is singular") from None

    def solve(B):
        y = np.linalg.solve(L, B)
        return np.linalg.solve(np.swapaxes(L, -1, -2), y)

    out = []
    for D in (dq, dv):
        Y = np.zeros(D.shape)
        dF = -solve(D[..., Fr, :])
        Y[..., Fr, :] = dF
        Y[..., P, :] = D[..., P, :] + MPF @ dF
        out.append(Y)
    Yu = np.zeros(M.shape)
    eye = np.eye(int(Fr.sum()))
    MFFinv = solve(np.broadcast_to(eye, MFF.shape))
    dF_daP = -MFFinv @ MFP
    idxF, idxP = np.flatnonzero(Fr), np.flatnonzero(P)
    Yu[..., idxF[:, None], idxP[None, :]] = dF_daP
    Yu[..., idxF[:, None], idxF[None, :]] = MFFinv
    Yu[..., idxP[:, None], idxP[None, :]] = MPP + MPF @ dF_daP
    Yu[..., idxP[:, None], idxF[None, :]] = MPF @ MFFinv
    _ = nv
    return out[0], out[1], Yu


__all__ += ["hybrid_dynamics_derivatives"]
