"""The validation page lists every claims test, as generated from the tests' docstrings."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _maker():
    spec = importlib.util.spec_from_file_location("make_validation", Path(__file__).with_name(
        "make_validation.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_validation_page_is_current():
    mk = _maker()
    assert mk.PAGE.read_text(encoding="utf-8") == mk.page(), (
        "docs/validation.md is out of date: run python tests/docs/make_validation.py")


def test_every_claims_test_is_on_the_page_and_every_key_has_a_reference():
    text = (ROOT / "docs" / "validation.md").read_text(encoding="utf-8")
    refs = (ROOT / "docs" / "references.md").read_text(encoding="utf-8")
    for f in (ROOT / "tests" / "claims").glob("test_*_claims.py"):
        for name in re.findall(r"^def (test_\w+)", f.read_text(encoding="utf-8"), re.M):
            assert f"{f.name}::{name}`" in text, name
    for key in set(re.findall(r"^\| ([A-Za-z0-9, ]+?) \|", text, re.M)) - {"key"}:
        for k in key.split(", "):
            assert f"**[{k}]**" in refs, k
