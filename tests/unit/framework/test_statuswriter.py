"""kube_runtime.workloads.statuswriter: progress-only status changes held back up to a window,
urgent and final ones written at once, the pending status laid over the recorded one,
written when due, dropped when the recorded status catches up."""

from collections.abc import Callable
from typing import Any

import pytest

from kube_runtime.clock import FakeClock
from kube_runtime.workloads.statuswriter import CoalescingStatusWriter

Obj = dict[str, Any]


def _obj(status: Obj | None = None, uid: str = "u1", name: str = "web") -> Obj:
    return {
        "metadata": {"name": name, "namespace": "ns", "uid": uid, "generation": 1},
        "spec": {"replicas": 3},
        "status": status or {},
    }


def _changed(obj: Any, status: Any) -> bool:
    return any(obj["status"].get(k) != v for k, v in status.items())


def _urgent(recorded: Any, status: Any) -> bool:
    return status.get("observedGeneration") != recorded.get("observedGeneration")


def _final(obj: Any, status: Any) -> bool:
    return status.get("ready") == obj["spec"]["replicas"]


class _Policy:
    """A StatusPolicy from a write function and the comparisons above."""

    def __init__(
        self,
        write: Callable[[Any, Any], None],
        window_for: Callable[[Any], float] = lambda obj: float("inf"),
    ) -> None:
        self.write = write
        self.window_for = window_for

    changed = staticmethod(_changed)
    urgent = staticmethod(_urgent)
    final = staticmethod(_final)


def _writer(window: float = 1.0) -> tuple[CoalescingStatusWriter, list[tuple[Obj, Obj]], FakeClock]:
    written: list[tuple[Obj, Obj]] = []
    clock = FakeClock()
    writer = CoalescingStatusWriter(
        _Policy(lambda obj, status: written.append((dict(obj), dict(status)))),
        window=window,
        clock=clock,
    )
    return writer, written, clock


def test_urgent_and_final_changes_are_written_at_once():
    writer, written, _ = _writer()
    obj = _obj()
    writer.update_status(obj, {"observedGeneration": 1, "ready": 0})
    assert [s for _, s in written] == [{"observedGeneration": 1, "ready": 0}]
    recorded = _obj({"observedGeneration": 1, "ready": 0})
    writer.update_status(recorded, {"observedGeneration": 1, "ready": 3})
    assert written[-1][1] == {"observedGeneration": 1, "ready": 3}
    assert writer.pending(recorded) is None
    assert writer.writes == 2 and writer.held == 0


def test_progress_is_held_until_the_first_change_is_a_window_old():
    writer, written, clock = _writer(window=1.0)
    recorded = _obj({"observedGeneration": 1, "ready": 0})
    writer.update_status(recorded, {"observedGeneration": 1, "ready": 1})
    assert written == []
    assert writer.settle(recorded, {"observedGeneration": 1, "ready": 1}) == pytest.approx(1.0)
    # the next sync decides on the pending status
    view = writer.view(recorded)
    assert view["status"]["ready"] == 1 and recorded["status"]["ready"] == 0
    clock.step(0.6)
    writer.update_status(view, {"observedGeneration": 1, "ready": 2})
    assert writer.settle(recorded, {"observedGeneration": 1, "ready": 2}) == pytest.approx(0.4)
    assert written == []
    clock.step(0.4)
    # the requeued sync computes the same as pending: settle writes it
    assert writer.settle(recorded, {"observedGeneration": 1, "ready": 2}) is None
    assert [s for _, s in written] == [{"observedGeneration": 1, "ready": 2}]
    assert writer.pending(recorded) is None and writer.writes == 1 and writer.held == 2


def test_a_change_after_the_deadline_is_written_by_update_status():
    writer, written, clock = _writer()
    recorded = _obj({"observedGeneration": 1, "ready": 0})
    writer.update_status(recorded, {"observedGeneration": 1, "ready": 1})
    clock.step(2)
    writer.update_status(writer.view(recorded), {"observedGeneration": 1, "ready": 2})
    assert [s for _, s in written] == [{"observedGeneration": 1, "ready": 2}]


def test_pending_dropped_when_the_recorded_status_equals_the_computed_one():
    writer, written, clock = _writer()
    recorded = _obj({"observedGeneration": 1, "ready": 1})
    writer.update_status(recorded, {"observedGeneration": 1, "ready": 2})
    # a pod went unready again: the computed status equals the recorded one
    assert writer.settle(recorded, {"observedGeneration": 1, "ready": 1}) is None
    assert writer.pending(recorded) is None and writer.view(recorded) is recorded
    clock.step(5)
    assert writer.settle(recorded, {"observedGeneration": 1, "ready": 1}) is None
    assert written == []


