"""Recording ``v1`` Events about objects, asynchronously, with client-go's correlation rules.

Contract (client-go ``tools/record``: ``event.go``, ``events_cache.go``):

* :meth:`EventRecorder.event` never blocks on the API and never raises. It builds the Event
  (timestamps taken at call time) and puts it on a bounded queue (1000, as client-go's
  broadcaster); when the queue is full the event is dropped with a log line. Background
  writer threads (``writers``, 4 by default) write the queue to the API: the events about one
  involved object always go to the same writer, in the order they were recorded, so the
  correlation below sees them as client-go's single sink goroutine would; events about
  different objects are written side by side (a burst of creations no longer waits on one
  HTTP round trip per event and overflows the queue).
* Correlation before writing, per recorder:

  - spam filter: per involved object (and source), a token bucket of 25 events refilled at one
    per 5 minutes; events beyond it are dropped;
  - aggregation: from the 10th distinct message for the same object, type and reason within
    10 minutes on, events are written as a single Event whose message is prefixed
    ``(combined from similar events): `` (client-go's ``EventAggregate``: the 10th already is
    combined, and the set of messages is kept at 9 by dropping one at random);
  - deduplication: an event identical to one written less than 10 minutes earlier (same object,
    type, reason, message, source) patches that Event (``count + 1``, ``lastTimestamp``)
    instead of creating a new one; when the patch finds the Event gone it is created again.

* Writes failing with a transport error, 429 or 5xx are retried a few times with a short
  jittered backoff; then (or on any other API error) the event is dropped with a log line.

The involved object's reference carries apiVersion, kind, name, namespace, uid and
resourceVersion; the Event lives in the object's namespace (``default`` for cluster-scoped
objects) and is named ``<object name>.<hex nanoseconds>`` as client-go names them.
"""

from __future__ import annotations

import logging
import threading
import zlib
from collections import OrderedDict, deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from kube_runtime import meta
from kube_runtime.client.errors import (
    ApiConnectionError,
    NotFound,
    is_server_error,
    is_too_many_requests,
)
from kube_runtime.clock import Clock, resolve
from kube_runtime.kinds import Event, Kind
from kube_runtime.retry import Backoff, retry_on

if TYPE_CHECKING:
    from kube_runtime.client.interfaces import Writer

__all__ = [
    "EVENT_TYPES",
    "NORMAL",
    "WARNING",
    "EventRecorder",
    "Recorder",
    "object_reference",
]

log = logging.getLogger(__name__)

_name_lock = threading.Lock()
_last_name_ns = 0


def _name_stamp(now_ns: int) -> int:
    """``now_ns``, or one more than the last stamp any recorder of this process named an
    Event with: names stay unique across recorders even when the clock does not move (two
    managers in one process on a simulated clock record at the same virtual instant)."""
    global _last_name_ns
    with _name_lock:
        _last_name_ns = max(now_ns, _last_name_ns + 1)
        return _last_name_ns


NORMAL = "Normal"
WARNING = "Warning"
EVENT_TYPES = (NORMAL, WARNING)

MAX_QUEUED_EVENTS = 1000
"""Events waiting to be written before new ones are dropped (client-go's broadcaster)."""
DEFAULT_WRITERS = 4
"""Writer threads per recorder; one involved object's events always share one writer."""
CACHE_SIZE = 4096
"""Objects/keys remembered by each correlation cache (client-go's LRU size)."""
CORRELATION_WINDOW = 600.0
"""Seconds during which repeats are counted up and similar events aggregated."""
AGGREGATE_MAX_EVENTS = 10
"""The count of distinct messages for one object/type/reason at which events are combined
(client-go's ``maxEvents``: the 10th distinct message is already combined)."""
AGGREGATE_PREFIX = "(combined from similar events): "
SPAM_BURST = 25
SPAM_QPS = 1.0 / 300.0

_TIME_FORMAT = "%Y-%m-%dT%H:%M:%SZ"


@runtime_checkable
class Recorder(Protocol):
    """What a reconciler needs to record events: :class:`EventRecorder` (from
    ``manager.get_event_recorder(component)``) or a test double that keeps them in a list."""

    def event(self, obj: Any, type: str, reason: str, message: str) -> None:
        """Record an event of ``type`` (``Normal`` / ``Warning``) about ``obj`` (a dict or a
        resource model); never raises, never blocks on the API."""
        ...


def _format_time(epoch_seconds: float) -> str:
    return datetime.fromtimestamp(epoch_seconds, timezone.utc).strftime(_TIME_FORMAT)


