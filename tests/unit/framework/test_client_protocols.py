"""Every client implements the client protocols, proved by mypy.

The functions at the top of this module assign each implementation to the protocols of
:mod:`kube_runtime.client.interfaces` (``x: Client = rest_client`` style). Their bodies do
nothing at run time; :func:`test_mypy_proves_the_implementations_conform` type-checks this
file with the project's mypy settings (tests are outside mypy's ``packages``), and a
negative control shows that the check does reject a class missing a method. The run-time
tests complement it: ``isinstance`` with the ``runtime_checkable`` protocols and a
comparison of keyword parameters, which mypy does not compare by name for overloads.
"""

from __future__ import annotations

import inspect
import re
import typing
from pathlib import Path
from typing import Any, ClassVar, Unpack

import pytest
from kubernetes.client import Configuration
from pydantic import BaseModel

from kube_runtime import kinds
from kube_runtime.cache import InformerCache
from kube_runtime.client import Client as RestClient
from kube_runtime.client import ClientInterface, Resource
from kube_runtime.client import interfaces as i
from kube_runtime.client.cached import CachedClient
from kube_runtime.client.fake import FakeClient

ROOT = Path(__file__).resolve().parents[3]


class ConfigMapModel(BaseModel):
    """A typed ConfigMap, to check that model kinds give models back (statically)."""

    __kube_resource__: ClassVar[Resource] = Resource("", "v1", "ConfigMap", "configmaps", True)
    metadata: dict[str, Any]


# ------------------------------------------------------------------ static conformance


def _rest_conforms(rest: RestClient) -> None:
    client: i.Client = rest
    reader: i.Reader = rest
    writer: i.Writer = rest
    status: i.StatusWriter = rest.status()
    scale: i.SubResourceClient = rest.subresource("scale")
    del client, reader, writer, status, scale


def _cached_conforms(cached: CachedClient) -> None:
    with_watch: i.WithWatch = cached
    client: i.Client = cached
    reader: i.Reader = cached
    writer: i.Writer = cached
    status: i.StatusWriter = cached.status()
    scale: i.SubResourceClient = cached.subresource("scale")
    del with_watch, client, reader, writer, status, scale


def _fake_conforms(fake: FakeClient) -> None:
    client: i.Client = fake
    reader: i.Reader = fake
    writer: i.Writer = fake
    status: i.StatusWriter = fake.status()
    scale: i.SubResourceClient = fake.subresource("scale")
    exported: ClientInterface = fake
    del client, reader, writer, status, scale, exported


def _a_manager_runs_on_any_client_with_watch(rest: RestClient, fake: FakeClient) -> None:
    """The Manager takes the WithWatch protocol: the REST client and the fake alike, with no
    cast (a manager over a fake is built but never started, as webhook-config does)."""
    from kube_runtime.manager import Manager

    with_watch: i.WithWatch = fake
    Manager(rest, metrics_bind_address="0")
    Manager(fake, metrics_bind_address="0")
    del with_watch


def _protocol_results_are_typed(client: i.Client) -> None:
    """Overloads: a model kind gives the model, anything else a dict."""
    as_dict: dict[str, Any] = client.get(kinds.ConfigMap, "a", "ns")
    as_model: ConfigMapModel = client.get(ConfigMapModel, "a", "ns")
    created: ConfigMapModel = client.create(as_model)
    updated: dict[str, Any] = client.status().update(as_dict)
    patched: ConfigMapModel = client.patch(ConfigMapModel, "a", {"metadata": {}}, namespace="ns")
    listed: dict[str, Any] = client.list(kinds.ConfigMap, "ns", index=("label", "app=web"))
    scale: dict[str, Any] = client.subresource("scale").get(kinds.StatefulSet, "web", "ns")
    del created, updated, patched, listed, scale


# ------------------------------------------------------------------ the mypy run


_MISSING_A_METHOD = """
from typing import Any

from kube_runtime.client import interfaces
from kube_runtime.client.fake import FakeClient

class ReadOnly:  # a structural client that forgot everything but get
    def get(self, kind: Any, name: str, namespace: str | None = None) -> Any:
        return FakeClient().get(kind, name, namespace)

def check(c: ReadOnly) -> interfaces.Client:
    return c
"""

