"""What sharding adds to the RBAC rules: the ring's kinds found from the controllers' setup,
the ``-sharding`` roles holding only what the others lack, and the sharder's 403 report."""

from __future__ import annotations

import logging

import pytest

import controllers.cloneset as cloneset
import controllers.statefulset as statefulset
from kube_runtime import rbac
from kube_runtime.client.errors import error_from_status
from kube_runtime.sharding import Sharder
from kube_runtime.sharding import _permissions as permissions


def test_the_ring_holds_each_controllers_for_and_owns_kinds() -> None:
    assert set(permissions.ring_resources([statefulset])) == {
        ("apps", "statefulsets"),
        ("apps.kube-runtime.io", "statefulsets"),  # the enhanced kind: its CRD is served
        ("", "pods"),
        ("apps", "controllerrevisions"),
    }  # not persistentvolumeclaims: the StatefulSet controller only `watches` them
    assert set(permissions.ring_resources([cloneset])) == {
        ("apps.kube-runtime.io", "clonesets"),
        ("", "pods"),
        ("", "persistentvolumeclaims"),
    }


def test_sharding_rules_patch_the_ring_and_use_leases() -> None:
    found = permissions.sharding_rules([("apps", "statefulsets"), ("", "pods")])
    assert found.cluster == (
        rbac.rule("apps", "statefulsets", "patch"),
        rbac.rule("", "pods", "patch"),
    )
    (leases,) = found.namespace
    assert leases.resources == ("leases",)
    assert set(leases.verbs) == {"get", "list", "watch", "create", "update", "patch", "delete"}


def test_subtract_leaves_what_is_not_granted_verb_by_verb() -> None:
    granted = [rbac.rule("", "pods", "list", "patch"), rbac.Rule(("x",), ("*",), ("get",))]
    wanted = [rbac.rule("", ["pods", "secrets"], "patch", "get"), rbac.rule("x", "y", "get")]
    assert rbac.subtract(wanted, granted) == [
        rbac.Rule(("",), ("pods",), ("get",)),
        rbac.Rule(("",), ("secrets",), ("get", "patch")),
    ]


def _render(**kw: object) -> list[dict[str, object]]:
    return rbac.render(
        [rbac.rule("", "pods", rbac.CACHE, "patch")],
        name="m",
        namespace="sys",
        service_account="sa",
        **kw,  # type: ignore[arg-type]
    )


def test_render_adds_sharding_roles_with_only_the_missing_grants() -> None:
    found = permissions.sharding_rules([("", "pods"), ("apps", "statefulsets")])
    objects = _render(sharding=(found.cluster, found.namespace))
    assert [(o["kind"], o["metadata"]["name"]) for o in objects] == [
        ("ClusterRole", "m"),
        ("ClusterRoleBinding", "m"),
        ("Role", "m-leader-election"),
        ("RoleBinding", "m-leader-election"),
        ("ClusterRole", "m-sharding"),
        ("ClusterRoleBinding", "m-sharding"),
        ("Role", "m-sharding"),
        ("RoleBinding", "m-sharding"),
    ]
    assert objects[:4] == _render()  # the unsharded objects, unchanged
    assert objects[4]["rules"] == [  # pods are patched already
        {"apiGroups": ["apps"], "resources": ["statefulsets"], "verbs": ["patch"]}
    ]
    assert objects[6]["metadata"] == {"name": "m-sharding", "namespace": "sys"}
    assert objects[6]["rules"] == [  # get, create, update, watch: the leader-election Role's
        {
            "apiGroups": ["coordination.k8s.io"],
            "resources": ["leases"],
            "verbs": ["delete", "list", "patch"],
        }
    ]
    only = _render(sharding=(found.cluster, found.namespace), only_sharding=True)
    assert only == objects[4:]
    without_election = _render(
        sharding=(found.cluster, found.namespace), leader_election=False, only_sharding=True
    )
    assert without_election[2]["rules"][0]["verbs"] == [
        "create",
        "delete",
        "get",
        "list",
        "patch",
        "update",
        "watch",
    ]
    covered = permissions.sharding_rules([("", "pods")])
    assert _render(sharding=((covered.cluster), ()))[4:] == []  # nothing to add: no objects


def _forbidden(verb: str, resource: str, name: str) -> Exception:
    return error_from_status(
        {
            "code": 403,
            "reason": "Forbidden",
            "message": f'{resource}.apps "{name}" is forbidden: User "u" cannot {verb} '
            f'resource "{resource}" in API group "apps" in the namespace "ns"',
        }
    )


def test_the_sharder_reports_a_refusal_once_per_verb_and_resource(
    caplog: pytest.LogCaptureFixture,
) -> None:
    sharder = Sharder(
        object(), ring="r", kinds=list, lease_namespace="ns", namespace=None, identity="a"
    )
    with caplog.at_level(logging.DEBUG, logger="kube_runtime.sharding._sharder"):
        sharder.report_refusal("StatefulSet ns/s0", _forbidden("patch", "statefulsets", "s0"))
        sharder.report_refusal("StatefulSet ns/s1", _forbidden("patch", "statefulsets", "s1"))
        sharder.report_refusal("StatefulSet ns/s0", _forbidden("patch", "statefulsets", "s0"))
        sharder.report_refusal("StatefulSet ns/s2", _forbidden("update", "statefulsets", "s2"))
    errors = [r.getMessage() for r in caplog.records if r.levelno == logging.ERROR]
    assert len(errors) == 2
    assert 'cannot patch resource "statefulsets"' in errors[0]
    assert "kube-runtime rbac --shards" in errors[0]
    assert 'cannot update resource "statefulsets"' in errors[1]
    assert sum(r.levelno == logging.DEBUG for r in caplog.records) == 2
