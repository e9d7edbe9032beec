"""Templates: one `<feature>.gitignore` file per feature, shipped in templates/.

A template's comments explain each pattern to its readers; only the patterns
reach the generated file. `templates_version` changes whenever any byte of any
template changes, so a change of rules is visible in every output.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

TEMPLATES_DIR = Path(__file__).resolve().parent / "templates"
SUFFIX = ".gitignore"


def parse_patterns(text: str) -> list[str]:
    """Pattern lines of an ignore file: no blanks, no `#` comments, trailing space trimmed."""
    patterns: list[str] = []
    for line in text.splitlines():
        stripped = line.rstrip()
        if not stripped.strip() or stripped.lstrip().startswith("#"):
            continue
        patterns.append(stripped.strip())
    return patterns


@dataclass(frozen=True)
class TemplateSet:
    """All templates, their first comment line (a description) and their version."""

    patterns: Mapping[str, tuple[str, ...]]
    descriptions: Mapping[str, str]
    version: str
    texts: Mapping[str, str] | None = None  # each template as written, comments included

    def names(self) -> list[str]:
        return sorted(self.patterns)

    def __contains__(self, feature: object) -> bool:
        return feature in self.patterns


def _description(text: str) -> str:
    for line in text.splitlines():
        if line.startswith("#"):
            return line.lstrip("# ").strip()
    return ""


def load_templates(directory: Path | None = None) -> TemplateSet:
    """Read every `<feature>.gitignore` in `directory` (the packaged folder by default)."""
    folder = directory or TEMPLATES_DIR
    files = sorted(p for p in folder.iterdir() if p.is_file() and p.name.endswith(SUFFIX))
    digest = hashlib.sha256()
    patterns: dict[str, tuple[str, ...]] = {}
    descriptions: dict[str, str] = {}
    texts: dict[str, str] = {}
    for path in files:
        raw = path.read_bytes()
        digest.update(path.name.encode("utf-8") + b"\0" + raw + b"\0")
        text = raw.decode("utf-8")
        feature = path.name[: -len(SUFFIX)]
        patterns[feature] = tuple(parse_patterns(text))
        descriptions[feature] = _description(text)
        texts[feature] = text
    return TemplateSet(patterns, descriptions, "sha256:" + digest.hexdigest()[:12], texts)
