"""Figures of a simulation (``dqdyn simulate --plot``), needing the ``plot`` extra (matplotlib).

One panel per physical quantity — joint angles (rad), joint displacements and base position (m),
joint torques (N·m), joint forces (N) — so radians and metres never share an axis; each tracked
signal is drawn with its reference (dashed, same colour); legends sit outside the axes.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .._optional import require
from ..algebra.rotations import translation_of

#: at most this many entries in a legend (the rest are summarised in one line)
MAX_LEGEND = 14


def _position_signals(model, q, q_ref):
    """``[(label, values, reference or None, rotational)]`` for every scalar coordinate that
    has a meaning of its own (angles, displacements; a free joint's position in m)."""
    out = []
    for name in model.joint_names:
        jt = model.joint_type_name(name)
        qs = model.q_slice(name)

        def ref(k):
            return None if q_ref is None else q_ref[:, qs.start + k]

        if jt in ("revolute", "helical"):
            out.append((name, q[:, qs.start], ref(0), True))
        elif jt == "prismatic":
            out.append((name, q[:, qs.start], ref(0), False))
        elif jt == "planar":
            for k, s in enumerate(("x", "y")):
                out.append((f"{name} {s}", q[:, qs.start + k], ref(k), False))
            out.append((f"{name} φ", q[:, qs.start + 2], ref(2), True))
        elif jt == "cylindrical":
            out.append((f"{name} θ", q[:, qs.start], ref(0), True))
            out.append((f"{name} d", q[:, qs.start + 1], ref(1), False))
        elif jt == "free":
            p = translation_of(q[:, qs])
            pr = None if q_ref is None else translation_of(q_ref[:, qs])
            for k, s in enumerate(("x", "y", "z")):
                out.append((f"{name} {s}", p[:, k], None if pr is None else pr[:, k], False))
    return out


def _legend(ax, n_more: int = 0, reference: bool = False):
    from matplotlib.lines import Line2D

    handles, labels = ax.get_legend_handles_labels()
    if reference:
        handles.append(Line2D([], [], color="0.3", ls="--"))
        labels.append("reference")
    if n_more:
        handles.append(Line2D([], [], color="none"))
        labels.append(f"… and {n_more} more")
    if handles:
        ax.legend(handles, labels, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=7,
                  frameon=False, borderaxespad=0.0)


def plot_simulation(run, path, *, dpi: int = 150) -> Path:
    """Write the figure of a `SimulationRun` to ``path`` (PNG,
    PDF, SVG: by suffix); returns the path.

    Raises
    ------
    MissingExtraError
        matplotlib is not installed (``pip install "dqdyn[plot]"``).
    """
    mpl = require("plot", "matplotlib")
    mpl.use("Agg")
    plt = require("plot", "matplotlib.pyplot")

    model, traj = run.model, run.trajectory
    t = traj.t
    pos = _position_signals(model, traj.q, run.q_ref)
    rot = np.asarray(run.rotational, dtype=bool)
    labels = run.labels
    panels = []  # (title, ylabel, [(label, y, ref)])
    for is_rot, unit, what in ((True, "rad", "joint angle"), (False, "m", "position")):
        sig = [(lb, y, r) for lb, y, r, k in pos if k == is_rot]
        if sig:
            panels.append((what, f"{what} q (rad)" if is_rot else "position q (m)", sig))
    for is_rot, what, unit in ((True, "torque", "N·m"), (False, "force", "N")):
        sig = [(labels[i], traj.tau[:, i], None) for i in range(model.nv) if rot[i] == is_rot]
        if sig:
            panels.append((what, f"{what} τ ({unit})" if is_rot else f"{what} f ({unit})", sig))
    if not panels:  # nothing to show (a model with no coordinates)
        panels.append(("", "", []))

    fig, axes = plt.subplots(len(panels), 1, figsize=(8.0, 1.9 + 1.7 * len(panels)),
                             sharex=True, squeeze=False)
    cmap = plt.get_cmap("tab10" if max(len(p[2]) for p in panels) <= 10 else "tab20")
    for ax, (_, ylabel, sig) in zip(axes[:, 0], panels):
        shown = sig[:MAX_LEGEND]
        for k, (lb, y, r) in enumerate(sig):
            c = cmap(k % cmap.N)
            ax.plot(t, y, color=c, lw=1.2, label=lb if k < MAX_LEGEND else None)
            if r is not None:
                ax.plot(t, r, color=c, lw=1.0, ls="--")
        ax.set_ylabel(ylabel)
        ax.grid(alpha=0.3)
        _legend(ax, len(sig) - len(shown), reference=any(r is not None for _, _, r in sig))
    axes[-1, 0].set_xlabel("time t (s)")
    title = f"{model.name}: {run.controller}"
    if run.error is not None:
        title += f" (tracking error max {run.max_error:.2g}, RMS {run.rms_error:.2g})"
    axes[0, 0].set_title(title, fontsize=10)
    fig.align_ylabels(axes[:, 0])
    path = Path(path)
    fig.savefig(path, dpi=dpi, bbox_inches="tight")
    plt.close(fig)
    return path


__all__ = ["plot_simulation"]
