"""Batched throughput by numba threading layer: OpenMP against TBB (dqdyn's default, thread- and
fork-safe) and the lock-guarded workqueue (dqdyn's fallback without TBB).

    python benchmarks/bench_threading.py [--rounds 5] [--repeat 5] [--n 100000]

Panda (example-robot-data, 9 DoF with the finger joints independent): ``dqdyn.rnea`` and
``dqdyn.aba`` on one batch of ``--n`` random states.  The threading layer is fixed when numba
starts its threads, so every (round, layer) runs in a fresh subprocess with
``NUMBA_THREADING_LAYER`` set; the layers alternate within each round so that the noise of a
shared machine hits all of them alike.  Each subprocess reports the best of ``--repeat`` calls;
the table gives, per layer, the median over rounds of the states per second, its spread
(min–max over rounds), and the median of the per-round ratios against OpenMP.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

CHILD = r"""
import json, sys, time, warnings
sys.path.insert(0, {tests!r})
import numpy as np, dqdyn
from pinconv import ROBOTS, erd
warnings.simplefilter("ignore")
m = dqdyn.load_urdf(erd(ROBOTS["panda"][0]), mimic="independent")
N, repeat = {n}, {repeat}
Q = dqdyn.random_configuration(m, size=N, seed=1)
rng = np.random.default_rng(0)
V, A = rng.normal(size=(2, N, m.nv))
res = {{"layer": dqdyn.config.threading_layer(), "threads": dqdyn.get_num_threads()}}
for name, fn in (("rnea", lambda: dqdyn.rnea(m, Q, V, A)), ("aba", lambda: dqdyn.aba(m, Q, V, A))):
    fn()
    best = np.inf
    for _ in range(repeat):
        time.sleep(0.2)  # let the previous region's spinning workers go idle
        t = time.perf_counter(); fn(); best = min(best, time.perf_counter() - t)
    res[name] = N / best
print("RESULT " + json.dumps(res))
"""


def run_child(layer: str, n: int, repeat: int) -> dict:
    env = dict(os.environ)
    env["NUMBA_THREADING_LAYER"] = layer
    src = os.path.join(HERE, "..", "src")
    env["PYTHONPATH"] = src + os.pathsep + env.get("PYTHONPATH", "")
    code = CHILD.format(tests=os.path.join(HERE, "..", "tests"), n=n, repeat=repeat)
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    for line in r.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[7:])
    raise RuntimeError(f"layer {layer}: {r.stderr[-2000:]}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--layers", default="omp,tbb,workqueue")
    args = ap.parse_args(argv)
    layers = args.layers.split(",")
    runs = {k: [] for k in layers}
    for r in range(args.rounds):
        order = layers[r % len(layers):] + layers[: r % len(layers)]  # rotate the order
        for layer in order:
            res = run_child(layer, args.n, args.repeat)
            if res["layer"] != layer:
                raise RuntimeError(f"asked for {layer}, numba started {res['layer']}")
            runs[layer].append(res)
            print(f"round {r} {layer:9s} rnea {res['rnea']:.3e}/s  aba {res['aba']:.3e}/s",
                  flush=True)
    print(f"\nPanda, N = {args.n} states, {runs[layers[0]][0]['threads']} threads, "
          f"{args.rounds} rounds (best of {args.repeat} calls each)\n")
    print("| layer | rnea states/s, median (min–max) | ratio vs omp | aba states/s, median (min–max) | ratio vs omp |")
    print("|---|---|---|---|---|")
    for layer in layers:
        cells = []
        for fn in ("rnea", "aba"):
            xs = [x[fn] for x in runs[layer]]
            cell = f"{statistics.median(xs):.3g} ({min(xs):.3g}–{max(xs):.3g})"
            if "omp" in runs:
                ratios = [a[fn] / b[fn] for a, b in zip(runs[layer], runs["omp"])]
                rat = f"{statistics.median(ratios):.2f} ({min(ratios):.2f}–{max(ratios):.2f})"
            else:
                rat = "–"
            cells += [cell, rat]
        print(f"| {layer} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
