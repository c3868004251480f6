"""The enhanced (Advanced) StatefulSet's validating webhook on claim-template updates,
replaying the ``*_cannot_expand`` scenarios of OpenKruise's ``Resize PVC`` and ``Resize PVC
only`` contexts (``test/e2e/apps/v1beta1/statefulset.go``) with Kruise's numbers, on the
embedded cluster and on kube-apiserver 1.20.

Each scenario (Kruise's ``validateExpandVCT``): a set of 3 replicas with one claim template
per StorageClass (1Gi, ``volumeClaimUpdateStrategy: OnPodRollingUpdate``, ``ReCreate`` or
``InPlaceIfPossible``), created and ready; then the update (a new image and/or the first
templates at 2Gi) must fail, refused by the webhook with Kruise's message, and nothing
changes. Since nothing changes, the scenarios that create the same set (policy and classes)
share one: 6 tests replay Kruise's 16 scenarios, each checked as if it had a set of its own.
One expandable scenario checks that the webhook lets such an update through.

The webhook is this project's own handler (``StatefulSetValidator`` reading StorageClasses
with the test's client) served over HTTPS by a :class:`kube_runtime.webhook.Server` and
registered with a ValidatingWebhookConfiguration (with the defaulting webhook, as
``kube-runtime run statefulset --webhook-port`` serves both).

On the embedded backend every test runs on simulated time (``docs/simtime.md``), on a cluster
of its own; the webhook server is the module's, outside the simulation (it only answers the
API server's calls).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import pytest

from controllers.statefulset import ENHANCED_STATEFULSET
from controllers.statefulset.webhooks import StatefulSetValidator, set_defaults
from kube_runtime.client.errors import ApiError
from kube_runtime.webhook._defaulting import DefaultingHandler
from kube_runtime.webhook._validating import ValidatingHandler
from tests.e2e._fixtures import (  # noqa: F401 (fixtures)
    simulated_client,
    simulated_namespace,
    webhook_server,
)
from tests.e2e.test_admission_webhooks_e2e import Hooks, _hook, configuration
from tests.e2e.test_asts_kruise_e2e import (  # noqa: F401 (fixtures)
    _expandable_set,
    storage_classes,
)
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

VALIDATE = "/validate-apps-kube-runtime-io-v1beta1-statefulset"
MUTATE = "/mutate-apps-kube-runtime-io-v1beta1-statefulset"
NEW_IMAGE = "nginx:2"  # Kruise's NewNginxImage
NEW_SIZE = "2Gi"
RULES = [
    {
        "apiGroups": [ENHANCED_STATEFULSET.group],
        "apiVersions": [ENHANCED_STATEFULSET.version],
        "operations": ["CREATE", "UPDATE"],
        "resources": ["statefulsets"],
    }
]


@pytest.fixture(scope="module")
def sts_hooks(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Hooks]:
    """A webhook server for the enhanced kind's webhooks (put on it by :func:`installed`)."""
    with webhook_server(tmp_path_factory.mktemp("webhook-certs")) as (server, certs):
        yield Hooks(server, certs)


@pytest.fixture
def classes(request: pytest.FixtureRequest) -> tuple[str, str]:
    """Kruise's expandable and not expandable StorageClasses (``storage_classes``)."""
    found: tuple[str, str] = request.getfixturevalue("storage_classes")
    return found


@contextlib.contextmanager
def installed(client, hooks: Hooks, namespace: str) -> Iterator[None]:
    """The enhanced kind's defaulting and validating webhooks in force for ``namespace``."""
    client.request(
        "PATCH",
        f"/api/v1/namespaces/{namespace}",
        body={"metadata": {"labels": {"webhook-test": namespace}}},
        content_type="application/merge-patch+json",
    )
    hooks.on(MUTATE, DefaultingHandler(set_defaults).handle)
    hooks.on(VALIDATE, ValidatingHandler(StatefulSetValidator(client)).handle)
    mutating = _hook(hooks, "sts.defaults.test", MUTATE, namespace, mutating=True, rules=RULES)
    validating = _hook(hooks, "sts.validate.test", VALIDATE, namespace, mutating=False, rules=RULES)
    with (
        configuration(client, hooks, namespace, [mutating], mutating=True),
        configuration(client, hooks, namespace, [validating], mutating=False),
    ):
        yield


def _update(client, namespace, image: bool, resized: int) -> dict[str, Any]:
    """Kruise's ``updateStatefulSetWithRetries`` with its updateFn: read, change, PUT."""
    sts = get_set(client, namespace)
    if image:
        sts["spec"]["template"]["spec"]["containers"][0]["image"] = NEW_IMAGE
    for template in sts["spec"]["volumeClaimTemplates"][:resized]:
        template["spec"]["resources"]["requests"]["storage"] = NEW_SIZE
    return client.update(sts)


