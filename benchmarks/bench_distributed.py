"""Panda states through ``rnea`` and ``aba`` into Zarr on 1 and 2 Dask worker processes.

    python benchmarks/bench_distributed.py [--states N] [--quick] [--chunk C] [--dir DIR]
                                           [--workers 1,2] [--threads T] [--repeat R]
                                           [--scheduler ADDRESS] [--uncompressed]

Inputs (q, v, a; ``a`` doubles as τ for ``aba``) are written once, chunk by chunk, to a Zarr store
and to ``.npy`` files under ``DIR``.  Measured, best of ``R`` runs each:

* ``in-process``: one batched dqdyn call over the ``.npy`` memmaps with ``out=`` a memmap, numba
  threads = the cores (dqdyn's own out-of-core path, no Dask, no Zarr).  The memmap is made once
  and reused by every run, so from the second run on its pages are already mapped: the call
  writes its result into memory the process holds;
* ``in-process, new array``: the same call returning its result (a new array each run, as a plain
  ``dqdyn.rnea(model, Q, V, A)`` does): the result's pages are new memory each time, as a Dask
  run's Zarr chunks are new files;
* ``in-process, new file``: the same call with ``out=`` a new ``.npy`` memmap made for each run
  (dqdyn's out-of-core path writing a new dataset to disk, the in-process counterpart of a Dask
  run writing new Zarr chunks): the storage-to-storage baseline;
* ``in-process+zarr``: the same chunks read from and written to Zarr in a plain loop (the I/O
  and compression cost without Dask);
* ``dask wN``: ``dqdyn.distributed.apply`` on ``da.from_zarr`` inputs, ``.to_zarr`` of the
  result, on a LocalCluster of N single-threaded worker processes, each with
  ``cores // N`` numba threads (or on ``--scheduler``);
* ``dask wN npy``: the same, with the inputs read as the in-process call reads them, memory-mapped
  ``.npy`` files (one per chunk: ``da.to_npy_stack`` / ``da.from_npy_stack(mmap_mode="r")``; each
  worker maps its own chunks), the result still written to Zarr (``--dask-inputs`` picks).

Reported: seconds (best, and median [min–max] of the ``R`` runs), states/s, the scaling from the
first to the last worker count, and the overhead of each run against the in-process batched call on
the same cores — also as the median [min–max] over rounds of the ratio to the two in-process calls
run just before it (the four interleaved, round by round, with the cluster up and idle).  A spot check compares stored
results with dqdyn's in-process call bit for bit.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))

import dqdyn

from harness import print_table, write_results


def _panda():
    import sysconfig

    p = os.path.join(sysconfig.get_paths()["purelib"], "cmeel.prefix", "share", "example-robot-data",
                     "robots", "panda_description", "urdf", "panda.urdf")
    if os.path.exists(p):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return dqdyn.load_urdf(p, mimic="independent"), "panda"
    return dqdyn.serial_chain(7), "7-link chain"  # example-robot-data not installed


ZARR_KW = {}  # {"compressors": None} with --uncompressed


def _inputs(m, N, chunk, d):
    import zarr

    g = zarr.open_group(os.path.join(d, "in.zarr"), mode="w")
    mm = {}
    for k, n in (("q", m.nq), ("v", m.nv), ("a", m.nv)):
        g.create_array(k, shape=(N, n), chunks=(chunk, n), dtype="f8", **ZARR_KW)
        mm[k] = np.lib.format.open_memmap(os.path.join(d, k + ".npy"), mode="w+", shape=(N, n))
    for j, s in enumerate(range(0, N, chunk)):
        e = min(N, s + chunk)
        rng = np.random.default_rng([0, j])
        x = {"q": dqdyn.random_configuration(m, size=e - s, seed=rng),
             "v": rng.normal(size=(e - s, m.nv)), "a": rng.normal(size=(e - s, m.nv))}
        for k in x:
            g[k][s:e] = x[k]
            mm[k][s:e] = x[k]
    for x in mm.values():
        x.flush()
    return g, mm


def _cpu_self() -> float:
    import resource

    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def _once(fn, client=None):
    """Wall time of one run and its CPU seconds (this process, plus every worker process of
    ``client``): on a shared machine CPU time is the steadier measure."""
    time.sleep(0.5)  # let busy-waiting thread pools go idle
    c0 = _cpu_self() + (sum(client.run(_cpu_self).values()) if client else 0.0)
    t0 = time.perf_counter()
    fn()
    t = time.perf_counter() - t0
    return t, _cpu_self() + (sum(client.run(_cpu_self).values()) if client else 0.0) - c0


def _best(fn, repeat, client=None):
    """Best wall time of ``repeat`` runs and the CPU seconds of that run (:func:`_once`)."""
    return min(_once(fn, client) for _ in range(repeat))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--states", type=int, default=10_000_000)
    ap.add_argument("--quick", action="store_true", help="10⁶ states instead of 10⁷")
    ap.add_argument("--chunk", type=int, default=1 << 17)
    ap.add_argument("--dir", default=None)
    ap.add_argument("--workers", default="1,2")
    ap.add_argument("--threads", type=int, default=None,
                    help="numba threads per worker (default: cores // workers); 1 measures how "
                         "the work scales with worker processes, one core each")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--functions", default="rnea,aba")
    ap.add_argument("--scheduler", default=None, help="a running Dask scheduler instead")
    ap.add_argument("--uncompressed", action="store_true",
                    help="Zarr arrays without a compressor (random states do not compress)")
    ap.add_argument("--dask-inputs", default="zarr,npy",
                    help="where the Dask runs read q, v, a: zarr (da.from_zarr), npy (memory-mapped "
                         ".npy files, one per chunk, da.from_npy_stack), or both")
    ap.add_argument("--writers", default="to_zarr,apply",
                    help="how the Dask runs write the result: to_zarr (dqdyn.distributed.to_zarr, "
                         "one task per chunk) and/or apply (dd.apply(...).to_zarr, Dask's store "
                         "tasks)")
    ap.add_argument("--idle", type=float, default=10.0,
                    help="seconds of idle cluster measured for its background CPU rate")
    args = ap.parse_args(argv)
    if args.quick:
        args.states = min(args.states, 1_000_000)
    if args.uncompressed:
        ZARR_KW["compressors"] = None
    import dask.array as da
    import zarr

    from dqdyn import distributed as dd

    m, label = _panda()
    N, C = args.states, min(args.chunk, args.states)
    cores = dd.host_cores()
    d = args.dir or tempfile.mkdtemp(prefix="dqdyn_dist_")
    t0 = time.perf_counter()
    g, mm = _inputs(m, N, C, d)
    print(f"{N} {label} states, chunks of {C}, {cores} cores; inputs written in "
          f"{time.perf_counter() - t0:.1f} s to {d}", flush=True)
    fns = [f for f in args.functions.split(",") if f]
    out = np.lib.format.open_memmap(os.path.join(d, "out.npy"), mode="w+", shape=(N, m.nv))
    rows, base, inproc, inproc_new, inproc_file = [], {}, {}, {}, {}
    dqdyn.set_num_threads(min(cores, __import__("numba").config.NUMBA_NUM_THREADS))
    for fn in fns:
        f = getattr(dqdyn, fn)
        f(m, mm["q"][:10], mm["v"][:10], mm["a"][:10])  # compile / load

        def measure(run, call, same=True, fn=fn):
            """Best of ``repeat`` runs of the in-process ``call``: a row against ``base[fn]``."""
            t, c = _best(call, args.repeat)
            base.setdefault(fn, (t, c))
            rows.append({"function": fn, "run": run, "workers": 1,
                         "threads": dqdyn.get_num_threads(), "seconds": t, "states_per_s": N / t,
                         "cpu_s": c, "states_per_cpu_s": N / c,
                         "overhead_vs_in_process": t / base[fn][0] - 1,
                         "cpu_overhead_vs_in_process": c / base[fn][1] - 1,
                         "bit_identical": bool(same() if callable(same) else same)})
            return t, c

        inproc[fn] = lambda f=f: f(m, mm["q"], mm["v"], mm["a"], out=out)
        measure("in-process", inproc[fn])
        inproc_new[fn] = lambda f=f: f(m, mm["q"], mm["v"], mm["a"])  # (the result dropped)
        measure("in-process, new array", inproc_new[fn])

        def new_file(f=f):  # a new dataset on disk each run: the file made, then filled
            o = np.lib.format.open_memmap(os.path.join(d, "new.npy"), mode="w+", shape=(N, m.nv))
            f(m, mm["q"], mm["v"], mm["a"], out=o)  # (no msync: Zarr's writes are not synced either)
            del o

        inproc_file[fn] = new_file
        measure("in-process, new file", new_file)
        zo = zarr.open_group(os.path.join(d, "inproc.zarr"), mode="w")
        zo.create_array(fn, shape=(N, m.nv), chunks=(C, m.nv), dtype="f8", **ZARR_KW)

        def loop(f=f, zo=zo, fn=fn):
            for s in range(0, N, C):
                e = min(N, s + C)
                zo[fn][s:e] = f(m, g["q"][s:e], g["v"][s:e], g["a"][s:e])

        base[fn + "+zarr"] = measure("in-process+zarr", loop,
                                     lambda zo=zo, fn=fn: np.array_equal(zo[fn][:C], out[:C]))
        print(*rows[-4:], sep="\n", flush=True)
    workers = [int(w) for w in args.workers.split(",")] if not args.scheduler else [0]
    writers = [x for x in args.writers.split(",") if x]
    sources = {}
    for src in [x for x in args.dask_inputs.split(",") if x]:
        if src == "zarr":
            sources[""] = tuple(da.from_zarr(g[k]) for k in ("q", "v", "a"))
        elif src == "npy":
            t0 = time.perf_counter()
            for k in ("q", "v", "a"):
                da.to_npy_stack(os.path.join(d, k + ".stack"), da.from_array(mm[k], chunks=(C, -1)),
                                axis=0)
            print(f"npy stacks written in {time.perf_counter() - t0:.1f} s", flush=True)
            sources[" npy"] = tuple(da.from_npy_stack(os.path.join(d, k + ".stack"), mmap_mode="r")
                                    for k in ("q", "v", "a"))
        else:
            ap.error(f"--dask-inputs: expected zarr and/or npy, got {src!r}")
    for w in workers:
        client = dd.connect(args.scheduler) if args.scheduler else dd.local_cluster(w, threads=args.threads)
        try:
            threads = sorted(set(client.run(dd._worker_threads).values()))
            nw = len(client.run(os.getpid))
            # CPU the idle cluster burns per wall second (event loops, heartbeats, the
            # profiler thread): on a shared machine the wall time, hence this cost, is inflated
            c0 = _cpu_self() + sum(client.run(_cpu_self).values())
            time.sleep(args.idle)
            idle = (_cpu_self() + sum(client.run(_cpu_self).values()) - c0) / args.idle
            for fn, (src, (Q, V, A)), wr in ((f, x, r) for f in fns for x in sources.items()
                                              for r in writers):
                # load the kernels in every worker outside the measurement
                dd.apply(fn, m, Q[: 10 * nw].rechunk((10, -1)), V[: 10 * nw].rechunk((10, -1)),
                         A[: 10 * nw].rechunk((10, -1))).compute()
                path = os.path.join(d, f"dask_w{w}{src.strip()}_{wr}.zarr")

                def run():
                    if wr == "to_zarr":  # each chunk read, computed and written by one task
                        dd.to_zarr(fn, m, Q, V, A, url=path, component=fn, overwrite=True,
                                   compressors=ZARR_KW.get("compressors", "auto"))
                    else:  # Dask's own: a compute task, then a store task per chunk
                        dd.apply(fn, m, Q, V, A).to_zarr(path, component=fn, overwrite=True, **ZARR_KW)

                # rounds of (the in-process batched call, this run), interleaved: the machine's
                # speed drifts between minutes, a ratio within one round does not
                pairs = [(_once(inproc[fn]), _once(run, client), _once(inproc_new[fn]),
                          _once(inproc_file[fn])) for _ in range(args.repeat)]
                t, c = min(p[1] for p in pairs)
                walls = [p[1][0] for p in pairs]
                ratios = [p[1][0] / p[0][0] for p in pairs]
                ratios_new = [p[1][0] / p[2][0] for p in pairs]
                ratios_file = [p[1][0] / p[3][0] for p in pairs]
                res = zarr.open_group(path, mode="r")[fn]
                k = N // 2
                ref = getattr(dqdyn, fn)(m, mm["q"][k:k + 1000], mm["v"][k:k + 1000], mm["a"][k:k + 1000])
                rows.append({"function": fn, "run": f"dask w{nw}{src}" + (" dd.to_zarr" if wr == "to_zarr" else ""),
                             "workers": nw, "inputs": src.strip() or "zarr", "writer": wr,
                             "threads": threads[0] if len(threads) == 1 else str(threads),
                             "seconds": t, "states_per_s": N / t,
                             "cpu_s": c, "states_per_cpu_s": N / c,
                             "overhead_vs_in_process": t / base[fn][0] - 1,
                             "median_s": float(np.median(walls)), "min_s": min(walls), "max_s": max(walls),
                             "in_process_median_s": float(np.median([p[0][0] for p in pairs])),
                             "overhead_vs_in_process_same_round": float(np.median(ratios)) - 1,
                             "overhead_same_round_min": min(ratios) - 1, "overhead_same_round_max": max(ratios) - 1,
                             "in_process_new_median_s": float(np.median([p[2][0] for p in pairs])),
                             "overhead_vs_new_array_same_round": float(np.median(ratios_new)) - 1,
                             "overhead_vs_new_array_min": min(ratios_new) - 1,
                             "overhead_vs_new_array_max": max(ratios_new) - 1,
                             "in_process_file_median_s": float(np.median([p[3][0] for p in pairs])),
                             "overhead_vs_new_file_same_round": float(np.median(ratios_file)) - 1,
                             "overhead_vs_new_file_min": min(ratios_file) - 1,
                             "overhead_vs_new_file_max": max(ratios_file) - 1,
                             "cpu_overhead_vs_in_process": c / base[fn][1] - 1,
                             "cpu_overhead_vs_in_process_zarr": c / base[fn + "+zarr"][1] - 1,
                             "idle_cpu_per_s": idle,
                             "cpu_s_less_idle": c - idle * t,
                             "cpu_overhead_less_idle_vs_in_process": (c - idle * t) / base[fn][1] - 1,
                             "cpu_overhead_less_idle_vs_in_process_zarr":
                                 (c - idle * t) / base[fn + "+zarr"][1] - 1,
                             "bit_identical": bool(np.array_equal(res[k:k + 1000], ref))})
                print(rows[-1], flush=True)
        finally:
            cluster = None if args.scheduler else client.cluster
            client.close()
            if cluster is not None:
                cluster.close()
    for fn in fns:
        for kind in {(r["inputs"], r["writer"]) for r in rows if "writer" in r}:
            dk = [r for r in rows if r["function"] == fn and (r.get("inputs"), r.get("writer")) == kind]
            if len(dk) >= 2:
                for r in dk:
                    r["scaling_vs_first"] = r["states_per_s"] / dk[0]["states_per_s"]
                    r["scaling_vs_first_median"] = dk[0]["median_s"] / r["median_s"]
    print_table(f"{N} {label} states through Zarr, chunks of {C} ({cores} cores)", rows)
    dk = [r for r in rows if "median_s" in r]
    if dk:
        print_table("Dask runs interleaved with the in-process batched call, round by round "
                    f"(median \\[min–max] of {args.repeat})", [{
                        "function": r["function"], "run": r["run"],
                        "dask s": f"{r['median_s']:.3g} [{r['min_s']:.3g}–{r['max_s']:.3g}]",
                        "in-process s": f"{r['in_process_median_s']:.3g}",
                        "overhead vs in-process": f"{r['overhead_vs_in_process_same_round']:+.0%} "
                                                  f"[{r['overhead_same_round_min']:+.0%} – {r['overhead_same_round_max']:+.0%}]",
                        "in-process, new array s": f"{r['in_process_new_median_s']:.3g}",
                        "vs in-process, new array": f"{r['overhead_vs_new_array_same_round']:+.0%} "
                                                    f"[{r['overhead_vs_new_array_min']:+.0%} – {r['overhead_vs_new_array_max']:+.0%}]",
                        "in-process, new file s": f"{r['in_process_file_median_s']:.3g}",
                        "vs in-process, new file": f"{r['overhead_vs_new_file_same_round']:+.0%} "
                                                   f"[{r['overhead_vs_new_file_min']:+.0%} – {r['overhead_vs_new_file_max']:+.0%}]",
                        "scaling vs first (medians)": f"{r.get('scaling_vs_first_median', 1.0):.2f}"}
                        for r in dk])
    js, md = write_results("distributed", rows, {"states": N, "chunk": C, "cores": cores})
    print(f"written {js} and {md}")
    if args.dir is None:
        shutil.rmtree(d, ignore_errors=True)
    return rows


if __name__ == "__main__":
    main()
