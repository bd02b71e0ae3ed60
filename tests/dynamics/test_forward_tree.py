"""ABA, hybrid dynamics and M⁻¹ on random trees with every joint type, against Pinocchio."""

import numpy as np
import pytest

import dqdyn
from dqdyn import errors
from dqdyn.dynamics.forward import aba, hybrid_dynamics, mass_matrix_inverse

from pinconv import pin, pin_from_model, q_to_pin, tdot_v, v_transform


@pytest.fixture(scope="module", params=[0, 1, 2, 3])
def tree(request):
    m = dqdyn.random_tree(12, seed=request.param)
    pm, ids = pin_from_model(m)
    return m, pm


def _state(m, pm, rng):
    q = dqdyn.random_configuration(m, seed=rng)
    v = rng.normal(size=m.nv)
    T = v_transform(m, pm, q)
    return q, v, q_to_pin(m, pm, q), T, T @ v, tdot_v(m, pm, q, v)


def _pin_dyn(m, pm, pd, qp, vp):
    M = pin.crba(pm, pd, qp)
    M = np.triu(M) + np.triu(M, 1).T
    b = pin.nonLinearEffects(pm, pd, qp, vp)
    return M, b


def test_aba_matches_pinocchio(tree):
    m, pm = tree
    pd = pm.createData()
    rng = np.random.default_rng(0)
    for _ in range(5):
        q, v, qp, T, vp, Tdv = _state(m, pm, rng)
        tau = rng.normal(size=m.nv) * 5
        a = aba(m, q, v, tau)
        ap = pin.aba(pm, pd, qp, vp, np.linalg.solve(T.T, tau))
        np.testing.assert_allclose(T @ a + Tdv, ap, rtol=1e-10, atol=1e-10 * np.abs(ap).max())


def test_aba_with_external_wrenches_matches_pinocchio(tree):
    m, pm = tree
    pd = pm.createData()
    rng = np.random.default_rng(1)
    q, v, qp, T, vp, Tdv = _state(m, pm, rng)
    tau = rng.normal(size=m.nv)
    fext = rng.normal(size=(m.nbodies + 1, 6))
    fext[0] = 0
    a = aba(m, q, v, tau, fext=fext)
    # pin: per joint, a Force in the joint frame, [linear; angular] = our [f; τ]
    fp = [pin.Force.Zero() for _ in range(pm.njoints)]
    for i in range(1, m.nbodies + 1):
        fp[pm.getJointId(m.joint_names_all[i])] = pin.Force(fext[i, :3], fext[i, 3:])
    ap = pin.aba(pm, pd, qp, vp, np.linalg.solve(T.T, tau), fp)
    np.testing.assert_allclose(T @ a + Tdv, ap, rtol=1e-10, atol=1e-10 * np.abs(ap).max())


def test_hybrid_dynamics_equals_dense_formula(tree):
    m, pm = tree
    pd = pm.createData()
    rng = np.random.default_rng(2)
    q, v, qp, T, vp, Tdv = _state(m, pm, rng)
    Mp, bp = _pin_dyn(m, pm, pd, qp, vp)
    # our-coordinate M and bias:  M = Tᵀ Mp T,  b = Tᵀ (bp + Mp Ṫ v)
    M = T.T @ Mp @ T
    b = T.T @ (bp + Mp @ Tdv)
    for presc in (np.zeros(m.nv, bool), np.ones(m.nv, bool), rng.random(m.nv) < 0.5):
        a_in = rng.normal(size=m.nv)
        tau_in = rng.normal(size=m.nv)
        qdd, tau = hybrid_dynamics(m, q, v, a_in, tau_in, presc)
        u, f = presc, ~presc
        np.testing.assert_allclose(qdd[u], a_in[u])
        np.testing.assert_allclose(tau[f], tau_in[f])
        # q̈_v = M_vv⁻¹(τ_v − b_v − M_vu q̈_u)  (the corrected form of [Kim2012, eq. (34)],
        # whose printed M_uv q̈_u should be M_vu q̈_u)
        if f.any():
            ref = np.linalg.solve(M[np.ix_(f, f)], tau_in[f] - b[f] - M[np.ix_(f, u)] @ a_in[u])
            np.testing.assert_allclose(qdd[f], ref, rtol=1e-9, atol=1e-9 * (1 + np.abs(ref).max()))
        # τ = M q̈ + b on every DoF
        np.testing.assert_allclose(tau[u], (M @ qdd + b)[u], rtol=1e-9, atol=1e-9 * (1 + np.abs(tau).max()))


