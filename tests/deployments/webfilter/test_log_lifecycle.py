"""The log store on its own: Squid's access log and dnsmasq's query log rotated past `log_rotate_bytes` (by
the proxy actor, on the log store's request) with every line ingested exactly once across the rotations; under `gdpr_mode` no
full client address is stored; rows stored before it are masked by the maintenance action; the DuckDB file
and its row counts in `/api/database/stats`. Real Squid and dnsmasq."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.deployments.webfilter.conftest import Origin, Service, require_dataplane, running_service, state_folder
from tests.polling import eventually

pytestmark = pytest.mark.realserver
ROTATE_BYTES = 3000  # about 25 access-log lines, 15 DNS queries


@pytest.fixture(scope="module")
async def wf(origin: Origin) -> AsyncIterator[Service]:
    require_dataplane()
    async for service in running_service(state_folder(), origin, log_rotate_bytes=ROTATE_BYTES):
        yield service


async def raw(wf: Service, sql: str, *params: object) -> list[tuple]:
    """A query on the DuckDB tables themselves (not an API view)."""
    rows: list[tuple] = await wf.app.state.component.logs.query.remote(sql, list(params))
    return rows


async def counted(wf: Service, sql: str, *params: object, expected: int) -> None:
    async def count() -> int | None:
        (n,) = (await raw(wf, sql, *params))[0]
        return n if n == expected else None

    await eventually(count, timeout=30, what=f"{expected} from {sql}")


async def test_rotated_logs_are_ingested_exactly_once(wf):
    for n in range(80):
        assert (await wf.fetch(wf.url("allowed.test", f"/rotation-{n}"))).status_code == 200
        assert await wf.resolve(f"rotation-{n}.test") == []  # refused: no upstream; logged all the same
    await counted(wf, "SELECT count(DISTINCT url) FROM logs WHERE url LIKE '%/rotation-%'", expected=80)
    await counted(wf, "SELECT count(DISTINCT name) FROM dns_logs WHERE name LIKE 'rotation-%'", expected=80)
    # exactly once: as many rows as distinct URLs / names
    assert (await raw(wf, "SELECT count(*) FROM logs WHERE url LIKE '%/rotation-%'"))[0][0] == 80
    assert (await raw(wf, "SELECT count(*) FROM dns_logs WHERE name LIKE 'rotation-%'"))[0][0] == 80
    status = (await wf.api.get("/api/status")).json()["data"]["logs"]
    assert status["rotations"]["access"] >= 1 and status["rotations"]["dns"] >= 1, status["rotations"]
    access, dns = Path(status["access_log"]), Path(status["dns_log"])
    assert access.with_name("access.log.0").exists() and dns.with_name(dns.name + ".0").exists()
    assert not access.with_name("access.log.3").exists()  # proxy.log_rotate_keep (3) copies at most
    assert not dns.with_name(dns.name + ".3").exists()


async def test_database_stats_show_the_log_store_file_and_its_rows(wf):
    stats = (await wf.api.get("/api/database/stats")).json()["data"]
    (http, dns) = (await raw(wf, "SELECT (SELECT count(*) FROM logs), (SELECT count(*) FROM dns_logs)"))[0]
    log_db = stats["log_db"]
    assert log_db["file_bytes"] > 0 and log_db["retention_days"] == 30 and log_db["retention"]["runs"] >= 1
    assert (log_db["log_rows"], log_db["dns_log_rows"], stats["log_rows"]) == (http, dns, http)


async def test_under_gdpr_mode_duckdb_never_holds_a_full_client_address(wf):
    assert (await wf.fetch(wf.url("allowed.test", "/before-gdpr"))).status_code == 200
    assert await wf.resolve("before-gdpr.test") == []
    await counted(wf, "SELECT count(*) FROM logs WHERE url LIKE '%/before-gdpr'", expected=1)
    await counted(wf, "SELECT count(*) FROM dns_logs WHERE name = 'before-gdpr.test'", expected=1)
    r = await wf.api.put("/api/settings/gdpr_mode", json={"value": True})
    assert r.status_code == 200, r.text
    try:
        for n in range(3):
            assert (await wf.fetch(wf.url("allowed.test", f"/after-gdpr-{n}"))).status_code == 200
            assert await wf.resolve(f"after-gdpr-{n}.test") == []
        await counted(wf, "SELECT count(*) FROM logs WHERE url LIKE '%/after-gdpr-%'", expected=3)
        await counted(wf, "SELECT count(*) FROM dns_logs WHERE name LIKE 'after-gdpr-%'", expected=3)
        # everything ingested since the switch was stored masked, in every table that keeps a client
        for table, where in (
            ("logs", "url LIKE '%/after-gdpr-%'"),
            ("dns_logs", "name LIKE 'after-gdpr-%'"),
            ("r_client", "hour >= date_trunc('hour', now()::TIMESTAMP - INTERVAL 1 HOUR)"),
        ):
            clients = {row[0] for row in await raw(wf, f"SELECT DISTINCT client FROM {table} WHERE {where}")}
            assert "127.0.0.0" in clients, table
        assert (await raw(wf, "SELECT count(*) FROM logs WHERE url LIKE '%/after-gdpr-%' AND client <> '127.0.0.0'"))[
            0
        ][0] == 0
        assert (
            await raw(wf, "SELECT count(*) FROM dns_logs WHERE name LIKE 'after-gdpr-%' AND client <> '127.0.0.0'")
        )[0][0] == 0
        # rows stored before the switch keep their address until the maintenance action masks them
        assert (await raw(wf, "SELECT count(*) FROM logs WHERE client = '127.0.0.1'"))[0][0] >= 1
        masked = await wf.api.post("/api/logs/mask-clients")
        assert masked.status_code == 200, masked.text
        assert masked.json()["data"]["masked"] >= 1 and masked.json()["data"]["dns_masked"] >= 1
        for table in ("logs", "dns_logs", "recent_blocks", "r_client"):
            assert (await raw(wf, f"SELECT count(*) FROM {table} WHERE client = '127.0.0.1'"))[0][0] == 0, table
    finally:
        await wf.api.put("/api/settings/gdpr_mode", json={"value": False})
