"""The ``delete`` and ``deletecollection`` verbs and what a DELETE answers.

DeleteOptions come from the body and the query (the query wins). An object removed at once is
answered with itself for the kinds whose kube-apiserver storage returns the deleted object
(:data:`RETURN_DELETED_OBJECT`), else with a Success Status; a pending deletion (finalizers,
a grace period) answers the object, with 202 when asked with ``orphanDependents=false``. A
CRD's first DELETE only marks it; the CRD finalizer removes its objects, then the CRD.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kube_runtime.client._apifacts import RETURN_DELETED_OBJECT
from kube_runtime.client._registry import deleted_status
from kube_runtime.envtest.server import bodylimits, crds, errors, shapes
from kube_runtime.envtest.server.http import Request, Response
from kube_runtime.envtest.server.reads import matcher
from kube_runtime.envtest.server.resources import ResourceInfo
from kube_runtime.envtest.server.responses import json_response, list_response, object_response
from kube_runtime.envtest.server.routing import TRUE, Route
from kube_runtime.envtest.server.storage import (
    DeleteOptions,
    Obj,
    Store,
    Stored,
    now_rfc3339,
    parse_rfc3339,
)
from kube_runtime.envtest.server.writes import AfterWrite


def _deleted_status(info: ResourceInfo, stored: Stored) -> Obj:
    """The Success Status kube-apiserver answers for an object deleted at once."""
    return deleted_status(info.group, info.plural, stored.meta.get("name"), stored.meta.get("uid"))


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


def _orphan_false(request: Request, body: Any) -> bool:
    """Whether a DELETE set ``orphanDependents: false`` (query parameter or DeleteOptions body)."""
    if request.param("orphanDependents") in ("0", "false", "False"):
        return True
    return isinstance(body, dict) and body.get("orphanDependents") is False


_POLICIES = ("Foreground", "Background", "Orphan")


def _invalid_options(field: str, reason: str, message: str) -> errors.ApiError:
    """422 for DeleteOptions kube-apiserver's validation refuses."""
    return errors.api_error(
        422,
        f'DeleteOptions.meta.k8s.io "" is invalid: {field}: {message}',
        "Invalid",
        {
            "group": "meta.k8s.io",
            "kind": "DeleteOptions",
            "causes": [{"reason": reason, "message": message, "field": field}],
        },
    )


def decode_delete_options(request: Request) -> Any:
    """The DeleteOptions body (None without one); 400 when it does not decode as one."""
    if not request.body:
        return None
    body = bodylimits.decode_json(request.body, "DeleteOptions")
    if body is not None:
        shapes.check_delete_options(body)
    return body


def delete_options(request: Request, body: Any = None) -> DeleteOptions:
    """The request's DeleteOptions (``body`` decoded, then query parameters); 400 for a
    value that does not decode, 422 for an unsupported policy or dry-run value."""
    opts = DeleteOptions()
    if isinstance(body, dict):
        pre = body.get("preconditions") or {}
        opts.uid = pre.get("uid") or None
        opts.resource_version = pre.get("resourceVersion") or None
        opts.propagation = body.get("propagationPolicy")
        if body.get("orphanDependents") is True and not opts.propagation:
            opts.propagation = "Orphan"
        if body.get("gracePeriodSeconds") is not None:
            opts.grace_seconds = body["gracePeriodSeconds"]
        dry_run = body.get("dryRun") or []
        bad = [v for v in dry_run if v != "All"]
        if bad:
            shown = ", ".join(f'"{v}"' for v in dry_run)
            raise _invalid_options(
                "dryRun",
                "FieldValueNotSupported",
                f'Unsupported value: []string{{{shown}}}: supported values: "All"',
            )
        opts.dry_run = bool(dry_run)
    if request.param("propagationPolicy"):
        opts.propagation = request.param("propagationPolicy")
    grace = request.param("gracePeriodSeconds")
    if grace:
        try:
            opts.grace_seconds = int(grace)
        except ValueError:
            raise errors.bad_request(
                f'strconv.ParseInt: parsing "{grace}": invalid syntax'
            ) from None
    if request.param("orphanDependents") in TRUE and not opts.propagation:
        opts.propagation = "Orphan"
    if request.param("dryRun") == "All":
        opts.dry_run = True
    if opts.propagation is not None and opts.propagation not in _POLICIES:
        supported = ", ".join(f'"{p}"' for p in _POLICIES)
        raise _invalid_options(
            "propagationPolicy",
            "FieldValueNotSupported",
            f'Unsupported value: "{opts.propagation}": supported values: {supported}, "nil"',
        )
    return opts


class Deletion:
    """The delete verbs on ``store``; ``after_write`` hears of each deletion committed."""

    def __init__(self, store: Store, after_write: AfterWrite) -> None:
        self.store = store
        self.after_write = after_write

    def _mark_crd(self, crd: Obj) -> None:
        """A CRD's first deletion step, stamped with the server's time."""
        crds.mark_deleting(crd, now_rfc3339(self.store.clock.time))

    def delete(self, request: Request, route: Route) -> Response:
        assert route.name is not None
        if route.subresource:
            raise errors.method_not_allowed("delete is not supported on subresources")
        body = decode_delete_options(request)
        opts = delete_options(request, body)
        info = route.info
        is_crd = info.key == crds.CRD_KEY
        stored, removed = self.store.delete(
            info, route.namespace, route.name, opts, mark=self._mark_crd if is_crd else None
        )
        if is_crd and not opts.dry_run:
            # After the store accepted the deletion: a failed precondition changes nothing.
            self.after_write("delete", info, stored.obj)
        if removed and info.key not in RETURN_DELETED_OBJECT:
            return json_response(200, _deleted_status(info, stored))
        if removed and info.key == ("", "pods"):
            return json_response(200, _removed_pod(stored.obj, self.store.clock.time))
        # kube-apiserver answers 202 only for a pending deletion asked with orphanDependents=false.
        return object_response(
            route, stored, 202 if not removed and _orphan_false(request, body) else 200
        )

    def deletecollection(self, request: Request, route: Route) -> Response:
        matches = matcher(request, route)
        opts = delete_options(request, decode_delete_options(request))
        listed, deleted = self.store.delete_collection(route.info, route.namespace, matches, opts)
        if not opts.dry_run:
            for s in deleted:
                self.after_write("delete", route.info, s.obj)
        # As kube-apiserver: the list taken before deleting, at its resourceVersion.
        metadata = {"resourceVersion": str(listed.rv)}
        return list_response(route, metadata, listed.items)
