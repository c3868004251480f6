"""Scenarios of OpenKruise's own CloneSet end-to-end suite (``test/e2e/apps/v1alpha1/cloneset.go``
in openkruise/kruise), replayed on this project's CloneSet with Kruise's numbers: replicas,
strategies, ``minReadySeconds``, ``progressDeadlineSeconds`` and the ``Progressing`` conditions
Kruise's test expects at each step. Where Kruise's test sleeps, these wait for the state it
sleeps for.

On the embedded backend every test runs on simulated time (``docs/simtime.md``): a cluster of
its own whose clock, like the controller's, jumps to the next deadline whenever nothing can
run, so Kruise's own numbers (``minReadySeconds`` 10, deadlines of 120, 11 and 8 s, a 10 s
postStart hook) cost milliseconds. On kube-apiserver (``--backend real``) they run in real time,
where the numbers a scenario only waits out stay shorter (``SIMULATED`` False): a
``minReadySeconds`` of 3 instead of 10, deadlines of 8 and 4 s, a 3 s hook; one test,
``test_scales_with_min_ready_seconds_and_scale_strategy``, measures Kruise's 10 s on both.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from typing import Any

import pytest

from controllers.cloneset import CLONESET, install_crd, setup
from controllers.cloneset.core import SCALING_EXCLUDE_PREPARING_DELETE_LABEL
from controllers.cloneset.webhooks import set_defaults
from kube_runtime import Manager, kinds
from kube_runtime.webhook._defaulting import DefaultingHandler
from kube_runtime.workloads.pods import parse_time
from tests.e2e._fixtures import (  # noqa: F401 (fixtures)
    SIMULATED,
    running_manager,
    simulated_client,
    simulated_kubelet,
    simulated_namespace,
    webhook_server,
)
from tests.e2e.test_admission_webhooks_e2e import Hooks, _hook, configuration
from tests.e2e.test_cloneset_e2e import (  # noqa: F401 (fixtures)
    claims,
    make_cs,
    manager,
    pods,
)

pytestmark = pytest.mark.simtime  # on the embedded backend: a cluster of each test's own


@pytest.fixture
def crd(client) -> None:
    install_crd(client)


TIMEOUT = 60
TEN_MINUTES = 600
# Kruise's minReadySeconds is 10; in real time, where these tests only wait it out (they check
# counts, states and conditions, not the wait), 3 s: long enough for the Progressing
# condition's "CloneSet is progressing" to be seen between a change and availability.
MIN_READY = 10 if SIMULATED else 3
INSTANCE = "apps.kruise.io/cloneset-instance-id"
REVISION = "controller-revision-hash"
STATE = "lifecycle.apps.kruise.io/state"

AVAILABLE = ("True", "CloneSetAvailable", "CloneSet is available")
UPDATED = ("True", "CloneSetUpdated", "CloneSet is progressing")
PARTITION_AVAILABLE = (
    "True",
    "ProgressPartitionAvailable",
    "CloneSet has been paused due to partition ready",
)


def deadline_exceeded(revision: str) -> tuple[str, str, str]:
    """Kruise's ``NewCloneSetDeadlineExceededCondition``."""
    return (
        "False",
        "ProgressDeadlineExceeded",
        f"CloneSet revision {revision} has timed out progressing",
    )


def get_cs(client, namespace) -> dict[str, Any]:
    return client.get(CLONESET, "web", namespace)


def status(client, namespace) -> dict[str, Any]:
    return get_cs(client, namespace).get("status") or {}


def progressing(client, namespace) -> tuple[str, str, str] | None:
    """Kruise's ``GetCloneSetProgressingConditionWithoutTime``: the condition's status,
    reason and message."""
    for c in status(client, namespace).get("conditions") or ():
        if c["type"] == "Progressing":
            return (c["status"], c.get("reason", ""), c.get("message", ""))
    return None


def wait_progressing(client, namespace, wait_for, want, timeout: float = TIMEOUT) -> None:
    wait_for(lambda: progressing(client, namespace) == want, timeout)


def wait_status(client, namespace, wait_for, field: str, want: int, timeout=TIMEOUT) -> None:
    wait_for(lambda: status(client, namespace).get(field, 0) == want, timeout)


def patch_spec(client, namespace, spec: dict[str, Any]) -> None:
    client.patch(CLONESET, "web", {"spec": spec}, namespace=namespace)


