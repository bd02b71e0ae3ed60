"""Independent oracles shared by the parallel-robot tests ([MontgomerySmith2023]): scipy rotations and finite
differences only, nothing from dqdyn."""

from __future__ import annotations

import numpy as np
from scipy.spatial.transform import Rotation


def np_pose(R, t):
    """Unit dual quaternion ``q + ε ½ t q`` of a rotation matrix ``R`` and a translation ``t``."""
    q = Rotation.from_matrix(R).as_quat(scalar_first=True)
    w, x, y, z = q
    tq = np.array([-t @ q[1:], t[0] * w + t[1] * z - t[2] * y, -t[0] * z + t[1] * w + t[2] * x, t[0] * y - t[1] * x + t[2] * w])
    return np.concatenate([q, 0.5 * tq])


def body_fd(g, R, t, h=1e-4):
    """2 × body-frame Jacobian of ``g(R, t)`` by independent 4th-order central differences (the
    Lie derivative of [MontgomerySmith2023, eq. (46)] is twice the body-frame partial, eqs. (52)–(53))."""
    cols = []
    for i in range(6):
        e = np.zeros(6)
        e[i] = 1.0

        def gi(s):
            return np.asarray(g(R @ Rotation.from_rotvec(s * e[:3]).as_matrix(), t + R @ (s * e[3:])))

        cols.append(2.0 * (-gi(2 * h) + 8 * gi(h) - 8 * gi(-h) + gi(-2 * h)) / (12 * h))
    return np.stack(cols, axis=-1)


def pose_err(P, T):
    """Distance ``min(|P − T|∞, |P + T|∞)`` between poses (``η`` and ``−η`` are the same pose)."""
    return np.minimum(np.abs(P - T).max(-1), np.abs(P + T).max(-1))
