"""The pv-protection controller of the embedded cluster (kube-controller-manager's
``pv-protection``, ``pkg/controller/volume/pvprotection``).

Every new PersistentVolume gets the ``kubernetes.io/pv-protection`` finalizer on create
(:mod:`.builtin_core`, as kube-apiserver's StorageObjectInUseProtection admission); this
controller removes it from a volume being deleted once the volume is not in use, which
upstream decides from the volume alone: it is in use while its ``status.phase`` is
``Bound``. A live volume that lacks the finalizer gets it back, as upstream.
"""

from __future__ import annotations

from kube_runtime.envtest.server.storage import DELETED, Event, Obj, Store
from kube_runtime.envtest.server.worker import StoreWorker

__all__ = ["PV_PROTECTION_FINALIZER", "PvProtectionController"]

PV_PROTECTION_FINALIZER = "kubernetes.io/pv-protection"
_VOLUMES = ("", "persistentvolumes")


def _in_use(volume: Obj) -> bool:
    return (volume.get("status") or {}).get("phase") == "Bound"


class PvProtectionController(StoreWorker[str]):
    """Removes ``kubernetes.io/pv-protection`` from deleted volumes not bound to a claim."""

    thread_name = "embedded-pv-protection"
    description = "pv-protection"
    event_kinds = frozenset({_VOLUMES})

    def __init__(self, store: Store) -> None:
        super().__init__(store)

    def _on_event(self, event: Event) -> None:
        if event.info.key != _VOLUMES or event.type == DELETED:
            return
        meta = event.new.obj["metadata"]
        has = PV_PROTECTION_FINALIZER in (meta.get("finalizers") or ())
        if bool(meta.get("deletionTimestamp")) == has:  # being deleted with it, or live without
            self.enqueue(str(meta["name"]))

    def _seed(self) -> None:
        volumes = self.store.registry.by_key(*_VOLUMES)
        if volumes is not None:
            for stored in self.store.objects(volumes):
                self._on_event(Event("ADDED", volumes, stored, None, stored.rv))

    def _handle(self, item: str) -> None:
        self.sync(item)

    def sync(self, name: str) -> None:
        """Look at volume ``name`` now: drop the finalizer if it is being deleted and not
        bound, add it back if it is live and lacks it."""
        volumes = self.store.registry.by_key(*_VOLUMES)
        if volumes is None:
            return
        with self.store.lock:
            volume = self.store.try_get(volumes, None, name)
            if volume is None:
                return
            self._keep_protected(volumes, volume, PV_PROTECTION_FINALIZER, _in_use)
