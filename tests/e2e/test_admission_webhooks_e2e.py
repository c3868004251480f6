"""Admission webhooks called by the API server: Mutating/ValidatingWebhookConfigurations
pointing at a kube_runtime.webhook server in this process (certificates from the envtest CA
helpers). The same scenarios run on the embedded server and on kube-apiserver 1.20; status
codes and messages are compared with what kube-apiserver answers.

Every configuration is limited to the test's namespace (a label on it) and carries a marker
webhook: after creating or deleting one, the test waits until a marked ConfigMap is refused
(or no longer refused), since kube-apiserver picks configurations up from an informer."""

from __future__ import annotations

import base64
import contextlib
import json
import threading
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from kube_runtime import webhook
from kube_runtime.client import ApiError, Client
from kube_runtime.crds import install_crd
from kube_runtime.envtest import wait_for
from kube_runtime.envtest.server import tls
from kube_runtime.webhook._endpoint import AdmissionEndpoint
from kube_runtime.webhook._review import AdmissionRequest, AdmissionResponse, allowed, denied
from tests.e2e._fixtures import webhook_server

ADMISSION = "/apis/admissionregistration.k8s.io/v1"
MARKER = "/marker"

Decide = Callable[[AdmissionRequest], AdmissionResponse]


class _Handler:
    """Records each request and answers with the path's current decision."""

    def __init__(self) -> None:
        self.decide: Decide = lambda request: allowed()
        self.calls: list[AdmissionRequest] = []

    def handle(self, request: AdmissionRequest) -> AdmissionResponse:
        self.calls.append(request)
        return self.decide(request)


class Hooks:
    """A kube_runtime.webhook server whose paths answer what a test sets."""

    def __init__(self, server: webhook.Server, certs: tls.ServingCerts) -> None:
        self.server = server
        self.certs = certs
        self._handlers: dict[str, _Handler] = {}
        self._lock = threading.Lock()
        self.on(MARKER, lambda request: denied("marker"))

    def on(self, path: str, decide: Decide) -> list[AdmissionRequest]:
        """Answer ``path`` with ``decide``; returns the list the requests are recorded in."""
        with self._lock:
            handler = self._handlers.get(path)
            if handler is None:
                handler = self._handlers[path] = _Handler()
                self.server.register(path, AdmissionEndpoint(handler))
        handler.decide = decide
        handler.calls = []
        return handler.calls

    def client_config(self, path: str) -> dict[str, Any]:
        _, port = self.server.address
        return {
            "url": f"https://127.0.0.1:{port}{path}",
            "caBundle": base64.b64encode(self.certs.ca_pem).decode(),
        }


@pytest.fixture(scope="module")
def hooks(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Hooks]:
    with webhook_server(tmp_path_factory.mktemp("webhook-certs")) as (server, certs):
        yield Hooks(server, certs)


@pytest.fixture
def scoped(client: Client, namespace: str) -> str:
    """The test namespace, labelled for the configurations' namespaceSelector."""
    client.request(
        "PATCH",
        f"/api/v1/namespaces/{namespace}",
        body={"metadata": {"labels": {"webhook-test": namespace}}},
        content_type="application/merge-patch+json",
    )
    return namespace


def _hook(
    hooks: Hooks, name: str, path: str, namespace: str, *, mutating: bool, **extra: Any
) -> dict[str, Any]:
    rules = extra.pop(
        "rules",
        [
            {
                "apiGroups": [""],
                "apiVersions": ["v1"],
                "operations": ["CREATE", "UPDATE"],
                "resources": ["configmaps"],
            }
        ],
    )
    hook: dict[str, Any] = {
        "name": name,
        "clientConfig": hooks.client_config(path),
        "rules": rules,
        "sideEffects": "None",
        "admissionReviewVersions": ["v1"],
        "namespaceSelector": {"matchLabels": {"webhook-test": namespace}},
        # the marker ConfigMaps are for the marker webhook alone
        "objectSelector": {"matchExpressions": [{"key": "marker", "operator": "DoesNotExist"}]},
        **extra,
    }
    return hook


