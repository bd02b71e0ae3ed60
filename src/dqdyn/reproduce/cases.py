"""The experiments of [Silva2022, §5] and [Silva2022thesis], with MuJoCo as the realistic simulator.

Dynamics cases ([Silva2022, §5]; [Silva2022thesis, §4.2.1.5, §4.2.3.2, §5.3]): MuJoCo (RK4, zero damping / armature /
friction, no contacts) drives the robot along sinusoidal joint-velocity references
(`SinusoidalReference`) with its *own* computed-torque law (``mj_fullM``
and ``qfrc_bias``, evaluated continuously at every RK4 stage — the simulator's low-level
controller, independent of dqdyn).  The logged
``q``, ``q̇`` and applied ``τ`` are then processed as the papers did: ``q̈`` by Richardson-
extrapolated differentiation of ``q̇`` ([Silva2022thesis, app. D]), and

* inverse dynamics (JACO, 38-DoF tree; [Silva2022thesis, Tables 4.6], 5.1): ``τ_dqdyn = rnea(q, q̇, q̈)``
  against the applied torque;
* forward dynamics (50-DoF arm, holonomic mobile manipulator; [Silva2022, Table 2]):
  ``q̈_dqdyn = aba(q, q̇, τ)`` against the differentiated MuJoCo velocity;

both waveforms low-pass filtered alike (6th-order zero-phase Butterworth, [Silva2022thesis, app. D]), then one
CMC per joint (Ferrari et al. 2010, as in [Silva2022, §5.1]) and its min / mean / std / max.

Wheeled cases:

* ``fierro_lewis`` ([Silva2022thesis, app. A, Table A.1]): the Pioneer base
  driven along a rolling trajectory; dqNE's generalized forces ``(f_x, f_y, τ_z)`` against the
  Fierro–Lewis model ``M(q) q̈ + c(q, q̇)`` with the corrected sign (the printed ``M₁₃``, ``c₁``
  belong to a CoM at ``−d``, while eq. (A.3) puts it at ``+d``), and the printed sign's loss
  of agreement for a large CoM offset ``d``.
* ``nonholonomic_mm`` ([Silva2022, Table 2; §4.5, eqs. (62)–(64)]): the 8-DoF differential-drive mobile
  manipulator in MuJoCo *with real wheels* rolling on a floor by friction; dqdyn's Udwadia–Kalaba
  constrained forward dynamics against the differentiated MuJoCo velocities.

Control cases: the thesis's wrench control (appendix B, eq. B.3) on the JACO-like arm and joint
PD / computed torque on a 7-DoF arm, computed by dqdyn and applied to the MuJoCo plant.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from dqdyn.analysis import butter_lowpass, cmc, richardson_derivative, summary
from dqdyn.dynamics.aba import aba
from dqdyn.dynamics.lagrange import mass_matrix
from dqdyn.dynamics.mobile import fierro_lewis
from dqdyn.dynamics.newton_euler import rnea
from dqdyn.kinematics.jacobians import twist_jacobian
from dqdyn.reproduce import robots
from dqdyn.reproduce.result import CaseResult
from dqdyn.reproduce.tables import case_dqel, case_opcounts
from dqdyn.simulation import ComputedTorque, JointPD, SinusoidalReference, WrenchControl


# ------------------------------------------------------------------------------ MuJoCo runs
def _full_mass(mujoco, mj, d, M):
    """Dense joint-space inertia (``mj_fullM``; its signature changed in MuJoCo 4)."""
    try:
        mujoco.mj_fullM(mj, d, M)
    except TypeError:
        mujoco.mj_fullM(mj, M, d.qM)


def run_mujoco(mj, iq, iv, q0, ref, duration, *, kp=100.0, kd=20.0, controller=None,
               stop=None, record=None):
    """Simulate MuJoCo from ``q0`` (dqdyn layout); returns dict of ``t``, ``q``, ``v``, ``tau``
    (dqdyn layout) sampled every step.

    ``ref(t) -> (q_d, v_d, a_d)``: MuJoCo's own computed-torque law tracks it, evaluated as a
    continuous-time controller (``mjcb_control``: at every RK4 stage, from MuJoCo's ``M`` and
    ``qfrc_bias``), so the logged torque is the one acting at the logged state.
    ``controller(t, q, v)`` (dqdyn layout) instead: a digital controller, sampled and held over
    each step (zero-order hold), as the thesis's V-REP runs (app. B).
    ``record(mujoco, mj, d)``: called at every logged state (after ``mj_forward``); its values
    are returned stacked as ``record``."""
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
    REC = []
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
            if record is not None:
                REC.append(np.array(record(mujoco, mj, d), dtype=float))
            if stop is not None and stop(k, t, q, v):
                last = k
                break
            if k < n:
                mujoco.mj_step(mj, d)
                if not np.all(np.isfinite(d.qvel)):
                    from dqdyn.errors import NonFiniteError

                    raise NonFiniteError(f"MuJoCo simulation diverged at t = {t:.4g} s")
    finally:
        if controller is None:
            mujoco.set_mjcb_control(None)
    s = slice(0, last + 1)
    out = dict(t=T[s], q=Q[s], v=V[s], tau=TAU[s], dt=dt)
    if record is not None:
        out["record"] = np.array(REC)
    return out


def _reference(model, q0, seed, amp, fmin=0.2, fmax=0.6):
    rng = np.random.default_rng(seed)
    A = amp * rng.uniform(0.5, 1.0, model.nv) * rng.choice([-1, 1], model.nv)
    f = rng.uniform(fmin, fmax, model.nv)
    return SinusoidalReference(model, q0, A, f, phase=0.0)


def compare(model, log, mode, cutoff):
    """The papers' pipeline on a MuJoCo log: returns (cmc per joint, dqdyn, mujoco waveforms)."""
    dt = log["dt"]
    acc = richardson_derivative(log["v"], dt)
    # one batched (compiled, parallel) call per trajectory
    if mode == "inverse":
        ours = rnea(model, log["q"], log["v"], acc)
        theirs = log["tau"]
    else:
        ours = aba(model, log["q"], log["v"], log["tau"])
        theirs = acc
    fs = 1.0 / dt
    ours_f = butter_lowpass(ours, cutoff, fs)
    theirs_f = butter_lowpass(theirs, cutoff, fs)
    return cmc(ours_f, theirs_f), ours_f, theirs_f


