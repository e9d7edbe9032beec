"""Fingerprinting: a list of paths becomes a set of features, each with a witness.

Only path names are used; file contents are never read. The tree is sorted and cut
into columns once (`prepare`: lower-case path, basename, folder, extension), each by
a C-level pass; the features are then set intersections of those columns with the
tables and dict probes, never a per-path Python loop nor a per-path regex, so the
cost is a few C passes over the tree whatever the number of rules (the original
scanned every path once per marker).

The witness of a feature is the lexicographically smallest normalised path that
produced it, so the result does not depend on the order of the tree.

Paths inside test-fixture and vendored folders (tests/, fixtures/, testdata/,
vendor/, third_party/, ...) describe other projects: a syntax highlighter's
sample CMakeLists.txt does not make it a CMake project. Their features are
used only when the rest of the tree yields none (a tree of just tests).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cached_property
from itertools import compress, repeat
from operator import itemgetter, not_

from deployments.ignore_gen import passes

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


# Every fixture folder name holds one of these words.
_FIXTURE_WORDS = (
    "test",
    "spec",
    "fixture",
    "vendor",
    "third",
    "3rdparty",
    "extern",
    "deps",
    "_modules",
    "_components",
    "site-packages",
    ".git",
)


def sample_paths(tree: Iterable[str] | Tree) -> list[str]:
    """The paths of `tree` (normalised, in code-point order) that lie in a test, fixture or
    example folder: a folder with a segment in SAMPLE_DIRS, or that starts with `test` or ends
    with `test` or `tests` (`mytests/`, `unittest/`), case-insensitive; picked by `prepare`'s
    pass (`Tree.samples`)."""
    prepared = tree if isinstance(tree, Tree) else prepare(tree)
    return prepared.samples[0]


@dataclass(frozen=True)
class Fingerprint:
    """Detected features, sorted by name, each with its witness."""

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


_LAST = itemgetter(2)  # of a `str.rpartition`


@dataclass(frozen=True)
class Tree:
    """A tree read once (`passes.tree_scan`: a C loop over each path's bytes when the extension
    is built, the twin's C-level `map`s when not).

    `paths` are normalised and in code-point order, so the first path with a property is the
    smallest one (the witness). The scan gives the first row of each marker name and extension
    (`name_firsts`, `tail_firsts`), every row of the names a stem or path marker may start
    (`watched`), and the paths in sample folders (`samples`): all a generation needs. The
    per-row columns are made only when asked for (fingerprinting's fixture-folder path,
    Flutter's platform folders), in that order, in lower case: each path's basename, its folder
    with a trailing `/` (empty at the top) and its extension without the dot, `''` when the
    basename has no `.` after its first character (`.py`, `py` and `makefile` have none); and
    the distinct folders (`folder_list`: first seen first)."""

    paths: list[str]
    name_firsts: dict[str, int]  # each name of MARKERS in the tree -> its first row
    tail_firsts: dict[str, int]  # each extension of EXTENSIONS in the tree -> its first row
    watched: dict[str, list[int]]  # each name starting with a word of _WATCH -> its rows
    # The paths in sample folders (`sample_paths`), with their names and folders case kept.
    samples: passes.Samples

    @cached_property
    def _columns(self) -> passes.TreeColumns:
        return passes.tree_columns(self.paths, {}, {}, (), frozenset(), (), ())

    @property
    def names(self) -> list[str]:
        return self._columns[0]

    @property
    def folders(self) -> list[str]:
        return self._columns[1]

    @property
    def tails(self) -> list[str]:
        return self._columns[2]

    @property
    def folder_list(self) -> list[str]:
        """The distinct folders, first seen first."""
        return self._columns[3]

    @cached_property
    def folder_text(self) -> str:
        """The distinct folders joined by newlines (for substring tests)."""
        return "\n".join(self.folder_list)


_STEM_WORDS = (*STEMS, "requirements")
_TEST_ENDS = ("test", "tests")
_TAILS = {ext[1:]: hits for ext, hits in EXTENSIONS.items()}  # keyed like Tree.tails


def prepare(tree: Iterable[str]) -> Tree:
    """Sort, split into columns, and normalise (and split again) only when the pass found
    something to change: a `\\`, `//` or `/./`, a leading `/` or `./` (rare)."""
    paths = sorted(tree)
    columns, clean = _columns(paths)
    return columns if clean else _columns(sorted(map(normalise, paths)))[0]


def _columns(paths: list[str]) -> tuple[Tree, bool]:
    """The tree of sorted `paths`, and whether they were normalised already
    (`passes.tree_scan`: one C loop when built; it also takes `paths`, when they are all exact
    `str`, out of the collector's walks, or a collection in a large tree's kept-fixture pass
    would walk every row)."""
    scanned = passes.tree_scan(paths, MARKERS, _TAILS, _WATCH, SAMPLE_DIRS, ("test",), _TEST_ENDS)
    name_firsts, tail_firsts, watched, samples, clean = scanned
    return Tree(paths, name_firsts, tail_firsts, watched, samples), clean


def _folders_with(tree: Tree, words: Iterable[str], segments: frozenset[str]) -> set[str]:
    """The distinct folders with a segment in `segments`. Nothing is looked at unless the
    joined folders hold one of `words` (every such segment holds one); then one pass over the
    distinct folders (`passes.holding_like`: in C, an ASCII folder's segments compared as spans
    of its bytes, no str made per segment)."""
    if not any(word in tree.folder_text for word in words):
        return set()
    listed = tree.folder_list
    return set(map(listed.__getitem__, passes.holding_like(listed, segments, (), ())))


_PATH_MARKERS = [
    (marker.rpartition("/")[0] + "/", marker.rpartition("/")[2], hits) for marker, hits in PATH_MARKERS.items()
]
# The words whose names `prepare` keeps every row of: a stem's first word, a path marker's basename.
_WATCH = (*_STEM_WORDS, *(last for _, last, _ in _PATH_MARKERS))


def _stem_hits(name: str) -> tuple[str, ...]:
    """Features from the part of a dotted basename before its first dot (Dockerfile.dev,
    compose.override.yaml, tsconfig.build.json, requirements-dev.txt)."""
    dot = name.rfind(".")
    if dot <= 0:
        return ()
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


def _rare(tree: Tree) -> list[tuple[int, tuple[str, ...]]]:
    """The rows that produce features by a stem (`Dockerfile.dev`) or a path marker
    (`bin/rails`), with what they produce, ascending: from the rows `prepare`'s pass gathered
    for the names starting with a stem word or a marker's basename (`Tree.watched`)."""
    watched = tree.watched
    out = [(at, hits) for name, rows in watched.items() if (hits := _stem_hits(name)) for at in rows]
    paths = tree.paths
    for parent, last, hits in _PATH_MARKERS:
        for at in watched.get(last, ()):
            folder = _folder_of(paths[at])
            if folder == parent or folder.endswith("/" + parent):
                out.append((at, hits))
    return sorted(out)


def _folder_of(path: str) -> str:
    """A path's folder as `Tree.folders` holds it: lower-cased, up to its last `/` included."""
    low = path.lower()
    return low[: low.rfind("/") + 1]


def fingerprint(tree: Iterable[str] | Tree) -> Fingerprint:
    """Detect features from path names (case-insensitive on the basename).

    No per-path Python: the extensions and marker names present are set intersections with
    the tree's columns, and each one's witness is its first row in the sorted tree outside
    fixture folders (`passes.first_rows`); fixture folders are decided once per distinct folder, and
    only when a witness lies in one.
    Stems and path markers are looked for among the distinct basenames. A feature's witness
    is its smallest path outside fixture folders; when no feature has one, the fixtures'
    features count, each with its smallest path.
    """
    prepared = tree if isinstance(tree, Tree) else prepare(tree)
    rare = _rare(prepared)
    paths = prepared.paths
    found = _found(prepared.tail_firsts, prepared.name_firsts, paths, [(paths[at], hits) for at, hits in rare])
    if any(_in_fixture(path) for path in found.values()):  # decided per distinct folder only then
        fixtures = _folders_with(prepared, _FIXTURE_WORDS, FIXTURE_DIRS)
        if fixtures:
            folders = prepared.folders
            rows = list(map(not_, map(fixtures.__contains__, folders)))
            kept_rare = [(paths[at], hits) for at, hits in rare if folders[at] not in fixtures]
            tails, names, clean = (list(compress(column, rows)) for column in (prepared.tails, prepared.names, paths))
            for column in (rows, tails, names, clean):  # as long as the tree: out of the collector's walks
                passes.settle(column)
            firsts = passes.first_rows(tails, _TAILS), passes.first_rows(names, MARKERS)
            found = _found(*firsts, clean, kept_rare) or found
    if "dart" in found:
        _derive(found, _platform_dirs(prepared))
    return Fingerprint(witnesses=found)


def _found(
    tail_firsts: dict[str, int],
    name_firsts: dict[str, int],
    paths: list[str],
    rare: list[tuple[str, tuple[str, ...]]],
) -> dict[str, str]:
    """Each feature the rows produce -> its smallest path (the first row of its extensions and
    marker names in the sorted rows, or a `rare` path)."""
    found: dict[str, str] = {}
    for firsts, table in ((tail_firsts, _TAILS), (name_firsts, MARKERS)):
        for key, at in firsts.items():
            _note(found, table[key], paths[at])
    for path, hits in rare:
        _note(found, hits, path)
    return found


def _platform_dirs(tree: Tree) -> dict[str, str]:
    """The smallest path under a top-level `android/` and `ios/` folder (Flutter's platforms),
    case-insensitive: from the lower-cased folder and name columns (a lower-cased path is its
    folder and its name), with no lower-cased copy of the paths."""
    out: dict[str, str] = {}
    for top in ("android/", "ios/"):
        inside = list(map(str.startswith, tree.folders, repeat(top)))
        passes.settle(inside)  # as long as the tree: out of the collector's walks
        columns = (tree.paths, tree.folders, tree.names)
        picked = zip(*(compress(column, inside) for column in columns), strict=True)
        under = [path for path, folder, name in picked if len(folder) + len(name) > len(top)]
        if under:
            out[top[:-1]] = min(under)
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
