"""Lint and type checks: ``ruff check`` over the code and ``mypy`` over the package, with the rules of
pyproject.toml ([tool.ruff], [tool.mypy]). Both tools are in the ``test`` extra; without them the checks skip."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LINTED = ["src", "tests", "benchmarks", "examples"]


def _tool(module: str) -> list[str]:
    """The command that runs ``module`` (``python -m module`` where it is importable); skip without it."""
    if importlib.util.find_spec(module) is not None:
        return [sys.executable, "-m", module]
    exe = shutil.which(module)
    if exe is None:
        pytest.skip(f"{module} is not installed (it is in the test extra: pip install -e '.[test]')")
    return [exe]


def _run(cmd: list[str]) -> subprocess.CompletedProcess:
    env = dict(os.environ, NO_COLOR="1")
    return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, env=env, timeout=600)


def test_pyproject_configures_both_tools():
    tomllib = pytest.importorskip("tomllib", reason="tomllib is in the standard library from Python 3.11")

    tool = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]
    rules = tool["ruff"]["lint"]["select"]
    for family in ("F", "E7", "E9", "W6", "B", "UP"):
        assert family in rules, family
    assert tool["ruff"]["target-version"] == "py310"
    assert tool["mypy"]["files"] == ["src/dqdyn"]


def test_ruff_check():
    r = _run([*_tool("ruff"), "check", "--output-format", "concise", *LINTED])
    assert r.returncode == 0, (
        "ruff check finds what the rules of [tool.ruff] forbid (`ruff check --fix` repairs the ones marked [*]):\n"
        + r.stdout[-6000:] + r.stderr[-2000:])


def test_mypy():
    r = _run([*_tool("mypy"), "--show-error-codes"])  # files, rules: [tool.mypy]
    assert r.returncode == 0, "mypy, with the settings of [tool.mypy]:\n" + r.stdout[-6000:] + r.stderr[-2000:]
