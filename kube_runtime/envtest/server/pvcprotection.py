"""The pvc-protection controller of the embedded cluster (kube-controller-manager's
``pvc-protection``, ``pkg/controller/volume/pvcprotection``).

Admission gives every new claim the ``kubernetes.io/pvc-protection`` finalizer
(:mod:`kube_runtime.envtest.server.admission`); this controller decides when it goes:

* a claim being deleted (``deletionTimestamp`` set) that carries the finalizer loses it once no
  pod in its namespace uses it; the store then removes the claim (unless other finalizers
  remain);
* a claim not being deleted that lacks the finalizer gets it back (upstream does this for
  claims created before the admission plugin was enabled; so a client removing it from a live
  claim sees it return).

A pod *uses* a claim, as upstream decides it, when the pod is scheduled (``spec.nodeName``
set: an unscheduled pod never starts with a claim being deleted) and either a
``persistentVolumeClaim`` volume names the claim (whatever the pod's phase: a ``Succeeded`` or
``Failed`` pod still holds its claims until it is deleted), or a generic ``ephemeral`` volume
``V`` of pod ``P`` makes the claim ``P-V``, the claim is controlled by the pod, and the pod is
not shut down (being deleted with grace period 0).

Event-driven, level-based, one background thread: store notifications only enqueue claim keys
(claim events that need work; pod deletions and pods that stopped being able to hold a claim
enqueue the claims they name); each look reads the current state under the store lock, so the
decision and the finalizer removal are atomic with respect to pods being created. An index
from ``(namespace, claim name)`` to the names of pods naming it keeps each look
O(pods naming the claim).
"""

from __future__ import annotations

import functools

from kube_runtime.envtest.server.admission import PVC_PROTECTION_FINALIZER
from kube_runtime.envtest.server.resources import ResourceInfo
from kube_runtime.envtest.server.storage import DELETED, Event, Obj, Store
from kube_runtime.envtest.server.worker import StoreWorker

_PODS = ("", "pods")
_CLAIMS = ("", "persistentvolumeclaims")

Key = tuple[str, str]


def claim_names(pod: Obj) -> list[str]:
    """Names of the claims ``pod`` may use: its ``persistentVolumeClaim`` volumes' claims and
    the ``<pod>-<volume>`` claims of its ``ephemeral`` volumes."""
    spec = pod.get("spec") or {}
    out: list[str] = []
    for volume in spec.get("volumes") or ():
        if not isinstance(volume, dict):
            continue
        source = volume.get("persistentVolumeClaim")
        if isinstance(source, dict) and source.get("claimName"):
            out.append(str(source["claimName"]))
        elif isinstance(volume.get("ephemeral"), dict) and volume.get("name"):
            pod_name = str((pod.get("metadata") or {}).get("name") or "")
            out.append(f"{pod_name}-{volume['name']}")
    return out


def _may_name_claims(pod: Obj) -> bool:
    """False when :func:`claim_names` of ``pod`` is surely empty: none of its volumes has a
    ``persistentVolumeClaim`` or ``ephemeral`` source (a cheaper look than building the
    list, for the pod writes that come by every time)."""
    spec = pod.get("spec")
    volumes = spec.get("volumes") if isinstance(spec, dict) else None
    if not volumes:
        return False
    for volume in volumes:
        if isinstance(volume, dict) and (
            "persistentVolumeClaim" in volume or "ephemeral" in volume
        ):
            return True
    return False


def pod_is_shut_down(pod: Obj) -> bool:
    """Being deleted with grace period 0 (done by the kubelet, or force-deleted)."""
    meta = pod.get("metadata") or {}
    return bool(meta.get("deletionTimestamp")) and meta.get("deletionGracePeriodSeconds") == 0


def pod_uses_claim(pod: Obj, claim: Obj) -> bool:
    """Whether ``pod`` keeps ``claim`` from being removed (see the module docstring)."""
    spec = pod.get("spec") or {}
    if not spec.get("nodeName"):
        return False
    meta = pod.get("metadata") or {}
    claim_meta = claim.get("metadata") or {}
    if meta.get("namespace") != claim_meta.get("namespace"):
        return False
    name = claim_meta.get("name")
    for volume in spec.get("volumes") or ():
        if not isinstance(volume, dict):
            continue
        source = volume.get("persistentVolumeClaim")
        if isinstance(source, dict) and source.get("claimName") == name:
            return True
        if (
            isinstance(volume.get("ephemeral"), dict)
            and f"{meta.get('name')}-{volume.get('name')}" == name
            and not pod_is_shut_down(pod)
            and _controlled_by(claim_meta, str(meta.get("uid") or ""))
        ):
            return True
    return False


