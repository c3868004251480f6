"""Permissions as code: rules, normalisation, rendering, the watch check, the CLI."""

from __future__ import annotations

import io
from contextlib import redirect_stdout
from pathlib import Path
from typing import Any

import pytest
import yaml

from kube_runtime import kinds, rbac
from kube_runtime.builder import Builder
from kube_runtime.cli import main
from kube_runtime.client.fake import FakeClient
from kube_runtime.manager import Manager

ROOT = Path(__file__).resolve().parents[3]


def test_rule_flattens_verb_groups_and_matches_like_the_authorizer() -> None:
    r = rbac.rule("apps", "statefulsets", rbac.CACHE, "patch")
    assert r == rbac.Rule(("apps",), ("statefulsets",), ("list", "watch", "patch"))
    assert r.allows("apps", "statefulsets", "patch")
    assert not r.allows("apps", "statefulsets", "get")
    assert not r.allows("", "statefulsets", "list")
    assert not r.allows("apps", "statefulsets/status", "list")  # subresources are separate
    named = rbac.rule("coordination.k8s.io", "leases", "update", names=["mine"])
    assert named.allows("coordination.k8s.io", "leases", "update", "mine")
    assert not named.allows("coordination.k8s.io", "leases", "update", "theirs")
    assert rbac.Rule(("*",), ("*",), ("*",)).allows("x", "y", "z")
    with pytest.raises(ValueError, match="no verbs"):
        rbac.rule("", "pods")


def test_normalize_merges_verbs_then_resources_sharing_them() -> None:
    rules = [
        rbac.rule("", "pods", "list"),
        rbac.rule("", "pods", "watch", "list"),
        rbac.rule("", "configmaps", "watch", "list"),
        rbac.rule("apps", "statefulsets", "get"),
    ]
    assert rbac.normalize(rules) == [
        rbac.Rule(("",), ("configmaps", "pods"), ("list", "watch")),
        rbac.Rule(("apps",), ("statefulsets",), ("get",)),
    ]
    assert rbac.normalize(reversed(rules)) == rbac.normalize(rules)  # order-independent


def test_render_grants_the_rules_events_and_the_lease_to_the_service_account() -> None:
    objects = rbac.render(
        [rbac.rule("", "pods", rbac.CACHE)], name="m", namespace="sys", service_account="sa"
    )
    assert [o["kind"] for o in objects] == [
        "ClusterRole",
        "ClusterRoleBinding",
        "Role",
        "RoleBinding",
    ]
    cluster_role, binding, role, role_binding = objects
    assert {"apiGroups": [""], "resources": ["events"], "verbs": ["create", "patch"]} in (
        cluster_role["rules"]
    )
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": "sa", "namespace": "sys"}]
    assert binding["roleRef"]["name"] == "m"
    assert role["metadata"] == {"name": "m-leader-election", "namespace": "sys"}
    assert role["rules"] == [
        {
            "apiGroups": ["coordination.k8s.io"],
            "resources": ["leases"],
            "verbs": ["create", "get", "update", "watch"],
        }
    ]
    assert role_binding["roleRef"] == {
        "apiGroup": "rbac.authorization.k8s.io",
        "kind": "Role",
        "name": "m-leader-election",
    }
    plain = rbac.render([], name="m", namespace="sys", service_account="sa", leader_election=False)
    assert [o["kind"] for o in plain] == ["ClusterRole", "ClusterRoleBinding"]


def _manager() -> Manager:
    return Manager(FakeClient(), metrics_bind_address="0", health_probe_bind_address="0")


def test_a_decorated_setup_fails_on_a_watch_it_did_not_declare() -> None:
    @rbac.requires(rbac.rule("apps", "statefulsets", rbac.CACHE))
    def setup(manager: Manager) -> Any:
        return (
            Builder(manager)
            .for_(kinds.StatefulSet)
            .watches(kinds.Pod, lambda o: [])
            .complete(lambda r: None)
        )

    with pytest.raises(rbac.MissingPermissionError, match=r"list, watch on pods\.core") as err:
        setup(_manager())
    assert "add rbac.rule('', 'pods', 'list', 'watch')" in str(err.value)
    assert rbac.declared() is None  # the declaration is only active while setup runs

    @rbac.requires(rbac.rule("apps", "statefulsets", rbac.CACHE), rbac.rule("", "pods", rbac.CACHE))
    def complete_setup(manager: Manager) -> Any:
        return (
            Builder(manager)
            .for_(kinds.StatefulSet)
            .watches(kinds.Pod, lambda o: [])
            .complete(lambda r: None)
        )

    assert complete_setup(_manager()) is not None
    assert rbac.rules_of(type("Entry", (), {"setup": staticmethod(complete_setup)})) == (
        rbac.rule("apps", "statefulsets", rbac.CACHE),
        rbac.rule("", "pods", rbac.CACHE),
    )


