"""Where the install's kernel compile goes: numba compile time per kernel, for precompile groups.

Runs each group of :mod:`dqdyn._engine.precompile` in its own process with the kernel cache off
(``DQDYN_NO_CACHE=1``: everything compiles) and listens to numba's ``numba:compile`` events:
per kernel, its *self* time (its compile minus the kernels compiled inside it), the part of it
spent under numba's LLVM lock (LLVM optimising and emitting code), how many times it was
compiled (one per signature: two for one kernel is what ``dqdyn._engine.jit``, "Literals", is about),
and which kernel or Python line asked for it.  Not a timing to compare across machines: a map of
where the seconds are.

    python benchmarks/profile_compile.py [GROUP ...] [--jobs 2] [--top 15]
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor


def _in_process(group: str) -> dict:
    os.environ["DQDYN_NO_CACHE"] = "1"
    from numba.core import event

    stack: list = []
    self_t: collections.Counter = collections.Counter()
    count: collections.Counter = collections.Counter()
    parents: collections.Counter = collections.Counter()
    llvm: collections.Counter = collections.Counter()  # seconds under numba's LLVM lock

    def caller() -> str:
        if stack:
            return stack[-1][0]
        f = sys._getframe(2)
        skip = ("numba", "jit.py", "event", "contextlib")
        while f is not None and any(s in f.f_code.co_filename for s in skip):
            f = f.f_back
        if f is None:
            return "?"
        return f"{f.f_code.co_filename.split('src/')[-1]}:{f.f_lineno}"

    class Listener(event.Listener):
        def on_start(self, ev):
            fn = getattr(ev.data.get("dispatcher"), "py_func", None)
            name = f"{fn.__module__}.{fn.__qualname__}" if fn else "?"
            parents[(name, caller())] += 1
            stack.append([name, time.perf_counter(), 0.0])

        def on_end(self, ev):
            name, t0, inner = stack.pop()
            dt = time.perf_counter() - t0
            self_t[name] += dt - inner
            count[name] += 1
            if stack:
                stack[-1][2] += dt

    class LLVM(event.Listener):
        def on_start(self, ev):
            self.t0 = time.perf_counter()

        def on_end(self, ev):
            llvm[stack[-1][0] if stack else "?"] += time.perf_counter() - self.t0

    event.register("numba:compile", Listener())
    event.register("numba:llvm_lock", LLVM())
    from dqdyn._engine import precompile

    t0 = time.perf_counter()
    precompile._run_group(group)
    return {"group": group, "wall": time.perf_counter() - t0,
            "kernels": [[k, self_t[k], count[k], llvm[k]] for k in self_t],
            "parents": [[k, p, n] for (k, p), n in parents.items()]}


def main(argv=None) -> int:
    from dqdyn._engine.precompile import GROUPS

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("groups", nargs="*", help=f"precompile groups (default: all of {list(GROUPS)})")
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--top", type=int, default=15)
    p.add_argument("--in-process", help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    if a.in_process:
        print(json.dumps(_in_process(a.in_process)))
        return 0

    unknown = [g for g in a.groups if g not in GROUPS]
    if unknown:
        p.error(f"unknown groups {unknown}; choose from {list(GROUPS)}")

    def run(group):
        out = subprocess.run([sys.executable, __file__, "--in-process", group], capture_output=True,
                             text=True, check=True)
        return json.loads(out.stdout.strip().splitlines()[-1])

    with ThreadPoolExecutor(a.jobs) as pool:
        results = list(pool.map(run, a.groups or list(GROUPS)))
    total = llvm_all = 0.0
    for r in results:
        rows = sorted(r["kernels"], key=lambda x: -x[1])
        total += sum(x[1] for x in rows)
        by = collections.defaultdict(list)
        for k, parent, n in r["parents"]:
            by[k].append(f"{parent.replace('dqdyn.', '')} ×{n}")
        llvm_all += sum(x[3] for x in rows)
        print(f"\n{r['group']}: {r['wall']:.0f} s in the process, {sum(x[1] for x in rows):.0f} s compiling")
        print(f"  {'self s':>7} {'llvm s':>6} {'times':>5}  kernel  <- asked for by")
        for k, s, n, lv in rows[: a.top]:
            print(f"  {s:7.1f} {lv:6.1f} {n:5d}  {k.replace('dqdyn.', '')}  <- {'; '.join(by[k])[:160]}")
    print(f"\ncompile self time, all groups: {total:.0f} s, of which under numba's LLVM lock "
          f"{llvm_all:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
