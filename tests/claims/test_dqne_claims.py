"""The dqNE / dqEL claims 8–18 and 24–25 of [Silva2022, §3] and [Silva2022thesis, ch. 4–5 and
appendices A–C], with the corrected Fierro–Lewis sign of [Silva2022thesis, app. A]."""

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

import dqdyn
from dqdyn.algebra.dualquat import matrix_from_pose
from dqdyn.algebra.rotations import pose_from_rt, quat_from_rpy
from dqdyn.composition.modular import Assembly
from dqdyn.dynamics.dqel import dq_euler_lagrange, wrench_input
from dqdyn.dynamics.mobile import fierro_lewis
from dqdyn.multibody.joints import PRISMATIC, REVOLUTE

from pinconv import ROBOTS, erd, pin, pin_from_model, q_to_pin, v_transform


# ------------------------------------------------------------------ claim 8: classic Newton–Euler
def classic_newton_euler(m, q, qd, qdd, g):
    """Textbook world-frame recursive Newton–Euler (Luh, Walker & Paul 1980) with rotation
    matrices, for revolute / prismatic chains or trees — written independently of dqdyn's kernels
    (reads only the model's placements, axes and inertias)."""
    n = m.nbodies
    R = [np.eye(3)] + [None] * n
    p = [np.zeros(3)] + [None] * n
    w = [np.zeros(3)] + [None] * n
    wd = [np.zeros(3)] + [None] * n
    acc = [-np.asarray(g, dtype=float)] + [None] * n  # gravity as a base acceleration
    z = [None] * (n + 1)
    for i in range(1, n + 1):
        lam = int(m.parent[i])
        T = matrix_from_pose(np.array(m.joint_placement[i]))
        ax = np.array(m.joint_axis[i])
        qi, di, ddi = q[m.idx_q[i]], qd[m.idx_v[i]], qdd[m.idx_v[i]]
        RJ = R[lam] @ T[:3, :3]
        z[i] = RJ @ ax
        pJ = p[lam] + R[lam] @ T[:3, 3]
        r = pJ - p[lam]
        base_acc = acc[lam] + np.cross(wd[lam], r) + np.cross(w[lam], np.cross(w[lam], r))
        if m.joint_type[i] == REVOLUTE:
            R[i] = RJ @ Rotation.from_rotvec(ax * qi).as_matrix()
            p[i] = pJ
            w[i] = w[lam] + z[i] * di
            wd[i] = wd[lam] + z[i] * ddi + np.cross(w[lam], z[i] * di)
            acc[i] = base_acc
        elif m.joint_type[i] == PRISMATIC:
            R[i] = RJ
            p[i] = pJ + z[i] * qi
            w[i], wd[i] = w[lam], wd[lam]
            s = z[i] * qi
            acc[i] = (base_acc + np.cross(wd[lam], s) + np.cross(w[lam], np.cross(w[lam], s))
                      + z[i] * ddi + 2 * np.cross(w[lam], z[i] * di))
        else:
            raise NotImplementedError
    f = [np.zeros(3) for _ in range(n + 1)]
    nm = [np.zeros(3) for _ in range(n + 1)]  # moment about the body origin p_i
    tau = np.zeros(m.nv)
    for i in range(n, 0, -1):
        rc = R[i] @ np.array(m.com[i])
        ac = acc[i] + np.cross(wd[i], rc) + np.cross(w[i], np.cross(w[i], rc))
        Iw = R[i] @ np.array(m.inertia[i]) @ R[i].T
        F = m.mass[i] * ac
        f[i] += F
        nm[i] += Iw @ wd[i] + np.cross(w[i], Iw @ w[i]) + np.cross(rc, F)
        tau[m.idx_v[i]] = z[i] @ (nm[i] if m.joint_type[i] == REVOLUTE else f[i])
        lam = int(m.parent[i])
        f[lam] += f[i]
        nm[lam] += nm[i] + np.cross(p[i] - p[lam], f[i])
    return tau


