"""Memos of the embedded server's write path, keyed by the JSON encoding of a sub-object.

Most pods are written from templates, so their specs repeat byte for byte; what the write
path computes from a spec alone (its defaulted, admitted and zero-dropped form; its
validation causes) is kept here under the spec's encoding and reused.

Contract: a memoized step is a pure function of the JSON value it is keyed by (plus what
its caller adds to the check of a hit). :func:`json_key` is that value's ``orjson``
encoding, key order included; it is None for values that are not plain decoded JSON
(subclasses of ``dict``/``list``/``str``/``int``, dataclasses, dates, integers beyond 64
bits...), which the caller then computes without the memo. Tuples encode as lists, enums
as their values and NaN as null: the write path is given decoded JSON, which has none of
them. A :class:`Memo` holds at most ``size``
entries (it starts afresh when full): a bound on memory, not an LRU.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any, Generic, TypeVar

import orjson

__all__ = ["Memo", "forget_key", "json_key", "known_key"]

V = TypeVar("V")

_STRICT = (
    orjson.OPT_PASSTHROUGH_SUBCLASS
    | orjson.OPT_PASSTHROUGH_DATACLASS
    | orjson.OPT_PASSTHROUGH_DATETIME
)


#: The value whose key :func:`known_key` gave, and that key (None: none).
_known: tuple[Any, bytes] | None = None


def json_key(value: Any) -> bytes | None:
    """The JSON encoding of ``value`` as a memo key; None when it is not plain JSON."""
    known = _known
    if known is not None and known[0] is value:
        return known[1]
    try:
        return orjson.dumps(value, option=_STRICT)
    except TypeError:  # orjson.JSONEncodeError included
        return None


class Memo(Generic[V]):
    """A bounded map from :func:`json_key` keys (or tuples holding one, e.g. with a path:
    a tuple reuses the key's cached hash where a concatenation would copy and hash it
    again) to computed values (thread-safe under the GIL: single dict operations only)."""

    __slots__ = ("_entries", "get", "size")

    #: The value kept under ``key``, or None (the entries' own ``dict.get``: no Python frame
    #: on the write path's look-ups).
    get: Callable[[Hashable], V | None]

    def __init__(self, size: int = 256) -> None:
        self.size = size
        self._entries: dict[Hashable, V] = {}
        self.get = self._entries.get

    def put(self, key: Hashable, value: V) -> None:
        entries = self._entries
        if len(entries) >= self.size:
            entries.clear()
        entries[key] = value

    def __len__(self) -> int:
        return len(self._entries)


def known_key(value: Any, key: bytes) -> None:
    """Until :func:`forget_key`, :func:`json_key` of the very object ``value`` is ``key``
    without encoding it again: ``key`` must be its :func:`json_key`, and ``value`` must not
    change meanwhile (a write path that knows the encoding of what it built, e.g. a pod spec
    prepared from a memo, and validates it next; call :func:`forget_key` in a ``finally``).
    Another thread's call may replace it: keys are then computed, as without it."""
    global _known
    _known = (value, key)


def forget_key() -> None:
    """End what :func:`known_key` began."""
    global _known
    _known = None
