"""The remaining built-in groups of kube-apiserver 1.20 (issue 21 part 2): ``events.k8s.io``
Events, ``flowcontrol.apiserver.k8s.io`` FlowSchemas and PriorityLevelConfigurations, and the
``kubectl get`` header of every served kind.

Differential: each test runs on both backends, the real kube-apiserver 1.20 being the
referee. An Event is one object seen through two groups (kube-apiserver stores both in the
core ``v1`` form): written through one group, it reads, lists and watches through the other
with its fields renamed as upstream's conversion does.
"""

from __future__ import annotations

import shutil
import subprocess
import uuid
from pathlib import Path
from typing import Any

import pytest

from kube_runtime.client import ApiError, Client
from kube_runtime.envtest import wait_for
from kube_runtime.webhook._review import AdmissionRequest, AdmissionResponse, allowed
from tests.e2e.test_admission_webhooks_e2e import (  # the webhook server and configurations
    Hooks,
    _hook,
    configuration,
    hooks,
    scoped,
)

__all__ = ["hooks", "scoped"]  # fixtures shared with the admission webhook tests

TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"
EVENTS_V1 = "/apis/events.k8s.io/v1"
EVENTS_V1BETA1 = "/apis/events.k8s.io/v1beta1"
FLOWCONTROL = "/apis/flowcontrol.apiserver.k8s.io/v1beta1"
EVENT_TIME = "2024-01-01T00:00:00.000000Z"


def _core_event(name: str, namespace: str) -> dict[str, Any]:
    """A legacy core/v1 Event (no ``eventTime``), as kubelets write them."""
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": name},
        "involvedObject": {"kind": "Pod", "name": "web-0", "namespace": namespace},
        "reason": "Started",
        "message": "Started container web",
        "type": "Normal",
        "source": {"component": "kubelet", "host": "node-1"},
        "count": 3,
        "firstTimestamp": "2024-01-01T00:00:00Z",
        "lastTimestamp": "2024-01-01T00:05:00Z",
    }


def _new_event(name: str, namespace: str, version: str = "v1") -> dict[str, Any]:
    """An ``events.k8s.io`` Event as a current recorder writes it."""
    return {
        "apiVersion": f"events.k8s.io/{version}",
        "kind": "Event",
        "metadata": {"name": name},
        "eventTime": EVENT_TIME,
        "reportingController": "example.com/cache-operator",
        "reportingInstance": "cache-operator-0",
        "action": "Reconcile",
        "reason": "Scaled",
        "regarding": {"kind": "Pod", "name": "web-0", "namespace": namespace},
        "note": "scaled to 3",
        "type": "Normal",
    }


def _same_object(a: dict[str, Any], b: dict[str, Any]) -> None:
    for key in ("uid", "resourceVersion", "creationTimestamp", "name", "namespace"):
        assert a["metadata"][key] == b["metadata"][key], key


# ------------------------------------------------------------------------------ events


@pytest.mark.parametrize("version", ["v1", "v1beta1"])
def test_a_core_event_reads_through_events_k8s_io(
    client: Client, namespace: str, version: str
) -> None:
    core = client.request(
        "POST", f"/api/v1/namespaces/{namespace}/events", body=_core_event("legacy", namespace)
    )
    seen = client.request(
        "GET", f"/apis/events.k8s.io/{version}/namespaces/{namespace}/events/legacy"
    )
    _same_object(core, seen)
    assert seen["apiVersion"] == f"events.k8s.io/{version}"
    assert core["eventTime"] is None  # Go writes the zero MicroTime as null
    # managed: what the request set (a zero value Go writes anyway is no change)
    assert core["metadata"]["managedFields"][0]["fieldsV1"] == {
        "f:count": {},
        "f:firstTimestamp": {},
        "f:involvedObject": {"f:kind": {}, "f:name": {}, "f:namespace": {}},
        "f:lastTimestamp": {},
        "f:message": {},
        "f:reason": {},
        "f:source": {"f:component": {}, "f:host": {}},
        "f:type": {},
    }
    assert seen["regarding"] == core["involvedObject"]
    assert seen["note"] == core["message"] == "Started container web"
    assert seen["deprecatedSource"] == core["source"] == {"component": "kubelet", "host": "node-1"}
    assert seen["deprecatedCount"] == core["count"] == 3
    assert seen["deprecatedFirstTimestamp"] == core["firstTimestamp"]
    assert seen["deprecatedLastTimestamp"] == core["lastTimestamp"]
    assert (seen["reason"], seen["type"]) == ("Started", "Normal")
    assert seen["eventTime"] is None  # written as null, not omitted
    for core_only in ("involvedObject", "message", "source", "count", "firstTimestamp"):
        assert core_only not in seen
    # empty strings are omitted in this form (reportingComponent: "" in the core one)
    assert core["reportingComponent"] == "" and "reportingController" not in seen
    assert "reportingInstance" not in seen and "action" not in seen


