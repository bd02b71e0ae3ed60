"""Timing harness shared by the benchmark scripts (plain Python, no pytest).

Per-call timings interleave the two contenders (A B A B …) in one process so that machine noise
hits both alike, and report the median of the per-round means.  Ratios are dqdyn / Pinocchio:
below 1 means dqdyn is faster.
"""

from __future__ import annotations

import json
import os
import platform
import statistics
import time
from collections.abc import Callable

RESULTS = os.path.join(os.path.dirname(__file__), "results")


def per_call(fn: Callable[[], object], number: int) -> float:
    """Mean seconds per call over ``number`` calls."""
    t0 = time.perf_counter()
    for _ in range(number):
        fn()
    return (time.perf_counter() - t0) / number


def interleaved(a: Callable, b: Callable, *, rounds: int = 15, target_s: float = 0.02) -> tuple[float, float]:
    """Median per-call time (µs) of ``a`` and ``b``, measured alternately."""
    a()
    b()
    # calibrate the number of calls per round so one round lasts about target_s
    n = 1
    while per_call(a, n) * n < target_s / 4 and n < 1_000_000:
        n *= 4
    ta, tb = [], []
    for _ in range(rounds):
        ta.append(per_call(a, n))
        tb.append(per_call(b, n))
    return statistics.median(ta) * 1e6, statistics.median(tb) * 1e6


def best_time(fn: Callable[[], object], repeat: int = 5, pause: float = 0.5) -> float:
    """Best wall time (s) of ``repeat`` calls of a batched ``fn`` (after one warm-up call).

    Sleeps ``pause`` seconds first: OpenMP's and numba's worker threads busy-wait for a while
    after a parallel region, and on few cores they would steal the CPU of the next contender.
    """
    time.sleep(pause)
    fn()
    return min(per_call(fn, 1) for _ in range(repeat))


def throughput(fn: Callable[[], object], n_states: int, repeat: int = 3) -> float:
    """States per second of a batched call (best of ``repeat``)."""
    fn()
    best = min(per_call(fn, 1) for _ in range(repeat))
    return n_states / best


def machine() -> dict:
    return {
        "python": platform.python_version(),
        "machine": platform.machine(),
        "processor": platform.processor() or platform.uname().machine,
        "cpus": os.cpu_count(),
    }


def write_results(name: str, rows: list[dict], meta: dict | None = None) -> tuple[str, str]:
    """Write ``rows`` as JSON and Markdown under benchmarks/results/; returns the paths."""
    os.makedirs(RESULTS, exist_ok=True)
    js = os.path.join(RESULTS, f"{name}.json")
    md = os.path.join(RESULTS, f"{name}.md")
    with open(js, "w") as f:
        json.dump({"machine": machine(), "meta": meta or {}, "rows": rows}, f, indent=2)
    if rows:
        keys = list(rows[0])
        with open(md, "w") as f:
            f.write("| " + " | ".join(keys) + " |\n|" + "---|" * len(keys) + "\n")
            for r in rows:
                f.write("| " + " | ".join(_fmt(r[k]) for k in keys) + " |\n")
    return js, md


def _fmt(x) -> str:
    if isinstance(x, float):
        return f"{x:.3g}"
    return str(x)


def print_table(title: str, rows: list[dict]) -> None:
    try:
        from rich.console import Console
        from rich.table import Table

        t = Table(title=title)
        for k in rows[0]:
            t.add_column(k, no_wrap=True)
        for r in rows:
            t.add_row(*(_fmt(r[k]) for k in rows[0]))
        # as wide as the table needs: a terminal narrower than the table must not cut columns
        # (the terminal wraps the long lines instead)
        need = Console(width=100_000).measure(t).maximum
        con = Console()
        Console(width=max(con.width, need)).print(t)
    except ImportError:  # pragma: no cover
        print(title)
        for r in rows:
            print(r)
