"""Issue 28: the informers, the sharding ring and the workload helpers take their time from
:mod:`kube_runtime.clock` (a FakeClock stepped by hand, or a SimClock jumping to the next
deadline), never from ``time`` or ``datetime.now`` directly."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from controllers.cloneset.control import CloneSetControl
from controllers.statefulset.controller import StatefulSetReconciler
from kube_runtime.cache import InformerCache, SharedInformer
from kube_runtime.cache.reflector import ExponentialBackoff, Reflector
from kube_runtime.cache.store import MUTATION_DETECTOR_ENV
from kube_runtime.client.fake import FakeClient
from kube_runtime.clock import Clock, FakeClock, SimClock, use
from kube_runtime.kinds import ConfigMap, Lease, StatefulSet
from kube_runtime.sharding._ring import EXPIRED, READY, LeaseTracker
from kube_runtime.sharding._sharder import FENCED, Assigner, ClientView, RingKinds
from kube_runtime.workloads import lifecycle, podreadiness
from kube_runtime.workloads.inplace import InPlaceControl
from kube_runtime.workloads.pods import is_available
from kube_runtime.workloads.statuswriter import CoalescingStatusWriter

TEN_HOURS = 36_000.0


def _until(predicate: Callable[[], bool], timeout: float = 5.0) -> None:
    """Wait in real time (the test thread is no participant of any clock)."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("timed out")
        time.sleep(0.005)


def _config_map(name: str, rv: str = "5") -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "ns", "resourceVersion": rv, "uid": name},
    }


class _QuietWatch:
    """A watch that sends nothing and ends when closed; it waits on the clock's event."""

    def __init__(self, clock: Clock) -> None:
        self._closed = clock.event()

    def __iter__(self) -> Iterator[Any]:
        self._closed.wait()
        yield from ()

    def close(self) -> None:
        self._closed.set()


class _StaticSource:
    """An in-memory ListerWatcher: a fixed list, and quiet watches."""

    def __init__(self, clock: Clock, objs: list[dict[str, Any]]) -> None:
        self.clock = clock
        self.objs = objs
        self.watches: list[_QuietWatch] = []

    def list(self, kind: Any, namespace: str | None = None, **kw: Any) -> dict[str, Any]:
        return {"items": list(self.objs), "metadata": {"resourceVersion": "10"}}

    def watch(self, kind: Any, namespace: str | None = None, **kw: Any) -> _QuietWatch:
        watch = _QuietWatch(self.clock)
        self.watches.append(watch)
        return watch


class _Resyncs:
    """Counts resyncs (``on_update(obj, obj)``) and sets ``event`` at the first."""

    def __init__(self, event: threading.Event) -> None:
        self.event = event
        self.adds = 0
        self.resyncs = 0

    def on_add(self, obj: Any, is_in_initial_list: bool) -> None:
        self.adds += 1

    def on_update(self, old: Any, new: Any) -> None:
        if old is new:
            self.resyncs += 1
            self.event.set()

    def on_delete(self, obj: Any) -> None:
        pass


# --- cache ---------------------------------------------------------------------------------------


def test_a_ten_hour_resync_fires_when_a_fake_clock_reaches_it() -> None:
    clock = FakeClock()
    source = _StaticSource(clock, [_config_map("a")])
    informer = SharedInformer(source, ConfigMap, resync_period=TEN_HOURS, clock=clock)
    assert informer.clock is clock
    fired = threading.Event()  # set by the handler thread; the test waits in real time
    handler = _Resyncs(fired)
    informer.add_event_handler(handler)
    informer.start()
    try:
        _until(lambda: informer.has_synced() and handler.adds == 1 and clock.has_waiters())
        clock.step(TEN_HOURS - 1)
        assert not fired.wait(0.1) and handler.resyncs == 0
        clock.step(1)
        assert fired.wait(5), "the resync did not fire at the clock's ten hours"
        assert handler.resyncs == 1
    finally:
        informer.stop()


