"""Analytic RNEA / ABA derivatives on random trees: against Pinocchio (trees without planar
joints, whose velocity convention differs) and against central finite differences (all types)."""

import numpy as np
import pytest

import dqdyn
from dqdyn import errors
from dqdyn.dynamics.derivatives import aba_derivatives, rnea_derivatives
from dqdyn.dynamics.forward import aba, hybrid_dynamics

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


def _mimic_model():
    """A tree with two mimic joints (one revolute, one prismatic, scales ≠ 1, offsets ≠ 0) and
    a free root, so the chain rule meets a master with two followers and a non-trivial tangent."""
    b = dqdyn.ModelBuilder("m")
    rng = np.random.default_rng(7)

    def inertia():  # principal moments within 20 % of each other (a valid rigid body), turned
        R = np.linalg.qr(rng.normal(size=(3, 3)))[0]
        return R @ np.diag(rng.uniform(0.08, 0.12, 3)) @ R.T

    b.add_body("base", joint="free", mass=3, inertia=inertia(), com=[0.1, 0, 0.05])
    b.add_body("a", "base", "revolute", mass=1, inertia=inertia(), joint_name="ja",
               axis=[0, 0, 1], com=[0.2, 0.1, 0])
    b.add_body("b", "a", "revolute", mass=1.2, inertia=inertia(), mimic=("ja", -1.7, 0.3),
               axis=[0, 1, 0], com=[0.1, 0, 0.2])
    b.add_body("c", "base", "prismatic", mass=0.7, inertia=inertia(), joint_name="jc", axis=[1, 0, 0])
    b.add_body("d", "c", "prismatic", mass=0.4, inertia=inertia(), mimic=("jc", 0.5, -0.1),
               axis=[0, 0, 1], com=[0, 0.1, 0])
    b.add_body("e", "b", "revolute", mass=0.9, inertia=inertia(), joint_name="je", axis=[1, 0, 0])
    return b.build()


def test_mimic_derivatives_finite_differences():
    """Models with mimic joints (Panda's default load): the chain rule through
    Model.independent_mimic, against central differences of dqdyn's own mimic-aware ``rnea`` and
    ``aba`` (themselves checked against Pinocchio in test_inverse_dynamics / test_mimic_forward);
    Pinocchio's derivatives refuse mimic joints."""
    m = _mimic_model()
    assert len(m.mimic_joints) == 2
    rng = np.random.default_rng(3)
    q = dqdyn.random_configuration(m, seed=rng)
    v, a, tau = rng.normal(size=(3, m.nv))
    fext = rng.normal(size=(m.nbodies + 1, 6))
    for fe in (None, fext):
        dq, dv, M = rnea_derivatives(m, q, v, a, fext=fe)
        Dq, Dv = fd_columns(m, lambda q, v, a: dqdyn.rnea(m, q, v, a, fe), q, v, a)
        np.testing.assert_allclose(dq, Dq, atol=2e-6 * (1 + np.abs(Dq).max()))
        np.testing.assert_allclose(dv, Dv, atol=2e-6 * (1 + np.abs(Dv).max()))
        np.testing.assert_allclose(M, dqdyn.mass_matrix(m, q), atol=1e-12 * (1 + np.abs(M).max()))
        aq, av, Mi = aba_derivatives(m, q, v, tau, fext=fe)
        Dq, Dv = fd_columns(m, lambda q, v, t: aba(m, q, v, t, fe), q, v, tau)
        np.testing.assert_allclose(aq, Dq, atol=1e-5 * (1 + np.abs(Dq).max()))
        np.testing.assert_allclose(av, Dv, atol=1e-5 * (1 + np.abs(Dv).max()))
        np.testing.assert_allclose(Mi @ dqdyn.mass_matrix(m, q), np.eye(m.nv), atol=1e-10)
    # batches (and lists) give the single states' values
    Q = dqdyn.random_configuration(m, size=3, seed=rng)
    V = rng.normal(size=(3, m.nv))
    for f, x in ((rnea_derivatives, a), (aba_derivatives, tau)):
        B = f(m, Q, V, x)
        assert B[0].shape == (3, m.nv, m.nv)
        for n in range(3):
            one = f(m, Q[n].tolist(), V[n], x)
            for k in range(3):
                np.testing.assert_allclose(B[k][n], one[k], rtol=1e-12, atol=1e-12)


