"""Run-time settings: the number of threads batched calls use, and the chunk size of batches."""

from __future__ import annotations

import numba

from .errors import ShapeError


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


__all__ = ["set_num_threads", "get_num_threads", "set_batch_chunk", "get_batch_chunk"]
