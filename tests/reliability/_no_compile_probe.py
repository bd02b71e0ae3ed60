"""Run every public numeric function on every input flavour and count numba compilations.

Run as a script in a fresh process (``python _no_compile_probe.py OUT.json [MODEL ...]``): for
each model, function, batch size and input flavour, the call's result is compared bit for bit
with the same call on C-contiguous writable float64 arrays, and every compilation that numba
starts (its ``numba:compile`` event) is recorded with the call that caused it.  Used by
``test_no_runtime_compile.py``; also a diagnostic by hand.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile

import numpy as np
from numba.core import event

import dqdyn
from dqdyn.errors import DqdynError

COMPILES: list = []
CURRENT = ["import"]


class _Recorder(event.Listener):
    def on_start(self, ev):
        d = ev.data["dispatcher"]
        COMPILES.append([CURRENT[0], f"{d.py_func.__module__}.{d.py_func.__qualname__}",
                         str(ev.data["args"])])

    def on_end(self, ev):
        pass


def _mimic_chain():
    b = dqdyn.ModelBuilder("mimic3")
    I3 = 0.01 * np.eye(3)
    b.add_body("a", joint="revolute", mass=1.0, inertia=I3, joint_name="ja", axis=[0, 0, 1],
               com=[0.1, 0, 0])
    b.add_body("b", "a", "revolute", mass=1.0, inertia=I3, axis=[0, 1, 0], com=[0.1, 0, 0])
    b.add_body("c", "b", "revolute", mass=1.0, inertia=I3, axis=[0, 1, 0], com=[0.1, 0, 0],
               mimic=("ja", 0.5, 0.1))
    return b.build()


def _floating():
    """A floating base (free joint) carrying a small tree."""
    b = dqdyn.ModelBuilder("floating")
    I3 = np.diag([0.02, 0.03, 0.04])
    b.add_body("base", joint="free", mass=3.0, inertia=I3, com=[0.01, 0.0, 0.02])
    for k, side in enumerate((1.0, -1.0)):
        b.add_body(f"hip{k}", "base", "revolute", mass=0.5, inertia=0.1 * I3, axis=[1, 0, 0],
                   com=[0, 0.05 * side, -0.1], xyz=[0.1, 0.1 * side, 0.0])
        b.add_body(f"knee{k}", f"hip{k}", "revolute", mass=0.3, inertia=0.1 * I3,
                   axis=[0, 1, 0], com=[0, 0, -0.1], xyz=[0.0, 0.0, -0.2])
    return b.build()


MODELS = {
    "arm": lambda: dqdyn.serial_chain(6),
    "floating": _floating,
    "mimic": _mimic_chain,
}


def _functions(m):
    """(name, function of the state arrays, the state arrays it takes: 'q', 'v', 'a')."""
    f = m.frame_names[-1]
    presc = np.arange(m.nv) % 2 == 0
    A = np.eye(m.nv)[1:2].copy()
    b = np.zeros(1)
    out = [
        ("rnea", lambda q, v, a: dqdyn.rnea(m, q, v, a), "qva"),
        ("aba", lambda q, v, a: dqdyn.aba(m, q, v, a), "qva"),
        ("mass_matrix", lambda q: dqdyn.mass_matrix(m, q), "q"),
        ("mass_matrix_inverse", lambda q: dqdyn.mass_matrix_inverse(m, q), "q"),
        ("coriolis_matrix", lambda q, v: dqdyn.coriolis_matrix(m, q, v), "qv"),
        ("gravity", lambda q: dqdyn.gravity(m, q), "q"),
        ("nonlinear_effects", lambda q, v: dqdyn.nonlinear_effects(m, q, v), "qv"),
        ("rnea_derivatives", lambda q, v, a: dqdyn.rnea_derivatives(m, q, v, a), "qva"),
        ("aba_derivatives", lambda q, v, a: dqdyn.aba_derivatives(m, q, v, a), "qva"),
        ("hybrid_dynamics", lambda q, v, a: dqdyn.hybrid_dynamics(m, q, v, a, a, presc), "qva"),
        ("hybrid_dynamics_derivatives",
         lambda q, v, a: dqdyn.hybrid_dynamics_derivatives(m, q, v, a, a, presc), "qva"),
        ("constrained_aba", lambda q, v, a: dqdyn.constrained_aba(m, q, v, a, A, b), "qva"),
        ("forward_kinematics", lambda q: dqdyn.forward_kinematics(m, q), "q"),
        ("frame_pose", lambda q: dqdyn.frame_pose(m, q, f), "q"),
        ("frame_poses", lambda q: dqdyn.frame_poses(m, q), "q"),
        ("com_poses", lambda q: dqdyn.com_poses(m, q), "q"),
        ("body_twists", lambda q, v: dqdyn.body_twists(m, q, v), "qv"),
        ("joint_jacobians", lambda q: dqdyn.joint_jacobians(m, q), "q"),
        ("pose_jacobian", lambda q: dqdyn.pose_jacobian(m, q, f), "q"),
        ("center_of_mass", lambda q: dqdyn.center_of_mass(m, q), "q"),
        ("kinetic_energy", lambda q, v: dqdyn.kinetic_energy(m, q, v), "qv"),
        ("potential_energy", lambda q: dqdyn.potential_energy(m, q), "q"),
        ("mechanical_energy", lambda q, v: dqdyn.mechanical_energy(m, q, v), "qv"),
    ]
    if m.nq != m.nv:  # (a floating base: the legged-robot functions)
        feet = [dqdyn.PointContact(n) for n in m.frame_names if n.startswith("knee")]
        out += [
            ("centroidal_momentum_matrix", lambda q: dqdyn.centroidal_momentum_matrix(m, q), "q"),
            ("centroidal_momentum_rate",
             lambda q, v, a: dqdyn.centroidal_momentum_rate(m, q, v, a), "qva"),
            ("com_jacobian", lambda q: dqdyn.com_jacobian(m, q), "q"),
            ("contact_dynamics", lambda q, v, a: dqdyn.contact_dynamics(m, q, v, a, feet), "qva"),
            ("impulse_dynamics", lambda q, v: dqdyn.impulse_dynamics(m, q, v, feet), "qv"),
            ("frame_acceleration",
             lambda q, v, a: dqdyn.frame_acceleration(m, q, v, a, f, "world_aligned"), "qva"),
        ]
    for frame in ("body", "spatial", "world_aligned"):
        out += [
            (f"twist_jacobian[{frame}]", lambda q, fr=frame: dqdyn.twist_jacobian(m, q, f, fr), "q"),
            (f"jacobian_time_derivative[{frame}]",
             lambda q, v, fr=frame: dqdyn.jacobian_time_derivative(m, q, v, f, fr), "qv"),
            (f"jacobian_dot_times_v[{frame}]",
             lambda q, v, fr=frame: dqdyn.jacobian_dot_times_v(m, q, v, f, fr), "qv"),
        ]
    return out


def _bits(x) -> bytes:
    if isinstance(x, (tuple, list)):
        return b"|".join(_bits(y) for y in x)
    if hasattr(x, "__dict__") and not isinstance(x, np.ndarray):  # a result object
        return b"|".join(_bits(v) for _, v in sorted(vars(x).items())
                         if isinstance(v, (np.ndarray, tuple, list, float)))
    return np.ascontiguousarray(np.asarray(x, dtype=np.float64)).tobytes()


def _strided(x):
    big = np.full(x.shape[:-1] + (2 * x.shape[-1],), np.nan)
    big[..., ::2] = x
    return big[..., ::2]


def _column_slice(x):
    big = np.full(x.shape[:-1] + (x.shape[-1] + 3,), np.nan)
    big[..., 1:x.shape[-1] + 1] = x
    return big[..., 1:x.shape[-1] + 1]


def _read_only(x):
    y = x.copy()
    y.flags.writeable = False
    return y


def _memmap(mode):
    def make(x):
        fd, path = tempfile.mkstemp(suffix=".npy", dir=TMP)
        os.close(fd)
        np.save(path, x)
        return np.load(path, mmap_mode=mode)

    return make


FLAVOURS = {
    "read_only": _read_only,
    "strided": _strided,
    "column_slice": _column_slice,
    "fortran": np.asfortranarray,
    "big_endian": lambda x: x.astype(">f8"),
    "list": lambda x: x.tolist(),
    "memmap_r": _memmap("r"),
    "memmap_r+": _memmap("r+"),
    "broadcast": lambda x: np.broadcast_to(x, x.shape),
}


def main(out_path: str, models: list[str]) -> None:
    global TMP
    TMP = tempfile.mkdtemp(prefix="dqdyn-probe-")
    dqdyn.set_batch_chunk(64)  # batches above, at and below the chunk size stay small here
    event.register("numba:compile", _Recorder())
    mismatches, skipped, calls = [], [], 0
    for mname in models:
        m = MODELS[mname]()
        rng = np.random.default_rng(1)
        for size in (None, 3, 64, 500):
            n = 1 if size is None else size
            Q = dqdyn.random_configuration(m, size=n, seed=2)
            states = {"q": np.ascontiguousarray(Q), "v": rng.normal(size=(n, m.nv)),
                      "a": rng.normal(size=(n, m.nv))}
            if size is None:
                states = {k: x[0].copy() for k, x in states.items()}
            for fname, fn, takes in _functions(m):
                args = [states[c] for c in takes]
                CURRENT[0] = f"{mname} {fname} size={size} contiguous"
                try:
                    ref = _bits(fn(*[x.copy() for x in args]))
                except DqdynError as e:  # (a function of single states only)
                    skipped.append([mname, fname, size, str(e)[:120]])
                    continue
                calls += 1
                for flav, make in FLAVOURS.items():
                    if flav == "fortran" and args[0].ndim == 1:
                        continue
                    CURRENT[0] = f"{mname} {fname} size={size} {flav}"
                    got = _bits(fn(*[make(x) for x in args]))
                    calls += 1
                    if got != ref:
                        mismatches.append(CURRENT[0])
    with open(out_path, "w") as f:
        json.dump({"compiles": COMPILES, "mismatches": mismatches, "skipped": skipped,
                   "calls": calls, "cpu_target": dqdyn._engine.jit.CPU_TARGET}, f, indent=1)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:] or list(MODELS))
