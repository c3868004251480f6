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
