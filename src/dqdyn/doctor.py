"""What this installation of dqdyn is ready for: ``dqdyn doctor``.

`report` gathers, without compiling anything: the Python, numba and NumPy versions; the CPU
and the x86-64 level it runs; the CPU the kernels compiled in this process target; whether the
kernels shipped for this Python were found, fit this machine and are current; the package's and
the user's kernel caches (where, how large); the C call gate; the threading layer.  It ends with
a verdict — ready, or what is not and the command that fixes it.  ``pip install`` prints the
verdict at its end (``setup.py``), and the first compilation in a process names it
(`dqdyn._engine.jit`).

    dqdyn doctor [--measure] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import sysconfig

from dqdyn._engine import jit as _jit

#: what LLVM calls the features of each x86-64 psABI level above the baseline
_X86_LEVELS = (
    ("x86-64-v2", "cx16 sahf popcnt sse3 sse4.1 sse4.2 ssse3"),
    ("x86-64-v3", "avx avx2 bmi bmi2 f16c fma lzcnt movbe xsave"),
    ("x86-64-v4", "avx512f avx512bw avx512cd avx512dq avx512vl"),
)


def _host_cpu() -> tuple[str, str]:
    """LLVM's name of the host CPU and the highest x86-64 level it runs (or the machine)."""
    from llvmlite import binding as ll

    name = ll.get_host_cpu_name()
    if platform.machine().lower() not in ("x86_64", "amd64"):
        return name, platform.machine()
    have = {f[1:] for f in ll.get_host_cpu_features().flatten().split(",") if f.startswith("+")}
    level, need = "x86-64", set()
    for lvl, feats in _X86_LEVELS:
        need |= set(feats.split())
        if need <= have:
            level = lvl
    return name, level


def _pinned_numba() -> str | None:
    """The numba version dqdyn's metadata pins (the one its shipped kernels are compiled for)."""
    from importlib import metadata

    try:
        for req in metadata.requires("dqdyn") or ():
            if req.replace(" ", "").startswith("numba=="):
                return req.replace(" ", "").split("==", 1)[1].split(";")[0]
    except metadata.PackageNotFoundError:
        pass
    return None


def _folder_size(path: str) -> tuple[int, int]:
    """Number of kernel index files (one per compiled function) and bytes under ``path``."""
    n = size = 0
    for base, _, files in os.walk(path):
        for f in files:
            try:
                size += os.path.getsize(os.path.join(base, f))
            except OSError:
                continue
            n += f.endswith(".nbi")
    return n, size


def _shipped() -> dict:
    """The portable kernels of this Python: shipped, unpacked, fitting, current."""
    from dqdyn._engine.precompile import _platform_tag, _portable_is_this_source

    out = {"archive": os.path.basename(_jit.PORTABLE_ARCHIVE),
           "archive_present": os.path.isfile(_jit.PORTABLE_ARCHIVE),
           "unpacked": os.path.isfile(os.path.join(_jit.PORTABLE_CACHE, "MANIFEST.json")),
           "cpu_fits": _jit.portable_fits(), "manifest": None, "matches": None,
           "current": None}
    if out["unpacked"]:
        with open(os.path.join(_jit.PORTABLE_CACHE, "MANIFEST.json")) as f:
            man = json.load(f)
        out["manifest"] = {k: man.get(k) for k in ("python", "numba", "platform", "cpu",
                                                   "kernels")}
        out["matches"] = all(man.get(k) == v for k, v in _platform_tag().items())
        out["current"] = _portable_is_this_source()
    out["used"] = bool(out["unpacked"] and out["matches"] and out["cpu_fits"]
                       and any(r == _jit.PORTABLE_CACHE for r, _ in _jit.cache_roots()))
    return out


def _gate() -> bool:
    from dqdyn._engine import gate

    return gate.GATE is not None


_PER_CALL = r"""
import json, sys, timeit, numpy as np, dqdyn
m = dqdyn.serial_chain(7)
q, v, a = np.zeros(m.nq), np.ones(m.nv), np.ones(m.nv)
dqdyn.rnea(m, q, v, a)
t = min(timeit.repeat(lambda: dqdyn.rnea(m, q, v, a), number=2000, repeat=7)) / 2000
print(json.dumps(t))
"""


