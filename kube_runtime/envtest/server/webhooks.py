"""Admission webhooks of the embedded API server, called as kube-apiserver calls them.

The stored Mutating/ValidatingWebhookConfigurations (configurations in name order, webhooks
in their order) are consulted on every write the API serves. The store calls
:meth:`Webhooks.mutate` before its own status handling, admission plugins and validation, on
an object defaulted first as kube-apiserver's decoding defaults it (built-in defaults; a
custom resource pruned and defaulted from its schema), and re-defaults each webhook's
patched object, as kube-apiserver re-decodes it (create: on the
object sent; update and patch: on the result of the update or patch, with the stored object
as ``oldObject``; delete: no object, the stored one as ``oldObject``) and :meth:`Webhooks.validate` after its validation,
just before the commit (:class:`~.storage.Store` releases its lock for both calls and redoes
an update whose object changed meanwhile, as kube-apiserver retries a conflicting update).

Matching, as upstream's ``generic/webhook.go``:

* rules: ``operations``, ``apiGroups``, ``apiVersions`` (``"*"`` for any), ``resources``
  (``"pods"``, ``"pods/status"``, ``"pods/*"``, ``"*"`` for every resource but no subresource,
  ``"*/*"``, ``"*/status"``) and ``scope`` (``Namespaced``, ``Cluster``, ``"*"``; a Namespace
  is cluster-scoped); with ``matchPolicy: Equivalent`` a rule naming another served version
  of the resource matches too, and the webhook gets the object in that version (only
  ``apiVersion`` differs: versions are not converted, but for a view of another resource's
  storage, ``events.k8s.io`` Events, which gets the view's fields) with ``requestKind`` the
  request's;
* ``namespaceSelector`` against the labels of the request's namespace (of the object itself
  when creating or updating a Namespace); cluster-scoped objects always match;
* ``objectSelector`` against the labels of the new or the old object (either matches).

A call posts an ``AdmissionReview`` (the first of ``admissionReviewVersions`` this server
speaks, ``v1`` or ``v1beta1``) to ``clientConfig.url`` or to a service reference, verifying
the server with ``caBundle`` (or the system roots), within ``timeoutSeconds``. A service
reference is resolved to ``127.0.0.1`` and the service port's numeric ``targetPort`` (the
``port`` itself when the Service has none or does not exist: nothing in the embedded cluster
listens on a cluster IP), and the certificate is verified for ``NAME.NAMESPACE.svc``, as
upstream. Failures to call (refused, timed out, a bad answer) honour ``failurePolicy``:
``Fail`` answers ``500 Internal error occurred: failed calling webhook "NAME": ...``,
``Ignore`` skips the webhook. A denial answers the webhook's Status (code at least 400)
with ``admission webhook "NAME" denied the request: MESSAGE``. A dry-run request to a
webhook whose ``sideEffects`` is neither ``None`` nor ``NoneOnDryRun`` is refused 400.
A mutating webhook's JSONPatch is applied to the object; ``reinvocationPolicy: IfNeeded``
calls a webhook once more when a later webhook changed the object. Warnings become the
answer's ``Warning`` headers.

Requests that may call webhooks are served off the HTTP loop (see :mod:`.api`), so a webhook
that calls the API server itself is answered.
"""

from __future__ import annotations

import base64
import contextlib
import logging
import uuid
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

import orjson

from kube_runtime import patch, selectors
from kube_runtime.envtest.server import errors, webhookconfig
from kube_runtime.envtest.server.errors import ApiError
from kube_runtime.envtest.server.http import Request
from kube_runtime.envtest.server.resources import ResourceInfo
from kube_runtime.envtest.server.routing import Route
from kube_runtime.envtest.server.storage import AdmissionCall, Defaulter, Obj, Store
from kube_runtime.envtest.server.webhookclient import CallError, post

__all__ = ["RequestContext", "Webhooks", "serving", "suspended"]

log = logging.getLogger(__name__)

