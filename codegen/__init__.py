"""CRD manifest -> typed pydantic v2 models.

``generate(sources, versions=None) -> str`` builds the module text from
:class:`~codegen.sources.Source` s (``from_file``, ``from_text``, ``from_cluster``);
``codegen.cli.main(argv)`` is the command (``kube-runtime codegen``, ``python -m codegen``).
Generated classes derive from :class:`kube_runtime.models.KubeModel`; a resource class carries
``__kube_resource__`` (its API coordinates: the framework's client reads and writes it with no
registration) and ``__crd__`` (a :class:`kube_runtime.models.crd.Config`: what else its CRD says, which
``kube-runtime crd generate`` reads back).
"""

from codegen.generator import generate
from codegen.sources import CrdError, Source, from_cluster, from_file, from_text

__all__ = ["CrdError", "Source", "from_cluster", "from_file", "from_text", "generate"]
