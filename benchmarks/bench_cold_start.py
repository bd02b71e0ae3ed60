"""Cold start: what a new user waits for, each first call timed in its own fresh process.

    python benchmarks/bench_cold_start.py                 # this environment, kernel cache as installed
    python benchmarks/bench_cold_start.py --no-cache      # also: every kernel compiled on the spot (JIT)
    python benchmarks/bench_cold_start.py --fresh-venv /tmp/v   # also: clone → fresh venv → pip install
    python benchmarks/bench_cold_start.py --pythons 3.10 3.11 3.12 3.13 --cold-pip   # each CPython

For each function, a new Python process imports dqdyn, builds a 7-DoF arm (Panda from
example-robot-data when installed, else the bundled ``jaco6``) and times its first call; the
table gives the median of ``--repeat`` processes and the spread.  ``--no-cache`` repeats it with
``DQDYN_NO_CACHE=1`` (numba compiles each kernel in the process: what a first call cost before
the kernel cache, and what a machine pays when the cache does not match its CPU / numba).
``--fresh-venv DIR`` copies the working tree to a temporary clone, makes a new virtual
environment in DIR, times ``pip install`` of the clone (dependencies come from pip's cache
after the first time) and runs the table with that environment's Python.  ``--pythons`` does
that for each CPython named (found as ``pythonX.Y`` on the PATH or under pyenv), each in its own
venv, with an empty user kernel cache; ``--cold-pip`` turns pip's cache off, so the install
time includes downloading every dependency.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

PRELUDE = r"""
import time, json, sys
t0 = time.perf_counter()
import numpy as np, dqdyn
t1 = time.perf_counter()
import os, sysconfig
urdf = os.path.join(sysconfig.get_paths()["purelib"], "cmeel.prefix", "share", "example-robot-data", "robots",
                    "panda_description", "urdf", "panda.urdf")
import warnings
warnings.simplefilter("ignore")
m = dqdyn.load_urdf(urdf, mimic="independent") if os.path.exists(urdf) else dqdyn.load_bundled("jaco6")
q = dqdyn.random_configuration(m, seed=0); v = np.ones(m.nv); a = np.zeros(m.nv)
Q = dqdyn.random_configuration(m, size=1000, seed=1)
f = m.frame_names[-1]
t2 = time.perf_counter()
"""

CALLS = {
    "rnea": "dqdyn.rnea(m, q, v, a)",
    "aba": "dqdyn.aba(m, q, v, a)",
    "mass_matrix": "dqdyn.mass_matrix(m, q)",
    "coriolis_matrix": "dqdyn.coriolis_matrix(m, q, v)",
    "gravity": "dqdyn.gravity(m, q)",
    "forward_kinematics": "dqdyn.forward_kinematics(m, q)",
    "twist_jacobian": "dqdyn.twist_jacobian(m, q, f, 'body')",
    "rnea (batch 1000)": "dqdyn.rnea(m, Q, v, a)",
    "aba (batch 1000)": "dqdyn.aba(m, Q, v, a)",
    "rnea_derivatives": "dqdyn.rnea_derivatives(m, q, v, a)",
    "aba_derivatives": "dqdyn.aba_derivatives(m, q, v, a)",
    # the single-state entry kernels
    "aba (out=)": "dqdyn.aba(m, q, v, a, out=np.empty(m.nv))",
    "aba (wrong length)": "try:\n    dqdyn.aba(m, q, v, np.zeros(m.nv + 1))\nexcept dqdyn.errors.ShapeError:\n    pass",
}


def one(python: str, call: str, env: dict) -> tuple[float, float]:
    code = PRELUDE + f"{call}\nt3 = time.perf_counter()\nprint(json.dumps([t1 - t0, t3 - t2]))\n"
    out = subprocess.run([python, "-c", code], env=env, capture_output=True, text=True, cwd=tempfile.gettempdir())
    if out.returncode:
        raise RuntimeError(out.stderr[-2000:])
    imp, first = json.loads(out.stdout.strip().splitlines()[-1])
    return imp, first


def table(python: str, env: dict, repeat: int, label: str) -> dict:
    print(f"\n{label} ({python})")
    print(f"{'first call of':22s} {'median s':>9s} {'min–max s':>14s}   import s")
    res = {}
    for name, call in CALLS.items():
        ts, imps = [], []
        for _ in range(repeat):
            imp, first = one(python, call, env)
            ts.append(first)
            imps.append(imp)
        res[name] = {"first_call_s": ts, "import_s": imps}
        print(f"{name:22s} {statistics.median(ts):9.3f} {min(ts):6.3f}–{max(ts):<7.3f} {statistics.median(imps):8.3f}",
              flush=True)
    return res


def find_python(version: str) -> str:
    """The interpreter of CPython ``version`` (``3.12``): ``python3.12`` on the PATH, else
    pyenv's newest ``3.12.*``."""
    exe = shutil.which(f"python{version}")
    if exe and subprocess.run([exe, "-c", ""], capture_output=True).returncode == 0:
        return exe  # (a pyenv shim of a version not selected fails: then pyenv's own folder)
    root = os.environ.get("PYENV_ROOT", os.path.expanduser("~/.pyenv"))
    cands = sorted((d for d in os.listdir(os.path.join(root, "versions"))
                    if d.startswith(version + ".")), key=lambda d: [int(x) for x in d.split(".")
                                                                   if x.isdigit()])
    if not cands:
        raise SystemExit(f"no CPython {version} found (python{version} or pyenv)")
    return os.path.join(root, "versions", cands[-1], "bin", "python")


