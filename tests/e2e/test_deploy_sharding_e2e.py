"""deploy/sharding: the overlay renders with both kubectls into deploy/ plus what sharding
adds (the roles of ``kube-runtime rbac --shards``, proven in test_rbac_e2e.py) and a Deployment
whose replicas run as shards named after their pods."""

from __future__ import annotations

import io
from contextlib import redirect_stdout
from typing import Any

import pytest
import yaml

from kube_runtime.cli import main
from tests.e2e.test_deploy_e2e import KUBECTLS, _render


def _key(obj: dict[str, Any]) -> tuple[str, str]:
    return obj["kind"], obj["metadata"]["name"]


def _rbac_shards() -> list[dict[str, Any]]:
    out = io.StringIO()
    with redirect_stdout(out):
        assert main(["rbac", "--shards", "statefulset", "cloneset"]) == 0
    return [o for o in yaml.safe_load_all(out.getvalue()) if o]


@pytest.mark.parametrize("which", sorted(KUBECTLS))
def test_the_sharding_overlay_is_deploy_with_shards_and_their_rbac(which: str) -> None:
    kubectl = KUBECTLS[which]
    if kubectl is None:
        pytest.skip(f"no {which} kubectl here (make kubectl)")
    base = {_key(o): o for o in _render(kubectl, "deploy")}
    sharded = {_key(o): o for o in _render(kubectl, "deploy/sharding")}
    rbac_kinds = ("ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding")
    expected_rbac = {_key(o): o for o in _rbac_shards()}
    assert {k: o for k, o in sharded.items() if k[0] in rbac_kinds} == expected_rbac
    unchanged = {k for k in base if k[0] not in rbac_kinds and k[0] != "Deployment"}
    assert {k: sharded[k] for k in unchanged} == {k: base[k] for k in unchanged}
    assert set(sharded) == set(base) | set(expected_rbac)

    (container,) = sharded[("Deployment", "kube-runtime-manager")]["spec"]["template"]["spec"][
        "containers"
    ]
    (before,) = base[("Deployment", "kube-runtime-manager")]["spec"]["template"]["spec"][
        "containers"
    ]
    assert "--leader-elect" in before["args"] and "--leader-elect" not in container["args"]
    assert container["args"] == [
        *("--shards=2" if a == "--leader-elect" else a for a in before["args"]),
        "--identity=$(POD_NAME)",
    ]
    assert container["env"] == [
        {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}
    ]
    replicas = sharded[("Deployment", "kube-runtime-manager")]["spec"]["replicas"]
    assert container["args"].count(f"--shards={replicas}") == 1  # N = the replicas
