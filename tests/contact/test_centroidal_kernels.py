"""The compiled floating-base route of the centroidal quantities (`dqdyn.contact._centroidal_kernels`)
against the numpy route it replaced (the base rows of ``M`` and of ``rnea`` moved to the CoM,
[Featherstone2008, ch. 6], [Orin2013]) and against Pinocchio (``ccrba``,
``computeCentroidalMomentum(TimeVariation)``, ``jacobianCenterOfMass``): single states, batches
(bit for bit the loop of single states: the call gate's small batch, the serial and the parallel
batch kernels), armature on the base (not momentum of the bodies: removed), and the errors of
bad inputs (the same exception and message as the numpy route)."""

from __future__ import annotations

import numpy as np
import pytest

import dqdyn
from dqdyn._engine.batching import SERIAL_WORK
from dqdyn.contact import centroidal as C

from _oracle import pin, pin_state, rel, robot, state

ROBOTS = ["solo12", "anymal", "talos"]

# (public function, its numpy route, the arguments it takes of (q, v, a))
FUNCS = [(dqdyn.centroidal_momentum_matrix, C._cmm, 1), (dqdyn.com_jacobian, C._jc, 1),
         (dqdyn.centroidal_momentum, C._hg, 2), (dqdyn.centroidal_momentum_rate, C._hgdot, 3)]


def relative(a, b) -> float:
    return float(np.abs(a - b).max() / np.abs(b).max())


def pinocchio_terms(model, pm, q, v, a):
    pd = pm.createData()
    qp, vp, T, ap = pin_state(model, pm, q, v, a)
    Ag = pin.ccrba(pm, pd, qp, vp) @ T
    pin.computeCentroidalMomentum(pm, pd, qp, vp)
    hg = pd.hg.vector.copy()
    pin.computeCentroidalMomentumTimeVariation(pm, pd, qp, vp, ap)
    dhg = pd.dhg.vector.copy()
    Jc = pin.jacobianCenterOfMass(pm, pd, qp) @ T
    return [Ag, Jc, hg, dhg]


@pytest.mark.parametrize("name", ROBOTS)
@pytest.mark.parametrize("k", range(3))
def test_compiled_matches_numpy_route_and_pinocchio(name, k):
    model, pm = robot(name)
    assert C._base(model) is not None  # (the floating-base route)
    q, v, a, _ = state(model, k)
    theirs = pinocchio_terms(model, pm, q, v, a)
    for (fn, ref, n), pin_value in zip(FUNCS, theirs):
        args = (q, v, a)[:n]
        got = fn(model, *args)
        assert got.shape == pin_value.shape
        assert relative(got, ref(model, *args, False)) < 1e-13, fn.__name__
        assert rel(got, pin_value) < 1e-10, fn.__name__


@pytest.mark.parametrize("name", ROBOTS)
def test_batches_are_the_loop_of_single_states_bit_for_bit(name):
    model, _ = robot(name)
    nb1 = model.nbodies + 1
    big = SERIAL_WORK // nb1 + 5  # above the serial threshold: the parallel batch kernel
    rng = np.random.default_rng(7)
    Q = np.stack([dqdyn.random_configuration(model, seed=100 + k) for k in range(big)])
    V = rng.standard_normal((big, model.nv))
    A = rng.standard_normal((big, model.nv))
    for fn, ref, n in FUNCS:
        args = (Q, V, A)[:n]
        one = np.stack([fn(model, *(x[k] for x in args)) for k in range(big)])
        full = fn(model, *args)  # the parallel batch kernel (run_chunked)
        assert np.array_equal(full, one), fn.__name__
        small = fn(model, *(x[:4] for x in args))  # the call gate's small batch
        assert np.array_equal(small, one[:4]), fn.__name__
        serial = fn(model, *(x[:6, None] for x in args))  # (6, 1, ·): run_chunked's serial twin
        assert serial.shape == (6, 1) + one.shape[1:] and np.array_equal(serial[:, 0], one[:6])
        assert relative(full, ref(model, *args, False)) < 1e-13, fn.__name__
    # one state's v shared by a batch of q (broadcast), as the numpy route
    got = dqdyn.centroidal_momentum_rate(model, Q[:50], V[0], A[0])
    assert np.array_equal(got, np.stack([dqdyn.centroidal_momentum_rate(model, q, V[0], A[0])
                                         for q in Q[:50]]))


