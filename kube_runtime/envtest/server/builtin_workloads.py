"""The workload kinds served besides the StatefulSet / Deployment / ReplicaSet family:
``apps/v1`` DaemonSet, ``batch`` Job and CronJob (``v1``, and CronJob's ``v1beta1`` that
kube-apiserver 1.20 serves), ``policy`` PodDisruptionBudget (``v1`` and ``v1beta1``).

What kube-apiserver's registry strategies do on create (Job: the generated
``controller-uid`` selector and the ``controller-uid`` / ``job-name`` template labels unless
``manualSelector``; DaemonSet: the ``deprecated.daemonset.template.generation`` annotation,
bumped when the template changes; the initial statuses), the validations users meet
(``ValidateJob`` / ``ValidateCronJob`` / ``ValidatePodDisruptionBudget``, DaemonSet's are
:mod:`.validation`'s) and the printers ``printDaemonSet`` / ``printJob`` / ``printCronJob`` /
``printPodDisruptionBudget`` as kube-apiserver 1.20 renders them. Defaults are
:mod:`.defaults`'.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

from kube_runtime.envtest.server import fielderrors as fe
from kube_runtime.envtest.server.errors import Cause
from kube_runtime.envtest.server.storage import parse_rfc3339
from kube_runtime.envtest.server.tables import (
    AGE,
    NAME,
    Column,
    _col,
    _get,
    _int,
    _list,
    _selector_string,
    _wide,
    format_labels,
    human_age,
    human_duration,
    layout_containers,
)
from kube_runtime.envtest.server.validation import (
    _nonnegative,
    _nonnegative_fields,
    _norm,
    _validate_annotations,
    _validate_label_selector,
    _validate_labels,
    _validate_pod_spec,
    is_valid_percent,
)

__all__ = [
    "CRON_JOB_COLUMNS",
    "DAEMON_SET_COLUMNS",
    "JOB_COLUMNS",
    "PDB_COLUMNS",
    "check_cron_job",
    "check_job",
    "check_pdb",
    "prepare_daemon_set",
    "prepare_job",
]

_TEMPLATE_GENERATION: Final = "deprecated.daemonset.template.generation"
_JOB_RESTART_POLICIES: Final = ("OnFailure", "Never")
_CONCURRENCY_POLICIES: Final = ("Allow", "Forbid", "Replace")
_CRON_JOB_NAME_MAX: Final = 52


def _containers(*path: str) -> tuple[Column, Column]:
    return (
        _wide("Containers", lambda o: layout_containers(_get(o, *path, "containers"))[0]),
        _wide("Images", lambda o: layout_containers(_get(o, *path, "containers"))[1]),
    )


# ------------------------------------------------------------------------------ DaemonSet


def prepare_daemon_set(obj: dict[str, Any], old: Mapping[str, Any] | None) -> None:
    """The template generation annotation: 1 on create; on update the stored one, plus one
    when the template changed."""
    meta = obj.get("metadata")
    if not isinstance(meta, dict):
        return
    generation = 1
    if old is not None:
        previous = fe.as_map(fe.as_map(old.get("metadata")).get("annotations")).get(
            _TEMPLATE_GENERATION
        )
        try:
            generation = int(previous) if previous is not None else 0
        except (TypeError, ValueError):
            generation = 0
        template, old_template = (
            fe.as_map(obj.get("spec")).get("template"),
            fe.as_map(old.get("spec")).get("template"),
        )
        if _norm(template) != _norm(old_template):
            generation += 1
    annotations = meta.get("annotations")
    if not isinstance(annotations, dict):
        annotations = meta["annotations"] = {}
    annotations[_TEMPLATE_GENERATION] = str(generation)


def initial_daemon_set_status() -> dict[str, Any]:
    """The status a created DaemonSet reads back with (the counters Go always writes)."""
    return {
        "currentNumberScheduled": 0,
        "desiredNumberScheduled": 0,
        "numberMisscheduled": 0,
        "numberReady": 0,
    }


def _status(field: str) -> Any:
    return lambda o: _int(_get(o, "status", field))


DAEMON_SET_COLUMNS: Final[list[Column]] = [
    NAME,
    _col("Desired", _status("desiredNumberScheduled"), "integer"),
    _col("Current", _status("currentNumberScheduled"), "integer"),
    _col("Ready", _status("numberReady"), "integer"),
    _col("Up-to-date", _status("updatedNumberScheduled"), "integer"),
    _col("Available", _status("numberAvailable"), "integer"),
    _col(
        "Node Selector",
        lambda o: format_labels(_get(o, "spec", "template", "spec", "nodeSelector")),
    ),
    AGE,
    *_containers("spec", "template", "spec"),
    _wide("Selector", lambda o: _selector_string(_get(o, "spec", "selector"))),
]


# ------------------------------------------------------------------------------ Job


def prepare_job(obj: dict[str, Any], old: Mapping[str, Any] | None) -> None:
    """Upstream ``generateSelector`` (1.20), on create: unless ``manualSelector`` is true, the
    selector is ``controller-uid: <uid>`` and the template gains ``controller-uid`` and
    ``job-name`` labels (the job's own labels default to the template's)."""
    spec = obj.get("spec")
    if old is not None or not isinstance(spec, dict) or spec.get("manualSelector") is True:
        return
    name = fe.as_map(obj.get("metadata")).get("name")
    uid = str(fe.as_map(obj.get("metadata")).get("uid") or "")
    template = spec.get("template")
    if not isinstance(template, dict):
        return
    meta = template.get("metadata")
    if not isinstance(meta, dict):
        meta = template["metadata"] = {}
    labels = meta.get("labels")
    if not isinstance(labels, dict):
        labels = meta["labels"] = {}
    labels.setdefault("controller-uid", uid)
    if isinstance(name, str):
        labels.setdefault("job-name", name)
    if spec.get("selector") is None:
        spec["selector"] = {"matchLabels": {"controller-uid": uid}}
    job_meta = obj.get("metadata")
    if isinstance(job_meta, dict) and not job_meta.get("labels"):
        job_meta["labels"] = dict(labels)


def _check_job_template(out: list[Cause], path: str, template: Mapping[str, Any]) -> None:
    meta = fe.as_map(template.get("metadata"))
    _validate_labels(out, f"{path}.labels", meta.get("labels"))
    _validate_annotations(out, f"{path}.annotations", meta.get("annotations"))
    spec = fe.as_map(template.get("spec"))
    _validate_pod_spec(out, f"{path}.spec", spec, is_pod=False)
    # kube-apiserver 1.20 answers "Required" for any other policy, the defaulted Always too
    if spec.get("restartPolicy") not in _JOB_RESTART_POLICIES:
        out.append(fe.required(f"{path}.spec.restartPolicy", 'valid values: "OnFailure", "Never"'))


def _check_job_spec(
    out: list[Cause], path: str, spec: Mapping[str, Any], *, generated: bool
) -> None:
    _nonnegative_fields(
        out,
        path,
        spec,
        "parallelism",
        "completions",
        "activeDeadlineSeconds",
        "backoffLimit",
        "ttlSecondsAfterFinished",
    )
    selector = spec.get("selector")
    if selector is None and generated:
        out.append(fe.required(f"{path}.selector"))
    elif selector is not None:
        _validate_label_selector(out, f"{path}.selector", fe.as_map(selector))
    _check_job_template(out, f"{path}.template", fe.as_map(spec.get("template")))


def check_job(out: list[Cause], obj: Mapping[str, Any], old: Mapping[str, Any] | None) -> None:
    """Upstream ``ValidateJob`` (+ ``Update``: selector and template immutable)."""
    spec = fe.as_map(obj.get("spec"))
    _check_job_spec(out, "spec", spec, generated=True)
    if old is None:
        return
    old_spec = fe.as_map(old.get("spec"))
    for key in ("selector", "template", "completions"):
        if _norm(spec.get(key)) != _norm(old_spec.get(key)):
            value = spec.get(key)
            out.append(fe.invalid(f"spec.{key}", value, fe.IMMUTABLE))


def _completions(obj: Mapping[str, Any]) -> str:
    succeeded = _int(_get(obj, "status", "succeeded"))
    completions = _get(obj, "spec", "completions")
    if isinstance(completions, int):
        return f"{succeeded}/{completions}"
    parallelism = _int(_get(obj, "spec", "parallelism"))
    return f"{succeeded}/1 of {parallelism}" if parallelism > 1 else f"{succeeded}/1"


def _duration(obj: Mapping[str, Any]) -> str:
    started, completed = _get(obj, "status", "startTime"), _get(obj, "status", "completionTime")
    if not isinstance(started, str) or not started:
        return ""
    if not isinstance(completed, str) or not completed:
        return human_age(started)
    start, end = parse_rfc3339(started), parse_rfc3339(completed)
    return human_duration(end - start) if start is not None and end is not None else ""


JOB_COLUMNS: Final[list[Column]] = [
    NAME,
    _col("Completions", _completions),
    _col("Duration", _duration),
    AGE,
    *_containers("spec", "template", "spec"),
    _wide("Selector", lambda o: _selector_string(_get(o, "spec", "selector"))),
]


# ------------------------------------------------------------------------------ CronJob

_DESCRIPTORS: Final = (
    "@yearly",
    "@annually",
    "@monthly",
    "@weekly",
    "@daily",
    "@midnight",
    "@hourly",
)
_FIELD_RE: Final = re.compile(r"[0-9A-Za-z*/,?\-LW#]+")


def _schedule_error(schedule: str) -> str | None:
    """robfig/cron's standard parser, the errors users meet: the field count."""
    text = schedule.strip()
    if text.startswith("TZ=") or text.startswith("CRON_TZ="):
        text = text.split(" ", 1)[1] if " " in text else ""
    if text.startswith("@"):
        if text in _DESCRIPTORS or text.startswith("@every "):
            return None
        return f"Unrecognized descriptor: {text}"
    fields = text.split()
    if len(fields) != 5:
        return f"Expected exactly 5 fields, found {len(fields)}: {text}"
    for value in fields:
        if not _FIELD_RE.fullmatch(value):
            return f"Failed to parse int from {value}"
    return None


