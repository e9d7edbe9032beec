"""Recorded generator outputs: the trees and options whose results must not change when the
generator is made faster (tests/data/ignore_gen/golden.json).

Cases: every corpus repository's own tree (with and without comments, with provenance) and
synthetic trees that reach the rarer branches: paths to normalise (`\\`, `./`, `//`, `/./`),
upper case, names whose lower case changes length, stems (`Dockerfile.dev`,
`requirements-dev.txt`), path markers (`bin/rails`), fixture-only trees, Flutter platform
folders, kept test/example files, large shuffled monorepo trees and the benchmark's trees
(bench/ignore_gen.py: the corpus repositories side by side, 10k and 100k paths; the
shuffled synthetic tree, 10k).

Regenerate (only when a change of output is intended):
`python -m tests.deployments.ignore_gen.golden`.
"""

from __future__ import annotations

import hashlib
import json
import random
from pathlib import Path

from deployments.ignore_gen.engine import Engine, Generated, Options
from deployments.ignore_gen.rules_table import load_rules_table
from deployments.ignore_gen.templates import load_templates
from tests.deployments.ignore_gen.corpus import records
from tests.deployments.ignore_gen.trees import tree_of

GOLDEN = Path(__file__).resolve().parents[2] / "data" / "ignore_gen" / "golden.json"

PLAIN = Options()
BARE = Options(include_comments=False)
PROVENANCE = Options(include_provenance=True, extras=("scratch/", "*.local"))

HAND_MADE: dict[str, list[str]] = {
    "empty": [],
    "odd-spellings": [
        "./src\\app\\Main.PY",
        "//lib//util.go",
        "pkg/./mod/x.rs",
        "/abs/Cargo.TOML",
        "./././package.json",
        "Web\\Next.Config.MJS",
    ],
    "unicode-lower": ["İstanbul/app.py", "ẞ/Gemfile", "docs/ΣΑΣ.tex", "Ⅻ/Dockerfile"],
    "stems": [
        "Dockerfile.dev",
        "deploy/Containerfile.prod",
        "docker-compose.prod.yml",
        "compose.override.yaml",
        "compose.txt",
        "tsconfig.build.json",
        "tsconfig.base.yaml",
        "requirements-dev.txt",
        "requirements.txt",
        "requirements/base.txt",
        "requirements.in",
    ],
    "rails": ["bin/rails", "config/application.rb", "app/models/user.rb", "log/.keep", "Gemfile"],
    "fixtures-only": ["tests/fixtures/CMakeLists.txt", "vendor/lib/pom.xml", "testdata/x.go"],
    "fixtures-and-project": [
        "tests/fixtures/CMakeLists.txt",
        "tests/a.py",
        "vendor/github.com/x/y.go",
        "go.mod",
        "node_modules/left-pad/index.js",
        "main.go",
    ],
    "fixture-lookalikes": [
        "testing/go.mod",
        "a/main.py",
        "mytests/x.rb",
        "Vendor/Gemfile",
        "src/Tests/CMakeLists.txt",
        "latest/pom.xml",
        "contest/package.json",
    ],
    "flutter": ["pubspec.yaml", "lib/main.dart", "android/app/build.gradle", "ios/Runner/Info.plist", "web/x"],
    "dart-only": ["pubspec.yaml", "lib/main.dart", "src/android/x"],
    "kept": [
        "package.json",
        "packages/vite/src/node/__tests__/fixtures/node_modules/dep/index.js",
        "packages/vite/src/node/__tests__/fixtures/node_modules/dep/dist/a.js",
        "examples/app/build/out.txt",
        "examples/app/.env",
        "playground/x/dist/index.html",
        "samples/py/__pycache__/m.cpython-311.pyc",
        "demo/target/debug/x",
        "mytests/coverage/lcov.info",
        "unittest/.venv/bin/python",
        "fixture/[weird]*name?.log",
        "Cargo.toml",
        "pyproject.toml",
    ],
    "all-markers": [
        "Makefile",
        "build.gradle.kts",
        "AndroidManifest.xml",
        "build.sbt",
        "artisan",
        "composer.json",
        "App.csproj",
        "Package.swift",
        "Podfile",
        "x.xcodeproj/project.pbxproj",
        "CMakeLists.txt",
        "conanfile.py",
        "mix.exs",
        "stack.yaml",
        "renv.lock",
        "Project.toml",
        "build.zig",
        "main.tf",
        ".terraform.lock.hcl",
        "nb/explore.ipynb",
        "model.safetensors",
        "dvc.yaml",
        "hugo.toml",
        "paper.tex",
        "ProjectSettings/ProjectVersion.txt",
        "Assets/Scenes/Main.unity",
        "gatsby-config.ts",
        "manage.py",
        ".py",
        "py",
        "noext",
        "dir.py/file",
        "a/.tf",
    ],
}


