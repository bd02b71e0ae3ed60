"""The one-call compiled path of ``constrained_forward_dynamics`` (single state, bundled kinds:
differential drive, 6D / 3D loop closures, joint couplings) against the general path, where
each constraint's rows are evaluated in numpy (``Constraint._terms`` + ``stack_terms``), and
against the KKT solution; which path ran is checked, and the kinds without a compiled form (5D,
1D loops, wheel rows, user constraints) fall back.  The Pinocchio comparisons of test_loops.py
and test_nonholonomic.py call single states, so they run the compiled path too."""

import numpy as np
import pytest

import dqdyn
from dqdyn.constraints import (
    JointCoupling,
    LoopClosure,
    UserConstraint,
    four_bar,
    mobile_manipulator,
)
from dqdyn.constraints import dynamics as D
from dqdyn.constraints.dynamics import constrained_forward_dynamics as cfd
from dqdyn.constraints.dynamics import kkt_solve
from loop_models import null_velocity, spatial_7r


def _cases():
    out = []
    m, cons, q0 = mobile_manipulator()
    out.append(("diff_drive", m, cons, q0))
    m7, q7 = spatial_7r(seed=5)
    x = dqdyn.frame_pose(m7, q7, "tip")
    out.append(("loop_6d", m7, [LoopClosure((0, x), "tip", "6d")], q7))
    out.append(("loop_3d", m7, [LoopClosure((0, x), ("tip", (0.1, 0.0, 0.2)), "3d")], q7))
    mf, consf, qf = four_bar()
    out.append(("four_bar_3d", mf, consf, qf))
    out.append(("coupling_and_loop", m7, [JointCoupling("j2", "j5", ratio=-2.5, offset=q7[2] + 2.5 * q7[5]),
                                          LoopClosure((0, x), "tip", "3d")], q7))
    out.append(("none", m7, [], q7))
    return out


CASES = _cases()


@pytest.fixture
def general_path_only(monkeypatch):
    """Make the compiled path unavailable: every call takes the general path."""
    monkeypatch.setattr(D, "_compiled_call", lambda *a, **k: None)


def _general(m, q, v, tau, cons, **kw):
    r = cfd(m, q[None], v[None], tau[None], cons, **kw)  # (a batch: always the general path)
    return [x[0] for x in r]


@pytest.mark.parametrize("name,m,cons,q0", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("baumgarte", [None, (3.0, 4.0)])
def test_compiled_path_equals_the_general_path_and_kkt(name, m, cons, q0, baumgarte, monkeypatch):
    rng = np.random.default_rng(1)
    q = dqdyn.integrate(m, q0, 0.01 * rng.normal(size=m.nv))  # off the manifold: φ ≠ 0
    v = null_velocity(m, cons, q, rng) + 0.01 * rng.normal(size=m.nv) if cons else rng.normal(size=m.nv)
    tau = rng.normal(size=m.nv)
    calls = []
    orig = D._compiled_call
    monkeypatch.setattr(D, "_compiled_call", lambda *a: calls.append(1) or orig(*a))
    monkeypatch.setattr(D, "stack_terms", _refuse)
    r = cfd(m, q, v, tau, cons, baumgarte=baumgarte)
    monkeypatch.undo()
    assert calls, "the compiled path did not run"
    ref = _general(m, q, v, tau, cons, baumgarte=baumgarte)
    for ours, theirs in zip(r, ref):
        assert ours.shape == theirs.shape
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-12 * (1 + np.abs(theirs).max(initial=0.0)))
    M, h = dqdyn.mass_matrix(m, q), dqdyn.nonlinear_effects(m, q, v)
    if cons:
        qdd, lam, res = kkt_solve(M, tau - h, r.A, r.b)
        assert res < 1e-9
        np.testing.assert_allclose(r.qdd, qdd, atol=1e-9 * (1 + np.abs(qdd).max()))
    else:
        np.testing.assert_allclose(r.qdd, dqdyn.aba(m, q, v, tau), atol=1e-10)


def _refuse(*a, **k):
    raise AssertionError("the general path ran")


def test_kinds_without_a_compiled_form_fall_back(monkeypatch):
    m7, q7 = spatial_7r(seed=5)
    x = dqdyn.frame_pose(m7, q7, "tip")
    A = np.zeros((1, m7.nv))
    A[0, 0] = 1.0
    rng = np.random.default_rng(2)
    v, tau = rng.normal(size=(2, m7.nv))
    for cons in ([LoopClosure((0, x), "tip", "5d")], [LoopClosure((0, x), ("tip", (0.2, 0, 0)), "1d").at(m7, q7)],
                 [UserConstraint(A=A)], [JointCoupling("j2", "j5"), UserConstraint(A=A)]):
        assert D._compiled_spec(m7, cons) is None
        r = cfd(m7, q7, v, tau, cons)
        ref = _general(m7, q7, v, tau, cons)
        np.testing.assert_allclose(r.qdd, ref[0], rtol=1e-12, atol=1e-12)


