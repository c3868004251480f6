"""The README's "what the cache keeps" block, run as written against the test cluster."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kube_runtime import kinds

README = Path(__file__).resolve().parents[2] / "README.md"
MARKER = "<!-- readme:cache-options -->\n```python\n"


def test_the_readme_block_configures_the_cache(client: Any, namespace: str) -> None:
    block = README.read_text().split(MARKER, 1)[1].split("```", 1)[0]
    scope: dict[str, Any] = {"client": client}
    exec(compile(block, "README.md", "exec"), scope)
    manager = scope["manager"]
    client.create(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "p", "namespace": namespace, "labels": {"a": "b"}},
            "spec": {"containers": [{"name": "c", "image": "nginx"}]},
        }
    )
    try:
        manager.cache.start()
        pod = manager.client.get(kinds.Pod, "p", namespace)
        assert set(pod) == {"apiVersion", "kind", "metadata"}
        assert pod["metadata"]["labels"] == {"a": "b"}
        assert not manager.client.is_cached(kinds.Secret)
    finally:
        manager.cache.stop()
