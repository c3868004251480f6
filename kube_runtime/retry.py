"""Retry a read-modify-write on conflicts, with client-go's backoff (``util/retry``).

Every read-modify-write in a controller goes through :func:`retry_on_conflict`; ``fn`` must
re-read the object on each call, or the retry just repeats the stale write::

    def bump() -> dict:
        sts = client.get(kinds.StatefulSet, "web", "default")
        sts["spec"]["replicas"] += 1
        return client.update(sts)

    retry_on_conflict(bump)

Both helpers take a ``sleep`` function so tests need not sleep. They are a plain loop: every
write of a controller goes through them, and a general retry library cost more per call than
a typical request's own Python work.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TypeVar

from kube_runtime.client.errors import is_conflict
from kube_runtime.clock import Clock
from kube_runtime.clock import current as _current

log = logging.getLogger(__name__)

R = TypeVar("R")


@dataclass(frozen=True)
class Backoff:
    """client-go's ``wait.Backoff``: at most ``steps`` tries, sleeping between them.

    The first sleep is ``duration`` seconds; each next one is the previous times ``factor``
    (unless ``factor`` is 0). ``jitter`` > 0 adds up to ``jitter * sleep`` at random to each
    sleep (without affecting the next). When multiplying would exceed ``cap``, the remaining
    steps are dropped, as client-go does (``Step`` sets ``Steps`` to zero): the try before that
    was the last one.
    """

    steps: int
    duration: float
    factor: float
    jitter: float
    cap: float | None = None

    def delays(self, rng: random.Random | None = None) -> Iterator[float]:
        """The sleeps between consecutive tries: one fewer than the number of tries. The
        jitter is drawn from ``rng`` (the current clock's, :mod:`kube_runtime.clock`, when
        None: seeded under a simulated clock)."""
        draw = (rng if rng is not None else _current().rng).random
        steps, duration = self.steps, self.duration
        while steps > 1:
            steps -= 1
            current = duration
            if self.factor:
                duration *= self.factor
                if self.cap is not None and self.cap > 0 and duration > self.cap:
                    # client-go sleeps `current` here and then gives up without another try;
                    # we give up without the pointless sleep.
                    return
            if self.jitter > 0:
                current += draw() * self.jitter * current
            yield current


DEFAULT_RETRY = Backoff(steps=5, duration=0.01, factor=1.0, jitter=0.1)
"""For conflicts on objects this process manages: 5 tries ~10 ms apart."""

DEFAULT_BACKOFF = Backoff(steps=4, duration=0.01, factor=5.0, jitter=0.1)
"""For conflicts with other writers of an object: 4 tries, 10 ms, 50 ms, 250 ms apart."""


def retry_on(
    predicate: Callable[[BaseException], bool],
    fn: Callable[[], R],
    backoff: Backoff = DEFAULT_RETRY,
    *,
    sleep: Callable[[float], None] | None = None,
    clock: Clock | None = None,
) -> R:
    """Call ``fn`` until it returns, retrying while it raises an exception ``predicate`` accepts.

    At most ``backoff.steps`` calls; returns ``fn``'s result. An exception the predicate
    rejects propagates at once; when the tries run out, the last exception propagates
    (client-go's ``retry.OnError`` returns the last error). ``sleep`` pauses between tries
    (``clock``'s when None); the jitter is drawn from ``clock``'s ``rng``; ``clock`` is the
    current one (:mod:`kube_runtime.clock`) when None. The first try is a plain call: the
    backoff's delays are drawn only after a failure.
    """
    if backoff.steps < 1:
        raise ValueError(f"backoff.steps must be at least 1, got {backoff.steps}")
    delays: list[float] | None = None
    pause: Callable[[float], None] | None = sleep
    attempt = 0
    while True:
        try:
            return fn()
        except Exception as error:
            if delays is None:
                clk = clock if clock is not None else _current()
                delays = list(backoff.delays(clk.rng))
                if pause is None:
                    pause = clk.sleep
            if attempt >= len(delays) or not predicate(error):
                raise
            log.debug(
                "retrying %s in %.3fs (try %d of %d): %s",
                getattr(fn, "__qualname__", fn),
                delays[attempt],
                attempt + 2,
                len(delays) + 1,
                error,
            )
            assert pause is not None
            pause(delays[attempt])
            attempt += 1


def retry_on_conflict(
    fn: Callable[[], R],
    backoff: Backoff = DEFAULT_RETRY,
    *,
    sleep: Callable[[float], None] | None = None,
    clock: Clock | None = None,
) -> R:
    """:func:`retry_on` for 409 Conflict (``kube_runtime.client.errors.Conflict``).

    ``AlreadyExists`` is not a conflict and is not retried. ``fn`` must re-read the object it
    modifies on every call.
    """
    return retry_on(is_conflict, fn, backoff, sleep=sleep, clock=clock)