def test_owns_needs_create_on_the_owned_kind_and_the_owners_finalizers() -> None:
    # set_controller_reference sets blockOwnerDeletion: true, which kube-apiserver's
    # OwnerReferencesPermissionEnforcement allows only to who may update the owner's finalizers.
    @rbac.requires(rbac.rule("apps", "statefulsets", rbac.CACHE), rbac.rule("", "pods", rbac.CACHE))
    def reads_only(manager: Manager) -> Any:
        return Builder(manager).for_(kinds.StatefulSet).owns(kinds.Pod).complete(lambda r: None)

    with pytest.raises(rbac.MissingPermissionError) as err:
        reads_only(_manager())
    message = str(err.value)
    assert "create on pods.core" in message
    assert "update on statefulsets/finalizers.apps" in message
    assert "OwnerReferencesPermissionEnforcement" in message
    assert (
        "add rbac.rule('', 'pods', 'create'), rbac.rule('apps', 'statefulsets/finalizers', "
        "'update')" in message
    )

    @rbac.requires(
        rbac.rule("apps", "statefulsets", rbac.CACHE),
        rbac.rule("apps", "statefulsets/finalizers", "update"),
        rbac.rule("", "pods", rbac.CACHE, "create"),
    )
    def enough(manager: Manager) -> Any:
        return Builder(manager).for_(kinds.StatefulSet).owns(kinds.Pod).complete(lambda r: None)

    assert enough(_manager()) is not None


def test_a_controller_owning_nothing_needs_no_finalizers_grant() -> None:
    @rbac.requires(rbac.rule("", "configmaps", rbac.CACHE))
    def setup(manager: Manager) -> Any:
        return Builder(manager).for_(kinds.ConfigMap).complete(lambda r: None)

    assert setup(_manager()) is not None


def test_rules_of_refuses_what_declares_nothing() -> None:
    @rbac.requires(rbac.rule("", "configmaps", rbac.CACHE))
    def setup(manager: Manager) -> None:
        pass

    assert rbac.rules_of(setup) == (rbac.rule("", "configmaps", rbac.CACHE),)  # the function
    module_like = type("Entry", (), {"RBAC_RULES": [rbac.rule("", "pods", "get")]})
    assert rbac.rules_of(module_like) == (rbac.rule("", "pods", "get"),)

    def plain(manager: Manager) -> None:
        pass

    with pytest.raises(rbac.NoRulesDeclared, match=r"plain \(function\) declares no RBAC rules: "
                       r"decorate it with @kube_runtime\.rbac\.requires"):  # fmt: skip
        rbac.rules_of(plain)
    with pytest.raises(rbac.NoRulesDeclared, match="decorate its setup"):
        rbac.rules_of(type("Entry", (), {"setup": staticmethod(plain)}))
    with pytest.raises(rbac.NoRulesDeclared, match=r"not a kube_runtime\.rbac\.Rule"):
        rbac.rules_of(type("Entry", (), {"RBAC_RULES": [("", "pods", "get")]}))


def test_undecorated_setups_are_not_checked() -> None:
    builder = Builder(_manager()).for_(kinds.StatefulSet).owns(kinds.Pod)
    assert builder.complete(lambda r: None) is not None


