"""Compile every kernel of dqdyn once, into the kernel cache (see `dqdyn._engine.jit`).

``pip install`` runs this (``setup.py``), so the first call after installing loads compiled code
instead of compiling it; ``dqdyn precompile`` runs it again by hand — after installing a wheel
built on another CPU, in a container image, on each kind of machine of a cluster.  The work is
split into groups that run in parallel worker processes, each exercising the public functions
of one area on a small tree with every joint type (one state, a batch, and the general paths of
lists and non-contiguous arrays), which compiles exactly the specialisations a user's calls need.

Before compiling, it unpacks the portable kernels shipped with the source
(``dqdyn/_kernels_portable-<python>.tar.xz``: every kernel compiled for any x86-64 CPU with AVX2 and FMA,
for one CPython and one numba) when they fit this machine, so that on such a machine it compiles
only what they lack (kernels edited since they were made).  ``--portable`` makes that archive
again from the current source (maintainers, after editing kernels).

    python -m dqdyn._engine.precompile [--jobs N] [--group NAME ...] [--quiet] [--portable]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
import warnings


def _tree():
    import dqdyn  # noqa: F401  (loads every kernel module)

    return dqdyn.random_tree(9, seed=11)  # every joint type


def _mimic_chain():
    """Three revolute links, the third a mimic of the first (Panda's fingers are one): the
    derivatives' compiled chain rule."""
    import numpy as np

    import dqdyn  # noqa: F401  (loads every kernel module)

    b = dqdyn.ModelBuilder("mimic3")
    I3 = 0.01 * np.eye(3)
    b.add_body("a", joint="revolute", mass=1.0, inertia=I3, joint_name="ja", axis=[0, 0, 1], com=[0.1, 0, 0])
    b.add_body("b", "a", "revolute", mass=1.0, inertia=I3, axis=[0, 1, 0], com=[0.1, 0, 0])
    b.add_body("c", "b", "revolute", mass=1.0, inertia=I3, axis=[0, 1, 0], com=[0.1, 0, 0],
               mimic=("ja", 0.5, 0.1))
    return b.build()


def _states(m, n=3, seed=0):
    import numpy as np

    import dqdyn  # noqa: F401  (loads every kernel module)

    rng = np.random.default_rng(seed)
    Q = dqdyn.random_configuration(m, size=n, seed=seed)
    return Q, rng.normal(size=(n, m.nv)), rng.normal(size=(n, m.nv))


def _big(m, *arrays):
    """The rows of ``arrays`` repeated into a batch large enough for the thread pool (a smaller
    one runs state by state in the call gate, or in the batch kernel's serial twin)."""
    import numpy as np

    from dqdyn._engine.batching import SERIAL_WORK

    n = SERIAL_WORK // (m.nbodies + 1) + 1
    return [np.ascontiguousarray(np.resize(x, (n,) + x.shape[1:])) for x in arrays]


def _each_form(m, fn, *arrays):
    """``fn`` on one state (plain vectors: the call gate), a small batch (the gate), a large one
    (the parallel batch kernel), a small batch of lists (the serial twin), strided views."""
    fn(*[x[0].copy() for x in arrays])
    fn(*arrays)
    fn(*_big(m, *arrays))
    fn(*[x.tolist() for x in arrays])
    fn(*[x[0].tolist() for x in arrays])
    fn(*[x[:, ::1][0] if x.ndim == 2 else x for x in arrays])


def _entries(module: str, *pairs) -> None:
    """Compile single-state entry kernels (``(entry, signature)`` names in ``module``): the fast
    path of a call given ``out=``, the one a wrong length falls back to before naming the
    argument, and every single-state call where the C call gate is not built (each armed on
    first use, see `dqdyn._engine.gate.armed_call`; not reached by the calls above
    where the gate is)."""
    import importlib

    mod = importlib.import_module(module)
    for entry, sig in pairs:
        d, sig = getattr(mod, entry), tuple(getattr(mod, sig))
        if sig not in d.overloads:  # (one armed by a call above has its compilation disabled)
            d.disable_compile(False)
            d.compile(sig)


def group_dynamics():
    import numpy as np

    import dqdyn  # noqa: F401  (loads every kernel module)

    for m in (_tree(), dqdyn.serial_chain(3)):
        Q, V, A = _states(m)
        fext = np.zeros((m.nbodies + 1, 6))
        _each_form(m, lambda q, v, a: dqdyn.rnea(m, q, v, a), Q, V, A)
        dqdyn.rnea(m, Q[0], V[0], A[0], fext)
        dqdyn.rnea(m, Q, V, A, np.broadcast_to(fext, (3,) + fext.shape))
        _each_form(m, lambda q, v: dqdyn.nonlinear_effects(m, q, v), Q, V)
        _each_form(m, lambda q: dqdyn.gravity(m, q), Q)
        _each_form(m, lambda q: dqdyn.mass_matrix(m, q), Q)
        dqdyn.mass_matrix(m, Q[0], method="newton_euler")
        _each_form(m, lambda q, v: dqdyn.coriolis_matrix(m, q, v), Q, V)
        dqdyn.newton_euler(m, Q[0], V[0], A[0])
        dqdyn.newton_euler(m, Q, V, A)
        dqdyn.newton_euler(m, *_big(m, Q, V, A))
        dqdyn.solve_mass_matrix(m, Q[0], A[0])
        dqdyn.solve_mass_matrix(m, Q, A)
        dqdyn.kinetic_energy(m, Q[0], V[0])
        dqdyn.potential_energy(m, Q[0])
        dqdyn.center_of_mass(m, Q[0])
    # the algebra's batch kernels (`dqdyn.algebra.dualquat`): exp and log of one pose, of a batch
    x = dqdyn.algebra.dualquat.exp(np.zeros(6))
    dqdyn.algebra.dualquat.log(x)
    dqdyn.algebra.dualquat.log(np.stack([x, x]))
    # the lanes' serial twin (`_each_form`'s large batch: the parallel), and both on a floating base
    for m in (dqdyn.serial_chain(3), dqdyn.random_tree(4, ("free", "revolute"), seed=0)):
        dqdyn.rnea(m, *[x.tolist() for x in _states(m, n=16)])  # (a list passes the gate by)
        dqdyn.mass_matrix(m, _states(m, n=16)[0].tolist())
    dqdyn.rnea(m, *_big(m, *_states(m)))
    _entries("dqdyn.dynamics.newton_euler", ("rnea_entry", "RNEA_SIG"))
    _entries("dqdyn.dynamics.lagrange", ("crba_entry", "CRBA_SIG"), ("gravity_entry", "GRAVITY_SIG"))
    _entries("dqdyn.dynamics.coriolis", ("coriolis_entry", "CORIOLIS_SIG"))


def group_forward():
    import numpy as np

    import dqdyn  # noqa: F401  (loads every kernel module)

    for m in (_tree(), dqdyn.serial_chain(3)):
        Q, V, T = _states(m)
        _each_form(m, lambda q, v, t: dqdyn.aba(m, q, v, t), Q, V, T)
        dqdyn.aba(m, Q[0], V[0], T[0], np.zeros((m.nbodies + 1, 6)))
        _each_form(m, lambda q: dqdyn.mass_matrix_inverse(m, q), Q)
        presc = np.arange(m.nv) % 2 == 0
        dqdyn.hybrid_dynamics(m, Q[0], V[0], T[0], T[0], presc)
        dqdyn.hybrid_dynamics(m, Q, V, T, T, presc)
        Ac = np.eye(m.nv)[1:2]  # (DoF 1 is free in ``presc``)
        dqdyn.constrained_aba(m, Q[0], V[0], T[0], Ac, np.zeros(1))
        dqdyn.constrained_hybrid_dynamics(m, Q[0], V[0], T[0], T[0], presc, Ac, np.zeros(1))
    m = dqdyn.serial_chain(3)  # a batch of LANES lists passes the gate by: the lanes' serial twin
    dqdyn.aba(m, *[x.tolist() for x in _states(m, n=16)])
    m = _mimic_chain()  # aba's compiled mimic path (aba_mimic_entry) and the batches' route
    Q, V, T = _states(m)
    _each_form(m, lambda q, v, t: dqdyn.aba(m, q, v, t), Q, V, T)
    _each_form(m, lambda q: dqdyn.mass_matrix_inverse(m, q), Q)
    _entries("dqdyn.dynamics.aba", ("aba_entry", "ABA_SIG"))
    _entries("dqdyn.dynamics.hybrid", ("hybrid_entry", "HYBRID_SIG"))
    _entries("dqdyn.dynamics.minverse", ("minv_entry", "MINV_SIG"))


def group_derivatives():
    import numpy as np

    import dqdyn  # noqa: F401  (loads every kernel module)

    m = _mimic_chain()
    Q, V, A = _states(m)
    for f in (dqdyn.rnea_derivatives, dqdyn.aba_derivatives):
        f(m, Q[0].copy(), V[0].copy(), A[0].copy())
        f(m, Q, V, A)
    for m in (_tree(), dqdyn.serial_chain(3)):
        Q, V, A = _states(m)
        _each_form(m, lambda q, v, a: dqdyn.rnea_derivatives(m, q, v, a), Q, V, A)
        dqdyn.rnea_derivatives(m, Q[0], V[0], A[0], np.zeros((m.nbodies + 1, 6)))
        _each_form(m, lambda q, v, t: dqdyn.aba_derivatives(m, q, v, t), Q, V, A)
        dqdyn.hybrid_dynamics_derivatives(m, Q[0], V[0], A[0], A[0], np.arange(m.nv) % 2 == 0)
        dqdyn.joint_torque_regressor(m, Q[0], V[0], A[0])
        dqdyn.joint_torque_regressor(m, Q, V, A)
        dqdyn.inertial_parameters(m)


def group_kinematics():

    import dqdyn  # noqa: F401  (loads every kernel module)

    for m in (_tree(), dqdyn.serial_chain(3)):
        Q, V, A = _states(m)
        f = m.frame_names[-1]
        _each_form(m, lambda q: dqdyn.forward_kinematics(m, q), Q)
        _each_form(m, lambda q: dqdyn.frame_pose(m, q, f), Q)
        dqdyn.frame_poses(m, Q[0])
        dqdyn.com_poses(m, Q[0])
        for frame in ("body", "spatial"):  # (one state through the gate, batches, lists, views)
            _each_form(m, lambda q, v, fr=frame: dqdyn.body_twists(m, q, v, fr), Q, V)
        _each_form(m, lambda q: dqdyn.joint_jacobians(m, q), Q)
        for frame in ("body", "spatial", "world_aligned"):
            _each_form(m, lambda q: dqdyn.twist_jacobian(m, q, f, frame), Q)
            dqdyn.twist_jacobian(m, Q[0], m.nbodies, frame)
            _each_form(m, lambda q, v, fr=frame: dqdyn.jacobian_time_derivative(m, q, v, f, fr), Q, V)
            _each_form(m, lambda q, v, fr=frame: dqdyn.jacobian_dot_times_v(m, q, v, f, fr), Q, V)
        dqdyn.pose_jacobian(m, Q[0], f)
        dqdyn.pose_jacobian(m, Q, f)
        dqdyn.integrate(m, Q[0], V[0], 0.1)
        dqdyn.integrate(m, Q, V, 0.1)
        dqdyn.difference(m, Q[0], Q[1])
        dqdyn.difference(m, Q, Q[::-1].copy())
        dqdyn.normalize_configuration(m, Q[0])
        dqdyn.normalize_configuration(m, Q)
        dqdyn.random_configuration(m, seed=0)
        dqdyn.neutral(m)
        dqdyn.tangent_bracket(m, V[0], A[0])
    m = dqdyn.serial_chain(3)  # a batch of LANES lists passes the gate by: the fk lanes' serial twin
    dqdyn.forward_kinematics(m, _states(m, n=16)[0].tolist())
    _entries("dqdyn.kinematics.forward", ("fk_entry", "FK_SIG"), ("frame_pose_entry", "FRAME_POSE_SIG"))
    _entries("dqdyn.kinematics.jacobians", ("jacobian_entry", "JACOBIAN_SIG"),
             ("joint_jacobians_entry", "JOINT_JACOBIANS_SIG"))
    _entries("dqdyn.kinematics.configuration", ("integrate_entry", "INTEGRATE_SIG"),
             ("difference_entry", "DIFFERENCE_SIG"))


def group_models():
    """The bundled robots and the Euler–Lagrange / Gauss / dqEL variants the papers use."""

    import dqdyn  # noqa: F401  (loads every kernel module)

    for name in dqdyn.bundled_models():
        m = dqdyn.load_bundled(name)
        Q, V, A = _states(m, 2)
        dqdyn.rnea(m, Q[0], V[0], A[0])
        dqdyn.rnea(m, Q, V, A)
        dqdyn.aba(m, Q[0], V[0], A[0])
        dqdyn.mass_matrix(m, Q[0])
    m = dqdyn.serial_chain(3)
    Q, V, A = _states(m)
    dqdyn.gauss_model(m, Q[0], V[0])
    dqdyn.gauss_model(m, Q, V)
    dqdyn.dq_euler_lagrange(m, Q[0], V[0])


def group_constraints():
    import numpy as np

    import dqdyn  # noqa: F401  (loads every kernel module)
    from dqdyn import constraints as C
    from dqdyn._engine.batching import SERIAL_WORK

    for build in (C.mobile_manipulator, C.four_bar):
        m, cons, q0 = build()
        Q = np.stack([q0, q0])
        rng = np.random.default_rng(0)
        V, T = rng.normal(size=(2, m.nv)), rng.normal(size=(2, m.nv))
        for method in ("crba", "gauss"):  # (one state of vectors: the compiled one-call path)
            dqdyn.constrained_forward_dynamics(m, Q[0], V[0], T[0], cons, dynamics=method)
        # one state the gate declines (a list): the one-call kernel's batch, serially
        dqdyn.constrained_forward_dynamics(m, Q[0].tolist(), V[0], T[0], cons)
        n = SERIAL_WORK // m.mi.shape[0] + 1  # a batch larger than the gate's: in parallel
        big = [np.repeat(X[:1], n, axis=0) for X in (Q, V, T)]
        try:  # batches, where the constraint kind supports them
            dqdyn.constrained_forward_dynamics(m, Q, V, T, cons)
            dqdyn.constrained_forward_dynamics(m, *big, cons)
            dqdyn.constrained_forward_dynamics(m, Q, V, T, cons, dynamics="gauss")  # the general path
        except (dqdyn.errors.DqdynError, ValueError):
            pass
        dqdyn.constraint_errors(m, Q[0], V[0], cons)
        dqdyn.project_state(m, Q[0] + 1e-3, V[0], cons)


def group_contact():
    """The compiled contact and impulse dynamics (`dqdyn.contact._kernels`) and centroidal
    quantities: one state, a small
    batch (the batch kernel's serial twin) and one above the serial threshold (the thread pool),
    on a floating base with two legs held by a 3D and a 6D contact (Baumgarte gains on one); the
    contact- and centroidal-dynamics derivatives' compiled steps."""
    import numpy as np

    import dqdyn
    from dqdyn._engine.batching import SERIAL_WORK

    b = dqdyn.ModelBuilder("biped")
    I3 = 0.01 * np.eye(3)
    b.add_body("base", joint="free", mass=5.0, inertia=0.1 * np.eye(3), joint_name="root")
    for side, y in (("l", 0.1), ("r", -0.1)):
        b.add_body(f"{side}_hip", "base", "revolute", mass=0.5, inertia=I3, axis=[1, 0, 0],
                   xyz=[0, y, 0])
        b.add_body(f"{side}_thigh", f"{side}_hip", "revolute", mass=1.0, inertia=I3, axis=[0, 1, 0],
                   com=[0, 0, -0.2])
        b.add_body(f"{side}_shin", f"{side}_thigh", "revolute", mass=1.0, inertia=I3, axis=[0, 1, 0],
                   com=[0, 0, -0.2], xyz=[0, 0, -0.4])
    m = b.build()
    feet = [dqdyn.PointContact((m.body_index("l_shin"), [0, 0, -0.4]), kd=2.0),
            dqdyn.FrameContact((m.body_index("r_shin"), [0, 0, -0.4]))]
    Q, V, T = _states(m, 3)
    n = SERIAL_WORK // (m.nbodies + 1) + 1
    big = [np.ascontiguousarray(np.resize(X, (n,) + X.shape[1:])) for X in (Q, V, T)]
    for proximal in (1e-8, None):
        # (a batch of lists passes the gate by: the batch kernel's serial twin)
        for args in ((Q[0], V[0], T[0]), (Q, V, T), (Q.tolist(), V, T), big):
            dqdyn.contact_dynamics(m, *args, feet, proximal=proximal)
            dqdyn.impulse_dynamics(m, *args[:2], feet, 0.5, proximal=proximal)
    # the contact-dynamics derivatives (`dqdyn.contact._derivative_kernels`): the compiled route,
    # one state, the serial batch twin and the parallel batch (a frame contact with kp and a
    # target too); the hung model's route (a planar joint) and its block elimination
    held = [dqdyn.FrameContact(feet[1].frame, kp=1.0, target=np.eye(4))]
    for args in ((Q[0], V[0], T[0]), (Q, V, T), (Q.tolist(), V, T), big):
        dqdyn.contact_dynamics_derivatives(m, *args, feet)
        dqdyn.contact_dynamics_derivatives(m, *args, held)
    pb = dqdyn.ModelBuilder("planar")
    pb.add_body("base", joint="planar", mass=2.0, inertia=0.1 * np.eye(3))
    pb.add_body("arm", "base", "spherical", mass=1.0, inertia=I3, com=[0, 0, -0.2])
    pb.add_body("fore", "arm", "revolute", mass=1.0, inertia=I3, axis=[0, 1, 0], com=[0, 0, -0.2],
                xyz=[0, 0, -0.4])
    pl = pb.build()
    Qp, Vp, Tp = _states(pl, 3)
    dqdyn.contact_dynamics_derivatives(pl, Qp[0], Vp[0], Tp[0],
                                       [dqdyn.FrameContact(("fore", [0, 0, -0.4]), kp=1.0, target=np.eye(4))])
    # the centroidal-dynamics derivatives' compiled route: one state (the gate), the serial
    # batch twin (a batch of lists passes the gate by) and the parallel batch
    for args in ((Q[0], V[0], T[0]), (Q, V, T), (Q.tolist(), V, T), big):
        dqdyn.centroidal_dynamics_derivatives(m, *args)
    # the centroidal kernels (`dqdyn.contact._centroidal_kernels`): the gate entries, one state as
    # lists, the serial batch twin and the parallel batch
    for f in (lambda q, v, a: dqdyn.centroidal_momentum_matrix(m, q),
              lambda q, v, a: dqdyn.com_jacobian(m, q),
              lambda q, v, a: dqdyn.centroidal_momentum(m, q, v),
              lambda q, v, a: dqdyn.centroidal_momentum_rate(m, q, v, a)):
        _each_form(m, f, Q, V, T)


def group_parallel():
    import numpy as np

    from dqdyn import parallel as P

    for rob in (P.stewart_6_6(), P.cable_robot_8()):
        E = rob.sample_poses(4, 10, 0.05, 1) if hasattr(rob, "sample_poses") else None
        if E is None:
            continue
        ell = rob.lengths(E)
        rob.forward_kinematics(ell[0])
        rob.forward_kinematics_batch(ell)
        rob.track(ell)  # (the tracker and the global searches: each robot's own kernels)
        rob.forward_kinematics_global(ell[0], 4, rng=0)
        if hasattr(rob, "forward_kinematics_global_batch"):
            rob.forward_kinematics_global_batch(ell[:2], 4, rng=0)
        rob.evaluate(E)
        if hasattr(rob, "singularity"):
            rob.singularity(E[0], warn=False)
    # the pose update of the Lie-group Newton steps (`dqdyn.parallel.lie.pose_update`), public
    from dqdyn.parallel.lie import pose_update

    pose_update(np.array([1.0, 0, 0, 0, 0, 0, 0, 0]), np.zeros(6))


def group_graph():
    """The compiled sweeps of the interconnection graph (``InterconnectionGraph.rnea``)."""
    import numpy as np

    import dqdyn
    from dqdyn.composition.interconnection import InterconnectionGraph

    g = InterconnectionGraph()
    g.add("base", dqdyn.serial_chain(2))
    g.add("arm", dqdyn.serial_chain(2), "base", at="tool")
    z = np.zeros(g.nv)
    g.rnea(np.zeros(g.nq), z, z)
    # the lean Python sweeps (``compiled=False``, and any graph holding a black box)
    g.rnea(np.zeros(g.nq), z, z, compiled=False)
    g.evaluate(np.zeros(g.nq), z, z)


def group_reproduce():
    """What else the papers' experiments (``dqdyn demo``) compile: quick runs of the cases that
    drive dqdyn through MuJoCo logs, controllers and constraints, into a temporary folder
    (skipped without MuJoCo, the ``sim`` extra)."""
    import io
    import tempfile

    try:
        import mujoco  # noqa: F401
    except ImportError:
        return
    from dqdyn.reproduce import reproduce

    try:
        from rich.console import Console

        console = Console(file=io.StringIO())
    except ImportError:
        console = None
    with tempfile.TemporaryDirectory() as d:
        reproduce(["jaco", "holonomic_mm", "nonholonomic_mm", "tracking"], out_dir=d, quick=True,
                  console=console)


GROUPS = {
    "dynamics": group_dynamics,
    "forward": group_forward,
    "derivatives": group_derivatives,
    "kinematics": group_kinematics,
    "constraints": group_constraints,
    "contact": group_contact,
    "parallel": group_parallel,
    "graph": group_graph,
    "models": group_models,
    "reproduce": group_reproduce,
}
#: the order the groups start in.  The first two are the longest and share few kernels; the
#: last two mostly call kernels of the others, which by then load from the cache (two workers
#: compiling the same kernel at once both pay for it: ``reproduce`` started beside ``dynamics``
#: took 400 s, most of it compiling ``dynamics``' kernels a second time).
ORDER = list(GROUPS)


def _no_gate(*args):
    return None


def _run_group(name: str) -> None:
    """Run one group in this process; what fails is reported, not raised (the rest still
    compiles, and a kernel that failed here compiles on first use instead)."""
    import dqdyn  # noqa: F401  (loads every kernel module)

    # The C call gate's kernels are compiled even where the extension is not importable (yet):
    # its call sites compile the kernel while evaluating their arguments, so a stand-in gate
    # that sends every call down the general path compiles them too.
    for mod in list(sys.modules.values()):
        if getattr(mod, "__name__", "").startswith("dqdyn.") and getattr(mod, "GATE", 0) is None:
            mod.GATE = _no_gate
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            GROUPS[name]()
        except Exception as e:  # noqa: BLE001 - best effort: report and go on
            print(f"dqdyn._engine.precompile: group {name!r} stopped early: {type(e).__name__}: {e}",
                  file=sys.stderr)


def _platform_tag() -> dict:
    """What the portable kernels must match besides the CPU: the Python ABI (``cpython-311``),
    numba's version (its cache refuses another's entries anyway) and the platform."""
    import sysconfig

    import numba

    return {"python": sys.implementation.cache_tag, "numba": numba.__version__,
            "platform": sysconfig.get_platform()}


def kernel_files(root: str) -> set[str]:
    """The package files (paths relative to it) whose kernels a cache folder ``root`` holds,
    read from its index files' names (``<folder>/<module>.<function>-<line>.<python>.nbi``)."""
    out = set()
    for base, _, files in os.walk(root):
        sub = os.path.relpath(base, root)
        sub = "" if sub in (".", "_top") else sub
        for f in files:
            if f.endswith(".nbi"):
                out.add(os.path.join(sub, f.split(".", 1)[0] + ".py"))
    return out


def source_hash(root: str | None = None) -> str:
    """The hash of the kernels' source: every package file in the import closure of a file
    whose kernels the cache folder ``root`` holds (default: the unpacked portable kernels), and
    this file (which calls them in every form).  An archive made from the same source holds
    everything the groups below compile, so the install need not run them; an edit to a file no
    kernel imports (the command line, the docs, a plotting module) leaves it so."""
    import hashlib

    from dqdyn._engine import jit as _jit

    files = {os.path.join("_engine", "precompile.py")}
    for rel in kernel_files(root or _jit.PORTABLE_CACHE):
        if os.path.isfile(os.path.join(_jit.PKG_DIR, rel)):
            files |= _jit._closure(rel)
    h = hashlib.sha256()
    for rel in sorted(files):
        h.update(rel.replace(os.sep, "/").encode() + b"\0" + _jit._file_hash(rel))
    return h.hexdigest()


def unpack_portable(quiet: bool = False) -> bool:
    """Unpack the shipped portable kernels (``_jit.PORTABLE_ARCHIVE``) into
    ``_jit.PORTABLE_CACHE`` when they fit this machine: its Python ABI, numba version and
    platform are the archive's (``MANIFEST.json``) and its CPU has every feature they were
    compiled for (``_jit.portable_fits``).  Returns whether they are there now.  Kernels whose
    source changed since the archive was made are not used (their stamps differ): they compile."""
    import json
    import shutil
    import tarfile

    from dqdyn._engine import jit as _jit

    def say(msg):
        if not quiet:
            print(f"dqdyn._engine.precompile: {msg}", flush=True)

    if not os.path.isfile(_jit.PORTABLE_ARCHIVE):
        return False
    try:
        with tarfile.open(_jit.PORTABLE_ARCHIVE, "r:xz") as tar:
            manifest = json.load(tar.extractfile("MANIFEST.json"))
            mine = _platform_tag()
            if any(manifest.get(k) != v for k, v in mine.items()):
                say(f"portable kernels not used: made for {manifest.get('python')}, numba "
                    f"{manifest.get('numba')}, {manifest.get('platform')}; this is {mine['python']}, "
                    f"numba {mine['numba']}, {mine['platform']}")
                return False
            if not _jit.portable_fits():
                say(f"portable kernels not used: this CPU lacks part of {_jit.PORTABLE_CPU}")
                return False
            try:
                with open(os.path.join(_jit.PORTABLE_CACHE, "MANIFEST.json")) as f:
                    if json.load(f) == manifest:
                        return True  # unpacked already
            except (OSError, ValueError):
                pass
            tmp = _jit.PORTABLE_CACHE + ".tmp"
            shutil.rmtree(tmp, ignore_errors=True)
            safe = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
            tar.extractall(tmp, **safe)
    except (OSError, tarfile.TarError, KeyError, ValueError) as e:
        say(f"portable kernels not used: {type(e).__name__}: {e}")
        return False
    shutil.rmtree(_jit.PORTABLE_CACHE, ignore_errors=True)
    os.replace(tmp, _jit.PORTABLE_CACHE)
    _jit.cache_roots.cache_clear()
    say(f"portable kernels unpacked ({manifest.get('kernels', '?')} kernels, {_jit.PORTABLE_CPU}, "
        f"made from {manifest.get('source', '?')})")
    return True


def make_portable(jobs: int | None = None, quiet: bool = False) -> str:
    """Compile every kernel for ``_jit.PORTABLE_CPU`` into an empty folder (nothing loaded from
    any cache) and pack it, with its ``MANIFEST.json``, into ``_jit.PORTABLE_ARCHIVE``; then
    unpack it for this process's package.  Returns the archive's path."""
    import glob
    import json
    import shutil
    import tarfile
    import tempfile

    from dqdyn._engine import jit as _jit

    with tempfile.TemporaryDirectory(prefix="dqdyn-portable-") as d:
        out = os.path.join(d, "kernels")
        env = dict(os.environ, NUMBA_CPU_NAME=_jit.PORTABLE_CPU, NUMBA_CPU_FEATURES="",
                   DQDYN_PORTABLE_BUILD=out)
        env.pop("DQDYN_NO_CACHE", None)
        precompile(None, jobs, quiet, env=env)
        try:
            rev = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=_jit.PKG_DIR,
                                 capture_output=True, text=True).stdout.strip() or "?"
        except OSError:
            rev = "?"
        manifest = {**_platform_tag(), "cpu": _jit.PORTABLE_CPU, "source": rev,
                    "kernels": len(glob.glob(os.path.join(out, "**", "*.nbi"), recursive=True)),
                    "source_hash": source_hash(out)}
        with open(os.path.join(out, "MANIFEST.json"), "w") as f:
            json.dump(manifest, f, indent=1)
        tmp = _jit.PORTABLE_ARCHIVE + ".tmp"
        with tarfile.open(tmp, "w:xz", preset=9) as tar:
            for name in sorted(os.listdir(out)):
                tar.add(os.path.join(out, name), arcname=name,
                        filter=lambda ti: (setattr(ti, "mtime", 0), setattr(ti, "uid", 0),
                                           setattr(ti, "gid", 0), setattr(ti, "uname", ""),
                                           setattr(ti, "gname", ""), ti)[-1])
        os.replace(tmp, _jit.PORTABLE_ARCHIVE)
    shutil.rmtree(_jit.PORTABLE_CACHE, ignore_errors=True)
    unpack_portable(quiet)
    return _jit.PORTABLE_ARCHIVE


