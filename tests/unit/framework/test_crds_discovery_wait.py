"""``install_crd`` returns once discovery serves the CRD, not merely once it is Established:
kube-apiserver publishes a new group's discovery a moment later, and a REST mapping made in
between missed the kind (``NoKindMatchError`` right after ``install_crd`` on 1.20)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kube_runtime import clock, crds
from kube_runtime.client.errors import NotFound

CRD: dict[str, Any] = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "widgets.example.com"},
    "spec": {
        "group": "example.com",
        "names": {"kind": "Widget", "plural": "widgets"},
        "scope": "Namespaced",
        "versions": [
            {"name": "v1", "served": True, "storage": True},
            {"name": "v1alpha1", "served": False, "storage": False},
        ],
    },
}


class _LateDiscovery:
    """Established at once; discovery 404s ``misses`` times, then lists ``widgets``."""

    def __init__(self, misses: int) -> None:
        self.misses = misses
        self.asked: list[str] = []

    def get_path(self, path: str) -> dict[str, Any]:
        if path == "/version":
            return {"major": "1", "minor": "20"}
        self.asked.append(path)
        if len(self.asked) <= self.misses:
            raise NotFound({"code": 404, "reason": "NotFound", "message": "not found"})
        return {"resources": [{"name": "widgets", "kind": "Widget"}]}

    def create(self, obj: dict[str, Any]) -> dict[str, Any]:
        return obj

    def get(self, kind: Any, name: str) -> dict[str, Any]:
        return {"status": {"conditions": [{"type": "Established", "status": "True"}]}}


def test_install_crd_waits_for_discovery_of_each_served_version() -> None:
    server = _LateDiscovery(misses=2)
    assert crds.install_crd(server, CRD) == "widgets.example.com"  # type: ignore[arg-type]
    # asked until listed; the version that is not served is not waited for
    assert server.asked == ["/apis/example.com/v1"] * 3


def test_install_crd_times_out_when_discovery_never_serves_it() -> None:
    server = _LateDiscovery(misses=10**9)
    with pytest.raises(TimeoutError, match="not in discovery"):
        crds.install_crd(server, CRD, timeout=0.2)  # type: ignore[arg-type]


def test_install_crd_waits_on_the_current_clock() -> None:
    """Its polling and timeout are the current clock's: on a simulated clock a 30 s wait is
    30 virtual seconds (a real ``time.sleep`` would hold virtual time still)."""
    server = _LateDiscovery(misses=10**9)
    sim = clock.SimClock(stall_timeout=5)
    with sim.activate(), pytest.raises(TimeoutError, match="after 30"):
        crds.install_crd(server, CRD, timeout=30)  # type: ignore[arg-type]
    assert 30 <= sim.monotonic() < 31
    assert len(server.asked) >= 30 / 0.05


def test_a_manifest_file_is_parsed_once_and_each_caller_gets_its_own_object(
    tmp_path: Path,
) -> None:
    path = tmp_path / "crd.yaml"
    path.write_text(
        "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n"
        "metadata: {name: widgets.example.com}\nspec: {group: example.com}\n"
    )
    first = crds._manifest_crd(path)
    first["spec"]["group"] = "changed.example.com"  # a caller's edit stays its own
    second = crds._manifest_crd(path)
    assert second["spec"]["group"] == "example.com" and second is not first
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(crds, "yaml", None)  # a parse now would fail
        assert crds._manifest_crd(path)["metadata"]["name"] == "widgets.example.com"
    path.write_text(path.read_text().replace("example.com}", "example.org}") + "\n")
    assert crds._manifest_crd(path)["spec"]["group"] == "example.org"  # changed: read again
