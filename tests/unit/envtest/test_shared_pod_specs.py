"""Pods created from one spec share the prepared spec (one dict, from the third create of
that spec on): every write to one of them leaves the others as they were stored, their
objects still what their bytes say, and the request's spec is left as it was sent."""

from __future__ import annotations

from typing import Any

import orjson
import urllib3

from bench.embedded_server import typical_pod
from kube_runtime.envtest import EmbeddedCluster

PODS = "/api/v1/namespaces/t/pods"


def _call(http: urllib3.PoolManager, url: str, method: str, body: Any, ctype: str) -> Any:
    answer = http.request(
        method, url, body=orjson.dumps(body), headers={"Content-Type": ctype}, retries=False
    )
    assert answer.status < 300, (method, url, answer.data[:500])
    return orjson.loads(answer.data)


def test_writes_to_one_pod_of_a_shared_spec_leave_the_others_alone() -> None:
    with EmbeddedCluster(kubelet=False, deployments=False) as cluster:
        store = cluster.store
        store.create(cluster.resource("", "namespaces"), None, {"metadata": {"name": "t"}})
        pods = cluster.resource("", "pods")
        bodies = [typical_pod(f"p{n}") for n in range(9)]
        sent = [orjson.dumps(body["spec"]) for body in bodies]
        created = [store.create(pods, "t", body) for body in bodies]
        # the request's spec as sent (the steps, the first two times, default it in place)
        for body, encoded in zip(bodies[2:], sent[2:], strict=True):
            assert orjson.dumps(body["spec"]) == encoded
        shared = created[2].obj["spec"]
        assert all(s.obj["spec"] is shared for s in created[2:])
        assert all(s.obj["spec"] == shared for s in created[:2])
        snapshot = [s.raw for s in created]
        http = urllib3.PoolManager()
        base = cluster.url + PODS
        json, merge = "application/json", "application/merge-patch+json"
        strategic = "application/strategic-merge-patch+json"
        pod = _call(http, f"{base}/p2", "GET", None, json)
        pod["status"]["phase"] = "Running"
        pod["status"]["conditions"] = [{"type": "Ready", "status": "True"}]
        _call(http, f"{base}/p2/status", "PUT", pod, json)
        containers = [{"name": pod["spec"]["containers"][0]["name"], "image": "nginx:2"}]
        _call(http, f"{base}/p3", "PATCH", {"spec": {"containers": containers}}, strategic)
        _call(http, f"{base}/p4", "PATCH", {"spec": {"activeDeadlineSeconds": 30}}, merge)
        tolerations = [{"key": "k", "operator": "Exists", "effect": "NoExecute"}]
        patch = [{"op": "add", "path": "/spec/tolerations/-", "value": tolerations[0]}]
        _call(http, f"{base}/p5", "PATCH", patch, "application/json-patch+json")
        binding = {"metadata": {"name": "p6"}, "target": {"kind": "Node", "name": "node-1"}}
        _call(http, f"{base}/p6/binding", "POST", binding, json)
        pod = _call(http, f"{base}/p7", "GET", None, json)
        pod["metadata"]["labels"] = {"changed": "yes"}
        pod["spec"]["tolerations"].append(tolerations[0])
        _call(http, f"{base}/p7", "PUT", pod, json)
        _call(http, f"{base}/p8", "DELETE", None, json)
        http.clear()
        assert orjson.dumps(created[2].obj) == snapshot[2]  # the versions written over
        for n in (0, 7):  # p0 unwritten; p7 written last: every earlier write let it be
            stored = store.get(pods, "t", f"p{n}")
            if n == 0:
                assert stored.raw == snapshot[0]
            assert orjson.dumps(stored.obj) == stored.raw
        assert orjson.dumps(shared) == orjson.dumps(created[3].obj["spec"])
        assert orjson.loads(snapshot[3])["spec"] == shared
        for n in range(2, 8):
            stored = store.try_get(pods, "t", f"p{n}")
            assert stored is not None
            assert orjson.dumps(stored.obj) == stored.raw
