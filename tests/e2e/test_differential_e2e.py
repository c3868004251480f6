"""Differential conformance: the same request sequences against the embedded server and a real
kube-apiserver 1.20 (etcd + kube-apiserver + garbage collector, no kubelet), compared on what
clients rely on: status codes, reasons, and resulting objects modulo uid, timestamps and
resourceVersion (see ``normalize``).

Runs on the real backend (``make test-real``, which builds the binaries first); skipped with the
reason under ``make test`` (the embedded backend), which would only repeat what CI's real run
checks and only where the binaries happen to be cached.
Fields that exist only in Kubernetes newer than 1.20 (the embedded server models a current
release) are dropped before comparing: ``NEWER_FIELDS``; so are Table columns newer than 1.20
or changed since (``NEWER_TABLE_COLUMNS``). docs/conformance.md lists the checks
and the differences found.
"""

from __future__ import annotations

import copy
import json
import re
import threading
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from kube_runtime.client import ApiError, Client
from kube_runtime.envtest import wait_for
from kube_runtime.envtest.cluster import EmbeddedCluster
from kube_runtime.envtest.plugin import backend_of
from kube_runtime.envtest.real import RealCluster, missing_binaries

pytestmark = pytest.mark.skipif(
    bool(missing_binaries()),
    reason="real kube-apiserver not cached: run scripts/real-apiserver.sh",
)

Obj = dict[str, Any]

#: (kind, dotted path) of fields Kubernetes 1.20 does not have; dropped before comparing.
NEWER_FIELDS: dict[str, tuple[str, ...]] = {
    "StatefulSet": (
        "spec.persistentVolumeClaimRetentionPolicy",
        "spec.minReadySeconds",
        "status.availableReplicas",
    ),
    "Deployment": (),
    "Pod": ("status.hostIPs",),
    "Service": ("spec.internalTrafficPolicy",),  # 1.22
}
_VOLATILE_META = ("uid", "resourceVersion", "creationTimestamp", "selfLink")


def _drop(obj: Obj, dotted: str) -> None:
    parts = dotted.split(".")
    for p in parts[:-1]:
        obj = obj.get(p) if isinstance(obj, dict) else None  # type: ignore[assignment]
        if not isinstance(obj, dict):
            return
    obj.pop(parts[-1], None)


#: Differences found and not fixed yet, dropped before comparing (kind, dotted path): each is
#: listed with its reason in docs/conformance.md. Remove an entry once the embedded server
#: agrees, so the check guards it.
KNOWN_DIFFERENCES: dict[str, tuple[str, ...]] = {}


def _scrub(value: Any, key: str = "") -> Any:
    """Timestamps masked; ``null`` and ``{}`` members dropped (Go encodes unset structs and
    pointers so; clients treat them as absent)."""
    if isinstance(value, dict):
        out = {k: _scrub(v, k) for k, v in value.items()}
        return {k: v for k, v in out.items() if v is not None and v != {}}
    if isinstance(value, list):
        return [_scrub(v, key) for v in value]
    if isinstance(value, str) and value and (key.endswith(("Time", "Timestamp")) or key == "time"):
        return "<time>"
    return value


def normalize(obj: Any, managed_fields: bool = False) -> Any:
    """``obj`` without what legitimately differs between two servers.

    ``managedFields`` are dropped unless ``managed_fields``; then only their timestamps
    are (1.20 has no ``subresource`` in entries, and its controllers write under their own
    managers, so scenarios opt in where neither matters).
    """
    if not isinstance(obj, dict):
        return obj
    obj = copy.deepcopy(obj)
    if obj.get("kind", "").endswith("List") and "items" in obj:
        return {
            "kind": obj["kind"],
            "items": [normalize(i, managed_fields) for i in obj["items"]],
        }
    if obj.get("kind") == "Status":
        details = obj.get("details") or {}
        return {
            "kind": "Status",
            "status": obj.get("status"),
            "reason": obj.get("reason"),
            "code": obj.get("code"),
            "details": {k: details[k] for k in ("name", "kind", "group") if k in details},
        }
    meta = obj.get("metadata") or {}
    for key in _VOLATILE_META:
        meta.pop(key, None)
    if "managedFields" in meta:
        if managed_fields:
            meta["managedFields"] = [
                {k: v for k, v in e.items() if k != "time"} for e in meta["managedFields"]
            ]
        else:
            del meta["managedFields"]
    for ref in meta.get("ownerReferences") or ():
        ref["uid"] = "<uid>"
    annotations = meta.get("annotations") or {}
    annotations.pop("kubectl.kubernetes.io/last-applied-configuration", None)
    if not annotations:
        meta.pop("annotations", None)
    kind = str(obj.get("kind"))
    if kind == "Namespace":  # the label every namespace carries since 1.21
        labels = meta.get("labels") or {}
        labels.pop("kubernetes.io/metadata.name", None)
        if not labels:
            meta.pop("labels", None)
    for dotted in NEWER_FIELDS.get(kind, ()) + KNOWN_DIFFERENCES.get(kind, ()):
        _drop(obj, dotted)
    return _scrub(obj)


class Recorder:
    """Runs one step at a time against one backend and records normalized outcomes."""

    def __init__(self, client: Client, namespace: str) -> None:
        self.c = client
        self.ns = namespace
        self.steps: list[tuple[str, Any]] = []
        #: Compare managedFields entries (but their times) too (see ``normalize``).
        self.managed_fields = False

    def step(self, label: str, fn: Callable[[], Any]) -> Any:
        try:
            result = fn()
        except ApiError as e:
            self.steps.append((label, {"error": e.code, "reason": e.reason}))
            return None
        self.steps.append((label, normalize(result, self.managed_fields)))
        return result

    def note(self, label: str, value: Any) -> None:
        self.steps.append((label, value))


Scenario = Callable[[Recorder], None]


@pytest.fixture(scope="module")
def backends(
    tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> Iterator[dict[str, Client]]:
    if backend_of(request.config) != "real":
        pytest.skip("differential checks run with the real backend: make test-real")
    tmp = tmp_path_factory.mktemp("differential")
    # The servers are compared, not the controllers: no Deployment/ReplicaSet controller on
    # either side writes while a request is compared (test_deployment_e2e.py runs both sides').
    real = RealCluster(
        kubelet=False, controllers=("garbagecollector", "namespace", "pvc-protection")
    )
    embedded = EmbeddedCluster(kubelet=False, token=EmbeddedCluster.new_token(), deployments=False)
    clients: dict[str, Client] = {}
    try:
        real.start()
        embedded.start()
        clients["embedded"] = Client.from_kubeconfig(embedded.write_kubeconfig(tmp / "e"))
        clients["real"] = Client.from_kubeconfig(real.write_kubeconfig(tmp / "r"))
        yield clients
    finally:
        for c in clients.values():
            c.close()
        embedded.stop()
        real.stop()


def run_both(backends: dict[str, Client], scenario: Scenario) -> dict[str, list[tuple[str, Any]]]:
    """Run ``scenario`` in a fresh namespace (same name) on each backend; assert same outcomes."""
    name = f"d-{uuid.uuid4().hex[:8]}"
    results: dict[str, list[tuple[str, Any]]] = {}
    for backend, client in backends.items():
        client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
        recorder = Recorder(client, name)
        try:
            scenario(recorder)
        finally:
            client.delete("v1/Namespace", name)
        results[backend] = recorder.steps
    embedded, real = results["embedded"], results["real"]
    assert [s[0] for s in embedded] == [s[0] for s in real]
    diffs = [
        f"step {label!r}:\n" + "\n".join(_differences(e, r))
        for (label, e), (_label, r) in zip(embedded, real, strict=True)
        if e != r
    ]
    assert not diffs, "embedded and real differ:\n" + "\n".join(diffs)
    return results


def _differences(embedded: Any, real: Any, path: str = "") -> list[str]:
    """Where two normalized outcomes differ, one line per differing leaf."""
    if isinstance(embedded, dict) and isinstance(real, dict):
        out: list[str] = []
        for key in sorted(set(embedded) | set(real)):
            out += _differences(embedded.get(key), real.get(key), f"{path}.{key}")
        return out
    if embedded == real:
        return []
    e, r = json.dumps(embedded, sort_keys=True), json.dumps(real, sort_keys=True)
    return [f"  {path or '.'}: embedded {e[:300]} | real {r[:300]}"]


# ------------------------------------------------------------------------------ objects


def cm(name: str, data: dict[str, str] | None = None, **meta: Any) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, **meta},
        "data": data or {"a": "1"},
    }


def deployment(name: str, replicas: int = 1) -> Obj:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "labels": {"app": name}},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {
                    "containers": [
                        {"name": "web", "image": "nginx:1", "ports": [{"containerPort": 80}]},
                        {"name": "side", "image": "busybox:1"},
                    ]
                },
            },
        },
    }


def statefulset(name: str, replicas: int = 2) -> Obj:
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "serviceName": name,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "c", "image": "nginx:1"}]},
            },
            "volumeClaimTemplates": [
                {
                    "metadata": {"name": "data"},
                    "spec": {
                        "accessModes": ["ReadWriteOnce"],
                        "resources": {"requests": {"storage": "1Gi"}},
                    },
                }
            ],
        },
    }


