"""The documentation site, built once for every test of this folder that reads it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="package")
def built_site(tmp_path_factory) -> Path:
    """``mkdocs build --strict`` of the repository's site (warnings are errors); its folder."""
    pytest.importorskip("mkdocs")
    pytest.importorskip("mkdocstrings")
    pytest.importorskip("material")
    site = tmp_path_factory.mktemp("docs") / "site"
    # docs/hooks/figures.py redraws the figures into the built site only (not docs/figures/)
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"), DQDYN_DOCS_FIGURES="site")
    r = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-q",
                        "-f", str(ROOT / "mkdocs.yml"), "-d", str(site)],
                       capture_output=True, text=True, cwd=ROOT, env=env, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    return site
