"""kube-apiserver's facts have one home (:mod:`kube_runtime.client._apifacts`), and the fake client
and the API server agree on them.

The same failing calls (not found, already exists, a stale resourceVersion, a uid or
resourceVersion precondition, an invalid name) give the same Status (code, reason, message,
details) from :class:`~kube_runtime.client.fake.FakeClient` and from the session cluster (the
embedded one over HTTP; ``KUBE_RUNTIME_BACKEND=real`` runs the same test against kube-apiserver
1.20, the referee); the same creates give the same server-set fields (a Pod's ``phase`` and
``qosClass``, ``metadata.generation``), the same deletes the same kind of answer. The Go value
renderer both validators print rejected values with is pinned on its own.
"""

from __future__ import annotations

import functools
import re
import warnings
from collections.abc import Callable
from typing import Any

import pytest

from kube_runtime import kinds
from kube_runtime.client import ApiError, Client, ClientInterface
from kube_runtime.client import _apifacts as facts
from kube_runtime.client import fake as fake_module
from kube_runtime.client.fake import FakeClient
from kube_runtime.envtest.server import crdschema, errors, validation

_UID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def _status(call: Callable[[], Any]) -> dict[str, Any]:
    """What the Status of the error ``call`` raises says (uids and resourceVersions masked)."""
    try:
        call()
    except ApiError as err:
        message = _UID.sub("<uid>", err.message)
        message = re.sub(
            r"ResourceVersion in record \(\d+\)", "ResourceVersion in record (<rv>)", message
        )
        details = {k: v for k, v in err.details.items() if k != "uid"}
        if "causes" in details:  # kube-apiserver 1.20 repeats metadata causes on update
            details["causes"] = list({repr(c): c for c in details["causes"]}.values())
        return {"code": err.code, "reason": err.reason, "message": message, "details": details}
    raise AssertionError("the call did not fail")


