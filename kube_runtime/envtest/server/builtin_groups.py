"""The per-group modules of the built-in API groups (``builtin_<group>.py``), collected.

:data:`CHECKS` maps ``(group, kind)`` to the kind's own validation (run by
:mod:`.strategy` after :func:`.validation.validate`'s object-meta checks),
:data:`COLUMNS` maps ``(group, plural)`` to its table printer (read by
:func:`.tables.columns_for`) and :data:`INITIAL_STATUS` to the status a created object reads
back with (kube-apiserver's strategies reset it on create, and Go writes the fields of the
status struct that carry no ``omitempty``). A new group module registers its kinds here, one
:class:`BuiltinKind` each in :data:`KINDS` (the per-hook tables are derived from it).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
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
    "KINDS",
    "PREPARE",
    "ROW_ORDER",
    "BuiltinKind",
    "check",
    "initial_status",
    "prepare",
]

Check = Callable[[list[Cause], Mapping[str, Any], Mapping[str, Any] | None], None]
Prepare = Callable[[dict[str, Any], Mapping[str, Any] | None], None]
Converter = Callable[[list[dict[str, Any]], str], list[dict[str, Any]]]


@dataclass(frozen=True)
class BuiltinKind:
    """One built-in kind's hooks, registered once under its (group, plural) ``key``."""

    key: tuple[str, str]
    kind: str
    #: Its own validation (keyed by (group, kind) in :data:`CHECKS`).
    check: Check | None = None
    #: Its table printer's columns.
    columns: list[Column] | None = None
    #: The status a created object starts with.
    status: Callable[[], dict[str, Any]] | None = None
    #: What its registry strategy changes before defaulting (``old`` None: on create).
    prepare: Prepare | None = None
    #: ``convert(objects, version)`` for a kind whose served versions' fields differ.
    convert: Converter | None = None
    #: The key its printer orders a list's rows by.
    row_order: Callable[[Mapping[str, Any]], Any] | None = None


_K = BuiltinKind
_RBAC, _STORAGE, _NET = rbac.GROUP, storage.GROUP, networking.GROUP

