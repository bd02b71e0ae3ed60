"""Batches run in chunks (dqdyn.config.set_batch_chunk): same numbers as one state at a time,
errors name the element of the whole batch, ``out=`` (an np.memmap too) is written in place,
and what dqdyn allocates besides the output is bounded by the chunk, not by the batch."""

import inspect
import tracemalloc

import numpy as np
import pytest

import dqdyn
from dqdyn.errors import NonFiniteError, ShapeError


@pytest.fixture
def chunk():
    old = dqdyn.config.get_batch_chunk()
    yield dqdyn.config.set_batch_chunk
    dqdyn.config.set_batch_chunk(old)


@pytest.fixture(scope="module")
def arm():
    return dqdyn.random_tree(6, seed=3, joint_types=("revolute", "prismatic", "spherical"))


def _states(m, n, seed=0):
    rng = np.random.default_rng(seed)
    return (dqdyn.random_configuration(m, size=n, seed=rng), rng.normal(size=(n, m.nv)),
            rng.normal(size=(n, m.nv)))


CALLS = {
    "rnea": lambda m, q, v, a, **k: dqdyn.rnea(m, q, v, a, **k),
    "nonlinear_effects": lambda m, q, v, a, **k: dqdyn.nonlinear_effects(m, q, v, **k),
    "gravity": lambda m, q, v, a, **k: dqdyn.gravity(m, q, **k),
    "mass_matrix": lambda m, q, v, a, **k: dqdyn.mass_matrix(m, q, **k),
    "mass_matrix_ne": lambda m, q, v, a, **k: dqdyn.mass_matrix(m, q, method="newton_euler", **k),
    "coriolis_matrix": lambda m, q, v, a, **k: dqdyn.coriolis_matrix(m, q, v, **k),
    "aba": lambda m, q, v, a, **k: dqdyn.aba(m, q, v, a, **k),
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_chunks_equal_single_states(arm, chunk, name):
    f = CALLS[name]
    Q, V, A = _states(arm, 23)
    chunk(5)  # 4 full chunks and a remainder of 3
    got = f(arm, Q, V, A)
    want = np.array([f(arm, Q[k], V[k], A[k]) for k in range(23)])
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    # a velocity / acceleration shared by the whole batch, and q shared by a batch of v
    got = f(arm, Q, V[4], A[7])
    want = np.array([f(arm, Q[k], V[4], A[7]) for k in range(23)])
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    if name in ("gravity", "mass_matrix", "mass_matrix_ne"):
        return  # (functions of q alone)
    got = f(arm, Q[2], V, A)
    want = np.array([f(arm, Q[2], V[k], A[k]) for k in range(23)])
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    # partial broadcast (3, 1) × (1, 4)
    Qb = Q[:3].reshape(3, 1, -1)
    Vb = V[:4].reshape(1, 4, -1)
    got = f(arm, Qb, Vb, A[0])
    assert got.shape[:2] == (3, 4)
    np.testing.assert_allclose(got[2, 1], f(arm, Q[2], V[1], A[0]), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", ["rnea", "gravity", "mass_matrix", "aba", "coriolis_matrix"])
def test_error_names_the_element_of_the_whole_batch(arm, chunk, name):
    Q, V, A = _states(arm, 23)
    Q[17, 0] = np.nan
    chunk(5)
    with pytest.raises(NonFiniteError, match="batch element 17"):
        CALLS[name](arm, Q, V, A)


@pytest.mark.parametrize("name", ["rnea", "nonlinear_effects", "gravity", "mass_matrix", "aba",
                                  "coriolis_matrix"])
def test_out_memmap(arm, chunk, tmp_path, name):
    f = CALLS[name]
    Q, V, A = _states(arm, 11)
    want = f(arm, Q, V, A)
    out = np.lib.format.open_memmap(tmp_path / "out.npy", mode="w+", shape=want.shape)
    chunk(4)
    res = f(arm, Q, V, A, out=out)
    assert res.base is not None or res is out
    np.testing.assert_allclose(np.asarray(out), want, rtol=1e-12, atol=1e-12)
    with pytest.raises(ShapeError, match="out"):
        f(arm, Q, V, A, out=np.empty(want.shape[:-1] + (want.shape[-1] + 1,)))
    with pytest.raises(ShapeError, match="out"):
        f(arm, Q, V, A, out=np.empty(want.shape, dtype=np.float32))


def test_single_state_out_of_wrong_length_is_a_shape_error(arm):
    q, v, a = (x[0] for x in _states(arm, 1))
    for f in (CALLS["rnea"], CALLS["gravity"], CALLS["aba"]):
        with pytest.raises(ShapeError, match="out"):
            f(arm, q, v, a, out=np.empty(arm.nv + 2))


def test_general_single_state_path_is_the_batch_of_one(arm):
    """``rnea`` of one state given as lists, with ``fext`` or ``out=`` (the calls the compiled
    front declines) runs as a batch of one through ``rnea_rows`` (newton_euler._rnea_general):
    the bits of the batch and of the plain call, ``out`` itself returned, errors without a batch
    element in their message."""
    Q, V, A = _states(arm, 3, seed=5)
    F = np.zeros((3, arm.nbodies + 1, 6))
    F[:, 2, 1], F[:, -1, 4] = 0.7, -1.3
    batch = dqdyn.rnea(arm, Q, V, A, F)
    for k in range(3):
        out = np.empty(arm.nv)
        assert dqdyn.rnea(arm, Q[k], V[k], A[k], F[k], out=out) is out
        assert out.tobytes() == batch[k].tobytes()
        assert dqdyn.rnea(arm, Q[k].tolist(), V[k], A[k]).tobytes() == \
            dqdyn.rnea(arm, Q[k], V[k], A[k]).tobytes()
    v = V[0].copy()
    v[1] = np.inf
    with pytest.raises(NonFiniteError) as e:
        dqdyn.rnea(arm, Q[0], v, A[0], F[0])
    assert "batch element" not in str(e.value)


def test_one_state_with_external_wrenches_is_one_gate_call_with_the_batchs_bits(arm, monkeypatch):
    """``rnea`` of one state with ``fext`` (float64 arrays) is one call through the call gate
    (``newton_euler._c_rnea_fext``, ``fext`` passed as a flat view): the general path is not
    reached, and the bits are the batch's.  A read-only or Fortran-ordered ``fext``, a small
    batch sharing one ``fext``, lists: the same bits.  Bad wrenches are named."""
    from dqdyn._engine.gate import GATE
    from dqdyn.dynamics import newton_euler as ne

    Q, V, A = _states(arm, 3, seed=7)
    F = np.random.default_rng(8).normal(size=(3, arm.nbodies + 1, 6))
    batch = dqdyn.rnea(arm, Q, V, A, F)
    shared = dqdyn.rnea(arm, Q, V, A, np.broadcast_to(F[1], F.shape))
    calls = []
    real = ne._rnea_general
    monkeypatch.setattr(ne, "_rnea_general", lambda *a, **k: (calls.append(1), real(*a, **k))[1])
    for k in range(3):
        assert dqdyn.rnea(arm, Q[k], V[k], A[k], F[k]).tobytes() == batch[k].tobytes()
    assert dqdyn.rnea(arm, Q, V, A, F[1]).tobytes() == shared.tobytes()  # (the gate's small batch)
    if GATE is not None:
        assert not calls, "one state with fext took the general path"
    ro = F[2].copy()
    ro.flags.writeable = False
    assert dqdyn.rnea(arm, Q[2], V[2], A[2], ro).tobytes() == batch[2].tobytes()
    assert dqdyn.rnea(arm, Q[2], V[2], A[2], np.asfortranarray(F[2])).tobytes() == batch[2].tobytes()
    assert dqdyn.rnea(arm, Q[2].tolist(), V[2], A[2], F[2].tolist()).tobytes() == batch[2].tobytes()
    bad = F[0].copy()
    bad[2, 3] = np.nan
    with pytest.raises(NonFiniteError, match="fext"):
        dqdyn.rnea(arm, Q[0], V[0], A[0], bad)
    for wrong in (F[0].ravel(), F[0][:, :5].copy(), F[0][1:].copy()):
        with pytest.raises(ShapeError, match="fext"):
            dqdyn.rnea(arm, Q[0], V[0], A[0], wrong)


def _peak_bytes(fn):
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("name", ["rnea", "aba", "gravity"])
def test_temporaries_bounded_by_the_chunk(chunk, name):
    """200 000 states: the status codes alone would take 1.6 MB and a shared v expanded to the
    batch 11 MB; with 4096-state chunks and ``out=`` dqdyn's own allocations stay under 1 MB."""
    m = dqdyn.serial_chain(7)
    N = 200_000
    rng = np.random.default_rng(0)
    Q = rng.uniform(-3, 3, size=(N, m.nq))
    v, a = rng.normal(size=(2, m.nv))
    out = np.empty((N, m.nv))
    f = CALLS[name]
    chunk(4096)
    f(m, Q[:10], v, a)  # compile / warm up outside the measurement: the serial twin …
    f(m, Q[:5000], v, a)  # … and the parallel kernel (batches of N·nb > SERIAL_WORK)
    peak = _peak_bytes(lambda: f(m, Q, v, a, out=out))
    assert peak < 1_000_000, peak
    np.testing.assert_allclose(out[123_456], f(m, Q[123_456], v, a), rtol=1e-12, atol=1e-12)


def test_set_batch_chunk_rejects_bad_values():
    for bad in (0, -3, 2.5, True, "8"):
        with pytest.raises(ShapeError, match="chunk"):
            dqdyn.config.set_batch_chunk(bad)


def _read_only(*arrays):
    out = []
    for x in arrays:
        x = x.copy()
        x.flags.writeable = False
        out.append(x)
    return out


@pytest.mark.parametrize("name", sorted(CALLS))
def test_read_only_inputs_compile_no_second_kernel(arm, chunk, name):
    """A read-only input (a broadcast view, a memmap opened 'r') has another numba type than a
    writable one: passed on as it is, it made numba compile a second copy of every kernel it
    reached (over a minute for aba).  The batch paths hand the kernels writable views of such
    rows (boundary.kernel_rows): no batch kernel is compiled for a read-only state array, and
    the numbers are those of writable inputs."""
    from numba.core import types as nb_types

    from dqdyn.dynamics import aba, coriolis, hybrid, lagrange, newton_euler

    chunk(7)
    f = CALLS[name]
    Q, V, A = _states(arm, 600)  # (600 states of 7 bodies: past the gate, into the batch kernels)
    want = f(arm, Q, V, A)
    np.testing.assert_array_equal(f(arm, *_read_only(Q, V, A)), want)
    np.testing.assert_array_equal(f(arm, *_read_only(Q[:3], V[:3], A[:3])), want[:3])
    mm = np.broadcast_to(Q[0], (3, arm.nq))  # read-only, and ...
    np.testing.assert_array_equal(f(arm, np.ascontiguousarray(mm), V[:3], A[:3]),
                                  f(arm, Q[[0, 0, 0]], V[:3], A[:3]))  # ... contiguous
    dqdyn.constrained_aba(arm, Q[0], V[0], A[0], np.eye(arm.nv)[:1], np.zeros(1))
    kernels = [getattr(mod, k) for mod in (newton_euler, lagrange, coriolis, aba, hybrid)
               for k in dir(mod) if k.endswith("_batch") and hasattr(getattr(mod, k), "py_func")]
    kernels += [k.serial for k in kernels if hasattr(k, "serial")]
    for k in kernels:  # (read-only only where the argument is the model's gravity, ``g``)
        names = list(inspect.signature(k.py_func).parameters)
        for sig in getattr(k, "signatures", []):
            ro = [n for n, t in zip(names, sig)  # (scalars are immutable types too: arrays only)
                  if isinstance(t, nb_types.Array) and not t.mutable]
            assert ro in ([], ["g"]), (k, ro)
