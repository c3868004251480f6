"""Heartbeat: every ConfigMap labelled ``heartbeat=on`` gets a beat once an hour.

A beat stamps ``heartbeat.example.io/last`` with the time and counts beats in
``heartbeat.example.io/beats``. A reconcile beats when the last beat is an hour old (or there is
none) and otherwise asks to come back when it will be: level-triggered, so the update its own
beat causes changes nothing. The time comes from the
manager's clock (:mod:`kube_runtime.clock`), so a test on a simulated clock sees hours pass in
milliseconds; in production it is the real clock.
"""

from datetime import datetime, timezone

from kube_runtime import Builder, Manager, Request, Result, kinds
from kube_runtime.client import NotFound
from kube_runtime.clock import Clock
from kube_runtime.predicates import label_selector

PERIOD = 3600.0
LAST = "heartbeat.example.io/last"
BEATS = "heartbeat.example.io/beats"
STAMP = "%Y-%m-%dT%H:%M:%SZ"


class Heartbeat:
    """The reconciler: one beat per reconcile, the next one ``PERIOD`` later."""

    def __init__(self, manager: Manager, clock: Clock) -> None:
        self.client = manager.client
        self.clock = clock

    def reconcile(self, request: Request) -> Result | None:
        try:
            cm = self.client.get(kinds.ConfigMap, request.name, request.namespace)
        except NotFound:
            return None
        annotations = cm["metadata"].get("annotations") or {}
        now = self.clock.now()
        last = annotations.get(LAST)
        if last:
            age = (
                now - datetime.strptime(last, STAMP).replace(tzinfo=timezone.utc)
            ).total_seconds()
            if age < PERIOD:
                return Result(requeue_after=PERIOD - age)
        beats = int(annotations.get(BEATS, "0")) + 1
        stamp = now.strftime(STAMP)
        self.client.patch(
            kinds.ConfigMap,
            request.name,
            {"metadata": {"annotations": {LAST: stamp, BEATS: str(beats)}}},
            namespace=request.namespace,
        )
        return Result(requeue_after=PERIOD)


def setup(manager: Manager) -> None:
    """Register the heartbeat controller with ``manager`` (on the manager's clock)."""
    Builder(manager).named("heartbeat").for_(
        kinds.ConfigMap, label_selector({"heartbeat": "on"})
    ).complete(Heartbeat(manager, manager.clock))
