"""Fault rules of the embedded server: which requests they match (resource, subresource,
verb, User-Agent, field manager), with the plural + verb calls of before unchanged."""

from __future__ import annotations

import pytest

from kube_runtime.envtest.server.faults import Faults, RequestAttributes

OPERATOR = "site-operator/v0.1 (linux/amd64) kube-runtime/1.0"


def _req(
    resource: str = "sites",
    verb: str = "patch",
    subresource: str = "",
    user_agent: str = "kube-runtime/1.0",
    field_manager: str = "",
) -> RequestAttributes:
    return RequestAttributes(resource, verb, subresource, user_agent, field_manager)


def _fails(faults: Faults, request: RequestAttributes) -> bool:
    return faults.check(request) is not None


def test_a_plural_matches_the_resource_and_its_subresources_as_before() -> None:
    faults = Faults()
    faults.fail("sites", "patch", 500)
    assert _fails(faults, _req())
    assert _fails(faults, _req(subresource="status"))
    assert not _fails(faults, _req(verb="update"))
    assert not _fails(faults, _req(resource="pods"))
    # the old positional form of check still works
    assert faults.check("sites", "patch") is not None
    assert faults.check("sites", "get") is None


def test_a_subresource_is_targeted_alone() -> None:
    faults = Faults()
    rule = faults.fail("sites/status", "patch", 500)
    assert rule.resource == "sites" and rule.subresource == "status"
    assert _fails(faults, _req(subresource="status"))
    assert not _fails(faults, _req())  # the spec patch goes through
    assert not _fails(faults, _req(subresource="scale"))

    main_only = Faults()
    main_only.fail("sites", "patch", subresource="")
    assert _fails(main_only, _req()) and not _fails(main_only, _req(subresource="status"))

    any_sub = Faults()
    any_sub.fail("sites/*", "*")
    assert _fails(any_sub, _req(subresource="scale")) and not _fails(any_sub, _req())

    every_status = Faults()
    every_status.fail("*/status", "update")
    assert _fails(every_status, _req("pods", "update", "status"))
    assert not _fails(every_status, _req("pods", "update"))


def test_user_agent_matches_the_header_or_its_product() -> None:
    faults = Faults()
    faults.fail("sites", "patch", 500, user_agent="site-operator")
    assert _fails(faults, _req(user_agent=OPERATOR))
    assert not _fails(faults, _req())  # the test's own client
    assert not _fails(faults, _req(user_agent="site-operator-2/v1"))
    whole = Faults()
    whole.fail(user_agent=OPERATOR)
    assert _fails(whole, _req("pods", "get", user_agent=OPERATOR))


def test_field_manager_matches_writes_by_parameter_or_user_agent() -> None:
    faults = Faults()
    faults.fail("sites/status", "*", 409, field_manager="site-operator")
    assert _fails(faults, _req(subresource="status", field_manager="site-operator"))
    # no parameter: the manager is the User-Agent's product, as managedFields records it
    assert _fails(faults, _req(verb="update", subresource="status", user_agent=OPERATOR))
    assert not _fails(faults, _req(subresource="status", field_manager="kubectl"))
    # reads and deletes have no field manager
    assert not _fails(faults, _req(verb="get", subresource="status", user_agent=OPERATOR))
    assert not _fails(faults, _req(verb="delete", user_agent=OPERATOR))


def test_times_counts_only_matching_requests() -> None:
    faults = Faults()
    faults.fail("sites", "patch", 500, times=1, user_agent="site-operator")
    assert not _fails(faults, _req())
    assert _fails(faults, _req(user_agent=OPERATOR))
    assert not _fails(faults, _req(user_agent=OPERATOR))
    assert faults.injected == 1 and not faults.armed


def test_latency_matches_as_failures_do() -> None:
    faults = Faults()
    faults.add_latency(0.5, "sites/status", "patch")
    faults.add_latency(0.25, "sites", "*", user_agent="site-operator")
    assert faults.delay(_req()) == 0.0
    assert faults.delay(_req(subresource="status")) == 0.5
    assert faults.delay(_req(subresource="status", user_agent=OPERATOR)) == 0.75
    assert faults.delay("sites", "get") == 0.0


@pytest.mark.parametrize("resource", ["", "/status", "sites/", "sites/status/x"])
def test_a_malformed_resource_is_refused(resource: str) -> None:
    with pytest.raises(ValueError, match="resource must be"):
        Faults().fail(resource, "patch")


def test_a_resource_and_subresource_that_disagree_are_refused() -> None:
    with pytest.raises(ValueError, match="another subresource"):
        Faults().fail("sites/status", "patch", subresource="scale")
