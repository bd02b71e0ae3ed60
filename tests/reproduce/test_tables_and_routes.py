"""The table cases of ``dqdyn reproduce``: Table C.1, operation counts, the catalogue behind
``--list``, the papers' routes beside each CMC row and the MuJoCo-recorded black-box case."""

import pytest

from dqdyn.reproduce.runner import available_cases, print_catalog, reproduce
from dqdyn.reproduce.tables import case_dqel, case_opcounts


def test_catalog_names_existing_cases_only():
    rows = print_catalog()
    cases = set(available_cases())
    named = [c.strip() for r in rows if r[3] != "—" for c in r[3].split(",")]
    assert named and set(named) <= cases
    # every regenerable table of the publications is covered
    items = " ".join(r[1] for r in rows)
    for t in ("Table 2", "Table 3", "Table 4.6", "Table 4.7", "Table 4.8", "Table 5.1",
              "Table A.1", "Table C.1", "Tables 4.2–4.5", "Table 1"):
        assert t in items
    assert all(r[4] for r in rows if r[3] == "—")  # a reason wherever nothing is regenerated


def test_table_c1_dqel_against_dqne():
    r = case_dqel(quick=True)
    assert r.passed and r.values.shape == (7,) and r.values.max() < 1e-12
    assert "Table C.1" in r.extra["markdown"]


def test_opcounts_case_and_runner_markdown(tmp_path):
    r = case_opcounts()
    assert r.passed and "882n − 48" in r.extra["markdown"]
    reproduce(["dqel", "opcounts"], out_dir=tmp_path, quick=True)
    md = (tmp_path / "results.md").read_text()
    assert "## Tables" in md and "Table 4.2" in md and "Table C.1" in md


def test_tree38_blackbox_recorded_from_mujoco():
    pytest.importorskip("mujoco")
    from dqdyn.reproduce.cases import case_tree38_blackbox

    r = case_tree38_blackbox(quick=True)
    assert r.passed and r.stats["mean"] >= 0.9968
    assert r.extra["interpolation_error"] < 1e-6  # 200 Hz cubic spline of a smooth wrench
    assert r.extra["wrench_mj_vs_dqdyn"] < 1e-5  # MuJoCo's cfrc_int = dqdyn's ζ_a
    assert r.extra["tau_vs_graph"] < 1e-5


def test_cli_reproduce_list(capsys):
    from dqdyn.cli import main

    assert main(["reproduce", "--list"]) == 0
    out = capsys.readouterr().out
    assert "Table 5.1" in out and "tree38_blackbox" in out and "unpublished" in out