def test_an_events_k8s_io_event_reads_through_core(client: Client, namespace: str) -> None:
    created = client.request(
        "POST", f"{EVENTS_V1}/namespaces/{namespace}/events", body=_new_event("new", namespace)
    )
    assert created["apiVersion"] == "events.k8s.io/v1"
    assert created["deprecatedSource"] == {}
    assert created["deprecatedFirstTimestamp"] is None and "deprecatedCount" not in created
    (managed,) = created["metadata"]["managedFields"]
    assert managed["apiVersion"] == "events.k8s.io/v1"  # the request's version, its names
    assert managed["fieldsV1"] == {
        "f:action": {},
        "f:eventTime": {},
        "f:note": {},
        "f:reason": {},
        "f:regarding": {"f:kind": {}, "f:name": {}, "f:namespace": {}},
        "f:reportingController": {},
        "f:reportingInstance": {},
        "f:type": {},
    }
    core = client.request("GET", f"/api/v1/namespaces/{namespace}/events/new")
    _same_object(created, core)
    assert core["apiVersion"] == "v1"
    assert core["involvedObject"] == created["regarding"]
    assert core["message"] == "scaled to 3"
    assert core["reportingComponent"] == "example.com/cache-operator"
    assert core["reportingInstance"] == "cache-operator-0"
    assert (core["action"], core["reason"], core["type"]) == ("Reconcile", "Scaled", "Normal")
    assert core["eventTime"] == EVENT_TIME
    assert core["source"] == {}
    assert core["firstTimestamp"] is None and core["lastTimestamp"] is None
    assert "count" not in core and "regarding" not in core and "note" not in core
    beta = client.request("GET", f"{EVENTS_V1BETA1}/namespaces/{namespace}/events/new")
    assert beta["apiVersion"] == "events.k8s.io/v1beta1"
    assert {k: v for k, v in beta.items() if k != "apiVersion"} == {
        k: v for k, v in created.items() if k != "apiVersion"
    }

    # one object: a change through core shows through events.k8s.io
    client.request(
        "PATCH",
        f"/api/v1/namespaces/{namespace}/events/new",
        body={"message": "scaled to 4"},
        content_type="application/merge-patch+json",
    )
    assert client.request("GET", f"{EVENTS_V1}/namespaces/{namespace}/events/new")["note"] == (
        "scaled to 4"
    )
    # and a delete through one group removes it from both
    client.request("DELETE", f"{EVENTS_V1}/namespaces/{namespace}/events/new")
    with pytest.raises(ApiError) as gone:
        client.request("GET", f"{EVENTS_V1}/namespaces/{namespace}/events/new")
    assert gone.value.code == 404
    assert gone.value.message == 'events.events.k8s.io "new" not found'


def test_both_groups_list_and_watch_the_same_events(client: Client, namespace: str) -> None:
    rv = client.request("GET", f"/api/v1/namespaces/{namespace}/events")["metadata"][
        "resourceVersion"
    ]
    client.request(
        "POST", f"/api/v1/namespaces/{namespace}/events", body=_core_event("a", namespace)
    )
    client.request(
        "POST", f"{EVENTS_V1}/namespaces/{namespace}/events", body=_new_event("b", namespace)
    )
    listed = client.request("GET", f"{EVENTS_V1}/namespaces/{namespace}/events")
    assert (listed["kind"], listed["apiVersion"]) == ("EventList", "events.k8s.io/v1")
    assert sorted(i["metadata"]["name"] for i in listed["items"]) == ["a", "b"]
    assert all("apiVersion" not in i and "kind" not in i for i in listed["items"])  # as Go's
    assert [i.get("regarding", {}).get("name") for i in listed["items"]] == ["web-0", "web-0"]

    for kind, field in (
        ("v1/Event", "involvedObject"),
        ("events.k8s.io/v1/Event", "regarding"),
        ("events.k8s.io/v1beta1/Event", "regarding"),
    ):
        seen = []
        with client.watch(kind, namespace, resource_version=rv, allow_bookmarks=False) as w:
            for event in w:
                seen.append(event)
                if len(seen) == 2:
                    break
        assert [(e.type, e.object["metadata"]["name"]) for e in seen] == [
            ("ADDED", "a"),
            ("ADDED", "b"),
        ], kind
        assert all(e.object[field]["name"] == "web-0" for e in seen), kind
        assert all(e.object["apiVersion"] == kind.rpartition("/")[0] for e in seen), kind


def test_an_events_k8s_io_table_prints_core_columns_and_carries_its_own_object(
    client: Client, namespace: str
) -> None:
    """Both groups print through core's printer; a row's object (includeObject=Object) is
    in the requested group's form."""
    client.request(
        "POST", f"{EVENTS_V1}/namespaces/{namespace}/events", body=_new_event("row", namespace)
    )
    for root, field in ((EVENTS_V1, "regarding"), ("/api/v1", "involvedObject")):
        table = client.request(
            "GET",
            f"{root}/namespaces/{namespace}/events",
            query={"includeObject": "Object"},
            accept=TABLE,
        )
        (row,) = table["rows"]
        assert row["cells"][1:4] == ["Normal", "Scaled", "pod/web-0"], root
        assert row["cells"][6] == "scaled to 3", root
        assert row["object"][field]["name"] == "web-0", root
        assert row["object"]["apiVersion"] == ("v1" if root == "/api/v1" else "events.k8s.io/v1")


