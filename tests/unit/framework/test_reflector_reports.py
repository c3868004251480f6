"""A reflector whose list keeps failing logs the failure once, then at debug."""

from __future__ import annotations

import logging
import threading
from typing import Any

import pytest

from kube_runtime.cache.reflector import Reflector
from kube_runtime.client.errors import error_from_status
from kube_runtime.kinds import Pod

FORBIDDEN = {
    "kind": "Status",
    "apiVersion": "v1",
    "status": "Failure",
    "reason": "Forbidden",
    "code": 403,
    "message": 'pods is forbidden: User "system:serviceaccount:x:y" cannot list resource "pods"',
}


class Refusing:
    """A lister that is refused a number of times, then stops the reflector."""

    def __init__(self, times: int, stop: threading.Event) -> None:
        self.left = times
        self.stop = stop

    def list(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        self.left -= 1
        if self.left <= 0:
            self.stop.set()
        raise error_from_status(FORBIDDEN)

    def watch(self, *args: Any, **kwargs: Any) -> Any:
        raise AssertionError("no watch without a list")


class Sink:
    def replace(self, items: Any, rv: Any) -> None: ...


def test_a_refused_list_is_reported_once_with_what_to_grant(
    caplog: pytest.LogCaptureFixture,
) -> None:
    stop = threading.Event()
    reflector = Reflector(Refusing(5, stop), Pod, Sink())
    reflector.backoff.next_delay = lambda: 0.0  # type: ignore[method-assign]
    with caplog.at_level(logging.DEBUG, logger="kube_runtime.cache.reflector"):
        reflector.run(stop)
    loud = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(loud) == 1, [r.getMessage() for r in loud]
    assert loud[0].levelno == logging.ERROR
    assert "cannot list resource" in loud[0].getMessage()
    assert "kube-runtime rbac" in loud[0].getMessage()
    # 5 refusals: the first logged, 3 repeats at debug, the last one ends the run (stopped)
    assert sum("(again)" in r.getMessage() for r in caplog.records) == 3
