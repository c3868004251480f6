"""`kube-runtime run cloneset statefulset --install-crds` installs its webhooks (issue 29): the
manager built as the command builds it (:func:`kube_runtime.cli.manager_for`), run in-process,
makes its certificate, keeps it in a Secret and registers its webhooks with the CA bundle, so a
CloneSet applied with kubectl is stored with Kruise's defaults and the specs the controllers
cannot act on are refused at the API; with ``--no-install-webhooks`` the controllers report
each of those the API accepts (condition + Warning event). Both backends: the API server (the
embedded one, or kube-apiserver 1.20) calls the manager at https://127.0.0.1:PORT."""

from __future__ import annotations

import shutil
import subprocess
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from controllers.cloneset import CLONESET
from controllers.statefulset import ENHANCED_STATEFULSET
from kube_runtime import Manager, kinds
from kube_runtime.cli import build_parser, manager_for
from kube_runtime.client import ApiError, Client
from kube_runtime.envtest.managers import running
from kube_runtime.kinds import Kind
from tests.e2e.bad_specs import good

TIMEOUT = 60
MUTATING = "admissionregistration.k8s.io/v1/MutatingWebhookConfiguration"
VALIDATING = "admissionregistration.k8s.io/v1/ValidatingWebhookConfiguration"
SELECTOR_LABEL = "kube-runtime.io/install-webhooks-test"

# The five specs (and the enhanced StatefulSet's percentage partition, which its
# schema refuses as an integer field): (name, kind, path in the spec, value, field path).
FIVE: list[tuple[str, Kind, str, Any, str]] = [
    ("cs-max-unavailable", CLONESET, "updateStrategy.maxUnavailable", "150%",
     "spec.updateStrategy.maxUnavailable"),
    ("cs-partition", CLONESET, "updateStrategy.partition", "150%",
     "spec.updateStrategy.partition"),
    ("sts-max-unavailable", ENHANCED_STATEFULSET, "updateStrategy.rollingUpdate.maxUnavailable",
     "150%", "spec.updateStrategy.rollingUpdate.maxUnavailable"),
    ("sts-partition", ENHANCED_STATEFULSET, "updateStrategy.rollingUpdate.partition", "150%",
     "spec.updateStrategy.rollingUpdate.partition"),
    ("sts-min-ready", ENHANCED_STATEFULSET, "updateStrategy.rollingUpdate.minReadySeconds", -5,
     "spec.updateStrategy.rollingUpdate.minReadySeconds"),
    ("sts-grace-period", ENHANCED_STATEFULSET,
     "updateStrategy.rollingUpdate.inPlaceUpdateStrategy.gracePeriodSeconds", -10,
     "spec.updateStrategy.rollingUpdate.inPlaceUpdateStrategy.gracePeriodSeconds"),
]  # fmt: skip
SCHEMA_REFUSED = {"sts-partition", "sts-min-ready"}
"""Refused by the CRD's schema whether or not the webhooks are in the path."""


def _bad(name: str, kind: Kind, path: str, value: Any, namespace: str) -> dict[str, Any]:
    obj = good(kind, name, namespace)
    if kind == ENHANCED_STATEFULSET:  # only the percentage is wrong (Kruise: not with OrderedReady)
        obj["spec"]["podManagementPolicy"] = "Parallel"
    node = obj["spec"]
    keys = path.split(".")
    for key in keys[:-1]:
        node = node.setdefault(key, {})
    node[keys[-1]] = value
    return obj


def _wait(what: str, check: Callable[[], tuple[bool, Any]], timeout: float = TIMEOUT) -> Any:
    """Poll ``check`` until it says done; fail with what it saw last."""
    deadline = time.monotonic() + timeout
    while True:
        done, seen = check()
        if done:
            return seen
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}: {seen!r}")
        time.sleep(0.1)


def _run_manager(kubeconfig: Path, namespace: str, *flags: str) -> Manager:
    """The manager of ``kube-runtime run cloneset statefulset --install-crds FLAGS`` for
    ``namespace``."""
    args = build_parser({}).parse_args(
        ["run", "cloneset", "statefulset", "--install-crds", "--kubeconfig", str(kubeconfig),
         "--namespace", namespace, "--metrics-port", "0", "--health-port", "0", *flags]
    )  # fmt: skip
    return manager_for(args)