def test_kubectl_get_events_cells(client: Client, namespace: str) -> None:
    """printEvent's cells for a legacy event and a new-style one: object, subobject, source
    (the reporting controller and instance when there is no source), trimmed message,
    count. (A series' count is not compared: 1.20 prints count + 1, current releases and
    the embedded server the count.)"""
    legacy = _core_event("legacy", namespace)
    legacy["involvedObject"]["fieldPath"] = "spec.containers{web}"
    legacy["message"] = "  padded  "
    client.request("POST", f"/api/v1/namespaces/{namespace}/events", body=legacy)
    client.request(
        "POST", f"{EVENTS_V1}/namespaces/{namespace}/events", body=_new_event("new", namespace)
    )
    table = client.request("GET", f"/api/v1/namespaces/{namespace}/events", accept=TABLE)
    cells = {r["cells"][9]: r["cells"][1:9] for r in table["rows"]}
    age = cells["legacy"][6]
    assert cells["legacy"] == [
        "Normal",
        "Started",
        "pod/web-0",
        "spec.containers{web}",
        "kubelet, node-1",
        "padded",
        age,
        3,
    ]
    assert cells["new"][:5] == [
        "Normal",
        "Scaled",
        "pod/web-0",
        "",
        "example.com/cache-operator, cache-operator-0",
    ]
    assert cells["new"][5] == "scaled to 3" and cells["new"][7] == 1


def test_event_field_selectors_per_group(client: Client, namespace: str) -> None:
    """events.k8s.io selects by its own field names (1.20's label conversion maps them to
    the core fields); each group refuses the other's names."""
    client.request(
        "POST", f"{EVENTS_V1}/namespaces/{namespace}/events", body=_new_event("sel", namespace)
    )
    other = _core_event("other", namespace)
    other["involvedObject"]["name"] = "db-0"
    client.request("POST", f"/api/v1/namespaces/{namespace}/events", body=other)

    def names(root: str, selector: str) -> list[str]:
        found = client.request(
            "GET", f"{root}/namespaces/{namespace}/events", query={"fieldSelector": selector}
        )
        return sorted(i["metadata"]["name"] for i in found["items"])

    assert names(EVENTS_V1, "regarding.name=web-0") == ["sel"]
    assert names(EVENTS_V1, "reportingController=example.com/cache-operator") == ["sel"]
    assert names(EVENTS_V1BETA1, "regarding.name=db-0,type=Normal") == ["other"]
    assert names("/api/v1", "involvedObject.name=db-0") == ["other"]
    assert names("/api/v1", "reportingComponent=example.com/cache-operator") == ["sel"]
    for root, label in ((EVENTS_V1, "involvedObject.name"), ("/api/v1", "regarding.name")):
        with pytest.raises(ApiError) as refused:
            names(root, f"{label}=web-0")
        assert refused.value.code == 400
        assert refused.value.message == f"field label not supported: {label}"


def test_the_cache_selects_events_k8s_io_events_by_their_field_labels(
    client: Client, namespace: str
) -> None:
    """The informer cache answers an events.k8s.io field selector as the API does."""
    from kube_runtime.cache import InformerCache

    client.request(
        "POST", f"{EVENTS_V1}/namespaces/{namespace}/events", body=_new_event("cached", namespace)
    )
    other = _core_event("elsewhere", namespace)
    other["involvedObject"]["name"] = "db-0"
    client.request("POST", f"/api/v1/namespaces/{namespace}/events", body=other)
    cache = InformerCache(client, namespace=namespace)
    try:
        kind = "events.k8s.io/v1/Event"
        found = cache.list(kind, namespace, field_selector="regarding.name=web-0")
        assert [e["metadata"]["name"] for e in found] == ["cached"]
        found = cache.list(kind, namespace, field_selector="reportingController=kubelet")
        assert found == []
        with pytest.raises(ApiError) as refused:
            cache.list(kind, namespace, field_selector="involvedObject.name=web-0")
        assert refused.value.code == 400
        assert refused.value.message == "field label not supported: involvedObject.name"
    finally:
        cache.stop()


def test_events_k8s_io_v1_validates_a_create_strictly(client: Client, namespace: str) -> None:
    """1.20's ValidateEventCreate: through events.k8s.io/v1 the strict rules (eventTime,
    type, no deprecated fields) on top of the legacy ones; v1beta1 and core: legacy only.
    Paths are the internal (core) field names."""
    bad = _new_event("strict", namespace)
    del bad["eventTime"]
    bad["type"] = "Odd"
    bad["deprecatedCount"] = 2
    with pytest.raises(ApiError) as refused:
        client.request("POST", f"{EVENTS_V1}/namespaces/{namespace}/events", body=bad)
    assert refused.value.code == 422
    assert refused.value.message == (  # named after the core kind, whose registry serves it
        'Event "strict" is invalid: [eventTime: Required value, '
        'type: Invalid value: "": has invalid value: Odd, '
        'count: Invalid value: "": needs to be unset]'
    )
    beta = {**bad, "apiVersion": "events.k8s.io/v1beta1"}
    created = client.request("POST", f"{EVENTS_V1BETA1}/namespaces/{namespace}/events", body=beta)
    assert created["type"] == "Odd" and created["deprecatedCount"] == 2

    # 1.20 compares an updated event with itself: an update changes even the note
    updated = client.request(
        "PATCH",
        f"{EVENTS_V1}/namespaces/{namespace}/events/strict",
        body={"note": "changed"},
        content_type="application/merge-patch+json",
    )
    assert updated["note"] == "changed"


