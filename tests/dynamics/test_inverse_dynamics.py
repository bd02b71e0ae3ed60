"""Inverse dynamics and the Euler–Lagrange terms against independent oracles.

* Pinocchio's ``rnea`` (with external forces), ``crba``, ``computeCoriolisMatrix``,
  ``computeGeneralizedGravity`` and ``nonLinearEffects`` on real robots of example-robot-data
  (fixed, planar and free roots) and on random trees with every joint type, to 1e-10 relative;
* finite differences of the Lagrangian built from dqdyn's energies (an independent code path) on
  chains with helical, cylindrical and planar joints, and the Christoffel symbols of M for C;
* the structural identities: ``M`` symmetric positive definite, ``C v = nle − g``, ``Ṁ − 2C``
  skew-symmetric, ``method="newton_euler"`` (n + 2 dqNE calls) equal to the CRBA.

Layout conversions (continuous, planar, spherical, free joints) are in ``tests/pinconv.py``:
``τ = Tᵀ τ_pin``, ``M = Tᵀ M_pin T``, ``C = Tᵀ (C_pin T + M_pin Ṫ)``.
"""

import numpy as np
import pytest

import dqdyn
from dqdyn import errors
from dqdyn.multibody.builders import ModelBuilder
from dqdyn.multibody.joints import CYLINDRICAL, HELICAL, PLANAR, PRISMATIC, REVOLUTE

from pinconv import (
    ROBOTS,
    erd,
    pin,
    pin_fext,
    pin_from_model,
    pin_from_urdf,
    q_to_pin,
    tdot_matrix,
    tdot_v,
    v_transform,
)

DYN_ROBOTS = ["panda", "ur5", "kinova", "tiago", "talos", "anymal", "baxter", "hyq", "solo12",
              "double_pendulum", "xarm7", "z1"]


def _rel(x, y):
    return np.abs(np.asarray(x) - np.asarray(y)).max() / max(1.0, np.abs(y).max())


def _has_mimic(m):
    return bool(m.mimic_joints)


def _pin_terms(m, pm, pd, q, v, a):
    T = v_transform(m, pm, q)
    qp, vp = q_to_pin(m, pm, q), T @ v
    ap = T @ a + tdot_v(m, pm, q, v)
    Mp = pin.crba(pm, pd, qp)
    Mp = np.triu(Mp) + np.triu(Mp, 1).T
    return dict(
        T=T, qp=qp, vp=vp, ap=ap,
        tau=T.T @ pin.rnea(pm, pd, qp, vp, ap),
        M=T.T @ Mp @ T,
        g=T.T @ pin.computeGeneralizedGravity(pm, pd, qp),
        nle=T.T @ (pin.nonLinearEffects(pm, pd, qp, vp) + Mp @ tdot_v(m, pm, q, v)),
        C=T.T @ (pin.computeCoriolisMatrix(pm, pd, qp, vp) @ T + Mp @ tdot_matrix(m, pm, q, v)),
    )


def _check_all(m, pm, rng, n_states=3, coriolis=True, label=""):
    pd = pm.createData()
    for _ in range(n_states):
        q = dqdyn.random_configuration(m, seed=rng)
        v, a = rng.normal(size=m.nv), rng.normal(size=m.nv)
        ref = _pin_terms(m, pm, pd, q, v, a)
        assert _rel(dqdyn.rnea(m, q, v, a), ref["tau"]) < 1e-10, label
        assert _rel(dqdyn.mass_matrix(m, q), ref["M"]) < 1e-10, label
        assert _rel(dqdyn.gravity(m, q), ref["g"]) < 1e-10, label
        assert _rel(dqdyn.nonlinear_effects(m, q, v), ref["nle"]) < 1e-10, label
        if coriolis:
            assert _rel(dqdyn.coriolis_matrix(m, q, v), ref["C"]) < 1e-10, label


# ----------------------------------------------------------------------------- real robots
@pytest.fixture(scope="module", params=DYN_ROBOTS)
def robot(request):
    rel, root = ROBOTS[request.param]
    path = erd(rel)
    with _nowarn():
        m = dqdyn.load_urdf(path, root_joint=root)
    return request.param, m, pin_from_urdf(path, root)


