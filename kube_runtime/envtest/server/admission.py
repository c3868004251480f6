"""Admission of the embedded API server: the plugins of kube-apiserver's default chain that
change what is stored.

kube-apiserver runs mutating admission after decoding and defaulting and before the registry
strategy validates; :class:`Admission` is called at the same point (from
:class:`~kube_runtime.envtest.server.strategy.KubeStrategy`), on the main resource only (a
subresource write keeps the spec and metadata these plugins look at). Three plugins, as
upstream (``plugin/pkg/admission/...``) has them:

**Priority** (pods, create): a pod without ``spec.priorityClassName`` gets the global default
class (the ``globalDefault: true`` class with the lowest value) or, when there is none,
``priority: 0`` and ``preemptionPolicy: PreemptLowerPriority``; a pod naming a class gets that
class's ``value`` and ``preemptionPolicy``. An unknown class name is refused (403
``no PriorityClass with name X was found``); so is a ``spec.priority`` or
``spec.preemptionPolicy`` sent by the client that differs from the computed one (an equal one
is accepted). On update a pod that omits ``priority``/``preemptionPolicy`` keeps the stored
values (validation forbids changing them). Which classes exist is asked of the
``priority_classes`` callable; without one only the two built-in classes are known,
``system-node-critical`` (2000001000) and ``system-cluster-critical`` (2000000000), both
``PreemptLowerPriority`` and neither the global default (kube-apiserver creates them as
objects at start; they are allowed in every namespace since Kubernetes 1.17).

**DefaultTolerationSeconds** (pods, create and update): unless the pod already tolerates the
``NoExecute`` taints ``node.kubernetes.io/not-ready`` and ``node.kubernetes.io/unreachable``,
the missing ones are appended as ``{key, operator: Exists, effect: NoExecute,
tolerationSeconds: 300}`` (not-ready first). A toleration counts when its key is that taint's
key or empty and its effect is ``NoExecute`` or empty, whatever its operator or value.

**StorageObjectInUseProtection** (create): a PersistentVolumeClaim gets the finalizer
``kubernetes.io/pvc-protection`` appended unless it has it (a PersistentVolume gets
``kubernetes.io/pv-protection`` on creation, :mod:`kube_runtime.envtest.server.pvprotection`).
The finalizer is removed by the pvc-protection controller
(:mod:`kube_runtime.envtest.server.pvcprotection`).

Refusals are 403 Forbidden Status errors worded as kube-apiserver's
(``pods "NAME" is forbidden: ...``). The functions mutate the object in place and never read
anything but the object, its old version and ``priority_classes``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from types import MappingProxyType
from typing import Any, NoReturn

from kube_runtime.envtest.server.errors import ApiError, api_error
from kube_runtime.envtest.server.resources import ResourceInfo
from kube_runtime.meta import Obj

PVC_PROTECTION_FINALIZER = "kubernetes.io/pvc-protection"
PV_PROTECTION_FINALIZER = "kubernetes.io/pv-protection"

TAINT_NOT_READY = "node.kubernetes.io/not-ready"
TAINT_UNREACHABLE = "node.kubernetes.io/unreachable"
DEFAULT_TOLERATION_SECONDS = 300

PREEMPT_LOWER_PRIORITY = "PreemptLowerPriority"
#: Priority of a pod without a class when no class is the global default.
DEFAULT_PRIORITY = 0
#: The classes kube-apiserver creates at start (``scheduling.SystemPriorityClasses``).
SYSTEM_PRIORITY_CLASSES: dict[str, int] = {
    "system-node-critical": 2000001000,
    "system-cluster-critical": 2000000000,
}


def system_priority_classes() -> list[Obj]:
    """The built-in classes as kube-apiserver stores them (defaulted, not the global default)."""
    return [
        {
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": {"name": name},
            "value": value,
            "globalDefault": False,
            "description": "Used for system critical pods that must not be moved from their "
            "current node."
            if name == "system-node-critical"
            else "Used for system critical pods that must run in the cluster, but can be moved "
            "to another node if necessary.",
            "preemptionPolicy": PREEMPT_LOWER_PRIORITY,
        }
        for name, value in SYSTEM_PRIORITY_CLASSES.items()
    ]


#: The built-in classes by name (read only).
_SYSTEM_CLASSES: Mapping[str, Obj] = MappingProxyType(
    {str(pc["metadata"]["name"]): pc for pc in system_priority_classes()}
)


def forbidden(info: ResourceInfo, name: str, why: str) -> ApiError:
    """403 as ``admission.NewForbidden``: ``pods "x" is forbidden: why``."""
    details: Obj = {"name": name, "kind": info.plural}
    if info.group:
        details["group"] = info.group
    return api_error(
        403, f'{info.resource_name()} "{name}" is forbidden: {why}', "Forbidden", details
    )


class Admission:
    """The mutating admission plugins above, for one server.

    ``priority_classes``: returns every PriorityClass object that exists (the built-in ones
    included); None when the server serves no PriorityClass resource (only the built-in
    classes are then known). When it returns the very object it returned last time, the
    classes are taken as unchanged (the index of them by name is kept).
    """

    def __init__(self, priority_classes: Callable[[], Iterable[Obj]] | None = None) -> None:
        self.priority_classes = priority_classes
        self._seen: tuple[Iterable[Obj] | None, Mapping[str, Obj]] = (None, _SYSTEM_CLASSES)
        self._default: tuple[Mapping[str, Obj] | None, Obj | None] = (None, None)

    def admit_create(self, info: ResourceInfo, obj: Obj) -> None:
        """Mutate ``obj`` about to be created; raise a 403 :class:`ApiError` to refuse it."""
        if info.custom:
            return
        key = info.key
        if key == ("", "pods"):
            self._admit_pod_priority(info, obj)
            add_default_tolerations(obj)
        elif key == ("", "persistentvolumeclaims"):
            add_finalizer(obj, PVC_PROTECTION_FINALIZER)
        elif key == ("", "persistentvolumes"):
            add_finalizer(obj, PV_PROTECTION_FINALIZER)

    def admit_update(self, info: ResourceInfo, obj: Obj, old: Obj) -> None:
        """Mutate ``obj`` about to replace ``old`` (main resource writes, patches included)."""
        if info.custom or info.key != ("", "pods"):
            return
        keep_priority(obj, old)
        add_default_tolerations(obj)

    # ------------------------------------------------------------------ priority

    def classes(self) -> Mapping[str, Obj]:
        """The priority classes by name; the same object as long as they do not change."""
        if self.priority_classes is None:
            return _SYSTEM_CLASSES  # built once: pods are created on hot paths
        found = self.priority_classes()
        seen, by_name = self._seen
        if found is not seen:
            by_name = {str((pc.get("metadata") or {}).get("name")): pc for pc in found}
            self._seen = (found, by_name)
        return by_name

    def _admit_pod_priority(self, info: ResourceInfo, pod: Obj) -> None:
        spec = pod.get("spec")
        if not isinstance(spec, dict):
            return
        classes = self.classes()
        class_name = spec.get("priorityClassName")
        policy: Any
        if not class_name:
            default = self._global_default(classes)
            if default is None:
                priority, policy = DEFAULT_PRIORITY, PREEMPT_LOWER_PRIORITY
            else:
                spec["priorityClassName"] = default["metadata"]["name"]
                priority, policy = default.get("value", 0), default.get("preemptionPolicy")
        else:
            pc = classes.get(str(class_name))
            if pc is None:
                raise forbidden(
                    info, _name(pod), f"no PriorityClass with name {class_name} was found"
                )
            priority, policy = pc.get("value", 0), pc.get("preemptionPolicy")
        sent = spec.get("priority")
        if sent is not None and sent != priority:
            _refuse_computed(info, _name(pod), "integer value of priority", sent, priority)
        spec["priority"] = priority
        if policy is not None:
            sent = spec.get("preemptionPolicy")
            if sent is not None and sent != policy:
                _refuse_computed(info, _name(pod), "string value of PreemptionPolicy", sent, policy)
            spec["preemptionPolicy"] = policy

    def _global_default(self, classes: Mapping[str, Obj]) -> Obj | None:
        """:func:`global_default` of ``classes``, kept while the classes are the same."""
        cached = self._default
        if cached[0] is not classes:
            cached = self._default = (classes, global_default(classes.values()))
        return cached[1]


def _name(pod: Obj) -> str:
    return str((pod.get("metadata") or {}).get("name") or "")


def _refuse_computed(
    info: ResourceInfo, name: str, what: str, sent: Any, computed: Any
) -> NoReturn:
    """403: the pod spec sent a value other than the one the plugin computed."""
    raise forbidden(
        info,
        name,
        f"the {what} ({sent}) must not be provided in pod spec; priority admission "
        f"controller computed {computed} from the given PriorityClass name",
    )


def global_default(classes: Iterable[Obj]) -> Obj | None:
    """The ``globalDefault`` class with the lowest value (several can exist after a race)."""
    best: Obj | None = None
    for pc in classes:
        if pc.get("globalDefault") is True and (
            best is None or int(pc.get("value") or 0) < int(best.get("value") or 0)
        ):
            best = pc
    return best


def keep_priority(pod: Obj, old: Obj) -> None:
    """Priority on update: ``priority``/``preemptionPolicy`` omitted by the client are kept."""
    spec, old_spec = pod.get("spec"), old.get("spec")
    if not isinstance(spec, dict) or not isinstance(old_spec, dict):
        return
    for key in ("priority", "preemptionPolicy"):
        if spec.get(key) is None and old_spec.get(key) is not None:
            spec[key] = old_spec[key]


def add_default_tolerations(pod: Obj, seconds: int = DEFAULT_TOLERATION_SECONDS) -> None:
    """DefaultTolerationSeconds: append the not-ready/unreachable tolerations a pod lacks."""
    spec = pod.get("spec")
    if not isinstance(spec, dict):
        return
    tolerations = spec.get("tolerations")
    if tolerations is not None and not isinstance(tolerations, list):
        return  # malformed: validation reports it
    # One pass over the tolerations (this runs for every pod written): a toleration counts
    # for a taint when its key is the taint's or empty and its effect NoExecute or empty.
    not_ready = unreachable = False
    for t in tolerations or ():
        if type(t) is not dict and not isinstance(t, dict):
            continue
        if t.get("effect") not in (None, "", "NoExecute"):
            continue
        key = t.get("key")
        if key in (None, ""):
            return  # tolerates both
        if key == TAINT_NOT_READY:
            not_ready = True
        elif key == TAINT_UNREACHABLE:
            unreachable = True
    if not_ready and unreachable:
        return
    added = [
        {"key": key, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": seconds}
        for key, has in ((TAINT_NOT_READY, not_ready), (TAINT_UNREACHABLE, unreachable))
        if not has
    ]
    spec["tolerations"] = [*tolerations, *added] if tolerations else added


def add_finalizer(obj: Obj, finalizer: str) -> None:
    """Append ``finalizer`` to ``metadata.finalizers`` unless present."""
    meta = obj.get("metadata")
    if not isinstance(meta, dict):
        return
    finalizers = meta.get("finalizers")
    if finalizers is not None and not isinstance(finalizers, list):
        return
    if finalizer not in (finalizers or ()):
        meta["finalizers"] = [*(finalizers or ()), finalizer]
