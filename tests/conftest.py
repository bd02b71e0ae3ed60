import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))


def _shipped_kernels_serve_this_run() -> bool:
    from dqdyn._engine import jit
    from dqdyn._engine.precompile import _portable_is_this_source

    return jit.portable_fits() and _portable_is_this_source()


#: the package kernels that dqdyn's own code called and numba compiled instead of loading
_COMPILED: list[str] = []
_SERVED: list[bool] = []


def _watch_compiles() -> None:
    """Record each compile of a package kernel called from the package's own Python code (a
    public function's path: what a user meets), not a kernel a test calls directly."""
    from numba.core.dispatcher import Dispatcher

    compile_for_args = Dispatcher._compile_for_args

    def watched(self, *args, **kws):
        caller = sys._getframe(1).f_globals.get("__name__", "") or ""
        if not (caller.startswith("dqdyn.") and (self.py_func.__module__ or "").startswith("dqdyn.")):
            return compile_for_args(self, *args, **kws)
        before = sum(self.stats.cache_misses.values())
        try:
            return compile_for_args(self, *args, **kws)
        finally:
            if sum(self.stats.cache_misses.values()) > before:
                _COMPILED.append(f"{self.py_func.__module__}.{self.py_func.__qualname__} "
                                 f"(called from {caller})")

    Dispatcher._compile_for_args = watched


@pytest.fixture(autouse=True)
def _no_kernel_compiled_at_run_time():
    """A package kernel that the package's code compiles while a test runs, on a machine that the
    shipped kernels serve and with those kernels made from this very source, is a kernel a user
    compiles too (a signature or a path that `dqdyn._engine.precompile` does not reach): the
    test errors and names it.  Where the shipped kernels are older than the source (a kernel
    being edited) or do not fit this machine, compiling is expected and nothing is checked."""
    if not _SERVED:
        _SERVED.append(_shipped_kernels_serve_this_run())
        if _SERVED[0]:
            _watch_compiles()
    n = len(_COMPILED)
    yield
    new = _COMPILED[n:]
    assert not new, ("compiled at run time although the shipped kernels are current and fit this "
                     "machine (add the call to dqdyn._engine.precompile's groups): " + "; ".join(new))
