"""Least privilege, proven: the bundled controllers under exactly the RBAC they declare.

A kube-apiserver 1.20 of its own, started with ``--authorization-mode=RBAC``, the
OwnerReferencesPermissionEnforcement admission plugin (so ``blockOwnerDeletion`` needs the
``finalizers`` grants, as on clusters that enable it) and an audit log of the controllers'
ServiceAccount. The objects ``kube-runtime rbac statefulset cloneset`` prints are applied, the
manager runs with a token of that ServiceAccount (TokenRequest), and scenarios drive every
write path of both controllers. Then:

* no request of the ServiceAccount was refused (403) and every scenario converged;
* every (group, resource, verb) granted was used by some request the audit log shows: no grant
  is there by guess;
* taking out any one rule of the rendered roles makes the controllers meet a 403.

Real backend only: the test reads kube-apiserver's audit log, which the embedded server
does not write (its RBAC authorizer, ``EmbeddedCluster(authorization="RBAC")``, is held to
kube-apiserver's by ``tests/e2e/test_rbac_authorizer_e2e.py``).
"""

from __future__ import annotations

import contextlib
import itertools
import json
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

import controllers.cloneset as cloneset
import controllers.statefulset as statefulset
from controllers.cloneset.core import CLONESET
from controllers.statefulset.controller import ENHANCED_STATEFULSET
from controllers.statefulset.webhooks import WEBHOOK_PERMISSIONS
from kube_runtime import kinds, rbac
from kube_runtime.client import Client, NotFound
from kube_runtime.envtest.managers import running
from kube_runtime.envtest.plugin import backend_of
from kube_runtime.envtest.real import RealCluster, missing_binaries
from kube_runtime.envtest.waiting import wait_for
from kube_runtime.manager import Manager
from kube_runtime.sharding import Sharding, shard_for, shard_label
from kube_runtime.sharding import _permissions as permissions

ROOT = Path(__file__).resolve().parents[2]
SYSTEM_NS = "kube-runtime-system"
SERVICE_ACCOUNT = "kube-runtime-manager"
USER = f"system:serviceaccount:{SYSTEM_NS}:{SERVICE_ACCOUNT}"
TIMEOUT = 90.0
VCT = [
    {
        "metadata": {"name": "data"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
    }
]


@pytest.fixture(scope="module")
def rbac_cluster(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Any]:
    if backend_of(request.config) != "real":
        pytest.skip("real backend only: it reads kube-apiserver's audit log")
    if missing_binaries():
        pytest.skip("real backend binaries missing (make real-apiserver)")
    work = tmp_path_factory.mktemp("rbac")
    policy = work / "audit-policy.yaml"
    policy.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "audit.k8s.io/v1",
                "kind": "Policy",
                "omitStages": ["RequestReceived"],
                "rules": [
                    {"level": "Metadata", "users": [USER]},
                    {"level": "None"},
                ],
            }
        )
    )
    audit_log = work / "audit.log"
    cluster = RealCluster(
        authorization_mode="RBAC",
        extra_apiserver_args=[
            "--enable-admission-plugins=OwnerReferencesPermissionEnforcement",
            f"--audit-policy-file={policy}",
            f"--audit-log-path={audit_log}",
        ],
    )
    cluster.start()
    cluster.audit_log = audit_log
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture(scope="module")
def admin(rbac_cluster: Any, tmp_path_factory: pytest.TempPathFactory) -> Client:
    path = rbac_cluster.write_kubeconfig(tmp_path_factory.mktemp("admin") / "kubeconfig")
    client = Client.from_kubeconfig(path)
    client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": SYSTEM_NS}})
    client.create(
        {
            "apiVersion": "v1",
            "kind": "ServiceAccount",
            "metadata": {"name": SERVICE_ACCOUNT, "namespace": SYSTEM_NS},
        }
    )
    for crd in ("statefulset-crd.yaml", "cloneset-crd.yaml"):
        client.create(yaml.safe_load((ROOT / "deploy" / "crd" / crd).read_text()))
    for kind in (ENHANCED_STATEFULSET, CLONESET):
        wait_for(lambda kind=kind: _served(client, kind), TIMEOUT, message=f"{kind} served")
    return client


