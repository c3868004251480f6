"""In-place update of workload pods, shared by the CloneSet and the enhanced StatefulSet
(openkruise ``pkg/util/inplaceupdate``).

Feasibility (:func:`calculate_in_place_spec`): between the pod's revision and the target
revision only container images and template metadata (labels/annotations) may differ. A label
or annotation that a container's env var takes its value from (``valueFrom.fieldRef``) is an
*env from metadata* change of that container (Kruise's ``ContainerRefMetadata``, with its
``InPlaceUpdateEnvFromMetadata`` gate on): it is set together with the container's batch, the
state records ``updateEnvFromMetadata``, and the update completes once the node agent reports
(``apps.kruise.io/runtime-containers-meta``) that every container restarted with the new values
(:mod:`kube_runtime.workloads.containermeta`).

An update (:meth:`InPlaceControl.update`) sets the pod's ``InPlaceUpdateReady`` condition to
False (its readiness gate takes the pod out of Ready), then patches the revision label, the
lifecycle state and the ``apps.kruise.io/inplace-update-state`` annotation (the imageIDs the
containers ran before) and, without a grace period, the new images. With
``inPlaceUpdateStrategy.gracePeriodSeconds`` the images wait in the
``apps.kruise.io/inplace-update-grace`` annotation until :meth:`InPlaceControl.refresh` finds
the grace period over. :meth:`InPlaceControl.refresh` sets the condition True again once every
updated container reports a new imageID, or its old one with the spec's image (a new tag of the
same image; :func:`check_update_completed`), and gives newly
created pods (readiness gate, no condition yet) the True condition; controllers give the pods
they create the gate with :func:`inject_readiness_gate`.
"""

from __future__ import annotations

import dataclasses
import json
import logging
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any, Final

from kube_runtime import meta
from kube_runtime.client.interfaces import Writer
from kube_runtime.clock import Clock, resolve
from kube_runtime.kinds import Pod
from kube_runtime.meta import ObjView as Obj
from kube_runtime.meta import annotation_json
from kube_runtime.workloads.containermeta import env_hashes_consistent, refers_to_meta
from kube_runtime.workloads.pods import parse_time
from kube_runtime.workloads.revision import POD_REVISION_LABEL

__all__ = [
    "BARRIER_ENV",
    "GRACE_ANNOTATION",
    "LAUNCH_PRIORITY_ANNOTATION",
    "PRIORITY_ENV",
    "READINESS_GATE",
    "STATE_ANNOTATION",
    "InPlaceControl",
    "InPlaceSpec",
    "calculate_in_place_spec",
    "check_update_completed",
    "container_priorities",
    "get_condition",
    "has_readiness_gate",
    "inject_readiness_gate",
    "split_batch",
]

log = logging.getLogger(__name__)


READINESS_GATE: Final = "InPlaceUpdateReady"
STATE_ANNOTATION: Final = "apps.kruise.io/inplace-update-state"
GRACE_ANNOTATION: Final = "apps.kruise.io/inplace-update-grace"


#: ``{container: {"labels": {key: value}, "annotations": {key: value}}}``
RefMetadata = dict[str, dict[str, dict[str, str]]]


@dataclasses.dataclass(frozen=True)
class InPlaceSpec:
    """What an in-place update changes: ``revision`` (the target revision's name), new images
    by container name, merge-patch values for the pod's labels and annotations (None removes a
    key) that no container's env refers to, and ``container_ref_metadata``: the labels and
    annotations each container's env refers to, set with that container's batch."""

    revision: str
    container_images: dict[str, str]
    labels: dict[str, str | None]
    annotations: dict[str, str | None]
    container_ref_metadata: RefMetadata = dataclasses.field(default_factory=dict)

    @property
    def update_env_from_metadata(self) -> bool:
        """Some container's env changes with the metadata (it has to be restarted)."""
        return bool(self.container_ref_metadata)


