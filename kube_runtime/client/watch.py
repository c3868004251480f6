"""A watch stream: newline-delimited JSON events decoded as they arrive.

:class:`Watch` wraps one open streaming response (see ``Client.watch``). Iterating yields
:class:`WatchEvent` values (``ADDED``, ``MODIFIED``, ``DELETED``, ``BOOKMARK``) as soon as
each line is complete; an ``ERROR`` event raises the matching
:class:`~kube_runtime.client.errors.ApiError` (410 / Expired -> ``Gone``).

The iteration just stops when the stream ends: the server's ``timeoutSeconds`` elapsed, the
server closed it, or the connection broke or timed out mid-stream (logged at DEBUG). This is
client-go's ``StreamWatcher`` behaviour: a reflector re-watches from the last resourceVersion
it saw, and relists only on ``Gone``. :meth:`Watch.close` may be called from any thread: it
shuts the socket down so that a blocked iteration ends promptly, and the iteration then stops
without an error.
"""

from __future__ import annotations

import http.client
import logging
import threading
from collections import deque
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple

import orjson
import urllib3

from kube_runtime import clock
from kube_runtime.client._closing import ClosesOnExit
from kube_runtime.client.errors import error_from_status

__all__ = ["SIM_WATCH_HEADER", "Watch", "WatchEvent"]

SIM_WATCH_HEADER = "X-Kube-Runtime-Sim-Watch"
"""Request header naming a watch opened under a :class:`~kube_runtime.clock.SimClock`: its
value is a key of that clock (:meth:`~kube_runtime.clock.SimClock.new_key`). An embedded server
on the same clock holds the key once per line it writes to the stream; the :class:`Watch`
releases one per event it has handed on (when asked for the next) and forgets the key when the
stream ends, so virtual time never moves past an event that is still on its way."""

log = logging.getLogger(__name__)

# One read takes whatever the socket holds, up to this much (a burst: dozens of events).
_READ_SIZE = 256 * 1024


class WatchEvent(NamedTuple):
    """One event: ``type`` is ADDED, MODIFIED, DELETED or BOOKMARK; ``object`` the JSON dict.

    A BOOKMARK's object carries only ``kind``, ``apiVersion`` and ``metadata.resourceVersion``
    (plus the ``k8s.io/initial-events-end`` annotation at the end of ``sendInitialEvents``).
    """

    type: str
    object: dict[str, Any]


_new_event: Callable[..., WatchEvent] = tuple.__new__  # WatchEvent(...) without its __new__


def _plain_read1(response: Any) -> Callable[[int], bytes] | None:
    """The ``read1`` of the http.client body under a urllib3 ``response`` when urllib3's
    ``read1`` would only pass its result on: no content encoding to decode, nothing decoded
    or buffered yet, no length to count down (a chunked or close-delimited body, as a
    watch's). None otherwise (any other response is read through its own ``read1``).

    Reading a chunk through urllib3 costs ~4 us of Python per call (its decoding buffer, an
    error-catching context manager, length checks); a live watch reads about once per event.
    """
    if type(response) is not urllib3.response.HTTPResponse:
        return None
    fp = getattr(response, "_fp", None)
    if (
        type(fp) is not http.client.HTTPResponse
        or getattr(fp, "closed", True)
        or response.length_remaining is not None
        or response.headers.get("content-encoding")
        or getattr(response, "_decoder", None) is not None
        or len(getattr(response, "_decoded_buffer", ())) != 0
        or getattr(response, "_has_decoded_content", True)
        or not hasattr(response, "_error_catcher")
        or not isinstance(getattr(response, "_fp_bytes_read", None), int)
    ):
        return None
    read1: Callable[[int], bytes] = fp.read1
    return read1


