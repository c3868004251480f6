"""The HTTPS server of a manager's webhooks (controller-runtime ``webhook.DefaultServer``).

A :class:`Server` is a runnable: ``manager.add(server)`` runs it with the manager, on every
replica (``need_leader_election = False``: webhooks answer whether or not this replica
leads). Options follow controller-runtime's ``webhook.Options``: ``port`` (default 9443; 0 picks
a free one, see :meth:`Server.bind`), ``host`` (default all interfaces), ``cert_dir`` holding
``cert_name`` (``tls.crt``) and ``key_name`` (``tls.key``) -- by default
``$TMPDIR/k8s-webhook-server/serving-certs`` -- and an optional ``client_ca_name`` whose CA
must have signed the client's certificate. The certificate is reloaded when the files change
(:class:`~kube_runtime.webhook._certwatcher.CertWatcher`, polled every ``cert_poll_interval``).

Paths are registered with :meth:`Server.register` (duplicates are refused, as
controller-runtime panics on them); a request for another path gets 404. Each connection is
served on its own thread, HTTP/1.1 with keep-alive; the TLS handshake happens on that thread
(a slow client does not hold up others) and a connection idle for ``idle_timeout`` seconds
is closed. :meth:`Server.started_check` is a readiness check (``manager.add_readyz_check``).

The server's events and the certificate polls run on its :class:`~kube_runtime.clock.Clock`
(``clock=``; None: the clock current when the server is made). The socket-serving thread
starts outside any simulation (:func:`kube_runtime.clock.start_detached`): it acts only on
requests, whose senders count as running until answered.
"""

from __future__ import annotations

import logging
import os
import socket
import ssl
import tempfile
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from kube_runtime.clock import Clock, resolve, start_detached
from kube_runtime.webhook._certwatcher import DEFAULT_INTERVAL, CertWatcher
from kube_runtime.webhook._conversion import Conversions
from kube_runtime.webhook._endpoint import MAX_REQUEST_BYTES, ConversionEndpoint, Endpoint
from kube_runtime.webhook._registration import CONVERT_PATH, Registration

__all__ = ["DEFAULT_CERT_DIR", "DEFAULT_PORT", "Server"]

log = logging.getLogger(__name__)

DEFAULT_PORT = 9443
"""controller-runtime's ``webhook.DefaultPort``."""
DEFAULT_CERT_DIR = Path(tempfile.gettempdir()) / "k8s-webhook-server" / "serving-certs"
"""Where the certificate is looked for without ``cert_dir`` (as controller-runtime)."""


class _BodyTooLarge(Exception):
    pass


class _BadFraming(Exception):
    pass


def _read_chunked(rfile: Any, limit: int) -> bytes:
    """A chunked body (trailers skipped); :class:`_BodyTooLarge` past ``limit`` bytes."""
    parts: list[bytes] = []
    total = 0
    while True:
        line = rfile.readline(1026)
        size_text = line.split(b";", 1)[0].strip()
        try:
            size = int(size_text, 16)
        except ValueError as e:
            raise _BadFraming("bad chunk size") from e
        if size == 0:
            break
        total += size
        if total > limit:
            raise _BodyTooLarge
        parts.append(rfile.read(size))
        rfile.readline(3)  # the CRLF after the chunk
    while rfile.readline(8194) not in (b"\r\n", b"\n", b""):
        pass
    return b"".join(parts)


class _TLSHTTPServer(ThreadingHTTPServer):
    """Wraps each accepted connection with the current TLS context (no I/O yet)."""

    daemon_threads = True
    request_queue_size = 128

    def __init__(
        self,
        address: tuple[str, int],
        handler: type[BaseHTTPRequestHandler],
        context: Callable[[], ssl.SSLContext | None],
    ) -> None:
        if ":" in address[0]:
            self.address_family = socket.AF_INET6
        self._context = context
        super().__init__(address, handler)

    def get_request(self) -> tuple[Any, Any]:
        sock, addr = self.socket.accept()
        context = self._context()
        if context is None:  # not started: refuse
            sock.close()
            raise OSError("webhook server is not serving yet")
        return context.wrap_socket(sock, server_side=True, do_handshake_on_connect=False), addr

    def handle_error(self, request: Any, client_address: Any) -> None:
        # Failed handshakes, clients gone, timeouts: not the server's problem.
        log.debug("webhook connection from %s failed", client_address, exc_info=True)


