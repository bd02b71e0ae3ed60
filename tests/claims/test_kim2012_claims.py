"""[Kim2012] (Lie group formulation of articulated rigid body dynamics): one test per checkable
result, claims 23–36, named after the claim.

Most of these results are checked in depth by the algorithm tests of the suite (against
Pinocchio, dense KKT solves and central finite differences); each claim test here runs those
checks on the models the claim names (random trees with every joint type) and adds the claim's
own identity where the suite states it differently.  Claim 37 (Theorem 2 of
[MontgomerySmith2023] = 2 × [Kim2012, eq. (31)]) is in ``test_montgomerysmith2023_claims.py``.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

import dqdyn
from dqdyn.algebra.dualquat import Ad6, mul
from dqdyn.algebra.rotations import pose_from_rt, quat_from_axis_angle

from pinconv import pin_from_model

TESTS = Path(__file__).resolve().parents[1]


def _suite(rel: str):
    """A module of the suite, loaded from its file under a name of its own (its checks are
    called with the arguments their fixtures would give)."""
    name = "_kim2012_" + rel.replace("/", "_").removesuffix(".py")
    spec = importlib.util.spec_from_file_location(name, TESTS / rel)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def inverse():
    return _suite("dynamics/test_inverse_dynamics.py")


@pytest.fixture(scope="module")
def forward():
    return _suite("dynamics/test_forward_tree.py")


@pytest.fixture(scope="module")
def derivatives():
    return _suite("dynamics/test_derivatives_tree.py")


def _tree(n=12, seed=0):
    m = dqdyn.random_tree(n, seed=seed)
    return m, pin_from_model(m)[0]


def _state(m, seed):
    rng = np.random.default_rng(seed)
    q = dqdyn.random_configuration(m, seed=rng)
    return q, rng.normal(size=m.nv), rng.normal(size=m.nv)


def _kinetic(I6, xi):
    """½ ⟨ξ, 𝓘 ξ⟩ with the power pairing of twists [ω, v] and wrenches [f, τ]: ω·τ + v·f."""
    w = I6 @ xi
    return 0.5 * (xi[:3] @ w[3:] + xi[3:] @ w[:3])


# ============================================================== claims 23–24: Lie group operators
def test_claim23_adjoint_twist_transform_and_inertia_congruence(forward):
    """Ad_T (7) moves twists between frames (11); the inertia transforms by the congruence
    𝓘_b = Ad*ᵀ 𝓘_a Ad (21), and the structured form (22) equals the dense one.  Oracles: the
    twist of a moving frame by finite differences of its pose, and the kinetic energy, which
    does not depend on the frame it is computed in."""
    from dqdyn.dynamics.articulated import body_inertia6, transform_inertia_to_parent_dense

    forward.test_structured_inertia_transform_equals_dense_product()  # (22) ≡ (21)
    rng = np.random.default_rng(23)
    m = dqdyn.random_tree(5, seed=7)
    for i in range(1, 6):
        x = pose_from_rt(quat_from_axis_angle(rng.normal(size=3), rng.uniform(-3, 3)),
                         rng.normal(size=3))  # frame b (child) in frame a (parent)
        Ib = np.zeros((6, 6))
        body_inertia6(m.mf, i, Ib)
        Ia, s1, s2 = np.zeros((6, 6)), np.empty(6), np.empty(6)
        transform_inertia_to_parent_dense(x, Ib, Ia, s1, s2)
        xi_b = rng.normal(size=6)
        xi_a = Ad6(x, xi_b)  # (11): the same motion seen from frame a
        assert _kinetic(Ia, xi_a) == pytest.approx(_kinetic(Ib, xi_b), rel=1e-12)
        # (7): Ad(x) ξ is x ξ x* as dual quaternions
        pure = lambda t: np.r_[0.0, t[:3], 0.0, t[3:]]
        conj = x * np.array([1, -1, -1, -1, 1, -1, -1, -1.0])
        xx = mul(mul(x, pure(xi_b)), conj)
        np.testing.assert_allclose(np.r_[xx[1:4], xx[5:8]], xi_a, atol=1e-12)


def test_claim24_newton_euler_at_the_com_and_frame_invariance(inverse):
    """F = 𝓘 V̇ − ad*_V 𝓘 V equals the Newton–Euler wrenches and is invariant under a change of
    body frame.  Oracle: Pinocchio's rnea and its joint forces (``data.f``) on random trees,
    whose body frames differ from dqdyn's CoM frames."""
    for seed in (0, 1):
        tree = _tree(14, seed)
        inverse.test_tree_terms_match_pinocchio(tree)
        inverse.test_newton_euler_wrenches_match_pinocchio_joint_forces(tree)