def test_mimic_derivatives_equal_the_independent_model_on_its_subspace():
    """Panda loaded with its mimic finger: ∂τ/∂q of the coupled model = Gᵀ (∂τ/∂q of the model
    loaded with mimic='independent', the oracle checked against Pinocchio) G."""
    import warnings

    from pinconv import ROBOTS, erd

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = dqdyn.load_urdf(erd(ROBOTS["panda"][0]))
        mind = dqdyn.load_urdf(erd(ROBOTS["panda"][0]), mimic="independent")
    assert m.mimic_joints and mind.nv == m.nv + 1
    rng = np.random.default_rng(5)
    q = dqdyn.random_configuration(m, seed=rng)
    v, a = rng.normal(size=(2, m.nv))
    G = np.vstack([np.eye(m.nv), np.eye(m.nv)[-1]])  # finger 2 = finger 1 (scale 1, offset 0)
    ours = rnea_derivatives(m, q, v, a)
    theirs = rnea_derivatives(mind, G @ q, G @ v, G @ a)
    for o, t in zip(ours, theirs):
        np.testing.assert_allclose(o, G.T @ t @ G, atol=1e-10 * (1 + np.abs(t).max()))


def test_hybrid_derivatives_refuse_mimic():
    m = _mimic_model()
    z = np.zeros(m.nv)
    with pytest.raises(errors.ModelError, match="mimic"):
        dqdyn.hybrid_dynamics_derivatives(m, dqdyn.neutral(m), z, z, z, np.ones(m.nv, bool))


@pytest.mark.parametrize("seed", [0, 1])
def test_regressor_is_the_inertial_parameter_derivative(seed):
    from dqdyn.dynamics.derivatives import inertial_parameters, joint_torque_regressor

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
    from dqdyn.dynamics.derivatives import hybrid_dynamics_derivatives

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


