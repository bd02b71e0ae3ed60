"""Elastic-joint manipulators ([Mladenova, §7]; [Spong1987]; Murphy's full model).

Every elastic joint ``i`` is driven through a torsional spring (stiffness ``K_i``, damping
``D_i``) by a rotor: a body of revolution (mass ``m_r``, axial inertia ``J_a``, transverse inertia
``J_t``) mounted on the joint's *parent* link at ``position``, spinning about ``axis`` through a
gear of ratio ``N_i`` (rotor angle = ``N_i ·`` motor-side joint angle).  Coordinates of the
``n + m`` degree-of-freedom system (``n = model.nv`` link coordinates, ``m`` elastic joints):

``x = (q, θ)``, with ``θ_i`` the motor position reflected through the gear (rotor angle / N).

The spring acts on ``q_i − θ_i`` (eq. 267–268, with ``qm`` reflected through the gear).  Two models:

* ``"reduced"`` — Spong's model, eqs. (281)–(283): the rotor's kinetic energy comes from its own
  spin only (besides its mass and inertia moving with the parent link, welded to it):
  ``M = diag(D(q), B)`` with ``D`` the link model with the rotors welded on and ``B =
  diag(N² J_a)`` (eq. 279 with the errata's ``N²``),
  ``D(q) q̈ + c(q, q̇) + g(q) + K(q − θ) + D(q̇ − θ̇) = τ_rigid`` and
  ``B θ̈ − K(q − θ) − D(q̇ − θ̇) = u``.
* ``"full"`` — the rotors are bodies of the kinematic tree (rotor angle ``N θ``), so the
  rotor–link gyroscopic coupling of §7.2–7.3 is kept; ``M``, ``C``, ``g`` and forward dynamics come
  from dqdyn's own kernels on that tree (`ElasticModel.full_model`), mapped to ``x`` by
  ``S = diag(1, N)``: ``M_x = Sᵀ M_tree S``.

The rigid limit (``K → ∞``, ``θ = q``) of the reduced model is the rigid model with the reflected
rotor inertia ``N² J_a`` on the diagonal (Pinocchio's ``armature``): `ElasticModel.rigid_model`
(the link model with ``N² J_a`` added to its `Model.armature`, so every algorithm, the symbolic
models of `dqdyn.symbolic` included, carries it), `rigid_mass_matrix`, `rigid_forward_dynamics`.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass

import numpy as np

from dqdyn.algebra.rotations import matrix_from_pose, translation_of
from dqdyn.errors import InfeasibleError, ModelError, ShapeError
from dqdyn.multibody.builders import ModelBuilder
from dqdyn.multibody.joints import PRISMATIC, REVOLUTE


@dataclass(frozen=True)
class Rotor:
    """Elastic-joint data of one joint (see the module docstring).

    ``gear_ratio`` N (≠ 0; negative reverses the rotor), ``stiffness`` K > 0, ``damping`` D ≥ 0,
    rotor ``mass`` ≥ 0, ``axial_inertia`` J_a > 0, ``transverse_inertia`` J_t ≥ 0 (default
    ``J_a / 2``, a thin disc), ``position`` (3,) of the rotor's centre in the parent link frame
    (default: the joint frame's origin), ``axis`` (3,) its spin axis in the parent link frame
    (default: the joint axis).
    """

    joint: str
    stiffness: float
    axial_inertia: float
    gear_ratio: float = 1.0
    damping: float = 0.0
    mass: float = 0.0
    transverse_inertia: float | None = None
    position: tuple | None = None
    axis: tuple | None = None

    def checked(self) -> Rotor:
        j = self.joint

        def num(name, val):
            try:
                val = float(val)
            except (TypeError, ValueError):
                raise ModelError(f"elastic joint {j!r}: {name} must be a number, got {val!r}") from None
            if not math.isfinite(val):
                raise ModelError(f"elastic joint {j!r}: {name} must be finite, got {val}")
            return val

        K = num("stiffness", self.stiffness)
        if K <= 0:
            raise ModelError(f"elastic joint {j!r}: stiffness must be > 0, got {K}")
        D = num("damping", self.damping)
        if D < 0:
            raise ModelError(f"elastic joint {j!r}: damping must be >= 0, got {D}")
        N = num("gear_ratio", self.gear_ratio)
        if N == 0:
            raise ModelError(f"elastic joint {j!r}: gear_ratio must be non-zero, got 0")
        m = num("mass", self.mass)
        if m < 0:
            raise ModelError(f"elastic joint {j!r}: rotor mass must be >= 0, got {m}")
        Ja = num("axial_inertia", self.axial_inertia)
        if Ja <= 0:
            raise ModelError(f"elastic joint {j!r}: rotor axial_inertia must be > 0, got {Ja}")
        Jt = 0.5 * Ja if self.transverse_inertia is None else num("transverse_inertia",
                                                                    self.transverse_inertia)
        if Jt < 0:
            raise ModelError(f"elastic joint {j!r}: rotor transverse_inertia must be >= 0, got {Jt}")

        def vec(name, v):
            if v is None:
                return None
            a = np.asarray(v, dtype=float).reshape(-1)
            if a.shape != (3,) or not np.all(np.isfinite(a)):
                raise ModelError(f"elastic joint {j!r}: {name} must be 3 finite numbers, got {v!r}")
            return tuple(a)

        pos = vec("position", self.position)
        ax = vec("axis", self.axis)
        if ax is not None:
            nrm = np.linalg.norm(ax)
            if nrm < 1e-12:
                raise ModelError(f"elastic joint {j!r}: rotor axis must be non-zero")
            ax = tuple(np.asarray(ax) / nrm)
        return Rotor(j, K, Ja, N, D, m, Jt, pos, ax)


def _parse_transmissions(urdf_xml: str) -> dict:
    """``{joint: mechanicalReduction}`` of a URDF's ``<transmission>`` elements (both the
    ROS-1 ``<actuator><mechanicalReduction>`` and the old direct form)."""
    from dqdyn.parsers._urdf_xml import etree_root  # (URDFError naming the file and line)

    root = etree_root(urdf_xml)
    out = {}
    for tr in root.iter("transmission"):
        joints = [j.get("name") for j in tr.iter("joint") if j.get("name")]
        red = None
        for el in tr.iter("mechanicalReduction"):
            try:
                red = float(el.text)
            except (TypeError, ValueError):
                raise ModelError(f"URDF transmission {tr.get('name')!r}: mechanicalReduction "
                                 f"{el.text!r} is not a number") from None
            break
        if red is not None:
            for j in joints:
                out[j] = red
    return out


def read_transmissions(path_or_xml) -> dict:
    """Gear ratios ``{joint name: mechanicalReduction}`` from a URDF's ``<transmission>`` tags."""
    return _parse_transmissions(path_or_xml)


