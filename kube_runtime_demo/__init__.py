"""The quick start's demo (``make run`` = ``kube-runtime demo``): the bundled controllers on
a fresh embedded cluster (:mod:`kube_runtime_demo.demo`).

It sits above both what it puts together -- the bundled controllers (:mod:`controllers`) and
the test cluster (:mod:`kube_runtime.envtest`) -- so neither imports the other (the
import-linter contracts in ``pyproject.toml``). Nothing imports it: ``kube-runtime demo``
finds it by entry point (group ``kube_runtime.commands``).
"""

__all__ = ["demo"]
