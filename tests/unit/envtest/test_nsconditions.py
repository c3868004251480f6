"""The namespace deleter's status conditions (kube_runtime.envtest.server.nsconditions)."""

from __future__ import annotations

from kube_runtime.envtest.server.nsconditions import updated_conditions
from kube_runtime.envtest.server.resources import ResourceInfo

CONFIGMAPS = ResourceInfo("", ("v1",), "ConfigMap", "configmaps", "configmap", True)
DEPLOYMENTS = ResourceInfo("apps", ("v1",), "Deployment", "deployments", "deployment", True)


def _cm(name: str, *finalizers: str) -> dict:
    return {"metadata": {"name": name, "finalizers": list(finalizers)}}


def _by_type(conditions: list[dict]) -> dict[str, tuple[str, str, str]]:
    return {c["type"]: (c["status"], c["reason"], c["message"]) for c in conditions}


def test_remaining_content_and_finalizers_are_counted() -> None:
    content = [
        (CONFIGMAPS, _cm("a", "x.io/hold")),
        (CONFIGMAPS, _cm("b", "x.io/hold", "y.io/other")),
        (DEPLOYMENTS, _cm("d")),
    ]
    conditions = updated_conditions([], content, "T1")
    assert conditions is not None
    assert [c["type"] for c in conditions] == [
        "NamespaceDeletionDiscoveryFailure",
        "NamespaceDeletionGroupVersionParsingFailure",
        "NamespaceDeletionContentFailure",
        "NamespaceContentRemaining",
        "NamespaceFinalizersRemaining",
    ]
    found = _by_type(conditions)
    assert found["NamespaceDeletionDiscoveryFailure"][0] == "False"
    assert found["NamespaceContentRemaining"] == (
        "True",
        "SomeResourcesRemain",
        "Some resources are remaining: configmaps. has 2 resource instances, "
        "deployments.apps has 1 resource instances",
    )
    assert found["NamespaceFinalizersRemaining"] == (
        "True",
        "SomeFinalizersRemain",
        "Some content in the namespace has finalizers remaining: x.io/hold in 2 resource "
        "instances, y.io/other in 1 resource instances",
    )


def test_unchanged_pass_writes_nothing_and_transitions_keep_their_time() -> None:
    held = [(CONFIGMAPS, _cm("a", "x.io/hold"))]
    first = updated_conditions([{"type": "Other", "status": "True"}], held, "T1")
    assert first is not None and first[0] == {"type": "Other", "status": "True"}
    assert updated_conditions(first, held, "T2") is None
    done = updated_conditions(first, [], "T3")
    assert done is not None
    times = {c["type"]: c["lastTransitionTime"] for c in done if c["type"] != "Other"}
    assert times["NamespaceFinalizersRemaining"] == "T3"  # True -> False
    assert times["NamespaceDeletionDiscoveryFailure"] == "T1"  # stayed False
    assert _by_type(done[1:])["NamespaceContentRemaining"] == (
        "False",
        "ContentRemoved",
        "All content successfully removed",
    )
