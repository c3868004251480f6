"""Pure helpers of the ``real`` benchmark suite (bench/real_controllers.py); the benchmark
itself needs the real binaries and minutes, and is not run here."""

from collections import Counter

from bench import __main__ as bench_main
from bench.real_controllers import (
    CONTENDERS,
    breakdown,
    component,
    count,
    delta,
    failures,
    parse_request_counts,
    proc_cpu_seconds,
    split_writes,
    status_writes,
    sts_converged,
    total,
)

METRICS = """\
# HELP apiserver_request_total [STABLE] Counter of apiserver requests broken out for each verb, dry run value, group, version, resource, scope, component, and HTTP response code.
# TYPE apiserver_request_total counter
apiserver_request_total{code="201",component="apiserver",contentType="application/json",dry_run="",group="",resource="pods",scope="resource",subresource="",verb="POST",version="v1"} 7
apiserver_request_total{code="201",component="apiserver",contentType="application/vnd.kubernetes.protobuf",dry_run="",group="",resource="pods",scope="resource",subresource="",verb="POST",version="v1"} 3
apiserver_request_total{code="200",component="apiserver",contentType="application/json",dry_run="",group="apps",resource="statefulsets",scope="resource",subresource="status",verb="PUT",version="v1"} 4
apiserver_request_total{code="409",component="apiserver",contentType="application/json",dry_run="",group="apps",resource="statefulsets",scope="resource",subresource="status",verb="PUT",version="v1"} 1
apiserver_request_total{code="200",component="apiserver",contentType="application/json",dry_run="",group="",resource="pods",scope="namespace",subresource="",verb="LIST",version="v1"} 1.2e+01
apiserver_request_total{code="200",component="",contentType="",dry_run="",group="",resource="",scope="",subresource="/readyz",verb="GET",version=""} 5
apiserver_request_duration_seconds_bucket{component="apiserver",verb="POST",le="0.05"} 99
apiserver_request_total_other{code="200",verb="POST"} 1
"""


def test_parse_sums_over_other_labels():
    counts = parse_request_counts(METRICS)
    assert counts[("POST", "pods", "", "201")] == 10
    assert counts[("PUT", "statefulsets", "status", "200")] == 4
    assert counts[("PUT", "statefulsets", "status", "409")] == 1
    assert counts[("LIST", "pods", "", "200")] == 12
    assert counts[("GET", "", "/readyz", "200")] == 5
    assert sum(counts.values()) == 32  # histograms and other metrics ignored


def test_parse_label_values_with_escapes():
    text = 'apiserver_request_total{code="200",resource="a\\"b",verb="PUT",subresource=""} 2\n'
    assert parse_request_counts(text) == Counter({("PUT", 'a\\"b', "", "200"): 2})


def test_delta_keeps_only_growth():
    before = Counter({("POST", "pods", "", "201"): 5, ("GET", "pods", "", "200"): 9})
    after = Counter(
        {
            ("POST", "pods", "", "201"): 8,
            ("GET", "pods", "", "200"): 9,
            ("PUT", "pods", "status", "200"): 2,
        }
    )
    assert delta(after, before) == Counter(
        {("POST", "pods", "", "201"): 3, ("PUT", "pods", "status", "200"): 2}
    )


def test_component_attribution():
    assert component(("POST", "pods", "binding", "201")) == "kubelet"
    assert component(("PUT", "pods", "status", "200")) == "kubelet"
    assert component(("PUT", "persistentvolumeclaims", "", "200")) == "kubelet"
    assert component(("PUT", "persistentvolumeclaims", "status", "200")) == "kubelet"
    assert component(("PUT", "nodes", "status", "200")) == "kubelet"
    assert component(("POST", "statefulsets", "", "201")) == "harness"
    assert component(("POST", "namespaces", "", "201")) == "harness"
    assert component(("POST", "events", "", "201")) == "events"
    assert component(("PATCH", "events", "", "200")) == "events"
    for key in [
        ("POST", "pods", "", "201"),
        ("POST", "persistentvolumeclaims", "", "201"),
        ("POST", "controllerrevisions", "", "201"),
        ("PUT", "statefulsets", "status", "409"),
        ("PATCH", "pods", "", "200"),
        ("PUT", "statefulsets", "", "200"),
    ]:
        assert component(key) == "controller", key


def test_split_writes_ignores_reads_and_sums():
    requests = Counter(
        {
            ("POST", "pods", "", "201"): 10,
            ("PUT", "statefulsets", "status", "200"): 4,
            ("PUT", "statefulsets", "status", "409"): 1,
            ("PATCH", "statefulsets", "status", "200"): 2,
            ("POST", "pods", "binding", "201"): 10,
            ("POST", "statefulsets", "", "201"): 2,
            ("POST", "events", "", "201"): 6,
            ("LIST", "pods", "", "200"): 50,
            ("WATCH", "pods", "", "200"): 3,
        }
    )
    split = split_writes(requests)
    c = split["controller"]
    assert total(c) == 16 and total(c, ok=False) == 1
    assert status_writes(c) == 6
    assert count(c, "POST", "pods") == 10
    assert count(c, "PUT", "statefulsets/status", ok=False) == 1
    assert breakdown(c) == "POST pods 10, PUT statefulsets/status 4, PATCH statefulsets/status 2"
    assert failures(c) == "PUT statefulsets/status 409: 1"
    assert total(split["kubelet"]) == 10
    assert total(split["harness"]) == 2
    assert total(split["events"]) == 6
    assert failures(split["kubelet"]) == "none"
    assert breakdown(Counter()) == "none"


def _sts(status, generation=1):
    return {"metadata": {"name": "web", "generation": generation}, "status": status}


def test_converged_on_1_20_fields_with_omitted_zeros():
    done = {
        "observedGeneration": 1,
        "replicas": 5,
        "readyReplicas": 5,
        "currentReplicas": 5,
        "updatedReplicas": 5,
        "currentRevision": "web-1",
        "updateRevision": "web-1",
    }
    assert sts_converged(_sts(done), 5)
    assert not sts_converged(_sts(done, generation=2), 5)
    assert not sts_converged(_sts({**done, "updateRevision": "web-2"}), 5)
    missing_ready = {k: v for k, v in done.items() if k != "readyReplicas"}
    assert not sts_converged(_sts(missing_ready), 5)
    assert not sts_converged(_sts({}), 5)
    # zero replicas: kube-apiserver omits the zero-valued counts
    assert sts_converged(
        _sts({"observedGeneration": 1, "currentRevision": "r", "updateRevision": "r"}), 0
    )


def test_proc_cpu_seconds_handles_names_with_spaces_and_parens():
    fields = ["S", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "250", "50"]
    stat = "1234 (kube (x) y) " + " ".join(fields) + " 0 0 20 0\n"
    assert proc_cpu_seconds(stat, 100) == 3.0


def test_suite_is_listed_but_not_in_the_default_run():
    assert bench_main.resolve(["real"]) == ["real-parallel", "real-ordered"]
    assert "real-parallel" not in bench_main.resolve([])
    assert [c.key for c in CONTENDERS] == ["ours", "kcm", "kcm-fast", "ours-5"]
    assert CONTENDERS[1].controllers()[0] == "statefulset"
    assert "statefulset" not in CONTENDERS[0].controllers()
