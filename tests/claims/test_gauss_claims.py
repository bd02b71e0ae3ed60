"""Claims 19–22 of [Silva2022, §4]: the Gauss-principle
model (dqGP) equals the Newton–Euler / Euler–Lagrange terms; ``Ṁ − 2C`` is skew (Remark 4.1, with
the printed closed form eq. (52) wrong and the corrected one right); Gauss,
Gibbs–Appell and Kane give the same equations (eqs. 53–61).

Oracles: dqdyn's compiled CRBA / Christoffel C / gravity / ABA (themselves tested against
Pinocchio), central finite differences of M along v (for Ṁ), and the paper's own eq. 33 for the
CoM twist Jacobian (DQ pose Jacobian by finite differences).
"""

from __future__ import annotations

import numpy as np
import pytest

import dqdyn
from dqdyn.constraints import mobile_manipulator
from dqdyn.dynamics import gauss
from dqdyn.multibody.builders import random_tree, serial_chain


def _rel(x, y):
    return float(np.abs(np.asarray(x) - np.asarray(y)).max() / max(1e-300, np.abs(y).max()))


def _models():
    mm, _, _ = mobile_manipulator()
    out = [("mobile_manipulator_8dof", mm)]
    out.append(("serial6", serial_chain(6, seed=3)))
    out.append(("tree_all_joints", random_tree(7, seed=5)))
    return out


MODELS = _models()


def _state(m, seed):
    rng = np.random.default_rng(seed)
    q = dqdyn.random_configuration(m, seed=rng)
    v = rng.normal(size=m.nv)
    return q, v, rng


@pytest.mark.parametrize("name,m", MODELS, ids=[n for n, _ in MODELS])
def test_claim19_dqgp_terms_equal_newton_euler(name, m):
    """eqs. 46, 47, 50–51: M_GP = Σ JᵀΨJ, C_GP, g_GP vs CRBA, Christoffel C, gravity (1e-12
    relative), and M_GP q̈ + C_GP q̇ + g_GP equals the Newton–Euler torques."""
    for seed in range(3):
        q, v, _ = _state(m, seed)
        G = gauss.gauss_model(m, q, v)
        M, C, g = dqdyn.mass_matrix(m, q), dqdyn.coriolis_matrix(m, q, v), dqdyn.gravity(m, q)
        assert _rel(G.M, M) < 1e-12
        assert _rel(G.g, g) < 1e-12
        # the paper's C_GP (eq. 47) is a valid factorization: same C v ...
        assert _rel(G.C @ v, C @ v) < 1e-12
        # ... and with the Levi-Civita S̄ it is the Christoffel matrix itself
        assert _rel(gauss.coriolis_matrix_gp(m, q, v, form="christoffel"), C) < 1e-12
        # and M v̇ + C v + g equals the Newton–Euler inverse dynamics
        a = np.random.default_rng(seed + 10).normal(size=m.nv)
        assert _rel(G.M @ a + G.C @ v + G.g, dqdyn.rnea(m, q, v, a)) < 1e-12


def test_claim19_paper_coriolis_is_not_the_christoffel_matrix():
    """Documented finding: eq. 47's C_GP ≠ Christoffel C as a matrix (C is not unique); they differ
    by K with K v = 0.  (If this ever fails, the docstring of gauss.py must change.)"""
    m = MODELS[0][1]
    q, v, _ = _state(m, 0)
    C_gp, C = gauss.coriolis_matrix_gp(m, q, v), dqdyn.coriolis_matrix(m, q, v)
    assert _rel(C_gp, C) > 1e-6
    assert np.abs((C_gp - C) @ v).max() < 1e-12 * np.abs(C @ v).max()


def test_batched_dqgp_equals_per_state():
    m = MODELS[0][1]
    rng = np.random.default_rng(1)
    Q = np.stack([dqdyn.random_configuration(m, seed=rng) for _ in range(4)])
    V = rng.normal(size=(4, m.nv))
    G = gauss.gauss_model(m, Q, V)
    for k in range(4):
        Gk = gauss.gauss_model(m, Q[k], V[k])
        assert _rel(G.M[k], Gk.M) < 1e-15 and _rel(G.C[k], Gk.C) < 1e-15 and _rel(G.g[k], Gk.g) < 1e-15


def test_claim19_com_jacobian_is_the_papers_eq33():
    """J_i from the compiled body Jacobian equals 2 H⁺₈(x_0^{c_i}) J_{x_{c_i}^0} (eq. 33)."""
    m = MODELS[0][1]
    q, _, _ = _state(m, 2)
    J = gauss.com_twist_jacobians(m, q)
    Jp = gauss.com_twist_jacobians_paper(m, q, h=1e-6)
    assert np.abs(J - Jp).max() < 1e-8


@pytest.mark.parametrize("name,m", MODELS, ids=[n for n, _ in MODELS])
def test_claim20_mdot_minus_2c_is_skew(name, m):
    """Remark 4.1 (eq. 52): uᵀ(Ṁ − 2C)u = 0, with Ṁ both analytic and by finite differences."""
    q, v, rng = _state(m, 4)
    G = gauss.gauss_model(m, q, v)
    Md = gauss.mass_matrix_derivative(m, q, v)
    h = 1e-6
    Md_fd = (dqdyn.mass_matrix(m, dqdyn.integrate(m, q, v, h))
             - dqdyn.mass_matrix(m, dqdyn.integrate(m, q, v, -h))) / (2 * h)
    assert _rel(Md, Md_fd) < 1e-7
    S = Md - 2 * G.C
    assert np.abs(S + S.T).max() < 1e-12 * np.abs(S).max()
    u = rng.normal(size=m.nv)
    assert abs(u @ S @ u) < 1e-12 * np.abs(S).max() * (u @ u)
    # the non-skew alternative (2 × a non-factorization) is caught: C + ½ diag(…) breaks it
    bad = Md - 2 * (G.C + np.diag(np.abs(v)))
    assert np.abs(bad + bad.T).max() > 1e-3


