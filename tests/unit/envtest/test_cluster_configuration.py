"""The embedded cluster's own controllers connect with the settings of
``EmbeddedCluster.configuration()``, without building a kubernetes Configuration up front."""

from __future__ import annotations

import pytest

from kube_runtime.client import config as client_config
from kube_runtime.envtest.cluster import EmbeddedCluster, _controllers_settings

#: What the framework's Client reads of a Configuration when it is built and on a request.
_READ = (
    "host", "verify_ssl", "ssl_ca_cert", "cert_file", "key_file", "ca_cert_data",
    "assert_hostname", "tls_server_name", "proxy", "proxy_headers", "no_proxy",
    "proxy_ssl_context", "socket_options", "retries", "username", "password",
    "refresh_api_key_hook", "connection_pool_maxsize",
)  # fmt: skip


@pytest.mark.parametrize("tls", [True, False])
def test_the_controllers_settings_are_the_clusters_configuration(tls: bool) -> None:
    cluster = EmbeddedCluster(deployments=False, tls=tls)
    cluster.start()
    try:
        real = cluster.configuration()
        light = _controllers_settings(cluster)
        for name in _READ:
            assert getattr(light, name) == getattr(real, name), name
        for identifier, alias in (("BearerToken", "authorization"), ("authorization", None)):
            assert light.get_api_key_with_prefix(identifier, alias) == (
                real.get_api_key_with_prefix(identifier, alias)
            )
        assert light.get_api_key_with_prefix("BearerToken") is None
        assert light.get_basic_auth_token() == real.get_basic_auth_token()
        assert client_config.pool_manager(light).connection_pool_kw == (
            client_config.pool_manager(real).connection_pool_kw
        )
        assert client_config.Credentials(light).header() == client_config.Credentials(real).header()
        # Anything else is the real Configuration's, built when first asked for.
        assert light.api_key == real.api_key
        assert light.auth_settings() == real.auth_settings()
    finally:
        cluster.stop()
