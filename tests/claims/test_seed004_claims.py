"""Seed 004 (Mladenova) digest claims, each checked against an independent oracle."""

from __future__ import annotations

import numpy as np
import pytest

import dqdyn

# ==================================================================================================
# Claims 20–22 (issue 18: elastic joints §7, symbolic B, C, G §8)
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
    the link angle has relative degree 4 and ẏ₄ = α + K/(I_l I_m) u — oracle: sympy, the digest's
    printed brackets and α, and a numeric finite-difference check of the brackets."""
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
    q, v = sp.Matrix(d.q), sp.Matrix(d.v)
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