def _units(model, mode):
    """Unit of each velocity coordinate's torque (inverse) or acceleration (forward)."""
    from dqdyn.simulation.defaults import coordinate_kinds

    rot, _ = coordinate_kinds(model)
    if mode == "inverse":
        return ["N·m" if r else "N" for r in rot]
    return ["rad/s²" if r else "m/s²" for r in rot]


def _legend_outside(ax, **kw):
    """A legend to the right of the axes, never over the curves."""
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False, borderaxespad=0.0,
              **{"fontsize": 8, **kw})


def _plot_waveforms(path, t, ours, theirs, values, label, title, joints=None, units=None):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from dqdyn.analysis.cmc import format_cmc

    n = ours.shape[1]
    if joints is None:
        joints = sorted({int(np.argmin(values)), int(np.argmax(values)), 0, n // 2, n - 1})[:6]
    fig, axes = plt.subplots(len(joints), 1, figsize=(8, 1.9 * len(joints)), sharex=True)
    axes = np.atleast_1d(axes)
    for ax, j in zip(axes, joints):
        ax.plot(t, theirs[:, j], "k-", lw=2.2, alpha=0.45, label="MuJoCo")
        ax.plot(t, ours[:, j], "r--", lw=1.0, label="dqdyn")
        unit = f" ({units[j]})" if units is not None else ""
        ax.set_ylabel(f"{label}$_{{{j + 1}}}${unit}")
        ax.set_title(f"joint {j + 1}: CMC = {format_cmc(values[j])}", fontsize=9, loc="right")
    _legend_outside(axes[0])
    axes[-1].set_xlabel("time t (s)")
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)
    return str(path)


def _route_cmcs(model, log, mode, cutoff, theirs_f, main=None):
    """CMC of the papers' alternative routes (`routes`), same filtering as the main row;
    ``main``: extra routes ``{name: waveform}``."""
    from dqdyn.reproduce.routes import alternative_routes

    acc = richardson_derivative(log["v"], log["dt"])
    fs = 1.0 / log["dt"]
    waves = dict(main or {})
    waves.update(alternative_routes(model, log, mode, acc))
    return {k: (None if w is None else cmc(butter_lowpass(w, cutoff, fs), theirs_f))
            for k, w in waves.items()}


def _dynamics_case(name, robot, title, mode, paper, quick, out_dir, *, amp, seed, cutoff,
                   duration, ours_fn=None, main_label=None, routes=True):
    t0 = time.perf_counter()
    model, mj, iq, iv = robots.with_mujoco(robot)
    rng = np.random.default_rng(seed)
    q0 = rng.uniform(-0.4, 0.4, model.nq)
    ref = _reference(model, q0, seed, amp)
    log = run_mujoco(mj, iq, iv, q0, ref, duration)
    vals, ours, theirs = compare(model, log, mode, cutoff)
    extra_routes = {}
    if ours_fn is not None:  # the main row by another route (the graph); rnea becomes a route
        fs = 1.0 / log["dt"]
        raw = ours_fn(model, log, richardson_derivative(log["v"], log["dt"]))
        extra_routes["dqNE, monolithic (rnea)"] = rnea(model, log["q"], log["v"],
                                                       richardson_derivative(log["v"], log["dt"]))
        ours = butter_lowpass(raw, cutoff, fs)
        vals = cmc(ours, theirs)
    figs = []
    if out_dir is not None:
        lab = r"$\tau$" if mode == "inverse" else r"$\ddot q$"
        figs.append(_plot_waveforms(Path(out_dir) / f"{name}.png", log["t"], ours, theirs, vals,
                                    lab, f"{title}: dqdyn vs MuJoCo",
                                    units=_units(model, mode)))
    s = summary(vals)
    quantity = "τ (inverse dynamics)" if mode == "inverse" else "q̈ (forward dynamics)"
    extra = dict(duration=duration)
    if routes:
        extra["routes"] = _route_cmcs(model, log, mode, cutoff, theirs, extra_routes)
        extra["main_route"] = main_label or ("dqNE (rnea)" if mode == "inverse" else "ABA")
    return CaseResult(name, title, quantity, vals, paper, bool(s["mean"] >= paper and s["min"] == s["min"]),
                      time.perf_counter() - t0, figs,
                      f"{len(log['t'])} samples at {1 / log['dt']:.0f} Hz, Butterworth 6th order "
                      f"{cutoff:g} Hz", extra)


def case_jaco(quick=False, out_dir=None):
    """6-DoF JACO-like arm, inverse dynamics ([Silva2022thesis, Table 4.6]: dqNE mean 0.9930)."""
    return _dynamics_case("jaco", "jaco6", "6-DoF arm (JACO-like)", "inverse", 0.9930, quick,
                          out_dir, amp=0.8, seed=6, cutoff=10.0, duration=3.0 if quick else 10.0)


def case_serial50(quick=False, out_dir=None):
    """50-DoF serial arm, forward dynamics ([Silva2022, Table 2]: mean 0.9893)."""
    return _dynamics_case("serial50", "serial50", "50-DoF serial arm", "forward", 0.9893, quick,
                          out_dir, amp=0.4, seed=50, cutoff=25.0, duration=2.0 if quick else 8.0)


def case_holonomic(quick=False, out_dir=None):
    """9-DoF holonomic mobile manipulator, forward dynamics ([Silva2022, Table 2]: mean 0.9977)."""
    return _dynamics_case("holonomic_mm", "holonomic_mm", "9-DoF holonomic mobile manipulator",
                          "forward", 0.9977, quick, out_dir, amp=0.6, seed=9, cutoff=25.0,
                          duration=3.0 if quick else 10.0)


def _graph_tau(model, log, acc):
    """τ of robots.tree38 by the interconnection graph of its 9 subsystems (thesis ch. 5,
    eqs. 5.8–5.16), in the model's layout."""
    from dqdyn.reproduce.routes import tree38_graph

    g, iq, iv = tree38_graph(model)
    out = np.empty_like(acc)
    out[:, iv] = g.rnea(log["q"][:, iq], log["v"][:, iv], acc[:, iv])
    return out


def case_tree38(quick=False, out_dir=None):
    """38-DoF branched robot of 9 subsystems, inverse dynamics by the *modular* evaluation of the
    interconnection graph ([Silva2022thesis, Table 5.1]: dqNE modular, mean 0.9968), with the monolithic
    ``rnea`` (sv2NE's role), dqGP and rtNE beside it."""
    return _dynamics_case("tree38", "tree38", "38-DoF branched robot (9 subsystems, graph)",
                          "inverse", 0.9968, quick, out_dir, amp=0.6, seed=38, cutoff=10.0,
                          duration=2.0 if quick else 8.0, ours_fn=_graph_tau,
                          main_label="dqNE, modular (interconnection graph)")


def case_tree38_blackbox(quick=False, out_dir=None, *, every: int = 5):
    """Black-box subsystems [Silva2022thesis, §5.1]: subsystem 9 of the 38-DoF robot replaced by the
    wrench MuJoCo transmits at its connection (``cfrc_int``), recorded at every ``every``-th
    sample and interpolated (cubic spline); τ of the other 34 joints from the graph against
    MuJoCo's applied torques (CMC, Table 5.1's pipeline).  Also reported: the interpolation error
    of the wrench and the τ difference to the full (white-box) graph."""
    from dqdyn.composition.interconnection import RecordedWrench
    from dqdyn.reproduce.routes import mujoco_connection_wrench, tree38_graph

    t0 = time.perf_counter()
    model, mj, iq_mj, iv_mj = robots.with_mujoco("tree38")
    seed, amp, cutoff, duration = 38, 0.6, 10.0, (2.0 if quick else 8.0)
    rng = np.random.default_rng(seed)
    q0 = rng.uniform(-0.4, 0.4, model.nq)
    log = run_mujoco(mj, iq_mj, iv_mj, q0, _reference(model, q0, seed, amp), duration,
                     record=lambda mujoco, m_, d_: mujoco_connection_wrench(mujoco, m_, d_,
                                                                            "s9_l1", "s6_l4"))
    g, iq, iv = tree38_graph(model)
    acc = richardson_derivative(log["v"], log["dt"])
    Q, V, A = log["q"][:, iq], log["v"][:, iv], acc[:, iv]
    full = g.evaluate(Q, V, A)
    sl = g.slices("s9")[1]
    keep = np.r_[0:sl.start, sl.stop:g.nv]
    k = np.arange(0, len(log["t"]), every)
    if k[-1] != len(log["t"]) - 1:
        k = np.r_[k, len(log["t"]) - 1]
    rec = RecordedWrench(log["t"][k], log["record"][k], name="s9 (MuJoCo cfrc_int)")
    g.replace("s9", rec)
    tau_bb = g.rnea(Q[:, keep], V[:, keep], A[:, keep], t=log["t"])
    fs = 1.0 / log["dt"]
    ours = butter_lowpass(tau_bb, cutoff, fs)
    theirs = butter_lowpass(log["tau"][:, iv][:, keep], cutoff, fs)
    vals = cmc(ours, theirs)
    z_true = log["record"]
    interp = float(np.abs(rec(log["t"]) - z_true).max() / np.abs(z_true).max())
    mj_vs_dq = float(np.abs(z_true - full.connection_wrenches["s9"]).max() / np.abs(z_true).max())
    dtau = float(np.abs(tau_bb - full.tau[:, keep]).max() / np.abs(full.tau).max())
    s = summary(vals)
    notes = (f"{len(log['t'])} samples; wrench recorded at {fs / every:.0f} Hz (cubic spline): "
             f"interpolation error {interp:.1e} (relative max); MuJoCo vs dqdyn connection wrench "
             f"{mj_vs_dq:.1e} (differentiated q̈); τ of the 34 joints vs the white-box graph "
             f"{dtau:.1e} (relative max)")
    return CaseResult("tree38_blackbox", "38-DoF robot, subsystem 9 a MuJoCo-recorded black box",
                      "τ of 34 joints (inverse dynamics)", vals, 0.9968,
                      bool(s["mean"] >= 0.9968 and s["min"] == s["min"]), time.perf_counter() - t0,
                      [], notes, dict(interpolation_error=interp, wrench_mj_vs_dqdyn=mj_vs_dq,
                                      tau_vs_graph=dtau, duration=duration))


# --------------------------------------------------------------------------- wheeled cases
def _diff_drive_map(phi, tau_l, tau_r, r, w):
    """Wheel torques → generalized forces of the planar base joint ``(f_x, f_y, τ_z)``
    (Fierro & Lewis 1997, ``τ_a = B(q) τ``): each wheel pushes the base along its heading with
    ``τ / r`` at ``± w/2`` to the side, so ``f = (τ_r + τ_l)/r`` along ``(cos φ, sin φ)`` and
    ``τ_z = (τ_r − τ_l) (w/2) / r`` (right wheel on the −y side; rigid, massless wheels)."""
    f = (np.asarray(tau_r) + np.asarray(tau_l)) / r
    return np.stack([f * np.cos(phi), f * np.sin(phi), (np.asarray(tau_r) - np.asarray(tau_l)) * (0.5 * w) / r], -1)


def _unicycle_wheel_torques(vd, wd, v_fwd, omega, r, w, kv, kw):
    """The drive's velocity loop: forward force ``k_v (v_d − v)`` and yaw torque
    ``k_ω (ω_d − ω)``, split into wheel torques by the inverse of `_diff_drive_map`."""
    F, Tz = kv * (vd - v_fwd), kw * (wd - omega)
    return 0.5 * r * (F - Tz / (0.5 * w)), 0.5 * r * (F + Tz / (0.5 * w))  # (τ_l, τ_r)


def pioneer_run(d, duration, dt=1e-3, *, mass=16.0, i33=2.0906):
    """Simulate the Pioneer ([Silva2022thesis, app. A]) with dqdyn's constrained dynamics (rolling without
    slipping at the axle midpoint, [Silva2022, eq. (64)], by Udwadia–Kalaba) under wheel torques from a
    velocity loop tracking sinusoidal unicycle references; returns ``(model, trajectory,
    wheel torques (N, 2))``."""
    from dqdyn.constraints import DifferentialDriveConstraint
    from dqdyn.simulation import simulate

    model = robots.pioneer(d, mass, i33)
    r, w = robots.PIONEER_WHEEL_RADIUS, robots.PIONEER_TRACK
    con = DifferentialDriveConstraint("base_joint", (0.0, 0.0), wheel_radius=r, track_width=w)

    def wheels(t, q, v):
        vd = 0.6 + 0.4 * np.sin(2 * np.pi * 0.5 * t)
        wd = 1.5 * np.sin(2 * np.pi * 0.4 * t) + 0.5
        phi = q[2]
        return _unicycle_wheel_torques(vd, wd, v[0] * np.cos(phi) + v[1] * np.sin(phi), v[2], r, w,
                                       kv=10.0 * mass, kw=10.0 * (i33 + mass * d * d))

    def tau(t, q, v):
        tl, tr = wheels(t, q, v)
        return _diff_drive_map(q[2], tl, tr, r, w)

    traj = simulate(model, np.zeros(3), np.zeros(3), tau, duration, dt, [con])
    tw = np.array([wheels(t, q, v) for t, q, v in zip(traj.t, traj.q, traj.v)])
    return model, traj, tw


def case_fierro_lewis(quick=False, out_dir=None):
    """[Silva2022thesis, app. A, Table A.1]: the Pioneer differential-
    drive base (m = 16 kg, i₃₃ = 2.0906, d = 0.001 m) driven along a trajectory that satisfies
    the rolling constraint.  dqNE's projected generalized forces ``(f_x, f_y, τ_z) =
    𝒩(q, q̇, q̈)`` (base twist of eq. A.8 = dqdyn's planar joint moved to the CoM) against the
    Fierro–Lewis model ``M(q) q̈ + c(q, q̇)`` with the corrected sign for a CoM at ``+d``, on the
    same ``q̈`` (Richardson-differentiated, Butterworth 10 Hz as in [Silva2022thesis, §A.1]).  Also: the printed
    sign (``M₁₃ = +m d sin φ``, ``c₁ = +m d φ̇² cos φ``) at d = 0.001 and at d = 0.15, where it
    loses agreement (the erratum), and the reduced (constrained) equation
    ``Sᵀ(q) (M q̈ + c − B τ) = 0`` on the simulated accelerations (``S`` spans the admissible
    velocities).

    Input: the thesis drove the Pioneer with constant wheel torques (τ_l = 5, τ_r = 8 N m, 2000
    iterations, [Silva2022thesis, §A.1]).  With the axle midpoint at F_r's origin the rolling constraint force
    has no τ_z component, so constant wheel torques make τ_z exactly constant — a waveform
    without variance, for which the CMC is undefined — and the speed grows without bound.  Here
    the wheel torques come from a velocity loop tracking sinusoidal unicycle references
    (`pioneer_run`); wheel radius and track are the Pioneer 3-DX datasheet values."""
    t0 = time.perf_counter()
    dur = 2.0 if quick else 10.0  # 2000 iterations at 1 ms, as the thesis's 2000 ([Silva2022thesis, §A.1])
    cutoff, fs = 10.0, 1000.0
    res, wave = {}, {}
    for d in (0.001, 0.15):
        model, tr, tw = pioneer_run(d, dur)
        acc = richardson_derivative(tr.v, tr.dt)
        ours = rnea(model, tr.q, tr.v, acc)  # one batched call
        M, c = fierro_lewis(16.0, 2.0906, d, tr.q, tr.v)
        Mp, cp = fierro_lewis(16.0, 2.0906, d, tr.q, tr.v, printed=True)
        fl = np.einsum("nij,nj->ni", M, acc) + c
        flp = np.einsum("nij,nj->ni", Mp, acc) + cp
        o, f, fp = (butter_lowpass(x, cutoff, fs) for x in (ours, fl, flp))
        # reduced dynamics on the simulator's own accelerations: Sᵀ(τ_dqNE − B τ_wheels) = 0
        phi = tr.q[:, 2]
        S = np.stack([np.cos(phi), np.sin(phi), np.zeros_like(phi)], 1)
        resid = rnea(model, tr.q, tr.v, tr.a) - _diff_drive_map(phi, tw[:, 0], tw[:, 1],
                                                                 robots.PIONEER_WHEEL_RADIUS,
                                                                 robots.PIONEER_TRACK)
        red = max(np.abs(np.einsum("ni,ni->n", S, resid)).max(), np.abs(resid[:, 2]).max())
        res[d] = dict(corrected=cmc(o, f), printed=cmc(o, fp), max_abs_diff=float(np.abs(ours - fl).max()),
                      reduced_residual=float(red), scale=float(np.abs(ours).max()))
        wave[d] = (tr.t, o, f, fp)
    vals = res[0.001]["corrected"]
    figs = []
    if out_dir is not None:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        t, o, f, fp = wave[0.15]
        fig, axes = plt.subplots(3, 1, figsize=(8, 6), sharex=True)
        from dqdyn.analysis.cmc import format_cmc

        for j, (ax, lab) in enumerate(zip(axes, (r"$f_x$ (N)", r"$f_y$ (N)", r"$\tau_z$ (N·m)"))):
            ax.plot(t, f[:, j], "k-", lw=2.2, alpha=0.45, label="Fierro–Lewis (corrected sign)")
            ax.plot(t, o[:, j], "r--", lw=1.0, label="dqNE")
            ax.plot(t, fp[:, j], "b:", lw=1.2, label="Fierro–Lewis as printed")
            ax.set_ylabel(lab)
            ax.set_title(f"CMC dqNE vs corrected {format_cmc(res[0.15]['corrected'][j])}, vs "
                         f"printed {format_cmc(res[0.15]['printed'][j])}", fontsize=9, loc="right")
        _legend_outside(axes[0], fontsize=7)
        axes[-1].set_xlabel("time t (s)")
        fig.suptitle("Differential-drive base, d = 0.15 m (Silva2022thesis app. A, printed vs corrected sign)", fontsize=10)
        fig.tight_layout()
        path = Path(out_dir) / "fierro_lewis.png"
        fig.savefig(path, dpi=110, bbox_inches="tight")
        plt.close(fig)
        figs.append(str(path))
    s = summary(vals)
    big = res[0.15]
    ok = bool(s["min"] >= 0.9999 and summary(big["corrected"])["min"] >= 0.9999
              and np.nanmean(big["printed"]) < summary(big["corrected"])["mean"] - 1e-4
              and res[0.001]["reduced_residual"] < 1e-8 * (1 + res[0.001]["scale"]))
    fmt = lambda x: ", ".join(f"{v:.6f}" for v in x)  # noqa: E731
    notes = (f"d = 0.001: CMC (f_x, f_y, τ_z) = {fmt(vals)}, max |dqNE − FL| = "
             f"{res[0.001]['max_abs_diff']:.1e}, printed sign {fmt(res[0.001]['printed'])}; "
             f"d = 0.15: corrected {fmt(big['corrected'])}, printed {fmt(big['printed'])}; "
             f"reduced eq. residual {res[0.001]['reduced_residual']:.1e}")
    return CaseResult("fierro_lewis", "Differential-drive base vs Fierro–Lewis ([Silva2022thesis, app. A])",
                      "(f_x, f_y, τ_z), dqNE vs analytic", vals, 1.0, ok, time.perf_counter() - t0,
                      figs, notes, dict(results=res, duration=dur))


def run_wheeled_mm(mj, maps, q0, duration, *, settle=0.3, seed=8, arm_amp=0.5, kv=200.0,
                   kw=20.0, kp=100.0, kd=20.0):
    """Drive the wheeled MuJoCo mobile manipulator (`robots.wheeled_mm_with_mujoco`).

    MuJoCo-side controllers, continuous in time (``mjcb_control``, every RK4 stage): the drive's
    velocity loop (`_unicycle_wheel_torques`) tracks sinusoidal unicycle references
    ``v_d = 0.25 sin(2π 0.3 t)``, ``ω_d = 0.6 sin(2π 0.2 t)`` with the *wheel torques only*; the
    arm joints track sinusoidal velocity references by MuJoCo's computed torque restricted to
    the arm rows.  The robot first settles on its contacts for ``settle`` s (references frozen).
    Returns dict ``t``, ``q`` = (x, y, φ, arm) of the chassis (φ: yaw, unwrapped), ``v`` = (ẋ, ẏ,
    φ̇, arm rates) (φ̇: world-z angular rate), ``tau`` = the applied forces mapped to those
    coordinates (`_diff_drive_map` + arm torques), ``wheel_tau``, and diagnostics
    (``heave`` of the chassis, ``tilt`` angle, ``slip`` = lateral speed of the axle midpoint)."""
    import mujoco

    d = mujoco.MjData(mj)
    r, w = maps.r, maps.w
    x0, y0, phi0 = q0[:3]
    d.qpos[maps.free_q] = [x0, y0, r, np.cos(phi0 / 2), 0.0, 0.0, np.sin(phi0 / 2)]
    d.qpos[maps.arm_q] = q0[3:]
    na = len(maps.arm_v)
    rng = np.random.default_rng(seed)
    A = arm_amp * rng.uniform(0.5, 1.0, na) * rng.choice([-1, 1], na)
    om = 2 * np.pi * rng.uniform(0.2, 0.6, na)
    qa0 = np.array(q0[3:], dtype=float)
    Mf = np.zeros((mj.nv, mj.nv))
    R = np.empty(9)
    ia = np.ix_(maps.arm_v, maps.arm_v)

    def cb(m_, d_):
        t = max(d_.time, 0.0)
        vd, wd = 0.25 * np.sin(2 * np.pi * 0.3 * t), 0.6 * np.sin(2 * np.pi * 0.2 * t)
        mujoco.mju_quat2Mat(R, d_.qpos[maps.free_q[3:]])
        Rm = R.reshape(3, 3)
        v_fwd = Rm[:, 0] @ d_.qvel[maps.free_v[:3]]
        omega = (Rm @ d_.qvel[maps.free_v[3:]])[2]
        tl, tr = _unicycle_wheel_torques(vd, wd, v_fwd, omega, r, w, kv, kw)
        d_.qfrc_applied[:] = 0.0
        d_.qfrc_applied[maps.wheel_v] = (tl, tr)
        qd = qa0 + A * (1 - np.cos(om * t)) / om
        ff = 1.0 if d_.time >= 0 else 0.0  # no feed-forward while settling
        u = ff * A * om * np.cos(om * t) + kp * (qd - d_.qpos[maps.arm_q]) + kd * (A * np.sin(om * t) - d_.qvel[maps.arm_v])
        _full_mass(mujoco, m_, d_, Mf)
        d_.qfrc_applied[maps.arm_v] = Mf[ia] @ u + d_.qfrc_bias[maps.arm_v]

    dt = mj.opt.timestep
    n = int(round(duration / dt))
    nset = int(round(settle / dt))
    T = np.empty(n + 1)
    Q, V, TAU = (np.empty((n + 1, 3 + na)) for _ in range(3))
    TW, DIAG = np.empty((n + 1, 2)), np.empty((n + 1, 3))
    mujoco.set_mjcb_control(cb)
    try:
        d.time = -nset * dt
        for _ in range(nset):
            mujoco.mj_step(mj, d)
        for k in range(n + 1):
            d.time = k * dt
            mujoco.mj_forward(mj, d)  # runs cb: the forces at (t_k, q_k, v_k)
            qf, vf = d.qpos[maps.free_q], d.qvel[maps.free_v]
            Rm = d.xmat[maps.base_body].reshape(3, 3)
            phi = np.arctan2(Rm[1, 0], Rm[0, 0])
            tl, tr = d.qfrc_applied[maps.wheel_v]
            T[k] = d.time
            Q[k] = np.r_[qf[:2], phi, d.qpos[maps.arm_q]]
            V[k] = np.r_[vf[:2], (Rm @ vf[3:])[2], d.qvel[maps.arm_v]]
            TAU[k, :3] = _diff_drive_map(phi, tl, tr, r, w)
            TAU[k, 3:] = d.qfrc_applied[maps.arm_v]
            TW[k] = tl, tr
            # axle midpoint (base frame (ax, 0, 0)) lateral velocity; chassis heave and tilt
            pa = Rm @ np.r_[maps.axle, 0.0]
            v_axle = vf[:3] + np.cross(Rm @ vf[3:], pa)
            DIAG[k] = qf[2] - r, np.arccos(np.clip(Rm[2, 2], -1.0, 1.0)), Rm[:, 1] @ v_axle
            if k < n:
                mujoco.mj_step(mj, d)
                if not np.all(np.isfinite(d.qvel)):
                    from dqdyn.errors import NonFiniteError

                    raise NonFiniteError(f"MuJoCo simulation diverged at t = {d.time:.4g} s")
    finally:
        mujoco.set_mjcb_control(None)
    Q[:, 2] = np.unwrap(Q[:, 2])
    return dict(t=T, q=Q, v=V, tau=TAU, wheel_tau=TW, heave=DIAG[:, 0], tilt=DIAG[:, 1],
                slip=DIAG[:, 2], dt=dt)


def compare_nonholonomic(model, cons, log, cutoff=25.0, constrained=True):
    """dqdyn's constrained forward dynamics (Udwadia–Kalaba, [Silva2022, eq. (63)] with the rolling
    constraint eq. (64); one batched call) at the logged states and mapped forces, against the
    Richardson-differentiated MuJoCo velocities; both Butterworth-filtered; CMC per coordinate.
    ``constrained=False``: plain ABA (no rolling constraint) — a negative control."""
    from dqdyn.constraints.dynamics import constrained_forward_dynamics

    acc = richardson_derivative(log["v"], log["dt"])
    if constrained:
        ours = constrained_forward_dynamics(model, log["q"], log["v"], log["tau"], cons).qdd
    else:
        ours = aba(model, log["q"], log["v"], log["tau"])
    fs = 1.0 / log["dt"]
    o, th = butter_lowpass(ours, cutoff, fs), butter_lowpass(acc, cutoff, fs)
    return cmc(o, th), o, th


def case_nonholonomic(quick=False, out_dir=None, *, wheel_mass=0.1, duration=None):
    """[Silva2022, Table 2] (dqGP + Udwadia–Kalaba: mean 0.9839): the 8-DoF nonholonomic mobile
    manipulator (`dqdyn.constraints.mobile_manipulator`: planar base (x, y, φ) + 5-DoF arm,
    rolling constraint at the axle (−0.12, 0)) against MuJoCo with real wheels (free-joint
    chassis, two driven wheels rolling by friction, frictionless casters;
    `robots.wheeled_mm_mjcf`).  MuJoCo's wheel torques are mapped to the base's generalized
    forces by the wheel geometry (`_diff_drive_map`).  The paper's figure is reached if the
    wheels roll without slipping and are light: the MuJoCo model differs from dqdyn's by the
    wheels' spin inertia, the contact compliance and micro-slip (reported)."""
    t0 = time.perf_counter()
    dur = duration if duration is not None else (3.0 if quick else 10.0)
    cutoff = 25.0
    model, cons, q0, mj, maps = robots.wheeled_mm_with_mujoco(wheel_mass=wheel_mass)
    log = run_wheeled_mm(mj, maps, q0, dur)
    vals, ours, theirs = compare_nonholonomic(model, cons, log, cutoff)
    free, _, _ = compare_nonholonomic(model, cons, log, cutoff, constrained=False)
    r, w = maps.r, maps.w
    Is = 0.5 * wheel_mass * r * r
    extra = dict(duration=dur, wheel_mass=wheel_mass, max_slip=float(np.abs(log["slip"]).max()),
                 max_heave=float(np.abs(log["heave"]).max()), max_tilt=float(log["tilt"].max()),
                 unconstrained_cmc=free, extra_mass=2 * Is / r ** 2,
                 extra_yaw_inertia=Is * w * w / (2 * r * r),
                 constraint_residual=float(np.abs(
                     -np.sin(log["q"][:, 2]) * log["v"][:, 0] + np.cos(log["q"][:, 2]) * log["v"][:, 1]
                     + cons[0].axle_offset[0] * log["v"][:, 2]).max()))
    figs = []
    if out_dir is not None:
        figs.append(_plot_waveforms(Path(out_dir) / "nonholonomic_mm.png", log["t"], ours, theirs,
                                    vals, r"$\ddot q$", "8-DoF nonholonomic mobile manipulator "
                                    "(q = x, y, φ, arm): dqdyn (Udwadia–Kalaba) vs MuJoCo with wheels",
                                    joints=[0, 1, 2, 3, 4, 6],
                                    units=_units(model, "forward")))
    s = summary(vals)
    notes = (f"{len(log['t'])} samples at {1 / log['dt']:.0f} Hz, Butterworth 6th order {cutoff:g} Hz; "
             f"wheels {wheel_mass:g} kg (extra {extra['extra_mass']:.2g} kg along the heading); max "
             f"lateral slip {extra['max_slip']:.1e} m/s, tilt {extra['max_tilt']:.1e} rad; without "
             f"the constraint (ABA) mean CMC {np.nanmean(free):.4f}")
    return CaseResult("nonholonomic_mm", "8-DoF nonholonomic mobile manipulator (wheels)",
                      "q̈ (constrained forward dynamics)", vals, 0.9839,
                      bool(s["mean"] >= 0.9839 and s["min"] == s["min"]),
                      time.perf_counter() - t0, figs, notes, extra)


# ---------------------------------------------------------------------------- control cases
#: [Silva2022thesis, §B.1.2]: start and goal end-effector positions (m)
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
        a1.semilogy(log["t"], err, color="k", lw=1.2)
        a1.set_ylabel(r"$\|p - p_d\|$ (m)")
        a1.set_title("Wrench control ([Silva2022thesis, app. B], eq. B.3): end-effector error", fontsize=10)
        for j in range(log["tau"].shape[1]):
            a2.plot(log["t"], log["tau"][:, j], lw=1.1, label=f"joint {j + 1}")
        a2.set_ylabel(r"joint torque $\tau$ (N·m)")
        a2.set_xlabel("time t (s)")
        _legend_outside(a2)
        a1.grid(alpha=0.3)
        a2.grid(alpha=0.3)
        fig.tight_layout()
        path = Path(out_dir) / "wrench_control.png"
        fig.savefig(path, dpi=110, bbox_inches="tight")
        plt.close(fig)
        figs.append(str(path))
    ok = ef < 1e-3 * e0
    return CaseResult("wrench", "Wrench control, 6-DoF arm ([Silva2022thesis, app. B])", "‖p − p_d‖ (m)",
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
        ax.set_xlabel("time t (s)")
        ax.set_ylabel(r"tracking error $\|q_d - q\|$ (rad)")
        ax.set_title("7-DoF arm tracking a sinusoidal reference (MuJoCo plant)", fontsize=10)
        ax.grid(alpha=0.3, which="both")
        _legend_outside(ax)
        fig.tight_layout()
        path = Path(out_dir) / "tracking.png"
        fig.savefig(path, dpi=110, bbox_inches="tight")
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
def case_elastic(quick=False, out_dir=None):
    """Elastic joints and symbolic dynamics [Mladenova, §7–8]: the logic lives in `dqdyn.reproduce.elastic`."""
    from dqdyn.reproduce.elastic import case_elastic as _case

    return _case(quick=quick, out_dir=out_dir)


CASES = {
    "jaco": (case_jaco, "cmc"),
    "serial50": (case_serial50, "cmc"),
    "wrench": (case_wrench, "control"),
    "tracking": (case_tracking, "control"),
    "holonomic_mm": (case_holonomic, "cmc"),
    "tree38": (case_tree38, "cmc"),
    "tree38_blackbox": (case_tree38_blackbox, "cmc"),
    "dqel": (case_dqel, "table"),
    "opcounts": (case_opcounts, "table"),
    "fierro_lewis": (case_fierro_lewis, "cmc"),
    "nonholonomic_mm": (case_nonholonomic, "cmc"),
    "elastic": (case_elastic, "control"),
}

__all__ = ["CaseResult", "CASES", "run_mujoco", "compare", "case_jaco", "case_serial50",
           "case_holonomic", "case_tree38", "case_tree38_blackbox",
           "case_fierro_lewis", "case_nonholonomic", "pioneer_run", "run_wheeled_mm",
           "compare_nonholonomic", "case_wrench", "case_tracking", "ik_position",
           "JACO_START", "JACO_GOAL"]
