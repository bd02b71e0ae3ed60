"""SE(3) curves and joint-space profiles (dqdyn.trajectory.se3 / .joint).

Oracles: central finite differences of the sampled poses, scipy's Slerp (rotation part of ScLERP),
scipy.linalg.expm/logm of 4×4 twists (the screw path), the limits themselves, and a closed-loop
simulation with dqdyn's ComputedTorque."""

import numpy as np
import pytest
from scipy.linalg import expm, logm
from scipy.spatial.transform import Rotation as Rot
from scipy.spatial.transform import Slerp

from dqdyn import errors
from dqdyn.algebra import dualquat as dq
from dqdyn.algebra.rotations import matrix_from_pose, pose_from_rt
from dqdyn.trajectory import ScrewInterpolation, SE3Spline, ctraj, jtraj, mstraj, quintic, trapezoidal, via_points


def poses(n, scale=0.5, seed=0):
    r = np.random.default_rng(seed)
    q = Rot.from_rotvec(np.cumsum(r.normal(size=(n, 3)) * scale, 0)).as_quat(scalar_first=True)
    return pose_from_rt(q, np.cumsum(r.normal(size=(n, 3)), 0))


def fd_twists(curve, t, h=1e-5):
    x = curve.pose(t)
    xd = (curve.pose(t + h) - curve.pose(t - h)) / (2 * h)
    xb = 2 * dq.mul(dq.conj(x), xd)[:, [1, 2, 3, 5, 6, 7]]
    xs = 2 * dq.mul(xd, dq.conj(x))[:, [1, 2, 3, 5, 6, 7]]
    assert np.abs(xb - curve.twist(t, "body")).max() < 1e-7
    assert np.abs(xs - curve.twist(t, "spatial")).max() < 1e-7
    for fr in ("body", "spatial"):
        d = (curve.twist(t + h, fr) - curve.twist(t - h, fr)) / (2 * h)
        assert np.abs(d - curve.twist_dot(t, fr)).max() < 1e-6


def same_pose(a, b):
    s = np.sign(np.sum(a * b, -1))[..., None]
    return np.abs(a * s - b).max()


@pytest.mark.parametrize("scaling", ["linear", "quintic", "trapezoidal"])
def test_sclerp_endpoints_fd_and_oracles(scaling):
    x0, x1 = poses(2, 1.0, seed=1)
    c = ScrewInterpolation(x0, x1, 0.5, 2.5, scaling=scaling)
    assert same_pose(c.pose(0.5), x0) < 1e-12 and same_pose(c.pose(2.5), x1) < 1e-12
    fd_twists(c, np.array([0.6, 0.9, 1.3, 1.77, 2.4]))
    # oracle 1: the screw path is T0 expm(s logm(T0⁻¹ T1)) (scipy)
    T0, T1 = matrix_from_pose(x0), matrix_from_pose(x1)
    L = np.real(logm(np.linalg.solve(T0, T1)))
    tt = np.linspace(0.5, 2.5, 9)
    from dqdyn.trajectory import time_scaling
    s = time_scaling(scaling, (tt - 0.5) / 2.0)[0]
    Tref = np.stack([T0 @ expm(si * L) for si in s])
    assert np.abs(c.matrix(tt) - Tref).max() < 1e-10
    # oracle 2: the rotation part is scipy's Slerp at s
    R = Slerp([0, 1], Rot.from_matrix(np.stack([T0[:3, :3], T1[:3, :3]])))(s).as_matrix()
    assert np.abs(c.matrix(tt)[:, :3, :3] - R).max() < 1e-10


def test_se3_spline_interpolates_c2_fd():
    X = poses(11, 0.5, seed=3)
    t = np.linspace(0.0, 5.0, 11)
    sp = SE3Spline.interpolate(t, X)
    assert same_pose(sp.pose(t), X) < 1e-12
    dx, dv, dvd = sp.knot_jumps()
    assert dx < 1e-12 and dv < 1e-9 and dvd < 1e-9
    fd_twists(sp, np.linspace(0.07, 4.93, 17) + 0.013)


def test_se3_spline_bad_input():
    X = poses(4)
    with pytest.raises(errors.ShapeError, match="uniformly"):
        SE3Spline.interpolate([0, 1, 3, 4], X)
    with pytest.raises(errors.ShapeError, match="strictly increasing"):
        SE3Spline.interpolate([0, 1, 1, 2], X)
    bad = X.copy()
    bad[2, 0] += 0.1
    with pytest.raises(errors.NotUnitError, match="poses"):
        SE3Spline.interpolate([0, 1, 2, 3], bad)
    with pytest.raises(errors.NotUnitError, match="x1"):
        ScrewInterpolation(X[0], bad[2])
    with pytest.raises(errors.DqdynError, match="time scaling"):
        ScrewInterpolation(X[0], X[1], scaling="cubic")


