"""Shared rules of the CloneSet controller (openkruise ``cloneset/core`` and ``cloneset/utils``).

:class:`CloneSetView` is how the controller reads a CloneSet, its
:class:`~kube_runtime.workloads.specview.SpecView` (kept per set generation by the reconciler,
as the StatefulSet's): the wire object (for metadata, events and the helpers shared with the
StatefulSet, which take wire dicts) plus its ``spec`` parsed by the model generated from the CRD
(:class:`~controllers.cloneset.models.CloneSetSpec`). Only the spec is parsed: the generated
status model has required fields, so a partial status must never stop a sync; the status stays
a dict. A spec the model rejects, or one the controller cannot act on (:func:`validate`), is an
:class:`~kube_runtime.workloads.specview.InvalidSpecError`.

Also here: whether a pod is ready / available for the controller's purposes (a ``Normal``
lifecycle state and an ``InPlaceUpdateReady`` condition that is not ``False`` on top of the
pod's own readiness), and building the pods of a revision (:func:`new_versioned_pods`).

The accessor functions (:func:`replicas`, :func:`partition`, :func:`max_unavailable`, ...)
take a view or a CloneSet dict (parsed on each call: pass views on hot paths).
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any, Final

from pydantic import ValidationError

from controllers.cloneset.models import CloneSetSpec, CloneSetSpecUpdateStrategy
from controllers.cloneset.pvc import INSTANCE_ID_LABEL, instance_pod_volumes_for
from kube_runtime import meta, webhook
from kube_runtime.expectations import equal_to_revision_hash
from kube_runtime.kinds import Kind
from kube_runtime.meta import ObjView as Obj
from kube_runtime.selectors import LabelSelector, label_selector_from_dict
from kube_runtime.workloads import lifecycle, podreadiness
from kube_runtime.workloads.inplace import get_condition, inject_readiness_gate
from kube_runtime.workloads.intstr import int_or_percent_error, scaled_value
from kube_runtime.workloads.pods import is_available, is_ready
from kube_runtime.workloads.revision import POD_REVISION_LABEL, apply_revision
from kube_runtime.workloads.specview import InvalidSpecError, SpecView
from kube_runtime.workloads.templates import template_problems

__all__ = [
    "CLONESET",
    "DEFAULT_MAX_UNAVAILABLE",
    "IN_PLACE_IF_POSSIBLE",
    "IN_PLACE_ONLY",
    "RECREATE",
    "SCALING_EXCLUDE_PREPARING_DELETE_LABEL",
    "SPECIFIED_DELETE_LABEL",
    "CloneSetLike",
    "CloneSetView",
    "InvalidSpecError",
    "controller_key",
    "is_pod_available",
    "is_pod_ready",
    "is_pod_update_ready",
    "is_specified_delete",
    "is_updated",
    "max_surge",
    "max_unavailable",
    "new_versioned_pods",
    "over_100_percent",
    "partition",
    "partition_replicas",
    "replicas",
    "scale_max_unavailable",
    "validate",
    "view_of",
]


CLONESET: Final = Kind("apps.kube-runtime.io/v1alpha1", "CloneSet")
SPECIFIED_DELETE_LABEL: Final = "apps.kruise.io/specified-delete"
SCALING_EXCLUDE_PREPARING_DELETE_LABEL: Final = (
    "apps.kruise.io/cloneset-scaling-exclude-preparing-delete"
)
DEFAULT_MAX_UNAVAILABLE: Final = "20%"
RECREATE: Final = "ReCreate"
IN_PLACE_IF_POSSIBLE: Final = "InPlaceIfPossible"
IN_PLACE_ONLY: Final = "InPlaceOnly"
_STRATEGIES = (RECREATE, IN_PLACE_IF_POSSIBLE, IN_PLACE_ONLY)
_NO_STRATEGY = CloneSetSpecUpdateStrategy()


def _wire(model: Any) -> dict[str, Any] | None:
    """A sub-model as its wire dict (None stays None)."""
    return None if model is None else dict(model.to_wire())


def _spec_errors(err: ValidationError) -> str:
    """The schema's refusals as apimachinery words them (``spec.minReadySeconds: Invalid
    value: -5: must be greater than or equal to 0``), the message of the set's condition and
    Warning event."""
    return "; ".join(str(e) for e in webhook.field_errors_of(err, "spec"))


class CloneSetView(SpecView):
    """A CloneSet as one sync reads it: ``obj`` (the wire object; shared with the cache, never
    mutated) and ``spec`` (its parsed :class:`CloneSetSpec`), with the derived values the
    algorithm asks for, each computed once per spec generation (they read the spec, and of
    the metadata only what a uid keeps: name, namespace).

    Build it with :meth:`of` (the checked view, :class:`InvalidSpecError` for a spec that
    cannot be acted on) or :meth:`parse` (the model's check only).
    """

    def __init__(self, obj: Obj, spec: CloneSetSpec) -> None:
        self.obj = obj
        self.spec = spec
        self.name = meta.name(obj)
        self.namespace = meta.namespace(obj)
        self.key = meta.key(obj)
        """``namespace/name``: the key of the set's expectations and of its log records (the
        :attr:`~kube_runtime.reconcile.Request.key` of its requests)."""
        self.uid = meta.uid(obj)

    @classmethod
    def parse(cls, obj: Obj) -> CloneSetView:
        """Parse ``obj``'s spec; :class:`InvalidSpecError` (naming the fields) when it does not
        fit the CRD's schema."""
        try:
            spec = CloneSetSpec.model_validate(meta.spec(obj))
        except ValidationError as err:
            raise InvalidSpecError(_spec_errors(err)) from None
        return cls(obj, spec)

    @classmethod
    def of(cls, obj: Obj) -> CloneSetView:
        """The checked view of ``obj``: :meth:`parse` and :func:`validate`
        (:class:`InvalidSpecError` naming what is wrong)."""
        return validate(cls.parse(obj))

    def rebind(self, obj: Obj) -> CloneSetView:
        """This view (its spec and the values derived from it) for ``obj``, a later copy of
        the set at the same generation."""
        if obj is self.obj:
            return self
        view = copy.copy(self)
        view.obj = obj
        return view

    def at_revision(self, revision: Obj) -> CloneSetView:
        """This set with ``revision``'s template (upstream ``ApplyRevision``): what pods of
        that revision are made from."""
        applied = apply_revision(self.obj, revision)
        spec = self.spec.model_copy(update={"template": meta.spec(applied).get("template")})
        return CloneSetView(applied, spec)

    # --- spec ---------------------------------------------------------------------------------

    @functools.cached_property
    def replicas(self) -> int:
        """``spec.replicas`` (default 1)."""
        return 1 if self.spec.replicas is None else int(self.spec.replicas)

    @property
    def update_strategy(self) -> CloneSetSpecUpdateStrategy:
        """``spec.updateStrategy`` (empty when unset)."""
        return self.spec.update_strategy or _NO_STRATEGY

    @functools.cached_property
    def strategy_type(self) -> str:
        """``updateStrategy.type`` (default ReCreate)."""
        return self.update_strategy.type or RECREATE

    @functools.cached_property
    def paused(self) -> bool:
        return bool(self.update_strategy.paused)

    @functools.cached_property
    def partition(self) -> int:
        """``updateStrategy.partition`` as a number of pods (:func:`partition_replicas`)."""
        return partition_replicas(self.update_strategy.partition, self.replicas)

    @functools.cached_property
    def max_surge(self) -> int:
        """``updateStrategy.maxSurge`` (rounded up; 0 when paused or unset)."""
        raw = self.update_strategy.max_surge
        if raw is None or self.paused:
            return 0
        return scaled_value(raw, self.replicas, True)

    def max_unavailable_with(self, surge: int) -> int:
        """``updateStrategy.maxUnavailable`` (default 20%), rounded up unless ``surge`` > 0."""
        raw = self.update_strategy.max_unavailable
        if raw is None:
            raw = DEFAULT_MAX_UNAVAILABLE
        return scaled_value(raw, self.replicas, surge == 0)

    @functools.cached_property
    def max_unavailable(self) -> int:
        """``updateStrategy.maxUnavailable`` given this set's maxSurge."""
        return self.max_unavailable_with(self.max_surge)

    @functools.cached_property
    def scale_max_unavailable(self) -> int | None:
        """``scaleStrategy.maxUnavailable`` (rounded up) or None (no limit)."""
        strategy = self.spec.scale_strategy
        raw = strategy.max_unavailable if strategy is not None else None
        return None if raw is None else scaled_value(raw, self.replicas, True)

    @property
    def scaling_exclude_preparing_delete(self) -> bool:
        """The set's ``apps.kruise.io/cloneset-scaling-exclude-preparing-delete`` label is
        "true": pods in PreparingDelete do not count toward ``replicas`` when scaling (a
        label: read from the current object, not kept with the spec's values)."""
        return meta.labels(self.obj).get(SCALING_EXCLUDE_PREPARING_DELETE_LABEL) == "true"

    @functools.cached_property
    def disable_pvc_reuse(self) -> bool:
        """``scaleStrategy.disablePVCReuse``: claims whose pod is gone are deleted, not reused."""
        strategy = self.spec.scale_strategy
        return bool(strategy.disable_pvc_reuse) if strategy is not None else False

    @functools.cached_property
    def pods_to_delete(self) -> list[str]:
        """``scaleStrategy.podsToDelete`` as written."""
        strategy = self.spec.scale_strategy
        return list(strategy.pods_to_delete or ()) if strategy is not None else []

    @functools.cached_property
    def _pods_to_delete_set(self) -> frozenset[str]:
        return frozenset(self.pods_to_delete)

    @functools.cached_property
    def min_ready_seconds(self) -> float:
        return float(self.spec.min_ready_seconds or 0)

    @functools.cached_property
    def grace_period_seconds(self) -> int:
        """``updateStrategy.inPlaceUpdateStrategy.gracePeriodSeconds`` (0 when unset)."""
        strategy = self.update_strategy.in_place_update_strategy
        return int((strategy.grace_period_seconds if strategy is not None else None) or 0)

    @functools.cached_property
    def revision_history_limit(self) -> int | None:
        return self.spec.revision_history_limit

    @functools.cached_property
    def has_lifecycle(self) -> bool:
        """``spec.lifecycle`` is set to something (an empty object counts as unset)."""
        return self.spec.lifecycle is not None and bool(self.spec.lifecycle.to_wire())

    @functools.cached_property
    def pre_delete_hook(self) -> dict[str, Any] | None:
        """``lifecycle.preDelete`` as its wire dict (what :mod:`.lifecycle` reads)."""
        return _wire(self.spec.lifecycle.pre_delete) if self.spec.lifecycle else None

    @functools.cached_property
    def pre_normal_hook(self) -> dict[str, Any] | None:
        """``lifecycle.preNormal`` as its wire dict."""
        return _wire(self.spec.lifecycle.pre_normal) if self.spec.lifecycle else None

    @functools.cached_property
    def in_place_update_hook(self) -> dict[str, Any] | None:
        """``lifecycle.inPlaceUpdate`` as its wire dict."""
        return _wire(self.spec.lifecycle.in_place_update) if self.spec.lifecycle else None

    @functools.cached_property
    def marks_pod_not_ready(self) -> bool:
        """A ``preDelete`` or ``inPlaceUpdate`` hook says ``markPodNotReady`` (Kruise
        ``IsLifecycleMarkPodNotReady``): new pods get the ``KruisePodReady`` readiness gate
        and pods in PreparingDelete are not taken back by a scale-up."""
        return lifecycle.lifecycle_marks_pod_not_ready(
            {"preDelete": self.pre_delete_hook, "inPlaceUpdate": self.in_place_update_hook}
        )

    @functools.cached_property
    def selector_dict(self) -> dict[str, Any]:
        """``spec.selector`` as its wire dict (a ``metav1.LabelSelector``)."""
        return dict(self.spec.selector.to_wire())

    @functools.cached_property
    def selector(self) -> LabelSelector:
        """The parsed selector (``ValueError`` when malformed: :func:`validate` reports it)."""
        return label_selector_from_dict(self.selector_dict)

    @functools.cached_property
    def template(self) -> Mapping[str, Any]:
        """``spec.template`` (a pod template as a wire dict)."""
        template = self.spec.template
        return template if isinstance(template, Mapping) else {}

    @functools.cached_property
    def update_strategy_dict(self) -> dict[str, Any]:
        """``spec.updateStrategy`` as its wire dict (for the shared update-order helpers)."""
        return _wire(self.spec.update_strategy) or {}

    def is_specified_delete(self, pod: Obj) -> bool:
        """The pod carries the specified-delete label or is named in ``podsToDelete``."""
        if meta.labels(pod).get(SPECIFIED_DELETE_LABEL) is not None:
            return True
        return bool(self._pods_to_delete_set) and meta.name(pod) in self._pods_to_delete_set


