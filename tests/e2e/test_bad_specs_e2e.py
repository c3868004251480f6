"""Controllers under bad specs (issue 18 part 5): every spec of the corpus in
:mod:`tests.e2e.bad_specs` that the API accepts reaches the bundled controllers, which must
never panic on it, must report it (a Warning event naming the problem), must back off rather
than spin, and must go on converging the good sets in the same namespace. With the bundled
webhooks registered (issue 17), the API refuses the corpus at admission with field paths
instead, but for what only the pod API can tell.

On the embedded backend every test runs on simulated time (``docs/simtime.md``) on a cluster
of its own: the work queue's backoffs, measured here, are virtual; on kube-apiserver
(``--backend real``) the tests run in real time on the session cluster."""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from controllers import cloneset, statefulset
from controllers.cloneset import CLONESET
from controllers.statefulset import ENHANCED_STATEFULSET
from kube_runtime import Manager, clock, kinds, metrics, webhook
from kube_runtime.client import ApiError, Client
from kube_runtime.envtest import wait_for
from kube_runtime.envtest.managers import running
from kube_runtime.envtest.server import tls
from kube_runtime.envtest.waiting import WaitTimeout
from kube_runtime.kinds import Kind, StatefulSet
from kube_runtime.webhook._manifests import ClientConfig, webhook_configurations
from tests.e2e._fixtures import (  # noqa: F401 (fixtures)
    SIMULATED,
    running_manager,
    simulated_client,
    simulated_namespace,
)
from tests.e2e.bad_specs import CORPUS, LONG, LONG_NAMES, good

pytestmark = pytest.mark.simtime  # on the embedded backend: a cluster of each test's own

TIMEOUT = 300 if SIMULATED else 60  # virtual seconds under simulation
KINDS: list[Kind] = [StatefulSet, ENHANCED_STATEFULSET, CLONESET]


@pytest.fixture
def crds(client: Client) -> None:
    """The CloneSet and enhanced StatefulSet CRDs, in the test's cluster."""
    cloneset.install_crd(client)
    statefulset.install_crd(client)


def _controller_names(namespace: str) -> list[str]:
    return [f"sts-{namespace}", f"sts-{namespace}-enhanced", f"cs-{namespace}"]


@pytest.fixture
def manager(client: Client, namespace: str, crds: None) -> Iterator[Manager]:
    def add(m: Manager) -> None:
        statefulset.setup(m, name=f"sts-{namespace}", enhanced=True)
        cloneset.setup(m, name=f"cs-{namespace}")

    with running_manager(client, namespace, add) as m:
        yield m


def _counter(counter: Any, name: str) -> float:
    return counter.labels(name)._value.get()


def _warnings(client: Client, namespace: str) -> dict[tuple[str, str], list[dict[str, Any]]]:
    """Warning events by (involved kind, involved name)."""
    found: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for event in client.list(kinds.Event, namespace)["items"]:
        if event.get("type") == "Warning":
            involved = event["involvedObject"]
            found.setdefault((involved["kind"], involved["name"]), []).append(event)
    return found


def _wait(what: str, check: Callable[[], tuple[bool, Any]], timeout: float = TIMEOUT) -> None:
    """Wait (:func:`wait_for`, on the current clock) until ``check`` (``(done, what it
    saw)``) is done; fail with what it saw last."""
    seen: list[Any] = [None]

    def done() -> bool:
        ok, seen[0] = check()
        return ok

    try:
        wait_for(done, timeout, message=what)
    except WaitTimeout:
        pytest.fail(f"timed out waiting for {what}: {seen[0]!r}")


def test_bad_specs_are_reported_never_panic_and_good_sets_converge(
    client: Client, namespace: str, manager: Manager
) -> None:
    names = _controller_names(namespace)
    panics_before = {n: _counter(metrics.RECONCILE_PANICS, n) for n in names}
    accepted: dict[tuple[str, str], str] = {}  # (kind, object name) -> corpus entry
    rejected: list[str] = []
    for i, (entry, kind, change) in enumerate(CORPUS):
        name = f"bad-{i}"
        obj = good(kind, name, namespace)
        change(obj["spec"], name)
        try:
            client.create(obj)
        except ApiError as err:
            assert err.code in (400, 422), (entry, err)
            rejected.append(entry)
            continue
        accepted[(kind.kind, name)] = f"{kind.api_version} {entry}"
    for j, kind in enumerate(LONG_NAMES):
        name = f"{LONG}-{j}"
        client.create(good(kind, name, namespace))
        accepted[(kind.kind, name)] = f"{kind.api_version} long-name"
    goods = {}
    for kind in KINDS:
        name = f"good-{kind.group.split('.')[0] or 'core'}"
        client.create(good(kind, name, namespace, replicas=2))
        goods[name] = kind
    assert len(accepted) > 40, "the corpus should mostly reach the controllers"

    def all_reported() -> tuple[bool, list[str]]:
        warned = _warnings(client, namespace)
        missing = [entry for key, entry in accepted.items() if key not in warned]
        return not missing, missing

    _wait("a Warning event for every bad spec the API accepted", all_reported)

    def goods_ready() -> tuple[bool, dict[str, Any]]:
        states = {
            name: (client.get(kind, name, namespace).get("status") or {}).get("readyReplicas")
            for name, kind in goods.items()
        }
        return all(v == 2 for v in states.values()), states

    _wait("the good sets to converge next to the bad ones", goods_ready)
    panics = {n: _counter(metrics.RECONCILE_PANICS, n) - panics_before[n] for n in names}
    assert panics == dict.fromkeys(names, 0.0)


