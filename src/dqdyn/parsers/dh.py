"""Serial manipulators from Denavit–Hartenberg tables: `serial_from_dh`.

Each row of the table is ``(θ, d, a, α)`` for one joint ``i = 1 … n``; the joint variable is
``θ_i = q_i + θ`` for a revolute joint and ``d_i = q_i + d`` for a prismatic one (the table
entry of the variable is its offset).  The pose of DH frame ``i`` in DH frame ``i-1`` is

* **standard** DH ([Silva2022thesis, eq. (3.20)], Spong / Corke's ``DHRobot``)::

      x_i^{i-1} = r_{z,θ_i} p_{z,d_i} p_{x,a_i} r_{x,α_i}

* **modified** DH (Craig; Corke's ``mdh``): the same row, read as ``(θ_i, d_i, a_{i-1},
  α_{i-1})``::

      x_i^{i-1} = r_{x,α} p_{x,a} r_{z,θ_i} p_{z,d_i}

and the end-effector pose is ``x_n^0 = x_1^0 x_2^1 … x_n^{n-1}`` (times ``base`` on the left and
``tool`` on the right when given).

Mapping onto dqdyn's joints (whose motion is about / along the z axis of a joint frame):

* body ``"body{i}"`` is moved by joint ``"joint{i}"``; its frame is the frame right after the
  joint motion: for standard DH, ``B_i = (DH frame i-1) r_{z,θ_i} p_{z,d_i}`` — DH frame ``i``
  is then ``B_i p_{x,a_i} r_{x,α_i}``; for modified DH the body frame *is* DH frame ``i``.
  The constant parts go into the joint placements (``r_{z,θ} p_{z,d}`` of the offsets and the
  previous link's trailing ``p_{x,a} r_{x,α}`` for standard DH; ``r_{x,α} p_{x,a}`` and the
  offsets for modified DH).
* named frames: ``"link0"`` (= the DH base frame, at ``base`` in the world), ``"link{i}"`` (DH
  frame ``i``), ``"flange"`` (DH frame ``n``) and ``"tool"`` (``flange · tool``, identity when
  ``tool`` is None).
* ``coms`` and ``inertias`` are given **in DH frame i** (the robotics-toolbox convention, for both
  standard and modified tables: the CoM of link ``i`` in the frame attached to it) and are
  converted into the body frame; ``model.com`` / ``model.inertia`` are body-frame quantities.
  ``inertias`` rows may be 3×3 matrices about the CoM, 3 principal moments or 6 values
  ``(ixx, ixy, ixz, iyy, iyz, izz)``.

>>> import numpy as np
>>> puma = serial_from_dh([[0, 0, 0, np.pi/2], [0, 0, 0.4318, 0], [0, 0.15005, 0.0203, -np.pi/2],
...                        [0, 0.4318, 0, np.pi/2], [0, 0, 0, -np.pi/2], [0, 0, 0, 0]])
>>> puma.nq, puma.frame_names[-2:]
(6, ('flange', 'tool'))
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from dqdyn.errors import ModelError
from dqdyn.multibody.builders import ModelBuilder
from dqdyn.multibody.model import Model


def _rz(t):
    c, s = np.cos(t), np.sin(t)
    T = np.eye(4)
    T[:2, :2] = [[c, -s], [s, c]]
    return T


def _rx(t):
    c, s = np.cos(t), np.sin(t)
    T = np.eye(4)
    T[1:3, 1:3] = [[c, -s], [s, c]]
    return T


def _tz(d):
    T = np.eye(4)
    T[2, 3] = d
    return T


def _tx(a):
    T = np.eye(4)
    T[0, 3] = a
    return T


def dh_matrix(theta: float, d: float, a: float, alpha: float, convention: str = "standard"):
    """4×4 homogeneous matrix of one DH row (``x_i^{i-1}``), for either convention."""
    if convention == "standard":
        return _rz(theta) @ _tz(d) @ _tx(a) @ _rx(alpha)
    if convention == "modified":
        return _rx(alpha) @ _tx(a) @ _rz(theta) @ _tz(d)
    raise ModelError(f"DH convention must be 'standard' or 'modified', got {convention!r}")


def _dq_rz(t):
    return np.array([np.cos(t / 2), 0, 0, np.sin(t / 2), 0, 0, 0, 0])


def _dq_rx(t):
    return np.array([np.cos(t / 2), np.sin(t / 2), 0, 0, 0, 0, 0, 0])


def _dq_tz(d):
    return np.array([1.0, 0, 0, 0, 0, 0, 0, d / 2])


def _dq_tx(a):
    return np.array([1.0, 0, 0, 0, 0, a / 2, 0, 0])


def _dq_prod(*xs):
    """Product of unit dual quaternions, as written (no sign normalization): DQ Robotics'
    ``dh2dq`` factors, so the link poses keep DQ Robotics' signs for any θ, α."""
    from dqdyn.multibody.builders import _pose_mul

    out = xs[0]
    for x in xs[1:]:
        out = _pose_mul(out, x)
    return out


