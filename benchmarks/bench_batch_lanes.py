"""Batched ``rnea``, ``aba``, ``mass_matrix`` and ``forward_kinematics``: dqdyn's lanes (blocks of
16 states, `dqdyn.dynamics.lanes`, `dqdyn.dynamics.lanes_aba`, `dqdyn.dynamics.lanes_crba`,
`dqdyn.kinematics.lanes_fk`) against dqdyn's per-state batch kernel and Pinocchio's
``rneaInParallel`` / ``abaInParallel``, side by side in one process.  Pinocchio 4 has no parallel
``crba`` nor ``forwardKinematics``: ``mass_matrix`` and ``fk`` are compared with a Python loop of
``pin.crba`` / ``pin.forwardKinematics`` on one thread (the row "pin loop", its ns/body/core
counted for that one core).

    python benchmarks/bench_batch_lanes.py [--rounds 9] [--sizes 1000 10000 100000]
                                           [--models panda chain100 anymal talos]
                                           [--functions rnea aba mass_matrix fk]

Panda (9 DoF, the finger independent, as Pinocchio parses it), a 100-body revolute chain
(`dqdyn.serial_chain`) and two floating bases of example-robot-data, ANYmal (free root + 12
joints) and Talos (free root + 32 joints, ``talos_reduced``), on batches of 10³, 10⁴ and 10⁵ states, all cores for every route
(Pinocchio: a ``ModelPool`` of one model per core).  Rounds interleave the three routes; each
timing is the median over the rounds (spread: the min–max of the rounds), as wall time per batch
and as the cost per body per core, ``t · cores / (N · bodies)``.  The lanes and the per-state
kernel give the same bits (checked here before timing).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests"))

import dqdyn  # noqa: E402
from dqdyn._engine.batching import for_batch, run_chunked  # noqa: E402
from dqdyn._engine.boundary import raise_status  # noqa: E402
from dqdyn.dynamics import aba as ab  # noqa: E402
from dqdyn.dynamics import lagrange as lg  # noqa: E402
from dqdyn.dynamics import newton_euler as ne  # noqa: E402
from dqdyn.dynamics.articulated import _raise  # noqa: E402
from dqdyn.dynamics.lanes import rnea_lanes  # noqa: E402
from dqdyn.dynamics.lanes_aba import aba_lanes_batch  # noqa: E402
from dqdyn.dynamics.lanes_crba import crba_lanes_batch  # noqa: E402
from dqdyn.kinematics import forward as fw  # noqa: E402
from dqdyn.kinematics.lanes_fk import fk_lanes_batch  # noqa: E402


def per_state_batch(m, Q, V, A, out):
    """dqdyn's batch before the lanes: `ne_core` per state in a ``prange`` loop."""
    run_chunked(ne.rnea_batch, (m.mi, m.mf, m.gravity), [Q, V, A, np.empty((1, 0, 6))], [out],
                len(Q), (1, 2, 3), lambda st, row: raise_status(m, st, row))
    return out


def aba_lanes(m, Q, V, T, out):
    """dqdyn's batched ``aba`` (`aba_lanes_batch`, what `dqdyn.aba` runs for such a batch)."""
    run_chunked(aba_lanes_batch, (m.mi, m.mf), [Q, V, T], [out], len(Q), (1, 2),
                lambda st, row: _raise(m, st, row))
    return out


def aba_per_state(m, Q, V, T, out):
    """dqdyn's batched ``aba`` before the lanes: ``aba_kernel`` per state in a ``prange`` loop."""
    run_chunked(ab.aba_batch, (m.mi, m.mf), [Q, V, T], [out], len(Q), (),
                lambda st, row: _raise(m, st, row))
    return out


def crba_lanes(m, Q, out):
    """dqdyn's batched ``mass_matrix`` (`crba_lanes_batch`, what `dqdyn.mass_matrix` runs)."""
    run_chunked(crba_lanes_batch, (m.mi, m.mf), [Q], [out], len(Q), (), lg._raiser(m, (1,)))
    return out


def crba_per_state(m, Q, out):
    """dqdyn's batched ``mass_matrix`` before the lanes: ``crba_core`` per state in a ``prange``
    loop (`lagrange.crba_batch`)."""
    run_chunked(lg.crba_batch, (m.mi, m.mf), [Q], [out], len(Q), (), lg._raiser(m, (1,)))
    return out


def pin_crba_loop(pin, pm, pd, QP):
    """Pinocchio's ``crba`` state by state (it has no ``crbaInParallel``), on one thread."""
    for k in range(QP.shape[1]):
        pin.crba(pm, pd, QP[:, k])


def fk_run(kernel, m, Q, X, status):
    """dqdyn's batched ``forward_kinematics`` on ``kernel``: `fk_lanes_batch` (what
    `dqdyn.forward_kinematics` runs for such a batch) or `forward.fk_batch` (``fk_kernel`` per
    state in a ``prange`` loop, the route before the lanes)."""
    for_batch(kernel, len(Q), m.mi.shape[0])(m.mi, m.mf, Q, X, status)
    return X


def pin_fk_loop(pin, pm, pd, QP):
    """Pinocchio's ``forwardKinematics`` state by state (it has no parallel one), on one thread."""
    for k in range(QP.shape[1]):
        pin.forwardKinematics(pm, pd, QP[:, k])


def _time(fn, target_s=0.02):
    """Seconds per call of ``fn`` (repeated to about ``target_s``)."""
    t0 = time.perf_counter()
    fn()
    t = time.perf_counter() - t0
    k = max(1, int(target_s / max(t, 1e-9)))
    t0 = time.perf_counter()
    for _ in range(k):
        fn()
    return (time.perf_counter() - t0) / k


