"""The documentation site builds with warnings as errors, and its tutorial code runs."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TUTORIALS = sorted((ROOT / "docs" / "tutorials").glob("*.md"))


def test_mkdocs_build_strict(built_site):
    # built_site (conftest.py): `mkdocs build --strict`, shared with test_api_reference.py
    assert (built_site / "index.html").exists()
    assert (built_site / "api" / "dynamics" / "index.html").exists()


def test_every_figure_the_docs_show_exists():
    for md in (ROOT / "docs").rglob("*.md"):
        for ref in re.findall(r"!\[[^\]]*\]\(([^)]+)\)", md.read_text(encoding="utf-8")):
            assert (md.parent / ref).resolve().exists(), f"{md.name}: {ref}"


@pytest.mark.slow
@pytest.mark.parametrize("page", TUTORIALS, ids=lambda p: p.stem)
def test_tutorial_code_runs(page):
    blocks = re.findall(r"^```python\n(.*?)^```", page.read_text(encoding="utf-8"), re.M | re.S)
    assert blocks, page.name
    for code in blocks:
        exec(compile(code, str(page), "exec"), {"__name__": "__tutorial__"})  # noqa: S102
