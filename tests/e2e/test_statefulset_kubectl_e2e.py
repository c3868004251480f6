"""``kubectl rollout status`` against the StatefulSet controller. kubectl is another process,
which simulated time cannot reach, so this test runs on the session cluster in real time
(``test_statefulset_e2e`` runs on simulated time)."""

from __future__ import annotations

import pytest

from tests.e2e.test_kubectl_e2e import MANIFEST, kubectl  # noqa: F401  (fixture)
from tests.e2e.test_statefulset_e2e import manager, pods  # noqa: F401  (fixture)


@pytest.mark.kubectl
def test_kubectl_rollout_status(kubectl, client, namespace, manager) -> None:  # noqa: F811
    assert "created" in kubectl("apply", "-f", "-", stdin=MANIFEST.replace("IMAGE", "1.25"))
    out = kubectl("rollout", "status", "statefulset/web", "--timeout=60s", timeout=90)
    assert "complete" in out
    assert "configured" in kubectl("apply", "-f", "-", stdin=MANIFEST.replace("IMAGE", "1.26"))
    out = kubectl("rollout", "status", "statefulset/web", "--timeout=60s", timeout=90)
    # "partitioned roll out complete: 3 new pods have been updated" (partition defaults to 0)
    # or "statefulset rolling update complete 3 pods at revision ..."
    assert "complete" in out.splitlines()[-1] and "3" in out.splitlines()[-1]
    images = {p["spec"]["containers"][0]["image"] for p in pods(client, namespace).values()}
    assert images == {"nginx:1.26"}
