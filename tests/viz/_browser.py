"""Headless Chromium for the viewer tests: a screenshot of a URL (Debian's ``chromium``)."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--use-angle=swiftshader", "--enable-unsafe-swiftshader", "--hide-scrollbars"]


def chromium() -> str | None:
    for c in ("/usr/bin/chromium", shutil.which("chromium") or "", shutil.which("chromium-browser") or ""):
        if c and os.access(c, os.X_OK):
            return c
    return None


def screenshot(url: str, out: str, *, size=(1000, 700), budget_ms: int = 8000, timeout: float = 120) -> None:
    """Load ``url`` in headless Chromium (software WebGL), wait ``budget_ms`` of page time, and
    write a PNG to ``out``."""
    exe = chromium()
    if exe is None:
        raise FileNotFoundError("chromium")
    with tempfile.TemporaryDirectory() as profile:
        cmd = [exe, *FLAGS, f"--user-data-dir={profile}", f"--window-size={size[0]},{size[1]}",
               f"--virtual-time-budget={budget_ms}", f"--screenshot={out}", url]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if r.returncode != 0 or not os.path.exists(out):
        raise RuntimeError(f"chromium failed ({r.returncode}): {r.stderr[-2000:]}")
