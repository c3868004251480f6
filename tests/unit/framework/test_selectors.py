"""Label and field selectors: parsing, formatting, matching and upstream error messages."""

from __future__ import annotations

from types import ModuleType
from typing import Any

import pytest

from kube_runtime import selectors, validation
from kube_runtime.envtest.server.fieldlabels import check_field_selector, supported_fields
from kube_runtime.selectors import (
    EVERYTHING,
    NOTHING,
    FieldSelector,
    LabelSelector,
    Requirement,
    SelectorError,
    format_label_selector,
    label_selector_from_dict,
    object_fields,
    parse_field_selector,
    parse_label_selector,
    unsupported_field_label,
)

# ---- label selector parsing ----------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("", ""),
        ("   ", ""),
        ("a=b", "a=b"),
        ("a==b", "a==b"),
        ("a!=b", "a!=b"),
        (" a = b , c != d ", "a=b,c!=d"),
        ("a=b,\tc\n", "a=b,c"),
        ("e in (y,x)", "e in (x,y)"),
        ("e in(x, x)", "e in (x)"),
        ("f notin (z)", "f notin (z)"),
        ("g", "g"),
        ("!h", "!h"),
        ("! h", "!h"),
        ("i>3", "i>3"),
        ("i < 3", "i<3"),
        ("a=", "a="),
        ("a in ()", "a in ()"),
        ("x in (foo,,baz),y,z notin ()", "x in (,baz,foo),y,z notin ()"),
        ("b=1,a=2", "a=2,b=1"),
        ("in in (in,notin)", "in in (in,notin)"),
        ("example.com/app=web", "example.com/app=web"),
        (
            "a=b,c!=d,e in (x,y),f notin (z),g,!h,i>3",
            "a=b,c!=d,e in (x,y),f notin (z),g,!h,i>3",
        ),
    ],
)
def test_parse_canonical_and_round_trip(text: str, canonical: str) -> None:
    sel = parse_label_selector(text)
    assert str(sel) == canonical
    assert parse_label_selector(str(sel)) == sel


@pytest.mark.parametrize(
    ("text", "operator", "values"),
    [
        ("a=b", "=", ("b",)),
        ("a==b", "==", ("b",)),
        ("a!=b", "!=", ("b",)),
        ("a in (c,b)", "in", ("b", "c")),
        ("a notin (b)", "notin", ("b",)),
        ("a", "exists", ()),
        ("!a", "!", ()),
        ("a>1", "gt", ("1",)),
        ("a<1", "lt", ("1",)),
        ("a in (,)", "in", ("",)),
    ],
)
def test_parse_operators(text: str, operator: str, values: tuple[str, ...]) -> None:
    (req,) = parse_label_selector(text).requirements
    assert (req.key, req.operator, req.values) == ("a", operator, values)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("a in (b", "unable to parse requirement: found '', expected: ',' or ')'"),
        ("a in (b c)", "unable to parse requirement: found 'c', expected: ',' or ')'"),
        ("a in b", "unable to parse requirement: found 'b' expected: '('"),
        ("a in (=)", "unable to parse requirement: found '=', expected: ',', ')' or identifier"),
        ("a in (b,=)", "unable to parse requirement: found '=', expected: ',', or identifier"),
        ("a=b,", "found '', expected: identifier after ','"),
        ("a=b,,c", "found ',', expected: identifier after ','"),
        ("a b", "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt"),
        ("!a=b", "found '=', expected: ',' or 'end of string'"),
        ("a=b c", "found 'c', expected: ',' or 'end of string'"),
        ("=a", "found '=', expected: !, identifier, or 'end of string'"),
        ("a=(", "unable to parse requirement: found '(', expected: identifier"),
        ("!!a", "unable to parse requirement: found '!', expected: identifier"),
        ("a>b", "values[0]: Invalid value: \"b\": for 'Gt', 'Lt' operators, the value must be"),
        ("a>99999999999999999999", "the value must be an integer"),
        ("a<-3", 'values[0][a]: Invalid value: "-3": a valid label must be'),
        ("a=-x", 'values[0][a]: Invalid value: "-x": a valid label must be an empty string'),
        ("a=" + "v" * 64, "must be no more than 63 characters"),
        ("a/b/c=d", 'key: Invalid value: "a/b/c": a qualified name must consist of'),
        ("/a=b", "prefix part must be non-empty"),
        ("Ex_ample.com/a=b", "prefix part a lowercase RFC 1123 subdomain must consist"),
        ("k" * 64 + "=v", "name part must be no more than 63 characters"),
        ("-a=b", "name part must consist of alphanumeric characters"),
    ],
)
def test_parse_errors(text: str, message: str) -> None:
    with pytest.raises(SelectorError) as info:
        parse_label_selector(text)
    assert message in str(info.value)
    assert isinstance(info.value, ValueError)