def test_claim8_dqne_equals_classic_newton_euler_50dof():
    m = dqdyn.random_tree(50, seed=50, branching=0.0, joint_types=("revolute", "prismatic"))
    assert m.nv == 50 and all(m.parent[i] == i - 1 for i in range(1, 51))
    rng = np.random.default_rng(0)
    for _ in range(3):
        q = dqdyn.random_configuration(m, seed=rng)
        v, a = rng.normal(size=50), rng.normal(size=50)
        tau = dqdyn.rnea(m, q, v, a)
        ref = classic_newton_euler(m, q, v, a, m.gravity)
        np.testing.assert_allclose(tau, ref, rtol=0, atol=1e-10 * np.abs(ref).max())
    # and Pinocchio, for good measure
    pm = pin_from_model(m)[0]
    np.testing.assert_allclose(tau, pin.rnea(pm, pm.createData(), q_to_pin(m, pm, q), v, a),
                               atol=1e-10 * np.abs(tau).max())


def test_claim8_classic_newton_euler_on_a_tree():
    m = dqdyn.random_tree(20, seed=5, joint_types=("revolute", "prismatic"))
    rng = np.random.default_rng(1)
    q = dqdyn.random_configuration(m, seed=rng)
    v, a = rng.normal(size=m.nv), rng.normal(size=m.nv)
    ref = classic_newton_euler(m, q, v, a, m.gravity)
    np.testing.assert_allclose(dqdyn.rnea(m, q, v, a), ref, atol=1e-10 * np.abs(ref).max())


# ------------------------------------------------------------------ claims 9, 10: joints, gravity
def test_claim9_every_joint_type_one_generalized_force_per_axis():
    """dqNE handles every joint of [Silva2022, Table 1] / [Silva2022thesis, Table 4.1] —
    revolute, prismatic, spherical, cylindrical, planar, helical (pitch h) and 6-DoF — and a
    multi-axis joint returns one generalized force per axis by projecting its joint wrench
    ([Silva2022, eq. (30)] and footnote 7): τ_k = ⟨ω_k, τ⟩ + ⟨v_k, f⟩ with ω_k + ε v_k the joint
    twist per unit q̇_k, i.e. τ_l + h f_l for the helical joint.  Oracle: Pinocchio's rnea
    (every joint type of the tree), and the projection computed from dqdyn's joint wrenches and
    the spatial Jacobian's columns."""
    from dqdyn.algebra.dualquat import Ad6_inv, conj, mul

    from pinconv import tdot_v

    names = {"revolute", "prismatic", "spherical", "cylindrical", "planar", "helical", "free"}
    for seed in (0, 1):
        m = dqdyn.random_tree(14, seed=seed)
        assert {m.joint_type_name(i) for i in range(1, m.nbodies + 1)} == names
        pm, _ = pin_from_model(m)
        pd = pm.createData()
        rng = np.random.default_rng(9 + seed)
        q = dqdyn.random_configuration(m, seed=rng)
        v, a = rng.normal(size=(2, m.nv))
        T = v_transform(m, pm, q)
        tp = T.T @ pin.rnea(pm, pd, q_to_pin(m, pm, q), T @ v, T @ a + tdot_v(m, pm, q, v))
        ne = dqdyn.newton_euler(m, q, v, a)
        np.testing.assert_allclose(ne.tau, tp, atol=1e-10 * (1 + np.abs(tp).max()))
        X = dqdyn.forward_kinematics(m, q)
        for i in range(1, m.nbodies + 1):
            xJ = mul(X[m.parent[i]], np.array(m.joint_placement[i]))  # F_{J_i}, where Γ_i is given
            Js = dqdyn.twist_jacobian(m, q, i, frame="spatial")
            sl = m.v_slice(m.joint_names_all[i])
            for k in range(sl.start, sl.stop):
                S = Ad6_inv(xJ, Js[:, k])  # the joint twist per unit q̇_k, in F_{J_i}
                f, tau = ne.wrenches[i][:3], ne.wrenches[i][3:]
                assert ne.tau[k] == pytest.approx(S[:3] @ tau + S[3:] @ f, abs=1e-10 * (1 + np.abs(tp).max()))
            if m.joint_type_name(i) == "helical":  # τ_l + h f_l along the axis l
                l, h = np.array(m.joint_axis[i]), float(m.joint_pitch[i])
                assert h != 0
                lw = Ad6_inv(conj(mul(conj(xJ), X[i])), np.r_[l, 0, 0, 0])[:3]  # the axis in F_{J_i}
                assert ne.tau[sl.start] == pytest.approx(lw @ tau + h * (lw @ f), abs=1e-10 * (1 + np.abs(tp).max()))


