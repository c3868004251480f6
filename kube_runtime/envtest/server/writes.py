"""The write verbs: ``create``, ``update`` (PUT) and ``patch`` (JSON, merge, strategic, apply).

Every write records its field manager in ``managedFields`` (``?fieldManager=`` or the
User-Agent's product); a server-side apply (:func:`.fieldmanager.apply`) creates a missing
object. ``dryRun=All`` runs everything but the commit. ``after_write`` hears of each committed
write (the server tells the CRD serving about CRD writes).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson

from kube_runtime import patch
from kube_runtime.client import _apifacts as facts
from kube_runtime.envtest.server import (
    bodylimits,
    errors,
    fieldmanager,
    fieldvalidation,
    memo,
    shapes,
    subresources,
)
from kube_runtime.envtest.server.http import Request, Response
from kube_runtime.envtest.server.resources import ResourceInfo
from kube_runtime.envtest.server.responses import JSON, object_response
from kube_runtime.envtest.server.routing import TRUE, Route
from kube_runtime.envtest.server.storage import FieldsHook, Obj, Store, Stored, now_rfc3339

#: ``after_write(op, info, obj)`` with op ``create``, ``update`` or ``delete``.
AfterWrite = Callable[[str, ResourceInfo, Obj], None]

_PATCH_TYPES = (
    "application/json-patch+json",
    "application/merge-patch+json",
    "application/strategic-merge-patch+json",
    "application/apply-patch+yaml",
)
_APPLY = "application/apply-patch+yaml"
_STRATEGIC = "application/strategic-merge-patch+json"
_OPTIONS_REASONS = {"Required": "FieldValueRequired", "Forbidden": "FieldValueForbidden"}
_OPTIONS_TEXT = {"Required": "Required value", "Forbidden": "Forbidden"}


def _unsupported_media_type(accepted: str) -> errors.ApiError:
    return facts.unsupported_media_type(accepted)


def _invalid_patch_options(field: str, reason: str, detail: str) -> errors.ApiError:
    """422 for PatchOptions kube-apiserver refuses (``fieldManager`` missing on apply, ...)."""
    message = f"{_OPTIONS_TEXT[reason]}: {detail}"
    return errors.api_error(
        422,
        f'PatchOptions.meta.k8s.io "" is invalid: {field}: {message}',
        "Invalid",
        {
            "group": "meta.k8s.io",
            "kind": "PatchOptions",
            "causes": [{"reason": _OPTIONS_REASONS[reason], "message": message, "field": field}],
        },
    )


def _body_kind(route: Route) -> tuple[str, str]:
    """The (group, kind) a write's body holds: the subresource's own kind or the resource's."""
    if route.subresource == "scale":
        return "autoscaling", "Scale"
    if route.subresource == "binding":
        return "", "Binding"
    return route.info.group, route.info.kind


def decode_body(request: Request, route: Route) -> Obj:
    """The request body as the route's object (YAML for the YAML content types), within the
    limits of :mod:`.bodylimits` and with the JSON types of :mod:`.shapes`; 400 otherwise.
    A ``null`` body is an empty object, as Go decodes it."""
    return _decode_body(request, route)[0]


def _decode_body(request: Request, route: Route) -> tuple[Obj, bool]:
    """:func:`decode_body`, and whether the body is JSON that orjson writes back byte for
    byte (:func:`.bodylimits.decode_json_written`): then it names no field twice."""
    ctype = request.headers.get("content-type", JSON).split(";")[0].strip()
    group, kind = _body_kind(route)
    written = False
    if ctype in ("application/yaml", _APPLY):
        data = bodylimits.decode_yaml(request.body, kind)
    else:
        data, written = bodylimits.decode_json_written(request.body, kind)
    if data is None:
        data = {}
    main = not route.subresource
    shapes.check_object(
        group,
        route.version,
        kind,
        data,
        custom=route.info.custom and main,
        # the main resource of a kind with a status subresource keeps the stored status
        status=not (main and route.info.has_status and request.method == "PUT"),
    )
    assert isinstance(data, dict)
    return data, written


