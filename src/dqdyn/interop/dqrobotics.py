"""Bridge to DQ Robotics (PyPI ``dqrobotics``, imported on first use).

* ``to_dq(x)`` / ``from_dq(h)``: dqdyn's vec8 ↔ a ``dqrobotics.DQ`` (the same 8 numbers:
  dqdyn's vec8 *is* DQ Robotics' ``vec8``).
* ``from_dqrobotics(robot)``: a ``DQ_SerialManipulatorDH`` / ``DQ_SerialManipulatorMDH`` → a
  dqdyn model via `serial_from_dh` (with the robot's reference (base) frame — the one
  its ``fkm`` applies — and effector, its
  joint limits; frames ``link0`` … ``link{n}``, ``flange``, ``tool``).  The end effector is the
  frame ``"tool"``: ``frame_pose(model, q, "tool")``, ``pose_jacobian`` and
  ``pose_jacobian_derivative`` equal DQ Robotics' ``fkm``, ``pose_jacobian`` and
  ``pose_jacobian_derivative`` — the same vec8, not its negative.
* ``to_dqrobotics(model)``: back, for a dqdyn serial model with the frames ``serial_from_dh``
  makes (the DH parameters are read from the link frames; ``convention`` picks DH or MDH).

**Sign rule.**  A pose and its negative are the same rigid motion; dqdyn never normalizes the sign
of a dual quaternion it is *given* (a base, tool, placement or frame given as vec8 keeps its sign,
and kinematics multiplies the factors as written), so a vec8 error law ``x − x_d`` mixing dqdyn and
DQ Robotics sees the same numbers.  Only a pose given as a 4×4 matrix is mapped to the dual
quaternion with a non-negative scalar part.

Robots other than the DH / MDH serial manipulators (``DQ_SerialManipulatorDenso``, mobile bases,
whole-body chains) and joint types other than revolute / prismatic raise
`ModelError` naming them.
"""

from __future__ import annotations

import numpy as np

from dqdyn.errors import ModelError, ShapeError
from dqdyn.multibody.model import Model

REVOLUTE, PRISMATIC = 0, 1  # DQ Robotics' DQ_JointType values of the DH / MDH classes


def _dqr():
    try:
        import dqrobotics
        import dqrobotics.robot_modeling
    except ImportError as e:
        raise ImportError("dqdyn.interop.dqrobotics needs DQ Robotics: pip install dqrobotics "
                          "(or the 'interop' extra: pip install 'dqdyn[interop]')") from e
    return dqrobotics


def to_dq(x):
    """``dqrobotics.DQ`` of a vec8 (8,)."""
    x = np.asarray(x, dtype=float)
    if x.shape != (8,):
        raise ShapeError(f"to_dq: x must be a vec8 of shape (8,), got {x.shape}")
    return _dqr().DQ(x)


def from_dq(h) -> np.ndarray:
    """vec8 (8,) of a ``dqrobotics.DQ``."""
    dqr = _dqr()
    if not isinstance(h, dqr.DQ):
        raise ShapeError(f"from_dq: h must be a dqrobotics.DQ, got {type(h).__name__}")
    return np.array(h.vec8(), dtype=float).reshape(8)


def _convention(robot) -> str:
    rm = _dqr().robot_modeling
    if isinstance(robot, rm.DQ_SerialManipulatorMDH):
        return "modified"
    if isinstance(robot, rm.DQ_SerialManipulatorDH):
        return "standard"
    raise ModelError(f"from_dqrobotics: robot must be a DQ_SerialManipulatorDH or "
                     f"DQ_SerialManipulatorMDH; a {type(robot).__name__} has no dqdyn counterpart")


def from_dqrobotics(robot, *, name: str = "dqrobotics_robot", gravity=(0.0, 0.0, -9.81),
                    masses=None, coms=None, inertias=None) -> Model:
    """A dqdyn model of a DQ Robotics DH / MDH serial manipulator (module doc).

    DQ Robotics models carry no inertia; ``masses``, ``coms``, ``inertias`` are passed on to
    `serial_from_dh` (CoMs and inertias in DH frame i).
    """
    from dqdyn.parsers.dh import serial_from_dh

    conv = _convention(robot)
    types = np.asarray(robot.get_types(), dtype=float).ravel()
    bad = [(k, t) for k, t in enumerate(types) if t not in (REVOLUTE, PRISMATIC)]
    if bad:
        k, t = bad[0]
        raise ModelError(f"from_dqrobotics: joint {k + 1} has DQ Robotics joint type {t:g}; dqdyn's "
                         f"DH models take REVOLUTE ({REVOLUTE}) and PRISMATIC ({PRISMATIC}) only")
    table = np.column_stack([np.ravel(robot.get_thetas()), np.ravel(robot.get_ds()),
                             np.ravel(robot.get_as()), np.ravel(robot.get_alphas())])
    n = table.shape[0]
    qlim = None
    try:
        lo, hi = np.ravel(robot.get_lower_q_limit()), np.ravel(robot.get_upper_q_limit())
        if lo.shape == (n,) and hi.shape == (n,) and np.all(np.isfinite(lo)) and np.all(lo < hi):
            qlim = np.column_stack([lo, hi])
    except RuntimeError:  # limits never set
        qlim = None
    return serial_from_dh(table, convention=conv, joint_types="".join("R" if t == REVOLUTE else "P" for t in types),
                          base=from_dq(robot.get_reference_frame()), tool=from_dq(robot.get_effector()),
                          name=name, gravity=gravity, masses=masses, coms=coms, inertias=inertias,
                          qlim=qlim)


