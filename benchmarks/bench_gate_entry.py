"""The call gate's entries against a ``GATE(...)`` call from Python (README, Design, "entries").

Per call, in one process: ``forward_kinematics`` and ``rnea`` through their gate entry
(``entry(model, q, ...)``: tables, sizes, workspace and kernel address held or read in C) and
through ``GATE(address, model.mi, model.mf, rows, cols, q, ..., model._scratch)`` with the same
kernel, on a one-body model (the fixed cost of a call) and on Panda.  ``timeit``, minimum over
rounds of 200 000 calls, and the median ratio of interleaved rounds.

    python benchmarks/bench_gate_entry.py [--rounds 5]
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
from dqdyn.algorithms import kinematics, newton_euler  # noqa: E402
from dqdyn.algorithms.gate import GATE  # noqa: E402


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
        for name, (new, old) in pairs.items():
            tn, to, ratio = [], [], []
            for _ in range(args.rounds):
                a_ = min(timeit.repeat(new, globals=g, number=200_000, repeat=3)) / 200_000
                b_ = min(timeit.repeat(old, globals=g, number=200_000, repeat=3)) / 200_000
                tn.append(a_ * 1e6)
                to.append(b_ * 1e6)
                ratio.append(a_ / b_)
            print(f"{label:9s} {name:19s} entry {min(tn):.3f} us  GATE(...) {min(to):.3f} us  "
                  f"entry / GATE {statistics.median(ratio):.2f} [{min(ratio):.2f}-{max(ratio):.2f}]")


if __name__ == "__main__":
    main()
