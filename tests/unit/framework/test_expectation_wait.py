"""expectations.wait_result: the one way a sync waits on an expectation."""

from __future__ import annotations

import logging

import pytest

from kube_runtime.expectations import EXPECTATIONS_TIMEOUT, wait_result
from kube_runtime.reconcile import Result


def test_satisfied_goes_on() -> None:
    assert wait_result(True, 999.0, key="ns/a", what="x") is None


def test_unsatisfied_comes_back_when_the_timeout_ends_or_at_the_recheck() -> None:
    assert wait_result(False, 100.0, key="ns/a", what="x") == Result(
        requeue_after=EXPECTATIONS_TIMEOUT - 100.0
    )
    assert wait_result(False, 100.0, key="ns/a", what="x", recheck=1.0) == Result(requeue_after=1.0)


def test_timed_out_goes_on_says_so_and_forgets(caplog: pytest.LogCaptureFixture) -> None:
    forgotten: list[bool] = []
    with caplog.at_level(logging.WARNING, logger="kube_runtime.expectations"):
        result = wait_result(
            False,
            EXPECTATIONS_TIMEOUT,
            key="ns/a",
            what="pod web-0",
            on_timeout=lambda: forgotten.append(True),
        )
    assert result is None and forgotten == [True]
    assert "ns/a: expectations pod web-0 timed out" in caplog.text
