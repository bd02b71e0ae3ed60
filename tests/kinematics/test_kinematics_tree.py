"""Kinematics on random trees with every joint type: against Pinocchio (same tree built
joint by joint) and against finite differences."""

import numpy as np
import pytest

import dqdyn
from dqdyn import errors
from dqdyn.algebra._core import dq_mul
from dqdyn.algebra.rotations import matrix_from_pose
from dqdyn.kinematics import forward as K
from dqdyn.kinematics import jacobians as JK
from dqdyn.multibody.joints import joint_transform
from dqdyn.multibody.model import MF_AXIS, MF_OFFSET, MF_PITCH, MF_PLACEMENT, MF_SCALE, MI_IQ, MI_JTYPE, MI_PARENT

from pinconv import pin, pin_from_model, pin_jac_to_ours, q_to_pin, tdot_v, v_transform

SEEDS = [0, 1, 2, 3]
PIN_FRAMES = {"body": pin.LOCAL, "spatial": pin.WORLD, "world_aligned": pin.LOCAL_WORLD_ALIGNED}


@pytest.fixture(scope="module", params=SEEDS)
def tree(request):
    m = dqdyn.random_tree(14, seed=request.param)
    pm, ids = pin_from_model(m)
    return m, pm, ids


def test_every_joint_type_present(tree):
    m = tree[0]
    assert set(int(t) for t in m.joint_type[1:]) == set(range(1, 8))


def test_forward_kinematics_matches_pinocchio(tree):
    m, pm, ids = tree
    pd = pm.createData()
    rng = np.random.default_rng(0)
    for _ in range(5):
        q = K.random_configuration(m, seed=rng)
        X = K.forward_kinematics(m, q)
        pin.forwardKinematics(pm, pd, q_to_pin(m, pm, q))
        for i in range(1, m.nbodies + 1):
            T = matrix_from_pose(X[i])
            np.testing.assert_allclose(T, pd.oMi[ids[i]].homogeneous, atol=1e-12)
            r = np.linalg.norm(X[i, :4])
            assert abs(r - 1) < 1e-13 and abs(X[i, :4] @ X[i, 4:]) < 1e-13


