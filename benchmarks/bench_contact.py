"""Legged-robot dynamics: dqdyn against Pinocchio on ANYmal and Talos (example-robot-data).

    python benchmarks/bench_contact.py [--quick]

Both libraries in one process, the same URDF parsed by each.  Per call, interleaved rounds
(dqdyn, Pinocchio, dqdyn, …; each contender's call count calibrated so that one round lasts about
20 ms) timed in CPU time of the process (``--clock wall``: wall time; on a loaded machine the
wall time of a call includes waits for a core), the median µs per call, the spread (the interquartile range of the rounds over their
median) and the ratio dqdyn / Pinocchio, the median of the rounds' ratios (neighbouring rounds
share the machine's load; below 1: dqdyn faster):

* ``A_g`` — `dqdyn.centroidal_momentum_matrix` vs ``pinocchio.ccrba``;
* ``Ȧ_g v`` — `dqdyn.centroidal_momentum_rate` with ``a = 0`` vs
  ``computeCentroidalMomentumTimeVariation`` (``a`` mapped to Pinocchio's layout);
* contact forward dynamics — `dqdyn.contact_dynamics` vs ``constraintDynamics``
  (``RigidConstraintModel``, ``LOCAL``): both direct (dqdyn ``proximal=None``, Pinocchio's default
  ``ProximalSettings``: μ = 0, one iteration), and both proximal (μ = 1e-8, up to 50 iterations;
  dqdyn's μ is relative to the Delassus matrix' mean diagonal, Pinocchio's absolute);
* impulse dynamics — `dqdyn.impulse_dynamics` vs ``impulseDynamics`` (direct, restitution 0).

Contacts: ANYmal's four feet (3D); Talos' soles and grippers (four 3D) and its two soles (6D).
Batched: one dqdyn call on N states against a Python loop of the Pinocchio call over the same
states (inputs converted beforehand; Pinocchio has no batched call), µs per state, wall time
(dqdyn's batched kinematics may run on several threads).  Each row
records the largest relative difference of the two results (a sanity check, not a test).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests"))

import dqdyn  # noqa: E402

from harness import per_call, print_table, write_results  # noqa: E402

FEET = {"anymal": ["LF_FOOT", "RF_FOOT", "LH_FOOT", "RH_FOOT"],
        "talos": ["left_sole_link", "right_sole_link"]}
HANDS = {"talos": ["gripper_left_base_link", "gripper_right_base_link"]}
CASES = [("anymal", "3d", FEET["anymal"], "4 feet, 3D"),
         ("talos", "3d", FEET["talos"] + HANDS["talos"], "soles + grippers, 3D"),
         ("talos", "6d", FEET["talos"], "2 soles, 6D")]


def cpu_per_call(fn, number: int) -> float:
    """Mean CPU seconds of this process per call over ``number`` calls (single-state calls run on
    one thread in both libraries; CPU time leaves out the time the process waits for a core)."""
    t0 = time.process_time()
    for _ in range(number):
        fn()
    return (time.process_time() - t0) / number


def rounds_of(a, b, rounds: int, target_s: float = 0.02, clock=cpu_per_call):
    """Per-call seconds of ``a`` and ``b`` over ``rounds`` interleaved rounds (lists)."""
    a()
    b()
    counts = []
    for f in (a, b):
        n = 1
        while per_call(f, n) * n < target_s / 4 and n < 1_000_000:
            n *= 4
        counts.append(n)
    ta, tb = [], []
    for _ in range(rounds):
        ta.append(clock(a, counts[0]))
        tb.append(clock(b, counts[1]))
    return ta, tb


def summary(ta, tb, per: int = 1) -> dict:
    """Medians (µs per call / state), spreads (IQR / median) and the median of the ratios."""
    def med_iqr(t):
        t = np.asarray(t) * 1e6 / per
        q1, q2, q3 = np.percentile(t, [25, 50, 75])
        return float(q2), float((q3 - q1) / q2)
    ma, sa = med_iqr(ta)
    mb, sb = med_iqr(tb)
    return {"dqdyn_us": ma, "dqdyn_spread": f"{100 * sa:.0f}%", "pin_us": mb,
            "pin_spread": f"{100 * sb:.0f}%",
            "ratio": float(np.median(np.asarray(ta) / np.asarray(tb)))}


def rel(a, b) -> float:
    a, b = np.asarray(a, float), np.asarray(b, float)
    return float(np.abs(a - b).max() / (1.0 + np.abs(b).max()))


class Setup:
    """A robot in both libraries, its contacts and a batch of random states."""

    def __init__(self, name, kind, frames, n_states: int, seed: int = 0):
        import pinocchio as pin

        from dqdyn.interop.pinocchio import pin_from_urdf

        from pinconv import ERD, ROBOTS

        path = os.path.join(ERD, ROBOTS[name][0])
        if not os.path.exists(path):
            raise FileNotFoundError(path)
        self.pin = pin
        self.m = dqdyn.load_example(name)
        self.pm = pin_from_urdf(path, ROBOTS[name][1])
        self.pd = self.pm.createData()
        rng = np.random.default_rng(seed)
        N = n_states
        self.Q = np.stack([dqdyn.random_configuration(self.m, seed=seed + k) for k in range(N)])
        self.V = rng.standard_normal((N, self.m.nv))
        self.TAU = rng.standard_normal((N, self.m.nv))
        C = dqdyn.PointContact if kind == "3d" else dqdyn.FrameContact
        self.contacts = [C(f) for f in frames]
        ctype = pin.ContactType.CONTACT_3D if kind == "3d" else pin.ContactType.CONTACT_6D
        self.cms, self.cds = pin.StdVec_RigidConstraintModel(), pin.StdVec_RigidConstraintData()
        for f in frames:
            fr = self.pm.frames[self.pm.getFrameId(f)]
            cm = pin.RigidConstraintModel(ctype, self.pm, fr.parentJoint, fr.placement, pin.LOCAL)
            self.cms.append(cm)
            self.cds.append(cm.createData())
        pin.initConstraintDynamics(self.pm, self.pd, self.cms, self.cds)
        self.direct = pin.ProximalSettings(1e-12, 0.0, 1)
        self.prox = pin.ProximalSettings(1e-12, 1e-8, 50)
        self._pin_states = None

    def pin_states(self, n):
        """Pinocchio's ``(q, v, τ, a for a = 0, T)`` of the first ``n`` states, and dqdyn's
        ``(q, v)``."""
        from dqdyn.interop.pinocchio import a_to_pin, q_to_pin, tau_to_pin, v_transform

        if self._pin_states is None or len(self._pin_states) < n:
            m, pm = self.m, self.pm
            out = []
            for q, v, tau in zip(self.Q[:n], self.V[:n], self.TAU[:n]):
                T = v_transform(m, pm, q)
                out.append((q_to_pin(m, pm, q), T @ v, tau_to_pin(m, pm, q, tau),
                            a_to_pin(m, pm, q, v, np.zeros(m.nv)), T, q, v))
            self._pin_states = out
        return self._pin_states[:n]

    # -- the operations: (dqdyn on (Q, V, TAU), pinocchio on one converted state, check)
    def operations(self):
        from dqdyn.interop.pinocchio import a_to_pin

        m, pm, pd, pin, cs = self.m, self.pm, self.pd, self.pin, self.contacts

        def rate(Q, V, T):
            return dqdyn.centroidal_momentum_rate(m, Q, V, np.zeros_like(V))

        def pin_rate(s):
            f = pin.computeCentroidalMomentumTimeVariation(pm, pd, s[0], s[1], s[3])
            return np.concatenate([np.array(f.linear), np.array(f.angular)])

        def pin_cd(settings):
            def f(s):
                a = pin.constraintDynamics(pm, pd, s[0], s[1], s[2], self.cms, self.cds, settings)
                return np.concatenate([a, pd.lambda_c])
            return f

        def dq_cd(proximal):
            def f(Q, V, T):
                r = dqdyn.contact_dynamics(m, Q, V, T, cs, proximal=proximal)
                return r.a, r.multipliers
            return f

        def pin_imp(s):
            vp = pin.impulseDynamics(pm, pd, s[0], s[1], self.cms, self.cds, 0.0, self.direct)
            return np.concatenate([vp, pd.impulse_c])

        def dq_imp(Q, V, T):
            r = dqdyn.impulse_dynamics(m, Q, V, cs, 0.0, proximal=None)
            return r.v, r.multipliers

        def check_ag(ours, s, theirs):
            return rel(ours, theirs @ s[4])

        def check_vec(ours, s, theirs):
            return rel(ours, theirs)

        def check_cd(ours, s, theirs):
            # the acceleration in Pinocchio's layout, the forces as they are (contact frames)
            a, lam = ours
            return max(rel(a_to_pin(m, pm, s[5], s[6], a), theirs[:m.nv]), rel(lam, theirs[m.nv:]))

        def check_imp(ours, s, theirs):
            v, lam = ours
            return max(rel(s[4] @ v, theirs[:m.nv]), rel(lam, theirs[m.nv:]))

        return [
            ("A_g", "ccrba", lambda Q, V, T: dqdyn.centroidal_momentum_matrix(m, Q),
             lambda s: pin.ccrba(pm, pd, s[0], s[1]), check_ag),
            ("Ȧ_g v", "computeCentroidalMomentumTimeVariation", rate, pin_rate, check_vec),
            ("contact FD, direct", "constraintDynamics (μ = 0)", dq_cd(None), pin_cd(self.direct),
             check_cd),
            ("contact FD, proximal", "constraintDynamics (μ = 1e-8)", dq_cd(1e-8),
             pin_cd(self.prox), check_cd),
            ("impulse dynamics", "impulseDynamics", dq_imp, pin_imp, check_imp),
        ]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer rounds, batches of 10² and 10³")
    ap.add_argument("--rounds", type=int, default=None, help="interleaved rounds per call (15)")
    ap.add_argument("--clock", choices=("cpu", "wall"), default="cpu",
                    help="per-call timings in CPU time of the process (default) or wall time")
    ap.add_argument("--batches", default=None,
                    help="comma-separated batch sizes (1000,10000); 'none': per call only")
    args = ap.parse_args(argv)
    warnings.simplefilter("ignore")
    rounds = args.rounds or (5 if args.quick else 15)
    batches = (100, 1000) if args.quick else (1000, 10_000)
    if args.batches is not None:
        batches = () if args.batches == "none" else tuple(int(x) for x in args.batches.split(","))
    rows, batch_rows = [], []
    t_start = time.perf_counter()
    for name, kind, frames, label in CASES:
        try:
            su = Setup(name, kind, frames, max(batches, default=1))
        except (ImportError, FileNotFoundError) as e:
            print(f"skipped {name} ({label}): {e}")
            continue
        case = f"{name} ({su.m.nv} dof), {label}"
        for op, pin_call, ours, theirs, check in su.operations():
            if op in ("A_g", "Ȧ_g v") and kind == "6d":
                continue  # (the centroidal terms do not depend on the contacts: once per robot)
            Q, V, T = su.Q[0], su.V[0], su.TAU[0]
            s = su.pin_states(1)[0]
            diff = check(ours(Q, V, T), s, theirs(s))
            ta, tb = rounds_of(lambda: ours(Q, V, T), lambda: theirs(s), rounds,
                               clock=cpu_per_call if args.clock == "cpu" else per_call)
            rows.append({"case": case, "op": op, "pinocchio": pin_call, **summary(ta, tb),
                         "max rel diff": diff})
            print(f"  {case}: {op} {rows[-1]['ratio']:.3g}", flush=True)
            for N in batches:
                QB, VB, TB = su.Q[:N], su.V[:N], su.TAU[:N]
                states = su.pin_states(N)
                res = ours(QB, VB, TB)
                k = N - 1
                mine = tuple(x[k] for x in res) if isinstance(res, tuple) else res[k]
                diff = check(mine, states[k], theirs(states[k]))
                reps = 3 if N >= 10_000 else 5
                ta, tb = [], []
                for _ in range(reps):
                    ta.append(per_call(lambda: ours(QB, VB, TB), 1))
                    t0 = time.perf_counter()
                    for st in states:
                        theirs(st)
                    tb.append(time.perf_counter() - t0)
                batch_rows.append({"case": case, "op": op, "N": N, **summary(ta, tb, per=N),
                                   "max rel diff": diff})
                print(f"  {case}: {op}, N = {N}: {batch_rows[-1]['ratio']:.3g}", flush=True)
    meta = {"quick": args.quick, "rounds": rounds, "batches": list(batches), "clock": args.clock,
            "pinocchio": __import__("pinocchio").__version__, "dqdyn": dqdyn.__version__,
            "wall_s": time.perf_counter() - t_start}
    print_table("per call: dqdyn vs Pinocchio (µs; ratio < 1: dqdyn faster)", rows)
    if batch_rows:
        print_table("batched: µs per state (dqdyn one call, Pinocchio a Python loop)", batch_rows)
    for key, rs in (("contact", rows), ("contact_batch", batch_rows)):
        if not rs:
            continue
        js, md = write_results(key, rs, meta)
        print(f"written {js} and {md}")
    return rows, batch_rows


if __name__ == "__main__":
    main()
