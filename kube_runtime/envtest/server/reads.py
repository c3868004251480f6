"""GET of one object or a collection (with selectors, paging, and Table or metadata-only
(:mod:`.partialmeta`) rendering on request).

:func:`matcher` turns a request's ``labelSelector`` and ``fieldSelector`` into the predicate
that lists, watches and collection deletes filter with; an invalid selector, or a field label
the kind does not support, raises :class:`~kube_runtime.selectors.SelectorError` (a 400).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from kube_runtime import selectors
from kube_runtime.envtest.server import fieldlabels, partialmeta, subresources, tables
from kube_runtime.envtest.server.http import Request, Response
from kube_runtime.envtest.server.responses import json_response, list_response, object_response
from kube_runtime.envtest.server.routing import Route
from kube_runtime.envtest.server.storage import Obj, Store


def matcher(request: Request, route: Route) -> Callable[[Obj], bool] | None:
    """The request's selectors as one predicate; None when it has none."""
    label_text = request.param("labelSelector") or ""
    field_text = request.param("fieldSelector") or ""
    label_sel = selectors.parse_label_selector(label_text) if label_text else None
    field_sel = selectors.parse_field_selector(field_text) if field_text else None
    if field_sel is not None:
        info = route.info
        fieldlabels.check_field_selector(field_sel, info.kind, info.group, custom=info.custom)
        field_sel = selectors.convert_field_labels(field_sel, info.kind, info.group)
    if label_sel is None and field_sel is None:
        return None
    meta_terms = _metadata_terms(field_sel) if field_sel is not None else None
    if meta_terms is not None:
        if label_sel is None and len(meta_terms) == 1 and meta_terms[0][1] and meta_terms[0][2]:
            # ``metadata.name=x`` (a lease, a node...): the watch of a single object.
            key, _, wanted = meta_terms[0]
            return lambda obj: obj["metadata"].get(key) == wanted
        return functools.partial(_match_metadata, label_sel, meta_terms)

    def matches(obj: Obj) -> bool:
        if label_sel is not None and not label_sel.matches(obj["metadata"].get("labels")):
            return False
        return field_sel is None or field_sel.matches(selectors.object_fields(obj))

    return matches


#: The field labels read from ``metadata`` alone, by the key they read there.
_METADATA_FIELDS = {"metadata.name": "name", "metadata.namespace": "namespace"}


def _metadata_terms(
    field_sel: selectors.FieldSelector,
) -> tuple[tuple[str, bool, str], ...] | None:
    """The terms of a field selector that only reads ``metadata.name`` and
    ``metadata.namespace``, as (metadata key, ``=``?, value); None for any other selector
    (matched through :func:`~kube_runtime.selectors.object_fields`)."""
    terms = []
    for name, op, value in field_sel.terms:
        key = _METADATA_FIELDS.get(name)
        if key is None:
            return None
        terms.append((key, op == "=", value))
    return tuple(terms)


def _match_metadata(
    label_sel: selectors.LabelSelector | None,
    terms: tuple[tuple[str, bool, str], ...],
    obj: Obj,
) -> bool:
    """What the generic predicate of :func:`matcher` answers for a field selector of
    :func:`_metadata_terms` (a missing or non-string field is ``""``, as in
    :func:`~kube_runtime.selectors.object_fields`), without building every field of ``obj``."""
    meta = obj["metadata"]
    if label_sel is not None and not label_sel.matches(meta.get("labels")):
        return False
    for key, equal, value in terms:
        actual = meta.get(key)
        if not isinstance(actual, str):
            actual = ""
        if (actual == value) != equal:
            return False
    return True


class Reads:
    """The ``get`` and ``list`` verbs on ``store``."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def get(self, request: Request, route: Route) -> Response:
        assert route.name is not None
        stored = self.store.get(route.info, route.namespace, route.name)
        if route.subresource == "scale":
            return subresources.read_scale(self.store, route, stored.obj)
        accept = request.headers.get("accept", "")
        if tables.wants_table(accept):
            return json_response(
                200,
                tables.table(
                    route.info,
                    [stored.obj],
                    str(stored.rv),
                    request.param("includeObject"),
                    served_objects(route),
                    now=self.store.clock.time(),
                ),
            )
        partial = partialmeta.partial_target(accept)
        if partial is not None:
            partialmeta.require(partial, listing=False, type_name=_go_type(route, listing=False))
            return json_response(200, partialmeta.as_partial(stored.obj, partial))
        return object_response(route, stored)

    def list(self, request: Request, route: Route) -> Response:
        matches = matcher(request, route)
        accept = request.headers.get("accept", "")
        partial = None if tables.wants_table(accept) else partialmeta.partial_target(accept)
        if partial is not None:
            partialmeta.require(partial, listing=True, type_name=_go_type(route, listing=True))
        limit_text = request.param("limit")
        limit = int(limit_text) if limit_text else None
        result = self.store.list(
            route.info,
            route.namespace,
            matches,
            limit=limit if limit and limit > 0 else None,
            continue_token=request.param("continue") or None,
        )
        if tables.wants_table(accept):
            doc = tables.table(
                route.info,
                [s.obj for s in result.items],
                str(result.rv),
                request.param("includeObject"),
                served_objects(route),
                now=self.store.clock.time(),
            )
            if result.continue_token:
                doc["metadata"]["continue"] = result.continue_token
            return json_response(200, doc)
        meta: dict[str, Any] = {"resourceVersion": str(result.rv)}
        if result.continue_token:
            meta["continue"] = result.continue_token
            if matches is None:  # with a selector the count would be inexact: none is given
                meta["remainingItemCount"] = result.remaining
        if partial is not None:
            objs = [s.obj for s in result.items]
            return json_response(200, partialmeta.partial_list(objs, meta, partial))
        return list_response(route, meta, result.items)


def served_objects(route: Route) -> Callable[[list[Obj]], list[Obj]]:
    """Stored objects as the route serves them: converted (a CRD's webhook, a built-in kind
    whose versions differ, a view of another resource) or with the route's ``apiVersion``."""

    def serve(objects: list[Obj]) -> list[Obj]:
        if route.convert is not None:
            return route.convert(objects, route.version)
        if route.version != route.info.version:
            api_version = route.info.api_version(route.version)
            return [{**obj, "apiVersion": api_version} for obj in objects]
        return objects

    return serve


def _go_type(route: Route, *, listing: bool) -> str:
    info = route.info
    return partialmeta.go_type_name(info.group, info.kind, custom=info.custom, listing=listing)
