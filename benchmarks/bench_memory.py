"""A batch larger than memory: 10⁷ states of a 7-DoF arm through ``rnea`` and ``aba``.

    python benchmarks/bench_memory.py [--states N] [--dir DIR] [--quick]

The inputs (q, v, a: 3 × 560 MB for 10⁷ xArm7 states) and the output live in ``np.memmap``
files under ``DIR`` (default: a temporary directory), written chunk by chunk; dqdyn is called
once per function with ``out=`` a memmap.  Reported: wall time, states per second, and the peak
of the process's anonymous memory (``RssAnon`` of /proc/self/status, sampled every 5 ms) above
its level before the call — what the call needs besides the file-backed pages the kernel can
evict.  dqdyn processes the batch in chunks of ``dqdyn.config.get_batch_chunk()`` states.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import threading
import time
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests"))

import dqdyn  # noqa: E402

from harness import print_table, write_results  # noqa: E402


def _rss_anon() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("RssAnon:"):
                return int(line.split()[1]) * 1024
    return 0


class _Peak:
    """Samples RssAnon in a thread while the ``with`` block runs."""

    def __enter__(self):
        self.base = _rss_anon()
        self.peak = self.base
        self._stop = False
        self._t = threading.Thread(target=self._run, daemon=True)
        self._t.start()
        return self

    def _run(self):
        while not self._stop:
            self.peak = max(self.peak, _rss_anon())
            time.sleep(0.005)

    def __exit__(self, *exc):
        self._stop = True
        self._t.join()
        self.peak = max(self.peak, _rss_anon())


def _arm():
    try:
        from pinconv import ROBOTS, erd

        return dqdyn.load_urdf(erd(ROBOTS["xarm7"][0])), "xArm7"
    except Exception:  # example-robot-data not installed
        return dqdyn.serial_chain(7), "7-link chain"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--states", type=int, default=10_000_000)
    ap.add_argument("--dir", default=None)
    ap.add_argument("--quick", action="store_true", help="10⁶ states instead of 10⁷")
    args = ap.parse_args(argv)
    if args.quick:
        args.states = min(args.states, 1_000_000)
    warnings.simplefilter("ignore")
    m, label = _arm()
    N = args.states
    d = args.dir or tempfile.mkdtemp(prefix="dqdyn_mem_")
    mm = lambda name, n: np.lib.format.open_memmap(  # noqa: E731
        os.path.join(d, name + ".npy"), mode="w+", shape=(N, n))
    Q, V, A, OUT = mm("q", m.nq), mm("v", m.nv), mm("a", m.nv), mm("out", m.nv)
    rng = np.random.default_rng(0)
    step = 1 << 18
    for s in range(0, N, step):
        e = min(N, s + step)
        Q[s:e] = dqdyn.random_configuration(m, size=e - s, seed=rng)
        V[s:e] = rng.normal(size=(e - s, m.nv))
        A[s:e] = rng.normal(size=(e - s, m.nv))
    for X in (Q, V, A, OUT):
        X.flush()
    dqdyn.rnea(m, Q[:10], V[:10], A[:10])  # compile / load outside the measurement
    dqdyn.aba(m, Q[:10], V[:10], A[:10])
    rows = []
    for fn, call in (("rnea", lambda: dqdyn.rnea(m, Q, V, A, out=OUT)),
                     ("aba", lambda: dqdyn.aba(m, Q, V, A, out=OUT))):
        with _Peak() as p:
            t0 = time.perf_counter()
            call()
            t = time.perf_counter() - t0
        k = N // 2
        check = fn == "rnea" and np.allclose(OUT[k], dqdyn.rnea(m, Q[k], V[k], A[k]))
        check = check or (fn == "aba" and np.allclose(OUT[k], dqdyn.aba(m, Q[k], V[k], A[k])))
        rows.append({"function": fn, "robot": label, "states": N, "seconds": t,
                     "states_per_s": N / t, "inputs_GB": (Q.nbytes + V.nbytes + A.nbytes) / 1e9,
                     "peak_anon_MB": (p.peak - p.base) / 1e6, "spot_check": bool(check)})
    print_table(f"{N} states through memmaps, chunks of {dqdyn.config.get_batch_chunk()}", rows)
    js, md = write_results("memory", rows, {"states": N, "threads": dqdyn.get_num_threads()})
    print(f"written {js} and {md}")
    if args.dir is None:
        for name in ("q", "v", "a", "out"):
            os.remove(os.path.join(d, name + ".npy"))
        os.rmdir(d)
    return rows


if __name__ == "__main__":
    main()
