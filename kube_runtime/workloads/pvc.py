"""PersistentVolumeClaims of workload pods: what claim-per-pod controllers share.

Objects are JSON dicts; the helpers return new dicts and never mutate their inputs.

Shared (any controller that gives each pod its own claims from ``spec.volumeClaimTemplates``):

* :func:`volume_claim_templates` - the workload's templates;
* :func:`claim_from_template` - a claim from a template: a deep copy named as given, in the
  workload's namespace, labels = template labels overlaid with the workload's
  ``spec.selector.matchLabels`` (and any extra labels), no status;
* :func:`pod_volumes_with_claims` - a pod's new ``spec.volumes``: one PVC volume per claim
  (keyed by template name, in that order), then the pod's other volumes (a pod volume named
  like a template is replaced).

Each controller's own half lives with it: the StatefulSet's claims per ordinal, creating
missing claims and the retention policy in ``controllers.statefulset.pvc``; the CloneSet's
claims per instance id in ``controllers.cloneset.pvc``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kube_runtime import meta
from kube_runtime.kinds import PersistentVolumeClaim
from kube_runtime.meta import Obj

__all__ = [
    "claim_from_template",
    "pod_volumes_with_claims",
    "volume_claim_templates",
]


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
    claim = meta.deep_copy(dict(template))
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
            volumes.append(meta.deep_copy(dict(volume)))
    return volumes
