"""A real Kubernetes 1.20 control plane for the conformance backend of the test suite.

:class:`RealCluster` starts, on loopback, the binaries that ``scripts/real-apiserver.sh``
builds and caches (``~/.cache/kube-runtime/k8s-1.20/bin`` or ``$KUBE_RUNTIME_REAL_BIN``):

* **etcd** (Debian's 3.4) with its data on tmpfs when ``/dev/shm`` exists;
* **kube-apiserver** serving TLS with a throwaway CA (:mod:`kube_runtime.envtest.server.tls`), a
  static token file, ``--authorization-mode=AlwaysAllow``, the ServiceAccount admission plugin
  off, no endpoint reconciler and no insecure port;
* **kube-controller-manager** with only ``controllers`` (default: the garbage collector, the
  namespace, pvc-protection, deployment and replicaset controllers, see
  :data:`DEFAULT_CONTROLLERS`) and no
  leader election;
* the simulated kubelet (:class:`kube_runtime.envtest.kubelet.ClientKubelet`) working through the API.

It has the surface the test fixtures use from
:class:`~kube_runtime.envtest.cluster.EmbeddedCluster`: ``url``, ``token``, ``certs``,
``kubelet``, ``kubeconfig_dict()``, ``write_kubeconfig(path)``, ``api_client()``, ``start()``,
``stop()`` and the context manager. Embedded-only parts (``store``, ``faults``, ``api``, ...)
do not exist here. Every process writes its log to ``<workdir>/<name>.log``; a failed start
raises :class:`RealClusterError` with the tail of the relevant log.
"""

from __future__ import annotations

import logging
import os
import secrets
import shutil
import signal
import socket
import ssl
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from kube_runtime.envtest.kubeconfig import kubeconfig, write_kubeconfig
from kube_runtime.envtest.server import tls as tls_certs
from kube_runtime.envtest.server.tls import ServingCerts

log = logging.getLogger(__name__)

#: The binaries a real backend needs.
BINARIES = ("etcd", "kube-apiserver", "kube-controller-manager")
#: Controllers kube-controller-manager runs by default here: the garbage collector, the
#: namespace controller (deleting a namespace needs it), pvc-protection (kube-apiserver's
#: admission gives every claim the ``kubernetes.io/pvc-protection`` finalizer, which only
#: that controller removes) and the deployment and replicaset controllers (a Deployment gets
#: its ReplicaSets, pods and status, as on the embedded cluster).
DEFAULT_CONTROLLERS = (
    "garbagecollector",
    "namespace",
    "pvc-protection",
    "deployment",
    "replicaset",
)
SERVICE_CIDR = "10.96.0.0/16"
START_TIMEOUT = 90.0
STOP_TIMEOUT = 10.0


class RealClusterError(RuntimeError):
    """The real control plane could not be started."""


def default_bin_dir() -> Path:
    """Where the binaries are looked for: ``$KUBE_RUNTIME_REAL_BIN`` or the build cache."""
    env = os.environ.get("KUBE_RUNTIME_REAL_BIN")
    if env:
        return Path(env)
    return Path.home() / ".cache" / "kube-runtime" / "k8s-1.20" / "bin"


def missing_binaries(bin_dir: Path | None = None) -> list[str]:
    """The names of :data:`BINARIES` not executable in ``bin_dir`` (empty: all present)."""
    target = bin_dir or default_bin_dir()
    return [b for b in BINARIES if not os.access(target / b, os.X_OK)]


