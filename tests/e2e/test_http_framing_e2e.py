"""Invalid HTTP framing is answered 400/413/501/505 and the connection closed, as Go's
net/http server (kube-apiserver) answers it, never an exception in the server's event loop
(issue 18 part 2). Status codes are compared on both backends; so is the answer to plain HTTP
on the TLS port (issue 18 part 3)."""

from __future__ import annotations

import socket
import ssl
from typing import Any
from urllib.parse import urlsplit

import pytest

from kube_runtime.envtest.cluster import EmbeddedCluster

POST = b"POST /api/v1/namespaces HTTP/1.1\r\nHost: x\r\n"
CASES = [
    ("negative Content-Length", POST + b"Content-Length: -5\r\n\r\nabc", 400),
    ("non-numeric Content-Length", POST + b"Content-Length: abc\r\n\r\n", 400),
    (
        "two different Content-Lengths",
        POST + b"Content-Length: 5\r\nContent-Length: 6\r\n\r\n",
        400,
    ),
    ("unknown transfer coding", POST + b"Transfer-Encoding: gzip\r\n\r\n", 501),
    ("not a request line", b"GARBAGE\r\n\r\n", 400),
    ("HTTP/2.0 in an HTTP/1 request line", b"GET /healthz HTTP/2.0\r\nHost: x\r\n\r\n", 505),
    ("a header line without a colon", b"GET /healthz HTTP/1.1\r\nNoColonHere\r\n\r\n", 400),
]
EMBEDDED_ONLY = [
    # kube-apiserver waits for the body it was promised, then its handler answers
    ("Content-Length past 3 MiB", POST + b"Content-Length: 99999999999\r\n\r\n", 413),
    # kube-apiserver reads a body lazily: its filters (authentication first) answer before
    ("bad chunk size", POST + b"Transfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n", 400),
    ("no CRLF after a chunk", POST + b"Transfer-Encoding: chunked\r\n\r\n3\r\nabcXX0\r\n\r\n", 400),
]


def _answer(cluster: Any, payload: bytes) -> bytes:
    url = urlsplit(cluster.url)
    raw = socket.create_connection((url.hostname, url.port), timeout=10)
    sock: socket.socket = raw
    if url.scheme == "https":
        context = ssl.create_default_context(cafile=str(cluster.certs.ca_file))
        sock = context.wrap_socket(raw, server_hostname=url.hostname)
    with sock:
        sock.sendall(payload)
        data = b""
        try:
            while chunk := sock.recv(4096):
                data += chunk
        except (ConnectionResetError, ssl.SSLError):
            pass
    return data


@pytest.mark.parametrize(("what", "payload", "status"), CASES, ids=[c[0] for c in CASES])
def test_invalid_framing_is_refused(
    embedded_cluster: Any, what: str, payload: bytes, status: int
) -> None:
    answer = _answer(embedded_cluster, payload)
    assert answer.split(b"\r\n", 1)[0].split(b" ")[1] == str(status).encode(), answer[:200]


@pytest.mark.parametrize(
    ("what", "payload", "status"), EMBEDDED_ONLY, ids=[c[0] for c in EMBEDDED_ONLY]
)
def test_invalid_framing_embedded_only(
    embedded_cluster: Any, what: str, payload: bytes, status: int
) -> None:
    if not isinstance(embedded_cluster, EmbeddedCluster):
        pytest.skip("real backend: kube-apiserver decides these in its handlers")
    answer = _answer(embedded_cluster, payload)
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.split(b"\r\n", 1)[0].split(b" ")[1] == str(status).encode()
    assert b"Connection: close" in head and body.startswith(str(status).encode())


def test_the_server_still_serves_after_them(embedded_cluster: Any, client: Any) -> None:
    for _, payload, _ in CASES + EMBEDDED_ONLY:
        if isinstance(embedded_cluster, EmbeddedCluster) or (_, payload, _) in CASES:
            _answer(embedded_cluster, payload)
    assert client.get("v1/Namespace", "default")["metadata"]["name"] == "default"


#: Go's net/http answer to plain HTTP on its TLS port, for the five request starts it knows.
HTTPS_ONLY = b"HTTP/1.0 400 Bad Request\r\n\r\nClient sent an HTTP request to an HTTPS server.\n"
PLAIN_ON_TLS = [
    ("GET", b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n", HTTPS_ONLY),
    ("HEAD", b"HEAD /healthz HTTP/1.1\r\nHost: x\r\n\r\n", HTTPS_ONLY),
    ("OPTIONS", b"OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n", HTTPS_ONLY),
    ("POST", POST + b"Content-Length: 2\r\n\r\n{}", HTTPS_ONLY),
    ("PUT", b"PUT /api/v1/namespaces/x HTTP/1.1\r\nContent-Length: 0\r\n\r\n", HTTPS_ONLY),
    ("DELETE is not one of them", b"DELETE /api/v1/namespaces/x HTTP/1.1\r\n\r\n", b""),
    ("neither TLS nor HTTP", b"hello, anyone there?\r\n", b""),
]


def _plain_answer(cluster: Any, payload: bytes) -> bytes:
    url = urlsplit(cluster.url)
    with socket.create_connection((url.hostname, url.port), timeout=10) as sock:
        sock.sendall(payload)
        data = b""
        try:
            while chunk := sock.recv(4096):
                data += chunk
        except ConnectionResetError:
            pass
    return data


@pytest.mark.parametrize(
    ("what", "payload", "expected"), PLAIN_ON_TLS, ids=[c[0] for c in PLAIN_ON_TLS]
)
def test_plain_http_on_the_tls_port(
    embedded_cluster: Any, client: Any, what: str, payload: bytes, expected: bytes
) -> None:
    if urlsplit(embedded_cluster.url).scheme != "https":
        pytest.skip("the cluster is served over plain HTTP")
    assert _plain_answer(embedded_cluster, payload) == expected  # and closed
    assert client.get("v1/Namespace", "default")["metadata"]["name"] == "default"
