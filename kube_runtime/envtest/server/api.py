"""The REST layer of the embedded API server: routing, verbs, patch, watch, subresources.

Maps kube-apiserver's URL space onto :class:`~.storage.Store` calls and renders results the
way kube-apiserver does (objects, lists, ``Status`` errors, watch event streams). Discovery
documents come from :mod:`.discovery`; CRD objects are turned into served resources by
:mod:`.crds`; per-kind defaulting and validation live in the store's strategy.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import orjson
import yaml

from kube_runtime import patch, selectors
from kube_runtime.envtest.server import crds, discovery, errors, fieldmanager, openapi, tables
from kube_runtime.envtest.server.errors import ApiError, api_error
from kube_runtime.envtest.server.faults import Faults
from kube_runtime.envtest.server.http import Request, Response, Stream, StreamResponse
from kube_runtime.envtest.server.resources import Registry, ResourceInfo
from kube_runtime.envtest.server.storage import (
    DeleteOptions,
    FieldsHook,
    Obj,
    Store,
    Stored,
    now_rfc3339,
    parse_rfc3339,
)

log = logging.getLogger(__name__)

JSON = "application/json"
_TRUE = ("1", "true", "True")
_OPEN_PATHS = ("/healthz", "/livez", "/readyz", "/version")
_PATCH_TYPES = (
    "application/json-patch+json",
    "application/merge-patch+json",
    "application/strategic-merge-patch+json",
    "application/apply-patch+yaml",
)


#: Resources whose DELETE answers with the object even when it is gone at once (their
#: kube-apiserver storage sets ``ReturnDeletedObject``); the others answer a Success Status.
RETURN_DELETED_OBJECT = frozenset(
    {
        ("", "pods"),
        ("", "persistentvolumeclaims"),
        ("", "persistentvolumes"),
        ("", "namespaces"),
        ("", "services"),
        ("", "serviceaccounts"),
        ("", "resourcequotas"),
        ("", "podtemplates"),
        ("storage.k8s.io", "storageclasses"),
        ("storage.k8s.io", "csidrivers"),
        ("storage.k8s.io", "csinodes"),
        ("storage.k8s.io", "volumeattachments"),
        ("policy", "podsecuritypolicies"),
    }
)


def _deleted_status(info: ResourceInfo, stored: Stored) -> Obj:
    """The Success Status kube-apiserver answers for an object deleted at once."""
    details: Obj = {"name": stored.meta.get("name"), "kind": info.plural}
    if info.group:
        details["group"] = info.group
    details["uid"] = stored.meta.get("uid")
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Success",
        "details": details,
    }


def _removed_pod(pod: Obj, clock: Callable[[], float]) -> Obj:
    """The body of a pod DELETE that removed the pod at once.

    kube-apiserver's graceful-delete path first stamps the pod (``deletionTimestamp``, and
    ``deletionGracePeriodSeconds`` 0; an already terminating pod's timestamp moves back by
    its old grace period) and answers with that; a pod already at grace 0 is answered as is.
    """
    meta = pod["metadata"]
    grace = meta.get("deletionGracePeriodSeconds")
    if meta.get("deletionTimestamp") and not grace:
        return pod
    if meta.get("deletionTimestamp"):
        when = parse_rfc3339(meta["deletionTimestamp"]) - float(grace)
    else:
        when = clock()
    stamped = {**meta, "deletionTimestamp": now_rfc3339(lambda: when)}
    stamped["deletionGracePeriodSeconds"] = 0
    return {**pod, "metadata": stamped}


def _json(status: int, body: Any, headers: dict[str, str] | None = None) -> Response:
    return Response(status, orjson.dumps(body), JSON, headers or {})


def _error(err: ApiError) -> Response:
    return _json(err.code, err.status, errors.response_headers(err))


def _orphan_false(request: Request) -> bool:
    """Whether a DELETE set ``orphanDependents: false`` (query parameter or DeleteOptions body)."""
    if request.param("orphanDependents") in ("0", "false", "False"):
        return True
    try:
        body = orjson.loads(request.body) if request.body else None
    except orjson.JSONDecodeError:
        return False
    return isinstance(body, dict) and body.get("orphanDependents") is False


@dataclass
class Route:
    """A parsed resource URL."""

    info: ResourceInfo
    version: str
    namespace: str | None
    name: str | None
    subresource: str
    watch_path: bool


@dataclass
class RequestRecord:
    """Server-side handling time of one request (for benchmarks)."""

    verb: str
    resource: str
    status: int
    seconds: float


class ApiServer:
    """The request handler. ``crd_hook`` is told about CRD writes so it can (re)serve kinds."""

    def __init__(
        self,
        store: Store,
        faults: Faults | None = None,
        *,
        token: str | None = None,
        address: str = "127.0.0.1:0",
        bookmark_interval: float = 1.0,
        crd_hook: Callable[[str, Obj], None] | None = None,
    ) -> None:
        self.store = store
        self.registry: Registry = store.registry
        self.faults = faults or Faults()
        self.token = token
        self.address = address
        self.bookmark_interval = bookmark_interval
        self.crd_hook = crd_hook
        self.records: deque[RequestRecord] = deque(maxlen=200_000)
        self.record_requests = False
        self._watches: set[_WatchSession] = set()
        self._watch_lock = threading.Lock()
        self.call_later: Callable[[float, Callable[[], None]], Any] | None = None

    # ------------------------------------------------------------- dispatch

    def __call__(self, request: Request) -> Response | StreamResponse:
        started = time.perf_counter()
        try:
            if self.token is not None and request.path.rstrip("/") not in _OPEN_PATHS:
                auth = request.headers.get("authorization", "")
                if auth != f"Bearer {self.token}":
                    raise api_error(401, "Unauthorized", "Unauthorized")
            response = self._dispatch(request)
        except ApiError as e:
            response = _error(e)
        except (ValueError, selectors.SelectorError) as e:
            response = _error(errors.bad_request(str(e)))
        if self.record_requests and isinstance(response, Response):
            self.records.append(
                RequestRecord(
                    request.method, request.path, response.status, time.perf_counter() - started
                )
            )
        return response

    def _dispatch(self, request: Request) -> Response | StreamResponse:
        path = request.path.rstrip("/") or "/"
        if path in ("/healthz", "/livez", "/readyz"):
            return Response(200, b"ok", "text/plain")
        if path == "/version":
            return _json(200, discovery.SERVER_VERSION)
        if path == "/api":
            return _json(200, discovery.api_versions(self.address))
        if path == "/apis":
            return _json(200, discovery.api_group_list(self.registry))
        if path.startswith("/openapi"):
            return openapi.serve(self.registry, path, request.headers.get("accept", ""))
        if path == "/":
            return _json(200, discovery.root_paths(self.registry))
        parts = path.strip("/").split("/")
        if parts[0] not in ("api", "apis"):  # kube-apiserver's index answers with a 404
            return _json(404, discovery.root_paths(self.registry))
        if parts[0] == "api" and len(parts) == 2:
            doc = discovery.api_resource_list(self.registry, "", parts[1])
            return _json(200, doc) if doc else self._not_found_path(parts)
        if parts[0] == "apis" and len(parts) == 2:
            doc = discovery.api_group(self.registry, parts[1])
            return _json(200, doc) if doc else self._not_found_path(parts)
        if parts[0] == "apis" and len(parts) == 3:
            doc = discovery.api_resource_list(self.registry, parts[1], parts[2])
            return _json(200, doc) if doc else self._not_found_path(parts)
        route = self._route(parts)
        if route is None:
            return self._not_found_path(parts)
        return self._resource_request(request, route)

    def _not_found_path(self, parts: list[str]) -> Response:
        """The 404 for a path nothing serves, as kube-apiserver's handler chain answers it.

        Paths of the core API and of groups with built-in resources end in their own
        handlers: a JSON ``Status`` NotFound ("the server could not find the requested
        resource"). Every other ``/apis/<group>`` path (an unknown group, or a CRD group
        whose version, resource or scope is not served, e.g. after its CRD was deleted)
        falls through to the final not-found handler: ``404 page not found`` as text/plain.
        """
        group = parts[1] if parts[0] == "apis" and len(parts) > 1 else None
        if group is not None and not any(
            info.group == group and not info.custom for info in self.registry
        ):
            return Response(
                404,
                b"404 page not found\n",
                "text/plain; charset=utf-8",
                {"X-Content-Type-Options": "nosniff"},
            )
        return _error(
            api_error(404, "the server could not find the requested resource", "NotFound", {})
        )

    def _route(self, parts: list[str]) -> Route | None:
        if parts[0] == "api" and len(parts) >= 3:
            group, version, rest = "", parts[1], parts[2:]
        elif parts[0] == "apis" and len(parts) >= 4:
            group, version, rest = parts[1], parts[2], parts[3:]
        else:
            return None
        watch_path = False
        if rest and rest[0] == "watch":
            watch_path, rest = True, rest[1:]
        namespace = None
        if len(rest) >= 3 and rest[0] == "namespaces":
            candidate = self.registry.lookup(group, version, rest[2])
            if candidate is not None and candidate.namespaced:
                namespace, rest = rest[1], rest[2:]
        if not rest or len(rest) > 3:
            return None
        info = self.registry.lookup(group, version, rest[0])
        if info is None:
            return None
        if info.namespaced is False and namespace is not None:
            return None
        name = rest[1] if len(rest) > 1 else None
        if info.namespaced and namespace is None and name is not None:
            return None  # a namespaced object's path names its namespace
        sub = rest[2] if len(rest) > 2 else ""
        if sub and not (
            (sub == "status" and info.has_status)
            or (sub == "scale" and info.scale is not None)
            or (sub == "finalize" and info.key == ("", "namespaces"))
            or (sub == "binding" and info.key == ("", "pods"))
        ):
            if info.custom and name is not None:
                # The CRD handler answers an unknown subresource of its kind itself.
                raise errors.not_found(info.resource_name(), info.group, name)
            return None
        return Route(info, version, namespace, name, sub, watch_path)

    # -------------------------------------------------------------- verbs

    def _resource_request(self, request: Request, route: Route) -> Response | StreamResponse:
        method = request.method
        watch = route.watch_path or request.param("watch", "") in _TRUE
        if method in ("GET", "HEAD"):
            verb = "watch" if watch else ("get" if route.name else "list")
        else:
            verb = {
                "POST": "create",
                "PUT": "update",
                "PATCH": "patch",
                "DELETE": "delete" if route.name else "deletecollection",
            }.get(method, "")
        binding = route.subresource == "binding"
        if (
            not verb
            or (verb == "create" and route.name and not binding)
            or (binding and verb != "create")
        ):
            raise api_error(
                405,
                "the server does not allow this method on the requested resource",
                "MethodNotAllowed",
            )
        injected = self.faults.check(route.info.plural, verb)
        if injected is not None:
            raise injected
        handler = getattr(self, "_" + verb)
        response: Response | StreamResponse = handler(request, route)
        if isinstance(response, Response):
            response.delay = self.faults.delay(route.info.plural, verb)
        return response

    def _render(self, route: Route, stored: Stored, status: int = 200) -> Response:
        return Response(status, self._raw(route, stored), JSON)

    @staticmethod
    def _raw(route: Route, stored: Stored) -> bytes:
        if route.version != route.info.version:
            obj = dict(stored.obj)
            obj["apiVersion"] = route.info.api_version(route.version)
            return orjson.dumps(obj)
        return stored.raw

    @classmethod
    def _list_items(cls, route: Route, items: Iterable[Stored]) -> bytes:
        """The items of a list body: custom resources whole, built-in kinds without
        ``apiVersion``/``kind`` as kube-apiserver encodes its typed lists."""
        if route.info.custom:
            return b",".join(cls._raw(route, s) for s in items)
        return b",".join(s.untyped_raw for s in items)

    def _get(self, request: Request, route: Route) -> Response:
        assert route.name is not None
        stored = self.store.get(route.info, route.namespace, route.name)
        if route.subresource == "scale":
            return _json(200, self._scale_of(route.info, stored.obj))
        if tables.wants_table(request.headers.get("accept", "")):
            return _json(
                200,
                tables.table(
                    route.info, [stored.obj], str(stored.rv), request.param("includeObject")
                ),
            )
        return self._render(route, stored)

    def _matcher(self, request: Request, route: Route) -> Callable[[Obj], bool] | None:
        label_text = request.param("labelSelector") or ""
        field_text = request.param("fieldSelector") or ""
        label_sel = selectors.parse_label_selector(label_text) if label_text else None
        field_sel = selectors.parse_field_selector(field_text) if field_text else None
        if field_sel is not None:
            allowed = selectors.supported_fields(route.info.kind)
            for fname, _, _ in field_sel.terms:
                if fname not in allowed:
                    raise errors.bad_request(f"field label not supported: {fname}")
        if label_sel is None and field_sel is None:
            return None

        def matches(obj: Obj) -> bool:
            if label_sel is not None and not label_sel.matches(obj["metadata"].get("labels")):
                return False
            return field_sel is None or field_sel.matches(selectors.object_fields(obj))

        return matches

    def _list(self, request: Request, route: Route) -> Response:
        matches = self._matcher(request, route)
        limit_text = request.param("limit")
        limit = int(limit_text) if limit_text else None
        result = self.store.list(
            route.info,
            route.namespace,
            matches,
            limit=limit if limit and limit > 0 else None,
            continue_token=request.param("continue") or None,
        )
        if tables.wants_table(request.headers.get("accept", "")):
            doc = tables.table(
                route.info,
                [s.obj for s in result.items],
                str(result.rv),
                request.param("includeObject"),
            )
            if result.continue_token:
                doc["metadata"]["continue"] = result.continue_token
            return _json(200, doc)
        meta: dict[str, Any] = {"resourceVersion": str(result.rv)}
        if result.continue_token:
            meta["continue"] = result.continue_token
            if matches is None:  # with a selector the count would be inexact: none is given
                meta["remainingItemCount"] = result.remaining
        head = orjson.dumps(
            {
                "kind": route.info.list_kind,
                "apiVersion": route.info.api_version(route.version),
                "metadata": meta,
            }
        )
        body = head[:-1] + b',"items":[' + self._list_items(route, result.items) + b"]}"
        return Response(200, body, JSON)

    def _body(self, request: Request) -> Obj:
        ctype = request.headers.get("content-type", JSON).split(";")[0].strip()
        try:
            if ctype in ("application/yaml", "application/apply-patch+yaml"):
                data = yaml.safe_load(request.body.decode())
            else:
                data = orjson.loads(request.body or b"null")
        except (orjson.JSONDecodeError, yaml.YAMLError, UnicodeDecodeError) as e:
            raise errors.bad_request(f"the request body could not be decoded: {e}") from None
        if not isinstance(data, dict):
            raise errors.bad_request("the request body must be a JSON object")
        return data

    def _check_kind(self, route: Route, body: Obj) -> None:
        kind = body.get("kind")
        api_version = body.get("apiVersion")
        if kind and kind != route.info.kind:
            raise errors.bad_request(
                f"the API version in the data ({api_version}) does not match the expected API version ({route.info.api_version(route.version)})"
                if api_version and api_version != route.info.api_version(route.version)
                else f"the kind in the data ({kind}) does not match the expected kind ({route.info.kind})"
            )

    def _create(self, request: Request, route: Route) -> Response:
        body = self._body(request)
        if route.subresource == "binding":
            return self._bind_pod(route, body)
        if route.subresource:
            raise api_error(405, "create is not supported on subresources", "MethodNotAllowed")
        self._check_kind(route, body)
        if route.info.custom and "create" not in route.info.verbs:
            # apiextensions-apiserver's crdHandler while the CRD's Terminating is True.
            raise api_error(
                405,
                "create not allowed while custom resource definition is terminating",
                "MethodNotAllowed",
                {"group": route.info.group, "kind": route.info.plural},
            )
        body.setdefault("apiVersion", route.info.api_version(route.version))
        dry_run = request.param("dryRun") == "All"
        stored = self.store.create(
            route.info,
            route.namespace,
            body,
            dry_run=dry_run,
            fields=self._fields_hook(request, route),
        )
        if not dry_run:
            self._after_write(route.info, stored.obj, "create")
        return self._render(route, stored, 201)

    @staticmethod
    def _manager(request: Request) -> str:
        """The field manager of a write: ``?fieldManager=`` or the User-Agent's product name."""
        name = request.param("fieldManager")
        if name:
            fieldmanager.validate_field_manager(name)
            return name
        return fieldmanager.manager_from_user_agent(request.headers.get("user-agent", ""))

    def _fields_hook(self, request: Request, route: Route) -> FieldsHook:
        """Records the write in managedFields as an Update by the request's manager."""
        info = route.info
        manager = self._manager(request)
        api_version = info.api_version(route.version)
        subresource = route.subresource
        clock = self.store.clock

        def now() -> str:
            return now_rfc3339(clock)

        def hook(old: Obj | None, new: Obj) -> None:
            fieldmanager.update_managed_fields(
                info, old, new, manager, api_version, subresource, now
            )

        return hook

    def _update(self, request: Request, route: Route) -> Response:
        assert route.name is not None
        body = self._body(request)
        dry_run = request.param("dryRun") == "All"
        if route.subresource == "scale":
            return self._write_scale(
                route, lambda scale: body, dry_run, self._fields_hook(request, route)
            )
        if route.subresource == "finalize":
            return self._finalize_namespace(route, body)
        self._check_kind(route, body)
        stored = self.store.update(
            route.info,
            route.namespace,
            route.name,
            body,
            subresource=route.subresource,
            dry_run=dry_run,
            fields=self._fields_hook(request, route),
        )
        if not dry_run:
            self._after_write(route.info, stored.obj, "update")
        return self._render(route, stored)

    def _patch(self, request: Request, route: Route) -> Response:
        assert route.name is not None
        ctype = request.headers.get("content-type", "").split(";")[0].strip()
        if ctype not in _PATCH_TYPES:
            raise api_error(
                415,
                f"the body of the request was in an unknown format - accepted media types include: {', '.join(_PATCH_TYPES)}",
                "UnsupportedMediaType",
            )
        dry_run = request.param("dryRun") == "All"
        try:
            doc: Any = (
                yaml.safe_load(request.body.decode())
                if ctype == "application/apply-patch+yaml"
                else orjson.loads(request.body or b"null")
            )
        except (orjson.JSONDecodeError, yaml.YAMLError, UnicodeDecodeError) as e:
            raise errors.bad_request(f"the patch could not be decoded: {e}") from None
        info = route.info
        schema = None
        if ctype == "application/strategic-merge-patch+json":
            schema = patch.strategic_schema_for(
                info.group, "Scale" if route.subresource == "scale" else info.kind
            )
            if schema is None and info.custom and route.subresource != "scale":
                raise api_error(
                    415,
                    "the body of the request was in an unknown format - accepted media types include: "
                    "application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml",
                    "UnsupportedMediaType",
                )

        def apply(current: Obj) -> Obj:
            try:
                if ctype == "application/json-patch+json":
                    result = patch.apply_json_patch(current, doc)
                elif ctype == "application/strategic-merge-patch+json":
                    if not isinstance(doc, dict):
                        raise patch.PatchError("the patch must be a JSON object", 400)
                    result = patch.apply_strategic_merge_patch(current, doc, schema)
                elif ctype == "application/apply-patch+yaml" and schema is not None:
                    result = patch.apply_strategic_merge_patch(current, doc, schema)
                else:
                    result = patch.apply_merge_patch(current, doc)
            except patch.PatchError as e:
                raise api_error(e.code, str(e)) from None
            if not isinstance(result, dict):
                raise errors.bad_request("the patch must produce a JSON object")
            return result

        force = request.param("force")
        if ctype == "application/apply-patch+yaml" and route.subresource != "scale":
            return self._apply(request, route, doc, force in _TRUE, dry_run)
        if force is not None and ctype != "application/apply-patch+yaml":
            raise _invalid_patch_options(
                "force", "Forbidden", "may not be specified for non-apply patch"
            )
        hook = self._fields_hook(request, route)
        if route.subresource == "scale":
            return self._write_scale(route, apply, dry_run, hook)
        return self._mutate(route, apply, dry_run, hook)

    def _apply(
        self, request: Request, route: Route, doc: Any, force: bool, dry_run: bool
    ) -> Response:
        """Server-side apply (see :func:`.fieldmanager.apply`); creates a missing object."""
        assert route.name is not None
        info = route.info
        if not isinstance(doc, dict):
            raise errors.bad_request("the applied configuration must be an object")
        manager = request.param("fieldManager")
        if not manager:
            raise _invalid_patch_options("fieldManager", "Required", "is required for apply patch")
        fieldmanager.validate_field_manager(manager)
        api_version = info.api_version(route.version)
        clock = self.store.clock

        def now() -> str:
            return now_rfc3339(clock)

        entries: list[list[Obj]] = []

        def record(old: Obj | None, new: Obj) -> None:
            fieldmanager.set_managed_fields(new, entries[-1])

        def merge(current: Obj | None) -> Obj:
            merged, managed = fieldmanager.apply(
                info, current, doc, manager, api_version, route.subresource, force, now
            )
            entries.append(managed)
            return merged

        if not route.subresource and self.store.try_get(info, route.namespace, route.name) is None:
            meta = doc.get("metadata")
            if isinstance(meta, dict) and meta.get("name", route.name) != route.name:
                raise errors.bad_request(
                    f"the name of the object ({meta.get('name')}) does not match the name on the URL ({route.name})"
                )
            created = merge(None)
            created.setdefault("metadata", {})["name"] = route.name
            stored = self.store.create(
                info, route.namespace, created, dry_run=dry_run, fields=record
            )
            if not dry_run:
                self._after_write(info, stored.obj, "create")
            return self._render(route, stored, 201)
        return self._mutate(route, merge, dry_run, record)

    def _mutate(
        self,
        route: Route,
        change: Callable[[Obj], Obj],
        dry_run: bool,
        fields: FieldsHook | None,
    ) -> Response:
        """Read-modify-write the routed object (a patch or an apply to an existing one)."""
        assert route.name is not None
        stored = self.store.mutate(
            route.info,
            route.namespace,
            route.name,
            change,
            subresource=route.subresource,
            dry_run=dry_run,
            fields=fields,
        )
        if not dry_run:
            self._after_write(route.info, stored.obj, "update")
        return self._render(route, stored)

    def _delete_options(self, request: Request) -> DeleteOptions:
        opts = DeleteOptions()
        if request.body:
            try:
                body = orjson.loads(request.body)
            except orjson.JSONDecodeError:
                raise errors.bad_request("the delete options could not be decoded") from None
            if isinstance(body, dict):
                pre = body.get("preconditions") or {}
                opts.uid = pre.get("uid")
                opts.resource_version = pre.get("resourceVersion")
                opts.propagation = body.get("propagationPolicy")
                if body.get("orphanDependents") is True and not opts.propagation:
                    opts.propagation = "Orphan"
                if body.get("gracePeriodSeconds") is not None:
                    opts.grace_seconds = int(body["gracePeriodSeconds"])
                if "All" in (body.get("dryRun") or []):
                    opts.dry_run = True
        if request.param("propagationPolicy"):
            opts.propagation = request.param("propagationPolicy")
        if request.param("gracePeriodSeconds"):
            opts.grace_seconds = int(request.param("gracePeriodSeconds") or 0)
        if request.param("orphanDependents") in _TRUE and not opts.propagation:
            opts.propagation = "Orphan"
        if request.param("dryRun") == "All":
            opts.dry_run = True
        if opts.propagation not in (None, "Orphan", "Background", "Foreground"):
            raise errors.bad_request(f"invalid propagationPolicy: {opts.propagation}")
        return opts

    def _delete(self, request: Request, route: Route) -> Response:
        assert route.name is not None
        if route.subresource:
            raise api_error(405, "delete is not supported on subresources", "MethodNotAllowed")
        opts = self._delete_options(request)
        info = route.info
        is_crd = info.key == crds.CRD_KEY
        # A CRD's first DELETE only marks it (cleanup finalizer, Terminating condition): the
        # CRD finalizer removes its objects, then the CRD, as apiextensions-apiserver does.
        stored, removed = self.store.delete(
            info, route.namespace, route.name, opts, mark=crds.mark_deleting if is_crd else None
        )
        if is_crd and self.crd_hook and not opts.dry_run:
            # After the store accepted the deletion: a failed precondition changes nothing.
            self.crd_hook("delete", stored.obj)
        if removed and info.key not in RETURN_DELETED_OBJECT:
            return _json(200, _deleted_status(info, stored))
        if removed and info.key == ("", "pods"):
            return _json(200, _removed_pod(stored.obj, self.store.clock))
        # kube-apiserver answers 202 only for a pending deletion asked with orphanDependents=false.
        return self._render(route, stored, 202 if not removed and _orphan_false(request) else 200)

    def _deletecollection(self, request: Request, route: Route) -> Response:
        matches = self._matcher(request, route)
        opts = self._delete_options(request)
        deleted = self.store.delete_collection(route.info, route.namespace, matches, opts)
        if not opts.dry_run:
            for s in deleted:
                self._after_write(route.info, s.obj, "delete")
        head = orjson.dumps(
            {
                "kind": route.info.list_kind,
                "apiVersion": route.info.api_version(route.version),
                "metadata": {"resourceVersion": str(self.store.resource_version)},
            }
        )
        return Response(
            200, head[:-1] + b',"items":[' + self._list_items(route, deleted) + b"]}", JSON
        )

    def _after_write(self, info: ResourceInfo, obj: Obj, op: str) -> None:
        if info.key == ("apiextensions.k8s.io", "customresourcedefinitions") and self.crd_hook:
            self.crd_hook(op, obj)

    def _finalize_namespace(self, route: Route, body: Obj) -> Response:
        assert route.name is not None

        def set_finalizers(current: Obj) -> Obj:
            current["spec"] = {
                **(current.get("spec") or {}),
                "finalizers": (body.get("spec") or {}).get("finalizers") or [],
            }
            return current

        stored = self.store.mutate(
            route.info, None, route.name, set_finalizers, subresource="finalize"
        )
        return self._render(route, stored)

    def _bind_pod(self, route: Route, body: Obj) -> Response:
        """POST pods/{name}/binding: assign the pod to ``target.name`` as the scheduler does.

        As kube-apiserver: the binding's name must be the pod's, ``metadata.uid`` (when given)
        is a precondition, a pod being deleted or already bound is a 409, and the pod gets
        ``spec.nodeName``, the binding's annotations and ``PodScheduled=True``. The answer is
        a Success Status with code 201. (Two commits here, spec then status; one in upstream.)
        """
        assert route.name is not None
        meta = body.get("metadata") or {}
        target = body.get("target") or {}
        if meta.get("name", route.name) != route.name:
            raise errors.bad_request(
                f"the name of the object ({meta.get('name')}) does not match the name on the URL ({route.name})"
            )
        node = target.get("name")
        if not node or target.get("kind", "Node") not in ("", "Node"):
            raise api_error(
                422,
                f'Binding.core "{route.name}" is invalid: target: a binding must name a Node',
                "Invalid",
            )
        pod_ref = f'pods "{route.name}"'

        def bind(current: Obj) -> Obj:
            cmeta = current["metadata"]
            if meta.get("uid") and meta["uid"] != cmeta.get("uid"):
                raise api_error(
                    409,
                    f"Operation cannot be fulfilled on {pod_ref}: Precondition failed: "
                    f"UID in precondition: {meta['uid']}, UID in object meta: {cmeta.get('uid')}",
                    "Conflict",
                )
            if cmeta.get("deletionTimestamp"):
                raise api_error(
                    409,
                    f"Operation cannot be fulfilled on {pod_ref}: pod {route.name} is being "
                    "deleted, cannot be assigned to a host",
                    "Conflict",
                )
            spec = current.setdefault("spec", {})
            if spec.get("nodeName"):
                raise api_error(
                    409,
                    f"Operation cannot be fulfilled on {pod_ref}: pod {route.name} is already "
                    f'assigned to node "{spec["nodeName"]}"',
                    "Conflict",
                )
            spec["nodeName"] = node
            if meta.get("annotations"):
                cmeta["annotations"] = {**(cmeta.get("annotations") or {}), **meta["annotations"]}
            return current

        bound = self.store.mutate(
            route.info, route.namespace, route.name, bind, subresource="binding"
        )

        def scheduled(current: Obj) -> Obj:
            if current["metadata"].get("uid") != bound.meta.get("uid"):
                return current
            status = current.setdefault("status", {})
            conditions = [
                c for c in status.get("conditions") or () if c.get("type") != "PodScheduled"
            ]
            old = next(
                (c for c in status.get("conditions") or () if c.get("type") == "PodScheduled"), None
            )
            since = (
                (old or {}).get("lastTransitionTime")
                if (old or {}).get("status") == "True"
                else None
            )
            conditions.append(
                {
                    "type": "PodScheduled",
                    "status": "True",
                    "lastProbeTime": None,
                    "lastTransitionTime": since or now_rfc3339(self.store.clock),
                }
            )
            status["conditions"] = conditions
            return current

        try:
            self.store.mutate(
                route.info, route.namespace, route.name, scheduled, subresource="status"
            )
        except ApiError as e:
            if e.code != 404:
                raise
        return _json(
            201,
            {
                "kind": "Status",
                "apiVersion": "v1",
                "metadata": {},
                "status": "Success",
                "code": 201,
            },
        )

    # -------------------------------------------------------------- scale

    def _scale_of(self, info: ResourceInfo, obj: Obj) -> Obj:
        assert info.scale is not None
        spec_replicas = _get_path(obj, info.scale.spec_replicas_path)
        status_replicas = _get_path(obj, info.scale.status_replicas_path)
        selector: str | None = None
        if info.scale.label_selector_path:
            if info.custom:
                value = _get_path(obj, info.scale.label_selector_path)
                selector = str(value) if value else None
            else:
                sel = (obj.get("spec") or {}).get("selector")
                selector = selectors.format_label_selector(sel) if sel else None
                if selector == "<none>":
                    selector = ""
        meta = obj["metadata"]
        scale: Obj = {
            "kind": "Scale",
            "apiVersion": "autoscaling/v1",
            "metadata": {
                k: meta[k]
                for k in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp")
                if k in meta
            },
            "spec": {"replicas": int(spec_replicas or 0)},
            "status": {"replicas": int(status_replicas or 0)},
        }
        if selector:
            scale["status"]["selector"] = selector
        return scale

    def _write_scale(
        self,
        route: Route,
        change: Callable[[Obj], Obj],
        dry_run: bool,
        fields: FieldsHook | None = None,
    ) -> Response:
        info = route.info
        assert route.name is not None and info.scale is not None
        scale_paths = info.scale
        result: dict[str, Obj] = {}

        def apply(current: Obj) -> Obj:
            scale = change(self._scale_of(info, current))
            if not isinstance(scale, dict):
                raise errors.bad_request("the scale must be a JSON object")
            replicas = (scale.get("spec") or {}).get("replicas")
            if not isinstance(replicas, int) or isinstance(replicas, bool) or replicas < 0:
                raise errors.invalid(
                    "Scale",
                    "autoscaling",
                    route.name or "",
                    [
                        errors.Cause(
                            "spec.replicas",
                            "FieldValueInvalid",
                            f"Invalid value: {replicas}: must be greater than or equal to 0",
                        )
                    ],
                )
            rv = (scale.get("metadata") or {}).get("resourceVersion")
            if rv and str(rv) != current["metadata"]["resourceVersion"]:
                raise errors.conflict(
                    info.resource_name(), info.group, route.name or "", errors.STALE_MESSAGE
                )
            _set_path(current, scale_paths.spec_replicas_path, replicas)
            current["metadata"].pop("resourceVersion", None)
            result["scale"] = scale
            return current

        stored = self.store.mutate(
            info, route.namespace, route.name, apply, dry_run=dry_run, fields=fields
        )
        return _json(200, self._scale_of(info, stored.obj))

    # -------------------------------------------------------------- watch

    def _watch(self, request: Request, route: Route) -> StreamResponse:
        matches = self._matcher(request, route)
        if route.name:
            name = route.name
            inner = matches

            def matches_name(obj: Obj) -> bool:
                return obj["metadata"].get("name") == name and (inner is None or inner(obj))

            matches = matches_name
        timeout_text = request.param("timeoutSeconds")
        timeout = float(timeout_text) if timeout_text else 1800.0
        session = _WatchSession(
            self,
            route,
            matches or (lambda obj: True),
            since=request.param("resourceVersion") or "",
            bookmarks=request.param("allowWatchBookmarks", "") in _TRUE,
            initial_events=request.param("sendInitialEvents", "") in _TRUE,
            table=tables.wants_table(request.headers.get("accept", "")),
            include_object=request.param("includeObject"),
            timeout=timeout,
            drop_every=self.faults.watch_drop_every,
        )
        return StreamResponse(session.start, 200, JSON)

    def bookmark_tick(self) -> None:
        """Send a BOOKMARK to every watch that asked for them (called periodically)."""
        with self._watch_lock:
            sessions = list(self._watches)
        for s in sessions:
            s.bookmark()

    def register(self, session: _WatchSession) -> None:
        with self._watch_lock:
            self._watches.add(session)

    def unregister(self, session: _WatchSession) -> None:
        with self._watch_lock:
            self._watches.discard(session)


