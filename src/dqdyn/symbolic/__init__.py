"""Symbolic dynamics (sympy): ``M``, ``C``, ``g`` of a kinematic tree in symbolic ``q``, ``v``.

[Mladenova, §8] (after Hollerbach and the REDUCE generator of the paper): the inertia matrix
by the vector formula (364) and by the trace formula (351), the Coriolis / centrifugal vector by
(368)–(371) with the velocity-product accelerations (339)–(340), gravity by (372); the
Christoffel symbols, the regressor form and code generation (a numpy function through
``sympy.lambdify``, C source through sympy's C printer, both after ``sympy.cse``).

Names from the model (model, link, joint names) never enter the generated source as they are:
they appear only as plain identifiers (``[A-Za-z0-9_]``) in comments, and a function name that
is not a plain identifier raises `UnsafeNameError`.

Entry point: `dynamics`.  Needs the optional dependency ``sympy`` (``pip install
dqdyn[symbolic]``).
"""

from dqdyn.symbolic.dynamics import PARAMETER_NAMES, SymbolicDynamics, dynamics

__all__ = ["dynamics", "SymbolicDynamics", "PARAMETER_NAMES"]
