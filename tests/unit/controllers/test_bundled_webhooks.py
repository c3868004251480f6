"""The bundled controllers' validating webhooks (issue 17 part 3), asked through their
endpoints without a socket, and `kube-runtime run --webhook-port` without certificates."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import orjson
import pytest

from controllers import cloneset, statefulset
from controllers.cloneset import CLONESET
from controllers.statefulset import ENHANCED_STATEFULSET
from kube_runtime import Manager, webhook
from kube_runtime.cli import main
from kube_runtime.client.fake import FakeClient
from kube_runtime.kinds import Kind, Pod
from tests.e2e.bad_specs import CORPUS, good

STS_PATH = "/validate-apps-kube-runtime-io-v1beta1-statefulset"
CS_PATH = "/validate-apps-kube-runtime-io-v1alpha1-cloneset"


@pytest.fixture
def server(tmp_path: Path) -> webhook.Server:
    manager = Manager(FakeClient(), metrics_bind_address="0")  # type: ignore[arg-type]
    server = webhook.server_for(manager, port=0, cert_dir=str(tmp_path))
    statefulset.setup_webhooks(manager)
    cloneset.setup_webhooks(manager)
    return server


def ask(server: webhook.Server, kind: Kind, operation: str, obj: Any, old: Any = None) -> Any:
    path = STS_PATH if kind == ENHANCED_STATEFULSET else CS_PATH
    plural = "statefulsets" if kind == ENHANCED_STATEFULSET else "clonesets"
    request = {
        "uid": str(uuid.uuid4()),
        "kind": {"group": kind.group, "version": kind.version, "kind": kind.kind},
        "resource": {"group": kind.group, "version": kind.version, "resource": plural},
        "name": obj["metadata"]["name"],
        "namespace": "ns",
        "operation": operation,
        "object": obj,
        "oldObject": old,
    }
    review = {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request}
    endpoint = server.endpoint(path)
    assert endpoint is not None, server.paths
    reply = endpoint.serve("POST", "application/json", orjson.dumps(review))
    return orjson.loads(reply.body)["response"]


def test_good_sets_are_allowed(server: webhook.Server) -> None:
    for kind in (ENHANCED_STATEFULSET, CLONESET):
        assert ask(server, kind, "CREATE", good(kind, "web", "ns"))["allowed"]


@pytest.mark.parametrize(
    ("name", "kind", "change"),
    [entry for entry in CORPUS if entry[1] in (ENHANCED_STATEFULSET, CLONESET)],
    ids=[f"{k.kind}-{n}" for n, k, _ in CORPUS if k in (ENHANCED_STATEFULSET, CLONESET)],
)
def test_the_corpus_is_refused_unless_only_the_pod_api_can_tell(
    server: webhook.Server, name: str, kind: Kind, change: Any
) -> None:
    obj = good(kind, "web", "ns")
    change(obj["spec"], "web")
    answer = ask(server, kind, "CREATE", obj)
    pod_level = name in {
        "no-containers",
        "container-name-invalid",
        "container-no-image",
        "mount-of-no-volume",
        "containers-string",
        "containers-of-strings",
        "service-name-invalid",
        "selector-bad-label",
        "selector-bad-operator",
    }
    if pod_level:
        return  # the API refuses the pods (FailedCreate): not this webhook's to say
    assert not answer["allowed"], (name, answer)
    status = answer["status"]
    assert status["code"] == 422 and status["details"]["causes"], status
    assert all(c["field"].startswith("spec") for c in status["details"]["causes"])
    assert all(c["field"] in status["message"] for c in status["details"]["causes"])


def test_selector_changes_are_refused(server: webhook.Server) -> None:
    for kind in (ENHANCED_STATEFULSET, CLONESET):
        old = good(kind, "web", "ns")
        new = good(kind, "web", "ns")
        new["spec"]["selector"] = {"matchLabels": {"app": "web", "tier": "x"}}
        new["spec"]["template"]["metadata"]["labels"]["tier"] = "x"
        answer = ask(server, kind, "UPDATE", new, old)
        assert not answer["allowed"]
        # Kruise's StatefulSet webhook refuses it as any other fixed field (at spec)
        field = "spec" if kind == ENHANCED_STATEFULSET else "spec.selector"
        assert answer["status"]["details"]["causes"][0]["field"] == field


def test_run_with_a_webhook_port_needs_certificates(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["run", "statefulset", "--webhook-port", "9443", "--webhook-cert-dir", str(tmp_path)]
    assert main(argv) == 2
    assert "--webhook-port needs a serving certificate" in capsys.readouterr().err


def test_webhook_config_of_the_bundled_controllers(capsys: pytest.CaptureFixture[str]) -> None:
    """`kube-runtime webhook-config statefulset cloneset` (as the README shows) registers their
    webhooks only, not their controllers (which would need a cluster)."""
    assert main(["webhook-config", "statefulset", "cloneset", "--url", "https://h:9443"]) == 0
    printed = capsys.readouterr().out
    assert "kind: ValidatingWebhookConfiguration" in printed
    assert (
        f"url: https://h:9443{STS_PATH}" in printed and f"url: https://h:9443{CS_PATH}" in printed
    )


KRUISE_CLONESET_CHECKS = [
    ({"template.spec.restartPolicy": "Never"}, "spec.template.spec.restartPolicy", "Unsupported"),
    ({"template.spec.activeDeadlineSeconds": 5}, "spec.template.spec.activeDeadlineSeconds", "not"),
    ({"scaleStrategy.podsToDelete": ["a", "a"]}, "spec.scaleStrategy.podsToDelete", "duplicated"),
    (
        {"updateStrategy": {"maxUnavailable": "0%", "maxSurge": 0}},
        "spec.updateStrategy.maxUnavailable",
        "should not both be less than 1",
    ),
    (
        {"updateStrategy": {"type": "InPlaceOnly", "maxSurge": "10%"}},
        "spec.updateStrategy.maxSurge",
        "can not use maxSurge with strategy type InPlaceOnly",
    ),
    (
        {"updateStrategy.priorityStrategy": {"weightPriority": [{"weight": 5}]}},
        "spec.updateStrategy.priorityStrategy",
        "selector can not be empty",
    ),
    (
        {
            "updateStrategy.priorityStrategy": {
                "orderPriority": [{"orderedKey": "k"}],
                "weightPriority": [{"weight": 5, "matchSelector": {"matchLabels": {"a": "b"}}}],
            }
        },
        "spec.updateStrategy.priorityStrategy",
        "only one of weightPriority and orderPriority",
    ),
    (
        {
            "updateStrategy.scatterStrategy": [
                {"key": "z", "value": "a"},
                {"key": "z", "value": "a"},
            ]
        },
        "spec.updateStrategy.scatterStrategy",
        "duplicated term",
    ),
    ({"selector": {"matchExpressions": []}}, "spec.selector", "empty selector is invalid"),
]


def _apply(obj: dict[str, Any], changes: dict[str, Any]) -> dict[str, Any]:
    for path, value in changes.items():
        node = obj["spec"]
        *parents, last = path.split(".")
        for key in parents:
            node = node.setdefault(key, {})
        node[last] = value
    return obj


@pytest.mark.parametrize(("changes", "field", "words"), KRUISE_CLONESET_CHECKS)
def test_the_cloneset_webhook_answers_kruise_checks_with_the_field_path(
    server: webhook.Server, changes: dict[str, Any], field: str, words: str
) -> None:
    """What OpenKruise's ``validateCloneSetSpec`` refuses beyond the corpus (checks whose bad
    values the controller could still act on): a 422 with a cause at the field."""
    answer = ask(server, CLONESET, "CREATE", _apply(good(CLONESET, "web", "ns"), changes))
    assert not answer["allowed"]
    causes = answer["status"]["details"]["causes"]
    assert any(c["field"] == field and words in c["message"] for c in causes), causes


def test_cloneset_updates_change_only_the_fields_kruise_lets_change(
    server: webhook.Server,
) -> None:
    old = good(CLONESET, "web", "ns")
    scaled = _apply(good(CLONESET, "web", "ns"), {"replicas": 3, "minReadySeconds": 4})
    assert ask(server, CLONESET, "UPDATE", scaled, old)["allowed"]
    moved = _apply(good(CLONESET, "web", "ns"), {"progressDeadlineSeconds": 30})
    answer = ask(server, CLONESET, "UPDATE", moved, old)
    assert not answer["allowed"]
    (cause,) = answer["status"]["details"]["causes"]
    assert cause["field"] == "spec" and "'replicas'" in cause["message"], cause


KRUISE_STATEFULSET_CHECKS = [
    (
        {"template.spec.restartPolicy": "OnFailure"},
        "spec.template.spec.restartPolicy",
        "Unsupported",
    ),
    ({"template.spec.activeDeadlineSeconds": 5}, "spec.template.spec.activeDeadlineSeconds", "not"),
    (
        {"updateStrategy.rollingUpdate.maxUnavailable": 2},
        "spec.updateStrategy.rollingUpdate.maxUnavailable",
        "can only work with Parallel PodManagementPolicyType",
    ),
    (
        {"updateStrategy.rollingUpdate.unorderedUpdate": {}},
        "spec.updateStrategy.rollingUpdate.unorderedUpdate",
        "unorderedUpdate can only work with Parallel",
    ),
]


@pytest.mark.parametrize(("changes", "field", "words"), KRUISE_STATEFULSET_CHECKS)
def test_the_statefulset_webhook_answers_kruise_checks_with_the_field_path(
    server: webhook.Server, changes: dict[str, Any], field: str, words: str
) -> None:
    obj = _apply(good(ENHANCED_STATEFULSET, "web", "ns"), changes)
    answer = ask(server, ENHANCED_STATEFULSET, "CREATE", obj)
    assert not answer["allowed"]
    causes = answer["status"]["details"]["causes"]
    assert any(c["field"] == field and words in c["message"] for c in causes), causes
    obj["spec"]["podManagementPolicy"] = "Parallel"
    parallel_only = "Parallel" in words
    assert ask(server, ENHANCED_STATEFULSET, "CREATE", obj)["allowed"] == parallel_only


def test_statefulset_updates_keep_the_fields_kruise_keeps_fixed(server: webhook.Server) -> None:
    old = good(ENHANCED_STATEFULSET, "web", "ns")
    changed = _apply(
        good(ENHANCED_STATEFULSET, "web", "ns"), {"replicas": 3, "reserveOrdinals": [1]}
    )
    assert ask(server, ENHANCED_STATEFULSET, "UPDATE", changed, old)["allowed"]
    for changes in ({"podManagementPolicy": "Parallel"}, {"serviceName": "other"}):
        moved = _apply(good(ENHANCED_STATEFULSET, "web", "ns"), changes)
        answer = ask(server, ENHANCED_STATEFULSET, "UPDATE", moved, old)
        assert not answer["allowed"], changes
        (cause,) = answer["status"]["details"]["causes"]
        assert cause["field"] == "spec" and "'reserveOrdinals'" in cause["message"], cause


def _pod(name: str, owner_uid: str | None, **metadata: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": "ns", **metadata}
    if owner_uid is not None:
        meta["ownerReferences"] = [
            {
                "apiVersion": CLONESET.api_version,
                "kind": "CloneSet",
                "name": "web",
                "uid": owner_uid,
                "controller": True,
            }
        ]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": {"containers": []}}


def test_pods_to_delete_must_be_this_sets_live_pods(tmp_path: Path) -> None:
    """Kruise's validateScaleStrategy: each pod newly named in podsToDelete exists, is not
    terminating and is controlled by this CloneSet; names already listed are not read again."""
    fake = FakeClient()
    for pod in (
        _pod("mine", "cs-uid"),
        _pod("other", "someone-else"),
        _pod("dying", "cs-uid", finalizers=["example.com/hold"]),
    ):
        fake.create(pod)
    fake.delete(Pod, "dying", "ns")
    manager = Manager(fake, metrics_bind_address="0")  # type: ignore[arg-type]
    server = webhook.server_for(manager, port=0, cert_dir=str(tmp_path))
    cloneset.setup_webhooks(manager)
    old = good(CLONESET, "web", "ns")
    old["metadata"]["uid"] = "cs-uid"
    old["spec"]["scaleStrategy"] = {"podsToDelete": ["gone-before"]}
    new = _apply(
        good(CLONESET, "web", "ns"),
        {"scaleStrategy.podsToDelete": ["gone-before", "mine", "other", "dying", "missing"]},
    )
    new["metadata"]["uid"] = "cs-uid"
    answer = ask(server, CLONESET, "UPDATE", new, old)
    assert not answer["allowed"]
    messages = sorted(c["message"] for c in answer["status"]["details"]["causes"])
    assert all(m.startswith('Invalid value: "') for m in messages), messages
    assert [m.split('"')[1] for m in messages] == ["dying", "missing", "other"], messages
    assert "already terminating" in messages[0] and "owner is not this CloneSet" in messages[2]
    new["spec"]["scaleStrategy"]["podsToDelete"] = ["gone-before", "mine"]
    assert ask(server, CLONESET, "UPDATE", new, old)["allowed"]
