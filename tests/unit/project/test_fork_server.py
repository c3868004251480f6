"""tests/support/fork_server.py: a forked child runs a module as ``python -m`` does (its
arguments, environment, working directory and standard streams), as a process of its own, and
answers as ``subprocess.Popen`` does (exit codes, signals, timeouts)."""

from __future__ import annotations

import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.fork_server import ForkServer

PROBE = """
import os, signal, sys
print(sys.argv[1:], os.environ.get("PROBE"), os.getcwd(), __name__, file=sys.stderr)
print("out")
if sys.argv[1] == "pause":
    signal.pause()  # until a signal ends it
sys.exit(int(sys.argv[1]) if sys.argv[1].isdigit() else "a message")
"""


@pytest.fixture
def forks(tmp_path: Path) -> Iterator[ForkServer]:
    """A server with nothing preloaded (a plain interpreter) and the probe module in
    ``tmp_path`` (the children's working directory: ``python -c`` puts it on the path)."""
    (tmp_path / "probe_module.py").write_text(PROBE)
    with ForkServer((), env={"PATH": "/usr/bin:/bin"}) as server:
        yield server


def test_a_child_runs_the_module_as_python_m_does(forks: ForkServer, tmp_path: Path) -> None:
    err, out = tmp_path / "err", tmp_path / "out"
    child = forks.popen(
        "probe_module", ["3", "x"], stdout=out, stderr=err, env={"PROBE": "p"}, cwd=tmp_path
    )
    assert child.wait(30) == 3 and child.poll() == 3 and child.returncode == 3
    assert err.read_text() == f"['3', 'x'] p {tmp_path} __main__\n"
    assert out.read_text() == "out\n"
    message = forks.popen("probe_module", ["text"], stderr=err, cwd=tmp_path)
    assert message.wait(30) == 1  # sys.exit("a message"): 1, the message on stderr
    assert err.read_text().endswith("a message\n")


def test_a_child_is_a_process_of_its_own(forks: ForkServer, tmp_path: Path) -> None:
    first = forks.popen("probe_module", ["pause"], cwd=tmp_path)
    second = forks.popen("probe_module", ["pause"], cwd=tmp_path)
    assert first.pid != second.pid
    assert first.poll() is None
    with pytest.raises(subprocess.TimeoutExpired):
        first.wait(0.05)
    first.kill()
    assert first.wait(30) == -signal.SIGKILL
    assert second.poll() is None  # the signal reached the first alone
    second.terminate()
    assert second.wait(30) == -signal.SIGTERM
    second.kill()  # exited: nothing is sent


def test_closing_the_server_ends_its_children(tmp_path: Path) -> None:
    (tmp_path / "probe_module.py").write_text(PROBE)
    with ForkServer(()) as forks:
        child = forks.popen("probe_module", ["pause"], cwd=tmp_path)
    assert child.wait(0) == -signal.SIGKILL