CloneSetLike = CloneSetView | Obj
"""A view, or a CloneSet dict (parsed when passed)."""


def view_of(cs: CloneSetLike) -> CloneSetView:
    """``cs`` itself, or the parsed view of a CloneSet dict (:meth:`CloneSetView.parse`:
    :class:`InvalidSpecError` when the schema rejects it)."""
    return cs if isinstance(cs, CloneSetView) else CloneSetView.parse(cs)


def controller_key(cs: CloneSetLike) -> str:
    """``namespace/name``: the key of the expectations of ``cs``."""
    if isinstance(cs, CloneSetView):
        return cs.key
    return meta.key(cs)


def replicas(cs: CloneSetLike) -> int:
    """``spec.replicas`` (default 1)."""
    return view_of(cs).replicas


def partition_replicas(raw: int | str | None, replicas: int) -> int:
    """A partition as a number of pods (upstream ``util.CalculatePartitionReplicas``): 0 when
    unset; a percentage rounds up, so any partition above "0%" keeps at least one old pod,
    but one below "100%" of more than one replica updates at least one pod ("99%" of 4 keeps
    3); the result is clamped to ``[0, replicas]``."""
    if raw is None:
        return 0
    value = scaled_value(raw, replicas, True)
    if replicas > 1 and value == replicas and isinstance(raw, str) and raw != "100%":
        value = replicas - 1
    return max(min(value, replicas), 0)


