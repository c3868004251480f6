"""AdmissionReview decoding and encoding (kube_runtime.webhook._review) and the HTTP endpoint
around a handler (kube_runtime.webhook._endpoint), with plain bytes and no socket."""

from __future__ import annotations

import base64
from typing import Any

import orjson
import pytest

from kube_runtime.webhook._endpoint import MAX_REQUEST_BYTES, AdmissionEndpoint
from kube_runtime.webhook._review import (
    AdmissionRequest,
    AdmissionResponse,
    ReviewError,
    allowed,
    denied,
    errored,
    from_status,
    patched,
)

REQUEST: dict[str, Any] = {
    "uid": "705ab4f5-6393-11e8-b7cc-42010a800002",
    "kind": {"group": "apps", "version": "v1", "kind": "Deployment"},
    "resource": {"group": "apps", "version": "v1", "resource": "deployments"},
    "subResource": "",
    "requestKind": {"group": "apps", "version": "v1", "kind": "Deployment"},
    "requestResource": {"group": "apps", "version": "v1", "resource": "deployments"},
    "name": "web",
    "namespace": "prod",
    "operation": "UPDATE",
    "userInfo": {"username": "admin", "groups": ["system:authenticated"]},
    "object": {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"}},
    "oldObject": {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"}},
    "dryRun": True,
    "options": {"apiVersion": "meta.k8s.io/v1", "kind": "UpdateOptions"},
}


def review(request: dict[str, Any], api_version: str = "admission.k8s.io/v1") -> dict[str, Any]:
    return {"apiVersion": api_version, "kind": "AdmissionReview", "request": request}


def test_a_request_is_read_with_snake_case_names() -> None:
    request = AdmissionRequest.from_review(review(REQUEST))
    assert request.uid == REQUEST["uid"]
    assert request.operation == "UPDATE"
    assert (request.group, request.kind_name, request.object_name) == ("apps", "Deployment", "web")
    assert request.resource["resource"] == "deployments"
    assert request.namespace == "prod" and request.dry_run is True
    assert request.user_info["username"] == "admin"
    assert request.object == REQUEST["object"] and request.old_object == REQUEST["oldObject"]
    assert request.options == REQUEST["options"]
    assert request.api_version == "admission.k8s.io/v1"


def test_a_create_with_generate_name_takes_the_name_from_the_object() -> None:
    request = AdmissionRequest.from_review(
        review({**REQUEST, "name": "", "operation": "CREATE", "dryRun": False})
    )
    assert request.object_name == "web" and request.dry_run is False


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ([], "not a JSON object"),
        ({"apiVersion": "v1", "kind": "Pod"}, "expected an AdmissionReview"),
        ({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview"}, "has no request"),
        (review({**REQUEST, "uid": ""}), "has no uid"),
        (review({**REQUEST, "operation": None}), "has no operation"),
    ],
)
def test_what_is_not_a_review_is_refused(body: Any, message: str) -> None:
    with pytest.raises(ReviewError, match=message):
        AdmissionRequest.from_review(body)


def test_a_response_is_completed_with_the_uid_a_code_and_a_base64_json_patch() -> None:
    ops = [{"op": "add", "path": "/spec/replicas", "value": 1}]
    answer = patched(ops).with_warnings(["w1"]).review("uid-1")
    assert answer["apiVersion"] == "admission.k8s.io/v1"
    assert answer["kind"] == "AdmissionReview"
    response = answer["response"]
    assert response["uid"] == "uid-1" and response["allowed"] is True
    assert response["status"] == {"metadata": {}, "code": 200}
    assert response["patchType"] == "JSONPatch"
    assert orjson.loads(base64.b64decode(response["patch"])) == ops
    assert response["warnings"] == ["w1"]


def test_without_a_patch_there_is_no_patch_type_nor_warnings() -> None:
    response = AdmissionResponse(True).review("u", "admission.k8s.io/v1beta1")
    assert response["apiVersion"] == "admission.k8s.io/v1beta1"
    assert response["response"] == {
        "uid": "u",
        "allowed": True,
        "status": {"metadata": {}, "code": 200},
    }


def test_the_constructors_follow_controller_runtime() -> None:
    assert allowed("fine").status == {"metadata": {}, "code": 200, "message": "fine"}
    assert denied("no").status == {
        "metadata": {},
        "code": 403,
        "reason": "Forbidden",
        "message": "no",
    }
    assert errored(400, "bad").status == {"metadata": {}, "code": 400, "message": "bad"}
    conflict = {"kind": "Status", "apiVersion": "v1", "code": 409, "reason": "Conflict"}
    response = from_status(False, conflict)
    assert response.allowed is False
    assert response.status == {"metadata": {}, "code": 409, "reason": "Conflict"}


class Echo:
    def __init__(self) -> None:
        self.seen: list[AdmissionRequest] = []

    def handle(self, request: AdmissionRequest) -> AdmissionResponse:
        self.seen.append(request)
        return allowed().with_warnings([f"saw {request.operation}"])


class Broken:
    def handle(self, request: AdmissionRequest) -> AdmissionResponse:
        raise RuntimeError("boom")


def serve(handler: Any, body: bytes, content_type: str | None = "application/json") -> Any:
    reply = AdmissionEndpoint(handler).serve("POST", content_type, body)
    return reply.status, orjson.loads(reply.body)["response"], orjson.loads(reply.body)


def test_the_endpoint_answers_in_the_version_of_the_request() -> None:
    echo = Echo()
    status, response, full = serve(
        echo,
        orjson.dumps(review(REQUEST, "admission.k8s.io/v1beta1")),
        "application/json; charset=utf-8",
    )
    assert status == 200 and full["apiVersion"] == "admission.k8s.io/v1beta1"
    assert response["uid"] == REQUEST["uid"] and response["warnings"] == ["saw UPDATE"]
    assert echo.seen[0].dry_run is True


@pytest.mark.parametrize(
    ("body", "content_type", "message"),
    [
        (b"", "application/json", "request body is empty"),
        (b"{}", "text/plain", "contentType=text/plain, expected application/json"),
        (b"{not json", "application/json", "couldn't decode the AdmissionReview"),
        (b'{"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview"}', None, "contentType="),
        (orjson.dumps({"kind": "AdmissionReview"}), "application/json", "has no request"),
    ],
)
def test_an_unreadable_request_is_answered_code_400_in_a_review(
    body: bytes, content_type: str | None, message: str
) -> None:
    status, response, _ = serve(Echo(), body, content_type)
    assert status == 200  # as controller-runtime: the review carries the code
    assert response["allowed"] is False
    assert response["status"]["code"] == 400
    assert message in response["status"]["message"]


def test_a_body_over_the_limit_and_a_wrong_method() -> None:
    endpoint = AdmissionEndpoint(Echo())
    too_large = orjson.loads(endpoint.too_large().body)["response"]["status"]
    assert too_large["code"] == 413 and str(MAX_REQUEST_BYTES) in too_large["message"]
    big = endpoint.serve("POST", "application/json", b" " * (MAX_REQUEST_BYTES + 1))
    assert orjson.loads(big.body)["response"]["status"]["code"] == 413
    get = endpoint.serve("GET", "application/json", b"{}")
    assert orjson.loads(get.body)["response"]["status"]["code"] == 400


def test_an_exception_escaping_a_handler_is_code_500() -> None:
    _, response, _ = serve(Broken(), orjson.dumps(review(REQUEST)))
    assert response["uid"] == REQUEST["uid"]
    assert response["allowed"] is False
    assert response["status"]["code"] == 500
    assert "boom" in response["status"]["message"]