def pod(name: str) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {"containers": [{"name": "c", "image": "nginx:1"}]},
    }


def _claim(name: str) -> Obj:
    """A 1Gi ReadWriteOnce claim."""
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": name},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
    }


def refusal(fn: Callable[[], Any]) -> Any:
    """What a client sees of a refused write: code, reason and each cause's (field, reason);
    ``"accepted"`` when ``fn`` succeeds."""
    try:
        fn()
    except ApiError as e:
        details = e.status.get("details") or {}
        return {
            "code": e.code,
            "reason": e.reason,
            "causes": sorted(
                (c.get("field"), c.get("reason")) for c in details.get("causes") or ()
            ),
        }
    return "accepted"


# ---------------------------------------------------------------------------- scenarios


def test_crud_conflicts_and_not_found(backends: dict[str, Client]) -> None:
    def scenario(r: Recorder) -> None:
        c, ns = r.c, r.ns
        created = r.step("create", lambda: c.create(cm("a"), namespace=ns))
        r.step("create again", lambda: c.create(cm("a"), namespace=ns))
        r.step("get", lambda: c.get("v1/ConfigMap", "a", ns))
        fresh = copy.deepcopy(created)
        fresh["data"] = {"a": "2"}
        r.step("update", lambda: c.update(fresh))
        stale = copy.deepcopy(created)
        stale["data"] = {"a": "3"}
        r.step("update with stale resourceVersion", lambda: c.update(stale))
        unconditional = copy.deepcopy(created)
        unconditional["metadata"].pop("resourceVersion")
        unconditional["data"] = {"a": "4"}
        r.step("update without resourceVersion", lambda: c.update(unconditional))
        r.step("get missing", lambda: c.get("v1/ConfigMap", "nope", ns))
        r.step(
            "update missing",
            lambda: c.update({**cm("nope"), "metadata": {"name": "nope", "namespace": ns}}),
        )
        r.step("create invalid name", lambda: c.create(cm("Bad_Name"), namespace=ns))
        r.step("delete with stale uid", lambda: c.delete("v1/ConfigMap", "a", ns, uid="0000"))
        r.step("delete", lambda: c.delete("v1/ConfigMap", "a", ns))
        r.step("get deleted", lambda: c.get("v1/ConfigMap", "a", ns))
        r.step("delete missing", lambda: c.delete("v1/ConfigMap", "a", ns))
        r.step("list", lambda: c.list("v1/ConfigMap", ns))

    run_both(backends, scenario)


def test_patch_types(backends: dict[str, Client]) -> None:
    def scenario(r: Recorder) -> None:
        c, ns = r.c, r.ns
        r.step("create", lambda: c.create(deployment("web"), namespace=ns))
        kind = "apps/v1/Deployment"
        r.step(
            "merge patch labels",
            lambda: c.patch(
                kind, "web", {"metadata": {"labels": {"x": "1", "app": None}}}, namespace=ns
            ),
        )
        r.step(
            "strategic patch one container",
            lambda: c.patch(
                kind,
                "web",
                {
                    "spec": {
                        "template": {"spec": {"containers": [{"name": "web", "image": "nginx:2"}]}}
                    }
                },
                namespace=ns,
                patch_type="strategic",
            ),
        )
        r.step(
            "strategic delete directive",
            lambda: c.patch(
                kind,
                "web",
                {
                    "spec": {
                        "template": {"spec": {"containers": [{"name": "side", "$patch": "delete"}]}}
                    }
                },
                namespace=ns,
                patch_type="strategic",
            ),
        )
        r.step(
            "merge patch replaces the list",
            lambda: c.patch(
                kind,
                "web",
                {
                    "spec": {
                        "template": {"spec": {"containers": [{"name": "only", "image": "x:1"}]}}
                    }
                },
                namespace=ns,
            ),
        )
        r.step(
            "json patch",
            lambda: c.patch(
                kind,
                "web",
                [
                    {"op": "replace", "path": "/spec/replicas", "value": 3},
                    {"op": "add", "path": "/metadata/annotations", "value": {"k": "v"}},
                ],
                namespace=ns,
                patch_type="json",
            ),
        )
        r.step(
            "json patch failed test",
            lambda: c.patch(
                kind,
                "web",
                [{"op": "test", "path": "/spec/replicas", "value": 9}],
                namespace=ns,
                patch_type="json",
            ),
        )
        r.step(
            "json patch missing path",
            lambda: c.patch(
                kind,
                "web",
                [{"op": "remove", "path": "/spec/nothing"}],
                namespace=ns,
                patch_type="json",
            ),
        )
        r.step(
            "merge patch with stale resourceVersion",
            lambda: c.patch(kind, "web", {"metadata": {"resourceVersion": "1"}}, namespace=ns),
        )
        r.step(
            "patch invalid replicas",
            lambda: c.patch(kind, "web", {"spec": {"replicas": -1}}, namespace=ns),
        )
        r.step("patch missing", lambda: c.patch(kind, "nope", {"metadata": {}}, namespace=ns))
        applied = deployment("applied")
        r.step(
            "apply create",
            lambda: c.apply(
                {**applied, "metadata": {**applied["metadata"], "namespace": ns}}, field_manager="a"
            ),
        )
        again = copy.deepcopy(applied)
        again["metadata"]["namespace"] = ns
        again["spec"]["replicas"] = 2
        r.step("apply update", lambda: c.apply(again, field_manager="a"))

    run_both(backends, scenario)


def test_status_and_scale_subresources(backends: dict[str, Client]) -> None:
    def scenario(r: Recorder) -> None:
        c, ns = r.c, r.ns
        sts = r.step("create", lambda: c.create(statefulset("db"), namespace=ns))
        with_status = copy.deepcopy(sts)
        with_status["status"] = {"replicas": 2, "readyReplicas": 1, "observedGeneration": 1}
        with_status["spec"]["replicas"] = 7
        r.step("update status ignores spec", lambda: c.update_status(with_status))
        current = c.get("apps/v1/StatefulSet", "db", ns)
        current["status"] = {"replicas": 0}
        current["spec"]["replicas"] = 4
        r.step("update ignores status", lambda: c.update(current))
        r.step(
            "get scale",
            lambda: c.request("GET", f"/apis/apps/v1/namespaces/{ns}/statefulsets/db/scale"),
        )
        r.step(
            "patch scale",
            lambda: c.patch(
                "apps/v1/StatefulSet",
                "db",
                {"spec": {"replicas": 5}},
                namespace=ns,
                subresource="scale",
            ),
        )
        r.step("after scale", lambda: c.get("apps/v1/StatefulSet", "db", ns))
        r.step(
            "update immutable field",
            lambda: c.patch(
                "apps/v1/StatefulSet", "db", {"spec": {"serviceName": "other"}}, namespace=ns
            ),
        )
        r.step(
            "merge patch status",
            lambda: c.patch(
                "apps/v1/StatefulSet",
                "db",
                {"status": {"currentReplicas": 1}},
                namespace=ns,
                subresource="status",
            ),
        )
        # Zero-valued omitempty counters and revisions are dropped, untagged ones (replicas)
        # and pointers (collisionCount) kept, as Go encodes them.
        zeros = c.get("apps/v1/StatefulSet", "db", ns)
        zeros["status"] = {
            "replicas": 0,
            "readyReplicas": 0,
            "currentReplicas": 0,
            "updatedReplicas": 0,
            "observedGeneration": 0,
            "currentRevision": "",
            "updateRevision": "",
            "collisionCount": 0,
        }
        r.step("status with zero counters", lambda: c.update_status(zeros))
        r.step("zero counters read back", lambda: c.get("apps/v1/StatefulSet", "db", ns))
        dep = c.create(deployment("zero", replicas=0), namespace=ns)
        dep["status"] = {"replicas": 0, "updatedReplicas": 0, "observedGeneration": 0}
        dep["spec"]["paused"] = False
        dep["spec"]["minReadySeconds"] = 0
        r.step("deployment zeros", lambda: c.update_status(dep))
        r.step(
            "deployment zero spec fields",
            lambda: c.patch(
                "apps/v1/Deployment",
                "zero",
                {"spec": {"paused": False, "minReadySeconds": 0}},
                namespace=ns,
            ),
        )

    run_both(backends, scenario)


def test_status_writes_and_metadata(backends: dict[str, Client]) -> None:
    """What a write to the status subresource does to labels and annotations: kept for most
    built-in kinds, labels reset for Deployments (their status strategy)."""

    def relabel(obj: Obj) -> Obj:
        changed = copy.deepcopy(obj)
        changed["metadata"].setdefault("labels", {})["via"] = "status"
        changed["metadata"].setdefault("annotations", {})["via"] = "status"
        changed["status"] = obj.get("status") or {}
        return changed

    def scenario(r: Recorder) -> None:
        c, ns = r.c, r.ns
        created = {
            "pod": c.create(pod("p"), namespace=ns),
            "sts": c.create(statefulset("s"), namespace=ns),
            "deploy": c.create(deployment("d"), namespace=ns),
        }
        for label, obj in created.items():
            r.step(
                f"{label}: status update with new metadata",
                lambda o=obj: c.update_status(relabel(o)),
            )
        r.step(
            "pod: status merge patch with metadata",
            lambda: c.patch(
                "v1/Pod",
                "p",
                {"metadata": {"labels": {"patched": "yes"}}, "status": {"message": "m"}},
                namespace=ns,
                subresource="status",
            ),
        )

    run_both(backends, scenario)