# ============================================================== claims 25–28: RNEA, ABA, hybrid
def test_claim25_rnea_is_lagrange(inverse):
    """RNEA (Table 2) gives M q̈ + b, equal to Lagrange's equations by finite differences of the
    kinetic and potential energy; M symmetric positive definite; multi-DoF joints with Ṡ ≠ 0."""
    inverse.test_lagrangian_finite_differences()
    for seed in (0, 1):
        inverse.test_structure_identities(_tree(14, seed))


def test_claim26_aba_inverts_rnea_on_a_tree_with_multi_dof_joints(forward):
    """ABA (Table 3) inverts RNEA on a branched tree with 1-, 2- and 3-DoF joints (and the free
    joint); oracle: Pinocchio's aba besides."""
    for seed in (0, 1):
        m, pm = _tree(12, seed)
        widths = {m.v_slice(n).stop - m.v_slice(n).start for n in m.joint_names}
        assert {1, 2, 3} <= widths, widths  # 1-, 2- and 3-DoF joints in the tree
        q, v, a = _state(m, seed)
        tau = dqdyn.rnea(m, q, v, a)
        np.testing.assert_allclose(dqdyn.aba(m, q, v, tau), a, rtol=1e-10, atol=1e-10)
        forward.test_aba_matches_pinocchio((m, pm))


def test_claim27_hybrid_dynamics(forward):
    """Hybrid dynamics (Table 4) with prescribed accelerations on a subset matches the dense
    solve (34), τ_u equals RNEA of the completed q̈; all prescribed is RNEA, none is ABA."""
    for seed in (0, 1):
        m, pm = _tree(12, seed)
        forward.test_hybrid_dynamics_equals_dense_formula((m, pm))
        q, v, a = _state(m, seed + 10)
        tau = np.random.default_rng(seed).normal(size=m.nv)
        qdd, t_all = dqdyn.hybrid_dynamics(m, q, v, a, tau, np.ones(m.nv, bool))
        np.testing.assert_allclose(t_all, dqdyn.rnea(m, q, v, a), rtol=1e-10, atol=1e-10)
        qdd, _ = dqdyn.hybrid_dynamics(m, q, v, a, tau, np.zeros(m.nv, bool))
        np.testing.assert_allclose(qdd, dqdyn.aba(m, q, v, tau), rtol=1e-10, atol=1e-10)


def test_claim28_rk4_over_aba_conserves_energy():
    """Integrating ABA with RK4 at h = 1e-3 over 0.3 s conserves the total energy (the paper:
    drift 7e-11).  Oracle: kinetic + potential energy, computed apart from ABA."""
    energy = _suite("dynamics/test_energy.py")
    from dqdyn.dynamics.energy import kinetic_energy, potential_energy

    cases = [(dqdyn.serial_chain(7, seed=3), 1e-9),  # a 7-link arm (the paper: 7e-11)
             # a tree with spherical joints, whose speeds grow to ~15 rad/s under gravity
             (dqdyn.random_tree(8, seed=3, joint_types=("revolute", "prismatic", "spherical")), 1e-8)]
    for m, tol in cases:
        rng = np.random.default_rng(28)
        q = dqdyn.random_configuration(m, seed=rng)
        v = rng.normal(size=m.nv) * 0.5
        E = lambda q, v: kinetic_energy(m, q, v) + potential_energy(m, q)
        E0 = E(q, v)
        q1, v1 = energy.rk4(m, q, v, 1e-3, 300)
        assert abs(E(q1, v1) - E0) / (abs(E0) + kinetic_energy(m, q, v)) < tol, m.name


