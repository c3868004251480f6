"""FakeClient: an in-memory client with the API server's semantics, for unit tests.

:class:`FakeClient` implements :class:`kube_runtime.client.interfaces.Client`. It is not a
mock: objects live in a store with kube-apiserver's rules, so a reconciler under test meets
the same answers as on a cluster, in microseconds::

    fake = FakeClient(objects=[sts, pod])
    Reconciler(fake).reconcile(Request("web", "ns"))
    assert fake.get(kinds.StatefulSet, "web", "ns")["status"]["replicas"] == 1
    assert [a.verb for a in fake.actions if a.subresource == "status"] == ["update"]

What it does as the API server does (the embedded cluster is the referee, see
``tests/e2e/test_client_protocols_e2e.py``):

* **Versions**: one global ``resourceVersion`` counter (strings); every write that changes
  something takes the next one, a write that changes nothing stores nothing. ``update`` with
  a stale ``resourceVersion`` -> ``Conflict`` ("the object has been modified; ...");
  without one the update is unconditional (built-in kinds; custom kinds require one, as
  the server does -> ``Invalid``). A ``metadata.resourceVersion`` in a patch is a
  precondition; ``metadata.uid`` in an update is a precondition too.
* **Create** assigns ``uid``, ``creationTimestamp``, a name from ``generateName`` (5
  characters of upstream's alphabet), ``metadata.generation = 1`` for kinds that track
  generations (workloads, Ingresses, NetworkPolicies, EndpointSlices, CRDs, every custom
  kind; a PriorityClass gets 1 and keeps it; not ConfigMaps or Pods, as on the server), and
  drops ``status`` of kinds with a status subresource (Pods, PersistentVolumeClaims,
  StatefulSets, Deployments and ReplicaSets get the server's initial status instead, e.g. a
  Pod's ``phase: Pending`` and its ``qosClass``). ``AlreadyExists`` for a taken name,
  ``Invalid`` for a missing or malformed name (by the kind's rule: a Service's is a DNS-1035
  label, an RBAC object's a path segment, most a DNS-1123 subdomain).
* **Empty metadata**: ``labels: {}``, ``annotations: {}``, ``finalizers: []``,
  ``ownerReferences: []`` (or ``null``) and ``generateName: ""`` are dropped on every write,
  of built-in kinds and custom resources alike, as kube-apiserver's encoding of ObjectMeta
  drops them (a ConfigMap's or Secret's empty ``data`` too).
* **Generation** moves when anything outside ``metadata`` and ``status`` changes.
* **Status subresource**: for the kinds that have one, ``update``/``patch`` ignore status
  changes and ``status()`` writes change only ``status`` (metadata as the server's status
  strategies do). Kinds with one: the built-ins that have one and registered kinds with
  ``status=True`` - or exactly ``status_subresource_kinds`` when that is given.
* **Delete**: an object with finalizers gets ``deletionTimestamp`` and
  ``deletionGracePeriodSeconds: 0`` and stays (no new finalizers may be added) until an
  update or patch removes its last finalizer; then it is gone. Preconditions (``uid``,
  ``resource_version``) -> ``Conflict`` with the server's wording. Answers as the server
  does: a ``Status`` (``Success``), the object for pods, services, namespaces, ...
* **Lists**: sorted by namespace and name, with label selectors (text or ``{k: v}``) and
  field selectors (``metadata.name``, ``metadata.namespace`` and each kind's own, as
  :func:`kube_runtime.selectors.object_fields` extracts them; others -> ``BadRequest``), and
  ``index=(name, value)`` over indexes added with :meth:`FakeClient.add_index` (the
  function shape of ``InformerCache.add_indexer``) plus the cache's built-in
  ``namespace``, ``controller-uid`` and ``label`` indexes.
* **Patches**: merge, json, strategic (:mod:`kube_runtime.patch` with the kind's schema;
  custom kinds -> 415 UnsupportedMediaType as the server) and apply.
* **Scale**: ``subresource("scale")`` get/update/patch for StatefulSets, Deployments,
  ReplicaSets and registered kinds with :class:`ScalePaths`.
* **Errors** carry the server's Status (``configmaps "x" not found``, details) and are the
  typed errors of :mod:`kube_runtime.client.errors`; the client-side checks (namespace
  required, patch type, json patch shape) raise what the REST client raises.
* **One home for the server's facts**: the Status of each error, :data:`STALE_MESSAGE`, which
  built-in kinds track generations or answer a DELETE with the object, and the initial
  status of a created object come from :mod:`kube_runtime.client._apifacts`, which the
  embedded server of :mod:`kube_runtime.envtest` uses too
  (``tests/unit/framework/test_apiserver_facts.py`` checks that both give the same answers).
* **Isolation**: objects are deep-copied in and out; callers may mutate what they get.
  One lock makes every call atomic (thread-safe).

Test helpers: :meth:`FakeClient.objects` (the stored objects of a kind),
:attr:`FakeClient.actions` (every call received, as :class:`Action`), fault injection with
``interceptor=`` / :meth:`FakeClient.intercept` (hooks per method, see
:mod:`kube_runtime.client.interceptor`) and :meth:`FakeClient.fail_next`. Calls made
through :attr:`FakeClient.direct` (what hooks receive) are neither recorded nor
intercepted: use it to seed or inspect state mid-test.

Not modelled (use the embedded cluster of :mod:`kube_runtime.envtest` for these):
``watch`` (raises ``NotImplementedError``); garbage collection and deletion propagation
(``propagation_policy`` is validated, then the object goes as with ``Background``, and
dependents stay); graceful pod deletion (pods go at once: there is no kubelet); field
ownership of server-side apply (``apply`` merges the applied object as a strategic merge
patch for built-in kinds, a merge patch for custom ones: a field the manager stops applying
is not removed, new list items come first where the server appends them, ``force`` is
ignored); ``managedFields`` (no write sets them, whatever its ``field_manager``); defaulting
of spec fields (a Pod's ``restartPolicy``, a StatefulSet's ``podManagementPolicy``) and
validation beyond names and finalizers;
CRD schemas: a registered custom kind has none, so its objects are neither validated
(types, required fields, bounds, patterns, enums -> no ``Invalid``), nor pruned (unknown
fields are kept), nor defaulted (a schema's ``default``), where kube-apiserver does all three
(a typed reconciler test may pass here on objects the server would refuse or change: check
them on the embedded cluster); namespaces need not exist; ``limit`` and
``resource_version`` of ``list`` are accepted and ignored (every match is returned, like the
REST client that pages through them).
"""