# (Kruise's name, pod update policy, classes by "can"/"cannot", templates resized, new image)
SCENARIOS = [
    (f"{prefix}_{name}", policy, classes, resized, image)
    for policy, prefix_expand, prefix_only in (
        ("ReCreate", "recreate_expand", "recreate"),
        ("InPlaceIfPossible", "inplace_expand", "inplace"),
    )
    for image, prefix in ((True, prefix_expand), (False, prefix_only))
    for name, classes, resized in (
        ("vct_with_sc_cannot_expand" if image else "with_sc_cannot_expand", ("cannot",), 2),
        ("vct_with_2sc_cannot_expand" if image else "with_2sc_cannot_expand",
         ("cannot", "cannot"), 2),
        ("only_cannot_expand_vct_with_mixed_sc" if image else "expand_only_cannot_with_mixed_sc",
         ("cannot", "can"), 1),
        ("both_cannot_expand_vct_with_mixed_sc" if image else "expand_both_cannot_with_mixed_sc",
         ("cannot", "can"), 2),
    )
]  # fmt: skip

# The scenarios by the set they create (policy, classes): a refused update changes nothing
# (each scenario checks that), so the scenarios of one set run one after another on one
# created and ready set, as if each had created its own: 6 sets for Kruise's 16 scenarios.
SETS: dict[tuple[str, tuple[str, ...]], list[tuple[str, int, bool]]] = {}
for _name, _policy, _classes, _resized, _image in SCENARIOS:
    SETS.setdefault((_policy, _classes), []).append((_name, _resized, _image))


@pytest.mark.usefixtures("manager")
@pytest.mark.parametrize(
    ("policy", "sc_kinds", "scenarios"),
    [(policy, kinds, scenarios) for (policy, kinds), scenarios in SETS.items()],
    ids=[f"{policy}-{'+'.join(kinds)}" for policy, kinds in SETS],
)
def test_cannot_expand_update_is_refused(
    client, namespace, wait_for, classes, sts_hooks, policy, sc_kinds, scenarios
):
    """Each of Kruise's scenarios on this set (named in a failure's message): the update is
    refused with Kruise's message, and the set's generation and templates are unchanged."""
    allow, disallow = classes
    by_kind = {"can": allow, "cannot": disallow}
    with installed(client, sts_hooks, namespace):
        client.create(_expandable_set(namespace, policy, [by_kind[c] for c in sc_kinds]))
        created = wait_for(converged(client, namespace, names(3)), TIMEOUT)
        for scenario, resized, image in scenarios:
            with pytest.raises(ApiError) as refused:
                _update(client, namespace, image, resized)
            assert refused.value.code == 422, (scenario, refused.value)
            assert (
                "spec.volumeClaimTemplates[data0].spec.resources.requests.storage: Forbidden: "
                f"storage class {disallow} does not support volume expansion"
            ) in str(refused.value.message), scenario
            after = get_set(client, namespace)
            assert after["metadata"]["generation"] == created["metadata"]["generation"], scenario
            assert (
                after["spec"]["volumeClaimTemplates"] == created["spec"]["volumeClaimTemplates"]
            ), scenario


@pytest.mark.usefixtures("manager")
def test_can_expand_update_passes_the_webhook(client, namespace, wait_for, classes, sts_hooks):
    """Kruise's ``recreate_expand_only_can_expand_vct_with_mixed_sc`` up to the update (the
    expansion itself: ``test_asts_kruise_e2e.py``): the webhook lets it through."""
    allow, disallow = classes
    with installed(client, sts_hooks, namespace):
        client.create(_expandable_set(namespace, "ReCreate", [allow, disallow]))
        wait_for(converged(client, namespace, names(3)), TIMEOUT)
        updated = _update(client, namespace, True, 1)
    sizes = [
        t["spec"]["resources"]["requests"]["storage"]
        for t in updated["spec"]["volumeClaimTemplates"]
    ]
    assert sizes == [NEW_SIZE, "1Gi"]


@pytest.mark.usefixtures("manager")
def test_adding_a_template_is_refused(client, namespace, wait_for, classes, sts_hooks):
    """Kruise refuses adding or removing templates under ``OnPodRollingUpdate``."""
    allow, _ = classes
    with installed(client, sts_hooks, namespace):
        client.create(_expandable_set(namespace, "ReCreate", [allow]))
        wait_for(converged(client, namespace, names(3)), TIMEOUT)
        sts = get_set(client, namespace)
        extra = dict(sts["spec"]["volumeClaimTemplates"][0], metadata={"name": "data1"})
        sts["spec"]["volumeClaimTemplates"].append(extra)
        with pytest.raises(ApiError) as refused:
            client.update(sts)
    assert refused.value.code == 422
    assert "volumeClaimTemplate can not be added or deleted when OnRollingUpdate" in str(
        refused.value.message
    )
    assert len(live_pods(client, namespace)) == 3
