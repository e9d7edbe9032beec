"""A tiny generated ASN dataset in the package's file formats (asnames.json + IPASN .dat.gz)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

NAMES = {
    "15169": "GOOGLE - Google Inc., US",
    "13335": "CLOUDFLARENET - CloudFlare, Inc., US",
    "3333": "RIPE-NCC-AS Reseaux IP Europeens Network Coordination Centre (RIPE NCC), NL",
    "64512": "-Private Use AS-, ZZ",
    "13057": "A.P. Moller - Maersk A/S, DK",
    "65001": "NOPREFIX-AS Example without prefixes, DE",
}

# Nested prefixes of different origins, a duplicate row, IPv6, and an origin (64999)
# that has prefixes but no name.
PREFIX_ROWS = [
    ("8.8.8.0/24", 15169),
    ("8.0.0.0/9", 3333),
    ("8.8.0.0/16", 15169),
    ("8.8.4.0/24", 15169),
    ("8.8.4.0/24", 15169),
    ("1.1.1.0/24", 13335),
    ("1.0.0.0/24", 13335),
    ("193.0.0.0/21", 3333),
    ("193.0.10.0/23", 3333),
    ("10.1.0.0/16", 64999),
    ("2001:4860::/32", 15169),
    ("2001:4860:4860::/48", 15169),
    ("2606:4700::/32", 13335),
    ("2001:67c:2e8::/48", 3333),
]

PREFIX_FILE = "ipasn_20200102.dat.gz"


def write_dataset(
    directory: Path,
    rows: list[tuple[str, int]] | None = None,
    names: dict[str, str] | None = None,
    prefix_file: str = PREFIX_FILE,
) -> Path:
    """Write the two files into `directory` (flat layout) and return it."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "asnames.json").write_text(json.dumps(names or NAMES), encoding="utf-8")
    body = "; IP-ASN32-DAT file\n; Original file : generated-tiny-rib\n; Converted on  : never\n;\n"
    body += "".join(f"{prefix}\t{asn}\n" for prefix, asn in (rows or PREFIX_ROWS))
    with gzip.open(directory / prefix_file, "wt", encoding="utf-8") as handle:
        handle.write(body)
    return directory
