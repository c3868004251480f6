"""The bundled controllers' unit tests, on the FakeClient harnesses of ``tests/support``
(``statefulset_harness``, ``cloneset_harness``)."""
