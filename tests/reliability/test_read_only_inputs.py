"""Read-only inputs reach the kernels without a copy, and no kernel writes to its inputs.

``boundary.kernel_rows`` hands a read-only C-contiguous input (a memmap opened ``"r"``, an array
with ``writeable=False``) to the kernels as a writable array over the same memory, instead of
copying it chunk by chunk (numba would otherwise compile a second copy of each kernel for the
read-only type).  That is safe only while no kernel writes to its inputs: these tests would
catch one that does — on a read-only memmap a write faults (the child process dies), on an
owned array with ``writeable=False`` it would change the caller's numbers.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest

import dqdyn
from dqdyn._engine.boundary import kernel_rows

#: every public batched function that dqdyn.scale.distributed evaluates (its FUNCTIONS registry)
NAMES = ("rnea", "aba", "gravity", "nonlinear_effects", "mass_matrix", "coriolis_matrix",
         "mass_matrix_inverse", "forward_kinematics", "rnea_derivatives", "aba_derivatives",
         "constrained_forward_dynamics")

_CALL = """
def call(name, m, q, v, a):
    import dqdyn
    f = getattr(dqdyn, name)
    if name == "constrained_forward_dynamics":
        from dqdyn.constraints import JointCoupling
        one = [n for n in m.joint_names if m.v_slice(n).stop - m.v_slice(n).start == 1]
        return f(m, q, v, a, [JointCoupling(one[1], one[0], 0.5)]).qdd
    k = {"gravity": 1, "mass_matrix": 1, "mass_matrix_inverse": 1, "forward_kinematics": 1,
         "nonlinear_effects": 2, "coriolis_matrix": 2}.get(name, 3)
    r = f(m, *(q, v, a)[:k])
    return np.concatenate([np.asarray(x).ravel() for x in r]) if isinstance(r, tuple) else r
"""
_NS: dict = {}
exec(textwrap.dedent("import numpy as np\n" + _CALL), _NS)  # the child runs the same source
call = _NS["call"]


def _states(m, n, seed=0):
    rng = np.random.default_rng(seed)
    return (dqdyn.random_configuration(m, size=n, seed=seed), rng.normal(size=(n, m.nv)),
            rng.normal(size=(n, m.nv)))


def test_a_read_only_input_is_not_copied():
    x = np.arange(12.0).reshape(4, 3)
    x.flags.writeable = False
    k = kernel_rows(x)
    assert k.flags.writeable and k.flags.c_contiguous and k.dtype == x.dtype
    assert np.shares_memory(k, x) and k.ctypes.data == x.ctypes.data
    np.testing.assert_array_equal(k, x)
    del x  # the view holds the array (and a memmap's mapping) alive
    assert k.sum() == 66.0
    w = np.ones((2, 3))
    assert kernel_rows(w) is w  # writable: as it is
    f = np.asfortranarray(np.ones((3, 2)))
    assert kernel_rows(f).flags.c_contiguous and not np.shares_memory(kernel_rows(f), f)
    e = np.empty((0, 3))
    e.flags.writeable = False
    assert kernel_rows(e).shape == (0, 3) and kernel_rows(e).flags.writeable


@pytest.mark.parametrize("n", [3, 700])  # (a small batch through the gate; chunked batch kernels)
def test_no_kernel_writes_to_a_read_only_owned_input(n):
    """Inputs flagged read-only keep their numbers, and the results are those of writable ones."""
    m = dqdyn.random_tree(9, seed=11)  # every joint type
    dqdyn.config.set_batch_chunk(256)
    try:
        for name in NAMES:
            q, v, a = _states(m, n)
            want = call(name, m, q, v, a)
            ro = [x.copy() for x in (q, v, a)]
            for x in ro:
                x.flags.writeable = False
            got = call(name, m, *ro)
            np.testing.assert_array_equal(got, want, err_msg=name)
            for x, y in zip(ro, (q, v, a)):
                np.testing.assert_array_equal(x, y, err_msg=f"{name} wrote to its input")
    finally:
        dqdyn.config.set_batch_chunk(65536)


def test_every_batched_function_runs_on_read_only_memmaps(tmp_path):
    """Memmaps opened ``"r"`` (as ``da.from_npy_stack(..., mmap_mode="r")`` gives Dask's blocks):
    their pages are mapped read-only, so a kernel writing to an input would kill the process.
    Run in a child process, each function on a chunked batch; its results equal those of
    writable inputs bit for bit."""
    m = dqdyn.random_tree(9, seed=11)
    q, v, a = _states(m, 700, seed=3)
    for k, x in zip("qva", (q, v, a)):
        np.save(tmp_path / f"{k}.npy", x)
    want = {name: call(name, m, q, v, a) for name in NAMES}
    np.savez(tmp_path / "want.npz", **want)
    child = textwrap.dedent("""
        import sys, numpy as np, dqdyn
        d = sys.argv[1]
        m = dqdyn.random_tree(9, seed=11)
        dqdyn.config.set_batch_chunk(256)
        q, v, a = (np.load(f"{d}/{k}.npy", mmap_mode="r") for k in "qva")
        assert not q.flags.writeable
        want = np.load(f"{d}/want.npz")
    """) + textwrap.dedent(_CALL) + textwrap.dedent("""
        for name in want.files:
            np.testing.assert_array_equal(call(name, m, q, v, a), want[name], err_msg=name)
        print("ok", len(want.files))
    """)
    r = subprocess.run([sys.executable, "-c", child, str(tmp_path)], capture_output=True, text=True)
    assert r.returncode == 0, (r.returncode, r.stderr[-3000:])
    assert r.stdout.split() == ["ok", str(len(NAMES))]
