"""kubectl against the embedded cluster: a current release and Debian's 1.20 client.

`make test` installs kubectl when missing and unpacks Debian's kubernetes-client into
~/.cache/kube-runtime (scripts/ensure-kubectl.sh); a binary that is absent is skipped with
the reason, so running the file by hand on a bare machine says what to install.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import threading
from pathlib import Path
from typing import Any

import pytest
import yaml
from kubernetes import client

from kube_runtime.envtest import wait_for

pytestmark = pytest.mark.kubectl

_OLD = Path(
    os.environ.get(
        "KUBECTL_OLD", Path.home() / ".cache/kube-runtime/kubectl-debian/usr/bin/kubectl"
    )
)
_BINARIES = {
    "current": shutil.which("kubectl"),
    "debian-1.20": str(_OLD) if _OLD.exists() else None,
}

MANIFEST = """
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: web
  labels: {app: web}
spec:
  serviceName: web
  replicas: 3
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: nginx
        image: nginx:IMAGE
        ports:
        - containerPort: 80
          name: http
  volumeClaimTemplates:
  - metadata: {name: data}
    spec:
      accessModes: [ReadWriteOnce]
      resources: {requests: {storage: 1Gi}}
"""


@pytest.fixture(params=sorted(_BINARIES))
def kubectl(request: pytest.FixtureRequest, kubeconfig: Path, namespace: str) -> Any:
    binary = _BINARIES[request.param]
    if binary is None:
        pytest.skip(
            f"kubectl ({request.param}) not installed: run `make kubectl` (scripts/ensure-kubectl.sh)"
        )

    def run(*args: str, stdin: str | None = None, check: bool = True, timeout: float = 30) -> str:
        cmd = [binary, "--kubeconfig", str(kubeconfig), "-n", namespace, *args]
        proc = subprocess.run(cmd, input=stdin, capture_output=True, text=True, timeout=timeout)
        if check and proc.returncode != 0:
            raise AssertionError(
                f"{' '.join(args)} failed ({proc.returncode}): {proc.stderr}{proc.stdout}"
            )
        return proc.stdout + proc.stderr

    run.binary = binary  # type: ignore[attr-defined]
    return run


def test_apply_get_patch_scale_delete(kubectl: Any, api_client: Any, namespace: str) -> None:
    apps = client.AppsV1Api(api_client)
    assert "statefulset.apps/web created" in kubectl(
        "apply", "-f", "-", stdin=MANIFEST.replace("IMAGE", "1.25")
    )
    table = kubectl("get", "statefulsets")
    assert table.split("\n")[0].split()[:3] == ["NAME", "READY", "AGE"]
    assert "web" in table and "0/3" in table
    obj = json.loads(kubectl("get", "sts", "web", "-o", "json"))
    assert obj["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:1.25"

    # Re-apply with a changed image: kubectl computes a strategic merge patch.
    assert "configured" in kubectl("apply", "-f", "-", stdin=MANIFEST.replace("IMAGE", "1.26"))
    got = apps.read_namespaced_stateful_set("web", namespace)
    assert got.spec.template.spec.containers[0].image == "nginx:1.26"
    assert got.spec.template.spec.containers[0].ports[0].container_port == 80
    assert got.metadata.generation == 2
    assert "kubectl.kubernetes.io/last-applied-configuration" in got.metadata.annotations

    kubectl(
        "patch",
        "sts",
        "web",
        "-p",
        '{"spec":{"template":{"spec":{"containers":[{"name":"nginx","image":"nginx:1.27"}]}}}}',
    )
    kubectl("patch", "sts", "web", "--type=merge", "-p", '{"metadata":{"labels":{"tier":"front"}}}')
    kubectl(
        "patch",
        "sts",
        "web",
        "--type=json",
        "-p",
        '[{"op":"replace","path":"/spec/updateStrategy/rollingUpdate/partition","value":1}]',
    )
    got = apps.read_namespaced_stateful_set("web", namespace)
    assert got.spec.template.spec.containers[0].image == "nginx:1.27"
    assert got.metadata.labels == {"app": "web", "tier": "front"}
    assert got.spec.update_strategy.rolling_update.partition == 1  # defaulted 0, replaced

    assert "scaled" in kubectl("scale", "sts", "web", "--replicas=5")
    assert apps.read_namespaced_stateful_set("web", namespace).spec.replicas == 5

    assert "deleted" in kubectl("delete", "sts", "web")
    assert apps.list_namespaced_stateful_set(namespace).items == []


def test_api_resources_and_explain_free_discovery(kubectl: Any) -> None:
    out = kubectl("api-resources")
    lines = {line.split()[0]: line for line in out.splitlines()[1:] if line.strip()}
    assert "statefulsets" in lines and "sts" in lines["statefulsets"]
    assert "customresourcedefinitions" in lines and "leases" in lines
    assert "pods" in kubectl("api-resources", "--namespaced=true", "-o", "name")
    versions = kubectl("api-versions")
    assert "apps/v1" in versions and "coordination.k8s.io/v1" in versions


def test_rollout_status_waits_for_the_status(kubectl: Any, api_client: Any, namespace: str) -> None:
    apps = client.AppsV1Api(api_client)
    # Created through the API (kubectl apply, its OpenAPI download and parse, is checked above).
    apps.create_namespaced_stateful_set(
        namespace, yaml.safe_load(MANIFEST.replace("IMAGE", "1.25"))
    )
    result: dict[str, str] = {}

    def rollout() -> None:
        result["out"] = kubectl("rollout", "status", "sts/web", "--timeout=20s", check=False)

    t = threading.Thread(target=rollout)
    t.start()
    # Act as the controller would: report every replica ready at one revision.
    generation = apps.read_namespaced_stateful_set("web", namespace).metadata.generation
    apps.patch_namespaced_stateful_set_status(
        "web",
        namespace,
        {
            "status": {
                "observedGeneration": generation,
                "replicas": 3,
                "readyReplicas": 3,
                "availableReplicas": 3,
                "currentReplicas": 3,
                "updatedReplicas": 3,
                "currentRevision": "web-abc",
                "updateRevision": "web-abc",
            }
        },
    )
    t.join(30)
    # "rolling update complete" or, with the defaulted partition 0, "partitioned roll out complete".
    assert "complete" in result.get("out", ""), result


def test_get_watch_streams_changes(
    kubectl: Any, api_client: Any, namespace: str, kubeconfig: Path
) -> None:
    core = client.CoreV1Api(api_client)
    core.create_namespaced_config_map(namespace, {"metadata": {"name": "first"}})
    proc = subprocess.Popen(
        [
            kubectl.binary,
            "--kubeconfig",
            str(kubeconfig),
            "-n",
            namespace,
            "get",
            "configmaps",
            "-w",
            "--no-headers",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    lines: list[str] = []
    reader = threading.Thread(
        target=lambda: lines.extend(iter(proc.stdout.readline, "")), daemon=True
    )  # type: ignore[union-attr]
    reader.start()
    try:
        wait_for(
            lambda: any("first" in line for line in lines),
            timeout=15,
            message="kubectl get -w lists the existing object",
        )
        core.create_namespaced_config_map(namespace, {"metadata": {"name": "second"}})
        wait_for(
            lambda: any("second" in line for line in lines),
            timeout=15,
            message="kubectl get -w shows the new object",
        )
    finally:
        proc.kill()
        proc.wait(5)


def test_crd_and_custom_resources(kubectl: Any, api_client: Any, namespace: str) -> None:
    group = f"{namespace}.example.com"
    crd = f"""
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.{group}
spec:
  group: {group}
  scope: Namespaced
  names: {{plural: widgets, singular: widget, kind: Widget, shortNames: [wd]}}
  versions:
  - name: v1
    served: true
    storage: true
    subresources:
      status: {{}}
      scale: {{specReplicasPath: .spec.replicas, statusReplicasPath: .status.replicas}}
    additionalPrinterColumns:
    - {{name: Replicas, type: integer, jsonPath: .spec.replicas}}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              replicas: {{type: integer}}
          status:
            type: object
            properties:
              replicas: {{type: integer}}