# ============================================================== claims 29–31: constrained dynamics
def test_claim29_constrained_forward_dynamics(forward):
    """Constrained FD (67)–(69) satisfies A q̈ = b (A q̈ + Ȧ q̇ = 0 with b = −Ȧ q̇) and matches
    the dense KKT solution; oracle: the KKT system from Pinocchio's M and bias."""
    for seed in (0, 1):
        forward.test_constrained_aba_equals_kkt(_tree(12, seed))


def test_claim30_constrained_hybrid_dynamics(forward):
    """Constrained hybrid dynamics (74)–(80) satisfies the equations of motion with multiplier λ
    and the acceleration constraint; oracle: Pinocchio's M and bias."""
    for seed in (0, 1):
        forward.test_constrained_hybrid_equals_dense(_tree(12, seed))


def test_claim31_constrained_inverse_dynamics():
    """Constrained inverse dynamics (§3.1, eqs. 56–66): unique when the actuation matches the
    mobility, minimum-norm when redundant, refused when under-actuated.  Oracle: the torques fed
    back to the constrained forward dynamics reproduce the requested motion."""
    ci = _suite("constraints/test_constrained_inverse.py")
    from dqdyn.constraints import five_bar

    fb = five_bar()
    ci.test_unique_when_actuation_matches(fb)
    ci.test_passive_forces_are_honoured(fb)
    ci.test_redundant_actuation_gives_minimum_norm(fb)
    ci.test_under_actuated_is_refused(fb)
    ci.test_slider_crank_inverse_dynamics_round_trip()


# ============================================================== claims 32–36: derivatives
def _S3(a):
    return np.array([[0.0, -a[2], a[1]], [a[2], 0.0, -a[0]], [-a[1], a[0], 0.0]])


def _ad(V):
    """ad_V as a 6×6 matrix on twists [ω, v] [Kim2012, §2]: [[ω̂, 0], [v̂, ω̂]]."""
    return np.block([[_S3(V[:3]), np.zeros((3, 3))], [_S3(V[3:]), _S3(V[:3])]])


def _Ad_matrix(T):
    """Ad_T of a 4×4 homogeneous T as a 6×6 matrix on twists [ω, v] [Kim2012, eq. (7)]."""
    R, p = T[:3, :3], T[:3, 3]
    return np.block([[R, np.zeros((3, 3))], [_S3(p) @ R, R]])


def _vee(X):
    """The twist [ω, v] of a 4×4 se(3) matrix [[ω̂, v], [0, 0]]."""
    return np.r_[X[2, 1], X[0, 2], X[1, 0], X[:3, 3]]