def _template(revision: Obj | None) -> dict[str, Any] | None:
    if revision is None:
        return None
    template = meta.spec(meta.section(revision, "data")).get("template")
    if not isinstance(template, Mapping):
        return None
    return {k: v for k, v in template.items() if k != "$patch"}


def _meta_diff(old: Obj, new: Obj) -> dict[str, str | None]:
    diff: dict[str, str | None] = {k: v for k, v in new.items() if old.get(k) != v}
    diff.update({k: None for k in old if k not in new})
    return diff


def calculate_in_place_spec(old_revision: Obj | None, new_revision: Obj) -> InPlaceSpec | None:
    """The in-place update from ``old_revision`` to ``new_revision``, or None when the change
    is more than container images and metadata labels/annotations (or the old revision is
    unknown, or nothing changed)."""
    old, new = _template(old_revision), _template(new_revision)
    if old is None or new is None:
        return None
    old_meta, new_meta = dict(meta.metadata(old)), dict(meta.metadata(new))
    labels = _meta_diff(old_meta.pop("labels", None) or {}, new_meta.pop("labels", None) or {})
    annotations = _meta_diff(
        old_meta.pop("annotations", None) or {}, new_meta.pop("annotations", None) or {}
    )
    if old_meta != new_meta:
        return None
    old_spec, new_spec = dict(meta.spec(old)), dict(meta.spec(new))
    old_containers = list(old_spec.pop("containers", None) or [])
    new_containers = list(new_spec.pop("containers", None) or [])
    if old_spec != new_spec or len(old_containers) != len(new_containers):
        return None
    if {k: v for k, v in old.items() if k not in ("metadata", "spec")} != {
        k: v for k, v in new.items() if k not in ("metadata", "spec")
    }:
        return None
    ref_metadata = _ref_metadata(new_containers, labels, annotations)
    images: dict[str, str] = {}
    for a, b in zip(old_containers, new_containers, strict=True):
        rest_a = {k: v for k, v in a.items() if k != "image"}
        rest_b = {k: v for k, v in b.items() if k != "image"}
        if rest_a != rest_b:
            return None
        if a.get("image") != b.get("image"):
            images[str(b.get("name"))] = str(b.get("image"))
    if not images and not labels and not annotations and not ref_metadata:
        return None
    return InPlaceSpec(meta.name(new_revision), images, labels, annotations, ref_metadata)


def _ref_metadata(
    containers: list[Obj],
    labels: dict[str, str | None],
    annotations: dict[str, str | None],
) -> RefMetadata:
    """Move the added or changed labels/annotations some container's env refers to out of
    ``labels``/``annotations`` into per-container metadata (upstream: the metadata patch
    operations ``add``/``replace`` whose key ``IsContainerReferenceToMeta``; a removed key stays
    a plain metadata change)."""
    refs: RefMetadata = {}
    for part, diff, path in (
        ("labels", labels, "metadata.labels"),
        ("annotations", annotations, "metadata.annotations"),
    ):
        for key, value in list(diff.items()):
            if value is None:
                continue
            users = [str(c.get("name")) for c in containers if refers_to_meta(c, path, key)]
            for name in users:
                refs.setdefault(name, {}).setdefault(part, {})[key] = value
            if users:
                del diff[key]
    return refs


# has_readiness_gate, get_condition, meta.annotation_json and check_update_completed run for every
# pod on every sync of an enhanced set: they read the dicts directly (a kube_runtime.meta
# accessor costs about four times as much).


def has_readiness_gate(pod: Obj) -> bool:
    """The pod declares the ``InPlaceUpdateReady`` readiness gate."""
    gates = (pod.get("spec") or {}).get("readinessGates") or ()
    return any(g.get("conditionType") == READINESS_GATE for g in gates)


def inject_readiness_gate(pod_spec: dict[str, Any]) -> None:
    """Add the ``InPlaceUpdateReady`` readiness gate to ``pod_spec`` (a private copy) unless it
    has it."""
    gates = list(pod_spec.get("readinessGates") or [])
    if not any(g.get("conditionType") == READINESS_GATE for g in gates):
        gates.append({"conditionType": READINESS_GATE})
    pod_spec["readinessGates"] = gates


