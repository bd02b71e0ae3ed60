"""Nonholonomic mobile manipulators ([Silva2022, §4.5, eqs. (62)–(64)]): the 8-DoF differential-drive
mobile manipulator and TIAGo (example-robot-data) with rolling without slipping.

Oracles: a KKT (Lagrange-multiplier) solve built from **Pinocchio's** M and nonlinear effects
(layout conversion of tests/pinconv.py), the paper's eq. 62 taken literally with the symmetric
square root ``M^{1/2}`` (scipy), the closed-form eq. 64 row, and energy conservation of a
zero-torque simulation (constraint forces do no work) at the integrator's order.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.linalg as sla

import dqdyn
from dqdyn.constraints import DifferentialDriveConstraint, mobile_manipulator, model_constraints
from dqdyn.constraints.dynamics import (
    constrained_forward_dynamics,
    constraint_errors,
    kkt_solve,
    udwadia_kalaba,
)
from dqdyn.simulation import simulate

from pinconv import ROBOTS, erd, pin, pin_from_model, pin_from_urdf, q_to_pin, tdot_v, v_transform


def _rel(x, y):
    return float(np.abs(np.asarray(x) - np.asarray(y)).max() / max(1.0, np.abs(y).max()))


@pytest.fixture(scope="module")
def mm():
    return mobile_manipulator()


def _states(model, cons, q0, n, seed, consistent=True):
    rng = np.random.default_rng(seed)
    for _ in range(n):
        q = q0 + 0.5 * rng.normal(size=model.nq)
        v = rng.normal(size=model.nv)
        if consistent:  # project v onto A v = 0 (any v is allowed, but a real state has it)
            A = np.concatenate([c.A(model, q) for c in cons])
            v = v - np.linalg.pinv(A) @ (A @ v)
        yield q, v, rng.normal(size=model.nv) * 5


def _pin_kkt(model, pm, q, v, tau, A, b):
    """KKT in dqdyn coordinates from Pinocchio's M and nle (v_pin = T v)."""
    pd = pm.createData()
    T = v_transform(model, pm, q)
    qp = q_to_pin(model, pm, q)
    Mp = pin.crba(pm, pd, qp)
    Mp = np.triu(Mp) + np.triu(Mp, 1).T
    M = T.T @ Mp @ T
    h = T.T @ (pin.nonLinearEffects(pm, pd, qp, T @ v) + Mp @ tdot_v(model, pm, q, v))
    n, m = M.shape[0], A.shape[0]
    K = np.block([[M, -A.T], [A, np.zeros((m, m))]])
    sol = np.linalg.lstsq(K, np.r_[tau - h, b], rcond=None)[0]
    return sol[:n], sol[n:]


def test_mobile_manipulator_is_the_papers_8dof_robot(mm):
    model, cons, q0 = mm
    assert model.nv == 8 and model.nq == 8 and len(cons) == 1 and cons[0].dim == 1
    assert model_constraints(model)[0].axle_offset[0] == cons[0].axle_offset[0]
    assert mobile_manipulator(arm_dof=6)[0].nv == 9


def test_differential_drive_row_is_eq64(mm):
    """A = [−sin φ, cos φ, d, 0…] for the axle at (d, 0) on the base; b = φ̇(ẋ cos φ + ẏ sin φ)
    ([Silva2022, eq. (64)] and its derivative, with the axle off the CoM, where the paper
    tacitly puts the CoM on the axle)."""
    model, cons, q0 = mm
    d = cons[0].axle_offset[0]
    assert d != 0
    for q, v, _ in _states(model, cons, q0, 3, 0, consistent=False):
        A, b = cons[0].terms(model, q, v)
        s, c = np.sin(q[2]), np.cos(q[2])
        row = np.zeros(model.nv)
        row[:3] = -s, c, d
        assert np.abs(A[0] - row).max() < 1e-14
        assert abs(b[0] - v[2] * (v[0] * c + v[1] * s)) < 1e-13
        # b = −Ȧ v by finite differences along the motion
        h = 1e-6
        Ap = cons[0].A(model, dqdyn.integrate(model, q, v, h))
        Am = cons[0].A(model, dqdyn.integrate(model, q, v, -h))
        assert abs(b[0] + ((Ap - Am) / (2 * h) @ v)[0]) < 1e-7


def test_mobile_manipulator_satisfies_constraint_and_matches_pinocchio_kkt(mm):
    model, cons, q0 = mm
    pm, _ = pin_from_model(model)
    for consistent in (True, False):
        for q, v, tau in _states(model, cons, q0, 4, 1, consistent):
            r = constrained_forward_dynamics(model, q, v, tau, cons)
            assert np.abs(r.A @ r.qdd - r.b).max() < 1e-10
            qdd_pin, lam_pin = _pin_kkt(model, pm, q, v, tau, r.A, r.b)
            assert _rel(r.qdd, qdd_pin) < 1e-10
            assert _rel(r.multipliers, lam_pin) < 1e-10
            assert _rel(r.constraint_forces, r.A.T @ lam_pin) < 1e-10
            # the constraint force does no work on admissible velocities
            if consistent:
                assert abs(r.constraint_forces @ v) < 1e-10 * (1 + np.abs(r.constraint_forces).max())


