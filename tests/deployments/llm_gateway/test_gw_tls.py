"""``server.tls`` on the gateway's direct listener: HTTPS with the configured minimum version, and
settings the gateway cannot apply refuse the start with a message naming the setting."""

from __future__ import annotations

import ssl

import httpx
import pytest
from pydantic import ValidationError

from deployments.llm_gateway.app import create_app
from deployments.llm_gateway.config import GatewayConfig
from deployments.llm_gateway.deployment import direct_spec
from rayfleet.direct import DirectServer
from tests.conftest import free_port
from tests.deployments.llm_gateway.conftest import base_config
from tests.rayfleet.test_direct import _cert


def tls_config(tmp_path, tls, listener=True):
    return base_config(tmp_path, {}, server={"port": free_port(), "listener": {"enabled": listener}, "tls": tls})


async def test_the_direct_listener_speaks_tls_at_the_minimum_version(tmp_path, auth_env):
    cert, key = _cert(tmp_path)
    config = GatewayConfig.model_validate(
        tls_config(tmp_path, {"enabled": True, "cert_file": cert, "key_file": key, "min_version": "1.3"})
    )
    spec = direct_spec(config)
    assert spec is not None
    server = DirectServer(create_app(config), spec)
    await server.start()
    try:
        assert server.url.startswith("https://")
        good = ssl.create_default_context(cafile=cert)
        async with httpx.AsyncClient(verify=good, trust_env=False) as c:
            assert (await c.get(server.url + "/health")).status_code == 200
        old = ssl.create_default_context(cafile=cert)
        old.maximum_version = ssl.TLSVersion.TLSv1_2  # below the configured minimum: no handshake
        async with httpx.AsyncClient(verify=old, trust_env=False) as c:
            with pytest.raises(httpx.ConnectError):
                await c.get(server.url + "/health")
        async with httpx.AsyncClient(trust_env=False) as c:  # plain HTTP on the TLS port gets nothing useful
            with pytest.raises(httpx.HTTPError):
                await c.get(server.url.replace("https://", "http://") + "/health")
    finally:
        await server.stop()


@pytest.mark.parametrize(
    ("tls", "listener", "message"),
    [
        ({"enabled": True}, True, "server.tls.enabled needs cert_file and key_file"),
        ({"enabled": True, "cert_file": "CERT"}, True, "server.tls.enabled needs cert_file and key_file"),
        ({"enabled": True, "cert_file": "CERT", "key_file": "KEY", "min_version": "1.0"}, True, "min_version"),
        ({"min_version": "1.1"}, True, "min_version"),
        ({"enabled": True, "cert_file": "CERT", "key_file": "KEY"}, False, "server.listener.enabled"),
        ({"enabled": True, "cert_file": "/nonexistent/c.pem", "key_file": "/nonexistent/k.pem"}, True, "cannot load"),
        ({"enabled": True, "cert_file": "KEY", "key_file": "CERT"}, True, "cannot load"),
    ],
)
def test_tls_settings_it_cannot_apply_refuse_the_start(tmp_path, tls, listener, message):
    cert, key = _cert(tmp_path)
    tls = {k: (cert if v == "CERT" else key if v == "KEY" else v) for k, v in tls.items()}
    with pytest.raises(ValidationError, match=message):
        GatewayConfig.model_validate(tls_config(tmp_path, tls, listener))
