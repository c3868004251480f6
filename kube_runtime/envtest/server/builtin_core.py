"""Core ``v1`` kinds served besides the basics: ReplicationController, PodTemplate,
ResourceQuota, LimitRange, PersistentVolume.

Validation follows upstream's ``pkg/apis/core/validation`` (paths, reasons, messages), the
table printers ``pkg/printers/internalversion/printers.go`` as kube-apiserver 1.20 renders
them (LimitRange has none: the default Name / Created At). ReplicationController and
PodTemplate defaults are :mod:`.defaults`' (pod template defaults, RC labels and selector from
the template); :func:`default_limit_range` is registered there.
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import Any, Final

from kube_runtime.envtest.server import fielderrors as fe
from kube_runtime.envtest.server.errors import Cause
from kube_runtime.envtest.server.tables import (
    AGE,
    DEFAULT_COLUMNS,
    NAME,
    Column,
    _col,
    _get,
    _int,
    _wide,
    access_modes,
    canonical_quantity,
    format_labels,
    layout_containers,
)
from kube_runtime.envtest.server.validation import (
    NOT_SUPPORTED,
    _mapping_field,
    _nonnegative_fields,
    _quantity,
    _validate_annotations,
    _validate_labels,
    _validate_pod_spec,
    _validate_pod_template,
    is_qualified_name,
)

__all__ = [
    "LIMIT_RANGE_COLUMNS",
    "PERSISTENT_VOLUME_COLUMNS",
    "POD_TEMPLATE_COLUMNS",
    "REPLICATION_CONTROLLER_COLUMNS",
    "RESOURCE_QUOTA_COLUMNS",
    "check_limit_range",
    "check_persistent_volume",
    "check_pod_template",
    "check_replication_controller",
    "check_resource_quota",
    "default_limit_range",
    "prepare_persistent_volume",
]

_NEGATIVE: Final = "must be greater than or equal to 0"


# ------------------------------------------------------------------------------ ReplicationController


def check_replication_controller(
    out: list[Cause], obj: Mapping[str, Any], old: Mapping[str, Any] | None
) -> None:
    """Upstream ``ValidateReplicationControllerSpec``: non-negative ``minReadySeconds`` and
    ``replicas``, a non-empty selector matching the template's labels, a pod template that
    restarts ``Always``."""
    spec = _mapping_field(out, "spec", obj.get("spec"))
    _nonnegative_fields(out, "spec", spec, "minReadySeconds", "replicas")
    selector = fe.as_map(spec.get("selector"))
    if not selector:
        out.append(fe.required("spec.selector"))
    raw_template = spec.get("template")
    if raw_template is None:
        out.append(fe.required("spec.template"))
        return
    template = _mapping_field(out, "spec.template", raw_template)
    labels = fe.as_map(fe.as_map(template.get("metadata")).get("labels"))
    if selector and any(labels.get(k) != v for k, v in selector.items()):
        out.append(
            fe.invalid(
                "spec.template.metadata.labels",
                dict(labels),
                "`selector` does not match template `labels`",
            )
        )
    _validate_pod_template(out, "spec.template", template, "ReplicationController")


def _template_containers(obj: Mapping[str, Any]) -> Any:
    return _get(obj, "spec", "template", "spec", "containers")


REPLICATION_CONTROLLER_COLUMNS: Final[list[Column]] = [
    NAME,
    _col("Desired", lambda o: _int(_get(o, "spec", "replicas")), "integer"),
    _col("Current", lambda o: _int(_get(o, "status", "replicas")), "integer"),
    _col("Ready", lambda o: _int(_get(o, "status", "readyReplicas")), "integer"),
    AGE,
    _wide("Containers", lambda o: layout_containers(_template_containers(o))[0]),
    _wide("Images", lambda o: layout_containers(_template_containers(o))[1]),
    _wide("Selector", lambda o: format_labels(_get(o, "spec", "selector"))),
]


# ------------------------------------------------------------------------------ PodTemplate


def check_pod_template(
    out: list[Cause], obj: Mapping[str, Any], old: Mapping[str, Any] | None
) -> None:
    """Upstream ``ValidatePodTemplate``: the template's labels, annotations and pod spec."""
    template = _mapping_field(out, "template", obj.get("template"))
    meta = _mapping_field(out, "template.metadata", template.get("metadata"))
    _validate_labels(out, "template.labels", meta.get("labels"))
    _validate_annotations(out, "template.annotations", meta.get("annotations"))
    spec = _mapping_field(out, "template.spec", template.get("spec"))
    _validate_pod_spec(out, "template.spec", spec, is_pod=False)


