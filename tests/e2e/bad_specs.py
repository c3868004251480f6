"""A corpus of bad specs the API server accepts, for the StatefulSet (apps/v1 and the enhanced
kind) and the CloneSet (issue 18 part 5).

Each entry is ``(name, kind, change)``: ``change`` edits the spec of a good object of that kind
(:func:`good`) in place. The CRDs' schemas leave ``template`` and ``volumeClaimTemplates``
untyped (``x-kubernetes-preserve-unknown-fields``) and check types only, not formats or ranges;
apps/v1 validates a StatefulSet's pod template's labels but not its pod spec (upstream
``ValidatePodTemplateSpecForStatefulSet``), so pods the API then rejects are possible there too.
Used by ``tests/e2e/test_bad_specs_e2e.py``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from controllers.cloneset import CLONESET
from controllers.statefulset import ENHANCED_STATEFULSET
from kube_runtime.kinds import Kind, StatefulSet

__all__ = ["CORPUS", "Change", "good"]

Change = Callable[[dict[str, Any], str], None]
"""Edits ``spec`` (the first argument) of the object named by the second."""

LONG = "x" * 58
"""A name the API accepts for a set (a DNS subdomain) whose pods' hostname (a DNS label, at
most 63 characters) or ``statefulset.kubernetes.io/pod-name`` label it rejects."""


def good(kind: Kind, name: str, namespace: str, replicas: int = 1) -> dict[str, Any]:
    """A set of ``kind`` the controllers converge: ``replicas`` pods labelled ``app: name``."""
    spec: dict[str, Any] = {
        "replicas": replicas,
        "selector": {"matchLabels": {"app": name}},
        "template": {
            "metadata": {"labels": {"app": name}},
            "spec": {"containers": [{"name": "c", "image": "nginx:1"}]},
        },
    }
    if kind != CLONESET:
        spec["serviceName"] = name
    return {
        "apiVersion": kind.api_version,
        "kind": kind.kind,
        "metadata": {"name": name, "namespace": namespace},
        "spec": spec,
    }


def _set(path: str, value: Any) -> Change:
    """Set the dotted ``path`` of the spec to ``value`` (``{name}`` in a string is the name)."""
    keys = path.split(".")

    def change(spec: dict[str, Any], name: str) -> None:
        node = spec
        for key in keys[:-1]:
            node = node.setdefault(key, {})
        node[keys[-1]] = value.replace("{name}", name) if isinstance(value, str) else value

    return change


def _containers(value: Any) -> Change:
    return _set("template.spec.containers", value)


_VOLUME_CLAIM = {
    "metadata": {"name": "data"},
    "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
}

# What both CRD kinds accept: the shapes of template and volumeClaimTemplates, ranges and
# int-or-percent formats, selectors.
_CRD_COMMON: list[tuple[str, Change]] = [
    ("template-string", _set("template", "nginx")),
    ("template-list", _set("template", [{"name": "c"}])),
    ("template-spec-string", _set("template.spec", "nginx")),
    ("template-labels-string", _set("template.metadata", {"labels": "app={name}"})),
    ("template-metadata-list", _set("template.metadata", ["app"])),
    ("containers-string", _containers("nginx")),
    ("containers-of-strings", _containers(["nginx"])),
    ("vct-string", _set("volumeClaimTemplates", "data")),
    ("vct-object", _set("volumeClaimTemplates", {"data": "1Gi"})),
    ("vct-of-strings", _set("volumeClaimTemplates", ["data"])),
    ("vct-no-name", _set("volumeClaimTemplates", [{"spec": _VOLUME_CLAIM["spec"]}])),
    ("vct-metadata-string", _set("volumeClaimTemplates", [{"metadata": "data"}])),
    (
        "vct-spec-string",
        _set("volumeClaimTemplates", [{"metadata": {"name": "data"}, "spec": "1Gi"}]),
    ),
    ("replicas-negative", _set("replicas", -3)),
    ("revision-history-negative", _set("revisionHistoryLimit", -1)),
    ("scale-max-unavailable-word", _set("scaleStrategy.maxUnavailable", "lots")),
    ("selector-mismatch", _set("selector", {"matchLabels": {"app": "other"}})),
    ("selector-empty", _set("selector", {})),
    (
        "selector-bad-operator",
        _set("selector", {"matchExpressions": [{"key": "app", "operator": "Sideways"}]}),
    ),
    ("selector-bad-label", _set("selector", {"matchLabels": {"app": "not a value!"}})),
    ("update-type-unknown", _set("updateStrategy.type", "Sideways")),
]

_ENHANCED: list[tuple[str, Change]] = [
    *_CRD_COMMON,
    ("max-unavailable-word", _set("updateStrategy.rollingUpdate.maxUnavailable", "lots")),
    ("max-unavailable-negative", _set("updateStrategy.rollingUpdate.maxUnavailable", "-10%")),
    ("partition-negative", _set("updateStrategy.rollingUpdate.partition", -1)),
    ("min-ready-negative", _set("updateStrategy.rollingUpdate.minReadySeconds", -5)),
    # issue 29: percentages above 100% and a negative in-place grace period
    ("max-unavailable-over-100", _set("updateStrategy.rollingUpdate.maxUnavailable", "150%")),
    ("partition-percent", _set("updateStrategy.rollingUpdate.partition", "150%")),
    (
        "grace-period-negative",
        _set("updateStrategy.rollingUpdate.inPlaceUpdateStrategy.gracePeriodSeconds", -10),
    ),
    ("pod-update-policy-unknown", _set("updateStrategy.rollingUpdate.podUpdatePolicy", "Teleport")),
    ("reserve-ordinals-word", _set("reserveOrdinals", ["x-y"])),
    ("reserve-ordinals-reversed", _set("reserveOrdinals", ["5-2"])),
    ("ordinals-start-negative", _set("ordinals.start", -1)),
    ("pod-management-unknown", _set("podManagementPolicy", "Sometimes")),
    ("retention-unknown", _set("persistentVolumeClaimRetentionPolicy.whenDeleted", "Shred")),
    ("service-name-invalid", _set("serviceName", "Not_A_Label")),
]

_CLONESET: list[tuple[str, Change]] = [
    *_CRD_COMMON,
    ("partition-word", _set("updateStrategy.partition", "lots")),
    ("partition-negative", _set("updateStrategy.partition", -1)),
    ("max-surge-negative", _set("updateStrategy.maxSurge", "-5%")),
    ("max-unavailable-word", _set("updateStrategy.maxUnavailable", "x%")),
    ("max-unavailable-over-100", _set("updateStrategy.maxUnavailable", "150%")),
    ("partition-over-100", _set("updateStrategy.partition", "150%")),
    ("min-ready-negative", _set("minReadySeconds", -5)),
    ("in-place-only-with-surge", _set("updateStrategy", {"type": "InPlaceOnly", "maxSurge": 1})),
    ("pods-to-delete-empty-name", _set("scaleStrategy.podsToDelete", [""])),
    ("progress-deadline-negative", _set("progressDeadlineSeconds", -1)),
    ("hook-finalizer-invalid", _set("lifecycle.preNormal.finalizersHandler", ["Not A Name!"])),
]

# Pod templates the API accepts in the set and rejects in a pod (422 on create): every kind.
_PODS_REJECTED: list[tuple[str, Change]] = [
    ("no-containers", _containers([])),
    ("container-name-invalid", _containers([{"name": "C_Bad", "image": "nginx:1"}])),
    ("container-no-image", _containers([{"name": "c"}])),
    (
        "mount-of-no-volume",
        _containers(
            [
                {
                    "name": "c",
                    "image": "nginx:1",
                    "volumeMounts": [{"name": "nope", "mountPath": "/d"}],
                }
            ]
        ),
    ),
]

CORPUS: list[tuple[str, Kind, Change]] = [
    *((name, StatefulSet, change) for name, change in _PODS_REJECTED),
    *((name, ENHANCED_STATEFULSET, change) for name, change in [*_ENHANCED, *_PODS_REJECTED]),
    *((name, CLONESET, change) for name, change in [*_CLONESET, *_PODS_REJECTED]),
]
"""Every bad spec: ``(name, kind, change)``."""

LONG_NAMES: list[Kind] = [StatefulSet, ENHANCED_STATEFULSET, CLONESET]
"""Kinds whose sets named ``LONG`` (plus a suffix) have pods the API rejects."""
