"""The per-group modules of the built-in API groups (``builtin_<group>.py``), collected.

:data:`CHECKS` maps ``(group, kind)`` to the kind's own validation (run by
:mod:`.strategy` after :func:`.validation.validate`'s object-meta checks),
:data:`COLUMNS` maps ``(group, plural)`` to its table printer (read by
:func:`.tables.columns_for`) and :data:`INITIAL_STATUS` to the status a created object reads
back with (kube-apiserver's strategies reset it on create, and Go writes the fields of the
status struct that carry no ``omitempty``). A new group module registers its kinds here, one
line each.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

from kube_runtime.envtest.server import builtin_autoscaling as autoscaling
from kube_runtime.envtest.server import builtin_certificates as certificates
from kube_runtime.envtest.server import builtin_core as core
from kube_runtime.envtest.server import builtin_discovery as discovery
from kube_runtime.envtest.server import builtin_events as events
from kube_runtime.envtest.server import builtin_flowcontrol as flowcontrol
from kube_runtime.envtest.server import builtin_networking as networking
from kube_runtime.envtest.server import builtin_rbac as rbac
from kube_runtime.envtest.server import builtin_scheduling as scheduling
from kube_runtime.envtest.server import builtin_storage as storage
from kube_runtime.envtest.server import builtin_workloads as workloads
from kube_runtime.envtest.server.errors import Cause
from kube_runtime.envtest.server.tables import Column

__all__ = [
    "CHECKS",
    "COLUMNS",
    "CONVERTERS",
    "INITIAL_STATUS",
    "PREPARE",
    "ROW_ORDER",
    "check",
    "initial_status",
    "prepare",
]

Check = Callable[[list[Cause], Mapping[str, Any], Mapping[str, Any] | None], None]

CHECKS: Final[dict[tuple[str, str], Check]] = {
    ("batch", "Job"): workloads.check_job,
    ("batch", "CronJob"): workloads.check_cron_job,
    ("policy", "PodDisruptionBudget"): workloads.check_pdb,
    ("", "ReplicationController"): core.check_replication_controller,
    ("", "PodTemplate"): core.check_pod_template,
    ("", "ResourceQuota"): core.check_resource_quota,
    ("", "LimitRange"): core.check_limit_range,
    ("", "PersistentVolume"): core.check_persistent_volume,
    (autoscaling.GROUP, "HorizontalPodAutoscaler"): autoscaling.check_hpa,
    (networking.GROUP, "Ingress"): networking.check_ingress,
    (networking.GROUP, "IngressClass"): networking.check_ingress_class,
    (networking.GROUP, "NetworkPolicy"): networking.check_network_policy,
    (discovery.GROUP, "EndpointSlice"): discovery.check_endpoint_slice,
    (rbac.GROUP, "Role"): rbac.check_role,
    (rbac.GROUP, "ClusterRole"): rbac.check_cluster_role,
    (rbac.GROUP, "RoleBinding"): rbac.check_binding,
    (rbac.GROUP, "ClusterRoleBinding"): rbac.check_cluster_binding,
    (certificates.GROUP, "CertificateSigningRequest"): certificates.check_csr,
    ("scheduling.k8s.io", "PriorityClass"): scheduling.check_priority_class,
    ("node.k8s.io", "RuntimeClass"): scheduling.check_runtime_class,
    (storage.GROUP, "StorageClass"): storage.check_storage_class,
    (storage.GROUP, "CSIDriver"): storage.check_csi_driver,
    (storage.GROUP, "CSINode"): storage.check_csi_node,
    (storage.GROUP, "VolumeAttachment"): storage.check_volume_attachment,
    ("", "Event"): events.check_legacy,
    (events.GROUP, "Event"): events.check_strict,
    (flowcontrol.GROUP, "FlowSchema"): flowcontrol.check_flow_schema,
    (flowcontrol.GROUP, "PriorityLevelConfiguration"): flowcontrol.check_priority_level,
}

COLUMNS: Final[dict[tuple[str, str], list[Column]]] = {
    ("apps", "daemonsets"): workloads.DAEMON_SET_COLUMNS,
    ("batch", "jobs"): workloads.JOB_COLUMNS,
    ("batch", "cronjobs"): workloads.CRON_JOB_COLUMNS,
    ("policy", "poddisruptionbudgets"): workloads.PDB_COLUMNS,
    ("", "replicationcontrollers"): core.REPLICATION_CONTROLLER_COLUMNS,
    ("", "podtemplates"): core.POD_TEMPLATE_COLUMNS,
    ("", "resourcequotas"): core.RESOURCE_QUOTA_COLUMNS,
    ("", "limitranges"): core.LIMIT_RANGE_COLUMNS,
    ("", "persistentvolumes"): core.PERSISTENT_VOLUME_COLUMNS,
    (autoscaling.GROUP, "horizontalpodautoscalers"): autoscaling.HPA_COLUMNS,
    (networking.GROUP, "ingresses"): networking.INGRESS_COLUMNS,
    (networking.GROUP, "ingressclasses"): networking.INGRESS_CLASS_COLUMNS,
    (networking.GROUP, "networkpolicies"): networking.NETWORK_POLICY_COLUMNS,
    (discovery.GROUP, "endpointslices"): discovery.ENDPOINT_SLICE_COLUMNS,
    (rbac.GROUP, "roles"): rbac.ROLE_COLUMNS,
    (rbac.GROUP, "clusterroles"): rbac.ROLE_COLUMNS,
    (rbac.GROUP, "rolebindings"): rbac.BINDING_COLUMNS,
    (rbac.GROUP, "clusterrolebindings"): rbac.BINDING_COLUMNS,
    certificates.KEY: certificates.CSR_COLUMNS,
    ("scheduling.k8s.io", "priorityclasses"): scheduling.PRIORITY_CLASS_COLUMNS,
    ("node.k8s.io", "runtimeclasses"): scheduling.RUNTIME_CLASS_COLUMNS,
    (storage.GROUP, "storageclasses"): storage.STORAGE_CLASS_COLUMNS,
    (storage.GROUP, "csidrivers"): storage.CSI_DRIVER_COLUMNS,
    (storage.GROUP, "csinodes"): storage.CSI_NODE_COLUMNS,
    (storage.GROUP, "volumeattachments"): storage.VOLUME_ATTACHMENT_COLUMNS,
    flowcontrol.FLOW_SCHEMA_KEY: flowcontrol.FLOW_SCHEMA_COLUMNS,
    flowcontrol.PRIORITY_LEVEL_KEY: flowcontrol.PRIORITY_LEVEL_COLUMNS,
}

#: Kinds whose printer orders a list's rows (upstream sorts them before printing): a key.
ROW_ORDER: Final[dict[tuple[str, str], Callable[[Mapping[str, Any]], Any]]] = {
    flowcontrol.FLOW_SCHEMA_KEY: flowcontrol.flow_schema_order,
}

INITIAL_STATUS: Final[dict[tuple[str, str], Callable[[], dict[str, Any]]]] = {
    ("apps", "daemonsets"): workloads.initial_daemon_set_status,
    ("batch", "jobs"): dict,
    ("batch", "cronjobs"): dict,
    ("policy", "poddisruptionbudgets"): workloads.initial_pdb_status,
    ("", "replicationcontrollers"): lambda: {"replicas": 0},
    ("", "persistentvolumes"): lambda: {"phase": "Pending"},
    ("", "resourcequotas"): dict,
    (autoscaling.GROUP, "horizontalpodautoscalers"): autoscaling.initial_hpa_status,
    (networking.GROUP, "ingresses"): networking.initial_ingress_status,
    (storage.GROUP, "volumeattachments"): lambda: {"attached": False},
    certificates.KEY: dict,
    flowcontrol.FLOW_SCHEMA_KEY: dict,
    flowcontrol.PRIORITY_LEVEL_KEY: dict,
}

#: What a kind's registry strategy changes before defaulting (``old`` None: on create).
PREPARE: Final[
    dict[tuple[str, str], Callable[[dict[str, Any], Mapping[str, Any] | None], None]]
] = {
    ("apps", "daemonsets"): workloads.prepare_daemon_set,
    ("batch", "jobs"): workloads.prepare_job,
    ("", "persistentvolumes"): core.prepare_persistent_volume,
    certificates.KEY: certificates.prepare_csr,
    ("", "events"): events.encode_core,
    flowcontrol.FLOW_SCHEMA_KEY: flowcontrol.default_flow_schema,
    flowcontrol.PRIORITY_LEVEL_KEY: flowcontrol.default_priority_level,
}

#: Built-in kinds served in several versions whose fields differ, by the served (group,
#: plural): ``convert(objects, version)`` (the others are served by rewriting
#: ``apiVersion``; a view's converter also takes ``""``: its stored form).
CONVERTERS: Final[
    dict[tuple[str, str], Callable[[list[dict[str, Any]], str], list[dict[str, Any]]]]
] = {
    (autoscaling.GROUP, "horizontalpodautoscalers"): autoscaling.convert_hpas,
    (discovery.GROUP, "endpointslices"): discovery.convert_endpoint_slices,
    events.KEY: events.convert_events,
}


def check(
    group: str, kind: str, obj: Mapping[str, Any], old: Mapping[str, Any] | None
) -> list[Cause]:
    """The causes the kind's own validation finds (``[]`` for kinds without one here)."""
    found = CHECKS.get((group, kind))
    out: list[Cause] = []
    if found is not None:
        found(out, obj, old)
    return out


def initial_status(key: tuple[str, str]) -> dict[str, Any] | None:
    """The status a created object of resource ``key`` starts with; None: as sent."""
    factory = INITIAL_STATUS.get(key)
    return factory() if factory is not None else None


def prepare(key: tuple[str, str], obj: dict[str, Any], old: Mapping[str, Any] | None) -> None:
    """Run the kind's strategy step on ``obj`` (create when ``old`` is None), if it has one."""
    step = PREPARE.get(key)
    if step is not None:
        step(obj, old)
