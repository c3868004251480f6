"""The embedded server's HTTP layer under hostile clients (issue 18 part 2): many idle and slow
connections, a cap on open connections, idle and slow-header timeouts, and the in-flight bound
answering 429 with Retry-After. Each test runs a cluster of its own (embedded only)."""

from __future__ import annotations

import socket
import statistics
import threading
import time
import urllib.request
from collections.abc import Iterator

import orjson
import pytest

from kube_runtime.envtest.cluster import EmbeddedCluster


@pytest.fixture
def cluster() -> Iterator[EmbeddedCluster]:
    with EmbeddedCluster(kubelet=False) as c:
        yield c


def healthz_ms(cluster: EmbeddedCluster) -> float:
    started = time.perf_counter()
    with urllib.request.urlopen(f"{cluster.url}/healthz", timeout=10) as answer:
        assert answer.status == 200 and answer.read() == b"ok"
    return (time.perf_counter() - started) * 1000


def connect(cluster: EmbeddedCluster) -> socket.socket:
    return socket.create_connection(("127.0.0.1", cluster.http.port), timeout=10)


def test_health_answers_while_1500_idle_and_200_slow_clients_hold_connections(
    cluster: EmbeddedCluster,
) -> None:
    idle = [connect(cluster) for _ in range(1_500)]
    slow = [connect(cluster) for _ in range(200)]
    stop = threading.Event()

    def trickle() -> None:  # slowloris: one header byte per client every 50 ms
        header = b"GET /healthz HTTP/1.1\r\nX-Slow: " + b"a" * 10_000
        i = 0
        while not stop.is_set() and i < len(header):
            for s in slow:
                try:
                    s.send(header[i : i + 1])
                except OSError:
                    pass
            i += 1
            stop.wait(0.05)

    trickler = threading.Thread(target=trickle, daemon=True)
    trickler.start()
    try:
        latencies = [healthz_ms(cluster) for _ in range(50)]  # every one answered 200
    finally:
        stop.set()
        trickler.join(5)
        for s in idle + slow:
            s.close()
    assert len(cluster.http.connections) <= 1_700 + 1
    print(
        f"\nhealthz with 1,500 idle + 200 slow connections: median "
        f"{statistics.median(latencies):.1f} ms, max {max(latencies):.1f} ms"
    )


def test_connections_over_the_cap_are_refused_and_the_server_goes_on(
    cluster: EmbeddedCluster,
) -> None:
    cluster.http.limits.max_connections = 20
    held = [connect(cluster) for _ in range(30)]
    try:
        deadline = time.monotonic() + 10
        while cluster.http.refused_connections < 10 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert cluster.http.refused_connections >= 10
        assert len(cluster.http.connections) <= 20
    finally:
        for s in held:
            s.close()
    deadline = time.monotonic() + 10
    while len(cluster.http.connections) >= 20 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert healthz_ms(cluster) > 0


def test_idle_and_slow_header_connections_are_closed(cluster: EmbeddedCluster) -> None:
    cluster.http.limits.idle_timeout = 0.3
    cluster.http.limits.header_timeout = 0.3
    cluster.http.limits.sweep_every = 0.05
    cluster.http.call_soon(cluster.http.sweep)  # the new period from now on
    idle, slow = connect(cluster), connect(cluster)
    slow.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")  # never finished
    for s in (idle, slow):
        s.settimeout(5)
        assert s.recv(100) == b""  # closed by the server
        s.close()
    kept = connect(cluster)  # an active keep-alive connection is not closed under it
    kept.settimeout(5)
    for _ in range(5):
        kept.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        assert kept.recv(1000).startswith(b"HTTP/1.1 200")
        time.sleep(0.1)
    kept.close()


def test_requests_beyond_the_inflight_bound_get_429_with_retry_after(
    cluster: EmbeddedCluster,
) -> None:
    cluster.http.limits.max_mutating_requests_inflight = 2
    cluster.faults.add_latency(0.5, "configmaps", "create")
    body = orjson.dumps({"metadata": {"generateName": "c-"}})
    request = (
        b"POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\nHost: x\r\n"
        b"Content-Type: application/json\r\nContent-Length: "
        + str(len(body)).encode()
        + b"\r\n\r\n"
        + body
    )
    sockets = [connect(cluster) for _ in range(3)]
    for s in sockets:
        s.sendall(request)
        time.sleep(0.05)  # in order: the first two are delayed in flight
    answers = []
    for s in sockets:
        data = b""
        while b"\r\n\r\n" not in data:
            data += s.recv(4096)
        answers.append(data)
        s.close()
    statuses = [a.split(b" ", 2)[1] for a in answers]
    assert statuses.count(b"429") == 1 and statuses[2] == b"429"
    assert b"Retry-After: 1" in answers[2]
    assert cluster.http.throttled_requests == 1
    cluster.faults.clear()
    reads = connect(cluster)  # reads have their own bound
    reads.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
    assert reads.recv(100).startswith(b"HTTP/1.1 200")
    reads.close()
