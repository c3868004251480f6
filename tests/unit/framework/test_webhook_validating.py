"""Validating admission (kube_runtime.webhook._validating): which method each operation calls
with which objects, and the decisions controller-runtime's CustomValidator gives."""

from __future__ import annotations

from typing import Any, ClassVar

import pytest
from pydantic import BaseModel, ConfigDict

from kube_runtime.client.errors import ApiError
from kube_runtime.client.mapping import Resource
from kube_runtime.webhook import AdmissionRequest, Denied, Invalid, ValidatingHandler, Validator
from kube_runtime.webhook._validating import operations_of


class Box(BaseModel):
    model_config = ConfigDict(extra="allow")
    __kube_resource__: ClassVar[Resource] = Resource(
        group="example.com", version="v1", kind="Box", plural="boxes", namespaced=False
    )
    metadata: dict[str, Any]
    size: int


def box(size: Any, name: str = "b") -> dict[str, Any]:
    return {"apiVersion": "example.com/v1", "kind": "Box", "metadata": {"name": name}, "size": size}


def request(operation: str, obj: Any = None, old: Any = None, **fields: Any) -> AdmissionRequest:
    return AdmissionRequest(
        uid="u",
        operation=operation,
        kind={"group": "example.com", "version": "v1", "kind": "Box"},
        resource={"group": "example.com", "version": "v1", "resource": "boxes"},
        object=obj,
        old_object=old,
        **fields,
    )


class Recorder(Validator):
    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []

    def validate_create(self, obj: Box, request: AdmissionRequest) -> list[str]:
        self.calls.append(("create", obj))
        if obj.size > 10:
            raise Invalid("size", "must be at most 10", value=obj.size)
        return ["boxes are heavy"] if obj.size > 5 else []

    def validate_update(self, old: Box, new: Box, request: AdmissionRequest) -> str | None:
        self.calls.append(("update", old, new))
        if new.size < old.size:
            request.warn("asked to shrink")
            raise Denied("a box cannot shrink", warnings=["it had " + str(old.size)])
        return "grown" if new.size > old.size else None

    def validate_delete(self, obj: Box, request: AdmissionRequest) -> None:
        self.calls.append(("delete", obj, request.dry_run))


def test_create_update_and_delete_get_typed_objects() -> None:
    recorder = Recorder()
    handler = ValidatingHandler(recorder, Box)
    created = handler.handle(request("CREATE", box(7)))
    assert created.allowed and created.warnings == ["boxes are heavy"]
    assert created.status == {"metadata": {}, "code": 200}
    updated = handler.handle(request("UPDATE", box(8), box(7)))
    assert updated.allowed and updated.warnings == ["grown"]
    deleted = handler.handle(request("DELETE", None, box(8), dry_run=True))
    assert deleted.allowed
    kinds = [call[0] for call in recorder.calls]
    assert kinds == ["create", "update", "delete"]
    _, old, new = recorder.calls[1]
    assert isinstance(old, Box) and (old.size, new.size) == (7, 8)
    # DELETE validates oldObject, the object being deleted.
    assert recorder.calls[2][1].size == 8 and recorder.calls[2][2] is True


def test_refusals_carry_their_code_message_and_warnings() -> None:
    handler = ValidatingHandler(Recorder(), Box)
    invalid = handler.handle(request("CREATE", box(11)))
    assert invalid.allowed is False and invalid.status is not None
    assert invalid.status["code"] == 422 and invalid.status["reason"] == "Invalid"
    assert invalid.status["message"] == (
        'Box.example.com "b" is invalid: size: Invalid value: 11: must be at most 10'
    )
    assert invalid.status["details"]["causes"] == [
        {
            "reason": "FieldValueInvalid",
            "message": "Invalid value: 11: must be at most 10",
            "field": "size",
        }
    ]
    shrink = handler.handle(request("UPDATE", box(1), box(2)))
    assert shrink.allowed is False and shrink.status is not None
    assert (shrink.status["code"], shrink.status["message"]) == (403, "a box cannot shrink")
    assert shrink.warnings == ["asked to shrink", "it had 2"]


