"""A CloneSet's PersistentVolumeClaims, per instance id (openkruise ``cloneset_utils.go``
and ``cloneset_scale.go``).

Every pod of a CloneSet has an instance id (a random suffix, its
``apps.kruise.io/cloneset-instance-id`` label; the pod is ``<set>-<id>``), and one claim per
``volumeClaimTemplates`` entry named ``<template>-<set>-<id>`` with the same label, owned by
the set. A claim outlives its pod: when a pod is deleted its claims go with it, but claims
whose pod is gone (an earlier failure, a manual deletion) are reused by the next pod, which
takes their id (:func:`available_instance_ids`).

What claim-per-pod controllers share (building a claim from a template, a pod's volumes)
comes from :mod:`kube_runtime.workloads.pvc`. Functions return new dicts and never mutate
their inputs.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping
from typing import Any, Final

from kube_runtime import meta
from kube_runtime.meta import Obj
from kube_runtime.workloads.pvc import (
    claim_from_template,
    pod_volumes_with_claims,
    volume_claim_templates,
)

__all__ = [
    "INSTANCE_ID_LABEL",
    "INSTANCE_ID_LENGTH",
    "available_instance_ids",
    "claims_of_instance",
    "claims_without_reuse",
    "instance_claim_name",
    "instance_claims_for_pod",
    "instance_id",
    "instance_pod_volumes_for",
]


INSTANCE_ID_LABEL: Final = "apps.kruise.io/cloneset-instance-id"
INSTANCE_ID_LENGTH: Final = 5
_ID_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
"""Upstream's ``rand.String`` alphabet: no vowels (no words), no easily confused characters."""


def instance_id(obj: Mapping[str, Any]) -> str:
    """The instance id of a pod or claim (``""`` when it has none)."""
    return str(meta.labels(obj).get(INSTANCE_ID_LABEL) or "")


def instance_claim_name(template: Mapping[str, Any], set_name: str, instance: str) -> str:
    """``<template name>-<set name>-<instance id>``."""
    return f"{meta.name(template)}-{set_name}-{instance}"


def instance_claims_for_pod(cs: Mapping[str, Any], pod: Mapping[str, Any]) -> dict[str, Obj]:
    """The claims pod ``pod`` of set ``cs`` uses, by template name: named after the pod's
    instance id, labelled like the template plus the set's ``matchLabels`` and the instance
    id, and owned by the pod's controller (the set) when it has one."""
    instance = instance_id(pod)
    owner = meta.controller_ref(pod)
    claims: dict[str, Obj] = {}
    for template in volume_claim_templates(cs):
        claim = claim_from_template(
            template,
            instance_claim_name(template, meta.name(cs), instance),
            cs,
            {INSTANCE_ID_LABEL: instance},
        )
        if owner is not None:
            claim_meta = claim["metadata"]
            claim_meta["ownerReferences"] = [
                *(claim_meta.get("ownerReferences") or ()),
                dict(owner),
            ]
        claims[meta.name(template)] = claim
    return claims


def instance_pod_volumes_for(cs: Mapping[str, Any], pod: Mapping[str, Any]) -> list[Obj]:
    """The new pod's ``spec.volumes``: one claim volume per template, then its own volumes."""
    return pod_volumes_with_claims(instance_claims_for_pod(cs, pod), pod)


def claims_of_instance(
    instance: str, claims: Iterable[Mapping[str, Any]]
) -> list[Mapping[str, Any]]:
    """The claims of instance ``instance`` (none for ``""``): they go with its pod."""
    if not instance:
        return []
    return [c for c in claims if instance_id(c) == instance]


def claims_without_reuse(
    active_pods: Iterable[Mapping[str, Any]],
    inactive_pods: Iterable[Mapping[str, Any]],
    claims: Iterable[Mapping[str, Any]],
) -> tuple[list[Mapping[str, Any]], list[Mapping[str, Any]]]:
    """With ``scaleStrategy.disablePVCReuse`` (upstream ``cleanupPVCs``): ``(the claims of
    active pods, the claims to delete)``. A claim whose instance has no pod at all is deleted
    so that no new pod takes it over (the next pod gets a new id and new claims); a claim of
    an inactive pod (terminating, succeeded or failed) is neither kept for reuse nor deleted
    yet: it is deleted once that pod is gone (upstream hands it to the pod for the garbage
    collector instead, which needs the right to update claims)."""
    active = {i for i in map(instance_id, active_pods) if i}
    inactive = {i for i in map(instance_id, inactive_pods) if i}
    kept: list[Mapping[str, Any]] = []
    to_delete: list[Mapping[str, Any]] = []
    for claim in claims:
        ident = instance_id(claim)
        if ident in active:
            kept.append(claim)
        elif ident not in inactive:
            to_delete.append(claim)
    return kept, to_delete


def available_instance_ids(
    count: int,
    pods: Iterable[Mapping[str, Any]],
    claims: Iterable[Mapping[str, Any]],
    *,
    rng: random.Random | None = None,
) -> list[str]:
    """``count`` instance ids for new pods (upstream ``getOrGenAvailableIDs``): first the ids
    of claims no pod uses (sorted; the new pods take those claims over), then fresh random
    ids of :data:`INSTANCE_ID_LENGTH` characters no pod or claim uses."""
    taken = {i for i in map(instance_id, pods) if i}
    orphaned = {i for i in map(instance_id, claims) if i} - taken
    ids = sorted(orphaned)[: max(count, 0)]
    used = taken | orphaned
    generator = rng or random.SystemRandom()
    while len(ids) < count:
        candidate = "".join(generator.choice(_ID_ALPHABET) for _ in range(INSTANCE_ID_LENGTH))
        if candidate not in used:
            used.add(candidate)
            ids.append(candidate)
    return ids
