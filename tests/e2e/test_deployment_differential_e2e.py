"""Differential check of the Deployment and ReplicaSet controllers (controllers/deployment)
against kube-controller-manager 1.20's, on the same kube-apiserver 1.20.

Each scenario (:data:`SCENARIOS`: a Deployment and a list of :class:`Step`) runs twice at the
same time: on the session's real cluster, where kube-controller-manager runs its deployment and
replicaset controllers, and on a real cluster of this module's own whose
kube-controller-manager runs neither, with ours running in a :class:`Manager` against it. A
step is a merge patch of the Deployment (the first step creates it) and what to wait for: a
complete rollout, or (where pods are held not ready, through the simulated kubelet's
``sim.kube-runtime.io/never-ready`` pod annotation put in the template) the status a stuck
rollout settles at. The scenarios:

* ``rolling``: 3 replicas (maxSurge 1, maxUnavailable 0), an image change, scales to 5 and 1;
* ``proportional``: 5 replicas (maxSurge 3, maxUnavailable 2), an image whose pods never become
  ready (the rollout stops with two ReplicaSets holding replicas), a scale to 10 in the middle
  of it (upstream's ``scale`` shares the 5 new replicas by the ``max-replicas`` annotations),
  a scale to 4 (sharing the 6 fewer the same way; the old ReplicaSet's status still counts
  its pods of before when the rollout goes on), then a third image with maxSurge 1 /
  maxUnavailable 0 that completes;
* ``recreate``: the Recreate strategy's image change (old ReplicaSet at 0 before the new one
  scales up), then an image whose pods never become ready and another one (both old
  ReplicaSets at 0 first);
* ``paused``: pause, two image changes and a scale to 5 while paused (no new ReplicaSet, the
  old one scaled), resume (one new ReplicaSet only);
* ``paused-mid-rollout``: 4 replicas (maxSurge 1, maxUnavailable 1) stuck on pods that never
  become ready, paused, scaled to 8 while paused (shared in proportion between the two
  ReplicaSets), resumed with a third image;
* ``scale-to-zero``: the same stuck rollout scaled to 0 (complete with no replicas), then to 3
  (with no active ReplicaSet, the new one takes them all), then a third image;
* ``annotations``: the Deployment's own annotations (a ``kubernetes.io/change-cause``, another
  one) copied to the new ReplicaSet, also when only they change, and on a rollback;
* ``rollback``: an image change, back, and forth again (the old ReplicaSet reused each time,
  its revision bumped and ``revision-history`` set);
* ``history-limit``: ``revisionHistoryLimit: 1`` and three image changes (older ReplicaSets
  deleted);
* ``no-surge``: maxSurge 0 / maxUnavailable 1, ``minReadySeconds: 1``;
* ``percentages``: maxSurge 25% / maxUnavailable 25% with 5 replicas (surge rounds up to 2,
  unavailable down to 1; 4 replicas would not show the rounding), through a stuck rollout to a
  complete one;
* ``deadline``: ``progressDeadlineSeconds: 5`` and an image whose pods never become ready
  (``Progressing`` False, ``ProgressDeadlineExceeded``; waited for, no fixed sleep).

Compared, per scenario:

* after each step: the Deployment's status counters, revision annotation and conditions (type,
  status, reason), and each ReplicaSet's ``spec.replicas`` and revision, the ReplicaSets keyed
  by their template's image (the revision they hold);
* each ReplicaSet's ``spec.replicas`` over time (every value a watch saw, consecutive repeats
  merged), where the scenario's transitions do not depend on how fast pods become ready;
* at the end (once old ReplicaSets beyond ``revisionHistoryLimit`` are gone): the Deployment's
  conditions (type, status, reason, and the message with the ReplicaSet name masked) and every
  annotation of each ReplicaSet (``deployment.kubernetes.io/`` revision, revision-history,
  desired-replicas, max-replicas, and those copied from the Deployment) and every
  ``deployment.kubernetes.io/*`` annotation of the Deployment.

* at the end: each ReplicaSet's name and ``pod-template-hash`` label (ours hashes the same
  go-spew dump of the Go struct as upstream: controllers/deployment/hashing.py).

:func:`test_pod_template_hash_matches_kube_controller_manager` also creates Deployments with
varied templates (quantities in several forms, probes, security contexts, env sources,
volumes, affinity, tolerations, init containers) on both clusters and compares the
ReplicaSet names, and KCM's ``pod-template-hash`` with ``compute_hash`` of the template as
the API server returns it.

Not compared: pod names (their random suffix), timestamps, uids. Real backend only
(``--backend real``): the embedded backend has no kube-controller-manager to compare with.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from controllers.deployment.hashing import compute_hash
from kube_runtime.client import Client
from kube_runtime.envtest import running
from kube_runtime.envtest.kubelet.simulator import ANNOTATION_NEVER_READY
from kube_runtime.envtest.plugin import backend_of
from kube_runtime.envtest.real import RealCluster, missing_binaries
from kube_runtime.manager import Manager
from tests.support.namespace_watch import NamespaceWatch

pytestmark = pytest.mark.skipif(
    bool(missing_binaries()),
    reason="real kube-apiserver not cached: run scripts/real-apiserver.sh",
)

DEPLOYMENT = "apps/v1/Deployment"
REPLICASET = "apps/v1/ReplicaSet"
PREFIX = "deployment.kubernetes.io/"
NAME = "web"
TIMEOUT = 90.0
COUNTERS = ("replicas", "updatedReplicas", "readyReplicas", "availableReplicas")


@pytest.fixture(scope="module")
def ours(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Client]:
    """A client of a kube-apiserver 1.20 whose Deployments our controllers run (KCM's
    deployment and replicaset controllers off)."""
    if backend_of(request.config) != "real":
        pytest.skip("the Deployment differential check runs with the real backend (--backend real)")
    from controllers.deployment import setup

    tmp: Path = tmp_path_factory.mktemp("deployment-differential")
    cluster = RealCluster(
        controllers=("garbagecollector", "namespace", "pvc-protection"), pod_ready_after=0.02
    )
    cluster.start()
    try:
        kubeconfig = cluster.write_kubeconfig(tmp / "kubeconfig")
        manager_client = Client.from_kubeconfig(kubeconfig)
        manager = Manager(
            manager_client,
            metrics_bind_address="0",
            health_probe_bind_address="0",
            graceful_shutdown_timeout=10,
        )
        setup(manager, max_concurrent_reconciles=2)
        with manager_client, Client.from_kubeconfig(kubeconfig) as client, running(manager):
            yield client
    finally:
        cluster.stop()


# --- what a scenario is made of -------------------------------------------------------------


def rolling(surge: int | str, unavailable: int | str) -> dict[str, Any]:
    """A RollingUpdate strategy."""
    return {
        "type": "RollingUpdate",
        "rollingUpdate": {"maxSurge": surge, "maxUnavailable": unavailable},
    }


RECREATE: dict[str, Any] = {"type": "Recreate", "rollingUpdate": None}


def template(image: str, *, never_ready: bool = False) -> dict[str, Any]:
    """The pod template (merge-patch form): one container running ``image``; with
    ``never_ready`` the simulated kubelet never makes its pods ready."""
    annotations = {ANNOTATION_NEVER_READY: "true"} if never_ready else None
    return {
        "metadata": {"labels": {"app": NAME}, "annotations": annotations},
        "spec": {"containers": [{"name": "c", "image": image}]},
    }


def create(replicas: int, image: str, strategy: dict[str, Any], **spec: Any) -> dict[str, Any]:
    """The Deployment a scenario starts with (``spec`` adds fields, e.g. revisionHistoryLimit)."""
    tpl = template(image)
    del tpl["metadata"]["annotations"]
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": NAME},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": NAME}},
            "strategy": strategy,
            "template": tpl,
            **spec,
        },
    }


def change(image: str | None = None, *, never_ready: bool = False, **spec: Any) -> dict[str, Any]:
    """A merge patch of the Deployment's spec: a new image (and template), other fields."""
    if image is not None:
        spec["template"] = template(image, never_ready=never_ready)
    return {"spec": spec}


