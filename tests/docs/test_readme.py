"""The README's Quickstart runs verbatim (every line), and says what it claims."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from dqdyn.errors import MissingExtraError

README = Path(__file__).resolve().parents[2] / "README.md"


def section_code(title: str, lang: str = "python") -> str:
    """The first ```lang block under the ``## title`` heading of README.md."""
    text = README.read_text(encoding="utf-8")
    m = re.search(rf"^## {re.escape(title)}\b.*?$(.*?)(?=^## |\Z)", text, re.M | re.S)
    assert m, f"README.md has no '## {title}' section"
    b = re.search(rf"^```{lang}\n(.*?)^```", m.group(1), re.M | re.S)
    assert b, f"README.md '## {title}' has no ```{lang} block"
    return b.group(1)


def test_quickstart_runs_verbatim(capsys):
    code = section_code("Quickstart")
    ns: dict = {"__name__": "__quickstart__"}
    try:
        exec(compile(code, "README.md:Quickstart", "exec"), ns)  # noqa: S102 - the README's own code
    except MissingExtraError as e:  # example-robot-data not installed (it is in the test extra)
        pytest.skip(str(e))
    out = capsys.readouterr().out
    assert "panda" in out and "jaco6" in out  # list_models() printed both sources
    model = ns["model"]
    nv = model.nv
    # oracles: ABA inverts RNEA; M symmetric positive definite; a unit dual quaternion
    np.testing.assert_allclose(ns["qdd"], ns["a"], atol=1e-9)
    M = ns["M"]
    assert M.shape == (nv, nv)
    np.testing.assert_allclose(M, M.T, atol=1e-12)
    assert np.linalg.eigvalsh(M).min() > 0
    x = np.asarray(ns["x"])
    assert x.shape == (8,)
    assert np.dot(x[:4], x[:4]) == pytest.approx(1.0, abs=1e-12)
    assert np.dot(x[:4], x[4:]) == pytest.approx(0.0, abs=1e-12)
    assert ns["TAU"].shape == (100_000, nv)
    # the batch agrees with single calls
    Q = ns["Q"]
    import dqdyn

    z = np.zeros(nv)
    np.testing.assert_array_equal(ns["TAU"][7], dqdyn.rnea(model, Q[7], z, z))


def test_install_block_clones_installs_the_demo_extra_and_names_the_test_command():
    code = section_code("Install", "bash")
    lines = code.strip().splitlines()
    first = lines[0]
    assert first.startswith("git clone ") and '[demo]"' in first  # one line installs what the demo needs
    assert any(ln.split("#")[0].strip() == "dqdyn demo" for ln in lines)
    assert any(ln.split("#")[0].strip() == "bash .ci/run" for ln in lines)
    ci = (README.parent / ".ci" / "run").read_text()
    test_line = next(ln for ln in ci.splitlines() if "pytest" in ln)
    assert "-n auto" in test_line  # what the README says .ci/run runs
    pyproject = (README.parent / "pyproject.toml").read_text()
    addopts_q = re.search(r'addopts\s*=\s*"[^"]*-q', pyproject) is not None
    # -q on the command line plus addopts -q is -qq, which hides pytest's summary line
    assert not (addopts_q and re.search(r"pytest\s[^#]*-q\b", test_line))


def test_every_extra_of_pyproject_is_in_the_install_table():
    tomllib = pytest.importorskip("tomllib", reason="tomllib is in the standard library from Python 3.11")

    extras = tomllib.loads((README.parent / "pyproject.toml").read_text())["project"][
        "optional-dependencies"]
    text = README.read_text(encoding="utf-8")
    for name in extras:
        assert f"| `{name}` |" in text, name


def test_readme_stays_a_front_door():
    assert len(README.read_text(encoding="utf-8").splitlines()) <= 300