#: The methods take their keywords from one TypedDict per method
#: (:mod:`kube_runtime.client.options`): a keyword another method takes, a misspelt one or
#: a value of the wrong type is still an error.
_WRONG_KEYWORDS = """
from kube_runtime import kinds
from kube_runtime.client import interfaces

def use(c: interfaces.Client) -> None:
    c.status().patch(kinds.Pod, "p", {}, namespace="ns", subresource="scale")
    c.update({"kind": "Pod"}, namespace="ns")
    c.patch(kinds.Pod, "p", {}, namespace="ns", subresource="status")  # fine
    c.list(kinds.Pod, "ns", label_selector={"app": "web"}, limit=5)  # fine
    c.list(kinds.Pod, "ns", labelSelector="app=web")
    c.delete(kinds.Pod, "p", "ns", grace_period_seconds="30")
    c.subresource("scale").update({}, body={}, force=True)
"""


@pytest.fixture(scope="module")
def mypy_errors(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[str]]:
    """One mypy run (the project's strict settings, its cache from the project root) over
    this file and the two negative controls: each file's ``line: message`` errors, by name.
    A run per file paid mypy's start and the reading of the cache three times."""
    api = pytest.importorskip("mypy.api")
    directory = tmp_path_factory.mktemp("protocols")
    (directory / "incomplete_client.py").write_text(_MISSING_A_METHOD)
    (directory / "wrong_keywords.py").write_text(_WRONG_KEYWORDS)
    paths = [Path(__file__), directory / "incomplete_client.py", directory / "wrong_keywords.py"]
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(ROOT)  # mypy finds kube_runtime and its cache from the project root
        stdout, stderr, status = api.run(
            [*(str(p) for p in paths), "--config-file", str(ROOT / "pyproject.toml")]
        )
    errors: dict[str, list[str]] = {p.name: [] for p in paths}
    for line in stdout.splitlines():
        path, sep, rest = line.partition(":")
        if sep and ": error:" in rest:
            errors.setdefault(Path(path).name, []).append(rest.strip())
    assert status == (1 if any(errors.values()) else 0), stdout + stderr  # no crash
    assert any(errors.values()) or "Success" in stdout, stdout + stderr
    return errors


def test_mypy_proves_the_implementations_conform(mypy_errors: dict[str, list[str]]) -> None:
    negative = {"incomplete_client.py", "wrong_keywords.py"}
    assert {k: v for k, v in mypy_errors.items() if k not in negative and v} == {}


def test_mypy_rejects_a_client_missing_a_method(mypy_errors: dict[str, list[str]]) -> None:
    out = "\n".join(mypy_errors["incomplete_client.py"])
    assert "incompatible return value type" in out.lower(), out


def test_mypy_rejects_a_keyword_the_write_does_not_take(
    mypy_errors: dict[str, list[str]],
) -> None:
    errors = mypy_errors["wrong_keywords.py"]
    out = "\n".join(errors)
    lines = [e.split(":")[0] for e in errors if "Unexpected keyword" in e]
    assert lines == ["6", "7", "10", "12"], out
    mistyped = [e.split(":")[0] for e in errors if "incompatible type" in e]
    assert mistyped == ["11"], out


# ------------------------------------------------------------------ run time


@pytest.fixture
def rest() -> RestClient:
    return RestClient(Configuration(host="http://127.0.0.1:9"))  # never contacted


def _implementations(rest: RestClient) -> list[Any]:
    return [rest, CachedClient(rest, InformerCache(rest)), FakeClient()]


def test_every_implementation_is_a_client_at_run_time(rest: RestClient) -> None:
    for impl in _implementations(rest):
        assert isinstance(impl, ClientInterface)
        assert isinstance(impl, i.Reader) and isinstance(impl, i.Writer)
        assert isinstance(impl.status(), i.StatusWriter)
        assert isinstance(impl.subresource("scale"), i.SubResourceClient)


