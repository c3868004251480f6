"""The ``pod-template-hash`` equals kube-controller-manager 1.20's for the same template.

``deployment_hash_fixture.json`` was produced by upstream itself: ``scripts/gotypes``
(``make_fixture.py`` driving the Go program ``gotypes hash``, built inside the Kubernetes
1.20.2 source tree) decodes each template with the real ``k8s.io/api`` types, passes it
twice through protobuf as the API server's storage and the controller's informer do,
deep-copies it and records ``controller.ComputeHash(template, collisionCount)``. The cases
cover quantities in every parse path (cached string or not, ``int64Amount`` and ``inf.Dec``
forms, rounding and capping), probes, security contexts, env sources, volumes, affinity,
tolerations, int-or-string ports, metadata maps, init and ephemeral containers, empty
collections (nil once stored) and managed fields.
"""

from __future__ import annotations

import json
import struct
from pathlib import Path
from typing import Any

import pytest

from controllers.deployment._spew import QuantityError, canonical_quantity, dump_template
from controllers.deployment.hashing import compute_hash, fnv32a
from kube_runtime.workloads.revision import go_json, safe_encode

FIXTURE: list[dict[str, Any]] = json.loads(
    (Path(__file__).parent / "deployment_hash_fixture.json").read_text(encoding="utf-8")
)


def _json_hash(template: dict[str, Any], collision_count: int | None) -> str:
    """The hash before the spew dump: FNV-1a of the template's Go JSON encoding."""
    h = fnv32a(go_json(template))
    if collision_count is not None:
        h = fnv32a(struct.pack("<I", collision_count) + b"\0" * 4, h)
    return safe_encode(str(h))


@pytest.mark.parametrize("case", FIXTURE, ids=[case["name"] for case in FIXTURE])
def test_hash_equals_upstream_compute_hash(case: dict[str, Any]) -> None:
    assert compute_hash(case["template"], case["collisionCount"]) == case["hash"]
    # the JSON stand-in this replaced names the same templates otherwise
    assert _json_hash(case["template"], case["collisionCount"]) != case["hash"]


def test_fixture_is_broad() -> None:
    names = {case["name"] for case in FIXTURE}
    assert len(FIXTURE) >= 30 and len(names) == len(FIXTURE)
    counts = {case["collisionCount"] for case in FIXTURE}
    assert {None, 0, 1, 2**31 - 1} <= counts


def test_dump_prints_go_shapes() -> None:
    text = dump_template(
        {"spec": {"containers": [{"name": "c", "resources": {"limits": {"cpu": "0.5"}}}]}}
    )
    assert text.startswith("(v1.PodTemplateSpec){ObjectMeta:(v1.ObjectMeta){Name:(string) ")
    assert "Labels:(map[string]string)<nil>" in text
    assert "DeletionTimestamp:(*v1.Time)<nil>" in text
    assert (
        "Limits:(v1.ResourceList)map[cpu:{i:(resource.int64Amount){value:(int64)500 "
        "scale:(resource.Scale)-3} d:(resource.infDecAmount){Dec:(*inf.Dec)<nil>} "
        "s:(string)500m Format:(resource.Format)DecimalSI}]"
    ) in text


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("0.5", "500m"),
        ("1e3", "1e3"),
        ("1.5Gi", "1536Mi"),
        ("0.5Ki", "512"),
        ("1.0000000001", "1000000001n"),
        ("16Ei", "9223372036854775807"),  # capped at the int64 maximum
        ("00100", "00100"),  # ParseQuantity keeps the text it was given
    ],
)
def test_canonical_quantity(text: str, canonical: str) -> None:
    assert canonical_quantity(text) == canonical


@pytest.mark.parametrize("text", ["", "4e", "1K", "abc", "1.2.3"])
def test_invalid_quantity(text: str) -> None:
    with pytest.raises(QuantityError):
        canonical_quantity(text)


def test_unparsable_quantity_still_hashes() -> None:
    """A quantity upstream rejects (never stored by the API server) falls back to the JSON
    hash rather than failing the sync."""
    template = {"spec": {"containers": [{"name": "c", "resources": {"limits": {"cpu": "1K"}}}]}}
    assert compute_hash(template) == _json_hash(template, None)
