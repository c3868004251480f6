"""kube-apiserver's ``PersistentVolumeClaimResize`` admission plugin
(``plugin/pkg/admission/storage/persistentvolume/resize``) for the embedded server.

An update of a claim (not a subresource) whose ``spec.resources.requests.storage`` grows is
refused with 403 unless the claim was ``Bound`` ("Only bound persistent volume claims can be
expanded") and its StorageClass (the ``volume.beta.kubernetes.io/storage-class`` annotation,
else ``spec.storageClassName``, the same before and after) exists and has
``allowVolumeExpansion: true`` ("only dynamically provisioned pvc can be resized and the
storageclass that provisions the pvc must support resize"). It runs after validation, which
already refuses shrinking a claim ("field can not be less than previous value") and resizing
an unbound one, as upstream's validating admission runs after the registry's validation.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from kube_runtime.envtest.server.admission import forbidden
from kube_runtime.envtest.server.resources import Registry, ResourceInfo
from kube_runtime.workloads.quantity import storage_request

__all__ = ["check_resize"]

_CLAIMS = ("", "persistentvolumeclaims")
_STORAGE_CLASSES = ("storage.k8s.io", "storageclasses")
_BETA_CLASS_ANNOTATION = "volume.beta.kubernetes.io/storage-class"


class _Store(Protocol):
    registry: Registry

    def try_get(self, info: ResourceInfo, namespace: str | None, name: str) -> Any: ...


def _class_of(claim: Mapping[str, Any]) -> str:
    annotations = (claim.get("metadata") or {}).get("annotations") or {}
    if _BETA_CLASS_ANNOTATION in annotations:
        return str(annotations[_BETA_CLASS_ANNOTATION] or "")
    return str((claim.get("spec") or {}).get("storageClassName") or "")


def _allow_resize(store: _Store, new: Mapping[str, Any], old: Mapping[str, Any]) -> bool:
    name, old_name = _class_of(new), _class_of(old)
    if not name or name != old_name:
        return False
    info = store.registry.by_key(*_STORAGE_CLASSES)
    if info is None:
        return False
    stored = store.try_get(info, None, name)
    if stored is None:
        return False
    return stored.obj.get("allowVolumeExpansion") is True


def check_resize(
    store: _Store, info: ResourceInfo, new: dict[str, Any], old: dict[str, Any], subresource: str
) -> None:
    """Raise the plugin's 403 when ``new`` grows ``old``'s storage request and may not."""
    if info.custom or info.key != _CLAIMS or subresource:
        return
    new_size, old_size = storage_request(new), storage_request(old)
    if new_size is None or old_size is None or new_size <= old_size:
        return
    name = str((new.get("metadata") or {}).get("name") or "")
    if (old.get("status") or {}).get("phase") != "Bound":
        raise forbidden(info, name, "Only bound persistent volume claims can be expanded")
    if not _allow_resize(store, new, old):
        raise forbidden(
            info,
            name,
            "only dynamically provisioned pvc can be resized and the storageclass that "
            "provisions the pvc must support resize",
        )
