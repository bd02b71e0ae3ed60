"""Batched `rnea` on blocks of states (`dqdyn.dynamics.lanes`): the same bits as the
single-state kernel, state by state (``array_equal``: the lanes evaluate its expressions in its
order), and Pinocchio's ``rnea`` on random trees, on the Panda (mimic finger) and on floating
bases (random trees with free joints, ANYmal, Solo-12, Talos) within 1e-10, as the
single-state tests of ``test_inverse_dynamics.py``."""

from __future__ import annotations

import numpy as np
import pytest

import dqdyn
from dqdyn._engine.batching import SERIAL_WORK
from dqdyn.algebra.rotations import matrix_from_quat, pose_from_rt, quat_from_axis_angle
from dqdyn.dynamics import newton_euler as ne
from dqdyn.dynamics.lanes import LANES, lanes_support, rnea_lanes
from dqdyn.errors import NonFiniteError, NotUnitError
from dqdyn.multibody.builders import ModelBuilder

from pinconv import ROBOTS, erd, pin, pin_from_model, pin_from_urdf, q_to_pin, tdot_v, v_transform

LANE_TYPES = ("revolute", "prismatic", "helical")


def _rel(x, y):
    return np.abs(np.asarray(x) - np.asarray(y)).max() / max(1.0, np.abs(y).max())


def _batch(m, n, seed):
    rng = np.random.default_rng(seed)
    Q = dqdyn.random_configuration(m, size=n, seed=seed)
    return np.ascontiguousarray(Q), rng.normal(size=(n, m.nv)), rng.normal(size=(n, m.nv))


def _ne_core(m, Q, V, A):
    """The single-state kernel ``ne_core`` state by state (the serial loop of the per-state
    batch kernel), which reads ``V`` / ``A`` of one row as shared and of no columns as zero."""
    out, st = np.empty((len(Q), m.nv)), np.zeros(len(Q), dtype=np.int64)
    ne.rnea_batch.serial(m.mi, m.mf, m.gravity, Q, V, A, np.empty((1, 0, 6)), out, st)
    assert not st.any()
    return out


def _singles(m, Q, V, A):
    """One `dqdyn.rnea` call per state (the single-state kernel, through the call gate)."""
    return np.stack([dqdyn.rnea(m, Q[k], V[k if len(V) > 1 else 0], A[k if len(A) > 1 else 0])
                     for k in range(len(Q))])


@pytest.fixture(scope="module", params=[0, 1, 2])
def tree(request):
    return dqdyn.random_tree(12, LANE_TYPES, seed=request.param)


def _panda():
    import warnings

    path = erd("panda_description/urdf/panda.urdf")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return dqdyn.load_urdf(path), pin_from_urdf(path, None)


def test_support_is_the_lane_joint_kinds():
    assert lanes_support(dqdyn.serial_chain(4))
    assert lanes_support(dqdyn.serial_chain(4, "prismatic"))
    assert lanes_support(dqdyn.random_tree(12, LANE_TYPES, seed=0))
    assert not lanes_support(dqdyn.random_tree(12, seed=0))  # every joint type
    assert not lanes_support(dqdyn.random_tree(6, ("revolute", "spherical"), seed=0))
    assert not lanes_support(dqdyn.random_tree(6, ("free", "planar"), seed=0))
    assert lanes_support(dqdyn.random_tree(6, ("revolute", "free"), seed=0))
    assert lanes_support(_floating_tree(8, 0))


@pytest.mark.parametrize("n", [1, 5, LANES, LANES + 1, 3 * LANES - 1])
def test_bits_equal_single_states(tree, n):
    m = tree
    Q, V, A = _batch(m, n, seed=n)
    out = rnea_lanes(m, Q, V, A, np.empty((n, m.nv)))
    np.testing.assert_array_equal(out, _singles(m, Q, V, A))


def test_bits_equal_single_states_in_parallel_with_mimic():
    """A batch large enough for the thread pool, on a model with a mimic joint (the Panda's
    finger), against the single-state kernel."""
    m, _ = _panda()
    assert m.mimic_joints and lanes_support(m)
    n = SERIAL_WORK // (m.nbodies + 1) + 3 * LANES + 5
    Q, V, A = _batch(m, n, seed=3)
    out = rnea_lanes(m, Q, V, A, np.empty((n, m.nv)))
    np.testing.assert_array_equal(out, _singles(m, Q, V, A))


