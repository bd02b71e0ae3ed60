"""Moved: the parallel-robot experiments of [MontgomerySmith2023] live in
`dqdyn.reproduce.parallel_robots` with every other paper's.

This name stays importable (``from dqdyn.parallel.reproduce import reproduce_parallel``): it is the
same module object.
"""

import sys

from dqdyn.reproduce import parallel_robots

sys.modules[__name__] = parallel_robots
