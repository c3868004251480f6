"""The subresources with their own verbs: ``scale``, ``pods/binding``, ``namespaces/finalize``.

(``status`` needs none: the store's strategy decides what a status write may change.) A scale
is a view of the object's replicas and selector at the paths its :class:`~.resources.ScaleSpec`
names; writing one sets the replicas only. The scale of a custom resource whose CRD converts
through a webhook, asked in a version other than the storage version, is read from the object
converted to that version, at that version's paths, and a write is converted back (as
kube-apiserver's scale storage reads the object in the request's version).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kube_runtime.client import _registry as registry
from kube_runtime.client._registry import ScalePaths
from kube_runtime.envtest.server import errors
from kube_runtime.envtest.server.errors import Cause
from kube_runtime.envtest.server.http import Response
from kube_runtime.envtest.server.resources import ResourceInfo, ScaleSpec
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


def scale_of(info: ResourceInfo, obj: Obj, spec: ScaleSpec | None = None) -> Obj:
    """The ``autoscaling/v1`` Scale of ``obj``, at ``spec``'s paths (default: the resource's)."""
    spec = spec or info.scale
    assert spec is not None
    paths = ScalePaths(spec.spec_replicas_path, spec.status_replicas_path, spec.label_selector_path)
    return registry.scale_of(obj, paths, info.custom)


def _scale_doc_spec(doc: Any) -> ScaleSpec | None:
    if not isinstance(doc, dict):
        return None
    selector = doc.get("labelSelectorPath")
    return ScaleSpec(
        spec_replicas_path=str(doc.get("specReplicasPath", ".spec.replicas")).lstrip("."),
        status_replicas_path=str(doc.get("statusReplicasPath", ".status.replicas")).lstrip("."),
        label_selector_path=str(selector).lstrip(".") if selector else None,
    )


def _converting(route: Route) -> bool:
    """The route asks for a custom resource in a version its CRD's webhook converts to."""
    return route.convert is not None and route.version != route.info.version


def version_scale(store: Store, route: Route) -> ScaleSpec:
    """The scale paths of the route's version: a CRD may name other paths in each version
    (``versions[].subresources.scale``); the resource's own (its storage version's) when the
    route needs no conversion or the CRD names none for that version."""
    info = route.info
    assert info.scale is not None
    if not _converting(route):
        return info.scale
    crds = store.registry.by_key("apiextensions.k8s.io", "customresourcedefinitions")
    stored = store.try_get(crds, None, f"{info.plural}.{info.group}") if crds else None
    spec = (stored.obj.get("spec") or {}) if stored is not None else {}
    for version in spec.get("versions") or ():
        if isinstance(version, dict) and version.get("name") == route.version:
            found = _scale_doc_spec(
                (version.get("subresources") or spec.get("subresources") or {}).get("scale")
            )
            return found or info.scale
    return info.scale


def _in_route_version(route: Route, obj: Obj) -> Obj:
    """``obj`` (stored) in the route's version when the CRD's webhook converts it."""
    if not _converting(route):
        return obj
    assert route.convert is not None
    return route.convert([obj], route.version)[0]


def read_scale(store: Store, route: Route, obj: Obj) -> Response:
    """The answer of a GET of the scale of stored ``obj`` (in the route's version)."""
    spec = version_scale(store, route)
    return json_response(200, scale_of(route.info, _in_route_version(route, obj), spec))


def write_scale(
    store: Store,
    route: Route,
    change: Callable[[Obj], Obj],
    dry_run: bool,
    fields: FieldsHook | None = None,
) -> Response:
    """Write ``change(scale)`` back to the object (a PUT or a patch of its scale); a custom
    resource converted through a webhook is read and changed in the route's version, then
    converted back to the storage version."""
    info = route.info
    assert route.name is not None and info.scale is not None
    scale_paths = version_scale(store, route)

    def apply(current: Obj) -> Obj:
        current = _in_route_version(route, current)
        scale = change(scale_of(info, current, scale_paths))
        if not isinstance(scale, dict):
            raise errors.bad_request("the scale must be a JSON object")
        # omitempty: a Scale without spec.replicas asks for 0, as Go decodes it
        replicas = (scale.get("spec") or {}).get("replicas", 0)
        # a custom resource's scale is not validated as a Scale: a negative count goes into
        # the object, whose validation refuses it (.spec.size: ... non-negative integer)
        if (
            not isinstance(replicas, int)
            or isinstance(replicas, bool)
            or (replicas < 0 and not info.custom)
        ):
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
        if _converting(route):
            assert route.convert is not None
            current = route.convert([current], info.version)[0]
        return current

    stored = store.mutate(info, route.namespace, route.name, apply, dry_run=dry_run, fields=fields)
    return json_response(200, scale_of(info, _in_route_version(route, stored.obj), scale_paths))


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
                "lastTransitionTime": since or now_rfc3339(store.clock.time),
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
