"""The C call gate (src/dqdyn/_engine/_gate.c): single-state calls of plain float64 vectors go through
it; everything else takes the numba dispatcher / general path.  Both must give the same numbers
and the same errors."""

import gc
import sys

import numpy as np
import pytest

import dqdyn
from dqdyn._engine import gate
from dqdyn._engine.boundary import BAD_SHAPE
from dqdyn.dynamics import aba, coriolis, lagrange, minverse, newton_euler
from dqdyn.errors import ModelError, NonFiniteError, NotUnitError, ShapeError
from dqdyn.kinematics import forward as kinematics
from dqdyn.kinematics import jacobians
from dqdyn.multibody.model import MF_COLS, MI_COLS

MODULES = (newton_euler, lagrange, coriolis, aba, minverse, kinematics, jacobians)

CALLS = {
    "rnea": lambda m, q, v, a: dqdyn.rnea(m, q, v, a),
    "rnea_fext": lambda m, q, v, a: dqdyn.rnea(
        m, q, v, a, np.cos(np.arange(6 * (m.nbodies + 1), dtype=float)).reshape(-1, 6)),
    "nonlinear_effects": lambda m, q, v, a: dqdyn.nonlinear_effects(m, q, v),
    "gravity": lambda m, q, v, a: dqdyn.gravity(m, q),
    "mass_matrix": lambda m, q, v, a: dqdyn.mass_matrix(m, q),
    "coriolis_matrix": lambda m, q, v, a: dqdyn.coriolis_matrix(m, q, v),
    "aba": lambda m, q, v, a: dqdyn.aba(m, q, v, a),
    "mass_matrix_inverse": lambda m, q, v, a: dqdyn.mass_matrix_inverse(m, q),
    "forward_kinematics": lambda m, q, v, a: dqdyn.forward_kinematics(m, q),
    "joint_jacobians": lambda m, q, v, a: dqdyn.joint_jacobians(m, q),
    "twist_jacobian": lambda m, q, v, a: dqdyn.twist_jacobian(m, q, m.nbodies, "spatial"),
    "frame_jacobian": lambda m, q, v, a: dqdyn.twist_jacobian(m, q, m.frame_names[-1], "body"),
    "frame_pose": lambda m, q, v, a: dqdyn.frame_pose(m, q, m.frame_names[-1]),
    "jacobian_time_derivative": lambda m, q, v, a: dqdyn.jacobian_time_derivative(
        m, q, v, m.frame_names[-1], "world_aligned")[1],
    "jacobian_dot_times_v": lambda m, q, v, a: dqdyn.jacobian_dot_times_v(m, q, v, m.frame_names[-1], "spatial"),
}


def test_gate_is_built_and_agrees_with_the_model_tables():
    """CI builds the extension; its idea of the model tables' layout is the model's."""
    from dqdyn._engine import _gate

    assert gate.GATE is _gate.call
    assert (_gate.MI_COLS, _gate.MF_COLS) == (MI_COLS, MF_COLS)


def test_split_views_against_numpy_slicing():
    """``_gate.split``: the parts of one block, or of a batch of blocks, are the views numpy's
    slicing and reshape give (same values, shapes, strides), share the result's memory, keep it
    alive, and come as the requested tuple subclass; bad layouts raise."""
    from typing import NamedTuple

    from dqdyn._engine import _gate

    class Parts(NamedTuple):
        a: np.ndarray
        b: np.ndarray
        c: np.ndarray

    layout = ((2,), (3, 4), (5,))
    one = np.arange(19.0)
    p = _gate.split(one, layout, 1, Parts)
    assert type(p) is Parts and p.c is p[2]
    for got, ref in zip(p, (one[:2], one[2:14].reshape(3, 4), one[14:])):
        assert got.shape == ref.shape and got.strides == ref.strides and np.array_equal(got, ref)
        assert got.base is one and got.flags.writeable and got.flags.c_contiguous == ref.flags.c_contiguous
    p.b[1, 2] = -1.0
    assert one[2 + 6] == -1.0
    batch = np.arange(3 * 19.0).reshape(3, 19)
    parts = _gate.split(batch, layout, 1)
    assert type(parts) is tuple
    for got, ref in zip(parts, (batch[:, :2], batch[:, 2:14].reshape(3, 3, 4), batch[:, 14:])):
        assert got.shape == ref.shape and got.strides == ref.strides and np.array_equal(got, ref)
    # (3 nv, nv) single results and (N, 3 nv, nv) batches of three (nv, nv) matrices
    m3 = np.arange(2 * 12 * 4.0).reshape(2, 12, 4)
    for got, ref in zip(_gate.split(m3, ((4, 4),) * 3, 2), (m3[:, :4], m3[:, 4:8], m3[:, 8:])):
        assert np.array_equal(got, ref) and got.strides == ref.strides
    # the views keep the result alive
    q = _gate.split(np.arange(19.0), layout, 1)
    gc.collect()
    assert q[2][-1] == 18.0
    # a batch of one state is a batch (told apart by the number of dimensions)
    one_b = _gate.split(one[None], layout, 1)
    assert [x.shape for x in one_b] == [(1, 2), (1, 3, 4), (1, 5)]
    for bad in (((20,),), ((2,), (-1,)), ((2, 2, 2, 2),), ()):
        with pytest.raises((ValueError, TypeError)):
            _gate.split(one, bad, 1)
    with pytest.raises(ValueError):
        _gate.split(one, layout, 2)  # (neither one 2-D block nor a batch of them)
    with pytest.raises(TypeError):
        _gate.split(one, layout, 1, list)
    with pytest.raises(ValueError):
        _gate.split(one.astype(np.float32), ((19,),), 1)


