"""Mobile-manipulator motion planning from Cartesian goals ([Mladenova, §9.1]).

The platform is nonholonomic (a differential drive on a planar joint, the axle midpoint ``P`` at
``axle_offset`` in the base frame must not slip sideways), the arm is holonomic.  Following the
paper's split, the platform is planned in Cartesian space and the arm's joint trajectory is
obtained from Cartesian tool goals:

* `plan_platform`: ``P(s)`` is the cubic Hermite curve from the start to the goal axle
  point with the start / goal headings as tangents (a flat output of the unicycle), timed by a
  rest-to-rest quintic ``s(t)``; the heading is ``φ = atan2(P'(s))`` and the base origin
  ``o = P − R(φ) d``.  ``(q, q̇, q̈)`` of the planar joint are exact, so ``A(q) q̇ = 0`` holds to
  round-off (the path *respects the rolling constraint* by construction).
* `plan_mobile_manipulator`: tool-position goals at given times (world frame); at each goal
  time the arm joints are solved by damped least squares with the base at its planned pose;
  between goals a C² piecewise quintic (zero acceleration at the goals, Catmull–Rom velocities,
  rest at both ends).  Returns a `MobilePlan` whose ``__call__(t) -> (q, q̇, q̈)`` is a
  reference for `dqdyn.simulation.ComputedTorque` or for constrained inverse dynamics.
* The tool orientation can be planned on SO(3) with the Park–Kang Cayley cubics of
  `dqdyn.trajectory` (`CayleySpline`) — the paper's §9.2.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dqdyn.errors import ConvergenceError, InfeasibleError, ModelError, ShapeError
from dqdyn.multibody.joints import PLANAR, REVOLUTE
from dqdyn.multibody.model import Model
from dqdyn.trajectory.joint import PiecewisePolynomial
from dqdyn.trajectory.se3 import time_scaling


@dataclass
class PlatformPath:
    """Planar-joint trajectory ``(x, y, φ)`` of a differential-drive base (see `plan_platform`)."""

    start: np.ndarray  #: (x, y, φ) of the base origin at t0
    goal: np.ndarray  #: (x, y, φ) at t1
    axle: np.ndarray  #: axle midpoint in the base frame (2,)
    t0: float
    t1: float
    P0: np.ndarray
    T0: np.ndarray
    P1: np.ndarray
    T1: np.ndarray

    def _hermite(self, s):
        s = s[:, None]
        h00, h10, h01, h11 = 2 * s**3 - 3 * s**2 + 1, s**3 - 2 * s**2 + s, -2 * s**3 + 3 * s**2, s**3 - s**2
        d00, d10, d01, d11 = 6 * s**2 - 6 * s, 3 * s**2 - 4 * s + 1, -6 * s**2 + 6 * s, 3 * s**2 - 2 * s
        e00, e10, e01, e11 = 12 * s - 6, 6 * s - 4, -12 * s + 6, 6 * s - 2
        P = h00 * self.P0 + h10 * self.T0 + h01 * self.P1 + h11 * self.T1
        P1 = d00 * self.P0 + d10 * self.T0 + d01 * self.P1 + d11 * self.T1
        P2 = e00 * self.P0 + e10 * self.T0 + e01 * self.P1 + e11 * self.T1
        P3 = 12 * self.P0 + 6 * self.T0 - 12 * self.P1 + 6 * self.T1
        return P, P1, P2, np.broadcast_to(P3, P.shape)

    def axle_point(self, t):
        t = np.atleast_1d(np.asarray(t, dtype=float))
        s, _, _ = time_scaling("quintic", (t - self.t0) / (self.t1 - self.t0))
        return self._hermite(s)[0]

    def __call__(self, t):
        """``(q, q̇, q̈)`` of the planar joint (..., 3) each."""
        t = np.asarray(t, dtype=float)
        shape = t.shape
        t = t.reshape(-1)
        T = self.t1 - self.t0
        s, sd, sdd = time_scaling("quintic", (t - self.t0) / T)
        sd, sdd = sd / T, sdd / T**2
        inside = (t > self.t0) & (t < self.t1)
        sd, sdd = np.where(inside, sd, 0.0), np.where(inside, sdd, 0.0)
        P, d1, d2, d3 = self._hermite(s)
        x1, y1, x2, y2, x3, y3 = d1[:, 0], d1[:, 1], d2[:, 0], d2[:, 1], d3[:, 0], d3[:, 1]
        n2 = x1 * x1 + y1 * y1
        phi = np.arctan2(y1, x1)
        # keep φ continuous and equal to the start heading's branch
        phi = self.start[2] + np.unwrap(np.r_[self.start[2], phi])[1:] - self.start[2]
        cr = x1 * y2 - y1 * x2
        ph1 = cr / n2  # dφ/ds
        ph2 = ((x1 * y3 - y1 * x3) * n2 - cr * 2 * (x1 * x2 + y1 * y2)) / n2**2
        phid = ph1 * sd
        phidd = ph2 * sd**2 + ph1 * sdd
        Pd = d1 * sd[:, None]
        Pdd = d2 * (sd**2)[:, None] + d1 * sdd[:, None]
        c, si = np.cos(phi), np.sin(phi)
        Rd = np.stack([c * self.axle[0] - si * self.axle[1], si * self.axle[0] + c * self.axle[1]], -1)
        JRd = np.stack([-Rd[:, 1], Rd[:, 0]], -1)  # d(R d)/dφ
        o = P - Rd
        od = Pd - phid[:, None] * JRd
        odd = Pdd - phidd[:, None] * JRd + (phid**2)[:, None] * Rd
        q = np.column_stack([o, phi])
        qd = np.column_stack([od, phid])
        qdd = np.column_stack([odd, phidd])
        return q.reshape(shape + (3,)), qd.reshape(shape + (3,)), qdd.reshape(shape + (3,))


def plan_platform(start, goal, duration: float, *, axle_offset=(0.0, 0.0), t0: float = 0.0,
                  tangent_scale: float | None = None) -> PlatformPath:
    """A rolling-consistent path of the base from ``start`` to ``goal`` (each ``(x, y, φ)`` of the
    base origin; module docstring).  ``tangent_scale`` (default: the start–goal distance) sets the
    Hermite tangents' length; InfeasibleError when start and goal axle points coincide with
    different headings (a turn on the spot is not a Hermite path)."""
    start = np.asarray(start, dtype=float)
    goal = np.asarray(goal, dtype=float)
    if start.shape != (3,) or goal.shape != (3,):
        raise ShapeError("start and goal must be (x, y, φ) triples")
    if not (np.isfinite(duration) and duration > 0):
        raise ShapeError(f"duration must be > 0; got {duration!r}")
    d = np.asarray(axle_offset, dtype=float).reshape(-1)[:2]
    R = lambda p: np.array([[np.cos(p), -np.sin(p)], [np.sin(p), np.cos(p)]])  # noqa: E731
    P0 = start[:2] + R(start[2]) @ d
    P1 = goal[:2] + R(goal[2]) @ d
    L = np.linalg.norm(P1 - P0) if tangent_scale is None else float(tangent_scale)
    if L <= 1e-12:
        raise InfeasibleError("start and goal axle points coincide: plan a turn on the spot instead")
    T0 = L * np.array([np.cos(start[2]), np.sin(start[2])])
    T1 = L * np.array([np.cos(goal[2]), np.sin(goal[2])])
    return PlatformPath(start, goal, d, float(t0), float(t0 + duration), P0, T0, P1, T1)


def _ik_position(model, frame, p_goal, q, arm, iters=300, damping=1e-6):
    from dqdyn.algebra.rotations import translation_of
    from dqdyn.kinematics.forward import frame_pose
    from dqdyn.kinematics.jacobians import twist_jacobian

    q = q.copy()
    for _ in range(iters):
        e = p_goal - translation_of(frame_pose(model, q, frame))
        if np.linalg.norm(e) < 1e-12:
            return q
        J = twist_jacobian(model, q, frame, "world_aligned")[3:, arm]
        q[arm] += J.T @ np.linalg.solve(J @ J.T + damping * np.eye(3), e)
    if np.linalg.norm(e) > 1e-6:
        raise ConvergenceError(f"the tool cannot reach the goal {p_goal} from the planned base pose "
                               f"(residual {np.linalg.norm(e):.3g} m)")
    return q


def c2_waypoint_quintics(times, Q):
    """C² piecewise quintic through ``Q`` (K, n) at ``times`` (K,): rest at both ends, Catmull–Rom
    velocities and zero accelerations at interior waypoints."""
    times = np.asarray(times, dtype=float)
    K = times.size
    V = np.zeros_like(Q)
    if K > 2:
        V[1:-1] = (Q[2:] - Q[:-2]) / (times[2:] - times[:-2])[:, None]
    coeffs = []
    for k in range(K - 1):
        T = times[k + 1] - times[k]
        h = Q[k + 1] - Q[k]
        v0, v1 = V[k], V[k + 1]
        c = np.zeros((6, Q.shape[1]))
        c[0], c[1] = Q[k], v0
        c[3] = (20 * h - (8 * v1 + 12 * v0) * T) / (2 * T**3)
        c[4] = (-30 * h + (14 * v1 + 16 * v0) * T) / (2 * T**4)
        c[5] = (12 * h - 6 * (v1 + v0) * T) / (2 * T**5)
        coeffs.append(c)
    return PiecewisePolynomial(times, np.array(coeffs))


@dataclass
class MobilePlan:
    """Whole-body reference: the platform path plus the arm's piecewise quintic."""

    model: Model
    platform: PlatformPath
    arm: PiecewisePolynomial
    base_slice: slice
    arm_index: np.ndarray
    q_template: np.ndarray
    goal_times: np.ndarray
    goals: np.ndarray
    frame: str

    def __call__(self, t):
        """``(q, q̇, q̈)`` of the whole model at the scalar or array ``t``."""
        t = np.asarray(t, dtype=float)
        qb, vb, ab = self.platform(t)
        qa, va, aa = self.arm(t)
        shape = t.shape + (self.model.nq,)
        q = np.broadcast_to(self.q_template, shape).copy()
        v = np.zeros(shape)
        a = np.zeros(shape)
        sl = self.base_slice
        q[..., sl], v[..., sl], a[..., sl] = qb, vb, ab
        q[..., self.arm_index], v[..., self.arm_index], a[..., self.arm_index] = qa, va, aa
        return q, v, a


