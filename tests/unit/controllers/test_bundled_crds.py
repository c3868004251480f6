"""The bundled CRDs' manifests: deploy/crd holds the packages' crd.yaml files as they are,
deploy/k8s-1.20 takes out exactly their CEL rules, and the installer's per-version stripping
(:func:`kube_runtime.crds.for_server_version`)."""

from __future__ import annotations

import copy
import logging
from pathlib import Path
from typing import Any

import pytest
import yaml

from kube_runtime import crds

ROOT = Path(__file__).resolve().parents[3]
PACKAGES = {"cloneset": "cloneset-crd.yaml", "statefulset": "statefulset-crd.yaml"}


def _load(path: Path) -> dict[str, Any]:
    return next(d for d in yaml.safe_load_all(path.read_text()) if d)


def _rules(crd: dict[str, Any]) -> list[Any]:
    return [
        n["x-kubernetes-validations"]
        for n in crds.schema_nodes(crd)
        if "x-kubernetes-validations" in n
    ]


@pytest.mark.parametrize("package", sorted(PACKAGES))
def test_deploy_holds_the_package_crd(package: str) -> None:
    assert (ROOT / "deploy" / "crd" / PACKAGES[package]).read_text() == (
        ROOT / "controllers" / package / "crd.yaml"
    ).read_text(), f"cp controllers/{package}/crd.yaml deploy/crd/{PACKAGES[package]}"


def _remove(doc: Any, pointer: str) -> None:
    *parents, last = pointer.lstrip("/").split("/")
    for key in parents:
        doc = doc[int(key)] if isinstance(doc, list) else doc[key]
    del doc[last]


@pytest.mark.parametrize("package", sorted(PACKAGES))
def test_the_1_20_overlay_takes_out_every_cel_rule_and_nothing_else(package: str) -> None:
    crd = _load(ROOT / "deploy" / "crd" / PACKAGES[package])
    patch_file = ROOT / "deploy" / "k8s-1.20" / PACKAGES[package].replace(".yaml", "-no-cel.yaml")
    assert patch_file.name in (ROOT / "deploy" / "k8s-1.20" / "kustomization.yaml").read_text()
    patched = copy.deepcopy(crd)
    for op in yaml.safe_load(patch_file.read_text()):
        assert op["op"] == "remove"
        _remove(patched, op["path"])
    assert _rules(crd), "the bundled CRD carries CEL rules"
    assert patched == crds.for_server_version(crd, (1, 20))[0]
    assert _rules(patched) == []


def _crd(rule: dict[str, Any]) -> dict[str, Any]:
    item = {"type": "object", "x-kubernetes-validations": [dict(rule)]}
    return {
        "spec": {
            "versions": [
                {
                    "name": "v1",
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "properties": {"spec": {"type": "array", "items": item}},
                        }
                    },
                }
            ]
        }
    }


RULE = {
    "rule": "self.a == oldSelf.a",
    "message": "a is immutable",
    "messageExpression": "'a'",
    "reason": "FieldValueForbidden",
    "fieldPath": ".a",
    "optionalOldSelf": True,
}


@pytest.mark.parametrize(
    ("version", "kept"),
    [
        ((1, 20), None),
        ((1, 24), None),
        ((1, 25), {"rule", "message"}),
        ((1, 27), {"rule", "message", "messageExpression"}),
        ((1, 29), {"rule", "message", "messageExpression", "reason", "fieldPath"}),
        ((1, 31), set(RULE)),
    ],
)
def test_for_server_version_keeps_what_the_release_knows(
    version: tuple[int, int], kept: set[str] | None
) -> None:
    crd = _crd(RULE)
    before = copy.deepcopy(crd)
    out, removed = crds.for_server_version(crd, version)
    assert crd == before, "the input is not changed"
    rules = _rules(out)
    if kept is None:
        assert rules == [] and removed == 1
    else:
        assert set(rules[0][0]) == kept
        assert removed == len(RULE) - len(kept)
        assert (out is crd) == (removed == 0)


class _Server:
    """Just enough of a client for :func:`crds.install_crd`: ``/version``, create, get."""

    def __init__(self, minor: str) -> None:
        self.minor = minor
        self.created: list[dict[str, Any]] = []

    def get_path(self, path: str) -> dict[str, str]:
        assert path == "/version"
        return {"major": "1", "minor": self.minor}

    def create(self, obj: dict[str, Any]) -> dict[str, Any]:
        self.created.append(obj)
        return obj

    def get(self, kind: Any, name: str) -> dict[str, Any]:
        return {"status": {"conditions": [{"type": "Established", "status": "True"}]}}


@pytest.mark.parametrize(("minor", "stripped"), [("20+", True), ("31", False)])
def test_install_crd_strips_rules_for_an_old_server_and_says_so(
    minor: str, stripped: bool, caplog: pytest.LogCaptureFixture
) -> None:
    manifest = _load(ROOT / "controllers" / "cloneset" / "crd.yaml")
    server = _Server(minor)
    with caplog.at_level(logging.INFO, logger="kube_runtime.crds"):
        crds.install_crd(server, manifest)  # type: ignore[arg-type]
    (sent,) = server.created
    said = [r.getMessage() for r in caplog.records if "CEL validation rule" in r.getMessage()]
    if stripped:
        assert _rules(sent) == [] and _rules(manifest)
        assert len(said) == 1 and "Kubernetes 1.20" in said[0], said
    else:
        assert sent is manifest and said == []