MODELS = ("panda", "chain100", "anymal", "talos")


def models(names=MODELS):
    import pinocchio as pin

    from pinconv import ROBOTS, erd, pin_from_model, pin_from_urdf

    out = []
    for name in names:
        if name == "chain100":
            chain = dqdyn.serial_chain(100)
            out.append((name, chain, pin_from_model(chain)[0]))
            continue
        rel, root = ROBOTS[name]
        if name == "panda":
            out.append((name, dqdyn.load_urdf(erd(rel), mimic="independent"),
                        pin.buildModelFromUrdf(erd(rel))))
        else:  # (a free root: Pinocchio's JointModelFreeFlyer)
            out.append((name, dqdyn.load_urdf(erd(rel), root_joint=root),
                        pin_from_urdf(erd(rel), root)))
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000, 100_000])
    ap.add_argument("--models", nargs="+", default=list(MODELS), choices=MODELS)
    ap.add_argument("--functions", nargs="+", default=["rnea", "aba", "mass_matrix"],
                    choices=["rnea", "aba", "mass_matrix", "fk"])
    args = ap.parse_args(argv)
    import numba
    import pinocchio as pin

    from pinconv import q_to_pin

    warnings.simplefilter("ignore")
    ncpu = os.cpu_count() or 1
    numba.set_num_threads(ncpu)
    print(f"pinocchio {pin.__version__}, numba {numba.__version__}, {ncpu} cores, "
          f"{numba.get_num_threads()} numba threads, {args.rounds} interleaved rounds")
    print(f"{'fn':11s} {'model':9s} {'N':>7s} | {'route':14s} {'median ms':>10s} {'min-max ms':>17s} "
          f"{'ns/body/core':>13s} {'vs per-state':>12s}")
    for name, m, pm in models(args.models):
        pool = pin.ModelPool(pm, ncpu)
        pd = pm.createData()
        for N in args.sizes:
            Q = dqdyn.random_configuration(m, size=N, seed=1)
            rng = np.random.default_rng(0)
            V, A = rng.normal(size=(N, m.nv)), rng.normal(size=(N, m.nv))
            QP = np.asfortranarray(np.array([q_to_pin(m, pm, x) for x in Q]).T)
            # (the same random rows as Pinocchio's v / a: a free root's [v, ω] order differs from
            # dqdyn's [ω, v], which changes the values, not the work)
            VP, AP = np.asfortranarray(V.T), np.asfortranarray(A.T)
            TP = np.zeros((pm.nv, N), order="F")
            o1, o2 = np.empty((N, m.nv)), np.empty((N, m.nv))
            M1 = M2 = None
            if "mass_matrix" in args.functions:
                M1, M2 = np.empty((N, m.nv, m.nv)), np.empty((N, m.nv, m.nv))
            X1 = X2 = st = None
            if "fk" in args.functions:
                X1, X2 = np.empty((N, m.nbodies + 1, 8)), np.empty((N, m.nbodies + 1, 8))
                st = np.zeros(N, dtype=np.int64)
            # (aba: the random rows of ``A`` as τ, Pinocchio's taken as they are, as v)
            every = {
                "rnea": {
                    "dqdyn lanes": lambda: rnea_lanes(m, Q, V, A, o1),
                    "dqdyn state": lambda: per_state_batch(m, Q, V, A, o2),
                    "pin parallel": lambda: pin.rneaInParallel(ncpu, pool, QP, VP, AP, TP),
                },
                "aba": {
                    "dqdyn lanes": lambda: aba_lanes(m, Q, V, A, o1),
                    "dqdyn state": lambda: aba_per_state(m, Q, V, A, o2),
                    "pin parallel": lambda: pin.abaInParallel(ncpu, pool, QP, VP, AP, TP),
                },
                "mass_matrix": {
                    "dqdyn lanes": lambda: crba_lanes(m, Q, M1),
                    "dqdyn state": lambda: crba_per_state(m, Q, M2),
                    "pin loop": lambda: pin_crba_loop(pin, pm, pd, QP),
                },
                "fk": {
                    "dqdyn lanes": lambda: fk_run(fk_lanes_batch, m, Q, X1, st),
                    "dqdyn state": lambda: fk_run(fw.fk_batch, m, Q, X2, st),
                    "pin loop": lambda: pin_fk_loop(pin, pm, pd, QP),
                },
            }
            for fn in args.functions:
                routes = every[fn]
                for f in routes.values():
                    f()
                if fn == "mass_matrix":
                    assert np.array_equal(M1, M2), "lanes and per-state kernel differ"
                elif fn == "fk":
                    assert np.array_equal(X1, X2) and not st.any(), "lanes and per-state kernel differ"
                else:
                    assert np.array_equal(o1, o2), "lanes and per-state kernel differ"
                times = {k: [] for k in routes}
                for _ in range(args.rounds):
                    for k, f in routes.items():
                        times[k].append(_time(f))
                base = np.median(times["dqdyn state"])
                for k, t in times.items():
                    med = np.median(t)
                    cores = 1 if k == "pin loop" else ncpu
                    print(f"{fn:11s} {name:9s} {N:7d} | {k:14s} {med * 1e3:10.3f} "
                          f"{min(t) * 1e3:8.3f}-{max(t) * 1e3:<8.3f} "
                          f"{med * cores / (N * m.nbodies) * 1e9:13.2f} {base / med:11.2f}x", flush=True)


if __name__ == "__main__":
    main()
