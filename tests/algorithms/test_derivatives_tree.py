"""Analytic RNEA / ABA derivatives on random trees: against Pinocchio (trees without planar
joints, whose velocity convention differs) and against central finite differences (all types)."""

import numpy as np
import pytest

import dqdyn
from dqdyn import errors
from dqdyn.algorithms.derivatives import aba_derivatives, rnea_derivatives
from dqdyn.algorithms.forward import aba, hybrid_dynamics

from pinconv import pin, pin_from_model, q_to_pin, v_transform

NO_PLANAR = ("revolute", "prismatic", "helical", "cylindrical", "spherical", "free")


def rnea_ref(m, q, v, a):
    """τ from hybrid dynamics with every DoF prescribed (the RNEA sweep of Table 4)."""
    return hybrid_dynamics(m, q, v, a, np.zeros(m.nv), np.ones(m.nv, bool))[1]


def fd_columns(m, f, q, v, a, h=1e-6):
    nv = m.nv
    Dq = np.empty((nv, nv))
    Dv = np.empty((nv, nv))
    for k in range(nv):
        e = np.zeros(nv)
        e[k] = h
        Dq[:, k] = (f(dqdyn.integrate(m, q, e), v, a) - f(dqdyn.integrate(m, q, -e), v, a)) / (2 * h)
        Dv[:, k] = (f(q, v + e, a) - f(q, v - e, a)) / (2 * h)
    return Dq, Dv


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_rnea_derivatives_finite_differences_all_joint_types(seed):
    m = dqdyn.random_tree(9, seed=seed)
    rng = np.random.default_rng(seed)
    q = dqdyn.random_configuration(m, seed=rng)
    v, a = rng.normal(size=(2, m.nv))
    dq, dv, da = rnea_derivatives(m, q, v, a)
    Dq, Dv = fd_columns(m, lambda q, v, a: rnea_ref(m, q, v, a), q, v, a)
    scale = 1 + np.abs(Dq).max()
    np.testing.assert_allclose(dq, Dq, atol=2e-6 * scale)
    np.testing.assert_allclose(dv, Dv, atol=2e-6 * scale)
    # ∂τ/∂a = M: columns of τ(a + e_k) − τ(a)
    M = np.column_stack([rnea_ref(m, q, v, a + e) - rnea_ref(m, q, v, a) for e in np.eye(m.nv)])
    np.testing.assert_allclose(da, M, atol=1e-9 * np.abs(M).max())


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_rnea_derivatives_match_pinocchio(seed):
    m = dqdyn.random_tree(12, joint_types=NO_PLANAR, seed=seed)
    pm, _ = pin_from_model(m)
    pd = pm.createData()
    rng = np.random.default_rng(seed)
    q = dqdyn.random_configuration(m, seed=rng)
    v, a = rng.normal(size=(2, m.nv))
    T = v_transform(m, pm, q)
    fext = rng.normal(size=(m.nbodies + 1, 6))
    fp = [pin.Force.Zero() for _ in range(pm.njoints)]
    for i in range(1, m.nbodies + 1):
        fp[pm.getJointId(m.joint_names_all[i])] = pin.Force(fext[i, :3], fext[i, 3:])
    dqp, dvp, dap = pin.computeRNEADerivatives(pm, pd, q_to_pin(m, pm, q), T @ v, T @ a, fp)
    dq, dv, da = rnea_derivatives(m, q, v, a, fext=fext)
    for ours, theirs in ((dq, dqp), (dv, dvp), (da, dap)):
        theirs = np.triu(theirs) + np.triu(theirs, 1).T if theirs is dap else theirs
        np.testing.assert_allclose(ours, T.T @ theirs @ T, atol=1e-9 * (1 + np.abs(theirs).max()))


@pytest.mark.parametrize("seed", [0, 1])
def test_aba_derivatives_match_pinocchio_and_fd(seed):
    m = dqdyn.random_tree(10, joint_types=NO_PLANAR, seed=seed)
    pm, _ = pin_from_model(m)
    pd = pm.createData()
    rng = np.random.default_rng(seed + 10)
    q = dqdyn.random_configuration(m, seed=rng)
    v, tau = rng.normal(size=(2, m.nv))
    T = v_transform(m, pm, q)
    pin.computeABADerivatives(pm, pd, q_to_pin(m, pm, q), T @ v, T @ tau)
    dq, dv, dt = aba_derivatives(m, q, v, tau)
    Minv = pd.Minv
    for ours, theirs in ((dq, pd.ddq_dq), (dv, pd.ddq_dv), (dt, Minv)):
        np.testing.assert_allclose(ours, T.T @ theirs @ T, atol=1e-8 * (1 + np.abs(theirs).max()))
    Dq, Dv = fd_columns(m, lambda q, v, t: aba(m, q, v, t), q, v, tau)
    np.testing.assert_allclose(dq, Dq, atol=1e-5 * (1 + np.abs(Dq).max()))
    np.testing.assert_allclose(dv, Dv, atol=1e-5 * (1 + np.abs(Dv).max()))


