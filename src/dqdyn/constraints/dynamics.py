"""Constrained dynamics: Udwadia–Kalaba forward dynamics, a KKT reference, constrained inverse
dynamics of closed chains, and constraint stabilization (time integration lives in
`dqdyn.simulation.simulate`, which calls `constrained_forward_dynamics` and
`project_state`).

Constraints are `dqdyn.constraints.Constraint` objects giving ``A(q, v) v̇ = b(q, v)``;
several are stacked row-wise.  The unconstrained model is ``M v̇ + h(q, v) = τ`` (``h = C v + g``,
dqdyn's CRBA / RNEA by default, or the Gauss-principle terms of `gauss` with
``dynamics="gauss"``).

**Forward dynamics** ([Silva2022, eqs. (62)–(63)], [Udwadia1992]).  With ``Q = τ − h``, the
unconstrained acceleration ``a = M⁻¹ Q`` and a factor ``M = L Lᵀ`` (Cholesky; any square root
works in the fundamental equation, the symmetric ``M^{1/2}`` of the paper included):

    D = A L⁻ᵀ,   Q_c = L D⁺ (b − A a),   v̇ = a + M⁻¹ Q_c

``D⁺`` is the Moore–Penrose pseudo-inverse (an SVD with relative cut-off ``rcond``), so redundant
(rank-deficient) constraints are handled; ``Q_c = Aᵀ λ`` with the minimum-norm multipliers
``λ = (A M⁻¹ Aᵀ)⁺ (b − A a)``.  This ``v̇`` minimizes Gauss's function ``½ (v̇ − a)ᵀ M (v̇ − a)``
subject to ``A v̇ = b`` and equals the Lagrange-multiplier (KKT) solution
``[M −Aᵀ; A 0] [v̇; λ] = [Q; b]`` (`kkt_forward_dynamics`).  If ``A v̇ = b`` has no
solution (inconsistent constraints) the residual ``(I − D D⁺)(b − A a)`` is non-zero and
`InfeasibleError` names it.

**Inverse dynamics of closed chains** ([Kim2012, §3.1, eqs. (56)–(66)]): with the open-chain inverse
dynamics ``τ_r = M v̇ + h`` and ``τ_r = τ + Aᵀ λ``, the passive rows give ``A_pᵀ λ = τ_pr − τ_p``
and the active ones ``τ_a = τ_ar − A_aᵀ λ``.  Unique when ``A_aᵀ`` vanishes on the null space of
``A_pᵀ`` (``m = n_p``, eq. 58); otherwise (redundant actuation) the minimum-norm active torque
(eqs. 62–64) or the minimum-norm multipliers (``objective="min_constraint_force"``); an
`InfeasibleError` when the passive rows have no solution (under-actuated
for the requested motion, ``m < n_p``) or when the motion violates ``A v̇ = b``.

**Stabilization.**  ``baumgarte=(α, β)`` replaces ``b`` by ``b − 2α A v − β² φ(q)``;
`project_state` projects ``q`` onto ``φ(q) = 0`` (Gauss–Newton with the constraint
Jacobian) and ``v`` onto ``A v = 0`` (in the kinetic-energy metric);
`dqdyn.simulation.simulate` projects after each step (``project=True``).

The methods live in one module each: `dqdyn.constraints.udwadia_kalaba` (the fundamental
equation's kernels, `udwadia_kalaba`), `dqdyn.constraints.forward`
(`constrained_forward_dynamics`, `constraint_terms`, the KKT reference),
`dqdyn.constraints._compiled` (the compiled rows and the one-call kernel),
`dqdyn.constraints.inverse` (`constrained_inverse_dynamics`) and
`dqdyn.constraints.stabilization` (`constraint_errors`, `project_state`); this module
re-exports their public names.
"""

from dqdyn.constraints.forward import (
    ConstrainedDynamicsResult,
    constrained_forward_dynamics,
    constraint_terms,
    kkt_forward_dynamics,
    kkt_solve,
)
from dqdyn.constraints.inverse import (
    ConstrainedInverseResult,
    constrained_inverse_dynamics,
)
from dqdyn.constraints.stabilization import constraint_errors, project_state
from dqdyn.constraints.udwadia_kalaba import udwadia_kalaba

__all__ = [
    "ConstrainedDynamicsResult",
    "ConstrainedInverseResult",
    "constrained_forward_dynamics",
    "constrained_inverse_dynamics",
    "constraint_errors",
    "constraint_terms",
    "kkt_forward_dynamics",
    "kkt_solve",
    "project_state",
    "udwadia_kalaba",
]
