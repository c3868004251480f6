"""``kube-runtime cluster --image-digest IMAGE=DIGEST --image-digests FILE``: the digests a user
declares on the command line are what the cluster's simulated kubelet reports as each
container's ``imageID``, so OpenKruise's CloneSet scenario "in-place update images with the same
imageID" (``test/e2e/apps/v1alpha1/cloneset.go``: in Kruise's registry ``nginx:alpine`` and
``nginx:mainline-alpine`` are one image) can be set up from the command line.

The cluster runs as a child process (the command's own code path), on the real clock whatever
the backend: ``minReadySeconds`` is 3 instead of Kruise's 10, as in the real-time runs of
``test_cloneset_kruise_e2e``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from controllers.cloneset import install_crd, setup
from kube_runtime import kinds
from kube_runtime.client import Client
from kube_runtime.envtest.waiting import wait_for as wait_until
from tests.e2e._fixtures import running_manager
from tests.e2e.test_cloneset_e2e import make_cs, pods
from tests.e2e.test_cloneset_kruise_e2e import (
    AVAILABLE,
    TEN_MINUTES,
    UPDATED,
    observed,
    set_image,
    wait_progressing,
    wait_status,
)

DIGEST = "sha256:" + "4f" * 32  # one image, two tags
MIN_READY = 3
NS = "digests"


@pytest.fixture
def cli_cluster(tmp_path: Path) -> Iterator[Client]:
    """``kube-runtime cluster`` as a child process: ``nginx:alpine``'s digest given with
    ``--image-digest``, ``nginx:mainline-alpine``'s (the same) in a YAML file given with
    ``--image-digests``; a client of the kubeconfig it writes."""
    kubeconfig = tmp_path / "kubeconfig"
    digests = tmp_path / "digests.yaml"
    digests.write_text(f"nginx:mainline-alpine: {DIGEST}\n")
    proc = subprocess.Popen(
        [
            *(sys.executable, "-m", "kube_runtime.cli", "cluster", "--port", "0", "--no-auth"),
            *("--kubeconfig", str(kubeconfig), "--pod-ready-after", "0.1"),
            *("--image-digest", f"nginx:alpine={DIGEST}", "--image-digests", str(digests)),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        wait_until(
            lambda: kubeconfig.exists() or proc.poll() is not None,
            timeout=30,
            message="the cluster to start",
        )
        assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
        client = Client.from_kubeconfig(kubeconfig)
        try:
            client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})
            yield client
        finally:
            client.close()
    finally:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if proc.stderr is not None:
            proc.stderr.close()


def test_in_place_update_images_with_the_same_image_id(cli_cluster: Client, wait_for) -> None:
    """``in-place update images with the same imageID``: nginx:alpine -> nginx:mainline-alpine
    (one digest, declared from the command line) in place: the same pod, a new container, the
    same imageID, ``<repository>@<digest>``; the update completes (Kruise accepts the old
    imageID when the container runs the spec's image). An undeclared image reports a digest
    of its own."""
    client = cli_cluster
    client.create(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "undeclared", "namespace": "default"},
            "spec": {"containers": [{"name": "c", "image": "nginx:1.25"}]},
        }
    )
    install_crd(client)
    with running_manager(client, NS, lambda m: setup(m, name="cloneset-digests")):
        client.create(
            make_cs(
                NS,
                1,
                image="nginx:alpine",
                updateStrategy={"type": "InPlaceIfPossible"},
                minReadySeconds=MIN_READY,
                progressDeadlineSeconds=TEN_MINUTES,
            )
        )
        wait_status(client, NS, wait_for, "replicas", 1, timeout=3)
        wait_progressing(client, NS, wait_for, UPDATED)
        wait_status(client, NS, wait_for, "readyReplicas", 1)
        wait_progressing(client, NS, wait_for, AVAILABLE)
        (old,) = pods(client, NS).values()
        old_status = old["status"]["containerStatuses"][0]
        assert old_status["imageID"] == f"docker-pullable://nginx@{DIGEST}"

        set_image(client, NS, "nginx:mainline-alpine")
        wait_for(lambda: observed(client, NS), 10)
        wait_progressing(client, NS, wait_for, UPDATED)
        wait_status(client, NS, wait_for, "updatedReadyReplicas", 1)
        (new,) = pods(client, NS).values()
        new_status = new["status"]["containerStatuses"][0]
        assert new["metadata"]["uid"] == old["metadata"]["uid"]
        assert new_status["image"] == "nginx:mainline-alpine"
        assert new_status["containerID"] != old_status["containerID"]
        assert new_status["imageID"] == old_status["imageID"]
        state = json.loads(new["metadata"]["annotations"]["apps.kruise.io/inplace-update-state"])
        assert state["lastContainerStatuses"] == {"c": {"imageID": old_status["imageID"]}}
        wait_progressing(client, NS, wait_for, AVAILABLE)

    def undeclared_image_id() -> str:
        pod = client.get(kinds.Pod, "undeclared", "default")
        statuses = (pod.get("status") or {}).get("containerStatuses") or [{}]
        return str(statuses[0].get("imageID") or "")

    assert wait_for(undeclared_image_id, 10).startswith("docker-pullable://nginx:1.25@sha256:")
