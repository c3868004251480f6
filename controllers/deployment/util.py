"""Pure decisions of the Deployment controller (upstream ``pkg/controller/deployment/util``).

Everything here reads Deployments and ReplicaSets as JSON dicts and changes nothing but the
copies it is given (the functions that set annotations or conditions say so). The rules, each
as kube-controller-manager decides:

* revisions: :data:`REVISION_ANNOTATION` on every ReplicaSet and on the Deployment, the new
  ReplicaSet's revision one more than the largest of the old ones (:func:`max_revision`),
  an older revision kept in :data:`REVISION_HISTORY_ANNOTATION` when a ReplicaSet comes back
  (:func:`set_new_replica_set_annotations`);
* the fenceposts: ``maxSurge`` rounds up and ``maxUnavailable`` down against
  ``spec.replicas``, and when both come to 0 ``maxUnavailable`` is 1
  (:func:`resolve_fenceposts`);
* the new ReplicaSet's size during a rollout (:func:`new_rs_new_replicas`) and the share of a
  scaling a ReplicaSet gets (:func:`get_proportion`);
* the rollout's state: :func:`deployment_complete`, :func:`deployment_progressing`,
  :func:`deployment_timed_out`.
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Iterable, Mapping, MutableMapping, Sequence
from datetime import datetime, timedelta
from typing import Any

from kube_runtime.meta import ObjView as Obj
from kube_runtime.workloads.intstr import scaled_value
from kube_runtime.workloads.pods import parse_time

__all__ = [
    "ANNOTATIONS_TO_SKIP",
    "DEFAULT_MAX_SURGE",
    "DEFAULT_MAX_UNAVAILABLE",
    "DESIRED_REPLICAS_ANNOTATION",
    "MAX_INT32",
    "MAX_REPLICAS_ANNOTATION",
    "MAX_REV_HISTORY_LENGTH_IN_CHARS",
    "POD_TEMPLATE_HASH_LABEL",
    "RECREATE",
    "REVISION_ANNOTATION",
    "REVISION_HISTORY_ANNOTATION",
    "ROLLING_UPDATE",
    "active_replica_sets",
    "available_replicas",
    "deployment_complete",
    "deployment_progressing",
    "deployment_timed_out",
    "desired_replicas_annotation",
    "equal_ignore_hash",
    "find_active_or_latest",
    "find_new_replica_set",
    "find_old_replica_sets",
    "get_proportion",
    "has_progress_deadline",
    "has_revision_history_limit",
    "is_rolling_update",
    "is_saturated",
    "max_revision",
    "max_surge",
    "max_unavailable",
    "new_rs_new_replicas",
    "ready_replicas",
    "replicas_annotations_need_update",
    "resolve_fenceposts",
    "revision",
    "set_new_replica_set_annotations",
    "set_replicas_annotations",
    "sort_by_creation",
    "sort_by_revision",
    "sort_by_size_newer",
    "sort_by_size_older",
    "spec_replicas",
    "status_replicas",
]


REVISION_ANNOTATION = "deployment.kubernetes.io/revision"
"""The revision of a ReplicaSet (and of its Deployment: the new ReplicaSet's)."""
REVISION_HISTORY_ANNOTATION = "deployment.kubernetes.io/revision-history"
"""The earlier revisions of a ReplicaSet that came back (a rollback to its template)."""
DESIRED_REPLICAS_ANNOTATION = "deployment.kubernetes.io/desired-replicas"
"""``spec.replicas`` of the Deployment when it last sized the ReplicaSet."""
MAX_REPLICAS_ANNOTATION = "deployment.kubernetes.io/max-replicas"
"""``spec.replicas + maxSurge`` of the Deployment when it last sized the ReplicaSet."""
POD_TEMPLATE_HASH_LABEL = "pod-template-hash"
"""apps/v1 ``DefaultDeploymentUniqueLabelKey``: on a ReplicaSet, its selector and its pods."""
ANNOTATIONS_TO_SKIP = frozenset(
    {
        "kubectl.kubernetes.io/last-applied-configuration",
        REVISION_ANNOTATION,
        REVISION_HISTORY_ANNOTATION,
        DESIRED_REPLICAS_ANNOTATION,
        MAX_REPLICAS_ANNOTATION,
        "deprecated.deployment.rollback.to",
    }
)
"""Annotations of a Deployment not copied to its ReplicaSets."""
MAX_REV_HISTORY_LENGTH_IN_CHARS = 2000
"""The longest :data:`REVISION_HISTORY_ANNOTATION` the controller writes."""
MAX_INT32 = 2**31 - 1
"""``progressDeadlineSeconds`` / ``revisionHistoryLimit`` of this value mean "none"."""
ROLLING_UPDATE = "RollingUpdate"
RECREATE = "Recreate"
DEFAULT_MAX_SURGE = "25%"
DEFAULT_MAX_UNAVAILABLE = "25%"


# --- reading a Deployment / ReplicaSet ------------------------------------------------------


def _spec(obj: Obj) -> Mapping[str, Any]:
    return obj.get("spec") or {}


def _status(obj: Obj) -> Mapping[str, Any]:
    return obj.get("status") or {}


def _metadata(obj: Obj) -> Mapping[str, Any]:
    return obj.get("metadata") or {}


def spec_replicas(obj: Obj | None) -> int:
    """``spec.replicas`` (1 when absent, the API server's default); 0 for None."""
    if obj is None:
        return 0
    value = _spec(obj).get("replicas")
    return 1 if value is None else int(value)


def status_replicas(rs: Obj | None) -> int:
    """``status.replicas`` (0 when absent or for None)."""
    return int(_status(rs).get("replicas") or 0) if rs is not None else 0


def ready_replicas(rs: Obj | None) -> int:
    """``status.readyReplicas`` (0 when absent or for None)."""
    return int(_status(rs).get("readyReplicas") or 0) if rs is not None else 0


def available_replicas(rs: Obj | None) -> int:
    """``status.availableReplicas`` (0 when absent or for None)."""
    return int(_status(rs).get("availableReplicas") or 0) if rs is not None else 0


def _strategy(d: Obj) -> Mapping[str, Any]:
    return _spec(d).get("strategy") or {}


def is_rolling_update(d: Obj) -> bool:
    """Whether the Deployment's strategy is RollingUpdate (the default)."""
    return (_strategy(d).get("type") or ROLLING_UPDATE) == ROLLING_UPDATE


def has_progress_deadline(d: Obj) -> bool:
    """``progressDeadlineSeconds`` set and not MaxInt32."""
    value = _spec(d).get("progressDeadlineSeconds")
    return value is not None and int(value) != MAX_INT32


def has_revision_history_limit(d: Obj) -> bool:
    """``revisionHistoryLimit`` set and not MaxInt32."""
    value = _spec(d).get("revisionHistoryLimit")
    return value is not None and int(value) != MAX_INT32


# --- fenceposts -----------------------------------------------------------------------------


def resolve_fenceposts(max_surge: Any, max_unavailable: Any, desired: int) -> tuple[int, int]:
    """``(surge, unavailable)`` as absolute numbers of pods: ``max_surge`` scaled against
    ``desired`` rounding up, ``max_unavailable`` rounding down (None counts as 0). When both
    come to 0 (validation refuses two zeros, but ``"1%"`` of 10 floors to 0) ``unavailable``
    is 1, so a rollout can always move. ``ValueError`` for a value that is not an int or a
    percentage."""
    surge = scaled_value(0 if max_surge is None else max_surge, desired, True)
    unavailable = scaled_value(0 if max_unavailable is None else max_unavailable, desired, False)
    if surge == 0 and unavailable == 0:
        unavailable = 1
    return surge, unavailable


def _rolling_params(d: Obj) -> tuple[Any, Any]:
    rolling = _strategy(d).get("rollingUpdate") or {}
    return (
        rolling.get("maxSurge", DEFAULT_MAX_SURGE),
        rolling.get("maxUnavailable", DEFAULT_MAX_UNAVAILABLE),
    )


def max_unavailable(d: Obj) -> int:
    """Pods the Deployment may have unavailable during a rolling update: 0 for Recreate or
    0 replicas, never more than ``spec.replicas``."""
    replicas = spec_replicas(d)
    if not is_rolling_update(d) or replicas == 0:
        return 0
    _, unavailable = resolve_fenceposts(*_rolling_params(d), replicas)
    return min(unavailable, replicas)


def max_surge(d: Obj) -> int:
    """Pods the Deployment may run above ``spec.replicas`` during a rolling update (0 for
    Recreate)."""
    if not is_rolling_update(d):
        return 0
    surge, _ = resolve_fenceposts(*_rolling_params(d), spec_replicas(d))
    return surge


def new_rs_new_replicas(d: Obj, all_rss: Iterable[Obj | None], new_rs: Obj) -> int:
    """The size the new ReplicaSet may grow to now (upstream ``NewRSNewReplicas``).

    RollingUpdate: as many as ``spec.replicas + maxSurge`` leaves room for over the replicas
    all the ReplicaSets have (``spec.replicas`` of each), never above ``spec.replicas``; its
    current size when there is no room. Recreate: ``spec.replicas``. ``ValueError`` for
    another strategy."""
    strategy = _strategy(d).get("type") or ROLLING_UPDATE
    desired = spec_replicas(d)
    if strategy == ROLLING_UPDATE:
        surge, _ = resolve_fenceposts(*_rolling_params(d), desired)
        current = sum(spec_replicas(rs) for rs in all_rss if rs is not None)
        max_total = desired + surge
        new_size = spec_replicas(new_rs)
        if current >= max_total:
            return new_size
        return new_size + min(max_total - current, desired - new_size)
    if strategy == RECREATE:
        return desired
    raise ValueError(f"deployment type {strategy} isn't supported")


def is_saturated(d: Obj, rs: Obj | None) -> bool:
    """The ReplicaSet has all the Deployment's replicas, by spec, annotation and available
    pods."""
    if rs is None:
        return False
    desired = desired_replicas_annotation(rs)
    if desired is None:
        return False
    replicas = spec_replicas(d)
    return (
        spec_replicas(rs) == replicas and desired == replicas and available_replicas(rs) == replicas
    )


# --- annotations ----------------------------------------------------------------------------


def revision(obj: Obj) -> int:
    """The object's :data:`REVISION_ANNOTATION` as an int (0 when absent); ``ValueError``
    when it is not an integer."""
    raw = (_metadata(obj).get("annotations") or {}).get(REVISION_ANNOTATION)
    if raw is None or raw == "":
        return 0
    return int(raw, 10)


def max_revision(rss: Iterable[Obj | None]) -> int:
    """The largest revision among ``rss`` (unparsable ones are skipped), 0 for none."""
    best = 0
    for rs in rss:
        if rs is None:
            continue
        try:
            best = max(best, revision(rs))
        except ValueError:
            continue
    return best


def desired_replicas_annotation(rs: Obj) -> int | None:
    """:data:`DESIRED_REPLICAS_ANNOTATION` as an int (None when absent or unparsable)."""
    raw = (_metadata(rs).get("annotations") or {}).get(DESIRED_REPLICAS_ANNOTATION)
    try:
        return int(raw, 10) if raw is not None else None
    except ValueError:
        return None


def _annotations(obj: MutableMapping[str, Any]) -> dict[str, str]:
    metadata = obj.setdefault("metadata", {})
    annotations = metadata.get("annotations")
    if annotations is None:
        annotations = metadata["annotations"] = {}
    return annotations


def set_replicas_annotations(rs: MutableMapping[str, Any], desired: int, max_replicas: int) -> bool:
    """Set the desired/max replicas annotations on ``rs`` (in place); True when one
    changed."""
    annotations = _annotations(rs)
    changed = False
    for key, value in (
        (DESIRED_REPLICAS_ANNOTATION, str(desired)),
        (MAX_REPLICAS_ANNOTATION, str(max_replicas)),
    ):
        if annotations.get(key) != value:
            annotations[key] = value
            changed = True
    return changed


def replicas_annotations_need_update(rs: Obj, desired: int, max_replicas: int) -> bool:
    """Whether :func:`set_replicas_annotations` would change ``rs``."""
    annotations = _metadata(rs).get("annotations") or {}
    return annotations.get(DESIRED_REPLICAS_ANNOTATION) != str(desired) or annotations.get(
        MAX_REPLICAS_ANNOTATION
    ) != str(max_replicas)


def _copy_annotations(d: Obj, rs: MutableMapping[str, Any]) -> bool:
    """The Deployment's annotations but :data:`ANNOTATIONS_TO_SKIP` onto ``rs``; True when
    one changed. Annotations the ReplicaSet has and the Deployment does not are kept."""
    annotations = _annotations(rs)
    changed = False
    for key, value in (_metadata(d).get("annotations") or {}).items():
        if key in ANNOTATIONS_TO_SKIP or annotations.get(key) == value:
            continue
        annotations[key] = value
        changed = True
    return changed


def set_new_replica_set_annotations(
    d: Obj,
    rs: MutableMapping[str, Any],
    new_revision: str,
    exists: bool,
    history_limit_chars: int = MAX_REV_HISTORY_LENGTH_IN_CHARS,
) -> bool:
    """Bring the new ReplicaSet's annotations up to date (in place); True when one changed.

    The Deployment's annotations are copied; the revision goes up to ``new_revision`` when the
    ReplicaSet's is lower (an unparsable one stops here, False); a ReplicaSet that had a
    revision keeps it in :data:`REVISION_HISTORY_ANNOTATION` (oldest dropped past
    ``history_limit_chars``); one about to be created (``exists`` False) gets the replicas
    annotations.
    """
    changed = _copy_annotations(d, rs)
    annotations = _annotations(rs)
    old_revision = annotations.get(REVISION_ANNOTATION)
    had_revision = old_revision is not None
    old_revision = old_revision or ""
    try:
        old_number = int(old_revision, 10)
    except ValueError:
        if old_revision != "":
            return False
        old_number = 0
    try:
        new_number = int(new_revision, 10)
    except ValueError:
        return False
    if old_number < new_number:
        annotations[REVISION_ANNOTATION] = new_revision
        changed = True
    if had_revision and old_number < new_number:
        history = annotations.get(REVISION_HISTORY_ANNOTATION, "")
        old_revisions = history.split(",")
        if not old_revisions[0]:
            annotations[REVISION_HISTORY_ANNOTATION] = old_revision
        else:
            total = len(history) + len(old_revision) + 1
            start = 0
            while total > history_limit_chars and start < len(old_revisions):
                total -= len(old_revisions[start]) + 1
                start += 1
            if total <= history_limit_chars:
                annotations[REVISION_HISTORY_ANNOTATION] = ",".join(
                    [*old_revisions[start:], old_revision]
                )
    if not exists and set_replicas_annotations(
        rs, spec_replicas(d), spec_replicas(d) + max_surge(d)
    ):
        changed = True
    return changed


# --- finding ReplicaSets ----------------------------------------------------------------------


def _created(obj: Obj) -> datetime | None:
    return parse_time(_metadata(obj).get("creationTimestamp"))


def _older(a: Obj, b: Obj) -> bool:
    """``ReplicaSetsByCreationTimestamp``: earlier first, ties by name."""
    ta, tb = _created(a), _created(b)
    if ta == tb or ta is None or tb is None:
        if ta != tb:
            return ta is None
        return str(_metadata(a).get("name") or "") < str(_metadata(b).get("name") or "")
    return ta < tb


def _sorted(rss: Iterable[Obj], less: Any) -> list[Any]:
    def compare(a: Obj, b: Obj) -> int:
        if less(a, b):
            return -1
        return 1 if less(b, a) else 0

    return sorted(rss, key=functools.cmp_to_key(compare))


def sort_by_creation(rss: Iterable[Obj]) -> list[Any]:
    """Oldest first (ties by name)."""
    return _sorted(rss, _older)


def _by_size(rss: Iterable[Obj], newer_first: bool) -> list[Any]:
    """Largest ``spec.replicas`` first; among equals newer first or older first."""

    def less(a: Obj, b: Obj) -> bool:
        if spec_replicas(a) == spec_replicas(b):
            return _older(b, a) if newer_first else _older(a, b)
        return spec_replicas(a) > spec_replicas(b)

    return _sorted(rss, less)


def sort_by_size_newer(rss: Iterable[Obj]) -> list[Any]:
    """Largest ``spec.replicas`` first, newer first among equals (scaling up)."""
    return _by_size(rss, newer_first=True)


def sort_by_size_older(rss: Iterable[Obj]) -> list[Any]:
    """Largest ``spec.replicas`` first, older first among equals (scaling down)."""
    return _by_size(rss, newer_first=False)


def sort_by_revision(rss: Iterable[Obj]) -> list[Any]:
    """Lowest revision first; an unparsable revision or equal ones by creation."""

    def less(a: Obj, b: Obj) -> bool:
        try:
            ra, rb = revision(a), revision(b)
        except ValueError:
            return _older(a, b)
        if ra == rb:
            return _older(a, b)
        return ra < rb

    return _sorted(rss, less)


def _without_hash(template: Any) -> Any:
    template = copy.deepcopy(template or {})
    labels = (template.get("metadata") or {}).get("labels")
    if labels:
        labels.pop(POD_TEMPLATE_HASH_LABEL, None)
        if not labels:
            template["metadata"].pop("labels")
    return template


def _normal(value: Any) -> Any:
    """Go's semantic equality: an empty map or list equals an absent one."""
    if isinstance(value, Mapping):
        return {k: _normal(v) for k, v in value.items() if v not in (None, {}, [])}
    if isinstance(value, list):
        return [_normal(v) for v in value]
    return value


def equal_ignore_hash(template1: Any, template2: Any) -> bool:
    """Two pod templates equal but for their :data:`POD_TEMPLATE_HASH_LABEL`."""
    return _normal(_without_hash(template1)) == _normal(_without_hash(template2))


def find_new_replica_set(d: Obj, rs_list: Sequence[Obj]) -> Any:
    """The oldest ReplicaSet whose template equals the Deployment's (ignoring the hash
    label), or None."""
    template = _spec(d).get("template")
    for rs in sort_by_creation(rs_list):
        if equal_ignore_hash(_spec(rs).get("template"), template):
            return rs
    return None


def find_old_replica_sets(d: Obj, rs_list: Sequence[Obj]) -> tuple[list[Any], list[Any]]:
    """``(old ReplicaSets with replicas, all old ReplicaSets)``: every ReplicaSet but the new
    one."""
    new_rs = find_new_replica_set(d, rs_list)
    new_uid = _metadata(new_rs).get("uid") if new_rs is not None else None
    all_old = [rs for rs in rs_list if new_rs is None or _metadata(rs).get("uid") != new_uid]
    return [rs for rs in all_old if spec_replicas(rs) != 0], all_old


def active_replica_sets(rss: Iterable[Obj | None]) -> list[Any]:
    """The ReplicaSets with ``spec.replicas`` > 0 (None skipped)."""
    return [rs for rs in rss if rs is not None and spec_replicas(rs) > 0]


def find_active_or_latest(new_rs: Obj | None, old_rss: Sequence[Obj]) -> Any:
    """The one active ReplicaSet, or the newest (the new one first) when none is active;
    None when several are active."""
    if new_rs is None and not old_rss:
        return None
    by_newest = list(reversed(sort_by_creation(old_rss)))
    active = active_replica_sets([new_rs, *old_rss] if new_rs is not None else old_rss)
    if len(active) == 0:
        return new_rs if new_rs is not None else by_newest[0]
    if len(active) == 1:
        return active[0]
    return None


# --- proportional scaling -------------------------------------------------------------------


def _fraction(rs: Obj, d: Obj) -> int:
    """``getReplicaSetFraction``: the change that brings ``rs`` to its share of
    ``spec.replicas + maxSurge``, its share being its size over the replicas the Deployment
    allowed when it last sized it (:data:`MAX_REPLICAS_ANNOTATION`, else the Deployment's
    ``status.replicas``), rounded half away from zero; scaling to 0 takes it all."""
    size = spec_replicas(rs)
    if spec_replicas(d) == 0:
        return -size
    allowed = spec_replicas(d) + max_surge(d)
    raw = (_metadata(rs).get("annotations") or {}).get(MAX_REPLICAS_ANNOTATION)
    try:
        annotated = int(raw, 10) if raw is not None else None
    except ValueError:
        annotated = None
    if annotated is None:
        annotated = int(_status(d).get("replicas") or 0)
    if annotated <= 0:
        return 0  # Go divides by zero here; never reached for a ReplicaSet it sized
    quotient, remainder = divmod(size * allowed, annotated)
    if 2 * remainder >= annotated:
        quotient += 1
    return quotient - size


def get_proportion(rs: Obj | None, d: Obj, to_add: int, added: int) -> int:
    """The replicas ``rs`` gets (or loses, negative) of a scaling by ``to_add``, ``added``
    of which are given out already: its share by size, never past what is left."""
    if rs is None or spec_replicas(rs) == 0 or to_add == 0 or to_add == added:
        return 0
    fraction = _fraction(rs, d)
    allowed = to_add - added
    if to_add > 0:
        return min(fraction, allowed)
    return max(fraction, allowed)


# --- the rollout's state ---------------------------------------------------------------------


def deployment_complete(d: Obj, status: Mapping[str, Any]) -> bool:
    """Every replica updated, none more, all available, and the generation observed."""
    replicas = spec_replicas(d)
    return (
        int(status.get("updatedReplicas") or 0) == replicas
        and int(status.get("replicas") or 0) == replicas
        and int(status.get("availableReplicas") or 0) == replicas
        and int(status.get("observedGeneration") or 0) >= int(_metadata(d).get("generation") or 0)
    )


def deployment_progressing(d: Obj, status: Mapping[str, Any]) -> bool:
    """The new status shows progress over the Deployment's: more updated, ready or available
    replicas, or fewer old ones."""
    old = _status(d)

    def count(s: Mapping[str, Any], key: str) -> int:
        return int(s.get(key) or 0)

    old_old = count(old, "replicas") - count(old, "updatedReplicas")
    new_old = count(status, "replicas") - count(status, "updatedReplicas")
    return (
        count(status, "updatedReplicas") > count(old, "updatedReplicas")
        or new_old < old_old
        or count(status, "readyReplicas") > count(old, "readyReplicas")
        or count(status, "availableReplicas") > count(old, "availableReplicas")
    )


def _progressing(status: Mapping[str, Any]) -> Mapping[str, Any] | None:
    for condition in status.get("conditions") or ():
        if condition.get("type") == "Progressing":
            return condition
    return None


def deployment_timed_out(d: Obj, status: Mapping[str, Any], now: datetime) -> bool:
    """The Progressing condition of ``status`` was last updated more than
    ``progressDeadlineSeconds`` before ``now`` (and is neither a completed rollout nor, once
    timed out, anything but timed out)."""
    if not has_progress_deadline(d):
        return False
    condition = _progressing(status)
    if condition is None:
        return False
    reason = condition.get("reason")
    if reason == "NewReplicaSetAvailable":
        return False
    if reason == "ProgressDeadlineExceeded":
        return True
    since = parse_time(condition.get("lastUpdateTime"))
    if since is None:
        return False
    deadline = since + timedelta(seconds=int(_spec(d)["progressDeadlineSeconds"]))
    return deadline < now
