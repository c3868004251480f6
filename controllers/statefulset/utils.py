"""Pure helpers of the StatefulSet controller (upstream ``stateful_set_utils.go``; the
enhanced kind's fields follow openkruise ``apps/v1beta1`` StatefulSet).

Pods and sets are JSON dicts. The same helpers serve both kinds; what a sync reads of the
spec (update strategy, the enhanced kind's fields) is read once, as a
:class:`~controllers.statefulset.spec.StatefulSetView`. Functions whose name starts with
``set_``/``update_``/``init_`` change the pod they are given (callers pass their own copy,
never a cached object); every other function leaves its arguments alone.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from controllers.statefulset.pvc import plain_metadata, plain_name, pod_volumes_for, storage_matches
from controllers.statefulset.spec import (
    IN_PLACE_IF_POSSIBLE,
    IN_PLACE_ONLY,
    RECREATE,
    ordinals_for,
    parse_reserved_ordinals,
)
from kube_runtime import meta
from kube_runtime.kinds import Kind, StatefulSet
from kube_runtime.meta import Obj
from kube_runtime.workloads.pods import (
    is_available,
    is_healthy,
    is_ready,
    is_running_and_ready,
    is_terminating,
    parse_ordinal,
)
from kube_runtime.workloads.revision import POD_REVISION_LABEL, pod_revision

__all__ = [
    "ENHANCED_STATEFULSET",
    "IN_PLACE_IF_POSSIBLE",
    "IN_PLACE_ONLY",
    "ORDERED_TEARDOWN_FINALIZER",
    "POD_INDEX_LABEL",
    "POD_NAME_LABEL",
    "RECREATE",
    "SKIP_ORDERED_TEARDOWN_ANNOTATION",
    "SPECIFIED_DELETE_LABEL",
    "PodFacts",
    "end_ordinal",
    "identity_matches",
    "in_ordered_teardown",
    "is_enhanced",
    "is_member_of",
    "is_running_and_available",
    "is_unavailable",
    "kind_of",
    "new_stateful_set_pod",
    "new_versioned_pod",
    "ordered_teardown",
    "ordinal_of",
    "pod_name",
    "pod_revision",
    "replica_count",
    "replica_ordinals",
    "reserved_ordinals",
    "set_key",
    "start_ordinal",
    "storage_matches",
    "update_identity",
    "update_storage",
]


POD_NAME_LABEL = "statefulset.kubernetes.io/pod-name"
POD_INDEX_LABEL = "apps.kubernetes.io/pod-index"

ENHANCED_STATEFULSET = Kind("apps.kube-runtime.io/v1beta1", "StatefulSet")
"""The enhanced kind: Kruise's Advanced StatefulSet (``apps.kruise.io/v1beta1``) in our group."""
SPECIFIED_DELETE_LABEL = "apps.kruise.io/specified-delete"
"""On a replica of an enhanced set: delete it (within ``maxUnavailable``, whatever the
partition); it is recreated at the revision its ordinal gets (Kruise's label, as the CloneSet's)."""
ORDERED_TEARDOWN_FINALIZER = "apps.kube-runtime.io/ordered-teardown"
"""Put on enhanced sets: deleting one scales it to 0 in reverse ordinal order first."""
SKIP_ORDERED_TEARDOWN_ANNOTATION = "apps.kube-runtime.io/skip-ordered-teardown"
"""``"true"`` on an enhanced set: no finalizer, deleting it leaves its pods to the garbage
collector (the apps/v1 behaviour)."""


def set_key(sts: Mapping[str, Any]) -> str:
    """``namespace/name`` of the set (its expectations key and the prefix of its logs; the
    :attr:`~kube_runtime.reconcile.Request.key` of its requests)."""
    return meta.key(sts)


def kind_of(sts: Mapping[str, Any]) -> Kind:
    """The set's kind: apps/v1 ``StatefulSet`` or :data:`ENHANCED_STATEFULSET`."""
    return ENHANCED_STATEFULSET if is_enhanced(sts) else StatefulSet


def is_enhanced(sts: Mapping[str, Any]) -> bool:
    """Whether the set is of the enhanced kind (status extras, readiness gate, teardown)."""
    return sts.get("apiVersion") == ENHANCED_STATEFULSET.api_version


def ordered_teardown(sts: Mapping[str, Any]) -> bool:
    """Whether deleting this set tears it down in order: an enhanced set not opted out by
    :data:`SKIP_ORDERED_TEARDOWN_ANNOTATION`."""
    return (
        is_enhanced(sts) and meta.annotations(sts).get(SKIP_ORDERED_TEARDOWN_ANNOTATION) != "true"
    )


def replica_count(sts: Mapping[str, Any]) -> int:
    """``spec.replicas`` (the API defaults it to 1)."""
    replicas = meta.spec(sts).get("replicas")
    return 1 if replicas is None else int(replicas)


