"""Defaulting admission (kube_runtime.webhook._defaulting): the JSON patch from the object that
was sent to the defaulted one, refusals, warnings, dry run, typed models and dicts."""

from __future__ import annotations

import base64
from typing import Any, ClassVar

import orjson
from pydantic import BaseModel

from kube_runtime.client.errors import ApiError
from kube_runtime.client.mapping import Resource
from kube_runtime.webhook import AdmissionRequest, Denied, FieldError, Invalid
from kube_runtime.webhook._defaulting import DefaultingHandler, json_patch


class StrictSpec(BaseModel):  # no extra="allow": unknown fields are dropped by decoding
    replicas: int | None = None
    image: str | None = None


class App(BaseModel):
    __kube_resource__: ClassVar[Resource] = Resource(
        group="example.com", version="v1", kind="App", plural="apps", namespaced=True
    )
    apiVersion: str
    kind: str
    metadata: dict[str, Any]
    spec: StrictSpec | None = None


def app(spec: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "example.com/v1",
        "kind": "App",
        "metadata": {"name": "a", "namespace": "ns"},
        "spec": spec,
    }


def request(operation: str = "CREATE", obj: Any = None, **fields: Any) -> AdmissionRequest:
    return AdmissionRequest(
        uid="u",
        operation=operation,
        kind={"group": "example.com", "version": "v1", "kind": "App"},
        resource={"group": "example.com", "version": "v1", "resource": "apps"},
        namespace="ns",
        object=obj,
        **fields,
    )


def wire_patch(response: Any) -> list[dict[str, Any]]:
    encoded = response.review("u")["response"]
    assert encoded["patchType"] == "JSONPatch"
    patch: list[dict[str, Any]] = orjson.loads(base64.b64decode(encoded["patch"]))
    return patch


def test_a_dict_defaulter_changing_in_place_answers_the_patch() -> None:
    def default(obj: dict[str, Any], req: AdmissionRequest) -> None:
        obj["spec"].setdefault("replicas", 1)
        obj["metadata"].setdefault("labels", {})["defaulted"] = "true"

    sent = app({"image": "nginx"})
    response = DefaultingHandler(default).handle(request(obj=sent))
    assert response.allowed is True
    assert sorted(wire_patch(response), key=lambda op: op["path"]) == [
        {"op": "add", "path": "/metadata/labels", "value": {"defaulted": "true"}},
        {"op": "add", "path": "/spec/replicas", "value": 1},
    ]
    assert sent == app({"image": "nginx"})  # the request's object is not touched


def test_a_defaulter_may_return_the_new_object() -> None:
    def default(obj: dict[str, Any], req: AdmissionRequest) -> dict[str, Any]:
        return {**obj, "spec": {**obj["spec"], "image": "nginx:latest"}}

    response = DefaultingHandler(default).handle(request(obj=app({"image": "nginx"})))
    assert response.patch == [{"op": "replace", "path": "/spec/image", "value": "nginx:latest"}]


def test_no_change_means_no_patch() -> None:
    response = DefaultingHandler(lambda obj, req: None).handle(request(obj=app({"replicas": 2})))
    assert response.allowed is True and response.patch == []
    assert "patchType" not in response.review("u")["response"]


def test_a_typed_defaulter_keeps_fields_its_model_does_not_know() -> None:
    class Defaulter:
        def default(self, obj: App, req: AdmissionRequest) -> None:
            assert isinstance(obj, App) and obj.spec is not None
            obj.spec.replicas = obj.spec.replicas or 3

    sent = app({"image": "nginx", "unknownToTheModel": {"x": 1}})
    response = DefaultingHandler(Defaulter(), App).handle(request(obj=sent))
    # The model dropped "unknownToTheModel": the patch does not remove it.
    assert response.patch == [{"op": "add", "path": "/spec/replicas", "value": 3}]


def test_delete_is_allowed_without_calling_the_defaulter() -> None:
    def fail(obj: Any, req: AdmissionRequest) -> None:
        raise AssertionError("called")

    response = DefaultingHandler(fail).handle(request("DELETE", None))
    assert response.allowed is True and response.status == {"metadata": {}, "code": 200}