Until = Callable[[dict[str, Any], list[dict[str, Any]]], None]
"""What a step waits for: called with the Deployment and its namespace's ReplicaSets, it
raises AssertionError (naming what differs) until they are there."""


def observed(d: dict[str, Any]) -> dict[str, Any]:
    status: dict[str, Any] = d.get("status") or {}
    assert status.get("observedGeneration") == d["metadata"]["generation"], "generation not seen"
    return status


def reason_of(status: dict[str, Any], type_: str) -> str | None:
    found = [c for c in status.get("conditions") or () if c["type"] == type_]
    return found[0].get("reason") if found else None


def complete(d: dict[str, Any], sets: list[dict[str, Any]]) -> None:
    """The Deployment's generation is completely rolled out (no old pods left)."""
    status = observed(d)
    replicas = d["spec"]["replicas"]
    want = dict.fromkeys(COUNTERS, replicas)
    assert {k: status.get(k, 0) for k in COUNTERS} == want, f"status {status}"
    assert reason_of(status, "Progressing") == "NewReplicaSetAvailable", f"status {status}"
    cleaned_up(d, sets)


def settled(progressing: str, replicas: int, updated: int, available: int) -> Until:
    """The status a stuck or paused rollout comes to: ``replicas``, ``updatedReplicas``,
    ``availableReplicas`` and ``readyReplicas`` (the same: no ``minReadySeconds`` where a
    scenario waits for this) and this ``Progressing`` reason."""
    want = {
        "replicas": replicas,
        "updatedReplicas": updated,
        "readyReplicas": available,
        "availableReplicas": available,
    }

    def until(d: dict[str, Any], sets: list[dict[str, Any]]) -> None:
        status = observed(d)
        assert {k: status.get(k, 0) for k in COUNTERS} == want, f"status {status}"
        assert reason_of(status, "Progressing") == progressing, f"status {status}"

    return until


