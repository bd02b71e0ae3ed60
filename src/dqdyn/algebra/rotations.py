"""Rotations and rigid transforms as plain numpy functions (batch axes first).

Unit quaternions are scalar first ``[w, x, y, z]``; poses are unit dual quaternions
``x = r + ε ½ p r`` [Silva2022thesis, eq. (3.10)].  These convert between quaternions, rotation matrices,
roll-pitch-yaw angles (URDF's fixed-axis X-Y-Z convention, ``R = R_z(y) R_y(p) R_x(r)``), axis-angle,
and 4×4 homogeneous matrices.
"""

from __future__ import annotations

import numpy as np

from dqdyn import errors


def quat_multiply(a, b):
    """Hamilton product of quaternions ``a b`` (arrays (..., 4))."""
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    a0, a1, a2, a3 = np.moveaxis(a, -1, 0)
    b0, b1, b2, b3 = np.moveaxis(b, -1, 0)
    return np.stack(
        [
            a0 * b0 - a1 * b1 - a2 * b2 - a3 * b3,
            a0 * b1 + a1 * b0 + a2 * b3 - a3 * b2,
            a0 * b2 - a1 * b3 + a2 * b0 + a3 * b1,
            a0 * b3 + a1 * b2 - a2 * b1 + a3 * b0,
        ],
        axis=-1,
    )


def quat_conj(a):
    a = np.array(a, dtype=float, copy=True)
    a[..., 1:] *= -1.0
    return a


def quat_from_axis_angle(axis, angle):
    """``cos(θ/2) + n sin(θ/2)`` for a unit axis ``n`` (..., 3) and an angle θ (...)."""
    axis = np.asarray(axis, dtype=float)
    angle = np.asarray(angle, dtype=float)[..., None]
    n = axis / np.linalg.norm(axis, axis=-1, keepdims=True)
    return np.concatenate([np.cos(angle / 2), np.sin(angle / 2) * n], axis=-1)


def matrix_from_quat(r):
    """Rotation matrix (..., 3, 3) of a unit quaternion (..., 4)."""
    r = np.asarray(r, dtype=float)
    w, x, y, z = np.moveaxis(r, -1, 0)
    return np.stack(
        [
            np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)], -1),
            np.stack([2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)], -1),
            np.stack([2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)], -1),
        ],
        axis=-2,
    )


def quat_from_matrix(R):
    """Unit quaternion (..., 4), with ``w >= 0``, of a rotation matrix (..., 3, 3).

    Shepperd's method: the largest of the four candidates is used for each element, so the
    result is accurate for every rotation, including half-turns.
    """
    R = np.asarray(R, dtype=float)
    batch = R.shape[:-2]
    R = R.reshape(-1, 3, 3)
    tr = np.trace(R, axis1=-2, axis2=-1)
    cand = np.stack([tr, R[:, 0, 0], R[:, 1, 1], R[:, 2, 2]], axis=-1)
    k = np.argmax(cand, axis=-1)
    q = np.empty((R.shape[0], 4))
    for i in range(R.shape[0]):
        m = R[i]
        if k[i] == 0:
            s = 2.0 * np.sqrt(max(1.0 + tr[i], 0.0))
            q[i] = [0.25 * s, (m[2, 1] - m[1, 2]) / s, (m[0, 2] - m[2, 0]) / s, (m[1, 0] - m[0, 1]) / s]
        elif k[i] == 1:
            s = 2.0 * np.sqrt(max(1.0 + m[0, 0] - m[1, 1] - m[2, 2], 0.0))
            q[i] = [(m[2, 1] - m[1, 2]) / s, 0.25 * s, (m[0, 1] + m[1, 0]) / s, (m[0, 2] + m[2, 0]) / s]
        elif k[i] == 2:
            s = 2.0 * np.sqrt(max(1.0 + m[1, 1] - m[0, 0] - m[2, 2], 0.0))
            q[i] = [(m[0, 2] - m[2, 0]) / s, (m[0, 1] + m[1, 0]) / s, 0.25 * s, (m[1, 2] + m[2, 1]) / s]
        else:
            s = 2.0 * np.sqrt(max(1.0 + m[2, 2] - m[0, 0] - m[1, 1], 0.0))
            q[i] = [(m[1, 0] - m[0, 1]) / s, (m[0, 2] + m[2, 0]) / s, (m[1, 2] + m[2, 1]) / s, 0.25 * s]
    q *= np.where(q[:, :1] < 0, -1.0, 1.0)
    q /= np.linalg.norm(q, axis=-1, keepdims=True)
    return q.reshape(batch + (4,))


