"""Derivative of the forward dynamics with respect to the inertial parameters.

[Kim2012, §4.2] differentiates the recursive algorithms with respect to an arbitrary scalar ``p``,
a model parameter entering through ``∂𝓘_i/∂p`` among them.  For the inertial parameters ``π`` the
result has a closed form: inverse dynamics is linear in them, ``τ = Y(q, v, q̈) π`` (+ the rotors'
``armature ⊙ q̈``, which does not depend on ``π``), so differentiating ``τ = RNEA(q, v, q̈(π); π)``
at fixed ``τ`` gives ``0 = Y(q, v, q̈) + M ∂q̈/∂π``, i.e.

    ∂q̈/∂π = −M(q)⁻¹ Y(q, v, q̈),   q̈ = ABA(q, v, τ).

Built from the public `aba`, `mass_matrix_inverse` and `joint_torque_regressor` (numpy level).
"""

from __future__ import annotations

import numpy as np

from dqdyn._engine.checks import not_a_model
from dqdyn.dynamics.aba import aba
from dqdyn.dynamics.minverse import mass_matrix_inverse
from dqdyn.dynamics.regressor import joint_torque_regressor
from dqdyn.multibody.model import Model


def aba_parameter_derivatives(model: Model, q, v, tau, fext=None) -> np.ndarray:
    """``∂q̈/∂π`` of the forward dynamics ``q̈ = ABA(q, v, τ)`` with respect to the inertial
    parameters ``π = inertial_parameters(model).ravel()`` [Kim2012, §4.2]: ``−M⁻¹ Y(q, v, q̈)``.

    Parameters
    ----------
    model : Model
    q : array_like, shape (..., nq)
        Configuration.
    v : array_like, shape (..., nv)
        Velocity.
    tau : array_like, shape (..., nv)
        Joint forces (N·m, N).
    fext : array_like, shape (..., nbodies+1, 6), optional
        External wrenches, as for `aba` (they do not depend on ``π``).

    Returns
    -------
    dqdd_dpi : ndarray, shape (..., nv, 10·nbodies)
        Column ``10 (i−1) + e`` is ``∂q̈/∂π_{i,e}``, the parameters of body ``i`` in the order
        of ``dqdyn.dynamics.regressor.INERTIAL_PARAMETERS`` (mass, first moment ``m c``,
        inertia about the body origin).  The rotors' ``armature`` is not a body parameter.

    Raises
    ------
    ModelError
        ``model`` is not a `dqdyn.Model`.
    ShapeError, NonFiniteError, NotUnitError
        ``q``, ``v``, ``tau`` or ``fext`` has the wrong shape, NaN / inf, or a non-unit
        (dual) quaternion (the errors of `aba`, naming the argument).
    SingularError
        The mass matrix is singular (a joint moves no inertia).
    """
    if not isinstance(model, Model):
        raise not_a_model(model)
    qdd = aba(model, q, v, tau, fext)
    Y = joint_torque_regressor(model, q, v, qdd)
    return -np.matmul(mass_matrix_inverse(model, q), Y)


__all__ = ["aba_parameter_derivatives"]
