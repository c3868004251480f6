"""Decoding request bodies within the limits kube-apiserver enforces, before any logic runs.

Every body a handler reads goes through :func:`decode_json` or :func:`decode_yaml`, so what
reaches the storage is a tree of ``dict``/``list``/``str``/``int``/``float``/``bool``/``None``
that encodes back to JSON: nothing is committed that cannot be read back.

* Size: a body over :data:`MAX_BODY_BYTES` (3 MiB) is answered 413, as kube-apiserver's
  handlers do (``Request entity too large: limit is 3145728``). An object whose encoding is
  over :data:`MAX_OBJECT_BYTES` (etcd's default ``--max-request-bytes``, 1.5 MiB) is refused
  by the storage (:func:`check_object_size`) with 413 ``etcdserver: request is too large``
  (kube-apiserver 1.20 answers 500 there, with gRPC's own message past 2 MiB).
* Nesting: kube-apiserver's decoders stop at 10,000 levels (400 ``exceeded max depth``). This
  server, whose encoder and recursive walks stop far earlier, refuses nesting deeper than
  :data:`MAX_DEPTH` with the same answer (a documented deviation). A JSON body is parsed by
  orjson, which stops at 1,024 levels by itself; only a body with more than
  :data:`MAX_DEPTH` brackets is measured, by encoding it again (C speed, no Python walk).
* Text: JSON strings with invalid UTF-8 or a lone UTF-16 surrogate escape (``"\\ud800"``)
  decode with U+FFFD in their place, as Go's decoder does; a YAML body with a surrogate
  escape is refused (400, as go-yaml refuses it).
* Numbers: a JSON integer beyond the 64-bit range is a float (as the unstructured decoder
  makes it); a YAML integer beyond it too, one beyond the float range a string (go-yaml's
  resolution); ``.inf``/``.nan`` are refused (JSON cannot hold them). YAML keys that are not
  strings become strings, timestamps and binary scalars strings, as ``sigs.k8s.io/yaml``
  converts YAML to JSON.
"""

from __future__ import annotations

import base64
import datetime as _dt
import json
import math
import threading
from typing import Any

import orjson

from kube_runtime.envtest.server import errors

__all__ = [
    "KUBE_MAX_DEPTH",
    "MAX_BODY_BYTES",
    "MAX_DEPTH",
    "MAX_OBJECT_BYTES",
    "check_body_size",
    "check_object_size",
    "decode_json",
    "decode_json_written",
    "decode_yaml",
    "depth_error",
]

#: kube-apiserver's ``MaxRequestBodyBytes``: larger bodies are answered 413.
MAX_BODY_BYTES = 3 * 1024 * 1024
#: etcd's default ``--max-request-bytes``: larger objects are not stored.
MAX_OBJECT_BYTES = 1536 * 1024
#: The nesting kube-apiserver's JSON and YAML decoders accept.
KUBE_MAX_DEPTH = 10_000
#: The nesting this server accepts (containers, the body itself included): its JSON encoder
#: stops at 254 levels, and a watch event or a Table wraps an object in a few more.
MAX_DEPTH = 200

_INT64_MIN = -(2**63)
_UINT64_MAX = 2**64 - 1
_FFFD = "\ufffd"
# libyaml's parser when PyYAML was built with it: the same safe constructor, a C scanner (the
# pure-Python one takes seconds to reach its recursion limit on a deeply nested body), and its
# own nesting limit (1,000 flow levels), reported as kube-apiserver's depth error. PyYAML is
# imported with the first YAML body (~25 ms of CPU that a server given only JSON never spends).
_NESTING = "exceeded maximum nesting depth"


def check_body_size(body: bytes) -> None:
    """413 for a body over kube-apiserver's 3 MiB limit."""
    if len(body) > MAX_BODY_BYTES:
        raise errors.api_error(
            413, f"Request entity too large: limit is {MAX_BODY_BYTES}", "RequestEntityTooLarge"
        )


def check_object_size(raw: bytes) -> None:
    """413 for an encoded object over etcd's request limit (checked before it is stored)."""
    if len(raw) > MAX_OBJECT_BYTES:
        raise errors.api_error(413, "etcdserver: request is too large", "RequestEntityTooLarge")


