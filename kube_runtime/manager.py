"""The manager: owns the client and cache, runs controllers and runnables, elects a leader.

Mirrors controller-runtime's ``pkg/manager``. Lifecycle of :meth:`Manager.start`:

1. start the metrics and probe servers (when their bind addresses are set);
2. start the informer cache (informers start as controllers ask for kinds);
3. start runnables that do not need leader election;
4. with leader election on, campaign for the Lease ``leader_election_id``; once elected (or
   at once without leader election) set :attr:`elected` and start the runnables that need it
   (controllers need it unless built with ``need_leader_election=False``);
   With ``sharding=`` (:class:`~kube_runtime.sharding.Sharding`), the Lease is this replica's
   shard Lease instead (named after its shard id, labelled for the ring): controllers start
   once it is held and their writes are fenced by it; a sharder campaigns on the side;
5. block until :meth:`stop`, SIGINT/SIGTERM (when started on the main thread), a runnable
   failing, or leadership being lost;
6. shut down: signal every runnable to stop (controllers stop intake and finish in-flight
   reconciles), wait up to ``graceful_shutdown_timeout`` for them, then release the lease so a
   follower takes over at once, flush event recorders, stop the cache and the servers.

Which namespaces the cache holds: ``namespaces=["a", "b"]`` caches namespaced kinds in those
namespaces only, one list+watch per kind and namespace (controller-runtime's
``cache.Options.DefaultNamespaces``); ``{"a": NamespaceConfig(label_selector=...)}`` adds
selectors or a transform per namespace; ``namespace="a"`` is shorthand for
``namespaces=["a"]``; neither caches every namespace. ``ByObject(namespaces=...)`` in
``cache_by_object`` replaces them for one kind; cluster-scoped kinds are cached
cluster-wide. Reading a namespace that is not cached raises
:class:`~kube_runtime.cache.NamespaceNotCached` (see :mod:`kube_runtime.cache.cache`).
Sharding takes one namespace or all (``ValueError`` with several).

What the cache keeps: ``cache_by_object={kind: ByObject(...)}`` narrows a kind's informer to
a label or field selector, changes its transform, or caches only its metadata
(:mod:`kube_runtime.cache.options`, controller-runtime's ``cache.Options.ByObject`` and
metadata informers); ``uncached=[kind, ...]`` makes :attr:`client` read those kinds from the
API server, never caching them (controller-runtime's ``client.CacheOptions.DisableFor``, e.g.
for Secrets).

``start`` raises :class:`LeaderElectionLost` if leadership was lost (the process should exit,
as Go managers do) and re-raises the first runnable's error if one failed.

The client is any :class:`~kube_runtime.client.interfaces.WithWatch` (the REST client, or a
fake for a manager that is built but never started); only the REST client's writes can be
fenced.

Extensions. ``sharding=`` takes any :class:`ManagerExtension`: the manager calls its
``attach(manager, identity)`` once, at the end of the constructor, and campaigns for the
:class:`LeaseHook` it returns instead of the leader-election Lease. This module imports no
extension: :mod:`kube_runtime.sharding` sits above it and attaches itself
(:meth:`Sharding.attach <kube_runtime.sharding.Sharding.attach>`).
"""

from __future__ import annotations

import logging
import os
import signal
import socket
import threading
import uuid
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

from kube_runtime.cache import ByObject, InformerCache
from kube_runtime.cache.options import NamespacesLike
from kube_runtime.client import Client, WriteRefused
from kube_runtime.client.cached import CachedClient
from kube_runtime.client.interfaces import Client as ClientInterface
from kube_runtime.client.interfaces import WithWatch
from kube_runtime.clock import Clock, RealClock, resolve
from kube_runtime.events import EventRecorder
from kube_runtime.kinds import KindLike
from kube_runtime.leaderelection import LeaderElector
from kube_runtime.serving import Check, EndpointServer, parse_bind_address

if TYPE_CHECKING:  # annotations only: sharding attaches itself (ManagerExtension)
    from kube_runtime.sharding import Sharder, ShardRuntime

__all__ = [
    "LeaderElectionLost",
    "LeaseHook",
    "Manager",
    "ManagerExtension",
    "Runnable",
    "RunnableFunc",
]

log = logging.getLogger(__name__)

