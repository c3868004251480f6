"""Per-kind write behaviour of the embedded server, as kube-apiserver's registry strategies.

* before mutating webhooks, and on each webhook's result: :meth:`KubeStrategy.default`, the
  defaulting kube-apiserver's decoder does (webhooks see defaulted objects);
* create: server-owned status is reset (pods start Pending, workloads with an empty status,
  custom resources with a status subresource lose any status sent), then defaults are applied,
  then mutating admission (:mod:`.admission`: pod priority and default tolerations, the
  pvc-protection finalizer);
* update: defaults, then mutating admission (a pod keeps its priority and default tolerations);
* both then encode built-in kinds as kube-apiserver's Go types do (:mod:`.omitempty`:
  zero-valued ``omitempty`` scalars dropped, untagged status counters written);
* custom resources are pruned, defaulted and validated against their CRD's structural schema;
  their empty metadata collections (and ``generateName: ""``) are dropped, as kube-apiserver's
  encoding of ObjectMeta drops them (:func:`~kube_runtime.client._registry.drop_empty_metadata`);
* built-in kinds are validated by :mod:`.validation` (metadata plus kind-specific rules).
"""

from __future__ import annotations

import functools
import ipaddress
import itertools
import threading
from collections.abc import Callable

import orjson

from kube_runtime import clock as _clock
from kube_runtime.client import _apifacts as facts
from kube_runtime.client._registry import (
    EMPTY_OMITTED,
    drop_empty_collections,
    drop_empty_metadata,
)
from kube_runtime.envtest.server import (
    builtin_certificates,
    builtin_groups,
    crdscale,
    crdschema,
    defaults,
    errors,
    omitempty,
    validation,
)
from kube_runtime.envtest.server.admission import Admission
from kube_runtime.envtest.server.memo import Memo, forget_key, json_key, known_key
from kube_runtime.envtest.server.resources import ResourceInfo
from kube_runtime.envtest.server.storage import Obj, now_rfc3339

_CLUSTER_IPS = ipaddress.ip_network("10.96.0.0/16")