#: the public functions that are compiled fronts (gate.fast_front) of their Python function:
#: name -> (call with the front or its Python function f, whether it takes out=)
FRONTS = {
    "rnea": (lambda f, m, q, v, a, **k: f(m, q, v, a, **k), True),
    "aba": (lambda f, m, q, v, a, **k: f(m, q, v, a, **k), True),
    "nonlinear_effects": (lambda f, m, q, v, a, **k: f(m, q, v, **k), True),
    "gravity": (lambda f, m, q, v, a, **k: f(m, q, **k), True),
    "mass_matrix": (lambda f, m, q, v, a, **k: f(m, q, **k), True),
    "coriolis_matrix": (lambda f, m, q, v, a, **k: f(m, q, v, **k), True),
    "mass_matrix_inverse": (lambda f, m, q, v, a, **k: f(m, q, **k), False),
    "forward_kinematics": (lambda f, m, q, v, a, **k: f(m, q, **k), True),
    "joint_jacobians": (lambda f, m, q, v, a, **k: f(m, q, **k), False),
    "twist_jacobian": (lambda f, m, q, v, a, **k: f(m, q, m.frame_names[-1], **k), True),
    "frame_pose": (lambda f, m, q, v, a, **k: f(m, q, m.frame_names[-1], **k), False),
}


def _outcome(call):
    """What a call gives: its result, or its exception's type and message."""
    try:
        return call()
    except Exception as e:  # noqa: BLE001 - compared, not handled
        return type(e), str(e)


def _same(x, y):
    if isinstance(x, np.ndarray):
        return type(y) is np.ndarray and x.shape == y.shape and x.tobytes() == y.tobytes()
    return x == y


@pytest.mark.parametrize("name", sorted(FRONTS))
def test_a_front_looks_like_its_python_function(name):
    """help(), inspect.signature, pickle (Dask sends functions by name), copy, the module's
    name and a class attribute see the public function as the Python function it fronts."""
    import copy
    import inspect
    import pickle
    import pydoc

    from dqdyn._engine import _gate

    f = getattr(dqdyn, name)
    fn = f.__wrapped__
    assert type(f) is _gate.function and inspect.isfunction(fn)
    assert f.__name__ == fn.__name__ == name and f.__qualname__ == name
    assert f.__module__ == fn.__module__ and getattr(sys.modules[f.__module__], name) is f
    assert f.__doc__ == fn.__doc__ and f.__doc__
    assert inspect.signature(f) == inspect.signature(fn)
    assert inspect.isroutine(f) and callable(f)
    text = pydoc.render_doc(f, renderer=pydoc.plaintext)
    assert f"{name}(model" in text and fn.__doc__.strip().splitlines()[0] in text
    assert pickle.loads(pickle.dumps(f)) is f and copy.copy(f) is f and copy.deepcopy(f) is f
    assert repr(f) == repr(fn)

    class Holder:
        g = f

    h = Holder()
    assert h.g.__self__ is h and h.g.__func__ is f and Holder.g is f


@pytest.mark.parametrize("name", sorted(FRONTS))
def test_a_front_returns_what_its_python_function_returns(tree, name):
    """Oracle: the Python function behind the front (``__wrapped__``), which is what a build
    without the gate runs.  Same bits, same returned array for ``out=``, same errors (type and
    message) for every kind of call the front passes on or handles."""
    call, takes_out = FRONTS[name]
    f = getattr(dqdyn, name)
    fn = f.__wrapped__
    rng = np.random.default_rng(12)
    q = dqdyn.random_configuration(tree, seed=rng)
    v, a = rng.normal(size=(2, tree.nv))
    Q = dqdyn.random_configuration(tree, size=3, seed=rng)
    V, A = rng.normal(size=(2, 3, tree.nv))
    nanq = q.copy()
    nanq[0] = np.nan
    cases = [
        lambda g: call(g, tree, q, v, a),
        lambda g: call(g, tree, Q, V, A),  # a small batch (in the gate)
        lambda g: call(g, tree, list(q), list(v), list(a)),  # passed on to the Python function
        lambda g: call(g, tree, q[:-1], v, a),
        lambda g: call(g, tree, nanq, v, a),
        lambda g: call(g, None, q, v, a),
        lambda g: call(g, tree, q, v, a, bogus=1),
        lambda g: call(g, tree, q, v, a, out=None),
    ]
    for case in cases:
        got, want = _outcome(lambda: case(f)), _outcome(lambda: case(fn))
        assert _same(got, want), (got, want)
    if takes_out:
        ref = call(fn, tree, q, v, a)
        o = np.full(ref.shape, np.nan)
        assert call(f, tree, q, v, a, out=o) is o and o.tobytes() == ref.tobytes()
        bad = np.empty(ref.size + 1)
        got, want = (_outcome(lambda g=g: call(g, tree, q, v, a, out=bad)) for g in (f, fn))
        assert got == want and got[0] is ShapeError


