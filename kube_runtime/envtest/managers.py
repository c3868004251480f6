"""Run a :class:`~kube_runtime.manager.Manager` in a background thread for a test."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kube_runtime.manager import Manager


class RunningManager:
    """A manager started on a thread; ``error`` holds what ``start`` raised, if anything."""

    def __init__(self, manager: Manager) -> None:
        self.manager = manager
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, name="test-manager", daemon=True)

    def _run(self) -> None:
        try:
            self.manager.start()
        except BaseException as e:
            self.error = e

    def stop(self, timeout: float = 30.0) -> None:
        """Stop the manager and wait for ``start`` to return (AssertionError if it does not)."""
        self.manager.stop()
        self.thread.join(timeout)
        if self.thread.is_alive():
            raise AssertionError(f"manager did not stop within {timeout}s")


@contextlib.contextmanager
def running(manager: Manager, *, stop_timeout: float = 30.0) -> Iterator[RunningManager]:
    """Start ``manager`` on a thread for the block; stop it (and wait) on the way out."""
    runner = RunningManager(manager)
    runner.thread.start()
    try:
        yield runner
    finally:
        if runner.thread.is_alive():
            runner.stop(stop_timeout)
