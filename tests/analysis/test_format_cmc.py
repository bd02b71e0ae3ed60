"""CMC values printed to the digits that mean something."""

import numpy as np

from dqdyn.analysis.cmc import format_cmc
from dqdyn.analysis.tables import to_markdown


def test_format_cmc():
    assert format_cmc(0.993) == "0.9930"
    assert format_cmc(0.99997) == "1 − 3.0e-05"
    assert format_cmc(1 - 2.3e-11) == "1 − 2.3e-11"
    assert format_cmc(1.0) == "1"
    assert format_cmc(float("nan")) == "nan"
    assert format_cmc(np.float64(0.86512)) == "0.8651"


def test_tables_use_it():
    md = to_markdown([{"case": "x", "quantity": "τ", "n": 6, "min": 0.99301234567,
                       "mean": 0.9971, "std": 1.234e-3, "max": 1.0, "paper mean": 0.993,
                       "ok": "yes"}])
    assert "0.9930 | 0.9971 | 1.2e-03 | 1 | 0.9930" in md
    assert "0.9930123" not in md