def test_pod_rules(backends: dict[str, Client]) -> None:
    def scenario(r: Recorder) -> None:
        c, ns = r.c, r.ns
        r.step("create pod", lambda: c.create(pod("p"), namespace=ns))
        r.step(
            "patch image (allowed)",
            lambda: c.patch(
                "v1/Pod",
                "p",
                {"spec": {"containers": [{"name": "c", "image": "nginx:2"}]}},
                namespace=ns,
                patch_type="strategic",
            ),
        )
        r.step(
            "patch env (forbidden)",
            lambda: c.patch(
                "v1/Pod",
                "p",
                {"spec": {"containers": [{"name": "c", "env": [{"name": "A", "value": "1"}]}]}},
                namespace=ns,
                patch_type="strategic",
            ),
        )
        binding = {
            "apiVersion": "v1",
            "kind": "Binding",
            "metadata": {"name": "p"},
            "target": {"apiVersion": "v1", "kind": "Node", "name": "n1"},
        }
        path = f"/api/v1/namespaces/{ns}/pods/p/binding"
        r.step("bind", lambda: c.request("POST", path, body=binding))
        r.step("bound pod", lambda: c.get("v1/Pod", "p", ns))
        r.step("bind again", lambda: c.request("POST", path, body=binding))
        r.step("graceful delete of a bound pod", lambda: c.delete("v1/Pod", "p", ns))
        r.step("pod being deleted", lambda: c.get("v1/Pod", "p", ns))
        r.step("force delete", lambda: c.delete("v1/Pod", "p", ns, grace_period_seconds=0))
        r.step("gone", lambda: c.get("v1/Pod", "p", ns))
        r.step("create unbound pod", lambda: c.create(pod("u"), namespace=ns))
        r.step("delete unbound pod is immediate", lambda: c.delete("v1/Pod", "u", ns))
        r.step("unbound gone", lambda: c.get("v1/Pod", "u", ns))

    run_both(backends, scenario)


def test_apply_conflict_between_managers(backends: dict[str, Client]) -> None:
    def scenario(r: Recorder) -> None:
        c, ns = r.c, r.ns
        first = deployment("applied")
        first["metadata"]["namespace"] = ns
        c.apply(first, field_manager="a")
        second = copy.deepcopy(first)
        second["spec"]["replicas"] = 5
        r.step("apply conflict", lambda: c.apply(second, field_manager="b", force=False))
        r.step("forced apply", lambda: c.apply(second, field_manager="b", force=True))

    run_both(backends, scenario)


def test_pod_node_name_is_immutable(backends: dict[str, Client]) -> None:
    def scenario(r: Recorder) -> None:
        c, ns = r.c, r.ns
        created = c.create(pod("m"), namespace=ns)
        moved = copy.deepcopy(created)
        moved["spec"]["nodeName"] = "somewhere"
        r.step("update spec.nodeName", lambda: c.update(moved))

    run_both(backends, scenario)


def test_managed_fields_of_updates_and_applies(backends: dict[str, Client]) -> None:
    """managedFields entries (all but their timestamps) after creates, updates and applies.

    Manager names sort in the order they write, so entries sorted by time (then name) agree
    even when the two backends' writes straddle different seconds.
    """

    def scenario(r: Recorder) -> None:
        c, ns = r.c, r.ns
        r.managed_fields = True
        apply_path = f"/api/v1/namespaces/{ns}/configmaps/mf"

        def applied(data: dict[str, str], manager: str | None, force: bool = False) -> Any:
            body = {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": "mf", "namespace": ns},
                "data": data,
            }
            query = {"fieldManager": manager, "force": "true" if force else None}
            return c.request(
                "PATCH",
                apply_path,
                query=query,
                body=body,
                content_type="application/apply-patch+yaml",
            )

        r.step(
            "create",
            lambda: c.create(cm("mf", {"a": "1", "b": "2"}), namespace=ns, field_manager="a-new"),
        )

        def edit() -> Any:
            current = c.get("v1/ConfigMap", "mf", ns)
            current["data"] = {"a": "1", "b": "3", "c": "4"}
            return c.update(current, field_manager="b-edit")

        r.step("update by another manager", edit)
        r.step("apply without fieldManager", lambda: applied({"a": "1"}, None))
        r.step("apply shared and new fields", lambda: applied({"a": "1", "d": "5"}, "c-apply"))
        r.step("apply conflict", lambda: applied({"b": "9", "d": "5"}, "c-apply"))
        try:
            applied({"b": "9", "c": "7", "d": "5"}, "c-apply")
        except ApiError as e:
            details = e.status.get("details") or {}
            r.note("conflict causes", (e.code, e.status.get("message"), details.get("causes")))
        r.step("forced apply", lambda: applied({"b": "9", "d": "5"}, "c-apply", force=True))
        r.step("apply dropping a field", lambda: applied({"b": "9"}, "c-apply"))
        r.step(
            "json patch by user agent",
            lambda: c.patch(
                "v1/ConfigMap",
                "mf",
                [{"op": "add", "path": "/data/e", "value": "6"}],
                namespace=ns,
                patch_type="json",
            ),
        )

    run_both(backends, scenario)


def test_watch_from_old_resource_version(backends: dict[str, Client]) -> None:
    def scenario(r: Recorder) -> None:
        c, ns = r.c, r.ns
        first = c.create(cm("w"), namespace=ns)
        rv = first["metadata"]["resourceVersion"]
        c.patch("v1/ConfigMap", "w", {"data": {"a": "2"}}, namespace=ns)
        c.create(cm("other"), namespace=ns)
        c.delete("v1/ConfigMap", "w", ns)
        events: list[tuple[str, Any]] = []
        done = threading.Event()
        with c.watch(
            "v1/ConfigMap", ns, resource_version=rv, allow_bookmarks=False, timeout_seconds=5
        ) as w:
            timer = threading.Timer(5, w.close)
            timer.start()
            for ev in w:
                events.append((ev.type, normalize(ev.object)))
                if len(events) == 3:
                    break
            timer.cancel()
        done.set()
        r.note("events after rv", events)

    run_both(backends, scenario)


def test_lists_selectors_and_pages(backends: dict[str, Client]) -> None:
    """What list callers rely on: selectors of each kind, their errors, and limit/continue
    pages (names per page, whether more remain)."""

    def scenario(r: Recorder) -> None:
        c, ns = r.c, r.ns
        tiers = {"a": "web", "b": "web", "c": "db", "d": "db", "e": "cache"}
        for name, tier in tiers.items():
            labels = {"tier": tier, **({"canary": "yes"} if name in "ae" else {})}
            c.create(cm(name, labels=labels), namespace=ns)
        path = f"/api/v1/namespaces/{ns}/configmaps"

        def names(query: dict[str, Any]) -> Any:
            page = c.request("GET", path, query=query)
            more = page["metadata"].get("continue")
            remaining = page["metadata"].get("remainingItemCount")
            return {
                "names": [o["metadata"]["name"] for o in page["items"]],
                "more": bool(more),
                "remaining": remaining,
                "continue": more,
            }

        for selector in (
            "tier=web",
            "tier!=web",
            "tier in (db,cache)",
            "tier notin (db)",
            "canary",
            "!canary",
            "tier=web,canary",
        ):
            r.step(f"labelSelector {selector}", lambda q=selector: names({"labelSelector": q}))
        r.step("fieldSelector name", lambda: names({"fieldSelector": "metadata.name=c"}))
        r.step("fieldSelector name!=", lambda: names({"fieldSelector": "metadata.name!=c"}))
        r.step("bad label selector", lambda: names({"labelSelector": "tier in (web"}))
        r.step("unknown field selector", lambda: names({"fieldSelector": "data.a=1"}))
        first = names({"limit": "2"})
        r.note("page 1", {k: v for k, v in first.items() if k != "continue"})
        second = names({"limit": "2", "continue": first["continue"]})
        r.note("page 2", {k: v for k, v in second.items() if k != "continue"})
        third = names({"limit": "2", "continue": second["continue"]})
        r.note("page 3", {k: v for k, v in third.items() if k != "continue"})
        r.step(
            "page with a selector",
            lambda: {
                k: v
                for k, v in names({"limit": "1", "labelSelector": "tier=db"}).items()
                if k != "continue"
            },
        )
        r.step("bad continue token", lambda: names({"limit": "2", "continue": "not-a-token"}))

    run_both(backends, scenario)


