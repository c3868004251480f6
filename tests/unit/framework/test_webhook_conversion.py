"""CRD conversion (kube_runtime.webhook._conversion): converters per version pair or through a
hub, typed models, and the ConversionReview envelope (apiextensions.k8s.io/v1)."""

from __future__ import annotations

from typing import Any, ClassVar

import orjson
import pytest
from pydantic import BaseModel, ConfigDict

from kube_runtime.client.mapping import Resource
from kube_runtime.webhook import ConversionError, Conversions, Server, for_kind
from kube_runtime.webhook._endpoint import ConversionEndpoint

GROUP = "example.com"


def obj(version: str, spec: dict[str, Any]) -> dict[str, Any]:
    meta = {"name": "t", "namespace": "ns", "uid": "1", "labels": {"a": "b"}}
    return {"apiVersion": f"{GROUP}/{version}", "kind": "Thing", "metadata": meta, "spec": spec}


def conversions() -> Conversions:
    c = Conversions()
    # v1alpha1 {count} <-> v1 {replicas} <-> v2 {scale: {replicas}}, v1 the hub
    c.register(
        GROUP, "Thing", "v1alpha1", "v1", lambda o: {**o, "spec": {"replicas": o["spec"]["count"]}}
    )
    c.register(
        GROUP, "Thing", "v1", "v1alpha1", lambda o: {**o, "spec": {"count": o["spec"]["replicas"]}}
    )
    c.register(
        GROUP,
        "Thing",
        "v1",
        "v2",
        lambda o: {"spec": {"scale": {"replicas": o["spec"]["replicas"]}}},
    )
    c.register(
        GROUP,
        "Thing",
        "v2",
        "v1",
        lambda o: {**o, "spec": {"replicas": o["spec"]["scale"]["replicas"]}},
    )
    c.set_hub(GROUP, "Thing", "v1", plural="things")
    return c


def test_a_direct_converter_is_used_and_kind_and_api_version_are_set() -> None:
    assert conversions().convert(obj("v1alpha1", {"count": 2}), f"{GROUP}/v1") == obj(
        "v1", {"replicas": 2}
    )


def test_without_a_direct_converter_the_object_goes_through_the_hub() -> None:
    converted = conversions().convert(obj("v1alpha1", {"count": 3}), f"{GROUP}/v2")
    # The v1 -> v2 converter returned no metadata: the source's is kept.
    assert converted == obj("v2", {"scale": {"replicas": 3}})
    back = conversions().convert(converted, f"{GROUP}/v1alpha1")
    assert back == obj("v1alpha1", {"count": 3})


def test_the_same_version_is_returned_as_it_is_and_impossible_ones_fail() -> None:
    c = conversions()
    same = obj("v1", {"replicas": 1})
    assert c.convert(same, f"{GROUP}/v1") == same
    with pytest.raises(ConversionError, match="not convertible to v3: no converter registered"):
        c.convert(same, f"{GROUP}/v3")
    with pytest.raises(ConversionError, match="not in the same API group"):
        c.convert(same, "other.io/v1")
    with pytest.raises(ConversionError, match="no apiVersion or kind"):
        c.convert({"spec": {}}, f"{GROUP}/v1")
    with pytest.raises(ValueError, match="two different versions"):
        c.register(GROUP, "Thing", "v1", "v1", lambda o: o)
    with pytest.raises(ValueError, match="is registered"):
        c.register(GROUP, "Thing", "v1", "v2", lambda o: o)
    assert c.crd_names() == ["things.example.com"]


class ThingV1(BaseModel):
    model_config = ConfigDict(extra="allow", populate_by_name=True)
    __kube_resource__: ClassVar[Resource] = Resource(
        group=GROUP, version="v1", kind="Thing", plural="things", namespaced=True
    )
    metadata: dict[str, Any]
    spec: dict[str, int]


class ThingV2(BaseModel):
    model_config = ConfigDict(extra="allow", populate_by_name=True)
    __kube_resource__: ClassVar[Resource] = Resource(
        group=GROUP, version="v2", kind="Thing", plural="things", namespaced=True
    )
    metadata: dict[str, Any]
    spec: dict[str, dict[str, int]]