def set_image(client, namespace, image: str) -> None:
    patch_spec(
        client, namespace, {"template": {"spec": {"containers": [{"name": "c", "image": image}]}}}
    )


def observed(client, namespace) -> bool:
    cs = get_cs(client, namespace)
    return (cs.get("status") or {}).get("observedGeneration") == cs["metadata"]["generation"]


@pytest.mark.usefixtures("manager")
def test_partition_99_percent_of_4_updates_one_pod(client, namespace, wait_for):
    """``CloneSet partition="99%", replicas=4, make sure one pod is upgraded``."""
    client.create(
        make_cs(
            namespace,
            4,
            image="nginx:alpine",
            updateStrategy={
                "type": "InPlaceIfPossible",
                "maxUnavailable": "50%",
                "partition": "99%",
            },
            minReadySeconds=MIN_READY,
            progressDeadlineSeconds=TEN_MINUTES,
        )
    )
    wait_progressing(client, namespace, wait_for, UPDATED)
    wait_status(client, namespace, wait_for, "replicas", 4, timeout=3)
    wait_status(client, namespace, wait_for, "readyReplicas", 4)
    wait_progressing(client, namespace, wait_for, AVAILABLE)
    assert len(pods(client, namespace)) == 4

    set_image(client, namespace, "nginx:mainline-alpine")
    wait_progressing(client, namespace, wait_for, UPDATED)
    wait_for(lambda: observed(client, namespace), 10)
    wait_status(client, namespace, wait_for, "updatedReplicas", 1)
    wait_progressing(client, namespace, wait_for, PARTITION_AVAILABLE)
    # Kruise sleeps 10 s and looks again: still one; the partition available state is stable
    wait_status(client, namespace, wait_for, "updatedReadyReplicas", 1)
    final = status(client, namespace)
    assert final["updatedReplicas"] == 1 and final["expectedUpdatedReplicas"] == 1
    images = sorted(p["spec"]["containers"][0]["image"] for p in pods(client, namespace).values())
    assert images == ["nginx:alpine"] * 3 + ["nginx:mainline-alpine"]


VCT2 = [
    {
        "metadata": {"name": name},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
    }
    for name in ("data-vol1", "data-vol2")
]


def _controlled_by_cloneset(claim: dict[str, Any]) -> bool:
    refs = [r for r in claim["metadata"].get("ownerReferences") or () if r.get("controller")]
    return len(refs) == 1 and refs[0]["kind"] == "CloneSet"


def _recreated(client, namespace, old_uids: set[str]) -> bool:
    live = pods(client, namespace)
    return len(live) == 4 and not {p["metadata"]["uid"] for p in live.values()} & old_uids


@pytest.mark.slow
@pytest.mark.usefixtures("manager")
def test_update_with_disable_pvc_reuse(client, namespace, wait_for):
    """``CloneSet Update with DisablePVCReuse=true``."""
    client.create(
        make_cs(
            namespace,
            4,
            image="nginx:alpine",
            updateStrategy={"type": "ReCreate"},
            minReadySeconds=MIN_READY,
            progressDeadlineSeconds=TEN_MINUTES,
            volumeClaimTemplates=VCT2,
        )
    )
    wait_progressing(client, namespace, wait_for, UPDATED)
    wait_status(client, namespace, wait_for, "replicas", 4, timeout=3)
    wait_status(client, namespace, wait_for, "readyReplicas", 4)
    live = pods(client, namespace)
    assert len(live) == 4
    instance_ids = {p["metadata"]["labels"][INSTANCE] for p in live.values()}
    pvcs = claims(client, namespace)
    assert len(pvcs) == 8
    for claim in pvcs.values():
        assert claim["metadata"]["labels"][INSTANCE] in instance_ids
        assert _controlled_by_cloneset(claim)
    pvc_names = set(pvcs)
    wait_progressing(client, namespace, wait_for, AVAILABLE)

    # delete the pods: the new ones reuse the claims (and their instance ids)
    uids = {p["metadata"]["uid"] for p in live.values()}
    for name in live:
        client.delete(kinds.Pod, name, namespace)
    wait_for(lambda: _recreated(client, namespace, uids), TIMEOUT)
    wait_status(client, namespace, wait_for, "updatedAvailableReplicas", 4)
    assert progressing(client, namespace) == AVAILABLE
    pvcs = claims(client, namespace)
    assert set(pvcs) == pvc_names
    assert {c["metadata"]["labels"][INSTANCE] for c in pvcs.values()} == instance_ids
    assert all(_controlled_by_cloneset(c) for c in pvcs.values())

    # with disablePVCReuse the orphaned claims go: new ids, new claims
    patch_spec(client, namespace, {"scaleStrategy": {"disablePVCReuse": True}})
    wait_for(lambda: observed(client, namespace), 10)
    assert progressing(client, namespace) == AVAILABLE
    live = pods(client, namespace)
    uids = {p["metadata"]["uid"] for p in live.values()}
    for name in live:
        client.delete(kinds.Pod, name, namespace)
    wait_for(lambda: _recreated(client, namespace, uids), TIMEOUT)
    wait_status(client, namespace, wait_for, "updatedAvailableReplicas", 4)
    wait_for(lambda: len(claims(client, namespace)) == 8, TIMEOUT)
    assert progressing(client, namespace) == AVAILABLE
    live = pods(client, namespace)
    assert len(live) == 4
    instance_ids = {p["metadata"]["labels"][INSTANCE] for p in live.values()}
    for name, claim in claims(client, namespace).items():
        assert claim["metadata"]["labels"][INSTANCE] in instance_ids
        assert name not in pvc_names
        assert _controlled_by_cloneset(claim)


