"""Naming a kind of object: ``Kind(api_version, kind)`` and the built-in constants.

Everything in the framework that takes "a kind" accepts a :data:`KindLike`: a :class:`Kind`,
a string ``"apps/v1/StatefulSet"`` (``"v1/Pod"`` for the core group), or a typed resource
model class (one that carries ``__kube_resource__``, as the code generator emits).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = [
    "ConfigMap",
    "ControllerRevision",
    "CustomResourceDefinition",
    "DaemonSet",
    "Deployment",
    "Endpoints",
    "Event",
    "Job",
    "Kind",
    "KindLike",
    "Lease",
    "Namespace",
    "Node",
    "PersistentVolumeClaim",
    "Pod",
    "ReplicaSet",
    "Secret",
    "Service",
    "ServiceAccount",
    "StatefulSet",
    "as_kind",
    "kind_for",
]


@dataclass(frozen=True, order=True)
class Kind:
    """A group/version/kind. ``api_version`` is ``"v1"`` or ``"group/version"``."""

    api_version: str
    kind: str

    def __post_init__(self) -> None:
        # Every cached read hashes its kind a few times (informer, options, models): the
        # hash is taken once (not a field: equality, order, repr and fields are the pair's).
        object.__setattr__(self, "_hash", hash((self.api_version, self.kind)))

    def __hash__(self) -> int:
        return self._hash  # type: ignore[attr-defined]

    def __reduce__(self) -> tuple[Any, tuple[str, str]]:
        # Rebuilt from its fields: a string's hash differs from one process to the next.
        return type(self), (self.api_version, self.kind)

    @property
    def group(self) -> str:
        return self.api_version.rpartition("/")[0]

    @property
    def version(self) -> str:
        return self.api_version.rpartition("/")[2]

    def __str__(self) -> str:
        return f"{self.api_version}/{self.kind}"

    @classmethod
    def parse(cls, text: str) -> Kind:
        """``"apps/v1/StatefulSet"`` or ``"v1/Pod"`` -> Kind; anything else is a ValueError."""
        api_version, sep, kind = text.rpartition("/")
        if not sep or not api_version or not kind or api_version.count("/") > 1:
            raise ValueError(
                f"cannot parse kind {text!r}: expected 'group/version/Kind' or 'v1/Kind'"
            )
        return cls(api_version, kind)

    @classmethod
    def of(cls, obj: Any) -> Kind:
        """The kind of an object (a dict or a model with ``apiVersion`` and ``kind``)."""
        if isinstance(obj, Mapping):
            api_version, kind = obj.get("apiVersion"), obj.get("kind")
        else:
            resource = getattr(type(obj), "__kube_resource__", None)
            if resource is not None:
                return as_kind(type(obj))
            api_version, kind = getattr(obj, "api_version", None), getattr(obj, "kind", None)
        if not api_version or not kind:
            raise ValueError("object has no apiVersion/kind; set both or pass the kind explicitly")
        return cls(str(api_version), str(kind))


KindLike = Kind | str | type


def kind_for(obj: Any) -> KindLike:
    """What to pass a client as the kind of ``obj``: the model class for a resource model
    (answers then come back as that model), else :meth:`Kind.of` of the object."""
    if hasattr(type(obj), "__kube_resource__"):
        return type(obj)
    return Kind.of(obj)


def as_kind(value: KindLike) -> Kind:
    """Normalise a :data:`KindLike` to a :class:`Kind` (TypeError/ValueError when it is none)."""
    if isinstance(value, Kind):
        return value
    if isinstance(value, str):
        return Kind.parse(value)
    resource = getattr(value, "__kube_resource__", None)
    if resource is not None:
        return Kind(resource.api_version, resource.kind)
    raise TypeError(f"not a kind: {value!r} (use Kind, 'group/version/Kind' or a resource model)")


Pod = Kind("v1", "Pod")
Service = Kind("v1", "Service")
ConfigMap = Kind("v1", "ConfigMap")
Secret = Kind("v1", "Secret")
Namespace = Kind("v1", "Namespace")
Event = Kind("v1", "Event")
Node = Kind("v1", "Node")
PersistentVolumeClaim = Kind("v1", "PersistentVolumeClaim")
ServiceAccount = Kind("v1", "ServiceAccount")
Endpoints = Kind("v1", "Endpoints")
StatefulSet = Kind("apps/v1", "StatefulSet")
Deployment = Kind("apps/v1", "Deployment")
ReplicaSet = Kind("apps/v1", "ReplicaSet")
DaemonSet = Kind("apps/v1", "DaemonSet")
ControllerRevision = Kind("apps/v1", "ControllerRevision")
Job = Kind("batch/v1", "Job")
Lease = Kind("coordination.k8s.io/v1", "Lease")
CustomResourceDefinition = Kind("apiextensions.k8s.io/v1", "CustomResourceDefinition")
