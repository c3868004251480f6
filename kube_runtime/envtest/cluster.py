"""The embedded cluster: storage, API server, garbage collector, pvc-protection controller,
Deployment and ReplicaSet controllers and simulated kubelet together.

``EmbeddedCluster`` starts everything on loopback (port 0 picks a free port), writes a
kubeconfig that kubectl and the official client accept, and stops cleanly (open watch
streams end with a terminating chunk). Use it as a context manager or via the pytest plugin.
With ``data_dir`` its state lives on disk too (:mod:`.server.persist`) and survives a restart
or a SIGKILL of the process.

The whole cluster runs on one :class:`~kube_runtime.clock.Clock` (``clock``): the API server's
timers, the garbage collector and the other workers, the simulated kubelet's delays, and the
timestamps written. Built on a :class:`~kube_runtime.clock.SimClock` (inside its
``activate()``), it runs in virtual time with the controllers of the test (``docs/simtime.md``).
"""

from __future__ import annotations

import functools
import logging
import os
import secrets
import threading
from importlib.metadata import PackageNotFoundError, distribution, entry_points
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Literal

from kube_runtime import clock as _clock
from kube_runtime.client import Client
from kube_runtime.client.config import Settings
from kube_runtime.envtest.server import authz, builtin_flowcontrol
from kube_runtime.envtest.server.admission import Admission
from kube_runtime.envtest.server.api import ApiServer
from kube_runtime.envtest.server.builtin_scheduling import priority_classes
from kube_runtime.envtest.server.crds import CRD_KEY, CrdServing, resource_from_crd
from kube_runtime.envtest.server.faults import Faults
from kube_runtime.envtest.server.gc import GarbageCollector
from kube_runtime.envtest.server.http import HttpServer, ServerLimits
from kube_runtime.envtest.server.persist import Journal, Record, Synchronous
from kube_runtime.envtest.server.pvcprotection import PvcProtectionController
from kube_runtime.envtest.server.pvprotection import PvProtectionController
from kube_runtime.envtest.server.resources import Registry, ResourceInfo
from kube_runtime.envtest.server.storage import Store, Stored
from kube_runtime.envtest.server.strategy import KubeStrategy
from kube_runtime.envtest.server.worker import start_thread

if TYPE_CHECKING:  # imported when used: TLS (cryptography, the webhook package) and YAML
    # cost ~0.1 s of CPU at import, which a plain-HTTP cluster never uses
    from kube_runtime.envtest.server.tls import ServingCerts

log = logging.getLogger(__name__)

SYSTEM_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")
#: The entry point (group ``kube_runtime.controllers``) of the Deployment and ReplicaSet
#: controllers the cluster runs by default (``controllers.deployment``, found by name: the
#: framework imports no controller).
WORKLOAD_CONTROLLERS = "deployment"
#: ``EmbeddedCluster(deployments=ON_DEMAND)``: those controllers start with the first
#: Deployment or ReplicaSet stored (the resource keys :data:`WORKLOAD_KEYS`).
ON_DEMAND: Final = "on-demand"
WORKLOAD_KEYS: Final = frozenset({("apps", "deployments"), ("apps", "replicasets")})
#: Seconds between BOOKMARKs on a virtual clock: about kube-apiserver's (once a minute).
BOOKMARK_EVERY = 60.0


