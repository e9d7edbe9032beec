"""The loader on a tiny generated dataset: every table, every derived field, and bad input."""

import gzip
import itertools
import json
import threading
from pathlib import Path

import duckdb
import pytest

from deployments.asn import dataset, loader
from deployments.asn.store import AsnStore
from tests.deployments.asn.tinydata import PREFIX_FILE, write_dataset


@pytest.fixture
def built(tiny_pkg: Path, tmp_path: Path) -> Path:
    db = tmp_path / "db" / "asn.duckdb"
    assert loader.ensure_database(db, dataset.locate(tiny_pkg, PREFIX_FILE)) is True
    return db


def test_meta_and_row_counts(built: Path):
    meta = loader.read_meta(built)
    assert meta["schema_version"] == loader.SCHEMA_VERSION
    assert meta["dataset_date"] == "2020-01-02"
    assert meta["source_rib"] == "generated-tiny-rib"
    assert meta["rows_prefix"] == "13"  # 14 rows, one an exact repeat
    assert meta["v6_prefix_count"] == "4"
    assert meta["rows_asn"] == "7"  # 6 named + 64999 that only has prefixes


def test_asn_rows(built: Path):
    with duckdb.connect(str(built), read_only=True) as conn:
        rows = {
            r[0]: r[1:]
            for r in conn.execute(
                "SELECT asn, name, organisation, country, v4_count, v6_count, v4_addresses, v6_addresses, "
                "v4_prefixes, v6_prefixes FROM asn"
            ).fetchall()
        }
    google = rows[15169]
    assert google[:3] == ("GOOGLE", "Google Inc.", "US")
    assert google[3:5] == (3, 2)  # 8.8.0.0/16, 8.8.4.0/24, 8.8.8.0/24 | two v6
    assert google[5] == 65536  # /24s inside the /16 are not counted twice
    assert google[6] == 2**96  # the /48 lies inside the /32
    assert google[7] == ["8.8.0.0/16", "8.8.4.0/24", "8.8.8.0/24"]
    assert rows[3333][5] == 2**23 + 2048 + 512
    assert rows[64512][:3] == ("Private Use AS", None, None)
    assert rows[65001][3:6] == (0, 0, 0)
    assert rows[64999][:3] == (None, None, None) and rows[64999][3] == 1


def test_asn_lookup_uses_the_primary_key_index(built: Path):
    with duckdb.connect(str(built), read_only=True) as conn:
        plan = conn.execute("EXPLAIN ANALYZE SELECT * FROM asn WHERE asn = 15169").fetchall()[0][1]
    assert "Index Scan" in plan


def test_ranges_are_sorted_and_disjoint(built: Path):
    with duckdb.connect(str(built), read_only=True) as conn:
        r4 = conn.execute("SELECT start, stop FROM range4 ORDER BY start").fetchall()
        r6 = conn.execute(
            "SELECT (start_hi::UHUGEINT << 64) | start_lo, (stop_hi::UHUGEINT << 64) | stop_lo FROM range6 ORDER BY 1"
        ).fetchall()
    for ranges in (r4, r6):
        assert ranges and all(a[1] < b[0] for a, b in itertools.pairwise(ranges))
        assert all(start <= stop for start, stop in ranges)


def test_store_on_tiny_dataset(built: Path):
    store = AsnStore(built)
    try:
        assert store.match_ip(4, 0x08080808).asn == 15169 and store.match_ip(4, 0x08080808).prefix == "8.8.8.0/24"
        assert store.match_ip(4, 0x08090000).prefix == "8.0.0.0/9"  # outside Google's /16, inside the /9
        assert store.match_ip(4, 0x08080101).prefix == "8.8.0.0/16"
        assert store.match_ip(4, 0x0A010203).asn == 64999
        assert store.match_ip(4, 0x09000000) is None
        assert store.match_ip(6, 0x20014860486000000000000000008888).prefix == "2001:4860:4860::/48"
        assert store.match_ip(6, 0x20014860000100000000000000000000).prefix == "2001:4860::/32"
        assert store.match_ip(6, 0x20010DB8 << 96) is None
        record = store.get_asn(13335)
        assert record["prefixes"] == {"v4": ["1.0.0.0/24", "1.1.1.0/24"], "v6": ["2606:4700::/32"]}
        assert record["num_ips"] == 512 and record["prefix_counts"] == {"v4": 2, "v6": 1}
        assert store.get_asn(4242) is None
        assert store.dataset()["date"] == "2020-01-02" and store.dataset()["live"] is False
        assert [r["asn"] for r in store.search("cloud", None, 10)] == [13335]
        assert [r["asn"] for r in store.search("google", "DE", 10)] == []
        assert store.search("ripe ncc", "NL", 5)[0]["asn"] == 3333
        assert store.counts()["asn"] == 7
    finally:
        store.close()


