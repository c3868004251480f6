"""Table-driven tests for kube_runtime.envtest.server.defaults (server-side defaulting)."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from kube_runtime.envtest.server.defaults import apply_defaults, prepare_for_create

Obj = dict[str, Any]
Path = tuple[str | int, ...]


def get(obj: Any, path: Path) -> Any:
    for step in path:
        obj = obj[step]
    return obj


def has(obj: Any, path: Path) -> bool:
    try:
        get(obj, path)
    except (KeyError, IndexError, TypeError):
        return False
    return True


# ---------------------------------------------------------------------------------------------
# Fixtures: fresh minimal objects every call (tests mutate them)


def container(**extra: Any) -> Obj:
    return {"name": "app", "image": "nginx:1.25", **extra}


def pod_spec(**extra: Any) -> Obj:
    return {"containers": [container()], **extra}


def pod(**spec_extra: Any) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "default"},
        "spec": pod_spec(**spec_extra),
    }


def template(**spec_extra: Any) -> Obj:
    return {"metadata": {"labels": {"app": "x"}}, "spec": pod_spec(**spec_extra)}


def workload(kind: str, **spec_extra: Any) -> Obj:
    group = "batch" if kind == "Job" else "apps"
    spec: Obj = {"template": template(), **spec_extra}
    if kind != "Job":
        spec.setdefault("selector", {"matchLabels": {"app": "x"}})
    return {
        "apiVersion": f"{group}/v1",
        "kind": kind,
        "metadata": {"name": "w", "namespace": "default"},
        "spec": spec,
    }


def statefulset(**spec_extra: Any) -> Obj:
    obj = workload("StatefulSet", serviceName="svc", **spec_extra)
    obj["spec"].setdefault(
        "volumeClaimTemplates",
        [
            {
                "metadata": {"name": "data"},
                "spec": {
                    "accessModes": ["ReadWriteOnce"],
                    "resources": {"requests": {"storage": "1Gi"}},
                },
            }
        ],
    )
    return obj


def service(**spec_extra: Any) -> Obj:
    spec: Obj = {"selector": {"app": "x"}, "ports": [{"port": 80}], **spec_extra}
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"}, "spec": spec}


def pvc() -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": "c"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
    }


def namespace(name: str = "team-a") -> Obj:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}


def cron_job() -> Obj:
    return {"spec": {"schedule": "@daily", "jobTemplate": {"spec": {"template": template()}}}}


def with_container(**extra: Any) -> Obj:
    return pod(containers=[container(**extra)])


def with_volume(**source: Any) -> Obj:
    return pod(volumes=[{"name": "v", **source}])


Case = tuple[str, str, Callable[[], Obj], Path, Any]

C0: Path = ("spec", "containers", 0)
V0: Path = ("spec", "volumes", 0)
T: Path = ("spec", "template", "spec")

# ---------------------------------------------------------------------------------------------
# Every default, asserted

DEFAULT_CASES: list[Case] = [
    # PodSpec (SetDefaults_PodSpec)
    ("", "Pod", pod, ("spec", "restartPolicy"), "Always"),
    ("", "Pod", pod, ("spec", "terminationGracePeriodSeconds"), 30),
    ("", "Pod", pod, ("spec", "dnsPolicy"), "ClusterFirst"),
    ("", "Pod", pod, ("spec", "schedulerName"), "default-scheduler"),
    ("", "Pod", pod, ("spec", "securityContext"), {}),
    # Pod only (SetDefaults_Pod)
    ("", "Pod", pod, ("spec", "enableServiceLinks"), True),
    (
        "",
        "Pod",
        lambda: with_container(resources={"limits": {"cpu": "1", "memory": "1Gi"}}),
        (*C0, "resources", "requests"),
        {"cpu": "1", "memory": "1Gi"},
    ),
    (
        "",
        "Pod",
        lambda: with_container(resources={"limits": {"cpu": "1"}, "requests": {"memory": "1Gi"}}),
        (*C0, "resources", "requests"),
        {"cpu": "1", "memory": "1Gi"},
    ),
    (
        "",
        "Pod",
        lambda: pod(initContainers=[container(resources={"limits": {"cpu": "2"}})]),
        ("spec", "initContainers", 0, "resources", "requests"),
        {"cpu": "2"},
    ),
    (
        "",
        "Pod",
        lambda: pod(hostNetwork=True, containers=[container(ports=[{"containerPort": 8080}])]),
        (*C0, "ports", 0, "hostPort"),
        8080,
    ),
    # Containers
    ("", "Pod", pod, (*C0, "terminationMessagePath"), "/dev/termination-log"),
    ("", "Pod", pod, (*C0, "terminationMessagePolicy"), "File"),
    ("", "Pod", pod, (*C0, "imagePullPolicy"), "IfNotPresent"),
    ("", "Pod", lambda: with_container(image="nginx"), (*C0, "imagePullPolicy"), "Always"),
    (
        "",
        "Pod",
        lambda: pod(initContainers=[container(image="busybox:latest")]),
        ("spec", "initContainers", 0, "imagePullPolicy"),
        "Always",
    ),
    (
        "",
        "Pod",
        lambda: pod(ephemeralContainers=[container(name="debug", image="busybox")]),
        ("spec", "ephemeralContainers", 0, "terminationMessagePolicy"),
        "File",
    ),
    (
        "",
        "Pod",
        lambda: with_container(ports=[{"containerPort": 80}]),
        (*C0, "ports", 0, "protocol"),
        "TCP",
    ),
    (
        "",
        "Pod",
        lambda: with_container(
            env=[{"name": "NODE", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}}]
        ),
        (*C0, "env", 0, "valueFrom", "fieldRef", "apiVersion"),
        "v1",
    ),
    # Probes and handlers
    *[
        (
            "",
            "Pod",
            (lambda probe=probe: with_container(**{probe: {"tcpSocket": {"port": 80}}})),
            (*C0, probe, field),
            value,
        )
        for probe in ("livenessProbe", "readinessProbe", "startupProbe")
        for field, value in (
            ("timeoutSeconds", 1),
            ("periodSeconds", 10),
            ("successThreshold", 1),
            ("failureThreshold", 3),
        )
    ],
    (
        "",
        "Pod",
        lambda: with_container(readinessProbe={"httpGet": {"port": 80}}),
        (*C0, "readinessProbe", "httpGet", "scheme"),
        "HTTP",
    ),
    (
        "",
        "Pod",
        lambda: with_container(readinessProbe={"httpGet": {"port": 80}}),
        (*C0, "readinessProbe", "httpGet", "path"),
        "/",
    ),
    (
        "",
        "Pod",
        lambda: with_container(livenessProbe={"grpc": {"port": 9000}}),
        (*C0, "livenessProbe", "grpc", "service"),
        "",
    ),
    (
        "",
        "Pod",
        lambda: with_container(lifecycle={"preStop": {"httpGet": {"port": 80}}}),
        (*C0, "lifecycle", "preStop", "httpGet", "scheme"),
        "HTTP",
    ),
    # Volumes
    ("", "Pod", lambda: with_volume(), (*V0, "emptyDir"), {}),
    (
        "",
        "Pod",
        lambda: with_volume(secret={"secretName": "s"}),
        (*V0, "secret", "defaultMode"),
        420,
    ),
    (
        "",
        "Pod",
        lambda: with_volume(configMap={"name": "c"}),
        (*V0, "configMap", "defaultMode"),
        420,
    ),
    (
        "",
        "Pod",
        lambda: with_volume(
            downwardAPI={"items": [{"path": "n", "fieldRef": {"fieldPath": "metadata.name"}}]}
        ),
        (*V0, "downwardAPI", "defaultMode"),
        420,
    ),
    (
        "",
        "Pod",
        lambda: with_volume(
            downwardAPI={"items": [{"path": "n", "fieldRef": {"fieldPath": "metadata.name"}}]}
        ),
        (*V0, "downwardAPI", "items", 0, "fieldRef", "apiVersion"),
        "v1",
    ),
    (
        "",
        "Pod",
        lambda: with_volume(projected={"sources": []}),
        (*V0, "projected", "defaultMode"),
        420,
    ),
    (
        "",
        "Pod",
        lambda: with_volume(projected={"sources": [{"serviceAccountToken": {"path": "t"}}]}),
        (*V0, "projected", "sources", 0, "serviceAccountToken", "expirationSeconds"),
        3600,
    ),
    (
        "",
        "Pod",
        lambda: with_volume(
            projected={
                "sources": [
                    {
                        "downwardAPI": {
                            "items": [{"path": "n", "fieldRef": {"fieldPath": "metadata.name"}}]
                        }
                    }
                ]
            }
        ),
        (*V0, "projected", "sources", 0, "downwardAPI", "items", 0, "fieldRef", "apiVersion"),
        "v1",
    ),
    ("", "Pod", lambda: with_volume(hostPath={"path": "/x"}), (*V0, "hostPath", "type"), ""),
    (
        "",
        "Pod",
        lambda: with_volume(
            iscsi={"targetPortal": "1.2.3.4:3260", "iqn": "iqn.2001-04.com.example:x", "lun": 0}
        ),
        (*V0, "iscsi", "iscsiInterface"),
        "default",
    ),
    (
        "",
        "Pod",
        lambda: with_volume(rbd={"monitors": ["m"], "image": "i"}),
        (*V0, "rbd", "pool"),
        "rbd",
    ),
    (
        "",
        "Pod",
        lambda: with_volume(rbd={"monitors": ["m"], "image": "i"}),
        (*V0, "rbd", "user"),
        "admin",
    ),
    (
        "",
        "Pod",
        lambda: with_volume(rbd={"monitors": ["m"], "image": "i"}),
        (*V0, "rbd", "keyring"),
        "/etc/ceph/keyring",
    ),
    (
        "",
        "Pod",
        lambda: with_volume(azureDisk={"diskName": "d", "diskURI": "u"}),
        (*V0, "azureDisk"),
        {
            "diskName": "d",
            "diskURI": "u",
            "cachingMode": "ReadWrite",
            "fsType": "ext4",
            "readOnly": False,
            "kind": "Shared",
        },
    ),
    (
        "",
        "Pod",
        lambda: with_volume(scaleIO={"gateway": "g", "system": "s", "secretRef": {"name": "x"}}),
        (*V0, "scaleIO", "storageMode"),
        "ThinProvisioned",
    ),
    (
        "",
        "Pod",
        lambda: with_volume(
            ephemeral={"volumeClaimTemplate": {"spec": {"accessModes": ["ReadWriteOnce"]}}}
        ),
        (*V0, "ephemeral", "volumeClaimTemplate", "spec", "volumeMode"),
        "Filesystem",
    ),
    # Deployment
    ("apps", "Deployment", lambda: workload("Deployment"), ("spec", "replicas"), 1),
    (
        "apps",
        "Deployment",
        lambda: workload("Deployment"),
        ("spec", "strategy"),
        {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}},
    ),
    ("apps", "Deployment", lambda: workload("Deployment"), ("spec", "revisionHistoryLimit"), 10),
    (
        "apps",
        "Deployment",
        lambda: workload("Deployment"),
        ("spec", "progressDeadlineSeconds"),
        600,
    ),
    (
        "apps",
        "Deployment",
        lambda: workload("Deployment", strategy={"type": "RollingUpdate"}),
        ("spec", "strategy", "rollingUpdate"),
        {"maxUnavailable": "25%", "maxSurge": "25%"},
    ),
    # ReplicaSet
    ("apps", "ReplicaSet", lambda: workload("ReplicaSet"), ("spec", "replicas"), 1),
    # DaemonSet
    (
        "apps",
        "DaemonSet",
        lambda: workload("DaemonSet"),
        ("spec", "updateStrategy"),
        {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}},
    ),
    ("apps", "DaemonSet", lambda: workload("DaemonSet"), ("spec", "revisionHistoryLimit"), 10),
    # StatefulSet
    ("apps", "StatefulSet", statefulset, ("spec", "replicas"), 1),
    ("apps", "StatefulSet", statefulset, ("spec", "podManagementPolicy"), "OrderedReady"),
    (
        "apps",
        "StatefulSet",
        statefulset,
        ("spec", "updateStrategy"),
        {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}},
    ),
    ("apps", "StatefulSet", statefulset, ("spec", "revisionHistoryLimit"), 10),
    (
        "apps",
        "StatefulSet",
        statefulset,
        ("spec", "persistentVolumeClaimRetentionPolicy"),
        {"whenDeleted": "Retain", "whenScaled": "Retain"},
    ),
    (
        "apps",
        "StatefulSet",
        lambda: statefulset(persistentVolumeClaimRetentionPolicy={"whenDeleted": "Delete"}),
        ("spec", "persistentVolumeClaimRetentionPolicy"),
        {"whenDeleted": "Delete", "whenScaled": "Retain"},
    ),
    (
        "apps",
        "StatefulSet",
        lambda: statefulset(updateStrategy={"rollingUpdate": {}}),
        ("spec", "updateStrategy"),
        {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}},
    ),
    ("apps", "StatefulSet", statefulset, ("spec", "volumeClaimTemplates", 0, "apiVersion"), "v1"),
    (
        "apps",
        "StatefulSet",
        statefulset,
        ("spec", "volumeClaimTemplates", 0, "kind"),
        "PersistentVolumeClaim",
    ),
    (
        "apps",
        "StatefulSet",
        statefulset,
        ("spec", "volumeClaimTemplates", 0, "spec", "volumeMode"),
        "Filesystem",
    ),
    (
        "apps",
        "StatefulSet",
        statefulset,
        ("spec", "volumeClaimTemplates", 0, "status"),
        {"phase": "Pending"},
    ),
    # Job / CronJob
    ("batch", "Job", lambda: workload("Job"), ("spec", "completions"), 1),
    ("batch", "Job", lambda: workload("Job"), ("spec", "parallelism"), 1),
    ("batch", "Job", lambda: workload("Job", completions=5), ("spec", "parallelism"), 1),
    ("batch", "Job", lambda: workload("Job", parallelism=3), ("spec", "parallelism"), 3),
    ("batch", "Job", lambda: workload("Job"), ("spec", "backoffLimit"), 6),
    (
        "batch",
        "Job",
        lambda: workload("Job", completionMode="Indexed", completions=3, backoffLimitPerIndex=1),
        ("spec", "backoffLimit"),
        2147483647,
    ),
    ("batch", "Job", lambda: workload("Job"), ("spec", "completionMode"), "NonIndexed"),
    ("batch", "Job", lambda: workload("Job"), ("spec", "suspend"), False),
    ("batch", "Job", lambda: workload("Job"), ("spec", "manualSelector"), False),
    (
        "batch",
        "Job",
        lambda: workload("Job"),
        ("spec", "podReplacementPolicy"),
        "TerminatingOrFailed",
    ),
    (
        "batch",
        "Job",
        lambda: workload(
            "Job",
            podFailurePolicy={
                "rules": [{"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]}]
            },
        ),
        ("spec", "podFailurePolicy", "rules", 0, "onPodConditions", 0, "status"),
        "True",
    ),
    (
        "batch",
        "Job",
        lambda: workload("Job", podFailurePolicy={"rules": []}),
        ("spec", "podReplacementPolicy"),
        "Failed",
    ),
    ("batch", "Job", lambda: workload("Job"), ("metadata", "labels"), {"app": "x"}),
    *[
        ("batch", "CronJob", cron_job, ("spec", field), value)
        for field, value in (
            ("concurrencyPolicy", "Allow"),
            ("suspend", False),
            ("successfulJobsHistoryLimit", 3),
            ("failedJobsHistoryLimit", 1),
        )
    ],
    # PersistentVolumeClaim / PersistentVolume
    ("", "PersistentVolumeClaim", pvc, ("spec", "volumeMode"), "Filesystem"),
    ("", "PersistentVolumeClaim", pvc, ("status", "phase"), "Pending"),
    (
        "",
        "PersistentVolume",
        lambda: {"spec": {"hostPath": {"path": "/d"}}},
        ("status", "phase"),
        "Pending",
    ),
    (
        "",
        "PersistentVolume",
        lambda: {"spec": {"hostPath": {"path": "/d"}}},
        ("spec",),
        {
            "hostPath": {"path": "/d", "type": ""},
            "persistentVolumeReclaimPolicy": "Retain",
            "volumeMode": "Filesystem",
        },
    ),
    # Service
    ("", "Service", service, ("spec", "type"), "ClusterIP"),
    ("", "Service", service, ("spec", "sessionAffinity"), "None"),
    ("", "Service", service, ("spec", "ports", 0, "protocol"), "TCP"),
    ("", "Service", service, ("spec", "ports", 0, "targetPort"), 80),
    (
        "",
        "Service",
        lambda: service(ports=[{"port": 80, "targetPort": 0}]),
        ("spec", "ports", 0, "targetPort"),
        80,
    ),
    (
        "",
        "Service",
        lambda: service(ports=[{"port": 80, "targetPort": ""}]),
        ("spec", "ports", 0, "targetPort"),
        80,
    ),
    ("", "Service", service, ("spec", "internalTrafficPolicy"), "Cluster"),
    ("", "Service", lambda: service(type="NodePort"), ("spec", "externalTrafficPolicy"), "Cluster"),
    (
        "",
        "Service",
        lambda: service(externalIPs=["1.2.3.4"]),
        ("spec", "externalTrafficPolicy"),
        "Cluster",
    ),
    (
        "",
        "Service",
        lambda: service(type="LoadBalancer"),
        ("spec", "allocateLoadBalancerNodePorts"),
        True,
    ),
    (
        "",
        "Service",
        lambda: {
            **service(type="LoadBalancer"),
            "status": {"loadBalancer": {"ingress": [{"ip": "1.2.3.4"}]}},
        },
        ("status", "loadBalancer", "ingress", 0, "ipMode"),
        "VIP",
    ),
    (
        "",
        "Service",
        lambda: service(sessionAffinity="ClientIP"),
        ("spec", "sessionAffinityConfig"),
        {"clientIP": {"timeoutSeconds": 10800}},
    ),
    # Namespace / Secret / Node / Endpoints / ReplicationController / PodTemplate
    ("", "Namespace", namespace, ("status", "phase"), "Active"),
    ("", "Namespace", namespace, ("metadata", "labels"), {"kubernetes.io/metadata.name": "team-a"}),
    ("", "Secret", lambda: {"metadata": {"name": "s"}, "data": {}}, ("type",), "Opaque"),
    (
        "",
        "Node",
        lambda: {"status": {"capacity": {"cpu": "4", "pods": "110"}}},
        ("status", "allocatable"),
        {"cpu": "4", "pods": "110"},
    ),
    (
        "",
        "Endpoints",
        lambda: {"subsets": [{"addresses": [{"ip": "10.0.0.1"}], "ports": [{"port": 80}]}]},
        ("subsets", 0, "ports", 0, "protocol"),
        "TCP",
    ),
    (
        "",
        "ReplicationController",
        lambda: {"spec": {"template": template()}},
        ("spec", "replicas"),
        1,
    ),
    (
        "",
        "ReplicationController",
        lambda: {"spec": {"template": template()}},
        ("spec", "selector"),
        {"app": "x"},
    ),
    (
        "",
        "ReplicationController",
        lambda: {"spec": {"template": template()}},
        ("metadata", "labels"),
        {"app": "x"},
    ),
    (
        "",
        "ReplicationController",
        lambda: {"spec": {"template": template()}},
        (*T, "restartPolicy"),
        "Always",
    ),
    (
        "",
        "PodTemplate",
        lambda: {"template": template()},
        ("template", "spec", "dnsPolicy"),
        "ClusterFirst",
    ),
    # Other groups
    (
        "rbac.authorization.k8s.io",
        "RoleBinding",
        lambda: {
            "roleRef": {"kind": "Role", "name": "r"},
            "subjects": [{"kind": "User", "name": "u"}],
        },
        ("roleRef", "apiGroup"),
        "rbac.authorization.k8s.io",
    ),
    (
        "rbac.authorization.k8s.io",
        "ClusterRoleBinding",
        lambda: {
            "roleRef": {"kind": "ClusterRole", "name": "r"},
            "subjects": [{"kind": "Group", "name": "g"}],
        },
        ("subjects", 0, "apiGroup"),
        "rbac.authorization.k8s.io",
    ),
    (
        "networking.k8s.io",
        "NetworkPolicy",
        lambda: {"spec": {"podSelector": {}, "egress": [{"ports": [{"port": 53}]}]}},
        ("spec",),
        {
            "podSelector": {},
            "egress": [{"ports": [{"port": 53, "protocol": "TCP"}]}],
            "policyTypes": ["Ingress", "Egress"],
        },
    ),
    (
        "networking.k8s.io",
        "NetworkPolicy",
        lambda: {"spec": {"podSelector": {}}},
        ("spec", "policyTypes"),
        ["Ingress"],
    ),
    (
        "networking.k8s.io",
        "IngressClass",
        lambda: {"spec": {"controller": "c", "parameters": {"kind": "K", "name": "n"}}},
        ("spec", "parameters", "scope"),
        "Cluster",
    ),
    ("storage.k8s.io", "StorageClass", lambda: {"provisioner": "p"}, ("reclaimPolicy",), "Delete"),
    (
        "storage.k8s.io",
        "StorageClass",
        lambda: {"provisioner": "p"},
        ("volumeBindingMode",),
        "Immediate",
    ),
    (
        "scheduling.k8s.io",
        "PriorityClass",
        lambda: {"value": 10},
        ("preemptionPolicy",),
        "PreemptLowerPriority",
    ),
    (
        "discovery.k8s.io",
        "EndpointSlice",
        lambda: {"addressType": "IPv4", "ports": [{"port": 80}]},
        ("ports", 0),
        {"port": 80, "name": "", "protocol": "TCP"},
    ),
    (
        "apiextensions.k8s.io",
        "CustomResourceDefinition",
        lambda: {
            "spec": {
                "group": "example.com",
                "names": {"kind": "Widget", "plural": "widgets"},
                "scope": "Namespaced",
                "versions": [{"name": "v1", "served": True, "storage": True}],
            }
        },
        ("spec", "names"),
        {"kind": "Widget", "plural": "widgets", "singular": "widget", "listKind": "WidgetList"},
    ),
    (
        "apiextensions.k8s.io",
        "CustomResourceDefinition",
        lambda: {
            "spec": {"names": {"kind": "Widget"}, "versions": [{"name": "v1", "storage": True}]}
        },
        ("spec", "conversion"),
        {"strategy": "None"},
    ),
    (
        "apiextensions.k8s.io",
        "CustomResourceDefinition",
        lambda: {
            "spec": {
                "names": {"kind": "Widget"},
                "versions": [{"name": "v1", "storage": False}, {"name": "v2", "storage": True}],
            }
        },
        ("status", "storedVersions"),
        ["v2"],
    ),
    (
        "apiextensions.k8s.io",
        "CustomResourceDefinition",
        lambda: {
            "spec": {
                "names": {"kind": "Widget"},
                "conversion": {
                    "strategy": "Webhook",
                    "webhook": {
                        "clientConfig": {"service": {"name": "s", "namespace": "n"}},
                        "conversionReviewVersions": ["v1"],
                    },
                },
            }
        },
        ("spec", "conversion", "webhook", "clientConfig", "service", "port"),
        443,
    ),
]

# Every kind that embeds a PodTemplateSpec gets the PodSpec defaults inside it.
TEMPLATE_HOLDERS: list[tuple[str, str, Callable[[], Obj], Path]] = [
    ("apps", "Deployment", lambda: workload("Deployment"), T),
    ("apps", "ReplicaSet", lambda: workload("ReplicaSet"), T),
    ("apps", "StatefulSet", statefulset, T),
    ("apps", "DaemonSet", lambda: workload("DaemonSet"), T),
    ("batch", "Job", lambda: workload("Job"), T),
    (
        "batch",
        "CronJob",
        lambda: {"spec": {"schedule": "@daily", "jobTemplate": {"spec": {"template": template()}}}},
        ("spec", "jobTemplate", "spec", "template", "spec"),
    ),
    ("", "ReplicationController", lambda: {"spec": {"template": template()}}, T),
    ("", "PodTemplate", lambda: {"template": template()}, ("template", "spec")),
]

TEMPLATE_SPEC_DEFAULTS: list[tuple[Path, Any]] = [
    (("restartPolicy",), "Always"),
    (("terminationGracePeriodSeconds",), 30),
    (("dnsPolicy",), "ClusterFirst"),
    (("schedulerName",), "default-scheduler"),
    (("securityContext",), {}),
    (("containers", 0, "terminationMessagePath"), "/dev/termination-log"),
    (("containers", 0, "terminationMessagePolicy"), "File"),
    (("containers", 0, "imagePullPolicy"), "IfNotPresent"),
]


def case_id(case: Case) -> str:
    group, kind, _, path, _ = case
    return f"{group or 'core'}/{kind}:{'.'.join(str(p) for p in path)}"


@pytest.mark.parametrize("case", DEFAULT_CASES, ids=[case_id(c) for c in DEFAULT_CASES])
def test_default_is_applied(case: Case) -> None:
    group, kind, make, path, expected = case
    obj = make()
    apply_defaults(group, kind, obj)
    assert get(obj, path) == expected


@pytest.mark.parametrize(
    ("group", "kind", "make", "spec_path"),
    TEMPLATE_HOLDERS,
    ids=[f"{g or 'core'}/{k}" for g, k, _, _ in TEMPLATE_HOLDERS],
)
def test_pod_templates_get_pod_spec_defaults(
    group: str, kind: str, make: Callable[[], Obj], spec_path: Path
) -> None:
    obj = make()
    get(obj, (*spec_path, "containers", 0))["resources"] = {"limits": {"cpu": "1"}}
    apply_defaults(group, kind, obj)
    spec = get(obj, spec_path)
    for path, expected in TEMPLATE_SPEC_DEFAULTS:
        assert get(spec, path) == expected, path
    # Pod-only defaults do not materialise in templates (upstream keeps them out of PodSpec).
    assert "enableServiceLinks" not in spec
    assert "requests" not in spec["containers"][0]["resources"]


# ---------------------------------------------------------------------------------------------
# Explicit values are kept

KEEP_CASES: list[Case] = [
    ("", "Pod", lambda: pod(restartPolicy="Never"), ("spec", "restartPolicy"), "Never"),
    (
        "",
        "Pod",
        lambda: pod(terminationGracePeriodSeconds=0),
        ("spec", "terminationGracePeriodSeconds"),
        0,
    ),
    ("", "Pod", lambda: pod(dnsPolicy="Default"), ("spec", "dnsPolicy"), "Default"),
    ("", "Pod", lambda: pod(schedulerName="mine"), ("spec", "schedulerName"), "mine"),
    (
        "",
        "Pod",
        lambda: pod(securityContext={"runAsUser": 1000}),
        ("spec", "securityContext"),
        {"runAsUser": 1000},
    ),
    ("", "Pod", lambda: pod(enableServiceLinks=False), ("spec", "enableServiceLinks"), False),
    (
        "",
        "Pod",
        lambda: with_container(resources={"limits": {"cpu": "2"}, "requests": {"cpu": "1"}}),
        (*C0, "resources", "requests"),
        {"cpu": "1"},
    ),
    (
        "",
        "Pod",
        lambda: pod(
            hostNetwork=True, containers=[container(ports=[{"containerPort": 80, "hostPort": 81}])]
        ),
        (*C0, "ports", 0, "hostPort"),
        81,
    ),
    ("", "Pod", lambda: with_container(imagePullPolicy="Never"), (*C0, "imagePullPolicy"), "Never"),
    (
        "",
        "Pod",
        lambda: with_container(terminationMessagePath="/t"),
        (*C0, "terminationMessagePath"),
        "/t",
    ),
    (
        "",
        "Pod",
        lambda: with_container(terminationMessagePolicy="FallbackToLogsOnError"),
        (*C0, "terminationMessagePolicy"),
        "FallbackToLogsOnError",
    ),
    (
        "",
        "Pod",
        lambda: with_container(ports=[{"containerPort": 53, "protocol": "UDP"}]),
        (*C0, "ports", 0, "protocol"),
        "UDP",
    ),
    (
        "",
        "Pod",
        lambda: with_container(
            livenessProbe={
                "httpGet": {"port": 443, "scheme": "HTTPS", "path": "/healthz"},
                "timeoutSeconds": 5,
                "periodSeconds": 7,
                "successThreshold": 2,
                "failureThreshold": 9,
            }
        ),
        (*C0, "livenessProbe"),
        {
            "httpGet": {"port": 443, "scheme": "HTTPS", "path": "/healthz"},
            "timeoutSeconds": 5,
            "periodSeconds": 7,
            "successThreshold": 2,
            "failureThreshold": 9,
        },
    ),
    (
        "",
        "Pod",
        lambda: with_container(
            env=[
                {
                    "name": "X",
                    "valueFrom": {"fieldRef": {"apiVersion": "v2", "fieldPath": "metadata.name"}},
                }
            ]
        ),
        (*C0, "env", 0, "valueFrom", "fieldRef", "apiVersion"),
        "v2",
    ),
    (
        "",
        "Pod",
        lambda: with_volume(secret={"secretName": "s", "defaultMode": 256}),
        (*V0, "secret", "defaultMode"),
        256,
    ),
    (
        "",
        "Pod",
        lambda: with_volume(configMap={"name": "c", "defaultMode": 0}),
        (*V0, "configMap", "defaultMode"),
        0,
    ),
    (
        "",
        "Pod",
        lambda: with_volume(persistentVolumeClaim={"claimName": "c"}),
        (*V0,),
        {"name": "v", "persistentVolumeClaim": {"claimName": "c"}},
    ),
    (
        "",
        "Pod",
        lambda: with_volume(hostPath={"path": "/x", "type": "Directory"}),
        (*V0, "hostPath", "type"),
        "Directory",
    ),
    ("apps", "Deployment", lambda: workload("Deployment", replicas=0), ("spec", "replicas"), 0),
    (
        "apps",
        "Deployment",
        lambda: workload("Deployment", strategy={"type": "Recreate"}),
        ("spec", "strategy"),
        {"type": "Recreate"},
    ),
    (
        "apps",
        "Deployment",
        lambda: workload(
            "Deployment", strategy={"rollingUpdate": {"maxUnavailable": 0, "maxSurge": 1}}
        ),
        ("spec", "strategy", "rollingUpdate"),
        {"maxUnavailable": 0, "maxSurge": 1},
    ),
    (
        "apps",
        "Deployment",
        lambda: workload("Deployment", revisionHistoryLimit=0),
        ("spec", "revisionHistoryLimit"),
        0,
    ),
    (
        "apps",
        "Deployment",
        lambda: workload("Deployment", progressDeadlineSeconds=60),
        ("spec", "progressDeadlineSeconds"),
        60,
    ),
    ("apps", "ReplicaSet", lambda: workload("ReplicaSet", replicas=3), ("spec", "replicas"), 3),
    (
        "apps",
        "DaemonSet",
        lambda: workload("DaemonSet", updateStrategy={"type": "OnDelete"}),
        ("spec", "updateStrategy"),
        {"type": "OnDelete"},
    ),
    (
        "apps",
        "StatefulSet",
        lambda: statefulset(podManagementPolicy="Parallel"),
        ("spec", "podManagementPolicy"),
        "Parallel",
    ),
    (
        "apps",
        "StatefulSet",
        lambda: statefulset(updateStrategy={"type": "OnDelete"}),
        ("spec", "updateStrategy"),
        {"type": "OnDelete"},
    ),
    # An explicit RollingUpdate without rollingUpdate stays that way upstream: no partition.
    (
        "apps",
        "StatefulSet",
        lambda: statefulset(updateStrategy={"type": "RollingUpdate"}),
        ("spec", "updateStrategy"),
        {"type": "RollingUpdate"},
    ),
    (
        "apps",
        "StatefulSet",
        lambda: statefulset(
            updateStrategy={"type": "RollingUpdate", "rollingUpdate": {"partition": 2}}
        ),
        ("spec", "updateStrategy", "rollingUpdate"),
        {"partition": 2},
    ),
    (
        "apps",
        "StatefulSet",
        lambda: statefulset(
            updateStrategy={"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 2}}
        ),
        ("spec", "updateStrategy", "rollingUpdate"),
        {"maxUnavailable": 2, "partition": 0},
    ),
    (
        "apps",
        "StatefulSet",
        lambda: statefulset(
            persistentVolumeClaimRetentionPolicy={"whenDeleted": "Delete", "whenScaled": "Delete"}
        ),
        ("spec", "persistentVolumeClaimRetentionPolicy"),
        {"whenDeleted": "Delete", "whenScaled": "Delete"},
    ),
    (
        "batch",
        "Job",
        lambda: workload("Job", completions=4, parallelism=2),
        ("spec", "completions"),
        4,
    ),
    ("batch", "Job", lambda: workload("Job", parallelism=2), ("spec", "parallelism"), 2),
    ("batch", "Job", lambda: workload("Job", backoffLimit=0), ("spec", "backoffLimit"), 0),
    ("batch", "Job", lambda: workload("Job", suspend=True), ("spec", "suspend"), True),
    (
        "batch",
        "Job",
        lambda: {**workload("Job"), "metadata": {"name": "j", "labels": {"mine": "1"}}},
        ("metadata", "labels"),
        {"mine": "1"},
    ),
    (
        "",
        "PersistentVolumeClaim",
        lambda: {**pvc(), "spec": {"volumeMode": "Block"}},
        ("spec", "volumeMode"),
        "Block",
    ),
    (
        "",
        "PersistentVolumeClaim",
        lambda: {**pvc(), "status": {"phase": "Bound"}},
        ("status", "phase"),
        "Bound",
    ),
    ("", "Service", lambda: service(type="NodePort"), ("spec", "type"), "NodePort"),
    (
        "",
        "Service",
        lambda: service(type="ExternalName", externalName="x.example.com"),
        ("spec",),
        {
            "selector": {"app": "x"},
            "ports": [{"port": 80, "protocol": "TCP", "targetPort": 80}],
            "type": "ExternalName",
            "externalName": "x.example.com",
            "sessionAffinity": "None",
        },
    ),
    (
        "",
        "Service",
        lambda: service(ports=[{"port": 80, "targetPort": "http", "protocol": "UDP"}]),
        ("spec", "ports", 0),
        {"port": 80, "targetPort": "http", "protocol": "UDP"},
    ),
    (
        "",
        "Service",
        lambda: service(type="NodePort", externalTrafficPolicy="Local"),
        ("spec", "externalTrafficPolicy"),
        "Local",
    ),
    (
        "",
        "Service",
        lambda: service(internalTrafficPolicy="Local"),
        ("spec", "internalTrafficPolicy"),
        "Local",
    ),
    (
        "",
        "Service",
        lambda: service(type="LoadBalancer", allocateLoadBalancerNodePorts=False),
        ("spec", "allocateLoadBalancerNodePorts"),
        False,
    ),
    (
        "",
        "Service",
        lambda: service(
            sessionAffinity="ClientIP", sessionAffinityConfig={"clientIP": {"timeoutSeconds": 60}}
        ),
        ("spec", "sessionAffinityConfig"),
        {"clientIP": {"timeoutSeconds": 60}},
    ),
    (
        "",
        "Namespace",
        lambda: {**namespace(), "status": {"phase": "Terminating"}},
        ("status", "phase"),
        "Terminating",
    ),
    ("", "Secret", lambda: {"type": "kubernetes.io/tls"}, ("type",), "kubernetes.io/tls"),
    (
        "",
        "Node",
        lambda: {"status": {"capacity": {"cpu": "4"}, "allocatable": {"cpu": "3"}}},
        ("status", "allocatable"),
        {"cpu": "3"},
    ),
    (
        "rbac.authorization.k8s.io",
        "RoleBinding",
        lambda: {
            "roleRef": {"kind": "Role", "name": "r"},
            "subjects": [{"kind": "ServiceAccount", "name": "sa", "namespace": "n"}],
        },
        ("subjects", 0),
        {"kind": "ServiceAccount", "name": "sa", "namespace": "n"},
    ),
    (
        "networking.k8s.io",
        "NetworkPolicy",
        lambda: {"spec": {"policyTypes": ["Egress"]}},
        ("spec", "policyTypes"),
        ["Egress"],
    ),
    (
        "storage.k8s.io",
        "StorageClass",
        lambda: {"reclaimPolicy": "Retain"},
        ("reclaimPolicy",),
        "Retain",
    ),
    (
        "scheduling.k8s.io",
        "PriorityClass",
        lambda: {"preemptionPolicy": "Never"},
        ("preemptionPolicy",),
        "Never",
    ),
]


@pytest.mark.parametrize("case", KEEP_CASES, ids=[case_id(c) for c in KEEP_CASES])
def test_explicit_values_are_kept(case: Case) -> None:
    group, kind, make, path, expected = case
    obj = make()
    apply_defaults(group, kind, obj)
    assert get(obj, path) == expected


# ---------------------------------------------------------------------------------------------
# Where upstream itself overwrites


def test_namespace_name_label_tracks_the_name() -> None:
    obj = namespace("prod")
    obj["metadata"]["labels"] = {"kubernetes.io/metadata.name": "spoofed", "team": "a"}
    apply_defaults("", "Namespace", obj)
    assert obj["metadata"]["labels"] == {"kubernetes.io/metadata.name": "prod", "team": "a"}


def test_namespace_without_a_name_gets_no_label() -> None:
    obj: Obj = {"metadata": {"generateName": "ns-"}}
    apply_defaults("", "Namespace", obj)
    assert "labels" not in obj["metadata"]
    assert obj["status"] == {"phase": "Active"}


def test_session_affinity_config_dropped_without_affinity() -> None:
    obj = service(sessionAffinityConfig={"clientIP": {"timeoutSeconds": 60}})
    apply_defaults("", "Service", obj)
    assert obj["spec"]["sessionAffinity"] == "None"
    assert "sessionAffinityConfig" not in obj["spec"]


def test_volume_claim_templates_read_back_as_v1_pvcs() -> None:
    obj = statefulset()
    obj["spec"]["volumeClaimTemplates"][0].update(apiVersion="v9", kind="Nonsense")
    apply_defaults("apps", "StatefulSet", obj)
    claim = obj["spec"]["volumeClaimTemplates"][0]
    assert (claim["apiVersion"], claim["kind"]) == ("v1", "PersistentVolumeClaim")


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ({"serviceAccountName": "web"}, ("web", "web")),
        ({"serviceAccount": "old"}, ("old", "old")),
        ({"serviceAccountName": "new", "serviceAccount": "old"}, ("new", "new")),
        ({}, (None, None)),
    ],
)
def test_service_account_alias(given: Obj, expected: tuple[str | None, str | None]) -> None:
    obj = pod(**given)
    apply_defaults("", "Pod", obj)
    assert (obj["spec"].get("serviceAccountName"), obj["spec"].get("serviceAccount")) == expected


# ---------------------------------------------------------------------------------------------
# imagePullPolicy


@pytest.mark.parametrize(
    ("image", "policy"),
    [
        ("nginx", "Always"),
        ("nginx:latest", "Always"),
        ("docker.io/library/nginx", "Always"),
        ("localhost:5000/team/app", "Always"),
        ("registry.example.com:5000/team/app:latest", "Always"),
        ("nginx:latest@sha256:" + "a" * 64, "Always"),
        ("nginx:1.25", "IfNotPresent"),
        ("registry.k8s.io/pause:3.9", "IfNotPresent"),
        ("nginx@sha256:" + "a" * 64, "IfNotPresent"),
        ("nginx:Latest", "IfNotPresent"),
        ("Nginx", "IfNotPresent"),  # does not parse: repository names are lowercase
        ("nginx@sha256:abc", "IfNotPresent"),  # invalid digest
        ("a" * 64, "IfNotPresent"),  # bare image ID
        ("", "IfNotPresent"),
    ],
)
def test_image_pull_policy(image: str, policy: str) -> None:
    obj = with_container(image=image)
    apply_defaults("", "Pod", obj)
    assert obj["spec"]["containers"][0]["imagePullPolicy"] == policy


def test_container_without_image_gets_if_not_present() -> None:
    obj = pod(containers=[{"name": "c"}])
    apply_defaults("", "Pod", obj)
    assert obj["spec"]["containers"][0]["imagePullPolicy"] == "IfNotPresent"


# ---------------------------------------------------------------------------------------------
# Idempotence, unknown kinds, malformed input


def rich_pod() -> Obj:
    return pod(
        hostNetwork=True,
        serviceAccount="legacy",
        initContainers=[
            container(name="init", image="busybox", resources={"limits": {"cpu": "1"}})
        ],
        containers=[
            container(
                ports=[{"containerPort": 80}],
                env=[{"name": "N", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}}],
                resources={"limits": {"memory": "1Gi"}},
                livenessProbe={"httpGet": {"port": 80}},
                readinessProbe={"grpc": {"port": 9000}},
                startupProbe={"exec": {"command": ["true"]}},
                lifecycle={"postStart": {"httpGet": {"port": 80}}},
            )
        ],
        volumes=[
            {"name": "a"},
            {"name": "b", "secret": {"secretName": "s"}},
            {"name": "c", "projected": {"sources": [{"serviceAccountToken": {"path": "t"}}]}},
            {"name": "d", "hostPath": {"path": "/d"}},
            {"name": "e", "ephemeral": {"volumeClaimTemplate": {"spec": {}}}},
        ],
    )


IDEMPOTENCE_CASES: list[tuple[str, str, Callable[[], Obj]]] = [
    ("", "Pod", rich_pod),
    ("apps", "Deployment", lambda: workload("Deployment")),
    ("apps", "ReplicaSet", lambda: workload("ReplicaSet")),
    ("apps", "DaemonSet", lambda: workload("DaemonSet")),
    ("apps", "StatefulSet", statefulset),
    ("batch", "Job", lambda: workload("Job", podFailurePolicy={"rules": []})),
    ("batch", "CronJob", lambda: {"spec": {"jobTemplate": {"spec": {"template": template()}}}}),
    ("", "Service", lambda: service(type="LoadBalancer", sessionAffinity="ClientIP")),
    ("", "Namespace", namespace),
    ("", "PersistentVolumeClaim", pvc),
    ("", "PersistentVolume", lambda: {"spec": {"rbd": {"image": "i"}}}),
    ("", "Secret", dict),
    ("", "Node", lambda: {"status": {"capacity": {"cpu": "1"}}}),
    ("", "ReplicationController", lambda: {"spec": {"template": template()}}),
    ("", "PodTemplate", lambda: {"template": template()}),
    ("networking.k8s.io", "NetworkPolicy", lambda: {"spec": {"ingress": [{"ports": [{}]}]}}),
    (
        "apiextensions.k8s.io",
        "CustomResourceDefinition",
        lambda: {"spec": {"names": {"kind": "W"}}},
    ),
]


@pytest.mark.parametrize(
    ("group", "kind", "make"),
    IDEMPOTENCE_CASES,
    ids=[f"{g or 'core'}/{k}" for g, k, _ in IDEMPOTENCE_CASES],
)
def test_defaulting_twice_is_a_no_op(group: str, kind: str, make: Callable[[], Obj]) -> None:
    obj = make()
    apply_defaults(group, kind, obj)
    once = copy.deepcopy(obj)
    apply_defaults(group, kind, obj)
    assert obj == once


@pytest.mark.parametrize(
    ("group", "kind"),
    [
        ("example.com", "Widget"),
        ("", "ConfigMap"),  # upstream's empty data map is omitted on the wire: nothing visible
        ("", "Event"),
        ("", "ServiceAccount"),
        ("apps", "ControllerRevision"),
        ("coordination.k8s.io", "Lease"),  # no upstream defaults for Lease
        ("", "pod"),  # kinds are case-sensitive
        ("core", "Pod"),  # the core group is ""
        ("extensions", "Deployment"),
    ],
)
def test_unknown_or_default_free_kinds_are_untouched(group: str, kind: str) -> None:
    obj = {"apiVersion": "x/v1", "kind": kind, "metadata": {"name": "n"}, "spec": pod_spec()}
    before = copy.deepcopy(obj)
    apply_defaults(group, kind, obj)
    assert obj == before


MALFORMED: list[tuple[str, str, Obj]] = [
    ("", "Pod", {"spec": "nope"}),
    ("", "Pod", {"spec": {"containers": "nope", "volumes": [1, None, "x"]}}),
    ("", "Pod", {"spec": {"containers": [None, {"resources": {"limits": ["cpu"]}}]}}),
    (
        "",
        "Pod",
        {"spec": {"containers": [{"image": 5, "livenessProbe": "x", "env": [{"valueFrom": 1}]}]}},
    ),
    ("apps", "Deployment", {"spec": {"strategy": "x", "template": []}}),
    (
        "apps",
        "StatefulSet",
        {"spec": {"updateStrategy": {"rollingUpdate": 3}, "volumeClaimTemplates": [7]}},
    ),
    (
        "",
        "Service",
        {"spec": {"ports": [None], "sessionAffinity": "ClientIP", "sessionAffinityConfig": 1}},
    ),
    ("", "Namespace", {"metadata": {"name": "n", "labels": []}, "status": "x"}),
    ("batch", "Job", {"spec": {"podFailurePolicy": {"rules": [{"onPodConditions": [None]}]}}}),
]


@pytest.mark.parametrize(("group", "kind", "obj"), MALFORMED)
def test_malformed_input_does_not_raise(group: str, kind: str, obj: Obj) -> None:
    apply_defaults(group, kind, obj)


def test_cron_job_template_gets_no_job_level_defaults() -> None:
    obj = cron_job()
    apply_defaults("batch", "CronJob", obj)
    assert set(obj["spec"]["jobTemplate"]["spec"]) == {"template"}


def test_job_with_only_parallelism_leaves_completions_unset() -> None:
    obj = workload("Job", parallelism=2)
    apply_defaults("batch", "Job", obj)
    assert "completions" not in obj["spec"]
    assert obj["spec"]["parallelism"] == 2


def test_template_holders_share_nothing_with_template_labels() -> None:
    obj = workload("Job")
    apply_defaults("batch", "Job", obj)
    obj["metadata"]["labels"]["extra"] = "1"
    assert obj["spec"]["template"]["metadata"]["labels"] == {"app": "x"}


def test_requests_are_not_created_from_empty_limits() -> None:
    obj = with_container(resources={"limits": {}})
    apply_defaults("", "Pod", obj)
    assert obj["spec"]["containers"][0]["resources"] == {"limits": {}}


def test_volume_with_a_source_gets_no_empty_dir() -> None:
    obj = with_volume(csi={"driver": "d"})
    apply_defaults("", "Pod", obj)
    assert "emptyDir" not in obj["spec"]["volumes"][0]


# ---------------------------------------------------------------------------------------------
# Create-only namespace preparation


@pytest.mark.parametrize(
    ("finalizers", "expected"),
    [
        (None, ["kubernetes"]),
        ([], ["kubernetes"]),
        (["example.com/x"], ["example.com/x", "kubernetes"]),
        (["kubernetes"], ["kubernetes"]),
    ],
)
def test_prepare_namespace_for_create(finalizers: list[str] | None, expected: list[str]) -> None:
    obj = namespace()
    obj["status"] = {"phase": "Terminating"}
    if finalizers is not None:
        obj["spec"] = {"finalizers": finalizers}
    prepare_for_create("", "Namespace", obj)
    assert obj["spec"]["finalizers"] == expected
    assert obj["status"] == {"phase": "Active"}


def test_apply_defaults_never_adds_namespace_finalizers() -> None:
    obj = namespace()
    obj["spec"] = {"finalizers": []}
    apply_defaults("", "Namespace", obj)
    assert obj["spec"] == {"finalizers": []}


def test_prepare_for_create_ignores_other_kinds() -> None:
    obj = pod()
    before = copy.deepcopy(obj)
    prepare_for_create("", "Pod", obj)
    assert obj == before