def test_strategic_merge_directives(backends: dict[str, Client]) -> None:
    """The directives kubectl's client-side apply and ``kubectl patch`` send."""

    def scenario(r: Recorder) -> None:
        c, ns = r.c, r.ns
        kind = "apps/v1/Deployment"
        dep = deployment("d")
        dep["spec"]["template"]["spec"]["containers"][0]["env"] = [
            {"name": "A", "value": "1"},
            {"name": "B", "value": "2"},
        ]
        dep["spec"]["template"]["spec"]["containers"][0]["args"] = ["x", "y", "z"]
        dep["metadata"]["finalizers"] = ["example.com/a", "example.com/b"]
        c.create(dep, namespace=ns)

        def smp(label: str, patch: Obj) -> None:
            r.step(label, lambda: c.patch(kind, "d", patch, namespace=ns, patch_type="strategic"))

        smp(
            "setElementOrder reorders containers, adds env",
            {
                "spec": {
                    "template": {
                        "spec": {
                            "$setElementOrder/containers": [{"name": "side"}, {"name": "web"}],
                            "containers": [
                                {
                                    "name": "web",
                                    "$setElementOrder/env": [{"name": "B"}, {"name": "C"}],
                                    "env": [
                                        {"name": "C", "value": "3"},
                                        {"$patch": "delete", "name": "A"},
                                    ],
                                }
                            ],
                        }
                    }
                }
            },
        )
        smp(
            "deleteFromPrimitiveList finalizers",
            {"metadata": {"$deleteFromPrimitiveList/finalizers": ["example.com/a"]}},
        )
        smp(
            "retainKeys strategy",
            {
                "spec": {
                    "strategy": {
                        "$retainKeys": ["type"],
                        "type": "Recreate",
                    }
                }
            },
        )
        smp(
            "replace a list with $patch",
            {
                "spec": {
                    "template": {
                        "spec": {
                            "containers": [
                                {"name": "only", "image": "busybox:2"},
                                {"$patch": "replace"},
                            ]
                        }
                    }
                }
            },
        )
        smp("primitive list replaced", {"metadata": {"finalizers": ["example.com/c"]}})
        # (an unknown $patch value: kube-apiserver answers 500, the embedded server 400 on
        # purpose; see kube_runtime/patch.py)
        c.patch(kind, "d", {"metadata": {"finalizers": None}}, namespace=ns)

    run_both(backends, scenario)


def test_generation_dry_run_generate_name_and_collections(backends: dict[str, Client]) -> None:
    """Generation bumps, dry runs (answered, not stored), generateName and deletecollection."""

    def scenario(r: Recorder) -> None:
        c, ns = r.c, r.ns
        kind = "apps/v1/Deployment"
        c.create(deployment("g"), namespace=ns)
        r.step(
            "label change keeps generation",
            lambda: c.patch(kind, "g", {"metadata": {"labels": {"l": "1"}}}, namespace=ns),
        )
        r.step(
            "annotation change keeps generation",
            lambda: c.patch(kind, "g", {"metadata": {"annotations": {"a": "1"}}}, namespace=ns),
        )
        r.step(
            "spec change bumps generation",
            lambda: c.patch(kind, "g", {"spec": {"replicas": 3}}, namespace=ns),
        )
        r.step("dry-run create", lambda: c.create(cm("dry"), namespace=ns, dry_run=True))
        r.step("dry-run not stored", lambda: c.get("v1/ConfigMap", "dry", ns))
        live = c.create(cm("live", {"k": "v"}), namespace=ns)
        changed = copy.deepcopy(live)
        changed["data"] = {"k": "dry"}
        r.step("dry-run update", lambda: c.update(changed, dry_run=True))
        r.step("dry-run update not stored", lambda: c.get("v1/ConfigMap", "live", ns))
        r.step("dry-run delete", lambda: c.delete("v1/ConfigMap", "live", ns, dry_run=True))
        r.step("dry-run delete not done", lambda: c.get("v1/ConfigMap", "live", ns))
        generated = c.create(
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"generateName": "gen-"}},
            namespace=ns,
        )
        name = generated["metadata"]["name"]
        r.note("generated name shape", (name[:4], len(name), name[4:].isalnum()))
        c.delete("v1/ConfigMap", name, ns)
        for name, team in (("x1", "red"), ("x2", "red"), ("x3", "blue")):
            c.create(cm(name, labels={"team": team}), namespace=ns)
        r.step(
            "deletecollection by label",
            lambda: c.request(
                "DELETE",
                f"/api/v1/namespaces/{ns}/configmaps",
                query={"labelSelector": "team=red"},
            ),
        )
        r.step(
            "what the collection delete left",
            lambda: sorted(
                o["metadata"]["name"]
                for o in c.request("GET", f"/api/v1/namespaces/{ns}/configmaps")["items"]
            ),
        )

    run_both(backends, scenario)


def test_validation_causes(backends: dict[str, Client]) -> None:
    """422 answers clients show to users: the reason and the field of every cause."""

    def scenario(r: Recorder) -> None:
        c, ns = r.c, r.ns
        bad_labels = cm("bad-labels", labels={"-nope": "x", "ok": "v" * 64})
        r.note("bad label key and value", refusal(lambda: c.create(bad_labels, namespace=ns)))
        r.note("name too long", refusal(lambda: c.create(cm("n" * 254), namespace=ns)))
        r.note("uppercase name", refusal(lambda: c.create(cm("Upper"), namespace=ns)))
        p = pod("bad-pod")
        p["spec"]["containers"] = [
            {"name": "Bad_Name", "image": "nginx"},
            {"name": "dup", "image": "nginx", "ports": [{"containerPort": 70000}]},
            {"name": "dup", "image": ""},
        ]
        r.note("pod with bad containers", refusal(lambda: c.create(p, namespace=ns)))
        d = deployment("bad-dep")
        d["spec"]["selector"] = {"matchLabels": {"app": "other"}}
        d["spec"]["replicas"] = -1
        r.note("deployment selector and replicas", refusal(lambda: c.create(d, namespace=ns)))
        s = statefulset("bad-sts")
        s["spec"]["podManagementPolicy"] = "Sometimes"
        s["spec"]["updateStrategy"] = {"type": "Sideways"}
        r.note("statefulset enums", refusal(lambda: c.create(s, namespace=ns)))

    run_both(backends, scenario)


def _collect(w: Any, count: int, seconds: float = 5.0) -> list[tuple[str, Any]]:
    """Up to ``count`` events of watch ``w`` (type, normalized object), closing it after
    ``seconds`` at the latest."""
    events: list[tuple[str, Any]] = []
    timer = threading.Timer(seconds, w.close)
    timer.start()
    try:
        for ev in w:
            events.append((ev.type, normalize(ev.object)))
            if len(events) == count:
                break
    finally:
        timer.cancel()
    return events


def test_watch_selectors_and_current_state(backends: dict[str, Client]) -> None:
    """Watches as informers and ``kubectl get -w`` open them: from "0" (the current state
    first), with a label selector (objects entering and leaving it), by name."""

    def scenario(r: Recorder) -> None:
        c, ns = r.c, r.ns
        c.create(cm("s1", labels={"sel": "yes"}), namespace=ns)
        c.create(cm("s2", labels={"sel": "no"}), namespace=ns)
        start = c.list("v1/ConfigMap", ns)["metadata"]["resourceVersion"]
        with c.watch("v1/ConfigMap", ns, resource_version="0", allow_bookmarks=False) as w:
            r.note("from 0: the current state", sorted(_collect(w, 2), key=lambda e: str(e)))
        c.patch("v1/ConfigMap", "s1", {"metadata": {"labels": {"sel": "no"}}}, namespace=ns)
        c.patch("v1/ConfigMap", "s2", {"metadata": {"labels": {"sel": "yes"}}}, namespace=ns)
        c.patch("v1/ConfigMap", "s2", {"data": {"a": "2"}}, namespace=ns)
        c.delete("v1/ConfigMap", "s2", ns)
        with c.watch(
            "v1/ConfigMap", ns, resource_version=start, label_selector="sel=yes",
            allow_bookmarks=False,
        ) as w:  # fmt: skip
            r.note("selector: leave, enter, change, delete", _collect(w, 4))
        with c.watch(
            "v1/ConfigMap", ns, resource_version=start, field_selector="metadata.name=s1",
            allow_bookmarks=False,
        ) as w:  # fmt: skip
            r.note("by name", _collect(w, 1))

    run_both(backends, scenario)


def test_namespace_deletion_with_content_held(backends: dict[str, Client]) -> None:
    """A namespace whose content a finalizer holds: its terminating state and conditions, the
    403 for new content, and its removal once released."""

    def scenario(r: Recorder) -> None:
        c = r.c
        doomed = f"{r.ns}-x"
        c.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": doomed}})
        c.create(cm("held", finalizers=["example.com/hold"]), namespace=doomed)
        r.step("delete the namespace", lambda: c.delete("v1/Namespace", doomed))

        def settled() -> Obj | None:
            ns_obj = c.get("v1/Namespace", doomed)
            conditions = {
                x["type"]: x for x in (ns_obj.get("status") or {}).get("conditions") or ()
            }
            remaining = conditions.get("NamespaceFinalizersRemaining", {})
            return ns_obj if remaining.get("status") == "True" else None

        ns_obj = wait_for(settled, timeout=60, message="namespace conditions settled")
        status = ns_obj["status"]
        r.note("phase", status.get("phase"))
        r.note(
            "conditions",
            sorted((x["type"], x["status"], x.get("reason")) for x in status["conditions"]),
        )
        r.note("spec", ns_obj.get("spec"))
        r.step("create in it", lambda: c.create(cm("late"), namespace=doomed))
        r.step("the held object", lambda: c.get("v1/ConfigMap", "held", doomed))
        c.patch("v1/ConfigMap", "held", {"metadata": {"finalizers": None}}, namespace=doomed)

        def gone() -> bool:
            try:
                c.get("v1/Namespace", doomed)
            except ApiError as e:
                return e.code == 404
            return False

        r.note("namespace removed", wait_for(gone, timeout=60, message="namespace removed"))

    run_both(backends, scenario)