def partition(cs: CloneSetLike) -> int:
    """``updateStrategy.partition`` as a number of pods (see :attr:`CloneSetView.partition`)."""
    return view_of(cs).partition


def max_surge(cs: CloneSetLike) -> int:
    """``updateStrategy.maxSurge`` (rounded up; 0 when paused or unset)."""
    return view_of(cs).max_surge


def max_unavailable(cs: CloneSetLike, surge: int) -> int:
    """``updateStrategy.maxUnavailable`` (default 20%), rounded up unless ``surge`` > 0."""
    return view_of(cs).max_unavailable_with(surge)


def scale_max_unavailable(cs: CloneSetLike) -> int | None:
    """``scaleStrategy.maxUnavailable`` (rounded up) or None (no limit)."""
    return view_of(cs).scale_max_unavailable


def over_100_percent(raw: Any) -> str | None:
    """apps/v1's ``IsNotMoreThan100Percent``: a well-formed percentage above 100% (of a
    ``partition`` or ``maxUnavailable``: more pods than the set has) as its error, else None."""
    if isinstance(raw, str) and raw.endswith("%") and raw[:-1].isdigit() and int(raw[:-1]) > 100:
        return f"Invalid value: {raw!r}: must not be greater than 100%"
    return None


def validate(cs: CloneSetLike) -> CloneSetView:
    """The set's view, or :class:`InvalidSpecError` for specs upstream's webhook rejects and that
    this controller cannot act on: a spec the CRD's schema rejects, a bad selector (or one not
    matching the template), a template or volumeClaimTemplates of the wrong shape
    (:func:`~kube_runtime.workloads.templates.template_problems`), malformed int-or-percent
    values, a ``partition`` or ``maxUnavailable`` above 100%, an unknown strategy, InPlaceOnly
    with maxSurge."""
    view = view_of(cs)
    problems = template_problems(meta.spec(view.obj))
    if problems:
        raise InvalidSpecError("; ".join(problems))
    raw_selector = view.selector_dict
    try:
        selector = view.selector
    except ValueError as err:
        raise InvalidSpecError(f"invalid selector {raw_selector!r}: {err}") from None
    if not raw_selector or selector.matches_nothing():
        raise InvalidSpecError(f"selector {raw_selector!r} selects nothing or everything")
    if not selector.matches(meta.labels(view.template)):
        raise InvalidSpecError("selector does not match the template's labels")
    if view.replicas < 0:
        raise InvalidSpecError("replicas must not be negative")
    for path, number in (
        ("revisionHistoryLimit", view.spec.revision_history_limit),
        ("minReadySeconds", view.spec.min_ready_seconds),
        ("progressDeadlineSeconds", view.spec.progress_deadline_seconds),
    ):
        if number is not None and number < 0:
            raise InvalidSpecError(
                f"{path}: Invalid value: {number}: must be greater than or equal to 0"
            )
    if any(not name for name in view.pods_to_delete or ()):
        raise InvalidSpecError(
            "scaleStrategy.podsToDelete: Invalid value: '': a pod name is required"
        )
    strategy = view.update_strategy
    kind = view.strategy_type
    if kind not in _STRATEGIES:
        raise InvalidSpecError(
            f"unknown updateStrategy.type {kind!r} (one of {', '.join(_STRATEGIES)})"
        )
    scale_strategy = view.spec.scale_strategy
    for path, raw in (
        ("updateStrategy.partition", strategy.partition),
        ("updateStrategy.maxSurge", strategy.max_surge),
        ("updateStrategy.maxUnavailable", strategy.max_unavailable),
        (
            "scaleStrategy.maxUnavailable",
            scale_strategy.max_unavailable if scale_strategy is not None else None,
        ),
    ):
        if raw is None:
            continue
        error = int_or_percent_error(raw)
        if error is not None:
            raise InvalidSpecError(f"{path}: {error}")
        if path.startswith("updateStrategy.") and path != "updateStrategy.maxSurge":
            error = over_100_percent(raw)
            if error is not None:
                raise InvalidSpecError(f"{path}: {error}")
    if kind == IN_PLACE_ONLY and strategy.max_surge not in (None, 0, "0%"):
        raise InvalidSpecError("updateStrategy.maxSurge is not allowed with type InPlaceOnly")
    if (
        view.replicas > 0
        and view.max_surge == 0
        and view.max_unavailable < 1
        and strategy.max_unavailable is not None
    ):
        raise InvalidSpecError(
            "updateStrategy.maxUnavailable must be at least 1 when maxSurge is 0"
        )
    return view


