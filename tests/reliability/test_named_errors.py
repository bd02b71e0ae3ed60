"""Bad input becomes a named dqdyn.errors exception, never a silent NaN or a wrong message.

Oracle: the exception class and the argument name in its message; for the accepted inputs, the
result of the same call on well-formed input (or a finite model / Pinocchio loading the file)."""

from __future__ import annotations

import sys
import warnings

import numpy as np
import pytest

import dqdyn
from dqdyn.constraints import UserConstraint
from dqdyn.errors import (
    DqdynError,
    InfeasibleError,
    ModelError,
    NonFiniteError,
    ShapeError,
    UnknownNameError,
    URDFError,
)


@pytest.fixture(scope="module")
def m():
    return dqdyn.serial_chain(3)


Q0, V1 = np.zeros(3), np.ones(3)

_BODY = ('<link name="{n}"><inertial><mass value="1"/><inertia ixx="1" iyy="1" izz="1" ixy="0" '
         'ixz="0" iyz="0"/></inertial></link>')
URDF = ('<robot name="r"><link name="a"/>' + _BODY.format(n="b") + _BODY.format(n="c")
        + '<joint name="j1" type="revolute"><parent link="a"/><child link="b"/><axis xyz="AXIS"/>'
          '<limit lower="LO" upper="HI" effort="1" velocity="1"/></joint>'
          '<joint name="j2" type="revolute"><parent link="b"/><child link="c"/><axis xyz="0 0 1"/>'
          '<mimic joint="j1" multiplier="MUL"/><limit lower="-1" upper="1" effort="1" '
          'velocity="1"/></joint></robot>')


def urdf(axis="0 0 1", lo="-1", hi="1", mul="1"):
    return URDF.replace("AXIS", axis).replace("LO", lo).replace("HI", hi).replace("MUL", mul)


# ------------------------------------------------------------------------------ integrate dt
@pytest.mark.parametrize("dt, exc", [
    (float("nan"), NonFiniteError), (float("inf"), NonFiniteError), (-np.inf, NonFiniteError),
    (1e300, InfeasibleError), ("0.1", ShapeError), (None, ShapeError),
    (np.array([0.1, 0.2]), ShapeError), (np.array([0.1]), ShapeError), (True, ShapeError),
    (1j, ShapeError)])
@pytest.mark.parametrize("batched", [False, True])
def test_integrate_bad_dt(m, dt, exc, batched):
    q = np.zeros((2, 3)) if batched else Q0
    with pytest.raises(exc, match="dt"):
        dqdyn.integrate(m, q, V1, dt)


def test_integrate_good_dt(m):
    # oracle: for revolute joints integrate is q + v dt
    for dt in (0.1, 3, np.float64(2.5), np.array(0.5), -1e3):
        np.testing.assert_allclose(dqdyn.integrate(m, Q0, V1, dt), Q0 + V1 * float(dt))
    np.testing.assert_allclose(dqdyn.integrate(m, np.zeros((2, 3)), V1, 7.0), np.full((2, 3), 7.0))


# ---------------------------------------------------------------------------- non-finite values
def test_rnea_derivatives_fext_nan(m):
    F = np.zeros((m.nbodies + 1, 6))
    F[1, 0] = np.nan
    with pytest.raises(NonFiniteError, match="fext"):
        dqdyn.rnea_derivatives(m, Q0, V1, V1, fext=F)
    with pytest.raises(NonFiniteError, match="fext"):
        dqdyn.rnea_derivatives(m, np.zeros((2, 3)), V1, V1, fext=F)


@pytest.mark.parametrize("g, exc", [((np.nan, 0, 0), NonFiniteError), ((0, 0, np.inf), NonFiniteError),
                                    ((0, 0), ShapeError), ("down", ShapeError), ((0, 0, 1j), ShapeError)])
def test_gravity_checked(g, exc):
    with pytest.raises(exc, match="gravity"):
        dqdyn.load_urdf(urdf(), gravity=g)
    with pytest.raises(exc, match="gravity"):
        dqdyn.serial_chain(2, gravity=g)


@pytest.mark.parametrize("mul", ["nan", "inf"])
def test_urdf_mimic_multiplier_not_finite(mul):
    with pytest.raises(URDFError, match="mimic.*multiplier"):
        dqdyn.load_urdf(urdf(mul=mul))


def test_urdf_axis_nan_named_not_zero():
    with pytest.raises(URDFError, match="is not finite"):
        dqdyn.load_urdf(urdf(axis="nan 0 1"))
    with pytest.raises(URDFError, match="is zero"):
        dqdyn.load_urdf(urdf(axis="0 0 0"))


