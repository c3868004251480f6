"""Volume expansion of the enhanced StatefulSet's claims during a rolling update (Kruise
``statefulset_resize_pvc.go`` and ``pkg/util/pvc``, its ``StatefulSetAutoResizePVCGate`` on),
for sets with ``volumeClaimUpdateStrategy.type: OnPodRollingUpdate``.

A pod's claims are the existing, non-terminating claims of the set's templates for its
ordinal (:func:`pod_claims`). Compared with its template a claim is:

* *compatible without size*: the same storage class (when both name one) and the same access
  modes in the same order;
* *matched* (:func:`claims_matched`, upstream ``IsClaimsCompatible``): compatible without size
  and its storage request not below the template's; a pod whose claims are not all matched is
  a rolling-update target even at the update revision;
* *ready* (:func:`claims_ready`, ``IsOwnedPVCsReady``): compatible without size and its
  ``status.capacity`` at least its request; a pod with an unready claim counts as unavailable;
* *completed* (:func:`claims_completed`, ``IsOwnedPVCsCompleted``): its request at least the
  template's and either ready or ``FileSystemResizePending`` (the file system grows when a pod
  mounts it).

Before a target pod is updated, its claims that need more storage get the template's
``spec.resources`` and the ``apps.kruise.io/owned-by-asts`` annotation (:func:`resize_patches`,
``TryPatchPVC``); a claim that differs in more than its size is an error (Kruise: it waits to
be deleted). Until they are completed the pod is not touched and counts as unavailable.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from controllers.statefulset.pvc import claims_for_pod
from kube_runtime import meta
from kube_runtime.workloads.quantity import parse_quantity, storage_request

__all__ = [
    "ON_POD_ROLLING_UPDATE",
    "OWNED_BY_ASTS_ANNOTATION",
    "ClaimPair",
    "ResizeError",
    "claims_completed",
    "claims_matched",
    "claims_ready",
    "pod_claims",
    "resize_patches",
]

ON_POD_ROLLING_UPDATE: Final = "OnPodRollingUpdate"
OWNED_BY_ASTS_ANNOTATION: Final = "apps.kruise.io/owned-by-asts"
FS_RESIZE_PENDING: Final = "FileSystemResizePending"

#: ``(existing claim, the claim its template implies)``
ClaimPair = tuple[Mapping[str, Any], Mapping[str, Any]]


class ResizeError(Exception):
    """A claim that differs from its template in more than its storage size."""


def pod_claims(
    sts: Mapping[str, Any], pod: Mapping[str, Any], claims: Mapping[str, Mapping[str, Any]]
) -> list[ClaimPair]:
    """The pod's existing, non-terminating claims with their templates' claims."""
    pairs: list[ClaimPair] = []
    for desired in claims_for_pod(sts, pod).values():
        claim = claims.get(meta.name(desired))
        if claim is None or (claim.get("metadata") or {}).get("deletionTimestamp"):
            continue
        pairs.append((claim, desired))
    return pairs


def _spec(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    spec = obj.get("spec")
    return spec if isinstance(spec, Mapping) else {}


def _compatible_without_size(claim: Mapping[str, Any], template: Mapping[str, Any]) -> bool:
    a, b = _spec(claim), _spec(template)
    named = a.get("storageClassName") and b.get("storageClassName")
    if named and a["storageClassName"] != b["storageClassName"]:
        return False
    return list(a.get("accessModes") or ()) == list(b.get("accessModes") or ())


def _needs_expand(claim: Mapping[str, Any], template: Mapping[str, Any]) -> bool:
    have, want = storage_request(dict(claim)), storage_request(dict(template))
    return have is not None and want is not None and have < want


def _compatible(claim: Mapping[str, Any], template: Mapping[str, Any]) -> bool:
    have, want = storage_request(dict(claim)), storage_request(dict(template))
    return (
        _compatible_without_size(claim, template)
        and have is not None
        and want is not None
        and have >= want
    )


def _ready(claim: Mapping[str, Any]) -> bool:
    capacity = parse_quantity(((claim.get("status") or {}).get("capacity") or {}).get("storage"))
    request = storage_request(dict(claim))
    return capacity is not None and request is not None and capacity >= request


def claims_matched(pairs: Sequence[ClaimPair]) -> bool:
    """No claim needs more storage than its template (nor differs in more than size)."""
    return all(_compatible_without_size(c, t) and not _needs_expand(c, t) for c, t in pairs)


def claims_ready(pairs: Sequence[ClaimPair]) -> bool:
    """Every claim has the capacity it requests."""
    return all(_compatible_without_size(c, t) and _ready(c) for c, t in pairs)


def claims_completed(pairs: Sequence[ClaimPair]) -> bool:
    """Every claim requests the template's storage and has it, or waits only for its file
    system to grow."""
    for claim, template in pairs:
        if not _compatible(claim, template):
            return False
        if _ready(claim):
            continue
        if not any(
            c.get("type") == FS_RESIZE_PENDING and c.get("status") == "True"
            for c in (claim.get("status") or {}).get("conditions") or ()
        ):
            return False
    return True


def resize_patches(sts: Mapping[str, Any], pairs: Sequence[ClaimPair]) -> dict[str, dict[str, Any]]:
    """Merge patches by claim name for the claims to expand: the template's
    ``spec.resources`` and the owned-by annotation; :class:`ResizeError` for a claim that
    differs in more than its size."""
    patches: dict[str, dict[str, Any]] = {}
    for claim, template in pairs:
        if not _compatible_without_size(claim, template):
            raise ResizeError(
                f"can not patch pvc {meta.name(claim)}: contains diff other than spec resource, "
                "wait pvc to be deleted"
            )
        if not _needs_expand(claim, template):
            continue
        patches[meta.name(claim)] = {
            "metadata": {"annotations": {OWNED_BY_ASTS_ANNOTATION: meta.name(sts)}},
            "spec": {"resources": dict(_spec(template).get("resources") or {})},
        }
    return patches