class _nowarn:
    def __enter__(self):
        import warnings

        self._c = warnings.catch_warnings()
        self._c.__enter__()
        warnings.simplefilter("ignore")

    def __exit__(self, *exc):
        self._c.__exit__(*exc)


def test_robot_terms_match_pinocchio(robot):
    name, m, pm = robot
    # Pinocchio's computeCoriolisMatrix with mimic joints is not the Christoffel matrix of the
    # reduced coordinates (measured: 2.5e-2 off on the Panda's mimic finger); there the
    # Christoffel finite-difference test below is the oracle.
    _check_all(m, pm, np.random.default_rng(0), coriolis=not _has_mimic(m), label=name)


def test_robot_rnea_with_external_wrenches(robot):
    name, m, pm = robot
    pd = pm.createData()
    rng = np.random.default_rng(1)
    q = dqdyn.random_configuration(m, seed=rng)
    v, a = rng.normal(size=m.nv), rng.normal(size=m.nv)
    fext = rng.normal(size=(m.nbodies + 1, 6))
    fext[0] = 0.0
    T = v_transform(m, pm, q)
    tp = pin.rnea(pm, pd, q_to_pin(m, pm, q), T @ v, T @ a + tdot_v(m, pm, q, v),
                  pin_fext(m, pm, fext))
    assert _rel(dqdyn.rnea(m, q, v, a, fext), T.T @ tp) < 1e-10


def test_mimic_coriolis_is_christoffel():
    rel, root = ROBOTS["panda"]
    m = dqdyn.load_urdf(erd(rel))
    assert m.mimic_joints
    rng = np.random.default_rng(3)
    q = dqdyn.random_configuration(m, seed=rng)
    v = rng.normal(size=m.nv)
    C = dqdyn.coriolis_matrix(m, q, v)
    np.testing.assert_allclose(C, _christoffel(m, q, v), atol=1e-7)


def _christoffel(m, q, v, h=1e-6):
    """C_kj = Σ_i ½ (∂M_kj/∂q_i + ∂M_ki/∂q_j − ∂M_ij/∂q_k) v_i (coordinates with v = q̇)."""
    n = m.nv
    dM = np.empty((n, n, n))
    for i in range(n):
        e = np.zeros(m.nq)
        e[i] = h
        dM[i] = (dqdyn.mass_matrix(m, q + e) - dqdyn.mass_matrix(m, q - e)) / (2 * h)
    return 0.5 * (np.einsum("ikj,i->kj", dM, v) + np.einsum("jki,i->kj", dM, v)
                  - np.einsum("kij,i->kj", dM, v))


# ----------------------------------------------------------------------------- random trees
@pytest.fixture(scope="module", params=[0, 1, 2, 3, 4])
def tree(request):
    m = dqdyn.random_tree(14, seed=request.param)
    return m, pin_from_model(m)[0]


def test_tree_terms_match_pinocchio(tree):
    m, pm = tree
    types = set(int(t) for t in m.joint_type[1:])
    assert len(types) >= 4
    _check_all(m, pm, np.random.default_rng(2), label=str(types))


def test_tree_rnea_with_external_wrenches(tree):
    m, pm = tree
    pd = pm.createData()
    rng = np.random.default_rng(4)
    q = dqdyn.random_configuration(m, seed=rng)
    v, a = rng.normal(size=m.nv), rng.normal(size=m.nv)
    fext = rng.normal(size=(m.nbodies + 1, 6))
    T = v_transform(m, pm, q)
    tp = pin.rnea(pm, pd, q_to_pin(m, pm, q), T @ v, T @ a + tdot_v(m, pm, q, v),
                  pin_fext(m, pm, fext))
    assert _rel(dqdyn.rnea(m, q, v, a, fext), T.T @ tp) < 1e-10