#: Every built-in kind with a hook here (kinds without one are served as sent).
KINDS: Final[tuple[BuiltinKind, ...]] = (
    _K(("apps", "daemonsets"), "DaemonSet", None, workloads.DAEMON_SET_COLUMNS,
       status=workloads.initial_daemon_set_status, prepare=workloads.prepare_daemon_set),
    _K(("batch", "jobs"), "Job", workloads.check_job, workloads.JOB_COLUMNS, status=dict,
       prepare=workloads.prepare_job),
    _K(("batch", "cronjobs"), "CronJob", workloads.check_cron_job, workloads.CRON_JOB_COLUMNS,
       status=dict),
    _K(("policy", "poddisruptionbudgets"), "PodDisruptionBudget", workloads.check_pdb,
       workloads.PDB_COLUMNS, status=workloads.initial_pdb_status),
    _K(("", "replicationcontrollers"), "ReplicationController",
       core.check_replication_controller, core.REPLICATION_CONTROLLER_COLUMNS,
       status=lambda: {"replicas": 0}),
    _K(("", "podtemplates"), "PodTemplate", core.check_pod_template, core.POD_TEMPLATE_COLUMNS),
    _K(("", "resourcequotas"), "ResourceQuota", core.check_resource_quota,
       core.RESOURCE_QUOTA_COLUMNS, status=dict),
    _K(("", "limitranges"), "LimitRange", core.check_limit_range, core.LIMIT_RANGE_COLUMNS),
    _K(("", "persistentvolumes"), "PersistentVolume", core.check_persistent_volume,
       core.PERSISTENT_VOLUME_COLUMNS, status=lambda: {"phase": "Pending"},
       prepare=core.prepare_persistent_volume),
    _K((autoscaling.GROUP, "horizontalpodautoscalers"), "HorizontalPodAutoscaler",
       autoscaling.check_hpa, autoscaling.HPA_COLUMNS, status=autoscaling.initial_hpa_status,
       convert=autoscaling.convert_hpas),
    _K((_NET, "ingresses"), "Ingress", networking.check_ingress, networking.INGRESS_COLUMNS,
       status=networking.initial_ingress_status),
    _K((_NET, "ingressclasses"), "IngressClass", networking.check_ingress_class,
       networking.INGRESS_CLASS_COLUMNS),
    _K((_NET, "networkpolicies"), "NetworkPolicy", networking.check_network_policy,
       networking.NETWORK_POLICY_COLUMNS),
    _K((discovery.GROUP, "endpointslices"), "EndpointSlice", discovery.check_endpoint_slice,
       discovery.ENDPOINT_SLICE_COLUMNS, convert=discovery.convert_endpoint_slices),
    _K((_RBAC, "roles"), "Role", rbac.check_role, rbac.ROLE_COLUMNS),
    _K((_RBAC, "clusterroles"), "ClusterRole", rbac.check_cluster_role, rbac.ROLE_COLUMNS),
    _K((_RBAC, "rolebindings"), "RoleBinding", rbac.check_binding, rbac.BINDING_COLUMNS),
    _K((_RBAC, "clusterrolebindings"), "ClusterRoleBinding", rbac.check_cluster_binding,
       rbac.BINDING_COLUMNS),
    _K(certificates.KEY, "CertificateSigningRequest", certificates.check_csr,
       certificates.CSR_COLUMNS, status=dict, prepare=certificates.prepare_csr),
    _K(("scheduling.k8s.io", "priorityclasses"), "PriorityClass",
       scheduling.check_priority_class, scheduling.PRIORITY_CLASS_COLUMNS),
    _K(("node.k8s.io", "runtimeclasses"), "RuntimeClass", scheduling.check_runtime_class,
       scheduling.RUNTIME_CLASS_COLUMNS),
    _K((_STORAGE, "storageclasses"), "StorageClass", storage.check_storage_class,
       storage.STORAGE_CLASS_COLUMNS),
    _K((_STORAGE, "csidrivers"), "CSIDriver", storage.check_csi_driver,
       storage.CSI_DRIVER_COLUMNS),
    _K((_STORAGE, "csinodes"), "CSINode", storage.check_csi_node, storage.CSI_NODE_COLUMNS),
    _K((_STORAGE, "volumeattachments"), "VolumeAttachment", storage.check_volume_attachment,
       storage.VOLUME_ATTACHMENT_COLUMNS, status=lambda: {"attached": False}),
    _K(("", "events"), "Event", events.check_legacy, prepare=events.encode_core),
    _K(events.KEY, "Event", events.check_strict, convert=events.convert_events),
    _K(flowcontrol.FLOW_SCHEMA_KEY, "FlowSchema", flowcontrol.check_flow_schema,
       flowcontrol.FLOW_SCHEMA_COLUMNS, status=dict, prepare=flowcontrol.default_flow_schema,
       row_order=flowcontrol.flow_schema_order),
    _K(flowcontrol.PRIORITY_LEVEL_KEY, "PriorityLevelConfiguration",
       flowcontrol.check_priority_level, flowcontrol.PRIORITY_LEVEL_COLUMNS, status=dict,
       prepare=flowcontrol.default_priority_level),
)  # fmt: skip

#: (group, kind) -> the kind's own validation.
CHECKS: Final[dict[tuple[str, str], Check]] = {
    (k.key[0], k.kind): k.check for k in KINDS if k.check is not None
}
#: (group, plural) -> its table printer's columns (read by :func:`.tables.columns_for`).
COLUMNS: Final[dict[tuple[str, str], list[Column]]] = {
    k.key: k.columns for k in KINDS if k.columns is not None
}
#: Kinds whose printer orders a list's rows (upstream sorts them before printing): a key.
ROW_ORDER: Final[dict[tuple[str, str], Callable[[Mapping[str, Any]], Any]]] = {
    k.key: k.row_order for k in KINDS if k.row_order is not None
}
#: (group, plural) -> the status a created object starts with.
INITIAL_STATUS: Final[dict[tuple[str, str], Callable[[], dict[str, Any]]]] = {
    k.key: k.status for k in KINDS if k.status is not None
}
#: What a kind's registry strategy changes before defaulting (``old`` None: on create).
PREPARE: Final[dict[tuple[str, str], Prepare]] = {
    k.key: k.prepare for k in KINDS if k.prepare is not None
}
#: Built-in kinds served in several versions whose fields differ, by the served (group,
#: plural): ``convert(objects, version)`` (the others are served by rewriting
#: ``apiVersion``; a view's converter also takes ``""``: its stored form).
CONVERTERS: Final[dict[tuple[str, str], Converter]] = {
    k.key: k.convert for k in KINDS if k.convert is not None
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