def precompile(groups=None, jobs: int | None = None, quiet: bool = False, env: dict | None = None) -> dict:
    """Compile the kernels of ``groups`` (default: all, see `GROUPS`) into the kernel cache,
    ``jobs`` worker processes at a time (default: the number of CPUs).  Returns the wall seconds
    of each group.  Already cached kernels load in a fraction of a second, so running it twice
    costs little."""
    names = list(GROUPS) if not groups else list(groups)
    for n in names:
        if n not in GROUPS:
            from dqdyn.errors import UnknownNameError

            raise UnknownNameError(f"group {n!r} is not one of {sorted(GROUPS)}")
    jobs = max(1, min(len(names), jobs or os.cpu_count() or 1))
    env = dict(os.environ if env is None else env)
    env["DQDYN_PRECOMPILING"] = "1"  # (the workers' compilations are not announced one by one)
    pending = sorted(names, key=ORDER.index)
    running: dict = {}
    times = {}
    t_all = time.perf_counter()
    progress = _Progress(env, len(names) == len(GROUPS), quiet)
    while pending or running:
        progress.tick(len(times), len(names))
        while pending and len(running) < jobs:
            n = pending.pop(0)
            p = subprocess.Popen([sys.executable, "-m", "dqdyn._engine.precompile", "--in-process", n], env=env)
            running[p] = (n, time.perf_counter())
        for p in list(running):
            if p.poll() is not None:
                n, t0 = running.pop(p)
                times[n] = time.perf_counter() - t0
                if not quiet:
                    print(f"dqdyn._engine.precompile: {n:12s} {times[n]:6.1f} s"
                          + ("" if p.returncode == 0 else f" (exit {p.returncode})"), flush=True)
        time.sleep(0.05)
    times["total"] = time.perf_counter() - t_all
    if not quiet:
        from dqdyn._engine.jit import cache_roots

        where = env.get("DQDYN_PORTABLE_BUILD") or next(r for r, w in cache_roots() if w)
        print(f"dqdyn._engine.precompile: done in {times['total']:.1f} s; cache in {where}", flush=True)
    return times


