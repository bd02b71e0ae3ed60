"""Rolling without slipping of a differential-drive base ([Silva2022, eq. (64)], [Silva2022thesis, app. A]).

The base moves by a planar joint ``(x, y, φ)``; its wheels share an axle along the base body's
``y`` axis whose midpoint ``P`` sits at ``axle_offset = (d_x, d_y)`` in the base body frame.
Pure rolling forbids any velocity of ``P`` along the axle:

    e_yᵀ v_P^b = 0,   v_P^b = body-frame velocity of P = v^b + ω^b × r_P,

i.e. ``A(q) v = e_yᵀ J_{P,D}^b v = 0`` with the body-frame Jacobian of the point ``P`` (any
parent chain, any placement of the planar joint).  Its time derivative gives ``A v̇ = b`` with
``b = −e_yᵀ J̇_{P,D}^b v``.  For a base on the world's planar joint and ``P`` at ``(d, 0)``:

    A = [−sin φ, cos φ, d, 0 …],   b = φ̇ (ẋ cos φ + ẏ sin φ)

— the paper's eq. (64) when ``d = 0`` (the paper tacitly puts the axle at the CoM, which it
never states;
here the axle may be anywhere on the base).  The constraint is nonholonomic: it has no position
residual.

With ``wheel_joints=(left, right)`` (1-DoF wheel joints present in the model) the rolling
condition of each wheel adds one row: ``v_{P,x}^b ∓ ω_z w/2 − s r θ̇_{L/R} = 0`` (``r`` wheel
radius, ``w`` track width, ``s = wheel_sign``: +1 when a positive wheel rate drives the base
forward).
"""

from __future__ import annotations

import numpy as np

from dqdyn.constraints.base import DIFF_DRIVE, Constraint, frame_kinematics, spec_rows
from dqdyn.errors import ModelError
from dqdyn.multibody.joints import PLANAR
from dqdyn.multibody.model import DifferentialDrive, Model


class DifferentialDriveConstraint(Constraint):
    """No lateral slip of a differential-drive base's axle midpoint (module docstring).

    ``joint``: the planar joint of the base; ``axle_offset``: (x, y) of the axle midpoint in the
    base body frame.  Build it from a model's declaration with `from_declaration`.
    """

    holonomic = False

    def __init__(self, joint: str, axle_offset=(0.0, 0.0), *, wheel_radius: float = 0.0,
                 track_width: float = 0.0, wheel_joints: tuple[str, str] | None = None,
                 wheel_sign: float = 1.0, name: str | None = None):
        self.joint = joint
        off = np.asarray(axle_offset, dtype=float).reshape(-1)
        if off.shape not in ((2,), (3,)):
            raise ModelError(f"axle_offset must be (x, y) in the base frame, got {axle_offset}")
        self.axle_offset = np.r_[off[:2], 0.0 if off.size == 2 else off[2]]
        self.wheel_radius, self.track_width = float(wheel_radius), float(track_width)
        self.wheel_joints = wheel_joints
        self.wheel_sign = float(wheel_sign)
        if wheel_joints is not None and not (self.wheel_radius > 0 and self.track_width > 0):
            raise ModelError("wheel rolling rows need wheel_radius > 0 and track_width > 0")
        self.dim = 1 if wheel_joints is None else 3
        self.name = name or f"differential drive on {joint!r}"

    @classmethod
    def from_declaration(cls, decl: DifferentialDrive, **kw) -> DifferentialDriveConstraint:
        """The constraint for a model-declared `DifferentialDrive`."""
        return cls(decl.joint, decl.axle_offset, wheel_radius=decl.wheel_radius,
                   track_width=decl.track_width, **kw)

    def _body(self, model: Model) -> int:
        i = model.joint_index(self.joint)
        if int(model.joint_type[i]) != PLANAR:
            raise ModelError(f"{self.name}: joint {self.joint!r} must be a planar joint")
        return i

    def _compiled(self, model: Model):
        if self.wheel_joints is not None:
            return None
        return spec_rows(DIFF_DRIVE, [self._body(model), 0, 0, 0, 1],
                         [1.0, 0, 0, 0, 0, *(0.5 * self.axle_offset)])

    def _terms(self, model: Model, Q, V):
        body = self._body(model)
        pl = np.array([1.0, 0, 0, 0, 0, *(0.5 * self.axle_offset)])  # pure translation
        fk = frame_kinematics(model, Q, V, body, pl, frame="body")
        A = fk.J[:, 4:5, :]  # lateral (body y) velocity of P
        b = -fk.Jdv[:, 4:5]
        if self.wheel_joints is not None:
            rows, rhs = [], []
            half = 0.5 * self.track_width
            for sgn, wj in ((-1.0, self.wheel_joints[0]), (1.0, self.wheel_joints[1])):
                sv = model.v_slice(wj)
                if sv.stop - sv.start != 1:
                    raise ModelError(f"{self.name}: wheel joint {wj!r} must be a 1-DoF joint")
                # forward velocity of the wheel centre: v_x(P) − ω_z y_w, y_w = ±w/2 (left +)
                row = fk.J[:, 3, :] + sgn * half * fk.J[:, 2, :]
                rowd_v = fk.Jdv[:, 3] + sgn * half * fk.Jdv[:, 2]  # (J̇ v of the row above)
                row = row.copy()
                row[:, sv.start] -= self.wheel_sign * self.wheel_radius
                rows.append(row)
                rhs.append(-rowd_v)
            A = np.concatenate([A, np.stack(rows, 1)], axis=1)
            b = np.concatenate([b, np.stack(rhs, 1)], axis=1)
        ve = np.einsum("nij,nj->ni", A, V)
        return A, b, ve, None

    def _position(self, model, Q):
        return None


def model_constraints(model: Model) -> list[Constraint]:
    """Constraint objects for the constraints a model declares (``model.constraints``): every
    `DifferentialDrive` becomes a `DifferentialDriveConstraint`; constraint
    objects declared directly are passed through."""
    out = []
    for c in model.constraints:
        if isinstance(c, DifferentialDrive):
            out.append(DifferentialDriveConstraint.from_declaration(c))
        elif isinstance(c, Constraint):
            out.append(c)
        else:
            raise ModelError(f"model {model.name!r} declares an unsupported constraint {c!r}")
    return out


__all__ = ["DifferentialDriveConstraint", "model_constraints"]