def test_shared_rows_zero_velocity_and_acceleration(tree):
    """``V`` / ``A`` of one row are shared by every state; with no columns they are zero
    (the ``nonlinear_effects`` / ``gravity`` forms of the recursion)."""
    m = tree
    Q, V, A = _batch(m, 2 * LANES + 3, seed=5)
    n = len(Q)
    out = rnea_lanes(m, Q, V[:1].copy(), A[:1].copy(), np.empty((n, m.nv)))
    np.testing.assert_array_equal(out, _singles(m, Q, V[:1], A[:1]))
    nle = rnea_lanes(m, Q, V, np.empty((1, 0)), np.empty((n, m.nv)))
    np.testing.assert_array_equal(nle, _ne_core(m, Q, V, np.empty((1, 0))))
    np.testing.assert_allclose(nle, np.stack([dqdyn.nonlinear_effects(m, q, v)
                                              for q, v in zip(Q, V)]), rtol=1e-13, atol=1e-12)
    g = rnea_lanes(m, Q, np.empty((1, 0)), np.empty((1, 0)), np.empty((n, m.nv)))
    np.testing.assert_array_equal(g, _ne_core(m, Q, np.empty((1, 0)), np.empty((1, 0))))
    np.testing.assert_allclose(g, np.stack([dqdyn.gravity(m, q) for q in Q]), rtol=1e-13,
                               atol=1e-12)


def test_armature(tree):
    m = tree.with_armature(np.random.default_rng(4).uniform(0.05, 3.0, tree.nv))
    Q, V, A = _batch(m, LANES + 7, seed=6)
    out = rnea_lanes(m, Q, V, A, np.empty((len(Q), m.nv)))
    np.testing.assert_array_equal(out, _singles(m, Q, V, A))
    plain = rnea_lanes(tree, Q, V, A, np.empty((len(Q), m.nv)))
    np.testing.assert_allclose(out - plain, A * m.armature, rtol=1e-12, atol=1e-12)


def test_trees_match_pinocchio():
    m = dqdyn.random_tree(12, ("revolute", "prismatic"), seed=7)
    pm = pin_from_model(m)[0]
    pd = pm.createData()
    Q, V, A = _batch(m, LANES + 3, seed=8)
    out = rnea_lanes(m, Q, V, A, np.empty((len(Q), m.nv)))
    for k in range(len(Q)):
        T = v_transform(m, pm, Q[k])
        ref = T.T @ pin.rnea(pm, pd, q_to_pin(m, pm, Q[k]), T @ V[k],
                             T @ A[k] + tdot_v(m, pm, Q[k], V[k]))
        assert _rel(out[k], ref) < 1e-10


def test_panda_matches_pinocchio():
    m, pm = _panda()
    pd = pm.createData()
    Q, V, A = _batch(m, LANES + 3, seed=9)
    out = rnea_lanes(m, Q, V, A, np.empty((len(Q), m.nv)))
    for k in range(len(Q)):
        T = v_transform(m, pm, Q[k])
        ref = T.T @ pin.rnea(pm, pd, q_to_pin(m, pm, Q[k]), T @ V[k],
                             T @ A[k] + tdot_v(m, pm, Q[k], V[k]))
        assert _rel(out[k], ref) < 1e-10


@pytest.mark.parametrize("which, name", [(0, "q"), (1, "v"), (2, "a")])
def test_non_finite_input_names_the_batch_element(which, name):
    m = dqdyn.serial_chain(5)
    arrays = list(_batch(m, 2 * LANES + 1, seed=10))
    arrays[which][LANES + 2, 1] = np.nan
    with pytest.raises(NonFiniteError, match=rf"{name}.*batch element {LANES + 2}\b"):
        rnea_lanes(m, *arrays, np.empty((2 * LANES + 1, m.nv)))


