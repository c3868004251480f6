"""Fresh interpreters for the import-shape checks, forked from one that has only third-party
packages loaded.

The layering and package-cycle tests ask what importing a module of the project loads, in an
interpreter that has loaded nothing of the project (the test session has loaded all of it).
Started with ``python -c`` each, every check paid ~1 s of CPU, most of it importing the same
third-party packages (the kubernetes client alone ~0.6 s). :class:`FreshPython` starts one
server interpreter that imports :data:`PRELOAD` (third-party packages only: it refuses to
serve if any module of the project got loaded) and forks a child per check: the child starts
with no module of the project loaded, runs the code as ``python -c`` would (in ``__main__``,
``sys.argv == ["-c"]``, the given directory as the current one) and its output and exit code
come back. What a check looks for (modules of the project in ``sys.modules``) is what a new
interpreter would show; only the third-party modules of :data:`PRELOAD` are there already.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from types import TracebackType

__all__ = ["FIRST_PARTY", "PRELOAD", "FreshPython"]

#: Top-level packages of this repository: never loaded by the server before a check.
FIRST_PARTY = ("kube_runtime", "controllers", "codegen", "bench", "examples", "tests")

#: Third-party packages the project's modules import, loaded once by the server.
PRELOAD = (
    "kubernetes",
    "kubernetes.dynamic",
    "urllib3",
    "yaml",
    "pydantic",
    "prometheus_client",
    "orjson",
)

_SERVER = r"""
import importlib, json, os, sys, traceback
for name in PRELOAD:
    try:
        importlib.import_module(name)
    except ImportError:
        pass
own = sorted(m for m in sys.modules if m.split(".")[0] in FIRST_PARTY)
print(json.dumps({"own": own}), flush=True)
if own:
    sys.exit(1)
for line in sys.stdin:
    request = json.loads(line)
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            null = os.open(os.devnull, os.O_RDONLY)
            os.dup2(null, 0)
            for fd, path in ((1, request["stdout"]), (2, request["stderr"])):
                os.dup2(os.open(path, os.O_WRONLY | os.O_TRUNC), fd)
            os.chdir(request["cwd"])
            os.environ.update(request["env"])
            sys.argv = ["-c"]
            main = type(sys)("__main__")
            sys.modules["__main__"] = main
            try:
                exec(compile(request["code"], "<string>", "exec"), main.__dict__)
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
    _, status = os.waitpid(pid, 0)
    print(json.dumps({"returncode": os.waitstatus_to_exitcode(status)}), flush=True)
"""


class FreshPython:
    """The server interpreter (started on first use, stopped by :meth:`close`); ``run`` is
    ``subprocess.run([sys.executable, "-c", code], cwd=cwd, env=...)`` with text output."""

    def __init__(self, cwd: Path) -> None:
        self._cwd = cwd
        self._proc: subprocess.Popen[str] | None = None
        self._lock = threading.Lock()
        self._scratch = tempfile.TemporaryDirectory(prefix="fresh-python-")

    def _server(self) -> subprocess.Popen[str]:
        if self._proc is None:
            prelude = f"PRELOAD = {PRELOAD!r}\nFIRST_PARTY = {FIRST_PARTY!r}\n"
            proc = subprocess.Popen(
                [sys.executable, "-c", prelude + _SERVER],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
                cwd=self._cwd,
            )
            assert proc.stdout is not None
            hello = json.loads(proc.stdout.readline() or '{"own": ["<no answer>"]}')
            if hello["own"]:
                proc.kill()
                proc.wait()
                raise RuntimeError(f"the server loaded modules of the project: {hello['own']}")
            self._proc = proc
        return self._proc

    def run(
        self, code: str, *, cwd: Path | None = None, env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        """Run ``code`` in a child of the server; its exit code, stdout and stderr."""
        with self._lock:
            proc = self._server()
            assert proc.stdin is not None and proc.stdout is not None
            out = Path(self._scratch.name, "stdout")
            err = Path(self._scratch.name, "stderr")
            out.write_text("")
            err.write_text("")
            request = {
                "code": code,
                "cwd": str(cwd or self._cwd),
                "env": env or {},
                "stdout": str(out),
                "stderr": str(err),
            }
            proc.stdin.write(json.dumps(request) + "\n")
            proc.stdin.flush()
            answer = proc.stdout.readline()
            if not answer:
                raise RuntimeError(f"the server died (exit code {proc.wait()})")
            returncode = int(json.loads(answer)["returncode"])
            return subprocess.CompletedProcess(
                ["<fresh python>", "-c", code], returncode, out.read_text(), err.read_text()
            )

    def close(self) -> None:
        """Stop the server (its children have all exited) and remove the scratch files."""
        with self._lock:
            if self._proc is not None:
                assert self._proc.stdin is not None
                self._proc.stdin.close()
                try:
                    self._proc.wait(10)
                except subprocess.TimeoutExpired:
                    self._proc.kill()
                    self._proc.wait()
                if self._proc.stdout is not None:
                    self._proc.stdout.close()
                self._proc = None
            self._scratch.cleanup()

    def __enter__(self) -> FreshPython:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
