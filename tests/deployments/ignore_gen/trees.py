"""The benchmark's trees (bench/ignore_gen.py), also pinned by the golden outputs (golden.py)."""

from __future__ import annotations

import random

from tests.deployments.ignore_gen.corpus import records


def make_tree(size: int, seed: int = 0) -> list[str]:
    """A shuffled monorepo of random folders (most hold one file): Python, TypeScript and Rust
    packages, docs, assets."""
    rng = random.Random(seed)
    exts = [".py", ".py", ".ts", ".tsx", ".rs", ".md", ".json", ".png", ".yaml", ".txt", ".go", ".css"]
    tree = ["pyproject.toml", "web/package.json", "crates/core/Cargo.toml", "Dockerfile", "README.md"]
    while len(tree) < size:
        depth = rng.randint(1, 5)
        folders = "/".join(f"d{rng.randint(0, 40)}" for _ in range(depth))
        tree.append(f"{folders}/f{len(tree)}{rng.choice(exts)}")
    rng.shuffle(tree)
    return tree


def corpus_tree(size: int) -> list[str]:
    """The corpus repositories side by side (`<name>/...`, each in `git ls-files` order), again
    as `<name>-<k>/...` until `size`."""
    repos = sorted(records(), key=lambda r: str(r["repo"]))
    tree: list[str] = []
    copy = 0
    while len(tree) < size:
        for rec in repos:
            top = str(rec["repo"]).split("/")[1] + (f"-{copy}" if copy else "")
            tree.extend(f"{top}/{path}" for path in rec["files"])
        copy += 1
    return tree[:size]


def tree_of(kind: str, size: int) -> list[str]:
    """`corpus` (realistic) or `synthetic` (shuffled random folders) of `size` paths."""
    return corpus_tree(size) if kind == "corpus" else make_tree(size)