def _per_row(value, n, shape, what, default):
    if value is None:
        return [np.array(default, dtype=float) for _ in range(n)]
    if len(value) != n:
        raise ModelError(f"serial_from_dh: {what} needs {n} entries (one per row), got {len(value)}")
    out = []
    for k, v in enumerate(value):
        a = np.asarray(v, dtype=float)
        if shape is not None and a.shape not in shape:
            raise ModelError(
                f"serial_from_dh: {what}[{k}] must have shape {' or '.join(map(str, shape))}, "
                f"got {a.shape}"
            )
        if not np.all(np.isfinite(a)):
            raise ModelError(f"serial_from_dh: {what}[{k}] contains NaN/inf")
        out.append(a)
    return out


def _inertia3(I) -> np.ndarray:
    I = np.asarray(I, dtype=float)
    if I.shape == (3,):
        return np.diag(I)
    if I.shape == (6,):
        ixx, ixy, ixz, iyy, iyz, izz = I
        return np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])
    return I


def _as_pose(T, what):
    """A base / tool pose as given: a unit DQ (8,) keeps its sign (x and −x are the same pose, and
    a vec8 error law needs the one the user gave); a 4×4 matrix maps to the DQ with w ≥ 0."""
    if T is None:
        return np.array([1.0, 0, 0, 0, 0, 0, 0, 0])
    T = np.asarray(T, dtype=float)
    if T.shape == (8,):
        return T
    if T.shape != (4, 4):
        raise ModelError(f"serial_from_dh: {what} must be a 4×4 matrix or a unit DQ (8,)")
    return T


