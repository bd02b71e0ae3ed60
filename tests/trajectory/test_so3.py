"""Cayley cubics on SO(3) (dqdyn.trajectory.so3; [Mladenova, §9], with the corrected forms of
eq. (389) and of the multi-point recursion of §9.2.3).

Oracles: the boundary conditions themselves, central finite differences of the sampled curve,
scipy's Rotation (angles, composition) and one-sided limits at the knots."""

import numpy as np
import pytest
from scipy.spatial.transform import Rotation as Rot

from dqdyn import errors
from dqdyn.trajectory import CayleyCubic, CayleySpline

RNG = np.random.default_rng(19)


def vee(W):
    return np.stack([W[..., 2, 1], W[..., 0, 2], W[..., 1, 0]], -1)


def fd_check(curve, t, h=1e-5):
    """Body/spatial ω and ω̇ against central differences of O(t) and ω(t)."""
    R = curve.rotation(t)
    Rd = (curve.rotation(t + h) - curve.rotation(t - h)) / (2 * h)
    wb = vee(np.swapaxes(R, -1, -2) @ Rd)
    ws = vee(Rd @ np.swapaxes(R, -1, -2))
    assert np.abs(wb - curve.omega(t, "body")).max() < 1e-7
    assert np.abs(ws - curve.omega(t, "spatial")).max() < 1e-7
    for fr in ("body", "spatial"):
        wd = (curve.omega(t + h, fr) - curve.omega(t - h, fr)) / (2 * h)
        assert np.abs(wd - curve.omega_dot(t, fr)).max() < 1e-6


def smooth_rotations(n, scale=0.6, seed=0):
    rng = np.random.default_rng(seed)
    return Rot.from_rotvec(np.cumsum(rng.normal(size=(n, 3)) * scale, 0)).as_matrix()


def test_two_point_boundary_conditions_and_fd():
    O0, O1 = Rot.random(2, random_state=5).as_matrix()
    w0, w1 = RNG.normal(size=(2, 3))
    c = CayleyCubic(O0, O1, w0, w1, t0=0.3, t1=1.7)
    s = c.sample([0.3, 1.7])
    assert np.abs(s.R[0] - O0).max() < 1e-12
    assert np.abs(s.R[1] - O1).max() < 1e-12
    assert np.abs(s.omega_body[0] - w0).max() < 1e-12
    assert np.abs(s.omega_body[1] - w1).max() < 1e-12
    fd_check(c, np.linspace(0.35, 1.65, 9))
    # O(t) stays orthogonal; the relative angle stays below π
    R = c.rotation(np.linspace(0.3, 1.7, 50))
    assert np.abs(np.swapaxes(R, -1, -2) @ R - np.eye(3)).max() < 1e-12
    assert np.all(Rot.from_matrix(O0.T @ R).magnitude() < np.pi)


def test_two_point_printed_389_is_wrong():
    """Erratum (389): O₀ O(−c(t)) misses O₁ — the corrected O₀ O(c(t)) hits it."""
    from dqdyn.algebra.vector_parameter import matrix_from_vp

    O0, O1 = Rot.random(2, random_state=7).as_matrix()
    c = CayleyCubic(O0, O1)
    assert np.abs(O0 @ matrix_from_vp(-c.vp(1.0)) - O1).max() > 1e-2
    assert np.abs(O0 @ matrix_from_vp(c.vp(1.0)) - O1).max() < 1e-12


def test_slerp_oracle_zero_velocity_cubic_is_on_the_geodesic():
    """With ω₀ = ω₁ = 0 the cubic c(τ) = c₁ (3τ² − 2τ³) stays on the geodesic: its rotation equals
    scipy's Slerp at the matching fraction of the angle."""
    from scipy.spatial.transform import Slerp

    O0, O1 = Rot.random(2, random_state=11).as_matrix()
    c = CayleyCubic(O0, O1)
    tau = np.linspace(0, 1, 21)
    R = c.rotation(tau)
    rel = Rot.from_matrix(O0.T @ O1)
    ang = 2 * np.arctan(np.linalg.norm(c.vp(tau), axis=-1))
    frac = ang / rel.magnitude()
    sl = Slerp([0, 1], Rot.from_matrix(np.stack([O0, O1])))(frac).as_matrix()
    assert np.abs(R - sl).max() < 1e-12


