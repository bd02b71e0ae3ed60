"""Batches: a batch of states runs in chunks, one compiled ``prange`` call per chunk.

See `dqdyn.config.set_batch_chunk`.  Each batch kernel's ``prange`` loop calls the same
serial kernel as a single state, so batched and single results are bit-identical; what dqdyn
allocates besides the result is bounded by the chunk.
"""

from __future__ import annotations

import numpy as np

from dqdyn import config
from dqdyn._engine.boundary import first_bad, kernel_rows

#: a batch of ``N`` states of a model with ``nb1`` bodies (the world counted) runs on one thread,
#: in the serial twin of its batch kernel, when ``N · nb1`` is at most this: starting the thread
#: pool costs about 17 µs (0.4 ms when it has been idle), more than such a batch
SERIAL_WORK = 4096


def for_batch(kernel, N: int, nb1: int):
    """``kernel`` (a parallel batch kernel) or, for a small batch, its serial twin
    (``kernel.serial``, see `dqdyn._engine.jit.kernel`): never slower than a loop of single calls."""
    return kernel.serial if N * nb1 <= SERIAL_WORK and hasattr(kernel, "serial") else kernel

#: blocks of states per batch call of the kernels that share one workspace per block (a
#: constant: ``numba.get_num_threads()`` inside a kernel would stop numba caching it)
BLOCKS = 256

#: states per block of the lane kernels (`dqdyn.dynamics.lanes`, `dqdyn.kinematics.lanes_fk`):
#: sixteen float64 lanes, four AVX2 registers.  LLVM vectorises a loop of fewer than 16
#: iterations only where it needs no run-time overlap check (measured: 8 lanes are 10 % slower
#: per state on Panda)
LANES = 16


def run_chunked(kernel, head: tuple, ins: list, outs: list, N: int, shared: tuple, raise_row):
    """Run the ``prange`` batch kernel ``kernel(*head, *ins, *outs, status)`` over ``N`` states,
    `dqdyn.config.BATCH_CHUNK` states per call (``head[0]`` is the model's ``mi`` table; a
    small batch runs serially, see `for_batch`).

    ``ins``: arrays with ``N`` rows, or one row shared by every state; the kernel broadcasts a
    shared row itself for the inputs whose indices are in ``shared``, the others are expanded
    one chunk at a time.  ``outs``: arrays with ``N`` rows.  After each chunk the first non-zero
    status is passed to ``raise_row(status, row)`` with ``row`` the index in the whole batch.
    """
    chunk = config.BATCH_CHUNK
    kernel = for_batch(kernel, N, head[0].shape[0])
    status = np.zeros(min(N, chunk), dtype=np.int64)
    for s in range(0, N, chunk):
        e = min(N, s + chunk)
        n = e - s
        args = list(head)
        for k, X in enumerate(ins):  # (kernel_rows: a read-only chunk is copied, see there)
            if X.shape[0] == N:
                args.append(kernel_rows(X[s:e]))
            elif k in shared:
                args.append(kernel_rows(X))
            else:
                args.append(kernel_rows(np.broadcast_to(X, (n,) + X.shape[1:])))
        for O in outs:
            args.append(O[s:e])
        st = status[:n]
        st[:] = 0
        kernel(*args, st)
        code, row = first_bad(st)
        if code:
            raise_row(code, s + row)
