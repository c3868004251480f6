"""An Update by the object's sole manager takes a shortcut that gives the generic result.

:func:`fieldmanager.update_managed_fields` skips decoding, taking over and encoding when
the writer's own Update entry (same apiVersion and subresource) is the only one, the
entry's new set computed by :func:`fieldmanager._own_update` (memoized). Chains of random
writes (leaf edits, added and removed fields, other managers, Apply entries, other
apiVersions, subresources, echoed or absent managedFields) run through the shortcut and
through the generic steps (the shortcut disabled) and must store the same managedFields,
byte for byte (entry order, times, fieldsV1 order).
"""

from __future__ import annotations

import copy
import itertools
import random
from typing import Any

import orjson
import pytest

from kube_runtime.envtest.server import fieldmanager as fm
from kube_runtime.envtest.server.resources import ResourceInfo
from tests.unit.envtest.test_fieldmanager_fastpaths import LEASES, PODS, _mutate, _pod

Obj = dict[str, Any]
_TIMES = ["2026-01-01T00:00:00Z", "2026-01-01T00:00:01Z", "2026-01-01T00:00:02Z"]


def _lease(rng: random.Random) -> Obj:
    spec = {
        "holderIdentity": rng.choice(["a", "b"]),
        "leaseDurationSeconds": 15,
        "acquireTime": "2026-01-01T00:00:00.000000Z",
        "renewTime": "2026-01-01T00:00:00.000000Z",
        "leaseTransitions": rng.randint(0, 2),
    }
    for k in rng.sample(list(spec), rng.randint(0, 2)):
        del spec[k]
    return {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {"name": "l", "namespace": "n", "resourceVersion": "1"},
        "spec": spec,
    }


def _edit_lease(rng: random.Random, obj: Obj) -> Obj:
    new = copy.deepcopy(obj)
    spec = new.setdefault("spec", {})
    for _ in range(rng.randint(0, 3)):
        action = rng.random()
        key = rng.choice(["holderIdentity", "renewTime", "acquireTime", "leaseTransitions"])
        if action < 0.6:  # mostly a renewal: a leaf's value
            spec[key] = rng.choice(["a", "b", str(rng.randint(0, 9)), rng.randint(0, 3)])
        elif action < 0.75:
            spec.pop(key, None)
        elif action < 0.9:
            new["metadata"].setdefault("labels", {})[rng.choice("xy")] = rng.choice("01")
        else:
            new["metadata"].pop("labels", None)
    return new


def _subset(rng: random.Random, fields: Obj) -> Obj:
    """A random part of a field set, as another manager could own it."""
    out: Obj = {}
    for pe, node in fields.items():
        if rng.random() < 0.5:
            continue
        out[pe] = _subset(rng, node) if node and rng.random() < 0.5 else node
        if not out[pe] and node:
            out[pe] = node
    return out


def _other_entry(rng: random.Random, obj: Obj, info: ResourceInfo) -> Obj | None:
    fields = _subset(rng, fm.field_set(obj, fm.schema_for(info)))
    if not fields:
        return None
    op = rng.choice(["Apply", "Update"])
    key = (
        rng.choice(["w", "other"]),
        op,
        "" if op == "Apply" else rng.choice(["v1", "v2"]),
        rng.choice(["", "", "status"]),
    )
    return fm._entry(key, rng.choice(["v1", "v2"]), rng.choice(_TIMES), fields)


def _write(info: ResourceInfo, old: Obj, new: Obj, manager: str, version: str, sub: str) -> Obj:
    stamps = itertools.count()
    written = copy.deepcopy(new)
    fm.update_managed_fields(
        info, old, written, manager, version, sub, lambda: f"2026-01-02T00:00:{next(stamps):02d}Z"
    )
    return written


@pytest.mark.parametrize("kind", ["lease", "pod"])
def test_sole_manager_update_matches_the_generic_steps(
    kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = random.Random(28 if kind == "lease" else 29)
    info = LEASES if kind == "lease" else PODS
    assert info is not None
    make = _lease if kind == "lease" else _pod
    shortcuts = 0
    for _ in range(60):
        obj = make(rng)
        obj["metadata"].pop("managedFields", None)
        fm.update_managed_fields(info, None, obj, "w", "v1", "", lambda: _TIMES[0])
        for _ in range(12):
            if kind == "lease":
                new = _edit_lease(rng, obj)
            else:
                new = _mutate(rng, obj)
                if not isinstance(new.get("metadata"), dict):
                    new["metadata"] = {}
            live = obj["metadata"].get("managedFields")
            if rng.random() < 0.15:  # another manager or an Apply entry beside the writer's
                extra = _other_entry(rng, obj, info)
                if extra is not None:
                    obj = copy.deepcopy(obj)
                    obj["metadata"]["managedFields"] = [*(live or []), extra]
                    live = obj["metadata"]["managedFields"]
            choice = rng.random()
            if choice < 0.5 and live is not None:  # echoed back unchanged
                new["metadata"]["managedFields"] = copy.deepcopy(live)
            elif choice < 0.8:
                new["metadata"].pop("managedFields", None)
            manager = "w" if rng.random() < 0.8 else "other"
            version = "v1" if rng.random() < 0.85 else "v2"
            sub = "" if rng.random() < 0.85 else "status"

            with monkeypatch.context() as m:
                m.setattr(fm, "_sole_entry", lambda live, key: None)
                generic = _write(info, obj, new, manager, version, sub)
            fast = _write(info, obj, new, manager, version, sub)
            expected = orjson.dumps(generic["metadata"].get("managedFields"))
            assert orjson.dumps(fast["metadata"].get("managedFields")) == expected
            only = fm._sole_entry(live, (manager, "Update", version, sub))
            shortcuts += only is not None
            obj = fast
    assert shortcuts > 100  # the shortcut was taken often, not only the generic steps


def test_own_update_is_the_union_of_the_changed_paths_and_the_rest() -> None:
    rng = random.Random(7)
    pes = ["f:a", "f:b", "f:c", 'k:{"name":"x"}', "."]

    def fields(depth: int) -> Obj:
        out: Obj = {}
        for pe in rng.sample(pes, rng.randint(0, 3)):
            out[pe] = fields(depth + 1) if depth < 2 and pe != "." and rng.random() < 0.5 else {}
        return out

    for _ in range(3000):
        only = fields(0)
        changed = _subset(rng, only) if rng.random() < 0.7 else fields(0)
        if rng.random() < 0.5:  # the changed paths first: a renewal's usual entry
            only = fm.union(changed, fm.diff(only, changed))
        expected = orjson.dumps(fm.union(changed, fm.diff(only, changed)))
        assert orjson.dumps(fm._own_update(only, changed)) == expected
        assert orjson.dumps(fm._own_update(only, changed)) == expected  # the memoized result
