"""The embedded server's write path gives the same outcomes as before its restructuring.

``write_path_golden.json`` holds, per group of the corpus of
:mod:`tests.support.write_path_corpus`, the digest of every case's outcome (stored object bytes,
watch event bytes, or error Status and code) from the code before the write path was
restructured for speed (issue 19 part 3); any change of behaviour shows as a group whose
digest moved.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.write_path_corpus import grouped, run_corpus

GOLDEN = Path(__file__).with_name("write_path_golden.json")


def test_write_path_outcomes_are_unchanged() -> None:
    expected = json.loads(GOLDEN.read_text())
    got = grouped(run_corpus())
    assert list(got) == list(expected)  # the corpus itself is the same
    moved = [group for group in expected if got[group] != expected[group]]
    assert not moved, f"outcomes changed in {len(moved)} group(s): {moved[:20]}"
