"""A CloneSet's revisions and the hash of its ``volumeClaimTemplates`` (openkruise
``cloneset/revision``, ``cloneset_controller.go`` ``getActiveRevisions`` and
``pkg/util/volumeclaimtemplate``).

A revision holds the pod template only, so a change of the claim templates alone makes no new
revision. Every revision the CloneSet records also carries the hash of the claim templates of
the spec it was made from, in the annotation :data:`VCT_HASH_ANNOTATION` (empty when the set
has none), whatever the feature gate says, as Kruise records it. When a rollback brings an
older revision back (its template equals the spec's again) and that revision's hash differs
from the spec's, the hash is rewritten together with the revision's new number.

The hash is read by the in-place decision under Kruise's
``RecreatePodWhenChangeVCTInCloneSetGate`` (:data:`RECREATE_POD_WHEN_CHANGE_VCT_GATE`):
a pod whose revision's hash differs from the update revision's cannot be updated in place
(:func:`can_vct_update_in_place`), so it is recreated, and with it its claims, from the new
templates. The gate is off by default, as in Kruise: :func:`feature_gate_enabled` reads it
from :data:`FEATURE_GATES_ENV` (``setup(recreate_pod_when_change_vct=...)`` overrides it).
"""

from __future__ import annotations

import copy
import logging
import os
from collections.abc import Mapping, Sequence
from typing import Any, Final

from kube_runtime import featuregates, meta
from kube_runtime.kinds import Kind
from kube_runtime.workloads.revision import (
    ReadWriter,
    create_revision,
    equal_revision,
    find_equal_revisions,
    go_json,
    next_revision_number,
    revision_from_object,
    sort_revisions,
    update_revision_number,
)

__all__ = [
    "FEATURE_GATES",
    "FEATURE_GATES_ENV",
    "RECREATE_POD_WHEN_CHANGE_VCT_GATE",
    "VCT_HASH_ANNOTATION",
    "can_vct_update_in_place",
    "feature_gate_enabled",
    "new_revision",
    "parse_feature_gates",
    "resolve_revisions",
    "vct_hash",
    "vct_hash_of",
]

log = logging.getLogger(__name__)

VCT_HASH_ANNOTATION: Final = "kruise.io/cloneset-volumeclaimtemplate-hash"
"""The annotation of a CloneSet revision holding the hash of the set's claim templates."""
RECREATE_POD_WHEN_CHANGE_VCT_GATE: Final = "RecreatePodWhenChangeVCTInCloneSetGate"
"""Kruise's feature gate (alpha, off by default): a changed ``volumeClaimTemplates``
recreates the pods (and their claims) instead of updating them in place."""
FEATURE_GATES_ENV: Final = "KUBE_RUNTIME_FEATURE_GATES"
"""The environment variable holding feature gates in Kruise's ``--feature-gates`` syntax
(``Name=true,Other=false``), read when ``kube-runtime run cloneset`` sets the controller up
(a gate given with ``kube-runtime run --feature-gates`` wins over it)."""
FEATURE_GATES: Final[Mapping[str, bool]] = {RECREATE_POD_WHEN_CHANGE_VCT_GATE: False}
"""The feature gates the CloneSet controller knows, with their defaults (Kruise's): what
``kube-runtime run cloneset --feature-gates`` accepts."""

_FNV32_OFFSET = 0x811C9DC5
_FNV32_PRIME = 0x01000193


def _fnv1a_32(data: bytes) -> int:
    h = _FNV32_OFFSET
    for byte in data:
        h ^= byte
        h = (h * _FNV32_PRIME) & 0xFFFFFFFF
    return h


def vct_hash(templates: Sequence[Mapping[str, Any]] | None) -> str:
    """The hash of claim templates as the revision annotation records it: ``""`` when there
    are none; else the decimal FNV-1a 32 of the templates reduced to their name and spec,
    sorted by name (Kruise ``getExpectHash``; equal templates always give equal hashes, the
    numbers are not Kruise's: only equality is compared)."""
    if not templates:
        return ""
    reduced = sorted(
        (
            {"metadata": {"name": meta.name(t)}, "spec": (t.get("spec") or {})}
            for t in templates
            if isinstance(t, Mapping)
        ),
        key=lambda t: str(t["metadata"]["name"]),
    )
    return str(_fnv1a_32(go_json(reduced)))