def test_a_rejected_pod_template_backs_off_per_item(
    client: Client, namespace: str, manager: Manager
) -> None:
    """A set whose pods the API rejects fails each reconcile: it is retried with the work
    queue's per-item exponential backoff (client-go's 5 ms doubling), not re-triggered by its
    own status writes (a condition whose message names another pod each time is not a
    change). So the tenth failure in a row comes at least 5 ms * 2^5 = 160 ms after the ninth
    (the backoff may restart once, after the first status write); re-triggered, a few ms."""
    names = _controller_names(namespace)
    before = {n: _counter(metrics.RECONCILE_ERRORS, n) for n in names}
    for kind in KINDS:
        obj = good(kind, f"rejected-{kind.kind.lower()}", namespace)
        obj["spec"]["template"]["spec"]["containers"] = [{"name": "C_Bad", "image": "nginx:1"}]
        client.create(obj)
    ninth: dict[str, float] = {}
    gaps: dict[str, float] = {}
    clk = clock.current()  # the backoffs are the clock's: virtual under simulation
    deadline = clk.monotonic() + TIMEOUT
    while len(gaps) < len(names):
        assert clk.monotonic() < deadline, f"ten failures of each set: {gaps}, {ninth}"
        now = clk.monotonic()
        for n in names:
            count = _counter(metrics.RECONCILE_ERRORS, n) - before[n]
            if count >= 9:
                ninth.setdefault(n, now)
            if count >= 10 and n not in gaps:
                gaps[n] = now - ninth[n]
        clk.sleep(0.005)
    assert all(gap >= 0.15 for gap in gaps.values()), f"no backoff: {gaps}"
    events = _warnings(client, namespace)
    for kind in KINDS:
        reasons = Counter(
            e["reason"] for e in events.get((kind.kind, f"rejected-{kind.kind.lower()}"), [])
        )
        assert reasons["FailedCreate"] >= 1, reasons


@pytest.mark.parametrize(
    ("path", "value", "field", "words"),
    [
        ("replicas", -3, "spec.replicas", "should be greater than or equal to 0"),
        ("podManagementPolicy", "Sometimes", "spec.podManagementPolicy", "Unsupported value"),
        (
            "updateStrategy",
            {"rollingUpdate": {"maxUnavailable": "lots"}},
            "spec.updateStrategy.rollingUpdate.maxUnavailable",
            "should match",
        ),
        (
            "persistentVolumeClaimRetentionPolicy",
            {"whenDeleted": "Shred"},
            "spec.persistentVolumeClaimRetentionPolicy.whenDeleted",
            "Unsupported value",
        ),
    ],
)
def test_the_enhanced_statefulset_schema_refuses_at_admission(
    client: Client, namespace: str, crds: None, path: str, value: Any, field: str, words: str
) -> None:
    """Issue 17 part 3: enums, minimums and int-or-percent patterns in the CRD's schema, so
    the API refuses what OpenKruise's webhook refuses, with the field path (both backends)."""
    obj = good(ENHANCED_STATEFULSET, "refused", namespace)
    obj["spec"][path] = value
    with pytest.raises(ApiError) as caught:
        client.create(obj)
    assert caught.value.code == 422
    assert any(c.get("field") == field and words in c["message"] for c in caught.value.causes), (
        caught.value.causes
    )


def test_an_invalid_spec_is_reported_once_and_not_retried(
    client: Client, namespace: str, manager: Manager
) -> None:
    """Issue 17 part 4: an invalid set gets one Warning event and its condition, then rests
    until its spec changes, however much else happens meanwhile (a good set of each kind
    converging here)."""
    names = {ENHANCED_STATEFULSET: "bad-sts", CLONESET: "bad-cs"}
    for kind, name in names.items():
        obj = good(kind, name, namespace)
        obj["spec"]["template"]["metadata"]["labels"] = "app=x"
        client.create(obj)
        client.create(good(kind, f"ok-{name}", namespace, replicas=2))

    def invalid_events() -> tuple[bool, dict[str, list[int]]]:
        found = {
            name: [e.get("count", 1) for e in evs if e["reason"] == "InvalidSpec"]
            for (_, name), evs in _warnings(client, namespace).items()
            if name in names.values()
        }
        return len(found) == 2 and all(found.values()), found

    _wait("an InvalidSpec event for each invalid set", invalid_events)

    def goods_ready() -> tuple[bool, list[Any]]:
        ready = [
            (client.get(kind, f"ok-{name}", namespace).get("status") or {}).get("readyReplicas")
            for kind, name in names.items()
        ]
        return ready == [2, 2], ready

    _wait("the good sets to converge", goods_ready)
    done, counts = invalid_events()
    assert done and counts == {"bad-sts": [1], "bad-cs": [1]}, counts
    for kind, name in names.items():
        conditions = (client.get(kind, name, namespace).get("status") or {}).get("conditions")
        assert any(c["status"] == "True" and "template" in c["message"] for c in conditions or [])


