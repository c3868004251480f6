"""codegen on real CRDs: the public ones kept in ``tests/crds/`` (see its SOURCES.md) and every
CRD of the repository (``deploy/``, ``controllers/``, ``examples/``, ``tests/``). Each generated
module is deterministic, formatted, lint- and mypy-clean, and imports; realistic objects
round-trip exactly (validate -> dump == input); constraint violations are rejected with a
message naming the field."""

from __future__ import annotations

import copy
import tempfile
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from pydantic import ValidationError

from codegen import from_file, generate
from tests.support.codegen import (
    CRD_DIR,
    CRD_FILES,
    REPO,
    extras,
    load_module,
    repository_crds,
    ruff_clean,
    wire,
)

METADATA = {
    "name": "web",
    "namespace": "default",
    "uid": "6f1c4a52-2f4c-4d9a-9a55-0c1f4a6c8e21",
    "resourceVersion": "4711",
    "generation": 3,
    "creationTimestamp": "2024-05-01T10:00:00Z",
    "labels": {"app": "web"},
    "annotations": {},
    "finalizers": ["example.com/cleanup"],
    "ownerReferences": [
        {"apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "uid": "u-1", "controller": True}
    ],
    "managedFields": [
        {
            "manager": "kubectl",
            "operation": "Update",
            "apiVersion": "apps.kruise.io/v1beta1",
            "time": "2024-05-01T10:00:00.123456+02:00",
            "fieldsType": "FieldsV1",
            "fieldsV1": {"f:spec": {"f:replicas": {}}},
        }
    ],
}
SELECTOR = {
    "matchLabels": {"app": "web"},
    "matchExpressions": [{"key": "tier", "operator": "In", "values": ["a", "b"]}],
}
# template and volumeClaimTemplates are preserve-unknown-fields without a schema in kruise's
# CRDs: everything under them, including keys no schema knows, must survive.
TEMPLATE = {
    "metadata": {"labels": {"app": "web"}},
    "spec": {
        "containers": [{"name": "nginx", "image": "nginx:1.25", "ports": [{"containerPort": 80}]}],
        "futureField": {"nested": [1, None, "x", {}]},
    },
}
VCT = [{"metadata": {"name": "data"}, "spec": {"accessModes": ["ReadWriteOnce"]}}]

SAMPLES: dict[str, tuple[str, dict[str, Any]]] = {
    "cloneset": (
        "CloneSet",
        {
            "apiVersion": "apps.kruise.io/v1beta1",
            "kind": "CloneSet",
            "metadata": {**METADATA, "someFutureMetaField": "kept"},
            "spec": {
                "replicas": 5,
                "minReadySeconds": 0,
                "selector": SELECTOR,
                "template": TEMPLATE,
                "volumeClaimTemplates": VCT,
                "scaleStrategy": {"podsToDelete": [], "maxUnavailable": "50%"},
                "updateStrategy": {
                    "type": "InPlaceIfPossible",
                    "rollingUpdate": {
                        "partition": "20%",
                        "maxUnavailable": 1,
                        "maxSurge": "10%",
                        "paused": False,
                        "inPlaceUpdateStrategy": {"gracePeriodSeconds": 10},
                        "priorityStrategy": {
                            "weightPriority": [{"weight": 50, "matchSelector": {"matchLabels": {}}}]
                        },
                        "scatterStrategy": [{"key": "zone", "value": "a"}],
                    },
                },
                "lifecycle": {"preDelete": {"finalizersHandler": ["x/y"], "markPodNotReady": True}},
            },
            "status": {
                "replicas": 5,
                "readyReplicas": 4,
                "availableReplicas": 4,
                "updatedReplicas": 2,
                "updatedReadyReplicas": 2,
                "observedGeneration": 3,
                "updateRevision": "web-7d9f",
                "labelSelector": "app=web",
                "conditions": [
                    {
                        "type": "FailedScale",
                        "status": "False",
                        "lastTransitionTime": "2024-05-01T10:00:00Z",
                        "reason": "",
                        "message": "ok",
                    }
                ],
            },
        },
    ),
    "asts": (
        "StatefulSet",
        {
            "apiVersion": "apps.kruise.io/v1beta1",
            "kind": "StatefulSet",
            "metadata": METADATA,
            "spec": {
                "replicas": 3,
                "serviceName": "web",
                "podManagementPolicy": "Parallel",
                "selector": SELECTOR,
                "template": TEMPLATE,
                "volumeClaimTemplates": VCT,
                "reserveOrdinals": [1, "3-5"],
                "ordinals": {"start": 2},
                "persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Delete"},
                "updateStrategy": {
                    "type": "RollingUpdate",
                    "rollingUpdate": {
                        "partition": 1,
                        "maxUnavailable": "25%",
                        "podUpdatePolicy": "InPlaceIfPossible",
                        "unorderedUpdate": {
                            "priorityStrategy": {"orderPriority": [{"orderedKey": "rank"}]}
                        },
                    },
                },
            },
            "status": {
                "replicas": 3,
                "readyReplicas": 3,
                "currentReplicas": 3,
                "updatedReplicas": 3,
                "availableReplicas": 3,
                "observedGeneration": 3,
                "currentRevision": "web-1",
                "updateRevision": "web-1",
            },
        },
    ),
    "certificate": (
        "Certificate",
        {
            "apiVersion": "cert-manager.io/v1",
            "kind": "Certificate",
            "metadata": METADATA,
            "spec": {
                "secretName": "web-tls",
                "dnsNames": ["example.com", "www.example.com"],
                "duration": "2160h",
                "renewBefore": "360h",
                "isCA": False,
                "issuerRef": {"name": "letsencrypt", "kind": "ClusterIssuer"},
                "privateKey": {"algorithm": "ECDSA", "size": 256, "rotationPolicy": "Always"},
                "usages": ["digital signature", "key encipherment"],
                "additionalOutputFormats": [{"type": "CombinedPEM"}],
                "renewal": {"windows": [{"cron": "0 2 * * *", "windowDuration": "1h30m"}]},
                "keystores": {"pkcs12": {"create": True, "profile": "Modern2023"}},
            },
            "status": {
                "conditions": [
                    {
                        "type": "Ready",
                        "status": "True",
                        "lastTransitionTime": "2024-05-01T10:00:00Z",
                        "observedGeneration": 3,
                        "reason": "Ready",
                        "message": "Certificate is up to date and has not expired",
                    }
                ],
                "notAfter": "2024-07-30T10:00:00Z",
                "notBefore": "2024-05-01T10:00:00Z",
                "renewalTime": "2024-07-15T10:00:00Z",
                "revision": 1,
            },
        },
    ),
    "servicemonitor": (
        "ServiceMonitor",
        {
            "apiVersion": "monitoring.coreos.com/v1",
            "kind": "ServiceMonitor",
            "metadata": METADATA,
            "spec": {
                "selector": SELECTOR,
                "namespaceSelector": {"any": True},
                "jobLabel": "app",
                "sampleLimit": 1000,
                "nativeHistogramMinBucketFactor": "1.1",
                "endpoints": [
                    {
                        "port": "metrics",
                        "targetPort": 8080,
                        "interval": "30s",
                        "scrapeTimeout": "10s",
                        "scheme": "https",
                        "path": "/metrics",
                        "params": {"module": ["http_2xx"]},
                        "bearerTokenSecret": {"key": "token", "name": "sa-token"},
                        "tlsConfig": {"insecureSkipVerify": True, "serverName": "web"},
                        "relabelings": [
                            {
                                "action": "replace",
                                "sourceLabels": ["__meta_kubernetes_pod_name"],
                                "targetLabel": "pod",
                            }
                        ],
                        "metricRelabelings": [{"action": "drop", "regex": "go_.*", "modulus": 0}],
                    }
                ],
            },
        },
    ),
    "httproute": (
        "HTTPRoute",
        {
            "apiVersion": "gateway.networking.k8s.io/v1",
            "kind": "HTTPRoute",
            "metadata": METADATA,
            "spec": {
                "parentRefs": [{"name": "gw", "namespace": "infra", "sectionName": "https"}],
                "hostnames": ["example.com", "*.example.org"],
                "rules": [
                    {
                        "name": "api",
                        "matches": [
                            {
                                "path": {"type": "PathPrefix", "value": "/api"},
                                "headers": [{"name": "version", "value": "v2"}],
                                "queryParams": [{"type": "Exact", "name": "debug", "value": "1"}],
                                "method": "GET",
                            }
                        ],
                        "filters": [
                            {
                                "type": "RequestHeaderModifier",
                                "requestHeaderModifier": {
                                    "set": [{"name": "x-env", "value": "prod"}],
                                    "remove": ["x-debug"],
                                },
                            },
                            {
                                "type": "URLRewrite",
                                "urlRewrite": {
                                    "path": {
                                        "type": "ReplacePrefixMatch",
                                        "replacePrefixMatch": "/",
                                    }
                                },
                            },
                        ],
                        "backendRefs": [
                            {"name": "api", "port": 8080, "weight": 90},
                            {"group": "", "kind": "Service", "name": "canary", "port": 8080},
                        ],
                        "timeouts": {"request": "10s", "backendRequest": "2s"},
                    }
                ],
            },
            "status": {
                "parents": [
                    {
                        "parentRef": {"name": "gw", "namespace": "infra"},
                        "controllerName": "example.com/gateway-controller",
                        "conditions": [
                            {
                                "type": "Accepted",
                                "status": "True",
                                "observedGeneration": 3,
                                "lastTransitionTime": "2024-05-01T10:00:00Z",
                                "reason": "Accepted",
                                "message": "Route is accepted",
                            }
                        ],
                    }
                ]
            },
        },
    ),
    "scaledobject": (
        "ScaledObject",
        {
            "apiVersion": "keda.sh/v1alpha1",
            "kind": "ScaledObject",
            "metadata": METADATA,
            "spec": {
                "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                "pollingInterval": 30,
                "cooldownPeriod": 300,
                "minReplicaCount": 1,
                "maxReplicaCount": 10,
                "fallback": {"failureThreshold": 3, "replicas": 6},
                "advanced": {
                    "restoreToOriginalReplicaCount": True,
                    "horizontalPodAutoscalerConfig": {
                        "name": "keda-hpa-web",
                        "behavior": {
                            "scaleDown": {
                                "stabilizationWindowSeconds": 300,
                                "policies": [
                                    {"type": "Percent", "value": 100, "periodSeconds": 15}
                                ],
                            }
                        },
                    },
                },
                "triggers": [
                    {
                        "type": "prometheus",
                        "name": "requests",
                        "metadata": {
                            "serverAddress": "http://prometheus:9090",
                            "query": "sum(rate(http_requests_total[2m]))",
                            "threshold": "100",
                        },
                        "authenticationRef": {"name": "prom-auth", "kind": "TriggerAuthentication"},
                    }
                ],
            },
            "status": {
                "scaleTargetKind": "apps/v1.Deployment",
                "scaleTargetGVKR": {
                    "group": "apps",
                    "version": "v1",
                    "kind": "Deployment",
                    "resource": "deployments",
                },
                "originalReplicaCount": 3,
                "externalMetricNames": ["s0-prometheus"],
                "health": {"s0-prometheus": {"numberOfFailures": 0, "status": "Happy"}},
                "conditions": [
                    {"type": "Ready", "status": "True", "reason": "Ready", "message": "ok"}
                ],
            },
        },
    ),
}

