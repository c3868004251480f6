"""A failing object logs one line per failure and its traceback at most once a minute (issue 18
part 5): 1,120 failed reconciles used to log 1,120 tracebacks."""

from __future__ import annotations

import logging

import pytest

from kube_runtime.client.errors import Conflict
from kube_runtime.clock import FakeClock
from kube_runtime.controller import Controller, TracebackLimiter
from kube_runtime.reconcile import Request


def test_the_limiter_says_yes_once_per_key_and_period() -> None:
    clock = FakeClock()
    limiter = TracebackLimiter(period=60.0, clock=clock)
    assert limiter.first("a") and not limiter.first("a") and limiter.first("b")
    clock.step(59.0)
    assert not limiter.first("a")
    clock.step(1.5)
    assert limiter.first("a")


class Failing:
    def __init__(self, error: Exception) -> None:
        self.error = error
        self.calls = 0

    def reconcile(self, request: Request) -> None:
        self.calls += 1
        raise self.error


def failures(
    controller: Controller, times: int, caplog: pytest.LogCaptureFixture
) -> list[logging.LogRecord]:
    request = Request("default", "web")
    with caplog.at_level(logging.ERROR, logger="kube_runtime.controller"):
        for _ in range(times):
            controller._reconcile_item(request)
            controller.queue.forget(request)
    return [r for r in caplog.records if r.name == "kube_runtime.controller"]


def test_a_repeated_panic_logs_its_traceback_once(caplog: pytest.LogCaptureFixture) -> None:
    controller = Controller("c", Failing(AttributeError("'str' object has no attribute 'get'")))
    records = failures(controller, 50, caplog)
    assert len(records) == 50  # one line each
    assert [bool(r.exc_info) for r in records] == [True] + [False] * 49
    assert "AttributeError: 'str' object has no attribute 'get'" in records[-1].getMessage()


def test_api_errors_log_one_line_and_no_traceback(caplog: pytest.LogCaptureFixture) -> None:
    status = {"kind": "Status", "code": 409, "reason": "Conflict", "message": "stale"}
    controller = Controller("c", Failing(Conflict(status)))
    records = failures(controller, 3, caplog)
    assert len(records) == 3 and not any(r.exc_info for r in records)
    assert "Conflict: " in records[0].getMessage()


def test_another_error_of_the_same_object_gets_its_own_traceback(
    caplog: pytest.LogCaptureFixture,
) -> None:
    reconciler = Failing(ValueError("one"))
    controller = Controller("c", reconciler)
    first = failures(controller, 2, caplog)
    reconciler.error = ValueError("two")
    caplog.clear()
    second = failures(controller, 2, caplog)
    assert [bool(r.exc_info) for r in first + second] == [True, False, True, False]