def check_cron_job(out: list[Cause], obj: Mapping[str, Any], old: Mapping[str, Any] | None) -> None:
    """Upstream ``ValidateCronJob``: a name of at most 52 characters, a parseable
    schedule, a supported concurrency policy, a valid job template."""
    name = fe.as_map(obj.get("metadata")).get("name")
    if isinstance(name, str) and len(name) > _CRON_JOB_NAME_MAX:
        out.append(fe.invalid("metadata.name", name, "must be no more than 52 characters"))
    spec = fe.as_map(obj.get("spec"))
    schedule = spec.get("schedule")
    if not schedule:
        out.append(fe.required("spec.schedule"))
    elif isinstance(schedule, str) and (error := _schedule_error(schedule)) is not None:
        out.append(fe.invalid("spec.schedule", schedule, error))
    _nonnegative(out, "spec.startingDeadlineSeconds", spec.get("startingDeadlineSeconds"))
    policy = spec.get("concurrencyPolicy")
    if policy and policy not in _CONCURRENCY_POLICIES:
        out.append(fe.not_supported("spec.concurrencyPolicy", policy, _CONCURRENCY_POLICIES))
    _nonnegative_fields(out, "spec", spec, "successfulJobsHistoryLimit", "failedJobsHistoryLimit")
    job_spec = fe.as_map(fe.as_map(spec.get("jobTemplate")).get("spec"))
    _check_job_spec(out, "spec.jobTemplate.spec", job_spec, generated=False)