def _controlled_by(meta: Obj, owner_uid: str) -> bool:
    return any(
        ref.get("controller") is True and ref.get("uid") == owner_uid
        for ref in meta.get("ownerReferences") or ()
        if isinstance(ref, dict)
    )


def _pod_cannot_hold(pod: Obj) -> bool:
    """Upstream's filter for pod events worth a look at the pod's claims: unscheduled,
    terminated (phase Succeeded/Failed) or being deleted."""
    spec, meta = pod.get("spec") or {}, pod.get("metadata") or {}
    phase = (pod.get("status") or {}).get("phase")
    return (
        not spec.get("nodeName")
        or phase in ("Succeeded", "Failed")
        or bool(meta.get("deletionTimestamp"))
    )


class PvcProtectionController(StoreWorker[Key]):
    """Removes ``kubernetes.io/pvc-protection`` from deleted claims no pod uses. Not started
    until :meth:`start`; :meth:`wait_idle` lets tests wait for the queue to drain."""

    thread_name = "embedded-pvc-protection"
    description = "pvc-protection"
    event_kinds = frozenset({_PODS, _CLAIMS})

    def __init__(self, store: Store) -> None:
        super().__init__(store)
        #: (namespace, claim name) -> names of pods whose volumes name the claim.
        self._pods_by_claim: dict[Key, set[str]] = {}

    # ---------------------------------------------------------------- events

    def _index(self, pod: Obj, add: bool) -> list[str]:
        claims = claim_names(pod)
        if not claims:  # most pods (every pod write comes here: keep it cheap)
            return claims
        meta = pod.get("metadata") or {}
        ns, name = str(meta.get("namespace") or ""), str(meta.get("name") or "")
        for claim in claims:
            key = (ns, claim)
            if add:
                self._pods_by_claim.setdefault(key, set()).add(name)
            else:
                names = self._pods_by_claim.get(key)
                if names is not None:
                    names.discard(name)
                    if not names:
                        del self._pods_by_claim[key]
        return claims

    def _on_event(self, event: Event) -> None:
        """Store listener (called under the store lock): keep the index, enqueue claim keys."""
        key = event.info.key
        obj = event.new.obj
        if key == _PODS:
            if event.old is None and not _may_name_claims(obj):
                return  # a new pod with no claim volumes (most): no index entry, no claim
            if event.old is not None:
                self._index(event.old.obj, add=False)
            if event.type == DELETED:
                claims = self._index(obj, add=False)
            else:
                claims = self._index(obj, add=True)
                if not claims or not _pod_cannot_hold(obj):
                    return
            ns = str(obj["metadata"].get("namespace") or "")
            for claim in claims:
                self.enqueue((ns, claim))
        elif key == _CLAIMS and event.type != DELETED:
            meta = obj["metadata"]
            has = PVC_PROTECTION_FINALIZER in (meta.get("finalizers") or ())
            deleting = bool(meta.get("deletionTimestamp"))
            if deleting == has:  # being deleted with it, or live without it
                self.enqueue((str(meta.get("namespace") or ""), str(meta["name"])))

    def _seed(self) -> None:
        """Index the existing pods and look at the existing claims that need it."""
        pods = self.store.registry.by_key(*_PODS)
        if pods is not None:
            for stored in self.store.objects(pods):
                self._index(stored.obj, add=True)
        claims = self.store.registry.by_key(*_CLAIMS)
        if claims is not None:
            for stored in self.store.objects(claims):
                self._on_event(Event("ADDED", claims, stored, None, stored.rv))

    def _handle(self, item: Key) -> None:
        self.sync(*item)

    def _describe(self, item: Key) -> str:
        return "/".join(item)

    # ---------------------------------------------------------------- logic

    def sync(self, namespace: str, name: str) -> None:
        """Look at claim ``namespace/name`` now: drop the finalizer if it is being deleted and
        unused, add it if it is live and lacks it. 404 and 409 are ignored (a later event
        brings the claim back)."""
        claims = self.store.registry.by_key(*_CLAIMS)
        pods = self.store.registry.by_key(*_PODS)
        if claims is None or pods is None:
            return
        with self.store.lock:
            claim = self.store.try_get(claims, namespace, name)
            if claim is None:
                return
            in_use = functools.partial(self.in_use, pods=pods)
            self._keep_protected(claims, claim, PVC_PROTECTION_FINALIZER, in_use)

    def in_use(self, claim: Obj, pods: ResourceInfo) -> bool:
        """Whether a pod uses ``claim`` (call with the store lock held)."""
        meta = claim["metadata"]
        ns = str(meta.get("namespace") or "")
        for pod_name in list(self._pods_by_claim.get((ns, str(meta["name"])), ())):
            pod = self.store.try_get(pods, ns, pod_name)
            if pod is not None and pod_uses_claim(pod.obj, claim):
                return True
        return False