def _served(client: Client, kind: kinds.Kind) -> bool:
    client.mapper.reset()
    try:
        client.list(kind, "default")
    except LookupError:
        return False
    return True


def _allowed(admin: Client, grant: tuple[str, str, str]) -> bool:
    """What the RBAC authorizer answers now for the ServiceAccount (a SubjectAccessReview)."""
    group, resource, verb = grant
    plural, _, sub = resource.partition("/")
    review = admin.create(
        {
            "apiVersion": "authorization.k8s.io/v1",
            "kind": "SubjectAccessReview",
            "spec": {
                "user": USER,
                "groups": ["system:serviceaccounts", f"system:serviceaccounts:{SYSTEM_NS}"],
                "resourceAttributes": {
                    "group": group,
                    "resource": plural,
                    "subresource": sub,
                    "verb": verb,
                    "namespace": SYSTEM_NS,
                },
            },
        }
    )
    return bool(review["status"].get("allowed"))


CONTROLLERS = {"statefulset": statefulset, "cloneset": cloneset}


def _declared(name: str) -> list[rbac.Rule]:
    found = rbac.rules_of(CONTROLLERS[name])
    assert found is not None, name
    return list(found)


def _apply_rbac(admin: Client, objects: list[dict[str, Any]]) -> None:
    for obj in objects:
        kind = kinds.Kind(obj["apiVersion"], obj["kind"])
        meta = obj["metadata"]
        try:
            current = admin.get(kind, meta["name"], meta.get("namespace"))
        except NotFound:
            admin.create(obj)
            continue
        admin.update(
            {**obj, "metadata": {**meta, "resourceVersion": current["metadata"]["resourceVersion"]}}
        )


def _sa_client(rbac_cluster: Any, admin: Client) -> Client:
    from kubernetes.client import Configuration

    answer = admin.request(
        "POST",
        f"/api/v1/namespaces/{SYSTEM_NS}/serviceaccounts/{SERVICE_ACCOUNT}/token",
        body={
            "apiVersion": "authentication.k8s.io/v1",
            "kind": "TokenRequest",
            "spec": {"expirationSeconds": 3600},
        },
    )
    config = Configuration()
    config.host = rbac_cluster.url
    config.ssl_ca_cert = str(rbac_cluster.certs.ca_file)
    config.api_key = {"authorization": f"Bearer {answer['status']['token']}"}
    return Client(config)


def _manager(client: Client, controller: str) -> Manager:
    manager = Manager(
        client,
        leader_election=True,
        leader_election_id=f"rbac-{uuid.uuid4().hex[:6]}",
        leader_election_namespace=SYSTEM_NS,
        metrics_bind_address="0",
        health_probe_bind_address="0",
    )
    if controller == "statefulset":
        statefulset.setup(manager, max_concurrent_reconciles=2, enhanced=True)
    else:
        cloneset.setup(manager, max_concurrent_reconciles=2)
    return manager


# ------------------------------------------------------------------ audit log


def _audit(path: Path, since: int = 0) -> list[dict[str, Any]]:
    """Audit events of the ServiceAccount from byte offset ``since``: complete lines only (the
    API server may be writing the last one while we read)."""
    if not path.exists():
        return []
    with path.open("rb") as f:
        f.seek(since)
        data = f.read()
    complete = data[: data.rfind(b"\n") + 1]
    events = map(json.loads, complete.splitlines())
    return [e for e in events if e["user"]["username"] == USER]


def _grant_of(event: dict[str, Any]) -> tuple[str, str, str]:
    ref = event["objectRef"]
    resource = ref["resource"] + (f"/{ref['subresource']}" if ref.get("subresource") else "")
    return ref.get("apiGroup", ""), resource, event["verb"]


def _refused(events: list[dict[str, Any]]) -> list[tuple[str, str, str]]:
    return [_grant_of(e) for e in events if e.get("responseStatus", {}).get("code") == 403]


