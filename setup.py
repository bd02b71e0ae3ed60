"""Build of the optional C call gate (src/dqdyn/_gate.c); everything else is in pyproject.toml.

The gate only shortens the path from Python into the compiled (numba) kernels for single
states; when no C compiler is available the build skips it (``optional=True``) and dqdyn calls
its kernels through numba's dispatcher instead (same numbers, about 0.6 µs more per call).
"""

import numpy
from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension("dqdyn._gate", ["src/dqdyn/_gate.c"], include_dirs=[numpy.get_include()],
                  optional=True),
    ],
)
