"""Each input of a public dynamics call is converted once where the call enters the library.

The converters of the boundary (``as_vector_batch``, ``as_vector``, ``real_array``, the ``fext``
converters, ``kernel_rows``) are wrapped in the modules that call them and counted per input
name for one public call; the public fronts are wrapped too, so that a front calling another one
(``aba`` → ``nonlinear_effects`` → ``solve_mass_matrix`` on a model with mimic joints, ``aba``
calling itself on converted lists) is seen.  A call that converts an input twice, or converts
rows that are already kernel rows again, fails here.

The results these calls give are checked against Pinocchio (``rnea``, ``aba``), against the
identities ABA∘RNEA = id and M M⁻¹ b = b (models with mimic joints, which Pinocchio's bridge does
not take), and the general paths (lists, batches) against the single-state fast path bit for bit.
"""

from __future__ import annotations

import collections

import numpy as np
import pytest

import dqdyn
from dqdyn.dynamics import aba, articulated, coriolis, hybrid, lagrange, minverse, newton_euler

MODULES = (aba, newton_euler, lagrange, hybrid, minverse, coriolis, articulated)
#: converter → position of the input's name among its arguments
CONVERTERS = {"as_vector_batch": 2, "as_vector": 2, "real_array": 1}
FEXT_CONVERTERS = ("fext_in", "_fext_in")  # (model, fext[, ...]): converts fext unless None
FRONTS = {
    aba: ("aba",),
    newton_euler: ("rnea", "newton_euler"),
    lagrange: ("nonlinear_effects", "mass_matrix", "gravity", "solve_mass_matrix",
               "solve_mass_matrix_columns"),
    hybrid: ("hybrid_dynamics",),
    minverse: ("mass_matrix_inverse",),
    coriolis: ("coriolis_matrix",),
}


def _mimic_chain():
    """Three revolute links, the third a mimic of the first (as Panda's fingers)."""
    b = dqdyn.ModelBuilder("mimic3")
    I3 = 0.01 * np.eye(3)
    b.add_body("a", joint="revolute", mass=1.0, inertia=I3, joint_name="ja", axis=[0, 0, 1],
               com=[0.1, 0, 0])
    b.add_body("b", "a", "revolute", mass=1.0, inertia=I3, axis=[0, 1, 0], com=[0.1, 0, 0])
    b.add_body("c", "b", "revolute", mass=1.0, inertia=I3, axis=[0, 1, 0], com=[0.1, 0, 0],
               mimic=("ja", 0.5, 0.1))
    return b.build()


MODELS = {
    "ur5": lambda: dqdyn.load_example("ur5"),  # a fixed-base arm
    "anymal": lambda: dqdyn.load_example("anymal"),  # a floating base (free joint)
    "mimic": _mimic_chain,
}


@pytest.fixture(scope="module", params=list(MODELS))
def model(request):
    return MODELS[request.param]()


class Counts:
    """What the wrapped converters and fronts saw while ``on``."""

    def __init__(self):
        self.on = False
        self.depth = 0  # (a converter called by another one is part of that conversion)
        self.seen = collections.Counter()

    def record(self, key):
        if self.on and self.depth == 0 and key is not None:
            self.seen[key] += 1


def _converted(x, result) -> bool:
    """Whether a converter made new memory for ``x`` (a list, another dtype, a copy), rather
    than checking an array of float64 and returning it or a view of it."""
    r = result[0] if isinstance(result, tuple) else result
    return not (isinstance(x, np.ndarray) and x.dtype == np.float64 and np.may_share_memory(x, r))


