"""The library's shape: what importing the framework loads, the inert pytest plugin, the old
import paths, and the command line's entry points.

Each check runs in a fresh interpreter (``sys.modules`` of the test session already holds
everything), forked from one that has loaded only third-party packages (``fresh_python``).
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from kube_runtime import cli
from tests.support.fresh_python import FreshPython

ROOT = Path(__file__).resolve().parents[3]
PUBLIC_API = [
    "kube_runtime",
    "kube_runtime.client",
    "kube_runtime.client.cached",
    "kube_runtime.cache",
    "kube_runtime.manager",
    "kube_runtime.builder",
    "kube_runtime.controller",
    "kube_runtime.reconcile",
    "kube_runtime.handlers",
    "kube_runtime.predicates",
    "kube_runtime.events",
    "kube_runtime.expectations",
    "kube_runtime.claiming",
    "kube_runtime.ownership",
    "kube_runtime.finalizers",
    "kube_runtime.retry",
    "kube_runtime.leaderelection",
    "kube_runtime.workloads.revision",
    "kube_runtime.workloads.pvc",
    "kube_runtime.workloads.pods",
    "kube_runtime.workloads.inplace",
    "kube_runtime.cli",
]
OPTIONAL_API = [
    "kube_runtime.controllerutil",
    "kube_runtime.conditions",
    "kube_runtime.client.fake",
]


def _python(fresh: FreshPython, code: str) -> str:
    """``code``'s output, run in a fresh interpreter (forked from one that has loaded only
    third-party packages: :mod:`tests.support.fresh_python`)."""
    done = fresh.run(textwrap.dedent(code), cwd=ROOT)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_importing_the_public_api_loads_no_test_cluster_controller_or_codegen(
    fresh_python: FreshPython,
) -> None:
    names = PUBLIC_API + [
        m for m in OPTIONAL_API if (ROOT / (m.replace(".", "/") + ".py")).exists()
    ]
    out = _python(
        fresh_python,
        f"""
        import importlib, json, sys
        for name in {names!r}:
            importlib.import_module(name)
        getattr(importlib.import_module("kube_runtime"), "Manager")
        print(json.dumps(sorted(sys.modules)))
        """,
    )
    loaded = json.loads(out)
    assert "kube_runtime.manager" in loaded  # the check ran on a real import
    leaked = [m for m in loaded if m.startswith(("kube_runtime.envtest", "controllers", "codegen"))]
    assert leaked == []


@pytest.mark.parametrize("controller", ["controllers.statefulset", "controllers.cloneset"])
def test_importing_a_controller_loads_no_codegen_module(
    controller: str, fresh_python: FreshPython
) -> None:
    """Generated models depend on the runtime (kube_runtime.models), never on the generator."""
    out = _python(
        fresh_python,
        f"""
        import importlib, json, sys
        importlib.import_module({controller!r})
        importlib.import_module({controller + ".models"!r})
        print(json.dumps(sorted(sys.modules)))
        """,
    )
    loaded = json.loads(out)
    assert f"{controller}.models" in loaded  # the check ran on a real import
    assert [m for m in loaded if m == "codegen" or m.startswith("codegen.")] == []


def _importlinter_config() -> dict[str, Any]:
    """pyproject's ``[tool.importlinter]`` (tomllib: Python 3.11+)."""
    tomllib = pytest.importorskip("tomllib")
    config: dict[str, Any] = tomllib.loads((ROOT / "pyproject.toml").read_text())
    section: dict[str, Any] = config["tool"]["importlinter"]
    return section


def _framework_layers() -> list[str]:
    """The modules the framework's layered import-linter contract names, top first."""
    config = _importlinter_config()
    (contract,) = [
        c for c in config["contracts"] if c["name"].startswith("The framework forms layers")
    ]
    return [
        name.strip().strip("()")
        for layer in contract["layers"]
        for name in layer.replace("|", ":").split(":")
    ]


