"""``storage.k8s.io/v1`` as kube-apiserver serves it: StorageClass, CSIDriver, CSINode,
VolumeAttachment.

Validation follows upstream's ``pkg/apis/storage/validation`` decision by decision (paths,
reasons and messages), the table printers ``pkg/printers/internalversion/printers.go`` as
kube-apiserver 1.20 renders them. The defaults (StorageClass ``reclaimPolicy: Delete`` and
``volumeBindingMode: Immediate``; CSIDriver ``attachRequired``, ``podInfoOnMount``,
``volumeLifecycleModes``...) are applied by :mod:`.defaults`, which registers
:func:`default_csi_driver`.

Each ``check_*`` function appends :class:`~.errors.Cause` items for one object (``old`` is
None on create) and is registered in :mod:`.builtin_groups`; the object-meta checks (name
rule, scope) stay with :func:`.validation.validate`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from kube_runtime.envtest.server import fielderrors as fe
from kube_runtime.envtest.server.errors import Cause
from kube_runtime.envtest.server.tables import AGE, NAME, Column, _col, _get, _str
from kube_runtime.envtest.server.validation import _norm, is_dns1123_subdomain, is_qualified_name
from kube_runtime.validation import max_len_error

__all__ = [
    "CSI_DRIVER_COLUMNS",
    "CSI_NODE_COLUMNS",
    "GROUP",
    "STORAGE_CLASS_COLUMNS",
    "VOLUME_ATTACHMENT_COLUMNS",
    "check_csi_driver",
    "check_csi_node",
    "check_storage_class",
    "check_volume_attachment",
    "default_csi_driver",
]

GROUP: Final = "storage.k8s.io"

_MAX_PARAMETERS: Final = 512
_MAX_PARAMETERS_SIZE: Final = 256 * 1024
_RECLAIM_POLICIES: Final = ("Delete", "Retain")
_BINDING_MODES: Final = ("Immediate", "WaitForFirstConsumer")
_DEFAULT_CLASS_ANNOTATIONS: Final = (
    "storageclass.kubernetes.io/is-default-class",
    "storageclass.beta.kubernetes.io/is-default-class",
)
_CSI_DRIVER_NAME_MAX: Final = 63
_CSI_NODE_ID_MAX: Final = 128


# ------------------------------------------------------------------------------ StorageClass


def _check_parameters(out: list[Cause], params: Any) -> None:
    """Upstream ``validateParameters``: at most 512 entries of at most 256 KiB in all,
    no empty key."""
    if not isinstance(params, Mapping):
        return
    if len(params) > _MAX_PARAMETERS:
        out.append(fe.too_long("parameters", _MAX_PARAMETERS))
        return
    size = 0
    for key, value in params.items():
        if not key:
            out.append(fe.invalid("parameters", key, "field can not be empty."))
        size += len(key) + len(value if isinstance(value, str) else str(value))
    if size > _MAX_PARAMETERS_SIZE:
        out.append(fe.too_long("parameters", _MAX_PARAMETERS_SIZE))


def _check_topologies(out: list[Cause], terms: Any) -> None:
    """Upstream ``validateAllowedTopologies``: each term's expressions name a qualified key
    with at least one value; two equal terms are a duplicate."""
    seen: list[dict[str, frozenset[str]]] = []
    for i, term in enumerate(terms if isinstance(terms, list) else ()):
        path = f"allowedTopologies[{i}]"
        exprs: dict[str, frozenset[str]] = {}
        for j, expr in enumerate(fe.as_map(term).get("matchLabelExpressions") or ()):
            expr_path = f"{path}.matchLabelExpressions[{j}]"
            key = _str(fe.as_map(expr).get("key"))
            for msg in is_qualified_name(key):
                out.append(fe.invalid(f"{expr_path}.key", key, msg))
            values = fe.as_map(expr).get("values") or []
            if not values:
                out.append(fe.required(f"{expr_path}.values", "must specify as least one value"))
            if key in exprs:
                out.append(fe.duplicate(f"{expr_path}.key", key))
            exprs[key] = frozenset(str(v) for v in values)
        if exprs in seen:
            out.append(fe.duplicate(f"{path}.matchLabelExpressions", ""))
        seen.append(exprs)


def check_storage_class(
    out: list[Cause], obj: Mapping[str, Any], old: Mapping[str, Any] | None
) -> None:
    """Upstream ``ValidateStorageClass`` and, on update, ``ValidateStorageClassUpdate``
    (parameters, provisioner and reclaimPolicy forbidden to change; volumeBindingMode
    immutable)."""
    provisioner = obj.get("provisioner")
    if not provisioner:
        out.append(fe.required("provisioner"))
    elif isinstance(provisioner, str):
        for msg in is_qualified_name(provisioner.lower()):
            out.append(fe.invalid("provisioner", provisioner, msg))
    _check_parameters(out, obj.get("parameters"))
    reclaim = obj.get("reclaimPolicy")
    if reclaim and reclaim not in _RECLAIM_POLICIES:
        out.append(fe.not_supported("reclaimPolicy", reclaim, _RECLAIM_POLICIES))
    mode = obj.get("volumeBindingMode")
    if mode is None:
        out.append(fe.required("volumeBindingMode"))
    elif mode not in _BINDING_MODES:
        out.append(fe.not_supported("volumeBindingMode", mode, _BINDING_MODES))
    _check_topologies(out, obj.get("allowedTopologies"))
    if old is None:
        return
    if _norm(old.get("parameters") or {}) != _norm(obj.get("parameters") or {}):
        out.append(fe.forbidden("parameters", "updates to parameters are forbidden."))
    if (old.get("provisioner") or "") != (provisioner or ""):
        out.append(fe.forbidden("provisioner", "updates to provisioner are forbidden."))
    if old.get("reclaimPolicy") != reclaim:
        out.append(fe.forbidden("reclaimPolicy", "updates to reclaimPolicy are forbidden."))
    if old.get("volumeBindingMode") != mode:
        out.append(fe.invalid("volumeBindingMode", mode, fe.IMMUTABLE))


def _storage_class_name(obj: Mapping[str, Any]) -> str:
    """The name, with `` (default)`` for the default class (upstream ``IsDefaultAnnotation``)."""
    meta = fe.as_map(obj.get("metadata"))
    annotations = fe.as_map(meta.get("annotations"))
    default = any(annotations.get(key) == "true" for key in _DEFAULT_CLASS_ANNOTATIONS)
    return _str(meta.get("name")) + (" (default)" if default else "")


#: ``kubectl get storageclass``: NAME, PROVISIONER, RECLAIMPOLICY, VOLUMEBINDINGMODE,
#: ALLOWVOLUMEEXPANSION, AGE (unset policies print their defaults, expansion ``false``).
STORAGE_CLASS_COLUMNS: Final[list[Column]] = [
    Column("Name", "string", "name", 0, _storage_class_name),
    _col("Provisioner", lambda o: _str(o.get("provisioner"))),
    _col("ReclaimPolicy", lambda o: _str(o.get("reclaimPolicy")) or "Delete"),
    _col("VolumeBindingMode", lambda o: _str(o.get("volumeBindingMode")) or "Immediate"),
    _col("AllowVolumeExpansion", lambda o: o.get("allowVolumeExpansion") is True),
    AGE,
]


# ------------------------------------------------------------------------------ CSIDriver


def default_csi_driver(obj: dict[str, Any]) -> None:
    """Upstream ``SetDefaults_CSIDriver`` as kube-apiserver 1.20 applies it:
    ``attachRequired: true``, ``podInfoOnMount: false``, ``fsGroupPolicy:
    ReadWriteOnceWithFSType``, ``volumeLifecycleModes: [Persistent]`` (``storageCapacity``
    and ``requiresRepublish`` are behind gates 1.20 keeps off)."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    for key, value in (
        ("attachRequired", True),
        ("podInfoOnMount", False),
        ("fsGroupPolicy", "ReadWriteOnceWithFSType"),
    ):
        if spec.get(key) is None:
            spec[key] = value
    if not spec.get("volumeLifecycleModes"):
        spec["volumeLifecycleModes"] = ["Persistent"]


