"""Retry a read-modify-write on conflicts, with client-go's backoff (``util/retry``).

Every read-modify-write in a controller goes through :func:`retry_on_conflict`; ``fn`` must
re-read the object on each call, or the retry just repeats the stale write::

    def bump() -> dict:
        sts = client.get(kinds.StatefulSet, "web", "default")
        sts["spec"]["replicas"] += 1
        return client.update(sts)

    retry_on_conflict(bump)

**How a call runs.** The first try is a plain call of ``fn``: a write that succeeds (nearly
every one), or fails with an error the predicate does not accept, costs one Python call more
than ``fn`` itself and touches no tenacity object. Only an error the predicate accepts enters
tenacity: a :class:`tenacity.Retrying` built once per policy (one object for the default
policy, shared by every thread) takes that first failure as its first attempt, then sleeps and
retries with client-go's backoff (:class:`Backoff`; :data:`DEFAULT_RETRY` is client-go's
``retry.DefaultRetry``). Sleeps go through ``sleep=`` when given, else through ``clock=``'s
``sleep``, else the sleep of the clock current at the call (:mod:`kube_runtime.clock`, never
the clock current when the ``Retrying`` was built); the jitter is drawn from that clock's
``rng``, so under a ``SimClock`` a retry sleeps virtual time with a reproducible jitter. Tests
pass ``sleep=`` (a recorder) or run on a ``SimClock`` so nothing really sleeps. When the tries
run out, the last error propagates (client-go's ``OnError`` returns the last error, never a
wrapper); an error the predicate rejects, or any ``BaseException`` that is not an
``Exception``, propagates at once.

**tenacity's own strategies.** ``stop=``, ``wait=`` and ``retry=`` take tenacity's objects (or
the plain callables tenacity accepts) and replace one part of the policy each::

    import tenacity

    retry_on_conflict(bump, stop=tenacity.stop_after_attempt(3), wait=tenacity.wait_fixed(0.1))
    retry_on(is_server_error, call, wait=tenacity.wait_exponential(multiplier=0.1, max=2))

- ``stop`` replaces the backoff's number of tries. Without ``wait``, the sleeps are still the
  backoff's, and once those run out its last sleep again (its ``duration`` when it has none).
- ``wait`` replaces the backoff's sleeps (still slept through the clock, as above).
- ``retry`` narrows which errors are retried: an error is retried when the predicate accepts
  it *and* ``retry`` does. Results are never retried: a try that returns ends the call (make
  ``fn`` raise instead).

A ``Retrying`` is built once per combination of these objects and kept (the 64 most recent
combinations): pass the same objects on every call (module constants), not new ones per call.
tenacity measures ``stop_after_delay`` / ``stop_before_delay`` on the real monotonic clock and
its random waits draw from :mod:`random`, not from the clock: under a ``SimClock`` prefer
attempt counts and the backoff's own sleeps.
"""

from __future__ import annotations

import functools
import logging
import random
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import Any, Literal, TypeAlias, TypedDict, TypeVar, Unpack, cast

import tenacity
from tenacity.retry import RetryBaseT, retry_base
from tenacity.stop import StopBaseT, stop_base
from tenacity.wait import WaitBaseT, wait_base

from kube_runtime.client.errors import Conflict, NotFound, is_already_exists, is_conflict
from kube_runtime.clock import Clock
from kube_runtime.clock import current as _current

__all__ = [
    "DEFAULT_BACKOFF",
    "DEFAULT_RETRY",
    "Backoff",
    "Outcome",
    "RetryOptions",
    "create_or_update_with",
    "is_write_race",
    "retry_on",
    "retry_on_conflict",
]

log = logging.getLogger(__name__)

R = TypeVar("R")
T = TypeVar("T")

Outcome: TypeAlias = Literal["created", "updated", "unchanged"]
"""What :func:`create_or_update_with` did (the values of
:class:`kube_runtime.controllerutil.OperationResult`)."""


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


class RetryOptions(TypedDict, total=False):
    """The keyword options of :func:`retry_on` and :func:`retry_on_conflict` (each None when
    not given; an unknown keyword is a TypeError)."""

    sleep: Callable[[float], None] | None
    """Pauses between tries (``clock``'s sleep when None)."""
    clock: Clock | None
    """Sleeps and draws the jitter (the clock current at the call when None)."""
    stop: StopBaseT | None
    """A tenacity stop strategy replacing the backoff's number of tries."""
    wait: WaitBaseT | None
    """A tenacity wait strategy replacing the backoff's sleeps."""
    retry: RetryBaseT | None
    """A tenacity retry strategy narrowing the predicate."""


