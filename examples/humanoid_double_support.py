"""Talos in double support: gravity compensation through the two soles (6D frame contacts).

Both soles are welded to the ground (`dqdyn.FrameContact`, 12 rows) and the floating base is not
actuated.  `dqdyn.constrained_inverse_dynamics` gives the joint torques that hold the robot still
(v = v̇ = 0): the base rows ``g_b = J_bᵀ λ`` fix the total wrench on the soles, the twelve
multipliers are the minimum-norm ones (two feet carry six rows of balance: the split between them
is a choice), and ``τ_j = g_j − J_jᵀ λ``.  An independent least-squares solve gives the same
torques, and `dqdyn.contact_dynamics` with them returns zero acceleration and the same sole
wrenches, whose vertical forces sum to the weight.  Two postures: half-sitting, and leaning
forward with the elbows bent and the right arm out (the centres of pressure follow the centre of
mass: 5 cm forward, 2 cm to the right).  The minimum-norm split gives both soles the same
centre of pressure; a controller with friction cones and sole limits (a QP) would pick another.

    python examples/humanoid_double_support.py [--quick] [--out legged_double_support.png]
"""

from __future__ import annotations

import argparse
import os
import tempfile

import numpy as np

import dqdyn
from dqdyn.algebra.rotations import matrix_from_pose, pose_from_rt, translation_of
from dqdyn.errors import DqdynError

SOLES = ["left_sole_link", "right_sole_link"]
HALF_SITTING = {"3": -0.411354, "4": 0.859395, "5": -0.448041}  # hip, knee, ankle pitch (rad)
POSTURES = {
    "half-sitting": {},
    "leaning, arms bent": {"torso_2_joint": 0.4, "arm_right_2_joint": -1.2,
                           "arm_right_4_joint": -1.5, "arm_left_4_joint": -1.5},
}


def posture(model, extra: dict) -> np.ndarray:
    """Half-sitting legs (and ``extra`` joint values) with the soles on the ground z = 0."""
    q = dqdyn.neutral(model)
    for side in ("left", "right"):
        for j, value in HALF_SITTING.items():
            q[model.q_slice(f"leg_{side}_{j}_joint")] = value
    for name, value in extra.items():
        q[model.q_slice(name)] = value
    z = -np.mean([translation_of(dqdyn.frame_pose(model, q, f))[2] for f in SOLES])
    q[model.q_slice("root_joint")] = pose_from_rt(np.array([1.0, 0, 0, 0]), np.array([0, 0, z]))
    return q


def contact_rows(model, q):
    """The soles' contact rows (12, nv): the frames' body twists as ``[v; ω]`` (FrameContact's
    order: the multipliers are ``[f; τ]``)."""
    return np.concatenate([dqdyn.twist_jacobian(model, q, f, "body")[[3, 4, 5, 0, 1, 2]]
                           for f in SOLES])


def balance(model, q):
    """Joint torques, sole wrenches (world axes, at each sole's origin) and the checks."""
    nv = model.nv
    zero = np.zeros(nv)
    contacts = [dqdyn.FrameContact(f) for f in SOLES]
    actuated = np.ones(nv, dtype=bool)
    actuated[:6] = False  # the floating base
    cid = dqdyn.constrained_inverse_dynamics(model, q, zero, zero, contacts, actuated,
                                             objective="min_constraint_force")
    # the same by hand: minimum-norm λ of g_b = J_bᵀ λ, then τ_j = g_j − J_jᵀ λ
    J, g = contact_rows(model, q), dqdyn.gravity(model, q)
    lam = np.linalg.lstsq(J[:, :6].T, g[:6], rcond=None)[0]
    tau = g - J.T @ lam
    tau[:6] = 0.0
    r = dqdyn.contact_dynamics(model, q, zero, cid.tau, contacts)
    wrenches = []
    for f, w in zip(SOLES, r.forces):
        R = matrix_from_pose(dqdyn.frame_pose(model, q, f))[:3, :3]
        wrenches.append(np.concatenate([R @ w[:3], R @ w[3:]]))
    checks = {
        "tau": float(np.abs(cid.tau - tau).max() / np.abs(tau).max()),
        "a": float(np.abs(r.a).max()),
        "forces": float(np.abs(r.multipliers - cid.multipliers).max() / np.abs(lam).max()),
        "hdot": float(np.abs(dqdyn.centroidal_momentum_rate(model, q, zero, r.a)).max()),
    }
    return cid.tau, r.forces, np.array(wrenches), checks