def is_specified_delete(cs: CloneSetLike, pod: Obj) -> bool:
    """The pod carries the specified-delete label or is named in ``scaleStrategy.podsToDelete``."""
    return view_of(cs).is_specified_delete(pod)


def is_updated(pod: Obj, update_revision: str) -> bool:
    """The pod is at ``update_revision`` (its ``controller-revision-hash`` label)."""
    return equal_to_revision_hash("", pod, update_revision)


def is_pod_update_ready(pod: Obj, min_ready_seconds: float, now: datetime | None = None) -> bool:
    """Upstream ``IsPodUpdateReady``: running, available for ``min_ready_seconds`` and no
    ``InPlaceUpdateReady`` condition other than True."""
    if meta.status(pod).get("phase") != "Running" or meta.is_deleting(pod):
        return False
    if not is_available(pod, min_ready_seconds, now)[0]:
        return False
    condition = get_condition(pod)
    return condition is None or condition.get("status") == "True"


def is_pod_available(cs: CloneSetLike, pod: Obj, now: datetime | None = None) -> bool:
    """Upstream ``IsPodAvailable``: Normal (or no) lifecycle state and update-ready with the
    set's minReadySeconds."""
    if lifecycle.get_state(pod) not in ("", lifecycle.NORMAL):
        return False
    return is_pod_update_ready(pod, view_of(cs).min_ready_seconds, now)