def test_structure_identities(tree):
    """M symmetric positive definite, n+2 dqNE calls = CRBA, C v = nle − g, Ṁ − 2C skew."""
    m, _ = tree
    rng = np.random.default_rng(5)
    q = dqdyn.random_configuration(m, seed=rng)
    v = rng.normal(size=m.nv)
    M = dqdyn.mass_matrix(m, q)
    np.testing.assert_allclose(M, M.T, atol=1e-13)
    assert np.linalg.eigvalsh(M).min() > 0
    assert _rel(dqdyn.mass_matrix(m, q, method="newton_euler"), M) < 1e-12
    C = dqdyn.coriolis_matrix(m, q, v)
    assert _rel(C @ v, dqdyn.nonlinear_effects(m, q, v) - dqdyn.gravity(m, q)) < 1e-12
    h = 1e-6
    Md = (dqdyn.mass_matrix(m, dqdyn.integrate(m, q, h * v))
          - dqdyn.mass_matrix(m, dqdyn.integrate(m, q, -h * v))) / (2 * h)
    S = Md - 2 * C
    np.testing.assert_allclose(S, -S.T, atol=1e-6 * max(1.0, np.abs(Md).max()))


# ------------------------------------------------- helical / cylindrical / planar: the Lagrangian
def _lagrangian_chain():
    """A chain of helical, cylindrical, planar, prismatic and revolute joints (v = q̇ for all)."""
    rng = np.random.default_rng(7)
    b = ModelBuilder("lagrange-chain", gravity=(0.3, -0.2, -9.81))
    parent = "world"
    specs = [("planar", {}), ("helical", {"pitch": 0.07}), ("cylindrical", {}),
             ("revolute", {}), ("helical", {"pitch": -0.2}), ("prismatic", {}),
             ("cylindrical", {})]
    for k, (jt, extra) in enumerate(specs):
        s2 = 0.01 + 0.1 * rng.random(3)  # second moments → a physical inertia
        R = np.linalg.qr(rng.normal(size=(3, 3)))[0]
        inertia = R @ np.diag([s2[1] + s2[2], s2[0] + s2[2], s2[0] + s2[1]]) @ R.T
        name = f"b{k}"
        axis = rng.normal(size=3)
        b.add_body(name, parent, joint=jt, joint_name=f"j{k}", axis=axis / np.linalg.norm(axis),
                   xyz=rng.normal(size=3) * 0.3, rpy=rng.normal(size=3), mass=0.5 + rng.random(),
                   com=rng.normal(size=3) * 0.1, inertia=inertia, **extra)
        parent = name
    return b.build()


def test_lagrangian_finite_differences():
    """τ = d/dt ∂L/∂q̇ − ∂L/∂q with L = T − V from dqdyn's energies (independent of dqNE):
    M by polarization of the kinetic energy, Ṁ q̇, ∂T/∂q and ∂V/∂q by central differences."""
    m = _lagrangian_chain()
    types = set(int(t) for t in m.joint_type[1:])
    assert {HELICAL, CYLINDRICAL, PLANAR, PRISMATIC, REVOLUTE} <= types
    assert m.nq == m.nv
    rng = np.random.default_rng(8)
    n, h = m.nv, 1e-5
    E = np.eye(n)

    def M_energy(q):
        T2 = lambda u: 2.0 * dqdyn.kinetic_energy(m, q, u)  # noqa: E731
        d = np.array([T2(E[j]) for j in range(n)])
        return np.array([[0.5 * (T2(E[j] + E[k]) - d[j] - d[k]) if j != k else d[j]
                          for k in range(n)] for j in range(n)])

    for _ in range(3):
        q, v, a = rng.normal(size=n), rng.normal(size=n), rng.normal(size=n)
        M = M_energy(q)
        Mdot_v = (M_energy(q + h * v) - M_energy(q - h * v)) @ v / (2 * h)
        dT = np.array([(dqdyn.kinetic_energy(m, q + h * E[i], v)
                        - dqdyn.kinetic_energy(m, q - h * E[i], v)) / (2 * h) for i in range(n)])
        dV = np.array([(dqdyn.potential_energy(m, q + h * E[i])
                        - dqdyn.potential_energy(m, q - h * E[i])) / (2 * h) for i in range(n)])
        tau_fd = M @ a + Mdot_v - dT + dV
        tau = dqdyn.rnea(m, q, v, a)
        assert _rel(tau, tau_fd) < 1e-7
        assert _rel(dqdyn.mass_matrix(m, q), M) < 1e-12
        assert _rel(dqdyn.gravity(m, q), dV) < 1e-8
        np.testing.assert_allclose(dqdyn.coriolis_matrix(m, q, v), _christoffel(m, q, v),
                                   atol=1e-6)