def plot(results, weight, path):
    import matplotlib

    if "MPLBACKEND" not in os.environ:
        matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax1, ax2, ax3) = plt.subplots(1, 3, figsize=(7.6, 2.9),
                                        gridspec_kw={"width_ratios": [1, 1.4, 1.3]})
    width = 0.38
    for k, (name, res) in enumerate(results.items()):
        W = res["W"]
        ax1.bar(np.arange(2) + (k - 0.5) * width, W[:, 2], width, color=f"C{k}", label=name)
        ax2.bar(np.arange(6) + (k - 0.5) * width, np.concatenate([W[:, 3], W[:, 4], W[:, 5]]),
                width, color=f"C{k}")
        for s, p in enumerate(res["soles"]):
            ax3.plot(*p[:2], "ks", ms=5, mfc="none")
            ax3.plot(*res["cop"][s], "x", color=f"C{k}", ms=7)
        ax3.plot(*res["com"][:2], "o", color=f"C{k}", mfc="none", ms=9)
    ax1.axhline(weight / 2, color="0.5", lw=0.7, ls=":")
    ax1.set_xticks(range(2), ["left", "right"])
    ax1.set_ylabel("sole $f_z$ (N)")
    ax1.set_ylim(0, 0.65 * weight)
    ax1.legend(fontsize=6, loc="upper center")
    ax2.set_xticks(range(6), [r"$\tau_x$ L", r"$\tau_x$ R", r"$\tau_y$ L", r"$\tau_y$ R",
                              r"$\tau_z$ L", r"$\tau_z$ R"], fontsize=7)
    ax2.set_ylabel("sole moment, world axes (N·m)")
    ax2.axhline(0, color="k", lw=0.6)
    ax3.set_aspect("equal")
    ax3.set_xlabel("x (m)")
    ax3.set_ylabel("y (m)")
    ax3.set_title("□ soles  × CoP  ○ CoM", fontsize=8)
    ax3.set_xlim(-0.12, 0.12)
    ax3.set_ylim(-0.15, 0.15)
    for ax in (ax1, ax2, ax3):
        ax.grid(alpha=0.3)
    fig.suptitle("Talos, double support: the soles' wrenches (gravity compensation)", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="(already quick: two static postures)")
    ap.add_argument("--out", default=os.path.join(tempfile.gettempdir(), "legged_double_support.png"),
                    help="the PNG written (default: in the temporary directory)")
    args = ap.parse_args(argv)
    try:
        model = dqdyn.load_example("talos")
    except (DqdynError, OSError) as e:
        raise SystemExit(f"Talos (example-robot-data) is not installed: {e}") from None
    weight = model.total_mass * -model.gravity[2]
    print(f"Talos: {model.nv} DoF, {model.total_mass:.4f} kg, weight {weight:.4f} N")
    results = {}
    for name, extra in POSTURES.items():
        q = posture(model, extra)
        tau, forces, W, chk = balance(model, q)
        soles = [translation_of(dqdyn.frame_pose(model, q, f)) for f in SOLES]
        fz = W[:, 2].sum()
        c = dqdyn.center_of_mass(model, q)
        print(f"  {name}: CoM ({1e3 * c[0]:+.1f}, {1e3 * c[1]:+.1f}, {1e3 * c[2]:.1f}) mm; "
              f"Σ f_z = {fz:.9f} N (relative error {abs(fz - weight) / weight:.1e}); "
              f"max |τ_joint| {np.abs(tau).max():.2f} N·m")
        cops = []
        for sole, w, F, p in zip(SOLES, W, forces, soles):
            cop = (-F[4] / F[2], F[3] / F[2])  # centre of pressure in the sole's frame
            cops.append((p[0] - w[4] / w[2], p[1] + w[3] / w[2]))  # … on the ground, world axes
            print(f"    {sole:15s} f = [{w[0]:8.3f} {w[1]:8.3f} {w[2]:8.3f}] N, "
                  f"τ = [{w[3]:7.3f} {w[4]:7.3f} {w[5]:7.3f}] N·m, "
                  f"CoP ({1e3 * cop[0]:+6.1f}, {1e3 * cop[1]:+6.1f}) mm")
        print(f"    checks: τ vs least squares {chk['tau']:.1e}, max |v̇| {chk['a']:.1e}, "
              f"forces vs inverse dynamics {chk['forces']:.1e}, max |ḣ_g| {chk['hdot']:.1e}")
        results[name] = {"W": W, "soles": soles, "cop": cops, "com": c}
        assert abs(fz - weight) < 1e-9 * weight
        assert chk["tau"] < 1e-9 and chk["a"] < 1e-9 and chk["forces"] < 1e-9
    plot(results, weight, args.out)
    print(f"  figure: {args.out}")


if __name__ == "__main__":
    main()