@pytest.mark.parametrize("method", ["park_kang", "global"])
@pytest.mark.parametrize("uniform", [True, False])
def test_spline_c2_interpolates_and_fd(method, uniform):
    n = 8
    times = np.arange(n + 1.0) if uniform else np.cumsum(RNG.uniform(0.4, 1.6, n + 1))
    Rs = smooth_rotations(n + 1, 0.5, seed=3)
    kw = dict(omega0=[0.2, -0.1, 0.3])
    if method == "park_kang":
        kw["omega_dot0"] = [0.1, 0.0, -0.2]
    sp = CayleySpline(times, Rs, method=method, **kw)
    assert np.abs(sp.rotation(times) - Rs).max() < 1e-12
    dO, dw, dwd = sp.knot_jumps()
    assert dO < 1e-12 and dw < 1e-9 and dwd < 1e-9
    s0 = sp.sample(times[0])
    assert np.abs(s0.omega_body - kw["omega0"]).max() < 1e-12
    if method == "park_kang":  # y₁ = ω̇₀/4 (erratum: the printed ω̇₀/2 doubles it)
        assert np.abs(s0.omega_dot_body - kw["omega_dot0"]).max() < 1e-12
    assert np.all(sp.segment_angles() < np.pi)
    mid = 0.5 * (sp.times[1:] + sp.times[:-1])  # every knot, with those a long step inserted
    fd_check(sp, mid)


def test_park_kang_printed_indices_are_not_c2():
    """The printed recursion (w = f_i) leaves large ω jumps; the fix (w = f_{i−1}) removes them."""
    from dqdyn.trajectory.so3 import _sample

    n = 5
    times = np.arange(n + 1.0)
    Rs = smooth_rotations(n + 1, 0.5, seed=4)
    sp = CayleySpline(times, Rs, method="park_kang")
    f = sp.f
    x, y, z = sp.x.copy(), sp.y.copy(), sp.z.copy()
    for i in range(1, n):  # printed: w = f_i
        w = f[i]
        v = 3 * x[i - 1] + 2 * y[i - 1] + z[i - 1]
        u = 6 * x[i - 1] + 2 * y[i - 1]
        z[i] = (v - np.cross(w, v)) / (1 + w @ w)
        y[i] = (u - np.cross(w, u) - 2 * (w @ v) * z[i]) / (2 * (1 + w @ w))
        x[i] = f[i] - z[i] - y[i]
    k = np.arange(n - 1)
    one = np.ones(n - 1)
    L = _sample(Rs[k], f[k], y[k], z[k], one, one)
    R = _sample(Rs[k + 1], f[k + 1], y[k + 1], z[k + 1], 0 * one, one)
    assert np.abs(L.omega_body - R.omega_body).max() > 1e-3
    assert sp.knot_jumps()[1] < 1e-12


def test_global_spline_100_knots_stable():
    n = 100
    sp = CayleySpline(np.linspace(0, 10, n + 1), smooth_rotations(n + 1, 0.4, seed=8))
    assert sp.knot_jumps()[2] < 1e-9
    assert np.all(np.isfinite(sp.sample(np.linspace(0, 10, 1000)).omega_dot_body))


def test_bad_input():
    I = np.eye(3)
    half = Rot.from_rotvec([0, 0, np.pi]).as_matrix()
    with pytest.raises(errors.SingularError, match="half a turn"):
        CayleyCubic(I, half)
    with pytest.raises(errors.SingularError, match=r"rotations\[1\] and rotations\[2\]"):
        CayleySpline([0, 1, 2], np.stack([I, I, half]))
    with pytest.raises(errors.ShapeError, match="times must be strictly increasing"):
        CayleySpline([0, 1, 1], np.stack([I, I, I]))
    bad = I.copy()
    bad[0, 1] = 0.1
    with pytest.raises(errors.NotUnitError, match=r"rotations\[1\]"):
        CayleySpline([0, 1, 2], np.stack([I, bad, I]))
    with pytest.raises(errors.NotUnitError, match="O1"):
        CayleyCubic(I, np.diag([1.0, 1.0, -1.0]))
    with pytest.raises(errors.ShapeError, match="rotations must have 3 entries"):
        CayleySpline([0, 1, 2], np.stack([I, I]))
    with pytest.raises(errors.NonFiniteError, match="t contains"):
        CayleyCubic(I, I).rotation(np.nan)
    with pytest.raises(errors.DqdynError, match="frame"):
        CayleyCubic(I, I).omega(0.5, "world")
