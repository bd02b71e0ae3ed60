"""Controllers ``tau = controller(t, q, v)``.

* `JointPD` — joint PD with gravity compensation, ``τ = g(q) + K_p (q_d ⊖ q) + K_d (v_d − v)``.
* `ComputedTorque` — feedback linearisation,
  ``τ = M(q)(a_d + K_p e + K_d ė) + h(q, v)`` (``h`` = `nonlinear_effects`), so the
  closed loop is ``ë + K_d ė + K_p e = 0`` on a perfect model.
* `WrenchControl` — the thesis's wrench control (appendix B): the dqNE map with zero
  velocity and acceleration and a desired end-effector wrench ``ζ_d``, eq. B.3
  ``Γ_u = 𝒩̄(q, 0, 0, ζ_d) = Γ_g + Γ_{ζ_d}`` (gravity compensation, eq. B.2, plus the wrench
  propagated to the joints, projected by eq. 4.27 — i.e. ``τ = g(q) + Jᵀ ζ_d``), with the
  potential-field force ``f_a = −k_p (p − p_d) − k_v ṗ`` (Khatib 1986, eqs. B.4–B.5) and joint
  damping ``Γ_diss = −k_diss q̇``.  Defaults are the thesis's gains (k_p = 30, k_v = 15,
  k_diss = 0.1; [Silva2022thesis, §B.1.2]).
"""

from __future__ import annotations

import numpy as np

from dqdyn.algebra.rotations import matrix_from_quat, translation_of
from dqdyn.dynamics.lagrange import gravity, mass_matrix, nonlinear_effects
from dqdyn.dynamics.newton_euler import rnea
from dqdyn.errors import DqdynError, ShapeError
from dqdyn.kinematics.forward import difference, frame_pose
from dqdyn.kinematics.jacobians import twist_jacobian


def _gain(k, n, name):
    k = np.asarray(k, dtype=float)
    try:
        k = np.broadcast_to(k, (n,)).copy() if k.ndim < 2 else k
    except ValueError:
        raise ShapeError(f"{name} must be a scalar, ({n},) or ({n}, {n}), got shape {k.shape}") from None
    if k.ndim == 2 and k.shape != (n, n):
        raise ShapeError(f"{name} must be a scalar, ({n},) or ({n}, {n}), got shape {k.shape}")
    if not np.all(np.isfinite(k)):
        raise DqdynError(f"{name} must be finite")
    return k


def _mul(k, x):
    return k @ x if k.ndim == 2 else k * x


def _error(model, q, qd):
    """``q_d ⊖ q``; a plain difference when every joint is a vector space (q̇ = v)."""
    if model.has_quaternion_joints:
        return difference(model, q, qd)
    return qd - q


def _ref_fn(model, reference):
    """``reference``: callable ``t -> (q_d, v_d, a_d)`` or a fixed configuration ``q_d``."""
    if callable(reference):
        return reference
    qd = np.array(reference, dtype=float)
    if qd.shape != (model.nq,):
        raise ShapeError(f"reference must be callable or a configuration of shape ({model.nq},), "
                         f"got {qd.shape}")
    z = np.zeros(model.nv)
    return lambda t: (qd, z, z)


class JointPD:
    """``τ = g(q) + K_p (q_d ⊖ q) + K_d (v_d − v)`` (``⊖`` = `difference`)."""

    def __init__(self, model, reference, kp=100.0, kd=20.0, gravity_compensation=True):
        self.model = model
        self.ref = _ref_fn(model, reference)
        self.kp = _gain(kp, model.nv, "kp")
        self.kd = _gain(kd, model.nv, "kd")
        self.gc = gravity_compensation

    def __call__(self, t, q, v):
        qd, vd, _ = self.ref(t)
        tau = _mul(self.kp, _error(self.model, q, qd)) + _mul(self.kd, vd - v)
        return tau + gravity(self.model, q) if self.gc else tau


class ComputedTorque:
    """``τ = M(q)(a_d + K_p (q_d ⊖ q) + K_d (v_d − v)) + h(q, v)``."""

    def __init__(self, model, reference, kp=100.0, kd=20.0):
        self.model = model
        self.ref = _ref_fn(model, reference)
        self.kp = _gain(kp, model.nv, "kp")
        self.kd = _gain(kd, model.nv, "kd")

    def __call__(self, t, q, v):
        qd, vd, ad = self.ref(t)
        u = ad + _mul(self.kp, _error(self.model, q, qd)) + _mul(self.kd, vd - v)
        return mass_matrix(self.model, q) @ u + nonlinear_effects(self.model, q, v)


class WrenchControl:
    """Thesis appendix B wrench control (module doc) driving frame ``frame`` to ``p_goal``.

    ``route="dqne"`` evaluates eq. B.3 literally as one Newton–Euler call with the desired wrench
    as external load (``𝒩̄(q, 0, 0, ζ_d)``); ``route="jacobian"`` uses ``g(q) + J_vᵀ f_a``.  The
    two agree to round-off (tested)."""

    def __init__(self, model, frame: str, p_goal, kp=30.0, kv=15.0, kdiss=0.1, route="dqne"):
        model.frame_index(frame)  # UnknownNameError naming the frame
        self.model, self.frame = model, frame
        self.p_goal = np.array(p_goal, dtype=float)
        if self.p_goal.shape != (3,) or not np.all(np.isfinite(self.p_goal)):
            raise ShapeError(f"p_goal must be a finite 3-vector, got {p_goal!r}")
        if route not in ("dqne", "jacobian"):
            raise DqdynError(f"route must be 'dqne' or 'jacobian', got {route!r}")
        self.kp, self.kv = float(kp), float(kv)
        self.kdiss = _gain(kdiss, model.nv, "kdiss")
        self.route = route
        self._k = model.frame_index(frame)

    def position(self, q):
        return translation_of(frame_pose(self.model, q, self.frame))

    def force(self, q, v):
        """Potential-field force ``f_a = −k_p (p − p_d) − k_v ṗ`` (world axes) and ``J`` (6×nv)."""
        J = twist_jacobian(self.model, q, self.frame, "world_aligned")
        pdot = J[3:] @ v
        return -self.kp * (self.position(q) - self.p_goal) - self.kv * pdot, J

    def __call__(self, t, q, v):
        f, J = self.force(q, v)
        diss = -_mul(self.kdiss, v)
        if self.route == "jacobian":
            return gravity(self.model, q) + J[3:].T @ f + diss
        # 𝒩̄(q, 0, 0, ζ_d): the wrench the environment would have to apply is −f_a, at the
        # frame point; rnea's fext is a body-frame wrench about the body origin (τ = … − Jᵀ fext).
        m = self.model
        body = int(m.frame_body[self._k])
        xb = frame_pose(m, q, m.body_names[body]) if body > 0 else None
        R = matrix_from_quat(xb[:4])
        pb = translation_of(xb)
        pf = self.position(q)
        fb = R.T @ (-f)
        nb = R.T @ np.cross(pf - pb, -f)
        fext = np.zeros((m.nbodies + 1, 6))
        fext[body, :3], fext[body, 3:] = fb, nb
        z = np.zeros(m.nv)
        return rnea(m, q, z, z, fext) + diss


__all__ = ["JointPD", "ComputedTorque", "WrenchControl"]
