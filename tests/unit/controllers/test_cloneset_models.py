"""controllers/cloneset/models.py is what codegen makes of crd.yaml today, and it reads a
CloneSet manifest (unknown fields kept)."""

from __future__ import annotations

from pathlib import Path

from codegen.cli import main
from controllers.cloneset.models import CloneSet

PACKAGE = Path(__file__).resolve().parents[3] / "controllers" / "cloneset"


def test_models_are_fresh():
    crd, models = PACKAGE / "crd.yaml", PACKAGE / "models.py"
    assert main([str(crd), "-o", str(models), "--check"]) == 0, (
        "regenerate: python -m codegen controllers/cloneset/crd.yaml "
        "-o controllers/cloneset/models.py"
    )


def test_model_round_trip():
    manifest = {
        "apiVersion": "apps.kube-runtime.io/v1alpha1",
        "kind": "CloneSet",
        "metadata": {"name": "web", "namespace": "ns"},
        "spec": {
            "replicas": 3,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": []}},
            "updateStrategy": {"type": "InPlaceIfPossible", "partition": "50%", "maxSurge": 1},
        },
    }
    cs = CloneSet.model_validate(manifest)
    assert cs.spec is not None and cs.spec.replicas == 3
    assert cs.model_dump(by_alias=True, exclude_none=True) == manifest
