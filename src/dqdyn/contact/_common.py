"""Input handling shared by the contact package (states, finiteness, small matrix helpers)."""

from __future__ import annotations

import numpy as np

from dqdyn._engine.boundary import as_vector_batch, broadcast_batch
from dqdyn.errors import NonFiniteError, ShapeError
from dqdyn.multibody.model import Model


def states(model: Model, names_values):
    """2-D batches ``(X_1, ..., X_k)`` and the common batch shape of the named vectors.

    ``names_values``: ``[(name, value, n, what), ...]``; each value (..., n) is checked for shape
    (`ShapeError` naming it) and finiteness (`NonFiniteError` naming it)."""
    if not isinstance(model, Model):
        raise ShapeError(f"model must be a dqdyn.Model, got {type(model).__name__}")
    arrays, batches = [], []
    for name, value, n, what in names_values:
        X, b = as_vector_batch(value, n, name, what)
        if not np.all(np.isfinite(X)):
            raise NonFiniteError(f"{name} must be finite (no NaN / inf)")
        arrays.append(X)
        batches.append(b)
    try:
        arrays, batch = broadcast_batch(arrays, batches)
    except ValueError:
        raise ShapeError(
            "the batch shapes of " + ", ".join(f"{nv[0]} {b}" for nv, b in zip(names_values, batches))
            + " do not broadcast") from None
    return arrays, batch


def qv_what(model: Model):
    return ("the configuration, model.nq entries", "the velocity, model.nv entries",
            "the acceleration, model.nv entries", "generalized forces, model.nv entries")


def each_state(f, model: Model, *args):
    """``f(model, *args)`` on 2-D batches (N, ·) of a compiled dqdyn function, a single state
    through its 1-D fast path; the result with a leading axis of length N."""
    if args[0].shape[0] == 1:
        return f(model, *(x[0] for x in args))[None]
    return f(model, *args)


def skew(p: np.ndarray) -> np.ndarray:
    """``[p]×`` (..., 3, 3) of vectors (..., 3)."""
    S = np.zeros(p.shape[:-1] + (3, 3))
    S[..., 0, 1], S[..., 0, 2] = -p[..., 2], p[..., 1]
    S[..., 1, 0], S[..., 1, 2] = p[..., 2], -p[..., 0]
    S[..., 2, 0], S[..., 2, 1] = -p[..., 1], p[..., 0]
    return S


def cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a × b`` (..., 3) of vectors (..., 3) (`np.cross` without its dispatch cost on small arrays;
    a single pair (1, 3) in Python floats: the same operations, the same bits)."""
    if a.shape == (1, 3) and b.shape == (1, 3):
        (a0, a1, a2), (b0, b1, b2) = a[0].tolist(), b[0].tolist()
        return np.array([[a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0]])
    a0, a1, a2 = a[..., 0], a[..., 1], a[..., 2]
    b0, b1, b2 = b[..., 0], b[..., 1], b[..., 2]
    out = np.empty(np.broadcast_shapes(a.shape, b.shape))
    out[..., 0] = a1 * b2 - a2 * b1
    out[..., 1] = a2 * b0 - a0 * b2
    out[..., 2] = a0 * b1 - a1 * b0
    return out


def rotations(r: np.ndarray) -> np.ndarray:
    """Rotation matrices (N, 3, 3) of unit quaternions ``r`` (N, 4) ``[w, x, y, z]`` (one state in
    Python floats: the same operations, the same bits, without numpy's cost per small array)."""
    if r.shape[0] == 1:
        w, x, y, z = r[0].tolist()
        return np.array([[[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                          [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                          [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]]])
    w, x, y, z = r[:, 0], r[:, 1], r[:, 2], r[:, 3]
    R = np.empty((r.shape[0], 3, 3))
    R[:, 0, 0] = 1 - 2 * (y * y + z * z)
    R[:, 0, 1] = 2 * (x * y - w * z)
    R[:, 0, 2] = 2 * (x * z + w * y)
    R[:, 1, 0] = 2 * (x * y + w * z)
    R[:, 1, 1] = 1 - 2 * (x * x + z * z)
    R[:, 1, 2] = 2 * (y * z - w * x)
    R[:, 2, 0] = 2 * (x * z - w * y)
    R[:, 2, 1] = 2 * (y * z + w * x)
    R[:, 2, 2] = 1 - 2 * (x * x + y * y)
    return R