# ------------------------------------------------------------------ oracle: Table 5, one sweep per column
# An O(3·n·subtree) form of rnea_derivatives ([Kim2012, Table 5] differentiated
# with respect to one scalar per sweep, in body frames), kept here as an independent oracle for
# the O(n·d) world-frame kernel of the library, in plain Python over the compiled helpers.  It
# covers the planar joint, which Pinocchio's comparison cannot.
def _table5_oracle(m, q, v, a, fext=None):
    from dqdyn.algebra._core import ad6, ad6_inv, cross6, dq_mul, power6
    from dqdyn.dynamics.articulated import body_inertia6
    from dqdyn.multibody.joints import (
        PLANAR,
        joint_column,
        joint_nv,
        joint_transform,
        joint_velocity,
        joint_velocity_bias,
    )
    from dqdyn.multibody.model import (
        MF_AXIS,
        MF_OFFSET,
        MF_PITCH,
        MF_PLACEMENT,
        MF_SCALE,
        MI_IQ,
        MI_IV,
        MI_JTYPE,
        MI_PARENT,
    )

    mi, mf = m.mi, m.mf
    nb1, nv = mi.shape[0], m.nv
    q, v, a = (np.ascontiguousarray(x, dtype=float) for x in (q, v, a))
    par = [int(mi[i, MI_PARENT]) for i in range(nb1)]

    def col(i, k, qq=q):
        out = np.zeros(6)
        joint_column(mi[i, MI_JTYPE], mf[i, MF_AXIS:MF_AXIS + 3], mf[i, MF_PITCH], qq, mi[i, MI_IQ], k, out)
        return out

    def jvel(i, x):
        out = np.zeros(6)
        joint_velocity(mi[i, MI_JTYPE], mf[i, MF_AXIS:MF_AXIS + 3], mf[i, MF_PITCH], q, mi[i, MI_IQ], x,
                       mi[i, MI_IV], mf[i, MF_SCALE], out)
        return out

    def X(f, *args):
        out = np.zeros(6)
        f(*args, out)
        return out

    xl = np.zeros((nb1, 8))
    V, Vd, F, Sv, AVl, AVdl = (np.zeros((nb1, 6)) for _ in range(6))
    I6 = np.zeros((nb1, 6, 6))
    Vd[0, 3:] = -m.gravity
    for i in range(1, nb1):
        xj = np.zeros(8)
        joint_transform(mi[i, MI_JTYPE], mf[i, MF_AXIS:MF_AXIS + 3], mf[i, MF_PITCH], q, mi[i, MI_IQ],
                        mf[i, MF_SCALE], mf[i, MF_OFFSET], xj)
        dq_mul(np.ascontiguousarray(mf[i, MF_PLACEMENT:MF_PLACEMENT + 8]), xj, xl[i])
        AVl[i], AVdl[i] = X(ad6_inv, xl[i], V[par[i]]), X(ad6_inv, xl[i], Vd[par[i]])
        Sv[i] = jvel(i, v)
        V[i] = AVl[i] + Sv[i]
        Vd[i] = AVdl[i] + jvel(i, a) + X(cross6, V[i], Sv[i]) + X(
            joint_velocity_bias, mi[i, MI_JTYPE], q, mi[i, MI_IQ], v, mi[i, MI_IV])
        body_inertia6(mf, i, I6[i])
        F[i] = I6[i] @ Vd[i] + X(cross6, V[i], I6[i] @ V[i]) - (0 if fext is None else fext[i])
    for i in range(nb1 - 1, 0, -1):
        if par[i] > 0:
            F[par[i]] += X(ad6, xl[i], F[i])

    def partials(j, mm, d):
        """∂h, ∂(S q̇), ∂(S q̈) + ∂(Ṡ q̇) of joint j's coordinate / velocity / acceleration mm."""
        z = np.zeros(6)
        dh, dSv, dSa = z.copy(), z.copy(), z.copy()
        planar = mi[j, MI_JTYPE] == PLANAR
        iq, iv = mi[j, MI_IQ], mi[j, MI_IV]
        if d == 0:
            dh = col(j, mm)
            if planar and mm == 2:
                phi = q[iq + 2]
                c, s = np.cos(phi), np.sin(phi)
                dx, dy, w = v[iv], v[iv + 1], v[iv + 2]
                dSv[3:5] = -s * dx + c * dy, -c * dx - s * dy
                dSa[3:5] = (-s * a[iv] + c * a[iv + 1] - w * (c * dx + s * dy),
                            -c * a[iv] - s * a[iv + 1] - w * (-s * dx + c * dy))
        elif d == 1:
            dSv = col(j, mm)
            if planar:  # ∂(Ṡ q̇)/∂q̇_mm
                dSa = X(joint_velocity_bias, PLANAR, q, iq, v + np.eye(nv)[iv + mm], iv) - X(
                    joint_velocity_bias, PLANAR, q, iq, v, iv)
        else:
            dSa = col(j, mm)
        return dh, dSv, dSa

    out = np.zeros((3, nv, nv))
    for j in range(1, nb1):
        insub = np.zeros(nb1, bool)
        insub[j] = True
        for i in range(j + 1, nb1):
            insub[i] = insub[par[i]]
        sub = [i for i in range(nb1) if insub[i]]
        for mm in range(joint_nv(mi[j, MI_JTYPE])):
            c = mi[j, MI_IV] + mm
            for d in range(3):
                dh, dSv, dSa = partials(j, mm, d)
                dV, dVd, dF = np.zeros((nb1, 6)), np.zeros((nb1, 6)), np.zeros((nb1, 6))
                for i in sub:  # Table 5, forward
                    if i == j:
                        dV[i] = -X(cross6, dh, AVl[i]) + dSv
                        dVd[i] = -X(cross6, dh, AVdl[i]) + dSa + X(cross6, V[i], dSv)
                    else:
                        dV[i] = X(ad6_inv, xl[i], dV[par[i]])
                        dVd[i] = X(ad6_inv, xl[i], dVd[par[i]])
                    dVd[i] += X(cross6, dV[i], Sv[i])
                    dF[i] = I6[i] @ dVd[i] + X(cross6, dV[i], I6[i] @ V[i]) + X(cross6, V[i], I6[i] @ dV[i])
                for i in sub[::-1]:  # Table 5, backward over the subtree
                    if i != j:
                        dF[par[i]] += X(ad6, xl[i], dF[i])
                for i in sub:
                    for k in range(joint_nv(mi[i, MI_JTYPE])):
                        out[d, mi[i, MI_IV] + k, c] += power6(col(i, k), dF[i])
                if d == 0 and mi[j, MI_JTYPE] == PLANAR and mm == 2:  # ⟨∂S, F⟩
                    phi = q[mi[j, MI_IQ] + 2]
                    for k, dS in enumerate(([0, 0, 0, -np.sin(phi), -np.cos(phi), 0],
                                            [0, 0, 0, np.cos(phi), -np.sin(phi), 0])):
                        out[d, mi[j, MI_IV] + k, c] += power6(np.array(dS, float), F[j])
                w = dF[j] + X(cross6, dh, F[j])  # up the ancestors (errata F9)
                i = j
                while par[i] > 0:
                    w = X(ad6, xl[i], w)
                    i = par[i]
                    for k in range(joint_nv(mi[i, MI_JTYPE])):
                        out[d, mi[i, MI_IV] + k, c] += power6(col(i, k), w)
    return out[0], out[1], out[2]


