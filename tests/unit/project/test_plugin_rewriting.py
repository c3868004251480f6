"""The pytest plugin keeps pytest from rewriting kube-runtime's own modules (their imports cost
~0.6 ms more each through pytest's rewriting importer), and only those: a test's own files
are rewritten as always."""

from __future__ import annotations

import textwrap
from pathlib import Path

from tests.support.fresh_python import FreshPython


def test_the_plugin_leaves_its_own_packages_unrewritten_and_test_files_rewritten(
    tmp_path: Path, fresh_python: FreshPython
) -> None:
    (tmp_path / "test_loaders.py").write_text(
        textwrap.dedent(
            """
            import sys

            import kube_runtime.envtest.waiting
            import kube_runtime.retry


            def loader(name):
                return type(sys.modules[name].__loader__).__name__


            def test_own_modules_plain_test_module_rewritten():
                assert loader("kube_runtime.envtest.waiting") != "AssertionRewritingHook"
                assert loader("kube_runtime.retry") != "AssertionRewritingHook"
                assert loader(__name__) == "AssertionRewritingHook"


            def test_a_failing_assert_still_explains_itself():
                values = [1, 2]
                assert values == [1, 3]
            """
        )
    )
    done = fresh_python.run(
        textwrap.dedent(
            f"""
            import sys
            import pytest
            sys.exit(int(pytest.main(["-q", "-p", "no:cacheprovider", {str(tmp_path)!r}])))
            """
        ),
        cwd=tmp_path,
    )
    assert "1 failed, 1 passed" in done.stdout, done.stdout + done.stderr
    assert "At index 1 diff: 2 != 3" in done.stdout  # the test file's assert was rewritten
