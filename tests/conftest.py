import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))


def _shipped_kernels_serve_this_run() -> bool:
    from dqdyn._engine import jit
    from dqdyn._engine.precompile import _portable_is_this_source

    return jit.portable_fits() and _portable_is_this_source()


def _compiled_package_kernels() -> dict:
    """``{name: compiles}`` of the package's kernels (and their serial twins) that numba has
    compiled in this process instead of loading them (its dispatchers' cache misses)."""
    out = {}
    for mod in list(sys.modules.values()):
        name = getattr(mod, "__name__", "") or ""
        if not name.startswith("dqdyn."):
            continue
        for attr, d in list(vars(mod).items()):
            for k, x in ((attr, d), (attr + ".serial", getattr(d, "serial", None))):
                stats = getattr(x, "stats", None)
                misses = getattr(stats, "cache_misses", None)
                if misses:
                    out[f"{name}.{k}"] = sum(misses.values())
    return out


_SERVED: list[bool] = []


@pytest.fixture(autouse=True)
def _no_kernel_compiled_at_run_time():
    """A package kernel compiled while a test runs, on a machine that the shipped kernels serve
    and with those kernels made from this very source, is a kernel a user compiles too (a
    signature or a path that `dqdyn._engine.precompile` does not reach): the test errors and
    names it.  Where the shipped kernels are older than the source (a kernel being edited) or do
    not fit this machine, compiling is expected and nothing is checked."""
    if not _SERVED:
        _SERVED.append(_shipped_kernels_serve_this_run())
    if not _SERVED[0]:
        yield
        return
    before = _compiled_package_kernels()
    yield
    new = {k: n for k, n in _compiled_package_kernels().items() if n > before.get(k, 0)}
    assert not new, ("compiled at run time although the shipped kernels are current and fit this "
                     "machine (add the call to dqdyn._engine.precompile's groups): " + ", ".join(sorted(new)))
