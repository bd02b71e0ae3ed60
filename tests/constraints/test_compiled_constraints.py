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
from dqdyn.constraints import _compiled as CK
from dqdyn.constraints import forward as D
from dqdyn.constraints import udwadia_kalaba as UK
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


def _general(m, q, v, tau, cons, baumgarte=None):
    """The general path itself (numpy rows, M and h from CRBA and RNEA): a batch of one through
    the public function would run the compiled kernel too (the call gate takes small batches)."""
    return list(D._general_path(m, q, v, tau, cons, baumgarte, "crba", 1e-10, 1e-9))


@pytest.mark.parametrize("name,m,cons,q0", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("baumgarte", [None, (3.0, 4.0)])
def test_compiled_path_equals_the_general_path_and_kkt(name, m, cons, q0, baumgarte, monkeypatch):
    rng = np.random.default_rng(1)
    q = dqdyn.integrate(m, q0, 0.01 * rng.normal(size=m.nv))  # off the manifold: φ ≠ 0
    v = null_velocity(m, cons, q, rng) + 0.01 * rng.normal(size=m.nv) if cons else rng.normal(size=m.nv)
    tau = rng.normal(size=m.nv)
    calls = []
    split = D.SPLIT
    monkeypatch.setattr(D, "SPLIT", lambda *a: calls.append(1) or split(*a))
    monkeypatch.setattr(D, "stack_terms", _refuse)  # (the general path fails here)
    r = cfd(m, q, v, tau, cons, baumgarte=baumgarte)
    monkeypatch.undo()
    assert calls, "the compiled path did not run"
    ref = _general(m, q, v, tau, cons, baumgarte=baumgarte)
    for ours, theirs in zip(r, ref):
        assert ours.shape == theirs.shape
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-12 * (1 + np.abs(theirs).max(initial=0.0)))
    if cons:
        _assert_kkt(m, q, v, tau, r, 1e-9)
    else:
        np.testing.assert_allclose(r.qdd, dqdyn.aba(m, q, v, tau), atol=1e-10)


def _assert_kkt(m, q, v, tau, r, atol):
    """Oracle: the KKT system (``kkt_solve``, least squares) with dqdyn's ``M`` and ``h`` and the
    result's own ``A``, ``b`` — consistent, and the same ``q̈`` to ``atol`` of its scale."""
    M, h = dqdyn.mass_matrix(m, q), dqdyn.nonlinear_effects(m, q, v)
    qdd, lam, res = kkt_solve(M, tau - h, r.A, r.b)
    assert res < 1e-9
    np.testing.assert_allclose(r.qdd, qdd, rtol=0, atol=atol * (1 + np.abs(qdd).max()))


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
    used = UK._full_rank_solve(W, r, G, LG, Gi, z, proj, lam)
    return used, z, proj, lam


