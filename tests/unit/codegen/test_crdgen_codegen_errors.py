"""Every user mistake with ``kube-runtime codegen`` and ``kube-runtime crd generate`` is one
line, ``PROG: error: ...``, and exit code 2 (no traceback, no usage block)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from codegen.cli import main

REPO = Path(__file__).resolve().parents[3]
GREETING_CRD = REPO / "examples" / "greetings" / "crd.yaml"


def _crd(**changes: object) -> str:
    doc = yaml.safe_load(GREETING_CRD.read_text())
    for path, value in changes.items():
        node = doc
        *parents, last = path.split("__")
        for key in parents:
            node = node[int(key)] if isinstance(node, list) else node[key]
        if value is None:
            del node[last]
        else:
            node[last] = value
    return yaml.safe_dump(doc)


CASES: dict[str, tuple[list[str], dict[str, str], str]] = {
    # name: (argv with {tmp} for the directory, files to write, expected message part)
    "nothing to do": ([], {}, "give at least one FILE or --from-cluster NAME (see --help)"),
    "unknown option": (["--frobnicate"], {}, "unrecognized arguments: --frobnicate"),
    "check without output": (["{tmp}/crd.yaml", "--check"], {"crd.yaml": "x"}, "--check needs"),
    "missing file": (["{tmp}/nope.yaml"], {}, "nope.yaml: No such file or directory"),
    "a directory": (["{tmp}"], {}, ": Is a directory"),
    "not YAML": (["{tmp}/bad.yaml"], {"bad.yaml": "a: [1"}, "bad.yaml: not YAML/JSON: "),
    "no CRD": (["{tmp}/cm.yaml"], {"cm.yaml": "kind: ConfigMap\n"}, "no apiextensions"),
    "old apiVersion": (
        ["{tmp}/old.yaml"],
        {"old.yaml": "apiVersion: apiextensions.k8s.io/v1beta1\nkind: CustomResourceDefinition\n"},
        "is not supported (convert to apiextensions.k8s.io/v1)",
    ),
    "no kind": (
        ["{tmp}/crd.yaml"],
        {"crd.yaml": _crd(spec__names__kind=None)},
        "spec.names.kind is missing",
    ),
    "no versions": (
        ["{tmp}/crd.yaml"],
        {"crd.yaml": _crd(spec__versions=None)},
        "spec.versions is missing",
    ),
    "unnamed version": (
        ["{tmp}/crd.yaml"],
        {"crd.yaml": _crd(spec__versions__0__name=None)},
        "every entry of spec.versions needs a name",
    ),
    "malformed schema": (
        ["{tmp}/crd.yaml"],
        {
            "crd.yaml": _crd(
                spec__versions__0__schema__openAPIV3Schema__properties__spec__properties=["x"]
            )
        },
        "crd.yaml: malformed CRD (",
    ),
    "unknown version": (["{tmp}/crd.yaml", "--version", "v9"], {"crd.yaml": _crd()}, "v9"),
    "output in a missing directory": (
        ["{tmp}/crd.yaml", "-o", "{tmp}/no/models.py"],
        {"crd.yaml": _crd()},
        "no/models.py: No such file or directory",
    ),
    "output is a directory": (
        ["{tmp}/crd.yaml", "-o", "{tmp}"],
        {"crd.yaml": _crd()},
        ": Is a directory",
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_codegen_mistakes(case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv, files, message = CASES[case]
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    try:
        code = main([a.replace("{tmp}", str(tmp_path)) for a in argv])
    except SystemExit as exit_:
        code = int(exit_.code or 0)
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.count("\n") == 1, err
    assert err.startswith("kube-runtime codegen: error: ") and message in err, err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["-m", "codegen", "/nonexistent/crd.yaml"], "python -m codegen: error: /nonexistent"),
        (
            ["-m", "kube_runtime.cli", "crd", "generate", "nope_pkg_xyz:Model"],
            "kube-runtime crd generate: error: cannot import nope_pkg_xyz",
        ),
        (
            ["-m", "kube_runtime.cli", "codegen", "--from-cluster"],
            "kube-runtime codegen: error: argument --from-cluster: expected one argument",
        ),
    ],
)
def test_as_a_process_no_traceback(argv: list[str], message: str) -> None:
    result = subprocess.run(
        [sys.executable, *argv], capture_output=True, text=True, cwd=REPO, timeout=60
    )
    assert result.returncode == 2, result.stderr
    assert result.stderr.count("\n") == 1 and message in result.stderr, result.stderr
    assert "Traceback" not in result.stderr
