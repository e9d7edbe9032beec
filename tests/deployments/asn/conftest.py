"""Fixtures of the ASN API tests: a tiny generated dataset, and the real Debian snapshot."""

from __future__ import annotations

import subprocess
from pathlib import Path

import httpx
import pytest
from pydantic import SecretStr

from deployments.asn.config import AsnConfig, RateLimitConfig
from tests.conftest import ROOT, in_ci
from tests.deployments.asn.tinydata import PREFIX_FILE, write_dataset

API_KEY = "3f1c9a7e5b2d4f608e1a9c3b5d7f9e2a4c6b8d0f1e3a5c7b"  # test-only key, 48 hex like the generated one
REAL_PKG = ROOT / "var" / "asn" / "pkg"
REAL_DB = ROOT / "var" / "asn" / "asn.duckdb"


@pytest.fixture
def tiny_pkg(tmp_path: Path) -> Path:
    return write_dataset(tmp_path / "pkg")


def tiny_config(tmp_path: Path, pkg: Path, **rate: object) -> AsnConfig:
    return AsnConfig(
        data_dir=tmp_path / "data",
        pkg_dir=pkg,
        prefix_file=PREFIX_FILE,
        fetch_on_start=False,
        api_key=SecretStr(API_KEY),
        rate_limit=RateLimitConfig(**rate),
    )


@pytest.fixture(scope="session")
def real_pkg() -> Path:
    """The python3-pyasn package, fetched once by the project's script (cached under var/)."""
    result = subprocess.run(
        ["bash", str(ROOT / "scripts" / "fetch-asn-data.sh"), str(REAL_PKG)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    if result.returncode != 0:
        message = f"fetch-asn-data.sh failed ({result.returncode}): {result.stderr[-2000:]}"
        if in_ci():
            pytest.fail(message)
        pytest.skip(message)
    return Path(result.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="session")
def real_db(real_pkg: Path) -> Path:
    from deployments.asn import dataset, loader

    loader.ensure_database(REAL_DB, dataset.locate(REAL_PKG))
    return REAL_DB


@pytest.fixture(scope="session")
def real_store(real_db: Path):
    from deployments.asn.store import AsnStore

    store = AsnStore(real_db)
    yield store
    store.close()


def client_for(app, ip: str = "203.0.113.9", root_path: str = "") -> httpx.AsyncClient:
    """An in-process client whose requests come from the socket address `ip`."""
    transport = httpx.ASGITransport(app=app, client=(ip, 40000), root_path=root_path)
    return httpx.AsyncClient(transport=transport, base_url="http://asn.test")
