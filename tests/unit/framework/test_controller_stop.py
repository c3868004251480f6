"""A controller stopped while its caches cannot sync (403, 404) returns at once."""

from __future__ import annotations

import threading
import time

from kube_runtime.controller import Controller
from kube_runtime.handlers import EnqueueRequestForObject
from kube_runtime.reconcile import Request, Result


class NeverSynced:
    """A source whose list keeps failing: it never syncs (waits its whole timeout)."""

    def start(self, sink: object, stop: threading.Event) -> None:
        pass

    def wait_for_sync(self, timeout: float | None) -> bool:
        time.sleep(timeout or 0.0)
        return False


class Nothing:
    def reconcile(self, request: Request) -> Result | None:
        raise AssertionError("no reconcile happens before the caches sync")


def test_stop_interrupts_the_wait_for_the_caches() -> None:
    controller = Controller("unit-stop-sync", Nothing(), cache_sync_timeout=120.0)
    controller.watch(NeverSynced(), EnqueueRequestForObject())
    stop = threading.Event()
    done = threading.Event()
    thread = threading.Thread(target=lambda: (controller.start(stop), done.set()), daemon=True)
    thread.start()
    stop.set()
    assert done.wait(5.0), "start() did not return after stop (it waited for the cache sync)"
    assert controller.queue.shutting_down


class RefusingLister:
    """Every list is refused: an informer on it never syncs."""

    def list(self, *args: object, **kwargs: object) -> dict[str, object]:
        from kube_runtime.client.errors import error_from_status

        raise error_from_status({"code": 403, "reason": "Forbidden", "message": "refused"})

    def watch(self, *args: object, **kwargs: object) -> object:
        raise AssertionError("no watch without a list")


def test_a_read_waiting_for_a_cache_that_cannot_sync_ends_when_interrupted() -> None:
    from kube_runtime import kinds
    from kube_runtime.cache import InformerCache
    from kube_runtime.cache.cache import CacheStopping

    cache = InformerCache(RefusingLister(), sync_timeout=120.0)
    outcome: list[BaseException] = []

    def read() -> None:
        try:
            cache.list(kinds.ControllerRevision, "ns")
        except BaseException as e:
            outcome.append(e)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    cache.interrupt_waits()
    reader.join(5.0)
    try:
        assert not reader.is_alive(), "the read still waits for the cache after interrupt_waits()"
        assert isinstance(outcome[0], CacheStopping)
    finally:
        cache.stop()


def test_started_controller_exports_its_series_at_zero() -> None:
    """controller-runtime's initMetrics: errors, panics and every result exist from the start."""
    from kube_runtime.metrics import REGISTRY

    controller = Controller("unit-init-metrics", Nothing(), cache_sync_timeout=120.0)
    controller.watch(NeverSynced(), EnqueueRequestForObject())
    stop = threading.Event()
    stop.set()
    controller.start(stop)
    name = {"controller": "unit-init-metrics"}
    for metric in (
        "controller_runtime_reconcile_errors_total",
        "controller_runtime_terminal_reconcile_errors_total",
        "controller_runtime_reconcile_panics_total",
        "controller_runtime_active_workers",
    ):
        assert REGISTRY.get_sample_value(metric, name) == 0.0, metric
    for result in ("error", "requeue_after", "requeue", "success"):
        labels = {**name, "result": result}
        assert REGISTRY.get_sample_value("controller_runtime_reconcile_total", labels) == 0.0
