"""Tests of dqdyn.algebra.inertia: quaternionic inertia, L3 ([Silva2022, eqs. (11)–(14)]), spatial inertia."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dqdyn import errors
from dqdyn.algebra import dualquat as dq
from dqdyn.algebra import inertia as In
from dqdyn.algebra.rotations import matrix_from_quat, quat_multiply

from algebra_asserts import close

PROP = settings(max_examples=50, deadline=None)


def pure(v):
    return np.concatenate([np.zeros(np.shape(v)[:-1] + (1,)), v], axis=-1)


def q_inner(a, b):
    """⟨a, b⟩ = −(ab + ba)/2 for pure quaternions ([Silva2022, §2, footnote 4]), by quaternion products."""
    s = -(quat_multiply(a, b) + quat_multiply(b, a)) / 2
    assert np.allclose(s[..., 1:], 0.0, atol=1e-12)
    return s[..., 0]


@st.composite
def point_cloud(draw):
    """A rigid body made of point masses: an independent oracle for inertia formulas."""
    n = draw(st.integers(1, 5))
    m = np.array(draw(st.lists(st.floats(0.1, 3.0), min_size=n, max_size=n)))
    r = np.array(draw(st.lists(st.lists(st.floats(-2, 2), min_size=3, max_size=3), min_size=n, max_size=n)))
    return m, r


def cloud_params(m, r):
    M = m.sum()
    c = (m[:, None] * r).sum(0) / M
    d = r - c
    Ic = sum(mi * (di @ di * np.eye(3) - np.outer(di, di)) for mi, di in zip(m, d))
    return M, c, Ic


@PROP
@given(data=st.data())
def test_L3_is_matrix_product_and_uses_quaternion_inner(S, data):
    A = data.draw(S.vec(9)).reshape(3, 3)  # not necessarily symmetric: rows are (i_x, i_y, i_z)
    w = data.draw(S.vec(3))
    Iq = In.quaternionic_inertia(A)
    close(In.L3(Iq, w), A @ w, 1e-12)
    # the definition (eq. 12) with the quaternion inner product
    rows = In.inertia_quaternions(Iq)
    expect = np.array([q_inner(rows[k], pure(w)) for k in range(3)])
    close(In.L3(Iq, w), expect, 1e-12)
    # pure-quaternion form in, pure-quaternion form out
    close(In.L3(Iq, pure(w)), pure(A @ w), 1e-12)
    close(In.angular_momentum(Iq, w), A @ w, 1e-12)


@PROP
@given(data=st.data())
def test_frame_change_eq14(S, data):
    A = data.draw(S.vec(9)).reshape(3, 3)
    I = A + A.T
    r = data.draw(S.unit_quat)
    w1 = data.draw(S.vec(3))
    R = matrix_from_quat(r)
    # ℓ' = Ad(r) L3(𝕀) Ad(r*) ω'  ≙  R Ī Rᵀ ω'
    close(In.angular_momentum_frame_change(I, r, w1), R @ I @ R.T @ w1, 1e-9)
    close(In.angular_momentum_frame_change(I, r, pure(w1)), pure(R @ I @ R.T @ w1), 1e-9)
    # the second case of (14): ℓ = Ad(r*) L3(𝕀') Ad(r) ω  ≙  Rᵀ Ī' R ω
    rc = r * np.array([1, -1, -1, -1.0])
    close(In.angular_momentum_frame_change(I, rc, w1), R.T @ I @ R @ w1, 1e-9)
    close(In.L3(In.rotate_inertia(I, r), w1), In.angular_momentum_frame_change(I, r, w1), 1e-9)


@PROP
@given(data=st.data(), cloud=point_cloud())
def test_parallel_axis_and_spatial_inertia_vs_point_masses(S, data, cloud):
    m, r = cloud
    M, c, Ic = cloud_params(m, r)
    IO = sum(mi * (ri @ ri * np.eye(3) - np.outer(ri, ri)) for mi, ri in zip(m, r))
    close(In.parallel_axis(M, c, Ic), IO, 1e-9)
    xi = data.draw(S.pure6)
    w, v = xi[:3], xi[3:]
    vel = v + np.cross(w, r)  # velocity of each point
    h = (m[:, None] * vel).sum(0)
    lO = (m[:, None] * np.cross(r, vel)).sum(0)
    Msp = In.spatial_inertia_matrix(M, c, Ic)
    close(Msp @ xi, np.concatenate([h, lO]), 1e-9)
    close(In.momentum(M, c, Ic, xi), np.concatenate([h, lO]), 1e-9)
    T = 0.5 * (m * (vel * vel).sum(1)).sum()
    assert In.kinetic_energy(M, c, Ic, xi) == pytest.approx(T, rel=1e-9, abs=1e-12)
    assert 0.5 * dq.power(xi, Msp @ xi) == pytest.approx(T, rel=1e-9, abs=1e-12)
    Pi = np.block([[np.zeros((3, 3)), np.eye(3)], [np.eye(3), np.zeros((3, 3))]])
    close(Pi @ Msp, (Pi @ Msp).T, 1e-12)
    assert np.linalg.eigvalsh(Pi @ Msp).min() > -1e-9


@PROP
@given(data=st.data())
def test_spatial_inertia_transforms_with_Ad(S, data):
    """M_O = Ad(x) M_C Ad(x*) with x the CoM frame's pose in the body frame (any orientation)."""
    A = data.draw(S.vec(9)).reshape(3, 3)
    Ic = A @ A.T + 0.1 * np.eye(3)
    m = data.draw(st.floats(0.1, 5))
    c = data.draw(S.vec(3))
    r = data.draw(S.unit_quat)
    R = matrix_from_quat(r)
    x = dq.pose(r, c)  # CoM frame with axes rotated by R
    IcC = R.T @ Ic @ R  # the same inertia expressed in the CoM frame's axes
    MC = In.spatial_inertia_matrix(m, np.zeros(3), IcC)
    xi = data.draw(S.pure6)
    lhs = In.spatial_inertia_matrix(m, c, Ic) @ xi
    rhs = dq.Ad6(x, MC @ dq.Ad6_inv(x, xi))
    close(lhs, rhs, 1e-9)


