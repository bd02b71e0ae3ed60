"""``simulate``: integrate a model's forward dynamics under a torque or a controller."""

from __future__ import annotations

import sys

import numpy as np

from dqdyn._engine.checks import real_scalar
from dqdyn.dynamics.aba import aba
from dqdyn.errors import DivergenceError, DqdynError, ModelError, NonFiniteError, ShapeError, SingularError
from dqdyn.kinematics.configuration import normalize_configuration
from dqdyn.simulation.integrators import INTEGRATORS
from dqdyn.simulation.trajectory import Trajectory


def _progress(enabled, total, desc):
    from dqdyn._optional import available

    if not enabled or not available("rich"):  # the progress bar is the extra ``cli``'s
        return None
    from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn

    p = Progress(TextColumn(desc), BarColumn(), TextColumn("{task.percentage:>3.0f}%"),
                 TimeRemainingColumn(), transient=True)
    p.start()
    p._dq_task = p.add_task(desc, total=total)
    return p


#: the largest increment (rad) of a rotational coordinate in one step with ``substeps="auto"``
MAX_ROTATION_STEP = 0.05
#: the most steps ``substeps="auto"`` splits one ``dt`` into
MAX_SUBSTEPS = 64


def simulate(model, q0, v0, tau_or_controller=None, duration: float = 1.0, dt: float = 1e-3,
             constraints=(), *, integrator: str = "rk4", baumgarte=None, project: bool = True,
             record_every: int = 1, progress: bool | None = None,
             max_speed: float = 1e6, substeps="auto", monitor=None,
             energy_tolerance: float = 1e-3, monitor_every: int = 10,
             constraint_tolerance: float = 1e-6) -> Trajectory:
    """Simulate ``model`` from ``(q0, v0)`` for ``duration`` seconds with step ``dt``.

    ``tau_or_controller``: ``None`` (zero torque), a constant ``(nv,)`` array, or a callable
    ``tau(t, q, v)`` (e.g. `JointPD`).  ``integrator``: ``"rk4"``
    (Runge–Kutta–Munthe-Kaas, 4th order on the manifold, the default), ``"midpoint"`` (implicit
    midpoint, symplectic) or ``"euler"`` (semi-implicit, 1st order).
    ``constraints``: constraint objects (``dqdyn.constraints``); accelerations then come from
    `constrained_forward_dynamics` (Udwadia–Kalaba
    [Udwadia1992], [Silva2022, eqs. (62)–(64)]) and, with ``project=True``, each step ends with
    `project_state` (drift-free); ``baumgarte=(α, β)`` adds
    Baumgarte stabilisation.  Without constraints the free dynamics is `aba`
    (for a model with mimic joints that ``aba`` does not take, ``M(q) a = τ − h(q, v)`` solved
    with `solve_mass_matrix`).

    Divergence: a step that produces a non-finite state, a speed above ``max_speed`` (rad/s or
    m/s; no robot moves at 10⁶), or a singular inertia after the first step raises
    `DivergenceError` "diverged at t = …; reduce dt or the gains".

    Steps: ``substeps="auto"`` (default) splits each ``dt`` into ``n`` equal steps, with ``n``
    the smallest integer that keeps every rotational coordinate's increment per step at most
    `MAX_ROTATION_STEP` rad (``n = ⌈dt · max|v_rot| / 0.05⌉``, at most
    `MAX_SUBSTEPS`; ``n = 1`` below 50 rad/s at ``dt = 1e-3``): a fast whip of a long
    chain stays resolved while ordinary motion runs at ``dt``.  An integer fixes ``n``;
    ``substeps=1`` is a plain fixed step.  ``meta["steps"]`` counts the steps taken.

    Energy monitor (`dqdyn.simulation.monitor`): a passive or conservative run — no
    torque, a constant torque on a model without quaternion joints, or a controller with a
    ``potential(q)`` method (``τ = −∂V/∂q``) — is checked every ``monitor_every`` steps for
    the relative energy error ``|E(t) − E(0)| / max T`` (``E`` = kinetic + gravitational +
    the input's potential, ``T`` kinetic); beyond ``energy_tolerance`` it warns with
    `EnergyDriftWarning` naming the integrator, ``dt``, the time and what
    to use instead (``monitor="raise"``: `EnergyDriftError`).  A
    constrained run is also checked for a constraint position error above
    ``constraint_tolerance``.  ``monitor``: ``None`` (default: on where the balance applies),
    ``"warn"``, ``"raise"``, ``"off"``.  The largest errors seen are in
    ``meta["energy_error"]`` / ``meta["constraint_error"]``.  With the defaults (RK4,
    ``dt = 1e-3``, automatic substeps) 10 s of passive motion of the bundled models and of
    example-robot-data's Panda and xArm7 stay below 1e-4 (the docs' simulation page lists the
    figures).

    ``progress``: show a rich progress bar (default: for runs of ≥ 20 000 steps when stderr is a
    terminal).  Returns a `Trajectory` sampled every ``record_every`` steps."""
    from dqdyn.simulation.monitor import make_monitor

    if not isinstance(integrator, str) or integrator not in INTEGRATORS:
        raise DqdynError(f"integrator must be one of {sorted(INTEGRATORS)}, got {integrator!r}")
    step = INTEGRATORS[integrator]
    dt = real_scalar(dt, "dt", "a finite positive time step (s)")
    if not dt > 0:
        raise DqdynError(f"dt must be a finite positive time step (s), got {dt!r}")
    duration = real_scalar(duration, "duration", "a finite duration >= 0 (s)")
    if not duration >= 0:
        raise DqdynError(f"duration must be a finite duration >= 0 (s), got {duration!r}")
    max_speed = real_scalar(max_speed, "max_speed", "a positive speed bound", finite=False)
    if isinstance(record_every, (bool, np.bool_)) or not isinstance(record_every, (int, np.integer)) \
            or record_every < 1:
        raise DqdynError(f"record_every must be an integer >= 1, got {record_every!r}")
    record_every = int(record_every)
    if isinstance(substeps, str) and substeps == "auto":
        auto = True
        nsub = 1
    elif isinstance(substeps, (int, np.integer)) and not isinstance(substeps, (bool, np.bool_)) \
            and substeps >= 1:
        auto, nsub = False, int(substeps)
    else:
        raise DqdynError(f"substeps must be 'auto' or an integer >= 1, got {substeps!r}")
    q = np.array(q0, dtype=float)
    v = np.array(v0, dtype=float)
    if q.shape != (model.nq,):
        raise ShapeError(f"q0 must have shape ({model.nq},), got {q.shape}")
    if v.shape != (model.nv,):
        raise ShapeError(f"v0 must have shape ({model.nv},), got {v.shape}")
    if not (np.all(np.isfinite(q)) and np.all(np.isfinite(v))):
        raise NonFiniteError("q0 and v0 must be finite")
    if callable(tau_or_controller):
        ctrl = tau_or_controller
    else:
        tc = np.zeros(model.nv) if tau_or_controller is None else np.array(tau_or_controller, float)
        if tc.shape != (model.nv,):
            raise ShapeError(f"tau_or_controller must be callable or an ({model.nv},) array, "
                             f"got shape {tc.shape}")
        ctrl = lambda t, q, v: tc  # noqa: E731
    cons = list(constraints) if isinstance(constraints, (list, tuple)) else [constraints]
    mon = make_monitor(model, q, tau_or_controller, monitor, tolerance=energy_tolerance,
                       every=monitor_every, integrator=integrator, dt=dt, constraints=cons,
                       baumgarte=baumgarte, constraint_tolerance=constraint_tolerance)
    if auto:
        from dqdyn.simulation.defaults import coordinate_kinds

        rot = coordinate_kinds(model)[0]
    if cons:
        from dqdyn.constraints.dynamics import constrained_forward_dynamics, project_state

        def accel(t, q, v):
            tau = np.asarray(ctrl(t, q, v), dtype=float)
            return constrained_forward_dynamics(model, q, v, tau, cons, baumgarte=baumgarte).qdd, tau

        if project:
            q, v = project_state(model, q, v, cons)
    else:
        def accel(t, q, v):
            tau = np.asarray(ctrl(t, q, v), dtype=float)
            return aba(model, q, v, tau), tau

        if model.mimic_joints:
            try:
                aba(model, q, v, np.zeros(model.nv))
            except ModelError:  # aba refuses mimic joints: the dense route
                from dqdyn.dynamics.lagrange import nonlinear_effects, solve_mass_matrix

                def accel(t, q, v):
                    tau = np.asarray(ctrl(t, q, v), dtype=float)
                    return solve_mass_matrix(model, q, tau - nonlinear_effects(model, q, v)), tau

    n = int(round(duration / dt))
    quat = model.has_quaternion_joints
    ts, qs, vs, as_, taus = [], [], [], [], []
    if progress is None:
        progress = n >= 20_000 and sys.stderr.isatty()
    bar = _progress(progress, n, f"simulating {model.name}")
    t = 0.0
    steps = 0
    try:
        for k in range(n + 1):
            if mon is not None:
                mon.sample(k, t, q, v)
            if k == n:  # final state: evaluate a, tau there for the record
                a, tau = accel(t, q, v)
                ts.append(t); qs.append(q); vs.append(v); as_.append(a); taus.append(tau)  # noqa: E702
                break
            if auto:
                w = float(np.abs(v[rot]).max(initial=0.0)) * dt / MAX_ROTATION_STEP
                nsub = min(MAX_SUBSTEPS, max(1, int(np.ceil(w))))
            try:
                h = dt / nsub
                q1, v1, a, tau = step(model, accel, t, q, v, h)
                for j in range(1, nsub):
                    if quat:
                        q1 = normalize_configuration(model, q1)
                    q1, v1 = step(model, accel, t + j * h, q1, v1, h)[:2]
                steps += nsub
            except (SingularError, NonFiniteError) as e:
                if k == 0 or isinstance(e, DivergenceError):
                    raise  # the initial state itself: a genuine error of the model or input
                raise DivergenceError(
                    f"simulation diverged at t = {t:.6g} s (the state blew up: {e}); reduce dt "
                    f"(now {dt:g}) or the gains") from None
            if not (np.all(np.isfinite(q1)) and np.all(np.isfinite(v1))):
                raise DivergenceError(f"simulation diverged at t = {t:.6g} s (non-finite state); "
                                      f"reduce dt (now {dt:g}) or the gains")
            if np.abs(v1).max(initial=0.0) > max_speed:
                i = int(np.argmax(np.abs(v1)))
                raise DivergenceError(
                    f"simulation diverged at t = {t:.6g} s (|v[{i}]| = {abs(v1[i]):.3g} > "
                    f"max_speed = {max_speed:g}); reduce dt (now {dt:g}) or the gains")
            if k % record_every == 0:
                ts.append(t); qs.append(q); vs.append(v); as_.append(a); taus.append(tau)  # noqa: E702
            if quat:
                q1 = normalize_configuration(model, q1)
            if cons and project:
                q1, v1 = project_state(model, q1, v1, cons)
            q, v, t = q1, v1, (k + 1) * dt
            if bar is not None and k % 200 == 0:
                bar.update(bar._dq_task, completed=k)
        summary = mon.finish() if mon is not None else {}
    finally:
        if bar is not None:
            bar.stop()
    meta = dict(model=model.name, integrator=integrator, dt=float(dt), steps=int(steps))
    meta.update(summary)
    return Trajectory(np.array(ts), np.array(qs), np.array(vs), np.array(as_), np.array(taus), meta)


__all__ = ["simulate", "MAX_ROTATION_STEP", "MAX_SUBSTEPS"]