def serial_from_dh(
    table,
    *,
    convention: str = "standard",
    joint_types: str | Sequence[str] | None = None,
    masses: Sequence[float] | None = None,
    coms=None,
    inertias=None,
    qlim=None,
    base=None,
    tool=None,
    name: str = "dh_robot",
    gravity: Sequence[float] = (0.0, 0.0, -9.81),
    inertia_check: str = "error",
) -> Model:
    """Build a serial manipulator from a DH table (see the module documentation).

    Parameters
    ----------
    table:
        ``(n, 4)`` rows ``(θ, d, a, α)``; the joint variable's entry is its offset.
    convention:
        ``"standard"`` (distal, [Silva2022thesis, eq. (3.20)]) or ``"modified"`` (proximal, Craig).
    joint_types:
        ``None`` (all revolute) or one ``'R'`` / ``'P'`` per row, as a string (``"RRPRRR"``) or
        a sequence (``"revolute"`` / ``"prismatic"`` are accepted too).
    masses, coms, inertias:
        Per-link mass, CoM (3,) and inertia about the CoM, both in DH frame ``i``; default 0
        (a massless chain: fine for kinematics, singular for dynamics).
    qlim:
        ``(n, 2)`` joint position limits, default infinite.
    base, tool:
        Optional 4×4 (or unit DQ) poses of DH frame 0 in the world and of the tool in DH frame
        ``n``.  A unit DQ keeps its sign: ``frame_pose(model, q, "tool")`` is
        ``base · x_1^0(q) ⋯ x_n^{n-1}(q) · tool`` as dual-quaternion products, each DH factor
        written with half angles as DQ Robotics' ``dh2dq`` — the same vec8 as DQ Robotics'
        ``fkm`` (not its negative) for any sign of the given base / tool.
    name, gravity:
        Model name and gravity vector (world frame).
    inertia_check:
        ``"error"`` (default) rejects a link inertia that is not physically valid (not positive
        semi-definite, or breaking the triangle inequality); ``"warn"`` accepts it with a
        warning, ``"off"`` silently (e.g. the Robotics Toolbox's Puma 560, whose link 1 inertia
        ``diag(0, 0, 0.35)`` breaks the triangle inequality).

    Raises
    ------
    ModelError
        On a malformed table or per-link data.
    """
    tab = np.asarray(table, dtype=float)
    if tab.ndim != 2 or tab.shape[1] != 4 or tab.shape[0] < 1:
        raise ModelError(f"serial_from_dh: table must have shape (n, 4) with n >= 1, got {tab.shape}")
    if not np.all(np.isfinite(tab)):
        raise ModelError("serial_from_dh: table contains NaN/inf")
    if convention not in ("standard", "modified"):
        raise ModelError(
            f"serial_from_dh: convention must be 'standard' or 'modified', got {convention!r}"
        )
    n = tab.shape[0]
    if joint_types is None:
        types = ["R"] * n
    else:
        types = [str(t).upper()[:1] for t in joint_types]
        if len(types) != n or any(t not in ("R", "P") for t in types):
            raise ModelError(
                f"serial_from_dh: joint_types must give 'R' or 'P' for each of the {n} rows, "
                f"got {joint_types!r}"
            )
    m_list = _per_row(masses, n, [()], "masses", 0.0)
    c_list = _per_row(coms, n, [(3,)], "coms", np.zeros(3))
    I_list = [_inertia3(I) for I in _per_row(inertias, n, [(3, 3), (3,), (6,)], "inertias",
                                              np.zeros((3, 3)))]
    lim = _per_row(qlim, n, [(2,)], "qlim", [-np.inf, np.inf])

    b = ModelBuilder(name, gravity=gravity, inertia_check=inertia_check)
    b.add_frame("link0", "world", placement=_as_pose(base, "base"))
    parent = "link0"
    trail_dq = _dq_rz(0.0)  # constant pose still to apply after the parent body frame
    for i in range(n):
        theta, d, a, alpha = tab[i]
        if convention == "standard":
            post = _tx(a) @ _rx(alpha)  # DH frame i in the body frame
            pre_dq = _dq_prod(trail_dq, _dq_rz(theta), _dq_tz(d))
            post_dq = _dq_prod(_dq_tx(a), _dq_rx(alpha))
        else:
            post = np.eye(4)
            pre_dq = _dq_prod(trail_dq, _dq_rx(alpha), _dq_tx(a), _dq_rz(theta), _dq_tz(d))
            post_dq = _dq_rz(0.0)
        R, p = post[:3, :3], post[:3, 3]
        body = f"body{i + 1}"
        b.add_body(
            body,
            parent,
            "revolute" if types[i] == "R" else "prismatic",
            joint_name=f"joint{i + 1}",
            axis=(0.0, 0.0, 1.0),
            placement=pre_dq,
            mass=float(m_list[i]),
            com=p + R @ c_list[i],
            inertia=R @ I_list[i] @ R.T,
            lower=float(lim[i][0]),
            upper=float(lim[i][1]),
        )
        b.add_frame(f"link{i + 1}", body, placement=post_dq)
        parent, trail_dq = body, post_dq
    b.add_frame("flange", f"link{n}")
    b.add_frame("tool", "flange", placement=_as_pose(tool, "tool"))
    return b.build()


__all__ = ["serial_from_dh", "dh_matrix"]