def _check_patched(route: Route, group: str, kind: str, result: Any, custom: bool) -> None:
    """422 when a patch produced a value of the wrong JSON type (kube-apiserver cannot decode
    the patched object: it names the ``patch`` as the invalid field)."""
    if isinstance(result, dict):
        status = route.subresource == "status" or not route.info.has_status
        found = shapes.mismatch(group, kind, result, custom=custom, status=status)
        if found is None:
            return
        problem = (
            f'{kind} in version "{route.version}" cannot be handled as a {kind}: {found.message()}'
        )
    else:
        problem = (
            "couldn't get version/kind; json parse error: the patched object is no JSON object"
        )
    shown = orjson.dumps(result).decode(errors="replace")
    if len(shown) > 256:
        shown = shown[:256] + "..."
    raise errors.invalid(
        route.info.kind,
        route.info.group,
        route.name or "",
        [
            errors.Cause(
                "patch",
                "FieldValueInvalid",
                f'Invalid value: "{shown}": {problem}',
            )
        ],
    )


def _to_storage(route: Route, obj: Obj) -> Obj:
    """``obj`` (in the route's version) in the storage version, when the CRD converts
    through a webhook or the resource is a view of another's storage (``""``: that
    resource's form; else unchanged: the store sets ``apiVersion``)."""
    if route.info.stored_as is not None and route.convert is not None:
        return route.convert([obj], "")[0]
    if route.convert is None or route.version == route.info.version:
        return obj
    return route.convert([obj], route.info.version)[0]


def _field_warnings(request: Request, route: Route, body: Obj, written: bool) -> list[str]:
    """Field validation (``fieldValidation``) of a create's or update's decoded ``body``
    against the raw request body (``written``: it is ``body`` as orjson writes it, so names
    no field twice): the warnings; raises 400 under ``Strict``."""
    return fieldvalidation.check(
        request,
        route.info,
        route.version,
        route.info.kind,
        body,
        None if written else fieldvalidation.json_body(request),
    )


def _check_kind(route: Route, body: Obj) -> None:
    kind = body.get("kind")
    api_version = body.get("apiVersion")
    if kind and kind != route.info.kind:
        raise errors.bad_request(
            f"the API version in the data ({api_version}) does not match the expected API version ({route.info.api_version(route.version)})"
            if api_version and api_version != route.info.api_version(route.version)
            else f"the kind in the data ({kind}) does not match the expected kind ({route.info.kind})"
        )


def _check_name(route: Route, meta: Any) -> None:
    if isinstance(meta, dict) and meta.get("name", route.name) != route.name:
        raise errors.bad_request(
            f"the name of the object ({meta.get('name')}) does not match the name on the URL ({route.name})"
        )


def _manager(request: Request) -> str:
    """The field manager of a write: ``?fieldManager=`` or the User-Agent's product name."""
    name = request.param("fieldManager")
    if name:
        fieldmanager.validate_field_manager(name)
        return name
    return fieldmanager.manager_from_user_agent(request.headers.get("user-agent", ""))


def _refuse_undeclared_fields(route: Route, doc: Obj) -> None:
    """Server-side apply types the applied configuration against the kind's schema, whatever
    ``fieldValidation`` says: a field the schema does not declare fails the request as in
    kube-apiserver, a 500 with no reason, ``failed to create typed patch object (NS/NAME;
    GROUP/VERSION, Kind=KIND): .PATH: field not declared in schema``."""
    info = route.info
    found = fieldvalidation.unknown_fields(info, route.version, info.kind, doc, drop=False)
    if not found:
        return
    problems = [f".{path}: field not declared in schema" for path in found]
    detail = problems[0] if len(problems) == 1 else "errors:\n  " + "\n  ".join(problems)
    group_version = f"{info.group}/{route.version}"  # "/v1" for the core group
    message = (
        f"failed to create typed patch object ({route.namespace or ''}/{route.name}; "
        f"{group_version}, Kind={info.kind}): {detail}"
    )
    raise errors.internal_failure(message)


