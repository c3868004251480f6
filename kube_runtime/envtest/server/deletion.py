"""The ``delete`` and ``deletecollection`` verbs and what a DELETE answers.

DeleteOptions come from the body and the query (the query wins). An object removed at once is
answered with itself for the kinds whose kube-apiserver storage returns the deleted object
(:data:`RETURN_DELETED_OBJECT`), else with a Success Status; a pending deletion (finalizers,
a grace period) answers the object, with 202 when asked with ``orphanDependents=false``. A
CRD's first DELETE only marks it; the CRD finalizer removes its objects, then the CRD.
"""

from __future__ import annotations

from collections.abc import Callable

import orjson

from kube_runtime.client.registry import deleted_status
from kube_runtime.envtest.server import crds, errors
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


def _orphan_false(request: Request) -> bool:
    """Whether a DELETE set ``orphanDependents: false`` (query parameter or DeleteOptions body)."""
    if request.param("orphanDependents") in ("0", "false", "False"):
        return True
    try:
        body = orjson.loads(request.body) if request.body else None
    except orjson.JSONDecodeError:
        return False
    return isinstance(body, dict) and body.get("orphanDependents") is False


def delete_options(request: Request) -> DeleteOptions:
    """The request's DeleteOptions (body, then query parameters); 400 for a bad policy."""
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
    if request.param("orphanDependents") in TRUE and not opts.propagation:
        opts.propagation = "Orphan"
    if request.param("dryRun") == "All":
        opts.dry_run = True
    if opts.propagation not in (None, "Orphan", "Background", "Foreground"):
        raise errors.bad_request(f"invalid propagationPolicy: {opts.propagation}")
    return opts


class Deletion:
    """The delete verbs on ``store``; ``after_write`` hears of each deletion committed."""

    def __init__(self, store: Store, after_write: AfterWrite) -> None:
        self.store = store
        self.after_write = after_write

    def delete(self, request: Request, route: Route) -> Response:
        assert route.name is not None
        if route.subresource:
            raise errors.method_not_allowed("delete is not supported on subresources")
        opts = delete_options(request)
        info = route.info
        is_crd = info.key == crds.CRD_KEY
        stored, removed = self.store.delete(
            info, route.namespace, route.name, opts, mark=crds.mark_deleting if is_crd else None
        )
        if is_crd and not opts.dry_run:
            # After the store accepted the deletion: a failed precondition changes nothing.
            self.after_write("delete", info, stored.obj)
        if removed and info.key not in RETURN_DELETED_OBJECT:
            return json_response(200, _deleted_status(info, stored))
        if removed and info.key == ("", "pods"):
            return json_response(200, _removed_pod(stored.obj, self.store.clock))
        # kube-apiserver answers 202 only for a pending deletion asked with orphanDependents=false.
        return object_response(
            route, stored, 202 if not removed and _orphan_false(request) else 200
        )

    def deletecollection(self, request: Request, route: Route) -> Response:
        matches = matcher(request, route)
        opts = delete_options(request)
        listed, deleted = self.store.delete_collection(route.info, route.namespace, matches, opts)
        if not opts.dry_run:
            for s in deleted:
                self.after_write("delete", route.info, s.obj)
        # As kube-apiserver: the list taken before deleting, at its resourceVersion.
        metadata = {"resourceVersion": str(listed.rv)}
        return list_response(route, metadata, listed.items)