def test_claim10_gravity_enters_only_through_the_com_wrenches():
    """Gravity enters dqNE only as −m_i g^{c_i} in each CoM wrench ([Silva2022, eq. (25)];
    [Silva2022thesis, Alg. 4.4]): a model with gravity equals the same model without gravity
    loaded by the weights m_i g at the CoMs; and 𝒩(q, 0, 0) is the gravity compensation
    [Silva2022thesis, eq. (B.2)], ∂V/∂q with V = −Σ m_i g·p_{c_i}.  Oracle: Pinocchio's
    computeGeneralizedGravity, central differences of V from the CoM positions, and rnea with
    the weights as external wrenches."""
    from dqdyn.algebra.dualquat import matrix_from_pose

    g = np.array([0.3, -0.4, -9.81])
    m = dqdyn.random_tree(10, seed=10, joint_types=("revolute", "prismatic", "helical", "spherical"),
                          gravity=g)
    m0 = dqdyn.random_tree(10, seed=10, joint_types=("revolute", "prismatic", "helical", "spherical"),
                           gravity=(0.0, 0.0, 0.0))
    np.testing.assert_array_equal(np.asarray(m.mass), np.asarray(m0.mass))
    rng = np.random.default_rng(10)
    q = dqdyn.random_configuration(m, seed=rng)
    v, a = rng.normal(size=(2, m.nv))
    X = dqdyn.forward_kinematics(m, q)
    fext = np.zeros((m.nbodies + 1, 6))
    for i in range(1, m.nbodies + 1):  # the weight m_i g at the CoM, in body axes about the origin
        fb = m.mass[i] * matrix_from_pose(X[i])[:3, :3].T @ g
        fext[i] = np.r_[fb, np.cross(np.array(m.com[i]), fb)]
    tau = dqdyn.rnea(m, q, v, a)
    np.testing.assert_allclose(tau, dqdyn.rnea(m0, q, v, a, fext), atol=1e-10 * (1 + np.abs(tau).max()))
    # 𝒩(q, 0, 0) = ∂V/∂q, the gravity compensation
    tg = dqdyn.rnea(m, q, np.zeros(m.nv), np.zeros(m.nv))

    def V(q):
        C = dqdyn.com_poses(m, q)
        return -sum(m.mass[i] * g @ matrix_from_pose(C[i])[:3, 3] for i in range(1, m.nbodies + 1))

    h = 1e-6
    dV = np.array([(V(dqdyn.integrate(m, q, h * e)) - V(dqdyn.integrate(m, q, -h * e))) / (2 * h)
                   for e in np.eye(m.nv)])
    np.testing.assert_allclose(tg, dV, atol=1e-6 * (1 + np.abs(dV).max()))
    pm, _ = pin_from_model(m)
    T = v_transform(m, pm, q)
    gp = T.T @ pin.computeGeneralizedGravity(pm, pm.createData(), q_to_pin(m, pm, q))
    np.testing.assert_allclose(tg, gp, atol=1e-10 * (1 + np.abs(gp).max()))
    # and without gravity 𝒩(q, 0, 0) vanishes
    np.testing.assert_allclose(dqdyn.rnea(m0, q, np.zeros(m.nv), np.zeros(m.nv)), 0.0, atol=1e-14)


