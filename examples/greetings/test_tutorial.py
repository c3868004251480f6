"""Every code block of docs/tutorial.md runs here, so the tutorial cannot drift from the code.

Each fenced block is preceded by a marker saying how it is checked; a block without one
fails the test:

- ``<!-- tutorial:file PATH -->``: the block is the file (byte for byte); the file itself is
  run by the example's tests (``test_operator.py``, ``test_webhooks.py``);
- ``<!-- tutorial:exec -->``: Python executed as written (``client`` is the session's
  client: both backends);
- ``<!-- tutorial:run [cluster] [until=TEXT] -->``: shell commands run in order, from a scratch
  directory laid out like the repository (``.venv``, the example's CRD, ``dir/ca.crt`` and
  ``ca.crt`` as the webhook section makes them). A command ending in ``&`` is started in the
  background and stopped at the end; another is retried until it succeeds (a cluster or a
  CRD may not be up yet), the last one until its output holds ``TEXT``. ``cluster`` starts
  step 3's embedded cluster first (``kubeconfig`` in the scratch directory);
- ``<!-- tutorial:collect -->``: pytest command lines, collected (``--collect-only``), not run;
- ``<!-- tutorial:make -->``: make targets, dry-run (``make -n``);
- ``<!-- tutorial:entry-points -->``: the TOML table names the group ``kube-runtime run``
  loads, and the flags in its comment exist.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import tomllib

from kube_runtime.client import Client
from kube_runtime.entrypoints import CONTROLLERS_GROUP
from kube_runtime.envtest import wait_for
from kube_runtime.envtest.server import tls

REPO = Path(__file__).resolve().parents[2]
TUTORIAL = REPO / "docs" / "tutorial.md"
VENV_BIN = Path(sys.executable).parent
_BLOCK = re.compile(
    r"(?:<!-- tutorial:(?P<marker>[^\n]*?) -->\n)?```(?P<lang>\w*)\n(?P<body>.*?)```", re.S
)


@dataclass(frozen=True)
class Block:
    """One fenced block: its marker (``None`` when it has none), language, text and line."""

    marker: str | None
    lang: str
    body: str
    line: int

    @property
    def kind(self) -> str:
        return (self.marker or "").split(" ", 1)[0]

    @property
    def args(self) -> list[str]:
        return (self.marker or "").split()[1:]

    def option(self, name: str) -> str | None:
        return next((a.split("=", 1)[1] for a in self.args if a.startswith(name + "=")), None)


def blocks() -> list[Block]:
    """The tutorial's fenced blocks, in order."""
    text = TUTORIAL.read_text()
    return [
        Block(m["marker"], m["lang"], m["body"], text.count("\n", 0, m.start()) + 1)
        for m in _BLOCK.finditer(text)
    ]


def _of(kind: str) -> list[Block]:
    return [b for b in blocks() if b.kind == kind]


def _ids(items: list[Block]) -> list[str]:
    return [f"line{b.line}" for b in items]


KINDS = {"file", "exec", "run", "collect", "make", "entry-points"}


def test_every_block_is_checked() -> None:
    found = blocks()
    assert len(found) >= 10, "the tutorial's blocks were not found"
    unchecked = [f"line {b.line}: {b.marker}" for b in found if b.kind not in KINDS]
    assert not unchecked, f"blocks with no (or an unknown) tutorial marker: {unchecked}"


@pytest.mark.parametrize("block", _of("file"), ids=_ids(_of("file")))
def test_a_file_block_is_the_file(block: Block) -> None:
    (path,) = block.args
    assert block.body == (REPO / path).read_text(), f"docs/tutorial.md:{block.line} != {path}"


