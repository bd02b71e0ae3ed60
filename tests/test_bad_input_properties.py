"""Property-based bad input: random malformed input from each class — shapes, dtypes,
non-finite values, wrong names, wrong types — fed to the public API.  The property: a call
either raises a :mod:`dqdyn.errors` exception or returns a finite result; never NaN, never a
foreign exception, never a crash.  Oracle for accepted inputs: finiteness, and for ``integrate``
the closed form ``q + v dt`` of revolute chains."""

from __future__ import annotations

import math

import numpy as np
import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from hypothesis.extra import numpy as hnp  # noqa: E402

import dqdyn  # noqa: E402
from dqdyn.errors import DqdynError  # noqa: E402

SETTINGS = settings(max_examples=40, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])
M = dqdyn.serial_chain(3)
NQ = NV = 3

floats_any = st.floats(allow_nan=True, allow_infinity=True, width=64)
finite = st.floats(-10, 10)


def outcome(fn, *args, **kw):
    """``"error"`` for a dqdyn error, else the result (asserted finite); anything else fails."""
    try:
        r = fn(*args, **kw)
    except DqdynError:
        return "error"
    arrays = r if isinstance(r, tuple) else (r,)
    for a in arrays:
        a = np.asarray(a)
        if a.dtype.kind in "fc":
            assert np.all(np.isfinite(a)), f"{fn.__name__} returned non-finite values"
    return r


# --------------------------------------------------------------------------------- shapes
shapes = hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=5)


@SETTINGS
@given(q=hnp.arrays(np.float64, shapes, elements=finite), which=st.sampled_from(["q", "v", "a"]))
def test_shapes(q, which):
    args = {"q": np.zeros(NQ), "v": np.zeros(NV), "a": np.zeros(NV)}
    args[which] = q
    for fn in (dqdyn.rnea, dqdyn.aba):
        r = outcome(fn, M, args["q"], args["v"], args["a"])
        ok_shape = q.ndim >= 1 and q.shape[-1] == 3  # (an empty batch is a valid batch)
        if not ok_shape:
            assert r == "error", f"{fn.__name__}: {which} of shape {q.shape} accepted"
    if which == "q":
        r = outcome(dqdyn.mass_matrix, M, q)
        outcome(dqdyn.forward_kinematics, M, q)
        outcome(dqdyn.integrate, M, q, np.zeros(NV), 0.1)


# ----------------------------------------------------------------------------- non-finite
@SETTINGS
@given(bad=st.sampled_from([np.nan, np.inf, -np.inf]), pos=st.integers(0, 2),
       which=st.sampled_from(["q", "v", "a", "fext"]), batched=st.booleans())
def test_non_finite(bad, pos, which, batched):
    shape = (2,) if batched else ()
    args = {"q": np.zeros(shape + (NQ,)), "v": np.ones(shape + (NV,)), "a": np.ones(shape + (NV,))}
    fext = None
    if which == "fext":
        fext = np.zeros(shape + (M.nbodies + 1, 6))
        fext[..., 1 + pos % M.nbodies, pos] = bad
    else:
        args[which][..., pos] = bad
    for fn in (dqdyn.rnea, dqdyn.aba, dqdyn.rnea_derivatives, dqdyn.aba_derivatives):
        assert outcome(fn, M, args["q"], args["v"], args["a"], fext=fext) == "error", fn.__name__
    if which in ("q", "v"):
        assert outcome(dqdyn.integrate, M, args["q"], args["v"], 0.01) == "error"


@SETTINGS
@given(g=st.lists(floats_any, min_size=0, max_size=4))
def test_gravity_vectors(g):
    r = outcome(dqdyn.serial_chain, 2, gravity=g)
    if r != "error":
        assert len(g) == 3 and all(math.isfinite(x) for x in g)


@SETTINGS
@given(dt=st.one_of(floats_any, st.integers(-10**6, 10**6), st.text(max_size=3), st.none(),
                    st.lists(finite, max_size=2), st.complex_numbers(max_magnitude=1)))
def test_integrate_dt(dt):
    q, v = np.zeros(NQ), np.full(NV, 0.5)
    r = outcome(dqdyn.integrate, M, q, v, dt)
    if not isinstance(r, str):  # oracle: revolute chain, q ⊕ v dt = q + v dt
        np.testing.assert_allclose(r, q + v * float(dt))


# -------------------------------------------------------------------------- wrong names
@SETTINGS
@given(name=st.one_of(st.text(max_size=6), st.integers(-3, 10), st.lists(st.text(max_size=2), max_size=2),
                      st.none(), st.floats(allow_nan=True)))
def test_frame_names(name):
    outcome(dqdyn.frame_pose, M, np.zeros(NQ), name)


# -------------------------------------------------------------------------- wrong types
wrong_models = st.one_of(st.none(), st.text(max_size=5), st.integers(), st.just([1, 2, 3]),
                         st.just(np.zeros(3)))


@SETTINGS
@given(model=wrong_models)
def test_model_argument(model):
    for fn, args in ((dqdyn.rnea, (np.zeros(NQ), np.zeros(NV), np.zeros(NV))),
                     (dqdyn.mass_matrix, (np.zeros(NQ),))):
        assert outcome(fn, model, *args) == "error"