def test_a_new_style_core_event_needs_its_reporting_fields(client: Client, namespace: str) -> None:
    """legacyValidateEvent, for every group: an event with eventTime names its reporter."""
    body = {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": "reporter"},
        "eventTime": EVENT_TIME,
        "involvedObject": {"kind": "Pod", "name": "web-0", "namespace": namespace},
    }
    with pytest.raises(ApiError) as refused:
        client.request("POST", f"/api/v1/namespaces/{namespace}/events", body=body)
    assert refused.value.code == 422
    causes = refused.value.message.split(" is invalid: ", 1)[1]
    assert causes.startswith("[reportingController: Required value, ")
    assert 'reportingController: Invalid value: "": name part must be non-empty' in causes
    assert causes.endswith(
        "reportingInstance: Required value, action: Required value, reason: Required value]"
    )


def test_an_admission_webhook_sees_an_events_k8s_io_event_in_its_fields(
    client: Client, hooks: Hooks, scoped: str
) -> None:
    """A webhook on events.k8s.io gets the object with that group's fields and its JSON
    patch is written in them; the core group reads the patched object back renamed."""

    def annotate(request: AdmissionRequest) -> AdmissionResponse:
        response = allowed()
        response.patch = [{"op": "replace", "path": "/note", "value": "patched note"}]
        return response

    calls = hooks.on("/events", annotate)
    rules = [
        {
            "apiGroups": ["events.k8s.io"],
            "apiVersions": ["v1"],
            "operations": ["CREATE"],
            "resources": ["events"],
        }
    ]
    webhook = _hook(hooks, "events.webhooks.test", "/events", scoped, mutating=True, rules=rules)
    with configuration(client, hooks, scoped, [webhook], mutating=True):
        created = client.request(
            "POST", f"{EVENTS_V1}/namespaces/{scoped}/events", body=_new_event("hooked", scoped)
        )
    (call,) = [c for c in calls if c.object and c.object["metadata"].get("name") == "hooked"]
    assert call.object is not None
    assert call.object["apiVersion"] == "events.k8s.io/v1"
    assert call.object["regarding"]["name"] == "web-0" and "involvedObject" not in call.object
    assert call.object["reportingController"] == "example.com/cache-operator"
    assert created["note"] == "patched note"
    core = client.request("GET", f"/api/v1/namespaces/{scoped}/events/hooked")
    assert core["message"] == "patched note"


# ------------------------------------------------------------------------------ flowcontrol

#: What kube-apiserver 1.20 creates at start (bootstrap/default.go), in matching order.
FLOW_SCHEMAS_120 = [
    ("exempt", "exempt", 1, None),
    ("system-leader-election", "leader-election", 100, "ByUser"),
    ("workload-leader-election", "leader-election", 200, "ByUser"),
    ("system-nodes", "system", 500, "ByUser"),
    ("kube-controller-manager", "workload-high", 800, "ByNamespace"),
    ("kube-scheduler", "workload-high", 800, "ByNamespace"),
    ("kube-system-service-accounts", "workload-high", 900, "ByNamespace"),
    ("service-accounts", "workload-low", 9000, "ByUser"),
    ("global-default", "global-default", 9900, "ByUser"),
    ("catch-all", "catch-all", 10000, "ByUser"),
]
PRIORITY_LEVELS_120 = {
    "catch-all": ("Limited", 5, None),
    "exempt": ("Exempt", None, None),
    "global-default": ("Limited", 20, (128, 6, 50)),
    "leader-election": ("Limited", 10, (16, 4, 50)),
    "system": ("Limited", 30, (64, 6, 50)),
    "workload-high": ("Limited", 40, (128, 6, 50)),
    "workload-low": ("Limited", 100, (128, 6, 50)),
}


def test_the_default_flow_control_configuration(client: Client) -> None:
    levels = client.request("GET", f"{FLOWCONTROL}/prioritylevelconfigurations")["items"]
    found = {}
    for level in levels:
        spec = level["spec"]
        limited = spec.get("limited") or {}
        queuing = (limited.get("limitResponse") or {}).get("queuing")
        found[level["metadata"]["name"]] = (
            spec["type"],
            limited.get("assuredConcurrencyShares"),
            None
            if queuing is None
            else (queuing["queues"], queuing["handSize"], queuing["queueLengthLimit"]),
        )
    assert {k: v for k, v in found.items() if k in PRIORITY_LEVELS_120} == PRIORITY_LEVELS_120
    table = client.request("GET", f"{FLOWCONTROL}/prioritylevelconfigurations", accept=TABLE)
    printed = {r["cells"][0]: r["cells"][1:6] for r in table["rows"]}
    for name, (kind, shares, queuing) in PRIORITY_LEVELS_120.items():
        numbers = list(queuing) if queuing is not None else ["<none>"] * 3
        assert printed[name] == [kind, "<none>" if shares is None else shares, *numbers], name

    def dangling_false() -> bool:
        schemas = client.request("GET", f"{FLOWCONTROL}/flowschemas")["items"]
        conditions = {
            s["metadata"]["name"]: {
                c["type"]: c["status"] for c in (s.get("status") or {}).get("conditions") or []
            }
            for s in schemas
        }
        return all(conditions.get(n, {}).get("Dangling") == "False" for n, *_ in FLOW_SCHEMAS_120)

    # kube-apiserver's configuration controller writes the condition shortly after start
    wait_for(dangling_false, message="the default flow schemas' Dangling conditions")
    table = client.request("GET", f"{FLOWCONTROL}/flowschemas", accept=TABLE)
    rows = [r["cells"] for r in table["rows"] if r["cells"][0] in {n for n, *_ in FLOW_SCHEMAS_120}]
    assert [(c[0], c[1], c[2], c[3], c[5]) for c in rows] == [
        (name, level, precedence, method or "<none>", "False")
        for name, level, precedence, method in FLOW_SCHEMAS_120
    ]


