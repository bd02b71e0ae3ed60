"""The documentation site builds with warnings as errors, and shows only figures that exist (its code blocks
run in test_doc_blocks.py)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_mkdocs_build_strict(built_site):
    # built_site (conftest.py): `mkdocs build --strict`, shared with test_api_reference.py
    assert (built_site / "index.html").exists()
    assert (built_site / "api" / "dynamics" / "index.html").exists()


def test_every_figure_the_docs_show_exists():
    for md in (ROOT / "docs").rglob("*.md"):
        for ref in re.findall(r"!\[[^\]]*\]\(([^)]+)\)", md.read_text(encoding="utf-8")):
            assert (md.parent / ref).resolve().exists(), f"{md.name}: {ref}"