def _csi_driver_name_errors(name: str) -> list[str]:
    """Upstream ``ValidateCSIDriverName``: at most 63 characters, a DNS subdomain."""
    errors: list[str] = []
    if len(name) > _CSI_DRIVER_NAME_MAX:
        errors.append(max_len_error(_CSI_DRIVER_NAME_MAX))
    errors.extend(is_dns1123_subdomain(name.lower()))
    return errors


_LIFECYCLE_MODES: Final = ("Persistent", "Ephemeral")
_FS_GROUP_POLICIES: Final = ("File", "None", "ReadWriteOnceWithFSType")


def check_csi_driver(
    out: list[Cause], obj: Mapping[str, Any], old: Mapping[str, Any] | None
) -> None:
    """Upstream ``ValidateCSIDriver`` (name, required ``attachRequired`` and
    ``podInfoOnMount``, lifecycle modes, fsGroupPolicy) and, on update, an immutable spec."""
    name = _str(fe.as_map(obj.get("metadata")).get("name"))
    if not name:
        out.append(fe.required("name", "name is required"))
    for msg in _csi_driver_name_errors(name) if name else ():
        out.append(fe.invalid("name", name, msg))
    spec = fe.as_map(obj.get("spec"))
    if spec.get("attachRequired") is None:
        out.append(fe.required("spec.attachedRequired"))
    if spec.get("podInfoOnMount") is None:
        out.append(fe.required("spec.podInfoOnMount"))
    for mode in spec.get("volumeLifecycleModes") or ():
        if mode not in _LIFECYCLE_MODES:
            out.append(fe.not_supported("spec.volumeLifecycleModes", mode, _LIFECYCLE_MODES))
    policy = spec.get("fsGroupPolicy")
    if policy is not None and policy not in _FS_GROUP_POLICIES:
        out.append(fe.not_supported("spec.fsGroupPolicy", policy, _FS_GROUP_POLICIES))
    if old is not None and _norm(fe.as_map(old.get("spec"))) != _norm(spec):
        out.append(fe.invalid("spec", dict(spec), fe.IMMUTABLE))