def test_paper_eq62_literally_with_gauss_terms(mm):
    """Eq. 62 with the symmetric M^{1/2} and the dqGP terms (M_GP, C_GP, g_GP) — the paper's
    route — equals the library path (Cholesky factor, CRBA + RNEA)."""
    model, cons, q0 = mm
    for q, v, tau in _states(model, cons, q0, 2, 2):
        r = constrained_forward_dynamics(model, q, v, tau, cons)
        rg = constrained_forward_dynamics(model, q, v, tau, cons, dynamics="gauss")
        assert _rel(rg.qdd, r.qdd) < 1e-11
        from dqdyn.dynamics.gauss import gauss_model

        G = gauss_model(model, q, v)
        Q = tau - G.C @ v - G.g
        Mh = np.real(sla.sqrtm(G.M))
        D = r.A @ np.linalg.inv(Mh)
        Qc = Mh @ np.linalg.pinv(D) @ (r.b - r.A @ np.linalg.solve(G.M, Q))
        qdd = np.linalg.solve(G.M, Q + Qc)
        assert _rel(qdd, r.qdd) < 1e-10
        assert _rel(Qc, r.constraint_forces) < 1e-10


def test_batched_equals_per_state(mm):
    model, cons, q0 = mm
    S = list(_states(model, cons, q0, 5, 3))
    Q, V, T = (np.stack(x) for x in zip(*S))
    rb = constrained_forward_dynamics(model, Q, V, T, cons)
    assert rb.qdd.shape == (5, model.nv) and rb.multipliers.shape == (5, 1)
    for k in range(5):
        rk = constrained_forward_dynamics(model, Q[k], V[k], T[k], cons)
        assert np.abs(rb.qdd[k] - rk.qdd).max() < 1e-12 * (1 + np.abs(rk.qdd).max())


def _energy_drift(model, cons, q, v, dt, duration):
    res = simulate(model, q, v, None, duration, dt, cons, project=False, substeps=1,
                   monitor="off")  # (the fixed step whose order is measured)
    E = np.array([dqdyn.mechanical_energy(model, qq, vv) for qq, vv in zip(res.q, res.v)])
    verr = max(constraint_errors(model, qq, vv, cons)[1] for qq, vv in zip(res.q, res.v))
    return float(np.abs(E - E[0]).max()), res, verr


def test_zero_torque_simulation_conserves_energy_to_rk4_order(mm):
    """Constraint forces do no work: with τ = 0 the mechanical energy is conserved up to the
    integrator's error, which falls by ~2⁴ when dt halves (RK4; 2³ would be third order)."""
    model, cons, q0 = mm
    rng = np.random.default_rng(4)
    v = rng.normal(size=model.nv) * 0.5
    A = cons[0].A(model, q0)
    v = v - np.linalg.pinv(A) @ (A @ v)
    e1, r1, _ = _energy_drift(model, cons, q0, v, 0.005, 1.0)
    e2, r2, verr2 = _energy_drift(model, cons, q0, v, 0.0025, 1.0)
    E0 = dqdyn.mechanical_energy(model, q0, v)
    assert e2 < 1e-5 * abs(E0)
    ratio = e1 / e2
    assert 10.0 < ratio < 24.0, ratio
    # the nonholonomic constraint holds along the motion (to the integrator's error)
    assert verr2 < 1e-6
    # and the base really moves (not a trivial test)
    assert np.linalg.norm(r2.q[-1, :2] - q0[:2]) > 0.01


# ------------------------------------------------------------------------------------- TIAGo
@pytest.fixture(scope="module")
def tiago():
    rel, root = ROBOTS["tiago"]
    path = erd(rel)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = dqdyn.load_urdf(path, root_joint=root)
        pm = pin_from_urdf(path, root)
    q0 = np.zeros(m.nq)
    xl = dqdyn.frame_pose(m, q0, "wheel_left_link")
    xr = dqdyn.frame_pose(m, q0, "wheel_right_link")
    from dqdyn.algebra.rotations import translation_of

    pl, pr = translation_of(xl), translation_of(xr)
    radius, track = float(pl[2]), float(pl[1] - pr[1])
    # positive wheel rate drives the base forward iff the wheel axis is +y in the base frame
    Jw = dqdyn.twist_jacobian(m, q0, m.body_index("wheel_left_link"), frame="spatial")
    axis_y = Jw[1, m.v_slice("wheel_left_joint").start]
    con = DifferentialDriveConstraint(
        "root_joint", axle_offset=(0.5 * (pl[0] + pr[0]), 0.5 * (pl[1] + pr[1])),
        wheel_radius=radius, track_width=track, wheel_joints=("wheel_left_joint", "wheel_right_joint"),
        wheel_sign=float(np.sign(axis_y)))
    return m, pm, con, radius, track


