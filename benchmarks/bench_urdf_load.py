"""URDF loading time and memory against the number of links (not a test).

    python benchmarks/bench_urdf_load.py [--sizes 1000 10000 100000]

Writes serial chains of ``n`` revolute links (each with an ``<inertial>``, an ``<origin>``, an
``<axis>`` and a ``<limit>``, as robot URDFs have them) and loads each with
:func:`dqdyn.load_urdf` in a fresh interpreter, printing per size the wall time, the CPU time
of the process (``time.process_time``: on a shared machine the wall time also counts waiting
for a core) and the peak memory the load adds (resident set size, ``ru_maxrss``, after the
imports), then the fitted exponents ``k`` of ``time ∝ n^k`` and ``memory ∝ n^k`` (least squares
on the log-log points; 1 is linear).

``--pinocchio`` also loads each file with ``pinocchio.buildModelFromUrdf`` in a fresh interpreter
(the peer, same file, same machine), with the shell's stack limit or, with ``--unlimited-stack``,
none (its parser recurses once per link); a crash or a run past ``--timeout`` is reported as such.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

_CHILD = r"""
import json, resource, sys, time, warnings
import dqdyn
path = sys.argv[1]
rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
w, c = time.perf_counter(), time.process_time()
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    m = dqdyn.load_urdf(path)
w, c = time.perf_counter() - w, time.process_time() - c
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps(dict(nbodies=m.nbodies, wall=w, cpu=c, mem_kib=rss - rss0)))
"""


_PIN_CHILD = r"""
import sys, time
import pinocchio as pin
w = time.perf_counter()
m = pin.buildModelFromUrdf(sys.argv[1])
print(m.nq, time.perf_counter() - w)
"""


def pinocchio_load(path: str, n: int, timeout: float, unlimited_stack: bool) -> str:
    """Pinocchio's load time of ``path`` in a child process, or what stopped it."""
    pre = None
    if unlimited_stack:
        import resource

        def pre():
            resource.setrlimit(resource.RLIMIT_STACK, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
    try:
        r = subprocess.run([sys.executable, "-c", _PIN_CHILD, path], capture_output=True, text=True,
                           timeout=timeout, preexec_fn=pre)
    except subprocess.TimeoutExpired:
        return f"not done after {timeout:.0f} s"
    if r.returncode < 0:
        return f"crashed (signal {-r.returncode})"
    if r.returncode:
        return f"failed: {r.stderr.strip().splitlines()[-1] if r.stderr.strip() else r.returncode}"
    nq, t = r.stdout.split()
    assert int(nq) == n, (nq, n)
    return f"{float(t):7.2f} s wall"


def chain_urdf(n: int) -> str:
    """A serial chain of ``n`` revolute links below a base link."""
    out = ['<?xml version="1.0"?>\n<robot name="chain">\n<link name="l0"/>\n']
    for i in range(1, n + 1):
        out.append(
            f'<link name="l{i}"><inertial><origin xyz="0 0 0.05" rpy="0 0 0"/><mass value="1"/>'
            '<inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.005"/></inertial>'
            '<visual><geometry><cylinder radius="0.02" length="0.1"/></geometry></visual></link>\n'
            f'<joint name="j{i}" type="revolute"><parent link="l{i - 1}"/><child link="l{i}"/>'
            f'<origin xyz="0 0 0.1" rpy="0 {0.1 * (i % 3)} 0"/><axis xyz="0 0 1"/>'
            '<limit lower="-1" upper="1" effort="10" velocity="2"/></joint>\n')
    out.append("</robot>\n")
    return "".join(out)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000, 100000])
    ap.add_argument("--pinocchio", action="store_true", help="also time pinocchio.buildModelFromUrdf")
    ap.add_argument("--unlimited-stack", action="store_true",
                    help="run Pinocchio without a stack limit (it recurses once per link)")
    ap.add_argument("--timeout", type=float, default=600.0, help="seconds allowed per Pinocchio load")
    args = ap.parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory() as d:
        for n in args.sizes:
            path = os.path.join(d, f"chain{n}.urdf")
            with open(path, "w") as fh:
                fh.write(chain_urdf(n))
            r = subprocess.run([sys.executable, "-c", _CHILD, path], capture_output=True,
                               text=True, check=True)
            res = json.loads(r.stdout.strip().splitlines()[-1])
            assert res["nbodies"] == n, res
            size = os.path.getsize(path) / 2**20
            rows.append((n, res["wall"], res["cpu"], res["mem_kib"] / 1024, size))
            print(f"n = {n:>7}: load {res['wall']:7.2f} s wall, {res['cpu']:7.2f} s CPU, "
                  f"peak memory +{res['mem_kib'] / 1024:7.1f} MiB  (file {size:.1f} MiB, "
                  f"{1e6 * res['cpu'] / n:.0f} µs CPU per link)", flush=True)
            if args.pinocchio:
                print(f"            Pinocchio: {pinocchio_load(path, n, args.timeout, args.unlimited_stack)}",
                      flush=True)
    if len(rows) >= 2:
        n = np.log([r[0] for r in rows])
        for k, what in ((1, "wall time"), (2, "CPU time"), (3, "peak memory")):
            y = np.log([max(r[k], 1e-9) for r in rows])
            print(f"fitted exponent, {what} ∝ n^k: k = {np.polyfit(n, y, 1)[0]:.2f}")


if __name__ == "__main__":
    main()
