"""``kube_runtime.metrics.lean_observe`` / ``lean_inc`` (the REST client's per-request
metrics) record exactly the samples prometheus_client's ``observe`` / ``inc`` record."""

from __future__ import annotations

import math

import pytest
from prometheus_client import CollectorRegistry, Counter, Histogram

from kube_runtime.metrics import _REST_BUCKETS, lean_inc, lean_observe

AMOUNTS = [
    0.0,
    -1.0,
    1e-9,
    *_REST_BUCKETS,  # each bound exactly: it belongs to its own bucket (amount <= bound)
    *(b + 1e-12 for b in _REST_BUCKETS),
    *(b - 1e-12 for b in _REST_BUCKETS),
    61.0,
    1e9,
    math.inf,
    math.nan,  # counted in the sum (as NaN) and in no bucket, as observe does
]


def _samples(registry: CollectorRegistry) -> list[tuple[str, dict[str, str], str]]:
    # repr: NaN equals itself as text
    return [
        (s.name, s.labels, repr(s.value))
        for metric in registry.collect()
        for s in metric.samples
        if not s.name.endswith("_created")
    ]


@pytest.mark.parametrize("amounts", [AMOUNTS[:-1], AMOUNTS])
def test_lean_observe_records_what_observe_records(amounts: list[float]) -> None:
    registries = []
    for lean in (False, True):
        registry = CollectorRegistry()
        histogram = Histogram("h", "h", ["verb"], buckets=_REST_BUCKETS, registry=registry)
        child = histogram.labels("PUT")
        observe = lean_observe(child) if lean else child.observe
        assert (observe != child.observe) is lean  # the lean path is taken
        for amount in amounts:
            observe(amount)
        registries.append(registry)
    assert _samples(registries[0]) == _samples(registries[1])


def test_lean_inc_counts_what_inc_counts() -> None:
    registries = []
    for lean in (False, True):
        registry = CollectorRegistry()
        counter = Counter("c", "c", ["code"], registry=registry)
        inc = lean_inc(counter.labels("200")) if lean else counter.labels("200").inc
        for _ in range(5):
            inc()
        counter.labels("500").inc()
        registries.append(registry)
    assert _samples(registries[0]) == _samples(registries[1])
    assert ("c_total", {"code": "200"}, "5.0") in _samples(registries[1])


def test_an_unknown_layout_falls_back_to_the_child_s_own_methods() -> None:
    class Child:
        def observe(self, amount: float) -> None: ...

        def inc(self) -> None: ...

    child = Child()
    assert lean_observe(child) == child.observe
    assert lean_inc(child) == child.inc
