"""Helpers (no tests): the StatefulSet harness (:mod:`tests.support.statefulset_harness`) for
the enhanced (Advanced) StatefulSet: readiness with a Kruise readiness gate, enhanced specs."""

from __future__ import annotations

from datetime import timedelta

from controllers.statefulset.utils import (
    ENHANCED_STATEFULSET,
)
from kube_runtime.kinds import Pod
from kube_runtime.workloads.inplace import READINESS_GATE
from tests.support.statefulset_harness import Harness, make_set, ts


class EnhancedHarness(Harness):
    def set_ready(self, ordinal, ready=True, *, since=None):
        pod = self.pod(ordinal)
        stamp = ts(since or self.now - timedelta(hours=1))
        conds = [c for c in pod.get("status", {}).get("conditions", []) if c["type"] != "Ready"]
        gate = next((c for c in conds if c["type"] == READINESS_GATE), None)
        gated = gate is None or gate["status"] == "True"
        conds.append(
            {
                "type": "Ready",
                "status": "True" if ready and gated else "False",
                "lastTransitionTime": stamp,
            }
        )
        status = {
            "phase": "Running",
            "conditions": conds,
            "containerStatuses": [
                {"name": "c", "imageID": "id-" + pod["spec"]["containers"][0]["image"]}
            ],
        }
        self.set_status(Pod, pod["metadata"]["name"], status)


def enhanced(replicas=3, rolling=None, **spec):
    sts = make_set(
        replicas, strategy={"type": "RollingUpdate", "rollingUpdate": rolling or {}}, **spec
    )
    sts["apiVersion"] = ENHANCED_STATEFULSET.api_version
    return sts


def set_image(image):
    def edit(sts):
        sts["spec"]["template"]["spec"]["containers"][0]["image"] = image

    return edit
