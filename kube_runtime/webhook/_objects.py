"""The objects handed to defaulters, validators and converters: dicts or typed models.

A registration made with a resource model class (``codegen`` output, a pydantic model with
``__kube_resource__``) decodes each object with ``model_validate``, as the client does for
reads; otherwise the object is a private deep copy of the JSON dict. :func:`decode_lenient`
also returns an object the model does not accept, read as
:func:`kube_runtime.models.validate_lenient` reads it, with the ``ValidationError``: what the
handlers do with it is theirs to say. :func:`encode` gives the wire form back (a model dumped with its aliases and only the fields that were set, as the
client writes models), which is what a defaulter's patch is computed from.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson
from pydantic import BaseModel, ValidationError

from kube_runtime.models._lenient import validate_lenient

__all__ = ["DecodeError", "decode", "decode_lenient", "encode"]


class DecodeError(ValueError):
    """The object cannot be decoded (no content, or not valid for the model): answered 400."""


def decode(raw: Mapping[str, Any] | None, model: type[BaseModel] | None) -> Any:
    """``raw`` as a model instance of ``model``, or as a private copy of the dict."""
    if not raw:
        raise DecodeError("there is no content to decode")
    if model is None:
        copied: dict[str, Any] = orjson.loads(orjson.dumps(dict(raw)))
        return copied
    try:
        return model.model_validate(raw)
    except ValidationError as e:
        raise DecodeError(f"cannot decode the object as {model.__name__}: {e}") from e


def decode_lenient(
    raw: Mapping[str, Any] | None, model: type[BaseModel] | None
) -> tuple[Any, ValidationError | None]:
    """``(object, None)`` as :func:`decode` gives it; for an object ``model`` does not accept,
    ``(the lenient instance, the ValidationError)``. Raises :class:`DecodeError` only when there
    is no content."""
    if not raw:
        raise DecodeError("there is no content to decode")
    if model is None:
        return decode(raw, None), None
    copied: dict[str, Any] = orjson.loads(orjson.dumps(dict(raw)))
    return validate_lenient(model, copied)


def encode(obj: Any, *, warn: bool = True) -> dict[str, Any]:
    """The JSON form of ``obj`` (a model dumped by alias, set fields only; a dict as is).
    ``warn=False``: no pydantic serializer warnings (a lenient model holds values its types
    do not describe, as they were sent)."""
    if isinstance(obj, BaseModel):
        return obj.model_dump(mode="json", by_alias=True, exclude_unset=True, warnings=warn)
    if isinstance(obj, Mapping):
        result: dict[str, Any] = orjson.loads(orjson.dumps(dict(obj)))
        return result
    raise TypeError(f"expected a dict or a resource model, got {type(obj).__name__}")
