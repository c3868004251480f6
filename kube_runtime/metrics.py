"""Every Prometheus metric the framework exports, in one registry.

Names and labels follow controller-runtime (``controller_runtime_*``, ``workqueue_*``) and
client-go (``rest_client_*``, ``leader_election_master_status``) so dashboards written for Go
controllers work unchanged. ``REGISTRY`` is what the manager serves on ``/metrics``; register
your own collectors on it (``prometheus_client.Counter(..., registry=REGISTRY)``).

Metrics are process-global, as in Go: two managers in one process (tests) share them, told
apart by the ``controller`` / ``name`` labels.
"""

from __future__ import annotations

import functools
import math
from bisect import bisect_left
from collections.abc import Callable
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client.exposition import generate_latest

__all__ = [
    "ACTIVE_WORKERS",
    "INFORMER_EVENTS",
    "INFORMER_LISTS",
    "INFORMER_OBJECTS",
    "LEADER_STATUS",
    "MAX_CONCURRENT_RECONCILES",
    "QUEUE_ADDS",
    "QUEUE_DEPTH",
    "QUEUE_LATENCY",
    "QUEUE_LONGEST_RUNNING",
    "QUEUE_RETRIES",
    "QUEUE_UNFINISHED_WORK",
    "QUEUE_WORK_DURATION",
    "RECONCILE_ERRORS",
    "RECONCILE_PANICS",
    "RECONCILE_TIME",
    "RECONCILE_TOTAL",
    "REGISTRY",
    "REST_LATENCY",
    "REST_REQUESTS",
    "TERMINAL_RECONCILE_ERRORS",
    "Observe",
    "exposition",
    "lean_inc",
    "lean_observe",
]

REGISTRY = CollectorRegistry(auto_describe=True)

# Buckets as controller-runtime: reconcile time from 5 ms to 60 s.
_RECONCILE_BUCKETS = (
    0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7,
    0.8, 0.9, 1.0, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5, 6, 7, 8, 9, 10, 15,
    20, 25, 30, 40, 50, 60,
)  # fmt: skip
# Work queue durations: 1 us to 10 s, factor 10 (client-go's workqueue metrics provider).
_QUEUE_BUCKETS = tuple(10.0**e for e in range(-6, 2))
_REST_BUCKETS = (0.005, 0.025, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 15.0, 30.0, 60.0)

# --- controllers ---------------------------------------------------------------------------
RECONCILE_TOTAL = Counter(
    "controller_runtime_reconcile_total",
    "Total number of reconciliations per controller, by result "
    "(success, error, requeue, requeue_after).",
    ["controller", "result"],
    registry=REGISTRY,
)
RECONCILE_ERRORS = Counter(
    "controller_runtime_reconcile_errors_total",
    "Total number of reconciliation errors per controller.",
    ["controller"],
    registry=REGISTRY,
)
TERMINAL_RECONCILE_ERRORS = Counter(
    "controller_runtime_terminal_reconcile_errors_total",
    "Total number of terminal reconciliation errors per controller (not requeued).",
    ["controller"],
    registry=REGISTRY,
)
RECONCILE_PANICS = Counter(
    "controller_runtime_reconcile_panics_total",
    "Total number of reconciliations that raised an unexpected exception, per controller.",
    ["controller"],
    registry=REGISTRY,
)
RECONCILE_TIME = Histogram(
    "controller_runtime_reconcile_time_seconds",
    "Length of time per reconciliation per controller.",
    ["controller"],
    buckets=_RECONCILE_BUCKETS,
    registry=REGISTRY,
)
MAX_CONCURRENT_RECONCILES = Gauge(
    "controller_runtime_max_concurrent_reconciles",
    "Maximum number of concurrent reconciles per controller.",
    ["controller"],
    registry=REGISTRY,
)
ACTIVE_WORKERS = Gauge(
    "controller_runtime_active_workers",
    "Number of currently used workers per controller.",
    ["controller"],
    registry=REGISTRY,
)