def test_flow_schema_and_priority_level_defaults_and_validation(client: Client) -> None:
    suffix = uuid.uuid4().hex[:8]
    level = client.request(
        "POST",
        f"{FLOWCONTROL}/prioritylevelconfigurations",
        body={
            "apiVersion": "flowcontrol.apiserver.k8s.io/v1beta1",
            "kind": "PriorityLevelConfiguration",
            "metadata": {"name": f"level-{suffix}"},
            "spec": {
                "type": "Limited",
                "limited": {"limitResponse": {"type": "Queue", "queuing": {}}},
            },
        },
    )
    assert level["spec"]["limited"] == {
        "assuredConcurrencyShares": 30,
        "limitResponse": {
            "type": "Queue",
            "queuing": {"queues": 64, "handSize": 8, "queueLengthLimit": 50},
        },
    }
    assert level["metadata"]["generation"] == 1
    schema = client.request(
        "POST",
        f"{FLOWCONTROL}/flowschemas",
        body={
            "apiVersion": "flowcontrol.apiserver.k8s.io/v1beta1",
            "kind": "FlowSchema",
            "metadata": {"name": f"schema-{suffix}"},
            "spec": {
                "priorityLevelConfiguration": {"name": f"level-{suffix}"},
                "rules": [
                    {
                        "subjects": [{"kind": "User", "user": {"name": "alice"}}],
                        "resourceRules": [
                            {
                                "verbs": ["get"],
                                "apiGroups": [""],
                                "resources": ["pods"],
                                "namespaces": ["default"],
                            }
                        ],
                    }
                ],
            },
        },
    )
    assert schema["spec"]["matchingPrecedence"] == 1000
    path = f"{FLOWCONTROL}/flowschemas/schema-{suffix}"
    status = {
        "status": {
            "conditions": [
                {
                    "type": "Dangling",
                    "status": "True",
                    "reason": "NotFound",
                    "message": "tested",
                    "lastTransitionTime": "2024-01-01T00:00:00Z",
                }
            ]
        },
    }
    # a merge patch: kube-apiserver's configuration controller writes the status meanwhile
    written = client.request(
        "PATCH",
        f"{path}/status",
        body={"status": status["status"], "spec": {"matchingPrecedence": 5}},
        content_type="application/merge-patch+json",
    )
    assert written["status"]["conditions"][0]["reason"] == "NotFound"
    assert written["spec"]["matchingPrecedence"] == 1000  # the status subresource leaves spec

    with pytest.raises(ApiError) as refused:
        client.request(
            "POST",
            f"{FLOWCONTROL}/flowschemas",
            body={
                "apiVersion": "flowcontrol.apiserver.k8s.io/v1beta1",
                "kind": "FlowSchema",
                "metadata": {"name": f"bad-{suffix}"},
                "spec": {
                    "matchingPrecedence": 1,
                    "distinguisherMethod": {"type": "ByGroup"},
                    "priorityLevelConfiguration": {"name": ""},
                    "rules": [{"subjects": [{"kind": "Robot"}], "nonResourceRules": []}],
                },
            },
        )
    assert refused.value.code == 422
    assert refused.value.message == (
        f'FlowSchema.flowcontrol.apiserver.k8s.io "bad-{suffix}" is invalid: ['
        "spec.matchingPrecedence: Invalid value: 1: only the schema named 'exempt' may have "
        "matchingPrecedence 1, "
        "spec.distinguisherMethod.type: Unsupported value: flowcontrol.FlowDistinguisherMethod"
        '{Type:"ByGroup"}: supported values: "ByNamespace", "ByUser", '
        "spec.priorityLevelConfiguration.name: Required value: must reference a priority level, "
        'spec.rules[0].subjects[0].kind: Unsupported value: "Robot": supported values: '
        '"Group", "ServiceAccount", "User", '
        "spec.rules[0]: Required value: at least one of resourceRules and nonResourceRules has "
        "to be non-empty]"
    )
    with pytest.raises(ApiError) as refused:
        client.request(
            "POST",
            f"{FLOWCONTROL}/prioritylevelconfigurations",
            body={
                "apiVersion": "flowcontrol.apiserver.k8s.io/v1beta1",
                "kind": "PriorityLevelConfiguration",
                "metadata": {"name": f"bad-{suffix}"},
                "spec": {
                    "type": "Limited",
                    "limited": {
                        "assuredConcurrencyShares": 5,
                        "limitResponse": {
                            "type": "Queue",
                            "queuing": {"queues": 4, "handSize": 8, "queueLengthLimit": 5},
                        },
                    },
                },
            },
        )
    assert refused.value.message.split(" is invalid: ", 1)[1] == (
        "spec.limited.limitResponse.queuing.handSize: Invalid value: 8: "
        "should not be greater than queues (4)"
    )
    for name in (f"schema-{suffix}", f"level-{suffix}"):
        plural = "flowschemas" if name.startswith("schema") else "prioritylevelconfigurations"
        client.request("DELETE", f"{FLOWCONTROL}/{plural}/{name}")


