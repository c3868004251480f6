"""controllers/statefulset/models.py is what codegen makes of crd.yaml today, the deploy/ copy is
the same CRD, and the model reads a Kruise Advanced StatefulSet manifest ported by changing its
apiVersion (unknown fields kept)."""

from __future__ import annotations

from pathlib import Path

from codegen.cli import main
from controllers.statefulset.models import StatefulSet

ROOT = Path(__file__).resolve().parents[3]
PACKAGE = ROOT / "controllers" / "statefulset"


def test_models_are_fresh():
    crd, models = PACKAGE / "crd.yaml", PACKAGE / "models.py"
    assert main([str(crd), "-o", str(models), "--check"]) == 0, (
        "regenerate: python -m codegen controllers/statefulset/crd.yaml "
        "-o controllers/statefulset/models.py"
    )


def test_deploy_manifest_is_the_package_crd():
    assert (ROOT / "deploy" / "crd" / "statefulset-crd.yaml").read_text() == (
        PACKAGE / "crd.yaml"
    ).read_text()


def test_kruise_manifest_round_trip():
    manifest = {
        "apiVersion": "apps.kube-runtime.io/v1beta1",
        "kind": "StatefulSet",
        "metadata": {"name": "web", "namespace": "ns"},
        "spec": {
            "replicas": 5,
            "serviceName": "web",
            "reserveOrdinals": [1, "3-4"],
            "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": []}},
            "podManagementPolicy": "Parallel",
            "updateStrategy": {
                "type": "RollingUpdate",
                "rollingUpdate": {
                    "partition": 1,
                    "maxUnavailable": "20%",
                    "paused": False,
                    "podUpdatePolicy": "InPlaceIfPossible",
                    "inPlaceUpdateStrategy": {"gracePeriodSeconds": 5},
                    "minReadySeconds": 3,
                    "unorderedUpdate": {
                        "priorityStrategy": {"orderPriority": [{"orderedKey": "rank"}]}
                    },
                },
            },
            "persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Delete"},
        },
    }
    sts = StatefulSet.model_validate(manifest)
    assert sts.spec is not None and sts.spec.replicas == 5
    rolling = sts.spec.update_strategy.rolling_update  # type: ignore[union-attr]
    assert rolling is not None and rolling.max_unavailable == "20%"
    assert sts.model_dump(by_alias=True, exclude_none=True) == manifest
