"""Forward dynamics, in one place to look: the public functions of the articulated-body family.

Each algorithm has its own module — `aba` [Kim2012, Table 3], `hybrid` (Table 4),
`minverse` (``M⁻¹``, §1B.7), `constrained_aba` (§3.2–3.3) — with what they share in
`articulated` and the Cholesky helpers in `linalg`.
"""

from dqdyn.dynamics.aba import aba
from dqdyn.dynamics.constrained_aba import constrained_aba, constrained_hybrid_dynamics
from dqdyn.dynamics.hybrid import hybrid_dynamics
from dqdyn.dynamics.minverse import mass_matrix_inverse

__all__ = ["aba", "hybrid_dynamics", "mass_matrix_inverse", "constrained_aba", "constrained_hybrid_dynamics"]
