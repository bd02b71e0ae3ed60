"""[Mladenova] (vector-parameters, elastic joints, symbolic dynamics): one test per checkable
result, named after the claim.

Blocks are grouped by topic; keep each block self-contained.  Oracles are independent of the code under test: scipy's Rotation /
Slerp / expm, numpy.linalg.eigh, sympy, finite differences, dqdyn's own multibody algorithms
(twist_jacobian, mass_matrix, constrained_forward_dynamics) for cross-layer checks.
"""

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

RNG4 = np.random.default_rng(4_004)


# =====================================================================================
# vector-parameter kinematics, principal axes, pseudo-coordinates, Cayley
# cubics, biped: claims 1–19, 23, 24
# =====================================================================================
from dqdyn.algebra import diagonalize as _pa  # noqa: E402
from dqdyn.algebra import vector_parameter as _vp  # noqa: E402
from dqdyn.algebra import vp_kinematics as _vk  # noqa: E402


def _Rx(a):
    return Rotation.from_rotvec([a, 0, 0]).as_matrix()


def _Ry(a):
    return Rotation.from_rotvec([0, a, 0]).as_matrix()


def _Rz(a):
    return Rotation.from_rotvec([0, 0, a]).as_matrix()


def _rand_c(n=None):
    return RNG4.uniform(-2.0, 2.0, size=(3,) if n is None else (n, 3))


def _rot_of_vp(c):
    """scipy's rotation by 2 arctan|c| about c/|c| (the oracle for O(c))."""
    n = np.linalg.norm(c)
    return Rotation.from_rotvec(2 * np.arctan(n) * c / n).as_matrix()


def _sk(a):
    return np.array([[0.0, -a[2], a[1]], [a[2], 0.0, -a[0]], [-a[1], a[0], 0.0]])


def test_claim01_cayley_map():
    """§2.4: O(c) = ((1 − c²) I + 2 c cᵀ + 2 c^×)/(1 + c²) (65) is orthogonal with det +1, equals
    the Cayley form (I + c^×)(I − c^×)⁻¹ and the rotation by α about e for c = tan(α/2) e.
    Oracle: scipy's Rotation.from_rotvec and numpy's inverse."""
    for _ in range(20):
        alpha, e = RNG4.uniform(-3.0, 3.0), RNG4.normal(size=3)
        e /= np.linalg.norm(e)
        c = np.tan(alpha / 2) * e
        O = _vp.matrix_from_vp(c)
        np.testing.assert_allclose(O @ O.T, np.eye(3), atol=1e-13)
        assert np.linalg.det(O) == pytest.approx(1.0, abs=1e-13)
        np.testing.assert_allclose(O, (np.eye(3) + _sk(c)) @ np.linalg.inv(np.eye(3) - _sk(c)), atol=1e-12)
        np.testing.assert_allclose(O, Rotation.from_rotvec(alpha * e).as_matrix(), atol=1e-12)


def test_claim02_inverse_map():
    """§2.4: c^× = (O − Oᵀ)/(1 + tr O) (66) inverts (65) whenever tr O ≠ −1; at a half-turn it is
    refused (SingularError).  Oracle: scipy rotation matrices of random rotations."""
    from dqdyn import errors

    for R in Rotation.random(20, random_state=1).as_matrix():
        c = _vp.vp_from_matrix(R)
        np.testing.assert_allclose(_sk(c), (R - R.T) / (1 + np.trace(R)), atol=1e-12)
        np.testing.assert_allclose(_vp.matrix_from_vp(c), R, atol=1e-11)
    with pytest.raises(errors.SingularError):
        _vp.vp_from_matrix(Rotation.from_rotvec([0.0, np.pi, 0.0]).as_matrix())


def test_claim03_composition_law():
    """§2.4: O(⟨c1, c2⟩) = O(c1) O(c2) with ⟨c1, c2⟩ = (c1 + c2 + c1 × c2)/(1 − c1·c2) (67); the
    law is associative, ⟨c, −c⟩ = 0 and O(−c) = O(c)ᵀ.  Oracle: scipy's rotation composition."""
    for _ in range(20):
        c1, c2, c3 = _rand_c(), _rand_c(), _rand_c()
        c12 = _vp.vp_compose(c1, c2)
        np.testing.assert_allclose(c12, (c1 + c2 + np.cross(c1, c2)) / (1 - c1 @ c2), rtol=1e-12)
        np.testing.assert_allclose(_vp.matrix_from_vp(c12), _rot_of_vp(c1) @ _rot_of_vp(c2), atol=1e-11)
        np.testing.assert_allclose(_vp.vp_compose(c12, c3), _vp.vp_compose(c1, _vp.vp_compose(c2, c3)),
                                   rtol=1e-9, atol=1e-9)
        np.testing.assert_allclose(_vp.vp_compose(c1, -c1), 0.0, atol=1e-15)
        np.testing.assert_allclose(_vp.matrix_from_vp(-c1), _rot_of_vp(c1).T, atol=1e-12)
        # the order matters: ⟨c2, c1⟩ is O(c2) O(c1), another rotation
        assert np.abs(_vp.vp_compose(c2, c1) - c12).max() > 1e-6