def test_the_mandatory_objects_keep_their_spec(client: Client) -> None:
    """ValidateFlowSchema / ValidatePriorityLevelConfiguration: the specs of the mandatory
    exempt and catch-all objects are fixed (the refused value, a Go struct dump upstream, is
    not compared)."""
    for plural, name, change in (
        ("flowschemas", "exempt", {"spec": {"matchingPrecedence": 2}}),
        ("flowschemas", "catch-all", {"spec": {"distinguisherMethod": {"type": "ByNamespace"}}}),
        (
            "prioritylevelconfigurations",
            "catch-all",
            {"spec": {"limited": {"assuredConcurrencyShares": 50}}},
        ),
    ):
        with pytest.raises(ApiError) as refused:
            client.request(
                "PATCH",
                f"{FLOWCONTROL}/{plural}/{name}",
                body=change,
                content_type="application/merge-patch+json",
            )
        kind = "FlowSchema" if plural == "flowschemas" else "PriorityLevelConfiguration"
        message = refused.value.message
        assert refused.value.code == 422, message
        assert message.startswith(
            f'{kind}.flowcontrol.apiserver.k8s.io "{name}" is invalid: spec: Invalid value: '
        ), message
        assert message.endswith(f": spec of '{name}' must equal the fixed value"), message
    # the same spec again is no change of it
    exempt = client.request("GET", f"{FLOWCONTROL}/flowschemas/exempt")
    client.request(
        "PATCH",
        f"{FLOWCONTROL}/flowschemas/exempt",
        body={"metadata": {"labels": {"seen": "yes"}}},
        content_type="application/merge-patch+json",
    )
    client.request(
        "PATCH",
        f"{FLOWCONTROL}/flowschemas/exempt",
        body={"metadata": {"labels": None}},
        content_type="application/merge-patch+json",
    )
    assert client.request("GET", f"{FLOWCONTROL}/flowschemas/exempt")["spec"] == exempt["spec"]


def test_a_flow_schema_gets_its_dangling_condition(client: Client) -> None:
    """The configuration controller marks a schema whose priority level is missing
    (MissingPL True) and clears the mark once the level exists."""
    suffix = uuid.uuid4().hex[:8]
    schema = {
        "apiVersion": "flowcontrol.apiserver.k8s.io/v1beta1",
        "kind": "FlowSchema",
        "metadata": {"name": f"orphan-{suffix}"},
        "spec": {
            "priorityLevelConfiguration": {"name": f"later-{suffix}"},
            "matchingPrecedence": 2000,
            "rules": [
                {
                    "subjects": [{"kind": "Group", "group": {"name": "system:authenticated"}}],
                    "nonResourceRules": [{"verbs": ["get"], "nonResourceURLs": ["/healthz"]}],
                }
            ],
        },
    }
    path = f"{FLOWCONTROL}/flowschemas/orphan-{suffix}"
    client.request("POST", f"{FLOWCONTROL}/flowschemas", body=schema)

    def dangling() -> dict[str, Any] | None:
        found = client.request("GET", path)
        conditions = (found.get("status") or {}).get("conditions") or []
        return next((c for c in conditions if c["type"] == "Dangling"), None)

    wait_for(lambda: (dangling() or {}).get("status") == "True", message="Dangling True")
    condition = dangling()
    assert condition is not None
    assert (condition["reason"], condition["message"]) == (
        "NotFound",
        f'This FlowSchema references the PriorityLevelConfiguration object named "later-{suffix}"'
        " but there is no such object",
    )
    cells = client.request("GET", path, accept=TABLE)["rows"][0]["cells"]
    assert (cells[1], cells[2], cells[3], cells[5]) == (f"later-{suffix}", 2000, "<none>", "True")

    client.request(
        "POST",
        f"{FLOWCONTROL}/prioritylevelconfigurations",
        body={
            "apiVersion": "flowcontrol.apiserver.k8s.io/v1beta1",
            "kind": "PriorityLevelConfiguration",
            "metadata": {"name": f"later-{suffix}"},
            "spec": {"type": "Limited", "limited": {"limitResponse": {"type": "Reject"}}},
        },
    )
    wait_for(lambda: (dangling() or {}).get("status") == "False", message="Dangling False")
    assert (dangling() or {}).get("reason") == "Found"
    client.request("DELETE", path)
    client.request("DELETE", f"{FLOWCONTROL}/prioritylevelconfigurations/later-{suffix}")


# ------------------------------------------------------------------------------ table headers

