"""The embedded cluster on a simulated clock (issue 28): the API server's timers, its workers and
the simulated kubelet run in virtual time, and the timestamps they write are virtual.

Each test builds a cluster inside ``SimClock.activate()`` and talks to it over HTTP with the
framework's client; Kubernetes' real timings (a 30 s grace period, a 10 s postStart hook) take
milliseconds of wall time.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from kube_runtime.client import Client
from kube_runtime.clock import REAL, SIM_EPOCH, RealClock, SimClock
from kube_runtime.envtest.cluster import EmbeddedCluster
from kube_runtime.envtest.server.storage import parse_rfc3339

NS = "default"
EPOCH = "2026-01-01T00:00:00Z"  # SIM_EPOCH


def _pod(name: str, **spec: Any) -> dict[str, Any]:
    container = {"name": "c", "image": "nginx:1.25"}
    container.update(spec.pop("container", {}))
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": NS},
        "spec": {"containers": [container], **spec},
    }


def _condition(pod: dict[str, Any], type_: str) -> dict[str, Any]:
    for c in (pod.get("status") or {}).get("conditions") or ():
        if c.get("type") == type_:
            return dict(c)
    return {}


def _ready(pod: dict[str, Any]) -> bool:
    return _condition(pod, "Ready").get("status") == "True"


def _pod_if(client: Client, name: str, test: Callable[[dict[str, Any]], bool]) -> Any:
    """Pod ``name`` when ``test`` says so, else None."""
    pod = client.get("v1/Pod", name, NS)
    return pod if test(pod) else None


def _running(pod: dict[str, Any]) -> bool:
    return (pod.get("status") or {}).get("phase") == "Running"


def _at(stamp: str) -> float:
    """Virtual seconds since the simulation started of an RFC 3339 timestamp."""
    return parse_rfc3339(stamp) - SIM_EPOCH


def _until(sim: SimClock, what: Callable[[], Any], within: float, step: float = 0.1) -> Any:
    """Poll ``what`` every ``step`` virtual seconds until truthy; its value. Fails after
    ``within`` virtual seconds."""
    deadline = sim.monotonic() + within
    while True:
        value = what()
        if value:
            return value
        assert sim.monotonic() < deadline, f"not within {within} virtual seconds"
        sim.sleep(step)


@pytest.fixture
def sim() -> Iterator[SimClock]:
    """A simulated clock active for the test; the test's wall time is bounded."""
    clock = SimClock(stall_timeout=10)
    started = time.monotonic()
    with clock.activate():
        yield clock
    assert time.monotonic() - started < 5.0, "simulated time took real time"


@pytest.fixture
def cluster(sim: SimClock) -> Iterator[EmbeddedCluster]:
    """A cluster built and started inside the simulation (the current clock), stopped in it."""
    cluster = EmbeddedCluster(pod_ready_after=5)
    assert cluster.clock is sim and cluster.store.clock is sim
    cluster.start()
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture
def client(cluster: EmbeddedCluster) -> Iterator[Client]:
    with cluster.client() as c:
        yield c


def test_timestamps_are_virtual(sim: SimClock, client: Client) -> None:
    sim.sleep(42)
    cm = client.create(
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": NS}}
    )
    assert cm["metadata"]["creationTimestamp"] == "2026-01-01T00:00:42Z"
    node = client.get("v1/Node", "embedded-node")
    assert node["metadata"]["creationTimestamp"] == EPOCH
    assert _condition(node, "Ready")["lastTransitionTime"] == EPOCH


def test_table_ages_are_virtual(sim: SimClock, client: Client) -> None:
    """``kubectl get``'s Age column is measured from the server's (virtual) time."""
    client.create(
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "aged", "namespace": NS}}
    )
    sim.sleep(150)
    table = client.request(
        "GET",
        f"/api/v1/namespaces/{NS}/configmaps/aged",
        accept="application/json;as=Table;v=v1;g=meta.k8s.io",
    )
    names = [c["name"] for c in table["columnDefinitions"]]
    assert table["rows"][0]["cells"][names.index("Age")] == "2m30s"


def test_crd_conditions_are_stamped_with_virtual_time(sim: SimClock, client: Client) -> None:
    sim.sleep(7)
    schema = {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}
    client.create(
        {
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": "widgets.example.com"},
            "spec": {
                "group": "example.com",
                "scope": "Namespaced",
                "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
                "versions": [{"name": "v1", "served": True, "storage": True, "schema": schema}],
            },
        }
    )
    crd = _until(
        sim,
        lambda: _established(
            client.get("apiextensions.k8s.io/v1/CustomResourceDefinition", "widgets.example.com")
        ),
        10,
    )
    assert _condition(crd, "Established")["lastTransitionTime"] == "2026-01-01T00:00:07Z"
    sim.sleep(5)
    deleting = client.delete(
        "apiextensions.k8s.io/v1/CustomResourceDefinition", "widgets.example.com"
    )
    assert deleting["metadata"]["deletionTimestamp"] == "2026-01-01T00:00:12Z"
    assert _condition(deleting, "Terminating")["lastTransitionTime"] == "2026-01-01T00:00:12Z"


