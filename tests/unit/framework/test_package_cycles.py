"""The framework's packages import one way (issue 31): the client package never loads the
informer cache, the manager never loads sharding (which attaches to it through
:class:`~kube_runtime.manager.ManagerExtension`), the webhook package never loads the command
line. import-linter's contracts check the source; these check what importing really loads
(a fresh interpreter each, forked from one with only third-party packages loaded: the test
session has every module loaded) and the extension hook.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest

from kube_runtime import cli, entrypoints, kinds
from kube_runtime.builder import Builder
from kube_runtime.cache import store
from kube_runtime.client import _indexes as indexes
from kube_runtime.client.fake import FakeClient
from kube_runtime.client.interfaces import Client
from kube_runtime.manager import LeaseHook, Manager
from tests.support.fresh_python import FreshPython

ROOT = Path(__file__).resolve().parents[3]


def _loaded_by(module: str, python: FreshPython) -> list[str]:
    done = python.run(
        f"import importlib, json, sys; importlib.import_module({module!r}); "
        "print(json.dumps(sorted(sys.modules)))",
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr
    loaded: list[str] = json.loads(done.stdout)
    assert module in loaded  # the check ran on a real import
    return loaded


def _under(loaded: list[str], package: str) -> list[str]:
    return [m for m in loaded if m == package or m.startswith(package + ".")]


@pytest.mark.parametrize(
    ("module", "never"),
    [
        ("kube_runtime.client.cached", "kube_runtime.cache"),
        ("kube_runtime.client.fake", "kube_runtime.cache"),
        ("kube_runtime.manager", "kube_runtime.sharding"),
        ("kube_runtime.builder", "kube_runtime.sharding"),
        ("kube_runtime.webhook._command", "kube_runtime.cli"),
    ],
)
def test_importing_a_module_loads_no_package_above_it(
    module: str, never: str, fresh_python: FreshPython
) -> None:
    assert _under(_loaded_by(module, fresh_python), never) == []


def test_moved_names_keep_their_old_import_paths() -> None:
    """The command line's entry-point helpers and the cache's index functions have a new
    home below the package that imports them; the old names are the very same objects."""
    for name in entrypoints.__all__:
        if name != "entry_point_group":
            assert getattr(cli, name) is getattr(entrypoints, name), name
    for name in indexes.__all__:
        assert getattr(store, name) is getattr(indexes, name), name


class _Hook:
    """A LeaseHook that holds no Lease and records what it was asked."""

    lease_namespace = "elsewhere"
    lease_role = "test Lease"
    campaigns = False

    def __init__(self) -> None:
        self.prepared: list[tuple[str, str]] = []

    def prepare_lease(self, client: Client, namespace: str, name: str) -> None:
        self.prepared.append((namespace, name))


class _Extension:
    def __init__(self) -> None:
        self.hook = _Hook()
        self.attached: list[tuple[Manager, str | None]] = []

    def attach(self, manager: Manager, identity: str | None) -> LeaseHook:
        self.attached.append((manager, identity))
        manager.identity = "extension-id"
        return self.hook


def test_a_manager_extension_attaches_and_names_the_lease() -> None:
    """``sharding=`` takes any ManagerExtension: attach runs once from the constructor, the
    manager campaigns for the hook's Lease (named after its identity) and prepares it
    through the hook before campaigning."""
    extension = _Extension()
    m = Manager(FakeClient(), metrics_bind_address="0", sharding=extension, identity="given")
    assert extension.attached == [(m, "given")]
    assert m.sharding is None and m.sharder is None  # only sharding sets those
    assert (m._lease_namespace(), m._lease_name()) == ("elsewhere", "extension-id")
    stop = threading.Event()
    stopped: list[bool] = []

    class Elector:
        class _lock:  # the elector's attribute the manager reads
            client = FakeClient()

        def _on_stopped_leading(self) -> None:
            stopped.append(True)

        def run(self, stop_event: threading.Event) -> None:
            stop.set()

    m._run_elector(Elector(), stop)  # type: ignore[arg-type]
    assert extension.hook.prepared == [("elsewhere", "extension-id")]


def test_a_manager_whose_extension_does_not_campaign_starts_no_leader_runnable() -> None:
    extension = _Extension()
    m = Manager(FakeClient(), metrics_bind_address="0", sharding=extension)
    ran: list[Any] = []
    Builder(m).for_(kinds.ConfigMap).complete(lambda request: ran.append(request))
    stop = m.clock.event()
    runner = threading.Thread(target=m.start, args=(stop,), daemon=True)
    runner.start()
    try:
        assert not m.elected.wait(0.3)  # no campaign: never elected
    finally:
        stop.set()
        runner.join(10)
    assert not runner.is_alive() and ran == []
