"""The embedded server's HTTP layer under hostile clients (issue 18 part 2): many idle and slow
connections, a cap on open connections, idle and slow-header timeouts, and the in-flight bound
answering 429 with Retry-After; over TLS too, where connections that never finish a handshake
are bounded and closed. Each test runs a cluster of its own (embedded only)."""

from __future__ import annotations

import socket
import ssl
import statistics
import threading
import time
import urllib.request
from collections.abc import Iterator

import orjson
import pytest

from kube_runtime.envtest.cluster import EmbeddedCluster

pytestmark = pytest.mark.embedded_only("the embedded server's own HTTP layer")


@pytest.fixture
def cluster() -> Iterator[EmbeddedCluster]:
    with EmbeddedCluster(kubelet=False, deployments=False) as c:
        yield c


@pytest.fixture
def tls_cluster() -> Iterator[EmbeddedCluster]:
    with EmbeddedCluster(token=EmbeddedCluster.new_token(), kubelet=False, deployments=False) as c:
        yield c


def tls_context(cluster: EmbeddedCluster) -> ssl.SSLContext | None:
    if cluster.certs is None:
        return None
    return ssl.create_default_context(cafile=str(cluster.certs.ca_file))


def healthz_ms(cluster: EmbeddedCluster) -> float:
    started = time.perf_counter()
    request = urllib.request.Request(
        f"{cluster.url}/healthz", headers={"Authorization": f"Bearer {cluster.token}"}
    )
    with urllib.request.urlopen(request, timeout=10, context=tls_context(cluster)) as answer:
        assert answer.status == 200 and answer.read() == b"ok"
    return (time.perf_counter() - started) * 1000


def connect(cluster: EmbeddedCluster) -> socket.socket:
    return socket.create_connection(("127.0.0.1", cluster.http.port), timeout=10)


def connect_over_cap(cluster: EmbeddedCluster) -> list[socket.socket]:
    """A connection the server may refuse: on loopback its reset can beat ``connect()``'s
    return, which then fails (nothing to hold then)."""
    try:
        return [connect(cluster)]
    except ConnectionResetError:
        return []


def handshaken(cluster: EmbeddedCluster) -> socket.socket:
    """A connection that finished its TLS handshake (a plain one on a plain cluster)."""
    context = tls_context(cluster)
    sock = connect(cluster)
    return sock if context is None else context.wrap_socket(sock, server_hostname="127.0.0.1")


@pytest.mark.parametrize("scheme", ["http", "https"])
def test_health_answers_while_1500_idle_and_200_slow_clients_hold_connections(
    scheme: str,
) -> None:
    """Idle: connected and silent (over TLS: not even a handshake). Slow: one header byte each
    every 50 ms (over TLS: after the handshake, a record per byte)."""
    token = EmbeddedCluster.new_token() if scheme == "https" else None
    with EmbeddedCluster(token=token, kubelet=False, deployments=False) as cluster:
        idle = [connect(cluster) for _ in range(1_500)]
        slow = [handshaken(cluster) for _ in range(200)]
        stop = threading.Event()

        def trickle() -> None:
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
        assert len(cluster.http.connections) + cluster.http.opening <= 1_700 + 1
        assert cluster.http.refused_connections == 0
    print(
        f"\n{scheme}: healthz with 1,500 idle + 200 slow connections: median "
        f"{statistics.median(latencies):.1f} ms, max {max(latencies):.1f} ms"
    )


def test_connections_over_the_cap_are_refused_and_the_server_goes_on(
    cluster: EmbeddedCluster,
) -> None:
    cluster.http.limits.max_connections = 20
    held = [s for _ in range(30) for s in connect_over_cap(cluster)]
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


def test_tls_connections_that_never_finish_a_handshake_are_bounded_and_closed(
    tls_cluster: EmbeddedCluster,
) -> None:
    http = tls_cluster.http
    assert http.ssl_context is not None
    http.limits.max_connections = 40
    http.limits.tls_handshake_timeout = 1.0
    silent = [connect(tls_cluster) for _ in range(30)]  # not a byte
    stalled = [connect(tls_cluster) for _ in range(10)]
    for s in stalled:
        s.sendall(b"\x16\x03\x01\x02\x00\x01")  # a ClientHello record that never ends
    over = [s for _ in range(10) for s in connect_over_cap(tls_cluster)]
    deadline = time.monotonic() + 10
    while http.refused_connections < 10 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert http.refused_connections == 10  # over the cap, counted among the opening ones
    for s in silent + stalled + over:  # all closed by the server, the first 40 on the timeout
        try:
            assert s.recv(100) == b""
        except ConnectionResetError:
            pass
        s.close()
    deadline = time.monotonic() + 10
    while http.opening and time.monotonic() < deadline:
        time.sleep(0.01)
    assert http.opening == 0 and http.failed_handshakes == 40  # 30 silent, 10 stalled
    assert healthz_ms(tls_cluster) > 0
