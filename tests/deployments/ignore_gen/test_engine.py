"""Generation engine: order, determinism, hashes, sections, provenance, diff."""

from __future__ import annotations

import hashlib
import json
import random
from pathlib import Path

import pytest

from deployments.ignore_gen.engine import (
    CORE_VERSION,
    HEADER,
    Engine,
    Options,
    UnknownFeatureError,
    content_hash,
    existing_patterns,
)
from deployments.ignore_gen.rules_table import (
    RuleEntry,
    RulesTable,
    RulesTableError,
    build_table,
    load_rules_table,
    table_version,
)
from deployments.ignore_gen.templates import TEMPLATES_DIR, load_templates, parse_patterns

V01_TABLE = {
    "version": "sha256:72fd0c323cc1",
    "rules": [
        {"features": ["node"], "patterns": ["*.tmp", ".DS_Store", ".idea/", ".vscode/", "Thumbs.db"]},
        {"features": ["python"], "patterns": [".DS_Store", ".env", ".idea/", ".vscode/", "Thumbs.db"]},
    ],
}


@pytest.fixture(scope="module")
def engine() -> Engine:
    return Engine(load_templates(), load_rules_table())


def test_rules_table_version_vectors() -> None:
    assert table_version([]) == "sha256:4f53cda18c2b"
    assert build_table(V01_TABLE).version == "sha256:72fd0c323cc1"
    shuffled = {
        "rules": [
            {"patterns": ["Thumbs.db", ".vscode/", ".env", ".idea/", ".DS_Store", ".env"], "features": ["python"]},
            V01_TABLE["rules"][0],
        ]
    }
    assert build_table(shuffled).version == "sha256:72fd0c323cc1"


def test_rules_table_rejects_wrong_declared_hash_and_bad_shapes() -> None:
    with pytest.raises(RulesTableError, match="hashes to"):
        build_table({"version": "sha256:000000000000", "rules": V01_TABLE["rules"]})
    with pytest.raises(RulesTableError):
        build_table({"rules": [{"features": [], "patterns": ["x"]}]})
    with pytest.raises(RulesTableError):
        build_table({"rules": "nope"})


def test_committed_rules_table_is_consistent() -> None:
    data = json.loads((TEMPLATES_DIR.parent / "rules_table.json").read_text())
    table = build_table(data)
    assert data["version"] == table.version
    assert table.entries, "the mined table must not be empty"


def test_templates_version_hashes_names_and_bytes(tmp_path: Path) -> None:
    (tmp_path / "b.gitignore").write_text("# b\nb/\n")
    (tmp_path / "a.gitignore").write_text("# a\na/\n")
    expected = hashlib.sha256(b"a.gitignore\0# a\na/\n\0b.gitignore\0# b\nb/\n\0").hexdigest()[:12]
    assert load_templates(tmp_path).version == "sha256:" + expected


def test_every_template_explains_its_patterns() -> None:
    """Each block of patterns is preceded by a comment saying why it is there."""
    for path in sorted(TEMPLATES_DIR.glob("*.gitignore")):
        lines = path.read_text().splitlines()
        assert lines[0].startswith("# "), path.name
        previous = ""
        for line in lines:
            if line and not line.startswith("#") and not previous:
                pytest.fail(f"{path.name}: pattern block at {line!r} has no comment above it")
            previous = line if line else ""
        assert parse_patterns(path.read_text()), path.name


def test_lockfiles_sources_and_ci_are_never_template_patterns() -> None:
    committed = [
        "package-lock.json",
        "yarn.lock",
        "pnpm-lock.yaml",
        "Cargo.lock",
        "go.sum",
        "poetry.lock",
        "uv.lock",
        "Gemfile.lock",
        "composer.lock",
        "Package.resolved",
        "pubspec.lock",
        "mix.lock",
        ".terraform.lock.hcl",
        "packages.lock.json",
        "Manifest.toml",
        ".python-version",
        "gradlew",
        "gradle-wrapper.jar",
        "mvnw",
        ".gitlab-ci.yml",
        ".github",
        ".env.example",
    ]
    everything = {p for pats in load_templates().patterns.values() for p in pats}
    for name in committed:
        assert name not in everything


def test_generation_is_deterministic_whatever_the_order(engine: Engine) -> None:
    tree = ["pyproject.toml", "src/app/main.py", "web/package.json", "web/src/x.ts", "Dockerfile"]
    extras = ["*.tmp", "!keep.tmp", "scratch/"]
    base = engine.generate(tree, ["latex"], Options(extras=tuple(extras)))
    rng = random.Random(1)
    for _ in range(10):
        t, e = tree[:], extras[:]
        rng.shuffle(t)
        rng.shuffle(e)
        again = engine.generate(t, ["latex"], Options(extras=tuple(e)))
        assert again.content.encode() == base.content.encode()
        assert again.output_hash == base.output_hash
    assert base.output_hash == "sha256:" + hashlib.sha256(base.content.encode("utf-8")).hexdigest()
    assert base.output_hash == content_hash(base.content)