def quat_from_rpy(rpy):
    """Quaternion of URDF roll-pitch-yaw ``R = R_z(yaw) R_y(pitch) R_x(roll)``."""
    rpy = np.asarray(rpy, dtype=float)
    ex = np.zeros(rpy.shape[:-1] + (3,))
    ey = ex.copy()
    ez = ex.copy()
    ex[..., 0] = 1.0
    ey[..., 1] = 1.0
    ez[..., 2] = 1.0
    qx = quat_from_axis_angle(ex, rpy[..., 0])
    qy = quat_from_axis_angle(ey, rpy[..., 1])
    qz = quat_from_axis_angle(ez, rpy[..., 2])
    return quat_multiply(qz, quat_multiply(qy, qx))


def pose_from_rt(r, p):
    """Unit dual quaternion ``r + ε ½ p r`` (..., 8) from a rotation quaternion and a translation."""
    r = np.asarray(r, dtype=float)
    p = np.asarray(p, dtype=float)
    p4 = np.concatenate([np.zeros(p.shape[:-1] + (1,)), p], axis=-1)
    r, p4 = np.broadcast_arrays(r, p4)
    return np.concatenate([r, 0.5 * quat_multiply(p4, r)], axis=-1)


def rotation_of(x):
    """Rotation quaternion ``P(x)`` of a pose (..., 8)."""
    return np.array(np.asarray(x, dtype=float)[..., :4])


def translation_of(x):
    """Translation ``p = 2 D(x) P(x)*`` (..., 3) of a pose (..., 8)."""
    x = np.asarray(x, dtype=float)
    return 2.0 * quat_multiply(x[..., 4:], quat_conj(x[..., :4]))[..., 1:]


def pose_from_matrix(T):
    """Unit dual quaternion (..., 8), ``P0 >= 0``, of a homogeneous matrix (..., 4, 4).

    The one definition (`dualquat` and `dqdyn.algebra` re-export it); input checked:
    `ShapeError` / `NonFiniteError` name ``T``."""
    T = np.asarray(T, dtype=float)
    if T.ndim < 2 or T.shape[-2:] != (4, 4):
        raise errors.ShapeError(f"T must have shape (..., 4, 4); got {T.shape}")
    if not np.all(np.isfinite(T)):
        raise errors.NonFiniteError("T contains NaN or infinity")
    return pose_from_rt(quat_from_matrix(T[..., :3, :3]), T[..., :3, 3])


def matrix_from_pose(x):
    """Homogeneous 4×4 matrix (..., 4, 4) of a unit dual quaternion (..., 8).

    The one definition (`dualquat` and `dqdyn.algebra` re-export it); input checked
    (errors name ``x``)."""
    try:
        x = np.asarray(x, dtype=float)
    except (TypeError, ValueError) as exc:
        raise errors.ShapeError(f"x must be a real array of shape (..., 8): {exc}") from None
    if x.ndim == 0 or x.shape[-1] != 8:
        raise errors.ShapeError(f"x must have shape (..., 8); got {x.shape}")
    if not np.all(np.isfinite(x)):
        raise errors.NonFiniteError("x contains NaN or infinity")
    T = np.zeros(x.shape[:-1] + (4, 4))
    T[..., :3, :3] = matrix_from_quat(x[..., :4])
    T[..., :3, 3] = translation_of(x)
    T[..., 3, 3] = 1.0
    return T


__all__ = [
    "quat_multiply",
    "quat_conj",
    "quat_from_axis_angle",
    "matrix_from_quat",
    "quat_from_matrix",
    "quat_from_rpy",
    "pose_from_rt",
    "rotation_of",
    "translation_of",
    "pose_from_matrix",
    "matrix_from_pose",
]
