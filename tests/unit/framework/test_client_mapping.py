"""Resource paths, the built-in table and discovery, without a server."""

from __future__ import annotations

import threading
from typing import Any, ClassVar

import pytest
from pydantic import BaseModel

from kube_runtime import kinds
from kube_runtime.client import NotFound, Resource, RestMapper
from kube_runtime.client.errors import error_from_response
from kube_runtime.client.mapping import (
    BUILTIN_RESOURCES,
    NoKindMatchError,
    resources_from_discovery,
)

KIND_CONSTANTS = [v for v in vars(kinds).values() if isinstance(v, kinds.Kind)]


def test_every_kind_constant_is_built_in() -> None:
    mapper = RestMapper(None)
    assert len(KIND_CONSTANTS) >= 18
    for kind in KIND_CONSTANTS:
        resource = mapper.resource_for(kind)
        assert resource.kind_ref == kind


def test_builtin_table_scopes_and_subresources() -> None:
    mapper = RestMapper(None)
    sts = mapper.resource_for("apps/v1/StatefulSet")
    assert (sts.plural, sts.namespaced, sts.api_version) == ("statefulsets", True, "apps/v1")
    assert {"status", "scale"} <= sts.subresources
    assert not mapper.resource_for(kinds.Namespace).namespaced
    assert not mapper.resource_for(kinds.Node).namespaced
    assert not mapper.resource_for(kinds.CustomResourceDefinition).namespaced
    assert "status" in mapper.resource_for(kinds.Pod).subresources
    assert "status" not in mapper.resource_for(kinds.ConfigMap).subresources
    assert mapper.resource_for(kinds.Lease).plural == "leases"
    # One entry per kind in the table.
    refs = [r.kind_ref for r in BUILTIN_RESOURCES]
    assert len(refs) == len(set(refs))


def test_paths() -> None:
    mapper = RestMapper(None)
    sts = mapper.resource_for(kinds.StatefulSet)
    assert sts.path("ns", "web", "scale") == "/apis/apps/v1/namespaces/ns/statefulsets/web/scale"
    assert sts.path() == "/apis/apps/v1/statefulsets"
    pod = mapper.resource_for(kinds.Pod)
    assert pod.path("ns") == "/api/v1/namespaces/ns/pods"
    assert pod.path("ns", "p", "status") == "/api/v1/namespaces/ns/pods/p/status"
    node = mapper.resource_for(kinds.Node)
    assert node.path("ignored", "n1") == "/api/v1/nodes/n1"
    assert pod.path("ns", "a b/c") == "/api/v1/namespaces/ns/pods/a%20b%2Fc"
    with pytest.raises(ValueError):
        pod.path("ns", subresource="status")
    with pytest.raises(ValueError):
        pod.path("ns", "")


class FakeDiscovery:
    """Serves APIResourceLists from a dict; counts requests."""

    def __init__(self, docs: dict[str, Any]) -> None:
        self.docs = docs
        self.calls: list[str] = []

    def get_path(self, path: str) -> Any:
        self.calls.append(path)
        if path not in self.docs:
            raise error_from_response(404, b"")
        return self.docs[path]


WIDGETS = {
    "kind": "APIResourceList",
    "groupVersion": "example.com/v1",
    "resources": [
        {
            "name": "widgets",
            "singularName": "widget",
            "namespaced": True,
            "kind": "Widget",
            "verbs": ["get", "list", "watch", "create"],
            "shortNames": ["wd"],
        },
        {"name": "widgets/status", "namespaced": True, "kind": "Widget", "verbs": ["get"]},
        {
            "name": "widgets/scale",
            "namespaced": True,
            "kind": "Scale",
            "group": "autoscaling",
            "version": "v1",
            "verbs": ["get"],
        },
        {"name": "gadgets", "namespaced": False, "kind": "Gadget", "verbs": ["get"]},
    ],
}


def test_discovery_document_parsing() -> None:
    found = {r.kind: r for r in resources_from_discovery(WIDGETS)}
    assert set(found) == {"Widget", "Gadget"}
    w = found["Widget"]
    assert (w.group, w.version, w.plural, w.namespaced) == ("example.com", "v1", "widgets", True)
    assert w.subresources == frozenset({"status", "scale"})
    assert w.short_names == ("wd",)
    assert w.verbs == ("get", "list", "watch", "create")
    assert not found["Gadget"].namespaced and found["Gadget"].subresources == frozenset()


def test_discovery_is_cached_and_refreshed_once_on_a_miss() -> None:
    fake = FakeDiscovery({"/apis/example.com/v1": WIDGETS})
    mapper = RestMapper(fake)
    assert mapper.resource_for("example.com/v1/Widget").plural == "widgets"
    assert mapper.resource_for("example.com/v1/Gadget").plural == "gadgets"
    assert fake.calls == ["/apis/example.com/v1"]  # cached
    # A kind the cached answer lacks: one refetch, then NoKindMatchError.
    with pytest.raises(NoKindMatchError, match="Sprocket"):
        mapper.resource_for("example.com/v1/Sprocket")
    assert len(fake.calls) == 2
    # The kind appears (a CRD was created): the next miss finds it without a reset.
    fake.docs["/apis/example.com/v1"] = {
        **WIDGETS,
        "resources": [
            *WIDGETS["resources"],
            {"name": "sprockets", "namespaced": True, "kind": "Sprocket"},
        ],
    }
    assert mapper.resource_for("example.com/v1/Sprocket").plural == "sprockets"
    assert len(fake.calls) == 3