def get_condition(pod: Obj) -> Mapping[str, Any] | None:
    """The pod's ``InPlaceUpdateReady`` condition, or None."""
    for condition in (pod.get("status") or {}).get("conditions") or ():
        if condition.get("type") == READINESS_GATE:
            return condition
    return None


def check_update_completed(pod: Obj) -> str | None:
    """None when the pod's last in-place update is done (or there was none), else why not:
    images still in the grace period, containers left for a later batch, or a container still
    reporting its old imageID (the old imageID is accepted when the container reports the
    spec's image: a retag)."""
    state = annotation_json(pod, STATE_ANNOTATION)
    if state is None:
        return None
    if annotation_json(pod, GRACE_ANNOTATION) is not None:
        return "images wait for the grace period"
    if state.get("nextContainerImages") or state.get("nextContainerRefMetadata"):
        return "containers wait for a later batch"
    return _batch_completed(pod, state)


def _batch_completed(pod: Obj, state: Obj) -> str | None:
    """The imageID check of the containers updated so far (upstream
    ``defaultCheckContainersInPlaceUpdateCompleted``)."""
    if state.get("revision") != (pod.get("metadata", {}).get("labels") or {}).get(
        POD_REVISION_LABEL
    ):
        return "the pod's revision changed since the update"
    if state.get("updateEnvFromMetadata"):
        why = env_hashes_consistent(pod)
        if why is not None:
            return why
    statuses = {c.get("name"): c for c in (pod.get("status") or {}).get("containerStatuses") or ()}
    images = {c.get("name"): _with_tag(str(c.get("image") or "")) for c in _containers(pod)}
    for name, last in (state.get("lastContainerStatuses") or {}).items():
        status = statuses.get(name)
        if status is None:
            return f"container {name} has no status"
        if not status.get("imageID"):
            return f"container {name} still runs its old image"
        # the same imageID is a finished update when the container runs the spec's image (a
        # new tag of the same image, upstream's defaultCheckContainersInPlaceUpdateCompleted)
        if status.get("imageID") == last.get("imageID") and (
            name not in images or status.get("image") != images[name]
        ):
            return f"container {name} still runs its old image"
    return None


def _containers(pod: Obj) -> list[Obj]:
    return list((pod.get("spec") or {}).get("containers") or ())


def _with_tag(image: str) -> str:
    """An image reference without a tag means ``:latest`` (upstream compares so)."""
    return image if ":" in image else f"{image}:latest"


PRIORITY_ENV: Final = "KRUISE_CONTAINER_PRIORITY"
BARRIER_ENV: Final = "KRUISE_CONTAINER_BARRIER"
LAUNCH_PRIORITY_ANNOTATION: Final = "apps.kruise.io/container-launch-priority"


def container_priorities(pod: Obj) -> dict[str, int]:
    """The launch priority of each container of ``pod`` (empty: none), as Kruise's pod webhook
    assigns it and ``GetContainerPriority`` reads it back: the ``KRUISE_CONTAINER_BARRIER`` env
    the webhook injected (``p_<priority>``) when a container has one; else with the
    ``apps.kruise.io/container-launch-priority: Ordered`` annotation the containers' order
    (first highest); else the ``KRUISE_CONTAINER_PRIORITY`` env values, unless they are all
    equal (or all 0). A single container, or a value that is not an integer, has none."""
    containers = _containers(pod)
    barriers: dict[str, int] = {}
    for c in containers:
        for env in c.get("env") or ():
            if env.get("name") == BARRIER_ENV:
                key = str(((env.get("valueFrom") or {}).get("configMapKeyRef") or {}).get("key"))
                value = _int(key[2:])
                if value is not None:
                    barriers[str(c.get("name"))] = value
    if barriers:
        return barriers
    if len(containers) <= 1:
        return {}
    if meta.annotations(pod).get(LAUNCH_PRIORITY_ANNOTATION) == "Ordered":
        return {str(c.get("name")): -i for i, c in enumerate(containers)}
    values: dict[str, int] = {}
    for c in containers:
        value = 0
        for env in c.get("env") or ():
            if env.get("name") == PRIORITY_ENV:
                parsed = _int(env.get("value"))
                if parsed is None:
                    return {}
                value = parsed
        values[str(c.get("name"))] = value
    if len(set(values.values())) <= 1:
        return {}
    return values


