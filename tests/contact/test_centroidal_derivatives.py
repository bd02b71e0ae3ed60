"""Analytic derivatives of the centroidal dynamics (`dqdyn.centroidal_dynamics_derivatives`) against
Pinocchio's ``computeCentroidalDynamicsDerivatives`` (floating-base robots, random floating-base and
fixed-base trees, a fixed-base arm with a welded root link) and against central finite differences
of `dqdyn.centroidal_momentum` / `dqdyn.centroidal_momentum_rate` along `dqdyn.integrate` (every
joint type, mimic joints), plus batches and named bad input."""

from __future__ import annotations

import numpy as np
import pytest

import dqdyn
from dqdyn.multibody.builders import ALL_JOINT_TYPES

from _oracle import pin, pin_state, rel, robot, state
from pinconv import ROBOTS as ALL
from pinconv import erd, pin_from_model, pin_from_urdf, q_to_pin, v_transform

NO_PLANAR = ("revolute", "prismatic", "helical", "cylindrical", "spherical", "free")
ROBOTS = ["solo12", "anymal", "talos"]


def pin_derivatives(model, pm, q, v, a):
    """Pinocchio's four (6, nv) matrices with their columns in dqdyn's ``v`` order."""
    T = v_transform(model, pm, q)
    r = pin.computeCentroidalDynamicsDerivatives(pm, pm.createData(), q_to_pin(model, pm, q), T @ v,
                                                 T @ a)
    return [np.asarray(x) @ T for x in r]


def fd_derivatives(model, q, v, a, h=1e-6):
    """Central differences: ``∂h_g/∂q``, ``∂ḣ_g/∂q`` (along `integrate`), ``∂ḣ_g/∂v``, ``∂ḣ_g/∂a``."""
    hg, hd = dqdyn.centroidal_momentum, dqdyn.centroidal_momentum_rate
    I = np.eye(model.nv) * h
    qp = [dqdyn.integrate(model, q, e) for e in I]
    qm = [dqdyn.integrate(model, q, -e) for e in I]
    cols = (
        [hg(model, p, v) - hg(model, m, v) for p, m in zip(qp, qm)],
        [hd(model, p, v, a) - hd(model, m, v, a) for p, m in zip(qp, qm)],
        [hd(model, q, v + e, a) - hd(model, q, v - e, a) for e in I],
        [hd(model, q, v, a + e) - hd(model, q, v, a - e) for e in I],
    )
    return [np.column_stack(c) / (2 * h) for c in cols]


def floating_random_tree(seed, joint_types=NO_PLANAR):
    """A free base carrying a random tree (its own roots on the base)."""
    b = dqdyn.ModelBuilder(f"floating{seed}")
    rng = np.random.default_rng(seed)
    R = np.linalg.qr(rng.normal(size=(3, 3)))[0]
    b.add_body("base", joint="free", mass=4.0, com=rng.uniform(-0.1, 0.1, 3),
               inertia=R @ np.diag(rng.uniform(0.08, 0.12, 3)) @ R.T, xyz=rng.uniform(-0.2, 0.2, 3))
    b.add_model(dqdyn.random_tree(10, joint_types=joint_types, seed=seed), "base", prefix="t_", xyz=[0.1, 0, 0.05])
    return b.build()


def random_state(model, seed):
    rng = np.random.default_rng(seed)
    return (dqdyn.random_configuration(model, seed=rng),) + tuple(rng.normal(size=(2, model.nv)))


def check(ours, theirs, tol):
    for name, x, y in zip(("dh_dq", "dhdot_dq", "dhdot_dv", "dhdot_da"), ours, theirs):
        assert x.shape == y.shape
        assert rel(x, y) < tol, (name, rel(x, y))


@pytest.mark.parametrize("name", ROBOTS)
@pytest.mark.parametrize("k", range(2))
def test_robots_match_pinocchio(name, k):
    model, pm = robot(name)
    q, v, a, _ = state(model, k)
    ours = dqdyn.centroidal_dynamics_derivatives(model, q, v, a)
    check(ours, pin_derivatives(model, pm, q, v, a), 1e-9)
    # (the state conversion of the contact tests: Pinocchio's a of dqdyn's a)
    qp, vp, T, ap = pin_state(model, pm, q, v, a)
    assert rel(ours.dhdot_da, pin.ccrba(pm, pm.createData(), qp, vp) @ T) < 1e-10


@pytest.mark.parametrize("seed", range(3))
def test_random_floating_base_tree_matches_pinocchio(seed):
    model = floating_random_tree(seed)
    pm, _ = pin_from_model(model)
    q, v, a = random_state(model, seed)
    check(dqdyn.centroidal_dynamics_derivatives(model, q, v, a), pin_derivatives(model, pm, q, v, a),
          1e-9)