def test_unknown_group_is_no_kind_match() -> None:
    mapper = RestMapper(FakeDiscovery({}))
    with pytest.raises(NoKindMatchError) as err:
        mapper.resource_for("nothere.io/v1/Thing")
    assert isinstance(err.value, LookupError)
    assert err.value.kind == kinds.Kind("nothere.io/v1", "Thing")
    with pytest.raises(NoKindMatchError):
        RestMapper(None).resource_for("example.com/v1/Widget")


def test_builtins_resolve_through_discovery_and_core_discovery_path() -> None:
    fake = FakeDiscovery(
        {
            "/api/v1": {
                "groupVersion": "v1",
                "resources": [
                    {"name": "pods", "namespaced": True, "kind": "Pod"},
                    {"name": "pods/status", "namespaced": True, "kind": "Pod"},
                    {"name": "limitranges", "namespaced": True, "kind": "LimitRange"},
                ],
            },
            "/apis/batch/v1": {"groupVersion": "batch/v1", "resources": []},
        }
    )
    mapper = RestMapper(fake)
    assert mapper.resource_for(kinds.Pod).subresources == frozenset({"status"})
    assert mapper.resource_for("v1/LimitRange").path("ns") == "/api/v1/namespaces/ns/limitranges"
    assert fake.calls == ["/api/v1"]  # one answer per group/version, cached
    # A built-in kind the server does not serve (batch/v1 CronJob on kube-apiserver 1.20):
    # no match, as for a CRD that is not installed, instead of a 404 on every request.
    with pytest.raises(NoKindMatchError, match="CronJob"):
        mapper.resource_for("batch/v1/CronJob")
    # Without a client the built-in table answers.
    assert RestMapper(None).resource_for("batch/v1/CronJob").plural == "cronjobs"


def test_other_errors_propagate() -> None:
    class Failing:
        def get_path(self, path: str) -> Any:
            raise error_from_response(503, b"down")

    with pytest.raises(Exception) as err:
        RestMapper(Failing()).resource_for("example.com/v1/Widget")
    assert not isinstance(err.value, (NoKindMatchError, NotFound))


class Widget(BaseModel):
    __kube_resource__: ClassVar[Resource] = Resource(
        "example.com", "v1", "Widget", "widgets", True, frozenset({"status"})
    )


def test_model_class_carries_its_resource() -> None:
    fake = FakeDiscovery({})
    mapper = RestMapper(fake)
    assert mapper.resource_for(Widget) is Widget.__kube_resource__
    assert fake.calls == []


def test_added_resource_and_thread_safety() -> None:
    fake = FakeDiscovery({"/apis/example.com/v1": WIDGETS})
    mapper = RestMapper(fake)
    mapper.add(Resource("x.io", "v1", "Thing", "things", False))
    assert mapper.resource_for("x.io/v1/Thing").plural == "things"
    results: list[str] = []

    def look() -> None:
        for _ in range(100):
            results.append(mapper.resource_for("example.com/v1/Widget").plural)

    threads = [threading.Thread(target=look) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == ["widgets"] * 400
    mapper.reset()
    mapper.resource_for("example.com/v1/Widget")
    assert fake.calls.count("/apis/example.com/v1") >= 2


def test_resource_for_object_remembers_until_the_answers_can_change() -> None:
    fake = FakeDiscovery({"/apis/example.com/v1": WIDGETS})
    mapper = RestMapper(fake)
    widget = mapper.resource_for_object("example.com/v1", "Widget")
    assert widget == mapper.resource_for("example.com/v1/Widget")
    assert mapper.resource_for_object("example.com/v1", "Widget") is widget
    assert fake.calls == ["/apis/example.com/v1"]
    # add() overrides what discovery said, for the remembered kind too
    own = Resource("example.com", "v1", "Widget", "mywidgets", False)
    mapper.add(own)
    assert mapper.resource_for_object("example.com/v1", "Widget") is own
    # a refetch (a miss) and reset() forget the remembered kinds as well
    other = RestMapper(fake)
    first = other.resource_for_object("example.com/v1", "Gadget")
    fake.docs["/apis/example.com/v1"] = {
        **WIDGETS,
        "resources": [{"name": "gadgets2", "namespaced": True, "kind": "Gadget"}],
    }
    other.reset()
    assert (
        other.resource_for_object("example.com/v1", "Gadget").plural == "gadgets2" != first.plural
    )
    with pytest.raises(NoKindMatchError):
        other.resource_for_object("example.com/v1", "Sprocket")