def test_udwadia_kalaba_takes_cholesky_only_where_the_pseudo_inverse_is_the_inverse():
    """The UK step by a Cholesky of ``G = D Dᵀ`` ([Silva2022, eq. (63)] with D of full row rank)
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
    _assert_kkt(m7, q7, v, tau, cfd(m7, q7, v, tau, c6), 1e-9)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_one_world_frame_sweep_gives_crba_and_rnea(seed):
    """``derivatives.dynamics_sweep`` (the one-call kernel's ``M`` and ``h``: one world-frame
    sweep, its composite inertias and forces) against the body-frame CRBA and dqNE of
    ``mass_matrix`` / ``nonlinear_effects`` on random trees of every joint type, and against
    Pinocchio's ``crba`` / ``nonLinearEffects`` where the velocity conventions agree."""
    from dqdyn.dynamics.derivatives._sweeps import dynamics_sweep, dynamics_sweep_size

    m = dqdyn.random_tree(9, seed=seed)
    rng = np.random.default_rng(seed)
    q = dqdyn.random_configuration(m, seed=rng)
    v = rng.normal(size=m.nv)
    ws = np.full(dynamics_sweep_size(m.nbodies + 1, m.nv), np.nan)
    M, h = np.full((m.nv, m.nv), np.nan), np.full(m.nv, np.nan)
    dynamics_sweep(m.mi, m.mf, q, v, ws, M, h)
    M0, h0 = dqdyn.mass_matrix(m, q), dqdyn.nonlinear_effects(m, q, v)
    np.testing.assert_allclose(M, M0, rtol=0, atol=1e-12 * np.abs(M0).max())
    np.testing.assert_allclose(h, h0, rtol=0, atol=1e-12 * (1 + np.abs(h0).max()))
    from pinconv import pin, pin_from_model, q_to_pin, v_transform

    mp = dqdyn.random_tree(9, joint_types=("revolute", "prismatic", "helical", "spherical", "free"), seed=seed)
    pm, _ = pin_from_model(mp)
    pd = pm.createData()
    q = dqdyn.random_configuration(mp, seed=rng)
    v = rng.normal(size=mp.nv)
    ws = np.empty(dynamics_sweep_size(mp.nbodies + 1, mp.nv))
    M, h = np.empty((mp.nv, mp.nv)), np.empty(mp.nv)
    dynamics_sweep(mp.mi, mp.mf, q, v, ws, M, h)
    T = v_transform(mp, pm, q)
    qp = q_to_pin(mp, pm, q)
    Mp = pin.crba(pm, pd, qp)
    Mp = np.triu(Mp) + np.triu(Mp, 1).T
    np.testing.assert_allclose(T.T @ Mp @ T, M, rtol=0, atol=1e-10 * np.abs(M).max())
    np.testing.assert_allclose(T.T @ pin.nonLinearEffects(pm, pd, qp, T @ v), h, rtol=0,
                               atol=1e-10 * (1 + np.abs(h).max()))


@pytest.mark.parametrize("seed", [0, 1])
def test_constraint_frames_from_the_sweep_equal_the_drift_kernel(seed):
    """The one-call kernel's frame rows (``dynamics._frame``: J and J̇ v from the sweep's world
    axes, twists and bias accelerations) against ``jacobians.jacobian_drift_kernel`` (a pass
    from the frame to the root in the frame's axes, itself tested against Pinocchio and
    finite differences) for every body of random trees, frames placed off the body, in the
    frame's axes and world-aligned."""
    from dqdyn.algebra._core import pose_translation
    from dqdyn.constraints.base import frame_rotation
    from dqdyn.dynamics.derivatives._sweeps import dynamics_sweep, dynamics_sweep_size
    from dqdyn.kinematics.jacobians import jacobian_drift_kernel

    m = dqdyn.random_tree(9, seed=seed)
    rng = np.random.default_rng(10 + seed)
    q = dqdyn.random_configuration(m, seed=rng)
    v = rng.normal(size=m.nv)
    ws = np.empty(dynamics_sweep_size(m.nbodies + 1, m.nv))
    dynamics_sweep(m.mi, m.mf, q, v, ws, np.empty((m.nv, m.nv)), np.empty(m.nv))
    for body in range(m.nbodies + 1):
        pl = dqdyn.algebra.pose_from_rt(dqdyn.algebra.quat_from_axis_angle(rng.normal(size=3), rng.normal()),
                                        rng.normal(size=3))
        for code in (0, 2):
            J1, jdv1, x1 = np.zeros((6, m.nv)), np.empty(6), np.empty(8)
            assert jacobian_drift_kernel(m.mi, m.mf, q, v, body, pl, code, np.empty((5, 8)), J1, jdv1, x1) == 0
            J2, jdv2, R, p = np.full((6, m.nv), np.nan), np.full(6, np.nan), np.empty((3, 3)), np.empty(3)
            CK._frame(m.mi, m.mf, q, body, pl, code, ws, J2, jdv2, R, p, np.empty(16))
            R1, p1 = np.empty((3, 3)), np.empty(3)
            frame_rotation(x1, R1)
            pose_translation(x1, p1)
            scale = 1 + np.abs(J1).max()
            np.testing.assert_allclose(J2, J1, rtol=0, atol=1e-12 * scale)
            np.testing.assert_allclose(jdv2, jdv1, rtol=0, atol=1e-11 * (1 + np.abs(jdv1).max()))
            np.testing.assert_allclose(R, R1, rtol=0, atol=1e-13)
            np.testing.assert_allclose(p, p1, rtol=0, atol=1e-12 * (1 + np.abs(p1).max()))


