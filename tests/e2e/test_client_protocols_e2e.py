"""One scenario, two clients: the REST client on the embedded cluster and the FakeClient
must give the same shapes and the same errors. The API server is the referee: where the
fake disagrees, the fake is wrong.

Also here: the protocol additions of the real clients (``status()``, ``subresource()``,
``list(index=...)`` of the cache-backed client).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, ClassVar

import pytest
from pydantic import BaseModel, ConfigDict

from kube_runtime import kinds
from kube_runtime.cache import InformerCache
from kube_runtime.client import (
    AlreadyExists,
    ApiError,
    BadRequest,
    Client,
    ClientInterface,
    Conflict,
    Invalid,
    NotFound,
    Resource,
)
from kube_runtime.client.cached import CachedClient
from kube_runtime.client.fake import FakeClient

Transcript = list[tuple[str, Any]]
_MARKERS = {
    "uid": "<uid>",
    "resourceVersion": "<rv>",
    "creationTimestamp": "<time>",
    "deletionTimestamp": "<time>",
}


class ConfigMapModel(BaseModel):
    """A typed ConfigMap view."""

    model_config = ConfigDict(extra="allow")
    __kube_resource__: ClassVar[Resource] = Resource("", "v1", "ConfigMap", "configmaps", True)
    metadata: dict[str, Any]
    data: dict[str, str] | None = None


def cm(name: str, namespace: str, labels: dict[str, str], **data: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": namespace, "labels": labels},
        "data": data,
    }


def sts(name: str, namespace: str) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "replicas": 1,
            "serviceName": name,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "c", "image": "nginx"}]},
            },
        },
    }


def normalize(value: Any, namespace: str) -> Any:
    """``value`` with what differs between runs replaced by markers: uids, versions,
    timestamps, the namespace's name; ``managedFields`` dropped (the fake does not track
    field ownership, see its docstring)."""
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            if key == "managedFields":
                continue
            if key in _MARKERS and isinstance(item, str):
                out[key] = _MARKERS[key] if item else ""
            else:
                out[key] = normalize(item, namespace)
        return out
    if isinstance(value, list):
        return [normalize(v, namespace) for v in value]
    if isinstance(value, str):
        return value.replace(namespace, "<ns>")
    return value


def error_of(call: Callable[[], Any], namespace: str) -> dict[str, Any]:
    """The typed error ``call`` raises, as comparable data (uids in messages masked)."""
    try:
        call()
    except ApiError as err:
        details = {k: v for k, v in err.details.items() if k != "uid"}
        message = re.sub(r"[0-9a-f]{8}-[0-9a-f-]{27}", "<uid>", err.message)
        return normalize(
            {
                "type": type(err).__name__,
                "code": err.code,
                "reason": err.reason,
                "message": message,
                "details": details,
            },
            namespace,
        )
    raise AssertionError("the call did not fail")


def scenario(client: ClientInterface, ns: str) -> Transcript:
    """create, get, list with a label selector, update conflict, status().update ignoring
    the spec, merge patch, delete with a finalizer; returns what was seen, normalized."""
    seen: Transcript = []

    def record(step: str, value: Any) -> None:
        seen.append((step, normalize(value, ns)))

    # create / get
    created = client.create(cm("a", ns, {"app": "web"}, k="v"))
    assert re.fullmatch(r"\d+", created["metadata"]["resourceVersion"])
    record("create", created)
    got = client.get(kinds.ConfigMap, "a", ns)
    assert got["metadata"]["resourceVersion"] == created["metadata"]["resourceVersion"]
    record("get", got)
    as_model = client.get(ConfigMapModel, "a", ns)
    assert isinstance(as_model, ConfigMapModel)
    record("get model", as_model.data)
    record("already exists", error_of(lambda: client.create(cm("a", ns, {})), ns))
    record("not found", error_of(lambda: client.get(kinds.ConfigMap, "zz", ns), ns))
    record("not found sts", error_of(lambda: client.get(kinds.StatefulSet, "zz", ns), ns))

    # list with label selectors
    client.create(cm("b", ns, {"app": "db"}, k="v"))
    client.create(cm("c", ns, {"app": "web", "tier": "front"}, k="v"))
    for selector in ({"app": "web"}, "app in (web,db),!tier", "tier"):
        listed = client.list(kinds.ConfigMap, ns, label_selector=selector)
        assert listed["metadata"]["resourceVersion"]
        record(f"list {selector}", listed)
    record(
        "bad selector",
        error_of(lambda: client.list(kinds.ConfigMap, ns, label_selector="app in (web"), ns),
    )
    record(
        "bad field",
        error_of(lambda: client.list(kinds.ConfigMap, ns, field_selector="spec.x=y"), ns),
    )

    # update, then the stale copy conflicts
    updated = client.update({**got, "data": {"k": "v2"}})
    assert updated["metadata"]["resourceVersion"] != got["metadata"]["resourceVersion"]
    record("update", updated)
    record("no-op update keeps the version", client.update(updated) == updated)
    record("conflict", error_of(lambda: client.update({**got, "data": {"k": "v3"}}), ns))

    # the status subresource
    s = client.create(sts("web", ns))
    record("sts generation", s["metadata"]["generation"])
    record("sts initial status", s.get("status"))
    # Every field the server would default is given: the fake does not default (documented).
    s["status"] = {
        "replicas": 2,
        "readyReplicas": 1,
        "availableReplicas": 1,
        "currentReplicas": 2,
        "observedGeneration": 1,
    }
    s["spec"]["replicas"] = 9
    written = client.status().update(s)
    record("status update", [written["status"], written["spec"]["replicas"]])
    record("status update generation", written["metadata"]["generation"])
    written["status"] = {"replicas": 7}
    written["spec"]["replicas"] = 3
    main = client.update(written)
    record(
        "main update", [main["status"], main["spec"]["replicas"], main["metadata"]["generation"]]
    )
    patched_status = client.status().patch(
        kinds.StatefulSet, "web", {"status": {"readyReplicas": 2}}, namespace=ns
    )
    record("status patch", patched_status["status"])
    record(
        "no status",
        error_of(lambda: client.status().update(client.get(kinds.ConfigMap, "a", ns)), ns),
    )

    # merge patch
    patched = client.patch(kinds.ConfigMap, "a", {"data": {"k": None, "x": "y"}}, namespace=ns)
    record("merge patch", patched)
    record(
        "patch precondition",
        error_of(
            lambda: client.patch(
                kinds.ConfigMap, "a", {"metadata": {"resourceVersion": "1"}}, namespace=ns
            ),
            ns,
        ),
    )

    # delete with a finalizer
    held = cm("f", ns, {})
    held["metadata"]["finalizers"] = ["example.com/hold"]
    client.create(held)
    marked = client.delete(kinds.ConfigMap, "f", ns)
    record("delete with finalizer", marked)
    record("still there", client.get(kinds.ConfigMap, "f", ns))
    record(
        "no new finalizers",
        error_of(
            lambda: client.patch(
                kinds.ConfigMap,
                "f",
                {"metadata": {"finalizers": ["example.com/hold", "example.com/more"]}},
                namespace=ns,
            ),
            ns,
        ),
    )
    record(
        "precondition",
        error_of(lambda: client.delete(kinds.ConfigMap, "f", ns, uid="not-the-uid"), ns),
    )
    released = client.patch(kinds.ConfigMap, "f", {"metadata": {"finalizers": None}}, namespace=ns)
    record("last finalizer removed", released)
    record("gone", error_of(lambda: client.get(kinds.ConfigMap, "f", ns), ns))

    # delete without one, and a pod (its storage answers the object)
    record("delete", client.delete(kinds.ConfigMap, "b", ns))
    record("delete missing", error_of(lambda: client.delete(kinds.ConfigMap, "b", ns), ns))
    record("scale", client.subresource("scale").get(kinds.StatefulSet, "web", ns))
    record(
        "scale patch",
        client.subresource("scale").patch(
            kinds.StatefulSet, "web", {"spec": {"replicas": 4}}, namespace=ns
        ),
    )
    record("scale generation", client.get(kinds.StatefulSet, "web", ns)["metadata"]["generation"])

    # more of the server's answers: names, dry runs, unconditional updates, collections
    record("bad name", error_of(lambda: client.create(cm("Bad_Name", ns, {})), ns))
    record("dry run", client.create(cm("dry", ns, {}), dry_run=True))
    record("dry run stored nothing", error_of(lambda: client.get(kinds.ConfigMap, "dry", ns), ns))
    record("blind update", client.update(cm("c", ns, {"app": "web"}, k="blind")))
    held = cm("g", ns, {"app": "web"})
    held["metadata"]["finalizers"] = ["example.com/hold"]
    client.create(held)
    record("delete_all_of", client.delete_all_of(kinds.ConfigMap, ns, label_selector="app=web"))
    record("left", client.list(kinds.ConfigMap, ns))
    return seen


@pytest.fixture(params=["rest", "fake"])
def any_client(request: pytest.FixtureRequest) -> ClientInterface:
    if request.param == "fake":
        return FakeClient()
    rest: Client = request.getfixturevalue("client")
    return rest


def test_the_scenario_holds(any_client: ClientInterface, namespace: str) -> None:
    seen = dict(scenario(any_client, namespace))
    assert seen["conflict"]["type"] == "Conflict"
    assert seen["status update"][1] == 1  # the spec write through status() was dropped
    assert seen["gone"]["type"] == "NotFound"


def _without(value: Any, field: str) -> Any:
    if isinstance(value, dict):
        return {k: _without(v, field) for k, v in value.items() if k != field}
    if isinstance(value, list):
        return [_without(v, field) for v in value]
    return value


def _unique_causes(value: Any) -> Any:
    details = value.get("details") if isinstance(value, dict) else None
    if not isinstance(details, dict) or not details.get("causes"):
        return value
    unique: list[Any] = []
    for cause in details["causes"]:
        if cause not in unique:
            unique.append(cause)
    return {**value, "details": {**details, "causes": unique}}


def test_the_fake_answers_like_the_api_server(
    client: Client, namespace: str, kube_version: tuple[int, int]
) -> None:
    real = scenario(client, namespace)
    fake = scenario(FakeClient(), namespace)
    if kube_version < (1, 22):  # the fake models a current release: no such field before
        fake = [(step, _without(value, "availableReplicas")) for step, value in fake]
    # kube-apiserver 1.20 validates object metadata twice on update and repeats its causes.
    real = [(step, _unique_causes(value)) for step, value in real]
    assert [step for step, _ in fake] == [step for step, _ in real]
    for (step, want), (_, have) in zip(real, fake, strict=True):
        assert have == want, f"step {step!r}: the fake differs from the API server"


# ------------------------------------------------------------------ the real clients


def test_rest_status_and_scale_subresources(client: Client, namespace: str) -> None:
    s = client.create(sts("web", namespace))
    s["status"] = {"replicas": 1, "currentReplicas": 1, "observedGeneration": 1}
    assert client.status().update(s)["status"]["replicas"] == 1
    scale = client.subresource("scale").get(kinds.StatefulSet, "web", namespace)
    assert scale["kind"] == "Scale" and scale["spec"]["replicas"] == 1
    scale["spec"]["replicas"] = 4
    assert client.subresource("scale").update(s, body=scale)["spec"]["replicas"] == 4
    with pytest.raises(Conflict):
        client.subresource("scale").update(s, body=scale)  # stale resourceVersion now
    patched = client.subresource("scale").patch(
        kinds.StatefulSet, "web", {"spec": {"replicas": 2}}, namespace=namespace
    )
    assert patched["spec"]["replicas"] == 2
    assert client.get(kinds.StatefulSet, "web", namespace)["spec"]["replicas"] == 2
    with pytest.raises(ValueError, match="cache-backed"):
        client.list(kinds.StatefulSet, namespace, index=("namespace", namespace))


def test_cached_client_lists_by_index_and_writes_status_through_the_api(
    client: Client, namespace: str, wait_for: Callable[..., Any]
) -> None:
    cache = InformerCache(client, namespace=namespace)
    cached = CachedClient(client, cache)
    try:
        cache.add_indexer(kinds.ConfigMap, "data-k", lambda o: [(o.get("data") or {}).get("k", "")])
        client.create(cm("a", namespace, {"app": "web"}, k="one"))
        client.create(cm("b", namespace, {"app": "db"}, k="two"))
        wait_for(lambda: len(cached.list(kinds.ConfigMap, namespace)["items"]) == 2)
        by_index = cached.list(kinds.ConfigMap, namespace, index=("data-k", "two"))
        assert [o["metadata"]["name"] for o in by_index["items"]] == ["b"]
        assert by_index["kind"] == "ConfigMapList" and by_index["metadata"]["resourceVersion"]
        by_label = cached.list(kinds.ConfigMap, namespace, index=("label", "app=web"))
        assert [o["metadata"]["name"] for o in by_label["items"]] == ["a"]
        by_field = cached.list(kinds.ConfigMap, namespace, field_selector={"metadata.name": "a"})
        assert [o["metadata"]["name"] for o in by_field["items"]] == ["a"]
        with pytest.raises(KeyError):
            cached.list(kinds.ConfigMap, namespace, index=("nope", "x"))
        s = cached.create(sts("web", namespace))
        s["status"] = {"replicas": 1, "currentReplicas": 1, "observedGeneration": 1}
        assert cached.status().update(s)["status"]["replicas"] == 1
        scale = cached.subresource("scale").get(kinds.StatefulSet, "web", namespace)
        assert scale["spec"]["replicas"] == 1
    finally:
        cache.stop()


def test_errors_are_the_same_types_from_both(client: Client, namespace: str) -> None:
    for c in (client, FakeClient()):
        with pytest.raises(NotFound):
            c.get(kinds.Pod, "nope", namespace)
        c.create(cm("x", namespace, {}))
        with pytest.raises(AlreadyExists):
            c.create(cm("x", namespace, {}))
        held = cm("y", namespace, {})
        held["metadata"]["finalizers"] = ["a/b"]
        c.create(held)
        c.delete(kinds.ConfigMap, "y", namespace)
        with pytest.raises(Invalid):
            c.patch(
                kinds.ConfigMap,
                "y",
                {"metadata": {"finalizers": ["a/b", "c/d"]}},
                namespace=namespace,
            )
        c.patch(kinds.ConfigMap, "y", {"metadata": {"finalizers": []}}, namespace=namespace)


def test_cached_client_refuses_an_unsupported_field_selector_as_the_api_does(
    client: Client, namespace: str
) -> None:
    """The cache answered an empty list where the API server answers 400 (issue 21)."""
    cache = InformerCache(client, namespace=namespace)
    cached = CachedClient(client, cache)
    try:
        for kind, label in ((kinds.Pod, "spec.foo"), (kinds.ConfigMap, "data.k")):
            with pytest.raises(BadRequest) as from_api:
                client.list(kind, namespace, field_selector=f"{label}=x")
            with pytest.raises(BadRequest) as from_cache:
                cached.list(kind, namespace, field_selector=f"{label}=x")
            assert from_cache.value.message == from_api.value.message
        assert cached.list(kinds.Pod, namespace, field_selector="spec.nodeName=x")["items"] == []
    finally:
        cache.stop()
