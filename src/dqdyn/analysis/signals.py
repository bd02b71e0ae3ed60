"""Signal processing of the papers' validation pipeline ([Silva2022, §5.1], [Silva2022thesis, app. D]).

* `butter_lowpass` — discrete Butterworth low-pass applied forwards and backwards
  (``scipy.signal.filtfilt``: zero phase, so model and simulator waveforms stay aligned).  The
  thesis uses order 6; its "normalized cutoff of 10 Hz / 100 Hz" does not give the sampling
  rate, so here the cutoff is in Hz together with the sampling rate ``fs``.
* `richardson_derivative` — numerical differentiation with Richardson extrapolation
  ([Silva2022thesis, app. D], after Gilat & Subramaniam 2014, p. 322): central differences at steps h and
  2h combined as ``D = (4 D_h − D_2h) / 3`` (4th order); 2nd-order one-sided formulas at the ends.
"""

from __future__ import annotations

import numpy as np

from dqdyn.errors import DqdynError, ShapeError


def butter_lowpass(x, cutoff: float, fs: float, order: int = 6, axis: int = 0) -> np.ndarray:
    """Zero-phase Butterworth low-pass of ``x`` along ``axis`` (cutoff and fs in Hz)."""
    x = np.asarray(x, dtype=float)
    if not (np.isfinite(fs) and fs > 0):
        raise DqdynError(f"fs must be a positive sampling rate in Hz, got {fs!r}")
    if not (np.isfinite(cutoff) and 0 < cutoff < fs / 2):
        raise DqdynError(f"cutoff must be in (0, fs/2 = {fs / 2:g}) Hz, got {cutoff!r}")
    if int(order) < 1:
        raise DqdynError(f"order must be >= 1, got {order!r}")
    from scipy import signal  # (here: importing scipy.signal takes ~1 s, and `dqdyn --help` reaches this module)

    sos = signal.butter(int(order), cutoff, btype="low", fs=fs, output="sos")
    padlen = min(x.shape[axis] - 1, 3 * (2 * len(sos) + 1))
    return signal.sosfiltfilt(sos, x, axis=axis, padlen=padlen)


def richardson_derivative(y, dt: float, axis: int = 0) -> np.ndarray:
    """Derivative of uniformly sampled ``y`` (step ``dt``) along ``axis`` by Richardson
    extrapolation of central differences (module doc).  Needs at least 5 samples."""
    y = np.moveaxis(np.asarray(y, dtype=float), axis, 0)
    if y.shape[0] < 5:
        raise ShapeError(f"y needs at least 5 samples along axis {axis}, got {y.shape[0]}")
    if not (np.isfinite(dt) and dt > 0):
        raise DqdynError(f"dt must be a positive time step, got {dt!r}")
    d = np.empty_like(y)
    D1 = (y[3:-1] - y[1:-3]) / (2 * dt)
    D2 = (y[4:] - y[:-4]) / (4 * dt)
    d[2:-2] = (4 * D1 - D2) / 3
    d[1] = (y[2] - y[0]) / (2 * dt)
    d[-2] = (y[-1] - y[-3]) / (2 * dt)
    d[0] = (-3 * y[0] + 4 * y[1] - y[2]) / (2 * dt)
    d[-1] = (3 * y[-1] - 4 * y[-2] + y[-3]) / (2 * dt)
    return np.moveaxis(d, 0, axis)


__all__ = ["butter_lowpass", "richardson_derivative"]
