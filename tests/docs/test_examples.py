"""Every script of examples/ runs (the documentation's gallery)."""

from __future__ import annotations

import runpy
import sys
from pathlib import Path

import pytest

EXAMPLES = sorted((Path(__file__).resolve().parents[2] / "examples").glob("*.py"))


def test_there_are_examples():
    assert len(EXAMPLES) >= 4


@pytest.mark.parametrize("script", EXAMPLES, ids=lambda p: p.name)
def test_example_runs(script, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)  # scripts write their figures into the current directory
    monkeypatch.setenv("MPLBACKEND", "Agg")
    src = script.read_text(encoding="utf-8")  # scripts with options run short, figures in tmp_path
    monkeypatch.setattr(sys, "argv", [str(script)] + ["--quick"] * ("--quick" in src)
                        + ["--out", str(tmp_path / f"{script.stem}.png")] * ("--out" in src))
    runpy.run_path(str(script), run_name="__main__")
    assert capsys.readouterr().out.strip()  # each prints its result
    doc = script.read_text(encoding="utf-8").lstrip()
    assert doc.startswith('"""')  # the gallery shows each script's docstring