from __future__ import annotations

import builtins
import copy
import dataclasses
import datetime as _dt
import secrets
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any, NoReturn, Self, TypeVar, Unpack

from pydantic import BaseModel

from kube_runtime.client import _apifacts as facts
from kube_runtime.client._apifacts import STALE_MESSAGE
from kube_runtime.client._indexes import BUILTIN_INDEXES, IndexFunc
from kube_runtime.client._registry import (
    ScalePaths,
    deleted_status,
    drop_empty_collections,
    drop_empty_metadata,
    merge_update,
    scale_of,
)
from kube_runtime.client.base import ClientBase, StatusWriterMixin, SubResourceMixin
from kube_runtime.client.errors import ApiError
from kube_runtime.client.interceptor import (
    VERBS,
    Action,
    ErrorSource,
    FaultKeywords,
    FaultQueue,
    Interceptor,
)
from kube_runtime.client.interfaces import (
    IndexKey,
    ObjectLike,
    PatchBody,
    Selector,
    StatusWriter,
    SubResourceClient,
)
from kube_runtime.client.mapping import BUILTIN_RESOURCES, Resource, RestMapper, model_class
from kube_runtime.client.options import DeleteOptions, ListQuery, PatchOptions
from kube_runtime.kinds import Kind, KindLike, as_kind, kind_for
from kube_runtime.meta import Obj
from kube_runtime.patch import (
    PatchError,
    apply_json_patch,
    apply_merge_patch,
    apply_strategic_merge_patch,
    strategic_schema_for,
)
from kube_runtime.selectors import (
    FieldSelector,
    LabelSelector,
    SelectorError,
    object_fields,
    parse_field_selector,
    parse_label_selector,
    unsupported_field_label,
)
from kube_runtime.validation import no_new_finalizers_message

__all__ = [
    "STALE_MESSAGE",
    "VERBS",
    "Action",
    "ErrorSource",
    "FakeClient",
    "Interceptor",
    "ScalePaths",
    "already_exists",
    "conflict",
    "not_found",
]

M = TypeVar("M", bound=BaseModel)

_NAME_SUFFIX_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
_PATCH_TYPES = ("merge", "strategic", "json", "apply")
_PROPAGATION_POLICIES = (None, "Orphan", "Background", "Foreground")

_BUILTIN: dict[Kind, Resource] = {r.kind_ref: r for r in BUILTIN_RESOURCES}
#: Metadata a create cannot set.
_SERVER_SET_ON_CREATE = (
    "uid",
    "resourceVersion",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "selfLink",
)


@dataclass(frozen=True)
class _KindInfo:
    """How the fake serves one kind."""

    resource: Resource
    custom: bool
    status: bool
    generation: bool
    scale: ScalePaths | None

    @property
    def kind(self) -> Kind:
        return self.resource.kind_ref

    @property
    def key(self) -> tuple[str, str]:
        """``(group, plural)``: the key of kube-apiserver's per-kind tables."""
        return (self.resource.group, self.resource.plural)


# ------------------------------------------------------------------------------ errors


def _resource_of(kind: KindLike | Resource) -> Resource:
    if isinstance(kind, Resource):
        return kind
    own = getattr(kind, "__kube_resource__", None) if isinstance(kind, type) else None
    if isinstance(own, Resource):
        return own
    return RestMapper(None).resource_for(kind)


# The Status of each error is kube-apiserver's, from kube_runtime.client._apifacts (the
# embedded server takes it from there too); these take a kind, a model class or a Resource.


def not_found(kind: KindLike | Resource, name: str) -> ApiError:
    """The server's 404 for object ``name`` of ``kind`` (``pods "x" not found``).

    ``kind`` is a built-in kind, a model class or a :class:`Resource` (for other kinds).
    """
    r = _resource_of(kind)
    return facts.not_found(facts.resource_name(r.plural, r.group), r.group, name)


def already_exists(kind: KindLike | Resource, name: str) -> ApiError:
    """The server's 409 AlreadyExists for a create of a taken name."""
    r = _resource_of(kind)
    return facts.already_exists(facts.resource_name(r.plural, r.group), r.group, name)


def conflict(kind: KindLike | Resource, name: str, why: str = STALE_MESSAGE) -> ApiError:
    """The server's 409 Conflict (by default: a stale resourceVersion), e.g. for
    :meth:`FakeClient.fail_next`."""
    r = _resource_of(kind)
    return facts.conflict(facts.resource_name(r.plural, r.group), r.group, name, why)


def _invalid(info: _KindInfo, name: str, causes: list[tuple[str, str, str]]) -> ApiError:
    """422 with ``(field, reason, message)`` causes, worded as kube-apiserver's."""
    r = info.resource
    return facts.invalid(r.kind, r.group, name, [facts.Cause(f, why, m) for f, why, m in causes])


# ------------------------------------------------------------------------------ helpers


def _decode(model: type[BaseModel] | None, data: Obj) -> Any:
    return model.model_validate(data) if model is not None else data


def _to_dict(obj: object) -> Obj:
    """A private deep copy of ``obj``'s JSON form (a dict, or a model dumped as the REST
    client dumps it)."""
    if isinstance(obj, BaseModel):
        return obj.model_dump(mode="json", by_alias=True, exclude_unset=True)
    if isinstance(obj, Mapping):
        return copy.deepcopy(dict(obj))
    raise TypeError(f"expected a dict or a resource model, got {type(obj).__name__}")


def _meta(obj: Obj) -> Obj:
    meta = obj.get("metadata")
    if not isinstance(meta, dict):
        meta = {}
        obj["metadata"] = meta
    return meta


def _selector_text(value: Selector | None) -> str:
    if value is None or isinstance(value, str):
        return value or ""
    return ",".join(f"{k}={v}" for k, v in value.items())


def _set_path(obj: Obj, path: str, value: Any) -> None:
    parts = path.split(".")
    target = obj
    for part in parts[:-1]:
        child = target.get(part)
        child = dict(child) if isinstance(child, dict) else {}
        target[part] = child
        target = child
    target[parts[-1]] = value


def _spec_changed(old: Obj, new: Obj) -> bool:
    keys = (set(old) | set(new)) - {"metadata", "status"}
    return any(old.get(k) != new.get(k) for k in keys)