def test_mass_matrix_inverse(tree):
    m, pm = tree
    pd = pm.createData()
    rng = np.random.default_rng(3)
    q, v, qp, T, vp, Tdv = _state(m, pm, rng)
    Mp, _ = _pin_dyn(m, pm, pd, qp, vp)
    M = T.T @ Mp @ T
    Mi = mass_matrix_inverse(m, q)
    np.testing.assert_allclose(Mi @ M, np.eye(m.nv), atol=1e-9)
    np.testing.assert_allclose(Mi, Mi.T, atol=1e-10 * np.abs(Mi).max())


@pytest.mark.parametrize("seed", range(4))
def test_mass_matrix_inverse_any_numbering(seed):
    """The recursive M⁻¹ works on depth-first DoF ranges; models numbered otherwise (random
    attachments, several world children), deep chains and floating bases all give M⁻¹."""
    m = dqdyn.random_tree(25, seed=seed, branching=0.2 + 0.2 * seed)
    q = dqdyn.random_configuration(m, seed=seed)
    Mi = mass_matrix_inverse(m, q)
    np.testing.assert_array_equal(Mi, Mi.T)
    np.testing.assert_allclose(Mi @ dqdyn.mass_matrix(m, q), np.eye(m.nv), atol=1e-8)
    b = dqdyn.ModelBuilder("not_depth_first")
    kw = dict(mass=1.0, com=(0.1, 0.05, 0), inertia=np.diag([0.02, 0.03, 0.04]))
    b.add_body("a", joint="revolute", axis=(0, 0, 1), **kw)
    b.add_body("b", joint="spherical", xyz=(0.3, 0, 0), **kw)
    b.add_body("c", "a", "prismatic", axis=(1, 0, 0), xyz=(0.2, 0, 0), **kw)
    b.add_body("d", "b", "revolute", axis=(0, 1, 0), xyz=(0.2, 0, 0), **kw)
    b.add_body("e", "a", "cylindrical", axis=(0, 1, 0), xyz=(0, 0.2, 0), **kw)
    m = b.build()
    q = dqdyn.random_configuration(m, seed=seed)
    M = dqdyn.mass_matrix(m, q)
    np.testing.assert_allclose(mass_matrix_inverse(m, q), np.linalg.inv(M), rtol=1e-10, atol=1e-10)
    m = dqdyn.serial_chain(60)
    q = dqdyn.random_configuration(m, seed=seed)
    np.testing.assert_allclose(mass_matrix_inverse(m, q) @ dqdyn.mass_matrix(m, q), np.eye(60), atol=1e-8)


def _floating_pair():
    """Two free roots far from the origin (a four-legged tree with armature on its free joint,
    and a box), and a free joint under a body: the free-root steps of ``M⁻¹`` and the ABA."""
    b = dqdyn.ModelBuilder("floating_pair")
    kw = dict(mass=1.5, com=(0.05, -0.02, 0.01), inertia=np.diag([0.02, 0.03, 0.04]))
    b.add_body("base", joint="free", xyz=(40.0, -25.0, 3.0), armature=[0.1, 0.2, 0.3, 0.4, 0.5, 0.6],
               mass=12.0, com=(0.1, 0.0, 0.02), inertia=np.diag([0.3, 0.5, 0.6]))
    for k, (x, y) in enumerate([(0.3, 0.2), (0.3, -0.2), (-0.3, 0.2), (-0.3, -0.2)]):
        b.add_body(f"hip{k}", "base", "revolute", axis=(1, 0, 0), xyz=(x, y, 0), **kw)
        b.add_body(f"thigh{k}", f"hip{k}", "revolute", axis=(0, 1, 0), xyz=(0, 0.05, 0), **kw)
        b.add_body(f"shank{k}", f"thigh{k}", "revolute", axis=(0, 1, 0), xyz=(0, 0, -0.3), **kw)
    b.add_body("box", joint="free", xyz=(-3.0, 2.0, 1.0), **kw)
    b.add_body("lid", "box", "free", xyz=(0.1, 0.0, 0.2), **kw)
    return b.build()


