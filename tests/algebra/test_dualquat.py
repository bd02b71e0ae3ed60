"""Property tests of dqdyn.algebra.dualquat (identities of [Silva2022, §2], [MontgomerySmith2023, §2–4], [Silva2022thesis, §3.3]).

Strategies come from the run-wide fixture ``S`` (tests/algebra/conftest.py).
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg
from hypothesis import given, settings
from hypothesis import strategies as st

from dqdyn import errors
from dqdyn.algebra import _core
from dqdyn.algebra import dualquat as dq
from dqdyn.algebra.rotations import matrix_from_quat, quat_from_axis_angle

from algebra_asserts import close, close_pm

PROP = settings(max_examples=50, deadline=None)
ONE = np.array([1.0, 0, 0, 0, 0, 0, 0, 0])


def dual_mul(a, b):
    """Product of dual numbers (..., 2)."""
    return np.stack([a[..., 0] * b[..., 0], a[..., 0] * b[..., 1] + a[..., 1] * b[..., 0]], -1)


# --------------------------------------------------------------------------- products


@PROP
@given(data=st.data())
def test_mul_associative(S, data):
    a, b, c = (data.draw(S.dq) for _ in range(3))
    close(dq.mul(dq.mul(a, b), c), dq.mul(a, dq.mul(b, c)), 1e-12)


@PROP
@given(data=st.data())
def test_conj_reverses_products(S, data):
    a, b = data.draw(S.dq), data.draw(S.dq)
    close(dq.conj(dq.mul(a, b)), dq.mul(dq.conj(b), dq.conj(a)), 1e-12)


@PROP
@given(data=st.data())
def test_unit_elements(S, data):
    x = data.draw(S.unit_dq)
    assert dq.is_unit(x)
    close(dq.mul(x, dq.conj(x)), ONE, 1e-12)
    close(dq.mul(dq.conj(x), x), ONE, 1e-12)
    close(dq.inv(x), dq.conj(x), 1e-12)  # [MontgomerySmith2023, eq. (4)]
    close(dq.norm(x), [1.0, 0.0], 1e-12)


@PROP
@given(data=st.data())
def test_inverse_general(S, data):
    h = data.draw(S.invertible_dq)  # [MontgomerySmith2023, eq. (3)]
    close(dq.mul(h, dq.inv(h)), ONE, 1e-9)
    close(dq.mul(dq.inv(h), h), ONE, 1e-9)


def test_parts_and_vectorization():
    h = np.arange(1.0, 9.0)
    assert np.array_equal(dq.P(h), [1, 2, 3, 4])
    assert np.array_equal(dq.D(h), [5, 6, 7, 8])
    assert np.array_equal(dq.Re(h), [1, 0, 0, 0, 5, 0, 0, 0])
    assert np.array_equal(dq.Im(h), [0, 2, 3, 4, 0, 6, 7, 8])
    assert np.array_equal(dq.Re(h) + dq.Im(h), h)
    assert np.array_equal(dq.conj(h), [1, -2, -3, -4, 5, -6, -7, -8])
    assert np.array_equal(dq.vec6(h), [2, 3, 4, 6, 7, 8])
    assert np.array_equal(dq.from_vec6(dq.vec6(h)), dq.Im(h))
    assert np.array_equal(dq.vec8(h), h)


@PROP
@given(data=st.data())
def test_norm_is_dual_number_and_multiplicative(S, data):
    a, b = data.draw(S.invertible_dq), data.draw(S.invertible_dq)
    na = dq.norm(a)
    # |h|² = h* h = |A|² + 2ε A·B  ([MontgomerySmith2023, eqs. (30)–(31)])
    hh = dq.mul(dq.conj(a), a)
    close(hh[[1, 2, 3, 5, 6, 7]], np.zeros(6), 1e-12)
    close(dual_mul(na, na), hh[[0, 4]], 1e-12)
    close(dq.norm(dq.mul(a, b)), dual_mul(na, dq.norm(b)), 1e-9)  # eq. 32


def test_size_l():
    h = np.array([1.0, 0, 0, 0, 0, 3.0, 4.0, 0])
    assert dq.size_l(h, 1.0) == pytest.approx(np.sqrt(26.0))
    assert dq.size_l(h, 5.0) == pytest.approx(np.sqrt(2.0))


# --------------------------------------------------------------------------- normalization


def normalize_printed(h):
    """The expansion printed in [MontgomerySmith2023, eq. (33)]: Q/|Q| + ε(B − (B·Q)Q/|Q|²); the
    corrected form is Q/|Q| + ε(B/|Q| − (B·Q)Q/|Q|³), i.e. η |η|⁻¹."""
    Q, B = h[..., :4], h[..., 4:]
    nQ = np.linalg.norm(Q, axis=-1, keepdims=True)
    BQ = np.sum(B * Q, axis=-1, keepdims=True)
    return np.concatenate([Q / nQ, B - BQ * Q / nQ**2], axis=-1)


@PROP
@given(data=st.data())
def test_normalize_properties(S, data):
    a, b = data.draw(S.invertible_dq), data.draw(S.invertible_dq)
    na = dq.normalize(a)
    assert dq.is_unit(na)
    close(dq.normalize(na), na, 1e-12)  # idempotent
    # ĥ = h |h|⁻¹ with the dual-number inverse 1/(n + ε d) = 1/n − ε d/n²
    n = dq.norm(a)
    close(na[:4], a[:4] / n[0], 1e-12)
    close(na[4:], a[4:] / n[0] - a[:4] * n[1] / n[0] ** 2, 1e-9)
    # [MontgomerySmith2023, eq. (34)]
    close(dq.normalize(dq.mul(a, b)), dq.mul(na, dq.normalize(b)), 1e-9)


@PROP
@given(data=st.data())
def test_normalize_fixes_unit(S, data):
    x = data.draw(S.unit_dq)
    close(dq.normalize(x), x, 1e-12)


def test_printed_eq33_normalization_breaks_eq34():
    """The printed expansion of [MontgomerySmith2023, eq. (33)] also yields unit elements but violates (34)."""
    rng = np.random.default_rng(1)
    a = rng.normal(size=8) * 2
    b = rng.normal(size=8) * 2
    pa, pb = normalize_printed(a), normalize_printed(b)
    assert dq.is_unit(pa) and dq.is_unit(pb)
    err_printed = np.abs(normalize_printed(dq.mul(a, b)) - dq.mul(pa, pb)).max()
    err_correct = np.abs(dq.normalize(dq.mul(a, b)) - dq.mul(dq.normalize(a), dq.normalize(b))).max()
    assert err_printed > 1e-2
    assert err_correct < 1e-12
    # the two agree when |Q| = 1
    h = a.copy()
    h[:4] /= np.linalg.norm(h[:4])
    close(normalize_printed(h), dq.normalize(h), 1e-12)


# --------------------------------------------------------------------------- Hamilton operators


@PROP
@given(data=st.data())
def test_hamilton_operators(S, data):
    a, b = data.draw(S.dq), data.draw(S.dq)
    ab = dq.mul(a, b)
    close(dq.hamiplus8(a) @ b, ab, 1e-12)
    close(dq.haminus8(b) @ a, ab, 1e-12)
    qa, qb = a[:4], b[:4]
    qab = ab[:4]
    close(dq.hamiplus4(qa) @ qb, qab, 1e-12)
    close(dq.haminus4(qb) @ qa, qab, 1e-12)


def test_hamilton_matrices_match_the_written_out_matrices():
    a, b, c, d = 1.0, 2.0, 3.0, 4.0
    Hp = np.array([[a, -b, -c, -d], [b, a, -d, c], [c, d, a, -b], [d, -c, b, a]])
    Hm = np.array([[a, -b, -c, -d], [b, a, d, -c], [c, -d, a, b], [d, c, -b, a]])
    assert np.array_equal(dq.hamiplus4([a, b, c, d]), Hp)
    assert np.array_equal(dq.haminus4([a, b, c, d]), Hm)
    h = np.arange(1.0, 9.0)
    H8 = dq.hamiplus8(h)
    assert np.array_equal(H8[:4, :4], dq.hamiplus4(h[:4]))
    assert np.array_equal(H8[4:, :4], dq.hamiplus4(h[4:]))
    assert np.array_equal(H8[:4, 4:], np.zeros((4, 4)))
    assert dq.hamiplus8(np.zeros((2, 3, 8))).shape == (2, 3, 8, 8)


# --------------------------------------------------------------------------- adjoint


@PROP
@given(data=st.data())
def test_Ad_composition_and_expanded_form(S, data):
    a, b = data.draw(S.unit_dq), data.draw(S.unit_dq)
    xi6 = data.draw(S.pure6)
    xi = dq.from_vec6(xi6)
    close(dq.Ad(dq.mul(a, b), xi), dq.Ad(a, dq.Ad(b, xi)), 1e-9)
    prod = dq.Ad(a, xi)
    close(prod[[0, 4]], [0.0, 0.0], 1e-9)  # stays pure
    close(dq.Ad6(a, xi6), dq.vec6(prod), 1e-9)  # expanded = product form
    close(dq.Ad6_inv(a, dq.Ad6(a, xi6)), xi6, 1e-9)
    close(dq.Ad6_inv(a, xi6), dq.vec6(dq.Ad(dq.conj(a), xi)), 1e-9)


@PROP
@given(data=st.data())
def test_lemma_3_1(S, data):
    """Ad(a)(ε b) = Ad(P(a))(ε b) ([Silva2022thesis, Lemma 3.1])."""
    a = data.draw(S.unit_dq)
    b = data.draw(S.vec(3))
    eb = np.concatenate([[0, 0, 0, 0, 0], b])
    ra = np.concatenate([a[:4], np.zeros(4)])
    close(dq.Ad(a, eb), dq.Ad(ra, eb), 1e-9)


@PROP
@given(data=st.data())
def test_power_pairing_invariant(S, data):
    x = data.draw(S.unit_dq)
    xi, zeta = data.draw(S.pure6), data.draw(S.pure6)
    p = dq.power(xi, zeta)
    close(dq.power(dq.Ad6(x, xi), dq.Ad6(x, zeta)), p, 1e-9)
    assert p == pytest.approx(xi[:3] @ zeta[3:] + xi[3:] @ zeta[:3])
    close(dq.inner(xi, zeta)[1], p, 1e-12)


# --------------------------------------------------------------------------- cross / inner


@PROP
@given(data=st.data())
def test_cross_is_lie_bracket_and_inner(S, data):
    a6, b6 = data.draw(S.pure6), data.draw(S.pure6)
    a, b = dq.from_vec6(a6), dq.from_vec6(b6)
    ab, ba = dq.mul(a, b), dq.mul(b, a)
    close(dq.cross(a, b), (ab - ba) / 2, 1e-12)
    close(dq.cross(a6, b6), dq.vec6((ab - ba) / 2), 1e-12)
    sym = -(ab + ba) / 2  # a dual number: only entries 0 and 4
    close(sym[[1, 2, 3, 5, 6, 7]], np.zeros(6), 1e-12)
    close(dq.inner(a, b), sym[[0, 4]], 1e-12)
    close(dq.inner(a6, b6), sym[[0, 4]], 1e-12)


# --------------------------------------------------------------------------- exp / log


@PROP
@given(data=st.data())
def test_exp_matches_matrix_exponential_oracle(S, data):
    """exp(g) = expm(H⁺₈(g)) vec8(1): Σ g^k/k! computed independently by scipy."""
    g = data.draw(S.dq)  # general: the real dual-number part factors out
    close(dq.exp(g), scipy.linalg.expm(dq.hamiplus8(g)) @ ONE, 1e-9)
    g6 = data.draw(S.pure6)
    close(dq.exp(g6), scipy.linalg.expm(dq.hamiplus8(dq.from_vec6(g6))) @ ONE, 1e-9)


def test_exp_small_angle_oracle():
    for th in [0.0, 1e-12, 1e-9, 1e-5, 1e-4, 1.0001e-4, 1e-3]:
        g6 = np.array([th, -0.5 * th, 0.3 * th, 1.0, -2.0, 0.5])
        close(dq.exp(g6), scipy.linalg.expm(dq.hamiplus8(dq.from_vec6(g6))) @ ONE, 1e-13)


@PROP
@given(data=st.data())
def test_exp_log_roundtrip(S, data):
    x = data.draw(S.unit_dq)  # includes angles near 0 and π and pure translations
    g = dq.log(x)
    close(g[[0, 4]], [0.0, 0.0], 0)
    assert np.linalg.norm(g[1:4]) <= np.pi / 2 + 1e-12
    close_pm(dq.exp(g), x, 1e-9)


@PROP
@given(data=st.data())
def test_log_exp_roundtrip(S, data):
    g6 = data.draw(S.pure6.filter(lambda v: np.linalg.norm(v[:3]) < np.pi / 2 - 0.05))
    close(dq.vec6(dq.log(dq.exp(g6))), g6, 1e-9)


def test_exp_is_screw_motion_of_constant_twist():
    """d/dt exp(½ ξ t) = exp(½ ξ t) ½ξ = ½ξ exp(½ ξ t) (ẋ = ½ x ξ^b, [Silva2022, eq. (4)])."""
    xi = np.array([0.3, -0.7, 0.2, 1.0, 0.4, -0.5])
    Xi = dq.from_vec6(xi)
    t, h = 0.8, 1e-6
    xdot = (dq.exp(0.5 * xi * (t + h)) - dq.exp(0.5 * xi * (t - h))) / (2 * h)
    x = dq.exp(0.5 * xi * t)
    close(xdot, 0.5 * dq.mul(x, Xi), 1e-8)
    close(xdot, 0.5 * dq.mul(Xi, x), 1e-8)


def test_log_special_cases():
    # pure translation: log = ε ½ p, and exp gives it back
    x = dq.pose([1.0, 0, 0, 0], [1.0, -2.0, 3.0])
    close(dq.log(x), [0, 0, 0, 0, 0, 0.5, -1.0, 1.5], 1e-15)
    # half-turn about z with an offset (both signs of P0 = ±0)
    for s in (1.0, -1.0):
        r = np.array([s * 0.0, 0.0, 0.0, 1.0])
        x = dq.pose(r, [0.3, 0.2, 0.1])
        close_pm(dq.exp(dq.log(x)), x, 1e-12)
    # batch and empty batch
    xs = dq.pose(quat_from_axis_angle([[0, 0, 1], [1, 0, 0]], [0.3, 3.0]), [[1, 2, 3], [0, 0, 1]])
    assert dq.log(xs).shape == (2, 8)
    assert dq.log(np.zeros((0, 8))).shape == (0, 8)
    assert dq.exp(np.zeros((0, 3, 6))).shape == (0, 3, 8)


@PROP
@given(data=st.data())
def test_decoupled_log_exp(S, data):
    x = data.draw(S.unit_dq)
    g = dq.log_decoupled(x)
    close_pm(dq.exp_decoupled(g), x, 1e-9)
    close(2 * g[5:], dq.translation(x), 1e-9)  # dual part is ½p
    # same rotation part as the true log
    close(g[1:4], dq.log(x)[1:4], 1e-9)


def test_decoupled_differs_from_true_log_for_screws():
    x = dq.pose(quat_from_axis_angle([0, 0, 1], 1.0), [1.0, 0.0, 0.0])
    assert np.abs(dq.log_decoupled(x) - dq.log(x)).max() > 1e-2
    # agree for pure translation and pure rotation
    for y in (dq.pose([1.0, 0, 0, 0], [1.0, 2, 3]), dq.pose(quat_from_axis_angle([0, 1, 0], 2.0), [0.0, 0, 0])):
        close(dq.log_decoupled(y), dq.log(y), 1e-12)


# --------------------------------------------------------------------------- poses


@PROP
@given(data=st.data())
def test_pose_roundtrips_and_composition(S, data):
    r1, r2 = data.draw(S.unit_quat), data.draw(S.unit_quat)
    p1, p2 = data.draw(S.vec(3)), data.draw(S.vec(3))
    x1, x2 = dq.pose(r1, p1), dq.pose(r2, p2)
    close(dq.rotation(x1), r1, 0)
    close(dq.translation(x1), p1, 1e-12)
    close(dq.rotation_matrix(x1), matrix_from_quat(r1), 1e-12)
    T1 = dq.matrix_from_pose(x1)
    close_pm(dq.pose_from_matrix(T1), x1, 1e-9)
    # x1 x2 applies x2 first: T(x1 x2) = T(x1) T(x2)
    close(dq.matrix_from_pose(dq.mul(x1, x2)), T1 @ dq.matrix_from_pose(x2), 1e-9)
    # point action s = Q r Q* + t ([MontgomerySmith2023, eq. (8)])
    pt = data.draw(S.vec(3))
    # (7): 1 + ε s = η (1 + ε r) η̄*, with the second conjugation η̄ = A − ε B
    x1bar_conj = dq.conj(x1 * np.array([1, 1, 1, 1, -1, -1, -1, -1.0]))
    s = dq.mul(dq.mul(x1, np.concatenate([[1.0, 0, 0, 0, 0], pt])), x1bar_conj)
    close(s, np.concatenate([[1.0, 0, 0, 0, 0], matrix_from_quat(r1) @ pt + p1]), 1e-9)
    # with the plain conjugate the translation cancels: x (1 + ε r) x* = 1 + ε R r
    s = dq.Ad(x1, np.concatenate([[1.0, 0, 0, 0, 0], pt]))
    close(s[5:], matrix_from_quat(r1) @ pt, 1e-9)


def test_broadcasting():
    rng = np.random.default_rng(0)
    a = rng.normal(size=(2, 1, 8))
    b = rng.normal(size=(3, 8))
    ab = dq.mul(a, b)
    assert ab.shape == (2, 3, 8)
    for i in range(2):
        for j in range(3):
            close(ab[i, j], dq.mul(a[i, 0], b[j]), 1e-14)
    x = dq.normalize(rng.normal(size=(4, 8)))
    xi = rng.normal(size=(5, 1, 6))
    assert dq.Ad6(x, xi).shape == (5, 4, 6)
    assert dq.power(xi, rng.normal(size=(4, 6))).shape == (5, 4)
    assert dq.norm(a).shape == (2, 1, 2)


# --------------------------------------------------------------------------- screws


@PROP
@given(data=st.data())
def test_screw_axis_motion(S, data):
    l = data.draw(S.unit3)
    pt = data.draw(S.vec(3))
    h = data.draw(st.floats(-2, 2))
    th = data.draw(st.floats(-3, 3))
    Sc = dq.screw_axis(l, pt, h)
    close(Sc, np.concatenate([l, np.cross(pt, l) + h * l]), 1e-14)
    x = dq.exp(0.5 * Sc * th)
    close_pm(dq.rotation(x), quat_from_axis_angle(l, th), 1e-9)
    # a point on the axis moves by h θ along l
    R, t = dq.rotation_matrix(x), dq.translation(x)
    close(R @ pt + t, pt + h * th * l, 1e-9)
    # decomposition back
    scr = dq.plucker_from_twist(2.5 * Sc)
    assert scr.magnitude == pytest.approx(2.5)
    assert scr.pitch == pytest.approx(h, abs=1e-9)
    close(scr.line, np.concatenate([l, np.cross(pt, l)]), 1e-9)
    close(2.5 * dq.screw_axis(scr.line[:3], scr.point, scr.pitch), 2.5 * Sc, 1e-9)
    close(scr.line[:3] @ scr.line[3:], 0.0, 1e-12)


def test_screw_axis_prismatic_and_plucker_special_cases():
    Sc = dq.screw_axis([0, 0, 2.0], [1.0, 1.0, 0], np.inf, as_vec8=True)
    close(Sc, [0, 0, 0, 0, 0, 0, 0, 1.0], 0)
    scr = dq.plucker_from_twist([0, 0, 0, 0, 3.0, 0])
    assert scr.pitch == np.inf and scr.magnitude == 3.0
    close(scr.line, [0, 1.0, 0, 0, 0, 0], 0)
    scr0 = dq.plucker_from_twist(np.zeros(6))
    assert scr0.magnitude == 0.0 and scr0.pitch == 0.0
    with pytest.raises(errors.SingularError):
        dq.screw_axis([0, 0, 0], [0, 0, 0])


# --------------------------------------------------------------------------- the compiled kernels


@PROP
@given(data=st.data())
def test_core_kernels_agree_with_array_functions(S, data):
    a, b = data.draw(S.dq), data.draw(S.dq)
    x = data.draw(S.unit_dq)
    xi, ze = data.draw(S.pure6), data.draw(S.pure6)
    out8, out6, out4, out3 = np.empty(8), np.empty(6), np.empty(4), np.empty(3)
    _core.dq_mul(a, b, out8)
    close(out8, dq.mul(a, b), 1e-14)
    _core.dq_conj(a, out8)
    close(out8, dq.conj(a), 0)
    _core.qmul(a[:4], b[:4], out4)
    close(out4, dq.mul(a, b)[:4], 1e-14)
    _core.ad6(x, xi, out6)
    close(out6, dq.Ad6(x, xi), 1e-12)
    _core.ad6_inv(x, xi, out6)
    close(out6, dq.Ad6_inv(x, xi), 1e-12)
    _core.cross6(xi, ze, out6)
    close(out6, dq.cross(xi, ze), 1e-14)
    assert _core.power6(xi, ze) == pytest.approx(dq.power(xi, ze), abs=1e-12)
    _core.pose_translation(x, out3)
    close(out3, dq.translation(x), 1e-12)
    _core.qrot(x[:4], xi[:3], out3)
    close(out3, dq.Ad6(np.concatenate([x[:4], np.zeros(4)]), xi)[:3], 1e-12)
    _core.qrot_inv(x[:4], xi[:3], out3)
    close(out3, dq.Ad6_inv(np.concatenate([x[:4], np.zeros(4)]), xi)[:3], 1e-12)
    _core.pose_from_rt(x[:4], xi[:3], out8)
    close(out8, dq.pose(x[:4], xi[:3]), 1e-14)
    _core.qexp_pure(xi[:3] * 0.3, out4)
    close(out4, dq.exp(np.concatenate([xi[:3] * 0.3, np.zeros(3)]))[:4], 1e-14)


# --------------------------------------------------------------------------- bad input


def test_bad_shapes_name_the_argument():
    with pytest.raises(errors.ShapeError, match="b must have shape"):
        dq.mul(np.zeros(8), np.zeros(7))
    with pytest.raises(errors.ShapeError, match="xi"):
        dq.Ad6(np.zeros(8), np.zeros(8))
    with pytest.raises(errors.ShapeError, match="h"):
        dq.conj(3.0)
    with pytest.raises(errors.ShapeError, match="T"):
        dq.pose_from_matrix(np.eye(3))
    with pytest.raises(errors.ShapeError, match="g"):
        dq.exp(np.zeros(5))
    with pytest.raises(errors.ShapeError, match="twist"):
        dq.power(np.zeros(8), np.zeros(6))
    with pytest.raises(errors.ShapeError, match="q"):
        dq.hamiplus4(np.zeros(8))


def test_non_finite_unit_singular_errors():
    with pytest.raises(errors.NonFiniteError, match="a contains NaN"):
        dq.mul([np.nan] + [0.0] * 7, ONE)
    with pytest.raises(errors.NonFiniteError):
        dq.exp([np.inf, 0, 0, 0, 0, 0])
    with pytest.raises(errors.SingularError):
        dq.inv([0, 0, 0, 0, 1, 0, 0, 0])
    with pytest.raises(errors.SingularError):
        dq.normalize(np.array([[1.0, 0, 0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 1, 0, 0, 0]]))
    with pytest.raises(errors.NotUnitError):
        dq.log(2 * ONE)
    with pytest.raises(errors.NotUnitError):
        dq.log([1.0, 0, 0, 0, 0.5, 0, 0, 0])  # |P| = 1 but P·D ≠ 0
    with pytest.raises(errors.NotUnitError):
        dq.pose([2.0, 0, 0, 0], [0, 0, 0])
    assert not dq.is_unit([np.nan] * 8)
    # errors are catchable as the library base class and as ValueError
    with pytest.raises(errors.DqdynError):
        dq.vec6(np.zeros(3))
    with pytest.raises(ValueError):
        dq.vec6(np.zeros(3))