_SA_NAMESPACE_FILE = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"


class Runnable(Protocol):
    """Anything the manager runs: ``start(stop)`` blocks until ``stop`` is set.

    An optional ``need_leader_election`` attribute (default True) says whether it may run only
    on the elected leader.
    """

    def start(self, stop: threading.Event) -> None: ...


class LeaseHook(Protocol):
    """The Lease an attached extension makes a manager campaign for, instead of its
    leader-election Lease (sharding's shard Lease): named :attr:`Manager.identity`."""

    @property
    def lease_namespace(self) -> str | None:
        """Where the Lease lives (None: the manager's ``leader_election_namespace``)."""
        ...

    @property
    def lease_role(self) -> str:
        """What the Lease is, for logs (``"shard Lease"``)."""
        ...

    @property
    def campaigns(self) -> bool:
        """Whether the manager campaigns at all (False: its runnables that need leader
        election never start, as in a sharder-only replica)."""
        ...

    def prepare_lease(self, client: ClientInterface, namespace: str, name: str) -> None:
        """Make the Lease ready before campaigning (create or label it) through the election
        client; an exception is logged and retried every ``retry_period``."""
        ...


class ManagerExtension(Protocol):
    """A part of a manager that a package above this module supplies (``sharding=``)."""

    def attach(self, manager: Manager, identity: str | None) -> LeaseHook:
        """Attach to ``manager``, which is built but for this (``identity``: the one the
        manager was given, None when it chose its own). May set ``manager.identity``, add
        runnables and the ``sharding`` / ``sharder`` attributes. ``ValueError`` when the
        manager's options do not fit."""
        ...


class LeaderElectionLost(RuntimeError):
    """This manager was the leader and lost the lease; stop the process (a new one will campaign)."""


class RunnableFunc:
    """Wrap ``fn(stop)`` as a runnable."""

    def __init__(self, fn: Callable[[threading.Event], None], *, need_leader_election: bool = True):
        self.fn = fn
        self.need_leader_election = need_leader_election

    def start(self, stop: threading.Event) -> None:
        self.fn(stop)


def _default_namespace() -> str:
    try:
        with open(_SA_NAMESPACE_FILE) as f:
            return f.read().strip() or "default"
    except OSError:
        return "default"