# ------------------------------------------------------------------ claim 14: holonomic base
def test_claim14_holonomic_base_forces_by_the_projection_eq_4_37():
    """Holonomic mobile manipulator (the 9-DoF JACO-like arm on a planar-joint base):
    the base's generalized forces (f_x, f_y, τ_z) are the projections (4.37) of the total wrench
    transmitted to the base onto Ad(r_0^{c_1})(î, ĵ, k̂) [Silva2022thesis, eq. (4.37)] — taken
    about the vertical axis the base turns about; about the base CoM (as printed) they hold when
    the CoM is on that axis, and here (CoM 1.45 cm off) differ by exactly ((p_a − p_c) × f)·k̂
    (p_a on the axis, p_c the CoM).  Oracle:
    Pinocchio's rnea of the same model (planar root joint).  (The V-REP CMC of
    [Silva2022thesis, Table 4.8] is the ``holonomic_mm`` reproduce case, MuJoCo standing in.)"""
    from dqdyn.algebra.dualquat import matrix_from_pose
    from dqdyn.reproduce import robots
    from dqdyn.scale.sweep import with_inertia

    from pinconv import tdot_v

    m = robots.holonomic_mm()
    assert m.nv == 9 and m.joint_type_name(1) == "planar"
    pm, _ = pin_from_model(m)
    pd = pm.createData()
    rng = np.random.default_rng(14)
    for _ in range(3):
        q = dqdyn.random_configuration(m, seed=rng)
        v, a = rng.normal(size=(2, m.nv))
        T = v_transform(m, pm, q)
        tp = T.T @ pin.rnea(pm, pd, q_to_pin(m, pm, q), T @ v, T @ a + tdot_v(m, pm, q, v))
        ne = dqdyn.newton_euler(m, q, v, a)
        np.testing.assert_allclose(ne.tau, tp, atol=1e-10 * (1 + np.abs(tp).max()))
        f, tau0 = ne.wrenches[1][:3], ne.wrenches[1][3:]  # Γ_1: at F_0's origin, F_0's axes
        Xb = matrix_from_pose(dqdyn.forward_kinematics(m, q)[1])
        p_axis, p_com = Xb[:3, 3], Xb[:3, :3] @ np.array(m.com[1]) + Xb[:3, 3]
        about = lambda p: tau0 - np.cross(p, f)  # noqa: E731  (the moment about the point p)
        np.testing.assert_allclose(ne.tau[:3], [f[0], f[1], about(p_axis)[2]], atol=1e-10 * (1 + np.abs(tp).max()))
        printed = about(p_com)[2]  # (4.37) about the base CoM
        assert printed - ne.tau[2] == pytest.approx(np.cross(p_axis - p_com, f)[2], abs=1e-10)
        assert abs(printed - ne.tau[2]) > 1e-4
    # with the base CoM moved onto the axis, (4.37) about the CoM is the φ-force itself
    com = np.array(m.com, dtype=float)
    com[1, :2] = 0.0
    m2 = with_inertia(m, m.mass, com, m.inertia)
    ne = dqdyn.newton_euler(m2, q, v, a)
    Xb = matrix_from_pose(dqdyn.forward_kinematics(m2, q)[1])
    p_com = Xb[:3, :3] @ com[1] + Xb[:3, 3]
    f = ne.wrenches[1][:3]
    assert ne.tau[2] == pytest.approx((ne.wrenches[1][3:] - np.cross(p_com, f))[2], abs=1e-10)


# ------------------------------------------------------------------ claim 12: n + 2 calls
def test_claim12_euler_lagrange_from_n_plus_2_dqne_calls():
    m = dqdyn.random_tree(50, seed=51, branching=0.0)
    rng = np.random.default_rng(2)
    q = dqdyn.random_configuration(m, seed=rng)
    v, tau = rng.normal(size=m.nv), rng.normal(size=m.nv)
    M = dqdyn.mass_matrix(m, q, method="newton_euler")
    np.testing.assert_allclose(M, dqdyn.mass_matrix(m, q), atol=1e-11 * np.abs(M).max())
    g = dqdyn.rnea(m, q, np.zeros(m.nv), np.zeros(m.nv))
    Cv = dqdyn.rnea(m, q, v, np.zeros(m.nv)) - g
    qdd = np.linalg.solve(M, tau - Cv - g)  # q̈ = M⁻¹ (τ − C q̇ − g) reproduces forward dynamics
    np.testing.assert_allclose(qdd, dqdyn.aba(m, q, v, tau), atol=1e-8 * np.abs(qdd).max())


