"""Resource quantities (``"1Gi"``, ``"500m"``, ``2``) as numbers, to compare storage sizes
(apimachinery ``resource.Quantity.Cmp``)."""

from __future__ import annotations

from decimal import Decimal

# The parser is kube-apiserver's too (a Pod's QoS class): it lives with the API server's facts
# the fake client and the embedded server share, and is public here.
from kube_runtime.client._apifacts import QUANTITY_RE, parse_quantity

__all__ = ["QUANTITY_RE", "parse_quantity", "storage_request"]


def storage_request(claim: object) -> Decimal | None:
    """``spec.resources.requests.storage`` of a claim (or claim template), or None."""
    if not isinstance(claim, dict):
        return None
    spec = claim.get("spec") or {}
    return parse_quantity(((spec.get("resources") or {}).get("requests") or {}).get("storage"))
