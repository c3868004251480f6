"""Serving custom resources: CustomResourceDefinition objects become served resources.

On every CRD write the definition is turned into a :class:`ResourceInfo` (names, scope,
served versions with the storage version first, subresources, printer columns, compiled
schemas) and registered; its status gets ``NamesAccepted`` and ``Established`` conditions,
``acceptedNames`` and ``storedVersions`` as kube-apiserver's controllers set them.

Deleting a CRD follows apiextensions-apiserver: the first DELETE (see :func:`mark_deleting`)
only stamps ``deletionTimestamp``, adds the ``customresourcecleanup.apiextensions.k8s.io``
finalizer and a ``Terminating=True`` condition. While ``Terminating`` is True the kind stays
served for reads, lists, watches, updates, patches and deletes (the cleanup needs them) and
refuses creates (405; discovery lists only delete, deletecollection, get, list, watch). The
finalizer worker (:class:`CrdServing`'s thread, like apiextensions' CRDFinalizer) deletes every
object of the kind, waits until none is left (objects with finalizers keep it waiting), sets
``Terminating=False`` (``InstanceDeletionCompleted``) and removes its finalizer; the CRD goes
once no other finalizer holds it, and only then is the kind no longer served. Objects left in
storage (none after a cleanup) are kept, as etcd keeps them, and served again by a new CRD of
the same kind. ``deletecollection`` of CRDs skips the cleanup, as upstream's does.
"""

from __future__ import annotations

import dataclasses
import logging
from typing import Any

from kube_runtime.envtest.server import crdschema
from kube_runtime.envtest.server.errors import ApiError
from kube_runtime.envtest.server.resources import ResourceInfo, ScaleSpec
from kube_runtime.envtest.server.storage import DELETED, Event, Obj, Store, now_rfc3339
from kube_runtime.envtest.server.worker import StoreWorker

log = logging.getLogger(__name__)

CRD_KEY = ("apiextensions.k8s.io", "customresourcedefinitions")
CLEANUP_FINALIZER = "customresourcecleanup.apiextensions.k8s.io"
#: What a terminating CRD's kind still serves (apiextensions' discovery controller).
TERMINATING_VERBS = ("delete", "deletecollection", "get", "list", "watch")


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
        conversion_webhook=_conversion_webhook(spec),
    )


def _conversion_webhook(spec: Obj) -> dict[str, Any] | None:
    """``spec.conversion.webhook`` when the CRD converts through a webhook."""
    conversion = spec.get("conversion") or {}
    if conversion.get("strategy") != "Webhook":
        return None
    webhook = conversion.get("webhook")
    return dict(webhook) if isinstance(webhook, dict) else {}


def _condition(crd: Obj, type_: str) -> Obj | None:
    for c in (crd.get("status") or {}).get("conditions") or ():
        if c.get("type") == type_:
            return dict(c)
    return None


def is_terminating(crd: Obj) -> bool:
    """Whether the CRD's ``Terminating`` condition is True (creates of its kind refused)."""
    cond = _condition(crd, "Terminating")
    return cond is not None and cond.get("status") == "True"


def set_condition(
    crd: Obj, type_: str, status: str, reason: str, message: str, *, now: str
) -> None:
    """Set one status condition of ``crd`` in place (transition time kept unless it flips);
    ``now``: the server's time (RFC 3339), the transition time of a condition that flips."""
    st = crd.setdefault("status", {})
    conditions = [dict(c) for c in st.get("conditions") or ()]
    for c in conditions:
        if c.get("type") == type_:
            if c.get("status") != status:
                c["lastTransitionTime"] = now
            c.update(status=status, reason=reason, message=message)
            break
    else:
        conditions.append(
            {
                "type": type_,
                "status": status,
                "lastTransitionTime": now,
                "reason": reason,
                "message": message,
            }
        )
    st["conditions"] = conditions


def mark_deleting(crd: Obj, now: str) -> None:
    """The first deletion of a CRD (given to ``Store.delete(mark=...)``): add the cleanup
    finalizer and ``Terminating=True`` (``InstanceDeletionPending``, at ``now``), in place."""
    meta = crd["metadata"]
    finalizers = list(meta.get("finalizers") or ())
    if CLEANUP_FINALIZER not in finalizers:
        finalizers.append(CLEANUP_FINALIZER)
    meta["finalizers"] = finalizers
    set_condition(
        crd,
        "Terminating",
        "True",
        "InstanceDeletionPending",
        "CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon",
        now=now,
    )