# ------------------------------------------------------------------ claim 25: dqEL
def test_claim25_dqel_reproduces_dqne_wrenches_7dof_1000_states():
    rel, _ = ROBOTS["xarm7"]
    m = dqdyn.load_urdf(erd(rel))
    assert m.nv == 7
    rng = np.random.default_rng(3)
    Q = np.stack([dqdyn.random_configuration(m, seed=rng) for _ in range(1000)])
    V, A = rng.normal(size=(1000, 7)), rng.normal(size=(1000, 7))
    E = dq_euler_lagrange(m, Q, V)
    assert E.M.shape == (1000, m.nbodies, 7, 6) and E.G.shape == (1000, m.nbodies, 6)
    ref = dqdyn.newton_euler(m, Q, V, A).wrenches[:, 1:]
    err = np.linalg.norm(E.wrenches(A) - ref, axis=-1)  # per-joint error norms
    scale = np.abs(ref).max()
    assert err.mean() < 1e-13 * max(1.0, scale) and err.max() < 1e-11 * max(1.0, scale)
    # the projection of M̲ on the joint axes is the real M (columns: dqNE with a = e_k)
    k = 4
    Mk = dqdyn.newton_euler(m, Q[0], np.zeros(7), np.eye(7)[k]).wrenches[1:] - E.G[0]
    np.testing.assert_allclose(E.M[0, :, k], Mk, atol=1e-12 * scale)


# ------------------------------------------------------------------ claims 11, 24: B.3, B.5
def test_claim11_end_effector_wrench_input():
    m = dqdyn.random_tree(7, seed=7, branching=0.0)
    rng = np.random.default_rng(4)
    q = dqdyn.random_configuration(m, seed=rng)
    frame = m.frame_names[-1]
    zeta = rng.normal(size=6)
    r = wrench_input(m, q, frame, zeta)
    g = dqdyn.newton_euler(m, q, None, None)  # 𝒩(q, 0, 0): gravity compensation (B.2)
    np.testing.assert_allclose(g.tau, dqdyn.gravity(m, q), atol=1e-12)
    J = dqdyn.twist_jacobian(m, q, frame, "body")
    # τ_u = g + J_ωᵀ τ_d + J_vᵀ f_d: the desired wrench propagated to all joints
    np.testing.assert_allclose(r.tau, g.tau + J[:3].T @ zeta[3:] + J[3:].T @ zeta[:3], atol=1e-11)
    # 𝒩̄ − 𝒩 is linear in ζ_d
    r2 = wrench_input(m, q, frame, 2 * zeta)
    np.testing.assert_allclose(r2.wrenches - g.wrenches, 2 * (r.wrenches - g.wrenches), atol=1e-11)
    rw = wrench_input(m, q, frame, zeta, reference="world_aligned")
    Jw = dqdyn.twist_jacobian(m, q, frame, "world_aligned")
    np.testing.assert_allclose(rw.tau, g.tau + Jw[:3].T @ zeta[3:] + Jw[3:].T @ zeta[:3],
                               atol=1e-11)


