"""Headless Chromium for the viewer tests (Debian's ``chromium``), driven through the DevTools
protocol (the ``websockets`` package viser depends on): load a URL, wait until the viser client
says "Connected" and the rendered page has stopped changing, and take a PNG screenshot.  Waiting
on the page itself, not on a fixed time budget, keeps the test meaningful on a loaded machine."""

from __future__ import annotations

import base64
import itertools
import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import urllib.request

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--use-angle=swiftshader", "--enable-unsafe-swiftshader", "--hide-scrollbars",
         "--remote-debugging-port=0", "--remote-allow-origins=*"]


def chromium() -> str | None:
    for c in ("/usr/bin/chromium", shutil.which("chromium") or "", shutil.which("chromium-browser") or ""):
        if c and os.access(c, os.X_OK):
            return c
    return None


class _CDP:
    def __init__(self, ws_url):
        from websockets.sync.client import connect

        self.ws = connect(ws_url, max_size=None, open_timeout=60)
        self.ids = itertools.count(1)

    def call(self, method, timeout=120, **params):
        i = next(self.ids)
        self.ws.send(json.dumps({"id": i, "method": method, "params": params}))
        end = time.time() + timeout
        while True:
            msg = json.loads(self.ws.recv(timeout=max(1.0, end - time.time())))
            if msg.get("id") == i:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return msg.get("result", {})

    def close(self):
        self.ws.close()


class Page:
    """A viser page open in headless Chromium: ``with Page(url) as p: p.capture("a.png")``."""

    def __init__(self, url: str, *, size=(800, 560), timeout: float = 400.0):
        self.url, self.size, self.end = url, size, time.time() + timeout
        # chromium's helper processes (crashpad, GPU, renderers) may still write into the profile
        # for a moment after the browser exits; its removal must not fail the test
        self._profile = tempfile.TemporaryDirectory(ignore_cleanup_errors=True)
        self.proc, self.cdp = None, None

    def __enter__(self):
        exe = chromium()
        if exe is None:
            raise FileNotFoundError("chromium")
        profile = self._profile.name
        self.proc = subprocess.Popen([exe, *FLAGS, f"--user-data-dir={profile}",
                                      f"--window-size={self.size[0]},{self.size[1]}", "about:blank"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                     start_new_session=True)
        try:
            port_file = os.path.join(profile, "DevToolsActivePort")
            while not os.path.exists(port_file) or not open(port_file).read().strip():
                if time.time() > self.end or self.proc.poll() is not None:
                    raise RuntimeError("chromium did not open its DevTools port")
                time.sleep(0.2)
            port = int(open(port_file).read().split()[0])
            targets = json.load(urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=60))
            page = next(t for t in targets if t.get("type") == "page")
            self.cdp = _CDP(page["webSocketDebuggerUrl"])
            self.cdp.call("Page.enable")
            self.cdp.call("Emulation.setDeviceMetricsOverride", width=self.size[0], height=self.size[1],
                          deviceScaleFactor=1, mobile=False)
            self.cdp.call("Page.navigate", url=self.url)
            while True:
                r = self.cdp.call("Runtime.evaluate", expression="document.body ? document.body.innerText : ''")
                if "Connected" in r.get("result", {}).get("value", ""):
                    break
                if time.time() > self.end:
                    raise RuntimeError("the viser client never connected")
                time.sleep(0.5)
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def capture(self, out: str, *, frames: int = 30) -> None:
        """Render frames until two screenshots in a row are identical (at most 8), write a PNG."""
        js = (f"new Promise(r => {{ let n = 0; const f = () => (++n >= {frames:d} ? r(n) : "
              "requestAnimationFrame(f)); requestAnimationFrame(f); })")
        last = png = None
        for _ in range(8):
            self.cdp.call("Runtime.evaluate", expression=js, awaitPromise=True,
                          timeout=max(10.0, self.end - time.time()))
            png = self.cdp.call("Page.captureScreenshot", format="png")["data"]
            if png == last or time.time() > self.end:
                break
            last = png
        with open(out, "wb") as f:
            f.write(base64.b64decode(png))

    def __exit__(self, *exc):
        if self.cdp is not None:
            self.cdp.close()
        if self.proc is not None:
            # the browser and every helper it started (one process group of its own)
            _signal_group(self.proc, signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                pass
            _signal_group(self.proc, signal.SIGKILL)
            self.proc.wait()
        self._profile.cleanup()  # (ignore_cleanup_errors: a dying helper's last file stays in tmp)


def _signal_group(proc, sig) -> None:
    try:
        os.killpg(proc.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def screenshot(url: str, out: str, **kw) -> None:
    """One PNG of ``url`` (a :class:`Page` opened and closed)."""
    with Page(url, **kw) as p:
        p.capture(out)


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now (for a viewer under test)."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port