MUTATING_KEY = (webhookconfig.GROUP, "mutatingwebhookconfigurations")
VALIDATING_KEY = (webhookconfig.GROUP, "validatingwebhookconfigurations")
#: The user every request of the embedded server is made as (it has a single bearer token).
USER_INFO: dict[str, Any] = {"username": "admin", "groups": ["system:masters"]}
_REVIEW_VERSIONS = ("v1", "v1beta1")
_OPERATIONS = {
    "create": ("CREATE",),
    "update": ("UPDATE",),
    "patch": ("UPDATE", "CREATE"),
    "delete": ("DELETE",),
    "deletecollection": ("DELETE",),
}
#: Subresources whose body is not the resource's object: no webhook is called for them.
_SKIPPED_SUBRESOURCES = frozenset({"scale", "binding"})


@dataclass
class RequestContext:
    """The API request being served: who asks, what, and the warnings webhooks gave."""

    route: Route
    request: Request
    verb: str
    warnings: list[str] = field(default_factory=list)

    @property
    def dry_run(self) -> bool:
        if self.request.param("dryRun") == "All":
            return True
        if self.verb in ("delete", "deletecollection") and self.request.body:
            with contextlib.suppress(orjson.JSONDecodeError):
                body = orjson.loads(self.request.body)
                return isinstance(body, dict) and bool(body.get("dryRun"))
        return False

    def options(self, operation: str) -> Obj:
        """The request's options as the AdmissionReview carries them."""
        if operation == "DELETE":
            kind = "DeleteOptions"
        else:  # a patch's are turned into these too, as by kube-apiserver 1.20
            kind = "CreateOptions" if operation == "CREATE" else "UpdateOptions"
        options: Obj = {}
        if kind == "DeleteOptions" and self.request.body:
            with contextlib.suppress(orjson.JSONDecodeError):
                body = orjson.loads(self.request.body)
                if isinstance(body, dict):
                    options.update(body)
        options.update({"kind": kind, "apiVersion": "meta.k8s.io/v1"})
        if self.dry_run:
            options["dryRun"] = ["All"]
        manager = self.request.param("fieldManager")
        if manager and kind != "DeleteOptions":
            options["fieldManager"] = manager
        return options


_CURRENT: ContextVar[RequestContext | None] = ContextVar("admission_request", default=None)


@contextlib.contextmanager
def serving(context: RequestContext) -> Iterator[RequestContext]:
    """Webhooks apply to the store's writes in this block (the request's own writes)."""
    token = _CURRENT.set(context)
    try:
        yield context
    finally:
        _CURRENT.reset(token)


@contextlib.contextmanager
def suspended() -> Iterator[None]:
    """No webhook applies in this block (the server's own writes after a request's)."""
    token = _CURRENT.set(None)
    try:
        yield
    finally:
        _CURRENT.reset(token)


def _view_converter(info: ResourceInfo) -> Any:
    """The converter of a resource that is a view of another's storage (None otherwise)."""
    if info.stored_as is None:
        return None
    from kube_runtime.envtest.server import builtin_groups  # imports the storage chain

    return builtin_groups.CONVERTERS.get((info.group, info.plural))


def _as_served(info: ResourceInfo, obj: Obj, version: str) -> Obj:
    """``obj`` (stored) as a webhook gets it in ``version``: only ``apiVersion`` rewritten,
    but a view's objects (``events.k8s.io`` Events) converted to the view's fields."""
    convert = _view_converter(info)
    if convert is not None:
        return dict(convert([obj], version)[0])
    return {**obj, "apiVersion": info.api_version(version)}


def _as_stored(info: ResourceInfo, obj: Obj) -> Obj:
    """A webhook's patched object back in the stored form (a view's: converted back)."""
    convert = _view_converter(info)
    return dict(convert([obj], "")[0]) if convert is not None else obj


def current() -> RequestContext | None:
    """The API request served in this context (None outside one, or while suspended)."""
    return _CURRENT.get()