def object_reference(obj: Any) -> dict[str, Any]:
    """The ``v1.ObjectReference`` of an object (dict, or model with ``model_dump``)."""
    kind = Kind.of(obj)
    metadata = meta.metadata(obj)  # once: a model is dumped by each accessor call
    if not metadata.get("name"):
        raise ValueError("object has no metadata.name")
    ref: dict[str, Any] = {
        "apiVersion": kind.api_version,
        "kind": kind.kind,
        "name": metadata["name"],
    }
    for field in ("namespace", "uid", "resourceVersion"):
        if metadata.get(field):
            ref[field] = metadata[field]
    return ref


class _LRU:
    """A small bounded mapping: the least recently used entry goes first."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._data: OrderedDict[tuple[str, ...], Any] = OrderedDict()

    def get(self, key: tuple[str, ...]) -> Any:
        value = self._data.get(key)
        if value is not None:
            self._data.move_to_end(key)
        return value

    def put(self, key: tuple[str, ...], value: Any) -> None:
        self._data[key] = value
        self._data.move_to_end(key)
        while len(self._data) > self._size:
            self._data.popitem(last=False)


@dataclass
class _Bucket:
    tokens: float
    stamp: float


@dataclass
class _Similar:
    messages: set[str]
    last: float


@dataclass
class _Observed:
    name: str
    namespace: str
    count: int
    first_timestamp: str
    last: float


def _object_key(event: Mapping[str, Any]) -> tuple[str, ...]:
    source = event.get("source") or {}
    ref = event["involvedObject"]
    return (
        source.get("component", ""),
        source.get("host", ""),
        ref.get("kind", ""),
        ref.get("namespace", ""),
        ref.get("name", ""),
        ref.get("uid", ""),
        ref.get("apiVersion", ""),
    )


def _similar_key(event: Mapping[str, Any]) -> tuple[str, ...]:
    return (*_object_key(event), event["type"], event["reason"])


def _identity_key(event: Mapping[str, Any]) -> tuple[str, ...]:
    return (*_similar_key(event), event["message"])


class _Correlator:
    """Spam filter, aggregation and dedup state (not thread-safe: the recorder serializes the
    calls; the state of one involved object is only ever used by that object's writer)."""

    def __init__(self, clock: Callable[[], float]) -> None:
        self._clock = clock
        self._buckets = _LRU(CACHE_SIZE)
        self._similar = _LRU(CACHE_SIZE)
        self._observed = _LRU(CACHE_SIZE)

    def allow(self, event: Mapping[str, Any]) -> bool:
        """Take a token from the involved object's bucket (False: spam, drop the event)."""
        now = self._clock()
        key = _object_key(event)
        bucket = self._buckets.get(key)
        if bucket is None:
            bucket = _Bucket(float(SPAM_BURST), now)
            self._buckets.put(key, bucket)
        bucket.tokens = min(float(SPAM_BURST), bucket.tokens + (now - bucket.stamp) * SPAM_QPS)
        bucket.stamp = now
        if bucket.tokens < 1.0:
            return False
        bucket.tokens -= 1.0
        return True

    def aggregate(self, event: dict[str, Any]) -> tuple[dict[str, Any], tuple[str, ...]]:
        """The event to write and its dedup key (a combined event once messages vary a lot)."""
        now = self._clock()
        key = _similar_key(event)
        similar = self._similar.get(key)
        if similar is None or now - similar.last > CORRELATION_WINDOW:
            similar = _Similar(set(), now)
            self._similar.put(key, similar)
        similar.messages.add(event["message"])
        similar.last = now
        if len(similar.messages) < AGGREGATE_MAX_EVENTS:
            return event, _identity_key(event)
        similar.messages.pop()  # never more than max - 1 kept (client-go's PopAny)
        combined = dict(event)
        combined["message"] = AGGREGATE_PREFIX + event["message"]
        return combined, key

    def previous(self, key: tuple[str, ...]) -> _Observed | None:
        """The Event written for ``key`` within the correlation window, if any."""
        seen: _Observed | None = self._observed.get(key)
        if seen is None or self._clock() - seen.last > CORRELATION_WINDOW:
            return None
        return seen

    def written(self, key: tuple[str, ...], event: Mapping[str, Any]) -> None:
        self._observed.put(
            key,
            _Observed(
                name=meta.name(event),
                namespace=meta.namespace(event),
                count=int(event.get("count") or 1),
                first_timestamp=event.get("firstTimestamp") or "",
                last=self._clock(),
            ),
        )


class EventRecorder:
    """Records Events for one component; see the module docstring for the contract.

    ``max_queued`` bounds the events waiting in all writers' queues together; ``writers`` is
    how many threads write them (one involved object's events always go through one writer, in
    order). ``max_tries`` and ``retry_delay`` bound the work spent on one event when writes fail.
    ``clock`` (a :class:`~kube_runtime.clock.Clock`; None: the current clock) stamps the events,
    names them and times the spam filter, the aggregation window and the retries; a bare
    epoch-seconds function still works for one release (deprecated).
    """

    def __init__(
        self,
        client: Writer,
        component: str,
        host: str | None = None,
        *,
        max_queued: int = MAX_QUEUED_EVENTS,
        writers: int = DEFAULT_WRITERS,
        max_tries: int = 3,
        retry_delay: float = 0.1,
        clock: Clock | Callable[[], float] | None = None,
    ) -> None:
        self.client = client
        self.component = component
        self.host = host
        self._max_queued = max_queued
        self._backoff = Backoff(
            steps=max(1, max_tries), duration=retry_delay, factor=2.0, jitter=1.0
        )
        self._clock = resolve(clock, "EventRecorder", wall=True)
        self._correlator = _Correlator(self._clock.time)
        self._correlator_lock = threading.Lock()
        self._lock = threading.Lock()
        self._queues: list[deque[dict[str, Any]]] = [deque() for _ in range(max(1, writers))]
        self._queued = 0  # in all queues
        self._pending = 0  # queued + being written
        self._cond = self._clock.condition(self._lock)  # flush() waits here
        self._ready = [self._clock.condition(self._lock) for _ in self._queues]
        self._closed = self._clock.event()
        self._threads = [
            threading.Thread(
                target=self._run,
                args=(index,),
                name=f"event-recorder-{component}" + (f"-{index}" if index else ""),
                daemon=True,
            )
            for index in range(len(self._queues))
        ]
        for thread in self._threads:
            thread.start()

    # --- the caller's side -------------------------------------------------------------------

    def event(self, obj: Any, type: str, reason: str, message: str) -> None:
        """Record an event about ``obj`` (``type`` is ``Normal`` or ``Warning``)."""
        self._record(obj, None, type, reason, message)

    def eventf(self, obj: Any, type: str, reason: str, fmt: str, *args: Any) -> None:
        """:meth:`event` with a ``%``-style message: ``fmt % args``."""
        self._record(obj, None, type, reason, _format(fmt, args))

    def annotated_eventf(
        self,
        obj: Any,
        annotations: Mapping[str, str],
        type: str,
        reason: str,
        fmt: str,
        *args: Any,
    ) -> None:
        """:meth:`eventf` with annotations set on the Event object."""
        self._record(obj, dict(annotations), type, reason, _format(fmt, args))

    def _record(
        self,
        obj: Any,
        annotations: dict[str, str] | None,
        type: str,
        reason: str,
        message: str,
    ) -> None:
        try:
            if type not in EVENT_TYPES:
                log.error("unsupported event type %r (reason %s): dropped", type, reason)
                return
            event = self._make_event(object_reference(obj), annotations, type, reason, message)
        except Exception as e:
            log.error("cannot record event %s for %r: %s", reason, _name_of(obj), e)
            return
        with self._cond:
            if self._closed.is_set():
                log.debug("event recorder closed; dropped event %s: %s", reason, message)
                return
            if self._queued >= self._max_queued:
                log.warning(
                    "event queue full (%d); dropped event %s for %s/%s: %s",
                    self._max_queued,
                    reason,
                    event["involvedObject"].get("namespace", ""),
                    event["involvedObject"]["name"],
                    message,
                )
                return
            index = self._writer_of(event)
            self._queues[index].append(event)
            self._queued += 1
            self._pending += 1
            self._ready[index].notify()

    def _writer_of(self, event: Mapping[str, Any]) -> int:
        """The writer of ``event``'s involved object (stable across runs: not ``hash()``)."""
        if len(self._queues) == 1:
            return 0
        ref = event["involvedObject"]
        key = f"{ref.get('namespace', '')}/{ref.get('name', '')}/{ref.get('uid', '')}"
        return zlib.crc32(key.encode()) % len(self._queues)

    def _make_event(
        self,
        ref: dict[str, Any],
        annotations: dict[str, str] | None,
        type: str,
        reason: str,
        message: str,
    ) -> dict[str, Any]:
        now = self._clock.time()
        now_ns = _name_stamp(int(now * 1_000_000_000))
        stamp = _format_time(now)
        source: dict[str, str] = {"component": self.component}
        if self.host:
            source["host"] = self.host
        metadata: dict[str, Any] = {
            "name": f"{ref['name']}.{now_ns:x}",
            "namespace": ref.get("namespace") or "default",
        }
        if annotations:
            metadata["annotations"] = annotations
        return {
            "apiVersion": Event.api_version,
            "kind": Event.kind,
            "metadata": metadata,
            "involvedObject": ref,
            "reason": reason,
            "message": message,
            "type": type,
            "source": source,
            "firstTimestamp": stamp,
            "lastTimestamp": stamp,
            "count": 1,
            "reportingComponent": self.component,
            "reportingInstance": self.host or "",
        }

    def flush(self, timeout: float | None = None) -> bool:
        """Wait until every queued event has been written or dropped; False on timeout."""
        monotonic = self._clock.monotonic
        deadline = None if timeout is None else monotonic() + timeout
        with self._cond:
            while self._pending:
                remaining = None if deadline is None else deadline - monotonic()
                if remaining is not None and remaining <= 0:
                    return False
                self._cond.wait(remaining)
        return True

    def close(self, timeout: float | None = 5.0) -> None:
        """Write what is queued (up to ``timeout``), then stop; later events are dropped."""
        self.flush(timeout)
        with self._cond:
            self._closed.set()
            dropped = self._queued
            for queue in self._queues:
                queue.clear()
            self._queued = 0
            self._pending -= dropped
            self._cond.notify_all()
            for ready in self._ready:
                ready.notify_all()
        if dropped:
            log.warning(
                "event recorder %s closed with %d events unwritten", self.component, dropped
            )
        for thread in self._threads:
            thread.join(timeout)

    # --- the writer thread ---------------------------------------------------------------------

    def _run(self, index: int) -> None:
        queue, ready = self._queues[index], self._ready[index]
        while True:
            with ready:
                while not queue and not self._closed.is_set():
                    ready.wait()
                if not queue:
                    return
                event = queue.popleft()
                self._queued -= 1
            try:
                self._correlate_and_write(event)
            except Exception:
                log.exception("event recorder %s: unexpected error; event dropped", self.component)
            finally:
                with self._cond:
                    self._pending -= 1
                    self._cond.notify_all()

    def _correlate_and_write(self, event: dict[str, Any]) -> None:
        with self._correlator_lock:
            allowed = self._correlator.allow(event)
            if allowed:
                event, key = self._correlator.aggregate(event)
                seen = self._correlator.previous(key)
        if not allowed:
            log.debug(
                "event %s for %s dropped by the spam filter",
                event["reason"],
                event["involvedObject"]["name"],
            )
            return
        if seen is None:
            written = self._write(event, patch=None)
        else:
            event = meta.deep_copy(event)
            event["metadata"]["name"] = seen.name
            event["count"] = seen.count + 1
            event["firstTimestamp"] = seen.first_timestamp
            patch = {
                "count": event["count"],
                "lastTimestamp": event["lastTimestamp"],
                "message": event["message"],
            }
            written = self._write(event, patch=patch)
        if written is not None:
            with self._correlator_lock:
                self._correlator.written(key, written)

    def _write(self, event: dict[str, Any], patch: dict[str, Any] | None) -> dict[str, Any] | None:
        """Patch (or create) with retries; the server's Event, or None when dropped."""
        name, namespace = event["metadata"]["name"], event["metadata"]["namespace"]
        pending_patch = patch

        def attempt() -> dict[str, Any]:
            nonlocal pending_patch
            if pending_patch is not None:
                try:
                    patched: dict[str, Any] = self.client.patch(
                        Event, name, pending_patch, namespace=namespace, patch_type="merge"
                    )
                    return patched
                except NotFound:
                    pending_patch = None  # the Event was deleted (TTL): create it again
            created: dict[str, Any] = self.client.create(event, namespace=namespace)
            return created

        def transient(e: BaseException) -> bool:
            return not self._closed.is_set() and (
                isinstance(e, ApiConnectionError) or is_server_error(e) or is_too_many_requests(e)
            )

        try:
            return retry_on(transient, attempt, self._backoff, sleep=self._sleep, clock=self._clock)
        except Exception as e:
            log.error(
                "unable to write event %s for %s/%s (dropped): %s",
                event["reason"],
                namespace,
                event["involvedObject"]["name"],
                e,
            )
            return None

    def _sleep(self, seconds: float) -> None:
        self._closed.wait(seconds)


def _format(fmt: str, args: tuple[Any, ...]) -> str:
    if not args:
        return fmt
    try:
        return fmt % args
    except (TypeError, ValueError):
        return f"{fmt} {' '.join(map(str, args))}"


def _name_of(obj: Any) -> str:
    if isinstance(obj, Mapping):
        return meta.name(obj) or "<unnamed>"
    return type(obj).__name__
