"""The update path's shortcuts give what the general steps give, over varied inputs:

* field validation of a written update body memoized on the body with its digits zeroed
  (:func:`fieldvalidation._known_written`): the warnings, the dropped fields and the errors
  are those of the walk, for bodies that differ only in digits (keys with digits, declared
  or not, included);
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
import pytest

from kube_runtime.envtest.server import errors
from kube_runtime.envtest.server import fieldmanager as fm
from kube_runtime.envtest.server import fieldvalidation as fv
from kube_runtime.envtest.server.http import Request
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


def _pod(rng: random.Random) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": f"p{rng.randint(0, 99)}", "labels": {"app": f"a{rng.randint(0, 9)}"}},
        "spec": {
            "containers": [
                {
                    "name": "c",
                    "image": f"nginx:1.{rng.randint(0, 99)}",
                    "ports": [{"containerPort": rng.randint(1, 9999)}],
                }
            ]
        },
        "status": {"phase": "Running", "message": f"m{rng.randint(0, 999)}"},
    }


_KEYS = ["fieldsV1", "fieldsV2", "fieldsV0", "spec1", "x9", "renewTime", "holderIdentity", "a1"]


def _vary(rng: random.Random, obj: Any, depth: int = 0) -> Any:
    """``obj`` with some digits changed and now and then a key added (with digits or not)."""
    if isinstance(obj, dict):
        out = {}
        for k, v in obj.items():
            if rng.random() < 0.05:
                k = "".join(str(rng.randint(0, 9)) if c.isdigit() else c for c in k)
            out[k] = _vary(rng, v, depth + 1)
        if rng.random() < 0.08:
            out[rng.choice(_KEYS)] = {} if rng.random() < 0.5 else "v1"
        return out
    if isinstance(obj, list):
        return [_vary(rng, v, depth + 1) for v in obj]
    if isinstance(obj, str):
        return "".join(str(rng.randint(0, 9)) if c.isdigit() else c for c in obj)
    if isinstance(obj, int) and not isinstance(obj, bool):
        return rng.randint(0, 10**6)
    return obj


def _check(info: Any, version: str, kind: str, obj: Obj, mode: str, memo: bool) -> Any:
    target = f"/x?fieldValidation={mode}" if mode else "/x"
    request = Request("PUT", target, {"content-type": "application/json"}, orjson.dumps(obj))
    body = copy.deepcopy(obj)
    written = request.body if memo else None
    try:
        found = fv.check(request, info, version, kind, body, None, written=written)
    except errors.ApiError as e:
        return ("error", e.code, orjson.dumps(e.status))
    return found, orjson.dumps(body)


@pytest.mark.parametrize("kind", ["lease", "pod"])
def test_written_body_memo_gives_the_walks_findings(kind: str) -> None:
    rng = random.Random(31 if kind == "lease" else 32)
    info = LEASES if kind == "lease" else PODS
    make = _lease if kind == "lease" else _pod
    hits = 0
    for _ in range(150):
        base = make(rng)
        for _ in range(8):
            obj = _vary(rng, base)
            mode = rng.choice(["", "Strict", "Warn", "Ignore"])
            before = len(fv._KNOWN_WRITTEN)
            fast = _check(info, "v1", info.kind, obj, mode, memo=True)
            hits += len(fv._KNOWN_WRITTEN) == before and fast[0] == []
            assert fast == _check(info, "v1", info.kind, obj, mode, memo=False), obj
    assert hits > 300  # the memo answered often, not only the walk


def test_digit_keys_are_told_apart_from_their_zeroed_forms() -> None:
    root = fv._builtin_root(LEASES, "v1", "Lease")
    assert root is not None
    assert fv._digit_keys(root) == ((b'"fieldsV1":', b'"fieldsV0":'),)
    known = _lease(random.Random(1))
    assert _check(LEASES, "v1", "Lease", known, "Strict", memo=True) == ([], orjson.dumps(known))
    for other in ("fieldsV2", "fieldsV0"):  # the declared key's digit variants are unknown
        bad = copy.deepcopy(known)
        entry = bad["metadata"]["managedFields"][0]
        entry[other] = entry.pop("fieldsV1")
        assert _check(LEASES, "v1", "Lease", bad, "Strict", memo=True)[0] == "error"


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