class Watch(ClosesOnExit, Iterator[WatchEvent]):
    """An open watch; iterate it, and ``close()`` it (or use it as a context manager).

    ``response`` is a urllib3 response opened with ``preload_content=False``. ``description``
    names the watch in log records (``"configmaps in ns"``). Iterate from one thread at a
    time; ``close()`` is safe from any thread and idempotent.

    ``loads`` decodes each event line into the ``{"type", "object"}`` document
    (``orjson.loads``); it may be replaced before iterating by one with the same result, e.g.
    :func:`kube_runtime.cache.store.decode_watch_event`, which a reflector feeding a store that
    shares sub-objects sets.
    """

    def __init__(self, response: Any, description: str = "", *, sim_key: str | None = None) -> None:
        self._response = response
        # Under a simulated clock: the key the server holds per event line, the clock, and
        # how many events were handed on since the last release.
        self._sim_key = sim_key
        self._sim = clock.current() if sim_key is not None else None
        self._handed = 0
        # The reader's idle block on that clock: it also releases what was handed on (one
        # hold of the clock's lock per read instead of two).
        self._idle: Any = None
        if self._sim is not None:
            reader_idle = getattr(self._sim, "reader_idle", None)
            self._idle = reader_idle(sim_key) if reader_idle is not None else self._sim.idle()
        self._description = description
        self._buffer = b""
        self._pending: deque[bytes] = deque()
        self._closed = threading.Event()
        self._finished = False
        self._finish_lock = threading.Lock()
        # Held while a thread reads from the socket: close() then only shuts the socket down
        # and leaves releasing the connection to the reader.
        self._reading = threading.Lock()
        self.loads: Callable[[bytes], Any] = orjson.loads
        # The body's own read1 (http.client's) when urllib3's layer adds nothing to it.
        self._fast_read1: Callable[[int], bytes] | None = _plain_read1(response)

    @property
    def closed(self) -> bool:
        return self._closed.is_set() or self._finished

    def __iter__(self) -> Watch:
        return self

    def __next__(self) -> WatchEvent:
        pending = self._pending
        if self._sim is not None:
            if self._handed and pending:
                # Asked for the next event: the ones handed on before were taken up. With
                # nothing buffered, the read below releases them as it goes idle.
                self._sim.release(self._sim_key, self._handed)
                self._handed = 0
            while not pending:
                if not self._fill():
                    raise StopIteration
            self._handed += 1
        else:
            while not pending:
                if not self._fill():
                    raise StopIteration
        line = pending.popleft()
        event = self.loads(line)
        kind, obj = event.get("type"), event.get("object")
        if type(kind) is str and type(obj) is dict and kind != "ERROR":
            return _new_event(WatchEvent, (kind, obj))  # WatchEvent(kind, obj), one call less
        return self._event(line, event)

    @property
    def buffered(self) -> int:
        """Events already read from the socket and not yet returned: 0 means the next
        ``next()`` reads (and may block). A reflector hands on what it learned then, once per
        socket read rather than once per event."""
        return len(self._pending)

    def _fill(self) -> bool:
        """Read once and queue the complete lines; False when the stream ended."""
        if self._finished or self._closed.is_set():
            self._finish()
            return False
        idle = self._idle
        if idle is not None:
            if self._handed:
                if hasattr(idle, "releasing"):
                    idle.releasing = self._handed
                else:
                    self._sim.release(self._sim_key, self._handed)  # type: ignore[union-attr]
                self._handed = 0
            with idle:  # what arrives is held by the server until handed on
                data = self._read()
        else:
            data = self._read()
        if not data:
            self._finish()
            return False
        # (find, not ``b"\n" in data``: ``in`` tries the operand as an int first, and the
        # TypeError it raises and clears inside costs more than the search.)
        end = data.find(b"\n")
        if end < 0:
            self._buffer += data
            return True
        buffered = self._buffer
        if buffered:  # holds no newline: the first one is data's
            buf = buffered + data
            end += len(buffered)
        elif end == len(data) - 1:  # one whole line, as an event usually comes
            if end and not data.isspace():
                self._pending.append(data[:end])
            return True
        else:
            buf = data
        # Lines cut at each newline found with find(), which scans with memchr: bytes.split
        # compares byte by byte, several times the CPU on lines of kilobytes. Blank lines
        # (keep-alives) carry no event.
        find, append = buf.find, self._pending.append
        start = 0
        while end >= 0:
            if end > start:
                line = buf[start:end]
                if not line.isspace():
                    append(line)
            start = end + 1
            end = find(b"\n", start)
        self._buffer = buf[start:] if start else buf
        return True

    def _read(self) -> bytes:
        with self._reading:
            if self._closed.is_set():
                return b""
            try:
                fast = self._fast_read1
                if fast is not None:
                    data = self._read_plain(fast)
                else:
                    data = self._response.read1(_READ_SIZE)
                return data if type(data) is bytes else bytes(data)
            except (urllib3.exceptions.HTTPError, OSError, ValueError, AttributeError) as err:
                # ValueError/AttributeError: the response was closed under us by close().
                if not self._closed.is_set():
                    log.debug("watch %s: stream ended: %r", self._description, err)
                return b""

    def _read_plain(self, read1: Callable[[int], bytes]) -> bytes:
        """``response.read1(_READ_SIZE)`` for a response :func:`_plain_read1` accepted: the
        body's read1 directly, urllib3's bookkeeping kept; an end of stream or an error goes
        through urllib3 as before (its error translation, closing and releasing)."""
        response = self._response
        try:
            data = read1(_READ_SIZE)
        except BaseException as err:
            with response._error_catcher():  # urllib3's translation and clean-up of it
                raise err
            raise  # not reached: the catcher re-raises
        if not data:
            # End of the body: urllib3 closes the body and releases the connection.
            return response.read1(_READ_SIZE)
        response._fp_bytes_read += len(data)
        response._uncached_read_occurred = True
        return data

    def _decode(self, line: bytes) -> WatchEvent:
        return self._event(line, self.loads(line))

    def _event(self, line: bytes, event: Any) -> WatchEvent:
        """The decoded ``event`` of ``line`` checked: an ERROR raises, a malformed one too."""
        kind, obj = event.get("type"), event.get("object")
        if kind == "ERROR":
            # The server ends the stream here, its end unread: the connection is not reusable.
            self._finish(discard=True)
            raise error_from_status(obj if isinstance(obj, dict) else {"message": str(obj)})
        if not isinstance(kind, str) or not isinstance(obj, dict):
            raise ValueError(f"watch {self._description}: malformed event {line[:200]!r}")
        return WatchEvent(kind, obj)

    def _finish(self, discard: bool = False) -> None:
        """Release the connection (closed first when ``discard`` or after ``close()``: a
        pooled connection must not hold the rest of a stream); idempotent and safe from the
        reader and ``close()``."""
        with self._finish_lock:
            if self._finished:
                return
            self._finished = True
            self._pending.clear()
            if self._sim is not None and self._sim_key is not None:
                self._handed = 0
                self._sim.forget(self._sim_key)
            try:
                if discard or self._closed.is_set():
                    self._response.close()
                self._response.release_conn()
            except Exception as err:  # a broken connection needs no clean release
                log.debug("watch %s: release failed: %r", self._description, err)

    def close(self) -> None:
        """End the watch; a thread blocked in ``next()`` returns promptly (StopIteration)."""
        if self._closed.is_set():
            return
        self._closed.set()
        try:
            self._response.shutdown()
        except Exception as err:  # already released or never connected
            log.debug("watch %s: socket shutdown: %r", self._description, err)
        if self._reading.acquire(blocking=False):
            try:
                self._finish()
            finally:
                self._reading.release()

    def __del__(self) -> None:
        if not self._finished:
            try:
                self.close()
            except Exception:
                pass
