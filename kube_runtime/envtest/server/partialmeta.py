"""Metadata-only answers: ``Accept: application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1``.

kube-apiserver turns any object it serves into a ``meta.k8s.io`` ``PartialObjectMetadata``
(its ``metadata`` whole, nothing else) when the client asks for it in the ``Accept`` header,
and a list into a ``PartialObjectMetadataList``; client-go's metadata client and
controller-runtime's metadata informers read this way to cache only metadata. The rules, as
the apiserver's response transformation decides them:

* the conversion target is the first media range of ``Accept`` the server can produce; a
  range naming ``as=`` must also name group ``meta.k8s.io`` and version ``v1`` or
  ``v1beta1``, or it is skipped (protobuf ranges are skipped too: the embedded server speaks
  JSON only);
* ``get`` with ``PartialObjectMetadata`` and ``list`` with ``PartialObjectMetadataList``
  answer the metadata; the other pairings are ``406 NotAcceptable``;
* a watch turns each event's object into ``PartialObjectMetadata`` when asked for it
  (bookmarks included); asked for a ``PartialObjectMetadataList`` it sends whole objects,
  as kube-apiserver does when the per-event transformation fails.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kube_runtime.envtest.server.errors import ApiError, api_error
from kube_runtime.envtest.server.storage import Obj

__all__ = [
    "ITEM",
    "LIST",
    "PartialTarget",
    "as_partial",
    "go_type_name",
    "partial_list",
    "partial_target",
    "require",
]

ITEM = "PartialObjectMetadata"
LIST = "PartialObjectMetadataList"
_GROUP = "meta.k8s.io"
_VERSIONS = ("v1", "v1beta1")
_JSON_TYPES = ("application/json", "application/*", "*/*")


@dataclass(frozen=True)
class PartialTarget:
    """What the client asked to receive: ``kind`` (:data:`ITEM` or :data:`LIST`) in
    ``meta.k8s.io/<version>``."""

    kind: str
    version: str

    @property
    def api_version(self) -> str:
        return f"{_GROUP}/{self.version}"


def _params(media_range: str) -> tuple[str, dict[str, str]]:
    kind, *rest = (part.strip() for part in media_range.split(";"))
    params: dict[str, str] = {}
    for item in rest:
        key, _, value = item.partition("=")
        params[key.strip().lower()] = value.strip()
    return kind.lower(), params


def partial_target(accept: str) -> PartialTarget | None:
    """The metadata-only target of an ``Accept`` header, or None (serve the object itself, or
    a Table: :mod:`.tables` reads ``as=Table`` on its own)."""
    for media_range in accept.split(","):
        if not media_range.strip():
            continue
        media_type, params = _params(media_range)
        if media_type not in _JSON_TYPES:
            continue
        target = params.get("as")
        if target is None:
            return None
        if params.get("g") != _GROUP or params.get("v") not in _VERSIONS:
            continue
        if target in (ITEM, LIST):
            return PartialTarget(target, params["v"])
        return None  # a Table: not ours
    return None


def _not_acceptable(message: str) -> ApiError:
    return api_error(406, message, "NotAcceptable")


def go_type_name(group: str, kind: str, *, custom: bool, listing: bool) -> str:
    """The Go type kube-apiserver's 406 message names: the internal type of a built-in kind
    (``*core.PodList``, ``*apps.StatefulSet``), ``*unstructured.Unstructured[List]`` for a
    custom resource."""
    suffix = "List" if listing else ""
    if custom:
        return f"*unstructured.Unstructured{suffix}"
    package = "core" if group in ("", "events.k8s.io") else group.split(".")[0]
    return f"*{package}.{kind}{suffix}"


def require(target: PartialTarget, *, listing: bool, type_name: str) -> None:
    """Raise the apiserver's 406 when ``target`` does not fit the answer (one object for
    ``get``, a list for ``list``); ``type_name`` is the Go type the message names
    (:func:`go_type_name`)."""
    if listing and target.kind == ITEM:
        raise _not_acceptable(
            f"you requested {ITEM}, but the requested object is a list ({type_name})"
        )
    if not listing and target.kind == LIST:
        raise _not_acceptable(
            f"you requested {LIST}, but the requested object is not a list ({type_name})"
        )


def as_partial(obj: Obj, target: PartialTarget) -> Obj:
    """``obj`` as a ``PartialObjectMetadata``: its whole ``metadata``, nothing else."""
    return {"kind": ITEM, "apiVersion": target.api_version, "metadata": obj.get("metadata", {})}


def partial_list(objs: list[Obj], list_meta: dict[str, Any], target: PartialTarget) -> Obj:
    """A ``PartialObjectMetadataList`` of ``objs`` with the list's ``metadata``."""
    return {
        "kind": LIST,
        "apiVersion": target.api_version,
        "metadata": list_meta,
        "items": [as_partial(obj, target) for obj in objs],
    }