def _cm(name: str, ns: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": ns}}


def _pod(name: str, ns: str, spec: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": ns},
        "spec": spec,
    }


def _containers(*resources: dict[str, Any], init: dict[str, Any] | None = None) -> dict[str, Any]:
    """A pod spec with one container per ``resources`` (and an init container)."""
    spec: dict[str, Any] = {
        "containers": [
            {"name": f"c{i}", "image": "nginx:1.25", "resources": r}
            for i, r in enumerate(resources)
        ]
    }
    if init is not None:
        spec["initContainers"] = [{"name": "init", "image": "nginx:1.25", "resources": init}]
    return spec


_BOTH = {"cpu": "1", "memory": "1Gi"}
#: Pods whose QoS class kube-apiserver decides, by name: what counts is cpu and memory, of
#: containers and init containers, by value, a request defaulting to the limit.
_QOS_PODS = {
    "best effort": _containers({}),
    "burstable": _containers({"requests": {"cpu": "100m"}}),
    "guaranteed": _containers({"limits": _BOTH}),
    "other resources only": _containers({"requests": {"ephemeral-storage": "1Gi"}}),
    "zero request": _containers({"requests": {"cpu": "0"}}),
    "explicit zero request under a limit": _containers(
        {"requests": {"cpu": "0", "memory": "1Gi"}, "limits": _BOTH}
    ),
    "equal by value": _containers({"requests": {"cpu": "1000m", "memory": "1Gi"}, "limits": _BOTH}),
    "init container asks": _containers({}, init={"requests": {"cpu": "100m"}}),
    "init container unlimited": _containers({"limits": _BOTH}, init={}),
    "one of two limited": _containers({"limits": _BOTH}, {}),
}


_TEMPLATE = {
    "metadata": {"labels": {"app": "x"}},
    "spec": {"containers": [{"name": "c", "image": "nginx:1.25"}]},
}


def _named(api_version: str, kind: str, name: str, ns: str) -> dict[str, Any]:
    return {"apiVersion": api_version, "kind": kind, "metadata": {"name": name, "namespace": ns}}


def _created(ns: str, endpointslices: str) -> dict[str, dict[str, Any]]:
    """One object of each kind whose server-set fields the facts decide."""
    return {
        "ingress": {
            "apiVersion": "networking.k8s.io/v1",
            "kind": "Ingress",
            "metadata": {"name": "ing", "namespace": ns},
            "spec": {"defaultBackend": {"service": {"name": "s", "port": {"number": 80}}}},
        },
        "networkpolicy": {
            "apiVersion": "networking.k8s.io/v1",
            "kind": "NetworkPolicy",
            "metadata": {"name": "np", "namespace": ns},
            "spec": {"podSelector": {}},
        },
        "replicationcontroller": {
            "apiVersion": "v1",
            "kind": "ReplicationController",
            "metadata": {"name": "rc", "namespace": ns},
            "spec": {"replicas": 0, "selector": {"app": "x"}, "template": _TEMPLATE},
        },
        "podtemplate": {
            "apiVersion": "v1",
            "kind": "PodTemplate",
            "metadata": {"name": "pt", "namespace": ns},
            "template": _TEMPLATE,
        },
        "serviceaccount": {
            "apiVersion": "v1",
            "kind": "ServiceAccount",
            "metadata": {"name": "sa", "namespace": ns},
        },
        "configmap": _cm("plain", ns),
        "endpointslice": {
            **_named(endpointslices, "EndpointSlice", "es", ns),
            "addressType": "IPv4",
            "endpoints": [],
        },
        "priorityclass": {
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": {"name": f"facts-{ns}"},
            "value": 5,
        },
        # an RBAC name may hold what a DNS-1123 subdomain may not
        "role": {
            **_named("rbac.authorization.k8s.io/v1", "Role", "system:Reader", ns),
            "rules": [],
        },
    }


def _errors(c: ClientInterface, ns: str) -> dict[str, dict[str, Any]]:
    """The Status of each failing call, by name."""
    seen: dict[str, dict[str, Any]] = {}
    seen["not found"] = _status(lambda: c.get(kinds.ConfigMap, "missing", ns))
    seen["not found in a group"] = _status(lambda: c.get(kinds.StatefulSet, "missing", ns))
    first = c.create(_cm("a", ns))
    seen["already exists"] = _status(lambda: c.create(_cm("a", ns)))
    c.update({**first, "data": {"k": "v"}})
    seen["stale resourceVersion"] = _status(lambda: c.update({**first, "data": {"k": "w"}}))
    current = c.get(kinds.ConfigMap, "a", ns)
    other_uid = {**current["metadata"], "uid": "00000000-0000-0000-0000-000000000000"}
    seen["uid precondition"] = _status(lambda: c.update({**current, "metadata": other_uid}))
    # a patch may not change what identifies the object (no precondition: the result is wrong)
    for what, meta in (
        ("uid", {"uid": "00000000-0000-0000-0000-000000000000"}),
        ("resourceVersion", {"resourceVersion": "1"}),
        ("name", {"name": "b"}),
    ):
        patch = functools.partial(c.patch, kinds.ConfigMap, "a", {"metadata": meta}, namespace=ns)
        seen[f"patch changing the {what}"] = _status(patch)
    seen["delete uid precondition"] = _status(
        lambda: c.delete(kinds.ConfigMap, "a", ns, uid="00000000-0000-0000-0000-000000000000")
    )
    seen["delete resourceVersion precondition"] = _status(
        lambda: c.delete(kinds.ConfigMap, "a", ns, resource_version="1")
    )
    seen["invalid name"] = _status(lambda: c.create(_cm("Bad_Name", ns)))
    seen["invalid name, two causes"] = _status(lambda: c.create(_cm("B" * 254, ns)))
    # names by kind: a Service's is a DNS-1035 label, an RBAC object's a path segment (a
    # StatefulSet's is a DNS-1123 label in current releases, a subdomain in 1.20: not compared)
    service = {**_named("v1", "Service", "1abc", ns), "spec": {"ports": [{"port": 80}]}}
    seen["invalid service name"] = _status(lambda: c.create(service))
    role = {**_named("rbac.authorization.k8s.io/v1", "Role", "a%b", ns), "rules": []}
    seen["invalid role name"] = _status(lambda: c.create(role))
    return seen


def _server_set(c: ClientInterface, ns: str, endpointslices: str) -> dict[str, Any]:
    """What the server sets on create and answers on delete, by name (``endpointslices``: the
    ``apiVersion`` EndpointSlices are written in)."""
    seen: dict[str, Any] = {}
    for i, (name, spec) in enumerate(_QOS_PODS.items()):
        created = c.create(_pod(f"p{i}", ns, spec))
        seen[f"pod {name}"] = [created.get("status"), created["metadata"].get("generation")]
    for name, obj in _created(ns, endpointslices).items():
        created = c.create(obj)
        seen[f"{name} generation"] = created["metadata"].get("generation")
        kind = f"{obj['apiVersion']}/{obj['kind']}"
        where = obj["metadata"].get("namespace")
        answer = c.delete(kind, obj["metadata"]["name"], where, propagation_policy="Background")
        seen[f"{name} delete answers"] = answer.get("kind")
    return seen


def test_the_fake_and_the_api_server_answer_failing_calls_with_the_same_status(
    client: Client, namespace: str
) -> None:
    server = _errors(client, namespace)
    fake = _errors(FakeClient(), namespace)
    assert list(fake) == list(server)
    for case, want in server.items():
        assert fake[case] == want, f"{case}: the fake's Status differs from the API server's"
    # several causes: apimachinery's aggregate, in brackets
    assert '" is invalid: [metadata.name: ' in server["invalid name, two causes"]["message"]


def test_the_fake_and_the_api_server_set_the_same_fields(client: Client, namespace: str) -> None:
    # kube-apiserver 1.20 serves EndpointSlices in v1beta1 only (so does the embedded server,
    # besides v1); the fake in v1
    server = _server_set(client, namespace, "discovery.k8s.io/v1beta1")
    fake = _server_set(FakeClient(), namespace, "discovery.k8s.io/v1")
    assert list(fake) == list(server)
    for case, want in server.items():
        assert fake[case] == want, f"{case}: the fake differs from the API server"
    assert server["pod guaranteed"][0] == {"phase": "Pending", "qosClass": "Guaranteed"}
    assert server["pod equal by value"][0]["qosClass"] == "Guaranteed"
    assert server["ingress generation"] == server["priorityclass generation"] == 1
    assert server["podtemplate delete answers"] == "PodTemplate"


#: The class kube-apiserver 1.20 gives each of _QOS_PODS (seen on the real backend).
_QOS_CLASSES = {
    "best effort": "BestEffort",
    "burstable": "Burstable",
    "guaranteed": "Guaranteed",
    "other resources only": "BestEffort",
    "zero request": "BestEffort",
    "explicit zero request under a limit": "Burstable",
    "equal by value": "Guaranteed",
    "init container asks": "Burstable",
    "init container unlimited": "Burstable",
    "one of two limited": "Burstable",
}


@pytest.mark.parametrize("name", list(_QOS_PODS))
def test_a_pods_qos_class_is_kube_apiservers(name: str) -> None:
    assert facts.pod_qos_class({"spec": _QOS_PODS[name]}) == _QOS_CLASSES[name]


# ------------------------------------------------------------------ one home, old names


def test_the_old_homes_hand_out_the_shared_facts() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # internal re-exports: no warning
        assert errors.STALE_MESSAGE is facts.STALE_MESSAGE is fake_module.STALE_MESSAGE
        assert errors.not_found is facts.not_found
        assert errors.invalid is facts.invalid
        assert errors.Cause is facts.Cause is validation.Cause
    assert crdschema.go_float is facts.go_float
    err = fake_module.conflict(kinds.StatefulSet, "web")
    assert err.status == facts.conflict("statefulsets.apps", "apps", "web").status
    assert err.message == (
        f'Operation cannot be fulfilled on statefulsets.apps "web": {facts.STALE_MESSAGE}'
    )


def test_an_internal_error_carries_its_message_as_the_cause() -> None:
    """apimachinery's ``NewInternalError``, as the server's 500s answer; a Status built
    without a reason (a webhook's refusal that gives none) has no reason field."""
    status = facts.internal_error("boom").status
    assert status["code"] == 500 and status["reason"] == "InternalError"
    assert status["message"] == "Internal error occurred: boom"
    assert status["details"] == {"causes": [{"message": "boom"}]}
    assert "reason" not in facts.status_error(400, "refused").status


# ------------------------------------------------------------------ Go values


@pytest.mark.parametrize(
    ("value", "typed", "shown"),
    [
        ("a", False, '"a"'),
        ('say "hi"\n', False, '"say \\"hi\\"\\n"'),
        ("\x01\x7f\u200b", False, '"\\x01\\x7f\\u200b"'),
        (None, False, "null"),
        (True, True, "true"),
        (-3, False, "-3"),
        (1.0, False, "1"),
        (0.5, True, "0.5"),
        (123456.0, False, "123456"),
        (1e6, False, "1e+06"),
        (0.0001, False, "0.0001"),
        (0.00001, False, "1e-05"),
        (1e21, False, "1e+21"),
        (float("inf"), False, "+Inf"),
        (["a", "b"], False, '["a","b"]'),
        (["a", "b"], True, '[]string{"a", "b"}'),
        ({"b": "2", "a": "1"}, False, '{"a":"1","b":"2"}'),
        ({"b": "2", "a": "1"}, True, 'map[string]string{"a":"1", "b":"2"}'),
        ({"n": 1.0, "l": [1, None]}, True, '{"l":[1,null],"n":1}'),
    ],
)
def test_go_values_print_as_go_prints_them(value: Any, typed: bool, shown: str) -> None:
    assert facts.go_value(value, typed=typed) == shown


@pytest.mark.parametrize(
    ("value", "printed", "go_type"),
    [
        (None, "<nil>", "<nil>"),
        ("x y", "x y", "string"),
        (3, "3", "int64"),
        (2**63, "9.223372036854776e+18", "float64"),
        (2.0, "2", "float64"),
        ({"b": [1, "x"], "a": True}, "map[a:true b:[1 x]]", "map[string]interface {}"),
        ([], "[]", "[]interface {}"),
    ],
)
def test_decoded_json_prints_as_go_prints_an_interface_value(
    value: Any, printed: str, go_type: str
) -> None:
    assert facts.go_sprint(value) == printed
    assert facts.go_type(value) == go_type


def test_both_validators_print_rejected_values_with_the_one_renderer() -> None:
    # a built-in kind's typed field (validation) and a custom resource's JSON (crdschema)
    assert validation._invalid("spec.x", 1e6, "bad").message == "Invalid value: 1e+06: bad"
    assert crdschema._invalid("spec.x", 1e6, "bad").message == "Invalid value: 1e+06: bad"
    assert validation._invalid("spec.x", "\x01", "").message == 'Invalid value: "\\x01"'
