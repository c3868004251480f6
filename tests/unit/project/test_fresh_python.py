"""tests/support/fresh_python.py: the forked interpreters of the import-shape checks start with
no module of the project loaded and report as ``python -c`` does (issue 28)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.fresh_python import FIRST_PARTY, FreshPython


def test_a_child_starts_with_nothing_of_the_project_and_reports_like_python_c(
    fresh_python: FreshPython, tmp_path: Path
) -> None:
    done = fresh_python.run(
        "import json, os, sys; import kube_runtime.kinds\n"
        "print(json.dumps([sorted(sys.modules), os.getcwd(), sys.argv, __name__]))",
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    loaded, cwd, argv, name = json.loads(done.stdout)
    own = [m for m in loaded if m.split(".")[0] in FIRST_PARTY]
    assert "kube_runtime.kinds" in own  # what the code imported, and its parents
    assert all(m == "kube_runtime" or m.startswith("kube_runtime.") for m in own), own
    assert (cwd, argv, name) == (str(tmp_path), ["-c"], "__main__")
    again = fresh_python.run("import json, sys; print(json.dumps(sorted(sys.modules)))")
    # the first child's imports stayed in it
    assert [m for m in json.loads(again.stdout) if m.split(".")[0] in FIRST_PARTY] == []
    failed = fresh_python.run("import sys; print('out'); sys.exit(3)")
    assert (failed.returncode, failed.stdout) == (3, "out\n")
    raised = fresh_python.run("raise ValueError('boom')")
    assert raised.returncode == 1 and "ValueError: boom" in raised.stderr
