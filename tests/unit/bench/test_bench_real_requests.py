"""The ``real`` benchmark's read counts, extra counters and per-set status lag
(bench/real_controllers.py): pure parts, no cluster."""

from collections import Counter
from typing import Any

import pytest

from bench.real_controllers import (
    SetTimes,
    delta,
    family_summary,
    parse_counters,
    quantiles,
    read_summary,
    verb_summary,
)

METRICS = """\
# HELP etcd_request_duration_seconds [ALPHA] Etcd request latency in seconds for each operation and object type.
# TYPE etcd_request_duration_seconds histogram
etcd_request_duration_seconds_bucket{operation="create",type="*core.Pod",le="0.005"} 3
etcd_request_duration_seconds_count{operation="create",type="*core.Pod"} 10
etcd_request_duration_seconds_count{operation="get",type="*core.Pod"} 4
apiserver_watch_events_total{group="",kind="Pod",version="v1"} 7
apiserver_watch_events_total{group="apps",kind="Pod",version="v1beta1"} 2
apiserver_response_sizes_sum{component="apiserver",group="",resource="pods",scope="resource",subresource="",verb="GET",version="v1"} 1.5e+03
apiserver_request_total{code="200",resource="pods",verb="GET"} 9
unlabelled_total 3
"""


def test_parse_counters_sums_over_other_labels_and_skips_other_families() -> None:
    counts = parse_counters(METRICS)
    assert counts[("etcd_request_duration_seconds_count", ("create", "*core.Pod"))] == 10
    assert counts[("etcd_request_duration_seconds_count", ("get", "*core.Pod"))] == 4
    assert counts[("apiserver_watch_events_total", ("Pod",))] == 9
    assert counts[("apiserver_response_sizes_sum", ("GET", "pods", ""))] == 1500.0
    assert len(counts) == 4  # buckets, request totals and unknown families left out


def test_parse_counters_named_families_only() -> None:
    counts = parse_counters("unlabelled_total 3\nother 1\n", {"unlabelled_total": ()})
    assert counts == {("unlabelled_total", ()): 3.0}


def test_delta_of_extra_counters() -> None:
    before = parse_counters(METRICS)
    after = parse_counters(METRICS.replace("} 10", "} 15"))
    assert delta(after, before) == Counter(
        {("etcd_request_duration_seconds_count", ("create", "*core.Pod")): 5.0}
    )


def test_read_summary_largest_first() -> None:
    reads = Counter(
        {
            ("GET", "pods", "", "200"): 3,
            ("GET", "pods", "", "404"): 1,
            ("LIST", "pods", "", "200"): 5,
            ("WATCH", "statefulsets", "", "200"): 1,
            ("GET", "pods", "log", "200"): 2,
        }
    )
    assert read_summary(reads) == "LIST pods 5, GET pods 4, GET pods/log 2, WATCH statefulsets 1"
    assert read_summary(Counter()) == "none"


def _sts(name: str, ready: int, replicas: int = 2) -> dict[str, Any]:
    status = {
        "observedGeneration": 1,
        "replicas": replicas,
        "readyReplicas": ready,
        "currentReplicas": replicas,
        "updatedReplicas": replicas,
        "currentRevision": "r1",
        "updateRevision": "r1",
    }
    return {"metadata": {"name": name, "generation": 1}, "status": status}


def _pod(name: str, ready: bool) -> dict[str, Any]:
    status = "True" if ready else "False"
    return {
        "metadata": {"name": name},
        "status": {"conditions": [{"type": "Ready", "status": status}]},
    }


def test_set_times_lag_from_last_pod_ready_to_converged(monkeypatch: pytest.MonkeyPatch) -> None:
    now = [100.0]
    monkeypatch.setattr("bench.real_controllers.time.perf_counter", lambda: now[0])
    times = SetTimes(replicas=2)
    times.on_pod(_pod("web-0", False))
    times.on_pod(_pod("web-0", True))  # 100.0
    now[0] = 101.0
    times.on_pod(_pod("web-0", True), _pod("web-0", True))  # first Ready time kept
    times.on_pod(_pod("web-1", True))  # 101.0
    times.on_pod(_pod("db-0", True))  # db has one pod of two: no lag for it
    times.on_set(_sts("web", ready=1))
    now[0] = 101.5
    times.on_set(_sts("web", ready=1), _sts("web", ready=2))  # converged at 101.5
    now[0] = 103.0
    times.on_set(_sts("web", ready=2))  # first convergence kept
    times.on_set(_sts("db", ready=2))
    assert times.converged == {"web": 101.5, "db": 103.0}
    assert times.status_lags() == [0.5]


def test_quantiles() -> None:
    assert quantiles([]) == "-"
    assert quantiles([3.0, 1.0, 2.0]) == "2.00 / 3.00 / 3.00"
    values = [float(i) for i in range(10)]
    assert quantiles(values) == "5.00 / 9.00 / 9.00"


def test_verb_and_family_summaries() -> None:
    writes = Counter({("POST", "pods", "", "201"): 3, ("PUT", "pods", "status", "200"): 1})
    reads = Counter({("GET", "pods", "", "200"): 2, ("POST", "x", "", "500"): 1})
    assert verb_summary(writes, reads) == "POST 4, GET 2, PUT 1"
    extra = parse_counters(METRICS)
    assert family_summary(extra, "apiserver_watch_events_total") == "Pod 9"
    assert family_summary(extra, "etcd_request_duration_seconds_count", by=0) == "create 10, get 4"
    assert family_summary(extra, "apiserver_cache_list_total") == "none"


def test_report_has_the_requests_table() -> None:
    from bench import controllers, embedded_server
    from bench.real_controllers import CONTENDERS, REQUESTS_TITLE, Result, report, split_writes

    ctx = controllers.ControllersContext(
        embedded_server.QUICK, False, controllers=controllers.QUICK
    )
    requests = Counter({("POST", "pods", "", "201"): 10, ("GET", "pods", "", "200"): 4})
    result = Result(
        CONTENDERS[0],
        "Parallel 2 x 5",
        2,
        5,
        1.0,
        {"converged": 3.0},
        split_writes(requests),
        dict.fromkeys(
            ("controller", "kube-controller-manager", "kubelet", "kube-apiserver", "etcd"), 1.0
        ),
        reads=Counter({k: n for k, n in requests.items() if k[0] == "GET"}),
        extra=parse_counters(METRICS),
        status_lags={"web-0": 0.1, "web-1": 0.2},
    )
    report(ctx, [result])
    table = next(t for t in ctx.tables if t.title == REQUESTS_TITLE)
    assert table.rows == [
        [
            "Parallel 2 x 5",
            CONTENDERS[0].label,
            "POST 10, GET 4",
            "GET pods 4",
            "Pod 9",
            "create 10, get 4",
            "0.20 / 0.20 / 0.20",
        ]
    ]