@pytest.fixture
def installed(
    client: Client, kubeconfig: Path, namespace: str, tmp_path: Path
) -> Iterator[tuple[Manager, str]]:
    """The manager with the webhooks it installs itself (the default with --install-crds),
    scoped to this test's namespace (the configurations are cluster-wide, the test cluster
    shared) and named for it; the manager deletes them when it stops (checked). Yields it
    and the configurations' name."""
    client.request(
        "PATCH",
        f"/api/v1/namespaces/{namespace}",
        body={"metadata": {"labels": {SELECTOR_LABEL: namespace}}},
        content_type="application/merge-patch+json",
    )
    name = f"install-{uuid.uuid4().hex[:8]}"
    manager = _run_manager(
        kubeconfig,
        namespace,
        "--webhook-port", "0",
        "--webhook-cert-dir", str(tmp_path / "certs"),
        "--webhook-namespace", namespace,
        "--webhook-config-name", name,
        "--webhook-namespace-selector", f"{SELECTOR_LABEL}={namespace}",
    )  # fmt: skip
    try:
        with running(manager):
            _wait("the installed webhooks to refuse a spec", lambda: _refused(client, namespace))
            yield manager, name
        # Reached by URL on this machine: once the manager stops, its configurations go too.
        for kind in (MUTATING, VALIDATING):
            with pytest.raises(ApiError) as gone:
                client.get(kind, name)
            assert gone.value.code == 404
    finally:
        for kind in (MUTATING, VALIDATING):
            try:
                client.delete(kind, name)
            except ApiError:
                pass


def _refused(client: Client, namespace: str) -> tuple[bool, str]:
    """Whether a CloneSet only the validating webhook refuses is refused (dry run)."""
    obj = good(CLONESET, "probe", namespace)
    obj["spec"]["template"]["spec"]["restartPolicy"] = "Never"
    try:
        client.create(obj, dry_run=True)
    except ApiError as err:
        return "restartPolicy" in err.message, err.message
    return False, "accepted"


@pytest.fixture
def kubectl(kubeconfig: Path, namespace: str) -> Callable[..., subprocess.CompletedProcess[str]]:
    binary = shutil.which("kubectl")
    if binary is None:
        pytest.skip("kubectl not installed: run `make kubectl` (scripts/ensure-kubectl.sh)")

    def run(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        cmd = [binary, "--kubeconfig", str(kubeconfig), "-n", namespace, *args]
        return subprocess.run(cmd, input=stdin, capture_output=True, text=True, timeout=30)

    return run


@pytest.mark.kubectl
def test_install_crds_installs_the_webhooks_kubectl_gets_defaults_and_refusals(
    client: Client,
    namespace: str,
    installed: tuple[Manager, str],
    kubectl: Callable[..., subprocess.CompletedProcess[str]],
) -> None:
    _, name = installed
    # The certificate is in a Secret of the manager's namespace, its CA in the configurations.
    secret = client.get(kinds.Secret, "kube-runtime-webhook-certs", namespace)
    assert {"ca-cert.pem", "tls.crt", "tls.key"} <= set(secret["data"])
    hooks = client.get(VALIDATING, name)["webhooks"]
    assert {h["clientConfig"]["caBundle"] for h in hooks} == {secret["data"]["ca-cert.pem"]}
    assert all(h["clientConfig"]["url"].startswith("https://127.0.0.1:") for h in hooks)

    manifest = yaml.safe_dump(good(CLONESET, "applied", namespace))
    out = kubectl("apply", "-f", "-", stdin=manifest)
    assert out.returncode == 0, out.stderr
    stored = client.get(CLONESET, "applied", namespace)["spec"]["updateStrategy"]
    assert stored["type"] == "ReCreate" and stored["maxUnavailable"] == "20%", stored

    accepted = []
    for entry, kind, path, value, field in FIVE:
        out = kubectl(
            "apply", "-f", "-", stdin=yaml.safe_dump(_bad(entry, kind, path, value, namespace))
        )
        if out.returncode == 0:
            accepted.append(entry)
        else:
            assert field in out.stderr, (entry, out.stderr)
    assert accepted == []


def test_without_webhooks_the_controllers_report_each_spec_they_cannot_act_on(
    client: Client, kubeconfig: Path, namespace: str
) -> None:
    manager = _run_manager(kubeconfig, namespace, "--no-install-webhooks")
    refused: set[str] = set()
    reached: dict[str, tuple[Kind, str]] = {}
    with running(manager):
        for entry, kind, path, value, field in FIVE:
            try:
                client.create(_bad(entry, kind, path, value, namespace))
            except ApiError as err:
                assert err.code == 422 and field in err.message, (entry, err.message)
                refused.add(entry)
                continue
            reached[entry] = (kind, field.removeprefix("spec." if kind == CLONESET else ""))
        assert refused == SCHEMA_REFUSED

        def reported() -> tuple[bool, dict[str, Any]]:
            events = {
                e["involvedObject"]["name"]: e["message"]
                for e in client.list(kinds.Event, namespace)["items"]
                if e.get("type") == "Warning" and e.get("reason") == "InvalidSpec"
            }
            found: dict[str, Any] = {}
            for entry, (kind, field) in reached.items():
                status = client.get(kind, entry, namespace).get("status") or {}
                conditions = [
                    c for c in status.get("conditions") or []
                    if c.get("status") == "True" and field in c.get("message", "")
                ]  # fmt: skip
                found[entry] = (bool(conditions), field in events.get(entry, ""))
            return all(all(v) for v in found.values()), found

        _wait("a condition and a Warning event for each spec", reported)