def depth_error(kind: str, what: str = "json parse error", char: str = "[") -> errors.ApiError:
    """kube-apiserver's 400 for a body nested deeper than its decoder takes."""
    return errors.bad_request(
        f"the object provided is unrecognized (must be of type {kind}): couldn't get "
        f"version/kind; {what}: invalid character '{char}' exceeded max depth"
    )


#: orjson encodes at most this many nested containers ("Recursion limit reached" beyond).
_ORJSON_DEPTH = 254


def _too_deep(data: Any) -> bool:
    """Whether ``data`` nests more than :data:`MAX_DEPTH` containers: encoded (at C speed)
    inside enough lists that orjson's own limit falls just past :data:`MAX_DEPTH`."""
    probe = data
    for _ in range(_ORJSON_DEPTH - MAX_DEPTH):
        probe = [probe]
    try:
        orjson.dumps(probe)
    except orjson.JSONEncodeError as e:
        return "Recursion" in str(e)
    return False


def _json_depth_ok(body: bytes) -> bool:
    """Whether the brackets of a JSON text (outside strings) nest at most :data:`MAX_DEPTH`."""
    depth = 0
    in_string = escaped = False
    for byte in body:
        if in_string:
            if escaped:
                escaped = False
            elif byte == 0x5C:  # backslash
                escaped = True
            elif byte == 0x22:  # quote
                in_string = False
        elif byte == 0x22:
            in_string = True
        elif byte in (0x5B, 0x7B):  # [ {
            depth += 1
            if depth > MAX_DEPTH:
                return False
        elif byte in (0x5D, 0x7D):
            depth -= 1
    return True


def _reject_constant(name: str) -> Any:
    raise ValueError(f"invalid character '{name[0]}' looking for beginning of value")


def _lenient_json(body: bytes, kind: str) -> Any:
    """Go's reading of a JSON text orjson refuses for its text: invalid UTF-8 and lone
    surrogate escapes become U+FFFD (rare: the slow path)."""
    if not _json_depth_ok(body):
        raise depth_error(kind)
    text = body.decode("utf-8", "replace")
    try:
        data = json.loads(text, parse_constant=_reject_constant)
    except (ValueError, RecursionError) as e:
        raise errors.bad_request(f"the request body could not be decoded: {e}") from None
    return _normalize(data, kind, yaml_source=False)


def decode_json(body: bytes, kind: str) -> Any:
    """A JSON body as Python data within the limits above; 400 when it is not JSON.

    ``kind`` names what the body should hold, for kube-apiserver's wording of errors.
    """
    check_body_size(body)
    if not body.strip():
        raise errors.bad_request(
            f"the object provided is unrecognized (must be of type {kind}): couldn't get "
            "version/kind; json parse error: unexpected end of JSON input"
        )
    try:
        data = orjson.loads(body)
    except orjson.JSONDecodeError as e:
        message = str(e)
        if message.startswith("depth limit exceeded"):
            raise depth_error(kind) from None
        if "surrogate" in message or "UTF-8" in message:
            return _lenient_json(body, kind)
        raise errors.bad_request(f"the request body could not be decoded: {e}") from None
    if (body.count(b"{") + body.count(b"[") > MAX_DEPTH) and _too_deep(data):
        raise depth_error(kind)
    return data


class _Probe(threading.local):
    """Per thread: lists nested so that orjson's encoding limit falls just past
    :data:`MAX_DEPTH` of what the innermost one holds (:func:`_too_deep`'s probe, built once)."""

    def __init__(self) -> None:
        self.slot: list[Any] = []
        outer: list[Any] = self.slot
        for _ in range(_ORJSON_DEPTH - MAX_DEPTH - 1):
            outer = [outer]
        self.outer = outer


_PROBE = _Probe()
_WRAPPED = _ORJSON_DEPTH - MAX_DEPTH  # the probe's brackets on each side of the encoding