def test_claim05_vector_parameter_of_a_quaternion():
    """§2.4: c = q/q₀ for the unit quaternion (q₀, q) of the rotation (the printed (72),
    (−q₃, −q₂, q₁)/q₀, is not it), and |c| → ∞ as q₀ → 0 (a half-turn is refused).  Oracle:
    scipy's quaternions (scalar last) of the rotation by α about e, c = tan(α/2) e."""
    from dqdyn import errors

    for _ in range(20):
        alpha, e = RNG4.uniform(-3.0, 3.0), RNG4.normal(size=3)
        e /= np.linalg.norm(e)
        x, y, z, w = Rotation.from_rotvec(alpha * e).as_quat()
        c = _vp.vp_from_quat([w, x, y, z])
        np.testing.assert_allclose(c, np.tan(alpha / 2) * e, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(_vp.quat_from_vp(c), np.sign(w) * np.array([w, x, y, z]), atol=1e-12)
        assert np.abs(np.array([-z, -y, x]) / w - c).max() > 1e-3  # the printed (72)
    norms = [np.linalg.norm(_vp.vp_from_quat([np.cos(a / 2), np.sin(a / 2), 0, 0]))
             for a in (3.0, 3.1, 3.14, 3.1415)]
    assert all(b > 10 * a for a, b in zip(norms[1:], norms[2:])) and norms[-1] > 1e4
    with pytest.raises(errors.SingularError):
        _vp.vp_from_quat([0.0, 1.0, 0.0, 0.0])


def test_claim09_angular_velocity_kde_and_acceleration():
    """§2.4, (79)–(81): ω = 2/(1 + c²)(ċ + c × ċ) (spatial), ω_b = 2/(1 + c²)(ċ − c × ċ) (body),
    the kinematic equation ċ = ½ (I − c^× + c cᵀ) ω = ½ (I + c^× + c cᵀ) ω_b, and ω̇ (80).
    Oracle: central differences of O(c(t)) (Ω = Ȯ Oᵀ, Ω_b = Oᵀ Ȯ, scipy matrices) and of ω."""
    h = 1e-6
    for _ in range(10):
        c0, c1, c2 = _rand_c() * 0.5, _rand_c(), _rand_c()
        ct = lambda t: c0 + c1 * t + c2 * t * t  # noqa: E731
        cd, cdd = c1, 2 * c2  # at t = 0
        O = _rot_of_vp(c0)
        Od = (_rot_of_vp(ct(h)) - _rot_of_vp(ct(-h))) / (2 * h)
        W, Wb = Od @ O.T, O.T @ Od
        w = np.array([W[2, 1], W[0, 2], W[1, 0]])
        wb = np.array([Wb[2, 1], Wb[0, 2], Wb[1, 0]])
        k = 2 / (1 + c0 @ c0)
        np.testing.assert_allclose(_vp.vp_angular_velocity(c0, cd), w, atol=1e-8)
        np.testing.assert_allclose(_vp.vp_angular_velocity(c0, cd, frame="body"), wb, atol=1e-8)
        np.testing.assert_allclose(w, k * (cd + np.cross(c0, cd)), atol=1e-8)
        np.testing.assert_allclose(wb, k * (cd - np.cross(c0, cd)), atol=1e-8)
        np.testing.assert_allclose(_vp.vp_kde(c0, w), cd, atol=1e-7)
        np.testing.assert_allclose(0.5 * (np.eye(3) - _sk(c0) + np.outer(c0, c0)) @ w, cd, atol=1e-7)
        np.testing.assert_allclose(0.5 * (np.eye(3) + _sk(c0) + np.outer(c0, c0)) @ wb, cd, atol=1e-7)
        wd = (_vp.vp_angular_velocity(ct(h), c1 + 2 * c2 * h)
              - _vp.vp_angular_velocity(ct(-h), c1 - 2 * c2 * h)) / (2 * h)
        np.testing.assert_allclose(_vp.vp_angular_acceleration(c0, cd, cdd), wd, atol=1e-6)


def test_claim13_dual_vector_parameter():
    """§4.2: the dual vector-parameter ĉ = c + μ ½ (p + p × c + (c·p) c) of (O(c), p) (written out;
    the paper uses it through (153)–(156)) reproduces Ô = O + μ p^× O (151); dual
    composition is SE(3) composition; ĉ = vec/scal of the unit dual quaternion q + ε ½ p q; and
    ⟨(0, 0, tan ϑ̂/2), (tan α̂/2, 0, 0)⟩ with ϑ̂ = ϑ + μ d, α̂ = α + μ a (152)–(153) is the DH
    link transform, p = R_z(ϑ)(a, 0, 0) + (0, 0, d).  Oracle: 4×4 homogeneous matrices from scipy
    rotations, and dqdyn's dual quaternion product."""
    from dqdyn.algebra.dualquat import mul
    from dqdyn.algebra.rotations import pose_from_rt

    def hom(R, p):
        T = np.eye(4)
        T[:3, :3], T[:3, 3] = R, p
        return T

    def cd_of(c, p):
        return 0.5 * (p + np.cross(p, c) + (c @ p) * c)

    for _ in range(10):
        c1, c2 = _rand_c() * 0.7, _rand_c() * 0.7
        p1, p2 = RNG4.normal(size=(2, 3))
        O, Od = _vp.dual_orthogonal_matrix(c1, cd_of(c1, p1))
        np.testing.assert_allclose(O, _rot_of_vp(c1), atol=1e-12)
        np.testing.assert_allclose(Od, _sk(p1) @ _rot_of_vp(c1), atol=1e-12)  # (151)
        x1 = pose_from_rt(_vp.quat_from_vp(c1), p1)
        np.testing.assert_allclose(x1[1:4] / x1[0], c1, atol=1e-12)  # vec/scal, primary part
        c_, cd_ = _vp.dual_vp_from_pose(x1)
        np.testing.assert_allclose(cd_, cd_of(c1, p1), atol=1e-12)
        # dual part of vec/scal in dual arithmetic: (v' s − v s')/s²
        np.testing.assert_allclose((x1[5:8] * x1[0] - x1[1:4] * x1[4]) / x1[0] ** 2, cd_, atol=1e-12)
        c12, cd12 = _vp.dual_vp_compose(c1, cd_of(c1, p1), c2, cd_of(c2, p2))
        T12 = hom(_rot_of_vp(c1), p1) @ hom(_rot_of_vp(c2), p2)
        O12, Od12 = _vp.dual_orthogonal_matrix(c12, cd12)
        np.testing.assert_allclose(O12, T12[:3, :3], atol=1e-11)
        np.testing.assert_allclose(Od12, _sk(T12[:3, 3]) @ T12[:3, :3], atol=1e-10)
        x2 = pose_from_rt(_vp.quat_from_vp(c2), p2)
        x12 = mul(x1, x2)  # the pose product: the same dual vector-parameter
        np.testing.assert_allclose(_vp.dual_vp_from_pose(np.sign(x12[0]) * x12)[1], cd12, atol=1e-10)
    for theta, d, alpha, a in RNG4.uniform(-1.2, 1.2, size=(5, 4)):
        sec2 = 1 / np.cos(theta / 2) ** 2
        ct, ctd = np.array([0, 0, np.tan(theta / 2)]), np.array([0, 0, d / 2 * sec2])
        sa2 = 1 / np.cos(alpha / 2) ** 2
        ca, cad = np.array([np.tan(alpha / 2), 0, 0]), np.array([a / 2 * sa2, 0, 0])
        c, cdual = _vp.dual_vp_compose(ct, ctd, ca, cad)
        O, Od = _vp.dual_orthogonal_matrix(c, cdual)
        Rz, Rx = _Rz(theta), _Rx(alpha)
        p = Rz @ np.array([a, 0, 0]) + np.array([0, 0, d])
        np.testing.assert_allclose(O, Rz @ Rx, atol=1e-12)
        np.testing.assert_allclose(Od, _sk(p) @ Rz @ Rx, atol=1e-12)


def test_claim04_naturality():
    """O(c) O(c') O(c)ᵀ = O(O(c) c'), against scipy's rotation composition."""
    for _ in range(20):
        c, c2 = _rand_c(), _rand_c()
        Oc = Rotation.from_rotvec(2 * np.arctan(np.linalg.norm(c)) * c / np.linalg.norm(c)).as_matrix()
        Oc2 = Rotation.from_rotvec(2 * np.arctan(np.linalg.norm(c2)) * c2 / np.linalg.norm(c2)).as_matrix()
        lhs = Oc @ Oc2 @ Oc.T
        np.testing.assert_allclose(_vp.matrix_from_vp(_vk.vp_rotate(c, c2)), lhs, atol=1e-13)


def test_claim06_d_chart():
    """d = c/sqrt(1+c²): |d| = sin(α/2), O = I + 2(sqrt(1−d²) I + d^×) d^× and composition (70),
    against scipy (the printed (68) c/(1+c²) gives ½ sin α instead)."""
    for _ in range(20):
        c1, c2 = _rand_c(), _rand_c()
        r1 = Rotation.from_quat(np.r_[c1, 1.0])  # scalar-last (x, y, z, w) ∝ (c, 1)
        r2 = Rotation.from_quat(np.r_[c2, 1.0])
        d1, d2 = _vp.vp_second_chart(c1), _vp.vp_second_chart(c2)
        assert abs(np.linalg.norm(d1) - np.sin(r1.magnitude() / 2)) < 1e-14
        assert abs(np.linalg.norm(c1 / (1 + c1 @ c1)) - 0.5 * np.sin(r1.magnitude())) < 1e-14
        np.testing.assert_allclose(_vp.matrix_from_second_chart(d1), r1.as_matrix(), atol=1e-13)
        d12 = _vp.second_chart_compose(d1, d2)
        # (70) is the vector part of the product of the quaternions (sqrt(1 − d²), d)
        s1, s2 = np.sqrt(1 - d1 @ d1), np.sqrt(1 - d2 @ d2)
        s12 = s1 * s2 - d1 @ d2
        np.testing.assert_allclose(d12, s1 * d2 + s2 * d1 + np.cross(d1, d2), atol=1e-13)
        q = (r1 * r2).as_quat()  # scipy: the same rotation, sign canonicalised
        np.testing.assert_allclose(d12, np.sign(s12) * np.sign(q[3]) * q[:3], atol=1e-13)
        if s12 >= 0:
            np.testing.assert_allclose(_vp.matrix_from_second_chart(d12), (r1 * r2).as_matrix(), atol=1e-13)


def test_claim07_bryant():
    """⟨c3,⟨c2,c1⟩⟩ = (a−bg, b+ag, g−ab)/(1+abg) is R_z(φ3) R_y(φ2) R_x(φ1) (scipy 'ZYX')."""
    for _ in range(20):
        p1, p2, p3 = RNG4.uniform(-1.4, 1.4, 3)
        c = _vk.vp_from_bryant(p1, p2, p3)
        a, b, g = np.tan([p1 / 2, p2 / 2, p3 / 2])
        comp = _vp.vp_compose([0, 0, g], _vp.vp_compose([0, b, 0], [a, 0, 0]))
        np.testing.assert_allclose(c, comp, atol=1e-13)
        R = Rotation.from_euler("ZYX", [p3, p2, p1]).as_matrix()
        np.testing.assert_allclose(_vp.matrix_from_vp(c), R, atol=1e-13)
        np.testing.assert_allclose(_vk.bryant_from_vp(c), [p1, p2, p3], atol=1e-12)
    # Euler ZXZ: the corrected formula is R_z(ψ)R_x(ϑ)R_z(φ); printed (71) is R_z(φ)R_x(−ϑ)R_z(ψ)
    psi, th, phi = 0.4, 1.1, -0.7
    np.testing.assert_allclose(_vp.matrix_from_vp(_vk.vp_from_euler(psi, th, phi)),
                               Rotation.from_euler("ZXZ", [psi, th, phi]).as_matrix(), atol=1e-13)
    np.testing.assert_allclose(_vp.matrix_from_vp(_vk.vp_from_euler_printed(psi, th, phi)),
                               Rotation.from_euler("ZXZ", [phi, -th, psi]).as_matrix(), atol=1e-13)
    np.testing.assert_allclose(_vk.euler_from_vp(_vk.vp_from_euler(psi, th, phi)), [psi, th, phi], atol=1e-12)


def test_claim08_modified_dh():
    """c_s = (tan α/2, −tan α/2 tan ϑ/2, tan ϑ/2) = ⟨c_α, c_ϑ⟩ gives R_x(α) R_z(ϑ); and back."""
    for _ in range(20):
        al, th = RNG4.uniform(-2.5, 2.5, 2)
        c = _vk.vp_from_dh(al, th, "modified")
        np.testing.assert_allclose(c, _vp.vp_compose([np.tan(al / 2), 0, 0], [0, 0, np.tan(th / 2)]), atol=1e-13)
        np.testing.assert_allclose(_vp.matrix_from_vp(c), _Rx(al) @ _Rz(th), atol=1e-13)
        np.testing.assert_allclose(_vk.dh_from_vp(c), [al, th], atol=1e-12)
        cs = _vk.vp_from_dh(al, th, "standard")
        np.testing.assert_allclose(_vp.matrix_from_vp(cs), _Rz(th) @ _Rx(al), atol=1e-13)
    from dqdyn import errors

    with pytest.raises(errors.ShapeError, match="c is not"):
        _vk.dh_from_vp([0.3, 0.2, 0.1])


def test_claim10_theorem1_tso3_product():
    """Spatial ω of O1(t) O2(t) is ω1 + O1 ω2, against central differences of the product."""
    def curve(t):
        c1 = np.array([0.3, -0.2, 0.5]) + t * np.array([0.4, 0.1, -0.3])
        c2 = np.array([-0.6, 0.2, 0.1]) + t * t * np.array([0.2, -0.5, 0.3])
        return c1, c2

    t, h = 0.7, 1e-6
    c1, c2 = curve(t)
    (a1, a2), (b1, b2) = curve(t + h), curve(t - h)
    cd1, cd2 = (a1 - b1) / (2 * h), (a2 - b2) / (2 * h)
    w1 = _vp.vp_angular_velocity(c1, cd1)
    w2 = _vp.vp_angular_velocity(c2, cd2)
    c3, w3 = _vk.tso3_compose(c1, w1, c2, w2)
    O = lambda c: _vp.matrix_from_vp(c)  # noqa: E731
    Od = (O(a1) @ O(a2) - O(b1) @ O(b2)) / (2 * h)
    W = Od @ (O(c1) @ O(c2)).T
    np.testing.assert_allclose(w3, [W[2, 1], W[0, 2], W[1, 0]], atol=1e-8)
    np.testing.assert_allclose(O(c3), O(c1) @ O(c2), atol=1e-13)


def test_claim11_chain_jacobian():
    """ω_EE = Σ O(g_{k−1}) 2/(1+c_k²)(I+c_k^×) ċ_k and ċ' = Σ N_CV^k ċ_k (125), against finite
    differences of the composed rotation and its vector-parameter; the printed 1/(1+c²) of (117)
    is off by 2; and against dqdyn's twist_jacobian of a revolute chain (c_k = tan(q_k/2) e_k)."""
    n = 4
    cs, cd = _rand_c(n) * 0.4, RNG4.normal(size=(n, 3))
    h = 1e-6

    def total(c):
        g = np.zeros(3)
        for k in range(n):
            g = _vp.vp_compose(g, c[k])
        return g

    Op, Om = _vp.matrix_from_vp(total(cs + h * cd)), _vp.matrix_from_vp(total(cs - h * cd))
    W = (Op - Om) / (2 * h) @ _vp.matrix_from_vp(total(cs)).T
    w_fd = np.array([W[2, 1], W[0, 2], W[1, 0]])
    NV = _vk.chain_angular_jacobian(cs)
    np.testing.assert_allclose(NV @ cd.reshape(-1), w_fd, atol=1e-8)
    assert np.abs(0.5 * NV @ cd.reshape(-1) - w_fd).max() > 1e-3  # printed (117)
    cdot_fd = (total(cs + h * cd) - total(cs - h * cd)) / (2 * h)
    np.testing.assert_allclose(_vk.chain_vp_jacobian(cs) @ cd.reshape(-1), cdot_fd, atol=1e-7)

    import dqdyn
    from dqdyn.multibody.builders import ModelBuilder

    axes = np.array([[0, 0, 1.0], [0, 1.0, 0], [1.0, 0, 0], [0, 1.0, 0]])
    b = ModelBuilder("vp_chain")
    parent = "world"
    for k in range(n):
        b.add_body(f"l{k}", parent, "revolute", axis=axes[k], xyz=(0.1 * k, 0.05, 0.2), mass=1.0,
                   inertia=np.eye(3) * 0.01)
        parent = f"l{k}"
    m = b.build()
    q, qd = RNG4.uniform(-1, 1, n), RNG4.normal(size=n)
    J = dqdyn.twist_jacobian(m, q, f"l{n - 1}", "world_aligned")
    ck = np.tan(q / 2)[:, None] * axes
    np.testing.assert_allclose(_vk.chain_angular_jacobian(ck) @ _vk.joint_vp_rate(q, axes, qd).reshape(-1),
                               J[:3] @ qd, atol=1e-12)


def test_claim12_screw_axis_and_pitch():
    """Screw of (O(c), p): direction c, slide ν c with ν = c·p/c², L' = c×p − p + νc = 2c × r₀;
    velocity pitch σ = ω·ṗ/ω² with the corrected (143) — against dqdyn's log + plucker_from_twist
    (a different route: the dual-quaternion screw) and the twist of a moving pose."""
    from dqdyn.algebra import dualquat as dq

    for _ in range(10):
        c, p = _rand_c(), RNG4.normal(size=3)
        s = _vk.vp_screw(c, p)
        x = dq.pose(_vp.quat_from_vp(c), p)
        scr = dq.plucker_from_twist(2 * dq.vec6(dq.log(x)))
        np.testing.assert_allclose(s.direction, scr.line[:3], atol=1e-12)
        ang = 2 * np.arctan(np.linalg.norm(c))
        np.testing.assert_allclose(s.translation * c, scr.pitch * ang * scr.line[:3], atol=1e-12)
        np.testing.assert_allclose(s.point, scr.point, atol=1e-12)
        np.testing.assert_allclose(s.moment, 2 * np.cross(c, s.point), atol=1e-12)
        # velocity screw: ω from (79), ṗ arbitrary
        cd, pd = RNG4.normal(size=3), RNG4.normal(size=3)
        w = _vp.vp_angular_velocity(c, cd)
        sigma = _vk.vp_velocity_pitch(c, cd, pd)
        assert abs(sigma - w @ pd / (w @ w)) < 1e-12
        twist = np.r_[w, pd + np.cross(p, w)]  # spatial twist ω + ε(ṗ + p × ω)
        assert abs(sigma - dq.plucker_from_twist(twist).pitch) < 1e-12
        printed = 0.5 * (1 + c @ c) * (np.cross(c, cd) + cd) @ p / ((c @ c) * (cd @ cd) - (c @ cd) ** 2)
        assert abs(printed - sigma) > 1e-6


def test_claim14_dual_jacobian_plucker_lines():
    """The dual Jacobian's columns are the joint axes' Plücker lines and (163) maps (ϑ̇, ḋ) to the
    spatial twist — against dqdyn's twist_jacobian('spatial') of the same DH robot
    (parsers.serial_from_dh), for revolute and prismatic joints."""
    import dqdyn
    from dqdyn.parsers.dh import serial_from_dh

    dh = np.array([[0.1, 0.3, 0.2, np.pi / 2], [0.4, 0.0, 0.5, 0.3], [-0.2, 0.1, 0.0, -np.pi / 2],
                   [0.0, 0.2, 0.1, 0.0]])
    types = "RRPR"
    m = serial_from_dh(dh, joint_types=types)
    q = RNG4.uniform(-1, 1, 4)
    lines, J = _vk.dh_dual_jacobian(dh, q, types)
    Jd = dqdyn.twist_jacobian(m, q, "flange", "spatial")
    for i, t in enumerate(types):
        col = lines[i] if t == "R" else np.r_[np.zeros(3), lines[i, :3]]
        np.testing.assert_allclose(col, Jd[:, i], atol=1e-12)
    qd = RNG4.normal(size=4)
    rates = np.r_[np.where(np.array(list(types)) == "R", qd, 0), np.where(np.array(list(types)) == "P", qd, 0)]
    np.testing.assert_allclose(J @ rates, Jd @ qd, atol=1e-12)
    # Plücker lines: unit direction, moment ⟂ direction
    np.testing.assert_allclose(np.linalg.norm(lines[:, :3], axis=1), 1, atol=1e-13)
    np.testing.assert_allclose(np.sum(lines[:, :3] * lines[:, 3:], 1), 0, atol=1e-13)


def test_claim15_screw_newton_euler_about_a_non_central_point():
    """§4.3: with the screws (164) V̂ = [V; ω], F̂ = [F; M], f̂ = [f; n] at a body point R away
    from the centre of mass, the generalized inertia φ̂ = [[m I, m s×ᵀ], [m s×, J]] (167) gives
    F̂ = φ̂ V̂ and dF̂/dt + V̂× F̂ = f̂ (166, with the derivative the print drops; V̂× of (165)) —
    classical Newton–Euler about R.  Oracle: Newton–Euler at the centre of mass
    (f = m a_G, n_G = I_G ω̇ + ω × I_G ω, moved to R by n = n_G + s × f), the kinetic energy
    ½ V̂·F̂ = ½ m v_G² + ½ ω·I_G ω, and dqdyn's rnea of a free body whose frame is at R."""
    import dqdyn

    def sk(a):
        return np.array([[0.0, -a[2], a[1]], [a[2], 0.0, -a[0]], [-a[1], a[0], 0.0]])

    m_ = dqdyn.random_tree(1, joint_types=("free",), seed=15, gravity=(0.0, 0.0, 0.0))
    mass, s, IG = float(m_.mass[1]), np.array(m_.com[1]), np.array(m_.inertia[1])
    assert np.linalg.norm(s) > 1e-2  # the reference point R is not the centre of mass
    J = IG + mass * (s @ s * np.eye(3) - np.outer(s, s))  # inertia about R
    phi = np.block([[mass * np.eye(3), mass * sk(s).T], [mass * sk(s), J]])  # (167)
    q = dqdyn.random_configuration(m_, seed=np.random.default_rng(15))
    for _ in range(5):
        V, w, Vd, wd = RNG4.normal(size=(4, 3))
        Vh, Vhd = np.r_[V, w], np.r_[Vd, wd]
        Vx = np.block([[sk(w), np.zeros((3, 3))], [sk(V), sk(w)]])  # (165)
        F = phi @ Vh  # (166), first equation
        f_hat = phi @ Vhd + Vx @ F  # (166), second, with dF̂/dt = φ̂ dV̂/dt (φ̂ is body-fixed)
        # Newton–Euler at G: a_G seen in the body frame
        vG = V + np.cross(w, s)
        aG = Vd + np.cross(w, V) + np.cross(wd, s) + np.cross(w, np.cross(w, s))
        f = mass * aG
        n = IG @ wd + np.cross(w, IG @ w) + np.cross(s, f)
        np.testing.assert_allclose(f_hat, np.r_[f, n], atol=1e-12 * (1 + np.abs(f_hat).max()))
        np.testing.assert_allclose(0.5 * Vh @ F, 0.5 * mass * vG @ vG + 0.5 * w @ IG @ w, rtol=1e-12)
        # dqdyn: a free body's generalized force is its wrench [n; f] at its frame's origin R
        tau = dqdyn.rnea(m_, q, np.r_[w, V], np.r_[wd, Vd])
        np.testing.assert_allclose(tau, np.r_[n, f], atol=1e-10 * (1 + np.abs(tau).max()))
        # the printed (166), F̂ + V̂× F̂ = f̂, is not Newton–Euler
        assert np.abs(F + Vx @ F - f_hat).max() > 1e-3 * np.abs(f_hat).max()


def _rand_sym():
    A = RNG4.normal(size=(3, 3))
    return A + A.T


def test_claim16_diagonalisation():
    """C_k, D_k of (172)–(173) exact (sympy); det U = 256(1+x²)³P²Q exactly (exact rationals at 17
    points); roots of P → z → u → c'' diagonalise A (eigh as oracle for the spectrum)."""
    sp = pytest.importorskip("sympy")
    x, z = sp.symbols("x z")
    Aq = sp.Matrix(3, 3, lambda i, j: 0)
    vals = [[3, -1, 2], [-1, 5, 4], [2, 4, -2]]
    Aq = sp.Matrix(vals)
    c = sp.Matrix([x, 0, z])
    cx = sp.Matrix([[0, -z, 0], [z, 0, -x], [0, x, 0]])
    c2 = x**2 + z**2
    O = ((1 - c2) * sp.eye(3) + 2 * c * c.T + 2 * cx) / (1 + c2)
    B = O.T * Aq * O
    C, D = _pa.CD_coefficients(Aq, x)
    for entry, coeffs in ((B[0, 1], C), (B[0, 2], D)):
        lhs = sp.expand(sp.cancel(entry * (1 + c2) ** 2))
        rhs = sp.expand(sum(coeffs[k] * z**k for k in range(5)))
        assert sp.simplify(lhs - rhs) == 0
    # det U identity at 17 rational points (both sides have degree <= 16)
    Pc = _pa.P_coefficients(Aq)
    Qc = _pa.Q_coefficients(Aq)
    for xv in [sp.Rational(k, 3) for k in range(-8, 9)]:
        Cv, Dv = [[sp.nsimplify(sp.expand(e.subs(x, xv))) for e in cf] for cf in _pa.CD_coefficients(Aq, x)]
        C0, C1, C2, C3, C4 = Cv
        D0, D1, D2, D3, D4 = Dv
        U = sp.Matrix([[C4, C3, C2, C1, C0, 0, 0, 0], [D4, D3, D2, D1, D0, 0, 0, 0],
                       [C3, C2, C1, C0, 0, C4, 0, 0], [D3, D2, D1, D0, 0, D4, 0, 0],
                       [C2, C1, C0, 0, 0, C3, C4, 0], [D2, D1, D0, 0, 0, D3, D4, 0],
                       [C1, C0, 0, 0, 0, C2, C3, C4], [D1, D0, 0, 0, 0, D2, D3, D4]])
        P = sum(Pc[k] * xv ** (3 - k) for k in range(4))
        Q = sum(Qc[k] * xv ** (4 - k) for k in range(5))
        assert sp.simplify(U.det() - 256 * (1 + xv**2) ** 3 * P**2 * Q) == 0
    # numeric: the closed-form route diagonalises, diagonal = permutation of eigenvalues
    for _ in range(50):
        A = _rand_sym()
        r = _pa.principal_axes(A, polish=False)
        Dm = _vp.matrix_from_vp(r.vp).T @ A @ _vp.matrix_from_vp(r.vp)
        assert np.abs(Dm - np.diag(np.diag(Dm))).max() < 1e-10 * np.abs(A).max()
        np.testing.assert_allclose(np.sort(np.diag(Dm)), np.linalg.eigh(A)[0], atol=1e-10 * np.abs(A).max())
        # the four level-2 roots (185)–(188) are real roots of (184)
        a = RNG4.normal() * 3
        u = _pa.level2_roots(a)
        np.testing.assert_allclose(u**4 - 2 * a * u**3 - 6 * u**2 + 2 * a * u + 1, 0, atol=1e-9 * (1 + abs(a)) ** 4)


def test_claim16_principal_axes_api_and_degenerate_cases():
    """principal_axes(method='closed_form' | 'eigh') against numpy.linalg.eigh, including repeated
    eigenvalues and already-diagonal matrices."""
    cases = [np.diag([1.0, 2, 3]), np.diag([2.0, 2, 2]), np.diag([1.0, 1, 3]),
             np.array([[1, 0, 0], [0, 2, 0.5], [0, 0.5, 3.0]]), np.array([[1, 0.3, 0], [0.3, 2, 0], [0, 0, 3.0]])]
    for R in Rotation.random(4, random_state=9).as_matrix():
        for d in ([1, 1, 2], [3, 1, 1], [0, 0, 1], [1, 2, 3]):
            cases.append(R @ np.diag(d) @ R.T)
    cases += [_rand_sym() for _ in range(20)]
    for A in cases:
        for method in ("closed_form", "eigh"):
            r = _pa.principal_axes(A, method)
            np.testing.assert_allclose(r.values, np.linalg.eigh(A)[0], atol=1e-12 * max(1, np.abs(A).max()))
            np.testing.assert_allclose(r.R.T @ A @ r.R, np.diag(r.values), atol=1e-12 * max(1, np.abs(A).max()))
            assert abs(np.linalg.det(r.R) - 1) < 1e-12
    from dqdyn import errors

    with pytest.raises(errors.ShapeError, match="A must be symmetric"):
        _pa.principal_axes(np.array([[1, 2, 0], [0, 1, 0], [0, 0, 1.0]]))
    with pytest.raises(errors.DqdynError, match="method"):
        _pa.principal_axes(np.eye(3), "jacobi")


def test_claim17_point_mass_inertia_example():
    """(191)–(197) with the vectors ξ, η, ζ = 0.7, −1.3, 0.4: z± (192) → I± (193); the u
    roots (194) give diag(R², R², 0) (odd) or diag(R², 0, R²) (even) with c = (u, u z, z)."""
    xi, eta, zeta = 0.7, -1.3, 0.4
    I = np.array([[eta**2 + zeta**2, -xi * eta, -xi * zeta], [-xi * eta, xi**2 + zeta**2, -eta * zeta],
                  [-xi * zeta, -eta * zeta, xi**2 + eta**2]])
    r, R = np.hypot(xi, eta), np.sqrt(xi**2 + eta**2 + zeta**2)
    assert np.allclose(_pa.P_coefficients(I), 0, atol=1e-14)  # P ≡ 0: x free, x = 0
    for sgn, zref, off in ((+1, 0.2521, 0.590593), (-1, -3.9664, -0.590593)):
        zs = (eta + sgn * r) / xi
        assert abs(zs - zref) < 1e-4
        O = _vp.matrix_from_vp([0, 0, zs])
        Ipm = O.T @ I @ O
        np.testing.assert_allclose(Ipm, [[R**2, 0, 0], [0, zeta**2, sgn * zeta * r], [0, sgn * zeta * r, r**2]], atol=1e-12)
        assert abs(Ipm[1, 2] - off) < 1e-6
        us = sgn * np.array([-(zeta - R) / r, (r + R) / zeta, -(zeta + R) / r, (r - R) / zeta])
        if sgn > 0:
            np.testing.assert_allclose(us, [0.7651, 7.5155, -1.3070, -0.1331], atol=1e-4)
        for k, u in enumerate(us):
            c = np.array([u, u * zs, zs])
            np.testing.assert_allclose(c, _vp.vp_compose([0, 0, zs], [u, 0, 0]), atol=1e-12)
            O = _vp.matrix_from_vp(c)
            want = np.diag([R**2, R**2, 0]) if k % 2 == 0 else np.diag([R**2, 0, R**2])
            np.testing.assert_allclose(O.T @ I @ O, want, atol=1e-12)
    r_ = _pa.principal_axes(I)
    np.testing.assert_allclose(r_.values, [0, R**2, R**2], atol=1e-12)


def test_claim18_exp_symmetric():
    """Exp(tA) = O diag(e^{μ t}) Oᵀ against scipy.linalg.expm."""
    from scipy.linalg import expm

    for _ in range(10):
        A = _rand_sym() * 0.5
        for t in (0.3, -1.2):
            np.testing.assert_allclose(_vk.expm_symmetric(A, t), expm(t * A), rtol=1e-11, atol=1e-12)
    T = np.array([0.0, 0.5])
    np.testing.assert_allclose(_vk.expm_symmetric(A, T)[1], expm(0.5 * A), rtol=1e-11)


def test_claim19_pseudo_coordinates():
    """(246)+(249) give the Udwadia–Kalaba / KKT q̈ (dqdyn's constrained_forward_dynamics), (248) the
    same multipliers, D = A₂ᵀΛ, Theorem 5's (254) holds for D and fails for another force, and the
    γ-terms (231) (summed over s, l) make the Boltzmann–Hamel equations (233) hold — on the knife
    edge and the 8-DoF mobile manipulator; for a free planar body in body-frame quasi-velocities
    the γ-terms are the Newton–Euler gyroscopic terms (−m v ω, m u ω, 0)."""
    from dqdyn.constraints import DifferentialDriveConstraint, mobile_manipulator
    from dqdyn.constraints.dynamics import constrained_forward_dynamics
    from dqdyn.constraints.pseudo_coordinates import PseudoCoordinates, diff_drive_quasi_velocities
    from dqdyn.multibody.builders import ModelBuilder

    b = ModelBuilder("knife_edge")
    b.add_body("base", "world", "planar", joint_name="base_joint", mass=2.0, com=(0.1, 0.05, 0.0),
               inertia=np.diag([0.1, 0.2, 0.3]))
    ke = b.build()
    mm, mm_cons, q0 = mobile_manipulator()
    for model, cons, q in ((ke, [DifferentialDriveConstraint("base_joint", (-0.2, 0.0))], np.array([0.3, -0.2, 0.7])),
                           (mm, mm_cons, q0)):
        A1, A1d = diff_drive_quasi_velocities(model)
        pc = PseudoCoordinates(model, cons, A1, A1_dot=A1d)
        pid, tau = RNG4.normal(size=pc.m), RNG4.normal(size=pc.n)
        r = pc.forward_dynamics(q, pid, tau)
        qd = pc.velocities(q, pid)
        uk = constrained_forward_dynamics(model, q, qd, tau, cons)
        np.testing.assert_allclose(r.qdd, uk.qdd, atol=1e-10)
        np.testing.assert_allclose(r.multipliers, uk.multipliers, atol=1e-10)
        np.testing.assert_allclose(r.constraint_force, pc.A2(q)[0].T @ r.multipliers, atol=1e-14)
        assert np.abs(pc.compatibility(q, qd, tau, r.constraint_force)).max() < 1e-10
        assert np.abs(pc.compatibility(q, qd, tau, np.ones(pc.n))).max() > 1e-3
        assert np.abs(pc.hamel_residual(q, qd, r.qdd, tau)).max() < 1e-9
    # free planar body, CoM at the origin, body-frame quasi-velocities (u, v, ω)
    b = ModelBuilder("planar_body")
    mass, Izz = 2.0, 0.3
    b.add_body("base", "world", "planar", joint_name="base_joint", mass=mass, inertia=np.diag([0.1, 0.2, Izz]))
    body = b.build()
    A1 = lambda q: np.array([[np.cos(q[2]), np.sin(q[2]), 0], [-np.sin(q[2]), np.cos(q[2]), 0], [0, 0, 1.0]])  # noqa: E731
    pc = PseudoCoordinates(body, [], A1)
    q = np.array([0.2, -0.4, 0.9])
    u, v, w = 0.7, -0.3, 1.3
    G = pc.gamma(q)
    p_star = np.array([mass * u, mass * v, Izz * w])
    np.testing.assert_allclose(np.einsum("kij,i,j->k", G, p_star, [u, v, w]), [-mass * v * w, mass * u * w, 0.0], atol=1e-9)


def test_claim24_biped_lagrange_and_generalized_forces():
    """The five Lagrange equations of the planar biped (§10) with the z-equation sign fix equal
    dqdyn's mass_matrix / nonlinear_effects of the same robot (ModelBuilder) mapped by the constant
    S (q_model = S q); the printed +k_ρ breaks the z row; (399) equals the virtual work of the foot
    forces (dqdyn twist_jacobian at the feet) and of the hip / knee / ankle torques."""
    import dqdyn
    from dqdyn.multibody.biped import BipedParams, biped_generalized_forces, biped_lagrange, biped_model

    p = BipedParams()
    model, S = biped_model(p)
    for _ in range(5):
        q, qd = RNG4.uniform(-1.2, 1.2, 7), RNG4.normal(size=7)
        Mp, hp = biped_lagrange(p, q, qd)
        M = dqdyn.mass_matrix(model, S @ q)
        h = dqdyn.nonlinear_effects(model, S @ q, S @ qd)
        np.testing.assert_allclose(Mp, S.T @ M @ S, atol=1e-12)
        np.testing.assert_allclose(hp, S.T @ h, atol=1e-11)
        # the printed z equation, M z̈ + k_ρ(θ̈ sθ + θ̇² cθ) + …, disagrees (both its terms flip sign)
        k_rho = p.M1 * p.rho
        assert abs(k_rho * np.sin(q[2]) - (S.T @ M @ S)[1, 2]) > 0.1 * abs(k_rho * np.sin(q[2]))
        h_printed_z = hp[1] + 2 * k_rho * qd[2] ** 2 * np.cos(q[2])
        assert abs(h_printed_z - (S.T @ h)[1]) > 0.1 * abs(k_rho * qd[2] ** 2 * np.cos(q[2]))
        # (399) against virtual work
        R = RNG4.normal(size=(2, 2)) * 100
        hip, knee, ankle = RNG4.normal(size=2), RNG4.normal(size=2), RNG4.normal(size=2)
        tau = np.zeros(7)
        for i in range(2):
            J = dqdyn.twist_jacobian(model, S @ q, f"foot{i + 1}", "world_aligned")
            tau += J[3:].T @ np.array([R[i, 0], 0.0, R[i, 1]])  # force at the foot point
            tau += J[:3].T @ np.array([0.0, -ankle[i], 0.0])  # ankle moment on the shank (−p_i)
        tau[[3, 5]] += hip  # hip torque on thigh i (relative to the trunk) ...
        tau[2] -= hip.sum()  # ... reacting on the trunk
        tau[[4, 6]] += knee  # knee torque: the model's knee joint is relative
        Q = biped_generalized_forces(p, q, R, hip, knee, ankle)
        np.testing.assert_allclose(Q, S.T @ tau, atol=1e-10)


def test_claim23_cayley_cubics():
    """Two-point Cayley cubic O(t) = O₀ O(c(t)) meets all four boundary conditions (1e-12); the
    multi-point recursion with the index fix (w = f_{i−1}, i = 2..n) and y₁ = ω̇₀/4 interpolates every
    O_i and is C² at the knots (ω̇ jump < 1e-9); the body ω̇ at t₀ is the requested one.
    Oracles: scipy Rotation (independent matrices) and one-sided limits / central differences."""
    from dqdyn.trajectory import CayleyCubic, CayleySpline

    O0, O1 = Rotation.random(2, random_state=23).as_matrix()
    w0, w1 = RNG4.normal(size=(2, 3))
    cc = CayleyCubic(O0, O1, w0, w1)
    s = cc.sample([0.0, 1.0])
    assert np.abs(s.R[0] - O0).max() < 1e-12 and np.abs(s.R[1] - O1).max() < 1e-12
    assert np.abs(s.omega_body[0] - w0).max() < 1e-12 and np.abs(s.omega_body[1] - w1).max() < 1e-12
    n = 6
    Rs = Rotation.from_rotvec(np.cumsum(RNG4.normal(size=(n + 1, 3)) * 0.5, 0)).as_matrix()
    wd0 = np.array([0.3, -0.2, 0.1])
    sp = CayleySpline(np.arange(n + 1.0), Rs, omega0=w0, omega_dot0=wd0, method="park_kang")
    assert np.abs(sp.rotation(np.arange(n + 1.0)) - Rs).max() < 1e-12
    assert sp.knot_jumps()[2] < 1e-9
    np.testing.assert_allclose(sp.sample(0.0).omega_dot_body, wd0, atol=1e-12)
    h = 1e-5
    t = np.arange(n) + 0.37
    wd_fd = (sp.omega(t + h) - sp.omega(t - h)) / (2 * h)
    np.testing.assert_allclose(sp.omega_dot(t), wd_fd, atol=1e-6)
    assert np.all(sp.segment_angles() < np.pi)
# ================================================================== claim 25 (operation counts)
from dqdyn.algebra.vector_parameter import matrix_from_vp, vp_compose
from dqdyn.reproduce import opcount as oc


def test_claim25_table1_totals_and_counted_vector_parameter_chain():
    """Table 1's Totals are c n + ⟨·,·⟩ (n−1) + O(c)p for the four parametrizations.  Oracle: the
    counting scalar run on the procedure itself (n vector parameters composed, then one vector
    rotated, n = 1 … 5).  Additions: the counted procedure plus the c column gives every printed
    Total exactly.  Multiplications: the counted ⟨·,·⟩ and O(c)p cost 12 and 18 where Table 1
    prints 10 and 14 (the three scalings by the common reciprocal, the printed eq. (65)), so
    every printed Total is the counted one less 2(n−1) + 4, the same defect in all four rows;
    hand counts n = 1, 2 below."""
    table1 = {  # [Mladenova, Table 1]: c column (m, a), printed Total (k n + l) for m and for a
        "Eulerian angles": ((3, 2), (13, 4), (14, 3)),
        "Bryant angles": ((5, 0), (15, 4), (12, 3)),
        "Eulerian parameters": ((3, 4), (13, 4), (16, 3)),
        "Denavit–Hartenberg": ((1, 0), (11, 4), (12, 3)),
    }
    rng = np.random.default_rng(25)

    def counted_procedure(n):  # ⟨c₁, …, c_n⟩ then O(c)p on generic vectors: (m, a)
        cs = [oc.nums(rng.normal(size=3) * 0.3) for _ in range(n)]
        with oc.counting("sparse") as cnt:
            oc.vp_chain_counted(cs, oc.nums(rng.normal(size=3)))
        return cnt["m"], cnt["a"]

    proc = {n: counted_procedure(n) for n in range(1, 6)}
    deficits = set()
    for name, ((cm, ca), (km, lm), (ka, la)) in table1.items():
        for n, (pm_, pa_) in proc.items():
            assert ca * n + pa_ == ka * n + la, (name, n)  # additions: counted = printed
            deficits.add((n, cm * n + pm_ - (km * n + lm)))
        assert oc.MLADENOVA_TABLE1[name][0][:2] == (cm, ca)
        assert oc.MLADENOVA_TABLE1[name][1] == ((km, lm), (ka, la))
    # one multiplication defect per n, shared by the four rows: 2(n − 1) + 4
    assert sorted(deficits) == [(n, 2 * (n - 1) + 4) for n in range(1, 6)]
    vc = oc.vp_costs()
    assert vc["<c1, c2>"][1][1] == 12 and vc["O(c)p"][1][1] == 15  # additions as printed
    assert vc["<c1, c2>"][1][0] == 12 and vc["O(c)p"][1][0] == 18  # mult.: printed 10 and 14
    assert vc["c (DH)"][1][:2] == (1, 0)
    # hand counts: n = 1: c (1 m) + O(c)p (18 m, 15 a, 1 div.); n = 2: 2 c + 1 ⟨,⟩ + O(c)p
    assert oc.vp_chain_count(1)[1] == (1 + 18, 15, 1)
    assert oc.vp_chain_count(2)[1] == (2 + 12 + 18, 12 + 15, 2)
    # the counted chain computes O(⟨c₁, …, c_n⟩) p = O(c₁) ⋯ O(c_n) p
    for n in (1, 2, 4):
        val, _, (ta, tt, p) = oc.vp_chain_count(n, seed=n)
        cs = [np.array([x, -x * y, y]) for x, y in zip(ta, tt)]
        O = np.eye(3)
        for c in cs:
            O = O @ matrix_from_vp(c)
        np.testing.assert_allclose(val, O @ p, atol=1e-12)
        c = cs[0]
        for ck in cs[1:]:
            c = vp_compose(c, ck)
        np.testing.assert_allclose(val, matrix_from_vp(c) @ p, atol=1e-12)


def test_table2_jacobian_counts_against_the_savings_stated_in_section_1():
    """Table 2 (Jacobian formation, methods B–F): the vector-parameter method needs fewer
    multiplications than the matrix method for every n ≥ 6 (n = 6: B 102 vs 125, C 138 vs 169,
    D 92 vs 93, E 118 vs 155, F 134 vs 162) and fewer transcendental functions, but more
    additions (n = 6: C 129 vs 88).  Documented findings: the multiplication saving is 1–24 % at
    n = 6 and tends to 1 − 24/30 = 20 %, never the "more than 30 %" that §1 states for Tables
    1–3 (Table 1 does give it: 82 vs 120 at n = 6); it grows with n for B, C, D, F but shrinks for
    E.  Oracle: the table's own formulas (the six Jacobian algorithms are cited, not printed, so
    their counts cannot be recounted)."""
    # [Mladenova, Table 2]: method → (matrix m, a, tr.f.), (vector-parameter m, a, tr.f.) as k n + l
    table2 = {"B": (((30, -55), (15, -38), (2, -2)), ((24, -42), (22, -41), (1, 0))),
              "C": (((30, -11), (18, -20), (2, 0)), ((24, -6), (22, -3), (1, 0))),
              "D": (((30, -87), (15, -66), (2, -2)), ((24, -52), (22, -60), (1, 0))),
              "E": (((30, -25), (15, -22), (2, 0)), ((24, -26), (22, -26), (1, 0))),
              "F": (((30, -18), (14, -15), (2, 0)), ((24, -10), (22, -12), (1, 0)))}
    at = lambda kl, n: kl[0] * n + kl[1]  # noqa: E731
    six = {k: (at(mat[0], 6), at(vp[0], 6)) for k, (mat, vp) in table2.items()}
    assert six == {"B": (125, 102), "C": (169, 138), "D": (93, 92), "E": (155, 118), "F": (162, 134)}
    assert (at(table2["C"][0][1], 6), at(table2["C"][1][1], 6)) == (88, 129)
    saving = {k: [1 - at(vp[0], n) / at(mat[0], n) for n in range(6, 61)] for k, (mat, vp) in table2.items()}
    for k, (mat, vp) in table2.items():
        for n in range(6, 61):
            assert at(vp[0], n) < at(mat[0], n), (k, n)  # fewer multiplications
            assert at(vp[1], n) > at(mat[1], n), (k, n)  # more additions
            assert at(vp[2], n) < at(mat[2], n), (k, n)  # fewer transcendental functions
        assert max(saving[k]) < 0.30, k  # never the "more than 30 %" of §1
        assert abs(saving[k][-1] - 0.2) < 0.02, k  # → 1 − 24/30
    grows = {k: bool(np.all(np.diff(s) > 0)) for k, s in saving.items()}
    assert grows == {"B": True, "C": True, "D": True, "E": False, "F": True}
    # Table 1 at n = 6 (Eulerian angles): the vector-parameter total 13 n + 4 = 82 against the
    # matrix method's 20 n = 120, the 30 % of §1
    assert 1 - (13 * 6 + 4) / (20 * 6) > 0.30
# ================================================================== end of the operation counts
import dqdyn  # noqa: E402

# ==================================================================================================
# Claims 20–22 (elastic joints §7, symbolic B, C, G §8)
# ==================================================================================================


def _elastic_chain(n=3, seed=1):
    from dqdyn.elastic import elastic

    chain = dqdyn.serial_chain(n, seed=seed)
    rot = {j: dict(stiffness=300.0 * (1 + k), axial_inertia=3e-5 * (1 + k), gear_ratio=40.0 + k,
                   mass=0.25, transverse_inertia=1e-5) for k, j in enumerate(chain.joint_names)}
    return elastic(chain, rot)


def test_claim20_spong_reduced_model_structure_and_rigid_limit():
    """(281)–(283): diag(H, J_m) q̈ + [h₁; 0] + [h₂; 0] + [[K, −K], [−K, K]] q = [0; I] u, with
    J_m = N² I_mzz (errata (279)); in the rigid limit q = θ, u = (H + J_m) v + h₁ + h₂ gives q̈ = v
    — oracle: Pinocchio's aba with ``armature = N² J_m`` (when installed) and the model's own
    block equations."""
    em = _elastic_chain()
    n = em.n
    rng = np.random.default_rng(20)
    x, xd, u = rng.normal(size=2 * n), rng.normal(size=2 * n), rng.normal(size=n)
    M = em.mass_matrix(x)
    assert np.all(M[:n, n:] == 0) and np.all(M[n:, :n] == 0)
    np.testing.assert_allclose(M[n:, n:], np.diag(em.N**2 * em.Ja))
    Kb = np.block([[np.diag(em.K), -np.diag(em.K)], [-np.diag(em.K), np.diag(em.K)]])
    np.testing.assert_allclose(em.spring_force(x, np.zeros(2 * n)), Kb @ x, atol=1e-12)
    acc = em.forward_dynamics(x, xd, u)
    h = em.coriolis_matrix(x, xd) @ xd + em.gravity(x)
    assert np.all(h[n:] == 0)
    np.testing.assert_allclose(M @ acc + h + Kb @ x, np.r_[np.zeros(n), u], atol=1e-10)
    # rigid limit: u = (H + J_m) v + h1 + h2  ⇒  q̈ = v
    q, qd, v = rng.normal(size=(3, n))
    H = em.rigid_mass_matrix(q) - np.diag(em.B)
    h12 = dqdyn.nonlinear_effects(em.link_model, q, qd)
    uu = (H + np.diag(em.B)) @ v + h12
    np.testing.assert_allclose(em.rigid_forward_dynamics(q, qd, uu), v, atol=1e-10)
    pin = pytest.importorskip("pinocchio")
    from pinconv import pin_from_model

    pm, _ = pin_from_model(em.link_model)
    pm.armature[:] = em.B
    np.testing.assert_allclose(pin.aba(pm, pm.createData(), q, qd, uu), v, atol=1e-10)


def test_claim21_single_link_lie_brackets_determinant_relative_degree():
    """§7.5 (Marino–Spong): g, ad_f g, ad_f² g, ad_f³ g are constant, det = K²/(I_l² I_m⁴),
    the link angle has relative degree 4 and ẏ₄ = α + K/(I_l I_m) u — oracle: sympy, the
    brackets and α as printed, and a numeric finite-difference check of the brackets."""
    sp = pytest.importorskip("sympy")
    from dqdyn.elastic.single_link import lie_bracket, single_link_arm

    d = single_link_arm()
    Il, Im, M, g0, L, K = d["symbols"]
    expected = [sp.Matrix([0, 0, 0, 1 / Im]), sp.Matrix([0, 0, -1 / Im, 0]),
                sp.Matrix([0, K / (Il * Im), 0, -K / Im**2]), sp.Matrix([-K / (Il * Im), 0, K / Im**2, 0])]
    for b, e in zip(d["brackets"], expected):
        assert sp.simplify(b - e) == sp.zeros(4, 1)
        assert not (b.free_symbols & set(d["x"]))  # constant vector fields
    assert sp.simplify(d["det"] - K**2 / (Il**2 * Im**4)) == 0
    assert d["relative_degree"] == 4 and d["output"] == d["x"][0]
    assert sp.simplify(d["beta"] - K / (Il * Im)) == 0
    x1, x2, x3, x4 = d["x"]
    MgL = M * g0 * L
    alpha = (MgL / Il * sp.sin(x1) * (x2**2 + MgL / Il * sp.cos(x1) + K / Il)
             + K / Il * (x1 - x3) * (K / Il + K / Im + MgL / Il * sp.cos(x1)))
    assert sp.simplify(d["alpha"] - alpha) == 0
    assert sp.simplify(d["coordinates"][3] - (K * x4 - x2 * (K + MgL * sp.cos(x1))) / Il) == 0
    # the bracket convention [f, g] = g' f − f' g against central differences at a state
    vals = {Il: 0.7, Im: 0.05, M: 1.3, g0: 9.81, L: 0.4, K: 30.0}
    f = sp.lambdify([d["x"]], d["f"].subs(vals), "numpy")
    X0 = np.array([0.3, -0.2, 0.5, 0.1])
    J = np.zeros((4, 4))
    for k in range(4):
        e = np.zeros(4)
        e[k] = 1e-6
        J[:, k] = (np.ravel(f(X0 + e)) - np.ravel(f(X0 - e))) / 2e-6
    gnum = np.array([0, 0, 0, 1 / 0.05])
    ref = -J @ gnum  # g is constant: [f, g] = −(∂f/∂x) g
    got = np.array(lie_bracket(d["f"], d["g"], d["x"]).subs(vals), dtype=float).ravel()
    np.testing.assert_allclose(got, ref, rtol=1e-7, atol=1e-7)


def test_claim22_trace_vector_hessian_C_G_sparsity_elastic_tree():
    """§8 on an elastic 2-link tree (rotors as leaf bodies, the full model): the trace formula
    (351) = the vector formula (364) = the Hessian of T; C (368)–(371) = Ḃ q̇ − ∂T/∂q; G (372) =
    ∂V/∂q; the sparsity (358)–(360) — oracle: sympy differentiation of the kinetic and potential
    energies, and dqdyn's compiled kernels."""
    sp = pytest.importorskip("sympy")
    from dqdyn.symbolic import dynamics

    em = _elastic_chain(2, seed=7)
    tree = em.full_model  # bodies: link1, link2, rotor1 (on the base), rotor2 (on link 1)
    d = dynamics(tree)
    v = sp.Matrix(d.v)
    T, V = d.kinetic_energy(), d.potential_energy()
    Bv, Bt = d.M, d.mass_matrix_trace()
    hess = sp.hessian(T, d.v)
    Bdot = sp.Matrix(Bv.shape[0], Bv.shape[1], lambda i, j: sum(sp.diff(Bv[i, j], qk) * vk
                                                               for qk, vk in zip(d.q, d.v)))
    Cref = Bdot * v - sp.Matrix([sp.diff(T, qk) for qk in d.q])
    Gref = sp.Matrix([sp.diff(V, qk) for qk in d.q])
    f = sp.lambdify([d.q, d.v], [Bv, Bt, hess, d.c, Cref, d.g, Gref], "numpy")
    rng = np.random.default_rng(22)
    for _ in range(3):
        qq, vv = rng.uniform(-2, 2, 4), rng.normal(size=4)
        B1, B2, B3, c1, c2, g1, g2 = (np.asarray(a, dtype=float) for a in f(qq, vv))
        np.testing.assert_allclose(B1, B2, atol=1e-12)
        np.testing.assert_allclose(B1, B3, atol=1e-12)
        np.testing.assert_allclose(B1, dqdyn.mass_matrix(tree, qq), atol=1e-12)
        np.testing.assert_allclose(c1.ravel(), c2.ravel(), atol=1e-12)
        np.testing.assert_allclose(g1.ravel(), g2.ravel(), atol=1e-12)
        np.testing.assert_allclose(g1.ravel(), dqdyn.gravity(tree, qq), atol=1e-12)
    # sparsity: in the paper's order (rotor 2i−1, link 2i) rotor i couples only with itself and
    # links 1..i−1; rotor–rotor blocks vanish; rotor 1 couples with nothing.  Here v = (l1, l2, r1, r2).
    pattern = np.array([[d.M_program[i, j] != 0 for j in range(4)] for i in range(4)])  # structural
    expected = np.array([[1, 1, 0, 1],
                         [1, 1, 0, 0],
                         [0, 0, 1, 0],
                         [1, 0, 0, 1]], dtype=bool)
    assert (pattern == expected).all(), pattern
    assert np.abs(dqdyn.mass_matrix(tree, rng.uniform(-2, 2, 4))[~expected]).max() < 1e-14

# ==================================================================================================
# end of claims 20–22
# ==================================================================================================