def test_typed_converters_registered_on_the_builder(tmp_path: Any) -> None:
    server = Server(cert_dir=tmp_path)
    (
        for_kind(server, ThingV1)
        .converter(ThingV1, ThingV2, lambda t: ThingV2(metadata=t.metadata, spec={"scale": t.spec}))
        .converter(ThingV2, ThingV1, lambda t: {"metadata": t.metadata, "spec": {"replicas": -1}})
    )
    assert "/convert" in server.paths
    converted = server.conversions.convert(obj("v1", {"replicas": 4}), f"{GROUP}/v2")
    assert converted["spec"] == {"scale": {"replicas": 4}}
    assert converted["apiVersion"] == f"{GROUP}/v2" and converted["kind"] == "Thing"
    with pytest.raises(ConversionError, match="cannot decode the object as ThingV1"):
        server.conversions.convert(obj("v1", {"replicas": "x"}), f"{GROUP}/v2")

    class Other(ThingV2):
        __kube_resource__: ClassVar[Resource] = Resource(
            group=GROUP, version="v2", kind="Other", plural="others", namespaced=True
        )

    with pytest.raises(ValueError, match="is not a version of"):
        for_kind(server, ThingV1).converter(ThingV1, Other, lambda t: t)


def review(request: Any, api_version: str = "apiextensions.k8s.io/v1") -> bytes:
    return orjson.dumps({"apiVersion": api_version, "kind": "ConversionReview", "request": request})


def test_a_conversion_review_is_answered_with_the_converted_objects() -> None:
    endpoint = ConversionEndpoint(conversions())
    request = {
        "uid": "r1",
        "desiredAPIVersion": f"{GROUP}/v1",
        "objects": [obj("v1alpha1", {"count": 1}), obj("v2", {"scale": {"replicas": 2}})],
    }
    reply = endpoint.serve("POST", "application/json", review(request))
    assert reply.status == 200
    answer = orjson.loads(reply.body)
    assert (
        answer["apiVersion"] == "apiextensions.k8s.io/v1" and answer["kind"] == "ConversionReview"
    )
    assert answer["response"] == {
        "uid": "r1",
        "convertedObjects": [obj("v1", {"replicas": 1}), obj("v1", {"replicas": 2})],
        "result": {"metadata": {}, "status": "Success"},
    }


def test_one_object_that_cannot_be_converted_fails_the_review() -> None:
    def broken(o: Any) -> Any:
        raise ConversionError("spec.count is negative")

    c = Conversions()
    c.register(GROUP, "Thing", "v1alpha1", "v1", broken)
    request = {"uid": "r2", "desiredAPIVersion": f"{GROUP}/v1", "objects": [obj("v1alpha1", {})]}
    reply = ConversionEndpoint(c).serve(
        "POST", "application/json", review(request, "apiextensions.k8s.io/v1beta1")
    )
    answer = orjson.loads(reply.body)
    assert reply.status == 200 and answer["apiVersion"] == "apiextensions.k8s.io/v1beta1"
    assert answer["response"] == {
        "uid": "r2",
        "convertedObjects": None,
        "result": {"metadata": {}, "status": "Failure", "message": "spec.count is negative"},
    }


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b"[1]", "not a JSON object"),
        (b"{oops", "couldn't decode the ConversionReview"),
        (orjson.dumps({"apiVersion": "v1", "kind": "Pod"}), "expected a ConversionReview"),
        (review(None), "conversion request is nil"),
        (review({"uid": "x", "objects": []}), "needs desiredAPIVersion"),
    ],
)
def test_what_is_not_a_conversion_review_is_http_400(body: bytes, message: str) -> None:
    reply = ConversionEndpoint(conversions()).serve("POST", "application/json", body)
    assert reply.status == 400
    result = orjson.loads(reply.body)["response"]["result"]
    assert result["status"] == "Failure" and message in result["message"]