def _marked(client: Client, namespace: str, marker: str) -> bool:
    """Whether the configuration ``marker`` is in force (its marker webhook refuses)."""
    body = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"generateName": "marker-", "labels": {"marker": marker}},
    }
    try:
        client.request(
            "POST", f"/api/v1/namespaces/{namespace}/configmaps", body=body, query={"dryRun": "All"}
        )
    except ApiError as e:
        if "marker" in e.message:
            return True
        raise
    return False


@contextlib.contextmanager
def configuration(
    client: Client,
    hooks: Hooks,
    namespace: str,
    webhooks: list[dict[str, Any]],
    *,
    mutating: bool,
) -> Iterator[str]:
    """A configuration with ``webhooks`` (plus the marker webhook) in force in the block."""
    kind = "MutatingWebhookConfiguration" if mutating else "ValidatingWebhookConfiguration"
    plural = kind.lower() + "s"
    name = f"test-{uuid.uuid4().hex[:8]}"
    marker = _hook(
        hooks,
        "marker.webhooks.test",
        MARKER,
        namespace,
        mutating=mutating,
        objectSelector={"matchLabels": {"marker": name}},
        rules=[
            {
                "apiGroups": [""],
                "apiVersions": ["v1"],
                "operations": ["CREATE"],
                "resources": ["configmaps"],
            }
        ],
    )
    obj = {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": kind,
        "metadata": {"name": name},
        "webhooks": [*webhooks, marker],
    }
    client.request("POST", f"{ADMISSION}/{plural}", body=obj)
    try:
        wait_for(lambda: _marked(client, namespace, name), timeout=30, message="configuration")
        yield name
    finally:
        client.request("DELETE", f"{ADMISSION}/{plural}/{name}")
        wait_for(lambda: not _marked(client, namespace, name), timeout=30, message="removal")


def _configmap(name: str, **labels: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "labels": labels},
        "data": {"a": "1"},
    }


def _raw(
    api_client: Any,
    method: str,
    path: str,
    body: Any = None,
    ctype: str = "application/json",
) -> tuple[int, dict[str, Any], str | None]:
    """A raw request: (status, parsed answer, Warning header)."""
    params = api_client.param_serialize(
        method,
        path,
        header_params={"Content-Type": ctype, "Accept": "application/json"},
        body=None,
        auth_settings=["BearerToken"],
    )
    method_, url, headers, _, _ = params
    data = None if body is None else json.dumps(body).encode()
    response = api_client.rest_client.pool_manager.request(
        method_, url, body=data, headers=headers, retries=False, timeout=60
    )
    return response.status, json.loads(response.data), response.headers.get("Warning")


def _create_cm(client: Client, namespace: str, obj: dict[str, Any], **query: str) -> Any:
    return client.request(
        "POST", f"/api/v1/namespaces/{namespace}/configmaps", body=obj, query=query or None
    )


# ------------------------------------------------------------------------------ scenarios


def test_mutating_webhooks_patch_in_name_order_and_see_each_others_changes(
    client: Client, hooks: Hooks, scoped: str
) -> None:
    def add(label: str) -> Decide:
        def decide(request: AdmissionRequest) -> AdmissionResponse:
            assert request.object is not None
            labels = request.object["metadata"].get("labels") or {}
            response = allowed()
            order = labels.get("order", "")
            response.patch = [
                {"op": "add", "path": "/metadata/labels/order", "value": order + label}
            ]
            return response

        return decide

    first = hooks.on("/first", add("a"))
    second = hooks.on("/second", add("b"))
    mutating = [
        _hook(hooks, "b.webhooks.test", "/second", scoped, mutating=True),
        _hook(hooks, "a.webhooks.test", "/first", scoped, mutating=True),
    ]
    with configuration(client, hooks, scoped, mutating, mutating=True):
        created = _create_cm(client, scoped, _configmap("cm", order=""))
    # webhooks of one configuration run in their order, not by name
    assert created["metadata"]["labels"]["order"] == "ba"
    request = first[-1]
    assert request.operation == "CREATE"
    assert request.kind == {"group": "", "version": "v1", "kind": "ConfigMap"}
    assert request.resource == {"group": "", "version": "v1", "resource": "configmaps"}
    assert request.request_kind == request.kind
    assert request.name == "cm" and request.namespace == scoped
    assert request.object is not None and request.old_object is None
    assert request.object["metadata"]["labels"]["order"] == "b"
    assert request.dry_run is False
    assert request.options is not None and request.options["kind"] == "CreateOptions"
    assert second[-1].uid != request.uid