@pytest.mark.parametrize("seed", range(2))
def test_random_fixed_base_tree_matches_pinocchio(seed):
    """Roots on the world, free joints inside: h_g is the momentum of the moving bodies."""
    model = dqdyn.random_tree(9, joint_types=NO_PLANAR, seed=seed)
    pm, _ = pin_from_model(model)
    q, v, a = random_state(model, seed + 5)
    check(dqdyn.centroidal_dynamics_derivatives(model, q, v, a), pin_derivatives(model, pm, q, v, a),
          1e-9)


def test_fixed_base_arm_with_welded_root_matches_pinocchio():
    path, root = ALL["ur5"]
    model = dqdyn.load_urdf(erd(path))
    assert model.welded_inertia[0] > 0  # (the welded root link stays out of h_g)
    pm = pin_from_urdf(erd(path), root)
    q, v, a, _ = state(model, 3)
    check(dqdyn.centroidal_dynamics_derivatives(model, q, v, a), pin_derivatives(model, pm, q, v, a),
          1e-9)


@pytest.mark.parametrize("case", ["anymal", "floating_all_types", "fixed_all_types", "panda_mimic"])
def test_finite_differences(case):
    if case == "anymal":
        model, _ = robot("anymal")
    elif case == "floating_all_types":
        model = floating_random_tree(7, ALL_JOINT_TYPES)
    elif case == "fixed_all_types":
        model = dqdyn.random_tree(9, joint_types=ALL_JOINT_TYPES, seed=8)
    else:
        model = dqdyn.load_urdf(erd(ALL["panda"][0]))
        assert model.mimic_joints
    q, v, a = random_state(model, 11)
    ours = dqdyn.centroidal_dynamics_derivatives(model, q, v, a)
    check(ours, fd_derivatives(model, q, v, a), 1e-7)


def test_identities_of_the_rate():
    """``ḣ_g = ∂h_g/∂q · v + A_g a`` (the chain rule along the motion) and ``A_g`` as `ccrba`."""
    model, _ = robot("talos")
    q, v, a, _ = state(model, 4)
    r = dqdyn.centroidal_dynamics_derivatives(model, q, v, a)
    assert rel(r.dh_dq @ v + r.dhdot_da @ a, dqdyn.centroidal_momentum_rate(model, q, v, a)) < 1e-12
    assert rel(r.dhdot_da, dqdyn.centroidal_momentum_matrix(model, q)) < 1e-12
    assert rel(r.dhdot_da @ v, dqdyn.centroidal_momentum(model, q, v)) < 1e-12


def test_result_is_a_named_tuple():
    model, _ = robot("solo12")
    q, v, a, _ = state(model, 0)
    r = dqdyn.centroidal_dynamics_derivatives(model, q, v, a)
    assert isinstance(r, dqdyn.CentroidalDynamicsDerivatives)
    assert r._fields == ("dh_dq", "dhdot_dq", "dhdot_dv", "dhdot_da")
    dh_dq, dhdot_dq, dhdot_dv, dhdot_da = r
    assert all(x.shape == (6, model.nv) for x in r)
    assert dqdyn.contact.centroidal_dynamics_derivatives is dqdyn.centroidal_dynamics_derivatives


def test_batches_are_the_states_one_by_one():
    model, _ = robot("anymal")
    Q, V, A = (np.stack([state(model, k)[i] for k in range(3)]) for i in range(3))
    out = dqdyn.centroidal_dynamics_derivatives(model, Q, V, A)
    for k in range(3):
        one = dqdyn.centroidal_dynamics_derivatives(model, Q[k], V[k], A[k])
        for x, y in zip(out, one):
            assert x.shape == (3, 6, model.nv)
            np.testing.assert_allclose(x[k], y, rtol=0, atol=1e-12 * (1 + np.abs(y).max()))
    grid = dqdyn.centroidal_dynamics_derivatives(model, Q.reshape(3, 1, -1), V, A[0])
    assert all(x.shape == (3, 3, 6, model.nv) for x in grid)
    np.testing.assert_allclose(grid.dhdot_dq[1, 2], dqdyn.centroidal_dynamics_derivatives(
        model, Q[1], V[2], A[0]).dhdot_dq, rtol=0, atol=1e-10)
    lists = dqdyn.centroidal_dynamics_derivatives(model, Q[0].tolist(), V[0].tolist(), A[0].tolist())
    np.testing.assert_allclose(lists.dh_dq, out.dh_dq[0], rtol=0, atol=1e-12)
    single_in_batch = dqdyn.centroidal_dynamics_derivatives(model, Q[:1], V[:1], A[:1])
    assert single_in_batch.dh_dq.shape == (1, 6, model.nv)


