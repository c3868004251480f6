"""The subresources with their own verbs: ``scale``, ``pods/binding``, ``namespaces/finalize``.

(``status`` needs none: the store's strategy decides what a status write may change.) A scale
is a view of the object's replicas and selector at the paths its :class:`~.resources.ScaleSpec`
names; writing one sets the replicas only.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kube_runtime.client import registry
from kube_runtime.client.registry import ScalePaths
from kube_runtime.envtest.server import errors
from kube_runtime.envtest.server.errors import Cause
from kube_runtime.envtest.server.http import Response
from kube_runtime.envtest.server.resources import ResourceInfo
from kube_runtime.envtest.server.responses import json_response, object_response
from kube_runtime.envtest.server.routing import Route
from kube_runtime.envtest.server.storage import FieldsHook, Obj, Store, now_rfc3339


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


def scale_of(info: ResourceInfo, obj: Obj) -> Obj:
    """The ``autoscaling/v1`` Scale of ``obj``."""
    spec = info.scale
    assert spec is not None
    paths = ScalePaths(spec.spec_replicas_path, spec.status_replicas_path, spec.label_selector_path)
    return registry.scale_of(obj, paths, info.custom)


def write_scale(
    store: Store,
    route: Route,
    change: Callable[[Obj], Obj],
    dry_run: bool,
    fields: FieldsHook | None = None,
) -> Response:
    """Write ``change(scale)`` back to the object (a PUT or a patch of its scale)."""
    info = route.info
    assert route.name is not None and info.scale is not None
    scale_paths = info.scale

    def apply(current: Obj) -> Obj:
        scale = change(scale_of(info, current))
        if not isinstance(scale, dict):
            raise errors.bad_request("the scale must be a JSON object")
        # omitempty: a Scale without spec.replicas asks for 0, as Go decodes it
        replicas = (scale.get("spec") or {}).get("replicas", 0)
        if not isinstance(replicas, int) or isinstance(replicas, bool) or replicas < 0:
            raise errors.invalid(
                "Scale",
                "autoscaling",
                route.name or "",
                [
                    Cause(
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
        return current

    stored = store.mutate(info, route.namespace, route.name, apply, dry_run=dry_run, fields=fields)
    return json_response(200, scale_of(info, stored.obj))


def finalize_namespace(store: Store, route: Route, body: Obj) -> Response:
    """PUT namespaces/{name}/finalize: replace ``spec.finalizers`` with the body's."""
    assert route.name is not None

    def set_finalizers(current: Obj) -> Obj:
        current["spec"] = {
            **(current.get("spec") or {}),
            "finalizers": (body.get("spec") or {}).get("finalizers") or [],
        }
        return current

    stored = store.mutate(route.info, None, route.name, set_finalizers, subresource="finalize")
    return object_response(route, stored)


def bind_pod(store: Store, route: Route, body: Obj) -> Response:
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
        raise errors.api_error(
            422,
            f'Binding.core "{route.name}" is invalid: target: a binding must name a Node',
            "Invalid",
        )
    pod_ref = f'pods "{route.name}"'

    def refused(why: str) -> errors.ApiError:
        return errors.api_error(
            409, f"Operation cannot be fulfilled on {pod_ref}: {why}", "Conflict"
        )

    def bind(current: Obj) -> Obj:
        cmeta = current["metadata"]
        if meta.get("uid") and meta["uid"] != cmeta.get("uid"):
            raise refused(
                "Precondition failed: "
                f"UID in precondition: {meta['uid']}, UID in object meta: {cmeta.get('uid')}"
            )
        if cmeta.get("deletionTimestamp"):
            raise refused(f"pod {route.name} is being deleted, cannot be assigned to a host")
        spec = current.setdefault("spec", {})
        if spec.get("nodeName"):
            raise refused(f'pod {route.name} is already assigned to node "{spec["nodeName"]}"')
        spec["nodeName"] = node
        if meta.get("annotations"):
            cmeta["annotations"] = {**(cmeta.get("annotations") or {}), **meta["annotations"]}
        return current

    bound = store.mutate(route.info, route.namespace, route.name, bind, subresource="binding")

    def scheduled(current: Obj) -> Obj:
        if current["metadata"].get("uid") != bound.meta.get("uid"):
            return current
        status = current.setdefault("status", {})
        conditions = [c for c in status.get("conditions") or () if c.get("type") != "PodScheduled"]
        old = next(
            (c for c in status.get("conditions") or () if c.get("type") == "PodScheduled"), None
        )
        since = (
            (old or {}).get("lastTransitionTime") if (old or {}).get("status") == "True" else None
        )
        conditions.append(
            {
                "type": "PodScheduled",
                "status": "True",
                "lastProbeTime": None,
                "lastTransitionTime": since or now_rfc3339(store.clock),
            }
        )
        status["conditions"] = conditions
        return current

    try:
        store.mutate(route.info, route.namespace, route.name, scheduled, subresource="status")
    except errors.ApiError as e:
        if e.code != 404:
            raise
    return json_response(
        201,
        {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201},
    )
