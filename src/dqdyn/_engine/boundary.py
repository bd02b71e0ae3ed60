"""The boundary of the compiled algorithms: input checks and the status codes of the kernels.

Validation is split in two: the Python wrapper checks shapes (cheap), and the compiled kernel
checks values (finite numbers, unit quaternions of spherical/free joints) in its first loop and
returns a status code, so a single call costs one dispatch.  `raise_status` turns the code
into a `dqdyn.errors` exception that names the argument.  Batch shapes are broadcast here
(`broadcast_batch`, `lazy_batch`); running a batch is `batching`'s job, and the
C call gate for single states is `gate`'s.
"""

from __future__ import annotations

import math

import numpy as np

from dqdyn._engine.checks import kernel_rows, real_array
from dqdyn.algebra._core import jit
from dqdyn.errors import NonFiniteError, NotUnitError, ShapeError
from dqdyn.multibody.joints import FREE, JOINT_TYPE_NAMES, SPHERICAL
from dqdyn.multibody.model import MI_IQ, MI_IV, MI_JTYPE, MI_NQ, Model

F64 = np.dtype(np.float64)
ND = np.ndarray

#: tolerance on |r| - 1 and on P·D for the unit (dual) quaternions of spherical and free joints
UNIT_TOL = 1e-6

OK = 0
BAD_Q_FINITE = 1
BAD_V_FINITE = 2
BAD_A_FINITE = 3
BAD_TAU_FINITE = 4
BAD_FEXT_FINITE = 5
BAD_SHAPE = 6  # an input has the wrong length (only reachable through the fast paths)
BAD_OVERFLOW = 7  # finite inputs, but the result overflowed (inputs too large for float64)
BAD_UNIT = 1000  # + body index


@jit
def check_q(mi, q):
    """Status of a configuration: finite entries, unit quaternions for spherical/free joints."""
    for k in range(q.shape[0]):
        if not math.isfinite(q[k]):
            return BAD_Q_FINITE
    for i in range(1, mi.shape[0]):
        jt = mi[i, MI_JTYPE]
        if mi[i, MI_NQ] == 0:
            continue
        if jt == SPHERICAL or jt == FREE:
            s = mi[i, MI_IQ]
            n2 = q[s] * q[s] + q[s + 1] * q[s + 1] + q[s + 2] * q[s + 2] + q[s + 3] * q[s + 3]
            if abs(n2 - 1.0) > 2.0 * UNIT_TOL:
                return BAD_UNIT + i
            if jt == FREE:
                pd = q[s] * q[s + 4] + q[s + 1] * q[s + 5] + q[s + 2] * q[s + 6] + q[s + 3] * q[s + 7]
                if abs(pd) > UNIT_TOL * (1.0 + abs(q[s + 4]) + abs(q[s + 5]) + abs(q[s + 6]) + abs(q[s + 7])):
                    return BAD_UNIT + i
    return OK


@jit
def check_lengths(mi, q, v, nv_arrays):
    """True if ``q`` has nq entries and ``v`` nv (nv read from the world row of ``mi``)."""
    return q.shape[0] == mi[0, MI_IQ] and v.shape[0] == mi[0, MI_IV] and nv_arrays == mi[0, MI_IV]



def is_fast(*arrays) -> bool:
    """True when every argument is a writable C-contiguous 1-D float64 ndarray (the
    single-state fast path; a read-only or strided array is another numba type, which no
    shipped kernel is compiled for)."""
    for a in arrays:
        if type(a) is not np.ndarray or a.dtype is not F64 or a.ndim != 1 \
                or not a.flags.c_contiguous or not a.flags.writeable:
            return False
    return True


@jit
def check_finite(x, code):
    for k in range(x.shape[0]):
        if not math.isfinite(x[k]):
            return code
    return OK


@jit
def check_state(mi, q, v, x, bad_x, fext, use_fext):
    """Status of a dynamics input: ``q`` (`check_q`), then finite ``v``, ``x`` (``a`` or
    ``τ``, status ``bad_x``) and, when ``use_fext``, finite rows of ``fext``."""
    st = check_q(mi, q)
    if st != OK:
        return st
    st = check_finite(v, BAD_V_FINITE)
    if st != OK:
        return st
    st = check_finite(x, bad_x)
    if st != OK:
        return st
    if use_fext:
        for i in range(fext.shape[0]):
            st = check_finite(fext[i], BAD_FEXT_FINITE)
            if st != OK:
                return st
    return OK



def raise_status(model: Model, status: int, row: int | None = None) -> None:
    """Raise the exception that corresponds to a kernel status code."""
    if status == OK:
        return
    where = "" if row is None else f" (batch element {row})"
    if status >= BAD_UNIT:
        i = status - BAD_UNIT
        jt = JOINT_TYPE_NAMES[int(model.mi[i, MI_JTYPE])]
        s = model.q_slice(model.joint_names_all[i])
        what = "unit quaternion [w,x,y,z]" if jt == "spherical" else (
            "unit dual quaternion (|P|=1, P·D=0)"
        )
        raise NotUnitError(
            f"q{where}: entries q[{s.start}:{s.stop}] of {jt} joint "
            f"{model.joint_names_all[i]!r} must be a {what} within {UNIT_TOL:g}; "
            "use dqdyn.normalize_configuration(model, q) or dqdyn.integrate to stay on the manifold"
        )
    if status == BAD_OVERFLOW:
        raise NonFiniteError(
            f"the result{where} overflowed to NaN or infinity: the inputs are finite but too large "
            "for float64 arithmetic (e.g. |v|² above 1.8e308)"
        )
    if status == BAD_SHAPE:
        raise ShapeError(
            f"inputs have the wrong length: q must have {model.nq} entries and v, a, tau "
            f"{model.nv}"
        )
    names = {BAD_Q_FINITE: "q", BAD_V_FINITE: "v", BAD_A_FINITE: "a", BAD_TAU_FINITE: "tau",
             BAD_FEXT_FINITE: "fext"}
    raise NonFiniteError(f"{names.get(status, 'input')}{where} contains NaN or infinity")


