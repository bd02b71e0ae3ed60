"""The papers' experiments, with MuJoCo as the realistic simulator (digest §2).

Dynamics cases (seed 000 §5, thesis §4.4 / §5.3): MuJoCo (RK4, zero damping / armature /
friction, no contacts) drives the robot along sinusoidal joint-velocity references
(:class:`~dqdyn.simulation.SinusoidalReference`) with its *own* computed-torque law (``mj_fullM``
and ``qfrc_bias``, evaluated continuously at every RK4 stage — the simulator's low-level
controller, independent of dqdyn).  The logged
``q``, ``q̇`` and applied ``τ`` are then processed as the papers did: ``q̈`` by Richardson-
extrapolated differentiation of ``q̇`` (thesis app. D), and

* inverse dynamics (JACO, 38-DoF tree; thesis Tables 4.6, 5.1): ``τ_dqdyn = rnea(q, q̇, q̈)``
  against the applied torque;
* forward dynamics (50-DoF arm, holonomic mobile manipulator; seed 000 Table 2):
  ``q̈_dqdyn = aba(q, q̇, τ)`` against the differentiated MuJoCo velocity;

both waveforms low-pass filtered alike (6th-order zero-phase Butterworth, thesis app. D), then one
CMC per joint (Ferrari et al. 2010, digest §2.1) and its min / mean / std / max.

Control cases: the thesis's wrench control (appendix B, eq. B.3) on the JACO-like arm and joint
PD / computed torque on a 7-DoF arm, computed by dqdyn and applied to the MuJoCo plant.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..algorithms.forward import aba
from ..algorithms.kinematics import twist_jacobian
from ..algorithms.lagrange import mass_matrix
from ..algorithms.newton_euler import rnea
from ..analysis import butter_lowpass, cmc, richardson_derivative, summary
from ..simulation import ComputedTorque, JointPD, SinusoidalReference, WrenchControl
from . import robots


@dataclass
class CaseResult:
    name: str
    title: str
    quantity: str
    values: np.ndarray  # per-joint CMCs (dynamics cases) or the metric values (control cases)
    paper: float | None  # the paper's mean CMC to reach (None: no CMC threshold)
    passed: bool
    seconds: float = 0.0
    figures: list = field(default_factory=list)
    notes: str = ""
    extra: dict = field(default_factory=dict)

    @property
    def stats(self):
        return summary(self.values)


# ------------------------------------------------------------------------------ MuJoCo runs
def _full_mass(mujoco, mj, d, M):
    """Dense joint-space inertia (``mj_fullM``; its signature changed in MuJoCo 4)."""
    try:
        mujoco.mj_fullM(mj, d, M)
    except TypeError:
        mujoco.mj_fullM(mj, M, d.qM)


def run_mujoco(mj, iq, iv, q0, ref, duration, *, kp=100.0, kd=20.0, controller=None,
               stop=None):
    """Simulate MuJoCo from ``q0`` (dqdyn layout); returns dict of ``t``, ``q``, ``v``, ``tau``
    (dqdyn layout) sampled every step.

    ``ref(t) -> (q_d, v_d, a_d)``: MuJoCo's own computed-torque law tracks it, evaluated as a
    continuous-time controller (``mjcb_control``: at every RK4 stage, from MuJoCo's ``M`` and
    ``qfrc_bias``), so the logged torque is the one acting at the logged state.
    ``controller(t, q, v)`` (dqdyn layout) instead: a digital controller, sampled and held over
    each step (zero-order hold), as the thesis's V-REP runs (app. B)."""
    import mujoco

    d = mujoco.MjData(mj)
    d.qpos[iq] = q0
    dt = mj.opt.timestep
    n = int(round(duration / dt))
    T, Q, V, TAU = (np.empty(n + 1), np.empty((n + 1, len(iq))), np.empty((n + 1, len(iv))),
                    np.empty((n + 1, len(iv))))
    M = np.zeros((mj.nv, mj.nv))
    u = np.empty(mj.nv)

    def cb(m_, d_):
        _full_mass(mujoco, m_, d_, M)
        q, v = d_.qpos[iq], d_.qvel[iv]
        qd, vd, ad = ref(d_.time)
        u[iv] = ad + kp * (qd - q) + kd * (vd - v)
        d_.qfrc_applied[:] = M @ u + d_.qfrc_bias

    last = n
    if controller is None:
        mujoco.set_mjcb_control(cb)
    try:
        for k in range(n + 1):
            t = k * dt
            d.time = t
            q, v = d.qpos[iq].copy(), d.qvel[iv].copy()
            if controller is None:
                mujoco.mj_forward(mj, d)  # runs cb: the torque at (t_k, q_k, v_k)
                tau = d.qfrc_applied[iv].copy()
            else:
                tau = np.asarray(controller(t, q, v), dtype=float)
                d.qfrc_applied[iv] = tau
            T[k], Q[k], V[k], TAU[k] = t, q, v, tau
            if stop is not None and stop(k, t, q, v):
                last = k
                break
            if k < n:
                mujoco.mj_step(mj, d)
                if not np.all(np.isfinite(d.qvel)):
                    from ..errors import NonFiniteError

                    raise NonFiniteError(f"MuJoCo simulation diverged at t = {t:.4g} s")
    finally:
        if controller is None:
            mujoco.set_mjcb_control(None)
    s = slice(0, last + 1)
    return dict(t=T[s], q=Q[s], v=V[s], tau=TAU[s], dt=dt)