def test_claim32_lemma3_and_corollaries_1_2_derivatives_of_the_adjoints():
    """Lemma 3 and Corollaries 1–2: ∂Ad_T/∂p = ad_{∂T/∂p T⁻¹} Ad_T (81),
    ∂Ad_{T⁻¹}/∂p = −ad_{∂h/∂p} Ad_{T⁻¹} (87) and ∂Ad*_{T⁻¹}/∂p = −Ad*_{T⁻¹} ad*_{∂h/∂p} (88, in
    the T⁻¹ form the tables use; the printed Ad*_T is O(1) off) with ∂h_i/∂p = T⁻¹ ∂T/∂p (89),
    which is the joint screw S_i^k for p = q_i^k (90) and 0 for a coordinate of another joint
    (91) — on every joint transform T_{λ(i),i}(q) of a random tree with all joint types.
    Oracle: central differences of forward kinematics and of the 6×6 adjoint matrices; S_i^k is
    the body-Jacobian column; dqdyn's ``Ad6`` (twists and, swapped, wrenches) is the Ad of (7)."""
    from dqdyn.algebra.dualquat import conj, matrix_from_pose

    P = np.block([[np.zeros((3, 3)), np.eye(3)], [np.eye(3), np.zeros((3, 3))]])  # [f, τ] ↔ [τ, f]
    m = dqdyn.random_tree(9, seed=32, branching=0.6)
    q = dqdyn.random_configuration(m, seed=np.random.default_rng(32))
    h = 1e-6

    def T_rel(q, i):  # T_{λ(i),i}: the pose of body i in its parent, 4×4
        X = dqdyn.forward_kinematics(m, q)
        return np.linalg.inv(matrix_from_pose(X[m.parent[i]])) @ matrix_from_pose(X[i])

    def along(k, s):
        e = np.zeros(m.nv)
        e[k] = s
        return dqdyn.integrate(m, q, e)

    worst = {"81": 0.0, "87": 0.0, "88": 0.0, "90": 0.0, "91": 0.0}
    printed_88 = 0.0
    for i in range(1, m.nbodies + 1):
        T = T_rel(q, i)
        A = _Ad_matrix(T)
        x_i = dqdyn.forward_kinematics(m, q)[i]
        x_l = dqdyn.forward_kinematics(m, q)[m.parent[i]]
        # (7): dqdyn's Ad6 of the same transform is Kim's Ad_T on twists; on wrenches [f, τ] it
        # is Kim's dual adjoint Ad*_{T⁻¹} = Ad_{T⁻¹}ᵀ with the two halves swapped
        x_rel = mul(conj(x_l), x_i)
        Ad_dq = Ad6(x_rel, np.eye(6)).T
        np.testing.assert_allclose(Ad_dq, A, atol=1e-12)
        np.testing.assert_allclose(Ad_dq, P @ np.linalg.inv(A).T @ P, atol=1e-12)
        Jb = dqdyn.twist_jacobian(m, q, i, frame="body")
        own = range(m.v_slice(m.joint_names_all[i]).start, m.v_slice(m.joint_names_all[i]).stop)
        for k in range(m.nv):
            Tp, Tm = T_rel(along(k, h), i), T_rel(along(k, -h), i)
            dT = (Tp - Tm) / (2 * h)
            dh = _vee(np.linalg.inv(T) @ dT)  # (89)
            if k in own:  # (90): the joint screw
                worst["90"] = max(worst["90"], np.abs(dh - Jb[:, k]).max())
            else:  # (91): another joint's coordinate leaves T_{λ(i),i} alone
                worst["91"] = max(worst["91"], np.abs(dT).max())
                continue
            Ti, Tpi, Tmi = np.linalg.inv(T), np.linalg.inv(Tp), np.linalg.inv(Tm)
            dAd = (_Ad_matrix(Tp) - _Ad_matrix(Tm)) / (2 * h)
            dAdi = (_Ad_matrix(Tpi) - _Ad_matrix(Tmi)) / (2 * h)
            dAdsi = (_Ad_matrix(Tpi).T - _Ad_matrix(Tmi).T) / (2 * h)  # Ad*_{T⁻¹} = Ad_{T⁻¹}ᵀ
            dAds = (_Ad_matrix(Tp).T - _Ad_matrix(Tm).T) / (2 * h)  # the printed Ad*_T
            worst["81"] = max(worst["81"], np.abs(dAd - _ad(_vee(dT @ Ti)) @ A).max())
            worst["87"] = max(worst["87"], np.abs(dAdi + _ad(dh) @ _Ad_matrix(Ti)).max())
            worst["88"] = max(worst["88"], np.abs(dAdsi + _Ad_matrix(Ti).T @ _ad(dh).T).max())
            printed_88 = max(printed_88, np.abs(dAds + A.T @ _ad(dh).T).max())
    assert max(worst.values()) < 1e-7, worst
    assert printed_88 > 1e-2, printed_88  # (88) as printed, with Ad*_T: off by O(1)


