"""Serving custom resources: CustomResourceDefinition objects become served resources.

On every CRD write the definition is turned into a :class:`ResourceInfo` (names, scope,
served versions with the storage version first, subresources, printer columns, compiled
schemas) and registered; its status gets ``NamesAccepted`` and ``Established`` conditions,
``acceptedNames`` and ``storedVersions`` as kube-apiserver's controllers set them. Deleting a
CRD deletes every object of the resource, then stops serving it.
"""

from __future__ import annotations

import datetime as _dt
from typing import Any

from kube_runtime.embedded import crdschema
from kube_runtime.embedded.resources import ResourceInfo, ScaleSpec
from kube_runtime.embedded.storage import Obj, Store

CRD_KEY = ("apiextensions.k8s.io", "customresourcedefinitions")


def resource_from_crd(crd: Obj) -> ResourceInfo | None:
    """The served resource a CRD describes, or None when it serves no version."""
    spec = crd.get("spec") or {}
    names = spec.get("names") or {}
    versions = [v for v in spec.get("versions") or [] if v.get("served", True)]
    if not versions or not names.get("plural") or not names.get("kind"):
        return None
    storage = next((v for v in versions if v.get("storage")), versions[0])
    ordered = [storage] + [v for v in versions if v is not storage]
    subresources = storage.get("subresources") or spec.get("subresources") or {}
    scale_doc = subresources.get("scale")
    scale = None
    if scale_doc is not None:
        scale = ScaleSpec(
            spec_replicas_path=str(scale_doc.get("specReplicasPath", ".spec.replicas")).lstrip("."),
            status_replicas_path=str(
                scale_doc.get("statusReplicasPath", ".status.replicas")
            ).lstrip("."),
            label_selector_path=(
                str(scale_doc["labelSelectorPath"]).lstrip(".")
                if scale_doc.get("labelSelectorPath")
                else None
            ),
        )
    schemas: dict[str, Any] = {}
    for v in ordered:
        raw = (v.get("schema") or spec.get("validation") or {}).get("openAPIV3Schema")
        schemas[str(v["name"])] = crdschema.compile_schema(raw)
    return ResourceInfo(
        group=str(spec.get("group", "")),
        versions=tuple(str(v["name"]) for v in ordered),
        kind=str(names["kind"]),
        plural=str(names["plural"]),
        singular=str(names.get("singular") or str(names["kind"]).lower()),
        namespaced=spec.get("scope", "Namespaced") == "Namespaced",
        short_names=tuple(names.get("shortNames") or ()),
        categories=tuple(names.get("categories") or ()),
        has_status="status" in subresources,
        scale=scale,
        tracks_generation=True,
        custom=True,
        printer_columns=tuple(
            storage.get("additionalPrinterColumns") or spec.get("additionalPrinterColumns") or ()
        ),
        schemas=schemas,
    )


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


class CrdServing:
    """Keeps the registry in step with CRD objects (called by the API layer on CRD writes).

    The hook may be called with a stale copy of the CRD (e.g. the version a finalizer removal
    just deleted); serving decisions read the CRD from the store: a CRD that is gone or being
    deleted is not (re)served, and a CRD that serves no version any more stops being served
    (its objects are kept, as they stay in etcd).
    """

    def __init__(self, store: Store) -> None:
        self.store = store
        self._served: dict[str, tuple[str, str]] = {}  # CRD name -> (group, plural) served

    def __call__(self, op: str, crd: Obj) -> None:
        with self.store.lock:
            if op == "delete":
                self._unserve(crd)
            else:
                self._serve(crd)

    def _stop_serving(self, name: str, info: ResourceInfo | None, *, drop: bool) -> None:
        registry = self.store.registry
        key = self._served.pop(name, None) or (info.key if info is not None else None)
        if key is None:
            return
        current = registry.by_key(*key)
        if current is None or not current.custom:
            return
        if drop:
            self.store.drop_resource(current)
        registry.remove(*key)

    def _serve(self, crd: Obj) -> None:
        registry = self.store.registry
        crd_info = registry.by_key(*CRD_KEY)
        assert crd_info is not None
        name = str(crd["metadata"]["name"])
        fresh = self.store.try_get(crd_info, None, name)
        if fresh is None:
            self._unserve(crd)
            return
        crd = fresh.obj
        if crd["metadata"].get("deletionTimestamp"):
            return
        info = resource_from_crd(crd)
        if info is None:
            self._stop_serving(name, None, drop=False)
            return
        if self._served.get(name, info.key) != info.key:
            self._stop_serving(name, None, drop=False)
        previous = registry.by_key(info.group, info.plural)
        if previous is not None and not previous.custom:
            return
        registry.add(info)
        self._served[name] = info.key
        spec = crd.get("spec") or {}
        storage = next(
            (v["name"] for v in spec.get("versions") or [] if v.get("storage")), info.version
        )

        def set_status(current: Obj) -> Obj:
            status = dict(current.get("status") or {})
            now = _now()
            old = {c.get("type"): c for c in status.get("conditions") or []}
            conditions = []
            for type_, reason, message in (
                ("NamesAccepted", "NoConflicts", "no conflicts found"),
                ("Established", "InitialNamesAccepted", "the initial names have been accepted"),
            ):
                prev = old.get(type_)
                when = prev["lastTransitionTime"] if prev and prev.get("status") == "True" else now
                conditions.append(
                    {
                        "type": type_,
                        "status": "True",
                        "lastTransitionTime": when,
                        "reason": reason,
                        "message": message,
                    }
                )
            status["conditions"] = conditions
            status["acceptedNames"] = dict(spec.get("names") or {})
            stored_versions = list(status.get("storedVersions") or [])
            if storage not in stored_versions:
                stored_versions.append(storage)
            status["storedVersions"] = stored_versions
            current["status"] = status
            return current

        self.store.mutate(crd_info, None, name, set_status, subresource="status")

    def _unserve(self, crd: Obj) -> None:
        self._stop_serving(str(crd["metadata"]["name"]), resource_from_crd(crd), drop=True)
