"""Tests of the scripting value type dqdyn.algebra.DQ (built on the array functions)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dqdyn.algebra as alg
from dqdyn import errors
from dqdyn.algebra import DQ, E_, i_, j_, k_
from dqdyn.algebra import dualquat as dq

PROP = settings(max_examples=50, deadline=None)


def test_constants_and_quaternion_units():
    assert i_ * i_ == -1 and j_ * j_ == -1 and k_ * k_ == -1
    assert i_ * j_ * k_ == -1
    assert i_ * j_ == k_ and j_ * k_ == i_ and k_ * i_ == j_
    assert j_ * i_ == -k_
    assert E_ * E_ == 0
    assert E_ * i_ == i_ * E_  # ε commutes
    assert (E_ * i_).vec8().tolist() == [0, 0, 0, 0, 0, 1, 0, 0]


@PROP
@given(data=st.data(), s=st.floats(-3, 3))
def test_operators_match_array_functions(S, data, s):
    a, b = data.draw(S.dq), data.draw(S.dq)
    A, B = DQ(a), DQ(b)
    np.testing.assert_allclose((A * B).vec8(), dq.mul(a, b), atol=1e-12)
    np.testing.assert_allclose((A + B).vec8(), a + b)
    np.testing.assert_allclose((A - B).vec8(), a - b)
    np.testing.assert_allclose((A * s).vec8(), a * s)
    np.testing.assert_allclose((s * A).vec8(), a * s)
    np.testing.assert_allclose((A + s).vec8(), a + np.eye(8)[0] * s)
    np.testing.assert_allclose((s - A).vec8(), np.eye(8)[0] * s - a)
    np.testing.assert_allclose((-A).vec8(), -a)
    np.testing.assert_allclose(A.conj().vec8(), dq.conj(a))
    np.testing.assert_allclose((A.P + E_ * A.D).vec8(), a)
    np.testing.assert_allclose((A.Re + A.Im).vec8(), a)
    np.testing.assert_allclose(np.asarray(A), a)
    assert np.asarray(A) is not A.vec8()


@PROP
@given(data=st.data())
def test_unit_and_norm_methods(S, data):
    x = DQ(data.draw(S.unit_dq))
    assert x.is_unit()
    assert (x * x.conj()).isclose(1.0)
    assert x.inv().isclose(x.conj())
    assert x.norm().isclose(1.0)
    assert x.normalize().isclose(x)
    g = x.log()
    assert g.exp().isclose(x, 1e-9) or g.exp().isclose(-x, 1e-9)
    xi = DQ(data.draw(S.pure6))
    assert x.Ad(xi).isclose(x * xi * x.conj(), 1e-9)
    np.testing.assert_allclose(x.Ad(xi).vec6(), dq.Ad6(x.vec8(), xi.vec6()), atol=1e-9)


def test_paper_style_pose():
    r = DQ.rotation_about(k_, np.pi / 2)
    x = r + E_ * 0.5 * (1.0 * i_ + 2.0 * j_) * r  # x = r + ε ½ p r
    np.testing.assert_allclose(x.translation(), [1.0, 2.0, 0.0], atol=1e-15)
    assert x.isclose(DQ.pose(r, [1.0, 2.0, 0.0]))
    assert x.isclose(DQ.pose(r, 1.0 * i_ + 2.0 * j_))
    assert x.rotation().isclose(r)
    h = DQ([1.0, 2, 3, 4, 5, 6, 7, 8])
    assert (h * h.inv()).isclose(1.0, 1e-12)
    assert (h / 2).isclose(0.5 * h)


def test_repr():
    assert repr(DQ([1, 0.5, 0, 0, 0, 0, 0, 0])) == "1 + 0.5i"
    assert repr(DQ([1, 0.5, 0, 0, 0, 1, 0, -2])) == "1 + 0.5i + ε(i - 2k)"
    assert repr(DQ()) == "0"
    assert repr(E_) == "ε(1)"
    assert repr(-k_) == "-k"
    assert str(DQ([0, 0, 0, 0, 0, 0, 0.25, 0])) == "ε(0.25j)"


def test_construction_forms_and_errors():
    assert DQ(2.0) == 2.0
    assert DQ([1, 2, 3, 4]).vec8().tolist() == [1, 2, 3, 4, 0, 0, 0, 0]
    assert DQ([1, 2, 3, 4, 5, 6]).vec8().tolist() == [0, 1, 2, 3, 0, 4, 5, 6]
    np.testing.assert_array_equal(DQ(np.arange(8.0)).vec6(), [1, 2, 3, 5, 6, 7])
    with pytest.raises(errors.ShapeError):
        DQ([1, 2, 3])
    with pytest.raises(errors.NonFiniteError):
        DQ([np.nan] * 8)
    with pytest.raises(TypeError):
        DQ(1.0) * "a"
    with pytest.raises(TypeError):
        {DQ(1.0)}
    with pytest.raises(errors.SingularError):
        (E_ * i_).inv()


def test_package_reexports():
    for name in ["mul", "conj", "P", "D", "Re", "Im", "norm", "normalize", "inv", "is_unit", "vec8", "vec6",
                 "from_vec6", "hamiplus8", "haminus8", "hamiplus4", "haminus4", "Ad", "Ad6", "cross", "inner",
                 "power", "exp", "log", "exp_decoupled", "log_decoupled", "pose", "rotation", "translation",
                 "pose_from_matrix", "matrix_from_pose", "rotation_matrix", "screw_axis", "plucker_from_twist",
                 "quaternionic_inertia", "L3", "angular_momentum", "spatial_inertia_matrix", "parallel_axis",
                 "vp_from_quat", "quat_from_vp", "matrix_from_vp", "vp_from_matrix", "vp_compose", "vp_inverse",
                 "dual_vp_from_pose", "pose_from_dual_vp", "dual_vp_compose", "dual_orthogonal_matrix",
                 "vp_second_chart", "DQ", "i_", "j_", "k_", "E_",
                 "quat_multiply", "quat_from_matrix", "pose_from_rt", "translation_of"]:
        assert hasattr(alg, name), name
        assert name in alg.__all__, name