def fresh_venv(dest: str, base_python: str = sys.executable, cold_pip: bool = False) -> tuple[str, float]:
    clone = tempfile.mkdtemp(prefix="dqdyn-clone-")
    subprocess.run(["git", "clone", "-q", ROOT, clone], check=True)
    # the working tree's uncommitted changes too (what is measured is what is here)
    diff = subprocess.run(["git", "-C", ROOT, "diff", "HEAD"], capture_output=True, check=True).stdout
    if diff:
        subprocess.run(["git", "-C", clone, "apply", "-"], input=diff, check=True)
    shutil.rmtree(dest, ignore_errors=True)
    subprocess.run([base_python, "-m", "venv", dest], check=True)
    py = os.path.join(dest, "bin", "python")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DQDYN_", "NUMBA_"))}
    if cold_pip:
        env["PIP_NO_CACHE_DIR"] = "1"
    t0 = time.perf_counter()
    subprocess.run([py, "-m", "pip", "install", "-q", clone], check=True, env=env)
    t_install = time.perf_counter() - t0
    print(f"pip install of a fresh clone into a fresh venv ({base_python}): {t_install:.0f} s "
          "(kernels unpacked or compiled during it)", flush=True)
    subprocess.run([py, "-m", "pip", "install", "-q", "example-robot-data"], check=False, env=env)
    return py, t_install


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-cache", action="store_true", help="also time with DQDYN_NO_CACHE=1 (JIT)")
    ap.add_argument("--fresh-venv", metavar="DIR", help="also clone, make a venv in DIR, pip install")
    ap.add_argument("--pythons", nargs="*", metavar="X.Y",
                    help="also, for each of these CPythons: clone, fresh venv, pip install, table")
    ap.add_argument("--cold-pip", action="store_true",
                    help="with --pythons: pip's cache off (the install downloads everything)")
    a = ap.parse_args()
    env = dict(os.environ)
    out = {"installed": table(sys.executable, env, a.repeat, "kernel cache as installed")}
    if a.no_cache:
        out["jit"] = table(sys.executable, {**env, "DQDYN_NO_CACHE": "1"}, 1, "no cache: numba compiles (JIT)")
    if a.fresh_venv:
        py, _ = fresh_venv(a.fresh_venv)
        out["fresh_venv"] = table(py, {k: v for k, v in env.items() if k != "PYTHONPATH"}, a.repeat,
                                  "fresh venv after pip install")
    for version in a.pythons or ():
        dest = tempfile.mkdtemp(prefix=f"dqdyn-venv{version}-")
        py, t_install = fresh_venv(dest, find_python(version), a.cold_pip)
        clean = {k: v for k, v in env.items() if k != "PYTHONPATH" and not k.startswith("DQDYN_")}
        clean["DQDYN_CACHE_DIR"] = tempfile.mkdtemp(prefix="dqdyn-empty-cache-")
        res = table(py, clean, a.repeat, f"CPython {version}: fresh venv after pip install")
        out[f"cpython-{version}"] = {"install_s": t_install, "first_calls": res}
    if a.pythons:
        print("\nsummary: CPython, pip install s, slowest first call s (median)")
        for version in a.pythons:
            r = out[f"cpython-{version}"]
            worst = max(statistics.median(x["first_call_s"]) for x in r["first_calls"].values())
            print(f"  {version:6s} {r['install_s']:8.0f} {worst:10.3f}")
    os.makedirs(os.path.join(ROOT, "benchmarks", "results"), exist_ok=True)
    with open(os.path.join(ROOT, "benchmarks", "results", "cold_start.json"), "w") as f:
        json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
