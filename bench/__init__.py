"""Benchmarks for the embedded Kubernetes API server (``python -m bench``).

See :mod:`bench.embedded_server` for the scenarios and ``bench/BENCHMARKS.md`` for results.
"""
