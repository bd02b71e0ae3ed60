"""The viewer answers only its own page: a WebSocket handshake or an HTTP request whose ``Origin``
is another web page, or whose ``Host`` is not the viewer (DNS rebinding), gets ``403`` and none
of the scene; the viewer's own origin gets the scene.  Driven with raw sockets, so the headers
are exactly the forged ones a browser would send for a hostile page."""

from __future__ import annotations

import base64
import os
import socket
import sys
import time

import pytest

viser = pytest.importorskip("viser")

import dqdyn  # noqa: E402
from dqdyn.errors import DqdynError  # noqa: E402
from dqdyn.viz import Viewer  # noqa: E402
from dqdyn.viz._guard import RequestGuard  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "viz"))
from _browser import free_port as _port  # noqa: E402


@pytest.fixture(scope="module")
def viewer():
    model = dqdyn.ModelBuilder("guarded_arm")
    model.add_body("upper_link_marker", mass=1.0, inertia=(0.01, 0.01, 0.01), xyz=(0, 0, 0.1))
    v = Viewer(model.build(), port=_port())
    yield v
    v.close()


def _exchange(port, host_header, origin=None, websocket=True, seconds=3.0):
    """Send one request; return (status line, every byte received until close or ``seconds``)."""
    lines = ["GET / HTTP/1.1", f"Host: {host_header}"]
    if websocket:
        lines += ["Upgrade: websocket", "Connection: Upgrade",
                  "Sec-WebSocket-Key: " + base64.b64encode(os.urandom(16)).decode(),
                  "Sec-WebSocket-Version: 13", f"Sec-WebSocket-Protocol: viser-v{viser.__version__}"]
    if origin is not None:
        lines.append(f"Origin: {origin}")
    data = b""
    with socket.create_connection(("127.0.0.1", port), timeout=seconds) as s:
        s.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
        t0 = time.monotonic()
        while time.monotonic() - t0 < seconds:
            try:
                chunk = s.recv(65536)
            except TimeoutError:
                break
            if not chunk:
                break
            data += chunk
            head, sep, body = data.partition(b"\r\n\r\n")
            if websocket and sep and len(body) > 512:
                break
    return data.split(b"\r\n", 1)[0].decode("latin-1"), data


def _scene_frames(data):
    """The WebSocket payload bytes after the handshake (viser sends the scene as binary frames;
    its messages are compressed, so the bytes are counted, not searched)."""
    head, sep, body = data.partition(b"\r\n\r\n")
    if b" 101 " not in head.split(b"\r\n", 1)[0] + b" " or not body:
        return b""
    assert body[0] & 0x0F == 0x2, body[:4]  # a binary frame
    return body


@pytest.mark.parametrize("host,origin", [
    ("127.0.0.1:{p}", "http://attacker.example"),          # a hostile page, genuine Host
    ("localhost:{p}", "http://attacker.example:{p}"),
    ("127.0.0.1:{p}", "null"),                             # sandboxed frame / file:// page
    ("127.0.0.1:{p}", "http://127.0.0.1:{q}"),             # another local server's page
    ("attacker.example:{p}", "http://attacker.example:{p}"),  # DNS rebinding
    ("attacker.example:{p}", None),
    ("127.0.0.1:{q}", None),                               # wrong port
    ("", None),
])
def test_forged_origin_or_host_gets_no_scene(viewer, host, origin):
    p = viewer.server.get_port()
    q = p + 1
    status, data = _exchange(p, host.format(p=p, q=q), origin and origin.format(p=p, q=q))
    assert " 403 " in status + " ", status
    assert _scene_frames(data) == b""
    assert data.partition(b"\r\n\r\n")[2].startswith(b"dqdyn viewer: ")


@pytest.mark.parametrize("host,origin", [
    ("127.0.0.1:{p}", "http://127.0.0.1:{p}"),
    ("localhost:{p}", "http://localhost:{p}"),
    ("127.0.0.1:{p}", None),                               # a script, not a web page
])
def test_the_viewers_own_page_gets_the_scene(viewer, host, origin):
    p = viewer.server.get_port()
    status, data = _exchange(p, host.format(p=p), origin and origin.format(p=p))
    assert " 101 " in status + " ", status
    assert len(_scene_frames(data)) > 512


