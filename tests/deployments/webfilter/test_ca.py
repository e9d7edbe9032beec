"""The interception CA: generated once, and replicas starting together agree on one matching pair."""

from __future__ import annotations

import stat
from concurrent.futures import ThreadPoolExecutor

from deployments.webfilter import ca


def test_concurrent_first_starts_leave_one_ca_whose_key_matches_its_certificate(tmp_path):
    folder = tmp_path / "ca"
    with ThreadPoolExecutor(3) as pool:
        results = list(pool.map(lambda _: ca.ensure_ca(folder), range(3)))
    assert len(set(results)) == 1
    cert, key = results[0]
    report = ca.check(cert, key)
    assert report["ok"] and not report["findings"] and report["key_size"] == 3072
    assert stat.S_IMODE(key.stat().st_mode) == 0o600 and sorted(p.name for p in tmp_path.iterdir()) == ["ca"]
    before = cert.read_bytes()
    assert ca.ensure_ca(folder) == (cert, key) and cert.read_bytes() == before  # never regenerated