@pytest.mark.parametrize("name,m", MODELS, ids=[n for n, _ in MODELS])
def test_claim20_remark41_printed_form_fails_corrected_form_holds(name, m):
    """½Ṁ − C = −Σ Jᵀ S̄ J (printed, eq. 52) is wrong; the corrected form
    −Σ Jᵀ S̄ J + ½ Σ (J̇ᵀΨJ − JᵀΨJ̇) holds.  Both right-hand sides are skew."""
    q, v, _ = _state(m, 5)
    G = gauss.gauss_model(m, q, v)
    lhs = 0.5 * gauss.mass_matrix_derivative(m, q, v) - G.C
    paper = gauss.remark41_paper(m, q, v)
    corrected = gauss.remark41_corrected(m, q, v)
    assert _rel(corrected, lhs) < 1e-12
    assert _rel(paper, lhs) > 1e-2  # O(1) off, not round-off
    for X in (paper, corrected):
        assert np.abs(X + X.T).max() < 1e-12 * np.abs(X).max()


@pytest.mark.parametrize("name,m", MODELS, ids=[n for n, _ in MODELS])
def test_claim21_gauss_appell_kane_agree(name, m):
    """eq. 61: ∂𝒢/∂v̇ = ∂S/∂v̇ − τ̄_GA = φ − φ̄ = M v̇ + C v + g − τ at any v̇; the minimizer of
    Gauss's function is the forward dynamics (ABA)."""
    q, v, rng = _state(m, 6)
    a, tau = rng.normal(size=m.nv), rng.normal(size=m.nv)
    G = gauss.gauss_model(m, q, v)
    ref = G.M @ a + G.C @ v + G.g - tau
    dG = gauss.quadratic_gradient(lambda x: gauss.gauss_function(m, q, v, x, tau), a)
    dS = gauss.quadratic_gradient(lambda x: gauss.appell_function(m, q, v, x), a)
    tauGA = gauss.appell_forces(m, q, tau)
    phi, phibar = gauss.kane_forces(m, q, v, a, tau)
    scale = np.abs(ref).max() + np.abs(tau).max()
    assert np.abs(dG - ref).max() < 1e-7 * scale  # FD of a quadratic: round-off of 𝒢 only
    assert np.abs((dS - tauGA) - ref).max() < 1e-7 * scale
    assert np.abs((phi - phibar) - ref).max() < 1e-12 * scale
    # Gauss's minimizer = ABA; and 𝒢 is larger anywhere else (strict convexity, M ≻ 0)
    a_star = gauss.gauss_forward_dynamics(m, q, v, tau)
    assert _rel(a_star, dqdyn.aba(m, q, v, tau)) < 1e-10
    g0 = gauss.gauss_function(m, q, v, a_star, tau)
    assert gauss.gauss_function(m, q, v, a_star + 1e-3 * rng.normal(size=m.nv), tau) > g0


def test_claim22_udwadia_kalaba_on_the_8dof_nonholonomic_mobile_manipulator():
    """[Silva2022, §4.5, eqs. (62)–(64)]: on the 8-DoF differential-drive mobile manipulator
    (A = [−sin φ, cos φ, 0, …], b = −Ȧ q̇ of eq. 64) the Udwadia–Kalaba q̈ satisfies A q̈ = b,
    equals the KKT solution, and eq. 62 taken literally with the dqGP terms gives the same q̈.
    Oracle: a KKT solve from Pinocchio's M and nonlinear effects, finite differences of A for
    b, and the symmetric square root of M (scipy).  (The V-REP CMC of [Silva2022, Table 2] is
    the ``nonholonomic_mm`` reproduce case, MuJoCo standing in.)"""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "constraints" / "test_nonholonomic.py"
    spec = importlib.util.spec_from_file_location("_silva2022_test_nonholonomic", path)
    suite = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(suite)
    mm = mobile_manipulator()
    suite.test_mobile_manipulator_is_the_papers_8dof_robot(mm)
    suite.test_differential_drive_row_is_eq64(mm)
    suite.test_mobile_manipulator_satisfies_constraint_and_matches_pinocchio_kkt(mm)
    suite.test_paper_eq62_literally_with_gauss_terms(mm)
    # the constraint of eq. 64 is not satisfied by the unconstrained forward dynamics
    model, cons, q0 = mm
    q, v = q0, np.zeros(model.nv)
    tau = np.random.default_rng(22).normal(size=model.nv) * 5
    A = cons[0].A(model, q)
    assert abs((A @ dqdyn.aba(model, q, v, tau))[0]) > 1e-3
    r = dqdyn.constrained_forward_dynamics(model, q, v, tau, cons)
    assert abs((A @ r.qdd)[0]) < 1e-10


def test_gauss_bad_input():
    m = MODELS[0][1]
    q, v, _ = _state(m, 0)
    with pytest.raises(dqdyn.errors.ShapeError, match="q"):
        gauss.gauss_model(m, q[:-1], v)
    with pytest.raises(dqdyn.errors.ShapeError, match="v"):
        gauss.gauss_model(m, q, np.zeros(m.nv + 1))
    with pytest.raises(dqdyn.errors.ShapeError, match="tau"):
        gauss.kane_forces(m, q, v, v, np.zeros(3))
    with pytest.raises(dqdyn.errors.ShapeError, match="form"):
        gauss.coriolis_matrix_gp(m, q, v, form="nope")