_PROTOCOL_METHODS = [
    (i.Reader, ("get", "list")),
    (i.Writer, ("create", "update", "patch", "apply", "delete", "delete_all_of")),
    (i.Client, ("status", "subresource")),
]


def _parameters(fn: Any) -> dict[str, tuple[Any, Any]]:
    """The parameters of ``fn`` by name, ``(kind, default)``, with ``**options:
    Unpack[SomeKeywords]`` expanded into one keyword-only parameter per key of the TypedDict
    (its default: ``"required"`` or ``"optional"``), so that a method spelling its keywords
    out and one taking them as a TypedDict compare alike."""
    params: dict[str, tuple[Any, Any]] = {}
    hints = typing.get_type_hints(fn)
    for name, p in inspect.signature(fn).parameters.items():
        if p.kind is not p.VAR_KEYWORD:
            if name != "self":
                optional = "optional" if p.kind is p.KEYWORD_ONLY else p.default
                params[name] = (p.kind, optional if p.default is not p.empty else "required")
            continue
        assert typing.get_origin(hints[name]) is Unpack, f"{fn.__qualname__}(**{name})"
        (keywords,) = typing.get_args(hints[name])
        for key in keywords.__required_keys__:
            params[key] = (p.KEYWORD_ONLY, "required")
        for key in keywords.__optional_keys__:
            params[key] = (p.KEYWORD_ONLY, "optional")
    return params


@pytest.mark.parametrize("index", [0, 1, 2], ids=["rest", "cached", "fake"])
def test_implementations_take_every_protocol_parameter(rest: RestClient, index: int) -> None:
    impl = _implementations(rest)[index]
    pairs = [(proto, name, impl) for proto, names in _PROTOCOL_METHODS for name in names]
    pairs += [(i.StatusWriter, name, impl.status()) for name in ("update", "patch")]
    pairs += [(i.SubResourceClient, n, impl.subresource("x")) for n in ("get", "update", "patch")]
    for proto, name, target in pairs:
        wanted = _parameters(getattr(proto, name))
        have = _parameters(getattr(target, name))
        for param, (kind, default) in wanted.items():
            assert param in have, f"{type(target).__name__}.{name} lacks {param}"
            assert have[param] == (kind, default), f"{type(target).__name__}.{name}({param})"


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda c: c.list(kinds.Pod, "ns", labelSelector="a=b"), "list() got an unexpected "),
        (lambda c: c.create({}, namespce="ns"), "create() got an unexpected keyword"),
        (lambda c: c.update({}, namespace="ns"), "update() got an unexpected keyword"),
        (lambda c: c.apply({}, force=True), "apply() missing 1 required keyword-only"),
        (lambda c: c.delete(kinds.Pod, "p", "ns", grace=0), "delete() got an unexpected"),
        (lambda c: c.delete_all_of(kinds.Pod, uid="u"), "delete_all_of() got an unexpected"),
        (lambda c: c.status().patch(kinds.Pod, "p", {}, subresource="x"), "patch() got an "),
        (lambda c: c.subresource("scale").update({}, bdy={}), "update() got an unexpected"),
    ],
)
def test_a_keyword_a_method_does_not_take_is_a_type_error(
    rest: RestClient, call: Any, message: str
) -> None:
    """The methods take their keywords as ``**options: Unpack[...Keywords]``: mypy rejects a
    wrong one, and so does the call at run time, before any request, as a plain signature
    would (a misspelt option is never silently ignored)."""
    for impl in _implementations(rest):
        with pytest.raises(TypeError, match=re.escape(message)):
            call(impl)


def test_rest_list_by_index_needs_a_cache(rest: RestClient) -> None:
    with pytest.raises(ValueError, match="index lookups need a cache-backed reader"):
        rest.list(kinds.Pod, "ns", index=("node", "n1"))


