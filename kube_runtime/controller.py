"""A controller: sources -> predicates -> handler -> work queue -> workers -> reconciler.

Mirrors controller-runtime's ``internal/controller``. Contract:

* Events from every watched source pass the watch's predicates, then its handler turns them
  into :class:`~kube_runtime.reconcile.Request` s on one deduplicating, rate-limited queue.
* ``max_concurrent_reconciles`` worker threads take requests; the queue guarantees one request
  is never reconciled by two workers at once.
* The reconcile result is applied as described in :mod:`kube_runtime.reconcile`. An exception
  never kills a worker: it is logged (one line each time; an exception that is not an API
  error also with its traceback, at most once a minute per object and error, see
  :class:`TracebackLimiter`), counted, and the request is retried with per-item exponential
  backoff (client-go's defaults). A :class:`~kube_runtime.reconcile.TerminalError` is not
  retried.
* Every log record made during a reconcile carries the controller name and the object key
  (see :mod:`kube_runtime.logs`).
* :meth:`start` blocks: it starts the sources, waits for their caches to sync (failing after
  ``cache_sync_timeout``), runs the workers, and on ``stop`` shuts the queue (no new intake),
  lets in-flight reconciles finish, and returns.
* Time: the queue's delays and backoff, the cache-sync timeout and the traceback limiter run on
  the controller's :class:`~kube_runtime.clock.Clock` (``clock=``; the builder passes the
  manager's). The reconcile duration metric measures the machine, in real time.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from cachetools import TTLCache

from kube_runtime import clock as _clock
from kube_runtime import metrics
from kube_runtime.client.errors import ApiError
from kube_runtime.handlers import EventHandler
from kube_runtime.logs import reconcile_context
from kube_runtime.meta import ObjView as Obj
from kube_runtime.predicates import Predicate
from kube_runtime.reconcile import Reconciler, Request, Result, TerminalError
from kube_runtime.source import Source
from kube_runtime.workqueue import RateLimiter, WorkQueue, default_controller_rate_limiter

__all__ = [
    "CacheSyncTimeout",
    "Controller",
    "TracebackLimiter",
]

#: How often a controller waiting for its caches to sync checks whether it was stopped.
_SYNC_POLL = 0.1
log = logging.getLogger(__name__)


class TracebackLimiter:
    """Says whether a failure deserves its traceback in the log: the first time its key is
    seen within ``period`` seconds (a failure repeated by the retries of one object logs its
    traceback once a minute, and one line each time). At most ``size`` keys are remembered.
    The period runs on ``clock`` (a :class:`~kube_runtime.clock.Clock`; None: the current
    clock; a bare monotonic function still works for one release, deprecated)."""

    def __init__(
        self,
        period: float = 60.0,
        size: int = 10_000,
        clock: _clock.Clock | Callable[[], float] | None = None,
    ) -> None:
        timer = _clock.resolve(clock, "TracebackLimiter").monotonic
        self._seen: TTLCache[Any, bool] = TTLCache(maxsize=size, ttl=period, timer=timer)
        self._lock = threading.Lock()

    def first(self, key: Any) -> bool:
        """True when ``key`` was not seen within the period (and remember it now)."""
        with self._lock:
            if key in self._seen:
                return False
            self._seen[key] = True
            return True


class CacheSyncTimeout(RuntimeError):
    """A source's cache did not sync in time; the controller does not start its workers."""


@dataclass
class _Watch:
    """One source with its handler and predicates; the source's events land here."""

    controller: Controller
    source: Source
    handler: EventHandler
    predicates: tuple[Predicate, ...]

    def on_create(self, obj: Obj) -> None:
        if all(p.create(obj) for p in self.predicates):
            self.handler.create(obj, self.controller.queue)

    def on_update(self, old: Obj, new: Obj) -> None:
        if all(p.update(old, new) for p in self.predicates):
            self.handler.update(old, new, self.controller.queue)

    def on_delete(self, obj: Obj) -> None:
        if all(p.delete(obj) for p in self.predicates):
            self.handler.delete(obj, self.controller.queue)

    def on_generic(self, obj: Obj) -> None:
        if all(p.generic(obj) for p in self.predicates):
            self.handler.generic(obj, self.controller.queue)


