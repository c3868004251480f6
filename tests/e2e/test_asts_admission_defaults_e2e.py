"""The enhanced (Advanced) StatefulSet's defaulting webhook stores OpenKruise's defaults
(``SetDefaultsStatefulSet``), on the embedded cluster and on kube-apiserver 1.20: a set created
with none of the defaulted fields reads back with them and runs as the controller read it
before (one replica, OrderedReady, ReCreate); a set stored before the webhooks were installed
can still be updated through them.

On the embedded backend every test runs on simulated time (``docs/simtime.md``), on a cluster
of its own."""

from __future__ import annotations

from typing import Any

import pytest

from controllers.statefulset import ENHANCED_STATEFULSET
from tests.e2e._fixtures import (  # noqa: F401 (fixtures)
    simulated_client,
    simulated_namespace,
)
from tests.e2e.test_asts_admission_vct_e2e import installed, sts_hooks  # noqa: F401 (fixture)
from tests.e2e.test_enhanced_statefulset_e2e import (  # noqa: F401 (fixtures)
    TIMEOUT,
    converged,
    crd,
    get_set,
    live_pods,
    manager,
    names,
)

pytestmark = pytest.mark.simtime  # on the embedded backend: a cluster of each test's own


def _bare(namespace: str) -> dict[str, Any]:
    """A set naming none of the defaulted fields."""
    return {
        "apiVersion": ENHANCED_STATEFULSET.api_version,
        "kind": "StatefulSet",
        "metadata": {"name": "web", "namespace": namespace},
        "spec": {
            "serviceName": "web",
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "c", "image": "nginx:1"}]},
            },
        },
    }


KRUISE_DEFAULTS = {
    "replicas": 1,
    "revisionHistoryLimit": 10,
    "podManagementPolicy": "OrderedReady",
    "updateStrategy": {
        "type": "RollingUpdate",
        "rollingUpdate": {
            "partition": 0,
            "maxUnavailable": 1,
            "podUpdatePolicy": "ReCreate",
            "minReadySeconds": 0,
        },
    },
    "persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Retain", "whenScaled": "Retain"},
    "volumeClaimUpdateStrategy": {"type": "OnDelete"},
}


@pytest.mark.usefixtures("manager")
def test_created_set_is_stored_with_kruise_defaults(client, namespace, wait_for, request):
    hooks = request.getfixturevalue("sts_hooks")
    with installed(client, hooks, namespace):
        created = client.create(_bare(namespace))
    for key, value in KRUISE_DEFAULTS.items():
        assert created["spec"][key] == value, key
    assert get_set(client, namespace)["spec"] == created["spec"]
    wait_for(converged(client, namespace, names(1)), TIMEOUT)


@pytest.mark.usefixtures("manager")
def test_set_stored_without_defaults_updates_through_the_webhooks(
    client, namespace, wait_for, request
):
    """A set created before the webhooks were there: its first update through them gets the
    defaults (``podManagementPolicy`` among them, a field Kruise keeps fixed) and is not
    refused for them."""
    client.create(_bare(namespace))
    wait_for(converged(client, namespace, names(1)), TIMEOUT)
    assert "podManagementPolicy" not in get_set(client, namespace)["spec"]
    hooks = request.getfixturevalue("sts_hooks")
    with installed(client, hooks, namespace):
        sts = get_set(client, namespace)
        sts["spec"]["replicas"] = 2
        updated = client.update(sts)
    assert updated["spec"]["podManagementPolicy"] == "OrderedReady"
    assert updated["spec"]["updateStrategy"] == KRUISE_DEFAULTS["updateStrategy"]
    wait_for(converged(client, namespace, names(2)), TIMEOUT)
    assert set(live_pods(client, namespace)) == names(2)