def test_validating_webhook_denial_and_warnings(
    client: Client, api_client: Any, hooks: Hooks, scoped: str
) -> None:
    def decide(request: AdmissionRequest) -> AdmissionResponse:
        assert request.object is not None
        if "bad" in (request.object.get("data") or {}):
            return denied("bad data is not allowed")
        response = allowed()
        response.warnings = ["checked by the test webhook", 'a "quoted" one']
        return response

    calls = hooks.on("/validate", decide)
    validating = [_hook(hooks, "check.webhooks.test", "/validate", scoped, mutating=False)]
    with configuration(client, hooks, scoped, validating, mutating=False):
        path = f"/api/v1/namespaces/{scoped}/configmaps"
        status, answer, warning = _raw(api_client, "POST", path, _configmap("ok"))
        assert status == 201, answer
        assert warning == '299 - "checked by the test webhook", 299 - "a \\"quoted\\" one"'
        bad = {**_configmap("nope"), "data": {"bad": "1"}}
        status, answer, _ = _raw(api_client, "POST", path, bad)
        assert status == 403
        assert answer["reason"] == "Forbidden"
        assert answer["message"] == (
            'admission webhook "check.webhooks.test" denied the request: bad data is not allowed'
        )
        # an update is admitted with the old object
        status, answer, _ = _raw(
            api_client, "PUT", f"{path}/ok", {**_configmap("ok"), "data": {"bad": "2"}}
        )
        assert status == 403
        update = calls[-1]
        assert update.operation == "UPDATE" and update.old_object is not None
        assert update.old_object["data"] == {"a": "1"}
        assert update.options is not None and update.options["kind"] == "UpdateOptions"
        # the validating webhook sees the object after the server's defaulting
    with pytest.raises(ApiError) as gone:
        client.request("GET", f"{path}/nope")
    assert gone.value.code == 404


def test_denial_codes_and_reasons_from_the_webhook_status(
    client: Client, hooks: Hooks, scoped: str
) -> None:
    def decide(request: AdmissionRequest) -> AdmissionResponse:
        name = request.name
        if name == "invalid":
            status = {"code": 422, "reason": "Invalid", "message": "spec is wrong"}
            return AdmissionResponse(False, status)
        if name == "bare":
            return AdmissionResponse(False, {"code": 200})
        if name == "reason":
            return AdmissionResponse(False, {"code": 409, "reason": "Conflict"})
        return allowed()

    hooks.on("/codes", decide)
    validating = [_hook(hooks, "codes.webhooks.test", "/codes", scoped, mutating=False)]
    with configuration(client, hooks, scoped, validating, mutating=False):
        seen = {}
        for name in ("invalid", "bare", "reason"):
            with pytest.raises(ApiError) as refused:
                _create_cm(client, scoped, _configmap(name))
            seen[name] = (refused.value.code, refused.value.reason, refused.value.message)
    prefix = 'admission webhook "codes.webhooks.test" denied the request'
    assert seen["invalid"] == (422, "Invalid", f"{prefix}: spec is wrong")
    assert seen["bare"][0] == 400 and seen["bare"][2] == f"{prefix} without explanation"
    assert seen["reason"] == (409, "Conflict", f"{prefix}: Conflict")