# ---- label selector matching ---------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "labels", "expected"),
    [
        ("", {}, True),
        ("", {"a": "b"}, True),
        ("a=b", {"a": "b"}, True),
        ("a=b", {"a": "c"}, False),
        ("a=b", {}, False),
        ("a==b", {"a": "b", "x": "y"}, True),
        ("a!=b", {"a": "c"}, True),
        ("a!=b", {}, True),
        ("a!=b", {"a": "b"}, False),
        ("a in (b,c)", {"a": "c"}, True),
        ("a in (b,c)", {"a": "d"}, False),
        ("a in (b,c)", {}, False),
        ("a notin (b,c)", {"a": "d"}, True),
        ("a notin (b,c)", {}, True),
        ("a notin (b,c)", {"a": "b"}, False),
        ("a notin (b)", {"a": "b"}, False),
        ("a", {"a": ""}, True),
        ("a", {"b": "a"}, False),
        ("!a", {"b": "a"}, True),
        ("!a", {"a": ""}, False),
        ("a>3", {"a": "4"}, True),
        ("a>3", {"a": "3"}, False),
        ("a>3", {"a": "x"}, False),
        ("a>3", {}, False),
        ("a<3", {"a": "-1"}, True),
        ("a<3", {"a": "+2"}, True),
        ("a<3", {"a": " 2"}, False),
        ("a<3", {"a": "1_0"}, False),
        ("a=", {"a": ""}, True),
        ("a=", {}, False),
        ("a in ()", {"a": ""}, True),
        ("a=b,c in (d,e),!f,g", {"a": "b", "c": "e", "g": "1"}, True),
        ("a=b,c in (d,e),!f,g", {"a": "b", "c": "e", "g": "1", "f": "x"}, False),
        ("a=b,c in (d,e),!f,g", {"a": "b", "c": "e"}, False),
    ],
)
def test_label_selector_matches(text: str, labels: dict[str, str], expected: bool) -> None:
    sel = parse_label_selector(text)
    assert sel.matches(labels) is expected
    # Every requirement agrees with the compiled plan.
    assert all(r.matches(labels) for r in sel.requirements) is expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [("", True), ("!a", True), ("a notin (x)", True), ("a", False), ("a=b", False)],
)
def test_matches_none_labels_as_empty(text: str, expected: bool) -> None:
    assert parse_label_selector(text).matches(None) is expected


def test_empty_everything_and_nothing() -> None:
    assert EVERYTHING.is_empty() and parse_label_selector("").is_empty()
    assert EVERYTHING == LabelSelector(()) == parse_label_selector("")
    assert not parse_label_selector("a").is_empty()
    assert NOTHING.matches({}) is False and NOTHING.matches(None) is False
    assert NOTHING.is_empty() is False
    assert NOTHING.matches_nothing() and not EVERYTHING.matches_nothing()
    assert str(NOTHING) == ""
    assert NOTHING != EVERYTHING
    assert hash(parse_label_selector("a=b")) == hash(parse_label_selector("a=b"))


