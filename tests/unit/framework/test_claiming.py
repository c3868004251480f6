"""claiming.py: every branch of upstream's ClaimObject decision table, with a fake client."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any

import pytest

from kube_runtime.claiming import (
    CannotAdoptError,
    ClaimError,
    ControllerRefManager,
    recheck_controller,
    recheck_deletion_timestamp,
)
from kube_runtime.client.errors import error_from_status
from kube_runtime.kinds import Kind, Pod, StatefulSet
from kube_runtime.selectors import parse_label_selector

SET_UID = "uid-set"
OTHER_UID = "uid-other"
DELETED_AT = "2024-01-01T00:00:00Z"


def api_error(code: int, reason: str) -> Exception:
    return error_from_status({"kind": "Status", "code": code, "reason": reason, "message": reason})


def owner(*, deleting: bool = False, uid: str = SET_UID) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": "web", "namespace": "ns", "uid": uid}
    if deleting:
        meta["deletionTimestamp"] = DELETED_AT
    return {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": meta}


def controller_ref(uid: str, name: str = "web") -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "name": name,
        "uid": uid,
        "controller": True,
        "blockOwnerDeletion": True,
    }


def pod(
    name: str = "web-0",
    *,
    labels: dict[str, str] | None = None,
    owned_by: str | None = None,
    extra_refs: list[dict[str, Any]] | None = None,
    deleting: bool = False,
    namespace: str = "ns",
) -> dict[str, Any]:
    meta: dict[str, Any] = {
        "name": name,
        "namespace": namespace,
        "uid": f"uid-{name}",
        "labels": {"app": "web"} if labels is None else labels,
    }
    refs = list(extra_refs or [])
    if owned_by is not None:
        refs.append(controller_ref(owned_by))
    if refs:
        meta["ownerReferences"] = refs
    if deleting:
        meta["deletionTimestamp"] = DELETED_AT
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta}


@dataclass
class FakeClient:
    """Records patches; answers with the object as patched, or a scripted error per name."""

    objects: dict[str, dict[str, Any]] = field(default_factory=dict)
    errors: dict[str, Exception] = field(default_factory=dict)
    patches: list[tuple[Kind, str, Any, str | None, str]] = field(default_factory=list)

    def patch(
        self,
        kind: Kind,
        name: str,
        patch: Any,
        *,
        namespace: str | None = None,
        patch_type: str = "merge",
    ) -> dict[str, Any]:
        self.patches.append((kind, name, patch, namespace, patch_type))
        if name in self.errors:
            raise self.errors[name]
        base = self.objects.get(name, {"metadata": {"name": name}})
        meta = dict(base["metadata"])
        refs = patch["metadata"]["ownerReferences"]
        meta["ownerReferences"] = [*meta.get("ownerReferences", []), *refs]
        return {**base, "metadata": meta, "patched": True}


def manager(
    client: FakeClient,
    controller: dict[str, Any] | None = None,
    can_adopt: Any = None,
    selector: Any = None,
) -> ControllerRefManager:
    return ControllerRefManager(
        client,
        controller or owner(),
        selector if selector is not None else {"matchLabels": {"app": "web"}},
        StatefulSet,
        can_adopt,
    )


NOMATCH = {"app": "db"}

# (case, controller deleting, object, expected outcome, expected patch kind)
# outcome: "claimed" (returned as is), "adopted" (returned as patched), "ignored"
CASES = [
    ("other controller, matching", False, pod(owned_by=OTHER_UID), "ignored", None),
    (
        "other controller, not matching",
        False,
        pod(labels=NOMATCH, owned_by=OTHER_UID),
        "ignored",
        None,
    ),
    ("ours, matching", False, pod(owned_by=SET_UID), "claimed", None),
    ("ours, matching, controller deleting", True, pod(owned_by=SET_UID), "claimed", None),
    (
        "ours, matching, object deleting",
        False,
        pod(owned_by=SET_UID, deleting=True),
        "claimed",
        None,
    ),
    ("ours, not matching", False, pod(labels=NOMATCH, owned_by=SET_UID), "ignored", "release"),
    (
        "ours, not matching, object deleting",
        False,
        pod(labels=NOMATCH, owned_by=SET_UID, deleting=True),
        "ignored",
        "release",
    ),
    (
        "ours, not matching, controller deleting",
        True,
        pod(labels=NOMATCH, owned_by=SET_UID),
        "ignored",
        None,
    ),
    ("orphan, matching", False, pod(), "adopted", "adopt"),
    (
        "orphan with a non-controller owner, matching",
        False,
        pod(extra_refs=[{**controller_ref(OTHER_UID), "controller": False}]),
        "adopted",
        "adopt",
    ),
    ("orphan, not matching", False, pod(labels=NOMATCH), "ignored", None),
    ("orphan, no labels", False, pod(labels={}), "ignored", None),
    ("orphan, matching, controller deleting", True, pod(), "ignored", None),
    ("orphan, matching, object deleting", False, pod(deleting=True), "ignored", None),
    ("orphan, matching, other namespace", False, pod(namespace="elsewhere"), "ignored", None),
]


@pytest.mark.parametrize(
    ("controller_deleting", "obj", "outcome", "patch"),
    [c[1:] for c in CASES],
    ids=[c[0] for c in CASES],
)
def test_decision_table(
    controller_deleting: bool, obj: dict[str, Any], outcome: str, patch: str | None
) -> None:
    client = FakeClient()
    m = manager(client, owner(deleting=controller_deleting))
    claimed = m.claim([obj])
    if outcome == "claimed":
        assert claimed == [obj]
        assert claimed[0] is obj  # returned as given, no copy, no request
    elif outcome == "adopted":
        assert len(claimed) == 1 and claimed[0].get("patched") is True
    else:
        assert claimed == []
    if patch is None:
        assert client.patches == []
        return
    assert len(client.patches) == 1
    kind, name, body, namespace, patch_type = client.patches[0]
    assert (kind, name, namespace, patch_type) == (
        Pod,
        obj["metadata"]["name"],
        obj["metadata"]["namespace"],
        "strategic",
    )
    if patch == "release":
        assert body == {
            "metadata": {
                "ownerReferences": [{"$patch": "delete", "uid": SET_UID}],
                "uid": obj["metadata"]["uid"],
            }
        }
    else:
        assert body == {
            "metadata": {
                "ownerReferences": [controller_ref(SET_UID)],
                "uid": obj["metadata"]["uid"],
            }
        }


def test_objects_are_not_mutated_and_order_is_kept() -> None:
    import copy

    objs = [
        pod("web-0", owned_by=SET_UID),
        pod("web-1"),
        pod("web-2", labels=NOMATCH, owned_by=SET_UID),
    ]
    before = copy.deepcopy(objs)
    claimed = manager(FakeClient()).claim(objs)
    assert objs == before
    assert [c["metadata"]["name"] for c in claimed] == ["web-0", "web-1"]


# --- filters -----------------------------------------------------------------------------


def ordinal_filter(obj: dict[str, Any]) -> bool:
    name = obj["metadata"]["name"]
    prefix, _, ordinal = name.rpartition("-")
    return prefix == "web" and ordinal.isdigit()


def test_filters_are_anded_with_the_selector() -> None:
    client = FakeClient()
    objs = [
        pod("web-0", owned_by=SET_UID),  # ours, passes -> claimed
        pod("web-x", owned_by=SET_UID),  # ours, filter fails -> released
        pod("web-1"),  # orphan, passes -> adopted
        pod("other-0"),  # orphan, filter fails -> ignored
    ]
    claimed = manager(client).claim(objs, ordinal_filter)
    assert [c["metadata"]["name"] for c in claimed] == ["web-0", "web-1"]
    assert [(p[1], "$patch" in str(p[2])) for p in client.patches] == [
        ("web-x", True),
        ("web-1", False),
    ]


def test_filters_run_only_on_selector_matches() -> None:
    seen: list[str] = []

    def spy(obj: dict[str, Any]) -> bool:
        seen.append(obj["metadata"]["name"])
        return True

    manager(FakeClient()).claim(
        [pod("a", labels=NOMATCH), pod("b"), pod("c", owned_by=OTHER_UID)], spy
    )
    assert seen == ["b"]


def test_every_filter_must_pass() -> None:
    claimed = manager(FakeClient()).claim([pod("web-0")], lambda o: True, lambda o: False)
    assert claimed == []


# --- selectors ---------------------------------------------------------------------------


def test_selector_object_and_nil_selector() -> None:
    sel = parse_label_selector("app in (web, api)")
    assert len(manager(FakeClient(), selector=sel).claim([pod(labels={"app": "api"})])) == 1
    # A nil selector matches nothing: owned objects get released, orphans are left alone.
    client = FakeClient()
    m = ControllerRefManager(client, owner(), None, StatefulSet)
    assert m.claim([pod("a", owned_by=SET_UID), pod("b")]) == []
    assert [p[1] for p in client.patches] == ["a"]


def test_empty_selector_matches_everything() -> None:
    assert len(manager(FakeClient(), selector={}).claim([pod(labels={})])) == 1


def test_controller_without_uid_is_rejected() -> None:
    with pytest.raises(ValueError, match=r"metadata\.name and metadata\.uid"):
        ControllerRefManager(FakeClient(), {"metadata": {"name": "web"}}, {}, StatefulSet)


def test_reference_uses_controller_kind() -> None:
    client = FakeClient()
    ControllerRefManager(client, owner(), {}, "apps.kruise.io/v1alpha1/CloneSet").claim([pod()])
    ref = client.patches[0][2]["metadata"]["ownerReferences"][0]
    assert (ref["apiVersion"], ref["kind"], ref["name"], ref["uid"]) == (
        "apps.kruise.io/v1alpha1",
        "CloneSet",
        "web",
        SET_UID,
    )


def test_kind_of_each_object_is_patched() -> None:
    client = FakeClient()
    rev = {
        "apiVersion": "apps/v1",
        "kind": "ControllerRevision",
        "metadata": {"name": "web-abc", "namespace": "ns", "uid": "u1", "labels": {"app": "web"}},
    }
    manager(client).claim([rev])
    assert client.patches[0][0] == Kind("apps/v1", "ControllerRevision")


# --- errors ------------------------------------------------------------------------------

ERROR_CASES = [
    # (action, error, ignored?)
    ("adopt", api_error(404, "NotFound"), True),
    ("adopt", api_error(422, "Invalid"), False),
    ("adopt", api_error(409, "Conflict"), False),
    ("adopt", api_error(500, "InternalError"), False),
    ("release", api_error(404, "NotFound"), True),
    ("release", api_error(422, "Invalid"), True),
    ("release", api_error(409, "Conflict"), False),
    ("release", api_error(500, "InternalError"), False),
]


@pytest.mark.parametrize(
    ("action", "error", "ignored"),
    ERROR_CASES,
    ids=[f"{a}-{type(e).__name__}" for a, e, _ in ERROR_CASES],
)
def test_patch_errors(action: str, error: Exception, ignored: bool) -> None:
    obj = pod() if action == "adopt" else pod(labels=NOMATCH, owned_by=SET_UID)
    client = FakeClient(errors={"web-0": error})
    m = manager(client)
    if ignored:
        assert m.claim([obj]) == []
    else:
        with pytest.raises(ClaimError) as info:
            m.claim([obj])
        assert info.value.errors == [error]
        assert info.value.claimed == []
    assert len(client.patches) == 1


def test_errors_are_aggregated_after_the_whole_pass() -> None:
    boom, gone, conflict = (
        api_error(500, "InternalError"),
        api_error(404, "NotFound"),
        api_error(409, "Conflict"),
    )
    client = FakeClient(errors={"a": boom, "b": gone, "d": conflict})
    objs = [
        pod("a"),  # adopt fails -> error
        pod("b"),  # adopt NotFound -> ignored
        pod("c", owned_by=SET_UID),  # claimed
        pod("d", labels=NOMATCH, owned_by=SET_UID),  # release fails -> error
        pod("e"),  # adopted
    ]
    with pytest.raises(ClaimError) as info:
        manager(client).claim(objs)
    err = info.value
    assert err.errors == [boom, conflict]
    assert [c["metadata"]["name"] for c in err.claimed] == ["c", "e"]
    assert [p[1] for p in client.patches] == ["a", "b", "d", "e"]
    assert str(boom) in str(err) and str(conflict) in str(err)


def test_single_error_message_is_the_error() -> None:
    boom = api_error(500, "InternalError")
    with pytest.raises(ClaimError) as info:
        manager(FakeClient(errors={"web-0": boom})).claim([pod()])
    assert str(info.value) == str(boom)


# --- can_adopt ---------------------------------------------------------------------------


def test_can_adopt_runs_once_and_only_when_adopting() -> None:
    calls: list[int] = []
    m = manager(FakeClient(), can_adopt=lambda: calls.append(1))
    m.claim([pod("a", owned_by=SET_UID), pod("b", labels=NOMATCH)])
    assert calls == []  # no adoption attempted
    m.claim([pod("c"), pod("d"), pod("e")])
    m.claim([pod("f")])
    assert calls == [1]


def test_failing_can_adopt_fails_every_adoption_but_not_claims_or_releases() -> None:
    calls: list[int] = []

    def refuse() -> None:
        calls.append(1)
        raise RuntimeError("owner is gone")

    client = FakeClient()
    with pytest.raises(ClaimError) as info:
        manager(client, can_adopt=refuse).claim(
            [
                pod("a"),
                pod("b", owned_by=SET_UID),
                pod("c", labels=NOMATCH, owned_by=SET_UID),
                pod("d"),
            ]
        )
    assert calls == [1]
    assert [c["metadata"]["name"] for c in info.value.claimed] == ["b"]
    assert [type(e) for e in info.value.errors] == [CannotAdoptError, CannotAdoptError]
    assert str(info.value.errors[0]) == "can't adopt Pod ns/a (uid-a): owner is gone"
    assert [p[1] for p in client.patches] == ["c"]  # the release still happened


def test_concurrent_claims_wait_for_the_one_can_adopt_check() -> None:
    calls: list[int] = []
    gate = threading.Barrier(8)

    def slow_refusal() -> None:
        calls.append(1)
        time.sleep(0.02)  # others arrive while the check runs: they must wait for its verdict
        raise RuntimeError("owner is gone")

    client = FakeClient()
    m = manager(client, can_adopt=slow_refusal)
    failures: list[BaseException] = []

    def worker(i: int) -> None:
        gate.wait()
        try:
            m.claim([pod(f"p{i}")])
        except ClaimError as e:
            failures.extend(e.errors)

    threads = [threading.Thread(target=worker, args=(i,), daemon=True) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=10)
    assert calls == [1]
    assert client.patches == []  # nobody adopted before (or despite) the refusal
    assert len(failures) == 8 and all(isinstance(e, CannotAdoptError) for e in failures)


class FakeReader:
    def __init__(self, answer: dict[str, Any] | Exception) -> None:
        self.answer = answer
        self.calls: list[tuple[Kind, str, str | None]] = []

    def get(self, kind: Kind, name: str, namespace: str | None = None) -> dict[str, Any]:
        self.calls.append((kind, name, namespace))
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer


@pytest.mark.parametrize(
    ("fresh", "message"),
    [
        (owner(), None),
        (
            owner(uid="uid-new"),
            "original StatefulSet ns/web is gone: got uid uid-new, wanted uid-set",
        ),
        (owner(deleting=True), f"ns/web has just been deleted at {DELETED_AT}"),
        (api_error(404, "NotFound"), "can't recheck DeletionTimestamp: "),
    ],
    ids=["same-owner", "uid-changed", "owner-deleting", "read-fails"],
)
def test_recheck_controller(fresh: Any, message: str | None) -> None:
    reader = FakeReader(fresh)
    check = recheck_controller(reader, owner())
    if message is None:
        check()
    else:
        with pytest.raises(CannotAdoptError) as info:
            check()
        assert str(info.value).startswith(message) or message in str(info.value)
    assert reader.calls == [(StatefulSet, "web", "ns")]


def test_recheck_controller_uid_changed_blocks_adoption_through_the_manager() -> None:
    client = FakeClient()
    m = manager(client, can_adopt=recheck_controller(FakeReader(owner(uid="uid-new")), owner()))
    with pytest.raises(ClaimError) as info:
        m.claim([pod()])
    assert "is gone: got uid uid-new, wanted uid-set" in str(info.value)
    assert client.patches == []


def test_recheck_deletion_timestamp_accepts_live_object() -> None:
    recheck_deletion_timestamp(lambda: {"metadata": {"name": "x"}})()


@pytest.mark.parametrize(
    "selector",
    [
        {"matchLabels": {"app": "web"}},  # an exact term: through the label index
        {"matchExpressions": [{"key": "app", "operator": "In", "values": ["web", "x"]}]},
    ],
)
def test_claim_candidates_are_the_owned_then_the_matching_orphans(selector: Any) -> None:
    from kube_runtime.claiming import claim_candidates
    from kube_runtime.client.fake import FakeClient
    from kube_runtime.selectors import NOTHING, label_selector_from_dict

    client = FakeClient()
    owner = {"metadata": {"name": "web", "namespace": "ns", "uid": "set-uid"}}

    def pod(name: str, labels: dict[str, str], controller: str | None, ns: str = "ns") -> None:
        metadata: dict[str, Any] = {"name": name, "namespace": ns, "labels": labels}
        if controller is not None:
            metadata["ownerReferences"] = [
                {
                    "apiVersion": "v1",
                    "kind": "X",
                    "name": "o",
                    "uid": controller,
                    "controller": True,
                }
            ]
        client.create({"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": {}})

    pod("owned-unlabelled", {}, "set-uid")
    pod("orphan", {"app": "web"}, None)
    pod("orphan-other-app", {"app": "db"}, None)
    pod("others", {"app": "web"}, "another-uid")
    pod("elsewhere", {"app": "web"}, None, ns="other")
    parsed = label_selector_from_dict(selector)
    found = claim_candidates(client, Pod, owner, parsed)
    assert [p["metadata"]["name"] for p in found] == ["owned-unlabelled", "orphan"]
    assert claim_candidates(client, Pod, owner, parsed, str(parsed)) == found
    assert [p["metadata"]["name"] for p in claim_candidates(client, Pod, owner, NOTHING)] == [
        "owned-unlabelled"
    ]