def test_claim24_wrench_control_drives_the_jaco_to_the_thesis_goal():
    """[Silva2022thesis, app. B, eqs. (B.3)–(B.5)]: Γ_u = 𝒩̄(q, 0, 0, ζ_d) + Γ_diss with the
    potential-field force ζ_d = −k_p (p − p_d) − k_v ṗ and the thesis's gains k_p = 30, k_v = 15,
    k_diss = 0.1 drives the JACO's end effector from p = (0.2828, 0.1177, 0.6855) to
    p_d = (−0.4619, −0.0675, 0.6277) (§B.1.2) — here to under 1 % of the initial 0.77 m in 10 s,
    the error decreasing throughout.  Oracle: the simulated closed loop (RK4 over ``aba``), the
    start found by least squares (scipy) on forward kinematics, the Jacobian form g(q) + J_vᵀ f_a
    of the same law, and B.2: with zero gains the arm stays at rest."""
    from scipy.optimize import least_squares

    from dqdyn.simulation import WrenchControl, simulate

    m = dqdyn.load_bundled("jaco6")  # a JACO-like 6-DoF arm (the JACO's inertias are unpublished)
    start, goal = np.array([0.2828, 0.1177, 0.6855]), np.array([-0.4619, -0.0675, 0.6277])
    w = WrenchControl(m, "end_effector", goal)
    assert (w.kp, w.kv) == (30.0, 15.0) and np.all(np.asarray(w.kdiss) == 0.1)
    ik = least_squares(lambda q: w.position(q) - start, np.array([0.0, 0.6, 2.2, 0.0, 0.9, 0.0]))
    q0 = ik.x
    np.testing.assert_allclose(w.position(q0), start, atol=1e-6)
    wj = WrenchControl(m, "end_effector", goal, route="jacobian")
    rng = np.random.default_rng(24)
    for _ in range(3):
        q, v = q0 + rng.normal(size=6), rng.normal(size=6)
        np.testing.assert_allclose(w(0, q, v), wj(0, q, v), atol=1e-12)
    w0 = WrenchControl(m, "end_effector", goal, kp=0, kv=0, kdiss=0)
    np.testing.assert_allclose(dqdyn.aba(m, q0, np.zeros(6), w0(0, q0, np.zeros(6))), 0.0, atol=1e-10)
    tr = simulate(m, q0, np.zeros(6), w, 10.0, 1e-2, integrator="rk4")
    err = np.array([np.linalg.norm(w.position(q) - goal) for q in tr.q[::50]])
    assert err[0] == pytest.approx(0.7696, abs=1e-3)
    assert np.all(np.diff(err) < 0) and err[-1] < 1e-2 * err[0], err


# ------------------------------------------------------------------ claim 17: differential drive
def _pioneer(d, m=16.0, i33=2.0906):
    b = dqdyn.ModelBuilder("pioneer")
    b.add_body("base", "world", "planar", mass=m, com=(d, 0.0, 0.0),
               inertia=np.diag([1.2, 1.5, i33]))
    return b.build()


@pytest.mark.parametrize("d", [0.001, 0.15])
def test_claim17_differential_drive_base_reproduces_fierro_lewis(d):
    """dqNE with the base twist of eq. A.8 gives the Fierro–Lewis forces — with the corrected
    signs for a CoM at +d ([Silva2022thesis, app. A]); the printed signs hold for a CoM at −d."""
    m = _pioneer(d)
    rng = np.random.default_rng(5)
    for _ in range(20):
        q, v, a = rng.normal(size=3), rng.normal(size=3), rng.normal(size=3)
        M, c = fierro_lewis(16.0, 2.0906, d, q, v)
        np.testing.assert_allclose(dqdyn.rnea(m, q, v, a), M @ a + c, atol=1e-12)
        Mp, cp = fierro_lewis(16.0, 2.0906, d, q, v, printed=True)
        np.testing.assert_allclose(dqdyn.rnea(_pioneer(-d), q, v, a), Mp @ a + cp, atol=1e-12)
        assert np.abs(Mp @ a + cp - (M @ a + c)).max() > 1e-3 * d
        # the base CoM twist is A.8: ω = φ̇ k̂, ṗ (A.6) in F_d's axes
        xi = dqdyn.newton_euler(m, q, v, a).twists[1]
        phi = q[2]
        pdot = np.array([v[0] - d * v[2] * np.sin(phi), v[1] + d * v[2] * np.cos(phi), 0.0])
        Rz = Rotation.from_euler("z", phi).as_matrix()
        np.testing.assert_allclose(xi, np.r_[0, 0, v[2], Rz.T @ pdot], atol=1e-13)