# Samples that violate one constraint, and the error location pydantic must name.
INVALID: dict[str, tuple[list[str | int], Any, str]] = {
    "cloneset": (["spec", "replicas"], "five", "spec.replicas"),
    "asts": (["spec", "selector"], None, "spec.selector"),
    "certificate": (
        ["spec", "renewal", "windows", 0, "windowDuration"],
        "ninety minutes",
        "spec.renewal.windows.0.windowDuration",
    ),
    "servicemonitor": (["spec", "endpoints", 0, "scheme"], "ftp", "spec.endpoints.0.scheme"),
    "httproute": (
        ["spec", "rules", 0, "matches", 0, "path", "type"],
        "Glob",
        "spec.rules.0.matches.0.path.type",
    ),
    "scaledobject": (["spec", "scaleTargetRef", "name"], None, "spec.scaleTargetRef.name"),
}


@pytest.fixture(scope="module")
def modules(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[str, ModuleType]]:
    out = {}
    directory = tmp_path_factory.mktemp("codegen")
    for key, file in CRD_FILES.items():
        text = generate([from_file(CRD_DIR / file)])
        out[key] = (text, load_module(text, directory, key))
    return out


@pytest.fixture(scope="module")
def repository_modules() -> dict[str, str]:
    """The module generated from each CRD manifest of the repository, by relative path."""
    return {str(p.relative_to(REPO)): generate([from_file(p)]) for p in repository_crds()}


