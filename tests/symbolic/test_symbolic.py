"""dqdyn.symbolic [Mladenova, §8] against dqdyn's compiled M, C, g, regressor, and sympy calculus."""

from __future__ import annotations

import ctypes
import shutil
import subprocess

import numpy as np
import pytest

sp = pytest.importorskip("sympy")

import dqdyn  # noqa: E402
from dqdyn.errors import ModelError  # noqa: E402
from dqdyn.symbolic import dynamics  # noqa: E402


def _close(a, b, tol=1e-12):
    a, b = np.asarray(a, float), np.asarray(b, float)
    assert a.shape == b.shape
    err = np.abs(a - b).max() / max(1.0, np.abs(b).max())
    assert err < tol, err


def _check_against_kernels(model, f, rng, n=4):
    for _ in range(n):
        q = rng.uniform(-2.5, 2.5, model.nq)
        v = rng.normal(size=model.nv)
        M, C, g = f(q, v)
        _close(M, dqdyn.mass_matrix(model, q))
        _close(C, dqdyn.coriolis_matrix(model, q, v))
        _close(g, dqdyn.gravity(model, q))


@pytest.fixture(scope="module")
def tree():
    return dqdyn.random_tree(6, ["revolute", "prismatic", "helical"], seed=3)


@pytest.fixture(scope="module")
def tree_dyn(tree):
    return dynamics(tree)


@pytest.fixture(scope="module")
def xarm7():
    from pinconv import ROBOTS, erd

    return dqdyn.load_urdf(erd(ROBOTS["xarm7"][0]))


def test_seven_dof_arm_matches_compiled_kernels(xarm7):
    d = dynamics(xarm7)
    assert d.q == sp.symbols("q0:7") and d.v == sp.symbols("v0:7")
    _check_against_kernels(xarm7, d.numpy_function(), np.random.default_rng(0))


def test_random_tree_matches_compiled_kernels(tree, tree_dyn):
    _check_against_kernels(tree, tree_dyn.numpy_function(), np.random.default_rng(1))
    # the vector C q̇ of (368) is nonlinear_effects − gravity
    (c,) = tree_dyn.numpy_function(("c",))(q := np.full(tree.nq, 0.3), v := np.linspace(-1, 1, tree.nv))
    _close(c, dqdyn.nonlinear_effects(tree, q, v) - dqdyn.gravity(tree, q))


def test_expanded_matrices_are_expressions_in_q_v():
    """``.M``, ``.C``, ``.g`` are sympy matrices in the symbols q, v only."""
    tree = dqdyn.random_tree(3, ["revolute", "prismatic"], seed=2)
    d = dynamics(tree)
    allowed = set(d.q) | set(d.v)
    for X in (d.M, d.g):
        assert X.free_symbols <= set(d.q)
    assert d.C.free_symbols <= allowed
    rng = np.random.default_rng(2)
    q, v = rng.uniform(-1, 1, tree.nq), rng.normal(size=tree.nv)
    f = sp.lambdify([d.q, d.v], [d.M, d.C, d.g], "numpy")
    M, C, g = f(q, v)
    _close(M, dqdyn.mass_matrix(tree, q))
    _close(C, dqdyn.coriolis_matrix(tree, q, v))
    _close(np.ravel(g), dqdyn.gravity(tree, q))


def test_christoffel_symbols_are_derivatives_of_M():
    """Γ_kij (by polarization of eq. 368) = ½(∂M_kj/∂q_i + ∂M_ki/∂q_j − ∂M_ij/∂q_k) (sympy diff)."""
    model = dqdyn.serial_chain(2, seed=4)
    d = dynamics(model)
    M = d.M
    n = model.nv
    dM = [M.diff(qi) for qi in d.q]
    ref = [(dM[i][k, j] + dM[j][k, i] - dM[k][i, j]) / 2
           for k in range(n) for i in range(n) for j in range(n)]
    got = [d.christoffel[k][i][j] for k in range(n) for i in range(n) for j in range(n)]
    f = sp.lambdify([d.q], [ref, got], "numpy")
    for q in ([0.3, -0.7], [-1.2, 2.0]):
        r, g = (np.asarray(a, dtype=float) for a in f(q))
        np.testing.assert_allclose(g, r, atol=1e-12)


def test_symbolic_parameters_and_regressor():
    """With symbolic inertial parameters: M, C, g at the model's π equal the kernels (this runs the
    parameter-linear form of (369)–(371)), and the regressor equals dqdyn.joint_torque_regressor."""
    model = dqdyn.serial_chain(3, seed=5)
    d = dynamics(model, symbolic_params=True)
    pi = dqdyn.inertial_parameters(model).ravel()
    f = d.numpy_function()
    rng = np.random.default_rng(3)
    q, v, a = rng.uniform(-2, 2, 3), rng.normal(size=3), rng.normal(size=3)
    M, C, g = f(q, v, pi)
    _close(M, dqdyn.mass_matrix(model, q))
    _close(C, dqdyn.coriolis_matrix(model, q, v))
    _close(g, dqdyn.gravity(model, q))
    Y, acc = d.regressor()
    assert Y.free_symbols <= set(d.q) | set(d.v) | set(acc)  # linear in π
    Yn = np.array(sp.lambdify([d.q, d.v, acc], Y, "numpy")(q, v, a), dtype=float)
    _close(Yn, dqdyn.joint_torque_regressor(model, q, v, a))
    _close(Yn @ pi, dqdyn.rnea(model, q, v, a))


def test_generated_c_compiles_and_runs(tree, tree_dyn, tmp_path):
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler")
    src = tree_dyn.c_source("dyn_tree")
    (tmp_path / "dyn.c").write_text(src)
    lib = tmp_path / "libdyn.so"
    r = subprocess.run([cc, "-O1", "-shared", "-fPIC", "-o", str(lib), str(tmp_path / "dyn.c"), "-lm"],
                       capture_output=True, text=True)
    if r.returncode != 0:
        pytest.fail(r.stderr)
    so = ctypes.CDLL(str(lib))
    n = tree.nv
    P = ctypes.POINTER(ctypes.c_double)
    so.dyn_tree.argtypes = [P] * 5
    rng = np.random.default_rng(4)
    for _ in range(3):
        q = np.ascontiguousarray(rng.uniform(-2, 2, tree.nq))
        v = np.ascontiguousarray(rng.normal(size=n))
        M, C, g = np.zeros((n, n)), np.zeros((n, n)), np.zeros(n)
        so.dyn_tree(*(x.ctypes.data_as(P) for x in (q, v, M, C, g)))
        _close(M, dqdyn.mass_matrix(tree, q))
        _close(C, dqdyn.coriolis_matrix(tree, q, v))
        _close(g, dqdyn.gravity(tree, q))


def test_unsupported_joint_raises_model_error():
    model = dqdyn.random_tree(3, ["revolute", "spherical"], seed=0)
    with pytest.raises(ModelError, match="spherical"):
        dynamics(model)


def test_unknown_output_name(tree_dyn):
    with pytest.raises(dqdyn.errors.DqdynError, match="which"):
        tree_dyn.numpy_function(("Q",))
