"""Who may talk to the viewer: its own page only.

A browser lets any web page open a WebSocket to ``ws://127.0.0.1:PORT`` (WebSockets are not
bound by the same-origin policy), and a page whose DNS name is re-pointed to 127.0.0.1 (DNS
rebinding) can even read plain HTTP answers from it.  The viewer therefore answers a request
only when

* its ``Host`` header names the viewer itself: ``localhost``, a loopback address, the address
  the connection arrived on, or the host the server was bound to, with the server's port (an IP
  literal cannot be re-pointed, and a rebinding page sends its own name); and
* its ``Origin`` header, when present, is one of the viewer's own origins
  (``http://<one of those hosts>:<port>``).

Anything else gets ``403 Forbidden`` before the WebSocket handshake, so no scene data is sent.
``allowed_origins`` widens this on purpose: each entry (``"http://myhost:8080"``) is accepted as
an ``Origin`` and its host as a ``Host``; ``"*"`` turns both checks off.

The check sits in the ``process_request`` hook of the ``websockets`` server that viser runs
(`install`): while the viewer starts viser, ``websockets.asyncio.server.serve`` is wrapped so
that the call made from viser gets the guarded hook; the wrapper is removed as soon as the
server is up.  If the hook could not be placed (another viser or websockets layout), the viewer
refuses to start rather than serve unguarded.
"""

from __future__ import annotations

import http
import ipaddress
import logging
import sys
import threading
from urllib.parse import urlsplit

_LOG = logging.getLogger("dqdyn.viz")
_START_LOCK = threading.Lock()
_DEFAULT_PORTS = {"http": 80, "https": 443, "ws": 80, "wss": 443}


def _split_host(value: str):
    """``(hostname, port or None)`` of a ``Host`` header value (``[v6]:port`` form too), or
    None when it does not parse."""
    value = value.strip()
    if not value or any(c in value for c in " \t/\\@?#"):
        return None
    if value.startswith("["):
        end = value.find("]")
        if end < 0:
            return None
        host, rest = value[1:end], value[end + 1:]
        if rest and not rest.startswith(":"):
            return None
        port = rest[1:] if rest else None
    else:
        host, sep, port = value.rpartition(":")
        if not sep:
            host, port = value, None
    if port is not None and not port.isdigit():
        return None
    return host.lower().rstrip("."), (int(port) if port is not None else None)


def _origin_key(origin: str):
    """``(scheme, host, port)`` of an origin / URL, default port filled in; None if malformed."""
    try:
        u = urlsplit(origin.strip())
        port = u.port
    except ValueError:
        return None
    if not u.scheme or not u.hostname:
        return None
    scheme = u.scheme.lower()
    return scheme, u.hostname.lower().rstrip("."), port if port is not None else _DEFAULT_PORTS.get(scheme)


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _literal(host: str) -> str:
    try:
        return str(ipaddress.ip_address(host.split("%")[0]))
    except ValueError:
        return host.lower()


