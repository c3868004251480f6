"""Kruise's lifecycle-state and ``KruisePodReady`` writes to a pod, for the CloneSet's and the
Advanced StatefulSet's pod controls (which had the same three methods each).

:mod:`~kube_runtime.workloads.lifecycle` and :mod:`~kube_runtime.workloads.podreadiness` say
*what* to write (pure patches); :class:`PodLifecycleWriter` writes it: strategic merge patches
of the pod (the state label and its timestamp annotation) and of its ``status`` (the readiness
gate's condition, merged by type), each pod the API returns handed to ``on_write``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from kube_runtime import meta
from kube_runtime.client.interfaces import Writer
from kube_runtime.kinds import Pod
from kube_runtime.meta import Obj
from kube_runtime.workloads import lifecycle, podreadiness

__all__ = ["PodLifecycleWriter"]


class PodLifecycleWriter:
    """Lifecycle and readiness-gate writes through ``client``; ``on_write`` (optional) gets
    every pod as the API returned it after a write (resourceVersion expectations)."""

    __slots__ = ("_client", "_on_write")

    def __init__(self, client: Writer, on_write: Callable[[Obj], None] | None = None) -> None:
        self._client = client
        self._on_write = on_write

    def update_lifecycle(
        self,
        pod: Mapping[str, Any],
        state: str,
        *,
        hook: Mapping[str, Any] | None = None,
        mark_not_ready: bool = False,
    ) -> Obj | None:
        """Move the pod to lifecycle ``state`` (Kruise ``UpdatePodLifecycle``): a strategic
        merge patch of the state label and its timestamp annotation; with ``hook``
        (``UpdatePodLifecycleWithHandler``) the hook's labels and finalizers are put back in
        the same patch. ``mark_not_ready`` (the hook's ``markPodNotReady``) first holds the pod
        not ready through its ``KruisePodReady`` gate at ``PreparingDelete`` /
        ``PreparingUpdate`` and releases it at ``Updated``, whatever the current state
        (Kruise ``executePodNotReadyPolicy``). Returns the pod as written, or None when it is
        in ``state`` already (no state write)."""
        if mark_not_ready:
            self._patch_status(pod, podreadiness.lifecycle_not_ready_patch(pod, state))
        if lifecycle.get_state(pod) == state:
            return None
        written: Obj = self._client.patch(
            Pod,
            meta.name(pod),
            lifecycle.hook_state_patch(state, hook),
            namespace=meta.namespace(pod),
            patch_type="strategic",
        )
        if self._on_write is not None:
            self._on_write(written)
        return written

    def ensure_readiness_condition(self, pod: Mapping[str, Any]) -> bool:
        """Kruise's pod-readiness controller: a pod with the ``KruisePodReady`` gate and no
        condition gets it ``True``; whether a write was sent."""
        return self._patch_status(pod, podreadiness.initial_condition(pod))

    def _patch_status(self, pod: Mapping[str, Any], patch: Mapping[str, Any] | None) -> bool:
        """Write a ``KruisePodReady`` status patch (strategic: conditions merged by type);
        no request when ``patch`` is None."""
        if patch is None:
            return False
        written: Obj = self._client.patch(
            Pod,
            meta.name(pod),
            dict(patch),
            namespace=meta.namespace(pod),
            patch_type="strategic",
            subresource="status",
        )
        if self._on_write is not None:
            self._on_write(written)
        return True
