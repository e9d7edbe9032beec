"""The real snapshot (Debian python3-pyasn), fetched by scripts/fetch-asn-data.sh."""

import gzip
import ipaddress
import os
import random
import subprocess
from pathlib import Path

import pytest

from deployments.asn import dataset, loader
from deployments.asn.parsing import parse_ip
from tests.conftest import ROOT

SCRIPT = ROOT / "scripts" / "fetch-asn-data.sh"


def test_package_contents(real_pkg: Path):
    files = dataset.locate(real_pkg)
    assert files.package == "python3-pyasn 1.6.1-3+b3"
    assert files.snapshot_date == "2015-11-01"
    header = files.header()
    assert header["Prefixes-v4"] == "606138" and header["Prefixes-v6"] == "27693"


def test_fetch_script_is_idempotent(real_pkg: Path):
    again = subprocess.run(
        ["bash", str(SCRIPT), str(real_pkg.parents[4])], capture_output=True, text=True, check=True, timeout=60
    )
    assert Path(again.stdout.strip()) == real_pkg
    assert again.stderr == ""  # cached: no apt call at all


def test_fetch_script_updates_lists_only_after_a_failed_download(tmp_path: Path, real_pkg: Path):
    """A shim `apt-get` fails the first download; the script must update, then download again."""
    shim = tmp_path / "bin"
    shim.mkdir()
    calls = tmp_path / "calls"
    (shim / "apt-get").write_text(
        "#!/usr/bin/env bash\n"
        f'echo "$*" >> {calls}\n'
        f'if [ "$1" = download ] && ! grep -q "^update" {calls}; then exit 100; fi\n'
        'if [ "$1" = update ]; then exit 0; fi\n'
        'exec /usr/bin/apt-get "$@"\n'
    )
    (shim / "apt-get").chmod(0o755)
    dest = ROOT / "var" / "asn" / f"test-fetch-{os.getpid()}"
    try:
        env = {**os.environ, "PATH": f"{shim}:{os.environ['PATH']}"}
        result = subprocess.run(
            ["bash", str(SCRIPT), str(dest)], capture_output=True, text=True, env=env, timeout=300, check=False
        )
        assert result.returncode == 0, result.stderr
        assert [line.split()[0] for line in calls.read_text().splitlines()] == ["download", "update", "download"]
        assert (Path(result.stdout.strip()) / "asnames.json").stat().st_size > 3_000_000
        assert not list(dest.glob(".fetch.*"))
    finally:
        subprocess.run(["rm", "-rf", str(dest)], check=False)


def test_real_database_counts(real_db: Path):
    meta = loader.read_meta(real_db)
    assert int(meta["names_count"]) == 77586
    assert int(meta["v4_prefix_count"]) + int(meta["v6_prefix_count"]) == int(meta["rows_prefix"])
    assert int(meta["v6_prefix_count"]) > 27000 and int(meta["v4_prefix_count"]) > 600000
    assert meta["dataset_date"] == "2015-11-01" and meta["package"] == "python3-pyasn 1.6.1-3+b3"


def test_well_known_records(real_store):
    google = real_store.get_asn(15169)
    assert (google["name"], google["organisation"], google["country"]) == ("GOOGLE", "Google Inc.", "US")
    assert "8.8.8.0/24" in google["prefixes"]["v4"] and "2001:4860::/32" in google["prefixes"]["v6"]
    assert google["prefix_counts"]["v4"] == len(google["prefixes"]["v4"]) > 100
    assert google["num_ips"] > 1_000_000
    cloudflare = real_store.get_asn(13335)
    assert (cloudflare["name"], cloudflare["country"]) == ("CLOUDFLARENET", "US")
    assert cloudflare["prefix_counts"]["v6"] > 10
    ripe = real_store.get_asn(3333)
    assert ripe["name"] == "RIPE-NCC-AS" and "193.0.0.0/21" in ripe["prefixes"]["v4"]
    assert real_store.get_asn(4294967295) is None
    match = real_store.match_ip(*parse_ip("8.8.8.8")[:2])
    assert (match.prefix, match.asn) == ("8.8.8.0/24", 15169)
    assert real_store.match_ip(*parse_ip("10.0.0.1")[:2]) is None
    assert real_store.match_ip(*parse_ip("2606:4700::6810:84e5")[:2]).asn == 13335


def _reference_tables(path: Path) -> dict[int, dict[tuple[int, int], int]]:
    """prefix-length → {(family, network int): asn}, parsed with the stdlib (independent of the loader)."""
    tables: dict[int, dict[tuple[int, int], int]] = {}
    with gzip.open(path, "rt") as fh:
        for line in fh:
            if line.startswith(";") or not line.strip():
                continue
            prefix, asn = line.split()
            net = ipaddress.ip_network(prefix)
            tables.setdefault(net.prefixlen, {}).setdefault((net.version, int(net.network_address)), int(asn))
    return tables


def test_longest_prefix_match_agrees_with_a_reference_on_real_data(real_pkg: Path, real_store):
    tables = _reference_tables(real_pkg / "ipasn6_20151101.dat.gz")
    rng = random.Random(7)
    v4_known = [net for length, t in tables.items() for (fam, net) in t if fam == 4]
    v6_known = [net for length, t in tables.items() for (fam, net) in t if fam == 6]
    probes = [(4, rng.getrandbits(32)) for _ in range(4000)]
    probes += [(4, rng.choice(v4_known) + rng.getrandbits(8)) for _ in range(4000)]
    probes += [(6, rng.choice(v6_known) + rng.getrandbits(80)) for _ in range(1500)]
    for family, value in probes:
        bits = 32 if family == 4 else 128
        expected = None
        for length in range(bits, -1, -1):
            network = value >> (bits - length) << (bits - length)
            hit = tables.get(length, {}).get((family, network))
            if hit is not None:
                expected = (length, hit)
                break
        got = real_store.match_ip(family, value)
        if expected is None:
            assert got is None
        else:
            assert got is not None and int(got.prefix.rsplit("/", 1)[1]) == expected[0]
            assert got.asn == expected[1]


def test_search_real_names(real_store):
    results = real_store.search("google", "US", 5)
    assert results[0]["asn"] == 15169
    assert all(r["country"] == "US" for r in results)
    assert real_store.search("cloudflarenet", None, 3)[0]["asn"] == 13335


@pytest.mark.parametrize("asn", [64512, 65535, 23456])
def test_special_ranges_have_no_country(real_store, asn):
    record = real_store.get_asn(asn)
    assert record is None or record["country"] is None


def test_first_start_fetches_and_builds(real_pkg: Path, tmp_path: Path):
    """A replica's first start on an empty data dir: the holder fetches, builds, then serves."""
    from deployments.asn.holder import DatasetHolder

    pkg = ROOT / "var" / "asn" / f"test-first-start-{os.getpid()}"
    try:
        holder = DatasetHolder(tmp_path / "asn.duckdb", pkg, "ipasn6_20151101.dat.gz", fetch_on_start=True).start()
        assert holder.wait(600) and holder.ready, holder.error
        assert holder.store.get_asn(15169)["name"] == "GOOGLE"
        assert (pkg / "usr/lib/python3/dist-packages/data/asnames.json").is_file()
    finally:
        subprocess.run(["rm", "-rf", str(pkg)], check=False)
