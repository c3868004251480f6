"""Fast paths of a Lease renewal's way through the embedded API server, each against the
general path it stands for.

* ``storage._rfc3339_second`` formats a new second's time of day itself (the date kept per
  day) instead of calling ``time.strftime`` on ``time.gmtime``: the same text for every second.
* The HTTP server makes a parsed request with its target's path and query split once per
  known head (``http._parsed_request``): equal to ``Request(...)``, with a query of its own.
"""

from __future__ import annotations

import dataclasses
import random
import time

import pytest

from kube_runtime.envtest.server import http, storage
from kube_runtime.envtest.server.http import Request, _Connection


def _strftime(second: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(second))


def test_rfc3339_second_matches_strftime() -> None:
    rng = random.Random(28)
    seconds = [0, 59, 60, 3599, 3600, 86399, 86400, -1, -86400, -86401]
    seconds += [951_782_400 + d for d in (-1, 0, 86_399, 86_400)]  # 2000-02-29, a leap day
    seconds += [4_102_444_800 + d for d in (-1, 0)]  # 2100-01-01 (2100 is no leap year)
    seconds += list(range(1_700_000_000, 1_700_000_000 + 3 * 86_400, 631))
    seconds += [rng.randrange(-62_135_596_800, 253_402_300_799) for _ in range(20_000)]
    for second in seconds:
        assert storage._rfc3339_second(second) == _strftime(second), second


def test_now_rfc3339_truncates_to_the_second() -> None:
    assert storage.now_rfc3339(lambda: 1_700_000_000.999) == _strftime(1_700_000_000)
    assert storage.now_rfc3339(lambda: -0.5) == _strftime(-1)


_TARGETS = [
    "/apis/coordination.k8s.io/v1/namespaces/b/leases/l",
    "/api/v1/pods?watch=1&fieldSelector=metadata.name%3Dp&a=&a=2",
    "/api/v1/namespaces/a%2Fb/pods/p%20q?x=%zz",
    "/x#frag?y=1",
    "//host/p?q=1",
    "*",
    "http://example.com:8080/api?watch=true",
    "/p?;a=1&&b",
    "http://[::1/x",  # urlsplit refuses it: Request() raises, as before
]


def _request(data: bytes) -> Request | str | None:
    conn = _Connection.__new__(_Connection)
    conn.buffer = bytearray(data)
    conn.keep_alive = True
    try:
        return conn._parse()
    except ValueError as e:
        return f"ValueError: {e}"


def _general(method: str, target: str, headers: dict[str, str], body: bytes) -> Request | str:
    try:
        return Request(method, target, headers, body)
    except ValueError as e:
        return f"ValueError: {e}"


def _fields(request: Request) -> dict[str, object]:
    """Every field but the time it was received (a dataclass replace would split the target
    again, not compare what the fast path set)."""
    fields = {f.name: getattr(request, f.name) for f in dataclasses.fields(request)}
    del fields["received"]
    return fields


@pytest.mark.parametrize("target", _TARGETS)
def test_a_parsed_request_is_the_request_of_its_fields(target: str) -> None:
    body = b'{"a":1}'
    data = f"PUT {target} HTTP/1.1\r\nContent-Length: {len(body)}\r\n\r\n".encode() + body
    http._HEADS.clear()
    for _ in range(3):  # parsed, then from the table of known heads
        made = _request(data)
        expected = _general("PUT", target, {"content-length": str(len(body))}, body)
        if isinstance(expected, str):
            assert made == expected
            continue
        assert isinstance(made, Request)
        assert made.received > 0
        assert _fields(made) == _fields(expected)
        if made.query:  # its own lists: a handler changing them changes no later request
            made.query[next(iter(made.query))].append("changed")
            again = _request(data)
            assert isinstance(again, Request)
            assert again.query == expected.query