def _plural(kind: str) -> str:
    lower = kind.lower()
    if lower.endswith(("s", "x", "z", "ch", "sh")):
        return lower + "es"
    if lower.endswith("y") and lower[-2:-1] not in tuple("aeiou"):
        return lower[:-1] + "ies"
    return lower + "s"


def _check_patch_options(
    patch: object, patch_type: str, field_manager: str | None, force: bool | None
) -> None:
    """The REST client's own checks, raised the same way before anything is touched."""
    if patch_type not in _PATCH_TYPES:
        raise ValueError(f"patch_type must be one of {sorted(_PATCH_TYPES)}: {patch_type!r}")
    if patch_type == "json" and not isinstance(patch, list | tuple):
        raise TypeError("a json patch is a list of operations")
    if patch_type == "apply":
        if not field_manager:
            raise ValueError("a server-side apply patch needs field_manager")
    elif force is not None:
        raise ValueError("force is only valid for patch_type='apply'")


def _patch_doc(patch: object, patch_type: str) -> Any:
    if patch_type == "json":
        assert isinstance(patch, list | tuple)
        return [_to_dict(op) for op in patch]
    return _to_dict(patch)


# ------------------------------------------------------------------------------ state


class _State:
    """Everything a FakeClient and its views share (guarded by ``lock``)."""

    def __init__(
        self,
        status_kinds: frozenset[Kind] | None,
        interceptor: Interceptor | None,
        clock: Callable[[], float],
    ) -> None:
        self.lock = threading.RLock()
        self.mapper = RestMapper(None)
        self.registered: dict[Kind, _KindInfo] = {}
        self.status_kinds = status_kinds
        self.objects: dict[Kind, dict[tuple[str, str], Obj]] = {}
        self.indexes: dict[Kind, dict[str, IndexFunc]] = {}
        self.rv = 0
        self.actions: list[Action] = []
        self.faults = FaultQueue()
        self.interceptor = interceptor
        self.clock = clock