def test_urdf_lower_above_upper_is_no_limit_and_nan_is_refused():
    # lower > upper: PyBullet's "no limit" (pybullet_data's cube_no_rotation.urdf); Pinocchio
    # accepts the file too.  A NaN bound is refused, naming the joint.
    with pytest.warns(UserWarning, match="j1.*lower=1.0 > upper=-1.0.*no position limit"):
        m = dqdyn.load_urdf(urdf(lo="1", hi="-1"))
    assert np.all(np.isinf(m.q_lower)) and np.all(np.isinf(m.q_upper))
    with pytest.raises(URDFError, match="j1.*lower and upper must be numbers"):
        dqdyn.load_urdf(urdf(lo="nan", hi="1"))
    m = dqdyn.load_urdf(urdf(lo="-1", hi="1"))  # oracle: the valid file loads
    assert np.isfinite(dqdyn.random_configuration(m)).all()


def test_load_urdf_empty_path():
    for bad in ("", "   "):
        with pytest.raises(URDFError, match="empty"):
            dqdyn.load_urdf(bad)


# --------------------------------------------------------------------------- UserConstraint
A1 = np.array([[1.0, 0.0, 0.0]])


@pytest.mark.parametrize("kw, exc", [(dict(A=[[np.nan, 0, 0]]), NonFiniteError),
                                     (dict(A=[[np.inf, 0, 0]]), NonFiniteError),
                                     (dict(A=A1, b=[np.nan]), NonFiniteError),
                                     (dict(A=A1, b=[np.inf]), NonFiniteError),
                                     (dict(A=[["1", 0, 0]]), ShapeError),
                                     (dict(A=A1 + 1j), ShapeError)])
def test_user_constraint_constant_terms(kw, exc):
    with pytest.raises(exc, match="UserConstraint 'mine'"):
        UserConstraint(name="mine", **kw)


def _boom(model, q, v):
    raise RuntimeError("boom")


@pytest.mark.parametrize("fn, exc, what", [
    (_boom, ModelError, "raised RuntimeError: boom"),
    (lambda m_, q, v: (np.zeros((1, 2)), np.zeros(1)), ShapeError, "A must be"),
    (lambda m_, q, v: (A1, np.zeros(2)), ShapeError, "b"),
    (lambda m_, q, v: 1.0, ShapeError, "pair"),
    (lambda m_, q, v: (A1, [np.nan]), NonFiniteError, "b returned"),
    (lambda m_, q, v: (A1 * np.inf, [0.0]), NonFiniteError, "A returned"),
])
def test_user_constraint_function_wrapped(m, fn, exc, what):
    with pytest.raises(exc, match=what) as ei:
        dqdyn.constrained_forward_dynamics(m, Q0, V1, V1, UserConstraint(fn, name="mine"))
    assert "mine" in str(ei.value)


def test_user_constraint_good(m):
    # oracle: A v̇ = b holds for the constrained acceleration
    r = dqdyn.constrained_forward_dynamics(m, Q0, V1, V1, UserConstraint(A=A1, b=[0.5]))
    np.testing.assert_allclose(A1 @ r.qdd, [0.5], atol=1e-9)


# ------------------------------------------------------------------------------ messages
def test_constraints_not_iterable(m):
    with pytest.raises(ModelError, match="constraints must be"):
        dqdyn.constrained_forward_dynamics(m, Q0, V1, V1, constraints=3)


@pytest.mark.parametrize("rcond", [-1, 1.0, np.nan, "x"])
def test_rcond_named(m, rcond):
    with pytest.raises(DqdynError, match="rcond"):
        dqdyn.constrained_forward_dynamics(m, Q0, V1, V1, UserConstraint(A=A1), rcond=rcond)


@pytest.mark.parametrize("bad", [None, "panda", 3, np.zeros(3)])
def test_model_argument_named(bad):
    with pytest.raises(ModelError, match="model must be a dqdyn.Model"):
        dqdyn.rnea(bad, Q0, V1, V1)
    with pytest.raises(ModelError, match="model must be a dqdyn.Model"):
        dqdyn.mass_matrix(bad, Q0)


@pytest.mark.parametrize("bad", [None, "panda", 3])
def test_model_argument_named_for_a_frame(bad):
    """twist_jacobian / frame_pose looked the frame up on the model first: AttributeError."""
    with pytest.raises(ModelError, match="model must be a dqdyn.Model"):
        dqdyn.twist_jacobian(bad, Q0, "link1")
    with pytest.raises(ModelError, match="model must be a dqdyn.Model"):
        dqdyn.frame_pose(bad, Q0, 1)


def test_model_argument_named_aba():
    with pytest.raises(ModelError, match="model must be a dqdyn.Model"):
        dqdyn.aba(None, Q0, V1, V1)


@pytest.mark.parametrize("name", [["x"], np.zeros(2), {"a": 1}])
def test_frame_name_unhashable(m, name):
    with pytest.raises(UnknownNameError, match="frame"):
        dqdyn.frame_pose(m, Q0, name)


