"""The tree-sparse ``M = Lᵀ L`` factor and its solves ([Featherstone2008, §6.5]) against numpy's
dense factor and solve, on the mass matrices of a chain, a branched tree with a floating base and
a humanoid, and on right-hand sides that live on one path (a contact row)."""

import numba
import numpy as np
import pytest

import dqdyn
from dqdyn._engine.linalg import (
    dot4,
    tree_factor_r,
    tree_l_mul,
    tree_l_solve_r,
    tree_lt_solve_r,
    tree_nnz,
    tree_spd_inverse,
)
from dqdyn.multibody.model import dof_parents


@numba.njit(cache=False)
def _factor_solve(mi, M, B):
    n = M.shape[0]
    par = np.empty(n, np.int64)
    ok = dof_parents(mi, par)
    L = np.full((n, n), np.nan)  # (entries off the tree's pattern must never be read)
    d = np.empty(n)
    ok = ok and tree_factor_r(M, n, par, L, d)
    X = B.copy()
    Y = B.copy()
    Z = B.copy()
    for c in range(B.shape[0]):
        tree_lt_solve_r(L, d, par, n, Y[c])
        X[c] = Y[c]
        tree_l_solve_r(L, d, par, n, X[c])
        tree_l_mul(L, par, n, B[c], Z[c])
    return ok, par, L, Y, X, Z


def _models():
    b = dqdyn.ModelBuilder("tree")
    b.add_body("base", joint="free", mass=3.0, inertia=0.1 * np.eye(3), joint_name="root")
    for leg, y in (("l", 0.2), ("r", -0.2)):
        b.add_body(f"{leg}1", "base", "revolute", mass=0.5, inertia=0.01 * np.eye(3), axis=[1, 0, 0],
                   xyz=[0, y, 0], com=[0, 0, -0.1])
        b.add_body(f"{leg}f", f"{leg}1", "fixed", mass=0.2, inertia=0.01 * np.eye(3), xyz=[0, 0, -0.2])
        b.add_body(f"{leg}2", f"{leg}f", "spherical", mass=0.4, inertia=0.01 * np.eye(3),
                   com=[0, 0, -0.1])
    return [dqdyn.serial_chain(7), b.build()]


@pytest.mark.parametrize("k", [0, 1])
def test_tree_factor_and_solves_match_numpy(k):
    model = _models()[k]
    rng = np.random.default_rng(k)
    q = dqdyn.random_configuration(model, seed=k)
    M = dqdyn.mass_matrix(model, q)
    B = rng.standard_normal((3, model.nv))
    ok, par, L, Y, X, Z = _factor_solve(model.mi, M, B)
    assert ok
    assert np.all(par < np.arange(model.nv))
    Lt = np.where(np.isnan(L), 0.0, L)
    np.testing.assert_allclose(Lt.T @ Lt, M, rtol=0, atol=1e-13 * np.abs(M).max())
    np.testing.assert_allclose(X, np.linalg.solve(M, B.T).T, rtol=1e-11, atol=1e-12)
    np.testing.assert_allclose(Y, np.linalg.solve(Lt.T, B.T).T, rtol=1e-11, atol=1e-12)
    np.testing.assert_allclose(Z, (Lt @ B.T).T, rtol=1e-13, atol=1e-13 * np.abs(Z).max())
    # off the pattern L is never written: an entry (i, j) with j not an ancestor of i stays NaN
    for i in range(model.nv):
        anc, j = set(), par[i]
        while j >= 0:
            anc.add(j)
            j = par[j]
        for j in range(i):
            assert np.isnan(L[i, j]) == (j not in anc)


def test_a_row_on_one_path_stays_on_it():
    """``L⁻ᵀ a`` for a row supported on the DoFs of one leg and the base (a foot's contact row)
    is zero off them: the contact kernels solve only up to the row's last DoF."""
    model = _models()[1]
    q = dqdyn.random_configuration(model, seed=3)
    M = dqdyn.mass_matrix(model, q)
    leg = np.r_[0:6, model.v_slice("l1_joint"), model.v_slice("l2_joint")]
    a = np.zeros((1, model.nv))
    a[0, leg] = np.random.default_rng(3).standard_normal(leg.size)
    _, _, _, Y, _, _ = _factor_solve(model.mi, M, a)
    off = np.setdiff1d(np.arange(model.nv), leg)
    assert np.all(Y[0, off] == 0.0) and np.abs(Y[0, leg]).min() > 0


def test_singular_matrix_is_refused():
    model = _models()[0]
    M = dqdyn.mass_matrix(model, np.zeros(model.nq))
    M[3, 3] = -1.0
    ok, *_ = _factor_solve(model.mi, M, np.ones((1, model.nv)))
    assert not ok


@pytest.mark.parametrize("n", [0, 1, 3, 4, 5, 17])
def test_dot4_is_the_dot_product(n):
    rng = np.random.default_rng(n)
    x, y = rng.standard_normal(n + 2), rng.standard_normal(n + 2)
    assert abs(dot4(x, y, n) - float(x[:n] @ y[:n])) <= 1e-14 * (1 + np.abs(x[:n] * y[:n]).sum())


@numba.njit(cache=False)
def _inverse(mi, M):
    n = M.shape[0]
    par = np.empty(n, np.int64)
    dof_parents(mi, par)
    out = np.empty((n, n))
    ok = tree_spd_inverse(M, n, par, np.empty((n, n)), np.empty(n), np.empty(n),
                          np.empty(n, np.int64), out)
    return ok, out, tree_nnz(par, n)


@pytest.mark.parametrize("seed", range(4))
def test_tree_inverse_matches_numpy(seed):
    """Depth-first numbered trees (subtrees contiguous: the outer-product route) and trees numbered
    otherwise (random attachments: entry by entry), against ``numpy.linalg.inv``."""
    for model in _models() + [dqdyn.random_tree(12, seed=seed, branching=0.3 + 0.2 * seed)]:
        q = dqdyn.random_configuration(model, seed=seed)
        M = dqdyn.mass_matrix(model, q)
        ok, Mi, nnz = _inverse(model.mi, M)
        assert ok and nnz >= model.nv
        np.testing.assert_array_equal(Mi, Mi.T)
        np.testing.assert_allclose(Mi, np.linalg.inv(M), rtol=1e-10, atol=1e-12 * np.abs(Mi).max())
