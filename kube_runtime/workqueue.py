"""A work queue with client-go semantics: deduplicating, delaying, rate limiting.

The contract (client-go ``util/workqueue``), which controllers rely on:

* **Dedup while queued.** Adding an item that is already waiting in the queue does nothing:
  it is handed out once.
* **One worker per item.** Between ``get`` and ``done`` an item is *processing*; it is never
  handed to a second worker. Adding it meanwhile marks it *dirty*; ``done`` then puts it back
  at the end of the queue, so the change that arrived during processing is not lost.
* **FIFO** otherwise.
* **Shutdown.** After :meth:`WorkQueue.shutdown` new adds are ignored, pending delayed adds
  are dropped, and blocked ``get`` calls wake up. Items already queued are still handed out
  (as client-go's ``Get`` does) until the queue is empty; from then on ``get`` returns
  ``(None, True)`` and workers should exit. :meth:`WorkQueue.shutdown_with_drain` also blocks
  until every item being processed has been marked ``done``.
* **Delaying.** ``add_after(item, seconds)`` adds the item once the delay has passed; for an
  item already waiting, the earlier deadline wins. There is no timer thread: blocked getters
  wait on the condition variable with a timeout up to the earliest deadline, and every
  ``add``/``get``/``len`` first moves due items into the queue.
* **Time.** Delays, timeouts, the default rate limiter and the metrics run on the queue's
  :class:`~kube_runtime.clock.Clock` (``clock=``, else the clock current when the queue is
  built): under a :class:`~kube_runtime.clock.FakeClock` a delayed item is due when the test
  steps the clock, under a :class:`~kube_runtime.clock.SimClock` a 1,000 s backoff passes in
  virtual time.
* **Rate limiting.** ``add_rate_limited(item)`` is ``add_after(item, limiter.when(item))``;
  ``forget(item)`` resets the limiter's memory of the item (call it after a success);
  ``num_requeues(item)`` says how many failures it remembers.

A named queue (``WorkQueue(name="web")``) exports the ``workqueue_*`` metrics of
:mod:`kube_runtime.metrics` with client-go's definitions: ``adds`` counts adds that queue an
item (not deduplicated ones), ``depth`` the items added and not yet handed out, ``retries``
every ``add_after`` (so every rate-limited add). Depth, unfinished work and the longest
running processor are computed when the registry is scraped; the duration histograms are
observed outside the queue's lock.
"""

from __future__ import annotations

import heapq
import itertools
import math
import threading
import weakref
from collections import deque
from collections.abc import Callable, Hashable
from typing import Any, Generic, Protocol, TypeAlias, TypeVar

from kube_runtime import clock as _clock
from kube_runtime import metrics

__all__ = [
    "BucketRateLimiter",
    "ItemExponentialFailureRateLimiter",
    "ItemFastSlowRateLimiter",
    "MaxOfRateLimiter",
    "RateLimiter",
    "WorkQueue",
    "default_controller_rate_limiter",
]

T = TypeVar("T", bound=Hashable)

# What ``clock=`` accepts: a Clock, None for the current clock, or (deprecated, for one
# release) a bare function returning monotonic seconds.
_ClockArg: TypeAlias = "_clock.Clock | Callable[[], float] | None"

# --- rate limiters -------------------------------------------------------------------------


class RateLimiter(Protocol):
    """Decides how long an item waits before it is retried. Implementations are thread-safe."""

    def when(self, item: Hashable) -> float:
        """Record one more failure of ``item``; return the seconds it should wait."""

    def forget(self, item: Hashable) -> None:
        """Stop tracking ``item`` (it succeeded, or was given up on)."""

    def num_requeues(self, item: Hashable) -> int:
        """How many failures of ``item`` are remembered."""


class _PerItemFailures:
    """The failure count per item that per-item rate limiters keep (thread-safe)."""

    def __init__(self) -> None:
        self._failures: dict[Hashable, int] = {}
        self._lock = threading.Lock()

    def _count_failure(self, item: Hashable) -> int:
        """Record one more failure of ``item``; the count before it."""
        with self._lock:
            before = self._failures.get(item, 0)
            self._failures[item] = before + 1
        return before

    def forget(self, item: Hashable) -> None:
        """Stop tracking ``item``."""
        with self._lock:
            self._failures.pop(item, None)

    def num_requeues(self, item: Hashable) -> int:
        """How many failures of ``item`` are remembered."""
        with self._lock:
            return self._failures.get(item, 0)


