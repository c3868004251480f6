"""Per-kind write behaviour of the embedded server, as kube-apiserver's registry strategies.

* create: server-owned status is reset (pods start Pending, workloads with an empty status,
  custom resources with a status subresource lose any status sent), then defaults are applied,
  then mutating admission (:mod:`.admission`: pod priority and default tolerations, the
  pvc-protection finalizer);
* update: defaults, then mutating admission (a pod keeps its priority and default tolerations);
* both then encode built-in kinds as kube-apiserver's Go types do (:mod:`.omitempty`:
  zero-valued ``omitempty`` scalars dropped, untagged status counters written);
* custom resources are pruned, defaulted and validated against their CRD's structural schema;
* built-in kinds are validated by :mod:`.validation` (metadata plus kind-specific rules).
"""

from __future__ import annotations

import ipaddress
import itertools
import threading

from kube_runtime.envtest.server import (
    builtin_groups,
    crdschema,
    defaults,
    errors,
    omitempty,
    validation,
)
from kube_runtime.envtest.server.admission import Admission
from kube_runtime.envtest.server.resources import ResourceInfo
from kube_runtime.envtest.server.storage import Obj

_CLUSTER_IPS = ipaddress.ip_network("10.96.0.0/16")


class KubeStrategy:
    """``admission``: the mutating admission run after defaulting (None: a default
    :class:`Admission`, which knows only the built-in priority classes)."""

    def __init__(self, admission: Admission | None = None) -> None:
        self.admission = admission if admission is not None else Admission()
        self._ip_lock = threading.Lock()
        self._next_ip = itertools.count(10)

    def prepare_create(self, info: ResourceInfo, obj: Obj) -> None:
        if info.custom:
            if info.has_status:
                obj.pop("status", None)
            self._custom(info, obj)
            return
        key = info.key
        if key == ("", "pods"):
            obj["status"] = {"phase": "Pending", "qosClass": _qos_class(obj)}
        elif key in (("apps", "statefulsets"),):
            obj["status"] = {"replicas": 0, "availableReplicas": 0}
        elif key in (("apps", "deployments"), ("apps", "replicasets")):
            obj["status"] = {}
        elif key == ("", "persistentvolumeclaims"):
            obj["status"] = {"phase": "Pending"}
        elif (status := builtin_groups.initial_status(key)) is not None:
            obj["status"] = status
        elif key == ("", "services"):
            spec = obj.setdefault("spec", {})
            if spec.get("type", "ClusterIP") != "ExternalName" and not spec.get("clusterIP"):
                spec["clusterIP"] = self._allocate_ip()
            if spec.get("clusterIP") and not spec.get("clusterIPs"):
                spec["clusterIPs"] = [spec["clusterIP"]]  # "None" for a headless service too
        builtin_groups.prepare(key, obj, None)
        group = info.storage_group  # a view's objects follow the viewed kind's rules
        defaults.prepare_for_create(group, info.kind, obj)
        defaults.apply_defaults(group, info.kind, obj)
        self.admission.admit_create(info, obj)
        omitempty.normalize(group, info.kind, obj)

    def prepare_update(self, info: ResourceInfo, obj: Obj, old: Obj) -> None:
        if info.custom:
            self._custom(info, obj)
            return
        if info.key == ("", "services"):
            _keep_allocated_ips(obj, old)
        builtin_groups.prepare(info.key, obj, old)
        defaults.apply_defaults(info.storage_group, info.kind, obj)
        self.admission.admit_update(info, obj, old)
        omitempty.normalize(info.storage_group, info.kind, obj)

    def validate(
        self, info: ResourceInfo, obj: Obj, old: Obj | None, *, subresource: str = ""
    ) -> None:
        """422 Invalid with the causes found; on the "binding" path a pod may get its node."""
        meta = obj.get("metadata") or {}
        if info.custom:
            causes = validation.validate_object_meta(
                meta, namespaced=info.namespaced, name_rule="subdomain"
            )
            schema = info.schemas.get(info.version)
            if schema is not None:
                causes += crdschema.validate(obj, schema, old)
        else:
            causes = validation.validate(
                info.storage_group,
                info.kind,
                obj,
                _as_bound(info, obj, old) if subresource == "binding" else old,
            )
            causes += builtin_groups.check(info.storage_group, info.kind, obj, old)
            if info.stored_as is not None:  # the view's own rules (events.k8s.io's)
                causes += builtin_groups.check(info.group, info.kind, obj, old)
        if causes:
            raise errors.invalid(
                info.kind,
                info.storage_group,  # a view's errors name the viewed kind, as upstream's
                str(meta.get("name") or meta.get("generateName") or ""),
                causes,
            )

    @staticmethod
    def _custom(info: ResourceInfo, obj: Obj) -> None:
        schema = info.schemas.get(info.version)
        if schema is None:
            return
        for step in (crdschema.prune, crdschema.apply_defaults):
            result = step(obj, schema)
            if result is not obj:
                obj.clear()
                obj.update(result)

    def _allocate_ip(self) -> str:
        with self._ip_lock:
            return str(_CLUSTER_IPS[next(self._next_ip)])


def _as_bound(info: ResourceInfo, obj: Obj, old: Obj | None) -> Obj | None:
    """``old`` as the pods/binding subresource leaves it when ``obj`` binds an unbound pod.

    Binding (setting ``spec.nodeName`` once, what the scheduler does through pods/binding)
    is the one spec change of a pod the update rules do not cover; only the binding path
    (``subresource="binding"``) compares against the bound spec. A plain update or patch of
    ``spec.nodeName`` is refused like any other immutable pod field, as by kube-apiserver.
    """
    if old is None or info.key != ("", "pods"):
        return old
    node = (obj.get("spec") or {}).get("nodeName")
    old_spec = old.get("spec") or {}
    if not node or old_spec.get("nodeName"):
        return old
    return {**old, "spec": {**old_spec, "nodeName": node}}


def _qos_class(pod: Obj) -> str:
    """Guaranteed / Burstable / BestEffort from the containers' requests and limits."""
    containers = (pod.get("spec") or {}).get("containers") or []
    any_set = False
    guaranteed = bool(containers)
    for c in containers:
        res = c.get("resources") or {}
        req, lim = res.get("requests") or {}, res.get("limits") or {}
        if req or lim:
            any_set = True
        if guaranteed:
            for r in ("cpu", "memory"):
                if r not in lim or (r in req and req[r] != lim[r]):
                    guaranteed = False
                    break
    if not any_set:
        return "BestEffort"
    return "Guaranteed" if guaranteed else "Burstable"


def _keep_allocated_ips(service: Obj, old: Obj) -> None:
    """An update that leaves the cluster IPs out keeps the allocated ones; one that changes
    ``clusterIP`` alone changes the first of ``clusterIPs`` too (validation then refuses
    the change), as kube-apiserver's service registry does."""
    spec, old_spec = service.get("spec"), old.get("spec") or {}
    if not isinstance(spec, dict) or "ExternalName" in (spec.get("type"), old_spec.get("type")):
        return
    if not spec.get("clusterIP") and old_spec.get("clusterIP"):
        spec["clusterIP"] = old_spec["clusterIP"]
    old_ips = list(old_spec.get("clusterIPs") or ())
    if not spec.get("clusterIPs") and old_ips:
        spec["clusterIPs"] = old_ips
    ips = spec.get("clusterIPs")
    if (
        spec.get("clusterIP")
        and isinstance(ips, list)
        and ips == old_ips
        and ips[0] != spec["clusterIP"]
    ):
        spec["clusterIPs"] = [spec["clusterIP"], *ips[1:]]
