"""Where the raw ASN snapshot lives and how to obtain it (Debian's python3-pyasn package)."""

from __future__ import annotations

import gzip
import re
import subprocess
from dataclasses import dataclass
from datetime import date
from pathlib import Path

PACKAGE_DATA_REL = Path("usr/lib/python3/dist-packages/data")
NAMES_FILE = "asnames.json"
DEFAULT_PREFIX_FILE = "ipasn6_20151101.dat.gz"
PROJECT_ROOT = Path(__file__).resolve().parents[2]
FETCH_SCRIPT = PROJECT_ROOT / "scripts" / "fetch-asn-data.sh"


class DatasetError(RuntimeError):
    """The raw dataset is missing, cannot be fetched or does not parse."""


@dataclass(frozen=True)
class DatasetFiles:
    """The two input files and what is known about their origin."""

    names: Path
    prefixes: Path
    package: str | None  # e.g. "python3-pyasn 1.6.1-3+b3"

    @property
    def snapshot_date(self) -> str | None:
        """ISO date of the routing-table snapshot: from the file name (`ipasn6_20151101`), else
        from the RIB named in its header (`; Original file : rib.20240301.0000.bz2`)."""
        return _date_in(self.prefixes.name) or _date_in(self.header().get("Original file", ""))

    def header(self) -> dict[str, str]:
        """The `; Key : value` comment header of the IPASN file (source RIB, conversion time)."""
        fields: dict[str, str] = {}
        opener = gzip.open if self.prefixes.suffix == ".gz" else open
        with opener(self.prefixes, "rt", encoding="utf-8", errors="replace") as handle:
            for line in handle:
                if not line.startswith(";"):
                    break
                key, sep, value = line[1:].partition(":")
                if sep and key.strip():
                    fields[key.strip()] = value.strip()
        return fields

    def fingerprint(self) -> str:
        """Identifies the input so a database built from other files is rebuilt."""
        parts = []
        for path in (self.names, self.prefixes):
            stat = path.stat()
            parts.append(f"{path.name}:{stat.st_size}:{stat.st_mtime_ns}")
        return ";".join(parts)


def _date_in(text: str) -> str | None:
    """The first plausible YYYYMMDD in `text` as an ISO date."""
    for match in re.finditer(r"(?<!\d)((?:19|20)\d{2})(\d{2})(\d{2})(?!\d)", text):
        try:
            return date(int(match[1]), int(match[2]), int(match[3])).isoformat()
        except ValueError:
            continue
    return None


def data_directory(pkg_dir: Path) -> Path:
    """The directory holding asnames.json: `pkg_dir` itself or the extracted package layout under it."""
    if (pkg_dir / NAMES_FILE).is_file():
        return pkg_dir
    return pkg_dir / PACKAGE_DATA_REL


def locate(
    pkg_dir: Path,
    prefix_file: str = DEFAULT_PREFIX_FILE,
    prefix_path: Path | None = None,
    names_path: Path | None = None,
) -> DatasetFiles:
    """The dataset files, or DatasetError naming what is missing.

    By default both come from the package under `pkg_dir`. An operator's own pyasn-format
    prefix file (`prefix_path`, e.g. from `pyasn_util_convert.py` on a newer RIB) and AS
    names file (`names_path`) replace the package's; a missing one is an error, never a
    silent fallback to the old snapshot.
    """
    directory = data_directory(pkg_dir)
    names = names_path or directory / NAMES_FILE
    prefixes = prefix_path or directory / prefix_file
    missing = [str(p) for p in (names, prefixes) if not p.is_file()]
    if missing:
        raise DatasetError(f"ASN dataset files missing: {', '.join(missing)}")
    package = None
    info = directory / "PACKAGE-INFO"
    if info.is_file() and prefix_path is None:  # an operator's snapshot is not the package's
        fields = dict(line.split(":", 1) for line in info.read_text(encoding="utf-8").splitlines() if ":" in line)
        package = " ".join(v.strip() for k, v in fields.items() if k in ("Package", "Version")) or None
    return DatasetFiles(names=names, prefixes=prefixes, package=package)


def fetch(pkg_dir: Path, timeout: float = 300.0) -> None:
    """Run scripts/fetch-asn-data.sh into `pkg_dir`; DatasetError with its stderr on failure."""
    if not FETCH_SCRIPT.is_file():
        raise DatasetError(f"fetch script not found at {FETCH_SCRIPT}")
    try:
        result = subprocess.run(
            ["bash", str(FETCH_SCRIPT), str(pkg_dir)],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        raise DatasetError(f"fetching the ASN dataset timed out after {timeout:.0f}s") from exc
    if result.returncode != 0:
        tail = "\n".join(result.stderr.strip().splitlines()[-5:])
        raise DatasetError(f"fetching the ASN dataset failed (exit {result.returncode}): {tail}")
