"""Moved: seed 001's experiments live in :mod:`dqdyn.reproduce.seed001` with every other paper's.

This name stays importable (``from dqdyn.parallel.reproduce import reproduce_parallel``): it is the
same module object.
"""

import sys

from ..reproduce import seed001

sys.modules[__name__] = seed001
