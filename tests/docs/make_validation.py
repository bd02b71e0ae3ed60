"""Write docs/validation.md from the claims tests' docstrings: ``python tests/docs/make_validation.py``.

One row per ``test_*`` function of ``tests/claims/test_<key>_claims.py``: the citation key, the
claim number (from the test's name), what is compared (the docstring's first sentence), the
oracle (the docstring's "Oracle:" sentence, else the module's) and the test's path.
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "validation.md"
#: the citation key(s) of each claims file (the dqNE and Gauss files stay split by topic)
KEYS = {"test_dqne_claims.py": "Silva2022, Silva2022thesis", "test_gauss_claims.py": "Silva2022"}

HEADER = """# Validation

Every published result dqdyn checks has a test named after its claim number in
`tests/claims/test_<key>_claims.py`. This page is generated from those tests' docstrings
(`python tests/docs/make_validation.py`; `tests/docs/test_validation_page.py` fails when it is out
of date). Citation keys are on the [references](references.md) page; equation, table and section
numbers are the publication's own. Beyond these claims, the suite checks every algorithm against
Pinocchio, MuJoCo, DQ Robotics and finite differences ([features](features.md)).

| key | claim | what is compared | oracle | test |
|---|---|---|---|---|
"""


def _key(path: Path) -> str:
    if path.name in KEYS:
        return KEYS[path.name]
    stem = path.name.removeprefix("test_").removesuffix("_claims.py")
    known = {"silva2022thesis": "Silva2022thesis", "montgomerysmith2023": "MontgomerySmith2023",
             "kim2012": "Kim2012", "mladenova": "Mladenova", "silva2022": "Silva2022"}
    return known.get(stem, stem)


_END = re.compile(r"(?<!\beq)(?<!\beqs)(?<!\bFig)(?<!\bAlg)(?<!\bapp)(?<!\bver)(?<!e\.g)(?<!i\.e)"
                  r"(?<!\bcf)(?<!\bch)(?<!\bNo)\.(?:\s+(?=[A-Z(`])|$)")


def _first_sentence(text: str) -> str:
    m = _END.search(text)
    return (text[:m.start() + 1] if m else text).strip()


def rows() -> list[tuple[str, str, str, str, str]]:
    out = []
    for f in sorted((ROOT / "tests" / "claims").glob("test_*_claims.py")):
        tree = ast.parse(f.read_text(encoding="utf-8"))
        mdoc = " ".join((ast.get_docstring(tree) or "").split())
        mor = re.search(r"Oracles?:\s*(.+)", mdoc)
        for node in tree.body:
            if not (isinstance(node, ast.FunctionDef) and node.name.startswith("test_")):
                continue
            m = re.match(r"test_claim(\d+)(?:_(\d+))?", node.name)
            claim = "–".join(x.lstrip("0") for x in m.groups() if x) if m else "—"
            doc = " ".join((ast.get_docstring(node) or "").split())
            parts = re.split(r"\s*Oracles?(?: besides)?:\s*", doc, maxsplit=1)
            what = _first_sentence(parts[0]) if parts[0] else node.name.replace("_", " ")
            oracle = (_first_sentence(parts[1]) if len(parts) > 1
                      else (_first_sentence(mor.group(1)) if mor else "see the test"))
            out.append((_key(f), claim, what.replace("|", "\\|"), oracle.replace("|", "\\|"),
                        f"`tests/claims/{f.name}::{node.name}`"))
    return out


def page() -> str:
    return HEADER + "".join(f"| {k} | {c} | {w} | {o} | {t} |\n" for k, c, w, o, t in rows())


if __name__ == "__main__":
    PAGE.write_text(page(), encoding="utf-8")
    sys.stdout.write(f"wrote {PAGE.relative_to(ROOT)} ({len(rows())} claims tests)\n")