def annotated(patch: dict[str, Any], cause: str, team: str) -> dict[str, Any]:
    """``patch`` (or the Deployment) with a ``kubernetes.io/change-cause`` and a ``team``
    annotation, which the new ReplicaSet gets a copy of."""
    metadata = {**patch.get("metadata", {})}
    metadata["annotations"] = {"kubernetes.io/change-cause": cause, "example.com/team": team}
    return {**patch, "metadata": metadata}


def complete_and_copied(image: str, team: str) -> Until:
    """:func:`complete`, and the ReplicaSet of ``image`` has the ``team`` annotation (a change
    of the Deployment's metadata alone has no generation to wait for)."""

    def until(d: dict[str, Any], sets: list[dict[str, Any]]) -> None:
        complete(d, sets)
        (rs,) = [rs for rs in sets if image_of(rs) == image]
        annotations = rs["metadata"].get("annotations") or {}
        assert annotations.get("example.com/team") == team, f"annotations {annotations}"

    return until


@dataclass(frozen=True)
class Step:
    """One change and what to wait for after it."""

    label: str
    patch: dict[str, Any]
    until: Until = complete


@dataclass(frozen=True)
class Scenario:
    """Steps run in order on a fresh namespace; ``history``: whether the ReplicaSets'
    ``spec.replicas`` histories are compared (only where the transitions do not depend on
    how fast pods become ready)."""

    name: str
    steps: tuple[Step, ...]
    history: bool = True
    expect: dict[str, list[int]] = field(default_factory=dict)
    """The last replica count of ReplicaSets (by image) a run must end with, so a scenario
    that did nothing cannot pass."""


