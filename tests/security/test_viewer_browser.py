"""The attack itself, in a real browser (headless Chromium): a hostile page on another origin, and a
DNS-rebound name for the viewer's own port, both try to open the viewer's WebSocket; neither
gets it, while the same script on the viewer's own page does.  ``attacker.example`` is pointed
at 127.0.0.1 by Chromium's host-resolver rules, which is what DNS rebinding achieves."""

from __future__ import annotations

import http.server
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

import pytest

viser = pytest.importorskip("viser")

import dqdyn  # noqa: E402
from dqdyn.viz import Viewer  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "viz"))
from _browser import _CDP, FLAGS, _signal_group, chromium  # noqa: E402
from _browser import free_port as _port

PROBE = """new Promise(done => {
  let opened = false, bytes = 0;
  const ws = new WebSocket("ws://127.0.0.1:%d/", ["viser-v%s"]);
  ws.binaryType = "arraybuffer";
  ws.onopen = () => { opened = true; };
  ws.onmessage = e => { bytes += e.data.byteLength; if (bytes > 512) { ws.close(); } };
  ws.onclose = () => done(JSON.stringify({opened, bytes}));
  setTimeout(() => done(JSON.stringify({opened, bytes, timeout: true})), 30000);
})"""




class _Browser:
    def __init__(self, rules):
        self.profile = tempfile.TemporaryDirectory(ignore_cleanup_errors=True)
        self.proc = subprocess.Popen([chromium(), *FLAGS, f"--user-data-dir={self.profile.name}",
                                      f"--host-resolver-rules={rules}", "about:blank"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                     start_new_session=True)
        port_file = os.path.join(self.profile.name, "DevToolsActivePort")
        end = time.time() + 120
        while not os.path.exists(port_file) or not open(port_file).read().strip():
            if time.time() > end or self.proc.poll() is not None:
                self.close()
                raise RuntimeError("chromium did not open its DevTools port")
            time.sleep(0.2)
        port = int(open(port_file).read().split()[0])
        targets = json.load(urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=60))
        self.cdp = _CDP(next(t for t in targets if t.get("type") == "page")["webSocketDebuggerUrl"])
        self.cdp.call("Page.enable")

    def open(self, url):
        self.cdp.call("Page.navigate", url=url)
        end = time.time() + 60
        while self.eval("document.readyState") != "complete" and time.time() < end:
            time.sleep(0.2)

    def eval(self, js, promise=False):
        r = self.cdp.call("Runtime.evaluate", expression=js, awaitPromise=promise, timeout=90)
        return r.get("result", {}).get("value")

    def close(self):
        if getattr(self, "cdp", None) is not None:
            self.cdp.close()
        _signal_group(self.proc, 15)
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            _signal_group(self.proc, 9)
            self.proc.wait()
        self.profile.cleanup()


@pytest.mark.slow
def test_hostile_and_rebound_pages_cannot_open_the_viewer_socket(tmp_path):
    if chromium() is None:
        pytest.skip("Debian's chromium is not installed (.ci/run installs it with apt-get where it can)")
    b = dqdyn.ModelBuilder("browser_target")
    b.add_body("l1", mass=1.0, inertia=(0.01, 0.01, 0.01))
    v = Viewer(b.build(), port=_port())
    vp = v.server.get_port()
    (tmp_path / "attack.html").write_text("<html><body>attacker</body></html>")
    handler = lambda *a, **kw: http.server.SimpleHTTPRequestHandler(*a, directory=str(tmp_path), **kw)  # noqa: E731
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    ap = httpd.server_address[1]
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    br = None
    try:
        br = _Browser("MAP attacker.example 127.0.0.1")
        probe = PROBE % (vp, viser.__version__)
        # 1. a hostile page on another origin
        br.open(f"http://attacker.example:{ap}/attack.html")
        assert br.eval("document.body.innerText") == "attacker"
        hostile = json.loads(br.eval(probe, promise=True))
        # 2. the viewer's own port under the attacker's name (DNS rebinding)
        br.open(f"http://attacker.example:{vp}/")
        rebound_text = br.eval("document.body ? document.body.innerText : ''")
        rebound = json.loads(br.eval(probe, promise=True))
        # 3. control: the same script on the viewer's own page
        br.open(f"http://127.0.0.1:{vp}/")
        own = json.loads(br.eval(probe, promise=True))
    finally:
        if br is not None:
            br.close()
        httpd.shutdown()
        v.close()
    assert hostile["opened"] is False and hostile["bytes"] == 0, hostile
    assert "dqdyn viewer:" in rebound_text and "Host" in rebound_text, rebound_text
    assert rebound["opened"] is False and rebound["bytes"] == 0, rebound
    assert own["opened"] is True and own["bytes"] > 512, own
