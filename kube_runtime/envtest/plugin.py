"""pytest plugin: cluster fixtures (see :mod:`kube_runtime.envtest`).

Inert until used: loading the plugin (installing kube-runtime registers it through the
``pytest11`` entry point) adds the ``--backend`` option and two markers, and changes nothing
else in a session but one thing: pytest does not rewrite the assertions of kube-runtime's own
packages (:data:`OWN_PACKAGES`), which it would do for any package that ships a plugin. Their
``assert`` statements are internal invariants, not a test's checks, and loading a module
through pytest's rewriting importer costs ~0.6 ms more than a plain import (~0.1 s of the
~170 modules a simulated test imports). A test's own files and conftests are rewritten as
always. The cluster starts when a test first asks for one of its fixtures.

The embedded session cluster keeps a small watch window (:data:`WATCH_HISTORY_SIZE` events
and :data:`WATCH_HISTORY_AGE` seconds per resource, as kube-apiserver's watch cache: a watch
from an older resourceVersion gets 410 Expired); the ini options
``kube_runtime_watch_history_size`` and ``kube_runtime_watch_history_age`` change it.

Two backends serve the same fixtures, chosen with ``--backend`` or ``$KUBE_RUNTIME_BACKEND``:

* ``embedded`` (default): the in-process :class:`~kube_runtime.envtest.cluster.EmbeddedCluster`;
* ``real``: etcd + kube-apiserver + kube-controller-manager 1.20 and the client-based simulated
  kubelet (:class:`~kube_runtime.envtest.real.RealCluster`), from the binaries
  ``scripts/real-apiserver.sh`` caches. Missing binaries fail the session.

On ``real``, a test is skipped (with the reason in the report) when it is marked
``embedded_only(reason)``, marked ``needs_k8s("1.21", reason)`` for a newer version than the
real one, requests the ``faults`` fixture, or touches an embedded-only attribute of the
cluster fixture (``store``, ``api``, ...).
"""

from __future__ import annotations

import contextlib
import gc
import os
import time
import uuid
import warnings
from collections.abc import Callable, Generator, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import pytest

if TYPE_CHECKING:  # imported when a fixture runs: loading the plugin stays cheap and inert
    from kube_runtime.client import Client
    from kube_runtime.clock import Clock
    from kube_runtime.envtest.server.faults import Faults

BACKEND_ENV = "KUBE_RUNTIME_BACKEND"
BACKENDS = ("embedded", "real")
#: The version of the real backend's binaries (``needs_k8s`` compares against it).
REAL_VERSION = (1, 20)
#: The session cluster's watch window: small, as kube-apiserver's watch cache is, so that a
#: client's handling of 410 Expired runs in tests (ini options ``kube_runtime_watch_history_*``).
WATCH_HISTORY_SIZE = 1_000
WATCH_HISTORY_AGE = 75.0
#: Attributes of ``EmbeddedCluster`` that have no counterpart on a real cluster.
EMBEDDED_ONLY_ATTRIBUTES = frozenset(
    {"store", "registry", "api", "http", "gc", "faults", "resource", "crds"}
)
#: The top-level packages of kube-runtime's distribution, which pytest marks for assertion
#: rewriting because the distribution registers this plugin; the plugin takes the marks back.
OWN_PACKAGES = ("kube_runtime", "controllers", "codegen", "kube_runtime_demo")


def _unmark_own_packages(pluginmanager: pytest.PytestPluginManager) -> None:
    """Take :data:`OWN_PACKAGES` off the modules pytest's import hook rewrites (their
    submodules with them). The hook's set of marked names is pytest's internal state: with
    another pytest, or no rewriting (``--assert=plain``), nothing is changed."""
    hook = getattr(pluginmanager, "rewrite_hook", None)
    marked = getattr(hook, "_must_rewrite", None)
    decided = getattr(hook, "_marked_for_rewrite_cache", None)
    if not isinstance(marked, set) or not isinstance(decided, dict):
        return
    marked.difference_update(OWN_PACKAGES)
    decided.clear()  # names looked up so far are decided again