def test_equality_terms() -> None:
    sel = parse_label_selector("a=1,b==2,c in (3),d in (4,5),e!=6,f")
    assert sel.equality_terms == {"a": "1", "b": "2", "c": "3"}
    sel.equality_terms["z"] = "mutating the copy is harmless"
    assert "z" not in sel.equality_terms
    assert sel.requires_exact_match("a") == "1"
    assert sel.requires_exact_match("d") is None
    assert NOTHING.equality_terms == {}


@pytest.mark.parametrize(
    ("key", "operator", "values", "message"),
    [
        ("a", "bogus", (), 'operator: Unsupported value: "bogus": supported values: "in",'),
        ("a", "in", (), "for 'in', 'notin' operators, values set can't be empty"),
        ("a", "=", ("x", "y"), "exact-match compatibility requires one single value"),
        ("a", "exists", ("x",), "values set must be empty for exists and does not exist"),
        ("a", "gt", ("1", "2"), "for 'Gt', 'Lt' operators, exactly one value is required"),
        ("a b", "exists", (), 'key: Invalid value: "a b"'),
        ("a", "=", ("b c",), 'values[0][a]: Invalid value: "b c"'),
    ],
)
def test_requirement_validation(
    key: str, operator: str, values: tuple[str, ...], message: str
) -> None:
    with pytest.raises(SelectorError) as info:
        Requirement(key, operator, values)
    assert message in str(info.value)


def test_requirement_accepts_list_values_and_prints_sorted() -> None:
    req = Requirement("a", "in", ["z", "b"])  # type: ignore[arg-type]
    assert req.values == ("z", "b")
    assert str(req) == "a in (b,z)"
    assert req.matches({"a": "z"})


# ---- metav1.LabelSelector conversion ---------------------------------------------------


@pytest.mark.parametrize(
    ("sel", "text"),
    [
        ({}, ""),
        ({"matchLabels": {}, "matchExpressions": []}, ""),
        ({"matchLabels": None}, ""),
        ({"matchLabels": {"b": "2", "a": "1"}}, "a=1,b=2"),
        (
            {
                "matchLabels": {"app": "web"},
                "matchExpressions": [
                    {"key": "tier", "operator": "In", "values": ["b", "a"]},
                    {"key": "env", "operator": "NotIn", "values": ["prod"]},
                    {"key": "canary", "operator": "DoesNotExist"},
                    {"key": "zone", "operator": "Exists", "values": []},
                ],
            },
            "app=web,!canary,env notin (prod),tier in (a,b),zone",
        ),
    ],
)
def test_label_selector_from_dict(sel: dict[str, Any], text: str) -> None:
    converted = label_selector_from_dict(sel)
    assert str(converted) == text
    assert converted.matches_nothing() is False


def test_from_dict_none_is_nothing_and_empty_is_everything() -> None:
    assert label_selector_from_dict(None) is NOTHING
    assert label_selector_from_dict(None).matches({}) is False
    assert label_selector_from_dict({}).matches({}) is True
    assert label_selector_from_dict({}).is_empty()


def test_from_dict_semantics() -> None:
    sel = label_selector_from_dict(
        {
            "matchLabels": {"app": "web"},
            "matchExpressions": [{"key": "tier", "operator": "In", "values": ["a", "b"]}],
        }
    )
    assert sel.matches({"app": "web", "tier": "b"})
    assert not sel.matches({"app": "web", "tier": "c"})
    assert not sel.matches({"tier": "a"})


@pytest.mark.parametrize(
    ("sel", "message"),
    [
        (
            {"matchExpressions": [{"key": "a", "operator": "Foo"}]},
            '"Foo" is not a valid pod selector operator',
        ),
        ({"matchExpressions": [{"key": "a"}]}, "null is not a valid pod selector operator"),
        (
            {"matchExpressions": [{"key": "a", "operator": "Exists", "values": ["x"]}]},
            'matchExpressions[0].values: Invalid value: []string{"x"}: values set must be empty',
        ),
        (
            {"matchExpressions": [{"key": "a", "operator": "In", "values": []}]},
            "matchExpressions[0].values: Invalid value: []string{}: for 'in', 'notin' operators",
        ),
        (
            {"matchExpressions": [{"key": "a", "operator": "In"}]},
            "values set can't be empty",
        ),
        ({"matchLabels": {"a b": "c"}}, 'matchLabels.key: Invalid value: "a b"'),
        ({"matchLabels": {"a": "b c"}}, 'matchLabels.values[0][a]: Invalid value: "b c"'),
        (
            {"matchExpressions": [{"key": "", "operator": "Exists"}]},
            'matchExpressions[0].key: Invalid value: "": name part must be non-empty',
        ),
        ({"matchLabels": ["a"]}, "matchLabels: must be a map of strings"),
        ("a=b", "label selector must be an object"),
    ],
)
def test_label_selector_from_dict_errors(sel: Any, message: str) -> None:
    with pytest.raises(SelectorError) as info:
        label_selector_from_dict(sel)
    assert message in str(info.value)