def _rel(model, a, b):
    """Constant pose of frame b in frame a (same body chain, at q = 0), sign as stored."""
    from dqdyn.algebra.dualquat import conj, mul
    from dqdyn.kinematics.forward import frame_pose, neutral

    q0 = neutral(model)
    return mul(conj(frame_pose(model, q0, a)), frame_pose(model, q0, b))


def to_dqrobotics(model: Model, convention: str = "standard"):
    """A ``DQ_SerialManipulatorDH`` (``"standard"``) or ``DQ_SerialManipulatorMDH``
    (``"modified"``) of a dqdyn serial model with ``serial_from_dh``'s frames (``link0`` …
    ``link{n}``, ``flange``, ``tool``), its base frame and effector set; DH parameters are read
    from the link frames at q = 0 (a frame chain that is not DH raises `ModelError`)."""
    from dqdyn.algebra.rotations import matrix_from_pose
    from dqdyn.multibody.joints import PRISMATIC as JP
    from dqdyn.multibody.joints import REVOLUTE as JR

    dqr = _dqr()
    rm = dqr.robot_modeling
    if convention not in ("standard", "modified"):
        raise ModelError(f"to_dqrobotics: convention must be 'standard' or 'modified', got {convention!r}")
    n = model.nbodies
    need = ["link0", "flange", "tool"] + [f"link{i}" for i in range(1, n + 1)]
    missing = [f for f in need if f not in model.frame_names]
    if missing:
        raise ModelError(f"to_dqrobotics: model {model.name!r} lacks the DH frames {missing} "
                         "(build it with serial_from_dh or from_dqrobotics)")
    cols, types = [], []
    for i in range(1, n + 1):
        jt = int(model.joint_type[i])
        if jt not in (JR, JP) or model.joint_nv[i] != 1 or int(model.parent[i]) != i - 1:
            raise ModelError(f"to_dqrobotics: joint {model.joint_names_all[i]!r} "
                             f"({model.joint_type_name(i)}) is not a revolute / prismatic joint of "
                             "a serial chain")
        T = matrix_from_pose(_rel(model, f"link{i - 1}", f"link{i}"))
        R, p = T[:3, :3], T[:3, 3]
        if convention == "standard":  # rz(θ) tz(d) tx(a) rx(α)
            th, al = np.arctan2(R[1, 0], R[0, 0]), np.arctan2(R[2, 1], R[2, 2])
            d, a = p[2], p[0] * np.cos(th) + p[1] * np.sin(th)
            from dqdyn.parsers.dh import dh_matrix
        else:  # rx(α) tx(a) rz(θ) tz(d)
            th, al = np.arctan2(-R[0, 1], R[0, 0]), np.arctan2(-R[1, 2], R[2, 2])
            a, d = p[0], p[2] * np.cos(al) - p[1] * np.sin(al)
            from dqdyn.parsers.dh import dh_matrix
        if np.abs(dh_matrix(th, d, a, al, convention) - T).max() > 1e-9:
            raise ModelError(f"to_dqrobotics: link {i} of {model.name!r} is not a {convention} DH "
                             "link (its frames do not decompose into the DH factors)")
        cols.append([th, d, a, al, REVOLUTE if jt == JR else PRISMATIC])
        types.append(jt)
    M = np.array(cols, dtype=float).T
    robot = (rm.DQ_SerialManipulatorDH if convention == "standard" else rm.DQ_SerialManipulatorMDH)(M)
    robot.set_base_frame(to_dq(_rel(model, "world", "link0")))
    robot.set_reference_frame(to_dq(_rel(model, "world", "link0")))
    robot.set_effector(to_dq(_rel(model, "flange", "tool")))
    return robot


__all__ = ["to_dq", "from_dq", "from_dqrobotics", "to_dqrobotics"]