def test_tiago_differential_drive_matches_pinocchio_kkt(tiago):
    m, pm, con, radius, track = tiago
    assert 0.05 < radius < 0.2 and 0.3 < track < 0.6
    rng = np.random.default_rng(5)
    for _ in range(2):
        q = dqdyn.random_configuration(m, seed=rng)
        v = rng.normal(size=m.nv)
        A = con.A(m, q)
        v = v - np.linalg.pinv(A) @ (A @ v)
        tau = rng.normal(size=m.nv)
        r = constrained_forward_dynamics(m, q, v, tau, [con])
        assert r.A.shape == (3, m.nv)
        assert np.abs(r.A @ r.qdd - r.b).max() < 1e-10
        qdd_pin, lam_pin = _pin_kkt(m, pm, q, v, tau, r.A, r.b)
        assert _rel(r.qdd, qdd_pin) < 1e-9
        assert _rel(r.multipliers, lam_pin) < 1e-9


def test_tiago_rolling_rows_are_kinematically_right(tiago):
    """Driving both wheels at the same rate ω moves the base forward at r ω with no slip; opposite
    rates turn it in place at 2 r ω / track."""
    m, pm, con, radius, track = tiago
    q = np.zeros(m.nq)
    il, ir = m.v_slice("wheel_left_joint").start, m.v_slice("wheel_right_joint").start
    for wl, wr, vx, wz in ((2.0, 2.0, 2.0 * radius, 0.0), (-1.0, 1.0, 0.0, 2.0 * radius / track)):
        v = np.zeros(m.nv)
        v[il], v[ir] = wl, wr
        v[0], v[2] = vx, wz  # φ = 0: world-frame (ẋ, ẏ, φ̇)
        v[1] = -con.axle_offset[0] * wz  # the axle point has no lateral velocity
        assert np.abs(con.velocity_error(m, q, v)).max() < 1e-12
        v[il] += 0.1  # a slipping wheel is flagged
        assert np.abs(con.velocity_error(m, q, v)).max() > 1e-3


def test_udwadia_kalaba_kernel_equals_kkt_on_random_systems():
    """The compiled fundamental-equation kernel vs numpy's KKT least squares, including
    rank-deficient A (duplicated and zero rows)."""
    rng = np.random.default_rng(6)
    for n, m in ((5, 2), (8, 4), (12, 1)):
        X = rng.normal(size=(n, n))
        M = X @ X.T + n * np.eye(n)
        A = rng.normal(size=(m, n))
        A = np.vstack([A, A[:1], np.zeros((1, n))])  # redundant rows
        b0 = rng.normal(size=m)
        b = np.r_[b0, b0[:1], 0.0]
        Q = rng.normal(size=n)
        qdd, Qc, lam = udwadia_kalaba(M, Q, A, b)
        ref, lam_ref, res = kkt_solve(M, Q, A, b)
        assert res < 1e-10
        assert np.abs(qdd - ref).max() < 1e-10 * (1 + np.abs(ref).max())
        assert np.abs(A @ qdd - b).max() < 1e-10
        assert np.abs(Qc - A.T @ lam).max() < 1e-10
        assert np.abs(lam - lam_ref).max() < 1e-8 * (1 + np.abs(lam_ref).max())  # both minimum-norm


def test_small_and_large_batches_agree_with_single_states_and_bad_constraints_are_named(mm):
    """A small batch of C-contiguous rows runs state by state in the call gate (the bits of the
    single calls); a large one runs the general batched path (the same numbers to round-off);
    every field has the batch's leading axis either way.  A list holding something that is not
    a constraint still gets the named error, not an AttributeError from the fast path."""
    model, cons, q0 = mm
    S = list(_states(model, cons, q0, 600, 7))
    Q, V, T = (np.ascontiguousarray(np.stack(x)) for x in zip(*S))
    small = constrained_forward_dynamics(model, Q[:4], V[:4], T[:4], cons)
    large = constrained_forward_dynamics(model, Q, V, T, cons)
    m = small.multipliers.shape[1]
    for r, n in ((small, 4), (large, 600)):
        assert r.qdd.shape == r.constraint_forces.shape == (n, model.nv)
        assert r.multipliers.shape == r.b.shape == (n, m) and r.A.shape == (n, m, model.nv)
    for k in range(4):
        rk = constrained_forward_dynamics(model, Q[k], V[k], T[k], cons)
        for a, b in zip(small, rk):
            assert np.array_equal(a[k], b)
        for a, b in zip(large, rk):
            assert np.abs(a[k] - b).max() <= 1e-11 * (1 + np.abs(b).max())
    with pytest.raises(dqdyn.errors.ModelError, match="Constraint"):
        constrained_forward_dynamics(model, q0, V[0], T[0], [cons[0], 3.0])
    with pytest.raises(dqdyn.errors.ModelError, match="Constraint"):
        constrained_forward_dynamics(model, q0, V[0], T[0], [3.0])
