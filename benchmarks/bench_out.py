"""Single-state calls with ``out=`` against the allocating call, Panda (same process, alternated).

    python benchmarks/bench_out.py

Best of 5 × 20,000 calls each, median of 3 alternations; µs per call and the ratio out= /
allocating (below 1: ``out=`` cheaper).  ``out=`` of one state goes through the C call gate
(Design, "Into the caller's array").
"""

import os
import statistics
import sysconfig
import time
import warnings

import numpy as np

warnings.simplefilter("ignore")
import dqdyn

p = os.path.join(sysconfig.get_paths()["purelib"], "cmeel.prefix", "share", "example-robot-data", "robots", "panda_description", "urdf", "panda.urdf")
m = dqdyn.load_urdf(p, mimic="independent")
q = dqdyn.random_configuration(m, seed=0)
v = np.random.default_rng(0).normal(size=m.nv)
a = v.copy()
t = np.empty(m.nv)
M = np.empty((m.nv, m.nv))
def best(f, n=20000, rep=5):
    ts = []
    for _ in range(rep):
        t0 = time.perf_counter()
        for _ in range(n):
            f()
        ts.append((time.perf_counter() - t0) / n * 1e6)
    return min(ts)
cases = [("gravity", lambda: dqdyn.gravity(m, q), lambda: dqdyn.gravity(m, q, out=t)),
         ("nonlinear_effects", lambda: dqdyn.nonlinear_effects(m, q, v), lambda: dqdyn.nonlinear_effects(m, q, v, out=t)),
         ("rnea", lambda: dqdyn.rnea(m, q, v, a), lambda: dqdyn.rnea(m, q, v, a, out=t)),
         ("aba", lambda: dqdyn.aba(m, q, v, a), lambda: dqdyn.aba(m, q, v, a, out=t)),
         ("mass_matrix", lambda: dqdyn.mass_matrix(m, q), lambda: dqdyn.mass_matrix(m, q, out=M)),
         ("coriolis_matrix", lambda: dqdyn.coriolis_matrix(m, q, v), lambda: dqdyn.coriolis_matrix(m, q, v, out=M))]
for name, f, g in cases:
    f()
    g()
    ra, rb = [], []
    for _ in range(3):
        ra.append(best(f))
        rb.append(best(g))
    print(f"{name:<18s} allocating {statistics.median(ra):.2f} µs   out= {statistics.median(rb):.2f} µs   ratio {statistics.median(rb) / statistics.median(ra):.2f}")