def as_vector_batch(x, n: int, name: str, what: str) -> tuple[np.ndarray, tuple]:
    """``x`` as a C-contiguous float64 array (..., n); returns it reshaped 2-D and the batch shape."""
    if type(x) is np.ndarray and x.dtype is F64 and x.flags.c_contiguous and x.ndim <= 2 \
            and x.ndim and x.shape[-1] == n and x.flags.writeable:  # the common case: < 1 µs
        return (x, x.shape[:1]) if x.ndim == 2 else (x.reshape(1, n), ())
    a = real_array(x, name, finite=False)  # (refuses complex values, strings, objects)
    if a.ndim == 0 or a.shape[-1] != n:
        raise ShapeError(f"{name} must have shape (..., {n}) ({what}), got {np.shape(x)}")
    batch = a.shape[:-1]
    a = np.ascontiguousarray(a.reshape(math.prod(batch), n))  # (n may be 0)
    if not a.flags.writeable:  # (a view of the same memory: every kernel takes writable arrays)
        a = kernel_rows(a)
    return a, batch


def as_vector(x, n: int, name: str, what: str) -> np.ndarray:
    """Fast path for one state: a contiguous float64 (n,) array, else ShapeError."""
    if type(x) is np.ndarray and x.dtype is F64 and x.shape == (n,) and x.flags.c_contiguous \
            and x.flags.writeable:
        return x
    a = real_array(x, name, finite=False)
    if a.shape != (n,):
        raise ShapeError(f"{name} must have shape ({n},) or (..., {n}) ({what}), got {a.shape}")
    if not a.flags.c_contiguous or not a.flags.writeable:
        a = kernel_rows(a)
    return a


def first_bad(status: np.ndarray) -> tuple[int, int]:
    bad = np.flatnonzero(status)
    if bad.size == 0:
        return OK, -1
    return int(status[bad[0]]), int(bad[0])


def _common_batch(batches) -> tuple:
    """The broadcast of the batch shapes (numpy's rules), or ShapeError."""
    distinct = {b for b in batches if b != ()}
    if len(distinct) <= 1:  # the common case: one batch shape, and single states
        return distinct.pop() if distinct else ()
    try:
        return np.broadcast_shapes(*batches)
    except ValueError:
        raise ShapeError(f"batch shapes {batches} of the inputs do not broadcast together") from None


def broadcast_batch(arrays: list[np.ndarray], batches: list[tuple]) -> tuple[list[np.ndarray], tuple]:
    """Broadcast 2-D (N_k, n_k) arrays with batch shapes ``batches`` to one common batch."""
    shape = _common_batch(batches)
    out = []
    for a, b in zip(arrays, batches):
        if b != shape:
            a = np.broadcast_to(a.reshape(b + a.shape[-1:]), shape + a.shape[-1:])
            a = kernel_rows(a.reshape(-1, a.shape[-1]))
        out.append(a)
    return out, shape


def lazy_batch(arrays: list[np.ndarray], batches: list[tuple]) -> tuple[list[np.ndarray], tuple, int]:
    """Like `broadcast_batch`, but an input with no batch axes stays one row (the chunked
    driver `run_chunked` shares it); only partial broadcasts (e.g. (3, 1) against (1, 4))
    are expanded.  Returns the arrays, the common batch shape and the number of states."""
    shape = _common_batch(batches)
    N = math.prod(shape)
    out = []
    for a, b in zip(arrays, batches):
        if b != shape and b != ():
            trail = a.shape[1:]
            a = kernel_rows(np.broadcast_to(a.reshape(b + trail), shape + trail).reshape((N,) + trail))
        out.append(a)
    return out, shape, N


def out_batch(out, shape: tuple, name: str = "out") -> np.ndarray | None:
    """``out`` (a float64, C-contiguous, writable array of ``shape``, e.g. an ``np.memmap``) as a
    plain ndarray view, or ``None`` when ``out`` is ``None``."""
    if out is None:
        return None
    if (not isinstance(out, np.ndarray) or out.dtype != F64 or out.shape != shape
            or not out.flags.c_contiguous or not out.flags.writeable):
        raise ShapeError(
            f"{name} must be a writable C-contiguous float64 array of shape {shape}, got "
            f"{type(out).__name__} {getattr(out, 'dtype', '')} {np.shape(out)}"
        )
    return np.asarray(out)


def into_out(out, x: np.ndarray) -> np.ndarray:
    """``x`` copied into ``out`` (checked as `out_batch` checks it: ``x``'s shape), and
    ``out`` returned: the general path of a public function whose fast path writes into ``out``
    in the C gate (a copy, so ``out`` may share memory with the inputs)."""
    out_batch(out, x.shape)[...] = x
    return out
