""":func:`bodylimits.decode_json_written` answers as :func:`bodylimits.decode_json` (data or
error, the nesting limit included) and says whether the body is orjson's encoding of the data,
over random and edge-case bodies."""

from __future__ import annotations

import random
import threading
from typing import Any

import orjson

from kube_runtime.envtest.server import bodylimits, errors


def _outcome(call: Any, *args: Any) -> tuple[str, Any]:
    try:
        return "ok", call(*args)
    except errors.ApiError as e:
        return "error", (e.code, str(e))


def _nested(depth: int, opener: bytes = b"[") -> bytes:
    closer = b"]" if opener == b"[" else b"}"
    if opener == b"{":
        return b'{"a":' * (depth - 1) + b"{}" + closer * (depth - 1)
    return opener * depth + closer * depth


def _bodies() -> list[bytes]:
    rng = random.Random(3)
    bodies = [
        b"",
        b"   ",
        b"null",
        b"{}",
        b'{"a":1}',
        b'{"a": 1}',
        b'{"a":1,"a":2}',
        b'{"a":{"b":1,"b":1}}',
        b'{"a":"\\u00e9"}',
        b'{"a":"\xc3\xa9"}',
        b'{"a":"\xff"}',
        b'{"a":"\\ud800"}',
        b'{"a":1e400}',
        b'{"a":18446744073709551616}',
        b'{"a":1.0}',
        b'{"a":NaN}',
        b'{"a":',
        b"[1,2]",
        b'"s"',
    ]
    for depth in (1, 199, 200, 201, 250, 300, 1100):
        bodies += [_nested(depth), _nested(depth, b"{")]
    for _ in range(300):
        value = {
            "metadata": {"name": f"n{rng.randint(0, 9)}", "labels": {"a": "b"}},
            "spec": {"x": [rng.random(), rng.randint(-5, 5), None, True, "é"]},
        }
        encoded = orjson.dumps(value)
        if rng.random() < 0.3:
            encoded = encoded.replace(b":", b": ", 1)
        if rng.random() < 0.2:
            encoded = encoded.replace(b'{"name"', b'{"name":"dup","name"', 1)
        bodies.append(encoded)
    return bodies


def test_decode_json_written_answers_as_decode_json() -> None:
    for body in _bodies():
        expected = _outcome(bodylimits.decode_json, body, "Pod")
        got = _outcome(bodylimits.decode_json_written, body, "Pod")
        if expected[0] == "error":
            assert got == expected, body
            continue
        assert got[0] == "ok", body
        data, written = got[1]
        assert orjson.dumps(data) == orjson.dumps(expected[1]), body
        try:
            same = orjson.dumps(expected[1]) == body
        except orjson.JSONEncodeError:
            same = False
        assert written == same, body


def test_decode_json_written_from_threads() -> None:
    """The nesting probe is per thread: threads decoding at once get their own answers."""
    bodies = [orjson.dumps({"i": i, "v": list(range(i))}) for i in range(50)]
    failures: list[bytes] = []

    def run() -> None:
        for _ in range(20):
            for body in bodies:
                data, written = bodylimits.decode_json_written(body, "Pod")
                if not written or orjson.dumps(data) != body:
                    failures.append(body)

    threads = [threading.Thread(target=run) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures
