"""The layout keeps its promises: layers depend one way, no import circle, no file over 800 lines,
and nothing in the library imports the reproduction harness (docs/architecture.md)."""

from __future__ import annotations

import ast
import pathlib

import pytest

SRC = pathlib.Path(__file__).resolve().parents[1] / "src"
PKG = SRC / "dqdyn"

#: each unit of the package (a subpackage or a top-level module) and its layer: a module may
#: import from its own layer and the layers below, never from one above
LAYERS = {
    0: ("errors", "config", "_optional", "_table"),
    1: ("_engine",),  # the engine room, its install tool (precompile) excepted, see TOOLS
    2: ("algebra",),
    3: ("multibody",),
    4: ("kinematics", "trajectory"),
    5: ("dynamics",),
    6: ("constraints", "composition", "contact", "symbolic", "analysis"),
    7: ("parallel", "parsers"),
    8: ("elastic", "interop", "models", "loading", "simulation"),
    9: ("scale", "sweep", "distributed", "viz", "_cliargs"),
    10: ("reproduce",),
    11: ("cli", "doctor", "__init__"),
}
RANK = {unit: r for r, units in LAYERS.items() for unit in units}
#: modules whose layer is not their package's: the engine room's call boundary (input checks,
#: the C gate, batches) reads the model's tables, so it stands above the model and below every
#: algorithm; the install tool that compiles every kernel imports every algorithm to warm it
TOOLS = {"dqdyn._engine.boundary": 3.5, "dqdyn._engine.gate": 3.5, "dqdyn._engine.batching": 3.5,
         "dqdyn._engine.precompile": 11}
LIMIT = 800


def _modules():
    for p in sorted(PKG.rglob("*.py")):
        if "_kernels" in p.relative_to(PKG).parts[0]:
            continue
        parts = list(p.relative_to(SRC).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        yield ".".join(parts), p


MODULES = dict(_modules())


def _unit(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _rank(module: str) -> float:
    return TOOLS.get(module, RANK[_unit(module)])


def _imports(module: str, path: pathlib.Path) -> set[str]:
    """The dqdyn modules ``module`` imports, anywhere in the file (lazy imports count)."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level:
            raise AssertionError(f"{module}: relative import (the library imports dqdyn.* absolutely)")
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "dqdyn":
            for alias in node.names:  # `from dqdyn.x import y`: y may be a module
                sub = f"{node.module}.{alias.name}"
                out.add(sub if sub in MODULES else node.module)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name.split(".")[0] == "dqdyn")
    return {m for m in out if m in MODULES and m != module}


GRAPH = {m: _imports(m, p) for m, p in MODULES.items()}


def test_every_unit_has_a_layer():
    assert {_unit(m) for m in MODULES} <= set(RANK), set(_unit(m) for m in MODULES) - set(RANK)


def test_layers_depend_one_way():
    up = sorted(f"{m} (layer {_rank(m)}) imports {t} (layer {_rank(t)})"
                for m, targets in GRAPH.items() for t in targets
                if t != "dqdyn" and _rank(t) > _rank(m))
    assert not up, "\n".join(up)


def test_the_library_never_imports_the_reproduction_harness():
    bad = sorted(f"{m} imports {t}" for m, targets in GRAPH.items() for t in targets
                 if t.startswith("dqdyn.reproduce") and not m.startswith("dqdyn.reproduce")
                 and _rank(m) < RANK["reproduce"])
    assert not bad, "\n".join(bad)


def test_no_import_circle():
    """Tarjan's strongly connected components over the module graph (package ``__init__``
    re-exports included): every component is a single module."""
    index, low, stack, on, comps = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in GRAPH[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = set()
            while True:
                w = stack.pop()
                on.discard(w)
                comp.add(w)
                if w == v:
                    break
            comps.append(comp)

    for v in GRAPH:
        if v not in index:
            visit(v)
    # a package's __init__ that re-exports its submodules, imported back by them, is the one
    # benign loop Python resolves; anything else is a circle
    circles = [sorted(c) for c in comps if len(c) > 1
               and not all(m == min(c, key=len) or m.startswith(min(c, key=len) + ".") for m in c)]
    assert not circles, circles


@pytest.mark.parametrize("suffix", [".py", ".c", ".h"])
def test_no_file_over_the_limit(suffix):
    long = sorted(f"{p.relative_to(SRC)}: {n} lines" for p in PKG.rglob(f"*{suffix}")
                  if "_kernels" not in str(p) and (n := len(p.read_text().splitlines())) > LIMIT)
    assert not long, "\n".join(long)


def test_the_check_sees_an_upward_import(tmp_path):
    """The layer check can fail: an algebra module importing dynamics is reported."""
    fake = tmp_path / "m.py"
    fake.write_text("from dqdyn.dynamics import aba\n")
    deps = _imports("dqdyn.algebra.fake", fake)
    assert deps == {"dqdyn.dynamics.aba"}
    assert _rank("dqdyn.dynamics.aba") > _rank("dqdyn.algebra.fake")
