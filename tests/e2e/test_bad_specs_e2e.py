"""Controllers under bad specs (issue 18 part 5): every spec of the corpus in
:mod:`tests.e2e.bad_specs` that the API accepts reaches the bundled controllers, which must
never panic on it, must report it (a Warning event naming the problem), must back off rather
than spin, and must go on converging the good sets in the same namespace."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from controllers import cloneset, statefulset
from controllers.cloneset import CLONESET
from controllers.statefulset import ENHANCED_STATEFULSET
from kube_runtime import Manager, kinds, metrics
from kube_runtime.client import ApiError, Client
from kube_runtime.envtest.managers import running
from kube_runtime.kinds import Kind, StatefulSet
from tests.e2e.bad_specs import CORPUS, LONG, LONG_NAMES, good

TIMEOUT = 60
KINDS: list[Kind] = [StatefulSet, ENHANCED_STATEFULSET, CLONESET]


@pytest.fixture(scope="module")
def crds(client: Client) -> None:
    cloneset.install_crd(client)
    statefulset.install_crd(client)


def _controller_names(namespace: str) -> list[str]:
    return [f"sts-{namespace}", f"sts-{namespace}-enhanced", f"cs-{namespace}"]


@pytest.fixture
def manager(client: Client, namespace: str, crds: None) -> Iterator[Manager]:
    m = Manager(
        client,
        namespace=namespace,
        metrics_bind_address="0",
        health_probe_bind_address="0",
        graceful_shutdown_timeout=10,
    )
    statefulset.setup(m, name=f"sts-{namespace}", enhanced=True)
    cloneset.setup(m, name=f"cs-{namespace}")
    with running(m):
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
    """Poll ``check`` (``(done, what it saw)``) until done; fail with what it saw last."""
    deadline = time.monotonic() + timeout
    while True:
        done, seen = check()
        if done:
            return
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}: {seen!r}")
        time.sleep(0.05)


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
    deadline = time.monotonic() + TIMEOUT
    while len(gaps) < len(names):
        assert time.monotonic() < deadline, f"ten failures of each set: {gaps}, {ninth}"
        now = time.monotonic()
        for n in names:
            count = _counter(metrics.RECONCILE_ERRORS, n) - before[n]
            if count >= 9:
                ninth.setdefault(n, now)
            if count >= 10 and n not in gaps:
                gaps[n] = now - ninth[n]
        time.sleep(0.005)
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
