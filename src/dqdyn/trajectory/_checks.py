"""Input checks shared by `dqdyn.trajectory` (every failure names the argument)."""

from __future__ import annotations

import numpy as np

from dqdyn import errors
from dqdyn.algebra.dualquat import _arr, _check_unit


def times(t, name: str = "times", *, min_len: int = 2) -> np.ndarray:
    """A finite, strictly increasing 1-D knot vector of at least ``min_len`` entries."""
    try:
        a = np.asarray(t, dtype=float)
    except (TypeError, ValueError):
        raise errors.ShapeError(f"{name} must be a 1-D array of real knot times") from None
    if a.ndim != 1 or a.size < min_len:
        raise errors.ShapeError(f"{name} must be a 1-D array of at least {min_len} knot times; got shape {a.shape}")
    if not np.all(np.isfinite(a)):
        raise errors.NonFiniteError(f"{name} contains NaN or infinity")
    d = np.diff(a)
    if np.any(d <= 0):
        k = int(np.argmax(d <= 0))
        raise errors.ShapeError(f"{name} must be strictly increasing; {name}[{k + 1}] = {a[k + 1]:g} "
                                f"<= {name}[{k}] = {a[k]:g}")
    return a


def rotations(R, name: str = "rotations", *, tol: float = 1e-9) -> np.ndarray:
    """Rotation matrices (..., 3, 3): orthogonal with determinant +1 within ``tol``."""
    try:
        R = np.asarray(R, dtype=float)
    except (TypeError, ValueError):
        raise errors.ShapeError(f"{name} must be an array of 3×3 rotation matrices") from None
    if R.ndim < 2 or R.shape[-2:] != (3, 3):
        raise errors.ShapeError(f"{name} must have shape (..., 3, 3); got {R.shape}")
    if not np.all(np.isfinite(R)):
        raise errors.NonFiniteError(f"{name} contains NaN or infinity")
    E = np.abs(np.swapaxes(R, -1, -2) @ R - np.eye(3)).max(axis=(-2, -1))
    bad = (E > tol) | (np.linalg.det(R) <= 0)
    if np.any(bad):
        idx = tuple(int(i) for i in np.argwhere(np.atleast_1d(bad))[0]) if R.ndim > 2 else ()
        where = f"{name}[{', '.join(map(str, idx))}]" if idx else name
        raise errors.NotUnitError(f"{where} is not a rotation matrix (Rᵀ R = I, det R = +1 within "
                                  f"{tol:g}; deviation {np.max(np.atleast_1d(E)):.3g})")
    return R


def poses(x, name: str = "poses", *, atol: float = 1e-9) -> np.ndarray:
    """Unit dual quaternions (..., 8)."""
    x = _arr(x, name, 8)
    _check_unit(x, name, atol)
    return x


def vec3(v, name: str, shape=()) -> np.ndarray:
    if v is None:
        return np.zeros(shape + (3,))
    a = _arr(v, name, 3)
    try:
        return np.broadcast_to(a, shape + (3,)).astype(float)
    except ValueError:
        raise errors.ShapeError(f"{name} must broadcast to {shape + (3,)}; got {a.shape}") from None


def eval_times(t) -> tuple[np.ndarray, tuple]:
    """``t`` as a flat float array and the batch shape to restore."""
    try:
        a = np.asarray(t, dtype=float)
    except (TypeError, ValueError):
        raise errors.ShapeError("t must be a real scalar or array of times") from None
    if not np.all(np.isfinite(a)):
        raise errors.NonFiniteError("t contains NaN or infinity")
    return a.reshape(-1), a.shape


def is_body_frame(frame) -> bool:
    """``True`` for ``frame="body"``, ``False`` for ``"spatial"`` (the frame of a curve's angular
    velocity or twist); anything else is an ``UnknownNameError`` naming ``frame``."""
    if frame == "body":
        return True
    if frame == "spatial":
        return False
    raise errors.UnknownNameError(f"frame must be 'body' or 'spatial'; got {frame!r}")


def rotations_any(x, name: str = "rotations", *, tol: float = 1e-9) -> np.ndarray:
    """Rotation matrices (..., 3, 3) from rotation matrices (..., 3, 3), unit quaternions
    ``[w, x, y, z]`` (..., 4) or unit dual quaternions (..., 8) (their rotation part); the
    kind is told by the trailing shape.  A quaternion and its negative give the same rotation
    (the curves through them take the shorter way)."""
    from dqdyn.algebra.rotations import matrix_from_quat

    try:
        a = np.asarray(x, dtype=float)
    except (TypeError, ValueError):
        raise errors.ShapeError(f"{name} must be rotation matrices (..., 3, 3), unit quaternions "
                                "(..., 4) or unit dual quaternions (..., 8)") from None
    if a.ndim >= 2 and a.shape[-2:] == (3, 3):
        return rotations(a, name, tol=tol)
    if a.ndim >= 1 and a.shape[-1] == 4:
        if not np.all(np.isfinite(a)):
            raise errors.NonFiniteError(f"{name} contains NaN or infinity")
        dev = np.abs(np.linalg.norm(a, axis=-1) - 1.0)
        if np.any(dev > tol):
            k = tuple(int(i) for i in np.argwhere(np.atleast_1d(dev > tol))[0]) if a.ndim > 1 else ()
            where = f"{name}[{', '.join(map(str, k))}]" if k else name
            raise errors.NotUnitError(f"{where} is not a unit quaternion [w, x, y, z] (| |q| − 1 | "
                                      f"= {float(np.max(dev)):.3g} > {tol:g})")
        return matrix_from_quat(a.reshape(-1, 4)).reshape(a.shape[:-1] + (3, 3))
    if a.ndim >= 1 and a.shape[-1] == 8:
        p = poses(a, name, atol=tol)
        return matrix_from_quat(p[..., :4].reshape(-1, 4)).reshape(a.shape[:-1] + (3, 3))
    raise errors.ShapeError(f"{name} must be rotation matrices (..., 3, 3), unit quaternions "
                            f"(..., 4) or unit dual quaternions (..., 8); got shape {a.shape}")


def poses_any(x, name: str = "poses", *, atol: float = 1e-9) -> np.ndarray:
    """Unit dual quaternions (..., 8) from unit dual quaternions (..., 8) or homogeneous
    matrices (..., 4, 4) (rotation block checked as in `rotations`, last row ``0 0 0 1``)."""
    from dqdyn.algebra.rotations import pose_from_matrix

    try:
        a = np.asarray(x, dtype=float)
    except (TypeError, ValueError):
        raise errors.ShapeError(f"{name} must be unit dual quaternions (..., 8) or homogeneous "
                                "matrices (..., 4, 4)") from None
    if a.ndim >= 2 and a.shape[-2:] == (4, 4):
        rotations(a[..., :3, :3], f"{name} (rotation blocks)", tol=atol)
        if not np.allclose(a[..., 3, :], [0.0, 0.0, 0.0, 1.0], atol=atol):
            raise errors.ShapeError(f"{name}: the last row of a homogeneous matrix must be "
                                    "[0, 0, 0, 1]")
        if not np.all(np.isfinite(a)):
            raise errors.NonFiniteError(f"{name} contains NaN or infinity")
        return pose_from_matrix(a.reshape(-1, 4, 4)).reshape(a.shape[:-2] + (8,))
    return poses(a, name, atol=atol)