def test_compiled_path_far_from_the_world_origin_and_with_mimic_joints():
    """The sweep puts the root body at the origin of the world axes: the mobile manipulator
    2 km from the origin keeps the general path's and the KKT solution's digits.  A model with
    mimic joints takes the general path (the sweep has one column per velocity), same answer."""
    m, cons, q0 = mobile_manipulator()
    rng = np.random.default_rng(4)
    q = q0.copy()
    q[0], q[1] = 1500.0, -1300.0  # the planar base's x, y
    v = null_velocity(m, cons, q, rng)
    tau = rng.normal(size=m.nv)
    r = cfd(m, q, v, tau, cons)
    ref = _general(m, q, v, tau, cons)
    for ours, theirs in zip(r, ref):
        np.testing.assert_allclose(ours, theirs, rtol=1e-11, atol=1e-11 * (1 + np.abs(theirs).max(initial=0.0)))
    _assert_kkt(m, q, v, tau, r, 1e-10)
    # mimic: a 7R chain whose last joint follows j2
    b = dqdyn.ModelBuilder("mimic7")
    parent = "world"
    for k in range(7):
        b.add_body(f"l{k}", parent, "revolute", joint_name=f"j{k}", axis=tuple(rng.normal(size=3)), xyz=(0.1, 0.0, 0.2),
                   mass=1.0, com=(0.05, 0.0, 0.0), inertia=np.diag([0.01, 0.02, 0.03]),
                   **({"mimic": ("j2", 0.5, 0.1)} if k == 6 else {}))
        parent = f"l{k}"
    mm = b.build()
    assert mm.nv == 6
    qm = rng.normal(size=mm.nq)
    xm = dqdyn.frame_pose(mm, qm, "l6")
    cm = [LoopClosure((0, xm), "l6", "3d")]
    vm = null_velocity(mm, cm, qm, rng)
    tm = rng.normal(size=mm.nv)
    _assert_kkt(mm, qm, vm, tm, cfd(mm, qm, vm, tm, cm), 1e-9)