def test_serial_from_dh_puma560_inertia_check():
    """The Robotics Toolbox's Puma 560: link 1 inertia diag(0, 0, 0.35) breaks the triangle
    inequality; 'error' refuses it with a hint, 'warn' builds it (oracle: M(q) symmetric and
    positive definite, as for any chain whose link inertias sum to a valid one)."""
    dh = [[0, 0, 0, np.pi / 2], [0, 0, 0.4318, 0], [0, 0.15005, 0.0203, -np.pi / 2],
          [0, 0.4318, 0, np.pi / 2], [0, 0, 0, -np.pi / 2], [0, 0, 0, 0]]
    masses = [0, 17.4, 4.8, 0.82, 0.34, 0.09]
    inertias = [np.diag([0, 0, 0.35]), np.diag([0.13, 0.524, 0.539]), np.diag([0.066, 0.086, 0.0125]),
                np.diag([1.8e-3, 1.3e-3, 1.8e-3]), np.diag([0.3e-3, 0.4e-3, 0.3e-3]),
                np.diag([0.15e-3, 0.15e-3, 0.04e-3])]
    with pytest.raises(ModelError, match="inertia_check='warn'"):
        dqdyn.serial_from_dh(dh, masses=masses, inertias=inertias)
    with pytest.warns(UserWarning, match="triangle"):
        m = dqdyn.serial_from_dh(dh, masses=masses, inertias=inertias, inertia_check="warn")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        dqdyn.serial_from_dh(dh, masses=masses, inertias=inertias, inertia_check="off")
    M = dqdyn.mass_matrix(m, np.full(6, 0.3))
    np.testing.assert_allclose(M, M.T, atol=1e-12)
    assert np.linalg.eigvalsh(M).min() > 0


def test_romeo_laas_small_inertia_check():
    """example-robot-data's romeo_laas_small has non-PSD link inertias; Pinocchio loads it, and
    so does dqdyn with inertia_check='warn' / 'off' (the docstring's promise)."""
    sys.path.insert(0, __file__.rsplit("/", 2)[0])
    from pinconv import erd

    path = erd("romeo_description/urdf/romeo_laas_small.urdf")
    with pytest.raises(URDFError, match="inertia_check='warn'"):
        dqdyn.load_urdf(path, "free")
    with pytest.warns(UserWarning, match="semi-definite"):
        m = dqdyn.load_urdf(path, "free", inertia_check="warn")
    pin = pytest.importorskip("pinocchio")
    pm = pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer(), mimic=True)
    assert m.nv == pm.nv
    m2 = dqdyn.load_urdf(path, "free", inertia_check="off")
    assert m2.nv == m.nv


# ------------------------------------------- the fixes applied in the kernels' modules
def test_complex_input_refused(m):
    with pytest.raises(ShapeError, match="q"):
        dqdyn.rnea(m, Q0 + 1j, V1, V1)


def test_numeric_strings_refused(m):
    with pytest.raises(ShapeError, match="q"):
        dqdyn.rnea(m, np.array(["0", "0", "0"]), V1, V1)


def test_rnea_overflow_reported(m):
    """Finite inputs whose products overflow float64 (|v|² > 1.8e308): a named error, never NaN;
    just below, a finite result (oracle: finiteness itself)."""
    with pytest.raises(NonFiniteError, match="overflowed"):
        dqdyn.rnea(m, Q0, np.full(3, 1e160), V1)
    with pytest.raises(NonFiniteError, match="overflowed"):
        dqdyn.rnea(m, Q0, np.full((2, 3), 1e160), V1)  # batches too
    try:
        tau = dqdyn.rnea(m, Q0, np.full(3, 1e150), V1)
    except NonFiniteError:
        pass
    else:
        assert np.all(np.isfinite(tau))


def test_nv0_model_with_lists():
    b = dqdyn.ModelBuilder("fixed")
    b.add_body("a", "world", "fixed", mass=1.0, inertia=np.eye(3))
    m0 = b.build()
    assert dqdyn.rnea(m0, [], [], []).shape == (0,)


def test_aba_mimic_message(m):
    """aba on a mimic model must work (or at least not name a function that does not exist)."""
    model = dqdyn.load_urdf(urdf())
    q = np.array([0.3])
    qdd = dqdyn.aba(model, q, [0.0], [0.0])
    tau = dqdyn.rnea(model, q, [0.0], qdd)  # oracle: rnea inverts aba
    np.testing.assert_allclose(tau, 0.0, atol=1e-9)


def test_link_without_inertial_warns_at_load():
    """A moving link without <inertial> whose child turns about the same axis: aba is singular
    (oracle: aba raises SingularError); the load warns first."""
    xml = ('<robot name="r"><link name="a"/><link name="b"/>' + _BODY.format(n="c")
           + '<joint name="j1" type="revolute"><parent link="a"/><child link="b"/>'
             '<axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="1" velocity="1"/></joint>'
             '<joint name="j2" type="revolute"><parent link="b"/><child link="c"/>'
             '<axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="1" velocity="1"/></joint>'
             '</robot>')
    with pytest.warns(UserWarning, match="'b' has no <inertial>.*singular"):
        m = dqdyn.load_urdf(xml)
    from dqdyn.errors import SingularError
    with pytest.raises(SingularError):
        dqdyn.aba(m, np.zeros(2), np.zeros(2), np.zeros(2))