class _WatchSession:
    """One watch stream: replay, live events, bookmarks, timeout, injected drops."""

    def __init__(
        self,
        server: ApiServer,
        route: Route,
        matches: Callable[[Obj], bool],
        *,
        since: str,
        bookmarks: bool,
        initial_events: bool,
        table: bool,
        include_object: str | None,
        timeout: float,
        drop_every: int | None,
    ) -> None:
        self.server = server
        self.route = route
        self.matches = matches
        self.since = since
        self.bookmarks = bookmarks
        self.initial_events = initial_events
        self.table = table
        self.include_object = include_object
        self.timeout = timeout
        self.drop_every = drop_every
        self.sent = 0
        self.stream: Stream | None = None
        self.handle: Any = None
        self.api_version = route.info.api_version(route.version)

    def start(self, stream: Stream) -> None:
        self.stream = stream
        stream.on_close = self.stop
        store = self.server.store
        since = self.since
        if self.initial_events and since in ("", "0"):
            since = ""
        try:
            with store.lock:
                self.handle = store.watch(
                    self.route.info, self.route.namespace, since, self.matches, self.deliver
                )
                if self.initial_events:
                    self._write_bookmark(store.resource_version, initial_end=True)
        except ApiError as e:
            stream.write(b'{"type":"ERROR","object":' + orjson.dumps(e.status) + b"}\n")
            stream.close()
            return
        self.server.register(self)
        if self.server.call_later is not None:
            self.server.call_later(self.timeout, stream.close)

    def deliver(self, type_: str, stored: Stored, rv: int) -> None:
        stream = self.stream
        if stream is None or stream.closed:
            return
        if self.table:
            doc = tables.table(self.route.info, [stored.obj], str(rv), self.include_object)
            payload = orjson.dumps(doc)
        elif self.route.version != self.route.info.version:
            obj = dict(stored.obj)
            obj["apiVersion"] = self.api_version
            payload = orjson.dumps(obj)
        else:
            payload = stored.raw
        stream.write(b'{"type":"' + type_.encode() + b'","object":' + payload + b"}\n")
        self.sent += 1
        if self.drop_every and self.sent >= self.drop_every:
            stream.close()

    def _write_bookmark(self, rv: int, initial_end: bool = False) -> None:
        if self.stream is None:
            return
        meta: dict[str, Any] = {"resourceVersion": str(rv)}
        if initial_end:
            meta["annotations"] = {"k8s.io/initial-events-end": "true"}
        obj = {"kind": self.route.info.kind, "apiVersion": self.api_version, "metadata": meta}
        self.stream.write(b'{"type":"BOOKMARK","object":' + orjson.dumps(obj) + b"}\n")

    def bookmark(self) -> None:
        if not self.bookmarks:
            return
        with self.server.store.lock:
            self._write_bookmark(self.server.store.resource_version)

    def stop(self) -> None:
        if self.handle is not None:
            self.handle.stop()
            self.handle = None
        self.server.unregister(self)