@dataclass(frozen=True)
class _Hook:
    configuration: str
    index: int
    spec: Obj

    @property
    def name(self) -> str:
        return str(self.spec.get("name") or "")

    @property
    def uid(self) -> tuple[str, int]:
        return (self.configuration, self.index)


@dataclass
class _Attributes:
    """What one admission call is about."""

    info: ResourceInfo
    version: str
    subresource: str
    operation: str
    namespace: str
    name: str
    context: RequestContext


def _split(resource: str) -> tuple[str, str]:
    name, _, sub = resource.partition("/")
    return name, sub


def _rule_matches(
    rule: Obj,
    info: ResourceInfo,
    subresource: str,
    operation: str,
    version: str,
    namespace: str | None,
) -> bool:
    """Whether ``rule`` covers the request (``namespace`` None: any scope will do)."""
    ops = rule.get("operations") or ()
    if "*" not in ops and operation not in ops:
        return False
    groups = rule.get("apiGroups") or ()
    if "*" not in groups and info.group not in groups:
        return False
    versions = rule.get("apiVersions") or ()
    if "*" not in versions and version not in versions:
        return False
    for resource in rule.get("resources") or ():
        name, sub = _split(str(resource))
        if (name in ("*", info.plural)) and (sub in ("*", subresource)):
            break
    else:
        return False
    if namespace is None:
        return True
    wanted = rule.get("scope") or "*"
    is_namespace = info.key == ("", "namespaces")
    if wanted == "Namespaced":
        return not is_namespace and bool(namespace)
    if wanted == "Cluster":
        return is_namespace or not namespace
    return True


def _labels(obj: Obj | None) -> dict[str, str] | None:
    if not isinstance(obj, dict):
        return None
    labels = (obj.get("metadata") or {}).get("labels")
    return labels if isinstance(labels, dict) else {}


def _selector(spec: Obj, field_name: str) -> selectors.LabelSelector:
    raw = spec.get(field_name)
    return selectors.label_selector_from_dict(raw if isinstance(raw, dict) else {})