def test_a_subclass_of_a_mixin_gets_the_public_methods_from_its_hooks() -> None:
    """The mixins of kube_runtime.client.base gather the keywords and call the hooks."""
    from kube_runtime.client.base import ReaderMixin
    from kube_runtime.client.options import ListQuery

    calls: list[tuple[object, ...]] = []

    class Mini(ReaderMixin):
        def _do_get(self, kind: object, name: str, namespace: str | None) -> object:
            calls.append(("get", kind, name, namespace))
            return {"kind": "ConfigMap"}

        def _do_list(self, kind: object, namespace: str | None, query: ListQuery) -> Any:
            calls.append(("list", kind, namespace, query))
            return {"items": []}

    reader = Mini()
    assert isinstance(reader, i.Reader)
    assert reader.get("v1/ConfigMap", "a", "ns") == {"kind": "ConfigMap"}
    reader.list("v1/ConfigMap", "ns", label_selector={"app": "web"}, limit=3)
    assert calls == [
        ("get", "v1/ConfigMap", "a", "ns"),
        ("list", "v1/ConfigMap", "ns", ListQuery(label_selector={"app": "web"}, limit=3)),
    ]


@pytest.mark.parametrize(
    ("mixin", "hooks"),
    [
        ("ReaderMixin", {"_do_get", "_do_list"}),
        (
            "WriterMixin",
            {
                "_do_create",
                "_do_update",
                "_do_patch",
                "_do_apply",
                "_do_delete",
                "_do_delete_all_of",
            },
        ),
        ("StatusWriterMixin", {"_do_update", "_do_patch"}),
        ("SubResourceMixin", {"_do_get", "_do_update", "_do_patch"}),
    ],
)
def test_each_mixin_declares_the_hooks_it_calls_abstract(mixin: str, hooks: set[str]) -> None:
    """A subclass that forgets a hook cannot be made (mypy rejects it statically too)."""
    from kube_runtime.client import base

    cls = getattr(base, mixin)
    assert set(cls.__abstractmethods__) == hooks
    with pytest.raises(TypeError, match="abstract"):
        type("Forgetful", (cls,), {})()


def test_the_protocols_are_pure() -> None:
    """The protocols declare methods only: no hook is part of a protocol (a structural
    client implements the public methods alone), and none carries an implementation."""
    protocols = [i.Reader, i.Writer, i.StatusWriter, i.SubResourceClient, i.Client, i.WithWatch]
    for proto in protocols:
        members = proto.__protocol_attrs__ if hasattr(proto, "__protocol_attrs__") else set()
        assert not [m for m in members if m.startswith("_do_")], proto
        for name, fn in vars(proto).items():
            if inspect.isfunction(fn):
                source = inspect.getsource(fn)
                assert "_do_" not in source, f"{proto.__name__}.{name}"


def _public_types() -> list[Any]:
    from kube_runtime.client import base, cached, options

    return [
        *(getattr(i, n) for n in ("Reader", "Writer", "StatusWriter", "SubResourceClient")),
        i.Client,
        i.WithWatch,
        *(getattr(options, n) for n in ("ListQuery", "PatchOptions", "DeleteOptions")),
        *(getattr(options, n) for n in options.__all__ if n.endswith("Keywords")),
        *(getattr(base, n) for n in base.__all__),
        cached.CachedClient,
        cached.CacheReader,
        cached.SyncedInformer,
    ]


@pytest.mark.parametrize("cls", _public_types(), ids=lambda c: c.__qualname__)
def test_type_hints_resolve_at_run_time(cls: type) -> None:
    """``typing.get_type_hints`` resolves every public protocol, mixin and option record, and
    each of their methods: no name hides behind an import cycle (``ListQuery`` used to name
    ``interfaces.Selector`` under ``TYPE_CHECKING``)."""
    import typing

    typing.get_type_hints(cls)
    for name in dir(cls):
        member = inspect.getattr_static(cls, name)
        fn = member.fget if isinstance(member, property) else member
        if inspect.isfunction(fn) and fn.__module__.startswith("kube_runtime."):
            typing.get_type_hints(fn)


def test_list_query_fields_carry_the_option_types() -> None:
    import typing

    from kube_runtime.client.options import IndexKey, ListQuery, Selector

    hints = typing.get_type_hints(ListQuery)
    assert hints["label_selector"] == Selector | None
    assert hints["index"] == IndexKey | None
