"""A corpus of writes through the embedded server's write path, and their outcomes as bytes.

Used by ``tests/unit/envtest/test_write_path_golden.py`` to pin what ``Store.create`` and
``Store.update`` do (defaulting, admission, zero-dropping, validation, commit) while that
path is restructured for speed: every case's outcome (the stored object's JSON bytes, the
watch event's bytes, or the error Status with its code) is reduced to a digest, and the
digests of the code before the restructuring are kept in ``write_path_golden.json``.

The corpus: the benchmark's typical pod and a richer pod (init containers, every volume
source, lifecycle hooks, probes of every kind, host network ports, a priority class), each
mutated field by field (removed, null, zero values, wrong types, odd strings); the pod
templates of the hostile corpus ``tests/e2e/bad_specs.py`` created as pods; a few other
kinds; and every mutation of the typical pod sent again as an update of a stored one.

Regenerate the golden file (only from the code whose behaviour is the reference):
``.venv/bin/python -m tests.support.write_path_corpus > tests/unit/envtest/write_path_golden.json``.
"""

from __future__ import annotations

import copy
import hashlib
import json
import sys
from collections.abc import Callable, Iterator
from typing import Any

import orjson

from bench.embedded_server import typical_pod
from kube_runtime.envtest import EmbeddedCluster
from kube_runtime.envtest.server.errors import ApiError
from kube_runtime.envtest.server.resources import ResourceInfo
from kube_runtime.envtest.server.storage import Event, Stored

Obj = dict[str, Any]
Path = tuple[str | int, ...]

NAMESPACE = "corpus"

# Values every field is set to in turn (the field's own value is kept as a further case).
_ODD_VALUES: list[tuple[str, Any]] = [
    ("null", None),
    ("empty-string", ""),
    ("zero", 0),
    ("false", False),
    ("true", True),
    ("empty-list", []),
    ("empty-map", {}),
    ("number", 70000),
    ("negative", -1),
    ("word", "Not_A-Name!"),
    ("spaced", " x "),
    ("float", 1.5),
]


def rich_pod(name: str) -> Obj:
    """A pod using most of what the write path looks at."""
    probe_exec = {"exec": {"command": ["true"]}, "initialDelaySeconds": 1}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "labels": {"a": "b", "example.com/c": "d"},
            "annotations": {"x": ""},
            # no ownerReferences: the embedded garbage collector would delete the pod
            "finalizers": ["example.com/f"],
        },
        "spec": {
            "hostNetwork": True,
            "hostPID": False,
            "hostname": "h",
            "subdomain": "s",
            "nodeName": "",
            "priorityClassName": "system-node-critical",
            "serviceAccount": "legacy",
            "restartPolicy": "OnFailure",
            "activeDeadlineSeconds": 600,
            "dnsPolicy": "",
            "tolerations": [{"operator": "Exists", "effect": "NoExecute"}],
            "initContainers": [
                {
                    "name": "init",
                    "image": "busybox",
                    "command": ["sh", "-c", "true"],
                    "stdin": False,
                    "tty": False,
                    "workingDir": "",
                }
            ],
            "containers": [
                {
                    "name": "main",
                    "image": "example.com/app@sha256:" + "a" * 64,
                    "ports": [
                        {"containerPort": 80},
                        {"name": "udp", "containerPort": 53, "protocol": "UDP"},
                    ],
                    "env": [
                        {"name": "A", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
                        {"name": "B", "valueFrom": {"resourceFieldRef": {"resource": "cpu"}}},
                    ],
                    "resources": {"limits": {"cpu": "1", "memory": "1Gi"}},
                    "livenessProbe": {"grpc": {"port": 9000}},
                    "readinessProbe": {"httpGet": {"port": 80, "path": ""}},
                    "startupProbe": probe_exec,
                    "lifecycle": {
                        "postStart": {"httpGet": {"port": 80}},
                        "preStop": {"exec": {"command": ["stop"]}},
                    },
                    "volumeMounts": [
                        {"name": "v-host", "mountPath": "/a"},
                        {"name": "v-secret", "mountPath": "/b"},
                        {"name": "v-claim", "mountPath": "/c"},
                    ],
                    "stdinOnce": True,
                },
                {"name": "side", "image": "side:latest", "imagePullPolicy": ""},
            ],
            "volumes": [
                {"name": "v-host", "hostPath": {"path": "/tmp"}},
                {"name": "v-secret", "secret": {"secretName": "s"}},
                {"name": "v-claim", "persistentVolumeClaim": {"claimName": "data"}},
                {"name": "v-none"},
                {
                    "name": "v-down",
                    "downwardAPI": {
                        "items": [{"path": "p", "fieldRef": {"fieldPath": "metadata.labels"}}]
                    },
                },
                {
                    "name": "v-proj",
                    "projected": {
                        "sources": [
                            {"serviceAccountToken": {"path": "t"}},
                            {
                                "downwardAPI": {
                                    "items": [
                                        {"path": "n", "fieldRef": {"fieldPath": "metadata.name"}}
                                    ]
                                }
                            },
                        ]
                    },
                },
                {"name": "v-iscsi", "iscsi": {"targetPortal": "1.2.3.4", "iqn": "q", "lun": 0}},
                {"name": "v-rbd", "rbd": {"monitors": ["m"], "image": "i"}},
                {"name": "v-az", "azureDisk": {"diskName": "d", "diskURI": "u"}},
                {"name": "v-sio", "scaleIO": {"gateway": "g", "system": "s", "secretRef": {}}},
                {
                    "name": "v-eph",
                    "ephemeral": {
                        "volumeClaimTemplate": {
                            "spec": {
                                "accessModes": ["ReadWriteOnce"],
                                "resources": {"requests": {"storage": "1Gi"}},
                            }
                        }
                    },
                },
                {"name": "v-cm", "configMap": {"name": "cm", "defaultMode": 0o600}},
                {"name": "v-empty", "emptyDir": {"medium": "Memory"}},
            ],
        },
    }