# ------------------------------------------------------------------ scenarios


def _sts(api_version: str, namespace: str, image: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": api_version,
        "kind": "StatefulSet",
        "metadata": {"name": "web", "namespace": namespace},
        "spec": {
            "serviceName": "web",
            "replicas": 2,
            "podManagementPolicy": "Parallel",
            "revisionHistoryLimit": 1,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "c", "image": image}]},
            },
            "volumeClaimTemplates": VCT,
            **spec,
        },
    }


def _set_image(admin: Client, kind: kinds.Kind, namespace: str, image: str) -> None:
    admin.patch(
        kind,
        "web",
        {"spec": {"template": {"spec": {"containers": [{"name": "c", "image": image}]}}}},
        namespace=namespace,
    )


def _rolled_out(
    admin: Client, kind: kinds.Kind, namespace: str, replicas: int
) -> Callable[[], bool]:
    def check() -> bool:
        obj = admin.get(kind, "web", namespace)
        status = obj.get("status") or {}
        return (
            status.get("observedGeneration") == obj["metadata"]["generation"]
            and status.get("replicas") == replicas
            and status.get("readyReplicas") == replicas
            and status.get("updatedReplicas") == replicas
            and (kind == CLONESET or status.get("currentRevision") == status.get("updateRevision"))
        )

    return check


def _live_pods(admin: Client, namespace: str) -> list[dict[str, Any]]:
    return [
        p
        for p in admin.list(kinds.Pod, namespace)["items"]
        if not p["metadata"].get("deletionTimestamp")
    ]


def _orphan_revision(admin: Client, namespace: str) -> None:
    """A ControllerRevision matching the ``app=web`` selector with no owner (to adopt)."""
    admin.create(
        {
            "apiVersion": "apps/v1",
            "kind": "ControllerRevision",
            "metadata": {"name": "web-orphan", "namespace": namespace, "labels": {"app": "web"}},
            "data": {"spec": {}},
            "revision": 0,
        }
    )


def _orphan_pod(admin: Client, namespace: str, name: str, image: str) -> None:
    admin.create(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name, "namespace": namespace, "labels": {"app": "web"}},
            "spec": {"containers": [{"name": "c", "image": image}]},
        }
    )


def _adopted(admin: Client, kind: kinds.Kind, name: str, namespace: str) -> Callable[[], bool]:
    def check() -> bool:
        try:
            obj = admin.get(kind, name, namespace)
        except NotFound:
            return True  # adopted and then deleted as surplus
        return any(r.get("controller") for r in obj["metadata"].get("ownerReferences") or ())

    return check


def scenario_statefulset(admin: Client, namespace: str) -> None:
    """apps/v1: create with claims, an orphan revision adopted, a rollout, a rollback (the old
    revision renumbered), another rollout (history truncated to 1), a pod that lost its
    identity label (updated back), an orphan pod (adopted, then deleted), scale down."""
    kind = kinds.StatefulSet
    _orphan_revision(admin, namespace)
    admin.create(_sts("apps/v1", namespace, "nginx:1"))
    _wait(_rolled_out(admin, kind, namespace, 2), message="sts created")
    _wait(_adopted(admin, kinds.ControllerRevision, "web-orphan", namespace), message="adopted")
    for image in ("nginx:2", "nginx:1", "nginx:3"):
        _set_image(admin, kind, namespace, image)
        _wait(_rolled_out(admin, kind, namespace, 2), message=f"sts at {image}")
    admin.patch(
        kinds.Pod,
        "web-0",
        {"metadata": {"labels": {"statefulset.kubernetes.io/pod-name": None}}},
        namespace=namespace,
    )
    _wait(
        lambda: (
            "statefulset.kubernetes.io/pod-name"
            in admin.get(kinds.Pod, "web-0", namespace)["metadata"]["labels"]
        ),
        message="identity label restored",
    )
    _orphan_pod(admin, namespace, "web-9", "nginx:3")
    _wait(_adopted(admin, kinds.Pod, "web-9", namespace), message="orphan pod adopted")
    admin.patch(kind, "web", {"spec": {"replicas": 1}}, namespace=namespace)
    _wait(_rolled_out(admin, kind, namespace, 1), message="sts scaled down")
    _wait(lambda: len(_live_pods(admin, namespace)) == 1, message="one pod left")