def _established(crd: dict[str, Any]) -> Any:
    return crd if _condition(crd, "Established").get("status") == "True" else None


def test_csr_conditions_are_stamped_with_virtual_time(sim: SimClock, client: Client) -> None:
    import base64

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "sim")])
    request = x509.CertificateSigningRequestBuilder().subject_name(name).sign(key, hashes.SHA256())
    pem = base64.b64encode(request.public_bytes(serialization.Encoding.PEM)).decode()
    path = "/apis/certificates.k8s.io/v1/certificatesigningrequests"
    spec = {"request": pem, "signerName": "example.com/signer", "usages": ["digital signature"]}
    body = {"apiVersion": "certificates.k8s.io/v1", "kind": "CertificateSigningRequest"}
    created = client.request("POST", path, body={**body, "metadata": {"name": "c"}, "spec": spec})
    sim.sleep(33)
    created["status"] = {"conditions": [{"type": "Approved", "status": "True", "reason": "T"}]}
    approved = client.request("PUT", f"{path}/c/approval", body=created)
    (condition,) = approved["status"]["conditions"]
    assert condition["lastUpdateTime"] == condition["lastTransitionTime"] == "2026-01-01T00:00:33Z"


def test_a_pod_is_ready_after_pod_ready_after_virtual_seconds(
    sim: SimClock, client: Client
) -> None:
    sim.sleep(100)
    client.create(_pod("p"))
    pod = _until(sim, lambda: _pod_if(client, "p", _ready), 60)
    assert sim.monotonic() == pytest.approx(105.0, abs=0.11)
    assert pod["metadata"]["creationTimestamp"] == "2026-01-01T00:01:40Z"
    assert pod["status"]["phase"] == "Running"
    assert _at(pod["status"]["startTime"]) == 100
    state = pod["status"]["containerStatuses"][0]["state"]["running"]
    assert state["startedAt"] == "2026-01-01T00:01:45Z"
    assert _condition(pod, "Ready")["lastTransitionTime"] == "2026-01-01T00:01:45Z"
    assert _condition(pod, "PodScheduled")["lastTransitionTime"] == "2026-01-01T00:01:40Z"


def test_a_post_start_sleep_delays_readiness_by_virtual_seconds(
    sim: SimClock, client: Client
) -> None:
    hook = {"lifecycle": {"postStart": {"exec": {"command": ["sh", "-c", "sleep 10"]}}}}
    client.create(_pod("hooked", container=hook))
    running = _until(sim, lambda: _pod_if(client, "hooked", _running), 60)
    assert not _ready(running)
    state = running["status"]["containerStatuses"][0]["state"]["running"]
    assert _at(state["startedAt"]) == 5  # pod_ready_after
    pod = _until(sim, lambda: _pod_if(client, "hooked", _ready), 60)
    assert sim.monotonic() == pytest.approx(15.0, abs=0.11)
    assert _at(_condition(pod, "Ready")["lastTransitionTime"]) == 15


def test_graceful_deletion_takes_the_grace_period_in_virtual_time(
    sim: SimClock, client: Client
) -> None:
    client.create(_pod("doomed", terminationGracePeriodSeconds=30))
    _until(sim, lambda: _ready(client.get("v1/Pod", "doomed", NS)), 60)
    sim.sleep(10)  # virtual 15 s
    client.delete("v1/Pod", "doomed", NS)
    deleted_at = sim.monotonic()
    pod = client.get("v1/Pod", "doomed", NS)
    assert _at(pod["metadata"]["deletionTimestamp"]) == 45  # now + the grace period
    assert pod["metadata"]["deletionGracePeriodSeconds"] == 30
    sim.sleep(29.9)
    assert client.get("v1/Pod", "doomed", NS)["metadata"]["name"] == "doomed"

    def gone() -> bool:
        return not client.list("v1/Pod", NS)["items"]

    _until(sim, gone, 5, step=0.01)
    assert sim.monotonic() - deleted_at == pytest.approx(30.0, abs=0.011)


def test_a_watch_times_out_in_virtual_time(sim: SimClock, client: Client) -> None:
    """``timeoutSeconds`` ends a stream on the server's (virtual) timers; the events before
    are delivered first, each held until the client handed it on."""
    watch = client.watch("v1/ConfigMap", NS, timeout_seconds=300, allow_bookmarks=False)
    client.create(
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "w", "namespace": NS}}
    )
    events = [e.type for e in watch]  # iterates until the server ends the stream
    assert events == ["ADDED"]
    assert sim.monotonic() == pytest.approx(300.0, abs=0.01)


def _consume(sim: SimClock, client: Client, **options: Any) -> tuple[list[Any], threading.Thread]:
    """Watch pods on a thread of the simulation: (type, name, virtual time) of each event."""
    seen: list[Any] = []
    watch = client.watch("v1/Pod", NS, **options)

    def run() -> None:
        for event in watch:
            seen.append((event.type, event.object["metadata"].get("name"), sim.monotonic()))
        seen.append(("END", None, sim.monotonic()))

    thread = threading.Thread(target=run, name="test-watch")
    thread.start()
    return seen, thread