def test_second_ensure_is_a_no_op_and_a_changed_source_rebuilds(built: Path, tiny_pkg: Path):
    files = dataset.locate(tiny_pkg, PREFIX_FILE)
    assert loader.ensure_database(built, files) is False
    write_dataset(tiny_pkg, rows=[("5.5.5.0/24", 15169)])
    assert loader.ensure_database(built, dataset.locate(tiny_pkg, PREFIX_FILE)) is True
    assert loader.read_meta(built)["rows_prefix"] == "1"


def test_concurrent_first_starts_build_once(tiny_pkg: Path, tmp_path: Path):
    db = tmp_path / "concurrent" / "asn.duckdb"
    files = dataset.locate(tiny_pkg, PREFIX_FILE)
    results: list[bool] = []
    threads = [threading.Thread(target=lambda: results.append(loader.ensure_database(db, files))) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(results) == [False, False, False, True]
    assert not list(db.parent.glob(".*.tmp"))


@pytest.mark.parametrize(
    "breakage, message",
    [
        ("names_not_json", "asnames.json"),
        ("names_bad_key", "bad entry"),
        ("bad_prefix_row", "line 6"),
        ("truncated_gzip", PREFIX_FILE),
        ("empty_prefixes", "no prefixes"),
    ],
)
def test_bad_input_fails_cleanly_and_leaves_no_database(tmp_path: Path, breakage: str, message: str):
    pkg = write_dataset(tmp_path / "pkg")
    if breakage == "names_not_json":
        (pkg / "asnames.json").write_text("{not json", encoding="utf-8")
    elif breakage == "names_bad_key":
        (pkg / "asnames.json").write_text(json.dumps({"AS1": "x"}), encoding="utf-8")
    elif breakage == "bad_prefix_row":
        with gzip.open(pkg / PREFIX_FILE, "wt") as fh:
            fh.write("; h\n; h\n; h\n;\n1.0.0.0/24\t1\n1.0.0.1/24\t2\n")
    elif breakage == "truncated_gzip":
        data = (pkg / PREFIX_FILE).read_bytes()
        (pkg / PREFIX_FILE).write_bytes(data[: len(data) // 2])
    elif breakage == "empty_prefixes":
        with gzip.open(pkg / PREFIX_FILE, "wt") as fh:
            fh.write("; only a header\n")
    db = tmp_path / "db" / "asn.duckdb"
    with pytest.raises(dataset.DatasetError, match=message):
        loader.ensure_database(db, dataset.locate(pkg, PREFIX_FILE))
    assert not db.exists()
    assert [p.name for p in db.parent.iterdir()] == ["asn.duckdb.lock"]


def test_locate_reports_missing_files(tmp_path: Path):
    with pytest.raises(dataset.DatasetError, match="asnames.json"):
        dataset.locate(tmp_path)


def test_prepare_without_fetch_reports_missing_package(tmp_path: Path):
    with pytest.raises(dataset.DatasetError, match="missing"):
        loader.prepare(tmp_path / "db" / "asn.duckdb", tmp_path / "nothing", PREFIX_FILE, fetch=False)


def test_prepare_builds_from_a_present_package(tiny_pkg: Path, tmp_path: Path):
    db = tmp_path / "prepared" / "asn.duckdb"
    assert loader.prepare(db, tiny_pkg, PREFIX_FILE, fetch=True) is True
    assert loader.prepare(db, tiny_pkg, PREFIX_FILE, fetch=True) is False