HOOK = "preparing-update-hook"
# Kruise's test sets 120 s and waits up to 180 s for the deadline to pass; nothing else in
# the scenario depends on its length, so in real time it is shortened (longer than the set
# takes to become available at its creation, MIN_READY after its pods are ready).
SHORT_DEADLINE = 120 if SIMULATED else 8
# Kruise's 11 s and 8 s deadlines of the two "creates with" tests that wait them out while the
# pod is held (PreparingNormal, unschedulable): nothing else depends on their length (4 s in
# real time).
HELD_DEADLINE = 11 if SIMULATED else 4
HELD_DEADLINE_UNSCHEDULABLE = 8 if SIMULATED else 4


def _groups(client, namespace) -> tuple[int, int, int]:
    """Kruise's ``groupPodsByRevision``: (updated, current, in PreparingUpdate)."""
    update_revision = status(client, namespace).get("updateRevision")
    updated = current = preparing = 0
    for pod in pods(client, namespace).values():
        labels = pod["metadata"]["labels"]
        if labels.get(REVISION) == update_revision:
            updated += 1
        else:
            current += 1
        preparing += labels.get(STATE) == "PreparingUpdate"
    return updated, current, preparing


@pytest.mark.slow
@pytest.mark.usefixtures("manager")
def test_regard_preparing_update_pod_as_update_when_scaling(client, namespace, wait_for):
    """``CloneSet regard preparing-update pod as update when scaling``."""
    cs = make_cs(
        namespace,
        2,
        image="nginx:alpine",
        updateStrategy={"type": "InPlaceIfPossible", "maxUnavailable": "50%", "partition": "99%"},
        lifecycle={"inPlaceUpdate": {"labelsHandler": {HOOK: "true"}}},
        minReadySeconds=MIN_READY,
        progressDeadlineSeconds=SHORT_DEADLINE,
    )
    cs["spec"]["template"]["metadata"]["labels"][HOOK] = "true"
    client.create(cs)
    wait_status(client, namespace, wait_for, "readyReplicas", 2)
    wait_progressing(client, namespace, wait_for, AVAILABLE)
    assert len(pods(client, namespace)) == 2

    set_image(client, namespace, "nginx:mainline-alpine")
    wait_for(lambda: observed(client, namespace), 10)
    wait_for(lambda: _groups(client, namespace) == (0, 2, 1), TIMEOUT)

    # rebuild the old pod that is not held: it comes back at the current revision
    victim = next(
        n
        for n, p in pods(client, namespace).items()
        if p["metadata"]["labels"].get(STATE) != "PreparingUpdate"
    )
    uid = pods(client, namespace)[victim]["metadata"]["uid"]
    client.delete(kinds.Pod, victim, namespace)
    wait_for(
        lambda: (
            len(pods(client, namespace)) == 2
            and uid not in {p["metadata"]["uid"] for p in pods(client, namespace).values()}
        ),
        TIMEOUT,
    )
    assert _groups(client, namespace) == (0, 2, 1)
    revision = status(client, namespace)["updateRevision"]
    wait_progressing(
        client, namespace, wait_for, deadline_exceeded(revision), SHORT_DEADLINE + TIMEOUT
    )

    # scaled to 3, the new pod is at the current revision too ("99%" of 3 keeps 2)
    patch_spec(client, namespace, {"replicas": 3})
    wait_for(lambda: len(pods(client, namespace)) == 3, TIMEOUT)
    assert _groups(client, namespace) == (0, 3, 1)

    # releasing the hook updates that pod
    held = next(
        n
        for n, p in pods(client, namespace).items()
        if p["metadata"]["labels"].get(STATE) == "PreparingUpdate"
    )
    client.patch(kinds.Pod, held, {"metadata": {"labels": {HOOK: None}}}, namespace=namespace)
    wait_for(lambda: _groups(client, namespace) == (1, 2, 0), TIMEOUT)

    # no partition: the two others wait for their hook, then are updated
    patch_spec(client, namespace, {"updateStrategy": {"partition": None, "maxUnavailable": "100%"}})
    wait_for(lambda: _groups(client, namespace) == (1, 2, 2), TIMEOUT)
    for name, pod in pods(client, namespace).items():
        if pod["metadata"]["labels"].get(REVISION) != status(client, namespace)["updateRevision"]:
            client.patch(
                kinds.Pod, name, {"metadata": {"labels": {HOOK: None}}}, namespace=namespace
            )
    wait_for(lambda: _groups(client, namespace) == (3, 0, 0), TIMEOUT)
    # the pods wait in Updated for the hook label they lost: the deadline stays exceeded
    assert progressing(client, namespace) == deadline_exceeded(revision)