#: ``kubectl get``'s columns of each served kind in kube-apiserver 1.20 (its printers.go;
#: kinds without a printer get the default Name and Created At), in a version 1.20 serves.
HEADERS_120: list[tuple[str, str, list[str]]] = [
    ("v1", "namespaces", ["Name", "Status", "Age"]),
    ("v1", "nodes", ["Name", "Status", "Roles", "Age", "Version", "Internal-IP", "External-IP",
                     "OS-Image", "Kernel-Version", "Container-Runtime"]),
    ("v1", "pods", ["Name", "Ready", "Status", "Restarts", "Age", "IP", "Node",
                    "Nominated Node", "Readiness Gates"]),
    ("v1", "persistentvolumeclaims", ["Name", "Status", "Volume", "Capacity", "Access Modes",
                                      "StorageClass", "Age", "VolumeMode"]),
    ("v1", "persistentvolumes", ["Name", "Capacity", "Access Modes", "Reclaim Policy", "Status",
                                 "Claim", "StorageClass", "Reason", "Age", "VolumeMode"]),
    ("v1", "events", ["Last Seen", "Type", "Reason", "Object", "Subobject", "Source", "Message",
                      "First Seen", "Count", "Name"]),
    ("v1", "services", ["Name", "Type", "Cluster-IP", "External-IP", "Port(s)", "Age",
                        "Selector"]),
    ("v1", "configmaps", ["Name", "Data", "Age"]),
    ("v1", "secrets", ["Name", "Type", "Data", "Age"]),
    ("v1", "serviceaccounts", ["Name", "Secrets", "Age"]),
    ("v1", "endpoints", ["Name", "Endpoints", "Age"]),
    ("v1", "replicationcontrollers", ["Name", "Desired", "Current", "Ready", "Age", "Containers",
                                      "Images", "Selector"]),
    ("v1", "podtemplates", ["Name", "Containers", "Images", "Pod Labels"]),
    ("v1", "resourcequotas", ["Name", "Age", "Request", "Limit"]),
    ("v1", "limitranges", ["Name", "Created At"]),
    ("apps/v1", "statefulsets", ["Name", "Ready", "Age", "Containers", "Images"]),
    ("apps/v1", "deployments", ["Name", "Ready", "Up-to-date", "Available", "Age", "Containers",
                                "Images", "Selector"]),
    ("apps/v1", "replicasets", ["Name", "Desired", "Current", "Ready", "Age", "Containers",
                                "Images", "Selector"]),
    ("apps/v1", "daemonsets", ["Name", "Desired", "Current", "Ready", "Up-to-date", "Available",
                               "Node Selector", "Age", "Containers", "Images", "Selector"]),
    ("apps/v1", "controllerrevisions", ["Name", "Controller", "Revision", "Age"]),
    ("batch/v1", "jobs", ["Name", "Completions", "Duration", "Age", "Containers", "Images",
                          "Selector"]),
    ("batch/v1beta1", "cronjobs", ["Name", "Schedule", "Suspend", "Active", "Last Schedule",
                                   "Age", "Containers", "Images", "Selector"]),
    ("coordination.k8s.io/v1", "leases", ["Name", "Holder", "Age"]),
    ("events.k8s.io/v1", "events", ["Last Seen", "Type", "Reason", "Object", "Subobject",
                                    "Source", "Message", "First Seen", "Count", "Name"]),
    ("events.k8s.io/v1beta1", "events", ["Last Seen", "Type", "Reason", "Object", "Subobject",
                                         "Source", "Message", "First Seen", "Count", "Name"]),
    ("policy/v1beta1", "poddisruptionbudgets", ["Name", "Min Available", "Max Unavailable",
                                                "Allowed Disruptions", "Age"]),
    ("autoscaling/v1", "horizontalpodautoscalers", ["Name", "Reference", "Targets", "MinPods",
                                                    "MaxPods", "Replicas", "Age"]),
    ("networking.k8s.io/v1", "ingresses", ["Name", "Class", "Hosts", "Address", "Ports", "Age"]),
    ("networking.k8s.io/v1", "ingressclasses", ["Name", "Controller", "Parameters", "Age"]),
    ("networking.k8s.io/v1", "networkpolicies", ["Name", "Pod-Selector", "Age"]),
    ("discovery.k8s.io/v1beta1", "endpointslices", ["Name", "AddressType", "Ports", "Endpoints",
                                                    "Age"]),
    ("rbac.authorization.k8s.io/v1", "roles", ["Name", "Created At"]),
    ("rbac.authorization.k8s.io/v1", "clusterroles", ["Name", "Created At"]),
    ("rbac.authorization.k8s.io/v1", "rolebindings", ["Name", "Role", "Age", "Users", "Groups",
                                                      "ServiceAccounts"]),
    ("rbac.authorization.k8s.io/v1", "clusterrolebindings", ["Name", "Role", "Age", "Users",
                                                             "Groups", "ServiceAccounts"]),
    ("certificates.k8s.io/v1", "certificatesigningrequests", ["Name", "Age", "SignerName",
                                                              "Requestor", "Condition"]),
    ("scheduling.k8s.io/v1", "priorityclasses", ["Name", "Value", "Global-Default", "Age"]),
    ("node.k8s.io/v1", "runtimeclasses", ["Name", "Handler", "Age"]),
    ("storage.k8s.io/v1", "storageclasses", ["Name", "Provisioner", "ReclaimPolicy",
                                             "VolumeBindingMode", "AllowVolumeExpansion", "Age"]),
    ("storage.k8s.io/v1", "csidrivers", ["Name", "AttachRequired", "PodInfoOnMount", "Modes",
                                         "Age"]),
    ("storage.k8s.io/v1", "csinodes", ["Name", "Drivers", "Age"]),
    ("storage.k8s.io/v1", "volumeattachments", ["Name", "Attacher", "PV", "Node", "Attached",
                                                "Age"]),
    ("apiextensions.k8s.io/v1", "customresourcedefinitions", ["Name", "Created At"]),
    ("admissionregistration.k8s.io/v1", "mutatingwebhookconfigurations", ["Name", "Webhooks",
                                                                          "Age"]),
    ("admissionregistration.k8s.io/v1", "validatingwebhookconfigurations", ["Name", "Webhooks",
                                                                            "Age"]),
    ("flowcontrol.apiserver.k8s.io/v1beta1", "flowschemas", ["Name", "PriorityLevel",
                                                             "MatchingPrecedence",
                                                             "DistinguisherMethod", "Age",
                                                             "MissingPL"]),
    ("flowcontrol.apiserver.k8s.io/v1beta1", "prioritylevelconfigurations", [
        "Name", "Type", "AssuredConcurrencyShares", "Queues", "HandSize", "QueueLengthLimit",
        "Age"]),
]  # fmt: skip

