"""dqdyn against MuJoCo (mj_inverse, an independent simulator) and against itself, and the
``reproduce`` cases (quick)."""

from __future__ import annotations

import numpy as np
import pytest

import dqdyn
from dqdyn.errors import DqdynError, ModelError
from dqdyn.reproduce import mj_inverse_dynamics, mujoco_from_model, robots, state_maps
from dqdyn.reproduce.cases import case_holonomic, case_jaco

ROBOTS = ["jaco6", "arm7", "serial50", "holonomic_mm", "tree38"]


@pytest.mark.parametrize("name", ROBOTS)
def test_mj_inverse_matches_rnea(name):
    """MuJoCo's inverse dynamics on the same model (the URDF compiled by MuJoCo itself for
    jaco6) equals dqdyn's dqNE ([Silva2022, eqs. (16)–(30)]) to round-off."""
    m, mj, iq, iv = robots.with_mujoco(name)
    rng = np.random.default_rng(1)
    for _ in range(3):
        q, v, a = rng.uniform(-1.5, 1.5, m.nq), rng.normal(size=m.nv), rng.normal(size=m.nv)
        tau = dqdyn.rnea(m, q, v, a)
        err = np.abs(mj_inverse_dynamics(mj, iq, iv, q, v, a) - tau).max()
        assert err < 1e-8 * (1 + np.abs(tau).max())


def test_mjcf_export_all_scalar_joint_types():
    m = dqdyn.random_tree(10, ("revolute", "prismatic", "cylindrical", "planar"), seed=4)
    mj = mujoco_from_model(m)
    iq, iv = state_maps(m, mj)
    rng = np.random.default_rng(2)
    q, v, a = rng.uniform(-1, 1, m.nq), rng.normal(size=m.nv), rng.normal(size=m.nv)
    np.testing.assert_allclose(mj_inverse_dynamics(mj, iq, iv, q, v, a), dqdyn.rnea(m, q, v, a),
                               atol=1e-9)
    with pytest.raises(ModelError, match="spherical"):
        mujoco_from_model(dqdyn.random_tree(3, ("spherical",)))


@pytest.mark.parametrize("name", ["jaco6", "holonomic_mm", "tree38"])
def test_two_routes_agree_to_roundoff(name):
    """Newton–Euler (rnea) = M q̈ + h (CRBA / n+2-call route, [Silva2022thesis, eq. (3.2)]) = inverse of ABA,
    and the Gauss model's M_GP ([Silva2022, eq. (44)]) equals the CRBA M."""
    m = getattr(robots, name)()
    rng = np.random.default_rng(3)
    q, v, a = rng.uniform(-1, 1, m.nq), rng.normal(size=m.nv), rng.normal(size=m.nv)
    tau = dqdyn.rnea(m, q, v, a)
    M = dqdyn.mass_matrix(m, q)
    scale = 1 + np.abs(tau).max()
    np.testing.assert_allclose(M @ a + dqdyn.nonlinear_effects(m, q, v), tau, atol=1e-12 * scale)
    np.testing.assert_allclose(dqdyn.aba(m, q, v, tau), a, atol=1e-10 * (1 + np.abs(a).max()))
    try:
        from dqdyn.dynamics.gauss import mass_matrix_gp
    except ImportError:  # pragma: no cover
        return
    np.testing.assert_allclose(mass_matrix_gp(m, q), M, atol=1e-12 * (1 + np.abs(M).max()))


def test_case_jaco_reaches_thesis_table_4_6(tmp_path):
    r = case_jaco(quick=True, out_dir=tmp_path)
    s = r.stats
    assert s["mean"] >= 0.9930 and s["min"] >= 0.9667  # thesis Table 4.6 (dqNE)
    assert r.passed and (tmp_path / "jaco.png").stat().st_size > 1000


def test_case_holonomic_reaches_silva2022_table_2():
    r = case_holonomic(quick=True)
    assert r.stats["mean"] >= 0.9977 and r.stats["min"] >= 0.9938


def test_cmc_detects_a_wrong_model():
    """The pipeline can fail: dqdyn with a 10 % heavier wrist against MuJoCo's log."""
    from dqdyn.reproduce.cases import _reference, compare, run_mujoco

    m, mj, iq, iv = robots.with_mujoco("jaco6")
    q0 = np.full(6, 0.2)
    log = run_mujoco(mj, iq, iv, q0, _reference(m, q0, 6, 0.8), 1.0)
    good, _, _ = compare(m, log, "inverse", 10.0)
    bad_model = dqdyn.load_urdf(dqdyn.bundled("jaco6"), gravity=(0, 0, -9.0))
    bad, _, _ = compare(bad_model, log, "inverse", 10.0)
    assert good.min() > 0.99999
    assert np.nanmin(bad) < good.min() - 1e-4


def test_runner_writes_tables(tmp_path):
    from dqdyn.reproduce import reproduce

    res = reproduce(["jaco"], out_dir=tmp_path, quick=True)
    assert res[0].passed
    md = (tmp_path / "results.md").read_text()
    assert "6-DoF arm" in md and "0.993" in md
    assert (tmp_path / "results.csv").read_text().count("\n") == 2
    routes = (tmp_path / "routes.csv").read_text()  # the papers' rows: dqNE, dqGP, rtNE
    assert "dqGP" in routes and "rtNE" in routes
    with pytest.raises(DqdynError, match="unknown case"):
        reproduce(["nope"], out_dir=tmp_path)