"""
    kubectl("apply", "-f", "-", stdin=crd)
    kubectl("wait", "--for=condition=Established", f"crd/widgets.{group}", "--timeout=10s")
    widget = (
        f"apiVersion: {group}/v1\nkind: Widget\nmetadata: {{name: w1}}\nspec: {{replicas: 2}}\n"
    )
    assert "created" in kubectl("apply", "-f", "-", stdin=widget)
    table = kubectl("get", f"widgets.{group}")
    assert "REPLICAS" in table.splitlines()[0] and "w1" in table
    kubectl("scale", f"widgets.{group}/w1", "--replicas=4")  # through the scale subresource
    custom = client.CustomObjectsApi(api_client)  # (kubectl get -o json: the apply test)
    w1 = custom.get_namespaced_custom_object(group, "v1", namespace, "widgets", "w1")
    assert w1["spec"]["replicas"] == 4
    kubectl("delete", f"crd/widgets.{group}")


WIDE_MANIFEST = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: wd}
spec:
  replicas: 0
  selector:
    matchLabels: {app: wd}
  template:
    metadata:
      labels: {app: wd}
    spec:
      containers:
      - {name: web, image: "nginx:1"}
      - {name: side, image: "busybox:1"}
---
apiVersion: v1
kind: Service
metadata: {name: ws}
spec:
  type: NodePort
  selector: {app: wd}
  ports:
  - {port: 80, nodePort: 30123}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: wc}
spec:
  accessModes: [ReadWriteOnce]
  volumeMode: Block
  resources: {requests: {storage: 1Gi}}
"""


@pytest.fixture
def node_port(request: pytest.FixtureRequest) -> int:
    """A node port of this test's own (node ports are cluster-wide: kube-apiserver refuses
    one already allocated, so each kubectl variant gets another)."""
    return 30123 + sum(map(ord, request.node.name)) % 2000


