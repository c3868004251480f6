"""The create path's shortcuts give what the general steps give, over random inputs:

* a metadata name that is a plain DNS-1123 subdomain is accepted without the regular
  expression (:func:`validation._validate_meta`): the causes are those of the name check;
* labels and annotations are checked under one memo of the pair: the causes (and their
  order) are those of the two checks, first sighting and memo hit alike;
* the pvc-protection controller skips a new pod none of whose volumes can name a claim:
  :func:`pvcprotection.claim_names` of such a pod is empty;
* a pod create whose spec encoding is known is validated as :func:`validation.validate` does.
"""

from __future__ import annotations

import random
from typing import Any

from kube_runtime.envtest.server import pvcprotection, validation
from kube_runtime.envtest.server.errors import Cause
from kube_runtime.envtest.server.memo import json_key


def _general_name_fn(name: str, prefix: bool) -> Any:
    # Not validation._SUBDOMAIN_NAME itself: _validate_meta takes the regular way.
    return validation._SUBDOMAIN_NAME(name, prefix)


def _random_name(rng: random.Random) -> str:
    alphabet = rng.choice(["abc-.", "ab0-.", "aZ9-._ ", "a-", "a.", "xy\n-.é"])
    length = rng.choice([1, 2, 3, 5, 8, 63, 252, 253, 254, 300])
    return "".join(rng.choice(alphabet) for _ in range(rng.randint(1, length)))


def _meta_causes(meta: dict[str, Any], name_fn: Any) -> list[Cause]:
    out: list[Cause] = []
    validation._validate_meta(out, meta, True, name_fn)
    return out


def test_plain_subdomain_names_decided_as_the_regular_expression_does() -> None:
    rng = random.Random(20)
    names = [_random_name(rng) for _ in range(4000)]
    names += ["a", "a.b", "a-b.c", "-a", "a-", ".a", "a.", "a..b", "a.-b", "a-.b", "A", "a b"]
    names += ["a" * 253, "a" * 254, "a." * 126 + "a", "a\n", "0", "a_b", "ä"]
    valid = 0
    for name in names:
        meta = {"name": name, "namespace": "ns"}
        fast = _meta_causes(meta, validation._SUBDOMAIN_NAME)
        assert fast == _meta_causes(meta, _general_name_fn), name
        valid += not fast
    assert 100 < valid < len(names) - 100  # both ways taken often


def _random_map(rng: random.Random) -> Any:
    kind = rng.random()
    if kind < 0.1:
        return rng.choice([None, {}, [], "x", ["a"], 0])
    keys = ["app", "a/b", "example.com/x", "-bad", "x" * 64, "Bad Key", "k8s.io/", "ok_1"]
    values: list[Any] = ["v", "", "-x", "y" * 64, "a b", 1, True, None, {"n": 1}, "ok.1"]
    return {rng.choice(keys): rng.choice(values) for _ in range(rng.randint(1, 4))}


def test_labels_and_annotations_memo_gives_the_checks_causes() -> None:
    rng = random.Random(7)
    pairs = [(_random_map(rng), _random_map(rng)) for _ in range(300)]
    for _ in range(2):  # first sightings, then memo hits
        for labels, notes in pairs:
            meta: dict[str, Any] = {"name": "n", "namespace": "ns"}
            if labels is not None:
                meta["labels"] = labels
            if notes is not None:
                meta["annotations"] = notes
            expected: list[Cause] = []
            if labels:
                validation._validate_labels(expected, "metadata.labels", labels)
            if notes:
                validation._validate_annotations(expected, "metadata.annotations", notes)
            assert _meta_causes(meta, validation._SUBDOMAIN_NAME) == expected, meta
    assert len(validation._META_MAP_CAUSES) > 0


def _random_volume(rng: random.Random) -> Any:
    choice = rng.random()
    if choice < 0.1:
        return rng.choice([None, "x", [], 1])
    volume: dict[str, Any] = {}
    if rng.random() < 0.8:
        volume["name"] = rng.choice(["data", "", "cache"])
    source = rng.choice(
        [
            "configMap",
            "emptyDir",
            "persistentVolumeClaim",
            "ephemeral",
            "secret",
        ]
    )
    volume[source] = rng.choice([{}, {"claimName": "c"}, {"claimName": ""}, None, "x"])
    return volume


def test_pods_skipped_by_pvc_protection_name_no_claim() -> None:
    rng = random.Random(3)
    skipped = 0
    for _ in range(3000):
        spec: Any = {"volumes": [_random_volume(rng) for _ in range(rng.randint(0, 3))]}
        if rng.random() < 0.05:
            spec = rng.choice([None, {}, {"volumes": None}])  # (a stored pod has no other)
        pod = {"metadata": {"name": "p", "namespace": "ns"}, "spec": spec}
        if not pvcprotection._may_name_claims(pod):
            skipped += 1
            assert pvcprotection.claim_names(pod) == [], pod
    assert skipped > 500


