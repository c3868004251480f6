"""Heartbeat: every ConfigMap labelled ``heartbeat=on`` gets a beat once an hour.

A beat stamps ``heartbeat.example.io/last`` with the time and counts beats in
``heartbeat.example.io/beats``. A reconcile beats when the last beat is an hour old (or there is
none) and otherwise asks to come back when it will be: level-triggered, so the update its own
beat causes changes nothing. The time comes from the
manager's clock (:mod:`kube_runtime.clock`), so a test on a simulated clock sees hours pass in
milliseconds; in production it is the real clock.
"""

from datetime import datetime, timezone
from typing import Any

from kube_runtime import Builder, Manager, Result, kinds
from kube_runtime.clock import Clock
from kube_runtime.predicates import label_selector

PERIOD = 3600.0
LAST = "heartbeat.example.io/last"
BEATS = "heartbeat.example.io/beats"
STAMP = "%Y-%m-%dT%H:%M:%SZ"


class Heartbeat:
    """The reconciler: one beat per reconcile, the next one ``PERIOD`` later. :meth:`beat`
    reconciles the ConfigMap itself (``Builder.complete_objects``: the manager's cache reads
    it, and a request whose ConfigMap is gone is done without a call)."""

    def __init__(self, manager: Manager, clock: Clock) -> None:
        self.client = manager.client
        self.clock = clock

    def beat(self, cm: dict[str, Any]) -> Result:
        """Beat ``cm`` (a private copy of the cached ConfigMap) when its last beat is an hour old
        or there is none; come back when the next one is due."""
        metadata = cm["metadata"]
        annotations = metadata.get("annotations") or {}
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
            metadata["name"],
            {"metadata": {"annotations": {LAST: stamp, BEATS: str(beats)}}},
            namespace=metadata["namespace"],
        )
        return Result(requeue_after=PERIOD)


def setup(manager: Manager) -> None:
    """Register the heartbeat controller with ``manager`` (on the manager's clock)."""
    Builder(manager).named("heartbeat").for_(
        kinds.ConfigMap, label_selector({"heartbeat": "on"})
    ).complete_objects(Heartbeat(manager, manager.clock).beat)
