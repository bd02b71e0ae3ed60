"""The coefficient of multiple correlation (CMC) of Ferrari, Cutti & Cappello (Gait & Posture
31(4):540–542, 2010), the metric of [Silva2022, §5.1] and [Silva2022thesis, §4.2.1.5].

For M waveforms ``Y_{mf}`` (m = 1..M) of F samples (Ferrari et al.'s formula; neither
publication prints it)::

    CMC = sqrt(1 − [Σ_m Σ_f (Y_mf − Ȳ_f)² / (F (M − 1))] / [Σ_m Σ_f (Y_mf − Ȳ)² / (M F − 1)])

with ``Ȳ_f`` the mean across waveforms at sample f and ``Ȳ`` the grand mean.  Identical
waveforms give 1.  When the ratio exceeds 1 the CMC is not real; it is returned as NaN (the
papers do not say how they handled that case).
"""

from __future__ import annotations

import numpy as np

from dqdyn.errors import DqdynError, ShapeError


def cmc_waveforms(Y) -> np.ndarray:
    """CMC of ``Y`` with shape (M, F) or (M, F, n) — M waveforms of F samples, for n signals
    (joints) at once.  Returns a scalar or an (n,) array."""
    Y = np.asarray(Y, dtype=float)
    if Y.ndim not in (2, 3) or Y.shape[0] < 2 or Y.shape[1] < 2:
        raise ShapeError(f"Y must have shape (M >= 2, F >= 2[, n]), got {Y.shape}")
    if not np.all(np.isfinite(Y)):
        raise DqdynError("Y (the waveforms) must be finite")
    M, F = Y.shape[:2]
    Yf = Y.mean(axis=0, keepdims=True)
    Yg = Y.mean(axis=(0, 1), keepdims=True)
    num = ((Y - Yf) ** 2).sum(axis=(0, 1)) / (F * (M - 1))
    den = ((Y - Yg) ** 2).sum(axis=(0, 1)) / (M * F - 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(den > 0, num / np.where(den > 0, den, 1.0), np.where(num > 0, np.inf, 0.0))
        out = np.where(ratio <= 1.0, np.sqrt(np.clip(1.0 - ratio, 0.0, None)), np.nan)
    return out[()] if out.ndim == 0 else out


def cmc(a, b) -> np.ndarray:
    """Per-signal CMC between two waveforms sets ``a`` and ``b`` of shape (F,) or (F, n)
    (samples along axis 0, one column per joint)."""
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    if a.shape != b.shape:
        raise ShapeError(f"a and b must have the same shape, got {a.shape} and {b.shape}")
    return cmc_waveforms(np.stack([a, b]))


def summary(values) -> dict:
    """``{"min", "mean", "std", "max"}`` of per-joint values (the papers' table columns; std is
    the population standard deviation; NaNs are counted as failures: they make min NaN)."""
    x = np.asarray(values, dtype=float).ravel()
    if x.size == 0:
        raise ShapeError("values must not be empty")
    if np.any(np.isnan(x)):
        return dict(min=float("nan"), mean=float(np.nanmean(x)), std=float(np.nanstd(x)),
                    max=float(np.nanmax(x)))
    return dict(min=float(x.min()), mean=float(x.mean()), std=float(x.std()), max=float(x.max()))


def format_cmc(v, digits: int = 4) -> str:
    """A CMC value to the digits that mean something: ``0.9930`` (the papers print 4 decimals);
    a value that rounds to 1 but is not 1 keeps its distance from 1, ``1 − 2.3e-11``; an exact
    1 is ``1``; NaN (a constant waveform) is ``nan``.

    >>> format_cmc(0.993), format_cmc(1 - 2.3e-11), format_cmc(1.0)
    ('0.9930', '1 − 2.3e-11', '1')
    """
    v = float(v)
    if not np.isfinite(v):
        return "nan"
    if v == 1.0:
        return "1"
    if 1.0 - v < 0.5 * 10.0**-digits and v < 1.0:
        return f"1 − {1.0 - v:.1e}"
    return f"{v:.{digits}f}"


__all__ = ["cmc", "cmc_waveforms", "summary", "format_cmc"]
