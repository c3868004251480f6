"""Kind -> REST resource: where objects of a kind live on the API server.

:class:`Resource` names a REST resource (group, version, kind, plural, scope, subresources)
and builds its URL paths. :class:`RestMapper` resolves a :data:`~kube_runtime.kinds.KindLike`
to a ``Resource``:

1. a resource model class carries its own (``__kube_resource__``), and a resource
   registered with :meth:`RestMapper.add` is used as given;
2. with a client, every other kind, built-in or not, is looked up by discovery
   (``GET /apis/{group}/{version}``, an ``APIResourceList``); the answer is cached per
   group/version, and a kind missing from the cached answer refetches it once, so a CRD
   created after the client started is found without a restart. A kind still unknown raises
   :class:`NoKindMatchError`: a built-in kind the server does not serve (``batch/v1`` CronJob
   on kube-apiserver 1.20) fails like an uninstalled CRD, not as a 404 per request;
3. without a client (the fake client, offline tools), built-in kinds come from
   :data:`BUILTIN_RESOURCES`.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol
from urllib.parse import quote

from pydantic import BaseModel

from kube_runtime.client.errors import NotFound
from kube_runtime.kinds import Kind, KindLike, as_kind

__all__ = [
    "BUILTIN_RESOURCES",
    "NoKindMatchError",
    "Resource",
    "RestMapper",
    "model_class",
]

log = logging.getLogger(__name__)

_BY_NAME_MAX = 256
"""How many ``(apiVersion, kind)`` pairs a mapper remembers (:meth:`RestMapper.resource_for_object`)."""

ALL_VERBS = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")


@dataclass(frozen=True)
class Resource:
    """One REST resource. ``group`` is ``""`` for the core group."""

    group: str
    version: str
    kind: str
    plural: str
    namespaced: bool
    subresources: frozenset[str] = field(default_factory=frozenset)
    short_names: tuple[str, ...] = ()
    verbs: tuple[str, ...] = ALL_VERBS

    @property
    def api_version(self) -> str:
        """``"v1"`` for the core group, else ``"group/version"``."""
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def kind_ref(self) -> Kind:
        return Kind(self.api_version, self.kind)

    @property
    def list_kind(self) -> str:
        return self.kind + "List"

    def path(
        self, namespace: str | None = None, name: str | None = None, subresource: str | None = None
    ) -> str:
        """The URL path, e.g. ``/apis/apps/v1/namespaces/ns/statefulsets/web/scale``.

        ``namespace`` is ignored for cluster-scoped resources; None for a namespaced one is
        the all-namespaces collection (valid for list/watch only). ``subresource`` needs a
        ``name``.
        """
        parts = ["/api/v1" if not self.group else f"/apis/{self.group}/{self.version}"]
        if self.namespaced and namespace:
            parts.append(f"namespaces/{quote(namespace, safe='')}")
        parts.append(self.plural)
        if name is not None:
            if not name:
                raise ValueError(f"{self.kind}: an empty name is not a valid object name")
            parts.append(quote(name, safe=""))
            if subresource:
                parts.append(subresource)
        elif subresource:
            raise ValueError(f"{self.kind}: subresource {subresource!r} needs an object name")
        return "/".join(parts)


class NoKindMatchError(LookupError):
    """The API server does not serve this kind (not built in, not found by discovery)."""

    def __init__(self, kind: Kind, detail: str = "") -> None:
        self.kind = kind
        super().__init__(
            f'no matches for kind "{kind.kind}" in version "{kind.api_version}"'
            + (f": {detail}" if detail else "")
        )


def _builtin(
    api_version: str,
    kind: str,
    plural: str,
    *,
    namespaced: bool = True,
    subresources: Iterable[str] = (),
    short_names: tuple[str, ...] = (),
) -> Resource:
    group, _, version = api_version.rpartition("/")
    return Resource(group, version, kind, plural, namespaced, frozenset(subresources), short_names)


_STATUS = ("status",)
_STATUS_SCALE = ("status", "scale")

BUILTIN_RESOURCES: tuple[Resource, ...] = (
    _builtin("v1", "Namespace", "namespaces", namespaced=False, subresources=("status", "finalize"), short_names=("ns",)),
    _builtin("v1", "Node", "nodes", namespaced=False, subresources=("status", "proxy"), short_names=("no",)),
    _builtin("v1", "Pod", "pods", subresources=("status", "binding", "eviction", "ephemeralcontainers", "log", "exec", "attach", "portforward", "proxy", "resize"), short_names=("po",)),
    _builtin("v1", "PersistentVolumeClaim", "persistentvolumeclaims", subresources=_STATUS, short_names=("pvc",)),
    _builtin("v1", "PersistentVolume", "persistentvolumes", namespaced=False, subresources=_STATUS, short_names=("pv",)),
    _builtin("v1", "Event", "events", short_names=("ev",)),
    _builtin("v1", "Service", "services", subresources=("status", "proxy"), short_names=("svc",)),
    _builtin("v1", "ConfigMap", "configmaps", short_names=("cm",)),
    _builtin("v1", "Secret", "secrets"),
    _builtin("v1", "ServiceAccount", "serviceaccounts", subresources=("token",), short_names=("sa",)),
    _builtin("v1", "Endpoints", "endpoints", short_names=("ep",)),
    _builtin("v1", "ReplicationController", "replicationcontrollers", subresources=_STATUS_SCALE, short_names=("rc",)),
    _builtin("v1", "PodTemplate", "podtemplates"),
    _builtin("v1", "ResourceQuota", "resourcequotas", subresources=_STATUS, short_names=("quota",)),
    _builtin("v1", "LimitRange", "limitranges", short_names=("limits",)),
    _builtin("apps/v1", "StatefulSet", "statefulsets", subresources=_STATUS_SCALE, short_names=("sts",)),
    _builtin("apps/v1", "Deployment", "deployments", subresources=_STATUS_SCALE, short_names=("deploy",)),
    _builtin("apps/v1", "ReplicaSet", "replicasets", subresources=_STATUS_SCALE, short_names=("rs",)),
    _builtin("apps/v1", "DaemonSet", "daemonsets", subresources=_STATUS, short_names=("ds",)),
    _builtin("apps/v1", "ControllerRevision", "controllerrevisions"),
    _builtin("batch/v1", "Job", "jobs", subresources=_STATUS),
    _builtin("batch/v1", "CronJob", "cronjobs", subresources=_STATUS, short_names=("cj",)),
    _builtin("coordination.k8s.io/v1", "Lease", "leases"),
    _builtin("events.k8s.io/v1", "Event", "events", short_names=("ev",)),
    _builtin("policy/v1", "PodDisruptionBudget", "poddisruptionbudgets", subresources=_STATUS, short_names=("pdb",)),
    _builtin("autoscaling/v1", "HorizontalPodAutoscaler", "horizontalpodautoscalers", subresources=_STATUS, short_names=("hpa",)),
    _builtin("networking.k8s.io/v1", "Ingress", "ingresses", subresources=_STATUS, short_names=("ing",)),
    _builtin("networking.k8s.io/v1", "IngressClass", "ingressclasses", namespaced=False),
    _builtin("networking.k8s.io/v1", "NetworkPolicy", "networkpolicies", short_names=("netpol",)),
    _builtin("discovery.k8s.io/v1", "EndpointSlice", "endpointslices"),
    _builtin("rbac.authorization.k8s.io/v1", "Role", "roles"),
    _builtin("rbac.authorization.k8s.io/v1", "ClusterRole", "clusterroles", namespaced=False),
    _builtin("rbac.authorization.k8s.io/v1", "RoleBinding", "rolebindings"),
    _builtin("rbac.authorization.k8s.io/v1", "ClusterRoleBinding", "clusterrolebindings", namespaced=False),
    _builtin("certificates.k8s.io/v1", "CertificateSigningRequest", "certificatesigningrequests", namespaced=False, subresources=("status", "approval"), short_names=("csr",)),
    _builtin("scheduling.k8s.io/v1", "PriorityClass", "priorityclasses", namespaced=False, short_names=("pc",)),
    _builtin("node.k8s.io/v1", "RuntimeClass", "runtimeclasses", namespaced=False),
    _builtin("storage.k8s.io/v1", "StorageClass", "storageclasses", namespaced=False, short_names=("sc",)),
    _builtin("storage.k8s.io/v1", "CSIDriver", "csidrivers", namespaced=False),
    _builtin("storage.k8s.io/v1", "CSINode", "csinodes", namespaced=False),
    _builtin("storage.k8s.io/v1", "VolumeAttachment", "volumeattachments", namespaced=False, subresources=_STATUS),
    _builtin("apiextensions.k8s.io/v1", "CustomResourceDefinition", "customresourcedefinitions", namespaced=False, subresources=_STATUS, short_names=("crd", "crds")),
)  # fmt: skip


class _Getter(Protocol):
    """What discovery needs from a client: GET a path, parsed JSON back."""

    def get_path(self, path: str) -> Any: ...


def resources_from_discovery(doc: Mapping[str, Any]) -> list[Resource]:
    """The resources of an ``APIResourceList`` (subresources from ``plural/sub`` entries)."""
    group, _, version = str(doc.get("groupVersion", "")).rpartition("/")
    entries = [e for e in doc.get("resources") or () if isinstance(e, dict) and e.get("name")]
    subs: dict[str, set[str]] = {}
    for entry in entries:
        plural, sep, sub = entry["name"].partition("/")
        if sep:
            subs.setdefault(plural, set()).add(sub)
    found = []
    for entry in entries:
        if "/" in entry["name"] or not entry.get("kind"):
            continue
        found.append(
            Resource(
                group=entry.get("group") or group,
                version=entry.get("version") or version,
                kind=entry["kind"],
                plural=entry["name"],
                namespaced=bool(entry.get("namespaced")),
                subresources=frozenset(subs.get(entry["name"], ())),
                short_names=tuple(entry.get("shortNames") or ()),
                verbs=tuple(entry.get("verbs") or ()),
            )
        )
    return found


class RestMapper:
    """Thread-safe kind -> :class:`Resource` resolution (added resources, then cached
    discovery; the built-in table when there is no client).

    ``client`` needs ``get_path(path) -> dict`` (the :class:`~kube_runtime.client.Client`);
    None gives a mapper that knows only ``builtins`` and explicitly added resources.
    """

    def __init__(
        self, client: _Getter | None, builtins: Iterable[Resource] = BUILTIN_RESOURCES
    ) -> None:
        self._client = client
        self._lock = threading.Lock()
        # Without a client the built-in table answers; with one, discovery does.
        self._static: dict[Kind, Resource] = (
            {r.kind_ref: r for r in builtins} if client is None else {}
        )
        # group/version -> kind -> resource; a group/version absent here was never fetched.
        self._discovered: dict[str, dict[str, Resource]] = {}
        # (apiVersion, kind) -> the resource found: the objects a controller writes name the
        # same few kinds. Emptied whenever an answer could change (add, reset, a refetch);
        # _generation counts those, so a lookup racing one does not store a stale answer.
        self._by_name: dict[tuple[str, str], Resource] = {}
        self._generation = 0

    def add(self, resource: Resource) -> None:
        """Register a resource without discovery (it wins over discovered ones)."""
        with self._lock:
            self._static[resource.kind_ref] = resource
            self._forget_names()

    def reset(self) -> None:
        """Forget every discovery answer (the next lookups refetch)."""
        with self._lock:
            self._discovered.clear()
            self._forget_names()

    def _forget_names(self) -> None:
        """Empty the ``(apiVersion, kind)`` memo (lock held)."""
        self._by_name = {}
        self._generation += 1

    def resource_for_object(self, api_version: str, kind: str) -> Resource:
        """:meth:`resource_for` of ``Kind(api_version, kind)``, the kind an object names,
        remembered: no :class:`~kube_runtime.kinds.Kind` is built when the same kind was
        resolved before (the objects a controller writes name a few kinds)."""
        key = (api_version, kind)
        found = self._by_name.get(key)
        if found is not None:
            return found
        generation = self._generation
        found = self.resource_for(Kind(api_version, kind))
        with self._lock:
            if generation == self._generation:
                if len(self._by_name) >= _BY_NAME_MAX:
                    self._by_name = {}
                self._by_name[key] = found
        return found

    def resource_for(self, kind: KindLike) -> Resource:
        """The resource serving ``kind``; :class:`NoKindMatchError` when none does."""
        own = getattr(kind, "__kube_resource__", None) if isinstance(kind, type) else None
        if isinstance(own, Resource):
            return own
        ref = as_kind(kind)
        with self._lock:
            found = self._static.get(ref)
            if found is None:
                found = self._discovered.get(ref.api_version, {}).get(ref.kind)
            fetched = ref.api_version in self._discovered
        if found is not None:
            return found
        if self._client is None:
            raise NoKindMatchError(ref, "no client for discovery")
        # One refresh on a miss: a kind added since the last fetch (a new CRD) appears now.
        log.debug("discovering %s (cached before: %s)", ref.api_version, fetched)
        table = self._discover(ref)
        with self._lock:
            self._discovered[ref.api_version] = table
            self._forget_names()
        found = table.get(ref.kind)
        if found is None:
            raise NoKindMatchError(ref)
        return found

    def _discover(self, ref: Kind) -> dict[str, Resource]:
        assert self._client is not None
        path = "/api/v1" if ref.api_version == "v1" else f"/apis/{ref.api_version}"
        if "/" not in ref.api_version and ref.api_version != "v1":
            raise NoKindMatchError(ref, f"{ref.api_version!r} is not a core version")
        try:
            doc = self._client.get_path(path)
        except NotFound:
            return {}
        return {r.kind: r for r in resources_from_discovery(doc if isinstance(doc, dict) else {})}


def model_class(kind: object) -> type[BaseModel] | None:
    """``kind`` when it is a pydantic model class (reads answer instances of it), else None."""
    if kind is dict:  # a plain object's type, the usual case: no ABC subclass check
        return None
    if isinstance(kind, type) and issubclass(kind, BaseModel):
        return kind
    return None
