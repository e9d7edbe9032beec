"""Tier 1: an operator's own pyasn-format snapshot replaces the package's (config `prefix_path`).

The file is generated here in the format `pyasn_util_convert.py` writes (a `;` header naming
the RIB, then `prefix<TAB>asn` lines), plain text rather than gzip, with a date only in its
header, and given through the environment the way an operator would (`ASN__PREFIX_PATH`).
"""

from __future__ import annotations

from pathlib import Path

from deployments.asn import loader
from deployments.asn.app import create_app
from deployments.asn.config import load
from tests.deployments.asn.conftest import API_KEY, client_for

KEY = {"X-API-Key": API_KEY}


def write_snapshot(path: Path, rib: str, rows: list[tuple[str, int]]) -> Path:
    header = f"; IP-ASN32-DAT file\n; Original file : {rib}\n; Converted on  : Fri Mar  1 08:00:00 2024\n; CIDRs=x\n;\n"
    path.write_text(header + "".join(f"{p}\t{a}\n" for p, a in rows), encoding="utf-8")
    return path


def operator_app(tmp_path: Path, pkg: Path, snapshot: Path, fetch: bool = False):
    environ = {
        "API_SECRET_KEY": API_KEY,
        "ASN__DATA_DIR": str(tmp_path / "data"),
        "ASN__PKG_DIR": str(pkg),
        "ASN__FETCH_ON_START": str(fetch).lower(),
        "ASN__PREFIX_PATH": str(snapshot),
    }
    app = create_app(load(None, environ))
    assert app.state.component.dataset.wait(30)
    return app


async def test_the_operator_snapshot_is_served_with_its_own_date(tmp_path, tiny_pkg):
    snapshot = write_snapshot(
        tmp_path / "operator.dat",
        "rib.20240301.0000.bz2",
        [("8.8.8.0/24", 13335), ("9.9.9.0/24", 15169), ("2a00:1450::/32", 15169)],
    )
    app = operator_app(tmp_path, tiny_pkg, snapshot)
    async with client_for(app) as client:
        health = (await client.get("/api/health")).json()
        moved = (await client.get("/api/v1/ip/8.8.8.8", headers=KEY)).json()
        new = (await client.get("/api/v1/ip/9.9.9.9", headers=KEY)).json()
        gone = await client.get("/api/v1/ip/1.1.1.1", headers=KEY)
    assert health["dataset_date"] == "2024-03-01"
    dataset = health["dependencies"]["dataset"]["dataset"]
    assert dataset["source"] == "rib.20240301.0000.bz2" and dataset["package"] is None
    assert "operator.dat" in dataset["name"]
    assert health["dependencies"]["dataset"]["rows"]["prefix"] == 3
    assert (moved["asn"], moved["name"], moved["dataset"]["date"]) == (13335, "CLOUDFLARENET", "2024-03-01")
    assert (new["prefix"], new["asn"]) == ("9.9.9.0/24", 15169)
    assert gone.status_code == 404  # the package's snapshot is not mixed in


async def test_a_newer_operator_file_rebuilds_the_database(tmp_path, tiny_pkg):
    snapshot = write_snapshot(tmp_path / "operator.dat", "rib.20240301.0000.bz2", [("8.8.8.0/24", 13335)])
    first = operator_app(tmp_path, tiny_pkg, snapshot)
    # a replica that restarts with a newer file: the old one has gone (DuckDB shares an open
    # file between connections of one process, so a live first app would keep the old inode)
    first.state.component.dataset.store.close()
    newer = write_snapshot(
        tmp_path / "operator.dat", "rib.20240415.0000.bz2", [("8.8.8.0/24", 15169), ("8.8.4.0/24", 15169)]
    )
    db = tmp_path / "data" / "asn.duckdb"
    assert loader.read_meta(db)["dataset_date"] == "2024-03-01"
    app = operator_app(tmp_path, tiny_pkg, newer)
    async with client_for(app) as client:
        body = (await client.get("/api/v1/ip/8.8.8.8", headers=KEY)).json()
    assert (body["asn"], body["dataset"]["date"]) == (15169, "2024-04-15")
    assert loader.read_meta(db)["rows_prefix"] == "2"


async def test_a_missing_operator_file_is_reported_not_replaced_by_the_package(tmp_path, tiny_pkg):
    app = operator_app(tmp_path, tiny_pkg, tmp_path / "nowhere.dat.gz", fetch=True)
    async with client_for(app) as client:
        health = await client.get("/api/health")
        lookup = await client.get("/api/v1/ip/8.8.8.8", headers=KEY)
    assert health.status_code == 503
    assert "nowhere.dat.gz" in health.json()["dependencies"]["dataset"]["error"]
    assert health.json()["dataset_date"] is None
    assert lookup.status_code == 503 and not (tmp_path / "data" / "asn.duckdb").exists()


async def test_a_malformed_operator_file_fails_cleanly(tmp_path, tiny_pkg):
    bad = tmp_path / "operator.dat"
    bad.write_text("; header\n8.8.8.0/24\tnot-a-number\n", encoding="utf-8")
    app = operator_app(tmp_path, tiny_pkg, bad)
    async with client_for(app) as client:
        health = await client.get("/api/health")
    assert health.status_code == 503 and "operator.dat" in health.json()["dependencies"]["dataset"]["error"]
    assert not (tmp_path / "data" / "asn.duckdb").exists()