def test_failure_policy_fail_and_ignore(client: Client, hooks: Hooks, scoped: str) -> None:
    unreachable = {"url": "https://127.0.0.1:1/nothing", "caBundle": ""}
    ignore = _hook(hooks, "ignored.webhooks.test", "/x", scoped, mutating=False)
    ignore.update(clientConfig=unreachable, failurePolicy="Ignore")
    with configuration(client, hooks, scoped, [ignore], mutating=False):
        _create_cm(client, scoped, _configmap("passes"))
    fail = _hook(hooks, "failing.webhooks.test", "/x", scoped, mutating=False)
    fail.update(clientConfig=unreachable, failurePolicy="Fail")
    fail["clientConfig"].pop("caBundle")
    with (
        configuration(client, hooks, scoped, [fail], mutating=False),
        pytest.raises(ApiError) as refused,
    ):
        _create_cm(client, scoped, _configmap("refused"))
    assert refused.value.code == 500
    assert refused.value.reason == "InternalError"
    assert refused.value.message.startswith(
        'Internal error occurred: failed calling webhook "failing.webhooks.test": '
        'Post "https://127.0.0.1:1/nothing?timeout=10s": dial tcp 127.0.0.1:1: '
    ), refused.value.message


def test_an_untrusted_certificate_fails_the_call(client: Client, hooks: Hooks, scoped: str) -> None:
    other = tls.generate()
    try:
        fail = _hook(hooks, "untrusted.webhooks.test", "/validate-any", scoped, mutating=False)
        fail["clientConfig"]["caBundle"] = base64.b64encode(other.ca_pem).decode()
        hooks.on("/validate-any", lambda request: allowed())
        with (
            configuration(client, hooks, scoped, [fail], mutating=False),
            pytest.raises(ApiError) as refused,
        ):
            _create_cm(client, scoped, _configmap("untrusted"))
    finally:
        other.remove()
    assert refused.value.code == 500
    assert "x509: certificate signed by unknown authority" in refused.value.message


def test_timeout_seconds_bounds_a_slow_webhook(client: Client, hooks: Hooks, scoped: str) -> None:
    release = threading.Event()

    def slow(request: AdmissionRequest) -> AdmissionResponse:
        release.wait(5)
        return allowed()

    hooks.on("/slow", slow)
    hook = _hook(hooks, "slow.webhooks.test", "/slow", scoped, mutating=False, timeoutSeconds=1)
    try:
        with (
            configuration(client, hooks, scoped, [hook], mutating=False),
            pytest.raises(ApiError) as refused,
        ):
            _create_cm(client, scoped, _configmap("slow"))
            release.set()
    finally:
        release.set()
    assert refused.value.code == 500
    assert refused.value.message.startswith(
        'Internal error occurred: failed calling webhook "slow.webhooks.test": Post "https://'
    )
    assert "slow?timeout=1s" in refused.value.message


def test_selectors_choose_what_is_admitted(client: Client, hooks: Hooks, scoped: str) -> None:
    calls = hooks.on("/selected", lambda request: denied("selected"))
    hook = _hook(
        hooks,
        "selected.webhooks.test",
        "/selected",
        scoped,
        mutating=False,
        objectSelector={
            "matchExpressions": [
                {"key": "watched", "operator": "Exists"},
                {"key": "marker", "operator": "DoesNotExist"},
            ]
        },
    )
    with configuration(client, hooks, scoped, [hook], mutating=False):
        _create_cm(client, scoped, _configmap("plain"))
        with pytest.raises(ApiError) as refused:
            _create_cm(client, scoped, _configmap("watched", watched="yes"))
        assert refused.value.code == 403
        # an update that removes the label still matches through the old object
        hooks.on("/selected", lambda request: allowed())
        client.request(
            "PATCH",
            f"/api/v1/namespaces/{scoped}/configmaps/plain",
            body={"metadata": {"labels": {"watched": "now"}}},
            content_type="application/merge-patch+json",
        )
        calls = hooks.on("/selected", lambda request: allowed())
        client.request(
            "PATCH",
            f"/api/v1/namespaces/{scoped}/configmaps/plain",
            body={"metadata": {"labels": {"watched": None}}},
            content_type="application/merge-patch+json",
        )
        assert [c.operation for c in calls] == ["UPDATE"]
        # kube-apiserver 1.20 sends a patch's options as UpdateOptions
        assert calls[0].options is not None and calls[0].options["kind"] == "UpdateOptions"
        # another namespace is not selected
        client.request(
            "POST",
            "/api/v1/namespaces/default/configmaps",
            body=_configmap(f"elsewhere-{uuid.uuid4().hex[:6]}", watched="yes"),
            query={"dryRun": "All"},
        )
    assert len(calls) == 1