def missing_binaries_message(bin_dir: Path | None = None) -> str | None:
    """Why the real backend cannot start from ``bin_dir`` (default :func:`default_bin_dir`),
    or ``None`` when every one of :data:`BINARIES` is there.

    The message names the directory looked in and where that came from
    (``$KUBE_RUNTIME_REAL_BIN``, the build cache, or the caller), says that it must be the
    ``bin/`` folder holding etcd, kube-apiserver and kube-controller-manager, suggests
    ``<dir>/bin`` when the binaries are there instead, and how to build them.
    """
    env = os.environ.get("KUBE_RUNTIME_REAL_BIN")
    if bin_dir is not None:
        source = "given"
    elif env:
        source = "from $KUBE_RUNTIME_REAL_BIN"
    else:
        source = "the build cache; set $KUBE_RUNTIME_REAL_BIN for another"
    target = bin_dir or default_bin_dir()
    missing = missing_binaries(target)
    if not missing:
        return None
    hint = ""
    if not missing_binaries(target / "bin"):
        hint = f" (they are in {target / 'bin'}: name that folder)"
    return (
        f"real backend: missing {', '.join(missing)} in {target} ({source}){hint}; "
        f"KUBE_RUNTIME_REAL_BIN must name the bin/ folder holding {', '.join(BINARIES)} "
        f"(e.g. {Path.home() / '.cache' / 'kube-runtime' / 'k8s-1.20' / 'bin'}); "
        "scripts/real-apiserver.sh builds them"
    )


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _tail(path: Path, lines: int = 30) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