def stuck(image: str, replicas: int, updated: int, available: int) -> Step:
    """A step to ``image`` whose pods never become ready, waited for until the rollout stops
    with these counters (:func:`settled`)."""
    return Step(
        f"image {image}, never ready",
        change(image, never_ready=True),
        settled("ReplicaSetUpdated", replicas, updated, available),
    )


SURGE_1 = rolling(1, 0)
STUCK_4 = (
    Step("created with 4", create(4, "nginx:1", rolling(1, 1))),
    stuck("nginx:2", 5, 2, 3),
)
"""4 replicas (maxSurge 1, maxUnavailable 1) stuck on a new image: old 3, new 2 not ready."""

SCENARIOS = (
    Scenario(
        "rolling",
        (
            Step("created with 3", create(3, "nginx:1", SURGE_1)),
            Step("image nginx:2", change("nginx:2")),
            Step("scaled to 5", change(replicas=5)),
            Step("scaled to 1", change(replicas=1)),
        ),
        expect={"nginx:1": [0], "nginx:2": [1]},
    ),
    Scenario(
        "proportional",
        (
            Step("created with 5", create(5, "nginx:1", rolling(3, 2))),
            stuck("nginx:2", 8, 5, 3),
            Step(
                "scaled to 10 mid-rollout",
                change(replicas=10),
                settled("ReplicaSetUpdated", 13, 8, 5),
            ),
            Step(
                "scaled to 4 mid-rollout",
                change(replicas=4),
                settled("ReplicaSetUpdated", 6, 4, 2),
            ),
            Step("image nginx:3, maxSurge 1", change("nginx:3", strategy=SURGE_1)),
        ),
        expect={"nginx:1": [0], "nginx:2": [0], "nginx:3": [4]},
    ),
    Scenario(
        "recreate",
        (
            Step("created with 3", create(3, "nginx:1", RECREATE)),
            Step("image nginx:2", change("nginx:2")),
            stuck("nginx:3", 3, 3, 0),
            Step("image nginx:4", change("nginx:4")),
        ),
        expect={"nginx:1": [0], "nginx:2": [3, 0], "nginx:3": [3, 0], "nginx:4": [3]},
    ),
    Scenario(
        "paused",
        (
            Step("created with 3", create(3, "nginx:1", SURGE_1)),
            Step(
                "paused",
                change(paused=True),
                settled("DeploymentPaused", 3, 3, 3),
            ),
            *(
                Step(
                    f"image {image} while paused",
                    change(image),
                    settled("DeploymentPaused", 3, 0, 3),
                )
                for image in ("nginx:2", "nginx:3")
            ),
            Step(
                "scaled to 5 while paused",
                change(replicas=5),
                settled("DeploymentPaused", 5, 0, 5),
            ),
            Step("resumed", change(paused=False)),
        ),
        expect={"nginx:1": [0], "nginx:3": [5]},
    ),
    Scenario(
        "paused-mid-rollout",
        (
            *STUCK_4,
            Step(
                "paused",
                change(paused=True),
                settled("DeploymentPaused", 5, 2, 3),
            ),
            Step(
                "scaled to 8 while paused",
                change(replicas=8),
                settled("DeploymentPaused", 9, 4, 5),
            ),
            Step(
                "image nginx:3, maxSurge 1, resumed",
                change("nginx:3", paused=False, strategy=SURGE_1),
            ),
        ),
        expect={"nginx:1": [0], "nginx:2": [0], "nginx:3": [8]},
    ),
    Scenario(
        "scale-to-zero",
        (
            *STUCK_4,
            Step(
                "scaled to 0 mid-rollout",
                change(replicas=0),
                settled("NewReplicaSetAvailable", 0, 0, 0),
            ),
            Step("scaled to 3", change(replicas=3), settled("NewReplicaSetAvailable", 3, 3, 0)),
            Step("image nginx:3, maxSurge 1", change("nginx:3", strategy=SURGE_1)),
        ),
        expect={"nginx:1": [0], "nginx:2": [0], "nginx:3": [3]},
    ),
    Scenario(
        "annotations",
        (
            Step("created with 2", annotated(create(2, "nginx:1", SURGE_1), "create", "a")),
            Step("image nginx:2", annotated(change("nginx:2"), "to nginx:2", "a")),
            Step(
                "annotation changed",
                annotated({}, "to nginx:2", "b"),
                complete_and_copied("nginx:2", "b"),
            ),
            Step("image nginx:1 again", annotated(change("nginx:1"), "back", "b")),
        ),
        expect={"nginx:1": [2], "nginx:2": [0]},
    ),
    Scenario(
        "rollback",
        (
            Step("created with 3", create(3, "nginx:1", SURGE_1)),
            Step("image nginx:2", change("nginx:2")),
            Step("image nginx:1 again", change("nginx:1")),
            Step("image nginx:2 again", change("nginx:2")),
        ),
        expect={"nginx:1": [0], "nginx:2": [3]},
    ),
    Scenario(
        "history-limit",
        (
            Step("created with 2", create(2, "nginx:1", SURGE_1, revisionHistoryLimit=1)),
            *(Step(f"image nginx:{n}", change(f"nginx:{n}")) for n in (2, 3, 4)),
        ),
        expect={"nginx:3": [0], "nginx:4": [2]},
    ),
    Scenario(
        "no-surge",
        (
            Step("created with 3", create(3, "nginx:1", rolling(0, 1), minReadySeconds=1)),
            Step("image nginx:2", change("nginx:2")),
        ),
        expect={"nginx:1": [0], "nginx:2": [3]},
    ),
    Scenario(
        "percentages",
        (
            Step("created with 5", create(5, "nginx:1", rolling("25%", "25%"))),
            stuck("nginx:2", 7, 3, 4),
            Step("image nginx:3", change("nginx:3")),
        ),
        history=False,  # nginx:3's pods become ready together: how many per sync is timing
        expect={"nginx:1": [0], "nginx:2": [0], "nginx:3": [5]},
    ),
    Scenario(
        "deadline",
        (
            Step("created with 2", create(2, "nginx:1", SURGE_1, progressDeadlineSeconds=5)),
            Step(
                "image nginx:2, never ready",
                change("nginx:2", never_ready=True),
                settled("ProgressDeadlineExceeded", 3, 1, 2),
            ),
        ),
        expect={"nginx:1": [2], "nginx:2": [1]},
    ),
)