# ------------------------------------------------------------------ claims 15, 16: branched / modular
def _assembly_38(joint_types=("revolute", "prismatic", "helical")):
    """The thesis §5.3 topology: 9 subsystems, 6 + 8×4 = 38 DoF; p2 = p3 = p4 = 1, p5 = 4,
    p6 = 2, p7 = p8 = p9 = 6."""
    rng = np.random.default_rng(38)
    parents = {2: 1, 3: 1, 4: 1, 5: 4, 6: 2, 7: 6, 8: 6, 9: 6}
    asm = Assembly("tree38")
    asm.add("s1", dqdyn.random_tree(6, seed=1, branching=0.0, joint_types=joint_types))
    for j in range(2, 10):
        parent = asm.subsystems[parents[j] - 1].model
        at = parent.frame_names[1 + rng.integers(parent.nbodies)]
        P = pose_from_rt(quat_from_rpy(rng.normal(size=3)), rng.normal(size=3) * 0.2)
        asm.add(f"s{j}", dqdyn.random_tree(4, seed=j, branching=0.0, joint_types=joint_types),
                parent=f"s{parents[j]}", at=at, placement=P)
    return asm


def test_claim15_16_modular_tree_equals_monolithic_model_and_pinocchio():
    asm = _assembly_38()
    m = asm.build()
    assert m.nv == 38 and asm.nv == 38 and len(asm.subsystems) == 9
    rng = np.random.default_rng(6)
    pm = pin_from_model(m)[0]
    pd = pm.createData()
    for _ in range(3):
        q = dqdyn.random_configuration(m, seed=rng)
        v, a = rng.normal(size=38), rng.normal(size=38)
        r = asm.newton_euler(q, v, a)
        mono = dqdyn.newton_euler(m, q, v, a)
        scale = np.abs(mono.wrenches).max()
        np.testing.assert_allclose(r.tau, mono.tau, atol=1e-11 * np.abs(mono.tau).max())
        # Γ_t = A̲ 1_s: each subsystem's block of joint wrenches equals the monolithic one
        np.testing.assert_allclose(np.concatenate(r.wrenches), mono.wrenches[1:],
                                   atol=1e-11 * scale)
        T = v_transform(m, pm, q)  # (a permutation: Pinocchio numbers the joints depth-first)
        np.testing.assert_allclose(r.tau, T.T @ pin.rnea(pm, pd, q_to_pin(m, pm, q), T @ v, T @ a),
                                   atol=1e-10 * np.abs(r.tau).max())
    # batched evaluation
    Q = np.stack([dqdyn.random_configuration(m, seed=rng) for _ in range(4)])
    np.testing.assert_allclose(asm.rnea(Q, v, a)[2], dqdyn.rnea(m, Q[2], v, a), atol=1e-9)


def test_claim16_black_box_subsystem_needs_only_its_connection_twist_and_wrench():
    """A subsystem's joint wrenches follow from its own model and its connection twist alone
    [Silva2022thesis, §5.2, eqs. (5.10)–(5.11)]: re-evaluating a leaf subsystem with just ``connection_twists`` reproduces them."""
    asm = _assembly_38(joint_types=("revolute", "spherical", "prismatic"))
    m = asm.build()
    rng = np.random.default_rng(7)
    q = dqdyn.random_configuration(m, seed=rng)
    v, a = rng.normal(size=m.nv), rng.normal(size=m.nv)
    r = asm.newton_euler(q, v, a)
    np.testing.assert_allclose(r.tau, dqdyn.rnea(m, q, v, a), atol=1e-10 * np.abs(r.tau).max())
    k = 8  # s9, a leaf under s6
    s = asm.subsystems[k]
    sq, sv = asm.slices(s.name)
    X = dqdyn.frame_pose(m, q, f"s6/{s.at}")
    from dqdyn.algebra.dualquat import mul

    xa = mul(X, s.placement)
    alone = dqdyn.newton_euler(
        s.extended, np.r_[xa, q[sq]], np.r_[r.connection_twists[k], v[sv]],
        np.r_[r.connection_twist_derivatives[k], a[sv]])
    np.testing.assert_allclose(alone.tau[6:], r.tau[sv], atol=1e-10)
    np.testing.assert_allclose(alone.com_wrenches[1], r.connection_wrenches[k], atol=1e-10)