def test_window_zero_writes_everything_at_once():
    writer, written, _ = _writer(window=0)
    recorded = _obj({"observedGeneration": 1, "ready": 0})
    writer.update_status(recorded, {"observedGeneration": 1, "ready": 1})
    assert len(written) == 1
    with pytest.raises(ValueError):
        _writer(window=-1)


def test_pending_is_per_object_and_uid():
    writer, _, _ = _writer()
    a = _obj({"observedGeneration": 1, "ready": 0}, name="a")
    b = _obj({"observedGeneration": 1, "ready": 0}, name="b")
    writer.update_status(a, {"observedGeneration": 1, "ready": 1})
    assert writer.pending(b) is None
    assert writer.pending(a) == {"observedGeneration": 1, "ready": 1}
    recreated = _obj({}, uid="u2", name="a")
    assert writer.pending(recreated) is None and writer.view(recreated) is recreated
    assert writer.pending(a) is None  # the old object's entry went with it
    writer.update_status(a, {"observedGeneration": 1, "ready": 1})
    writer.forget("ns", "a")
    assert writer.pending(a) is None


def test_flush_and_a_failed_write_stays_pending_and_due():
    calls: list[Obj] = []
    fail = [True]
    clock = FakeClock()

    def write(obj: Any, status: Any) -> None:
        calls.append(dict(status))
        if fail[0]:
            raise RuntimeError("conflict")

    writer = CoalescingStatusWriter(_Policy(write), window=1.0, clock=clock)
    recorded = _obj({"observedGeneration": 1, "ready": 0})
    writer.update_status(recorded, {"observedGeneration": 1, "ready": 1})
    with pytest.raises(RuntimeError):
        writer.flush(recorded)
    assert writer.pending(recorded) == {"observedGeneration": 1, "ready": 1}
    fail[0] = False
    assert writer.settle(recorded, {"observedGeneration": 1, "ready": 1}) is None
    assert calls == [{"observedGeneration": 1, "ready": 1}] * 2
    assert writer.pending(recorded) is None and writer.writes == 1
    writer.flush(recorded)  # nothing pending: no write
    assert len(calls) == 2


def test_window_for_shortens_the_window_of_one_object():
    clock = FakeClock()
    writer = CoalescingStatusWriter(
        _Policy(lambda obj, status: None, lambda obj: obj["spec"].get("hold", float("inf"))),
        window=1.0,
        clock=clock,
    )
    short = _obj({"observedGeneration": 1, "ready": 0}, name="short")
    short["spec"]["hold"] = 0.25
    long = _obj({"observedGeneration": 1, "ready": 0}, name="long")
    for obj in (short, long):
        writer.update_status(obj, {"observedGeneration": 1, "ready": 1})
    assert writer.settle(short, {"observedGeneration": 1, "ready": 1}) == pytest.approx(0.25)
    assert writer.settle(long, {"observedGeneration": 1, "ready": 1}) == pytest.approx(1.0)
    short["spec"]["hold"] = 0
    writer.update_status(short, {"observedGeneration": 1, "ready": 2})
    assert writer.pending(short) is None and writer.writes == 1


def test_sync_decides_on_the_view_settles_and_flushes_when_the_sync_fails():
    writer, written, clock = _writer()
    recorded = _obj({"observedGeneration": 1, "ready": 0})
    seen: list[Obj] = []

    def decide(view: Any) -> tuple[str, Obj]:
        seen.append(dict(view["status"]))
        status = {"observedGeneration": 1, "ready": 1}
        writer.update_status(view, status)
        return "result", status

    assert writer.sync(recorded, decide) == ("result", pytest.approx(1.0))
    assert written == [] and writer.pending(recorded) == {"observedGeneration": 1, "ready": 1}
    clock.step(0.5)

    def fail(view: Any) -> tuple[str, Obj]:
        seen.append(dict(view["status"]))
        raise RuntimeError("sync failed")

    with pytest.raises(RuntimeError):
        writer.sync(recorded, fail)
    assert seen == [{"observedGeneration": 1, "ready": 0}, {"observedGeneration": 1, "ready": 1}]
    assert [s for _, s in written] == [{"observedGeneration": 1, "ready": 1}]
    assert writer.pending(recorded) is None