@pytest.mark.parametrize("types", [None, ("planar",), ("planar", "spherical", "free"),
                                   ("cylindrical", "helical", "prismatic")])
@pytest.mark.parametrize("with_fext", [False, True])
def test_derivatives_match_table5_oracle_all_joint_types(types, with_fext):
    kw = {} if types is None else {"joint_types": types}
    m = dqdyn.random_tree(8, seed=5, **kw)
    rng = np.random.default_rng(5)
    q = dqdyn.random_configuration(m, seed=rng)
    v, a, tau = rng.normal(size=(3, m.nv))
    fext = rng.normal(size=(m.nbodies + 1, 6)) if with_fext else None
    ours = rnea_derivatives(m, q, v, a, fext=fext)
    ref = _table5_oracle(m, q, v, a, fext)
    for A, B in zip(ours, ref):
        np.testing.assert_allclose(A, B, atol=1e-10 * (1 + np.abs(B).max()))
    # forward dynamics: −M⁻¹ ∂τ/∂(q, v) at q̈ = FD(q, v, τ)
    qdd = aba(m, q, v, tau, fext=fext)
    dq, dv, Minv = aba_derivatives(m, q, v, tau, fext=fext)
    rq, rv, M = _table5_oracle(m, q, v, qdd, fext)
    np.testing.assert_allclose(Minv @ M, np.eye(m.nv), atol=1e-9)
    np.testing.assert_allclose(dq, -np.linalg.solve(M, rq), atol=1e-9 * (1 + np.abs(dq).max()))
    np.testing.assert_allclose(dv, -np.linalg.solve(M, rv), atol=1e-9 * (1 + np.abs(dv).max()))


def test_derivatives_batch_broadcast_and_fext_equal_single_calls():
    m = dqdyn.random_tree(6, joint_types=("planar", "revolute", "spherical", "free"), seed=7)
    rng = np.random.default_rng(7)
    Q = dqdyn.random_configuration(m, size=(2, 2), seed=rng)
    v = rng.normal(size=m.nv)  # broadcast against Q's batch
    A = rng.normal(size=(2, 2, m.nv))
    FE = rng.normal(size=(2, 1, m.nbodies + 1, 6))
    for f in (rnea_derivatives, aba_derivatives):
        out = f(m, Q, v, A, fext=FE)
        out0 = f(m, Q, v, A)
        for X in out + out0:
            assert X.shape == (2, 2, m.nv, m.nv)
        for n0 in range(2):
            for n1 in range(2):
                one = f(m, Q[n0, n1], v, A[n0, n1], fext=FE[n0, 0])
                one0 = f(m, list(Q[n0, n1]), list(v), list(A[n0, n1]))  # general (non-fast) path
                # equal to round-off: the batch and single-state kernels are compiled separately,
                # and where the CPU has FMA, LLVM may contract a different set of multiply-adds in
                # each (seen on an AVX/FMA machine without AVX2: 2e-12 in an M⁻¹ entry near 0
                # of a matrix whose largest entry is 93), so the absolute bar scales with the matrix
                for X, Y in zip(out, one):
                    np.testing.assert_allclose(X[n0, n1], Y, atol=1e-13 * (1 + np.abs(Y).max()))
                for X, Y in zip(out0, one0):
                    np.testing.assert_allclose(X[n0, n1], Y, atol=1e-13 * (1 + np.abs(Y).max()))


