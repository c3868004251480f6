"""A simulated kubelet for the embedded cluster, with the scheduler and PV provisioner it needs.

What clients observe through the API is what a one-node cluster shows:

* **Node**: ``start()`` registers one Node (``embedded-node`` by default) with a ``Ready=True``
  condition, capacity/allocatable, ``nodeInfo`` and addresses, and keeps it that way: a deleted
  Node is registered again and a Ready condition that is not ``True`` is put back. Capacity is
  reported, never enforced.
* **Scheduling**: a pod without ``spec.nodeName`` that is not being deleted is bound to the
  node (``spec.nodeName`` through the binding path, then ``PodScheduled=True``) unless
  it names another ``schedulerName``, has ``schedulingGates``, has a ``nodeSelector`` the node's
  labels do not match, or the node is cordoned (``spec.unschedulable``); those get
  ``PodScheduled=False`` and are retried whenever the Node changes.
* **Pods**: a bound pod shows ``Pending`` (containers waiting in ``ContainerCreating``), then
  after ``ready_after`` seconds ``Running`` with a unique IP from 10.244.0.0/16, container
  statuses and the kubelet's conditions. ``Ready`` also needs every ``spec.readinessGates``
  condition to be ``True`` in the status; it is re-evaluated on every change of the pod.
* **postStart hooks**: a started container whose ``lifecycle.postStart`` exec command sleeps
  (``sleep N``) is running but not ready for those N seconds, as while the real kubelet runs
  the hook; other hooks take no time.
* **In-place image change**: a running container whose spec image differs from the image in
  its status is stopped after ``restart_delay`` (``ready: false``, state terminated) and started
  again after another ``restart_delay`` with the new image, a new ``imageID``/``containerID``
  and ``restartCount + 1`` (the old imageID when ``settings.image_digests`` says the new image
  is a retag of the old one). Name, UID and pod IP stay. Other stopped containers of a running pod
  are restarted the same way (restart policy is not consulted).
* **Env from metadata** (the kruise-daemon's part of Kruise's in-place update): for a pod with
  a container whose env takes a value from a label or annotation (``valueFrom.fieldRef``), the
  kubelet records per started container (every container of the pod, one without such env
  hashing no values) the hash of the values it got and reports them in the
  ``apps.kruise.io/runtime-containers-meta`` annotation (containerID, restartCount,
  ``extractedEnvFromMetadataHash``). The kubelet itself never restarts a container for a
  changed label or annotation (env is resolved when a container starts); the daemon does:
  while the pod's ``InPlaceUpdateReady`` condition is False (an in-place update runs), a
  running container whose values differ from what the pod's metadata gives now is stopped
  after ``restart_delay`` (the daemon kills it) and restarted like above (new containerID,
  ``restartCount + 1``, the same imageID).
* **Deletion**: a pod with ``deletionTimestamp`` is stopped after
  ``min(deletionGracePeriodSeconds * grace_scale, max_grace)`` seconds: a running pod first
  gets a terminal status (containers terminated, phase ``Succeeded`` when every container
  exited 0, else ``Failed``, as kubelets since 1.27 do), then it is deleted with
  ``DeleteOptions(uid=..., grace_seconds=0)``. Finalizers still hold it in the store; a pod
  whose grace period is already 0 is not deleted again. Pods bound to a node that does not
  exist are handled the same way (what the pod garbage collector does).
* **PVCs**: a claim without ``spec.volumeName`` gets ``pvc-<uid>`` (and the binder's
  ``pv.kubernetes.io/bind-completed`` / ``bound-by-controller`` annotations); its status becomes
  ``Bound`` with the requested access modes and storage. No PersistentVolume object exists.
  A bound claim whose storage request grows (the API server allows it when its StorageClass
  has ``allowVolumeExpansion``) is resized as the external resizer and the kubelet do, one
  step per sync: condition ``Resizing``, then ``FileSystemResizePending`` (the volume grew),
  then, once a running pod on the node mounts it, ``status.capacity`` becomes the request and
  the conditions go.
* **Per-pod behaviour** via annotations (see the ``ANNOTATION_*`` constants): ``never-ready``,
  ``fail``, ``succeed``, ``ready-after`` and ``crash-loop``. They are read on every sync, so
  adding one to a running pod takes effect. ``Succeeded``/``Failed`` pods are never restarted.

Implementation contracts:

* The store listener only enqueues ``(kind, namespace, name)`` keys (deduplicated); one worker
  thread syncs them and one timer thread turns due times from a heap into queue entries.
* Every sync is level-based: it reads the object's current state and decides from it. The
  only memory kept per pod is its UID, pod IP and the due times of pending delays, keyed by the
  state they belong to (e.g. the container ID being stopped), so a missed event changes
  nothing and a new Kubelet adopts pods it has never seen.
* All writes go through the store. Status writes use :meth:`Store.mutate` whose function
  recomputes the status from the fresh object under the store lock and refuses (no write) if
  the UID changed; a write that changes nothing commits nothing. 404 and 409 are ignored.
* Objects read from the store are never mutated; status dicts are rebuilt.
* :attr:`Kubelet.settings` may be changed at run time (new delays apply to delays that start
  afterwards), except ``node_name``, which is read by ``start()``.
* Time is the store's clock (:attr:`KubeletStore.clock`, a :class:`~kube_runtime.clock.Clock`):
  delays are measured on its monotonic time, both threads wait on its conditions, and the
  timestamps written (``startedAt``, ``finishedAt``, ``lastTransitionTime``) are its wall
  time. On a :class:`~kube_runtime.clock.SimClock` every delay above is virtual.

Not simulated: resource requests/limits and pod capacity, taints/tolerations and affinity,
probes, Events, init-container image changes, volumes (a pod naming a missing PVC still runs),
PersistentVolume objects, node heartbeats and Leases.
"""

from __future__ import annotations

import functools
import heapq
import ipaddress
import itertools
import json
import logging
import secrets
import threading
import uuid
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Final, Protocol, TypedDict

from kube_runtime.client import _apifacts as facts
from kube_runtime.clock import Clock
from kube_runtime.envtest.kubelet.images import declared_image_id, image_id
from kube_runtime.envtest.server.errors import ApiError
from kube_runtime.envtest.server.resources import Registry, ResourceInfo
from kube_runtime.envtest.server.storage import (
    DeleteOptions,
    Event,
    ListResult,
    Stored,
    now_rfc3339,
)
from kube_runtime.envtest.server.worker import start_thread
from kube_runtime.meta import Obj
from kube_runtime.workloads.containermeta import (
    RUNTIME_META_ANNOTATION,
    expected_env_hash,
    meta_refs,
    runtime_meta_set,
)
from kube_runtime.workloads.inplace import READINESS_GATE as IN_PLACE_READY
from kube_runtime.workloads.quantity import parse_quantity

