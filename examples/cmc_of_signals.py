"""The coefficient of multiple correlation (CMC, Ferrari et al. 2010) the papers use to compare
waveforms: 1 for identical curves, lower as they differ in shape, offset or amplitude.
"""

import numpy as np

from dqdyn.analysis import butter_lowpass, cmc
from dqdyn.analysis.cmc import format_cmc

t = np.linspace(0.0, 5.0, 5001)
fs = 1.0 / (t[1] - t[0])
clean = np.stack([np.sin(2 * np.pi * 0.5 * t), np.cos(2 * np.pi * 0.3 * t)], axis=1)
rng = np.random.default_rng(0)
noisy = clean + 0.05 * rng.standard_normal(clean.shape)
filtered = butter_lowpass(noisy, 10.0, fs)           # zero-phase Butterworth, 10 Hz
for name, x in (("noisy", noisy), ("filtered", filtered), ("offset", clean + 0.3)):
    print(f"{name:9s} CMC per joint:", ", ".join(format_cmc(c) for c in cmc(clean, x)))
