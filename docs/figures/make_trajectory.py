"""Draws docs/figures/trajectory_so3.png (docs/tasks/trajectories.md): a C² Cayley spline on SO(3)
through four unit quaternions (its body angular velocity) and a C² B-spline on SE(3) through four
unit dual quaternions (its translation).

Run from the repository root: ``python docs/figures/make_trajectory.py [--out PATH] [--quick]``
(needs matplotlib).
"""

import argparse
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from dqdyn.algebra import pose_from_rt, quat_from_axis_angle  # noqa: E402
from dqdyn.trajectory import CayleySpline, SE3Spline  # noqa: E402


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(Path(__file__).with_name("trajectory_so3.png")))
    ap.add_argument("--quick", action="store_true", help="fewer samples")
    args = ap.parse_args(argv)

    times = np.array([0.0, 1.0, 2.0, 3.0])
    axes = np.array([[0, 0, 1], [0, 1, 0], [1, 0, 0], [0, 0, 1]], float)
    angles = np.array([0.0, 0.8, 1.2, 2.0])
    quats = np.array([quat_from_axis_angle(a, th) for a, th in zip(axes, angles)])
    rot = CayleySpline(times, quats)
    poses = pose_from_rt(quats, np.array([[0, 0, 0], [0.3, 0.1, 0.2], [0.5, 0.4, 0.1], [0.6, 0.6, 0.4]]))
    se3 = SE3Spline.interpolate(times, poses)

    t = np.linspace(0.0, 3.0, 151 if args.quick else 601)
    w = rot.omega(t)  # body angular velocity (len(t), 3)
    p = se3.matrix(t)[:, :3, 3]
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(10, 3.6))
    for k, lab in enumerate("xyz"):
        a1.plot(t, w[:, k], label=f"ω_{lab}")
        a2.plot(t, p[:, k], label=f"p_{lab}")
    for a in (a1, a2):
        for tk in times:
            a.axvline(tk, color="0.8", lw=0.8, zorder=0)
        a.set_xlabel("t (s)")
        a.legend(fontsize=8)
    a1.set_ylabel("body angular velocity (rad/s)")
    a1.set_title("CayleySpline through 4 quaternions")
    a2.set_ylabel("position (m)")
    a2.set_title("SE3Spline through 4 dual quaternions")
    a2.plot(times, se3.matrix(times)[:, :3, 3], "k.", ms=6)
    fig.tight_layout()
    fig.savefig(args.out, dpi=110, metadata={"Software": None})
    print("wrote", args.out)


if __name__ == "__main__":
    main()
