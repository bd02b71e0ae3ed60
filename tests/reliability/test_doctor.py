"""`dqdyn doctor`: what it reports on this installation, and the verdict it gives for the states
a user's machine can be in."""

from __future__ import annotations

import json
import subprocess
import sys

import numba

from dqdyn import doctor
from dqdyn._engine import jit as _jit


def test_the_report_describes_this_installation():
    r = doctor.report()
    assert r["numba"] == numba.__version__
    assert r["python"].endswith(f"({_jit.PY_TAG})")
    assert r["kernel_target"] == (_jit.CPU_TARGET["name"] or r["cpu"])
    assert r["shipped"]["archive"] == f"_kernels_portable-{_jit.PY_TAG}.tar.xz"
    assert {c["path"] for c in r["caches"]} == {root for root, _ in _jit.cache_roots()}
    if _jit.portable_fits():  # (a CPU that runs the shipped kernels is level 3 or 4)
        assert r["cpu_level"] in ("x86-64-v3", "x86-64-v4") and r["shipped"]["cpu_fits"]


def test_the_command_prints_json_and_its_exit_code_follows_the_verdict():
    p = subprocess.run([sys.executable, "-m", "dqdyn.doctor", "--json"], capture_output=True,
                       text=True)
    r = json.loads(p.stdout)
    assert p.returncode == (0 if r["verdict"].startswith("ready") else 1)
    assert set(r) >= {"python", "numba", "numpy", "cpu", "cpu_level", "kernel_target",
                      "shipped", "caches", "gate", "threading_layer", "verdict", "fix"}


def _state(**shipped):
    base = {"archive_present": True, "unpacked": True, "cpu_fits": True, "matches": True,
            "current": True, "used": True, "manifest": {"python": _jit.PY_TAG}}
    return {"numba": "0.68.1", "numba_pinned": "0.68.1", "platform": "linux-x86_64",
            "cpu": "znver4", "gate": True, "caches": [], "shipped": {**base, **shipped}}


def test_the_verdict_names_what_is_not_ready_and_the_fix():
    assert doctor.verdict(_state()) == ("ready: shipped kernels in use", "")
    v, fix = doctor.verdict({**_state(), "numba": "0.69.0"})
    assert v.startswith("not ready") and "numba 0.69.0" in v and fix.startswith("pip install numba==0.68.1")
    v, fix = doctor.verdict(_state(archive_present=False, unpacked=False, used=False))
    assert v.startswith("not ready") and "no kernels are shipped" in v and fix == "dqdyn precompile"
    v, fix = doctor.verdict(_state(cpu_fits=False, used=False))
    assert "lacks part of x86-64-v3" in v and fix == "dqdyn precompile"
    full = {**_state(cpu_fits=False, used=False), "caches": [{"path": "/c", "kernels": 171}]}
    assert doctor.verdict(full)[0].startswith("ready")  # (compiled here once, cached)
    v, fix = doctor.verdict({**_state(), "gate": False})
    assert "no C call gate" in v and "C compiler" in fix