_ATOMS = frozenset({str, int, float, bool, type(None)})


def json_copy(value: Any, memo: dict[int, Any] | None = None) -> Any:
    """``copy.deepcopy`` of a JSON-like tree, about 3x faster: dicts and lists are copied
    (an object met twice is copied once, as deepcopy does), strings, numbers, booleans and
    None are shared (deepcopy shares them too); anything else goes to deepcopy."""
    kind = type(value)
    if kind in _ATOMS:
        return value
    if memo is None:
        memo = {}
    done = memo.get(id(value))
    if done is not None:
        return done
    if kind is dict:
        copied: Any = {}
        memo[id(value)] = copied
        for key, item in value.items():
            copied[key] = item if type(item) in _ATOMS else json_copy(item, memo)
        return copied
    if kind is list:
        copied = []
        memo[id(value)] = copied
        for item in value:
            copied.append(item if type(item) in _ATOMS else json_copy(item, memo))
        return copied
    return copy.deepcopy(value, memo)


def _paths(node: Any, prefix: Path = ()) -> Iterator[Path]:
    """Every path below ``node`` (maps and lists stepped into), parents first."""
    if isinstance(node, dict):
        for key, value in node.items():
            yield (*prefix, key)
            yield from _paths(value, (*prefix, key))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield (*prefix, i)
            yield from _paths(value, (*prefix, i))


def _mutated(base: Obj, path: Path, value: Any, delete: bool = False) -> Obj:
    obj = json_copy(base)
    node: Any = obj
    for step in path[:-1]:
        node = node[step]
    if delete:
        del node[path[-1]]
    else:
        node[path[-1]] = json_copy(value)
    return obj


_SOME_ODD_VALUES = ("null", "zero", "empty-map", "word")


def mutations(base: Obj, odd: tuple[str, ...] | None = None) -> Iterator[tuple[str, Obj]]:
    """``base`` with each field removed and set to each odd value named in ``odd`` (None:
    all) in turn; metadata.name, apiVersion and kind are left alone (names must stay
    unique)."""
    for path in _paths(base):
        if path in (("metadata",), ("metadata", "name"), ("apiVersion",), ("kind",)):
            continue
        label = ".".join(map(str, path))
        yield f"{label}:delete", _mutated(base, path, None, delete=True)
        for what, value in _ODD_VALUES:
            if odd is None or what in odd:
                yield f"{label}:{what}", _mutated(base, path, value)


def hostile_templates() -> Iterator[tuple[str, Obj]]:
    """The pod templates of the hostile corpus as pods."""
    from tests.e2e.bad_specs import CORPUS, good

    for name, kind, change in CORPUS:
        obj = good(kind, "set", NAMESPACE)
        change(obj["spec"], "set")
        template = obj["spec"].get("template")
        pod: Obj = {"apiVersion": "v1", "kind": "Pod", "metadata": {}}
        if isinstance(template, dict):
            if isinstance(template.get("metadata"), dict):
                pod["metadata"] = dict(template["metadata"])
            if "spec" in template:
                pod["spec"] = template["spec"]
        yield f"{kind.kind}/{name}", pod


def _other_kinds() -> Iterator[tuple[tuple[str, str], Obj]]:
    template = {
        "metadata": {"labels": {"app": "w"}},
        "spec": {"containers": [{"name": "c", "image": "nginx:1", "stdin": False}]},
    }
    selector = {"matchLabels": {"app": "w"}}
    yield ("apps", "deployments"), {"spec": {"selector": selector, "template": template}}
    yield (
        ("apps", "statefulsets"),
        {
            "spec": {
                "selector": selector,
                "serviceName": "w",
                "template": template,
                "volumeClaimTemplates": [
                    {
                        "metadata": {"name": "data"},
                        "spec": {
                            "accessModes": ["ReadWriteOnce"],
                            "resources": {"requests": {"storage": "1Gi"}},
                        },
                    }
                ],
            }
        },
    )
    yield ("apps", "replicasets"), {"spec": {"selector": selector, "template": template}}
    yield ("", "services"), {"spec": {"ports": [{"port": 80}], "selector": {"app": "w"}}}
    yield (
        ("", "persistentvolumeclaims"),
        {"spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1"}}}},
    )
    yield ("", "configmaps"), {"data": {}, "metadata": {"labels": {}}}
    yield ("batch", "jobs"), {"spec": {"template": {**template, "spec": {**template["spec"]}}}}


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:12]


