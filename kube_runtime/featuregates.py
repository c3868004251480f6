"""Feature gates in component-base's syntax (``--feature-gates A=true,B=false``), as Kruise and
kube-controller-manager take them; one parser for the flag and the environment variable.

Spaces around entries are ignored, empty entries skipped, and a value is read as Go's
``strconv.ParseBool`` reads it (``1``, ``t``, ``T``, ``TRUE``, ``true``, ``True`` and their
false counterparts). Errors are :class:`ValueError` in component-base's words.
"""

from __future__ import annotations

from collections.abc import Collection

__all__ = ["parse_feature_gates"]

_GO_BOOLS: dict[str, bool] = {
    **dict.fromkeys(("1", "t", "T", "TRUE", "true", "True"), True),
    **dict.fromkeys(("0", "f", "F", "FALSE", "false", "False"), False),
}


def parse_feature_gates(text: str, known: Collection[str] | None = None) -> dict[str, bool]:
    """``text`` as ``{gate: on}``; ``ValueError`` for an entry without a value, a value that
    is not a Go bool, or (when ``known`` is given) a gate not in ``known``."""
    gates: dict[str, bool] = {}
    for entry in text.split(","):
        entry = entry.strip()
        if not entry:
            continue
        name, sep, value = entry.partition("=")
        name, value = name.strip(), value.strip()
        if not sep:
            raise ValueError(f"missing bool value for {name}")
        if known is not None and name not in known:
            raise ValueError(f"unrecognized feature gate: {name}")
        if value not in _GO_BOOLS:
            raise ValueError(
                f"invalid value of {name}={value}, err: strconv.ParseBool: parsing "
                f'"{value}": invalid syntax'
            )
        gates[name] = _GO_BOOLS[value]
    return gates