class ChildProcess:
    """One child process with its log file (stdout and stderr); :meth:`stop` sends SIGTERM,
    then SIGKILL after ``stop_timeout`` seconds. Its own session, so signals to the test
    process do not reach it."""

    def __init__(
        self, name: str, argv: Sequence[str], log_path: Path, stop_timeout: float = STOP_TIMEOUT
    ) -> None:
        self.name = name
        self.log_path = log_path
        self.stop_timeout = stop_timeout
        self._log = open(log_path, "wb")  # noqa: SIM115 - closed in stop()
        log.debug("starting %s: %s", name, " ".join(argv))
        self.proc = subprocess.Popen(
            list(argv),
            stdout=self._log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )

    @property
    def pid(self) -> int:
        return self.proc.pid

    def check_alive(self) -> None:
        code = self.proc.poll()
        if code is not None:
            raise RealClusterError(
                f"{self.name} exited with {code}; log {self.log_path}:\n{_tail(self.log_path)}"
            )

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(self.stop_timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(self.stop_timeout)
        self._log.close()


class RealCluster:
    """etcd + kube-apiserver + kube-controller-manager + simulated kubelet on loopback.

    ``controllers``: the kube-controller-manager controllers to run (empty: no
    controller manager). ``kubelet``: run the client-based simulated kubelet.
    ``pod_ready_after``: its start delay. ``extra_apiserver_args`` are appended as given (a
    list flag given again is appended to, not replaced). ``authorization_mode``: kube-apiserver's
    ``--authorization-mode`` (``RBAC`` to test permissions; the admin token is in
    ``system:masters`` and stays allowed).
    """

    def __init__(
        self,
        *,
        bin_dir: Path | None = None,
        token: str | None = None,
        controllers: Sequence[str] = DEFAULT_CONTROLLERS,
        kubelet: bool = True,
        pod_ready_after: float = 0.05,
        extra_apiserver_args: Sequence[str] = (),
        kube_api_qps: float | None = None,
        kube_api_burst: int | None = None,
        authorization_mode: str = "AlwaysAllow",
    ) -> None:
        self.bin_dir = bin_dir or default_bin_dir()
        problem = missing_binaries_message(bin_dir)
        if problem:
            raise RealClusterError(problem)
        self.token = token or secrets.token_urlsafe(24)
        self.controllers = tuple(controllers)
        self.pod_ready_after = pod_ready_after
        self.extra_apiserver_args = tuple(extra_apiserver_args)
        self.authorization_mode = authorization_mode
        self.kube_api_qps = kube_api_qps
        self.kube_api_burst = kube_api_burst
        self.workdir = Path(tempfile.mkdtemp(prefix="kube-runtime-real-"))
        self.certs: ServingCerts = tls_certs.generate(self.workdir / "tls")
        self.port = 0
        self.kubelet: Any = None
        self._want_kubelet = kubelet
        self._processes: list[ChildProcess] = []
        self._etcd_dir: Path | None = None
        self._running = False

    # ------------------------------------------------------------- lifecycle

    def start(self) -> RealCluster:
        """Start everything and wait until the API server is ready; stop on failure."""
        try:
            self._start()
        except BaseException:
            self.stop()
            raise
        self._running = True
        log.info("real cluster serving on %s (workdir %s)", self.url, self.workdir)
        return self

    def _start(self) -> None:
        deadline = time.monotonic() + START_TIMEOUT
        etcd_url = self._start_etcd()
        self.port = _free_port()
        apiserver = self._spawn("kube-apiserver", self._apiserver_argv(etcd_url))
        self._wait_ready(apiserver, deadline)
        kubeconfig = self.write_kubeconfig(self.workdir / "kubeconfig")
        if self.controllers:
            self._spawn("kube-controller-manager", self._controller_manager_argv(kubeconfig))
        if self._want_kubelet:
            from kube_runtime.envtest.kubelet import ClientKubelet

            self.kubelet = ClientKubelet.from_kubeconfig(
                kubeconfig, ready_after=self.pod_ready_after
            )
            self.kubelet.start()

    def stop(self) -> None:
        """Stop the kubelet and every process (newest first) and remove the work directory."""
        self._running = False
        if self.kubelet is not None:
            self.kubelet.stop()
            self.kubelet = None
        for process in reversed(self._processes):
            process.stop()
        self._processes = []
        if self._etcd_dir is not None:
            shutil.rmtree(self._etcd_dir, ignore_errors=True)
            self._etcd_dir = None
        if os.environ.get("KUBE_RUNTIME_REAL_KEEP_LOGS") != "true":
            shutil.rmtree(self.workdir, ignore_errors=True)

    def pids(self) -> dict[str, int]:
        """The process id of each running component (``etcd``, ``kube-apiserver``,
        ``kube-controller-manager``), e.g. to measure their CPU time."""
        return {p.name: p.proc.pid for p in self._processes if p.proc.poll() is None}

    def __enter__(self) -> RealCluster:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ------------------------------------------------------------ processes

    def _spawn(self, name: str, argv: Sequence[str]) -> ChildProcess:
        process = ChildProcess(name, argv, self.workdir / f"{name}.log")
        self._processes.append(process)
        return process

    def _start_etcd(self) -> str:
        shm = Path("/dev/shm")
        base = shm if shm.is_dir() and os.access(shm, os.W_OK) else self.workdir
        self._etcd_dir = Path(tempfile.mkdtemp(prefix="kube-runtime-etcd-", dir=base))
        client_port, peer_port = _free_port(), _free_port()
        client_url = f"http://127.0.0.1:{client_port}"
        peer_url = f"http://127.0.0.1:{peer_port}"
        self._spawn(
            "etcd",
            [
                str(self.bin_dir / "etcd"),
                "--name=kube-runtime",
                f"--data-dir={self._etcd_dir / 'data'}",
                f"--listen-client-urls={client_url}",
                f"--advertise-client-urls={client_url}",
                f"--listen-peer-urls={peer_url}",
                f"--initial-advertise-peer-urls={peer_url}",
                f"--initial-cluster=kube-runtime={peer_url}",
                "--log-level=warn",
            ],
        )
        return client_url

    def _apiserver_argv(self, etcd_url: str) -> list[str]:
        d = self.workdir
        (d / "tokens.csv").write_text(f'{self.token},admin,admin,"system:masters"\n')
        sa_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        (d / "sa.key").write_bytes(
            sa_key.private_bytes(
                serialization.Encoding.PEM,
                serialization.PrivateFormat.TraditionalOpenSSL,
                serialization.NoEncryption(),
            )
        )
        (d / "sa.pub").write_bytes(
            sa_key.public_key().public_bytes(
                serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
            )
        )
        tls = self.certs.directory
        return [
            str(self.bin_dir / "kube-apiserver"),
            f"--etcd-servers={etcd_url}",
            "--bind-address=127.0.0.1",
            "--advertise-address=127.0.0.1",
            f"--secure-port={self.port}",
            "--insecure-port=0",
            f"--cert-dir={d / 'apiserver-certs'}",
            f"--tls-cert-file={tls / 'server.crt'}",
            f"--tls-private-key-file={tls / 'server.key'}",
            f"--token-auth-file={d / 'tokens.csv'}",
            f"--authorization-mode={self.authorization_mode}",
            "--disable-admission-plugins=ServiceAccount",
            "--endpoint-reconciler-type=none",
            f"--service-cluster-ip-range={SERVICE_CIDR}",
            f"--service-account-key-file={d / 'sa.pub'}",
            f"--service-account-signing-key-file={d / 'sa.key'}",
            "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
            "--allow-privileged=true",
            "--profiling=false",
            *self.extra_apiserver_args,
        ]

    def _controller_manager_argv(self, kubeconfig: Path) -> list[str]:
        argv = [
            str(self.bin_dir / "kube-controller-manager"),
            f"--kubeconfig={kubeconfig}",
            f"--controllers={','.join(self.controllers)}",
            "--leader-elect=false",
            "--use-service-account-credentials=false",
            "--secure-port=0",
            "--port=0",
            "--concurrent-gc-syncs=5",
        ]
        if self.kube_api_qps is not None:
            argv.append(f"--kube-api-qps={self.kube_api_qps:g}")
        if self.kube_api_burst is not None:
            argv.append(f"--kube-api-burst={self.kube_api_burst}")
        return argv

    def _wait_ready(self, apiserver: ChildProcess, deadline: float) -> None:
        """Poll ``/readyz`` until it answers 200 (or a process dies, or time runs out)."""
        ctx = ssl.create_default_context(cafile=str(self.certs.ca_file))
        request = urllib.request.Request(
            f"{self.url}/readyz", headers={"Authorization": f"Bearer {self.token}"}
        )
        last = ""
        while time.monotonic() < deadline:
            for process in self._processes:
                process.check_alive()
            try:
                with urllib.request.urlopen(request, context=ctx, timeout=5) as resp:
                    if resp.status == 200:
                        return
            except urllib.error.HTTPError as e:
                last = f"HTTP {e.code}"
            except (OSError, ssl.SSLError) as e:
                last = repr(e)
            time.sleep(0.2)
        raise RealClusterError(
            f"kube-apiserver not ready after {START_TIMEOUT:.0f}s ({last}); "
            f"log {apiserver.log_path}:\n{_tail(apiserver.log_path)}"
        )

    # --------------------------------------------------------------- access

    @property
    def url(self) -> str:
        return f"https://127.0.0.1:{self.port}"

    @property
    def running(self) -> bool:
        return self._running

    def logs(self) -> dict[str, Path]:
        """Each process's log file by name (kept after ``stop()`` with
        ``KUBE_RUNTIME_REAL_KEEP_LOGS=true``)."""
        return {p.name: p.log_path for p in self._processes}

    def kubeconfig_dict(self, context: str = "kube-runtime") -> dict[str, Any]:
        return kubeconfig(self.url, token=self.token, ca_pem=self.certs.ca_pem, context=context)

    def write_kubeconfig(self, path: str | os.PathLike[str]) -> Path:
        """Write a kubeconfig for this cluster (mode 0600) and return its path."""
        return write_kubeconfig(self.kubeconfig_dict(), path)

    def api_client(self) -> Any:
        """An official ``kubernetes.client.ApiClient`` for this cluster."""
        from kubernetes import client

        config = client.Configuration()
        config.host = self.url
        config.api_key = {"authorization": f"Bearer {self.token}"}
        config.ssl_ca_cert = str(self.certs.ca_file)
        return client.ApiClient(config)