class Recorder:
    """Runs the corpus against one fresh embedded cluster; uids and timestamps are masked."""

    def __init__(self, cluster: EmbeddedCluster) -> None:
        self.cluster = cluster
        self.store = cluster.store
        self.events: list[bytes] = []
        #: Only events of the object written are kept: the embedded garbage collector
        #: writes in the background (it deletes the pods whose owner does not exist).
        self.name = ""
        self.store.add_listener(self._on_event)

    def _on_event(self, event: Event) -> None:
        if event.new.meta.get("name") == self.name:
            self.events.append(event.new.raw)

    def _mask(self, stored: Stored) -> bytes:
        meta = stored.obj["metadata"]
        raw = stored.raw
        for key in ("uid", "creationTimestamp"):
            value = meta.get(key)
            if isinstance(value, str) and value:
                raw = raw.replace(value.encode(), key.upper().encode())
        return raw

    def outcome(self, name: str, write: Callable[[], Stored]) -> str:
        """The digest of one write of object ``name``: stored bytes + the watch events'
        bytes, or the error."""
        self.name = name
        self.events.clear()
        try:
            stored = write()
        except ApiError as e:
            return "error:" + _digest(orjson.dumps([e.code, e.status], option=orjson.OPT_SORT_KEYS))
        except Exception as e:  # malformed input the HTTP layer refuses earlier
            return f"raised:{type(e).__name__}"
        out = self._mask(stored)
        masked_events = [self._mask(Stored.decode(raw)) for raw in self.events]
        return "ok:" + _digest(out + b"\n" + b"\n".join(masked_events))


def run_corpus() -> dict[str, str]:
    """Every case's outcome digest, by case name (cases run in a fixed order)."""
    results: dict[str, str] = {}
    cluster = EmbeddedCluster(kubelet=False, deployments=False)
    with cluster:
        rec = Recorder(cluster)
        store = cluster.store
        store.create(cluster.resource("", "namespaces"), None, {"metadata": {"name": NAMESPACE}})
        pods = cluster.resource("", "pods")
        counter = 0

        def create(info: ResourceInfo, body: Obj, case: str) -> None:
            nonlocal counter
            counter += 1
            body = json_copy(body)
            meta = body.setdefault("metadata", {})
            if isinstance(meta, dict):
                meta["name"] = f"c{counter}"
            results[case] = rec.outcome(f"c{counter}", lambda: store.create(info, NAMESPACE, body))

        create(pods, typical_pod("x"), "pod/typical")
        create(pods, rich_pod("x"), "pod/rich")
        for label, body in mutations(typical_pod("x")):
            create(pods, body, f"pod/typical/{label}")
        for label, body in mutations(rich_pod("x"), _SOME_ODD_VALUES):
            create(pods, body, f"pod/rich/{label}")
        for label, body in hostile_templates():
            create(pods, body, f"pod/hostile/{label}")
        for (group, plural), body in _other_kinds():
            info = cluster.resource(group, plural)
            create(info, body, f"{group}/{plural}")
            for label, changed in mutations(body, ()):
                create(info, changed, f"{group}/{plural}/{label}")
        # updates: each mutation of the typical pod replaces a stored typical pod
        for label, body in mutations(typical_pod("x"), _SOME_ODD_VALUES):
            counter += 1
            name = f"u{counter}"
            base = store.create(pods, NAMESPACE, typical_pod(name))
            body = json_copy(body)
            meta = body.get("metadata")
            if isinstance(meta, dict):
                meta["name"] = name
                meta["resourceVersion"] = base.meta["resourceVersion"]

            def update(body: Obj = body, name: str = name) -> Stored:
                return store.update(pods, NAMESPACE, name, body)

            results[f"update/typical/{label}"] = rec.outcome(name, update)
    return results


def group_of(case: str) -> str:
    """The group a case's digest is folded into: its kind and the first three steps of the
    field it changes (``pod/rich/spec.containers.0``)."""
    *head, last = case.split("/")
    return "/".join([*head, ".".join(last.split(":")[0].split(".")[:3])])


def grouped(results: dict[str, str]) -> dict[str, str]:
    """One digest per :func:`group_of` group (its cases' outcomes in order), and the count."""
    groups: dict[str, list[str]] = {}
    for case, outcome in results.items():
        groups.setdefault(group_of(case), []).append(outcome)
    return {
        group: f"{len(outcomes)}:{_digest(chr(10).join(outcomes).encode())}"
        for group, outcomes in groups.items()
    }


if __name__ == "__main__":
    json.dump(grouped(run_corpus()), sys.stdout, indent=0)
    sys.stdout.write("\n")
