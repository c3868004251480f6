"""retry.py: client-go wait.Backoff steps and retry.RetryOnConflict / OnError, without sleeping."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from kube_runtime.client.errors import error_from_status
from kube_runtime.retry import (
    DEFAULT_BACKOFF,
    DEFAULT_RETRY,
    Backoff,
    retry_on,
    retry_on_conflict,
)


def api_error(code: int, reason: str) -> Exception:
    return error_from_status(
        {"kind": "Status", "status": "Failure", "code": code, "reason": reason, "message": reason}
    )


def conflict() -> Exception:
    return api_error(409, "Conflict")


class Flaky:
    """Raises the given errors in turn, then returns "ok"; counts calls."""

    def __init__(self, *errors: Exception) -> None:
        self.errors = list(errors)
        self.calls = 0

    def __call__(self) -> str:
        self.calls += 1
        if self.errors:
            raise self.errors.pop(0)
        return "ok"


class Sleeps(list[float]):
    def __call__(self, seconds: float) -> None:
        self.append(seconds)


# --- Backoff -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("backoff", "expected"),
    [
        (Backoff(steps=1, duration=1, factor=2, jitter=0), []),
        (Backoff(steps=4, duration=1, factor=2, jitter=0), [1, 2, 4]),
        (Backoff(steps=3, duration=1, factor=0, jitter=0), [1, 1]),  # factor 0: constant
        (Backoff(steps=5, duration=0.01, factor=1.0, jitter=0), [0.01] * 4),
        # the step whose next duration would pass the cap is the last (client-go zeroes Steps)
        (Backoff(steps=10, duration=1, factor=2, jitter=0, cap=3), [1]),
        (Backoff(steps=10, duration=1, factor=2, jitter=0, cap=4), [1, 2]),
        (Backoff(steps=3, duration=1, factor=2, jitter=0, cap=100), [1, 2]),
        (Backoff(steps=0, duration=1, factor=2, jitter=0), []),
    ],
)
def test_backoff_delays(backoff: Backoff, expected: list[float]):
    assert list(backoff.delays()) == pytest.approx(expected)


def test_backoff_jitter_adds_up_to_jitter_times_delay():
    backoff = Backoff(steps=200, duration=1, factor=1, jitter=0.5)
    delays = list(backoff.delays())
    assert all(1 <= d <= 1.5 for d in delays)
    assert len(set(delays)) > 1  # actually random


def test_backoff_is_frozen_and_reusable():
    backoff = Backoff(steps=3, duration=1, factor=2, jitter=0)
    assert list(backoff.delays()) == list(backoff.delays())
    with pytest.raises(AttributeError):
        backoff.steps = 1  # type: ignore[misc]


def test_defaults_are_client_go_defaults():
    assert Backoff(5, 0.01, 1.0, 0.1) == DEFAULT_RETRY
    assert Backoff(4, 0.01, 5.0, 0.1) == DEFAULT_BACKOFF


# --- retry_on_conflict ---------------------------------------------------------------------


def test_returns_first_success_without_sleeping():
    sleeps = Sleeps()
    fn = Flaky()
    assert retry_on_conflict(fn, sleep=sleeps) == "ok"
    assert (fn.calls, sleeps) == (1, [])


def test_retries_conflicts_until_success():
    sleeps = Sleeps()
    fn = Flaky(conflict(), conflict())
    backoff = Backoff(steps=5, duration=0.01, factor=2, jitter=0)
    assert retry_on_conflict(fn, backoff, sleep=sleeps) == "ok"
    assert fn.calls == 3
    assert sleeps == pytest.approx([0.01, 0.02])


def test_gives_up_after_steps_with_the_last_conflict():
    sleeps = Sleeps()
    errors = [conflict() for _ in range(10)]
    fn = Flaky(*errors)
    with pytest.raises(type(errors[0])) as raised:
        retry_on_conflict(fn, sleep=sleeps)
    assert fn.calls == DEFAULT_RETRY.steps
    assert raised.value is errors[DEFAULT_RETRY.steps - 1]
    assert len(sleeps) == DEFAULT_RETRY.steps - 1
    assert all(0.01 <= s <= 0.011 for s in sleeps)


@pytest.mark.parametrize(
    "error",
    [
        api_error(409, "AlreadyExists"),  # a 409 that is not a conflict
        api_error(404, "NotFound"),
        api_error(500, "InternalError"),
        ValueError("bug"),
    ],
)
def test_other_errors_are_not_retried(error: Exception):
    fn = Flaky(error)
    sleeps = Sleeps()
    with pytest.raises(type(error)):
        retry_on_conflict(fn, sleep=sleeps)
    assert (fn.calls, sleeps) == (1, [])


def test_single_step_means_single_try():
    fn = Flaky(conflict())
    with pytest.raises(Exception) as raised:
        retry_on_conflict(fn, Backoff(1, 0.01, 1, 0), sleep=Sleeps())
    assert type(raised.value).__name__ == "Conflict"
    assert fn.calls == 1


# --- retry_on ------------------------------------------------------------------------------


def test_retry_on_uses_the_predicate():
    retriable: Callable[[BaseException], bool] = lambda e: isinstance(e, TimeoutError)  # noqa: E731
    fn = Flaky(TimeoutError(), TimeoutError())
    sleeps = Sleeps()
    assert retry_on(retriable, fn, DEFAULT_BACKOFF, sleep=sleeps) == "ok"
    assert fn.calls == 3
    assert len(sleeps) == 2
    assert 0.01 <= sleeps[0] <= 0.011  # 10 ms, then x5, each with up to 10 % jitter
    assert 0.05 <= sleeps[1] <= 0.055


def test_retry_on_returns_the_value():
    results: list[Any] = [{"a": 1}]
    assert retry_on(lambda e: True, lambda: results[0], sleep=Sleeps()) == {"a": 1}


def test_retry_on_rejects_zero_steps():
    with pytest.raises(ValueError):
        retry_on(lambda e: True, lambda: None, Backoff(0, 1, 1, 0))
