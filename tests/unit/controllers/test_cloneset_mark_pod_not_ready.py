"""CloneSet ``lifecycle.*.markPodNotReady`` as Kruise's (``pkg/util/lifecycle``
``executePodNotReadyPolicy`` through ``pkg/util/podreadiness``), on the FakeClient harness of
``test_cloneset_control.py``: new pods get the ``KruisePodReady`` readiness gate (and the
condition True) when a hook marks; at PreparingDelete / PreparingUpdate the condition goes
False under the ``Lifecycle`` user agent's key, at Updated the key is removed; a PreparingDelete
pod is not taken back by a scale-up while a hook marks (Kruise allows no regret then); an
Updated pod a newer revision reaches goes back to PreparingUpdate with its hook put back; a
PreparingUpdate pod whose set is rolled back moves on without an update."""

from __future__ import annotations

import json
from typing import Any

from kube_runtime import meta
from kube_runtime.workloads import lifecycle, podreadiness
from kube_runtime.workloads.inplace import STATE_ANNOTATION
from tests.support.cloneset_harness import (
    Harness,
    converged,
    image,
    make_cs,
    writes_of,
)

HOLD = {"hold": "true"}
HOLD_UPDATE = {"hold-update": "true"}
IN_PLACE = {"type": "InPlaceIfPossible", "maxUnavailable": 1}


def _state(pod: dict[str, Any]) -> str:
    return lifecycle.get_state(pod)


def _ready_gate(pod: dict[str, Any]) -> tuple[str | None, list[dict[str, str]]]:
    """The ``KruisePodReady`` condition's status and messages (None: no condition)."""
    condition = podreadiness.get_condition(pod)
    if condition is None:
        return None, []
    return condition.get("status"), json.loads(condition.get("message") or "[]")


def _updated_in_place(pod: dict[str, Any]) -> bool:
    """Whether an in-place update was ever written to the pod (its state annotation)."""
    return STATE_ANNOTATION in meta.annotations(pod)


def _gates(pod: dict[str, Any]) -> list[str]:
    return [g["conditionType"] for g in pod["spec"].get("readinessGates") or ()]


def _until(h: Harness, name: str, state: str, rounds: int = 10) -> dict[str, Any]:
    """Reconcile and run the pods until pod ``name`` is in lifecycle ``state``."""
    for _ in range(rounds):
        h.step()
        h.kubelet()
        if _state(h.pods()[name]) == state:
            return h.pods()[name]
    raise AssertionError(f"{name} never reached {state}: {_state(h.pods()[name])}")


def _held(h: Harness, state: str) -> str:
    (name,) = [n for n, p in h.pods().items() if _state(p) == state]
    return name


PRE_DELETE_KEY = [{"userAgent": "Lifecycle", "key": "preDeleteHook"}]
PRE_UPDATE_KEY = [{"userAgent": "Lifecycle", "key": "preUpdateHook"}]


def test_new_pods_get_the_gate_and_its_condition_only_when_a_hook_marks():
    marked = converged(2, lifecycle={"preDelete": {"labelsHandler": HOLD, "markPodNotReady": True}})
    for pod in marked.pods().values():
        assert podreadiness.KRUISE_POD_READY in _gates(pod)
        assert _ready_gate(pod) == ("True", [])
    plain = converged(2, lifecycle={"preDelete": {"labelsHandler": HOLD}})
    for pod in plain.pods().values():
        assert podreadiness.KRUISE_POD_READY not in _gates(pod)
        assert _ready_gate(pod) == (None, [])


def test_pre_delete_holds_the_pod_not_ready_until_it_goes():
    hook = {"preDelete": {"labelsHandler": HOLD, "markPodNotReady": True}}
    h = converged(2, lifecycle=hook, extra_labels=HOLD)
    h.patch_spec({"replicas": 1})
    h.step()
    held = _held(h, lifecycle.PREPARING_DELETE)
    assert _ready_gate(h.pods()[held]) == ("False", PRE_DELETE_KEY)
    (other,) = set(h.pods()) - {held}
    assert _ready_gate(h.pods()[other]) == ("True", [])
    h.label_pod(held, {"hold": None})
    h.settle()
    assert set(h.pods()) == {other}


