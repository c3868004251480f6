"""What the FakeClient's docstring lists as not modelled, pinned so the list stays true: a
registered custom kind's objects are neither validated, pruned nor defaulted against a CRD
schema (kube-apiserver does all three), and no write sets ``managedFields``."""

from __future__ import annotations

from typing import Any

from kube_runtime.client.fake import FakeClient
from kube_runtime.kinds import as_kind

SITE = "example.com/v1/Site"


def site(**spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "example.com/v1",
        "kind": "Site",
        "metadata": {"name": "a", "namespace": "ns"},
        "spec": spec,
    }


def test_custom_objects_are_not_checked_against_a_schema() -> None:
    fake = FakeClient().register(SITE)
    # kube-apiserver with a CRD schema would refuse the string replicas (Invalid), prune
    # "unknown" and default what the schema defaults; the fake stores the object as sent.
    created = fake.create(site(replicas="three", unknown={"x": 1}))
    assert created["spec"] == {"replicas": "three", "unknown": {"x": 1}}
    patched = fake.patch(as_kind(SITE), "a", {"spec": {"replicas": -1}}, namespace="ns")
    assert patched["spec"]["replicas"] == -1


def test_no_write_sets_managed_fields() -> None:
    fake = FakeClient().register(SITE)
    created = fake.create(site(replicas=1), field_manager="operator")
    updated = fake.update({**created, "spec": {"replicas": 2}}, field_manager="operator")
    applied = fake.apply(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "c", "namespace": "ns"},
            "data": {"k": "v"},
        },
        field_manager="operator",
    )
    for obj in (created, updated, applied):
        assert "managedFields" not in obj["metadata"]