def test_aba_derivatives_planar_fd_and_batch():
    m = dqdyn.random_tree(7, joint_types=("planar", "revolute", "free"), seed=4)
    rng = np.random.default_rng(4)
    Q = dqdyn.random_configuration(m, size=3, seed=rng)
    V, TAU = rng.normal(size=(2, 3, m.nv))
    dq, dv, dt = aba_derivatives(m, Q, V, TAU)
    assert dq.shape == (3, m.nv, m.nv)
    for n in range(3):
        Dq, Dv = fd_columns(m, lambda q, v, t: aba(m, q, v, t), Q[n], V[n], TAU[n])
        np.testing.assert_allclose(dq[n], Dq, atol=1e-5 * (1 + np.abs(Dq).max()))
        np.testing.assert_allclose(dv[n], Dv, atol=1e-5 * (1 + np.abs(Dv).max()))
        one = aba_derivatives(m, Q[n], V[n], TAU[n])
        np.testing.assert_allclose(one[0], dq[n], atol=1e-12)


def test_mimic_refused():
    b = dqdyn.ModelBuilder("m")
    b.add_body("a", joint="revolute", mass=1, inertia=np.eye(3) * 0.1, joint_name="ja")
    b.add_body("b", "a", "revolute", mass=1, inertia=np.eye(3) * 0.1, mimic=("ja", 2.0, 0.0))
    m = b.build()
    with pytest.raises(errors.ModelError, match="mimic"):
        rnea_derivatives(m, np.zeros(1), np.zeros(1), np.zeros(1))


@pytest.mark.parametrize("seed", [0, 1])
def test_regressor_is_the_inertial_parameter_derivative(seed):
    from dqdyn.algorithms.derivatives import inertial_parameters, joint_torque_regressor

    m = dqdyn.random_tree(8, seed=seed)  # all joint types, mimic-free
    rng = np.random.default_rng(seed)
    q = dqdyn.random_configuration(m, seed=rng)
    v, a = rng.normal(size=(2, m.nv))
    Y = joint_torque_regressor(m, q, v, a)
    pi = inertial_parameters(m)
    np.testing.assert_allclose(Y @ pi.ravel(), rnea_ref(m, q, v, a), atol=1e-10 * (1 + np.abs(Y).max()))
    # against Pinocchio's regressor on a planar-free tree
    m2 = dqdyn.random_tree(8, joint_types=NO_PLANAR, seed=seed)
    pm, _ = pin_from_model(m2)
    pd = pm.createData()
    q2 = dqdyn.random_configuration(m2, seed=rng)
    v2, a2 = rng.normal(size=(2, m2.nv))
    T = v_transform(m2, pm, q2)
    Yp = pin.computeJointTorqueRegressor(pm, pd, q_to_pin(m2, pm, q2), T @ v2, T @ a2)
    # pin's parameter blocks follow its (depth-first) joint order
    Y2 = joint_torque_regressor(m2, q2, v2, a2)
    for i in range(1, m2.nbodies + 1):
        jid = pm.getJointId(m2.joint_names_all[i])
        np.testing.assert_allclose(Y2[:, 10 * (i - 1): 10 * i], T.T @ Yp[:, 10 * (jid - 1): 10 * jid],
                                   atol=1e-9 * (1 + np.abs(Yp).max()))
    np.testing.assert_allclose(inertial_parameters(m2)[0], pm.inertias[pm.getJointId(m2.joint_names_all[1])].toDynamicParameters(), atol=1e-12)


@pytest.mark.parametrize("seed", [0, 1])
def test_hybrid_dynamics_derivatives_finite_differences(seed):
    from dqdyn.algorithms.derivatives import hybrid_dynamics_derivatives

    m = dqdyn.random_tree(8, seed=seed)
    rng = np.random.default_rng(seed + 20)
    q = dqdyn.random_configuration(m, seed=rng)
    v, a, tau = rng.normal(size=(3, m.nv))
    P = rng.random(m.nv) < 0.4
    P[0] = True
    P[-1] = False

    def y(q, v, u):
        qdd, t = hybrid_dynamics(m, q, v, u, u, P)
        return np.where(P, t, qdd)

    u = np.where(P, a, tau)
    dq, dv, du = hybrid_dynamics_derivatives(m, q, v, u, u, P)
    Dq, Dv = fd_columns(m, y, q, v, u)
    h = 1e-6
    Du = np.column_stack([(y(q, v, u + e) - y(q, v, u - e)) / (2 * h) for e in np.eye(m.nv) * h])
    for A, B in ((dq, Dq), (dv, Dv), (du, Du)):
        np.testing.assert_allclose(A, B, atol=1e-5 * (1 + np.abs(B).max()))