def scenario_collision(
    kind: kinds.Kind, body: Callable[[str], dict[str, Any]]
) -> Callable[[Client, str], None]:
    """A revision name taken by an unrelated revision with other data: the controller re-reads
    it, sees the difference and creates its revision under the next collision count."""

    def run(admin: Client, namespace: str) -> None:
        replicas = body(namespace)["spec"]["replicas"]
        elsewhere = _namespace(admin)  # the same object there names the revision to take
        admin.create(body(elsewhere))
        _wait(_rolled_out(admin, kind, elsewhere, replicas), message="created elsewhere")
        revision = admin.get(kind, "web", elsewhere)["status"]["updateRevision"]
        admin.create(
            {
                "apiVersion": "apps/v1",
                "kind": "ControllerRevision",
                "metadata": {"name": revision, "namespace": namespace},
                "data": {"spec": {"other": True}},
                "revision": 1,
            }
        )
        admin.create(body(namespace))
        _wait(
            lambda: (admin.get(kind, "web", namespace).get("status") or {}).get("collisionCount"),
            message="collision counted",
        )
        _wait(_rolled_out(admin, kind, namespace, replicas), message="created past the collision")

    return run


def scenario_enhanced(admin: Client, namespace: str) -> None:
    """The enhanced kind: claims deleted with the set's scale-down (retention policy), an
    in-place rollout, an orphan pod (adopted after the uncached re-read of the set, as
    upstream's claiming does, then deleted), then deletion."""
    kind = ENHANCED_STATEFULSET
    admin.create(
        _sts(
            kind.api_version,
            namespace,
            "nginx:1",
            updateStrategy={
                "type": "RollingUpdate",
                "rollingUpdate": {"podUpdatePolicy": "InPlaceIfPossible"},
            },
            persistentVolumeClaimRetentionPolicy={"whenScaled": "Delete", "whenDeleted": "Delete"},
        )
    )
    _wait(_rolled_out(admin, kind, namespace, 2), message="enhanced created")
    _set_image(admin, kind, namespace, "nginx:2")
    _wait(_rolled_out(admin, kind, namespace, 2), message="enhanced in place")
    _orphan_pod(admin, namespace, "web-9", "nginx:2")
    _wait(_adopted(admin, kinds.Pod, "web-9", namespace), message="orphan pod adopted")
    admin.patch(kind, "web", {"spec": {"replicas": 1}}, namespace=namespace)
    _wait(_rolled_out(admin, kind, namespace, 1), message="enhanced scaled down")
    admin.delete(kind, "web", namespace)
    _wait(lambda: not _live_pods(admin, namespace), message="enhanced deleted")


def _cloneset(namespace: str) -> dict[str, Any]:
    return {
        "apiVersion": CLONESET.api_version,
        "kind": "CloneSet",
        "metadata": {"name": "web", "namespace": namespace},
        "spec": {
            "replicas": 3,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "c", "image": "nginx:1"}]},
            },
            "volumeClaimTemplates": VCT,
            "updateStrategy": {"type": "InPlaceIfPossible"},
            "revisionHistoryLimit": 1,
        },
    }


