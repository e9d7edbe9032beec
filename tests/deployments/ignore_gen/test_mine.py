"""The offline miner: thresholds, guards, safety check and reproducibility."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from deployments.ignore_gen import mine
from deployments.ignore_gen.rules_table import RULES_TABLE_PATH, build_table
from tests.deployments.ignore_gen.corpus import corpus_bytes, records


def repo(name: str, files: list[str], gitignore: str, **nested: str) -> dict:
    return {"repo": name, "files": files, "gitignores": {"": gitignore, **nested}}


def go_repo(i: int, gitignore: str) -> dict:
    return repo(f"o/go{i}", ["go.mod", "main.go", "README.md"], gitignore)


def py_repo(i: int, gitignore: str) -> dict:
    return repo(f"o/py{i}", ["pyproject.toml", "pkg/a.py"], gitignore)


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("/coverage/", ("coverage", True)),
        ("**/tmp", ("tmp", False)),
        ("*.log", ("*.log", False)),
        ("out/*", ("out", True)),
        ("# c", None),
        ("!keep", None),
        ("src/configs", None),
        ("", None),
        ("/", None),
    ],
)
def test_canonical(line: str, expected) -> None:
    assert mine.canonical(line) == expected


def _mined(records_: list[dict]) -> dict[tuple, mine.Candidate]:
    kept, _, _ = mine.mine(records_, mine.Thresholds())
    return {(c.features, c.pattern): c for c in kept}


def test_support_repos_and_lift() -> None:
    recs = [go_repo(i, "bin-go-cache/\n" + ("one-off\n" if i == 0 else "")) for i in range(3)]
    recs += [py_repo(i, "shared.tmp\n") for i in range(3)] + [go_repo(9, "shared.tmp\n")]
    found = _mined(recs)
    assert (("go",), "bin-go-cache/") in found
    assert found[(("go",), "bin-go-cache/")].support == 0.75
    assert not any(p == "one-off" for _, p in found)  # one repository only
    assert (("python",), "shared.tmp") in found  # 3/3 python, 1/4 go: lift 1.75


def test_common_patterns_need_broad_support() -> None:
    recs = [go_repo(i, "*.orig\n") for i in range(2)] + [py_repo(i, "*.orig\n") for i in range(2)]
    found = _mined(recs)
    assert (("common",), "*.orig") in found
    assert not any(f != ("common",) and p == "*.orig" for f, p in found)


def test_guards_templates_lockfiles_and_source_folders() -> None:
    recs = [py_repo(i, "*.pyc\n__pycache__\npoetry.lock\nbin/\nlib\n.github\n") for i in range(4)]
    recs += [go_repo(i, "x\n") for i in range(4)]
    found = {p for _, p in _mined(recs)}
    assert found.isdisjoint({"*.pyc", "__pycache__", "poetry.lock", "bin/", "lib", ".github"})


def test_rules_that_ignore_committed_files_are_rejected() -> None:
    recs = [py_repo(i, "generated\n") for i in range(3)]
    recs.append(repo("o/py-committed", ["pyproject.toml", "src/generated/api.py"], "# nothing\n"))
    recs += [go_repo(i, "x\n") for i in range(3)]
    kept, bad, _ = mine.mine(recs, mine.Thresholds())
    assert not any(c.pattern == "generated" for c in kept)
    assert any(p == "generated" and "o/py-committed" in why for (_, p), why in bad.items())


def test_force_added_files_do_not_veto() -> None:
    recs = [py_repo(i, "stash/\n") for i in range(3)]
    recs.append(repo("o/forced", ["pyproject.toml", "stash/kept.txt"], "stash/\n"))
    recs += [go_repo(i, "x\n") for i in range(3)]
    assert (("python",), "stash/") in _mined(recs)


def test_fixture_gitignores_are_not_mined() -> None:
    recs = [py_repo(i, "a\n") | {"gitignores": {"": "", "tests/fixtures/x": "fixture-only\n"}} for i in range(3)]
    assert not any(p == "fixture-only" for _, p in _mined(recs))


def test_committed_table_is_the_miner_output_on_the_corpus() -> None:
    kept, _, count = mine.mine(records(), mine.Thresholds())
    sha = "sha256:" + hashlib.sha256(corpus_bytes()).hexdigest()
    output = mine.build_output(kept, mine.Thresholds(), sha, count)
    committed = json.loads(RULES_TABLE_PATH.read_text())
    assert output["rules"] == committed["rules"]
    assert output["version"] == committed["version"] == build_table(committed).version
    assert committed["corpus"] == {"sha256": sha, "repositories": 40}


def test_cli_writes_a_loadable_table(tmp_path: Path, capsys) -> None:
    corpus = tmp_path / "c.jsonl"
    recs = [go_repo(i, "gen-cache/\n") for i in range(2)] + [py_repo(i, "py-cache/\n") for i in range(2)]
    corpus.write_text("\n".join(json.dumps(r) for r in recs) + "\n")
    out = tmp_path / "table.json"
    assert mine.main(["--corpus", str(corpus), "--out", str(out)]) == 0
    table = build_table(json.loads(out.read_text()))
    assert [(e.features, e.patterns) for e in table.entries] == [
        (("go",), ("gen-cache/",)),
        (("python",), ("py-cache/",)),
    ]
    assert "2 rules from 4 repositories" in capsys.readouterr().out
    assert mine.main(["--corpus", str(tmp_path / "missing.jsonl"), "--out", str(out)]) == 2