__all__ = [
    "ANNOTATION_CRASH_LOOP",
    "ANNOTATION_FAIL",
    "ANNOTATION_NEVER_READY",
    "ANNOTATION_PREFIX",
    "ANNOTATION_READY_AFTER",
    "ANNOTATION_SUCCEED",
    "DEFAULT_NODE_NAME",
    "KUBELET_VERSION",
    "Kubelet",
    "KubeletOptions",
    "KubeletSettings",
    "KubeletStore",
    "image_id",
]


_log = logging.getLogger(__name__)

ANNOTATION_PREFIX = "sim.kube-runtime.io/"
#: ``"true"``: the pod runs but its containers (hence the pod) never become ready.
ANNOTATION_NEVER_READY = ANNOTATION_PREFIX + "never-ready"
#: ``"true"``: on start (or at once when running) containers exit 1 ``Error``; phase ``Failed``.
ANNOTATION_FAIL = ANNOTATION_PREFIX + "fail"
#: ``"true"``: on start (or at once when running) containers exit 0 ``Completed``; ``Succeeded``.
ANNOTATION_SUCCEED = ANNOTATION_PREFIX + "succeed"
#: ``"<seconds>"``: overrides ``settings.ready_after`` for this pod.
ANNOTATION_READY_AFTER = ANNOTATION_PREFIX + "ready-after"
#: ``"true"``: phase ``Running``, containers waiting in ``CrashLoopBackOff`` with a growing
#: ``restartCount`` (every ``restart_delay``, doubling up to 4x), never ready.
ANNOTATION_CRASH_LOOP = ANNOTATION_PREFIX + "crash-loop"

DEFAULT_NODE_NAME = "embedded-node"
DEFAULT_SCHEDULER = "default-scheduler"
KUBELET_VERSION = "v1.31.0-kube-runtime"
NODE_IP = "10.0.0.1"
POD_CIDR = "10.244.0.0/16"
NODE_CAPACITY: dict[str, str] = {
    "cpu": "8",
    "ephemeral-storage": "100Gi",
    "hugepages-1Gi": "0",
    "hugepages-2Mi": "0",
    "memory": "32Gi",
    "pods": "110",
}
CRASH_BACKOFF_CAP = 4  # crash-loop restarts back off up to this multiple of restart_delay