@pytest.mark.usefixtures("manager")
def test_scale_up_excluding_preparing_delete(client, namespace, wait_for):
    """``specific scale down with lifecycle and then scale up, when
    scalingExcludePreparingDelete is enabled``."""
    cs = make_cs(
        namespace,
        3,
        lifecycle={"preDelete": {"labelsHandler": {"lifecycle-hook": "true"}}},
        progressDeadlineSeconds=TEN_MINUTES,
    )
    cs["metadata"]["labels"] = {SCALING_EXCLUDE_PREPARING_DELETE_LABEL: "true"}
    cs["spec"]["template"]["metadata"]["labels"]["lifecycle-hook"] = "true"
    client.create(cs)
    wait_status(client, namespace, wait_for, "replicas", 3, timeout=3)
    wait_status(client, namespace, wait_for, "readyReplicas", 3)
    wait_progressing(client, namespace, wait_for, AVAILABLE)
    old_pods = set(pods(client, namespace))
    assert len(old_pods) == 3

    victim = sorted(old_pods)[0]
    patch_spec(client, namespace, {"replicas": 2, "scaleStrategy": {"podsToDelete": [victim]}})
    wait_for(
        lambda: (
            pods(client, namespace)[victim]["metadata"]["labels"].get(STATE) == "PreparingDelete"
        ),
        10,
    )
    wait_for(lambda: observed(client, namespace), 10)
    assert status(client, namespace)["replicas"] == 3
    wait_progressing(client, namespace, wait_for, UPDATED, 5)

    patch_spec(client, namespace, {"replicas": 3})
    wait_status(client, namespace, wait_for, "replicas", 4, timeout=10)
    assert progressing(client, namespace) == UPDATED

    client.patch(
        kinds.Pod, victim, {"metadata": {"labels": {"lifecycle-hook": None}}}, namespace=namespace
    )
    wait_for(
        lambda: (
            victim
            not in {p["metadata"]["name"] for p in client.list(kinds.Pod, namespace)["items"]}
        ),
        30,
    )
    wait_status(client, namespace, wait_for, "replicas", 3, timeout=10)
    live = set(pods(client, namespace))
    assert len(live) == 3 and len(live & old_pods) == 2
    wait_progressing(client, namespace, wait_for, AVAILABLE, 30)


@pytest.mark.usefixtures("manager")
def test_in_place_update_images_with_the_same_image_id(client, namespace, wait_for, kubelet):
    """``in-place update images with the same imageID``: in Kruise's registry
    nginx:mainline-alpine is the same image as nginx:alpine; the simulated kubelet is told so."""
    if kubelet is None:
        pytest.skip("needs the simulated kubelet")
    kubelet.settings.image_digests = {"nginx:mainline-alpine": "nginx:alpine"}
    replay_same_image_id(client, namespace, wait_for)


