"""Rate limiters of kube_runtime.workqueue: client-go's default_rate_limiters semantics."""

from __future__ import annotations

import threading

import pytest

from kube_runtime.clock import FakeClock
from kube_runtime.workqueue import (
    BucketRateLimiter,
    ItemExponentialFailureRateLimiter,
    ItemFastSlowRateLimiter,
    MaxOfRateLimiter,
    default_controller_rate_limiter,
)

# --- per-item exponential ------------------------------------------------------------------


def test_exponential_doubles_per_failure_and_caps():
    limiter = ItemExponentialFailureRateLimiter(base=0.001, maximum=0.01)
    delays = [limiter.when("a") for _ in range(6)]
    assert delays == pytest.approx([0.001, 0.002, 0.004, 0.008, 0.01, 0.01])
    assert limiter.num_requeues("a") == 6


def test_exponential_is_per_item_and_forget_resets():
    limiter = ItemExponentialFailureRateLimiter(base=1, maximum=100)
    assert [limiter.when("a"), limiter.when("a"), limiter.when("b")] == [1, 2, 1]
    limiter.forget("a")
    assert limiter.num_requeues("a") == 0
    assert limiter.num_requeues("b") == 1
    assert limiter.when("a") == 1
    limiter.forget("never-seen")  # no error


def test_exponential_never_overflows():
    limiter = ItemExponentialFailureRateLimiter(base=0.005, maximum=1000)
    for _ in range(5000):
        delay = limiter.when("a")
    assert delay == 1000
    assert limiter.num_requeues("a") == 5000


def test_exponential_defaults_are_client_go_defaults():
    limiter = ItemExponentialFailureRateLimiter()
    assert (limiter.base, limiter.maximum) == (0.005, 1000.0)


def test_exponential_counts_every_failure_across_threads():
    limiter = ItemExponentialFailureRateLimiter()

    def fail() -> None:
        for _ in range(500):
            limiter.when("a")

    threads = [threading.Thread(target=fail) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert limiter.num_requeues("a") == 2000


# --- fast/slow -----------------------------------------------------------------------------


def test_fast_slow_switches_after_max_fast_attempts():
    limiter = ItemFastSlowRateLimiter(fast_delay=0.1, slow_delay=5, max_fast_attempts=2)
    assert [limiter.when("a") for _ in range(4)] == [0.1, 0.1, 5, 5]
    assert limiter.when("b") == 0.1
    assert limiter.num_requeues("a") == 4
    limiter.forget("a")
    assert limiter.num_requeues("a") == 0
    assert limiter.when("a") == 0.1


# --- token bucket --------------------------------------------------------------------------


def test_bucket_allows_a_burst_then_spaces_reservations():
    clock = FakeClock()
    limiter = BucketRateLimiter(qps=10, burst=3, clock=clock)
    delays = [limiter.when(i) for i in range(6)]
    assert delays == pytest.approx([0, 0, 0, 0.1, 0.2, 0.3])


def test_bucket_refills_with_time_up_to_burst():
    clock = FakeClock()
    limiter = BucketRateLimiter(qps=10, burst=2, clock=clock)
    limiter.when("x")
    limiter.when("x")
    assert limiter.when("x") == pytest.approx(0.1)  # balance now -1
    clock.step(0.3)  # +3 tokens -> 2
    assert limiter.when("x") == 0
    clock.step(100)  # refills only to burst
    assert [limiter.when("x") for _ in range(3)] == pytest.approx([0, 0, 0.1])


def test_bucket_is_not_per_item():
    limiter = BucketRateLimiter(qps=1, burst=1, clock=FakeClock())
    assert limiter.when("a") == 0
    assert limiter.when("b") == pytest.approx(1)
    limiter.forget("b")
    assert limiter.num_requeues("b") == 0
    assert limiter.when("c") == pytest.approx(2)  # forget gives no token back


def test_bucket_with_infinite_qps_never_waits():
    limiter = BucketRateLimiter(qps=float("inf"), burst=1)
    assert [limiter.when("a") for _ in range(10)] == [0] * 10


@pytest.mark.parametrize(("qps", "burst"), [(0, 1), (-1, 1), (float("nan"), 1), (10, 0)])
def test_bucket_rejects_unusable_settings(qps: float, burst: int):
    with pytest.raises(ValueError):
        BucketRateLimiter(qps=qps, burst=burst)


# --- max of --------------------------------------------------------------------------------


def test_max_of_takes_the_longest_wait_and_feeds_every_limiter():
    fast_slow = ItemFastSlowRateLimiter(fast_delay=0.5, slow_delay=10, max_fast_attempts=3)
    exponential = ItemExponentialFailureRateLimiter(base=0.1, maximum=100)
    limiter = MaxOfRateLimiter(fast_slow, exponential)
    assert [limiter.when("a") for _ in range(5)] == pytest.approx([0.5, 0.5, 0.5, 10, 10])
    assert exponential.num_requeues("a") == 5
    assert limiter.when("a") == pytest.approx(10)  # exponential is at 0.1 * 2**5 = 3.2
    assert limiter.num_requeues("a") == 6
    limiter.forget("a")
    assert (fast_slow.num_requeues("a"), exponential.num_requeues("a")) == (0, 0)


def test_max_of_num_requeues_is_the_maximum():
    a = ItemExponentialFailureRateLimiter()
    b = ItemExponentialFailureRateLimiter()
    a.when("x")
    b.when("x")
    b.when("x")
    assert MaxOfRateLimiter(a, b).num_requeues("x") == 2


def test_max_of_needs_a_limiter():
    with pytest.raises(ValueError):
        MaxOfRateLimiter()


def test_default_controller_rate_limiter():
    clock = FakeClock()
    limiter = default_controller_rate_limiter(clock)
    # per item: 5 ms doubling
    assert [limiter.when("a") for _ in range(3)] == pytest.approx([0.005, 0.01, 0.02])
    # overall: 100 burst at 10 qps -> the 101st reservation waits 0.1 s (more than 5 ms)
    for i in range(97):
        limiter.when(("other", i))
    assert limiter.when("fresh") == pytest.approx(0.1)
    assert limiter.num_requeues("a") == 3
