"""Comparison helpers shared by the algebra tests."""

from __future__ import annotations

import numpy as np


def close(a, b, tol=1e-9):
    """``a = b`` within ``tol`` relative to the larger magnitude (at least 1)."""
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    scale = max(1.0, float(np.max(np.abs(a), initial=0.0)), float(np.max(np.abs(b), initial=0.0)))
    np.testing.assert_allclose(a, b, rtol=0, atol=tol * scale)


def close_pm(a, b, tol=1e-9):
    """``a = ±b`` (the double cover: x and −x are the same pose)."""
    a = np.asarray(a)
    b = np.asarray(b)
    if np.linalg.norm(a - b) > np.linalg.norm(a + b):
        b = -b
    close(a, b, tol)