def test_a_marking_hook_allows_no_regret_on_scale_up():
    """Kruise ``managePreparingDelete``: with ``markPodNotReady`` the held pod stays in
    PreparingDelete (not ready) when the set scales back up; without it, it is taken back
    (``test_cloneset_control.py::test_pre_delete_pod_returns_to_normal_when_scaled_back_up``)."""
    hook = {"preDelete": {"labelsHandler": HOLD, "markPodNotReady": True}}
    h = converged(2, lifecycle=hook, extra_labels=HOLD)
    h.patch_spec({"replicas": 1})
    h.step()
    held = _held(h, lifecycle.PREPARING_DELETE)
    h.patch_spec({"replicas": 2})
    h.settle()
    # still counted among the replicas (no scaling-exclude-preparing-delete label): no new pod
    assert len(h.pods()) == 2
    assert _state(h.pods()[held]) == lifecycle.PREPARING_DELETE
    assert _ready_gate(h.pods()[held]) == ("False", PRE_DELETE_KEY)
    h.label_pod(held, {"hold": None})
    h.settle()
    assert held not in h.pods() and len(h.pods()) == 2  # deleted, then replaced


def test_in_place_update_hook_marks_until_updated():
    """PreparingUpdate: False with ``preUpdateHook``; released, updated in place, Updated
    (the hook not back): True again with no message; the hook back: Normal."""
    hook = {"inPlaceUpdate": {"labelsHandler": HOLD_UPDATE, "markPodNotReady": True}}
    h = converged(2, lifecycle=hook, extra_labels=HOLD_UPDATE, updateStrategy=IN_PLACE)
    h.set_image("nginx:2")
    h.step()
    held = _held(h, lifecycle.PREPARING_UPDATE)
    assert _ready_gate(h.pods()[held]) == ("False", PRE_UPDATE_KEY)
    assert image(h.pods()[held]) == "nginx:1"
    h.label_pod(held, {"hold-update": None})
    h.step()
    assert _state(h.pods()[held]) == lifecycle.UPDATING
    assert _ready_gate(h.pods()[held]) == ("False", PRE_UPDATE_KEY)
    pod = _until(h, held, lifecycle.UPDATED)
    assert image(pod) == "nginx:2"
    assert _ready_gate(pod) == ("True", [])
    h.label_pod(held, HOLD_UPDATE)
    h.step()
    assert _state(h.pods()[held]) == lifecycle.NORMAL


def test_updated_pod_reached_by_a_newer_revision_is_prepared_again_with_its_hook():
    """Kruise ``UpdatePodLifecycleWithHandler``: an Updated pod not at the update revision
    goes back to PreparingUpdate with the hook's labels put back, held not ready again."""
    hook = {"inPlaceUpdate": {"labelsHandler": HOLD_UPDATE, "markPodNotReady": True}}
    h = converged(1, lifecycle=hook, extra_labels=HOLD_UPDATE, updateStrategy=IN_PLACE)
    h.set_image("nginx:2")
    h.step()
    (name,) = h.pods()
    h.label_pod(name, {"hold-update": None})
    _until(h, name, lifecycle.UPDATED)
    h.set_image("nginx:3")
    h.step()
    pod = h.pods()[name]
    assert _state(pod) == lifecycle.PREPARING_UPDATE
    assert meta.labels(pod)["hold-update"] == "true"
    assert _ready_gate(pod) == ("False", PRE_UPDATE_KEY)
    assert image(pod) == "nginx:2"


def test_preparing_update_pod_rolled_back_moves_on_without_an_update():
    """Kruise ``refreshPodState`` (issue 1156): a pod held in PreparingUpdate whose set goes
    back to its revision is Updated (the hook not all there) and released; no in-place
    update is written."""
    hook = {"inPlaceUpdate": {"labelsHandler": HOLD_UPDATE, "markPodNotReady": True}}
    h = converged(1, lifecycle=hook, extra_labels=HOLD_UPDATE, updateStrategy=IN_PLACE)
    h.set_image("nginx:2")
    h.step()
    (name,) = h.pods()
    assert _state(h.pods()[name]) == lifecycle.PREPARING_UPDATE
    h.label_pod(name, {"hold-update": None})
    h.set_image("nginx:1")
    h.step()
    pod = h.pods()[name]
    assert _state(pod) == lifecycle.UPDATED and image(pod) == "nginx:1"
    assert _ready_gate(pod) == ("True", [])
    assert not _updated_in_place(pod)


def test_a_hook_without_mark_leaves_readiness_alone():
    hook = {"preDelete": {"labelsHandler": HOLD}}
    h = Harness(make_cs(2, lifecycle=hook, extra_labels=HOLD))
    h.settle()
    h.patch_spec({"replicas": 1})
    _, writes = h.step()
    held = _held(h, lifecycle.PREPARING_DELETE)
    assert _ready_gate(h.pods()[held]) == (None, [])
    assert [w for w in writes if w.subresource == "status" and w.kind.kind == "Pod"] == []
    assert writes_of(writes, "delete") == []
