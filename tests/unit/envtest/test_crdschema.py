"""Table-driven tests for kube_runtime.envtest.server.crdschema (prune / apply_defaults / validate).

Real CRDs from tests/crds (OpenKruise CloneSet and Advanced StatefulSet, cert-manager
Certificate, prometheus-operator ServiceMonitor) are compiled once per module; small handwritten
schemas pin down each upstream rule with a passing and a failing case.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from kube_runtime.envtest.server.crdschema import (
    CompiledSchema,
    apply_defaults,
    compile_schema,
    prune,
    validate,
)
from kube_runtime.envtest.server.validation import Cause

# The public CRDs kept in the repository (tests/crds/SOURCES.md); KUBE_RUNTIME_CRDS overrides.
CRD_DIR = Path(
    os.environ.get("KUBE_RUNTIME_CRDS", Path(__file__).resolve().parents[3] / "tests" / "crds")
)
CRD_FILES = {
    "cloneset": "apps.kruise.io_clonesets.yaml",
    "asts": "apps.kruise.io_statefulsets.yaml",
    "certificate": "cert-manager.io_certificates.yaml",
    "servicemonitor": "monitoring.coreos.com_servicemonitors.yaml",
}
STORAGE_VERSION = {
    "cloneset": "v1beta1",
    "asts": "v1beta1",
    "certificate": "v1",
    "servicemonitor": "v1",
}
_Loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

Obj = dict[str, Any]


@pytest.fixture(scope="module")
def crds() -> dict[str, dict[str, CompiledSchema]]:
    """Every version of every real CRD, compiled once for the module."""
    if not CRD_DIR.is_dir():
        pytest.skip(f"{CRD_DIR} not available")
    out: dict[str, dict[str, CompiledSchema]] = {}
    for name, file in CRD_FILES.items():
        with (CRD_DIR / file).open() as fh:
            doc = yaml.load(fh, Loader=_Loader)
        out[name] = {
            str(v["name"]): compile_schema(v["schema"]["openAPIV3Schema"])
            for v in doc["spec"]["versions"]
        }
    return out


def _schema(crds: dict[str, dict[str, CompiledSchema]], name: str) -> CompiledSchema:
    return crds[name][STORAGE_VERSION[name]]


# ---------------------------------------------------------------------------------------------
# Realistic objects for the real CRDs
# ---------------------------------------------------------------------------------------------

POD_TEMPLATE: Obj = {
    "metadata": {"labels": {"app": "web"}, "annotations": {"a": "b"}},
    "spec": {
        "containers": [
            {
                "name": "nginx",
                "image": "nginx:1.25",
                "ports": [{"containerPort": 80, "protocol": "TCP"}],
                "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}},
                "readinessProbe": {"httpGet": {"path": "/", "port": 80}},
            }
        ],
        "terminationGracePeriodSeconds": 30,
    },
}

CLONESET: Obj = {
    "apiVersion": "apps.kruise.io/v1beta1",
    "kind": "CloneSet",
    "metadata": {"name": "web", "namespace": "default", "labels": {"app": "web"}},
    "spec": {
        "replicas": 5,
        "selector": {
            "matchLabels": {"app": "web"},
            "matchExpressions": [{"key": "tier", "operator": "In", "values": ["frontend"]}],
        },
        "template": POD_TEMPLATE,
        "volumeClaimTemplates": [
            {
                "metadata": {"name": "data"},
                "spec": {
                    "accessModes": ["ReadWriteOnce"],
                    "resources": {"requests": {"storage": "1Gi"}},
                },
            }
        ],
        "updateStrategy": {
            "type": "InPlaceIfPossible",
            "rollingUpdate": {
                "partition": "20%",
                "maxUnavailable": 1,
                "maxSurge": "10%",
                "paused": False,
                "inPlaceUpdateStrategy": {"gracePeriodSeconds": 10},
            },
        },
        "scaleStrategy": {
            "maxUnavailable": "25%",
            "enablePVCReuse": False,
            "podsToDelete": ["web-x"],
        },
        "revisionHistoryLimit": 10,
        "minReadySeconds": 3,
        "lifecycle": {"preDelete": {"finalizersHandler": ["example.com/hook"]}},
    },
    "status": {
        "observedGeneration": 2,
        "replicas": 5,
        "readyReplicas": 5,
        "availableReplicas": 5,
        "updatedReplicas": 5,
        "updatedReadyReplicas": 5,
        "updateRevision": "web-6d4b",
        "currentRevision": "web-6d4b",
        "labelSelector": "app=web",
        "conditions": [
            {
                "type": "FailedScale",
                "status": "False",
                "lastTransitionTime": "2024-05-01T10:00:00Z",
            }
        ],
    },
}

ASTS: Obj = {
    "apiVersion": "apps.kruise.io/v1beta1",
    "kind": "StatefulSet",
    "metadata": {"name": "db", "namespace": "default"},
    "spec": {
        "replicas": 3,
        "serviceName": "db",
        "podManagementPolicy": "Parallel",
        "selector": {"matchLabels": {"app": "db"}},
        "template": POD_TEMPLATE,
        "volumeClaimTemplates": [
            {"metadata": {"name": "data"}, "spec": {"accessModes": ["ReadWriteOnce"]}}
        ],
        "updateStrategy": {
            "type": "RollingUpdate",
            "rollingUpdate": {
                "podUpdatePolicy": "InPlaceIfPossible",
                "partition": 1,
                "maxUnavailable": "50%",
                "minReadySeconds": 5,
                "paused": False,
            },
        },
        "reserveOrdinals": [1, "3-5"],
        "ordinals": {"start": 0},
        "persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Retain", "whenScaled": "Delete"},
        "revisionHistoryLimit": 10,
    },
}

CERTIFICATE: Obj = {
    "apiVersion": "cert-manager.io/v1",
    "kind": "Certificate",
    "metadata": {"name": "example-com", "namespace": "default"},
    "spec": {
        "secretName": "example-com-tls",
        "issuerRef": {"name": "letsencrypt", "kind": "ClusterIssuer", "group": "cert-manager.io"},
        "commonName": "example.com",
        "dnsNames": ["example.com", "www.example.com"],
        "duration": "2160h",
        "renewBefore": "360h",
        "isCA": False,
        "privateKey": {"algorithm": "ECDSA", "size": 256, "rotationPolicy": "Always"},
        "usages": ["server auth", "client auth"],
        "subject": {"organizations": ["Example Inc"], "countries": ["DE"]},
        "secretTemplate": {"labels": {"team": "web"}, "annotations": {"owner": "ops"}},
        "additionalOutputFormats": [{"type": "CombinedPEM"}],
    },
    "status": {
        "conditions": [
            {
                "type": "Ready",
                "status": "True",
                "reason": "Ready",
                "message": "Certificate is up to date and has not expired",
                "lastTransitionTime": "2024-05-01T10:00:00Z",
                "observedGeneration": 1,
            },
            {"type": "Issuing", "status": "False"},
        ],
        "notAfter": "2024-07-30T10:00:00Z",
        "notBefore": "2024-05-01T10:00:00Z",
        "renewalTime": "2024-07-15T10:00:00Z",
        "revision": 1,
    },
}

SERVICEMONITOR: Obj = {
    "apiVersion": "monitoring.coreos.com/v1",
    "kind": "ServiceMonitor",
    "metadata": {"name": "web", "namespace": "monitoring", "labels": {"release": "prom"}},
    "spec": {
        "selector": {"matchLabels": {"app": "web"}},
        "namespaceSelector": {"matchNames": ["default"]},
        "jobLabel": "app",
        "endpoints": [
            {
                "port": "http-metrics",
                "path": "/metrics",
                "interval": "30s",
                "scrapeTimeout": "10s",
                "scheme": "https",
                "targetPort": 8080,
                "honorLabels": True,
                "bearerTokenSecret": {"name": "token", "key": "token"},
                "tlsConfig": {"insecureSkipVerify": False, "serverName": "web.default.svc"},
                "relabelings": [
                    {
                        "action": "replace",
                        "sourceLabels": ["__meta_kubernetes_pod_name"],
                        "targetLabel": "pod",
                    }
                ],
                "metricRelabelings": [
                    {"action": "drop", "regex": "go_.*", "sourceLabels": ["__name__"]}
                ],
            }
        ],
        "sampleLimit": 10000,
        "scrapeProtocols": ["PrometheusProto", "OpenMetricsText1.0.0"],
        "bodySizeLimit": "10MiB",
        "nativeHistogramMinBucketFactor": "1.1",
    },
}

REAL_OBJECTS: list[tuple[str, Obj]] = [
    ("cloneset", CLONESET),
    ("asts", ASTS),
    ("certificate", CERTIFICATE),
    ("servicemonitor", SERVICEMONITOR),
]


def _edit(obj: Obj, fn: Callable[[Obj], object]) -> Obj:
    out = copy.deepcopy(obj)
    fn(out)
    return out


def _pairs(causes: list[Cause]) -> list[tuple[str, str]]:
    return [(c.field, c.reason) for c in causes]


# ---------------------------------------------------------------------------------------------
# Real CRDs
# ---------------------------------------------------------------------------------------------


def test_every_version_of_every_real_crd_compiles(
    crds: dict[str, dict[str, CompiledSchema]],
) -> None:
    assert {k: sorted(v) for k, v in crds.items()} == {
        "cloneset": ["v1alpha1", "v1beta1"],
        "asts": ["v1alpha1", "v1beta1"],
        "certificate": ["v1"],
        "servicemonitor": ["v1"],
    }
    assert all(not s.preserves_everything for v in crds.values() for s in v.values())


@pytest.mark.parametrize(("crd", "obj"), REAL_OBJECTS, ids=[n for n, _ in REAL_OBJECTS])
def test_real_valid_object_passes_and_survives_prune_and_defaults(
    crds: dict[str, dict[str, CompiledSchema]], crd: str, obj: Obj
) -> None:
    schema = _schema(crds, crd)
    work = copy.deepcopy(obj)
    assert validate(work, schema) == []
    assert work == obj  # validate never mutates
    assert prune(work, schema) is work
    assert work == obj
    assert apply_defaults(work, schema) is work
    assert validate(work, schema) == []


@pytest.mark.parametrize(
    ("crd", "edit", "check"),
    [
        pytest.param(
            "cloneset",
            lambda o: o.update(extra=1),
            lambda o: "extra" not in o,
            id="root-unknown",
        ),
        pytest.param(
            "cloneset",
            lambda o: o["spec"].update(bogus={"a": 1}),
            lambda o: "bogus" not in o["spec"],
            id="spec-unknown",
        ),
        pytest.param(
            "cloneset",
            lambda o: o["spec"]["updateStrategy"]["rollingUpdate"].update(bogus=True),
            lambda o: "bogus" not in o["spec"]["updateStrategy"]["rollingUpdate"],
            id="nested-unknown",
        ),
        pytest.param(
            "cloneset",
            lambda o: o["status"]["conditions"][0].update(bogus="x"),
            lambda o: "bogus" not in o["status"]["conditions"][0],
            id="array-item-unknown",
        ),
        pytest.param(
            "certificate",
            lambda o: o["spec"]["additionalOutputFormats"][0].update(bogus="x"),
            lambda o: o["spec"]["additionalOutputFormats"] == [{"type": "CombinedPEM"}],
            id="cert-array-item-unknown",
        ),
        pytest.param(
            "servicemonitor",
            lambda o: o["spec"]["endpoints"][0]["relabelings"][0].update(bogus="x"),
            lambda o: "bogus" not in o["spec"]["endpoints"][0]["relabelings"][0],
            id="deep-array-unknown",
        ),
        pytest.param(
            "servicemonitor",
            lambda o: o["spec"]["selector"]["matchLabels"].update({"any/key": "v"}),
            lambda o: o["spec"]["selector"]["matchLabels"]["any/key"] == "v",
            id="additionalProperties-keys-kept",
        ),
        pytest.param(
            "cloneset",
            lambda o: o["spec"].update(replicas=None),
            lambda o: "replicas" not in o["spec"],
            id="non-nullable-null-dropped",
        ),
    ],
)
def test_real_unknown_fields_pruned(
    crds: dict[str, dict[str, CompiledSchema]],
    crd: str,
    edit: Callable[[Obj], object],
    check: Callable[[Obj], bool],
) -> None:
    base = dict(REAL_OBJECTS)[crd]
    obj = prune(_edit(base, edit), _schema(crds, crd))
    assert check(obj)
    assert validate(obj, _schema(crds, crd)) == []


def test_real_preserve_unknown_fields_and_root_metadata_kept(
    crds: dict[str, dict[str, CompiledSchema]],
) -> None:
    schema = _schema(crds, "cloneset")

    def edit(o: Obj) -> None:
        o["metadata"]["notAMetaField"] = {"kept": True}
        o["spec"]["template"]["spec"]["anything"] = {"deeply": [{"nested": 1}]}
        o["spec"]["template"]["metadata"]["unknown"] = "x"
        o["spec"]["volumeClaimTemplates"][0]["whatever"] = [1, 2]

    obj = _edit(CLONESET, edit)
    expected = copy.deepcopy(obj)
    assert prune(obj, schema) == expected
    assert validate(obj, schema) == []


@pytest.mark.parametrize(
    ("crd", "edit", "check"),
    [
        pytest.param(
            "cloneset",
            lambda o: o["spec"]["scaleStrategy"].pop("enablePVCReuse"),
            lambda o: o["spec"]["scaleStrategy"]["enablePVCReuse"] is False,
            id="cloneset-enablePVCReuse",
        ),
        pytest.param(
            "cloneset",
            lambda o: o["spec"].pop("scaleStrategy"),
            lambda o: "scaleStrategy" not in o["spec"],
            id="cloneset-absent-parent-not-created",
        ),
        pytest.param(
            "servicemonitor",
            lambda o: o["spec"]["endpoints"][0]["relabelings"][0].pop("action"),
            lambda o: o["spec"]["endpoints"][0]["relabelings"][0]["action"] == "replace",
            id="servicemonitor-relabel-action",
        ),
        pytest.param(
            "servicemonitor",
            lambda o: o["spec"]["endpoints"][0]["metricRelabelings"].append({}),
            lambda o: o["spec"]["endpoints"][0]["metricRelabelings"][1] == {"action": "replace"},
            id="servicemonitor-new-array-item",
        ),
        pytest.param(
            "servicemonitor",
            lambda o: o["spec"]["endpoints"][0]["bearerTokenSecret"].pop("name"),
            lambda o: (
                o["spec"]["endpoints"][0]["bearerTokenSecret"] == {"key": "token", "name": ""}
            ),
            id="servicemonitor-secret-name-empty",
        ),
        pytest.param(
            "servicemonitor",
            lambda o: o["spec"]["endpoints"][0]["relabelings"][0].update(action=None),
            lambda o: o["spec"]["endpoints"][0]["relabelings"][0]["action"] == "replace",
            id="servicemonitor-null-becomes-default",
        ),
        pytest.param(
            "servicemonitor",
            lambda o: o["spec"]["endpoints"][0]["relabelings"][0].update(action="keep"),
            lambda o: o["spec"]["endpoints"][0]["relabelings"][0]["action"] == "keep",
            id="servicemonitor-explicit-value-kept",
        ),
    ],
)
def test_real_defaults(
    crds: dict[str, dict[str, CompiledSchema]],
    crd: str,
    edit: Callable[[Obj], object],
    check: Callable[[Obj], bool],
) -> None:
    schema = _schema(crds, crd)
    obj = apply_defaults(prune(_edit(dict(REAL_OBJECTS)[crd], edit), schema), schema)
    assert check(obj)
    assert validate(obj, schema) == []


@pytest.mark.parametrize(
    ("crd", "edit", "expected"),
    [
        pytest.param(
            "cloneset",
            lambda o: o["spec"].update(replicas="three"),
            [
                Cause(
                    "spec.replicas",
                    "FieldValueTypeInvalid",
                    'Invalid value: "string": spec.replicas in body must be of type integer: "string"',
                )
            ],
            id="cloneset-replicas-string",
        ),
        pytest.param(
            "cloneset",
            lambda o: o["spec"].update(replicas=1.5),
            [
                Cause(
                    "spec.replicas",
                    "FieldValueTypeInvalid",
                    'Invalid value: "float64": spec.replicas in body must be of type int32: "float64"',
                )
            ],
            id="cloneset-replicas-fraction",
        ),
        pytest.param(
            "cloneset",
            lambda o: o["spec"].pop("selector"),
            [Cause("spec.selector", "FieldValueRequired", "Required value")],
            id="cloneset-selector-required",
        ),
        pytest.param(
            "cloneset",
            lambda o: o["status"].pop("readyReplicas"),
            [Cause("status.readyReplicas", "FieldValueRequired", "Required value")],
            id="cloneset-status-required",
        ),
        pytest.param(
            "cloneset",
            lambda o: o["spec"]["scaleStrategy"].update(maxUnavailable=True),
            [
                Cause(
                    "spec.scaleStrategy.maxUnavailable",
                    "FieldValueTypeInvalid",
                    'Invalid value: "boolean": spec.scaleStrategy.maxUnavailable in body must be '
                    'of type integer,string: "boolean"',
                ),
                Cause(
                    "spec.scaleStrategy.maxUnavailable",
                    "FieldValueInvalid",
                    'Invalid value: "": "spec.scaleStrategy.maxUnavailable" must validate at least '
                    "one schema (anyOf)",
                ),
                Cause(
                    "spec.scaleStrategy.maxUnavailable",
                    "FieldValueTypeInvalid",
                    'Invalid value: "boolean": spec.scaleStrategy.maxUnavailable in body must be '
                    'of type integer: "boolean"',
                ),
            ],
            id="cloneset-int-or-string-anyOf",
        ),
        pytest.param(
            "asts",
            lambda o: o["spec"]["reserveOrdinals"].append(2.5),
            [
                ("spec.reserveOrdinals[2]", "FieldValueTypeInvalid"),
                ("spec.reserveOrdinals[2]", "FieldValueInvalid"),
                ("spec.reserveOrdinals[2]", "FieldValueTypeInvalid"),
            ],
            id="asts-int-or-string-array-item",
        ),
        pytest.param(
            "certificate",
            lambda o: o["spec"]["privateKey"].update(algorithm="DSA"),
            [
                Cause(
                    "spec.privateKey.algorithm",
                    "FieldValueNotSupported",
                    'Unsupported value: "DSA": supported values: "RSA", "ECDSA", "Ed25519"',
                )
            ],
            id="certificate-enum",
        ),
        pytest.param(
            "certificate",
            lambda o: o["status"].update(notAfter="next tuesday"),
            [
                Cause(
                    "status.notAfter",
                    "FieldValueTypeInvalid",
                    'Invalid value: "next tuesday": status.notAfter in body must be of type '
                    'date-time: "next tuesday"',
                )
            ],
            id="certificate-date-time",
        ),
        pytest.param(
            "certificate",
            lambda o: o["spec"]["issuerRef"].pop("name"),
            [Cause("spec.issuerRef.name", "FieldValueRequired", "Required value")],
            id="certificate-nested-required",
        ),
        pytest.param(
            "certificate",
            lambda o: o["status"]["conditions"].append({"type": "Ready", "status": "False"}),
            [
                Cause(
                    "status.conditions[2]",
                    "FieldValueDuplicate",
                    'Duplicate value: {"type":"Ready"}',
                )
            ],
            id="certificate-list-map-duplicate",
        ),
        pytest.param(
            "servicemonitor",
            lambda o: o["spec"]["endpoints"][0].update(interval="30 seconds"),
            [
                Cause(
                    "spec.endpoints[0].interval",
                    "FieldValueInvalid",
                    'Invalid value: "30 seconds": spec.endpoints[0].interval in body should match '
                    "'^(0|(([0-9]+)y)?(([0-9]+)w)?(([0-9]+)d)?(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?"
                    "(([0-9]+)ms)?)$'",
                )
            ],
            id="servicemonitor-pattern",
        ),
        pytest.param(
            "servicemonitor",
            lambda o: o["spec"].update(sampleLimit=-1),
            [
                Cause(
                    "spec.sampleLimit",
                    "FieldValueInvalid",
                    "Invalid value: -1: spec.sampleLimit in body should be greater than or equal to 0",
                )
            ],
            id="servicemonitor-minimum",
        ),
        pytest.param(
            "servicemonitor",
            lambda o: o["spec"].update(scrapeClass=""),
            [
                Cause(
                    "spec.scrapeClass",
                    "FieldValueInvalid",
                    'Invalid value: "": spec.scrapeClass in body should be at least 1 chars long',
                )
            ],
            id="servicemonitor-minLength",
        ),
        pytest.param(
            "servicemonitor",
            lambda o: o["spec"]["scrapeProtocols"].append("PrometheusProto"),
            [
                Cause(
                    "spec.scrapeProtocols[2]",
                    "FieldValueDuplicate",
                    'Duplicate value: "PrometheusProto"',
                )
            ],
            id="servicemonitor-list-set-duplicate",
        ),
        pytest.param(
            "servicemonitor",
            lambda o: o.update(
                status={
                    "bindings": [
                        {
                            "group": "monitoring.coreos.com",
                            "resource": "prometheuses",
                            "name": "k8s",
                            "namespace": "monitoring",
                        }
                    ]
                    * 2
                }
            ),
            [
                Cause(
                    "status.bindings[1]",
                    "FieldValueDuplicate",
                    'Duplicate value: {"group":"monitoring.coreos.com","name":"k8s",'
                    '"namespace":"monitoring","resource":"prometheuses"}',
                )
            ],
            id="servicemonitor-list-map-multi-key-duplicate",
        ),
        pytest.param(
            "servicemonitor",
            lambda o: o["spec"]["endpoints"][0]["relabelings"][0].update(action="explode"),
            [("spec.endpoints[0].relabelings[0].action", "FieldValueNotSupported")],
            id="servicemonitor-enum-in-array",
        ),
    ],
)
def test_real_invalid_objects(
    crds: dict[str, dict[str, CompiledSchema]],
    crd: str,
    edit: Callable[[Obj], object],
    expected: list[Cause] | list[tuple[str, str]],
) -> None:
    causes = validate(_edit(dict(REAL_OBJECTS)[crd], edit), _schema(crds, crd))
    if expected and isinstance(expected[0], Cause):
        assert causes == expected
    else:
        assert _pairs(causes) == expected


# ---------------------------------------------------------------------------------------------
# Handwritten schemas: pruning
# ---------------------------------------------------------------------------------------------


def _root(**props: Any) -> dict[str, Any]:
    return {"type": "object", "properties": props}


OBJ = {"type": "object"}
STR = {"type": "string"}
INT = {"type": "integer"}

PRUNE_CASES: list[tuple[str, dict[str, Any] | None, Obj, Obj]] = [
    (
        "unknown-dropped-recursively",
        _root(spec={"type": "object", "properties": {"a": STR, "o": _root(b=INT)}}),
        {"spec": {"a": "x", "z": 1, "o": {"b": 1, "c": 2}}, "other": {}},
        {"spec": {"a": "x", "o": {"b": 1}}},
    ),
    (
        "root-typemeta-and-metadata-kept-as-is",
        _root(spec=OBJ),
        {
            "apiVersion": "g/v1",
            "kind": "K",
            "metadata": {"name": "n", "weird": {"x": 1}},
            "spec": {"x": 1},
        },
        {
            "apiVersion": "g/v1",
            "kind": "K",
            "metadata": {"name": "n", "weird": {"x": 1}},
            "spec": {},
        },
    ),
    (
        "preserve-unknown-keeps-unknown-but-prunes-specified-children",
        _root(
            spec={
                "type": "object",
                "x-kubernetes-preserve-unknown-fields": True,
                "properties": {"known": _root(a=STR)},
            }
        ),
        {"spec": {"free": {"deep": [1, {"x": 2}]}, "known": {"a": "y", "b": "dropped"}}},
        {"spec": {"free": {"deep": [1, {"x": 2}]}, "known": {"a": "y"}}},
    ),
    (
        "preserve-unknown-at-root",
        {
            "type": "object",
            "x-kubernetes-preserve-unknown-fields": True,
            "properties": {"spec": _root(a=STR)},
        },
        {"anything": 1, "spec": {"a": "x", "b": 2}},
        {"anything": 1, "spec": {"a": "x"}},
    ),
    (
        "preserve-unknown-reaches-array-item-objects",
        _root(
            list={
                "type": "array",
                "x-kubernetes-preserve-unknown-fields": True,
                "items": _root(a=STR),
            }
        ),
        {"list": [{"a": "x", "b": 1}]},
        {"list": [{"a": "x", "b": 1}]},
    ),
    (
        "array-items-pruned",
        _root(list={"type": "array", "items": _root(a=STR)}),
        {"list": [{"a": "x", "b": 1}, {"c": 2}]},
        {"list": [{"a": "x"}, {}]},
    ),
    (
        "additionalProperties-schema-prunes-every-value",
        _root(m={"type": "object", "additionalProperties": _root(a=STR)}),
        {"m": {"k1": {"a": "x", "b": 1}, "k2": {"c": 1}}},
        {"m": {"k1": {"a": "x"}, "k2": {}}},
    ),
    (
        "additionalProperties-true-keeps-keys-but-not-nested-fields",
        _root(m={"type": "object", "additionalProperties": True}),
        {"m": {"k": "v", "o": {"x": 1}}},
        {"m": {"k": "v", "o": {}}},
    ),
    (
        "embedded-resource-keeps-typemeta-and-objectmeta",
        _root(
            tpl={
                "type": "object",
                "x-kubernetes-embedded-resource": True,
                "properties": {"spec": _root(a=STR)},
            }
        ),
        {
            "tpl": {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": "p", "labels": {"a": "b"}, "notMeta": 1},
                "spec": {"a": "x", "b": 1},
                "other": 1,
            }
        },
        {
            "tpl": {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": "p", "labels": {"a": "b"}},
                "spec": {"a": "x"},
            }
        },
    ),
    (
        "nulls-non-nullable-dropped-nullable-and-defaulted-kept",
        _root(
            a=STR,
            b={"type": "string", "nullable": True},
            c={"type": "string", "default": "d"},
            m={"type": "object", "additionalProperties": STR},
        ),
        {"a": None, "b": None, "c": None, "m": {"k": None}, "unknown": None},
        {"b": None, "c": None, "m": {}},
    ),
    (
        "no-schema-preserves-everything",
        None,
        {"anything": {"goes": [None, 1]}, "spec": None},
        {"anything": {"goes": [None, 1]}, "spec": None},
    ),
    (
        "empty-schema-keeps-only-typemeta-and-metadata",
        {},
        {"apiVersion": "v1", "kind": "K", "metadata": {}, "spec": {"x": 1}},
        {"apiVersion": "v1", "kind": "K", "metadata": {}},
    ),
]


@pytest.mark.parametrize(
    ("schema", "obj", "expected"),
    [pytest.param(s, o, e, id=i) for i, s, o, e in PRUNE_CASES],
)
def test_prune(schema: dict[str, Any] | None, obj: Obj, expected: Obj) -> None:
    work = copy.deepcopy(obj)
    assert prune(work, compile_schema(schema)) is work
    assert work == expected


# ---------------------------------------------------------------------------------------------
# Handwritten schemas: defaulting
# ---------------------------------------------------------------------------------------------

DEFAULT_CASES: list[tuple[str, dict[str, Any] | None, Obj, Obj]] = [
    (
        "absent-field-defaulted",
        _root(spec=_root(n={"type": "integer", "default": 3}, s={"type": "string"})),
        {"spec": {}},
        {"spec": {"n": 3}},
    ),
    (
        "present-field-untouched",
        _root(spec=_root(n={"type": "integer", "default": 3})),
        {"spec": {"n": 0}},
        {"spec": {"n": 0}},
    ),
    (
        "null-non-nullable-defaulted",
        _root(spec=_root(n={"type": "integer", "default": 3})),
        {"spec": {"n": None}},
        {"spec": {"n": 3}},
    ),
    (
        "null-nullable-kept",
        _root(spec=_root(n={"type": "integer", "default": 3, "nullable": True})),
        {"spec": {"n": None}},
        {"spec": {"n": None}},
    ),
    (
        "absent-parent-not-created",
        _root(spec=_root(n={"type": "integer", "default": 3})),
        {},
        {},
    ),
    (
        "default-object-then-defaults-inside-it",
        _root(
            spec={
                "type": "object",
                "default": {},
                "properties": {"a": {"type": "string", "default": "x"}},
            }
        ),
        {},
        {"spec": {"a": "x"}},
    ),
    (
        "array-items",
        _root(
            l={
                "type": "array",
                "items": {
                    "type": "object",
                    "default": {"k": "from-items"},
                    "properties": {"k": STR, "d": {"type": "boolean", "default": True}},
                },
            }
        ),
        {"l": [{"k": "a"}, None, {"d": False}]},
        {"l": [{"k": "a", "d": True}, {"k": "from-items", "d": True}, {"d": False}]},
    ),
    (
        "additionalProperties-values",
        _root(
            m={
                "type": "object",
                "additionalProperties": {
                    "type": "object",
                    "default": {},
                    "properties": {"p": {"type": "integer", "default": 80}},
                },
            }
        ),
        {"m": {"a": {}, "b": None, "c": {"p": 1}}},
        {"m": {"a": {"p": 80}, "b": {"p": 80}, "c": {"p": 1}}},
    ),
    (
        "inside-preserve-unknown",
        _root(
            spec={
                "type": "object",
                "x-kubernetes-preserve-unknown-fields": True,
                "properties": {"a": {"type": "string", "default": "x"}},
            }
        ),
        {"spec": {"other": 1}},
        {"spec": {"other": 1, "a": "x"}},
    ),
    ("no-schema", None, {"spec": {}}, {"spec": {}}),
]


@pytest.mark.parametrize(
    ("schema", "obj", "expected"),
    [pytest.param(s, o, e, id=i) for i, s, o, e in DEFAULT_CASES],
)
def test_apply_defaults(schema: dict[str, Any] | None, obj: Obj, expected: Obj) -> None:
    work = copy.deepcopy(obj)
    assert apply_defaults(work, compile_schema(schema)) is work
    assert work == expected


def test_defaults_are_deep_copies() -> None:
    raw = _root(spec=_root(labels={"type": "object", "default": {"a": ["x"]}}))
    schema = compile_schema(raw)
    one = apply_defaults({"spec": {}}, schema)
    two = apply_defaults({"spec": {}}, schema)
    one["spec"]["labels"]["a"].append("mutated")
    raw["properties"]["spec"]["properties"]["labels"]["default"]["a"].append("schema edited")
    assert two["spec"]["labels"] == {"a": ["x"]}
    assert apply_defaults({"spec": {}}, schema)["spec"]["labels"] == {"a": ["x"]}


# ---------------------------------------------------------------------------------------------
# Handwritten schemas: validation, one rule at a time (field "x" under "spec")
# ---------------------------------------------------------------------------------------------

_MISSING = object()


def _x(prop: dict[str, Any], **spec: Any) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {"spec": {"type": "object", "properties": {"x": prop}, **spec}},
    }


Expected = list[tuple[str, str]] | list[Cause]

VALIDATE_CASES: list[tuple[str, dict[str, Any], Any, Expected]] = [
    # --- types
    ("object-ok", _x(OBJ), {"a": 1}, []),
    ("object-bad", _x(OBJ), [1], [("spec.x", "FieldValueTypeInvalid")]),
    ("array-ok", _x({"type": "array"}), [1, "a"], []),
    (
        "array-bad",
        _x({"type": "array"}),
        {"a": 1},
        [
            Cause(
                "spec.x",
                "FieldValueTypeInvalid",
                'Invalid value: "object": spec.x in body must be of type array: "object"',
            )
        ],
    ),
    ("string-ok", _x(STR), "s", []),
    ("string-bad", _x(STR), 1, [("spec.x", "FieldValueTypeInvalid")]),
    ("boolean-ok", _x({"type": "boolean"}), False, []),
    ("boolean-bad", _x({"type": "boolean"}), "true", [("spec.x", "FieldValueTypeInvalid")]),
    ("integer-ok", _x(INT), 7, []),
    ("integer-accepts-integral-float", _x(INT), 2.0, []),
    (
        "integer-rejects-fraction",
        _x(INT),
        2.5,
        [
            Cause(
                "spec.x",
                "FieldValueTypeInvalid",
                'Invalid value: "number": spec.x in body must be of type integer: "number"',
            )
        ],
    ),
    ("integer-rejects-bool", _x(INT), True, [("spec.x", "FieldValueTypeInvalid")]),
    ("number-accepts-int", _x({"type": "number"}), 3, []),
    ("number-bad", _x({"type": "number"}), "3", [("spec.x", "FieldValueTypeInvalid")]),
    ("int-or-string-int", _x({"x-kubernetes-int-or-string": True}), 3, []),
    ("int-or-string-string", _x({"x-kubernetes-int-or-string": True}), "30%", []),
    (
        "int-or-string-bad",
        _x({"x-kubernetes-int-or-string": True}),
        [1],
        [
            Cause(
                "spec.x",
                "FieldValueTypeInvalid",
                'Invalid value: "array": spec.x in body must be of type integer,string: "array"',
            )
        ],
    ),
    (
        "untyped-accepts-anything",
        _x({"x-kubernetes-preserve-unknown-fields": True}),
        [{"a": 1}],
        [],
    ),
    # --- nullable
    ("nullable-null-ok", _x({"type": "string", "nullable": True}), None, []),
    (
        "non-nullable-null",
        _x(STR),
        None,
        [
            Cause(
                "spec.x",
                "FieldValueTypeInvalid",
                'Invalid value: "null": spec.x in body must be of type string: "null"',
            )
        ],
    ),
    # --- required
    ("required-present", _x(STR, required=["x"]), "v", []),
    (
        "required-missing",
        _x(STR, required=["x"]),
        _MISSING,
        [Cause("spec.x", "FieldValueRequired", "Required value")],
    ),
    # --- enum
    ("enum-ok", _x({"type": "string", "enum": ["a", "b"]}), "b", []),
    (
        "enum-bad",
        _x({"type": "string", "enum": ["a", "b"]}),
        "x",
        [
            Cause(
                "spec.x",
                "FieldValueNotSupported",
                'Unsupported value: "x": supported values: "a", "b"',
            )
        ],
    ),
    ("enum-int-ok", _x({"type": "integer", "enum": [1, 2]}), 2, []),
    (
        "enum-int-bad",
        _x({"type": "integer", "enum": [1, 2]}),
        3,
        [
            Cause(
                "spec.x",
                "FieldValueNotSupported",
                'Unsupported value: 3: supported values: "1", "2"',
            )
        ],
    ),
    ("enum-bool-is-not-int", _x({"enum": [1]}), True, [("spec.x", "FieldValueNotSupported")]),
    # --- numeric bounds
    ("minimum-ok", _x({"type": "integer", "minimum": 1}), 1, []),
    (
        "minimum-bad",
        _x({"type": "integer", "minimum": 1}),
        0,
        [
            Cause(
                "spec.x",
                "FieldValueInvalid",
                "Invalid value: 0: spec.x in body should be greater than or equal to 1",
            )
        ],
    ),
    ("exclusiveMinimum-ok", _x({"type": "integer", "minimum": 1, "exclusiveMinimum": True}), 2, []),
    (
        "exclusiveMinimum-bad",
        _x({"type": "integer", "minimum": 1, "exclusiveMinimum": True}),
        1,
        [
            Cause(
                "spec.x",
                "FieldValueInvalid",
                "Invalid value: 1: spec.x in body should be greater than 1",
            )
        ],
    ),
    ("maximum-ok", _x({"type": "number", "maximum": 1.5}), 1.5, []),
    (
        "maximum-bad",
        _x({"type": "number", "maximum": 1.5}),
        1.75,
        [
            Cause(
                "spec.x",
                "FieldValueInvalid",
                "Invalid value: 1.75: spec.x in body should be less than or equal to 1.5",
            )
        ],
    ),
    (
        "exclusiveMaximum-ok",
        _x({"type": "integer", "maximum": 10, "exclusiveMaximum": True}),
        9,
        [],
    ),
    (
        "exclusiveMaximum-bad",
        _x({"type": "integer", "maximum": 10, "exclusiveMaximum": True}),
        10,
        [
            Cause(
                "spec.x",
                "FieldValueInvalid",
                "Invalid value: 10: spec.x in body should be less than 10",
            )
        ],
    ),
    (
        "maximum-go-float-formatting",
        _x({"type": "number", "maximum": 1000000.0}),
        2e6,
        [
            Cause(
                "spec.x",
                "FieldValueInvalid",
                "Invalid value: 2e+06: spec.x in body should be less than or equal to 1e+06",
            )
        ],
    ),
    ("multipleOf-ok", _x({"type": "integer", "multipleOf": 5}), 15, []),
    (
        "multipleOf-bad",
        _x({"type": "integer", "multipleOf": 5}),
        7,
        [
            Cause(
                "spec.x",
                "FieldValueInvalid",
                "Invalid value: 7: spec.x in body should be a multiple of 5",
            )
        ],
    ),
    ("multipleOf-float-ok", _x({"type": "number", "multipleOf": 0.1}), 0.3, []),
    (
        "multipleOf-float-bad",
        _x({"type": "number", "multipleOf": 0.25}),
        0.3,
        [("spec.x", "FieldValueInvalid")],
    ),
    # --- strings
    ("maxLength-ok", _x({"type": "string", "maxLength": 3}), "abc", []),
    (
        "maxLength-bad",
        _x({"type": "string", "maxLength": 3}),
        "abcd",
        [Cause("spec.x", "FieldValueTooLong", "Too long: may not be longer than 3")],
    ),
    ("maxLength-counts-characters", _x({"type": "string", "maxLength": 2}), "\u00e9\u00e9", []),
    ("minLength-ok", _x({"type": "string", "minLength": 2}), "ab", []),
    (
        "minLength-bad",
        _x({"type": "string", "minLength": 2}),
        "a",
        [
            Cause(
                "spec.x",
                "FieldValueInvalid",
                'Invalid value: "a": spec.x in body should be at least 2 chars long',
            )
        ],
    ),
    ("pattern-ok", _x({"type": "string", "pattern": "^[a-z]+$"}), "abc", []),
    ("pattern-unanchored-search", _x({"type": "string", "pattern": "[0-9]"}), "a1b", []),
    (
        "pattern-bad",
        _x({"type": "string", "pattern": "^[a-z]+$"}),
        "aB",
        [
            Cause(
                "spec.x",
                "FieldValueInvalid",
                "Invalid value: \"aB\": spec.x in body should match '^[a-z]+$'",
            )
        ],
    ),
    (
        "pattern-dollar-is-end-of-text",
        _x({"type": "string", "pattern": "^[a-z]+$"}),
        "abc\n",
        [("spec.x", "FieldValueInvalid")],
    ),
    ("pattern-posix-class", _x({"type": "string", "pattern": "^[[:alpha:]]+$"}), "abc", []),
    (
        "pattern-ascii-digits",
        _x({"type": "string", "pattern": r"^\d+$"}),
        "\u0663",
        [("spec.x", "FieldValueInvalid")],
    ),
    # --- formats
    (
        "int32-type-mismatch-names-format",
        _x({"type": "integer", "format": "int32"}),
        1.5,
        [
            Cause(
                "spec.x",
                "FieldValueTypeInvalid",
                'Invalid value: "float64": spec.x in body must be of type int32: "float64"',
            )
        ],
    ),
    ("int32-not-range-checked", _x({"type": "integer", "format": "int32"}), 2**40, []),
    (
        "date-time-ok",
        _x({"type": "string", "format": "date-time"}),
        "2024-02-29T23:59:59.123+01:00",
        [],
    ),
    (
        "date-time-bad",
        _x({"type": "string", "format": "date-time"}),
        "2023-02-29T10:00:00Z",
        [
            Cause(
                "spec.x",
                "FieldValueTypeInvalid",
                'Invalid value: "2023-02-29T10:00:00Z": spec.x in body must be of type date-time: '
                '"2023-02-29T10:00:00Z"',
            )
        ],
    ),
    ("date-ok", _x({"type": "string", "format": "date"}), "2024-01-31", []),
    (
        "date-bad",
        _x({"type": "string", "format": "date"}),
        "2024-1-31",
        [("spec.x", "FieldValueTypeInvalid")],
    ),
    ("byte-ok", _x({"type": "string", "format": "byte"}), "aGVsbG8=", []),
    (
        "byte-bad",
        _x({"type": "string", "format": "byte"}),
        "hello!",
        [("spec.x", "FieldValueTypeInvalid")],
    ),
    (
        "uuid-ok",
        _x({"type": "string", "format": "uuid"}),
        "123E4567-e89b-12d3-a456-426614174000",
        [],
    ),
    (
        "uuid-bad",
        _x({"type": "string", "format": "uuid"}),
        "1234",
        [("spec.x", "FieldValueTypeInvalid")],
    ),
    ("ipv4-ok", _x({"type": "string", "format": "ipv4"}), "10.0.0.1", []),
    (
        "ipv4-bad",
        _x({"type": "string", "format": "ipv4"}),
        "10.0.0.256",
        [("spec.x", "FieldValueTypeInvalid")],
    ),
    ("ipv6-ok", _x({"type": "string", "format": "ipv6"}), "fe80::1", []),
    (
        "ipv6-bad",
        _x({"type": "string", "format": "ipv6"}),
        "10.0.0.1",
        [("spec.x", "FieldValueTypeInvalid")],
    ),
    ("cidr-ok", _x({"type": "string", "format": "cidr"}), "10.0.0.1/8", []),
    (
        "cidr-bad",
        _x({"type": "string", "format": "cidr"}),
        "10.0.0.0",
        [("spec.x", "FieldValueTypeInvalid")],
    ),
    ("duration-ok", _x({"type": "string", "format": "duration"}), "1h30m", []),
    ("duration-scala-ok", _x({"type": "string", "format": "duration"}), "3 days", []),
    (
        "duration-bad",
        _x({"type": "string", "format": "duration"}),
        "forever",
        [("spec.x", "FieldValueTypeInvalid")],
    ),
    ("quantity-ok", _x({"type": "string", "format": "quantity"}), "500Mi", []),
    (
        "quantity-bad",
        _x({"type": "string", "format": "quantity"}),
        "5 MB",
        [("spec.x", "FieldValueTypeInvalid")],
    ),
    ("hostname-ok", _x({"type": "string", "format": "hostname"}), "api.example.com", []),
    (
        "hostname-bad",
        _x({"type": "string", "format": "hostname"}),
        "-bad-",
        [("spec.x", "FieldValueTypeInvalid")],
    ),
    ("email-ok", _x({"type": "string", "format": "email"}), "Ops <ops@example.com>", []),
    (
        "email-bad",
        _x({"type": "string", "format": "email"}),
        "ops.example.com",
        [("spec.x", "FieldValueTypeInvalid")],
    ),
    ("uri-ok", _x({"type": "string", "format": "uri"}), "https://example.com/a?b=c", []),
    (
        "uri-bad",
        _x({"type": "string", "format": "uri"}),
        "example.com",
        [("spec.x", "FieldValueTypeInvalid")],
    ),
    ("mac-ok", _x({"type": "string", "format": "mac"}), "00:1a:2B:3c:4d:5e", []),
    (
        "mac-bad",
        _x({"type": "string", "format": "mac"}),
        "00:1a:2B",
        [("spec.x", "FieldValueTypeInvalid")],
    ),
    ("k8s-short-name-ok", _x({"type": "string", "format": "k8s-short-name"}), "my-name", []),
    (
        "k8s-short-name-bad",
        _x({"type": "string", "format": "k8s-short-name"}),
        "My_Name",
        [("spec.x", "FieldValueTypeInvalid")],
    ),
    # kube-openapi's type check returns early for a list when a string schema has a format
    (
        "formatted-string-lets-arrays-through",
        _x({"type": "string", "format": "date-time"}),
        [1],
        [],
    ),
    (
        "enum-never-accepts-null",
        _x({"type": "string", "nullable": True, "enum": ["a"]}),
        None,
        [
            Cause(
                "spec.x", "FieldValueNotSupported", 'Unsupported value: null: supported values: "a"'
            )
        ],
    ),
    ("unknown-format-ignored", _x({"type": "string", "format": "no-such-format"}), "anything", []),
    ("int32-on-string-ignored", _x({"type": "string", "format": "int32"}), "not a number", []),
    # --- arrays
    ("minItems-ok", _x({"type": "array", "minItems": 1}), [1], []),
    (
        "minItems-bad",
        _x({"type": "array", "minItems": 2}),
        [1],
        [
            Cause(
                "spec.x",
                "FieldValueInvalid",
                "Invalid value: 1: spec.x in body should have at least 2 items",
            )
        ],
    ),
    ("maxItems-ok", _x({"type": "array", "maxItems": 2}), [1, 2], []),
    (
        "maxItems-bad",
        _x({"type": "array", "maxItems": 2}),
        [1, 2, 3],
        [Cause("spec.x", "FieldValueTooMany", "Too many: 3: must have at most 2 items")],
    ),
    ("uniqueItems-ok", _x({"type": "array", "uniqueItems": True}), [1, 1.5, "1", True], []),
    (
        "uniqueItems-bad",
        _x({"type": "array", "uniqueItems": True}),
        [{"a": 1}, {"a": 1}],
        [
            Cause(
                "spec.x",
                "FieldValueInvalid",
                'Invalid value: "": spec.x in body shouldn\'t contain duplicates',
            )
        ],
    ),
    (
        "items-path",
        _x({"type": "array", "items": _root(n=INT)}),
        [{"n": 1}, {"n": "2"}],
        [("spec.x[1].n", "FieldValueTypeInvalid")],
    ),
    # --- objects
    ("minProperties-ok", _x({"type": "object", "minProperties": 1}), {"a": 1}, []),
    (
        "minProperties-bad",
        _x({"type": "object", "minProperties": 2}),
        {"a": 1},
        [
            Cause(
                "spec.x",
                "FieldValueInvalid",
                "Invalid value: 1: spec.x in body should have at least 2 properties",
            )
        ],
    ),
    ("maxProperties-ok", _x({"type": "object", "maxProperties": 1}), {"a": 1}, []),
    (
        "maxProperties-bad",
        _x({"type": "object", "maxProperties": 1}),
        {"a": 1, "b": 2},
        [Cause("spec.x", "FieldValueTooMany", "Too many: 2: must have at most 1 items")],
    ),
    (
        "additionalProperties-schema-path",
        _x({"type": "object", "additionalProperties": STR}),
        {"ok": "v", "bad": 1},
        [("spec.x.bad", "FieldValueTypeInvalid")],
    ),
    (
        "additionalProperties-false",
        _x({"type": "object", "properties": {"a": STR}, "additionalProperties": False}),
        {"a": "v", "b": 1},
        [
            Cause(
                "spec.x",
                "FieldValueInvalid",
                'Invalid value: "b": spec.x.b in body is a forbidden property',
            )
        ],
    ),
    (
        "preserve-unknown-not-validated",
        _x({"type": "object", "x-kubernetes-preserve-unknown-fields": True}),
        {"any": [None, {"deep": True}]},
        [],
    ),
    # --- list types
    ("list-set-ok", _x({"type": "array", "x-kubernetes-list-type": "set"}), ["a", "b", 1, 1.5], []),
    (
        "list-set-duplicate-scalar",
        _x({"type": "array", "x-kubernetes-list-type": "set"}),
        ["a", "b", "a", "a"],
        [Cause("spec.x[2]", "FieldValueDuplicate", 'Duplicate value: "a"')],
    ),
    (
        "list-set-duplicate-object",
        _x({"type": "array", "x-kubernetes-list-type": "set"}),
        [{"a": 1, "b": 2}, {"b": 2, "a": 1}],
        [Cause("spec.x[1]", "FieldValueDuplicate", 'Duplicate value: {"a":1,"b":2}')],
    ),
    (
        "list-map-ok",
        _x(
            {
                "type": "array",
                "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["name"],
            }
        ),
        [{"name": "a"}, {"name": "b"}],
        [],
    ),
    (
        "list-map-duplicate-key",
        _x(
            {
                "type": "array",
                "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["name"],
            }
        ),
        [{"name": "a", "v": 1}, {"name": "a", "v": 2}],
        [Cause("spec.x[1]", "FieldValueDuplicate", 'Duplicate value: {"name":"a"}')],
    ),
    (
        "list-map-two-missing-keys-collide",
        _x(
            {
                "type": "array",
                "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["name"],
            }
        ),
        [{"v": 1}, {"v": 2}],
        [Cause("spec.x[1]", "FieldValueDuplicate", "Duplicate value: {}")],
    ),
    (
        "list-map-multi-key-ok",
        _x(
            {
                "type": "array",
                "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["port", "protocol"],
            }
        ),
        [{"port": 80, "protocol": "TCP"}, {"port": 80, "protocol": "UDP"}],
        [],
    ),
    (
        "list-map-multi-key-duplicate",
        _x(
            {
                "type": "array",
                "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["port", "protocol"],
            }
        ),
        [{"port": 80, "protocol": "TCP"}, {"port": 80, "protocol": "TCP", "name": "x"}],
        [
            Cause(
                "spec.x[1]", "FieldValueDuplicate", 'Duplicate value: {"port":80,"protocol":"TCP"}'
            )
        ],
    ),
    (
        "list-map-non-object",
        _x(
            {
                "type": "array",
                "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["name"],
            }
        ),
        [{"name": "a"}, "b"],
        [
            Cause(
                "spec.x[1]",
                "FieldValueInvalid",
                'Invalid value: "b": must be an object for an array of list-type map',
            )
        ],
    ),
    # --- combinators
    ("anyOf-ok", _x({"anyOf": [{"required": ["a"]}, {"required": ["b"]}]}), {"b": 1}, []),
    (
        "anyOf-bad",
        _x({"type": "object", "anyOf": [{"required": ["a"]}, {"required": ["b"]}]}),
        {"c": 1},
        [
            Cause(
                "spec.x",
                "FieldValueInvalid",
                'Invalid value: "": "spec.x" must validate at least one schema (anyOf)',
            ),
            Cause("spec.x.a", "FieldValueRequired", "Required value"),
        ],
    ),
    (
        "oneOf-ok",
        _x({"type": "object", "oneOf": [{"required": ["a"]}, {"required": ["b"]}]}),
        {"a": 1},
        [],
    ),
    (
        "oneOf-two-valid",
        _x({"type": "object", "oneOf": [{"required": ["a"]}, {"required": ["b"]}]}),
        {"a": 1, "b": 2},
        [
            Cause(
                "spec.x",
                "FieldValueInvalid",
                'Invalid value: "": "spec.x" must validate one and only one schema (oneOf). '
                "Found 2 valid alternatives",
            )
        ],
    ),
    (
        "oneOf-none-valid",
        _x({"type": "object", "oneOf": [{"required": ["a"]}, {"required": ["b"]}]}),
        {},
        [("spec.x", "FieldValueInvalid"), ("spec.x.a", "FieldValueRequired")],
    ),
    (
        "allOf-ok",
        _x({"type": "integer", "allOf": [{"minimum": 1}, {"maximum": 5}]}),
        3,
        [],
    ),
    (
        "allOf-bad",
        _x({"type": "integer", "allOf": [{"minimum": 1}, {"maximum": 5}]}),
        9,
        [
            ("spec.x", "FieldValueInvalid"),
            ("spec.x", "FieldValueInvalid"),
        ],
    ),
    ("not-ok", _x({"type": "string", "not": {"enum": ["forbidden"]}}), "fine", []),
    (
        "not-bad",
        _x({"type": "string", "not": {"enum": ["forbidden"]}}),
        "forbidden",
        [
            Cause(
                "spec.x",
                "FieldValueInvalid",
                'Invalid value: "": "spec.x" must not validate the schema (not)',
            )
        ],
    ),
    # --- embedded resources
    (
        "embedded-ok",
        _x(
            {
                "type": "object",
                "x-kubernetes-embedded-resource": True,
                "x-kubernetes-preserve-unknown-fields": True,
            }
        ),
        {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}, "spec": {}},
        [],
    ),
    (
        "embedded-missing-typemeta",
        _x(
            {
                "type": "object",
                "x-kubernetes-embedded-resource": True,
                "x-kubernetes-preserve-unknown-fields": True,
            }
        ),
        {"spec": {}},
        [("spec.x.apiVersion", "FieldValueRequired"), ("spec.x.kind", "FieldValueRequired")],
    ),
    (
        "embedded-bad-kind-and-version",
        _x(
            {
                "type": "object",
                "x-kubernetes-embedded-resource": True,
                "x-kubernetes-preserve-unknown-fields": True,
            }
        ),
        {"apiVersion": "a/b/c", "kind": "Not_A_Kind"},
        [("spec.x.apiVersion", "FieldValueInvalid"), ("spec.x.kind", "FieldValueInvalid")],
    ),
]


@pytest.mark.parametrize(
    ("schema", "value", "expected"),
    [pytest.param(s, v, e, id=i) for i, s, v, e in VALIDATE_CASES],
)
def test_validate_rule(schema: dict[str, Any], value: Any, expected: Expected) -> None:
    obj: Obj = {"spec": {} if value is _MISSING else {"x": value}}
    frozen = copy.deepcopy(obj)
    causes = validate(obj, compile_schema(schema))
    assert obj == frozen
    if expected and isinstance(expected[0], Cause):
        assert causes == expected
    else:
        assert _pairs(causes) == expected


ROOT_META_SCHEMA = {
    "type": "object",
    "properties": {
        "metadata": {
            "type": "object",
            "properties": {
                "name": {"type": "string", "maxLength": 5},
                "labels": {"type": "integer"},
            },
        },
        "spec": OBJ,
    },
}


@pytest.mark.parametrize(
    ("obj", "expected"),
    [
        pytest.param(
            {"metadata": {"name": "ok", "labels": {"a": "b"}, "x": [1]}},
            [],
            id="inside-not-validated",
        ),
        pytest.param(
            {"metadata": {"name": "toolong"}},
            [("metadata.name", "FieldValueTooLong")],
            id="name-rule-from-schema",
        ),
        pytest.param(
            {"metadata": "nope"}, [("metadata", "FieldValueTypeInvalid")], id="must-be-object"
        ),
    ],
)
def test_validate_root_metadata(obj: Obj, expected: list[tuple[str, str]]) -> None:
    assert _pairs(validate(obj, compile_schema(ROOT_META_SCHEMA))) == expected


def test_no_schema_validates_nothing() -> None:
    schema = compile_schema(None)
    assert schema.preserves_everything
    assert validate({"spec": {"x": object()}}, schema) == []


def test_pipeline_prune_default_validate_matches_apiserver_order() -> None:
    schema = compile_schema(
        _root(
            spec={
                "type": "object",
                "required": ["mode"],
                "properties": {
                    "mode": {"type": "string", "enum": ["a", "b"], "default": "a"},
                    "n": {"type": "integer", "minimum": 0},
                },
            }
        )
    )
    obj: Obj = {"spec": {"mode": None, "n": None, "junk": 1}}
    apply_defaults(prune(obj, schema), schema)
    assert obj == {"spec": {"mode": "a"}}
    assert validate(obj, schema) == []