def monorepo(size: int, seed: int) -> list[str]:
    """A shuffled monorepo tree with test folders, upper case and a few fixture paths."""
    rng = random.Random(seed)
    exts = [".py", ".ts", ".tsx", ".rs", ".md", ".json", ".png", ".yaml", ".txt", ".go", ".css", ".JS", ".Java"]
    folders = ["src", "lib", "tests", "docs", "Examples", "vendor", "pkg", "d1", "d2", "spec", "build", "App"]
    tree = ["pyproject.toml", "web/package.json", "crates/core/Cargo.toml", "Dockerfile", "README.md"]
    while len(tree) < size:
        depth = rng.randint(1, 5)
        path = "/".join(rng.choice(folders) for _ in range(depth))
        tree.append(f"{path}/f{len(tree)}{rng.choice(exts)}")
    rng.shuffle(tree)
    return tree


def cases() -> dict[str, tuple[list[str], Options]]:
    out: dict[str, tuple[list[str], Options]] = {}
    for rec in records():
        out[f"corpus:{rec['repo']}"] = (list(rec["files"]), PLAIN)
        out[f"corpus-bare:{rec['repo']}"] = (list(rec["files"]), BARE)
    for repo in [r["repo"] for r in records()][::5]:
        out[f"corpus-provenance:{repo}"] = (record_files(repo), PROVENANCE)
    for name, tree in HAND_MADE.items():
        out[f"hand:{name}"] = (tree, PLAIN)
        out[f"hand-provenance:{name}"] = (tree, PROVENANCE)
    for size, seed in ((1_000, 1), (10_000, 2), (30_000, 3)):
        out[f"monorepo:{size}"] = (monorepo(size, seed), PLAIN)
    for kind, size in (("corpus", 10_000), ("synthetic", 10_000), ("corpus", 100_000)):
        out[f"bench-{kind}:{size}"] = (tree_of(kind, size), PLAIN)
    return out


def record_files(repo: str) -> list[str]:
    for rec in records():
        if rec["repo"] == repo:
            return list(rec["files"])
    raise KeyError(repo)


def summary(generated: Generated) -> dict[str, object]:
    """What a request sees: the content's hash, every rule and every witness."""
    rules = json.dumps([r.as_dict() for r in generated.rules], sort_keys=True)
    return {
        "output_hash": generated.output_hash,
        "rules_hash": "sha256:" + hashlib.sha256(rules.encode("utf-8")).hexdigest(),
        "witnesses": dict(sorted(generated.fingerprint.witnesses.items())),
    }


def outputs(engine: Engine) -> dict[str, dict[str, object]]:
    return {name: summary(engine.generate(tree, None, options)) for name, (tree, options) in cases().items()}


def main() -> None:
    engine = Engine(load_templates(), load_rules_table())
    GOLDEN.write_text(json.dumps(outputs(engine), indent=1, sort_keys=True, ensure_ascii=False) + "\n")
    print(f"wrote {GOLDEN}")


if __name__ == "__main__":
    main()