def single_root_tree(seed, joint_types=NO_PLANAR):
    """A revolute root on the world carrying a random tree (its own roots on the root)."""
    b = dqdyn.ModelBuilder(f"rooted{seed}")
    b.add_body("root", joint="revolute", mass=2.0, inertia=0.05 * np.eye(3), axis=[0, 0, 1],
               xyz=[0.3, -0.2, 0.1])
    b.add_model(dqdyn.random_tree(8, joint_types=joint_types, seed=seed), "root", prefix="t_",
                xyz=[0.05, 0, 0.1])
    return b.build()


def augmented_route(model, q, v, a):
    """The result of the augmented model's route (module docstring of
    `dqdyn.contact.derivatives`), which the compiled route replaces for trees of one root."""
    from dqdyn.contact import derivatives as D

    saved = D._route(model)
    model._index["centroidal_derivatives"] = (None, 0)
    try:
        return dqdyn.centroidal_dynamics_derivatives(model, q, v, a)
    finally:
        model._index["centroidal_derivatives"] = saved


@pytest.mark.parametrize("case", ["solo12", "talos", "floating", "rooted"])
def test_compiled_route_is_the_augmented_model_route(case):
    """One root (free or not), no planar or mimic joint: the base rows alone
    (`base_rows_sweep`), equal to the rows of the augmented model's ``rnea_derivatives`` and
    Coriolis matrix; a batch gives each state's bits."""
    from dqdyn.contact import derivatives as D

    if case in ROBOTS:
        model, _ = robot(case)
    else:
        model = floating_random_tree(4) if case == "floating" else single_root_tree(4)
    assert D._route(model)[0] is not None
    Q, V, A = (np.stack(x) for x in zip(*(random_state(model, 20 + k) for k in range(3))))
    batch = dqdyn.centroidal_dynamics_derivatives(model, Q, V, A)
    for k in range(3):
        one = dqdyn.centroidal_dynamics_derivatives(model, Q[k], V[k], A[k])
        ref = augmented_route(model, Q[k], V[k], A[k])
        for x, y, z in zip(one, ref, batch):
            assert rel(x, y) < 1e-12
            np.testing.assert_array_equal(z[k], x)


def test_models_outside_the_compiled_route_take_the_augmented_model():
    """Several roots, a planar joint, mimic joints: the augmented model's route (checked
    against finite differences in `test_finite_differences`)."""
    from dqdyn.contact import derivatives as D

    two = dqdyn.ModelBuilder("two_roots")
    two.add_model(single_root_tree(2), "world", prefix="a_")
    two.add_model(single_root_tree(3), "world", prefix="b_", xyz=[0, 1, 0])
    two = two.build()
    q, v, a = random_state(two, 0)
    check(dqdyn.centroidal_dynamics_derivatives(two, q, v, a), fd_derivatives(two, q, v, a), 1e-7)
    panda = dqdyn.load_urdf(erd(ALL["panda"][0]))
    for model in (two, single_root_tree(1, ("planar",)), panda):
        assert D._route(model)[0] is None, model.name
    assert D._route(single_root_tree(1))[0] is not None


def test_bad_input_is_named():
    model, _ = robot("solo12")
    q, v, a, _ = state(model, 0)
    f = dqdyn.centroidal_dynamics_derivatives
    with pytest.raises(dqdyn.errors.ShapeError, match="q"):
        f(model, q[:-1], v, a)
    with pytest.raises(dqdyn.errors.ShapeError, match="v"):
        f(model, q, v[:-1], a)
    with pytest.raises(dqdyn.errors.ShapeError, match="a"):
        f(model, q, v, a[:3])
    with pytest.raises(dqdyn.errors.NonFiniteError, match="v"):
        f(model, q, np.full(model.nv, np.nan), a)
    with pytest.raises(dqdyn.errors.NonFiniteError, match="a"):
        f(model, q, v, np.r_[a[:-1], np.inf])
    with pytest.raises(dqdyn.errors.ShapeError, match="batch"):
        f(model, np.stack([q, q]), np.stack([v, v, v]), a)
    with pytest.raises(dqdyn.errors.ShapeError, match="model"):
        f("solo12", q, v, a)
    b = dqdyn.ModelBuilder("massless")
    b.add_body("link", joint="revolute")
    with pytest.raises(dqdyn.errors.ModelError, match="mass"):
        f(b.build(), [0.0], [1.0], [0.0])
