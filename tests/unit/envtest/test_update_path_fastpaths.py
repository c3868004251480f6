"""The update path's shortcuts give what the general steps give, over varied inputs:

* the field manager's sole-entry shortcuts told by identity (:func:`fieldmanager._sole_entry`
  of a list it made, :func:`fieldmanager._own_update` of a set it gave): the managedFields of
  a chain of renewals are those of the lookups by content;
* :func:`fieldmanager.compare` without the key-view comparison: the sets of the reference
  walk (the same members in the same order) when keys come and go.
"""

from __future__ import annotations

import copy
import random
from typing import Any

import orjson

from kube_runtime.envtest.server import fieldmanager as fm
from kube_runtime.envtest.server.resources import SERVED_BUILTINS

Obj = dict[str, Any]

LEASES = next(r for r in SERVED_BUILTINS if r.plural == "leases")
PODS = next(r for r in SERVED_BUILTINS if r.plural == "pods")


def _lease(rng: random.Random) -> Obj:
    digits = lambda: str(rng.randint(0, 10 ** rng.randint(1, 6)))  # noqa: E731
    return {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {
            "name": "l" + digits(),
            "namespace": "ns",
            "resourceVersion": digits(),
            "managedFields": [
                {
                    "manager": "m",
                    "operation": "Update",
                    "apiVersion": "coordination.k8s.io/v1",
                    "time": f"2026-01-01T00:00:{rng.randint(10, 59)}Z",
                    "fieldsType": "FieldsV1",
                    "fieldsV1": {"f:spec": {"f:renewTime": {}, "f:holderIdentity": {}}},
                }
            ],
            "annotations": {"a" + digits(): digits()},
        },
        "spec": {
            "holderIdentity": "h" + digits(),
            "leaseDurationSeconds": rng.randint(1, 99),
            "renewTime": f"2026-01-01T00:00:{rng.randint(10, 59)}.{digits()}Z",
        },
    }


def _renew(rng: random.Random, obj: Obj) -> Obj:
    new = orjson.loads(orjson.dumps(obj))  # what a client sends back, its entries echoed
    spec = new["spec"]
    choice = rng.random()
    if choice < 0.7:
        spec["renewTime"] = f"2026-01-01T00:{rng.randint(10, 59)}:00.{rng.randint(0, 9**6)}Z"
    elif choice < 0.8:
        spec["holderIdentity"] = f"h{rng.randint(0, 3)}"
    elif choice < 0.9:
        spec.pop("leaseDurationSeconds", None)
    else:
        spec["leaseTransitions"] = rng.randint(0, 3)
    if rng.random() < 0.1:
        new["metadata"].pop("managedFields", None)
    return new


def _chain(seed: int, fresh: bool) -> list[bytes]:
    """A chain of renewals' managedFields; ``fresh``: the identity tables emptied before
    each write (every look-up by content)."""
    rng = random.Random(seed)
    obj = _lease(rng)
    obj["metadata"].pop("managedFields")
    times = iter(f"2026-01-01T01:{i // 60:02d}:{i % 60:02d}Z" for i in range(10**4))
    now = lambda: next(times)  # noqa: E731
    fm.update_managed_fields(LEASES, None, obj, "w", "coordination.k8s.io/v1", "", now)
    out = []
    for _ in range(300):
        new = _renew(rng, obj)
        manager = "w" if rng.random() < 0.9 else "other"
        if fresh:
            fm._sole_lists.clear()
            fm._own_by_id.clear()
        fm.update_managed_fields(LEASES, obj, new, manager, "coordination.k8s.io/v1", "", now)
        out.append(orjson.dumps(new["metadata"].get("managedFields")))
        obj = new
    return out


def test_sole_entry_by_identity_gives_the_entries_by_content() -> None:
    for seed in range(6):
        fm._sole_lists.clear()
        fm._own_by_id.clear()
        fast = _chain(seed, fresh=False)
        assert len(fm._own_by_id) > 0  # looked up by identity
        assert fast == _chain(seed, fresh=True)


def _reference_children(
    old: Any, new: Any, node: fm.FNode, added: Obj, modified: Obj, removed: Obj
) -> None:
    """The walk as it was written before (the key views compared), for dicts."""
    fields, default = node.fields, node.default
    for k, ov in old.items():
        nv = new.get(k, fm._MISSING)
        if ov is nv or (type(ov) is type(nv) and ov == nv):
            continue
        child = fields.get(k, default)
        if child.kind == fm.IGNORE:
            continue
        if nv is fm._MISSING:
            removed["f:" + k] = fm._all(ov, child)
        else:
            fm._cmp_value(ov, nv, child, "f:" + k, added, modified, removed)
    if new.keys() != old.keys():
        for k, nv in new.items():
            if k not in old:
                child = fields.get(k, default)
                if child.kind != fm.IGNORE:
                    added["f:" + k] = fm._all(nv, child)


def test_compare_without_key_views_gives_the_reference_sets() -> None:
    rng = random.Random(5)
    node = fm.schema_for(PODS)
    keys = ["metadata", "spec", "status", "apiVersion", "kind", "extra", "x"]
    for _ in range(3000):
        old = {k: {"a": rng.randint(0, 2)} for k in rng.sample(keys, rng.randint(0, 6))}
        new = {k: {"a": rng.randint(0, 2)} for k in rng.sample(keys, rng.randint(0, 6))}
        if rng.random() < 0.3:
            new = {**old, **new}
        got: tuple[Obj, Obj, Obj] = ({}, {}, {})
        fm._cmp_children(old, new, node, *got)
        want: tuple[Obj, Obj, Obj] = ({}, {}, {})
        _reference_children(old, new, node, *want)
        assert [orjson.dumps(s) for s in got] == [orjson.dumps(s) for s in want]


def test_an_echoed_reset_clears_as_a_reset_does() -> None:
    """Entries equal to live ones that are themselves a reset (``[]``, ``[{}]``, stored by a
    writer that bypassed the field manager) give what the other reset form gives."""
    rng = random.Random(9)
    for _ in range(200):
        old = _lease(rng)
        live_form, other = rng.choice([([], [{}]), ([{}], [])])
        old["metadata"]["managedFields"] = live_form
        new = _renew(rng, old)
        results = []
        for sent in (live_form, copy.deepcopy(live_form), other):
            written = copy.deepcopy(new)
            written["metadata"]["managedFields"] = sent
            now = lambda: "2026-01-01T02:00:00Z"  # noqa: E731
            fm.update_managed_fields(LEASES, old, written, "w", "coordination.k8s.io/v1", "", now)
            results.append(orjson.dumps(written["metadata"].get("managedFields")))
        assert results[0] == results[1] == results[2]