# Corpus entries whose problem only the pod API (or the pods' names) can tell: the webhooks let
# them through and the controllers report them (condition + Warning event, tests above).
POD_LEVEL = {
    "no-containers",
    "container-name-invalid",
    "container-no-image",
    "mount-of-no-volume",
    "containers-string",
    "containers-of-strings",
    "service-name-invalid",
    "selector-bad-label",
    "selector-bad-operator",
}


@pytest.fixture
def bundled_webhooks(
    client: Client, namespace: str, crds: None, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[None]:
    """The bundled validating and defaulting webhooks served by a manager (as ``kube-runtime
    run statefulset cloneset --webhook-port``) and registered for the test namespace."""
    certs = tls.generate(Path(tmp_path_factory.mktemp("bundled-webhooks")))
    manager = Manager(client, metrics_bind_address="0", health_probe_bind_address="0")
    server = webhook.server_for(
        manager,
        host="127.0.0.1",
        port=0,
        cert_dir=certs.directory,
        cert_name="server.crt",
        key_name="server.key",
    )
    statefulset.setup_webhooks(manager)
    cloneset.setup_webhooks(manager)
    client.request(
        "PATCH",
        f"/api/v1/namespaces/{namespace}",
        body={"metadata": {"labels": {"bundled-webhooks": namespace}}},
        content_type="application/merge-patch+json",
    )
    with running(manager):
        assert server.wait_started(10)
        _, port = server.address
        config = ClientConfig(url=f"https://127.0.0.1:{port}", ca_bundle=certs.ca_pem)
        name = f"bundled-{uuid.uuid4().hex[:8]}"
        objects = webhook_configurations(server.registrations, config, name=name)
        paths = []
        for obj in objects:
            for hook in obj["webhooks"]:
                hook["namespaceSelector"] = {"matchLabels": {"bundled-webhooks": namespace}}
            plural = obj["kind"].lower() + "s"
            paths.append(f"/apis/admissionregistration.k8s.io/v1/{plural}/{name}")
            client.request("POST", paths[-1].rsplit("/", 1)[0], body=obj)
        try:
            wait_for(lambda: _webhook_refuses(client, namespace), 30, message="webhooks in force")
            yield
        finally:
            for path in paths:
                client.request("DELETE", path)


def _webhook_refuses(client: Client, namespace: str) -> bool:
    """A CloneSet only the webhook refuses (restartPolicy Never) is refused (dry run)."""
    obj = good(CLONESET, "probe", namespace)
    obj["spec"]["template"]["spec"]["restartPolicy"] = "Never"
    try:
        client.create(obj, dry_run=True)
    except ApiError as err:
        return "restartPolicy" in err.message
    return False


def test_with_the_bundled_webhooks_the_corpus_is_refused_at_admission_with_field_paths(
    client: Client, namespace: str, bundled_webhooks: None
) -> None:
    """Issue 17, done-when: every spec of the corpus of the two CRD kinds is refused at
    admission (the schema, its CEL rules where the server has them, or the validating
    webhook) with the offending field's path in the message, but for those only the pod API
    can tell; a good set passes (defaulted by the CloneSet's defaulting webhook)."""
    unrefused: list[str] = []
    without_path: list[str] = []
    refused = 0
    for i, (entry, kind, change) in enumerate(CORPUS):
        if kind not in (ENHANCED_STATEFULSET, CLONESET):
            continue
        obj = good(kind, f"bad-{i}", namespace)
        change(obj["spec"], obj["metadata"]["name"])
        try:
            client.create(obj, dry_run=True)
        except ApiError as err:
            assert err.code in (400, 422), (entry, err)
            refused += 1
            if "spec." not in err.message:
                without_path.append(f"{kind.kind} {entry}: {err.message}")
            continue
        if entry not in POD_LEVEL:
            unrefused.append(f"{kind.kind} {entry}")
    assert unrefused == [] and without_path == [], (unrefused, without_path)
    assert refused >= 40, refused
    created = client.create(good(CLONESET, "fine", namespace))
    assert created["spec"]["updateStrategy"]["maxUnavailable"] == "20%"
