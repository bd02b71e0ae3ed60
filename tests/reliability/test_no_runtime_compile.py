"""After install, no public call compiles a kernel, whatever the user passes.

A fresh process (``_no_compile_probe.py``) calls every public numeric function on a fixed-base
arm, a floating-base tree and a model with a mimic joint; one state and batches below, at and
above the chunk size (made small there, so that chunked runs are reached cheaply) and above the
serial threshold; and inputs that are read only, strided, column slices of a wider array,
Fortran-ordered, big-endian, Python lists, memory maps opened ``"r"`` and ``"r+"``, and
broadcast views.  numba's ``numba:compile`` event counts every compilation; each flavour's
result must be the contiguous call's, bit for bit.

The kernels come from what the install readied (the package's own cache and the shipped
portable kernels); the user's cache is an empty folder, so nothing compiled earlier by hand can
hide a gap.  Where the package has no cache of its own (a checkout whose kernels were compiled
into the user's cache by ``dqdyn precompile`` after an edit), that cache is used as it is.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from dqdyn._engine import jit as _jit

PROBE = os.path.join(os.path.dirname(__file__), "_no_compile_probe.py")


def _probe(tmp_path, *models):
    env = dict(os.environ)
    if os.path.isdir(_jit.PACKAGE_CACHE):
        env["DQDYN_CACHE_DIR"] = str(tmp_path / "empty-user-cache")
    env.pop("DQDYN_NO_CACHE", None)
    out = tmp_path / "probe.json"
    r = subprocess.run([sys.executable, PROBE, str(out), *models], env=env, capture_output=True,
                       text=True, cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-4000:]
    return json.loads(out.read_text()), r.stderr


@pytest.mark.slow
@pytest.mark.parametrize("model", ["arm", "floating", "mimic"])
def test_no_input_flavour_compiles_and_every_flavour_gives_the_contiguous_bits(tmp_path, model):
    res, stderr = _probe(tmp_path, model)
    assert res["calls"] > 300  # every function, size and flavour ran
    compiled = sorted({f"{c[1]} (first: {c[0]})" for c in res["compiles"]})
    assert not compiled, (
        f"{len(res['compiles'])} run-time compilations (run `dqdyn precompile` after editing "
        "kernels; otherwise an input flavour reaches a kernel signature the precompile does not "
        "make):\n" + "\n".join(compiled[:40]))
    assert "KernelCompileWarning" not in stderr
    assert not res["mismatches"], "results differ from the contiguous call:\n" + "\n".join(
        res["mismatches"][:40])
    # a refusal is a function of single states refusing a batch, or an algorithm that does not
    # take mimic joints refusing that model: never a flavour's failure
    assert all(size is not None or "mimic joints" in msg for _, _, size, msg in res["skipped"]), \
        res["skipped"]


CPU_PROBE = (
    "import json, os, numba, dqdyn; from dqdyn._engine import jit as _jit; "
    "print(json.dumps([numba.config.CPU_NAME, numba.config.CPU_FEATURES, _jit.CPU_TARGET]))"
)


def _cpu(env_extra: dict, pre: str = ""):
    env = {k: v for k, v in os.environ.items()
           if k not in ("NUMBA_CPU_NAME", "NUMBA_CPU_FEATURES", "DQDYN_NATIVE_CPU")}
    env.update(env_extra)
    r = subprocess.run([sys.executable, "-c", pre + CPU_PROBE], env=env, capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


@pytest.mark.skipif(not _jit.portable_fits(), reason="this CPU cannot run x86-64-v3 code")
def test_kernels_compiled_at_run_time_target_the_shipped_kernels_cpu():
    name, features, target = _cpu({})
    assert (name, features) == (_jit.PORTABLE_CPU, "") and target["pinned"]
    # the user's own setting stands
    name, _, target = _cpu({"NUMBA_CPU_NAME": "generic"})
    assert name == "generic" and not target["pinned"]
    # host-tuned on request
    name, _, target = _cpu({"DQDYN_NATIVE_CPU": "1"})
    assert name is None and not target["pinned"] and "DQDYN_NATIVE_CPU" in target["why"]
    # numba's code generator already started by a user's kernel: left alone, and said so
    pre = "import numba; numba.njit(lambda x: x + 1)(1); "
    name, _, target = _cpu({}, pre)
    assert name is None and not target["pinned"] and "before dqdyn" in target["why"]


def test_a_compile_at_run_time_is_announced_once_with_the_reason(tmp_path):
    """A kernel not in any cache (``DQDYN_CACHE_DIR`` empty, the package's caches hidden) is
    compiled with one :class:`~dqdyn.errors.KernelCompileWarning` naming the reason, and a line
    per compiled kernel on stderr."""
    code = (
        "import warnings, numpy as np, dqdyn\n"
        "from dqdyn._engine import jit as _jit\n"
        "_jit.cache_roots.cache_clear()\n"
        "_jit.PACKAGE_CACHE = _jit.PORTABLE_CACHE = '/nonexistent'\n"
        "m = dqdyn.serial_chain(2)\n"
        "with warnings.catch_warnings(record=True) as w:\n"
        "    warnings.simplefilter('always')\n"
        "    dqdyn.potential_energy(m, np.zeros(2))\n"
        "    dqdyn.potential_energy(m, np.zeros(2))\n"
        "print(sum(issubclass(x.category, dqdyn.errors.KernelCompileWarning) for x in w))\n"
        "print([str(x.message) for x in w][:1])\n"
    )
    env = dict(os.environ, DQDYN_CACHE_DIR=str(tmp_path / "c"))
    env.pop("DQDYN_QUIET_COMPILE", None)
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-3000:]
    count, msg = r.stdout.strip().splitlines()[-2:]
    assert count == "1"
    assert "compiling" in msg and "dqdyn doctor" in msg
    assert "dqdyn: compiled" in r.stderr