@pytest.mark.parametrize("name", ["solo12", "talos"])
def test_armature_on_the_base_is_removed(name):
    model, pm = robot(name)
    arm = np.zeros(model.nv)
    arm[:6] = [0.3, 0.2, 0.1, 1.5, 2.5, 3.5]
    arm[6:] = 0.05
    heavy = model.with_armature(arm)
    assert np.all(heavy.armature[:6] > 0) and C._base(heavy)[1] is not None
    q, v, a, _ = state(model, 1)
    for fn, ref, n in FUNCS:
        args = (q, v, a)[:n]
        got = fn(heavy, *args)
        # armature is no momentum of the bodies (as in Pinocchio): the rigid model's values
        assert relative(got, fn(model, *args)) < 1e-13, fn.__name__
        assert relative(got, ref(heavy, *args, False)) < 1e-13, fn.__name__
    # the momentum of M's base rows with the armature would differ: the check can fail
    M = dqdyn.mass_matrix(heavy, q)
    assert not np.allclose(M[:6] @ v, dqdyn.mass_matrix(model, q)[:6] @ v)


def _error(fn, *args):
    try:
        fn(*args)
    except Exception as e:  # noqa: BLE001 - the exception itself is compared
        return type(e), str(e)
    return None


def test_bad_input_errors_are_the_numpy_routes():
    model, _ = robot("solo12")
    q, v, a, _ = state(model, 0)
    bad_unit = q.copy()
    bad_unit[3:7] *= 1.5  # the free joint's quaternion, not unit
    nan_q = q.copy()
    nan_q[0] = np.nan
    nan = np.full(model.nv, np.nan)
    inf = np.full(model.nv, np.inf)
    huge = np.full(model.nv, 1e200)
    Q2 = np.stack([q, bad_unit, q])
    cases = [
        (0, (q[:-1],)), (0, (nan_q,)), (0, (bad_unit,)), (0, (Q2,)), (0, ("q",)),
        (1, (q[:-1],)), (1, (bad_unit,)), (1, (Q2,)),
        (2, (q, v[:-1])), (2, (q, nan)), (2, (bad_unit, v)), (2, (np.stack([q, q]), np.stack([v, v, v]))),
        (2, (Q2, np.stack([v, v, v]))),
        (3, (q, v, a[:3])), (3, (q, v, nan)), (3, (q, inf, a)), (3, (bad_unit, v, a)),
        (3, (q, huge, a)), (3, (Q2, v, a)),
    ]
    for i, args in cases:
        fn, ref, _ = FUNCS[i]
        mine = _error(fn, model, *args)
        theirs = _error(ref, model, *args, False)
        assert mine is not None and mine == theirs, (fn.__name__, mine, theirs)
        assert issubclass(mine[0], dqdyn.errors.DqdynError), (fn.__name__, mine)
    for fn, _, n in FUNCS:
        with pytest.raises(dqdyn.errors.ShapeError, match="model"):
            fn(object(), *(q, v, a)[:n])


@pytest.mark.parametrize("name", ["anymal", "talos"])
def test_the_call_gate_and_the_general_path_give_the_same_bits(name):
    """A front's single state (the call gate's compiled entry) against its Python function (the
    general path a build without the gate takes: the batch kernel's rows on one state), lists,
    a strided view."""
    model, _ = robot(name)
    q, v, a, _ = state(model, 2)
    for fn, _, n in FUNCS:
        args = (q, v, a)[:n]
        want = fn(model, *args)
        assert np.array_equal(getattr(fn, "__wrapped__", fn)(model, *args), want), fn.__name__
        assert np.array_equal(fn(model, *[x.tolist() for x in args]), want), fn.__name__
        wide = [np.stack([x, x], axis=1)[:, 0] for x in args]  # (not C-contiguous)
        assert np.array_equal(fn(model, *wide), want), fn.__name__


def test_other_trees_take_the_numpy_route():
    """A fixed-base model is not the compiled route's (the entry declines it); the front gives the
    numpy route's value, before and after a floating-base call."""
    model = dqdyn.serial_chain(4)
    floating, _ = robot("solo12")
    q = dqdyn.random_configuration(model, seed=3)
    for _ in range(2):
        got = dqdyn.centroidal_momentum_matrix(model, q)
        assert np.array_equal(got, C._cmm(model, q, False))
        dqdyn.centroidal_momentum_matrix(floating, state(floating, 0)[0])
    assert np.array_equal(dqdyn.com_jacobian(model, q), C._jc(model, q, False))
