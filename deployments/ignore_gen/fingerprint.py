"""Fingerprinting: a list of paths becomes a set of features, each with a witness.

Only path names are used; file contents are never read. Every lookup is a dict
or set probe on the lower-cased basename, its extension or the part before its
first dot, so the cost is one pass over the tree whatever the number of rules
(the original scanned every path once per marker).

The witness of a feature is the lexicographically smallest normalised path that
produced it, so the result does not depend on the order of the tree.

Paths inside test-fixture and vendored folders (tests/, fixtures/, testdata/,
vendor/, third_party/, ...) describe other projects: a syntax highlighter's
sample CMakeLists.txt does not make it a CMake project. Their features are
used only when the rest of the tree yields none (a tree of just tests).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import NamedTuple

# Features added to every generation, whatever the input: OS/editor junk and
# secrets are a risk for every stack, including when `features` bypasses
# fingerprinting.
ALWAYS = ("common", "secrets")
IMPLICIT_WITNESS = "(implicit)"
REQUESTED_WITNESS = "(requested)"

# Exact file names (lower case), whatever the folder.
MARKERS: dict[str, tuple[str, ...]] = {
    # Python
    "pyproject.toml": ("python",),
    "setup.py": ("python",),
    "setup.cfg": ("python",),
    "pipfile": ("python",),
    "pipfile.lock": ("python",),
    "poetry.lock": ("python",),
    "uv.lock": ("python",),
    "pdm.lock": ("python",),
    "tox.ini": ("python",),
    "noxfile.py": ("python",),
    "manage.py": ("python", "django"),
    # Node / TypeScript (markers only: a stray .js file in a vendored web
    # asset folder does not make a project an npm project)
    "package.json": ("node",),
    "package-lock.json": ("node",),
    "yarn.lock": ("node",),
    "pnpm-lock.yaml": ("node",),
    "pnpm-workspace.yaml": ("node",),
    "bun.lockb": ("node",),
    "bun.lock": ("node",),
    ".nvmrc": ("node",),
    "lerna.json": ("node",),
    ".yarnrc.yml": ("node",),
    "tsconfig.json": ("typescript",),
    # Node frameworks with build folders of their own
    "next.config.js": ("node", "nextjs"),
    "next.config.mjs": ("node", "nextjs"),
    "next.config.ts": ("node", "nextjs"),
    "gatsby-config.js": ("node", "gatsby"),
    "gatsby-config.mjs": ("node", "gatsby"),
    "gatsby-config.ts": ("node", "gatsby"),
    # Go, Rust
    "go.mod": ("go",),
    "go.sum": ("go",),
    "go.work": ("go",),
    "cargo.toml": ("rust",),
    "cargo.lock": ("rust",),
    "rust-toolchain.toml": ("rust",),
    "rust-toolchain": ("rust",),
    # JVM: Maven, Gradle, Android, sbt
    "pom.xml": ("java", "maven"),
    "mvnw": ("maven",),
    "mvnw.cmd": ("maven",),
    "build.gradle": ("gradle",),
    "build.gradle.kts": ("gradle", "kotlin"),
    "settings.gradle": ("gradle",),
    "settings.gradle.kts": ("gradle", "kotlin"),
    "gradlew": ("gradle",),
    "gradlew.bat": ("gradle",),
    "gradle.properties": ("gradle",),
    "androidmanifest.xml": ("android",),
    "proguard-rules.pro": ("android",),
    "build.sbt": ("scala", "sbt"),
    # Ruby, PHP
    "gemfile": ("ruby",),
    "gemfile.lock": ("ruby",),
    "rakefile": ("ruby",),
    "config.ru": ("ruby",),
    ".ruby-version": ("ruby",),
    "composer.json": ("php",),
    "composer.lock": ("php",),
    "artisan": ("php", "laravel"),
    # .NET
    "global.json": ("dotnet",),
    "nuget.config": ("dotnet",),
    "directory.build.props": ("dotnet",),
    "directory.packages.props": ("dotnet",),
    # Swift / Xcode
    "package.swift": ("swift",),
    "package.resolved": ("swift",),
    "podfile": ("xcode",),
    "project.pbxproj": ("xcode",),
    "cartfile": ("swift",),
    # C/C++ and CMake
    "cmakelists.txt": ("cmake",),
    "cmakepresets.json": ("cmake",),
    "conanfile.txt": ("cpp",),
    "conanfile.py": ("cpp",),
    "vcpkg.json": ("cpp",),
    # Dart / Flutter
    "pubspec.yaml": ("dart",),
    "pubspec.lock": ("dart",),
    "analysis_options.yaml": ("dart",),
    # Elixir, Haskell, R, Julia, Zig
    "mix.exs": ("elixir",),
    "mix.lock": ("elixir",),
    "stack.yaml": ("haskell",),
    "cabal.project": ("haskell",),
    "package.yaml": ("haskell",),
    "renv.lock": ("r",),
    ".rprofile": ("r",),
    "project.toml": ("julia",),
    "juliaproject.toml": ("julia",),
    "manifest.toml": ("julia",),
    "build.zig": ("zig",),
    "build.zig.zon": ("zig",),
    # Terraform, Docker
    ".terraform.lock.hcl": ("terraform",),
    "dockerfile": ("docker",),
    "containerfile": ("docker",),
    ".dockerignore": ("docker",),
    # ML tooling
    "dvc.yaml": ("ml",),
    "dvc.lock": ("ml",),
    "mlproject": ("ml",),
    # Static site generators
    "hugo.toml": ("hugo",),
    "hugo.yaml": ("hugo",),
    ".hugo_build.lock": ("hugo",),
    # LaTeX, Unity
    "latexmkrc": ("latex",),
    ".latexmkrc": ("latex",),
    "projectversion.txt": ("unity",),
}

# Paths (lower case) whose last segments name a framework where a basename alone would not:
# `bin/rails` (Rails' binstub) anywhere in the tree.
PATH_MARKERS: dict[str, tuple[str, ...]] = {
    "bin/rails": ("ruby", "rails"),
    "config/application.rb": ("ruby", "rails"),
}

# Extensions (lower case, with the dot): the part of the basename after its last dot.
EXTENSIONS: dict[str, tuple[str, ...]] = {
    ".py": ("python",),
    ".pyi": ("python",),
    ".pyx": ("python",),
    ".ts": ("typescript",),
    ".tsx": ("typescript",),
    ".mts": ("typescript",),
    ".cts": ("typescript",),
    ".go": ("go",),
    ".rs": ("rust",),
    ".java": ("java",),
    ".kt": ("kotlin",),
    ".kts": ("kotlin",),
    ".rb": ("ruby",),
    ".gemspec": ("ruby",),
    ".rake": ("ruby",),
    ".php": ("php",),
    ".cs": ("dotnet",),
    ".csproj": ("dotnet",),
    ".fs": ("dotnet",),
    ".fsproj": ("dotnet",),
    ".vbproj": ("dotnet",),
    ".sln": ("dotnet",),
    ".slnx": ("dotnet",),
    ".swift": ("swift",),
    ".xcworkspacedata": ("xcode",),
    ".xcscheme": ("xcode",),
    ".xcconfig": ("xcode",),
    ".storyboard": ("xcode",),
    ".xib": ("xcode",),
    ".c": ("cpp",),
    ".h": ("cpp",),
    ".cc": ("cpp",),
    ".cpp": ("cpp",),
    ".cxx": ("cpp",),
    ".hpp": ("cpp",),
    ".hh": ("cpp",),
    ".hxx": ("cpp",),
    ".cmake": ("cmake",),
    ".dart": ("dart",),
    ".ex": ("elixir",),
    ".exs": ("elixir",),
    ".heex": ("elixir",),
    ".hs": ("haskell",),
    ".lhs": ("haskell",),
    ".cabal": ("haskell",),
    ".scala": ("scala",),
    ".sbt": ("scala", "sbt"),
    ".r": ("r",),
    ".rmd": ("r",),
    ".rproj": ("r",),
    ".jl": ("julia",),
    ".zig": ("zig",),
    ".zon": ("zig",),
    ".tf": ("terraform",),
    ".tfvars": ("terraform",),
    ".dockerfile": ("docker",),
    ".ipynb": ("jupyter",),
    ".pt": ("ml",),
    ".pth": ("ml",),
    ".ckpt": ("ml",),
    ".onnx": ("ml",),
    ".safetensors": ("ml",),
    ".gguf": ("ml",),
    ".tflite": ("ml",),
    ".dvc": ("ml",),
    ".tex": ("latex",),
    ".sty": ("latex",),
    ".ltx": ("latex",),
    ".unity": ("unity",),
    ".prefab": ("unity",),
    ".asmdef": ("unity",),
}

# The part of the basename before its first dot, with the extensions it must
# carry (None: any). Catches Dockerfile.dev, compose.override.yaml,
# docker-compose.prod.yml and tsconfig.build.json. Requirements files such as
# requirements-dev.txt are matched by prefix in `fingerprint`.
STEMS: dict[str, tuple[frozenset[str] | None, tuple[str, ...]]] = {
    "dockerfile": (None, ("docker",)),
    "containerfile": (None, ("docker",)),
    "docker-compose": (frozenset({".yml", ".yaml"}), ("docker",)),
    "compose": (frozenset({".yml", ".yaml"}), ("docker",)),
    "tsconfig": (frozenset({".json"}), ("typescript",)),
}

# Directory names whose contents are fixtures or someone else's code.
FIXTURE_DIRS = frozenset(
    {
        "test",
        "tests",
        "spec",
        "specs",
        "__tests__",
        "testdata",
        "test-data",
        "test_data",
        "fixtures",
        "__fixtures__",
        "vendor",
        "third_party",
        "third-party",
        "thirdparty",
        "3rdparty",
        "external",
        "extern",
        "deps",
        "node_modules",
        "bower_components",
        "site-packages",
        ".git",
    }
)


# Folder names whose tracked files are test material or examples: a rule that would ignore
# such a file (a `node_modules/` fixture, a sample `build/` folder) is answered with a
# negation that keeps it (engine.keep); never for the secrets rules.
SAMPLE_DIRS = frozenset(
    {
        "test",
        "tests",
        "__tests__",
        "spec",
        "specs",
        "testdata",
        "test-data",
        "test_data",
        "fixture",
        "fixtures",
        "__fixtures__",
        "example",
        "examples",
        "sample",
        "samples",
        "demo",
        "demos",
        "playground",
    }
)


def _sample_folder(folder: str) -> bool:
    for segment in folder.lower().split("/"):
        if segment in SAMPLE_DIRS or segment.startswith("test") or segment.endswith(("test", "tests")):
            return True
    return False


_SAMPLE_HINT = re.compile("test|spec|fixture|example|sample|demo|playground")


def sample_paths(tree: Iterable[str] | Tree) -> list[str]:
    """The paths of `tree` (normalised) that lie in a test, fixture or example folder."""
    prepared = tree if isinstance(tree, Tree) else prepare(tree)
    if _SAMPLE_HINT.search(prepared.text) is None:
        return []  # one C-level scan rules out most trees without a per-path loop
    memo: dict[str, bool] = {}
    out: list[str] = []
    for path, low in zip(prepared.paths, prepared.lows, strict=True):
        slash = low.rfind("/")
        if slash <= 0:
            continue
        folder = low[:slash]
        inside = memo.get(folder)
        if inside is None:
            inside = memo[folder] = _sample_folder(folder)
        if inside:
            out.append(path)
    return out


@dataclass(frozen=True)
class Fingerprint:
    """Detected features, sorted by name, each with its witness path."""

    witnesses: Mapping[str, str]

    @property
    def features(self) -> list[str]:
        return sorted(self.witnesses)


def normalise(path: str) -> str:
    """`\\` becomes `/`, leading `./` and `/` are dropped, `//` and `/./` collapse."""
    p = path.replace("\\", "/") if "\\" in path else path
    if "//" in p or "/./" in p:
        parts = [seg for seg in p.split("/") if seg and seg != "."]
        return "/".join(parts)
    while p.startswith("./"):
        p = p[2:]
    return p.lstrip("/")


def _note(found: dict[str, str], features: Iterable[str], path: str) -> None:
    for feature in features:
        current = found.get(feature)
        if current is None or path < current:
            found[feature] = path


_ODD = ("\\", "//", "/./", "\n/", "\n./")  # what `normalise` would change (with a leading / or ./)


def _normalised(tree: Iterable[str]) -> list[str]:
    """The tree with `normalise` applied, checked once over the joined text (a C-level scan)
    instead of once per path; most trees need nothing."""
    paths = list(tree)
    text = "\n".join(paths)
    if text.startswith(("/", "./")) or any(odd in text for odd in _ODD):  # substring scans, in C
        return [normalise(p) for p in paths]
    return paths


_STEM_WORDS = (*STEMS, "requirements")


class Tree(NamedTuple):
    """A tree read once: its normalised paths, their joined lower-case text, each in lower case."""

    paths: list[str]
    text: str
    lows: list[str]


def prepare(tree: Iterable[str]) -> Tree:
    """Normalise the paths and lower-case them with one C-level `lower` and `split` (one
    `lower` per path when a path holds a newline or lower-casing changes a length)."""
    paths = _normalised(tree)
    text = "\n".join(paths).lower()
    if text.count("\n") == len(paths) - 1 and len(text) == sum(map(len, paths)) + len(paths) - 1:
        return Tree(paths, text, text.split("\n") if paths else [])
    return Tree(paths, text, [p.lower() for p in paths])


def _stem_hits(name: str, dot: int) -> tuple[str, ...]:
    """Features from the part of a dotted basename before its first dot (Dockerfile.dev,
    compose.override.yaml, tsconfig.build.json, requirements-dev.txt)."""
    first = name.find(".")
    stem = STEMS.get(name[:first])
    if stem is not None and (stem[0] is None or name[dot:] in stem[0]):
        return stem[1]
    if first == dot == len(name) - 4 and name.endswith(".txt") and name.startswith("requirements"):
        return ("python",)
    return ()


def _in_fixture(path: str) -> bool:
    slash = path.rfind("/")
    return slash > 0 and not FIXTURE_DIRS.isdisjoint(path[:slash].lower().split("/"))


def fingerprint(tree: Iterable[str] | Tree) -> Fingerprint:
    """Detect features from path names (case-insensitive on the basename).

    One pass over the tree with two `rfind`s and two dict probes per path (extension,
    basename); paths that produce features are grouped by what they produce. Everything
    else is decided once per tree or per group: the stem rules only run when a stem word
    occurs in the joined tree, a group's witness is the `min` of its paths (in C), and the
    fixture-folder test runs only when that minimum lies in a fixture folder.
    """
    paths, text, lows = tree if isinstance(tree, Tree) else prepare(tree)
    extensions, markers = EXTENSIONS, MARKERS
    stems_on = any(word in text for word in _STEM_WORDS)
    groups: dict[tuple[str, ...], list[str]] = {}
    for path, low in zip(paths, lows, strict=True):
        slash = low.rfind("/")
        dot = low.rfind(".") - slash - 1  # the last dot's index in the basename
        name = low[slash + 1 :]
        hits = extensions.get(name[dot:]) if dot > 0 else None
        marker = markers.get(name)
        if stems_on and dot > 0 and name.startswith(_STEM_WORDS):
            stem = _stem_hits(name, dot)
            marker = (marker or ()) + stem if stem else marker
        if marker:
            hits = hits + marker if hits else marker
        if hits and path:
            group = groups.get(hits)
            if group is None:
                groups[hits] = [path]
            else:
                group.append(path)
    _path_markers(groups, paths, text)
    found: dict[str, str] = {}
    fixtures: dict[str, str] = {}
    for hits, group in groups.items():
        witness = min(group)
        target = found
        if _in_fixture(witness):
            clean = [p for p in group if not _in_fixture(p)]
            for feature in hits:
                _note(fixtures, (feature,), witness)
            if not clean:
                continue
            witness = min(clean)
        _note(target, hits, witness)
    if not found:
        found = fixtures
    if "dart" in found:
        _derive(found, _platform_dirs(paths, lows))
    return Fingerprint(witnesses=found)


def _path_markers(groups: dict[tuple[str, ...], list[str]], paths: list[str], text: str) -> None:
    """Add the paths ending in a PATH_MARKERS entry to their group: a substring scan of the joined
    tree (in C) first, the per-line search only for the markers that occur."""
    for marker, hits in PATH_MARKERS.items():
        if marker not in text:
            continue
        pattern = re.compile(rf"^(?:.*/)?{re.escape(marker)}$", re.MULTILINE)
        lines = {m.start() for m in pattern.finditer(text)}
        if not lines:
            continue
        starts = _line_starts(paths)
        groups.setdefault(hits, []).extend(paths[starts[at]] for at in lines)


def _line_starts(paths: list[str]) -> dict[int, int]:
    """Offset of each path in the joined tree -> its index."""
    offsets: dict[int, int] = {}
    at = 0
    for index, path in enumerate(paths):
        offsets[at] = index
        at += len(path) + 1
    return offsets


def _platform_dirs(paths: list[str], lows: list[str]) -> dict[str, str]:
    """The smallest path under a top-level `android/` and `ios/` folder (Flutter's platforms)."""
    out: dict[str, str] = {}
    for top in ("android", "ios"):
        under = [p for p, low in zip(paths, lows, strict=True) if low.startswith(top + "/") and len(low) > len(top) + 1]
        if under:
            out[top] = min(under)
    return out


def _derive(found: dict[str, str], top_dirs: Mapping[str, str]) -> None:
    """Features that need two signals: Flutter is Dart with platform folders."""
    if "dart" in found and top_dirs:
        _note(found, ("flutter",), min(top_dirs.values()))


def resolve(tree: Iterable[str] | Tree | None, requested: Iterable[str] | None) -> Fingerprint:
    """Fingerprint of `tree` plus the `requested` features plus ALWAYS.

    The always-on features are added the same way for both inputs, so the
    `features` bypass never loses the secrets rules.
    """
    found: dict[str, str] = dict(fingerprint(tree).witnesses) if tree is not None else {}
    for feature in requested or ():
        found.setdefault(feature, REQUESTED_WITNESS)
    for feature in ALWAYS:
        found.setdefault(feature, IMPLICIT_WITNESS)
    return Fingerprint(witnesses=found)