def test_a_ten_hour_resync_under_a_simulated_clock_takes_a_few_jumps(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The mutation detector checks every (virtual) second: off here, to count the jumps.
    monkeypatch.setenv(MUTATION_DETECTOR_ENV, "false")
    sim = SimClock(stall_timeout=20)
    started = time.monotonic()
    with sim.activate():
        source = _StaticSource(sim, [_config_map("a"), _config_map("b")])
        informer = SharedInformer(source, ConfigMap, resync_period=TEN_HOURS)  # current: sim
        resynced = sim.event()
        handler = _Resyncs(resynced)
        informer.add_event_handler(handler)
        informer.start()
        assert resynced.wait(2 * TEN_HOURS)
        at = sim.monotonic()
        informer.stop()
    assert at == pytest.approx(TEN_HOURS)
    assert handler.adds == 2 and handler.resyncs >= 1
    # The housekeeping thread sleeps until the resync is due (no one-second polling).
    assert sim.advances < 20
    assert time.monotonic() - started < 10


def test_mutation_checks_of_all_informers_fall_on_the_same_virtual_instants(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(MUTATION_DETECTOR_ENV, "true")
    sim = SimClock(stall_timeout=20)
    with sim.activate():
        informers = []
        for i in range(3):
            source = _StaticSource(sim, [_config_map(f"o{i}")])
            informer = SharedInformer(source, ConfigMap)
            assert informer.indexer.mutation_detector
            informer.start()
            informers.append(informer)
            sim.sleep(0.3)  # started at different instants
        sim.sleep(100)
        for informer in informers:
            informer.stop()
    # One move per second for the three detectors (plus the sleeps), not three.
    assert sim.advances < 110


def test_the_informer_cache_gives_its_clock_to_its_informers() -> None:
    clock = FakeClock()
    source = _StaticSource(clock, [])
    cache = InformerCache(source, clock=clock)
    informer = cache.informer_for(ConfigMap)
    assert cache.clock is clock and informer.clock is clock
    with use(clock):
        defaulted = InformerCache(source)
    assert defaulted.clock is clock and defaulted.informer_for(ConfigMap).clock is clock


def test_backoff_times_its_reset_on_the_clock_and_draws_jitter_from_its_rng() -> None:
    clock = FakeClock()
    backoff = ExponentialBackoff(clock=clock, jitter=0.0)
    assert [backoff.next_delay() for _ in range(3)] == [0.8, 1.6, 3.2]
    clock.step(121)  # healthy for longer than reset_after, by the clock
    assert backoff.next_delay() == 0.8
    # Jitter from the clock's rng: seeded on virtual clocks, so the same on every run.
    first = [ExponentialBackoff(clock=FakeClock()).next_delay() for _ in range(2)]
    assert first[0] == first[1]
    # The reflector's default backoff runs on the reflector's clock.
    reflector = Reflector(_StaticSource(clock, []), ConfigMap, _Sink(), clock=clock)
    assert isinstance(reflector.backoff, ExponentialBackoff)
    assert reflector.backoff._clock is clock


class _Sink:
    def replace(self, objs: list[Any], resource_version: str) -> None:
        pass

    def add(self, obj: Any) -> None:
        pass

    def update(self, obj: Any) -> None:
        pass

    def delete(self, obj: Any) -> None:
        pass


# --- sharding ------------------------------------------------------------------------------------


def _lease(name: str, rv: str = "1", duration: int = 10) -> dict[str, Any]:
    return {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {
            "name": name,
            "namespace": "ns",
            "resourceVersion": rv,
            "labels": {"sharding.kube-runtime.io/ring": "ring"},
        },
        "spec": {"holderIdentity": name, "leaseDurationSeconds": duration},
    }


def test_lease_expiry_is_judged_by_the_current_clock() -> None:
    clock = FakeClock()
    with use(clock):
        tracker = LeaseTracker()  # the clock current when made
    leases = [_lease("a")]
    assert tracker.states(leases)["a"].state == READY
    assert tracker.next_expiry(leases) == pytest.approx(10)
    clock.step(9.5)
    assert tracker.states(leases)["a"].state == READY
    clock.step(0.5)  # no renewal for leaseDurationSeconds of virtual time
    assert tracker.states(leases)["a"].state == EXPIRED


def test_the_assigners_default_tracker_and_grace_run_on_its_clock() -> None:
    sts = {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": "x", "namespace": "ns", "labels": {"shard.kube-runtime.io/ring": "a"}},
        "spec": {},
    }
    client = FakeClient([_lease("a"), _lease("b"), sts])
    clock = FakeClock()
    assigner = Assigner(
        client,
        ClientView(client, "ring", "ns"),
        "ring",
        [RingKinds(StatefulSet)],
        min_shards=3,
        startup_grace=15.0,
        clock=clock,
    )
    assert assigner.ready_shards() == ()  # held back: 2 of 3 shards, in the grace
    assert assigner.next_change() == pytest.approx(10)  # a Lease may expire first
    clock.step(11)  # neither Lease renewed: a is expired by the assigner's clock
    client.patch(Lease, "b", {"metadata": {"annotations": {"renewed": "1"}}}, namespace="ns")
    assigner.leases_changed()
    assert assigner.next_change() == pytest.approx(4)  # the grace ends next
    clock.step(4)
    assert assigner.ready_shards() == ("b",)
    assert assigner.sync(StatefulSet, "ns", "x") == FENCED
    stamp = client.get(Lease, "a", "ns")["spec"]["renewTime"]
    assert stamp.startswith(clock.now().strftime("%Y-%m-%dT%H:%M:%S"))


# --- workloads -----------------------------------------------------------------------------------


def _ready_pod(since: datetime) -> dict[str, Any]:
    stamp = since.strftime("%Y-%m-%dT%H:%M:%SZ")
    return {
        "metadata": {"name": "p", "namespace": "ns"},
        "status": {
            "phase": "Running",
            "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": stamp}],
        },
    }