@pytest.mark.parametrize("name", ["twist_jacobian", "frame_pose"])
def test_a_named_front_returns_what_its_python_function_returns(name):
    """The fronts that look a frame name up in C (``named``): every way of passing the name and
    the frame — positional, keyword, a name not seen yet, a body index, an unknown or unhashable
    name, a frame that is not one of the three — against the Python function behind it."""
    m = dqdyn.random_tree(7, seed=13)
    f = getattr(dqdyn, name)
    fn = f.__wrapped__
    q = dqdyn.random_configuration(m, seed=2)
    Q = dqdyn.random_configuration(m, size=2, seed=3)
    last, first = m.frame_names[-1], m.frame_names[1]
    cases = [(m, q, last), (m, q, first), (m, Q, last), (m, q, 3), (m, q, "nope"), (m, q, [1]),
             (m, q, np.str_(last)), (m, list(q), last), (m, q[:-1], last), (m, q)]
    kws = [{}]
    if name == "twist_jacobian":
        cases += [(m, q, last, fr) for fr in ("body", "spatial", "world_aligned", "BODY", 0, None)]
        kws += [{"frame": "spatial"}, {"frame": "nope"}, {"frame": "world_aligned", "out": None},
                {"out": np.empty((6, m.nv))}, {"out": np.empty((6, m.nv + 1))}, {"frame": "body", "x": 1}]
    else:
        kws += [{"out": np.empty(8)}, {"frame": "body"}]
    for args in cases:
        for kw in kws:
            if len(args) == 4 and "frame" in kw:
                continue
            # each case twice: the first call of a new name fills the cache the front reads
            for _ in range(2):
                got, want = _outcome(lambda: f(*args, **kw)), _outcome(lambda: fn(*args, **kw))
                assert _same(got, want), (args[2:], kw, got, want)
    if name == "twist_jacobian":
        o = np.full((6, m.nv), np.nan)
        assert f(m, q, last, "spatial", out=o) is o
        assert o.tobytes() == fn(m, q, last, "spatial").tobytes()


def _same_result(x, y):
    """Two constrained-dynamics outcomes: the same five parts to the bit, or the same error."""
    if isinstance(x, tuple) and type(x) is type(y) and hasattr(x, "_fields"):
        return all(_same(a, b) for a, b in zip(x, y))
    return x == y


def test_the_rnea_front_with_fext_returns_what_its_python_function_returns():
    """``rnea(model, q, v, a, fext)`` with a C-contiguous float64 ``fext``, positional or the
    only keyword, is the front's own call (no Python frame of ``rnea`` runs: a profiler sees
    none); every other way of passing wrenches — None, Fortran order, read-only, a list, another
    dtype, the wrong shape, NaN, a batch, with ``out=`` or another keyword — returns what the
    Python function behind it returns (same bits, same error type and message)."""
    m = dqdyn.random_tree(9, seed=11)
    f = dqdyn.rnea
    fn = f.__wrapped__
    rng = np.random.default_rng(21)
    q = dqdyn.random_configuration(m, seed=rng)
    v, a = rng.normal(size=(2, m.nv))
    F = rng.normal(size=(m.nbodies + 1, 6))
    Q = dqdyn.random_configuration(m, size=2, seed=rng)
    ro = F.copy()
    ro.flags.writeable = False
    nan = F.copy()
    nan[2, 1] = np.nan
    for args, kw in [((m, q, v, a, F), {}), ((m, q, v, a), {"fext": F}), ((m, q, v, a, None), {}),
                     ((m, q, v, a), {"fext": None}), ((m, q, v, a, np.asfortranarray(F)), {}),
                     ((m, q, v, a, ro), {}), ((m, q, v, a, F.tolist()), {}),
                     ((m, q, v, a, F.astype(np.float32)), {}), ((m, q, v, a, F[:3]), {}),
                     ((m, q, v, a, F.ravel()), {}), ((m, q, v, a, nan), {}),
                     ((m, Q, Q[:, :m.nv], Q[:, :m.nv], F), {}), ((m, list(q), v, a, F), {}),
                     ((m, q, v, a, F), {"out": np.empty(m.nv)}), ((m, q, v, a), {"fext": F, "x": 1}),
                     ((None, q, v, a, F), {}), ((m, q[:-1], v, a, F), {})]:
        got, want = _outcome(lambda: f(*args, **kw)), _outcome(lambda: fn(*args, **kw))
        assert _same(got, want), (args[4:], kw, got, want)
    seen = []
    sys.setprofile(lambda frame, event, arg: seen.append(1) if frame.f_code is fn.__code__ else None)
    try:
        r1, r2 = f(m, q, v, a, F), f(m, q, v, a, fext=F)
    finally:
        sys.setprofile(None)
    assert not seen and _same(r1, fn(m, q, v, a, F)) and _same(r2, r1)


def test_the_constrained_front_returns_what_its_python_function_returns():
    """constrained_forward_dynamics's front (a layout: the constraint's cached compiled rows,
    split in C into ConstrainedDynamicsResult): every way of calling it against the Python
    function behind it — the first call (layout not cached yet), a small batch, keywords, a
    tuple, two constraints, a constraint used with another model, bad input, an infeasible one."""
    from dqdyn.constraints import UserConstraint, four_bar, mobile_manipulator
    from dqdyn.constraints.dynamics import ConstrainedDynamicsResult

    f = dqdyn.constrained_forward_dynamics
    fn = f.__wrapped__
    assert type(f) is not type(fn) and f.__name__ == fn.__name__
    rng = np.random.default_rng(4)
    for make in (mobile_manipulator, four_bar):
        m, cons, q = make()
        fresh = make()[1]  # (constraints never called yet: no cached layout)
        v, tau = rng.normal(size=(2, m.nv))
        Q = np.stack([q, q])
        V, T = rng.normal(size=(2, 2, m.nv))
        nanq = q.copy()
        nanq[0] = np.nan
        other = dqdyn.random_tree(m.nbodies, seed=1)
        cases = [lambda c: (m, q, v, tau, c), lambda c: (m, Q, V, T, c), lambda c: (m, q, v, tau, tuple(c)),
                 lambda c: (m, q, v, tau, c[0]), lambda c: (m, q, v, tau, c + c), lambda c: (m, nanq, v, tau, c),
                 lambda c: (m, q[:-1], v, tau, c), lambda c: (m, list(q), v, tau, c),
                 lambda c: (other, dqdyn.random_configuration(other, seed=0), np.zeros(other.nv),
                            np.zeros(other.nv), c), lambda c: (None, q, v, tau, c)]
        for kw in ({}, {"baumgarte": (1.0, 2.0)}, {"rcond": 1e-10}, {"dynamics": "gauss"}):
            for case in cases:
                for c in (fresh, cons):
                    got, want = (_outcome(lambda g=g: g(*case(c), **kw)) for g in (f, fn))
                    assert _same_result(got, want), (make.__name__, kw, got, want)
        r = f(m, q, v, tau, cons)
        assert type(r) is ConstrainedDynamicsResult and r.qdd.base is r.A.base  # (views of one result)
    m, cons, q = mobile_manipulator()
    bad = [UserConstraint(A=np.ones((1, m.nv)), b=np.ones(1)), UserConstraint(A=np.ones((1, m.nv)),
                                                                              b=-np.ones(1))]
    got, want = (_outcome(lambda g=g: g(m, q, np.zeros(m.nv), np.zeros(m.nv), bad)) for g in (f, fn))
    assert got == want and got[0] is dqdyn.errors.InfeasibleError


