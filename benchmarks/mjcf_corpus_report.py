"""Load rate of MJCF files as they come, and the worst relative error against MuJoCo.

For each collection (gymnasium's ``envs/mujoco/assets``, dm_control's ``suite``, dqdyn's own
``tests/parsers/mjcf_corpus``), every XML that MuJoCo compiles and that has a degree of freedom
is loaded by ``dqdyn.load_mjcf`` with no ``ignore=`` and compared with MuJoCo (rnea, M, gravity
term, aba, body poses, body Jacobians; ``tests/parsers/test_mjcf_corpus.py::compare_with_mujoco``).
Prints a Markdown table (the one in docs/mjcf-support.md).

``--menagerie DIR`` (or ``DQDYN_MENAGERIE=DIR``) runs the same comparison on a MuJoCo Menagerie
checkout, robot by robot: every robot XML (``DIR/<robot>/*.xml`` but ``scene*.xml`` and
include-only fragments) is loaded as it comes — the original file — and compared with MuJoCo on
the file itself, or, when MuJoCo cannot compile it because mesh files are absent, on the copy
``tests/parsers/test_menagerie_checkout.py::stripped_xml`` makes (mesh / texture / height-field
/ skin assets removed, mesh geoms turned into massless 1 mm spheres, every ``<inertial>`` kept,
``inertiafromgeom="false"`` when every body has an ``<inertial>``).  A file refused because a
body without a joint takes its mass from an absent mesh is compared loaded with
``ignore=("meshes",)``; one whose moving bodies take their mass from absent meshes is reported
as refused.

    python benchmarks/mjcf_corpus_report.py
    python benchmarks/mjcf_corpus_report.py --menagerie /path/to/mujoco_menagerie
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


def menagerie(folder: str) -> int:
    from test_menagerie_checkout import compare_robot, menagerie_xmls

    files = menagerie_xmls(folder)
    print("| robot XML | nv | loads | worst relative error (rnea, M, g, aba, poses, Jacobians) | oracle |")
    print("|---|---|---|---|---|")
    ok, worst = 0, 0.0
    for f in files:
        name = os.path.relpath(f, folder)
        oracle = "the file" if _compiles(f) else "stripped copy"
        try:
            model, err, how = compare_robot(f)
        except Exception as e:  # noqa: BLE001 - reported, not raised
            print(f"| `{name}` | | no: {type(e).__name__}: {str(e)[:120]} | | {oracle} |")
            continue
        if how == "refused":
            print(f"| `{name}` | | refused: {err.split(': ', 1)[-1][:110]}… | | {oracle} |")
            continue
        ok += how == "as it comes"
        e = max(err.values())
        worst = max(worst, e)
        key = max(err, key=err.get)
        print(f"| `{name}` | {model.nv} | {'yes' if how == 'as it comes' else how} | {e:.1e} ({key}) | {oracle} |")
    print(f"\n{ok} / {len(files)} robot XMLs load as they come ({100 * ok / max(len(files), 1):.0f} %); "
          f"worst relative error {worst:.1e}")
    return 0


def _compiles(f) -> bool:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            mujoco.MjModel.from_xml_path(f)
    except Exception:  # noqa: BLE001
        return False
    return True


def main(argv=None) -> int:
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--menagerie", metavar="DIR", default=os.environ.get("DQDYN_MENAGERIE"),
                    help="a MuJoCo Menagerie checkout (default: $DQDYN_MENAGERIE)")
    args = ap.parse_args(argv)
    if args.menagerie:
        return menagerie(args.menagerie)
    rows = []
    sets = {name: package_xmls(pkg, pat) for name, (pkg, pat) in COLLECTIONS.items()}
    sets["dqdyn corpus"] = corpus_files()
    print("| collection | files with DoFs | load as they come | worst relative error (rnea, M, g, aba, poses, "
          "Jacobians, mass) |")
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