def _rbac_cli(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    with redirect_stdout(out):
        code = main(["rbac", *argv])
    return code, out.getvalue()


def test_the_bundled_controllers_declare_rules_for_everything_they_watch() -> None:
    for name in ("statefulset", "cloneset"):
        code, text = _rbac_cli(name)
        assert code == 0
        role = next(o for o in yaml.safe_load_all(text) if o["kind"] == "ClusterRole")
        granted = {
            (g, r, v)
            for rule in role["rules"]
            for g in rule["apiGroups"]
            for r in rule["resources"]
            for v in rule["verbs"]
        }
        assert ("", "pods", "list") in granted and ("", "pods", "watch") in granted


def test_deploy_rbac_yaml_is_what_the_cli_prints_now() -> None:
    code, text = _rbac_cli("statefulset", "cloneset")
    assert code == 0
    on_disk = (ROOT / "deploy" / "rbac" / "rbac.yaml").read_text()
    assert on_disk == text, (
        "deploy/rbac.yaml is stale: run `kube-runtime rbac statefulset cloneset > deploy/rbac/rbac.yaml`"
    )


def test_the_cli_names_a_controller_without_declarations(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["rbac", "no-such-controller"]) == 2
    assert "no controller named 'no-such-controller'" in capsys.readouterr().err


def test_the_readme_example_declares_what_it_says() -> None:
    readme = (ROOT / "README.md").read_text()
    section = readme[readme.index("**Permissions (RBAC).**") :]
    code = section[
        section.index("```python") + len("```python") : section.index(
            "```\n", section.index("```python")
        )
    ]
    scope: dict[str, Any] = {}
    exec(compile(code, "README.md", "exec"), scope)
    declared = rbac.rules_of(scope["setup"])
    assert rbac.allows(declared, "example.com", "widgets", "watch")
    assert rbac.allows(declared, "example.com", "widgets/finalizers", "update")
    assert rbac.allows(declared, "", "configmaps", "delete")
    assert not rbac.allows(declared, "example.com", "widgets", "delete")
    # The example passes its own setup check (owns() needs widgets/finalizers and create).
    from kube_runtime.client.mapping import Resource

    fake = FakeClient()
    fake.mapper.add(Resource("example.com", "v1", "Widget", "widgets", True))
    manager = Manager(fake, metrics_bind_address="0", health_probe_bind_address="0")
    scope["setup"](manager)


def test_rbac_shards_prints_the_unsharded_objects_and_the_sharding_roles() -> None:
    code, text = _rbac_cli("--shards", "statefulset", "cloneset")
    assert code == 0
    objects = [o for o in yaml.safe_load_all(text) if o]
    _, plain = _rbac_cli("statefulset", "cloneset")
    assert objects[:4] == [o for o in yaml.safe_load_all(plain) if o]
    extra = {(o["kind"], o["metadata"]["name"]) for o in objects[4:]}
    assert extra == {
        ("ClusterRole", "kube-runtime-manager-sharding"),
        ("ClusterRoleBinding", "kube-runtime-manager-sharding"),
        ("Role", "kube-runtime-manager-sharding"),
        ("RoleBinding", "kube-runtime-manager-sharding"),
    }
    assert text.startswith("# Generated by `kube-runtime rbac --shards statefulset cloneset`")


def test_deploy_sharding_rbac_yaml_is_what_the_cli_prints_now() -> None:
    code, text = _rbac_cli("--only-sharding", "statefulset", "cloneset")
    assert code == 0
    on_disk = (ROOT / "deploy" / "sharding" / "rbac.yaml").read_text()
    assert on_disk == text, (
        "deploy/sharding/rbac.yaml is stale: run `kube-runtime rbac --only-sharding "
        "statefulset cloneset > deploy/sharding/rbac.yaml`"
    )


def test_refused_actions_names_each_call_the_rules_do_not_grant() -> None:
    from kube_runtime.controllerutil import set_controller_reference
    from kube_runtime.finalizers import ensure_finalizer

    fake = FakeClient()
    owner = fake.create(
        {
            "apiVersion": "apps/v1",
            "kind": "StatefulSet",
            "metadata": {"name": "web", "namespace": "ns"},
        }
    )
    fake.clear_actions()
    cm: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "c", "namespace": "ns"},
    }
    set_controller_reference(owner, cm)
    fake.create(cm)
    fake.get(kinds.ConfigMap, "c", "ns")
    ensure_finalizer(fake, owner, "example.com/cleanup")
    rules = [rbac.rule("", "configmaps", "create")]
    refused = rbac.refused_actions(rules, fake.actions, fake.mapper)
    assert refused == [
        "update on statefulsets/finalizers.apps (blockOwnerDeletion on configmaps ns/c owned by "
        "StatefulSet): add rbac.rule('apps', 'statefulsets/finalizers', 'update')",
        "get on configmaps.core (get configmaps ns/c): add rbac.rule('', 'configmaps', 'get')",
        "patch on statefulsets.apps (patch statefulsets ns/web): add rbac.rule('apps', "
        "'statefulsets', 'patch')",
    ]
    granted = [
        *rules,
        rbac.rule("", "configmaps", "get"),
        rbac.rule("apps", "statefulsets", "patch"),
        rbac.rule("apps", "statefulsets/finalizers", "update"),
    ]
    assert rbac.refused_actions(granted, fake.actions, fake.mapper) == []