def _per_call(no_gate: bool) -> float | None:
    """Seconds per single-state ``rnea`` call on a 7-link arm, in a fresh process."""
    env = dict(os.environ)
    if no_gate:
        env["DQDYN_NO_GATE"] = "1"
    r = subprocess.run([sys.executable, "-c", _PER_CALL], env=env, capture_output=True,
                       text=True, timeout=300)
    try:
        return float(r.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return None


def report(measure: bool = False) -> dict:
    """Everything ``dqdyn doctor`` prints, as a dictionary (``measure``: also time a single
    call with and without the C call gate, in fresh processes — a few seconds)."""
    import numba
    import numpy

    from dqdyn import config

    host, level = _host_cpu()
    roots = _jit.cache_roots()
    caches = []
    for root, writable in roots:
        n, size = _folder_size(root) if os.path.isdir(root) else (0, 0)
        caches.append({"path": root, "writable": writable, "kernels": n, "bytes": size})
    r = {
        "python": f"{platform.python_implementation()} {platform.python_version()} "
                  f"({_jit.PY_TAG})",
        "platform": sysconfig.get_platform(),
        "numba": numba.__version__, "numba_pinned": _pinned_numba(),
        "numpy": numpy.__version__,
        "cpu": host, "cpu_level": level,
        "kernel_target": _jit.CPU_TARGET["name"] or host,
        "kernel_target_note": _jit.CPU_TARGET["why"],
        "shipped": _shipped(), "caches": caches,
        "gate": _gate(),
        "threading_layer": str(numba.config.THREADING_LAYER),
        "threads": config.get_num_threads(),
    }
    if measure:
        r["per_call_s"] = {"gate": _per_call(False), "no_gate": _per_call(True)}
    r["verdict"], r["fix"] = verdict(r)
    return r


def verdict(r: dict) -> tuple[str, str]:
    """One line saying whether dqdyn is ready here, and the command that fixes what is not."""
    s = r["shipped"]
    if r["numba_pinned"] and r["numba"] != r["numba_pinned"]:
        return (f"not ready: numba {r['numba']} is installed, the shipped kernels are numba "
                f"{r['numba_pinned']}'s: kernels compile on first use (minutes)",
                f"pip install numba=={r['numba_pinned']}  (or: dqdyn precompile)")
    if not s["used"]:
        if not s["archive_present"] and not s["unpacked"]:
            why = f"no kernels are shipped for {_jit.PY_TAG} on {r['platform']}"
        elif not s["cpu_fits"]:
            why = f"this CPU ({r['cpu']}) lacks part of {_jit.PORTABLE_CPU}"
        elif s["unpacked"] and not s["matches"]:
            why = f"the shipped kernels are for {s['manifest']}"
        else:
            why = "the shipped kernels are not unpacked"
        full = sum(c["kernels"] for c in r["caches"]) >= 140
        if full:
            return f"ready: {why}, but this machine's kernels are compiled (cached)", ""
        return f"not ready: {why}; kernels compile on first use (minutes)", "dqdyn precompile"
    if s["current"] is False:
        full = sum(c["kernels"] for c in r["caches"] if c["path"] != _jit.PORTABLE_CACHE) > 0
        note = "" if full else " (edited kernels compile on first use)"
        return ("ready: shipped kernels in use; the source was edited since they were made"
                + note, "" if full else "dqdyn precompile")
    gate = "" if r["gate"] else "; no C call gate (no C compiler at install): single calls are slower"
    return f"ready: shipped kernels in use{gate}", "" if r["gate"] else (
        "install a C compiler (e.g. apt install gcc), then pip install again")


def format_report(r: dict) -> str:
    def mb(b):
        return f"{b / 1e6:.1f} MB"

    s = r["shipped"]
    lines = [
        f"python           {r['python']}, {r['platform']}",
        f"numba / numpy    {r['numba']} / {r['numpy']}"
        + (f"  (dqdyn's kernels: numba {r['numba_pinned']})" if r["numba_pinned"] else ""),
        f"cpu              {r['cpu']} ({r['cpu_level']})",
        f"kernels target   {r['kernel_target']}"
        + (f"  ({r['kernel_target_note']})" if r["kernel_target_note"] else ""),
        f"shipped kernels  {s['archive']}: "
        + ("in use" if s["used"] else "not used")
        + ("" if s["manifest"] is None else
           f" ({s['manifest'].get('kernels')} kernels for {s['manifest'].get('python')}, "
           f"numba {s['manifest'].get('numba')}, {s['manifest'].get('cpu')})")
        + ("" if s["current"] in (None, True) else "; source edited since they were made"),
    ]
    for c in r["caches"]:
        lines.append(f"cache            {c['path']} ({c['kernels']} kernels, {mb(c['bytes'])}"
                     f"{'' if c['writable'] else ', read only'})")
    gate = "present" if r["gate"] else "missing (no C compiler at install)"
    if "per_call_s" in r:
        g, n = r["per_call_s"]["gate"], r["per_call_s"]["no_gate"]
        if g and n:
            gate += (f"; rnea on a 7-link arm {g * 1e6:.2f} µs per call with it, "
                     f"{n * 1e6:.2f} µs without")
    lines += [
        f"C call gate      {gate}",
        f"threading layer  {r['threading_layer']}, {r['threads']} threads",
        f"verdict          {r['verdict']}",
    ]
    if r["fix"]:
        lines.append(f"fix              {r['fix']}")
    return "\n".join(lines)


def _run(args: argparse.Namespace) -> int:
    r = report(measure=args.measure)
    print(json.dumps(r, indent=1) if args.json else format_report(r))
    return 0 if r["verdict"].startswith("ready") else 1


def _arguments(p: argparse.ArgumentParser) -> argparse.ArgumentParser:
    p.add_argument("--measure", action="store_true",
                   help="also time a single call with and without the C call gate (seconds)")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(func=_run)
    return p


_DOCTOR = dict(
    description="Python, numba and NumPy versions, the CPU and the level it runs, whether "
    "the shipped kernels were found and are used, the kernel caches, the C call gate and "
    "the threading layer; then a one-line verdict with the fix. Exit code 1 when not ready.",
    epilog="examples:\n  dqdyn doctor\n  dqdyn doctor --measure --json")


def add_doctor(sub) -> None:
    """The ``dqdyn doctor`` subcommand (the command line's registrar)."""
    from dqdyn._cliargs import HelpFormatter

    _arguments(sub.add_parser(
        "doctor", help="say whether dqdyn is ready on this machine, and how to fix it if not",
        formatter_class=HelpFormatter, **_DOCTOR))


def main(argv=None) -> int:
    """``python -m dqdyn.doctor``: the same as ``dqdyn doctor``."""
    from dqdyn._cliargs import HelpFormatter

    p = _arguments(argparse.ArgumentParser(prog="dqdyn doctor", formatter_class=HelpFormatter, **_DOCTOR))
    args = p.parse_args(sys.argv[1:] if argv is None else argv)
    return args.func(args)


if __name__ == "__main__":
    raise SystemExit(main())
