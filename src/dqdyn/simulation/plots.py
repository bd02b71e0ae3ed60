"""Figures of a simulation (``dqdyn simulate --plot``), needing the ``plot`` extra (matplotlib).

One panel per physical quantity, so that radians and metres never share an axis:

* joint angles q (rad) and joint displacements q (m), each tracked signal with its reference
  (dashed, same colour);
* a floating base's position (m) and its orientation as roll / pitch / yaw angles (rad, the
  Z-Y-X angles of its quaternion), and a spherical joint's orientation the same way;
* velocities v (rad/s for rotational, m/s for translational coordinates);
* torques τ (N·m) and forces f (N).

Each coordinate keeps one colour in every panel.  A signal that does not move over the run
(peak-to-peak below ``1e-9`` of its size, e.g. a base held in place) is not drawn: it is named,
with its value, in a note under the figure, and a panel left with no moving signal is dropped —
no axis of round-off noise.  Legends sit to the right of their axes, in as many columns as
needed, and each panel is tall enough for its legend, so no legend runs into another panel.

`plot_simulation` takes what `dqdyn.simulation.run.run_simulation` returns (a
`dqdyn.simulation.run.SimulationRun`) or a `dqdyn.simulation.Trajectory` (from
`dqdyn.simulation.simulate`, or `dqdyn.simulation.Trajectory.load`) with its model.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from dqdyn._optional import require
from dqdyn.algebra.rotations import translation_of
from dqdyn.errors import DqdynError, ShapeError

#: a signal whose peak-to-peak range is below this fraction of max(1, its largest magnitude)
#: counts as constant (not drawn; named in the figure's note)
CONSTANT_RTOL = 1e-9
#: legend rows per column before another column is added
LEGEND_ROWS = 10
_LINESTYLES = ("-", "--", "-.", ":")


def _rpy(quat):
    """Z-Y-X (yaw, pitch, roll) angles of unit quaternions ``[w, x, y, z]`` (K, 4), returned as
    (roll, pitch, yaw) (K, 3), unwrapped in time."""
    w, x, y, z = (quat[:, k] for k in range(4))
    roll = np.arctan2(2 * (w * x + y * z), 1 - 2 * (x * x + y * y))
    pitch = np.arcsin(np.clip(2 * (w * y - z * x), -1.0, 1.0))
    yaw = np.arctan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z))
    return np.unwrap(np.stack([roll, pitch, yaw], axis=1), axis=0)


def _position_signals(model, q, q_ref):
    """``[(kind, label, values, reference or None, colour key)]`` for every scalar coordinate
    with a meaning of its own; ``kind`` is ``"angle"``, ``"disp"``, ``"base_pos"`` or
    ``"base_rot"``; the colour key is the velocity index of the coordinate."""
    out = []
    for name in model.joint_names:
        jt = model.joint_type_name(name)
        qs, vs = model.q_slice(name), model.v_slice(name)

        def ref(k):
            return None if q_ref is None else q_ref[:, qs.start + k]

        if jt in ("revolute", "helical"):
            out.append(("angle", name, q[:, qs.start], ref(0), vs.start))
        elif jt == "prismatic":
            out.append(("disp", name, q[:, qs.start], ref(0), vs.start))
        elif jt == "planar":
            for k, s in enumerate(("x", "y")):
                out.append(("disp", f"{name} {s}", q[:, qs.start + k], ref(k), vs.start + k))
            out.append(("angle", f"{name} φ", q[:, qs.start + 2], ref(2), vs.start + 2))
        elif jt == "cylindrical":
            out.append(("angle", f"{name} θ", q[:, qs.start], ref(0), vs.start))
            out.append(("disp", f"{name} d", q[:, qs.start + 1], ref(1), vs.start + 1))
        elif jt in ("free", "spherical"):
            quat = q[:, qs.start:qs.start + 4]
            qr = None if q_ref is None else q_ref[:, qs.start:qs.start + 4]
            a, ar = _rpy(quat), None if qr is None else _rpy(qr)
            kind = "base_rot" if jt == "free" else "angle"
            for k, s in enumerate(("roll", "pitch", "yaw")):
                out.append((kind, f"{name} {s}", a[:, k], None if ar is None else ar[:, k],
                            vs.start + k))
            if jt == "free":
                p = translation_of(q[:, qs])
                pr = None if q_ref is None else translation_of(q_ref[:, qs])
                for k, s in enumerate(("x", "y", "z")):
                    out.append(("base_pos", f"{name} {s}", p[:, k],
                                None if pr is None else pr[:, k], vs.start + 3 + k))
    return out


def _constant(y) -> bool:
    y = np.asarray(y, dtype=float)
    if y.size == 0 or not np.all(np.isfinite(y)):
        return False
    return float(np.ptp(y)) <= CONSTANT_RTOL * max(1.0, float(np.max(np.abs(y))))


def _inputs(result, model, q_ref):
    """``(model, trajectory, q_ref, title)`` of a SimulationRun or a Trajectory."""
    from dqdyn.simulation.trajectory import Trajectory

    if isinstance(result, Trajectory):
        if model is None:
            raise DqdynError("plot_simulation: a Trajectory needs its model: "
                             "plot_simulation(traj, path, model=model)")
        traj, title = result, f"{model.name}"
        if "integrator" in result.meta:
            title += f": {result.meta['integrator']}"
    elif hasattr(result, "trajectory") and hasattr(result, "model"):
        if model is not None and model is not result.model:
            raise DqdynError("plot_simulation: model= is for a Trajectory; a SimulationRun "
                             "carries its own")
        model, traj = result.model, result.trajectory
        q_ref = result.q_ref if q_ref is None else q_ref
        title = f"{model.name}: {result.controller}"
        if getattr(result, "error", None) is not None:
            title += f" (tracking error max {result.max_error:.2g}, RMS {result.rms_error:.2g})"
    else:
        raise DqdynError(f"plot_simulation: expected a SimulationRun (run_simulation) or a "
                         f"Trajectory (simulate), got {type(result).__name__}")
    if traj.q.shape[1] != model.nq or traj.v.shape[1] != model.nv:
        raise ShapeError(f"plot_simulation: the trajectory has nq = {traj.q.shape[1]}, nv = "
                         f"{traj.v.shape[1]}; {model.name!r} has nq = {model.nq}, nv = {model.nv}")
    if q_ref is not None:
        q_ref = np.asarray(q_ref, dtype=float)
        if q_ref.shape != traj.q.shape:
            raise ShapeError(f"plot_simulation: q_ref must have shape {traj.q.shape}, got "
                             f"{q_ref.shape}")
    return model, traj, q_ref, title


def panels_of(result, *, model=None, q_ref=None):
    """The panels `plot_simulation` draws, without drawing them: ``(panels, constants,
    title)`` with ``panels`` a list of ``(title, ylabel, [(label, y, reference, colour key)])``
    and ``constants`` the ``(label, value, unit)`` of the signals left out as constant."""
    from dqdyn.simulation.defaults import coordinate_kinds

    model, traj, q_ref, title = _inputs(result, model, q_ref)
    rot, labels = coordinate_kinds(model)
    pos = _position_signals(model, traj.q, q_ref)
    spec = [  # (kind, title, ylabel, unit)
        ("angle", "joint angles", "joint angle q (rad)", "rad"),
        ("disp", "joint displacements", "joint displacement q (m)", "m"),
        ("base_pos", "base position", "base position (m)", "m"),
        ("base_rot", "base orientation", "base roll / pitch / yaw (rad)", "rad"),
    ]
    groups = [(t, yl, u, [(lb, y, r, c) for k2, lb, y, r, c in pos if k2 == k])
              for k, t, yl, u in spec]
    for is_rot, t, yl, u in ((True, "angular velocities", "velocity v (rad/s)", "rad/s"),
                             (False, "linear velocities", "velocity v (m/s)", "m/s")):
        groups.append((t, yl, u, [(labels[i], traj.v[:, i], None, i) for i in range(model.nv)
                                  if rot[i] == is_rot]))
    for is_rot, t, yl, u in ((True, "torques", "torque τ (N·m)", "N·m"),
                             (False, "forces", "force f (N)", "N")):
        groups.append((t, yl, u, [(labels[i], traj.tau[:, i], None, i) for i in range(model.nv)
                                  if rot[i] == is_rot]))
    panels, constants = [], []
    for t, yl, u, sig in groups:
        moving = []
        for lb, y, r, c in sig:
            if _constant(y) and (r is None or _constant(r)):
                constants.append((lb, float(y[0]), u))
            else:
                moving.append((lb, y, r, c))
        if moving:
            panels.append((t, yl, moving))
    return panels, constants, title


def _legend_columns(n: int) -> int:
    return max(1, math.ceil(n / LEGEND_ROWS))


def simulation_figure(result, *, model=None, q_ref=None):
    """The matplotlib figure of `plot_simulation` (not saved; close it when done).

    Raises
    ------
    MissingExtraError
        matplotlib is not installed (``pip install "dqdyn[plot]"``).
    """
    require("plot", "matplotlib")
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D

    panels, constants, title = panels_of(result, model=model, q_ref=q_ref)
    t = (result.t if hasattr(result, "t") else result.trajectory.t)
    nv = max(1, (model or result.model).nv)
    if not panels:
        panels = [("", "", [])]
    n_h = [len(sig) + any(r is not None for _, _, r, _ in sig) for _, _, sig in panels]
    rows = [math.ceil(n / _legend_columns(n)) for n in n_h]
    heights = [max(1.7, 0.16 * r + 0.45) for r in rows]
    note = ""
    if constants:
        note = "constant over the run (not drawn): " + ", ".join(
            f"{lb} = {v:.4g} {u}" for lb, v, u in constants)
    fig = Figure(figsize=(8.0, sum(heights) + 0.9 + 0.18 * math.ceil(len(note) / 110)),
                 layout="constrained")
    axes = fig.subplots(len(panels), 1, sharex=True, squeeze=False,
                        gridspec_kw={"height_ratios": heights})[:, 0]
    cmap = __import__("matplotlib").colormaps["tab10" if nv <= 10 else "tab20"]
    for ax, (ptitle, ylabel, sig) in zip(axes, panels):
        for lb, y, r, c in sig:
            color, ls = cmap(c % cmap.N), _LINESTYLES[(c // cmap.N) % len(_LINESTYLES)]
            ax.plot(t, y, color=color, lw=1.2, ls=ls, label=lb)
            if r is not None:
                ax.plot(t, r, color=color, lw=1.0, ls=(0, (4, 2)), alpha=0.8)
        ax.set_ylabel(ylabel, fontsize=8)
        ax.set_title(ptitle, fontsize=8, loc="left")
        ax.ticklabel_format(axis="y", useOffset=False)
        ax.tick_params(labelsize=7)
        ax.grid(alpha=0.3)
        handles, labels = ax.get_legend_handles_labels()
        if any(r is not None for _, _, r, _ in sig):
            handles.append(Line2D([], [], color="0.3", ls=(0, (4, 2))))
            labels.append("reference (dashed)")
        if handles:
            ax.legend(handles, labels, loc="upper left", bbox_to_anchor=(1.01, 1.0),
                      fontsize=6.5, frameon=False, borderaxespad=0.0,
                      ncol=_legend_columns(len(handles)), handlelength=1.6,
                      columnspacing=0.8, labelspacing=0.25)
    axes[-1].set_xlabel("time t (s)")
    fig.suptitle(title, fontsize=10)
    if note:
        import textwrap

        fig.supxlabel("\n".join(textwrap.wrap(note, 110)), fontsize=6.5, color="0.35")
    fig.align_ylabels(axes)
    return fig


def plot_simulation(result, path, *, model=None, q_ref=None, dpi: int = 150) -> Path:
    """Write the figure of a simulation to ``path`` (PNG, PDF, SVG: by suffix); returns the path.

    Parameters
    ----------
    result:
        A `dqdyn.simulation.run.SimulationRun` (`dqdyn.simulation.run.run_simulation`,
        ``dqdyn simulate``) or a `dqdyn.simulation.Trajectory`
        (`dqdyn.simulation.simulate`, ``Trajectory.load``).
    model:
        The model of a Trajectory (a SimulationRun carries its own).
    q_ref:
        Reference configurations (len(t), nq) drawn dashed (a SimulationRun's own by default).

    Raises
    ------
    MissingExtraError
        matplotlib is not installed (``pip install "dqdyn[plot]"``).
    DqdynError
        ``result`` is neither, or a Trajectory comes without its model.
    ShapeError
        The trajectory or ``q_ref`` does not fit the model.
    """
    fig = simulation_figure(result, model=model, q_ref=q_ref)
    path = Path(path)
    fig.savefig(path, dpi=dpi, bbox_inches="tight")
    return path


__all__ = ["plot_simulation", "simulation_figure", "panels_of"]