def vct_hash_of(revision: Mapping[str, Any] | None) -> str | None:
    """The claim-template hash ``revision`` carries, None when it carries none (a revision
    recorded before the hash was)."""
    if revision is None:
        return None
    annotations = meta.annotations(revision)
    return annotations.get(VCT_HASH_ANNOTATION) if VCT_HASH_ANNOTATION in annotations else None


def can_vct_update_in_place(old: Mapping[str, Any] | None, new: Mapping[str, Any] | None) -> bool:
    """Whether the claim templates allow a pod at revision ``old`` to be updated in place to
    ``new`` (Kruise ``CanVCTemplateInplaceUpdate``): equal hashes, or either revision carries
    none (recorded before the hash was: no recreate for it)."""
    old_hash, new_hash = vct_hash_of(old), vct_hash_of(new)
    if old_hash is None or new_hash is None:
        return True
    return old_hash == new_hash


def new_revision(
    cs: Mapping[str, Any], number: int, collision_count: int, *, controller_kind: Kind
) -> dict[str, Any]:
    """The revision of CloneSet ``cs``'s spec (Kruise ``NewRevision``): the pod template,
    the set's annotations, and :data:`VCT_HASH_ANNOTATION`."""
    revision = revision_from_object(cs, number, collision_count, controller_kind=controller_kind)
    metadata = revision["metadata"]
    annotations = dict(metadata.get("annotations") or {})
    annotations[VCT_HASH_ANNOTATION] = vct_hash(meta.spec(cs).get("volumeClaimTemplates"))
    metadata["annotations"] = annotations
    return dict(revision)


def resolve_revisions(
    client: ReadWriter,
    cs: Mapping[str, Any],
    revisions: Sequence[Mapping[str, Any]],
    *,
    controller_kind: Kind,
) -> tuple[Mapping[str, Any], Mapping[str, Any], int]:
    """Kruise ``getActiveRevisions``: ``(current, update, collision_count)``.

    The spec as a revision (:func:`new_revision`); the newest revision when its template
    equals it (its hash is left as it is: a change of the claim templates alone changes no
    revision); else an older equal revision given the next number (a rollback), its hash set
    to the spec's first when they differ; else the new revision, created. The current
    revision is the one ``status.currentRevision`` names, or the update revision."""
    ordered = sort_revisions(revisions)
    status = meta.status(cs)
    collision_count = int(status.get("collisionCount") or 0)
    update: Mapping[str, Any] = new_revision(
        cs, next_revision_number(ordered), collision_count, controller_kind=controller_kind
    )
    equal = find_equal_revisions(ordered, update)
    if equal and equal_revision(ordered[-1], equal[-1]):
        update = ordered[-1]
    elif equal:
        found = copy.deepcopy(dict(equal[-1]))
        wanted = vct_hash_of(update) or ""
        if vct_hash_of(found) != wanted:
            log.info(
                "%s: revision %s's claim-template hash %r becomes %r",
                meta.key(cs),
                meta.name(found),
                vct_hash_of(found),
                wanted,
            )
            found.setdefault("metadata", {}).setdefault("annotations", {})[VCT_HASH_ANNOTATION] = (
                wanted
            )
        update = update_revision_number(client, found, int(update["revision"]))
    else:
        update, collision_count = create_revision(client, cs, update, collision_count)
    current_name = status.get("currentRevision")
    current = next(
        (r for r in ordered if (r.get("metadata") or {}).get("name") == current_name), update
    )
    return current, update, collision_count


def parse_feature_gates(text: str) -> dict[str, bool]:
    """Feature gates in Kruise's ``--feature-gates`` syntax (``A=true,B=false``; values read
    as Go bools, as the flag reads them: :func:`kube_runtime.featuregates.parse_feature_gates`)
    as a mapping, any gate name accepted; ``ValueError`` for an entry that is not
    ``name=bool``."""
    return featuregates.parse_feature_gates(text)


def feature_gate_enabled(name: str, environ: Mapping[str, str] | None = None) -> bool:
    """Whether gate ``name`` is on in :data:`FEATURE_GATES_ENV` of ``environ`` (default the
    process environment); off when unset, as Kruise's alpha gates are."""
    text = (os.environ if environ is None else environ).get(FEATURE_GATES_ENV, "")
    return parse_feature_gates(text).get(name, False)
