"""Differential checks of CRDs themselves: the CRD object once established, the CRDs
kube-apiserver refuses (and why), and a custom resource served in two versions.

Same method as ``test_differential_e2e.py`` (whose fixture and helpers this module uses):
each scenario runs against the embedded server and kube-apiserver 1.20 and the outcomes
are compared.
"""

from __future__ import annotations

import copy
import uuid
from typing import Any

from kube_runtime.client import ApiError, Client
from kube_runtime.envtest import wait_for
from tests.e2e import test_differential_e2e as differential
from tests.e2e.test_differential_e2e import Obj, Recorder, normalize, refusal, run_both

#: Skipped, like the other differential checks, when the real binaries are not cached.
pytestmark = differential.pytestmark
#: The same module-scoped pair of servers (an embedded one and kube-apiserver 1.20).
backends = differential.backends

CRD_KIND = "apiextensions.k8s.io/v1/CustomResourceDefinition"


def crd(group: str, plural: str = "gizmos", kind: str = "Gizmo", **spec: Any) -> Obj:
    schema = {
        "openAPIV3Schema": {
            "type": "object",
            "properties": {"spec": {"type": "object", "properties": {"size": {"type": "integer"}}}},
        }
    }
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{group}"},
        "spec": {
            "group": group,
            "scope": "Namespaced",
            "names": {"plural": plural, "singular": plural[:-1], "kind": kind},
            "versions": [{"name": "v1", "served": True, "storage": True, "schema": schema}],
            **spec,
        },
    }


def _established(c: Client, name: str) -> Obj | None:
    got: Obj = c.get(CRD_KIND, name)
    conditions = (got.get("status") or {}).get("conditions") or ()
    ok = any(x["type"] == "Established" and x["status"] == "True" for x in conditions)
    return got if ok else None


def _crd_view(got: Obj) -> Obj:
    """What clients read of a CRD: its spec as defaulted and its status (times masked)."""
    view = normalize(got)
    status = view.get("status") or {}
    status["conditions"] = sorted(
        (x["type"], x["status"], x.get("reason"), x.get("message"))
        for x in status.get("conditions") or ()
    )
    return view


def _delete_crd(c: Client, name: str) -> None:
    try:
        c.delete(CRD_KIND, name)
    except ApiError as e:
        if e.code != 404:
            raise


def test_crd_object_once_established(backends: dict[str, Client]) -> None:
    group = f"{uuid.uuid4().hex[:8]}.example.com"

    def scenario(r: Recorder) -> None:
        c = r.c
        name = f"gizmos.{group}"
        r.note("create answer", _crd_view(c.create(crd(group))))
        try:
            got = wait_for(lambda: _established(c, name), timeout=30, message="established")
            r.note("established", _crd_view(got))
        finally:
            _delete_crd(c, name)

    run_both(backends, scenario)


def test_crds_refused(backends: dict[str, Client]) -> None:
    group = f"{uuid.uuid4().hex[:8]}.example.com"

    def causes(fn: Any) -> Any:
        """The refusal, or "accepted" (and the CRD deleted again)."""
        created: list[Obj] = []
        outcome = refusal(lambda: created.append(fn()))
        if created:
            _delete_crd(r_client[0], created[0]["metadata"]["name"])
        return outcome

    r_client: list[Client] = []

    def scenario(r: Recorder) -> None:
        c = r.c
        r_client[:] = [c]
        wrong_name = crd(group)
        wrong_name["metadata"]["name"] = f"other.{group}"
        r.note("name is not plural.group", causes(lambda: c.create(wrong_name)))
        no_storage = crd(group)
        no_storage["spec"]["versions"][0]["storage"] = False
        r.note("no storage version", causes(lambda: c.create(no_storage)))
        two = crd(group)
        second = copy.deepcopy(two["spec"]["versions"][0])
        second["name"] = "v2"
        two["spec"]["versions"].append(second)
        r.note("two storage versions", causes(lambda: c.create(two)))
        untyped = crd(group)
        untyped["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"] = {}
        r.note("schema without a type", causes(lambda: c.create(untyped)))
        bad_scope = crd(group, scope="Galactic")
        r.note("unknown scope", causes(lambda: c.create(bad_scope)))
        upper = crd(group, plural="Gizmos")
        r.note("uppercase plural", causes(lambda: c.create(upper)))

    run_both(backends, scenario)


def test_custom_resource_in_two_versions(backends: dict[str, Client]) -> None:
    group = f"{uuid.uuid4().hex[:8]}.example.com"

    def scenario(r: Recorder) -> None:
        c, ns = r.c, r.ns
        two = crd(group)
        beta = copy.deepcopy(two["spec"]["versions"][0])
        beta.update(name="v1beta1", storage=False)
        hidden = copy.deepcopy(beta)
        hidden.update(name="v1alpha1", served=False)
        two["spec"]["versions"] = [two["spec"]["versions"][0], beta, hidden]
        name = f"gizmos.{group}"
        c.create(two)
        try:
            wait_for(lambda: _established(c, name), timeout=30, message="established")

            def discoverable() -> bool:
                c.mapper.resource_for(f"{group}/v1beta1/Gizmo")
                return True

            wait_for(discoverable, timeout=30, message="v1beta1 discoverable")
            obj = {
                "apiVersion": f"{group}/v1beta1",
                "kind": "Gizmo",
                "metadata": {"name": "g"},
                "spec": {"size": 2},
            }
            r.step("create through v1beta1", lambda: c.create(obj, namespace=ns))
            r.step("read through v1", lambda: c.get(f"{group}/v1/Gizmo", "g", ns))
            r.step(
                "list through v1beta1",
                lambda: c.request("GET", f"/apis/{group}/v1beta1/namespaces/{ns}/gizmos"),
            )
            r.step(
                "unserved version",
                lambda: c.request("GET", f"/apis/{group}/v1alpha1/namespaces/{ns}/gizmos"),
            )
            r.note(
                "stored versions",
                (c.get(CRD_KIND, name).get("status") or {}).get("storedVersions"),
            )
        finally:
            _delete_crd(c, name)

    run_both(backends, scenario)