def test_claim32_derivative_of_the_world_pose_is_the_joint_screw():
    """(90) carried to the world: a joint's coordinate moves every world pose of its subtree
    along the joint's world screw, ∂x_j/∂q_k = ½ 𝒮_k x_j.  Oracle: central differences of
    forward kinematics; 𝒮_k from the spatial Jacobian's column."""
    m = dqdyn.random_tree(8, seed=5, joint_types=("revolute", "prismatic", "helical"))
    q = dqdyn.random_configuration(m, seed=np.random.default_rng(32))
    X = dqdyn.forward_kinematics(m, q)
    h = 1e-6
    for j in range(1, m.nbodies + 1):
        Js = dqdyn.twist_jacobian(m, q, m.body_names[j], frame="spatial")
        for k in range(m.nv):
            e = np.zeros(m.nv)
            e[k] = h
            dX = (dqdyn.forward_kinematics(m, dqdyn.integrate(m, q, e))[j]
                  - dqdyn.forward_kinematics(m, dqdyn.integrate(m, q, -e))[j]) / (2 * h)
            S = Js[:, k]
            pred = 0.5 * mul(np.r_[0.0, S[:3], 0.0, S[3:]], X[j])
            np.testing.assert_allclose(dX, pred, atol=1e-7)


def test_claim33_rnea_derivatives(derivatives):
    """Table 5: ∂τ/∂q, ∂τ/∂q̇, ∂τ/∂q̈ match central differences and ∂τ/∂q̈ = M exactly;
    oracle besides: Pinocchio's computeRNEADerivatives."""
    for seed in (0, 1):
        derivatives.test_rnea_derivatives_finite_differences_all_joint_types(seed)
        derivatives.test_rnea_derivatives_match_pinocchio(seed)
    m = dqdyn.random_tree(10, seed=2)
    q, v, a = _state(m, 33)
    _, _, dtau_da = dqdyn.rnea_derivatives(m, q, v, a)
    np.testing.assert_allclose(dtau_da, dqdyn.mass_matrix(m, q), rtol=1e-12, atol=1e-12)


def test_claim34_aba_derivatives(derivatives):
    """Table 6: ∂q̈/∂q, ∂q̈/∂q̇, ∂q̈/∂τ match finite differences and Pinocchio's
    computeABADerivatives, and ∂q̈/∂τ = M⁻¹."""
    for seed in (0, 1):
        derivatives.test_aba_derivatives_match_pinocchio_and_fd(seed)
    m = dqdyn.random_tree(10, seed=2)
    q, v, tau = _state(m, 34)
    _, _, dqdd_dtau = dqdyn.aba_derivatives(m, q, v, tau)
    np.testing.assert_allclose(dqdd_dtau @ dqdyn.mass_matrix(m, q), np.eye(m.nv), atol=1e-9)


def test_claim35_hybrid_dynamics_derivatives(derivatives):
    """Table 7 (reconstructed): (∂τ_u, ∂q̈_v) with respect to q, q̇, q̈_u, τ_v match central
    finite differences."""
    for seed in (0, 1):
        derivatives.test_hybrid_dynamics_derivatives_finite_differences(seed)


def test_claim36_derivatives_with_respect_to_inertial_parameters(derivatives):
    """The derivatives extend to any scalar parameter: with respect to the inertial parameters
    they are the joint-torque regressor (τ = Y π).  Oracle: finite differences in the
    parameters and Pinocchio's computeJointTorqueRegressor."""
    for seed in (0, 1):
        derivatives.test_regressor_is_the_inertial_parameter_derivative(seed)


def _with_parameters(m, pi):
    """``m`` rebuilt with the inertial parameters ``pi`` (nbodies, 10): mass, first moment
    ``m c`` and the inertia about the body origin back to mass, CoM and CoM inertia."""
    from dqdyn.scale.sweep import with_inertia

    mass = np.r_[0.0, pi[:, 0]]
    com = np.vstack([np.zeros(3), pi[:, 1:4] / pi[:, :1]])
    Io = np.zeros((m.nbodies, 3, 3))
    for (r, c), k in zip([(0, 0), (0, 1), (1, 1), (0, 2), (1, 2), (2, 2)], range(4, 10)):
        Io[:, r, c] = Io[:, c, r] = pi[:, k]
    c = com[1:]
    Ic = Io - pi[:, 0, None, None] * ((c * c).sum(1)[:, None, None] * np.eye(3) - c[:, :, None] * c[:, None, :])
    return with_inertia(m, mass, com, np.concatenate([np.zeros((1, 3, 3)), Ic]))