def _bool_text(value: Any) -> str:
    return "<unset>" if not isinstance(value, bool) else str(value)


def _last_schedule(obj: Mapping[str, Any]) -> str:
    last = _get(obj, "status", "lastScheduleTime")
    return human_age(last) if last else "<none>"


CRON_JOB_COLUMNS: Final[list[Column]] = [
    NAME,
    _col("Schedule", lambda o: str(_get(o, "spec", "schedule") or "")),
    _col("Suspend", lambda o: _bool_text(_get(o, "spec", "suspend")), "boolean"),
    _col("Active", lambda o: len(_list(_get(o, "status", "active"))), "integer"),
    _col("Last Schedule", _last_schedule),
    AGE,
    *_containers("spec", "jobTemplate", "spec", "template", "spec"),
    _wide(
        "Selector",
        lambda o: _formatted(_get(o, "spec", "jobTemplate", "spec", "selector")),
    ),
]


def _formatted(selector: Any) -> str:
    from kube_runtime.selectors import format_label_selector

    return format_label_selector(selector if isinstance(selector, Mapping) else None)


# ------------------------------------------------------------------------------ PodDisruptionBudget


def initial_pdb_status() -> dict[str, Any]:
    """The status a created PodDisruptionBudget reads back with."""
    return {"currentHealthy": 0, "desiredHealthy": 0, "disruptionsAllowed": 0, "expectedPods": 0}


def _int_or_percent(out: list[Cause], path: str, value: Any) -> None:
    """Upstream ``ValidatePositiveIntOrPercent`` plus ``IsNotMoreThan100Percent``."""
    if isinstance(value, bool):
        return
    if isinstance(value, int):
        if value < 0:
            out.append(fe.invalid(path, value, "must be greater than or equal to 0"))
        return
    if isinstance(value, str):
        errors = is_valid_percent(value)
        for msg in errors:
            out.append(fe.invalid(path, value, msg))
        if not errors and int(value[:-1]) > 100:
            out.append(fe.invalid(path, value, "must not be greater than 100%"))


def check_pdb(out: list[Cause], obj: Mapping[str, Any], old: Mapping[str, Any] | None) -> None:
    """Upstream ``ValidatePodDisruptionBudgetSpec``: not both ``minAvailable`` and
    ``maxUnavailable``, each a non-negative integer or a percentage up to 100%, a valid
    selector."""
    spec = fe.as_map(obj.get("spec"))
    low, high = spec.get("minAvailable"), spec.get("maxUnavailable")
    if low is not None and high is not None:
        out.append(fe.invalid("spec", None, "minAvailable and maxUnavailable cannot be both set"))
    if low is not None:
        _int_or_percent(out, "spec.minAvailable", low)
    if high is not None:
        _int_or_percent(out, "spec.maxUnavailable", high)
    selector = spec.get("selector")
    if selector is not None:
        _validate_label_selector(out, "spec.selector", fe.as_map(selector))


def _int_or_string(value: Any) -> str:
    return "N/A" if value is None else str(value)


PDB_COLUMNS: Final[list[Column]] = [
    NAME,
    _col("Min Available", lambda o: _int_or_string(_get(o, "spec", "minAvailable"))),
    _col("Max Unavailable", lambda o: _int_or_string(_get(o, "spec", "maxUnavailable"))),
    _col("Allowed Disruptions", _status("disruptionsAllowed"), "integer"),
    AGE,
]