# ----------------------------------------------------------------------------- batches
def test_batches_equal_single_states():
    m = dqdyn.random_tree(9, seed=11)
    rng = np.random.default_rng(9)
    Q = np.stack([dqdyn.random_configuration(m, seed=rng) for _ in range(6)]).reshape(2, 3, m.nq)
    V = rng.normal(size=(2, 3, m.nv))
    A = rng.normal(size=(2, 3, m.nv))
    F = rng.normal(size=(2, 3, m.nbodies + 1, 6))
    tau = dqdyn.rnea(m, Q, V, A, F)
    M = dqdyn.mass_matrix(m, Q)
    C = dqdyn.coriolis_matrix(m, Q, V)
    g = dqdyn.gravity(m, Q)
    nle = dqdyn.nonlinear_effects(m, Q, V)
    Mne = dqdyn.mass_matrix(m, Q, method="newton_euler")
    assert tau.shape == (2, 3, m.nv) and M.shape == (2, 3, m.nv, m.nv)
    for i in range(2):
        for j in range(3):
            q, v, a = Q[i, j], V[i, j], A[i, j]
            np.testing.assert_array_equal(tau[i, j], dqdyn.rnea(m, q, v, a, F[i, j]))
            np.testing.assert_array_equal(M[i, j], dqdyn.mass_matrix(m, q))
            np.testing.assert_array_equal(C[i, j], dqdyn.coriolis_matrix(m, q, v))
            np.testing.assert_array_equal(g[i, j], dqdyn.gravity(m, q))
            np.testing.assert_array_equal(nle[i, j], dqdyn.nonlinear_effects(m, q, v))
            np.testing.assert_allclose(Mne[i, j], M[i, j], atol=1e-12)
    # broadcasting a single v / a over a batch of q
    np.testing.assert_allclose(dqdyn.rnea(m, Q, V[0, 0], A[0, 0])[1, 2],
                               dqdyn.rnea(m, Q[1, 2], V[0, 0], A[0, 0]), atol=0)


def test_newton_euler_wrenches_match_pinocchio_joint_forces(tree):
    """newton_euler: τ equals rnea, and the papers' joint wrenches Γ_i (eq. 29, at the joint frame
    F_{J_i} fixed in the parent) equal Pinocchio's transmitted forces ``data.f[i]`` (in the child
    frame F_i) moved by ``Ad(x_i^{J_i})``; the CoM wrenches are the same wrenches moved to the CoM."""
    from dqdyn.algebra.dualquat import Ad6, conj, mul

    m, pm = tree
    pd = pm.createData()
    rng = np.random.default_rng(6)
    q = dqdyn.random_configuration(m, seed=rng)
    v, a = rng.normal(size=m.nv), rng.normal(size=m.nv)
    r = dqdyn.newton_euler(m, q, v, a)
    np.testing.assert_allclose(r.tau, dqdyn.rnea(m, q, v, a), atol=1e-12)
    T = v_transform(m, pm, q)
    pin.rnea(pm, pd, q_to_pin(m, pm, q), T @ v, T @ a + tdot_v(m, pm, q, v))
    X = dqdyn.forward_kinematics(m, q)  # x_i^0
    Xc = dqdyn.com_poses(m, q)  # x_{c_i}^0
    scale = np.abs(r.wrenches).max()
    for i in range(1, m.nbodies + 1):
        fp = pd.f[pm.getJointId(m.joint_names_all[i])]
        xJ = mul(X[m.parent[i]], m.joint_placement[i])  # x_{J_i}^0
        G = Ad6(mul(conj(xJ), X[i]), np.r_[fp.linear, fp.angular])
        np.testing.assert_allclose(r.wrenches[i], G, atol=1e-10 * scale)
        Gc = Ad6(mul(conj(Xc[i]), xJ), r.wrenches[i])
        np.testing.assert_allclose(r.com_wrenches[i], Gc, atol=1e-10 * scale)