def _int(value: object) -> int | None:
    try:
        return int(str(value))
    except ValueError:
        return None


def split_batch(pod: Obj, images: Mapping[str, str]) -> tuple[dict[str, str], dict[str, str]]:
    """``(images to set now, images for later batches)`` (upstream
    ``defaultPatchUpdateSpecToPod``): containers without a launch priority and those of the
    highest priority among the changed ones go now, the others later."""
    now_names = _first_batch(pod, set(images), {})
    now = {n: i for n, i in images.items() if n in now_names}
    return now, {n: i for n, i in images.items() if n not in now}


def _first_batch(pod: Obj, changed: set[str], ref_metadata: Mapping[str, Any]) -> set[str]:
    """The containers of ``changed`` to update now: those without a launch priority and those
    of the highest priority, plus every container sharing a referred-to label/annotation with
    one of them (upstream ``addMetadataSharedContainersToUpdate``), transitively."""
    priorities = container_priorities(pod)
    ranked = [priorities[n] for n in changed if n in priorities]
    top = max(ranked) if ranked else None
    now = {n for n in changed if n not in priorities or priorities[n] == top}
    keys: set[tuple[str, str]] = set()
    grew = True
    while grew:
        grew = False
        for name in now:
            for part, values in (ref_metadata.get(name) or {}).items():
                keys.update((part, k) for k in values)
        for name, parts in ref_metadata.items():
            if name in now:
                continue
            if any((part, k) in keys for part, values in parts.items() for k in values):
                now.add(name)
                grew = True
    return now


@dataclasses.dataclass
class _Batch:
    """One batch of an in-place update: the images and the referred-to metadata to set."""

    images: dict[str, str]
    labels: dict[str, str | None]
    annotations: dict[str, str | None]


def _with_batch(
    state: dict[str, Any],
    pod: Obj,
    images: Mapping[str, str],
    stamp: str,
    ref_metadata: Mapping[str, Any] | None = None,
) -> tuple[dict[str, Any], _Batch]:
    """``state`` with the next batch of ``images`` and ``ref_metadata`` recorded (the imageIDs
    the batch's containers run now, the images and metadata left for later, the containers the
    later batch waits to be ready, the batch itself); and the batch."""
    ref_metadata = ref_metadata or {}
    changed = set(images) | set(ref_metadata)
    now_names = _first_batch(pod, changed, ref_metadata)
    now = {n: i for n, i in images.items() if n in now_names}
    later = {n: i for n, i in images.items() if n not in now_names}
    later_meta = {n: m for n, m in ref_metadata.items() if n not in now_names}
    batch = _Batch(now, {}, {})
    for name, parts in ref_metadata.items():
        if name in now_names:
            batch.labels.update(parts.get("labels") or {})
            batch.annotations.update(parts.get("annotations") or {})
    statuses = {c.get("name"): c for c in meta.status(pod).get("containerStatuses") or ()}
    state = dict(state)
    last = dict(state.get("lastContainerStatuses") or {})
    for name in now:
        last[name] = {"imageID": (statuses.get(name) or {}).get("imageID") or ""}
    state["lastContainerStatuses"] = last
    state.pop("nextContainerImages", None)
    state.pop("nextContainerRefMetadata", None)
    if later:
        state["nextContainerImages"] = later
    if later_meta:
        state["nextContainerRefMetadata"] = later_meta
    if later or later_meta:
        state["preCheckBeforeNext"] = {"containersRequiredReady": sorted(now_names)}
    else:
        state.pop("preCheckBeforeNext", None)
    batches = list(state.get("containerBatchesRecord") or ())
    batches.append({"timestamp": stamp, "containers": sorted(now_names)})
    state["containerBatchesRecord"] = batches
    return state, batch