# --- work queues (label "name" is the queue's name: the controller's name) -----------------
QUEUE_DEPTH = Gauge(
    "workqueue_depth", "Current depth of the work queue.", ["name"], registry=REGISTRY
)
QUEUE_ADDS = Counter(
    "workqueue_adds_total",
    "Total number of adds handled by the work queue.",
    ["name"],
    registry=REGISTRY,
)
QUEUE_LATENCY = Histogram(
    "workqueue_queue_duration_seconds",
    "How long in seconds an item stays in the work queue before being requested.",
    ["name"],
    buckets=_QUEUE_BUCKETS,
    registry=REGISTRY,
)
QUEUE_WORK_DURATION = Histogram(
    "workqueue_work_duration_seconds",
    "How long in seconds processing an item from the work queue takes.",
    ["name"],
    buckets=_QUEUE_BUCKETS,
    registry=REGISTRY,
)
QUEUE_UNFINISHED_WORK = Gauge(
    "workqueue_unfinished_work_seconds",
    "How many seconds of work has been done that is in progress and not yet observed by "
    "work_duration. Large values indicate stuck threads.",
    ["name"],
    registry=REGISTRY,
)
QUEUE_LONGEST_RUNNING = Gauge(
    "workqueue_longest_running_processor_seconds",
    "How many seconds has the longest running processor for the work queue been running.",
    ["name"],
    registry=REGISTRY,
)
QUEUE_RETRIES = Counter(
    "workqueue_retries_total",
    "Total number of retries handled by the work queue.",
    ["name"],
    registry=REGISTRY,
)

# --- REST client -----------------------------------------------------------------------------
REST_REQUESTS = Counter(
    "rest_client_requests_total",
    "Number of HTTP requests, partitioned by status code, method, and host.",
    ["code", "method", "host"],
    registry=REGISTRY,
)
REST_LATENCY = Histogram(
    "rest_client_request_duration_seconds",
    "Request latency in seconds, by verb and host.",
    ["verb", "host"],
    buckets=_REST_BUCKETS,
    registry=REGISTRY,
)

# --- informers ------------------------------------------------------------------------------
INFORMER_EVENTS = Counter(
    "kube_runtime_informer_events_total",
    "Watch events received by shared informers, by kind and event type "
    "(ADDED, MODIFIED, DELETED, BOOKMARK).",
    ["kind", "type"],
    registry=REGISTRY,
)
INFORMER_LISTS = Counter(
    "kube_runtime_informer_lists_total",
    "Full lists made by reflectors (the first sync and every relist), by kind.",
    ["kind"],
    registry=REGISTRY,
)
INFORMER_OBJECTS = Gauge(
    "kube_runtime_informer_objects",
    "Objects currently held in an informer's store, by kind.",
    ["kind"],
    registry=REGISTRY,
)

# --- leader election ------------------------------------------------------------------------
LEADER_STATUS = Gauge(
    "leader_election_master_status",
    "1 while this process holds the lease, 0 otherwise, by lease name.",
    ["name"],
    registry=REGISTRY,
)


def exposition() -> bytes:
    """The registry in the Prometheus text format (what ``/metrics`` serves)."""
    return generate_latest(REGISTRY)


Observe = Callable[[float], None]
"""A histogram child's ``observe`` (see :func:`lean_observe`)."""


def lean_observe(child: Any) -> Observe:
    """``child.observe`` for a labelled histogram's child (``HISTOGRAM.labels(...)``), for a
    caller that observes on every request: the same samples, without prometheus_client's
    per-call checks and its linear walk over the buckets (the bucket is found by bisection).

    Falls back to ``child.observe`` itself when the child is not laid out as this version
    of prometheus_client lays it out (a sum value and one value per upper bound, the last
    ``+Inf``), or has exemplars to keep.
    """
    bounds = getattr(child, "_upper_bounds", None)
    buckets = getattr(child, "_buckets", None)
    total = getattr(child, "_sum", None)
    if (
        not isinstance(bounds, list)
        or not isinstance(buckets, list)
        or total is None
        or not bounds
        or len(bounds) != len(buckets)
        or bounds[-1] != math.inf
        or bounds != sorted(bounds)
    ):
        return child.observe
    upper = tuple(bounds)
    add_sum = total.inc
    add_one = tuple(bucket.inc for bucket in buckets)

    def observe(amount: float) -> None:
        add_sum(amount)
        # the first bucket whose upper bound is >= amount (NaN: none, as observe skips it)
        index = bisect_left(upper, amount)
        if amount <= upper[index]:
            add_one[index](1)

    return observe


def lean_inc(child: Any) -> Callable[[], None]:
    """``child.inc()`` (by one) for a labelled counter's child, without prometheus_client's
    per-call checks (falls back to ``child.inc`` when the child has no value to add to)."""
    value = getattr(child, "_value", None)
    inc = getattr(value, "inc", None)
    if inc is None:
        return child.inc
    return functools.partial(inc, 1)
