"""Image digests of the simulated kubelet (:mod:`kube_runtime.envtest.kubelet.images`): the
``--image-digest`` / ``--image-digests`` declarations of ``kube-runtime cluster`` and
``kube-runtime kubelet``, and the imageID a container reports from them."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from kube_runtime.envtest import cli
from kube_runtime.envtest.kubelet import images, runner
from kube_runtime.envtest.kubelet.images import (
    ImageDigestError,
    declared_image_id,
    image_id,
    is_digest,
    load_image_digests,
    parse_image_digest,
    repository,
)

D1 = "sha256:" + "a" * 64
D2 = "sha256:" + "0123456789abcdef" * 4


def test_parse_image_digest() -> None:
    assert parse_image_digest(f"nginx:alpine={D1}") == ("nginx:alpine", D1)
    assert parse_image_digest(f"registry:5000/ns/app:1.2={D2}") == ("registry:5000/ns/app:1.2", D2)
    assert parse_image_digest(f" nginx = {D1} ") == ("nginx", D1)


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("nginx:alpine", "expected IMAGE=DIGEST"),
        (f"={D1}", "the image must be a non-empty string"),
        ("nginx:alpine=", "must be a string like sha256:"),
        ("nginx:alpine=sha256:abc", "'sha256:abc' is not a digest"),
        ("nginx:alpine=sha256:" + "A" * 64, "is not a digest"),  # upper-case hex
        ("nginx:alpine=" + "a" * 64, "is not a digest"),  # no algorithm
        (f"nginx alpine={D1}", "is not an image reference"),
    ],
)
def test_malformed_image_digest_is_refused_with_the_reason(text: str, why: str) -> None:
    with pytest.raises(ImageDigestError, match=why) as raised:
        parse_image_digest(text)
    assert repr(text) in str(raised.value)  # names the value given


def test_digests() -> None:
    assert is_digest(D1) and is_digest("sha512:" + "f" * 128)
    assert is_digest("blake3:" + "b" * 64)  # another OCI algorithm
    assert not is_digest("sha256:" + "a" * 63) and not is_digest("sha512:" + "f" * 64)
    assert not is_digest("nginx:alpine")


def test_repository_drops_tag_and_digest_only() -> None:
    assert repository("nginx:alpine") == "nginx"
    assert repository("nginx") == "nginx"
    assert repository("registry:5000/ns/app:1.2") == "registry:5000/ns/app"
    assert repository("registry:5000/ns/app") == "registry:5000/ns/app"
    assert repository(f"nginx@{D1}") == "nginx"


def test_declared_image_id() -> None:
    digests = {"nginx:alpine": D1, "nginx:mainline-alpine": D1, "nginx:b": "nginx:alpine"}
    same = f"docker-pullable://nginx@{D1}"
    assert declared_image_id("nginx:alpine", digests) == same
    assert declared_image_id("nginx:mainline-alpine", digests) == same  # two tags, one image
    assert declared_image_id("nginx:b", digests) == same  # an alias of a declared image
    assert declared_image_id("nginx:c", digests) is None
    assert declared_image_id("x:1", {"x:1": "x:0"}) == image_id("x:0")  # alias, undeclared
    assert declared_image_id("a", {"a": "b", "b": "a"}) is None  # a cycle declares nothing


def test_load_image_digests_yaml_and_json(tmp_path: Path) -> None:
    yml = tmp_path / "d.yaml"
    yml.write_text(f"nginx:alpine: {D1}\n'nginx:mainline-alpine': {D1}\n")
    assert load_image_digests(yml) == {"nginx:alpine": D1, "nginx:mainline-alpine": D1}
    js = tmp_path / "d.json"
    js.write_text(f'{{"redis:7": "{D2}"}}')
    assert load_image_digests(js) == {"redis:7": D2}
    empty = tmp_path / "empty.yaml"
    empty.write_text("")
    assert load_image_digests(empty) == {}


@pytest.mark.parametrize(
    ("content", "why"),
    [
        ("- nginx\n", "expected a mapping of image to digest, got list"),
        ("nginx: [1\n", "not YAML or JSON"),
        ("nginx:alpine: sha256:abc\n", "key \"nginx:alpine\": 'sha256:abc' is not a digest"),
        ("nginx:alpine: 5\n", "the digest of 'nginx:alpine' must be a string"),
        (f"1: {D1}\n", "the image must be a non-empty string, got 1"),
    ],
)
def test_malformed_image_digests_file(tmp_path: Path, content: str, why: str) -> None:
    path = tmp_path / "d.yaml"
    path.write_text(content)
    with pytest.raises(ImageDigestError, match=why) as raised:
        load_image_digests(path)
    assert str(path) in str(raised.value)


def test_missing_image_digests_file(tmp_path: Path) -> None:
    with pytest.raises(ImageDigestError, match="cannot read it: No such file"):
        load_image_digests(tmp_path / "absent.yaml")


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="t", exit_on_error=False)
    images.add_arguments(p)
    return p


def test_arguments_files_in_order_then_flags(tmp_path: Path) -> None:
    first, second = tmp_path / "1.yaml", tmp_path / "2.json"
    first.write_text(f"a:1: {D1}\nb:1: {D1}\n")
    second.write_text(f'{{"b:1": "{D2}"}}')
    p = _parser()
    files = ["--image-digests", str(first), "--image-digests", str(second)]
    args = p.parse_args([*files, "--image-digest", f"a:1={D2}", "--image-digest", f"c:1={D1}"])
    assert images.from_arguments(p, args) == {"a:1": D2, "b:1": D2, "c:1": D1}
    assert images.from_arguments(p, p.parse_args([])) == {}


@pytest.mark.parametrize("parser", [cli._cluster_parser, runner._parser])
def test_commands_refuse_a_malformed_digest_with_exit_code_2(
    parser, capsys: pytest.CaptureFixture[str]
) -> None:
    p = parser()
    with pytest.raises(SystemExit) as raised:
        p.parse_args(["--image-digest", "nginx:alpine=sha256:abc"])
    assert raised.value.code == 2
    assert "argument --image-digest: 'sha256:abc' is not a digest" in capsys.readouterr().err


def test_cluster_command_refuses_a_malformed_file_before_serving(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "d.yaml"
    path.write_text("[]\n")
    with pytest.raises(SystemExit) as raised:
        cli.cluster_main(["--image-digests", str(path), "--kubeconfig", str(tmp_path / "kc")])
    assert raised.value.code == 2
    assert "expected a mapping of image to digest" in capsys.readouterr().err
    assert not (tmp_path / "kc").exists()