def read_sidecar(path) -> dict:
    """Read an elastic-joint YAML sidecar: ``{joint: {stiffness, damping, gear_ratio, rotor:
    {mass, axial_inertia, transverse_inertia, position, axis}}}`` under a top-level ``joints:``
    key (see the README).  Returns ``{joint: dict of Rotor fields}``."""
    import yaml

    with open(path, encoding="utf-8") as fh:
        doc = yaml.safe_load(fh) or {}
    if not isinstance(doc, dict) or not isinstance(doc.get("joints"), dict):
        raise ModelError(f"elastic sidecar {os.fspath(path)!r}: expected a mapping with a "
                         "'joints:' mapping of joint names")
    out = {}
    allowed = {"stiffness", "damping", "gear_ratio", "rotor"}
    rotor_keys = {"mass", "axial_inertia", "transverse_inertia", "position", "axis"}
    for j, spec in doc["joints"].items():
        if not isinstance(spec, dict):
            raise ModelError(f"elastic sidecar: joint {j!r} must map to a mapping, got {spec!r}")
        bad = set(spec) - allowed
        if bad:
            raise ModelError(f"elastic sidecar: joint {j!r} has unknown keys {sorted(bad)}; "
                             f"expected {sorted(allowed)}")
        d = {k: spec[k] for k in ("stiffness", "damping", "gear_ratio") if k in spec}
        rot = spec.get("rotor", {}) or {}
        bad = set(rot) - rotor_keys
        if bad:
            raise ModelError(f"elastic sidecar: rotor of joint {j!r} has unknown keys {sorted(bad)}; "
                             f"expected {sorted(rotor_keys)}")
        d.update(rot)
        out[str(j)] = d
    return out


