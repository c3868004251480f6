"""Cell formatting of the embedded server's ``kubectl get`` Tables (kube_runtime.envtest.server.tables),
following upstream's printers (``pkg/printers/internalversion/printers.go``)."""

from __future__ import annotations

import time
from datetime import datetime, timezone
from types import SimpleNamespace
from typing import Any

import pytest

from kube_runtime.envtest.server import tables
from kube_runtime.envtest.server.resources import SERVED_BUILTINS, ResourceInfo


def _info(plural: str) -> ResourceInfo:
    return next(i for i in SERVED_BUILTINS if i.plural == plural)


_NOW = float(int(time.time()))
"""The clock the printers read in these tests (whole seconds, as timestamps are written)."""


@pytest.fixture(autouse=True)
def _frozen_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """Ages are computed against :data:`_NOW`, not the running clock: a timestamp written
    30 s ago must print "30s" however long the test takes."""
    monkeypatch.setattr(tables, "time", SimpleNamespace(time=lambda: _NOW))


def _ts(seconds_ago: float) -> str:
    when = datetime.fromtimestamp(_NOW - seconds_ago, tz=timezone.utc)
    return when.strftime("%Y-%m-%dT%H:%M:%SZ")


def _table(plural: str, *objs: Any) -> dict[str, Any]:
    return tables.table(_info(plural), list(objs), "7", "None")


def _cells(plural: str, obj: Any) -> dict[str, Any]:
    doc = _table(plural, obj)
    names = [c["name"] for c in doc["columnDefinitions"]]
    return dict(zip(names, doc["rows"][0]["cells"], strict=True))


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (-5, "<invalid>"),
        (-1.5, "0s"),
        (0, "0s"),
        (119, "119s"),
        (120, "2m"),
        (5 * 60 + 10, "5m10s"),
        (10 * 60 + 10, "10m"),
        (179 * 60, "179m"),
        (3 * 3600 + 5 * 60, "3h5m"),
        (7 * 3600, "7h"),
        (8 * 3600 + 59 * 60, "8h"),
        (47 * 3600, "47h"),
        (2 * 86400 + 4 * 3600, "2d4h"),
        (7 * 86400, "7d"),
        (8 * 86400 + 5 * 3600, "8d"),
        (729 * 86400, "729d"),
        (730 * 86400, "2y"),
        (3 * 365 * 86400 + 30 * 86400, "3y30d"),
        (9 * 365 * 86400 + 30 * 86400, "9y"),
    ],
)
def test_human_duration(seconds: float, text: str) -> None:
    assert tables.human_duration(seconds) == text


def test_human_age_unset_or_bad() -> None:
    assert tables.human_age(None) == "<unknown>"
    assert tables.human_age("") == "<unknown>"
    assert tables.human_age("yesterday") == "<unknown>"
    assert tables.human_age("2020-01-01T00:00:00Z", now=1577836800 + 300) == "5m"


@pytest.mark.parametrize(
    ("value", "text"),
    [
        ("1Gi", "1Gi"),
        ("1024Mi", "1Gi"),
        ("1536Mi", "1536Mi"),
        ("0.5Gi", "512Mi"),
        ("1.5Gi", "1536Mi"),
        ("512", "512"),
        ("1000", "1k"),
        ("1500", "1500"),
        ("100M", "100M"),
        ("1000M", "1G"),
        ("0.5", "500m"),
        ("0.0001", "1m"),
        ("1e3", "1e3"),
        ("1E6", "1e6"),
        ("0", "0"),
        (0, "0"),
        ("100Ki", "100Ki"),
        ("1023Ki", "1023Ki"),
        ("0.5Ki", "512"),
        ("", ""),
        ("bogus", "bogus"),
    ],
)
def test_canonical_quantity(value: Any, text: str) -> None:
    assert tables.canonical_quantity(value) == text