def pytest_addoption(parser: pytest.Parser, pluginmanager: pytest.PytestPluginManager) -> None:
    # Called when the plugin is registered: before conftests and test modules import anything.
    _unmark_own_packages(pluginmanager)
    group = parser.getgroup("kube-runtime")
    group.addoption(
        "--backend",
        choices=BACKENDS,
        default=None,
        help=f"cluster backend of the fixtures (default: ${BACKEND_ENV} or embedded)",
    )
    group.addoption(
        "--sim-seed",
        dest="sim_seed",
        default=None,
        help="seed of the simulated clocks (sim_clock, @pytest.mark.simtime): the order of "
        "waiters due at the same virtual instant and the framework's jitter",
    )
    parser.addini(
        "kube_runtime_namespace_wait",
        "seconds the namespace fixture waits for its namespace to be gone, warning when an "
        "object's finalizer keeps it terminating (default 0: no wait)",
        default="0",
    )
    parser.addini(
        "kube_runtime_watch_history_size",
        f"events of each resource the embedded cluster keeps for watches (default "
        f"{WATCH_HISTORY_SIZE}); a watch from before them gets 410 Expired",
        default=str(WATCH_HISTORY_SIZE),
    )
    parser.addini(
        "kube_runtime_watch_history_age",
        f"seconds of events the embedded cluster keeps for watches (default "
        f"{WATCH_HISTORY_AGE:g}; 0: no age bound)",
        default=str(WATCH_HISTORY_AGE),
    )


def backend_of(config: pytest.Config) -> str:
    """The backend chosen for this session: option, then environment, then ``embedded``."""
    chosen = config.getoption("--backend", default=None) or os.environ.get(BACKEND_ENV)
    chosen = chosen or "embedded"
    if chosen not in BACKENDS:
        raise pytest.UsageError(f"{BACKEND_ENV}={chosen!r}: expected one of {BACKENDS}")
    return str(chosen)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "simtime(seed=None, stall_timeout=60, cpu='auto'): run the test on a simulated clock "
        "(the sim_clock fixture first) pinned to one CPU (cpu=None: not pinned); real time on "
        "the real backend",
    )
    config.addinivalue_line(
        "markers",
        "embedded_only(reason): needs the embedded server (skipped on the real backend)",
    )
    config.addinivalue_line(
        "markers",
        'needs_k8s(version, reason): needs Kubernetes >= version (e.g. "1.21"); '
        "skipped on an older real backend",
    )


def pytest_report_header(config: pytest.Config) -> str:
    return f"kube-runtime backend: {backend_of(config)}"


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(p) for p in str(text).lstrip("v").split(".")[:2])


def _skip_reason(item: pytest.Item) -> str | None:
    """Why ``item`` cannot run on the real backend (None: it can)."""
    marker = item.get_closest_marker("embedded_only")
    if marker is not None:
        why = marker.args[0] if marker.args else marker.kwargs.get("reason", "")
        return f"embedded only: {why}"
    marker = item.get_closest_marker("needs_k8s")
    if marker is not None and marker.args and _version(marker.args[0]) > REAL_VERSION:
        why = marker.args[1] if len(marker.args) > 1 else marker.kwargs.get("reason", "")
        return f"needs Kubernetes {marker.args[0]} (real backend is 1.20): {why}"
    if "faults" in getattr(item, "fixturenames", ()):
        return "embedded only: fault injection exists only in the embedded server"
    return None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        names = getattr(item, "fixturenames", None)
        if item.get_closest_marker("simtime") is not None and isinstance(names, list):
            if "sim_clock" in names:
                names.remove("sim_clock")
            names.insert(0, "sim_clock")  # set up first: every other fixture runs on it
    if backend_of(config) != "real":
        return
    for item in items:
        reason = _skip_reason(item)
        if reason is not None:
            item.add_marker(pytest.mark.skip(reason=f"real backend: {reason}"))


def _real_cluster_class() -> type[Any]:
    from kube_runtime.envtest.real import RealCluster

    class RealBackend(RealCluster):
        """A RealCluster whose embedded-only attributes skip the test that asks for them."""

        def __getattr__(self, name: str) -> Any:
            if name in EMBEDDED_ONLY_ATTRIBUTES:
                pytest.skip(f"real backend: embedded only: uses the embedded cluster's `{name}`")
            raise AttributeError(name)

    return RealBackend