@pytest.mark.parametrize(
    ("sel", "text"),
    [
        (None, "<none>"),
        ({}, "<none>"),
        ({"matchLabels": {"app": "web"}}, "app=web"),
        ({"matchExpressions": [{"key": "a", "operator": "Exists"}]}, "a"),
        ({"matchExpressions": [{"key": "a", "operator": "Bad"}]}, "<error>"),
    ],
)
def test_format_label_selector(sel: dict[str, Any] | None, text: str) -> None:
    assert format_label_selector(sel) == text


# ---- field selectors --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "terms", "canonical"),
    [
        ("", (), ""),
        ("metadata.name=x", (("metadata.name", "=", "x"),), "metadata.name=x"),
        ("metadata.name==x", (("metadata.name", "=", "x"),), "metadata.name=x"),
        (
            "status.phase!=Running,metadata.name=x",
            (("metadata.name", "=", "x"), ("status.phase", "!=", "Running")),
            "metadata.name=x,status.phase!=Running",
        ),
        ("a=", (("a", "=", ""),), "a="),
        ("a=x\\,y", (("a", "=", "x,y"),), "a=x\\,y"),
        ("a=x\\=y", (("a", "=", "x=y"),), "a=x\\=y"),
        ("a=x\\\\y", (("a", "=", "x\\y"),), "a=x\\\\y"),
        ("a=b,,", (("a", "=", "b"),), "a=b"),
    ],
)
def test_parse_field_selector(
    text: str, terms: tuple[tuple[str, str, str], ...], canonical: str
) -> None:
    sel = parse_field_selector(text)
    assert sel.terms == terms
    assert str(sel) == canonical
    assert parse_field_selector(str(sel)) == sel
    assert sel.is_empty() is (not terms)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("abc", "invalid selector: 'abc'; can't understand 'abc'"),
        ("a=x,y", "invalid selector: 'a=x,y'; can't understand 'y'"),
        ("a=b\\q", "invalid field selector: invalid escape sequence: \\q"),
        ("a=b\\", "invalid field selector: invalid escape sequence: \\"),
        ("a=b=c", "invalid field selector: unescaped character in value: '='"),
    ],
)
def test_parse_field_selector_errors(text: str, message: str) -> None:
    with pytest.raises(SelectorError, match=None) as info:
        parse_field_selector(text)
    assert str(info.value) == message


@pytest.mark.parametrize(
    ("text", "fields", "expected"),
    [
        ("", {}, True),
        ("metadata.name=x", {"metadata.name": "x"}, True),
        ("metadata.name=x", {"metadata.name": "y"}, False),
        ("spec.nodeName=", {}, True),
        ("spec.nodeName!=", {}, False),
        ("status.phase!=Running", {"status.phase": "Pending"}, True),
        ("status.phase!=Running", {"status.phase": "Running"}, False),
        ("status.phase!=Running", {}, True),
        ("a=1,b=2", {"a": "1", "b": "2"}, True),
        ("a=1,b=2", {"a": "1", "b": "3"}, False),
    ],
)
def test_field_selector_matches(text: str, fields: dict[str, str], expected: bool) -> None:
    assert parse_field_selector(text).matches(fields) is expected