@pytest.mark.parametrize("seed", range(3))
def test_free_roots_in_their_own_frame(seed):
    """Oracle: the CRBA's ``M`` (checked against Pinocchio elsewhere) and the RNEA's bias.
    ``M⁻¹`` sweeps each free root in its own frame (its motion axes the identity) and the ABA
    factors a free joint with ``S = 1``; both must give ``inv(M)`` and ``M⁻¹ (τ − h)``, with
    armature on the free joint, two floating trees and a free joint that is not a root."""
    m = _floating_pair()
    rng = np.random.default_rng(seed)
    q = dqdyn.random_configuration(m, seed=seed)
    v, tau = rng.normal(size=(2, m.nv))
    M = dqdyn.mass_matrix(m, q)
    Mi = mass_matrix_inverse(m, q)
    np.testing.assert_array_equal(Mi, Mi.T)
    np.testing.assert_allclose(Mi, np.linalg.inv(M), rtol=0, atol=1e-11 * np.abs(Mi).max())
    h = dqdyn.rnea(m, q, v, np.zeros(m.nv))
    qdd = aba(m, q, v, tau)
    np.testing.assert_allclose(qdd, np.linalg.solve(M, tau - h), rtol=0,
                               atol=1e-10 * (1 + np.abs(qdd).max()))
    np.testing.assert_allclose(dqdyn.rnea(m, q, v, qdd), tau, rtol=0, atol=1e-9 * (1 + np.abs(tau).max()))


def test_batch_equals_single(tree):
    m, pm = tree
    rng = np.random.default_rng(4)
    Q = dqdyn.random_configuration(m, size=(2, 3), seed=rng)
    V = rng.normal(size=(2, 3, m.nv))
    TAU = rng.normal(size=(3, m.nv))  # broadcasts over the first axis
    A = aba(m, Q, V, TAU)
    for i in range(2):
        for j in range(3):
            np.testing.assert_array_equal(A[i, j], aba(m, Q[i, j], V[i, j], TAU[j]))
    Mi = mass_matrix_inverse(m, Q[0])
    np.testing.assert_allclose(Mi[1], mass_matrix_inverse(m, Q[0, 1]), atol=0)


def test_errors():
    b = dqdyn.ModelBuilder("massless_leaf")
    b.add_body("l1", joint="revolute", axis=(0, 0, 1), mass=1.0, com=(0.1, 0, 0), inertia=np.eye(3) * 0.01)
    b.add_body("l2", "l1", "revolute", axis=(0, 1, 0), xyz=(0.2, 0, 0))  # no mass at all
    m = b.build()
    with pytest.raises(errors.SingularError, match="l2"):
        aba(m, np.zeros(2), np.zeros(2), np.zeros(2))
    with pytest.raises(errors.SingularError, match="l2"):
        mass_matrix_inverse(m, np.zeros(2))
    m = dqdyn.random_tree(6, seed=0)
    q = dqdyn.random_configuration(m, seed=0)
    with pytest.raises(errors.ShapeError, match="tau"):
        aba(m, q, np.zeros(m.nv), np.zeros(m.nv + 1))
    with pytest.raises(errors.NonFiniteError, match="tau"):
        aba(m, q, np.zeros(m.nv), np.full(m.nv, np.nan))
    with pytest.raises(errors.ShapeError, match="fext"):
        aba(m, q, np.zeros(m.nv), np.zeros(m.nv), fext=np.zeros((2, 6)))
    with pytest.raises(errors.ShapeError, match="prescribed"):
        hybrid_dynamics(m, q, np.zeros(m.nv), np.zeros(m.nv), np.zeros(m.nv), [True])