# --- running and recording one ---------------------------------------------------------------


def image_of(rs: dict[str, Any]) -> str:
    return str(rs["spec"]["template"]["spec"]["containers"][0]["image"])


class ReplicaCounts(NamespaceWatch):
    """Watches the ReplicaSets of a namespace on a thread: ``spec.replicas`` of each, by
    image, every value seen with consecutive repeats merged."""

    def __init__(self, client: Client, namespace: str) -> None:
        self.counts: dict[str, list[int]] = {}
        super().__init__(client, REPLICASET, namespace, "rs-watch")

    def on_event(self, event: Any) -> None:
        if event.type not in ("ADDED", "MODIFIED"):
            return
        rs = event.object
        replicas = int(rs["spec"].get("replicas", 0))
        seen = self.counts.setdefault(image_of(rs), [])
        if not seen or seen[-1] != replicas:
            seen.append(replicas)

    def snapshot(self) -> dict[str, list[int]]:
        with self.lock:
            return {k: list(v) for k, v in self.counts.items()}


def deployment_annotations(obj: dict[str, Any]) -> dict[str, str]:
    annotations = obj["metadata"].get("annotations") or {}
    return {k: v for k, v in sorted(annotations.items()) if k.startswith(PREFIX)}


def step_record(d: dict[str, Any], sets: list[dict[str, Any]]) -> dict[str, Any]:
    """What is compared after each step."""
    status = d.get("status") or {}
    return {
        "revision": deployment_annotations(d).get(PREFIX + "revision"),
        **{k: status.get(k, 0) for k in (*COUNTERS, "unavailableReplicas")},
        "conditions": sorted(
            (c["type"], c["status"], c.get("reason")) for c in status.get("conditions") or ()
        ),
        "replicasets": {
            image_of(rs): (
                rs["spec"].get("replicas", 0),
                deployment_annotations(rs).get(PREFIX + "revision"),
            )
            for rs in sorted(sets, key=image_of)
        },
    }