@pytest.mark.parametrize("frame", ["body", "spatial", "world_aligned"])
def test_jacobians_and_derivative_match_pinocchio(tree, frame):
    m, pm, ids = tree
    pd = pm.createData()
    rng = np.random.default_rng(1)
    for _ in range(3):
        q = K.random_configuration(m, seed=rng)
        v = rng.normal(size=m.nv)
        qp = q_to_pin(m, pm, q)
        T = v_transform(m, pm, q)
        vp = T @ v
        pin.computeJointJacobians(pm, pd, qp)
        pin.computeJointJacobiansTimeVariation(pm, pd, qp, vp)
        for body in (m.nbodies, m.nbodies // 2, 3):
            J = JK.twist_jacobian(m, q, body, frame)
            Jp = pin_jac_to_ours(pin.getJointJacobian(pm, pd, ids[body], PIN_FRAMES[frame])) @ T
            np.testing.assert_allclose(J, Jp, atol=1e-11)
            J2, Jd = JK.jacobian_time_derivative(m, q, v, body, frame)
            np.testing.assert_allclose(J2, J, atol=1e-14)
            # pin: d/dt (J_pin) ; ours J = J_pin T  ->  J̇ = J̇_pin T + J_pin Ṫ
            Jdp = pin.getJointJacobianTimeVariation(pm, pd, ids[body], PIN_FRAMES[frame])
            # Ṫ column action: compare J̇ v instead of the matrices (Ṫ v is available)
            lhs = Jd @ v
            rhs = pin_jac_to_ours(Jdp) @ vp + pin_jac_to_ours(
                pin.getJointJacobian(pm, pd, ids[body], PIN_FRAMES[frame])) @ tdot_v(m, pm, q, v)
            np.testing.assert_allclose(lhs, rhs, atol=1e-10)
            # J̇ v without J̇ (jacobian_drift_kernel, the constraint rows' drift)
            np.testing.assert_allclose(JK.jacobian_dot_times_v(m, q, v, body, frame), rhs, atol=1e-10)


def test_twists_equal_finite_differences_of_poses(tree):
    m = tree[0]
    rng = np.random.default_rng(2)
    q = K.random_configuration(m, seed=rng)
    v = rng.normal(size=m.nv)
    h = 1e-6
    X1 = K.forward_kinematics(m, K.integrate(m, q, v, h))
    X0 = K.forward_kinematics(m, K.integrate(m, q, v, -h))
    X = K.forward_kinematics(m, q)
    Tb = K.body_twists(m, q, v, "body")
    Ts = K.body_twists(m, q, v, "spatial")
    from dqdyn.algebra.rotations import quat_conj, quat_multiply

    for i in range(1, m.nbodies + 1):
        xd = (X1[i] - X0[i]) / (2 * h)
        xc = np.r_[quat_conj(X[i, :4]), quat_conj(X[i, 4:])]
        # body twist ξ^b = 2 x* ẋ  ([Silva2022, eq. (4)])
        P = quat_multiply(xc[:4], xd[:4])
        D = quat_multiply(xc[:4], xd[4:]) + quat_multiply(xc[4:], xd[:4])
        np.testing.assert_allclose(Tb[i], 2 * np.r_[P[1:], D[1:]], atol=1e-7)
        # spatial twist ξ^0 = 2 ẋ x*
        P = quat_multiply(xd[:4], xc[:4])
        D = quat_multiply(xd[:4], xc[4:]) + quat_multiply(xd[4:], xc[:4])
        np.testing.assert_allclose(Ts[i], 2 * np.r_[P[1:], D[1:]], atol=1e-7)


def test_pose_jacobian_matches_finite_difference(tree):
    m = tree[0]
    rng = np.random.default_rng(3)
    q = K.random_configuration(m, seed=rng)
    v = rng.normal(size=m.nv)
    h = 1e-6
    Jx = JK.pose_jacobian(m, q, m.nbodies)
    xd = (K.frame_pose(m, K.integrate(m, q, v, h), m.nbodies)
          - K.frame_pose(m, K.integrate(m, q, v, -h), m.nbodies)) / (2 * h)
    np.testing.assert_allclose(Jx @ v, xd, atol=1e-7)


def test_integrate_difference_roundtrip_and_unit(tree):
    m = tree[0]
    rng = np.random.default_rng(4)
    q = K.random_configuration(m, seed=rng)
    v = rng.normal(size=m.nv)
    q1 = K.integrate(m, q, v, 0.7)
    np.testing.assert_allclose(K.difference(m, q, q1), 0.7 * v, atol=1e-11)
    # integrating with pin gives the same configuration (pin's integrate is the exact exp too)
    pm = tree[1]
    qp1 = pin.integrate(pm, q_to_pin(m, pm, q), v_transform(m, pm, q) @ v * 0.7)
    # planar joints differ: pin integrates the body-frame twist, dqdyn integrates q̇ = v
    if not np.any(m.joint_type == dqdyn.multibody.joints.PLANAR):
        np.testing.assert_allclose(q_to_pin(m, pm, q1), qp1, atol=1e-10)


def test_batch_equals_single_calls(tree):
    m = tree[0]
    Q = K.random_configuration(m, size=(3, 4), seed=5)
    V = np.random.default_rng(5).normal(size=(3, 4, m.nv))
    X = K.forward_kinematics(m, Q)
    J = JK.twist_jacobian(m, Q, m.nbodies, "world_aligned")
    Jd = JK.jacobian_time_derivative(m, Q, V, m.nbodies, "body")[1]
    assert X.shape == (3, 4, m.nbodies + 1, 8) and J.shape == (3, 4, 6, m.nv)
    for a in range(3):
        for b in range(4):
            np.testing.assert_array_equal(X[a, b], K.forward_kinematics(m, Q[a, b]))
            np.testing.assert_array_equal(J[a, b], JK.twist_jacobian(m, Q[a, b], m.nbodies, "world_aligned"))
            np.testing.assert_allclose(Jd[a, b], JK.jacobian_time_derivative(m, Q[a, b], V[a, b], m.nbodies, "body")[1], atol=0)


def test_bad_input_errors():
    m = dqdyn.random_tree(8, seed=0)
    q = K.random_configuration(m, seed=0)
    with pytest.raises(errors.ShapeError, match=r"q must have shape"):
        K.forward_kinematics(m, q[:-1])
    bad = q.copy()
    bad[0] = np.nan
    with pytest.raises(errors.NonFiniteError, match="q contains NaN"):
        K.forward_kinematics(m, bad)
    with pytest.raises(errors.NonFiniteError, match="q contains NaN"):
        JK.joint_jacobians(m, bad)
    with pytest.raises(errors.ShapeError, match=r"q must have shape"):
        JK.joint_jacobians(m, q[:-1])
    # break a quaternion
    i = int(np.flatnonzero(m.joint_type == dqdyn.multibody.joints.SPHERICAL)[0])
    bad = q.copy()
    bad[m.idx_q[i]] *= 1.1
    with pytest.raises(errors.NotUnitError, match=m.joint_names_all[i]):
        K.forward_kinematics(m, bad)
    with pytest.raises(errors.NotUnitError, match="batch element 1"):
        K.forward_kinematics(m, np.stack([q, bad]))
    with pytest.raises(errors.UnknownNameError, match="nope"):
        JK.twist_jacobian(m, q, "nope")
    with pytest.raises(errors.ShapeError, match="frame must be one of"):
        JK.twist_jacobian(m, q, 1, "local")
    with pytest.raises(errors.NonFiniteError, match="v contains"):
        K.body_twists(m, q, np.full(m.nv, np.inf))
    np.testing.assert_allclose(K.forward_kinematics(m, K.normalize_configuration(m, bad)),
                               K.forward_kinematics(m, K.normalize_configuration(m, bad)))
    assert K.normalize_configuration(m, bad).shape == (m.nq,)


def test_neutral_is_identity_poses_for_chain():
    m = dqdyn.serial_chain(5, seed=None)
    X = K.forward_kinematics(m, K.neutral(m))
    z = np.array([matrix_from_pose(x)[2, 3] for x in X])
    np.testing.assert_allclose(z, [0, 0, 0.3, 0.6, 0.9, 1.2], atol=1e-14)


def test_jacobian_derivative_reads_its_path_only_but_checks_the_whole_state(tree):
    """J̇ of a frame computes the poses and twists of its supporting bodies only
    (jacobians._path_twists): the velocities of joints off that path leave J and J̇ unchanged
    to the bit, and a NaN or inf anywhere in q or v is still refused, as when every body's
    twist was computed."""
    m = tree[0]
    rng = np.random.default_rng(5)
    q = K.random_configuration(m, seed=rng)
    v = rng.normal(size=m.nv)
    from dqdyn.multibody.model import MI_IQ, MI_IV, MI_PARENT

    parent = m.mi[:, MI_PARENT]
    body = m.nbodies
    path = {body}
    while parent[body] > 0:
        body = int(parent[body])
        path.add(body)
    off = [i for i in range(1, m.nbodies + 1) if i not in path]
    assert off  # a tree: some bodies are on another branch
    J, Jd = JK.jacobian_time_derivative(m, q, v, m.nbodies, "spatial")
    q2, v2 = q.copy(), v.copy()
    for i in off:
        nxt = m.mi[i + 1, MI_IV] if i < m.nbodies else m.nv
        v2[m.mi[i, MI_IV] : nxt] += 1.0
    J2, Jd2 = JK.jacobian_time_derivative(m, q2, v2, m.nbodies, "spatial")
    assert np.array_equal(J, J2) and np.array_equal(Jd, Jd2)
    i = off[0]
    q3 = q.copy()
    q3[m.mi[i, MI_IQ]] = np.nan
    with pytest.raises(errors.NonFiniteError):
        JK.jacobian_time_derivative(m, q3, v, m.nbodies, "spatial")
    v3 = v.copy()
    v3[m.mi[i, MI_IV]] = np.inf
    with pytest.raises(errors.NonFiniteError):
        JK.jacobian_time_derivative(m, q, v3, m.nbodies, "spatial")


def test_axis_aligned_revolute_joints_give_the_general_products_values():
    """forward_kinematics expands a revolute joint about ±x, ±y or ±z with the products by its
    axis' two zero components left out (kinematics.local_pose): against x_J(q) formed and
    multiplied in full (multibody.joints.joint_transform, algebra dq_mul) every product left
    out is a zero, so the poses are equal (==), on every axis and on a skewed one; Pinocchio
    (same tree) is the independent check of the values."""
    rng = np.random.default_rng(12)
    mb = dqdyn.ModelBuilder("axes")
    axes = [(1, 0, 0), (0, 1, 0), (0, 0, 1), (-1, 0, 0), (0, -1, 0), (0, 0, -1), (0.6, 0, 0.8)]
    parent = "world"
    for k, ax in enumerate(axes * 2):
        name = f"b{k}"
        mb.add_body(name, parent, "revolute", axis=ax, xyz=rng.normal(size=3),
                    rpy=rng.uniform(-3, 3, size=3), mass=1.0, inertia=np.eye(3))
        parent = name
    m = mb.build()
    q = rng.uniform(-4, 4, size=m.nq)
    X = dqdyn.forward_kinematics(m, q)
    mi, mf = m.mi, m.mf
    for i in range(1, m.nbodies + 1):  # x_i^0 = x_λ^0 (x_J^λ x_J(q)), every product in full
        xj, xl, want = np.empty(8), np.empty(8), np.empty(8)
        joint_transform(mi[i, MI_JTYPE], mf[i, MF_AXIS : MF_AXIS + 3].copy(), mf[i, MF_PITCH], q,
                        mi[i, MI_IQ], mf[i, MF_SCALE], mf[i, MF_OFFSET], xj)
        dq_mul(mf[i, MF_PLACEMENT : MF_PLACEMENT + 8].copy(), xj, xl)
        dq_mul(X[mi[i, MI_PARENT]].copy(), xl, want)
        np.testing.assert_array_equal(X[i], want)
    pm, ids = pin_from_model(m)
    pd = pm.createData()
    pin.forwardKinematics(pm, pd, q_to_pin(m, pm, q))
    for i in range(1, m.nbodies + 1):
        np.testing.assert_allclose(matrix_from_pose(X[i]), pd.oMi[ids[i]].homogeneous, atol=1e-12)


def _drift_cases():
    import warnings

    from pinconv import ROBOTS, erd

    yield dqdyn.random_tree(9, joint_types=("planar", "revolute", "spherical", "free", "prismatic", "helical"), seed=3)
    yield dqdyn.random_tree(6, joint_types=("revolute",), seed=5)
    rel, root = ROBOTS["panda"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield dqdyn.load_urdf(erd(rel), root_joint=root)  # (its finger mimic joint: a scaled column)


@pytest.mark.parametrize("m", list(_drift_cases()), ids=["all_joint_types", "revolute", "panda_mimic"])
def test_jacobian_drift_kernel_equals_jdot_times_v_and_finite_differences(m):
    """``jacobian_drift_kernel`` (J, J̇ v, the frame pose, no J̇): against J̇ of
    ``jacobian_dot_kernel`` times v ([Silva2022, Lemma 2.1] in the world frame, an independent
    formulation), a central difference of J along the motion, and the frame pose of
    ``frame_pose``; every body (the world too), an offset placement, all three frame
    conventions; a batch equals its single states."""
    from dqdyn.algebra.dualquat import mul

    rng = np.random.default_rng(1)
    q = K.random_configuration(m, seed=2)
    v = rng.normal(size=m.nv)
    pl = np.array([0.9, 0.1, -0.3, 0.2, 0.0, 0.0, 0.0, 0.0])
    pl[:4] /= np.linalg.norm(pl[:4])
    pl[4:] = 0.5 * mul(np.array([0.0, 0.1, 0.2, -0.3, 0, 0, 0, 0]), pl)[:4]  # an offset (0.1, 0.2, −0.3)
    h = 1e-6
    qp, qm = dqdyn.integrate(m, q, h * v), dqdyn.integrate(m, q, -h * v)
    for body in range(m.nbodies + 1):
        for code in (0, 1, 2):
            nb1 = m.nbodies + 1
            J, Jd = np.zeros((6, m.nv)), np.zeros((6, m.nv))
            assert JK.jacobian_dot_kernel(m.mi, m.mf, q, v, body, pl, code, np.zeros((nb1, 8)),
                                          np.zeros((nb1, 6)), J, Jd) == 0
            J2, jdv, xf = np.zeros((6, m.nv)), np.empty(6), np.empty(8)
            assert JK.jacobian_drift_kernel(m.mi, m.mf, q, v, body, pl, code, np.zeros((5, 8)), J2, jdv, xf) == 0
            np.testing.assert_allclose(J2, J, atol=1e-13)
            np.testing.assert_allclose(jdv, Jd @ v, atol=1e-12 * (1 + np.abs(Jd @ v).max()))
            fd = []
            for qq in (qp, qm):
                Jq = np.zeros((6, m.nv))
                JK.jacobian_drift_kernel(m.mi, m.mf, qq, v, body, pl, code, np.zeros((5, 8)), Jq, np.empty(6), np.empty(8))
                fd.append(Jq @ v)
            np.testing.assert_allclose(jdv, (fd[0] - fd[1]) / (2 * h), atol=1e-6 * (1 + np.abs(jdv).max()))
            x0 = K.forward_kinematics(m, q)[body]
            np.testing.assert_allclose(xf, mul(x0, pl), atol=1e-13)
    Q = K.random_configuration(m, size=3, seed=4)
    V = rng.normal(size=(3, m.nv))
    out = JK.jacobian_dot_times_v(m, Q, V, m.nbodies, "world_aligned")
    for n in range(3):
        assert np.array_equal(out[n], JK.jacobian_dot_times_v(m, Q[n], V[n], m.nbodies, "world_aligned"))
