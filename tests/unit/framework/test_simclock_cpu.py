"""SimClock runs its simulation on one CPU: the activating thread's affinity is one CPU while
active (threads started inside inherit it) and what it was afterwards; ``cpu=None`` leaves it.
The pytest plugin also leaves the heap alive before a simtime test out of full collections."""

from __future__ import annotations

import gc
import os
import threading

import pytest

from kube_runtime.clock import SimClock

needs_two_cpus = pytest.mark.skipif(
    not hasattr(os, "sched_setaffinity") or len(os.sched_getaffinity(0)) < 2,
    reason="needs os.sched_setaffinity and two CPUs",
)


def _affinity_of_a_thread_started_here() -> set[int]:
    seen: list[set[int]] = []
    thread = threading.Thread(target=lambda: seen.append(os.sched_getaffinity(0)))
    thread.start()
    thread.join()
    return seen[0]


@needs_two_cpus
def test_auto_pins_the_activating_thread_and_its_threads_to_one_cpu_then_restores() -> None:
    before = os.sched_getaffinity(0)
    sim = SimClock()
    with sim.activate():
        inside = os.sched_getaffinity(0)
        started = _affinity_of_a_thread_started_here()
    assert len(inside) == 1 and inside <= before
    assert started == inside
    assert os.sched_getaffinity(0) == before


@needs_two_cpus
def test_a_named_cpu_is_the_one_and_a_thread_left_running_gets_the_affinity_back() -> None:
    before = os.sched_getaffinity(0)
    cpu = max(before)
    stop = threading.Event()  # a real event: the thread outlives the simulation
    leftover = threading.Thread(target=stop.wait, args=(30,), daemon=True)
    try:
        with SimClock(cpu=cpu).activate():
            assert os.sched_getaffinity(0) == {cpu}
            leftover.start()
            assert leftover.native_id is not None
            assert os.sched_getaffinity(leftover.native_id) == {cpu}
        assert os.sched_getaffinity(leftover.native_id) == before
    finally:
        stop.set()
        leftover.join()
    assert os.sched_getaffinity(0) == before


@needs_two_cpus
def test_cpu_none_or_a_cpu_not_allowed_leaves_the_affinity_alone() -> None:
    before = os.sched_getaffinity(0)
    with SimClock(cpu=None).activate():
        assert os.sched_getaffinity(0) == before
        assert _affinity_of_a_thread_started_here() == before
    with SimClock(cpu=max(before) + 1000).activate():
        assert os.sched_getaffinity(0) == before


@needs_two_cpus
def test_the_plugin_gives_each_xdist_worker_its_own_cpu(monkeypatch: pytest.MonkeyPatch) -> None:
    from kube_runtime.envtest.plugin import _sim_cpu

    allowed = sorted(os.sched_getaffinity(0))
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw0")
    first = _sim_cpu()
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw1")
    second = _sim_cpu()
    monkeypatch.setenv("PYTEST_XDIST_WORKER", f"gw{len(allowed)}")
    assert (first, second, _sim_cpu()) == (allowed[0], allowed[1], allowed[0])
    monkeypatch.delenv("PYTEST_XDIST_WORKER")
    assert _sim_cpu() == "auto"


@needs_two_cpus
@pytest.mark.simtime
@pytest.mark.embedded_only("the real backend runs simtime tests in real time")
def test_the_plugin_runs_a_simtime_test_on_one_cpu_with_the_heap_frozen(
    sim_clock: object,
) -> None:
    assert isinstance(sim_clock, SimClock)
    assert len(os.sched_getaffinity(0)) == 1
    assert gc.get_freeze_count() > 0


def test_the_heap_is_frozen_only_when_nothing_else_froze_it() -> None:
    from kube_runtime.envtest.plugin import _freeze_heap

    assert gc.get_freeze_count() == 0  # what the plugin froze for a simtime test is unfrozen
    try:
        assert _freeze_heap() is True
        assert gc.get_freeze_count() > 0
        assert _freeze_heap() is False  # someone else's freeze is left alone
    finally:
        gc.unfreeze()
