import os
import sys

sys.path.insert(0, os.path.dirname(__file__))


def _shipped_kernels_serve_this_run() -> bool:
    from dqdyn._engine import jit
    from dqdyn._engine.precompile import _portable_is_this_source

    return jit.portable_fits() and _portable_is_this_source()


def pytest_configure(config):
    # A kernel compiled while a test runs, on a machine that the shipped kernels serve and with
    # those kernels made from this very source, is a kernel a user compiles too (a signature or a
    # path that `dqdyn._engine.precompile` does not reach): that test fails and the warning names
    # the kernel.  Where the shipped kernels are older than the source (a kernel being edited) or
    # do not fit this machine, compiling is expected and only warned about.
    if _shipped_kernels_serve_this_run():
        config.addinivalue_line("filterwarnings", "error::dqdyn.errors.KernelCompileWarning")
