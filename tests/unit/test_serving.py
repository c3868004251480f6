"""The manager's endpoint server stops promptly: a manager's shutdown (each e2e test's) does not
wait out socketserver's default half-second poll."""

from __future__ import annotations

import time
import urllib.request

from kube_runtime.serving import EndpointServer


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