def test_errors_on_the_compiled_path_are_the_general_paths():
    m, cons, q0 = mobile_manipulator()
    z = np.zeros(m.nv)
    bad = q0.copy()
    bad[3] = np.nan
    with pytest.raises(dqdyn.errors.NonFiniteError, match="q"):
        cfd(m, bad, z, z, cons)
    with pytest.raises(dqdyn.errors.ShapeError, match="baumgarte"):
        cfd(m, q0, z, z, cons, baumgarte=(1.0, -1.0))
    with pytest.raises(dqdyn.errors.ShapeError, match="rcond"):
        cfd(m, q0, z, z, cons, rcond=2.0)
    with pytest.raises(dqdyn.errors.ShapeError):
        cfd(m, q0[:-1], z, z, cons)
    # contradictory rows: one coupling twice with two offsets, and β > 0 (equal rows of A,
    # different b): the general path's InfeasibleError
    m7, q7 = spatial_7r(seed=5)
    z7 = np.zeros(m7.nv)
    cons = [JointCoupling("j2", "j5", offset=0.0), JointCoupling("j2", "j5", offset=0.5)]
    with pytest.raises(dqdyn.errors.InfeasibleError):
        cfd(m7, q7, z7, z7, cons, baumgarte=(0.0, 2.0))


def _full_rank_step(W, r):
    n, m = W.shape
    G, LG, Gi = np.empty((m, m)), np.empty((m, m)), np.empty((m, m))
    z, proj, lam = np.full(n, 7.0), np.full(m, 7.0), np.full(m, 7.0)
    used = D._full_rank_solve(W, r, G, LG, Gi, z, proj, lam)
    return used, z, proj, lam


def test_udwadia_kalaba_takes_cholesky_only_where_the_pseudo_inverse_is_the_inverse():
    """The UK step by a Cholesky of ``G = D Dᵀ`` (seed 000 eq. 63 with D of full row rank)
    against numpy's SVD pseudo-inverse (the oracle): equal to round-off where D is well
    conditioned; refused — the Jacobi SVD path then runs, and z, λ are untouched — where D has
    a redundant row or singular values more than ~300× apart (cond₁ G ≥ 1e5)."""
    rng = np.random.default_rng(3)
    for n, m in ((7, 6), (8, 1), (9, 3)):
        U, _, Vt = np.linalg.svd(rng.normal(size=(n, m)), full_matrices=False)
        W = U @ np.diag(np.geomspace(30.0, 1.0, m)) @ Vt  # singular values 30 … 1
        r = rng.normal(size=m)
        used, z, proj, lam = _full_rank_step(W, r)
        D_ = W.T
        assert used
        np.testing.assert_allclose(z, np.linalg.pinv(D_) @ r, rtol=0, atol=1e-12 * np.abs(z).max())
        np.testing.assert_allclose(lam, np.linalg.pinv(D_ @ D_.T) @ r, rtol=1e-10)
        np.testing.assert_allclose(proj, r, rtol=0, atol=1e-12)
    W = rng.normal(size=(7, 3))
    W[:, 2] = W[:, 0] - 2 * W[:, 1]  # a redundant row of D
    assert not _full_rank_step(W, rng.normal(size=3))[0]
    U, _, Vt = np.linalg.svd(rng.normal(size=(7, 3)), full_matrices=False)
    W = U @ np.diag([1.0, 0.1, 1e-3]) @ Vt  # σ ratio 1000: cond₂ G = 1e6
    used, z, proj, lam = _full_rank_step(W, rng.normal(size=3))
    assert not used and np.all(z == 7.0) and np.all(lam == 7.0)
    # and the whole call still matches the KKT solution on such a constraint set
    m7, q7 = spatial_7r(seed=5)
    x = dqdyn.frame_pose(m7, q7, "tip")
    c6 = [LoopClosure((0, x), "tip", "6d")]
    v = null_velocity(m7, c6, q7, rng)
    tau = rng.normal(size=m7.nv)
    res = cfd(m7, q7, v, tau, c6)
    M, h = dqdyn.mass_matrix(m7, q7), dqdyn.nonlinear_effects(m7, q7, v)
    qdd_kkt = kkt_solve(M, tau - h, res.A, res.b)[0]
    np.testing.assert_allclose(res.qdd, qdd_kkt, rtol=0, atol=1e-9 * (1 + np.abs(qdd_kkt).max()))
