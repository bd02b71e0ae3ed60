"""Load rate of MJCF files as they come, and the worst relative error against MuJoCo.

For each collection (gymnasium's ``envs/mujoco/assets``, dm_control's ``suite``, dqdyn's own
``tests/parsers/mjcf_corpus``), every XML that MuJoCo compiles and that has a degree of freedom
is loaded by ``dqdyn.load_mjcf`` with no ``ignore=`` and compared with MuJoCo (rnea, M, gravity
term, aba, body poses; ``tests/parsers/test_mjcf_corpus.py::compare_with_mujoco``).  Prints a
Markdown table (the one in docs/mjcf-support.md).

    python benchmarks/mjcf_corpus_report.py
"""

from __future__ import annotations

import os
import sys
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "parsers"))

import mujoco  # noqa: E402
from test_mjcf_corpus import COLLECTIONS, compare_with_mujoco, corpus_files, package_xmls  # noqa: E402


def candidates(files):
    out = []
    for f in files:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                mj = mujoco.MjModel.from_xml_path(f)
        except Exception:  # noqa: BLE001 - include-only files and templates
            continue
        if mj.nv:
            out.append(f)
    return out


def main() -> int:
    rows = []
    sets = {name: package_xmls(pkg, pat) for name, (pkg, pat) in COLLECTIONS.items()}
    sets["dqdyn corpus"] = corpus_files()
    print("| collection | files with DoFs | load as they come | worst relative error (rnea, M, g, aba, poses) |")
    print("|---|---|---|---|")
    for name, files in sets.items():
        if not files:
            print(f"| {name} | (not installed) | | |")
            continue
        files = candidates(files)
        ok, worst, failed = 0, 0.0, []
        for f in files:
            try:
                _, err = compare_with_mujoco(f)
            except Exception as e:  # noqa: BLE001 - reported, not raised
                failed.append(f"{os.path.basename(f)}: {type(e).__name__}: {str(e)[:100]}")
                continue
            ok += 1
            worst = max(worst, max(err.values()))
        rows.append((name, failed))
        print(f"| {name} | {len(files)} | {ok} / {len(files)} ({100 * ok / max(len(files), 1):.0f} %) "
              f"| {worst:.1e} |")
    for name, failed in rows:
        for f in failed:
            print(f"- {name}: {f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
