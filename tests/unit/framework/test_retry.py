"""retry.py: client-go wait.Backoff steps and retry.RetryOnConflict / OnError, without sleeping."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest
import tenacity
from pytest_mock import MockerFixture

from kube_runtime.client.errors import error_from_status
from kube_runtime.clock import SimClock
from kube_runtime.retry import (
    DEFAULT_BACKOFF,
    DEFAULT_RETRY,
    Backoff,
    create_or_update_with,
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


# --- tenacity: the engine after a first conflict, and its own strategies ------------------


def conflicts(n: int, message: str = "Conflict") -> list[Exception]:
    return [_conflict(message) for _ in range(n)]


def _conflict(message: str) -> Exception:
    return error_from_status(
        {
            "kind": "Status",
            "status": "Failure",
            "code": 409,
            "reason": "Conflict",
            "message": message,
        }
    )


@pytest.mark.parametrize("error", [None, api_error(404, "NotFound"), ValueError("bug")])
def test_the_first_try_touches_no_tenacity_object(mocker: MockerFixture, error: Exception | None):
    built = mocker.spy(tenacity.Retrying, "__init__")
    entered = mocker.spy(tenacity.Retrying, "__call__")
    fn = Flaky(*([error] if error is not None else []))
    if error is None:
        assert retry_on_conflict(fn) == "ok"
        assert retry_on(lambda e: True, fn) == "ok"
    else:
        with pytest.raises(type(error)):
            retry_on_conflict(fn)
    assert (built.call_count, entered.call_count) == (0, 0)


def test_a_conflict_enters_one_retrying_built_once(mocker: MockerFixture):
    retry_on_conflict(Flaky(conflict()), sleep=Sleeps())  # builds the default policy if needed
    built = mocker.spy(tenacity.Retrying, "__init__")
    entered = mocker.spy(tenacity.Retrying, "__call__")
    for backoff in (DEFAULT_RETRY, DEFAULT_BACKOFF, Backoff(3, 0.5, 2, 0)):
        fn = Flaky(conflict(), conflict())
        assert retry_on_conflict(fn, backoff, sleep=Sleeps()) == "ok"
        assert fn.calls == 3
    assert built.call_count == 0  # every backoff shares the one default Retrying
    assert entered.call_count == 3
    shared = {id(call.args[0]) for call in entered.call_args_list}
    assert len(shared) == 1


def test_sleeps_go_through_the_clock_current_at_the_call():
    backoff = Backoff(steps=3, duration=10, factor=2, jitter=0)
    for _ in range(2):  # the second run reuses the Retrying the first one built
        sim = SimClock(stall_timeout=5)
        with sim.activate():
            start = sim.monotonic()
            assert retry_on_conflict(Flaky(conflict(), conflict()), backoff) == "ok"
            assert sim.monotonic() - start == pytest.approx(30)  # 10 s + 20 s, virtual


def test_tenacity_stop_and_wait_replace_the_backoff():
    errors = conflicts(10)
    fn = Flaky(*errors)
    sleeps = Sleeps()
    with pytest.raises(type(errors[0])) as raised:
        retry_on_conflict(
            fn, stop=tenacity.stop_after_attempt(3), wait=tenacity.wait_fixed(0.1), sleep=sleeps
        )
    assert fn.calls == 3
    assert raised.value is errors[2]  # the last error, not tenacity.RetryError
    assert sleeps == pytest.approx([0.1, 0.1])


def test_a_stop_beyond_the_backoff_repeats_its_last_sleep():
    fn = Flaky(*conflicts(6))
    sleeps = Sleeps()
    backoff = Backoff(steps=3, duration=1, factor=2, jitter=0)
    assert retry_on_conflict(fn, backoff, stop=tenacity.stop_after_attempt(7), sleep=sleeps)
    assert fn.calls == 7
    assert sleeps == pytest.approx([1, 2, 2, 2, 2, 2])


def test_a_wait_alone_keeps_the_backoffs_number_of_tries():
    fn = Flaky(*conflicts(10))
    sleeps = Sleeps()
    with pytest.raises(Exception, match="Conflict"):
        retry_on_conflict(fn, wait=tenacity.wait_fixed(0.5), sleep=sleeps)
    assert fn.calls == DEFAULT_RETRY.steps
    assert sleeps == [0.5] * (DEFAULT_RETRY.steps - 1)


def test_a_tenacity_retry_narrows_the_predicate():
    retry = tenacity.retry_if_exception(lambda e: "try again" in str(e))
    fn = Flaky(_conflict("try again"), _conflict("give up"))
    with pytest.raises(Exception, match="give up"):
        retry_on_conflict(fn, retry=retry, sleep=Sleeps())
    assert fn.calls == 2
    other = Flaky(TimeoutError("try again"))  # accepted by `retry`, not by the predicate
    with pytest.raises(TimeoutError):
        retry_on_conflict(other, retry=retry, sleep=Sleeps())
    assert other.calls == 1


def test_a_base_exception_on_a_retry_is_not_retried():
    class Stop(BaseException):
        pass

    fn = Flaky(conflict(), Stop())
    with pytest.raises(Stop):
        retry_on_conflict(fn, sleep=Sleeps())
    assert fn.calls == 2


def test_an_unhashable_strategy_still_works():
    class Stop:  # defines __eq__ without __hash__: unhashable
        def __eq__(self, other: object) -> bool:
            return self is other

        def __call__(self, state: tenacity.RetryCallState) -> bool:
            return state.attempt_number >= 2

    fn = Flaky(*conflicts(5))
    with pytest.raises(Exception, match="Conflict"):
        retry_on_conflict(fn, stop=Stop(), sleep=Sleeps())
    assert fn.calls == 2


def test_a_retry_inside_a_retry_sleeps_on_its_own_sleep():
    inner_sleeps, outer_sleeps = Sleeps(), Sleeps()
    inner_backoff = Backoff(steps=3, duration=1, factor=1, jitter=0)
    outer_backoff = Backoff(steps=3, duration=5, factor=1, jitter=0)
    outer_errors = [conflict()]

    def outer() -> str:
        result = retry_on_conflict(Flaky(conflict()), inner_backoff, sleep=inner_sleeps)
        if outer_errors:
            raise outer_errors.pop()
        return result

    assert retry_on_conflict(outer, outer_backoff, sleep=outer_sleeps) == "ok"
    assert (inner_sleeps, outer_sleeps) == ([1, 1], [5])


def test_threads_share_the_retrying_without_mixing_their_calls():
    results: dict[int, tuple[int, list[float]]] = {}
    start = threading.Barrier(8)

    def run(i: int) -> None:
        start.wait()
        for _ in range(50):
            fn = Flaky(*conflicts(i % 4))
            sleeps = Sleeps()

            def sleep(seconds: float, sleeps: Sleeps = sleeps) -> None:
                sleeps(seconds)
                time.sleep(0)  # let the other threads in between the tries

            backoff = Backoff(steps=5, duration=i + 1, factor=1, jitter=0)
            retry_on_conflict(fn, backoff, sleep=sleep)
            results[i] = (fn.calls, sleeps)
            assert results[i] == (i % 4 + 1, [i + 1] * (i % 4)), results[i]

    threads = [threading.Thread(target=run, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(results) == list(range(8))
    assert all(results[i] == (i % 4 + 1, [i + 1] * (i % 4)) for i in range(8))


def test_a_retry_is_logged_at_debug(caplog: pytest.LogCaptureFixture):
    caplog.set_level(logging.DEBUG, logger="kube_runtime.retry")
    retry_on_conflict(Flaky(conflict()), sleep=Sleeps())
    (record,) = [r for r in caplog.records if r.name == "kube_runtime.retry"]
    assert "Flaky" in record.getMessage() and "(try 2)" in record.getMessage()


def test_create_or_update_with_creates_updates_or_leaves_and_retries_lost_races() -> None:
    store: dict[str, int] = {}
    races = [api_error(409, "AlreadyExists"), conflict()]
    calls: list[str] = []

    def read() -> int:
        calls.append("read")
        if "x" not in store:
            raise api_error(404, "NotFound")
        return store["x"]

    def create() -> int:
        calls.append("create")
        if races and races[0].__class__.__name__ == "AlreadyExists":
            store["x"] = 1  # another writer created it first
            raise races.pop(0)
        store["x"] = 5
        return 5

    def update(value: int) -> int:
        calls.append("update")
        if races:
            raise races.pop(0)
        store["x"] = value
        return value

    def change(live: int) -> int | None:
        return None if live == 5 else 5

    fast = Backoff(steps=3, duration=0.0, factor=1.0, jitter=0.0)
    assert create_or_update_with(read, create, change, update, fast) == (5, "updated")
    assert calls == ["read", "create", "read", "update", "read", "update"]
    assert create_or_update_with(read, create, change, update, fast) == (5, "unchanged")
    store.clear()
    assert create_or_update_with(read, create, change, update, fast) == (5, "created")
    races[:] = [conflict()] * 3
    store["x"] = 2
    with pytest.raises(type(conflict())):
        create_or_update_with(read, create, change, update, fast)


def test_unknown_keyword_option_is_refused_before_the_call() -> None:
    """The keyword options are declared once (RetryOptions); a misspelled one is still a
    TypeError, and ``fn`` is not called."""
    calls: list[int] = []

    def fn() -> int:
        calls.append(1)
        return 1

    with pytest.raises(TypeError, match="slep"):
        retry_on_conflict(fn, slep=lambda _: None)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="clok"):
        retry_on(lambda _: True, fn, clok=None)  # type: ignore[call-arg]
    assert calls == []
    assert retry_on_conflict(fn, sleep=lambda _: None) == 1
