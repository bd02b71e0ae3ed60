"""The core install: ``import dqdyn`` and the command line work without the extras, and a
feature whose extra is missing names it."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

BLOCK = textwrap.dedent("""
    import sys, importlib.abc
    class _Block(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path, target=None):
            if name.split('.')[0] in ('rich', 'matplotlib', 'mujoco', 'example_robot_data',
                                      'pinocchio', 'mkdocs'):
                raise ImportError(f"No module named {name!r}", name=name)
    sys.meta_path.insert(0, _Block())
""")


def _run(code: str, tmp_path):
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    return subprocess.run([sys.executable, "-c", BLOCK + textwrap.dedent(code)],
                          capture_output=True, text=True, env=env, cwd=tmp_path, timeout=600)


def test_core_dependencies_are_light():
    tomllib = pytest.importorskip("tomllib", reason="tomllib is in the standard library from Python 3.11")
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    core = " ".join(meta["dependencies"])
    for heavy in ("mujoco", "matplotlib", "rich", "pin", "example-robot-data"):
        assert heavy not in core.replace("urdfdom-py", ""), heavy
    extras = meta["optional-dependencies"]
    assert {"sim", "plot", "cli", "demo", "docs", "all", "test"} <= set(extras)
    assert any("mkdocs" in d for d in extras["docs"])
    assert any("docs" in d for d in extras["test"])  # CI builds the documentation


def test_import_and_cli_without_extras(tmp_path):
    r = _run("""
        import dqdyn, dqdyn.cli
        heavy = sorted({m.split('.')[0] for m in sys.modules} & {'rich', 'matplotlib', 'mujoco'})
        print('HEAVY', heavy)
        from dqdyn.cli import main
        assert main(['info', '--bundled', 'two_link_arm']) == 0
        assert main(['models', '--source', 'bundled']) == 0
        print('PLOT', main(['simulate', 'two_link_arm', '--duration', '0.01', '--plot', 'x.png']))
        print('DEMO', main(['demo', '--out', 'o']))
        from dqdyn.reproduce.mujoco_bridge import mujoco_from_model
        try:
            mujoco_from_model(dqdyn.load_example('two_link_arm'))
        except dqdyn.errors.MissingExtraError as e:
            print('SIM', e)
    """, tmp_path)
    assert r.returncode == 0, r.stderr
    out, err = r.stdout, r.stderr
    assert "HEAVY []" in out
    assert "shoulder" in out and "total mass" in out  # plain-text tables
    assert "PLOT 2" in out and 'dqdyn[plot]' in err
    assert "DEMO 2" in out and 'dqdyn[demo]' in err
    assert 'SIM' in out and 'pip install "dqdyn[sim]"' in out
    assert "Traceback" not in err
    assert not (tmp_path / "o").exists()  # nothing written before the check