def test_every_repository_crd_is_found() -> None:
    found = {str(p.relative_to(REPO)) for p in repository_crds()}
    assert {f"tests/crds/{f}" for f in CRD_FILES.values()} <= found
    assert {
        "deploy/crd/cloneset-crd.yaml",
        "deploy/crd/statefulset-crd.yaml",
        "controllers/cloneset/crd.yaml",
        "controllers/statefulset/crd.yaml",
        "examples/greetings/crd.yaml",
    } <= found


@pytest.mark.parametrize("relative", [str(p.relative_to(REPO)) for p in repository_crds()])
def test_every_repository_crd_generates_deterministically_and_cleanly(
    repository_modules: dict[str, str], relative: str, tmp_path: Path
) -> None:
    """Two runs give the same bytes; the module is ruff-clean, imports the shared core types
    (no generated copy of metadata) and imports."""
    text = repository_modules[relative]
    assert generate([from_file(REPO / relative)]) == text
    ruff_clean(text)
    assert "from kube_runtime.models import" in text and "class ObjectMeta" not in text
    assert "from codegen" not in text and "import codegen" not in text
    module = load_module(text, tmp_path, "repo")
    from kube_runtime import models

    assert module.ObjectMeta is models.ObjectMeta


@pytest.mark.parametrize("key", sorted(CRD_FILES))
def test_generated_module_is_formatted_and_lint_clean(modules: Any, key: str) -> None:
    ruff_clean(modules[key][0])