@pytest.fixture
def counts(monkeypatch):
    c = Counts()

    def wrap(mod, attr, key, arg=None):
        f = getattr(mod, attr)

        def counted(*args, **kw):
            c.depth += 1
            try:
                r = f(*args, **kw)
            finally:
                c.depth -= 1
            k = key(args)
            c.record(k)
            if k is not None and arg is not None and _converted(args[arg], r):
                c.record(("converted", k[1]))
            return r

        monkeypatch.setattr(mod, attr, counted)

    for mod in MODULES:
        names = vars(mod)
        for attr, k in CONVERTERS.items():
            if attr in names:
                wrap(mod, attr, lambda a, k=k: ("checked", a[k]), 0)
        for attr in FEXT_CONVERTERS:
            if attr in names:
                wrap(mod, attr, lambda a: ("checked", "fext") if a[1] is not None else None, 1)
        if "kernel_rows" in names:
            wrap(mod, "kernel_rows", lambda a: ("kernel_rows again",))
        for attr in FRONTS.get(mod, ()):
            wrap(mod, attr, lambda a, attr=attr: ("public front re-entered", attr))
    return c


def _calls(m):
    presc = np.arange(m.nv) % 2 == 0
    out = {
        "aba": lambda q, v, a, f: dqdyn.aba(m, q, v, a),
        "aba_fext": lambda q, v, a, f: dqdyn.aba(m, q, v, a, f),
        "rnea": lambda q, v, a, f: dqdyn.rnea(m, q, v, a),
        "rnea_fext": lambda q, v, a, f: dqdyn.rnea(m, q, v, a, f),
        "mass_matrix": lambda q, v, a, f: dqdyn.mass_matrix(m, q),
        "nonlinear_effects": lambda q, v, a, f: dqdyn.nonlinear_effects(m, q, v),
        "solve_mass_matrix": lambda q, v, a, f: dqdyn.solve_mass_matrix(m, q, a),
        "mass_matrix_inverse": lambda q, v, a, f: dqdyn.mass_matrix_inverse(m, q),
    }
    if not m.mimic_joints:  # (hybrid dynamics refuses mimic joints with a ModelError)
        out["hybrid_dynamics"] = lambda q, v, a, f: dqdyn.hybrid_dynamics(m, q, v, a, a, presc)[0]
    return out


Q_ONLY = ("mass_matrix", "mass_matrix_inverse")  # (functions of q alone)


def _states(m, n=4, seed=0):
    rng = np.random.default_rng(seed)
    Q = dqdyn.random_configuration(m, size=n, seed=seed)
    return Q, rng.normal(size=(n, m.nv)), 3 * rng.normal(size=(n, m.nv)), rng.normal(
        size=(n, m.nbodies + 1, 6))


def _flavours(m):
    """One state as plain vectors (the gate), as lists (the general path), and a batch."""
    Q, V, A, F = _states(m)
    return {
        "plain": (Q[0], V[0], A[0], F[0]),
        "lists": (Q[0].tolist(), V[0].tolist(), A[0].tolist(), F[0].tolist()),
        "batch": (Q, V, A, F),
        "batch, one q": (Q[0], V, A, F),
    }


def test_each_input_is_converted_once(model, counts):
    m = model
    bad = []
    for name, f in _calls(m).items():
        for flavour, args in _flavours(m).items():
            f(*args)  # (first call: compiles or arms what it needs)
            counts.seen.clear()
            counts.on = True
            try:
                f(*args)
            finally:
                counts.on = False
            seen = dict(counts.seen)
            # converted at most once; checked at most twice (converted, then its shape)
            twice = {k: n for k, n in seen.items()
                     if (k[0] == "converted" and n > 1) or (k[0] == "checked" and n > 2)}
            again = {k: n for k, n in seen.items() if k[0] not in ("converted", "checked")}
            if twice or again:
                bad.append((name, flavour, twice, again))
    assert not bad, (f"{m.name}: inputs converted more than once, or internal calls through "
                     f"public fronts: {bad}")


