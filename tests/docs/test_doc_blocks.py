"""Every ```python block of the documentation (docs/*.md, docs/**/*.md) runs, in order, page by page.

The blocks of one page share a namespace, as a reader typing them one after the other would; each page runs
in a fresh process, in an empty folder. A block is left out only when the line before it (blank lines
between allowed) says why::

    <!-- skip-test: needs a remote Dask scheduler -->

and ``<!-- slow-test: REASON -->`` there marks the page slow (pytest -m "not slow" leaves it out). A block
that is only a snippet include (``--8<-- "examples/x.py"``) is one of the gallery's scripts, run by
tests/docs/test_examples.py; here its file must exist. A page whose code needs an extra that is not installed
(dqdyn's MissingExtraError, or an optional package that cannot be imported) is skipped, naming the extra.
The README's Quickstart runs in tests/docs/test_readme.py.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"

FENCE = re.compile(r"^```python[ \t]*$")
MARK = re.compile(r"^<!--\s*(skip-test|slow-test)\b:?\s*(.*?)\s*-->\s*$")
SNIPPET = re.compile(r'^--8<--\s+"([^"]+)"\s*$')

# Pages whose blocks fail today for a reason being fixed elsewhere: still run, a failure expected (xfail).
PENDING: dict[str, str] = {}

# Importable only with an extra (a block that imports one without it is skipped, not failed).
OPTIONAL = {"mujoco", "matplotlib", "rich", "example_robot_data", "pinocchio", "sympy", "dask", "distributed",
            "zarr", "dask_jobqueue", "xarray", "viser", "trimesh", "collada", "robot_descriptions", "dqrobotics",
            "gymnasium", "dm_control", "mkdocs"}


@dataclass
class Block:
    line: int  # of the opening fence, 1-based
    code: str
    skip: str | None = None  # the reason given in <!-- skip-test: ... -->
    slow: str | None = None
    snippets: tuple[str, ...] = ()


def blocks(page: Path) -> list[Block]:
    """The ```python blocks of ``page``, with the marks the line before each gives."""
    lines = page.read_text(encoding="utf-8").splitlines()
    out, i = [], 0
    while i < len(lines):
        if not FENCE.match(lines[i]):
            i += 1
            continue
        start = i
        j = i - 1
        while j >= 0 and not lines[j].strip():
            j -= 1
        mark = MARK.match(lines[j].strip()) if j >= 0 else None
        i += 1
        body = []
        while i < len(lines) and lines[i].rstrip() != "```":
            body.append(lines[i])
            i += 1
        assert i < len(lines), f"{page.name}:{start + 1}: a ```python block that is never closed"
        i += 1
        code = "\n".join(body) + "\n"
        snippets = tuple(m.group(1) for m in map(SNIPPET.match, body) if m)
        b = Block(start + 1, code, snippets=snippets if len(snippets) == len([x for x in body if x.strip()]) else ())
        if mark is not None:
            setattr(b, "skip" if mark.group(1) == "skip-test" else "slow", mark.group(2))
        out.append(b)
    return out


PAGES = sorted(p for p in DOCS.rglob("*.md") if any(FENCE.match(x) for x in p.read_text(encoding="utf-8").splitlines()))


def _name(page: Path) -> str:
    return page.relative_to(DOCS).as_posix()


def _param(page: Path):
    marks = []
    bs = blocks(page)
    if any(b.slow is not None for b in bs):
        marks.append(pytest.mark.slow)
    if _name(page) in PENDING:
        marks.append(pytest.mark.xfail(strict=False, reason=PENDING[_name(page)]))
    return pytest.param(page, id=_name(page), marks=marks)


DRIVER = textwrap.dedent("""
    import json, sys, traceback
    from importlib.util import find_spec
    blocks = json.loads(sys.stdin.read())
    optional = set(blocks.pop()["optional"])
    ns = {"__name__": "__main__"}
    for where, path, code in blocks:
        try:
            exec(compile(code, path, "exec"), ns)
        except Exception as e:
            from dqdyn.errors import MissingExtraError
            top = (getattr(e, "name", None) or "").split(".")[0]
            if isinstance(e, MissingExtraError):
                print("DOCS-SKIP", where, str(e)); sys.exit(0)
            if isinstance(e, ImportError) and top in optional and find_spec(top) is None:
                print("DOCS-SKIP", where, f"needs {top!r}, not installed"); sys.exit(0)
            print("FAILED", where, file=sys.stderr)
            traceback.print_exc()
            sys.exit(1)
        print("RAN", where)
""")


def test_there_are_pages_with_code():
    names = {_name(p) for p in PAGES}
    assert {"getting-started.md", "features.md", "tutorials/mobile-manipulators.md"} <= names, names


@pytest.mark.parametrize("page", [_param(p) for p in PAGES])
def test_page_code_runs(page: Path, tmp_path):
    run, skipped = [], []
    for b in blocks(page):
        where = f"{_name(page)}:{b.line}"
        if b.skip is not None:
            compile(b.code, where, "exec")  # left out, but still Python
            skipped.append(where)
        elif b.snippets:
            for s in b.snippets:
                assert (ROOT / s).is_file(), f"{where}: the snippet {s} does not exist"
                assert s.startswith("examples/"), f"{where}: {s} is run by nobody (not in examples/)"
        else:
            # padded with the lines above it, so that a traceback names the page's own line numbers
            run.append([where, f"docs/{_name(page)}", "\n" * b.line + b.code])
    if not run:
        if skipped:
            pytest.skip(f"every block of {_name(page)} that is not a gallery script is marked skip-test: {skipped}")
        return  # only gallery scripts, whose files exist
    env = dict(os.environ, MPLBACKEND="Agg", PYTHONPATH=str(ROOT / "src"))
    r = subprocess.run([sys.executable, "-c", DRIVER], input=json.dumps([*run, {"optional": sorted(OPTIONAL)}]),
                       capture_output=True, text=True, cwd=tmp_path, env=env, timeout=900)
    if r.returncode != 0:
        pytest.fail(f"the code of docs/{_name(page)} fails:\n{r.stdout[-3000:]}\n{r.stderr[-6000:]}", pytrace=False)
    skip = [ln for ln in r.stdout.splitlines() if ln.startswith("DOCS-SKIP")]
    if skip:
        pytest.skip(skip[0])
    assert sum(ln.startswith("RAN ") for ln in r.stdout.splitlines()) == len(run), r.stdout


def test_every_skip_says_why():
    for page in PAGES:
        for b in blocks(page):
            for what, why in (("skip-test", b.skip), ("slow-test", b.slow)):
                assert why is None or len(why) > 3, f"{_name(page)}:{b.line}: <!-- {what}: REASON --> without a reason"