def replay_same_image_id(
    client: Any, namespace: str, wait_for: Any, *, image_id: str | None = None
) -> None:
    """Kruise's ``in-place update images with the same imageID`` steps, on a kubelet that
    reports nginx:alpine and nginx:mainline-alpine as one image (``image_id``: the imageID it
    reports for both, when known): the update is in place (the same pod, a new container),
    keeps the imageID, records it as the last container status, and completes (Kruise accepts
    the old imageID when the container runs the spec's image)."""
    client.create(
        make_cs(
            namespace,
            1,
            image="nginx:alpine",
            updateStrategy={"type": "InPlaceIfPossible"},
            minReadySeconds=MIN_READY,
            progressDeadlineSeconds=TEN_MINUTES,
        )
    )
    wait_status(client, namespace, wait_for, "replicas", 1, timeout=3)
    wait_progressing(client, namespace, wait_for, UPDATED)
    wait_status(client, namespace, wait_for, "readyReplicas", 1)
    wait_progressing(client, namespace, wait_for, AVAILABLE)
    (old,) = pods(client, namespace).values()
    old_status = old["status"]["containerStatuses"][0]
    if image_id is not None:
        assert old_status["imageID"] == image_id

    set_image(client, namespace, "nginx:mainline-alpine")
    wait_for(lambda: observed(client, namespace), 10)
    wait_progressing(client, namespace, wait_for, UPDATED)
    wait_status(client, namespace, wait_for, "updatedReadyReplicas", 1)
    (new,) = pods(client, namespace).values()
    new_status = new["status"]["containerStatuses"][0]
    assert new["metadata"]["uid"] == old["metadata"]["uid"]
    assert new_status["image"] == "nginx:mainline-alpine"
    assert new_status["containerID"] != old_status["containerID"]
    assert new_status["imageID"] == old_status["imageID"]
    state = json.loads(new["metadata"]["annotations"]["apps.kruise.io/inplace-update-state"])
    assert state["lastContainerStatuses"] == {"c": {"imageID": old_status["imageID"]}}
    wait_progressing(client, namespace, wait_for, AVAILABLE)


@pytest.fixture
def kruise_manager(client, namespace) -> Iterator[Manager]:
    """The controller with new pods starting in PreparingNormal, as Kruise's do (the tests ask
    for ``crd`` too: module-scoped, it is installed first)."""
    with running_manager(
        client, namespace, lambda m: setup(m, name=f"cloneset-{namespace}", preparing_normal=True)
    ) as m:
        yield m


def states(client, namespace) -> list[str]:
    return [p["metadata"]["labels"].get(STATE, "") for p in pods(client, namespace).values()]


@pytest.mark.usefixtures("crd", "kruise_manager")
def test_creates_with_lifecycle_pre_normal_finalizer(client, namespace, wait_for):
    """``creates with lifecycle preNormal finalizer``."""
    finalizer = "finalizers.sigs.k8s.io/test"
    client.create(
        make_cs(
            namespace,
            1,
            lifecycle={"preNormal": {"finalizersHandler": [finalizer]}},
            progressDeadlineSeconds=HELD_DEADLINE,
        )
    )
    # the pod is ready, but held in PreparingNormal: not available
    wait_status(client, namespace, wait_for, "readyReplicas", 1)
    revision = status(client, namespace)["updateRevision"]
    wait_progressing(
        client, namespace, wait_for, deadline_exceeded(revision), HELD_DEADLINE + TIMEOUT
    )
    assert states(client, namespace) == ["PreparingNormal"]

    (name,) = pods(client, namespace)
    client.patch(kinds.Pod, name, {"metadata": {"finalizers": [finalizer]}}, namespace=namespace)
    wait_for(lambda: states(client, namespace) == ["Normal"], TIMEOUT)

    client.patch(kinds.Pod, name, {"metadata": {"finalizers": None}}, namespace=namespace)
    wait_status(client, namespace, wait_for, "availableReplicas", 1)
    wait_progressing(client, namespace, wait_for, AVAILABLE)