class _Progress:
    """A line every `EVERY` seconds while the groups run: kernels compiled so far (the
    index files written since the start, one per compiled function) of about how many (the
    shipped archives' count, when every group runs), the time so far and an estimate of the
    rest."""

    EVERY = 15.0

    def __init__(self, env: dict, all_groups: bool, quiet: bool):
        import glob
        import json
        import tarfile

        from dqdyn._engine import jit as _jit

        self.quiet = quiet
        self.t0 = self.last = time.time()
        self.root = env.get("DQDYN_PORTABLE_BUILD") or next(
            (r for r, w in _jit.cache_roots() if w), None)
        self.total = None
        if all_groups:
            for archive in sorted(glob.glob(os.path.join(_jit.PKG_DIR, "_kernels_portable-*.tar.xz"))):
                try:
                    with tarfile.open(archive, "r:xz") as tar:
                        self.total = int(json.load(tar.extractfile("MANIFEST.json"))["kernels"])
                    break
                except (OSError, tarfile.TarError, KeyError, ValueError):
                    continue

    def done(self) -> int:
        n = 0
        for base, _, files in os.walk(self.root or os.devnull):
            for f in files:
                if f.endswith(".nbi"):
                    try:
                        n += os.path.getmtime(os.path.join(base, f)) >= self.t0
                    except OSError:
                        pass
        return n

    def tick(self, groups_done: int, groups: int) -> None:
        now = time.time()
        if self.quiet or now - self.last < self.EVERY:
            return
        self.last = now
        n, el = self.done(), now - self.t0
        of = f" of about {self.total}" if self.total else ""
        left = ""
        if self.total and n:
            left = f", about {_mmss(el * max(self.total - n, 0) / n)} left"
        print(f"dqdyn._engine.precompile: {n}{of} kernels compiled, {groups_done}/{groups} groups done, "
              f"{_mmss(el)} so far{left}", flush=True)


