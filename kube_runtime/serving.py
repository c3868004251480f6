"""The manager's small HTTP servers: ``/metrics`` and the ``/healthz`` / ``/readyz`` probes.

Bind addresses follow controller-runtime: ``":8080"`` (all interfaces), ``"127.0.0.1:8080"``,
port ``0`` picks a free port (read it back from :attr:`EndpointServer.address`), and ``"0"`` or
``""`` disables the server. A probe answers 200 ``ok`` when every check passes and 500 listing
the failing checks otherwise; ``?verbose`` lists every check, as kube-apiserver does.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

from kube_runtime import clock
from kube_runtime.metrics import exposition

__all__ = [
    "Check",
    "EndpointServer",
    "parse_bind_address",
]

log = logging.getLogger(__name__)

_POLL_INTERVAL = 0.05
"""Seconds between the serving thread's checks for :meth:`EndpointServer.stop` (socketserver's
default of 0.5 s made every manager's shutdown wait up to half a second)."""

Check = Callable[[], None]
"""A health check: returns normally when healthy, raises with the reason otherwise."""


def parse_bind_address(address: str) -> tuple[str, int] | None:
    """``":8080"`` -> ("0.0.0.0", 8080); ``"0"`` / ``""`` -> None (disabled)."""
    if address in ("", "0"):
        return None
    host, sep, port = address.rpartition(":")
    if not sep or not port.isdigit():
        raise ValueError(f"bind address {address!r} must look like ':8080' or '127.0.0.1:8080'")
    return (host or "0.0.0.0", int(port))


class EndpointServer:
    """Serves any of /metrics, /healthz, /readyz on one address."""

    def __init__(
        self,
        address: tuple[str, int],
        *,
        metrics: bool = False,
        healthz: dict[str, Check] | None = None,
        readyz: dict[str, Check] | None = None,
    ) -> None:
        self._routes: dict[str, Callable[[str], tuple[int, bytes, str]]] = {}
        if metrics:
            self._routes["/metrics"] = lambda q: (
                200,
                exposition(),
                "text/plain; version=0.0.4; charset=utf-8",
            )
        if healthz is not None:
            self._routes["/healthz"] = lambda q: _run_checks(healthz, "verbose" in q)
        if readyz is not None:
            self._routes["/readyz"] = lambda q: _run_checks(readyz, "verbose" in q)
        routes = self._routes

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                url = urlsplit(self.path)
                route = routes.get(url.path.rstrip("/") or "/")
                if route is None:
                    code, body, ctype = 404, b"404 page not found\n", "text/plain"
                else:
                    code, body, ctype = route(url.query)
                self.send_response(code)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: object) -> None:
                log.debug("%s " + format, self.address_string(), *args)

        self._server = ThreadingHTTPServer(address, Handler)
        self._server.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def address(self) -> tuple[str, int]:
        host, port = self._server.server_address[:2]
        return (str(host), int(port))

    def start(self) -> None:
        """Serve on a daemon thread. It is started outside any simulated clock
        (:func:`kube_runtime.clock.start_detached`): it blocks on its socket and acts only on
        requests, whose senders count as running until answered."""
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": _POLL_INTERVAL},
            name="kube-runtime-http",
            daemon=True,
        )
        clock.start_detached(self._thread)

    def stop(self) -> None:
        """Stop serving (within :data:`_POLL_INTERVAL`) and close the socket."""
        self._server.shutdown()
        self._server.server_close()


def _run_checks(checks: dict[str, Check], verbose: bool) -> tuple[int, bytes, str]:
    lines, failed = [], []
    for name, check in checks.items():
        try:
            check()
            lines.append(f"[+]{name} ok")
        except Exception as e:
            failed.append(name)
            lines.append(f"[-]{name} failed: {e}")
    if failed:
        body = "\n".join(lines) + f"\n{len(failed)} check(s) failed\n"
        return 500, body.encode(), "text/plain; charset=utf-8"
    body = ("\n".join(lines) + "\nok\n") if verbose else "ok"
    return 200, body.encode(), "text/plain; charset=utf-8"
