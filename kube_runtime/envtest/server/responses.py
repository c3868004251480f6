"""How the server's answers are written: JSON bodies, error Statuses, objects and lists.

Objects go out as their stored bytes, with only ``apiVersion`` rewritten when the route asks
for another served version (converted by the route's ``convert`` when the CRD has a
conversion webhook). List items of built-in kinds carry no ``apiVersion``/``kind``, as
kube-apiserver encodes its typed lists; custom resources go out whole.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import orjson

from kube_runtime.envtest.server import errors
from kube_runtime.envtest.server.errors import ApiError
from kube_runtime.envtest.server.http import Response
from kube_runtime.envtest.server.routing import Route
from kube_runtime.envtest.server.storage import Obj, Stored

JSON = "application/json"


def json_response(status: int, body: Any, headers: dict[str, str] | None = None) -> Response:
    return Response(status, orjson.dumps(body), JSON, headers or {})


def error_response(err: ApiError) -> Response:
    return json_response(err.code, err.status, errors.response_headers(err))


def object_bytes(route: Route, stored: Stored) -> bytes:
    """The stored object as served at the route's version (converted by the CRD's webhook
    when it has one)."""
    if route.convert is not None:
        if stored.obj.get("apiVersion") == route.info.api_version(route.version):
            return stored.raw
        return orjson.dumps(route.convert([stored.obj], route.version)[0])
    if route.version != route.info.version:
        obj = dict(stored.obj)
        obj["apiVersion"] = route.info.api_version(route.version)
        return orjson.dumps(obj)
    return stored._raw or stored.raw  # a written object's: known, without the property


def object_response(route: Route, stored: Stored, status: int = 200) -> Response:
    return Response(status, object_bytes(route, stored), JSON)


_TYPE = ("apiVersion", "kind")


def list_response(route: Route, metadata: Obj, items: Iterable[Stored]) -> Response:
    """A ``<Kind>List`` of ``items`` with list ``metadata``."""
    head = orjson.dumps(
        {
            "kind": route.info.list_kind,
            "apiVersion": route.info.api_version(route.version),
            "metadata": metadata,
        }
    )
    if route.convert is not None:
        objects = route.convert([s.obj for s in items], route.version)
        if not route.info.custom:  # a built-in kind's items carry no type (Go's typed list)
            objects = [{k: v for k, v in o.items() if k not in _TYPE} for o in objects]
        body = b",".join(orjson.dumps(obj) for obj in objects)
    elif route.info.custom:
        body = b",".join(object_bytes(route, s) for s in items)
    else:
        body = b",".join(s.untyped_raw for s in items)
    return Response(200, head[:-1] + b',"items":[' + body + b"]}", JSON)
