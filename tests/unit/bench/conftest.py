"""Unit tests of the benchmark harness (``bench/``): its parsing, charts and invariants, never
its timings."""