_OPTION_NAMES = frozenset(RetryOptions.__annotations__)


def _check_call(backoff: Backoff, options: RetryOptions) -> None:
    """ValueError for a backoff without tries; TypeError for an unknown keyword option."""
    if backoff.steps < 1:
        raise ValueError(f"backoff.steps must be at least 1, got {backoff.steps}")
    if options:
        unknown = options.keys() - _OPTION_NAMES
        if unknown:
            raise TypeError(f"unexpected keyword argument(s): {', '.join(sorted(unknown))}")


def retry_on(
    predicate: Callable[[BaseException], bool],
    fn: Callable[[], R],
    backoff: Backoff = DEFAULT_RETRY,
    **options: Unpack[RetryOptions],
) -> R:
    """Call ``fn`` until it returns, retrying while it raises an exception ``predicate`` accepts.

    At most ``backoff.steps`` calls (fewer when its ``cap`` ends it early); returns ``fn``'s
    result. An exception the predicate rejects propagates at once; when the tries run out, the
    last exception propagates (client-go's ``retry.OnError`` returns the last error).
    ``sleep`` pauses between tries (``clock``'s when None); the jitter is drawn from
    ``clock``'s ``rng``; ``clock`` is the one current at the call (:mod:`kube_runtime.clock`)
    when None. The first try is a plain call: the backoff's delays are drawn, and tenacity
    entered, only after a failure the predicate accepts. ``stop``, ``wait`` and ``retry`` are
    tenacity strategies replacing the backoff's number of tries, its sleeps, and narrowing the
    predicate (see the module docstring). ValueError if ``backoff.steps`` < 1.
    """
    _check_call(backoff, options)
    try:
        return fn()
    except Exception as error:
        if not predicate(error):
            raise
        first = error
    # Outside the handler, so the errors raised from here carry no "during handling" context.
    return _retry(predicate, fn, first, backoff, options)


def retry_on_conflict(
    fn: Callable[[], R],
    backoff: Backoff = DEFAULT_RETRY,
    **options: Unpack[RetryOptions],
) -> R:
    """:func:`retry_on` for 409 Conflict (``kube_runtime.client.errors.Conflict``).

    ``AlreadyExists`` is not a conflict and is not retried. ``fn`` must re-read the object it
    modifies on every call. ``stop``, ``wait`` and ``retry`` as for :func:`retry_on`.
    """
    # retry_on's first try, inlined: every controller write comes through here.
    _check_call(backoff, options)
    try:
        return fn()
    except Conflict as error:
        first = error
    return _retry(is_conflict, fn, first, backoff, options)


def is_write_race(err: BaseException) -> bool:
    """Whether ``err`` says another writer got there first: a ``Conflict`` (the object
    changed since it was read) or an ``AlreadyExists`` (it was created since it was found
    absent). A create-or-update retries these."""
    return is_conflict(err) or is_already_exists(err)


def create_or_update_with(
    read: Callable[[], T],
    create: Callable[[], T],
    change: Callable[[T], T | None],
    update: Callable[[T], T],
    backoff: Backoff = DEFAULT_RETRY,
) -> tuple[T, Outcome]:
    """The loop of a create-or-update (controller-runtime's ``CreateOrUpdate``), over the
    caller's four calls: ``read()`` the live object (``NotFound``: there is none); none:
    ``create()`` it (``"created"``); else ``change(live)`` gives the object to write, or None
    when the live one is as wanted (``"unchanged"``: no request), and ``update(desired)``
    writes it (``"updated"``). Returns the object created, written, or live, and the outcome.

    A lost race (:func:`is_write_race`: ``AlreadyExists`` from ``create``, ``Conflict`` from
    ``update``) starts over with a fresh read, with ``backoff`` (:func:`retry_on`); when the
    tries run out the last error propagates; other errors propagate at once. The framework's
    :func:`~kube_runtime.controllerutil.create_or_update` and the webhook installer's
    configurations both run on it."""

    def attempt() -> tuple[T, Outcome]:
        try:
            live = read()
        except NotFound:
            return create(), "created"
        desired = change(live)
        if desired is None:
            return live, "unchanged"
        return update(desired), "updated"

    return retry_on(is_write_race, attempt, backoff)


# --- the slow path: tenacity, after a first failure the predicate accepted -------------------


