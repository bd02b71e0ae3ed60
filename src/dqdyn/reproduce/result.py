"""The result of one ``dqdyn reproduce`` case."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from dqdyn.analysis import summary


@dataclass
class CaseResult:
    name: str
    title: str
    quantity: str
    values: np.ndarray  # per-joint CMCs (dynamics cases) or the metric values (control cases)
    paper: float | None  # the paper's mean CMC to reach (None: no CMC threshold)
    passed: bool
    seconds: float = 0.0
    figures: list = field(default_factory=list)
    notes: str = ""
    extra: dict = field(default_factory=dict)

    @property
    def stats(self):
        return summary(self.values)