def test_a_request_without_an_object_is_code_400() -> None:
    handler = DefaultingHandler(lambda obj, req: None, App)
    no_object = handler.handle(request(obj=None))
    assert not no_object.allowed and no_object.status is not None
    assert no_object.status["code"] == 400


class RequiredSpec(BaseModel):
    image: str
    replicas: int = 1


class Site(BaseModel):
    __kube_resource__: ClassVar[Resource] = App.__kube_resource__
    apiVersion: str
    kind: str
    metadata: dict[str, Any]
    spec: RequiredSpec


def test_an_object_the_model_refuses_reaches_the_defaulter_leniently() -> None:
    seen: list[Any] = []

    def default(site: Site, req: AdmissionRequest) -> None:
        seen.append(site.spec.image)  # a missing required field reads None, as Go's ""
        if not site.spec.image:
            site.spec.image = "nginx"

    response = DefaultingHandler(default, Site).handle(request(obj=app({"replicas": 2})))
    assert seen == [None] and response.allowed
    assert response.patch == [{"op": "add", "path": "/spec/image", "value": "nginx"}]


def test_a_defaulter_failing_on_an_invalid_object_lets_the_api_server_answer() -> None:
    def default(site: Site, req: AdmissionRequest) -> None:
        site.spec.image = site.spec.image.lower()  # AttributeError: image is None

    handler = DefaultingHandler(default, Site)
    response = handler.handle(request(obj={**app({}), "spec": {"replicas": "many"}}))
    # Allowed unchanged: the API server's schema validation says what is wrong, not pydantic.
    assert response.allowed and response.patch == []
    assert response.status == {"metadata": {}, "code": 200}

    def refuse(site: Site, req: AdmissionRequest) -> None:
        raise Invalid("spec.image", "must name a registry", value=site.spec.image)

    refused = DefaultingHandler(refuse, Site).handle(request(obj=app({})))
    assert refused.status is not None and refused.status["code"] == 422  # deliberate: kept

    def broken(site: Site, req: AdmissionRequest) -> None:
        raise KeyError("bug")

    valid = DefaultingHandler(broken, Site).handle(request(obj=app({"image": "x"})))
    assert valid.status is not None and valid.status["code"] == 403  # valid object: as before


def test_refusals_keep_their_status_or_become_403() -> None:
    def raiser(error: Exception) -> Any:
        def default(obj: Any, req: AdmissionRequest) -> None:
            req.warn("looked at it")
            raise error

        return DefaultingHandler(default).handle(request(obj=app({})))

    denied = raiser(Denied("not today", warnings=["w"]))
    assert denied.allowed is False and denied.patch == []
    assert denied.status == {
        "metadata": {},
        "code": 403,
        "reason": "Forbidden",
        "message": "not today",
    }
    assert denied.warnings == ["looked at it", "w"]

    plain = raiser(ValueError("replicas must be set"))
    assert plain.status is not None and plain.status["code"] == 403
    assert plain.status["message"] == "replicas must be set"

    conflict = raiser(
        ApiError({"kind": "Status", "code": 409, "reason": "Conflict", "message": "c"})
    )
    assert conflict.status == {"metadata": {}, "code": 409, "reason": "Conflict", "message": "c"}

    invalid = raiser(Invalid(errors=[FieldError.required("spec.image")]))
    assert invalid.status is not None and invalid.status["code"] == 422
    assert invalid.status["message"] == 'App.example.com "a" is invalid: spec.image: Required value'


def test_the_defaulter_sees_dry_run_and_its_warnings_are_answered() -> None:
    seen: list[bool] = []

    def default(obj: Any, req: AdmissionRequest) -> None:
        seen.append(req.dry_run)
        req.warn("defaulted without side effects")

    response = DefaultingHandler(default).handle(request(obj=app({}), dry_run=True))
    assert seen == [True]
    assert response.review("u")["response"]["warnings"] == ["defaulted without side effects"]


def test_json_patch_is_rfc_6902() -> None:
    assert json_patch({"a": 1, "b": [1]}, {"a": 2, "b": [1, 2]}) == [
        {"op": "replace", "path": "/a", "value": 2},
        {"op": "add", "path": "/b/1", "value": 2},
    ]