class Webhooks:
    """The admission webhooks of the configurations in ``store`` (the store's hook)."""

    def __init__(self, store: Store) -> None:
        self.store = store
        # per configuration kind: (its ResourceInfo, the store's change counter, the hooks)
        self._cached: dict[tuple[str, str], tuple[ResourceInfo, int, list[_Hook]]] = {}

    # --------------------------------------------------------------- selection

    def _configurations(self, key: tuple[str, str]) -> list[Obj]:
        info = self.store.registry.by_key(*key)
        if info is None:
            return []
        objs = [s.obj for s in self.store.objects(info)]
        return sorted(objs, key=lambda o: str(o["metadata"].get("name") or ""))

    def _hooks(self, key: tuple[str, str]) -> list[_Hook]:
        """The webhooks of the configurations of kind ``key``, in name order (not to be
        mutated): built again only when those configurations changed (the store's change
        counter of the kind), since every request asks (:meth:`wanted`)."""
        info = self.store.registry.by_key(*key)
        if info is None:
            return []
        changes = self.store.changes(info)  # read before listing: a later change rebuilds
        cached = self._cached.get(key)
        if cached is not None and cached[0] is info and cached[1] == changes:
            return cached[2]
        out = []
        for config in self._configurations(key):
            for i, spec in enumerate(config.get("webhooks") or ()):
                if isinstance(spec, dict):
                    out.append(_Hook(str(config["metadata"].get("name") or ""), i, spec))
        self._cached[key] = (info, changes, out)
        return out

    def wanted(self, route: Route, verb: str) -> bool:
        """Whether a request may call a webhook (rules only): it is then served off the loop."""
        operations = _OPERATIONS.get(verb)
        if not operations or route.subresource in _SKIPPED_SUBRESOURCES:
            return False
        changes = self.store.changes_of
        if not changes(MUTATING_KEY) and not changes(VALIDATING_KEY):
            return False  # no configuration was ever stored (the usual case): no webhook
        for key in (MUTATING_KEY, VALIDATING_KEY):
            for hook in self._hooks(key):
                for rule in hook.spec.get("rules") or ():
                    if isinstance(rule, dict) and any(
                        _rule_matches(rule, route.info, route.subresource, op, v, None)
                        for op in operations
                        for v in route.info.versions
                    ):
                        return True
        return False

    def active(self) -> bool:
        """Whether the calling thread serves an API request whose writes webhooks admit."""
        return _CURRENT.get() is not None

    def _attributes(self, call: AdmissionCall) -> _Attributes | None:
        info, obj, old = call.info, call.obj, call.old
        context = _CURRENT.get()
        if context is None or context.route.info.key != info.key:
            return None
        route = context.route
        if route.subresource in _SKIPPED_SUBRESOURCES:
            return None
        meta = ((obj if obj is not None else old) or {}).get("metadata") or {}
        # a collection's objects are admitted without a name, as by kube-apiserver 1.20
        name = (
            "" if context.verb == "deletecollection" else route.name or str(meta.get("name") or "")
        )
        namespace = route.namespace or ""
        if info.key == ("", "namespaces"):
            namespace = name
        return _Attributes(
            info, route.version, route.subresource, call.operation, namespace, name, context
        )

    def _matched_version(self, hook: _Hook, attrs: _Attributes) -> str | None:
        rules = [r for r in hook.spec.get("rules") or () if isinstance(r, dict)]

        def covered(version: str) -> bool:
            return any(
                _rule_matches(
                    r, attrs.info, attrs.subresource, attrs.operation, version, attrs.namespace
                )
                for r in rules
            )

        if covered(attrs.version):
            return attrs.version
        if hook.spec.get("matchPolicy", "Equivalent") != "Equivalent":
            return None
        return next((v for v in attrs.info.versions if v != attrs.version and covered(v)), None)

    def _namespace_labels(self, attrs: _Attributes, obj: Obj | None) -> dict[str, str] | None:
        if (
            attrs.info.key == ("", "namespaces")
            and not attrs.subresource
            and attrs.operation in ("CREATE", "UPDATE")
        ):
            return _labels(obj) or {}
        ns_info = self.store.registry.by_key("", "namespaces")
        namespace = (
            self.store.try_get(ns_info, None, attrs.namespace) if ns_info is not None else None
        )
        if namespace is None:
            raise errors.not_found("namespaces", "", attrs.namespace)
        return _labels(namespace.obj) or {}

    def _should_call(
        self, hook: _Hook, attrs: _Attributes, obj: Obj | None, old: Obj | None
    ) -> str | None:
        version = self._matched_version(hook, attrs)
        if version is None:
            return None
        try:
            ns_selector = _selector(hook.spec, "namespaceSelector")
            object_selector = _selector(hook.spec, "objectSelector")
        except selectors.SelectorError as e:
            raise errors.internal_error(str(e)) from None
        cluster_scoped = not attrs.namespace and attrs.info.key != ("", "namespaces")
        if (
            not cluster_scoped
            and ns_selector.requirements
            and not ns_selector.matches(self._namespace_labels(attrs, obj))
        ):
            return None
        if object_selector.requirements and not (
            (obj is not None and object_selector.matches(_labels(obj)))
            or (old is not None and object_selector.matches(_labels(old)))
        ):
            return None
        return version

    # ------------------------------------------------------------------- calls

    def mutate(self, call: AdmissionCall, *, default: Defaulter | None = None) -> Obj | None:
        """``obj`` after the matching mutating webhooks (the same dict when none changed it);
        raises the :class:`ApiError` a denial or a failure to call answers.

        ``default`` (the store's decode-time defaulting, in place) is applied to ``obj``
        before the first webhook when there is one, and to each webhook's patched object
        after comparing it with what was sent, as kube-apiserver decodes the request body
        (defaulting it) before admission and re-decodes each webhook's result."""
        obj, old = call.obj, call.old
        attrs = self._attributes(call)
        if attrs is None:
            return obj
        hooks = self._hooks(MUTATING_KEY)
        if not hooks:
            return obj
        if default is not None and obj is not None:
            default(obj)
        reinvocable: set[tuple[str, int]] = set()
        again: set[tuple[str, int]] = set()
        changed_once = False
        for hook in hooks:
            obj, changed = self._mutate_if_matching(hook, attrs, obj, old, default)
            if changed is None:
                continue
            if changed:
                changed_once = True
                again |= reinvocable
            if hook.spec.get("reinvocationPolicy") == "IfNeeded":
                reinvocable.add(hook.uid)
        if changed_once and again:
            for hook in hooks:
                if hook.uid in again:
                    obj, _ = self._mutate_if_matching(hook, attrs, obj, old, default)
        return obj

    def _mutate_if_matching(
        self,
        hook: _Hook,
        attrs: _Attributes,
        obj: Obj | None,
        old: Obj | None,
        default: Defaulter | None,
    ) -> tuple[Obj | None, bool | None]:
        """Call ``hook`` if it matches: the object to go on with (``obj`` itself unless the
        hook changed it) and whether it changed it (None: not called)."""
        version = self._should_call(hook, attrs, obj, old)
        if version is None:
            return obj, None
        result, changed = self._mutate_once(hook, attrs, version, obj, old, default)
        return (result if changed else obj), changed

    def _mutate_once(
        self,
        hook: _Hook,
        attrs: _Attributes,
        version: str,
        obj: Obj | None,
        old: Obj | None,
        default: Defaulter | None,
    ) -> tuple[Obj | None, bool]:
        response = self._call(hook, attrs, version, obj, old)
        if response is None:
            return obj, False
        raw = response.get("patch")
        if not raw:
            return obj, False
        try:
            operations = orjson.loads(base64.b64decode(raw))
        except (ValueError, orjson.JSONDecodeError) as e:
            self._failed(hook, f"received undecodable patch in webhook response: {e}")
            return obj, False
        if not isinstance(operations, list):
            self._failed(hook, "received undecodable patch in webhook response")
            return obj, False
        if not operations:
            return obj, False
        if obj is None:
            raise errors.internal_error(
                f'admission webhook "{hook.name}" attempted to modify the object, which is not '
                "supported for this operation"
            )
        stored_version = obj.get("apiVersion")
        sent = _as_served(attrs.info, obj, version)
        try:
            patched = patch.apply_json_patch(sent, operations)
        except patch.PatchError as e:
            raise errors.internal_error(str(e)) from None
        if not isinstance(patched, dict):
            raise errors.internal_error("the patched object is no JSON object")
        patched = _as_stored(attrs.info, patched)
        if stored_version is not None:
            patched["apiVersion"] = stored_version
        changed = patched != obj
        if changed and default is not None:
            default(patched)  # re-decoded: defaulted again (after the comparison, as upstream)
        return patched, changed

    def validate(self, call: AdmissionCall) -> None:
        """Call the matching validating webhooks; raises what the first refusal answers."""
        attrs = self._attributes(call)
        if attrs is None:
            return
        for hook in self._hooks(VALIDATING_KEY):
            version = self._should_call(hook, attrs, call.obj, call.old)
            if version is not None:
                self._call(hook, attrs, version, call.obj, call.old)

    def _failed(self, hook: _Hook, reason: str) -> None:
        """A failure to call ``hook``: 500 under ``failurePolicy: Fail``, else nothing."""
        if hook.spec.get("failurePolicy", "Fail") == "Ignore":
            log.warning("failed calling webhook, failing open %s: %s", hook.name, reason)
            return
        raise errors.internal_error(f'failed calling webhook "{hook.name}": {reason}')

    def _call(
        self, hook: _Hook, attrs: _Attributes, version: str, obj: Obj | None, old: Obj | None
    ) -> Obj | None:
        """The webhook's allowing response (None when it could not be called and is ignored)."""
        context = attrs.context
        dry_run = context.dry_run
        if dry_run and hook.spec.get("sideEffects") not in ("None", "NoneOnDryRun"):
            raise errors.bad_request(f'admission webhook "{hook.name}" does not support dry run')
        review_versions = hook.spec.get("admissionReviewVersions") or ["v1"]
        review_version = next((v for v in review_versions if v in _REVIEW_VERSIONS), None)
        if review_version is None:
            self._failed(
                hook, f"webhook does not accept known AdmissionReview versions {review_versions}"
            )
            return None
        uid = str(uuid.uuid4())
        info = attrs.info
        request: Obj = {
            "uid": uid,
            "kind": {"group": info.group, "version": version, "kind": info.kind},
            "resource": {"group": info.group, "version": version, "resource": info.plural},
            "requestKind": {"group": info.group, "version": attrs.version, "kind": info.kind},
            "requestResource": {
                "group": info.group,
                "version": attrs.version,
                "resource": info.plural,
            },
            "operation": attrs.operation,
            "userInfo": USER_INFO,
            "object": None if obj is None else _as_served(info, obj, version),
            "oldObject": None if old is None else _as_served(info, old, version),
            "dryRun": dry_run,
            "options": context.options(attrs.operation),
        }
        if attrs.subresource:
            request["subResource"] = attrs.subresource
            request["requestSubResource"] = attrs.subresource
        if attrs.name:
            request["name"] = attrs.name
        if attrs.namespace:
            request["namespace"] = attrs.namespace
        review_api = f"admission.k8s.io/{review_version}"
        body = orjson.dumps(
            {"kind": "AdmissionReview", "apiVersion": review_api, "request": request}
        )
        timeout = int(hook.spec.get("timeoutSeconds") or 10)
        try:
            answer = post(self.store, hook.spec.get("clientConfig") or {}, body, timeout)
        except CallError as e:
            self._failed(hook, str(e))
            return None
        try:
            response = self._verify(answer, review_api, uid)
        except CallError as e:
            self._failed(hook, f"received invalid webhook response: {e}")
            return None
        for warning in response.get("warnings") or ():
            if isinstance(warning, str) and warning not in context.warnings:
                context.warnings.append(warning)
        if not response.get("allowed"):
            raise _denied(hook.name, response.get("status"))
        if response.get("patch") and response.get("patchType") != "JSONPatch":
            self._failed(hook, f'unsupported patch type "{response.get("patchType")}"')
            return None
        return response

    @staticmethod
    def _verify(answer: Any, review_api: str, uid: str) -> Obj:
        if not isinstance(answer, dict):
            raise CallError("the answer is no AdmissionReview")
        if answer.get("apiVersion") != review_api or answer.get("kind") != "AdmissionReview":
            raise CallError(
                f"expected webhook response of {review_api}, Kind=AdmissionReview, got "
                f"{answer.get('apiVersion')}, Kind={answer.get('kind')}"
            )
        response = answer.get("response")
        if not isinstance(response, dict):
            raise CallError("webhook response was absent")
        if response.get("uid") != uid:
            raise CallError(f'expected response.uid="{uid}", got "{response.get("uid")}"')
        if response.get("patch") and not response.get("patchType") and review_api.endswith("/v1"):
            raise CallError("webhook returned response.patch but not response.patchType")
        return response


def _denied(name: str, status: Any) -> ApiError:
    """kube-apiserver's answer for a webhook's refusal (its ``ToStatusErr``)."""
    result: Obj = dict(status) if isinstance(status, dict) else {}
    code = result.get("code")
    if not isinstance(code, int) or code < 400:
        code = 400
    denied_by = f'admission webhook "{name}" denied the request'
    why = result.get("message") or result.get("reason")
    message = f"{denied_by}: {why}" if why else f"{denied_by} without explanation"
    reason = result.get("reason") or ""
    return errors.status_error(code, message, str(reason), result.get("details") or None)
