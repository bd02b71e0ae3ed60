"""``M(q)``, ``C(q, v)``, ``g(q)`` of a fixed-base kinematic tree as sympy matrices [Mladenova, §8].

All vectors are base-frame and base-origin referenced [Mladenova, §8.2]: body ``j`` has world
rotation ``R_j`` and origin ``p_j``; joint ``s`` has the Plücker column ``(δ_s, λ_s)`` — ``δ_s``
the unit axis of a revolute joint (0 for a prismatic one) and ``λ_s = −δ̃_s p_s + τ_s`` the
velocity of the body point at the base origin per unit joint rate (eqs. 316–321).  The body
velocities are ``ω_s = ω_l + δ_s q̇_s`` (328) and ``u_s = u_l + λ_s q̇_s`` (327), ``l`` the parent.

* Inertia, vector formula (364): with the composite (subtree) quantities ``K_k`` (rotational
  inertia about the base origin), ``H_k = Σ m_j r_j`` and ``M_k = Σ m_j`` (362)–(365),
  ``B_sk = δ_sᵀ(K_k δ_k + H_k × λ_k) + λ_sᵀ(δ_k × H_k + M_k λ_k)`` for ``k`` in the subtree of ``s``.
* Inertia, trace formula (351): ``B_sk = Σ_j tr(∂_s T_j J_j ∂_k T_jᵀ)`` with the pseudo-inertia
  ``J_j`` (355)–(357) and ``∂_s T_j = Δ_s T_j`` (316).
* Coriolis / centrifugal vector (368): ``C_s = δ_sᵀ N_s + λ_sᵀ D_s`` with (369)–(371) and the
  velocity-product accelerations (339)–(340) (the corrected (340): ``u̇*_s =
  u̇*_l + ω_s × λ_s q̇_s + u_s × δ_s q̇_s``).
* Gravity (372): ``G_s = −gᵀ(δ_s × H_s + M_s λ_s)``, which is ``+∂V/∂q_s`` (the sign of (350) corrected), so
  ``M q̈ + C(q, q̇) q̇ + g = τ`` — dqdyn's sign convention.
* Armature (`Model.armature`, rotor inertia geared to the DoFs; a mimic joint's already folded
  into its master's times ``scale²``): ``M = B + diag(armature)`` in joint space (both inertia
  formulas), hence ``τ`` gains ``armature ⊙ q̈`` (`rnea`) and ``T`` gains ``½ Σ armature_j v_j²``;
  ``C`` and ``g`` are unchanged (the diagonal is constant), as in the compiled kernels.  With
  ``symbolic_armature=True`` the armature is one symbol per DoF instead of the model's numbers,
  named ``armature_<joint>`` (the joint name made a plain identifier by `_names.identifiers`).
* The Coriolis *matrix* is the Christoffel one (the factorization dqdyn's ``coriolis_matrix`` and
  Pinocchio compute): ``C_kj = Σ_i Γ_kij v_i`` with the Christoffel symbols of the first kind
  ``Γ_kij = ½(∂M_kj/∂q_i + ∂M_ki/∂q_j − ∂M_ij/∂q_k)``.  They are obtained without
  differentiating ``M``: the vector (368) is the quadratic form ``Σ_ij Γ_kij v_i v_j``, so
  ``Γ_kij`` follows from (368) evaluated at ``v = e_i``, ``e_j``, ``e_i + e_j`` (polarization).

Joints: revolute (continuous), prismatic, helical, fixed and mimic joints (a mimic joint adds
``scale`` times its column to its master's variable).  Multi-DoF joints raise
`ModelError`.
"""

from __future__ import annotations

import numpy as np

from dqdyn.errors import ModelError, ShapeError

try:
    import sympy as sp
    from sympy.core.function import AppliedUndef
    from sympy.core.parameters import distribute
except ImportError as exc:  # pragma: no cover - exercised only without sympy
    raise ImportError("dqdyn.symbolic needs sympy: pip install 'dqdyn[symbolic]'") from exc

from dqdyn.algebra.rotations import matrix_from_pose
from dqdyn.multibody.joints import FIXED, HELICAL, JOINT_TYPE_NAMES, PRISMATIC, REVOLUTE
from dqdyn.symbolic._names import c_identifier, identifiers, python_identifier, tag

#: order of the ten inertial parameters of a body (as `dqdyn.inertial_parameters`):
#: mass, first moment ``h = m c`` and the rotational inertia about the body origin
PARAMETER_NAMES = ("m", "hx", "hy", "hz", "Ixx", "Ixy", "Iyy", "Ixz", "Iyz", "Izz")

_SUPPORTED = (REVOLUTE, PRISMATIC, HELICAL, FIXED)


