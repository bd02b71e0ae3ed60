"""Dual quaternion algebra on float64 arrays (..., 8), batch axes first.

Re-exports the public functions of:

* `rotations` — quaternion / matrix / rpy / pose conversions;
* `dualquat` — products, conjugates, norms, Hamilton operators, adjoints, exp/log, screws;
* `inertia` — quaternionic inertia tensor, ``L3``, 6×6 spatial inertia;
* `vector_parameter` — Rodrigues/Gibbs vector-parameters and dual vector-parameters;
* `diagonalize` — closed-form principal axes of a symmetric 3×3 matrix [Mladenova, §5];
* `vp_kinematics` — Euler / Bryant / DH vector-parameters, chain Jacobians, screws, Exp(tA);
* `dq` — the scripting value type ``DQ`` and the constants ``i_, j_, k_, E_``.

Nothing is compiled at import: the numba kernels compile on first use (and are cached on disk).
"""

from dqdyn.algebra import diagonalize, dq, dualquat, inertia, rotations, vector_parameter, vp_kinematics  # noqa: F401
from dqdyn.algebra.diagonalize import *  # noqa: F401,F403
from dqdyn.algebra.dq import *  # noqa: F401,F403
from dqdyn.algebra.dualquat import *  # noqa: F401,F403
from dqdyn.algebra.inertia import *  # noqa: F401,F403
from dqdyn.algebra.rotations import *  # noqa: F401,F403
from dqdyn.algebra.vector_parameter import *  # noqa: F401,F403
from dqdyn.algebra.vp_kinematics import *  # noqa: F401,F403

__all__ = sorted(
    set(rotations.__all__)
    | set(dualquat.__all__)
    | set(inertia.__all__)
    | set(vector_parameter.__all__)
    | set(dq.__all__)
    | set(diagonalize.__all__)
    | set(vp_kinematics.__all__)
)
