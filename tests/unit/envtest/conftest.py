"""The embedded cluster's unit tests: most build a :class:`~kube_runtime.envtest.server.Store`
in process; the e2e tests in ``tests/e2e`` talk HTTP to a running one."""