def _tables(out: str) -> dict[str, tuple[list[str], dict[str, str]]]:
    """The tables of a ``kubectl get`` of several kinds, by the kind prefix of their names
    (``deployment.apps/wd`` -> ``deployment.apps``): the header's words and the rows by name."""
    tables: dict[str, tuple[list[str], dict[str, str]]] = {}
    for block in out.strip().split("\n\n"):
        header, *rows = [line for line in block.splitlines() if line.strip()]
        named = {row.split()[0]: row for row in rows}
        kind = next(iter(named)).split("/")[0]
        tables[kind] = header.split(), {n.split("/", 1)[1]: r for n, r in named.items()}
    return tables


def test_get_and_get_wide_print_the_server_columns(kubectl: Any, node_port: int) -> None:
    """``kubectl get`` prints the server's priority-0 columns, ``-o wide`` the priority-1
    ones too (Containers/Images/Selector, Selector, VolumeMode, Nominated Node...). One
    ``get`` of several kinds prints one table per kind, each with the kind's columns."""
    kubectl("apply", "-f", "-", stdin=WIDE_MANIFEST.replace("30123", str(node_port)))
    kubectl("run", "wp", "--image=nginx:1", "--restart=Never")
    kubectl("create", "configmap", "wcm", "--from-literal=a=1", "--from-literal=b=2")

    tables = _tables(kubectl("get", "deployments,pvc,pods"))
    header, rows = tables["deployment.apps"]
    assert header == ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"]
    assert rows["wd"].split()[1:4] == ["0/0", "0", "0"]
    header, rows = tables["persistentvolumeclaim"]
    assert "VOLUMEMODE" not in header and header[:4] == ["NAME", "STATUS", "VOLUME", "CAPACITY"]
    assert "wc" in rows
    header, rows = tables["pod"]
    assert header == ["NAME", "READY", "STATUS", "RESTARTS", "AGE"] and "wp" in rows

    tables = _tables(kubectl("get", "deployments,services,pvc,pods,configmaps", "-o", "wide"))
    header, rows = tables["deployment.apps"]
    assert header == [
        "NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE", "CONTAINERS", "IMAGES", "SELECTOR"
    ]  # fmt: skip
    assert rows["wd"].split()[-3:] == ["web,side", "nginx:1,busybox:1", "app=wd"]

    header, rows = tables["service"]
    assert header == ["NAME", "TYPE", "CLUSTER-IP", "EXTERNAL-IP", "PORT(S)", "AGE", "SELECTOR"]
    row = rows["ws"].split()
    assert row[1] == "NodePort" and row[3:5] == ["<none>", f"80:{node_port}/TCP"]
    assert row[-1] == "app=wd"

    header, rows = tables["persistentvolumeclaim"]
    assert header[-1] == "VOLUMEMODE" and rows["wc"].split()[-1] == "Block"

    header, rows = tables["pod"]
    assert header == [
        "NAME", "READY", "STATUS", "RESTARTS", "AGE", "IP", "NODE", "NOMINATED", "NODE",
        "READINESS", "GATES",
    ]  # fmt: skip
    assert rows["wp"].split()[-2:] == ["<none>", "<none>"]  # no nominated node, no gates

    header, rows = tables["configmap"]
    assert header == ["NAME", "DATA", "AGE"] and rows["wcm"].split()[1] == "2"


@pytest.mark.needs_k8s("1.26", "aggregated discovery (apidiscovery.k8s.io) is served from 1.26")
def test_aggregated_discovery(kubectl: Any, client: Any) -> None:
    """``/api`` and ``/apis`` as APIGroupDiscoveryList for clients that ask first (current
    kubectl does, with ``v2`` then ``v2beta1``), the unaggregated documents for the others."""
    accept = (
        "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,"
        "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,"
        "application/json"
    )
    apis = client.request("GET", "/apis", accept=accept)
    assert (apis["kind"], apis["apiVersion"]) == ("APIGroupDiscoveryList", "apidiscovery.k8s.io/v2")
    apps = next(g for g in apis["items"] if g["metadata"].get("name") == "apps")
    v1 = next(v for v in apps["versions"] if v["version"] == "v1")
    sts = next(r for r in v1["resources"] if r["resource"] == "statefulsets")
    assert sts["responseKind"] == {"group": "apps", "version": "v1", "kind": "StatefulSet"}
    assert sts["scope"] == "Namespaced" and "sts" in sts["shortNames"]
    subresources = {s["subresource"]: s["responseKind"]["kind"] for s in sts["subresources"]}
    assert subresources == {"status": "StatefulSet", "scale": "Scale"}
    core = client.request("GET", "/api", accept=accept)
    (group,) = core["items"]
    assert "name" not in group["metadata"] and group["versions"][0]["version"] == "v1"
    assert client.request("GET", "/apis")["kind"] == "APIGroupList"  # without asking
    resources = kubectl("api-resources", "--api-group=apps", "-o", "name")
    assert "statefulsets.apps" in resources.split()
