"""The call gate's entries against a ``GATE(...)`` call from Python, and the public functions'
compiled fronts against the Python functions behind them (README, Design, "entries", "fronts").

Per call, in one process: ``forward_kinematics`` and ``rnea`` through their gate entry
(``entry(model, q, ...)``: tables, sizes, workspace and kernel address held or read in C) and
through ``GATE(address, model.mi, model.mf, rows, cols, q, ..., model._scratch)`` with the same
kernel; with ``--fronts``, each public function that is a front (``gate.fast_front``) against
its ``__wrapped__`` Python function, the same arguments — on a one-body model (the fixed cost of
a call) and on Panda.  ``timeit``, minimum over rounds of 200 000 calls, and the median ratio of
interleaved rounds.

    python benchmarks/bench_gate_entry.py [--rounds 5] [--fronts]
"""
import argparse
import os
import statistics
import sys
import timeit
import warnings

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))

import dqdyn  # noqa: E402
from dqdyn._engine.gate import GATE  # noqa: E402
from dqdyn.dynamics import newton_euler
from dqdyn.kinematics import forward as kinematics  # noqa: E402


def models():
    mb = dqdyn.ModelBuilder("one")
    mb.add_body("b1", mass=1.0, inertia=np.eye(3))
    yield "one body", mb.build()
    try:
        from pinconv import ROBOTS, erd

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield "Panda", dqdyn.load_urdf(erd(ROBOTS["panda"][0]), mimic="independent")
    except Exception as e:  # noqa: BLE001 - example-robot-data missing: the one-body row only
        print(f"(Panda skipped: {e})")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--fronts", action="store_true",
                    help="each compiled front against its Python function instead")
    args = ap.parse_args(argv)
    if GATE is None:
        sys.exit("no compiled call gate in this build")
    for label, m in models():
        rng = np.random.default_rng(0)
        q = dqdyn.random_configuration(m, seed=rng)
        v, a = rng.normal(size=(2, m.nv))
        dqdyn.rnea(m, q, v, a)
        dqdyn.forward_kinematics(m, q)
        g = dict(m=m, q=q, v=v, a=a, GATE=GATE, E=newton_euler._RNEA_ENTRY, F=kinematics._FK_ENTRY,
                 ra=newton_euler._RNEA_C, fa=kinematics._FK_C)
        pairs = {
            "rnea": ("E(m, q, v, a)", "GATE(ra, m.mi, m.mf, m.nv, -1, q, v, a, m._scratch)"),
            "forward_kinematics": ("F(m, q)", "GATE(fa, m.mi, m.mf, m.mi.shape[0], 8, q)"),
        }
        labels = ("entry", "GATE(...)")
        if args.fronts:
            labels = ("front", "Python")
            g.update(fr=m.frame_names[-1], X=np.empty((m.nbodies + 1, 8)), dq=dqdyn)
            calls = {"rnea": "(m, q, v, a)", "aba": "(m, q, v, a)", "mass_matrix": "(m, q)",
                     "coriolis_matrix": "(m, q, v)", "gravity": "(m, q)",
                     "nonlinear_effects": "(m, q, v)", "mass_matrix_inverse": "(m, q)",
                     "forward_kinematics": "(m, q)", "forward_kinematics(out=)": "(m, q, out=X)",
                     "joint_jacobians": "(m, q)", "twist_jacobian": "(m, q, fr, frame='body')",
                     "frame_pose": "(m, q, fr)"}
            pairs = {k: (f"dq.{k.split('(')[0]}{c}", f"dq.{k.split('(')[0]}.__wrapped__{c}")
                     for k, c in calls.items()}
            dqdyn.twist_jacobian(m, q, m.frame_names[-1])  # (the frame name in the model's cache)
        for name, (new, old) in pairs.items():
            tn, to, ratio = [], [], []
            for _ in range(args.rounds):
                a_ = min(timeit.repeat(new, globals=g, number=200_000, repeat=3)) / 200_000
                b_ = min(timeit.repeat(old, globals=g, number=200_000, repeat=3)) / 200_000
                tn.append(a_ * 1e6)
                to.append(b_ * 1e6)
                ratio.append(a_ / b_)
            print(f"{label:9s} {name:24s} {labels[0]} {min(tn):.3f} us  {labels[1]} {min(to):.3f} us  "
                  f"{labels[0]} / {labels[1]} {statistics.median(ratio):.2f} "
                  f"[{min(ratio):.2f}-{max(ratio):.2f}]", flush=True)


if __name__ == "__main__":
    main()