def _mask_ips(value: Any) -> Any:
    """``value`` with allocated cluster IPs masked (each server allocates its own)."""
    if isinstance(value, dict):
        return {
            k: (
                "<ip>"
                if k in ("clusterIP", "clusterIPs") and v not in ("None", ["None"])
                else _mask_ips(v)
            )
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_mask_ips(v) for v in value]
    return value


def test_other_kinds_controllers_write(backends: dict[str, Client]) -> None:
    """Services (headless and not), claims, controller revisions, events and leases: defaults
    and the update rules controllers meet."""

    def scenario(r: Recorder) -> None:
        c, ns = r.c, r.ns
        svc = {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": "web"},
            "spec": {"selector": {"app": "web"}, "ports": [{"port": 80, "targetPort": 8080}]},
        }
        r.note("service", _mask_ips(normalize(c.create(svc, namespace=ns))))
        headless = copy.deepcopy(svc)
        headless["metadata"]["name"] = "web-headless"
        headless["spec"]["clusterIP"] = "None"
        r.note("headless service", _mask_ips(normalize(c.create(headless, namespace=ns))))
        r.step(
            "service clusterIP change",
            lambda: c.patch(
                "v1/Service", "web-headless", {"spec": {"clusterIP": "10.96.0.99"}}, namespace=ns
            ),
        )
        claim = _claim("data")
        c.create(claim, namespace=ns)
        r.step(
            "claim access modes change",
            lambda: c.patch(
                "v1/PersistentVolumeClaim",
                "data",
                {"spec": {"accessModes": ["ReadWriteMany"]}},
                namespace=ns,
            ),
        )
        r.step(
            "claim storage request change while unbound",
            lambda: c.patch(
                "v1/PersistentVolumeClaim",
                "data",
                {"spec": {"resources": {"requests": {"storage": "2Gi"}}}},
                namespace=ns,
            ),
        )
        revision = {
            "apiVersion": "apps/v1",
            "kind": "ControllerRevision",
            "metadata": {"name": "rev-1"},
            "data": {"spec": {"template": {"metadata": {"labels": {"a": "b"}}}}},
            "revision": 1,
        }
        r.step("controller revision", lambda: c.create(revision, namespace=ns))
        r.step(
            "revision number change",
            lambda: c.patch("apps/v1/ControllerRevision", "rev-1", {"revision": 2}, namespace=ns),
        )
        r.step(
            "revision data change",
            lambda: c.patch(
                "apps/v1/ControllerRevision", "rev-1", {"data": {"x": 1}}, namespace=ns
            ),
        )
        event = {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"name": "web.1"},
            "involvedObject": {"kind": "Service", "name": "web", "namespace": ns},
            "reason": "Tested",
            "message": "a message",
            "type": "Normal",
            "count": 1,
            "source": {"component": "tester"},
        }
        r.step("event", lambda: c.create(event, namespace=ns))
        other_ns = copy.deepcopy(event)
        other_ns["metadata"]["name"] = "web.2"
        other_ns["involvedObject"]["namespace"] = "elsewhere"
        r.step("event for another namespace", lambda: c.create(other_ns, namespace=ns))
        lease = {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {"name": "leader"},
            "spec": {"holderIdentity": "a", "leaseDurationSeconds": 15},
        }
        created = r.step("lease", lambda: c.create(lease, namespace=ns))
        taken = copy.deepcopy(created)
        taken["spec"]["holderIdentity"] = "b"
        c.update(taken)
        r.step("lease update from a stale copy", lambda: c.update(taken))

    run_both(backends, scenario)


_TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"
_PAST = "2020-01-01T00:00:00Z"


def _restarts_120(column: Any, cell: Any) -> tuple[Any, Any]:
    """Restarts: ``"N"`` or ``"N (<age> ago)"`` in a string column since 1.22 (1.20: the
    integer N in an integer column). Anything else stays as it is, so it fails."""
    if column[1] == "string" and cell is None:  # the column definition
        return (column[0], "integer", *column[2:]), None
    if column[1] == "string" and isinstance(cell, str):
        count, _, ago = cell.partition(" ")
        if count.isdigit() and (not ago or re.fullmatch(r"\(\S+ ago\)", ago)):
            return (column[0], "integer", *column[2:]), int(count)
    return column, cell


#: Table columns that are newer than Kubernetes 1.20 or changed since (the embedded server
#: prints the current release's columns), per resource: column name -> None (a column 1.20
#: does not have: dropped) or a function mapping (column, cell) to their 1.20 form.
NEWER_TABLE_COLUMNS: dict[str, dict[str, Callable[[Any, Any], tuple[Any, Any]] | None]] = {
    "pods": {"Restarts": _restarts_120},  # string "N (Xm ago)" since 1.22
    "persistentvolumeclaims": {"VolumeAttributesClass": None},  # column added in 1.29
}


def _table(c: Client, path: str, mask: tuple[str, ...] = ()) -> Obj:
    """``kubectl get``'s view of ``path``: column names, types, formats and priorities, and
    each row's cells and conditions, with ages masked (they depend on when each server
    created the object), the columns in ``mask`` masked, and the current release's columns
    brought to their 1.20 form (``NEWER_TABLE_COLUMNS``)."""
    doc = c.request("GET", path, accept=_TABLE)
    resource = path.split("?")[0].rstrip("/").split("/")
    plural = next((p for p in reversed(resource) if p in _PLURALS), "")
    newer = NEWER_TABLE_COLUMNS.get(plural, {})
    columns = [
        (col["name"], col["type"], col.get("format", ""), col.get("priority", 0))
        for col in doc.get("columnDefinitions") or []
    ]
    keep = [i for i, col in enumerate(columns) if not (col[0] in newer and newer[col[0]] is None)]
    rows = []
    for row in doc.get("rows") or []:
        cells = []
        for i in keep:
            column, cell = columns[i], (row.get("cells") or [])[i]
            convert = newer.get(column[0])
            if convert is not None:
                column, cell = convert(column, cell)
            if column[0] == "Age" or column[0] in mask:
                cell = f"<{column[0]}>"
            cells.append(cell)
        rows.append({"cells": cells, "conditions": row.get("conditions")})
    out_columns = []
    for i in keep:
        convert = newer.get(columns[i][0])
        out_columns.append(convert(columns[i], None)[0] if convert else columns[i])
    return {"kind": doc.get("kind"), "columns": out_columns, "rows": rows}


_PLURALS = (
    "configmaps",
    "secrets",
    "serviceaccounts",
    "endpoints",
    "deployments",
    "replicasets",
    "statefulsets",
    "controllerrevisions",
    "pods",
    "services",
    "persistentvolumeclaims",
    "events",
    "leases",
    "namespaces",
    "nodes",
)


def _set_status(c: Client, path: str, status: Obj) -> None:
    c.request("PATCH", f"{path}/status", body={"status": status}, content_type=_MERGE_PATCH)


_MERGE_PATCH = "application/merge-patch+json"


def _container_status(name: str, **fields: Any) -> Obj:
    return {
        "name": name,
        "image": "nginx:1",
        "imageID": "",
        "ready": False,
        "restartCount": 0,
        "state": {"waiting": {"reason": "ContainerCreating"}},
        **fields,
    }