def test_plain_http_is_guarded_too(viewer):
    p = viewer.server.get_port()
    status, _ = _exchange(p, f"127.0.0.1:{p}", websocket=False, seconds=2)
    assert " 200 " in status + " "
    status, data = _exchange(p, f"rebound.attacker.example:{p}", websocket=False, seconds=2)
    assert " 403 " in status + " " and b"<html" not in data.lower()


def test_allowed_origins_widen_on_purpose():
    model = dqdyn.ModelBuilder("wide")
    model.add_body("wide_link_marker", mass=1.0, inertia=(0.01, 0.01, 0.01))
    port = _port()
    v = Viewer(model.build(), port=port, allowed_origins=[f"http://viewer.lan.example:{port}"])
    try:
        p = v.server.get_port()
        status, data = _exchange(p, f"viewer.lan.example:{p}", f"http://viewer.lan.example:{p}")
        assert " 101 " in status + " " and len(_scene_frames(data)) > 512
        status, _ = _exchange(p, f"127.0.0.1:{p}", "http://attacker.example")
        assert " 403 " in status + " "
    finally:
        v.close()


def test_guard_rules_and_bad_allowed_origins():
    g = RequestGuard("127.0.0.1")
    H = lambda **kw: {k.replace("_", "-").title(): val for k, val in kw.items()}  # noqa: E731
    local = ("127.0.0.1", 8080)
    assert g.refusal(H(host="[::1]:8080", origin="http://[::1]:8080"), ("::1", 8080, 0, 0)) is None
    assert g.refusal(H(host="127.0.0.1:8080", origin="https://127.0.0.1:8080"), local)  # not ours
    assert g.refusal(H(host="localhost.:8080"), local) is None  # trailing dot is the same name
    assert g.refusal(H(host="127.0.0.1:8080@attacker.example"), local)
    assert g.refusal(H(host="10.0.0.5:8080"), ("10.0.0.5", 8080)) is None  # the address it came in on
    assert RequestGuard("0.0.0.0").refusal(H(host="0.0.0.0:8080", origin="http://0.0.0.0:8080"), local) is None
    assert g.refusal(H(host="0.0.0.0:8080"), local)  # not what this one was bound to
    assert RequestGuard("127.0.0.1", "*").refusal(H(host="x:1", origin="http://y"), local) is None
    with pytest.raises(DqdynError, match="allowed_origins"):
        RequestGuard("127.0.0.1", ["attacker.example"])


def test_no_hook_no_viewer():
    """If viser were started without going through the hooked server call, the viewer would
    refuse to run (stopping what was started) rather than serve unguarded."""
    from dqdyn.viz._guard import install

    class Started:
        stopped = False

        def stop(self):
            Started.stopped = True

    with pytest.raises(DqdynError, match="unguarded"):
        install(Started, RequestGuard("127.0.0.1"))
    assert Started.stopped


def test_view_command_passes_allow_origin_and_allow_outside(monkeypatch, capsys):
    """``dqdyn view --allow-origin ... --allow-outside`` reaches the viewer; without them, the
    defaults are the closed ones."""
    import dqdyn.viz.viewer as vw
    from dqdyn.cli import main

    seen = []
    real_init = vw.Viewer.__init__

    def spy(self, model, **kw):
        seen.append(kw)
        real_init(self, model, **kw)

    monkeypatch.setattr(vw.Viewer, "__init__", spy)
    assert main(["view", "two_link_arm", "--port", str(_port()), "--seconds", "0.1"]) == 0
    assert main(["view", "two_link_arm", "--port", str(_port()), "--seconds", "0.1",
                 "--allow-origin", "http://mybox.example:9000", "--allow-outside"]) == 0
    assert seen[0]["allowed_origins"] == [] and seen[0]["allow_outside"] is False
    assert seen[1]["allowed_origins"] == ["http://mybox.example:9000"] and seen[1]["allow_outside"] is True
