"""The dqNE / dqEL claims 8–18 and 24–25 of [Silva2022, §3] and [Silva2022thesis, ch. 4–5 and
appendices A–C], with the corrected Fierro–Lewis sign of [Silva2022thesis, app. A]."""

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

import dqdyn
from dqdyn.algebra.rotations import pose_from_rt, quat_from_rpy
from dqdyn.algebra.dualquat import matrix_from_pose
from dqdyn.dynamics.dqel import dq_euler_lagrange, wrench_input
from dqdyn.dynamics.mobile import fierro_lewis
from dqdyn.composition.modular import Assembly
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


# ------------------------------------------------------------------ claims 10, 11, 24: B.2, B.3
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