def test_the_counting_sees_a_second_conversion(model, counts):
    """The wrappers do count: a list converted, then the array checked, then a list converted
    twice."""
    Q = _states(model)[0]
    counts.on = True
    lagrange._q_in(model, Q[0].tolist())
    lagrange._q_in(model, Q[0])
    counts.on = False
    assert counts.seen[("converted", "q")] == 1 and counts.seen[("checked", "q")] == 2
    counts.seen.clear()
    counts.on = True
    lagrange._q_in(model, Q[0].tolist())
    lagrange._q_in(model, Q[0].tolist())
    counts.on = False
    assert counts.seen[("converted", "q")] == 2


def test_lists_and_batches_equal_the_single_state_bit_for_bit(model):
    m = model
    Q, V, A, F = _states(m, seed=1)
    for name, f in _calls(m).items():
        one = [f(Q[k], V[k], A[k], F[k]) for k in range(len(Q))]
        lists = f(Q[0].tolist(), V[0].tolist(), A[0].tolist(), F[0].tolist())
        np.testing.assert_array_equal(lists, one[0], err_msg=f"{m.name} {name}: lists")
        batch = f(Q, V, A, F)
        for k in range(len(Q)):
            np.testing.assert_array_equal(batch[k], one[k], err_msg=f"{m.name} {name}: batch row {k}")
        if name in Q_ONLY:
            continue
        shared = f(Q[0], V, A, F)  # (one q for the whole batch)
        for k in range(len(Q)):
            np.testing.assert_array_equal(shared[k], f(Q[0], V[k], A[k], F[k]),
                                          err_msg=f"{m.name} {name}: batch row {k}, one q")


def test_forward_dynamics_inverts_inverse_dynamics(model):
    """ABA∘RNEA = id and M (M⁻¹ b) = b, with and without external wrenches, on every model
    (mimic joints included: their ``aba`` is the reduced ``M q̈ = τ − h``)."""
    m = model
    Q, V, T, F = _states(m, seed=2)
    tol = 1e-9 * (1 + np.abs(T).max())
    for k in range(len(Q)):
        q, v, tau, fext = Q[k], V[k], T[k], F[k]
        np.testing.assert_allclose(dqdyn.rnea(m, q, v, dqdyn.aba(m, q, v, tau)), tau, atol=tol)
        np.testing.assert_allclose(dqdyn.rnea(m, q, v, dqdyn.aba(m, q, v, tau, fext), fext), tau,
                                   atol=tol)
        np.testing.assert_allclose(dqdyn.mass_matrix(m, q) @ dqdyn.solve_mass_matrix(m, q, tau),
                                   tau, atol=tol)
    np.testing.assert_allclose(dqdyn.rnea(m, Q, V, dqdyn.aba(m, Q, V, T, F), F), T, atol=tol)


@pytest.mark.parametrize("name", ["ur5", "anymal"])
def test_rnea_and_aba_match_pinocchio(name):
    pinconv = pytest.importorskip("pinconv")
    pin = pinconv.pin
    m = MODELS[name]()
    pm, _ = pinconv.pin_from_model(m)
    pd = pm.createData()
    Q, V, A, _ = _states(m, seed=3)
    for q, v, a in zip(Q, V, A):
        T = pinconv.v_transform(m, pm, q)
        qp, vp, ap = pinconv.q_to_pin(m, pm, q), T @ v, T @ a + pinconv.tdot_v(m, pm, q, v)
        tau = T.T @ pin.rnea(pm, pd, qp, vp, ap)  # (same power: τ = Tᵀ τ_pin)
        scale = 1 + np.abs(tau).max()
        np.testing.assert_allclose(dqdyn.rnea(m, q, v, a), tau, atol=1e-9 * scale)
        np.testing.assert_allclose(dqdyn.rnea(m, q.tolist(), v.tolist(), a.tolist()), tau,
                                   atol=1e-9 * scale)
        np.testing.assert_allclose(dqdyn.aba(m, q.tolist(), v.tolist(), tau.tolist()), a,
                                   atol=1e-8 * (1 + np.abs(a).max()))