def start_ordinal(sts: Mapping[str, Any]) -> int:
    """``spec.ordinals.start``, default 0."""
    return int((meta.spec(sts).get("ordinals") or {}).get("start") or 0)


def end_ordinal(sts: Mapping[str, Any]) -> int:
    """The highest ordinal in range (``start + replicas - 1``)."""
    return start_ordinal(sts) + replica_count(sts) - 1


def reserved_ordinals(sts: Mapping[str, Any]) -> frozenset[int]:
    """``spec.reserveOrdinals``: ints and ``"a-b"`` ranges (inclusive); ``ValueError`` for a
    malformed entry."""
    return parse_reserved_ordinals(meta.spec(sts).get("reserveOrdinals"))


def replica_ordinals(sts: Mapping[str, Any]) -> list[int]:
    """The ordinals of the set's replicas, ascending: ``replicas`` ordinals from
    ``ordinals.start`` on, skipping the reserved ones (apps/v1: ``[start, start + replicas)``).
    A sync reads them once, with the rest of the spec: :attr:`StatefulSetView.ordinals`."""
    return ordinals_for(start_ordinal(sts), replica_count(sts), reserved_ordinals(sts))


def in_ordered_teardown(sts: Mapping[str, Any]) -> bool:
    """The set is being deleted and still carries :data:`ORDERED_TEARDOWN_FINALIZER`: its pods
    go one at a time, highest ordinal first, before the finalizer is removed."""
    return (
        meta.is_deleting(sts)
        and ordered_teardown(sts)
        and ORDERED_TEARDOWN_FINALIZER in meta.finalizers(sts)
    )


def pod_name(sts: Mapping[str, Any], ordinal: int) -> str:
    """``<set>-<ordinal>``."""
    return f"{meta.name(sts)}-{ordinal}"


def ordinal_of(pod: Mapping[str, Any]) -> int:
    """The pod's ordinal from its name; -1 when it has none."""
    return parse_ordinal(plain_name(pod))[1]


def is_member_of(sts: Mapping[str, Any], pod: Mapping[str, Any]) -> bool:
    """Whether the pod's name parses as ``<this set>-<ordinal>`` (the claim filter)."""
    return parse_ordinal(plain_name(pod))[0] == plain_metadata(sts).get("name")


def is_running_and_available(
    pod: Mapping[str, Any], min_ready_seconds: float, now: datetime | None = None
) -> bool:
    """Running, ready, and ready for longer than ``min_ready_seconds``."""
    return is_running_and_ready(pod) and is_available(pod, min_ready_seconds, now)[0]


def is_unavailable(
    pod: Mapping[str, Any], min_ready_seconds: float, now: datetime | None = None
) -> bool:
    """Counts against ``maxUnavailable``: not healthy (terminating included) or not available."""
    return not is_healthy(pod) or not is_running_and_available(pod, min_ready_seconds, now)


_EMPTY: Mapping[str, Any] = {}


class PodFacts:
    """What one pass reads of one pod's state, read once (a pass asks each pod's phase,
    readiness and ordinal a dozen times; the pod does not change during a pass). Each field
    is the answer of the predicate it is named after, for ``min_ready_seconds`` and ``now``:
    :func:`~kube_runtime.workloads.pods.is_created` (``created``), ``is_pending``,
    ``is_failed``, ``is_succeeded``, ``is_terminating``, ``is_running_and_ready``
    (``running_and_ready``), :func:`~kube_runtime.workloads.pods.is_healthy` (``healthy``),
    :func:`is_running_and_available` (``available``), :func:`is_unavailable`
    (``unavailable``), :func:`ordinal_of` and :func:`pod_revision`. ``pod`` is the pod read."""

    __slots__ = (
        "available",
        "created",
        "failed",
        "healthy",
        "ordinal",
        "pending",
        "pod",
        "revision",
        "running_and_ready",
        "succeeded",
        "terminating",
        "unavailable",
    )

    def __init__(
        self, pod: Mapping[str, Any], min_ready_seconds: float, now: datetime | None = None
    ) -> None:
        self.pod = pod
        # The phase predicates, from one read of the phase (as they read it).
        phase = str((pod.get("status") or _EMPTY).get("phase") or "")
        self.created = phase != ""
        self.pending = phase == "Pending"
        self.failed = phase == "Failed"
        self.succeeded = phase == "Succeeded"
        self.terminating = is_terminating(pod)
        self.running_and_ready = phase == "Running" and is_ready(pod)
        self.healthy = self.running_and_ready and not self.terminating
        self.available = self.running_and_ready and (
            min_ready_seconds == 0 or is_available(pod, min_ready_seconds, now)[0]
        )
        self.unavailable = not self.healthy or not self.available
        self.ordinal = ordinal_of(pod)
        self.revision = pod_revision(pod)


