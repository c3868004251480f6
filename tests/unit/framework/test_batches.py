"""kube_runtime.workloads.batches: the steps of one batch run concurrently, bounded, and hand
their effects back in index order."""

from __future__ import annotations

import threading

import pytest

from kube_runtime.clock import SimClock
from kube_runtime.workloads.batches import call_each, in_order


def test_the_calls_of_a_batch_run_concurrently() -> None:
    # each call waits until all four have started: one after the other would never get there
    barrier = threading.Barrier(4, timeout=5)
    assert call_each(lambda i: barrier.wait(), range(4)) == []


def test_limit_one_and_single_calls_run_on_the_callers_thread() -> None:
    me = threading.current_thread()
    seen: list[tuple[int, threading.Thread]] = []
    assert (
        call_each(lambda i: seen.append((i, threading.current_thread())), range(3), limit=1) == []
    )
    assert call_each(lambda i: seen.append((i, threading.current_thread())), [7]) == []
    assert seen == [(0, me), (1, me), (2, me), (7, me)]


def test_at_most_limit_calls_run_at_a_time() -> None:
    lock = threading.Lock()
    running, most = 0, 0
    barrier = threading.Barrier(3, timeout=5)

    def step(i: int) -> None:
        nonlocal running, most
        with lock:
            running += 1
            most = max(most, running)
        if i < 3:
            barrier.wait()  # the first three overlap
        with lock:
            running -= 1

    assert call_each(step, range(10), limit=3) == []
    assert most == 3


def test_failures_come_back_in_index_order_and_do_not_stop_the_batch() -> None:
    done: list[int] = []
    later_failed = threading.Event()

    def step(i: int) -> None:
        if i == 0:
            assert later_failed.wait(5)  # fails after index 2 has failed
            raise ValueError("zero")
        if i == 2:
            later_failed.set()
            raise ValueError("two")
        done.append(i)

    errors = call_each(step, range(4))
    assert [str(e) for e in errors] == ["zero", "two"]
    assert sorted(done) == [1, 3]


def test_effects_run_after_the_batch_in_index_order() -> None:
    effects: list[str] = []
    second_done = threading.Event()

    def step(i: int) -> None:
        if i == 0:
            assert second_done.wait(5)  # index 1 finishes first
        in_order(lambda: effects.append(f"{i}a"))
        in_order(lambda: effects.append(f"{i}b"))
        if i == 1:
            second_done.set()

    assert call_each(step, range(2)) == []
    assert effects == ["0a", "0b", "1a", "1b"]


def test_an_effect_outside_a_batch_runs_at_once() -> None:
    effects: list[int] = []
    in_order(lambda: effects.append(1))
    assert effects == [1]


def test_a_failing_effect_is_its_steps_failure() -> None:
    def step(i: int) -> None:
        in_order(lambda: (_ for _ in ()).throw(ValueError(f"effect {i}")) if i == 1 else None)

    assert [str(e) for e in call_each(step, range(3))] == ["effect 1"]


def test_a_base_exception_is_raised_once_every_step_ended() -> None:
    ended: list[int] = []

    def step(i: int) -> None:
        if i == 0:
            raise KeyboardInterrupt
        ended.append(i)

    with pytest.raises(KeyboardInterrupt):
        call_each(step, range(3))
    assert sorted(ended) == [1, 2]


def test_a_limit_below_one_is_refused() -> None:
    with pytest.raises(ValueError):
        call_each(lambda i: None, range(2), limit=0)


def test_steps_are_participants_of_a_simulated_clock() -> None:
    # steps that wait on the clock: time moves once all of them wait (they are participants,
    # not threads the clock cannot see), and they wait together, not one after the other
    clk = SimClock()
    woke: list[float] = []
    with clk.activate():
        start = clk.monotonic()
        errors = call_each(lambda i: (clk.sleep(5 + i), woke.append(clk.monotonic())), range(3))
    assert errors == []
    assert sorted(t - start for t in woke) == [5, 6, 7]


def test_a_batch_with_at_most_one_busy_step_runs_on_the_callers_thread() -> None:
    me = threading.current_thread()
    seen: list[threading.Thread] = []
    step = lambda i: seen.append(threading.current_thread())  # noqa: E731
    assert call_each(step, range(4), busy=lambda i: i == 2) == []
    assert seen == [me] * 4
    # two busy steps: they overlap (each waits for the other), idle ones run too
    barrier = threading.Barrier(2, timeout=5)
    ran: list[int] = []
    assert (
        call_each(
            lambda i: ran.append(i) or (i in (1, 3) and barrier.wait()),
            range(4),
            busy=lambda i: i in (1, 3),
        )
        == []
    )
    assert sorted(ran) == [0, 1, 2, 3]