@pytest.fixture(scope="session")
def embedded_cluster(request: pytest.FixtureRequest) -> Iterator[Any]:
    """One cluster for the whole session (tests isolate by namespace): the embedded one, or
    the real control plane with ``--backend real``."""
    if backend_of(request.config) == "real":
        from kube_runtime.envtest.real import missing_binaries_message

        problem = missing_binaries_message()
        if problem:
            pytest.fail(problem, pytrace=False)
        real = _real_cluster_class()(pod_ready_after=0.02)
        real.start()
        try:
            yield real
        finally:
            real.stop()
        return
    from kube_runtime.envtest.cluster import EmbeddedCluster

    config = request.config
    age = float(config.getini("kube_runtime_watch_history_age"))
    from kube_runtime import clock

    cluster = EmbeddedCluster(
        token=EmbeddedCluster.new_token(),
        pod_ready_after=0.02,
        clock=clock.REAL,  # real time, even when a simulated test is the first to ask for it
        history_size=int(config.getini("kube_runtime_watch_history_size")),
        history_age=age if age > 0 else None,
    )
    with cluster:  # start(), and stop() when the fixture ends
        yield cluster


@pytest.fixture(scope="session")
def kubeconfig(embedded_cluster: Any, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Path of a kubeconfig file for the session cluster (bearer token, CA; mode 0600): for
    kubectl, subprocesses and any client that reads kubeconfigs."""
    path: Path = embedded_cluster.write_kubeconfig(tmp_path_factory.mktemp("kube") / "kubeconfig")
    return path


@pytest.fixture(scope="session")
def client(kubeconfig: Path) -> Iterator[Client]:
    """The framework's :class:`~kube_runtime.client.Client` for the session cluster
    (thread-safe, shared by every test; closed at the end of the session)."""
    from kube_runtime.client import Client

    c = Client.from_kubeconfig(kubeconfig)
    try:
        yield c
    finally:
        c.close()


@pytest.fixture(scope="session")
def kube_version(client: Client) -> tuple[int, int]:
    """``(major, minor)`` of the session cluster: (1, 20) on the real backend, a current
    release on the embedded one. For expectations that differ between releases."""
    from kube_runtime.envtest.version import server_version

    return server_version(client)


@pytest.fixture
def api_client(embedded_cluster: Any) -> Iterator[Any]:
    """An official ``kubernetes.client.ApiClient`` bound to the session cluster (per test)."""
    client = embedded_cluster.api_client()
    try:
        yield client
    finally:
        client.close()


def _namespace_wait(config: pytest.Config, embedded: bool) -> float:
    """Seconds the ``namespace`` fixture waits for its namespace to be gone."""
    raw = str(config.getini("kube_runtime_namespace_wait")).strip().lower()
    return max(0.0, float(raw or 0))


def _wait_namespace_gone(cluster: Any, name: str, seconds: float) -> None:
    """Wait until the namespace is gone; warn (naming what holds it) when it is not."""
    info = cluster.resource("", "namespaces")
    deadline = time.monotonic() + seconds
    while True:
        stored = cluster.store.try_get(info, None, name)
        if stored is None:
            return
        if time.monotonic() > deadline:
            conditions = stored.obj.get("status", {}).get("conditions") or []
            held = "; ".join(str(c.get("message")) for c in conditions if c.get("status") == "True")
            warnings.warn(
                f"namespace {name} is still terminating {seconds:g} s after the test: "
                f"{held or 'its content is being deleted'} (an object with a finalizer no "
                "controller removes?)",
                stacklevel=1,
            )
            return
        time.sleep(0.01)


@pytest.fixture
def namespace(embedded_cluster: Any, request: pytest.FixtureRequest) -> Iterator[str]:
    """A fresh namespace for one test, deleted (with its content) afterwards. With the ini
    option ``kube_runtime_namespace_wait = SECONDS`` the fixture also waits until it is gone
    and, on the embedded cluster, warns naming what holds it when an object's finalizer keeps
    it terminating (off by default: a suite that leaves finalizers on purpose would wait)."""
    from kube_runtime.envtest.cluster import EmbeddedCluster

    name = f"t-{uuid.uuid4().hex[:10]}"
    if isinstance(embedded_cluster, EmbeddedCluster):
        info = embedded_cluster.resource("", "namespaces")
        embedded_cluster.store.create(info, None, {"metadata": {"name": name}})
        try:
            yield name
        finally:
            try:
                embedded_cluster.store.delete(info, None, name)
            except Exception:
                pass
            else:
                wait = _namespace_wait(request.config, embedded=True)
                if wait > 0:
                    _wait_namespace_gone(embedded_cluster, name, wait)
        return
    c: Client = request.getfixturevalue("client")
    with _api_namespace(c, name, _namespace_wait(request.config, embedded=False)):
        yield name


@contextlib.contextmanager
def _api_namespace(c: Client, name: str, wait: float) -> Iterator[str]:
    """Namespace ``name`` created through ``c`` for the block, then deleted (waiting up to
    ``wait`` seconds for it to be gone)."""
    c.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    try:
        yield name
    finally:
        try:
            c.delete("v1/Namespace", name)
        except Exception:
            pass
        else:
            deadline = time.monotonic() + wait
            while time.monotonic() < deadline:
                try:
                    c.get("v1/Namespace", name)
                except Exception:
                    break
                time.sleep(0.2)


@pytest.fixture
def kubelet(embedded_cluster: Any) -> Iterator[Any]:
    """The simulated kubelet; changes to ``kubelet.settings`` are undone after the test."""
    kubelet = embedded_cluster.kubelet
    saved = None
    if kubelet is not None:
        from dataclasses import replace

        saved = replace(kubelet.settings)
    yield kubelet
    if kubelet is not None and saved is not None:
        kubelet.settings = saved


@pytest.fixture
def faults(embedded_cluster: Any) -> Iterator[Faults]:
    """The embedded server's fault injection (:class:`~kube_runtime.envtest.server.faults.Faults`),
    cleared before and after the test; skips the test on the real backend. Rules match a
    resource (``"sites"`` with its subresources, ``"sites/status"``, ``"*"``), a verb, and
    optionally a ``user_agent`` or a write's ``field_manager``:
    ``faults.fail("sites/status", "patch", 500, user_agent="site-operator")``."""
    from kube_runtime.envtest.cluster import EmbeddedCluster

    if not isinstance(embedded_cluster, EmbeddedCluster):
        pytest.skip("real backend: embedded only: fault injection")
    embedded_cluster.faults.clear()
    try:
        yield embedded_cluster.faults
    finally:
        embedded_cluster.faults.clear()


@pytest.fixture
def wait_for() -> Callable[..., Any]:
    """:func:`kube_runtime.envtest.wait_for`: poll a predicate until true or a timeout."""
    from kube_runtime.envtest.waiting import wait_for as _wait_for

    return _wait_for


# --- webhooks ---------------------------------------------------------------------------------


@pytest.fixture
def serve_webhooks(client: Client) -> Iterator[Callable[..., Any]]:
    """``serve_webhooks(manager, namespace)``: run ``manager`` (not started, its webhooks
    registered) with the session cluster calling its webhooks for objects in ``namespace``,
    until the test ends; returns the
    :class:`~kube_runtime.webhook.install.WebhookInstaller`. Both backends: see
    :func:`kube_runtime.envtest.webhooks.serving_webhooks` (the certificate, configurations
    scoped by a namespace label, and the wait until the API server calls them)."""
    from kube_runtime.envtest.webhooks import serving_webhooks

    with contextlib.ExitStack() as stack:

        def serve(manager: Any, namespace: str, **options: Any) -> Any:
            options.setdefault("client", client)
            return stack.enter_context(serving_webhooks(manager, namespace, **options))

        yield serve


# --- RBAC -------------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def rbac_cluster(request: pytest.FixtureRequest) -> Iterator[Any]:
    """A cluster of its own that enforces RBAC and OwnerReferencesPermissionEnforcement,
    started on first use and shared by the session: on the embedded backend an
    :class:`~kube_runtime.envtest.cluster.EmbeddedCluster` with ``authorization="RBAC"``
    (:func:`kube_runtime.envtest.rbac.embedded_rbac_cluster`), on the real one a
    kube-apiserver 1.20 with ``--authorization-mode=RBAC``
    (:func:`kube_runtime.envtest.rbac.rbac_cluster`; its binaries missing fail the test)."""
    from kube_runtime.envtest import rbac as _rbac_testing

    if backend_of(request.config) != "real":
        cluster: Any = _rbac_testing.embedded_rbac_cluster(pod_ready_after=0.02)
    else:
        from kube_runtime.envtest.real import missing_binaries_message

        problem = missing_binaries_message()
        if problem:
            pytest.fail(problem, pytrace=False)
        cluster = _rbac_testing.rbac_cluster(pod_ready_after=0.02)
    with cluster:  # start(), and stop() when the fixture ends
        yield cluster


@pytest.fixture(scope="session")
def rbac_admin(rbac_cluster: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Client]:
    """A :class:`~kube_runtime.client.Client` of ``rbac_cluster`` in ``system:masters``
    (every request allowed): for a test's own objects and its checks."""
    from kube_runtime.client import Client

    c = Client.from_kubeconfig(
        rbac_cluster.write_kubeconfig(tmp_path_factory.mktemp("rbac-admin") / "kubeconfig")
    )
    try:
        yield c
    finally:
        c.close()


@pytest.fixture
def client_with_rules(rbac_admin: Client) -> Iterator[Callable[..., Any]]:
    """``client_with_rules(rules, *, namespace=None, leader_election=True)``: a
    :class:`~kube_runtime.envtest.rbac.Grant` whose ``client`` is a ServiceAccount of
    ``rbac_cluster`` granted exactly ``rules`` (e.g. ``rbac.rules_of(setup)``) as
    ``kube-runtime rbac`` renders them (plus events and, unless ``leader_election=False``,
    the Lease in ``grant.namespace``); undone after the test
    (:func:`kube_runtime.envtest.rbac.granted`). Both backends."""
    from kube_runtime.envtest.rbac import granted

    with contextlib.ExitStack() as stack:

        def grant(rules: Any, **options: Any) -> Any:
            return stack.enter_context(granted(rbac_admin, rules, **options))

        yield grant


# --- simulated time ---------------------------------------------------------------------------


def _sim_settings(request: pytest.FixtureRequest) -> tuple[int | None, float]:
    """The seed (``--sim-seed``, else the ``simtime`` marker's, else None) and the stall
    timeout (real seconds) of a test's simulated clock."""
    marker = request.node.get_closest_marker("simtime")
    kwargs = marker.kwargs if marker is not None else {}
    option = request.config.getoption("sim_seed", None)
    seed = int(option) if option is not None else kwargs.get("seed")
    return seed, float(kwargs.get("stall_timeout", 60.0))


def _sim_cpu() -> int | Literal["auto"]:
    """The CPU a simulation of this process runs on: under pytest-xdist, worker ``gwN`` takes
    the N-th of the CPUs it may run on (modulo their number), so that two workers' simulations
    do not share one; otherwise ``"auto"`` (the CPU the test's thread is on)."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    if not worker.startswith("gw") or not worker[2:].isdigit():
        return "auto"
    if not hasattr(os, "sched_getaffinity"):
        return "auto"
    allowed = sorted(os.sched_getaffinity(0))
    return allowed[int(worker[2:]) % len(allowed)]


@pytest.fixture
def sim_clock(request: pytest.FixtureRequest) -> Iterator[Clock]:
    """A :class:`~kube_runtime.clock.SimClock` active for the rest of the test (fixtures
    requested after it, the test body and their teardown run on it): virtual time that jumps
    to the next deadline whenever every participant thread is blocked. On the real backend it
    is :data:`~kube_runtime.clock.REAL` and the test runs in real time. A failure's report
    shows the clock's seed and virtual time (``--sim-seed N`` replays a seed). The simulation
    runs on one CPU (``SimClock``'s ``cpu``; under pytest-xdist worker ``gwN`` takes the N-th
    allowed CPU; the marker's ``cpu=None`` turns that off), and the objects alive before the
    test are left out of full garbage collections until it ends (:func:`gc.freeze`)."""
    from kube_runtime import clock

    if backend_of(request.config) == "real":
        yield clock.REAL
        return
    seed, stall = _sim_settings(request)
    marker = request.node.get_closest_marker("simtime")
    cpu: int | Literal["auto"] | None = "auto"
    if marker is not None:
        cpu = marker.kwargs.get("cpu", "auto")
    sim = clock.SimClock(seed=seed, stall_timeout=stall, cpu=_sim_cpu() if cpu == "auto" else cpu)
    request.node.stash[_SIM_KEY] = sim
    frozen = _freeze_heap()
    try:
        with sim.activate():
            yield sim
    finally:
        if frozen:
            gc.unfreeze()


def _freeze_heap() -> bool:
    """Leave the objects alive now (the session's modules, fixtures, earlier tests' caches)
    out of the garbage collector's full collections until :func:`gc.unfreeze`: a simulated
    hour allocates enough to set one off, and scanning the session's heap is ~50 ms of the
    heartbeat example's CPU. Not done (False) when something else froze objects already, or
    with the collector disabled."""
    if not gc.isenabled() or gc.get_freeze_count():
        return False
    gc.freeze()
    return True


@pytest.fixture
def sim_cluster(sim_clock: Clock, request: pytest.FixtureRequest) -> Iterator[Any]:
    """An embedded cluster of the test's own on the simulated clock: its API server's timers,
    garbage collector and kubelet run in virtual time, and its timestamps are virtual. Its
    Deployment and ReplicaSet controllers start with the first Deployment or ReplicaSet
    stored (``deployments="on-demand"``: a test with none does not pay for them). On the
    real backend, the session cluster (real time)."""
    from kube_runtime.envtest.cluster import ON_DEMAND, EmbeddedCluster

    if backend_of(request.config) == "real":
        yield request.getfixturevalue("embedded_cluster")
        return
    cluster = EmbeddedCluster(pod_ready_after=0.02, clock=sim_clock, deployments=ON_DEMAND)
    with cluster:  # start(), and stop() when the fixture ends
        yield cluster


@pytest.fixture
def sim_kubeconfig(sim_cluster: Any, tmp_path: Path) -> Path:
    """A kubeconfig file for :func:`sim_cluster` (for ``kube-runtime`` entry points in-process)."""
    path: Path = sim_cluster.write_kubeconfig(tmp_path / "sim-kubeconfig")
    return path


@pytest.fixture
def sim_client(sim_cluster: Any, request: pytest.FixtureRequest) -> Iterator[Client]:
    """A :class:`~kube_runtime.client.Client` of :func:`sim_cluster` (a new one per test)."""
    from kube_runtime.client import Client

    if backend_of(request.config) == "real":
        c = Client.from_kubeconfig(request.getfixturevalue("kubeconfig"))
    else:
        c = sim_cluster.client()
    try:
        yield c
    finally:
        c.close()


@pytest.fixture
def sim_namespace(sim_cluster: Any, request: pytest.FixtureRequest) -> Iterator[str]:
    """A namespace in :func:`sim_cluster` (deleted afterwards on the real backend; on the
    embedded one the cluster is the test's own and goes with it)."""
    name = f"t-{uuid.uuid4().hex[:10]}"
    if backend_of(request.config) == "real":  # a module may have made ``namespace`` this one
        c: Client = request.getfixturevalue("sim_client")
        with _api_namespace(c, name, _namespace_wait(request.config, embedded=False)):
            yield name
        return
    sim_cluster.store.create(
        sim_cluster.resource("", "namespaces"), None, {"metadata": {"name": name}}
    )
    yield name


_SIM_KEY = pytest.StashKey["Clock"]()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, Any, None]:
    """A failed test that ran on a simulated clock reports the clock's seed and time."""
    outcome = yield
    report = outcome.get_result()
    sim = item.stash.get(_SIM_KEY, None)
    if sim is not None and report.failed:
        report.sections.append(
            (
                "simulated clock",
                f"seed={getattr(sim, 'seed', None)} (replay with --sim-seed), virtual time "
                f"{sim.monotonic():.3f} s ({sim.now().isoformat()})",
            )
        )