def test_structured_inertia_transform_equals_dense_product():
    from dqdyn.algebra.rotations import pose_from_rt, quat_from_axis_angle
    from dqdyn.dynamics.articulated import body_inertia6, transform_inertia_to_parent, transform_inertia_to_parent_dense

    m = dqdyn.random_tree(5, seed=7)
    rng = np.random.default_rng(0)
    for i in range(1, 6):
        P = np.zeros((6, 6))
        body_inertia6(m.mf, i, P)
        x = pose_from_rt(quat_from_axis_angle(rng.normal(size=3), rng.uniform(-3, 3)), rng.normal(size=3))
        a, b = np.zeros((6, 6)), np.zeros((6, 6))
        transform_inertia_to_parent(x, P, a, np.empty((4, 3, 3)))
        transform_inertia_to_parent_dense(x, P, b, np.empty(6), np.empty(6))
        np.testing.assert_allclose(a, b, atol=1e-12)


def _dense(m, pm, pd, q, v):
    qp, T = q_to_pin(m, pm, q), v_transform(m, pm, q)
    Mp, bp = _pin_dyn(m, pm, pd, qp, T @ v)
    return T.T @ Mp @ T, T.T @ (bp + Mp @ tdot_v(m, pm, q, v))


def test_constrained_aba_equals_kkt(tree):
    from dqdyn.dynamics.forward import constrained_aba

    m, pm = tree
    pd = pm.createData()
    rng = np.random.default_rng(5)
    q = dqdyn.random_configuration(m, seed=rng)
    v, tau = rng.normal(size=(2, m.nv))
    M, bias = _dense(m, pm, pd, q, v)
    A = rng.normal(size=(3, m.nv))
    b = rng.normal(size=3)
    qdd, lam = constrained_aba(m, q, v, tau, A, b)
    K = np.block([[M, -A.T], [A, np.zeros((3, 3))]])
    sol = np.linalg.solve(K, np.r_[tau - bias, b])
    np.testing.assert_allclose(qdd, sol[:m.nv], rtol=1e-8, atol=1e-8)
    np.testing.assert_allclose(lam, sol[m.nv:], rtol=1e-8, atol=1e-8)
    # a duplicated (redundant) row changes nothing; an inconsistent pair is refused
    q2, _ = constrained_aba(m, q, v, tau, np.vstack([A, A[:1]]), np.r_[b, b[:1]])
    np.testing.assert_allclose(q2, qdd, atol=1e-8)
    with pytest.raises(errors.InfeasibleError, match="inconsistent"):
        constrained_aba(m, q, v, tau, np.vstack([A, A[:1]]), np.r_[b, b[0] + 1.0])


def test_constrained_hybrid_equals_dense(tree):
    from dqdyn.dynamics.forward import constrained_hybrid_dynamics

    m, pm = tree
    pd = pm.createData()
    rng = np.random.default_rng(6)
    q = dqdyn.random_configuration(m, seed=rng)
    v, a, tau = rng.normal(size=(3, m.nv))
    M, bias = _dense(m, pm, pd, q, v)
    P = np.zeros(m.nv, bool)
    P[:4] = True
    A = rng.normal(size=(2, m.nv))
    b = rng.normal(size=2)
    qdd, tout, lam = constrained_hybrid_dynamics(m, q, v, a, tau, P, A, b)
    np.testing.assert_allclose(qdd[P], a[P])
    np.testing.assert_allclose(A @ qdd, b, atol=1e-9)
    # every DoF: M q̈ + b = τ + Aᵀ λ
    np.testing.assert_allclose(M @ qdd + bias, np.where(P, tout, tau) + A.T @ lam, atol=1e-8 * (1 + np.abs(tout).max()))
