"""The API reference gives every public name an entry, and shows no raw Sphinx roles.

Public names: ``dqdyn.__all__`` and the ``__all__`` of every public module of ``dqdyn`` (a
top-level module or package whose name does not start with ``_`` and that has an ``__all__``),
and of every module such an ``__all__`` names.  An entry is a heading of the built site
(``mkdocs build --strict``, the ``built_site`` fixture of ``conftest.py``) whose anchor is one of
the object's public paths, or the path of its definition: a name re-exported in several places is
documented once, and linked from the others.
"""

from __future__ import annotations

import html
import importlib
import json
import pkgutil
import re
import types
from pathlib import Path

import pytest

import dqdyn

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src" / "dqdyn"

# A Sphinx role as the site shows it when mkdocstrings leaves it alone (``:func:`x``` becomes
# ":func:" and the code span "x"; the target is empty when no code span follows).
ROLE_NAMES = "func|class|mod|meth|attr|data|exc|obj|const|ref"
RENDERED_ROLE = re.compile(rf":(?:py:)?({ROLE_NAMES}):(?:<code>([^<]*)</code>)?")

def _public_modules():
    """``dqdyn`` and its public top-level modules that declare ``__all__``."""
    mods = [dqdyn]
    for info in pkgutil.iter_modules(dqdyn.__path__):
        if info.name.startswith("_"):
            continue
        mod = importlib.import_module(f"dqdyn.{info.name}")
        if hasattr(mod, "__all__"):
            mods.append(mod)
    return mods


def _exports():
    """{key: (object, [public paths])} over every public ``__all__``, modules they name included."""
    found: dict = {}
    todo = _public_modules()
    seen = set()
    while todo:
        mod = todo.pop(0)
        if mod.__name__ in seen:
            continue
        seen.add(mod.__name__)
        for name in mod.__all__:
            try:
                obj = getattr(mod, name)
            except AttributeError:  # a submodule imported on first use (dqdyn.interop)
                obj = importlib.import_module(f"{mod.__name__}.{name}")
            path = f"{mod.__name__}.{name}"
            scalar = isinstance(obj, (bool, int, float, str, type(None)))
            key = path if scalar else id(obj)
            found.setdefault(key, (obj, []))[1].append(path)
            if isinstance(obj, types.ModuleType) and obj.__name__.startswith("dqdyn.") \
                    and hasattr(obj, "__all__"):
                todo.append(obj)
    return found


def _definition_path(obj):
    if isinstance(obj, types.ModuleType):
        return obj.__name__
    if isinstance(obj, (type, types.FunctionType)):
        return f"{obj.__module__}.{obj.__qualname__}"
    return None


EXPORTS = _exports()


@pytest.fixture(scope="module")
def anchors(built_site):
    index = json.loads((built_site / "search" / "search_index.json").read_text(encoding="utf-8"))
    return {d["location"].partition("#")[2] for d in index["docs"]} - {""}


@pytest.fixture(scope="module")
def pages(built_site):
    return {p: p.read_text(encoding="utf-8") for p in built_site.rglob("*.html")}


def _documented(obj, paths, anchors):
    candidates = set(paths)
    if (d := _definition_path(obj)) is not None:
        candidates.add(d)
    return sorted(candidates & anchors)


def test_the_walk_finds_the_public_api():
    # the walk itself: it must reach the subpackages and the names the reference is about
    paths = {p for _, ps in EXPORTS.values() for p in ps}
    for p in ["dqdyn.rnea_derivatives", "dqdyn.aba_derivatives", "dqdyn.load_mjcf",
              "dqdyn.parallel.StewartPlatform", "dqdyn.parallel.lie.commutator",
              "dqdyn.symbolic.dynamics", "dqdyn.trajectory.SE3Spline", "dqdyn.elastic.elastic",
              "dqdyn.interop.pinocchio.to_pinocchio", "dqdyn.interop.dqrobotics.to_dq",
              "dqdyn.viz.Viewer", "dqdyn.scale.distributed.apply", "dqdyn.errors.ShapeError",
              "dqdyn.config.threading_layer", "dqdyn.algebra.mul", "dqdyn.models.ModelEntry"]:
        assert p in paths, p
    assert len(EXPORTS) > 350


def test_every_public_name_has_an_entry(anchors):
    missing = [ps[0] for obj, ps in EXPORTS.values() if not _documented(obj, ps, anchors)]
    assert not missing, f"{len(missing)} public names without an API entry: {missing}"


def test_a_name_exported_in_several_places_is_documented_once(anchors):
    twice = {ps[0]: got for obj, ps in EXPORTS.values()
             if len(got := _documented(obj, ps, anchors)) > 1}
    assert not twice, twice


def test_the_other_places_link_to_the_entry(anchors, pages):
    linked = set()
    for text in pages.values():
        for href in re.findall(r'<a class="autorefs[^"]*"[^>]*href="([^"]*)"', text):
            linked.add(html.unescape(href).partition("#")[2])
    unlinked = {}
    for obj, ps in EXPORTS.values():
        if len(ps) > 1:
            got = _documented(obj, ps, anchors)
            if got and got[0] not in linked:
                unlinked[got[0]] = ps
    assert not unlinked, f"re-exported names no page links to: {unlinked}"


def test_no_unresolved_cross_reference(pages):
    bad = {p.relative_to(p.parents[1]).as_posix(): m
           for p, text in pages.items()
           if (m := re.findall(r"\]\[dqdyn\.[\w.]+\]", text))}
    assert not bad, bad


def test_no_raw_sphinx_role_on_the_site(pages):
    bad = {}
    for p, text in pages.items():
        for role, target in RENDERED_ROLE.findall(text):
            target = html.unescape(target)
            bad.setdefault(str(p), []).append(f":{role}:{target}")
    assert not bad, bad


def test_the_role_check_can_fail():
    # the rendered form the check looks for
    text = "see :func:<code>dqdyn.load</code> and :class:<code>ModelBuilder</code> and :mod:x"
    assert RENDERED_ROLE.findall(text) == [("func", "dqdyn.load"), ("class", "ModelBuilder"),
                                           ("mod", "")]