def test_derivatives_error_statuses():
    m = dqdyn.random_tree(4, joint_types=("spherical",), seed=1)
    q = dqdyn.random_configuration(m, seed=1)
    z = np.zeros(m.nv)
    bad = z.copy()
    bad[0] = np.nan
    for f in (rnea_derivatives, aba_derivatives):
        with pytest.raises(errors.NonFiniteError):
            f(m, q, bad, z)
        with pytest.raises(errors.NonFiniteError):
            f(m, q, z, bad)
        with pytest.raises(errors.ShapeError):
            f(m, q, z, z[:-1])
        with pytest.raises(errors.ShapeError):
            f(m, q[:-1], z, z)
        with pytest.raises(errors.NonFiniteError, match="batch element 1"):
            f(m, np.stack([q, q]), np.stack([z, bad]), z)
        qn = q.copy()
        qn[m.q_slice(m.joint_names_all[1]).start] += 0.5
        with pytest.raises(errors.NotUnitError):
            f(m, qn, z, z)
        with pytest.raises(errors.ShapeError):
            f(m, q, z, z, fext=np.zeros((m.nbodies, 6)))
    b = dqdyn.ModelBuilder("m")
    b.add_body("a", joint="revolute", mass=1, inertia=np.eye(3) * 0.1)
    b.add_body("b", "a", "revolute", mass=0, inertia=np.zeros((3, 3)))
    m0 = b.build()
    with pytest.raises(errors.SingularError, match="mass matrix"):
        aba_derivatives(m0, np.zeros(2), np.zeros(2), np.zeros(2))


def test_mimic_derivatives_compiled_chain_rule_equals_the_numpy_one():
    """The compiled chain rule (derivatives._mimic_*_entry through the call gate) against the
    numpy one it replaced (Gᵀ D G with numpy products around the independent model's kernel,
    itself checked by finite differences above): equal to round-off, single states and a small
    batch; the gate path did run (its address was set)."""
    from dqdyn.dynamics.derivatives import fronts as DV

    m = _mimic_model()
    rng = np.random.default_rng(11)
    Q = dqdyn.random_configuration(m, size=3, seed=rng)
    V, X = rng.normal(size=(2, 3, m.nv))
    for f, ref in ((rnea_derivatives, DV._mimic_rnea_derivatives),
                   (aba_derivatives, DV._mimic_aba_derivatives)):
        B = f(m, Q, V, X)
        for n in range(3):
            got, want = f(m, Q[n], V[n], X[n]), ref(m, Q[n], V[n], X[n], None)
            for g, w, b in zip(got, want, B):
                np.testing.assert_allclose(g, w, rtol=0, atol=1e-10 * (1 + np.abs(w).max()))
                np.testing.assert_array_equal(b[n], g)
    assert DV._MIMIC_RNEA_D_C and DV._MIMIC_ABA_D_C
    bad = Q[0].copy()
    bad[0] = np.nan
    with pytest.raises(dqdyn.errors.NonFiniteError):
        aba_derivatives(m, bad, V[0], X[0])


ROUTE_CASES = [(6, ("revolute",)), (7, ("spherical", "revolute")), (14, ("revolute", "prismatic")),
               (18, ("revolute", "prismatic")), (9, NO_PLANAR)]


