"""Request bodies within kube-apiserver's limits (:mod:`.bodylimits`) and the JSON types of the
built-in kinds (:mod:`.shapes`), and the store's refusal to commit what cannot be read back."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from kube_runtime.envtest.server import bodylimits, shapes
from kube_runtime.envtest.server.errors import ApiError
from kube_runtime.envtest.server.resources import Registry
from kube_runtime.envtest.server.storage import Store


def _error(fn: Any, *args: Any) -> ApiError:
    with pytest.raises(ApiError) as info:
        fn(*args)
    return info.value


def _nest(depth: int) -> bytes:
    return b"[" * depth + b"]" * depth


# ------------------------------------------------------------------------------- JSON


def test_json_within_the_limits_decodes_unchanged() -> None:
    body = b'{"a": [1, 2.5, "x", true, null], "b": {"c": 18446744073709551615}}'
    assert bodylimits.decode_json(body, "ConfigMap") == orjson.loads(body)


def test_nesting_past_the_limit_is_a_bad_request_in_kube_apiservers_words() -> None:
    assert bodylimits.decode_json(_nest(bodylimits.MAX_DEPTH), "X") == orjson.loads(
        _nest(bodylimits.MAX_DEPTH)
    )
    for depth in (bodylimits.MAX_DEPTH + 1, 1_100, 10_001, 100_000):
        err = _error(bodylimits.decode_json, _nest(depth), "ConfigMap")
        assert err.code == 400 and err.reason == "BadRequest"
        assert "(must be of type ConfigMap)" in str(err.status["message"])
        assert "exceeded max depth" in str(err.status["message"])


def test_wide_bodies_with_many_brackets_are_not_too_deep() -> None:
    body = b"[" + b",".join([b"[[1]]"] * 500) + b"]"
    assert len(bodylimits.decode_json(body, "X")) == 500


def test_lone_surrogates_and_invalid_utf8_become_replacement_characters() -> None:
    body = b'{"a": "x\\ud800y", "b\\udc00": "\xff", "c": "\\ud83d\\ude00"}'
    assert bodylimits.decode_json(body, "X") == {"a": "x\ufffdy", "b\ufffd": "\ufffd", "c": "😀"}


def test_lenient_path_keeps_the_depth_limit_and_refuses_non_finite_numbers() -> None:
    deep = b'{"a": "\\ud800", "b": ' + _nest(bodylimits.MAX_DEPTH + 5) + b"}"
    assert "exceeded max depth" in str(_error(bodylimits.decode_json, deep, "X").status["message"])
    err = _error(bodylimits.decode_json, b'{"a": "\\ud800", "b": NaN}', "X")
    assert err.code == 400


def test_integers_past_64_bits_are_floats_and_infinity_is_refused() -> None:
    assert bodylimits.decode_json(b'{"a": 99999999999999999999999}', "X") == {"a": 1e23}
    assert _error(bodylimits.decode_json, b'{"a": 1e400}', "X").code == 400


def test_empty_and_oversized_bodies() -> None:
    err = _error(bodylimits.decode_json, b"", "ConfigMap")
    assert err.code == 400 and "unexpected end of JSON input" in str(err.status["message"])
    big = b'"' + b"x" * bodylimits.MAX_BODY_BYTES + b'"'
    for decode in (bodylimits.decode_json, bodylimits.decode_yaml):
        err = _error(decode, big, "ConfigMap")
        assert err.code == 413 and err.reason == "RequestEntityTooLarge"
        assert err.status["message"] == "Request entity too large: limit is 3145728"


# ------------------------------------------------------------------------------- YAML


def test_yaml_becomes_json_compatible_data() -> None:
    body = (
        b"a: 99999999999999999999999\n"
        b"b: 1" + b"0" * 400 + b"\n"
        b"c: 2020-01-02\n"
        b"2: two\n"
        b"true: yes\n"
        b"~: nothing\n"
        b"s: !!set {x, y}\n"
    )
    data = bodylimits.decode_yaml(body, "X")
    assert data["a"] == 1e23
    assert data["b"] == "1" + "0" * 400
    assert data["c"] == "2020-01-02"
    assert data["2"] == "two" and data["true"] is True and data["null"] == "nothing"
    assert data["s"] == {"x": None, "y": None}
    orjson.dumps(data)


@pytest.mark.parametrize(
    ("body", "words"),
    [
        (b'a: "\\ud800"\n', "invalid Unicode character escape code"),
        (b"a: .inf\n", "unsupported value: +Inf"),
        (b"a: .nan\n", "unsupported value: NaN"),
        (b"a: " + _nest(bodylimits.MAX_DEPTH + 1) + b"\n", "exceeded max depth"),
        (b"a: " + _nest(5_000) + b"\n", "exceeded max depth"),
        (b"a: [\n", "could not be decoded"),
    ],
)
def test_yaml_that_json_cannot_hold_is_a_bad_request(body: bytes, words: str) -> None:
    err = _error(bodylimits.decode_yaml, body, "Widget")
    assert err.code == 400 and words in str(err.status["message"])


# ----------------------------------------------------------------------------- shapes


@pytest.mark.parametrize(
    ("group", "kind", "obj", "message", "field"),
    [
        (
            "",
            "Pod",
            {"spec": {"containers": "x"}},
            "json: cannot unmarshal string into Go struct field PodSpec.spec.containers "
            "of type []v1.Container",
            "spec.containers",
        ),
        (
            "",
            "Pod",
            {"spec": {"containers": [{"ports": [{"containerPort": "80"}]}]}},
            "json: cannot unmarshal string into Go struct field "
            "ContainerPort.spec.containers.ports.containerPort of type int32",
            "spec.containers[0].ports[0].containerPort",
        ),
        (
            "apps",
            "StatefulSet",
            {"spec": {"replicas": 2.0}},
            "json: cannot unmarshal number 2.0 into Go struct field StatefulSetSpec.spec.replicas "
            "of type int32",
            "spec.replicas",
        ),
        (
            "",
            "ConfigMap",
            {"metadata": {"generation": 2**64}},
            "json: cannot unmarshal number 18446744073709551616 into Go struct field "
            "ObjectMeta.metadata.generation of type int64",
            "metadata.generation",
        ),
        (
            "apiextensions.k8s.io",
            "CustomResourceDefinition",
            {
                "spec": {
                    "versions": [
                        {"schema": {"openAPIV3Schema": {"properties": {"a": {"items": 5}}}}}
                    ]
                }
            },
            "json: cannot unmarshal number 5 into Go struct field "
            "JSONSchemaProps.spec.versions.schema.openAPIV3Schema.properties.a.items "
            "of type v1.JSONSchemaPropsOrArray",
            "spec.versions[0].schema.openAPIV3Schema.properties.a.items",
        ),
    ],
)
def test_a_value_of_the_wrong_type_is_named_as_gos_decoder_names_it(
    group: str, kind: str, obj: Any, message: str, field: str
) -> None:
    found = shapes.mismatch(group, kind, obj)
    assert found is not None
    assert found.message() == message
    assert found.field == field
    err = _error(shapes.check_object, group, "v1", kind, obj)
    assert err.code == 400 and err.reason == "BadRequest"
    assert (
        err.status["message"] == f'{kind} in version "v1" cannot be handled as a {kind}: {message}'
    )
    assert err.status["details"]["causes"][0]["field"] == field


def test_valid_objects_nulls_and_unknown_fields_pass() -> None:
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "labels": {"a": "b"}, "generation": None},
        "spec": {
            "containers": [
                {
                    "name": "c",
                    "image": "i",
                    "resources": {"limits": {"cpu": "500m", "memory": 1024}},
                    "livenessProbe": {"httpGet": {"port": "http"}},
                }
            ],
            "unknown": {"anything": [1, "x"]},
        },
    }
    assert shapes.mismatch("", "Pod", pod) is None
    schema = {"items": [{"type": "string"}], "additionalProperties": False}
    crd = {"spec": {"versions": [{"schema": {"openAPIV3Schema": schema}}]}}
    assert shapes.mismatch("apiextensions.k8s.io", "CustomResourceDefinition", crd) is None


def test_null_items_decode_to_zero_values() -> None:
    obj: dict[str, Any] = {
        "metadata": {"finalizers": [None], "labels": {"a": None}},
        "spec": {"containers": [None]},
    }
    assert shapes.mismatch("", "Pod", obj) is None
    assert obj == {
        "metadata": {"finalizers": [""], "labels": {"a": ""}},
        "spec": {"containers": [{}]},
    }


def test_quantities_and_int_or_strings() -> None:
    bad = {"spec": {"containers": [{"resources": {"requests": {"cpu": "lots"}}}]}}
    found = shapes.mismatch("", "Pod", bad)
    assert found is not None and "quantities must match" in found.message()
    probe = {"spec": {"containers": [{"readinessProbe": {"tcpSocket": {"port": 1.5}}}]}}
    assert shapes.mismatch("", "Pod", probe) is not None


def test_custom_objects_get_their_type_meta_and_metadata_checked_only() -> None:
    assert shapes.mismatch("x.io", "Widget", {"spec": "anything"}, custom=True) is None
    assert shapes.mismatch("x.io", "Widget", {"metadata": "x"}, custom=True) is not None
    err = _error(lambda: shapes.check_object("x.io", "v1", "Widget", {"kind": 5}, custom=True))
    assert "cannot unmarshal number into Go struct field .kind of type string" in str(
        err.status["message"]
    )
    err = _error(shapes.check_object, "", "v1", "ConfigMap", [1])
    assert err.code == 400 and "cannot unmarshal array into Go value" in str(err.status["message"])


def test_delete_options_types() -> None:
    shapes.check_delete_options({"propagationPolicy": "Orphan", "preconditions": {"uid": "u"}})
    err = _error(shapes.check_delete_options, {"gracePeriodSeconds": "x"})
    assert err.code == 400
    assert "DeleteOptions.gracePeriodSeconds of type int64" in str(err.status["message"])


# ------------------------------------------------------------------------------ store


def _configmaps(store: Store) -> Any:
    info = store.registry.by_key("", "configmaps")
    assert info is not None
    return info


def test_the_store_commits_nothing_it_cannot_encode_or_etcd_would_refuse() -> None:
    store = Store(Registry())
    info = _configmaps(store)
    ns = store.registry.by_key("", "namespaces")
    assert ns is not None
    store.create(ns, None, {"metadata": {"name": "n"}})
    rv = store.resource_version
    bad = {"metadata": {"name": "a"}, "data": {"k": "v"}, "x": 2**70}
    err = _error(store.create, info, "n", bad)
    assert err.code == 500
    big = {"metadata": {"name": "b"}, "data": {"k": "x" * bodylimits.MAX_OBJECT_BYTES}}
    err = _error(store.create, info, "n", big)
    assert err.code == 413 and err.status["message"] == "etcdserver: request is too large"
    assert store.resource_version == rv
    assert store.list(info, "n").items == []
    store.create(info, "n", {"metadata": {"name": "ok"}})
    assert [s.meta["name"] for s in store.list(info, "n").items] == ["ok"]
    assert store.resource_version == rv + 1


def test_status_can_be_left_out_where_the_stored_one_is_kept() -> None:
    obj = {"spec": {"containers": []}, "status": {"conditions": "x"}}
    assert shapes.mismatch("", "Pod", obj) is not None
    assert shapes.mismatch("", "Pod", obj, status=False) is None


def test_a_wide_body_with_many_brackets_is_measured_not_refused() -> None:
    body = orjson.dumps({"metadata": {"name": "x"}, "f": [{"a": [{}]} for _ in range(300)]})
    assert len(bodylimits.decode_json(body, "X")["f"]) == 300
    deep = orjson.loads(_nest(bodylimits.MAX_DEPTH - 1))
    assert bodylimits.decode_json(orjson.dumps({"a": deep}), "X") == {"a": deep}
    too_deep = orjson.dumps({"a": orjson.loads(_nest(bodylimits.MAX_DEPTH))})
    assert _error(bodylimits.decode_json, too_deep, "X").code == 400