@pytest.mark.parametrize("name", ["rnea_derivatives", "aba_derivatives"])
def test_the_derivative_fronts_return_what_their_python_functions_return(tree, name):
    """The derivatives' fronts (``parts=3``: the gate's (3 nv, nv) result split into three
    views in C) against the Python functions behind them: one state, a small batch, a model
    with a mimic joint (the entry declines it: the Python function's compiled chain rule),
    ``fext`` positional and by keyword, lists, bad shapes, NaN, not a model."""
    f = getattr(dqdyn, name)
    fn = f.__wrapped__
    rng = np.random.default_rng(14)
    models = [tree]
    try:
        models.append(dqdyn.load_example("panda"))  # (its second finger mimics the first)
    except Exception:  # noqa: BLE001 - example-robot-data missing: the random tree only
        pass
    for m in models:
        q = dqdyn.random_configuration(m, seed=rng)
        v, a = rng.normal(size=(2, m.nv))
        Q = dqdyn.random_configuration(m, size=3, seed=rng)
        V, A = rng.normal(size=(2, 3, m.nv))
        F = rng.normal(size=(m.nbodies + 1, 6))
        nanq = q.copy()
        nanq[0] = np.nan
        for args, kw in [((m, q, v, a), {}), ((m, Q, V, A), {}), ((m, q, v, a, F), {}),
                         ((m, q, v, a), {"fext": F}), ((m, q, v, a), {"fext": None}),
                         ((m, list(q), v, a), {}), ((m, q[:-1], v, a), {}), ((m, nanq, v, a), {}),
                         ((None, q, v, a), {}), ((m, q, v), {})]:
            got, want = _outcome(lambda: f(*args, **kw)), _outcome(lambda: fn(*args, **kw))
            if isinstance(want, tuple) and len(want) == 3:
                assert type(got) is tuple and len(got) == 3 and all(_same(x, y) for x, y in zip(got, want))
            else:
                assert got == want, (m.name, kw, got, want)
    d = f(tree, dqdyn.random_configuration(tree, seed=1), np.ones(tree.nv), np.ones(tree.nv))
    assert d[0].base is d[2].base and d[1].shape == (tree.nv, tree.nv)  # (views of one result)


def test_a_front_calls_its_python_function_for_everything_but_the_plain_call(tree):
    """The C side of a front (_gate.c ``function``): exactly the entry's positional arguments,
    with or without ``out=`` (None: no array), and an ndarray from the entry are answered in C;
    anything else — other keywords, other counts, inputs the entry declines, a status code —
    goes to the Python function with the caller's arguments unchanged."""
    from dqdyn._engine import _gate

    calls = []

    def python(*args, **kw):
        calls.append((len(args), sorted(kw)))
        return "python"

    front = _gate.function(kinematics._FK_ENTRY, python, True)
    q = dqdyn.random_configuration(tree, seed=3)
    X = np.empty((tree.nbodies + 1, 8))
    assert type(front(tree, q)) is np.ndarray
    assert front(tree, q, out=X) is X and front(tree, q, out=None).tobytes() == X.tobytes()
    assert calls == []
    nanq = q.copy()
    nanq[0] = np.nan
    for args, kw in [((tree, list(q)), {}), ((tree, q, X), {}), ((tree,), {}), ((tree, q), {"x": 1}),
                     ((tree, q), {"out": X, "x": 1}), ((tree, nanq), {}), ((tree, q[:3]), {})]:
        calls.clear()
        assert front(*args, **kw) == "python" and calls == [(len(args), sorted(kw))]
    # skip: a model whose entry answered that code goes to the Python function; others do not
    from dqdyn.dynamics.articulated import MIMIC

    try:
        mimic = dqdyn.load_example("panda")  # (its second finger mimics the first)
    except Exception:  # noqa: BLE001 - example-robot-data missing
        mimic = None
    if mimic is not None:
        skipping = _gate.function(aba._ABA_ENTRY, python, True, skip=MIMIC)
        qm, vm = dqdyn.random_configuration(mimic, seed=1), np.zeros(mimic.nv)
        v0 = np.zeros(tree.nv)
        for _ in range(2):
            calls.clear()
            assert skipping(mimic, qm, vm, vm) == "python" and calls == [(4, [])]
            calls.clear()
            assert type(skipping(tree, q, v0, v0)) is np.ndarray and calls == []
    no_out = _gate.function(kinematics._FK_ENTRY, python, False)
    calls.clear()
    assert no_out(tree, q, out=X) == "python" and calls == [(2, ["out"])]
    with pytest.raises(TypeError):
        _gate.function(python, python, True)  # not an entry


@pytest.fixture
def no_gate(monkeypatch):
    """Every public function's gate entry replaced by what it is in a build without the gate,
    and every compiled front (gate.fast_front) by its Python function, as that build has it."""
    from dqdyn._engine import _gate

    def off():
        n, fronts = 0, set()
        for mod in MODULES:
            for name in dir(mod):
                if name.endswith("_ENTRY"):
                    monkeypatch.setattr(mod, name, gate.no_gate)
                    n += 1
                f = getattr(mod, name)
                if type(f) is _gate.function:
                    for where in (mod, dqdyn):
                        monkeypatch.setattr(where, name, f.__wrapped__)
                    fronts.add(name)
        assert n == len(CALLS) - 1  # (the two twist_jacobian calls share one entry)
        assert fronts == set(FRONTS)
    return off


