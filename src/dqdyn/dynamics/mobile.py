"""Differential-drive mobile bases: the dqNE base twist and the Fierro–Lewis analytic model.

[Silva2022thesis, App. A], with the sign correction noted below.  The base is parameterized by
the pose ``(x, y, φ)`` of its frame ``F_r``; its CoM frame ``F_d`` is displaced by ``d`` along
``F_r``'s x-axis (eq. A.1–A.3).  In dqdyn this is a planar joint (``q = (x, y, φ)``, ``v = q̇``)
carrying a body whose CoM is at ``(d, 0, 0)``: the joint twist moved to the CoM is exactly the
body twist of eq. A.8, ``ξ_{0,d}^d = ω_{0,d}^d + ε ṗ_{0,d}^d``, and dqNE's projection (4.37) gives
``(f_x, f_y, τ_z)``.  The rolling constraint is not imposed here (as in the thesis, A.8 is used
along trajectories that satisfy it); constrained dynamics are in `dqdyn.constraints.dynamics`.

The Fierro–Lewis model (Fierro & Lewis 1997, quoted in [Silva2022thesis, App. A.1]) is
``M(q) q̈ + c(q, q̇) = τ_a`` (the printed ``q_d`` is ``q̈``).  As printed,
``M_13 = +m d sin φ`` and ``c_1 = +m d φ̇² cos φ``, which hold for a CoM at ``−d``; for the CoM at
``+d`` of eq. A.3 the signs of the ``d`` terms flip (the corrected form).  `fierro_lewis` returns the
corrected form for the CoM at ``+d``; ``printed=True`` returns the printed one.
"""

from __future__ import annotations

import numpy as np

from dqdyn.errors import ShapeError


def fierro_lewis(mass: float, inertia_zz: float, d: float, q, v, *, printed: bool = False):
    """``(M, c)`` of the Fierro–Lewis base model, shapes (..., 3, 3) and (..., 3).

    ``mass`` ``m``, ``inertia_zz`` ``i_33`` (about the CoM), ``d`` the CoM offset along the
    base's x-axis; ``q = (x, y, φ)``, ``v = q̇``.  Corrected signs (CoM at ``+d``) unless
    ``printed=True`` (the form printed in [Silva2022thesis, App. A.1]).
    """
    q = np.asarray(q, dtype=float)
    v = np.asarray(v, dtype=float)
    if q.shape[-1:] != (3,) or v.shape[-1:] != (3,):
        raise ShapeError(f"q and v must have shape (..., 3) (x, y, φ), got {q.shape}, {v.shape}")
    m, s = float(mass), (1.0 if printed else -1.0)
    phi, w = q[..., 2], v[..., 2]
    sn, cs = np.sin(phi), np.cos(phi)
    batch = np.broadcast_shapes(phi.shape, w.shape)
    M = np.zeros(batch + (3, 3))
    M[..., 0, 0] = M[..., 1, 1] = m
    M[..., 0, 2] = M[..., 2, 0] = s * m * d * sn
    M[..., 1, 2] = M[..., 2, 1] = -s * m * d * cs
    M[..., 2, 2] = inertia_zz + m * d * d
    c = np.zeros(batch + (3,))
    c[..., 0] = s * m * d * w * w * cs
    c[..., 1] = s * m * d * w * w * sn
    return M, c


__all__ = ["fierro_lewis"]