def cleaned_up(d: dict[str, Any], sets: list[dict[str, Any]]) -> None:
    """Old ReplicaSets without replicas are at most ``revisionHistoryLimit`` (upstream
    deletes the rest on a sync after the rollout completes)."""
    current = deployment_annotations(d).get(PREFIX + "revision")
    idle = [
        rs
        for rs in sets
        if deployment_annotations(rs).get(PREFIX + "revision") != current
        and not rs["spec"].get("replicas")
    ]
    limit = d["spec"].get("revisionHistoryLimit", 10)
    assert len(idle) <= limit, f"{len(idle)} old ReplicaSets kept, limit {limit}"


def mask(message: str, names: set[str]) -> str:
    for rs_name in names:
        message = message.replace(rs_name, "<replicaset>")
    return re.sub(r"\s+", " ", message)


def run(
    scenario: Scenario, side: str, client: Client, namespace: str, wait_for: Any
) -> dict[str, Any]:
    """Run ``scenario`` in ``namespace`` (``side`` names the controllers in wait messages);
    what it observed, names masked."""
    record: dict[str, Any] = {"steps": []}

    def state() -> tuple[dict[str, Any], list[dict[str, Any]]]:
        d = client.get(DEPLOYMENT, NAME, namespace)
        return d, client.list(REPLICASET, namespace)["items"]

    def wait(until: Until, label: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        def check() -> tuple[dict[str, Any], list[dict[str, Any]]]:
            d, sets = state()
            until(d, sets)
            return d, sets

        return wait_for(check, timeout=TIMEOUT, message=f"{scenario.name} ({side}): {label}")

    counts = ReplicaCounts(client, namespace)
    try:
        for i, step in enumerate(scenario.steps):
            if i == 0:
                client.create(step.patch, namespace=namespace)
            else:
                client.patch(DEPLOYMENT, NAME, step.patch, namespace=namespace)
            d, sets = wait(step.until, step.label)
            record["steps"].append((step.label, step_record(d, sets)))
        d, sets = wait(cleaned_up, "old ReplicaSets cleaned up")
        final = {image_of(rs): int(rs["spec"]["replicas"]) for rs in sets}
        # the watch has seen every remaining ReplicaSet's last write
        wait_for(
            lambda: {k: v[-1] for k, v in counts.snapshot().items() if k in final} == final,
            timeout=TIMEOUT,
            message=f"{scenario.name} ({side}): the watch caught up",
        )
    finally:
        counts.close()
    record["replica counts"] = counts.snapshot()
    record["replicasets"] = {
        image_of(rs): {
            "annotations": dict(sorted((rs["metadata"].get("annotations") or {}).items())),
            "name": rs["metadata"]["name"],
            "pod-template-hash": rs["metadata"]["labels"].get("pod-template-hash"),
            "replicas": rs["spec"]["replicas"],
            "status.replicas": (rs.get("status") or {}).get("replicas", 0),
        }
        for rs in sorted(sets, key=image_of)
    }
    record["deployment annotations"] = deployment_annotations(d)
    names = {rs["metadata"]["name"] for rs in sets}
    record["conditions"] = sorted(
        (c["type"], c["status"], c.get("reason"), mask(c.get("message", ""), names))
        for c in d["status"]["conditions"]
    )
    return record


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.name for s in SCENARIOS])
def test_deployment_controller_matches_kube_controller_manager(
    scenario: Scenario, client: Client, namespace: str, ours: Client, wait_for: Any
) -> None:
    ours.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})
    try:
        with ThreadPoolExecutor(2) as pool:  # KCM 1.20's controllers and ours at once
            upstream_run = pool.submit(run, scenario, "KCM", client, namespace, wait_for)
            mine_run = pool.submit(run, scenario, "ours", ours, namespace, wait_for)
            upstream, mine = upstream_run.result(), mine_run.result()
    finally:
        ours.delete("v1/Namespace", namespace)
    # the expected shape, so a scenario that did nothing cannot pass
    last = {
        image: counts[-len(scenario.expect[image]) :]
        for image, counts in upstream["replica counts"].items()
        if image in scenario.expect
    }
    assert last == scenario.expect, f"KCM's run ended with {upstream['replica counts']}"
    keys = ["steps", "replicasets", "deployment annotations", "conditions"]
    if scenario.history:
        keys.append("replica counts")
    for key in keys:
        assert mine[key] == upstream[key], f"{key}: ours {mine[key]} != KCM's {upstream[key]}"


