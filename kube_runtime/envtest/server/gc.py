"""Garbage collector and namespace finalizer of the embedded cluster.

Follows kube-controller-manager's garbage collector through ``ownerReferences``:

* an object whose owners are all gone is deleted (Background); an object with some owners
  gone and some alive loses the references to the gone ones;
* an owner deleted with ``propagationPolicy=Orphan`` carries the ``orphan`` finalizer: its
  dependents lose their reference to it, then the finalizer is removed;
* an owner deleted with ``Foreground`` carries ``foregroundDeletion``: its dependents are
  deleted, and the finalizer is removed once no dependent with ``blockOwnerDeletion: true``
  remains;
* a namespace being deleted has all its content deleted, then its ``kubernetes`` finalizer
  removed, as the namespace controller does, which reports its progress in the namespace's
  status conditions (:mod:`.nsconditions`).

The collector is level-based: events only say which object to look at; each look reads the
current state from the store. It runs on one background thread
(:class:`~kube_runtime.envtest.server.worker.StoreWorker`), whose queue holds each item once.
"""

from __future__ import annotations

from kube_runtime.envtest.server.nsconditions import updated_conditions
from kube_runtime.envtest.server.resources import ResourceInfo
from kube_runtime.envtest.server.storage import (
    ADDED,
    DELETED,
    FINALIZER_FOREGROUND,
    FINALIZER_ORPHAN,
    DeleteOptions,
    Event,
    Obj,
    Stored,
    now_rfc3339,
)
from kube_runtime.envtest.server.worker import StoreWorker

_NAMESPACES = ("", "namespaces")


Item = tuple[str, str]  # ("owner-gone" | "object" | "namespace", uid or namespace name)


