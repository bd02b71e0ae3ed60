"""Run-time settings: the number of threads batched calls use."""

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


__all__ = ["set_num_threads", "get_num_threads"]