def decode_json_written(body: bytes, kind: str) -> tuple[Any, bool]:
    """:func:`decode_json` of ``body``, and whether ``body`` is the very bytes orjson writes
    for the result (then no object in it names a field twice: a dict cannot). One encoding
    of the result both checks the nesting (as :func:`_too_deep`, for every body) and tells
    the bytes apart; the answers and errors are :func:`decode_json`'s."""
    check_body_size(body)
    try:
        data = orjson.loads(body)
    except orjson.JSONDecodeError:  # an empty body included
        return decode_json(body, kind), False  # its errors, or Go's lenient reading
    probe = _PROBE
    slot = probe.slot
    slot.append(data)
    try:
        encoded = orjson.dumps(probe.outer)
    except orjson.JSONEncodeError as e:
        if "Recursion" in str(e):
            raise depth_error(kind) from None
        return data, False
    finally:
        slot.clear()
    wrapped = _WRAPPED
    written = len(encoded) == len(body) + 2 * wrapped and encoded[wrapped:-wrapped] == body
    return data, written


def decode_yaml(body: bytes, kind: str) -> Any:
    """A YAML body as JSON-compatible Python data (``sigs.k8s.io/yaml``'s conversion)."""
    check_body_size(body)
    import yaml

    loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        data = yaml.load(body.decode(), Loader=loader)  # a safe loader
    except RecursionError:
        raise _yaml_depth_error(kind) from None
    except (yaml.YAMLError, UnicodeDecodeError, ValueError) as e:
        if _NESTING in str(e):
            raise _yaml_depth_error(kind) from None
        raise errors.bad_request(f"the request body could not be decoded: {e}") from None
    return _normalize(data, kind, yaml_source=True)


def _yaml_depth_error(kind: str) -> errors.ApiError:
    return errors.bad_request(
        f"the object provided is unrecognized (must be of type {kind}): "
        f"yaml: exceeded max depth of {KUBE_MAX_DEPTH}"
    )


def _yaml_key(key: Any) -> str:
    if isinstance(key, bool):
        return "true" if key else "false"
    if key is None:
        return "null"
    if isinstance(key, str):
        return key
    return str(_scalar(key, True))


def _scalar(value: Any, yaml_source: bool) -> Any:
    """One scalar as JSON can hold it (or an ApiError-raising ValueError for inf/nan)."""
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        if _INT64_MIN <= value <= _UINT64_MAX:
            return value
        try:
            return float(value)
        except OverflowError:
            return str(value)
    if isinstance(value, float):
        if math.isfinite(value):
            return value
        text = "NaN" if math.isnan(value) else ("+Inf" if value > 0 else "-Inf")
        raise ValueError(f"json: unsupported value: {text}")
    if isinstance(value, str):
        return value
    if isinstance(value, (_dt.date, _dt.datetime)):
        return value.isoformat()
    if isinstance(value, bytes):
        return base64.b64encode(value).decode()
    return str(value)


def _fix_text(text: str, yaml_source: bool) -> str:
    if text.isascii() or not any("\ud800" <= c <= "\udfff" for c in text):
        return text
    if yaml_source:
        raise ValueError("yaml: found invalid Unicode character escape code")
    return "".join(_FFFD if "\ud800" <= c <= "\udfff" else c for c in text)


def _normalize(data: Any, kind: str, *, yaml_source: bool) -> Any:
    """Make decoded data JSON-compatible in place (iterative; checks the depth too)."""
    root: list[Any] = [data]
    stack: list[tuple[Any, int]] = [(root, 0)]
    try:
        while stack:
            container, depth = stack.pop()
            if depth > MAX_DEPTH:
                raise depth_error(kind, "yaml" if yaml_source else "json parse error")
            if isinstance(container, dict):
                if not all(type(k) is str for k in container) or not all(
                    k.isascii() for k in container
                ):
                    items = [
                        (_fix_text(_yaml_key(k), yaml_source), v) for k, v in container.items()
                    ]
                    container.clear()
                    container.update(items)
                keys: Any = list(container)
            else:
                keys = range(len(container))
            for k in keys:
                v = container[k]
                if isinstance(v, (dict, list)):
                    stack.append((v, depth + 1))
                elif isinstance(v, (set, frozenset)):
                    container[k] = dict.fromkeys(v)
                    stack.append((container[k], depth + 1))
                elif isinstance(v, str):
                    container[k] = _fix_text(v, yaml_source)
                else:
                    container[k] = _scalar(v, yaml_source)
    except ValueError as e:
        raise errors.bad_request(
            f"the object provided is unrecognized (must be of type {kind}): {e}"
        ) from None
    return root[0]
