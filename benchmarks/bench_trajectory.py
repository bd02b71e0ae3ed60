"""Trajectory evaluation and Hamel pseudo-coordinate dynamics ([Mladenova, §6, §9]).

    python benchmarks/bench_trajectory.py [--quick]

* SO(3): a 100-knot (101 rotations) Cayley-cubic spline (``CayleySpline``, global C² solve)
  evaluated at 10⁶ times — rotation only, and rotation + body/spatial ω + ω̇ — against scipy's
  ``Slerp`` on the same knots (rotation only; piecewise geodesic, C⁰ — the comparable call).
* SE(3): a 100-segment C² cumulative B-spline through 101 poses (``SE3Spline.interpolate``) at
  10⁶ times — pose only, and pose + twists + twist derivatives — against scipy ``Slerp`` plus
  ``numpy.interp`` of the translation (a C⁰ piecewise pose, the nearest scipy peer).
* Hamel equations (``PseudoCoordinates.forward_dynamics``) per call against dqdyn's
  ``constrained_forward_dynamics`` (Udwadia–Kalaba) on the 8-DoF mobile manipulator
  (interleaved A/B, median µs).

Timings are best of 3 interleaved wall times (batched) / interleaved medians (per call); ratios are
dqdyn / peer measured in the same run.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))

from harness import interleaved, print_table, write_results  # noqa: E402


def _wall(fn):
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def best_pair(a, b, repeat=3):
    """Best wall time of ``a`` and of ``b`` over ``repeat`` interleaved rounds (A B A B …), so that
    load from other jobs on a shared machine hits both alike."""
    a()
    b()
    ta, tb = [], []
    for _ in range(repeat):
        ta.append(_wall(a))
        tb.append(_wall(b))
    return min(ta), min(tb)


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="10⁵ samples instead of 10⁶")
    args = ap.parse_args(argv)
    from scipy.spatial.transform import Rotation, Slerp

    from dqdyn.algebra.rotations import pose_from_rt
    from dqdyn.trajectory import CayleySpline, SE3Spline

    N = 10**5 if args.quick else 10**6
    K = 100
    rng = np.random.default_rng(19)
    times = np.linspace(0.0, float(K), K + 1)
    rot = Rotation.from_rotvec(np.cumsum(rng.normal(size=(K + 1, 3)) * 0.4, 0))
    Rs = rot.as_matrix()
    p = np.cumsum(rng.normal(size=(K + 1, 3)) * 0.3, 0)
    X = pose_from_rt(rot.as_quat(scalar_first=True), p)
    t = np.sort(rng.uniform(0.0, float(K), N))
    rows = []

    t0 = time.perf_counter()
    cs = CayleySpline(times, Rs)
    build_so3 = time.perf_counter() - t0
    sl = Slerp(times, rot)
    tr, ts = best_pair(lambda: cs.rotation(t), lambda: sl(t).as_matrix())
    tf, ts2 = best_pair(lambda: cs.sample(t), lambda: sl(t).as_matrix())
    rows.append(dict(case="SO(3) 100 knots: rotation", samples=N, dqdyn_s=tr, peer_s=ts,
                     ns_per_sample=tr / N * 1e9, peer="scipy Slerp (as_matrix)", ratio=tr / ts))
    rows.append(dict(case="SO(3) 100 knots: R, ω, ω̇ (body+spatial)", samples=N, dqdyn_s=tf, peer_s=ts2,
                     ns_per_sample=tf / N * 1e9, peer="scipy Slerp (as_matrix)", ratio=tf / ts2))

    t0 = time.perf_counter()
    sp = SE3Spline.interpolate(times, X)
    build_se3 = time.perf_counter() - t0

    def peer_se3():
        q = sl(t).as_quat(scalar_first=True)
        pp = np.stack([np.interp(t, times, p[:, k]) for k in range(3)], -1)
        return pose_from_rt(q, pp)

    tp, ts3 = best_pair(lambda: sp.pose(t), peer_se3)
    tf3, ts4 = best_pair(lambda: sp.sample(t), peer_se3)
    rows.append(dict(case="SE(3) 100 segments: pose", samples=N, dqdyn_s=tp, peer_s=ts3,
                     ns_per_sample=tp / N * 1e9, peer="scipy Slerp + np.interp", ratio=tp / ts3))
    rows.append(dict(case="SE(3) 100 segments: pose, twist, twist rate", samples=N, dqdyn_s=tf3, peer_s=ts4,
                     ns_per_sample=tf3 / N * 1e9, peer="scipy Slerp + np.interp", ratio=tf3 / ts4))
    print_table(f"Spline evaluation, {N} samples (best of 3 interleaved; build: Cayley {build_so3:.2f} s, "
                f"B-spline {build_se3:.2f} s)", rows)

    from dqdyn.constraints import mobile_manipulator
    from dqdyn.constraints.dynamics import constrained_forward_dynamics
    from dqdyn.constraints.pseudo_coordinates import PseudoCoordinates, diff_drive_quasi_velocities

    mm, cons, q0 = mobile_manipulator()
    A1, A1d = diff_drive_quasi_velocities(mm)
    pc = PseudoCoordinates(mm, cons, A1, A1_dot=A1d)
    pid, tau = rng.normal(size=7), rng.normal(size=8)
    qd = pc.velocities(q0, pid)
    a, b = interleaved(lambda: pc.forward_dynamics(q0, pid, tau),
                       lambda: constrained_forward_dynamics(mm, q0, qd, tau, cons), rounds=7)
    diff = float(np.abs(pc.forward_dynamics(q0, pid, tau).qdd - constrained_forward_dynamics(mm, q0, qd, tau, cons).qdd).max())
    rows2 = [dict(case="8-DoF mobile manipulator", hamel_us=a, uk_us=b, ratio=a / b, max_dqdd=diff)]
    print_table("Hamel equations (246)–(250) vs Udwadia–Kalaba, per call (median µs)", rows2)
    write_results("bench_trajectory_splines", rows, dict(samples=N, knots=K + 1))
    write_results("bench_trajectory_hamel", rows2)


if __name__ == "__main__":
    main()
