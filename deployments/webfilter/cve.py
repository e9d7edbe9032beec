"""Squid's version and the CVEs the installed Debian package says it fixes (from its changelog)."""

from __future__ import annotations

import gzip
import re
import subprocess
from pathlib import Path
from typing import Any

# the OpenSSL build (squid-openssl, the one system-deps installs) or Debian's GnuTLS `squid`
CHANGELOGS = (
    Path("/usr/share/doc/squid-openssl/changelog.Debian.gz"),
    Path("/usr/share/doc/squid/changelog.Debian.gz"),
)
_CVE = re.compile(r"CVE-\d{4}-\d{4,7}")
_ENTRY = re.compile(r"^squid \(([^)]+)\)")


def squid_version(squid_bin: str) -> str:
    done = subprocess.run([squid_bin, "-v"], capture_output=True, timeout=10, check=False)
    first = done.stdout.decode(errors="replace").splitlines()[:1]
    match = re.search(r"Version (\S+)", first[0]) if first else None
    return match.group(1) if match else "unknown"


def package_cves(path: Path | None = None) -> dict[str, Any]:
    """`{package_version, cves: [{id, fixed_in}]}` as recorded by the packager (newest first)."""
    path = path or next((p for p in CHANGELOGS if p.exists()), CHANGELOGS[0])
    if not path.exists():
        return {"package_version": "unknown", "cves": []}
    current, newest = "", ""
    seen: dict[str, str] = {}
    with gzip.open(path, "rt", encoding="utf-8", errors="replace") as fh:
        for line in fh:
            entry = _ENTRY.match(line)
            if entry:
                current = entry.group(1)
                newest = newest or current
                continue
            for cve in _CVE.findall(line):
                seen.setdefault(cve, current)
    return {"package_version": newest, "cves": [{"id": c, "fixed_in": v} for c, v in seen.items()]}