class Manager:
    """See the module docstring."""

    def __init__(
        self,
        client: WithWatch | None = None,
        *,
        namespace: str | None = None,
        namespaces: NamespacesLike | None = None,
        resync_period: float | None = None,
        leader_election: bool = False,
        leader_election_id: str | None = None,
        leader_election_namespace: str | None = None,
        lease_duration: float = 15.0,
        renew_deadline: float = 10.0,
        retry_period: float = 2.0,
        identity: str | None = None,
        metrics_bind_address: str = ":8080",
        health_probe_bind_address: str = "0",
        graceful_shutdown_timeout: float = 30.0,
        sharding: ManagerExtension | None = None,
        cache_by_object: Mapping[KindLike, ByObject] | None = None,
        uncached: Iterable[KindLike] = (),
        clock: Clock | None = None,
    ) -> None:
        if leader_election and sharding is not None:
            raise ValueError(
                "leader_election and sharding exclude each other: with sharding every replica "
                "runs the controllers for its own shard (the sharder elects its own leader)"
            )
        if leader_election and not leader_election_id:
            raise ValueError("leader_election=True needs leader_election_id (the Lease's name)")
        #: The manager's time source (:mod:`kube_runtime.clock`; the current clock when None):
        #: its cache, controllers, work queues, leader election and event recorders run on it.
        self.clock: Clock = resolve(clock, "Manager")
        #: The direct client: uncached reads, and every write of :attr:`client`.
        self.api_reader: WithWatch = client if client is not None else Client.from_env()
        if (leader_election or sharding is not None) and isinstance(self.api_reader, Client):
            # Its writes get fenced (see _guard_write): a client of its own, so that the one
            # passed in (often shared, as in tests) is left as it was.
            self.api_reader = self.api_reader.clone()
        self.cache = InformerCache(
            self.api_reader,
            namespace=namespace,
            namespaces=namespaces,
            resync_period=resync_period,
            by_object=cache_by_object,
            clock=self.clock,
        )
        self.client = CachedClient(self.api_reader, self.cache, uncached=uncached)
        #: The one namespace the cache holds (None: several, or every namespace).
        self.namespace = self.cache.namespace
        #: The namespaces the cache holds by default, sorted (None: every namespace).
        self.namespaces = self.cache.namespaces
        self.leader_election = leader_election
        self.leader_election_id = leader_election_id
        self.leader_election_namespace = leader_election_namespace or _default_namespace()
        self.identity = identity or f"{socket.gethostname()}_{uuid.uuid4()}"
        #: This replica's sharding (None when off): see :mod:`kube_runtime.sharding`.
        self.sharding: ShardRuntime | None = None
        #: The sharder this replica campaigns to run (None when off).
        self.sharder: Sharder | None = None
        #: ``(lease_duration, renew_deadline, retry_period)`` of every Lease it campaigns for.
        self.lease_timing = (lease_duration, renew_deadline, retry_period)
        self._lease_timing = (lease_duration, renew_deadline, retry_period)
        self.metrics_bind_address = metrics_bind_address
        self.health_probe_bind_address = health_probe_bind_address
        self.graceful_shutdown_timeout = graceful_shutdown_timeout
        self.elected = self.clock.event()
        self._runnables: list[Any] = []
        self._threads: list[threading.Thread] = []
        self._stop = self.clock.event()
        self._runnable_stop = self.clock.event()
        self._lock = threading.Lock()
        self._started = False
        self._error: BaseException | None = None
        self._lost_leadership = False
        self._elector: LeaderElector | None = None
        self._fenced = False
        self._recorders: dict[str, EventRecorder] = {}
        self._healthz: dict[str, Check] = {"ping": lambda: None}
        self._readyz: dict[str, Check] = {"informers": self._check_cache_synced}
        self._servers: list[EndpointServer] = []
        self.metrics_address: tuple[str, int] | None = None
        self.health_probe_address: tuple[str, int] | None = None
        self._lease_hook: LeaseHook | None = None
        if sharding is not None:
            self._lease_hook = sharding.attach(self, identity)

    def _lease_name(self) -> str:
        """The Lease this manager holds: an extension's (named after the identity), else the
        leader's."""
        if self._lease_hook is not None:
            return self.identity
        assert self.leader_election_id is not None
        return self.leader_election_id

    def _lease_namespace(self) -> str:
        """Where the Lease this manager holds lives."""
        if self._lease_hook is not None and self._lease_hook.lease_namespace:
            return self._lease_hook.lease_namespace
        return self.leader_election_namespace

    # --- composition ---------------------------------------------------------------------------
    def add(self, runnable: Runnable) -> None:
        """Run ``runnable`` with the manager (added after start: started right away if eligible)."""
        with self._lock:
            self._runnables.append(runnable)
            started = self._started
        if started and (not self._needs_leader(runnable) or self.elected.is_set()):
            self._launch(runnable)

    def add_healthz_check(self, name: str, check: Check) -> None:
        self._healthz[name] = check

    def add_readyz_check(self, name: str, check: Check) -> None:
        self._readyz[name] = check

    def get_event_recorder(self, component: str) -> EventRecorder:
        """The (shared) event recorder for ``component``; flushed and closed on shutdown."""
        with self._lock:
            recorder = self._recorders.get(component)
            if recorder is None:
                recorder = EventRecorder(self.api_reader, component, clock=self.clock)
                self._recorders[component] = recorder
            return recorder

    def is_namespaced(self, kind: KindLike) -> bool:
        """Whether ``kind`` is namespaced (from the client's resource mapping)."""
        return bool(self.api_reader.mapper.resource_for(kind).namespaced)

    # --- running -------------------------------------------------------------------------------
    def start(self, stop: threading.Event | None = None) -> None:
        """Run until stopped (see the module docstring); blocks. ``stop``, when given, should
        be made by the manager's clock (``manager.clock.event()``) so that a simulated clock
        sees the thread that waits on it."""
        with self._lock:
            if self._started:
                raise RuntimeError("a manager can be started once")
            self._started = True
        if stop is not None:

            def stop_when_asked() -> None:
                stop.wait()
                self.stop()

            threading.Thread(target=stop_when_asked, name="manager-stop", daemon=True).start()
        restore = self._install_signal_handlers()
        elector_thread: threading.Thread | None = None
        elector_stop = self.clock.event()
        try:
            self._start_servers()
            self.cache.start()
            for r in list(self._runnables):
                if not self._needs_leader(r):
                    self._launch(r)
            hook = self._lease_hook
            if hook is not None and not hook.campaigns:
                log.info(
                    "%s holds no %s: its runnables that need leader election stay idle",
                    self.identity,
                    hook.lease_role,
                )
            elif self.leader_election or hook is not None:
                elector = self._make_elector()
                elector_thread = threading.Thread(
                    target=self._run_elector,
                    args=(elector, elector_stop),
                    name="leader-election",
                    daemon=True,
                )
                elector_thread.start()
            else:
                self._become_leader()
            self._wait_for_stop()
        finally:
            self._shutdown(elector_stop, elector_thread)
            restore()
        if self._lost_leadership:
            raise LeaderElectionLost(
                f"leader election lost for lease {self._lease_namespace()}/{self._lease_name()}"
            )
        if self._error is not None:
            raise self._error

    def _wait_for_stop(self) -> None:
        """Block until :meth:`stop`. On the main thread with the real clock the wait wakes each
        second: a SIGTERM the kernel delivers to another of the process's threads runs its
        Python handler only once the main thread runs again, which a wait on an Event without
        a timeout never does."""
        if threading.current_thread() is threading.main_thread() and isinstance(
            self.clock, RealClock
        ):
            while not self._stop.wait(1.0):
                pass
        else:
            self._stop.wait()

    def stop(self) -> None:
        """Ask a running manager to shut down (returns at once; ``start`` returns when done)."""
        self._stop.set()

    # --- internals -----------------------------------------------------------------------------
    @staticmethod
    def _needs_leader(runnable: Any) -> bool:
        return bool(getattr(runnable, "need_leader_election", True))

    def _launch(self, runnable: Any) -> None:
        def run() -> None:
            try:
                runnable.start(self._runnable_stop)
            except BaseException as e:
                if not self._runnable_stop.is_set():
                    log.exception("runnable %r failed; stopping the manager", runnable)
                    with self._lock:
                        if self._error is None:
                            self._error = e
                    self.stop()

        t = threading.Thread(target=run, name=f"runnable-{runnable!r}", daemon=True)
        with self._lock:
            self._threads.append(t)
        t.start()

    def _become_leader(self) -> None:
        self.elected.set()
        for r in list(self._runnables):
            if self._needs_leader(r):
                self._launch(r)

    def _guard_write(self, method: str, path: str) -> None:
        """The REST client's write guard under leader election: once this manager has been
        elected, a write is sent only while the elector can prove its lease (fencing)."""
        elector = self._elector
        if elector is None or not self.elected.is_set() or elector.holds_lease_safely():
            return
        with self._lock:
            first = not self._fenced and not self._stop.is_set()  # not a normal shutdown
            self._fenced = True
        if first:
            log.error(
                "leader election: lease %s/%s no longer provably held by %s; refusing writes "
                "and stopping the manager",
                self._lease_namespace(),
                self._lease_name(),
                self.identity,
            )
            self._lost_leadership = True
            self.stop()
        raise WriteRefused(f"{method} {path}: not sent, this process no longer leads")

    def _run_elector(self, elector: LeaderElector, stop: threading.Event) -> None:
        """Campaign with ``elector``; with a :class:`LeaseHook` (a shard), the hook first
        prepares the Lease (retrying until the API answers or the manager stops)."""
        hook = self._lease_hook
        if hook is not None:
            reported: set[str] = set()
            while not stop.is_set():
                try:
                    hook.prepare_lease(
                        elector._lock.client, self._lease_namespace(), self._lease_name()
                    )
                    break
                except Exception as e:
                    # Once per kind of failure (a 403 repeats until RBAC changes), then quietly.
                    why = f"{type(e).__name__}: {e}"
                    level = logging.DEBUG if why in reported else logging.WARNING
                    reported.add(why)
                    log.log(
                        level,
                        "cannot prepare the %s %s (retrying every %ss): %s",
                        hook.lease_role,
                        self.identity,
                        self._lease_timing[2],
                        e,
                    )
                    stop.wait(self._lease_timing[2])
            if stop.is_set():
                elector._on_stopped_leading()
                return
        elector.run(stop)

    def _make_elector(self) -> LeaderElector:
        lease_duration, renew_deadline, retry_period = self._lease_timing

        def on_started(_leader_stop: threading.Event) -> None:
            log.info("became leader of lease %s as %s", self._lease_name(), self.identity)
            self._become_leader()

        def on_stopped() -> None:
            if not self._stop.is_set():
                log.error("leader election lost; stopping the manager")
                self._lost_leadership = True
                self.stop()

        # The Lease has a client of its own: its renewals are not queued behind the
        # controllers' requests, and the write guard below does not apply to them.
        election_client: Any = self.api_reader
        if isinstance(self.api_reader, Client):
            election_client = self.api_reader.clone()
            self.api_reader.write_guard = self._guard_write
        self._elector = LeaderElector(
            election_client,
            self._lease_namespace(),
            self._lease_name(),
            self.identity,
            lease_duration=lease_duration,
            renew_deadline=renew_deadline,
            retry_period=retry_period,
            on_started_leading=on_started,
            on_stopped_leading=on_stopped,
            release_on_cancel=True,
            clock=self.clock,
            event_recorder=self._election_recorder(election_client),
        )
        return self._elector

    def _election_recorder(self, client: Any) -> EventRecorder:
        """The recorder of the election's own events ("became leader", "stopped leading"):
        it writes through the election client, which the write guard does not fence."""
        name = self._lease_name()
        recorder = EventRecorder(client, name, clock=self.clock)
        with self._lock:
            self._recorders[f"leader-election:{name}"] = recorder
        return recorder

    def _shutdown(self, elector_stop: threading.Event, elector: threading.Thread | None) -> None:
        log.info("manager: stopping runnables (timeout %.0fs)", self.graceful_shutdown_timeout)
        self._runnable_stop.set()
        self.cache.interrupt_waits()  # reconciles waiting on a cache that cannot sync end now
        now = self.clock.monotonic
        deadline = now() + self.graceful_shutdown_timeout
        with self._lock:
            threads = list(self._threads)
        for t in threads:
            t.join(max(0.0, deadline - now()))
        stuck = [t.name for t in threads if t.is_alive()]
        if stuck:
            log.warning("manager: runnables still running after the timeout: %s", stuck)
        elector_stop.set()  # releases the lease now that our controllers have stopped
        if elector is not None:
            elector.join(max(1.0, deadline - now()))
        for recorder in list(self._recorders.values()):
            recorder.flush(timeout=2.0)
            recorder.close()
        self.cache.stop()
        for server in self._servers:
            server.stop()
        log.info("manager: stopped")

    def _start_servers(self) -> None:
        metrics_at = parse_bind_address(self.metrics_bind_address)
        probes_at = parse_bind_address(self.health_probe_bind_address)
        if metrics_at is not None:
            same = probes_at == metrics_at and metrics_at[1] != 0
            server = EndpointServer(
                metrics_at,
                metrics=True,
                healthz=self._healthz if same else None,
                readyz=self._readyz if same else None,
            )
            self.metrics_address = server.address
            if same:
                self.health_probe_address, probes_at = server.address, None
            self._servers.append(server)
        if probes_at is not None:
            server = EndpointServer(probes_at, healthz=self._healthz, readyz=self._readyz)
            self.health_probe_address = server.address
            self._servers.append(server)
        for server in self._servers:
            server.start()

    def _check_cache_synced(self) -> None:
        if not self.cache.wait_for_cache_sync(0):
            raise RuntimeError("informer caches not synced yet")

    def _install_signal_handlers(self) -> Callable[[], None]:
        if threading.current_thread() is not threading.main_thread():
            return lambda: None
        previous = {}

        def on_signal(signum: int, _frame: object) -> None:
            if self._stop.is_set():  # a second signal: exit now, as Go managers do
                os._exit(1)
            log.info("manager: received signal %d, shutting down", signum)
            self.stop()

        for sig in (signal.SIGINT, signal.SIGTERM):
            previous[sig] = signal.signal(sig, on_signal)

        def restore() -> None:
            for sig, handler in previous.items():
                signal.signal(sig, handler)

        return restore
