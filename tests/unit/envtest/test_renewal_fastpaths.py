"""Fast paths of a Lease renewal's way through the embedded API server, each against the
general path it stands for.

* ``storage._rfc3339_second`` formats a new second's time of day itself (the date kept per
  day) instead of calling ``time.strftime`` on ``time.gmtime``: the same text for every second.
"""

from __future__ import annotations

import random
import time

from kube_runtime.envtest.server import storage


def _strftime(second: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(second))


def test_rfc3339_second_matches_strftime() -> None:
    rng = random.Random(28)
    seconds = [0, 59, 60, 3599, 3600, 86399, 86400, -1, -86400, -86401]
    seconds += [951_782_400 + d for d in (-1, 0, 86_399, 86_400)]  # 2000-02-29, a leap day
    seconds += [4_102_444_800 + d for d in (-1, 0)]  # 2100-01-01 (2100 is no leap year)
    seconds += list(range(1_700_000_000, 1_700_000_000 + 3 * 86_400, 631))
    seconds += [rng.randrange(-62_135_596_800, 253_402_300_799) for _ in range(20_000)]
    for second in seconds:
        assert storage._rfc3339_second(second) == _strftime(second), second


def test_now_rfc3339_truncates_to_the_second() -> None:
    assert storage.now_rfc3339(lambda: 1_700_000_000.999) == _strftime(1_700_000_000)
    assert storage.now_rfc3339(lambda: -0.5) == _strftime(-1)