def test_batched_shapes():
    rng = np.random.default_rng(0)
    m = rng.uniform(1, 2, size=(4,))
    c = rng.normal(size=(4, 3))
    I = np.broadcast_to(np.eye(3), (4, 3, 3))
    assert In.spatial_inertia_matrix(m, c, I).shape == (4, 6, 6)
    assert In.parallel_axis(m, c, I).shape == (4, 3, 3)
    assert In.L3(I, rng.normal(size=(2, 4, 3))).shape == (2, 4, 3)
    assert In.momentum(m, c, I, rng.normal(size=(4, 6))).shape == (4, 6)
    Msp = In.spatial_inertia_matrix(m, c, I)
    for k in range(4):
        close(Msp[k], In.spatial_inertia_matrix(m[k], c[k], I[k]), 0)


def test_skew():
    a, b = np.array([1.0, -2, 3]), np.array([0.5, 4, -1])
    close(In.skew(a) @ b, np.cross(a, b), 0)
    close(In.skew(a), [[0, -3, -2], [3, 0, -1], [2, 1, 0]], 0)


def test_bad_inputs():
    with pytest.raises(errors.ShapeError, match="A"):
        In.L3(np.eye(4), np.zeros(3))
    with pytest.raises(errors.ShapeError, match="b"):
        In.L3(np.eye(3), np.zeros(5))
    with pytest.raises(errors.NonFiniteError):
        In.quaternionic_inertia(np.full((3, 3), np.nan))
    with pytest.raises(errors.ModelError):
        In.spatial_inertia_matrix(-1.0, np.zeros(3), np.eye(3))
    with pytest.raises(errors.ShapeError, match="com"):
        In.parallel_axis(1.0, np.zeros(2), np.eye(3))
    with pytest.raises(errors.ShapeError, match="r"):
        In.angular_momentum_frame_change(np.eye(3), np.zeros(3), np.zeros(3))