def test_access_modes_in_fixed_order_without_duplicates() -> None:
    modes = ["ReadWriteOncePod", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOnce", "Other"]
    assert tables.access_modes(modes) == "RWO,RWX,RWOP"
    assert tables.access_modes(None) == ""


def _pod(**status: Any) -> dict[str, Any]:
    return {
        "metadata": {"name": "p", "creationTimestamp": _ts(30)},
        "spec": {"containers": [{"name": "a"}, {"name": "b"}]},
        "status": status,
    }


def _running(name: str, ready: bool = True, restarts: int = 0, **more: Any) -> dict[str, Any]:
    return {
        "name": name,
        "ready": ready,
        "restartCount": restarts,
        "state": {"running": {"startedAt": _ts(60)}},
        **more,
    }


def test_pod_ready_status_and_restarts_with_last_restart_age() -> None:
    pod = _pod(
        phase="Running",
        containerStatuses=[
            _running(
                "a",
                restarts=2,
                lastState={"terminated": {"exitCode": 1, "finishedAt": _ts(300)}},
            ),
            _running("b", restarts=1, lastState={"terminated": {"finishedAt": _ts(3600 * 2)}}),
        ],
    )
    summary = tables.pod_summary(pod)
    assert summary == ("2/2", "Running", "3 (5m ago)")
    # Restarts without a recorded termination: the count alone.
    pod["status"]["containerStatuses"][0].pop("lastState")
    pod["status"]["containerStatuses"][1].pop("lastState")
    assert tables.pod_summary(pod).restarts == "3"


def test_pod_status_reasons() -> None:
    waiting = {"name": "a", "state": {"waiting": {"reason": "ImagePullBackOff"}}}
    assert tables.pod_summary(_pod(phase="Pending", containerStatuses=[waiting])).status == (
        "ImagePullBackOff"
    )
    signal = {"name": "a", "state": {"terminated": {"exitCode": 137, "signal": 9}}}
    assert tables.pod_summary(_pod(phase="Failed", containerStatuses=[signal])).status == (
        "Signal:9"
    )
    code = {"name": "a", "state": {"terminated": {"exitCode": 2}}}
    assert tables.pod_summary(_pod(phase="Failed", containerStatuses=[code])).status == (
        "ExitCode:2"
    )
    assert tables.pod_summary(_pod(phase="Failed", reason="Evicted")).status == "Evicted"
    gated = _pod(
        phase="Pending",
        conditions=[{"type": "PodScheduled", "status": "False", "reason": "SchedulingGated"}],
    )
    assert tables.pod_summary(gated).status == "SchedulingGated"
    assert tables.pod_summary({"metadata": {}, "spec": {}}).status == ""


def test_pod_completed_container_with_another_running() -> None:
    done = {"name": "b", "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}}
    # The last container is looked at first: the first one's state decides, and a
    # "Completed" one turns into NotReady/Running while another still runs.
    pod = _pod(phase="Running", containerStatuses=[done, _running("a")])
    assert tables.pod_summary(pod).status == "NotReady"
    pod = _pod(phase="Running", containerStatuses=[done, {"name": "a", "state": {}}])
    assert tables.pod_summary(pod).status == "Completed"
    pod = _pod(phase="Running", containerStatuses=[_running("a"), done])
    assert tables.pod_summary(pod).status == "NotReady"
    pod["status"]["conditions"] = [{"type": "Ready", "status": "True"}]
    assert tables.pod_summary(pod) == ("1/2", "Running", "0")


def test_pod_init_containers_and_sidecars() -> None:
    pod = _pod(
        phase="Pending",
        initContainerStatuses=[
            {"name": "i1", "restartCount": 1, "state": {"terminated": {"exitCode": 0}}},
            {"name": "i2", "restartCount": 2, "state": {"running": {}}},
        ],
    )
    pod["spec"]["initContainers"] = [{"name": "i1"}, {"name": "i2"}, {"name": "i3"}]
    assert tables.pod_summary(pod) == ("0/2", "Init:1/3", "3")
    pod["status"]["initContainerStatuses"][1]["state"] = {"waiting": {"reason": "ErrImagePull"}}
    assert tables.pod_summary(pod).status == "Init:ErrImagePull"
    pod["status"]["initContainerStatuses"][1]["state"] = {"terminated": {"exitCode": 3}}
    assert tables.pod_summary(pod).status == "Init:ExitCode:3"
    pod["status"]["initContainerStatuses"][1]["state"] = {
        "terminated": {"exitCode": 137, "reason": "OOMKilled"}
    }
    assert tables.pod_summary(pod).status == "Init:OOMKilled"

    # A started sidecar (restartPolicy Always) counts as a container, ready or not.
    sidecar = _pod(
        phase="Running",
        initContainerStatuses=[_running("s", restarts=4, started=True)],
        containerStatuses=[_running("a"), _running("b", ready=False)],
    )
    sidecar["spec"]["initContainers"] = [{"name": "s", "restartPolicy": "Always"}]
    assert tables.pod_summary(sidecar) == ("2/3", "Running", "4")


def test_pod_terminating_unknown_and_terminal() -> None:
    pod = _pod(phase="Running")
    pod["metadata"]["deletionTimestamp"] = _ts(1)
    assert tables.pod_summary(pod).status == "Terminating"
    pod["status"]["reason"] = "NodeLost"
    assert tables.pod_summary(pod).status == "Unknown"
    done = _pod(phase="Succeeded")
    done["metadata"]["deletionTimestamp"] = _ts(1)
    assert tables.pod_summary(done).status == "Succeeded"


def test_pod_row_wide_cells_and_conditions() -> None:
    pod = _pod(
        phase="Succeeded",
        podIP="10.0.0.9",
        podIPs=[{"ip": "10.0.0.9"}, {"ip": "fd00::9"}],
        nominatedNodeName="n2",
        conditions=[{"type": "x/a", "status": "True"}, {"type": "x/b", "status": "False"}],
    )
    pod["spec"]["nodeName"] = "n1"
    pod["spec"]["readinessGates"] = [
        {"conditionType": "x/a"},
        {"conditionType": "x/b"},
        {"conditionType": "x/c"},
    ]
    doc = _table("pods", pod)
    assert [(c["name"], c["type"], c["priority"]) for c in doc["columnDefinitions"]] == [
        ("Name", "string", 0),
        ("Ready", "string", 0),
        ("Status", "string", 0),
        ("Restarts", "string", 0),
        ("Age", "string", 0),
        ("IP", "string", 1),
        ("Node", "string", 1),
        ("Nominated Node", "string", 1),
        ("Readiness Gates", "string", 1),
    ]
    assert doc["rows"][0]["cells"] == ["p", "0/2", "Succeeded", "0", "30s", "10.0.0.9", "n1",
                                       "n2", "1/3"]  # fmt: skip
    assert doc["rows"][0]["conditions"] == [
        {
            "type": "Completed",
            "status": "True",
            "reason": "Succeeded",
            "message": "The pod has completed successfully.",
        }
    ]
    assert doc["rows"][0]["object"] is None  # includeObject=None: null, as Go writes it
    cells = _cells("pods", _pod(phase="Pending"))
    assert [cells[k] for k in ("IP", "Node", "Nominated Node", "Readiness Gates")] == ["<none>"] * 4


def _workload(**spec: Any) -> dict[str, Any]:
    return {
        "metadata": {"name": "w", "creationTimestamp": _ts(5)},
        "spec": {
            "replicas": 3,
            "template": {"spec": {"containers": [{"name": "a", "image": "i:1"}, {"name": "b",
                                                                                 "image": "j"}]}},
            **spec,
        },
        "status": {"replicas": 3, "readyReplicas": 1, "updatedReplicas": 2},
    }  # fmt: skip


def test_workload_wide_cells() -> None:
    sel = {"matchLabels": {"b": "2", "a": "1"}, "matchExpressions": [
        {"key": "t", "operator": "In", "values": ["y", "x"]}]}  # fmt: skip
    assert list(_cells("deployments", _workload(selector=sel)).values()) == [
        "w", "1/3", 2, 0, "5s", "a,b", "i:1,j", "a=1,b=2,t in (x,y)"
    ]  # fmt: skip
    # Deployment: the selector's String() ("" when nil or empty); ReplicaSet: "<none>".
    assert _cells("deployments", _workload())["Selector"] == ""
    assert _cells("deployments", _workload(selector={"matchExpressions": [{}]}))["Selector"] == (
        "<invalid>"
    )
    assert list(_cells("replicasets", _workload()).values()) == [
        "w", 3, 3, 1, "5s", "a,b", "i:1,j", "<none>"
    ]  # fmt: skip
    assert list(_cells("statefulsets", _workload()).values()) == ["w", "1/3", "5s", "a,b", "i:1,j"]
    types = [(c["name"], c["type"]) for c in _table("deployments")["columnDefinitions"]][:4]
    assert types == [("Name", "string"), ("Ready", "string"), ("Up-to-date", "string"),
                     ("Available", "string")]  # fmt: skip


def test_controller_revision_controller() -> None:
    def rev(*refs: Any) -> Any:
        return {"metadata": {"name": "r", "ownerReferences": list(refs)}, "revision": 4}

    owner = {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "s", "controller": True}
    assert _cells("controllerrevisions", rev(owner))["Controller"] == "statefulset.apps/s"
    core = {**owner, "apiVersion": "v1", "kind": "Pod"}
    assert _cells("controllerrevisions", rev(core))["Controller"] == "pod/s"
    assert _cells("controllerrevisions", rev({**owner, "controller": False}))["Controller"] == (
        "<none>"
    )
    assert _cells("controllerrevisions", rev(owner))["Revision"] == 4


def test_service_cells() -> None:
    def svc(type_: str, **spec: Any) -> Any:
        return {"metadata": {"name": "s"}, "spec": {"type": type_, **spec}}

    ports = [{"port": 80, "protocol": "TCP"}, {"port": 53, "protocol": "UDP", "nodePort": 30053}]
    cells = _cells("services", svc("NodePort", clusterIPs=["10.0.0.1"], ports=ports))
    assert cells["Cluster-IP"] == "10.0.0.1"
    assert cells["Port(s)"] == "80/TCP,53:30053/UDP"
    assert cells["External-IP"] == "<none>" and cells["Selector"] == "<none>"
    lb = svc("LoadBalancer")
    assert tables.service_external_ip(lb) == "<pending>"
    lb["status"] = {"loadBalancer": {"ingress": [{"hostname": "z.example"}, {"ip": "1.1.1.1"}]}}
    assert tables.service_external_ip(lb) == "1.1.1.1,z.example"
    lb["spec"]["externalIPs"] = ["2.2.2.2"]
    assert tables.service_external_ip(lb) == "1.1.1.1,z.example,2.2.2.2"
    assert tables.service_external_ip(svc("ExternalName", externalName="a.b")) == "a.b"
    assert tables.service_external_ip(svc("Other")) == "<unknown>"
    cells = _cells("services", svc("ExternalName", selector={"b": "1", "a": "2"}))
    assert (cells["Cluster-IP"], cells["Port(s)"], cells["Selector"]) == ("<none>", "<none>",
                                                                          "a=2,b=1")  # fmt: skip


def test_pvc_cells() -> None:
    claim: dict[str, Any] = {
        "metadata": {"name": "c"},
        "spec": {"resources": {"requests": {"storage": "1Gi"}}},
        "status": {"phase": "Pending", "accessModes": ["ReadWriteOnce"]},
    }
    cells = _cells("persistentvolumeclaims", claim)
    assert [cells[k] for k in ("Status", "Volume", "Capacity", "Access Modes", "StorageClass",
                               "VolumeAttributesClass", "VolumeMode")] == [
        "Pending", "", "", "", "", "<unset>", "<unset>"]  # fmt: skip
    claim["spec"].update(volumeName="pv", storageClassName="fast", volumeMode="Filesystem",
                         volumeAttributesClassName="gold")  # fmt: skip
    claim["status"].update(phase="Bound", capacity={"storage": "2048Mi"})
    claim["metadata"]["deletionTimestamp"] = _ts(1)
    cells = _cells("persistentvolumeclaims", claim)
    assert [cells[k] for k in ("Status", "Volume", "Capacity", "Access Modes", "StorageClass",
                               "VolumeAttributesClass", "VolumeMode")] == [
        "Terminating", "pv", "2Gi", "RWO", "fast", "gold", "Filesystem"]  # fmt: skip
    claim["metadata"]["annotations"] = {"volume.beta.kubernetes.io/storage-class": ""}
    assert _cells("persistentvolumeclaims", claim)["StorageClass"] == ""
    del claim["status"]["capacity"]
    assert _cells("persistentvolumeclaims", claim)["Capacity"] == "0"


def test_event_cells() -> None:
    event: dict[str, Any] = {
        "metadata": {"name": "e"},
        "involvedObject": {"kind": "Pod", "name": "p", "fieldPath": "spec.containers{c}"},
        "type": "Warning",
        "reason": "BackOff",
        "message": " back off \n",
        "firstTimestamp": _ts(600),
        "lastTimestamp": _ts(60),
        "count": 5,
        "source": {"component": "kubelet", "host": "n1"},
    }
    doc = _table("events", event)
    assert [(c["name"], c["priority"]) for c in doc["columnDefinitions"]] == [
        ("Last Seen", 0), ("Type", 0), ("Reason", 0), ("Object", 0), ("Subobject", 1),
        ("Source", 1), ("Message", 0), ("First Seen", 1), ("Count", 1), ("Name", 1),
    ]  # fmt: skip
    assert doc["rows"][0]["cells"] == ["60s", "Warning", "BackOff", "pod/p", "spec.containers{c}",
                                       "kubelet, n1", "back off", "10m", 5, "e"]  # fmt: skip
    new_api = {
        "metadata": {"name": "e2"},
        "involvedObject": {"kind": "Node"},
        "eventTime": _ts(30),
        "series": {"count": 7, "lastObservedTime": _ts(3)},
        "reportingComponent": "ctl",
        "reportingInstance": "ctl-1",
    }
    cells = _cells("events", new_api)
    assert [cells[k] for k in ("Last Seen", "Object", "Source", "First Seen", "Count")] == [
        "3s", "node", "ctl, ctl-1", "30s", 7]  # fmt: skip
    assert _cells("events", {"metadata": {"name": "e3"}})["Count"] == 1
    assert _cells("events", {"metadata": {"name": "e3"}})["Last Seen"] == "<unknown>"


def test_node_cells() -> None:
    node: dict[str, Any] = {
        "metadata": {"name": "n", "labels": {"node-role.kubernetes.io/worker": "",
                                             "node-role.kubernetes.io/": "",
                                             "kubernetes.io/role": "infra"}},
        "spec": {},
        "status": {
            "conditions": [{"type": "MemoryPressure", "status": "False"},
                           {"type": "Ready", "status": "True"}],
            "addresses": [{"type": "ExternalIP", "address": "1.2.3.4"}],
            "nodeInfo": {"kubeletVersion": "v1.30.0", "kernelVersion": "6.1"},
        },
    }  # fmt: skip
    cells = _cells("nodes", node)
    assert [cells[k] for k in ("Status", "Roles", "Version", "Internal-IP", "External-IP",
                               "OS-Image", "Kernel-Version", "Container-Runtime")] == [
        "Ready", "infra,worker", "v1.30.0", "<none>", "1.2.3.4", "<unknown>", "6.1",
        "<unknown>"]  # fmt: skip
    node["spec"]["unschedulable"] = True
    node["status"]["conditions"] = []
    assert _cells("nodes", node)["Status"] == "Unknown,SchedulingDisabled"


def test_small_kinds() -> None:
    assert tables.format_endpoints({}) == "<none>"
    eps = {"subsets": [{"addresses": [{"ip": "1.1.1.1"}, {"ip": "fd00::1"}],
                        "ports": [{"port": 80}, {"port": 81}]}]}  # fmt: skip
    assert tables.format_endpoints(eps) == "1.1.1.1:80,[fd00::1]:80,1.1.1.1:81 + 1 more..."
    assert list(_cells("configmaps", {"metadata": {"name": "c"}, "data": {"a": ""},
                                      "binaryData": {"b": ""}}).values()) == ["c", 2, "<unknown>"]  # fmt: skip
    assert list(_cells("secrets", {"metadata": {"name": "s"}, "type": "Opaque"}).values()) == [
        "s", "Opaque", 0, "<unknown>"]  # fmt: skip
    assert _cells("serviceaccounts", {"metadata": {"name": "a"}, "secrets": [{}]})["Secrets"] == 1
    assert _cells("leases", {"metadata": {"name": "l"}, "spec": {}})["Holder"] == ""
    assert (
        _cells("namespaces", {"metadata": {"name": "n"}, "status": {"phase": "Terminating"}})[
            "Status"
        ]
        == "Terminating"
    )
    crd = {"metadata": {"name": "x.example.com", "creationTimestamp": "2024-05-01T10:00:00Z"}}
    doc = _table("customresourcedefinitions", crd)
    assert [(c["name"], c["type"]) for c in doc["columnDefinitions"]] == [
        ("Name", "string"), ("Created At", "date")]  # fmt: skip
    assert doc["rows"][0]["cells"] == ["x.example.com", "2024-05-01T10:00:00Z"]


def test_every_served_kind_has_its_printer() -> None:
    for info in SERVED_BUILTINS:
        cols = tables.columns_for(info)
        assert cols[0].name in ("Name", "Last Seen"), info.plural
        if info.plural != "customresourcedefinitions":
            assert cols is not tables.DEFAULT_COLUMNS, info.plural