class GarbageCollector(StoreWorker[Item]):
    thread_name = "embedded-gc"
    description = "garbage collector"

    # ---------------------------------------------------------------- events

    def _on_event(self, event: Event) -> None:
        meta = event.new.obj["metadata"]
        if (
            event.old is None  # most writes: a new object with no owner, not being deleted
            and event.type != DELETED
            and not meta.get("ownerReferences")
            and not meta.get("deletionTimestamp")
        ):
            return
        uid = str(meta.get("uid", ""))
        put = self.enqueue
        if event.type == DELETED:
            put(("owner-gone", uid))
            for ref in meta.get("ownerReferences") or ():
                put(("object", str(ref.get("uid"))))
            ns = meta.get("namespace")
            if ns:
                put(("namespace", ns))
            return
        refs = meta.get("ownerReferences")
        if (
            not refs
            and not meta.get("deletionTimestamp")
            and (event.old is None or not event.old.meta.get("ownerReferences"))
        ):
            return  # most writes: no owner before or after, not being deleted
        if event.old is not None:
            # An owner whose reference was dropped or changed (e.g. blockOwnerDeletion) may be
            # waiting for this dependent in the foreground: look at it again.
            kept = {str(r.get("uid")): r for r in refs or ()}
            for ref in event.old.meta.get("ownerReferences") or ():
                if kept.get(str(ref.get("uid"))) != ref:
                    put(("object", str(ref.get("uid"))))
        if meta.get("deletionTimestamp"):
            put(("object", uid))
            return
        if refs and (
            event.type == ADDED
            or event.old is None
            or event.old.meta.get("ownerReferences") != refs
        ):
            put(("object", uid))

    def _seed(self) -> None:
        """Look at every object with owners or a deletion mark already stored (a cluster
        restored from its data directory), as the collector's first informer list does."""
        for info in self.store.registry:
            for stored in self.store.objects(info):
                meta = stored.meta
                if meta.get("ownerReferences") or meta.get("deletionTimestamp"):
                    self.enqueue(("object", str(meta.get("uid", ""))))

    def _handle(self, item: Item) -> None:
        kind, key = item
        if kind == "owner-gone":
            self._owner_gone(key)
        elif kind == "object":
            self._check_object(key)
        elif kind == "namespace":
            self._check_namespace_by_name(key)

    # ---------------------------------------------------------------- logic

    def _owner_gone(self, owner_uid: str) -> None:
        for _, dep in self.store.dependents_of(owner_uid):
            self._check_object(str(dep.meta.get("uid")))

    def _check_object(self, uid: str) -> None:
        found = self.store.get_by_uid(uid)
        if found is None:
            return
        info, stored = found
        meta = stored.meta
        if meta.get("deletionTimestamp"):
            finalizers = meta.get("finalizers") or []
            if FINALIZER_ORPHAN in finalizers:
                self._orphan_dependents(info, stored)
            if FINALIZER_FOREGROUND in finalizers:
                self._delete_dependents_foreground(info, stored)
            if info.key == _NAMESPACES:
                self._finalize_namespace(info, stored)
        refs = meta.get("ownerReferences") or []
        if not refs:
            return
        alive = [r for r in refs if self._owner_alive(r, meta.get("namespace"))]
        if len(alive) == len(refs):
            return
        waiting = [r for r in alive if self._owner_waiting_for_dependents(r)]
        if not alive:
            self._delete(info, stored, "Background")
        elif len(waiting) == len(alive) and not meta.get("deletionTimestamp"):
            self._delete(
                info, stored, "Foreground" if self.store.dependents_of(uid) else "Background"
            )
        else:
            dead = {str(r.get("uid")) for r in refs} - {str(r.get("uid")) for r in alive}
            self._remove_refs(info, stored, dead)

    def _owner_alive(self, ref: Obj, namespace: str | None) -> bool:
        """Whether the owner ``ref`` names exists for a dependent in ``namespace``.

        As kube-controller-manager resolves it: the owner is looked up by kind, name and (when
        namespaced) the dependent's own namespace, then its uid must match; so a namespaced
        owner in another namespace is absent. A cluster-scoped dependent naming a namespaced
        owner kind cannot be resolved and is never collected because of that reference.
        """
        group = str(ref.get("apiVersion") or "").rpartition("/")[0]
        owner_kind = self.store.registry.by_kind(group, str(ref.get("kind") or ""))
        if owner_kind is not None and owner_kind.namespaced and not namespace:
            return True
        found = self.store.get_by_uid(str(ref.get("uid")))
        if found is None:
            return False
        info, owner = found
        if owner.meta.get("name") != ref.get("name"):
            return False
        if owner_kind is not None and info.key != owner_kind.key:
            return False
        return not info.namespaced or owner.meta.get("namespace") == namespace

    def _owner_waiting_for_dependents(self, ref: Obj) -> bool:
        found = self.store.get_by_uid(str(ref.get("uid")))
        if found is None:
            return False
        meta = found[1].meta
        return bool(meta.get("deletionTimestamp")) and FINALIZER_FOREGROUND in (
            meta.get("finalizers") or []
        )

    def _orphan_dependents(self, info: ResourceInfo, owner: Stored) -> None:
        owner_uid = str(owner.meta.get("uid"))
        for dep_info, dep in self.store.dependents_of(owner_uid):
            self._remove_refs(dep_info, dep, {owner_uid})
        self._remove_finalizer(info, owner, FINALIZER_ORPHAN)

    def _delete_dependents_foreground(self, info: ResourceInfo, owner: Stored) -> None:
        owner_uid = str(owner.meta.get("uid"))
        blocking = False
        for dep_info, dep in self.store.dependents_of(owner_uid):
            ref: Obj = next(
                (r for r in dep.meta.get("ownerReferences") or [] if r.get("uid") == owner_uid), {}
            )
            if ref.get("blockOwnerDeletion"):
                blocking = True
            others_alive = any(
                self._owner_alive(r, dep.meta.get("namespace"))
                and not self._owner_waiting_for_dependents(r)
                for r in dep.meta.get("ownerReferences") or []
                if r.get("uid") != owner_uid
            )
            if others_alive:
                self._remove_refs(dep_info, dep, {owner_uid})
                continue
            if not dep.meta.get("deletionTimestamp"):
                has_deps = bool(self.store.dependents_of(str(dep.meta.get("uid"))))
                self._delete(dep_info, dep, "Foreground" if has_deps else "Background")
        if not blocking:
            self._remove_finalizer(info, owner, FINALIZER_FOREGROUND)

    def _check_namespace_by_name(self, name: str) -> None:
        info = self.store.registry.by_key(*_NAMESPACES)
        if info is None:
            return
        ns = self.store.try_get(info, None, name)
        if ns is not None and ns.meta.get("deletionTimestamp"):
            self._finalize_namespace(info, ns)

    def _finalize_namespace(self, info: ResourceInfo, ns: Stored) -> None:
        name = ns.meta["name"]
        content = list(self.store.namespaced_objects(name))
        for obj_info, obj in content:
            if not obj.meta.get("deletionTimestamp"):
                self._delete(obj_info, obj, "Background")
        remaining = [(i, s.obj) for i, s in self.store.namespaced_objects(name)]
        self._report_namespace_conditions(info, name, remaining)
        if remaining:
            return
        spec_finalizers = (ns.obj.get("spec") or {}).get("finalizers") or []
        if "kubernetes" not in spec_finalizers:
            return

        def drop(current: Obj) -> Obj:
            spec = dict(current.get("spec") or {})
            spec["finalizers"] = [f for f in spec.get("finalizers") or [] if f != "kubernetes"]
            current["spec"] = spec
            return current

        self._ignore_gone(lambda: self.store.mutate(info, None, name, drop, subresource="finalize"))

    def _report_namespace_conditions(
        self, info: ResourceInfo, name: str, remaining: list[tuple[ResourceInfo, Obj]]
    ) -> None:
        """Write the namespace controller's deletion conditions when they changed."""
        now = now_rfc3339(self.store.clock.time)

        def report(current: Obj) -> Obj:
            status = dict(current.get("status") or {})
            conditions = updated_conditions(status.get("conditions") or [], remaining, now)
            if conditions is not None:
                status["conditions"] = conditions
                current["status"] = status
            return current

        self._ignore_gone(lambda: self.store.mutate(info, None, name, report, subresource="status"))

    # --------------------------------------------------------------- writes

    def _delete(self, info: ResourceInfo, stored: Stored, policy: str) -> None:
        meta = stored.meta
        opts = DeleteOptions(uid=str(meta.get("uid")), propagation=policy)
        self._ignore_gone(
            lambda: self.store.delete(info, meta.get("namespace"), meta["name"], opts)
        )

    def _remove_refs(self, info: ResourceInfo, stored: Stored, uids: set[str]) -> None:
        def drop(m: Obj) -> None:
            refs = [r for r in m.get("ownerReferences") or [] if str(r.get("uid")) not in uids]
            if refs:
                m["ownerReferences"] = refs
            else:
                m.pop("ownerReferences", None)

        self._edit_metadata(info, stored.meta, drop)

    def _remove_finalizer(self, info: ResourceInfo, stored: Stored, finalizer: str) -> None:
        def drop(m: Obj) -> None:
            m["finalizers"] = [f for f in m.get("finalizers") or [] if f != finalizer]

        self._edit_metadata(info, stored.meta, drop)
