"""PersistentVolumeClaims of workload pods: per-ordinal claims (StatefulSet), per-instance
claims (CloneSet), creating them before the pod, and the retention policy as owner references.

Objects are JSON dicts; the pure helpers return new dicts and never mutate their inputs.

StatefulSet (kubernetes ``stateful_set_utils.go`` / ``stateful_pod_control.go``):

* :func:`claim_name` — ``<template>-<set>-<ordinal>``;
* :func:`claims_for_pod` — the claims a pod implies, keyed by template name: the template
  (deep copy) named per pod, in the set's namespace, labels = template labels overlaid with
  the set's ``spec.selector.matchLabels``;
* :func:`pod_volumes_for` — the pod's volumes with one PVC volume per template (in template
  order) replacing any same-named volume (``updateStorage``); :func:`storage_matches`;
* :func:`create_missing_claims` — create the claims that do not exist before the pod;
  a claim being deleted is an error (the pod must wait); ``AlreadyExists`` is tolerated.

Retention policy (``spec.persistentVolumeClaimRetentionPolicy``, ``whenDeleted`` /
``whenScaled``: ``Retain`` | ``Delete``), as upstream's ``isClaimOwnerUpToDate`` /
``updateClaimOwnerRefForSetAndPod`` (1.32+) express it with controller owner references that
the garbage collector acts on:

=========================  =============================================================
Retain / Retain            no reference to the set or the pod
whenDeleted=Delete         the set is the claim's controller (while the pod is in range)
whenScaled=Delete          the pod is the claim's controller once its ordinal is out of
                           range (condemned by a scale-down)
=========================  =============================================================

A claim with a reference to an older set or pod of the same name (a stale UID) is left
alone; so is one controlled by somebody else, except that our own references are removed
from it.

CloneSet (openkruise ``cloneset_utils.go`` / ``cloneset_scale.go``): claims carry the
``apps.kruise.io/cloneset-instance-id`` label of their pod; :func:`instance_claims_for_pod`
builds them (``<template>-<cloneset>-<id>``, owned by the pod's controller), and
:func:`available_instance_ids` reuses the ids of claims no pod uses before generating new ones.
"""

from __future__ import annotations

import copy
import logging
import random
from collections.abc import Iterable, Mapping
from typing import Any

from kube_runtime.client.errors import is_already_exists, is_not_found
from kube_runtime.kinds import Kind, PersistentVolumeClaim, Pod, StatefulSet
from kube_runtime.retry import retry_on_conflict
from kube_runtime.workloads.pods import parse_ordinal, pod_in_ordinal_range

__all__ = [
    "DELETE",
    "INSTANCE_ID_LABEL",
    "INSTANCE_ID_LENGTH",
    "RETAIN",
    "VolumeClaimError",
    "available_instance_ids",
    "claim_name",
    "claim_owner_up_to_date",
    "claims_for_pod",
    "claims_of_instance",
    "create_missing_claims",
    "has_non_controller_owner",
    "has_owner_ref",
    "has_stale_owner_ref",
    "has_unexpected_controller",
    "instance_claim_name",
    "instance_claims_for_pod",
    "instance_pod_volumes_for",
    "pod_volumes_for",
    "retention_policy",
    "storage_matches",
    "update_claim_owner_refs",
    "update_claims_for_retention_policy",
]

log = logging.getLogger(__name__)

Obj = dict[str, Any]
Ref = Mapping[str, Any]

RETAIN = "Retain"
DELETE = "Delete"
INSTANCE_ID_LABEL = "apps.kruise.io/cloneset-instance-id"
INSTANCE_ID_LENGTH = 5
_RAND_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"


class VolumeClaimError(RuntimeError):
    """Some claims of a pod could not be made ready; ``errors`` holds one message each."""

    def __init__(self, errors: list[str]) -> None:
        self.errors = list(errors)
        super().__init__("; ".join(self.errors))


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return obj.get("metadata") or {}