@pytest.mark.parametrize("name,m,cons,q0", CASES[:4], ids=[c[0] for c in CASES[:4]])
def test_a_states_numbers_do_not_depend_on_the_batch_it_comes_in(name, m, cons, q0):
    """Oracle: the single-state call, bit for bit.  A batch larger than the call gate runs
    (N · nb1 > SERIAL_WORK), rows the gate does not take (a list, a strided view, a 3-D batch
    with a shared τ) and a small batch: each state gets its single call's numbers (a batch of
    jaco6 above ~585 states once took the general path, whose M and h — CRBA and RNEA — differ
    from the one-call sweep's in the last bits: q̈ ~1e-12 apart, and a Dask chunk's result
    depended on the chunk size)."""
    from dqdyn._engine.batching import SERIAL_WORK

    N = SERIAL_WORK // m.mi.shape[0] + 3
    rng = np.random.default_rng(8)
    Q = np.stack([dqdyn.integrate(m, q0, 0.01 * rng.normal(size=m.nv)) for _ in range(N)])
    V, T = rng.normal(size=(2, N, m.nv))
    one = [cfd(m, Q[k], V[k], T[k], cons) for k in range(N)]
    big = cfd(m, Q, V, T, cons)
    for f, part in enumerate(big):
        assert part.shape == (N,) + one[0][f].shape
        assert np.array_equal(part, np.stack([o[f] for o in one])), (name, big._fields[f])
    rows = [3, N // 2, N - 1]
    for got in ([cfd(m, Q[k].tolist(), V[k], T[k], cons) for k in rows],  # lists
                [cfd(m, Q[k::N], V[k::N], T[k::N], cons) for k in rows],  # (1, n) rows
                cfd(m, np.asfortranarray(Q[rows]), V[rows], T[rows], cons)):  # a strided batch
        for i, k in enumerate(rows):
            g = got[i] if isinstance(got, list) else [x[i] for x in got]
            for f in range(5):
                assert np.array_equal(np.reshape(g[f], one[k][f].shape), one[k][f]), (name, k, f)
    r3 = cfd(m, Q[:6].reshape(2, 3, -1), V[:6].reshape(2, 3, -1), T[0], cons)  # τ shared
    ref = cfd(m, Q[:6], V[:6], T[0], cons)
    for a, b in zip(r3, ref):
        assert a.shape == (2, 3) + b.shape[1:] and np.array_equal(a.reshape(b.shape), b)
    bad = Q.copy()
    bad[N - 2, 0] = np.nan  # a failing state in a large batch: the general path names it
    with pytest.raises(dqdyn.errors.NonFiniteError, match="q"):
        cfd(m, bad, V, T, cons)


def test_gauss_dynamics_on_a_batch_is_each_states():
    """``dynamics="gauss"`` (the dqGP terms, [Silva2022, eq. (63)] literally) on a batch: each state's
    single-call result (to round-off: ``C v`` is a batched matmul there) and the CRBA path's
    (once a ValueError from ``C @ v`` on a batch)."""
    m, cons, q0 = mobile_manipulator()
    rng = np.random.default_rng(3)
    Q = np.stack([dqdyn.integrate(m, q0, 0.01 * rng.normal(size=m.nv)) for _ in range(3)])
    V, T = rng.normal(size=(2, 3, m.nv))
    got = cfd(m, Q, V, T, cons, dynamics="gauss")
    for k in range(3):
        one = cfd(m, Q[k], V[k], T[k], cons, dynamics="gauss")
        crba = cfd(m, Q[k], V[k], T[k], cons)
        for a, b, c in zip(got, one, crba):
            np.testing.assert_allclose(a[k], b, rtol=1e-12, atol=1e-12 * (1 + np.abs(b).max()))
            np.testing.assert_allclose(a[k], c, rtol=1e-9, atol=1e-9 * (1 + np.abs(c).max()))



def test_more_rows_than_the_models_workspace_holds(monkeypatch):
    """The call gate runs the one-call kernel on the model's workspace; with more constraint rows
    than it holds (40 copies of one coupling on a 3-body chain: the Udwadia–Kalaba step alone
    needs 3·40² floats, the workspace ~1000) the kernel allocates its own block.  Oracles: the
    general path (CRBA + RNEA, numpy rows: to round-off), the rows' own equation A q̈ = b, and
    the same state in a batch larger than the gate runs (each state allocating: bit for bit)."""
    from dqdyn._engine.batching import SERIAL_WORK

    mb = dqdyn.ModelBuilder("chain3")
    parent = "world"
    for k in range(3):
        mb.add_body(f"b{k}", parent, "revolute", axis=(0, 0, 1) if k % 2 else (0, 1, 0),
                    xyz=(0.1, 0.0, 0.3), mass=1.0 + k, inertia=np.eye(3) * 0.1)
        parent = f"b{k}"
    m = mb.build()
    cons = [JointCoupling(m.joint_names[1], m.joint_names[2], ratio=0.5)] * 40
    sp = D._compiled_spec(m, cons)
    assert sp is not None and sp[2][2] == (40,)  # (the compiled rows: the gate runs it)
    assert m._scratch.size < 3 * 40 * 40  # (the case under test)
    rng = np.random.default_rng(3)
    q, v, tau = rng.normal(size=(3, m.nv))
    ref = _general(m, q, v, tau, cons)
    monkeypatch.setattr(D, "stack_terms", _refuse)  # (the general path fails from here on)
    got = cfd(m, q, v, tau, cons)
    np.testing.assert_allclose(got.qdd, ref[0], rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(got.A @ got.qdd, got.b, atol=1e-9)
    N = SERIAL_WORK // m.mi.shape[0] + 2  # a batch the gate declines: the parallel kernel
    big = cfd(m, np.tile(q, (N, 1)), np.tile(v, (N, 1)), np.tile(tau, (N, 1)), cons)
    for f, part in enumerate(big):
        assert np.array_equal(part[N - 1], got[f]), big._fields[f]
