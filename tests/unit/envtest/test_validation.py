"""Validation of built-in kinds for the embedded API server: rules, reasons, paths, messages."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from kube_runtime.envtest.server.validation import (
    DUPLICATE,
    FORBIDDEN,
    INVALID,
    NOT_SUPPORTED,
    REQUIRED,
    TOO_LONG,
    Cause,
    is_config_map_key,
    is_dns1035_label,
    is_dns1123_label,
    is_dns1123_subdomain,
    is_qualified_name,
    is_valid_label_value,
    is_valid_percent,
    is_valid_port_name,
    validate,
    validate_object_meta,
)

Obj = dict[str, Any]
Edit = Callable[[Obj], None]

# ---- fixtures (fresh dicts per call) ---------------------------------------------------------


def pod() -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "web-0", "namespace": "default", "labels": {"app": "web"}},
        "spec": {
            "containers": [
                {
                    "name": "nginx",
                    "image": "nginx:1.25",
                    "ports": [{"containerPort": 80, "name": "http"}],
                }
            ],
            "initContainers": [{"name": "init", "image": "busybox"}],
            "restartPolicy": "Always",
            "tolerations": [
                {"key": "k", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 5}
            ],
        },
    }


def template(labels: dict[str, str] | None = None) -> Obj:
    return {
        "metadata": {"labels": {"app": "web"} if labels is None else labels},
        "spec": {"containers": [{"name": "nginx", "image": "nginx"}]},
    }


def statefulset() -> Obj:
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {
            "replicas": 3,
            "serviceName": "web",
            "selector": {"matchLabels": {"app": "web"}},
            "template": template(),
            "volumeClaimTemplates": [
                {"metadata": {"name": "data"}, "spec": {"accessModes": ["ReadWriteOnce"]}}
            ],
        },
    }


def deployment() -> Obj:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "web"}},
            "template": template(),
        },
    }


def replicaset() -> Obj:
    obj = deployment()
    obj["kind"] = "ReplicaSet"
    return obj


def daemonset() -> Obj:
    obj = deployment()
    obj["kind"] = "DaemonSet"
    del obj["spec"]["replicas"]
    return obj


def service() -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {"selector": {"app": "web"}, "ports": [{"port": 80, "targetPort": 8080}]},
    }


def pvc() -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": "data", "namespace": "default"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
    }


def crd() -> Obj:
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {
            "group": "example.com",
            "scope": "Namespaced",
            "names": {
                "plural": "widgets",
                "singular": "widget",
                "kind": "Widget",
                "listKind": "WidgetList",
            },
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {"openAPIV3Schema": {"type": "object"}},
                }
            ],
        },
    }


def configmap() -> Obj:
    return {
        "kind": "ConfigMap",
        "metadata": {"name": "cfg", "namespace": "default"},
        "data": {"app.conf": "x"},
    }


def secret() -> Obj:
    return {
        "kind": "Secret",
        "metadata": {"name": "s", "namespace": "default"},
        "data": {"password": "cGFzcw=="},
    }


def revision() -> Obj:
    return {
        "kind": "ControllerRevision",
        "metadata": {"name": "web-1", "namespace": "default"},
        "data": {"spec": {"template": {}}},
        "revision": 1,
    }


def lease() -> Obj:
    return {
        "kind": "Lease",
        "metadata": {"name": "leader", "namespace": "kube-system"},
        "spec": {"holderIdentity": "x"},
    }


def namespace() -> Obj:
    return {"kind": "Namespace", "metadata": {"name": "team-a"}}


FIXTURES: dict[str, tuple[str, str, Callable[[], Obj]]] = {
    "Pod": ("", "Pod", pod),
    "Namespace": ("", "Namespace", namespace),
    "Service": ("", "Service", service),
    "ConfigMap": ("", "ConfigMap", configmap),
    "Secret": ("", "Secret", secret),
    "PersistentVolumeClaim": ("", "PersistentVolumeClaim", pvc),
    "StatefulSet": ("apps", "StatefulSet", statefulset),
    "Deployment": ("apps", "Deployment", deployment),
    "ReplicaSet": ("apps", "ReplicaSet", replicaset),
    "DaemonSet": ("apps", "DaemonSet", daemonset),
    "ControllerRevision": ("apps", "ControllerRevision", revision),
    "Lease": ("coordination.k8s.io", "Lease", lease),
    "CustomResourceDefinition": ("apiextensions.k8s.io", "CustomResourceDefinition", crd),
}


def find(causes: list[Cause], field: str, reason: str, fragment: str) -> Cause:
    for cause in causes:
        if cause.field == field and cause.reason == reason and fragment in cause.message:
            return cause
    raise AssertionError(f"no {reason} cause at {field!r} containing {fragment!r} in {causes}")


def setter(path: str, value: Any) -> Edit:
    """An edit that sets (or, for ``...``, deletes) the dotted ``path`` (ints index lists)."""

    def edit(obj: Obj) -> None:
        keys: list[Any] = [int(k) if k.isdigit() else k for k in path.split(".")]
        target: Any = obj
        for key in keys[:-1]:
            if isinstance(key, str) and key not in target:
                target[key] = {}
            target = target[key]
        if value is ...:
            del target[keys[-1]]
        else:
            target[keys[-1]] = copy.deepcopy(value)

    return edit


# ---- string validators ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fn", "value", "expected"),
    [
        (is_dns1123_subdomain, "example.com", []),
        (is_dns1123_subdomain, "a" * 254, ["must be no more than 253 characters"]),
        (is_dns1123_label, "my-name", []),
        (is_dns1123_label, "a.b", ["must not contain dots"]),
        (is_dns1035_label, "abc-123", []),
        (is_qualified_name, "kubernetes.io/name", []),
        (is_qualified_name, "a/", ["name part must be non-empty"]),
        (is_valid_label_value, "", []),
        (is_valid_label_value, "x" * 64, ["must be no more than 63 characters"]),
        (is_config_map_key, "app.conf", []),
        (is_config_map_key, "..x", ["must not start with '..'"]),
        (is_valid_port_name, "http", []),
        (is_valid_port_name, "123", ["must contain at least one letter (a-z)"]),
        (is_valid_port_name, "a--b", ["must not contain consecutive hyphens"]),
        (is_valid_percent, "25%", []),
    ],
)
def test_string_validators(
    fn: Callable[[str], tuple[str, ...]], value: str, expected: list[str]
) -> None:
    errors = fn(value)
    if not expected:
        assert errors == ()
    else:
        assert all(any(e in got for got in errors) for e in expected), errors


@pytest.mark.parametrize(
    ("fn", "value", "message"),
    [
        (
            is_dns1123_subdomain,
            "Foo",
            "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
            "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used "
            "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
        ),
        (
            is_dns1035_label,
            "1abc",
            "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
            "alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', "
            "regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
        ),
        (
            is_config_map_key,
            "a b",
            "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  "
            "or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')",
        ),
        (
            is_valid_percent,
            "5",
            "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or "
            "'93%', regex used for validation is '[0-9]+%')",
        ),
    ],
)
def test_string_validator_exact_messages(
    fn: Callable[[str], tuple[str, ...]], value: str, message: str
) -> None:
    assert fn(value) == (message,)


@pytest.mark.parametrize(
    "fn", [is_dns1035_label, is_config_map_key, is_valid_port_name, is_valid_percent]
)
def test_string_validators_are_memoized_and_immutable(fn: Any) -> None:
    value = "-- not valid --"
    first = fn(value)
    assert isinstance(first, tuple) and first
    hits = fn.cache_info().hits
    assert fn(value) is first
    assert fn.cache_info().hits == hits + 1


# ---- object metadata -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("meta", "namespaced", "rule"),
    [
        ({"name": "a.b-c", "namespace": "ns"}, True, "subdomain"),
        ({"generateName": "web-", "namespace": "ns"}, True, "subdomain"),
        ({"generateName": "web-", "namespace": "ns"}, True, "label"),
        ({"name": "system:controller:x"}, False, "path-segment"),
        ({"name": "abc"}, False, "dns1035-label"),
        (
            {
                "name": "x",
                "namespace": "ns",
                "labels": {"app.kubernetes.io/name": "web", "empty": ""},
                "annotations": {"Example.com/Key": "any value at all"},
                "finalizers": ["example.com/cleanup", "foregroundDeletion"],
                "ownerReferences": [
                    {
                        "apiVersion": "apps/v1",
                        "kind": "ReplicaSet",
                        "name": "rs",
                        "uid": "1",
                        "controller": True,
                    },
                    {
                        "apiVersion": "v1",
                        "kind": "ConfigMap",
                        "name": "cm",
                        "uid": "2",
                        "controller": False,
                    },
                ],
                "generation": 3,
            },
            True,
            "subdomain",
        ),
    ],
)
def test_object_meta_valid(meta: Obj, namespaced: bool, rule: str) -> None:
    assert validate_object_meta(meta, namespaced=namespaced, name_rule=rule) == []


@pytest.mark.parametrize(
    ("meta", "namespaced", "rule", "field", "reason", "fragment"),
    [
        (
            {"namespace": "ns"},
            True,
            "subdomain",
            "metadata.name",
            REQUIRED,
            "Required value: name or generateName is required",
        ),
        (
            {"name": "Foo", "namespace": "ns"},
            True,
            "subdomain",
            "metadata.name",
            INVALID,
            'Invalid value: "Foo": a lowercase RFC 1123 subdomain',
        ),
        (
            {"name": "a.b", "namespace": "ns"},
            True,
            "label",
            "metadata.name",
            INVALID,
            "must not contain dots",
        ),
        ({"name": "1abc"}, False, "dns1035-label", "metadata.name", INVALID, "a DNS-1035 label"),
        ({"name": "a/b"}, False, "path-segment", "metadata.name", INVALID, "may not contain '/'"),
        ({"name": "a%b"}, False, "path-segment", "metadata.name", INVALID, "may not contain '%'"),
        ({"name": ".."}, False, "path-segment", "metadata.name", INVALID, "may not be '..'"),
        (
            {"generateName": "Web-", "namespace": "ns"},
            True,
            "subdomain",
            "metadata.generateName",
            INVALID,
            '"Web-"',
        ),
        ({"name": "x"}, True, "subdomain", "metadata.namespace", REQUIRED, "Required value"),
        (
            {"name": "x", "namespace": "Bad_NS"},
            True,
            "subdomain",
            "metadata.namespace",
            INVALID,
            "RFC 1123 label",
        ),
        (
            {"name": "x", "namespace": "ns"},
            False,
            "subdomain",
            "metadata.namespace",
            FORBIDDEN,
            "Forbidden: not allowed on this type",
        ),
        (
            {"name": "x", "labels": {"a b": "c"}},
            False,
            "subdomain",
            "metadata.labels",
            INVALID,
            'Invalid value: "a b": name part must consist',
        ),
        (
            {"name": "x", "labels": {"a": "-c"}},
            False,
            "subdomain",
            "metadata.labels",
            INVALID,
            'Invalid value: "-c": a valid label must be',
        ),
        (
            {"name": "x", "labels": {"a": 1}},
            False,
            "subdomain",
            "metadata.labels",
            INVALID,
            "must be a string",
        ),
        (
            {"name": "x", "annotations": {"a/b/c": "v"}},
            False,
            "subdomain",
            "metadata.annotations",
            INVALID,
            "a qualified name",
        ),
        (
            {"name": "x", "annotations": {"big": "x" * (256 * 1024)}},
            False,
            "subdomain",
            "metadata.annotations",
            TOO_LONG,
            "Too long: must have at most 262144 bytes",
        ),
        (
            {"name": "x", "annotations": {"big": "é" * (128 * 1024)}},
            False,
            "subdomain",
            "metadata.annotations",
            TOO_LONG,
            "262144",
        ),
        (
            {"name": "x", "generation": -1},
            False,
            "subdomain",
            "metadata.generation",
            INVALID,
            "Invalid value: -1: must be greater than or equal to 0",
        ),
        (
            {"name": "x", "finalizers": ["a b"]},
            False,
            "subdomain",
            "metadata.finalizers",
            INVALID,
            '"a b"',
        ),
        (
            {"name": "x", "finalizers": ["orphan", "foregroundDeletion"]},
            False,
            "subdomain",
            "metadata.finalizers",
            INVALID,
            "finalizer orphan and foregroundDeletion cannot be both set",
        ),
        (
            {"name": "x", "ownerReferences": [{"kind": "K", "name": "n", "uid": "u"}]},
            False,
            "subdomain",
            "metadata.ownerReferences.apiVersion",
            INVALID,
            "version must not be empty",
        ),
        (
            {"name": "x", "ownerReferences": [{"apiVersion": "v1", "name": "n", "uid": "u"}]},
            False,
            "subdomain",
            "metadata.ownerReferences.kind",
            INVALID,
            'Invalid value: "": must not be empty',
        ),
        (
            {"name": "x", "ownerReferences": [{"apiVersion": "v1", "kind": "K", "uid": "u"}]},
            False,
            "subdomain",
            "metadata.ownerReferences.name",
            INVALID,
            "must not be empty",
        ),
        (
            {"name": "x", "ownerReferences": [{"apiVersion": "v1", "kind": "K", "name": "n"}]},
            False,
            "subdomain",
            "metadata.ownerReferences.uid",
            INVALID,
            "must not be empty",
        ),
        (
            {
                "name": "x",
                "ownerReferences": [{"apiVersion": "v1", "kind": "Event", "name": "n", "uid": "u"}],
            },
            False,
            "subdomain",
            "metadata.ownerReferences",
            INVALID,
            "/v1, Kind=Event is disallowed from being an owner",
        ),
        (
            {
                "name": "x",
                "ownerReferences": [
                    {
                        "apiVersion": "apps/v1",
                        "kind": "ReplicaSet",
                        "name": "a",
                        "uid": "1",
                        "controller": True,
                    },
                    {
                        "apiVersion": "apps/v1",
                        "kind": "StatefulSet",
                        "name": "b",
                        "uid": "2",
                        "controller": True,
                    },
                ],
            },
            False,
            "subdomain",
            "metadata.ownerReferences",
            INVALID,
            'Only one reference can have Controller set to true. Found "true" in references for ReplicaSet/a and StatefulSet/b',
        ),
    ],
)
def test_object_meta_invalid(
    meta: Obj, namespaced: bool, rule: str, field: str, reason: str, fragment: str
) -> None:
    find(validate_object_meta(meta, namespaced=namespaced, name_rule=rule), field, reason, fragment)


def test_object_meta_unknown_rule_and_non_mapping() -> None:
    with pytest.raises(ValueError, match="unknown name rule"):
        validate_object_meta({"name": "x"}, namespaced=False, name_rule="nope")
    causes = validate_object_meta(None, namespaced=False)  # type: ignore[arg-type]
    find(causes, "metadata.name", REQUIRED, "name or generateName is required")
    find(validate_object_meta(["x"], namespaced=False), "metadata", INVALID, "must be an object")  # type: ignore[arg-type]


# ---- kinds: valid fixtures pass, create and update ------------------------------------------


@pytest.mark.parametrize("name", sorted(FIXTURES))
def test_valid_fixtures(name: str) -> None:
    group, kind, make = FIXTURES[name]
    obj = make()
    assert validate(group, kind, obj) == []
    assert validate(group, kind, make(), obj) == []


@pytest.mark.parametrize(
    ("name", "edit", "field", "reason", "fragment"),
    [
        # Namespace
        (
            "Namespace",
            setter("metadata.name", "a.b"),
            "metadata.name",
            INVALID,
            "must not contain dots",
        ),
        (
            "Namespace",
            setter("metadata.namespace", "x"),
            "metadata.namespace",
            FORBIDDEN,
            "not allowed on this type",
        ),
        # Service
        ("Service", setter("metadata.name", "1web"), "metadata.name", INVALID, "a DNS-1035 label"),
        ("Service", setter("metadata.name", "web.x"), "metadata.name", INVALID, "a DNS-1035 label"),
        (
            "Service",
            setter("spec.ports.0.port", 0),
            "spec.ports[0].port",
            INVALID,
            "Invalid value: 0: must be between 1 and 65535, inclusive",
        ),
        (
            "Service",
            setter("spec.ports.0.port", 70000),
            "spec.ports[0].port",
            INVALID,
            "must be between 1 and 65535",
        ),
        (
            "Service",
            setter("spec.ports.0.port", ...),
            "spec.ports[0].port",
            INVALID,
            "must be between 1 and 65535",
        ),
        (
            "Service",
            setter("spec.ports.0.port", "80"),
            "spec.ports[0].port",
            INVALID,
            'Invalid value: "80": must be an integer',
        ),
        ("Service", setter("spec.ports", []), "spec.ports", REQUIRED, "Required value"),
        (
            "Service",
            setter("spec.ports", [{"port": 80}, {"port": 81, "name": "b"}]),
            "spec.ports[0].name",
            REQUIRED,
            "Required value",
        ),
        (
            "Service",
            setter("spec.ports", [{"port": 80, "name": "a"}, {"port": 81, "name": "a"}]),
            "spec.ports[1].name",
            DUPLICATE,
            'Duplicate value: "a"',
        ),
        (
            "Service",
            setter("spec.ports.0.protocol", "HTTP"),
            "spec.ports[0].protocol",
            NOT_SUPPORTED,
            'supported values: "SCTP", "TCP", "UDP"',
        ),
        (
            "Service",
            setter("spec.ports.0.targetPort", 70000),
            "spec.ports[0].targetPort",
            INVALID,
            "must be between 1 and 65535",
        ),
        (
            "Service",
            setter("spec.ports.0.targetPort", "a--b"),
            "spec.ports[0].targetPort",
            INVALID,
            "consecutive hyphens",
        ),
        (
            "Service",
            setter("spec.type", "Magic"),
            "spec.type",
            NOT_SUPPORTED,
            '"ClusterIP", "NodePort", "LoadBalancer", "ExternalName"',
        ),
        (
            "Service",
            setter("spec.selector", {"app": "-x"}),
            "spec.selector",
            INVALID,
            "a valid label must be",
        ),
        # Pod
        ("Pod", setter("spec.containers", []), "spec.containers", REQUIRED, "Required value"),
        ("Pod", setter("spec", {}), "spec.containers", REQUIRED, "Required value"),
        (
            "Pod",
            setter("spec.containers.0.name", "Nginx"),
            "spec.containers[0].name",
            INVALID,
            "RFC 1123 label",
        ),
        (
            "Pod",
            setter("spec.containers.0.name", ""),
            "spec.containers[0].name",
            REQUIRED,
            "Required value",
        ),
        (
            "Pod",
            setter("spec.containers.0.image", ...),
            "spec.containers[0].image",
            REQUIRED,
            "Required value",
        ),
        (
            "Pod",
            setter("spec.containers.0.image", " nginx"),
            "spec.containers[0].image",
            INVALID,
            "must not have leading or trailing whitespace",
        ),
        (
            "Pod",
            setter("spec.initContainers.0.name", "nginx"),
            "spec.initContainers[0].name",
            DUPLICATE,
            'Duplicate value: "nginx"',
        ),
        (
            "Pod",
            setter("spec.initContainers.0.image", ""),
            "spec.initContainers[0].image",
            REQUIRED,
            "Required value",
        ),
        (
            "Pod",
            lambda o: o["spec"]["containers"].append({"name": "nginx", "image": "x"}),
            "spec.containers[1].name",
            DUPLICATE,
            '"nginx"',
        ),
        (
            "Pod",
            setter("spec.restartPolicy", "Sometimes"),
            "spec.restartPolicy",
            NOT_SUPPORTED,
            'Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"',
        ),
        (
            "Pod",
            setter("spec.containers.0.ports.0.containerPort", 0),
            "spec.containers[0].ports[0].containerPort",
            REQUIRED,
            "Required value",
        ),
        (
            "Pod",
            setter("spec.containers.0.ports.0.containerPort", 65536),
            "spec.containers[0].ports[0].containerPort",
            INVALID,
            "Invalid value: 65536: must be between 1 and 65535, inclusive",
        ),
        (
            "Pod",
            setter("spec.containers.0.ports.0.hostPort", -1),
            "spec.containers[0].ports[0].hostPort",
            INVALID,
            "must be between 1 and 65535",
        ),
        (
            "Pod",
            setter("spec.containers.0.ports.0.name", "HTTP"),
            "spec.containers[0].ports[0].name",
            INVALID,
            "must contain only alpha-numeric characters",
        ),
        (
            "Pod",
            setter("spec.containers.0.ports.0.protocol", "ICMP"),
            "spec.containers[0].ports[0].protocol",
            NOT_SUPPORTED,
            '"SCTP", "TCP", "UDP"',
        ),
        (
            "Pod",
            setter("spec.containers.0.imagePullPolicy", "Sometimes"),
            "spec.containers[0].imagePullPolicy",
            NOT_SUPPORTED,
            '"Always", "IfNotPresent", "Never"',
        ),
        (
            "Pod",
            setter("spec.activeDeadlineSeconds", 0),
            "spec.activeDeadlineSeconds",
            INVALID,
            "must be between 1 and 2147483647, inclusive",
        ),
        ("Pod", setter("spec.nodeName", "Node_1"), "spec.nodeName", INVALID, "RFC 1123 subdomain"),
        ("Pod", setter("spec.containers", "nginx"), "spec.containers", INVALID, "must be a list"),
        # StatefulSet
        ("StatefulSet", setter("spec.selector", ...), "spec.selector", REQUIRED, "Required value"),
        (
            "StatefulSet",
            setter("spec.selector", ...),
            "spec.template.metadata.labels",
            INVALID,
            "`selector` does not match template `labels`",
        ),
        (
            "StatefulSet",
            setter("spec.selector", {}),
            "spec.selector",
            INVALID,
            "empty selector is invalid for statefulset",
        ),
        (
            "StatefulSet",
            setter("spec.selector.matchLabels", {"app": "db"}),
            "spec.template.metadata.labels",
            INVALID,
            'Invalid value: map[string]string{"app":"web"}: `selector` does not match template `labels`',
        ),
        (
            "StatefulSet",
            setter("spec.selector", {"matchExpressions": [{"key": "app", "operator": "Is"}]}),
            "spec.selector.matchExpressions[0].operator",
            NOT_SUPPORTED,
            '"In", "NotIn", "Exists", "DoesNotExist"',
        ),
        (
            "StatefulSet",
            setter("spec.selector", {"matchExpressions": [{"key": "app", "operator": "In"}]}),
            "spec.selector.matchExpressions[0].values",
            REQUIRED,
            "must be specified when `operator` is 'In' or 'NotIn'",
        ),
        (
            "StatefulSet",
            setter(
                "spec.selector",
                {"matchExpressions": [{"key": "app", "operator": "Exists", "values": ["x"]}]},
            ),
            "spec.selector.matchExpressions[0].values",
            FORBIDDEN,
            "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
        ),
        (
            "StatefulSet",
            setter("spec.selector", {"matchLabels": {"app": "web", "a b": "x"}}),
            "spec.selector.matchLabels",
            INVALID,
            '"a b"',
        ),
        (
            "StatefulSet",
            setter("spec.replicas", -1),
            "spec.replicas",
            INVALID,
            "Invalid value: -1: must be greater than or equal to 0",
        ),
        (
            "StatefulSet",
            setter("spec.replicas", "3"),
            "spec.replicas",
            INVALID,
            "must be an integer",
        ),
        (
            "StatefulSet",
            setter("spec.podManagementPolicy", "Random"),
            "spec.podManagementPolicy",
            INVALID,
            "must be 'OrderedReady' or 'Parallel'",
        ),
        (
            "StatefulSet",
            setter("spec.updateStrategy", {"type": "Sometimes"}),
            "spec.updateStrategy",
            INVALID,
            "must be 'RollingUpdate' or 'OnDelete'",
        ),
        (
            "StatefulSet",
            setter("spec.updateStrategy", {"type": "OnDelete", "rollingUpdate": {}}),
            "spec.updateStrategy.rollingUpdate",
            INVALID,
            "only allowed for updateStrategy 'RollingUpdate'",
        ),
        (
            "StatefulSet",
            setter(
                "spec.updateStrategy", {"type": "RollingUpdate", "rollingUpdate": {"partition": -1}}
            ),
            "spec.updateStrategy.rollingUpdate.partition",
            INVALID,
            "must be greater than or equal to 0",
        ),
        (
            "StatefulSet",
            setter("spec.updateStrategy", {"rollingUpdate": {"maxUnavailable": 0}}),
            "spec.updateStrategy.rollingUpdate.maxUnavailable",
            INVALID,
            "cannot be 0",
        ),
        (
            "StatefulSet",
            setter("spec.updateStrategy", {"rollingUpdate": {"maxUnavailable": "0%"}}),
            "spec.updateStrategy.rollingUpdate.maxUnavailable",
            INVALID,
            "cannot be 0",
        ),
        (
            "StatefulSet",
            setter("spec.updateStrategy", {"rollingUpdate": {"maxUnavailable": "five"}}),
            "spec.updateStrategy.rollingUpdate.maxUnavailable",
            INVALID,
            "a valid percent string",
        ),
        (
            "StatefulSet",
            setter("spec.updateStrategy", {"rollingUpdate": {"maxUnavailable": "150%"}}),
            "spec.updateStrategy.rollingUpdate.maxUnavailable",
            INVALID,
            "must not be greater than 100%",
        ),
        (
            "StatefulSet",
            setter("spec.updateStrategy", {"rollingUpdate": {"maxUnavailable": -2}}),
            "spec.updateStrategy.rollingUpdate.maxUnavailable",
            INVALID,
            "must be greater than or equal to 0",
        ),
        (
            "StatefulSet",
            setter("spec.template.spec.restartPolicy", "Never"),
            "spec.template.spec.restartPolicy",
            NOT_SUPPORTED,
            'Unsupported value: "Never": supported values: "Always"',
        ),
        (
            "StatefulSet",
            setter("spec.template.spec.activeDeadlineSeconds", 5),
            "spec.template.spec.activeDeadlineSeconds",
            FORBIDDEN,
            "activeDeadlineSeconds in StatefulSet is not Supported",
        ),
        (
            "StatefulSet",
            setter("spec.minReadySeconds", -5),
            "spec.minReadySeconds",
            INVALID,
            "must be greater than or equal to 0",
        ),
        (
            "StatefulSet",
            setter("spec.revisionHistoryLimit", -1),
            "spec.revisionHistoryLimit",
            INVALID,
            "must be greater than or equal to 0",
        ),
        (
            "StatefulSet",
            setter("spec.ordinals", {"start": -1}),
            "spec.ordinals.start",
            INVALID,
            "must be greater than or equal to 0",
        ),
        (
            "StatefulSet",
            setter("spec.persistentVolumeClaimRetentionPolicy", {"whenDeleted": "Keep"}),
            "spec.persistentVolumeClaimRetentionPolicy.whenDeleted",
            NOT_SUPPORTED,
            '"Retain", "Delete"',
        ),
        (
            "StatefulSet",
            setter("spec.persistentVolumeClaimRetentionPolicy", {"whenScaled": "Drop"}),
            "spec.persistentVolumeClaimRetentionPolicy.whenScaled",
            NOT_SUPPORTED,
            '"Retain", "Delete"',
        ),
        (
            "StatefulSet",
            setter("metadata.name", "web.v1"),
            "metadata.name",
            INVALID,
            "must not contain dots",
        ),
        (
            "StatefulSet",
            setter("spec.template.metadata.labels", {"app": "web", "-bad": "x"}),
            "spec.template.labels",
            INVALID,
            '"-bad"',
        ),
        # Deployment / ReplicaSet / DaemonSet
        ("Deployment", setter("spec.selector", ...), "spec.selector", REQUIRED, "Required value"),
        (
            "Deployment",
            setter("spec.selector", {}),
            "spec.selector",
            INVALID,
            "empty selector is invalid for deployment",
        ),
        (
            "Deployment",
            setter("spec.template.metadata.labels", {"app": "other"}),
            "spec.template.metadata.labels",
            INVALID,
            "`selector` does not match template `labels`",
        ),
        (
            "Deployment",
            setter("spec.replicas", -1),
            "spec.replicas",
            INVALID,
            "must be greater than or equal to 0",
        ),
        (
            "Deployment",
            setter("spec.template.spec.containers", []),
            "spec.template.spec.containers",
            REQUIRED,
            "Required value",
        ),
        (
            "Deployment",
            setter("spec.template.spec.containers.0.image", ""),
            "spec.template.spec.containers[0].image",
            REQUIRED,
            "Required value",
        ),
        (
            "Deployment",
            setter("spec.template.spec.restartPolicy", "OnFailure"),
            "spec.template.spec.restartPolicy",
            NOT_SUPPORTED,
            '"Always"',
        ),
        (
            "Deployment",
            setter("spec.strategy", {"type": "Blue"}),
            "spec.strategy",
            NOT_SUPPORTED,
            '"Recreate", "RollingUpdate"',
        ),
        (
            "Deployment",
            setter("spec.strategy", {"type": "Recreate", "rollingUpdate": {}}),
            "spec.strategy.rollingUpdate",
            FORBIDDEN,
            "may not be specified when strategy `type` is 'Recreate'",
        ),
        (
            "Deployment",
            setter("spec.strategy", {"rollingUpdate": {"maxUnavailable": 0, "maxSurge": 0}}),
            "spec.strategy.rollingUpdate.maxUnavailable",
            INVALID,
            "may not be 0 when `maxSurge` is 0",
        ),
        (
            "Deployment",
            setter("spec.progressDeadlineSeconds", 0),
            "spec.progressDeadlineSeconds",
            INVALID,
            "must be greater than minReadySeconds",
        ),
        ("ReplicaSet", setter("spec.selector", ...), "spec.selector", REQUIRED, "Required value"),
        (
            "ReplicaSet",
            setter("spec.selector.matchLabels", {"app": "db"}),
            "spec.template.metadata.labels",
            INVALID,
            "`selector` does not match template `labels`",
        ),
        ("ReplicaSet", setter("spec.replicas", -3), "spec.replicas", INVALID, "Invalid value: -3"),
        (
            "ReplicaSet",
            setter("spec.template.spec.activeDeadlineSeconds", 3),
            "spec.template.spec.activeDeadlineSeconds",
            FORBIDDEN,
            "activeDeadlineSeconds in ReplicaSet is not Supported",
        ),
        (
            "DaemonSet",
            setter("spec.selector", {}),
            "spec.selector",
            INVALID,
            "empty selector is invalid for daemonset",
        ),
        (
            "DaemonSet",
            setter("spec.template.spec.restartPolicy", "Never"),
            "spec.template.spec.restartPolicy",
            NOT_SUPPORTED,
            '"Always"',
        ),
        # ConfigMap / Secret
        (
            "ConfigMap",
            setter("data", {"a b": "x"}),
            "data[a b]",
            INVALID,
            'Invalid value: "a b": a valid config key must consist of',
        ),
        (
            "ConfigMap",
            setter("data", {"..x": "x"}),
            "data[..x]",
            INVALID,
            "must not start with '..'",
        ),
        (
            "ConfigMap",
            setter("binaryData", {"app.conf": "eA=="}),
            "data[app.conf]",
            INVALID,
            "duplicate of key present in binaryData",
        ),
        (
            "ConfigMap",
            setter("data", {"big": "x" * (1024 * 1024 + 1)}),
            "data",
            TOO_LONG,
            "must have at most 1048576 bytes",
        ),
        ("Secret", setter("data", {"a/b": "eA=="}), "data[a/b]", INVALID, "a valid config key"),
        ("Secret", setter("stringData", {"a:b": "x"}), "data[a:b]", INVALID, "a valid config key"),
        ("Secret", setter("data", {".": "eA=="}), "data[.]", INVALID, "must not be '.'"),
        # PersistentVolumeClaim
        (
            "PersistentVolumeClaim",
            setter("spec.accessModes", ...),
            "spec.accessModes",
            REQUIRED,
            "at least 1 access mode is required",
        ),
        (
            "PersistentVolumeClaim",
            setter("spec.accessModes", ["ReadWriteSometimes"]),
            "spec.accessModes",
            NOT_SUPPORTED,
            '"ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"',
        ),
        (
            "PersistentVolumeClaim",
            setter("spec.accessModes", ["ReadWriteOncePod", "ReadOnlyMany"]),
            "spec.accessModes",
            FORBIDDEN,
            "may not use ReadWriteOncePod with other access modes",
        ),
        (
            "PersistentVolumeClaim",
            setter("spec.resources", {}),
            "spec.resources[storage]",
            REQUIRED,
            "Required value",
        ),
        (
            "PersistentVolumeClaim",
            setter("spec.resources.requests.storage", "0"),
            "spec.resources[storage]",
            INVALID,
            "must be greater than zero",
        ),
        (
            "PersistentVolumeClaim",
            setter("spec.resources.requests.storage", "lots"),
            "spec.resources[storage]",
            INVALID,
            "quantities must match the regular expression",
        ),
        (
            "PersistentVolumeClaim",
            setter("spec.storageClassName", "Fast_SSD"),
            "spec.storageClassName",
            INVALID,
            "RFC 1123 subdomain",
        ),
        # ControllerRevision
        (
            "ControllerRevision",
            setter("revision", -1),
            "revision",
            INVALID,
            "must be greater than or equal to 0",
        ),
        ("ControllerRevision", setter("data", ...), "data", REQUIRED, "data is mandatory"),
        # Lease: metadata only
        (
            "Lease",
            setter("metadata.namespace", ...),
            "metadata.namespace",
            REQUIRED,
            "Required value",
        ),
        # CustomResourceDefinition
        (
            "CustomResourceDefinition",
            setter("metadata.name", "widget.example.com"),
            "metadata.name",
            INVALID,
            'must be spec.names.plural+"."+spec.group',
        ),
        (
            "CustomResourceDefinition",
            setter("spec.group", "example"),
            "spec.group",
            INVALID,
            "should be a domain with at least one dot",
        ),
        (
            "CustomResourceDefinition",
            setter("spec.group", ...),
            "spec.group",
            REQUIRED,
            "Required value",
        ),
        (
            "CustomResourceDefinition",
            setter("spec.group", "Example.com"),
            "spec.group",
            INVALID,
            "RFC 1123 subdomain",
        ),
        (
            "CustomResourceDefinition",
            setter("spec.scope", "Global"),
            "spec.scope",
            NOT_SUPPORTED,
            'Unsupported value: "Global": supported values: "Cluster", "Namespaced"',
        ),
        (
            "CustomResourceDefinition",
            setter("spec.scope", ...),
            "spec.scope",
            REQUIRED,
            "Required value",
        ),
        (
            "CustomResourceDefinition",
            setter("spec.names.plural", ...),
            "spec.names.plural",
            REQUIRED,
            "Required value",
        ),
        (
            "CustomResourceDefinition",
            setter("spec.names.kind", ...),
            "spec.names.kind",
            REQUIRED,
            "Required value",
        ),
        (
            "CustomResourceDefinition",
            setter("spec.names.plural", "Widgets"),
            "spec.names.plural",
            INVALID,
            "a DNS-1035 label",
        ),
        (
            "CustomResourceDefinition",
            setter("spec.names.kind", "Wid get"),
            "spec.names.kind",
            INVALID,
            "may have mixed case, but should otherwise match",
        ),
        (
            "CustomResourceDefinition",
            setter("spec.names.listKind", "Widget"),
            "spec.names.listKind",
            INVALID,
            "kind and listKind may not be the same",
        ),
        (
            "CustomResourceDefinition",
            setter("spec.versions", []),
            "spec.versions",
            REQUIRED,
            "must have at least one version",
        ),
        (
            "CustomResourceDefinition",
            lambda o: o["spec"]["versions"].append(copy.deepcopy(o["spec"]["versions"][0])),
            "spec.versions",
            INVALID,
            "must contain unique version names",
        ),
        (
            "CustomResourceDefinition",
            setter("spec.versions.0.storage", False),
            "spec.versions",
            INVALID,
            "must have exactly one version marked as storage version",
        ),
        (
            "CustomResourceDefinition",
            lambda o: o["spec"]["versions"].append(
                {
                    "name": "v2",
                    "served": True,
                    "storage": True,
                    "schema": {"openAPIV3Schema": {"type": "object"}},
                }
            ),
            "spec.versions",
            INVALID,
            "must have exactly one version marked as storage version",
        ),
        (
            "CustomResourceDefinition",
            setter("spec.versions.0.served", False),
            "spec.versions",
            INVALID,
            "must have at least one served version",
        ),
        (
            "CustomResourceDefinition",
            setter("spec.versions.0.name", "V1"),
            "spec.versions[0].name",
            INVALID,
            "a DNS-1035 label",
        ),
        (
            "CustomResourceDefinition",
            setter("spec.versions.0.schema", ...),
            "spec.versions[0].schema.openAPIV3Schema",
            REQUIRED,
            "schemas are required",
        ),
        (
            "CustomResourceDefinition",
            setter("spec.versions.0.schema.openAPIV3Schema.type", "array"),
            # one schema shared by every version: kube-apiserver reports the internal form
            "spec.validation.openAPIV3Schema.type",
            INVALID,
            'Invalid value: "array": must be object at the root',
        ),
        (
            "CustomResourceDefinition",
            setter("spec.versions.0.schema.openAPIV3Schema", {"properties": {}}),
            "spec.validation.openAPIV3Schema.type",
            REQUIRED,
            "must not be empty at the root",
        ),
        (
            "CustomResourceDefinition",
            setter("metadata.namespace", "default"),
            "metadata.namespace",
            FORBIDDEN,
            "not allowed on this type",
        ),
    ],
)
def test_invalid_on_create(name: str, edit: Edit, field: str, reason: str, fragment: str) -> None:
    group, kind, make = FIXTURES[name]
    obj = make()
    edit(obj)
    find(validate(group, kind, obj), field, reason, fragment)


def test_crd_schemas_that_differ_are_reported_per_version() -> None:
    obj = crd()
    second = copy.deepcopy(obj["spec"]["versions"][0])
    second.update(name="v2", storage=False)
    second["schema"]["openAPIV3Schema"]["properties"] = {"spec": {"properties": {}}}
    obj["spec"]["versions"].append(second)
    find(
        validate("apiextensions.k8s.io", "CustomResourceDefinition", obj),
        "spec.versions[1].schema.openAPIV3Schema.properties[spec].type",
        REQUIRED,
        "must not be empty for specified object fields",
    )


def test_crd_top_level_schema_is_accepted() -> None:
    obj = crd()
    del obj["spec"]["versions"][0]["schema"]
    obj["spec"]["validation"] = {"openAPIV3Schema": {"type": "object"}}
    assert validate("apiextensions.k8s.io", "CustomResourceDefinition", obj) == []
    obj["spec"]["validation"]["openAPIV3Schema"]["type"] = "string"
    find(
        validate("apiextensions.k8s.io", "CustomResourceDefinition", obj),
        "spec.validation.openAPIV3Schema.type",
        INVALID,
        "must be object at the root",
    )


# ---- updates ------------------------------------------------------------------------------

_POD_FORBIDDEN = (
    "Forbidden: pod updates may not change fields other than `spec.containers[*].image`"
)
_STS_FORBIDDEN = (
    "Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', "
    "'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and "
    "'minReadySeconds' are forbidden"
)


@pytest.mark.parametrize(
    ("name", "edit"),
    [
        ("Pod", setter("spec.containers.0.image", "nginx:1.26")),
        ("Pod", setter("spec.initContainers.0.image", "busybox:2")),
        ("Pod", setter("spec.activeDeadlineSeconds", 30)),
        ("Pod", lambda o: o["spec"]["tolerations"].append({"key": "b", "operator": "Exists"})),
        ("Pod", setter("spec.tolerations.0.tolerationSeconds", 60)),
        ("Pod", setter("metadata.labels", {"app": "web", "extra": "yes"})),
        ("Pod", setter("status", {"phase": "Running"})),
        ("Pod", setter("spec.nodeName", "")),  # "" equals a missing field
        ("Pod", setter("spec.containers.0.env", [])),  # [] equals a missing field
        ("Pod", setter("spec.initContainers.0.imagePullPolicy", None)),
        ("StatefulSet", setter("spec.replicas", 5)),
        ("StatefulSet", setter("spec.template.spec.containers.0.image", "nginx:2")),
        ("StatefulSet", setter("spec.updateStrategy", {"type": "OnDelete"})),
        ("StatefulSet", setter("spec.ordinals", {"start": 2})),
        ("StatefulSet", setter("spec.minReadySeconds", 10)),
        ("StatefulSet", setter("spec.revisionHistoryLimit", 3)),
        (
            "StatefulSet",
            setter("spec.persistentVolumeClaimRetentionPolicy", {"whenDeleted": "Delete"}),
        ),
        ("StatefulSet", setter("spec.podManagementPolicy", "OrderedReady")),  # the default
        ("Deployment", setter("spec.replicas", 10)),
        ("Deployment", setter("spec.template.spec.containers.0.image", "nginx:2")),
        ("ControllerRevision", setter("metadata.labels", {"a": "b"})),
        ("PersistentVolumeClaim", setter("spec.volumeName", "pv-1")),
        (
            "PersistentVolumeClaim",
            setter("spec.resources.requests.storage", "1024Mi"),
        ),  # same value
        (
            "CustomResourceDefinition",
            setter("spec.versions.0.schema.openAPIV3Schema.description", "x"),
        ),
        ("ConfigMap", setter("data", {"other": "y"})),
    ],
)
def test_allowed_updates(name: str, edit: Edit) -> None:
    group, kind, make = FIXTURES[name]
    old = make()
    new = make()
    edit(new)
    assert validate(group, kind, new, old) == []


@pytest.mark.parametrize(
    ("name", "edit", "field", "reason", "fragment"),
    [
        ("Pod", setter("spec.nodeName", "node-2"), "spec", FORBIDDEN, _POD_FORBIDDEN),
        (
            "Pod",
            setter("spec.containers.0.ports.0.containerPort", 81),
            "spec",
            FORBIDDEN,
            "spec.containers[0].ports[0].containerPort: 80 -> 81",
        ),
        (
            "Pod",
            setter("spec.restartPolicy", "Never"),
            "spec",
            FORBIDDEN,
            "(allow it to be set to 1 if it was previously negative)",
        ),
        (
            "Pod",
            setter("spec.terminationGracePeriodSeconds", 10),
            "spec",
            FORBIDDEN,
            _POD_FORBIDDEN,
        ),
        (
            "Pod",
            lambda o: o["spec"]["containers"].append({"name": "b", "image": "b"}),
            "spec.containers",
            FORBIDDEN,
            "pod updates may not add or remove containers",
        ),
        (
            "Pod",
            setter("spec.initContainers", []),
            "spec.initContainers",
            FORBIDDEN,
            "pod updates may not add or remove containers",
        ),
        (
            "Pod",
            setter("spec.containers.0.image", ""),
            "spec.containers[0].image",
            REQUIRED,
            "Required value",
        ),
        (
            "Pod",
            setter("spec.tolerations", []),
            "spec.tolerations",
            FORBIDDEN,
            "existing toleration can not be modified except its tolerationSeconds",
        ),
        (
            "Pod",
            setter("spec.tolerations.0.effect", "NoSchedule"),
            "spec.tolerations",
            FORBIDDEN,
            "existing toleration can not be modified",
        ),
        (
            "Pod",
            setter("spec.schedulingGates", [{"name": "example.com/gate"}]),
            "spec.schedulingGates[0].name",
            FORBIDDEN,
            "only deletion is allowed, but found new scheduling gate 'example.com/gate'",
        ),
        ("StatefulSet", setter("spec.serviceName", "other"), "spec", FORBIDDEN, _STS_FORBIDDEN),
        (
            "StatefulSet",
            setter("spec.volumeClaimTemplates.0.spec.accessModes", ["ReadWriteMany"]),
            "spec",
            FORBIDDEN,
            _STS_FORBIDDEN,
        ),
        (
            "StatefulSet",
            setter("spec.podManagementPolicy", "Parallel"),
            "spec",
            FORBIDDEN,
            'spec.podManagementPolicy: <absent> -> "Parallel"',
        ),
        (
            "StatefulSet",
            lambda o: (
                o["spec"]["selector"]["matchLabels"].update(tier="x"),
                o["spec"]["template"]["metadata"]["labels"].update(tier="x"),
            ),
            "spec",
            FORBIDDEN,
            _STS_FORBIDDEN,
        ),
        (
            "Deployment",
            lambda o: (
                o["spec"]["selector"]["matchLabels"].update(tier="x"),
                o["spec"]["template"]["metadata"]["labels"].update(tier="x"),
            ),
            "spec.selector",
            INVALID,
            "field is immutable",
        ),
        (
            "ReplicaSet",
            setter("spec.selector", {"matchExpressions": [{"key": "app", "operator": "Exists"}]}),
            "spec.selector",
            INVALID,
            "field is immutable",
        ),
        (
            "ControllerRevision",
            setter("data", {"spec": {"template": {"x": 1}}}),
            "data",
            INVALID,
            "field is immutable",
        ),
        (
            "PersistentVolumeClaim",
            setter("spec.accessModes", ["ReadWriteMany"]),
            "spec",
            FORBIDDEN,
            "spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims",
        ),
        (
            "PersistentVolumeClaim",
            setter("spec.resources.requests.storage", "2Gi"),
            "spec",
            FORBIDDEN,
            "for bound claims",
        ),
        (
            "PersistentVolumeClaim",
            setter("spec.resources.requests.storage", "500Mi"),
            "spec.resources.requests.storage",
            FORBIDDEN,
            "field can not be less than previous value",
        ),
        (
            "CustomResourceDefinition",
            setter("spec.group", "other.com"),
            "spec.group",
            INVALID,
            "field is immutable",
        ),
        (
            "CustomResourceDefinition",
            setter("spec.names.plural", "gadgets"),
            "spec.names.plural",
            INVALID,
            "field is immutable",
        ),
        (
            "Secret",
            setter("type", "kubernetes.io/tls"),
            "type",
            INVALID,
            'Invalid value: "kubernetes.io/tls": field is immutable',
        ),
    ],
)
def test_forbidden_updates(name: str, edit: Edit, field: str, reason: str, fragment: str) -> None:
    group, kind, make = FIXTURES[name]
    old = make()
    new = make()
    edit(new)
    find(validate(group, kind, new, old), field, reason, fragment)


def test_pod_active_deadline_updates() -> None:
    old = pod()
    old["spec"]["activeDeadlineSeconds"] = 30
    lower, higher, removed = pod(), pod(), pod()
    lower["spec"]["activeDeadlineSeconds"] = 10
    higher["spec"]["activeDeadlineSeconds"] = 60
    assert validate("", "Pod", lower, old) == []
    find(
        validate("", "Pod", higher, old),
        "spec.activeDeadlineSeconds",
        INVALID,
        "must be less than or equal to previous value",
    )
    find(
        validate("", "Pod", removed, old),
        "spec.activeDeadlineSeconds",
        INVALID,
        "Invalid value: null: must not update from a positive integer to nil value",
    )


def test_pod_grace_period_may_go_from_negative_to_one() -> None:
    old, new = pod(), pod()
    old["spec"]["terminationGracePeriodSeconds"] = -1
    new["spec"]["terminationGracePeriodSeconds"] = 1
    assert validate("", "Pod", new, old) == []
    new["spec"]["terminationGracePeriodSeconds"] = 2
    find(validate("", "Pod", new, old), "spec", FORBIDDEN, _POD_FORBIDDEN)


def test_pod_scheduling_gates_may_only_be_removed() -> None:
    old, new = pod(), pod()
    old["spec"]["schedulingGates"] = [{"name": "a"}, {"name": "b"}]
    new["spec"]["schedulingGates"] = [{"name": "b"}]
    assert validate("", "Pod", new, old) == []


def test_bound_pvc_may_grow_but_not_shrink() -> None:
    old, new = pvc(), pvc()
    old["status"] = {"phase": "Bound", "capacity": {"storage": "1Gi"}}
    new["spec"]["resources"]["requests"]["storage"] = "2Gi"
    assert validate("", "PersistentVolumeClaim", new, old) == []
    new["spec"]["resources"]["requests"]["storage"] = "512Mi"
    causes = validate("", "PersistentVolumeClaim", new, old)
    assert causes == [
        Cause(
            "spec.resources.requests.storage",
            FORBIDDEN,
            "Forbidden: field can not be less than previous value",
        )
    ]


def test_pvc_volume_name_can_be_set_once() -> None:
    old, new = pvc(), pvc()
    old["spec"]["volumeName"] = "pv-1"
    new["spec"]["volumeName"] = "pv-2"
    find(
        validate("", "PersistentVolumeClaim", new, old),
        "spec",
        FORBIDDEN,
        'spec.volumeName: "pv-1" -> "pv-2"',
    )


def test_crd_scope_and_kind_immutable_once_established() -> None:
    old, new = crd(), crd()
    new["spec"]["scope"] = "Cluster"
    new["spec"]["names"]["kind"] = "Gadget"
    assert validate("apiextensions.k8s.io", "CustomResourceDefinition", new, old) == []
    old["status"] = {"conditions": [{"type": "Established", "status": "True"}]}
    causes = validate("apiextensions.k8s.io", "CustomResourceDefinition", new, old)
    find(causes, "spec.scope", INVALID, 'Invalid value: "Cluster": field is immutable')
    find(causes, "spec.names.kind", INVALID, "field is immutable")


@pytest.mark.parametrize("kind", ["ConfigMap", "Secret"])
def test_immutable_configmaps_and_secrets(kind: str) -> None:
    group, _, make = FIXTURES[kind]
    old = make()
    old["immutable"] = True
    same = make()
    same["immutable"] = True
    assert validate(group, kind, same, old) == []
    changed = make()
    changed["data"] = {"other": "eQ=="}
    causes = validate(group, kind, changed, old)
    find(causes, "immutable", FORBIDDEN, "field is immutable when `immutable` is set")
    find(causes, "data", FORBIDDEN, "field is immutable when `immutable` is set")


# ---- dispatch, scope and robustness -----------------------------------------------------------


def test_unknown_kinds_get_metadata_checks_only() -> None:
    widget = {"metadata": {"name": "w", "namespace": "ns"}, "spec": {"anything": ["goes"]}}
    assert validate("example.com", "Widget", widget) == []
    find(
        validate("example.com", "Widget", {"metadata": {"name": "W"}}),
        "metadata.name",
        INVALID,
        "RFC 1123 subdomain",
    )
    find(
        validate("example.com", "Widget", {"metadata": {"name": "w"}}, namespaced=True),
        "metadata.namespace",
        REQUIRED,
        "Required value",
    )
    find(
        validate("example.com", "Widget", widget, namespaced=False),
        "metadata.namespace",
        FORBIDDEN,
        "not allowed on this type",
    )
    assert validate("example.com", "Widget", {"metadata": {"name": "w"}}) == []


@pytest.mark.parametrize(
    ("group", "kind", "name", "ok"),
    [
        ("rbac.authorization.k8s.io", "ClusterRole", "system:aggregate-to-view", True),
        ("rbac.authorization.k8s.io", "ClusterRole", "a/b", False),
        ("rbac.authorization.k8s.io", "Role", "Any Name", True),
        ("", "Node", "node-1.example.com", True),
        ("", "Node", "Node_1", False),
        ("", "ConfigMap", "kube-root-ca.crt", True),
    ],
)
def test_name_rules_by_kind(group: str, kind: str, name: str, ok: bool) -> None:
    meta: Obj = {"name": name}
    if kind in ("Role", "ConfigMap"):
        meta["namespace"] = "ns"
    causes = validate(group, kind, {"metadata": meta})
    assert (causes == []) is ok, causes


def test_namespaced_flag_is_ignored_for_built_in_kinds() -> None:
    find(
        validate("", "Namespace", {"metadata": {"name": "a", "namespace": "b"}}, namespaced=True),
        "metadata.namespace",
        FORBIDDEN,
        "not allowed",
    )


@pytest.mark.parametrize(
    "obj",
    [
        {"metadata": {"name": "p", "namespace": "d"}, "spec": "nope"},
        {
            "metadata": {"name": "p", "namespace": "d"},
            "spec": {"containers": [None, 3, {"name": 5, "image": 7}]},
        },
        {"metadata": "nope", "spec": {"containers": [{"name": "a", "image": "b", "ports": "x"}]}},
        {
            "metadata": {
                "name": 1,
                "namespace": 2,
                "labels": ["x"],
                "annotations": 3,
                "finalizers": "f",
            }
        },
    ],
)
def test_wrong_types_become_causes_not_exceptions(obj: Obj) -> None:
    causes = validate("", "Pod", obj)
    assert causes
    assert all(isinstance(c, Cause) and c.field for c in causes)


def test_duplicate_causes_are_reported_once() -> None:
    old, new = pod(), pod()
    new["spec"]["containers"][0]["image"] = ""
    causes = validate("", "Pod", new, old)
    assert len(causes) == len(set(causes))


def test_messages_render_go_like_values() -> None:
    obj = statefulset()
    obj["spec"]["selector"] = {"matchLabels": {"app": "db"}}
    (cause,) = validate("apps", "StatefulSet", obj)
    assert cause == Cause(
        "spec.template.metadata.labels",
        INVALID,
        'Invalid value: map[string]string{"app":"web"}: `selector` does not match template `labels`',
    )