# ----------------------------------------------------------------------------- floating bases
def _floating_tree(n, seed):
    """A free-flying base (placed off the world origin) carrying a random tree of ``n`` bodies
    on revolute, prismatic and helical joints."""
    rng = np.random.default_rng(seed)

    def inertia():  # (a box's: the triangle inequality holds)
        d = rng.uniform(0.1, 0.5, 3)
        R = matrix_from_quat(quat_from_axis_angle(rng.normal(size=3), rng.uniform(0, np.pi)))
        return R @ np.diag([d[1] ** 2 + d[2] ** 2, d[0] ** 2 + d[2] ** 2, d[0] ** 2 + d[1] ** 2]) @ R.T

    b = ModelBuilder(f"floating_tree{n}", gravity=(0.3, -0.2, -9.81))
    r = rng.normal(size=4)
    b.add_body("base", "world", "free", joint_name="root",
               placement=pose_from_rt(r / np.linalg.norm(r), rng.uniform(-0.5, 0.5, 3)),
               mass=3.0, com=rng.uniform(-0.2, 0.2, 3), inertia=inertia())
    names = ["base"]
    for i in range(n):
        r = rng.normal(size=4)
        parent = names[-1] if rng.random() > 0.5 else names[rng.integers(0, len(names))]
        names.append(b.add_body(f"b{i}", parent, LANE_TYPES[i % 3], joint_name=f"j{i}",
                                axis=rng.normal(size=3), pitch=rng.uniform(-0.2, 0.2),
                                placement=pose_from_rt(r / np.linalg.norm(r),
                                                             rng.uniform(-0.3, 0.3, 3)),
                                mass=rng.uniform(0.5, 2.0), com=rng.uniform(-0.2, 0.2, 3),
                                inertia=inertia()))
    return b.build()


def _robot(name):
    import warnings

    rel, root = ROBOTS[name]
    path = erd(rel)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return dqdyn.load_urdf(path, root_joint=root), pin_from_urdf(path, root)


@pytest.fixture(scope="module", params=["root", "free0", "free1"])
def floating(request):
    """A free root carrying a tree, and random trees whose free joints sit anywhere (a
    floating body on a revolute chain, two free joints in one tree)."""
    if request.param == "root":
        return _floating_tree(10, 0)
    seed = int(request.param[-1])
    return dqdyn.random_tree(12, LANE_TYPES + ("free",), seed=seed)


@pytest.fixture(scope="module", params=["anymal", "solo12", "talos"])
def legged(request):
    return _robot(request.param)


def _pool_size(m):
    """A batch that `run_chunked` spreads over the thread pool (not its serial twin)."""
    return SERIAL_WORK // (m.nbodies + 1) + 3 * LANES + 5


def test_floating_models_are_lane_models(floating, legged):
    from dqdyn.multibody.joints import FREE
    from dqdyn.multibody.model import MI_JTYPE

    for m in (floating, legged[0]):
        assert (m.mi[1:, MI_JTYPE] == FREE).any() and lanes_support(m)


@pytest.mark.parametrize("n", [1, LANES, LANES + 1, 3 * LANES - 1, 0])
def test_floating_bits_equal_single_states(floating, n):
    m = floating
    n = n or _pool_size(m)
    Q, V, A = _batch(m, n, seed=n)
    out = rnea_lanes(m, Q, V, A, np.empty((n, m.nv)))
    ref = _singles(m, Q, V, A)
    np.testing.assert_array_equal(out, ref)
    np.testing.assert_array_equal(dqdyn.rnea(m, Q, V, A), ref)  # (the public batch route)


@pytest.mark.parametrize("n", [1, LANES, LANES + 1, 3 * LANES - 1, 0])
def test_legged_robots_bits_equal_single_states(legged, n):
    m, _ = legged
    n = n or _pool_size(m)
    Q, V, A = _batch(m, n, seed=n + 1)
    out = rnea_lanes(m, Q, V, A, np.empty((n, m.nv)))
    ref = _singles(m, Q, V, A)
    np.testing.assert_array_equal(out, ref)
    np.testing.assert_array_equal(dqdyn.rnea(m, Q, V, A), ref)