def test_layout_header_sections_and_trailing_newline(engine: Engine) -> None:
    result = engine.generate(["pom.xml"], None, Options(extras=("scratch/",)))
    lines = result.content.split("\n")
    assert lines[0] == HEADER
    assert lines[1] == (
        f"# core={CORE_VERSION} templates={engine.templates.version} rules_table={engine.table.version}"
    )
    assert lines[2] == "# features: common, java, maven, secrets"
    sections = [line for line in lines if line.startswith("# --- ")]
    assert sections == ["# --- template ---", "# --- mined ---", "# --- user_extra ---"]
    assert result.content.endswith("\n") and not result.content.endswith("\n\n")
    assert "\r" not in result.content
    assert lines[-2] == "scratch/"


def test_sources_order_dedup_and_negations_last(engine: Engine) -> None:
    result = engine.generate(None, ["python"], Options(extras=("__pycache__/", "zzz", "!aaa")))
    ranks = [("template", "mined", "user_extra").index(r.source) for r in result.rules]
    assert ranks == sorted(ranks)
    patterns = [r.pattern for r in result.rules]
    assert len(patterns) == len(set(patterns))
    # a template line shadows an identical user extra
    assert [r.source for r in result.rules if r.pattern == "__pycache__/"] == ["template"]
    for source in ("template", "user_extra"):
        section = [r.pattern for r in result.rules if r.source == source]
        negs = [p.startswith("!") for p in section]
        assert negs == sorted(negs)
    extras = [r.pattern for r in result.rules if r.source == "user_extra"]
    assert extras == ["zzz", "!aaa"]


def test_features_bypass_keeps_secrets(engine: Engine) -> None:
    by_features = engine.generate(None, ["python"], Options(include_comments=False))
    by_tree = engine.generate(["pyproject.toml"], None, Options(include_comments=False))
    for result in (by_features, by_tree):
        patterns = {r.pattern for r in result.rules}
        assert {".env", ".env.*", "*.pem", "*.key", "*.p12", "*.keystore", "id_rsa"} <= patterns
        assert "!.env.example*" in patterns
    assert by_features.content == by_tree.content


def test_unknown_feature_is_an_error(engine: Engine) -> None:
    with pytest.raises(UnknownFeatureError) as info:
        engine.generate(None, ["python", "cobol", "fortran"], Options())
    assert info.value.unknown == ["cobol", "fortran"]


def test_mined_rules_fire_on_their_features(engine: Engine) -> None:
    result = engine.generate(["pom.xml", "src/main/java/A.java"], None, Options())
    mined = [r for r in result.rules if r.source == "mined"]
    assert mined and all(r.feature in ("java", "maven") for r in mined)
    assert ".classpath" in {r.pattern for r in mined}
    assert not [r for r in engine.generate(["go.mod"], None, Options()).rules if r.source == "mined"]


def test_table_entries_fire_on_feature_subsets() -> None:
    table = RulesTable((RuleEntry(("docker", "node"), ("pair/",)), RuleEntry(("node",), ("n/",))), "sha256:x")
    engine = Engine(load_templates(), table)
    only_node = {r.pattern for r in engine.generate(["package.json"], None, Options()).rules}
    both = engine.generate(["package.json", "Dockerfile"], None, Options()).rules
    assert "n/" in only_node and "pair/" not in only_node
    assert [r.feature for r in both if r.pattern == "pair/"] == ["docker+node"]


def test_provenance_lines_are_comments_not_trailing(engine: Engine) -> None:
    result = engine.generate(["go.mod"], None, Options(include_comments=False, include_provenance=True))
    lines = result.content.splitlines()
    assert "# go" in lines and "# secrets" in lines
    assert all("  #" not in line for line in lines)
    plain = engine.generate(["go.mod"], None, Options(include_comments=False))
    assert [ln for ln in lines if not ln.startswith("#")] == plain.content.splitlines()


def test_no_comments_gives_patterns_only(engine: Engine) -> None:
    result = engine.generate(["go.mod"], None, Options(include_comments=False))
    assert result.content.splitlines() == [r.pattern for r in result.rules]


def test_diff_set_semantics(engine: Engine) -> None:
    existing = "# mine\n\n  .venv/  \nlocal-notes.txt\n.venv/\n__pycache__/\n"
    diff = engine.diff(existing, None, ["python"], Options(extras=("scratch/",)))
    added, removed = diff.added, diff.removed
    proposed = {r.pattern for r in engine.generate(None, ["python"], Options(extras=("scratch/",))).rules}
    assert removed == ["local-notes.txt"]
    assert added == sorted(proposed - {".venv/", "__pycache__/"})
    assert "scratch/" in added
    # options that only change rendering do not change the sets
    assert engine.diff(existing, None, ["python"], Options(False, True, ("scratch/",))) == diff
    generated = engine.generate(None, ["python"], Options(extras=("scratch/",))).content
    again = engine.diff(generated, None, ["python"], Options(extras=("scratch/",)))
    assert (again.added, again.removed, again.covered) == ([], [], [])


def test_existing_patterns() -> None:
    assert existing_patterns("# c\n\n a \n\tb\n#x\n") == ["a", "b"]