class ElasticModel:
    """A model with elastic joints (see the module docstring).  Build with `elastic`."""

    def __init__(self, model, rotors):
        self.model = model
        rs = []
        seen = set()
        for r in rotors:
            if not isinstance(r, Rotor):
                raise ModelError(f"rotors: expected Rotor objects, got {type(r).__name__}")
            if r.joint in seen:
                raise ModelError(f"elastic joint {r.joint!r} is declared twice")
            seen.add(r.joint)
            i = model.joint_index(r.joint)  # UnknownNameError names the joint
            jt = int(model.joint_type[i])
            if int(model.joint_nv[i]) == 0:
                raise ModelError(f"elastic joint {r.joint!r} is a mimic joint (it owns no DoF); "
                                 "declare its master elastic instead")
            if jt not in (REVOLUTE, PRISMATIC):
                raise ModelError(f"elastic joint {r.joint!r} is {model.joint_type_name(i)}; "
                                 "only 1-DoF revolute or prismatic joints can be elastic")
            rs.append(r.checked())
        if not rs:
            raise ModelError("rotors: declare at least one elastic joint")
        # keep the model's v order
        rs.sort(key=lambda r: int(model.idx_v[model.joint_index(r.joint)]))
        self.rotors = tuple(rs)
        self.joints = tuple(r.joint for r in rs)
        self.n = model.nv
        self.m = len(rs)
        self.nx = self.n + self.m
        self.elastic_v = np.array([int(model.idx_v[model.joint_index(j)]) for j in self.joints])
        self.N = np.array([r.gear_ratio for r in rs])
        self.K = np.array([r.stiffness for r in rs])
        self.D = np.array([r.damping for r in rs])
        self.Ja = np.array([r.axial_inertia for r in rs])
        #: reflected rotor inertia N² J_a (Spong's J, Pinocchio's armature)
        self.B = self.N**2 * self.Ja
        self._geometry()
        self.link_model = self._build(weld=True)
        self.full_model = self._build(weld=False)
        arm = np.array(self.link_model.armature, dtype=float)
        arm[self.elastic_v] += self.B
        #: the rigid limit (K → ∞) as a model: the link model with N² J_a in its armature
        self.rigid_model = self.link_model.with_armature(arm)
        self.S = np.concatenate([np.ones(self.n), self.N])
        rigid = np.setdiff1d(np.arange(self.n), self.elastic_v)
        self.rigid_v = rigid

    # ------------------------------------------------------------------ construction
    def _geometry(self):
        m = self.model
        self._rotor_pose = []
        for r in self.rotors:
            i = m.joint_index(r.joint)
            X = np.asarray(m.joint_placement[i])
            T = matrix_from_pose(X)
            pos = np.asarray(r.position) if r.position is not None else translation_of(X)
            ax = np.asarray(r.axis) if r.axis is not None else T[:3, :3] @ np.asarray(m.joint_axis[i])
            ax = ax / np.linalg.norm(ax)
            Jt = r.transverse_inertia
            I = Jt * (np.eye(3) - np.outer(ax, ax)) + r.axial_inertia * np.outer(ax, ax)
            parent = m.body_names[int(m.parent[i])]
            self._rotor_pose.append((parent, pos, ax, I))

    def _build(self, weld: bool):
        m = self.model
        b = ModelBuilder(f"{m.name}_{'rigid_rotors' if weld else 'elastic'}", gravity=m.gravity,
                         inertia_check="off")
        b.add_model(m)
        for r, (parent, pos, ax, I) in zip(self.rotors, self._rotor_pose):
            b.add_body(f"rotor_{r.joint}", parent, "fixed" if weld else "revolute",
                       joint_name=f"rotor_{r.joint}", axis=ax, xyz=pos, mass=r.mass, inertia=I)
        return b.build()

    # ------------------------------------------------------------------ input checks
    def _x(self, x, name):
        a = np.asarray(x, dtype=float)
        if a.shape != (self.nx,):
            raise ShapeError(f"{name}: expected {self.nx} entries (q: {self.n}, θ: {self.m}), "
                             f"got shape {a.shape}")
        return a

    def _u(self, u, tau_rigid):
        u = np.zeros(self.m) if u is None else np.asarray(u, dtype=float)
        if u.shape != (self.m,):
            raise ShapeError(f"u: expected {self.m} motor torques, got shape {u.shape}")
        tr = np.zeros(self.n)
        if tau_rigid is not None:
            t = np.asarray(tau_rigid, dtype=float)
            if t.shape != (len(self.rigid_v),):
                raise ShapeError(f"tau_rigid: expected {len(self.rigid_v)} torques of the rigid "
                                 f"joints, got shape {t.shape}")
            tr[self.rigid_v] = t
        return u, tr

    @staticmethod
    def _which(model):
        if model not in ("reduced", "full"):
            raise ModelError(f"model: expected 'reduced' or 'full', got {model!r}")
        return model

    def _tree_q(self, x):
        return np.concatenate([x[: self.n], self.N * x[self.n:]])

    # ------------------------------------------------------------------ M, C, g, springs
    def spring_force(self, x, xd) -> np.ndarray:
        """Generalized spring/damper force on ``x`` (left-hand side term ``+K(q−θ)``, ...)."""
        e = x[self.elastic_v] - x[self.n:]
        ed = xd[self.elastic_v] - xd[self.n:]
        f = self.K * e + self.D * ed
        out = np.zeros(self.nx)
        out[self.elastic_v] += f
        out[self.n:] -= f
        return out

    def mass_matrix(self, x, model: str = "reduced") -> np.ndarray:
        """``M(x)`` ((n+m)²) of the elastic system."""
        from dqdyn.dynamics.lagrange import mass_matrix

        x = self._x(x, "x")
        if self._which(model) == "reduced":
            M = np.zeros((self.nx, self.nx))
            M[: self.n, : self.n] = mass_matrix(self.link_model, x[: self.n])
            M[self.n:, self.n:] = np.diag(self.B)
            return M
        Mt = mass_matrix(self.full_model, self._tree_q(x))
        return self.S[:, None] * Mt * self.S[None, :]

    def coriolis_matrix(self, x, xd, model: str = "reduced") -> np.ndarray:
        """Christoffel ``C(x, ẋ)`` of the elastic system (springs excluded)."""
        from dqdyn.dynamics.coriolis import coriolis_matrix

        x, xd = self._x(x, "x"), self._x(xd, "xd")
        if self._which(model) == "reduced":
            C = np.zeros((self.nx, self.nx))
            C[: self.n, : self.n] = coriolis_matrix(self.link_model, x[: self.n], xd[: self.n])
            return C
        Ct = coriolis_matrix(self.full_model, self._tree_q(x), self._tree_q(xd))
        return self.S[:, None] * Ct * self.S[None, :]

    def gravity(self, x, model: str = "reduced") -> np.ndarray:
        """``g(x)`` of the elastic system."""
        from dqdyn.dynamics.lagrange import gravity

        x = self._x(x, "x")
        if self._which(model) == "reduced":
            return np.concatenate([gravity(self.link_model, x[: self.n]), np.zeros(self.m)])
        return self.S * gravity(self.full_model, self._tree_q(x))

    # ------------------------------------------------------------------ dynamics
    def forward_dynamics(self, x, xd, u=None, tau_rigid=None, model: str = "reduced") -> np.ndarray:
        """``ẍ`` of the elastic system under motor torques ``u`` (m) and the torques of the
        rigid (not elastic) joints ``tau_rigid``."""
        from dqdyn.dynamics.forward import aba

        x, xd = self._x(x, "x"), self._x(xd, "xd")
        u, tr = self._u(u, tau_rigid)
        gen = -self.spring_force(x, xd)
        gen[: self.n] += tr
        gen[self.n:] += u
        if self._which(model) == "reduced":
            qdd = aba(self.link_model, x[: self.n], xd[: self.n], gen[: self.n])
            return np.concatenate([qdd, gen[self.n:] / self.B])
        acc = aba(self.full_model, self._tree_q(x), self._tree_q(xd), gen / self.S)
        return acc / self.S

    def energy(self, x, xd, model: str = "reduced") -> float:
        """Kinetic + gravitational + spring energy."""
        from dqdyn.dynamics.energy import mechanical_energy

        x, xd = self._x(x, "x"), self._x(xd, "xd")
        e = x[self.elastic_v] - x[self.n:]
        spring = 0.5 * float(np.sum(self.K * e * e))
        if self._which(model) == "reduced":
            return (float(mechanical_energy(self.link_model, x[: self.n], xd[: self.n]))
                    + 0.5 * float(np.sum(self.B * xd[self.n:] ** 2)) + spring)
        return float(mechanical_energy(self.full_model, self._tree_q(x), self._tree_q(xd))) + spring

    def simulate(self, x0, xd0, t_end: float, u=None, *, model: str = "reduced", rtol=1e-10,
                 atol=1e-12, t_eval=None, method="DOP853", max_step=np.inf):
        """Integrate the ``2n``-DoF system (scipy ``solve_ivp``).  ``u``: ``None`` (no input), or
        ``u(t, x, xd) -> (m,)`` motor torques (rigid joints get none).  Returns the
        ``OdeResult`` with ``t``, ``x`` (len(t), nx) and ``xd``."""
        from scipy.integrate import solve_ivp

        x0, xd0 = self._x(x0, "x0"), self._x(xd0, "xd0")
        nx = self.nx

        def rhs(t, y):
            x, xd = y[:nx], y[nx:]
            uu = None if u is None else u(t, x, xd)
            return np.concatenate([xd, self.forward_dynamics(x, xd, uu, model=model)])

        sol = solve_ivp(rhs, (0.0, float(t_end)), np.concatenate([x0, xd0]), method=method,
                        rtol=rtol, atol=atol, t_eval=t_eval, max_step=max_step)
        if not sol.success:
            from dqdyn.errors import ConvergenceError

            raise ConvergenceError(f"simulate: the integrator failed: {sol.message}")
        sol.x = sol.y[:nx].T
        sol.xd = sol.y[nx:].T
        return sol

    # ------------------------------------------------------------------ rigid limit
    def rigid_mass_matrix(self, q) -> np.ndarray:
        """``K → ∞`` limit: ``D(q) + diag(N² J_a)`` on the elastic joints (eq. 290's ``H + J_m``)."""
        from dqdyn.dynamics.lagrange import mass_matrix

        return mass_matrix(self.rigid_model, q)

    def rigid_forward_dynamics(self, q, v, tau) -> np.ndarray:
        """``K → ∞`` limit: ``q̈ = (D + N² J_a)⁻¹ (τ − c − g)``, ``τ`` the motor torques reflected
        (and the rigid joints' torques)."""
        from dqdyn.dynamics.lagrange import nonlinear_effects

        rhs = np.asarray(tau, dtype=float) - nonlinear_effects(self.link_model, q, v)
        return np.linalg.solve(self.rigid_mass_matrix(q), rhs)

    # ------------------------------------------------------------------ flatness (reduced model)
    def _require_undamped(self, what):
        if np.any(self.D != 0):
            raise InfeasibleError(f"{what}: the reduced model with damping D ≠ 0 is not flat in the "
                                  "link position; set damping to 0 for the joints "
                                  f"{[j for j, d in zip(self.joints, self.D) if d != 0]}")

    def inverse_dynamics(self, q, qd, qdd, q3, q4) -> dict:
        """Motor torques for a link trajectory (reduced model; flatness, [Mladenova, §7.4]):
        ``θ = q + K⁻¹τ``, ``θ̇ = q̇ + K⁻¹τ̇``, ``θ̈ = q̈ + K⁻¹τ̈``, ``u = B θ̈ + τ`` with
        ``τ(t) = D q̈ + c + g`` of the link model and its exact time derivatives
        (`rnea_taylor`).  Returns ``theta``, ``theta_d``,
        ``theta_dd``, ``u`` (m) and ``tau_rigid`` (torques of the rigid joints)."""
        from dqdyn.elastic.taylor import rnea_taylor

        self._require_undamped("inverse_dynamics")
        arrs = []
        for name, a in (("q", q), ("qd", qd), ("qdd", qdd), ("q3", q3), ("q4", q4)):
            a = np.asarray(a, dtype=float)
            if a.shape != (self.n,):
                raise ShapeError(f"{name}: expected {self.n} entries, got shape {a.shape}")
            arrs.append(a)
        q, qd, qdd, q3, q4 = arrs
        tau = rnea_taylor(self.link_model, np.array([q, qd, qdd / 2, q3 / 6, q4 / 24]))
        t0, t1, t2 = tau[0], tau[1], 2 * tau[2]
        e = self.elastic_v
        th = q[e] + t0[e] / self.K
        thd = qd[e] + t1[e] / self.K
        thdd = qdd[e] + t2[e] / self.K
        u = self.B * thdd + t0[e]
        return {"theta": th, "theta_d": thd, "theta_dd": thdd, "u": u,
                "tau_rigid": t0[self.rigid_v]}

    def link_derivatives(self, x, xd):
        """``(q̈, q⁽³⁾)`` of the reduced model at state ``(x, ẋ)`` (independent of the input)."""
        from dqdyn.dynamics.lagrange import mass_matrix, nonlinear_effects
        from dqdyn.elastic.taylor import rnea_taylor

        n = self.n
        q, qd = x[:n], xd[:n]
        D = mass_matrix(self.link_model, q)
        f = -self.spring_force(x, xd)[:n]
        qdd = np.linalg.solve(D, f - nonlinear_effects(self.link_model, q, qd))
        tj = rnea_taylor(self.link_model, np.array([q, qd, qdd / 2, np.zeros(n), np.zeros(n)]))
        fdot = np.zeros(n)
        fdot[self.elastic_v] = self.K * (xd[n:] - qd[self.elastic_v])
        q3 = np.linalg.solve(D, fdot - tj[1])
        return qdd, q3, D

    def feedback_linearizing_control(self, reference, gains=None):
        """Spong's static state feedback for the reduced model ([Mladenova, §7.4.2], the feedback
        the paper leaves unprinted): ``q⁽⁴⁾ = w`` with
        ``w = q_d⁽⁴⁾ + k₃ e⁽³⁾ + k₂ ë + k₁ ė + k₀ e`` (``e = q_d − q``; ``q̈``, ``q⁽³⁾`` from the
        state), realised by ``u = B (q̈ + K⁻¹ τ̈) + K(θ − q)`` with ``τ̈`` of the link model at
        ``q⁽⁴⁾ = w``.  ``reference(t) -> (q, q̇, q̈, q⁽³⁾, q⁽⁴⁾)``; ``gains`` = ``(k0, k1, k2, k3)``
        (default the poles all at −20: 160000, 32000, 2400, 80).  All joints must be elastic and
        undamped.  Returns ``u(t, x, xd)``."""
        from dqdyn.elastic.taylor import rnea_taylor

        self._require_undamped("feedback_linearizing_control")
        if self.m != self.n:
            raise InfeasibleError("feedback_linearizing_control: every joint must be elastic "
                                  f"(rigid joints: {[self.model.joint_names[i] for i in self.rigid_v]})")
        k0, k1, k2, k3 = gains if gains is not None else (20.0**4, 4 * 20.0**3, 6 * 20.0**2, 80.0)
        n = self.n

        def u(t, x, xd):
            qd_, vd_, ad_, jd_, sd_ = (np.asarray(a, dtype=float) for a in reference(t))
            q, v = x[:n], xd[:n]
            qdd, q3, D = self.link_derivatives(x, xd)
            w = sd_ + k3 * (jd_ - q3) + k2 * (ad_ - qdd) + k1 * (vd_ - v) + k0 * (qd_ - q)
            tj = rnea_taylor(self.link_model, np.array([q, v, qdd / 2, q3 / 6, w / 24]))
            thdd = qdd + 2 * tj[2] / self.K
            return self.B * thdd + self.K * (x[n:] - q)

        return u


