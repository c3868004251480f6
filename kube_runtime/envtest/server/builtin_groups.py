"""The per-group modules of the built-in API groups (``builtin_<group>.py``), collected.

:data:`CHECKS` maps ``(group, kind)`` to the kind's own validation (run by
:mod:`.strategy` after :func:`.validation.validate`'s object-meta checks) and
:data:`COLUMNS` maps ``(group, plural)`` to its table printer (read by
:func:`.tables.columns_for`). A new group module registers its kinds here, one line each.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

from kube_runtime.envtest.server import builtin_storage as storage
from kube_runtime.envtest.server.errors import Cause
from kube_runtime.envtest.server.tables import Column

__all__ = ["CHECKS", "COLUMNS", "check"]

Check = Callable[[list[Cause], Mapping[str, Any], Mapping[str, Any] | None], None]

CHECKS: Final[dict[tuple[str, str], Check]] = {
    (storage.GROUP, "StorageClass"): storage.check_storage_class,
    (storage.GROUP, "CSIDriver"): storage.check_csi_driver,
    (storage.GROUP, "CSINode"): storage.check_csi_node,
    (storage.GROUP, "VolumeAttachment"): storage.check_volume_attachment,
}

COLUMNS: Final[dict[tuple[str, str], list[Column]]] = {
    (storage.GROUP, "storageclasses"): storage.STORAGE_CLASS_COLUMNS,
    (storage.GROUP, "csidrivers"): storage.CSI_DRIVER_COLUMNS,
    (storage.GROUP, "csinodes"): storage.CSI_NODE_COLUMNS,
    (storage.GROUP, "volumeattachments"): storage.VOLUME_ATTACHMENT_COLUMNS,
}


def check(
    group: str, kind: str, obj: Mapping[str, Any], old: Mapping[str, Any] | None
) -> list[Cause]:
    """The causes the kind's own validation finds (``[]`` for kinds without one here)."""
    found = CHECKS.get((group, kind))
    out: list[Cause] = []
    if found is not None:
        found(out, obj, old)
    return out
