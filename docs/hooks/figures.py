"""mkdocs hook: (re)draws the documentation's figures when the site builds.

Each entry of `FIGURES` is a script (from examples/ or docs/figures/) and the arguments of its fast
mode; it writes one PNG.  `on_pre_build` runs them all (two at a time) into a scratch folder and
fails the build, naming the script and showing its output, when one fails.  The fresh figures
then replace those in docs/figures/ (only files whose bytes changed, so ``mkdocs serve`` does not
rebuild in a loop) and, in `on_post_build`, those in the built site.

``DQDYN_DOCS_FIGURES`` chooses where they go: unset or ``source`` — docs/figures/ and the site;
``site`` — the built site only (the source tree is left alone: tests/docs/conftest.py builds so);
``off`` — no figure is drawn (the committed PNGs are shown).  The scripts run in their full mode
(the committed figures' settings, about 15 s in all on two cores) except with ``site`` or with
``DQDYN_DOCS_FIGURES_QUICK=1``, where each runs in its fast mode.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from mkdocs.exceptions import PluginError

ROOT = Path(__file__).resolve().parents[2]
FIGDIR = ROOT / "docs" / "figures"

# (figure, script, fast-mode arguments); each script takes --out PATH
FIGURES = [
    ("conventions.png", "docs/figures/make_conventions.py", []),
    ("trajectory_so3.png", "docs/figures/make_trajectory.py", ["--quick"]),
    ("simulate_arm.png", "docs/figures/make_simulate_arm.py", ["--quick"]),
    ("elastic_tracking.png", "docs/figures/make_elastic_tracking.py", ["--quick"]),
    ("legged_trot.png", "examples/quadruped_trot.py", ["--quick"]),
    ("legged_double_support.png", "examples/humanoid_double_support.py", ["--quick"]),
]

_scratch: Path | None = None


def _mode() -> str:
    mode = os.environ.get("DQDYN_DOCS_FIGURES", "source").strip().lower() or "source"
    if mode not in ("source", "site", "off"):
        raise PluginError(f"DQDYN_DOCS_FIGURES must be 'source', 'site' or 'off'; got {mode!r}")
    return mode


def _draw(entry, out: Path):
    name, script, quick = entry
    args = quick if _mode() == "site" or os.environ.get("DQDYN_DOCS_FIGURES_QUICK") == "1" else []
    env = dict(os.environ, MPLBACKEND="Agg", PYTHONPATH=os.pathsep.join(
        [str(ROOT / "src"), *filter(None, [os.environ.get("PYTHONPATH")])]))
    t0 = time.perf_counter()
    r = subprocess.run([sys.executable, str(ROOT / script), *args, "--out", str(out / name)],
                       cwd=out, env=env, capture_output=True, text=True, timeout=300)
    return name, script, r, time.perf_counter() - t0


def on_pre_build(config) -> None:
    global _scratch
    if _mode() == "off":
        return
    _scratch = Path(tempfile.mkdtemp(prefix="dqdyn-figures-"))
    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(lambda e: _draw(e, _scratch), FIGURES))
    for name, script, r, _ in results:
        if r.returncode != 0 or not (_scratch / name).exists():
            shutil.rmtree(_scratch, ignore_errors=True)
            _scratch = None
            raise PluginError(
                f"docs/hooks/figures.py: {script} failed to draw {name} (exit {r.returncode}):\n"
                f"{(r.stdout + r.stderr)[-3000:]}")
    if _mode() == "source":
        for name, *_ in results:
            new, old = _scratch / name, FIGDIR / name
            if not old.exists() or old.read_bytes() != new.read_bytes():
                shutil.copyfile(new, old)


def on_post_build(config) -> None:
    global _scratch
    if _scratch is None:
        return
    dest = Path(config["site_dir"]) / "figures"
    dest.mkdir(parents=True, exist_ok=True)
    for name, *_ in FIGURES:
        shutil.copyfile(_scratch / name, dest / name)
    shutil.rmtree(_scratch, ignore_errors=True)
    _scratch = None
