"""``kube-runtime run --feature-gates Name=true,...`` (Kruise's flag syntax) through
:func:`kube_runtime.cli.main`: the gate reaches the bundled CloneSet controller, wins over
``KUBE_RUNTIME_FEATURE_GATES`` (which still works alone), and an unknown gate, a gate of a
controller not run, or a value that is not a bool is an error with exit code 2."""

from __future__ import annotations

from unittest.mock import MagicMock

import pytest
from pytest_mock import MockerFixture

import controllers.cloneset.controller as cloneset_controller
from controllers.cloneset.core import CLONESET
from controllers.cloneset.revision import FEATURE_GATES_ENV, RECREATE_POD_WHEN_CHANGE_VCT_GATE
from kube_runtime.cli import main, parse_feature_gates
from kube_runtime.client import Client
from kube_runtime.client.fake import FakeClient
from kube_runtime.manager import Manager

GATE = RECREATE_POD_WHEN_CHANGE_VCT_GATE
RUN = ["run", "--metrics-port", "0", "--health-port", "0"]


def gates(reconciler: MagicMock) -> list[bool]:
    """The ``recreate_pod_when_change_vct`` of each CloneSet reconciler built, in order."""
    return [call.kwargs["recreate_pod_when_change_vct"] for call in reconciler.call_args_list]


@pytest.fixture
def built(mocker: MockerFixture, monkeypatch: pytest.MonkeyPatch) -> MagicMock:
    """Runs ``main`` against a FakeClient with a manager that returns at once; the CloneSet
    reconciler class, spied (the real one is built)."""
    reconciler = mocker.patch.object(
        cloneset_controller,
        "CloneSetReconciler",
        wraps=cloneset_controller.CloneSetReconciler,
    )
    mocker.patch.object(Client, "from_env", side_effect=lambda: FakeClient().register(CLONESET))
    mocker.patch.object(Manager, "start", return_value=None)
    monkeypatch.delenv(FEATURE_GATES_ENV, raising=False)
    return reconciler


@pytest.mark.parametrize(
    ("environment", "flag", "expected"),
    [
        (None, None, False),  # Kruise's default: off
        (None, f"{GATE}=true", True),
        (f"{GATE}=true", None, True),  # the environment variable alone still works
        (f"{GATE}=true", f"{GATE}=false", False),  # the flag wins
        (f"{GATE}=false", f" {GATE}=True ", True),
    ],
)
def test_the_gate_reaches_the_cloneset_controller(
    built: MagicMock,
    monkeypatch: pytest.MonkeyPatch,
    environment: str | None,
    flag: str | None,
    expected: bool,
) -> None:
    if environment is not None:
        monkeypatch.setenv(FEATURE_GATES_ENV, environment)
    argv = [*RUN, "cloneset"] + (["--feature-gates", flag] if flag is not None else [])
    assert main(argv) == 0
    assert gates(built) == [expected]


def test_a_controller_without_gates_runs_with_the_flag_naming_another_controllers_gate(
    built: MagicMock,
) -> None:
    """``run statefulset cloneset``: the StatefulSet has no gates and is set up as before."""
    assert main([*RUN, "statefulset", "cloneset", "--feature-gates", f"{GATE}=true"]) == 0
    assert gates(built) == [True]


@pytest.mark.parametrize(
    ("controllers", "flag", "message"),
    [
        (["cloneset"], "NoSuchGate=true", "unrecognized feature gate: NoSuchGate"),
        (["statefulset"], f"{GATE}=true", f"unrecognized feature gate: {GATE}"),
        (["cloneset"], f"{GATE}=maybe", f"invalid value of {GATE}=maybe"),
        (["cloneset"], GATE, f"missing bool value for {GATE}"),
    ],
)
def test_bad_gates_are_refused_with_exit_code_2(
    built: MagicMock,
    capsys: pytest.CaptureFixture[str],
    controllers: list[str],
    flag: str,
    message: str,
) -> None:
    assert main([*RUN, *controllers, "--feature-gates", flag]) == 2
    err = capsys.readouterr().err
    assert f'error: invalid argument "{flag}" for "--feature-gates" flag: {message}' in err
    assert gates(built) == []


def test_parse_feature_gates_reads_go_bools() -> None:
    known = {"A": False, "B": True}
    assert parse_feature_gates("A=1, B=F,,", known) == {"A": True, "B": False}
    assert parse_feature_gates("", known) == {}


def test_setup_refuses_a_gate_it_does_not_know() -> None:
    manager = Manager(FakeClient(), metrics_bind_address="0")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="unrecognized feature gate: Other"):
        cloneset_controller.setup(manager, feature_gates={"Other": True})