def test_dry_run_and_side_effects(client: Client, hooks: Hooks, scoped: str) -> None:
    calls = hooks.on("/effects", lambda request: allowed())
    unknown = _hook(hooks, "effects.webhooks.test", "/effects", scoped, mutating=False)
    unknown["sideEffects"] = "Some"
    unknown["admissionReviewVersions"] = ["v1beta1"]
    # admissionregistration/v1 refuses Some/Unknown: NoneOnDryRun is called with dryRun
    with (
        pytest.raises(ApiError) as invalid,
        configuration(client, hooks, scoped, [unknown], mutating=False),
    ):
        pass
    assert invalid.value.code == 422
    on_dry = _hook(hooks, "effects.webhooks.test", "/effects", scoped, mutating=False)
    on_dry["sideEffects"] = "NoneOnDryRun"
    with configuration(client, hooks, scoped, [on_dry], mutating=False):
        _create_cm(client, scoped, _configmap("dry"), dryRun="All")
    assert calls[-1].dry_run is True
    assert calls[-1].options is not None and calls[-1].options["dryRun"] == ["All"]


def test_delete_is_admitted_with_the_old_object(client: Client, hooks: Hooks, scoped: str) -> None:
    def decide(request: AdmissionRequest) -> AdmissionResponse:
        old = request.old_object or {}
        if (old.get("metadata") or {}).get("labels", {}).get("protected") == "true":
            return denied("protected")
        return allowed()

    calls = hooks.on("/deletes", decide)
    _create_cm(client, scoped, _configmap("keep", protected="true"))
    rule = {
        "apiGroups": [""],
        "apiVersions": ["v1"],
        "operations": ["DELETE"],
        "resources": ["configmaps"],
    }
    hook = _hook(hooks, "deletes.webhooks.test", "/deletes", scoped, mutating=False, rules=[rule])
    with (
        configuration(client, hooks, scoped, [hook], mutating=False),
        pytest.raises(ApiError) as refused,
    ):
        client.request("DELETE", f"/api/v1/namespaces/{scoped}/configmaps/keep")
    assert refused.value.code == 403
    assert refused.value.message == (
        'admission webhook "deletes.webhooks.test" denied the request: protected'
    )
    request = calls[-1]
    assert request.operation == "DELETE" and request.object is None
    assert request.name == "keep"
    assert request.options is not None and request.options["kind"] == "DeleteOptions"
    client.request("DELETE", f"/api/v1/namespaces/{scoped}/configmaps/keep")