class KubeStrategy:
    """``admission``: the mutating admission run after defaulting (None: a default
    :class:`Admission`, which knows only the built-in priority classes). ``clock``: the
    server's time, which the timestamps the strategy fills in are (None: the current clock;
    the store's, which the embedded cluster passes)."""

    def __init__(
        self, admission: Admission | None = None, *, clock: _clock.Clock | None = None
    ) -> None:
        self.admission = admission if admission is not None else Admission()
        self.clock: _clock.Clock = _clock.resolve(clock, "KubeStrategy")
        self._ip_lock = threading.Lock()
        self._next_ip = itertools.count(10)
        self._pod_specs: Memo[_PodSpecEntry] = Memo()
        #: The last entry put in :attr:`_pod_specs` under a key ending with these bytes, with
        #: its key: a hit compares the keys (a memcmp) instead of hashing the whole key (a
        #: pod spec's encoding is a few kB: hashing it cost ~3 % of a pod create).
        self._pod_spec_tails: dict[bytes, tuple[bytes, _PodSpecEntry]]
        self._pod_spec_tails = {}
        #: A pod spec just prepared from :attr:`_pod_specs` and its encoding, for the
        #: validation the store runs next (under its lock, as the preparation).
        self._prepared_spec: tuple[Obj, bytes] | None = None
        #: ...and the same once validated, for :meth:`spec_encoding`.
        self._validated_spec: tuple[Obj, bytes] | None = None

    def default(self, info: ResourceInfo, obj: Obj) -> None:
        """What kube-apiserver's decoding of a request body does to ``obj`` (in place): a
        built-in kind gets its ``SetDefaults`` (:func:`.defaults.apply_defaults`), a custom
        resource is pruned and defaulted from its CRD's structural schema. The store calls
        it before the mutating webhooks and on each webhook's patched object, as
        kube-apiserver decodes (and so defaults) the body before admission and re-decodes a
        webhook's result. Idempotent; :meth:`prepare_create` and :meth:`prepare_update` do it
        again."""
        if info.custom:
            self._custom(info, obj)
        else:
            defaults.apply_defaults(info.storage_group, info.kind, obj)

    def prepare_create(self, info: ResourceInfo, obj: Obj) -> None:
        if info.custom:
            if info.has_status:
                obj.pop("status", None)
            self._custom(info, obj)
            drop_empty_metadata(obj)
            return
        key = info.key
        if key == ("", "pods"):
            self._prepare_pod_create(info, obj)
            return
        # The server-set status: the table shared with the fake client, then the other groups'.
        status = facts.initial_status(*key, obj)
        if status is None:
            status = builtin_groups.initial_status(key)
        if status is not None:
            obj["status"] = status
        elif key == ("", "services"):
            spec = obj.setdefault("spec", {})
            if spec.get("type", "ClusterIP") != "ExternalName" and not spec.get("clusterIP"):
                spec["clusterIP"] = self._allocate_ip()
            if spec.get("clusterIP") and not spec.get("clusterIPs"):
                spec["clusterIPs"] = [spec["clusterIP"]]  # "None" for a headless service too
        builtin_groups.prepare(key, obj, None)
        group = info.storage_group  # a view's objects follow the viewed kind's rules
        defaults.prepare_for_create(group, info.kind, obj)
        defaults.apply_defaults(group, info.kind, obj)
        self.admission.admit_create(info, obj)
        omitempty.normalize(group, info.kind, obj)

    def _prepare_pod_create(self, info: ResourceInfo, obj: Obj) -> None:
        """A pod's create steps: status Pending with its QoS class, then defaults, admission
        and zero-dropping, which change nothing but the spec (and the metadata's empty
        collections) and depend on nothing but the spec and the priority classes.

        Pods from one template repeat their spec byte for byte, so the steps' result for a
        spec seen twice is kept under the spec's encoding (:attr:`_pod_specs`: the classes
        it holds for, the prepared spec or None after one sighting, the QoS class, the
        prepared spec's encoding), and from the third time on the pod gets that prepared
        spec itself: one dict, decoded from its encoding, shared by every pod of the spec
        (stored objects are never changed in place; a pod keeps no spec containers of its
        own for the cyclic GC to walk), the request's spec left as sent. A spec refused by
        admission is not kept. A shared spec's encoding is known: :meth:`validate` keys its
        memo with it."""
        spec = obj.get("spec")
        admission = self.admission
        memo_key = classes = None
        second = False
        if type(spec) is dict and type(admission) is Admission:
            memo_key = json_key(spec)
            if memo_key is not None:
                classes = admission.classes()
                tail = self._pod_spec_tails.get(memo_key[_TAIL:])
                if tail is not None and tail[0] == memo_key:
                    seen: _PodSpecEntry | None = tail[1]
                else:
                    seen = self._pod_specs.get(memo_key)
                    if seen is not None:
                        self._pod_spec_tails[memo_key[_TAIL:]] = (memo_key, seen)
                if seen is not None and seen[0] is classes:
                    prepared = seen[1]
                    if prepared is _UNSHARED:
                        memo_key = None  # the steps, every time
                    elif prepared is not None:
                        obj["status"] = {"phase": "Pending", "qosClass": seen[2]}
                        obj["spec"] = prepared
                        _drop_pod_empties(obj)  # normalize's part outside the spec
                        self._prepared_spec = (prepared, seen[3])
                        return
                    else:
                        second = True
        qos = facts.pod_qos_class(obj)
        obj["status"] = {"phase": "Pending", "qosClass": qos}
        builtin_groups.prepare(info.key, obj, None)  # nothing for pods (kept in step)
        group = info.storage_group
        defaults.prepare_for_create(group, info.kind, obj)  # nothing for pods either
        defaults.apply_defaults(group, info.kind, obj)
        admission.admit_create(info, obj)
        omitempty.normalize(group, info.kind, obj)
        if memo_key is not None:
            shared: Obj | None = None
            encoded = b""
            if second:
                shared = _UNSHARED
                prepared = obj.get("spec")
                if type(prepared) is dict:
                    # Shared only when its decoded form encodes as the steps' result did.
                    try:
                        encoded = orjson.dumps(prepared)
                        decoded = orjson.loads(encoded)
                        if type(decoded) is dict and orjson.dumps(decoded) == encoded:
                            shared = decoded
                    except (TypeError, orjson.JSONEncodeError):
                        pass
            entry = (classes, shared, qos, encoded)
            self._pod_specs.put(memo_key, entry)
            tails = self._pod_spec_tails
            if len(tails) >= self._pod_specs.size:
                tails.clear()
            tails[memo_key[_TAIL:]] = (memo_key, entry)

    def prepare_update(self, info: ResourceInfo, obj: Obj, old: Obj) -> None:
        if info.custom:
            self._custom(info, obj)
            drop_empty_metadata(obj)
            return
        if info.key == ("", "services"):
            _keep_allocated_ips(obj, old)
        elif info.key == builtin_certificates.KEY:
            builtin_certificates.stamp_conditions(obj, now_rfc3339(self.clock.time))
        builtin_groups.prepare(info.key, obj, old)
        defaults.apply_defaults(info.storage_group, info.kind, obj)
        self.admission.admit_update(info, obj, old)
        omitempty.normalize(info.storage_group, info.kind, obj)

    def validate(
        self, info: ResourceInfo, obj: Obj, old: Obj | None, *, subresource: str = ""
    ) -> None:
        """422 Invalid with the causes found; on the "binding" path a pod may get its node."""
        prepared, self._prepared_spec = self._prepared_spec, None
        self._validated_spec = None
        if prepared is not None and prepared[0] is obj.get("spec") and old is None:
            if (
                info.key == _PODS
                and _PODS_VALIDATED_THERE
                and info.stored_as is None
                and not subresource
            ):
                # what _validate does for this pod (validation.validate's Pod steps; no
                # builtin_groups check for pods), the spec's encoding known
                causes = validation.validate_pod_create(obj, prepared[1])
                if causes:
                    meta = obj.get("metadata") or {}
                    raise errors.invalid(
                        info.kind,
                        info.storage_group,
                        str(meta.get("name") or meta.get("generateName") or ""),
                        causes,
                    )
                self._validated_spec = prepared
                return
            known_key(*prepared)  # a pod spec replayed by _prepare_pod_create
            try:
                self._validate(info, obj, old, subresource)
            finally:
                forget_key()
            self._validated_spec = prepared
            return
        self._validate(info, obj, old, subresource)

    def spec_encoding(self, obj: Obj) -> bytes | None:
        """The encoding of the pod spec :meth:`validate` just passed when it was replayed
        from :attr:`_pod_specs` (its bytes are those of the replayed spec) and ``obj``
        holds that very spec, else None (asked once: forgotten after)."""
        validated, self._validated_spec = self._validated_spec, None
        if validated is not None and validated[0] is obj.get("spec"):
            return validated[1]
        return None

    def validated_spec_encoding(self, obj: Obj) -> bytes | None:
        """What :meth:`spec_encoding` would answer for ``obj``, without using it up: the
        field manager's hook, which runs between the validation and the commit, keys its
        memo of the spec's field set with it."""
        validated = self._validated_spec
        if validated is not None and validated[0] is obj.get("spec"):
            return validated[1]
        return None

    def _validate(self, info: ResourceInfo, obj: Obj, old: Obj | None, subresource: str) -> None:
        meta = obj.get("metadata") or {}
        if info.custom:
            causes = validation.validate_object_meta(
                meta, namespaced=info.namespaced, name_rule="subdomain"
            )
            schema = info.schemas.get(info.version)
            if schema is not None:
                causes += crdschema.validate(obj, schema, old)
            if info.scale is not None:
                causes += crdscale.validate_scale(obj, info.scale, spec=subresource != "status")
        else:
            group, kind = info.storage_group, info.kind
            causes = validation.validate(
                group, kind, obj, _as_bound(info, obj, old) if subresource == "binding" else old
            )
            if (group, kind) in builtin_groups.CHECKS:  # most kinds (pods) have none there
                causes += builtin_groups.check(group, kind, obj, old)
            if info.stored_as is not None:  # the view's own rules (events.k8s.io's)
                causes += builtin_groups.check(info.group, info.kind, obj, old)
        if causes:
            raise errors.invalid(
                info.kind,
                info.storage_group,  # a view's errors name the viewed kind, as upstream's
                str(meta.get("name") or meta.get("generateName") or ""),
                causes,
            )

    @staticmethod
    def _custom(info: ResourceInfo, obj: Obj) -> None:
        schema = info.schemas.get(info.version)
        if schema is None:
            return
        for step in (crdschema.prune, crdschema.apply_defaults):
            result = step(obj, schema)
            if result is not obj:
                obj.clear()
                obj.update(result)

    def _allocate_ip(self) -> str:
        with self._ip_lock:
            return str(_CLUSTER_IPS[next(self._next_ip)])


