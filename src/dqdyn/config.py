"""Run-time settings: the threading layer, the number of threads batched calls use, and the chunk
size of batches.

Threads and processes
---------------------
Batched calls run numba ``prange`` kernels on one of numba's threading layers.  At import, unless
the user chose one with the ``NUMBA_THREADING_LAYER`` environment variable, dqdyn selects numba's
``"safe"`` layer (TBB, a dependency of dqdyn where wheels exist), which is both thread-safe (any
number of Python threads may call dqdyn at once) and fork-safe (``multiprocessing`` /
``ProcessPoolExecutor`` with the ``fork`` context after batched calls in the parent).  A TBB
installed by pip into a virtual environment is not on the dynamic loader's path, so dqdyn loads
``libtbb.so.12`` from the ``tbb`` distribution's files first.

Without TBB (no wheel for the platform), or when the user selects ``workqueue``, dqdyn uses
numba's ``workqueue`` layer, which is fork-safe but aborts the process when two threads launch
parallel regions at once; dqdyn then serializes the launches of parallel regions with a lock
(:data:`WORKQUEUE_GUARDED`), so concurrent calls from Python threads are safe, one parallel
region at a time.  A user who selects ``omp`` gets GNU OpenMP on Linux, which is thread-safe but
not fork-safe (use the ``spawn`` or ``forkserver`` start method there).
"""

from __future__ import annotations

import ctypes
import os
import sys
import threading

import numba

from .errors import ShapeError

#: True when dqdyn wraps numba's workqueue ``parallel_for`` with a lock (see the module docstring)
WORKQUEUE_GUARDED = False
_GUARD = {}  # keeps the ctypes callback and the real parallel_for alive


def _load_tbb() -> bool:
    """Load ``libtbb.so.12`` (TBB >= 2021.6, what numba's ``tbb`` layer accepts) into the process,
    from the loader's path or else from the files of the pip ``tbb`` distribution (a virtual
    environment's ``lib/`` is not on the loader's path).  True when TBB is usable."""
    if sys.platform == "win32":
        names, where = ["tbb12.dll"], "Library/bin"
    elif sys.platform == "darwin":
        names, where = ["libtbb.12.dylib"], "lib"
    else:
        names, where = ["libtbb.so.12"], "lib"
    candidates = list(names)
    for prefix in dict.fromkeys((sys.prefix, sys.base_prefix)):
        candidates += [os.path.join(prefix, where, n) for n in names]
    for c in candidates:
        if os.sep in c and not os.path.exists(c):
            continue
        try:
            lib = ctypes.CDLL(c, mode=ctypes.RTLD_GLOBAL)
            break
        except OSError:
            continue
    else:
        try:  # pip --user, --prefix or --target installs: ask the distribution for its files
            from importlib.metadata import PackageNotFoundError, distribution

            files = distribution("tbb").files or []
        except (ImportError, PackageNotFoundError):
            return False
        lib = None
        for f in files:
            if f.name in names:
                try:
                    lib = ctypes.CDLL(str(f.locate()), mode=ctypes.RTLD_GLOBAL)
                    break
                except OSError:
                    continue
        if lib is None:
            return False
    try:
        ver = lib.TBB_runtime_interface_version
        ver.restype = ctypes.c_int
        return ver() >= 12060  # numba's requirement (TBB 2021 update 6)
    except AttributeError:
        return False


def _guard_workqueue() -> None:
    """Serialize the launches of parallel regions when numba's layer is ``workqueue``.

    numba links every parallel kernel (compiled or loaded from its cache) against the symbol
    ``numba_parallel_for``, bound once when the layer starts.  This starts the layer now and, if
    it is ``workqueue``, rebinds the symbol to a wrapper that takes a process-wide lock around
    the workqueue's ``parallel_for``, so dqdyn's kernels, linked lazily afterwards, never enter
    the workqueue from two threads at once (which aborts the process)."""
    global WORKQUEUE_GUARDED
    from numba.np.ufunc import parallel as npar

    npar._launch_threads()
    if npar._threading_layer != "workqueue" or WORKQUEUE_GUARDED:
        return
    import llvmlite.binding as ll
    from numba.np.ufunc import workqueue

    proto = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p,
                             ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_size_t,
                             ctypes.c_int)
    real = proto(workqueue.parallel_for)
    lock = threading.Lock()

    def locked(fn, args, dims, steps, data, inner_ndim, array_count, num_threads):
        with lock:
            real(fn, args, dims, steps, data, inner_ndim, array_count, num_threads)

    cb = proto(locked)
    _GUARD.update(real=real, cb=cb, lock=lock)
    ll.add_symbol("numba_parallel_for", ctypes.cast(cb, ctypes.c_void_p).value)
    WORKQUEUE_GUARDED = True


def _select_threading_layer() -> None:
    """Pick numba's threading layer at import (see the module docstring)."""
    from numba.np.ufunc import parallel as npar

    user = os.environ.get("NUMBA_THREADING_LAYER", "").strip().lower()
    started = npar._is_initialized
    if not started and user in ("", "default", "safe", "threadsafe", "forksafe", "tbb"):
        have_tbb = _load_tbb()
        if not user:
            numba.config.THREADING_LAYER = "safe" if have_tbb else "workqueue"
    layer = npar._threading_layer if started else str(numba.config.THREADING_LAYER).lower()
    if layer == "workqueue" or (layer in ("default", "forksafe") and not started):
        _guard_workqueue()  # starts the layer; guards it if it turned out to be workqueue


_select_threading_layer()


def threading_layer() -> str:
    """The name of numba's threading layer that batched calls run on (``"tbb"``, ``"omp"`` or
    ``"workqueue"``; starts the layer if no parallel call has run yet)."""
    from numba.np.ufunc import parallel as npar

    npar._launch_threads()
    return npar._threading_layer


def set_num_threads(n: int) -> None:
    """Use ``n`` threads in batched calls (1 … ``numba.config.NUMBA_NUM_THREADS``, which the
    ``NUMBA_NUM_THREADS`` environment variable sets before import).  Results do not depend on
    it: every state is computed by the same serial kernel."""
    top = numba.config.NUMBA_NUM_THREADS
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= top:
        raise ShapeError(f"n must be an integer in 1..{top} (threads), got {n!r}")
    numba.set_num_threads(n)


def get_num_threads() -> int:
    """The number of threads batched calls use."""
    return numba.get_num_threads()


#: states per compiled call of a batched function (see :func:`set_batch_chunk`)
BATCH_CHUNK = 1 << 16


def set_batch_chunk(n: int) -> None:
    """Process batches in chunks of ``n`` states (default 65536).

    A batched call runs one compiled ``prange`` call per chunk, so what dqdyn allocates besides
    the output (status codes, the rows of an input shared by the whole batch) is bounded by the
    chunk, not by the batch: with ``np.memmap`` inputs and ``out=`` a memmap, a batch larger
    than memory streams through.  Results do not depend on ``n``."""
    global BATCH_CHUNK
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ShapeError(f"n must be a positive integer (states per chunk), got {n!r}")
    BATCH_CHUNK = n


def get_batch_chunk() -> int:
    """The number of states per compiled call of a batched function."""
    return BATCH_CHUNK


__all__ = ["threading_layer", "set_num_threads", "get_num_threads", "set_batch_chunk", "get_batch_chunk"]
