"""What kube-apiserver's generic registry does to objects, as the fake and the test cluster do it.

The :class:`~kube_runtime.client.fake.FakeClient` and the embedded API server of
:mod:`kube_runtime.envtest` follow the same rules for what an update keeps of the stored
object (:func:`merge_update`), what a delete answers (:func:`deleted_status`), what a
``scale`` subresource shows (:func:`scale_of`, at a kind's :class:`ScalePaths`) and which
empty maps and lists a built-in kind's Go encoding drops (:func:`drop_empty_collections`;
:func:`drop_empty_metadata` for custom resources' metadata);
both take them from here. Objects are JSON dicts; nothing here copies deeply (callers copy what they
hand out).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from kube_runtime.meta import Obj
from kube_runtime.selectors import format_label_selector

__all__ = [
    "SERVER_OWNED_METADATA",
    "STATUS_KEEPS_METADATA",
    "ScalePaths",
    "deleted_status",
    "drop_empty_collections",
    "drop_empty_metadata",
    "keep_fields",
    "merge_update",
    "scale_of",
]


#: Metadata no update can change (the server sets it).
SERVER_OWNED_METADATA: Final = (
    "uid",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "namespace",
    "name",
    "generation",
)
#: Metadata a built-in kind's status strategy also takes from the stored object, by (group,
#: kind) (kube-apiserver's ``PrepareForUpdate`` of pods, deployments and replica sets); every
#: other built-in status write keeps the caller's labels, annotations, finalizers and owner
#: references.
STATUS_KEEPS_METADATA: Final[Mapping[tuple[str, str], tuple[str, ...]]] = {
    ("", "Pod"): ("ownerReferences",),
    ("apps", "Deployment"): ("labels",),
    ("apps", "ReplicaSet"): ("labels",),
}
#: The metadata a Scale shows of its object.
_SCALE_METADATA: Final = ("name", "namespace", "uid", "resourceVersion", "creationTimestamp")


# Map and list fields tagged omitempty that are often sent empty: Go omits an empty one.
EMPTY_METADATA_OMITTED: Final = ("labels", "annotations", "finalizers", "ownerReferences")
EMPTY_OMITTED: Final[dict[str, tuple[str, ...]]] = {
    "ConfigMap": ("data", "binaryData"),
    "Secret": ("data", "stringData"),
}


def drop_empty_metadata(obj: Obj) -> None:
    """Drop, in place, the empty omitempty metadata that kube-apiserver's encoding of
    ObjectMeta omits, for built-in kinds and custom resources alike (a custom resource's
    metadata is decoded into ObjectMeta too): ``labels``, ``annotations``, ``finalizers``
    and ``ownerReferences`` when empty or null, ``generateName`` when ``""`` (checked on
    kube-apiserver 1.20). Runs on every write: plain loops, no helper calls."""
    meta = obj.get("metadata")
    if type(meta) is dict:
        for name in EMPTY_METADATA_OMITTED:
            if name in meta:
                value = meta[name]
                if value is None or (not value and type(value) in (dict, list)):
                    del meta[name]
        if meta.get("generateName", None) == "":
            del meta["generateName"]


def drop_empty_collections(kind: str, obj: Obj) -> None:
    """Drop empty omitempty maps and lists of a built-in (core) kind, in place: the empty
    metadata of :func:`drop_empty_metadata`; a ConfigMap's or Secret's data. Runs on every
    write of the embedded server. Custom resources take
    :func:`drop_empty_metadata` only (their other fields are stored as sent)."""
    drop_empty_metadata(obj)
    for name in EMPTY_OMITTED.get(kind, ()):
        value = obj.get(name)
        if value is not None and not value and type(value) in (dict, list):
            del obj[name]


def keep_fields(meta: Obj, old_meta: Obj, names: Iterable[str]) -> None:
    """Set each of ``names`` in ``meta`` as in ``old_meta`` (absent there: absent here)."""
    for name in names:
        if name in old_meta:
            meta[name] = old_meta[name]
        else:
            meta.pop(name, None)


def merge_update(
    old: Obj,
    incoming: Obj,
    status_write: bool,
    group: str,
    kind: str,
    custom: bool,
    has_status: bool,
) -> Obj:
    """The object to store when ``incoming`` replaces ``old`` (an update, or a patch's result).

    A write to the status subresource (``status_write``) changes ``status`` only, and the
    metadata as the kind's status strategy allows: custom resources keep all their metadata
    (kube-apiserver's ``ResetObjectMetaForStatus``), as does a write without metadata;
    built-in kinds take the caller's but for what the server owns and
    :data:`STATUS_KEEPS_METADATA`. Any other write keeps the server-owned metadata, the
    stored ``apiVersion`` and, for kinds with a status subresource, the stored ``status``.
    """
    old_meta = old["metadata"]
    in_meta = incoming.get("metadata")
    if status_write:
        new = dict(old)
        if "status" in incoming:
            new["status"] = incoming["status"]
        else:
            new.pop("status", None)
        if custom or not in_meta or not isinstance(in_meta, dict):
            new["metadata"] = dict(old_meta)
        else:
            meta = dict(in_meta)
            kept = STATUS_KEEPS_METADATA.get((group, kind), ())
            keep_fields(meta, old_meta, (*SERVER_OWNED_METADATA, "resourceVersion", *kept))
            new["metadata"] = meta
        return new
    new = dict(incoming)
    new["apiVersion"] = old["apiVersion"]
    new["kind"] = kind
    meta = dict(in_meta) if isinstance(in_meta, dict) else {}
    keep_fields(meta, old_meta, SERVER_OWNED_METADATA)
    new["metadata"] = meta
    if has_status:
        if "status" in old:
            new["status"] = old["status"]
        else:
            new.pop("status", None)
    return new


def deleted_status(group: str, plural: str, name: str | None, uid: str | None) -> Obj:
    """The Success Status kube-apiserver answers for an object deleted at once."""
    details: Obj = {"name": name, "kind": plural}
    if group:
        details["group"] = group
    details["uid"] = uid
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Success",
        "details": details,
    }


def _get_path(obj: Obj, path: str) -> Any:
    value: Any = obj
    for part in path.split("."):
        if not isinstance(value, dict):
            return None
        value = value.get(part)
    return value


@dataclass(frozen=True)
class ScalePaths:
    """Where a kind's ``scale`` subresource reads and writes (a CRD's ``scale`` paths;
    a leading ``.`` is accepted). ``label_selector`` None: the Scale has no selector."""

    spec_replicas: str = "spec.replicas"
    status_replicas: str = "status.replicas"
    label_selector: str | None = "status.selector"

    def __post_init__(self) -> None:
        for name in ("spec_replicas", "status_replicas", "label_selector"):
            value = getattr(self, name)
            if isinstance(value, str):
                object.__setattr__(self, name, value.lstrip("."))


_SELECTOR_KEYS = frozenset(("matchLabels", "matchExpressions"))


def scale_of(obj: Obj, paths: ScalePaths, custom: bool) -> Obj:
    """The ``autoscaling/v1`` Scale of ``obj``, whose replicas and selector are at ``paths``.

    A built-in kind's selector is its ``spec.selector`` as a label selector string; a custom
    kind's is the string at ``paths.label_selector`` as stored. As Go encodes it,
    ``spec.replicas`` is left out when 0 (a reader takes a missing one as 0).
    """
    label_selector = paths.label_selector
    selector: str | None = None
    if label_selector:
        if custom:
            value = _get_path(obj, label_selector)
            selector = str(value) if value else None
        else:
            spec_selector = (obj.get("spec") or {}).get("selector")
            if isinstance(spec_selector, dict) and not spec_selector.keys() & _SELECTOR_KEYS:
                spec_selector = {"matchLabels": spec_selector}  # a ReplicationController's map
            if spec_selector:
                text = format_label_selector(spec_selector)
                selector = "" if text == "<none>" else text
    meta = obj["metadata"]
    replicas = int(_get_path(obj, paths.spec_replicas) or 0)
    scale: Obj = {
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": {k: meta[k] for k in _SCALE_METADATA if k in meta},
        # ScaleSpec.replicas is omitempty: 0 is not written (kube-apiserver answers spec: {})
        "spec": {"replicas": replicas} if replicas else {},
        "status": {"replicas": int(_get_path(obj, paths.status_replicas) or 0)},
    }
    if selector:
        scale["status"]["selector"] = selector
    return scale