POD_TEMPLATE_COLUMNS: Final[list[Column]] = [
    NAME,
    _col("Containers", lambda o: layout_containers(_get(o, "template", "spec", "containers"))[0]),
    _col("Images", lambda o: layout_containers(_get(o, "template", "spec", "containers"))[1]),
    _col("Pod Labels", lambda o: format_labels(_get(o, "template", "metadata", "labels"))),
]


# ------------------------------------------------------------------------------ ResourceQuota


def _check_quantities(out: list[Cause], path: str, values: Any) -> None:
    for name, raw in fe.as_map(values).items():
        value = _quantity(raw)
        if value is None:
            out.append(
                fe.invalid(
                    f"{path}[{name}]",
                    raw,
                    "quantities must match the regular expression "
                    "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
                )
            )
        elif value < 0:
            out.append(fe.invalid(f"{path}[{name}]", str(raw), _NEGATIVE))


def check_resource_quota(
    out: list[Cause], obj: Mapping[str, Any], old: Mapping[str, Any] | None
) -> None:
    """Upstream ``ValidateResourceQuota``: non-negative quantities in ``spec.hard`` and
    ``status.hard`` / ``status.used``."""
    _check_quantities(out, "spec.hard", _get(obj, "spec", "hard"))
    _check_quantities(out, "status.hard", _get(obj, "status", "hard"))
    _check_quantities(out, "status.used", _get(obj, "status", "used"))


def _quota_cells(obj: Mapping[str, Any]) -> tuple[str, str]:
    """Upstream ``printResourceQuota``: ``name: used/hard`` of each resource of
    ``status.hard``, sorted, ``limits.*`` in the Limit cell and the rest in Request."""
    hard = fe.as_map(_get(obj, "status", "hard"))
    used = fe.as_map(_get(obj, "status", "used"))
    request: list[str] = []
    limit: list[str] = []
    for name in sorted(hard):
        text = (
            f"{name}: {canonical_quantity(used.get(name)) or '0'}/{canonical_quantity(hard[name])}"
        )
        (limit if name.split(".")[0] == "limits" and "." in name else request).append(text)
    return ", ".join(request), ", ".join(limit)


RESOURCE_QUOTA_COLUMNS: Final[list[Column]] = [
    NAME,
    AGE,
    _col("Request", lambda o: _quota_cells(o)[0]),
    _col("Limit", lambda o: _quota_cells(o)[1]),
]


# ------------------------------------------------------------------------------ LimitRange


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def default_limit_range(obj: dict[str, Any]) -> None:
    """Upstream ``SetDefaults_LimitRangeItem``: a Container item's ``default`` takes ``max``
    where unset, its ``defaultRequest`` takes ``default``, then ``min``."""
    spec = obj.get("spec")
    limits = spec.get("limits") if isinstance(spec, dict) else None
    for item in limits if isinstance(limits, list) else ():
        if not isinstance(item, dict) or item.get("type") != "Container":
            continue
        default = _dict(item.get("default"))
        request = _dict(item.get("defaultRequest"))
        for name, value in fe.as_map(item.get("max")).items():
            default.setdefault(name, value)
        for source in (default, fe.as_map(item.get("min"))):
            for name, value in source.items():
                request.setdefault(name, value)
        if default:
            item["default"] = default
        if request:
            item["defaultRequest"] = request


def check_limit_range(
    out: list[Cause], obj: Mapping[str, Any], old: Mapping[str, Any] | None
) -> None:
    """Upstream ``ValidateLimitRange``, the checks users meet: each item's type is a
    qualified name and the quantities are valid, with ``min <= default request <= default <= max``
    (reported with the values as quantities)."""
    limits = fe.as_map(obj.get("spec")).get("limits")
    for i, raw in enumerate(limits if isinstance(limits, list) else ()):
        item = fe.as_map(raw)
        path = f"spec.limits[{i}]"
        limit_type = item.get("type")
        for msg in is_qualified_name(limit_type if isinstance(limit_type, str) else ""):
            out.append(fe.invalid(f"{path}.type", limit_type or "", msg))
        values: dict[str, dict[str, Decimal]] = {}
        for key in ("max", "min", "default", "defaultRequest", "maxLimitRequestRatio"):
            parsed: dict[str, Decimal] = {}
            for name, text in fe.as_map(item.get(key)).items():
                value = _quantity(text)
                if value is None:
                    out.append(fe.invalid(f"{path}.{key}[{name}]", text, "must be a quantity"))
                else:
                    parsed[name] = value
            values[key] = parsed
        low, high = values["min"], values["max"]
        for name in sorted(set(low) & set(high)):
            if low[name] > high[name]:
                out.append(
                    fe.invalid(
                        f"{path}.min[{name}]",
                        fe.as_map(item.get("min"))[name],
                        f"min value {_text(low[name])} is greater than max value {_text(high[name])}",
                    )
                )
        for key, label in (("defaultRequest", "default request"), ("default", "default")):
            for name, value in sorted(values[key].items()):
                if name in low and low[name] > value:
                    out.append(
                        fe.invalid(
                            f"{path}.{key}[{name}]",
                            fe.as_map(item.get(key))[name],
                            f"min value {_text(low[name])} is greater than {label} value "
                            f"{_text(value)}",
                        )
                    )
                if name in high and value > high[name]:
                    out.append(
                        fe.invalid(
                            f"{path}.{key}[{name}]",
                            fe.as_map(item.get(key))[name],
                            f"{label} value {_text(value)} is greater than max value "
                            f"{_text(high[name])}",
                        )
                    )


