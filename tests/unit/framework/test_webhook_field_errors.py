"""``webhook.field_errors_of``: a pydantic ValidationError of a resource model as
apimachinery field errors (paths by wire alias, list items as ``[i]``, constraints worded as
kube-apiserver words them, one error per field for a failed int-or-string union)."""

from __future__ import annotations

from typing import Annotated

import pytest
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from kube_runtime.webhook import FieldError, field_errors_of


class _Port(BaseModel):
    model_config = ConfigDict(populate_by_name=True)
    container_port: Annotated[int, Field(alias="containerPort", ge=1, le=65535)]


class _Spec(BaseModel):
    model_config = ConfigDict(populate_by_name=True)
    min_ready_seconds: Annotated[int | None, Field(alias="minReadySeconds", ge=0)] = None
    max_surge: Annotated[
        int | Annotated[str, Field(pattern=r"^[0-9]+%$")] | None, Field(alias="maxSurge")
    ] = None
    ports: list[_Port] = []


def _errors(raw: dict[str, object]) -> list[FieldError]:
    with pytest.raises(ValidationError) as info:
        _Spec.model_validate(raw)
    return field_errors_of(info.value, "spec")


def test_constraints_are_worded_as_apimachinery_words_them() -> None:
    assert [str(e) for e in _errors({"minReadySeconds": -5})] == [
        "spec.minReadySeconds: Invalid value: -5: must be greater than or equal to 0"
    ]
    assert [str(e) for e in _errors({"ports": [{"containerPort": 1}, {"containerPort": 0}]})] == [
        "spec.ports[1].containerPort: Invalid value: 0: must be greater than or equal to 1"
    ]


def test_a_failed_union_is_one_error_naming_the_broken_constraint() -> None:
    errors = _errors({"maxSurge": "-5%"})
    assert [str(e) for e in errors] == [
        'spec.maxSurge: Invalid value: "-5%": must match the regex ^[0-9]+%$'
    ]
    assert errors[0].type == "FieldValueInvalid" and errors[0].value == "-5%"


def test_other_problems_keep_pydantic_s_message_lowercased() -> None:
    (error,) = _errors({"minReadySeconds": "soon"})
    assert error.field == "spec.minReadySeconds"
    assert error.detail.startswith("input should be a valid integer")
