"""``kube-runtime run/rbac/webhook-config module:function``: operators that are not installed
packages, loaded through one path (:func:`kube_runtime.cli.load_controller`)."""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from pytest_mock import MockerFixture

from kube_runtime import rbac
from kube_runtime.cli import ControllerNotFound, build_parser, load_controller, main, manager_for
from kube_runtime.client import Client
from kube_runtime.client.fake import FakeClient

OPERATOR = """
from kube_runtime import Builder, kinds, rbac

CALLS = []


@rbac.requires(
    rbac.rule("", "configmaps", rbac.CACHE),
    rbac.rule("", "configmaps/finalizers", "update"),
    rbac.rule("", "secrets", rbac.READ, rbac.WRITE),
)
def setup(manager, *, max_concurrent_reconciles=1):
    CALLS.append(max_concurrent_reconciles)
    Builder(manager).for_(kinds.ConfigMap).owns(kinds.Secret).complete(lambda r: None)


def undeclared(manager):
    CALLS.append("undeclared")


def forwarding(manager, **server):
    CALLS.append(("forwarding", server))


NOT_A_FUNCTION = 3
"""


@pytest.fixture
def operator_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A module ``site_operator_<n>`` in the current directory, not installed."""
    name = f"site_operator_{tmp_path.name.replace('-', '_')}"
    (tmp_path / f"{name}.py").write_text(textwrap.dedent(OPERATOR))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", str(tmp_path))])
    yield name
    sys.modules.pop(name, None)


def test_rbac_renders_the_rules_of_a_module_function(
    operator_dir: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["rbac", f"{operator_dir}:setup"]) == 0
    objects = list(yaml.safe_load_all(capsys.readouterr().out))
    role = next(o for o in objects if o["kind"] == "ClusterRole")
    assert {"apiGroups": [""], "resources": ["configmaps/finalizers"], "verbs": ["update"]} in (
        role["rules"]
    )


def test_rbac_refuses_a_function_without_rules(
    operator_dir: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["rbac", f"{operator_dir}:undeclared"]) == 2
    err = capsys.readouterr().err
    assert f"{operator_dir}:undeclared declares no RBAC rules" in err
    assert "@kube_runtime.rbac.requires" in err


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ("no_such_module_xyz:setup", "cannot import 'no_such_module_xyz'"),
        ("{mod}:missing", "has no attribute 'missing'"),
        ("{mod}:", "expected module:function"),
    ],
)
def test_bad_targets_are_named(
    operator_dir: str, target: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(ControllerNotFound, match=message):
        load_controller(target.format(mod=operator_dir))
    assert main(["rbac", target.format(mod=operator_dir)]) == 2
    assert message in capsys.readouterr().err


def test_a_target_that_is_no_function_is_a_type_error(operator_dir: str) -> None:
    with pytest.raises(TypeError, match="is a int: name a setup function"):
        load_controller(f"{operator_dir}:NOT_A_FUNCTION")


def test_run_builds_the_manager_of_a_module_function(
    operator_dir: str, mocker: MockerFixture
) -> None:
    mocker.patch.object(Client, "from_env", side_effect=FakeClient)
    args = build_parser().parse_args(
        ["run", "--metrics-port", "0", "--health-port", "0", "--workers", "3",
         f"{operator_dir}:setup"]
    )  # fmt: skip
    manager = manager_for(args)
    module: Any = sys.modules[operator_dir]
    assert module.CALLS == [3]  # its max_concurrent_reconciles came through
    assert manager is not None
    entry = load_controller(f"{operator_dir}:setup")
    assert rbac.rules_of(entry) == rbac.rules_of(module.setup)


def test_webhook_config_loads_module_functions_through_the_same_path(
    operator_dir: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # A function of the manager only (no max_concurrent_reconciles): called with the manager.
    assert main(["webhook-config", f"{operator_dir}:undeclared", "--url", "https://h:9443"]) == 2
    assert "register no webhooks" in capsys.readouterr().err
    assert sys.modules[operator_dir].CALLS == ["undeclared"]


def test_a_catch_all_keyword_function_gets_only_the_manager(operator_dir: str) -> None:
    """``**kwargs`` often forwards elsewhere (a webhook server's options): run's options such
    as ``max_concurrent_reconciles`` are not pushed into it."""
    entry = load_controller(f"{operator_dir}:forwarding")
    entry.setup(object(), max_concurrent_reconciles=3)  # type: ignore[arg-type]
    module = sys.modules[operator_dir]
    assert module.CALLS[-1] == ("forwarding", {})