def test_an_entry_is_the_gate_call_with_the_model_read_in_c():
    """gate_entry (src/dqdyn/_engine/_gate.c ``entry``): the same bits as ``GATE`` with the tables,
    sizes and workspace passed from Python; anything but a model and the bound number of
    inputs is declined (None: the caller's general path), never read past its inputs."""
    from dqdyn._engine import _gate

    m = dqdyn.random_tree(7, seed=4)
    rng = np.random.default_rng(3)
    q = dqdyn.random_configuration(m, seed=rng)
    v, a = rng.normal(size=(2, m.nv))
    dqdyn.rnea(m, q, v, a)
    dqdyn.forward_kinematics(m, q)
    want = gate.GATE(newton_euler._RNEA_C, m.mi, m.mf, m.nv, -1, q, v, a, m._scratch)
    np.testing.assert_array_equal(newton_euler._RNEA_ENTRY(m, q, v, a), want)
    np.testing.assert_array_equal(
        kinematics._FK_ENTRY(m, q), gate.GATE(kinematics._FK_C, m.mi, m.mf, m.mi.shape[0], 8, q))
    E = newton_euler._RNEA_ENTRY
    assert E(object(), q, v, a) is None  # not a model
    assert E(m, q, v) is None and E(m, q, v, a, a) is None  # not three inputs
    assert E(m, q, v, a=a) is None  # keywords
    assert E(m, list(q), v, a) is None  # not a float64 vector
    assert E(m, q[:-1], v, a) == BAD_SHAPE  # the kernel checked the lengths
    with pytest.raises(ValueError):
        _gate.entry(lambda: 0, _gate.MAX_INPUTS, 1, 1, True)  # one input too many
    with pytest.raises(ValueError):
        _gate.entry(None, 1, 1, 1)
    # the tables of the last model are kept: another model, or a new one where the last one
    # was, is read afresh
    m2 = dqdyn.random_tree(4, seed=9)
    q2 = dqdyn.random_configuration(m2, seed=rng)
    v2, a2 = rng.normal(size=(2, m2.nv))
    want2 = dqdyn.rnea(m2, list(q2), list(v2), list(a2))
    for _ in range(2):
        np.testing.assert_array_equal(E(m, q, v, a), want)
        np.testing.assert_array_equal(E(m2, q2, v2, a2), want2)
    del m2
    gc.collect()
    for seed in range(5):
        m3 = dqdyn.random_tree(4, seed=seed)
        q3 = dqdyn.random_configuration(m3, seed=rng)
        v3, a3 = rng.normal(size=(2, m3.nv))
        np.testing.assert_array_equal(E(m3, q3, v3, a3), dqdyn.rnea(m3, list(q3), list(v3), list(a3)))
        del m3
        gc.collect()
    # the model of the last call is gone: its dead reference (None before Python 3.13) is no
    # match for a call with model None, which is declined, and the public call names the model
    assert E(None, q3, v3, a3) is None
    with pytest.raises(ModelError, match="model must be a dqdyn.Model"):
        dqdyn.rnea(None, q3, v3, a3)
    calls = []
    lazy = _gate.entry(lambda: calls.append(1) or kinematics._FK_C, 1, gate.NB1, 8)
    assert calls == []  # the kernel is looked up on the first call only
    np.testing.assert_array_equal(lazy(m, q), kinematics._FK_ENTRY(m, q))
    lazy(m, q)
    assert calls == [1]


@pytest.fixture(scope="module")
def tree():
    return dqdyn.random_tree(9, seed=11)  # every joint type


@pytest.mark.parametrize("name", sorted(CALLS))
def test_gate_equals_dispatcher_path(tree, no_gate, name):
    f = CALLS[name]
    rng = np.random.default_rng(5)
    states = [(dqdyn.random_configuration(tree, seed=rng), rng.normal(size=tree.nv),
               rng.normal(size=tree.nv)) for _ in range(3)]
    gated = [f(tree, *s) for s in states]
    no_gate()
    for s, g in zip(states, gated):
        np.testing.assert_allclose(g, f(tree, *s), rtol=1e-13, atol=1e-13)


@pytest.mark.parametrize("name", sorted(CALLS))
def test_results_are_fresh_arrays(tree, name):
    """The model's scratch is reused between calls; the results never are."""
    f = CALLS[name]
    rng = np.random.default_rng(6)
    s1 = (dqdyn.random_configuration(tree, seed=rng), rng.normal(size=tree.nv), rng.normal(size=tree.nv))
    s2 = (dqdyn.random_configuration(tree, seed=rng), rng.normal(size=tree.nv), rng.normal(size=tree.nv))
    r1 = f(tree, *s1)
    keep = r1.copy()
    r2 = f(tree, *s2)
    assert r1 is not r2 and not np.shares_memory(r1, r2)
    np.testing.assert_array_equal(r1, keep)
    assert not np.shares_memory(r1, tree._scratch)


