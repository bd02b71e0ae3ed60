"""Input checks shared by the public API: scalars, real arrays, the ``model`` argument, arrays
as kernels take them.

One check per kind, so every entry point words the same error the same way.  The array checks of
the compiled algorithms' fast paths live in `dqdyn._engine.boundary`; these are for the
Python-level entry points (parsers, builders, constraints, simulation, time steps).
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from dqdyn.errors import ModelError, NonFiniteError, ShapeError


def real_scalar(x, name: str, what: str = "a real number", *, finite: bool = True) -> float:
    """``x`` as a Python float: a real number (int, float, numpy real scalar or 0-d real array),
    never a bool, string, None, complex or array; finite unless ``finite=False``."""
    if type(x) is not float:
        ok = (isinstance(x, numbers.Real) and not isinstance(x, (bool, np.bool_))) or (
            isinstance(x, np.ndarray) and x.shape == () and x.dtype.kind in "iuf")
        if not ok:
            r = repr(x)
            raise ShapeError(f"{name} must be {what}, got {type(x).__name__} "
                             f"{r[:60] + '…' if len(r) > 60 else r}")
        x = float(x)
    if finite and not math.isfinite(x):
        raise NonFiniteError(f"{name} must be {what}, got {x!r}")
    return x


def real_array(x, name: str, shape: tuple | None = None, what: str = "", *,
               finite: bool = True) -> np.ndarray:
    """``x`` as a float64 array.  Refused: strings (also numeric strings such as ``"1.5"``),
    complex values with a non-zero imaginary part, non-numeric objects, a wrong ``shape``
    (``None``: any), and — with ``finite`` — NaN or infinity."""
    a = x if isinstance(x, np.ndarray) else None
    if a is None:
        try:
            a = np.asarray(x)
        except (ValueError, TypeError) as e:  # ragged nested sequences
            raise ShapeError(f"{name} must be a numeric array{what and ' (' + what + ')'}, "
                             f"got {type(x).__name__} ({e})") from None
    kind = a.dtype.kind
    if kind == "c":
        if np.any(a.imag != 0):
            raise ShapeError(f"{name} must be real; got complex values with a non-zero "
                             "imaginary part")
        a = a.real
    elif kind == "O":
        flat = a.reshape(-1)
        if any(isinstance(e, (str, bytes, complex, np.complexfloating)) or e is None
               for e in flat):
            raise ShapeError(f"{name} must contain real numbers only, got {x!r:.80}")
    elif kind not in "biuf":
        raise ShapeError(f"{name} must be a numeric array{what and ' (' + what + ')'}, got "
                         f"dtype {a.dtype} ({x!r:.60})")
    try:
        a = np.asarray(a, dtype=np.float64)
    except (ValueError, TypeError) as e:
        raise ShapeError(f"{name} must contain real numbers only ({e})") from None
    if shape is not None and a.shape != tuple(shape):
        raise ShapeError(f"{name} must have shape {tuple(shape)}"
                         f"{what and ' (' + what + ')'}, got {a.shape}")
    if finite and not np.all(np.isfinite(a)):
        raise NonFiniteError(f"{name} contains NaN or infinity: {a!r:.80}")
    return a


def not_a_model(model, name: str = "model") -> ModelError:
    """The error for a ``model`` argument that is not a `dqdyn.Model` (called on the
    error path only, after an ``AttributeError``, so the fast paths pay nothing)."""
    hint = (f"; load one first, e.g. dqdyn.load_urdf(path) or dqdyn.load_bundled({model!r})"
            if isinstance(model, str) else "")
    return ModelError(f"{name} must be a dqdyn.Model, got {type(model).__name__} "
                      f"{model!r:.60}{hint}")



class _Inputs:
    """The memory of a read-only C-contiguous array, offered to numpy as writable (numpy's
    array interface, version 3) — for `kernel_rows` only; holds the array alive."""

    __slots__ = ("__array_interface__", "_held")

    def __init__(self, a: np.ndarray):
        self._held = a
        self.__array_interface__ = {"data": (a.ctypes.data, False), "shape": a.shape,
                                    "typestr": a.dtype.str, "version": 3}


def kernel_rows(a) -> np.ndarray:
    """``a`` as a C-contiguous, *writable* array: the same memory where ``a`` is C-contiguous
    (a copy only where it is not).

    A read-only array (a broadcast view — ``np.ascontiguousarray(np.broadcast_to(x, (1, n)))``
    is one —, a read-only memmap, an array with ``writeable=False``) has another numba type
    than a writable one: passed to a kernel it would compile a second specialisation of that
    kernel and of everything it inlines — over a minute for ``aba`` — at run time.  It is not
    copied either (a copy of every chunk of a read-only memmap cost ~5 % of a batched ``rnea``):
    the kernel gets a writable array over the same memory, whose base holds ``a``.  Kernels
    never write to their inputs (``tests/reliability/test_read_only_inputs.py`` runs every
    batched function on read-only memmaps, whose pages a write would fault on)."""
    a = np.ascontiguousarray(a)
    if a.flags.writeable:
        return a
    return np.asarray(_Inputs(a)) if a.size else a.copy()


__all__ = ["real_scalar", "real_array", "not_a_model", "kernel_rows"]
