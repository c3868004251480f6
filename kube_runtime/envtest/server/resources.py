"""The resource registry of the embedded API server.

A :class:`ResourceInfo` says how one REST resource is served: its group/version/kind, plural
and short names, scope, subresources and whether writes bump ``metadata.generation``. The
:class:`Registry` holds :data:`SERVED_BUILTINS` (the framework's table of built-in kinds,
narrowed to those served here) plus whatever CustomResourceDefinitions add while the server
runs; it is the single source for discovery documents and request routing.

Objects of one resource are stored once under ``(group, plural)`` whatever version they are
served in; custom resources with several served versions are converted by their CRD's
webhook (``strategy: Webhook``, :mod:`.conversion`) or, with the default ``strategy: None``,
only get ``apiVersion`` rewritten on the way out. A resource may also be a view of another's
storage (:attr:`ResourceInfo.stored_as`: ``events.k8s.io`` Events are the core ``v1`` Events,
converted both ways by the view's converter), as kube-apiserver's cohabiting resources.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from kube_runtime.client._apifacts import TRACKS_GENERATION
from kube_runtime.client.mapping import ALL_VERBS, BUILTIN_RESOURCES, Resource

STATUS_VERBS = ("get", "patch", "update")


@dataclass(frozen=True)
class ScaleSpec:
    """Where the scale subresource reads and writes replicas (JSON paths without the leading dot)."""

    spec_replicas_path: str = "spec.replicas"
    status_replicas_path: str = "status.replicas"
    label_selector_path: str | None = "status.selector"


@dataclass(frozen=True)
class ResourceInfo:
    """How one resource is served. ``versions`` lists every served version, storage first."""

    group: str
    versions: tuple[str, ...]
    kind: str
    plural: str
    singular: str
    namespaced: bool
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    has_status: bool = False
    scale: ScaleSpec | None = None
    tracks_generation: bool = False
    custom: bool = False
    verbs: tuple[str, ...] = ALL_VERBS
    printer_columns: tuple[dict[str, Any], ...] = ()
    schemas: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)
    #: A CRD's ``spec.conversion.webhook`` when its strategy is ``Webhook`` (:mod:`.conversion`).
    conversion_webhook: dict[str, Any] | None = field(default=None, compare=False, hash=False)
    #: ``apiVersion`` of another resource (same plural) whose storage holds these objects:
    #: this resource is a view of it (``events.k8s.io`` Events are core ``v1`` Events, as
    #: kube-apiserver's cohabiting resources). Its converter maps to and from that form.
    stored_as: str | None = None

    # key, storage_group, version and the stored apiVersion are read several times per
    # write: computed once per (immutable) info, kept in the instance's __dict__.
    @cached_property
    def key(self) -> tuple[str, str]:
        """The storage key: one store per (group, plural), whatever the version (a view's
        is the viewed resource's)."""
        if self.stored_as is not None:
            return (self.stored_as.rpartition("/")[0], self.plural)
        return (self.group, self.plural)

    @cached_property
    def storage_group(self) -> str:
        """The group whose rules (defaults, encoding, validation) the stored objects follow."""
        return self.key[0]

    @cached_property
    def version(self) -> str:
        return self.versions[0]

    @cached_property
    def _stored_api_version(self) -> str:
        if self.stored_as is not None:
            return self.stored_as
        return f"{self.group}/{self.version}" if self.group else self.version

    def api_version(self, version: str | None = None) -> str:
        """``group/version`` of ``version``; without one, the ``apiVersion`` objects are
        stored in (a view's: the viewed resource's)."""
        if version is None:
            return self._stored_api_version
        v = version or self.version
        return f"{self.group}/{v}" if self.group else v

    @property
    def list_kind(self) -> str:
        return self.kind + "List"

    def resource_name(self) -> str:
        """``plural`` or ``plural.group`` as used in error messages (``pods``, ``statefulsets.apps``)."""
        return f"{self.plural}.{self.group}" if self.group else self.plural


@dataclass(frozen=True)
class _Serving:
    """What this server adds to a built-in kind of the framework's table to serve it."""

    categories: tuple[str, ...] = ()
    #: Every served version, storage first (default: the framework table's one version).
    versions: tuple[str, ...] = ()
    #: The ``apiVersion`` of the resource whose objects these are (:attr:`ResourceInfo.stored_as`).
    stored_as: str | None = None


_ALL = ("all",)
_IN_ALL_ONLY = _Serving(categories=_ALL)

#: The built-in kinds served here as the framework's table declares them, plurals by group.
_SERVED_AS_DECLARED: dict[str, tuple[str, ...]] = {
    "": (
        "namespaces",
        "nodes",
        "persistentvolumeclaims",
        "persistentvolumes",
        "events",
        "configmaps",
        "secrets",
        "serviceaccounts",
        "endpoints",
        "podtemplates",
        "resourcequotas",
        "limitranges",
    ),
    "apps": ("controllerrevisions",),
    "coordination.k8s.io": ("leases",),
    "networking.k8s.io": ("ingresses", "ingressclasses", "networkpolicies"),
    "rbac.authorization.k8s.io": ("roles", "clusterroles", "rolebindings", "clusterrolebindings"),
    "certificates.k8s.io": ("certificatesigningrequests",),
    "scheduling.k8s.io": ("priorityclasses",),
    "node.k8s.io": ("runtimeclasses",),
    "storage.k8s.io": ("storageclasses", "csidrivers", "csinodes", "volumeattachments"),
    "apiextensions.k8s.io": ("customresourcedefinitions",),
}
#: Kinds served as declared but in the ``all`` category (``kubectl get all``), by group
#: (cronjobs and HPAs are in it too, served in more versions: below).
_IN_ALL: dict[str, tuple[str, ...]] = {
    "": ("pods", "services", "replicationcontrollers"),
    "apps": ("statefulsets", "deployments", "replicasets", "daemonsets"),
    "batch": ("jobs",),
}
#: The built-in kinds served here, by (group, plural): a subset of the framework's
#: :data:`~kube_runtime.client.mapping.BUILTIN_RESOURCES`, whose order they keep.
_SERVED: dict[tuple[str, str], _Serving] = {
    **{(g, plural): _Serving() for g, plurals in _SERVED_AS_DECLARED.items() for plural in plurals},
    **{(g, plural): _IN_ALL_ONLY for g, plurals in _IN_ALL.items() for plural in plurals},
    ("batch", "cronjobs"): _Serving(categories=_ALL, versions=("v1", "v1beta1")),
    ("policy", "poddisruptionbudgets"): _Serving(versions=("v1", "v1beta1")),
    ("events.k8s.io", "events"): _Serving(versions=("v1", "v1beta1"), stored_as="v1"),
    ("autoscaling", "horizontalpodautoscalers"): _Serving(
        categories=_ALL, versions=("v1", "v2", "v2beta2")
    ),
    ("discovery.k8s.io", "endpointslices"): _Serving(versions=("v1", "v1beta1")),
}
_REPLICAS_SCALE = ScaleSpec()


def _served(resource: Resource, serving: _Serving) -> ResourceInfo:
    return ResourceInfo(
        resource.group,
        serving.versions or (resource.version,),
        resource.kind,
        resource.plural,
        resource.kind.lower(),
        resource.namespaced,
        short_names=resource.short_names,
        categories=serving.categories,
        has_status="status" in resource.subresources,
        scale=_REPLICAS_SCALE if "scale" in resource.subresources else None,
        tracks_generation=(resource.group, resource.plural) in TRACKS_GENERATION,
        verbs=resource.verbs,
        stored_as=serving.stored_as,
    )


def _cluster_kinds(
    group: str, version: str, kinds: tuple[str, ...], *, has_status: bool = False
) -> tuple[ResourceInfo, ...]:
    """Cluster-scoped kinds of one group served in one version, named as upstream names
    them (plural ``<kind>s``, singular ``<kind>``, both lower case)."""
    return tuple(
        ResourceInfo(
            group,
            (version,),
            kind,
            kind.lower() + "s",
            kind.lower(),
            False,
            has_status=has_status,
            tracks_generation=(group, kind.lower() + "s") in TRACKS_GENERATION,
        )
        for kind in kinds
    )


#: The admission webhook configurations (served here, not in the framework's table: a
#: controller reaches them through discovery like any other kind).
WEBHOOK_CONFIGURATIONS: tuple[ResourceInfo, ...] = _cluster_kinds(
    "admissionregistration.k8s.io",
    "v1",
    ("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"),
)

#: ``flowcontrol.apiserver.k8s.io`` (``v1beta1``, what 1.20 serves; see :mod:`.builtin_flowcontrol`).
FLOW_CONTROL: tuple[ResourceInfo, ...] = _cluster_kinds(
    "flowcontrol.apiserver.k8s.io",
    "v1beta1",
    ("FlowSchema", "PriorityLevelConfiguration"),
    has_status=True,
)

#: The built-in resources this server serves (before any CRD adds its own).
SERVED_BUILTINS: tuple[ResourceInfo, ...] = (
    *(
        _served(r, _SERVED[(r.group, r.plural)])
        for r in BUILTIN_RESOURCES
        if (r.group, r.plural) in _SERVED
    ),
    *WEBHOOK_CONFIGURATIONS,
    *FLOW_CONTROL,
)

# The order groups appear in discovery: kube-apiserver's.
_GROUP_ORDER = (
    "",
    "apps",
    "events.k8s.io",
    "autoscaling",
    "batch",
    "certificates.k8s.io",
    "networking.k8s.io",
    "policy",
    "rbac.authorization.k8s.io",
    "storage.k8s.io",
    "admissionregistration.k8s.io",
    "apiextensions.k8s.io",
    "scheduling.k8s.io",
    "coordination.k8s.io",
    "node.k8s.io",
    "discovery.k8s.io",
    "flowcontrol.apiserver.k8s.io",
)


class Registry:
    """Thread-safe table of served resources, keyed by (group, version, plural) and by kind."""

    def __init__(self, resources: tuple[ResourceInfo, ...] = SERVED_BUILTINS) -> None:
        self._lock = threading.Lock()
        self._by_key: dict[tuple[str, str], ResourceInfo] = {}
        self._generation = 0
        for info in resources:
            self._by_key[(info.group, info.plural)] = info

    @property
    def generation(self) -> int:
        """Bumped whenever the set of served resources changes (discovery caches use it)."""
        return self._generation

    def add(self, info: ResourceInfo) -> None:
        with self._lock:
            self._by_key[(info.group, info.plural)] = info
            self._generation += 1

    def remove(self, group: str, plural: str) -> ResourceInfo | None:
        with self._lock:
            info = self._by_key.pop((group, plural), None)
            self._generation += 1
            return info

    def lookup(self, group: str, version: str, plural: str) -> ResourceInfo | None:
        info = self._by_key.get((group, plural))
        if info is None or version not in info.versions:
            return None
        return info

    def by_key(self, group: str, plural: str) -> ResourceInfo | None:
        return self._by_key.get((group, plural))

    def by_kind(self, group: str, kind: str) -> ResourceInfo | None:
        for info in list(self._by_key.values()):
            if info.group == group and info.kind == kind:
                return info
        return None

    def __iter__(self) -> Iterator[ResourceInfo]:
        return iter(list(self._by_key.values()))

    def groups(self) -> list[tuple[str, list[str]]]:
        """(group, versions) pairs, core first, then built-in groups, then CRD groups by name."""
        versions: dict[str, list[str]] = {}
        for info in self:
            vs = versions.setdefault(info.group, [])
            for v in info.versions:
                if v not in vs:
                    vs.append(v)

        def order(g: str) -> tuple[int, str]:
            return (_GROUP_ORDER.index(g), "") if g in _GROUP_ORDER else (len(_GROUP_ORDER), g)

        return [(g, _sort_versions(versions[g])) for g in sorted(versions, key=order)]

    def resources_in(self, group: str, version: str) -> list[ResourceInfo]:
        return sorted(
            (i for i in self if i.group == group and version in i.versions),
            key=lambda i: i.plural,
        )


def _version_priority(v: str) -> tuple[int, int, int, str]:
    """Kubernetes version priority: GA > beta > alpha, higher numbers first, others last."""
    import re

    m = re.fullmatch(r"v(\d+)(?:(alpha|beta)(\d+))?", v)
    if not m:
        return (3, 0, 0, v)
    major = int(m.group(1))
    stage = {"": 0, "beta": 1, "alpha": 2}[m.group(2) or ""]
    minor = int(m.group(3) or 0)
    return (stage, -major, -minor, v)


def _sort_versions(versions: list[str]) -> list[str]:
    return sorted(versions, key=_version_priority)
