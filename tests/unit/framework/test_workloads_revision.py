"""Revision history: hashing, naming, patch/apply, equality, ordering, and the API helpers
(create with collisions, rollback, truncation) against an in-memory fake client."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kube_runtime.client.errors import error_from_status
from kube_runtime.kinds import ControllerRevision, Kind
from kube_runtime.workloads.revision import (
    HASH_LABEL,
    POD_REVISION_LABEL,
    TooManyCollisionsError,
    apply_revision,
    create_revision,
    equal_revision,
    find_equal_revisions,
    go_json,
    hash_revision,
    list_revisions,
    new_revision,
    next_revision_number,
    pod_revision,
    resolve_revisions,
    revision_from_object,
    revision_name,
    revision_patch,
    revision_view,
    safe_encode,
    sort_revisions,
    truncate_history,
    update_revision_number,
)
from kube_runtime.workloads.revision import _fnv1_32 as fnv1_32

STS = Kind("apps/v1", "StatefulSet")


def error(code: int, reason: str, message: str = "") -> Exception:
    return error_from_status(
        {"kind": "Status", "code": code, "reason": reason, "message": message or reason}
    )


class FakeClient:
    """Just enough of Client for the revision helpers: an in-memory store with
    AlreadyExists / NotFound / resourceVersion conflicts, recording every call."""

    def __init__(self) -> None:
        self.objects: dict[tuple[str, str | None, str], dict[str, Any]] = {}
        self.calls: list[tuple[str, str]] = []
        self.conflicts_on_update = 0
        self.rv = 0

    def _key(self, kind: Any, namespace: str | None, name: str) -> tuple[str, str | None, str]:
        return str(kind if isinstance(kind, Kind) else Kind.of(kind)), namespace, name

    def create(self, obj: dict[str, Any]) -> dict[str, Any]:
        meta = obj["metadata"]
        self.calls.append(("create", meta["name"]))
        key = self._key(obj, meta.get("namespace"), meta["name"])
        if key in self.objects:
            raise error(409, "AlreadyExists")
        self.rv += 1
        stored = copy.deepcopy(obj)
        stored["metadata"]["resourceVersion"] = str(self.rv)
        stored["metadata"].setdefault("uid", f"uid-{self.rv}")
        stored["metadata"].setdefault("creationTimestamp", f"2024-01-01T00:00:{self.rv % 60:02d}Z")
        self.objects[key] = stored
        return copy.deepcopy(stored)

    def get(self, kind: Any, name: str, namespace: str | None = None) -> dict[str, Any]:
        self.calls.append(("get", name))
        try:
            return copy.deepcopy(self.objects[self._key(kind, namespace, name)])
        except KeyError:
            raise error(404, "NotFound") from None

    def update(self, obj: dict[str, Any]) -> dict[str, Any]:
        meta = obj["metadata"]
        self.calls.append(("update", meta["name"]))
        key = self._key(obj, meta.get("namespace"), meta["name"])
        current = self.objects.get(key)
        if current is None:
            raise error(404, "NotFound")
        if self.conflicts_on_update > 0:
            self.conflicts_on_update -= 1
            self.rv += 1
            current["metadata"]["resourceVersion"] = str(self.rv)  # somebody else wrote
            raise error(409, "Conflict")
        if meta.get("resourceVersion") != current["metadata"]["resourceVersion"]:
            raise error(409, "Conflict")
        self.rv += 1
        stored = copy.deepcopy(obj)
        stored["metadata"]["resourceVersion"] = str(self.rv)
        self.objects[key] = stored
        return copy.deepcopy(stored)

    def delete(self, kind: Any, name: str, namespace: str | None = None) -> dict[str, Any]:
        self.calls.append(("delete", name))
        try:
            return self.objects.pop(self._key(kind, namespace, name))
        except KeyError:
            raise error(404, "NotFound") from None

    def list(
        self, kind: Any, namespace: str | None = None, *, label_selector: Any = None
    ) -> dict[str, Any]:
        self.calls.append(("list", str(label_selector)))
        self.last_selector = label_selector
        items = [
            copy.deepcopy(o)
            for (k, ns, _), o in self.objects.items()
            if k == str(kind) and ns == namespace
        ]
        return {"items": items}


def statefulset(
    name: str = "web", image: str = "nginx:1", uid: str = "set-uid", **status: Any
) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": name, "namespace": "ns", "uid": uid, "annotations": {"note": "x"}},
        "spec": {
            "replicas": 3,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "c", "image": image}]},
            },
        },
        "status": dict(status),
    }


# --- encoding and hashing ------------------------------------------------------------------


def test_fnv1_32_known_vectors() -> None:
    # FNV-1 (not 1a), as Go's fnv.New32 that upstream uses
    assert fnv1_32(b"") == 0x811C9DC5
    assert fnv1_32(b"a") == 0x050C5D7E
    assert fnv1_32(b"foobar") == 0x31F0B262


def test_safe_encode_maps_digits_onto_the_safe_alphabet() -> None:
    assert safe_encode("0123456789") == "456789bcdf"
    assert safe_encode("") == ""


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ({"b": 1, "a": [1, 2.0, None, True]}, b'{"a":[1,2,null,true],"b":1}'),
        ({"s": "<a&b>"}, b'{"s":"\\u003ca\\u0026b\\u003e"}'),
        ({"u": "\u00e9\u2028"}, '{"u":"\u00e9\\u2028"}'.encode()),
        ({"$patch": "replace", "a": {}}, b'{"$patch":"replace","a":{}}'),
    ],
)
def test_go_json_matches_go_marshal(value: Any, expected: bytes) -> None:
    assert go_json(value) == expected


def test_hash_is_deterministic_short_and_depends_on_data_and_collision_count() -> None:
    a = {"data": {"spec": {"template": {"x": 1}}}}
    b = {"data": {"spec": {"template": {"x": 2}}}}
    assert hash_revision(a, 0) == hash_revision(copy.deepcopy(a), 0)
    assert hash_revision(a, 0) != hash_revision(b, 0)
    assert hash_revision(a, 0) != hash_revision(a, 1)
    assert hash_revision(a) != hash_revision(a, 0)  # no probe vs probe "0"
    for h in (hash_revision(a), hash_revision(b, 7)):
        assert 1 <= len(h) <= 10 and set(h) <= set("456789bcdf")
    # key order does not matter (Go sorts map keys)
    assert hash_revision({"data": {"a": 1, "b": 2}}) == hash_revision({"data": {"b": 2, "a": 1}})


@pytest.mark.parametrize(
    "data",
    [
        {"spec": {"template": {"x": 1, "a": [1, 2.5, None, "<&>"]}}},
        {"x": 1.0},  # prints as 1 in Go: the memo must not keep orjson's "1.0" form
        {1: "non-string key"},  # orjson refuses: encoded directly
        {"big": 2**70},  # beyond 64 bits: orjson refuses, encoded directly
        [],
        None,
    ],
)
def test_memoized_encoding_agrees_with_the_direct_one(data: Any) -> None:
    direct = fnv1_32(go_json(data))
    for _ in range(2):  # the first call fills the memo, the second reads it
        assert hash_revision({"data": data}) == safe_encode(str(direct))
        assert equal_revision({"data": data}, {"data": copy.deepcopy(data)})


def test_memo_is_bounded_and_forgets_oldest_first() -> None:
    from kube_runtime.workloads import revision as module

    first = {"n": -1}
    hash_revision({"data": first})
    for n in range(module._ENCODED_MAX):
        hash_revision({"data": {"n": n}})
    assert len(module._encoded) <= module._ENCODED_MAX
    assert b'{"n":-1}' not in module._encoded
    # forgotten entries are recomputed, equal to before
    assert hash_revision({"data": first}) == safe_encode(str(fnv1_32(go_json(first))))


def test_revision_name_cuts_long_prefixes() -> None:
    assert revision_name("web", "abc") == "web-abc"
    assert revision_name("x" * 300, "h") == "x" * 223 + "-h"


# --- patch / apply -------------------------------------------------------------------------


def test_revision_patch_records_the_template_as_replace() -> None:
    sts = statefulset()
    patch = revision_patch(sts)
    assert patch == {"spec": {"template": {**sts["spec"]["template"], "$patch": "replace"}}}
    assert "$patch" not in sts["spec"]["template"]  # input untouched
    patch["spec"]["template"]["metadata"]["labels"]["app"] = "changed"
    assert sts["spec"]["template"]["metadata"]["labels"]["app"] == "web"  # deep copy


def test_revision_patch_paths_lists_scalars_and_missing() -> None:
    obj = {"spec": {"a": [1, 2], "b": 3, "template": {"t": 1}}}
    assert revision_patch(obj, ("spec.a", "spec.b", "spec.missing", "spec.template")) == {
        "spec": {"a": [1, 2], "b": 3, "missing": None, "template": {"t": 1, "$patch": "replace"}}
    }


def test_apply_revision_restores_the_template_without_mutating() -> None:
    old = statefulset(image="nginx:1")
    old["spec"]["template"]["spec"]["nodeSelector"] = {"disk": "ssd"}
    revision = new_revision(old, revision_patch(old), 1, 0, controller_kind=STS)
    new = statefulset(image="nginx:2")
    new["spec"]["template"]["metadata"]["annotations"] = {"added": "later"}
    new["spec"]["replicas"] = 7
    frozen = copy.deepcopy(new)
    restored = apply_revision(new, revision)
    assert new == frozen
    assert (
        restored["spec"]["template"] == old["spec"]["template"]
    )  # replaced whole: annotation gone
    assert restored["spec"]["replicas"] == 7  # everything else kept
    assert restored["metadata"] == new["metadata"]
    restored["spec"]["template"]["spec"]["containers"][0]["image"] = "mutated"
    assert revision["data"]["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:1"


@pytest.mark.parametrize(
    ("obj", "data", "expected"),
    [
        ({"a": {"x": 1, "y": 2}}, {"a": {"x": 3}}, {"a": {"x": 3, "y": 2}}),  # maps merge
        ({"a": {"x": 1, "y": 2}}, {"a": {"x": 3, "$patch": "replace"}}, {"a": {"x": 3}}),
        ({"a": {"x": 1}, "b": 1}, {"a": {"$patch": "delete"}}, {"b": 1}),
        ({"a": 1, "b": 2}, {"a": None}, {"b": 2}),
        ({"a": [1, 2, 3]}, {"a": [9]}, {"a": [9]}),  # lists replace
        ({}, {"a": {"b": {"$patch": "replace", "c": 1}}}, {"a": {"b": {"c": 1}}}),
        ({"a": 5}, {"a": {"b": 1}}, {"a": {"b": 1}}),
    ],
)
def test_apply_revision_patch_rules(
    obj: dict[str, Any], data: dict[str, Any], expected: dict[str, Any]
) -> None:
    assert apply_revision(obj, {"data": data}) == expected


@pytest.mark.parametrize(
    "data",
    [
        {"a": {"$patch": "merge"}},
        {"a": {"$setElementOrder/containers": []}},
        {"$retainKeys": ["a"]},
        "not an object",
        None,
    ],
)
def test_apply_revision_rejects_what_it_cannot_apply(data: Any) -> None:
    with pytest.raises(ValueError):
        apply_revision({"a": {}}, {"metadata": {"name": "r"}, "data": data})


# --- new_revision / equality / ordering ----------------------------------------------------


def test_new_revision_fields() -> None:
    sts = statefulset()
    data = revision_patch(sts)
    rev = new_revision(
        sts, data, 4, 2, controller_kind=STS, template_labels={"app": "web"}, annotations={"a": "b"}
    )
    h = hash_revision({"data": data}, 2)
    assert rev["apiVersion"] == "apps/v1" and rev["kind"] == "ControllerRevision"
    assert rev["metadata"]["name"] == f"web-{h}"
    assert rev["metadata"]["namespace"] == "ns"
    assert rev["metadata"]["labels"] == {"app": "web", HASH_LABEL: h}
    assert rev["metadata"]["annotations"] == {"a": "b"}
    assert rev["metadata"]["ownerReferences"] == [
        {
            "apiVersion": "apps/v1",
            "kind": "StatefulSet",
            "name": "web",
            "uid": "set-uid",
            "controller": True,
            "blockOwnerDeletion": True,
        }
    ]
    assert rev["revision"] == 4 and rev["data"] == data and rev["data"] is not data


def test_new_revision_kind_defaults_to_the_parent_and_needs_a_uid() -> None:
    rev = new_revision(statefulset(), {}, 1)
    assert rev["metadata"]["ownerReferences"][0]["kind"] == "StatefulSet"
    bare = statefulset()
    del bare["metadata"]["uid"]
    with pytest.raises(ValueError, match="uid"):
        new_revision(bare, {}, 1)


def test_revision_from_object_uses_template_labels_and_parent_annotations() -> None:
    sts = statefulset()
    rev = revision_from_object(sts, 2, 0)
    assert rev["data"] == revision_patch(sts)
    assert rev["metadata"]["labels"]["app"] == "web"
    assert rev["metadata"]["annotations"] == {"note": "x"}
    assert rev["revision"] == 2


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        (None, None, True),
        ({"data": {"x": 1}}, None, False),
        (None, {"data": {"x": 1}}, False),
        ({"data": {"x": 1}}, {"data": {"x": 1}}, True),
        ({"data": {"x": 1, "y": 2}}, {"data": {"y": 2, "x": 1}}, True),
        ({"data": {"x": 1}}, {"data": {"x": 1.0}}, True),  # same JSON number
        ({"data": {"x": 1}}, {"data": {"x": True}}, False),  # Python's 1 == True is not JSON's
        ({"data": {"x": 1}}, {"data": {"x": 2}}, False),
        # hash labels and names do not decide: data does (collision-bumped names, same data)
        (
            {"metadata": {"name": "a", "labels": {HASH_LABEL: "4"}}, "data": {"x": 1}},
            {"metadata": {"name": "b", "labels": {HASH_LABEL: "5"}}, "data": {"x": 1}},
            True,
        ),
    ],
)
def test_equal_revision(a: Any, b: Any, expected: bool) -> None:
    assert equal_revision(a, b) is expected


def test_find_equal_revisions_keeps_order() -> None:
    revs = [{"n": 1, "data": {"x": 1}}, {"n": 2, "data": {"x": 2}}, {"n": 3, "data": {"x": 1}}]
    assert [r["n"] for r in find_equal_revisions(revs, {"data": {"x": 1}})] == [1, 3]
    assert find_equal_revisions(revs, {"data": {"x": 9}}) == []


def rev(name: str, number: int, created: str | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": "ns"}
    if created:
        meta["creationTimestamp"] = created
    return {
        "apiVersion": "apps/v1",
        "kind": "ControllerRevision",
        "metadata": meta,
        "revision": number,
        "data": {"name": name},
    }


def test_sort_revisions_by_number_then_time_then_name() -> None:
    revs = [
        rev("d", 3),
        rev("c", 2, "2024-01-01T00:00:05Z"),
        rev("b", 2, "2024-01-01T00:00:01Z"),
        rev("a2", 2, "2024-01-01T00:00:05Z"),
        rev("z", 1),
    ]
    assert [r["metadata"]["name"] for r in sort_revisions(revs)] == ["z", "b", "a2", "c", "d"]


@pytest.mark.parametrize(("numbers", "expected"), [([], 1), ([1], 2), ([3, 1, 2], 4), ([5, 2], 6)])
def test_next_revision_number(numbers: list[int], expected: int) -> None:
    assert next_revision_number([rev(str(n), n) for n in numbers]) == expected


def test_pod_revision() -> None:
    assert pod_revision({"metadata": {"labels": {POD_REVISION_LABEL: "web-abc"}}}) == "web-abc"
    assert pod_revision({"metadata": {}}) == ""


# --- create with collisions ----------------------------------------------------------------


def test_create_revision_plain() -> None:
    client, sts = FakeClient(), statefulset()
    revision = revision_from_object(sts, 1, 0)
    created, count = create_revision(client, sts, revision, 0)
    assert count == 0
    assert created["metadata"]["name"] == revision["metadata"]["name"]
    assert client.calls == [("create", revision["metadata"]["name"])]


def test_create_revision_existing_with_equal_data_is_returned() -> None:
    client, sts = FakeClient(), statefulset()
    revision = revision_from_object(sts, 1, 0)
    first, _ = create_revision(client, sts, revision, 0)
    again, count = create_revision(client, sts, revision, 0)
    assert count == 0 and again == first


def test_create_revision_collision_with_different_data_bumps_the_count() -> None:
    client, sts = FakeClient(), statefulset()
    revision = revision_from_object(sts, 1, 0)
    squatter = copy.deepcopy(revision)
    squatter["data"] = {"something": "else"}
    client.create(squatter)  # same name, different data
    created, count = create_revision(client, sts, revision, 0)
    assert count == 1
    expected_hash = hash_revision(revision, 1)
    assert created["metadata"]["name"] == f"web-{expected_hash}"
    assert created["metadata"]["labels"][HASH_LABEL] == expected_hash
    assert created["data"] == revision["data"]
    assert revision["metadata"]["name"] != created["metadata"]["name"]  # input untouched


def test_create_revision_gives_up_eventually() -> None:
    class AlwaysTaken(FakeClient):
        def create(self, obj: dict[str, Any]) -> dict[str, Any]:
            raise error(409, "AlreadyExists")

        def get(self, kind: Any, name: str, namespace: str | None = None) -> dict[str, Any]:
            return {"metadata": {"name": name}, "data": {"other": 1}}

    with pytest.raises(TooManyCollisionsError):
        create_revision(AlwaysTaken(), statefulset(), revision_from_object(statefulset(), 1, 0), 0)


def test_create_revision_other_errors_propagate() -> None:
    class Forbidden(FakeClient):
        def create(self, obj: dict[str, Any]) -> dict[str, Any]:
            raise error(403, "Forbidden")

    with pytest.raises(Exception, match="Forbidden"):
        create_revision(Forbidden(), statefulset(), revision_from_object(statefulset(), 1, 0), 0)


# --- rollback ------------------------------------------------------------------------------


def test_update_revision_number_writes_once_and_is_a_noop_when_equal() -> None:
    client, sts = FakeClient(), statefulset()
    created, _ = create_revision(client, sts, revision_from_object(sts, 1, 0), 0)
    updated = update_revision_number(client, created, 5)
    assert updated["revision"] == 5
    assert (
        client.objects[("apps/v1/ControllerRevision", "ns", created["metadata"]["name"])][
            "revision"
        ]
        == 5
    )
    client.calls.clear()
    assert update_revision_number(client, updated, 5)["revision"] == 5
    assert client.calls == []


def test_update_revision_number_retries_conflicts_with_a_fresh_read() -> None:
    client, sts = FakeClient(), statefulset()
    created, _ = create_revision(client, sts, revision_from_object(sts, 1, 0), 0)
    client.conflicts_on_update = 2
    client.calls.clear()
    updated = update_revision_number(client, created, 3)
    assert updated["revision"] == 3
    assert [c[0] for c in client.calls] == ["update", "get", "update", "get", "update"]


def test_update_revision_number_with_stale_copy_rereads() -> None:
    client, sts = FakeClient(), statefulset()
    created, _ = create_revision(client, sts, revision_from_object(sts, 1, 0), 0)
    stale = copy.deepcopy(created)
    stale["metadata"]["resourceVersion"] = "0"
    assert update_revision_number(client, stale, 2)["revision"] == 2


# --- list / resolve ------------------------------------------------------------------------


def test_list_revisions_keeps_owned_and_orphans_sorted() -> None:
    client, sts = FakeClient(), statefulset()
    mine = revision_from_object(sts, 2, 0)
    orphan = revision_from_object(statefulset(image="nginx:0"), 1, 0)
    del orphan["metadata"]["ownerReferences"]
    theirs = revision_from_object(statefulset(image="other", uid="other-uid"), 3, 0)
    not_controller = revision_from_object(statefulset(image="nc", uid="other-uid"), 4, 0)
    not_controller["metadata"]["ownerReferences"][0]["controller"] = False
    for r in (mine, orphan, theirs, not_controller):
        client.create(r)
    listed = list_revisions(client, sts)
    assert [r["revision"] for r in listed] == [1, 2, 4]
    assert client.last_selector == "app=web"


@pytest.mark.parametrize(
    ("selector", "text"),
    [
        ({"matchLabels": {"app": "web", "tier": "db"}}, "app=web,tier=db"),
        (
            {"matchExpressions": [{"key": "app", "operator": "In", "values": ["a", "b"]}]},
            "app in (a,b)",
        ),
        ({"app": "web"}, "app=web"),
        ("app=web", "app=web"),
        ({}, None),
    ],
)
def test_list_revisions_selector_forms(selector: Any, text: str | None) -> None:
    client = FakeClient()
    list_revisions(client, statefulset(), selector)
    assert client.last_selector == text


def test_list_revisions_accepts_a_cache_returning_a_list() -> None:
    class Cache:
        def list(
            self, kind: Any, namespace: str | None = None, *, label_selector: Any = None
        ) -> list[dict[str, Any]]:
            assert kind == ControllerRevision and namespace == "ns"
            return [revision_from_object(statefulset(), 1, 0)]

    assert len(list_revisions(Cache(), statefulset())) == 1


def test_resolve_revisions_initial_unchanged_update_and_rollback() -> None:
    client = FakeClient()
    v1 = statefulset(image="nginx:1")
    # 1. no history: the update revision is created and is also current
    current, update, count = resolve_revisions(client, v1, [])
    assert current is update and update["revision"] == 1 and count == 0
    history = list_revisions(client, v1)
    # 2. unchanged spec: the newest revision is reused, nothing written
    client.calls.clear()
    _, same, _ = resolve_revisions(
        client, {**v1, "status": {"currentRevision": update["metadata"]["name"]}}, history
    )
    assert same["metadata"]["name"] == update["metadata"]["name"] and client.calls == []
    # 3. new template: revision 2 created; current stays revision 1
    v2 = statefulset(image="nginx:2", currentRevision=update["metadata"]["name"])
    current, update2, _ = resolve_revisions(client, v2, list_revisions(client, v2))
    assert current["revision"] == 1 and update2["revision"] == 2
    # 4. back to the first template: rollback gives revision 1's object number 3, no new object
    back = statefulset(image="nginx:1", currentRevision=update2["metadata"]["name"])
    before = set(client.objects)
    current, rolled, _ = resolve_revisions(client, back, list_revisions(client, back))
    assert set(client.objects) == before
    assert rolled["metadata"]["name"] == update["metadata"]["name"] and rolled["revision"] == 3
    assert current["metadata"]["name"] == update2["metadata"]["name"]


def test_resolve_revisions_uses_and_returns_the_collision_count() -> None:
    client = FakeClient()
    sts = statefulset(collisionCount=0)
    squatter = revision_from_object(sts, 1, 0)
    squatter["data"] = {"other": True}
    client.create(squatter)
    _, update, count = resolve_revisions(client, sts, [])
    assert count == 1 and update["metadata"]["name"] == f"web-{hash_revision(update, 1)}"


# --- truncation ----------------------------------------------------------------------------


def pod_at(revision_name: str) -> dict[str, Any]:
    return {"metadata": {"labels": {POD_REVISION_LABEL: revision_name}}}


TRUNCATE_CASES = {
    # name: (numbers in history, live pod revisions, current, update, limit, deleted)
    "under the limit": ([1, 2, 3], [], 3, 3, 10, []),
    "oldest beyond the limit": ([1, 2, 3, 4, 5], [], 5, 5, 2, [1, 2]),
    "limit zero keeps only live": ([1, 2, 3], [], 3, 3, 0, [1, 2]),
    "current and update never count": ([1, 2, 3, 4], [], 1, 4, 1, [2]),
    "live pods protect old revisions": ([1, 2, 3, 4, 5], [1, 2], 5, 5, 1, [3]),
    "exactly at the limit": ([1, 2, 3], [], 3, 3, 2, []),
    "negative limit acts as zero": ([1, 2], [], 2, 2, -1, [1]),
}


@pytest.mark.parametrize("case", sorted(TRUNCATE_CASES))
def test_truncate_history(case: str) -> None:
    numbers, live, current, update, limit, expected = TRUNCATE_CASES[case]
    client = FakeClient()
    revs = {n: rev(f"web-{n}", n) for n in numbers}
    for r in revs.values():
        client.create(r)
    deleted = truncate_history(
        client,
        list(reversed(list(revs.values()))),  # order of the input does not matter
        [pod_at(f"web-{n}") for n in live],
        revs.get(current),
        revs.get(update),
        limit,
    )
    assert [r["revision"] for r in deleted] == expected
    remaining = sorted(o["revision"] for o in client.objects.values())
    assert remaining == [n for n in numbers if n not in expected]


def test_truncate_history_tolerates_already_deleted() -> None:
    client = FakeClient()
    revs = [rev("web-1", 1), rev("web-2", 2)]  # never created on the "server"
    assert [r["revision"] for r in truncate_history(client, revs, [], None, None, 0)] == [1, 2]


def test_truncate_history_propagates_other_errors() -> None:
    class Forbidden(FakeClient):
        def delete(self, kind: Any, name: str, namespace: str | None = None) -> dict[str, Any]:
            raise error(403, "Forbidden")

    with pytest.raises(Exception, match="Forbidden"):
        truncate_history(Forbidden(), [rev("web-1", 1)], [], None, None, 0)


@pytest.mark.parametrize(
    ("obj", "data"),
    [
        ({"a": {"x": 1, "y": 2}}, {"a": {"x": 3}}),
        ({"a": {"x": 1, "y": 2}}, {"a": {"x": 3, "$patch": "replace"}}),
        ({"a": {"x": 1}, "b": 1}, {"a": {"$patch": "delete"}}),
        ({"a": 1, "b": 2}, {"a": None}),
        ({"a": [1, 2, 3]}, {"a": [9]}),
        ({}, {"a": {"b": {"$patch": "replace", "c": 1}}}),
        ({"a": 5}, {"a": {"b": 1}}),
        ({"a": {"b": {"c": [1]}, "d": {"e": 1}}}, {"a": {"b": {"f": {"g": [2]}}}}),
        ({"a": {}}, {"a": {"$patch": "merge"}}),
        ({"a": {}}, {"$retainKeys": ["a"]}),
        ({"a": {}}, "not an object"),
    ],
)
def test_revision_view_is_apply_revision_without_copies(obj: dict[str, Any], data: Any) -> None:
    """``revision_view`` gives what ``apply_revision`` gives (or raises as it does), mutates
    nothing, and shares the parts the data does not patch."""
    revision = {"metadata": {"name": "r"}, "data": data}
    frozen = copy.deepcopy(obj)
    try:
        expected = apply_revision(obj, revision)
    except ValueError:
        with pytest.raises(ValueError):
            revision_view(obj, revision)
        return
    assert revision_view(obj, revision) == expected
    assert obj == frozen


def test_revision_view_of_a_statefulset_shares_what_the_revision_does_not_patch() -> None:
    old = statefulset(image="nginx:1")
    revision = new_revision(old, revision_patch(old), 1, 0, controller_kind=STS)
    new = statefulset(image="nginx:2")
    new["status"] = {"replicas": 3}
    frozen = copy.deepcopy(new)
    view = revision_view(new, revision)
    assert view == apply_revision(new, revision) and new == frozen
    assert view["metadata"] is new["metadata"] and view["status"] is new["status"]
    assert view["spec"] is not new["spec"] and view["spec"]["selector"] is new["spec"]["selector"]
    assert view["spec"]["template"] == old["spec"]["template"]