def _text(value: Decimal) -> str:
    return canonical_quantity(format(value.normalize(), "f"))


#: LimitRange has no printer upstream: the default convertor's Name / Created At.
LIMIT_RANGE_COLUMNS: Final[list[Column]] = list(DEFAULT_COLUMNS)


# ------------------------------------------------------------------------------ PersistentVolume

_PV_PROTECTION: Final = "kubernetes.io/pv-protection"  # removed by :mod:`.pvprotection`
_PV_SOURCES: Final = (
    "awsElasticBlockStore", "azureDisk", "azureFile", "cephfs", "cinder", "csi", "fc",
    "flexVolume", "flocker", "gcePersistentDisk", "glusterfs", "hostPath", "iscsi", "local",
    "nfs", "photonPersistentDisk", "portworxVolume", "quobyte", "rbd", "scaleIO", "storageos",
    "vsphereVolume",
)  # fmt: skip


def prepare_persistent_volume(obj: dict[str, Any], old: Mapping[str, Any] | None) -> None:
    """On create, the ``kubernetes.io/pv-protection`` finalizer kube-apiserver's
    StorageObjectInUseProtection admission adds."""
    meta = obj.get("metadata")
    if old is not None or not isinstance(meta, dict):
        return
    finalizers = meta.get("finalizers")
    if not isinstance(finalizers, list):
        finalizers = meta["finalizers"] = []
    if _PV_PROTECTION not in finalizers:
        finalizers.append(_PV_PROTECTION)


def check_persistent_volume(
    out: list[Cause], obj: Mapping[str, Any], old: Mapping[str, Any] | None
) -> None:
    """Upstream ``ValidatePersistentVolumeSpec``, the checks users meet: access modes, a
    ``storage`` capacity, exactly one volume source."""
    spec = fe.as_map(obj.get("spec"))
    if not spec.get("accessModes"):
        out.append(fe.required("spec.accessModes"))
    capacity = fe.as_map(spec.get("capacity"))
    if not capacity:
        out.append(fe.required("spec.capacity"))
        out.append(
            Cause(
                "spec.capacity",
                NOT_SUPPORTED,
                'Unsupported value: core.ResourceList(nil): supported values: "storage"',
            )
        )
    elif set(capacity) != {"storage"}:
        out.append(fe.not_supported("spec.capacity", dict(capacity), ("storage",)))
    else:
        _check_quantities(out, "spec.capacity", capacity)
    sources = [key for key in _PV_SOURCES if spec.get(key) is not None]
    if not sources:
        out.append(fe.required("spec", "must specify a volume type"))
    elif len(sources) > 1:
        out.append(fe.forbidden(f"spec.{sources[1]}", "may not specify more than 1 volume type"))


def _claim(obj: Mapping[str, Any]) -> str:
    ref = fe.as_map(_get(obj, "spec", "claimRef"))
    if not ref:
        return ""
    return f"{ref.get('namespace') or ''}/{ref.get('name') or ''}"


PERSISTENT_VOLUME_COLUMNS: Final[list[Column]] = [
    NAME,
    _col("Capacity", lambda o: canonical_quantity(_get(o, "spec", "capacity", "storage"))),
    _col("Access Modes", lambda o: access_modes(_get(o, "spec", "accessModes"))),
    _col("Reclaim Policy", lambda o: str(_get(o, "spec", "persistentVolumeReclaimPolicy") or "")),
    _col(
        "Status",
        lambda o: (
            "Terminating"
            if fe.as_map(o.get("metadata")).get("deletionTimestamp")
            else str(_get(o, "status", "phase") or "")
        ),
    ),
    _col("Claim", _claim),
    _col("StorageClass", lambda o: str(_get(o, "spec", "storageClassName") or "")),
    _col("Reason", lambda o: str(_get(o, "status", "reason") or "")),
    AGE,
    _wide("VolumeMode", lambda o: str(_get(o, "spec", "volumeMode") or "<unset>")),
]