def _is_api_failure(error: BaseException) -> bool:
    """Whether ``error`` is, or was raised from, an API error (not a reconciler bug)."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        if isinstance(current, ApiError):
            return True
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return False


class Controller:
    """Runs one reconciler over the requests its watches produce (see the module docstring).

    ``clock`` (a :class:`~kube_runtime.clock.Clock`; None: the clock current now) times the
    work queue, the default rate limiter, the cache-sync timeout and the traceback limiter.
    """

    def __init__(
        self,
        name: str,
        reconciler: Reconciler,
        *,
        max_concurrent_reconciles: int = 1,
        rate_limiter: RateLimiter | None = None,
        need_leader_election: bool = True,
        cache_sync_timeout: float = 120.0,
        clock: _clock.Clock | None = None,
    ) -> None:
        if max_concurrent_reconciles < 1:
            raise ValueError("max_concurrent_reconciles must be at least 1")
        self.name = name
        self.reconciler = reconciler
        self.max_concurrent_reconciles = max_concurrent_reconciles
        self.need_leader_election = need_leader_election
        self.cache_sync_timeout = cache_sync_timeout
        self._clock = _clock.resolve(clock, "Controller")
        self.queue: WorkQueue[Request] = WorkQueue(
            name=name,
            rate_limiter=rate_limiter or default_controller_rate_limiter(self._clock),
            clock=self._clock,
        )
        self._watches: list[_Watch] = []
        self._started = self._clock.event()
        self._workers: list[threading.Thread] = []
        self._active = 0
        self._active_lock = threading.Lock()
        self._tracebacks = TracebackLimiter(clock=self._clock)
        self._bound: _BoundMetrics | None = None
        """This controller's series of the per-reconcile metrics (made when first used)."""

    # --- wiring --------------------------------------------------------------------------------
    def watch(self, source: Source, handler: EventHandler, *predicates: Predicate) -> None:
        """Feed ``source`` 's events through ``predicates`` into ``handler`` (before or after start)."""
        w = _Watch(self, source, handler, predicates)
        self._watches.append(w)
        if self._started.is_set():
            source.start(w, self._stop)

    @property
    def started(self) -> bool:
        """Whether :meth:`start` was called."""
        return self._started.is_set()

    @property
    def clock(self) -> _clock.Clock:
        """The clock the controller's queue, backoff and timeouts run on."""
        return self._clock

    # --- running -------------------------------------------------------------------------------
    def _init_metrics(self) -> None:
        """Export every per-controller series at 0 before the first reconcile (as
        controller-runtime's ``initMetrics``), so dashboards and alerts see errors, panics
        and each result from the start instead of "no data"."""
        name = self.name
        for result in ("error", "requeue_after", "requeue", "success"):
            metrics.RECONCILE_TOTAL.labels(name, result).inc(0)
        metrics.RECONCILE_ERRORS.labels(name).inc(0)
        metrics.TERMINAL_RECONCILE_ERRORS.labels(name).inc(0)
        metrics.RECONCILE_PANICS.labels(name).inc(0)
        metrics.ACTIVE_WORKERS.labels(name).set(0)
        metrics.MAX_CONCURRENT_RECONCILES.labels(name).set(self.max_concurrent_reconciles)
        self._metrics()

    def _metrics(self) -> _BoundMetrics:
        """The series every reconcile updates, looked up once (a ``labels()`` call costs more
        than the update)."""
        bound = self._bound
        if bound is None:
            bound = self._bound = _BoundMetrics(self.name)
        return bound

    def start(self, stop: threading.Event) -> None:
        """Run until ``stop`` is set (see the module docstring). Raises CacheSyncTimeout."""
        if self._started.is_set():
            raise RuntimeError(f"controller {self.name!r} was already started")
        self._stop = stop
        self._started.set()
        self._init_metrics()
        for w in self._watches:
            w.source.start(w, stop)
        if not self._wait_for_sync(stop):
            return  # stopped before the caches synced: nothing was started
        metrics.MAX_CONCURRENT_RECONCILES.labels(self.name).set(self.max_concurrent_reconciles)
        log.info("controller %s: starting %d worker(s)", self.name, self.max_concurrent_reconciles)
        for i in range(self.max_concurrent_reconciles):
            t = threading.Thread(target=self._worker, name=f"{self.name}-worker-{i}", daemon=True)
            t.start()
            self._workers.append(t)
        stop.wait()
        log.info("controller %s: stopping; waiting for in-flight reconciles", self.name)
        self.queue.shutdown()
        for t in self._workers:
            t.join()
        log.info("controller %s: stopped", self.name)

    def _wait_for_sync(self, stop: threading.Event) -> bool:
        """Wait for every source to sync; False when ``stop`` is set first (the queue is shut
        down), ``CacheSyncTimeout`` after ``cache_sync_timeout`` (on the controller's clock)."""
        monotonic = self._clock.monotonic
        deadline = monotonic() + self.cache_sync_timeout
        for w in self._watches:
            while not w.source.wait_for_sync(min(_SYNC_POLL, max(0.0, deadline - monotonic()))):
                if stop.is_set():
                    self.queue.shutdown()
                    return False
                if monotonic() >= deadline:
                    self.queue.shutdown()
                    raise CacheSyncTimeout(
                        f"controller {self.name!r}: timed out after {self.cache_sync_timeout:.0f}s "
                        f"waiting for {w.source!r} to sync; check the API server and RBAC "
                        "(list/watch)"
                    )
        return True

    def _worker(self) -> None:
        while True:
            item, shutdown = self.queue.get()
            if shutdown:
                return
            assert item is not None
            active = self._metrics().active
            with self._active_lock:
                self._active += 1
                active(self._active)
            try:
                self._reconcile_item(item)
            finally:
                self.queue.done(item)
                with self._active_lock:
                    self._active -= 1
                    active(self._active)

    def _reconcile_item(self, request: Request) -> None:
        """Reconcile one request and apply the result contract to the queue."""
        # The duration metric measures the machine (real time), also under a simulated clock.
        started = time.monotonic()
        bound = self._metrics()
        # 12 random hex digits (what uuid4().hex[:12] gives, for less)
        with reconcile_context(self.name, request.key, os.urandom(6).hex()):
            try:
                result = self.reconciler.reconcile(request) or Result()
            except TerminalError as e:
                metrics.TERMINAL_RECONCILE_ERRORS.labels(self.name).inc()
                metrics.RECONCILE_ERRORS.labels(self.name).inc()
                metrics.RECONCILE_TOTAL.labels(self.name, "error").inc()
                log.error("reconcile failed permanently (not retried): %s", e)
                self.queue.forget(request)
                return
            except Exception as e:
                metrics.RECONCILE_ERRORS.labels(self.name).inc()
                panic = not _is_api_failure(e)
                if panic:
                    # Not an API failure: most likely a bug in the reconciler (Go's "panic").
                    metrics.RECONCILE_PANICS.labels(self.name).inc()
                metrics.RECONCILE_TOTAL.labels(self.name, "error").inc()
                log.error(
                    "reconcile failed (%d earlier failures in a row); retrying with backoff: "
                    "%s: %s",
                    self.queue.num_requeues(request),
                    type(e).__name__,
                    e,
                    exc_info=panic and self._tracebacks.first((request.key, type(e), str(e))),
                )
                self.queue.add_rate_limited(request)
                return
            finally:
                bound.time(time.monotonic() - started)
            if result.requeue_after and result.requeue_after > 0:
                self.queue.forget(request)
                self.queue.add_after(request, result.requeue_after)
                bound.requeue_after()
            elif result.requeue:
                self.queue.add_rate_limited(request)
                bound.requeue()
            else:
                self.queue.forget(request)
                bound.success()

    def __repr__(self) -> str:
        return f"Controller({self.name!r})"


class _BoundMetrics:
    """A controller's series of the metrics each reconcile updates (same samples as through
    ``labels()``; :func:`~kube_runtime.metrics.lean_inc`, :func:`~kube_runtime.metrics.lean_observe`)."""

    def __init__(self, name: str) -> None:
        self.active: Callable[[float], None] = metrics.ACTIVE_WORKERS.labels(name).set
        self.time = metrics.lean_observe(metrics.RECONCILE_TIME.labels(name))
        self.success = metrics.lean_inc(metrics.RECONCILE_TOTAL.labels(name, "success"))
        self.requeue = metrics.lean_inc(metrics.RECONCILE_TOTAL.labels(name, "requeue"))
        self.requeue_after = metrics.lean_inc(metrics.RECONCILE_TOTAL.labels(name, "requeue_after"))
