"""The single-link flexible-joint arm of [Mladenova, §7.5] (Marino–Spong), symbolically (sympy).

State ``x = (q_l, q̇_l, q_m, q̇_m)`` (eqs. (306)–(307); the corrected form of eq. (305): ``MgL`` and
``−2c ċ²/(1+c²)`` where the printed one has ``2Mg`` and ``+2c ċ²/(1+c²)``):

``f = (x₂, −(MgL/I_l) sin x₁ − (K/I_l)(x₁ − x₃), x₄, (K/I_m)(x₁ − x₃))``, ``g = (0, 0, 0, 1/I_m)``.

Lie brackets ``[f, g] = (∂g/∂x) f − (∂f/∂x) g`` (the appendix's convention), ``ad_f^k g =
[f, ad_f^{k−1} g]``.  The four vector fields are constant and
``det[g, ad_f g, ad_f² g, ad_f³ g] = K²/(I_l² I_m⁴)`` (claim 21): the system is globally
feedback-linearisable (Theorem 7), with the link angle ``y = x₁`` as linearising output of relative
degree 4 and ``y⁽⁴⁾ = α(x) + K/(I_l I_m) u``.
"""

from __future__ import annotations


def lie_bracket(f, g, x):
    """``[f, g] = (∂g/∂x) f − (∂f/∂x) g`` (sympy column vectors)."""
    return g.jacobian(x) * f - f.jacobian(x) * g


def lie_derivative(h, f, x):
    """``L_f h = (∂h/∂x) f`` of a scalar ``h``."""
    import sympy as sp

    return (sp.Matrix([h]).jacobian(x) * f)[0, 0]


def single_link_arm():
    """The §7.5 system and its feedback-linearisation data (sympy).  Returns a dict:
    ``symbols`` (I_l, I_m, M, g0, L, K), ``x``, ``f``, ``g``, ``brackets`` [g, ad_f g, ad_f² g,
    ad_f³ g], ``matrix`` (4×4 of the brackets as columns), ``det``, ``output`` (x₁),
    ``relative_degree``, ``coordinates`` [y₁…y₄] (link position, velocity, acceleration, jerk),
    ``alpha``, ``beta`` with ``y₄̇ = α + β u``."""
    import sympy as sp

    Il, Im, M, g0, L, K = sp.symbols("I_l I_m M g L K", positive=True)
    x1, x2, x3, x4 = x = sp.symbols("x1:5", real=True)
    X = sp.Matrix(x)
    MgL = M * g0 * L
    f = sp.Matrix([x2, -MgL / Il * sp.sin(x1) - K / Il * (x1 - x3), x4, K / Im * (x1 - x3)])
    g = sp.Matrix([0, 0, 0, 1 / Im])
    br = [g]
    for _ in range(3):
        br.append(sp.simplify(lie_bracket(f, br[-1], X)))
    A = sp.Matrix.hstack(*br)
    det = sp.simplify(A.det())
    h = x1
    ys = [h]
    r = None
    for k in range(1, 5):
        if r is None and sp.simplify(lie_derivative(ys[-1], g, X)) != 0:
            r = k
        ys.append(sp.simplify(lie_derivative(ys[-1], f, X)))
    if r is None:
        r = 4 if sp.simplify(lie_derivative(ys[3], g, X)) != 0 else None
    alpha = sp.simplify(ys[4])
    beta = sp.simplify(lie_derivative(ys[3], g, X))
    return {"symbols": (Il, Im, M, g0, L, K), "x": X, "f": f, "g": g, "brackets": br,
            "matrix": A, "det": det, "output": h, "relative_degree": r,
            "coordinates": ys[:4], "alpha": alpha, "beta": beta}


__all__ = ["single_link_arm", "lie_bracket", "lie_derivative"]
