"""Solo-12 standing, then trotting in place on rigid point contacts (ANYmal when example-robot-data
has no Solo-12).

The feet are `dqdyn.PointContact` objects switched by a gait schedule: all four in stance, then the
diagonal pairs (front-left + hind-right, front-right + hind-left) in stance alternately while the
other pair swings (the knee and hip flex so that the foot rises straight up and comes back).

Control, every step: a joint-space PD (the base's pose and the joints towards the reference,
Kp = ω², Kd = 2ω) gives a desired acceleration ``v̇*``; a contact-consistent inverse dynamics picks
the acceleration ``v̇`` closest to it and the foot forces ``λ`` that the robot can produce — the
unactuated base rows ``M_b v̇ + h_b = J_bᵀ λ`` and the stance feet at rest ``J v̇ = −J̇ v`` — and
the joint torques ``τ = M_j v̇ + h_j − J_jᵀ λ`` follow.  The simulation is
`dqdyn.contact_dynamics` with those torques, integrated with
`dqdyn.simulation.semi_implicit_euler`; at a touchdown the foot's velocity is removed by a
plastic impact (`dqdyn.impulse_dynamics`, restitution 0).

Physics checks: at rest on four feet the vertical forces carry the weight; in stance the
classical accelerations of the stance feet vanish to round-off; the contact dynamics reproduce
the controller's acceleration and forces.  Writes the vertical foot forces and the base height
over time to a PNG.

    python examples/quadruped_trot.py [--quick] [--out legged_trot.png]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

import numpy as np

import dqdyn
from dqdyn.algebra.rotations import matrix_from_pose, pose_from_rt, translation_of
from dqdyn.errors import DqdynError
from dqdyn.simulation import semi_implicit_euler

# robot name → (legs front-left, front-right, hind-left, hind-right; hip and knee of the stance;
# swing lift in rad)
ROBOTS = {
    "solo12": (("FL", "FR", "HL", "HR"), 0.8, -1.6, 0.25),
    "anymal": (("LF", "RF", "LH", "RH"), 0.6, -1.2, 0.15),
}
T_STAND, PERIOD = 0.4, 0.5  # s: the four-foot stance, then one trot cycle (two half periods)
OMEGA = 2 * np.pi * 3.0  # rad/s, the PD's natural frequency


def load_quadruped():
    """The first of `ROBOTS` that loads: ``(name, model)``."""
    errors = []
    for name in ROBOTS:
        try:
            return name, dqdyn.load_example(name)
        except (DqdynError, OSError) as e:
            errors.append(f"{name}: {e}")
    raise SystemExit("no quadruped of example-robot-data is installed (" + "; ".join(errors) + ")")


class Quadruped:
    """The robot, its stance and the gait schedule."""

    def __init__(self, name, model):
        self.name, self.model = name, model
        legs, hfe, kfe, self.lift = ROBOTS[name]
        self.legs = legs
        self.feet = [f"{leg}_FOOT" for leg in legs]
        self.sign = {leg: 1.0 if i < 2 else -1.0 for i, leg in enumerate(legs)}  # hind legs mirrored
        q = dqdyn.neutral(model)
        for leg in legs:
            q[model.q_slice(f"{leg}_HFE")] = hfe * self.sign[leg]
            q[model.q_slice(f"{leg}_KFE")] = kfe * self.sign[leg]
        z = -np.mean([translation_of(dqdyn.frame_pose(model, q, f))[2] for f in self.feet])
        q[model.q_slice("root_joint")] = pose_from_rt(np.array([1.0, 0, 0, 0]), np.array([0, 0, z]))
        self.q0 = q  # feet on the ground z = 0
        self.base_height0 = z
        self.idx = {leg: (model.v_slice(f"{leg}_HFE").start, model.v_slice(f"{leg}_KFE").start)
                    for leg in legs}

    def stance(self, t: float) -> list[int]:
        """Indices of the feet in stance at time ``t``: all, then the diagonal pairs alternately."""
        if t < T_STAND:
            return [0, 1, 2, 3]
        first = int((t - T_STAND) // (PERIOD / 2)) % 2 == 0
        return [0, 3] if first else [1, 2]

    def reference(self, t: float):
        """``(q*, v*, v̇*)``: the stance, with the swing legs' hip and knee flexed by
        ``δ(φ) = δ_max (1 − cos 2πφ) / 2`` over the swing phase ``φ`` (hip +δ, knee −2δ: the
        foot rises straight below the hip)."""
        q, v, a = self.q0.copy(), np.zeros(self.model.nv), np.zeros(self.model.nv)
        if t < T_STAND:
            return q, v, a
        half = PERIOD / 2
        phi = ((t - T_STAND) % half) / half
        w = 2 * np.pi / half
        d = self.lift * (1 - np.cos(2 * np.pi * phi)) / 2
        dd = self.lift * w * np.sin(2 * np.pi * phi) / 2
        ddd = self.lift * w * w * np.cos(2 * np.pi * phi) / 2
        stance = self.stance(t)
        for i, leg in enumerate(self.legs):
            if i in stance:
                continue
            s, (ih, ik) = self.sign[leg], self.idx[leg]
            qh, qk = self.model.q_slice(f"{leg}_HFE"), self.model.q_slice(f"{leg}_KFE")
            q[qh] += s * d
            q[qk] -= 2 * s * d
            v[ih], v[ik] = s * dd, -2 * s * dd
            a[ih], a[ik] = s * ddd, -2 * s * ddd
        return q, v, a


def contact_rows(model, q, v, feet):
    """Stacked rows ``J`` (3k, nv) and drift ``J̇ v`` (3k,) of point contacts on ``feet`` (the
    classical acceleration of the foot at zero ``v̇``, in the foot's frame)."""
    J = np.concatenate([dqdyn.twist_jacobian(model, q, f, "body")[3:] for f in feet])
    drift = np.concatenate([dqdyn.frame_acceleration(model, q, v, np.zeros(model.nv), f, "body",
                                                     classical=True)[3:] for f in feet])
    return J, drift


def controller(robot: Quadruped, t, q, v):
    """Joint torques (free-base entries 0) of the PD + contact-consistent inverse dynamics
    (module docstring), and the acceleration and forces it expects."""
    model = robot.model
    qr, vr, ar = robot.reference(t)
    a_des = OMEGA ** 2 * dqdyn.difference(model, q, qr) + 2 * OMEGA * (vr - v) + ar
    feet = [robot.feet[i] for i in robot.stance(t)]
    J, drift = contact_rows(model, q, v, feet)
    M, h = dqdyn.mass_matrix(model, q), dqdyn.nonlinear_effects(model, q, v)
    nv, m = model.nv, J.shape[0]
    # min ‖W (v̇ − v̇*)‖²  s.t.  M_b v̇ − J_bᵀ λ = −h_b,  J v̇ = −J̇ v: a KKT system, singular on
    # four feet (λ is free in the null space of J_bᵀ), whose minimum-norm solution has the
    # minimum-norm forces
    W2 = np.full(nv, 1e-2)  # the stance legs follow the base and the fixed feet
    W2[:6] = 100.0  # the base's pose first
    for i in set(range(4)) - set(robot.stance(t)):
        W2[list(robot.idx[robot.legs[i]])] = 1.0  # the swing legs' hip and knee
        W2[robot.idx[robot.legs[i]][0] - 1] = 1.0  # (and the abduction)
    H = np.diag(np.concatenate([W2, np.zeros(m)]))
    C = np.block([[M[:6], -J[:, :6].T], [J, np.zeros((m, m))]])
    K = np.block([[H, C.T], [C, np.zeros((C.shape[0], C.shape[0]))]])
    rhs = np.concatenate([W2 * a_des, np.zeros(m), -h[:6], -drift])
    x = np.linalg.lstsq(K, rhs, rcond=1e-13)[0]
    a, lam = x[:nv], x[nv:nv + m]
    tau = M @ a + h - J.T @ lam
    tau[:6] = 0.0  # (the base rows are balanced to round-off: the base is not actuated)
    return tau, a, lam


def vertical_forces(robot, q, forces, stance):
    """The world-vertical component of each foot's force (0 for a swing foot)."""
    fz = np.zeros(4)
    for i, F in zip(stance, forces):
        R = matrix_from_pose(dqdyn.frame_pose(robot.model, q, robot.feet[i]))[:3, :3]
        fz[i] = (R @ F)[2]
    return fz


def simulate(robot: Quadruped, duration: float, dt: float):
    model = robot.model
    q, v = robot.q0.copy(), np.zeros(model.nv)
    weight = model.total_mass * -model.gravity[2]
    log = {"t": [], "fz": [], "z": []}
    stats = {"acc": 0.0, "vel": 0.0, "consistency": 0.0, "slip": 0.0, "stand": None}
    ground = {i: translation_of(dqdyn.frame_pose(model, q, f)) for i, f in enumerate(robot.feet)}
    prev = robot.stance(0.0)
    for k in range(int(round(duration / dt))):
        t = k * dt
        stance = robot.stance(t)
        contacts = [dqdyn.PointContact(robot.feet[i]) for i in stance]
        if stance != prev:  # touchdown of the new pair: a plastic impact on it
            for i in stance:
                ground[i] = translation_of(dqdyn.frame_pose(model, q, robot.feet[i]))
            v = dqdyn.impulse_dynamics(model, q, v, contacts, restitution=0.0).v
            prev = stance
        out = {}

        def accel(t_, q_, v_):
            tau, a_ctl, lam_ctl = controller(robot, t_, q_, v_)
            r = dqdyn.contact_dynamics(model, q_, v_, tau, contacts)
            out.update(r=r, a_ctl=a_ctl, lam_ctl=lam_ctl)
            return r.a, tau

        q1, v1, a, _ = semi_implicit_euler(model, accel, t, q, v, dt)
        r = out["r"]
        # physics checks on the stance feet at (q, v): zero classical acceleration; the contact
        # dynamics reproduce the controller's acceleration and forces
        for i in stance:
            f = robot.feet[i]
            acc = dqdyn.frame_acceleration(model, q, v, a, f, "world_aligned", classical=True)[3:]
            vel = dqdyn.frame_velocity(model, q, v, f, "world_aligned")[3:]
            stats["acc"] = max(stats["acc"], float(np.abs(acc).max()))
            stats["vel"] = max(stats["vel"], float(np.abs(vel).max()))
            slip = translation_of(dqdyn.frame_pose(model, q, f)) - ground[i]
            stats["slip"] = max(stats["slip"], float(np.abs(slip).max()))
        scale = 1.0 + np.abs(out["a_ctl"]).max() + np.abs(out["lam_ctl"]).max()
        err = max(np.abs(r.a - out["a_ctl"]).max(), np.abs(r.multipliers - out["lam_ctl"]).max())
        stats["consistency"] = max(stats["consistency"], float(err / scale))
        fz = vertical_forces(robot, q, r.forces, stance)
        if k == 0:
            stats["stand"] = (fz.sum(), weight)
        log["t"].append(t)
        log["fz"].append(fz)
        log["z"].append(translation_of(dqdyn.frame_pose(model, q, 1))[2])
        q, v = q1, v1
    return {key: np.asarray(val) for key, val in log.items()}, stats


def plot(robot, log, path):
    import matplotlib

    if "MPLBACKEND" not in os.environ:
        matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(6.4, 4.4), sharex=True,
                                   gridspec_kw={"height_ratios": [2, 1]})
    for i, f in enumerate(robot.feet):  # the diagonal pairs' forces coincide: thick under thin
        ax1.plot(log["t"], log["fz"][:, i], lw=3.0 if i < 2 else 1.1, alpha=0.45 if i < 2 else 1.0,
                 color=f"C{i}", label=f)
    weight = robot.model.total_mass * -robot.model.gravity[2]
    for y, text in ((weight, "weight"), (weight / 2, "weight / 2"), (weight / 4, "weight / 4")):
        ax1.axhline(y, color="0.7", lw=0.7, ls=":")
        ax1.text(0.01, y, text, fontsize=7, color="0.4", va="bottom")
    ax1.set_ylabel("vertical force (N)")
    ax1.legend(ncol=4, fontsize=7, loc="upper center", bbox_to_anchor=(0.5, 0.93))
    ax1.set_ylim(-1, 1.2 * weight)
    ax1.set_title(f"{robot.name}: stand, then trot in place (point contacts)", fontsize=10)
    ax2.plot(log["t"], 1e6 * (log["z"] - robot.base_height0), color="k", lw=1.2)
    ax2.set_ylabel("base height\n− start (µm)")
    ax2.set_xlabel("time (s)")
    for ax in (ax1, ax2):
        ax.axvline(T_STAND, color="0.8", lw=0.8, ls=":")
        ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="one trot cycle, coarser step")
    ap.add_argument("--out", default=os.path.join(tempfile.gettempdir(), "legged_trot.png"),
                    help="the PNG written (default: in the temporary directory)")
    args = ap.parse_args(argv)
    name, model = load_quadruped()
    robot = Quadruped(name, model)
    duration, dt = (T_STAND + PERIOD, 2e-3) if args.quick else (T_STAND + 4 * PERIOD, 1e-3)
    t0 = time.perf_counter()
    log, st = simulate(robot, duration, dt)
    elapsed = time.perf_counter() - t0
    plot(robot, log, args.out)
    total, weight = st["stand"]
    rel = abs(total - weight) / weight
    trot = log["t"] >= T_STAND
    print(f"{name}: {model.total_mass:.4f} kg, weight {weight:.4f} N; {len(log['t'])} steps of "
          f"{dt * 1e3:g} ms in {elapsed:.1f} s")
    print(f"  standing: vertical foot forces sum {total:.10f} N (relative error {rel:.1e})")
    fz = log["fz"][trot]
    print(f"  trotting: base height {1e6 * (log['z'][trot].min() - robot.base_height0):+.2f} to "
          f"{1e6 * (log['z'][trot].max() - robot.base_height0):+.2f} µm, stance foot forces "
          f"{fz[fz != 0].min():.2f} to {fz.max():.2f} N")
    print(f"  stance feet: max |classical acceleration| {st['acc']:.1e} m/s², "
          f"max |velocity| (contact-velocity residual) {st['vel']:.1e} m/s, "
          f"max slip {st['slip']:.1e} m")
    print(f"  contact dynamics vs the controller's acceleration and forces: {st['consistency']:.1e}")
    print(f"  figure: {args.out}")
    assert rel < 1e-9, rel
    assert st["acc"] < 1e-8, st["acc"]
    assert st["consistency"] < 1e-8, st["consistency"]


if __name__ == "__main__":
    main()