def _modes(obj: Mapping[str, Any]) -> str:
    modes = _get(obj, "spec", "volumeLifecycleModes")
    return ",".join(str(m) for m in modes) if isinstance(modes, list) and modes else "<none>"


def _flag(*path: str) -> Any:
    def cell(obj: Mapping[str, Any]) -> Any:
        return _get(obj, *path) is True

    return cell


#: ``kubectl get csidriver`` as kube-apiserver 1.20 prints it (StorageCapacity,
#: TokenRequests and RequiresRepublish come with their gates, off in 1.20).
CSI_DRIVER_COLUMNS: Final[list[Column]] = [
    NAME,
    _col("AttachRequired", _flag("spec", "attachRequired"), "boolean"),
    _col("PodInfoOnMount", _flag("spec", "podInfoOnMount"), "boolean"),
    _col("Modes", _modes),
    AGE,
]


# ------------------------------------------------------------------------------ CSINode


def check_csi_node(out: list[Cause], obj: Mapping[str, Any], old: Mapping[str, Any] | None) -> None:
    """Upstream ``ValidateCSINode``: each driver a valid CSI driver name, unique, with a
    node ID of at most 128 characters and a non-negative allocatable count; on update an
    existing driver entry may not change."""
    names: set[str] = set()
    drivers = fe.as_map(obj.get("spec")).get("drivers")
    for i, raw in enumerate(drivers if isinstance(drivers, list) else ()):
        driver = fe.as_map(raw)
        path = f"spec.drivers[{i}]"
        name = _str(driver.get("name"))
        if not name:
            out.append(fe.required(f"{path}.name", "name is required"))
        for msg in _csi_driver_name_errors(name) if name else ():
            out.append(fe.invalid(f"{path}.name", name, msg))
        node_id = _str(driver.get("nodeID"))
        if not node_id:
            out.append(fe.required(f"{path}.nodeID"))
        elif len(node_id) > _CSI_NODE_ID_MAX:
            out.append(
                fe.invalid(
                    f"{path}.nodeID", node_id, f"must be {_CSI_NODE_ID_MAX} characters or less"
                )
            )
        count = fe.as_map(driver.get("allocatable")).get("count")
        if isinstance(count, int) and count < 0:
            out.append(
                fe.invalid(f"{path}.allocatable.count", count, "must be greater than or equal to 0")
            )
        if name in names:
            out.append(fe.duplicate(f"{path}.name", name))
        names.add(name)
    if old is None:
        return
    old_drivers = {
        _str(fe.as_map(d).get("name")): _norm(d)
        for d in fe.as_map(old.get("spec")).get("drivers") or ()
        if isinstance(d, Mapping)
    }
    for raw in drivers if isinstance(drivers, list) else ():
        name = _str(fe.as_map(raw).get("name"))
        if name in old_drivers and old_drivers[name] != _norm(raw):
            out.append(fe.invalid("CSINodeDriver", dict(fe.as_map(raw)), fe.IMMUTABLE))