def scenario_cloneset(admin: Client, namespace: str) -> None:
    """CloneSet: create with claims, an orphan pod adopted, in-place rollouts and a rollback,
    a scale-in naming its victim (podsToDelete trimmed after, the victim's claim deleted)."""
    admin.create(_cloneset(namespace))
    _wait(_rolled_out(admin, CLONESET, namespace, 3), message="cloneset created")
    _orphan_pod(admin, namespace, "stray", "nginx:1")
    _wait(_adopted(admin, kinds.Pod, "stray", namespace), message="orphan pod adopted")
    for image in ("nginx:2", "nginx:3", "nginx:2"):
        _set_image(admin, CLONESET, namespace, image)
        _wait(_rolled_out(admin, CLONESET, namespace, 3), message=f"cs at {image}")
    victim = _live_pods(admin, namespace)[0]["metadata"]["name"]
    admin.patch(
        CLONESET,
        "web",
        {"spec": {"replicas": 2, "scaleStrategy": {"podsToDelete": [victim]}}},
        namespace=namespace,
    )
    _wait(_rolled_out(admin, CLONESET, namespace, 2), message="cs scaled in")
    _wait(
        lambda: (
            not (admin.get(CLONESET, "web", namespace)["spec"].get("scaleStrategy") or {}).get(
                "podsToDelete"
            )
        ),
        message="podsToDelete trimmed",
    )


SCENARIOS: dict[str, tuple[Callable[[Client, str], None], ...]] = {
    "statefulset": (
        scenario_statefulset,
        scenario_enhanced,
        scenario_collision(kinds.StatefulSet, lambda ns: _sts("apps/v1", ns, "nginx:1")),
    ),
    "cloneset": (scenario_cloneset, scenario_collision(CLONESET, _cloneset)),
}


class Refused(Exception):
    """The ServiceAccount met a 403: a scenario stops waiting."""


_ABORT: list[Callable[[], bool]] = []


def _wait(predicate: Callable[[], Any], message: str) -> Any:
    """Poll ``predicate`` until it returns a truthy value (exceptions count as "not yet");
    give up with :class:`Refused` as soon as the current abort check (a 403 in the audit
    log, during rule-removal trials) says so, or with ``AssertionError`` after ``TIMEOUT``."""
    deadline = time.monotonic() + TIMEOUT
    last: object = None
    while time.monotonic() < deadline:
        if _ABORT and _ABORT[-1]():
            raise Refused(message)
        try:
            value = predicate()
        except Exception as e:  # a read racing the controllers: try again
            last = e
        else:
            if value:
                return value
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {message} (last error: {last!r})")


def _namespace(admin: Client) -> str:
    name = f"rbac-{uuid.uuid4().hex[:8]}"
    admin.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    return name


# ------------------------------------------------------------------ the proofs


#: Grants no request needs to use: OwnerReferencesPermissionEnforcement checks them when the
#: controllers set an owner reference (``delete`` of the object) with ``blockOwnerDeletion``
#: (``update`` of the owner's ``finalizers``), which the audit log does not show as requests;
#: the rule-removal test proves them.
ADMISSION_CHECKED = {
    ("", "persistentvolumeclaims", "delete"),  # an owner reference on a claim
    ("", "pods/finalizers", "update"),
    ("apps", "statefulsets/finalizers", "update"),
    (ENHANCED_STATEFULSET.group, "statefulsets/finalizers", "update"),
    (CLONESET.group, "clonesets/finalizers", "update"),
}

#: Grants of the enhanced StatefulSet's validating webhook (StorageClasses), which these
#: scenarios do not serve: neither required to be used nor taken out here
#: (tests/unit/controllers/test_asts_defaults_webhooks.py checks the webhook's reads, and
#: tests/e2e/test_asts_admission_vct_e2e.py the webhook on kube-apiserver).
WEBHOOK_GRANTS = {
    (group, resource, verb)
    for rule in WEBHOOK_PERMISSIONS
    for group in rule.api_groups
    for resource in rule.resources
    for verb in rule.verbs
}


def _granted(objects: list[dict[str, Any]]) -> set[tuple[str, str, str]]:
    return {
        (group, resource, verb)
        for obj in objects
        if obj["kind"] in ("ClusterRole", "Role")
        for r in obj["rules"]
        for group in r["apiGroups"]
        for resource in r["resources"]
        for verb in r["verbs"]
    }


def _render(rules: list[rbac.Rule]) -> list[dict[str, Any]]:
    return rbac.render(
        rules, name="kube-runtime-manager", namespace=SYSTEM_NS, service_account=SERVICE_ACCOUNT
    )