def test_quintic_boundary_and_fd():
    tr = quintic([0.0, 1.0], [1.0, -2.0], 2.0, v0=[0.1, 0.2], v1=[0.0, -0.3], a0=[0.5, 0], a1=[0, 1.0], t0=1.0)
    q, v, a = tr(np.array([1.0, 3.0]))
    np.testing.assert_allclose(q, [[0, 1], [1, -2]], atol=1e-13)
    np.testing.assert_allclose(v, [[0.1, 0.2], [0, -0.3]], atol=1e-13)
    np.testing.assert_allclose(a, [[0.5, 0], [0, 1.0]], atol=1e-12)
    t = np.linspace(1.1, 2.9, 7)
    h = 1e-6
    np.testing.assert_allclose((tr.position(t + h) - tr.position(t - h)) / (2 * h), tr.velocity(t), atol=1e-8)
    np.testing.assert_allclose((tr.velocity(t + h) - tr.velocity(t - h)) / (2 * h), tr.acceleration(t), atol=1e-7)
    qj, _, _ = jtraj([0.0, 1.0], [1.0, -2.0], np.linspace(0, 1, 5))
    assert qj.shape == (5, 2)


def test_trapezoidal_limits_and_minimum_time():
    q0, q1 = np.array([0.0, 1.0, -1.0]), np.array([2.0, 0.5, 0.0])
    vmax, amax = np.array([1.0, 1.0, 0.5]), np.array([2.0, 1.0, 1.0])
    tr = trapezoidal(q0, q1, vmax=vmax, amax=amax)
    t = np.linspace(tr.t0, tr.t1, 2001)
    q, v, a = tr(t)
    assert np.all(np.abs(v) <= vmax * (1 + 1e-12)) and np.all(np.abs(a) <= amax * (1 + 1e-12))
    np.testing.assert_allclose(q[[0, -1]], [q0, q1], atol=1e-13)
    np.testing.assert_allclose(v[[0, -1]], 0, atol=1e-13)
    # minimum time of the slowest joint (joint 0: D = 2, vmax 1, amax 2 → 2/1 + 1/2 = 2.5 s)
    assert abs(tr.duration - 2.5) < 1e-12
    np.testing.assert_allclose(np.diff(q, axis=0) / np.diff(t)[:, None], 0.5 * (v[1:] + v[:-1]), atol=2e-3)
    with pytest.raises(errors.InfeasibleError, match="vmax"):
        trapezoidal(q0, q1, duration=1.0, vmax=vmax)
    tr3 = trapezoidal(q0, q1, duration=3.0)
    assert abs(np.max(np.abs(tr3.velocity(1.5)) - 1.5 * np.abs(q1 - q0) / 3.0)) < 1e-12


def test_via_points_limits_and_ends():
    vias = np.array([[0, 0], [1.0, 0.5], [1.5, -0.5], [0.0, 0.0]])
    vmax, amax = np.array([1.0, 0.8]), np.array([2.0, 1.5])
    tr = via_points(vias, vmax=vmax, amax=amax)
    t = np.linspace(tr.t0, tr.t1, 4001)
    q, v, a = tr(t)
    np.testing.assert_allclose(q[0], vias[0], atol=1e-12)
    np.testing.assert_allclose(q[-1], vias[-1], atol=1e-12)
    assert np.all(np.abs(v) <= vmax * (1 + 1e-9)) and np.all(np.abs(a) <= amax * (1 + 1e-9))
    # continuity of q and q̇ at the breaks (C¹ like every LSPB)
    b = tr.breaks[1:-1]
    e = 1e-9
    assert np.abs(tr.position(b - e) - tr.position(b + e)).max() < 1e-8
    assert np.abs(tr.velocity(b - e) - tr.velocity(b + e)).max() < 1e-8
    ts, qs = mstraj(vias[1:], 0.01, vmax=vmax, amax=amax, q0=vias[0])
    assert qs.shape == (ts.size, 2)


def test_ctraj_endpoints():
    x0, x1 = poses(2, 0.8, seed=6)
    X = ctraj(x0, x1, 11)
    assert X.shape == (11, 8) and same_pose(X[0], x0) < 1e-12 and same_pose(X[-1], x1) < 1e-12


def test_profile_as_computed_torque_reference():
    """A quintic drives dqdyn's ComputedTorque on the two-link arm: the tracking error stays tiny."""
    import dqdyn
    from dqdyn.simulation import ComputedTorque, simulate

    m = dqdyn.load_bundled("two_link_arm")
    tr = quintic([0.0, 0.0], [0.8, -0.5], 0.5)
    traj = simulate(m, np.zeros(2), np.zeros(2), ComputedTorque(m, tr), duration=0.5, dt=1e-3)
    err = np.abs(traj.q - tr.position(traj.t)).max()
    assert err < 1e-4