def _table_pods(c: Client, ns: str) -> list[str]:
    """Pods in the states the Pod printer distinguishes; their names."""
    base = f"/api/v1/namespaces/{ns}/pods"
    running = pod("running")
    running["spec"]["containers"].append({"name": "d", "image": "busybox:1"})
    running["spec"]["readinessGates"] = [
        {"conditionType": "example.com/a"},
        {"conditionType": "example.com/b"},
    ]
    c.create(running, namespace=ns)
    _set_status(
        c,
        f"{base}/running",
        {
            "phase": "Running",
            "podIP": "10.1.2.3",
            "podIPs": [{"ip": "10.1.2.3"}],
            "nominatedNodeName": "n2",
            "conditions": [
                {"type": "example.com/a", "status": "True"},
                {"type": "example.com/b", "status": "False"},
                {"type": "Ready", "status": "False"},
            ],
            "containerStatuses": [
                _container_status(
                    "c",
                    ready=True,
                    restartCount=2,
                    state={"running": {"startedAt": _PAST}},
                    lastState={
                        "terminated": {
                            "exitCode": 1,
                            "reason": "Error",
                            "startedAt": _PAST,
                            "finishedAt": _PAST,
                        }
                    },
                ),
                _container_status("d", state={"waiting": {"reason": "CrashLoopBackOff"}}),
            ],
        },
    )
    init = pod("init")
    init["spec"]["initContainers"] = [
        {"name": "i1", "image": "busybox:1"},
        {"name": "i2", "image": "busybox:1"},
    ]
    c.create(init, namespace=ns)
    _set_status(
        c,
        f"{base}/init",
        {
            "phase": "Pending",
            "initContainerStatuses": [
                _container_status(
                    "i1",
                    restartCount=1,
                    state={
                        "terminated": {
                            "exitCode": 0,
                            "reason": "Completed",
                            "startedAt": _PAST,
                            "finishedAt": _PAST,
                        }
                    },
                ),
                _container_status(
                    "i2", restartCount=3, state={"waiting": {"reason": "CrashLoopBackOff"}}
                ),
            ],
            "containerStatuses": [
                _container_status("c", state={"waiting": {"reason": "PodInitializing"}})
            ],
        },
    )
    failed_init = pod("failed-init")
    failed_init["spec"]["initContainers"] = [{"name": "i1", "image": "busybox:1"}]
    c.create(failed_init, namespace=ns)
    _set_status(
        c,
        f"{base}/failed-init",
        {
            "phase": "Pending",
            "initContainerStatuses": [
                _container_status(
                    "i1",
                    state={"terminated": {"exitCode": 3, "startedAt": _PAST, "finishedAt": _PAST}},
                ),
            ],
        },
    )
    done = pod("done")
    c.create(done, namespace=ns)
    _set_status(
        c,
        f"{base}/done",
        {
            "phase": "Succeeded",
            "containerStatuses": [
                _container_status(
                    "c",
                    state={
                        "terminated": {
                            "exitCode": 0,
                            "reason": "Completed",
                            "startedAt": _PAST,
                            "finishedAt": _PAST,
                        }
                    },
                ),
            ],
        },
    )
    killed = pod("killed")
    c.create(killed, namespace=ns)
    _set_status(
        c,
        f"{base}/killed",
        {
            "phase": "Failed",
            "reason": "Evicted",
            "containerStatuses": [
                _container_status(
                    "c",
                    state={
                        "terminated": {
                            "exitCode": 137,
                            "signal": 9,
                            "startedAt": _PAST,
                            "finishedAt": _PAST,
                        }
                    },
                ),
            ],
        },
    )
    held = pod("held")
    held["metadata"]["finalizers"] = ["example.com/hold"]
    held["spec"]["nodeName"] = "n1"
    c.create(held, namespace=ns)
    c.delete("v1/Pod", "held", namespace=ns)
    return ["running", "init", "failed-init", "done", "killed", "held"]


def test_tables_for_kubectl_get(backends: dict[str, Client]) -> None:
    """Server-side Tables as ``kubectl get`` (and ``-o wide``, the priority-1 columns) asks
    for them: columns and cells per kind, objects in the states each printer tells apart."""

    def scenario(r: Recorder) -> None:
        c, ns = r.c, r.ns
        apps = f"/apis/apps/v1/namespaces/{ns}"
        core = f"/api/v1/namespaces/{ns}"
        c.create(cm("t1", {"a": "1", "b": "2"}), namespace=ns)
        c.create({**cm("t2"), "binaryData": {"x": "AAE="}}, namespace=ns)
        c.create(
            {
                "apiVersion": "v1",
                "kind": "Secret",
                "metadata": {"name": "s"},
                "type": "example.com/t",
                "data": {"a": "YQ==", "b": "Yg=="},
            },
            namespace=ns,
        )
        c.create(
            {
                "apiVersion": "v1",
                "kind": "ServiceAccount",
                "metadata": {"name": "sa"},
                "secrets": [{"name": "x"}, {"name": "y"}],
            },
            namespace=ns,
        )
        c.create(
            {
                "apiVersion": "v1",
                "kind": "Endpoints",
                "metadata": {"name": "e"},
                "subsets": [
                    {
                        "addresses": [{"ip": f"10.0.0.{i}"} for i in range(1, 4)],
                        "ports": [{"name": "a", "port": 80}, {"name": "b", "port": 81}],
                    },
                    {"addresses": [{"ip": "10.0.1.1"}]},
                ],
            },
            namespace=ns,
        )
        c.create(
            {
                "apiVersion": "v1",
                "kind": "Endpoints",
                "metadata": {"name": "e2"},
                "subsets": [{"addresses": [{"ip": "fd00::1"}], "ports": [{"port": 53}]}],
            },
            namespace=ns,
        )
        c.create(
            {"apiVersion": "v1", "kind": "Endpoints", "metadata": {"name": "e3"}}, namespace=ns
        )
        c.create(deployment("d", replicas=2), namespace=ns)
        _set_status(
            c,
            f"{apps}/deployments/d",
            {"replicas": 2, "updatedReplicas": 1, "readyReplicas": 1, "availableReplicas": 1},
        )
        d2 = deployment("d2")
        d2["spec"]["selector"] = {
            "matchLabels": {"app": "d2"},
            "matchExpressions": [
                {"key": "tier", "operator": "In", "values": ["web", "api"]},
                {"key": "canary", "operator": "DoesNotExist"},
            ],
        }
        d2["spec"]["template"]["metadata"]["labels"]["tier"] = "web"
        c.create(d2, namespace=ns)
        rs = deployment("rs", replicas=3)
        rs["kind"] = "ReplicaSet"
        rs["spec"]["selector"] = {
            "matchExpressions": [{"key": "app", "operator": "NotIn", "values": ["x", "a"]}]
        }
        c.create(rs, namespace=ns)
        _set_status(c, f"{apps}/replicasets/rs", {"replicas": 3, "readyReplicas": 2})
        sts = c.create(statefulset("s"), namespace=ns)
        _set_status(c, f"{apps}/statefulsets/s", {"replicas": 2, "readyReplicas": 1})
        owner = {
            "apiVersion": "apps/v1",
            "kind": "StatefulSet",
            "name": "s",
            "uid": sts["metadata"]["uid"],
            "controller": True,
        }
        for name, refs in (("s-1", [owner]), ("free", [])):
            c.create(
                {
                    "apiVersion": "apps/v1",
                    "kind": "ControllerRevision",
                    "metadata": {"name": name, "ownerReferences": refs},
                    "data": {},
                    "revision": 3,
                },
                namespace=ns,
            )
        pods = _table_pods(c, ns)
        services: list[Obj] = [
            {
                "metadata": {"name": "h"},
                "spec": {"clusterIP": "None", "selector": {"app": "h"}, "ports": [{"port": 80}]},
            },
            {
                "metadata": {"name": "ext"},
                "spec": {
                    "selector": {"b": "2", "a": "1"},
                    "externalIPs": ["1.2.3.4", "5.6.7.8"],
                    "ports": [
                        {"port": 80, "name": "a"},
                        {"port": 53, "protocol": "UDP", "name": "b"},
                    ],
                },
            },
            {
                "metadata": {"name": "np"},
                "spec": {"type": "NodePort", "ports": [{"port": 80, "nodePort": 30111}]},
            },
            {
                "metadata": {"name": "lb"},
                "spec": {"type": "LoadBalancer", "ports": [{"port": 443, "nodePort": 30112}]},
            },
            {
                "metadata": {"name": "lb2"},
                "spec": {
                    "type": "LoadBalancer",
                    "externalIPs": ["9.9.9.9"],
                    "ports": [{"port": 443, "nodePort": 30113}],
                },
            },
            {
                "metadata": {"name": "xn"},
                "spec": {"type": "ExternalName", "externalName": "example.com"},
            },
        ]
        for svc in services:
            c.create({"apiVersion": "v1", "kind": "Service", **svc}, namespace=ns)
        _set_status(
            c,
            f"{core}/services/lb2",
            {"loadBalancer": {"ingress": [{"hostname": "b.example.com"}, {"ip": "7.7.7.7"}]}},
        )
        claim = _claim("data")
        c.create(claim, namespace=ns)
        bound = copy.deepcopy(claim)
        bound["metadata"] = {
            "name": "bound",
            "annotations": {"volume.beta.kubernetes.io/storage-class": "beta"},
        }
        bound["spec"].update(
            volumeName="pv-1",
            storageClassName="fast",
            volumeMode="Block",
            accessModes=["ReadWriteMany", "ReadWriteOnce"],
        )
        c.create(bound, namespace=ns)
        _set_status(
            c,
            f"{core}/persistentvolumeclaims/bound",
            {
                "phase": "Bound",
                "capacity": {"storage": "1536Mi"},
                "accessModes": ["ReadWriteMany", "ReadWriteOnce", "ReadOnlyMany"],
            },
        )
        classy = copy.deepcopy(claim)
        classy["metadata"] = {"name": "classy"}
        classy["spec"]["storageClassName"] = "slow"
        c.create(classy, namespace=ns)
        c.create(
            {
                "apiVersion": "coordination.k8s.io/v1",
                "kind": "Lease",
                "metadata": {"name": "l"},
                "spec": {"holderIdentity": "me"},
            },
            namespace=ns,
        )
        c.create(
            {
                "apiVersion": "coordination.k8s.io/v1",
                "kind": "Lease",
                "metadata": {"name": "l2"},
                "spec": {},
            },
            namespace=ns,
        )
        event = {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"name": "ev1"},
            "involvedObject": {
                "kind": "Pod",
                "name": "running",
                "namespace": ns,
                "fieldPath": "spec.containers{c}",
            },
            "reason": "Pulled",
            "message": "  pulled image \n",
            "type": "Normal",
            "source": {"component": "kubelet", "host": "n1"},
            "count": 4,
            "firstTimestamp": _PAST,
            "lastTimestamp": _PAST,
        }
        c.create(event, namespace=ns)
        c.create(
            {
                **event,
                "metadata": {"name": "ev2"},
                "involvedObject": {"kind": "Node", "namespace": ns},
                "source": {"component": "x"},
                "count": 0,
                "lastTimestamp": None,
            },
            namespace=ns,
        )
        node = f"{ns}-n"
        c.create(
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {
                    "name": node,
                    "labels": {
                        "node-role.kubernetes.io/control-plane": "",
                        "node-role.kubernetes.io/etcd": "",
                        "kubernetes.io/role": "gpu",
                    },
                },
                "spec": {"unschedulable": True},
            }
        )
        try:
            _set_status(
                c,
                f"/api/v1/nodes/{node}",
                {
                    "conditions": [
                        {
                            "type": "Ready",
                            "status": "False",
                            "reason": "x",
                            "message": "y",
                            "lastHeartbeatTime": _PAST,
                            "lastTransitionTime": _PAST,
                        }
                    ],
                    "addresses": [
                        {"type": "Hostname", "address": "h"},
                        {"type": "InternalIP", "address": "10.9.0.1"},
                    ],
                    "nodeInfo": {
                        "kubeletVersion": "v1.20.0",
                        "osImage": "Debian",
                        "machineID": "",
                        "systemUUID": "",
                        "bootID": "",
                        "kernelVersion": "",
                        "containerRuntimeVersion": "",
                        "kubeProxyVersion": "",
                        "operatingSystem": "linux",
                        "architecture": "amd64",
                    },
                },
            )
            r.step("table node", lambda: _table(c, f"/api/v1/nodes/{node}"))
        finally:
            c.delete("v1/Node", node)
        r.step("table namespace", lambda: _table(c, f"/api/v1/namespaces/{ns}"))
        for plural, mask in (
            ("configmaps", ()),
            ("secrets", ()),
            ("serviceaccounts", ()),
            ("endpoints", ()),
            ("deployments", ()),
            ("replicasets", ()),
            ("statefulsets", ()),
            ("controllerrevisions", ()),
            ("pods", ()),
            ("services", ("Cluster-IP",)),
            ("persistentvolumeclaims", ()),
            ("leases", ()),
            ("events", ()),
        ):
            base = (
                apps
                if plural in ("deployments", "replicasets", "statefulsets", "controllerrevisions")
                else core
            )
            if plural == "leases":
                base = f"/apis/coordination.k8s.io/v1/namespaces/{ns}"
            r.step(f"table {plural}", lambda p=f"{base}/{plural}", m=mask: _table(c, p, m))
        r.step("table configmaps/t1", lambda: _table(c, f"{core}/configmaps/t1"))
        r.step(
            "cluster IPs",
            lambda: [
                row["cells"][2] == "None"
                or row["cells"][2].count(".") == 3
                or row["cells"][2] == "<none>"
                for row in _table(c, f"{core}/services")["rows"]
            ],
        )
        for name in pods:
            if name == "held":
                c.patch(
                    "v1/Pod",
                    name,
                    {"metadata": {"finalizers": None}},
                    namespace=ns,
                    patch_type="merge",
                )

    run_both(backends, scenario)


