"""Fingerprinting: markers, extensions, normalisation, witnesses, fixtures."""

from __future__ import annotations

import random

import pytest

from deployments.ignore_gen.fingerprint import (
    ALWAYS,
    IMPLICIT_WITNESS,
    REQUESTED_WITNESS,
    fingerprint,
    normalise,
    resolve,
)
from deployments.ignore_gen.templates import load_templates

pytestmark = pytest.mark.usefixtures("both_passes")  # the compiled passes and their Python twins

# One tree per ecosystem: (feature expected, a path that must reveal it).
ECOSYSTEMS = [
    ("python", "pyproject.toml"),
    ("python", "requirements-dev.txt"),
    ("python", "pkg/mod.py"),
    ("node", "package.json"),
    ("node", "web/pnpm-lock.yaml"),
    ("typescript", "src/app.tsx"),
    ("typescript", "tsconfig.build.json"),
    ("go", "go.mod"),
    ("go", "cmd/main.go"),
    ("rust", "Cargo.toml"),
    ("rust", "src/lib.rs"),
    ("java", "src/main/java/A.java"),
    ("kotlin", "src/main/kotlin/A.kt"),
    ("maven", "pom.xml"),
    ("gradle", "build.gradle.kts"),
    ("gradle", "gradlew"),
    ("android", "app/src/main/AndroidManifest.xml"),
    ("ruby", "Gemfile"),
    ("ruby", "lib/x.rb"),
    ("php", "composer.json"),
    ("php", "index.php"),
    ("dotnet", "App/App.csproj"),
    ("dotnet", "App.sln"),
    ("dotnet", "Program.cs"),
    ("swift", "Package.swift"),
    ("xcode", "App.xcodeproj/project.pbxproj"),
    ("cpp", "src/main.cpp"),
    ("cpp", "include/x.h"),
    ("cmake", "CMakeLists.txt"),
    ("dart", "pubspec.yaml"),
    ("elixir", "mix.exs"),
    ("haskell", "stack.yaml"),
    ("haskell", "x.cabal"),
    ("scala", "src/A.scala"),
    ("sbt", "build.sbt"),
    ("r", "R/fit.R"),
    ("r", "analysis.Rmd"),
    ("julia", "src/M.jl"),
    ("zig", "build.zig"),
    ("terraform", "main.tf"),
    ("docker", "Dockerfile"),
    ("docker", "Dockerfile.dev"),
    ("docker", "compose.yaml"),
    ("docker", "docker-compose.override.yml"),
    ("docker", "deploy/api.dockerfile"),
    ("jupyter", "nb/explore.ipynb"),
    ("ml", "weights/model.safetensors"),
    ("ml", "dvc.yaml"),
    ("latex", "paper/main.tex"),
    ("unity", "ProjectSettings/ProjectVersion.txt"),
    ("unity", "Assets/Scenes/Main.unity"),
]


@pytest.mark.parametrize(("feature", "path"), ECOSYSTEMS)
def test_each_ecosystem_is_detected(feature: str, path: str) -> None:
    assert feature in fingerprint([path]).witnesses


def test_at_least_25_ecosystems_with_templates() -> None:
    detected = {feature for feature, _ in ECOSYSTEMS}
    templates = set(load_templates().names())
    assert len(detected) >= 25
    assert detected <= templates
    assert set(ALWAYS) <= templates


def test_flutter_is_dart_with_platform_folders() -> None:
    fp = fingerprint(["pubspec.yaml", "lib/main.dart", "android/app/build.gradle", "ios/Runner/Info.plist"])
    assert {"dart", "flutter"} <= set(fp.features)
    assert fp.witnesses["flutter"] == "android/app/build.gradle"
    assert "flutter" not in fingerprint(["pubspec.yaml", "lib/main.dart"]).features


@pytest.mark.parametrize(
    ("platform", "witness"),
    [
        (["ANDROID/app/x", "ios/y"], "ANDROID/app/x"),  # any case, the smallest path
        (["İOS/x", "iOS/Runner"], "iOS/Runner"),  # `İ` lower-cases to two characters: not `ios/`
        (["\u212aotlin/android/x"], None),  # not top-level
        (["android/", "ios"], None),  # nothing under the folder
        (["android/\udcff", "Android/é/x"], "Android/é/x"),
    ],
)
def test_flutter_platform_folders_are_top_level_and_case_insensitive(platform: list[str], witness: str | None) -> None:
    fp = fingerprint(["pubspec.yaml", "lib/main.dart", *platform])
    assert fp.witnesses.get("flutter") == witness


@pytest.mark.parametrize("path", ["PACKAGE.JSON", "Package.Json", "deep/nested/dir/package.json"])
def test_markers_are_case_insensitive_in_any_folder(path: str) -> None:
    assert "node" in fingerprint([path]).features


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("./src/a.py", "src/a.py"),
        ("././src/a.py", "src/a.py"),
        ("src\\pkg\\a.py", "src/pkg/a.py"),
        (".\\src\\a.py", "src/a.py"),
        ("/abs/a.py", "abs/a.py"),
        ("a//b/./c.py", "a/b/c.py"),
        ("plain.py", "plain.py"),
    ],
)
def test_normalise(raw: str, expected: str) -> None:
    assert normalise(raw) == expected


def test_witness_is_smallest_normalised_path_whatever_the_order() -> None:
    tree = ["z/Cargo.toml", ".\\b\\main.rs", "./a/lib.rs", "c.rs"]
    first = fingerprint(tree)
    assert first.witnesses["rust"] == "a/lib.rs"
    rng = random.Random(7)
    for _ in range(20):
        shuffled = tree[:]
        rng.shuffle(shuffled)
        assert fingerprint(shuffled) == first


def test_unknown_files_give_no_feature() -> None:
    assert fingerprint(["README.md", "LICENSE", "docs/index.html", ".gitignore"]).features == []


def test_fixture_folders_do_not_decide_the_stack() -> None:
    tree = [
        "Cargo.toml",
        "src/main.rs",
        "tests/syntax/CMakeLists.txt",
        "tests/syntax/x.tf",
        "vendor/lib/setup.py",
        "testdata/go.mod",
    ]
    assert fingerprint(tree).features == ["rust"]


def test_fixtures_count_when_nothing_else_does() -> None:
    assert fingerprint(["tests/test_x.py"]).features == ["python"]


def test_resolve_adds_always_features_for_both_inputs() -> None:
    by_tree = resolve(["pyproject.toml"], None)
    by_features = resolve(None, ["python"])
    for fp in (by_tree, by_features):
        assert set(ALWAYS) <= set(fp.features)
        assert fp.witnesses["secrets"] == IMPLICIT_WITNESS
    assert by_features.witnesses["python"] == REQUESTED_WITNESS
    assert by_tree.witnesses["python"] == "pyproject.toml"


def test_large_tree_is_one_pass() -> None:
    tree = [f"pkg{i % 97}/mod{i}.py" for i in range(100_000)] + ["web/package.json"]
    fp = fingerprint(tree)
    assert fp.features == ["node", "python"]
    assert fp.witnesses["python"] == "pkg0/mod0.py"


def test_a_stem_is_found_in_a_basename_that_holds_a_newline() -> None:
    """Git paths may hold newlines; the stem search does not lose such a basename."""
    fp = fingerprint(["src/Dockerfile.dev\nold", "README.md"])
    assert fp.witnesses == {"docker": "src/Dockerfile.dev\nold"}