def _not_ready_before_next(pod: Obj, state: Obj) -> str | None:
    """Upstream ``doPreCheckBeforeNext``: the containers of the previous batch must be ready."""
    required = (state.get("preCheckBeforeNext") or {}).get("containersRequiredReady") or ()
    statuses = {c.get("name"): c for c in meta.status(pod).get("containerStatuses") or ()}
    for name in required:
        status = statuses.get(name)
        if status is None:
            return f"container {name} has no status"
        if not status.get("ready"):
            return f"waiting for container {name} to be ready"
    return None


def _dump(state: Obj) -> str:
    return json.dumps(state, sort_keys=True)


def _timestamp(t: datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


class InPlaceControl:
    """API side of in-place updates: pod patches and ``InPlaceUpdateReady`` condition writes.

    ``on_write`` (optional) gets every pod as the API returned it after a write, so a caller
    can wait until its cache shows the write (resourceVersion expectations). Timestamps and
    grace periods come from ``clock`` (a :class:`~kube_runtime.clock.Clock`; None: the clock
    current when the control is made), or from ``now`` (a function returning the time) when
    given."""

    def __init__(
        self,
        client: Writer,
        now: Callable[[], datetime] | None = None,
        on_write: Callable[[Obj], None] | None = None,
        *,
        clock: Clock | None = None,
    ) -> None:
        self._client = client
        self._now = now if now is not None else resolve(clock, "InPlaceControl").now
        self._on_write = on_write

    def _written(self, pod: Obj) -> Obj:
        if self._on_write is not None and meta.metadata(pod):
            self._on_write(pod)
        return pod

    def _set_condition(self, pod: Obj, status: str, reason: str) -> Obj:
        name, namespace = meta.name(pod), meta.namespace(pod)
        condition = {
            "type": READINESS_GATE,
            "status": status,
            "lastTransitionTime": _timestamp(self._now()),
        }
        if reason:
            condition["reason"] = reason
        patch = {"status": {"conditions": [condition]}}
        result: Obj = self._client.patch(
            Pod, name, patch, namespace=namespace, patch_type="strategic", subresource="status"
        )
        log.debug("%s/%s: %s=%s", namespace, name, READINESS_GATE, status)
        return self._written(result)

    def _patch_batch(
        self, pod: Obj, state: dict[str, Any], grace: Mapping[str, Any] | None
    ) -> None:
        """Patch ``pod`` with its next batch of images and ref metadata, and the update
        ``state`` recording it: ``grace``'s (the grace annotation, removed with it) when given,
        else the batch ``state`` holds next (an ordered update's later batch)."""
        written: dict[str, str | None] = {}
        if grace is not None:
            images, refs = grace.get("containerImages"), grace.get("containerRefMetadata")
        else:
            images, refs = state.get("nextContainerImages"), state.get("nextContainerRefMetadata")
        state, batch = _with_batch(state, pod, images or {}, _timestamp(self._now()), refs or {})
        written.update(batch.annotations)
        if grace is not None:
            written[GRACE_ANNOTATION] = None
        written[STATE_ANNOTATION] = _dump(state)
        self._patch_pod(pod, batch.images, batch.labels, written)

    def refresh(self, pod: Obj) -> tuple[bool, float]:
        """Advance a pod's in-place update: apply images whose grace period is over, and set
        the condition True once the update completed. ``(wrote, seconds until a grace period
        ends or 0)``."""
        grace = annotation_json(pod, GRACE_ANNOTATION)
        if grace is not None:
            started = parse_time(grace.get("updateTimestamp"))
            seconds = float(grace.get("graceSeconds") or 0)
            left = (
                0.0 if started is None else started.timestamp() + seconds - self._now().timestamp()
            )
            if left > 0:
                return False, left
            self._patch_batch(pod, annotation_json(pod, STATE_ANNOTATION) or {}, grace)
            return True, 0.0
        current = annotation_json(pod, STATE_ANNOTATION)
        if (
            current is not None
            and (current.get("nextContainerImages") or current.get("nextContainerRefMetadata"))
            and _batch_completed(pod, current) is None
            and _not_ready_before_next(pod, current) is None
        ):
            self._patch_batch(pod, current, None)
            return True, 0.0
        if not has_readiness_gate(pod):
            return False, 0.0
        condition = get_condition(pod)
        if condition is not None and condition.get("status") == "True":
            return False, 0.0
        if check_update_completed(pod) is not None:
            return False, 0.0
        self._set_condition(pod, "True", "")
        return True, 0.0

    def update(
        self,
        pod: Obj,
        spec: InPlaceSpec,
        *,
        grace_seconds: int = 0,
        extra_labels: Mapping[str, str] | None = None,
        extra_annotations: Mapping[str, str] | None = None,
    ) -> float:
        """Start the in-place update of ``pod`` to ``spec``; return the grace delay (seconds
        after which :meth:`refresh` must run) or 0. ``extra_labels`` / ``extra_annotations``
        go into the first patch (Kruise's ``AdditionalFuncs``: the lifecycle state)."""
        if has_readiness_gate(pod):
            self._set_condition(pod, "False", "StartInPlaceUpdate")
        now = _timestamp(self._now())
        state: dict[str, Any] = {"revision": spec.revision, "updateTimestamp": now}
        if spec.update_env_from_metadata:
            state["updateEnvFromMetadata"] = True
        labels: dict[str, str | None] = {**spec.labels, POD_REVISION_LABEL: spec.revision}
        labels.update(extra_labels or {})
        annotations: dict[str, str | None] = dict(spec.annotations)
        annotations.update(extra_annotations or {})
        if grace_seconds > 0 and (spec.container_images or spec.container_ref_metadata):
            annotations[STATE_ANNOTATION] = _dump(state)
            grace: dict[str, Any] = {
                "revision": spec.revision,
                "containerImages": spec.container_images,
                "graceSeconds": grace_seconds,
                "updateTimestamp": now,
            }
            if spec.container_ref_metadata:
                grace["containerRefMetadata"] = spec.container_ref_metadata
            annotations[GRACE_ANNOTATION] = json.dumps(grace, sort_keys=True)
            self._patch_pod(pod, {}, labels, annotations)
            return float(grace_seconds)
        state, batch = _with_batch(
            state, pod, spec.container_images, now, spec.container_ref_metadata
        )
        labels.update(batch.labels)
        annotations.update(batch.annotations)
        annotations[STATE_ANNOTATION] = _dump(state)
        annotations[GRACE_ANNOTATION] = None
        self._patch_pod(pod, batch.images, labels, annotations)
        return 0.0

    def _patch_pod(
        self,
        pod: Obj,
        images: Mapping[str, str],
        labels: Mapping[str, str | None],
        annotations: Mapping[str, str | None],
    ) -> Obj:
        name, namespace = meta.name(pod), meta.namespace(pod)
        patch: dict[str, Any] = {}
        if labels or annotations:
            patch["metadata"] = {}
            if labels:
                patch["metadata"]["labels"] = dict(labels)
            if annotations:
                patch["metadata"]["annotations"] = dict(annotations)
        if images:
            patch["spec"] = {
                "containers": [{"name": n, "image": i} for n, i in sorted(images.items())]
            }
        result: Obj = self._client.patch(
            Pod, name, patch, namespace=namespace, patch_type="strategic"
        )
        log.info("%s/%s: in-place patch (images %s)", namespace, name, dict(images))
        return self._written(result)