class _Call:
    """One retried call: what the shared ``Retrying``'s strategies read (as ``state.fn``).

    Calling it is one attempt; the first replays the failure of the plain first try.
    """

    __slots__ = ("delays", "fallback", "first_error", "fn", "predicate", "sleep", "tries")

    def __init__(
        self,
        fn: Callable[[], Any],
        predicate: Callable[[BaseException], bool],
        first_error: BaseException,
        sleep: Callable[[float], None],
    ) -> None:
        self.fn = fn
        self.predicate = predicate
        self.first_error: BaseException | None = first_error
        self.delays: list[float] = []
        self.tries = 0  # the backoff's tries (used unless a stop strategy is given)
        self.fallback = 0.0  # the sleep once `delays` run out (a stop strategy allows more)
        self.sleep = sleep

    def __call__(self) -> Any:
        error = self.first_error
        if error is not None:
            self.first_error = None
            raise error
        return self.fn()


def _call_of(state: tenacity.RetryCallState) -> _Call:
    return cast(_Call, state.fn)


class _Accepted(retry_base):
    """Retry an ``Exception`` the call's predicate accepts; never a result."""

    def __call__(self, retry_state: tenacity.RetryCallState) -> bool:
        outcome = retry_state.outcome
        if outcome is None:
            return False
        error = outcome.exception()
        return isinstance(error, Exception) and _call_of(retry_state).predicate(error)


class _BackoffWait(wait_base):
    """The sleep after attempt n: the call's n-th backoff delay (drawn when it first failed)."""

    def __call__(self, retry_state: tenacity.RetryCallState) -> float:
        call = _call_of(retry_state)
        n = retry_state.attempt_number
        return call.delays[n - 1] if n <= len(call.delays) else call.fallback


class _BackoffStop(stop_base):
    """Stop after the backoff's number of tries."""

    def __call__(self, retry_state: tenacity.RetryCallState) -> bool:
        return retry_state.attempt_number >= _call_of(retry_state).tries


_active = threading.local()
"""``call``: the retried call in progress on this thread (tenacity's ``sleep`` gets seconds
only, so the shared ``Retrying`` finds the call's sleep here)."""


def _sleep(seconds: float) -> None:
    call: _Call = _active.call
    call.sleep(seconds)


def _log_retry(retry_state: tenacity.RetryCallState) -> None:
    if not log.isEnabledFor(logging.DEBUG):
        return
    call = _call_of(retry_state)
    outcome = retry_state.outcome
    log.debug(
        "retrying %s in %.3fs (try %d): %s",
        getattr(call.fn, "__qualname__", call.fn),
        retry_state.upcoming_sleep,
        retry_state.attempt_number + 1,
        outcome.exception() if outcome is not None else None,
    )


_ACCEPTED = _Accepted()
_BACKOFF_WAIT = _BackoffWait()
_BACKOFF_STOP = _BackoffStop()


def _build(
    stop: StopBaseT | None, wait: WaitBaseT | None, retry: RetryBaseT | None
) -> tenacity.Retrying:
    return tenacity.Retrying(
        sleep=_sleep,
        stop=stop if stop is not None else _BACKOFF_STOP,
        wait=wait if wait is not None else _BACKOFF_WAIT,
        retry=_ACCEPTED if retry is None else tenacity.retry_all(_ACCEPTED, retry),
        before_sleep=_log_retry,
        reraise=True,
    )


_policy = functools.lru_cache(maxsize=64)(_build)
"""The ``Retrying`` of a (stop, wait, retry) combination, built once (thread-safe cache)."""


_NO_JITTER = random.Random(0)  # never drawn from: `_tries` sets jitter 0


@functools.lru_cache(maxsize=64)
def _tries(backoff: Backoff) -> int:
    """How many tries ``backoff`` allows (the jitter never changes it)."""
    return sum(1 for _ in replace(backoff, jitter=0).delays(_NO_JITTER)) + 1


def _retry(
    predicate: Callable[[BaseException], bool],
    fn: Callable[[], R],
    first_error: Exception,
    backoff: Backoff,
    options: RetryOptions,
) -> R:
    clock, sleep = options.get("clock"), options.get("sleep")
    stop, wait, retry = options.get("stop"), options.get("wait"), options.get("retry")
    clk = clock if clock is not None else _current()
    call = _Call(fn, predicate, first_error, sleep if sleep is not None else clk.sleep)
    if wait is None:
        call.delays = list(backoff.delays(clk.rng))
        call.tries = len(call.delays) + 1
        call.fallback = call.delays[-1] if call.delays else backoff.duration
    else:
        call.tries = _tries(backoff)
    try:
        retrying = _policy(stop, wait, retry)
    except TypeError:  # an unhashable strategy: built for this call only
        retrying = _build(stop, wait, retry)
    outer = getattr(_active, "call", None)  # a retried call inside `fn` of another one
    _active.call = call
    try:
        return cast(R, retrying(call))
    finally:
        _active.call = outer
