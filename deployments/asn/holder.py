"""Loads the dataset in the background so a replica answers health checks while it builds.

On first start: fetch the package if it is missing (when allowed), build the DuckDB
file if it is missing or stale (one replica builds, the others wait on the file
lock), then open it. Until then lookups answer 503 and /api/health reports the state.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

from deployments.asn import loader
from deployments.asn.store import AsnStore


class DatasetHolder:
    def __init__(
        self,
        db_path: Path,
        pkg_dir: Path,
        prefix_file: str,
        fetch_on_start: bool,
        prefix_path: Path | None = None,
        names_path: Path | None = None,
    ) -> None:
        self.db_path = db_path
        self.prefix_path = prefix_path
        self.names_path = names_path
        self.pkg_dir = pkg_dir
        self.prefix_file = prefix_file
        self.fetch_on_start = fetch_on_start
        self.store: AsnStore | None = None
        self.error: str | None = None
        self.phase = "pending"
        self.load_seconds: float | None = None
        self._done = threading.Event()

    def start(self) -> DatasetHolder:
        threading.Thread(target=self._run, name="asn-dataset-loader", daemon=True).start()
        return self

    def _run(self) -> None:
        started = time.monotonic()
        try:
            self.phase = "preparing"  # fetch when missing, build when missing or stale
            loader.prepare(
                self.db_path, self.pkg_dir, self.prefix_file, self.fetch_on_start, self.prefix_path, self.names_path
            )
            self.phase = "opening"
            self.store = AsnStore(self.db_path)
            self.phase = "ready"
        except Exception as exc:  # reported by /api/health; the replica keeps serving health
            self.error = f"{type(exc).__name__}: {exc}"
            self.phase = "failed"
        finally:
            self.load_seconds = round(time.monotonic() - started, 3)
            self._done.set()

    def wait(self, timeout: float | None = None) -> bool:
        """Block until loading finished (ready or failed); True when it finished in time."""
        return self._done.wait(timeout)

    @property
    def ready(self) -> bool:
        return self.store is not None
