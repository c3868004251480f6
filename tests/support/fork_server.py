"""Processes of the project's commands forked from one interpreter that imported them once.

A test that starts several ``python -m kube_runtime.cli ...`` processes (leader-election
replicas, one after another) paid each one's start-up: ~0.7 s of CPU importing the same
modules, seconds of wall time on a loaded 2-core machine. :class:`ForkServer` starts one server
interpreter that imports the ``preload`` modules (and nothing runs there: no thread, no
connection) and forks a child per :meth:`ForkServer.popen`: the child runs the module as
``python -m`` does (``runpy``, ``__main__``, ``sys.argv``), with its own standard streams,
working directory and environment, as its own process (its own pid: signals, SIGSTOP and
SIGKILL included, reach it alone). What a child does is what a new interpreter would do; only
the imports were done before it was forked.

The server reaps its children and reports their exit codes, so :class:`Forked` answers as
``subprocess.Popen`` does (``poll``, ``wait``, ``returncode``: negative for a signal).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import TracebackType

__all__ = ["ForkServer", "Forked"]

_SERVER = r"""
import importlib, json, os, runpy, selectors, signal, sys, threading, traceback
for name in sys.argv[1:]:
    importlib.import_module(name)
if threading.active_count() != 1:
    sys.exit("the preloaded modules started a thread: forking would be unsafe")
out = sys.stdout
selector = selectors.DefaultSelector()
selector.register(0, selectors.EVENT_READ)
children = {}  # pidfd -> pid


def answer(message):
    out.write(json.dumps(message) + "\n")
    out.flush()


def child(request):
    code = 1
    try:
        selector.close()
        for fd in children:
            os.close(fd)
        null = os.open(os.devnull, os.O_RDWR)
        os.dup2(null, 0)
        for fd, path in ((1, request["stdout"]), (2, request["stderr"])):
            target = null if path is None else os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
            os.dup2(target, fd)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        sys.argv = [request["module"], *request["args"]]
        try:
            runpy.run_module(request["module"], run_name="__main__", alter_sys=True)
            code = 0
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
            if not isinstance(e.code, (int, type(None))):
                print(e.code, file=sys.stderr)
        except BaseException:
            traceback.print_exc()
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        os._exit(code)


answer({"ready": True})
pending = b""
open_ = True
while open_ or children:
    for key, _ in selector.select():
        if key.fd == 0:
            data = os.read(0, 65536)
            if not data:
                open_ = False
                selector.unregister(0)
                for pid in children.values():
                    os.kill(pid, signal.SIGKILL)
                continue
            pending += data
            while b"\n" in pending:
                line, pending = pending.split(b"\n", 1)
                pid = os.fork()
                if pid == 0:
                    child(json.loads(line))
                pidfd = os.pidfd_open(pid)
                children[pidfd] = pid
                selector.register(pidfd, selectors.EVENT_READ)
                answer({"pid": pid})
        else:
            pid = children.pop(key.fd)
            selector.unregister(key.fd)
            os.close(key.fd)
            _, status = os.waitpid(pid, 0)
            answer({"exited": pid, "code": os.waitstatus_to_exitcode(status)})