def test_route_cases_cover_the_three_inverse_routes():
    """The dense inverse (nv ≤ CHOL_MINV_UPTO), the inverse on the tree's sparsity pattern
    (nv · nnz(L) ≤ TREE_MINV_WORK) and the recursive inverse (above it) each take a case."""
    from dqdyn._engine.linalg import tree_nnz
    from dqdyn.dynamics.derivatives import kernels as DV
    from dqdyn.multibody.model import dof_parents

    routes = set()
    for n, t in ROUTE_CASES:
        m = dqdyn.random_tree(n, joint_types=t, seed=n)
        par = np.empty(m.nv, dtype=np.int64)
        assert dof_parents(m.mi, par)
        routes.add("dense" if m.nv <= DV.CHOL_MINV_UPTO else
                   "tree" if m.nv * tree_nnz(par, m.nv) <= DV.TREE_MINV_WORK else "recursive")
    assert routes == {"dense", "tree", "recursive"}


@pytest.mark.parametrize("nbodies, types", ROUTE_CASES)
def test_aba_derivatives_all_inverse_routes_match_pinocchio(nbodies, types):
    """``M⁻¹`` from the sweep's own ``M`` by ``linalg.spd_inverse`` (nv ≤ CHOL_MINV_UPTO) or
    ``linalg.tree_spd_inverse`` (small trees), and from the recursive inverse (above): each
    route equals Pinocchio's ``computeABADerivatives``, ``∂q̈/∂τ`` exactly
    symmetric; the cases cover the three (`test_route_cases_cover_the_three_inverse_routes`)."""
    m = dqdyn.random_tree(nbodies, joint_types=types, seed=nbodies)
    pm, _ = pin_from_model(m)
    pd = pm.createData()
    rng = np.random.default_rng(nbodies)
    q = dqdyn.random_configuration(m, seed=rng)
    v, tau = rng.normal(size=(2, m.nv))
    T = v_transform(m, pm, q)
    pin.computeABADerivatives(pm, pd, q_to_pin(m, pm, q), T @ v, T @ tau)
    got = aba_derivatives(m, q, v, tau)
    for ours, theirs in zip(got, (pd.ddq_dq, pd.ddq_dv, pd.Minv)):
        np.testing.assert_allclose(ours, T.T @ theirs @ T, rtol=0, atol=1e-9 * (1 + np.abs(theirs).max()))
    np.testing.assert_array_equal(got[2], got[2].T)
    batch = aba_derivatives(m, np.stack([q, q]), np.stack([v, v]), np.stack([tau, tau]))
    for g, b in zip(got, batch):
        np.testing.assert_array_equal(b[1], g)


def test_spd_inverse_against_numpy_and_refusals():
    """``linalg.spd_inverse``: numpy's inverse to round-off, exactly symmetric, and False (no
    result) for an indefinite, a singular and a NaN matrix."""
    from dqdyn._engine.linalg import spd_inverse

    rng = np.random.default_rng(5)
    for n in (1, 2, 6, 9, 16):
        B = rng.normal(size=(n, n))
        A = B @ B.T + 0.1 * np.eye(n)
        L, out = np.zeros((n, n)), np.empty((n, n))
        assert spd_inverse(A, n, L, out)
        ref = np.linalg.inv(A)
        np.testing.assert_allclose(out, ref, rtol=0, atol=1e-11 * np.abs(ref).max())
        np.testing.assert_array_equal(out, out.T)
    for A in (np.diag([1.0, -1.0]), np.zeros((2, 2)), np.array([[1.0, np.nan], [np.nan, 1.0]])):
        assert not spd_inverse(A, 2, np.zeros((2, 2)), np.empty((2, 2)))


