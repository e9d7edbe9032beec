"""The mined rules table: `{version, rules: [{features, patterns}]}`.

An entry fires when all of its features are in the fingerprint. The table is
produced offline by `python -m deployments.ignore_gen.mine` and committed; its
version is a hash of a canonical serialisation, so two tables with the same
rules have the same version whatever their key or entry order.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

RULES_TABLE_PATH = Path(__file__).resolve().parent / "rules_table.json"


class RulesTableError(ValueError):
    """A rules table that is malformed or whose declared hash does not match."""


@dataclass(frozen=True)
class RuleEntry:
    features: tuple[str, ...]
    patterns: tuple[str, ...]


def canonical_entries(entries: Iterable[RuleEntry]) -> list[dict[str, list[str]]]:
    """Entries with sorted features and sorted unique patterns, sorted by both."""
    rows = [{"features": sorted(set(e.features)), "patterns": sorted(set(e.patterns))} for e in entries]
    rows.sort(key=lambda r: (r["features"], r["patterns"]))
    return rows


def table_version(entries: Iterable[RuleEntry]) -> str:
    """`sha256:` + 12 hex of the canonical JSON (sorted keys, no ASCII escaping)."""
    text = json.dumps(canonical_entries(entries), sort_keys=True, ensure_ascii=False)
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


@dataclass(frozen=True)
class RulesTable:
    entries: tuple[RuleEntry, ...]
    version: str

    def matching(self, features: Sequence[str]) -> list[RuleEntry]:
        """Entries whose features are all present, in canonical order."""
        present = set(features)
        return [e for e in self.entries if present.issuperset(e.features)]

    def features(self) -> set[str]:
        return {f for e in self.entries for f in e.features}


def _entry(raw: Any, index: int) -> RuleEntry:
    if not isinstance(raw, dict):
        raise RulesTableError(f"rules[{index}] is not an object")
    feats, pats = raw.get("features"), raw.get("patterns")
    if not isinstance(feats, list) or not feats or not all(isinstance(f, str) for f in feats):
        raise RulesTableError(f"rules[{index}].features must be a non-empty list of strings")
    if not isinstance(pats, list) or not all(isinstance(p, str) and p.strip() for p in pats):
        raise RulesTableError(f"rules[{index}].patterns must be a list of non-empty strings")
    return RuleEntry(tuple(sorted(set(feats))), tuple(sorted(set(pats))))


def build_table(data: Any) -> RulesTable:
    """Validate a decoded table; a declared `sha256:` version must match the content."""
    if not isinstance(data, dict) or not isinstance(data.get("rules"), list):
        raise RulesTableError("rules table must be an object with a 'rules' list")
    entries = [_entry(raw, i) for i, raw in enumerate(data["rules"])]
    canon = canonical_entries(entries)
    ordered = tuple(RuleEntry(tuple(r["features"]), tuple(r["patterns"])) for r in canon)
    computed = table_version(ordered)
    declared = data.get("version")
    if isinstance(declared, str) and declared.startswith("sha256:") and declared != computed:
        raise RulesTableError(f"rules table declares {declared} but its content hashes to {computed}")
    return RulesTable(ordered, computed)


def load_rules_table(path: Path | None = None) -> RulesTable:
    source = path or RULES_TABLE_PATH
    try:
        data = json.loads(Path(source).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise RulesTableError(f"cannot read rules table {source}: {exc}") from None
    return build_table(data)