def test_status_subresource_rules(client: Client, hooks: Hooks, scoped: str) -> None:
    calls = hooks.on("/status", lambda request: denied("no status changes"))
    rule = {
        "apiGroups": [""],
        "apiVersions": ["v1"],
        "operations": ["UPDATE"],
        "resources": ["pods/status"],
    }
    hook = _hook(hooks, "status.webhooks.test", "/status", scoped, mutating=False, rules=[rule])
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p"},
        "spec": {"containers": [{"name": "c", "image": "nginx:1"}]},
    }
    client.request("POST", f"/api/v1/namespaces/{scoped}/pods", body=pod)
    with configuration(client, hooks, scoped, [hook], mutating=False):
        # the main resource is not covered by "pods/status"
        client.request(
            "PATCH",
            f"/api/v1/namespaces/{scoped}/pods/p",
            body={"metadata": {"labels": {"x": "y"}}},
            content_type="application/merge-patch+json",
        )
        with pytest.raises(ApiError) as refused:
            client.request(
                "PATCH",
                f"/api/v1/namespaces/{scoped}/pods/p/status",
                body={"status": {"conditions": [{"type": "Ready", "status": "False"}]}},
                content_type="application/merge-patch+json",
            )
    assert refused.value.code == 403
    request = calls[-1]
    assert request.sub_resource == "status" and request.request_sub_resource == "status"
    assert request.kind["kind"] == "Pod"
    client.request("DELETE", f"/api/v1/namespaces/{scoped}/pods/p", query={"gracePeriodSeconds": 0})


def test_reinvocation_if_needed(client: Client, hooks: Hooks, scoped: str) -> None:
    def first(request: AdmissionRequest) -> AdmissionResponse:
        assert request.object is not None
        labels = request.object["metadata"].get("labels") or {}
        response = allowed()
        seen = labels.get("second", "absent")
        response.patch = [{"op": "add", "path": "/metadata/labels/first-saw", "value": seen}]
        return response

    def second(request: AdmissionRequest) -> AdmissionResponse:
        response = allowed()
        response.patch = [{"op": "add", "path": "/metadata/labels/second", "value": "set"}]
        return response

    firsts = hooks.on("/r-first", first)
    hooks.on("/r-second", second)
    hooks_ = [
        _hook(hooks, "a.webhooks.test", "/r-first", scoped, mutating=True),
        _hook(hooks, "b.webhooks.test", "/r-second", scoped, mutating=True),
    ]
    hooks_[0]["reinvocationPolicy"] = "IfNeeded"
    with configuration(client, hooks, scoped, hooks_, mutating=True):
        created = _create_cm(client, scoped, _configmap("again", app="x"))
    assert created["metadata"]["labels"]["first-saw"] == "set"
    assert len(firsts) == 2


def test_a_webhook_that_calls_the_api_server(client: Client, hooks: Hooks, scoped: str) -> None:
    """The webhook reads a ConfigMap while admitting another one: no deadlock."""
    _create_cm(client, scoped, {**_configmap("policy"), "data": {"max": "2"}})

    def decide(request: AdmissionRequest) -> AdmissionResponse:
        policy = client.request("GET", f"/api/v1/namespaces/{scoped}/configmaps/policy")
        assert request.object is not None
        if len(request.object.get("data") or {}) > int(policy["data"]["max"]):
            return denied("too many keys")
        return allowed()

    hooks.on("/reads", decide)
    hook = _hook(hooks, "reads.webhooks.test", "/reads", scoped, mutating=False)
    with configuration(client, hooks, scoped, [hook], mutating=False):
        _create_cm(client, scoped, _configmap("small"))
        with pytest.raises(ApiError) as refused:
            _create_cm(
                client, scoped, {**_configmap("big"), "data": {"a": "1", "b": "2", "c": "3"}}
            )
    assert refused.value.message.endswith("denied the request: too many keys")


@pytest.mark.embedded_only("a service reference is resolved to this process on the embedded server")
def test_a_service_reference_reaches_the_webhook(
    client: Client, scoped: str, tmp_path: Path
) -> None:
    """The embedded server resolves a service reference to 127.0.0.1 and the Service port's
    targetPort, verifying the certificate for NAME.NAMESPACE.svc as kube-apiserver does."""
    with webhook_server(tmp_path / "svc-certs", dns_names=[f"hooks.{scoped}.svc"]) as (
        server,
        certs,
    ):
        local = Hooks(server, certs)
        calls = local.on("/svc", lambda request: denied("via the service"))
        service = {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": "hooks"},
            "spec": {"ports": [{"port": 443, "targetPort": server.address[1]}]},
        }
        client.request("POST", f"/api/v1/namespaces/{scoped}/services", body=service)
        hook = _hook(local, "svc.webhooks.test", "/svc", scoped, mutating=False)
        hook["clientConfig"] = {
            "service": {"name": "hooks", "namespace": scoped, "path": "/svc"},
            "caBundle": base64.b64encode(certs.ca_pem).decode(),
        }
        with (
            configuration(client, local, scoped, [hook], mutating=False),
            pytest.raises(ApiError) as refused,
        ):
            _create_cm(client, scoped, _configmap("through-service"))
        assert refused.value.message.endswith("denied the request: via the service")
        assert calls[-1].name == "through-service"