@pytest.mark.parametrize("block", _of("exec"), ids=_ids(_of("exec")))
def test_a_python_block_runs(block: Block, client: Client, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    code = compile(block.body, f"docs/tutorial.md:{block.line}", "exec")
    exec(code, {"client": client, "__name__": "tutorial"})


# ----------------------------------------------------------------------------- commands


def commands(body: str) -> list[str]:
    """Shell command lines: backslash continuations joined, a here-document kept with its
    command."""
    out: list[str] = []
    lines = iter(body.splitlines())
    for line in lines:
        while line.endswith("\\"):
            line = line[:-1] + next(lines)
        heredoc = re.search(r"<<'(\w+)'", line)
        if heredoc:
            rest = []
            for more in lines:
                rest.append(more)
                if more == heredoc[1]:
                    break
            line = "\n".join([line, *rest])
        if line.strip():
            out.append(line)
    return out


class Shell:
    """Runs commands in a scratch directory laid out like the repository; background
    commands are stopped (their process groups) on :meth:`close`."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.background: list[subprocess.Popen[bytes]] = []
        self.env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
        }
        self.env.pop("KUBECONFIG", None)

    def start(self, command: str) -> None:
        log = open(self.root / f"background-{len(self.background)}.log", "wb")  # noqa: SIM115
        self.background.append(
            subprocess.Popen(
                ["bash", "-c", command],
                cwd=self.root,
                env=self.env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        )
        log.close()

    def run(self, command: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["bash", "-o", "pipefail", "-c", command],
            cwd=self.root,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=60,
        )

    def run_until(self, command: str, until: str | None = None, timeout: float = 45) -> str:
        """Run ``command`` until it succeeds (and prints ``until``); its output."""
        last: list[subprocess.CompletedProcess[str]] = []

        def done() -> bool:
            result = self.run(command)
            last[:] = [result]
            return result.returncode == 0 and (until is None or until in result.stdout)

        try:
            wait_for(done, timeout=timeout, message=command)
        except Exception:
            result = last[0] if last else None
            detail = f"\n{result.stdout}\n{result.stderr}" if result is not None else ""
            raise AssertionError(f"{command!r} did not succeed{detail}\n{self.logs()}") from None
        return last[0].stdout

    def logs(self) -> str:
        return "\n".join(
            f"--- {p.name}\n{p.read_text(errors='replace')[-2000:]}"
            for p in sorted(self.root.glob("background-*.log"))
        )

    def close(self) -> None:
        for process in self.background:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
        for process in self.background:
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()


@pytest.fixture
def shell(tmp_path: Path) -> Iterator[Shell]:
    """The scratch directory: ``.venv`` (a link), the example's CRD, a CA as ``dir/ca.crt``
    and ``ca.crt``."""
    (tmp_path / ".venv").symlink_to(VENV_BIN.parent)
    crd_dir = tmp_path / "examples" / "greetings"
    crd_dir.mkdir(parents=True)
    shutil.copy(REPO / "examples" / "greetings" / "crd.yaml", crd_dir / "crd.yaml")
    tls.generate(tmp_path / "dir")
    shutil.copy(tmp_path / "dir" / "ca.crt", tmp_path / "ca.crt")
    runner = Shell(tmp_path)
    yield runner
    runner.close()


@pytest.mark.embedded_only("starts its own embedded cluster: the same on either backend")
@pytest.mark.parametrize("block", _of("run"), ids=_ids(_of("run")))
def test_a_command_block_runs(block: Block, shell: Shell) -> None:
    if shutil.which("kubectl") is None and "kubectl" in block.body:
        pytest.skip("no kubectl on PATH")
    if "cluster" in block.args:
        shell.start(".venv/bin/kube-runtime cluster --kubeconfig kubeconfig")
        # written once it serves: the block's first command is not retried (a process each)
        # while the cluster starts
        wait_for(lambda: (shell.root / "kubeconfig").exists(), 45, message="the cluster")
    lines = commands(block.body)
    for i, command in enumerate(lines):
        if command.rstrip().endswith("&") or re.search(r"&\s+#", command):
            shell.start(command.split("#", 1)[0].rstrip().rstrip("&"))
        else:
            last = i == len(lines) - 1
            shell.run_until(command, block.option("until") if last else None)
    _check_outputs(block, shell.root)


def _check_outputs(block: Block, root: Path) -> None:
    """What the blocks write is what the repository holds (or what it should be)."""
    if "codegen examples/greetings/crd.yaml" in block.body:
        written = (root / "examples" / "greetings" / "models.py").read_text()
        assert written == (REPO / "examples" / "greetings" / "models.py").read_text()
    if "crd generate" in block.body:
        assert (
            "name: greetings.examples.kube-runtime.io" in (root / "greetings-crd.yaml").read_text()
        )
    if "> webhooks.yaml" in block.body:
        text = (root / "webhooks.yaml").read_text()
        assert "MutatingWebhookConfiguration" in text and "greetings-webhook" in text


@pytest.mark.embedded_only("collects with either backend's option: once is enough")
@pytest.mark.parametrize("block", _of("collect"), ids=_ids(_of("collect")))
def test_a_pytest_block_collects(block: Block) -> None:
    """Each command line collects the example's tests (its options and fixtures resolve).
    One with no options is this suite itself (``examples`` is a test path): not run again."""
    running = []
    for command in commands(block.body):
        argv = shlex.split(command)
        assert argv[:3] == [".venv/bin/python", "-m", "pytest"], command
        if all(not a.startswith("-") and (REPO / a).is_dir() for a in argv[3:]):
            assert all(Path(a).parts[0] in ("tests", "examples") for a in argv[3:]), command
            continue
        running.append(
            subprocess.Popen(
                [sys.executable, *argv[1:], "--collect-only", "-q", "-p", "no:cacheprovider"],
                cwd=REPO,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
            )
        )
    for process in running:
        out, _ = process.communicate(timeout=120)
        assert process.returncode == 0, out
        assert "test_operator.py::" in out, out


@pytest.mark.parametrize("block", _of("make"), ids=_ids(_of("make")))
def test_a_make_block_is_a_target(block: Block) -> None:
    if shutil.which("make") is None:
        pytest.skip("no make on PATH")
    for command in commands(block.body):
        argv = shlex.split(command)
        assert argv[0] == "make", command
        result = subprocess.run(["make", "-n", *argv[1:]], cwd=REPO, capture_output=True, text=True)
        assert result.returncode == 0, result.stderr


def test_the_entry_points_block_names_the_loaded_group() -> None:
    (block,) = _of("entry-points")
    table: dict[str, Any] = tomllib.loads(block.body)
    assert list(table["project"]["entry-points"]) == [CONTROLLERS_GROUP]
    flags = re.findall(r"--[\w-]+", block.body)
    help_text = subprocess.run(
        [str(VENV_BIN / "kube-runtime"), "run", "--help"], capture_output=True, text=True
    ).stdout
    assert flags and all(flag in help_text for flag in flags), flags