# ----------------------------------------------------------------------------- bad input
def test_bad_input():
    m = dqdyn.serial_chain(4)
    q, v = np.zeros(m.nq), np.zeros(m.nv)
    with pytest.raises(errors.ShapeError, match="q"):
        dqdyn.rnea(m, np.zeros(m.nq + 1), v, v)
    with pytest.raises(errors.ShapeError, match="v"):
        dqdyn.rnea(m, q, np.zeros(3), v)
    with pytest.raises(errors.NonFiniteError):
        dqdyn.rnea(m, q, v, np.full(m.nv, np.nan))
    with pytest.raises(errors.ShapeError, match="a must"):  # an empty a is not a zero a
        dqdyn.rnea(m, q, v, np.zeros(0))
    with pytest.raises(errors.NonFiniteError):
        dqdyn.mass_matrix(m, np.full(m.nq, np.inf))
    with pytest.raises(errors.ShapeError, match="fext"):
        dqdyn.rnea(m, q, v, v, np.zeros((2, 6)))
    with pytest.raises(errors.ShapeError, match="method"):
        dqdyn.mass_matrix(m, q, method="bogus")
    with pytest.raises(errors.NonFiniteError):
        dqdyn.coriolis_matrix(m, q, np.full(m.nv, np.nan))
    Q = np.zeros((5, m.nq))
    Q[3, 1] = np.nan
    with pytest.raises(errors.NonFiniteError, match="3"):
        dqdyn.gravity(m, Q)
    # a non-unit quaternion of a free joint
    mf = dqdyn.random_tree(3, seed=0, joint_types=("free",))
    qf = dqdyn.neutral(mf)
    qf[:4] *= 1.5
    with pytest.raises(errors.NotUnitError):
        dqdyn.rnea(mf, qf, np.zeros(mf.nv), np.zeros(mf.nv))


def test_massless_leaf_singular_mass_matrix():
    b = ModelBuilder("leaf", inertia_check="off")
    b.add_body("a", "world", joint="revolute", axis=(0, 0, 1), mass=1.0, com=(0.2, 0, 0),
               inertia=np.eye(3) * 0.01)
    b.add_body("tip", "a", joint="revolute", axis=(0, 0, 1), xyz=(0.4, 0, 0), mass=0.0,
               inertia=np.zeros((3, 3)))
    m = b.build()
    q = np.zeros(m.nq)
    M = dqdyn.mass_matrix(m, q)  # M itself is fine (singular)
    assert abs(np.linalg.det(M)) < 1e-14
    with pytest.raises(errors.SingularError, match="tip"):
        dqdyn.solve_mass_matrix(m, q, np.ones(m.nv))
    with pytest.raises(errors.SingularError):
        dqdyn.mass_matrix_inverse(m, q)


def test_assembly_and_wrench_input_bad_input():
    from dqdyn.composition.modular import Assembly

    m = dqdyn.serial_chain(3)
    asm = Assembly()
    asm.add("a", m)
    with pytest.raises(errors.ModelError, match="already exists"):
        asm.add("a", m)
    with pytest.raises(errors.UnknownNameError, match="nope"):
        asm.add("b", m, parent="nope")
    with pytest.raises(errors.UnknownNameError):
        asm.add("b", m, parent="a", at="no_such_frame")
    with pytest.raises(errors.NotUnitError, match="placement"):
        asm.add("b", m, parent="a", placement=np.ones(8))
    with pytest.raises(errors.ShapeError, match="q"):
        asm.newton_euler(np.zeros(2), np.zeros(3), np.zeros(3))
    with pytest.raises(errors.ShapeError, match="wrench"):
        dqdyn.wrench_input(m, np.zeros(3), m.frame_names[-1], np.zeros(5))
    with pytest.raises(errors.NonFiniteError, match="wrench"):
        dqdyn.wrench_input(m, np.zeros(3), m.frame_names[-1], np.full(6, np.nan))
    with pytest.raises(errors.ShapeError, match="reference"):
        dqdyn.wrench_input(m, np.zeros(3), m.frame_names[-1], np.zeros(6), reference="body")
    with pytest.raises(errors.ShapeError):
        dqdyn.fierro_lewis(1.0, 1.0, 0.1, np.zeros(2), np.zeros(3))