def _random_pod(rng: random.Random) -> dict[str, Any]:
    container: dict[str, Any] = {"name": rng.choice(["app", "app", "App", "a" * 70]), "image": "i"}
    if rng.random() < 0.3:
        container["ports"] = [{"containerPort": rng.choice([80, 80, 0, 70000])}]
    if rng.random() < 0.05:
        del container["image"]
    spec: dict[str, Any] = {"containers": [container]}
    if rng.random() < 0.1:
        spec["containers"].append({**container, "name": rng.choice(["side", container["name"]])})
    if rng.random() < 0.2:
        spec["restartPolicy"] = rng.choice(["Always", "Never", "Sometimes"])
    meta: dict[str, Any] = {"namespace": rng.choice(["ns", "ns", "ns", "", "Bad"])}
    if rng.random() < 0.95:
        meta["name"] = _random_name(rng) if rng.random() < 0.2 else f"web-{rng.randint(0, 99)}"
    if rng.random() < 0.5:
        meta["labels"] = _random_map(rng) if rng.random() < 0.2 else {"app": "web"}
    if rng.random() < 0.1:
        meta["finalizers"] = rng.choice([["a/b"], ["orphan", "foregroundDeletion"], "x"])
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


def test_pod_create_validation_with_known_spec_is_the_general_one() -> None:
    rng = random.Random(11)
    invalid = 0
    for _ in range(600):
        pod = _random_pod(rng)
        spec_key = json_key(pod["spec"])
        assert spec_key is not None
        expected = validation.validate("", "Pod", pod)
        assert validation.validate_pod_create(pod, spec_key) == expected, pod
        assert validation.validate_pod_create(pod, spec_key) == expected, pod  # memo hit
        invalid += bool(expected)
    assert 50 < invalid < 550


def test_pods_with_tolerations_are_stored_alike_from_the_steps_and_the_memo() -> None:
    """Pods whose tolerations admission extends: the first two creates of a spec run the
    steps, the next get the prepared spec from the memo; all store the same bytes, and the
    request's tolerations list is the one it sent."""
    import orjson

    from bench.embedded_server import typical_pod
    from kube_runtime.envtest import EmbeddedCluster

    specs: list[Any] = [
        [],
        [{"key": "dedicated", "operator": "Equal", "value": "web", "effect": "NoSchedule"}],
        [{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute"}],
        [{"operator": "Exists"}],  # tolerates every taint: nothing added
        [{"key": "a", "operator": "Exists"}, {"key": "b", "operator": "Exists"}],
    ]
    with EmbeddedCluster(kubelet=False, deployments=False) as cluster:
        store = cluster.store
        store.create(cluster.resource("", "namespaces"), None, {"metadata": {"name": "t"}})
        pods = cluster.resource("", "pods")
        for i, tolerations in enumerate(specs):
            outcomes = set()
            for n in range(4):
                body = typical_pod(f"p{i}-{n}")
                body["spec"]["tolerations"] = orjson.loads(orjson.dumps(tolerations))
                sent = body["spec"]["tolerations"]
                stored = store.create(pods, "t", body)
                assert stored.raw == orjson.dumps(stored.obj)
                assert sent == tolerations  # the request's list is not extended
                obj = orjson.loads(stored.raw)
                for field in ("name", "uid", "creationTimestamp", "resourceVersion"):
                    obj["metadata"][field] = ""
                outcomes.add(orjson.dumps(obj))
                keys = [t.get("key") for t in obj["spec"]["tolerations"]]
                assert keys.count("node.kubernetes.io/unreachable") == (i != 3)
            assert len(outcomes) == 1


def test_pod_specs_with_the_same_tail_are_told_apart() -> None:
    """The pod spec memo's look-up by the key's last bytes (a memcmp of the whole key
    decides): specs that differ only before their last 64 bytes, created in turn, are each
    stored as the steps store them (the first create of each), and a spec seen again after
    another with its tail still hits the memo."""
    import orjson

    from bench.embedded_server import typical_pod
    from kube_runtime.envtest import EmbeddedCluster
    from kube_runtime.envtest.server import strategy

    accounts = ["a", "b", "c"]
    with EmbeddedCluster(kubelet=False, deployments=False) as cluster:
        store = cluster.store
        store.create(cluster.resource("", "namespaces"), None, {"metadata": {"name": "t"}})
        pods = cluster.resource("", "pods")
        first: dict[str, bytes] = {}
        for n in range(6):
            for account in accounts:
                body = typical_pod(f"p{n}-{account}")
                body["spec"]["serviceAccountName"] = account
                key = orjson.dumps(body["spec"])
                stored = store.create(pods, "t", body)
                assert stored.raw == orjson.dumps(stored.obj)
                obj = orjson.loads(stored.raw)
                for field in ("name", "uid", "creationTimestamp", "resourceVersion"):
                    obj["metadata"][field] = ""
                assert obj["spec"]["serviceAccount"] == account
                assert first.setdefault(account, orjson.dumps(obj)) == orjson.dumps(obj)
        tails = store.strategy._pod_spec_tails  # type: ignore[attr-defined]
        assert len(tails) == 1 and tails[key[strategy._TAIL :]][0] == key