def _name(obj: Mapping[str, Any]) -> str:
    return str(_meta(obj).get("name") or "")


def _templates(workload: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return list((workload.get("spec") or {}).get("volumeClaimTemplates") or [])


def _claim_from_template(
    template: Mapping[str, Any],
    name: str,
    workload: Mapping[str, Any],
    extra_labels: Mapping[str, str],
) -> Obj:
    claim = copy.deepcopy(dict(template))
    claim.pop("status", None)
    claim["apiVersion"] = PersistentVolumeClaim.api_version
    claim["kind"] = PersistentVolumeClaim.kind
    meta = claim.setdefault("metadata", {})
    meta["name"] = name
    meta["namespace"] = _meta(workload).get("namespace")
    labels = dict(meta.get("labels") or {})
    labels.update(((workload.get("spec") or {}).get("selector") or {}).get("matchLabels") or {})
    labels.update(extra_labels)
    meta["labels"] = labels
    return claim


# --- StatefulSet claims --------------------------------------------------------------------


def claim_name(template: Mapping[str, Any], set_name: str, ordinal: int) -> str:
    """``<template name>-<set name>-<ordinal>``."""
    return f"{_name(template)}-{set_name}-{ordinal}"


def claims_for_pod(workload: Mapping[str, Any], pod: Mapping[str, Any]) -> dict[str, Obj]:
    """The claims the pod implies, keyed by template name (upstream
    ``getPersistentVolumeClaims``; the ordinal comes from the pod's name)."""
    templates = _templates(workload)
    if not templates:
        return {}
    _, ordinal = parse_ordinal(_name(pod))
    set_name = _name(workload)
    return {
        _name(t): _claim_from_template(t, claim_name(t, set_name, ordinal), workload, {})
        for t in templates
    }


def _volumes_for(claims: Mapping[str, Mapping[str, Any]], pod: Mapping[str, Any]) -> list[Obj]:
    volumes: list[Obj] = [
        {"name": name, "persistentVolumeClaim": {"claimName": _name(claim)}}
        for name, claim in claims.items()
    ]
    for volume in (pod.get("spec") or {}).get("volumes") or ():
        if volume.get("name") not in claims:
            volumes.append(copy.deepcopy(dict(volume)))
    return volumes


def pod_volumes_for(workload: Mapping[str, Any], pod: Mapping[str, Any]) -> list[Obj]:
    """The pod's new ``spec.volumes`` (upstream ``updateStorage``): a PVC volume per claim
    template first, then the pod's other volumes; a pod volume named like a template is
    replaced."""
    return _volumes_for(claims_for_pod(workload, pod), pod)


def storage_matches(workload: Mapping[str, Any], pod: Mapping[str, Any]) -> bool:
    """Whether every claim template has a pod volume of its name using the pod's claim."""
    _, ordinal = parse_ordinal(_name(pod))
    if ordinal < 0:
        return False
    volumes = {v.get("name"): v for v in (pod.get("spec") or {}).get("volumes") or ()}
    for template in _templates(workload):
        volume = volumes.get(_name(template))
        source = (volume or {}).get("persistentVolumeClaim")
        if not source or source.get("claimName") != claim_name(template, _name(workload), ordinal):
            return False
    return True


def create_missing_claims(
    client: Any,
    workload: Mapping[str, Any],
    pod: Mapping[str, Any],
    *,
    reader: Any = None,
    claims: Mapping[str, Mapping[str, Any]] | None = None,
) -> list[Obj]:
    """Create the pod's claims that do not exist yet; return the ones created.

    Existence is read from ``reader`` (a cache, default ``client``). An existing claim is left
    as it is; one being deleted is an error (creating the pod now would bind it to a claim
    about to vanish); ``AlreadyExists`` on create (a stale cache) is fine. Errors are
    collected over all claims and raised together as :class:`VolumeClaimError`. ``claims``
    defaults to :func:`claims_for_pod`.
    """
    wanted = claims if claims is not None else claims_for_pod(workload, pod)
    source = reader if reader is not None else client
    created: list[Obj] = []
    errors: list[str] = []
    for claim in wanted.values():
        meta = _meta(claim)
        name, namespace = str(meta.get("name")), meta.get("namespace")
        try:
            existing = source.get(PersistentVolumeClaim, name, namespace)
        except Exception as err:
            if not is_not_found(err):
                errors.append(f"failed to retrieve PVC {name}: {err}")
                continue
        else:
            if _meta(existing).get("deletionTimestamp"):
                errors.append(f"PVC {namespace}/{name} is being deleted")
            continue
        try:
            created.append(client.create(dict(claim)))
            log.info("created PVC %s/%s for pod %s", namespace, name, _name(pod))
        except Exception as err:
            if not is_already_exists(err):
                errors.append(f"failed to create PVC {name}: {err}")
    if errors:
        raise VolumeClaimError(errors)
    return created


# --- retention policy ----------------------------------------------------------------------


def retention_policy(workload: Mapping[str, Any]) -> tuple[str, str]:
    """``(whenDeleted, whenScaled)``, each ``Retain`` when unset."""
    policy = (workload.get("spec") or {}).get("persistentVolumeClaimRetentionPolicy") or {}
    return policy.get("whenDeleted") or RETAIN, policy.get("whenScaled") or RETAIN


def _kind_of(obj: Mapping[str, Any], default: Kind) -> Kind:
    if obj.get("apiVersion") and obj.get("kind"):
        return Kind(str(obj["apiVersion"]), str(obj["kind"]))
    return default


def _matches_ref(ref: Ref, obj: Mapping[str, Any], kind: Kind) -> bool:
    return (
        ref.get("apiVersion") == kind.api_version
        and ref.get("kind") == kind.kind
        and ref.get("name") == _name(obj)
    )


def _refs(obj: Mapping[str, Any]) -> list[Ref]:
    return list(_meta(obj).get("ownerReferences") or [])


def has_owner_ref(target: Mapping[str, Any], owner: Mapping[str, Any]) -> bool:
    """Whether ``target`` references ``owner`` by UID (controller or not)."""
    uid = _meta(owner).get("uid")
    return any(ref.get("uid") == uid for ref in _refs(target))


def has_stale_owner_ref(target: Mapping[str, Any], owner: Mapping[str, Any], kind: Kind) -> bool:
    """Whether the first reference to ``owner`` (same kind and name) has another UID: an
    older object of that name owns it."""
    for ref in _refs(target):
        if _matches_ref(ref, owner, kind):
            return ref.get("uid") != _meta(owner).get("uid")
    return False


def has_unexpected_controller(
    claim: Mapping[str, Any], workload: Mapping[str, Any], pod: Mapping[str, Any]
) -> bool:
    """Under a non-Retain/Retain policy: whether the claim has a reference to a same-named set
    or pod with another UID, or a controller other than the set and the pod."""
    if retention_policy(workload) == (RETAIN, RETAIN):
        return False
    set_kind, pod_kind = _kind_of(workload, StatefulSet), _kind_of(pod, Pod)
    for ref in _refs(claim):
        for owner, kind in ((workload, set_kind), (pod, pod_kind)):
            if _matches_ref(ref, owner, kind):
                if ref.get("uid") != _meta(owner).get("uid"):
                    return True
                break
        else:
            if ref.get("controller") is True:
                return True
    return False


def has_non_controller_owner(
    claim: Mapping[str, Any], workload: Mapping[str, Any], pod: Mapping[str, Any]
) -> bool:
    """Whether the set or the pod owns the claim without being its controller."""
    uids = {_meta(workload).get("uid"), _meta(pod).get("uid")}
    return any(ref.get("uid") in uids and ref.get("controller") is not True for ref in _refs(claim))


def claim_owner_up_to_date(
    claim: Mapping[str, Any], workload: Mapping[str, Any], pod: Mapping[str, Any]
) -> bool:
    """Whether the claim's owner references already express the retention policy (upstream
    ``isClaimOwnerUpToDate``); True also for claims that must not be touched (stale refs, a
    foreign controller and none of ours)."""
    set_kind, pod_kind = _kind_of(workload, StatefulSet), _kind_of(pod, Pod)
    if has_stale_owner_ref(claim, workload, set_kind) or has_stale_owner_ref(claim, pod, pod_kind):
        return True
    if has_unexpected_controller(claim, workload, pod):
        return not (has_owner_ref(claim, workload) or has_owner_ref(claim, pod))
    if has_non_controller_owner(claim, workload, pod):
        return False
    when_deleted, when_scaled = retention_policy(workload)
    on_set, on_pod = has_owner_ref(claim, workload), has_owner_ref(claim, pod)
    if when_scaled == RETAIN and when_deleted == DELETE:
        return on_set and not on_pod
    if when_scaled == DELETE and when_deleted == RETAIN:
        return not on_set and (not pod_in_ordinal_range(pod, workload)) == on_pod
    if when_scaled == DELETE and when_deleted == DELETE:
        scaled_down = not pod_in_ordinal_range(pod, workload)
        return scaled_down != on_set and scaled_down == on_pod
    if (when_deleted, when_scaled) != (RETAIN, RETAIN):
        log.error(
            "unknown PVC retention policy %s/%s, treating as Retain", when_deleted, when_scaled
        )
    return not on_set and not on_pod


def _controller_ref(owner: Mapping[str, Any], kind: Kind) -> Obj:
    return {
        "apiVersion": kind.api_version,
        "kind": kind.kind,
        "name": _name(owner),
        "uid": _meta(owner).get("uid"),
        "controller": True,
        "blockOwnerDeletion": True,
    }


def update_claim_owner_refs(
    claim: Mapping[str, Any], workload: Mapping[str, Any], pod: Mapping[str, Any]
) -> Obj:
    """A copy of the claim with owner references set for the retention policy (upstream
    ``updateClaimOwnerRefForSetAndPod``): references to the set and pod are scrubbed, then
    the set and/or the pod is added as controller as the policy says; with an unexpected
    controller nothing is added back."""
    result = copy.deepcopy(dict(claim))
    set_kind, pod_kind = _kind_of(workload, StatefulSet), _kind_of(pod, Pod)
    unexpected = has_unexpected_controller(claim, workload, pod)
    refs: list[Obj] = [
        dict(ref)
        for ref in _refs(claim)
        if not (_matches_ref(ref, workload, set_kind) or _matches_ref(ref, pod, pod_kind))
    ]
    if not unexpected:
        when_deleted, when_scaled = retention_policy(workload)
        scaled_down = not pod_in_ordinal_range(pod, workload)
        if when_scaled == DELETE and when_deleted in (RETAIN, DELETE):
            if scaled_down:
                refs.append(_controller_ref(pod, pod_kind))
            elif when_deleted == DELETE:
                refs.append(_controller_ref(workload, set_kind))
        elif when_scaled == RETAIN and when_deleted == DELETE:
            refs.append(_controller_ref(workload, set_kind))
        elif (when_deleted, when_scaled) != (RETAIN, RETAIN):
            log.error(
                "unknown PVC retention policy %s/%s, treating as Retain", when_deleted, when_scaled
            )
    meta = result.setdefault("metadata", {})
    if refs:
        meta["ownerReferences"] = refs
    else:
        meta.pop("ownerReferences", None)
    return result


def update_claims_for_retention_policy(
    client: Any, workload: Mapping[str, Any], pod: Mapping[str, Any], *, reader: Any = None
) -> list[Obj]:
    """Bring the owner references of the pod's existing claims in line with the retention
    policy (upstream ``UpdatePodClaimForRetentionPolicy``); return the claims updated.

    Claims that do not exist are skipped. Each update re-reads the claim (from ``reader``,
    default ``client``) and is retried on conflict; errors are collected into a
    :class:`VolumeClaimError`.
    """
    source = reader if reader is not None else client
    updated: list[Obj] = []
    errors: list[str] = []
    for claim in claims_for_pod(workload, pod).values():
        name, namespace = _name(claim), _meta(claim).get("namespace")

        def attempt(name: str = name, namespace: Any = namespace) -> Obj | None:
            try:
                current = source.get(PersistentVolumeClaim, name, namespace)
            except Exception as err:
                if is_not_found(err):
                    return None
                raise
            if claim_owner_up_to_date(current, workload, pod):
                return None
            result: Obj = client.update(update_claim_owner_refs(current, workload, pod))
            return result

        try:
            result = retry_on_conflict(attempt)
        except Exception as err:
            errors.append(f"could not update claim {name} for retention policy: {err}")
            continue
        if result is not None:
            log.info(
                "updated owner references of PVC %s/%s for pod %s", namespace, name, _name(pod)
            )
            updated.append(result)
    if errors:
        raise VolumeClaimError(errors)
    return updated


# --- CloneSet instance-id claims -----------------------------------------------------------


def _instance_id(obj: Mapping[str, Any]) -> str:
    return str((_meta(obj).get("labels") or {}).get(INSTANCE_ID_LABEL) or "")


def instance_claim_name(template: Mapping[str, Any], workload_name: str, instance_id: str) -> str:
    """``<template name>-<cloneset name>-<instance id>``."""
    return f"{_name(template)}-{workload_name}-{instance_id}"


def instance_claims_for_pod(workload: Mapping[str, Any], pod: Mapping[str, Any]) -> dict[str, Obj]:
    """The claims a CloneSet pod implies, keyed by template name: named by the pod's
    instance id, labelled with template labels + selector labels + the instance-id label, and
    owned by the pod's controller (the CloneSet) when it has one."""
    instance_id = _instance_id(pod)
    controller = next((dict(r) for r in _refs(pod) if r.get("controller") is True), None)
    claims: dict[str, Obj] = {}
    for template in _templates(workload):
        claim = _claim_from_template(
            template,
            instance_claim_name(template, _name(workload), instance_id),
            workload,
            {INSTANCE_ID_LABEL: instance_id},
        )
        if controller is not None:
            meta = claim["metadata"]
            meta["ownerReferences"] = [*(meta.get("ownerReferences") or []), controller]
        claims[_name(template)] = claim
    return claims


def instance_pod_volumes_for(workload: Mapping[str, Any], pod: Mapping[str, Any]) -> list[Obj]:
    """The CloneSet pod's new ``spec.volumes``: as :func:`pod_volumes_for`, by instance id."""
    return _volumes_for(instance_claims_for_pod(workload, pod), pod)


def claims_of_instance(
    instance_id: str, claims: Iterable[Mapping[str, Any]]
) -> list[Mapping[str, Any]]:
    """The claims labelled with ``instance_id`` (deleted together with its pod)."""
    return [c for c in claims if instance_id and _instance_id(c) == instance_id]


def available_instance_ids(
    count: int,
    pods: Iterable[Mapping[str, Any]],
    claims: Iterable[Mapping[str, Any]],
    *,
    rng: random.Random | None = None,
) -> list[str]:
    """``count`` instance ids for new pods (openkruise ``getOrGenAvailableIDs``).

    Ids of claims that no pod uses come first (sorted: their claims are reused), then fresh
    random ids of :data:`INSTANCE_ID_LENGTH` characters that no pod or claim uses.
    """
    used_by_pods = {i for i in (_instance_id(p) for p in pods) if i}
    claim_ids = {i for i in (_instance_id(c) for c in claims) if i}
    existing = used_by_pods | claim_ids
    ids = sorted(claim_ids - used_by_pods)[: max(count, 0)]
    generator = rng or random.SystemRandom()
    while len(ids) < count:
        candidate = "".join(generator.choice(_RAND_ALPHABET) for _ in range(INSTANCE_ID_LENGTH))
        if candidate not in existing:
            existing.add(candidate)
            ids.append(candidate)
    return ids
