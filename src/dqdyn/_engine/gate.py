"""The single-state fast paths: the C call gate and the armed entry kernels.

A single state of plain float64 vectors goes through the call gate, ``src/dqdyn/_engine/_gate.c``: each
entry kernel is also compiled as a C function (`gate_address`, through dqdyn's kernel cache),
and the gate checks the arguments' types in C, allocates the result and calls that function.
Without the compiled gate (a build with no C compiler), `armed_call` calls the entry kernel
through numba's dispatcher, compiled for exactly one signature.  Neither holds any algorithm.
"""

from __future__ import annotations

import functools
import os
import threading

import numba as nb

from dqdyn._engine.jit import cfunc
from dqdyn.algebra._core import jit
from dqdyn.multibody.model import MF_COLS, MI_COLS

try:  # the C call gate (src/dqdyn/_engine/_gate.c), built with the package when a C compiler exists
    from dqdyn._engine._gate import call as GATE
    from dqdyn._engine._gate import entry as _ENTRY
    from dqdyn._engine._gate import function as _FRONT
    from dqdyn._engine._gate import split as SPLIT
except ImportError:  # pragma: no cover - a build without a compiler: numba's dispatcher instead
    GATE = _ENTRY = _FRONT = SPLIT = None
if nb.config.DISABLE_JIT or os.environ.get("DQDYN_NO_GATE", "") not in ("", "0"):
    # every kernel a plain Python function (nothing to compile a gate entry from), or the gate
    # turned off (``dqdyn doctor --measure`` times single calls without it)
    GATE = _ENTRY = _FRONT = SPLIT = None

#: result sizes a gate entry reads from the model's tables (_gate.c DIM_NB1, DIM_NV, DIM_3NV): the
#: number of bodies + 1, the number of velocities, and three times it (three nv × nv matrices)
NB1, NV, NV3 = -2, -3, -4

# numba types of the single-state fast paths' arguments (model tables, C-contiguous vectors)
T_MI = nb.types.Array(nb.int64, 2, "C")
T_MF = nb.types.Array(nb.float64, 2, "C")
T_V = nb.types.Array(nb.float64, 1, "C")
T_M = nb.types.Array(nb.float64, 2, "C")


#: held while an entry kernel is armed (`armed_call`)
_ARMING = threading.RLock()


def armed_call(namespace: dict, name: str, dispatcher, sig: tuple, args: tuple):
    """Call the single-state entry kernel ``namespace[name]``, arming it on first use.

    The public functions' fast paths call an entry kernel directly, with no Python-side type
    checks: an entry kernel is compiled for exactly one signature ``sig`` (float64,
    C-contiguous, writable vectors) and then has compilation disabled, so numba's own dispatch
    (which computes the argument types anyway) rejects any other input with ``TypeError``
    instead of compiling a new specialization.  Lengths are checked inside the kernel
    (``BAD_SHAPE``).  ``namespace[name]`` is ``None`` until the first call — calling ``None``
    raises ``TypeError`` too, which lands here.  Returns the kernel's status, or ``None`` when
    ``args`` do not match ``sig`` (the caller then takes its validating path).
    """
    fn = namespace.get(name)
    if fn is None and nb.config.DISABLE_JIT:  # (a plain function: called as it is)
        namespace[name] = fn = dispatcher
    if fn is None:
        with _ARMING:  # (threads making their first call at once: one arms, the others wait)
            fn = namespace.get(name)
            if fn is None:
                if tuple(sig) not in dispatcher.overloads:
                    dispatcher.disable_compile(False)
                    dispatcher.compile(sig)  # from the on-disk cache when present
                dispatcher.disable_compile()
                namespace[name] = fn = dispatcher
    try:
        return fn(*args)
    except TypeError:
        return None


# ------------------------------------------------------------------------ the C call gate
def no_gate(*args):
    """What a gate entry is without the compiled gate: every call takes the general path."""
    return None


def gate_entry(namespace: dict, name: str, body, nin: int, rows: int, cols: int,
               scratch: bool = False, ints: tuple = ()):
    """A public function's single-state fast path, ``entry(model, *inputs)``: the gate call of
    ``body``'s kernel (`gate_address`, compiled or loaded on the first call) on ``nin``
    inputs with the model's tables — and with ``scratch`` its workspace, passed last — read in
    C (and kept for the next call with the same model).  A result of ``rows`` × ``cols``
    (``cols`` -1: a vector; `NB1` / `NV`: the model's sizes).  Returns what
    ``GATE`` returns: the result, a status code, or None (not plain float64 vectors, not a
    model, not ``nin`` inputs: the caller's general path).  Against ``GATE(namespace[name] or
    gate_address(...), model.mi, model.mf, rows, cols, *inputs)`` it saves the Python reads of
    the tables, sizes and address: 0.05 µs (``rnea``) to 0.12 µs (``forward_kinematics``) per
    call (benchmarks/bench_gate_entry.py).  ``ints``: the positions among the inputs where the
    kernel takes a Python int (a body index, a frame code; ``lens[k]`` in the kernel); an int
    anywhere else is declined (the kernel would read it as an array at address NULL: a
    ``q`` of ``model.nq`` given as the int ``model.nq`` crashed the process).  Without the
    compiled gate, `no_gate`."""
    if _ENTRY is None:
        return no_gate

    def resolve():
        return namespace.get(name) or gate_address(namespace, name, body)

    return _ENTRY(resolve, nin, rows, cols, scratch, sum(1 << k for k in ints))