CSI_NODE_COLUMNS: Final[list[Column]] = [
    NAME,
    _col(
        "Drivers",
        lambda o: len(d) if isinstance(d := _get(o, "spec", "drivers"), list) else 0,
        "integer",
    ),
    AGE,
]


# ------------------------------------------------------------------------------ VolumeAttachment


def check_volume_attachment(
    out: list[Cause], obj: Mapping[str, Any], old: Mapping[str, Any] | None
) -> None:
    """Upstream ``ValidateVolumeAttachment`` (+ the v1 checks): a CSI attacher name, exactly
    one source, a node name; on update the spec is immutable."""
    spec = fe.as_map(obj.get("spec"))
    attacher = _str(spec.get("attacher"))
    if not attacher:
        out.append(fe.required("spec.attacher"))
    source = fe.as_map(spec.get("source"))
    pv_name = source.get("persistentVolumeName")
    inline = source.get("inlineVolumeSpec")
    if pv_name is None and inline is None:
        out.append(
            fe.required(
                "spec.source",
                "must specify exactly one of inlineVolumeSpec and persistentVolumeName",
            )
        )
    elif pv_name is not None and inline is not None:
        out.append(
            fe.forbidden(
                "spec.source",
                "must specify exactly one of inlineVolumeSpec and persistentVolumeName",
            )
        )
    elif pv_name is not None and not pv_name:
        out.append(
            fe.required(
                "spec.source.persistentVolumeName", "must specify non empty persistentVolumeName"
            )
        )
    node = _str(spec.get("nodeName"))
    for msg in is_dns1123_subdomain(node):
        out.append(fe.invalid("spec.nodeName", node, msg))
    if attacher:
        for msg in _csi_driver_name_errors(attacher):
            out.append(fe.invalid("spec.attacher", attacher, msg))
    if isinstance(pv_name, str) and pv_name:
        for msg in is_dns1123_subdomain(pv_name):
            out.append(fe.invalid("spec.source.persistentVolumeName", pv_name, msg))
    if old is not None and _norm(fe.as_map(old.get("spec"))) != _norm(spec):
        out.append(fe.invalid("spec", dict(spec), fe.IMMUTABLE))


VOLUME_ATTACHMENT_COLUMNS: Final[list[Column]] = [
    NAME,
    Column("Attacher", "string", "name", 0, lambda o: _str(_get(o, "spec", "attacher"))),
    _col("PV", lambda o: _str(_get(o, "spec", "source", "persistentVolumeName"))),
    _col("Node", lambda o: _str(_get(o, "spec", "nodeName"))),
    _col("Attached", _flag("status", "attached"), "boolean"),
    AGE,
]