class EmbeddedCluster:
    """A local Kubernetes API server plus kubelet. Not started until :meth:`start`.

    ``token``: bearer token required on every request (None: no authentication). An
    authenticated cluster is served over TLS (kubectl sends tokens only over TLS); ``tls``
    forces TLS on or off. ``authorization``: ``"AlwaysAllow"`` (every authenticated request)
    or ``"RBAC"``: kube-apiserver's RBAC authorizer and OwnerReferencesPermissionEnforcement
    over the stored roles and bindings (:mod:`.server.authz`; the admin token, made up when
    ``token`` is None, is in ``system:masters``; the bootstrap roles a client needs are
    stored at start). ServiceAccount tokens come from the TokenRequest subresource.
    ``pod_ready_after``: seconds a new pod spends Pending before Running and Ready.
    ``data_dir``: keep the state in this directory (created when absent) and start from what
    it holds; every acknowledged write survives the death of the process (see
    :mod:`.server.persist`). :class:`~.server.persist.JournalError` when it is unusable or
    in use by another cluster. ``data_sync="FULL"``: an fsync per write, which also survives
    an operating-system crash or a power loss.
    ``limits``: the HTTP server's bounds (in-flight requests, connections, timeouts; see
    :class:`~.server.http.ServerLimits`), kube-apiserver's defaults when None.
    ``history_size`` / ``history_age``: the watch window of each resource, in events and in
    seconds (None: no age bound); a watch from a resourceVersion before it gets 410 Expired, as
    from kube-apiserver's watch cache. The pytest fixtures use a small window (see
    :mod:`kube_runtime.envtest.plugin`) so that clients' 410 handling runs in tests.
    ``clock``: the time the cluster runs on (None: the current clock, :func:`kube_runtime.clock.
    current`, when the cluster is built). Its timers, workers and kubelet wait on it and its
    timestamps (``creationTimestamp``, ``deletionTimestamp``, ``lastTransitionTime``,
    ``startedAt``...) are its wall time. A cluster started by a participant of a
    :class:`~kube_runtime.clock.SimClock` takes part in the simulation: virtual time moves
    only when the server, the workers and the kubelet have nothing to do but wait for it.
    Timings default to what suits the clock: on the real clock short ones that keep tests fast
    (``bookmark_interval`` 1 s; a deleted pod is stopped at once, ``grace_scale`` 0 and
    ``max_grace`` 1 s, see :class:`~kube_runtime.envtest.kubelet.simulator.Kubelet`), on a
    virtual clock Kubernetes' own (a BOOKMARK a minute, a pod's whole grace period).
    ``deployments``: run the bundled Deployment and ReplicaSet controllers (kube-controller-
    manager's rules, :mod:`controllers.deployment`) as kube-controller-manager runs them, so
    that a Deployment gets ReplicaSets, pods and a status with no test writing them; they run
    in a :class:`~kube_runtime.manager.Manager` of the cluster's own (:attr:`controllers`)
    that talks to the server over HTTP like any client, on the cluster's clock. False leaves
    Deployments and ReplicaSets alone (a test then writes their status itself).
    ``"on-demand"``: the same controllers, started when the first Deployment or ReplicaSet is
    stored (at :meth:`start` when there is one already) instead of at :meth:`start`: a test
    that has none skips their start (importing them, their informers' LISTs and watches, ~30 ms
    of CPU, and their watches' BOOKMARKs after); with nothing of theirs stored they would do
    nothing either. They start on a thread of their own, not waited for (the write that
    starts them is not held up); a failure to start them is logged (``start`` does not raise
    it), and :attr:`controllers` is None until they run. The simulated-time fixtures'
    clusters (``sim_cluster``) are built so.
    """

    def __init__(
        self,
        *,
        port: int = 0,
        token: str | None = None,
        pod_ready_after: float = 0.05,
        kubelet: bool = True,
        history_size: int = 20_000,
        history_age: float | None = None,
        bookmark_interval: float | None = None,
        tls: bool | None = None,
        data_dir: str | os.PathLike[str] | None = None,
        data_sync: Synchronous = "NORMAL",
        limits: ServerLimits | None = None,
        clock: _clock.Clock | None = None,
        grace_scale: float | None = None,
        max_grace: float | None = None,
        deployments: bool | Literal["on-demand"] = True,
        authorization: str = "AlwaysAllow",
    ) -> None:
        if authorization == "RBAC" and token is None:
            token = self.new_token()
        #: The time the whole cluster runs on (see the class).
        self.clock: _clock.Clock = _clock.resolve(clock, "EmbeddedCluster", wall=True)
        real_time = isinstance(self.clock, _clock.RealClock)
        if bookmark_interval is None:
            bookmark_interval = 1.0 if real_time else BOOKMARK_EVERY
        if grace_scale is None:
            grace_scale = 0.0 if real_time else 1.0
        if max_grace is None:
            max_grace = 1.0 if real_time else float("inf")
        self.registry = Registry()
        admission = Admission()
        self.store = Store(
            self.registry,
            KubeStrategy(admission, clock=self.clock),
            history_size=history_size,
            history_age=history_age,
            clock=self.clock,
        )
        # pods may name any PriorityClass stored, besides the two system ones (a partial, not
        # a lambda: a frame less on every pod create)
        admission.priority_classes = functools.partial(priority_classes, self.store)
        self.crd_serving = CrdServing(self.store)
        self.journal: Journal | None = None
        if data_dir is not None:
            self.journal = Journal.open(data_dir, synchronous=data_sync)
            try:
                self._restore(self.journal)
            except BaseException:
                self.journal.close()
                raise
        self.certs: ServingCerts | None = None
        if tls if tls is not None else token is not None:
            from kube_runtime.envtest.server import tls as tls_certs

            self.certs = tls_certs.generate()
        self.faults = Faults()
        self.token = token
        self.api = ApiServer(
            self.store,
            self.faults,
            token=token,
            authorization=authorization,
            crd_hook=self.crd_serving,
            bookmark_interval=bookmark_interval,
        )
        self.http = HttpServer(
            self.api,
            port=port,
            ssl_context=self.certs.server_context() if self.certs else None,
            limits=limits,
            clock=self.clock,
        )
        self.gc = GarbageCollector(self.store)
        self.pvc_protection = PvcProtectionController(self.store)
        self.pv_protection = PvProtectionController(self.store)
        self.flow_schema_conditions = builtin_flowcontrol.FlowSchemaConditions(self.store)
        self.kubelet: Any = None
        if kubelet:
            from kube_runtime.envtest.kubelet.simulator import Kubelet

            self.kubelet = Kubelet(
                self.store,
                ready_after=pod_ready_after,
                grace_scale=grace_scale,
                max_grace=max_grace,
            )
        if deployments not in (True, False, ON_DEMAND):
            raise ValueError(f"deployments={deployments!r}: expected True, False or {ON_DEMAND!r}")
        self.deployments = deployments
        #: The manager running the Deployment and ReplicaSet controllers (None until started,
        #: or when ``deployments`` is False).
        self.controllers: Any = None
        self._controllers_thread: threading.Thread | None = None
        # Set by the thread of the controllers once their manager is built (or failed to be).
        self._controllers_ready: threading.Event | None = None
        # deployments="on-demand": the first Deployment or ReplicaSet starts the controllers
        # while this is True (under the store lock); stop() sets it False first.
        self._start_on_demand = False
        self._running = False

    # ------------------------------------------------------------ persistence

    def _restore(self, journal: Journal) -> None:
        """Load what ``journal`` holds, then record every later commit in it.

        Custom objects are loaded under the kind their CRD describes (or, when no CRD serves
        it any more, a stand-in named after the object), then every CRD is served again as
        after a write of it; the GC, the kubelet and the other workers seed from the store
        when they start.
        """
        records = list(journal.records())
        custom: dict[tuple[str, str], ResourceInfo] = {}
        for record in records:
            if (record.group, record.resource) == CRD_KEY:
                info = resource_from_crd(Stored.decode(record.body).obj)
                if info is not None:
                    custom.setdefault(info.key, info)

        def loaded(record: Record) -> tuple[ResourceInfo, Stored]:
            stored = Stored.decode(record.body)
            key = (record.group, record.resource)
            info = self.registry.by_key(*key) or custom.get(key)
            return info or _stand_in(key, stored), stored

        self.store.load(map(loaded, records), journal.resource_version())
        self.store.journal = journal
        crd_info = self.registry.by_key(*CRD_KEY)
        assert crd_info is not None
        for crd in self.store.objects(crd_info):
            self.crd_serving("restore", crd.obj)

    # ------------------------------------------------------------- lifecycle

    def start(self) -> EmbeddedCluster:
        ns_info = self.resource("", "namespaces")
        for name in SYSTEM_NAMESPACES:
            if self.store.try_get(ns_info, None, name) is None:
                self.store.create(ns_info, None, {"metadata": {"name": name}})
        builtin_flowcontrol.bootstrap(self.store)  # kube-apiserver's API priority and fairness
        if self.api.authorizer is not None:
            authz.bootstrap(self.store)  # the roles discovery and health checks need
        self.http.start()
        self.api.address = f"127.0.0.1:{self.http.port}"
        self.api.call_later = self.http.call_later  # watch timeouts and bookmarks
        self.gc.start()
        self.crd_serving.start()
        self.pvc_protection.start()
        self.pv_protection.start()
        self.flow_schema_conditions.start()
        if self.kubelet is not None:
            self.kubelet.start()
        if self.deployments == ON_DEMAND:
            self._await_workloads()
        elif self.deployments:
            self._start_controllers()
        self._running = True
        log.info("embedded cluster serving on %s", self.url)
        return self

    def stop(self) -> None:
        """Stop serving; the TLS directory with the server's private key is deleted, and a
        data directory is released (a new ``EmbeddedCluster`` on it carries on)."""
        if self.certs is not None:
            self.certs.remove()
        if not self._running:
            self._close_journal()
            return
        self._running = False
        if self.deployments == ON_DEMAND:
            with self.store.lock:  # no start from a write after this
                self._start_on_demand = False
            self.store.remove_listener(self._on_workload_event)
        self._stop_controllers()
        if self.kubelet is not None:
            self.kubelet.stop()
        self.pvc_protection.stop()
        self.pv_protection.stop()
        self.flow_schema_conditions.stop()
        self.crd_serving.stop()
        self.gc.stop()
        self.http.stop()
        self._close_journal()

    def _start_controllers(self) -> None:
        """Start the Deployment and ReplicaSet controllers in a manager of their own; raises
        when they cannot be set up."""
        ready, failure = self._launch_controllers(_workload_controllers())
        ready.wait()
        if failure:
            raise RuntimeError(
                "the embedded Deployment/ReplicaSet controllers failed to start"
            ) from (failure[0])

    def _await_workloads(self) -> None:
        """``deployments="on-demand"``: start the controllers now when a Deployment or
        ReplicaSet is stored, else on the first one stored (:meth:`_on_workload_event`)."""
        infos = [self.registry.by_key(*key) for key in WORKLOAD_KEYS]
        with self.store.lock:
            present = any(info is not None and self.store.objects(info) for info in infos)
            if not present:
                self._start_on_demand = True
                self.store.add_listener(self._on_workload_event, WORKLOAD_KEYS)
        if present:
            self._start_controllers()

    def _on_workload_event(self, event: Any) -> None:
        """A Deployment or ReplicaSet was written (store lock held, on the writer's thread):
        the first one launches the controllers, without waiting for them (their module is
        loaded on their thread; a failure there is their thread's exception)."""
        if self._start_on_demand:
            self._start_on_demand = False
            self._launch_controllers(None)

    def _launch_controllers(self, entry: Any) -> tuple[threading.Event, list[BaseException]]:
        """Start the thread that sets up the controllers' manager (from ``entry``, their
        module; None: looked up on that thread) and runs it. Returns the event set once the
        set-up is done and the list that then holds its failure, if any."""
        ready = self._controllers_ready = threading.Event()
        failure: list[BaseException] = []

        def run() -> None:
            # Set up on the controllers' own thread: the threads the setup starts (event
            # recorders) are then started outside any simulation when the cluster is on the
            # real clock, as the manager's own are (start_thread).
            try:
                from kube_runtime.manager import Manager

                module = entry if entry is not None else _workload_controllers()
                manager = Manager(
                    Client(_controllers_settings(self)),
                    metrics_bind_address="0",
                    health_probe_bind_address="0",
                    graceful_shutdown_timeout=10,
                    clock=self.clock,
                )
                module.setup(manager, max_concurrent_reconciles=2)
                self.controllers = manager
            except BaseException as err:
                failure.append(err)
                raise
            finally:
                ready.set()
            manager.start()

        self._controllers_thread = threading.Thread(
            target=run, name="embedded-controllers", daemon=True
        )
        start_thread(self._controllers_thread, self.clock)  # detached on the real clock
        return ready, failure

    def _stop_controllers(self) -> None:
        if self._controllers_ready is not None:  # launched: wait for its set-up to end
            self._controllers_ready.wait(15)
        if self.controllers is None:
            return
        self.controllers.stop()
        if self._controllers_thread is not None:
            self._controllers_thread.join(15)
        self.controllers.api_reader.close()
        self.controllers = None
        self._controllers_thread = None
        self._controllers_ready = None

    def _close_journal(self) -> None:
        if self.journal is not None:
            with self.store.lock:  # not in the middle of a commit
                self.journal.close()

    def __enter__(self) -> EmbeddedCluster:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # --------------------------------------------------------------- access

    @property
    def url(self) -> str:
        return self.http.url

    def resource(self, group: str, plural: str) -> ResourceInfo:
        info = self.registry.by_key(group, plural)
        if info is None:
            raise KeyError(f"resource {plural}.{group} is not served")
        return info

    def kubeconfig_dict(self, context: str = "kube-runtime") -> dict[str, Any]:
        from kube_runtime.envtest.kubeconfig import kubeconfig

        ca_pem = self.certs.ca_pem if self.certs is not None else None
        return kubeconfig(self.url, token=self.token, ca_pem=ca_pem, context=context)

    def write_kubeconfig(self, path: str | os.PathLike[str]) -> Path:
        """Write a kubeconfig for this cluster (mode 0600) and return its path."""
        from kube_runtime.envtest.kubeconfig import write_kubeconfig

        return write_kubeconfig(self.kubeconfig_dict(), path)

    def configuration(self) -> Any:
        """A ``kubernetes.client.Configuration`` for this cluster (URL, token, CA)."""
        from kubernetes import client

        config = client.Configuration()
        config.host = self.url
        if self.token:
            config.api_key = {"authorization": f"Bearer {self.token}"}
        if self.certs is not None:
            config.ssl_ca_cert = str(self.certs.ca_file)
        return config

    def api_client(self) -> Any:
        """An official ``kubernetes.client.ApiClient`` for this cluster."""
        from kubernetes import client

        return client.ApiClient(self.configuration())

    def client(self) -> Client:
        """The framework's :class:`~kube_runtime.client.Client` for this cluster, over HTTP
        like any other (thread-safe; close it when done, or use it as a context manager)."""
        return Client(_controllers_settings(self))

    @staticmethod
    def new_token() -> str:
        return secrets.token_urlsafe(24)


