"""kube-runtime: a controller-runtime-style framework for Kubernetes controllers in Python."""

__version__ = "0.1.0"
