"""The framework's small HTTP servers answer promptly: a manager's shutdown (each e2e test's)
does not wait out socketserver's default half-second poll, and the webhook server's answer
does not wait for the client's delayed ACK (Nagle's algorithm holding the body back until
the headers are acknowledged: ~40 ms a review on Linux)."""

from __future__ import annotations

import http.client
import ssl
import threading
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path

from kube_runtime import clock, webhook
from kube_runtime.envtest.server import tls
from kube_runtime.serving import EndpointServer


def _fastest(call: Callable[[], object], times: int = 5) -> float:
    """The shortest of ``times`` timed calls (the machine's load only adds)."""
    best = float("inf")
    for _ in range(times):
        started = time.perf_counter()
        call()
        best = min(best, time.perf_counter() - started)
    return best


def test_stop_right_after_a_request_returns_in_well_under_half_a_second() -> None:
    server = EndpointServer(("127.0.0.1", 0), healthz={"ping": lambda: None})
    server.start()
    host, port = server.address
    # answered: the serving loop is back in its select, which the old 0.5 s poll left there
    with urllib.request.urlopen(f"http://{host}:{port}/healthz", timeout=5) as answer:
        assert answer.read() == b"ok"
    started = time.monotonic()
    server.stop()
    assert time.monotonic() - started < 0.25
    assert server._thread is not None
    server._thread.join(1)
    assert not server._thread.is_alive()


def test_a_webhook_is_answered_without_waiting_for_a_delayed_ack(tmp_path: Path) -> None:
    certs = tls.generate(tmp_path)
    server = webhook.Server(
        host="127.0.0.1",
        port=0,
        cert_dir=certs.directory,
        cert_name="server.crt",
        key_name="server.key",
    )
    stop = clock.REAL.event()
    thread = threading.Thread(target=server.start, args=(stop,), daemon=True)
    thread.start()
    assert server.wait_started(10)
    context = ssl.create_default_context(cadata=certs.ca_pem.decode())
    _, port = server.address

    def review() -> None:  # a path nothing serves: 404, answered as any review is
        conn = http.client.HTTPSConnection("127.0.0.1", port, context=context, timeout=5)
        try:
            conn.request("POST", "/nothing", b"{}", {"Content-Type": "application/json"})
            answer = conn.getresponse()
            assert answer.status == 404 and answer.read()
        finally:
            conn.close()

    try:
        assert _fastest(review) < 0.035
    finally:
        stop.set()
        thread.join(10)