_WORKLOAD_ENTRY: list[Any] = []


def _workload_controllers() -> Any:
    """The module of the Deployment and ReplicaSet controllers (its entry point is looked
    up once per process, first in kube-runtime's own distribution, which declares it, then in
    every installed one: that scan costs ~7-25 ms)."""
    if not _WORKLOAD_ENTRY:
        group = "kube_runtime.controllers"
        try:
            found = distribution("kube-runtime").entry_points.select(
                group=group, name=WORKLOAD_CONTROLLERS
            )
        except PackageNotFoundError:
            found = entry_points(group=group, name=WORKLOAD_CONTROLLERS)
        if not found:
            found = entry_points(group=group, name=WORKLOAD_CONTROLLERS)
        if not found:
            raise RuntimeError(
                f"no controller {WORKLOAD_CONTROLLERS!r} in the kube_runtime.controllers entry "
                "points: install kube-runtime (pip install -e .), or pass deployments=False"
            )
        _WORKLOAD_ENTRY.append(next(iter(found)).load())
    return _WORKLOAD_ENTRY[0]


def _controllers_settings(cluster: EmbeddedCluster) -> Settings:
    """The cluster's own controllers' connection settings: :meth:`EmbeddedCluster.configuration`'s
    values as :class:`~kube_runtime.client.config.Settings` (any other attribute is read from
    a real Configuration, built on first use). Building one up front imports the kubernetes
    package, ~0.5 s of CPU in a process that needs it for nothing else (``kube-runtime cluster``)."""
    return Settings(
        cluster.url,
        api_key={"authorization": f"Bearer {cluster.token}"} if cluster.token else None,
        ssl_ca_cert=str(cluster.certs.ca_file) if cluster.certs is not None else None,
        fallback=cluster.configuration,
    )


def _stand_in(key: tuple[str, str], stored: Stored) -> ResourceInfo:
    """A kind for stored custom objects no CRD serves (kept, as etcd keeps them)."""
    kind = str(stored.obj.get("kind") or key[1])
    version = str(stored.obj.get("apiVersion") or "v1").rpartition("/")[2]
    return ResourceInfo(
        group=key[0],
        versions=(version,),
        kind=kind,
        plural=key[1],
        singular=kind.lower(),
        namespaced=bool(stored.meta.get("namespace")),
        tracks_generation=True,
        custom=True,
    )
