"""Modular (interconnection-graph) inverse dynamics of the 38-DoF, 9-subsystem robot against the
monolithic ``rnea``, in one run.

    python benchmarks/bench_modular.py [--quick]

Contenders (one state per call, interleaved A/B, median µs; ratios against monolithic
``dqdyn.rnea`` measured in the same rounds):

* ``graph.rnea`` (the default) — the sweeps in one compiled call through the C gate
  (``_graph_kernel.graph_rnea_kernel``: per subsystem one dqNE forward recursion on the way out,
  from its world row set to the connection frame's motion and gravity, one backward recursion on
  the way back);
* ``graph.rnea(compiled=False)`` — the same sweeps orchestrated from Python (9 dqNE calls for
  the twists + 3 more with the successors' wrenches, plus 5 small compiled calls per
  connection), the route a graph with black boxes takes;
* ``graph.evaluate`` — the full A̲ (38 × 9 wrench blocks) on a fresh state (no cache hits);
* ``graph.evaluate`` — the same state again (every W_i cached: only the Γ̊ blocks rebuilt).

Batched: per-state time of ``graph.evaluate`` / ``graph.rnea`` on 1000 states against batched
``rnea``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))

import dqdyn
from dqdyn.reproduce import robots
from dqdyn.reproduce.routes import tree38_graph

from harness import best_time, interleaved, print_table, write_results


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args(argv)
    rounds = 5 if args.quick else 15
    m = robots.tree38()
    g, iq, iv = tree38_graph(m)
    rng = np.random.default_rng(0)
    q, v, a = rng.normal(size=(3, 38))
    qg, vg, ag = q[iq].copy(), v[iv].copy(), a[iv].copy()
    assert np.abs(g.rnea(qg, vg, ag) - dqdyn.rnea(m, q, v, a)[iv]).max() < 1e-10
    state = {"k": 0}

    def fresh():
        state["k"] += 1
        qg[0] = 0.1 * (state["k"] % 7)
        return g.evaluate(qg, vg, ag)

    mono = lambda: dqdyn.rnea(m, q, v, a)
    rows = []
    cont = [("graph.rnea (one compiled call, the default)", lambda: g.rnea(qg, vg, ag)),
            ("graph.rnea(compiled=False) (Python sweeps)", lambda: g.rnea(qg, vg, ag, compiled=False))]
    cont += [("graph.evaluate, A̲, fresh state", fresh),
             ("graph.evaluate, A̲, cached W_i", lambda: g.evaluate(qg, vg, ag))]
    for label, fn in cont:
        tg, tm = interleaved(fn, mono, rounds=rounds)
        rows.append({"contender": label, "graph (µs)": tg, "monolithic rnea (µs)": tm,
                     "ratio": tg / tm})
    n = 200 if args.quick else 1000
    Q, V, A = rng.normal(size=(3, n, 38))
    tb = best_time(lambda: g.evaluate(Q[:, iq], V[:, iv], A[:, iv]), repeat=3)
    tr = best_time(lambda: dqdyn.rnea(m, Q, V, A), repeat=3)
    rows.append({"contender": f"graph.evaluate, batch of {n} (per state)", "graph (µs)": tb / n * 1e6,
                 "monolithic rnea (µs)": tr / n * 1e6, "ratio": tb / tr})
    print_table("38-DoF robot, 9 subsystems: modular vs monolithic inverse dynamics", rows)
    write_results("bench_modular", rows, {"quick": args.quick, "time": time.ctime()})


if __name__ == "__main__":
    main()