class ItemExponentialFailureRateLimiter(_PerItemFailures):
    """Per item: ``base * 2**failures`` seconds, capped at ``maximum`` (never overflows)."""

    def __init__(self, base: float = 0.005, maximum: float = 1000.0) -> None:
        super().__init__()
        self.base = base
        self.maximum = maximum

    def when(self, item: Hashable) -> float:
        exponent = self._count_failure(item)
        try:
            delay = math.ldexp(self.base, exponent)
        except OverflowError:
            return self.maximum
        return min(delay, self.maximum)


class ItemFastSlowRateLimiter(_PerItemFailures):
    """Per item: ``fast_delay`` for the first ``max_fast_attempts`` failures, then ``slow_delay``."""

    def __init__(self, fast_delay: float, slow_delay: float, max_fast_attempts: int) -> None:
        super().__init__()
        self.fast_delay = fast_delay
        self.slow_delay = slow_delay
        self.max_fast_attempts = max_fast_attempts

    def when(self, item: Hashable) -> float:
        failures = self._count_failure(item) + 1
        return self.fast_delay if failures <= self.max_fast_attempts else self.slow_delay


class BucketRateLimiter:
    """Overall (not per item) token bucket: ``qps`` tokens per second, at most ``burst`` saved.

    ``when`` reserves a token and returns how long until it is available, as
    ``golang.org/x/time/rate``'s ``Reserve().Delay()``: the bucket starts full, and the balance
    may go negative, so reservations made in a burst get increasing delays. ``forget`` does
    nothing and ``num_requeues`` is always 0: the bucket knows no items. The bucket refills on
    ``clock`` (None: the clock current when it is built).
    """

    def __init__(self, qps: float = 10.0, burst: int = 100, clock: _ClockArg = None) -> None:
        if not qps > 0:
            raise ValueError(f"qps must be positive, got {qps}")
        if burst < 1:
            raise ValueError(f"burst must be at least 1, got {burst}")
        self.qps = qps
        self.burst = burst
        self._clock = _clock.resolve(clock, "BucketRateLimiter")
        self._monotonic = self._clock.monotonic
        self._tokens = float(burst)
        self._last = self._monotonic()
        self._lock = threading.Lock()

    def when(self, item: Hashable) -> float:
        if math.isinf(self.qps):
            return 0.0
        with self._lock:
            now = self._monotonic()
            elapsed = max(0.0, now - self._last)
            self._last = now
            self._tokens = min(float(self.burst), self._tokens + elapsed * self.qps) - 1.0
            tokens = self._tokens
        return 0.0 if tokens >= 0 else -tokens / self.qps

    def forget(self, item: Hashable) -> None:
        return None

    def num_requeues(self, item: Hashable) -> int:
        return 0


class MaxOfRateLimiter:
    """The longest wait any of ``limiters`` asks for; every limiter records every failure."""

    def __init__(self, *limiters: RateLimiter) -> None:
        if not limiters:
            raise ValueError("MaxOfRateLimiter needs at least one limiter")
        self.limiters = limiters

    def when(self, item: Hashable) -> float:
        return max([limiter.when(item) for limiter in self.limiters])

    def forget(self, item: Hashable) -> None:
        for limiter in self.limiters:
            limiter.forget(item)

    def num_requeues(self, item: Hashable) -> int:
        return max(limiter.num_requeues(item) for limiter in self.limiters)


def default_controller_rate_limiter(clock: _ClockArg = None) -> MaxOfRateLimiter:
    """client-go's default: per item 5 ms doubling up to 1000 s, overall 10 qps with burst 100
    (the bucket on ``clock``; None: the clock current now)."""
    return MaxOfRateLimiter(
        ItemExponentialFailureRateLimiter(0.005, 1000.0),
        BucketRateLimiter(
            qps=10.0, burst=100, clock=_clock.resolve(clock, "default_controller_rate_limiter")
        ),
    )


# --- metrics -------------------------------------------------------------------------------


