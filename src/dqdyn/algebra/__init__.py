"""Dual quaternion algebra on float64 arrays (..., 8), batch axes first.

Re-exports the public functions of:

* :mod:`.rotations` — quaternion / matrix / rpy / pose conversions;
* :mod:`.dualquat` — products, conjugates, norms, Hamilton operators, adjoints, exp/log, screws;
* :mod:`.inertia` — quaternionic inertia tensor, ``L3``, 6×6 spatial inertia;
* :mod:`.vector_parameter` — Rodrigues/Gibbs vector-parameters and dual vector-parameters;
* :mod:`.dq` — the scripting value type ``DQ`` and the constants ``i_, j_, k_, E_``.

Nothing is compiled at import: the numba kernels compile on first use (and are cached on disk).
"""

from .rotations import *  # noqa: F401,F403
from .dualquat import *  # noqa: F401,F403
from .inertia import *  # noqa: F401,F403
from .vector_parameter import *  # noqa: F401,F403
from .dq import *  # noqa: F401,F403
from . import dq, dualquat, inertia, rotations, vector_parameter  # noqa: F401

__all__ = sorted(
    set(rotations.__all__)
    | set(dualquat.__all__)
    | set(inertia.__all__)
    | set(vector_parameter.__all__)
    | set(dq.__all__)
)