def _audit_offset(rbac_cluster: Any) -> int:
    path: Path = rbac_cluster.audit_log
    return path.stat().st_size if path.exists() else 0


@pytest.mark.parametrize("controller", sorted(CONTROLLERS))
def test_the_declared_rules_are_enough_and_all_used(
    rbac_cluster: Any, admin: Client, controller: str
) -> None:
    objects = _render(_declared(controller))
    _apply_rbac(admin, objects)
    granted = _granted(objects)
    for grant in sorted(granted):
        wait_for(lambda g=grant: _allowed(admin, g), TIMEOUT, message=f"{grant} allowed")
    start = _audit_offset(rbac_cluster)
    with running(_manager(_sa_client(rbac_cluster, admin), controller)) as runner:
        for scenario in SCENARIOS[controller]:
            scenario(admin, _namespace(admin))
            assert runner.error is None, runner.error
    # A watch is audited when it ends (ResponseComplete), a moment after the manager closed
    # it: read the log until every grant shows up, or the wait ends.
    deadline = time.monotonic() + 15
    while True:
        events = _audit(rbac_cluster.audit_log, start)
        used = {
            _grant_of(e)
            for e in events
            if "objectRef" in e and e.get("responseStatus", {}).get("code", 0) < 400
        }
        unused = granted - used - ADMISSION_CHECKED - WEBHOOK_GRANTS
        if not unused or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert _refused(events) == []
    assert unused == set(), f"granted but never used: {sorted(unused)}"


def _rendered_rules() -> list[tuple[str, str, int]]:
    return [
        (controller, obj["kind"], i)
        for controller in sorted(CONTROLLERS)
        for obj in _render(_declared(controller))
        if obj["kind"] in ("ClusterRole", "Role")
        for i, rule in enumerate(obj["rules"])
        if not any(
            (group, resource, verb) in WEBHOOK_GRANTS
            for group in rule["apiGroups"]
            for resource in rule["resources"]
            for verb in rule["verbs"]
        )
    ]


@pytest.mark.parametrize(("controller", "role_kind", "index"), _rendered_rules())
def test_taking_out_any_rule_meets_a_refusal(
    rbac_cluster: Any, admin: Client, controller: str, role_kind: str, index: int
) -> None:
    objects = _render(_declared(controller))
    role = next(o for o in objects if o["kind"] == role_kind)
    taken = role["rules"].pop(index)
    _apply_rbac(admin, objects)
    probe = (taken["apiGroups"][0], taken["resources"][0], taken["verbs"][0])
    wait_for(lambda: not _allowed(admin, probe), TIMEOUT, message=f"{probe} refused")
    start = _audit_offset(rbac_cluster)

    def refused() -> list[tuple[str, str, str]]:
        return _refused(_audit(rbac_cluster.audit_log, start))

    _ABORT.append(lambda: bool(refused()))
    try:
        with running(_manager(_sa_client(rbac_cluster, admin), controller)):
            for scenario in SCENARIOS[controller]:
                try:
                    scenario(admin, _namespace(admin))
                except Refused:
                    break
    finally:
        _ABORT.pop()
    assert refused(), f"no request was refused without the rule {taken}"


# ------------------------------------------------------------------ sharding

FAST = {"lease_duration": 2.0, "renew_deadline": 1.5, "retry_period": 0.3}
PRIMARIES = (kinds.StatefulSet, ENHANCED_STATEFULSET, CLONESET)


def _sharding_rules() -> tuple[tuple[rbac.Rule, ...], tuple[rbac.Rule, ...]]:
    found = permissions.sharding_rules(permissions.ring_resources(CONTROLLERS.values()))
    return found.cluster, found.namespace


def _render_sharded() -> list[dict[str, Any]]:
    return rbac.render(
        [rule for controller in sorted(CONTROLLERS) for rule in _declared(controller)],
        name="kube-runtime-manager",
        namespace=SYSTEM_NS,
        service_account=SERVICE_ACCOUNT,
        sharding=_sharding_rules(),
    )


