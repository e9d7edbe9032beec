"""Certificates the TLS tests make for themselves: a CA, and pairs it signs, written as PEM files."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from actors.mitigation.tls import CertificatePair, issue, pem_of, write_private


@dataclass
class Issued:
    """A pair signed by a test CA, with its files (`combined`: what HAProxy's `crt` reads)."""

    pair: CertificatePair
    cert_file: Path
    key_file: Path
    combined: Path

    @property
    def serial(self) -> str:
        return self.pair.info()["serial"]


class CertificateAuthority:
    """A certificate authority of one test: `ca_file` is what a client (or a node) trusts."""

    def __init__(self, folder: Path, name: str = "rayfleet test CA") -> None:
        self.folder = folder
        self.folder.mkdir(parents=True, exist_ok=True)
        self.cert, self.key = issue(name, [], is_ca=True)
        self.ca_file = folder / f"{name.replace(' ', '-')}.pem"
        self.ca_file.write_text(pem_of(self.cert, self.key).cert_pem)
        self.count = 0

    def signed(self, hosts: list[str], common_name: str = "node") -> Issued:
        self.count += 1
        pair = pem_of(*issue(common_name, hosts, (self.cert, self.key)))
        stem = self.folder / f"{common_name}-{self.count}"
        cert_file, key_file, combined = (stem.with_suffix(s) for s in (".crt", ".key", ".pem"))
        cert_file.write_text(pair.cert_pem)
        write_private(key_file, pair.key_pem)
        write_private(combined, pair.combined)
        return Issued(pair, cert_file, key_file, combined)
