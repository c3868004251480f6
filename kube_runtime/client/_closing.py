"""A mixin for objects used as ``with obj:`` blocks that end by ``obj.close()``."""

from __future__ import annotations

from typing import Self

__all__ = ["ClosesOnExit"]


class ClosesOnExit:
    """``with obj:`` returns ``obj`` and calls ``obj.close()`` when the block ends, whatever
    ended it (exceptions propagate). Subclasses define :meth:`close`."""

    def close(self) -> None:
        """Release what the object holds; subclasses override it."""

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