def test_cholesky_with_reciprocal_diagonal_against_scipy():
    """``linalg.chol_factor_r`` and its solves (the Udwadia–Kalaba kernel's: no division but the
    n reciprocals) against scipy's Cholesky factor and triangular solves, and False for an
    indefinite, a singular and a NaN matrix."""
    import scipy.linalg as sl

    from dqdyn._engine.linalg import chol_factor_r, lower_solve_r, lower_t_solve_r

    rng = np.random.default_rng(6)
    for n in (1, 3, 7, 12):
        B = rng.normal(size=(n, n))
        A = B @ B.T + 0.1 * np.eye(n)
        L, d = np.zeros((n, n)), np.empty(n)
        assert chol_factor_r(A, n, L, d)
        ref = sl.cholesky(A, lower=True)
        np.testing.assert_allclose(np.tril(L), ref, rtol=0, atol=1e-13 * np.abs(ref).max())
        np.testing.assert_array_equal(d, 1.0 / np.diag(L))
        x = rng.normal(size=n)
        y = x.copy()
        lower_solve_r(L, d, n, y)
        np.testing.assert_allclose(y, sl.solve_triangular(ref, x, lower=True), rtol=1e-11, atol=1e-12)
        y = x.copy()
        lower_t_solve_r(L, d, n, y)
        np.testing.assert_allclose(y, sl.solve_triangular(ref, x, lower=True, trans="T"), rtol=1e-11, atol=1e-12)
    for A in (np.diag([1.0, -1.0]), np.zeros((2, 2)), np.array([[1.0, np.nan], [np.nan, 1.0]])):
        assert not chol_factor_r(A, 2, np.zeros((2, 2)), np.empty(2))


def _chain(n, seed, branch_at=None):
    """A chain of ``n`` 1-DoF links (revolute and prismatic, tilted axes), optionally with a
    second 1-DoF branch of n/2 links from link ``branch_at``."""
    rng = np.random.default_rng(seed)
    b = dqdyn.ModelBuilder(f"chain{n}")

    def link(name, parent, k):
        jt = "prismatic" if k % 5 == 3 else "revolute"
        b.add_body(name, parent, jt, axis=tuple(rng.normal(size=3)), xyz=tuple(rng.uniform(-0.2, 0.2, 3)),
                   rpy=tuple(rng.uniform(-1, 1, 3)), mass=float(rng.uniform(0.5, 2)),
                   com=tuple(rng.uniform(-0.1, 0.1, 3)), inertia=np.diag(rng.uniform(0.03, 0.05, 3)))

    parent = "world"
    for k in range(n):
        link(f"l{k}", parent, k)
        parent = f"l{k}"
    if branch_at is not None:
        parent = f"l{branch_at}"
        for k in range(n // 2):
            link(f"b{k}", parent, k)
            parent = f"b{k}"
    return b.build()


@pytest.mark.parametrize("n, branch_at", [(15, None), (40, None), (30, 16)])
def test_derivatives_on_long_chains_match_pinocchio(n, branch_at):
    """Long runs of 1-DoF links, where the backward sweep takes a link's column over the
    ancestors together with its parent's (``derivatives.PAIR_FROM``; a branch makes a parent
    whose child is not the next body): ``rnea_derivatives`` and ``aba_derivatives`` equal
    Pinocchio's ``computeRNEADerivatives`` / ``computeABADerivatives``."""
    from dqdyn.dynamics.derivatives import _sweeps as DV

    m = _chain(n, seed=n, branch_at=branch_at)
    assert m.nv > DV.PAIR_FROM + 1
    pm, _ = pin_from_model(m)
    pd = pm.createData()
    rng = np.random.default_rng(n)
    q = dqdyn.random_configuration(m, seed=rng)
    v, a = rng.normal(size=(2, m.nv))
    qp = q_to_pin(m, pm, q)  # (1-DoF joints only: the same velocity coordinates)
    pin.computeRNEADerivatives(pm, pd, qp, v, a)
    M = pd.M.copy()
    M[np.tril_indices(m.nv, -1)] = M.T[np.tril_indices(m.nv, -1)]
    for ours, theirs in zip(rnea_derivatives(m, q, v, a), (pd.dtau_dq, pd.dtau_dv, M)):
        np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-9 * (1 + np.abs(theirs).max()))
    pin.computeABADerivatives(pm, pd, qp, v, a)
    for ours, theirs in zip(aba_derivatives(m, q, v, a), (pd.ddq_dq, pd.ddq_dv, pd.Minv)):
        np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-8 * (1 + np.abs(theirs).max()))