def _owned(name: str, owner: Obj, **meta: Any) -> Obj:
    ref = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "name": owner["metadata"]["name"],
        "uid": owner["metadata"]["uid"],
        **meta,
    }
    return cm(name, ownerReferences=[ref])


@pytest.mark.parametrize("policy", ["Orphan", "Background", "Foreground"])
def test_deletion_propagation(backends: dict[str, Client], policy: str) -> None:
    def scenario(r: Recorder) -> None:
        c, ns = r.c, r.ns
        owner = c.create(cm("owner"), namespace=ns)
        c.create(_owned("child", owner, blockOwnerDeletion=True), namespace=ns)
        r.step(
            "delete owner", lambda: c.delete("v1/ConfigMap", "owner", ns, propagation_policy=policy)
        )

        def settled() -> Any:
            names = sorted(i["metadata"]["name"] for i in c.list("v1/ConfigMap", ns)["items"])
            if "owner" in names or (policy != "Orphan" and "child" in names):
                return None
            if policy == "Orphan":
                child = c.get("v1/ConfigMap", "child", ns)
                if child["metadata"].get("ownerReferences"):
                    return None
            return names or ["<none>"]

        r.note("remaining", wait_for(settled, timeout=30, message=f"{policy} deletion settled"))
        if policy == "Orphan":
            r.step("orphan", lambda: c.get("v1/ConfigMap", "child", ns))

    run_both(backends, scenario)


def test_foreground_deletion_waits_for_blocking_dependents(backends: dict[str, Client]) -> None:
    def scenario(r: Recorder) -> None:
        c, ns = r.c, r.ns
        owner = c.create(cm("owner"), namespace=ns)
        c.create(
            {
                **_owned("child", owner, blockOwnerDeletion=True),
                "metadata": {
                    **_owned("child", owner, blockOwnerDeletion=True)["metadata"],
                    "finalizers": ["example.com/hold"],
                },
            },
            namespace=ns,
        )
        r.step(
            "delete owner",
            lambda: c.delete("v1/ConfigMap", "owner", ns, propagation_policy="Foreground"),
        )

        def child_deleting() -> Any:
            child = c.get("v1/ConfigMap", "child", ns)
            return child if child["metadata"].get("deletionTimestamp") else None

        wait_for(child_deleting, timeout=30, message="child being deleted")
        r.step("owner waits", lambda: c.get("v1/ConfigMap", "owner", ns))
        r.step("child", lambda: c.get("v1/ConfigMap", "child", ns))
        r.step(
            "release child",
            lambda: c.patch(
                "v1/ConfigMap", "child", {"metadata": {"finalizers": None}}, namespace=ns
            ),
        )

        def gone() -> bool:
            return not c.list("v1/ConfigMap", ns)["items"]

        r.note("all gone", wait_for(gone, timeout=30, message="owner and child gone"))

    run_both(backends, scenario)


def test_crd_create_then_serve(backends: dict[str, Client]) -> None:
    group = f"{uuid.uuid4().hex[:8]}.example.com"

    def scenario(r: Recorder) -> None:
        c, ns = r.c, r.ns
        crd = {
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
                        "subresources": {
                            "status": {},
                            "scale": {
                                "specReplicasPath": ".spec.replicas",
                                "statusReplicasPath": ".status.replicas",
                            },
                        },
                        "schema": {
                            "openAPIV3Schema": {
                                "type": "object",
                                "properties": {
                                    "spec": {
                                        "type": "object",
                                        "properties": {
                                            "replicas": {"type": "integer", "minimum": 0},
                                            "size": {"type": "string", "default": "small"},
                                        },
                                    },
                                    "status": {
                                        "type": "object",
                                        "x-kubernetes-preserve-unknown-fields": True,
                                    },
                                },
                            }
                        },
                    }
                ],
            },
        }
        try:
            c.create(crd)
        except ApiError as e:
            if e.code != 409:
                raise

        def established() -> bool:
            got = c.get("apiextensions.k8s.io/v1/CustomResourceDefinition", f"widgets.{group}")
            conditions = (got.get("status") or {}).get("conditions") or ()
            if not any(x["type"] == "Established" and x["status"] == "True" for x in conditions):
                return False
            c.mapper.resource_for(f"{group}/v1/Widget")
            return True

        wait_for(established, timeout=30, message="CRD established and discoverable")
        kind = f"{group}/v1/Widget"
        w = {
            "apiVersion": f"{group}/v1",
            "kind": "Widget",
            "metadata": {"name": "w"},
            "spec": {"replicas": 1, "extra": 1},
        }
        r.step("create (defaulted, pruned)", lambda: c.create(w, namespace=ns))
        r.step(
            "invalid",
            lambda: c.create(
                {**w, "metadata": {"name": "bad"}, "spec": {"replicas": -1}}, namespace=ns
            ),
        )
        r.step(
            "wrong type",
            lambda: c.create(
                {**w, "metadata": {"name": "bad"}, "spec": {"replicas": "x"}}, namespace=ns
            ),
        )
        r.step(
            "scale",
            lambda: c.patch(
                kind, "w", {"spec": {"replicas": 3}}, namespace=ns, subresource="scale"
            ),
        )
        r.step(
            "status",
            lambda: c.patch(
                kind, "w", {"status": {"replicas": 3}}, namespace=ns, subresource="status"
            ),
        )
        r.step("get", lambda: c.get(kind, "w", ns))

    run_both(backends, scenario)


