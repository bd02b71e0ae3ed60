"""CMC (Ferrari et al. 2010, the metric of [Silva2022, §5.1]), Butterworth, Richardson differentiation."""

from __future__ import annotations

import numpy as np
import pytest

from dqdyn.analysis import (
    butter_lowpass,
    cmc,
    cmc_waveforms,
    richardson_derivative,
    rows_from,
    summary,
    to_csv,
    to_markdown,
)
from dqdyn.errors import DqdynError, ShapeError


def _cmc_loop(Y):
    """Ferrari et al.'s formula written with explicit loops (independent of the vectorised code)."""
    M, F = len(Y), len(Y[0])
    Yf = [sum(Y[m][f] for m in range(M)) / M for f in range(F)]
    Yg = sum(sum(r) for r in Y) / (M * F)
    num = sum((Y[m][f] - Yf[f]) ** 2 for m in range(M) for f in range(F)) / (F * (M - 1))
    den = sum((Y[m][f] - Yg) ** 2 for m in range(M) for f in range(F)) / (M * F - 1)
    return (1 - num / den) ** 0.5


def test_cmc_matches_formula_and_properties():
    rng = np.random.default_rng(0)
    t = np.linspace(0, 1, 200)
    base = np.sin(2 * np.pi * t)
    Y = np.stack([base + 0.1 * rng.normal(size=t.size) for _ in range(3)])
    assert cmc_waveforms(Y) == pytest.approx(_cmc_loop(Y.tolist()), rel=1e-12)
    a, b = Y[0], Y[1]
    assert cmc(a, b) == pytest.approx(_cmc_loop([a.tolist(), b.tolist()]), rel=1e-12)
    assert cmc(a, a) == 1.0
    assert cmc(a, b) == pytest.approx(cmc(b, a))
    assert np.isnan(cmc(base, -base))  # ratio > 1: not real
    # per-column: (F, n)
    A = np.stack([base, np.cos(2 * np.pi * t)], 1)
    out = cmc(A, A + 0.01)
    assert out.shape == (2,) and np.all(out < 1) and np.all(out > 0.99)
    # an offset lowers the CMC (it "accounts for offsets"), more offset lowers it more
    assert cmc(base, base + 0.2) > cmc(base, base + 0.4)
    with pytest.raises(ShapeError, match="same shape"):
        cmc(a, a[:-1])
    with pytest.raises(DqdynError, match="finite"):
        cmc(a, a * np.nan)


def test_richardson_is_fourth_order():
    errs = []
    for n in (100, 200):
        t = np.linspace(0, 1, n + 1)
        d = richardson_derivative(np.sin(3 * t), t[1])
        errs.append(np.abs(d[2:-2] - 3 * np.cos(3 * t[2:-2])).max())
    assert np.log2(errs[0] / errs[1]) == pytest.approx(4, abs=0.3)
    with pytest.raises(ShapeError, match="5 samples"):
        richardson_derivative(np.zeros(3), 0.1)
    with pytest.raises(DqdynError, match="dt"):
        richardson_derivative(np.zeros(10), 0.0)


def test_butterworth_zero_phase():
    fs = 1000.0
    t = np.arange(0, 2, 1 / fs)
    slow, fast = np.sin(2 * np.pi * 1 * t), 0.5 * np.sin(2 * np.pi * 200 * t)
    y = butter_lowpass(slow + fast, 10.0, fs)
    inner = slice(200, -200)
    assert np.abs(y[inner] - slow[inner]).max() < 2e-3  # no lag, no attenuation in the pass band
    Y = butter_lowpass(np.stack([slow, slow], 1), 10.0, fs)
    np.testing.assert_allclose(Y[:, 0], Y[:, 1])
    with pytest.raises(DqdynError, match="cutoff"):
        butter_lowpass(slow, 600.0, fs)
    with pytest.raises(DqdynError, match="fs"):
        butter_lowpass(slow, 6.0, -1)


def test_tables():
    assert summary([1.0, 0.5]) == dict(min=0.5, mean=0.75, std=0.25, max=1.0)
    rows = rows_from([dict(case="x", quantity="τ", values=[0.99, 1.0], paper=0.9)])
    assert rows[0]["ok"] == "yes"
    md, cs = to_markdown(rows), to_csv(rows)
    assert "| x | τ | 2 |" in md and cs.splitlines()[0].startswith("case,quantity")
