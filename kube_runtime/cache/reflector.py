"""The reflector: keep a sink equal to the server's state of one kind by list + watch.

State machine (client-go ``tools/cache/reflector.go``):

1. **List** (paged, ``page_size`` per request) and hand the whole result to
   ``sink.replace(items, resource_version)``; the list's resourceVersion becomes the last
   seen RV and :attr:`Reflector.has_synced` turns True.
2. **Watch** from the last seen RV with bookmarks and a server-side timeout drawn at random
   from ``[min_watch_timeout, 2 * min_watch_timeout)`` (client-go: 5-10 minutes) so that many
   reflectors do not reconnect in step. Every event's object RV - BOOKMARK included - becomes
   the last seen RV; ADDED/MODIFIED/DELETED go to ``sink.add/update/delete``.
3. A stream that **ends or drops** is re-opened from the last seen RV, without a relist:
   the server replays exactly the events after that RV, so nothing is lost or delivered
   twice. A stream that ends at once without a single event counts as an error (client-go's
   "very short watch"), so a misbehaving server cannot make us spin.
4. **410 Gone** (the RV left the server's history window), on opening the watch or as a
   watch ERROR event: full relist (step 1); the sink computes what changed and tombstones
   what disappeared.
5. **Any other error** (the list fails, the watch cannot be opened, the stream breaks with
   an error): wait ``backoff.next_delay()`` seconds - exponential with jitter, 0.8 s
   doubling to 30 s, reset after 2 healthy minutes as client-go's backoff manager - then
   retry the step that failed. A watch that fails to open is retried from the last seen RV
   rather than relisting (client-go relists unless the error is retriable); the server
   answers 410 if that RV is too old, which leads to step 4.

The reflector runs on the caller's thread (:meth:`Reflector.run`) until the ``stop`` event is
set; :meth:`Reflector.close_watch` closes an open stream from any thread so that ``run``
returns promptly.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import KW_ONLY, dataclass, field
from typing import Any, Protocol

from kube_runtime import meta, metrics
from kube_runtime.cache.store import decode_watch_event
from kube_runtime.client.interfaces import Watcher
from kube_runtime.clock import Clock, resolve
from kube_runtime.kinds import Kind, KindLike, as_kind
from kube_runtime.meta import Obj

__all__ = [
    "BackoffPolicy",
    "ExponentialBackoff",
    "ListerWatcher",
    "Reflector",
    "ReflectorSink",
    "WatchStream",
]

log = logging.getLogger(__name__)


# A stream that closes sooner than this without delivering anything is treated as an error.
_SHORT_WATCH_SECONDS = 1.0


class WatchStream(Protocol):
    """An open watch: iterates events (``.type``, ``.object``); ``close()`` from any thread."""

    def __iter__(self) -> Iterator[Any]: ...

    def close(self) -> None: ...


class ListerWatcher(Watcher[WatchStream], Protocol):
    """What a reflector needs from a client: list and watch one kind (the REST
    :class:`kube_runtime.client.Client` is one; tests pass in-memory sources). ``watch`` is
    :meth:`Watcher.watch <kube_runtime.client.interfaces.Watcher.watch>`, returning any
    :class:`WatchStream`."""

    def list(
        self,
        kind: KindLike,
        namespace: str | None = None,
        *,
        label_selector: str | Mapping[str, str] | None = None,
        field_selector: str | Mapping[str, str] | None = None,
        limit: int | None = None,
    ) -> Mapping[str, Any]: ...


class ReflectorSink(Protocol):
    """Where a reflector puts what it learns (an Indexer, or an informer's event processor).

    A sink may also have ``flush()``: the reflector calls it after each batch of watch events
    (those of one socket read, see :meth:`Reflector._follow`), so that the sink can hand on
    what it learned in one go. A sink whose ``shares_subtrees`` is true (a store sharing
    equal sub-objects) gets watch events decoded by
    :func:`~kube_runtime.cache.store.decode_watch_event` (when the stream has ``loads``, as
    :class:`kube_runtime.client.Watch`): equal specs arrive shared, without decoding.
    """

    def replace(self, objs: list[Obj], resource_version: str) -> Any: ...

    def add(self, obj: Obj) -> Any: ...

    def update(self, obj: Obj) -> Any: ...

    def delete(self, obj: Obj) -> Any: ...


class BackoffPolicy(Protocol):
    """How long to wait before retrying after a failure."""

    def next_delay(self) -> float: ...


@dataclass
class ExponentialBackoff:
    """client-go's exponential backoff manager: ``initial * factor**n`` seconds, jittered.

    Each delay is multiplied by ``1 + jitter * rand()`` and capped at ``maximum``. When
    more than ``reset_after`` seconds passed since the previous delay was handed out (the
    reflector was healthy meanwhile), the sequence starts again from ``initial``.

    ``clock`` (a :class:`~kube_runtime.clock.Clock`; None: the clock current when the backoff
    is made) measures that time; ``rand`` defaults to the clock's
    :attr:`~kube_runtime.clock.Clock.rng` (seeded, hence reproducible, on a virtual clock).
    """

    initial: float = 0.8
    maximum: float = 30.0
    _: KW_ONLY
    factor: float = 2.0
    jitter: float = 1.0
    reset_after: float = 120.0
    clock: Clock | None = field(default=None, repr=False)
    rand: Callable[[], float] | None = field(default=None, repr=False)
    _current: float = field(init=False, repr=False)
    _last: float | None = field(init=False, default=None, repr=False)

    def __post_init__(self) -> None:
        self._current = self.initial
        self._clock = resolve(self.clock, "ExponentialBackoff")
        self._rand = self.rand if self.rand is not None else self._clock.rng.random

    def next_delay(self) -> float:
        """The seconds to wait before the next retry."""
        now = self._clock.monotonic()
        if self._last is not None and now - self._last > self.reset_after:
            self._current = self.initial
        self._last = now
        delay = self._current
        self._current = min(self._current * self.factor, self.maximum)
        return min(delay * (1.0 + self.jitter * self._rand()), self.maximum)


def _is_gone(exc: BaseException) -> bool:
    return getattr(exc, "code", None) == 410


class Reflector:
    """List + watch one kind into a :class:`ReflectorSink` (see the module docstring).

    ``client`` is a :class:`kube_runtime.client.Client` or anything with its ``list`` and
    ``watch`` methods (:class:`ListerWatcher`). ``backoff`` defaults to a fresh
    :class:`ExponentialBackoff`. ``metrics_label`` replaces the kind in the ``kind`` label of
    its metrics (the sharder's metadata watches count apart from the controllers').
    ``clock`` (a :class:`~kube_runtime.clock.Clock`; None: the clock current when the
    reflector is made) times the default backoff and short watches and draws the watch
    timeouts' jitter; the ``stop`` event given to :meth:`run` should come from the same clock
    (its backoff waits are ``stop.wait``).
    """

    def __init__(
        self,
        client: ListerWatcher,
        kind: KindLike,
        sink: ReflectorSink,
        *,
        namespace: str | None = None,
        label_selector: str | dict[str, str] | None = None,
        field_selector: str | None = None,
        page_size: int = 500,
        backoff: BackoffPolicy | None = None,
        min_watch_timeout: float = 300.0,
        metrics_label: str | None = None,
        clock: Clock | None = None,
    ) -> None:
        self._clock = resolve(clock, "Reflector")
        self.client = client
        self.kind: Kind = as_kind(kind)
        self.sink = sink
        self.namespace = namespace
        self.label_selector = label_selector
        self.field_selector = field_selector
        self.page_size = page_size
        self.backoff: BackoffPolicy = (
            backoff if backoff is not None else ExponentialBackoff(clock=self._clock)
        )
        self.min_watch_timeout = min_watch_timeout
        self._last_rv: str | None = None
        self._synced = False
        self._lock = threading.Lock()
        self._watch: Any = None
        self._closing = False
        self._events_since_list = 0
        kind_label = metrics_label or str(self.kind)
        self._lists_metric = metrics.INFORMER_LISTS.labels(kind=kind_label)
        self._event_metrics = {
            t: metrics.INFORMER_EVENTS.labels(kind=kind_label, type=t)
            for t in ("ADDED", "MODIFIED", "DELETED", "BOOKMARK")
        }

    @property
    def last_sync_resource_version(self) -> str | None:
        """The resourceVersion of the last list or event seen (None before the first list)."""
        return self._last_rv

    @property
    def has_synced(self) -> bool:
        """True once the first list has been handed to the sink."""
        return self._synced

    def run(self, stop: threading.Event) -> None:
        """List and watch until ``stop`` is set (never raises; errors are logged and retried)."""
        need_list = True
        reported: str | None = None  # the failure last logged: repeats are logged at debug
        while not stop.is_set():
            try:
                if need_list:
                    self._list()
                    need_list = False
                    reported = None
                self._watch_once(stop)
            except Exception as exc:
                if stop.is_set():
                    break
                if _is_gone(exc):
                    log.info("%s: watch from resourceVersion %s expired, relisting: %s",
                             self.kind, self._last_rv, exc)  # fmt: skip
                    need_list = True
                    if self._events_since_list:
                        continue  # right after a list, a 410 must not make us spin: back off
                else:
                    reported = _report_failure(self.kind, need_list, exc, reported)
                stop.wait(self.backoff.next_delay())
        log.debug("%s: reflector stopped", self.kind)

    def close_watch(self) -> None:
        """Close the open watch stream, if any (from any thread); used when stopping."""
        with self._lock:
            self._closing = True
            watch = self._watch
        if watch is not None:
            watch.close()

    # --- steps -------------------------------------------------------------------------------

    def _selectors(self) -> dict[str, Any]:
        """The list and watch keywords that select this reflector's objects."""
        return {"label_selector": self.label_selector, "field_selector": self.field_selector}

    def _list(self) -> None:
        result = self.client.list(
            self.kind, self.namespace, limit=self.page_size, **self._selectors()
        )
        self._lists_metric.inc()
        items = result.get("items") or []
        rv = meta.resource_version(result)
        self.sink.replace(items, rv)
        self._last_rv = rv
        self._events_since_list = 0
        self._synced = True
        log.debug("%s: listed %d objects at resourceVersion %s", self.kind, len(items), rv)

    def _watch_once(self, stop: threading.Event) -> None:
        """Follow one watch stream to its end (or until ``stop``)."""
        clock = self._clock
        timeout = int(self.min_watch_timeout * (1.0 + clock.rng.random()))
        started = clock.monotonic()
        watch = self.client.watch(
            self.kind,
            self.namespace,
            resource_version=self._last_rv,
            allow_bookmarks=True,
            timeout_seconds=timeout,
            **self._selectors(),
        )
        with self._lock:
            closing = self._closing or stop.is_set()
            if not closing:
                self._watch = watch
        if closing:
            watch.close()
            return
        if getattr(self.sink, "shares_subtrees", False) and hasattr(watch, "loads"):
            watch.loads = decode_watch_event
        count = 0
        try:
            count = self._follow(watch, stop)
        finally:
            with self._lock:
                self._watch = None
            watch.close()
        if count == 0 and not stop.is_set() and clock.monotonic() - started < _SHORT_WATCH_SECONDS:
            raise ConnectionError("very short watch: the stream closed at once without events")

    def _follow(self, watch: WatchStream, stop: threading.Event) -> int:
        """Hand the stream's events to the sink until it ends or ``stop``; returns how many.

        When the stream says how many events it holds already read (``buffered``, as
        :class:`kube_runtime.client.Watch`), the sink's ``flush()`` and the event metrics run
        once that reaches 0, i.e. once per socket read; otherwise after every event.
        """
        sink = self.sink
        add, update, delete = sink.add, sink.update, sink.delete
        flush = getattr(sink, "flush", None)
        batched = hasattr(watch, "buffered")
        counts = dict.fromkeys(self._event_metrics, 0)
        count = unflushed = 0
        try:
            for event in watch:
                if stop.is_set():
                    break
                event_type, obj = event.type, event.object
                if event_type == "ADDED":
                    add(obj)
                elif event_type == "MODIFIED":
                    update(obj)
                elif event_type == "DELETED":
                    delete(obj)
                elif event_type != "BOOKMARK":
                    log.warning(
                        "%s: ignoring watch event of unknown type %r", self.kind, event_type
                    )
                    event_type = ""
                if event_type:
                    counts[event_type] += 1
                    metadata = obj.get("metadata")
                    rv = metadata.get("resourceVersion") if isinstance(metadata, dict) else None
                    if rv:
                        self._last_rv = rv
                    count += 1
                    self._events_since_list += 1
                    unflushed += 1
                if not batched or not watch.buffered:  # type: ignore[attr-defined]
                    self._flush(flush, counts)
                    unflushed = 0
        finally:
            if unflushed:
                self._flush(flush, counts)
        return count

    def _flush(self, flush: Callable[[], Any] | None, counts: dict[str, int]) -> None:
        if flush is not None:
            flush()
        for event_type, n in counts.items():
            if n:
                self._event_metrics[event_type].inc(n)
                counts[event_type] = 0


def _report_failure(kind: object, listing: bool, exc: Exception, reported: str | None) -> str:
    """Log a failed list or watch once: a failure with the same text as the last one logged
    goes to debug (the retries go on with backoff). A 403 says what to grant. Returns the
    text logged."""
    verb = "list" if listing else "watch"
    text = f"{kind}: {verb} failed: {exc}"
    if text == reported:
        log.debug("%s (again)", text)
    elif getattr(exc, "code", None) == 403:
        log.error(
            "%s; retrying with backoff. The controller's identity needs list and watch on "
            "this kind (`kube-runtime rbac CONTROLLER` prints the rules it declares)",
            text,
        )
    else:
        log.warning("%s", text)
    return text
