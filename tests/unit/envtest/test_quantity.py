"""Resource quantities (kube_runtime.workloads.quantity): the one parser the workload helpers
and the embedded server's validation share.

``"1E"`` and ``"1Ei"`` are suffixes (10**18, 2**60), as apimachinery's ``resource.Quantity``
reads them: an exponent needs digits after its ``e``/``E``."""

from __future__ import annotations

from decimal import Decimal

import pytest

from kube_runtime.envtest.server import validation
from kube_runtime.workloads.quantity import parse_quantity, storage_request


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("1", Decimal(1)),
        ("1Ki", Decimal(1024)),
        ("2Mi", Decimal(2 * 2**20)),
        ("1Gi", Decimal(2**30)),
        ("1Ti", Decimal(2**40)),
        ("1Pi", Decimal(2**50)),
        ("5n", Decimal("5e-9")),
        ("5u", Decimal("5e-6")),
        ("500m", Decimal("0.5")),
        ("1k", Decimal(1000)),
        ("1M", Decimal(10**6)),
        ("1G", Decimal(10**9)),
        ("1T", Decimal(10**12)),
        ("1P", Decimal(10**15)),
        ("1E", Decimal(10**18)),
        ("1Ei", Decimal(2**60)),
        ("2E3", Decimal(2000)),
        ("1E-3", Decimal("0.001")),
        ("1.5e3", Decimal(1500)),
        ("-.5Gi", Decimal(-(2**29))),
    ],
)
def test_suffixes_scale_the_number(text: str, value: Decimal) -> None:
    assert parse_quantity(text) == value
    assert validation._quantity(text) == value


@pytest.mark.parametrize(
    "bad", ["", "Gi", "1Gb", "1 Gi", "1KI", "1e", "1Ee", "1Eix", True, None, [1], {"a": 1}]
)
def test_what_is_not_a_quantity(bad: object) -> None:
    assert parse_quantity(bad) is None
    assert validation._quantity(bad) is None


def test_numbers_are_quantities() -> None:
    assert parse_quantity(3) == Decimal(3)
    assert parse_quantity(0.25) == Decimal("0.25")
    assert validation._quantity(3) == Decimal(3)


def test_white_space_is_trimmed_by_the_helper_not_by_validation() -> None:
    """The workload helper trims (as apimachinery's JSON decoding does); the embedded server's
    validation keeps its stricter reading."""
    assert parse_quantity(" 1Gi ") == Decimal(2**30)
    assert validation._quantity(" 1Gi ") is None


def test_storage_request() -> None:
    claim = {"spec": {"resources": {"requests": {"storage": "10Gi"}}}}
    assert storage_request(claim) == Decimal(10 * 2**30)
    assert storage_request({"spec": {}}) is None
    assert storage_request("claim") is None
