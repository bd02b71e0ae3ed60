"""The [Mladenova] reproduce cases (Cayley cubic, mobile-manipulator planning, Hamel vs UK)."""

import pytest

from dqdyn.reproduce.mladenova import case_cayley_cubic, case_mm_planning, case_pseudo_coordinates
from dqdyn.reproduce.runner import CASES


def test_registered():
    for name in ("cayley_cubic", "mm_planning", "pseudo_coordinates"):
        assert name in CASES


@pytest.mark.parametrize("fn", [case_cayley_cubic, case_mm_planning, case_pseudo_coordinates])
def test_case_passes_and_writes(fn, tmp_path):
    pytest.importorskip("matplotlib")
    r = fn(quick=True, out_dir=tmp_path)
    assert r.passed, r.notes
    for f in r.figures:
        assert (tmp_path / f.split("/")[-1]).exists()
    if fn is case_pseudo_coordinates:
        assert (tmp_path / "pseudo_coordinates.md").read_text().count("|") > 20
