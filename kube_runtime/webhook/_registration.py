"""What a server serves for a kind: the paths (controller-runtime's naming) and the record a
configuration is generated from.

Paths are those controller-runtime's builder generates: ``/mutate-<group>-<version>-<kind>``
and ``/validate-<group>-<version>-<kind>``, the group's dots as dashes and the kind in lower
case (the core group is empty: ``/validate--v1-pod``); conversion is ``/convert``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypedDict

from kube_runtime.client.mapping import Resource
from kube_runtime.kinds import Kind

__all__ = [
    "CONVERT_PATH",
    "FAILURE_POLICIES",
    "OPERATIONS",
    "SIDE_EFFECTS",
    "Registration",
    "RegistrationOptions",
    "mutate_path",
    "validate_path",
    "webhook_name",
]

CONVERT_PATH = "/convert"
"""The path of CRD conversion reviews."""


def _suffix(kind: Kind) -> str:
    return f"{kind.group.replace('.', '-')}-{kind.version}-{kind.kind.lower()}"


def mutate_path(kind: Kind) -> str:
    """``/mutate-<group>-<version>-<kind>`` (controller-runtime ``generateMutatePath``)."""
    return f"/mutate-{_suffix(kind)}"


def validate_path(kind: Kind) -> str:
    """``/validate-<group>-<version>-<kind>`` (controller-runtime ``generateValidatePath``)."""
    return f"/validate-{_suffix(kind)}"


def webhook_name(kind: Kind, mutating: bool) -> str:
    """A webhook's default name: ``m``/``v``, the kind and version, then the group (as
    kubebuilder's ``mcronjob-v1.kb.io``); a name must have three dot-separated segments, so a
    built-in group gets ``.kube-runtime.io`` appended."""
    name = f"{'m' if mutating else 'v'}{kind.kind.lower()}-{kind.version}.{kind.group or 'core'}"
    return name if name.count(".") >= 2 else f"{name}.kube-runtime.io"


OPERATIONS = ("CREATE", "UPDATE", "DELETE", "CONNECT")
"""The operations a webhook rule names."""
FAILURE_POLICIES = ("Fail", "Ignore")
"""What kube-apiserver does when the webhook cannot be called."""
SIDE_EFFECTS = ("None", "NoneOnDryRun")
"""``sideEffects`` values ``admissionregistration.k8s.io/v1`` accepts. A webhook declaring
``NoneOnDryRun`` is called for dry-run requests too and must then make no side effects
(``request.dry_run``); with ``None`` it has none at all."""


class RegistrationOptions(TypedDict, total=False):
    """The keywords of a webhook's configuration that both ``WebhookBuilder.defaulter`` and
    ``WebhookBuilder.validator`` take (each defaults to :class:`Registration`'s: no name of
    its own, ``"Fail"``, ``"None"``, the API server's timeout)."""

    name: str
    failure_policy: str
    side_effects: str
    timeout_seconds: int | None


@dataclass(frozen=True)
class Registration:
    """One admission webhook a server serves: for ``kind`` at ``path``, mutating or
    validating, for ``operations``. ``resource`` (plural and scope) is needed for a
    configuration's rules; None when it could not be resolved at registration.
    Values a configuration would refuse are a ValueError here."""

    kind: Kind
    path: str
    mutating: bool
    operations: tuple[str, ...]
    resource: Resource | None = None
    name: str = ""
    failure_policy: str = "Fail"
    side_effects: str = "None"
    timeout_seconds: int | None = None

    def __post_init__(self) -> None:
        if not self.operations:
            raise ValueError(f"{self.kind}: a webhook needs at least one operation")
        unknown = [op for op in self.operations if op not in OPERATIONS]
        if unknown:
            raise ValueError(f"{self.kind}: unknown operations {unknown} (known: {OPERATIONS})")
        if self.failure_policy not in FAILURE_POLICIES:
            raise ValueError(f"failure_policy must be one of {FAILURE_POLICIES}")
        if self.side_effects not in SIDE_EFFECTS:
            raise ValueError(f"side_effects must be one of {SIDE_EFFECTS}")
        if self.timeout_seconds is not None and not 1 <= self.timeout_seconds <= 30:
            raise ValueError("timeout_seconds must be between 1 and 30")

    @property
    def webhook_name(self) -> str:
        """The name in the configuration (given, else :func:`webhook_name`)."""
        return self.name or webhook_name(self.kind, self.mutating)
