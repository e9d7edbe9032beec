"""The certificate a node's TLS listener serves: which pair, the PEM file HAProxy reads, hot replacement.

Which pair, in order: the one kept in the node's `/tls` stream (a hot replacement) while the
configured source it replaced is unchanged; else the configured files, or a demo pair generated at
each start (never recorded). Replacement goes through the runtime API (`set ssl cert` then `commit ssl cert` on the
file HAProxy loaded): the running workers serve the new certificate to new handshakes with no reload,
open connections keep theirs. The new pair is recorded and written to the file first, so a reload or
a restarted HAProxy or node actor comes back with it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from actors.mitigation.settings import NodeSettings, TLSSettings
from actors.mitigation.tls import CertificateError, CertificatePair, check_pair, demo_pair, load_pair, write_private
from rayfleet.durable import DurableMap

Runtime = Callable[[str, str | None], Awaitable[str]]


class CertificateRefused(ValueError):
    """The pair cannot be served (422) or HAProxy refused it; the message never holds the key."""


def _configured(tls: TLSSettings) -> list[str] | str:
    """What the configuration names as the source of the certificate."""
    return "demo" if tls.demo else [str(tls.cert_file), str(tls.key_file)]


class NodeCertificate:
    def __init__(self, kept: DurableMap, path: Path) -> None:
        self.kept = kept
        self.path = path
        self.pair: CertificatePair | None = None
        self.lock = asyncio.Lock()

    def install(self, settings: NodeSettings) -> None:
        """Pick the pair to serve and write the PEM HAProxy's `crt` names (nothing without `tls`)."""
        tls = settings.tls
        if tls is None:
            return
        configured = _configured(tls)
        record = self.kept.get("pair")
        if record is not None and record.get("configured") == configured:
            self.pair = CertificatePair(record["cert_pem"], record["key_pem"])
        else:
            if record is not None:  # the configuration names another source now: it wins
                self.kept.delete("pair")
            self.pair = demo_pair() if tls.demo else load_pair(str(tls.cert_file), str(tls.key_file))
        write_private(self.path, self.pair.combined)

    @staticmethod
    def _record(pair: CertificatePair, configured: list[str] | str) -> dict[str, Any]:
        return {"cert_pem": pair.cert_pem, "key_pem": pair.key_pem, "configured": configured}

    def view(self, settings: NodeSettings) -> dict[str, Any]:
        """What the API shows: the certificate's public facts and the listener's options, never the key."""
        tls = settings.tls
        if tls is None or self.pair is None:
            return {"enabled": False}
        return {
            "enabled": True,
            "min_version": tls.min_version,
            "alpn": tls.protocols(settings.mode),
            "source": "api" if "pair" in self.kept else ("demo" if tls.demo else "files"),
            **self.pair.info(),
        }

    async def replace(self, settings: NodeSettings, cert_pem: str, key_pem: str, runtime: Runtime) -> None:
        """Check the pair, hand it to HAProxy, record it, then commit; HAProxy refusing it leaves the old
        certificate served, recorded and on disk."""
        if settings.tls is None:
            raise CertificateRefused("this node has no TLS listener (node.tls)")
        try:
            pair = check_pair(cert_pem, key_pem)
        except CertificateError as exc:
            raise CertificateRefused(str(exc)) from None
        async with self.lock:
            answer = await runtime(f"set ssl cert {self.path}", pair.combined)
            if "Transaction created" not in answer and "Transaction updated" not in answer:
                raise CertificateRefused(f"HAProxy refused the certificate: {_first_line(answer)}")
            before = self.kept.get("pair")
            self.kept.set("pair", self._record(pair, _configured(settings.tls)))
            write_private(self.path, pair.combined)
            try:
                answer = await runtime(f"commit ssl cert {self.path}", None)
            except BaseException:
                self._put_back(before)
                raise
            if "Success" not in answer:
                self._put_back(before)
                await runtime(f"abort ssl cert {self.path}", None)
                raise CertificateRefused(f"HAProxy did not commit the certificate: {_first_line(answer)}")
            self.pair = pair

    def _put_back(self, record: dict[str, Any] | None) -> None:
        if record is None:
            self.kept.delete("pair")
        else:
            self.kept.set("pair", record)
        if self.pair is not None:
            write_private(self.path, self.pair.combined)


def _first_line(answer: str) -> str:
    """HAProxy's answer, first meaningful line only (it never echoes the payload, and this keeps it so)."""
    lines = [line for line in answer.strip().splitlines() if line.strip() and "PRIVATE KEY" not in line]
    return (lines[0] if lines else "no answer")[:200]