#: Columns the embedded server prints on purpose from a newer release (current kubectl's):
#: left out before comparing (tests/e2e/test_differential_e2e.py NEWER_TABLE_COLUMNS).
NEWER_COLUMNS = {"persistentvolumeclaims": {"VolumeAttributesClass"}}


@pytest.mark.parametrize(
    ("group_version", "plural", "expected"),
    HEADERS_120,
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_every_served_kind_prints_the_header_of_1_20(
    client: Client, namespace: str, group_version: str, plural: str, expected: list[str]
) -> None:
    root = "/api/v1" if group_version == "v1" else f"/apis/{group_version}"
    (entry,) = [r for r in client.request("GET", root)["resources"] if r["name"] == plural]
    path = f"{root}/namespaces/{namespace}/{plural}" if entry["namespaced"] else f"{root}/{plural}"
    table = client.request("GET", path, query={"limit": 1}, accept=TABLE)
    newer = NEWER_COLUMNS.get(plural, set())
    names = [c["name"] for c in table["columnDefinitions"] if c["name"] not in newer]
    assert names == expected


@pytest.mark.kubectl
def test_kubectl_get_prints_events_and_flow_control(
    client: Client, kubeconfig: Path, namespace: str
) -> None:
    """``kubectl get -o wide`` of both Event groups and the flow control kinds: the header."""
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        pytest.skip("kubectl not installed: run `make kubectl` (scripts/ensure-kubectl.sh)")
    client.request(
        "POST", f"{EVENTS_V1}/namespaces/{namespace}/events", body=_new_event("shown", namespace)
    )
    event_header = "LAST SEEN TYPE REASON OBJECT SUBOBJECT SOURCE MESSAGE FIRST SEEN COUNT NAME"
    expected = {
        "events": event_header,
        "events.v1.events.k8s.io": event_header,
        "flowschemas.v1beta1.flowcontrol.apiserver.k8s.io": (
            "NAME PRIORITYLEVEL MATCHINGPRECEDENCE DISTINGUISHERMETHOD AGE MISSINGPL"
        ),
        "prioritylevelconfigurations.v1beta1.flowcontrol.apiserver.k8s.io": (
            "NAME TYPE ASSUREDCONCURRENCYSHARES QUEUES HANDSIZE QUEUELENGTHLIMIT AGE"
        ),
    }
    for resource, header in expected.items():
        args = ["--kubeconfig", str(kubeconfig), "-n", namespace, "get", resource, "-o", "wide"]
        proc = subprocess.run(
            [kubectl, *args], capture_output=True, text=True, timeout=60, check=True
        )
        assert " ".join(proc.stdout.splitlines()[0].split()) == header, (resource, proc.stdout)


@pytest.mark.kubectl
def test_kubectl_explain_the_new_kinds(kubeconfig: Path) -> None:
    """The OpenAPI definitions are served: ``kubectl explain`` describes their fields."""
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        pytest.skip("kubectl not installed: run `make kubectl` (scripts/ensure-kubectl.sh)")
    for args, field in (
        (["flowschemas.spec.distinguisherMethod"], "distinguisherMethod"),
        (["prioritylevelconfigurations.spec.limited"], "limited"),
        (["events.regarding", "--api-version=events.k8s.io/v1"], "regarding"),
    ):
        proc = subprocess.run(
            [kubectl, "--kubeconfig", str(kubeconfig), "explain", *args],
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        )
        words = " ".join(proc.stdout.split())
        # "FIELD: name <Type>" from OpenAPI v3, "RESOURCE: name <Object>" from v2 (1.20)
        assert f": {field} <" in words and "DESCRIPTION:" in words, proc.stdout