def _num(x: float, tol: float = 1e-14):
    """A sympy number for a model constant; round-off zeros and units become exact."""
    x = float(x)
    if abs(x) < tol:
        return sp.S.Zero
    if abs(abs(x) - 1.0) < tol:
        return sp.S.One if x > 0 else sp.S.NegativeOne
    return sp.Float(x)


def _vec(a):
    return sp.Matrix([_num(t) for t in np.asarray(a, dtype=float).reshape(-1)])


def _mat(a):
    a = np.asarray(a, dtype=float)
    return sp.Matrix(a.shape[0], a.shape[1], [_num(t) for t in a.reshape(-1)])


def _cross(a, b):
    return sp.Matrix([a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]])


def _dot(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


def _skew(a):
    return sp.Matrix([[0, -a[2], a[1]], [a[2], 0, -a[0]], [-a[1], a[0], 0]])


def _rodrigues(axis, c, s):
    """Rotation by the angle with cosine ``c``, sine ``s`` about the (numeric) unit ``axis``."""
    a = [_num(t) for t in axis]
    A = _skew(a)
    aat = sp.Matrix(3, 3, lambda i, j: a[i] * a[j])
    return c * sp.eye(3) + s * A + (1 - c) * aat


def _zero3():
    return sp.zeros(3, 1)


class SymbolicDynamics:
    """The symbolic dynamics of a model.  Build with `dynamics`.

    Attributes
    ----------
    q, v:
        tuples of sympy symbols ``q0 … q{nq-1}``, ``v0 …`` (the model's q / v order).
    M, C, g:
        sympy matrices: ``M(q)`` (nv×nv, vector formula 364), the Christoffel ``C(q, v)``
        (nv×nv) and ``g(q)`` (nv×1, eq. 372): ``M q̈ + C q̇ + g = τ``.
    c:
        the Coriolis / centrifugal vector ``C(q, v) v`` of eq. (368) (nv×1).
    a:
        tuple of sympy symbols ``a0 …`` (joint accelerations, for `rnea` and `regressor`).
    armature:
        tuple of nv sympy numbers: the model's `Model.armature`, on the diagonal of ``M``; with
        ``symbolic_armature=True`` nv symbols ``armature_<joint>`` (the joint that owns the DoF,
        its name as a plain identifier), ``armature_values`` the model's numbers for them
        (empty otherwise).
    params:
        with ``symbolic_params=True``: per body the ten symbols of `PARAMETER_NAMES`
        (``m_1, hx_1, …``), a (nbodies, 10) list; ``param_values`` the model's numbers for them.
    """

    def __init__(self, model, symbolic_params: bool = False, symbolic_armature: bool = False):
        self.model = model
        self.symbolic_params = bool(symbolic_params)
        self.symbolic_armature = bool(symbolic_armature)
        nb = model.nbodies
        self.nbodies = nb
        for i in range(1, nb + 1):
            jt = int(model.joint_type[i])
            if jt not in _SUPPORTED:
                raise ModelError(
                    f"dqdyn.symbolic.dynamics: joint {model.joint_names_all[i]!r} is "
                    f"{JOINT_TYPE_NAMES.get(jt, jt)}; expected revolute, prismatic, helical or fixed "
                    "joints (multi-DoF joints are not supported)")
        self.q = tuple(sp.symbols(f"q0:{model.nq}")) if model.nq else ()
        self.v = tuple(sp.symbols(f"v0:{model.nv}")) if model.nv else ()
        self.a = tuple(sp.symbols(f"a0:{model.nv}")) if model.nv else ()
        self.armature_values = {}
        if self.symbolic_armature:
            owner = [""] * model.nv
            for i in range(1, nb + 1):
                if int(model.joint_nv[i]):  # not a fixed or mimic joint
                    owner[int(model.idx_v[i])] = model.joint_names_all[i]
            self.armature = tuple(sp.Symbol(n) for n in identifiers(owner, "armature_"))
            self.armature_values = {s_: float(x) for s_, x in zip(self.armature, model.armature)}
        else:
            self.armature = tuple(_num(x) for x in model.armature)
        self.gravity_vector = _vec(model.gravity)
        self._cache = {}
        #: the straight-line program: (intermediate symbol, expression) in evaluation order
        self.program = []
        self._expanded = {}
        with distribute(False):
            self._kinematics()
            self._inertias()
            self._composites()
            self.M_program = self._mass_matrix_vector()
            self.g_program = self._gravity()
            self.c_program = self._bias(self.v)
            self.christoffel_program = self._christoffel()
            n = model.nv
            self.C_program = sp.Matrix(n, n, lambda k, j: self._let(sp.Add(*[
                self.christoffel_program[k][i][j] * self.v[i] for i in range(n)])))

    # ---------------------------------------------------------------- the program
    def _let(self, e):
        """Name a non-trivial intermediate result (keeps expressions small: the generated
        code is a straight-line program, as the paper's REDUCE → FORTRAN generator)."""
        e = sp.sympify(e)
        if e.is_Atom or (e.is_Mul and len(e.args) == 2 and e.args[0].is_Number and e.args[1].is_Atom):
            return e
        s_ = sp.Symbol(f"x{len(self.program)}")
        self.program.append((s_, e))
        return s_

    def _lv(self, a):
        return a.applyfunc(self._let)

    def expand(self, expr):
        """``expr`` (in program symbols) as an expression in ``q``, ``v`` (and parameters)."""
        val = self._expanded
        if len(val) < len(self.program):
            with distribute(False):
                for s_, e in self.program[len(val):]:
                    val[s_] = e.xreplace(val)
        return sp.sympify(expr).xreplace(val)

    def _expand_matrix(self, name):
        if name not in self._cache:
            self._cache[name] = self.expand(getattr(self, name + "_program"))
        return self._cache[name]

    @property
    def M(self):
        """``M(q)`` (sympy matrix in ``q``; the vector formula 364, plus ``diag(armature)``)."""
        return self._expand_matrix("M")

    @property
    def C(self):
        """Christoffel ``C(q, v)`` (sympy matrix)."""
        return self._expand_matrix("C")

    @property
    def g(self):
        """``g(q)`` (sympy column, eq. 372)."""
        return self._expand_matrix("g")

    @property
    def c(self):
        """``C(q, v) v`` (sympy column, eq. 368)."""
        return self._expand_matrix("c")

    @property
    def christoffel(self):
        """``Γ[k][i][j]`` as sympy expressions in ``q``."""
        if "christoffel" not in self._cache:
            n = self.model.nv
            G = self.christoffel_program
            self._cache["christoffel"] = [[[self.expand(G[k][i][j]) for j in range(n)]
                                           for i in range(n)] for k in range(n)]
        return self._cache["christoffel"]

    # ---------------------------------------------------------------- kinematics (309)–(336)
    def _kinematics(self):
        m = self.model
        nb = self.nbodies
        R = [sp.eye(3)] + [None] * nb
        p = [_zero3()] + [None] * nb
        delta = [None] * (nb + 1)
        lam = [None] * (nb + 1)
        #: per body: list of (variable index, scale) its joint rate reads (empty for fixed)
        self._var = [None] * (nb + 1)
        for i in range(1, nb + 1):
            par = int(m.parent[i])
            T = matrix_from_pose(m.joint_placement[i])
            Rjf = self._lv(R[par] * _mat(T[:3, :3]))
            o = self._lv(p[par] + R[par] * _vec(T[:3, 3]))
            jt = int(m.joint_type[i])
            if jt == FIXED:
                R[i], p[i] = Rjf, o
                self._var[i] = None
                continue
            axis = np.asarray(m.joint_axis[i], dtype=float)
            iv, iq = int(m.idx_v[i]), int(m.idx_q[i])
            scale, offset = float(m.mimic_scale[i]), float(m.mimic_offset[i])
            th = self._let(_num(scale) * self.q[iq] + _num(offset)) if (scale != 1.0 or offset != 0.0) else self.q[iq]
            self._var[i] = (iv, _num(scale))
            d = self._lv(Rjf * _vec(axis))
            if jt == PRISMATIC:
                R[i] = Rjf
                p[i] = self._lv(o + d * th)
                delta[i] = _zero3()
                lam[i] = d
            else:
                R[i] = self._lv(Rjf * _rodrigues(axis, self._let(sp.cos(th)), self._let(sp.sin(th))))
                delta[i] = d
                lam[i] = self._lv(_cross(o, d))
                p[i] = o
                if jt == HELICAL:
                    pitch = _num(m.joint_pitch[i])
                    p[i] = self._lv(o + d * (pitch * th))
                    lam[i] = self._lv(lam[i] + d * pitch)
        self.R, self.p, self.delta, self.lam = R, p, delta, lam

    # ---------------------------------------------------------------- inertias (355)–(366)
    def _inertias(self):
        m = self.model
        nb = self.nbodies
        self.params = []
        self.param_values = {}
        self.mass_b = [sp.S.Zero] * (nb + 1)
        self.H_b = [_zero3()] * (nb + 1)  # m r* (world)
        self.K_b = [sp.zeros(3, 3)] * (nb + 1)  # rotational inertia about the world origin
        self.r_b = [None] * (nb + 1)  # world CoM (numeric parameters only)
        self.Ic_b = [None] * (nb + 1)  # centroidal inertia in world axes (numeric parameters only)
        from dqdyn.dynamics.derivatives import inertial_parameters

        pi = inertial_parameters(m)
        for i in range(1, nb + 1):
            R, p = self.R[i], self.p[i]
            if self.symbolic_params:
                syms = sp.symbols(" ".join(f"{n}_{i}" for n in PARAMETER_NAMES))
                self.params.append(syms)
                for s_, val in zip(syms, pi[i - 1]):
                    self.param_values[s_] = float(val)
                mass, hx, hy, hz, ixx, ixy, iyy, ixz, iyz, izz = syms
                Io = sp.Matrix([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])
                Rh = self._lv(R * sp.Matrix([hx, hy, hz]))
                K = (self._lv(self._lv(R * Io) * R.T) + mass * (_dot(p, p) * sp.eye(3) - p * p.T)
                     + 2 * _dot(p, Rh) * sp.eye(3) - p * Rh.T - Rh * p.T)
                self.mass_b[i] = mass
                self.H_b[i] = self._lv(mass * p + Rh)
                self.K_b[i] = self._lv(K)
            else:
                mass = _num(m.mass[i])
                r = self._lv(p + R * _vec(m.com[i]))
                Ic = self._lv(self._lv(R * _mat(m.inertia[i])) * R.T)
                self.r_b[i], self.Ic_b[i] = r, Ic
                self.mass_b[i] = mass
                self.H_b[i] = self._lv(mass * r)
                # (362): K = Σ (I* + m r̃ r̃ᵀ), r̃ r̃ᵀ = rᵀr I − r rᵀ
                self.K_b[i] = self._lv(Ic + mass * (self._let(_dot(r, r)) * sp.eye(3) - r * r.T))

    def _composites(self):
        """Subtree sums (362), (363), (365) — the inward iterations (373)–(377)."""
        nb = self.nbodies
        par = self.model.parent
        K = [self.K_b[i] for i in range(nb + 1)]
        H = [self.H_b[i] for i in range(nb + 1)]
        Mt = [self.mass_b[i] for i in range(nb + 1)]
        for i in range(nb, 0, -1):
            j = int(par[i])
            if j > 0:
                K[j] = self._lv(K[j] + K[i])
                H[j] = self._lv(H[j] + H[i])
                Mt[j] = self._let(Mt[j] + Mt[i])
        self.K_c, self.H_c, self.M_c = K, H, Mt
        # (378)–(379): X_k = K δ + H × λ, Y_k = δ × H + M λ
        self.X = [None] * (nb + 1)
        self.Y = [None] * (nb + 1)
        for k in range(1, nb + 1):
            if self._var[k] is None:
                continue
            d, la = self.delta[k], self.lam[k]
            self.X[k] = self._lv(K[k] * d + _cross(H[k], la))
            self.Y[k] = self._lv(_cross(d, H[k]) + Mt[k] * la)

    def _joint_bodies(self):
        return [i for i in range(1, self.nbodies + 1) if self._var[i] is not None]

    def _ancestors(self, k):
        """Joint bodies on the path from body ``k`` (included) to the base."""
        out = []
        while k > 0:
            if self._var[k] is not None:
                out.append(k)
            k = int(self.model.parent[k])
        return out

    def _to_v(self, joint_level: dict, n):
        """Map a joint-level symmetric matrix {(s, k): expr} to the v-level nv×nv matrix, plus
        ``diag(armature)`` (v-level already: a mimic joint's is in its master's entry, times
        ``scale²``, as the compiled kernels' ``M += diag(armature)``)."""
        out = [[sp.S.Zero] * n for _ in range(n)]
        for (s, k), e in joint_level.items():
            (a, sa), (b, sb) = self._var[s], self._var[k]
            term = e if (sa == 1 and sb == 1) else sa * sb * e
            out[a][b] = out[a][b] + term
            if s != k:
                out[b][a] = out[b][a] + term
        for a, r in enumerate(self.armature):
            if r != 0:
                out[a][a] = out[a][a] + r
        return sp.Matrix(n, n, lambda i, j: self._let(out[i][j]))

    # ---------------------------------------------------------------- B: vector formula (364)
    def _mass_matrix_vector(self):
        B = {}
        for k in self._joint_bodies():
            for s in self._ancestors(k):
                B[(s, k)] = _dot(self.delta[s], self.X[k]) + _dot(self.lam[s], self.Y[k])
        return self._to_v(B, self.model.nv)

    # ---------------------------------------------------------------- B: trace formula (351)
    def mass_matrix_trace(self, expanded: bool = True):
        """``M = B + diag(armature)``, ``B`` by Hollerbach's trace formula (351) with the
        pseudo-inertias (355)–(357) (``expanded=False``: in program symbols, for
        `numpy_function`'s ``extra``)."""
        if "trace" in self._cache:
            return self.expand(self._cache["trace"]) if expanded else self._cache["trace"]
        nb = self.nbodies
        par = self.model.parent
        with distribute(False):
            Jw = [None] * (nb + 1)
            for j in range(1, nb + 1):
                R, p = self.R[j], self.p[j]
                T = sp.Matrix.vstack(sp.Matrix.hstack(R, p), sp.Matrix([[0, 0, 0, 1]]))
                if self.symbolic_params:
                    mass, hx, hy, hz, ixx, ixy, iyy, ixz, iyz, izz = self.params[j - 1]
                    Io = sp.Matrix([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])
                    h = sp.Matrix([hx, hy, hz])
                else:
                    mass = _num(self.model.mass[j])
                    c = np.asarray(self.model.com[j], dtype=float)
                    Ic = np.asarray(self.model.inertia[j], dtype=float)
                    Io_n = Ic + float(self.model.mass[j]) * (c @ c * np.eye(3) - np.outer(c, c))
                    Io, h = _mat(Io_n), _vec(self.model.mass[j] * c)
                # (355)–(357): second moments ∫ y yᵀ dm = ½ tr(I) 1 − I (off-diagonals −I_xy)
                S2 = Io.trace() / 2 * sp.eye(3) - Io
                J = sp.Matrix.vstack(sp.Matrix.hstack(S2, h), sp.Matrix.hstack(h.T, sp.Matrix([[mass]])))
                Jw[j] = self._lv(self._lv(T * J) * T.T)
            for i in range(nb, 0, -1):  # composite pseudo-inertia of each subtree
                if int(par[i]) > 0:
                    Jw[int(par[i])] = self._lv(Jw[int(par[i])] + Jw[i])
            Delta = {}
            for s in self._joint_bodies():
                Delta[s] = sp.Matrix.vstack(sp.Matrix.hstack(_skew(self.delta[s]), self.lam[s]),
                                            sp.zeros(1, 4))
            B = {}
            for k in self._joint_bodies():
                for s in self._ancestors(k):
                    B[(s, k)] = (Delta[s] * Jw[k] * Delta[k].T).trace()
            out = self._to_v(B, self.model.nv)
        self._cache["trace"] = out
        return self.expand(out) if expanded else out

    # ---------------------------------------------------------------- G (372)
    def _gravity(self):
        G = [sp.S.Zero] * self.model.nv
        for s in self._joint_bodies():
            a, sc = self._var[s]
            G[a] = G[a] - sc * _dot(self.gravity_vector, self.Y[s])
        return sp.Matrix([self._let(x) for x in G])

    # ---------------------------------------------------------------- C (368)–(371), (339)–(340)
    def _bias(self, vel):
        """``C(q, v) v`` for joint-space velocity ``vel`` (symbols or numbers), eq. (368)."""
        nb = self.nbodies
        par = self.model.parent
        w = [sp.S.Zero] * (nb + 1)
        om = [_zero3()] * (nb + 1)
        u = [_zero3()] * (nb + 1)
        dom = [_zero3()] * (nb + 1)
        du = [_zero3()] * (nb + 1)
        for i in range(1, nb + 1):
            lp = int(par[i])
            if self._var[i] is None:
                om[i], u[i], dom[i], du[i] = om[lp], u[lp], dom[lp], du[lp]
                continue
            a, sc = self._var[i]
            w[i] = self._let(sp.sympify(vel[a]) * sc)
            d, la = self.delta[i], self.lam[i]
            om[i] = self._lv(om[lp] + d * w[i])  # (328)
            u[i] = self._lv(u[lp] + la * w[i])  # (327)
            dom[i] = self._lv(dom[lp] + self._lv(_cross(om[lp], d)) * w[i])  # (339)
            du[i] = self._lv(du[lp] + self._lv(_cross(om[i], la) + _cross(u[i], d)) * w[i])  # (340)
        N = [_zero3()] * (nb + 1)
        D = [_zero3()] * (nb + 1)
        for j in range(1, nb + 1):
            if self.symbolic_params:
                # the same force in the form linear in the parameters (Featherstone's
                # f = I a + v ×* I v about the base origin): L = K ω + H × u, P = m u + ω × H
                K, H, mass = self.K_b[j], self.H_b[j], self.mass_b[j]
                L = self._lv(K * om[j] + _cross(H, u[j]))
                P = self._lv(mass * u[j] + _cross(om[j], H))
                N[j] = self._lv(K * dom[j] + _cross(H, du[j]) + _cross(om[j], L) + _cross(u[j], P))
                D[j] = self._lv(mass * du[j] + _cross(dom[j], H) + _cross(om[j], P))
            else:
                r, Ic, mass = self.r_b[j], self.Ic_b[j], self.mass_b[j]
                # (371): a* = u̇* + ω̇* × r + ω × (u + ω × r)
                vc = self._lv(u[j] + _cross(om[j], r))
                ast = self._lv(du[j] + _cross(dom[j], r) + _cross(om[j], vc))
                N[j] = self._lv(Ic * dom[j] + _cross(om[j], self._lv(Ic * om[j]))
                                + mass * _cross(r, ast))  # (369)
                D[j] = self._lv(mass * ast)  # (370)
        for i in range(nb, 0, -1):
            lp = int(par[i])
            if lp > 0:
                N[lp] = self._lv(N[lp] + N[i])
                D[lp] = self._lv(D[lp] + D[i])
        Cv = [sp.S.Zero] * self.model.nv
        for s in self._joint_bodies():
            a, sc = self._var[s]
            Cv[a] = Cv[a] + sc * (_dot(self.delta[s], N[s]) + _dot(self.lam[s], D[s]))  # (368)
        return sp.Matrix([self._let(x) for x in Cv])

    def _christoffel(self):
        """``Γ[k][i][j]`` (first kind, symmetric in i, j) by polarization of (368)."""
        n = self.model.nv
        diag = []
        for i in range(n):
            e = [0] * n
            e[i] = 1
            diag.append(self._bias(e))
        G = [[[None] * n for _ in range(n)] for _ in range(n)]
        for i in range(n):
            for k in range(n):
                G[k][i][i] = diag[i][k]
            for j in range(i + 1, n):
                e = [0] * n
                e[i] = e[j] = 1
                cij = self._bias(e)
                for k in range(n):
                    val = (cij[k] - diag[i][k] - diag[j][k]) / 2
                    G[k][i][j] = G[k][j][i] = self._let(val)
        return G

    # ---------------------------------------------------------------- energies
    def kinetic_energy(self):
        """``T(q, v) = ½ Σ_j (ω_j, u_j)ᵀ I_j (ω_j, u_j) + ½ Σ_k armature_k v_k²`` (sympy
        expression in ``q``, ``v``; ``= ½ vᵀ M v``)."""
        if "T" in self._cache:
            return self._cache["T"]
        nb = self.nbodies
        par = self.model.parent
        om = [_zero3()] * (nb + 1)
        u = [_zero3()] * (nb + 1)
        T = sp.S.Zero
        with distribute(False):
            for i in range(1, nb + 1):
                lp = int(par[i])
                om[i], u[i] = om[lp], u[lp]
                if self._var[i] is not None:
                    a, sc = self._var[i]
                    om[i] = om[i] + self.delta[i] * (sc * self.v[a])
                    u[i] = u[i] + self.lam[i] * (sc * self.v[a])
                K, H, mass = self.K_b[i], self.H_b[i], self.mass_b[i]
                T = T + _dot(om[i], K * om[i]) / 2 + _dot(om[i], _cross(H, u[i])) + mass * _dot(u[i], u[i]) / 2
            T = T + sp.Add(*[r * vj**2 / 2 for r, vj in zip(self.armature, self.v) if r != 0])
            self._cache["T"] = self.expand(T)
        return self._cache["T"]

    def potential_energy(self):
        """``V(q) = −Σ m_j gᵀ r_j`` (sympy expression in ``q``)."""
        with distribute(False):
            return self.expand(-sp.Add(*[_dot(self.gravity_vector, self.H_b[i])
                                         for i in range(1, self.nbodies + 1)]))

    # ---------------------------------------------------------------- inverse dynamics
    def rnea(self):
        """``(τ, a)``: ``τ(q, v, a) = M a + C v + g`` (sympy column; ``M`` holds
        ``diag(armature)``, so ``τ`` holds ``armature ⊙ a``), ``a`` the acceleration symbols —
        what `dqdyn.rnea` computes."""
        if "rnea" not in self._cache:
            self._cache["rnea"] = self.M * sp.Matrix(self.a) + self.c + self.g
        return self._cache["rnea"], self.a

    # ---------------------------------------------------------------- regressor
    def regressor(self):
        """``(Y, a)``: ``Y(q, v, a)`` (nv × 10·nbodies, sympy) with ``M a + C v + g = Y π +
        armature ⊙ a``, ``a`` the acceleration symbols.  Needs ``symbolic_params=True``; ``π``
        in the order of `PARAMETER_NAMES` per body, as `dqdyn.inertial_parameters`.  The
        dynamics are linear in ``π``, so ``Y`` is the Jacobian of ``τ`` with respect to it
        (fine for small models; it differentiates the expanded expressions).  The armature
        (`Model.armature`) is not a body parameter: its term is left out of ``Y π``, as in
        `dqdyn.joint_torque_regressor` and Pinocchio's regressor (with ``symbolic_armature=True``
        its columns are ``τ.jacobian(armature) = diag(a)``)."""
        if not self.symbolic_params:
            raise ModelError("regressor: build the dynamics with symbolic_params=True")
        if "regressor" in self._cache:
            return self._cache["regressor"]
        tau, acc = self.rnea()
        flat = [s_ for row in self.params for s_ in row]
        Y = tau.jacobian(flat)
        self._cache["regressor"] = (Y, acc)
        return Y, acc

    # ---------------------------------------------------------------- code generation
    def _known_symbols(self):
        known = set(self.q) | set(self.v) | {s_ for s_, _ in self.program}
        if self.symbolic_params:
            known |= set(self._param_symbols())
        if self.symbolic_armature:
            known |= set(self.armature)
        return known

    def _outputs(self, which):
        out = []
        known = None
        for w in which:
            if not isinstance(w, str):  # a matrix in program symbols
                X = sp.Matrix(w)
                known = self._known_symbols() if known is None else known
                foreign = sorted(map(str, X.free_symbols - known))
                funcs = sorted({str(f.func) for f in X.atoms(AppliedUndef)})
                if foreign or funcs:
                    # any other symbol or function name would be printed verbatim into the source
                    raise ShapeError(
                        "which: a custom output may hold only the program's symbols (q, v, the "
                        "parameters and the program's intermediates) and sympy's own functions; "
                        f"got {', '.join(repr(t) for t in foreign + funcs)}")
                out.append(X)
                continue
            if w not in ("M", "C", "g", "c"):
                raise ShapeError(f"which: unknown output {w!r}; expected some of 'M', 'C', 'g', 'c'")
            out.append(getattr(self, w + "_program"))
        return out

    def _needed(self, exprs):
        """The program's assignments that ``exprs`` depend on (dead code removed), in order."""
        defs = {s_: k for k, (s_, _) in enumerate(self.program)}
        need = set()
        stack = [a for X in exprs for e in X for a in e.free_symbols if a in defs]
        while stack:
            a = stack.pop()
            if a in need:
                continue
            need.add(a)
            stack.extend(b for b in self.program[defs[a]][1].free_symbols if b in defs and b not in need)
        return [(s_, e) for s_, e in self.program if s_ in need]

    def _param_symbols(self):
        return [s_ for row in self.params for s_ in row]

    def python_source(self, name: str = "dynamics", which=("M", "C", "g")) -> str:
        """Python source of ``name(q, v[, pi][, armature]) -> tuple of numpy arrays`` (scalar
        ``math`` arithmetic, one line per program step; ``pi`` with symbolic parameters,
        ``armature`` (nv values) with symbolic armature).

        ``name`` must be a plain Python identifier (`UnsafeNameError`
        otherwise); the model's name appears only as an identifier in a comment."""
        from sympy.printing.pycode import PythonCodePrinter

        python_identifier(name, "name")

        class _P(PythonCodePrinter):
            def _print_Float(self, e):
                return repr(float(e))

        pr = _P({"standard": "python3", "order": "none"})
        exprs = self._outputs(which)
        args = (["q", "v"] + (["pi"] if self.symbolic_params else [])
                + (["armature"] if self.symbolic_armature else []))
        lines = [f"# generated by dqdyn.symbolic [Mladenova, sec. 8] for model {tag(self.model.name)}",
                 "import math", "import numpy", "", f"def {name}({', '.join(args)}):"]
        if self.q:
            lines.append(f"    {', '.join(map(str, self.q))}, = [float(t) for t in q]")
        if self.v:
            lines.append(f"    {', '.join(map(str, self.v))}, = [float(t) for t in v]")
        if self.symbolic_params:
            lines.append(f"    {', '.join(map(str, self._param_symbols()))}, = [float(t) for t in pi]")
        if self.symbolic_armature and self.armature:
            lines.append(f"    {', '.join(map(str, self.armature))}, = [float(t) for t in armature]")
        for s_, e in self._needed(exprs):
            lines.append(f"    {s_} = {pr.doprint(e)}")
        outs = []
        for k, (w, X) in enumerate(zip(which, exprs)):
            w = w if isinstance(w, str) else f"e{k}"
            rows = ", ".join("[" + ", ".join(pr.doprint(X[i, j]) for j in range(X.shape[1])) + "]"
                             for i in range(X.shape[0]))
            shape = "" if X.shape[1] > 1 else ".reshape(-1)"
            lines.append(f"    out_{w} = numpy.array([{rows}]){shape}")
            outs.append(f"out_{w}")
        lines.append(f"    return {', '.join(outs)},")
        return "\n".join(lines) + "\n"

    def numpy_function(self, which=("M", "C", "g")):
        """A compiled Python function ``f(q, v[, π][, armature]) -> tuple of numpy arrays`` (the
        outputs listed in ``which``; ``g`` and ``c`` as 1-D arrays) from `python_source`.  ``π``
        (flattened, `PARAMETER_NAMES` order per body) only with symbolic parameters, ``armature``
        (nv values, the order of ``v``) only with symbolic armature."""
        src = self.python_source("_generated", which)
        ns: dict = {}
        exec(compile(src, f"<dqdyn.symbolic {tag(self.model.name)}>", "exec"), ns)
        f = ns["_generated"]
        f.__doc__ = f"dqdyn.symbolic: {len(which)} outputs of model {self.model.name!r}"
        f.source = src
        return f

    def c_source(self, name: str = "dqdyn_dynamics", which=("M", "C", "g")) -> str:
        """C99 source of ``void name(const double *q, const double *v, [const double *pi,]
        [const double *armature,] double *out_M, double *out_C, double *out_g)`` (``pi`` with
        symbolic parameters, ``armature`` with symbolic armature; one output pointer per entry
        of ``which``, row-major) from sympy's C printer; compile with ``cc -O2 -shared -fPIC``.

        ``name`` must be a plain C identifier, not a keyword nor reserved
        (`UnsafeNameError` otherwise).  The source is ASCII; the model's
        name appears only as an identifier (``[A-Za-z0-9_]``) inside the one comment, so no
        model file can end the comment, add a preprocessor line or define a symbol."""
        from sympy.printing.c import C99CodePrinter

        c_identifier(name, "name")

        class _P(C99CodePrinter):
            def _print_Float(self, e):
                return repr(float(e))

        pr = _P({"order": "none"})
        exprs = self._outputs(which)
        subs = {s_: sp.Symbol(f"q[{i}]") for i, s_ in enumerate(self.q)}
        subs.update({s_: sp.Symbol(f"v[{i}]") for i, s_ in enumerate(self.v)})
        if self.symbolic_params:
            subs.update({s_: sp.Symbol(f"pi[{i}]") for i, s_ in enumerate(self._param_symbols())})
        if self.symbolic_armature:
            subs.update({s_: sp.Symbol(f"armature[{i}]") for i, s_ in enumerate(self.armature)})
        sig = ["const double *q", "const double *v"]
        if self.symbolic_params:
            sig.append("const double *pi")
        if self.symbolic_armature:
            sig.append("const double *armature")
        sig += [f"double *out_{w if isinstance(w, str) else f'e{k}'}" for k, w in enumerate(which)]
        lines = ["#include <math.h>", "",
                 f"/* generated by dqdyn.symbolic [Mladenova, sec. 8] for model {tag(self.model.name)}, "
                 "outputs row-major */",
                 f"void {name}({', '.join(sig)})", "{"]
        for s_, e in self._needed(exprs):
            lines.append(f"    const double {s_} = {pr.doprint(e.xreplace(subs))};")
        for k, (w, X) in enumerate(zip(which, exprs)):
            w = w if isinstance(w, str) else f"e{k}"
            for idx in range(len(X)):
                lines.append(f"    out_{w}[{idx}] = {pr.doprint(X[idx].xreplace(subs))};")
        lines.append("}")
        return "\n".join(lines) + "\n"


def dynamics(model, symbolic_params: bool = False, symbolic_armature: bool = False) -> SymbolicDynamics:
    """Symbolic ``M``, ``C``, ``g`` of ``model`` [Mladenova, §8].  See `SymbolicDynamics`.

    ``symbolic_params=True`` makes every body's ten inertial parameters symbols (the result is
    then linear in them: `SymbolicDynamics.regressor`).  The joint armature (`Model.armature`)
    is on the diagonal of ``M``: as the model's numbers, or with ``symbolic_armature=True`` as
    one symbol per DoF (``armature_<joint>``, `SymbolicDynamics.armature`; the generated code
    then takes it as an argument).
    """
    return SymbolicDynamics(model, symbolic_params=symbolic_params,
                            symbolic_armature=symbolic_armature)


__all__ = ["dynamics", "SymbolicDynamics", "PARAMETER_NAMES"]