def _mmss(s: float) -> str:
    return f"{int(s // 60)} min {int(s % 60):02d} s" if s >= 60 else f"{s:.0f} s"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m dqdyn._engine.precompile", description=__doc__.split("\n\n")[0])
    p.add_argument("--jobs", type=int, default=None, help="worker processes (default: CPUs)")
    p.add_argument("--group", action="append", choices=sorted(GROUPS), help="only these groups")
    p.add_argument("--quiet", action="store_true")
    p.add_argument("--portable", action="store_true",
                   help="compile every kernel for any x86-64-v3 CPU and pack it into "
                        "dqdyn/_kernels_portable-<python>.tar.xz (the archive the source ships)")
    p.add_argument("--in-process", metavar="GROUP", help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    if a.in_process:
        _run_group(a.in_process)
        return 0
    if a.portable:
        print(f"dqdyn._engine.precompile: wrote {make_portable(a.jobs, a.quiet)}", flush=True)
        return 0
    if not os.environ.get("DQDYN_PORTABLE_BUILD"):
        if unpack_portable(a.quiet) and not a.group and _portable_is_this_source():
            if not a.quiet:
                print("dqdyn._engine.precompile: the portable kernels were made from this very source: "
                      "nothing to compile", flush=True)
            return 0
    precompile(a.group, a.jobs, a.quiet)
    return 0


def _portable_is_this_source() -> bool:
    import json

    from dqdyn._engine import jit as _jit

    try:
        with open(os.path.join(_jit.PORTABLE_CACHE, "MANIFEST.json")) as f:
            return json.load(f).get("source_hash") == source_hash()
    except (OSError, ValueError):
        return False


if __name__ == "__main__":
    raise SystemExit(main())