def is_pod_ready(pod: Obj) -> bool:
    """Upstream ``isPodReady``: available with minReadySeconds 0 (lifecycle included)."""
    if lifecycle.get_state(pod) not in ("", lifecycle.NORMAL):
        return False
    return is_pod_update_ready(pod, 0) and is_ready(pod)


def new_versioned_pods(
    current_cs: CloneSetView,
    update_cs: CloneSetView,
    current_revision: str,
    update_revision: str,
    count: int,
    current_count: int,
    instance_ids: Sequence[str],
    state: str = lifecycle.NORMAL,
) -> list[dict[str, Any]]:
    """``count`` pods to create: the first ``current_count`` from ``current_cs`` at
    ``current_revision``, the rest from ``update_cs``; named ``<set>-<instance id>``, labelled
    with the revision and the instance id, controlled by the set, with one claim volume per
    ``volumeClaimTemplates`` entry, the ``InPlaceUpdateReady`` readiness gate and the
    lifecycle ``state`` (upstream: ``PreparingNormal``)."""
    pods = []
    for i in range(count):
        cs, revision = (
            (current_cs, current_revision) if i < current_count else (update_cs, update_revision)
        )
        pods.append(_new_pod(cs, revision, instance_ids[i], state))
    return pods


def _new_pod(cs: CloneSetView, revision: str, instance_id: str, state: str) -> dict[str, Any]:
    template = copy.deepcopy(dict(cs.template))
    pod_meta = dict(meta.metadata(template))
    labels = dict(meta.labels(template))
    labels[POD_REVISION_LABEL] = revision
    labels[INSTANCE_ID_LABEL] = instance_id
    labels[lifecycle.LIFECYCLE_STATE_LABEL] = state
    pod_meta.update(
        {
            "name": f"{cs.name}-{instance_id}",
            "namespace": cs.namespace,
            "labels": labels,
            "ownerReferences": [
                {
                    "apiVersion": CLONESET.api_version,
                    "kind": CLONESET.kind,
                    "name": cs.name,
                    "uid": cs.uid,
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        }
    )
    pod_meta.pop("generateName", None)
    spec = dict(meta.spec(template))
    inject_readiness_gate(spec)
    if cs.marks_pod_not_ready:
        # Kruise's pod webhook gives every pod of its workloads this gate; here only the pods
        # a hook may hold not ready get it
        podreadiness.inject_gate(spec)
    pod: dict[str, Any] = {"apiVersion": "v1", "kind": "Pod", "metadata": pod_meta, "spec": spec}
    if cs.spec.volume_claim_templates:
        spec["volumes"] = instance_pod_volumes_for(cs.obj, pod)
    return pod