class _QueueMetrics:
    """client-go's queue metrics for one named queue.

    The bookkeeping methods run under the queue's lock and are plain dict operations; the
    histogram observations they return are made by the caller after releasing the lock.
    Depth, unfinished work and the longest running processor are computed on scrape.
    """

    def __init__(
        self, name: str, clock: Callable[[], float], lock: threading.Lock, dirty: set[Any]
    ) -> None:
        self._clock = clock  # the queue's monotonic function
        self._lock = lock
        # Every add, get and done updates these: the lean updates (same samples).
        self._adds = metrics.lean_inc(metrics.QUEUE_ADDS.labels(name))
        self._retries = metrics.QUEUE_RETRIES.labels(name)
        self.latency = metrics.lean_observe(metrics.QUEUE_LATENCY.labels(name))
        """Observe how long an item waited in the queue."""
        self.work_duration = metrics.lean_observe(metrics.QUEUE_WORK_DURATION.labels(name))
        """Observe how long an item was processed."""
        self._dirty = dirty  # items added and not yet handed out: exactly the depth
        self._added_at: dict[Hashable, float] = {}
        self._started_at: dict[Hashable, float] = {}
        ref = weakref.ref(self)  # the process-global gauges must not keep a dropped queue alive

        def depth() -> float:
            target = ref()
            return len(target._dirty) if target is not None else 0.0

        def unfinished() -> float:
            target = ref()
            return target._in_flight()[0] if target is not None else 0.0

        def longest() -> float:
            target = ref()
            return target._in_flight()[1] if target is not None else 0.0

        metrics.QUEUE_DEPTH.labels(name).set_function(depth)
        metrics.QUEUE_UNFINISHED_WORK.labels(name).set_function(unfinished)
        metrics.QUEUE_LONGEST_RUNNING.labels(name).set_function(longest)

    def add(self, item: Hashable) -> None:
        self._adds()
        if item not in self._added_at:
            self._added_at[item] = self._clock()

    def get(self, item: Hashable) -> float | None:
        """Start timing ``item``'s processing; return how long it was queued."""
        now = self._clock()
        self._started_at[item] = now
        added = self._added_at.pop(item, None)
        return None if added is None else now - added

    def done(self, item: Hashable) -> float | None:
        """Return how long ``item`` was processed."""
        started = self._started_at.pop(item, None)
        return None if started is None else self._clock() - started

    def retry(self) -> None:
        self._retries.inc()

    def _in_flight(self) -> tuple[float, float]:
        """(total seconds spent so far by items being processed, the longest of them)."""
        with self._lock:
            now = self._clock()
            ages = [now - started for started in self._started_at.values()]
        return sum(ages), max(ages, default=0.0)


# --- the queue -----------------------------------------------------------------------------

_Waiting = tuple[float, int, T]  # (ready at, tie-breaker, item): items are never compared