#: An entry of :attr:`KubeStrategy._pod_specs`: (priority classes, the prepared spec the
#: pods share, None after one sighting or :data:`_UNSHARED`, QoS class, its encoding).
_PodSpecEntry = tuple[object, Obj | None, str, bytes]
#: The prepared spec of a spec whose steps' result is not shared (prepared every time).
_UNSHARED: Obj = {}

_PODS = ("", "pods")
#: The end of a pod spec's memo key that :attr:`KubeStrategy._pod_spec_tails` is keyed by.
_TAIL = -64
#: All of a pod's validation is :func:`validation.validate`'s (no builtin_groups check).
_PODS_VALIDATED_THERE = ("", "Pod") not in builtin_groups.CHECKS

#: ``drop_empty_collections("Pod", obj)``: the metadata's empty collections only, as long as
#: the table of other empty fields names none of a Pod's.
_drop_pod_empties: Callable[[Obj], None] = (
    drop_empty_metadata
    if "Pod" not in EMPTY_OMITTED
    else functools.partial(drop_empty_collections, "Pod")
)


def _as_bound(info: ResourceInfo, obj: Obj, old: Obj | None) -> Obj | None:
    """``old`` as the pods/binding subresource leaves it when ``obj`` binds an unbound pod.

    Binding (setting ``spec.nodeName`` once, what the scheduler does through pods/binding)
    is the one spec change of a pod the update rules do not cover; only the binding path
    (``subresource="binding"``) compares against the bound spec. A plain update or patch of
    ``spec.nodeName`` is refused like any other immutable pod field, as by kube-apiserver.
    """
    if old is None or info.key != ("", "pods"):
        return old
    node = (obj.get("spec") or {}).get("nodeName")
    old_spec = old.get("spec") or {}
    if not node or old_spec.get("nodeName"):
        return old
    return {**old, "spec": {**old_spec, "nodeName": node}}


def _keep_allocated_ips(service: Obj, old: Obj) -> None:
    """An update that leaves the cluster IPs out keeps the allocated ones; one that changes
    ``clusterIP`` alone changes the first of ``clusterIPs`` too (validation then refuses
    the change), as kube-apiserver's service registry does."""
    spec, old_spec = service.get("spec"), old.get("spec") or {}
    if not isinstance(spec, dict) or "ExternalName" in (spec.get("type"), old_spec.get("type")):
        return
    if not spec.get("clusterIP") and old_spec.get("clusterIP"):
        spec["clusterIP"] = old_spec["clusterIP"]
    old_ips = list(old_spec.get("clusterIPs") or ())
    if not spec.get("clusterIPs") and old_ips:
        spec["clusterIPs"] = old_ips
    ips = spec.get("clusterIPs")
    if (
        spec.get("clusterIP")
        and isinstance(ips, list)
        and ips == old_ips
        and ips[0] != spec["clusterIP"]
    ):
        spec["clusterIPs"] = [spec["clusterIP"], *ips[1:]]