def test_field_selector_exact_match() -> None:
    sel = parse_field_selector("metadata.name=x,metadata.namespace!=y")
    assert sel.requires_exact_match("metadata.name") == "x"
    assert sel.requires_exact_match("metadata.namespace") is None
    assert FieldSelector().is_empty()


@pytest.mark.parametrize(
    ("kind", "field", "supported"),
    [
        ("Pod", "spec.nodeName", True),
        ("Pod", "status.phase", True),
        ("Pod", "metadata.namespace", True),
        ("Pod", "spec.containers", False),
        ("Event", "involvedObject.uid", True),
        ("Event", "reportingComponent", True),
        ("Secret", "type", True),
        ("Namespace", "status.phase", True),
        ("Node", "spec.unschedulable", True),
        ("ConfigMap", "metadata.name", True),
        ("ConfigMap", "data.x", False),
        ("Widget", "metadata.namespace", True),
        ("Widget", "spec.size", False),
    ],
)
def test_supported_fields(kind: str, field: str, supported: bool) -> None:
    assert (field in supported_fields(kind)) is supported
    sel = parse_field_selector(f"{field}=x")
    if supported:
        check_field_selector(sel, kind)
    else:
        with pytest.raises(SelectorError) as raised:
            check_field_selector(sel, kind, custom=kind == "Widget")
        if kind in ("Pod", "Node", "Widget"):  # own conversions (custom: apiextensions')
            assert str(raised.value) == f"field label not supported: {field}"
        else:  # apimachinery's default conversion
            assert str(raised.value) == (
                f'"{field}" is not a known field selector: only "metadata.name", '
                '"metadata.namespace"'
            )


def test_unsupported_field_label_messages_follow_each_kinds_conversion() -> None:
    assert unsupported_field_label("", "Secret", "x") == "field label not supported: x"
    assert unsupported_field_label("batch", "Job", "x") == (
        'field label "x" not supported for batchv1.Job'
    )
    assert unsupported_field_label("apps", "StatefulSet", "x").startswith(
        '"x" is not a known field selector'
    )
    assert unsupported_field_label("a.io", "Widget", "x", custom=True) == (
        "field label not supported: x"
    )


def test_object_fields_pod() -> None:
    pod = {
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "ns"},
        "spec": {
            "nodeName": "n1",
            "restartPolicy": "Always",
            "serviceAccountName": "sa",
            "hostNetwork": True,
        },
        "status": {"phase": "Running", "podIPs": [{"ip": "10.0.0.2"}], "podIP": "10.0.0.1"},
    }
    assert object_fields(pod) == {
        "metadata.name": "p",
        "metadata.namespace": "ns",
        "spec.nodeName": "n1",
        "spec.restartPolicy": "Always",
        "spec.schedulerName": "",
        "spec.serviceAccountName": "sa",
        "spec.hostNetwork": "true",
        "status.phase": "Running",
        "status.podIP": "10.0.0.2",
        "status.nominatedNodeName": "",
    }
    bare = object_fields({"kind": "Pod", "metadata": {"name": "p"}, "status": {"podIP": "1.2.3.4"}})
    assert bare["metadata.namespace"] == "" and bare["spec.nodeName"] == ""
    assert bare["spec.hostNetwork"] == "false" and bare["status.podIP"] == "1.2.3.4"
    assert parse_field_selector("spec.nodeName=n1,status.phase!=Pending").matches(
        object_fields(pod)
    )


def test_object_fields_event() -> None:
    event = {
        "kind": "Event",
        "metadata": {"name": "e", "namespace": "ns"},
        "involvedObject": {
            "kind": "Pod",
            "name": "p",
            "namespace": "ns",
            "uid": "u1",
            "apiVersion": "v1",
        },
        "reason": "Started",
        "type": "Normal",
        "reportingComponent": "kubelet",
    }
    fields = object_fields(event)
    assert fields["involvedObject.kind"] == "Pod"
    assert fields["involvedObject.uid"] == "u1"
    assert fields["involvedObject.fieldPath"] == ""
    assert fields["reason"] == "Started" and fields["type"] == "Normal"
    assert fields["source"] == "kubelet"  # falls back to the reporting controller
    event["source"] = {"component": "scheduler"}
    assert object_fields(event)["source"] == "scheduler"
    new_style = {
        "kind": "Event",
        "metadata": {"name": "e"},
        "regarding": {"name": "x"},
        "reportingController": "c",
    }
    assert object_fields(new_style)["involvedObject.name"] == "x"
    assert object_fields(new_style)["reportingComponent"] == "c"
    assert set(fields) == supported_fields("Event")


