"""``kube-runtime cluster --image-digest IMAGE=DIGEST --image-digests FILE``: the digests a user
declares on the command line are what the cluster's simulated kubelet reports as each
container's ``imageID``, so OpenKruise's CloneSet scenario "in-place update images with the same
imageID" (``test/e2e/apps/v1alpha1/cloneset.go``: in Kruise's registry ``nginx:alpine`` and
``nginx:mainline-alpine`` are one image) can be set up from the command line.

Two tests: the command itself runs as a child process (its own code path: flags, digests file,
cluster) and its kubelet reports the declared imageIDs; Kruise's scenario runs on the digests
the same flags declare (the command's own parsing, ``kube_runtime.envtest.kubelet.images``), on
a simulated clock with Kruise's own ``minReadySeconds`` of 10 on the embedded backend (a cluster
of the test's own, ``docs/simtime.md``), 3 s in real time on kube-apiserver.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from controllers.cloneset import install_crd, setup
from kube_runtime import kinds
from kube_runtime.client import Client
from kube_runtime.envtest.kubelet import images
from kube_runtime.envtest.waiting import wait_for as wait_until
from tests.e2e._fixtures import running_manager
from tests.e2e.test_cloneset_kruise_e2e import replay_same_image_id

DIGEST = "sha256:" + "4f" * 32  # one image, two tags


def _digest_flags(directory: Path) -> list[str]:
    """``nginx:alpine``'s digest given with ``--image-digest``, ``nginx:mainline-alpine``'s
    (the same) in a YAML file given with ``--image-digests``."""
    digests = directory / "digests.yaml"
    digests.write_text(f"nginx:mainline-alpine: {DIGEST}\n")
    return ["--image-digest", f"nginx:alpine={DIGEST}", "--image-digests", str(digests)]


@pytest.fixture
def cli_cluster(tmp_path: Path) -> Iterator[Client]:
    """``kube-runtime cluster`` as a child process with :func:`_digest_flags`; a client of
    the kubeconfig it writes."""
    kubeconfig = tmp_path / "kubeconfig"
    proc = subprocess.Popen(
        [
            *(sys.executable, "-m", "kube_runtime.cli", "cluster", "--port", "0", "--no-auth"),
            *("--kubeconfig", str(kubeconfig), "--pod-ready-after", "0.1"),
            *_digest_flags(tmp_path),
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


def _image_id(client: Client, name: str) -> str:
    pod = client.get(kinds.Pod, name, "default")
    statuses = (pod.get("status") or {}).get("containerStatuses") or [{}]
    return str(statuses[0].get("imageID") or "")


def test_the_declared_digests_are_the_kubelets_image_ids(
    cli_cluster: Client, wait_for: Any
) -> None:
    """The command's kubelet reports ``docker-pullable://<repository>@<digest>`` for both tags
    declared (one by ``--image-digest``, one in the ``--image-digests`` file): one imageID; an
    undeclared image reports a digest of its own."""
    client = cli_cluster
    names = {"alpine": "nginx:alpine", "mainline": "nginx:mainline-alpine", "other": "nginx:1.25"}
    for name, image in names.items():
        client.create(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": name, "namespace": "default"},
                "spec": {"containers": [{"name": "c", "image": image}]},
            }
        )
    ids = {name: wait_for(lambda n=name: _image_id(client, n), 10) for name in names}
    assert ids["alpine"] == ids["mainline"] == f"docker-pullable://nginx@{DIGEST}"
    assert ids["other"].startswith("docker-pullable://nginx:1.25@sha256:")
    assert DIGEST not in ids["other"]


@pytest.mark.simtime
def test_in_place_update_images_with_the_same_image_id(
    sim_client: Client, sim_namespace: str, sim_cluster: Any, wait_for: Any, tmp_path: Path
) -> None:
    """``in-place update images with the same imageID``: nginx:alpine -> nginx:mainline-alpine
    (one digest, declared by the command's flags) in place: the same pod, a new container, the
    same imageID, ``<repository>@<digest>``; the update completes (Kruise accepts the old
    imageID when the container runs the spec's image)."""
    client, ns = sim_client, sim_namespace
    kubelet = sim_cluster.kubelet
    if kubelet is None:
        pytest.skip("needs the simulated kubelet")
    parser = argparse.ArgumentParser()
    images.add_arguments(parser)
    declared = images.from_arguments(parser, parser.parse_args(_digest_flags(tmp_path)))
    saved = kubelet.settings.image_digests
    kubelet.settings.image_digests = declared
    try:
        install_crd(client)
        with running_manager(client, ns, lambda m: setup(m, name=f"cloneset-{ns}")):
            replay_same_image_id(client, ns, wait_for, image_id=f"docker-pullable://nginx@{DIGEST}")
    finally:
        kubelet.settings.image_digests = saved