@pytest.mark.usefixtures("crd", "kruise_manager")
def test_creates_with_unschedulable_scheduler(client, namespace, wait_for):
    """``creates with unschedulable scheduler``."""
    cs = make_cs(namespace, 1, progressDeadlineSeconds=HELD_DEADLINE_UNSCHEDULABLE)
    cs["spec"]["template"]["spec"]["schedulerName"] = "unschedulable"
    client.create(cs)
    wait_status(client, namespace, wait_for, "replicas", 1)

    def pending_preparing() -> bool:
        (pod,) = pods(client, namespace).values()
        return (pod.get("status") or {}).get("phase", "Pending") == "Pending" and pod["metadata"][
            "labels"
        ].get(STATE) == "PreparingNormal"

    assert wait_for(pending_preparing, 10)
    revision = status(client, namespace)["updateRevision"]
    wait_progressing(
        client, namespace, wait_for, deadline_exceeded(revision), HELD_DEADLINE + TIMEOUT
    )
    # Kruise checks for 10 s that the pod stays pending and PreparingNormal: it still is
    assert pending_preparing()

    patch_spec(client, namespace, {"template": {"spec": {"schedulerName": ""}}})
    wait_status(client, namespace, wait_for, "readyReplicas", 1)
    wait_for(lambda: states(client, namespace) == ["Normal"], TIMEOUT)
    wait_progressing(client, namespace, wait_for, AVAILABLE)


MAX_INT32 = 2**31 - 1


@pytest.mark.usefixtures("manager")
def test_creates_with_max_int32_progress_deadline(client, namespace, wait_for):
    """``creates with maxInt32 progressDeadlineSeconds``: no Progressing condition, until a
    real deadline is set."""
    client.create(make_cs(namespace, 1, progressDeadlineSeconds=MAX_INT32))
    wait_status(client, namespace, wait_for, "readyReplicas", 1)
    assert get_cs(client, namespace)["spec"]["progressDeadlineSeconds"] == MAX_INT32
    wait_for(lambda: observed(client, namespace), 10)
    assert progressing(client, namespace) is None
    patch_spec(client, namespace, {"progressDeadlineSeconds": TEN_MINUTES})
    wait_status(client, namespace, wait_for, "readyReplicas", 1)
    wait_progressing(client, namespace, wait_for, AVAILABLE)


@pytest.mark.usefixtures("manager")
def test_creates_with_max_int32_min_ready_and_progress_deadline(client, namespace, wait_for):
    """``creates with maxInt32 minReadySeconds and maxInt32 progressDeadlineSeconds``."""
    client.create(
        make_cs(namespace, 1, minReadySeconds=MAX_INT32, progressDeadlineSeconds=MAX_INT32)
    )
    wait_status(client, namespace, wait_for, "readyReplicas", 1)
    spec = get_cs(client, namespace)["spec"]
    assert spec["minReadySeconds"] == MAX_INT32 and spec["progressDeadlineSeconds"] == MAX_INT32
    assert progressing(client, namespace) is None
    patch_spec(client, namespace, {"minReadySeconds": 10, "progressDeadlineSeconds": None})
    wait_for(lambda: observed(client, namespace), 10)
    wait_status(client, namespace, wait_for, "readyReplicas", 1)
    assert progressing(client, namespace) is None


@pytest.mark.usefixtures("manager")
def test_scales_in_normal_cases(client, namespace, wait_for):
    """``scales in normal cases`` without the defaulting webhook (its defaults: see the next
    test)."""
    client.create(make_cs(namespace, 3, progressDeadlineSeconds=TEN_MINUTES))
    wait_status(client, namespace, wait_for, "replicas", 3, timeout=3)
    wait_status(client, namespace, wait_for, "readyReplicas", 3)
    wait_progressing(client, namespace, wait_for, AVAILABLE)


@pytest.fixture(scope="module")
def hooks(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Hooks]:
    """A webhook server (the CloneSet's defaulting webhook is put on it by the test)."""
    with webhook_server(tmp_path_factory.mktemp("webhook-certs")) as (server, certs):
        yield Hooks(server, certs)


MUTATE = "/mutate-apps-kube-runtime-io-v1alpha1-cloneset"


