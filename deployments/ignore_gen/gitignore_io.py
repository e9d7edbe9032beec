"""gitignore.io's API shape over the same templates, for the scripts written against it.

`GET /api/python,node` answers text/plain: a `# Created by <url>` line, one
`### Name ###` section per requested template (names lower-cased, de-duplicated and
sorted), `# End of <url>`. As gitignore.io does, a line already emitted by an earlier
section is dropped from later ones, except blank lines and comments (`# ...`). An unknown
name keeps its place as the line
`#!! ERROR: <name> is undefined. Use list command to see defined gitignore types !!#`,
and the answer is then 404 (with the known sections still in it). `GET /api/list`
lists the names, comma-separated, 5 to a line (`?format=lines`: one a line;
`?format=json`: `{name: {key, name, fileName, contents}}`).

gitignore.io names that mean one of this generator's features are accepted as aliases
(`c++` → cpp, `macos` → common, ...); the section is titled with the feature, once.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from deployments.ignore_gen.templates import TemplateSet

ALIASES = {
    "c++": "cpp",
    "c": "cpp",
    "csharp": "dotnet",
    "visualstudio": "dotnet",
    "jupyternotebooks": "jupyter",
    "androidstudio": "android",
    "dotenv": "secrets",
    "macos": "common",
    "osx": "common",
    "windows": "common",
    "linux": "common",
    "visualstudiocode": "common",
    "vscode": "common",
    "jetbrains": "common",
    "jetbrains+all": "common",
    "intellij": "common",
    "vim": "common",
    "emacs": "common",
    "nodejs": "node",
    "golang": "go",
    "tex": "latex",
}
NAME = re.compile(r"[a-z0-9][a-z0-9_+.-]{0,63}")
PER_LINE = 5


class BadName(ValueError):
    """A name that cannot be echoed back safely (it could inject lines into the file)."""


@dataclass(frozen=True)
class Answer:
    text: str
    unknown: list[str]


def title(feature: str) -> str:
    return feature.capitalize()


def requested(names: str) -> list[str]:
    """Lower-cased, trimmed, de-duplicated and sorted names; BadName for an unsafe one."""
    out = sorted({n.strip().lower() for n in names.split(",") if n.strip()})
    for name in out:
        if not NAME.fullmatch(name):
            raise BadName(f"invalid template name {name[:40]!r}: letters, digits and _ + . - only")
    return out


def render(templates: TemplateSet, names: list[str], url: str) -> Answer:
    """The file gitignore.io would serve for `names` (already passed through `requested`)."""
    texts = templates.texts or {}
    lines = [f"# Created by {url}", f"# Edit at {url}", ""]
    seen: set[str] = set()
    sections: set[str] = set()
    unknown: list[str] = []
    for name in names:
        feature = ALIASES.get(name, name)
        if feature not in templates.patterns:
            unknown.append(name)
            lines += [f"#!! ERROR: {name} is undefined. Use list command to see defined gitignore types !!#", ""]
            continue
        if feature in sections:
            continue
        sections.add(feature)
        lines += [f"### {title(feature)} ###"]
        for line in texts.get(feature, "\n".join(templates.patterns[feature])).splitlines():
            stripped = line.rstrip()
            if stripped and not stripped.startswith("# "):
                if stripped in seen:
                    continue
                seen.add(stripped)
            lines.append(stripped)
        lines.append("")
    lines += [f"# End of {url}", ""]
    return Answer("\n".join(lines), unknown)


def listing(templates: TemplateSet) -> list[str]:
    """Every name the API answers: the features and the gitignore.io aliases, sorted."""
    return sorted(set(templates.patterns) | {a for a, f in ALIASES.items() if f in templates.patterns})


def list_text(templates: TemplateSet, fmt: str) -> str:
    names = listing(templates)
    if fmt == "lines":
        return "\n".join(names) + "\n"
    rows = [",".join(names[i : i + PER_LINE]) for i in range(0, len(names), PER_LINE)]
    return "\n".join(rows) + "\n"


def list_json(templates: TemplateSet) -> dict[str, dict[str, str]]:
    texts = templates.texts or {}
    out: dict[str, dict[str, str]] = {}
    for name in listing(templates):
        feature = ALIASES.get(name, name)
        out[name] = {
            "key": name,
            "name": title(feature),
            "fileName": f"{title(feature)}.gitignore",
            "contents": texts.get(feature, ""),
        }
    return out
