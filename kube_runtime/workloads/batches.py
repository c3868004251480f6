"""Batches of pod operations, as upstream's workload controllers run them.

Upstream runs each batch of creations or deletions concurrently and waits for all of them
(``slowStartBatch`` in the ReplicaSet and CloneSet controllers, ``runForAll`` in the
StatefulSet controller): one failure does not stop the rest of its batch, only the batches
after it. :func:`call_each` is that step; :func:`slow_start_batch` runs batches of 1, 2,
4, ... of them.

Concurrency is bounded by a limit (``limit``, default :data:`DEFAULT_LIMIT`): at most that
many calls of one batch run at a time, on the caller's thread and ``limit - 1`` threads
started for the batch and joined before it returns. A batch of one call, or a limit of 1,
runs on the caller's thread alone, costing nothing. The threads are started per batch rather
than kept in a pool: under a :class:`~kube_runtime.clock.SimClock` a thread a participant
starts is a participant, and an idle pool thread waiting on its queue (outside the clock)
would count as running forever and stall simulated time; a thread that has finished its batch
simply ends.

What a step does besides its API calls, the caller wants in a deterministic order: a step
hands such effects (recording an event, noting a failure on shared state) to
:func:`in_order`, which runs them at once outside a concurrent batch and, inside one, after
the batch on the caller's thread, in index order (the order a sequential run has them in).
"""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Callable, Iterable

__all__ = ["DEFAULT_LIMIT", "call_each", "in_order", "slow_start_batch"]

DEFAULT_LIMIT = 16
"""Calls of one batch run at most this many at a time. A batch's calls are API requests
(GIL released while waiting on the server): 16 overlaps the latency of a slow-start batch up
to 16 (the batches of sets of up to 31 replicas) while keeping a controller's threads per
reconcile worker bounded; past that, Python's own per-request CPU (one core under the GIL),
not the wait, is what a wider batch would spend."""

_local = threading.local()
"""``effects``: where :func:`in_order` puts the effects of the step running on this thread
(None / missing: run them at once)."""


def in_order(effect: Callable[[], object]) -> None:
    """Run ``effect()`` now, or, called from a step of a concurrent :func:`call_each` batch,
    after the batch on the caller's thread, in the index order of the steps (each step's in
    the order it handed them). An effect run after the batch that raises counts as its step's
    failure (when the step did not fail itself)."""
    effects: list[Callable[[], object]] | None = getattr(_local, "effects", None)
    if effects is None:
        effect()
    else:
        effects.append(effect)


def call_each(
    fn: Callable[[int], object],
    indices: Iterable[int],
    *,
    limit: int | None = None,
    busy: Callable[[int], bool] | None = None,
) -> list[BaseException]:
    """Call ``fn(i)`` for every index, going on past failures; the exceptions raised, in
    index order (empty when all succeeded). Only :class:`Exception` is caught: a
    :class:`BaseException` of a step is raised once every step has ended.

    With more than one index and ``limit`` (default :data:`DEFAULT_LIMIT`) above 1 the calls
    run concurrently, at most ``limit`` at a time, and all have returned when this returns;
    effects the steps handed to :func:`in_order` then run here in index order. ``fn`` must
    be safe to call from several threads for different indices. ``busy(i)`` (default: every
    step is): whether step ``i`` may wait on a request; a batch with fewer than two busy
    steps runs on the caller's thread (no thread is started for steps that only read)."""
    items = list(indices)
    width = DEFAULT_LIMIT if limit is None else limit
    if width < 1:
        raise ValueError(f"call_each: limit must be at least 1, got {width}")
    if len(items) <= 1 or width == 1:
        return _sequential(fn, items)
    if busy is not None:
        waiting = sum(1 for i in items if busy(i))
        if waiting <= 1:
            return _sequential(fn, items)
        width = min(width, waiting)
    return _concurrent(fn, items, min(width, len(items)))


def slow_start_batch(
    count: int, initial: int, fn: Callable[[int], object], *, limit: int | None = None
) -> tuple[int, BaseException | None]:
    """Upstream ``slowStartBatch``: call ``fn(i)`` for ``i`` in ``range(count)`` in batches of
    ``initial``, 2x, 4x, ..., the calls of a batch concurrently (:func:`call_each`, at most
    ``limit`` at a time); after the first batch with a failure, once all its calls have ended,
    stop. ``(successful calls, the first error in index order or None)``: the caller lowers
    what it expected of the calls that failed or never ran."""
    done = 0
    batch = min(count, initial)
    while batch > 0:
        errors = call_each(fn, range(done, done + batch), limit=limit)
        done += batch - len(errors)
        if errors:
            return done, errors[0]
        batch = min(2 * batch, count - done)
    return done, None


def _sequential(fn: Callable[[int], object], items: list[int]) -> list[BaseException]:
    errors: list[BaseException] = []
    for i in items:
        try:
            fn(i)
        except Exception as err:
            errors.append(err)
    return errors


def _concurrent(fn: Callable[[int], object], items: list[int], width: int) -> list[BaseException]:
    count = len(items)
    failures: list[BaseException | None] = [None] * count
    effects: list[list[Callable[[], object]]] = [[] for _ in range(count)]
    claimed = iter(range(count))
    claim_lock = threading.Lock()

    def work() -> None:
        saved = getattr(_local, "effects", None)
        try:
            while True:
                with claim_lock:
                    k = next(claimed, None)
                if k is None:
                    return
                _local.effects = effects[k]
                try:
                    fn(items[k])
                except BaseException as err:  # handed back to the caller
                    failures[k] = err
        finally:
            _local.effects = saved

    threads = [
        threading.Thread(
            target=contextvars.copy_context().run,
            args=(work,),
            name=f"batch-step-{n}",
            daemon=True,
        )
        for n in range(1, width)
    ]
    for thread in threads:
        thread.start()
    try:
        work()
    finally:
        for thread in threads:
            thread.join()
    fatal = next((e for e in failures if e is not None and not isinstance(e, Exception)), None)
    if fatal is not None:
        raise fatal
    for k in range(count):
        for effect in effects[k]:
            try:
                in_order(effect)
            except Exception as err:
                if failures[k] is None:
                    failures[k] = err
    return [e for e in failures if e is not None]
