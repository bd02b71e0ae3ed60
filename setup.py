"""Build steps beyond pyproject.toml: the C call gate, and the kernel cache compiled at install.

* ``src/dqdyn/_engine/_gate.c`` (with ``_gate_front.c``, ``_gate.h``) — the call gate that takes single-state calls from Python into the
  compiled kernels.  Optional: without a C compiler the build skips it and dqdyn calls its
  kernels through numba's dispatcher (same numbers, about 2 µs more per call).
* ``dqdyn/_kernels_portable/<python>/`` and ``dqdyn/_kernels/`` — every numba kernel ready at
  install, so that the first call after ``pip install`` loads machine code instead of compiling
  it: ``python -m dqdyn._engine.precompile`` (see ``dqdyn/_engine/jit.py``) unpacks the portable kernels the
  source ships for this CPython (``_kernels_portable-cpython-3XX.tar.xz``, compiled for any
  x86-64 CPU with AVX2 / FMA, for the numba that ``pyproject.toml`` pins) where they fit, then
  compiles what they lack — everything, elsewhere — into ``_kernels/``, with progress.  It runs after the extension is built, in parallel worker processes, and never
  fails the install: whatever it could not compile compiles on first use.  A wheel carries the
  unpacked folders, not the archive.  ``DQDYN_SKIP_PRECOMPILE=1`` skips it (e.g. while editing
  kernels, which invalidates them).
"""

import os
import subprocess
import sys

import numpy
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext


def say(msg: str) -> None:
    """Print ``msg``; pip keeps a build's output to itself unless it fails (or with ``-v``), so
    the lines a user must see also go to the terminal, where there is one."""
    print(msg, flush=True)
    if sys.stdout.isatty():
        return
    try:
        with open("/dev/tty", "w") as tty:
            tty.write(msg + "\n")
    except OSError:  # no terminal (CI, a service): the build log has it
        pass


class build_ext_and_kernels(build_ext):
    def run(self):
        super().run()
        if not os.path.exists(self.get_ext_fullpath("dqdyn._engine._gate")):
            say("dqdyn: no C compiler was found, so the C call gate was not built: every result "
                "is the same, but single-state calls go through numba's dispatcher (about "
                "2 µs more per call; `dqdyn doctor --measure` times it). Install a C compiler "
                "(e.g. apt install gcc) and pip install again to build it.")
        if os.environ.get("DQDYN_SKIP_PRECOMPILE", "") not in ("", "0"):
            say("dqdyn: DQDYN_SKIP_PRECOMPILE set: kernels compile on first use")
            return
        editable = getattr(self, "editable_mode", False) or self.inplace
        root = os.path.abspath("src") if editable else os.path.abspath(self.build_lib)
        env = dict(os.environ)
        env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
        env["DQDYN_BUILDING_CACHE"] = "1"
        env.pop("DQDYN_CACHE_DIR", None)
        say(f"dqdyn: readying the kernels in {os.path.join(root, 'dqdyn')} (seconds with the "
            "kernels shipped for this Python, 5 to 10 minutes on 2 cores without; "
            "DQDYN_SKIP_PRECOMPILE=1 skips it)")
        try:
            subprocess.run([sys.executable, "-m", "dqdyn._engine.precompile"], env=env, check=True,
                           cwd=root)
        except (OSError, subprocess.CalledProcessError) as e:  # never fail the install
            say(f"dqdyn: precompiling the kernels failed ({e}); they compile on first use")
        try:  # the verdict of `dqdyn doctor`, as the install's last word
            r = subprocess.run([sys.executable, "-c", "from dqdyn.doctor import report; "
                                "r = report(); print(r['verdict'] + ('; fix: ' + r['fix'] "
                                "if r['fix'] else ''))"], env=env, cwd=root,
                               capture_output=True, text=True, timeout=120)
            if r.stdout.strip():
                say("dqdyn: " + r.stdout.strip().splitlines()[-1])
        except (OSError, subprocess.SubprocessError):
            pass
        if not editable:  # the wheel carries the unpacked kernels, not the archives too
            import glob

            for archive in glob.glob(os.path.join(root, "dqdyn", "_kernels_portable-*.tar.xz")):
                try:
                    os.unlink(archive)
                except OSError:
                    pass


setup(
    ext_modules=[
        Extension("dqdyn._engine._gate", ["src/dqdyn/_engine/_gate.c", "src/dqdyn/_engine/_gate_front.c"],
                  depends=["src/dqdyn/_engine/_gate.h"], include_dirs=[numpy.get_include()],
                  optional=True),
    ],
    cmdclass={"build_ext": build_ext_and_kernels},
)