@SETTINGS
@given(c=st.one_of(st.integers(), st.text(max_size=3), st.floats(), st.just(object())))
def test_constraints_argument(c):
    assert outcome(dqdyn.constrained_forward_dynamics, M, np.zeros(NQ), np.zeros(NV),
                   np.zeros(NV), c) == "error"


@SETTINGS
@given(A=hnp.arrays(np.float64, st.tuples(st.integers(1, 2), st.just(NV)), elements=floats_any))
def test_user_constraint_values(A):
    from dqdyn.constraints import UserConstraint

    def build_and_solve():
        c = UserConstraint(A=A)
        return dqdyn.constrained_forward_dynamics(M, np.zeros(NQ), np.ones(NV), np.zeros(NV), c).qdd

    outcome(build_and_solve)


# ------------------------------------------------------------------------------ dtypes
@SETTINGS
@given(kind=st.sampled_from(["complex", "numeric-str", "text"]), which=st.sampled_from(["q", "v"]))
def test_dtypes(kind, which):
    x = {"complex": np.zeros(3) + 1j, "numeric-str": np.array(["0", "1", "2"]),
         "text": np.array(["a", "b", "c"])}[kind]
    args = {"q": np.zeros(NQ), "v": np.zeros(NV)}
    args[which] = x
    assert outcome(dqdyn.rnea, M, args["q"], args["v"], np.zeros(NV)) == "error"


# ------------------------------------------------------------------- every entry point
# (function, argument kinds after the model); "q" a configuration, "v" a velocity-sized vector,
# "frame" a frame name.  Each is fed one bad argument at a time, of every class above.
ENTRY_POINTS = [
    (dqdyn.rnea, "qvv"), (dqdyn.aba, "qvv"), (dqdyn.gravity, "q"),
    (dqdyn.nonlinear_effects, "qv"), (dqdyn.mass_matrix, "q"), (dqdyn.coriolis_matrix, "qv"),
    (dqdyn.mass_matrix_inverse, "q"), (dqdyn.solve_mass_matrix, "qv"),
    (dqdyn.rnea_derivatives, "qvv"), (dqdyn.aba_derivatives, "qvv"),
    (dqdyn.forward_kinematics, "q"), (dqdyn.body_twists, "qv"), (dqdyn.frame_pose, "qf"),
    (dqdyn.twist_jacobian, "qf"), (dqdyn.jacobian_dot_times_v, "qvf"),
    (dqdyn.integrate, "qv"), (dqdyn.difference, "qq"), (dqdyn.normalize_configuration, "q"),
    (dqdyn.kinetic_energy, "qv"), (dqdyn.potential_energy, "q"), (dqdyn.mechanical_energy, "qv"),
    (dqdyn.center_of_mass, "q"), (dqdyn.joint_torque_regressor, "qvv"),
    (dqdyn.constrained_forward_dynamics, "qvv"), (dqdyn.newton_euler, "qvv"),
]
GOOD = {"q": lambda: np.full(NQ, 0.3), "v": lambda: np.full(NV, 0.2), "f": lambda: "link3"}


def _bad(kind):
    return {"short": np.zeros(NQ - 1), "long": np.zeros((2, NQ + 2)), "scalar": np.float64(1.0),
            "nan": np.array([0.1, np.nan, 0.2]), "inf": np.array([np.inf, 0.0, 0.0]),
            "complex": np.array([0.1, 0.2j, 0.3]), "strings": np.array(["0", "1", "2"]),
            "none": None, "object": object(), "ragged": [[0.0, 1.0], [2.0]],
            "dict": {"q": 1}}[kind]


@SETTINGS
@given(entry=st.sampled_from(ENTRY_POINTS), pos=st.integers(0, 2),
       kind=st.sampled_from(["short", "long", "scalar", "nan", "inf", "complex", "strings", "none",
                             "object", "ragged", "dict"]))
def test_every_entry_point(entry, pos, kind):
    fn, kinds = entry
    args = [GOOD[k]() for k in kinds]
    pos %= len(kinds)
    if kinds[pos] == "f" and kind in ("nan", "inf", "short", "long", "complex", "strings"):
        kind = "object"  # (arrays as frame names: covered by test_frame_names)
    args[pos] = _bad(kind)
    assert outcome(fn, M, *args) == "error", (fn.__name__, kinds[pos], kind)
    outcome(fn, M, *[GOOD[k]() for k in kinds])  # the good call: finite


@SETTINGS
@given(dt=st.one_of(st.text(max_size=3), st.none(), st.just(np.nan), st.just(-1e-3),
                    st.just([1e-3]), st.just(1e-3 + 1j)),
       what=st.sampled_from(["dt", "duration", "integrator", "record_every"]))
def test_simulate_arguments(dt, what):
    from dqdyn.simulation import simulate

    kw = {"duration": 0.01, "dt": 1e-3, what: dt}
    r = outcome(simulate, M, np.zeros(NQ), np.zeros(NV), None, **kw)
    assert r == "error", (what, dt)
