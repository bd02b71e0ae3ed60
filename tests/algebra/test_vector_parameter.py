"""Tests of dqdyn.algebra.vector_parameter ([Mladenova, §2.4–2.6, §4.2], with the corrected
forms of its misprinted equations)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dqdyn import errors
from dqdyn.algebra import dualquat as dq
from dqdyn.algebra import vector_parameter as vp
from dqdyn.algebra.inertia import skew
from dqdyn.algebra.rotations import matrix_from_quat, quat_from_axis_angle, quat_multiply

from algebra_asserts import close

PROP = settings(max_examples=50, deadline=None)


def c_strategy(S):
    return S.vec(3, -4.0, 4.0)


@st.composite
def non_half_turn_quat(draw, S):
    q = draw(S.unit_quat)
    return q if abs(q[0]) > 0.05 else np.array([1.0, 0.0, 0.0, 0.0])


# --------------------------------------------------------------------------- conversions


@PROP
@given(data=st.data())
def test_vp_quat_matrix_roundtrips(S, data):
    c = data.draw(c_strategy(S))
    q = vp.quat_from_vp(c)
    assert np.linalg.norm(q) == pytest.approx(1.0) and q[0] > 0
    close(vp.vp_from_quat(q), c, 1e-12)
    close(vp.vp_from_quat(-2.5 * q), c, 1e-12)  # sign- and scale-invariant
    O = vp.matrix_from_vp(c)
    close(O, matrix_from_quat(q), 1e-12)  # (65) = rotation matrix of q
    close(O @ O.T, np.eye(3), 1e-12)
    assert np.linalg.det(O) == pytest.approx(1.0)
    close(vp.vp_from_matrix(O), c, 1e-9)  # (66)
    # Cayley form (I + c^×)(I − c^×)⁻¹
    close(O, (np.eye(3) + skew(c)) @ np.linalg.inv(np.eye(3) - skew(c)), 1e-9)


@PROP
@given(data=st.data())
def test_vp_is_tan_half_angle_axis(S, data):
    e = data.draw(S.unit3)
    a = data.draw(st.floats(-3.0, 3.0))
    c = np.tan(a / 2) * e
    close(vp.vp_from_quat(quat_from_axis_angle(e, a)), c, 1e-12)
    close(vp.matrix_from_vp(c), matrix_from_quat(quat_from_axis_angle(e, a)), 1e-12)


@PROP
@given(data=st.data())
def test_composition_is_matrix_product(S, data):
    c1, c2 = data.draw(c_strategy(S)), data.draw(c_strategy(S))
    if abs(1 - c1 @ c2) < 1e-3:
        return
    c = vp.vp_compose(c1, c2)  # (67)
    close(vp.matrix_from_vp(c), vp.matrix_from_vp(c1) @ vp.matrix_from_vp(c2), 1e-9)
    # quaternion-equivalent form
    close(c, vp.vp_from_quat(quat_multiply(vp.quat_from_vp(c1), vp.quat_from_vp(c2))), 1e-9)
    close(vp.vp_compose(c1, vp.vp_inverse(c1)), np.zeros(3), 1e-9)
    close(vp.vp_compose(np.zeros(3), c2), c2, 0)


def test_erratum_72_printed_quaternion_link_is_wrong():
    q = quat_from_axis_angle([0.3, -0.5, 0.8], 1.1)
    q0, q1, q2, q3 = q
    printed = np.array([-q3, -q2, q1]) / q0
    correct = np.array([q1, q2, q3]) / q0
    O = matrix_from_quat(q)
    close(vp.matrix_from_vp(correct), O, 1e-12)
    assert np.abs(vp.matrix_from_vp(printed) - O).max() > 1e-2
    close(vp.vp_from_quat(q), correct, 1e-15)


def test_singularities():
    half = matrix_from_quat(quat_from_axis_angle([0, 1, 0], np.pi))
    with pytest.raises(errors.SingularError):
        vp.vp_from_matrix(half)
    with pytest.raises(errors.SingularError):
        vp.vp_from_quat([0.0, 0.0, 1.0, 0.0])
    c1 = np.array([1.0, 0.0, 0.0])
    with pytest.raises(errors.SingularError):
        vp.vp_compose(c1, c1)  # c1·c2 = 1: two quarter-turns make a half-turn
    with pytest.raises(errors.SingularError):
        vp.dual_vp_compose(c1, np.zeros(3), c1, np.ones(3))
    with pytest.raises(errors.SingularError):
        vp.vp_from_second_chart([1.0, 0, 0])


# --------------------------------------------------------------------------- kinematics


def _c_of_t(c0, c1, c2, t):
    return c0 + t * c1 + t * t * c2


@PROP
@given(data=st.data())
def test_angular_velocity_kde_acceleration_vs_finite_differences(S, data):
    c0 = data.draw(S.vec(3, -2, 2))
    c1 = data.draw(S.vec(3, -1, 1))
    c2 = data.draw(S.vec(3, -1, 1))
    h = 1e-5
    O = vp.matrix_from_vp(c0)
    Od = (vp.matrix_from_vp(_c_of_t(c0, c1, c2, h)) - vp.matrix_from_vp(_c_of_t(c0, c1, c2, -h))) / (2 * h)
    W = Od @ O.T  # spatial Ω
    Wb = O.T @ Od  # body Ω_b
    w = np.array([W[2, 1], W[0, 2], W[1, 0]])
    wb = np.array([Wb[2, 1], Wb[0, 2], Wb[1, 0]])
    close(vp.vp_angular_velocity(c0, c1), w, 1e-7)  # (79)
    close(vp.vp_angular_velocity(c0, c1, frame="body"), wb, 1e-7)
    close(wb, O.T @ w, 1e-7)
    close(vp.vp_kde(c0, w), c1, 1e-6)  # (81)
    close(vp.vp_kde(c0, wb, frame="body"), c1, 1e-6)
    # (81) alternative form [O(−c) + I] ω / (1 + tr O)
    close(vp.vp_kde(c0, w), (vp.matrix_from_vp(-c0) + np.eye(3)) @ w / (1 + np.trace(O)), 1e-12)
    # (80): ω̇ from finite differences of ω(t)  (ċ(t) = c1 + 2 t c2, c̈ = 2 c2)
    for frame in ("spatial", "body"):
        wp = vp.vp_angular_velocity(_c_of_t(c0, c1, c2, h), c1 + 2 * h * c2, frame=frame)
        wm = vp.vp_angular_velocity(_c_of_t(c0, c1, c2, -h), c1 - 2 * h * c2, frame=frame)
        close(vp.vp_angular_acceleration(c0, c1, 2 * c2, frame=frame), (wp - wm) / (2 * h), 1e-6)
    with pytest.raises(ValueError):
        vp.vp_kde(c0, w, frame="world")


# --------------------------------------------------------------------------- second chart


@PROP
@given(data=st.data())
def test_second_chart(S, data):
    e = data.draw(S.unit3)
    a = data.draw(st.floats(0.01, 3.0))
    c = np.tan(a / 2) * e
    d = vp.vp_second_chart(c)
    assert np.linalg.norm(d) == pytest.approx(np.sin(a / 2))
    close(d, quat_from_axis_angle(e, a)[1:], 1e-12)  # the quaternion's vector part
    close(vp.matrix_from_second_chart(d), vp.matrix_from_vp(c), 1e-9)  # (69)
    close(vp.vp_from_second_chart(d), c, 1e-9)


def test_erratum_68_printed_second_chart_norm():
    e = np.array([0.0, 0.6, 0.8])
    for a in (0.3, 1.0, 2.0, 2.9):
        c = np.tan(a / 2) * e
        printed = c / (1 + c @ c)
        assert np.linalg.norm(printed) == pytest.approx(0.5 * np.sin(a))
        assert abs(np.linalg.norm(printed) - np.sin(a / 2)) > 1e-3
        assert np.linalg.norm(vp.vp_second_chart(c)) == pytest.approx(np.sin(a / 2))


def test_second_chart_composes_through_the_half_turn():
    """(70) handles c1·c2 = 1, where (67) is singular."""
    c1 = np.array([1.0, 0.0, 0.0])  # quarter-turn about x, twice = half-turn
    with pytest.raises(errors.SingularError):
        vp.vp_compose(c1, c1)
    d1 = vp.vp_second_chart(c1)
    d = vp.second_chart_compose(d1, d1)
    close(d, [1.0, 0.0, 0.0], 1e-12)
    O1 = vp.matrix_from_vp(c1)
    close(vp.matrix_from_second_chart(d), O1 @ O1, 1e-12)
    rng = np.random.default_rng(2)
    for _ in range(10):
        c2, c3 = rng.normal(size=3) * 0.4, rng.normal(size=3) * 0.4
        close(vp.second_chart_compose(vp.vp_second_chart(c2), vp.vp_second_chart(c3)),
              vp.vp_second_chart(vp.vp_compose(c2, c3)), 1e-12)


# --------------------------------------------------------------------------- dual vector-parameters


def _dual_div(n0, n1, d0, d1):
    return n0 / d0, n1 / d0 - n0 * d1 / d0**2


@st.composite
def pose_strategy(draw, S):
    r = draw(non_half_turn_quat(S))
    p = draw(S.vec(3))
    return dq.pose(r, p)


@PROP
@given(data=st.data())
def test_dual_vp_is_vec_over_scal(S, data):
    x = data.draw(pose_strategy(S))
    c, cd = vp.dual_vp_from_pose(x)
    # ĉ = vec(q̂)/scal(q̂) in dual arithmetic
    e0, e1 = _dual_div(x[1:4], x[5:8], x[0], x[4])
    close(c, e0, 1e-9)
    close(cd, e1, 1e-9)
    close(vp.pose_from_dual_vp(c, cd), x * np.sign(x[0]), 1e-9)


@PROP
@given(data=st.data())
def test_dual_composition_is_pose_product(S, data):
    x1, x2 = data.draw(pose_strategy(S)), data.draw(pose_strategy(S))
    c1, d1 = vp.dual_vp_from_pose(x1)
    c2, d2 = vp.dual_vp_from_pose(x2)
    x12 = dq.mul(x1, x2)
    if abs(1 - c1 @ c2) < 1e-2 or abs(x12[0]) < 0.05:
        return
    c, d = vp.dual_vp_compose(c1, d1, c2, d2)
    ce, de = vp.dual_vp_from_pose(x12)
    close(c, ce, 1e-8)
    close(d, de, 1e-8)


@PROP
@given(data=st.data())
def test_dual_orthogonal_matrix(S, data):
    x = data.draw(pose_strategy(S))
    c, cd = vp.dual_vp_from_pose(x)
    O, Od = vp.dual_orthogonal_matrix(c, cd)
    p = dq.translation(x)
    close(O, dq.rotation_matrix(x), 1e-9)
    close(Od, skew(p) @ O, 1e-9)  # (151): Ô = O + μ p^× O
    # Plücker lines map like Ad: [E; X × E] = [[O, 0], [p^× O, O]] [e; x × e]  (148)–(150)
    e = data.draw(S.unit3)
    pt = data.draw(S.vec(3))
    line = np.concatenate([e, np.cross(pt, e)])
    mapped = np.concatenate([O @ line[:3], Od @ line[:3] + O @ line[3:]])
    close(mapped, dq.Ad6(x, line), 1e-9)


def test_dh_link_as_dual_screw_product():
    """[Mladenova, §4, eq. (153)]: ⟨ĉ_ϑ, ĉ_α⟩ = the DQ product q̂_z(ϑ, d) q̂_x(α, a)."""
    th, d, al, a = 0.7, 0.3, -0.4, 0.5
    sec2 = lambda t: 1.0 / np.cos(t / 2) ** 2  # noqa: E731
    ct, ctd = np.array([0, 0, np.tan(th / 2)]), np.array([0, 0, 0.5 * d * sec2(th)])
    ca, cad = np.array([np.tan(al / 2), 0, 0]), np.array([0.5 * a * sec2(al), 0, 0])
    c, cd = vp.dual_vp_compose(ct, ctd, ca, cad)
    xz = dq.pose(quat_from_axis_angle([0, 0, 1], th), [0, 0, d])
    xx = dq.pose(quat_from_axis_angle([1, 0, 0], al), [a, 0, 0])
    close(vp.pose_from_dual_vp(c, cd), dq.mul(xz, xx), 1e-12)


def test_bad_inputs():
    with pytest.raises(errors.ShapeError, match="c1"):
        vp.vp_compose(np.zeros(4), np.zeros(3))
    with pytest.raises(errors.ShapeError, match="O"):
        vp.vp_from_matrix(np.eye(4))
    with pytest.raises(errors.NonFiniteError):
        vp.matrix_from_vp([np.nan, 0, 0])
    with pytest.raises(errors.ShapeError, match="x"):
        vp.dual_vp_from_pose(np.zeros(6))
    assert vp.matrix_from_vp(np.zeros((5, 2, 3))).shape == (5, 2, 3, 3)
