"""Batch kernels that run blocks of states through one ``*_rows`` kernel (the recursion compiled
once for the parallel kernel and its serial twin), on arrays without reference counts
(``dqdyn._engine.views.unmanaged``)."""

import numpy as np
import pytest

import dqdyn
from dqdyn._engine import jit as _jit
from dqdyn._engine.batching import BLOCKS
from dqdyn._engine.views import unmanaged


def test_unmanaged_is_the_same_array_without_its_reference_count():
    """Same data (a write goes through), shape and strides — also of a strided view — and the
    same numbers read back, inside a compiled kernel."""

    def probe(a):
        b = unmanaged(a)
        b[1, 0] = -7.0
        s = 0.0
        for i in range(b.shape[0]):
            for j in range(b.shape[1]):
                s += b[i, j] * (i + 1) + j
        return s, b.shape[0], b.shape[1], b.strides[0], b.strides[1]

    f = _jit.kernel()(probe)
    base = np.arange(24.0).reshape(4, 6)
    for x in (base.copy(), base.copy()[:, ::2]):
        want_x = x.copy()
        want_x[1, 0] = -7.0
        want = sum(want_x[i, j] * (i + 1) + j for i in range(x.shape[0]) for j in range(x.shape[1]))
        s, r, c, s0, s1 = f(x)
        assert x[1, 0] == -7.0 and np.array_equal(x, want_x)
        assert (r, c, s0, s1) == (*x.shape, *x.strides)
        assert s == want


@pytest.mark.parametrize("N", [3, 3 * BLOCKS + 5])  # (the serial twin; uneven blocks in parallel)
def test_batches_run_by_blocks_equal_single_calls_bit_for_bit(N):
    m = dqdyn.random_tree(9, seed=3)
    Q = dqdyn.random_configuration(m, size=N, seed=4)
    rng = np.random.default_rng(5)
    V, A = rng.normal(size=(2, N, m.nv))
    Ql = Q.tolist() if N == 3 else Q  # (lists: the general path's serial twin)
    cases = [
        (dqdyn.rnea(m, Ql, V, A), lambda i: dqdyn.rnea(m, Q[i], V[i], A[i])),
        (dqdyn.nonlinear_effects(m, Ql, V), lambda i: dqdyn.nonlinear_effects(m, Q[i], V[i])),
        (dqdyn.gravity(m, Ql), lambda i: dqdyn.gravity(m, Q[i])),
        (dqdyn.mass_matrix(m, Ql), lambda i: dqdyn.mass_matrix(m, Q[i])),
        (dqdyn.coriolis_matrix(m, Ql, V), lambda i: dqdyn.coriolis_matrix(m, Q[i], V[i])),
    ]
    for batch, one in cases:
        assert batch.tobytes() == np.stack([one(i) for i in range(N)]).tobytes()
