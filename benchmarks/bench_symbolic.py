"""Symbolic dynamics and elastic joints ([Mladenova, §7–8]): generation time of M, C, g for 3-, 6- and
7-DoF arms; per-call evaluation of the generated numpy and C code against dqdyn's compiled
kernels (mass_matrix + coriolis_matrix + gravity, measured interleaved in the same process);
elastic-joint inverse / forward dynamics per call on a 7-DoF arm.

    PYTHONPATH=src python benchmarks/bench_symbolic.py

Not a test: prints a table.  Needs sympy; the C column needs a C compiler (``cc``).
"""

from __future__ import annotations

import ctypes
import os
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
import dqdyn  # noqa: E402
from dqdyn.reproduce.elastic import arm7, elastic_arm7, reference7  # noqa: E402
from dqdyn.symbolic import dynamics  # noqa: E402

from harness import interleaved  # noqa: E402


def arms():
    out = [("serial chain 3", dqdyn.serial_chain(3, seed=0))]
    try:
        sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests"))
        from pinconv import ROBOTS, erd

        out.append(("UR5 (6)", dqdyn.load_urdf(erd(ROBOTS["ur5"][0]))))
    except BaseException:
        out.append(("serial chain 6", dqdyn.serial_chain(6, seed=0)))
    m7, label = arm7()
    out.append((label.split(" (")[0] + " (7)", m7))
    return out


def c_function(d, tmp):
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        return None, 0.0
    src = os.path.join(tmp, f"{id(d)}.c")
    lib = os.path.join(tmp, f"lib{id(d)}.so")
    with open(src, "w") as fh:
        fh.write(d.c_source("dyn"))
    t0 = time.perf_counter()
    subprocess.run([cc, "-O2", "-shared", "-fPIC", "-o", lib, src, "-lm"], check=True)
    tc = time.perf_counter() - t0
    so = ctypes.CDLL(lib)
    P = ctypes.POINTER(ctypes.c_double)
    so.dyn.argtypes = [P] * 5
    so.dyn.restype = None
    n = d.model.nv
    bufs = [np.zeros(d.model.nq), np.zeros(n), np.zeros((n, n)), np.zeros((n, n)), np.zeros(n)]
    ptrs = [b.ctypes.data_as(P) for b in bufs]

    def call(q, v):
        bufs[0][:] = q
        bufs[1][:] = v
        so.dyn(*ptrs)
        return bufs[2], bufs[3], bufs[4]

    return call, tc


def main():
    rows = []
    rng = np.random.default_rng(0)
    with tempfile.TemporaryDirectory() as tmp:
        for name, m in arms():
            t0 = time.perf_counter()
            d = dynamics(m)
            tgen = time.perf_counter() - t0
            t0 = time.perf_counter()
            f = d.numpy_function()
            tpy = time.perf_counter() - t0
            t0 = time.perf_counter()
            cfun, tcc = c_function(d, tmp)
            tcs = time.perf_counter() - t0 - tcc
            q, v = rng.uniform(-1, 1, m.nq), rng.normal(size=m.nv)

            def kernels():
                dqdyn.mass_matrix(m, q)
                dqdyn.coriolis_matrix(m, q, v)
                dqdyn.gravity(m, q)

            t_py, t_k = interleaved(lambda: f(q, v), kernels)
            t_c = interleaved(lambda: cfun(q, v), kernels)[0] if cfun else float("nan")
            rows.append((name, m.nv, len(d.program), tgen, tpy, tcs, tcc, t_py, t_c, t_k))
    print("| model | nv | program steps | build M, C, g (s) | numpy source (s) | C source (s) | cc -O2 (s) "
          "| generated numpy (µs/call) | generated C via ctypes (µs/call) | dqdyn kernels M + C + g (µs/call) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r[0]} | {r[1]} | {r[2]} | {r[3]:.1f} | {r[4]:.1f} | {r[5]:.1f} | {r[6]:.1f} | "
              f"{r[7]:.0f} | {r[8]:.1f} | {r[9]:.1f} |")

    em = elastic_arm7()
    ref = reference7(em.n)
    q, v, a, j, s = ref(0.3)
    r = em.inverse_dynamics(q, v, a, j, s)
    x, xd = np.r_[q, r["theta"]], np.r_[v, r["theta_d"]]
    u = r["u"]
    ctrl = em.feedback_linearizing_control(ref)
    t_inv, t_rnea = interleaved(lambda: em.inverse_dynamics(q, v, a, j, s),
                                lambda: dqdyn.rnea(em.link_model, q, v, a))
    t_fr, t_aba = interleaved(lambda: em.forward_dynamics(x, xd, u),
                              lambda: dqdyn.aba(em.link_model, q, v, u))
    t_ff, _ = interleaved(lambda: em.forward_dynamics(x, xd, u, model="full"),
                          lambda: dqdyn.aba(em.link_model, q, v, u))
    t_ctrl, _ = interleaved(lambda: ctrl(0.3, x, xd), lambda: dqdyn.aba(em.link_model, q, v, u))
    print()
    print(f"| elastic 7-DoF ({em.model.name}) | µs/call | vs rigid peer (µs/call) |")
    print("|---|---|---|")
    print(f"| inverse dynamics (flat: q…q⁽⁴⁾ → θ, θ̇, θ̈, u; Taylor RNEA) | {t_inv:.0f} | rnea {t_rnea:.1f} |")
    print(f"| forward dynamics, reduced (Spong) | {t_fr:.0f} | aba {t_aba:.1f} |")
    print(f"| forward dynamics, full (rotors in the tree) | {t_ff:.0f} | aba {t_aba:.1f} |")
    print(f"| feedback-linearising control law | {t_ctrl:.0f} | aba {t_aba:.1f} |")


if __name__ == "__main__":
    main()