class RequestGuard:
    """Decides whether an HTTP / WebSocket request may reach the viewer (see the module text).

    Parameters
    ----------
    bound_host:
        the address the server listens on (``"127.0.0.1"``, ``"0.0.0.0"``, a name, ...).
    allowed_origins:
        extra origins (``scheme://host[:port]``) to accept, or ``"*"`` to accept any.
    """

    def __init__(self, bound_host: str, allowed_origins=()):
        from dqdyn.errors import DqdynError

        if isinstance(allowed_origins, str):
            allowed_origins = [allowed_origins]
        self.allow_any = False
        self.extra = set()
        for o in allowed_origins or ():
            if o == "*":
                self.allow_any = True
                continue
            key = _origin_key(o) if isinstance(o, str) else None
            if key is None:
                raise DqdynError(f"allowed_origins: {o!r} is not an origin; expected "
                                 "'scheme://host[:port]' (e.g. 'http://myhost:8080') or '*'")
            self.extra.add(key)
        self.bound_host = (bound_host or "").lower()
        self.installed = False

    def _own_hosts(self, local_host: str | None) -> set:
        hosts = {"localhost", "127.0.0.1", "::1"}
        if self.bound_host:  # "0.0.0.0" too: the URL the viewer prints (an IP literal)
            hosts.add(_literal(self.bound_host))
        if local_host:
            hosts.add(_literal(str(local_host)))
        return hosts

    def refusal(self, headers, local_address) -> str | None:
        """Why a request with these headers, arriving at ``local_address`` (``(host, port, ...)``),
        is refused; None when it is accepted."""
        if self.allow_any:
            return None
        local_host = local_address[0] if local_address else None
        port = int(local_address[1]) if local_address and len(local_address) > 1 else None
        hosts = self._own_hosts(local_host)
        values = headers.get_all("Host") if hasattr(headers, "get_all") else [headers.get("Host")]
        values = [v for v in values if v is not None]
        if len(values) != 1:
            return "a request needs exactly one Host header"
        parsed = _split_host(values[0])
        if parsed is None:
            return f"malformed Host header {values[0]!r}"
        h, p = parsed
        p = 80 if p is None else p
        h = _literal(h)
        extra_hosts = {(eh, ep) for _, eh, ep in self.extra}
        if not ((_is_loopback(h) or h in hosts) and p == port) and (h, p) not in extra_hosts:
            return f"Host {values[0]!r} is not this viewer (expected localhost:{port})"
        origins = headers.get_all("Origin") if hasattr(headers, "get_all") else [headers.get("Origin")]
        origins = [o for o in origins if o is not None]
        if not origins:
            return None  # not sent by a web page (curl, a script): Host already checked
        if len(origins) > 1:
            return "more than one Origin header"
        key = _origin_key(origins[0])
        if key is None:
            return f"Origin {origins[0]!r} is not allowed"
        scheme, oh, op = key
        oh = _literal(oh)
        if key in self.extra or (scheme == "http" and op == port and (_is_loopback(oh) or oh in hosts)):
            return None
        return (f"Origin {origins[0]!r} is not allowed (this viewer's own page is "
                f"http://localhost:{port}; widen with allowed_origins / --allow-origin)")

    def wrap(self, inner):
        """A ``process_request(connection, request)`` hook that refuses with ``403`` what
        `refusal` refuses and otherwise hands over to ``inner`` (viser's file server)."""
        guard = self

        def process_request(connection, request):
            why = guard.refusal(request.headers, connection.local_address)
            if why is not None:
                _LOG.warning("dqdyn viewer: refused %s %s: %s", request.path, connection.remote_address, why)
                return connection.respond(http.HTTPStatus.FORBIDDEN, f"dqdyn viewer: {why}\n")
            return inner(connection, request) if inner is not None else None

        process_request.dqdyn_guard = guard
        return process_request


def install(make_server, guard: RequestGuard):
    """Run ``make_server()`` (which starts viser) with the guarded ``process_request`` hook put
    on the ``websockets`` server viser opens; return its result.  Raises
    `DqdynError` (after stopping the server) when no hook could be placed."""
    from websockets.asyncio import server as wss

    from dqdyn.errors import DqdynError

    with _START_LOCK:
        original = wss.serve

        def serve(*args, **kwargs):
            caller = sys._getframe(1).f_globals.get("__name__", "")
            if caller.split(".")[0] == "viser":
                kwargs["process_request"] = guard.wrap(kwargs.get("process_request"))
                guard.installed = True
            return original(*args, **kwargs)

        wss.serve = serve
        try:
            result = make_server()
        finally:
            wss.serve = original
    if not guard.installed:
        try:
            result.stop()
        finally:
            raise DqdynError(
                "Viewer: could not place the Origin / Host check on viser's server (this viser "
                "does not start it through websockets.asyncio.server.serve); refusing to serve "
                "the scene unguarded.  Install the viser version dqdyn[viz] names.")
    return result


__all__ = ["RequestGuard", "install"]