class CrdServing(StoreWorker[str]):
    """Keeps the registry in step with CRD objects (called by the API layer on CRD writes),
    and runs the CRD finalizer on a background thread between :meth:`start` and :meth:`stop`.

    The hook may be called with a stale copy of the CRD (e.g. the version a finalizer removal
    just deleted); serving decisions read the CRD from the store: a CRD that is gone is not
    served, a terminating one keeps its kind served with :data:`TERMINATING_VERBS` while its
    ``Terminating`` condition is True, and a CRD that serves no version any more stops being
    served (its objects are kept, as they stay in etcd).
    """

    thread_name = "embedded-crd-finalizer"
    description = "CRD finalizer"

    def __init__(self, store: Store) -> None:
        super().__init__(store)
        self._served: dict[str, tuple[str, str]] = {}  # CRD name -> (group, plural) served
        # What _on_event looks at: CRDs' events and the served kinds' (a deletion of one of
        # their objects); the store does not call it for the others (every pod write).
        self.event_kinds: frozenset[tuple[str, str]] | None = frozenset({CRD_KEY})

    def _served_changed(self) -> None:
        """Listen to the kinds now served (store lock held)."""
        kinds = frozenset({CRD_KEY, *self._served.values()})
        if kinds != self.event_kinds:
            self.event_kinds = kinds
            self.store.set_listener_kinds(self._on_event, kinds)

    def __call__(self, op: str, crd: Obj) -> None:
        with self.store.lock:
            self._serve(crd)

    def _now(self) -> str:
        """The server's time as conditions' ``lastTransitionTime`` (the store's clock)."""
        return now_rfc3339(self.store.clock.time)

    # ------------------------------------------------------------- finalizer

    def _seed(self) -> None:
        """Look at the CRDs already being deleted (at :meth:`start`)."""
        crd_info = self.store.registry.by_key(*CRD_KEY)
        if crd_info is not None:
            for stored in self.store.objects(crd_info):
                if stored.meta.get("deletionTimestamp"):
                    self.enqueue(str(stored.meta["name"]))

    def _on_event(self, event: Event) -> None:
        """Under the store lock: only enqueue the CRD names to look at."""
        if event.info.key == CRD_KEY:
            meta = event.new.meta
            if meta.get("deletionTimestamp") and event.type != DELETED:
                self.enqueue(str(meta.get("name")))
            return
        if event.type != DELETED:  # (every write of a served kind comes here: keep it cheap)
            return
        group = event.info.group
        for name, (g, _plural) in list(self._served.items()):
            if g == group:
                self.enqueue(name)

    def _handle(self, item: str) -> None:
        self._finalize(item)

    def _finalize(self, name: str) -> None:
        """One level-based look at CRD ``name``: clean up its objects, then release it."""
        store = self.store
        crd_info = store.registry.by_key(*CRD_KEY)
        assert crd_info is not None
        stored = store.try_get(crd_info, None, name)
        if stored is None:
            return
        crd = stored.obj
        meta = crd["metadata"]
        if not meta.get("deletionTimestamp") or CLEANUP_FINALIZER not in (
            meta.get("finalizers") or ()
        ):
            return
        key = self._served.get(name)
        info = store.registry.by_key(*key) if key is not None else None
        if info is not None and info.custom:
            self._set_terminating(
                name, "True", "InstanceDeletionInProgress", "CustomResource deletion is in progress"
            )
            # Deleting again what is already being deleted commits nothing.
            try:
                store.delete_collection(info, None, None)
            except ApiError as e:
                log.warning("CRD %s: deleting its objects failed: %s", name, e.message)
            if store.objects(info):
                return  # objects with finalizers left: looked at again when one goes
            self._set_terminating(
                name, "False", "InstanceDeletionCompleted", "removed all instances"
            )
        else:
            self._set_terminating(
                name, "False", "NeverEstablished", "resource was never established"
            )

        def release(current: Obj) -> Obj:
            cmeta = current["metadata"]
            cmeta["finalizers"] = [
                f for f in cmeta.get("finalizers") or () if f != CLEANUP_FINALIZER
            ]
            if not cmeta["finalizers"]:
                del cmeta["finalizers"]
            return current

        try:
            released = store.mutate(crd_info, None, name, release)
        except ApiError as e:
            if e.code == 404:
                return
            raise
        with store.lock:
            self._serve(released.obj)

    def _set_terminating(self, name: str, status: str, reason: str, message: str) -> None:
        crd_info = self.store.registry.by_key(*CRD_KEY)
        assert crd_info is not None

        def change(current: Obj) -> Obj:
            set_condition(current, "Terminating", status, reason, message, now=self._now())
            return current

        stored = self.store.mutate(crd_info, None, name, change, subresource="status")
        with self.store.lock:
            self._serve(stored.obj)

    # --------------------------------------------------------------- serving

    def _stop_serving(self, name: str, info: ResourceInfo | None) -> None:
        registry = self.store.registry
        key = self._served.pop(name, None) or (info.key if info is not None else None)
        self._served_changed()
        if key is None:
            return
        current = registry.by_key(*key)
        if current is None or not current.custom:
            return
        registry.remove(*key)

    def _serve(self, crd: Obj) -> None:
        registry = self.store.registry
        crd_info = registry.by_key(*CRD_KEY)
        assert crd_info is not None
        name = str(crd["metadata"]["name"])
        fresh = self.store.try_get(crd_info, None, name)
        if fresh is None:
            self._stop_serving(name, resource_from_crd(crd))
            return
        crd = fresh.obj
        if crd["metadata"].get("deletionTimestamp"):
            # Terminating: keep serving what is served, without create while Terminating.
            key = self._served.get(name)
            current = registry.by_key(*key) if key is not None else None
            if key is None and (_condition(crd, "Established") or {}).get("status") == "True":
                # Restored from a data directory while terminating: it was served before.
                current = resource_from_crd(crd)
                taken = registry.by_key(*current.key) if current is not None else None
                if current is not None and taken is not None and not taken.custom:
                    current = None  # a built-in kind's name: never served
                if current is not None:
                    self._served[name] = current.key
                    self._served_changed()
            if current is not None and current.custom:
                full = resource_from_crd(crd)
                verbs = TERMINATING_VERBS if is_terminating(crd) else (full or current).verbs
                registry.add(dataclasses.replace(current, verbs=verbs))
            return
        info = resource_from_crd(crd)
        if info is None:
            self._stop_serving(name, None)
            return
        if self._served.get(name, info.key) != info.key:
            self._stop_serving(name, None)
        previous = registry.by_key(info.group, info.plural)
        if previous is not None and not previous.custom:
            return
        registry.add(info)
        self._served[name] = info.key
        self._served_changed()
        spec = crd.get("spec") or {}
        storage = next(
            (v["name"] for v in spec.get("versions") or [] if v.get("storage")), info.version
        )

        def set_status(current: Obj) -> Obj:
            status = dict(current.get("status") or {})
            now = self._now()
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