@pytest.mark.usefixtures("manager")
def test_scales_in_normal_cases_with_the_defaulting_webhook(client, namespace, wait_for, hooks):
    """``scales in normal cases`` with the CloneSet's defaulting webhook installed: the
    created set reads back with Kruise's defaults (type ReCreate, maxUnavailable 20%)."""
    client.request(
        "PATCH",
        f"/api/v1/namespaces/{namespace}",
        body={"metadata": {"labels": {"webhook-test": namespace}}},
        content_type="application/merge-patch+json",
    )
    hooks.on(MUTATE, DefaultingHandler(set_defaults).handle)
    rules = [
        {
            "apiGroups": [CLONESET.group],
            "apiVersions": [CLONESET.version],
            "operations": ["CREATE", "UPDATE"],
            "resources": ["clonesets"],
        }
    ]
    hook = _hook(hooks, "clonesets.defaults.test", MUTATE, namespace, mutating=True, rules=rules)
    with configuration(client, hooks, namespace, [hook], mutating=True):
        created = client.create(make_cs(namespace, 3, progressDeadlineSeconds=TEN_MINUTES))
    strategy = created["spec"]["updateStrategy"]
    assert strategy["type"] == "ReCreate" and strategy["maxUnavailable"] == "20%"
    assert created["spec"]["revisionHistoryLimit"] == 10
    wait_status(client, namespace, wait_for, "replicas", 3, timeout=3)
    wait_status(client, namespace, wait_for, "readyReplicas", 3)
    wait_progressing(client, namespace, wait_for, AVAILABLE)


@pytest.mark.slow
@pytest.mark.usefixtures("manager")
def test_scales_with_min_ready_seconds_and_scale_strategy(client, namespace, wait_for):
    """``scales with minReadySeconds and scaleStrategy``: with scaleStrategy.maxUnavailable 1
    each pod is created minReadySeconds after the previous one became ready."""
    replicas, min_ready = 4, 10
    client.create(
        make_cs(
            namespace,
            replicas,
            minReadySeconds=min_ready,
            progressDeadlineSeconds=TEN_MINUTES,
            scaleStrategy={"maxUnavailable": 1},
        )
    )
    wait_progressing(client, namespace, wait_for, UPDATED)
    wait_status(client, namespace, wait_for, "replicas", replicas, timeout=120)
    wait_status(client, namespace, wait_for, "readyReplicas", replicas, timeout=120)
    wait_progressing(client, namespace, wait_for, AVAILABLE)
    live = sorted(
        pods(client, namespace).values(), key=lambda p: p["metadata"]["creationTimestamp"]
    )
    for before, pod in itertools.pairwise(live):
        ready = next(c for c in before["status"]["conditions"] if c["type"] == "Ready")
        gap = parse_time(pod["metadata"]["creationTimestamp"]) - parse_time(
            ready["lastTransitionTime"]
        )
        # Kruise allows 2 s of fluctuation; timestamps are whole seconds
        assert min_ready <= gap.total_seconds() <= min_ready + 2


@pytest.mark.usefixtures("manager")
def test_pods_should_be_ready_when_paused(client, namespace, wait_for):
    """``pods should be ready when paused=true``."""
    client.create(
        make_cs(
            namespace,
            3,
            updateStrategy={"type": "ReCreate", "paused": True},
            minReadySeconds=60,
            progressDeadlineSeconds=TEN_MINUTES,
        )
    )
    wait_status(client, namespace, wait_for, "replicas", 3, timeout=3)
    wait_progressing(client, namespace, wait_for, ("True", "CloneSetPaused", "CloneSet is paused"))
    wait_status(client, namespace, wait_for, "readyReplicas", 3)