_REASON_TEXT = {"Required": "Required value", "Forbidden": "Forbidden"}


def _invalid_patch_options(field: str, reason: str, detail: str) -> ApiError:
    """422 for PatchOptions kube-apiserver refuses (``fieldManager`` missing on apply, ...)."""
    return api_error(
        422,
        f'PatchOptions.meta.k8s.io "" is invalid: {field}: {_REASON_TEXT[reason]}: {detail}',
        "Invalid",
        {
            "group": "meta.k8s.io",
            "kind": "PatchOptions",
            "causes": [
                {
                    "reason": "FieldValueRequired"
                    if reason == "Required"
                    else "FieldValueForbidden",
                    "message": f"{_REASON_TEXT[reason]}: {detail}",
                    "field": field,
                }
            ],
        },
    )


def _get_path(obj: Obj, path: str) -> Any:
    cur: Any = obj
    for part in path.lstrip(".").split("."):
        if not isinstance(cur, dict):
            return None
        cur = cur.get(part)
    return cur


def _set_path(obj: Obj, path: str, value: Any) -> None:
    parts = path.lstrip(".").split(".")
    cur = obj
    for part in parts[:-1]:
        nxt = cur.get(part)
        if not isinstance(nxt, dict):
            nxt = {}
            cur[part] = nxt
        cur = nxt
    cur[parts[-1]] = value