def _reference(model, q0, seed, amp, fmin=0.2, fmax=0.6):
    rng = np.random.default_rng(seed)
    A = amp * rng.uniform(0.5, 1.0, model.nv) * rng.choice([-1, 1], model.nv)
    f = rng.uniform(fmin, fmax, model.nv)
    return SinusoidalReference(model, q0, A, f, phase=0.0)


def compare(model, log, mode, cutoff):
    """The papers' pipeline on a MuJoCo log: returns (cmc per joint, dqdyn, mujoco waveforms)."""
    dt = log["dt"]
    acc = richardson_derivative(log["v"], dt)
    # row by row: one compiled call per sample (the batched kernels need not be compiled)
    if mode == "inverse":
        ours = np.array([rnea(model, q, v, a) for q, v, a in zip(log["q"], log["v"], acc)])
        theirs = log["tau"]
    else:
        ours = np.array([aba(model, q, v, t) for q, v, t in zip(log["q"], log["v"], log["tau"])])
        theirs = acc
    fs = 1.0 / dt
    ours_f = butter_lowpass(ours, cutoff, fs)
    theirs_f = butter_lowpass(theirs, cutoff, fs)
    return cmc(ours_f, theirs_f), ours_f, theirs_f


def _plot_waveforms(path, t, ours, theirs, values, label, title, joints=None):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    n = ours.shape[1]
    if joints is None:
        joints = sorted({int(np.argmin(values)), int(np.argmax(values)), 0, n // 2, n - 1})[:6]
    fig, axes = plt.subplots(len(joints), 1, figsize=(8, 1.9 * len(joints)), sharex=True)
    axes = np.atleast_1d(axes)
    for ax, j in zip(axes, joints):
        ax.plot(t, theirs[:, j], "k-", lw=2.2, alpha=0.45, label="MuJoCo")
        ax.plot(t, ours[:, j], "r--", lw=1.0, label="dqdyn")
        ax.set_ylabel(f"{label}$_{{{j + 1}}}$")
        ax.set_title(f"joint {j + 1}: CMC = {values[j]:.6f}", fontsize=9, loc="right")
    axes[0].legend(loc="upper left", fontsize=8)
    axes[-1].set_xlabel("t (s)")
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return str(path)


def _dynamics_case(name, robot, title, mode, paper, quick, out_dir, *, amp, seed, cutoff,
                   duration):
    t0 = time.perf_counter()
    model, mj, iq, iv = robots.with_mujoco(robot)
    rng = np.random.default_rng(seed)
    q0 = rng.uniform(-0.4, 0.4, model.nq)
    ref = _reference(model, q0, seed, amp)
    log = run_mujoco(mj, iq, iv, q0, ref, duration)
    vals, ours, theirs = compare(model, log, mode, cutoff)
    figs = []
    if out_dir is not None:
        lab = r"$\tau$" if mode == "inverse" else r"$\ddot q$"
        figs.append(_plot_waveforms(Path(out_dir) / f"{name}.png", log["t"], ours, theirs, vals,
                                    lab, f"{title}: dqdyn vs MuJoCo"))
    s = summary(vals)
    quantity = "τ (inverse dynamics)" if mode == "inverse" else "q̈ (forward dynamics)"
    return CaseResult(name, title, quantity, vals, paper, bool(s["mean"] >= paper and s["min"] == s["min"]),
                      time.perf_counter() - t0, figs,
                      f"{len(log['t'])} samples at {1 / log['dt']:.0f} Hz, Butterworth 6th order "
                      f"{cutoff:g} Hz", dict(duration=duration))


def case_jaco(quick=False, out_dir=None):
    """6-DoF JACO-like arm, inverse dynamics (thesis Table 4.6: dqNE mean 0.9930)."""
    return _dynamics_case("jaco", "jaco6", "6-DoF arm (JACO-like)", "inverse", 0.9930, quick,
                          out_dir, amp=0.8, seed=6, cutoff=10.0, duration=3.0 if quick else 10.0)


def case_serial50(quick=False, out_dir=None):
    """50-DoF serial arm, forward dynamics (seed 000 Table 2: mean 0.9893)."""
    return _dynamics_case("serial50", "serial50", "50-DoF serial arm", "forward", 0.9893, quick,
                          out_dir, amp=0.4, seed=50, cutoff=25.0, duration=2.0 if quick else 8.0)


def case_holonomic(quick=False, out_dir=None):
    """9-DoF holonomic mobile manipulator, forward dynamics (seed 000 Table 2: mean 0.9977)."""
    return _dynamics_case("holonomic_mm", "holonomic_mm", "9-DoF holonomic mobile manipulator",
                          "forward", 0.9977, quick, out_dir, amp=0.6, seed=9, cutoff=25.0,
                          duration=3.0 if quick else 10.0)


def case_tree38(quick=False, out_dir=None):
    """38-DoF branched robot of 9 subsystems, inverse dynamics (thesis Table 5.1: mean 0.9968)."""
    return _dynamics_case("tree38", "tree38", "38-DoF branched robot (9 subsystems)", "inverse",
                          0.9968, quick, out_dir, amp=0.6, seed=38, cutoff=10.0,
                          duration=2.0 if quick else 8.0)


# ---------------------------------------------------------------------------- control cases
#: thesis appendix B (T:L2329–2339): start and goal end-effector positions (m)
JACO_START = np.array([0.2828, 0.1177, 0.6855])
JACO_GOAL = np.array([-0.4619, -0.0675, 0.6277])


def ik_position(model, frame, p, q0, iters=200):
    """Damped least-squares position IK (a helper to place the arm at the thesis's start)."""
    wc = WrenchControl(model, frame, p)
    q = np.array(q0, dtype=float)
    for _ in range(iters):
        e = p - wc.position(q)
        if np.linalg.norm(e) < 1e-12:
            break
        J = twist_jacobian(model, q, frame, "world_aligned")[3:]
        q = q + J.T @ np.linalg.solve(J @ J.T + 1e-6 * np.eye(3), e)
    return q


def case_wrench(quick=False, out_dir=None):
    """Thesis appendix B: wrench control (eq. B.3) with a potential-field force, k_p = 30,
    k_v = 15, k_diss = 0.1, from the thesis's start to its goal; MuJoCo plant.  Stop: ‖ė‖ <
    1e-5 for 2000 consecutive steps (as the thesis) or the time limit."""
    t0 = time.perf_counter()
    model, mj, iq, iv = robots.with_mujoco("jaco6", timestep=1e-3)
    q0 = ik_position(model, "end_effector", JACO_START, np.array([0.0, 0.6, 2.2, 0.0, 0.9, 0.0]))
    ctl = WrenchControl(model, "end_effector", JACO_GOAL, kp=30.0, kv=15.0, kdiss=0.1)
    count = [0]

    def stop(k, t, q, v):
        J = twist_jacobian(model, q, "end_effector", "world_aligned")[3:]
        count[0] = count[0] + 1 if np.linalg.norm(J @ v) < 1e-5 else 0
        return count[0] >= 2000

    log = run_mujoco(mj, iq, iv, q0, None, 10.0 if quick else 30.0, controller=ctl, stop=stop)
    err = np.array([np.linalg.norm(ctl.position(q) - JACO_GOAL) for q in log["q"]])
    e0, ef = float(err[0]), float(err[-1])
    figs = []
    if out_dir is not None:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, (a1, a2) = plt.subplots(2, 1, figsize=(8, 5.5), sharex=True)
        a1.semilogy(log["t"], err)
        a1.set_ylabel(r"$\|p - p_d\|$ (m)")
        a1.set_title("Wrench control (thesis app. B, eq. B.3): end-effector error", fontsize=10)
        a2.plot(log["t"], log["tau"])
        a2.set_ylabel(r"$\tau$ (N m)")
        a2.set_xlabel("t (s)")
        fig.tight_layout()
        path = Path(out_dir) / "wrench_control.png"
        fig.savefig(path, dpi=110)
        plt.close(fig)
        figs.append(str(path))
    ok = ef < 1e-3 * e0
    return CaseResult("wrench", "Wrench control, 6-DoF arm (thesis app. B)", "‖p − p_d‖ (m)",
                      np.array([e0, ef]), None, bool(ok), time.perf_counter() - t0, figs,
                      f"start error {e0:.4f} m → final {ef:.2e} m after {log['t'][-1]:.2f} s "
                      f"({'stop criterion met' if count[0] >= 2000 else 'time limit'})",
                      dict(initial_error=e0, final_error=ef, t_final=float(log["t"][-1])))


def case_tracking(quick=False, out_dir=None):
    """Joint PD + gravity compensation and computed torque (dqdyn controllers) on a 7-DoF arm
    in MuJoCo, tracking a sinusoidal reference from a 0.1 rad initial offset."""
    t0 = time.perf_counter()
    model, mj, iq, iv = robots.with_mujoco("arm7", timestep=5e-4)
    q0 = np.full(model.nq, 0.3)
    ref = _reference(model, q0, 7, 0.25)
    dur = 2.0 if quick else 10.0
    out, logs = {}, {}
    # PD gains from the inertia at q0 (ω = 10 rad/s, critically damped per joint)
    Md = np.diag(mass_matrix(model, q0))
    for label, ctl in (("PD + gravity", JointPD(model, ref, kp=100.0 * Md, kd=20.0 * Md)),
                       ("computed torque", ComputedTorque(model, ref, kp=400.0, kd=40.0))):
        log = run_mujoco(mj, iq, iv, q0 + 0.1, None, dur, controller=ctl)
        e = np.array([np.linalg.norm(ref.position(t) - q) for t, q in zip(log["t"], log["q"])])
        steady = e[log["t"] >= 1.0]
        out[label] = (float(np.sqrt(np.mean(steady ** 2))), float(steady.max()))
        logs[label] = (log["t"], e)
    figs = []
    if out_dir is not None:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(8, 3.5))
        for label, (t, e) in logs.items():
            ax.semilogy(t, e, label=label)
        ax.set_xlabel("t (s)")
        ax.set_ylabel(r"$\|q_d - q\|$ (rad)")
        ax.set_title("7-DoF arm tracking a sinusoidal reference (MuJoCo plant)", fontsize=10)
        ax.legend()
        fig.tight_layout()
        path = Path(out_dir) / "tracking.png"
        fig.savefig(path, dpi=110)
        plt.close(fig)
        figs.append(str(path))
    pd_rms, ct_rms = out["PD + gravity"][0], out["computed torque"][0]
    ok = ct_rms < 1e-3 and pd_rms < 0.1
    return CaseResult("tracking", "PD and computed torque, 7-DoF arm", "RMS ‖q_d − q‖ (rad), t ≥ 1 s",
                      np.array([pd_rms, ct_rms]), None, bool(ok), time.perf_counter() - t0, figs,
                      f"PD+g: RMS {pd_rms:.2e}, max {out['PD + gravity'][1]:.2e} rad; computed "
                      f"torque: RMS {ct_rms:.2e}, max {out['computed torque'][1]:.2e} rad",
                      dict(pd=out["PD + gravity"], ct=out["computed torque"]))


#: name -> (function, kind); kind "cmc" (dynamics comparison) or "control"
CASES = {
    "jaco": (case_jaco, "cmc"),
    "serial50": (case_serial50, "cmc"),
    "wrench": (case_wrench, "control"),
    "tracking": (case_tracking, "control"),
    "holonomic_mm": (case_holonomic, "cmc"),
    "tree38": (case_tree38, "cmc"),
}

__all__ = ["CaseResult", "CASES", "run_mujoco", "compare", "case_jaco", "case_serial50",
           "case_holonomic", "case_tree38", "case_wrench", "case_tracking", "ik_position",
           "JACO_START", "JACO_GOAL"]
