"""Forward dynamics in O(n): the articulated-body algorithm in dual quaternion form.

[Kim2012, Table 3] (forward dynamics) and Table 4 (hybrid dynamics), [Kim2012, §2.2–§2.3],
written with the dual quaternion operations of [Silva2022, §2]:

* twists ``ξ = ω + ε v`` and wrenches ``ζ = f + ε τ`` are pure dual quaternions (vec6
  ``[ω, v]`` and ``[f, τ]``) and both change frame with the **same** ``Ad(x) ζ = x ζ x*``
  [Silva2022, eq. (3)], so Kim's coadjoint ``Ad*_{T⁻¹}`` is simply ``Ad(x_i^λ)`` here;
* Kim's ``ad_V`` (on twists) and ``−ad*_V`` (on wrenches) are both the dual quaternion cross
  product ``V × ·`` [Silva2022, eq. (8)];
* ``Sᵀ F`` is the power pairing ``⟨S, F⟩`` of the motion axes with a wrench;
* an inertia (rigid or articulated) is a linear map ``twist → wrench`` (a 6×6 array in the vec6
  layouts); it moves to the parent frame as ``Ad(x) Î Ad(x*)``.

Per body, with ``x_i^λ = x_J^λ x_J(q_i)``:

forward:   ``V_i = Ad(x_i^λ*) V_λ + S_i q̇_i``,  ``η_i = V_i × S_i q̇_i + Ṡ_i q̇_i``
backward:  ``Î_i = I_i + Σ_k Ad(x_k^i) Π_k Ad(x_k^i*)``,
           ``B̂_i = V_i × (I_i V_i) − F_i^ext + Σ_k Ad(x_k^i) β_k``,
           ``Ψ_i = ⟨S_i, Î_i S_i⟩⁻¹``,  ``Π_i = Î_i − Î_i S_i Ψ_i ⟨S_i, Î_i ·⟩``,
           ``β_i = B̂_i + Î_i (η_i + S_i Ψ_i (τ_i − ⟨S_i, Î_i η_i + B̂_i⟩))``
forward:   ``q̈_i = Ψ_i (τ_i − ⟨S_i, Î_i (Ad(x_i^λ*) V̇_λ + η_i) + B̂_i⟩)``,
           ``V̇_i = Ad(x_i^λ*) V̇_λ + S_i q̈_i + η_i``

Gravity enters as the base acceleration ``V̇_0 = −g`` (Kim's footnote 6).  The sweep itself is
`dqdyn.dynamics.hybrid.hybrid_kernel` [Kim2012, Table 4] with no prescribed DoF; the
pieces it shares with ``M⁻¹`` and the constrained variants are in `articulated`.
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np

from dqdyn._engine.batching import BLOCKS, run_chunked
from dqdyn._engine.boundary import (
    BAD_SHAPE,
    BAD_TAU_FINITE,
    ND,
    OK,
    as_vector,
    as_vector_batch,
    lazy_batch,
    out_batch,
    raise_status,
)
from dqdyn._engine.checks import not_a_model, real_array
from dqdyn._engine.gate import (
    GATE,
    NV,
    T_MF,
    T_MI,
    T_V,
    armed_call,
    fast_front,
    gate_address,
    gate_entry,
    gate_tables,
    gate_vector,
)
from dqdyn._engine.views import unmanaged
from dqdyn.dynamics import newton_euler as _ne  # (_ne._RNEA_FEXT_ENTRY: rnea's entry, read at the call)
from dqdyn.dynamics.articulated import (  # (and the decorators of the articulated-body kernels)
    K_COLS,
    MIMIC,
    _gate_status,
    _has_mimic,
    _raise,
    ijit,
    njit,
    pjit,
    workspace_size_nb,
)
from dqdyn.dynamics.hybrid import _run_hybrid, hybrid_kernel
from dqdyn.dynamics.lagrange import _solve_checked, solve_kernel
from dqdyn.dynamics.lanes import LANES
from dqdyn.dynamics.lanes_aba import aba_lanes_batch, lanes_aba_support
from dqdyn.dynamics.newton_euler import _inputs, _rnea_checked, rnea_entry
from dqdyn.errors import NonFiniteError
from dqdyn.multibody.model import (
    MI_IQ,
    MI_IV,
    Model,
)

# hybrid_kernel IR-inlined into aba_kernel (compiled once, shared by aba's entry, gate and batch
# kernels), where the compiler drops its prescribed-DoF and external-force branches; as an
# ordinary call it cost aba 25 % per call (Panda: 0.77-0.83x Pinocchio instead of 0.60-0.64x).
# (under NUMBA_DISABLE_JIT, hybrid_kernel is a plain function and has no py_func)
_hybrid_inline = ijit(getattr(hybrid_kernel, "py_func", hybrid_kernel))


@njit
def aba_kernel(mi, mf, q, v, tau, qdd, ws):
    """The articulated-body algorithm [Kim2012, Table 3]: `hybrid_kernel` with no
    prescribed DoF and no external force.  ``ws`` as for `hybrid_kernel`."""
    mi, mf, q, v, tau, qdd, ws = (unmanaged(mi), unmanaged(mf), unmanaged(q), unmanaged(v),
                                  unmanaged(tau), unmanaged(qdd), unmanaged(ws))
    nb1 = mi.shape[0]
    nv = v.shape[0]
    o = (nb1 + 1) * K_COLS
    tau_out = ws[o : o + nv]
    empty = ws[o:o]
    return _hybrid_inline(mi, mf, q, v, tau, ws[o:o].reshape((0, 6)), False, empty, empty, qdd,
                          tau_out, ws)


@njit
def aba_entry(mi, mf, q, v, tau, qdd):
    """Single-state fast path of `aba` (`aba_checked` with its own scratch)."""
    return aba_checked(mi, mf, q, v, tau, qdd, np.empty(workspace_size_nb(mi.shape[0], mi[0, MI_IV])))


@ijit
def aba_checked(mi, mf, q, v, tau, qdd, ws):
    """Single-state `aba` on the flat scratch ``ws``: lengths and mimic joints checked."""
    nv = mi[0, MI_IV]
    if (q.shape[0] != mi[0, MI_IQ] or v.shape[0] != nv or tau.shape[0] != nv or qdd.shape[0] != nv
            or ws.shape[0] < workspace_size_nb(mi.shape[0], nv)):
        return BAD_SHAPE
    if _has_mimic(mi):
        return MIMIC
    return aba_kernel(mi, mf, q, v, tau, qdd, ws)


_ABA = None  # aba_entry, armed on first use (gate.armed_call)
ABA_SIG = (T_MI, T_MF, T_V, T_V, T_V, T_V)


# gate kernels (see gate.gate_address): raw buffers → the entries above
def _c_aba(mip, mfp, nb1, bufs, lens):
    mi, mf = gate_tables(mip, mfp, nb1)
    return aba_checked(mi, mf, gate_vector(bufs, lens, 0), gate_vector(bufs, lens, 1),
                       gate_vector(bufs, lens, 2), gate_vector(bufs, lens, 4),
                       gate_vector(bufs, lens, 3))


_ABA_C = 0  # its address, set on first use
_ABA_ENTRY = gate_entry(globals(), "_ABA_C", _c_aba, 3, NV, -1, scratch=True)


@njit
def aba_mimic_entry(mi, mf, q, v, tau, qdd):
    """`aba` of a model with mimic joints, one state, in one compiled call: ``M q̈ = τ − h``
    with ``h = rnea(q, v, 0)`` and ``M`` the CRBA matrix of the model as it is (each mimic joint's
    terms already in its master's entry: ``Gᵀ h_full``, ``Gᵀ M_full G``), solved by Cholesky
    (`dqdyn.dynamics.lagrange.solve_kernel`) — `_aba_reduced`'s route and
    arithmetic, so the same bits.  Status: OK, BAD_SHAPE, or MIMIC for anything else (a
    non-finite input, a singular ``M``: `_aba_reduced` then names it)."""
    nv = mi[0, MI_IV]
    if q.shape[0] != mi[0, MI_IQ] or v.shape[0] != nv or tau.shape[0] != nv or qdd.shape[0] != nv:
        return BAD_SHAPE
    for i in range(nv):
        if not math.isfinite(tau[i]):
            return MIMIC
    if rnea_entry(mi, mf, q, v, np.empty(0), qdd) != OK:  # h (an empty a: nonlinear effects)
        return MIMIC
    B = np.empty((nv, 1))
    for i in range(nv):
        B[i, 0] = tau[i] - qdd[i]
    if solve_kernel(mi, mf, q, np.empty((nv, nv)), B) != OK:
        return MIMIC
    for i in range(nv):
        qdd[i] = B[i, 0]
    return OK


def _c_aba_mimic(mip, mfp, nb1, bufs, lens):
    mi, mf = gate_tables(mip, mfp, nb1)
    return aba_mimic_entry(mi, mf, gate_vector(bufs, lens, 0), gate_vector(bufs, lens, 1),
                           gate_vector(bufs, lens, 2), gate_vector(bufs, lens, 3))


_ABA_MIMIC_C = 0  # its address, set on first use


def _aba_mimic(model: Model, q, v, tau, out):
    """`aba` of a model with mimic joints without ``fext``: one state or a small batch of
    float64 vectors through the call gate (`aba_mimic_entry`), the rest
    `_aba_reduced`."""
    if GATE is not None and out is None:
        r = GATE(_ABA_MIMIC_C or gate_address(globals(), "_ABA_MIMIC_C", _c_aba_mimic),
                 model.mi, model.mf, model.nv, -1, q, v, tau)
        if type(r) is ND:
            return r
    return _aba_reduced(model, q, v, tau, None, out)


@pjit
def aba_batch(mi, mf, Q, V, TAU, QDD, status):
    nb1 = mi.shape[0]
    nv = V.shape[1]
    N = Q.shape[0]
    nblk = min(N, BLOCKS)
    for b in nb.prange(nblk):  # blocks of states sharing one workspace (15 kB for a 7-DoF arm)
        ws = np.empty(workspace_size_nb(nb1, nv))
        for n in range(b * N // nblk, (b + 1) * N // nblk):
            status[n] = aba_kernel(mi, mf, Q[n], V[n], TAU[n], QDD[n], ws)


@fast_front(_ABA_ENTRY, skip=MIMIC)
def aba(model: Model, q, v, tau, fext=None, *, out=None) -> np.ndarray:
    """Forward dynamics by the articulated-body algorithm [Kim2012, Table 3]: the joint
    accelerations ``q̈ = M(q)⁻¹ (τ − C(q, v) v − g(q) + Σ Jᵢᵀ fextᵢ)``, in O(n).

    On a model with mimic joints the recursion does not apply (a mimic joint couples DoFs of
    different bodies); there ``q̈`` solves the reduced system ``Gᵀ M_full G q̈ = τ − Gᵀ h_full``
    by Cholesky (`_aba_reduced`), as Pinocchio does for mimic joints.

    Parameters
    ----------
    model : Model
    q : array (..., nq)
        Configuration (rad for rotations, m for translations; unit quaternion / unit dual
        quaternion blocks for spherical / free joints, see the README's Conventions).
    v : array (..., nv)
        Generalized velocity (rad/s, m/s; free joints: the body twist ``[ω, v]``).
    tau : array (..., nv)
        Generalized forces (N·m on rotational coordinates, N on translational ones).
    fext : array (..., nbodies + 1, 6), optional
        Wrenches ``[f, τ]`` (N, N·m) applied to each body, in the body frame at its origin
        (row 0, the world, ignored).
    out : array (..., nv), optional
        Where to write the result (e.g. an ``np.memmap`` for a batch larger than memory;
        batches run in chunks of `dqdyn.config.set_batch_chunk` states).

    Returns
    -------
    qdd : array (..., nv)
        rad/s², m/s² (free joints: the derivative of the body twist).

    Raises
    ------
    ShapeError
        ``q``, ``v``, ``tau``, ``fext`` or ``out`` of the wrong shape (the message names it).
    NonFiniteError
        NaN or inf in an input.
    NotUnitError
        A spherical or free joint's quaternion is off the unit sphere.
    SingularError
        The articulated inertia seen by a joint is singular (a joint that moves no mass); the
        message names the joint.
    """
    if fext is None:
        # (a model with mimic joints straight to its own gate entry: the front sends it here)
        try:
            mimic = model._index["mimic"]
        except AttributeError:
            mimic = False  # (not a Model: named below)
        if mimic:
            return _aba_mimic(model, q, v, tau, out)
        r = _ABA_ENTRY(model, q, v, tau) if out is None else _ABA_ENTRY(model, q, v, tau, out)
        if type(r) is ND:
            return r
        _gate_status(model, r, "aba")
    try:
        model.mi  # noqa: B018  (AttributeError: not a Model)
    except AttributeError:
        raise not_a_model(model) from None
    if fext is None and type(q) is ND and q.ndim == 1:
        r = _aba_vectors(model, q, v, tau, out)
        if r is not None:
            return r
    if model._index["mimic"]:
        return _aba_reduced(model, q, v, tau, fext, out)
    if fext is None and out is None:
        # one state given as lists, other dtypes or views: each input converted once (np.ndim of
        # a list would convert it once more), then the entry kernel — not the public front again
        # (a batch kernel would start the thread pool for one state)
        q1 = q if isinstance(q, ND) else real_array(q, "q", finite=False)
        v1 = v if isinstance(v, ND) else real_array(v, "v", finite=False)
        t1 = tau if isinstance(tau, ND) else real_array(tau, "tau", finite=False)
        if q1.ndim == 1 and v1.ndim == 1 and t1.ndim == 1:
            q1 = as_vector(q1, model.nq, "q", "the configuration, model.nq entries")
            v1 = as_vector(v1, model.nv, "v", "the velocity, model.nv entries")
            t1 = as_vector(t1, model.nv, "tau", "generalized forces, model.nv entries")
            if q1 is not q or v1 is not v or t1 is not tau:  # (else the entry declined them)
                r = _ABA_ENTRY(model, q1, v1, t1)
                if type(r) is ND:
                    return r
                _gate_status(model, r, "aba")
                r = _aba_vectors(model, q1, v1, t1, None)
                if r is not None:
                    return r
        q, v, tau = q1, v1, t1
    if fext is None:
        Q, bq = as_vector_batch(q, model.nq, "q", "the configuration, model.nq entries")
        V, bv = as_vector_batch(v, model.nv, "v", "the velocity, model.nv entries")
        T, bt = as_vector_batch(tau, model.nv, "tau", "generalized forces, model.nv entries")
        (Q, V, T), batch, N = lazy_batch([Q, V, T], [bq, bv, bt])
        QDD = out_batch(out, batch + (model.nv,))
        QDD = np.empty((N, model.nv)) if QDD is None else QDD.reshape(N, model.nv)
        if N >= LANES and lanes_aba_support(model):  # 16 states at once, same bits
            run_chunked(aba_lanes_batch, (model.mi, model.mf), [Q, V, T], [QDD], N, (1, 2),
                        lambda st, row: _raise(model, st, row if batch else None))
        else:
            run_chunked(aba_batch, (model.mi, model.mf), [Q, V, T], [QDD], N, (),
                        lambda st, row: _raise(model, st, row if batch else None))
        return QDD.reshape(batch + (model.nv,))
    qdd = _run_hybrid(model, q, v, tau, np.zeros(model.nv), np.zeros(model.nv), fext)[0]
    if out is None:
        return qdd
    o = out_batch(out, qdd.shape)
    o[...] = qdd
    return out


def _aba_vectors(model: Model, q, v, tau, out):
    """One state of ``aba`` without ``fext`` through the armed entry kernel `aba_entry`: ``q̈``,
    or None where it declines (not plain float64 vectors, a wrong length: the general path
    then converts or names the argument); a bad value raises its error here."""
    qdd = np.empty(model.nv) if out is None else out
    try:
        st = _ABA(model.mi, model.mf, q, v, tau, qdd)
    except TypeError:
        st = armed_call(globals(), "_ABA", aba_entry, ABA_SIG, (model.mi, model.mf, q, v, tau, qdd))
    if st == OK:
        return qdd
    if st is not None and st != BAD_SHAPE:
        if st == MIMIC:
            return _aba_reduced(model, q, v, tau, None, out)
        _raise(model, st)
    return None


def _aba_reduced(model: Model, q, v, tau, fext, out):
    """Forward dynamics of a model with mimic joints: ``M q̈ = τ − h`` with the reduced
    ``M = Gᵀ M_full G`` and ``h = Gᵀ h_full`` that `dqdyn.mass_matrix` and
    `dqdyn.rnea` already return for such a model (each mimic joint's terms added to its
    master's entry; ``G`` maps the independent velocities to all joints'), solved by Cholesky
    of the CRBA matrix — Pinocchio's route for mimic joints (``crba`` + a dense solve)."""
    nv = model.nv
    T, bt = as_vector_batch(tau, nv, "tau", "generalized forces, model.nv entries")
    bad = np.flatnonzero(~np.isfinite(T).all(axis=-1))
    if bad.size:
        raise_status(model, BAD_TAU_FINITE, int(bad[0]) if bt else None)
    # each input converted once: h = rnea(q, v, 0[, fext]) (nonlinear_effects without fext) and
    # the solve share the converted q; `dqdyn.nonlinear_effects`, `rnea` and
    # `solve_mass_matrix` would each convert and check it again
    a0 = None if fext is None else np.zeros(nv)
    h = None
    if (fext is not None and not bt and type(fext) is ND and fext.ndim == 2 and type(q) is ND
            and q.ndim == 1 and q.flags.writeable and type(v) is ND and v.ndim == 1):
        # one state of plain vectors: h through rnea's gate entry with fext (types checked in C,
        # nothing converted; q writable, as the solve kernel takes it); what it declines goes on
        # to the general route
        r = _ne._RNEA_FEXT_ENTRY(model, q, v, a0, fext.reshape(-1))
        if type(r) is ND:
            h, Q, batch, N = r, q.reshape(1, model.nq), (), 1
        elif r is not None and r != BAD_SHAPE:
            raise_status(model, r)
    if h is None:
        (Q, V, A, F), batch, N = _inputs(model, q, v, a0, fext, False, fext is None)
        h = _rnea_checked(model, Q, V, A, F, batch, N)
    B = T.reshape(bt + (nv,)) - h
    if not np.all(np.isfinite(B)):  # (finite τ and h whose difference overflows)
        raise NonFiniteError("b contains NaN or infinity")
    bq = batch if Q.shape[0] == N and batch else ()  # (a q shared by the batch stays one row)
    qdd = _solve_checked(model, Q, bq, B[..., None], B.shape[:-1])[..., 0]
    if out is None:
        return qdd
    o = out_batch(out, qdd.shape)
    o[...] = qdd
    return out