def _sharding_objects(objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [o for o in objects if o["metadata"]["name"].endswith("-sharding")]


def _remove_sharding_objects(admin: Client) -> None:
    for obj in _sharding_objects(_render_sharded()):
        kind = kinds.Kind(obj["apiVersion"], obj["kind"])
        try:
            admin.delete(kind, obj["metadata"]["name"], obj["metadata"].get("namespace"))
        except NotFound:
            pass


def _sharded_manager(client: Client, identity: str, ring: str, namespace: str) -> Manager:
    """A replica of ``kube-runtime run statefulset cloneset --shards auto`` (short leases),
    watching ``namespace`` only (the cluster keeps the objects of the tests before)."""
    manager = Manager(
        client,
        namespace=namespace,
        identity=identity,
        leader_election_namespace=SYSTEM_NS,
        metrics_bind_address="0",
        health_probe_bind_address="0",
        graceful_shutdown_timeout=10,
        sharding=Sharding(ring),
        **FAST,
    )
    statefulset.setup(manager, max_concurrent_reconciles=2, enhanced=True, name=f"sts-{identity}")
    cloneset.setup(manager, max_concurrent_reconciles=2, name=f"cs-{identity}")
    return manager


def _primary(kind: kinds.Kind, namespace: str, name: str) -> dict[str, Any]:
    if kind == CLONESET:
        obj = _cloneset(namespace)
        obj["spec"]["replicas"] = 1
    else:
        obj = _sts(kind.api_version, namespace, "nginx:1", replicas=1)
    obj["metadata"]["name"] = name
    obj["spec"]["selector"] = {"matchLabels": {"app": name}}
    obj["spec"]["template"]["metadata"]["labels"] = {"app": name}
    return obj


def _one_per_shard(namespace: str, shards: list[str]) -> list[tuple[kinds.Kind, str, str]]:
    """(kind, name, shard): for every primary kind, one object the ring ``shards`` puts on
    each shard."""
    out = []
    for kind in PRIMARIES:
        prefix = {kinds.StatefulSet: "sts", ENHANCED_STATEFULSET: "ests", CLONESET: "cs"}[kind]
        wanted = dict.fromkeys(shards)
        for i in itertools.count():
            name = f"{prefix}{i}"
            owner = shard_for(f"{namespace}/{name}", shards)
            if owner is not None and wanted[owner] is None:
                wanted[owner] = name
                out.append((kind, name, owner))
            if all(wanted.values()):
                break
    return out


def _on_shard(
    admin: Client, ring: str, namespace: str, placed: list[tuple[kinds.Kind, str, str]]
) -> Callable[[], bool]:
    """Every object carries its shard's label and has its one replica ready."""
    key = shard_label(ring)

    def check() -> bool:
        for kind, name, shard in placed:
            obj = admin.get(kind, name, namespace)
            status = obj.get("status") or {}
            if (
                obj["metadata"].get("labels", {}).get(key) != shard
                or status.get("observedGeneration") != obj["metadata"]["generation"]
                or status.get("readyReplicas") != 1
            ):
                return False
        return len(_live_pods(admin, namespace)) == len(placed)

    return check


def _lease_gone(admin: Client, name: str) -> bool:
    try:
        admin.get(kinds.Lease, name, SYSTEM_NS)
    except NotFound:
        return True
    return False


def scenario_sharded(rbac_cluster: Any, admin: Client) -> None:
    """Two replicas of the bundled controllers with ``--shards``: replica ``a`` starts alone
    and takes every object (one per kind and shard, with pods, revisions and claims); ``b``
    joins (its Lease exists from before, without the ring's label) and takes its share through
    drains; then ``a`` stops, its objects move to ``b`` and its Lease is deleted."""
    suffix = uuid.uuid4().hex[:6]
    ring, a, b = f"rbac{suffix}", f"a-{suffix}", f"b-{suffix}"
    admin.create(
        {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {"name": b, "namespace": SYSTEM_NS},
            "spec": {"holderIdentity": ""},
        }
    )
    namespace = _namespace(admin)
    placed = _one_per_shard(namespace, [a, b])
    with contextlib.ExitStack() as stack:
        first = stack.enter_context(
            running(_sharded_manager(_sa_client(rbac_cluster, admin), a, ring, namespace))
        )
        for kind, name, _ in placed:
            admin.create(_primary(kind, namespace, name))
        _wait(
            _on_shard(admin, ring, namespace, [(k, n, a) for k, n, _ in placed]),
            message="all on the first replica",
        )
        with running(
            _sharded_manager(_sa_client(rbac_cluster, admin), b, ring, namespace)
        ) as second:
            _wait(_on_shard(admin, ring, namespace, placed), message="split over two replicas")
            first.stop()
            _wait(
                _on_shard(admin, ring, namespace, [(k, n, b) for k, n, _ in placed]),
                message="all on the replica left",
            )
            _wait(lambda: _lease_gone(admin, a), message="the stopped replica's Lease deleted")
            assert first.error is None and second.error is None, (first.error, second.error)


def test_sharded_replicas_converge_with_the_rendered_rules_all_used(
    rbac_cluster: Any, admin: Client
) -> None:
    objects = _render_sharded()
    _apply_rbac(admin, objects)
    sharding_granted = _granted(_sharding_objects(objects))
    assert sharding_granted == {
        ("apps", "statefulsets", "patch"),
        ("", "persistentvolumeclaims", "patch"),
        ("coordination.k8s.io", "leases", "list"),
        ("coordination.k8s.io", "leases", "patch"),
        ("coordination.k8s.io", "leases", "delete"),
    }
    for grant in sorted(sharding_granted):
        wait_for(lambda g=grant: _allowed(admin, g), TIMEOUT, message=f"{grant} allowed")
    start = _audit_offset(rbac_cluster)
    try:
        scenario_sharded(rbac_cluster, admin)
    finally:
        _remove_sharding_objects(admin)
    events = _audit(rbac_cluster.audit_log, start)
    used = {
        _grant_of(e)
        for e in events
        if "objectRef" in e and e.get("responseStatus", {}).get("code", 0) < 400
    }
    assert _refused(events) == []
    assert sharding_granted - used == set(), f"granted but never used: {sharding_granted - used}"


def _sharding_grants_rendered() -> list[tuple[str, str, str, str]]:
    return sorted(
        (obj["kind"], group, resource, verb)
        for obj in _sharding_objects(_render_sharded())
        if obj["kind"] in ("ClusterRole", "Role")
        for r in obj["rules"]
        for group in r["apiGroups"]
        for resource in r["resources"]
        for verb in r["verbs"]
    )


@pytest.mark.parametrize(("role_kind", "group", "resource", "verb"), _sharding_grants_rendered())
def test_taking_out_any_sharding_grant_meets_a_refusal(
    rbac_cluster: Any, admin: Client, role_kind: str, group: str, resource: str, verb: str
) -> None:
    """Finer than a rule: each verb of the ``-sharding`` roles is needed on its own."""
    objects = _render_sharded()
    role = next(o for o in _sharding_objects(objects) if o["kind"] == role_kind)
    kept = [
        rbac.rule(g, res, v)
        for r in role["rules"]
        for g in r["apiGroups"]
        for res in r["resources"]
        for v in r["verbs"]
        if (g, res, v) != (group, resource, verb)
    ]
    role["rules"] = [r.to_dict() for r in rbac.normalize(kept)]
    _apply_rbac(admin, objects)
    probe = (group, resource, verb)
    wait_for(lambda: not _allowed(admin, probe), TIMEOUT, message=f"{probe} refused")
    start = _audit_offset(rbac_cluster)

    def refused() -> list[tuple[str, str, str]]:
        return _refused(_audit(rbac_cluster.audit_log, start))

    _ABORT.append(lambda: bool(refused()))
    try:
        scenario_sharded(rbac_cluster, admin)
    except Refused:
        pass
    finally:
        _ABORT.pop()
        _remove_sharding_objects(admin)
    assert probe in refused(), f"{probe} was never refused without its grant: {refused()}"