def test_every_framework_module_has_a_place_in_the_layers() -> None:
    """The layered contract names full modules (a package may span layers), so import-linter
    cannot say it is exhaustive: a module added to the framework must be placed by hand."""
    named = _framework_layers()
    test_cluster = ("envtest",)  # its own contract
    unplaced = []
    for path in sorted((ROOT / "kube_runtime").rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        if parts[-1] == "__init__":
            continue  # a package's __init__ re-exports its modules, which are placed
        module = ".".join(parts)
        if parts[1] in test_cluster or parts[1] == "__main__":
            continue
        if not any(module == n or module.startswith(n + ".") for n in named):
            unplaced.append(module)
    assert unplaced == []
    assert {"kube_runtime.cli", "kube_runtime.client", "kube_runtime.cache"} <= set(named)


def test_import_linter_contracts_are_kept() -> None:
    """``lint-imports`` (pyproject's contracts: layers inside the framework and codegen,
    controllers and codegen independent) passes with no ignored import in the framework."""
    done = subprocess.run(
        [str(Path(sys.executable).parent / "lint-imports"), "--no-cache"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout[-4000:]
    assert "broken" in done.stdout  # the summary line ran ("N kept, 0 broken")
    config = _importlinter_config()
    framework = [c for c in config["contracts"] if "kube_runtime" in str(c.get("containers"))]
    assert framework and all("ignore_imports" not in c for c in framework)


def test_the_pytest_plugin_is_inert_until_a_fixture_is_used(
    tmp_path: Path, fresh_python: FreshPython
) -> None:
    (tmp_path / "test_plain.py").write_text(
        textwrap.dedent(
            """
            import os, sys

            def test_nothing_changed():
                assert "KUBE_CACHE_MUTATION_DETECTOR" not in os.environ
                loaded = [m for m in sys.modules if m.startswith("kube_runtime.envtest.")]
                assert loaded == ["kube_runtime.envtest.plugin"], loaded
            """
        )
    )
    # A pytest of its own (the plugin found by its entry point), in a fresh interpreter.
    done = fresh_python.run(
        textwrap.dedent(
            f"""
            import os, sys
            os.environ.pop("KUBE_CACHE_MUTATION_DETECTOR", None)
            import pytest
            sys.exit(int(pytest.main(["-q", "-p", "no:cacheprovider", {str(tmp_path)!r}])))
            """
        ),
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 passed" in done.stdout


#: Names that moved before the first release (kube-runtime 0.1.0 was never published), so
#: their old paths went with no deprecation shim: every importer moved with them.
UNRELEASED_OLD_MODULES = [
    "kube_runtime.embedded",  # the test cluster: kube_runtime.envtest
    "kube_runtime.testing",
    "kube_runtime.kubelet",
    "codegen.core",  # the shared model types: kube_runtime.models, codegen.shared
    "codegen.crd",  # the CRD annotations: kube_runtime.models.crd
]
UNRELEASED_OLD_NAMES = [
    ("kube_runtime.workqueue", "Clock"),  # kube_runtime.clock.Clock
    ("kube_runtime.leaderelection", "Clock"),
    ("kube_runtime.leaderelection", "RealClock"),
    ("kube_runtime.workloads.pvc", "claim_name"),  # controllers.statefulset.pvc
    ("kube_runtime.workloads.pvc", "instance_claim_name"),  # controllers.cloneset.pvc
    ("controllers", "setup_function"),  # kube_runtime.cli.load_controller(name).setup
]


def test_names_moved_before_the_first_release_left_no_old_path(fresh_python: FreshPython) -> None:
    out = _python(
        fresh_python,
        f"""
        import importlib, json, warnings
        warnings.simplefilter("error")
        found = []
        for name in {UNRELEASED_OLD_MODULES!r}:
            try:
                importlib.import_module(name)
                found.append(name)
            except ModuleNotFoundError:
                pass
        for module, name in {UNRELEASED_OLD_NAMES!r}:
            if hasattr(importlib.import_module(module), name):
                found.append(module + "." + name)
        print(json.dumps(found))
        """,
    )
    assert json.loads(out) == []


def test_bundled_controllers_and_commands_are_found_by_entry_point() -> None:
    assert {"statefulset", "cloneset"} <= set(cli.controller_entries())
    entry = cli.load_controller("statefulset")
    assert callable(entry.setup) and callable(getattr(entry, "install_crd", None))
    with pytest.raises(KeyError, match=r"registered: .*cloneset.*statefulset"):
        cli.load_controller("no-such-controller")
    commands = cli._commands()
    assert {"cluster", "kubelet", "codegen", "demo"} <= set(commands)
    assert all(isinstance(ep.load(), cli.Command) for ep in commands.values())


def test_run_loads_only_the_named_controllers(fresh_python: FreshPython) -> None:
    out = _python(
        fresh_python,
        """
        import json, sys
        from kube_runtime import cli
        code = cli.main(["run", "no-such-controller"])
        print(json.dumps([code, sorted(m for m in sys.modules
              if m.startswith(("kube_runtime.envtest", "controllers", "codegen")))]))
        """,
    )
    code, loaded = json.loads(out.splitlines()[-1])
    assert code == 2
    assert loaded == []


def test_a_command_gets_its_arguments(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        cli.main(["codegen", "--help"])
    assert exc.value.code == 0
    assert "usage: kube-runtime codegen" in capsys.readouterr().out