# --- identity and storage ------------------------------------------------------------------


def identity_matches(sts: Mapping[str, Any], pod: Mapping[str, Any]) -> bool:
    """Name ``<set>-<ordinal>``, the set's namespace, and the pod-name / pod-index labels."""
    pod_meta, set_meta = plain_metadata(pod), plain_metadata(sts)
    name = pod_meta.get("name") or ""
    parent, ordinal = parse_ordinal(name)
    labels = pod_meta.get("labels") or {}
    return (
        ordinal >= 0
        and parent == set_meta.get("name")
        and pod_meta.get("namespace") == set_meta.get("namespace")
        and labels.get(POD_NAME_LABEL) == name
        and labels.get(POD_INDEX_LABEL) == str(ordinal)
    )


def update_identity(sts: Mapping[str, Any], pod: Obj) -> None:
    """Give ``pod`` (a private copy) the set's namespace and the identity labels."""
    ordinal = ordinal_of(pod)
    pod_meta = pod.setdefault("metadata", {})
    pod_meta["name"] = pod_name(sts, ordinal)
    pod_meta["namespace"] = meta.namespace(sts) or None
    labels = dict(meta.labels(pod))
    labels[POD_NAME_LABEL] = pod_meta["name"]
    labels[POD_INDEX_LABEL] = str(ordinal)
    pod_meta["labels"] = labels


def update_storage(sts: Mapping[str, Any], pod: Obj) -> None:
    """Point the pod's volumes at its per-ordinal claims (upstream ``updateStorage``)."""
    if not meta.spec(sts).get("volumeClaimTemplates"):
        return
    pod.setdefault("spec", {})["volumes"] = pod_volumes_for(sts, pod)


def _init_identity(sts: Mapping[str, Any], pod: Obj) -> None:
    update_identity(sts, pod)
    spec = pod.setdefault("spec", {})
    spec["hostname"] = meta.name(pod)
    service = meta.spec(sts).get("serviceName")
    if service:
        spec["subdomain"] = service


def new_stateful_set_pod(sts: Mapping[str, Any], ordinal: int) -> Obj:
    """The pod of ``sts``'s template at ``ordinal`` (not created): template labels,
    annotations and finalizers, the set as controller, identity and storage filled in."""
    template = meta.spec(sts).get("template") or {}
    tmeta = meta.metadata(template)
    pod_meta: Obj = {
        "name": pod_name(sts, ordinal),
        "namespace": meta.namespace(sts) or None,
        "labels": dict(tmeta.get("labels") or {}),
        "ownerReferences": [
            {
                "apiVersion": str(sts.get("apiVersion") or StatefulSet.api_version),
                "kind": str(sts.get("kind") or StatefulSet.kind),
                "name": meta.name(sts) or None,
                "uid": meta.uid(sts) or None,
                "controller": True,
                "blockOwnerDeletion": True,
            }
        ],
    }
    if tmeta.get("annotations"):
        pod_meta["annotations"] = dict(tmeta["annotations"])
    if tmeta.get("finalizers"):
        pod_meta["finalizers"] = list(tmeta["finalizers"])
    pod: Obj = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": pod_meta,
        "spec": meta.deep_copy(dict(template.get("spec") or {})),
    }
    _init_identity(sts, pod)
    update_storage(sts, pod)
    return pod


def new_versioned_pod(
    current_set: Mapping[str, Any],
    update_set: Mapping[str, Any],
    current_revision: str,
    update_revision: str,
    ordinal: int,
    *,
    current_needed: bool | None = None,
) -> Obj:
    """The pod to create at ``ordinal`` (upstream ``newVersionedStatefulSetPod``): from the
    current revision when a rolling update has not reached that ordinal (below
    ``start + partition``, or below ``start + status.currentReplicas`` without a
    ``rollingUpdate`` block), else from the update revision; labelled with that revision.
    ``current_needed`` overrides that choice (the unordered update decides by counts)."""
    strategy = meta.spec(current_set).get("updateStrategy") or {}
    rolling = strategy.get("rollingUpdate")
    start = start_ordinal(current_set)
    current_replicas = int(meta.status(current_set).get("currentReplicas") or 0)
    # Go's precedence: (RollingUpdate type && no rollingUpdate && below current) || (rollingUpdate && below partition)
    use_current = (
        strategy.get("type", "RollingUpdate") == "RollingUpdate"
        and rolling is None
        and ordinal < start + current_replicas
    ) or (rolling is not None and ordinal < start + int(rolling.get("partition") or 0))
    if current_needed is not None:
        use_current = current_needed
    if use_current:
        pod = new_stateful_set_pod(current_set, ordinal)
        revision = current_revision
    else:
        pod = new_stateful_set_pod(update_set, ordinal)
        revision = update_revision
    if revision:
        pod["metadata"]["labels"][POD_REVISION_LABEL] = revision
    return pod