_TERMINAL = ("Succeeded", "Failed")
_KUBELET_CONDITIONS = (
    "PodReadyToStartContainers",
    "Initialized",
    "Ready",
    "ContainersReady",
    "PodScheduled",
)
_NODE_PRESSURE = (
    ("MemoryPressure", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
    ("DiskPressure", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
    ("PIDPressure", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
)

_POD, _PVC, _NODE = "pod", "pvc", "node"
_Key = tuple[str, str, str]  # (kind, namespace, name)


class KubeletStore(Protocol):
    """The part of :class:`~kube_runtime.envtest.server.storage.Store` the kubelet uses.

    The embedded cluster passes its ``Store``; :class:`kube_runtime.envtest.kubelet.ApiStore` serves
    the same calls through any API server (reads from informers, writes through the client).
    """

    registry: Registry
    #: The time the kubelet runs on (delays, waits and timestamps).
    clock: Clock

    def add_listener(self, fn: Callable[[Event], None]) -> None: ...

    def remove_listener(self, fn: Callable[[Event], None]) -> None: ...

    def list(self, info: ResourceInfo, namespace: str | None) -> ListResult: ...

    def try_get(self, info: ResourceInfo, namespace: str | None, name: str) -> Stored | None: ...

    def create(self, info: ResourceInfo, namespace: str | None, obj: Obj) -> Stored: ...

    def mutate(
        self,
        info: ResourceInfo,
        namespace: str | None,
        name: str,
        fn: Callable[[Obj], Obj],
        *,
        subresource: str = "",
    ) -> Stored: ...

    def delete(
        self, info: ResourceInfo, namespace: str | None, name: str, opts: DeleteOptions | None
    ) -> tuple[Stored, bool]: ...


@dataclass
class KubeletSettings:
    """Timings of the simulation (seconds). Tests may change them while the kubelet runs."""

    ready_after: float = 0.05
    restart_delay: float = 0.05
    grace_scale: float = 0.0
    max_grace: float = 1.0
    node_name: str = DEFAULT_NODE_NAME
    image_digests: dict[str, str] = field(default_factory=dict)
    """What a registry holds (:mod:`kube_runtime.envtest.kubelet.images`): image -> its digest
    (``sha256:<64 hex>``: a container started with the image reports
    ``docker-pullable://<repository>@<digest>``, so tags of one repository with one digest
    report one imageID) or image -> the image whose content it is (it reports that image's
    imageID: ``{"nginx:b": "nginx:a"}``, a container updated in place from ``nginx:a`` to
    ``nginx:b`` keeps its imageID). Undeclared images report a digest of their own."""


class KubeletOptions(TypedDict, total=False):
    """:class:`Kubelet`'s keyword arguments (its node name and :class:`KubeletSettings`), as a
    subclass passes them on."""

    node_name: str
    ready_after: float
    restart_delay: float
    grace_scale: float
    max_grace: float
    image_digests: dict[str, str]


def _container_id() -> str:
    return f"containerd://{secrets.token_hex(32)}"


class _Stale(Exception):
    """Raised inside a mutate function when the object is no longer the one we synced."""


@dataclass
class _PodMemory:
    uid: str
    ip: str | None = None
    dues: dict[tuple[str, ...], float] = field(default_factory=dict)
    env_hashes: dict[str, int] = field(default_factory=dict)
    """containerID -> hash of the env-from-metadata values it started with (until the
    runtime-containers-meta annotation holds it)."""


class _Tick:
    """One sync pass: the time it runs at and the delays it consulted.

    ``elapsed(what, delay)`` starts the delay named ``what`` the first time it is asked for and
    says whether it has run out; delays not consulted in a pass are forgotten afterwards, so a
    name must identify the state it belongs to.
    """

    def __init__(self, dues: dict[tuple[str, ...], float], now: float) -> None:
        self.now = now
        self._dues = dues
        self.used: dict[tuple[str, ...], float] = {}
        self.wake: float | None = None

    def elapsed(self, what: tuple[str, ...], delay: float) -> bool:
        due = self.used.get(what) or self._dues.get(what)
        if due is None:
            due = self.now + max(0.0, delay)
        self.used[what] = due
        if self.now >= due:
            return True
        self.wake = due if self.wake is None else min(self.wake, due)
        return False


class _IpPool:
    """Pod IPs from one network: the lowest free address after the last one handed out."""

    def __init__(self, cidr: str) -> None:
        net = ipaddress.ip_network(cidr)
        self._base = int(net.network_address)
        self._size = net.num_addresses
        self._next = 2  # .0 is the network, .1 the gateway
        self._used: set[int] = set()

    def allocate(self) -> str:
        for _ in range(self._size):
            offset = self._next
            self._next = self._next + 1 if self._next + 2 < self._size else 2
            if offset not in self._used:
                self._used.add(offset)
                return str(ipaddress.ip_address(self._base + offset))
        raise RuntimeError("pod network exhausted")

    def claim(self, ip: str) -> bool:
        try:
            offset = int(ipaddress.ip_address(ip)) - self._base
        except ValueError:
            return False
        if not 0 < offset < self._size - 1 or offset in self._used:
            return False
        self._used.add(offset)
        return True

    def release(self, ip: str) -> None:
        try:
            self._used.discard(int(ipaddress.ip_address(ip)) - self._base)
        except ValueError:
            pass


@dataclass(frozen=True)
class _Flags:
    """The simulation annotations of one pod."""

    never_ready: bool
    fail: bool
    succeed: bool
    crash_loop: bool
    ready_after: float | None

    @classmethod
    def of(cls, pod: Obj) -> _Flags:
        ann = pod["metadata"].get("annotations") or {}

        def on(key: str) -> bool:
            return str(ann.get(key, "")).lower() == "true"

        ready_after: float | None = None
        raw = ann.get(ANNOTATION_READY_AFTER)
        if raw is not None:
            try:
                ready_after = max(0.0, float(raw))
            except (TypeError, ValueError):
                ready_after = None
        return cls(
            on(ANNOTATION_NEVER_READY),
            on(ANNOTATION_FAIL),
            on(ANNOTATION_SUCCEED),
            on(ANNOTATION_CRASH_LOOP),
            ready_after,
        )


def _info(registry: Registry, plural: str) -> ResourceInfo:
    info = registry.by_key("", plural)
    if info is None:
        raise LookupError(f"the registry does not serve core/v1 {plural}")
    return info


def _ignore_gone(e: ApiError) -> None:
    """Swallow 404/409 (object gone or replaced meanwhile); re-raise anything else."""
    if e.code not in (404, 409):
        raise e


class Kubelet:
    """Node agent, scheduler and PVC binder of the embedded cluster (see the module docstring)."""

    def __init__(
        self,
        store: KubeletStore,
        *,
        node_name: str = DEFAULT_NODE_NAME,
        ready_after: float = 0.05,
        restart_delay: float = 0.05,
        grace_scale: float = 0.0,
        max_grace: float = 1.0,
        image_digests: dict[str, str] | None = None,
    ) -> None:
        self.store = store
        #: The store's clock, which the kubelet runs on (see the module).
        self.clock: Clock = store.clock
        self.settings = KubeletSettings(
            ready_after, restart_delay, grace_scale, max_grace, node_name, dict(image_digests or {})
        )
        self._pods_info = _info(store.registry, "pods")
        self._pvcs_info = _info(store.registry, "persistentvolumeclaims")
        self._nodes_info = _info(store.registry, "nodes")
        self._kinds = {
            self._pods_info.key: _POD,
            self._pvcs_info.key: _PVC,
            self._nodes_info.key: _NODE,
        }
        self._node_name = node_name
        # Shared between the listener, the timer thread and the worker.
        self._lock = threading.Lock()
        self._work_cv = self.clock.condition(self._lock)
        self._timer_cv = self.clock.condition(self._lock)
        self._queue: deque[_Key] = deque()
        self._queued: set[_Key] = set()
        self._timers: list[tuple[float, int, _Key]] = []
        self._timer_due: dict[_Key, float] = {}
        self._seq = itertools.count()
        self._stopping = False
        self._threads: list[threading.Thread] = []
        # Owned by the worker thread only.
        self._pods: dict[_Key, _PodMemory] = {}
        self._unschedulable: set[_Key] = set()
        self._ips = _IpPool(POD_CIDR)

    @property
    def node_name(self) -> str:
        return self._node_name

    # ------------------------------------------------------------- lifecycle

    def start(self) -> None:
        """Register the node, adopt existing pods and claims, and start the threads."""
        if self._threads:
            return
        self._node_name = self.settings.node_name
        with self._lock:
            self._stopping = False
        self.store.add_listener(self._on_event)
        self._sync_node()
        for info, kind in ((self._pods_info, _POD), (self._pvcs_info, _PVC)):
            for stored in self.store.list(info, None).items:
                self._enqueue((kind, stored.meta.get("namespace", ""), stored.meta["name"]))
        self._threads = [
            threading.Thread(target=self._work_loop, name="kubelet-worker", daemon=True),
            threading.Thread(target=self._timer_loop, name="kubelet-timers", daemon=True),
        ]
        for t in self._threads:
            start_thread(t, self.clock)

    def stop(self, timeout: float = 5.0) -> None:
        """Stop listening and join both threads (pending work is dropped). Idempotent."""
        self.store.remove_listener(self._on_event)
        with self._lock:
            self._stopping = True
            self._work_cv.notify_all()
            self._timer_cv.notify_all()
        for t in self._threads:
            t.join(timeout)
        self._threads = []
        with self._lock:
            self._queue.clear()
            self._queued.clear()
            self._timers.clear()
            self._timer_due.clear()

    # ----------------------------------------------------------------- queue

    def _on_event(self, event: Event) -> None:
        """Store listener (called under the store lock): enqueue only."""
        kind = self._kinds.get(event.info.key)
        if kind is None:
            return
        meta = event.new.meta
        if kind == _NODE and meta.get("name") != self._node_name:
            return
        self._enqueue((kind, meta.get("namespace", ""), meta.get("name", "")))

    def _enqueue(self, key: _Key) -> None:
        with self._lock:
            if key not in self._queued:
                self._queued.add(key)
                self._queue.append(key)
                self._work_cv.notify()

    def _schedule(self, key: _Key, due: float) -> None:
        """Sync ``key`` again at monotonic time ``due`` (an earlier pending timer suffices)."""
        with self._lock:
            current = self._timer_due.get(key)
            if current is not None and current <= due:
                return
            self._timer_due[key] = due
            heapq.heappush(self._timers, (due, next(self._seq), key))
            if self._timers[0][0] == due:
                self._timer_cv.notify()

    def _timer_loop(self) -> None:
        monotonic = self.clock.monotonic
        with self._lock:
            while not self._stopping:
                if not self._timers:
                    self._timer_cv.wait()
                    continue
                due, _, key = self._timers[0]
                delay = due - monotonic()
                if delay > 0:
                    self._timer_cv.wait(delay)
                    continue
                heapq.heappop(self._timers)
                if self._timer_due.get(key) == due:
                    del self._timer_due[key]
                if key not in self._queued:
                    self._queued.add(key)
                    self._queue.append(key)
                    self._work_cv.notify()

    def _work_loop(self) -> None:
        while True:
            with self._lock:
                while not self._queue and not self._stopping:
                    self._work_cv.wait()
                if self._stopping:
                    return
                key = self._queue.popleft()
                self._queued.discard(key)
            try:
                if key[0] == _POD:
                    self._sync_pod(key)
                elif key[0] == _PVC:
                    self._sync_pvc(key[1], key[2])
                else:
                    self._sync_node()
            except Exception:
                _log.exception("kubelet: syncing %s %s/%s failed", *key)

    # ------------------------------------------------------------------ helpers

    def _now(self) -> str:
        return now_rfc3339(self.store.clock.time)

    def _write(
        self,
        info: ResourceInfo,
        obj: Obj,
        change: Callable[[Obj], Obj | None],
        *,
        subresource: str = "",
    ) -> Obj | None:
        """Apply ``change`` to the fresh copy of ``obj`` (same UID only); None means no write.

        Returns the object as stored afterwards, or None when nothing was written.
        """
        meta = obj["metadata"]
        uid = meta.get("uid")

        def fn(current: Obj) -> Obj:
            if current["metadata"].get("uid") != uid:
                raise _Stale
            result = change(current)
            if result is None:
                raise _Stale
            return result

        try:
            return self.store.mutate(
                info, meta.get("namespace"), meta["name"], fn, subresource=subresource
            ).obj
        except _Stale:
            return None
        except ApiError as e:
            _ignore_gone(e)
            return None

    # --------------------------------------------------------------------- node

    def _sync_node(self) -> None:
        """Register the node when missing and keep its Ready condition True."""
        name = self._node_name
        stored = self.store.try_get(self._nodes_info, None, name)
        if stored is None:
            try:
                stored = self.store.create(self._nodes_info, None, self._node_object())
            except ApiError as e:
                if e.code != 409:
                    raise
                stored = self.store.try_get(self._nodes_info, None, name)
                if stored is None:
                    return
        if self._node_status(stored.obj) != stored.obj.get("status"):

            def change(node: Obj) -> Obj:
                node["status"] = self._node_status(node)
                return node

            self._write(self._nodes_info, stored.obj, change, subresource="status")
        for key in self._unschedulable:
            self._enqueue(key)

    def _node_object(self) -> Obj:
        name = self._node_name
        return {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {
                "name": name,
                "labels": {
                    "beta.kubernetes.io/arch": "amd64",
                    "beta.kubernetes.io/os": "linux",
                    "kubernetes.io/arch": "amd64",
                    "kubernetes.io/hostname": name,
                    "kubernetes.io/os": "linux",
                },
                "annotations": {
                    "node.alpha.kubernetes.io/ttl": "0",
                    "volumes.kubernetes.io/controller-managed-attach-detach": "true",
                },
            },
            "spec": {"podCIDR": POD_CIDR, "podCIDRs": [POD_CIDR]},
            "status": self._node_status({}),
        }

    def _node_status(self, node: Obj) -> Obj:
        """``node``'s status with the static parts filled in and the conditions healthy."""
        ts = self._now()
        name = self._node_name
        status = dict(node.get("status") or {})
        ids = uuid.uuid5(uuid.NAMESPACE_DNS, f"{name}.kube-runtime.io")
        defaults: Obj = {
            "capacity": dict(NODE_CAPACITY),
            "allocatable": dict(NODE_CAPACITY),
            "addresses": [
                {"type": "InternalIP", "address": NODE_IP},
                {"type": "Hostname", "address": name},
            ],
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
            "nodeInfo": {
                "architecture": "amd64",
                "bootID": str(ids),
                "containerRuntimeVersion": "containerd://1.7.18",
                "kernelVersion": "6.1.0-kube-runtime",
                "kubeProxyVersion": KUBELET_VERSION,
                "kubeletVersion": KUBELET_VERSION,
                "machineID": ids.hex,
                "operatingSystem": "linux",
                "osImage": "kube-runtime embedded node",
                "systemUUID": str(ids),
            },
        }
        for k, v in defaults.items():
            if not status.get(k):
                status[k] = v
        wanted = [(t, "False", reason, msg) for t, reason, msg in _NODE_PRESSURE]
        wanted.append(("Ready", "True", "KubeletReady", "kubelet is posting ready status"))
        existing = list(status.get("conditions") or [])
        by_type = {c.get("type"): c for c in existing}
        conditions = [c for c in existing if c.get("type") not in {w[0] for w in wanted}]
        for type_, value, reason, msg in wanted:
            old = by_type.get(type_)
            if old is not None and old.get("status") == value:
                conditions.append(old)
                continue
            conditions.append(
                {
                    "type": type_,
                    "status": value,
                    "lastHeartbeatTime": ts,
                    "lastTransitionTime": ts,
                    "reason": reason,
                    "message": msg,
                }
            )
        status["conditions"] = conditions
        return status

    def _node_blocker(self, spec: Obj) -> str | None:
        """Why the node cannot take a pod with ``spec`` (None when it can)."""
        stored = self.store.try_get(self._nodes_info, None, self._node_name)
        if stored is None:
            return "no nodes available to schedule pods"
        node = stored.obj
        if (node.get("spec") or {}).get("unschedulable"):
            return "0/1 nodes are available: 1 node(s) were unschedulable."
        labels = node["metadata"].get("labels") or {}
        selector = spec.get("nodeSelector") or {}
        if any(labels.get(k) != v for k, v in selector.items()):
            return "0/1 nodes are available: 1 node(s) didn't match Pod's node affinity/selector."
        return None

    # ---------------------------------------------------------------------- PVC

    def _sync_pvc(self, namespace: str, name: str) -> None:
        """Bind a claim to a (virtual) volume named after it and report it Bound."""
        stored = self.store.try_get(self._pvcs_info, namespace, name)
        if stored is None or stored.meta.get("deletionTimestamp"):
            return
        pvc = stored.obj
        if not (pvc.get("spec") or {}).get("volumeName"):

            def bind(current: Obj) -> Obj | None:
                spec = current.setdefault("spec", {})
                if spec.get("volumeName"):
                    return None
                spec["volumeName"] = f"pvc-{current['metadata']['uid']}"
                ann = current["metadata"].setdefault("annotations", {})
                ann["pv.kubernetes.io/bind-completed"] = "yes"
                ann["pv.kubernetes.io/bound-by-controller"] = "yes"
                return current

            self._write(self._pvcs_info, pvc, bind)
        # Whether a running pod mounts the claim matters only to a claim waiting for its file
        # system resize: asked then, once per sync (it scans the namespace's pods).
        in_use = functools.cache(lambda: self._claim_in_use(namespace, name))
        if _pvc_status(pvc, self._now(), in_use) != pvc.get("status"):

            def report(current: Obj) -> Obj:
                current["status"] = _pvc_status(current, self._now(), in_use)
                return current

            self._write(self._pvcs_info, pvc, report, subresource="status")

    def _claim_in_use(self, namespace: str, name: str) -> bool:
        """A running pod on this node mounts the claim (the kubelet then expands its file
        system online)."""
        for stored in self.store.list(self._pods_info, namespace).items:
            pod = stored.obj
            if (pod.get("spec") or {}).get("nodeName") != self._node_name:
                continue
            if (pod.get("status") or {}).get("phase") != "Running":
                continue
            if name in _claim_names(pod):
                return True
        return False

    def _expand_pending_claims(self, pod: Obj) -> None:
        """A running pod's claims waiting for a file system resize are synced again."""
        namespace = str(pod["metadata"].get("namespace") or "")
        for claim in _claim_names(pod):
            stored = self.store.try_get(self._pvcs_info, namespace, claim)
            if stored is not None and _condition_true(stored.obj, FS_RESIZE_PENDING):
                self._enqueue((_PVC, namespace, claim))

    # ---------------------------------------------------------------------- pods

    def _sync_pod(self, key: _Key) -> None:
        stored = self.store.try_get(self._pods_info, key[1], key[2])
        if stored is None:
            self._forget(key)
            self._unschedulable.discard(key)
            return
        pod = stored.obj
        uid = str(pod["metadata"].get("uid"))
        mem = self._pods.get(key)
        if mem is None or mem.uid != uid:
            self._forget(key)
            mem = self._pods[key] = _PodMemory(uid)
        tick = _Tick(mem.dues, self.clock.monotonic())
        try:
            self._reconcile_pod(key, pod, mem, tick)
        finally:
            mem.dues = tick.used
            if tick.wake is not None:
                self._schedule(key, tick.wake)

    def _forget(self, key: _Key) -> None:
        mem = self._pods.pop(key, None)
        if mem is not None and mem.ip:
            self._ips.release(mem.ip)

    def _reconcile_pod(self, key: _Key, pod: Obj, mem: _PodMemory, tick: _Tick) -> None:
        spec = pod.get("spec") or {}
        node = spec.get("nodeName")
        if node == self._node_name and mem.ip is None:
            ip = (pod.get("status") or {}).get("podIP")
            if ip and self._ips.claim(ip):
                mem.ip = ip
        if not node:
            if not pod["metadata"].get("deletionTimestamp"):
                self._schedule_pod(key, pod)
            return
        self._unschedulable.discard(key)
        if pod["metadata"].get("deletionTimestamp"):
            self._terminate(pod, tick)
            return
        if node != self._node_name:
            return
        if (pod.get("status") or {}).get("phase") == "Running":
            self._expand_pending_claims(pod)
        if self._pod_status(pod, mem, tick) != pod.get("status"):
            written = self._write(
                self._pods_info,
                pod,
                lambda current: _with_status(current, self._pod_status(current, mem, tick)),
                subresource="status",
            )
            pod = written if written is not None else pod
        self._report_container_meta(pod, mem)

    # ---------------------------------------------------------- env from metadata

    def _started_env_hash(self, c: Obj, cs: Obj, pod: Obj, mem: _PodMemory) -> int | None:
        """The env-from-metadata hash container ``c`` (status ``cs``) was started with: from
        memory, else from the pod's runtime-containers-meta; None when not known."""
        cid = str(cs.get("containerID") or "")
        if cid in mem.env_hashes:
            return mem.env_hashes[cid]
        for entry in (runtime_meta_set(pod) or {}).get("containers") or ():
            if isinstance(entry, dict) and entry.get("containerID") == cid:
                got = (entry.get("hashes") or {}).get("extractedEnvFromMetadataHash")
                if isinstance(got, int):
                    mem.env_hashes[cid] = got
                    return got
        return None

    def _env_stale(self, c: Obj, cs: Obj, pod: Obj, mem: _PodMemory) -> bool:
        """A running container to restart for new env values (kruise-daemon: only while the
        pod's ``InPlaceUpdateReady`` condition is False)."""
        if not meta_refs(c):
            return False
        conditions = (pod.get("status") or {}).get("conditions") or ()
        if not any(
            x.get("type") == IN_PLACE_READY and x.get("status") == "False" for x in conditions
        ):
            return False
        started = self._started_env_hash(c, cs, pod, mem)
        return started is not None and started != expected_env_hash(c, pod.get("metadata") or {})

    def _record_env_hashes(self, pod: Obj, statuses: list[Obj], mem: _PodMemory) -> None:
        """Remember what newly started containers got from the pod's metadata now: every
        container of a pod where some container takes env from metadata, those without such
        env too (the hash of no values), as the kruise-daemon hashes every running container
        and Kruise's completion check wants a hash for each."""
        by_name = {c["name"]: c for c in _named((pod.get("spec") or {}).get("containers"))}
        if not any(meta_refs(c) for c in by_name.values()):
            return
        for cs in statuses:
            c = by_name.get(cs.get("name"))
            cid = str(cs.get("containerID") or "")
            if c is None or not cid or "running" not in (cs.get("state") or {}):
                continue
            if self._started_env_hash(c, cs, pod, mem) is not None:
                continue
            mem.env_hashes[cid] = expected_env_hash(c, pod.get("metadata") or {})

    def _report_container_meta(self, pod: Obj, mem: _PodMemory) -> None:
        """Write the runtime-containers-meta annotation of a pod whose containers take env
        from metadata when it changed (the kruise-daemon's report)."""
        containers = {c["name"]: c for c in _named((pod.get("spec") or {}).get("containers"))}
        if not any(meta_refs(c) for c in containers.values()):
            return
        entries = []
        for cs in (pod.get("status") or {}).get("containerStatuses") or ():
            c = containers.get(cs.get("name"))
            cid = cs.get("containerID")
            if c is None or not cid:
                continue
            started = self._started_env_hash(c, cs, pod, mem)
            hashes = {} if started is None else {"extractedEnvFromMetadataHash": started}
            entries.append(
                {
                    "name": cs.get("name"),
                    "containerID": cid,
                    "restartCount": int(cs.get("restartCount") or 0),
                    "hashes": hashes,
                }
            )
        if not entries:
            return
        value = json.dumps({"containers": entries}, sort_keys=True)
        if (pod["metadata"].get("annotations") or {}).get(RUNTIME_META_ANNOTATION) == value:
            return

        def annotate(current: Obj) -> Obj | None:
            if current["metadata"].get("deletionTimestamp"):
                return None
            meta = dict(current["metadata"])
            annotations = dict(meta.get("annotations") or {})
            annotations[RUNTIME_META_ANNOTATION] = value
            meta["annotations"] = annotations
            return {**current, "metadata": meta}

        self._write(self._pods_info, pod, annotate)
        live = {str(cs.get("containerID")) for cs in entries}
        for cid in [k for k in mem.env_hashes if k not in live]:
            del mem.env_hashes[cid]

    def _schedule_pod(self, key: _Key, pod: Obj) -> None:
        """The scheduler: bind ``pod`` to the node or say why it cannot be."""
        spec = pod.get("spec") or {}
        if (spec.get("schedulerName") or DEFAULT_SCHEDULER) != DEFAULT_SCHEDULER:
            return
        if spec.get("schedulingGates"):
            self._set_scheduled(
                pod,
                "False",
                "SchedulingGated",
                "Scheduling is blocked due to non-empty scheduling gates",
            )
            return
        blocker = self._node_blocker(spec)
        if blocker is not None:
            self._unschedulable.add(key)
            self._set_scheduled(pod, "False", "Unschedulable", blocker)
            return
        self._unschedulable.discard(key)
        bound = self._bind(pod)
        if bound is not None:
            self._set_scheduled(bound, "True")

    def _bind(self, pod: Obj) -> Obj | None:
        """Set ``spec.nodeName`` through the store's binding path, as pods/binding does.

        Returns the bound pod, or None when it was not bound now (gone, deleted, bound).
        """
        node = self._node_name

        def bind(current: Obj) -> Obj | None:
            spec = current.setdefault("spec", {})
            if spec.get("nodeName") or current["metadata"].get("deletionTimestamp"):
                return None
            spec["nodeName"] = node
            return current

        return self._write(self._pods_info, pod, bind, subresource="binding")

    def _set_scheduled(
        self, pod: Obj, value: str, reason: str | None = None, message: str | None = None
    ) -> None:
        def change(current: Obj) -> Obj | None:
            if value == "True" and (current.get("spec") or {}).get("nodeName") != self._node_name:
                return None
            status = dict(current.get("status") or {})
            status.setdefault("phase", "Pending")
            if not status.get("qosClass"):
                status["qosClass"] = _qos_class(current.get("spec") or {})
            desired = [_condition("PodScheduled", value == "True", reason, message)]
            status["conditions"] = _merge_conditions(
                status.get("conditions") or [], desired, self._now()
            )
            current["status"] = status
            return current

        preview = change(dict(pod))  # change() only replaces top-level "status"
        if preview is None or preview == pod:
            return
        self._write(self._pods_info, pod, change, subresource="status")

    def _terminate(self, pod: Obj, tick: _Tick) -> None:
        """A pod being deleted: stop it after its (scaled) grace period, then delete it."""
        meta = pod["metadata"]
        node = str((pod.get("spec") or {}).get("nodeName") or "")
        if node != self._node_name and self.store.try_get(self._nodes_info, None, node) is not None:
            return  # another existing node's business
        grace = float(meta.get("deletionGracePeriodSeconds") or 0)
        delay = min(grace * self.settings.grace_scale, self.settings.max_grace)
        if not tick.elapsed(("delete", str(meta.get("deletionTimestamp"))), delay):
            return
        if (pod.get("status") or {}).get("phase") == "Running":
            self._write(
                self._pods_info,
                pod,
                lambda current: _with_status(current, self._stopped_status(current)),
                subresource="status",
            )
        if grace > 0:  # grace 0 means we (or a client) already asked; finalizers hold it
            try:
                self.store.delete(
                    self._pods_info,
                    meta.get("namespace"),
                    meta["name"],
                    DeleteOptions(uid=meta.get("uid"), grace_seconds=0),
                )
            except ApiError as e:
                _ignore_gone(e)

    # -------------------------------------------------------------- pod status

    def _pod_status(self, pod: Obj, mem: _PodMemory, tick: _Tick) -> Obj:
        """The status the kubelet reports for a pod bound to this node, at ``tick``."""
        old: Obj = pod.get("status") or {}
        phase = old.get("phase")
        if phase in _TERMINAL:
            return old
        spec = pod.get("spec") or {}
        flags = _Flags.of(pod)
        s = self.settings
        ts = self._now()
        status = dict(old)
        status["hostIP"] = NODE_IP
        status["hostIPs"] = [{"ip": NODE_IP}]
        if not status.get("startTime"):
            status["startTime"] = ts
        if not status.get("qosClass"):
            status["qosClass"] = _qos_class(spec)
        containers = _named(spec.get("containers"))
        inits = _named(spec.get("initContainers"))
        old_cs = {c.get("name"): c for c in old.get("containerStatuses") or ()}
        old_is = {c.get("name"): c for c in old.get("initContainerStatuses") or ()}

        if phase != "Running":
            ready_after = s.ready_after if flags.ready_after is None else flags.ready_after
            if not tick.elapsed(("start",), ready_after):
                reason = "PodInitializing" if inits else "ContainerCreating"
                status["phase"] = "Pending"
                status["containerStatuses"] = [_waiting(c, reason) for c in containers]
                if inits:
                    status["initContainerStatuses"] = [
                        _waiting(c, "PodInitializing") for c in inits
                    ]
                status["conditions"] = _pod_conditions(pod, status, ts)
                return status
            old_cs, old_is = {}, {}  # a fresh start: nothing ran before

        if mem.ip is None:
            mem.ip = self._ips.allocate()
        status["podIP"] = mem.ip
        status["podIPs"] = [{"ip": mem.ip}]

        if flags.fail or flags.succeed:
            code, why = (1, "Error") if flags.fail else (0, "Completed")
            statuses = [_exited(c, old_cs.get(c["name"]), ts, code, why) for c in containers]
            new_phase = "Failed" if flags.fail else "Succeeded"
        else:
            statuses = [
                self._next_container(c, old_cs.get(c["name"]), pod, flags, tick, ts, mem)
                for c in containers
            ]
            self._record_env_hashes(pod, statuses, mem)
            new_phase = "Running"
        status["containerStatuses"] = [
            self._after_post_start(c, _with_readiness(cs, flags), tick)
            for c, cs in zip(containers, statuses, strict=True)
        ]
        if inits:
            status["initContainerStatuses"] = [
                _with_readiness(_init_status(c, old_is.get(c["name"]), ts), flags) for c in inits
            ]
        status["phase"] = new_phase
        status["conditions"] = _pod_conditions(pod, status, ts)
        return status

    def _next_container(
        self, c: Obj, cs: Obj | None, pod: Obj, flags: _Flags, tick: _Tick, ts: str, mem: _PodMemory
    ) -> Obj:
        """Advance one container of a running pod by at most one step; a container (re)started
        with an image ``settings.image_digests`` declares reports the declared imageID."""
        new = self._advance_container(c, cs, pod, flags, tick, ts, mem)
        if new is cs or not self.settings.image_digests:
            return new
        image = str(new.get("image") or "")
        declared = declared_image_id(image, self.settings.image_digests)
        if declared and new.get("imageID") == image_id(image):
            return {**new, "imageID": declared}
        return new

    def _after_post_start(self, c: Obj, cs: Obj, tick: _Tick) -> Obj:
        """A started container whose ``postStart`` hook still runs is not ready yet: a hook
        runs for as long as it sleeps (``sleep N`` in its exec command), other hooks at once."""
        seconds = _post_start_seconds(c)
        if seconds <= 0 or not cs.get("ready") or "running" not in (cs.get("state") or {}):
            return cs
        if tick.elapsed(("poststart", str(c["name"]), str(cs.get("containerID"))), seconds):
            return cs
        return {**cs, "ready": False}

    def _advance_container(
        self, c: Obj, cs: Obj | None, pod: Obj, flags: _Flags, tick: _Tick, ts: str, mem: _PodMemory
    ) -> Obj:
        name = c["name"]
        delay = self.settings.restart_delay
        if flags.crash_loop:
            waiting = ((cs or {}).get("state") or {}).get("waiting") or {}
            if cs is None or waiting.get("reason") != "CrashLoopBackOff":
                return _crashed(c, pod, (cs or {}).get("restartCount", 0) + 1, ts, delay)
            restarts = int(cs.get("restartCount") or 0)
            backoff = delay * min(2 ** max(restarts - 1, 0), CRASH_BACKOFF_CAP)
            if tick.elapsed(("crash", name, str(restarts)), backoff):
                return _crashed(c, pod, restarts + 1, ts, delay)
            return cs
        if cs is None:
            return _running(c, ts)
        state = cs.get("state") or {}
        if "running" in state:
            changed = cs.get("image") != c.get("image", "") or self._env_stale(c, cs, pod, mem)
            if changed and tick.elapsed(("stop", name, str(cs.get("containerID"))), delay):
                return _exited(c, cs, ts, 0, "Completed")
            return cs
        if tick.elapsed(("restart", name, str(cs.get("containerID"))), delay):
            last = (
                {"terminated": state["terminated"]}
                if "terminated" in state
                else cs.get("lastState") or {}
            )
            return _running(c, ts, int(cs.get("restartCount") or 0) + 1, last)
        return cs

    def _stopped_status(self, pod: Obj) -> Obj | None:
        """The terminal status of a running pod whose containers were stopped for deletion."""
        old: Obj = pod.get("status") or {}
        if old.get("phase") != "Running":
            return None
        ts = self._now()
        spec = pod.get("spec") or {}
        old_cs = {c.get("name"): c for c in old.get("containerStatuses") or ()}
        statuses = []
        for c in _named(spec.get("containers")):
            cs = old_cs.get(c["name"])
            state = (cs or {}).get("state") or {}
            if "running" in state or cs is None:
                cs = _exited(c, cs, ts, 0, "Completed")
            elif "waiting" in state:
                last = ((cs.get("lastState") or {}).get("terminated")) or {
                    "exitCode": 137,
                    "reason": "ContainerStatusUnknown",
                    "message": "The container could not be located when the pod was terminated",
                    "startedAt": None,
                    "finishedAt": None,
                }
                cs = {**cs, "state": {"terminated": last}, "ready": False, "started": False}
            statuses.append(cs)
        inits = []
        for ic in old.get("initContainerStatuses") or ():
            if "running" in (ic.get("state") or {}):
                ic = _exited(ic, ic, ts, 0, "Completed")
            inits.append(ic)
        failed = any(
            ((cs.get("state") or {}).get("terminated") or {}).get("exitCode") not in (0, None)
            for cs in statuses
        )
        status = dict(old)
        status["phase"] = "Failed" if failed else "Succeeded"
        status["containerStatuses"] = statuses
        if inits:
            status["initContainerStatuses"] = inits
        status["conditions"] = _pod_conditions(pod, status, ts)
        return status


# ------------------------------------------------------------------ pure helpers


def _with_status(pod: Obj, status: Obj | None) -> Obj | None:
    if status is None:
        return None
    pod["status"] = status
    return pod


def _named(items: Iterable[Any] | None) -> list[Obj]:
    return [c for c in items or () if isinstance(c, dict) and c.get("name")]


RESIZING: Final = "Resizing"
FS_RESIZE_PENDING: Final = "FileSystemResizePending"
FS_RESIZE_PENDING_MESSAGE: Final = (
    "Waiting for user to (re-)start a pod to finish file system resize of volume on node."
)


def _claim_names(pod: Obj) -> set[str]:
    return {
        str(v["persistentVolumeClaim"].get("claimName"))
        for v in (pod.get("spec") or {}).get("volumes") or ()
        if isinstance(v.get("persistentVolumeClaim"), dict)
    }


def _condition_true(obj: Obj, type_: str) -> bool:
    return any(
        c.get("type") == type_ and c.get("status") == "True"
        for c in (obj.get("status") or {}).get("conditions") or ()
    )


def _pvc_status(pvc: Obj, ts: str, in_use: Callable[[], bool]) -> Obj:
    """A bound claim's status: capacity = the request when first bound; a larger request
    afterwards goes the way of the external resizer and the kubelet, one step per sync:
    ``Resizing``, then the volume is expanded and the claim waits in
    ``FileSystemResizePending``, then, once a running pod on this node mounts it, the file
    system is expanded: ``status.capacity`` is the request and the conditions are gone.
    ``in_use`` says whether such a pod mounts it (called only for a claim in that state)."""
    spec = pvc.get("spec") or {}
    status = dict(pvc.get("status") or {})
    status["phase"] = "Bound"
    status["accessModes"] = list(spec.get("accessModes") or [])
    storage = ((spec.get("resources") or {}).get("requests") or {}).get("storage")
    if storage is None:
        return status
    capacity = (status.get("capacity") or {}).get("storage")
    requested, has = parse_quantity(storage), parse_quantity(capacity)
    if capacity is None or requested is None or has is None or requested <= has:
        if capacity is None:
            status["capacity"] = {"storage": storage}
        return status
    conditions = [
        c
        for c in status.get("conditions") or ()
        if c.get("type") not in (RESIZING, FS_RESIZE_PENDING)
    ]
    if _condition_true(pvc, FS_RESIZE_PENDING):
        if in_use():
            status["capacity"] = {"storage": storage}
            if conditions:
                status["conditions"] = conditions
            else:
                status.pop("conditions", None)
        return status
    if _condition_true(pvc, RESIZING):
        pending = {
            "type": FS_RESIZE_PENDING,
            "status": "True",
            "lastProbeTime": None,
            "lastTransitionTime": ts,
            "message": FS_RESIZE_PENDING_MESSAGE,
        }
        status["conditions"] = [*conditions, pending]
        return status
    resizing = {"type": RESIZING, "status": "True", "lastProbeTime": None, "lastTransitionTime": ts}
    status["conditions"] = [*conditions, resizing]
    return status


def _qos_class(spec: Obj) -> str:
    """The pod's QoS class, as the API server gives it (:func:`~kube_runtime.client._apifacts.pod_qos_class`)."""
    return facts.pod_qos_class({"spec": spec})


def _waiting(c: Obj, reason: str) -> Obj:
    return {
        "image": c.get("image", ""),
        "imageID": "",
        "lastState": {},
        "name": c["name"],
        "ready": False,
        "restartCount": 0,
        "started": False,
        "state": {"waiting": {"reason": reason}},
    }


def _running(c: Obj, ts: str, restart_count: int = 0, last_state: Obj | None = None) -> Obj:
    image = c.get("image", "")
    return {
        "containerID": _container_id(),
        "image": image,
        "imageID": image_id(image),
        "lastState": last_state or {},
        "name": c["name"],
        "ready": True,
        "restartCount": restart_count,
        "started": True,
        "state": {"running": {"startedAt": ts}},
    }


def _exited(c: Obj, cs: Obj | None, ts: str, code: int, reason: str) -> Obj:
    """``cs`` (or a fresh status for container ``c``) with its container exited."""
    if cs is not None and "terminated" in (cs.get("state") or {}):
        return cs
    image = (cs or {}).get("image") or c.get("image", "")
    cid = (cs or {}).get("containerID") or _container_id()
    started = (((cs or {}).get("state") or {}).get("running") or {}).get("startedAt") or ts
    return {
        "containerID": cid,
        "image": image,
        "imageID": (cs or {}).get("imageID") or image_id(image),
        "lastState": (cs or {}).get("lastState") or {},
        "name": c["name"],
        "ready": False,
        "restartCount": int((cs or {}).get("restartCount") or 0),
        "started": False,
        "state": {
            "terminated": {
                "containerID": cid,
                "exitCode": code,
                "finishedAt": ts,
                "reason": reason,
                "startedAt": started,
            }
        },
    }


def _crashed(c: Obj, pod: Obj, restarts: int, ts: str, delay: float) -> Obj:
    """A container that just exited 1 again and waits in CrashLoopBackOff."""
    image = c.get("image", "")
    cid = _container_id()
    meta = pod["metadata"]
    backoff = delay * min(2 ** max(restarts - 1, 0), CRASH_BACKOFF_CAP)
    return {
        "containerID": cid,
        "image": image,
        "imageID": image_id(image),
        "lastState": {
            "terminated": {
                "containerID": cid,
                "exitCode": 1,
                "finishedAt": ts,
                "reason": "Error",
                "startedAt": ts,
            }
        },
        "name": c["name"],
        "ready": False,
        "restartCount": restarts,
        "started": False,
        "state": {
            "waiting": {
                "message": (
                    f"back-off {backoff:g}s restarting failed container={c['name']} "
                    f"pod={meta.get('name')}_{meta.get('namespace')}({meta.get('uid')})"
                ),
                "reason": "CrashLoopBackOff",
            }
        },
    }


def _init_status(c: Obj, cs: Obj | None, ts: str) -> Obj:
    """An init container of a started pod: completed, or running when it is a sidecar."""
    if cs is not None and any(k in (cs.get("state") or {}) for k in ("running", "terminated")):
        return cs
    if c.get("restartPolicy") == "Always":
        return _running(c, ts)
    done = _exited(c, None, ts, 0, "Completed")
    done["ready"] = True
    return done


def _post_start_seconds(c: Obj) -> float:
    """How long container ``c``'s ``postStart`` exec hook runs: the N of a ``sleep N`` in its
    command (``["sleep", "10"]``, ``["sh", "-c", "sleep 10"]``); 0 for anything else."""
    hook = ((c.get("lifecycle") or {}).get("postStart") or {}).get("exec") or {}
    words = " ".join(str(w) for w in hook.get("command") or ()).split()
    for word, value in itertools.pairwise(words):
        if word.rsplit("/", 1)[-1] == "sleep":
            try:
                return max(float(value), 0.0)
            except ValueError:
                return 0.0
    return 0.0


def _with_readiness(cs: Obj, flags: _Flags) -> Obj:
    """``cs`` with ``ready``/``started`` following its state and the pod's annotations."""
    state = cs.get("state") or {}
    if "running" in state:
        ready, started = not (flags.never_ready or flags.crash_loop), True
    else:
        ready, started = bool(cs.get("ready")) and "terminated" in state, False
    if cs.get("ready") == ready and cs.get("started") == started:
        return cs
    return {**cs, "ready": ready, "started": started}


def _condition(type_: str, ok: bool, reason: str | None = None, message: str | None = None) -> Obj:
    c: Obj = {"type": type_, "status": "True" if ok else "False"}
    if reason:
        c["reason"] = reason
    if message:
        c["message"] = message
    return c


def _go_list(names: list[str]) -> str:
    return "[" + " ".join(names) + "]"


def _pod_conditions(pod: Obj, status: Obj, ts: str) -> list[Obj]:
    """The kubelet-owned conditions for ``status`` merged into its condition list."""
    spec = pod.get("spec") or {}
    phase = status.get("phase")
    terminal = phase in _TERMINAL
    started = phase != "Pending"
    existing = list(status.get("conditions") or [])
    inits = _named(spec.get("initContainers"))
    regular_inits = [c["name"] for c in inits if c.get("restartPolicy") != "Always"]
    sidecars = [c["name"] for c in inits if c.get("restartPolicy") == "Always"]
    by_name = {c.get("name"): c for c in status.get("containerStatuses") or ()}
    by_name.update({c.get("name"): c for c in status.get("initContainerStatuses") or ()})

    if started or not regular_inits:
        initialized = _condition(
            "Initialized", True, "PodCompleted" if phase == "Succeeded" else None
        )
    else:
        initialized = _condition(
            "Initialized",
            False,
            "ContainersNotInitialized",
            f"containers with incomplete status: {_go_list(regular_inits)}",
        )

    if terminal:
        why = "PodCompleted" if phase == "Succeeded" else "PodFailed"
        containers_ready = _condition("ContainersReady", False, why)
    else:
        names = sidecars + [c["name"] for c in _named(spec.get("containers"))]
        unknown = [n for n in names if n not in by_name]
        unready = [n for n in names if n in by_name and not by_name[n].get("ready")]
        parts = []
        if unknown:
            parts.append(f"containers with unknown status: {_go_list(unknown)}")
        if unready:
            parts.append(f"containers with unready status: {_go_list(unready)}")
        if parts:
            containers_ready = _condition(
                "ContainersReady", False, "ContainersNotReady", ", ".join(parts)
            )
        else:
            containers_ready = _condition("ContainersReady", True)

    if containers_ready["status"] != "True":
        ready = {**containers_ready, "type": "Ready"}
    else:
        current = {c.get("type"): c for c in existing}
        gate_msgs = []
        for gate in spec.get("readinessGates") or ():
            gate_type = (gate or {}).get("conditionType")
            found = current.get(gate_type)
            if found is None:
                gate_msgs.append(
                    f'corresponding condition of pod readiness gate "{gate_type}" does not exist.'
                )
            elif found.get("status") != "True":
                gate_msgs.append(
                    f'the status of pod readiness gate "{gate_type}" is not "True", but {found.get("status")}'
                )
        if gate_msgs:
            ready = _condition("Ready", False, "ReadinessGatesNotReady", ", ".join(gate_msgs))
        else:
            ready = _condition("Ready", True)

    desired = [
        _condition("PodReadyToStartContainers", started and not terminal),
        initialized,
        ready,
        containers_ready,
        _condition("PodScheduled", True),
    ]
    return _merge_conditions(existing, desired, ts)


def _merge_conditions(existing: list[Obj], desired: list[Obj], ts: str) -> list[Obj]:
    """Conditions not in ``desired`` (in their order), then ``desired`` in order.

    ``lastTransitionTime`` is kept while a condition's status stays the same.
    """
    wanted = {d["type"] for d in desired}
    previous = {c.get("type"): c for c in existing}
    out = [c for c in existing if c.get("type") not in wanted]
    for d in desired:
        prev = previous.get(d["type"])
        since = ts
        if (
            prev is not None
            and prev.get("status") == d["status"]
            and prev.get("lastTransitionTime")
        ):
            since = prev["lastTransitionTime"]
        c: Obj = {
            "type": d["type"],
            "status": d["status"],
            "lastProbeTime": None,
            "lastTransitionTime": since,
        }
        for k in ("reason", "message"):
            if k in d:
                c[k] = d[k]
        out.append(c)
    return out
