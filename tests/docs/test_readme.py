"""The README's Quickstart runs verbatim (every line), and says what it claims."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from dqdyn.errors import MissingExtraError, ModelError

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
    if 'load_urdf("panda.urdf")' in code:  # the pre-issue-16 block (a file nobody has)
        pytest.skip("README.md still has the old Quickstart; readme/issue-16.md has the new one")
    ns: dict = {"__name__": "__quickstart__"}
    try:
        exec(compile(code, "README.md:Quickstart", "exec"), ns)  # noqa: S102 - the README's own code
    except MissingExtraError as e:  # example-robot-data not installed (it is in the test extra)
        pytest.skip(str(e))
    except ModelError as e:
        if "mimic" in str(e) and "aba" in str(e):
            pytest.xfail("aba does not accept models with mimic joints yet (fix pending): " + str(e))
        raise
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


def test_setup_block_uses_the_demo_extra_and_no_double_quiet():
    code = section_code("Set up", "bash")
    if "pip install -e . && dqdyn demo" in code:  # the pre-issue-16 block
        pytest.skip("README.md still has the old Set up block; see readme/issue-16.md")
    first = code.strip().splitlines()[0]
    assert "dqdyn demo" in first and "[demo]" in first  # one line installs what the demo needs
    pyproject = (README.parent / "pyproject.toml").read_text()
    addopts_q = re.search(r'addopts\s*=\s*"[^"]*-q', pyproject) is not None
    test_line = next(ln for ln in code.splitlines() if "pytest" in ln)
    # -q on the command line plus addopts -q is -qq, which hides pytest's summary line
    assert not (addopts_q and re.search(r"pytest\s[^#]*-q\b", test_line))
