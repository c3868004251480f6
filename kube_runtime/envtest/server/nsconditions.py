"""The status conditions the namespace controller keeps on a namespace being deleted.

kube-controller-manager's namespace deleter reports, on every pass over a terminating
namespace, five conditions: discovery, group-version parsing and content deletion (always
fine here: the embedded server discovers its own resources), ``NamespaceContentRemaining``
(which resources still have objects, and how many) and ``NamespaceFinalizersRemaining``
(which finalizers hold them). A condition's ``lastTransitionTime`` moves only when its
status does. :func:`updated_conditions` computes the new list from what remains.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

from kube_runtime.envtest.server.resources import ResourceInfo
from kube_runtime.meta import Obj

#: (type, reason, message) of each condition when all is well, in upstream's order.
_OK: tuple[tuple[str, str, str], ...] = (
    ("NamespaceDeletionDiscoveryFailure", "ResourcesDiscovered", "All resources successfully discovered"),
    ("NamespaceDeletionGroupVersionParsingFailure", "ParsedGroupVersions", "All legacy kube types successfully parsed"),
    ("NamespaceDeletionContentFailure", "ContentDeleted", "All content successfully deleted, may be waiting on finalization"),
    ("NamespaceContentRemaining", "ContentRemoved", "All content successfully removed"),
    ("NamespaceFinalizersRemaining", "ContentHasNoFinalizers", "All content-preserving finalizers finished"),
)  # fmt: skip


def _some_remain(reason: str, what: str, counts: Counter[str], verb: str) -> tuple[str, str, str]:
    """A failing condition listing what remains, sorted, as upstream words it: ``"<what>: a has
    2 resource instances, b has 1 resource instances"``."""
    listed = sorted(f"{name} {verb} {n} resource instances" for name, n in counts.items())
    return "True", reason, f"{what}: {', '.join(listed)}"


def _remaining(content: Iterable[tuple[ResourceInfo, Obj]]) -> dict[str, tuple[str, str, str]]:
    """The failing conditions (type -> status, reason, message) for what is left."""
    per_resource: Counter[str] = Counter()
    per_finalizer: Counter[str] = Counter()
    for info, obj in content:
        per_resource[f"{info.plural}.{info.group}"] += 1
        for finalizer in (obj.get("metadata") or {}).get("finalizers") or ():
            per_finalizer[finalizer] += 1
    failing: dict[str, tuple[str, str, str]] = {}
    if per_resource:
        failing["NamespaceContentRemaining"] = _some_remain(
            "SomeResourcesRemain", "Some resources are remaining", per_resource, "has"
        )
    if per_finalizer:
        failing["NamespaceFinalizersRemaining"] = _some_remain(
            "SomeFinalizersRemain",
            "Some content in the namespace has finalizers remaining",
            per_finalizer,
            "in",
        )
    return failing


def updated_conditions(
    old: Sequence[Obj], content: Iterable[tuple[ResourceInfo, Obj]], now: str
) -> list[Obj] | None:
    """The namespace's conditions after a pass that left ``content`` (resource info and
    object of everything still in it); None when nothing changed. Conditions of other
    types are kept as they are."""
    failing = _remaining(content)
    by_type = {str(c.get("type")): c for c in old}
    changed = False
    new: list[Obj] = [c for c in old if c.get("type") not in {t for t, _, _ in _OK}]
    for type_, ok_reason, ok_message in _OK:
        status, reason, message = failing.get(type_, ("False", ok_reason, ok_message))
        previous = by_type.get(type_)
        if previous is None:
            changed = True
            since = now
        else:
            changed = changed or (
                (previous.get("status"), previous.get("reason"), previous.get("message"))
                != (status, reason, message)
            )
            since = (
                now if previous.get("status") != status else str(previous.get("lastTransitionTime"))
            )
        new.append(
            {
                "type": type_,
                "status": status,
                "lastTransitionTime": since,
                "reason": reason,
                "message": message,
            }
        )
    return new if changed else None