@pytest.mark.usefixtures("manager")
def test_specific_delete_without_excluding_preparing_delete(client, namespace, wait_for):
    """``specific delete a Pod, when scalingExcludePreparingDelete is disabled``."""
    cs = make_cs(
        namespace,
        3,
        lifecycle={"preDelete": {"labelsHandler": {"lifecycle-hook": "true"}}},
        progressDeadlineSeconds=TEN_MINUTES,
    )
    cs["spec"]["template"]["metadata"]["labels"]["lifecycle-hook"] = "true"
    client.create(cs)
    wait_status(client, namespace, wait_for, "replicas", 3, timeout=3)
    wait_status(client, namespace, wait_for, "readyReplicas", 3)
    wait_progressing(client, namespace, wait_for, AVAILABLE)
    old_pods = set(pods(client, namespace))
    assert len(old_pods) == 3

    victim = sorted(old_pods)[0]
    client.patch(
        kinds.Pod,
        victim,
        {"metadata": {"labels": {"apps.kruise.io/specified-delete": "true"}}},
        namespace=namespace,
    )
    wait_for(
        lambda: (
            pods(client, namespace)[victim]["metadata"]["labels"].get(STATE) == "PreparingDelete"
        ),
        10,
    )
    # Kruise checks for 5 s that nothing scales up; the progressing state it then waits for
    # comes from the same sync
    wait_progressing(client, namespace, wait_for, UPDATED, 30)
    assert status(client, namespace)["replicas"] == 3 and len(pods(client, namespace)) == 3

    client.patch(
        kinds.Pod, victim, {"metadata": {"labels": {"lifecycle-hook": None}}}, namespace=namespace
    )
    wait_for(
        lambda: (
            victim
            not in {p["metadata"]["name"] for p in client.list(kinds.Pod, namespace)["items"]}
        ),
        30,
    )
    wait_for(lambda: len(pods(client, namespace)) == 3, 10)
    wait_status(client, namespace, wait_for, "replicas", 3, timeout=3)
    assert len(set(pods(client, namespace)) & old_pods) == 2
    wait_progressing(client, namespace, wait_for, AVAILABLE, 30)


def _container_status(pod: dict[str, Any], name: str) -> dict[str, Any]:
    return next(c for c in pod["status"]["containerStatuses"] if c["name"] == name)


# Kruise's redis postStart hook sleeps 10 s; the test checks nginx waits the hook out, which
# a shorter hook shows as well in real time.
HOOK_SECONDS = 10 if SIMULATED else 3


@pytest.mark.slow
@pytest.mark.usefixtures("manager")
def test_in_place_update_two_container_images_with_priorities(client, namespace, wait_for):
    """``in-place update two container images with priorities successfully``: redis (launch
    priority 10, a postStart hook of HOOK_SECONDS, Kruise's is 10 s) is updated first, nginx
    only once redis is ready."""
    cs = make_cs(
        namespace,
        1,
        updateStrategy={"type": "InPlaceIfPossible"},
        minReadySeconds=MIN_READY,
        progressDeadlineSeconds=TEN_MINUTES,
    )
    cs["spec"]["template"]["spec"] = {
        "terminationGracePeriodSeconds": 3,
        "containers": [
            {"name": "nginx", "image": "nginx:alpine"},
            {
                "name": "redis",
                "image": "redis:alpine",
                "command": ["sleep", "999"],
                "env": [{"name": "KRUISE_CONTAINER_PRIORITY", "value": "10"}],
                "lifecycle": {"postStart": {"exec": {"command": ["sleep", str(HOOK_SECONDS)]}}},
            },
        ],
    }
    client.create(cs)
    wait_progressing(client, namespace, wait_for, UPDATED)
    wait_status(client, namespace, wait_for, "replicas", 1, timeout=3)
    wait_status(client, namespace, wait_for, "readyReplicas", 1)
    wait_progressing(client, namespace, wait_for, AVAILABLE)
    assert len(pods(client, namespace)) == 1

    containers = get_cs(client, namespace)["spec"]["template"]["spec"]["containers"]
    containers[0]["image"] = "nginx:mainline-alpine"
    containers[1]["image"] = "busybox:1.29"
    patch_spec(client, namespace, {"template": {"spec": {"containers": containers}}})
    wait_progressing(client, namespace, wait_for, UPDATED)
    wait_for(lambda: observed(client, namespace), 10)
    wait_status(client, namespace, wait_for, "updatedReadyReplicas", 1)
    wait_progressing(client, namespace, wait_for, AVAILABLE)

    (pod,) = pods(client, namespace).values()
    nginx, redis = _container_status(pod, "nginx"), _container_status(pod, "redis")
    assert nginx["restartCount"] == 1 and redis["restartCount"] == 1
    # nginx stopped after the new redis had been started for HOOK_SECONDS (its postStart hook); the
    # timestamps are whole seconds and the simulated restart takes milliseconds, so "at least"
    # where Kruise's test has "after"
    stopped = parse_time(nginx["lastState"]["terminated"]["finishedAt"])
    started = parse_time(redis["state"]["running"]["startedAt"])
    assert (stopped - started).total_seconds() >= HOOK_SECONDS
    state = json.loads(pod["metadata"]["annotations"]["apps.kruise.io/inplace-update-state"])
    assert [b["containers"] for b in state["containerBatchesRecord"]] == [["redis"], ["nginx"]]
