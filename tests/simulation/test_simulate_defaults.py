"""``dqdyn simulate`` with default options on real robots; scaled gains, joint limits, free fall
and divergence reporting."""

from __future__ import annotations

import numpy as np
import pytest

import dqdyn
from dqdyn import models
from dqdyn.cli import main
from dqdyn.errors import DivergenceError
from dqdyn.simulation import simulate
from dqdyn.simulation.defaults import JointLimits, effective_inertia, scaled_gains, start_configuration
from dqdyn.simulation.run import run_simulation

ERD = models.example_robot_data_dir() is not None
need_erd = pytest.mark.skipif(not ERD, reason="example-robot-data is not installed")

BUNDLED = [n for n in dqdyn.list_models("bundled", kind="model") if n != "serial50"]


def _run_cli(capsys, *args):
    rc = main(["simulate", *args])
    out, err = capsys.readouterr()
    assert rc == 0, err
    assert "Traceback" not in err
    return out


@need_erd
@pytest.mark.parametrize("args", [["panda"], ["ur5"], ["tiago"], ["talos", "--fixed-base"],
                                  ["talos"]], ids=lambda a: " ".join(a))
def test_simulate_defaults_on_real_robots(capsys, args):
    out = _run_cli(capsys, *args, "--duration", "0.1")
    assert "101 samples" in out
    err = float(out.split("tracking error: max ")[1].split(",")[0])
    assert err < 0.05  # rad / m: the scaled PD follows its 0.5 Hz reference


@pytest.mark.parametrize("name", BUNDLED)
def test_simulate_defaults_on_bundled_models(capsys, name):
    out = _run_cli(capsys, name, "--duration", "0.05")
    assert "51 samples" in out


def test_effective_inertia_and_gains():
    m = dqdyn.load_example("jaco6")
    q = dqdyn.random_configuration(m, seed=3)
    M = dqdyn.mass_matrix(m, q)
    # oracle: numpy's inverse
    np.testing.assert_allclose(effective_inertia(m, q), 1 / np.diag(np.linalg.inv(M)), rtol=1e-10)
    kp, kd = scaled_gains(m, q, omega=10.0, zeta=1.0)
    np.testing.assert_allclose(kp / kd, 5.0)  # ω² / 2ω


def test_one_joint_closes_at_the_chosen_bandwidth():
    """A single revolute joint with the scaled PD: the error follows the critically damped
    solution e(t) = e0 (1 + ωt) e^{-ωt} (analytic oracle)."""
    b = dqdyn.ModelBuilder("pendulum")
    b.add_body("link", "world", "revolute", axis=(0, 1, 0), mass=2.0, com=(0.3, 0, 0),
               inertia=np.diag([0.01, 0.02, 0.02]))
    m = b.build()
    from dqdyn.simulation import JointPD

    w = 2 * np.pi * 2.0
    kp, kd = scaled_gains(m, np.zeros(1), omega=w)
    traj = simulate(m, np.array([0.2]), np.zeros(1), JointPD(m, np.zeros(1), kp=kp, kd=kd),
                    duration=0.5, dt=1e-3)
    expect = 0.2 * (1 + w * traj.t) * np.exp(-w * traj.t)
    np.testing.assert_allclose(traj.q[:, 0], expect, atol=1e-6)


@need_erd
def test_panda_start_inside_limits_and_free_fall_keeps_fingers_on_their_stroke():
    m = dqdyn.load_example("panda")
    q0 = start_configuration(m)
    assert np.all(q0 >= m.q_lower) and np.all(q0 <= m.q_upper)
    res = run_simulation(m, duration=1.0, controller="none")
    qf = res.trajectory.q[:, m.q_slice("panda_finger_joint1").start]
    assert qf.min() > -0.005 and qf.max() < 0.045  # stroke [0, 0.04] m, 5 mm of spring
    assert np.all(np.isfinite(res.trajectory.q))


def test_free_fall_of_a_floating_robot_follows_gravity():
    """No controller: the centre of mass of a free-floating robot falls as -g t²/2 (oracle:
    Newton's second law for the whole system, no external force but gravity)."""
    m = dqdyn.load_example("jaco6", root_joint="free")
    res = run_simulation(m, duration=0.3, controller="none", limits=False)
    c = np.array([dqdyn.center_of_mass(m, q) for q in res.trajectory.q])
    t = res.trajectory.t
    np.testing.assert_allclose(c[:, 2] - c[0, 2], -0.5 * 9.81 * t**2, atol=1e-8)
    np.testing.assert_allclose(c[:, :2] - c[0, :2], 0.0, atol=1e-8)


def test_joint_limits_push_back():
    m = dqdyn.load_example("two_link_arm")
    lim = JointLimits(m, np.zeros(2))
    hi = m.q_upper
    tau = lim(np.array([hi[0] + 0.01, 0.0]), np.zeros(2))
    assert tau[0] < 0 and tau[1] == 0
    assert np.all(lim(np.zeros(2), np.ones(2)) == 0)


def test_divergence_is_reported_as_such(capsys):
    m = dqdyn.load_example("two_link_arm")
    with pytest.raises(DivergenceError, match=r"diverged at t = .*reduce dt"):
        run_simulation(m, duration=1.0, dt=0.05, kp=1e7, kd=1e5)
    assert main(["simulate", "two_link_arm", "--dt", "0.05", "--kp", "1e7", "--kd", "1e5"]) == 2
    err = capsys.readouterr().err
    assert "diverged at t =" in err and "reduce dt" in err and "singular" not in err


def test_plot_has_units_and_separate_axes(tmp_path):
    pytest.importorskip("matplotlib")
    from dqdyn.simulation.plots import plot_simulation

    m = dqdyn.load_example("diff_drive_manipulator", root_joint="planar")
    res = run_simulation(m, duration=0.05)
    import matplotlib.pyplot as plt

    saved = {}
    orig = plt.Figure.savefig

    def spy(fig, *a, **k):
        saved["labels"] = [ax.get_ylabel() for ax in fig.axes]
        saved["notes"] = " ".join(t.get_text() for t in fig.texts)
        return orig(fig, *a, **k)

    plt.Figure.savefig = spy
    try:
        p = plot_simulation(res, tmp_path / "sim.png")
    finally:
        plt.Figure.savefig = orig
    assert p.stat().st_size > 1000
    labels = saved["labels"]
    assert any("(rad)" in s for s in labels) and any("(N·m)" in s for s in labels)
    # the base the controller holds still (m, N) is named in the note, not drawn as a flat panel
    assert any("(m)" in s for s in labels) or "root_joint x = 0 m" in saved["notes"]
