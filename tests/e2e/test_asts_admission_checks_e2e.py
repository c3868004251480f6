"""The enhanced (Advanced) StatefulSet's validating webhook refuses what OpenKruise's
refuses beyond claim templates, with Kruise's messages and field paths, on the embedded
cluster and on kube-apiserver 1.20: ``scaleStrategy.maxUnavailable`` other than 1 without
Parallel pods, an in-place ``podUpdatePolicy`` without the ``InPlaceUpdateReady`` readiness
gate in the template, and, for an InPlaceOnly set, a template update beyond its images (a
422 without field causes, as Kruise's ``admission.Errored``). The webhooks are installed as
in ``test_asts_admission_vct_e2e.py`` (defaulting and validating).

On the embedded backend every test runs on simulated time (``docs/simtime.md``), on a cluster
of its own."""

from __future__ import annotations

import pytest

from controllers.statefulset import ENHANCED_STATEFULSET
from kube_runtime.client.errors import ApiError
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
    make_asts,
    manager,
    names,
)

PARALLEL_ONLY = "can only work with Parallel PodManagementPolicyType"
GATE = [{"conditionType": "InPlaceUpdateReady"}]

pytestmark = pytest.mark.simtime  # on the embedded backend: a cluster of each test's own


@pytest.mark.usefixtures("crd")
def test_scale_max_unavailable_other_than_one_needs_parallel(client, namespace, request):
    """Kruise's ``validateScaleStrategy``: 2 with OrderedReady pods is refused at the field;
    the same set with Parallel pods is stored."""
    sts = make_asts(namespace, 3, scaleStrategy={"maxUnavailable": 2})
    with installed(client, request.getfixturevalue("sts_hooks"), namespace):
        with pytest.raises(ApiError) as refused:
            client.create(sts)
        assert refused.value.code == 422
        assert f"spec.scaleStrategy.maxUnavailable: Invalid value: 2: {PARALLEL_ONLY}" in str(
            refused.value.message
        )
        sts["spec"]["podManagementPolicy"] = "Parallel"
        created = client.create(sts)
    assert created["spec"]["scaleStrategy"] == {"maxUnavailable": 2}


@pytest.mark.usefixtures("crd")
def test_in_place_policy_needs_the_readiness_gate(client, namespace, request):
    """Kruise's ``validatePodUpdatePolicy``: InPlaceIfPossible without ``InPlaceUpdateReady``
    in ``template.spec.readinessGates`` is refused; with it the set is stored."""
    sts = make_asts(namespace, 1, {"podUpdatePolicy": "InPlaceIfPossible"})
    with installed(client, request.getfixturevalue("sts_hooks"), namespace):
        with pytest.raises(ApiError) as refused:
            client.create(sts)
        assert refused.value.code == 422
        assert (
            "spec.template.spec.readinessGates: Invalid value: null: must contains "
            "InPlaceUpdateReady when podUpdatePolicy is InPlaceIfPossible"
        ) in str(refused.value.message)
        sts["spec"]["template"]["spec"]["readinessGates"] = GATE
        client.create(sts)
    assert get_set(client, namespace)["spec"]["template"]["spec"]["readinessGates"] == GATE


@pytest.mark.usefixtures("crd")
def test_in_place_only_set_changes_only_images(client, namespace, request):
    """Kruise's ``validateTemplateInPlaceOnly``: an InPlaceOnly set's image may change, a new
    field of the pod spec may not (the update is refused and nothing is stored)."""
    sts = make_asts(namespace, 1, {"podUpdatePolicy": "InPlaceOnly"})
    sts["spec"]["template"]["spec"]["readinessGates"] = GATE
    with installed(client, request.getfixturevalue("sts_hooks"), namespace):
        client.create(sts)
        current = get_set(client, namespace)
        current["spec"]["template"]["spec"]["containers"][0]["image"] = "nginx:2"
        updated = client.update(current)
        updated["spec"]["template"]["spec"]["hostname"] = "h"
        with pytest.raises(ApiError) as refused:
            client.update(updated)
    assert refused.value.code == 422
    assert (
        "invalid template modified with InPlaceOnly strategy: add /hostname, "
        "currently only image update is allowed for InPlaceOnly"
    ) in str(refused.value.message)
    after = client.get(ENHANCED_STATEFULSET, "web", namespace)
    assert after["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:2"
    assert "hostname" not in after["spec"]["template"]["spec"]


@pytest.mark.usefixtures("manager")
def test_a_set_stored_before_the_webhooks_can_still_be_labelled_and_deleted(
    client, namespace, wait_for, request
):
    """A set the webhook would refuse (InPlaceIfPossible without the gate), stored before the
    webhooks were installed: with them, a metadata-only update passes and the set's deletion
    completes (the controller removes its ordered-teardown finalizer), while a spec change is
    refused."""
    client.create(make_asts(namespace, 1, {"podUpdatePolicy": "InPlaceIfPossible"}))
    wait_for(converged(client, namespace, names(1)), TIMEOUT)
    with installed(client, request.getfixturevalue("sts_hooks"), namespace):
        labelled = client.patch(
            ENHANCED_STATEFULSET, "web", {"metadata": {"labels": {"a": "b"}}}, namespace=namespace
        )
        assert labelled["metadata"]["labels"] == {"a": "b"}
        with pytest.raises(ApiError) as refused:
            client.patch(
                ENHANCED_STATEFULSET, "web", {"spec": {"replicas": 2}}, namespace=namespace
            )
        assert refused.value.code == 422
        assert "must contains InPlaceUpdateReady" in str(refused.value.message)
        client.delete(ENHANCED_STATEFULSET, "web", namespace=namespace)
        wait_for(lambda: not client.list(ENHANCED_STATEFULSET, namespace)["items"], TIMEOUT)