def elastic(model, rotors=None, *, sidecar=None, urdf=None, defaults=None) -> ElasticModel:
    """Declare elastic joints on ``model`` (any dqdyn model: URDF, DH, ModelBuilder).

    ``rotors``: a list of `Rotor` or a mapping ``{joint: {stiffness, axial_inertia,
    gear_ratio, damping, mass, transverse_inertia, position, axis}}``.  ``sidecar``: a YAML file
    of the same data (`read_sidecar`).  ``urdf``: the URDF (path or XML) whose
    ``<transmission>`` mechanical reductions give the gear ratios not set otherwise.
    ``defaults``: values used for every joint listed where a field is missing.
    """
    specs: dict = {}
    if sidecar is not None:
        specs.update(read_sidecar(sidecar))
    rot_objs = []
    if rotors is not None:
        if isinstance(rotors, dict):
            for j, d in rotors.items():
                if not isinstance(d, dict):
                    raise ModelError(f"rotors: joint {j!r} must map to a dict of rotor data")
                specs.setdefault(j, {}).update(d)
        else:
            rot_objs = list(rotors)
    gears = read_transmissions(urdf) if urdf is not None else {}
    for j, d in specs.items():
        # precedence: the joint's own data, then the URDF's transmission, then the defaults
        d = {**(defaults or {}), **({"gear_ratio": gears[j]} if j in gears else {}), **d}
        missing = [k for k in ("stiffness", "axial_inertia") if k not in d]
        if missing:
            raise ModelError(f"elastic joint {j!r}: missing {missing}")
        try:
            rot_objs.append(Rotor(joint=j, **d))
        except TypeError as exc:
            raise ModelError(f"elastic joint {j!r}: {exc}") from None
    return ElasticModel(model, rot_objs)


def load_elastic_urdf(path, sidecar=None, **load_kw) -> ElasticModel:
    """Load a URDF and its elastic-joint YAML sidecar (default ``<path without .urdf>.elastic.yaml``
    next to it); gear ratios default to the URDF's ``<transmission>`` reductions."""
    from dqdyn.parsers.urdf import load_urdf

    path = os.fspath(path)
    if sidecar is None:
        sidecar = os.path.splitext(path)[0] + ".elastic.yaml"
        if not os.path.exists(sidecar):
            raise ModelError(f"load_elastic_urdf: no sidecar {sidecar!r} next to the URDF; pass "
                             "sidecar=")
    return elastic(load_urdf(path, **load_kw), sidecar=sidecar, urdf=path)


__all__ = ["Rotor", "ElasticModel", "elastic", "load_elastic_urdf", "read_sidecar",
           "read_transmissions"]