def test_floating_shared_rows_zero_velocity_and_acceleration(floating):
    m = floating
    Q, V, A = _batch(m, LANES + 5, seed=11)
    n = len(Q)
    out = rnea_lanes(m, Q, V[:1].copy(), A[:1].copy(), np.empty((n, m.nv)))
    np.testing.assert_array_equal(out, _singles(m, Q, V[:1], A[:1]))
    nle = rnea_lanes(m, Q, V, np.empty((1, 0)), np.empty((n, m.nv)))
    np.testing.assert_array_equal(nle, _ne_core(m, Q, V, np.empty((1, 0))))
    g = rnea_lanes(m, Q, np.empty((1, 0)), np.empty((1, 0)), np.empty((n, m.nv)))
    np.testing.assert_array_equal(g, _ne_core(m, Q, np.empty((1, 0)), np.empty((1, 0))))
    np.testing.assert_allclose(g, np.stack([dqdyn.gravity(m, q) for q in Q]), rtol=1e-13,
                               atol=1e-12)


def test_floating_armature(floating):
    m = floating.with_armature(np.random.default_rng(12).uniform(0.05, 3.0, floating.nv))
    Q, V, A = _batch(m, LANES + 7, seed=13)
    out = rnea_lanes(m, Q, V, A, np.empty((len(Q), m.nv)))
    np.testing.assert_array_equal(out, _singles(m, Q, V, A))


def _pin_rnea(m, pm, Q, V, A):
    pd = pm.createData()
    refs = []
    for k in range(len(Q)):
        T = v_transform(m, pm, Q[k])
        refs.append(T.T @ pin.rnea(pm, pd, q_to_pin(m, pm, Q[k]), T @ V[k],
                                   T @ A[k] + tdot_v(m, pm, Q[k], V[k])))
    return refs


def test_floating_trees_match_pinocchio(floating):
    m = floating
    pm = pin_from_model(m)[0]
    Q, V, A = _batch(m, LANES + 3, seed=14)
    out = rnea_lanes(m, Q, V, A, np.empty((len(Q), m.nv)))
    for k, ref in enumerate(_pin_rnea(m, pm, Q, V, A)):
        assert _rel(out[k], ref) < 1e-10


def test_legged_robots_match_pinocchio(legged):
    m, pm = legged
    Q, V, A = _batch(m, LANES + 3, seed=15)
    out = rnea_lanes(m, Q, V, A, np.empty((len(Q), m.nv)))
    for k, ref in enumerate(_pin_rnea(m, pm, Q, V, A)):
        assert _rel(out[k], ref) < 1e-10


def _per_state(m, Q, V, A):
    """The per-state batch kernel through `run_chunked` (the route before the lanes)."""
    from dqdyn._engine.batching import run_chunked
    from dqdyn._engine.boundary import raise_status

    out = np.empty((len(Q), m.nv))
    run_chunked(ne.rnea_batch, (m.mi, m.mf, m.gravity), [Q, V, A, np.empty((1, 0, 6))], [out],
                len(Q), (1, 2, 3), lambda st, row: raise_status(m, st, row))
    return out


@pytest.mark.parametrize("bad", ["nan", "scaled", "dual"])
def test_floating_bad_base_pose_raises_as_the_per_state_path(bad):
    """A NaN in the base's dual quaternion, a rotation part off the unit sphere, a dual part
    not orthogonal to it: the error (type and message, naming the batch element) of the
    per-state kernel."""
    m = _floating_tree(6, 1)
    Q, V, A = _batch(m, 2 * LANES + 1, seed=16)
    k = LANES + 2
    if bad == "nan":
        Q[k, 2] = np.nan
    elif bad == "scaled":
        Q[k, :4] *= 1.5
    else:
        Q[k, 4:8] += 0.3 * Q[k, :4]
    err = NonFiniteError if bad == "nan" else NotUnitError
    with pytest.raises(err, match=rf"batch element {k}\b") as lanes:
        rnea_lanes(m, Q, V, A, np.empty((len(Q), m.nv)))
    with pytest.raises(err) as per_state:
        _per_state(m, Q, V, A)
    assert str(lanes.value) == str(per_state.value)
    with pytest.raises(err, match=rf"batch element {k}\b"):
        dqdyn.rnea(m, Q, V, A)