def plan_mobile_manipulator(model: Model, q_start, base_goal, tool_goals, goal_times, *,
                            frame: str = "tool", base_joint: str = "base_joint", axle_offset=None,
                            duration: float | None = None) -> MobilePlan:
    """Plan the platform from ``q_start``'s base pose to ``base_goal`` ``(x, y, φ)`` over
    ``duration`` (default: the last goal time) and the arm through the tool positions
    ``tool_goals`` (K, 3) at ``goal_times`` (K,) (module docstring).  ``axle_offset`` defaults to
    the model's declared `DifferentialDrive`."""
    from dqdyn.trajectory._checks import times as _times

    i = model.joint_index(base_joint)
    if int(model.joint_type[i]) != PLANAR:
        raise ModelError(f"joint {base_joint!r} must be a planar joint")
    if model.nq != model.nv or model.has_quaternion_joints:
        raise ModelError("plan_mobile_manipulator needs q̇ = v (vector-space joints)")
    if axle_offset is None:
        decl = [c for c in model.constraints if getattr(c, "joint", None) == base_joint]
        axle_offset = decl[0].axle_offset if decl else (0.0, 0.0)
    q_start = np.asarray(q_start, dtype=float)
    gt = _times(goal_times, "goal_times", min_len=1)
    goals = np.asarray(tool_goals, dtype=float).reshape(-1, 3)
    if goals.shape[0] != gt.size:
        raise ShapeError(f"tool_goals must have shape ({gt.size}, 3) to match goal_times; got {goals.shape}")
    if gt[0] <= 0:
        raise ShapeError("goal_times must be > 0 (t = 0 is the start configuration)")
    T = float(gt[-1]) if duration is None else float(duration)
    bs = model.q_slice(base_joint)
    plat = plan_platform(q_start[bs], base_goal, T, axle_offset=axle_offset)
    arm = np.array([j for j in range(model.nq) if not (bs.start <= j < bs.stop)])
    jt = np.asarray(model.joint_type)
    iq = np.asarray(model.idx_q)
    rev = [int(iq[b]) for b in range(1, jt.size) if jt[b] == REVOLUTE and int(iq[b]) in set(arm.tolist())]
    Q = [q_start[arm]]
    q = q_start.copy()
    for tk, pk in zip(gt, goals):
        q[bs] = plat(tk)[0]
        q = _ik_position(model, frame, pk, q, arm)
        q[rev] = (q[rev] + np.pi) % (2 * np.pi) - np.pi  # same pose, angles in [−π, π)
        Q.append(q[arm].copy())
    arm_traj = c2_waypoint_quintics(np.r_[0.0, gt], np.array(Q))
    return MobilePlan(model, plat, arm_traj, bs, arm, q_start.copy(), gt, goals, frame)


__all__ = ["PlatformPath", "plan_platform", "MobilePlan", "plan_mobile_manipulator", "c2_waypoint_quintics"]