class WorkQueue(Generic[T]):
    """Deduplicating, delaying, rate-limited work queue (see the module docstring).

    ``name`` turns on the ``workqueue_*`` metrics; ``rate_limiter`` defaults to
    :func:`default_controller_rate_limiter`; ``clock`` (a :class:`~kube_runtime.clock.Clock`;
    None: the clock current now) times delayed adds, ``get`` timeouts, the default limiter and
    the metrics, and blocked getters wait on it. All methods are thread-safe.
    """

    def __init__(
        self,
        name: str | None = None,
        rate_limiter: RateLimiter | None = None,
        clock: _ClockArg = None,
    ) -> None:
        self.name = name
        self._clock = _clock.resolve(clock, "WorkQueue")
        self._monotonic = monotonic = self._clock.monotonic
        self._rate_limiter = (
            default_controller_rate_limiter(self._clock) if rate_limiter is None else rate_limiter
        )
        self._lock = threading.Lock()
        self._ready = self._clock.condition(self._lock)  # getters wait here
        self._idle = self._clock.condition(self._lock)  # shutdown_with_drain waits here
        self._queue: deque[T] = deque()
        self._dirty: set[T] = set()
        self._processing: set[T] = set()
        self._blocked_getters = 0
        self._shutting_down = False
        self._drain = False
        self._waiting: list[_Waiting[T]] = []  # heap by ready time; may hold stale entries
        self._deadline: dict[T, _Waiting[T]] = {}  # item -> its live heap entry
        self._sequence = itertools.count()
        self._metrics = _QueueMetrics(name, monotonic, self._lock, self._dirty) if name else None

    @property
    def clock(self) -> _clock.Clock:
        """The clock the queue's delays and waits run on."""
        return self._clock

    # -- basic queue

    def add(self, item: T) -> None:
        """Queue ``item`` unless it is already queued; if it is processing, queue it on ``done``."""
        with self._lock:
            if self._waiting:
                self._fire_due()
            self._add(item)

    def get(self, timeout: float | None = None) -> tuple[T | None, bool]:
        """Block until an item is available and hand it out: ``(item, False)``.

        Returns ``(None, True)`` once the queue is shut down and empty (the worker should
        exit), and ``(None, False)`` if ``timeout`` seconds pass with nothing to hand out.
        The caller must call :meth:`done` with the item when it has finished with it.
        """
        monotonic = self._monotonic
        deadline = None if timeout is None else monotonic() + timeout
        with self._lock:
            while True:
                if self._waiting:
                    self._fire_due()
                if self._queue:
                    break
                if self._shutting_down:
                    return None, True
                wait = None
                if deadline is not None:
                    wait = deadline - monotonic()
                    if wait <= 0:
                        return None, False
                if self._waiting:
                    due_in = self._waiting[0][0] - monotonic()
                    wait = due_in if wait is None else min(wait, due_in)
                self._blocked_getters += 1
                try:
                    self._ready.wait(wait)
                finally:
                    self._blocked_getters -= 1
            item = self._queue.popleft()
            self._processing.add(item)
            self._dirty.discard(item)
            if self._metrics is None:
                return item, False
            waited = self._metrics.get(item)
        if waited is not None:
            self._metrics.latency(waited)
        return item, False

    def done(self, item: T) -> None:
        """Mark ``item`` finished; requeue it if it was added while processing.

        Calling it for an item that is not being processed does nothing.
        """
        worked = None
        with self._lock:
            if item not in self._processing:
                return
            if self._metrics is not None:
                worked = self._metrics.done(item)
            self._processing.discard(item)
            if item in self._dirty:
                self._queue.append(item)
                if self._blocked_getters:
                    self._ready.notify()
            elif self._drain and not self._processing:
                self._idle.notify_all()
        if worked is not None and self._metrics is not None:
            self._metrics.work_duration(worked)

    def __len__(self) -> int:
        """Items waiting to be handed out (informational: never gate get/add on it)."""
        with self._lock:
            if self._waiting:
                self._fire_due()
            return len(self._queue)

    def shutdown(self) -> None:
        """Ignore new adds, drop pending delayed adds, wake every blocked getter (and a drain)."""
        with self._lock:
            self._drain = False
            self._shut()
            self._idle.notify_all()

    def shutdown_with_drain(self) -> None:
        """:meth:`shutdown`, then block until every item being processed is ``done``.

        Workers must keep calling ``done``; a later :meth:`shutdown` from another thread ends
        the wait early.
        """
        with self._lock:
            self._drain = True
            self._shut()
            while self._processing and self._drain:
                self._idle.wait()

    @property
    def shutting_down(self) -> bool:
        with self._lock:
            return self._shutting_down

    # -- delaying

    def add_after(self, item: T, seconds: float) -> None:
        """Add ``item`` once ``seconds`` have passed (now if ``seconds <= 0``).

        If the item is already waiting, the earlier of the two deadlines is kept. Ignored once
        the queue is shutting down.
        """
        with self._lock:
            if self._shutting_down:
                return
            if self._metrics is not None:
                self._metrics.retry()
            if seconds <= 0:
                if self._waiting:
                    self._fire_due()
                self._add(item)
                return
            ready_at = self._monotonic() + seconds
            current = self._deadline.get(item)
            if current is not None and current[0] <= ready_at:
                return
            entry = (ready_at, next(self._sequence), item)
            self._deadline[item] = entry
            heapq.heappush(self._waiting, entry)
            if self._waiting[0] is entry and self._blocked_getters:
                # A getter may be sleeping until a later deadline (or forever): wake one to
                # re-arm its timeout on the new earliest deadline.
                self._ready.notify()

    # -- rate limiting

    def add_rate_limited(self, item: T) -> None:
        """``add_after(item, rate_limiter.when(item))``: counts a failure of ``item``."""
        self.add_after(item, self._rate_limiter.when(item))

    def forget(self, item: T) -> None:
        """Clear the rate limiter's failure history of ``item`` (does not remove it from the queue)."""
        self._rate_limiter.forget(item)

    def num_requeues(self, item: T) -> int:
        """Failures of ``item`` the rate limiter remembers."""
        return self._rate_limiter.num_requeues(item)

    # -- internals (called with the lock held)

    def _add(self, item: T) -> None:
        if self._shutting_down or item in self._dirty:
            return
        if self._metrics is not None:
            self._metrics.add(item)
        self._dirty.add(item)
        if item in self._processing:
            return
        self._queue.append(item)
        if self._blocked_getters:
            self._ready.notify()

    def _fire_due(self) -> None:
        now = self._monotonic()
        waiting = self._waiting
        while waiting and waiting[0][0] <= now:
            entry = heapq.heappop(waiting)
            item = entry[2]
            if self._deadline.get(item) is entry:
                del self._deadline[item]
                self._add(item)

    def _shut(self) -> None:
        self._shutting_down = True
        self._waiting.clear()
        self._deadline.clear()
        self._ready.notify_all()
