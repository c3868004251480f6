"""A rollout's progress (upstream ``pkg/controller/deployment/progress.go``).

:func:`rollout_status` is the status a rollout step writes: :func:`~.sync.calculate_status`
plus the ``Progressing`` condition when ``progressDeadlineSeconds`` is set (removed when it is
not):

* ``NewReplicaSetAvailable`` (True) once the rollout is complete;
* ``ReplicaSetUpdated`` (True) while it makes progress (more updated, ready or available pods,
  fewer old ones): its ``lastUpdateTime`` moves, its ``lastTransitionTime`` stays while True;
* ``ProgressDeadlineExceeded`` (False) when the condition was last updated more than
  ``progressDeadlineSeconds`` ago;

and a ``ReplicaFailure`` condition of the new (else any) ReplicaSet copied over.
:func:`progress_check_after` is when to look again at a rollout that shows no progress.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any

from controllers.deployment import conditions as cond
from controllers.deployment import util
from controllers.deployment.sync import DeploymentControl, calculate_status, same_status
from kube_runtime import meta
from kube_runtime.meta import ObjView as Obj
from kube_runtime.workloads.pods import parse_time

__all__ = ["progress_check_after", "replica_failures", "rollout_status", "sync_rollout_status"]


def replica_failures(all_rss: Sequence[Obj | None], new_rs: Obj | None) -> list[dict[str, Any]]:
    """The ``ReplicaFailure`` conditions of the new ReplicaSet, or else of all of them, as
    Deployment conditions."""
    found = []
    for rs in [new_rs] if new_rs is not None else []:
        for c in (rs.get("status") or {}).get("conditions") or ():
            if c.get("type") == cond.REPLICA_FAILURE:
                found.append(cond.replica_set_to_deployment_condition(c))
    if found:
        return found
    for other in all_rss:
        if other is None:
            continue
        for c in (other.get("status") or {}).get("conditions") or ():
            if c.get("type") == cond.REPLICA_FAILURE:
                found.append(cond.replica_set_to_deployment_condition(c))
    return found


def rollout_status(
    all_rss: Sequence[Obj | None], new_rs: Obj | None, d: Obj, now: datetime
) -> dict[str, Any]:
    """The status a rollout step computes (see the module docstring)."""
    status = calculate_status(all_rss, new_rs, d, now)
    if not util.has_progress_deadline(d):
        cond.remove_condition(status, cond.PROGRESSING)
    current = cond.get_condition(d.get("status") or {}, cond.PROGRESSING)
    complete = (
        status.get("replicas") == status.get("updatedReplicas")
        and current is not None
        and current.get("reason") == cond.NEW_RS_AVAILABLE_REASON
    )
    name = meta.name(d)
    subject = f'ReplicaSet "{meta.name(new_rs)}"' if new_rs is not None else f'Deployment "{name}"'
    if util.has_progress_deadline(d) and not complete:
        if util.deployment_complete(d, status):
            cond.set_condition(
                status,
                cond.new_condition(
                    cond.PROGRESSING,
                    "True",
                    cond.NEW_RS_AVAILABLE_REASON,
                    f"{subject} has successfully progressed.",
                    now,
                ),
            )
        elif util.deployment_progressing(d, status):
            condition = cond.new_condition(
                cond.PROGRESSING,
                "True",
                cond.RS_UPDATED_REASON,
                f"{subject} is progressing.",
                now,
            )
            if current is not None:
                if current.get("status") == "True":
                    condition["lastTransitionTime"] = current.get("lastTransitionTime")
                cond.remove_condition(status, cond.PROGRESSING)
            cond.set_condition(status, condition)
        elif util.deployment_timed_out(d, status, now):
            cond.set_condition(
                status,
                cond.new_condition(
                    cond.PROGRESSING,
                    "False",
                    cond.TIMED_OUT_REASON,
                    f"{subject} has timed out progressing.",
                    now,
                ),
            )
    failures = replica_failures(all_rss, new_rs)
    if failures:
        cond.set_condition(status, failures[0])
    else:
        cond.remove_condition(status, cond.REPLICA_FAILURE)
    return status


def progress_check_after(d: Obj, status: Mapping[str, Any], now: datetime) -> float | None:
    """Seconds until a rollout without progress should be checked for its deadline
    (upstream ``requeueStuckDeployment``: the Progressing condition's ``lastUpdateTime`` plus
    the deadline, a second added; 0 when that is under a second away); None when there is
    nothing to check (no deadline or condition, complete, timed out already)."""
    current = cond.get_condition(d.get("status") or {}, cond.PROGRESSING)
    if not util.has_progress_deadline(d) or current is None:
        return None
    if util.deployment_complete(d, status) or current.get("reason") == cond.TIMED_OUT_REASON:
        return None
    since = parse_time(current.get("lastUpdateTime"))
    if since is None:
        return None
    deadline = since + timedelta(seconds=int((d.get("spec") or {})["progressDeadlineSeconds"]))
    after = (deadline - now).total_seconds()
    if after < 1.0:
        return 0.0
    return after + 1.0


def sync_rollout_status(
    control: DeploymentControl, all_rss: Sequence[Obj | None], new_rs: Obj | None, d: dict[str, Any]
) -> float | None:
    """Write the rollout's status when it changed; otherwise return when to check the
    progress deadline again (None: no need)."""
    now = control.now()
    status = rollout_status(all_rss, new_rs, d, now)
    if same_status(d.get("status") or {}, status):
        return progress_check_after(d, status, now)
    d["status"] = status
    control.update_status(d)
    return None
