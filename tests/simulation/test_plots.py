"""`dqdyn simulate --plot` figures: the panels the help names, legends that fit, distinguishable
curves, floating-base panels in sensible units, Trajectory input (matplotlib, Agg backend)."""

import numpy as np
import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")

import dqdyn  # noqa: E402
from dqdyn.errors import DqdynError  # noqa: E402
from dqdyn.models import example_robot_data_dir  # noqa: E402
from dqdyn.simulation.plots import panels_of, plot_simulation, simulation_figure  # noqa: E402
from dqdyn.simulation.run import run_simulation  # noqa: E402

ERD = example_robot_data_dir() is not None


def _arm():
    return dqdyn.load("panda") if ERD else dqdyn.load("arm7")


@pytest.fixture(scope="module")
def arm_run():
    return run_simulation(_arm(), duration=0.6, dt=2e-3)


@pytest.fixture(scope="module")
def solo_run():
    if not ERD:
        pytest.skip("example-robot-data is not installed")
    return run_simulation(dqdyn.load("solo12"), duration=0.6, dt=2e-3)


def _drawn(fig):
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    return canvas.get_renderer()


def _check_layout(fig):
    """No legend overlaps an axes (its own included: legends sit outside) or another legend."""
    r = _drawn(fig)
    axes = fig.axes
    legends = [(ax, ax.get_legend()) for ax in axes if ax.get_legend() is not None]
    for ax, leg in legends:
        lb = leg.get_window_extent(r)
        for other in axes:
            assert not lb.overlaps(other.get_window_extent(r)), (ax.get_ylabel(), other.get_ylabel())
        for ax2, leg2 in legends:
            if leg2 is not leg:
                assert not lb.overlaps(leg2.get_window_extent(r)), (ax.get_ylabel(), ax2.get_ylabel())
    return r


def _labelled_lines(ax):
    return [ln for ln in ax.get_lines() if not ln.get_label().startswith("_")]


def test_arm_panels_legends_and_distinct_curves(arm_run, tmp_path):
    m = arm_run.model
    fig = simulation_figure(arm_run)
    ylabels = [ax.get_ylabel() for ax in fig.axes]
    for want in ("joint angle q (rad)", "velocity v (rad/s)", "torque τ (N·m)"):
        assert want in ylabels  # what `simulate --help` promises: positions, velocities, torques
    n_rev = sum(m.joint_type_name(j) == "revolute" for j in m.joint_names)
    assert n_rev == 7
    ang = fig.axes[ylabels.index("joint angle q (rad)")]
    vel = fig.axes[ylabels.index("velocity v (rad/s)")]
    assert len(ang.get_legend().get_texts()) == n_rev + 1  # the joints and "reference"
    assert len(vel.get_legend().get_texts()) == n_rev
    assert ang.get_title(loc="left") == "joint angles"
    assert vel.get_title(loc="left") == "angular velocities"
    _check_layout(fig)
    # each joint its own curve: the default reference is lagged per joint
    for ax in (ang, vel):
        ys = [np.asarray(ln.get_ydata()) for ln in _labelled_lines(ax)]
        for i in range(len(ys)):
            for j in range(i):
                assert np.abs(ys[i] - ys[j]).max() > 1e-3, (ax.get_ylabel(), i, j)
    # the velocity panel shows the trajectory's velocities
    v = arm_run.trajectory.v
    for ln in _labelled_lines(vel):
        k = arm_run.labels.index(ln.get_label())
        assert np.array_equal(ln.get_ydata(), v[:, k])
    out = plot_simulation(arm_run, tmp_path / "arm.png")
    assert out.stat().st_size > 10_000


def test_solo12_floating_base_units_and_legends(solo_run):
    fig = simulation_figure(solo_run)
    _check_layout(fig)
    ylabels = [ax.get_ylabel() for ax in fig.axes]
    # the base is held where it starts: no panel of round-off noise, the values are named
    assert "base position (m)" not in ylabels and "base roll / pitch / yaw (rad)" not in ylabels
    for ax in fig.axes:
        ys = [np.asarray(ln.get_ydata()) for ln in _labelled_lines(ax)]
        assert any(np.ptp(y) > 1e-6 for y in ys), ax.get_ylabel()
        assert ax.yaxis.get_major_formatter().get_useOffset() is False
    panels, constants, _ = panels_of(solo_run)
    names = [c[0] for c in constants]
    assert "root_joint x" in names and "root_joint yaw" in names
    assert fig._supxlabel is not None and "root_joint z" in fig._supxlabel.get_text()
    ang = fig.axes[ylabels.index("joint angle q (rad)")]
    assert len(ang.get_legend().get_texts()) == 12 + 1
    tq = fig.axes[ylabels.index("torque τ (N·m)")]
    assert len(tq.get_legend().get_texts()) == 15  # 12 joints + the base's 3 moments
    assert tq.get_legend()._ncols >= 2  # 15 entries: more than one column


def test_free_base_that_moves_is_drawn_in_metres_and_angles():
    """A falling floating base (no controller): position in m, orientation as roll/pitch/yaw."""
    m = dqdyn.load("solo12") if ERD else dqdyn.load("two_link_arm", root_joint="free")
    res = run_simulation(m, duration=0.2, dt=2e-3, controller="none")
    fig = simulation_figure(res)
    ylabels = [ax.get_ylabel() for ax in fig.axes]
    assert "base position (m)" in ylabels
    pos = fig.axes[ylabels.index("base position (m)")]
    z = next(ln for ln in pos.get_lines() if ln.get_label().endswith(" z"))
    t = np.asarray(z.get_xdata())
    # free fall from rest: z(t) − z(0) = −g t²/2 until the limits or contacts act (none here)
    assert np.allclose(np.asarray(z.get_ydata()) - z.get_ydata()[0], -0.5 * 9.81 * t**2,
                       atol=1e-3)
    _check_layout(fig)


def test_trajectory_input_and_errors(arm_run, tmp_path):
    traj = arm_run.trajectory
    p = plot_simulation(traj, tmp_path / "traj.svg", model=arm_run.model)
    assert p.exists() and p.read_text().lstrip().startswith("<?xml")
    fig = simulation_figure(traj, model=arm_run.model)
    ylabels = [ax.get_ylabel() for ax in fig.axes]
    assert "velocity v (rad/s)" in ylabels
    ang = fig.axes[ylabels.index("joint angle q (rad)")]
    assert len(ang.get_legend().get_texts()) == 7  # no reference without q_ref
    with pytest.raises(DqdynError, match="needs its model"):
        simulation_figure(traj)
    with pytest.raises(DqdynError, match="expected a SimulationRun"):
        simulation_figure(np.zeros(3))
    from dqdyn.errors import ShapeError

    with pytest.raises(ShapeError, match="nq"):
        simulation_figure(traj, model=dqdyn.load("two_link_arm"))
