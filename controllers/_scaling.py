"""The scale expectations' bookkeeping the bundled workload controllers share: ticking off,
from what the cache lists, the creations and deletions a controller is waiting to see, and
whether a sync waits for the rest."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable

from kube_runtime import meta
from kube_runtime.expectations import ScaleAction, ScaleExpectations, wait_result
from kube_runtime.meta import ObjView
from kube_runtime.reconcile import Result
from kube_runtime.workloads.pods import is_terminating

__all__ = ["observe_listed", "wait_for_scale"]


def observe_listed(
    expectations: ScaleExpectations,
    key: str,
    objects: Iterable[ObjView],
    *,
    token_of: Callable[[ObjView], str] = meta.name,
) -> None:
    """Tick off what the cache shows of controller ``key``'s expected creations and
    deletions (``objects``: every object the cache lists that may be the controller's): an
    expected creation (by name) is seen once an object of that name is listed; an expected
    deletion, recorded under ``token_of(obj)`` (the name by default, or ``<name>/<suffix>``),
    once no object of that name is listed, the one listed is another (its token differs) or
    it is being deleted (``deletionTimestamp`` set)."""
    pending = expectations.get_expectations(key)
    if not pending:
        return
    by_name = {meta.name(o): o for o in objects}
    for name in pending.get(ScaleAction.CREATE, ()):
        if name in by_name:
            expectations.observe_scale(key, ScaleAction.CREATE, name)
    for token in pending.get(ScaleAction.DELETE, ()):
        obj = by_name.get(token.rsplit("/", 1)[0])
        if obj is None or is_terminating(obj) or token_of(obj) != token:
            expectations.observe_scale(key, ScaleAction.DELETE, token)


def wait_for_scale(
    expectations: ScaleExpectations,
    key: str,
    *,
    logger: logging.Logger,
    recheck: float | None = None,
) -> Result | None:
    """Whether controller ``key``'s sync waits for its expected creations and deletions
    (:func:`~kube_runtime.expectations.wait_result`): None to go on (all seen, or awaited for
    too long: then they are forgotten), else when to look again (``recheck`` seconds, or by
    default the time left until the wait times out)."""
    satisfied, waited, pending = expectations.satisfied_expectations(key)
    return wait_result(
        satisfied,
        waited,
        key=key,
        what=pending,
        recheck=recheck,
        on_timeout=lambda: expectations.delete_expectations(key),
        logger=logger,
    )