class Writes:
    """The write verbs on ``store``."""

    def __init__(self, store: Store, after_write: AfterWrite) -> None:
        self.store = store
        self.after_write = after_write

    def _answer(self, op: str, route: Route, stored: Stored, dry_run: bool) -> Response:
        """The object written by ``op`` (201 for a create), after telling ``after_write``."""
        if not dry_run:
            self.after_write(op, route.info, stored.obj)
        return object_response(route, stored, 201 if op == "create" else 200)

    def _now(self) -> str:
        return now_rfc3339(self.store.clock.time)

    def _fields_hook(self, request: Request, route: Route) -> FieldsHook:
        """Records the write in managedFields as an Update by the request's manager."""
        info = route.info
        manager = _manager(request)
        api_version = info.api_version(route.version)
        subresource = route.subresource
        now = self._now

        convert = route.convert if info.stored_as is not None else None
        # the encoding of a created pod's spec the strategy validated (KubeStrategy's)
        known_spec = self.store.strategy.validated_spec_encoding

        def hook(old: Obj | None, new: Obj) -> None:
            if convert is not None:  # a view's fields are its own (new's metadata is shared)
                old = convert([old], route.version)[0] if old is not None else None
                new = convert([new], route.version)[0]
            encoded = known_spec(new) if old is None else None
            if encoded is not None:  # the spec's field set keyed without encoding it again
                memo.known_key(new["spec"], encoded)
            try:
                fieldmanager.update_managed_fields(
                    info, old, new, manager, api_version, subresource, now
                )
            finally:
                if encoded is not None:
                    memo.forget_key()

        return hook

    def create(self, request: Request, route: Route) -> Response:
        body, written = _decode_body(request, route)
        if route.subresource == "binding":
            return subresources.bind_pod(self.store, route, body)
        if route.subresource:
            raise errors.method_not_allowed("create is not supported on subresources")
        _check_kind(route, body)
        if route.info.custom and "create" not in route.info.verbs:
            # apiextensions-apiserver's crdHandler while the CRD's Terminating is True.
            raise errors.method_not_allowed(
                "create not allowed while custom resource definition is terminating",
                {"group": route.info.group, "kind": route.info.plural},
            )
        found = _field_warnings(request, route, body, written)
        body.setdefault("apiVersion", route.info.api_version(route.version))
        body = _to_storage(route, body)
        dry_run = request.param("dryRun") == "All"
        stored = self.store.create(
            route.info,
            route.namespace,
            body,
            dry_run=dry_run,
            fields=self._fields_hook(request, route),
        )
        return fieldvalidation.add_warnings(self._answer("create", route, stored, dry_run), found)

    def update(self, request: Request, route: Route) -> Response:
        assert route.name is not None
        body, written = _decode_body(request, route)
        dry_run = request.param("dryRun") == "All"
        if route.subresource == "scale":
            return subresources.write_scale(
                self.store, route, lambda scale: body, dry_run, self._fields_hook(request, route)
            )
        if route.subresource == "finalize":
            return subresources.finalize_namespace(self.store, route, body)
        _check_kind(route, body)
        found = _field_warnings(request, route, body, written)
        if route.convert is not None:
            body.setdefault("apiVersion", route.info.api_version(route.version))
            body = _to_storage(route, body)
        answer = self._write(
            self.store.update, route, body, dry_run, self._fields_hook(request, route)
        )
        return fieldvalidation.add_warnings(answer, found)

    def patch(self, request: Request, route: Route) -> Response:
        assert route.name is not None
        ctype = request.headers.get("content-type", "").split(";")[0].strip()
        if ctype not in _PATCH_TYPES:
            raise _unsupported_media_type(", ".join(_PATCH_TYPES))
        dry_run = request.param("dryRun") == "All"
        info = route.info
        group, kind = _body_kind(route)
        doc: Any = (
            bodylimits.decode_yaml(request.body, kind)
            if ctype == _APPLY
            else bodylimits.decode_json(request.body, kind)
        )
        custom = info.custom and route.subresource != "scale"
        schema = None
        if ctype == _STRATEGIC:
            schema = patch.strategic_schema_for(
                info.group, "Scale" if route.subresource == "scale" else info.kind
            )
            if schema is None and info.custom and route.subresource != "scale":
                raise _unsupported_media_type(
                    "application/json-patch+json, application/merge-patch+json, "
                    "application/apply-patch+yaml"
                )

        def apply(current: Obj) -> Obj:
            if route.convert is not None and route.subresource != "scale":
                current = route.convert([current], route.version)[0]
            try:
                if ctype == "application/json-patch+json":
                    result = patch.apply_json_patch(current, doc)
                elif ctype == _STRATEGIC:
                    if not isinstance(doc, dict):
                        raise patch.PatchError("the patch must be a JSON object", 400)
                    result = patch.apply_strategic_merge_patch(current, doc, schema)
                elif ctype == _APPLY and schema is not None:
                    result = patch.apply_strategic_merge_patch(current, doc, schema)
                else:
                    result = patch.apply_merge_patch(current, doc)
            except patch.PatchError as e:
                raise errors.api_error(e.code, str(e)) from None
            _check_patched(route, group, kind, result, custom)
            found[:] = fieldvalidation.check(request, info, route.version, kind, result, body)
            return _to_storage(route, result) if route.subresource != "scale" else result

        found: list[str] = []
        body = request.body if ctype in (_STRATEGIC, "application/merge-patch+json") else None

        force = request.param("force")
        if ctype == _APPLY and route.subresource != "scale":
            return self._apply(request, route, doc, force in TRUE, dry_run)
        if force is not None and ctype != _APPLY:
            raise _invalid_patch_options(
                "force", "Forbidden", "may not be specified for non-apply patch"
            )
        hook = self._fields_hook(request, route)
        if route.subresource == "scale":
            response = subresources.write_scale(self.store, route, apply, dry_run, hook)
        else:
            response = self._write(self.store.mutate, route, apply, dry_run, hook)
        return fieldvalidation.add_warnings(response, found)

    def _apply(
        self, request: Request, route: Route, doc: Any, force: bool, dry_run: bool
    ) -> Response:
        """Server-side apply (see :func:`.fieldmanager.apply`); creates a missing object."""
        assert route.name is not None
        info = route.info
        if not isinstance(doc, dict):
            raise errors.bad_request("the applied configuration must be an object")
        shapes.check_object(info.group, route.version, info.kind, doc, custom=info.custom)
        if not info.custom:
            _refuse_undeclared_fields(route, doc)
        manager = request.param("fieldManager")
        if not manager:
            raise _invalid_patch_options("fieldManager", "Required", "is required for apply patch")
        fieldmanager.validate_field_manager(manager)
        api_version = info.api_version(route.version)
        entries: list[list[Obj]] = []

        def record(old: Obj | None, new: Obj) -> None:
            fieldmanager.set_managed_fields(new, entries[-1])

        def merge(current: Obj | None) -> Obj:
            # a CRD converting through a webhook: applied in the request's version (the
            # live object converted to it first), stored in the storage version
            if current is not None and route.convert is not None:
                current = route.convert([current], route.version)[0]
            merged, managed = fieldmanager.apply(
                info, current, doc, manager, api_version, route.subresource, force, self._now
            )
            entries.append(managed)
            return merged if current is None else _to_storage(route, merged)

        if not route.subresource and self.store.try_get(info, route.namespace, route.name) is None:
            _check_name(route, doc.get("metadata"))
            created = merge(None)
            created.setdefault("metadata", {})["name"] = route.name
            created = _to_storage(route, created)
            stored = self.store.create(
                info, route.namespace, created, dry_run=dry_run, fields=record
            )
            return self._answer("create", route, stored, dry_run)
        return self._write(self.store.mutate, route, merge, dry_run, record)

    def _write(
        self,
        write: Callable[..., Stored],
        route: Route,
        what: Obj | Callable[[Obj], Obj],
        dry_run: bool,
        fields: FieldsHook | None,
    ) -> Response:
        """Write the routed object with the store's ``write``: ``Store.update`` with the new
        body, or ``Store.mutate`` with a change of the stored object (a patch, an apply to an
        existing object); the answer."""
        assert route.name is not None
        stored = write(
            route.info,
            route.namespace,
            route.name,
            what,
            subresource=route.subresource,
            dry_run=dry_run,
            fields=fields,
        )
        return self._answer("update", route, stored, dry_run)
