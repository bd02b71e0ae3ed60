"""Forward dynamics on models with mimic joints (Panda, Baxter, TIAGo, PR2 load with them by
default): ``aba`` and ``mass_matrix_inverse`` through the reduced mass matrix.  Oracle: inverse
dynamics (``rnea`` and ``mass_matrix`` on these robots are checked against Pinocchio in
test_inverse_dynamics.py): ABA∘RNEA = id and M⁻¹ M = 1, single states and batches alike."""

import warnings

import numpy as np
import pytest

import dqdyn

from pinconv import ROBOTS, erd

MIMIC_ROBOTS = ["panda", "tiago"]


@pytest.fixture(scope="module", params=MIMIC_ROBOTS)
def mimic_robot(request):
    rel, root = ROBOTS[request.param]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = dqdyn.load_urdf(erd(rel), root_joint=root)
    if not m.mimic_joints:
        pytest.skip(f"{request.param} loads without mimic joints")
    return m


def test_aba_inverts_rnea_on_mimic_models(mimic_robot):
    m = mimic_robot
    rng = np.random.default_rng(0)
    for _ in range(3):
        q = dqdyn.random_configuration(m, seed=rng)
        v, tau = rng.normal(size=m.nv), 3 * rng.normal(size=m.nv)
        qdd = dqdyn.aba(m, q, v, tau)
        np.testing.assert_allclose(dqdyn.rnea(m, q, v, qdd), tau, atol=1e-9 * (1 + np.abs(tau).max()))
        # lists (the general path) and external wrenches
        np.testing.assert_allclose(dqdyn.aba(m, q.tolist(), v.tolist(), tau.tolist()), qdd, rtol=1e-12, atol=1e-12)
        fext = rng.normal(size=(m.nbodies + 1, 6))
        qf = dqdyn.aba(m, q, v, tau, fext)
        np.testing.assert_allclose(dqdyn.rnea(m, q, v, qf, fext), tau, atol=1e-9 * (1 + np.abs(tau).max()))


def test_aba_batch_on_mimic_models_equals_single_states(mimic_robot):
    m = mimic_robot
    Q = dqdyn.random_configuration(m, size=5, seed=1)
    rng = np.random.default_rng(2)
    V, T = rng.normal(size=(5, m.nv)), rng.normal(size=(5, m.nv))
    B = dqdyn.aba(m, Q, V, T)
    for k in range(5):
        np.testing.assert_allclose(B[k], dqdyn.aba(m, Q[k], V[k], T[k]), rtol=1e-12, atol=1e-12)
    out = np.empty((5, m.nv))
    assert dqdyn.aba(m, Q, V, T, out=out) is out
    np.testing.assert_array_equal(out, B)


def test_mass_matrix_inverse_on_mimic_models(mimic_robot):
    m = mimic_robot
    q = dqdyn.random_configuration(m, seed=3)
    Mi = dqdyn.mass_matrix_inverse(m, q)
    np.testing.assert_allclose(Mi @ dqdyn.mass_matrix(m, q), np.eye(m.nv), atol=1e-9)
    Q = dqdyn.random_configuration(m, size=2, seed=4)
    np.testing.assert_allclose(dqdyn.mass_matrix_inverse(m, Q)[1], dqdyn.mass_matrix_inverse(m, Q[1]),
                               rtol=1e-12, atol=1e-12)


def test_algorithms_without_mimic_support_name_what_does():
    rel, _ = ROBOTS["panda"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = dqdyn.load_urdf(erd(rel))
    q = dqdyn.random_configuration(m, seed=0)
    z = np.zeros(m.nv)
    with pytest.raises(dqdyn.errors.ModelError, match="dqdyn.aba") as ei:
        dqdyn.hybrid_dynamics(m, q, z, z, z, np.zeros(m.nv, bool))
    assert "forward_dynamics" not in str(ei.value)  # (a function that never existed)


def test_one_state_of_a_mimic_model_is_one_compiled_call_with_the_numpy_routes_bits(
        mimic_robot, monkeypatch):
    """A single state (and a small batch) of float64 vectors on a model with mimic joints goes
    through one compiled call (``aba_mimic_entry`` behind the call gate) instead of the numpy
    route ``_aba_reduced`` (``nonlinear_effects``, then Cholesky of the CRBA matrix): the same
    arithmetic, so the same bits (that route is checked against ``rnea`` above).  Inputs the
    compiled call declines — non-finite, wrong lengths, lists, ``out=`` — take that route, which
    names what is wrong."""
    from dqdyn._engine.gate import GATE
    from dqdyn.dynamics import aba as aba_mod

    m = mimic_robot
    Q = dqdyn.random_configuration(m, size=4, seed=5)
    rng = np.random.default_rng(6)
    V, T = rng.normal(size=(4, m.nv)), 3 * rng.normal(size=(4, m.nv))
    ref = [aba_mod._aba_reduced(m, Q[k], V[k], T[k], None, None) for k in range(4)]
    calls = []
    real = aba_mod._aba_reduced
    monkeypatch.setattr(aba_mod, "_aba_reduced", lambda *a: (calls.append(1), real(*a))[1])
    for k in range(4):
        assert dqdyn.aba(m, Q[k], V[k], T[k]).tobytes() == ref[k].tobytes()
    assert dqdyn.aba(m, Q, V, T).tobytes() == np.stack(ref).tobytes()
    if GATE is not None:
        assert not calls, "the numpy route ran for float64 vectors"
    bad = T[0].copy()
    bad[1] = np.nan
    with pytest.raises(dqdyn.errors.NonFiniteError, match="tau"):
        dqdyn.aba(m, Q[0], V[0], bad)
    with pytest.raises(dqdyn.errors.ShapeError, match="tau"):
        dqdyn.aba(m, Q[0], V[0], T[0][:-1])
    qn = Q[0].copy()
    qn[0] = np.inf
    with pytest.raises(dqdyn.errors.NonFiniteError, match="q"):
        dqdyn.aba(m, qn, V[0], T[0])
    out = np.empty(m.nv)
    assert dqdyn.aba(m, Q[1], V[1], T[1], out=out) is out
    assert out.tobytes() == ref[1].tobytes()
    assert dqdyn.aba(m, Q[2].tolist(), V[2].tolist(), T[2].tolist()).tobytes() == ref[2].tobytes()