"""


class ForkServer:
    """The server interpreter, started at once (it imports ``preload`` meanwhile) and stopped
    by :meth:`close` (children still running are killed first). ``env``: the server's
    environment (default: this process's), which modules may read when imported."""

    def __init__(self, preload: Sequence[str], *, env: Mapping[str, str] | None = None) -> None:
        self._proc = subprocess.Popen(
            [sys.executable, "-c", _SERVER, *preload],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=dict(os.environ if env is None else env),
        )
        self._spawn_lock = threading.Lock()
        self._changed = threading.Condition()
        self._ready = False
        self._pids: list[int] = []
        self._codes: dict[int, int] = {}
        self._gone = False
        self._reader = threading.Thread(target=self._read, name="fork-server", daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self._proc.stdout is not None
        for line in self._proc.stdout:
            message = json.loads(line)
            with self._changed:
                if "ready" in message:
                    self._ready = True
                elif "pid" in message:
                    self._pids.append(int(message["pid"]))
                else:
                    self._codes[int(message["exited"])] = int(message["code"])
                self._changed.notify_all()
        with self._changed:
            self._gone = True
            self._changed.notify_all()

    def popen(
        self,
        module: str,
        args: Sequence[str],
        *,
        stdout: Path | None = None,
        stderr: Path | None = None,
        env: Mapping[str, str] | None = None,
        cwd: Path | None = None,
        timeout: float = 60,
    ) -> Forked:
        """``python -m module *args`` in a child of the server: ``stdout``/``stderr`` appended
        to the given files (``None``: discarded), stdin empty, ``env`` (default: this
        process's) and ``cwd`` (default: this process's). RuntimeError if the server is gone
        or has not forked it within ``timeout`` seconds (its imports included)."""
        request = {
            "module": module,
            "args": list(args),
            "stdout": None if stdout is None else str(stdout),
            "stderr": None if stderr is None else str(stderr),
            "env": dict(os.environ if env is None else env),
            "cwd": str(cwd or Path.cwd()),
        }
        with self._spawn_lock:
            assert self._proc.stdin is not None
            with self._changed:
                seen = len(self._pids)
            self._proc.stdin.write(json.dumps(request).encode() + b"\n")
            self._proc.stdin.flush()
            with self._changed:
                if not self._changed.wait_for(
                    lambda: len(self._pids) > seen or self._gone, timeout
                ):
                    raise RuntimeError(f"the fork server did not fork within {timeout} s")
                if len(self._pids) == seen:
                    raise RuntimeError(f"the fork server died (exit code {self._proc.wait()})")
                pid = self._pids[seen]
        return Forked(self, pid, [sys.executable, "-m", module, *args])

    def _code(self, pid: int, timeout: float | None) -> int | None:
        with self._changed:
            self._changed.wait_for(lambda: pid in self._codes or self._gone, timeout)
            return self._codes.get(pid)

    def close(self) -> None:
        """Kill the children still running, stop the server and wait for it (10 s at most)."""
        if self._proc.stdin is not None and not self._proc.stdin.closed:
            self._proc.stdin.close()
        try:
            self._proc.wait(10)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        self._reader.join(10)
        if self._proc.stdout is not None:
            self._proc.stdout.close()

    def __enter__(self) -> ForkServer:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


class Forked:
    """A child of a :class:`ForkServer`, answering as ``subprocess.Popen`` does."""

    def __init__(self, server: ForkServer, pid: int, args: list[str]) -> None:
        self._server = server
        self.pid = pid
        self.args = args
        self.returncode: int | None = None

    def poll(self) -> int | None:
        """The exit code if the child has exited (negative: the signal that ended it)."""
        if self.returncode is None:
            self.returncode = self._server._code(self.pid, 0)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        """The exit code, once the child has exited; ``subprocess.TimeoutExpired`` after
        ``timeout`` seconds, RuntimeError if the server is gone without reporting it."""
        if self.returncode is None:
            self.returncode = self._server._code(self.pid, timeout)
        if self.returncode is None:
            if self._server._gone:
                raise RuntimeError(f"the fork server is gone; child {self.pid} not reported")
            raise subprocess.TimeoutExpired(self.args, timeout or 0)
        return self.returncode

    def send_signal(self, sig: int) -> None:
        """Send ``sig`` to the child, unless it has exited (reported)."""
        if self.poll() is None:
            os.kill(self.pid, sig)

    def kill(self) -> None:
        """SIGKILL, unless the child has exited."""
        self.send_signal(signal.SIGKILL)

    def terminate(self) -> None:
        """SIGTERM, unless the child has exited."""
        self.send_signal(signal.SIGTERM)