@pytest.mark.parametrize(
    ("obj", "field", "value"),
    [
        ({"kind": "Secret", "metadata": {"name": "s"}, "type": "Opaque"}, "type", "Opaque"),
        ({"kind": "Secret", "metadata": {"name": "s"}}, "type", ""),
        (
            {"kind": "Namespace", "metadata": {"name": "n"}, "status": {"phase": "Active"}},
            "status.phase",
            "Active",
        ),
        (
            {"kind": "Node", "metadata": {"name": "n"}, "spec": {"unschedulable": True}},
            "spec.unschedulable",
            "true",
        ),
        ({"kind": "Node", "metadata": {"name": "n"}}, "spec.unschedulable", "false"),
        (
            {"kind": "ConfigMap", "metadata": {"name": "c", "namespace": "d"}},
            "metadata.namespace",
            "d",
        ),
        ({"kind": "ConfigMap"}, "metadata.name", ""),
    ],
)
def test_object_fields_other_kinds(obj: dict[str, Any], field: str, value: str) -> None:
    fields = object_fields(obj)
    assert fields[field] == value
    assert set(fields) == supported_fields(str(obj["kind"]))


# ---- shared string validators -------------------------------------------------------------


def test_validator_messages_match_upstream() -> None:
    assert validation.dns1123_label_errors("my-name") == ()
    assert validation.dns1123_label_errors("a.b") == ("must not contain dots",)
    assert validation.dns1123_label_errors("Foo") == (
        "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
        "and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', "
        "regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
    )
    assert (
        validation.dns1123_subdomain_errors("a" * 254)[0] == "must be no more than 253 characters"
    )
    assert validation.dns1123_subdomain_errors("example.com\n") != ()
    assert validation.qualified_name_errors("example.com/MyName") == ()
    assert validation.qualified_name_errors("") == (
        "name part must be non-empty",
        "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and "
        "end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex "
        "used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
    )
    assert validation.label_value_errors("") == ()
    assert validation.label_value_errors("a_b.c-D") == ()
    assert validation.label_value_errors("a\n") != ()


@pytest.mark.parametrize(
    "fn",
    [
        validation.dns1123_label_errors,
        validation.dns1123_subdomain_errors,
        validation.qualified_name_errors,
        validation.label_value_errors,
    ],
)
def test_validators_are_memoized_and_immutable(fn: Any) -> None:
    value = "Not Valid/At/All"
    first = fn(value)
    assert isinstance(first, tuple) and first
    hits = fn.cache_info().hits
    assert fn(value) is first
    assert fn.cache_info().hits == hits + 1
    assert fn.cache_info().maxsize == validation.VALIDATOR_CACHE_SIZE


@pytest.mark.parametrize(
    ("name", "home"),
    [
        ("qualified_name_errors", validation),
        ("label_value_errors", validation),
        ("dns1123_label_errors", validation),
        ("dns1123_subdomain_errors", validation),
        ("VALIDATOR_CACHE_SIZE", validation),
    ],
)
def test_moved_names_still_resolve_with_a_deprecation_warning(name: str, home: ModuleType) -> None:
    new = f"{home.__name__}.{name}"
    with pytest.warns(
        DeprecationWarning, match=rf"kube_runtime\.selectors\.{name} moved to {new};"
    ):
        value = getattr(selectors, name)
    assert value is getattr(home, name)


def test_other_missing_names_are_attribute_errors() -> None:
    with pytest.raises(AttributeError, match="has no attribute 'nope'"):
        getattr(selectors, "nope")  # noqa: B009