@pytest.mark.parametrize("name", ["rnea", "gravity", "mass_matrix", "aba", "coriolis_matrix"])
def test_other_inputs_take_the_general_path(tree, name):
    """Lists, float32, strided views and ndarray subclasses are not gated: same numbers."""
    f = CALLS[name]
    rng = np.random.default_rng(7)
    q = dqdyn.random_configuration(tree, seed=rng)
    v, a = rng.normal(size=(2, tree.nv))
    want = f(tree, q, v, a)
    np.testing.assert_allclose(f(tree, list(q), list(v), list(a)), want, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(f(tree, np.repeat(q, 2)[::2], v, a), want, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(f(tree, q.view(np.matrix).A1, v, a), want, rtol=1e-12, atol=1e-12)
    got32 = f(tree, q.astype(np.float32).astype(np.float64), v, a)
    assert got32.shape == want.shape


@pytest.mark.parametrize("name", sorted(CALLS))
def test_small_batches_through_the_gate(tree, name):
    """A small batch of (N, n) arrays runs state by state in the gate: the same bits as a loop
    of single calls and as the batch kernels (reached here through lists); 1-D inputs are
    shared by every state; a batch too large for one thread is left to the batch kernels."""
    from dqdyn._engine import _gate
    from dqdyn._engine.batching import SERIAL_WORK

    assert _gate.SERIAL_WORK == SERIAL_WORK
    f = CALLS[name]
    rng = np.random.default_rng(8)
    N = 4
    Q = dqdyn.random_configuration(tree, size=N, seed=rng)
    V, A = rng.normal(size=(2, N, tree.nv))
    got = f(tree, Q, V, A)
    loop = np.stack([f(tree, Q[i], V[i], A[i]) for i in range(N)])
    assert got.shape == loop.shape and got.flags.c_contiguous
    np.testing.assert_array_equal(got, loop)
    np.testing.assert_array_equal(got, f(tree, Q.tolist(), V.tolist(), A.tolist()))
    if name in ("rnea", "nonlinear_effects", "coriolis_matrix", "aba"):
        shared = f(tree, Q[1], V, A)  # one configuration, N velocities
        np.testing.assert_array_equal(shared, np.stack([f(tree, Q[1], V[i], A[i]) for i in range(N)]))
    big = 1 + SERIAL_WORK // tree.mi.shape[0]
    Qb = np.repeat(Q[:1], big, axis=0)
    Vb, Ab = np.repeat(V[:1], big, axis=0), np.repeat(A[:1], big, axis=0)
    np.testing.assert_array_equal(f(tree, Qb, Vb, Ab)[-1], got[0])


def test_small_batch_errors_name_the_row():
    """A failing state in a gated batch: the general path reports its row."""
    m = dqdyn.random_tree(6, seed=2, joint_types=("revolute", "spherical"))
    rng = np.random.default_rng(1)
    Q = dqdyn.random_configuration(m, size=3, seed=rng)
    V, A = rng.normal(size=(2, 3, m.nv))
    Q[2, 0] = np.nan
    with pytest.raises(NonFiniteError, match="2"):
        dqdyn.rnea(m, Q, V, A)
    with pytest.raises(ShapeError):
        dqdyn.rnea(m, Q[:, :-1], V, A)
    with pytest.raises(ShapeError):
        dqdyn.rnea(m, Q[:2], V, A)  # 2 states against 3


def test_errors_through_the_gate():
    m = dqdyn.random_tree(8, seed=0, joint_types=("revolute", "spherical", "free"))
    rng = np.random.default_rng(0)
    q = dqdyn.random_configuration(m, seed=rng)
    v, a = rng.normal(size=(2, m.nv))
    bad = q.copy()
    bad[1] = np.nan
    for f in CALLS.values():
        with pytest.raises(NonFiniteError, match="q"):
            f(m, bad, v, a)
        with pytest.raises(ShapeError):
            f(m, q[:-1], v, a)
    with pytest.raises(NonFiniteError, match="v"):
        dqdyn.rnea(m, q, np.full(m.nv, np.inf), a)
    with pytest.raises(NonFiniteError, match="a"):
        dqdyn.rnea(m, q, v, np.full(m.nv, np.nan))
    with pytest.raises(NonFiniteError, match="tau"):
        dqdyn.aba(m, q, v, np.full(m.nv, np.nan))
    with pytest.raises(ShapeError):
        dqdyn.rnea(m, q, v, a[:0])  # an empty a is not a zero acceleration
    with pytest.raises(ShapeError):
        dqdyn.aba(m, q, v[:-1], a)
    i = int(np.flatnonzero(m.joint_type == dqdyn.multibody.joints.SPHERICAL)[0])
    off = q.copy()
    off[m.idx_q[i]] *= 1.5
    for f in CALLS.values():
        with pytest.raises(NotUnitError, match=m.joint_names_all[i]):
            f(m, off, v, a)


def test_a_model_without_dof_keeps_the_result_shapes(tmp_path):
    """nv = 0: matrices stay (0, 0) / (6, 0), vectors (0,) (the gate's 1-D / 2-D switch)."""
    inertial = ('<inertial><mass value="1"/><inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" '
                'iyz="0"/></inertial>')
    p = tmp_path / "rigid.urdf"
    p.write_text(f'<robot name="r"><link name="a">{inertial}</link><link name="b">{inertial}'
                 '</link><joint name="j" type="fixed"><parent link="a"/><child link="b"/></joint>'
                 '</robot>')
    m = dqdyn.load_urdf(str(p))
    assert m.nv == 0
    z = np.zeros(0)
    assert dqdyn.rnea(m, z, z, z).shape == (0,)
    assert dqdyn.gravity(m, z).shape == (0,)
    assert dqdyn.nonlinear_effects(m, z, z).shape == (0,)
    assert dqdyn.mass_matrix(m, z).shape == (0, 0)
    assert dqdyn.coriolis_matrix(m, z, z).shape == (0, 0)
    assert dqdyn.joint_jacobians(m, z).shape == (6, 0)
    assert dqdyn.forward_kinematics(m, z).shape == (1, 8)


def test_forward_kinematics_into_out_through_the_gate(tree):
    """``out=``: the gate writes one state's poses into the caller's array (nothing allocated) and
    returns it; a batch, an ``out`` sharing memory with ``q`` or a bad ``out`` take the general
    path, which checks ``out`` and gives the same bits."""
    rng = np.random.default_rng(8)
    q = dqdyn.random_configuration(tree, seed=rng)
    ref = dqdyn.forward_kinematics(tree, q)
    X = np.full((tree.nbodies + 1, 8), np.nan)
    assert kinematics._FK_ENTRY(tree, q, X) is X  # the C gate itself took it
    X[:] = np.nan
    assert dqdyn.forward_kinematics(tree, q, out=X) is X
    np.testing.assert_array_equal(X, ref)
    Q = dqdyn.random_configuration(tree, size=4, seed=rng)
    XB = np.empty((4, tree.nbodies + 1, 8))
    assert dqdyn.forward_kinematics(tree, Q, out=XB) is XB
    np.testing.assert_array_equal(XB, dqdyn.forward_kinematics(tree, Q))
    # q inside out's memory: the gate declines (a kernel reads q while writing), the result is right
    buf = np.zeros((tree.nbodies + 1) * 8)
    buf[: tree.nq] = q
    Xo = buf.reshape(tree.nbodies + 1, 8)
    assert kinematics._FK_ENTRY(tree, buf[: tree.nq], Xo) is None
    assert dqdyn.forward_kinematics(tree, buf[: tree.nq], out=Xo) is Xo
    np.testing.assert_array_equal(Xo, ref)
    for bad in (np.empty((tree.nbodies, 8)), np.empty((tree.nbodies + 1, 8), np.float32),
                np.empty((8, tree.nbodies + 1)).T, np.empty((tree.nbodies + 1, 8))[None][:, :, ::1][0][::-1]):
        assert kinematics._FK_ENTRY(tree, q, bad) is None
        with pytest.raises(ShapeError, match="out must be"):
            dqdyn.forward_kinematics(tree, q, out=bad)


def test_twist_jacobian_into_out_through_the_gate(tree):
    """``twist_jacobian(..., out=)`` as ``forward_kinematics``: the gate fills ``out`` (every
    entry: ``out`` starts as NaN) for one state, the general path for a batch or a bad ``out``."""
    rng = np.random.default_rng(9)
    q = dqdyn.random_configuration(tree, seed=rng)
    name = tree.frame_names[-1]
    for frame in ("body", "spatial", "world_aligned"):
        ref = dqdyn.twist_jacobian(tree, q, name, frame)
        J = np.full((6, tree.nv), np.nan)
        assert dqdyn.twist_jacobian(tree, q, name, frame, out=J) is J
        np.testing.assert_array_equal(J, ref)
    Q = dqdyn.random_configuration(tree, size=3, seed=rng)
    JB = np.full((3, 6, tree.nv), np.nan)
    assert dqdyn.twist_jacobian(tree, Q, name, out=JB) is JB
    np.testing.assert_array_equal(JB, dqdyn.twist_jacobian(tree, Q, name))
    with pytest.raises(ShapeError, match="out must be"):
        dqdyn.twist_jacobian(tree, q, name, out=np.empty((6, tree.nv + 1)))


OUT_CALLS = {  # name: (call with out, the result's shape)
    "rnea": (lambda m, q, v, a, o: dqdyn.rnea(m, q, v, a, out=o), lambda m: (m.nv,)),
    "nonlinear_effects": (lambda m, q, v, a, o: dqdyn.nonlinear_effects(m, q, v, out=o), lambda m: (m.nv,)),
    "gravity": (lambda m, q, v, a, o: dqdyn.gravity(m, q, out=o), lambda m: (m.nv,)),
    "mass_matrix": (lambda m, q, v, a, o: dqdyn.mass_matrix(m, q, out=o), lambda m: (m.nv, m.nv)),
    "coriolis_matrix": (lambda m, q, v, a, o: dqdyn.coriolis_matrix(m, q, v, out=o), lambda m: (m.nv, m.nv)),
    "aba": (lambda m, q, v, a, o: dqdyn.aba(m, q, v, a, out=o), lambda m: (m.nv,)),
}


@pytest.mark.parametrize("name", sorted(OUT_CALLS))
def test_out_of_one_state_goes_through_the_gate(tree, name, monkeypatch):
    """``out=`` for one state: written by the gate (numba's dispatcher path made unreachable
    here), the allocating call's bits, ``out`` returned; a batch with ``out`` as before."""
    f, shape = OUT_CALLS[name]
    rng = np.random.default_rng(10)
    q = dqdyn.random_configuration(tree, seed=rng)
    v, a = rng.normal(size=(2, tree.nv))
    ref = CALLS[name](tree, q, v, a)
    def dispatcher(*args):
        raise AssertionError("out= of one state took numba's dispatcher, not the gate")

    for mod in MODULES:  # the single-state dispatcher entries: any use of them fails the test
        for attr in ("_RNEA", "_NLE", "_GRAVITY", "_CRBA", "_CORIOLIS", "_ABA"):
            if hasattr(mod, attr):
                monkeypatch.setattr(mod, attr, dispatcher)
    o = np.full(shape(tree), np.nan)
    assert f(tree, q, v, a, o) is o
    np.testing.assert_array_equal(o, ref)
    monkeypatch.undo()
    Q = dqdyn.random_configuration(tree, size=3, seed=rng)
    V, A = rng.normal(size=(2, 3, tree.nv))
    OB = np.full((3,) + shape(tree), np.nan)
    r = f(tree, Q, V, A, OB)  # (a view of OB, as before)
    assert np.shares_memory(r, OB)
    np.testing.assert_array_equal(OB, CALLS[name](tree, Q, V, A))


_INT_CALLS = [
    "dqdyn.forward_kinematics(m, m.nq)", "dqdyn.twist_jacobian(m, m.nq, m.frame_names[-1])",
    "dqdyn.frame_pose(m, m.nq, m.frame_names[-1])", "dqdyn.joint_jacobians(m, m.nq)",
    "dqdyn.jacobian_time_derivative(m, m.nq, v, m.frame_names[-1])",
    "dqdyn.jacobian_dot_times_v(m, q, m.nv, m.frame_names[-1])",
    "dqdyn.rnea(m, m.nq, m.nv, m.nv)", "dqdyn.rnea(m, q, v, m.nv)", "dqdyn.rnea(m, q, v, a, m.nbodies + 1)",
    "dqdyn.aba(m, q, v, m.nv)", "dqdyn.mass_matrix(m, m.nq)", "dqdyn.gravity(m, m.nq)",
    "dqdyn.coriolis_matrix(m, q, m.nv)", "dqdyn.nonlinear_effects(m, q, m.nv)",
    "dqdyn.mass_matrix_inverse(m, m.nq)", "dqdyn.rnea_derivatives(m, q, v, m.nv)",
    "dqdyn.aba_derivatives(m, q, v, m.nv)",
    "dqdyn.constrained_forward_dynamics(m, q, v, m.nv, [JointCoupling(m.joint_names[1], m.joint_names[2], 0.5)])",
]


def test_an_int_where_an_array_belongs_is_a_named_error_not_a_crash():
    """The call gate passes a Python int to its kernel as a length with no buffer (for a body
    index or a frame code); a state argument given as the int equal to its length (``q =
    model.nq``) was read as an array at address NULL: the process died (SIGSEGV) in every gated
    function.  Now only the inputs an entry declares take ints; the rest decline and the Python
    path names the argument.  Run in a child process, so a crash fails this test, not the run."""
    import subprocess

    prog = "\n".join([
        "import numpy as np, dqdyn",
        "from dqdyn.constraints import JointCoupling",
        "m = dqdyn.serial_chain(6)",
        "q, v, a = np.zeros(m.nq), np.zeros(m.nv), np.zeros(m.nv)",
        f"for call in {_INT_CALLS!r}:",
        "    try:",
        "        eval(call)",
        "        print('returned', call)",
        "    except dqdyn.errors.ShapeError as e:",
        "        print('ShapeError', call)",
    ])
    p = subprocess.run([sys.executable, "-c", prog], capture_output=True, text=True)
    assert p.returncode == 0, (p.returncode, p.stdout[-2000:], p.stderr[-2000:])
    lines = p.stdout.splitlines()
    assert lines == [f"ShapeError {c}" for c in _INT_CALLS], p.stdout


def test_a_raw_gate_call_declines_ints_and_an_entry_takes_them_where_declared():
    """``_gate.call`` takes no int inputs (None: the caller's general path); an entry takes them
    only at the positions of its ``ints`` mask (the frame Jacobian's body and frame code)."""
    m = dqdyn.serial_chain(3)
    q = np.zeros(m.nq)
    addr = kinematics._FK_C or gate.gate_address(vars(kinematics), "_FK_C", kinematics._c_fk)
    assert type(gate.GATE(addr, m.mi, m.mf, m.nbodies + 1, 8, q)) is np.ndarray
    assert gate.GATE(addr, m.mi, m.mf, m.nbodies + 1, 8, m.nq) is None
    body, pl = kinematics._resolve_frame(m, m.nbodies)
    J = jacobians._JACOBIAN_ENTRY(m, q, pl, body, 0)
    assert type(J) is np.ndarray and np.array_equal(J, dqdyn.twist_jacobian(m, q, m.nbodies))
    assert jacobians._JACOBIAN_ENTRY(m, m.nq, pl, body, 0) is None  # (q as an int: declined)
    with pytest.raises(ValueError, match="mask"):
        gate._ENTRY(lambda: 0, 1, 6, -1, False, 1 << 1)  # (an int input beyond the inputs)


def test_jacobian_time_derivative_through_the_gate_is_the_batched_kernels():
    """``jacobian_time_derivative`` of one state or a small batch runs one gate call (its two
    6 × nv parts split in C); oracle: the batched kernel, which a list input takes (the gate
    declines lists), bit for bit — on trees with every joint type, three frame conventions, a
    frame on a leaf, one inside the tree and the world.  Values against Pinocchio:
    tests/kinematics/test_kinematics_tree.py.  Bad input still names itself."""
    for m in [dqdyn.random_tree(14, seed=s) for s in range(2)] + [dqdyn.serial_chain(7)]:
        rng = np.random.default_rng(0)
        Q = dqdyn.random_configuration(m, size=4, seed=1)
        V = rng.normal(size=(4, m.nv))
        for frame in ("body", "spatial", "world_aligned"):
            for name in (m.nbodies, 3, 0):
                one = dqdyn.jacobian_time_derivative(m, Q[2], V[2], name, frame)
                small = dqdyn.jacobian_time_derivative(m, Q, V, name, frame)
                ref = dqdyn.jacobian_time_derivative(m, Q.tolist(), V.tolist(), name, frame)
                assert isinstance(one, tuple) and len(one) == 2
                for x, y, z in zip(one, small, ref):
                    assert x.shape == (6, m.nv) and y.shape == (4, 6, m.nv)
                    assert np.array_equal(x, z[2]) and np.array_equal(y, z), (frame, name)
    q = Q[0].copy()
    q[0] = np.nan
    with pytest.raises(NonFiniteError):
        dqdyn.jacobian_time_derivative(m, q, V[0], m.nbodies)
    with pytest.raises(NonFiniteError):
        dqdyn.jacobian_time_derivative(m, Q, np.where(np.arange(m.nv) == 1, np.inf, V), m.nbodies)
    with pytest.raises(ShapeError):
        dqdyn.jacobian_time_derivative(m, Q[0], V[0, :-1], m.nbodies)