@pytest.mark.parametrize(
    ("error", "code", "message"),
    [
        (ValueError("size must be even"), 403, "size must be even"),
        (KeyError("spec"), 403, "'spec'"),  # a bug: logged, still answered as Denied
        (
            ApiError({"code": 404, "reason": "NotFound", "message": "quota x not found"}),
            404,
            "quota x not found",
        ),
    ],
)
def test_any_error_is_denied_and_an_api_status_keeps_its_code(
    error: Exception, code: int, message: str
) -> None:
    def validate(obj: Any, request: AdmissionRequest) -> None:
        raise error

    response = ValidatingHandler(validate).handle(request("CREATE", box(1)))
    assert response.allowed is False and response.status is not None
    assert (response.status["code"], response.status["message"]) == (code, message)


def test_connect_is_allowed_unknown_operations_and_missing_objects_are_400() -> None:
    recorder = Recorder()
    handler = ValidatingHandler(recorder, Box)
    assert handler.handle(request("CONNECT")).allowed
    unknown = handler.handle(request("PATCH", box(1)))
    assert unknown.status is not None and unknown.status["code"] == 400
    no_old = handler.handle(request("UPDATE", box(1), None))
    assert no_old.status is not None and no_old.status["code"] == 400
    assert recorder.calls == []


def test_an_object_the_model_refuses_is_422_with_the_fields() -> None:
    recorder = Recorder()
    handler = ValidatingHandler(recorder, Box)
    bad = handler.handle(request("CREATE", box("big")))
    assert bad.status is not None and bad.status["code"] == 422
    assert bad.status["reason"] == "Invalid"
    assert bad.status["details"]["causes"] == [
        {
            "reason": "FieldValueInvalid",
            "message": 'Invalid value: "big": input should be a valid integer, '
            "unable to parse string as an integer",
            "field": "size",
        }
    ]
    assert "pydantic" not in bad.status["message"]
    missing = handler.handle(request("CREATE", {"metadata": {"name": "b"}}))
    assert missing.status is not None
    assert missing.status["message"] == 'Box.example.com "b" is invalid: size: Required value'
    assert recorder.calls == []


def test_what_was_stored_is_not_held_against_an_update_or_a_delete() -> None:
    recorder = Recorder()
    handler = ValidatingHandler(recorder, Box)
    stored = box("big")  # stored before the model's rule
    labelled = {**stored, "metadata": {"name": "b", "finalizers": ["example.com/f"]}}
    assert handler.handle(request("UPDATE", labelled, stored)).allowed
    assert [c[0] for c in recorder.calls] == ["update"]
    assert recorder.calls[0][2].size == "big"  # the lenient object, as stored
    assert handler.handle(request("DELETE", None, stored)).allowed
    # A new invalid value is still refused.
    worse = handler.handle(request("UPDATE", {**stored, "size": "bigger"}, stored))
    assert worse.status is not None and worse.status["code"] == 422
    assert [c["field"] for c in worse.status["details"]["causes"]] == ["size"]


def test_a_function_validates_creates_and_updates_with_dicts() -> None:
    seen: list[dict[str, Any]] = []

    def validate(obj: dict[str, Any], request: AdmissionRequest) -> list[str]:
        seen.append(obj)
        return [f"{request.operation} ok"]

    handler = ValidatingHandler(validate)
    assert handler.handle(request("CREATE", box(1))).warnings == ["CREATE ok"]
    assert handler.handle(request("UPDATE", box(2), box(1))).warnings == ["UPDATE ok"]
    assert handler.handle(request("DELETE", None, box(2))).allowed
    assert [o["size"] for o in seen] == [1, 2]
    assert operations_of(validate) == ("CREATE", "UPDATE")


def test_operations_are_those_a_validator_overrides() -> None:
    class CreatesOnly(Validator):
        def validate_create(self, obj: Any, request: AdmissionRequest) -> None:
            return None

    class Duck:
        def validate_delete(self, obj: Any, request: AdmissionRequest) -> None:
            return None

    assert operations_of(Recorder()) == ("CREATE", "UPDATE", "DELETE")
    assert operations_of(CreatesOnly()) == ("CREATE",)
    assert operations_of(Duck()) == ("DELETE",)
    assert operations_of(Validator()) == ()
    with pytest.raises(TypeError):
        ValidatingHandler(42)
