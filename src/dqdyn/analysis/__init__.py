"""Validation analysis: the CMC metric, zero-phase Butterworth filtering, Richardson
differentiation, and min / mean / std / max tables (digest §2.1, thesis appendix D)."""

from .cmc import cmc, cmc_waveforms, summary
from .signals import butter_lowpass, richardson_derivative
from .tables import rows_from, to_csv, to_markdown

__all__ = ["cmc", "cmc_waveforms", "summary", "butter_lowpass", "richardson_derivative",
           "rows_from", "to_csv", "to_markdown"]