def test_claim36_forward_dynamics_derivative_with_respect_to_inertial_parameters():
    """§4.2 with p an inertial parameter (through ∂𝓘_i/∂p): the forward dynamics derivative is
    ∂q̈/∂π = −M⁻¹ Y(q, q̇, q̈) (τ = Y π is linear in π; ``aba_parameter_derivatives``), on a tree
    with every joint type, rotor armature and external wrenches.  Oracle: central differences of
    ``aba`` on models rebuilt with each of the 10·n parameters perturbed, and of Pinocchio's
    ``aba`` with ``Inertia.FromDynamicParameters`` perturbed the same way."""
    from pinconv import pin, pin_from_model, q_to_pin, v_transform

    h = 1e-6
    m = dqdyn.random_tree(7, seed=36, branching=0.5)
    m = m.with_armature(np.random.default_rng(36).uniform(0.0, 0.3, size=m.nv))
    rng = np.random.default_rng(360)
    q = dqdyn.random_configuration(m, seed=rng)
    v, tau = rng.normal(size=(2, m.nv))
    fext = rng.normal(size=(m.nbodies + 1, 6))
    D = dqdyn.aba_parameter_derivatives(m, q, v, tau, fext)
    pi = dqdyn.inertial_parameters(m)
    assert D.shape == (m.nv, pi.size)
    fd = np.empty_like(D)
    for k in range(pi.size):
        dp = np.zeros(pi.size)
        dp[k] = h
        up, dn = (_with_parameters(m, (pi.ravel() + s * dp).reshape(pi.shape)) for s in (1, -1))
        fd[:, k] = (dqdyn.aba(up, q, v, tau, fext) - dqdyn.aba(dn, q, v, tau, fext)) / (2 * h)
    np.testing.assert_allclose(D, fd, atol=1e-6 * (1 + np.abs(fd).max()))
    # Pinocchio, on a tree without planar joints: its own ABA, parameters set by its own
    # Inertia.FromDynamicParameters (its blocks follow its depth-first joint order)
    m2 = dqdyn.random_tree(7, seed=37, joint_types=("revolute", "prismatic", "helical",
                                                     "cylindrical", "spherical", "free"))
    pm, _ = pin_from_model(m2)
    pd = pm.createData()
    q2 = dqdyn.random_configuration(m2, seed=rng)
    v2, tau2 = rng.normal(size=(2, m2.nv))
    T = v_transform(m2, pm, q2)
    qp = q_to_pin(m2, pm, q2)
    D2 = dqdyn.aba_parameter_derivatives(m2, q2, v2, tau2)
    pi2 = dqdyn.inertial_parameters(m2)
    for i in range(1, m2.nbodies + 1):
        jid = pm.getJointId(m2.joint_names_all[i])
        for e in range(10):
            col = []
            for s in (1, -1):
                p = pi2[i - 1].copy()
                p[e] += s * h
                keep = pm.inertias[jid].copy()
                pm.inertias[jid] = pin.Inertia.FromDynamicParameters(p)
                col.append(T.T @ pin.aba(pm, pd, qp, T @ v2, T @ tau2))
                pm.inertias[jid] = keep
            np.testing.assert_allclose(D2[:, 10 * (i - 1) + e], (col[0] - col[1]) / (2 * h),
                                       atol=1e-6 * (1 + np.abs(D2).max()))
    # batches: one row per state
    Q = dqdyn.random_configuration(m, size=3, seed=rng)
    V, TAU = rng.normal(size=(2, 3, m.nv))
    DB = dqdyn.aba_parameter_derivatives(m, Q, V, TAU)
    for n in range(3):
        np.testing.assert_allclose(DB[n], dqdyn.aba_parameter_derivatives(m, Q[n], V[n], TAU[n]),
                                   rtol=1e-12, atol=1e-12)
    with pytest.raises(dqdyn.errors.ShapeError, match="tau"):
        dqdyn.aba_parameter_derivatives(m, q, v, tau[:-1])
    with pytest.raises(dqdyn.errors.ModelError, match="model"):
        dqdyn.aba_parameter_derivatives("panda", q, v, tau)