# ---------------------------------------------------------------- real robots: ABA, derivatives
def test_robot_aba_matches_pinocchio_and_inverts_rnea(robot):
    name, m, pm = robot
    if m.mimic_joints:  # ABA needs independent joints: load the mimic robot's fingers free
        rel, root = ROBOTS[name]
        with _nowarn():
            m = dqdyn.load_urdf(erd(rel), root_joint=root, mimic="independent")
        pm = pin.buildModelFromUrdf(erd(rel)) if root is None else pin_from_urdf(erd(rel), root)
    pd = pm.createData()
    rng = np.random.default_rng(9)
    for _ in range(2):
        q = dqdyn.random_configuration(m, seed=rng)
        v, tau = rng.normal(size=m.nv), rng.normal(size=m.nv) * 3
        a = dqdyn.aba(m, q, v, tau)
        np.testing.assert_allclose(dqdyn.rnea(m, q, v, a), tau, atol=1e-10 * (1 + np.abs(tau).max()))
        T = v_transform(m, pm, q)
        ap = pin.aba(pm, pd, q_to_pin(m, pm, q), T @ v, np.linalg.solve(T.T, tau))
        assert _rel(T @ a + tdot_v(m, pm, q, v), ap) < 1e-10, name


@pytest.mark.parametrize("name", ["ur5", "talos", "solo12", "anymal", "kinova"])
def test_robot_derivatives_match_pinocchio(name):
    rel, root = ROBOTS[name]
    with _nowarn():
        m = dqdyn.load_urdf(erd(rel), root_joint=root)
    pm = pin_from_urdf(erd(rel), root)
    pd = pm.createData()
    rng = np.random.default_rng(10)
    q = dqdyn.random_configuration(m, seed=rng)
    v, a = rng.normal(size=(2, m.nv))
    T = v_transform(m, pm, q)
    qp = q_to_pin(m, pm, q)
    dqp, dvp, dap = pin.computeRNEADerivatives(pm, pd, qp, T @ v, T @ a)
    dq, dv, da = dqdyn.rnea_derivatives(m, q, v, a)
    for ours, theirs in ((dq, dqp), (dv, dvp)):
        assert _rel(ours, T.T @ theirs @ T) < 1e-10, name
    pin.computeABADerivatives(pm, pd, qp, T @ v, T @ a)
    dq, dv, dt = dqdyn.aba_derivatives(m, q, v, a)
    for ours, theirs in ((dq, pd.ddq_dq), (dv, pd.ddq_dv), (dt, pd.Minv)):
        assert _rel(ours, T.T @ theirs @ T) < 1e-9, name


def test_constrained_aba_with_constraint_objects_equals_udwadia_kalaba():
    """Recursive constrained ABA ([Kim2012, §3.2]) fed the constraint objects of dqdyn.constraints
    equals the dense Udwadia–Kalaba solution ([Silva2022, eqs. (62)–(63)])."""
    from dqdyn.constraints import four_bar, mobile_manipulator
    from dqdyn.constraints.dynamics import constraint_terms

    for builder in (mobile_manipulator, four_bar):
        model, cons, q0 = builder()
        rng = np.random.default_rng(11)
        q0 = np.asarray(q0, dtype=float)
        v = np.zeros(model.nv)
        tau = rng.normal(size=model.nv)
        A, b = constraint_terms(model, q0, v, cons)
        ours = dqdyn.constrained_aba(model, q0, v, tau, A, b)
        ref = dqdyn.constrained_forward_dynamics(model, q0, v, tau, cons)
        qdd = ours[0] if isinstance(ours, tuple) else ours
        np.testing.assert_allclose(qdd, ref.qdd, atol=1e-9 * (1 + np.abs(ref.qdd).max()))


def test_thread_count_does_not_change_results():
    m = dqdyn.random_tree(8, seed=12)
    rng = np.random.default_rng(12)
    Q = dqdyn.random_configuration(m, size=64, seed=rng)
    V, A = rng.normal(size=(2, 64, m.nv))
    n0 = dqdyn.get_num_threads()
    try:
        dqdyn.set_num_threads(1)
        t1 = dqdyn.rnea(m, Q, V, A)
        dqdyn.set_num_threads(max(1, n0))
        tn = dqdyn.rnea(m, Q, V, A)
    finally:
        dqdyn.set_num_threads(n0)
    np.testing.assert_array_equal(t1, tn)
    with pytest.raises(errors.ShapeError, match="threads"):
        dqdyn.set_num_threads(0)
