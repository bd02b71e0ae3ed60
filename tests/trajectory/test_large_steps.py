"""Rotation steps up to 3.1 rad between knots, and every rotation format the curves accept.

`CayleySpline` (global) and `SE3Spline.interpolate` cut a long step into geodesic pieces;
oracles: scipy's `Slerp` through the same key rotations (equal at the knots, and the spline
stays near it between them), one-sided limits at the knots (C²), central finite differences,
and the same curve built from matrices, quaternions (either sign) and dual quaternions."""

import numpy as np
import pytest
from scipy.spatial.transform import Rotation as Rot
from scipy.spatial.transform import Slerp

from dqdyn import errors
from dqdyn.algebra.rotations import pose_from_matrix
from dqdyn.trajectory import CayleyCubic, CayleySpline, ScrewInterpolation, SE3Spline


def chains(n_chains, steps, seed, max_angle=3.1):
    """Key rotations: each chain ``steps`` random steps of angle U(0, max_angle), random axes."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n_chains):
        R = [Rot.random(random_state=rng)]
        for _ in range(steps):
            ax = rng.normal(size=3)
            R.append(R[-1] * Rot.from_rotvec(rng.uniform(0.0, max_angle) * ax / np.linalg.norm(ax)))
        out.append(Rot.concatenate(R))
    return out, rng


def angle_between(A, B):
    return np.linalg.norm((Rot.from_matrix(A).inv() * Rot.from_matrix(B)).as_rotvec(), axis=-1)


def test_cayley_spline_1000_random_steps_up_to_3_1_rad():
    keys, rng = chains(200, 5, seed=7)
    steps = 0
    for R in keys:
        t = np.cumsum(np.r_[0.0, rng.uniform(0.5, 2.0, 5)])
        sp = CayleySpline(t, R.as_matrix())
        steps += 5
        slerp = Slerp(t, R)
        assert np.abs(sp.rotation(t) - slerp(t).as_matrix()).max() < 1e-10
        dO, dw, dwd = sp.knot_jumps()
        assert dO < 1e-10 and dw < 1e-8 and dwd < 1e-6 * (1 + np.abs(sp.knot_omega).max())
        # between the knots no wild excursion away from the piecewise geodesic: less than the
        # longest of the segment's own step and its neighbours' (a C² curve overshoots a short
        # step between long ones; it stays within 0.65 of that here)
        tt = np.linspace(t[0], t[-1], 301)
        step = np.linalg.norm((R[:-1].inv() * R[1:]).as_rotvec(), axis=1)
        near = np.maximum(step, np.maximum(np.r_[step[1:], 0.0], np.r_[0.0, step[:-1]]))
        seg = np.clip(np.searchsorted(t, tt, side="right") - 1, 0, 4)
        dev = angle_between(sp.rotation(tt), slerp(tt).as_matrix())
        assert np.all(dev <= 0.8 * near[seg] + 1e-9)
        assert np.all(sp.segment_angles() < np.pi)
    assert steps == 1000


def test_cayley_spline_long_steps_are_smooth_between_knots():
    keys, rng = chains(5, 4, seed=11, max_angle=3.1)
    h = 1e-5
    for R in keys:
        t = np.arange(5.0)
        sp = CayleySpline(t, R.as_matrix(), omega0=[0.1, 0.0, -0.2])
        assert sp.times.size > t.size  # subdivided
        assert np.array_equal(sp.knot_times, t)
        tt = 0.5 * (sp.times[1:] + sp.times[:-1])
        Rd = (sp.rotation(tt + h) - sp.rotation(tt - h)) / (2 * h)
        W = np.swapaxes(sp.rotation(tt), -1, -2) @ Rd
        wb = np.stack([W[:, 2, 1], W[:, 0, 2], W[:, 1, 0]], -1)
        assert np.abs(wb - sp.omega(tt)).max() < 1e-6 * (1 + np.abs(wb).max())
        wd = (sp.omega(tt + h) - sp.omega(tt - h)) / (2 * h)
        assert np.abs(wd - sp.omega_dot(tt)).max() < 1e-5 * (1 + np.abs(wd).max())


def test_no_subdivision_below_max_step_and_2_6_rad_steps():
    keys, _ = chains(3, 4, seed=3, max_angle=0.9)
    for R in keys:
        sp = CayleySpline(np.arange(5.0), R.as_matrix())
        assert sp.times.size == 5
    # 2.6 rad steps: the ω̇-continuity Newton iteration did not converge on them unsubdivided
    R = Rot.from_rotvec([[0, 0, 0], [2.6, 0, 0], [2.6, 2.6, 0], [0, 2.6, 2.6]]).as_matrix()
    sp = CayleySpline(np.arange(4.0), R)
    assert np.abs(sp.rotation(np.arange(4.0)) - R).max() < 1e-10


def test_rotation_formats_give_the_same_curve():
    (R,), rng = chains(1, 4, seed=5)
    t = np.arange(5.0)
    M = R.as_matrix()
    q = R.as_quat(scalar_first=True)  # [w, x, y, z]
    signs = rng.choice([-1.0, 1.0], size=5)[:, None]
    X = pose_from_matrix(np.concatenate([np.concatenate([M, rng.normal(size=(5, 3, 1))], 2),
                                         np.tile([[[0, 0, 0, 1.0]]], (5, 1, 1))], 1))
    tt = np.linspace(0, 4, 41)
    ref = CayleySpline(t, M).rotation(tt)
    for other in (q, q * signs, X):
        assert np.abs(CayleySpline(t, other).rotation(tt) - ref).max() < 1e-9
    c = CayleyCubic(M[0], M[1], [0.1, 0, 0], [0, 0.2, 0])
    for a, b in ((q[0], -q[1]), (X[0], X[1])):
        assert np.abs(CayleyCubic(a, b, [0.1, 0, 0], [0, 0.2, 0]).rotation(tt / 4) -
                      c.rotation(tt / 4)).max() < 1e-12
    with pytest.raises(errors.NotUnitError, match=r"rotations\[2\]"):
        CayleySpline(t, np.concatenate([q[:2], 1.1 * q[2:3], q[3:]]))
    with pytest.raises(errors.ShapeError, match="unit quaternions"):
        CayleySpline(t, np.zeros((5, 5)))
    with pytest.raises(errors.DqdynError, match="max_step"):
        CayleySpline(t, M, max_step=4.0)


def _poses(R, rng):
    T = np.zeros((len(R), 4, 4))
    T[:, :3, :3] = R.as_matrix()
    T[:, :3, 3] = rng.normal(scale=0.3, size=(len(R), 3))
    T[:, 3, 3] = 1.0
    return T


def test_se3_spline_interpolate_1000_random_steps_up_to_3_1_rad():
    keys, rng = chains(250, 4, seed=13)
    steps = 0
    for R in keys:
        T = _poses(R, rng)
        t = 0.7 * np.arange(5)
        sp = SE3Spline.interpolate(t, T)
        steps += 4
        assert np.array_equal(sp.knot_times, t)
        assert np.abs(sp.matrix(t) - T).max() < 1e-10
        assert np.abs(sp.matrix(t)[:, :3, :3] - Slerp(t, R)(t).as_matrix()).max() < 1e-10
        assert max(sp.knot_jumps()) < 1e-7
    assert steps == 1000


def test_se3_spline_long_steps_smooth_and_formats():
    (R,), rng = chains(1, 3, seed=17, max_angle=3.0)
    T = _poses(R, rng)
    t = np.arange(4.0)
    sp = SE3Spline.interpolate(t, T)
    X = pose_from_matrix(T)
    sq = SE3Spline.interpolate(t, X * np.where(rng.random(4) < 0.5, -1.0, 1.0)[:, None])
    tt = np.linspace(0, 3, 31)
    assert np.abs(sp.matrix(tt) - sq.matrix(tt)).max() < 1e-9
    h = 1e-5
    tm = 0.5 * (sp.times[1:] + sp.times[:-1])
    xd = (sp.pose(tm + h) - sp.pose(tm - h)) / (2 * h)
    from dqdyn.algebra import dualquat as dq

    xb = 2 * dq.mul(dq.conj(sp.pose(tm)), xd)[:, [1, 2, 3, 5, 6, 7]]
    assert np.abs(xb - sp.twist(tm)).max() < 1e-6 * (1 + np.abs(xb).max())
    half = np.eye(4)
    half[:3, :3] = Rot.from_rotvec([np.pi, 0, 0]).as_matrix()
    with pytest.raises(errors.SingularError, match=r"poses\[0\] and poses\[1\]"):
        SE3Spline.interpolate([0, 1, 2], np.stack([np.eye(4), half, half]))
    a = ScrewInterpolation(T[0], T[1])
    b = ScrewInterpolation(X[0], X[1])
    assert np.abs(a.pose(tt / 3) - b.pose(tt / 3)).max() < 1e-12
    bad = T.copy()
    bad[1, 3, 0] = 1.0
    with pytest.raises(errors.ShapeError, match="last row"):
        SE3Spline.interpolate(t, bad)