def test_time_does_not_move_past_a_watch_event_not_handed_on(sim: SimClock, client: Client) -> None:
    """Every line written to a simulated client's watch holds the clock until the client has
    handed its event on: the consumer sees each event at the virtual instant it happened,
    however long the test thread's own wait."""
    seen, thread = _consume(sim, client, allow_bookmarks=False, timeout_seconds=100)
    client.create(_pod("p"))
    sim.sleep(1000)  # nothing keeps the clock: it jumps as soon as the events are taken up
    thread.join()
    assert [(t, n) for t, n, _ in seen][:1] == [("ADDED", "p")]
    times = {t: when for t, _, when in seen}
    assert all(when in (0.0, 5.0, 100.0) for _, _, when in seen), seen
    assert times["ADDED"] == 0.0  # created (and scheduled) at 0
    assert times["MODIFIED"] == 5.0  # the last change: running and ready at 5
    assert times["END"] == 100.0  # the stream's timeout
    assert sim.monotonic() == 1000.0


def test_a_converted_watch_is_held_from_when_its_line_is_queued(
    sim: SimClock, cluster: EmbeddedCluster, client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A watch whose objects go through a conversion (a CRD's webhook; here an identity on
    config maps) is written by a thread of its own, which waits on the clock; its lines are
    held from when they are queued."""

    def converter(info: Any) -> Any:
        return (lambda objects, version: objects) if info.plural == "configmaps" else None

    monkeypatch.setattr(cluster.api.conversions, "converter", converter)
    watch = client.watch("v1/ConfigMap", NS, allow_bookmarks=True, timeout_seconds=100)
    seen: list[tuple[str, float]] = []

    def run() -> None:
        seen.extend((event.type, sim.monotonic()) for event in watch)
        seen.append(("END", sim.monotonic()))

    thread = threading.Thread(target=run, name="test-watch")
    thread.start()
    threading_names = {t.name for t in threading.enumerate()}
    assert "watch-convert" in threading_names
    client.create(
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x", "namespace": NS}}
    )
    sim.sleep(1000)
    thread.join()
    assert seen == [("ADDED", 0.0), ("BOOKMARK", 60.0), ("END", 100.0)]


def test_bookmarks_come_every_minute_of_virtual_time(sim: SimClock, client: Client) -> None:
    seen, thread = _consume(sim, client, allow_bookmarks=True, timeout_seconds=200)
    thread.join()
    assert [(t, when) for t, _, when in seen] == [
        ("BOOKMARK", 60.0),
        ("BOOKMARK", 120.0),
        ("BOOKMARK", 180.0),
        ("END", 200.0),
    ]


def test_a_client_kubelet_runs_on_the_simulated_clock(sim: SimClock) -> None:
    """The kubelet that works through a client (its informers, delays and timestamps) on the
    current clock, against a cluster of the same simulation."""
    from kube_runtime.envtest.kubelet import ClientKubelet

    cluster = EmbeddedCluster(kubelet=False)
    cluster.start()
    try:
        with cluster.client() as c:
            kubelet = ClientKubelet(c, ready_after=5, node_name="n1")
            assert kubelet.clock is sim
            kubelet.start()
            try:
                sim.sleep(10)
                c.create(_pod("p"))
                pod = _until(sim, lambda: _pod_if(c, "p", _ready), 60, step=0.5)
                assert 15.0 <= sim.monotonic() <= 15.5  # polled every 0.5 s
                assert _at(pod["status"]["startTime"]) == 10
                state = pod["status"]["containerStatuses"][0]["state"]["running"]
                assert _at(state["startedAt"]) == 15
            finally:
                kubelet.stop()
    finally:
        cluster.stop()


def test_a_real_clock_cluster_started_in_a_simulation_stays_out_of_it(sim: SimClock) -> None:
    """A cluster on the real clock (a session-wide one) started by a participant: its threads
    are not participants (their waits are real), so they never keep virtual time still."""
    cluster = EmbeddedCluster(clock=REAL, pod_ready_after=0.01)
    cluster.start()
    try:
        with cluster.client() as c:
            c.create(_pod("real"))
            sim.sleep(100)  # moves at once: nothing of the cluster takes part
            assert sim.monotonic() == 100.0
            pod = c.get("v1/Pod", "real", NS)
            assert abs(parse_rfc3339(pod["metadata"]["creationTimestamp"]) - time.time()) < 5
            _until(sim, lambda: _ready(c.get("v1/Pod", "real", NS)), 1000, step=0.01)
    finally:
        cluster.stop()


def test_the_real_clock_is_the_default_outside_a_simulation() -> None:
    cluster = EmbeddedCluster(kubelet=False)
    assert cluster.clock is REAL and isinstance(cluster.http.clock, RealClock)
    assert cluster.api.bookmark_interval == 1.0