def fast_front(entry, out: bool = True, named: bool = False, frames: dict | None = None,
               default: str | None = None, par=None, cls: type | None = None, parts: int = 0,
               skip: int = 0, fext=None):
    """Decorator: the public function ``fn`` whose first step is ``r = entry(model, ...)``,
    returned when it is an ndarray, becomes a *front* (``_gate.c``, ``function``): a C callable
    that makes that call and that test itself and calls ``fn`` for everything else — the same
    results and errors, without the Python function's frame on the fast path (0.1-0.15 µs of a
    0.6 µs ``forward_kinematics``, 0.3-0.5 µs of a 1.1 µs ``twist_jacobian``).

    Plain: ``fn(model, *inputs, out=None)`` with the entry's ``1 + nin`` positional arguments
    (``out=`` as a keyword when ``out``).  ``named``: ``fn(model, q, name[, frame], out=None)``,
    the entry's ``(model, q, placement, body[, code][, out])`` with ``(body, placement)`` from
    `_resolve_frame`'s cache (a name seen before; the first
    call of a name goes through ``fn``, which fills it) and ``code = frames[frame]``, ``frame``
    defaulting to ``default``.  With ``cls`` (a NamedTuple): ``fn(model, *inputs,
    constraints)`` with no keyword, ``constraints`` a list of one constraint whose compiled
    layout is cached for ``model`` (``constraints.dynamics._compiled_spec``), is the entry's
    ``(model, *inputs, spec, par)`` split into ``cls`` as `SPLIT` does.  With ``parts =
    k``, a plain front whose entry gives ``(k n, n)`` returns its ``k`` ``(n, n)`` parts as a
    tuple of views (the derivatives' three matrices).  ``skip``: a status code of the entry
    that depends on the model alone (``articulated.MIMIC``); a model it was answered for goes
    straight to ``fn`` from then on (the last such model), which has its own route.  ``fext``:
    an entry of one more input, for a plain front's call with one more argument (positional, or
    the only keyword ``fext``) that is a C-contiguous float64 2-D array, passed to it as one
    flat view (``rnea`` with external wrenches).  The front
    carries ``fn``'s ``__name__``, ``__doc__``, ``__wrapped__`` … (``help``,
    ``inspect.signature`` and the documentation see ``fn``), pickles by name and binds as a
    method as a function does.  Without the compiled gate, ``fn`` itself."""

    def decorate(fn):
        if _FRONT is None or entry is no_gate:
            return fn
        front = _FRONT(entry, fn, out=out, named=named, frames=frames, default=default, par=par,
                       cls=cls, parts=parts, skip=skip, fext=fext)
        return functools.update_wrapper(front, fn)

    return decorate


#: signature of the kernels behind the gate: (mi, mf, nb1, bufs, lens) -> status (_gate.c)
GATE_SIG = nb.types.int64(
    nb.types.CPointer(nb.types.int64), nb.types.CPointer(nb.types.float64), nb.types.int64,
    nb.types.CPointer(nb.types.CPointer(nb.types.float64)), nb.types.CPointer(nb.types.int64))
_GATED = {}  # the compiled cfuncs (kept alive: the gate holds only their addresses)


def gate_address(namespace: dict, name: str, body) -> int:
    """Compile (or load from dqdyn's kernel cache) ``body`` as a C-callable kernel of signature
    `GATE_SIG`, store its address in ``namespace[name]`` and return it.

    The public functions' single-state fast paths call ``GATE(namespace[name] or
    gate_address(...), model.mi, model.mf, rows, cols, *inputs)``; ``body`` unpacks the raw
    buffers with `gate_tables` / `gate_vector` and calls the same entry kernel as
    the dispatcher path.  LLVM inlines the recursion differently into this function and into a
    batch kernel, so the kernels keep strict IEEE arithmetic, which makes single and batched
    results agree to the bit whatever it inlines — except the analytic derivatives
    (``derivatives.fjit``: FMA contraction), whose shared pieces are inlined at the IR level
    (``ijit``) so that the single-state and batch kernels contract the same products.
    """
    fn = cfunc(GATE_SIG, body, error_model="numpy")
    _GATED[body] = fn
    namespace[name] = fn.address
    return fn.address


@jit
def gate_tables(mip, mfp, nb1):
    """The model tables ``mi``, ``mf`` from the gate's raw pointers."""
    return nb.carray(mip, (nb1, MI_COLS)), nb.carray(mfp, (nb1, MF_COLS))


@jit
def gate_vector(bufs, lens, k):
    """Buffer ``k`` of a gate call as a float64 vector."""
    return nb.carray(bufs[k], (lens[k],))


@jit
def flat_workspace(ws, rows, cols):
    """The first ``rows · cols`` entries of the flat scratch ``ws`` as a (rows, cols) matrix
    (the caller has checked ``ws.shape[0] >= rows · cols``)."""
    return ws[: rows * cols].reshape((rows, cols))


@jit
def gate_matrix(bufs, lens, k, rows):
    """Buffer ``k`` of a gate call as a (rows, lens[k] // rows) float64 matrix."""
    return nb.carray(bufs[k], (rows, lens[k] // max(rows, 1)))