# Far from the real time, so that reading the real clock cannot pass these tests.
FUTURE = datetime(2100, 1, 1, tzinfo=timezone.utc)


def test_pods_default_now_is_the_current_clocks() -> None:
    clock = FakeClock(start=FUTURE.timestamp())
    pod = _ready_pod(FUTURE)
    with use(clock):
        clock.step(4)
        available, left = is_available(pod, 10)
        assert not available and left == pytest.approx(6)
        clock.step(6.5)
        assert is_available(pod, 10) == (True, 0.0)


def test_lifecycle_and_readiness_stamps_come_from_the_current_clock() -> None:
    clock = FakeClock(start=FUTURE.timestamp())
    with use(clock):
        clock.step(90)
        patch = lifecycle.state_patch(lifecycle.NORMAL)
        pod = {"metadata": {}, "spec": {"readinessGates": [{"conditionType": "KruisePodReady"}]}}
        condition = podreadiness.initial_condition(pod)
    stamps = list(patch["metadata"]["annotations"].values())
    assert stamps and all(s.startswith("2100-01-01T00:01:30") for s in stamps)
    assert condition is not None
    assert condition["status"]["conditions"][0]["lastTransitionTime"] == "2100-01-01T00:01:30Z"


def _writer(clock: Clock | None = None) -> tuple[CoalescingStatusWriter, list[Any]]:
    written: list[Any] = []

    class Policy:
        @staticmethod
        def write(obj: Any, status: Any) -> None:
            written.append(dict(status))

        @staticmethod
        def changed(obj: Any, status: Any) -> bool:
            return bool(obj["status"] != status)

        @staticmethod
        def urgent(recorded: Any, status: Any) -> bool:
            return False

        @staticmethod
        def final(obj: Any, status: Any) -> bool:
            return False

        @staticmethod
        def window_for(obj: Any) -> float:
            return float("inf")

    writer = CoalescingStatusWriter(Policy(), window=1.0, clock=clock)
    return writer, written


def test_the_status_writers_window_runs_on_its_clock() -> None:
    clock = FakeClock()
    with use(clock):
        writer, written = _writer()  # the clock current when made
    assert writer.clock is clock
    obj = {"metadata": {"name": "s", "namespace": "ns", "uid": "u"}, "status": {}}
    writer.update_status(obj, {"ready": 1})
    assert written == [] and writer.settle(obj, {"ready": 1}) == pytest.approx(1.0)
    clock.step(0.75)
    assert writer.settle(obj, {"ready": 2}) == pytest.approx(0.25)
    clock.step(0.25)
    assert writer.settle(obj, {"ready": 2}) is None
    assert written == [{"ready": 2}]


def test_workload_controllers_take_the_clock_current_when_built() -> None:
    clock = FakeClock(start=FUTURE.timestamp())
    client = FakeClient()
    with use(clock):
        reconciler = StatefulSetReconciler(client, client, object(), status_window=1.0)  # type: ignore[arg-type]
        cloneset = CloneSetControl(object(), object())  # type: ignore[arg-type]
    assert reconciler.clock is clock
    assert reconciler.status_writer.clock is clock
    assert reconciler.control.clock is clock
    assert reconciler.control.now() == FUTURE
    assert cloneset.clock is clock


def test_in_place_grace_runs_on_the_controls_clock() -> None:
    clock = FakeClock(start=FUTURE.timestamp())
    control = InPlaceControl(FakeClient(), clock=clock)
    pod = {
        "metadata": {
            "name": "p",
            "namespace": "ns",
            "annotations": {
                "apps.kruise.io/inplace-update-grace": (
                    '{"revision": "r2", "containerImages": {"c": "nginx:2"},'
                    ' "graceSeconds": 30, "updateTimestamp": "'
                    + FUTURE.strftime("%Y-%m-%dT%H:%M:%SZ")
                    + '"}'
                )
            },
        }
    }
    clock.step(10)
    assert control.refresh(pod) == (False, pytest.approx(20))
    assert control._now() == FUTURE + timedelta(seconds=10)