class Server:
    """See the module docstring."""

    need_leader_election = False

    def __init__(
        self,
        *,
        host: str = "",
        port: int = DEFAULT_PORT,
        cert_dir: str | os.PathLike[str] | None = None,
        cert_name: str = "tls.crt",
        key_name: str = "tls.key",
        client_ca_name: str | None = None,
        cert_poll_interval: float = DEFAULT_INTERVAL,
        idle_timeout: float = 120.0,
        clock: Clock | None = None,
    ) -> None:
        self._clock = resolve(clock, "webhook.Server")
        self.host = host
        self.port = port
        self.cert_dir = Path(cert_dir) if cert_dir is not None else DEFAULT_CERT_DIR
        self.cert_name = cert_name
        self.key_name = key_name
        self.client_ca_name = client_ca_name
        self.cert_poll_interval = cert_poll_interval
        self.idle_timeout = idle_timeout
        self.conversions = Conversions()
        self._routes: dict[str, Endpoint] = {}
        self._registrations: list[Registration] = []
        self._lock = threading.Lock()
        self._http: _TLSHTTPServer | None = None
        self._watcher: CertWatcher | None = None
        self._started = self._clock.event()

    def __repr__(self) -> str:
        return f"webhook.Server(port={self.port}, cert_dir={str(self.cert_dir)!r})"

    # --- registration --------------------------------------------------------------------------
    def register(
        self, path: str, endpoint: Endpoint, registration: Registration | None = None
    ) -> None:
        """Serve ``endpoint`` at ``path`` (also while running); ``registration`` describes it
        for the generated configuration. A path already served is a ValueError."""
        if not path.startswith("/"):
            raise ValueError(f"webhook path {path!r} must start with '/'")
        with self._lock:
            if path in self._routes:
                raise ValueError(f"can't register duplicate path: {path}")
            self._routes[path] = endpoint
            if registration is not None:
                self._registrations.append(registration)
        log.info("registering webhook %s", path)

    def serve_conversions(self) -> Conversions:
        """The converters registry, its ``/convert`` path served from the first call on."""
        with self._lock:
            served = CONVERT_PATH in self._routes
        if not served:
            self.register(CONVERT_PATH, ConversionEndpoint(self.conversions))
        return self.conversions

    @property
    def registrations(self) -> list[Registration]:
        """The admission webhooks registered so far."""
        with self._lock:
            return list(self._registrations)

    @property
    def paths(self) -> list[str]:
        """Every path served, sorted."""
        with self._lock:
            return sorted(self._routes)

    def endpoint(self, path: str) -> Endpoint | None:
        """What serves ``path`` (None: answered 404); a test can call it without a socket."""
        with self._lock:
            return self._routes.get(path)

    # --- serving -------------------------------------------------------------------------------
    def bind(self) -> tuple[str, int]:
        """Take the port now (port 0 picks a free one) and return the address; :meth:`start`
        serves on it. Called by :meth:`start` when not done before."""
        with self._lock:
            if self._http is None:
                self._http = _TLSHTTPServer(
                    (self.host, self.port), self._handler_class(), self._current_context
                )
            host, port = self._http.server_address[:2]
        return (str(host), int(port))

    @property
    def address(self) -> tuple[str, int]:
        """The bound address; RuntimeError when not bound (before :meth:`bind` or
        :meth:`start`, after the server stopped)."""
        with self._lock:
            http = self._http
            if http is None:
                raise RuntimeError("the webhook server is not bound to a port")
            host, port = http.server_address[:2]
        return (str(host), int(port))

    def _current_context(self) -> ssl.SSLContext | None:
        watcher = self._watcher
        return watcher.context if watcher is not None else None

    @property
    def cert_watcher(self) -> CertWatcher | None:
        """The certificate in use (None before :meth:`start`)."""
        return self._watcher

    def start(self, stop: threading.Event) -> None:
        """Load the certificate, serve until ``stop`` is set, then close the listener.

        A certificate that cannot be loaded raises (the manager stops with the error)."""
        cert_path = self.cert_dir / self.cert_name
        key_path = self.cert_dir / self.key_name
        ca_path = self.cert_dir / self.client_ca_name if self.client_ca_name else None
        try:
            self._watcher = CertWatcher(
                cert_path, key_path, client_ca_path=ca_path, interval=self.cert_poll_interval
            )
        except (OSError, ssl.SSLError) as e:
            self._close()
            raise RuntimeError(
                f"webhook server: cannot load the certificate {cert_path} and key {key_path}: {e}"
            ) from e
        host, port = self.bind()
        http = self._http
        assert http is not None
        watcher_stop = self._clock.event()
        watcher_thread = threading.Thread(
            target=self._watcher.run, args=(watcher_stop,), name="webhook-certs", daemon=True
        )
        # it checks for shutdown() every 0.05 s: a stop waits that long at most (0.2 s before,
        # as kube_runtime.serving's metrics and probe servers)
        serve_thread = threading.Thread(
            target=http.serve_forever, kwargs={"poll_interval": 0.05}, name="webhook", daemon=True
        )
        watcher_thread.start()
        start_detached(serve_thread)  # blocks on its socket: outside any simulation
        log.info("serving webhooks on https://%s:%d", host or "0.0.0.0", port)
        self._started.set()
        try:
            stop.wait()
        finally:
            self._started.clear()
            watcher_stop.set()
            http.shutdown()
            serve_thread.join()
            self._close()

    def _close(self) -> None:
        with self._lock:
            http, self._http = self._http, None
        if http is not None:
            http.server_close()

    @property
    def started(self) -> bool:
        """Whether the server is serving."""
        return self._started.is_set()

    def started_check(self) -> None:
        """A readiness check: raises until the server serves (controller-runtime
        ``StartedChecker``)."""
        if not self._started.is_set():
            raise RuntimeError("webhook server has not been started yet")

    def wait_started(self, timeout: float | None = None) -> bool:
        """Block until the server serves (or ``timeout``); whether it does."""
        return self._started.wait(timeout)

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            timeout = server.idle_timeout
            # TCP_NODELAY: an answer is two writes (headers, body); with Nagle's algorithm the
            # body waited for the client's delayed ACK of the headers, ~40 ms a call
            disable_nagle_algorithm = True

            def setup(self) -> None:
                super().setup()
                self.connection.do_handshake()  # on this thread, under the timeout

            def _answer(self, status: int, body: bytes, content_type: str) -> None:
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                if self.close_connection:
                    self.send_header("Connection", "close")
                self.end_headers()
                self.wfile.write(body)

            def _serve(self) -> None:
                endpoint = server.endpoint(urlsplit(self.path).path)
                if endpoint is None:
                    self._discard_body()
                    self._answer(404, b"404 page not found\n", "text/plain; charset=utf-8")
                    return
                try:
                    body = self._body()
                except _BodyTooLarge:
                    self.close_connection = True
                    reply = endpoint.too_large()
                    self._answer(reply.status, reply.body, reply.content_type)
                    return
                except _BadFraming as e:
                    self.close_connection = True
                    self._answer(400, f"400 Bad Request: {e}\n".encode(), "text/plain")
                    return
                reply = endpoint.serve(self.command, self.headers.get("Content-Type"), body)
                self._answer(reply.status, reply.body, reply.content_type)

            def _body(self) -> bytes:
                if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
                    return _read_chunked(self.rfile, MAX_REQUEST_BYTES)
                length_text = self.headers.get("Content-Length")
                if length_text is None:
                    return b""
                try:
                    length = int(length_text)
                except ValueError as e:
                    raise _BadFraming("bad Content-Length") from e
                if length < 0:
                    raise _BadFraming("bad Content-Length")
                if length > MAX_REQUEST_BYTES:
                    raise _BodyTooLarge
                return bytes(self.rfile.read(length))

            def _discard_body(self) -> None:
                try:
                    self._body()
                except (_BodyTooLarge, _BadFraming):
                    self.close_connection = True

            do_POST = do_GET = do_PUT = do_PATCH = do_DELETE = _serve

            def log_message(self, format: str, *args: Any) -> None:
                log.debug("%s " + format, self.address_string(), *args)

        return Handler