class FakeClient(ClientBase):
    """An in-memory :class:`~kube_runtime.client.interfaces.Client` with API semantics.

    ``objects``: the initial state (dicts or models). They are stored as given - status,
    uid, creationTimestamp, finalizers and a ``deletionTimestamp`` (with finalizers) kept,
    a fresh ``resourceVersion`` - so a test can start from any state.
    ``status_subresource_kinds``: the kinds whose status is a subresource. Default: the
    built-in kinds that have one. When given, the built-in kinds not listed have none;
    registered kinds have one when listed or registered with ``status=True`` (the default).
    ``interceptor``: hooks replacing calls (:class:`Interceptor`). ``clock``: seconds since
    the epoch for timestamps.

    See the module docstring for the semantics and what is not modelled.
    """

    def __init__(
        self,
        objects: Iterable[ObjectLike] = (),
        *,
        status_subresource_kinds: Iterable[KindLike] | None = None,
        interceptor: Interceptor | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._s = _State(None, interceptor, clock)
        self._front = True
        if status_subresource_kinds is not None:
            self._s.status_kinds = frozenset(
                self._note_model(k) or as_kind(k) for k in status_subresource_kinds
            )
        self.with_objects(*objects)

    @classmethod
    def _view(cls, state: _State, front: bool) -> FakeClient:
        view = cls.__new__(cls)
        view._s = state
        view._front = front
        return view

    # --------------------------------------------------------------- configuration

    def with_objects(self, *objects: ObjectLike) -> Self:
        """Add objects to the state as given (see the class docstring); returns self."""
        for obj in objects:
            self._seed(obj)
        return self

    def register(
        self,
        kind: KindLike,
        plural: str | None = None,
        *,
        namespaced: bool | None = None,
        status: bool | None = None,
        scale_paths: ScalePaths | None = None,
    ) -> Self:
        """Serve a custom kind (a ``Kind``, ``"group/version/Kind"`` or a model class).

        Defaults come from a model class's ``__kube_resource__``, else: ``plural`` the
        lower-case kind pluralised, ``namespaced`` True, ``status`` True. ``scale_paths``
        gives the kind a ``scale`` subresource (a model with one gets the default paths).
        Custom kinds behave as custom resources on the server: generation tracked, updates
        need a ``resourceVersion``, no strategic merge patch.
        """
        own = getattr(kind, "__kube_resource__", None) if isinstance(kind, type) else None
        ref = as_kind(kind)
        base = own if isinstance(own, Resource) else None
        subresources = set(base.subresources if base is not None else ("status",))
        if status is not None:
            subresources.discard("status")
            if status:
                subresources.add("status")
        if scale_paths is not None:
            subresources.add("scale")
        elif "scale" in subresources:
            scale_paths = ScalePaths()
        group, _, version = ref.api_version.rpartition("/")
        resource = Resource(
            group=group,
            version=version,
            kind=ref.kind,
            plural=plural or (base.plural if base is not None else _plural(ref.kind)),
            namespaced=namespaced
            if namespaced is not None
            else (base.namespaced if base is not None else True),
            subresources=frozenset(subresources),
            short_names=base.short_names if base is not None else (),
        )
        with self._s.lock:
            self._s.mapper.add(resource)
            has_status = "status" in subresources
            if self._s.status_kinds is not None and status is not None:
                kinds = set(self._s.status_kinds)
                (kinds.add if has_status else kinds.discard)(ref)
                self._s.status_kinds = frozenset(kinds)
            self._s.registered[ref] = _KindInfo(
                resource=resource,
                custom=ref not in _BUILTIN,
                status=has_status,
                generation=ref not in _BUILTIN
                or (group, resource.plural) in facts.TRACKS_GENERATION,
                scale=scale_paths,
            )
        return self

    def add_index(self, kind: KindLike, name: str, fn: IndexFunc) -> None:
        """Add index ``name`` on ``kind`` for ``list(index=(name, value))``: ``fn(obj)``
        returns the index values of an object (``InformerCache.add_indexer``'s shape).
        ``ValueError`` if the kind has an index of that name already (built-ins included)."""
        ref = self._info(kind).kind
        with self._s.lock:
            indexes = self._s.indexes.setdefault(ref, {})
            if name in indexes or name in BUILTIN_INDEXES:
                raise ValueError(f"indexer {name!r} already exists")
            indexes[name] = fn

    def intercept(self, interceptor: Interceptor | None) -> Self:
        """Replace the interceptor (None removes it); returns self."""
        self._s.interceptor = interceptor
        return self

    def fail_next(self, method: str, error: ErrorSource, **options: Unpack[FaultKeywords]) -> None:
        """Make the next ``times`` calls of ``method`` (a verb: ``"update"``, ...) for which
        ``when(action)`` holds raise ``error`` (an exception, or a function of the
        :class:`Action` returning one) without running. The calls are still recorded."""
        self._s.faults.add(method, error, **options)

    @property
    def direct(self) -> FakeClient:
        """This fake without interception, injected faults or recording (what hooks get)."""
        return FakeClient._view(self._s, front=False)

    @property
    def mapper(self) -> RestMapper:
        """Kind -> resource for the kinds this fake serves (built-ins and registered)."""
        return self._s.mapper

    # --------------------------------------------------------------- inspection

    @property
    def actions(self) -> builtins.list[Action]:
        """Every call received so far (oldest first; a copy), failed ones included."""
        with self._s.lock:
            return list(self._s.actions)

    def clear_actions(self) -> None:
        """Forget the recorded actions."""
        with self._s.lock:
            self._s.actions.clear()

    def objects(self, kind: KindLike, namespace: str | None = None) -> builtins.list[Obj]:
        """Copies of the stored objects of ``kind`` (in ``namespace``), by namespace and name."""
        info = self._info(kind)
        with self._s.lock:
            bucket = self._s.objects.get(info.kind, {})
            return [
                copy.deepcopy(bucket[key])
                for key in sorted(bucket)
                if namespace is None or key[0] == namespace
            ]

    @property
    def resource_version(self) -> str:
        """The latest resourceVersion handed out."""
        with self._s.lock:
            return str(self._s.rv)

    # --------------------------------------------------------------- the front door

    def _door(self, action: Action, hook_name: str) -> Any:
        """Record the call, raise an injected fault, or return the hook to call (None: run)."""
        if not self._front:
            return None
        with self._s.lock:
            self._s.actions.append(action)
        error = self._s.faults.take(action)
        if error is not None:
            raise error
        interceptor = self._s.interceptor
        return getattr(interceptor, hook_name) if interceptor is not None else None

    @staticmethod
    def _action_of(
        verb: str, obj: ObjectLike, namespace: str | None = None, subresource: str | None = None
    ) -> Action:
        body = _to_dict(obj)
        meta = _meta(body)
        return Action(
            verb,
            as_kind(kind_for(obj)),
            namespace or meta.get("namespace"),
            meta.get("name") or None,
            subresource,
            obj=body,
        )

    # --------------------------------------------------------------- reads

    def _do_get(self, kind: KindLike, name: str, namespace: str | None) -> Any:
        # A copy of the stored object.
        hook = self._door(Action("get", as_kind(kind), namespace, name), "get")
        if hook is not None:
            return hook(self.direct, kind, name, namespace)
        info = self._info(kind)
        with self._s.lock:
            current = self._current(info, self._namespace(info, namespace, "get"), name)
            return _decode(model_class(kind), copy.deepcopy(current))

    def _do_list(self, kind: KindLike, namespace: str | None, query: ListQuery) -> Obj:
        # ``limit`` and the resource versions are ignored.
        hook = self._door(Action("list", as_kind(kind), namespace), "list")
        if hook is not None:
            return hook(self.direct, kind, namespace, **dataclasses.asdict(query))
        info = self._info(kind)
        with self._s.lock:
            items = [
                copy.deepcopy(obj)
                for obj in self._select(
                    info, namespace, query.label_selector, query.field_selector, query.index
                )
            ]
            rv = str(self._s.rv)
        model = model_class(kind)
        return {
            "apiVersion": info.resource.api_version,
            "kind": info.resource.list_kind,
            "metadata": {"resourceVersion": rv},
            "items": items if model is None else [model.model_validate(i) for i in items],
        }

    # --------------------------------------------------------------- writes

    def _do_create(
        self, obj: ObjectLike, namespace: str | None, field_manager: str | None, dry_run: bool
    ) -> Any:
        # ``field_manager`` is accepted and ignored (no managedFields here).
        hook = self._door(self._action_of("create", obj, namespace), "create")
        if hook is not None:
            return hook(
                self.direct, obj, namespace=namespace, field_manager=field_manager, dry_run=dry_run
            )
        info = self._info(kind_for(obj))
        body = _to_dict(obj)
        with self._s.lock:
            created = self._create(info, body, namespace, dry_run)
        return _decode(model_class(type(obj)), created)

    def _do_update(self, obj: ObjectLike, field_manager: str | None, dry_run: bool) -> Any:
        hook = self._door(self._action_of("update", obj), "update")
        if hook is not None:
            return hook(self.direct, obj, field_manager=field_manager, dry_run=dry_run)
        return self._update(obj, None, dry_run)

    def _do_patch(self, kind: KindLike, name: str, patch: PatchBody, options: PatchOptions) -> Any:
        action = Action("patch", as_kind(kind), options.namespace, name, options.subresource, patch)
        hook = self._door(action, "patch")
        if hook is not None:
            return hook(self.direct, kind, name, patch, **options.keywords())
        data = self._patch(kind, name, patch, options)
        return _decode(model_class(kind) if options.subresource != "scale" else None, data)

    def _do_apply(self, obj: ObjectLike, field_manager: str, force: bool, dry_run: bool) -> Any:
        # Simplified server-side apply (see the module docstring): create, or merge ``obj``
        # into the stored object.
        hook = self._door(self._action_of("apply", obj), "apply")
        if hook is not None:
            return hook(self.direct, obj, field_manager=field_manager, force=force, dry_run=dry_run)
        if not field_manager:
            raise ValueError("a server-side apply patch needs field_manager")
        info = self._info(kind_for(obj))
        body = _to_dict(obj)
        body.setdefault("apiVersion", info.resource.api_version)
        body.setdefault("kind", info.resource.kind)
        name = _meta(body).get("name")
        if not name:
            raise ValueError(f"{info.resource.kind}: metadata.name is required")
        namespace = self._namespace(info, _meta(body).get("namespace"), "patch")
        with self._s.lock:
            applied = self._apply(info, namespace, str(name), body, dry_run)
        return _decode(model_class(type(obj)), applied)

    def _do_delete(
        self, kind: KindLike, name: str, namespace: str | None, options: DeleteOptions
    ) -> Obj:
        # ``grace_period_seconds`` is accepted and ignored (nothing waits: no kubelet).
        hook = self._door(Action("delete", as_kind(kind), namespace, name), "delete")
        if hook is not None:
            return hook(self.direct, kind, name, namespace, **dataclasses.asdict(options))
        info = self._info(kind)
        ns = self._namespace(info, namespace, "delete")
        self._check_propagation(options.propagation_policy)
        uid, rv, dry_run = options.uid, options.resource_version, options.dry_run
        with self._s.lock:
            final, removed = self._delete(info, ns, name, uid, rv, dry_run)
        if not removed:
            return final
        if info.key not in facts.RETURN_DELETED_OBJECT:
            r = info.resource
            return deleted_status(r.group, r.plural, name, _meta(final).get("uid"))
        if info.kind == Kind("v1", "Pod") and not _meta(final).get("deletionTimestamp"):
            meta = {**_meta(final), "deletionTimestamp": self._now()}
            meta["deletionGracePeriodSeconds"] = 0
            return {**final, "metadata": meta}
        return final

    def _do_delete_all_of(
        self, kind: KindLike, namespace: str | None, query: ListQuery, options: DeleteOptions
    ) -> Obj:
        hook = self._door(Action("delete_all_of", as_kind(kind), namespace), "delete_all_of")
        if hook is not None:
            # delete_all_of takes the selectors and no preconditions
            selection = {
                "label_selector": query.label_selector,
                "field_selector": query.field_selector,
            }
            deletion = dataclasses.asdict(options)
            del deletion["uid"], deletion["resource_version"]
            return hook(self.direct, kind, namespace, **selection, **deletion)
        info = self._info(kind)
        ns = self._namespace(info, namespace, "delete_all_of")
        self._check_propagation(options.propagation_policy)
        selected = (info, ns or None, query.label_selector, query.field_selector, None)
        with self._s.lock:
            # The server answers the list taken before deleting (no deletion marks), at its
            # resourceVersion; its items carry no apiVersion/kind.
            rv = str(self._s.rv)
            items = []
            for obj in self._select(*selected):
                meta = obj["metadata"]
                items.append(
                    {k: copy.deepcopy(v) for k, v in obj.items() if k not in ("apiVersion", "kind")}
                )
                ns_, name = meta.get("namespace", ""), meta["name"]
                self._delete(info, ns_, name, None, None, options.dry_run)
        return {
            "apiVersion": info.resource.api_version,
            "kind": info.resource.list_kind,
            "metadata": {"resourceVersion": rv},
            "items": items,
        }

    def watch(self, kind: KindLike, namespace: str | None = None, **options: Any) -> NoReturn:
        """Not modelled: raises ``NotImplementedError``."""
        raise NotImplementedError(
            "FakeClient does not serve watches: test informers, caches and controllers "
            "against the embedded cluster (kube_runtime.envtest, the `client` fixture)"
        )

    # --------------------------------------------------------------- subresources

    def status(self) -> StatusWriter:
        """The status subresource writer (see ``interfaces.StatusWriter``)."""
        return _FakeStatusWriter(self)

    def subresource(self, name: str) -> SubResourceClient:
        """A client of subresource ``name``: ``status`` or ``scale`` (others: ``NotFound``)."""
        if not name or "/" in name:
            raise ValueError(f"not a subresource name: {name!r}")
        return _FakeSubResource(self, name)

    def __repr__(self) -> str:
        with self._s.lock:
            count = sum(len(bucket) for bucket in self._s.objects.values())
        return f"FakeClient({count} objects, resourceVersion {self._s.rv})"

    # =============================================================== internals

    def _now(self) -> str:
        moment = _dt.datetime.fromtimestamp(int(self._s.clock()), _dt.UTC)
        return moment.strftime("%Y-%m-%dT%H:%M:%SZ")

    def _next_rv(self) -> str:
        self._s.rv += 1
        return str(self._s.rv)

    def _note_model(self, kind: KindLike) -> Kind | None:
        """Register a model class's kind on first sight (a kind not served yet)."""
        own = getattr(kind, "__kube_resource__", None) if isinstance(kind, type) else None
        if not isinstance(own, Resource):
            return None
        ref = own.kind_ref
        if ref not in _BUILTIN and ref not in self._s.registered:
            self.register(kind)
        return ref

    def _info(self, kind: KindLike) -> _KindInfo:
        """How ``kind`` is served; ``NoKindMatchError`` for a kind neither built in nor
        registered."""
        self._note_model(kind)
        if isinstance(kind, type):
            kind = as_kind(kind)
        resource = self._s.mapper.resource_for(kind)
        ref = resource.kind_ref
        info = self._s.registered.get(ref)
        if info is None:
            info = _KindInfo(
                resource=resource,
                custom=False,
                status="status" in resource.subresources,
                generation=(resource.group, resource.plural) in facts.TRACKS_GENERATION,
                scale=ScalePaths() if "scale" in resource.subresources else None,
            )
        chosen = self._s.status_kinds
        if chosen is not None:
            # Chosen kinds have one; others keep what register() gave them (built-ins: none).
            listed = ref in chosen
            info = replace(info, status=listed or (ref in self._s.registered and info.status))
        return info

    @staticmethod
    def _namespace(info: _KindInfo, namespace: str | None, verb: str) -> str:
        """The namespace a call addresses ("" for cluster-scoped kinds)."""
        if not info.resource.namespaced:
            return ""
        if not namespace:
            raise ValueError(
                f"{verb} {info.resource.kind}: a namespace is required (namespaced kind)"
            )
        return namespace

    @staticmethod
    def _check_propagation(policy: str | None) -> None:
        if policy not in _PROPAGATION_POLICIES:
            raise facts.bad_request(f"invalid propagationPolicy: {policy}")

    def _bucket(self, info: _KindInfo) -> dict[tuple[str, str], Obj]:
        return self._s.objects.setdefault(info.kind, {})

    def _current(self, info: _KindInfo, namespace: str, name: str) -> Obj:
        obj = self._s.objects.get(info.kind, {}).get((namespace, name))
        if obj is None:
            raise not_found(info.resource, name)
        return obj

    def _name_causes(self, info: _KindInfo, meta: Obj) -> builtins.list[tuple[str, str, str]]:
        name = meta.get("name")
        if not name:
            return [
                (
                    "metadata.name",
                    "FieldValueRequired",
                    "Required value: name or generateName is required",
                )
            ]
        if not isinstance(name, str):
            return [("metadata.name", "FieldValueInvalid", "Invalid value: must be a string")]
        r = info.resource
        rule = "subdomain" if info.custom else facts.name_rule(r.group, r.kind)
        return [
            ("metadata.name", "FieldValueInvalid", f"Invalid value: {facts.go_quote(name)}: {msg}")
            for msg in facts.name_errors(rule, name)
        ]

    # --------------------------------------------------------------- seeding

    def _seed(self, obj: ObjectLike) -> None:
        info = self._info(kind_for(obj))
        body = _to_dict(obj)
        body["apiVersion"] = info.resource.api_version
        body["kind"] = info.resource.kind
        meta = _meta(body)
        name = meta.get("name")
        if not name:
            raise ValueError(f"{info.resource.kind}: an initial object needs metadata.name")
        if info.resource.namespaced:
            if not meta.get("namespace"):
                raise ValueError(
                    f"{info.resource.kind} {name!r}: a namespaced initial object needs "
                    "metadata.namespace"
                )
        else:
            meta.pop("namespace", None)
        if meta.get("deletionTimestamp") and not meta.get("finalizers"):
            raise ValueError(
                f"{info.resource.kind} {name!r}: an object with a deletionTimestamp but no "
                "finalizers would be gone already"
            )
        with self._s.lock:
            bucket = self._bucket(info)
            key = (meta.get("namespace", ""), str(name))
            if key in bucket:
                raise already_exists(info.resource, str(name))
            meta.setdefault("uid", str(uuid.uuid4()))
            meta.setdefault("creationTimestamp", self._now())
            if meta.get("deletionTimestamp"):
                meta.setdefault("deletionGracePeriodSeconds", 0)
            if info.generation or info.key in facts.GENERATION_ON_CREATE_ONLY:
                meta.setdefault("generation", 1)
            meta["resourceVersion"] = self._next_rv()
            bucket[key] = body

    # --------------------------------------------------------------- selection

    def _select(
        self,
        info: _KindInfo,
        namespace: str | None,
        label_selector: Selector | None,
        field_selector: Selector | None,
        index: IndexKey | None,
    ) -> builtins.list[Obj]:
        """The stored objects matching every filter (lock held), by namespace and name."""
        labels: LabelSelector | None = None
        fields: FieldSelector | None = None
        try:
            text = _selector_text(label_selector)
            if text:
                labels = parse_label_selector(text)
            text = _selector_text(field_selector)
            if text:
                fields = parse_field_selector(text)
                # A kind accepts the fields object_fields extracts for it, as the server.
                allowed = object_fields({"kind": info.resource.kind})
                for field_name, _, _ in fields.terms:
                    if field_name not in allowed:
                        raise SelectorError(
                            unsupported_field_label(
                                info.resource.group,
                                info.resource.kind,
                                field_name,
                                custom=info.custom,
                            )
                        )
        except SelectorError as err:
            raise facts.bad_request(str(err)) from None
        index_fn: IndexFunc | None = None
        if index is not None:
            index_name, _ = index
            index_fn = self._s.indexes.get(info.kind, {}).get(index_name)
            index_fn = index_fn or BUILTIN_INDEXES.get(index_name)
            if index_fn is None:
                raise KeyError(f"index {index_name!r} does not exist")
        bucket = self._s.objects.get(info.kind, {})
        out = []
        for key in sorted(bucket):
            obj = bucket[key]
            if namespace and info.resource.namespaced and key[0] != namespace:
                continue
            if labels is not None and not labels.matches(obj["metadata"].get("labels")):
                continue
            if fields is not None and not fields.matches(object_fields(obj)):
                continue
            if (
                index_fn is not None
                and index is not None
                and index[1] not in index_fn(copy.deepcopy(obj))
            ):
                continue
            out.append(obj)
        return out

    # --------------------------------------------------------------- create / update

    def _create(self, info: _KindInfo, body: Obj, namespace: str | None, dry_run: bool) -> Obj:
        """Create ``body`` (a private copy) under the lock; returns a copy of the result."""
        body["apiVersion"] = info.resource.api_version
        body["kind"] = info.resource.kind
        meta = _meta(body)
        ns = self._namespace(info, namespace or meta.get("namespace"), "create")
        if info.resource.namespaced:
            if meta.get("namespace") and meta["namespace"] != ns:
                raise facts.bad_request(
                    "the namespace of the provided object does not match the namespace sent "
                    "on the request"
                )
            meta["namespace"] = ns
        else:
            meta.pop("namespace", None)
        for name in _SERVER_SET_ON_CREATE:
            meta.pop(name, None)
        bucket = self._bucket(info)
        if not meta.get("name") and meta.get("generateName"):
            meta["name"] = self._generate_name(bucket, ns, str(meta["generateName"]))
        causes = self._name_causes(info, meta)
        name = str(meta.get("name") or "")
        if causes:
            raise _invalid(info, name, causes)
        meta["uid"] = str(uuid.uuid4())
        meta["creationTimestamp"] = self._now()
        if info.generation or info.key in facts.GENERATION_ON_CREATE_ONLY:
            meta["generation"] = 1
        else:
            meta.pop("generation", None)
        if info.status:
            r = info.resource
            initial = None if info.custom else facts.initial_status(r.group, r.plural, body)
            if initial is None:
                body.pop("status", None)
            else:
                body["status"] = dict(initial)
        if info.custom:
            drop_empty_metadata(body)
        else:
            drop_empty_collections(info.resource.kind, body)
        if (ns, name) in bucket:
            raise already_exists(info.resource, name)
        if dry_run:
            meta.pop("resourceVersion", None)  # "" is omitted on the wire
            return body
        meta["resourceVersion"] = self._next_rv()
        bucket[(ns, name)] = body
        return copy.deepcopy(body)

    def _generate_name(self, bucket: dict[tuple[str, str], Obj], ns: str, prefix: str) -> str:
        while True:
            suffix = "".join(secrets.choice(_NAME_SUFFIX_ALPHABET) for _ in range(5))
            if (ns, prefix + suffix) not in bucket:
                return prefix + suffix

    def _update(self, obj: ObjectLike, subresource: str | None, dry_run: bool) -> Any:
        """PUT ``obj`` (to its status when ``subresource`` is "status")."""
        info = self._info(kind_for(obj))
        if subresource == "status" and not info.status:
            raise facts.route_not_found()
        body = _to_dict(obj)
        meta = _meta(body)
        name = meta.get("name")
        if not name:
            raise ValueError(f"{info.resource.kind}: metadata.name is required")
        ns = self._namespace(info, meta.get("namespace"), "update")
        with self._s.lock:
            current = self._current(info, ns, str(name))
            rv = str(meta.get("resourceVersion") or "")
            if rv:
                if rv != current["metadata"]["resourceVersion"]:
                    raise conflict(info.resource, str(name))
            elif info.custom:
                r = info.resource
                raise facts.resource_version_required(r.kind, r.group, str(name))
            uid = meta.get("uid")
            actual = current["metadata"].get("uid")
            if uid and uid != actual:
                r = info.resource
                where = facts.resource_name(r.plural, r.group)
                key = facts.storage_key(r.group, r.plural, ns, str(name), custom=info.custom)
                raise facts.uid_precondition_failed(where, r.group, str(name), uid, actual, key=key)
            new = self._merge(info, current, body, subresource)
            written = self._write(info, current, new, dry_run)
        return _decode(model_class(type(obj)), written)

    def _merge(self, info: _KindInfo, old: Obj, incoming: Obj, subresource: str | None) -> Obj:
        """The object to store when ``incoming`` replaces ``old`` (server-owned fields kept;
        status only, or everything but status, as the kind's status subresource says)."""
        r = info.resource
        return merge_update(
            old,
            incoming,
            status_write=subresource == "status",
            group=r.group,
            kind=r.kind,
            custom=info.custom,
            has_status=info.status,
        )

    def _write(self, info: _KindInfo, current: Obj, new: Obj, dry_run: bool) -> Obj:
        """Store ``new`` as the next version of ``current`` (lock held); a copy back."""
        old_meta = current["metadata"]
        meta = new["metadata"]
        meta["resourceVersion"] = old_meta["resourceVersion"]
        if info.custom:
            drop_empty_metadata(new)
        else:
            drop_empty_collections(info.resource.kind, new)
        if info.generation and _spec_changed(current, new):
            meta["generation"] = int(old_meta.get("generation") or 0) + 1
        if old_meta.get("deletionTimestamp"):
            added = set(meta.get("finalizers") or ()) - set(old_meta.get("finalizers") or ())
            if added:
                raise _invalid(
                    info,
                    meta["name"],
                    [
                        (
                            "metadata.finalizers",
                            "FieldValueForbidden",
                            no_new_finalizers_message(added),
                        )
                    ],
                )
        if new == current:
            return copy.deepcopy(current)
        if dry_run:
            return copy.deepcopy(new)
        meta["resourceVersion"] = self._next_rv()
        key = (meta.get("namespace", ""), meta["name"])
        bucket = self._bucket(info)
        if meta.get("deletionTimestamp") and not meta.get("finalizers"):
            bucket.pop(key, None)
        else:
            bucket[key] = new
        return copy.deepcopy(new)

    # --------------------------------------------------------------- patch / apply

    def _patch(self, kind: KindLike, name: str, patch: object, options: PatchOptions) -> Obj:
        """A patch of the object, its status or its scale; the result as a dict."""
        patch_type, subresource, dry_run = options.patch_type, options.subresource, options.dry_run
        _check_patch_options(patch, patch_type, options.field_manager, options.force)
        info = self._info(kind)
        ns = self._namespace(info, options.namespace, "patch")
        doc = _patch_doc(patch, patch_type)
        if subresource == "scale":
            if info.scale is None:
                raise facts.route_not_found()
            schema = strategic_schema_for("autoscaling", "Scale")
            return self._write_scale(
                info, ns, name, lambda scale: _apply_patch(scale, doc, patch_type, schema), dry_run
            )
        if subresource not in (None, "status") or (subresource == "status" and not info.status):
            raise facts.route_not_found()
        schema = strategic_schema_for(info.resource.group, info.resource.kind)
        if patch_type == "strategic" and schema is None and info.custom:
            raise facts.unsupported_media_type()
        with self._s.lock:
            if patch_type == "apply" and subresource is None:
                doc.setdefault("apiVersion", info.resource.api_version)
                doc.setdefault("kind", info.resource.kind)
                return self._apply(info, ns, name, doc, dry_run)
            current = self._current(info, ns, name)
            patched = _apply_patch(copy.deepcopy(current), doc, patch_type, schema)
            self._check_patched(info, current, patched, name)
            new = self._merge(info, current, patched, subresource)
            return self._write(info, current, new, dry_run)

    def _check_patched(self, info: _KindInfo, current: Obj, patched: Obj, name: str) -> None:
        """A patch's resourceVersion is a precondition; its uid and name cannot change."""
        r = info.resource
        refused = facts.patched_metadata_error(
            r.kind, r.group, r.plural, name, current["metadata"], patched.get("metadata")
        )
        if refused is not None:
            raise refused

    def _apply(self, info: _KindInfo, ns: str, name: str, body: Obj, dry_run: bool) -> Obj:
        """Create ``body``, or merge it into the stored object (lock held)."""
        current = self._s.objects.get(info.kind, {}).get((ns, name))
        if current is None:
            meta = _meta(body)
            meta.setdefault("name", name)
            return self._create(info, body, ns or None, dry_run)
        schema = (
            None if info.custom else strategic_schema_for(info.resource.group, info.resource.kind)
        )
        merged = _apply_patch(
            copy.deepcopy(current), body, "strategic" if schema else "merge", schema
        )
        self._check_patched(info, current, merged, name)
        return self._write(info, current, self._merge(info, current, merged, None), dry_run)

    # --------------------------------------------------------------- delete

    def _delete(
        self,
        info: _KindInfo,
        ns: str,
        name: str,
        uid: str | None,
        resource_version: str | None,
        dry_run: bool,
    ) -> tuple[Obj, bool]:
        """Delete under the lock: (the object's last state (a copy), removed now?)."""
        current = self._current(info, ns, name)
        meta = current["metadata"]
        r = info.resource
        if uid and uid != meta.get("uid"):
            actual_uid = (uid, meta.get("uid"))
            raise facts.delete_precondition_failed(r.kind, r.group, name, uid=actual_uid)
        if resource_version and resource_version != meta.get("resourceVersion"):
            rvs = (resource_version, meta.get("resourceVersion"))
            raise facts.delete_precondition_failed(r.kind, r.group, name, resource_version=rvs)
        if meta.get("finalizers"):
            if meta.get("deletionTimestamp"):
                return copy.deepcopy(current), False
            new_meta = {**meta, "deletionTimestamp": self._now(), "deletionGracePeriodSeconds": 0}
            if info.generation:
                new_meta["generation"] = int(meta.get("generation") or 0) + 1
            new = {**current, "metadata": new_meta}
            if not dry_run:
                new_meta["resourceVersion"] = self._next_rv()
                self._bucket(info)[(ns, name)] = new
            return copy.deepcopy(new), False
        if dry_run:
            return copy.deepcopy(current), True
        del self._bucket(info)[(ns, name)]
        self._next_rv()
        return copy.deepcopy(current), True

    # --------------------------------------------------------------- scale

    def _scale_of(self, info: _KindInfo, obj: Obj) -> Obj:
        assert info.scale is not None
        return copy.deepcopy(scale_of(obj, info.scale, info.custom))

    def _write_scale(
        self,
        info: _KindInfo,
        ns: str,
        name: str,
        change: Callable[[Obj], Any],
        dry_run: bool,
    ) -> Obj:
        """Read-modify-write of the scale of an object; returns the new Scale."""
        assert info.scale is not None
        with self._s.lock:
            current = self._current(info, ns, name)
            scale = change(self._scale_of(info, current))
            if not isinstance(scale, dict):
                raise facts.bad_request("the scale must be a JSON object")
            replicas = (scale.get("spec") or {}).get("replicas", 0)  # omitempty: absent is 0
            if not isinstance(replicas, int) or isinstance(replicas, bool) or replicas < 0:
                scale_info = _KindInfo(
                    Resource("autoscaling", "v1", "Scale", "scale", True), False, False, False, None
                )
                raise _invalid(
                    scale_info,
                    name,
                    [
                        (
                            "spec.replicas",
                            "FieldValueInvalid",
                            f"Invalid value: {replicas}: must be greater than or equal to 0",
                        )
                    ],
                )
            rv = (scale.get("metadata") or {}).get("resourceVersion")
            if rv and str(rv) != current["metadata"]["resourceVersion"]:
                raise conflict(info.resource, name)
            new = copy.deepcopy(current)
            _set_path(new, info.scale.spec_replicas, replicas)
            written = self._write(info, current, self._merge(info, current, new, None), dry_run)
            return self._scale_of(info, written)


def _apply_patch(current: Obj, doc: Any, patch_type: str, schema: Any) -> Obj:
    """``doc`` applied to ``current`` by ``patch_type``; the server's errors for bad ones."""
    try:
        if patch_type == "json":
            result = apply_json_patch(current, doc)
        elif patch_type in ("strategic", "apply") and schema is not None:
            result = apply_strategic_merge_patch(current, doc, schema)
        elif patch_type == "strategic":
            result = apply_strategic_merge_patch(current, doc, None)
        else:
            result = apply_merge_patch(current, doc)
    except PatchError as err:
        reason = "BadRequest" if err.code == 400 else "Invalid"
        raise facts.api_error(err.code, str(err), reason) from None
    if not isinstance(result, dict):
        raise facts.bad_request("the patch must produce a JSON object")
    return result


class _FakeStatusWriter(StatusWriterMixin):
    """``FakeClient.status()``: writes of the status subresource (interceptor hooks
    ``status_update`` / ``status_patch``)."""

    def __init__(self, fake: FakeClient) -> None:
        self._fake = fake

    def _do_update(self, obj: ObjectLike, field_manager: str | None, dry_run: bool) -> Any:
        fake = self._fake
        action = fake._action_of("update", obj, subresource="status")
        hook = fake._door(action, "status_update")
        if hook is not None:
            return hook(fake.direct, obj, field_manager=field_manager, dry_run=dry_run)
        return fake._update(obj, "status", dry_run)

    def _do_patch(self, kind: KindLike, name: str, patch: PatchBody, options: PatchOptions) -> Any:
        fake = self._fake
        action = Action("patch", as_kind(kind), options.namespace, name, "status", obj=patch)
        hook = fake._door(action, "status_patch")
        if hook is not None:
            return hook(fake.direct, kind, name, patch, **options.keywords(subresource=False))
        return _decode(model_class(kind), fake._patch(kind, name, patch, options))


class _FakeSubResource(SubResourceMixin):
    """``FakeClient.subresource(name)``: ``status`` and ``scale``."""

    def __init__(self, fake: FakeClient, name: str) -> None:
        self.name = name
        self._fake = fake

    def _do_get(self, kind: KindLike, name: str, namespace: str | None) -> Obj:
        # The object itself for ``status``; a ``Scale``.
        fake = self._fake
        hook = fake._door(
            Action("get", as_kind(kind), namespace, name, self.name), "subresource_get"
        )
        if hook is not None:
            return hook(fake.direct, self.name, kind, name, namespace)
        info = fake._info(kind)
        ns = fake._namespace(info, namespace, "get")
        with fake._s.lock:
            if self.name == "status" and info.status:
                return copy.deepcopy(fake._current(info, ns, name))
            if self.name == "scale" and info.scale is not None:
                return fake._scale_of(info, fake._current(info, ns, name))
        raise facts.route_not_found()

    def _do_update(
        self, obj: ObjectLike, body: ObjectLike | None, field_manager: str | None, dry_run: bool
    ) -> Obj:
        fake = self._fake
        action = fake._action_of("update", obj, subresource=self.name)
        hook = fake._door(action, "subresource_update")
        if hook is not None:
            return hook(
                fake.direct, self.name, obj, body=body, field_manager=field_manager, dry_run=dry_run
            )
        if self.name == "status":
            result = fake._update(obj if body is None else body, "status", dry_run)
            return _to_dict(result)
        info = fake._info(kind_for(obj))
        if self.name != "scale" or info.scale is None:
            raise facts.route_not_found()
        if body is None:
            raise TypeError("a scale update needs body=<the Scale to write>")
        meta = _meta(_to_dict(obj))
        ns = fake._namespace(info, meta.get("namespace"), "update")
        scale = _to_dict(body)
        return fake._write_scale(info, ns, str(meta.get("name")), lambda _: scale, dry_run)

    def _do_patch(self, kind: KindLike, name: str, patch: PatchBody, options: PatchOptions) -> Obj:
        fake = self._fake
        action = Action("patch", as_kind(kind), options.namespace, name, self.name, obj=patch)
        hook = fake._door(action, "subresource_patch")
        if hook is not None:
            keywords = options.keywords(subresource=False)
            return hook(fake.direct, self.name, kind, name, patch, **keywords)
        return fake._patch(kind, name, patch, options)