def test_crd_deletion_while_objects_remain(backends: dict[str, Client]) -> None:
    """A deleted CRD terminates: cleanup finalizer and Terminating condition, its kind still
    served but for creates while an object with a finalizer remains, gone once released."""
    group = f"{uuid.uuid4().hex[:8]}.example.com"
    crd_kind = "apiextensions.k8s.io/v1/CustomResourceDefinition"
    crd_name = f"gadgets.{group}"

    def scenario(r: Recorder) -> None:
        c, ns = r.c, r.ns
        base = f"/apis/{group}/v1/namespaces/{ns}/gadgets"
        schema = {
            "openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
        }
        crd = {
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": crd_name},
            "spec": {
                "group": group,
                "scope": "Namespaced",
                "names": {"plural": "gadgets", "kind": "Gadget"},
                "versions": [{"name": "v1", "served": True, "storage": True, "schema": schema}],
            },
        }
        try:
            c.create(crd)
        except ApiError as e:  # the second backend's namespace; CRDs are cluster-wide
            if e.code != 409:
                raise
        wait_for(lambda: c.request("GET", base) is not None, timeout=30, message="served")

        def gadget(name: str, **meta: Any) -> Obj:
            return {
                "apiVersion": f"{group}/v1",
                "kind": "Gadget",
                "metadata": {"name": name, **meta},
            }

        c.request("POST", base, body=gadget("held", finalizers=["example.com/keep"]))
        c.request("POST", base, body=gadget("free"))

        def marks(doc: Obj) -> Obj:
            conditions = (doc.get("status") or {}).get("conditions") or ()
            return {
                "deleting": bool(doc["metadata"].get("deletionTimestamp")),
                "finalizers": doc["metadata"].get("finalizers"),
                "conditions": [(x["type"], x["status"], x.get("reason")) for x in conditions],
            }

        r.note("delete crd", marks(c.delete(crd_kind, crd_name)))

        def free_gone() -> bool:
            try:
                c.request("GET", f"{base}/free")
            except ApiError as e:
                return e.code == 404
            return False

        def held_marked() -> bool:
            return bool(c.request("GET", f"{base}/held")["metadata"].get("deletionTimestamp"))

        # kube-apiserver's cleanup deletes the objects concurrently: wait for both effects.
        wait_for(lambda: free_gone() and held_marked(), timeout=30, message="the cleanup ran")
        r.step("get held", lambda: c.request("GET", f"{base}/held"))
        r.step("create while terminating", lambda: c.request("POST", base, body=gadget("late")))
        resources = c.request("GET", f"/apis/{group}/v1")["resources"]
        r.note("verbs while terminating", sorted(resources[0]["verbs"]))
        r.note("crd while terminating", marks(c.get(crd_kind, crd_name)))
        r.step(
            "release held",
            lambda: c.request(
                "PATCH",
                f"{base}/held",
                body={"metadata": {"finalizers": None}},
                content_type="application/merge-patch+json",
            ),
        )

        def crd_gone() -> bool:
            try:
                c.get(crd_kind, crd_name)
            except ApiError as e:
                return e.code == 404
            return False

        wait_for(crd_gone, timeout=30, message="CRD gone")

        def group_gone() -> bool:
            try:
                c.request("GET", f"/apis/{group}")
            except ApiError as e:
                return e.code == 404
            return False

        # kube-apiserver drops the group's discovery a moment after the CRD: wait for it.
        wait_for(group_gone, timeout=30, message="group no longer served")
        r.step("list after", lambda: c.request("GET", base))
        r.step("group after", lambda: c.request("GET", f"/apis/{group}"))

    run_both(backends, scenario)


def test_defaults_of_workloads(backends: dict[str, Client]) -> None:
    def scenario(r: Recorder) -> None:
        c, ns = r.c, r.ns
        r.step("deployment", lambda: c.create(deployment("d"), namespace=ns))
        r.step("statefulset", lambda: c.create(statefulset("s"), namespace=ns))
        r.step("pod", lambda: c.create(pod("p"), namespace=ns))
        r.step(
            "pvc",
            lambda: c.create(_claim("c"), namespace=ns),
        )

    run_both(backends, scenario)


def _pod_with(name: str, **spec: Any) -> Obj:
    p = pod(name)
    p["spec"].update(spec)
    return p


def test_pod_admission_priority_and_tolerations(backends: dict[str, Client]) -> None:
    """Admission plugins Priority and DefaultTolerationSeconds."""

    def scenario(r: Recorder) -> None:
        c, ns = r.c, r.ns
        created = r.step("defaults", lambda: c.create(pod("plain"), namespace=ns))
        r.step(
            "built-in class in any namespace",
            lambda: c.create(
                _pod_with("critical", priorityClassName="system-node-critical"), namespace=ns
            ),
        )
        r.step(
            "cluster-critical with its own value",
            lambda: c.create(
                _pod_with(
                    "critical2", priorityClassName="system-cluster-critical", priority=2000000000
                ),
                namespace=ns,
            ),
        )
        r.step(
            "unknown class",
            lambda: c.create(_pod_with("unknown", priorityClassName="nope"), namespace=ns),
        )
        r.step(
            "priority sent that disagrees",
            lambda: c.create(_pod_with("prio", priority=5), namespace=ns),
        )
        r.step(
            "priority sent that agrees",
            lambda: c.create(_pod_with("prio0", priority=0), namespace=ns),
        )
        r.step(
            "preemptionPolicy sent that disagrees",
            lambda: c.create(_pod_with("never", preemptionPolicy="Never"), namespace=ns),
        )
        r.step(
            "tolerates everything",
            lambda: c.create(_pod_with("all", tolerations=[{"operator": "Exists"}]), namespace=ns),
        )
        r.step(
            "tolerates every NoExecute taint",
            lambda: c.create(
                _pod_with("noexec", tolerations=[{"operator": "Exists", "effect": "NoExecute"}]),
                namespace=ns,
            ),
        )
        r.step(
            "not-ready with another effect",
            lambda: c.create(
                _pod_with(
                    "noschedule",
                    tolerations=[
                        {
                            "key": "node.kubernetes.io/not-ready",
                            "operator": "Exists",
                            "effect": "NoSchedule",
                        }
                    ],
                ),
                namespace=ns,
            ),
        )
        r.step(
            "own not-ready toleration kept",
            lambda: c.create(
                _pod_with(
                    "own",
                    tolerations=[
                        {
                            "key": "node.kubernetes.io/not-ready",
                            "operator": "Exists",
                            "effect": "NoExecute",
                            "tolerationSeconds": 60,
                        },
                        {"key": "x", "operator": "Equal", "value": "y", "effect": "NoSchedule"},
                    ],
                ),
                namespace=ns,
            ),
        )
        bare = copy.deepcopy(created)
        for key in ("tolerations", "priority", "preemptionPolicy"):
            bare["spec"].pop(key, None)
        bare["metadata"]["labels"] = {"updated": "yes"}
        r.step("update omitting what admission set", lambda: c.update(bare))
        r.step(
            "patch removing the default tolerations",
            lambda: c.patch("v1/Pod", "plain", {"spec": {"tolerations": None}}, namespace=ns),
        )

    run_both(backends, scenario)


def _claim_user(name: str, *claims: str) -> Obj:
    return _pod_with(
        name,
        volumes=[
            {"name": f"v{i}", "persistentVolumeClaim": {"claimName": claim}}
            for i, claim in enumerate(claims)
        ],
    )


def test_pvc_protection(backends: dict[str, Client]) -> None:
    """Admission plugin StorageObjectInUseProtection and the pvc-protection controller."""

    def scenario(r: Recorder) -> None:
        c, ns = r.c, r.ns
        kind = "v1/PersistentVolumeClaim"
        for name in ("used", "unscheduled", "marker1", "marker2", "live"):
            r.step(f"create {name}", lambda name=name: c.create(_claim(name), namespace=ns))
        r.step(
            "drop the finalizer of a live claim",
            lambda: c.patch(kind, "live", {"metadata": {"finalizers": None}}, namespace=ns),
        )

        def finalizer_back() -> Any:
            got = c.get(kind, "live", ns)
            return got if got["metadata"].get("finalizers") else None

        r.note("finalizer put back", normalize(wait_for(finalizer_back, timeout=30)))
        r.step("bound user", lambda: c.create(_claim_user("user", "used"), namespace=ns))
        binding = {
            "apiVersion": "v1",
            "kind": "Binding",
            "metadata": {"name": "user"},
            "target": {"apiVersion": "v1", "kind": "Node", "name": "n1"},
        }
        c.request("POST", f"/api/v1/namespaces/{ns}/pods/user/binding", body=binding)
        r.step(
            "unscheduled user",
            lambda: c.create(_claim_user("idle", "unscheduled"), namespace=ns),
        )
        r.step("delete a used claim", lambda: c.delete(kind, "used", ns))

        def gone(name: str) -> bool:
            try:
                c.get(kind, name, ns)
            except ApiError as e:
                return e.code == 404
            return False

        r.step(
            "delete a claim only an unscheduled pod names",
            lambda: c.delete(kind, "unscheduled", ns),
        )
        r.note("it goes", wait_for(lambda: gone("unscheduled"), timeout=30))
        r.step("delete an unused claim", lambda: c.delete(kind, "marker1", ns))
        r.note("unused goes", wait_for(lambda: gone("marker1"), timeout=30))
        r.step("the used claim is held", lambda: c.get(kind, "used", ns))
        user = c.get("v1/Pod", "user", ns)
        user["status"] = {**user.get("status", {}), "phase": "Succeeded"}
        c.update_status(user)
        r.step("delete another unused claim", lambda: c.delete(kind, "marker2", ns))
        r.note("it goes too", wait_for(lambda: gone("marker2"), timeout=30))
        r.step("a Succeeded pod still holds its claim", lambda: c.get(kind, "used", ns))
        r.step(
            "force delete the user", lambda: c.delete("v1/Pod", "user", ns, grace_period_seconds=0)
        )
        r.note("then the claim goes", wait_for(lambda: gone("used"), timeout=30))

    run_both(backends, scenario)