# --- the pod-template-hash of varied templates ------------------------------------------------

HASH_TEMPLATES: dict[str, dict[str, Any]] = {
    "resources": {
        "spec": {
            "containers": [
                {
                    "name": "c",
                    "image": "nginx:1",
                    "resources": {
                        "limits": {"cpu": "1.5", "memory": "1.5Gi", "ephemeral-storage": "100Ti"},
                        "requests": {"cpu": "100m", "memory": "129M", "ephemeral-storage": "1e3"},
                    },
                },
                {
                    "name": "d",
                    "image": "nginx:1",
                    "resources": {"limits": {"cpu": "0.5", "memory": "8Gi"}},
                },
            ]
        }
    },
    "probes": {
        "spec": {
            "containers": [
                {
                    "name": "c",
                    "image": "nginx:1",
                    "ports": [
                        {"name": "http", "containerPort": 8080},
                        {"name": "dns", "containerPort": 53, "protocol": "UDP"},
                    ],
                    "livenessProbe": {
                        "httpGet": {
                            "path": "/healthz",
                            "port": "http",
                            "httpHeaders": [{"name": "X-A", "value": "b"}],
                        },
                        "initialDelaySeconds": 3,
                    },
                    "readinessProbe": {"tcpSocket": {"port": 8080}, "periodSeconds": 5},
                    "startupProbe": {"exec": {"command": ["true"]}, "failureThreshold": 30},
                    "lifecycle": {"preStop": {"exec": {"command": ["sleep", "1"]}}},
                    "securityContext": {
                        "runAsUser": 0,
                        "runAsNonRoot": False,
                        "readOnlyRootFilesystem": True,
                        "capabilities": {"add": ["NET_ADMIN"], "drop": ["ALL"]},
                    },
                }
            ],
            "securityContext": {"fsGroup": 2000, "supplementalGroups": [1, 2]},
            "terminationGracePeriodSeconds": 0,
        }
    },
    "volumes": {
        "metadata": {"annotations": {"note": "héllo ✓", "a.b/c": ""}},
        "spec": {
            "volumes": [
                {"name": "scratch", "emptyDir": {}},
                {"name": "mem", "emptyDir": {"medium": "Memory", "sizeLimit": "0.5Gi"}},
                {
                    "name": "cfg",
                    "configMap": {"name": "cm", "items": [{"key": "a", "path": "a"}]},
                },
                {"name": "sec", "secret": {"secretName": "s", "optional": True}},
                {
                    "name": "down",
                    "downwardAPI": {
                        "items": [
                            {
                                "path": "cpu",
                                "resourceFieldRef": {
                                    "containerName": "c",
                                    "resource": "limits.cpu",
                                    "divisor": "1m",
                                },
                            }
                        ]
                    },
                },
            ],
            "containers": [
                {
                    "name": "c",
                    "image": "nginx:1",
                    "volumeMounts": [{"name": "scratch", "mountPath": "/scratch"}],
                    "env": [
                        {"name": "A", "value": "x"},
                        {
                            "name": "NODE",
                            "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}},
                        },
                        {
                            "name": "MEM",
                            "valueFrom": {"resourceFieldRef": {"resource": "limits.memory"}},
                        },
                    ],
                    "envFrom": [{"prefix": "P_", "configMapRef": {"name": "cm"}}],
                }
            ],
        },
    },
    "scheduling": {
        "spec": {
            "initContainers": [{"name": "init", "image": "busybox", "command": ["true"]}],
            "containers": [{"name": "c", "image": "nginx:1"}],
            "nodeSelector": {"disk": "ssd"},
            "affinity": {
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [
                            {"matchExpressions": [{"key": "z", "operator": "In", "values": ["a"]}]}
                        ]
                    }
                },
                "podAntiAffinity": {
                    "preferredDuringSchedulingIgnoredDuringExecution": [
                        {
                            "weight": 100,
                            "podAffinityTerm": {
                                "labelSelector": {"matchLabels": {"app": NAME}},
                                "topologyKey": "kubernetes.io/hostname",
                            },
                        }
                    ]
                },
            },
            "tolerations": [
                {"key": "k", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 30},
                {"operator": "Exists"},
            ],
            "topologySpreadConstraints": [
                {
                    "maxSkew": 1,
                    "topologyKey": "zone",
                    "whenUnsatisfiable": "ScheduleAnyway",
                    "labelSelector": {"matchLabels": {"app": NAME}},
                }
            ],
        }
    },
}


