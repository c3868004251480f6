"""The sample resource of ``kube-runtime crd generate``'s tests: ``Cache`` uses every mapping
the generator knows (tests/unit/codegen/test_crdgen.py generates its CRD; the e2e tests in
tests/e2e/test_crdgen_e2e.py install it on both backends)."""

from __future__ import annotations

import copy
from typing import Annotated, Any, ClassVar, Literal

from pydantic import Field

from kube_runtime.client import Resource
from kube_runtime.models import (
    Condition,
    DateTime,
    EmbeddedResource,
    KubeModel,
    ObjectMeta,
    crd,
)

GROUP = "crdgen.kube-runtime.test"


class Port(KubeModel):
    """A named port."""

    name: str = Field(pattern="^[a-z][a-z0-9-]*$", max_length=15)
    port: int = Field(ge=1, lt=65536)
    protocol: Literal["TCP", "UDP"] = "TCP"


@crd.rule("self.min <= self.max", message="min must not exceed max")
class Eviction(KubeModel):
    """When entries are evicted."""

    min: int = Field(0, ge=0)
    max: int = Field(100, ge=0)


class CacheSpec(KubeModel):
    """The desired state of a Cache."""

    replicas: int = Field(1, ge=0, le=10, description="Number of cache servers.")
    engine: Literal["redis", "memcached"] = "redis"
    size: int | str = Field(description="Memory per server: bytes or a quantity like 1Gi.")
    ports: Annotated[list[Port], crd.ListType("map", keys=("name",))] | None = None
    eviction: Eviction | None = Field(None, description="Eviction thresholds.")
    tags: set[str] | None = None
    labels: dict[str, str] | None = Field(None, max_length=8)
    config: dict[str, Any] | None = Field(None, description="Engine settings, kept as given.")
    template: EmbeddedResource | None = None
    ratio: float = Field(0.5, gt=0, le=1, multiple_of=0.05)
    shards: Annotated[int, crd.Validation("self % 2 == 1", message="an odd number")] = 1
    owner: Annotated[str, crd.Format("email")] | None = None
    paused_until: DateTime | None = Field(
        None, validation_alias="pausedUntil", serialization_alias="pausedUntil"
    )
    note: str | None = Field(None, min_length=1)
    comment: str | None = Field(
        description="Nullable: may be sent as null.", validation_alias="comment"
    )


class CacheStatus(KubeModel):
    """The observed state of a Cache."""

    replicas: int = 0
    selector: str | None = None
    conditions: Annotated[list[Condition], crd.ListType("map", keys=("type",))] | None = None


class Cache(KubeModel):
    """A replicated in-memory cache."""

    __kube_resource__: ClassVar[Resource] = Resource(
        group=GROUP,
        version="v1",
        kind="Cache",
        plural="caches",
        namespaced=True,
        subresources=frozenset({"status", "scale"}),
        short_names=("cch",),
    )
    __crd__: ClassVar[crd.Config] = crd.Config(
        storage=True,
        categories=("kube-runtime-test",),
        printer_columns=(
            crd.PrinterColumn("Engine", ".spec.engine"),
            crd.PrinterColumn("Replicas", ".status.replicas", type="integer"),
            crd.PrinterColumn("Size", ".spec.size", priority=1, description="memory"),
        ),
        scale=crd.Scale(label_selector_path=".status.selector"),
    )
    api_version: Literal["crdgen.kube-runtime.test/v1"] = Field(
        "crdgen.kube-runtime.test/v1",
        validation_alias="apiVersion",
        serialization_alias="apiVersion",
    )
    kind: Literal["Cache"] = "Cache"
    metadata: ObjectMeta
    spec: CacheSpec
    status: CacheStatus | None = None


class CacheSpecV1alpha1(KubeModel):
    """The desired state of a Cache (v1alpha1)."""

    replicas: int | None = None


class CacheV1alpha1(KubeModel):
    """A cache, first version."""

    __kube_resource__: ClassVar[Resource] = Resource(
        group=GROUP,
        version="v1alpha1",
        kind="Cache",
        plural="caches",
        namespaced=True,
        subresources=frozenset({"status"}),
        short_names=("cch",),
    )
    __crd__: ClassVar[crd.Config] = crd.Config(
        deprecation_warning="use v1", categories=("kube-runtime-test", "all")
    )
    metadata: ObjectMeta
    spec: CacheSpecV1alpha1 | None = None
    status: dict[str, Any] | None = None


GOOD = {
    "apiVersion": f"{GROUP}/v1",
    "kind": "Cache",
    "metadata": {"name": "c"},
    "spec": {
        "replicas": 3,
        "engine": "memcached",
        "size": "1Gi",
        "ports": [{"name": "main", "port": 6379}],
        "eviction": {"min": 1, "max": 2},
        "tags": ["a", "b"],
        "labels": {"team": "x"},
        "config": {"maxmemory-policy": "allkeys-lru", "nested": {"x": [1, 2]}},
        "template": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}},
        "ratio": 0.25,
        "shards": 3,
        "pausedUntil": "2026-01-01T00:00:00Z",
        "comment": None,
    },
}

# Each rejected both by the Python model and by the API server (pydantic's errors are the
# model's side; tests/e2e checks the server's).
BAD_SPECS: dict[str, dict[str, Any]] = {
    "replicas below minimum": {"replicas": -1},
    "replicas above maximum": {"replicas": 11},
    "engine not in enum": {"engine": "etcd"},
    "port name pattern": {"ports": [{"name": "Main", "port": 1}]},
    "port exclusive maximum": {"ports": [{"name": "main", "port": 65536}]},
    "port name too long": {"ports": [{"name": "a" * 16, "port": 1}]},
    "protocol enum": {"ports": [{"name": "main", "port": 1, "protocol": "SCTP"}]},
    # 0.0, not 0: kube-apiserver 1.20 drops the connection (a panic) checking the integer 0
    # against a fractional multipleOf
    "ratio exclusive minimum": {"ratio": 0.0},
    "ratio not a multiple": {"ratio": 0.33},
    "too many labels": {"labels": {str(i): "v" for i in range(9)}},
    "empty note": {"note": ""},
    "size as a list": {"size": [1]},
    "replicas as a string": {"replicas": "three"},
}


def bad_object(change: dict[str, Any]) -> dict[str, Any]:
    """GOOD with ``change`` merged into its spec."""
    obj = copy.deepcopy(GOOD)
    obj["spec"].update(change)
    return obj
