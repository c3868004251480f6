"""``Client.request(accept=...)`` and the embedded server's Tables as ``kubectl get`` reads
them (list, single object, includeObject)."""

from __future__ import annotations

from kube_runtime.client import Client

TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"


def test_request_accept_asks_for_a_table(client: Client, namespace: str) -> None:
    path = f"/apis/apps/v1/namespaces/{namespace}/deployments"
    client.request(
        "POST",
        path,
        body={
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "d"},
            "spec": {
                "replicas": 0,
                "selector": {"matchLabels": {"app": "d"}},
                "template": {
                    "metadata": {"labels": {"app": "d"}},
                    "spec": {"containers": [{"name": "c", "image": "nginx:1"}]},
                },
            },
        },
    )
    assert client.request("GET", path)["kind"] == "DeploymentList"  # the default Accept

    table = client.request("GET", path, accept=TABLE)
    assert table["kind"] == "Table"
    assert [(c["name"], c["priority"]) for c in table["columnDefinitions"]] == [
        ("Name", 0),
        ("Ready", 0),
        ("Up-to-date", 0),
        ("Available", 0),
        ("Age", 0),
        ("Containers", 1),
        ("Images", 1),
        ("Selector", 1),
    ]
    (row,) = table["rows"]
    assert row["cells"][:4] == ["d", "0/0", 0, 0]
    assert row["cells"][5:] == ["c", "nginx:1", "app=d"]
    assert row["object"]["kind"] == "PartialObjectMetadata"

    one = client.request("GET", f"{path}/d", query={"includeObject": "Object"}, accept=TABLE)
    assert one["kind"] == "Table" and one["rows"][0]["object"]["kind"] == "Deployment"
    bare = client.request("GET", f"{path}/d", query={"includeObject": "None"}, accept=TABLE)
    assert bare["rows"][0]["object"] is None  # written as null, as kube-apiserver does


def test_crd_printer_columns_evaluate_kubectl_jsonpath(client: Client, namespace: str) -> None:
    """Issue 21 part 3: filters, wildcards and typed columns, cell for cell as kube-apiserver
    1.20 gives them (first result of the path; a missing value or one of another type: null)."""
    import uuid

    from kube_runtime.crds import install_crd

    group = f"cols-{uuid.uuid4().hex[:8]}.example.com"
    columns = [
        ("Available", "string", '.status.conditions[?(@.type=="Available")].status'),
        ("Containers", "string", ".spec.containers[*].name"),
        ("Replicas", "integer", ".spec.replicas"),
        ("Paused", "boolean", ".spec.paused"),
        ("Labels", "string", ".spec.labels"),
        ("Missing", "string", ".status.nothing"),
        ("Wrong", "integer", ".spec.containers[0].name"),
    ]
    crd = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"things.{group}"},
        "spec": {
            "group": group,
            "scope": "Namespaced",
            "names": {"plural": "things", "singular": "thing", "kind": "Thing"},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "x-kubernetes-preserve-unknown-fields": True,
                        }
                    },
                    "additionalPrinterColumns": [
                        {"name": n, "type": t, "jsonPath": p} for n, t, p in columns
                    ],
                }
            ],
        },
    }
    install_crd(client, crd)
    try:
        path = f"/apis/{group}/v1/namespaces/{namespace}/things"
        client.request(
            "POST",
            path,
            body={
                "apiVersion": f"{group}/v1",
                "kind": "Thing",
                "metadata": {"name": "t"},
                "spec": {
                    "replicas": 3,
                    "paused": False,
                    "labels": {"a": "b"},
                    "containers": [{"name": "web"}, {"name": "sidecar"}],
                },
                "status": {
                    "conditions": [
                        {"type": "Progressing", "status": "True"},
                        {"type": "Available", "status": "False"},
                    ]
                },
            },
        )
        table = client.request("GET", path, accept=TABLE)
        names = [c["name"] for c in table["columnDefinitions"]]
        assert names == ["Name", *(n for n, _, _ in columns)]
        (row,) = table["rows"]
        assert row["cells"] == ["t", "False", "web", 3, False, '{"a":"b"}', None, None]
    finally:
        client.delete("apiextensions.k8s.io/v1/CustomResourceDefinition", f"things.{group}")
