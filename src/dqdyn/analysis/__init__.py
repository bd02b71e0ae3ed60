"""Validation analysis: the CMC metric, zero-phase Butterworth filtering, Richardson
differentiation, and min / mean / std / max tables ([Silva2022, §5.1], [Silva2022thesis, §4.2.1.5, app. D])."""

from dqdyn.analysis.cmc import cmc, cmc_waveforms, summary
from dqdyn.analysis.signals import butter_lowpass, richardson_derivative
from dqdyn.analysis.tables import rows_from, to_csv, to_markdown

__all__ = ["cmc", "cmc_waveforms", "summary", "butter_lowpass", "richardson_derivative",
           "rows_from", "to_csv", "to_markdown"]
