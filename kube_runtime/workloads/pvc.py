"""PersistentVolumeClaims of workload pods: what claim-per-pod controllers share, and the
CloneSet's claims per instance id.

Objects are JSON dicts; the helpers return new dicts and never mutate their inputs.

Shared (any controller that gives each pod its own claims from ``spec.volumeClaimTemplates``):

* :func:`volume_claim_templates` - the workload's templates;
* :func:`claim_from_template` - a claim from a template: a deep copy named as given, in the
  workload's namespace, labels = template labels overlaid with the workload's
  ``spec.selector.matchLabels`` (and any extra labels), no status;
* :func:`pod_volumes_with_claims` - a pod's new ``spec.volumes``: one PVC volume per claim
  (keyed by template name, in that order), then the pod's other volumes (a pod volume named
  like a template is replaced).

CloneSet (openkruise ``cloneset_utils.go`` / ``cloneset_scale.go``): claims carry the
``apps.kruise.io/cloneset-instance-id`` label of their pod; :func:`instance_claims_for_pod`
builds them (``<template>-<cloneset>-<id>``, owned by the pod's controller), and
:func:`available_instance_ids` reuses the ids of claims no pod uses before generating new ones.
Only the CloneSet uses this half: it belongs in ``controllers.cloneset`` and moves there with
that package's restructuring.

The StatefulSet's half (claims per ordinal, creating missing claims, the retention policy as
owner references) lives in ``controllers.statefulset.pvc``; its old names here
(:data:`MOVED_TO_STATEFULSET`) still work for one release, with a ``DeprecationWarning``.
"""

from __future__ import annotations

import copy
import importlib
import random
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from kube_runtime import meta
from kube_runtime._moved import warn_moved
from kube_runtime.kinds import PersistentVolumeClaim

__all__ = [
    "INSTANCE_ID_LABEL",
    "INSTANCE_ID_LENGTH",
    "MOVED_TO_STATEFULSET",
    "available_instance_ids",
    "claim_from_template",
    "claims_of_instance",
    "instance_claim_name",
    "instance_claims_for_pod",
    "instance_pod_volumes_for",
    "pod_volumes_with_claims",
    "volume_claim_templates",
]

Obj = dict[str, Any]

INSTANCE_ID_LABEL = "apps.kruise.io/cloneset-instance-id"
INSTANCE_ID_LENGTH = 5
_RAND_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"

_STATEFULSET_PVC = "controllers.statefulset.pvc"
MOVED_TO_STATEFULSET = frozenset(
    {
        "DELETE",
        "RETAIN",
        "VolumeClaimError",
        "claim_name",
        "claim_owner_up_to_date",
        "claims_for_pod",
        "create_missing_claims",
        "has_non_controller_owner",
        "has_owner_ref",
        "has_stale_owner_ref",
        "has_unexpected_controller",
        "pod_volumes_for",
        "retention_policy",
        "storage_matches",
        "update_claim_owner_refs",
        "update_claims_for_retention_policy",
    }
)
"""Names that moved to ``controllers.statefulset.pvc`` (importable from here until the next
release, with a ``DeprecationWarning``)."""


def __getattr__(name: str) -> Any:
    if name in MOVED_TO_STATEFULSET:
        # Imported on use only: the framework does not depend on the controller.
        module = importlib.import_module(_STATEFULSET_PVC)
        warn_moved(f"{__name__}.{name}", f"{_STATEFULSET_PVC}.{name}")
        return getattr(module, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# --- shared --------------------------------------------------------------------------------


def volume_claim_templates(workload: Mapping[str, Any]) -> Sequence[Mapping[str, Any]]:
    """The workload's ``spec.volumeClaimTemplates`` (empty when it has none)."""
    # Runs for every pod on every sync: a plain dict read (a meta accessor costs ~4x).
    templates: Sequence[Mapping[str, Any]] = (workload.get("spec") or {}).get(
        "volumeClaimTemplates"
    ) or ()
    return templates


def claim_from_template(
    template: Mapping[str, Any],
    name: str,
    workload: Mapping[str, Any],
    extra_labels: Mapping[str, str] | None = None,
) -> Obj:
    """The claim ``name`` of ``template`` for a pod of ``workload`` (see the module
    docstring)."""
    claim = copy.deepcopy(dict(template))
    claim.pop("status", None)
    claim["apiVersion"] = PersistentVolumeClaim.api_version
    claim["kind"] = PersistentVolumeClaim.kind
    claim_meta = claim.setdefault("metadata", {})
    claim_meta["name"] = name
    # For every pod's claims on every sync: plain dict reads (a meta accessor costs ~4x).
    claim_meta["namespace"] = (workload.get("metadata") or {}).get("namespace")
    labels = dict(claim_meta.get("labels") or {})
    selector = (workload.get("spec") or {}).get("selector") or {}
    labels.update(selector.get("matchLabels") or {})
    labels.update(extra_labels or {})
    claim_meta["labels"] = labels
    return claim


def pod_volumes_with_claims(
    claims: Mapping[str, Mapping[str, Any]], pod: Mapping[str, Any]
) -> list[Obj]:
    """``pod``'s new ``spec.volumes`` for ``claims`` (template name -> claim): a PVC volume per
    claim, then the pod's other volumes (copies)."""
    volumes: list[Obj] = [
        {"name": name, "persistentVolumeClaim": {"claimName": meta.name(claim)}}
        for name, claim in claims.items()
    ]
    for volume in meta.spec(pod).get("volumes") or ():
        if volume.get("name") not in claims:
            volumes.append(copy.deepcopy(dict(volume)))
    return volumes


# --- CloneSet instance-id claims -----------------------------------------------------------


def _instance_id(obj: Mapping[str, Any]) -> str:
    return str(meta.labels(obj).get(INSTANCE_ID_LABEL) or "")


def instance_claim_name(template: Mapping[str, Any], workload_name: str, instance_id: str) -> str:
    """``<template name>-<cloneset name>-<instance id>``."""
    return f"{meta.name(template)}-{workload_name}-{instance_id}"


def instance_claims_for_pod(workload: Mapping[str, Any], pod: Mapping[str, Any]) -> dict[str, Obj]:
    """The claims a CloneSet pod implies, keyed by template name: named by the pod's
    instance id, labelled with template labels + selector labels + the instance-id label, and
    owned by the pod's controller (the CloneSet) when it has one."""
    instance_id = _instance_id(pod)
    ref = meta.controller_ref(pod)
    controller = dict(ref) if ref is not None else None
    claims: dict[str, Obj] = {}
    for template in volume_claim_templates(workload):
        claim = claim_from_template(
            template,
            instance_claim_name(template, meta.name(workload), instance_id),
            workload,
            {INSTANCE_ID_LABEL: instance_id},
        )
        if controller is not None:
            claim_meta = claim["metadata"]
            claim_meta["ownerReferences"] = [*(claim_meta.get("ownerReferences") or []), controller]
        claims[meta.name(template)] = claim
    return claims


def instance_pod_volumes_for(workload: Mapping[str, Any], pod: Mapping[str, Any]) -> list[Obj]:
    """The CloneSet pod's new ``spec.volumes``: :func:`pod_volumes_with_claims` of its
    instance-id claims."""
    return pod_volumes_with_claims(instance_claims_for_pod(workload, pod), pod)


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