def test_a_mutating_webhook_on_delete(client: Client, hooks: Hooks, scoped: str) -> None:
    calls = hooks.on("/mutate-delete", lambda request: allowed())
    _create_cm(client, scoped, _configmap("going"))
    rule = {
        "apiGroups": [""],
        "apiVersions": ["v1"],
        "operations": ["DELETE"],
        "resources": ["configmaps"],
    }
    hook = _hook(hooks, "md.webhooks.test", "/mutate-delete", scoped, mutating=True, rules=[rule])
    with configuration(client, hooks, scoped, [hook], mutating=True):
        client.request("DELETE", f"/api/v1/namespaces/{scoped}/configmaps/going")
    request = calls[-1]
    assert request.operation == "DELETE" and request.name == "going"
    assert request.object is None
    assert request.old_object is not None and request.old_object["metadata"]["name"] == "going"


def test_deletecollection_admits_each_object(client: Client, hooks: Hooks, scoped: str) -> None:
    def decide(request: AdmissionRequest) -> AdmissionResponse:
        old = request.old_object or {}
        return denied("kept") if old["metadata"]["name"] == "b" else allowed()

    calls = hooks.on("/collection", decide)
    for name in ("a", "b"):
        _create_cm(client, scoped, _configmap(name, group="g"))
    rule = {
        "apiGroups": [""],
        "apiVersions": ["v1"],
        "operations": ["DELETE"],
        "resources": ["configmaps"],
    }
    hook = _hook(hooks, "dc.webhooks.test", "/collection", scoped, mutating=False, rules=[rule])
    with (
        configuration(client, hooks, scoped, [hook], mutating=False),
        pytest.raises(ApiError) as refused,
    ):
        client.request(
            "DELETE", f"/api/v1/namespaces/{scoped}/configmaps", query={"labelSelector": "group=g"}
        )
    assert refused.value.code == 403
    assert refused.value.message.endswith("denied the request: kept")
    # each object is admitted as the old object of a request without a name, as in 1.20
    assert [c.name for c in calls] == ["", ""]
    assert sorted(c.old_object["metadata"]["name"] for c in calls if c.old_object) == ["a", "b"]


# --------------------------------------------------- defaulting around mutating webhooks


def _widget_crd(group: str) -> dict[str, Any]:
    """A CRD whose schema defaults ``spec.replicas`` to 2 and ``spec.mode`` to "auto"."""
    spec = {
        "type": "object",
        "properties": {
            "replicas": {"type": "integer", "default": 2},
            "mode": {"type": "string", "default": "auto"},
            "image": {"type": "string"},
        },
    }
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"widgets.{group}"},
        "spec": {
            "group": group,
            "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": spec}}},
                }
            ],
        },
    }


@pytest.fixture(scope="module")
def widgets(client: Client) -> Iterator[str]:
    """The API group of a Widget CRD with schema defaults, installed for the module."""
    group = f"wd-{uuid.uuid4().hex[:8]}.example.com"
    install_crd(client, _widget_crd(group))
    yield group
    client.delete("apiextensions.k8s.io/v1/CustomResourceDefinition", f"widgets.{group}")


def _widget_rule(group: str) -> dict[str, Any]:
    return {
        "apiGroups": [group],
        "apiVersions": ["v1"],
        "operations": ["CREATE", "UPDATE"],
        "resources": ["widgets"],
    }