def test_generated_modules_pass_mypy(
    modules: Any,
    repository_modules: dict[str, str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    api = pytest.importorskip("mypy.api")  # run in this process: no interpreter to start
    paths = []
    texts = {f"gen_{key}": text for key, (text, _) in modules.items()}
    seen = set(texts.values())
    for i, text in enumerate(repository_modules.values()):  # the others, once each
        if text not in seen:
            seen.add(text)
            texts[f"gen_repo_{i}"] = text
    for stem, text in texts.items():
        path = tmp_path / f"{stem}.py"
        path.write_text(text)
        paths.append(str(path))
    # A typed use of a generated module: snake_case constructor arguments type-check.
    use = tmp_path / "use_cloneset.py"
    use.write_text(
        "from gen_cloneset import CloneSet, CloneSetSpec, CloneSetSpecSelector\n"
        "from kube_runtime.models import ObjectMeta\n\n"
        "obj = CloneSet(\n"
        "    metadata=ObjectMeta(name='x'),\n"
        "    spec=CloneSetSpec(selector=CloneSetSpecSelector(match_labels={'a': 'b'}),"
        " template={}, min_ready_seconds=3),\n"
        ")\n"
        "replicas: int | None = obj.spec.replicas if obj.spec else None\n"
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MYPYPATH", str(REPO))  # the editable install is invisible to mypy
    stdout, stderr, status = api.run(
        [
            "--config-file",
            str(REPO / "pyproject.toml"),
            "--cache-dir",  # kept between runs: the pydantic and framework part is reused
            str(Path(tempfile.gettempdir()) / "kube-runtime-codegen-mypy"),
            "--follow-imports=silent",  # report the generated modules' errors only
            *paths,
            str(use),
        ]
    )
    assert status == 0, stdout + stderr


@pytest.mark.parametrize("key", sorted(SAMPLES))
def test_realistic_sample_round_trips_exactly(modules: Any, key: str) -> None:
    class_name, sample = SAMPLES[key]
    cls = getattr(modules[key][1], class_name)
    original = copy.deepcopy(sample)
    obj = cls.model_validate(sample)
    assert wire(obj) == original
    assert sample == original  # validation did not touch the input
    # Typed access to declared fields; only genuinely unknown keys are "extra".
    assert obj.metadata.name == "web"
    unknown = extras(obj)
    if key == "cloneset":
        assert unknown == [".metadata.someFutureMetaField"]
        assert obj.spec.template["spec"]["futureField"] == {"nested": [1, None, "x", {}]}
        assert obj.spec.update_strategy.rolling_update.partition == "20%"
        assert obj.spec.update_strategy.rolling_update.max_unavailable == 1
        assert obj.status.conditions[0].last_transition_time == "2024-05-01T10:00:00Z"
    else:
        assert unknown == []


@pytest.mark.parametrize("key", sorted(INVALID))
def test_constraint_violation_is_rejected_with_its_location(modules: Any, key: str) -> None:
    class_name, sample = SAMPLES[key]
    path, bad, location = INVALID[key]
    broken = copy.deepcopy(sample)
    target: Any = broken
    for step in path[:-1]:
        target = target[step]
    target[path[-1]] = bad
    with pytest.raises(ValidationError) as caught:
        getattr(modules[key][1], class_name).model_validate(broken)
    assert location in str(caught.value)


def test_defaults_are_attribute_values_but_never_dumped(modules: Any) -> None:
    mod = modules["cloneset"][1]
    strategy = mod.CloneSetSpecScaleStrategy.model_validate({})
    assert strategy.enable_pvc_reuse is False  # schema default
    assert wire(strategy) == {}
    endpoint = modules["servicemonitor"][1].ServiceMonitorSpecEndpointsItemRelabelingsItem()
    assert endpoint.action == "replace" and wire(endpoint) == {}


def test_resource_class_carries_api_coordinates(modules: Any) -> None:
    cls = modules["cloneset"][1].CloneSet
    resource = cls.__kube_resource__
    assert (resource.group, resource.version, resource.kind, resource.plural) == (
        "apps.kruise.io",
        "v1beta1",
        "CloneSet",
        "clonesets",
    )
    assert resource.namespaced and resource.subresources == frozenset({"status", "scale"})
    assert resource.short_names == ("clone",)
    # The non-storage version is generated too, under a version prefix.
    old = modules["cloneset"][1].V1alpha1CloneSet.__kube_resource__
    assert old.version == "v1alpha1" and old.kind == "CloneSet"
    cert = modules["certificate"][1].Certificate.__kube_resource__
    assert cert.subresources == frozenset({"status"}) and cert.short_names == ("cert", "certs")


def test_models_build_from_python_names_and_dump_wire_names(modules: Any) -> None:
    mod = modules["cloneset"][1]
    obj = mod.CloneSet(
        metadata={"name": "web", "namespace": "ns"},
        spec=mod.CloneSetSpec(
            selector=mod.CloneSetSpecSelector(match_labels={"app": "web"}),
            template={"metadata": {"labels": {"app": "web"}}},
            min_ready_seconds=5,
        ),
    )
    obj.spec.replicas = 2  # assignment marks the field as set
    assert wire(obj) == {
        "metadata": {"name": "web", "namespace": "ns"},
        "spec": {
            "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}}},
            "minReadySeconds": 5,
            "replicas": 2,
        },
    }


@pytest.mark.parametrize("key", sorted(CRD_FILES))
def test_generation_is_deterministic(modules: Any, key: str) -> None:
    text = modules[key][0]
    assert generate([from_file(CRD_DIR / CRD_FILES[key])]) == text
    source = from_file(CRD_DIR / CRD_FILES[key])
    assert f"sha256:{source.sha256}" in text.splitlines()[1]
    assert CRD_FILES[key] in text.splitlines()[1]


def test_version_selection(tmp_path: Path) -> None:
    text = generate([from_file(CRD_DIR / CRD_FILES["cloneset"])], versions=["v1alpha1"])
    mod = load_module(text, tmp_path)
    assert mod.CloneSet.__kube_resource__.version == "v1alpha1"
    assert not hasattr(mod, "V1alpha1CloneSet")
    assert "v1beta1" not in text


def test_several_crds_in_one_module(tmp_path: Path) -> None:
    sources = [from_file(CRD_DIR / CRD_FILES[k]) for k in ("cloneset", "asts", "certificate")]
    text = generate(sources)
    ruff_clean(text)
    mod = load_module(text, tmp_path)
    assert mod.CloneSet.__kube_resource__.kind == "CloneSet"
    assert mod.StatefulSet.__kube_resource__.kind == "StatefulSet"
    assert mod.Certificate.__kube_resource__.group == "cert-manager.io"
    assert sum(line.startswith("# Source: ") for line in text.splitlines()) == 3


def test_a_defaulted_list_of_objects_holds_models(modules: Any) -> None:
    """Gateway API defaults ``rules`` to ``[{"matches": [{"path": {...}}]}]``: the default is
    built into the item models (typed access works) and stays off the wire."""
    mod = modules["httproute"][1]
    route = mod.HTTPRoute.model_validate({"metadata": {"name": "r"}, "spec": {}})
    (rule,) = route.spec.rules
    assert isinstance(rule, mod.HTTPRouteSpecRulesItem)
    assert (rule.matches[0].path.type, rule.matches[0].path.value) == ("PathPrefix", "/")
    assert wire(route)["spec"] == {}
    again = mod.HTTPRoute.model_validate({"metadata": {"name": "r"}, "spec": {}})
    assert again.spec.rules is not route.spec.rules  # a fresh value each time