def hash_deployment(name: str, template: dict[str, Any]) -> dict[str, Any]:
    """A Deployment of no replicas (its ReplicaSet is made all the same) with ``template``."""
    metadata = {**template.get("metadata", {}), "labels": {"app": NAME}}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {
            "replicas": 0,
            "selector": {"matchLabels": {"app": NAME}},
            "template": {**template, "metadata": metadata},
        },
    }


def replicaset_names(client: Client, namespace: str, wait_for: Any, side: str) -> dict[str, Any]:
    """Each Deployment's ReplicaSet: {deployment: (name, pod-template-hash, the hash
    ``compute_hash`` gives the Deployment's template as read back)}."""

    def made() -> dict[str, Any]:
        sets = client.list(REPLICASET, namespace)["items"]
        found = {}
        for rs in sets:
            (owner,) = rs["metadata"]["ownerReferences"]
            d = client.get(DEPLOYMENT, owner["name"], namespace)
            found[owner["name"]] = (
                rs["metadata"]["name"],
                rs["metadata"]["labels"]["pod-template-hash"],
                compute_hash(d["spec"]["template"], d["status"].get("collisionCount")),
            )
        assert set(found) == set(HASH_TEMPLATES), f"ReplicaSets of {sorted(found)}"
        return found

    return wait_for(made, timeout=TIMEOUT, message=f"{side}: a ReplicaSet per Deployment")


def test_pod_template_hash_matches_kube_controller_manager(
    client: Client, namespace: str, ours: Client, wait_for: Any
) -> None:
    ours.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})
    try:
        for name, template in HASH_TEMPLATES.items():
            client.create(hash_deployment(name, template), namespace=namespace)
            ours.create(hash_deployment(name, template), namespace=namespace)
        upstream = replicaset_names(client, namespace, wait_for, "KCM")
        mine = replicaset_names(ours, namespace, wait_for, "ours")
    finally:
        ours.delete("v1/Namespace", namespace)
    for name, (rs_name, label, computed) in upstream.items():
        assert rs_name == f"{name}-{label}"
        assert computed == label, f"{name}: compute_hash {computed} != KCM's {label}"
    assert mine == upstream