def _spec_of(request: AdmissionRequest) -> dict[str, Any]:
    assert request.object is not None
    return dict(request.object.get("spec") or {})


def test_mutating_webhooks_see_custom_resources_defaulted_from_the_schema(
    client: Client, hooks: Hooks, scoped: str, widgets: str
) -> None:
    """kube-apiserver decodes (and so defaults) a custom resource before admission, and
    re-decodes each mutating webhook's result: the first webhook sees the schema's
    ``replicas: 2``; it removes the field, and the second webhook sees it defaulted again."""

    def drop_replicas(request: AdmissionRequest) -> AdmissionResponse:
        response = allowed()
        if "replicas" in _spec_of(request):
            response.patch = [{"op": "remove", "path": "/spec/replicas"}]
        return response

    first = hooks.on("/widget-first", drop_replicas)
    second = hooks.on("/widget-second", lambda request: allowed())
    rule = _widget_rule(widgets)
    mutating = [
        _hook(hooks, "a.widgets.test", "/widget-first", scoped, mutating=True, rules=[rule]),
        _hook(hooks, "b.widgets.test", "/widget-second", scoped, mutating=True, rules=[rule]),
    ]
    body = {
        "apiVersion": f"{widgets}/v1",
        "kind": "Widget",
        "metadata": {"name": "w"},
        "spec": {"image": "nginx"},
    }
    path = f"/apis/{widgets}/v1/namespaces/{scoped}/widgets"
    with configuration(client, hooks, scoped, mutating, mutating=True):
        created = client.request("POST", path, body=body)
        assert _spec_of(first[-1]) == {"image": "nginx", "replicas": 2, "mode": "auto"}
        assert _spec_of(second[-1]) == {"image": "nginx", "replicas": 2, "mode": "auto"}
        assert created["spec"] == {"image": "nginx", "replicas": 2, "mode": "auto"}
        # an update's body is defaulted too (the client sends no mode)
        updated = client.request(
            "PUT", f"{path}/w", body={**created, "spec": {"image": "httpd", "replicas": 5}}
        )
        assert first[-1].operation == "UPDATE"
        assert _spec_of(first[-1]) == {"image": "httpd", "replicas": 5, "mode": "auto"}
        assert _spec_of(second[-1]) == {"image": "httpd", "replicas": 2, "mode": "auto"}
    assert updated["spec"] == {"image": "httpd", "replicas": 2, "mode": "auto"}


def test_mutating_webhooks_see_built_in_kinds_defaulted(
    client: Client, hooks: Hooks, scoped: str
) -> None:
    """A Deployment reaches a mutating webhook with its defaults (replicas, strategy, the
    containers' pull policy), as kube-apiserver's decoding sets them."""
    calls = hooks.on("/deployments", lambda request: allowed())
    rule = {
        "apiGroups": ["apps"],
        "apiVersions": ["v1"],
        "operations": ["CREATE"],
        "resources": ["deployments"],
    }
    hook = _hook(hooks, "d.webhooks.test", "/deployments", scoped, mutating=True, rules=[rule])
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "d"},
        "spec": {
            "selector": {"matchLabels": {"app": "d"}},
            "template": {
                "metadata": {"labels": {"app": "d"}},
                "spec": {"containers": [{"name": "c", "image": "nginx:1.25"}]},
            },
        },
    }
    with configuration(client, hooks, scoped, [hook], mutating=True):
        client.request("POST", f"/apis/apps/v1/namespaces/{scoped}/deployments", body=deployment)
    spec = _spec_of(calls[-1])
    assert spec["replicas"] == 1
    assert spec["revisionHistoryLimit"] == 10
    assert spec["strategy"] == {
        "type": "RollingUpdate",
        "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"},
    }
    container = spec["template"]["spec"]["containers"][0]
    assert container["imagePullPolicy"] == "IfNotPresent"
    assert container["terminationMessagePolicy"] == "File"
