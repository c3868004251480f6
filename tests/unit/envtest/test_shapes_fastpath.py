""":func:`shapes.check_object` decides the usual body with the kind's compiled type at
once; its answers (the error, or none, and the body it leaves) are those of the steps it
skips (the TypeMeta check, then :func:`shapes.mismatch`), over random bodies."""

from __future__ import annotations

import copy
import random
from typing import Any

from kube_runtime.envtest.server import errors, shapes

Obj = dict[str, Any]

_BODIES: list[tuple[str, str, str, Obj]] = [
    (
        "",
        "v1",
        "Pod",
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "p", "labels": {"a": "b"}, "finalizers": ["x"]},
            "spec": {
                "containers": [
                    {
                        "name": "c",
                        "image": "i",
                        "ports": [{"containerPort": 80}],
                        "resources": {"limits": {"cpu": "1"}, "requests": {"memory": "1Mi"}},
                    }
                ],
                "priority": 1,
            },
            "status": {"phase": "Pending"},
        },
    ),
    (
        "coordination.k8s.io",
        "v1",
        "Lease",
        {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {"name": "l", "resourceVersion": "3"},
            "spec": {"holderIdentity": "me", "leaseDurationSeconds": 15, "leaseTransitions": 0},
        },
    ),
    (
        "apps",
        "v1",
        "Deployment",
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "d"},
            "spec": {
                "replicas": 2,
                "selector": {"matchLabels": {"a": "b"}},
                "template": {"metadata": {"labels": {"a": "b"}}, "spec": {"containers": []}},
            },
            "status": {"replicas": 1},
        },
    ),
    ("x.io", "v1", "Widget", {"apiVersion": "x.io/v1", "kind": "Widget", "spec": {"a": 1}}),
]
_VALUES: list[Any] = [None, 0, -1, 2**40, 1.5, True, "", "s", "1Gi", {}, [], {"k": "v"}, [None]]


def _mutate(rng: random.Random, value: Any) -> Any:
    for _ in range(rng.randint(0, 3)):
        target = value
        while True:
            if isinstance(target, dict) and target:
                key = rng.choice(list(target))
                if rng.random() < 0.6 and isinstance(target[key], (dict, list)) and target[key]:
                    target = target[key]
                    continue
                target[key] = copy.deepcopy(rng.choice(_VALUES))
            elif isinstance(target, list) and target:
                i = rng.randrange(len(target))
                if rng.random() < 0.6 and isinstance(target[i], (dict, list)) and target[i]:
                    target = target[i]
                    continue
                target[i] = copy.deepcopy(rng.choice(_VALUES))
            break
    return value


def _outcome(call: Any, *args: Any, **kwargs: Any) -> str | None:
    try:
        call(*args, **kwargs)
    except errors.ApiError as e:
        return f"{e.code} {e}"
    return None


def _steps(group: str, version: str, kind: str, obj: Any, custom: bool, status: bool) -> None:
    """What check_object did before its shortcut."""
    if type(obj) is not dict:
        shapes.check_object(group, version, kind, obj, custom=custom, status=status)
        return
    type_meta = shapes._type_meta_error(kind, obj)
    if type_meta is not None:
        raise type_meta
    found = shapes.mismatch(group, kind, obj, custom=custom, status=status)
    if found is not None:
        raise shapes._bad_request(kind, version, found)


def test_check_object_answers_as_its_steps() -> None:
    rng = random.Random(5)
    checked = 0
    for _ in range(4000):
        group, version, kind, body = rng.choice(_BODIES)
        custom = kind == "Widget"
        status = rng.random() < 0.5
        obj = _mutate(rng, copy.deepcopy(body))
        fast, slow = copy.deepcopy(obj), copy.deepcopy(obj)
        got = _outcome(
            shapes.check_object, group, version, kind, fast, custom=custom, status=status
        )
        expected = _outcome(_steps, group, version, kind, slow, custom, status)
        assert got == expected, obj
        assert fast == slow  # the same nulls replaced
        checked += got is None
    assert 0 < checked < 4000  # both answers were seen
